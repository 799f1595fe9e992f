#if !defined(__AVX2__) || !defined(__FMA__) || !defined(__F16C__)
#error "tq2x_avx2.c needs AVX2, FMA and F16C (the build sets them for *_avx2.c and *_avxvnni.c)"
#endif
/*
 * AVX2 and AVX-VNNI GEMV and GEMM over the tq2x32k4 family (layout in
 * kernel/tq2x.h): the bytes the AVX-512 kernels read, so a weight packed (or a
 * cache file written) on an AVX-512 machine serves these levels as it is. The
 * loops are tile32_avx2.h's (GEMV; GEMM with the f32 sums in L1, kernel/tile32_gemm.h);
 * this file is the record functions, built twice (avx2_level.h: as itself, and
 * through tq2x_avxvnni.c). Activations are pw__q8_256 rows.
 *
 * A 64-byte load P_k of a sub-block is two ymm: half h = 0 (bytes 0..31) holds
 * rows 0..7 (bits 0-3) and 16..23 (bits 4-7), half h = 1 rows 8..15 and 24..31;
 * the tile32_avx2.h sums acc[g] are rows 8g..8g+7, so half h feeds groups g = h
 * and g = 2 + h. With q_u = P_u (u = 0, 1) or P_(u-2) >> 2 (u = 2, 3) and
 * a_u = bcast(x.qs[16s + 4u .. +3]), over the whole block (no sub-block scales):
 *
 *   AVX-VNNI  L += dpbusd(q_u & 0x03, a_u), W += dpbusd(q_u & 0x33, a_u) (whole
 *             bytes, as the AVX-512 GEMV: lo = L, hi = (W - L) >> 4, L starting at
 *             -x.sum and W at -17 x.sum), two chains each per half (32 long)
 *   AVX2      D_A += maddubs(q_u & 0x03, a_u), D_B += maddubs((q_u >> 4) & 0x03, a_u)
 *             in int16: a pair sum is at most 2 * 3 * 127 = 762 in magnitude (a trit
 *             t <= 3, the activation quantizer clamps to [-127, 127]), so 32 steps
 *             (8 sub-blocks) sum to at most 24384 < 2^15: exact; then widened by
 *             vpmaddwd with ones into int32 sums that start at -x.sum, twice per
 *             record (the whole-byte sum W does not fit int16: a byte is up to 51)
 *   acc[g] += f32(dot[g]) * d[8g .. 8g + 7] * x.d      per record
 *   |dot| <= 256 * 3 * 127 + 256 * 128 < 2^18, W's lanes < 2^23: exact in int32 and f32.
 *
 * GEMM: the same per row of X for a panel of up to 4 rows (PW__T32AG_MR), each half's
 * steps unpacked (A = q_u & 0x03, B = (q_u >> 4) & 0x03) once per panel, two sums per
 * row of X (int32 chains at AVX-VNNI; int16 over 8 sub-blocks then widened at AVX2).
 *
 * Rows past `out` in the last tile are zero in the packed bytes; their lanes are
 * computed and not stored.
 *
 * Measured (packwise bench --formats TQ2_0 --shapes 11008x4096 --batch 1,128 --threads 1
 * --policy compact,in_place, the shared 2-vCPU Zen 5 VM, load 3, single runs; before:
 * the row-major kernel of the level in the same run): AVX-VNNI GEMV 0.72 -> 0.36-0.39 ms
 * (37% -> 70-75% of the read), n = 128 72.3 -> 53.0 ms (36% -> 58% of the level's int8
 * peak); AVX2 GEMV 1.05 -> 0.44 ms (29% -> 57-59%), n = 128 122 -> 69.7 ms (31% ->
 * 48%). The GEMV reads two streams (tile32_avx2.h): AVX-VNNI 0.55 ms (59%) with one,
 * AVX2 alike with one or two (about 60 vector ops a sub-block: compute-bound there).
 * Two more runs at load 4-4.7 (same order): AVX-VNNI GEMV 55-58% (row-major 36%), GEMM
 * 62-71% (24-28%); AVX2 GEMV 44-53% (34-39%), GEMM 52-60% (30-31%).
 */
#include "format/blocks.h"
#include "kernel/tq2x.h"
#include "kernel/x86/tile32_avx2.h"

#include <stddef.h>
#include <string.h>

#define TQ2XA_INLINE static inline __attribute__((always_inline))

/* Step u of half h's loads p0, p1: q_u (the trits of rows 8h + lane in bits 0-1, of
 * rows 16 + 8h + lane in bits 4-5). */
TQ2XA_INLINE __m256i tq2xa_step(__m256i p0, __m256i p1, int u) {
    const __m256i q = u % 2 ? p1 : p0;
    return u >= 2 ? _mm256_srli_epi16(q, 2) : q;
}

/* AVX2: the int16 pair sums of 32 steps widened to int32 and added to s. */
TQ2XA_INLINE __m256i tq2xa_widen(__m256i s, __m256i d16) {
    return _mm256_add_epi32(s, _mm256_madd_epi16(d16, _mm256_set1_epi16(1)));
}

