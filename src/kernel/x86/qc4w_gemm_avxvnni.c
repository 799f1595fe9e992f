/*
 * AVX-VNNI (VEX vpdpbusd on ymm) build of qc4w_gemm_avx2.c: QD8 x QC4W over
 * the qc4w_n16k8s2 tiles, the same bytes the AVX2 and AVX-512 VNNI kernels
 * read. The same source, compiled with -mavxvnni (cmake: *_avxvnni.c) and
 * PW_AVXVNNI, which avx2_level.h turns into the _avxvnni name, key, features
 * and priority (25); vpdpbusd for panels of 1 and 2 rows (qc4w_gemm_avx2.c
 * says why not for 4).
 *
 * Measured (packwise bench, [11008, 4096], 1 thread, 3 runs interleaved with
 * PACKWISE_ISA=avx2, load average 2-4): GEMV cold 78-94% of the same run's
 * read (avx2: 83-92%); GEMM n = 128 84-90% of the avxvnni int8 peak, 215-223
 * GFLOP/s (avx2: 118-148% of its own loop, 166-229 GFLOP/s).
 */
#define PW_AVXVNNI 1
#include "kernel/x86/qc4w_gemm_avx2.c"
