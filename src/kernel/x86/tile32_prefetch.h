/*
 * The GEMV stream's software prefetch, shared by the AVX-512, AVX-VNNI and AVX2
 * kernels of the 32-row tilings (tile32_avx512.h, tile32_avx2.h) and of QC4W
 * (qc4w_gemm_avx512.c, qc4w_gemm_avx2.c; int4_avx512.h has its figures): each part of a
 * record fetches the same bytes PW__TILE32_PF further on, into L1 (hint T0) or, on
 * Intel cores and AMD Zen 4, into L2 (T1): one stream. A thread's range of tiles is one
 * linear stream, so the bytes that far on are the ones it reads next.
 *
 * Measured on this project's machine (AMD EPYC Zen 5 VM, 2 vCPUs, load average 1-2):
 * packwise bench --formats Q4_0,Q8_0,Q4_K,Q6_K --shapes 11008x4096 --batch 1
 * --threads 1, each choice in turn for three rounds, median fraction of the read:
 *
 *              L2 16 KiB + L1 2 KiB   L1 8 KiB            L1 12 KiB
 *              (the kernels' first)
 *   avx512     Q4_0 78.3  Q8_0 79.7   83.5  80.2          87.0  80.4
 *              Q4_K 75.9  Q6_K 79.8   87.3  89.3          83.0  81.8
 *   avx2       Q4_0 76.8  Q8_0 69.5   93.7  81.0          79.8  83.4
 *              Q4_K 68.4  Q6_K 73.1   77.9  78.1          82.3  84.4
 *   avxvnni    Q4_0 70.7  Q8_0 73.0   89.4  89.0          91.4  80.2
 *              Q4_K 73.6  Q6_K 81.1   79.1  90.2          82.1  88.0
 *
 * and at 2 threads (avx512, three rounds) 73.3 / 83.3 / 81.0 / 86.8 against 84.6 /
 * 84.9 / 92.0 / 87.4. 8 and 12 KiB are alike within the machine's noise; L1 4 KiB was
 * as good for Q4_0 and Q8_0 and much worse for Q4_K (57%), whose 4.6 KiB records
 * prefetch in parts; L2 alone (T1, 16 KiB) sat between. An earlier session's machine
 * had measured the L2 + L1 pair best: a figure to measure again on new hardware.
 *
 * On an Intel Xeon VM (Sapphire Rapids class, 2 vCPUs) the same command, the bench's
 * per-case ceilings then including 8 and 16 streams prefetched into L2, 3 rounds of
 * each build in turn, fraction of the read:
 *
 *              L1 8 KiB (T0)          L2 8 KiB (T1)          L2 16 KiB (T1)
 *   avx512     Q4_0 93.0-95.9         96.1-96.4              95.4-98.0
 *              Q8_0 95.0-98.1         98.5-99.9              99.7-100.3
 *              Q4_K 84.6-85.7         89.4-90.7              86.8-89.3
 *              Q6_K 82.6-84.3         84.9-86.5              84.2-86.5
 *              QC4W 82.1-88.5         88.4-90.4              88.7-89.3
 *   avxvnni    (2 rounds) Q4_0 84.8-88.7 / 90.0-91.6 (T0 / T1 8 KiB), Q8_0 95.1-95.5 /
 *              90.8-95.8, Q4_K 77.7-81.3 / 84.1-86.7, Q6_K 79.2-80.3 / 78.4-85.7,
 *              QC4W 76.7-80.1 / 78.1-85.2
 *   avx2       Q4_0 84.8-85.2 / 87.4-88.5, Q8_0 83.4-88.5 / 84.9-89.5, Q4_K 75.6-76.3 /
 *              81.9-83.1, Q6_K 75.6-77.7 / 74.6-77.8, QC4W 74.7-76.7 / 78.1-79.2
 *
 * so Intel cores prefetch into L2 (an L2 prefetch holds no L1 fill buffer while the
 * line comes from memory, and Intel cores have fewer of those than Zen's L1 has miss
 * buffers) and the others into L1, as measured on Zen 5.
 *
 * On an AMD EPYC VM of family 19h (Zen 4, Genoa; AVX-512 in two 256-bit halves; 2 vCPUs,
 * 1 MiB L2 each, 32 MiB L3), L1 was the worst of the three: the same command with
 * --threads 1,2, the hint switched at run time in one build, two rounds in turn, fraction
 * of the read (1 thread / 2 threads), avx512:
 *
 *              L1 8 KiB (T0)               L2 8 KiB (T1)
 *   Q4_0       70.5 61.3 / 66.5 64.6       77.5 74.0 / 81.2 89.0
 *   Q8_0       57.5 63.7 / 75.2 69.2       76.9 71.9 / 85.3 86.0
 *   Q4_K       55.0 48.9 / 70.2 72.5       70.8 66.9 / 81.6 81.3
 *   Q6_K       81.8 100.9 / 91.3 90.4      85.1 83.8 / 90.0 89.4
 *   QC4W       58.7 77.9 / 70.8 80.3       75.5 77.8 / 83.3 85.7
 *
 * and one process timing the hints in turn on four rotating [11008, 4096] weights (12
 * rounds of 10 calls, median GB/s, 1 thread): Q8_0 11.6 (T0) against 17.3 (T1), Q4_K
 * 16.8 against 20.5, Q4_0 22.3 / 24.4, Q6_K 25.9 / 23.2. So Zen 4 (family 19h with
 * AVX-512) prefetches into L2 as Intel does (base/cpu.c's pw__x86_prefetch_l2). With no
 * software prefetch at all Q4_0 read faster still there (33.6 GB/s in that process) and
 * Q6_K, whose records are read in three parts, at half the speed (11.0). In the bench
 * (three rounds in turn, 1 thread, median of the read) no prefetch gave Q4_K 83.6%
 * against 67.6 with L2, QC4W 98.3 against 83.4, Q4_0 96.3 against 90.5, Q8_0 66.6
 * against 79.9, with single fractions up to 105.9%: the per-case ceiling has no 2- or
 * 4-stream read without prefetch, the kernels' own pattern then. With that way added to
 * the ceiling, Q4_0 and Q4_K at avx512 read without software prefetch on Zen 4
 * (pw__x86_hw_streams; one process, four rotating weights, median GB/s, L2 against
 * none: Q4_K 1 thread 20.95 / 25.96 and 25.79, 2 threads 31.35 / 32.68; Q4_0 1 thread
 * 22.9-24.7 / 30.0-34.6, 2 threads 30.7-31.2 / 31.8-33.1; the shipped switch timed the
 * same way later, in a faster spell: Q4_K 23.40 / 24.12-24.57 and 39.4-39.7 / 40.2-41.0,
 * Q4_0 29.98 / 39.23 and 31.12 / 35.40). Q4_0 1 thread then read at 0.93-1.02 of the
 * per-case ceiling (one run in twelve at 1.024, flagged) and QC4W without prefetch at
 * 1.01-1.04: none of the bench's read loops then streamed as fast as these kernels.
 * Reads paced by arithmetic between the loads, as a kernel's are, do (the ceiling's
 * paced ways, tools/bench.h: 15-30% faster than any unpaced read here). Against that
 * ceiling, one experimental build choosing at run time (from the environment), two
 * rounds of --formats Q8_0,Q6_K,QC4W,QB4W --threads 1,2 with each choice in turn,
 * fraction (1 thread / 2 threads):
 *
 *              prefetch (L2)                 none
 *   Q8_0       66.7 79.6 / 81.8 75.4        85.0 93.2 / 84.9 85.8
 *   Q6_K       71.6 93.3 / 81.7 86.8        34.7 34.9 / 55.3 55.2
 *   QC4W       68.6 78.2 / 76.7 80.0        91.3 89.5 / 85.3 85.7
 *   QB4W/32    70.7 81.5 / 79.8 81.3        76.9 67.5 / 75.8 78.2
 *   QB4W/128   69.5 71.1 / 76.9 75.4        65.0 62.6 / 70.6 71.0
 *
 * and two more rounds over [11008, 4096] and [4096, 4096]: Q8_0 1 thread 64-74 against
 * 80-84, 2 threads 80-85 against 74-83; QC4W 68-70 against 87-93, 2 threads 78-88
 * against 85-88. So Q8_0 and QC4W leave their streams to the hardware on Zen 4 as Q4_0
 * and Q4_K do; Q6_K (three-part records) and QB4W (data, scales and zero points in
 * three streams) keep the hint. At the avx2 level (PACKWISE_ISA=avx2, tile32_avx2.h and
 * QC4W's qc4w_gemm_avx2.c), the same A/B, two rounds, 1 thread / 2 threads:
 *
 *              prefetch (L2)                 none
 *   Q4_0       72.5 74.4 / 80.1 71.3        86.7 87.7 / 80.8 85.7
 *   Q8_0       64.6 62.9 / 76.5 81.2        92.7 95.7 / 86.1 91.9
 *   Q4_K       58.5 55.9 / 64.6 66.9        25.8 26.1 / 41.2 42.8
 *   Q6_K       65.8 64.3 / 59.3 73.4        23.0 23.1 / 37.9 37.8
 *   QC4W       72.7 81.8 / 78.7 79.0        85.4 84.5 / 87.0 90.8
 *
 * so there Q4_0, Q8_0 and QC4W leave their streams to the hardware and the K-quants keep
 * the hint. Why they differed: their records were read out of address order (a Q4_K
 * record's scales, at its end, before its steps; Q6_K's scales, after the 16 sub-blocks,
 * between them), which Zen 4's prefetcher does not follow. Q4_K's GEMVs now read a record
 * in address order (q4kx_avx512.c, q4kx_avx2.c) and leave it to the hardware at both
 * levels: 1 thread avx512 71-77% -> 85-90%, avx2 53-62% -> 82-86%. So do the Q6_K GEMVs,
 * each sub-block's loads in address order too (q6kx_avx512.c, q6kx_avx2.c): avx512
 * 70-79% -> 86-90%, avx2 56-63% -> 84-89%; their sub-block sums read in address order
 * with the loads of a sub-block left in GCC's order measured 64-71%, no better than
 * before. Before that, the AVX2 K-quants were not
 * compute-bound there: a [1024, 4096] weight left in cache (flush skipped, a scratch
 * build) reads at 37-40 GB/s, cold at 18-22. Their hint varied in the same way, one
 * build, 1 thread, [11008, 4096]: Q4_K 55-60% (L2, 8 KiB, one stream: shipped), L1
 * 64-73, two streams 61-65, L2 4 or 16 KiB 55-72, L1 4, 12 or 16 KiB 51-66, L2 2 KiB
 * 39; Q6_K 76-83 (L2, 8 KiB, two streams: shipped), one stream 63-64, L1 66, one stream
 * in L1 83-84, 4 KiB 37-42, 16 KiB 70-72, 2 KiB 30-37. Three more rounds of Q4_K over
 * both shapes and 1 and 2 threads put L1 8 KiB at 60-69 / 48-79 against 54-82 / 65-72:
 * no choice reached 0.85, and none was clearly ahead across thread counts (the reading
 * order above was the cause).
 *
 * On Zen 5 the AVX-512 Q4_0, Q8_0 and QC4W GEMVs, four streams each, prefetch
 * PW__TILE32_PF_ZEN5 (2 KiB) ahead, not 8: four streams 8 KiB ahead put 32 KiB in
 * flight towards a 48 KiB L1. A scratch build choosing at run time, the same AMD EPYC
 * Zen 5 VM: packwise bench --formats Q4_0,Q8_0 --shapes 11008x4096,4096x4096 --batch 1
 * --threads 1,2, three rounds in turn, fraction of the read, [11008, 4096] / [4096,
 * 4096], 1 thread then 2: Q4_0 8 KiB 81-97 / 73-83, 79-85 / 69-80 against 2 KiB 93-96 /
 * 90-94, 81-92 / 84-92; Q8_0 89-97 / 79-85, 82-103 / 72-79 against 88-90 / 88, 82-98 /
 * 82-86 (eight streams 1 or 2 KiB ahead, lower: Q4_0 68-87, Q8_0 71-95); QC4W 90-91 /
 * 88-89, 81-82 / 82-85 against 96-98 / 90-95, 78-81 / 89-91. And in a decode step
 * (packwise bench --step --threads 1,2, a scratch bench timing the two distances in
 * alternate tokens of one run, twice with the order swapped; layer time in us, 8 KiB
 * against 2 KiB): Q4_0 3827 / 3383 and 4124 / 3612 on 1 thread, 2397 / 2061 and 2284 /
 * 2058 on 2; Q8_0 6769 / 6001 and 7190 / 6676, 4030 / 3669 and 3969 / 3620; QC4W 2857 /
 * 2612 and 2983 / 2769, 2758 / 2716 and 1862 / 1779. The K-quants keep 8 KiB: their
 * step was slower at 2 KiB in five of the eight runs (Q4_K 3156 / 3879 on 1 thread),
 * as their larger records fetch in parts (L1 4 KiB measured 57% above). So did the AVX2
 * and AVX-VNNI levels on Zen 5 (QC4W avx2 96 / 87-89% at 1 thread, 88-94 / 68-76 at 2).
 *
 * PW__TILE32_PF itself, measured again on the Zen 5 VM (a scratch build reading the
 * distance from the environment; the records that prefetch with pw__tile32_prefetch):
 * PACKWISE_ISA=avx2 --formats Q8_0,Q4_K,Q6_K --shapes 11008x4096,4096x4096 --batch 1
 * --threads 1,2, three rounds of each distance in turn, 1 thread [11008, 4096]: Q4_K
 * 8 KiB 74-82%, 16 KiB 80-85, 24 KiB 73-76; Q6_K 74-86 / 81-88 / 79-83; Q8_0 84-91 /
 * 84-86 / 85-89. The AVX2 Q4_K GEMV (one stream, 8 KiB in flight) read a flushed weight
 * faster 16 KiB ahead, but its decode step slower (packwise bench --step --formats Q4_K
 * --threads 1,2 at avx2, two runs each: 8 KiB 3545-3620 / 1791-1809 us a layer, 16 KiB
 * 3693-4192 / 2006-2251), and at avxvnni and avx512 16 KiB was no better for either
 * K-quant (avxvnni Q4_K 1 thread 87-88% against 64-88). So 8 KiB stays.
 *
 * On an Intel Xeon VM of model 207 (Emerald Rapids class: 2 vCPUs, 2 MiB L2 each, one
 * core reading a flushed weight at 16-17 GB/s) the AVX-512 K-quant GEMVs read at
 * 0.85-0.91 of the per-case ceiling and the AVX-VNNI ones at 0.85-0.89, while their
 * records in L2 (a [256, 4096] weight not flushed, a scratch build) read at 36 and
 * 27-30 GB/s: not the arithmetic. Prefetching each line twice, into L2 far ahead and
 * into L1 near (PW__TILE32_PF_FAR, PW__TILE32_PF_L1), fixed it: a scratch build choosing
 * at run time, packwise bench --formats Q4_0,Q8_0,Q4_K,Q6_K,QC4W --shapes
 * 11008x4096,4096x4096 --batch 1 --threads 1,2, two rounds of each choice in turn,
 * fraction of the read ([11008, 4096] 1 thread / 2 threads, then [4096, 4096]):
 *
 *              L2 8 KiB (shipped)     L2 16 + L1 2 KiB       L2 16 + L1 3 KiB
 *   avx512     Q4_0 96-97 / 94-97     101 / 96-97            102-103 / 97-100
 *                   93 / 89-92        98 / 86-89             98-99 / 90-91
 *              Q4_K 90-91 / 91        97 / 95-97             98-99 / 98-99
 *                   88-89 / 88        92-93 / 88-90          95 / 89-93
 *              Q6_K 89-90 / 89        96 / 90-92             97-98 / 100-101
 *                   86-87 / 83-86     86-92 / 87-89          90-96 / 91-93
 *              Q8_0 96-97 / 98-101    101 / 100-101          101-102 / 101-104
 *              QC4W 87-93 / 90-92     95-96 / 93-96          97-98 / 94-96
 *
 * (the fractions above 1 were the ceiling's: its ways then had no such read; they do
 * now, tools/bench.h). L2 8 KiB + L1 1 or 2 KiB and L2 24 + L1 2 KiB were between;
 * more streams (2 or 4 for Q4_K and Q6_K), L1 alone (8 KiB, or 2 KiB in four streams)
 * and no software prefetch were all below the shipped one. At avxvnni, 1 thread, two
 * rounds: Q4_0 93-94 -> 97-98, Q4_K 88-89 -> 95-97, Q8_0 97 -> 100-101, Q6_K 88-89
 * both, QC4W 88-89 both ([11008, 4096]). At avx2 the K-quants gained 2-3 points and
 * Q4_0, Q8_0 and QC4W lost 1-4 (Q8_0 93-94 -> 89-91), so the AVX2 level keeps one
 * prefetch (PW__TILE32_TWO_LEVEL).
 */
