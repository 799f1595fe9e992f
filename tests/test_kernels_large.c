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

/* A format's bytes and each activation form's oracle outputs, made for the first kernel
 * that needs them and kept for the rest: every kernel of a format reads the same weight,
 * and the oracle (about n * out * in double products) and the K-quant quantizers were
 * most of this test's time when redone per kernel (under qemu above all). */
enum { ACTS = PW_ACT_QD8 + 1 }; /* the activation forms, pw_activation 0 .. PW_ACT_QD8 */
typedef struct format_memo {
    unsigned char *bytes;
    size_t nb;
    int have[ACTS];
    pw_test_oracle oracle[ACTS];
} format_memo;

static void check_kernel(pw_context *ctx, const pw__kernel *k, const float *w, const float *x,
                         format_memo *memo) {
    const pw_format_info *fi = pw_format_get(k->info.format);
    format_memo *m = &memo[k->info.format];
    const int64_t shape[2] = {OUT, IN};
    pw_view rm;
    if (m->bytes == NULL) {
        m->nb = (size_t)OUT * IN / (size_t)fi->block_size * fi->block_bytes;
        m->bytes = malloc(m->nb);
        CHECK_OK(pw_format_quantize(ctx, k->info.format, w, (size_t)OUT * IN / (size_t)fi->block_size,
                                    m->bytes), ctx);
    }
    CHECK_OK(pw_view_init(ctx, &rm, k->info.format, 2, shape, PW_LAYOUT_ROW_MAJOR, m->bytes, m->nb), ctx);
    const int a = (int)k->info.activation;
    CHECK(a >= 0 && a < ACTS, "%s: activation form %d", k->info.name, a);
    if (a < 0 || a >= ACTS) return;
    if (!m->have[a]) {
        pw_test_oracle_init(ctx, &m->oracle[a], &rm, k->info.activation, x, N);
        m->have[a] = 1;
    }
    /* input-block-major kernels read a copy in their layout; the oracle is the row-major view's */
    unsigned char *copy = NULL;
    pw_view v = rm;
    if (k->info.layout == PW_LAYOUT_BLOCKED_INPUT_MAJOR) {
        copy = malloc(m->nb);
        memcpy(copy, m->bytes, m->nb);
        pw_test_view_for(ctx, k->info.layout, k->info.format, OUT, IN, copy, m->nb, &v);
    }
    pw_test_kernel_vs(ctx, k, &v, x, N, &m->oracle[a], "large");
    free(copy);
}

int main(void) {
    pw_context *ctx = pw_test_context();
    float *w = malloc(sizeof(float) * OUT * IN), *x = malloc(sizeof(float) * N * IN);
    pw_rng r = {7};
    for (int i = 0; i < OUT * IN; ++i) w[i] = (float)(pw_rng_gauss(&r) * 0.05);
    for (int i = 0; i < N * IN; ++i) x[i] = (float)pw_rng_gauss(&r);
    int checked = 0;
    format_memo memo[PW_FORMAT_COUNT];
    memset(memo, 0, sizeof memo);
    for (size_t i = 0; i < pw_kernel_count(); ++i) {
        const pw__kernel *k = pw__kernel_list_get(i);
        if (k->info.kind != PW_WEIGHT_BLOCKS ||
            (k->info.layout != PW_LAYOUT_PACKED && k->info.layout != PW_LAYOUT_BLOCKED_INPUT_MAJOR) ||
            k->info.tile_batch < 2 || !pw_kernel_usable(ctx, i))
            continue;
        check_kernel(ctx, k, w, x, memo);
        ++checked;
    }
    printf("%d packed and input-block-major GEMM kernels checked at [%d, %d] x n = %d\n", checked, OUT, IN, N);
    for (int f = 0; f < PW_FORMAT_COUNT; ++f) {
        free(memo[f].bytes);
        for (int a = 0; a < ACTS; ++a)
            if (memo[f].have[a]) pw_test_oracle_free(&memo[f].oracle[a]);
    }
    free(w);
    free(x);
    pw_context_destroy(ctx);
    return pw_test_finish();
}
