/*
 * `packwise bench --formats QC4W,QB4W`: raw int4 weights, QC4W (per channel,
 * include/packwise/qc4w.h) and QB4W (blockwise, qb4w.h: blocks of 32 and 128
 * with f16 scales and 4-bit zero points, as ONNX Runtime's MatMulNBits holds
 * them) timed through the operator's public create/run, with the machine's
 * read bandwidth and int8 peak from the same run (bench_machine.c). GEMV's
 * bytes are the packed form's (pw_weight_bytes: what the kernel streams).
 */
#include "bench_qc4w.h"
#include "cli.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct qc4w_case {
    int gemm;
    int block; /* QB4W's block size; 0 for QC4W */
    char kernel[64];
    int64_t out, in, n;
    int threads, reps, cold;
    int clean_reps;
    double median_s, gflops, weight_gbps, fraction, pack_s;
    double ceiling_gbps, machine_fraction; /* as pw_bench_result's */
    const char *ceiling_way;               /* as pw_bench_result's */
    pw_bench_ways ceiling_ways;            /* as pw_bench_result's */
    double peak_gops;                      /* GEMM: as pw_bench_result's */
    int ceiling_invalid;
    uint64_t weight_bytes;
} qc4w_case;

static void print_json(const qc4w_case *c) {
    printf("{\"kind\":\"%s\",\"format\":\"%s\",\"kernel\":\"%s\",\"out\":%" PRId64 ",\"in\":%" PRId64
           ",\"n\":%" PRId64 ",\"threads\":%d,\"median_s\":%.6e,\"gflops\":%.6g,"
           "\"weight_gbps\":%.6g,\"fraction\":%.6g,\"reps\":%d,\"cold\":%s,\"weight_bytes\":%" PRIu64
           ",\"pack_s\":%.6e,\"pack_ns_per_weight\":%.6g,\"clean_reps\":%d",
           c->gemm ? "gemm" : "gemv", c->block ? "QB4W" : "QC4W", c->kernel, c->out, c->in,
           c->n, c->threads, c->median_s,
           c->gflops, c->weight_gbps, c->fraction, c->reps, c->cold ? "true" : "false",
           c->weight_bytes, c->pack_s, 1e9 * c->pack_s / ((double)c->out * (double)c->in),
           c->clean_reps);
    if (!c->gemm)
        pw_bench_print_ceiling_json(c->ceiling_gbps, c->ceiling_invalid, c->ceiling_way,
                                    c->machine_fraction, &c->ceiling_ways);
    else
        printf(",\"peak_gops\":%.6g,\"peak_valid\":%s,\"machine_fraction\":%.6g", c->peak_gops,
               c->ceiling_invalid ? "false" : "true", c->machine_fraction);
    if (c->block) printf(",\"block\":%d", c->block);
    printf("}\n");
    fflush(stdout);
}

static void print_table(const qc4w_case *c, size_t count) {
    printf("\nQD8 x int4 weights, fully connected (QC4W: per channel; QB4W/B: blocks of B along K; "
           "GEMV: batch 1, packed weights flushed before each run, fraction of the same bytes "
           "streamed between its runs, ceiling in GB/s; GEMM: fraction of the int8 peak loop run "
           "between its samples, ceiling in GOP/s; pack: operator "
           "creation without a cache)\n");
    printf("%-8s %-4s %-24s %6s %6s %4s %2s %10s %9s %8s %9s %12s %10s\n", "weights", "kind", "kernel",
           "out", "in", "n", "T", "median_ms", "GFLOP/s", "GB/s", "ceiling", "fraction", "pack_ns/w");
    int invalid = 0;
    for (size_t i = 0; i < count; ++i) {
        char frac[32], ceil[16] = "-";
        snprintf(frac, sizeof frac, "%5.1f%% %s%s", 100.0 * c[i].fraction, c[i].gemm ? "int8" : "bw",
                 c[i].ceiling_invalid ? "!" : "");
        if (!c[i].gemm) snprintf(ceil, sizeof ceil, "%.2f", c[i].ceiling_gbps);
        else snprintf(ceil, sizeof ceil, "%.0f", c[i].peak_gops);
        invalid += c[i].ceiling_invalid;
        char what[16] = "QC4W";
        if (c[i].block) snprintf(what, sizeof what, "QB4W/%d", c[i].block);
        printf("%-8s %-4s %-24s %6" PRId64 " %6" PRId64 " %4" PRId64 " %2d %10.3f %9.2f %8.2f %9s %12s %10.3f\n",
               what, c[i].gemm ? "gemm" : "gemv", c[i].kernel, c[i].out, c[i].in, c[i].n, c[i].threads,
               1e3 * c[i].median_s, c[i].gflops, c[i].weight_gbps, ceil, frac,
               1e9 * c[i].pack_s / ((double)c[i].out * (double)c[i].in));
    }
    if (invalid)
        printf("! above %.0f%% of its ceiling (GEMV: the same bytes streamed in the same run; GEMM: "
               "the int8 peak loop): that ceiling was mismeasured, and the fraction is not a result\n",
               100.0 * PW_BENCH_CEILING_SLACK);
}

