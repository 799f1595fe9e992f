/*
 * What the kernel tests share (test_kernels, test_kernels_extremes,
 * test_kernels_large, the tiling tests, test_qc4w, test_qb4w): the walk over the
 * usable kernels of the list, which of them a PACKWISE_ISA run checks, and the
 * kernel-vs-oracle comparison (run one kernel, forced by name, on a view and
 * compare every output with the oracle).
 *
 * Oracle: the weight decoded by the format's decoder (pw_view_to_float) and
 * the activations as the kernel really sees them (quantized by the kernel's
 * activation form and dequantized back), multiplied in double. Tolerance,
 * derived in test_kernels.c: |y - ref| <= 1e-5 * sum_k |w_k x_k| + 1e-30.
 */
#ifndef PW_KERNEL_ORACLE_H
#define PW_KERNEL_ORACLE_H

#include "kernel/kernel.h"
#include "pw_test.h"

#include <stdint.h>

/*
 * Runs kernel k (pw_weight_create with options.kernel = its name) on view w,
 * out x in, with X = x (n rows of in floats, row-major), and compares Y with
 * the oracle. Each output
 * outside the tolerance is a CHECK failure "<kernel> <what>: out=.. in=..
 * n=.. y[i,o] = got, reference ref (tol t)", at most 3 per call (the rest
 * repeats them). Returns the number of failures recorded.
 */
int pw_test_kernel_vs_oracle(pw_context *ctx, const pw__kernel *k, const pw_view *w,
                             const float *x, int64_t n, const char *what);

/*
 * The oracle's outputs for one weight, one activation form and one X, kept for
 * every kernel that shares them (test_kernels_large: the kernels of a format
 * read the same weight): ref[i * out + o] and mag[i * out + o] = sum |w x|.
 */
typedef struct pw_test_oracle {
    int64_t out, n;
    double *ref, *mag;
} pw_test_oracle;

/* Fills *o for view w (out x in) and X = x (n rows) as activation form a sees it. */
void pw_test_oracle_init(pw_context *ctx, pw_test_oracle *o, const pw_view *w, pw_activation a,
                         const float *x, int64_t n);
void pw_test_oracle_free(pw_test_oracle *o);

/* pw_test_kernel_vs_oracle against outputs made once (o: of w, x, n and k's activation form). */
int pw_test_kernel_vs(pw_context *ctx, const pw__kernel *k, const pw_view *w, const float *x,
                      int64_t n, const pw_test_oracle *o, const char *what);

/*
 * Calls check(ctx, k) for every kernel of the list that ctx can run (its CPU
 * and ISA cap, pw_kernel_usable); returns how many it passed over.
 */
int pw_test_each_usable_kernel(pw_context *ctx, void (*check)(pw_context *, const pw__kernel *));

/*
 * Which kernels a run checks under PACKWISE_ISA: at native (or unset) every usable one;
 * at a forced level only that level's own, whose isa names it ("avx2" at avx2,
 * "avx512vnni" at avx512, "scalar" at scalar, ...), each with that level's quantizer, so
 * that no forced run repeats the lower levels' kernels (under qemu the repeats cost
 * minutes). Returns the level's name (pw_isa_name of the level ctx runs at) or NULL for
 * every usable kernel: native, or a level with no usable kernel of this kind of its own
 * (sme for the block formats, neon for QC4W).
 */
const char *pw_test_forced_level(pw_context *ctx, pw_weight_kind kind);

/* 1 when kernel k is one that a run at level (pw_test_forced_level's answer) checks. */
int pw_test_at_level(const char *level, const pw__kernel *k);

/*
 * QD8 rows (quant/act.h, row bytes pw__qd8_row_bytes(kp)) quantized from f32 X of batch
 * rows of k values: varied magnitudes, a few values 4x out, an all-zero row and an
 * all-positive row among every 7. Allocated with aligned_alloc (free()).
 */
uint8_t *pw_test_qd8_rows(int64_t batch, int64_t k, int64_t kp, pw_rng *r);

#endif
