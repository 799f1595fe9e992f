#if !defined(__AVX512F__) || !defined(__AVX512BW__) || !defined(__AVX512VL__) ||            \
    !defined(__AVX512VNNI__) || !defined(__F16C__)
#error "tq1x_avx512.c needs AVX-512 F/BW/VL/VNNI and F16C (the build sets them for *_avx512.c)"
#endif
/*
 * AVX-512 VNNI GEMV and GEMM over the tq1x32k4 family (layout in kernel/tq1x.h):
 * TQ1_0's trit bytes moved so that one 64-byte load holds one dword of 16 rows, its
 * trit k a 4-value k step of those rows. Activations are pw__q8_256 rows; y[i, o] for
 * o in [o0, o1), i in [i0, i1).
 *
 * One load L(g, h) (rows 16h .. 16h + 15), trits k = 0..4 (0..3 at g = 12), with
 * a_k = bcast(x.qs[e0(g, k) .. + 3]):
 *
 *   v_0 = L,  v_{k+1} = v_k + v_k + v_k          (vpaddb x 2: 3 v mod 256)
 *   t_k = [v_k >= 86] + [v_k >= 171]             (tq1x_trit: 4 ops, below)
 *   D_h += dpbusd(t_k, a_k)
 *
 * and per record y_h += f32(D_h - x.sum) * d_h * x.d. Per 64 values (one trit vector
 * of 16 rows): 2 adds, the 4-op trit, 1 dot product, 1 broadcast load: 7 vector ops
 * and 1 load, against about 10 for the row-major kernels' 32 values.
 *
 * Measured (packwise bench --formats TQ1_0 --shapes 11008x4096 --batch 1,128 --threads 1
 * --policy compact,in_place, this project's shared 2-vCPU AMD EPYC Zen 5 VM, load 2-3,
 * two runs; before: the row-major kernel compact ran, in_place in the same runs): GEMV
 * 1.25-1.26 -> 0.51-0.57 ms, 17.5-18.1% -> 40-43% of the read (16.7-18.7 GB/s); with
 * the weight in L2 ([512, 4096] n = 2, the GEMV kernel by --kernel) 0.045-0.048 ms,
 * about 19 GB/s of weight a row of X: compute-bound, warm as cold. GEMM n = 128 162-197
 * -> 18.7-18.8 ms, 7.1-8.0% -> 72-73% of the int8 peak.
 *
 * Integer range: |D_h| <= 256 * 2 * 127 = 65024 (tq1x.h). Rows past `out` in the last
 * tile are zero in the packed bytes; their lanes are computed and not stored.
 *
 * The GEMM (n >= 2) decodes each load's trits once per panel of up to TQ1XG_MR = 8
 * rows of X (tile32_kgemm.h's loop: the record's d decoded once for every panel): 16
 * dot chains, per trit vector 2 + 4 decode ops for mr dot products.
 */
#include "format/blocks.h"
#include "kernel/tile32_kgemm.h"
#include "kernel/tq1x.h"
#include "kernel/x86/tile32_avx512.h"
#include "quant/act.h"

#include <immintrin.h>
#include <stddef.h>
#include <string.h>

#define TQ1X_INLINE static inline __attribute__((always_inline))

/* The leading trits of the 64 bytes v: [v >= 86] + [v >= 171], as min(v -sat 85, 1) plus
 * a masked add of 1 where v >= 171 (4 ops, one compare into a mask). Tried on this
 * machine (AMD EPYC Zen 5, shared 2-core VM, load 3), packwise bench --formats TQ1_0
 * --kernel tq1_0_tq1x32k4_avx512vnni --threads 1, two runs each: [11008, 4096] n = 1
 * (cold) and [512, 4096] n = 2 (the weight in L2): this form 0.50-0.54 ms and 0.045 ms;
 * two compares into masks, a zeroing masked move of 1 and a masked add of 1 (4 ops, two
 * compares) 0.60-0.62 and 0.053-0.054; two saturating subtractions, two min and an add
 * (5 ops, no masks) 0.56 and 0.051-0.052. And the multiply form of tq1x_avx2.c's GEMV
 * (vpmaddubsw by 3 makes the trit and the next fixed point at once, 4 ops per trit
 * vector with the dots, all on the multiply pipes), A/B with this one, two rounds, load
 * 6: cold 0.524-0.530 against 0.485-0.495 ms, warm 0.049-0.050 against 0.048. */
