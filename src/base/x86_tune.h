/*
 * The x86-64 kernels' per-CPU settings: each vendor's measured choices, set by
 * pw__detect_cpu_features (base/cpu.c) once per process, before any context runs a
 * kernel, from the CPU itself or from PACKWISE_TUNE (pw__tune_from_name). Read by the
 * kernels (kernel/x86/tile32_prefetch.h and the files named below; the measurements
 * are there) and by tests/test_tune.c.
 */
#ifndef PACKWISE_BASE_X86_TUNE_H
#define PACKWISE_BASE_X86_TUNE_H

/* 1 on Intel CPUs: the AVX-512 Q6_K GEMV reads two streams there, one elsewhere
 * (q6kx_avx512.c); the AVX-512 and AVX-VNNI GEMVs prefetch each line twice
 * (tile32_prefetch.h); QC4W and the K-quant GEMMs choose their stream count or scale
 * step by it. */
extern int pw__x86_intel;

/* 1 where the GEMV streams prefetch into L2 (hint T1), 0 into L1 (T0): L2 on Intel
 * cores and on AMD Zen 4 (family 19h with AVX-512), L1 elsewhere (Zen 5, family 1Ah,
 * measured; the rest, Zen 3 among them, untried). */
extern int pw__x86_prefetch_l2;

/* 1 where the core's own prefetcher streams a contiguous record run as fast as software
 * prefetch does or faster: AMD Zen 4 (family 19h with AVX-512). The AVX-512 and AVX2
 * Q4_0, Q8_0, Q4_K, Q6_K and QC4W GEMVs and the AVX-512 QB4W GEMV leave their streams to
 * the hardware there (PW__HW_ZEN4, tile32_prefetch.h; qb4w_avx512.h); the rest keep
 * their prefetches. */
extern int pw__x86_hw_streams;

/* 1 where the AVX-512 Q8_0 GEMV runs its 256-bit record function: AMD Zen 4, measured
 * in q8x_avx512.c. */
extern int pw__x86_gemv_ymm;

/* 1 on AMD Zen 5 (family 1Ah with AVX-512), whose measured settings some kernels take:
 * the AVX2 Q6_K GEMV reads one stream, not two (q6kx_avx2.c); the AVX-512
 * input-block-major K-quant GEMVs prefetch further ahead (rm_kquant_avx512.c) and the
 * Q4_0/IQ4_NL one reads four block columns at once, not eight (rm_q32_avx512.c); the
 * AVX-512 Q4_0, Q8_0 and QC4W GEMVs prefetch PW__TILE32_PF_ZEN5 ahead
 * (tile32_prefetch.h), Q8_0 the Zen 4 way (q8x_avx512.c, PW__HW_ZEN5); the AVX-VNNI
 * Q4_K and Q6_K GEMVs take four steps' activations from one load (q4kx_avx2.c's
 * q4kxa_run, q6kx_avx2.c's q6kxa_run); the AVX-512 GEMVs of the q4x32k4 family and its
 * siblings read rows of whole 256-value groups eight records at a time (q4x_avx512.c). */
extern int pw__x86_zen5;

#endif
