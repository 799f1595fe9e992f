/*
 * Helpers shared by the Arm64 kernels compiled with dotprod (and i8mm): the
 * fp16 scale load, the row loop of every row-major GEMV kernel with its
 * descriptor, the two-chain block loop of the 32-element formats, the f32
 * step of a 256-element super-block, and the one edge-tile store. Included
 * only from *_dotprod.c / *_i8mm.c files, whose per-file flags make these
 * intrinsics available.
 */
#ifndef PACKWISE_KERNEL_ARM_DOTPROD_UTIL_H
#define PACKWISE_KERNEL_ARM_DOTPROD_UTIL_H

#if !defined(__aarch64__) || !defined(__ARM_FEATURE_DOTPROD)
#error "dotprod_util.h needs Arm64 with dotprod (-march=armv8.2-a+dotprod)"
#endif

#include "kernel/kernel.h"

#include <arm_neon.h>
#include <stdint.h>
#include <string.h>

#define PW__ALWAYS_INLINE static inline __attribute__((always_inline))

/* v[i] (i < n) = start[4 i .. 4 i + 3] by loads, to start int32 dot chains: MOVI or a
 * register copy takes a slot of the vector pipes the dot instructions fill, a load a
 * load pipe (Neoverse V2: four V pipes, three loads a cycle). The pointer passes
 * through a volatile empty asm at every call, so that GCC neither merges the loads of
 * two calls nor keeps one register to copy from. */
PW__ALWAYS_INLINE void pw__arm_chain_load(const int32_t *start, int n, int32x4_t *v) {
    __asm__ volatile("" : "+r"(start));
    for (int i = 0; i < n; ++i) v[i] = vld1q_s32(start + 4 * i);
}

/* The same from zero (n <= 16). */
PW__ALWAYS_INLINE void pw__arm_chain_zeros(int32x4_t *v, int n) {
    static const int32_t zero[64] __attribute__((aligned(16)));
    pw__arm_chain_load(zero, n, v);
}

/* v[0 .. n) = c, each by a load from one copy stored on the stack (the chains of a
 * record or sub-block that start from the same offset). */
PW__ALWAYS_INLINE void pw__arm_chain_splat(int32x4_t c, int n, int32x4_t *v) {
    int32_t start[4] __attribute__((aligned(16)));
    vst1q_s32(start, c);
    for (int i = 0; i < n; ++i) pw__arm_chain_load(start, 1, &v[i]);
}

/* fp16 bits -> f32 with the FCVT every Armv8 core has (exact, as pw__f16_to_f32). */
PW__ALWAYS_INLINE float pw__arm_f16(uint16_t h) {
    return vgetq_lane_f32(vcvt_f32_f16(vreinterpret_f16_u16(vdup_n_u16(h))), 0);
}

/* Read an fp16 field at any byte address (blocks are 2-byte aligned at most). */
PW__ALWAYS_INLINE float pw__arm_f16_at(const void *p) {
    uint16_t h;
    memcpy(&h, p, 2);
    return pw__arm_f16(h);
}

/*
 * Dot product of one weight row (nb blocks, the first at w, each the next bs bytes
 * on: the block size in row-major order, out blocks' bytes in input-block-major)
 * with one row of quantized activations; returns the f32 result.
 */
typedef float (*pw__arm_row_dot_fn)(const uint8_t *w, int64_t bs, const uint8_t *xq, int64_t nb);

/*
 * The row loop every row-major kernel shares (kernel.h contract): rows
 * [o0, o1) of the view, rows [i0, i1) of X. X rows are the inner loop so a
 * weight row is read from memory once and stays in L1 while every row of X
 * meets it. Inlined with a constant `dot`, so each kernel gets its own copy
 * with the dot product inlined.
 */
PW__ALWAYS_INLINE void pw__arm_rm_loop(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0,
                                       int64_t i1, int64_t block_size, size_t block_bytes,
                                       pw__arm_row_dot_fn dot) {
    const pw_view *w = c->w;
    const int64_t nb = c->in / block_size;
    const int64_t bs = w->strides[1] * (int64_t)block_bytes;
    for (int64_t o = o0; o < o1; ++o) {
        const uint8_t *wrow = w->data + (size_t)(w->offset + o * w->strides[0]) * block_bytes;
        for (int64_t i = i0; i < i1; ++i)
            c->y[i * c->ldy + o] = dot(wrow, bs, c->xq + (size_t)i * c->xq_row_bytes, nb);
    }
}

