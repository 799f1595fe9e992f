#if !defined(__AVX512F__) || !defined(__AVX512BW__) || !defined(__AVX512VL__) ||            \
    !defined(__AVX512VNNI__) || !defined(__F16C__)
#error "q4x_gemm_avx512.c needs AVX-512 F/BW/VL/VNNI and F16C (the build sets them for *_avx512.c)"
#endif
/*
 * AVX-512 VNNI GEMM over the q4x32k4 family (layout in kernel/q4x.h): the
 * bytes the GEMV kernel reads (the file's size), each record's nibbles
 * unpacked in registers once for a panel of up to PW__T32G_MR rows of X
 * instead of once per row. The loops (row blocks, passes, tiles, panels) are
 * tile32_gemm_avx512.h's; this file is the record function. Activations are
 * pw__q8_32 rows; y[i, o] for o in [o0, o1), i in [i0, i1).
 *
 * One block record (576 bytes) of a tile, rows r < mr of X, c_r = -8 * x_r.sum:
 *
 *   v_s  = bytes [64s, 64s + 64)        s = 0..7; lane l: rows l (lo), l+16 (hi)
 *   vl_s = v_s & 0x0F,  vh_s = (v_s >> 4) & 0x0F        once per record, for every r
 *   a_rs = bcast(x_r.qs[4s .. 4s+3])
 *   lo_r = c_r + sum_s dpbusd(vl_s, a_rs)               rows 0..15, offset included
 *   hi_r = c_r + sum_s dpbusd(vh_s, a_rs)               rows 16..31
 *   acc_r,lo += f32(lo_r) * f32(d[0..15]) * x_r.d,   acc_r,hi += f32(hi_r) * f32(d[16..31]) * x_r.d
 *
 * The nibbles are the unsigned side of vpdpbusd and the int8 activations the
 * signed side, so no correction beyond the -8 offset (once per block and row)
 * is needed. Integer range per block: |lo|, |hi| <= 32 * 15 * 127 + 8 * 32 * 127
 * < 2^17, exact in int32 and in its f32 conversion.
 *
 * Q5_0 (q5x32k4, kernel/q5x.h) and IQ4_NL (iq4x32k4, kernel/iq4x.h) take the same
 * loop with a constant format: vl_s and vh_s get Q5_0's bit 4 from the record's
 * planes (vptestmb, masked vpaddb; c_r = -16 * x_r.sum) or go through IQ4_NL's
 * codebook + 128 (vpshufb; c_r = -128 * x_r.sum), once per record for every r.
 * Q4_1 and Q5_1 (q41x32k4, q51x32k4, kernel/q41x.h) take Q4_0's and Q5_0's with c_r = 0,
 * then acc_r += f32(m) * x_r.dsum, the record's fp16 minima m.
 *
 * Per record and panel of mr rows: 8 loads and 24 logic ops to unpack, then
 * per row 16 vpdpbusd, 8 activation broadcasts, one offset broadcast and
 * 6 f32 ops (2 conversions, 2 scale products, 2 fma). With mr = 10 the 20
 * int32 dot accumulators stay in registers beside the unpacked step and the
 * mask, and the f32 sums are read and written in L1 once per record and row
 * (tile32_gemm_avx512.h has the measurement). Taking the high nibbles
 * as v & 0xF0 (16 q, the 1/16 folded into the scales: no shift) measured the
 * same.
 *
 * Against q4_0_i8g32_avx512vnni, one process timing both on the same packed
 * weight and activations, interleaved: 21 rounds of best-of-25 single calls,
 * GFLOP/s median [min-max] and the per-round ratio's median [min-max], on a
 * 2-core VM shared with other builds (load average 14-19):
 *
 *   shape          n  T  i8g                   q4x32k4 GEMM          ratio
 *   [4096, 4096]  16  1   433 [359-462]         643 [555-662]         1.46 [1.31-1.79]
 *                 32  1   466 [413-490]         635 [575-650]         1.35 [1.27-1.55]
 *                128  1   282 [255-514]         423 [316-630]         1.54 [0.77-2.38]
 *   [11008, 4096] 16  1   438 [422-492]         646 [607-668]         1.47 [1.30-1.53]
 *                 32  1   276 [201-520]         334 [290-628]         1.18 [0.64-2.16]
 *                128  1   189 [164-404]         240 [183-340]         1.22 [0.58-1.96]
 *   [4096, 4096]  16  2   813 [150-948]        1211 [453-1275]        1.41 [0.65-3.43]
 *                 32  2   928 [443-1048]       1196 [560-1347]        1.30 [0.67-2.67]
 *                128  2   210 [198-281]         255 [181-353]         1.15 [0.82-1.67]
 *   [11008, 4096] 16  2   950 [188-1057]       1170 [310-1304]        1.26 [0.39-2.61]
 *                 32  2   408 [122-1002]       1089 [123-1300]        1.32 [0.13-6.69]
 *                128  2   193 [160-345]         230 [189-384]         1.18 [0.65-2.25]
 *
 * (the n = 128 and 2-thread rows ran while other jobs held the cores: their
 * absolute figures are low for both kernels; in quiet minutes n = 128 on one
 * thread ran at 550-630 GFLOP/s against 460-515.)
 */