TQ1X_INLINE __m512i tq1x_trit(__m512i v) {
    const __m512i one = _mm512_set1_epi8(1);
    const __m512i a = _mm512_min_epu8(_mm512_subs_epu8(v, _mm512_set1_epi8(85)), one);
    const __mmask64 k2 = _mm512_cmpge_epu8_mask(v, _mm512_set1_epi8((char)171));
    return _mm512_mask_add_epi8(a, k2, a, one);
}

TQ1X_INLINE __m512i tq1x_times3(__m512i v) { return _mm512_add_epi8(v, _mm512_add_epi8(v, v)); }

/* One record with one pw__q8_256 activation block (the record function of
 * tile32_avx512.h). */
TQ1X_INLINE void tq1x_block(const uint8_t *rec, const uint8_t *xbp, int pf, __m512 acc[2]) {
    const pw__q8_256 *xb = (const pw__q8_256 *)xbp;
    __m512i dot[2][5];
    for (int h = 0; h < 2; ++h)
        for (int k = 0; k < 5; ++k) dot[h][k] = _mm512_setzero_si512();
#pragma GCC unroll 13
    for (int g = 0; g < PW__TQ1X_DWORDS; ++g) {
        const uint8_t *grp = rec + PW__TQ1X_GROUP * g;
        if (pf) pw__tile32_prefetch_pf(grp, PW__TQ1X_GROUP, pf);
#pragma GCC unroll 2
        for (int h = 0; h < 2; ++h) {
            __m512i v = _mm512_loadu_si512(grp + 64 * h);
#pragma GCC unroll 5
            for (int k = 0; k < pw__tq1x_trits(g); ++k) {
                const __m512i a = pw__tile32_bcast4(xb->qs + pw__tq1x_e0(g, k));
                dot[h][k] = _mm512_dpbusd_epi32(dot[h][k], tq1x_trit(v), a);
                if (k + 1 < pw__tq1x_trits(g)) v = tq1x_times3(v);
            }
        }
    }
    if (pf) pw__tile32_prefetch_pf(rec + PW__TQ1X_D, PW__TQ1X_RECORD - PW__TQ1X_D, pf);
    const __m512i sum = _mm512_set1_epi32(xb->sum);
    __m512i s[2];
    for (int h = 0; h < 2; ++h)
        s[h] = _mm512_sub_epi32(
            _mm512_add_epi32(_mm512_add_epi32(dot[h][0], dot[h][1]),
                             _mm512_add_epi32(_mm512_add_epi32(dot[h][2], dot[h][3]), dot[h][4])),
            sum);
    pw__tile32_scale_add(acc, s[0], s[1], rec + PW__TQ1X_D, xb->d);
}

static void tq1x_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    pw__tile32_run(c, o0, o1, i0, i1, PW__QK_K, PW__TQ1X_RECORD, sizeof(pw__q8_256), tq1x_block, 1,
                   PW__HW_ZEN4);
}

#define TQ1X_FEATURES (PW_CPU_AVX512F | PW_CPU_AVX512BW | PW_CPU_AVX512VL | PW_CPU_AVX512VNNI)

const pw__kernel pw__k_tq1_0_tq1x32k4_avx512vnni =
    PW__TQ1X_KERNEL("avx512vnni", TQ1X_FEATURES, tq1x_run, PW__PRIO_AVX512 + 2);

/* ---- GEMM ---- */

#define TQ1XG_MR 8 /* most rows of X per panel */

/* One record's d, decoded once for every panel. */
typedef struct tq1xg_rec {
    float d[2][16]; /* [half][row] */
} tq1xg_rec;

static void tq1xg_decode(const uint8_t *rec, void *out) {
    tq1xg_rec *rs = out;
    const __m256i *d = (const __m256i *)(rec + PW__TQ1X_D);
    for (int h = 0; h < 2; ++h) _mm512_store_ps(rs->d[h], _mm512_cvtph_ps(_mm256_loadu_si256(d + h)));
}

/* One record for mr (a constant) rows of X: yb[i][0..31] += their dots. F32 unused (no
 * scale step inside a record). */