/* GEMV record function (tile32_avx2.h). */
TQ2XA_INLINE void tq2xa_block(const uint8_t *rec, const uint8_t *xbp, int pf, __m256 acc[4]) {
    const pw__q8_256 *xb = (const pw__q8_256 *)xbp;
    const __m256i m03 = _mm256_set1_epi8(0x03), m33 = _mm256_set1_epi8(0x33);
    const __m256i z = _mm256_setzero_si256(), neg = _mm256_set1_epi32(-xb->sum);
    /* AVX-VNNI: [h][k] L and W of half h, the chain of load k; AVX2: dot[g] */
    __m256i l[2][2] = {{neg, z}, {neg, z}};
    __m256i w[2][2] = {{_mm256_set1_epi32(-17 * xb->sum), z}, {_mm256_set1_epi32(-17 * xb->sum), z}};
    __m256i dot[4] = {neg, neg, neg, neg};
#pragma GCC unroll 1
    for (int c = 0; c < 2; ++c) { /* AVX2: 8 sub-blocks, 32 steps, the int16 bound */
        __m256i d16[4] = {z, z, z, z};
#pragma GCC unroll 2
        for (int s = 8 * c; s < 8 * c + 8; ++s) {
            const uint8_t *sub = rec + PW__TQ2X_SUB * s;
            if (pf) pw__tile32_prefetch_pf(sub, PW__TQ2X_SUB, pf);
#pragma GCC unroll 2
            for (int h = 0; h < 2; ++h) {
                const __m256i p0 = _mm256_loadu_si256((const __m256i *)(sub + 32 * h));
                const __m256i p1 = _mm256_loadu_si256((const __m256i *)(sub + 64 + 32 * h));
#pragma GCC unroll 4
                for (int u = 0; u < 4; ++u) {
                    const __m256i q = tq2xa_step(p0, p1, u);
                    const __m256i a = pw__t32a_bcast4(xb->qs + 16 * s + 4 * u);
                    const __m256i ta = _mm256_and_si256(q, m03);
                    if (PW__VNNI) {
                        l[h][u % 2] = pw__dpbusd(l[h][u % 2], ta, a);
                        w[h][u % 2] = pw__dpbusd(w[h][u % 2], _mm256_and_si256(q, m33), a);
                    } else {
                        const __m256i tb = _mm256_and_si256(_mm256_srli_epi16(q, 4), m03);
                        d16[h] = _mm256_add_epi16(d16[h], _mm256_maddubs_epi16(ta, a));
                        d16[2 + h] = _mm256_add_epi16(d16[2 + h], _mm256_maddubs_epi16(tb, a));
                    }
                }
            }
        }
        if (!PW__VNNI)
#pragma GCC unroll 4
            for (int g = 0; g < 4; ++g) dot[g] = tq2xa_widen(dot[g], d16[g]);
    }
    if (PW__VNNI)
#pragma GCC unroll 2
        for (int h = 0; h < 2; ++h) {
            dot[h] = _mm256_add_epi32(l[h][0], l[h][1]);
            dot[2 + h] = _mm256_srai_epi32(
                _mm256_sub_epi32(_mm256_add_epi32(w[h][0], w[h][1]), dot[h]), 4);
        }
    if (pf) pw__tile32_prefetch_pf(rec + PW__TQ2X_D, PW__TQ2X_RECORD - PW__TQ2X_D, pf);
    const __m256 xd = _mm256_set1_ps(xb->d);
#pragma GCC unroll 4
    for (int g = 0; g < 4; ++g)
        acc[g] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot[g]),
                                 _mm256_mul_ps(pw__t32a_f16x8(rec + PW__TQ2X_D + 16 * g), xd), acc[g]);
}

static void tq2xa_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    pw__t32a_run(c, o0, o1, i0, i1, PW__QK_K, PW__TQ2X_RECORD, sizeof(pw__q8_256), tq2xa_block, 2,
                 PW__HW_ZEN4);
}

/* GEMM record function (tile32_avx2.h): half h of every sub-block (rows 8h..8h+7 and
 * 16 + 8h..) unpacked once for the panel's mr rows. */
