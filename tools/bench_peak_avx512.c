/*
 * AVX-512 loops of the machine section: the int8 peak as VNNI vpdpbusd on zmm
 * (u8 x s8, 4 products summed into each int32 lane: 64 multiply-accumulates
 * per instruction), and a streaming read with 64-byte loads.
 *
 *   acc[j] (16 x i32) += sum over 4 of a (64 x u8) * b (64 x s8)    j = 0..15
 *
 * Sixteen independent accumulators cover vpdpbusd's latency (5 cycles) at two
 * issues per cycle; everything stays in registers, so the loop measures the
 * execution units, not memory.
 */
#if !defined(__AVX512F__) || !defined(__AVX512BW__) || !defined(__AVX512VNNI__)
#error "bench_peak_avx512.c needs -mavx512f -mavx512bw -mavx512vnni (tools/CMakeLists.txt sets them)"
#endif

#include "bench.h"

#include <immintrin.h>

static uint32_t lane_sum(__m512i v) {
    uint32_t lanes[16], sum = 0;
    _mm512_storeu_si512(lanes, v);
    for (int i = 0; i < 16; ++i) sum += lanes[i];
    return sum;
}

double pw_bench_int8_avx512(uint64_t iters) {
    const __m512i a = _mm512_set1_epi8(3), b = _mm512_set1_epi8(-2);
    /* Distinct starting values: identical chains would be one chain to the compiler. */
    __m512i c0 = _mm512_set1_epi32(0), c1 = _mm512_set1_epi32(1), c2 = _mm512_set1_epi32(2),
            c3 = _mm512_set1_epi32(3), c4 = _mm512_set1_epi32(4), c5 = _mm512_set1_epi32(5),
            c6 = _mm512_set1_epi32(6), c7 = _mm512_set1_epi32(7), c8 = _mm512_set1_epi32(8),
            c9 = _mm512_set1_epi32(9), c10 = _mm512_set1_epi32(10), c11 = _mm512_set1_epi32(11),
            c12 = _mm512_set1_epi32(12), c13 = _mm512_set1_epi32(13), c14 = _mm512_set1_epi32(14),
            c15 = _mm512_set1_epi32(15);
    for (uint64_t i = 0; i < iters; ++i) {
        c0 = _mm512_dpbusd_epi32(c0, a, b);
        c1 = _mm512_dpbusd_epi32(c1, a, b);
        c2 = _mm512_dpbusd_epi32(c2, a, b);
        c3 = _mm512_dpbusd_epi32(c3, a, b);
        c4 = _mm512_dpbusd_epi32(c4, a, b);
        c5 = _mm512_dpbusd_epi32(c5, a, b);
        c6 = _mm512_dpbusd_epi32(c6, a, b);
        c7 = _mm512_dpbusd_epi32(c7, a, b);
        c8 = _mm512_dpbusd_epi32(c8, a, b);
        c9 = _mm512_dpbusd_epi32(c9, a, b);
        c10 = _mm512_dpbusd_epi32(c10, a, b);
        c11 = _mm512_dpbusd_epi32(c11, a, b);
        c12 = _mm512_dpbusd_epi32(c12, a, b);
        c13 = _mm512_dpbusd_epi32(c13, a, b);
        c14 = _mm512_dpbusd_epi32(c14, a, b);
        c15 = _mm512_dpbusd_epi32(c15, a, b);
    }
    const __m512i s = _mm512_add_epi32(
        _mm512_add_epi32(_mm512_add_epi32(_mm512_add_epi32(c0, c1), _mm512_add_epi32(c2, c3)),
                         _mm512_add_epi32(_mm512_add_epi32(c4, c5), _mm512_add_epi32(c6, c7))),
        _mm512_add_epi32(_mm512_add_epi32(_mm512_add_epi32(c8, c9), _mm512_add_epi32(c10, c11)),
                         _mm512_add_epi32(_mm512_add_epi32(c12, c13), _mm512_add_epi32(c14, c15))));
    /* Keep the chains alive: the sum goes to memory the compiler cannot see through.
     * Lanes are added as unsigned (the chains wrap by design; _mm512_reduce_add_epi32
     * would add them as signed int, which UBSan rightly calls overflow). */
    volatile uint32_t sink = lane_sum(s);
    (void)sink;
    return (double)iters * 16.0 * 64.0 * 2.0;
}

uint64_t pw_bench_read_avx512(const void *p, size_t bytes) {
    const __m512i *v = (const __m512i *)p;
    __m512i s0 = _mm512_setzero_si512(), s1 = s0, s2 = s0, s3 = s0;
    for (size_t i = 0; i < bytes / 64; i += 4) {
        _mm_prefetch((const char *)(v + i) + PW_BENCH_PREFETCH_BYTES, _MM_HINT_T0);
        s0 = _mm512_add_epi64(s0, _mm512_load_si512(v + i));
        s1 = _mm512_add_epi64(s1, _mm512_load_si512(v + i + 1));
        s2 = _mm512_add_epi64(s2, _mm512_load_si512(v + i + 2));
        s3 = _mm512_add_epi64(s3, _mm512_load_si512(v + i + 3));
    }
    uint64_t lanes[8], sum = 0;
    _mm512_storeu_si512(lanes, _mm512_add_epi64(_mm512_add_epi64(s0, s1), _mm512_add_epi64(s2, s3)));
    for (int i = 0; i < 8; ++i) sum += lanes[i];
    return sum;
}
