#if !defined(__AVX2__) || !defined(__FMA__) || !defined(__F16C__)
#error "tq1x_avx2.c needs AVX2, FMA and F16C (the build sets them for *_avx2.c and *_avxvnni.c)"
#endif
/*
 * AVX2 and AVX-VNNI GEMV and GEMM over the tq1x32k4 family (layout in
 * kernel/tq1x.h): the bytes the AVX-512 kernels read, so a weight packed (or a cache
 * file written) on an AVX-512 machine serves these levels as it is. The loops are
 * tile32_avx2.h's (GEMV) and tile32_kgemm.h's (GEMM, record-major); this file is the
 * record functions, built twice (avx2_level.h: as itself, and through
 * tq1x_avxvnni.c). Activations are pw__q8_256 rows.
 *
 * A 64-byte load L(g, h) is two ymm: p = 0 rows 16h .. 16h + 7, p = 1 rows 16h + 8 ..
 * 16h + 15, the tile32_avx2.h sums acc[q], q = 2h + p. Per ymm v and trit k, with
 * a_k = bcast(x.qs[e0(g, k) .. + 3]):
 *
 *   t_k = min(v_k -sat 85, 1) + min(v_k -sat 170, 1)    ([v >= 86] + [v >= 171]: 5 ops;
 *         AVX2 has no compare into masks, and its signed compares need the bytes
 *         flipped first)
 *   v_{k+1} = v_k + v_k + v_k
 *   AVX-VNNI  D += dpbusd(t_k, a_k)                       (int32)
 *   AVX2      D += maddubs(t_k, a_k)                      (int16 pair sums: a pair is
 *             at most 2 * 2 * 128 = 512; D is widened (vpmaddwd by 1) after dwords
 *             0..6 and again after 7..12, so at most 35 products (the GEMM's 7 dwords
 *             x 5 trits) add up in one int16 lane: 35 * 512 = 17920, exact)
 *   acc_q += f32(D - x.sum) * d * x.d       per record
 *
 * GEMM (tile32_kgemm.h, one record for a panel of rows of X): decode makes each
 * record's trits once for every panel (the loop decodes a record once per row block of
 * up to 64 rows of X), 256 ymm of bytes 0..2 in the loop's scratch, [dword g][trit
 * k][q]; then one row of X at a time runs through them with its four sums in
 * registers, the trits read from L1 as memory operands: per trit k of a dword one
 * broadcast and four dots (AVX2: maddubs and an int16 add, widened as in the GEMV).
 *
 * Rows past `out` in the last tile are zero in the packed bytes; their lanes are
 * computed and not stored.
 *
 * Measured (packwise bench --formats TQ1_0 --shapes 11008x4096 --batch 1,128 --threads 1
 * --policy compact,in_place, the shared 2-vCPU AMD EPYC Zen 5 VM, load 3-4, two runs;
 * before: the row-major kernel of the level in the same runs): AVX-VNNI GEMV 1.21-1.33
 * -> 1.00-1.01 ms (7.2-7.9 -> 9.4-9.5 GB/s), n = 128 158-166 -> 42-45 ms; AVX2 GEMV
 * 1.37-1.39 -> 1.12-1.13 ms (6.9 -> 8.5 GB/s), n = 128 174-181 -> 48 ms. The GEMV is
 * compute-bound: about 9 ops per 32 values at 256 bits (2 adds, the 5-op trit, the dot,
 * the broadcast).
 */
#include "format/blocks.h"
#include "kernel/tile32_kgemm.h"
#include "kernel/tq1x.h"
#include "kernel/x86/tile32_avx2.h"
#include "quant/act.h"

#include <stddef.h>
#include <string.h>

#define TQ1XA_INLINE static inline __attribute__((always_inline))

#define TQ1XA_FEATURES PW__AVX2_FEATURES(PW_CPU_AVX2 | PW_CPU_FMA | PW_CPU_F16C)

/* The leading trits of the 32 bytes v. */
TQ1XA_INLINE __m256i tq1xa_trit(__m256i v) {
    const __m256i one = _mm256_set1_epi8(1);
    const __m256i a = _mm256_min_epu8(_mm256_subs_epu8(v, _mm256_set1_epi8(85)), one);
    const __m256i b = _mm256_min_epu8(_mm256_subs_epu8(v, _mm256_set1_epi8((char)170)), one);
    return _mm256_add_epi8(a, b);
}

TQ1XA_INLINE __m256i tq1xa_times3(__m256i v) { return _mm256_add_epi8(v, _mm256_add_epi8(v, v)); }

/* D plus the dot of trits t with activations a: int32 (AVX-VNNI) or int16 pairs. */
TQ1XA_INLINE __m256i tq1xa_dot(__m256i d, __m256i t, __m256i a) {
    if (PW__VNNI) return pw__dpbusd(d, t, a);
    return _mm256_add_epi16(d, _mm256_maddubs_epi16(t, a));
}