#include "format/blocks.h"
#include "kernel/q4x.h"
#include "kernel/iq4x.h"
#include "kernel/q41x.h"
#include "kernel/q5x.h"
#include "kernel/x86/tile32_avx512.h"
#include "kernel/x86/tile32_fill_avx512.h"
#include "kernel/x86/tile32_gemm_avx512.h"

#include <stddef.h>
#include <string.h>

#define Q4XG_INLINE static inline __attribute__((always_inline))

Q4XG_INLINE void q4x_gemm_any(const uint8_t *rec, const uint8_t *const *x, float acc[][PW__TILE32_NR],
                              const int mr, const int f) {
    const int q5 = PW__Q4X_BIT4(f), nl = f == PW__Q4X_IQ4_NL;
    const __m512i m = _mm512_set1_epi8(0x0F), c16 = _mm512_set1_epi8(16);
    const __m512i pl = q5 ? _mm512_loadu_si512(rec + PW__Q5X_BITS) : m;
    const __m512i ph = q5 ? _mm512_loadu_si512(rec + PW__Q5X_BITS + 64) : m;
    /* IQ4_NL (iq4x.h): the codebook + 128, for vpshufb */
    const __m512i book = _mm512_broadcast_i32x4(_mm_add_epi8(
        _mm_loadu_si128((const __m128i *)pw__iq4nl_values), _mm_set1_epi8((char)0x80)));
    __m512i lo[PW__T32G_MR], hi[PW__T32G_MR];
#pragma GCC unroll 10
    for (int r = 0; r < mr; ++r) {
        const pw__q8_32 *xb = (const pw__q8_32 *)x[r];
        lo[r] = hi[r] = _mm512_set1_epi32((nl ? -128 : PW__Q4X_OFFSET(f)) * xb->sum);
    }
#pragma GCC unroll 8
    for (int s = 0; s < 8; ++s) {
        const __m512i v = _mm512_loadu_si512(rec + 64 * s);
        __m512i vl = _mm512_and_si512(v, m);
        __m512i vh = _mm512_and_si512(_mm512_srli_epi16(v, 4), m);
        if (q5) { /* Q5_0, Q5_1 (q5x.h): 16 under the planes' bit s */
            const __m512i bit = _mm512_set1_epi8((char)(1 << s));
            vl = _mm512_mask_add_epi8(vl, _mm512_test_epi8_mask(pl, bit), vl, c16);
            vh = _mm512_mask_add_epi8(vh, _mm512_test_epi8_mask(ph, bit), vh, c16);
        }
        if (nl) {
            vl = _mm512_shuffle_epi8(book, vl);
            vh = _mm512_shuffle_epi8(book, vh);
        }
#pragma GCC unroll 10
        for (int r = 0; r < mr; ++r) {
            const __m512i a = pw__tile32_bcast4(((const pw__q8_32 *)x[r])->qs + 4 * s);
            lo[r] = _mm512_dpbusd_epi32(lo[r], vl, a);
            hi[r] = _mm512_dpbusd_epi32(hi[r], vh, a);
        }
    }
    pw__t32g_scale_min_add(rec + PW__Q4X_SCALES,
                           PW__Q4X_MIN(f) ? rec + PW__Q4X_RECORD_OF(f) - 64 : NULL, x, lo, hi,
                           acc, mr);
}
Q4XG_INLINE void q4x_gemm_block(const uint8_t *rec, const uint8_t *const *x, float acc[][PW__TILE32_NR],
                                const int mr) {
    q4x_gemm_any(rec, x, acc, mr, PW__Q4X_Q4_0);
}
Q4XG_INLINE void q5x_gemm_block(const uint8_t *rec, const uint8_t *const *x, float acc[][PW__TILE32_NR],
                                const int mr) {
    q4x_gemm_any(rec, x, acc, mr, PW__Q4X_Q5_0);
}
Q4XG_INLINE void iq4x_gemm_block(const uint8_t *rec, const uint8_t *const *x, float acc[][PW__TILE32_NR],
                                 const int mr) {
    q4x_gemm_any(rec, x, acc, mr, PW__Q4X_IQ4_NL);
}
Q4XG_INLINE void q41x_gemm_block(const uint8_t *rec, const uint8_t *const *x, float acc[][PW__TILE32_NR],
                                 const int mr) {
    q4x_gemm_any(rec, x, acc, mr, PW__Q4X_Q4_1);
}
Q4XG_INLINE void q51x_gemm_block(const uint8_t *rec, const uint8_t *const *x, float acc[][PW__TILE32_NR],
                                 const int mr) {
    q4x_gemm_any(rec, x, acc, mr, PW__Q4X_Q5_1);
}

