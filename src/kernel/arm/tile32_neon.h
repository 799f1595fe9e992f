/*
 * The loops every NEON dotprod kernel of a 32-row tiling runs (kernel/tile32.h):
 * tile32_avx2.h's GEMV and GEMM loops at 128 bits, over the same packed bytes the
 * x86 kernels read (the packers are portable C, so a weight packed once serves
 * every ISA). A family's *_dotprod.c file includes this header and brings only its
 * record functions:
 *
 * GEMV   block(rec, xb, acc): acc[q] (rows 4q .. 4q+3 of the tile, q = 0..7) +=
 *        the f32 dots of record rec with activation block xb. Eight f32 vectors
 *        hold the 32 sums of a row of X in registers (NEON has 32), beside the
 *        record's eight int32 dot vectors.
 *
 * GEMM   block(rec, x, acc, mr): kernel/tile32_gemm.h's loop, as on AVX2 (4 x mr
 *        f32 sums do not fit in registers beside the int32 dots and the
 *        activations, 2 x mr vectors: all 32 bytes of a block, see below).
 *
 * Activations: the indexed SDOT (vdotq_laneq_s32) multiplies each 4-byte group of a
 * weight vector by one 4-byte group of the second operand, chosen by an immediate
 * lane: the 32 bytes of x.qs are two q registers, loaded once per block, and step s
 * (k = 4s .. 4s+3) reads lane s & 3 of register s >> 2: no broadcast instruction,
 * where x86 spends a broadcast load per step and row of X. The lane must be an
 * immediate at every optimization level (the Debug build compiles -O0), so the
 * record functions spell the 8 steps with a macro over literal s (PW__T32N_STEPS)
 * rather than a loop.
 *
 * No software prefetch: a thread's range of tiles is one linear stream, which the
 * stream prefetchers of Armv8 cores follow, and the x86 distances (tuned on a Xeon)
 * were never measured on an Arm core (the other Arm kernels do not prefetch either).
 *
 * Both loops are always inlined into the kernel with a constant block function,
 * which the compiler inlines in turn: no call per record. Rows past `out` in the
 * last tile are zero in the packed bytes; their lanes are computed and not stored.
 */
#ifndef PACKWISE_KERNEL_ARM_TILE32_NEON_H
#define PACKWISE_KERNEL_ARM_TILE32_NEON_H

#if !defined(__aarch64__) || !defined(__ARM_FEATURE_DOTPROD)
#error "tile32_neon.h needs Arm64 with dotprod (-march=armv8.2-a+dotprod)"
#endif

#include "kernel/arm/dotprod_util.h"
#include "kernel/tile32.h"
#include "kernel/tile32_gemm.h"
#include "kernel/tile32_kgemm.h"

#include <arm_neon.h>
#include <stdint.h>
#include <string.h>

#define PW__T32N_INLINE static inline __attribute__((always_inline))

/*
 * The i8mm build of a family's dotprod file. q4x_i8mm.c and q4kx_i8mm.c define
 * PW_ARM_I8MM and #include q4x_dotprod.c and q4kx_dotprod.c (cmake gives *_i8mm.c
 * +i8mm on top of the dotprod flags), as x86's *_avxvnni.c files build their AVX2
 * sources again (x86/avx2_level.h). That build defines only the GEMVs of the 4-bit
 * formats whose two nibbles of a byte are two rows at the same k (Q4_0, Q4_1, Q4_K):
 * there USDOT (FEAT_I8MM: unsigned weight bytes, signed activations) takes the whole
 * byte, as the x86 kernels do (q4x_avx512.c), and the high nibble's dot is the
 * difference, so a 16-byte piece costs an AND, an SDOT and a USDOT where the dotprod
 * GEMV spends an AND, a USHR and two SDOT. The GEMMs, which unpack a piece once for
 * up to 6 rows of X, stay the dotprod file's.
 *
 * PW__PRIO_T32N_I8MM_GEMV ranks those GEMVs above the dotprod family GEMV
 * (PW__PRIO_DOTPROD + 2) and below the family GEMM (PW__PRIO_DOTPROD + PW__PRIO_GEMM
 * - 1), so that n >= 2 keeps the GEMM: a GEMV kernel serves any n (min_n = 1). It
 * shares its number with kernel.h's PW__PRIO_I8G_ARM_BELOW, whose kernels serve only
 * n >= 2, where the family GEMM outranks both.
 */
