#if !defined(__AVX512F__) || !defined(__AVX512BW__) || !defined(__AVX512VL__) ||            \
    !defined(__AVX512VNNI__) || !defined(__F16C__)
#error "q3kx_avx512.c needs AVX-512 F/BW/VL/VNNI and F16C (the build sets them for *_avx512.c)"
#endif
/*
 * AVX-512 VNNI GEMV over the q3kx32k4 family (layout in kernel/q3kx.h): Q3_K
 * with its bits rearranged so that one 64-byte load holds one 4-value k step
 * of all 32 rows of a tile, each 3-bit quant whole in a nibble, plus a bit of
 * the sub-block's fourth step in each nibble's top bit. Activations are
 * pw__q8_256 rows; y[i, o] for o in [o0, o1), i in [i0, i1) (n > 1 repeats
 * the tile per row of X: GEMM speed comes from the GEMM kernel,
 * q3kx_gemm_avx512.c).
 *
 * One sub-block s (192 bytes, 16 values) of a record, one row of X. Lane r
 * holds rows r (low nibble) and r + 16 (high nibble); with c = -4 * x.bsums[s]
 * and a_u = bcast(x.qs[16s + 4u .. 16s + 4u + 3]):
 *
 *   q_u = P_u                                   u = 0, 1, 2
 *   q_3 = (P_0 >> 3 : 0x11) ? (P_1 >> 2 : 0x33) ? P_2 >> 1   two bit selects
 *   L = c    + sum_u dpbusd(q_u & 0x07, a_u)    = c + dot(q[r])            rows 0..15
 *   W = 17 c + sum_u dpbusd(q_u & 0x77, a_u)    = 17 c + dot(q[r] + 16 q[r + 16])
 *   X = L,  Y16 = W - L = 16 (c + dot(q[r + 16]))                        exact
 *   sx += X * sc[s][0..15],  sy += Y16 * sc[s][16..31]   (sc = scale - 32, int32)
 *
 * and per record acc_lo += f32(sx) * d[0..15] * x.d, acc_hi += f32(sy >> 4) * ...
 * (sy a multiple of 16). Per sub-block: 3 loads, 8 dot products, 13 logic ops
 * and shifts. The scales of 16 rows decode from their 192 transposed bytes in
 * 3 loads and 4 x 4 operations a quarter (a bit select of low nibble and the
 * shifted top bits, a mask, a subtract): byte 16i + r of quarter q is scale
 * 4q + i of row r, so sub-block s's 16 scales are bytes [16s, 16s + 16) of the
 * quarters laid side by side, sign-extended to dwords by one vpmovsxbd.
 *
 * Integer ranges (|x.qs| <= 127, q - 4 in [-4, 3], |scale - 32| <= 32): |X|,
 * |Y16 / 16| <= 16 * 4 * 127 = 8128; |sy| <= 16 * 32 * 16 * 8128 < 2^27.
 *
 * Rows past `out` in the last tile are zero in the packed bytes; their lanes
 * are computed and not stored (masked stores), so edge tiles take the same path.
 * Tiles lie one after another, so a thread's range is one linear stream; the
 * record is read in address order (sub-blocks, then scales and d), each
 * sub-block prefetching its bytes further on (pw__tile32_prefetch_pf), as the
 * Q4_K and Q6_K GEMVs do.
 *
 * packwise bench --formats Q3_K --shapes 11008x4096 --batch 1,128 --threads 1, an AMD
 * EPYC VM (2 vCPUs shared with other jobs, one run): this GEMV 91.5% of the read (the
 * row-major q3_k_rm_avxvnni it replaces: 32.8%), the GEMM (q3kx_gemm_avx512.c) 63.4%
 * of the int8 peak (7.3% before).
 */
#include "format/blocks.h"
#include "kernel/q3kx.h"
#include "kernel/x86/q3kx_avx512.h"
#include "kernel/x86/tile32_avx512.h"

