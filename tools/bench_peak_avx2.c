/*
 * AVX2 loops of the machine section: the int8 peak of the avx2 level, and a
 * streaming read with 32-byte loads.
 *
 * The peak is the fastest sequence that multiplies 8-bit values and adds the
 * products up exactly the way a correct kernel at this level may:
 *
 *   t = vpmaddubsw(a, b)      32 x (u8 * s8), adjacent pairs summed to i16
 *   acc[j] = vpaddw(acc[j], t)                              j = 0..7
 *
 * counted as 32 multiply-accumulates (64 ops) per step. Why this is the
 * ceiling: without VNNI, vpmaddubsw is the only instruction doing 32 8-bit
 * multiplies (vpmaddwd and vpmullw do 16), and its 16-bit results need at
 * least one add to be accumulated, so every AVX2 kernel spends at least one
 * vpmaddubsw and one add per 32 multiply-accumulates. Kernels widen the
 * int16 sums to int32 (vpmaddwd by ones, then vpaddd) once per one or more
 * steps, as far as their operands' bounds let an int16 sum stay exact (the
 * QC4W kernel adds two vpmaddubsw results with vpaddw before widening); this
 * loop widens never, the limit of that amortization. Here a = 1 and b
 * alternates +1, -1, so each pair sums to 0 and the int16 sums are exact
 * however long the loop runs.
 *
 * The loop is inline assembly: eight accumulators (the chains are one vpaddw
 * long, so eight are plenty; twelve measured 3-4% slower), two temporaries
 * and a, b all in ymm registers, so the compiler can neither spill a chain to
 * the stack nor hoist or merge the loop-invariant products.
 * The intrinsics loop it replaces (vpmaddubsw, vpmaddwd by ones, vpaddd, eight
 * chains) needed eighteen registers and GCC kept its accumulators on the
 * stack (store forwarding in every chain): 145 GOP/s on one thread of a
 * Zen 5 EPYC VM, below the QC4W kernel's 154 (106% of "peak"). On the same
 * machine (one thread, about 3.3 GHz, best of 9):
 *
 *   vpmaddubsw alone, no accumulation               405-435 GOP/s (2 a cycle)
 *   this loop (vpmaddubsw + vpaddw)                 350-395 GOP/s
 *   vpmaddubsw x2, vpaddw, vpmaddwd, vpaddd (QC4W)  255-290 GOP/s
 *   vpmaddubsw, vpmaddwd, vpaddd in registers       205-215 GOP/s
 *
 * (vpmaddwd takes a multiplier slot, so the fewer widenings the faster.) The
 * read loop prefetches as the AVX-512 one does.
 */
#if !defined(__AVX2__)
#error "bench_peak_avx2.c needs -mavx2 (tools/CMakeLists.txt sets it)"
#endif

#include "bench.h"

#include <immintrin.h>

/* One step: t = vpmaddubsw(a, b), acc += t (int16). */
#define PW__STEP(acc, t)                                                                          \
    "vpmaddubsw %[b], %[a], %%ymm" #t "\n\t"                                                      \
    "vpaddw %%ymm" #t ", %%ymm" #acc ", %%ymm" #acc "\n\t"

double pw_bench_int8_avx2(uint64_t iters) {
    if (iters == 0) return 0.0;
    const __m256i a = _mm256_set1_epi8(1);
    const __m256i b = _mm256_set1_epi16((short)0xFF01); /* bytes +1, -1: pairs sum to 0 */
    uint64_t n = iters;
    __asm__ volatile(
        "vpxor %%xmm0, %%xmm0, %%xmm0\n\t"
        "vmovdqa %%ymm0, %%ymm1\n\t vmovdqa %%ymm0, %%ymm2\n\t vmovdqa %%ymm0, %%ymm3\n\t"
        "vmovdqa %%ymm0, %%ymm4\n\t vmovdqa %%ymm0, %%ymm5\n\t vmovdqa %%ymm0, %%ymm6\n\t"
        "vmovdqa %%ymm0, %%ymm7\n\t"
        "1:\n\t"
        PW__STEP(0, 8) PW__STEP(1, 9) PW__STEP(2, 8) PW__STEP(3, 9)
        PW__STEP(4, 8) PW__STEP(5, 9) PW__STEP(6, 8) PW__STEP(7, 9)
        "dec %[n]\n\t"
        "jnz 1b\n\t"
        : [n] "+r"(n)
        : [a] "x"(a), [b] "x"(b)
        : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "cc");
    return (double)iters * 8.0 * 32.0 * 2.0;
}

