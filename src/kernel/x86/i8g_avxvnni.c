/*
 * AVX-VNNI (VEX vpdpbusd on ymm) build of i8g_avx2.c: GEMM over the i8g32x16k4
 * and i8g16x16k4 packed forms, the same bytes the AVX2, AVX-512 VNNI and scalar
 * kernels read (one pack, one cache entry for every x86 level). The same
 * source, compiled with -mavxvnni (cmake: *_avxvnni.c) and PW_AVXVNNI, which
 * avx2_level.h turns into the _avxvnni names, keys, features and priority
 * (25 + 5) and i8g_avx2.c into one vpdpbusd per k4 step and row of X.
 *
 * Measured (packwise bench --policy fastest, [11008, 4096], n = 128, 1 thread,
 * 3 runs interleaved with PACKWISE_ISA=avx2, load average 2-4), fraction of
 * each level's own int8 peak loop (avxvnni: 256-bit vpdpbusd, 244-257 GOP/s;
 * avx2: vpmaddubsw + vpmaddwd + vpaddd, 141-155 GOP/s):
 *   Q4_0 74-96%, 189-235 GFLOP/s   (avx2: 118-142%, 166-217 GFLOP/s)
 *   Q8_0 69-94%, 176-230           (avx2:  94-98%,  138-147)
 *   Q4_K 67-91%, 171-223           (avx2: 105-123%, 148-191)
 *   Q6_K 82-92%, 211-225           (avx2: 108-119%, 162-184)
 * AVX2 passes 100% of its loop because its u8 form sums P steps in int16
 * (vpaddw) before one vpmaddwd, less work per product than the loop counts.
 */
#define PW_AVXVNNI 1
#include "kernel/x86/i8g_avx2.c"
