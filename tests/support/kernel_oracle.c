/* Kernel against the oracle (kernel_oracle.h). */
#include "kernel_oracle.h"

#include "pw_test.h"

#include <math.h>

int pw_test_kernel_vs_oracle(pw_context *ctx, const pw__kernel *k, const pw_view *w,
                             const float *x, int64_t n, const char *what) {
    const int64_t out = w->shape[0], in = w->shape[1];
    float *y = malloc(sizeof(float) * (size_t)(n * out));
    for (int64_t i = 0; i < n * out; ++i) y[i] = NAN;
    pw_weight_options o;
    pw_weight_options_init(&o);
    o.kernel = k->info.name;
    pw_weight *h = NULL;
    CHECK_OK(pw_weight_create(ctx, w, &o, &h), ctx);
    CHECK_OK(pw_matmul_wt(ctx, x, n, h, y), ctx);
    pw_weight_destroy(h);

    float *wf = malloc(sizeof(float) * (size_t)(out * in));
    CHECK_OK(pw_view_to_float(ctx, w, wf, (size_t)(out * in)), ctx);
    const pw_activation a = k->info.activation;
    float *xs = malloc(sizeof(float) * (size_t)in);
    void *xq = malloc(pw__act_block_bytes(a) * (size_t)(in / pw__act_block_size(a)) + 64);
    int bad = 0;
    for (int64_t i = 0; i < n && bad < 3; ++i) {
        pw__act_quantize_row(a, x + i * in, in, xq);
        pw__act_dequantize_row(a, xq, in, xs);
        for (int64_t oo = 0; oo < out && bad < 3; ++oo) {
            double ref = 0, mag = 0;
            for (int64_t kk = 0; kk < in; ++kk) {
                const double p = (double)wf[oo * in + kk] * (double)xs[kk];
                ref += p;
                mag += fabs(p);
            }
            const double got = y[i * out + oo];
            const double tol = 1e-5 * mag + 1e-30;
            if (!(fabs(got - ref) <= tol)) {
                ++bad;
                CHECK(0,
                      "%s %s: out=%lld in=%lld n=%lld y[%lld,%lld] = %.9g, reference %.9g (tol "
                      "%.3g)",
                      k->info.name, what, (long long)out, (long long)in, (long long)n, (long long)i,
                      (long long)oo, got, ref, tol);
            }
        }
    }
    free(y);
    free(wf);
    free(xs);
    free(xq);
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

