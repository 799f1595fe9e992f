#if !defined(__AVX512F__) || !defined(__AVX512BW__) || !defined(__AVX512VL__) ||            \
    !defined(__AVX512VNNI__) || !defined(__F16C__)
#error "q6kx_gemm_avx512.c needs AVX-512 F/BW/VL/VNNI and F16C (cmake sets them for *_avx512.c)"
#endif
/*
 * AVX-512 VNNI GEMM over the q6kx32k4 family (layout in kernel/q6kx.h): the
 * GEMV form, at the file's size, serving n >= 2 too. A record's 4- and 2-bit
 * fields are joined into 6-bit quants in registers once per panel of up to
 * Q6KXG_MR = 8 rows of X, its scales and d decoded once per record for all
 * panels (the loop is x86/tile32_kgemm.h's). Activations are
 * pw__q8_256 rows.
 *
 * One sub-block s (384 bytes, 16 values of 32 rows), one panel of mr rows of
 * X; high load p = 0, 1 holds steps 2p (upper nibble) and 2p + 1 (lower):
 *
 *   g = high p;  glo = g & 0x33 (row r's bits),  ghi = g & 0xCC (row r + 16's)
 *   step 2p:     v = low 2p
 *     A = C ? v : glo              (C = 0x0F)   L0 | H0 << 4 = q of row r
 *     B = C ? v >> 4 : ghi >> 2                 L1 | H1 << 4 = q of row r + 16
 *   step 2p + 1: the same with glo << 4 and ghi << 2  (11 ops per 2 steps)
 *   D[i][0] = c_s + sum_steps dpbusd(A, a_i),  D[i][1] likewise with B
 *   S[i][h] += D[i][h] * scales[s][h]           (vpmulld)
 *   end of record: yb[i][h] += f32(S[i][h]) * d[h] * x_i.d
 *
 * with a_i = bcast(x_i.qs[4t .. 4t+3]) and c_s = -32 * x_i.bsums[s]: the
 * quant q (0..63, the unsigned side of vpdpbusd) against the signed
 * activations, its -32 offset once per sub-block and row of X. The 16-bit
 * shifts move bits across byte boundaries only into the positions the
 * select or the masks discard. Integer range (|qs| <= 127): |D| <= 16 * 32 *
 * 127 = 65024, |S| <= 16 * 128 * 65024 < 2^27.
 *
 * Measured choices (2-core shared VM, AMD EPYC: vpdpbusd about 4 cycles'
 * latency, 2 per cycle; a micro-benchmark of one record and panel in L1 and
 * the whole kernel with the weight in L2, A/B in one process, 5 runs each):
 *   - 32 rows x 8 rows of X, 16 dot chains. The scale step comes every 4
 *     loads (every 8 in Q4_K) and costs: without it the panel runs 27%
 *     faster, with an add in place of vpmulld 10% faster. The sums S are the
 *     compiler's to place (a few on the stack); all 16 in an L1 buffer behind
 *     a compiler barrier, with the first sub-block's store as a branch, ran
 *     6-9% slower; 6 or 7 rows of X per panel 1-4% slower. Per row of X,
 *     panels of 5, 4, 3, 2 rows run at 0.97, 0.93, 0.88, 0.75 of 6.
 *   - not faster here: the scale step in f32 (cvt + fma: 4% slower), half in f32
 *     and half in int32 (the same), the activations as embedded broadcasts
 *     of each vpdpbusd (8% slower) or as one 16-byte load and 4 vpshufd per
 *     row and sub-block (10% slower), the quants joined once per record into
 *     an 8 KB L1 buffer (n = 16 4% slower, n = 128 1% faster), chains carried
 *     across sub-blocks (S summing them times scale differences, the offset
 *     as 8 vpdpwssd per row and record; 20% slower).
 *   - the -32 offset as each chain's start (a broadcast per row and
 *     sub-block).
 *   - the first panel of a record prefetches the next record into L1 (two
 *     records ahead or into L2 measured the same or worse); prefetching the
 *     next panel's activations made it 6-11% slower.
 *
 * Against q6_k_i8g16_avx512vnni (1.8x the bytes), same process, rounds
 * interleaved, 1 thread, median of 7-11 rounds' ratios [range]: [4096, 4096]
 * n = 16, 32, 128: 1.30 [1.24, 1.38], 1.07 [1.04, 1.14], 1.00 [0.94, 1.08]
 * (471, 478, 459 GFLOP/s); [11008, 4096]: 1.35 [1.19, 1.43], 1.08 [1.04,
 * 1.20], 1.02 [0.98, 1.03]. At n = 128 both run the integer units at about
 * the same rate: the i8g form reads its int8 values with no unpacking, this
 * form spends 11 logic ops per 2 steps joining 4- and 2-bit fields and must
 * apply a scale every 16 values to integer sums (the i8g kernel does the
 * same in f32).
 *
 * On Intel cores (base/cpu.c's pw__x86_intel) the scale step is in f32 all the same:
 * facc += f32(D) * (scale * d), scale * d decoded once per record (exact in f32: 8 x 11
 * bits), one vpmulld (two operations there) and an add replaced by a conversion and an
 * fma, on a core where the two 512-bit ports run every vector operation. One process,
 * both paths in turn (best of 10 calls, 9-15 rounds, median of the per-round ratio), an
 * Intel Xeon VM (Sapphire Rapids class), 1 thread: [2048, 4096] n = 128 1.10-1.11x,
 * [11008, 4096] n = 128 1.10x, [4096, 4096] n = 16 1.11x. test_kernels checks both
 * paths on any machine (it flips the flag).
 *
 * Rows past `out` in the last tile are zero in the packed bytes; their sums
 * are computed and not stored.
 */
