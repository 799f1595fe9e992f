/*
 * Packed GEMM kernels (and those that make a family's records from
 * input-block-major bytes as they go) past their cache blocking, which test_kernels' small
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

#include "kernel_oracle.h"

enum { OUT = 37, IN = 12288, N = 131 };

static void check_kernel(pw_context *ctx, const pw__kernel *k, const float *w, const float *x) {
    const pw_format_info *fi = pw_format_get(k->info.format);
    const size_t nb = (size_t)OUT * IN / (size_t)fi->block_size * fi->block_bytes;
    unsigned char *bytes = malloc(nb);
    CHECK_OK(pw_format_quantize(ctx, k->info.format, w, (size_t)OUT * IN / (size_t)fi->block_size, bytes), ctx);
    pw_view v;
    const int64_t shape[2] = {OUT, IN};
    if (k->info.layout == PW_LAYOUT_BLOCKED_INPUT_MAJOR)
        pw_test_view_for(ctx, k->info.layout, k->info.format, OUT, IN, bytes, nb, &v);
    else
        CHECK_OK(pw_view_init(ctx, &v, k->info.format, 2, shape, PW_LAYOUT_ROW_MAJOR, bytes, nb), ctx);
    pw_test_kernel_vs_oracle(ctx, k, &v, x, N, "large");
    free(bytes);
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
        if (k->info.kind != PW_WEIGHT_BLOCKS ||
            (k->info.layout != PW_LAYOUT_PACKED && k->info.layout != PW_LAYOUT_BLOCKED_INPUT_MAJOR) ||
            k->info.tile_batch < 2 || !pw_kernel_usable(ctx, i))
            continue;
        check_kernel(ctx, k, w, x);
        ++checked;
    }
    printf("%d packed and input-block-major GEMM kernels checked at [%d, %d] x n = %d\n", checked, OUT, IN, N);
    free(w);
    free(x);
    pw_context_destroy(ctx);
    return pw_test_finish();
}