#ifndef PACKWISE_KERNEL_X86_TILE32_PREFETCH_H
#define PACKWISE_KERNEL_X86_TILE32_PREFETCH_H

#include "base/x86_tune.h"
#include "kernel/tile32.h"

#include <stdint.h>
#include <xmmintrin.h>

#define PW__TILE32_PF 8192 /* bytes of the stream ahead of the record being read */
#define PW__TILE32_PF_ZEN5 2048 /* the AVX-512 Q4_0, Q8_0 and QC4W GEMVs' on Zen 5 */

/* On Intel cores the AVX-512 and AVX-VNNI GEMVs prefetch each line twice: into L2
 * PW__TILE32_PF_FAR ahead and into L1 PW__TILE32_PF_L1 ahead (the measurements are
 * above). PW__TILE32_TWO_LEVEL is 1 in the files built for those levels, 0 in the
 * AVX2 ones, which keep one prefetch. */
#define PW__TILE32_PF_FAR 16384
#define PW__TILE32_PF_L1 3072
#if defined(__AVX512F__) || defined(__AVXVNNI__)
#define PW__TILE32_TWO_LEVEL 1
#else
#define PW__TILE32_TWO_LEVEL 0
#endif


/* Prefetch the line at p into L2 (l2: pw__x86_prefetch_l2, read once by the caller) or
 * L1. The hint is a literal in each branch: clang wants a constant. */
