/*
 * AVX-VNNI (VEX-encoded vpdpbusd on ymm, for CPUs with VNNI but without
 * AVX-512): the int8 peak of the machine section.
 *
 *   acc[j] (8 x i32) += sum over 4 of a (32 x u8) * b (32 x s8)    j = 0..11
 *
 * 32 multiply-accumulates per instruction; twelve independent accumulators
 * cover the latency at two issues per cycle, all in registers.
 */
#if !defined(__AVXVNNI__)
#error "bench_peak_avxvnni.c needs -mavxvnni (tools/CMakeLists.txt sets it)"
#endif

#include "bench.h"

#include <immintrin.h>

double pw_bench_int8_avxvnni(uint64_t iters) {
    const __m256i a = _mm256_set1_epi8(3), b = _mm256_set1_epi8(-2);
    /* Distinct starting values: identical chains would be one chain to the compiler. */
    __m256i c0 = _mm256_set1_epi32(0), c1 = _mm256_set1_epi32(1), c2 = _mm256_set1_epi32(2),
            c3 = _mm256_set1_epi32(3), c4 = _mm256_set1_epi32(4), c5 = _mm256_set1_epi32(5),
            c6 = _mm256_set1_epi32(6), c7 = _mm256_set1_epi32(7), c8 = _mm256_set1_epi32(8),
            c9 = _mm256_set1_epi32(9), c10 = _mm256_set1_epi32(10), c11 = _mm256_set1_epi32(11);
    for (uint64_t i = 0; i < iters; ++i) {
        c0 = _mm256_dpbusd_avx_epi32(c0, a, b);
        c1 = _mm256_dpbusd_avx_epi32(c1, a, b);
        c2 = _mm256_dpbusd_avx_epi32(c2, a, b);
        c3 = _mm256_dpbusd_avx_epi32(c3, a, b);
        c4 = _mm256_dpbusd_avx_epi32(c4, a, b);
        c5 = _mm256_dpbusd_avx_epi32(c5, a, b);
        c6 = _mm256_dpbusd_avx_epi32(c6, a, b);
        c7 = _mm256_dpbusd_avx_epi32(c7, a, b);
        c8 = _mm256_dpbusd_avx_epi32(c8, a, b);
        c9 = _mm256_dpbusd_avx_epi32(c9, a, b);
        c10 = _mm256_dpbusd_avx_epi32(c10, a, b);
        c11 = _mm256_dpbusd_avx_epi32(c11, a, b);
    }
    __m256i s = _mm256_add_epi32(
        _mm256_add_epi32(_mm256_add_epi32(_mm256_add_epi32(c0, c1), _mm256_add_epi32(c2, c3)),
                         _mm256_add_epi32(_mm256_add_epi32(c4, c5), _mm256_add_epi32(c6, c7))),
        _mm256_add_epi32(_mm256_add_epi32(c8, c9), _mm256_add_epi32(c10, c11)));
    __m128i h = _mm_add_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
    h = _mm_add_epi32(h, _mm_shuffle_epi32(h, 0x4e));
    h = _mm_add_epi32(h, _mm_shuffle_epi32(h, 0xb1));
    volatile int sink = _mm_cvtsi128_si32(h);
    (void)sink;
    return (double)iters * 12.0 * 32.0 * 2.0;
}
