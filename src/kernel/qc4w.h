/*
 * The QC4W kernel families: the packed right-hand side, the packer and its
 * unpacker, the raw form's helpers, the descriptor macro and the oracle. The
 * public side is include/packwise/qc4w.h; the QD8 activation rows are in
 * quant/act.h; kernels keep the contract of kernel/kernel.h, with the
 * epilogue below.
 *
 * Packed RHS (families "qc4w_n<nr>k<kr>s<sr>", made only by pw__qc4w_pack
 * with nr, kr, sr taken from a kernel descriptor). K is padded to
 * Kp = round_up(K, 32) with signed zero; N to whole tiles of nr channels.
 * Tile t holds channels n = t*nr + c (c < nr), Kp*nr/2 + 12*nr bytes:
 *
 *   chunk 0:  | ch 0: kr/2 bytes | ch 1: kr/2 bytes | ... | ch nr-1 |   chunk j = k in [j*kr, j*kr+kr)
 *   chunk 1:  | ch 0             | ...                              |
 *   ...       Kp / kr chunks
 *   int32 weight_sum[nr]   sum over k of the signed int4 values (padding adds 0)
 *   float scale[nr]
 *   float bias[nr]         0 when the weights have no bias
 *
 * Inside one channel's chunk, value j (0 <= j < kr) is a signed two's-
 * complement nibble at
 *   sr = 1: byte j / 2, low nibble when j is even (the raw form's pairing)
 *   sr = 2: byte j % (kr/2), low nibble for the first sub-block (j < kr/2),
 *           high nibble for the second: one byte pairs k0+i with k0+kr/2+i.
 * Channels of a partial last tile are zero throughout (data, sums, scales,
 * bias). Integers and floats are little-endian; tiles start at multiples of
 * tile_bytes from a 64-byte aligned base. The buffer is described by a
 * pw__pack_desc (kernel/kernel.h) with format = PW_FORMAT_COUNT (QC4W is not
 * a GGUF format), group = 0 (one scale per channel) and in_padded = Kp.
 *
 */
#ifndef PACKWISE_KERNEL_QC4W_H
#define PACKWISE_KERNEL_QC4W_H

#include "base/internal.h"
#include "format/blocks.h"
#include "kernel/kernel.h"
#include "packwise/qc4w.h"
#include "quant/act.h"

#include <stddef.h>
#include <stdint.h>

#define PW__QC4W_K_ALIGN PW__QD8_K_ALIGN /* K padding, in elements: the QD8 rows' */
#define PW__QC4W_PACK_VERSION 1  /* bump when the packed bytes change */

/* ------------------------------------------------------------------------ */
/* Raw weights                                                              */
/* ------------------------------------------------------------------------ */

/* Bytes per row of the raw form and its total size; PW_ERR_* on overflow. */
pw_status pw__qc4w_raw_bytes(pw_context *ctx, const pw_qc4w_weights *w, uint64_t *row_bytes,
                             uint64_t *bytes);

/* Signed value of w[n, k] read from the raw form (either orientation). */
static inline int pw__qc4w_raw_get(const pw_qc4w_weights *w, int64_t n, int64_t k) {
    const int transposed = (w->flags & PW_QC4W_TRANSPOSED) != 0;
    const int64_t row = transposed ? k : n, col = transposed ? n : k;
    const int64_t stride = transposed ? (w->out + 1) / 2 : (w->in + 1) / 2;
    const int nib = (w->data[row * stride + col / 2] >> ((col & 1) * 4)) & 15;
    return w->zero_point == 8 ? nib - 8 : (nib ^ 8) - 8;
}

/* The spec's conversion of a transposed K x N source to N x K: single
 * nibbles moved into dst (N rows of ceil(K/2) bytes), which must be zeroed.
 * Only destination rows [n0, n1) are written, so disjoint ranges may run
 * concurrently. */
void pw__qc4w_transpose_rows(const uint8_t *src, int64_t k, int64_t n, int64_t n0, int64_t n1,
                             uint8_t *dst);

/* ------------------------------------------------------------------------ */
/* Kernels                                                                  */
/* ------------------------------------------------------------------------ */

