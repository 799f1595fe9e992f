#if !defined(__AVX512F__) || !defined(__AVX512BW__) || !defined(__AVX512VL__) ||            \
    !defined(__AVX512VNNI__) || !defined(__F16C__)
#error "q4kx_gemm_avx512.c needs AVX-512 F/BW/VL/VNNI and F16C (cmake sets them for *_avx512.c)"
#endif
/*
 * AVX-512 VNNI GEMM over the q4kx32k4 family (layout in kernel/q4kx.h): the
 * GEMV form, at the file's size, serving n >= 2 too. A record's nibbles are
 * unpacked in registers once per panel of up to Q4KXG_MR = 8 rows of X, its
 * scales and mins decoded once per record for all panels (the loop is
 * x86/tile32_kgemm.h's). Activations are pw__q8_256 rows.
 *
 * One record (4608 bytes: 32 rows x 256 values), one panel of mr rows of X;
 * sub-block t = 0..7 is steps s = 8t .. 8t+7:
 *
 *   v_s = bytes [64s, 64s + 64)                lane r: row r (lo), r + 16 (hi)
 *   lo = v_s & 0x0F, hi = (v_s >> 4) & 0x0F    3 ops per step for 2 x 8 rows of X
 *   a_i = bcast(x_i.qs[4s .. 4s+3])            one load per row of X
 *   D[i][0] += dpbusd(lo, a_i), D[i][1] += dpbusd(hi, a_i)    16 chains (mr = 8)
 *   end of sub-block: S[i][h] += D[i][h] * sc_t[h]    (vpmulld)
 *   end of record:    M[i][h] = sum_k dpwssd([m_2k, m_2k+1], [b_2k, b_2k+1] of x_i)
 *                     yb[i][h] += (f32(S) * d - f32(M) * dmin) * x_i.d
 *
 * where b_t is the sum of x_i's 32 activations of sub-block t (from bsums).
 * The nibble is the unsigned side of vpdpbusd and the activation the signed
 * side, so no offset or correction term is needed; the mins enter once per
 * record and row. Integer range (|qs| <= 127): |D| <= 32 * 15 * 127, |S| <=
 * 8 * 63 * 60960 < 2^25; |M| <= 8 * 63 * 4064.
 *
 * Measured choices (2-core shared VM, AMD EPYC: vpdpbusd about 4 cycles'
 * latency, 2 per cycle; a micro-benchmark of one record and panel in L1 and
 * the whole kernel with the weight in L2, A/B in one process, 5 runs each):
 *   - 32 rows (both nibbles of a load) x 8 rows of X: 16 independent dot
 *     chains, each unpacked vector used by 8 vpdpbusd, each broadcast by 2.
 *     16 chains and 16 sums S do not fit in 32 registers: the compiler keeps
 *     5 of the sums on the stack, as fast as (0-1%) all 16 in a 1 KB buffer;
 *     6 rows of X per panel ran 2% slower.
 *   - activations broadcast straight from their rows (5% faster than copying
 *     a panel's qs into a contiguous buffer first).
 *   - the first panel of a record prefetches the next record into L1: without
 *     it n = 16 ran at 0.7x of the i8g kernel, with it 1.2-1.3x.
 *   - the scale decode (pw__q4kx_scales_mins, vpermw to int32 lanes) costs
 *     about 8% of one 8-row panel, so it runs once per record.
 *
 * Against q4_k_i8g32_avx512vnni (2.4x the bytes), same process, rounds
 * interleaved, 1 thread, median of 7-11 rounds' ratios [range]: [4096, 4096]
 * n = 16, 32, 128: 1.35 [1.28, 1.64], 1.30 [1.27, 1.51], 1.20 [1.17, 1.26]
 * (577, 574, 544 GFLOP/s); [11008, 4096]: 1.62 [1.60, 1.74], 1.28 [1.18,
 * 1.32], 1.23 [1.19, 1.27].
 *
 * On Intel cores (base/cpu.c's pw__x86_intel) the scale step is in f32: facc +=
 * f32(D) * (sc_t * d), sc_t * d decoded once per record (exact in f32: 6 x 11 bits),
 * and at the end of the record yb += (facc - f32(M) * dmin) * x_i.d: a conversion and
 * an fma in place of a vpmulld (two operations there) and an add, on a core where the
 * two 512-bit ports run every vector operation. One process, both paths in turn (best
 * of 10 calls, 9-15 rounds, median of the per-round ratio), an Intel Xeon VM (Sapphire
 * Rapids class), 1 thread: [2048, 4096] n = 128 1.08x, [11008, 4096] n = 128 1.07x,
 * [4096, 4096] n = 16 1.08x. Elsewhere the int32 step stays (the Q6_K kernel measured
 * f32 4% slower on the AMD VM, q6kx_gemm_avx512.c). test_kernels checks both paths on
 * any machine (it flips the flag).
 *
 * Q5_K (the q5kx32k4 family, kernel/q5kx.h) runs the same loop on records of 5632
 * bytes, their first 4608 decoded as Q4_K's: per step, lo and hi each take 16 under a
 * byte mask of bit 4 (vptestmb of the sub-block's bit plane and a masked vpaddb each,
 * for all mr rows of X).
 * |D| <= 32 * 31 * 127, |S| <= 8 * 63 * 125984 < 2^26.
 *
 * Rows past `out` in the last tile are zero in the packed bytes; their sums
 * are computed and not stored.
 */
