#if !defined(__AVX512F__) || !defined(__AVX512BW__) || !defined(__AVX512VL__) ||            \
    !defined(__AVX512VNNI__) || !defined(__F16C__)
#error "q2kx_gemm_avx512.c needs AVX-512 F/BW/VL/VNNI and F16C (cmake sets them for *_avx512.c)"
#endif
/*
 * AVX-512 VNNI GEMM over the q2kx32k4 family (layout in kernel/q2kx.h): the
 * GEMV form, at the file's size, serving n >= 2 too. A record's 2-bit quants
 * are unpacked in registers once per panel of up to Q2KXG_MR = 8 rows of X,
 * its scales, mins, d and dmin decoded once per record for all panels (the
 * loop is tile32_kgemm.h's, as for Q4_K and Q6_K). Activations are pw__q8_256
 * rows.
 *
 * One sub-block s (128 bytes, 16 values of 32 rows), one panel of mr rows of X:
 *
 *   q_0 = P_0, q_1 = P_1, q_2 = P_0 >> 2, q_3 = P_1 >> 2
 *   A = q_u & 0x03 (row r),  B = (q_u >> 4) & 0x03 (row r + 16)   per step, all mr rows
 *   D[i][h] = sum_u dpbusd(A or B, a_i,u)
 *   S[i][h] += D[i][h] * scale[s][h]          (vpmulld; f32 fma by scale * d on Intel)
 *   end of record, per row of X: M[i][h] = sum_t dpwssd(m pair t of half h,
 *     bcast(bsums[2t], bsums[2t + 1])) (the mins of sub-blocks 2t, 2t + 1 as the
 *     two words of a dword), then
 *   yb[i][h] += (f32(S[i][h]) * d[h] - f32(M[i][h]) * dmin[h]) * x_i.d
 *
 * Per sub-block 2 loads and 14 logic ops for 8 dot products per row of X (64 at
 * mr = 8); per record and row of X 16 more for the mins. Integer range (|qs| <=
 * 127): |D| <= 16 * 3 * 127 = 6096, |S| <= 16 * 15 * 6096 < 2^21, |M| <= 16 * 15 *
 * 2048 < 2^19. The panel is q3kx/q6kx_gemm_avx512.c's (16 dot chains, the scale step
 * every sub-block, the next record prefetched by the first panel).
 *
 * Rows past `out` in the last tile are zero in the packed bytes; their sums
 * are computed and not stored.
 *
 * Measured (the shared AMD EPYC VM, single runs, 1 thread): [11008, 4096] n = 128
 * 21.2 ms, 60-62% of the int8 peak, where the row-major kernel compact ran before takes
 * 116 ms (11%) and the i8g16 kernel (5.3x the bytes) 24.7 ms (53%); [4096, 4096] n = 2
 * and 4: 0.247 and 0.351 ms against the row-major kernel's 0.644 and 1.273.
 */
#include "format/blocks.h"
#include "kernel/q2kx.h"
#include "kernel/x86/q2kx_avx512.h"
#include "kernel/x86/tile32_avx512.h"
#include "kernel/tile32_kgemm.h"

#include <immintrin.h>
#include <stddef.h>
#include <string.h>

#define Q2KXG_INLINE static inline __attribute__((always_inline))

#define Q2KXG_MR 8 /* most rows of X per panel */

#define Q2KXG_FEATURES (PW_CPU_AVX512F | PW_CPU_AVX512BW | PW_CPU_AVX512VL | PW_CPU_AVX512VNNI)

/* One record's scales and mins, decoded once for every panel. */
typedef struct q2kxg_rec {
    int32_t sc[16][2][16]; /* [sub-block][half][row]: the 4-bit scale */
    float scd[16][2][16];  /* the same times d, as f32 (exact: 4 x 11 bits) */
    int32_t mp[8][2][16];  /* [pair][half][row]: words m[2t], m[2t + 1] */
    float d[2][16];        /* [half][row] */
    float dmin[2][16];
} q2kxg_rec;
_Static_assert(sizeof(q2kxg_rec) <= PW__T32K_SCRATCH, "q2kxg_rec fits the loop's scratch");