/*
 * The loop of the input-block-major views (the spec's kernel order), read as
 * streams: the rows of one block column lie side by side there, so the loop reads
 * PW__ARM_IBM_S columns at once over all of a task's rows, each a contiguous run of
 * rows x block_bytes (one stream), row by row: each row's dot over those columns
 * (the same row function, nb = the group's columns) is added to its partial sum,
 * kept in y between column groups (it was a 256-row pass's array on the stack; on
 * x86 runs as long as the task read faster, rm_kquant_avx512.c; here not timed). Each stream is prefetched
 * PW__ARM_IBM_PF / PW__ARM_IBM_S bytes ahead, from the end of its run on into the
 * next column group's. The row loop above, over the same
 * view, reads one row over all columns: nb streams (one per column) advancing a
 * block at a time, more than hardware prefetchers follow; on x86 the same change
 * took the AVX2 Q4_0 and Q8_0 GEMV from 30% and 37% of the read to 74-94%
 * (rm_avx2.h). Here it is checked for results under qemu, not timed (no Arm
 * hardware): the dots are the row-major kernels' own, the partial sums f32.
 */
#define PW__ARM_IBM_S 4     /* columns read at once: the streams */
#define PW__ARM_IBM_PF 4096 /* bytes prefetched ahead, over all the streams */
PW__ALWAYS_INLINE void pw__arm_ibm_loop(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0,
                                        int64_t i1, int64_t block_size, size_t block_bytes,
                                        size_t act_block_bytes, pw__arm_row_dot_fn dot) {
    const pw_view *w = c->w;
    const int64_t nb = c->in / block_size;
    const int64_t rs = w->strides[0] * (int64_t)block_bytes, bs = w->strides[1] * (int64_t)block_bytes;
    const int64_t rows = o1 - o0;
    const uint8_t *first = w->data + (w->offset + o0 * w->strides[0]) * (int64_t)block_bytes;
    for (int64_t i = i0; i < i1; ++i) {
        const uint8_t *xrow = c->xq + (size_t)i * c->xq_row_bytes;
        float *part = c->y + i * c->ldy + o0; /* the partial sums, in y */
        for (int64_t b = 0; b < nb; b += PW__ARM_IBM_S) {
            const int64_t sn = nb - b < PW__ARM_IBM_S ? nb - b : PW__ARM_IBM_S;
            const uint8_t *col = first + b * bs, *x = xrow + (size_t)b * act_block_bytes;
            for (int64_t r = 0; r < rows; ++r) {
                const uint8_t *p = col + r * rs;
                /* rows side by side: the distance on along each column; past the
                 * task's rows, into the next column group (read next). A narrowed
                 * view's rows do not lie side by side (the bytes that far on are
                 * other rows'): this row's own blocks of the next column group, as
                 * the x86 loops do (rm_avx2.h). */
                const int adjacent = rs == (int64_t)block_bytes;
                const int64_t at = r * rs + PW__ARM_IBM_PF / PW__ARM_IBM_S;
                const uint8_t *pf = !adjacent ? (b + PW__ARM_IBM_S < nb ? p + PW__ARM_IBM_S * bs : NULL)
                                    : at < rows * rs ? col + at
                                    : b + PW__ARM_IBM_S < nb ? col + PW__ARM_IBM_S * bs + (at - rows * rs)
                                                             : NULL;
                /* each line once (blocks of 18 or 34 bytes share lines): the lines
                 * that begin inside this row's target block, and, where a run of
                 * targets begins (the task's first row, the first into the next
                 * column group, every row of a narrowed view), the line it begins in */
                const int fresh = !adjacent || r == 0 || (at >= rows * rs && at - rows * rs < rs);
                if (pf != NULL)
                    for (int64_t s = 0; s < sn; ++s) {
                        const uintptr_t t = (uintptr_t)(pf + s * bs);
                        uintptr_t a = fresh ? t & ~(uintptr_t)63 : (t + 63) & ~(uintptr_t)63;
                        for (; a < t + block_bytes; a += 64) __builtin_prefetch((const void *)a, 0, 3);
                    }
                const float d = dot(p, bs, x, sn);
                part[r] = b == 0 ? d : part[r] + d;
            }
        }
    }
}

/*
 * Defines the run functions <id>_rm_dotprod (pw__arm_rm_loop) and <id>_ibm_dotprod
 * (pw__arm_ibm_loop) over one row function: block_size elements in block_bytes bytes
 * a block, activation blocks of act_block_bytes.
 */
