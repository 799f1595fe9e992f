#if !defined(__AVX512F__) || !defined(__AVX512BW__) || !defined(__AVX512VL__) ||            \
    !defined(__AVX512VNNI__) || !defined(__F16C__)
#error "q3kx_gemm_avx512.c needs AVX-512 F/BW/VL/VNNI and F16C (cmake sets them for *_avx512.c)"
#endif
/*
 * AVX-512 VNNI GEMM over the q3kx32k4 family (layout in kernel/q3kx.h): the
 * GEMV form, at the file's size, serving n >= 2 too. A record's 3-bit quants
 * are unpacked in registers once per panel of up to Q3KXG_MR = 8 rows of X,
 * its scales and d decoded once per record for all panels (the loop is
 * tile32_kgemm.h's, as for Q4_K and Q6_K). Activations are pw__q8_256 rows.
 *
 * One sub-block s (192 bytes, 16 values of 32 rows), one panel of mr rows of X:
 *
 *   q_u = P_u (u < 3), q_3 from the three loads' top bits (pw__q3kx_step3)
 *   A = q_u & 0x07 (row r),  B = (q_u >> 4) & 0x07 (row r + 16)   per step, all mr rows
 *   D[i][h] = c_s + sum_u dpbusd(A or B, a_i,u)      c_s = -4 * x_i.bsums[s]
 *   S[i][h] += D[i][h] * (scale[s][h] - 32)          (vpmulld; f32 fma on Intel cores)
 *   end of record: yb[i][h] += f32(S[i][h]) * d[h] * x_i.d
 *
 * Per sub-block 3 loads and 17 logic ops for 8 dot products per row of X (64 at
 * mr = 8). Integer range (|qs| <= 127): |D| <= 16 * 4 * 127 = 8128, |S| <= 16 *
 * 32 * 8128 < 2^23. The panel is q6kx_gemm_avx512.c's (16 dot chains, the scale step
 * every 4 steps, the next record prefetched by the first panel), its unpacking shorter.
 *
 * Rows past `out` in the last tile are zero in the packed bytes; their sums
 * are computed and not stored.
 */
#include "format/blocks.h"
#include "kernel/q3kx.h"
#include "kernel/x86/q3kx_avx512.h"
#include "kernel/x86/tile32_avx512.h"
#include "kernel/x86/tile32_fill_avx512.h"
#include "kernel/tile32_kgemm.h"

#include <immintrin.h>
#include <stddef.h>
#include <string.h>

#define Q3KXG_INLINE static inline __attribute__((always_inline))

#define Q3KXG_MR 8 /* most rows of X per panel */

#define Q3KXG_FEATURES (PW_CPU_AVX512F | PW_CPU_AVX512BW | PW_CPU_AVX512VL | PW_CPU_AVX512VNNI)

/* One record's scales, decoded once for every panel. */
typedef struct q3kxg_rec {
    int32_t sc[16][2][16]; /* [sub-block][half][row]: scale - 32 */
    float scd[16][2][16];  /* the same times d, as f32 (exact: 6 x 11 bits) */
    float d[2][16];        /* [half][row] */
} q3kxg_rec;
_Static_assert(sizeof(q3kxg_rec) <= PW__T32K_SCRATCH, "q3kxg_rec fits the loop's scratch");

static void q3kxg_decode(const uint8_t *rec, void *out) {
    q3kxg_rec *rs = out;
    const __m256i *d = (const __m256i *)(rec + PW__Q3KX_D);
    for (int h = 0; h < 2; ++h) {
        _Alignas(64) int8_t sc[256];
        pw__q3kx_scales16(rec + PW__Q3KX_SCALES + 192 * h, sc);
        const __m512 dh = _mm512_cvtph_ps(_mm256_loadu_si256(d + h));
        _mm512_store_ps(rs->d[h], dh);
        for (int s = 0; s < 16; ++s) {
            const __m512i v = _mm512_cvtepi8_epi32(_mm_load_si128((const __m128i *)(sc + 16 * s)));
            _mm512_store_si512(rs->sc[s][h], v);
            _mm512_store_ps(rs->scd[s][h], _mm512_mul_ps(_mm512_cvtepi32_ps(v), dh));
        }
    }
}