#include "format/blocks.h"
#include "kernel/q6kx.h"
#include "kernel/x86/tile32_avx512.h"
#include "kernel/x86/tile32_fill_avx512.h"
#include "kernel/tile32_kgemm.h"

#include <immintrin.h>
#include <stddef.h>
#include <string.h>

#define Q6KXG_INLINE static inline __attribute__((always_inline))

#define Q6KXG_MR 8 /* most rows of X per panel */

#define Q6KXG_FEATURES (PW_CPU_AVX512F | PW_CPU_AVX512BW | PW_CPU_AVX512VL | PW_CPU_AVX512VNNI)

/* One record's scales, decoded once for every panel. */
typedef struct q6kxg_rec {
    int32_t sc[16][2][16]; /* [sub-block][half][row]: int8 scale, sign-extended */
    float scd[16][2][16];  /* the same times d, as f32 (exact: 8 x 11 bits) */
    float d[2][16];        /* [half][row] */
} q6kxg_rec;
_Static_assert(sizeof(q6kxg_rec) <= PW__T32K_SCRATCH, "q6kxg_rec fits the loop's scratch");

static void q6kxg_decode(const uint8_t *rec, void *out) {
    q6kxg_rec *rs = out;
    for (int s = 0; s < 16; ++s)
        for (int h = 0; h < 2; ++h)
            _mm512_store_si512(rs->sc[s][h],
                               _mm512_cvtepi8_epi32(_mm_loadu_si128(
                                   (const __m128i *)(rec + PW__Q6KX_SCALES + 32 * s + 16 * h))));
    const __m256i *d = (const __m256i *)(rec + PW__Q6KX_D);
    for (int h = 0; h < 2; ++h)
        _mm512_store_ps(rs->d[h], _mm512_cvtph_ps(_mm256_loadu_si256(d + h)));
    for (int s = 0; s < 16; ++s)
        for (int h = 0; h < 2; ++h)
            _mm512_store_ps(rs->scd[s][h], _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_load_si512(rs->sc[s][h])),
                                                         _mm512_load_ps(rs->d[h])));
}

/* One record for mr (a constant) rows of X: yb[i][0..31] += their dots. F32 (a constant):
 * each sub-block's scale step in f32 (cvt, fma by scale * d) instead of int32 (vpmulld,
 * add; f32 and d once per record), the choice on Intel cores (the file's header). */