/* S plus D as int32 (AVX2: D's int16 pairs summed). */
TQ1XA_INLINE __m256i tq1xa_widen_add(__m256i s, __m256i d) {
    if (PW__VNNI) return _mm256_add_epi32(s, d);
    return _mm256_add_epi32(s, _mm256_madd_epi16(d, _mm256_set1_epi16(1)));
}

/* Dwords [g0, g1) of a record with activation block xb into S[q] (rows 8q..8q+7). */
TQ1XA_INLINE void tq1xa_dwords(const uint8_t *rec, const pw__q8_256 *xb, int pf, int g0, int g1,
                               __m256i S[4]) {
    __m256i D[4][2];
    for (int q = 0; q < 4; ++q) D[q][0] = D[q][1] = _mm256_setzero_si256();
#pragma GCC unroll 7
    for (int g = g0; g < g1; ++g) {
        const uint8_t *grp = rec + PW__TQ1X_GROUP * g;
        if (pf) pw__tile32_prefetch_pf(grp, PW__TQ1X_GROUP, pf);
#pragma GCC unroll 4
        for (int q = 0; q < 4; ++q) {
            __m256i v = _mm256_loadu_si256((const __m256i *)(grp + 32 * q));
#pragma GCC unroll 5
            for (int k = 0; k < pw__tq1x_trits(g); ++k) {
                const __m256i a = pw__t32a_bcast4(xb->qs + pw__tq1x_e0(g, k));
                D[q][k & 1] = tq1xa_dot(D[q][k & 1], tq1xa_trit(v), a);
                if (k + 1 < pw__tq1x_trits(g)) v = tq1xa_times3(v);
            }
        }
    }
    for (int q = 0; q < 4; ++q) S[q] = tq1xa_widen_add(tq1xa_widen_add(S[q], D[q][0]), D[q][1]);
}

/* GEMV record function (tile32_avx2.h). */
TQ1XA_INLINE void tq1xa_block(const uint8_t *rec, const uint8_t *xbp, int pf, __m256 acc[4]) {
    const pw__q8_256 *xb = (const pw__q8_256 *)xbp;
    const __m256i sum = _mm256_set1_epi32(xb->sum);
    __m256i S[4];
    for (int q = 0; q < 4; ++q) S[q] = _mm256_sub_epi32(_mm256_setzero_si256(), sum);
    tq1xa_dwords(rec, xb, pf, 0, 7, S);
    tq1xa_dwords(rec, xb, pf, 7, PW__TQ1X_DWORDS, S);
    if (pf) pw__tile32_prefetch_pf(rec + PW__TQ1X_D, PW__TQ1X_RECORD - PW__TQ1X_D, pf);
    const __m256 xd = _mm256_set1_ps(xb->d);
#pragma GCC unroll 4
    for (int q = 0; q < 4; ++q)
        acc[q] = _mm256_fmadd_ps(
            _mm256_mul_ps(_mm256_cvtepi32_ps(S[q]), pw__t32a_f16x8(rec + PW__TQ1X_D + 16 * q)), xd,
            acc[q]);
}

static void tq1xa_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    pw__t32a_run(c, o0, o1, i0, i1, 256, PW__TQ1X_RECORD, sizeof(pw__q8_256), tq1xa_block, 1,
                 PW__HW_ZEN4);
}

const pw__kernel PW__AVX2_SYM(pw__k_tq1_0_tq1x32k4) =
    PW__TQ1X_KERNEL(PW__AVX2_ISA, TQ1XA_FEATURES, tq1xa_run, PW__AVX2_PRIO + 2);

/* ---- GEMM ---- */

#define TQ1XA_MR 6 /* rows of X per panel (PW__T32K_MR_MAX); a row at a time inside */

/* One record decoded once for every panel: its trits as bytes, [dword g][trit k][q]
 * (k = 4 of g = 12 unused), and d. */
typedef struct tq1xa_rec {
    __m256i t[PW__TQ1X_DWORDS][5][4];
    float d[32];
} tq1xa_rec;
_Static_assert(sizeof(tq1xa_rec) <= PW__T32K_SCRATCH, "tq1xa_rec fits the loop's scratch");

static void tq1xa_decode(const uint8_t *rec, void *out) {
    tq1xa_rec *rs = out;
    for (int g = 0; g < PW__TQ1X_DWORDS; ++g)
        for (int q = 0; q < 4; ++q) {
            __m256i v = _mm256_loadu_si256((const __m256i *)(rec + PW__TQ1X_GROUP * g + 32 * q));
            for (int k = 0; k < pw__tq1x_trits(g); ++k) {
                _mm256_store_si256(&rs->t[g][k][q], tq1xa_trit(v));
                v = tq1xa_times3(v);
            }
        }
    for (int q = 0; q < 4; ++q)
        _mm256_store_ps(rs->d + 8 * q, pw__t32a_f16x8(rec + PW__TQ1X_D + 16 * q));
}