/* One record for mr (a constant) rows of X: yb[i][0..31] += their dots. F32 (a constant):
 * each sub-block's scale step in f32 (cvt, fma by scale * d) instead of int32 (vpmulld,
 * add; f32 and d once per record), the choice on Intel cores (pw__t32k_scale_step). */
Q3KXG_INLINE void q3kxg_panel(const uint8_t *rec, const q3kxg_rec *rs, const uint8_t *const *x,
                              float *yb, const uint8_t *pf, const int mr, const int F32) {
    /* c[i][s] = -4 * bsums[s] of row i: each sub-block's chains start there */
    int32_t c[Q3KXG_MR][16] __attribute__((aligned(64)));
    for (int i = 0; i < mr; ++i) {
        const pw__q8_256 *xb = (const pw__q8_256 *)x[i];
        const __m512i bs = _mm512_cvtepi16_epi32(_mm256_loadu_si256((const __m256i *)xb->bsums));
        _mm512_store_si512(c[i],
                           _mm512_sub_epi32(_mm512_setzero_si512(), _mm512_slli_epi32(bs, 2)));
    }
    const __m512i m07 = _mm512_set1_epi8(0x07);
    __m512i sacc[Q3KXG_MR][2];
    __m512 facc[Q3KXG_MR][2];
#pragma GCC unroll 8
    for (int i = 0; i < mr; ++i) {
        sacc[i][0] = sacc[i][1] = _mm512_setzero_si512();
        facc[i][0] = facc[i][1] = _mm512_setzero_ps();
    }
    for (int s = 0; s < 16; ++s) {
        const uint8_t *sub = rec + PW__Q3KX_SUB * s;
        if (pf)
            for (int l = 0; l < PW__Q3KX_SUB; l += 64)
                _mm_prefetch((const char *)(pf + PW__Q3KX_SUB * s + l), _MM_HINT_T0);
        __m512i dt[Q3KXG_MR][2];
#pragma GCC unroll 8
        for (int i = 0; i < mr; ++i) dt[i][0] = dt[i][1] = _mm512_set1_epi32(c[i][s]);
        const __m512i p0 = _mm512_loadu_si512(sub), p1 = _mm512_loadu_si512(sub + 64),
                      p2 = _mm512_loadu_si512(sub + 128);
        const __m512i q3 = pw__q3kx_step3(p0, p1, p2);
#pragma GCC unroll 4
        for (int u = 0; u < 4; ++u) {
            const __m512i q = u == 0 ? p0 : u == 1 ? p1 : u == 2 ? p2 : q3;
            const __m512i a = _mm512_and_si512(q, m07);
            const __m512i b = _mm512_and_si512(_mm512_srli_epi16(q, 4), m07);
#pragma GCC unroll 8
            for (int i = 0; i < mr; ++i) {
                int32_t a4;
                memcpy(&a4, x[i] + offsetof(pw__q8_256, qs) + 16 * s + 4 * u, 4);
                const __m512i xa = _mm512_set1_epi32(a4);
                dt[i][0] = _mm512_dpbusd_epi32(dt[i][0], a, xa);
                dt[i][1] = _mm512_dpbusd_epi32(dt[i][1], b, xa);
            }
        }
#pragma GCC unroll 2
        for (int h = 0; h < 2; ++h)
            pw__t32k_scale_step(dt, h, rs->scd[s][h], rs->sc[s][h], facc, sacc, mr, F32);
    }
    if (pf)
        for (int l = PW__Q3KX_SCALES; l < PW__Q3KX_RECORD; l += 64)
            _mm_prefetch((const char *)(pf + l), _MM_HINT_T0);
#pragma GCC unroll 2
    for (int h = 0; h < 2; ++h) {
        const __m512 d = _mm512_load_ps(rs->d[h]);
#pragma GCC unroll 8
        for (int i = 0; i < mr; ++i) {
            const __m512 xd = _mm512_set1_ps(((const pw__q8_256 *)x[i])->d);
            float *y = yb + 32 * i + 16 * h;
            _mm512_store_ps(y, F32 ? _mm512_fmadd_ps(facc[i][h], xd, _mm512_load_ps(y))
                                   : _mm512_fmadd_ps(_mm512_cvtepi32_ps(sacc[i][h]),
                                                     _mm512_mul_ps(d, xd), _mm512_load_ps(y)));
        }
    }
}

