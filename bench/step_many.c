/*
 * One 7B-shaped decoder layer's seven products at n = 1 (Q, K, V, O at [4096, 4096];
 * gate, up at [11008, 4096]; down at [4096, 11008]), called the two ways an engine can:
 * one pw_matmul_wt per weight (7 calls: X scanned and quantized 7 times, 7 pool
 * dispatches) against pw_matmul_wt_many for Q/K/V and for gate/up (4 calls: X
 * quantized once per group). Interleaved A/B rounds in one process, weights warm
 * (the per-call costs are what differ; cold streaming is the same bytes either way).
 *
 *   step_many [--format Q4_0|Q4_K|...] [--threads T] [--rounds R]
 *
 * Prints one line: median microseconds per layer for each way, their difference (the
 * saving per layer) and the per-round ratio's median.
 */
#include <packwise.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static pw_weight *make(pw_context *ctx, pw_format f, int64_t out, int64_t in, uint64_t seed,
                       uint8_t **keep) {
    const pw_format_info *fi = pw_format_get(f);
    const int64_t blocks = out * in / fi->block_size;
    float *wf = malloc(sizeof(float) * (size_t)(out * in));
    uint8_t *wb = malloc((size_t)blocks * (size_t)fi->block_bytes);
    if (!wf || !wb) exit(2);
    uint64_t s = seed;
    for (int64_t i = 0; i < out * in; ++i) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        wf[i] = (float)((int64_t)(s >> 40) - (1 << 23)) / (float)(1 << 23) * 0.05f;
    }
    if (pw_format_quantize(ctx, f, wf, (size_t)blocks, wb) != PW_OK) exit(2);
    free(wf);
    pw_view v;
    const int64_t shape[2] = {out, in};
    pw_weight *w = NULL;
    if (pw_view_init(ctx, &v, f, 2, shape, PW_LAYOUT_ROW_MAJOR, wb,
                     (uint64_t)blocks * (uint64_t)fi->block_bytes) != PW_OK ||
        pw_weight_create(ctx, &v, NULL, &w) != PW_OK || pw_weight_prepare(ctx, w) != PW_OK) {
        fprintf(stderr, "step_many: %s\n", pw_context_message(ctx));
        exit(2);
    }
    *keep = wb;
    return w;
}

int main(int argc, char **argv) {
    pw_format f = PW_FORMAT_Q4_0;
    int threads = 1, rounds = 41;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--format") == 0 && pw_format_from_name(argv[i + 1], &f) == PW_OK) continue;
        if (strcmp(argv[i], "--threads") == 0) threads = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--rounds") == 0) rounds = atoi(argv[i + 1]);
        else {
            fprintf(stderr, "usage: step_many [--format F] [--threads T] [--rounds R]\n");
            return 2;
        }
    }
    if (rounds < 3 || rounds > 1001 || threads < 1) return 2;
    pw_context_options co;
    pw_context_options_init(&co);
    co.threads = threads;
    pw_context *ctx = NULL;
    if (pw_context_create(&co, &ctx) != PW_OK) return 2;
    enum { D = 4096, F = 11008 };
    const int64_t outs[7] = {D, D, D, D, F, F, D}, ins[7] = {D, D, D, D, D, D, F};
    pw_weight *w[7];
    uint8_t *keep[7];
    float *y[7];
    for (int i = 0; i < 7; ++i) {
        w[i] = make(ctx, f, outs[i], ins[i], 11 + (uint64_t)i, &keep[i]);
        y[i] = malloc(sizeof(float) * (size_t)outs[i]);
    }
    float *x = malloc(sizeof(float) * D), *xf = malloc(sizeof(float) * F);
    for (int i = 0; i < D; ++i) x[i] = (float)(i % 17) / 17.0f - 0.5f;
    for (int i = 0; i < F; ++i) xf[i] = (float)(i % 13) / 13.0f - 0.5f;
    const pw_product qkv[3] = {{w[0], y[0], 0}, {w[1], y[1], 0}, {w[2], y[2], 0}};
    const pw_product gu[2] = {{w[4], y[4], 0}, {w[5], y[5], 0}};
    double *a = malloc(sizeof(double) * (size_t)rounds), *b = malloc(sizeof(double) * (size_t)rounds),
           *r = malloc(sizeof(double) * (size_t)rounds);
    for (int k = -3; k < rounds; ++k) { /* 3 warm-up rounds */
        double t0 = now();
        for (int i = 0; i < 7; ++i) pw_matmul_wt(ctx, i == 6 ? xf : x, 1, w[i], y[i]);
        const double ta = now() - t0;
        t0 = now();
        pw_matmul_wt_many(ctx, x, 1, 0, qkv, 3);
        pw_matmul_wt(ctx, x, 1, w[3], y[3]);
        pw_matmul_wt_many(ctx, x, 1, 0, gu, 2);
        pw_matmul_wt(ctx, xf, 1, w[6], y[6]);
        const double tb = now() - t0;
        if (k < 0) continue;
        a[k] = ta * 1e6;
        b[k] = tb * 1e6;
        r[k] = ta / tb;
    }
    const double ma = median(a, rounds), mb = median(b, rounds), mr = median(r, rounds);
    printf("format=%s threads=%d rounds=%d separate_us=%.1f many_us=%.1f saving_us=%.1f ratio=%.3f\n",
           pw_format_get(f)->name, threads, rounds, ma, mb, ma - mb, mr);
    for (int i = 0; i < 7; ++i) {
        pw_weight_destroy(w[i]);
        free(keep[i]);
        free(y[i]);
    }
    free(x);
    free(xf);
    free(a);
    free(b);
    free(r);
    pw_context_destroy(ctx);
    return 0;
}
