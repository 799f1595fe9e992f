#if !defined(__AVX512F__) || !defined(__AVX512BW__) || !defined(__AVX512VL__) ||            \
    !defined(__AVX512VNNI__) || !defined(__F16C__)
#error "q4x_avx512.c needs AVX-512 F/BW/VL/VNNI and F16C (the build sets them for *_avx512.c)"
#endif
/*
 * AVX-512 VNNI GEMV over the q4x32k4 family (layout in kernel/q4x.h): Q4_0
 * with its nibbles rearranged so that one 64-byte load is one 4-value k step
 * of all 32 rows of a tile. Activations are pw__q8_32 rows; y[i, o] for o in
 * [o0, o1), i in [i0, i1) (n > 1 repeats the tile per row of X: GEMM speed
 * comes from the i8g kernels).
 *
 * One block record (576 bytes) of a tile, one row of X, c = -8 * x.sum:
 *
 *   v_s = bytes [64s, 64s + 64)      s = 0..7; lane r: rows r (lo), r+16 (hi)
 *   a_s = bcast(x.qs[4s .. 4s+3])
 *   lo  = c      + sum_s dpbusd(v_s & 0x0F, a_s)    rows 0..15, offset included
 *   all = 17 c   + sum_s dpbusd(v_s, a_s)           q[r] + 16 q[r+16], unmasked
 *   hi  = (all - lo) >> 4                           rows 16..31: exact, a multiple of 16
 *   acc_lo += f32(lo) * f32(d[0..15]) * x.d,  acc_hi += f32(hi) * f32(d[16..31]) * x.d
 *
 * Taking the high nibbles unmasked and subtracting is why a tile has 32 rows:
 * each 64-byte load costs one mask and two dot products, and the scale work
 * is per 16 rows. About 38 vector instructions per record (32 blocks of the
 * file) where a 16-row tile with a mask per nibble needs 48 and the row-major
 * kernel about 90: a cold GEMV is a stream from memory that the core must keep
 * up with, and arithmetic time per byte shows in it even when the weight is
 * far from the caches. Integer range: |all| <= 32 * 255 * 128 + 136 * 32 * 128.
 *
 * Rows past `out` in the last tile are zero in the packed bytes; their lanes
 * are computed and not stored (masked stores), so edge tiles take the same path.
 *
 * Tiles lie one after another, so a thread's range is one linear stream. Each
 * record prefetches its lines further on (pw__tile32_prefetch: tile32_prefetch.h
 * gives the distance and the measurements that chose it; on an earlier session's machine, L2
 * 16 KiB + L1 2 KiB measured best, 1.53-1.59 ms against 1.59-1.66 for L2 alone).
 */
#include "kernel/q4x.h"
#include "kernel/x86/tile32_avx512.h"

#define Q4X_INLINE static inline __attribute__((always_inline))

/* One record with one pw__q8_32 activation block (the record function of
 * tile32_avx512.h): prefetches its own bytes further on, then its dots. */
Q4X_INLINE void q4x_block(const uint8_t *rec, const uint8_t *xbp, int pf, __m512 acc[2]) {
    const pw__q8_32 *xb = (const pw__q8_32 *)xbp;
    if (pf) pw__tile32_prefetch(rec, PW__Q4X_RECORD);
    const __m512i m_lo = _mm512_set1_epi8(0x0F);
    const int32_t c = -8 * xb->sum;
    __m512i lo = _mm512_set1_epi32(c), all = _mm512_set1_epi32(17 * c);
#pragma GCC unroll 8
    for (int s = 0; s < 8; ++s) {
        const __m512i v = _mm512_loadu_si512(rec + 64 * s);
        const __m512i a = pw__tile32_bcast4(xb->qs + 4 * s);
        lo = _mm512_dpbusd_epi32(lo, _mm512_and_si512(v, m_lo), a);
        all = _mm512_dpbusd_epi32(all, v, a);
    }
    const __m512i hi = _mm512_srai_epi32(_mm512_sub_epi32(all, lo), 4);
    pw__tile32_scale_add(acc, lo, hi, rec + PW__Q4X_SCALES, xb->d);
}

/* Zen 4 streams these records without software prefetch (hw = 1, tile32_avx512.h).
 *
 * Streams: four, except on Zen 5 (pw__x86_gemv_fewer), which read these records and Q8_0's
 * (q8x_avx512.c) faster as two, prefetch kept. One build choosing at run time (not in the
 * tree), an AMD EPYC Zen 5 VM (2 vCPUs, shared), packwise bench --formats Q4_0,Q8_0
 * --shapes 11008x4096,4096x4096 --batch 1 --threads 1,2, the choices in turn, six rounds
 * over two runs, fraction of the read, four streams / two:
 *   Q4_0 [11008, 4096] 1 thread 79-91% / 90-98, 2 threads 83-90 / 86-93;
 *        [4096, 4096]  1 thread 75-83 / 83-96,  2 threads 72-79 / 82-87;
 *   Q8_0 [11008, 4096] 1 thread 75-81 / 82-88,  2 threads 79-86 / 83-93;
 *        [4096, 4096]  1 thread 66-78 / 78-89,  2 threads 69-78 / 73-82.
 * Leaving the streams to the hardware there as on Zen 4 read faster still in some rounds
 * (two streams: 81-106%) but above the per-case ceiling in several (fractions 1.01-1.06,
 * which the bench flags as an invalid ceiling) and lower in others; Q4_K and Q6_K read
 * 55-76% without software prefetch against 87-100 with it, and the AVX2 level's Q4_0 and
 * Q8_0 (two streams already) lost 5-30 points without it: Zen 5 keeps the prefetch. */
static void q4x_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    if (__atomic_load_n(&pw__x86_gemv_fewer, __ATOMIC_RELAXED))
        pw__tile32_run(c, o0, o1, i0, i1, 32, PW__Q4X_RECORD, sizeof(pw__q8_32), q4x_block, 2, 1);
    else
        pw__tile32_run(c, o0, o1, i0, i1, 32, PW__Q4X_RECORD, sizeof(pw__q8_32), q4x_block, 4, 1);
}

const pw__kernel pw__k_q4_0_q4x32k4_avx512vnni = PW__Q4X_KERNEL(
    "avx512vnni", PW_CPU_AVX512F | PW_CPU_AVX512BW | PW_CPU_AVX512VL | PW_CPU_AVX512VNNI, q4x_run,
    PW__PRIO_AVX512 + 2);