_Static_assert(Q3KXG_MR == 8, "PW__T32K_PANEL_ANY makes heights 1..8");
PW__T32K_PANEL_ANY(q3kxg_panel_any, q3kxg_panel, q3kxg_rec)

static void q3kxg_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    pw__t32k_run(c, o0, o1, i0, i1, PW__Q3KX_RECORD, Q3KXG_MR, q3kxg_decode, q3kxg_panel_any);
}

const pw__kernel pw__k_q3_k_q3kx32k4_gemm_avx512vnni = PW__Q3KX_GEMM_KERNEL(
    "avx512vnni", Q3KXG_FEATURES, q3kxg_run, PW__PRIO_AVX512 + PW__PRIO_GEMM - 1, Q3KXG_MR);

/*
 * GEMM over input-block-major Q3_K bytes as they are: the loop above over records made
 * one at a time in an L1 buffer from the 32 blocks of a tile's column
 * (pw__t32k_run_fill), with 128-bit row loads, in-lane 4 x 4 dword transposes
 * (pw__t32f_rows16: lane r of col[j] = dword j of a 16-byte chunk of row r) and bit
 * selects (sel(m, a, b) = m ? a : b, one vpternlogd), the bytes of
 * pw__q3kx_record_from_blocks (q3kx_pack.c names the bits). Per half `half` of the
 * hmask (dwords D = 4 half + j, j = 0..3) and half h of qs (qs chunk 2h + half):
 *
 *   xy[0] = sel(0x0F, x, y << 4), xy[1] = sel(0x0F, x >> 4, y)      qs of rows r | r + 16
 *   hh = h ? sel(0x0F, hm >> 4, hn) : sel(0x0F, hm, hn << 4)       hmask bits 4h .. 4h + 3
 *   z_j(g) = sel(0x33, xy[g / 2] >> 2 (g % 2), hh << (2 - g))     nibbles: the 3-bit q of
 *                                                                  value group g, bits 3, 7 junk
 *   P_k of sub-block 8h + 2g + half = sel(0x77, z_k, z_3 << (3 - k))   (k = 0..2)
 *
 * (16-bit shifts: the bits they move across bytes land only where a mask drops them).
 * The 12 scale bytes and d of 16 rows from the 16 bytes at 94 of each (scales at 2..13,
 * d at 14..15), transposed: per column an in-lane byte shuffle and a dword permute give
 * bytes 4c .. 4c + 3 of the 16 rows one after another (record bytes 3072 + 192 (r / 16) +
 * 16 i + r % 16, i = 4c + b - 2), d the high words of column 3.
 *
 * Measured: packwise bench --layout kernel --formats Q3_K --shapes 11008x4096 --batch 128
 * --threads 1 --policy compact,in_place, the shared 2-vCPU AMD EPYC (Zen 5) VM at load
 * 2.6-3.8, 3 runs each, the builds before and after interleaved: in_place 22.3-22.7 ms
 * (0.93-0.94x the packed GEMM's 21.0-21.1 in the same runs), where the portable maker
 * took 31.4-32.9 ms (0.63-0.66x of 19.8-21.6).
 */
