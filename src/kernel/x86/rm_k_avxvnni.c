/*
 * AVX-VNNI (VEX vpdpbusd on ymm) build of rm_k_avx2.c: row-major GEMV of the
 * K-quants and ternary formats in both block orders. The same source, compiled
 * with -mavxvnni (cmake: *_avxvnni.c) and PW_AVXVNNI, which avx2_level.h turns
 * into the _avxvnni names, keys, features and priority (25). Only TQ1_0 and
 * TQ2_0 change instructions here: Q2_K..Q6_K fold their sub-block scales into
 * the vpmaddwd that a vpdpbusd would replace (rm_k_avx2.c says more).
 *
 * Measured (packwise bench, [11008, 4096], 1 thread, 3 runs interleaved with
 * PACKWISE_ISA=avx2, load average 2-4): GEMV cold, fraction of the same run's
 * read: Q4_K 54-58% (avx2: 52-54%), Q6_K 64-69% (39-67%): the same
 * instructions, compute-bound at both levels, below the 0.85.
 */
#define PW_AVXVNNI 1
#include "kernel/x86/rm_k_avx2.c"