typedef struct weights {
    uint8_t *nibbles, *zero_points;
    float *scale, *bias;
    uint16_t *scale16;
    int block; /* QB4W: B; 0 for QC4W */
    pw_qc4w_weights w;
    pw_qb4w_weights b;
} weights;

static int weights_make(int64_t n, int64_t k, int block, weights *t) {
    memset(t, 0, sizeof *t);
    t->block = block;
    const size_t bytes = (size_t)n * (size_t)((k + 1) / 2);
    t->nibbles = pw_bench_alloc(bytes);
    t->scale = pw_bench_alloc(sizeof(float) * (size_t)n);
    t->bias = pw_bench_alloc(sizeof(float) * (size_t)n);
    if (!t->nibbles || !t->scale || !t->bias) return pw_cli_fail("bench", "out of memory for QC4W weights");
    uint64_t s = 0x9e3779b97f4a7c15ull ^ (uint64_t)(n * 131 + k);
    for (size_t i = 0; i < bytes; ++i) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        t->nibbles[i] = (uint8_t)(s >> 56);
    }
    pw_bench_gaussian(t->bias, (size_t)n, 7);
    for (int64_t i = 0; i < n; ++i) t->scale[i] = 0.01f + 0.001f * (float)(i % 7);
    pw_qc4w_weights_init(&t->w);
    t->w.out = n;
    t->w.in = k;
    t->w.data = t->nibbles;
    t->w.scale = t->scale;
    t->w.bias = t->bias;
    t->w.name = "bench.qc4w";
    if (block > 0) {
        const int64_t nb = (k + block - 1) / block;
        t->scale16 = pw_bench_alloc(sizeof(uint16_t) * (size_t)(n * nb));
        t->zero_points = pw_bench_alloc((size_t)(n * ((nb + 1) / 2)));
        if (!t->scale16 || !t->zero_points) return pw_cli_fail("bench", "out of memory for QB4W weights");
        for (int64_t i = 0; i < n * nb; ++i) t->scale16[i] = pw_f32_to_f16(0.01f + 0.001f * (float)(i % 7));
        for (int64_t i = 0; i < n * ((nb + 1) / 2); ++i) t->zero_points[i] = (uint8_t)(0x78 + (i % 3) * 0x11);
        pw_qb4w_weights_init(&t->b);
        t->b.out = n;
        t->b.in = k;
        t->b.block_size = block;
        t->b.data = t->nibbles;
        t->b.scales = t->scale16;
        t->b.scale_type = PW_DTYPE_F16;
        t->b.zero_kind = PW_QB4W_ZERO_U4;
        t->b.zero_points = t->zero_points;
        t->b.bias = t->bias;
        t->b.name = "bench.qb4w";
    }
    return PW_EXIT_OK;
}

static void weights_free(weights *t) {
    free(t->nibbles);
    free(t->scale);
    free(t->bias);
    free(t->scale16);
    free(t->zero_points);
}