#define Q3KX_INLINE static inline __attribute__((always_inline))

/* One record with one pw__q8_256 activation block (the record function of
 * tile32_avx512.h). */
Q3KX_INLINE void q3kx_block(const uint8_t *rec, const uint8_t *xbp, int pf, __m512 acc[2]) {
    const pw__q8_256 *xb = (const pw__q8_256 *)xbp;
    const __m512i m07 = _mm512_set1_epi8(0x07), m77 = _mm512_set1_epi8(0x77);
    /* the -4 offsets, activation-only: c[s] starts L, 17 c[s] starts W */
    int32_t c[16], c17[16];
    const __m512i bs = _mm512_cvtepi16_epi32(_mm256_loadu_si256((const __m256i *)xb->bsums));
    const __m512i cv = _mm512_sub_epi32(_mm512_setzero_si512(), _mm512_slli_epi32(bs, 2));
    _mm512_storeu_si512(c, cv);
    _mm512_storeu_si512(c17, _mm512_add_epi32(cv, _mm512_slli_epi32(cv, 4)));
    __m512i xs[16], ys[16];
#pragma GCC unroll 2
    for (int s = 0; s < 16; ++s) {
        const uint8_t *sub = rec + PW__Q3KX_SUB * s;
        if (pf) pw__tile32_prefetch_pf(sub, PW__Q3KX_SUB, pf);
        __m512i q[4];
        for (int k = 0; k < 3; ++k) q[k] = _mm512_loadu_si512(sub + 64 * k);
        q[3] = pw__q3kx_step3(q[0], q[1], q[2]);
        __m512i l = _mm512_set1_epi32(c[s]), w = _mm512_set1_epi32(c17[s]);
#pragma GCC unroll 4
        for (int u = 0; u < 4; ++u) {
            const __m512i a = pw__tile32_bcast4(xb->qs + 16 * s + 4 * u);
            l = _mm512_dpbusd_epi32(l, _mm512_and_si512(q[u], m07), a);
            w = _mm512_dpbusd_epi32(w, _mm512_and_si512(q[u], m77), a);
        }
        xs[s] = l;
        ys[s] = _mm512_sub_epi32(w, l);
    }
    if (pf)
        pw__tile32_prefetch_pf(rec + PW__Q3KX_SCALES, PW__Q3KX_RECORD - PW__Q3KX_SCALES, pf);
    __m512i sum[2];
#pragma GCC unroll 2
    for (int h = 0; h < 2; ++h) {
        _Alignas(64) int8_t sc[256];
        pw__q3kx_scales16(rec + PW__Q3KX_SCALES + 192 * h, sc);
        __m512i t = _mm512_setzero_si512();
#pragma GCC unroll 16
        for (int s = 0; s < 16; ++s) {
            const __m128i sc8 = _mm_load_si128((const __m128i *)(sc + 16 * s));
            const __m512i sc32 = _mm512_cvtepi8_epi32(sc8);
            t = _mm512_add_epi32(t, _mm512_mullo_epi32(h ? ys[s] : xs[s], sc32));
        }
        sum[h] = t;
    }
    pw__tile32_scale_add(acc, sum[0], _mm512_srai_epi32(sum[1], 4), rec + PW__Q3KX_D, xb->d);
}

/* Zen 4 streams these records without software prefetch (hw = 1, tile32_avx512.h), as
 * Q4_K's. */
static void q3kx_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    pw__tile32_run(c, o0, o1, i0, i1, PW__QK_K, PW__Q3KX_RECORD, sizeof(pw__q8_256), q3kx_block, 1,
                   PW__HW_ZEN4);
}

const pw__kernel pw__k_q3_k_q3kx32k4_avx512vnni = PW__Q3KX_KERNEL(
    "avx512vnni", PW_CPU_AVX512F | PW_CPU_AVX512BW | PW_CPU_AVX512VL | PW_CPU_AVX512VNNI, q3kx_run,
    PW__PRIO_AVX512 + 2);