#undef PW__STEP

uint64_t pw_bench_read_avx2(const void *p, size_t bytes, int prefetch, int near, int streams,
                            int work) {
    const size_t part = bytes / (size_t)streams;
    __m256i s0 = _mm256_setzero_si256(), s1 = s0, s2 = s0, s3 = s0;
    for (size_t o = 0; o < part; o += 256)
        for (int k = 0; k < streams; ++k) {
            /* 256 bytes a step: four whole cache lines, two loads each. */
            const __m256i *v = (const __m256i *)((const uint8_t *)p + (size_t)k * part + o);
            for (int l = 0; (prefetch | near) && l < 4; ++l) pw_bench_prefetch(v + 2 * l, prefetch, near);
            __m256i a = _mm256_add_epi64(_mm256_load_si256(v), _mm256_load_si256(v + 1));
            __m256i b = _mm256_add_epi64(_mm256_load_si256(v + 2), _mm256_load_si256(v + 3));
            __m256i c = _mm256_add_epi64(_mm256_load_si256(v + 4), _mm256_load_si256(v + 5));
            __m256i d = _mm256_add_epi64(_mm256_load_si256(v + 6), _mm256_load_si256(v + 7));
            PW_BENCH_PACE(work, _mm256_madd_epi16, "+x", a, b, c, d);
            s0 = _mm256_add_epi64(s0, a);
            s1 = _mm256_add_epi64(s1, b);
            s2 = _mm256_add_epi64(s2, c);
            s3 = _mm256_add_epi64(s3, d);
        }
    uint32_t lanes[8];
    _mm256_storeu_si256((__m256i *)(void *)lanes,
                        _mm256_add_epi64(_mm256_add_epi64(s0, s1), _mm256_add_epi64(s2, s3)));
    return pw_bench_lanes_sum(lanes, 8);
}

/* One PW_BENCH_RECORD-byte record (bench.h), each line's two halves added into one
 * chain step; pf: prefetch a record's worth further on. */
static inline __attribute__((always_inline)) __m256i record256(const uint8_t *rec, int pf, __m256i acc) {
    __m256i part[8];
#pragma GCC unroll 8
    for (int t = 0; t < 8; ++t) {
        if (pf)
            for (int l = 0; l < 9; ++l)
                _mm_prefetch((const char *)rec + 576 * t + PW_BENCH_PREFETCH_BYTES + 64 * l, _MM_HINT_T0);
        __m256i a = _mm256_setzero_si256();
#pragma GCC unroll 8
        for (int l = 8 * t; l < 8 * t + 8; ++l) {
            const __m256i v = _mm256_add_epi8(_mm256_loadu_si256((const __m256i *)(rec + 64 * l)),
                                              _mm256_loadu_si256((const __m256i *)(rec + 64 * l + 32)));
            a = _mm256_madd_epi16(_mm256_xor_si256(a, v), v);
        }
        part[t] = a;
    }
#pragma GCC unroll 8
    for (int l = 0; l < 8; ++l)
        acc = _mm256_add_epi32(
            _mm256_add_epi32(acc, part[l]),
            _mm256_add_epi32(_mm256_loadu_si256((const __m256i *)(rec + 4096 + 64 * l)),
                             _mm256_loadu_si256((const __m256i *)(rec + 4096 + 64 * l + 32))));
    return acc;
}

uint64_t pw_bench_read_records_avx2(const void *p, size_t bytes, int streams) {
    const uint8_t *b = p;
    __m256i acc = _mm256_setzero_si256();
    size_t done;
    PW_BENCH_RECORDS(record256, acc, b, bytes, streams, done);
    for (size_t r = done; r + 32 <= bytes; r += 32)
        acc = _mm256_add_epi32(acc, _mm256_loadu_si256((const __m256i *)(b + r)));
    uint32_t lanes[8];
    _mm256_storeu_si256((__m256i *)(void *)lanes, acc);
    return pw_bench_lanes_sum(lanes, 8);
}