/* Dwords [g0, g1) of the decoded record with one row of X into S[q]. */
TQ1XA_INLINE void tq1xa_row_dwords(const tq1xa_rec *rs, const pw__q8_256 *xb, int g0, int g1,
                                   __m256i S[4]) {
    __m256i D[4] = {_mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256(),
                    _mm256_setzero_si256()};
    for (int g = g0; g < g1; ++g)
#pragma GCC unroll 5
        for (int k = 0; k < 5; ++k) {
            if (k >= pw__tq1x_trits(g)) break;
            const __m256i a = pw__t32a_bcast4(xb->qs + pw__tq1x_e0(g, k));
#pragma GCC unroll 4
            for (int q = 0; q < 4; ++q) D[q] = tq1xa_dot(D[q], rs->t[g][k][q], a);
        }
    for (int q = 0; q < 4; ++q) S[q] = tq1xa_widen_add(S[q], D[q]);
}

/* One row of X over the decoded record: y[0..31] += its dots. */
TQ1XA_INLINE void tq1xa_row(const tq1xa_rec *rs, const pw__q8_256 *xb, float *y) {
    const __m256i sum = _mm256_set1_epi32(xb->sum);
    __m256i S[4];
    for (int q = 0; q < 4; ++q) S[q] = _mm256_sub_epi32(_mm256_setzero_si256(), sum);
    tq1xa_row_dwords(rs, xb, 0, 7, S);
    tq1xa_row_dwords(rs, xb, 7, PW__TQ1X_DWORDS, S);
    const __m256 xd = _mm256_set1_ps(xb->d);
    for (int q = 0; q < 4; ++q) {
        const __m256 t = _mm256_mul_ps(_mm256_cvtepi32_ps(S[q]), _mm256_load_ps(rs->d + 8 * q));
        _mm256_store_ps(y + 8 * q, _mm256_fmadd_ps(t, xd, _mm256_load_ps(y + 8 * q)));
    }
}

/* One record for mr rows of X: yb[i][0..31] += their dots; the next record into L1
 * (which the next decode reads), its lines spread over the panel's rows. */
static void tq1xa_panel(const uint8_t *rec, const void *rs, const uint8_t *const *x, float *yb,
                        const uint8_t *pf, int mr) {
    (void)rec;
    const int lines = (PW__TQ1X_RECORD / 64 + mr - 1) / mr;
    for (int i = 0; i < mr; ++i) {
        if (pf)
            for (int l = 64 * lines * i; l < 64 * lines * (i + 1) && l < PW__TQ1X_RECORD; l += 64)
                _mm_prefetch((const char *)(pf + l), _MM_HINT_T0);
        tq1xa_row((const tq1xa_rec *)rs, (const pw__q8_256 *)x[i], yb + 32 * i);
    }
}

static void tq1xa_gemm_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    pw__t32k_run(c, o0, o1, i0, i1, PW__TQ1X_RECORD, TQ1XA_MR, tq1xa_decode, tq1xa_panel);
}

const pw__kernel PW__AVX2_SYM(pw__k_tq1_0_tq1x32k4_gemm) = PW__TQ1X_GEMM_KERNEL(
    PW__AVX2_ISA, TQ1XA_FEATURES, tq1xa_gemm_run, PW__AVX2_PRIO + PW__PRIO_GEMM - 1, TQ1XA_MR);

/* GEMM over input-block-major TQ1_0 bytes as they are: the loop above over records made
 * one at a time from a column's blocks (pw__tq1x_record_from_blocks, portable C). */
PW__TILE32_IBM_FILL(tq1xa_fill_ibm, pw__block_tq1_0, PW__TQ1X_RECORD, pw__tq1x_record_from_blocks)

static void tq1xa_ibm_gemm_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    pw__t32k_run_fill(c, o0, o1, i0, i1, PW__TQ1X_RECORD, TQ1XA_MR, tq1xa_decode, tq1xa_panel,
                      tq1xa_fill_ibm);
}

const pw__kernel PW__AVX2_SYM(pw__k_tq1_0_ibm_gemm) = PW__TILE32_IBM_GEMM_KERNEL(
    "tq1_0", PW_FORMAT_TQ1_0, Q8_256, PW__AVX2_ISA, TQ1XA_FEATURES, tq1xa_ibm_gemm_run,
    PW__AVX2_PRIO + PW__PRIO_GEMM - 1, TQ1XA_MR);