#include "format/blocks.h"
#include "kernel/q4kx.h"
#include "kernel/q5kx.h"
#include "kernel/x86/q4kx_avx512.h"
#include "kernel/x86/tile32_avx512.h"
#include "kernel/x86/tile32_fill_avx512.h"
#include "kernel/tile32_kgemm.h"

#include <immintrin.h>
#include <stddef.h>
#include <string.h>

#define Q4KXG_INLINE static inline __attribute__((always_inline))

#define Q4KXG_MR 8 /* most rows of X per panel */

#define Q4KXG_FEATURES (PW_CPU_AVX512F | PW_CPU_AVX512BW | PW_CPU_AVX512VL | PW_CPU_AVX512VNNI)

/* One record's scales, decoded once for every panel: [half][..][row] (half 0: rows 0..15). */
typedef struct q4kxg_rec {
    int32_t sc[2][8][16]; /* sub-block t's 6-bit scale, zero-extended */
    float scd[2][8][16];  /* the same times d, as f32 (exact: 6 x 11 bits) */
    int32_t mn[2][4][16]; /* words [min 2k, min 2k+1] */
    float d[2][16], dmin[2][16];
} q4kxg_rec;
_Static_assert(sizeof(q4kxg_rec) <= PW__T32K_SCRATCH, "q4kxg_rec fits the loop's scratch");

static void q4kxg_decode(const uint8_t *rec, void *out) {
    q4kxg_rec *rs = out;
    for (int h = 0; h < 2; ++h) {
        __m512i sc[4], mn[4];
        pw__q4kx_scales_mins(rec + PW__Q4KX_SCALES + 192 * h, sc, mn);
        for (int k = 0; k < 4; ++k) {
            _mm512_store_si512(rs->sc[h][2 * k],
                               _mm512_cvtepu16_epi32(_mm512_castsi512_si256(sc[k])));
            _mm512_store_si512(rs->sc[h][2 * k + 1],
                               _mm512_cvtepu16_epi32(_mm512_extracti64x4_epi64(sc[k], 1)));
            _mm512_store_si512(rs->mn[h][k], pw__q4kx_min_pair(mn[k]));
        }
        const __m256i *d = (const __m256i *)(rec + PW__Q4KX_D);
        const __m256i *dmin = (const __m256i *)(rec + PW__Q4KX_DMIN);
        _mm512_store_ps(rs->d[h], _mm512_cvtph_ps(_mm256_loadu_si256(d + h)));
        for (int t = 0; t < 8; ++t)
            _mm512_store_ps(rs->scd[h][t], _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_load_si512(rs->sc[h][t])),
                                                         _mm512_load_ps(rs->d[h])));
        _mm512_store_ps(rs->dmin[h], _mm512_cvtph_ps(_mm256_loadu_si256(dmin + h)));
    }
}

/* One record for mr (a constant) rows of X: yb[i][0..31] += their dots. F32 (a constant):
 * each sub-block's scale step in f32 (cvt, fma by scale * d) instead of int32 (vpmulld,
 * add; f32 and d once per record), the choice on Intel cores (the file's header). */