TQ1X_INLINE void tq1xg_panel(const uint8_t *rec, const tq1xg_rec *rs, const uint8_t *const *x,
                             float *yb, const uint8_t *pf, const int mr, const int F32) {
    (void)F32;
    __m512i dt[TQ1XG_MR][2];
#pragma GCC unroll 8
    for (int i = 0; i < mr; ++i) dt[i][0] = dt[i][1] = _mm512_setzero_si512();
    for (int g = 0; g < PW__TQ1X_DWORDS; ++g) {
        const uint8_t *grp = rec + PW__TQ1X_GROUP * g;
        if (pf)
            for (int l = 0; l < PW__TQ1X_GROUP; l += 64)
                _mm_prefetch((const char *)(pf + PW__TQ1X_GROUP * g + l), _MM_HINT_T0);
        const int trits = pw__tq1x_trits(g);
#pragma GCC unroll 2
        for (int h = 0; h < 2; ++h) {
            __m512i v = _mm512_loadu_si512(grp + 64 * h);
#pragma GCC unroll 5
            for (int k = 0; k < 5; ++k) {
                if (k >= trits) break;
                const __m512i t = tq1x_trit(v);
                const int e0 = pw__tq1x_e0(g, k);
#pragma GCC unroll 8
                for (int i = 0; i < mr; ++i) {
                    int32_t a4;
                    memcpy(&a4, x[i] + offsetof(pw__q8_256, qs) + e0, 4);
                    dt[i][h] = _mm512_dpbusd_epi32(dt[i][h], t, _mm512_set1_epi32(a4));
                }
                v = tq1x_times3(v);
            }
        }
    }
    if (pf) _mm_prefetch((const char *)(pf + PW__TQ1X_D), _MM_HINT_T0);
#pragma GCC unroll 8
    for (int i = 0; i < mr; ++i) {
        const pw__q8_256 *xb = (const pw__q8_256 *)x[i];
        const __m512i sum = _mm512_set1_epi32(xb->sum);
        const __m512 xd = _mm512_set1_ps(xb->d);
#pragma GCC unroll 2
        for (int h = 0; h < 2; ++h) {
            const __m512 t = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(dt[i][h], sum)),
                                           _mm512_load_ps(rs->d[h]));
            float *y = yb + 32 * i + 16 * h;
            _mm512_store_ps(y, _mm512_fmadd_ps(t, xd, _mm512_load_ps(y)));
        }
    }
}

_Static_assert(TQ1XG_MR == 8, "PW__T32K_PANEL_ANY makes heights 1..8");
PW__T32K_PANEL_ANY(tq1xg_panel_any, tq1xg_panel, tq1xg_rec)

static void tq1xg_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    pw__t32k_run(c, o0, o1, i0, i1, PW__TQ1X_RECORD, TQ1XG_MR, tq1xg_decode, tq1xg_panel_any);
}

const pw__kernel pw__k_tq1_0_tq1x32k4_gemm_avx512vnni = PW__TQ1X_GEMM_KERNEL(
    "avx512vnni", TQ1X_FEATURES, tq1xg_run, PW__PRIO_AVX512 + PW__PRIO_GEMM - 1, TQ1XG_MR);

/* GEMM over input-block-major TQ1_0 bytes as they are: the loop above over records made
 * one at a time in an L1 buffer from the 32 blocks of a tile's column
 * (pw__t32k_run_fill; pw__tq1x_record_from_blocks, portable C). */
PW__TILE32_IBM_FILL(tq1xg_fill_ibm, pw__block_tq1_0, PW__TQ1X_RECORD, pw__tq1x_record_from_blocks)

static void tq1xg_ibm_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    pw__t32k_run_fill(c, o0, o1, i0, i1, PW__TQ1X_RECORD, TQ1XG_MR, tq1xg_decode, tq1xg_panel_any,
                      tq1xg_fill_ibm);
}

const pw__kernel pw__k_tq1_0_ibm_gemm_avx512vnni = PW__TILE32_IBM_GEMM_KERNEL(
    "tq1_0", PW_FORMAT_TQ1_0, Q8_256, "avx512vnni", TQ1X_FEATURES, tq1xg_ibm_run,
    PW__PRIO_AVX512 + PW__PRIO_GEMM - 1, TQ1XG_MR);
