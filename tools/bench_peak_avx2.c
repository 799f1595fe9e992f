/*
 * AVX2 loops of the machine section: the int8 peak as the sequence AVX2 int8
 * kernels use for u8 x s8 dot products, and a streaming read with 32-byte
 * loads.
 *
 *   t = vpmaddubsw(a, b[j])   32 x (u8 * s8), adjacent pairs summed to i16
 *   t = vpmaddwd(t, ones)     pairs of i16 summed to i32
 *   acc[j] += t               j = 0..7
 *
 * Counted as 32 multiply-accumulates (64 ops) per step: the widening adds are
 * the price of the ISA, not extra work. The b[j] pass through an empty asm
 * statement each iteration, so the compiler cannot hoist the loop-invariant
 * products out of the loop. The read loop prefetches as the AVX-512 one does.
 */
#if !defined(__AVX2__)
#error "bench_peak_avx2.c needs -mavx2 (tools/CMakeLists.txt sets it)"
#endif

#include "bench.h"

#include <immintrin.h>

double pw_bench_int8_avx2(uint64_t iters) {
    const __m256i a = _mm256_set1_epi8(3), ones = _mm256_set1_epi16(1);
    __m256i b0 = _mm256_set1_epi8(-2), b1 = _mm256_set1_epi8(-1), b2 = _mm256_set1_epi8(1),
            b3 = _mm256_set1_epi8(2), b4 = _mm256_set1_epi8(-3), b5 = _mm256_set1_epi8(3),
            b6 = _mm256_set1_epi8(-4), b7 = _mm256_set1_epi8(4);
    __m256i c0 = _mm256_setzero_si256(), c1 = c0, c2 = c0, c3 = c0, c4 = c0, c5 = c0, c6 = c0,
            c7 = c0;
    for (uint64_t i = 0; i < iters; ++i) {
        __asm__ volatile("" : "+x"(b0), "+x"(b1), "+x"(b2), "+x"(b3), "+x"(b4), "+x"(b5),
                         "+x"(b6), "+x"(b7));
        c0 = _mm256_add_epi32(c0, _mm256_madd_epi16(_mm256_maddubs_epi16(a, b0), ones));
        c1 = _mm256_add_epi32(c1, _mm256_madd_epi16(_mm256_maddubs_epi16(a, b1), ones));
        c2 = _mm256_add_epi32(c2, _mm256_madd_epi16(_mm256_maddubs_epi16(a, b2), ones));
        c3 = _mm256_add_epi32(c3, _mm256_madd_epi16(_mm256_maddubs_epi16(a, b3), ones));
        c4 = _mm256_add_epi32(c4, _mm256_madd_epi16(_mm256_maddubs_epi16(a, b4), ones));
        c5 = _mm256_add_epi32(c5, _mm256_madd_epi16(_mm256_maddubs_epi16(a, b5), ones));
        c6 = _mm256_add_epi32(c6, _mm256_madd_epi16(_mm256_maddubs_epi16(a, b6), ones));
        c7 = _mm256_add_epi32(c7, _mm256_madd_epi16(_mm256_maddubs_epi16(a, b7), ones));
    }
    __m256i s = _mm256_add_epi32(_mm256_add_epi32(_mm256_add_epi32(c0, c1), _mm256_add_epi32(c2, c3)),
                                 _mm256_add_epi32(_mm256_add_epi32(c4, c5), _mm256_add_epi32(c6, c7)));
    __m128i h = _mm_add_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
    h = _mm_add_epi32(h, _mm_shuffle_epi32(h, 0x4e));
    h = _mm_add_epi32(h, _mm_shuffle_epi32(h, 0xb1));
    volatile int sink = _mm_cvtsi128_si32(h);
    (void)sink;
    return (double)iters * 8.0 * 32.0 * 2.0;
}

uint64_t pw_bench_read_avx2(const void *p, size_t bytes) {
    const __m256i *v = (const __m256i *)p;
    __m256i s0 = _mm256_setzero_si256(), s1 = s0, s2 = s0, s3 = s0;
    for (size_t i = 0; i < bytes / 32; i += 8) {
        /* 256 bytes a step: four whole cache lines, two loads each. */
        _mm_prefetch((const char *)(v + i) + PW_BENCH_PREFETCH_BYTES, _MM_HINT_T0);
        s0 = _mm256_add_epi64(s0, _mm256_add_epi64(_mm256_load_si256(v + i), _mm256_load_si256(v + i + 1)));
        s1 = _mm256_add_epi64(s1, _mm256_add_epi64(_mm256_load_si256(v + i + 2), _mm256_load_si256(v + i + 3)));
        s2 = _mm256_add_epi64(s2, _mm256_add_epi64(_mm256_load_si256(v + i + 4), _mm256_load_si256(v + i + 5)));
        s3 = _mm256_add_epi64(s3, _mm256_add_epi64(_mm256_load_si256(v + i + 6), _mm256_load_si256(v + i + 7)));
    }
    const __m256i s = _mm256_add_epi64(_mm256_add_epi64(s0, s1), _mm256_add_epi64(s2, s3));
    const __m128i h = _mm_add_epi64(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
    return (uint64_t)_mm_cvtsi128_si64(h) + (uint64_t)_mm_extract_epi64(h, 1);
}