static void q2kxg_decode(const uint8_t *rec, void *out) {
    q2kxg_rec *rs = out;
    const __m256i *d = (const __m256i *)(rec + PW__Q2KX_D);
    const __m256i *dm = (const __m256i *)(rec + PW__Q2KX_DMIN);
    const __m512i m0f = _mm512_set1_epi32(0x0F);
    for (int h = 0; h < 2; ++h) {
        const __m512 dh = _mm512_cvtph_ps(_mm256_loadu_si256(d + h));
        _mm512_store_ps(rs->d[h], dh);
        _mm512_store_ps(rs->dmin[h], _mm512_cvtph_ps(_mm256_loadu_si256(dm + h)));
        for (int t = 0; t < 8; ++t) {
            const uint8_t *sb = rec + PW__Q2KX_SCALES + 64 * t + 16 * h;
            const __m512i v0 = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)sb));
            const __m512i v1 = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(sb + 32)));
            const __m512i s0 = _mm512_and_si512(v0, m0f), s1 = _mm512_and_si512(v1, m0f);
            _mm512_store_si512(rs->sc[2 * t][h], s0);
            _mm512_store_si512(rs->sc[2 * t + 1][h], s1);
            _mm512_store_ps(rs->scd[2 * t][h], _mm512_mul_ps(_mm512_cvtepi32_ps(s0), dh));
            _mm512_store_ps(rs->scd[2 * t + 1][h], _mm512_mul_ps(_mm512_cvtepi32_ps(s1), dh));
            /* m[2t] in the low word, m[2t + 1] in the high one */
            _mm512_store_si512(rs->mp[t][h], _mm512_or_si512(_mm512_srli_epi32(v0, 4),
                                                             _mm512_slli_epi32(_mm512_srli_epi32(v1, 4), 16)));
        }
    }
}

/* One record for mr (a constant) rows of X: yb[i][0..31] += their dots. F32 (a constant):
 * each sub-block's scale step in f32 (cvt, fma by scale * d) instead of int32 (vpmulld,
 * add; f32 and d once per record), the choice on Intel cores (pw__t32k_scale_step). */
Q2KXG_INLINE void q2kxg_panel(const uint8_t *rec, const q2kxg_rec *rs, const uint8_t *const *x,
                              float *yb, const uint8_t *pf, const int mr, const int F32) {
    __m512i sacc[Q2KXG_MR][2];
    __m512 facc[Q2KXG_MR][2];
#pragma GCC unroll 8
    for (int i = 0; i < mr; ++i) {
        sacc[i][0] = sacc[i][1] = _mm512_setzero_si512();
        facc[i][0] = facc[i][1] = _mm512_setzero_ps();
    }
    for (int s = 0; s < 16; ++s) {
        const uint8_t *sub = rec + PW__Q2KX_SUB * s;
        if (pf)
            for (int l = 0; l < PW__Q2KX_SUB; l += 64)
                _mm_prefetch((const char *)(pf + PW__Q2KX_SUB * s + l), _MM_HINT_T0);
        __m512i dt[Q2KXG_MR][2];
#pragma GCC unroll 8
        for (int i = 0; i < mr; ++i) dt[i][0] = dt[i][1] = _mm512_setzero_si512();
        pw__q2kx_gemm_sub(sub, x, offsetof(pw__q8_256, qs) + 16 * s, dt, mr);
#pragma GCC unroll 2
        for (int h = 0; h < 2; ++h)
            pw__t32k_scale_step(dt, h, rs->scd[s][h], rs->sc[s][h], facc, sacc, mr, F32);
    }
    if (pf)
        for (int l = PW__Q2KX_SCALES; l < PW__Q2KX_RECORD; l += 64)
            _mm_prefetch((const char *)(pf + l), _MM_HINT_T0);
#pragma GCC unroll 8
    for (int i = 0; i < mr; ++i) {
        const pw__q8_256 *xb = (const pw__q8_256 *)x[i];
        const __m512 xd = _mm512_set1_ps(xb->d);
        __m512i ms[2] = {_mm512_setzero_si512(), _mm512_setzero_si512()};
#pragma GCC unroll 8
        for (int t = 0; t < 8; ++t) {
            int32_t b2;
            memcpy(&b2, xb->bsums + 2 * t, 4);
            const __m512i bs = _mm512_set1_epi32(b2);
            ms[0] = _mm512_dpwssd_epi32(ms[0], _mm512_load_si512(rs->mp[t][0]), bs);
            ms[1] = _mm512_dpwssd_epi32(ms[1], _mm512_load_si512(rs->mp[t][1]), bs);
        }
#pragma GCC unroll 2
        for (int h = 0; h < 2; ++h) {
            const __m512 sum = F32 ? facc[i][h]
                                   : _mm512_mul_ps(_mm512_cvtepi32_ps(sacc[i][h]),
                                                   _mm512_load_ps(rs->d[h]));
            const __m512 t = _mm512_fnmadd_ps(_mm512_cvtepi32_ps(ms[h]),
                                              _mm512_load_ps(rs->dmin[h]), sum);
            float *y = yb + 32 * i + 16 * h;
            _mm512_store_ps(y, _mm512_fmadd_ps(t, xd, _mm512_load_ps(y)));
        }
    }
}

_Static_assert(Q2KXG_MR == 8, "PW__T32K_PANEL_ANY makes heights 1..8");
PW__T32K_PANEL_ANY(q2kxg_panel_any, q2kxg_panel, q2kxg_rec)