#define PW__ARM_RM_RUNS(id, block_size, block_bytes, act_block_bytes, row)                        \
    static void id##_rm_dotprod(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0,        \
                                int64_t i1) {                                                     \
        pw__arm_rm_loop(c, o0, o1, i0, i1, block_size, block_bytes, row);                         \
    }                                                                                             \
    static void id##_ibm_dotprod(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0,       \
                                 int64_t i1) {                                                    \
        pw__arm_ibm_loop(c, o0, o1, i0, i1, block_size, block_bytes, act_block_bytes, row);       \
    }

/*
 * Defines `pw__k_<id>_rm_dotprod` and `pw__k_<id>_ibm_dotprod`, the descriptors of
 * the GEMV kernels "<id>_rm_dotprod" (row-major views, run <id>_rm_dotprod) and
 * "<id>_ibm_dotprod" (input-block-major views, run <id>_ibm_dotprod): one row per
 * tile, any n, activation form PW_ACT_<act>, key and name as kernel.h asks.
 */
#define PW__ARM_RM_KERNEL(id, fmt, act)                                                           \
    PW__ARM_RM_DESC(id, fmt, act, rm, PW_LAYOUT_BLOCKED_ROW_MAJOR, "row_major");                  \
    PW__ARM_RM_DESC(id, fmt, act, ibm, PW_LAYOUT_BLOCKED_INPUT_MAJOR, "input_block_major")
#define PW__ARM_RM_DESC(id, fmt, act, kind_, layout_, lkey_)                                      \
    const pw__kernel pw__k_##id##_##kind_##_dotprod = {                                           \
        .info = {.name = #id "_" #kind_ "_dotprod",                                               \
                 .key = PW__KEY(#id, lkey_, act, "dotprod"),                                      \
                 .format = fmt,                                                                   \
                 .layout = layout_,                                                               \
                 .tile_rows = 1,                                                                  \
                 .tile_batch = 1,                                                                 \
                 .activation = PW_ACT_##act,                                                      \
                 .features = PW_CPU_NEON | PW_CPU_DOTPROD,                                        \
                 .isa = "dotprod"},                                                               \
        .run = id##_##kind_##_dotprod,                                                            \
        .priority = PW__PRIO_DOTPROD,                                                             \
        .min_n = 1}

/*
 * The 32 int8 weights of one 32-element block at w (its fp16 scale d_w at
 * byte 0): val[0] elements 0..15, val[1] elements 16..31.
 */
typedef int8x16x2_t (*pw__arm_q32_codes_fn)(const uint8_t *w);

/* acc + d_w * d_x * sum((q - 4 bias4) * q_x) for one such block against one pw__q8_32
 * block: two sdot from -bias4 * x.sum in each of the four lanes (sum (q - c) q_x = sum q
 * q_x - c x.sum, exact), so a format whose codes carry an offset c (Q4_0: 8, bias4 2)
 * hands over the raw codes and no subtraction per byte. */
PW__ALWAYS_INLINE float32x4_t pw__arm_q32_block(float32x4_t acc, const uint8_t *w,
                                                const pw__q8_32 *x, pw__arm_q32_codes_fn codes,
                                                const int32_t bias4) {
    const int8x16x2_t q = codes(w);
    int32x4_t s = vdotq_s32(vdupq_n_s32(-bias4 * x->sum), q.val[0], vld1q_s8(x->qs));
    s = vdotq_s32(s, q.val[1], vld1q_s8(x->qs + 16));
    return vfmaq_n_f32(acc, vcvtq_f32_s32(s), pw__arm_f16_at(w) * x->d);
}

/*
 * Row dot product of the 32-element formats with an fp16 scale at byte 0
 * against pw__q8_32 rows (nb blocks, bs bytes apart). Two blocks per step into
 * two f32 accumulators keep two independent FMA chains; an odd last block
 * joins the first. Formats with a minimum (has_min: Q4_1, Q5_1, fp16 m at byte
 * 2, value = code * d + m) add m * x.dsum (x.dsum = x.d * sum(x.qs)) a block.
 * bias4: the codes' offset over 4 (pw__arm_q32_block). Like pw__arm_rm_loop it is
 * inlined with a constant always-inline `codes` (and has_min, bias4), so each
 * kernel's loop holds its own decode and no call.
 */