/*
 * What a QC4W kernel computes (kernel/kernel.h's contract, with .epilogue set):
 * y[m, n] for n in [n0, n1), m in [m0, m1), from the QD8 rows call->xq, with
 *
 *   isum = sum_{k < Kp} q[m, k] * w[n, k] + neg_zp[m] * weight_sum[n]   (exact integer)
 *   s    = scale_a[m] * scale[n]                                        (f32)
 *   v    = (float)isum * s + bias[n]                                    (f32 mul, then add)
 *   y    = min(max(v, call->min), call->max), then to half into call->y16 when it is
 *          set (round to nearest even), else f32 into call->y
 *
 * in exactly these f32 operations (no fused multiply-add), so every kernel
 * gives the reference's bits. n0 is a multiple of nr; n1 is too, or equals
 * N; m0 is a multiple of mr (so that QD8 panels start whole).
 */

/* A kernel descriptor of the family qc4w_n<NR>k<KR>s<SR>: name, key and family name
 * spelled once, here. */
#define PW__QC4W_FAMILY_NAME(NR, KR, SR) "qc4w_n" #NR "k" #KR "s" #SR
#define PW__QC4W_KERNEL(NR, KR, SR, isa_, features_, run_, priority_, mr_, max_in_, panel_)  \
    {.info = {.name = PW__QC4W_FAMILY_NAME(NR, KR, SR) "_" isa_,                             \
              .key = PW__KEY("qc4w", "packed(" PW__QC4W_FAMILY_NAME(NR, KR, SR) ")", QD8, isa_), \
              .kind = PW_WEIGHT_QC4W,                                                       \
              .format = PW_FORMAT_COUNT,                                                    \
              .layout = PW_LAYOUT_PACKED,                                                   \
              .family = PW__QC4W_FAMILY_NAME(NR, KR, SR),                                   \
              .tile_rows = NR,                                                              \
              .tile_batch = mr_,                                                            \
              .activation = PW_ACT_QD8,                                                     \
              .features = features_,                                                        \
              .isa = isa_},                                                                 \
     .run = run_,                                                                           \
     .pack_plan = pw__qc4w_plan,                                                            \
     .pack = pw__qc4w_pack_source,                                                          \
     .priority = priority_,                                                                 \
     .min_n = 1,                                                                            \
     .nr = NR,                                                                              \
     .kr = KR,                                                                              \
     .sr = SR,                                                                              \
     .max_in = max_in_,                                                                     \
     .xq_panel = panel_,                                                                    \
     .epilogue = 1}

/* A descriptor of an SME family (kernel/arm/qc4w_gemm_sme.c), one per streaming vector
 * length of BITS bits: its tile follows the length, and so does the family's name,
 * "qc4w_vl<BITS>_n<NR>k8s2" (the bytes are those of qc4w_n<NR>k8s2, but a buffer made at
 * one length is never read at another: the name and desc->sme_bytes say which). */
#define PW__QC4W_SME_FAMILY_NAME(BITS, NR) "qc4w_vl" #BITS "_n" #NR "k8s2"
#define PW__QC4W_SME_KERNEL(BITS, NR, run_, max_in_)                                         \
    {.info = {.name = PW__QC4W_SME_FAMILY_NAME(BITS, NR) "_sme",                             \
              .key = PW__KEY("qc4w", "packed(" PW__QC4W_SME_FAMILY_NAME(BITS, NR) ")", QD8, "sme"), \
              .kind = PW_WEIGHT_QC4W,                                                       \
              .format = PW_FORMAT_COUNT,                                                    \
              .layout = PW_LAYOUT_PACKED,                                                   \
              .family = PW__QC4W_SME_FAMILY_NAME(BITS, NR),                                 \
              .tile_rows = NR,                                                              \
              .tile_batch = (BITS) / 32,                                                    \
              .activation = PW_ACT_QD8,                                                     \
              .features = PW_CPU_NEON | PW_CPU_DOTPROD | PW_CPU_SME,                        \
              .isa = "sme"},                                                                \
     .run = run_,                                                                           \
     .pack_plan = pw__qc4w_plan,                                                            \
     .pack = pw__qc4w_pack_source,                                                          \
     .priority = PW__PRIO_SME,                                                              \
     .min_n = 1,                                                                            \
     .nr = NR,                                                                              \
     .kr = 8,                                                                               \
     .sr = 2,                                                                               \
     .max_in = max_in_,                                                                     \
     .xq_panel = (BITS) / 32,                                                               \
     .epilogue = 1,                                                                         \
     .sme_bytes = (BITS) / 8}