static void q2kxg_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    pw__t32k_run(c, o0, o1, i0, i1, PW__Q2KX_RECORD, Q2KXG_MR, q2kxg_decode, q2kxg_panel_any);
}

const pw__kernel pw__k_q2_k_q2kx32k4_gemm_avx512vnni = PW__Q2KX_GEMM_KERNEL(
    "avx512vnni", Q2KXG_FEATURES, q2kxg_run, PW__PRIO_AVX512 + PW__PRIO_GEMM - 1, Q2KXG_MR);

/*
 * GEMM over input-block-major Q2_K bytes as they are: the loop above over records made
 * one at a time in an L1 buffer from the 32 blocks of a tile's column
 * (pw__t32k_run_fill). The quants as pw__q2kx_quants_avx512 makes them (q2kx_avx512.h);
 * the 16 scale bytes of 16 rows transposed in registers (pw__t32f_rows16: col[j] lane
 * r = scale bytes 4j .. 4j + 3 of row r), then an in-lane byte shuffle (lane L: byte b
 * of rows 4L .. 4L + 3 as dword b) and a two-source dword permute of both halves' rows
 * (record bytes 2048 + 32 s + r, s = 4j + b); d and dmin from each row's last dword
 * (pw__q2kx_f16_rows).
 *
 * Measured: packwise bench --layout kernel --formats Q2_K --shapes 11008x4096 --batch 128
 * --threads 1 --policy compact,in_place, the shared 2-vCPU AMD EPYC (Zen 5) VM at load
 * 3.8-4, 3 runs each, the builds before and after interleaved: in_place 29.2-30.5 ms
 * (0.92-0.96x the packed GEMM's 27.4-28.7 in the same runs), where the portable maker
 * took 31.3-39.2 ms (0.74-0.91x of 27.8-28.9).
 */
void pw__q2kx_record_from_blocks_avx512(const uint8_t *src, uint8_t *rec) {
    const size_t bb = sizeof(pw__block_q2_K);
    pw__q2kx_quants_avx512(src + offsetof(pw__block_q2_K, qs), bb, rec);
    const __m512i bytes = _mm512_broadcast_i32x4(
        _mm_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15));
    /* store e of column j (sub-blocks s = 4j + 2e, + 1; rows 0..15 of each, then 16..31):
     * dword k = dword 4 (k % 4) + b of half (k / 4) % 2 (16 + for rows 16..31), b = 2e +
     * k / 8 */
    const __m512i perm[2] = {
        _mm512_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28, 1, 5, 9, 13, 17, 21, 25, 29),
        _mm512_setr_epi32(2, 6, 10, 14, 18, 22, 26, 30, 3, 7, 11, 15, 19, 23, 27, 31)};
    __m512i lo[4], hi[4];
    pw__t32f_rows16(src + offsetof(pw__block_q2_K, scales), bb, lo);
    pw__t32f_rows16(src + offsetof(pw__block_q2_K, scales) + 16 * bb, bb, hi);
    for (int j = 0; j < 4; ++j) {
        const __m512i a = _mm512_shuffle_epi8(lo[j], bytes), b = _mm512_shuffle_epi8(hi[j], bytes);
        for (int e = 0; e < 2; ++e)
            _mm512_storeu_si512(rec + PW__Q2KX_SCALES + 32 * (4 * j + 2 * e),
                                _mm512_permutex2var_epi32(a, perm[e], b));
    }
    _Static_assert(offsetof(pw__block_q2_K, dmin) == offsetof(pw__block_q2_K, d) + 2 &&
                       offsetof(pw__block_q2_K, d) >= 12,
                   "d and dmin make a row's dword, 12 bytes after its start or more");
    pw__q2kx_f16_rows(src + offsetof(pw__block_q2_K, d), bb, rec + PW__Q2KX_D, rec + PW__Q2KX_DMIN);
}

PW__TILE32_IBM_FILL(q2kxg_fill_ibm, pw__block_q2_K, PW__Q2KX_RECORD,
                   pw__q2kx_record_from_blocks_avx512)

static void q2kxg_ibm_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    pw__t32k_run_fill(c, o0, o1, i0, i1, PW__Q2KX_RECORD, Q2KXG_MR, q2kxg_decode, q2kxg_panel_any,
                      q2kxg_fill_ibm);
}

const pw__kernel pw__k_q2_k_ibm_gemm_avx512vnni = PW__TILE32_IBM_GEMM_KERNEL(
    "q2_k", PW_FORMAT_Q2_K, Q8_256, "avx512vnni", Q2KXG_FEATURES, q2kxg_ibm_run,
    PW__PRIO_AVX512 + PW__PRIO_GEMM - 1, Q2KXG_MR);