Q6KXG_INLINE void q6kxg_panel(const uint8_t *rec, const q6kxg_rec *rs, const uint8_t *const *x,
                              float *yb, const uint8_t *pf, const int mr,
                              const int F32) {
    /* c[i][s] = -32 * bsums[s] of row i: each sub-block's chains start there */
    int32_t c[Q6KXG_MR][16] __attribute__((aligned(64)));
    for (int i = 0; i < mr; ++i) {
        const pw__q8_256 *xb = (const pw__q8_256 *)x[i];
        const __m512i bs = _mm512_cvtepi16_epi32(_mm256_loadu_si256((const __m256i *)xb->bsums));
        _mm512_store_si512(c[i],
                           _mm512_sub_epi32(_mm512_setzero_si512(), _mm512_slli_epi32(bs, 5)));
    }
    const __m512i m0f = _mm512_set1_epi8(0x0F), m33 = _mm512_set1_epi8(0x33),
                  mcc = _mm512_set1_epi8((char)0xCC);
    __m512i sacc[Q6KXG_MR][2];
    __m512 facc[Q6KXG_MR][2];
#pragma GCC unroll 8
    for (int i = 0; i < mr; ++i) {
        sacc[i][0] = sacc[i][1] = _mm512_setzero_si512();
        facc[i][0] = facc[i][1] = _mm512_setzero_ps();
    }
    for (int s = 0; s < 16; ++s) {
        const uint8_t *sub = rec + PW__Q6KX_SUB * s;
        if (pf)
            for (int l = 0; l < PW__Q6KX_SUB; l += 64)
                _mm_prefetch((const char *)(pf + PW__Q6KX_SUB * s + l), _MM_HINT_T0);
        __m512i dt[Q6KXG_MR][2];
#pragma GCC unroll 8
        for (int i = 0; i < mr; ++i) dt[i][0] = dt[i][1] = _mm512_set1_epi32(c[i][s]);
#pragma GCC unroll 2
        for (int p = 0; p < 2; ++p) {
            const __m512i g = _mm512_loadu_si512(sub + PW__Q6KX_HIGH + 64 * p);
            const __m512i glo = _mm512_and_si512(g, m33), ghi = _mm512_and_si512(g, mcc);
#pragma GCC unroll 2
            for (int e = 0; e < 2; ++e) {
                const int st = 2 * p + e;
                const __m512i v = _mm512_loadu_si512(sub + 64 * st);
                /* 0xE4: C ? A : B per bit, C = 0x0F: the low nibble from A, the high from B */
                const __m512i a =
                    _mm512_ternarylogic_epi32(v, e ? _mm512_slli_epi16(glo, 4) : glo, m0f, 0xE4);
                const __m512i b = _mm512_ternarylogic_epi32(
                    _mm512_srli_epi16(v, 4),
                    e ? _mm512_slli_epi16(ghi, 2) : _mm512_srli_epi16(ghi, 2), m0f, 0xE4);
#pragma GCC unroll 8
                for (int i = 0; i < mr; ++i) {
                    int32_t a4;
                    memcpy(&a4, x[i] + offsetof(pw__q8_256, qs) + 16 * s + 4 * st, 4);
                    const __m512i xa = _mm512_set1_epi32(a4);
                    dt[i][0] = _mm512_dpbusd_epi32(dt[i][0], a, xa);
                    dt[i][1] = _mm512_dpbusd_epi32(dt[i][1], b, xa);
                }
            }
        }
#pragma GCC unroll 2
        for (int h = 0; h < 2; ++h)
            pw__t32k_scale_step(dt, h, rs->scd[s][h], rs->sc[s][h], facc, sacc, mr, F32);
    }
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

_Static_assert(Q6KXG_MR == 8, "PW__T32K_PANEL_ANY makes heights 1..8");
PW__T32K_PANEL_ANY(q6kxg_panel_any, q6kxg_panel, q6kxg_rec)

static void q6kxg_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    pw__t32k_run(c, o0, o1, i0, i1, PW__Q6KX_RECORD, Q6KXG_MR, q6kxg_decode, q6kxg_panel_any);
}