static inline __attribute__((always_inline)) void pw__x86_prefetch_line(const void *p, int l2) {
    if (l2)
        _mm_prefetch((const char *)p, _MM_HINT_T1);
    else
        _mm_prefetch((const char *)p, _MM_HINT_T0);
}

/* 1 where this file's GEMVs prefetch each line twice (PW__TILE32_TWO_LEVEL, on Intel). */
static inline __attribute__((always_inline)) int pw__tile32_two_level(void) {
    return PW__TILE32_TWO_LEVEL && __atomic_load_n(&pw__x86_intel, __ATOMIC_RELAXED);
}

/* How far on the stream's (first) prefetch reaches: PW__TILE32_PF_FAR where lines are
 * prefetched twice, else PW__TILE32_PF. */
static inline __attribute__((always_inline)) uint64_t pw__tile32_pf_dist(void) {
    return pw__tile32_two_level() ? PW__TILE32_PF_FAR : PW__TILE32_PF;
}

/* The CPUs on which a GEMV family leaves its records to the hardware prefetcher: the
 * `hw` mask each family passes to its loop (tile32_avx512.h, tile32_avx2.h), where the
 * CPU streams them faster so. */
#define PW__HW_NONE 0
#define PW__HW_ZEN4 1 /* pw__x86_hw_streams */
#define PW__HW_ZEN5 2 /* pw__x86_zen5 */