#define Q4XG_FEATURES (PW_CPU_AVX512F | PW_CPU_AVX512BW | PW_CPU_AVX512VL | PW_CPU_AVX512VNNI)

/* A family's GEMM over its packed records (pre_##_gemm_block over records of record_
 * bytes) and over input-block-major blocks as they are (records made by fill_: below),
 * and their descriptors: sym_ names the family's kernel (q4_0_q4x32k4 ->
 * q4_0_q4x32k4_gemm_avx512vnni), id_ the format (q4_0_ibm_gemm_avx512vnni). */
#define Q4XG_FAMILY(pre_, sym_, id_, format_, record_, fill_, GEMM_KERNEL_)                      \
    static void pre_##_gemm_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0,      \
                                int64_t i1) {                                                  \
        pw__t32g_run(c, o0, o1, i0, i1, 32, record_, sizeof(pw__q8_32), pre_##_gemm_block);    \
    }                                                                                          \
    const pw__kernel pw__k_##sym_##_gemm_avx512vnni = GEMM_KERNEL_(                            \
        "avx512vnni", Q4XG_FEATURES, pre_##_gemm_run, PW__PRIO_AVX512 + PW__PRIO_GEMM - 1,      \
        PW__T32G_MR);                                                                          \
    static void pre_##_ibm_gemm_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0,  \
                                    int64_t i1) {                                              \
        pw__t32g_run_fill(c, o0, o1, i0, i1, 32, record_, sizeof(pw__q8_32), pre_##_gemm_block, \
                          fill_);                                                              \
    }                                                                                          \
    const pw__kernel pw__k_##id_##_ibm_gemm_avx512vnni = PW__TILE32_IBM_GEMM_KERNEL(           \
        #id_, format_, Q8_32, "avx512vnni", Q4XG_FEATURES, pre_##_ibm_gemm_run,                 \
        PW__PRIO_AVX512 + PW__PRIO_GEMM - 1, PW__T32G_MR);