Q4KXG_INLINE void k4xg_panel(const uint8_t *rec, const q4kxg_rec *rs, const uint8_t *const *x,
                             float *yb, const uint8_t *pf, const int mr, const int F32,
                             const int q5) {
    const int chunk = (q5 ? PW__Q5KX_RECORD : PW__Q4KX_RECORD) / 8;
    /* the activations' sub-block sums in pairs, as words [b_2k, b_2k+1] */
    int32_t pairs[Q4KXG_MR][4] __attribute__((aligned(16)));
    for (int i = 0; i < mr; ++i) {
        const pw__q8_256 *xb = (const pw__q8_256 *)x[i];
        const __m256i bs = _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)xb->bsums),
                                             _mm256_set1_epi16(1));
        _mm_store_si128((__m128i *)pairs[i], _mm_packs_epi32(_mm256_castsi256_si128(bs),
                                                             _mm256_extracti128_si256(bs, 1)));
    }
    __m512i sacc[Q4KXG_MR][2];
    __m512 facc[Q4KXG_MR][2];
#pragma GCC unroll 8
    for (int i = 0; i < mr; ++i) {
        sacc[i][0] = sacc[i][1] = _mm512_setzero_si512();
        facc[i][0] = facc[i][1] = _mm512_setzero_ps();
    }
    const __m512i m0f = _mm512_set1_epi8(0x0F), c16 = _mm512_set1_epi8(16);
    for (int t = 0; t < 8; ++t) {
        if (pf)
            for (int l = 0; l < chunk; l += 64)
                _mm_prefetch((const char *)(pf + chunk * t + l), _MM_HINT_T0);
        const __m512i bl = q5 ? _mm512_loadu_si512(rec + PW__Q5KX_BITS + 128 * t) : m0f;
        const __m512i bh = q5 ? _mm512_loadu_si512(rec + PW__Q5KX_BITS + 128 * t + 64) : m0f;
        __m512i dt[Q4KXG_MR][2];
#pragma GCC unroll 8
        for (int i = 0; i < mr; ++i) dt[i][0] = dt[i][1] = _mm512_setzero_si512();
#pragma GCC unroll 8
        for (int u = 0; u < 8; ++u) {
            const int s = 8 * t + u;
            const __m512i v = _mm512_loadu_si512(rec + 64 * s);
            __m512i lo = _mm512_and_si512(v, m0f);
            __m512i hi = _mm512_and_si512(_mm512_srli_epi16(v, 4), m0f);
            if (q5) { /* bit 4 as 16 under masks from the bit planes (q5kx.h) */
                const __m512i bit = _mm512_set1_epi8((char)(1 << u));
                const __mmask64 kl = _mm512_test_epi8_mask(bl, bit), kh = _mm512_test_epi8_mask(bh, bit);
                lo = _mm512_mask_add_epi8(lo, kl, lo, c16);
                hi = _mm512_mask_add_epi8(hi, kh, hi, c16);
            }
#pragma GCC unroll 8
            for (int i = 0; i < mr; ++i) {
                int32_t a4;
                memcpy(&a4, x[i] + offsetof(pw__q8_256, qs) + 4 * s, 4);
                const __m512i a = _mm512_set1_epi32(a4);
                dt[i][0] = _mm512_dpbusd_epi32(dt[i][0], lo, a);
                dt[i][1] = _mm512_dpbusd_epi32(dt[i][1], hi, a);
            }
        }
#pragma GCC unroll 2
        for (int h = 0; h < 2; ++h)
            pw__t32k_scale_step(dt, h, rs->scd[h][t], rs->sc[h][t], facc, sacc, mr, F32);
    }
#pragma GCC unroll 2
    for (int h = 0; h < 2; ++h) {
        const __m512 d = _mm512_load_ps(rs->d[h]), dmin = _mm512_load_ps(rs->dmin[h]);
#pragma GCC unroll 8
        for (int i = 0; i < mr; ++i) {
            __m512i m = _mm512_setzero_si512();
            for (int k = 0; k < 4; ++k)
                m = _mm512_dpwssd_epi32(m, _mm512_load_si512(rs->mn[h][k]),
                                        _mm512_set1_epi32(pairs[i][k]));
            const __m512 s = F32 ? facc[i][h] : _mm512_mul_ps(_mm512_cvtepi32_ps(sacc[i][h]), d);
            const __m512 f = _mm512_fnmadd_ps(_mm512_cvtepi32_ps(m), dmin, s);
            const __m512 xd = _mm512_set1_ps(((const pw__q8_256 *)x[i])->d);
            float *y = yb + 32 * i + 16 * h;
            _mm512_store_ps(y, _mm512_fmadd_ps(f, xd, _mm512_load_ps(y)));
        }
    }
}