#if defined(__aarch64__)
/* kernel/arm/qc4w_gemm_sme.c, for tests: how the SME tile's outer products run on this
 * machine at svl_bytes (1: the architecture's; 2: qemu 7.2's pairwise emulation, served
 * by half panels; 3: neither, the portable kernel runs; 0: no SME at that length here). */
int pw__qc4w_sme_mopa_form(int32_t svl_bytes);
/* The tile's assembly, for tests: `chunks` chunks of the tile at w against the QD8 panel
 * (mode 0), one row's u (mode 1) or half a panel (mode 2) at a; int32 sums of `rows` rows
 * (ZA rows 0, 1, ... or, in mode 2, 0, 2, ...) to acc, S per row. */
void pw__qc4w_sme_tile(const uint8_t *w, const uint8_t *a, int64_t chunks, int32_t *acc,
                       int64_t rows, int64_t mode);
#endif

/* The descriptor's pack_plan and pack: the family's tile from the kernel, the raw
 * weights from src->qc4w. */
pw_status pw__qc4w_plan(pw_context *ctx, const pw__kernel *k, pw_format format, int64_t out,
                        int64_t in, pw__pack_desc *desc);
void pw__qc4w_pack_source(const pw__pack_desc *desc, const pw__source *src, int64_t o0, int64_t o1,
                          uint8_t *dst);

/* Fill desc for N x K weights packed with (nr, kr, sr) under `family`. */
pw_status pw__qc4w_pack_plan(pw_context *ctx, const char *family, int32_t nr, int32_t kr,
                             int32_t sr, int64_t n, int64_t k, pw__pack_desc *desc);

/* Pack channels [n0, n1) (n0 a multiple of nr; n1 too, or N) of the N x K
 * nibbles `nk` (rows of ceil(K/2) bytes; zero point `zp`) with their scales
 * and bias (may be NULL) into dst (the whole buffer's base). */
void pw__qc4w_pack(const pw__pack_desc *desc, const uint8_t *nk, int zp, const float *scale,
                   const float *bias, int64_t n0, int64_t n1, uint8_t *dst);

/* Unpack to the canonical form: N rows of ceil(K/2) bytes encoded for
 * zero point zp (0 or 8; an odd K's unused high nibble is 0), scales and
 * bias (either may be NULL to skip). Bit-exact inverse of pw__qc4w_pack. */
void pw__qc4w_unpack(const pw__pack_desc *desc, const uint8_t *packed, int zp, uint8_t *nk,
                     float *scale, float *bias);

/* Where value j of a channel's kr-chunk lives: byte and nibble (0 low, 1 high). */
static inline void pw__qc4w_slot(int32_t kr, int32_t sr, int32_t j, int32_t *byte, int *nibble) {
    if (sr == 1) {
        *byte = j / 2;
        *nibble = j & 1;
    } else {
        *byte = j % (kr / 2);
        *nibble = j / (kr / 2);
    }
}

/* Offsets inside a tile (bytes). */
static inline uint64_t pw__qc4w_sums_offset(const pw__pack_desc *d) {
    return (uint64_t)d->in_padded * (uint64_t)d->nr / 2u;
}

/* The oracle: plain loops over the raw weights and the QD8 rows, writing y
 * by the kernel contract (integer sum in int64 from (q - zp) * w directly,
 * not from weight sums). `row` is K bytes of scratch for one decoded row. */
void pw__qc4w_reference(const pw_qc4w_weights *w, const uint8_t *lhs, size_t lhs_row_bytes,
                        int64_t batch, float min, float max, int f16, void *y, int64_t ldy,
                        int8_t *row);

/* The portable packed kernel, generic over (nr, kr, sr); the scalar
 * descriptors and the SIMD kernels' edge cases share it. */
void pw__qc4w_run_scalar(const pw__mm_call *c, int64_t n0, int64_t n1, int64_t m0, int64_t m1);

/* One output of the int4 kinds' scalar paths (QC4W, QB4W): half (nearest even) or f32. */
static inline void pw__int4_store(void *y, int64_t at, int f16, float v) {
    if (f16)
        ((uint16_t *)y)[at] = pw__f32_to_f16(v);
    else
        ((float *)y)[at] = v;
}

/* Final f32 step of the contract, shared by every scalar path. */
static inline float pw__qc4w_finish(int64_t isum, float a_scale, float w_scale, float bias,
                                    float min, float max) {
    const float s = a_scale * w_scale;
    float v = (float)isum * s;
    v = v + bias;
    v = v < min ? min : v;
    return v > max ? max : v;
}

#endif