const pw__kernel pw__k_q6_k_q6kx32k4_gemm_avx512vnni = PW__Q6KX_GEMM_KERNEL(
    "avx512vnni", Q6KXG_FEATURES, q6kxg_run, PW__PRIO_AVX512 + PW__PRIO_GEMM - 1, Q6KXG_MR);

/*
 * GEMM over input-block-major Q6_K bytes as they are: the loop above over records
 * made one at a time in an L1 buffer from the 32 blocks of a tile's column
 * (pw__t32k_run_fill), as q4_k_ibm_gemm_avx512vnni does for Q4_K. With blocks.h's
 * names (value e = 16 s + 4 i + j of sub-block s; h = s / 8, g = s % 8 / 2, sp = s % 2):
 *   - ql chunk C (16 bytes at 16 C; h = C / 4, g1 = C / 2 % 2, sp = C % 2) holds the
 *     low4 of sub-block s = 8 h + 2 g1 + sp in its low nibbles and of s + 4 in its
 *     high ones, dword i = step i: the Q4_0 nibble merge of rows r and r + 16 and a
 *     transpose give the four low planes of each;
 *   - qh chunk Q (16 bytes at 128 + 16 Q; h = Q / 2, sp = Q % 2) holds the high2 of
 *     sub-blocks 8 h + 2 g + sp for g = 0..3 (bits 2g, 2g + 1): per g, each byte's
 *     T = high2[r] | high2[r + 16] << 2, and high plane p's dword is T of dword 2p
 *     << 4 | T of dword 2p + 1 (q6kx.h: bits 4-7 the first step of the pair). Two
 *     selects by 0x33 make T of every g at once (T_0 | T_2 << 4 and T_1 | T_3 << 4),
 *     then two operations a plane: 14 a register where the first maker spent 32;
 *   - scales: a 16 x 16 byte transpose per half (dword transpose, in-lane byte
 *     shuffle, dword permute); d by one gather.
 */
