#if !defined(__AVX512F__) || !defined(__AVX512BW__) || !defined(__AVX512VL__) ||            \
    !defined(__AVX512VNNI__) || !defined(__F16C__)
#error "q4kx_avx512.c needs AVX-512 F/BW/VL/VNNI and F16C (the build sets them for *_avx512.c)"
#endif
/*
 * AVX-512 VNNI GEMV over the q4kx32k4 family (layout in kernel/q4kx.h): Q4_K
 * with its bytes rearranged so that one 64-byte load is one 4-value k step
 * of all 32 rows of a tile. Activations are pw__q8_256 rows (d, s8 qs, sums
 * per 16); y[i, o] for o in [o0, o1), i in [i0, i1) (n > 1 repeats the tile
 * per row of X: GEMM speed comes from the i8g kernels).
 *
 * One block record (4608 bytes) of a tile, one row of X; sub-block t = 0..7:
 *
 *   v_s = bytes [64s, 64s + 64)      s = 8t .. 8t+7; lane r: rows r (lo), r+16 (hi)
 *   a_s = bcast(x.qs[4s .. 4s+3])
 *   lo_t  = sum_s dpbusd(v_s & 0x0F, a_s)           rows 0..15
 *   all_t = sum_s dpbusd(v_s, a_s)                  q[r] + 16 q[r+16], unmasked
 *   ilo  += lo_t * sc_t[0..15]
 *   ihi  += (all_t - lo_t) * sc_t[16..31]           16 x rows 16..31, exact
 *   mins: m_t[row] * bsum_t, two sub-blocks per vpdpwssd (words [m_t, m_t+1]
 *         against the broadcast pair [bsum_t, bsum_t+1])
 *   acc += (f32(ilo or ihi >> 4) * d - f32(msum) * dmin) * x.d   per 16 rows
 *
 * The 12 packed scale bytes of 16 rows lie byte-major (16 rows of byte 0,
 * then of byte 1, ...): 6 zero-extending loads and 20 word operations decode
 * the 6-bit scales and mins of 16 rows and all sub-blocks as words (sc[k],
 * mn[k]: sub-blocks 2k and 2k+1). One vpermw with a zeroing mask then widens
 * one sub-block's 16 row scales to int32 lanes for vpmulld, or puts two
 * sub-blocks' mins of a row side by side for vpdpwssd.
 *
 * Per 64-byte load: one mask, two vpdpbusd and a broadcast load; per record
 * (32 blocks of the file) about 550 vector instructions, 128 of them the
 * dot products and 72 prefetches. With the weight in L2 (512 x 4096, one
 * thread) it runs at about 54 GB/s where the row-major kernel runs at 27: a
 * cold GEMV is a stream from memory that the core must keep up with, and
 * arithmetic time per byte shows in it even when the weight is far from the
 * caches. Integer range (|x.qs| <= 127): |lo_t| <= 32 * 15 * 127, |all_t -
 * lo_t| <= 32 * 240 * 127, so |ihi| <= 8 * 63 * 975360 < 2^29; |msum| <= 8 *
 * 63 * 4064.
 *
 * Rows past `out` in the last tile are zero in the packed bytes; their lanes
 * are computed and not stored (masked stores), so edge tiles take the same path.
 *
 * Tiles lie one after another, so a thread's range is one linear stream. Each
 * sub-block prefetches one eighth of a record (576 bytes, 9 lines) further on
 * (pw__tile32_prefetch, tile32_prefetch.h), so that every line of the stream is
 * prefetched once.
 *
 * Q5_K (the q5kx32k4 family, kernel/q5kx.h) runs the same code on records of 5632
 * bytes (704 bytes, 11 lines, a sub-block): a 5-bit value does not fit beside another
 * in a byte, so each step masks both nibbles and adds 16 under byte masks of bit 4
 * (vptestmb of the sub-block's two bit planes, loaded once, against the step's bit;
 * vpaddb with a mask), then one vpdpbusd each for rows 0..15 and 16..31: ihi needs
 * no shift. |lo_t|, |hi_t| <= 32 * 31 * 127, |ihi| <= 8 * 63 * 125984
 * < 2^26.
 */
#include "format/blocks.h"
#include "kernel/q4kx.h"
#include "kernel/q5kx.h"
#include "kernel/x86/q4kx_avx512.h"
#include "kernel/x86/tile32_avx512.h"

#define Q4KX_INLINE static inline __attribute__((always_inline))