#if defined(PW_ARM_I8MM)
#if !defined(__ARM_FEATURE_MATMUL_INT8)
#error "PW_ARM_I8MM builds need +i8mm (cmake gives *_i8mm.c the flag)"
#endif
#define PW__T32N_I8MM 1
/* acc + the dots of w's four 4-byte groups, as unsigned bytes, with activation bytes
 * 4s .. 4s+3 of a0 (0..15), a1 (16..31); s a literal. */
#define PW__T32N_USDOT(acc, w, a0, a1, s)                                                      \
    ((s) < 4 ? vusdotq_laneq_s32((acc), (w), (a0), (s) & 3)                                    \
             : vusdotq_laneq_s32((acc), (w), (a1), (s) & 3))
#else
#define PW__T32N_I8MM 0
#endif
#define PW__PRIO_T32N_I8MM_GEMV (PW__PRIO_DOTPROD + 3)
#define PW__T32N_I8MM_FEATURES (PW_CPU_NEON | PW_CPU_DOTPROD | PW_CPU_I8MM)

/* The 8 k steps of a block, s a literal at each use (the SDOT lane is an immediate). */
#define PW__T32N_STEPS(STEP) STEP(0) STEP(1) STEP(2) STEP(3) STEP(4) STEP(5) STEP(6) STEP(7)

/* acc + the dots of w's four 4-byte groups with activation bytes 4s .. 4s+3 of the
 * block whose 32 bytes are a0 (0..15) and a1 (16..31); s a literal. */
#define PW__T32N_SDOT(acc, w, a0, a1, s)                                                       \
    ((s) < 4 ? vdotq_laneq_s32((acc), (w), (a0), (s) & 3)                                      \
             : vdotq_laneq_s32((acc), (w), (a1), (s) & 3))

/* The 5-bit families (q5x32k4, q5kx32k4: kernel/q5x.h, q5kx.h): bit s (a literal) of
 * each byte of a 16-byte piece of a bit plane at bit 4, its bits 5-7 zero (bits 0-3
 * unspecified): a left shift drops the plane's higher bits, a right shift of 3 then
 * clears bits 5-7. */
#define PW__T32N_BIT4(plane, s) vshrq_n_u8(vshlq_n_u8((plane), 7 - (s)), 3)
/* The low (lo) and high (hi) values of 16 bytes v of step s: nibbles, and for a 5-bit
 * family (q5) bit 4 from the planes' pieces at pl (low nibbles) and ph (high) at the
 * same offset: a bit select keeps v's low nibble under it, a shift-right-insert puts
 * v's high nibble below it. */
#define PW__T32N_VALUES(v, s, q5, pl, ph, lo, hi)                                              \
    do {                                                                                       \
        if (q5) {                                                                              \
            (lo) = vbslq_u8(vdupq_n_u8(0x0F), (v), PW__T32N_BIT4(vld1q_u8(pl), s));            \
            (hi) = vsriq_n_u8(PW__T32N_BIT4(vld1q_u8(ph), s), (v), 4);                         \
        } else {                                                                               \
            (lo) = vandq_u8((v), vdupq_n_u8(0x0F));                                            \
            (hi) = vshrq_n_u8((v), 4);                                                         \
        }                                                                                      \
    } while (0)

#if PW__T32N_I8MM
/* The 8 k steps of 512 bytes at p, four q registers a step (register j: rows 4j .. 4j+3
 * of the tile in the low nibbles, 16 + 4j .. in the high ones), against the block's
 * activations a0 (0..15), a1 (16..31): lo[j] + the low nibbles' dots (SDOT), all[j] + the
 * whole bytes' (USDOT), that is lo's + 16 x the high nibbles'. */
PW__T32N_INLINE void pw__t32n_usdot_steps(const uint8_t *p, int8x16_t a0, int8x16_t a1,
                                          int32x4_t lo[4], int32x4_t all[4]) {
    const uint8x16_t m0f = vdupq_n_u8(0x0F);
#define PW__T32N_USDOT_STEP(s)                                                                 \
    for (int j = 0; j < 4; ++j) {                                                              \
        const uint8x16_t v = vld1q_u8(p + 64 * (s) + 16 * j);                                  \
        lo[j] = PW__T32N_SDOT(lo[j], vreinterpretq_s8_u8(vandq_u8(v, m0f)), a0, a1, s);         \
        all[j] = PW__T32N_USDOT(all[j], v, a0, a1, s);                                         \
    }
    PW__T32N_STEPS(PW__T32N_USDOT_STEP)
#undef PW__T32N_USDOT_STEP
}
#endif

