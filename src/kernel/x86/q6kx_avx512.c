#if !defined(__AVX512F__) || !defined(__AVX512BW__) || !defined(__AVX512VL__) ||            \
    !defined(__AVX512VNNI__) || !defined(__F16C__)
#error "q6kx_avx512.c needs AVX-512 F/BW/VL/VNNI and F16C (the build sets them for *_avx512.c)"
#endif
/*
 * AVX-512 VNNI GEMV over the q6kx32k4 family (layout in kernel/q6kx.h): Q6_K
 * with its bits rearranged so that one 64-byte load of low nibbles is one
 * 4-value k step of all 32 rows of a tile, and one load of high bits two
 * steps. Activations are pw__q8_256 rows; y[i, o] for o in [o0, o1), i in
 * [i0, i1) (n > 1 repeats the tile per row of X: GEMM speed comes from the
 * i8g kernels).
 *
 * One sub-block s (384 bytes, 16 values) of a record, one row of X. Lane r
 * holds rows r (L0, H0: low 4 and high 2 bits) and r + 16 (L1, H1); per step
 * t = 4s + i, with a_t = bcast(x.qs[4t .. 4t+3]) and c = -32 * x.bsums[s]:
 *
 *   v_t = low i                          byte: L0 | L1 << 4
 *   g_t = high i/2, << 4 for odd i       byte: bits 4-5 H0, 6-7 H1 (0-3: not used)
 *   P = c    + sum_t dpbusd(C ? v : g  (C = 0x0F),  a_t)   L0 + 16 H0 + 64 H1
 *   S = 16 c + sum_t dpbusd(v & 0xF0, a_t)                  16 L1
 *   R =        sum_t dpbusd(g & 0xC0, a_t)                  64 H1
 *   rows 0..15:  X = P - R              = c + dot(L0 + 16 H0)   exact
 *   rows 16..31: Y = (S >> 4) + (R >> 2) = c + dot(L1 + 16 H1)  exact (multiples of 16, 4)
 *   sx += X * scales[s][0..15],  sy += Y * scales[s][16..31]   (int32 multiply)
 *
 * and per record acc_lo += f32(sx) * f32(d[0..15]) * x.d, acc_hi likewise.
 * The high bits of a step pair share a byte, the first step's in the upper
 * nibble so that one ternary-logic op merges them onto the low nibbles
 * (v's bits 0-3, g's bits 4-7); row r + 16's high bits come along in bits 6-7
 * and R takes them out again. Per step: 3 dot products and 3 logic ops for
 * 32 rows x 4 values (the row-major kernel spends about twice the vector
 * instructions per byte): a cold GEMV is a stream from memory that the core
 * must keep up with, and arithmetic time per byte shows in it.
 *
 * Integer ranges: a byte of P is at most 255, |P| <= 16 * 255 * 128 + |c|;
 * |X|, |Y| <= 16 * 32 * 127 (q - 32 in [-32, 31]); |sx| <= 16 * 128 * 65024 < 2^31.
 *
 * Rows past `out` in the last tile are zero in the packed bytes; their lanes
 * are computed and not stored (masked stores), so edge tiles take the same path.
 *
 * Tiles lie one after another, so a thread's range is one linear stream.
 * Each sub-block prefetches its bytes further on, each record its scales and d
 * too (pw__tile32_prefetch, tile32_prefetch.h): on an earlier session's machine the hardware
 * prefetchers alone reached about two thirds of the read bandwidth, an L2
 * prefetch alone about 86% (GEMV [11008, 4096], 1 thread), L2 + L1 about 90%.
 * On Zen 4 the hardware alone streams them faster, now that a record is read in
 * address order (q6kx_block).
 */
#include "format/blocks.h"
#include "kernel/q6kx.h"
#include "kernel/x86/tile32_avx512.h"

#define Q6KX_INLINE static inline __attribute__((always_inline))

/* One record with one pw__q8_256 activation block (the record function of
 * tile32_avx512.h): its dots, each sub-block prefetching its bytes further on. The
 * record is read in address order: each sub-block's six lines in turn (the four low
 * loads, then the two high), its X and Y kept (32 zmm, through L1), then the scales and
 * d. Zen 4's hardware prefetcher follows that order and not the one before (each
 * sub-block's scales read beside it, its high loads between its low ones): one build
 * switched at run time (not in the tree), packwise bench --formats Q6_K --shapes
 * 11008x4096,4096x4096 --batch 1 --threads 1,2, three rounds in turn, fraction of the
 * read, 1 thread: 69.5-78.9% (as before, with the L2 prefetch) against 83.5-90.1%
 * (address order, no software prefetch); 2 threads 76.0-91.1 against 89.1-99.6.
 * Address order with the sub-block's high loads between its low ones measured
 * 64.3-71.0% / 77.0-86.1, and with the six loads left to GCC (which folds each into its
 * first use, in the order of the arithmetic) 61.5-70.1 / 72.3-86.2: the order inside six
 * lines counts too, hence the empty asm; with it, three more rounds 85.8-90.2 /
 * 85.6-92.9. From L2 ([512, 4096], a scratch build skipping the flush) 56.7-58.5 GB/s
 * against 59.2-62.5. */
