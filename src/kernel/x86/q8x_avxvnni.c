/*
 * AVX-VNNI (VEX vpdpbusd on ymm) build of q8x_avx2.c: GEMV and GEMM over the
 * q8x32k4 tiles, the bytes the AVX-512, AVX2 and portable kernels read. The
 * same source, compiled with -mavxvnni (cmake: *_avxvnni.c) and PW_AVXVNNI,
 * which avx2_level.h turns into the _avxvnni names, keys, features and
 * priority; the dots are then vpdpbusd on the stored u = q + 128 with the
 * -128 * sum offset, as the AVX-512 kernel (q8x_avx2.c says how each level sums).
 *
 * Measured (q8x_avx2.c has the command and both levels): packwise bench
 * --formats Q8_0 --shapes 11008x4096 --batch 1,128 --threads 1, three rounds,
 * load average 6: GEMV 71-82% of the read (q8_0_rm_avxvnni 60-76%), GEMM
 * n = 128 49-51% of the avxvnni int8 peak (q8_0_i8g32_avxvnni 35-46%);
 * 52-66% in runs at load average 4.
 */
#define PW_AVXVNNI 1
#include "kernel/x86/q8x_avx2.c"
