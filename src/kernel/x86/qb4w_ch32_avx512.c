/* The QB4W AVX-512 kernel's GEMV and GEMM at B = 256 (32 chunks a block): kernel/x86/qb4w_avx512.h. */
#include "kernel/x86/qb4w_avx512.h"

PW__QB4W_AVX512_INSTANCES(32)