/* One (shape, threads): pack once (timed), then every batch. */
static int run_shape(pw_context *ctx, const pw_bench_options *o, const pw_bench_results *r,
                     const weights *t, const float *x, float *y, const int64_t *batches,
                     int nbatch, int threads, qc4w_case *out, size_t *count) {
    pw_weight_options fo;
    pw_weight_options_init(&fo);
    if (o->kernel != NULL && strncmp(o->kernel, t->block ? "qb4w" : "qc4w", 4) == 0) fo.kernel = o->kernel;
    pw_weight *op = NULL;
    const double p0 = pw_bench_now();
    pw_status st = t->block ? pw_weight_create_qb4w(ctx, &t->b, &fo, &op)
                            : pw_weight_create_qc4w(ctx, &t->w, &fo, &op);
    const double pack_s = pw_bench_now() - p0;
    if (st != PW_OK) return pw_cli_fail_status("bench", ctx, st, t->block ? "QB4W operator" : "QC4W operator");
    const pw_bench_machine *m = pw_bench_machine_for(r, threads);
    pw_weight_info info;
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    (void)pw_weight_info_get(op, &info);
    int rc = PW_EXIT_OK;
    for (int b = 0; rc == PW_EXIT_OK && b < nbatch; ++b) {
        qc4w_case *c = &out[(*count)++];
        memset(c, 0, sizeof *c);
        c->gemm = batches[b] >= 2;
        c->block = t->block;
        snprintf(c->kernel, sizeof c->kernel, "%s", c->gemm ? info.kernel_gemm : info.kernel_gemv);
        c->out = t->w.out;
        c->in = t->w.in;
        c->n = batches[b];
        c->threads = threads;
        c->pack_s = pack_s;
        /* QC4W: the nibbles (scales and sums are 12 bytes a row); QB4W: the packed form,
         * whose per-block terms are a large part of what GEMV streams */
        c->weight_bytes = t->block ? pw_weight_bytes(op) : (uint64_t)t->w.out * (uint64_t)((t->w.in + 1) / 2);
        /* The first run sizes the scratch and is not timed. */
        st = pw_matmul_wt(ctx, x, c->n, op, y);
        const pw_bench_reps reps = pw_bench_case_reps(c->gemm, o->quick);
        pw_bench_sampler s;
        pw_bench_sampler_init(&s, threads);
        pw_bench_ceiling ceiling;
        memset(&ceiling, 0, sizeof ceiling);
        if (!c->gemm && (rc = pw_bench_ceiling_init(&ceiling, (size_t)c->weight_bytes, threads)) != PW_EXIT_OK)
            break;
        c->cold = !c->gemm;
        pw_bench_peak peak;
        if (c->gemm) pw_bench_peak_init(ctx, &peak, o->quick);
        /* GEMV: one sample of the same bytes streamed after each of the kernel's (A, B, A, B);
         * GEMM: one of the int8 peak loop */
        while (st == PW_OK && pw_bench_sample_more(&s, reps.min, reps.max, reps.budget)) {
            if (!c->gemm) c->cold &= pw_weight_evict(op);
            pw_bench_sample_start(&s);
            st = pw_matmul_wt(ctx, x, c->n, op, y);
            pw_bench_sample_stop(&s);
            if (!c->gemm) pw_bench_ceiling_sample(ctx, &ceiling, 1);
            else pw_bench_peak_sample(ctx, &peak);
        }
        if (st != PW_OK) {
            pw_bench_ceiling_free(&ceiling);
            rc = pw_cli_fail_status("bench", ctx, st, t->block ? "QB4W run" : "QC4W run");
            break;
        }
        c->reps = s.nall;
        c->clean_reps = s.nclean;
        c->median_s = c->gemm ? pw_bench_peak_kernel_median(&peak, &s) : pw_bench_ceiling_kernel_median(&ceiling, &s);
        if (c->median_s < 1e-9) c->median_s = 1e-9;
        c->gflops = 2.0 * (double)c->out * (double)c->in * (double)c->n / c->median_s * 1e-9;
        c->weight_gbps = (double)c->weight_bytes / c->median_s * 1e-9;
        if (c->gemm) {
            pw_bench_peak_finish(&peak, c->gflops, m, &c->peak_gops, &c->fraction, &c->ceiling_invalid,
                                 &c->machine_fraction);
        } else {
            pw_bench_ceiling_finish(&ceiling, c->weight_gbps, m, &c->ceiling_gbps, &c->fraction,
                                    &c->ceiling_invalid, &c->machine_fraction, &c->ceiling_way,
                                    &c->ceiling_ways);
        }
        if (o->json) print_json(c);
    }
    pw_weight_destroy(op);
    return rc;
}