/*
 * GEMM over input-block-major Q4_0 bytes as they are (the spec's kernel order:
 * block b of rows o, o + 1, ... adjacent). The 32 blocks of a tile's rows at
 * one block column are one record's bytes in another arrangement, so each
 * tile's records of a pass are made from them in an L1 scratch (q4x_fill_ibm)
 * and the panels run q4x_gemm_block over them as over the packed form: the
 * rearrangement, about 100 instructions a record, is spread over every row of
 * X of the pass, as the nibble unpacking is.
 *
 * Record from 32 blocks (row r's nibbles q[r, k]: byte j of its qs holds k = j
 * low, k = j + 16 high), with A_r = row r's 16 qs bytes, B_r = row r + 16's:
 *   E_r = (A_r & 0x0F) | (B_r & 0x0F) << 4      dword s = step s, lane r   (s < 4)
 *   F_r = (A_r >> 4 & 0x0F) | (B_r & 0xF0)       dword s = step s + 4, lane r
 * so the record's steps are the columns of the 16 x 4 dword matrices E and F:
 * with rows 4L + g in 128-bit lane L of register g, one 4 x 4 dword transpose
 * in every lane gives each step's 64 bytes whole. IQ4_NL's blocks are laid out as
 * Q4_0's: the same maker serves them; Q5_0's records are made by
 * pw__q5x_record_from_blocks (portable C).
 */
Q4XG_INLINE void q4x_record_from_blocks(const uint8_t *src, uint8_t *rec) {
    const size_t bb = sizeof(pw__block_q4_0);
    pw__t32f_nibble_steps(src + offsetof(pw__block_q4_0, qs), bb, rec, rec + 256);
    pw__t32f_d_from_blocks(src, (int)bb, rec + PW__Q4X_SCALES);
}

PW__TILE32_IBM_FILL(q4x_fill_ibm, pw__block_q4_0, PW__Q4X_RECORD, q4x_record_from_blocks)
PW__TILE32_IBM_FILL(q5x_fill_ibm, pw__block_q5_0, PW__Q5X_RECORD, pw__q5x_record_from_blocks)
PW__TILE32_IBM_FILL(q41x_fill_ibm, pw__block_q4_1, PW__Q41X_RECORD, pw__q41x_record_from_blocks)
PW__TILE32_IBM_FILL(q51x_fill_ibm, pw__block_q5_1, PW__Q51X_RECORD, pw__q51x_record_from_blocks)

Q4XG_FAMILY(q4x, q4_0_q4x32k4, q4_0, PW_FORMAT_Q4_0, PW__Q4X_RECORD, q4x_fill_ibm,
            PW__Q4X_GEMM_KERNEL)
Q4XG_FAMILY(q5x, q5_0_q5x32k4, q5_0, PW_FORMAT_Q5_0, PW__Q5X_RECORD, q5x_fill_ibm,
            PW__Q5X_GEMM_KERNEL)
Q4XG_FAMILY(iq4x, iq4_nl_iq4x32k4, iq4_nl, PW_FORMAT_IQ4_NL, PW__Q4X_RECORD, q4x_fill_ibm,
            PW__IQ4X_GEMM_KERNEL)
Q4XG_FAMILY(q41x, q4_1_q41x32k4, q4_1, PW_FORMAT_Q4_1, PW__Q41X_RECORD, q41x_fill_ibm,
            PW__Q41X_GEMM_KERNEL)
Q4XG_FAMILY(q51x, q5_1_q51x32k4, q5_1, PW_FORMAT_Q5_1, PW__Q51X_RECORD, q51x_fill_ibm,
            PW__Q51X_GEMM_KERNEL)