/* Prefetch, measured here on an earlier session's machine (the distances are tile32_prefetch.h's
 * now): L2 alone at 8 and 12 KiB measured the same, 4 KiB 3-5% of the read bandwidth
 * less; one prefetch per 128 or 256 bytes (leaving the rest to the L2 streamer)
 * 3-8% less; L2 16 KiB + L1 2 KiB, GEMV [11008, 4096] cold, 1 / 2 threads:
 * 1.52-1.59 / 0.82-0.84 ms against 1.59-1.67 / 0.87-0.89 for L2 8 KiB alone. */
/* Each sub-block prefetches an eighth of the record (k4x_block's chunk). */

/* sum_t m_t * bsum_t of 16 rows as int32 lanes, from their mins mn
 * (pw__q4kx_scales_mins) and pairs[k] = the words [bsum_2k, bsum_2k+1] in every dword. */
Q4KX_INLINE __m512i q4kx_min_dot(const __m512i mn[4], const __m512i pairs[4]) {
    __m512i m = _mm512_setzero_si512();
    for (int k = 0; k < 4; ++k) m = _mm512_dpwssd_epi32(m, pw__q4kx_min_pair(mn[k]), pairs[k]);
    return m;
}

/* One record with one pw__q8_256 activation block (the record function of
 * tile32_avx512.h): its dots, each sub-block prefetching an eighth of the record
 * further on. The record is read in address order: the 64 steps (each sub-block's
 * two dots kept, 16 zmm), then d and dmin, then the scales that weigh the kept dots.
 * Read the other way (the scales at the record's end first, then its start), Zen 4's
 * hardware prefetcher kept a cold weight streaming at about three quarters of the read
 * bandwidth: one build switched at run time (not in the tree), packwise bench --formats
 * Q4_K --shapes 11008x4096,4096x4096 --batch 1 --threads 1,2, three rounds in turn,
 * fraction of the read, 1 thread: 71.4-76.9% (scales first) against 84.8-90.2%
 * (address order); 2 threads 74.0-85.1 against 80.5-90.7. The same from L2 ([512, 4096],
 * a scratch build that skips the flush): 58.7-59.5 GB/s against 58.8-59.9, the
 * arithmetic the same. Prefetching the next record's scales ahead in the old order (8
 * lines, into L1 or L2) did not help: 66-76%. */
Q4KX_INLINE void k4x_block(const uint8_t *rec, const uint8_t *xbp, int pf, __m512 acc[2],
                           const int q5) {
    const pw__q8_256 *xb = (const pw__q8_256 *)xbp;
    const __m512i m0f = _mm512_set1_epi8(0x0F), c16 = _mm512_set1_epi8(16);
    const __m512i iota = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
    const int chunk = (q5 ? PW__Q5KX_RECORD : PW__Q4KX_RECORD) / 8;

    /* dot[0][t]: rows 0..15 of sub-block t (low nibbles); dot[1][t]: 16 x rows 16..31
     * (Q4_K), rows 16..31 (Q5_K: each nibble masked, its bit 4 added as 16 under the
     * step's byte mask, q5kx.h; a 5-bit value does not fit beside another in a byte) */
    __m512i dot[2][8];
#pragma GCC unroll 8
    for (int t = 0; t < 8; ++t) {
        if (pf) pw__tile32_prefetch_pf(rec + chunk * t, chunk, pf);
        __m512i lo = _mm512_setzero_si512(), all = _mm512_setzero_si512();
        const __m512i bl = q5 ? _mm512_loadu_si512(rec + PW__Q5KX_BITS + 128 * t) : m0f;
        const __m512i bh = q5 ? _mm512_loadu_si512(rec + PW__Q5KX_BITS + 128 * t + 64) : m0f;
#pragma GCC unroll 8
        for (int s = 8 * t; s < 8 * t + 8; ++s) {
            const __m512i v = _mm512_loadu_si512(rec + 64 * s);
            const __m512i a = pw__tile32_bcast4(xb->qs + 4 * s);
            if (q5) { /* bit s % 8 of the sub-block's planes: the step's bytes' bit 4 */
                const __m512i bit = _mm512_set1_epi8((char)(1 << (s % 8)));
                const __mmask64 kl = _mm512_test_epi8_mask(bl, bit), kh = _mm512_test_epi8_mask(bh, bit);
                const __m512i l = _mm512_and_si512(v, m0f);
                const __m512i h = _mm512_and_si512(_mm512_srli_epi16(v, 4), m0f);
                lo = _mm512_dpbusd_epi32(lo, _mm512_mask_add_epi8(l, kl, l, c16), a);
                all = _mm512_dpbusd_epi32(all, _mm512_mask_add_epi8(h, kh, h, c16), a);
            } else {
                lo = _mm512_dpbusd_epi32(lo, _mm512_and_si512(v, m0f), a);
                all = _mm512_dpbusd_epi32(all, v, a);
            }
        }
        dot[0][t] = lo;
        dot[1][t] = q5 ? all : _mm512_sub_epi32(all, lo);
    }
    const __m256i *d = (const __m256i *)(rec + PW__Q4KX_D);
    const __m256i *dmin = (const __m256i *)(rec + PW__Q4KX_DMIN);
    const __m512 dh[2] = {_mm512_cvtph_ps(_mm256_loadu_si256(d)),
                          _mm512_cvtph_ps(_mm256_loadu_si256(d + 1))};
    const __m512 mh[2] = {_mm512_cvtph_ps(_mm256_loadu_si256(dmin)),
                          _mm512_cvtph_ps(_mm256_loadu_si256(dmin + 1))};

    /* bsum_t = sum of sub-block t's 32 activations (|.| <= 4064: a word); pair k of
     * words [bsum_2k, bsum_2k+1] is dword k % 2 of 128-bit lane k / 2 after the pack */
    const __m256i bs = _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)xb->bsums),
                                         _mm256_set1_epi16(1));
    const __m512i bw = _mm512_castsi256_si512(_mm256_packs_epi32(bs, bs));
    __m512i pairs[4];
    for (int k = 0; k < 4; ++k)
        pairs[k] = _mm512_permutexvar_epi32(_mm512_set1_epi32(4 * (k / 2) + k % 2), bw);
    const __m512 xd = _mm512_set1_ps(xb->d);