int pw_bench_qc4w(const pw_bench_options *o, pw_bench_results *r) {
    int64_t shapes[PW_BENCH_MAX_LIST][2] = {{4096, 4096}, {11008, 4096}};
    int nshapes = 2;
    int64_t batches[PW_BENCH_MAX_LIST] = {1, 16, 128};
    int nbatch = 3;
    int threads[PW_BENCH_MAX_LIST] = {1, (int)sysconf(_SC_NPROCESSORS_ONLN)};
    int nthreads = threads[1] > 1 ? 2 : 1;
    if (o->quick) {
        shapes[0][0] = shapes[0][1] = 256;
        nshapes = 1;
        batches[1] = 8;
        nbatch = 2;
    }
    if (o->nshapes > 0) {
        memcpy(shapes, o->shapes, sizeof shapes);
        nshapes = o->nshapes;
    }
    if (o->nbatch > 0) {
        memcpy(batches, o->batch, sizeof batches);
        nbatch = o->nbatch;
    }
    if (o->nthreads > 0) {
        memcpy(threads, o->threads, sizeof threads);
        nthreads = o->nthreads;
    }
    int64_t max_in = 0, max_n = 0;
    for (int i = 0; i < nshapes; ++i) max_in = shapes[i][1] > max_in ? shapes[i][1] : max_in;
    for (int i = 0; i < nbatch; ++i) max_n = batches[i] > max_n ? batches[i] : max_n;
    int64_t max_out = 0;
    for (int i = 0; i < nshapes; ++i) max_out = shapes[i][0] > max_out ? shapes[i][0] : max_out;

    pw_context *ctx = pw_cli_context("bench", 0, 1);
    if (ctx == NULL) return PW_EXIT_USAGE;
    float *x = pw_bench_alloc(sizeof(float) * (size_t)(max_n * max_in));
    float *y = pw_bench_alloc(sizeof(float) * (size_t)(max_n * max_out));
    int blocks[3], nvariants = 0; /* 0: QC4W; else QB4W's block size */
    if (o->qc4w) blocks[nvariants++] = 0;
    if (o->qb4w) {
        blocks[nvariants++] = 32;
        blocks[nvariants++] = 128;
    }
    qc4w_case *cases = calloc((size_t)(nshapes * nthreads * nbatch * nvariants), sizeof *cases);
    size_t count = 0;
    int rc = x && y && cases ? PW_EXIT_OK : pw_cli_fail("bench", "out of memory for QC4W cases");
    if (rc == PW_EXIT_OK) pw_bench_gaussian(x, (size_t)(max_n * max_in), 3);
    for (int ti = 0; rc == PW_EXIT_OK && ti < nthreads; ++ti) {
        const pw_status st = pw_context_set_threads(ctx, threads[ti]);
        if (st != PW_OK) {
            rc = pw_cli_fail_status("bench", ctx, st, "threads");
            break;
        }
        rc = pw_bench_ensure_machine(ctx, o, r, threads[ti]);
        for (int s = 0; rc == PW_EXIT_OK && s < nshapes; ++s)
            for (int v = 0; rc == PW_EXIT_OK && v < nvariants; ++v) {
                weights t;
                rc = weights_make(shapes[s][0], shapes[s][1], blocks[v], &t);
                if (rc == PW_EXIT_OK)
                    rc = run_shape(ctx, o, r, &t, x, y, batches, nbatch, threads[ti], cases, &count);
                weights_free(&t);
            }
    }
    if (rc == PW_EXIT_OK && !o->json) print_table(cases, count);
    free(cases);
    free(x);
    free(y);
    pw_context_destroy(ctx);
    return rc;
}
