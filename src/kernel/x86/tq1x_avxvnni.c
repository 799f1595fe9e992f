/*
 * AVX-VNNI (VEX vpdpbusd on ymm) build of tq1x_avx2.c: GEMV and GEMM over the
 * tq1x32k4 tiles, the bytes the AVX-512, AVX2 and portable kernels read. The same
 * source, compiled with -mavxvnni (cmake: *_avxvnni.c) and PW_AVXVNNI, which
 * avx2_level.h turns into the _avxvnni names, keys, features and priority; the dots
 * are then vpdpbusd into int32 (tq1x_avx2.c says how each level sums).
 */
#define PW_AVXVNNI 1
#include "kernel/x86/tq1x_avx2.c"