/* Four fp16 scales at p (any 2-byte alignment) as f32: FCVTL, exact. */
PW__T32N_INLINE float32x4_t pw__t32n_f16x4(const uint8_t *p) {
    return vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16((const uint16_t *)(const void *)p)));
}

/* acc + f32(dot) * (d * xd): the x86 kernels' float step (one rounding of the scale
 * product, then a fused multiply-add). */
PW__T32N_INLINE float32x4_t pw__t32n_scale_add(float32x4_t acc, int32x4_t dot, float32x4_t d,
                                               float xd) {
    return vfmaq_f32(acc, vcvtq_f32_s32(dot), vmulq_n_f32(d, xd));
}

/* Store the first `rows` (0..32) of the 32 values of acc[0..7] at y. */
PW__T32N_INLINE void pw__t32n_store(float *y, const float32x4_t acc[8], int rows) {
    if (rows == 32) {
        for (int q = 0; q < 8; ++q) vst1q_f32(y + 4 * q, acc[q]);
        return;
    }
    float t[32];
    for (int q = 0; q < 8; ++q) vst1q_f32(t + 4 * q, acc[q]);
    memcpy(y, t, sizeof(float) * (size_t)rows);
}

/* ---- GEMV ---- */

typedef void (*pw__t32n_block_fn)(const uint8_t *rec, const uint8_t *xb, float32x4_t acc[8]);

/* y[i, o] for o in [o0, o1), i in [i0, i1): records of record_bytes, one per
 * activation block of xb_bytes (block_values k values each). */
PW__T32N_INLINE void pw__t32n_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0,
                                  int64_t i1, int64_t block_values, uint64_t record_bytes,
                                  size_t xb_bytes, pw__t32n_block_fn block) {
    const pw__pack_desc *d = c->pack_desc;
    const int64_t nb = d->in / block_values;
    for (int64_t t0 = o0; t0 < o1; t0 += PW__TILE32_NR) {
        const uint8_t *tile = c->packed + (uint64_t)(t0 / PW__TILE32_NR) * d->tile_bytes;
        const int rows = o1 - t0 < PW__TILE32_NR ? (int)(o1 - t0) : PW__TILE32_NR;
        for (int64_t i = i0; i < i1; ++i) {
            const uint8_t *x = c->xq + (uint64_t)i * c->xq_row_bytes;
            float32x4_t acc[8];
            for (int q = 0; q < 8; ++q) acc[q] = vdupq_n_f32(0.0f);
            for (int64_t b = 0; b < nb; ++b)
                block(tile + (uint64_t)b * record_bytes, x + (size_t)b * xb_bytes, acc);
            pw__t32n_store(c->y + i * c->ldy + t0, acc, rows);
        }
    }
}

/* ---- GEMM ---- */

/* The L1-sum GEMM loop (kernel/tile32_gemm.h), without software prefetch (above), in
 * panels of up to 6 rows of X (x86's AVX2 loop takes 4: 16 ymm registers). */
#define PW__T32NG_MR 6
/* Activation bytes of a row block per pass: the x86 loops' reason (a row block's
 * activations stay in L2 while the tiles stream past them; tile32_gemm_avx512.h) at
 * an Arm server core's L2 (1 MiB per Neoverse V2 core in NVIDIA Grace) rather than
 * the x86 loops' 4 MiB budget. Unmeasured on Arm. */
#define PW__T32NG_XL2 (1024u << 10)

PW__T32N_INLINE void pw__t32ng_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0,
                                   int64_t i1, int64_t block_values, uint64_t record_bytes,
                                   size_t xb_bytes, pw__t32l_block_fn block) {
    pw__t32l_run(c, o0, o1, i0, i1, block_values, record_bytes, xb_bytes, PW__T32NG_XL2, 0, block,
                 PW__T32NG_MR);
}

/* The same over records made from input-block-major bytes as it goes (the IBM GEMM
 * kernels: kernel/tile32.h, pw__tile32_fill_ibm). These do prefetch, on every ISA: the
 * blocks of the next fill lie in runs a column apart, not in the one linear stream a
 * stream prefetcher follows (pw__tile32_fill_next; unmeasured on Arm). */