void pw__q3kx_record_from_blocks_avx512(const uint8_t *src, uint8_t *rec) {
    const size_t bb = sizeof(pw__block_q3_K), qs = offsetof(pw__block_q3_K, qs);
    const __m512i m0f = _mm512_set1_epi8(0x0F), m33 = _mm512_set1_epi8(0x33),
                  m77 = _mm512_set1_epi8(0x77);
#define Q3KXG_SEL(m, a, b) _mm512_ternarylogic_epi32((m), (a), (b), 0xCA) /* m ? a : b */
    for (int half = 0; half < 2; ++half) {
        __m512i hm[4], hn[4];
        pw__t32f_rows16(src + offsetof(pw__block_q3_K, hmask) + 16 * half, bb, hm);
        pw__t32f_rows16(src + offsetof(pw__block_q3_K, hmask) + 16 * half + 16 * bb, bb, hn);
        for (int h = 0; h < 2; ++h) {
            __m512i x[4], y[4], xy[4][2], hh[4];
            pw__t32f_rows16(src + qs + 32 * h + 16 * half, bb, x);
            pw__t32f_rows16(src + qs + 32 * h + 16 * half + 16 * bb, bb, y);
            for (int j = 0; j < 4; ++j) {
                xy[j][0] = Q3KXG_SEL(m0f, x[j], _mm512_slli_epi16(y[j], 4));
                xy[j][1] = Q3KXG_SEL(m0f, _mm512_srli_epi16(x[j], 4), y[j]);
                hh[j] = h ? Q3KXG_SEL(m0f, _mm512_srli_epi16(hm[j], 4), hn[j])
                          : Q3KXG_SEL(m0f, hm[j], _mm512_slli_epi16(hn[j], 4));
            }
            for (int g = 0; g < 4; ++g) {
                __m512i z[4];
                for (int j = 0; j < 4; ++j) {
                    const __m512i u = g % 2 ? _mm512_srli_epi16(xy[j][g / 2], 2) : xy[j][g / 2];
                    const __m512i v = g < 2    ? _mm512_slli_epi16(hh[j], 2 - g)
                                      : g == 2 ? hh[j]
                                               : _mm512_srli_epi16(hh[j], 1);
                    z[j] = Q3KXG_SEL(m33, u, v);
                }
                uint8_t *sub = rec + PW__Q3KX_SUB * (8 * h + 2 * g + half);
                for (int k = 0; k < 3; ++k)
                    _mm512_storeu_si512(sub + 64 * k,
                                        Q3KXG_SEL(m77, z[k], _mm512_slli_epi16(z[3], 3 - k)));
            }
        }
    }
#undef Q3KXG_SEL
    _Static_assert(offsetof(pw__block_q3_K, scales) == 96 && offsetof(pw__block_q3_K, d) == 108 &&
                       sizeof(pw__block_q3_K) == 110,
                   "a row's last 16 bytes: 2 of qs, the 12 scale bytes, d");
    const __m512i bytes = _mm512_broadcast_i32x4(
        _mm_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15));
    const __m512i dwords = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    for (int h = 0; h < 2; ++h) {
        __m512i col[4], v[4];
        pw__t32f_rows16(src + 94 + 16 * bb * (size_t)h, bb, col);
        for (int c = 0; c < 4; ++c)
            v[c] = _mm512_permutexvar_epi32(dwords, _mm512_shuffle_epi8(col[c], bytes));
        uint8_t *sc = rec + PW__Q3KX_SCALES + 192 * h; /* bytes 2..13 of the 16: from 32 in v */
        _mm256_storeu_si256((__m256i *)sc, _mm512_extracti64x4_epi64(v[0], 1));
        _mm512_storeu_si512(sc + 32, v[1]);
        _mm512_storeu_si512(sc + 96, v[2]);
        _mm256_storeu_si256((__m256i *)(sc + 160), _mm512_castsi512_si256(v[3]));
        _mm256_storeu_si256((__m256i *)(rec + PW__Q3KX_D + 32 * h),
                            _mm512_cvtepi32_epi16(_mm512_srli_epi32(col[3], 16)));
    }
}

PW__TILE32_IBM_FILL(q3kxg_fill_ibm, pw__block_q3_K, PW__Q3KX_RECORD,
                    pw__q3kx_record_from_blocks_avx512)

static void q3kxg_ibm_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    pw__t32k_run_fill(c, o0, o1, i0, i1, PW__Q3KX_RECORD, Q3KXG_MR, q3kxg_decode, q3kxg_panel_any,
                      q3kxg_fill_ibm);
}

const pw__kernel pw__k_q3_k_ibm_gemm_avx512vnni = PW__TILE32_IBM_GEMM_KERNEL(
    "q3_k", PW_FORMAT_Q3_K, Q8_256, "avx512vnni", Q3KXG_FEATURES, q3kxg_ibm_run,
    PW__PRIO_AVX512 + PW__PRIO_GEMM - 1, Q3KXG_MR);