TQ2XA_INLINE void tq2xa_gemm_block(const uint8_t *rec, const uint8_t *const *x,
                                   float acc[][PW__TILE32_NR], const int mr) {
    const __m256i m03 = _mm256_set1_epi8(0x03);
#pragma GCC unroll 1
    for (int h = 0; h < 2; ++h) {
        __m256i lo[PW__T32AG_MR], hi[PW__T32AG_MR];
#pragma GCC unroll 4
        for (int r = 0; r < mr; ++r)
            lo[r] = hi[r] = _mm256_set1_epi32(-((const pw__q8_256 *)x[r])->sum);
#pragma GCC unroll 1
        for (int c = 0; c < 2; ++c) { /* AVX2: 8 sub-blocks in int16 (the file's comment) */
            __m256i l16[PW__T32AG_MR], h16[PW__T32AG_MR];
#pragma GCC unroll 4
            for (int r = 0; r < mr; ++r) l16[r] = h16[r] = _mm256_setzero_si256();
#pragma GCC unroll 1
            for (int s = 8 * c; s < 8 * c + 8; ++s) {
                const uint8_t *sub = rec + PW__TQ2X_SUB * s + 32 * h;
                const __m256i p0 = _mm256_loadu_si256((const __m256i *)sub);
                const __m256i p1 = _mm256_loadu_si256((const __m256i *)(sub + 64));
#pragma GCC unroll 4
                for (int u = 0; u < 4; ++u) {
                    const __m256i q = tq2xa_step(p0, p1, u);
                    const __m256i ta = _mm256_and_si256(q, m03);
                    const __m256i tb = _mm256_and_si256(_mm256_srli_epi16(q, 4), m03);
#pragma GCC unroll 4
                    for (int r = 0; r < mr; ++r) {
                        const __m256i a =
                            pw__t32a_bcast4(((const pw__q8_256 *)x[r])->qs + 16 * s + 4 * u);
                        if (PW__VNNI) {
                            lo[r] = pw__dpbusd(lo[r], ta, a);
                            hi[r] = pw__dpbusd(hi[r], tb, a);
                        } else {
                            l16[r] = _mm256_add_epi16(l16[r], _mm256_maddubs_epi16(ta, a));
                            h16[r] = _mm256_add_epi16(h16[r], _mm256_maddubs_epi16(tb, a));
                        }
                    }
                }
            }
            if (!PW__VNNI)
#pragma GCC unroll 4
                for (int r = 0; r < mr; ++r) {
                    lo[r] = tq2xa_widen(lo[r], l16[r]);
                    hi[r] = tq2xa_widen(hi[r], h16[r]);
                }
        }
        const __m256 dl = pw__t32a_f16x8(rec + PW__TQ2X_D + 16 * h);
        const __m256 dh = pw__t32a_f16x8(rec + PW__TQ2X_D + 32 + 16 * h);
#pragma GCC unroll 4
        for (int r = 0; r < mr; ++r) {
            const __m256 xd = _mm256_set1_ps(((const pw__q8_256 *)x[r])->d);
            float *a0 = acc[r] + 8 * h, *a1 = acc[r] + 16 + 8 * h;
            _mm256_store_ps(a0, _mm256_fmadd_ps(_mm256_cvtepi32_ps(lo[r]), _mm256_mul_ps(dl, xd),
                                                _mm256_load_ps(a0)));
            _mm256_store_ps(a1, _mm256_fmadd_ps(_mm256_cvtepi32_ps(hi[r]), _mm256_mul_ps(dh, xd),
                                                _mm256_load_ps(a1)));
        }
    }
}

static void tq2xa_gemm_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    pw__t32ag_run(c, o0, o1, i0, i1, PW__QK_K, PW__TQ2X_RECORD, sizeof(pw__q8_256), tq2xa_gemm_block);
}

const pw__kernel PW__AVX2_SYM(pw__k_tq2_0_tq2x32k4) =
    PW__TQ2X_KERNEL(PW__AVX2_ISA, PW__AVX2_FEATURES(PW_CPU_AVX2 | PW_CPU_FMA | PW_CPU_F16C),
                    tq2xa_run, PW__AVX2_PRIO + 2);

const pw__kernel PW__AVX2_SYM(pw__k_tq2_0_tq2x32k4_gemm) = PW__TQ2X_GEMM_KERNEL(
    PW__AVX2_ISA, PW__AVX2_FEATURES(PW_CPU_AVX2 | PW_CPU_FMA | PW_CPU_F16C), tq2xa_gemm_run,
    PW__AVX2_PRIO + PW__PRIO_GEMM - 1, PW__T32AG_MR);

/* GEMM over input-block-major TQ2_0 bytes as they are: the loop above over records made
 * from a column's blocks (pw__tq2x_record_from_blocks, portable C). */
PW__TILE32_IBM_FILL(tq2xa_fill_ibm, pw__block_tq2_0, PW__TQ2X_RECORD, pw__tq2x_record_from_blocks)

static void tq2xa_ibm_gemm_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    pw__t32ag_run_fill(c, o0, o1, i0, i1, PW__QK_K, PW__TQ2X_RECORD, sizeof(pw__q8_256),
                       tq2xa_gemm_block, tq2xa_fill_ibm);
}

const pw__kernel PW__AVX2_SYM(pw__k_tq2_0_ibm_gemm) = PW__TILE32_IBM_GEMM_KERNEL(
    "tq2_0", PW_FORMAT_TQ2_0, Q8_256, PW__AVX2_ISA,
    PW__AVX2_FEATURES(PW_CPU_AVX2 | PW_CPU_FMA | PW_CPU_F16C), tq2xa_ibm_gemm_run,
    PW__AVX2_PRIO + PW__PRIO_GEMM - 1, PW__T32AG_MR);