/* How far on a GEMV record's prefetch reaches (PW__STREAMS_RECORDS' pf_ahead): past any
 * range on a CPU in the family's mask hw, so that the record function is never asked to
 * prefetch there; else pw__tile32_pf_dist(). */
static inline __attribute__((always_inline)) uint64_t pw__tile32_ahead(int hw) {
    const int off =
        ((hw & PW__HW_ZEN4) && __atomic_load_n(&pw__x86_hw_streams, __ATOMIC_RELAXED)) ||
        ((hw & PW__HW_ZEN5) && __atomic_load_n(&pw__x86_zen5, __ATOMIC_RELAXED));
    return off ? UINT64_MAX / 2 : pw__tile32_pf_dist();
}

/* Prefetch the GEMV stream for bytes [p, p + bytes) of the record being read, dist
 * bytes on (into L2 where l2, else L1), and where two (pw__tile32_two_level) again into
 * L1 PW__TILE32_PF_L1 on. */
static inline __attribute__((always_inline)) void
pw__tile32_prefetch_lines(const uint8_t *p, int bytes, uint64_t dist, int l2, int two) {
    for (int l = 0; l < bytes; l += 64) pw__x86_prefetch_line(p + dist + l, l2);
    if (two)
        for (int l = 0; l < bytes; l += 64)
            _mm_prefetch((const char *)(p + PW__TILE32_PF_L1 + l), _MM_HINT_T0);
}