PW__ALWAYS_INLINE float pw__arm_q32_row_min(const uint8_t *w, int64_t bs, const uint8_t *xq,
                                            int64_t nb, pw__arm_q32_codes_fn codes,
                                            const int has_min, const int32_t bias4) {
    const pw__q8_32 *x = (const pw__q8_32 *)xq;
    float32x4_t a0 = vdupq_n_f32(0.0f), a1 = vdupq_n_f32(0.0f);
    float m0 = 0.0f, m1 = 0.0f;
    int64_t b = 0;
    for (; b + 2 <= nb; b += 2) {
        a0 = pw__arm_q32_block(a0, w + b * bs, x + b, codes, bias4);
        a1 = pw__arm_q32_block(a1, w + (b + 1) * bs, x + b + 1, codes, bias4);
        if (has_min) {
            m0 += pw__arm_f16_at(w + b * bs + 2) * x[b].dsum;
            m1 += pw__arm_f16_at(w + (b + 1) * bs + 2) * x[b + 1].dsum;
        }
    }
    if (b < nb) {
        a0 = pw__arm_q32_block(a0, w + b * bs, x + b, codes, bias4);
        if (has_min) m0 += pw__arm_f16_at(w + b * bs + 2) * x[b].dsum;
    }
    return vaddvq_f32(vaddq_f32(a0, a1)) + (m0 + m1);
}

/* The same without a minimum (Q4_0, Q8_0, Q5_0, IQ4_NL). */
PW__ALWAYS_INLINE float pw__arm_q32_row(const uint8_t *w, int64_t bs, const uint8_t *xq,
                                        int64_t nb, pw__arm_q32_codes_fn codes,
                                        const int32_t bias4) {
    return pw__arm_q32_row_min(w, bs, xq, nb, codes, 0, bias4);
}

/*
 * The one f32 step of a 256-element super-block whose integer dot stays in
 * int32: acc + d_w * d_x * (lanes of s0 and s1 - offset), d_w the fp16 at
 * `d_w`. `offset` carries a format's code bias (e.g. the -32 of Q6_K through
 * the activation's bsums).
 */
PW__ALWAYS_INLINE float pw__arm_sb_step(float acc, int32x4_t s0, int32x4_t s1, int32_t offset,
                                        const uint8_t *d_w, float d_x) {
    const int32_t total = vaddvq_s32(vaddq_s32(s0, s1)) - offset;
    return acc + pw__arm_f16_at(d_w) * d_x * (float)total;
}

/* The 16 unsigned bytes of v as int32: w[k] = bytes 4k .. 4k+3. */
PW__ALWAYS_INLINE void pw__arm_widen_u8(uint8x16_t v, int32x4_t w[4]) {
    const uint16x8_t lo = vmovl_u8(vget_low_u8(v)), hi = vmovl_high_u8(v);
    w[0] = vreinterpretq_s32_u32(vmovl_u16(vget_low_u16(lo)));
    w[1] = vreinterpretq_s32_u32(vmovl_high_u16(lo));
    w[2] = vreinterpretq_s32_u32(vmovl_u16(vget_low_u16(hi)));
    w[3] = vreinterpretq_s32_u32(vmovl_high_u16(hi));
}

/* The 16 signed bytes of v as int32: w[k] = bytes 4k .. 4k+3. */
PW__ALWAYS_INLINE void pw__arm_widen_s8(int8x16_t v, int32x4_t w[4]) {
    const int16x8_t lo = vmovl_s8(vget_low_s8(v)), hi = vmovl_high_s8(v);
    w[0] = vmovl_s16(vget_low_s16(lo));
    w[1] = vmovl_high_s16(lo);
    w[2] = vmovl_s16(vget_low_s16(hi));
    w[3] = vmovl_high_s16(hi);
}

/*
 * Store `rows` (1..8) floats of one output row of an 8-wide tile held in two
 * vectors (by value, so accumulators never need an address): whole tiles
 * store vectors, the edge tile (o1 - t0 < nr) goes through this one path.
 */
PW__ALWAYS_INLINE void pw__arm_store8(float *y, float32x4_t a, float32x4_t b, int rows) {
    if (rows == 8) {
        vst1q_f32(y, a);
        vst1q_f32(y + 4, b);
        return;
    }
    float tmp[8];
    vst1q_f32(tmp, a);
    vst1q_f32(tmp + 4, b);
    memcpy(y, tmp, sizeof(float) * (size_t)rows);
}

#endif