PW__T32N_INLINE void pw__t32ng_run_fill(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0,
                                        int64_t i1, int64_t block_values, uint64_t record_bytes,
                                        size_t xb_bytes, pw__t32l_block_fn block,
                                        pw__tile32_fill_fn fill) {
    pw__t32l_run_fill(c, o0, o1, i0, i1, block_values, record_bytes, xb_bytes, PW__T32NG_XL2, block,
                      fill, PW__T32NG_MR);
}

/* ---- K-quant families (256-value blocks, pw__q8_256 activations) ---- */

/* *lo and *hi + the four steps of one register j of a sub-block against one row of X:
 * w[u] step u of the register's low group (rows 4j .. 4j+3), w[4 + u] of its high group
 * (rows 16 + 4j ..), each against lane u of the row's 16 activation bytes a (indexed
 * SDOT). The two chains alternate, so that SDOT after SDOT is independent. The GEMV
 * calls it once per register, the GEMM panels once per row of X. Tried: the loop over
 * the rows inside this function (n rows); GCC 12 then laid out the Q2_K panel's min sums
 * differently (objdump -d of q2kx_dotprod.c.o; the SDOT loop scripts/arm_mca.py times
 * was the same), where one call per row leaves every object byte for byte as the
 * spelled-out SDOT were. */
PW__T32N_INLINE void pw__t32n_dot8(int32x4_t *lo, int32x4_t *hi, const int8x16_t w[8],
                                   int8x16_t a) {
    *lo = vdotq_laneq_s32(*lo, w[0], a, 0);
    *hi = vdotq_laneq_s32(*hi, w[4], a, 0);
    *lo = vdotq_laneq_s32(*lo, w[1], a, 1);
    *hi = vdotq_laneq_s32(*hi, w[5], a, 1);
    *lo = vdotq_laneq_s32(*lo, w[2], a, 2);
    *hi = vdotq_laneq_s32(*hi, w[6], a, 2);
    *lo = vdotq_laneq_s32(*lo, w[3], a, 3);
    *hi = vdotq_laneq_s32(*hi, w[7], a, 3);
}

/* The GEMM panels' form of a record with one scale per sub-block and row and one d per
 * row (Q3_K's, Q6_K's), row r of the tile at index r. */
typedef struct pw__t32n_srec {
    int32_t sc[16][32]; /* sub-block s's scale */
    float d[32];
} pw__t32n_srec;
_Static_assert(sizeof(pw__t32n_srec) <= PW__T32K_SCRATCH, "pw__t32n_srec fits the loop's scratch");

/* scales(rec, s, h, w): the scales of sub-block s, rows 16h .. 16h+15, as int32 (w[k]
 * rows 16h + 4k .. 16h + 4k + 3). */
typedef void (*pw__t32n_scales_fn)(const uint8_t *rec, int s, int h, int32x4_t w[4]);

/* Record rec's scales (through scales, a constant) and its 32 fp16 d at byte d_at as
 * f32, into rs. */
PW__T32N_INLINE void pw__t32n_srec_decode(const uint8_t *rec, size_t d_at,
                                          pw__t32n_scales_fn scales, pw__t32n_srec *rs) {
    for (int s = 0; s < 16; ++s)
        for (int h = 0; h < 2; ++h) {
            int32x4_t w[4];
            scales(rec, s, h, w);
            for (int k = 0; k < 4; ++k) vst1q_s32(rs->sc[s] + 16 * h + 4 * k, w[k]);
        }
    for (int q = 0; q < 8; ++q) vst1q_f32(rs->d + 4 * q, pw__t32n_f16x4(rec + d_at + 8 * q));
}

/* The GEMM functions of a K-quant family over tile32_kgemm.h's loop, from its panel
 * panel_(rec, (const rec_t_ *)rs, x, yb, mr) (mr a constant 1..mr_, mr_ <= 4) and its
 * decode_: pre_##_panel_any (pf unused: no software prefetch on Arm, above),
 * pre_##_gemm_run over the packed records, and pre_##_ibm_gemm_run over records made
 * from input-block-major blocks of block_t_ (make_: the family's record maker). */
