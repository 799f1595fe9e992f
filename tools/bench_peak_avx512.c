/*
 * AVX-512 loops of the machine section: the int8 peak as VNNI vpdpbusd on zmm
 * (u8 x s8, 4 products summed into each int32 lane: 64 multiply-accumulates
 * per instruction), and a streaming read with 64-byte loads.
 *
 *   acc[j] (16 x i32) += sum over 4 of a (64 x u8) * b (64 x s8)    j = 0..15
 *
 * Sixteen independent accumulators cover vpdpbusd's latency at two issues per
 * cycle; everything stays in registers, so the loop measures the execution
 * units, not memory. The loop is inline assembly with the accumulators in
 * zmm16-zmm31: the intrinsics loop it replaces (the same sixteen chains) left
 * GCC 12 copying every chain at every step (a vmovdqa32 beside each vpdpbusd):
 * 621 GOP/s on one thread of the Zen 5 EPYC VM, which put the QC4W GEMM at 106%
 * of that "peak"; this loop measures 840-846 (12 chains: 804-829).
 */
#if !defined(__AVX512F__) || !defined(__AVX512BW__) || !defined(__AVX512VNNI__)
#error "bench_peak_avx512.c needs -mavx512f -mavx512bw -mavx512vnni (tools/CMakeLists.txt sets them)"
#endif

#include "bench.h"

#include <immintrin.h>

#define PW__STEP(acc) "vpdpbusd %[b], %[a], %%zmm" #acc "\n\t"
double pw_bench_int8_avx512(uint64_t iters) {
    if (iters == 0) return 0.0;
    const __m512i a = _mm512_set1_epi8(1);
    const __m512i b = _mm512_set1_epi16((short)0xFF01); /* bytes +1, -1: the sums stay 0 */
    uint64_t n = iters;
    /* zmm16-31 hold the chains (EVEX-only registers, as vpdpbusd zmm is EVEX anyway); a
     * and b come in others */
    __asm__ volatile(
        "vpxord %%zmm16, %%zmm16, %%zmm16\n\t"
        "vmovdqa64 %%zmm16, %%zmm17\n\t vmovdqa64 %%zmm16, %%zmm18\n\t vmovdqa64 %%zmm16, %%zmm19\n\t"
        "vmovdqa64 %%zmm16, %%zmm20\n\t vmovdqa64 %%zmm16, %%zmm21\n\t vmovdqa64 %%zmm16, %%zmm22\n\t"
        "vmovdqa64 %%zmm16, %%zmm23\n\t vmovdqa64 %%zmm16, %%zmm24\n\t vmovdqa64 %%zmm16, %%zmm25\n\t"
        "vmovdqa64 %%zmm16, %%zmm26\n\t vmovdqa64 %%zmm16, %%zmm27\n\t"
        "vmovdqa64 %%zmm16, %%zmm28\n\t vmovdqa64 %%zmm16, %%zmm29\n\t vmovdqa64 %%zmm16, %%zmm30\n\t vmovdqa64 %%zmm16, %%zmm31\n\t"
        "1:\n\t"
        PW__STEP(16) PW__STEP(17) PW__STEP(18) PW__STEP(19) PW__STEP(20) PW__STEP(21)
        PW__STEP(22) PW__STEP(23) PW__STEP(24) PW__STEP(25) PW__STEP(26) PW__STEP(27)
        PW__STEP(28) PW__STEP(29) PW__STEP(30) PW__STEP(31)
        "dec %[n]\n\t"
        "jnz 1b\n\t"
        : [n] "+r"(n)
        : [a] "v"(a), [b] "v"(b)
        : "xmm16", "xmm17", "xmm18", "xmm19", "xmm20", "xmm21", "xmm22", "xmm23", "xmm24", "xmm25",
          "xmm26", "xmm27", "xmm28", "xmm29", "xmm30", "xmm31", "cc");
    return (double)iters * 16.0 * 64.0 * 2.0;
}
#undef PW__STEP

uint64_t pw_bench_read_avx512(const void *p, size_t bytes, int prefetch, int near, int streams,
                              int work) {
    const size_t part = bytes / (size_t)streams;
    __m512i s0 = _mm512_setzero_si512(), s1 = s0, s2 = s0, s3 = s0;
    for (size_t o = 0; o < part; o += 256)
        for (int k = 0; k < streams; ++k) {
            const __m512i *v = (const __m512i *)((const uint8_t *)p + (size_t)k * part + o);
            for (int l = 0; (prefetch | near) && l < 4; ++l) pw_bench_prefetch(v + l, prefetch, near);
            __m512i a = _mm512_load_si512(v), b = _mm512_load_si512(v + 1);
            __m512i c = _mm512_load_si512(v + 2), d = _mm512_load_si512(v + 3);
            PW_BENCH_PACE(work, _mm512_madd_epi16, "+v", a, b, c, d);
            s0 = _mm512_add_epi64(s0, a);
            s1 = _mm512_add_epi64(s1, b);
            s2 = _mm512_add_epi64(s2, c);
            s3 = _mm512_add_epi64(s3, d);
        }
    uint32_t lanes[16];
    _mm512_storeu_si512(lanes, _mm512_add_epi64(_mm512_add_epi64(s0, s1), _mm512_add_epi64(s2, s3)));
    return pw_bench_lanes_sum(lanes, 16);
}

/* One PW_BENCH_RECORD-byte record (bench.h); pf: prefetch a record's worth further on. */
static inline __attribute__((always_inline)) __m512i record512(const uint8_t *rec, int pf, __m512i acc) {
    __m512i part[8];
#pragma GCC unroll 8
    for (int t = 0; t < 8; ++t) {
        if (pf)
            for (int l = 0; l < 9; ++l)
                _mm_prefetch((const char *)rec + 576 * t + PW_BENCH_PREFETCH_BYTES + 64 * l, _MM_HINT_T0);
        __m512i a = _mm512_setzero_si512();
#pragma GCC unroll 8
        for (int l = 8 * t; l < 8 * t + 8; ++l) {
            const __m512i v = _mm512_loadu_si512(rec + 64 * l);
            a = _mm512_madd_epi16(_mm512_xor_si512(a, v), v);
        }
        part[t] = a;
    }
#pragma GCC unroll 8
    for (int l = 0; l < 8; ++l)
        acc = _mm512_add_epi32(acc, _mm512_add_epi32(part[l], _mm512_loadu_si512(rec + 4096 + 64 * l)));
    return acc;
}

uint64_t pw_bench_read_records_avx512(const void *p, size_t bytes, int streams) {
    const uint8_t *b = p;
    __m512i acc = _mm512_setzero_si512();
    size_t done;
    PW_BENCH_RECORDS(record512, acc, b, bytes, streams, done);
    for (size_t r = done; r + 64 <= bytes; r += 64)
        acc = _mm512_add_epi32(acc, _mm512_loadu_si512(b + r));
    uint32_t lanes[16];
    _mm512_storeu_si512(lanes, acc);
    return pw_bench_lanes_sum(lanes, 16);
}
