/* Kernel against the oracle (kernel_oracle.h). */
#include "kernel_oracle.h"

#include "pw_test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void pw_test_oracle_init(pw_context *ctx, pw_test_oracle *o, const pw_view *w, pw_activation a,
                         const float *x, int64_t n) {
    const int64_t out = w->shape[0], in = w->shape[1];
    o->out = out;
    o->n = n;
    o->ref = malloc(sizeof(double) * (size_t)(n * out));
    o->mag = malloc(sizeof(double) * (size_t)(n * out));
    float *wf = malloc(sizeof(float) * (size_t)(out * in));
    CHECK_OK(pw_view_to_float(ctx, w, wf, (size_t)(out * in)), ctx);
    float *xs = malloc(sizeof(float) * (size_t)in);
    void *xq = malloc(pw__act_block_bytes(a) * (size_t)(in / pw__act_block_size(a)) + 64);
    for (int64_t i = 0; i < n; ++i) {
        pw__act_quantize_row(a, x + i * in, in, xq);
        pw__act_dequantize_row(a, xq, in, xs);
        for (int64_t oo = 0; oo < out; ++oo) {
            double ref = 0, mag = 0;
            for (int64_t kk = 0; kk < in; ++kk) {
                const double p = (double)wf[oo * in + kk] * (double)xs[kk];
                ref += p;
                mag += fabs(p);
            }
            o->ref[i * out + oo] = ref;
            o->mag[i * out + oo] = mag;
        }
    }
    free(wf);
    free(xs);
    free(xq);
}

void pw_test_oracle_free(pw_test_oracle *o) {
    free(o->ref);
    free(o->mag);
    o->ref = o->mag = NULL;
}

int pw_test_kernel_vs(pw_context *ctx, const pw__kernel *k, const pw_view *w, const float *x,
                      int64_t n, const pw_test_oracle *o, const char *what) {
    const int64_t out = w->shape[0], in = w->shape[1];
    CHECK(o->out == out && o->n == n, "%s %s: oracle of another shape", k->info.name, what);
    if (o->out != out || o->n != n) return 1;
    float *y = malloc(sizeof(float) * (size_t)(n * out));
    for (int64_t i = 0; i < n * out; ++i) y[i] = NAN;
    pw_weight_options opt;
    pw_weight_options_init(&opt);
    opt.kernel = k->info.name;
    pw_weight *h = NULL;
    CHECK_OK(pw_weight_create(ctx, w, &opt, &h), ctx);
    CHECK_OK(pw_matmul_wt(ctx, x, n, h, y), ctx);
    pw_weight_destroy(h);
    int bad = 0;
    for (int64_t i = 0; i < n * out && bad < 3; ++i) {
        const double got = y[i], ref = o->ref[i], tol = 1e-5 * o->mag[i] + 1e-30;
        if (!(fabs(got - ref) <= tol)) {
            ++bad;
            CHECK(0,
                  "%s %s: out=%lld in=%lld n=%lld y[%lld,%lld] = %.9g, reference %.9g (tol "
                  "%.3g)",
                  k->info.name, what, (long long)out, (long long)in, (long long)n,
                  (long long)(i / out), (long long)(i % out), got, ref, tol);
        }
    }
    free(y);
    return bad;
}

int pw_test_kernel_vs_oracle(pw_context *ctx, const pw__kernel *k, const pw_view *w,
                             const float *x, int64_t n, const char *what) {
    pw_test_oracle o;
    pw_test_oracle_init(ctx, &o, w, k->info.activation, x, n);
    const int bad = pw_test_kernel_vs(ctx, k, w, x, n, &o, what);
    pw_test_oracle_free(&o);
    return bad;
}

int pw_test_each_usable_kernel(pw_context *ctx, void (*check)(pw_context *, const pw__kernel *)) {
    int skipped = 0;
    for (size_t i = 0; i < pw_kernel_count(); ++i) {
        if (pw_kernel_info_get(i)->kind != PW_WEIGHT_BLOCKS) continue; /* QC4W: test_qc4w */
        if (!pw_kernel_usable(ctx, i)) {
            ++skipped;
            continue;
        }
        check(ctx, pw__kernel_list_get(i));
    }
    return skipped;
}

int pw_test_at_level(const char *level, const pw__kernel *k) {
    return level == NULL || strncmp(k->info.isa, level, strlen(level)) == 0;
}

const char *pw_test_forced_level(pw_context *ctx, pw_weight_kind kind) {
    const char *env = getenv("PACKWISE_ISA");
    if (env == NULL || env[0] == '\0' || strcmp(env, "native") == 0) return NULL;
    const char *level = pw_isa_name(pw_context_isa(ctx));
    for (size_t i = 0; i < pw__kernel_list_count(); ++i) {
        const pw__kernel *k = pw__kernel_list_get(i);
        if (k->info.kind == kind && pw__kernel_usable(ctx, k) && pw_test_at_level(level, k))
            return level;
    }
    return NULL;
}

/* QD8 rows from f32 X: varied magnitudes, one all-zero row, one all-positive row. */
uint8_t *pw_test_qd8_rows(int64_t batch, int64_t k, int64_t kp, pw_rng *r) {
    const size_t rb = pw__qd8_row_bytes(kp);
    uint8_t *lhs = aligned_alloc(64, rb * (size_t)batch);
    float *x = malloc(sizeof(float) * (size_t)k);
    for (int64_t m = 0; m < batch; ++m) {
        const double mag = pow(10.0, (double)(m % 5) - 2.0);
        for (int64_t i = 0; i < k; ++i) {
            /* Uniform in [-mag, mag) with a few values 4x out: cheap under qemu, unlike Gaussians. */
            double v = ((double)(int32_t)(pw_rng_next(r) >> 32) * 0x1p-31) * mag;
            if (i % 61 == 7) v *= 4.0;
            if (m % 7 == 3) v = 0.0;
            if (m % 7 == 5) v = fabs(v) + 0.1;
            x[i] = (float)v;
        }
        pw__qd8_quantize_row(x, k, kp, lhs + (size_t)m * rb);
    }
    free(x);
    return lhs;
}