#define PW__T32N_KGEMM(pre_, panel_, rec_t_, decode_, mr_, record_bytes_, block_t_, make_)         \
    _Static_assert((mr_) >= 1 && (mr_) <= 4 && (mr_) <= PW__T32K_MR_MAX, "panel heights");         \
    static void pre_##_panel_any(const uint8_t *rec, const void *rs, const uint8_t *const *x,      \
                                 float *yb, const uint8_t *pf, int mr) {                           \
        (void)pf;                                                                                  \
        switch (mr) {                                                                              \
        case 1: panel_(rec, (const rec_t_ *)rs, x, yb, 1); break;                                  \
        case 2: if ((mr_) >= 2) panel_(rec, (const rec_t_ *)rs, x, yb, 2); break;                  \
        case 3: if ((mr_) >= 3) panel_(rec, (const rec_t_ *)rs, x, yb, 3); break;                  \
        case 4: if ((mr_) >= 4) panel_(rec, (const rec_t_ *)rs, x, yb, 4); break;                  \
        default: break;                                                                            \
        }                                                                                          \
    }                                                                                              \
    static void pre_##_gemm_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0,          \
                                int64_t i1) {                                                      \
        pw__t32k_run(c, o0, o1, i0, i1, record_bytes_, mr_, decode_, pre_##_panel_any);            \
    }                                                                                              \
    PW__TILE32_IBM_FILL(pre_##_fill_ibm, block_t_, record_bytes_, make_)                           \
    static void pre_##_ibm_gemm_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0,      \
                                    int64_t i1) {                                                  \
        pw__t32k_run_fill(c, o0, o1, i0, i1, record_bytes_, mr_, decode_, pre_##_panel_any,        \
                          pre_##_fill_ibm);                                                        \
    }

/* A K-quant family's runs and descriptors: the GEMV pre_##_run over pre_##_block
 * (records of record_ bytes, one per pw__q8_256 block), PW__T32N_KGEMM's GEMMs over
 * pre_##_panel (rec_t_, decode_, mr_; block_t_ and make_ for the input-block-major
 * one), and the three kernels. sym_ names the family's kernels (q2_k_q2kx32k4 ->
 * q2_k_q2kx32k4_dotprod, q2_k_q2kx32k4_gemm_dotprod), id_ the format
 * (q2_k_ibm_gemm_dotprod); KERNEL_ and GEMM_KERNEL_ are the family's descriptor macros
 * (PW__Q2KX_KERNEL, PW__Q2KX_GEMM_KERNEL). The GEMV ranks above the row-major dotprod
 * kernel (PW__PRIO_DOTPROD), the GEMMs at PW__PRIO_DOTPROD + PW__PRIO_GEMM - 1: above
 * the format's i8g kernels where kernel.h's PW__PRIO_I8G_ARM_BELOW ranks them lower (Q2_K,
 * Q3_K, Q4_K, Q6_K; TQ2_0's dotprod one: llvm-mca puts the family's GEMM ahead), else
 * just below. */
#define PW__T32N_KFAMILY(pre_, sym_, id_, format_, record_, block_t_, make_, rec_t_, decode_,    \
                         mr_, KERNEL_, GEMM_KERNEL_)                                               \
    static void pre_##_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0,             \
                           int64_t i1) {                                                         \
        pw__t32n_run(c, o0, o1, i0, i1, PW__QK_K, record_, sizeof(pw__q8_256), pre_##_block);    \
    }                                                                                            \
    PW__T32N_KGEMM(pre_, pre_##_panel, rec_t_, decode_, mr_, record_, block_t_, make_)           \
    const pw__kernel pw__k_##sym_##_dotprod =                                                    \
        KERNEL_("dotprod", PW_CPU_NEON | PW_CPU_DOTPROD, pre_##_run, PW__PRIO_DOTPROD + 2);       \
    const pw__kernel pw__k_##sym_##_gemm_dotprod =                                               \
        GEMM_KERNEL_("dotprod", PW_CPU_NEON | PW_CPU_DOTPROD, pre_##_gemm_run,                    \
                     PW__PRIO_DOTPROD + PW__PRIO_GEMM - 1, mr_);                                  \
    const pw__kernel pw__k_##id_##_ibm_gemm_dotprod = PW__TILE32_IBM_GEMM_KERNEL(                \
        #id_, format_, Q8_256, "dotprod", PW_CPU_NEON | PW_CPU_DOTPROD, pre_##_ibm_gemm_run,      \
        PW__PRIO_DOTPROD + PW__PRIO_GEMM - 1, mr_);

#endif
