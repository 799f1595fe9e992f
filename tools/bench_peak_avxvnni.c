/*
 * AVX-VNNI (VEX-encoded vpdpbusd on ymm, for CPUs with VNNI but without
 * AVX-512): the int8 peak of the avxvnni level.
 *
 *   acc[j] (8 x i32) += sum over 4 of a (32 x u8) * b (32 x s8)    j = 0..11
 *
 * 32 multiply-accumulates (64 ops) per instruction, the products summed into
 * int32 exactly. This is the level's ceiling: one instruction does what AVX2
 * needs a vpmaddubsw and an add for, and the AVX2 sequence (bench_peak_avx2.c),
 * which kernels at this level may still use, is slower. Zen 5 issues two
 * vpdpbusd ymm a cycle with a latency of about 4 cycles, so eight independent
 * chains would do; twelve leave a margin.
 *
 * The loop is inline assembly with the accumulators in ymm0-ymm11. The
 * intrinsics loop it replaces (the same twelve chains) needed only fourteen
 * registers, yet GCC 12 stored most accumulators to the stack every
 * iteration: 236 GOP/s on one thread of a Zen 5 EPYC VM, against 425-435
 * GOP/s for this loop (12 chains; 8 chains: 385-395, 4 chains: about 217, the
 * latency bound), and 350-375 for the AVX2 ceiling on the same machine.
 */
#if !defined(__AVXVNNI__)
#error "bench_peak_avxvnni.c needs -mavxvnni (tools/CMakeLists.txt sets it)"
#endif

#include "bench.h"

#include <immintrin.h>

/* {vex}: without it the assembler picks the EVEX (AVX512-VNNI) encoding. */
#define PW__STEP(acc) "%{vex%} vpdpbusd %[b], %[a], %%ymm" #acc "\n\t"

double pw_bench_int8_avxvnni(uint64_t iters) {
    if (iters == 0) return 0.0;
    const __m256i a = _mm256_set1_epi8(1);
    const __m256i b = _mm256_set1_epi16((short)0xFF01); /* bytes +1, -1: the sums stay 0 */
    uint64_t n = iters;
    __asm__ volatile(
        "vpxor %%xmm0, %%xmm0, %%xmm0\n\t"
        "vmovdqa %%ymm0, %%ymm1\n\t vmovdqa %%ymm0, %%ymm2\n\t vmovdqa %%ymm0, %%ymm3\n\t"
        "vmovdqa %%ymm0, %%ymm4\n\t vmovdqa %%ymm0, %%ymm5\n\t vmovdqa %%ymm0, %%ymm6\n\t"
        "vmovdqa %%ymm0, %%ymm7\n\t vmovdqa %%ymm0, %%ymm8\n\t vmovdqa %%ymm0, %%ymm9\n\t"
        "vmovdqa %%ymm0, %%ymm10\n\t vmovdqa %%ymm0, %%ymm11\n\t"
        "1:\n\t"
        PW__STEP(0) PW__STEP(1) PW__STEP(2) PW__STEP(3) PW__STEP(4) PW__STEP(5)
        PW__STEP(6) PW__STEP(7) PW__STEP(8) PW__STEP(9) PW__STEP(10) PW__STEP(11)
        "dec %[n]\n\t"
        "jnz 1b\n\t"
        : [n] "+r"(n)
        : [a] "x"(a), [b] "x"(b)
        : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10",
          "xmm11", "cc");
    return (double)iters * 12.0 * 32.0 * 2.0;
}

#undef PW__STEP