Q6KX_INLINE void q6kx_block(const uint8_t *rec, const uint8_t *xbp, int pf, __m512 acc[2]) {
    const pw__q8_256 *xb = (const pw__q8_256 *)xbp;
    const __m512i m0f = _mm512_set1_epi8(0x0F), mf0 = _mm512_set1_epi8((char)0xF0),
                  mc0 = _mm512_set1_epi8((char)0xC0);
    /* the -32 offsets, activation-only: c[s] starts P, 16 c[s] starts S */
    int32_t c[16], c16[16];
    const __m512i bs = _mm512_cvtepi16_epi32(_mm256_loadu_si256((const __m256i *)xb->bsums));
    const __m512i cv = _mm512_sub_epi32(_mm512_setzero_si512(), _mm512_slli_epi32(bs, 5));
    _mm512_storeu_si512(c, cv);
    _mm512_storeu_si512(c16, _mm512_slli_epi32(cv, 4));
    __m512i xs[16], ys[16];
#pragma GCC unroll 2
    for (int s = 0; s < 16; ++s) {
        const uint8_t *sub = rec + PW__Q6KX_SUB * s;
        if (pf) pw__tile32_prefetch_pf(sub, PW__Q6KX_SUB, pf);
        __m512i v[4], g[2];
        for (int i = 0; i < 4; ++i) v[i] = _mm512_loadu_si512(sub + 64 * i);
        for (int i = 0; i < 2; ++i) g[i] = _mm512_loadu_si512(sub + PW__Q6KX_HIGH + 64 * i);
        /* the six loads issued here, in this order: GCC otherwise folds each into the
         * operation that first uses it, in the order of the arithmetic */
        __asm__("" : "+v"(v[0]), "+v"(v[1]), "+v"(v[2]), "+v"(v[3]), "+v"(g[0]), "+v"(g[1]));
        __m512i p = _mm512_set1_epi32(c[s]), q = _mm512_set1_epi32(c16[s]);
        __m512i r = _mm512_setzero_si512();
#pragma GCC unroll 4
        for (int i = 0; i < 4; ++i) {
            const __m512i h = i % 2 ? _mm512_slli_epi16(g[i / 2], 4) : g[i / 2];
            const __m512i a = pw__tile32_bcast4(xb->qs + 16 * s + 4 * i);
            /* 0xE4: C ? A : B per bit, with C = 0x0F: v's low nibble, h's high nibble */
            p = _mm512_dpbusd_epi32(p, _mm512_ternarylogic_epi32(v[i], h, m0f, 0xE4), a);
            q = _mm512_dpbusd_epi32(q, _mm512_and_si512(v[i], mf0), a);
            r = _mm512_dpbusd_epi32(r, _mm512_and_si512(h, mc0), a);
        }
        xs[s] = _mm512_sub_epi32(p, r);
        ys[s] = _mm512_add_epi32(_mm512_srai_epi32(q, 4), _mm512_srai_epi32(r, 2));
    }
    if (pf)
        pw__tile32_prefetch_pf(rec + PW__Q6KX_SCALES, PW__Q6KX_RECORD - PW__Q6KX_SCALES, pf);
    __m512i sx = _mm512_setzero_si512(), sy = _mm512_setzero_si512();
#pragma GCC unroll 16
    for (int s = 0; s < 16; ++s) {
        const __m128i *sc = (const __m128i *)(rec + PW__Q6KX_SCALES + 32 * s);
        const __m512i sc_lo = _mm512_cvtepi8_epi32(_mm_loadu_si128(sc));
        const __m512i sc_hi = _mm512_cvtepi8_epi32(_mm_loadu_si128(sc + 1));
        sx = _mm512_add_epi32(sx, _mm512_mullo_epi32(xs[s], sc_lo));
        sy = _mm512_add_epi32(sy, _mm512_mullo_epi32(ys[s], sc_hi));
    }
    pw__tile32_scale_add(acc, sx, sy, rec + PW__Q6KX_D, xb->d);
}

/* Streams (tile32_avx512.h): two on Intel cores, one elsewhere. One process timing both
 * in turn on the same weight, flushed before each call (25 rounds, median of the
 * per-round ratio), [11008, 4096], an Intel Xeon VM (Sapphire Rapids class): two
 * streams 1.02-1.04x of one on 1 thread, 1.02-1.05x on 2; Q4_K (q4kx_avx512.c) 0.995x,
 * and on the Zen 5 VM of earlier sessions K-quant records read slower as more streams
 * (tile32_avx512.h). Zen 4 streams these records without software prefetch (hw = 1,
 * pw__x86_hw_streams): see q6kx_block. */
static void q6kx_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    if (__atomic_load_n(&pw__x86_intel, __ATOMIC_RELAXED))
        pw__tile32_run(c, o0, o1, i0, i1, 256, PW__Q6KX_RECORD, sizeof(pw__q8_256), q6kx_block, 2,
                       PW__HW_NONE);
    else
        pw__tile32_run(c, o0, o1, i0, i1, 256, PW__Q6KX_RECORD, sizeof(pw__q8_256), q6kx_block, 1,
                       PW__HW_ZEN4);
}

const pw__kernel pw__k_q6_k_q6kx32k4_avx512vnni = PW__Q6KX_KERNEL(
    "avx512vnni", PW_CPU_AVX512F | PW_CPU_AVX512BW | PW_CPU_AVX512VL | PW_CPU_AVX512VNNI, q6kx_run,
    PW__PRIO_AVX512 + 2);
