/*
 * Packed GEMM kernels past their cache blocking, which test_kernels' small
 * shapes never reach: in = 12288 (48 blocks of 256, so the AVX-512 i8g kernel
 * makes several passes over the input with partial sums in Y) and n = 131
 * (two row blocks, a short last panel) with out = 37 (a lone last tile, a
 * partial one). Each kernel is checked against the same oracle and tolerance
 * as test_kernels: decoded weights times the activations as the kernel sees
 * them, in double; |y - ref| <= 1e-5 * sum |w x|. Once per build (the
 * ISA-capped runs would repeat the usable subset).
 */
// pw-test: once
#include "pw_test.h"

#include "kernel/kernel.h"

#include <math.h>

enum { OUT = 37, IN = 12288, N = 131 };

static void check_kernel(pw_context *ctx, const pw__kernel *k, const float *w, const float *x) {
    const pw_format_info *fi = pw_format_get(k->info.format);
    const size_t nb = (size_t)OUT * IN / (size_t)fi->block_size * fi->block_bytes;
    unsigned char *bytes = malloc(nb);
    CHECK_OK(pw_format_quantize(ctx, k->info.format, w, (size_t)OUT * IN / (size_t)fi->block_size, bytes), ctx);
    pw_view v;
    const int64_t shape[2] = {OUT, IN};
    CHECK_OK(pw_view_init(ctx, &v, k->info.format, 2, shape, bytes, nb), ctx);
    float *y = malloc(sizeof(float) * N * OUT), *wf = malloc(sizeof(float) * OUT * IN);
    for (int i = 0; i < N * OUT; ++i) y[i] = NAN;
    pw_weight_options o;
    pw_weight_options_init(&o);
    o.kernel = k->info.name;
    pw_weight *h = NULL;
    CHECK_OK(pw_weight_create(ctx, &v, &o, &h), ctx);
    CHECK_OK(pw_matmul_wt(ctx, x, N, h, y), ctx);
    pw_weight_destroy(h);
    CHECK_OK(pw_view_to_float(ctx, &v, wf, (size_t)OUT * IN), ctx);
    const pw_activation a = k->info.activation;
    float *xs = malloc(sizeof(float) * IN);
    void *xq = malloc(pw__act_block_bytes(a) * (size_t)(IN / pw__act_block_size(a)));
    int bad = 0;
    for (int i = 0; i < N && bad < 3; ++i) {
        pw__act_quantize_row(a, x + (size_t)i * IN, IN, xq);
        pw__act_dequantize_row(a, xq, IN, xs);
        for (int oo = 0; oo < OUT && bad < 3; ++oo) {
            double ref = 0, mag = 0;
            for (int kk = 0; kk < IN; ++kk) {
                const double p = (double)wf[(size_t)oo * IN + kk] * (double)xs[kk];
                ref += p;
                mag += fabs(p);
            }
            const double got = y[i * OUT + oo];
            if (!(fabs(got - ref) <= 1e-5 * mag + 1e-30)) {
                ++bad;
                CHECK(0, "%s: out=%d in=%d n=%d y[%d,%d] = %.9g, reference %.9g (tol %.3g)",
                      k->info.name, OUT, IN, N, i, oo, got, ref, 1e-5 * mag);
            }
        }
    }
    free(bytes);
    free(y);
    free(wf);
    free(xs);
    free(xq);
}

int main(void) {
    pw_context *ctx = pw_test_context();
    float *w = malloc(sizeof(float) * OUT * IN), *x = malloc(sizeof(float) * N * IN);
    pw_rng r = {7};
    for (int i = 0; i < OUT * IN; ++i) w[i] = (float)(pw_rng_gauss(&r) * 0.05);
    for (int i = 0; i < N * IN; ++i) x[i] = (float)pw_rng_gauss(&r);
    int checked = 0;
    for (size_t i = 0; i < pw_kernel_count(); ++i) {
        const pw__kernel *k = pw__kernel_list_get(i);
        if (k->info.layout != PW_LAYOUT_PACKED || k->info.tile_batch < 2 || !pw_kernel_usable(ctx, i))
            continue;
        check_kernel(ctx, k, w, x);
        ++checked;
    }
    printf("%d packed GEMM kernels checked at [%d, %d] x n = %d\n", checked, OUT, IN, N);
    free(w);
    free(x);
    pw_context_destroy(ctx);
    return pw_test_finish();
}
