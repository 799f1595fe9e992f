/*
 * Decode throughput per format: a [rows, 4096] weight quantized with the
 * reference quantizer is decoded row by row into a float matrix; reported as
 * GB/s of packed bytes read and GB/s of floats written (median of repeats).
 */
#include "bench.h"
#include "cli.h"

#include <stdlib.h>
#include <string.h>

int pw_bench_decode(pw_context *ctx, const pw_bench_options *o) {
    const int64_t rows = o->quick ? 64 : 1024, in = 4096;
    const int reps = o->quick ? 3 : 7;
    float *src = malloc(sizeof(float) * (size_t)(rows * in));
    float *dst = malloc(sizeof(float) * (size_t)(rows * in));
    if (!src || !dst) {
        free(src);
        free(dst);
        return pw_cli_fail("bench", "out of memory");
    }
    pw_bench_gaussian(src, (size_t)(rows * in), 12345);
    if (!o->json)
        printf("decode: [%lld, %lld] weight, rows decoded into a float matrix, median of %d\n"
               "%-8s %12s %14s %14s\n",
               (long long)rows, (long long)in, reps, "format", "median_ms", "packed_GB/s",
               "float_GB/s");
    int rc = PW_EXIT_OK;
    for (int f = 0; f < PW_FORMAT_COUNT; ++f) {
        if (!(o->formats_mask & (1ull << f))) continue;
        const pw_format_info *fi = pw_format_get((pw_format)f);
        uint64_t row_bytes;
        if (pw_format_row_bytes(ctx, (pw_format)f, in, &row_bytes) != PW_OK) continue;
        unsigned char *w = malloc((size_t)(row_bytes * (uint64_t)rows));
        if (!w) {
            rc = pw_cli_fail("bench", "out of memory");
            break;
        }
        const size_t blocks_per_row = (size_t)(in / fi->block_size);
        pw_status st = pw_format_quantize(ctx, (pw_format)f, src, blocks_per_row * (size_t)rows, w);
        double t[16];
        for (int r = 0; r < reps && st == PW_OK; ++r) {
            double t0 = pw_bench_now();
            for (int64_t i = 0; i < rows && st == PW_OK; ++i)
                st = pw_format_decode(ctx, (pw_format)f, w + (uint64_t)i * row_bytes,
                                      blocks_per_row, dst + i * in);
            t[r] = pw_bench_now() - t0;
        }
        free(w);
        if (st != PW_OK) {
            rc = pw_cli_fail_status("bench", ctx, st, fi->name);
            break;
        }
        const double med = pw_bench_median(t, reps);
        const double packed = (double)row_bytes * (double)rows / med * 1e-9;
        const double floats = 4.0 * (double)(rows * in) / med * 1e-9;
        if (o->json)
            printf("{\"kind\":\"decode\",\"format\":\"%s\",\"rows\":%lld,\"in\":%lld,"
                   "\"median_s\":%.9f,\"packed_gbps\":%.4f,\"float_gbps\":%.4f}\n",
                   fi->name, (long long)rows, (long long)in, med, packed, floats);
        else
            printf("%-8s %12.3f %14.2f %14.2f\n", fi->name, med * 1e3, packed, floats);
    }
    free(src);
    free(dst);
    return rc;
}