Q4KXG_INLINE void q4kxg_panel(const uint8_t *rec, const q4kxg_rec *rs, const uint8_t *const *x,
                              float *yb, const uint8_t *pf, const int mr, const int F32) {
    k4xg_panel(rec, rs, x, yb, pf, mr, F32, 0);
}
Q4KXG_INLINE void q5kxg_panel(const uint8_t *rec, const q4kxg_rec *rs, const uint8_t *const *x,
                              float *yb, const uint8_t *pf, const int mr, const int F32) {
    k4xg_panel(rec, rs, x, yb, pf, mr, F32, 1);
}

_Static_assert(Q4KXG_MR == 8, "PW__T32K_PANEL_ANY makes heights 1..8");
PW__T32K_PANEL_ANY(q4kxg_panel_any, q4kxg_panel, q4kxg_rec)
PW__T32K_PANEL_ANY(q5kxg_panel_any, q5kxg_panel, q4kxg_rec)

static void q4kxg_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    pw__t32k_run(c, o0, o1, i0, i1, PW__Q4KX_RECORD, Q4KXG_MR, q4kxg_decode, q4kxg_panel_any);
}

const pw__kernel pw__k_q4_k_q4kx32k4_gemm_avx512vnni = PW__Q4KX_GEMM_KERNEL(
    "avx512vnni", Q4KXG_FEATURES, q4kxg_run, PW__PRIO_AVX512 + PW__PRIO_GEMM - 1, Q4KXG_MR);

/* Q5_K's records (q5kx.h): their first 4608 bytes decode as Q4_K's. */
static void q5kxg_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    pw__t32k_run(c, o0, o1, i0, i1, PW__Q5KX_RECORD, Q4KXG_MR, q4kxg_decode, q5kxg_panel_any);
}

const pw__kernel pw__k_q5_k_q5kx32k4_gemm_avx512vnni = PW__Q5KX_GEMM_KERNEL(
    "avx512vnni", Q4KXG_FEATURES, q5kxg_run, PW__PRIO_AVX512 + PW__PRIO_GEMM - 1, Q4KXG_MR);

/*
 * GEMM over input-block-major Q4_K bytes as they are: the loop above over records
 * made one at a time in an L1 buffer from the 32 blocks of a tile's column
 * (pw__t32k_run_fill), as q4_0_ibm_gemm_avx512vnni does for Q4_0 (q4x_gemm_avx512.c,
 * whose comment derives the nibble merge). Each 16 qs bytes of a row (chunk C: the
 * 64-value chunk C / 2, half C % 2) give steps 16 (C / 2) + 4 (C % 2) + 0..3 from their
 * low nibbles and 8 steps later from their high ones. The first 16 bytes of each block
 * (d, dmin and the 12 scale bytes) of 16 rows are transposed in registers: a 4 x 4
 * dword transpose per lane, then per dword column an in-lane byte shuffle and a dword
 * permute (record byte 4224 + 192 h + 16 i + r % 16 = scale byte i of row 16 h + r % 16),
 * or for d and dmin a word shuffle and a qword permute. The first maker gathered them
 * (8 vpgatherdd a record); an IBM GEMV that made a record for one row of X
 * (q4_k_ibm_gemv_avx512vnni, 0.2) spent most of its time in them.
 */
