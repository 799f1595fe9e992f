/*
 * NEON i8mm build of q4kx_dotprod.c: the Q4_K GEMV over the q4kx32k4 records, the bytes
 * every other kernel of the family reads, with USDOT on the whole bytes (tile32_neon.h
 * says how, q4kx_dotprod.c has the loop and its llvm-mca figures). The same source,
 * compiled with +i8mm (cmake: *_i8mm.c) and PW_ARM_I8MM.
 *
 * llvm-mca estimate (llvm 19, scripts/arm_mca.py; docs/arm_mca.md has the sources):
 *   q4kxn_run (i8mm), neoverse-v2: 29.29 cycles/iter, 0.051 cycles/weight byte,
 *     19.7 B/cycle: 197% of a core's streaming rate (10.0 B/cycle, assumed, no source)
 *   q4kxn_run (i8mm), apple-m2: 36.37 cycles/iter, 0.063 cycles/weight byte,
 *     15.8 B/cycle: 88% of a core's streaming rate (18.1 B/cycle, M1's, assumed)
 */
#define PW_ARM_I8MM 1
#include "kernel/arm/q4kx_dotprod.c"
