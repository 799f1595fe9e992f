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
 * 16h + 15, the tile32_avx2.h sums acc[q], q = 2h + p.
 *
 * GEMV: the trits by multiplication. vpmaddubsw of the bytes v with the words 3 (low
 * byte 3, high 0) gives per 16-bit lane E = 3 b (b the even byte): its high byte is
 * (3 b) >> 8, the trit, its low byte 3 b mod 256, the next trit's fixed point; with
 * the words 3 << 8, O = 3 b' of the odd byte b' alike. The next trit is vpmaddubsw of E
 * (O) with the words 3 again (its low byte times 3, the trit times 0): no masks and no
 * compares. The trit bytes sit at the odd bytes of E and O, so they meet activations
 * at the odd bytes, zeros at the even ones: xe = x.qs << 8 (16-bit: byte 2i + 1 is
 * qs[2i]), xo = x.qs & 0xFF00, made once per record. Per ymm and trit k, with
 * ae_k, ao_k = bcast(xe, xo [e0(g, k) .. + 3]):
 *
 *   E_0 = maddubs(v, 3), O_0 = maddubs(v, 3 << 8);  E_{k+1} = maddubs(E_k, 3), O alike
 *   AVX-VNNI  D += dpbusd(E_k, ae_k) + dpbusd(O_k, ao_k)      (int32 per row)
 *   AVX2      D += maddubs(E_k, ae_k) + maddubs(O_k, ao_k)    (int16: each lane t x,
 *             at most 2 * 128 = 256, the low byte times 0; widened (vpmaddwd by 1)
 *             after dwords 0..6 and again after 7..12: at most 35 trits add up in a
 *             lane, 8960, exact)
 *   acc_q += f32(D - x.sum) * d * x.d       per record
 *
 * 4 ops per ymm and trit (AVX2: 6), against 8 (9) for the compare form the GEMM's
 * decode uses below (tq1xa_trit: min(v -sat 85, 1) + min(v -sat 170, 1), then 2 adds
 * for the next trit, then the dot): A/B on [11008, 4096] n = 1 (cold) and [512,
 * 4096] n = 2 (warm, --kernel), two runs each, load 6: AVX-VNNI 1.01-1.04 -> 0.89-0.90
 * ms cold, 0.092-0.102 -> 0.084-0.087 warm; AVX2 1.13 -> 1.01 cold, 0.113-0.114 ->
 * 0.090-0.102 warm. (At 512 bits the compare form wins: tq1x_avx512.c.)
 *
 * GEMM (tile32_kgemm.h, one record for a panel of rows of X): decode makes each
 * record's trits once for every panel (the loop decodes a record once per row block of
 * up to 64 rows of X), 256 ymm of bytes 0..2 in the loop's scratch, [dword g][trit
 * k][q]; then one row of X at a time runs through them with its four sums in
 * registers, the trits read from L1 as memory operands: per trit k of a dword one
 * broadcast and four dots (AVX2: maddubs, pairs at most 2 * 2 * 128 = 512, and an int16
 * add, widened after 7 dwords: at most 35 trits a lane, 17920, exact).
 *
 * Rows past `out` in the last tile are zero in the packed bytes; their lanes are
 * computed and not stored.
 *
 * Measured (packwise bench --formats TQ1_0 --shapes 11008x4096 --batch 1,128 --threads 1
 * --policy compact,in_place, the shared 2-vCPU AMD EPYC Zen 5 VM, load 2-3, two runs;
 * before: the row-major kernel of the level, in_place in the same runs): AVX-VNNI GEMV
 * 1.24-1.37 -> 0.90-1.00 ms (17-21% -> 24% of the read), n = 128 160-185 -> 46-55 ms
 * (15-16% -> 51-58% of the level's int8 peak); AVX2 GEMV 1.40-1.47 -> 0.99-1.14 ms
 * (15-16% -> 21-22%), n = 128 181-194 -> 48-60 ms (16% -> 63%). The GEMV stays
 * compute-bound at 256 bits (warm about as fast as cold, above).
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
TQ1XA_INLINE void tq1xa_dwords(const uint8_t *rec, const int8_t *xe, const int8_t *xo, int pf,
                               int g0, int g1, __m256i S[4]) {
    const __m256i c30 = _mm256_set1_epi16(3), c03 = _mm256_set1_epi16(3 << 8);
    __m256i D[4][2];
    for (int q = 0; q < 4; ++q) D[q][0] = D[q][1] = _mm256_setzero_si256();
#pragma GCC unroll 7
    for (int g = g0; g < g1; ++g) {
        const uint8_t *grp = rec + PW__TQ1X_GROUP * g;
        if (pf) pw__tile32_prefetch_pf(grp, PW__TQ1X_GROUP, pf);
#pragma GCC unroll 4
        for (int q = 0; q < 4; ++q) {
            const __m256i v = _mm256_loadu_si256((const __m256i *)(grp + 32 * q));
            __m256i E = _mm256_maddubs_epi16(v, c30), O = _mm256_maddubs_epi16(v, c03);
#pragma GCC unroll 5
            for (int k = 0; k < pw__tq1x_trits(g); ++k) {
                const int e0 = pw__tq1x_e0(g, k);
                D[q][0] = tq1xa_dot(D[q][0], E, pw__t32a_bcast4(xe + e0));
                D[q][1] = tq1xa_dot(D[q][1], O, pw__t32a_bcast4(xo + e0));
                if (k + 1 < pw__tq1x_trits(g)) {
                    E = _mm256_maddubs_epi16(E, c30);
                    O = _mm256_maddubs_epi16(O, c30);
                }
            }
        }
    }
    for (int q = 0; q < 4; ++q) S[q] = tq1xa_widen_add(tq1xa_widen_add(S[q], D[q][0]), D[q][1]);
}

/* GEMV record function (tile32_avx2.h). */
TQ1XA_INLINE void tq1xa_block(const uint8_t *rec, const uint8_t *xbp, int pf, __m256 acc[4]) {
    const pw__q8_256 *xb = (const pw__q8_256 *)xbp;
    _Alignas(32) int8_t xe[256], xo[256];
    for (int i = 0; i < 256; i += 32) {
        const __m256i x = _mm256_loadu_si256((const __m256i *)(xb->qs + i));
        _mm256_store_si256((__m256i *)(xe + i), _mm256_slli_epi16(x, 8));
        _mm256_store_si256((__m256i *)(xo + i), _mm256_and_si256(x, _mm256_set1_epi16((short)0xFF00)));
    }
    const __m256i sum = _mm256_set1_epi32(xb->sum);
    __m256i S[4];
    for (int q = 0; q < 4; ++q) S[q] = _mm256_sub_epi32(_mm256_setzero_si256(), sum);
    tq1xa_dwords(rec, xe, xo, pf, 0, 7, S);
    tq1xa_dwords(rec, xe, xo, pf, 7, PW__TQ1X_DWORDS, S);
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
