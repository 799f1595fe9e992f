/*
 * Decode throughput per format: a [rows, 4096] weight quantized with the
 * reference quantizer is decoded row by row into a float matrix; reported as
 * GB/s of packed bytes read and GB/s of floats written (median of repeats).
 */
#include "bench.h"
#include "cli.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

double pw_bench_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double pw_bench_median(double *s, int n) {
    qsort(s, (size_t)n, sizeof *s, cmp_double);
    return n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
}

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
    uint64_t state = 12345;
    for (int64_t i = 0; i < rows * in; i += 2) {
        /* Box-Muller over a splitmix64 stream: Gaussian weights like a real layer's. */
        state += 0x9e3779b97f4a7c15ull;
        uint64_t z = state;
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        z ^= z >> 31;
        double u1 = ((double)(z >> 11) + 1.0) * 0x1.0p-53, u2 = (double)(z & 0x7ff) / 2048.0;
        double r = sqrt(-2.0 * log(u1));
        src[i] = (float)(0.02 * r * cos(6.283185307179586 * u2));
        src[i + 1] = (float)(0.02 * r * sin(6.283185307179586 * u2));
    }
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