/* The same pw__tile32_pf_dist() on, with this CPU's settings read at each call (for
 * loops that prefetch rarely; the GEMV loops read them once: pw__tile32_pf_code). */
static inline __attribute__((always_inline)) void pw__tile32_prefetch(const uint8_t *p, int bytes) {
    pw__tile32_prefetch_lines(p, bytes, pw__tile32_pf_dist(),
                              __atomic_load_n(&pw__x86_prefetch_l2, __ATOMIC_RELAXED),
                              pw__tile32_two_level());
}

/* The settings above as one int, read once per call by the GEMV loops (pw__tile32_run,
 * tile32_avx512.h; pw__t32a_run, tile32_avx2.h; the AVX-512 QC4W GEMV's) and passed to
 * their record functions as their pf argument where they prefetch (0 where they do
 * not): the distance pw__tile32_pf_dist() (a multiple of 64) with PW__PF_* in its low
 * bits, so that a record reads no CPU setting (relaxed atomic loads, which the compiler
 * keeps inside the loop: four a record before). One build switching between the two in
 * alternate calls of one process (a [11008, 4096] weight evicted before each, 41 calls
 * each, median GB/s, two rounds, before -> after; AMD EPYC Zen 5 VM, 1 thread / 2
 * threads):
 *   avx512   Q4_0 34.5 -> 34.9, 32.8 -> 32.5 / 58.5 -> 59.4, 55.9 -> 58.8;
 *            Q4_K 32.8 -> 33.9, 31.1 -> 32.3 / 56.2 -> 56.1, 56.1 -> 57.1;
 *            Q6_K, IQ4_NL level (within 1-3% either way)
 *   avxvnni  Q4_0 35.3 -> 36.7, 35.6 -> 36.6 / level; Q4_K 32.3 -> 34.4, 32.6 -> 34.4 /
 *            54.8 -> 57.4, 55.7 -> 57.8; Q6_K 28.5 -> 32.8, 28.9 -> 32.5 / 60.8 -> 68.1,
 *            60.9 -> 65.9; Q8_0 level
 *   avx2     level (Q4_0 1 thread 33.5 -> 34.2, Q4_K 34.1 -> 33.4, Q6_K 35.2 -> 35.6).
 * (On AVX-VNNI builds the records also asked pw__tile32_two_level(), Intel or not.) */
