/*
 * The two levels one AVX2 kernel source builds for. Each AVX2 kernel file
 * (rm_q32_avx2.c, rm_k_avx2.c, i8g_avx2.c, qc4w_gemm_avx2.c) is compiled
 * twice: as itself (level avx2) and through a wrapper *_avxvnni.c that
 * defines PW_AVXVNNI and #includes it (level avxvnni; cmake gives *_avxvnni.c
 * -mavxvnni on top of the AVX2 flags). Everything that differs between the two
 * builds comes from here:
 *
 *   PW__AVX2_SYM(pw__k_q4_0_rm)   pw__k_q4_0_rm_avx2 / pw__k_q4_0_rm_avxvnni
 *   PW__AVX2_ISA                  "avx2" / "avxvnni": name suffix, key and isa
 *   PW__AVX2_FEATURES(f)          f / f | PW_CPU_AVXVNNI
 *   PW__AVX2_PRIO                 PW__PRIO_AVX2 (20) / PW__PRIO_AVXVNNI (25)
 *   PW__VNNI                      0 / 1, for `if (PW__VNNI)` in kernel code
 *   pw__dpbusd(acc, u, s)         acc + sum of u * s over each 4 bytes (below)
 *
 * Packed forms are the packers' (i8g, QC4W), shared by both levels: the same
 * bytes serve avx2 and avxvnni kernels, so a weights-cache file made at one
 * level serves the other.
 */
#ifndef PACKWISE_KERNEL_X86_AVX2_LEVEL_H
#define PACKWISE_KERNEL_X86_AVX2_LEVEL_H

#if !defined(__AVX2__)
#error "avx2_level.h is for files built with -mavx2 (*_avx2.c and *_avxvnni.c)"
#endif
#if defined(PW_AVXVNNI) && !defined(__AVXVNNI__)
#error "PW_AVXVNNI builds need -mavxvnni (cmake gives *_avxvnni.c files the flag)"
#endif

#include "kernel/kernel.h"

#include <immintrin.h>

#define PW__AVX2_CAT2(a, b) a##_##b
#define PW__AVX2_CAT(a, b) PW__AVX2_CAT2(a, b)

#if defined(PW_AVXVNNI)
#define PW__AVX2_LEVEL avxvnni
#define PW__AVX2_ISA "avxvnni"
#define PW__AVX2_FEATURES(f) ((f) | PW_CPU_AVXVNNI)
#define PW__AVX2_PRIO PW__PRIO_AVXVNNI
#define PW__VNNI 1
#else
#define PW__AVX2_LEVEL avx2
#define PW__AVX2_ISA "avx2"
#define PW__AVX2_FEATURES(f) (f)
#define PW__AVX2_PRIO PW__PRIO_AVX2
#define PW__VNNI 0
#endif

/* The descriptor symbol of this level: stem ## _avx2 or stem ## _avxvnni. */
#define PW__AVX2_SYM(stem) PW__AVX2_CAT(stem, PW__AVX2_LEVEL)

/*
 * acc[i] + sum over j < 4 of u[4i + j] * s[4i + j]   (u unsigned, s signed bytes)
 *
 * AVX-VNNI: one vpdpbusd. Each product is within [-255 * 128, 255 * 127], four
 * of them within +-130560, added to acc in int32 without saturation: exact for
 * any bytes as long as the caller's running sum stays inside int32.
 * AVX2: vpmaddubsw + vpmaddwd + vpaddd, the same lanes, but vpmaddubsw
 * SATURATES each adjacent pair sum to int16: exact only while every
 * u[2k] s[2k] + u[2k+1] s[2k+1] is within [-32768, 32767]. Code under
 * `if (PW__VNNI)` may rely on the first; code the AVX2 level runs must keep
 * the second.
 */
static inline __attribute__((always_inline)) __m256i pw__dpbusd(__m256i acc, __m256i u, __m256i s) {
#if defined(PW_AVXVNNI)
    return _mm256_dpbusd_avx_epi32(acc, u, s);
#else
    return _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1)));
#endif
}

/* acc[i] + a[2i] * b[2i] + a[2i + 1] * b[2i + 1]   (int16 words, int32 sums): AVX-VNNI's
 * vpdpwssd (no saturation), AVX2's vpmaddwd + vpaddd; the same lanes and values. */
static inline __attribute__((always_inline)) __m256i pw__dpwssd(__m256i acc, __m256i a, __m256i b) {
#if defined(PW_AVXVNNI)
    return _mm256_dpwssd_avx_epi32(acc, a, b);
#else
    return _mm256_add_epi32(acc, _mm256_madd_epi16(a, b));
#endif
}

#endif