/* Q4_K's (bb 144, qs_at 16) or Q5_K's (176, 48) first 4608 record bytes. */
Q4KXG_INLINE void k4x_record_from_blocks(const uint8_t *src, uint8_t *rec, const size_t bb,
                                         const size_t qs_at) {
    for (int ch = 0; ch < 8; ++ch) {
        const int s0 = 16 * (ch / 2) + 4 * (ch % 2);
        pw__t32f_nibble_steps(src + qs_at + 16 * ch, bb, rec + 64 * s0,
                              rec + 64 * (s0 + 8));
    }
    /* in each 128-bit lane (rows 4L..4L+3): byte j of the four rows together */
    const __m512i bytes = _mm512_broadcast_i32x4(
        _mm_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15));
    /* then dword j of every lane together: dword k takes lane k % 4's dword k / 4 */
    const __m512i dwords = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    /* the first 16 bytes of each block (d, dmin, the 12 scale bytes), 16 rows at a time:
     * four rows per register (lane L: row 4L + g), then the 4 x 4 dword transpose of
     * every lane, which makes col[c] lane L the dword c of rows 4L .. 4L+3 */
    const __m512i words = _mm512_broadcast_i32x4(
        _mm_setr_epi8(0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15));
    for (int h = 0; h < 2; ++h) {
        const uint8_t *rows = src + (size_t)16 * h * bb;
        __m512i col[4];
        pw__t32f_rows16(rows, bb, col);
        /* col[0]: the d and dmin words of each lane's rows together, then the lanes' d
         * (qwords 0, 2, 4, 6) before their dmin */
        const __m512i dd = _mm512_permutexvar_epi64(_mm512_setr_epi64(0, 2, 4, 6, 1, 3, 5, 7),
                                                    _mm512_shuffle_epi8(col[0], words));
        _mm256_store_si256((__m256i *)(rec + PW__Q4KX_D + 32 * h), _mm512_castsi512_si256(dd));
        _mm256_store_si256((__m256i *)(rec + PW__Q4KX_DMIN + 32 * h), _mm512_extracti64x4_epi64(dd, 1));
        for (int i4 = 0; i4 < 3; ++i4)
            _mm512_store_si512((__m512i *)(rec + PW__Q4KX_SCALES + 192 * h + 64 * i4),
                               _mm512_permutexvar_epi32(dwords, _mm512_shuffle_epi8(col[1 + i4], bytes)));
    }
}

static void q4kx_record_from_blocks(const uint8_t *src, uint8_t *rec) {
    k4x_record_from_blocks(src, rec, sizeof(pw__block_q4_K), offsetof(pw__block_q4_K, qs));
}

/* Q5_K: the first 4608 bytes as Q4_K's, then the bit planes (portable C: 32 rows x 4
 * multiplies x 8 planes, small beside the record's GEMM work). */
static void q5kx_record_from_blocks(const uint8_t *src, uint8_t *rec) {
    k4x_record_from_blocks(src, rec, sizeof(pw__block_q5_K), offsetof(pw__block_q5_K, qs));
    pw__q5kx_planes_from_blocks(src, rec);
}

PW__TILE32_IBM_FILL(q4kxg_fill_ibm, pw__block_q4_K, PW__Q4KX_RECORD, q4kx_record_from_blocks)
PW__TILE32_IBM_FILL(q5kxg_fill_ibm, pw__block_q5_K, PW__Q5KX_RECORD, q5kx_record_from_blocks)

static void q4kxg_ibm_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    pw__t32k_run_fill(c, o0, o1, i0, i1, PW__Q4KX_RECORD, Q4KXG_MR, q4kxg_decode, q4kxg_panel_any,
                      q4kxg_fill_ibm);
}

const pw__kernel pw__k_q4_k_ibm_gemm_avx512vnni = PW__TILE32_IBM_GEMM_KERNEL(
    "q4_k", PW_FORMAT_Q4_K, Q8_256, "avx512vnni", Q4KXG_FEATURES, q4kxg_ibm_run,
    PW__PRIO_AVX512 + PW__PRIO_GEMM - 1, Q4KXG_MR);

static void q5kxg_ibm_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    pw__t32k_run_fill(c, o0, o1, i0, i1, PW__Q5KX_RECORD, Q4KXG_MR, q4kxg_decode, q5kxg_panel_any,
                      q5kxg_fill_ibm);
}

const pw__kernel pw__k_q5_k_ibm_gemm_avx512vnni = PW__TILE32_IBM_GEMM_KERNEL(
    "q5_k", PW_FORMAT_Q5_K, Q8_256, "avx512vnni", Q4KXG_FEATURES, q5kxg_ibm_run,
    PW__PRIO_AVX512 + PW__PRIO_GEMM - 1, Q4KXG_MR);