_Static_assert(PW__TILE32_PF % 64 == 0 && PW__TILE32_PF_FAR % 64 == 0 &&
                   PW__TILE32_PF_FAR < (1 << 30),
               "pw__tile32_pf_code keeps its flags in the distance's low six bits");
#define PW__PF_L2 1   /* pw__x86_prefetch_l2 */
#define PW__PF_TWO 2  /* pw__tile32_two_level() */
#define PW__PF_ZEN5 4 /* pw__x86_zen5: pw__tile32_prefetch_near_pf's is PW__TILE32_PF_ZEN5 */
static inline __attribute__((always_inline)) int pw__tile32_pf_code(void) {
    return (int)pw__tile32_pf_dist() |
           (__atomic_load_n(&pw__x86_prefetch_l2, __ATOMIC_RELAXED) ? PW__PF_L2 : 0) |
           (pw__tile32_two_level() ? PW__PF_TWO : 0) |
           (__atomic_load_n(&pw__x86_zen5, __ATOMIC_RELAXED) ? PW__PF_ZEN5 : 0);
}

/* Prefetch as pw__tile32_prefetch does, with the settings of pf (a nonzero
 * pw__tile32_pf_code()); and the same for the AVX-512 Q4_0, Q8_0 and QC4W GEMVs:
 * PW__TILE32_PF_ZEN5 on on Zen 5 (a shorter distance than their pf flag assumes: they
 * stop prefetching a little early at the buffer's end). */