#pragma GCC unroll 2
    for (int h = 0; h < 2; ++h) { /* rows 16h .. 16h + 15 */
        __m512i sc[4], mn[4];
        pw__q4kx_scales_mins(rec + PW__Q4KX_SCALES + 192 * h, sc, mn);
        __m512i is = _mm512_setzero_si512();
#pragma GCC unroll 8
        for (int t = 0; t < 8; ++t) {
            /* row r's scale of sub-block t, zero-extended to dword r: word 16 (t % 2) + r
             * of sc[t / 2] */
            const __m512i at = _mm512_add_epi32(iota, _mm512_set1_epi32(16 * (t % 2)));
            const __m512i sct = _mm512_maskz_permutexvar_epi16(0x55555555u, at, sc[t / 2]);
            is = _mm512_add_epi32(is, _mm512_mullo_epi32(dot[h][t], sct));
        }
        if (h == 1 && !q5) is = _mm512_srai_epi32(is, 4);
        const __m512 f = _mm512_fnmadd_ps(_mm512_cvtepi32_ps(q4kx_min_dot(mn, pairs)), mh[h],
                                          _mm512_mul_ps(_mm512_cvtepi32_ps(is), dh[h]));
        acc[h] = _mm512_fmadd_ps(f, xd, acc[h]);
    }
}

Q4KX_INLINE void q4kx_block(const uint8_t *rec, const uint8_t *xbp, int pf, __m512 acc[2]) {
    k4x_block(rec, xbp, pf, acc, 0);
}
Q4KX_INLINE void q5kx_block(const uint8_t *rec, const uint8_t *xbp, int pf, __m512 acc[2]) {
    k4x_block(rec, xbp, pf, acc, 1);
}

/* Zen 4 streams these records without software prefetch (hw = 1, tile32_avx512.h). */
static void q4kx_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    pw__tile32_run(c, o0, o1, i0, i1, PW__QK_K, PW__Q4KX_RECORD, sizeof(pw__q8_256), q4kx_block,
                   1, PW__HW_ZEN4);
}

/* Q5_K's records (q5kx.h) as Q4_K's are read. */
static void q5kx_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    pw__tile32_run(c, o0, o1, i0, i1, PW__QK_K, PW__Q5KX_RECORD, sizeof(pw__q8_256), q5kx_block,
                   1, PW__HW_ZEN4);
}

const pw__kernel pw__k_q4_k_q4kx32k4_avx512vnni = PW__Q4KX_KERNEL(
    "avx512vnni", PW_CPU_AVX512F | PW_CPU_AVX512BW | PW_CPU_AVX512VL | PW_CPU_AVX512VNNI, q4kx_run,
    PW__PRIO_AVX512 + 2);
const pw__kernel pw__k_q5_k_q5kx32k4_avx512vnni = PW__Q5KX_KERNEL(
    "avx512vnni", PW_CPU_AVX512F | PW_CPU_AVX512BW | PW_CPU_AVX512VL | PW_CPU_AVX512VNNI, q5kx_run,
    PW__PRIO_AVX512 + 2);
