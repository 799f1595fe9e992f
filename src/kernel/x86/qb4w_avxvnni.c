/*
 * AVX-VNNI (VEX vpdpbusd on ymm) build of qb4w_avx2.c: QD8 x QB4W over the
 * qb4w_n16k8s2 tiles, the same bytes the AVX2 and portable kernels read. The
 * same source, compiled with -mavxvnni (cmake: *_avxvnni.c) and PW_AVXVNNI,
 * which avx2_level.h turns into the _avxvnni name, key, features and priority;
 * the products are then vpdpbusd instead of vpmaddubsw + vpmaddwd, and GEMM
 * micro-tiles have 8 rows instead of 4 (qb4w_avx2.c says why).
 */
#define PW_AVXVNNI 1
#include "kernel/x86/qb4w_avx2.c"