static inline __attribute__((always_inline)) void pw__tile32_prefetch_pf(const uint8_t *p,
                                                                         int bytes, int pf) {
    pw__tile32_prefetch_lines(p, bytes, (uint64_t)(pf & ~63), pf & PW__PF_L2, pf & PW__PF_TWO);
}
static inline __attribute__((always_inline)) void pw__tile32_prefetch_near_pf(const uint8_t *p,
                                                                              int bytes, int pf) {
    pw__tile32_prefetch_lines(p, bytes,
                              (pf & PW__PF_ZEN5) ? (uint64_t)PW__TILE32_PF_ZEN5
                                                 : (uint64_t)(pf & ~63),
                              pf & PW__PF_L2, pf & PW__PF_TWO);
}

/* Prefetch the first bytes of a range's stream, which no record before them fetched. */
static inline __attribute__((always_inline)) void pw__tile32_prefetch_start(const uint8_t *p,
                                                                            uint64_t left) {
    const uint64_t d = pw__tile32_pf_dist(), n = left < d ? left : d;
    for (uint64_t l = 0; l + 64 <= n; l += 64) _mm_prefetch((const char *)(p + l), _MM_HINT_T0);
}

/* The S streams of a 32-row GEMV range [o0, o1) (kernel/tile32.h), the first bytes of each
 * prefetched. */
static inline __attribute__((always_inline)) pw__streams
pw__tile32_streams_begin(const pw__mm_call *c, int64_t o0, int64_t o1, int S) {
    const pw__streams p = pw__streams_plan(c, o0, o1, PW__TILE32_NR, S);
    pw__streams_step st;
    pw__streams_at(&p, 0, &st);
    for (int s = 0; s < st.live; ++s) pw__tile32_prefetch_start(st.tile[s], st.left[s]);
    return p;
}

#endif
