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
 * tile32_avx512.h): prefetches its own bytes further on, then its dots, the record
 * read in address order: its 16 lines of values by pw__tile32_load_lines8, then the d
 * (its address passes through an empty asm that depends on the last line loaded).
 * Written as plain loads, GCC's scheduler hoisted some of them and the d ahead of others
 * (offsets 0, 64, 1024, 128, 320, 768, ... in the record), and Zen 4, whose hardware
 * prefetcher streams these records (pw__x86_hw_streams), read them a tenth slower: one
 * build switched at run time (not in the tree), packwise bench --formats Q8_0 --shapes
 * 11008x4096,4096x4096 --batch 1 --threads 1,2, three rounds in turn, fraction of the
 * read, 1 thread: 75.3-81.4% (GCC's order) against 85.3-96.3% (address order); 2
 * threads 77.5-88.9 against 82.4-88.6. (The AVX2 kernel, q8x_avx2.c, read the same
 * bytes at 92.3-98.8 / 84.5-91.3 in those rounds.) Q4_0's records (q4x_avx512.c), read
 * the same way, measured no change: 91.7-99.0 against 92.3-96.9. */
Q8X_INLINE void q8x_block(const uint8_t *rec, const uint8_t *xbp, int pf, __m512 acc[2]) {
    const pw__q8_32 *xb = (const pw__q8_32 *)xbp;
    if (pf) pw__tile32_prefetch_near_pf(rec, PW__Q8X_RECORD, pf);
    __m512i w[16];
    pw__tile32_load_lines8(rec, w, _mm512_setzero_si512());
    pw__tile32_load_lines8(rec + 512, w + 8, w[7]);
    const uint8_t *d = rec + PW__Q8X_SCALES;
    __asm__("" : "+r"(d) : "v"(w[15]));
    const __m512i c = _mm512_set1_epi32(-128 * xb->sum);
    __m512i lo = c, hi = c;
#pragma GCC unroll 8
    for (int s = 0; s < 8; ++s) {
        const __m512i a = pw__tile32_bcast4(xb->qs + 4 * s);
        lo = _mm512_dpbusd_epi32(lo, w[2 * s], a);
        hi = _mm512_dpbusd_epi32(hi, w[2 * s + 1], a);
    }
    pw__tile32_scale_add(acc, lo, hi, d, xb->d);
}

/* The same record at 256 bits, where pw__x86_gemv_ymm says so (AMD Zen 4, whose
 * AVX-512 units are 256 bits wide) and on Zen 5 (q8x_run): four chains of EVEX vpdpbusd on ymm, ymm q of step
 * s the 32 bytes at 128 s + 32 q (rows 8q .. 8q+7, as the AVX2 kernel reads them), in
 * address order; the dots of rows 0..15 and 16..31 then joined into the zmm the float
 * step takes. The same integers and the same float step as q8x_block: the same bits.
 * On Zen 4 the AVX2 kernel (q8x_avx2.c, sign trick, more work a record) read these
 * bytes faster than q8x_block did; this reads them near as fast. One build switched at
 * run time (not in the tree), packwise bench --formats Q8_0 --shapes
 * 11008x4096,4096x4096 --batch 1 --threads 1,2, three rounds in turn, fraction of the
 * read, [11008, 4096] / [4096, 4096]: 1 thread q8x_block 83.5-88.0% / 81.3-92.5%,
 * this 88.7-89.6 / 93.2-98.6 (the AVX2 kernel 92.4-96.3 / 94.8-97.1); 2 threads
 * 79.2-83.6 / 83.2-86.6, this 83.0-84.3 / 85.9-89.2 (AVX2 88.5-90.7 / 84.2-89.8).
 * Three more rounds of this: 87.1-91.1 / 91.4-98.7 on 1 thread. With 2 streams
 * instead of 4 it measured the same (87.9-90.7 / 85.7-98.8), with 1 lower (85.5-87.3
 * / 85.9-90.0); 512-bit loads two lines a step in address order (an asm chain) 85.4-86.2
 * / 84.4-86.3, 256-bit loads joined into zmm 83.0-86.8 / 81.7-90.0: the width of the
 * arithmetic, not the loads, is what changed. */
Q8X_INLINE void q8x_block_ymm(const uint8_t *rec, const uint8_t *xbp, int pf, __m512 acc[2]) {
    const pw__q8_32 *xb = (const pw__q8_32 *)xbp;
    if (pf) pw__tile32_prefetch_pf(rec, PW__Q8X_RECORD, pf);
    const __m256i c = _mm256_set1_epi32(-128 * xb->sum);
    __m256i dq[4] = {c, c, c, c};
#pragma GCC unroll 8
    for (int s = 0; s < 8; ++s) {
        const __m256i a = _mm256_castps_si256(
            _mm256_broadcast_ss((const float *)(const void *)(xb->qs + 4 * s)));
#pragma GCC unroll 4
        for (int q = 0; q < 4; ++q)
            dq[q] = _mm256_dpbusd_epi32(
                dq[q], _mm256_loadu_si256((const __m256i *)(rec + 128 * s + 32 * q)), a);
    }
    const __m512i lo = _mm512_inserti64x4(_mm512_castsi256_si512(dq[0]), dq[1], 1);
    const __m512i hi = _mm512_inserti64x4(_mm512_castsi256_si512(dq[2]), dq[3], 1);
    pw__tile32_scale_add(acc, lo, hi, rec + PW__Q8X_SCALES, xb->d);
}

/* Four streams (q4x_avx512.c has the measurements). On Zen 5 (pw__x86_zen5) the Zen 4
 * way: q8x_block_ymm, its stream left to the hardware. On an AMD EPYC Zen 5 VM (2 vCPUs;
 * one core read a flushed weight at 30-41 GB/s that day), PACKWISE_TUNE=zen4 against
 * the Zen 5 settings then shipped (q8x_block, two streams, prefetch into L1 2 KiB
 * ahead), all in turn: packwise bench --formats Q8_0 (with the others) --shapes
 * 11008x4096,4096x4096 --batch 1 --threads 1,2, two rounds, fraction of the read, 1
 * thread 0.99-1.00 against 0.93-0.97; a decode step (packwise bench --step --formats
 * Q8_0, seven runs each, layer time) 1 thread 5484-7106 us (all but one 5484-6408)
 * against 6662-7462, 2 threads 3202-3682 against 3617-3946 where the machine was
 * quiet. Earlier the same day, against four streams with that prefetch, two streams
 * had read 0.85-0.93 against 0.82-0.86 (1 thread [11008, 4096], five rounds). */
static void q8x_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    if (__atomic_load_n(&pw__x86_gemv_ymm, __ATOMIC_RELAXED) ||
        __atomic_load_n(&pw__x86_zen5, __ATOMIC_RELAXED))
        pw__tile32_run(c, o0, o1, i0, i1, 32, PW__Q8X_RECORD, sizeof(pw__q8_32), q8x_block_ymm, 4,
                       PW__HW_ZEN4 | PW__HW_ZEN5);
    else
        pw__tile32_run(c, o0, o1, i0, i1, 32, PW__Q8X_RECORD, sizeof(pw__q8_32), q8x_block, 4, PW__HW_ZEN4);
}

const pw__kernel pw__k_q8_0_q8x32k4_avx512vnni = PW__Q8X_KERNEL(
    "avx512vnni", PW_CPU_AVX512F | PW_CPU_AVX512BW | PW_CPU_AVX512VL | PW_CPU_AVX512VNNI, q8x_run,
    PW__PRIO_AVX512 + 2);
