/*
 * NEON i8mm build of q4x_dotprod.c: the Q4_0 and Q4_1 GEMVs over the q4x32k4 and
 * q41x32k4 records, the bytes every other kernel of those families reads, with USDOT on
 * the whole bytes (tile32_neon.h says how, q4x_dotprod.c has the loop and its
 * llvm-mca figures). The same source, compiled with +i8mm (cmake: *_i8mm.c) and
 * PW_ARM_I8MM.
 *
 * llvm-mca estimate (llvm 19, scripts/arm_mca.py; docs/arm_mca.md has the sources):
 *   q4xn_run (i8mm), neoverse-v2: 39.05 cycles/iter, 0.068 cycles/weight byte,
 *     14.8 B/cycle: 148% of a core's streaming rate (10.0 B/cycle, assumed, no source)
 *   q4xn_run (i8mm), apple-m2: 46.71 cycles/iter, 0.081 cycles/weight byte,
 *     12.3 B/cycle: 68% of a core's streaming rate (18.1 B/cycle, M1's, assumed)
 *   q41xn_run (i8mm), neoverse-v2: 45.06 cycles/iter, 0.070 cycles/weight byte,
 *     14.2 B/cycle: 142% of a core's streaming rate (10.0 B/cycle, assumed, no source)
 *   q41xn_run (i8mm), apple-m2: 51.71 cycles/iter, 0.081 cycles/weight byte,
 *     12.4 B/cycle: 68% of a core's streaming rate (18.1 B/cycle, M1's, assumed)
 */
#define PW_ARM_I8MM 1
#include "kernel/arm/q4x_dotprod.c"
