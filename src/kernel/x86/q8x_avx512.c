#if !defined(__AVX512F__) || !defined(__AVX512BW__) || !defined(__AVX512VL__) ||            \
    !defined(__AVX512VNNI__) || !defined(__F16C__)
#error "q8x_avx512.c needs AVX-512 F/BW/VL/VNNI and F16C (the build sets them for *_avx512.c)"
#endif
/*
 * AVX-512 VNNI GEMV over the q8x32k4 family (layout in kernel/q8x.h): Q8_0
 * rearranged so that one 64-byte load is one 4-value k step of 16 rows of a
 * tile. Activations are pw__q8_32 rows; y[i, o] for o in [o0, o1), i in
 * [i0, i1) (n > 1 repeats the tile per row of X: GEMM speed comes from
 * q8x_gemm_avx512.c, which reads the same bytes).
 *
 * One block record (1088 bytes) of a tile, one row of X, c = -128 * x.sum:
 *
 *   u_s,lo = bytes [128s, 128s + 64)        s = 0..7; lane r: row r,      q + 128
 *   u_s,hi = bytes [128s + 64, 128s + 128)            lane r: row r + 16, q + 128
 *   a_s    = bcast(x.qs[4s .. 4s+3])
 *   lo = c + sum_s dpbusd(u_s,lo, a_s),  hi = c + sum_s dpbusd(u_s,hi, a_s)
 *   acc_lo += f32(lo) * f32(d[0..15]) * x.d,  acc_hi += f32(hi) * f32(d[16..31]) * x.d
 *
 * The weight is the unsigned side of vpdpbusd (stored with its sign bit
 * flipped), the int8 activations the signed side, so the only correction is
 * c, once per block. Integer range: |sum_s dpbusd| <= 32 * 255 * 127 < 2^20,
 * and lo, hi = sum q * a, |.| <= 32 * 128 * 127: exact in int32 and in f32.
 * 16 loads and 16 vpdpbusd per record with no unpacking, where the row-major
 * kernel gathers and permutes 32 rows' blocks: a cold GEMV is a stream from
 * memory that the core must keep up with.
 *
 * Rows past `out` in the last tile are zero blocks in the packed bytes; their
 * lanes are computed and not stored (masked stores).
 *
 * Prefetch: each record fetches its lines further on (pw__tile32_prefetch,
 * tile32_prefetch.h). On an earlier session's machine, GEMV [11008, 4096] cold (caches flushed
 * before each call), 1 thread, one process alternating the kernels, best of 9 x 15
 * calls (ms): L2 16 KiB + L1 2 KiB 1.33 (36 GB/s of the 47.9 MB); L2 16 KiB alone
 * 1.70; L2 8 KiB + L1 2 KiB 1.36; L2 16 KiB + L1 4 KiB 1.45; q8_0_rm_avx512vnni 1.62 in the same
 * run (paired ratio, median of 9: 1.15x).
 */
#include "kernel/q8x.h"
#include "kernel/x86/tile32_avx512.h"

#define Q8X_INLINE static inline __attribute__((always_inline))

/* One record with one pw__q8_32 activation block (the record function of
 * tile32_avx512.h): prefetches its own bytes further on, then its dots. */
Q8X_INLINE void q8x_block(const uint8_t *rec, const uint8_t *xbp, int pf, __m512 acc[2]) {
    const pw__q8_32 *xb = (const pw__q8_32 *)xbp;
    if (pf) pw__tile32_prefetch(rec, PW__Q8X_RECORD);
    const __m512i c = _mm512_set1_epi32(-128 * xb->sum);
    __m512i lo = c, hi = c;
#pragma GCC unroll 8
    for (int s = 0; s < 8; ++s) {
        const __m512i a = pw__tile32_bcast4(xb->qs + 4 * s);
        lo = _mm512_dpbusd_epi32(lo, _mm512_loadu_si512(rec + PW__Q8X_STEP * s), a);
        hi = _mm512_dpbusd_epi32(hi, _mm512_loadu_si512(rec + PW__Q8X_STEP * s + 64), a);
    }
    pw__tile32_scale_add(acc, lo, hi, rec + PW__Q8X_SCALES, xb->d);
}

static void q8x_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    pw__tile32_run(c, o0, o1, i0, i1, 32, PW__Q8X_RECORD, sizeof(pw__q8_32), q8x_block, 4, 1);
}

const pw__kernel pw__k_q8_0_q8x32k4_avx512vnni = PW__Q8X_KERNEL(
    "avx512vnni", PW_CPU_AVX512F | PW_CPU_AVX512BW | PW_CPU_AVX512VL | PW_CPU_AVX512VNNI, q8x_run,
    PW__PRIO_AVX512 + 2);