Q6KXG_INLINE void q6kx_record_from_blocks(const uint8_t *src, uint8_t *rec) {
    const size_t bb = sizeof(pw__block_q6_K);
    for (int ch = 0; ch < 8; ++ch) {
        const int sb = 8 * (ch / 4) + 2 * (ch / 2 % 2) + ch % 2;
        pw__t32f_nibble_steps(src + offsetof(pw__block_q6_K, ql) + 16 * ch, bb,
                              rec + PW__Q6KX_SUB * sb, rec + PW__Q6KX_SUB * (sb + 4));
    }
    for (int q = 0; q < 4; ++q) {
        const uint8_t *qh = src + offsetof(pw__block_q6_K, qh) + 16 * q;
        __m512i x[4], y[4];
        for (int g = 0; g < 4; ++g) {
            x[g] = pw__t32f_rows4(qh, bb, g);
            y[g] = pw__t32f_rows4(qh + 16 * bb, bb, g);
        }
        /* per byte, T of every g at once: E = T_0 | T_2 << 4, O = T_1 | T_3 << 4 (16-bit
         * shifts carry bits across bytes only where the 0x33 select takes the other
         * operand) */
        const __m512i m33 = _mm512_set1_epi8(0x33), mf0 = _mm512_set1_epi8((char)0xF0);
        __m512i eo[2][4];
        for (int k = 0; k < 4; ++k) {
            eo[0][k] = _mm512_ternarylogic_epi32(m33, x[k], _mm512_slli_epi16(y[k], 2), 0xCA);
            eo[1][k] = _mm512_ternarylogic_epi32(m33, _mm512_srli_epi16(x[k], 2), y[k], 0xCA);
        }
        for (int g = 0; g < 4; ++g) {
            __m512i z[4];
            for (int k = 0; k < 4; ++k) {
                /* dword 2p: T of dword 2p << 4 | T of dword 2p + 1 (T_g: the low nibbles
                 * of eo[g % 2] for g < 2, the high ones for g >= 2) */
                const __m512i v = eo[g % 2][k];
                z[k] = g < 2 ? _mm512_ternarylogic_epi32(mf0, _mm512_slli_epi32(v, 4),
                                                          _mm512_srli_epi64(v, 32), 0xCA)
                             : _mm512_ternarylogic_epi32(mf0, v, _mm512_srli_epi64(v, 36), 0xCA);
            }
            /* dword columns 0 (p = 0) and 2 (p = 1) of every lane's 4 x 4 matrix */
            const __m512i t0 = _mm512_unpacklo_epi32(z[0], z[1]), t1 = _mm512_unpackhi_epi32(z[0], z[1]);
            const __m512i t2 = _mm512_unpacklo_epi32(z[2], z[3]), t3 = _mm512_unpackhi_epi32(z[2], z[3]);
            uint8_t *hi = rec + PW__Q6KX_SUB * (8 * (q / 2) + 2 * g + q % 2) + PW__Q6KX_HIGH;
            _mm512_store_si512((__m512i *)hi, _mm512_unpacklo_epi64(t0, t2));
            _mm512_store_si512((__m512i *)(hi + 64), _mm512_unpacklo_epi64(t1, t3));
        }
    }
    const __m512i bytes = _mm512_broadcast_i32x4(
        _mm_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15));
    const __m512i dwords = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    for (int h = 0; h < 2; ++h) {
        const uint8_t *rows = src + (size_t)16 * h * bb;
        __m512i z[4];
        for (int g = 0; g < 4; ++g) z[g] = pw__t32f_rows4(rows + offsetof(pw__block_q6_K, scales), bb, g);
        _Alignas(64) uint8_t cols[4][64]; /* dword column c: scales 4c..4c+3 of rows 4L..4L+3 */
        pw__t32f_transpose4_store(z, cols[0], 64);
        for (int c = 0; c < 4; ++c) {
            /* 16-byte piece j: scale 4c + j of rows 0..15 */
            const __m512i v = _mm512_permutexvar_epi32(
                dwords, _mm512_shuffle_epi8(_mm512_load_si512((const __m512i *)cols[c]), bytes));
            uint8_t *dst = rec + PW__Q6KX_SCALES + 32 * 4 * c + 16 * h;
            _mm_store_si128((__m128i *)dst, _mm512_castsi512_si128(v));
            _mm_store_si128((__m128i *)(dst + 32), _mm512_extracti32x4_epi32(v, 1));
            _mm_store_si128((__m128i *)(dst + 64), _mm512_extracti32x4_epi32(v, 2));
            _mm_store_si128((__m128i *)(dst + 96), _mm512_extracti32x4_epi32(v, 3));
        }
        /* d: the dword ending at the block's end (scales 14, 15 and d), its high half */
        const __m512i dd = pw__t32f_gather16(rows + bb - 4, (int)bb);
        _mm256_store_si256((__m256i *)(rec + PW__Q6KX_D + 32 * h),
                           _mm512_cvtepi32_epi16(_mm512_srli_epi32(dd, 16)));
    }
}

PW__TILE32_IBM_FILL(q6kxg_fill_ibm, pw__block_q6_K, PW__Q6KX_RECORD, q6kx_record_from_blocks)

static void q6kxg_ibm_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    pw__t32k_run_fill(c, o0, o1, i0, i1, PW__Q6KX_RECORD, Q6KXG_MR, q6kxg_decode, q6kxg_panel_any,
                      q6kxg_fill_ibm);
}

const pw__kernel pw__k_q6_k_ibm_gemm_avx512vnni = PW__TILE32_IBM_GEMM_KERNEL(
    "q6_k", PW_FORMAT_Q6_K, Q8_256, "avx512vnni", Q6KXG_FEATURES, q6kxg_ibm_run,
    PW__PRIO_AVX512 + PW__PRIO_GEMM - 1, Q6KXG_MR);
