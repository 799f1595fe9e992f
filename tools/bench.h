/*
 * `packwise bench`: sections, the results they collect, and the helpers they
 * share. The matmul suite (bench_matmul.c) measures the machine first
 * (bench_machine.c: read bandwidth and int8 peak per thread count, with one
 * loop file per ISA, bench_peak_<isa>.c) and reports every case as a fraction
 * of those figures; bench_report.c prints the collected results as a table or
 * JSON lines, bench_plot.c as a gnuplot chart. bench_decode.c is the decode section.
 */
#ifndef PACKWISE_BENCH_H
#define PACKWISE_BENCH_H

#include "packwise.h"

#include <stddef.h>
#include <pthread.h>
#include <stdint.h>

#define PW_BENCH_MAX_LIST 16 /* entries of --shapes, --batch, --threads */

typedef struct pw_bench_options {
    int json;              /* one JSON object per line instead of a table */
    int quick;             /* small default sizes and few repetitions (tests) */
    int decode;            /* run the decode section instead of the matmul suite */
    int step;              /* --step: the decode-step section (bench_step.c) */
    uint64_t formats_mask; /* bit f set: include format f; 0 = the section's default */
    int qc4w;              /* --formats QC4W (or a qc4w_* --kernel): run the QC4W section */
    int qb4w;              /* --formats QB4W (or a qb4w_* --kernel): QB4W, blocks of 32 and 128 */
    const char *kernel;    /* --kernel: force this kernel for every case; NULL = dispatch */
    const char *plot;      /* --plot: write a gnuplot SVG chart here; NULL = none */
    int64_t shapes[PW_BENCH_MAX_LIST][2]; /* [out, in] in elements */
    int nshapes;
    int64_t batch[PW_BENCH_MAX_LIST]; /* rows of X (n) */
    int nbatch;
    int threads[PW_BENCH_MAX_LIST];
    int nthreads;
    int kernel_order;      /* --layout kernel: weights handed over as input-block-major bytes */
    int spin_wait;         /* --spin-wait (--step only): the pool's workers spin between the
                              step's calls (base.h); the matmul suite's GEMV cases read their
                              ceiling between samples, which spinning workers would disturb */
    pw_memory_policy policies[3]; /* --policy: the memory policies each case runs under */
    int npolicies;                /* 0 = compact alone (the library's default) */
} pw_bench_options;

/* What the machine does at one thread count, measured in this run. */
typedef struct pw_bench_machine {
    int threads;
    double read_gbps;       /* streaming read, 1e9 bytes per second */
    uint64_t read_bytes;    /* buffer read per repetition */
    double int8_gops;       /* 1e9 int8 ops per second, 2 per multiply-accumulate */
    const char *peak_isa;   /* the loop that measured it, e.g. "avx512vnni" */
    int read_clean, peak_clean; /* undisturbed samples behind each figure (0: none was) */
} pw_bench_machine;

/* The ways a GEMV case's read ceiling reads its bytes (pw_bench_ceiling, below). */
#define PW_BENCH_CEILING_WAYS 17
/* Each way's median GB/s (0: not sampled), in the ceiling's order of ways (JSON
 * "ceiling_ways", an object from way name to GB/s): what the fastest one was chosen from. */
typedef struct pw_bench_ways {
    double gbps[PW_BENCH_CEILING_WAYS];
} pw_bench_ways;

/* One matmul case. Ratios and pack_s are 0 where not measured. */
typedef struct pw_bench_result {
    int gemm;              /* 0: GEMV (n == 1, weights flushed before each run), 1: GEMM */
    pw_format format;
    char kernel[64];
    int64_t out, in, n;
    int threads;
    double median_s;
    double gflops;         /* 2 * out * in * n / median_s, 1e9 per second */
    double weight_gbps;    /* row-major weight bytes / median_s */
    double fraction;       /* GEMV: of the case's own read ceiling; GEMM: of its own int8 peak */
    double ceiling_gbps;   /* GEMV: the same bytes streamed, sampled between the kernel's runs */
    const char *ceiling_way; /* GEMV: the fastest way of that read (pw_bench_ceiling_finish) */
    pw_bench_ways ceiling_ways; /* GEMV: every way's figure, the fastest chosen from them */
    double machine_fraction; /* of the machine section's figure (context): GEMV its read
                                bandwidth, GEMM its int8 peak */
    double peak_gops;      /* GEMM: the int8 peak loop, sampled between the kernel's runs */
    int ceiling_invalid;   /* fraction above PW_BENCH_CEILING_SLACK: the ceiling is wrong (GEMV:
                              the case's read; GEMM: the int8 peak loop) */
    int reps;
    int clean_reps;        /* undisturbed reps (pw_bench_sampler); the median is over these when > 0
                            * (GEMV: when it and its ceiling both have PW_BENCH_CLEAN_MIN) */
    int cold;              /* the weight (and any packed copy) was flushed before each run */
    uint64_t weight_bytes; /* row-major bytes of the weight */
    pw_memory_policy policy; /* the weight's memory policy */
    uint64_t packed_bytes; /* bytes of the packed forms the weight holds under it */
    char layout[48];       /* what the kernel reads: row_major, input_block_major or a family */
    double pack_s;         /* packing time of this weight, on the case that packed it */
    double ref_ratio;      /* GEMM: gflops / the reference kernel's gflops */
    char ref_kernel[64];
    double f32_ratio;      /* GEMM: gflops / the f32 path's gflops (same shape, n, threads) */
    char f32_kernel[64];
} pw_bench_result;

typedef struct pw_bench_results {
    pw_bench_machine machine[PW_BENCH_MAX_LIST];
    int nmachine;
    pw_bench_result *cases;
    size_t count, capacity;
    double load_average; /* 1-minute load average at the start (< 0: unknown): noise context */
    double elapsed_s;    /* wall time of the whole suite */
} pw_bench_results;

/* --- shared helpers (bench_util.c) --- */

/* Monotonic time in seconds. */
double pw_bench_now(void);
/* Median of n samples (sorts in place). */
double pw_bench_median(double *samples, int n);

/*
 * Timed samples that a loaded machine does not distort. On one thread (the
 * context runs everything on the calling thread) a sample is that thread's
 * CPU time, which a preemption does not inflate and memory stalls still count
 * in. On more threads it is wall time, and a sample is undisturbed when the
 * process's threads were on a CPU for at least 80% of threads x wall time
 * (a thread preempted, or waiting to be scheduled, fails that): the median
 * is taken over undisturbed samples when there are any, and the caller keeps
 * sampling a while to find some.
 */
#define PW_BENCH_MAX_SAMPLES 256
typedef struct pw_bench_sampler {
    double clean[PW_BENCH_MAX_SAMPLES]; /* seconds, undisturbed samples */
    double all[PW_BENCH_MAX_SAMPLES];   /* seconds, every sample */
    int nclean, nall;
    double spent; /* seconds in samples so far */
    int threads;
    double t0, cpu0; /* wall and CPU clocks when the current sample started */
} pw_bench_sampler;

/* An empty sampler for work that runs on `threads` threads. */
void pw_bench_sampler_init(pw_bench_sampler *s, int threads);
void pw_bench_sample_start(pw_bench_sampler *s);
void pw_bench_sample_stop(pw_bench_sampler *s);
/* Whether to take another sample: until `min` undisturbed ones and then `max`
 * samples or `budget` seconds; without enough undisturbed ones, up to 3 * max
 * samples or 4 * budget seconds (never more than PW_BENCH_MAX_SAMPLES). */
int pw_bench_sample_more(const pw_bench_sampler *s, int min, int max, double budget);
/* How many samples a case takes (pw_bench_sample_more's min, max, budget in seconds of
 * samples). GEMM: 3 undisturbed, then up to 11 or 1 s. GEMV: 5 undisturbed, then up to
 * 101 or 100 ms, so that a short case (0.2 ms at 2 threads, where a worker's wake-up
 * varies by tens of microseconds) takes about 100 samples and a 2-4 ms one 25-50: with
 * 20 ms (about 10 samples of [11008, 4096] Q4_0) the fraction of the same case moved by
 * 10-20 points between runs a minute apart, with 100 ms by 2-5. */
typedef struct pw_bench_reps {
    int min, max;
    double budget;
} pw_bench_reps;
pw_bench_reps pw_bench_case_reps(int gemm, int quick);
/* Median over the undisturbed samples, or over all when none was (sorts in place). */
double pw_bench_sample_median(pw_bench_sampler *s);
/* Median over the undisturbed samples when `clean`, else over all (sorts in place). */
double pw_bench_sample_median_of(pw_bench_sampler *s, int clean);
/* The q-quantile (0 = fastest) of the same samples; for ceilings such as the
 * machine's bandwidth and peak, which a disturbance only ever lowers. */
double pw_bench_sample_quantile(pw_bench_sampler *s, double q);
/* Gaussian floats (sigma 0.02, like a real layer's weights) from a seeded stream. */
void pw_bench_gaussian(float *dst, size_t count, uint64_t seed);
/* Allocate bytes aligned to 64 (rounded up to a whole cache line); NULL when out of memory. */
void *pw_bench_alloc(size_t bytes);
/* A tracking allocator: the library's allocator (pw_allocator_default), with every live
 * block listed, so that a bench can flush or read the library's memory (packed forms,
 * scratch, handles) without reaching inside the library. */
typedef struct pw_bench_block {
    void *p;
    size_t bytes;
} pw_bench_block;
typedef struct pw_bench_tracker {
    pthread_mutex_t mu;
    pw_bench_block *live;
    size_t count, capacity;
} pw_bench_tracker;
void pw_bench_tracker_init(pw_bench_tracker *t);
/* The allocator to give pw_context_options (t outlives the context). */
pw_allocator pw_bench_tracker_allocator(pw_bench_tracker *t);
/* Evict every live block from the caches (pw_bench_flush). */
void pw_bench_tracker_flush(pw_bench_tracker *t);
/* Append {p, bytes} to *out (count *n, room *cap; grown with realloc): 0, or -1 when out
 * of memory. */
int pw_bench_block_push(pw_bench_block **out, size_t *n, size_t *cap, void *p, size_t bytes);
/* The live blocks of at least min_bytes, appended to *out (count *n, room *cap; grown
 * with realloc). Returns 0, or -1 when out of memory. */
int pw_bench_tracker_blocks(pw_bench_tracker *t, size_t min_bytes, pw_bench_block **out, size_t *n,
                            size_t *cap);
void pw_bench_tracker_free(pw_bench_tracker *t);

/* Fill [p, p + bytes) (8-byte aligned) with words that never repeat, so that no two
 * pages of a bench buffer are alike: a host that merges equal pages (KSM) or backs
 * repeated content specially would otherwise read them at another speed than weights. */
void pw_bench_fill_distinct(void *p, size_t bytes);
/* Evict [p, p + bytes) from every cache level; returns 0 where the CPU offers no way. */
int pw_bench_flush(const void *p, size_t bytes);

/* --- machine (bench_machine.c) --- */

/* Read bandwidth and int8 peak with ctx's current thread count. */
int pw_bench_machine_measure(pw_context *ctx, const pw_bench_options *o, void *read_buffer,
                             size_t read_bytes, pw_bench_machine *m);
/* The figures r holds for `threads`, or NULL. */
const pw_bench_machine *pw_bench_machine_for(const pw_bench_results *r, int threads);
/* Measure (and append to r, printing JSON with o->json) the figures for ctx's `threads`
 * unless r has them. Returns an exit code. */
int pw_bench_ensure_machine(pw_context *ctx, const pw_bench_options *o, pw_bench_results *r,
                            int threads);
/* Bytes of the bandwidth buffer: much larger than the last-level cache. */
size_t pw_bench_read_buffer_bytes(const pw_bench_options *o);

/*
 * A GEMV case's (or a decode step's) own ceiling: a streaming read of a buffer of
 * the case's bytes, allocated as the library allocates packed weights (2 MiB
 * aligned, huge pages asked for, from 4 MiB; a decode step reads its weights' packed
 * forms themselves instead, pw_bench_ceiling_init_regions and bench_step.c), in
 * contiguous chunks (8 per thread,
 * taken by whichever thread is free) on the context's threads with the widest
 * loads, PW_BENCH_CEILING_WAYS ways, each sample all of them: each chunk as one
 * stream with the read loops' software prefetch into L1 (the kernels' way) and
 * without it, as 4 interleaved streams with it and as 8 without, and as 8 and 16
 * with prefetches into L2; and, its own buffer only, each thread's whole share (its 8
 * chunks, one range) as 4 streams without prefetch, the way the GEMVs that leave their
 * streams to the hardware read on Zen 4 (tile32_prefetch.h); and 4 streams without
 * prefetch, by chunks and by whole shares, paced by a few dependent integer
 * operations on each line as a kernel's loads are by its arithmetic; and one and two
 * streams with the L1 prefetch, paced the same way (the tiled GEMVs' own pattern: a
 * record's lines prefetched ahead, its arithmetic between the loads); and four streams
 * prefetched into L1 only PW_BENCH_PREFETCH_NEAR ahead, as the AVX-512 Q4_0, Q8_0 and
 * QC4W GEMVs read on Zen 5 (tile32_prefetch.h; in a decode step on the Zen 5 VM, the
 * fastest way in 5 of 12 rows, and still below the K-quant kernels); and one stream,
 * two paced, and four paced over each thread's whole share, prefetched into L2
 * PW_BENCH_PREFETCH_FAR ahead and again into L1 PW_BENCH_PREFETCH_L1 ahead, as the
 * AVX-512 and AVX-VNNI GEMVs read on Intel (without them those kernels read at up to
 * 1.026 of the ceiling on an Emerald Rapids VM, 1 thread, tile32_prefetch.h; with the
 * four streams by chunks, unpaced, the Q4_0 and Q8_0 GEMVs still at 1.000-1.024, paced
 * 1.000-1.031: the first 16 KiB of each stream of each chunk start unprefetched, which a
 * kernel's streams, one range a thread, pay once; over whole shares 0.972-1.008). None is always the
 * fastest, so the ceiling is the fastest way's median. On an AMD Zen 5 VM the paced L1
 * way was the fastest in 19 of 40 GEMV cases (--formats Q4_0,Q8_0,Q4_K,Q6_K,QC4W
 * --shapes 11008x4096,4096x4096 --batch 1 --threads 1,2, two runs); without it the same
 * kernels read at up to 1.035 of the ceiling (Q6_K, 2 threads), with it at most 0.975. On an AMD Zen 4 VM the paced
 * reads were the fastest: [11008, 4096] Q4_0's and QC4W's bytes, 1 thread, every way in
 * turn, two runs, the unpaced ways' best 26.0-31.7 GB/s against 29.3-40.6 paced (2,
 * 3, 4, 5 or 6 vpmaddwd a line alike, 8 slower); 2 threads 36.7-39.8 against
 * 40.8-43.8. Without them the Q4_0 GEMV that leaves its streams to the hardware came
 * out at 0.99-1.06 of the unpaced ways' best in those runs. On an AMD Zen 5 VM a 22 MiB
 * buffer just flushed read 42-49 GB/s on 1 thread as one prefetched stream, 29-40 as 4
 * or 8; 900 MiB read again (its translations in the TLB) 30-33 GB/s as one stream,
 * 38-39 as 8. The kernels follow the same split there, so a flushed GEMV case is not
 * the guide to a kernel's stream count on such a machine: the tiled Q4_0 and QC4W
 * GEMVs read a flushed weight fastest as one stream and a decode step's weights (read
 * again after the rest of the model) fastest as four, 5-30% faster a token
 * (q4x_avx512.c); the stream counts follow the step. Evicting a GEMV case's weight and
 * its ceiling buffer by reading 128 MiB of other memory instead of flushing them (a
 * scratch build) gave the step's order, but with the kernels above every way (four
 * streams, 1 thread: up to 1.17, 4 of 6 rounds above 1.02): the ways read slower than
 * the kernels in that state, as in the step with the K-quants (1.02-1.11 at one stream),
 * for a reason not found (no counters on the VM).
 * On an Intel Xeon
 * (Sapphire Rapids class) VM one core reads a flushed 25 MiB at 9-11 GB/s as one
 * stream, prefetched or not, 12-14 as 8 or 16 streams, 13-15 with the L2 prefetches;
 * with only the first four ways the Q8_0 GEMV kernel, whose loads come between
 * integer work, came out at 101-108% of that ceiling in three of eight runs.
 * On the Zen 5 VM the decode step's tokens still read faster than every one of those
 * ways (8 of its 12 rows above 1.02 in a run, Q4_K at 1.21 on 1 thread and 1.20 on 2):
 * two further ways read in the K-quant GEMVs' record shape (records_l1, one stream and
 * four; pw_bench_read_records_scalar). In a scratch program reading 24 [11008, 4096] Q4_K
 * weights' packed forms (608.7 MB) in turn on 1 thread, nine rounds of each read in turn,
 * that shape with one chain a part (vpdpbusd, or xor and vpmaddwd as here) read at
 * 0.97-1.08 of the GEMV's GB/s in seven runs, the Q4_K record function itself over the
 * same bytes at 0.96-1.04, 1_stream_l1's loop at 0.73-0.82, and lines
 * in groups of 4 to 32, each group prefetched 8 KiB on as a burst, at 0.84-0.92 (the GEMV
 * 28.7-38.2 GB/s as the machine's load moved). In the bench (--formats
 * Q4_0,Q8_0,Q4_K,Q6_K,QC4W --shapes 11008x4096,4096x4096 --batch 1 --threads 1,2, four
 * runs) the record ways were the fastest in 36 of 80 rows, by a few percent, and no
 * fraction was above 0.99; in the step 5 to 8 of the 12 rows stayed above 1.02 in three
 * runs, most of them on 1 thread (Q4_K 1.13-1.18, QC4W 1.10-1.17, Q4_0 1.08): not found
 * why (bench_step.c has what was tried).
 * The caller takes one sample after each of the kernel's, so both see the same
 * moments of a shared machine, and both figures are medians of the same kind of
 * sample: the undisturbed ones when the kernel and every way have
 * PW_BENCH_CLEAN_MIN of them, else all (short multi-thread runs, where a worker's
 * wake-up alone can fail the undisturbed test, would otherwise compare the
 * kernel's median of several samples with a ceiling of one or two). A kernel above
 * PW_BENCH_CEILING_SLACK of it means the ceiling was mismeasured, and the case is
 * flagged, never reported as a result.
 */
#define PW_BENCH_CEILING_SLACK 1.02
typedef struct pw_bench_ceiling {
    uint8_t *buffer;   /* its own (pw_bench_ceiling_init), or NULL (a tracker's blocks) */
    size_t bytes;      /* read per sample and way: the pieces' bytes */
    const uint8_t **piece; /* what a task reads: a chunk of the buffer or of a block */
    size_t *piece_bytes;
    size_t pieces;
    pw_bench_sampler way[PW_BENCH_CEILING_WAYS];
    int clean;         /* the basis pw_bench_ceiling_kernel_median chose (-1: not yet) */
    int threads;       /* the threads it is read on */
} pw_bench_ceiling;
#define PW_BENCH_CLEAN_MIN 5
/* Allocate and fill a buffer of about `bytes` (0 or an exit code after a message). */
int pw_bench_ceiling_init(pw_bench_ceiling *c, size_t bytes, int threads);
/* The same over n regions of memory that others hold (a decode step: the packed forms
 * its weights hold, the very bytes its tokens read), live while c is used; read in
 * address order, each from its first 64-byte boundary in whole 4 KiB (what is left out
 * is left out of c->bytes too). */
int pw_bench_ceiling_init_regions(pw_bench_ceiling *c, const pw_bench_block *r, size_t n,
                                  int threads);
/* Time one read of the buffer each way on ctx's threads. `flush` (a GEMV case, whose
 * weights are flushed): each read after flushing the buffer from the caches. Otherwise
 * (a decode step, whose weights are several times the last-level cache but were all
 * read one token ago, their pages' translations still in the TLB): after one untimed
 * read of the whole buffer, so that its translations are as recent as the weights'. */
void pw_bench_ceiling_sample(pw_context *ctx, pw_bench_ceiling *c, int flush);
/* The same for one way (way modulo PW_BENCH_CEILING_WAYS): a caller that spreads the ways
 * over its samples in turn (a decode step, whose every read of the buffer is long). */
void pw_bench_ceiling_sample_way(pw_context *ctx, pw_bench_ceiling *c, int way, int flush);
/* The kernel's median (seconds) on the basis its samples share with the ceiling's
 * (undisturbed, or all), which the ceiling keeps for its own figure. */
double pw_bench_ceiling_kernel_median(pw_bench_ceiling *c, pw_bench_sampler *kernel);
void pw_bench_ceiling_free(pw_bench_ceiling *c);
/* A GEMV case's figures from its ceiling (which is freed): *ceiling_gbps, *fraction (of it),
 * *invalid (fraction above PW_BENCH_CEILING_SLACK), *machine_fraction (of m's read
 * bandwidth; m may be NULL), *way, the fastest way's name (static; JSON
 * "ceiling_way", "none" when no sample was taken) and *ways, every way's figure. */
void pw_bench_ceiling_finish(pw_bench_ceiling *c, double weight_gbps, const pw_bench_machine *m,
                             double *ceiling_gbps, double *fraction, int *invalid,
                             double *machine_fraction, const char **way, pw_bench_ways *ways);
/* Way w's name (JSON "ceiling_way"; "none" out of range). */
const char *pw_bench_ceiling_way_name(int way);
/* A JSON row's ceiling fields, each after a comma: "ceiling_gbps", "ceiling_valid",
 * "ceiling_way", "machine_fraction" and "ceiling_ways". */
void pw_bench_print_ceiling_json(double ceiling_gbps, int invalid, const char *way,
                                 double machine_fraction, const pw_bench_ways *ways);

/*
 * A GEMM case's own int8 peak: the machine section's loop (the ISA level's own
 * instruction, calibrated to about 2 ms a sample), one sample on the same threads
 * after each of the kernel's (A, B, A, B), so that both see the same moments of a
 * shared machine; the fraction is the kernel's median over the peak's median, on the
 * same basis (the undisturbed samples when both have PW_BENCH_CLEAN_MIN, else all).
 * The machine section's peak (the fast end of its samples, taken once at the start)
 * stays as context (machine_fraction): on this project's 2-core VM a neighbour's load
 * moved the fraction of the same GEMM by 15-25 points between runs against it.
 */
typedef struct pw_bench_peak {
    double (*fn)(uint64_t iters);
    const char *isa;
    uint64_t iters;
    size_t tasks;
    double ops_per_sample;
    pw_bench_sampler s;
    int clean; /* the basis pw_bench_peak_kernel_median chose */
} pw_bench_peak;
/* Pick and calibrate the loop for ctx's threads (quick: shorter samples); no sample yet. */
void pw_bench_peak_init(pw_context *ctx, pw_bench_peak *p, int quick);
/* One timed run of the loop on ctx's threads. */
void pw_bench_peak_sample(pw_context *ctx, pw_bench_peak *p);
/* The kernel's median (seconds) on the basis its samples share with the peak's. */
double pw_bench_peak_kernel_median(pw_bench_peak *p, pw_bench_sampler *kernel);
/* A GEMM case's figures: *peak_gops (the peak's median on that basis), *fraction (gflops of
 * it), *invalid (fraction above PW_BENCH_CEILING_SLACK), *machine_fraction (of m's int8
 * peak; m may be NULL). */
void pw_bench_peak_finish(pw_bench_peak *p, double gflops, const pw_bench_machine *m, double *peak_gops,
                          double *fraction, int *invalid, double *machine_fraction);

/* Per-ISA loops (bench_peak_<isa>.c; only the ones of this architecture are built).
 * int8 loops run `iters` iterations of independent register-only chains and
 * return the int8 ops done (2 per multiply-accumulate); read loops sum `bytes`
 * (a multiple of 256 x streams) from 64-byte aligned p as `streams` contiguous parts
 * read a few lines of each in turn, every line software-prefetched `prefetch` bytes
 * ahead into L1 (hint T0; PW_BENCH_PREFETCH_BYTES is the GEMV kernels' distance,
 * kernel/x86/tile32_prefetch.h), or -prefetch bytes ahead into L2 (T1) when it is
 * negative, or not at all (0: the hardware prefetcher alone), and again into L1 `near`
 * bytes ahead when `near` is not 0 (the Intel AVX-512 and AVX-VNNI GEMVs' two prefetches,
 * kernel/x86/tile32_prefetch.h); with `work` dependent
 * integer operations on each loaded line before it is summed (0: none), a read paced
 * as a kernel's loads are by its arithmetic. */
#define PW_BENCH_PREFETCH_BYTES 8192
/* The shorter distance of the AVX-512 Q4_0, Q8_0 and QC4W GEMVs on Zen 5. */
#define PW_BENCH_PREFETCH_NEAR 2048
/* The read loops' pacing: `work` dependent madd_(x, x) on each of the four values a..d
 * (x86: the width's vpmaddwd; scalar: a multiply), kept (asm constraint keep_) from
 * being folded away. */
#define PW_BENCH_PACE(work, madd_, keep_, a, b, c, d)                                      \
    for (int w_ = 0; w_ < (work); ++w_) {                                                  \
        (a) = madd_((a), (a));                                                             \
        (b) = madd_((b), (b));                                                             \
        (c) = madd_((c), (c));                                                             \
        (d) = madd_((d), (d));                                                             \
        __asm__("" : keep_(a), keep_(b), keep_(c), keep_(d));                              \
    }
/* Those kernels' distances (PW__TILE32_PF_FAR into L2, PW__TILE32_PF_L1 into L1). */
#define PW_BENCH_PREFETCH_FAR 16384
#define PW_BENCH_PREFETCH_L1 3072
static inline void pw_bench_prefetch(const void *p, int prefetch, int near) {
    if (prefetch > 0)
        __builtin_prefetch((const char *)p + prefetch, 0, 3);
    else if (prefetch < 0)
        __builtin_prefetch((const char *)p - prefetch, 0, 2);
    if (near) __builtin_prefetch((const char *)p + near, 0, 3);
}
double pw_bench_int8_scalar(uint64_t iters);
uint64_t pw_bench_read_scalar(const void *p, size_t bytes, int prefetch, int near, int streams,
                              int work);
/* A read in the K-quant GEMVs' record shape (the ceiling's `records_l1` ways): records of
 * PW_BENCH_RECORD bytes (a Q4_K record, kernel/q4kx.h), each eight parts of eight lines,
 * every part first prefetching nine lines into L1 PW_BENCH_PREFETCH_BYTES on (a record's
 * worth in all) and then loading its eight into one dependent chain (xor, then vpmaddwd:
 * about the latency of the kernels' vpdpbusd chains), then the record's last eight lines;
 * `streams` contiguous parts of whole records, a record of each in turn; the bytes past
 * them plainly. Returns a sum of the bytes, so that no load is dropped. */
#define PW_BENCH_RECORD 4608
/* The loop of those reads: acc_ = record_(rec, pf, acc_) over the whole records of
 * `streams_` contiguous parts of [b_, b_ + bytes_), a record of each part in turn, pf
 * saying whether a record's worth PW_BENCH_PREFETCH_BYTES on is still in the part;
 * done_ = the bytes they cover (the caller reads the rest plainly). */
#define PW_BENCH_RECORDS(record_, acc_, b_, bytes_, streams_, done_)                          \
    do {                                                                                    \
        const size_t part_ = (bytes_) / (size_t)(streams_) / PW_BENCH_RECORD * PW_BENCH_RECORD; \
        for (size_t r_ = 0; r_ < part_; r_ += PW_BENCH_RECORD) {                            \
            const int pf_ = r_ + PW_BENCH_RECORD + PW_BENCH_PREFETCH_BYTES <= part_;        \
            for (int k_ = 0; k_ < (streams_); ++k_)                                         \
                (acc_) = record_((b_) + (size_t)k_ * part_ + r_, pf_, (acc_));              \
        }                                                                                   \
        (done_) = part_ * (size_t)(streams_);                                               \
    } while (0)
uint64_t pw_bench_read_records_scalar(const void *p, size_t bytes, int streams);
/* The sum of n 32-bit lanes of a read's final accumulator, stored (the x86 reads' sink,
 * which keeps their loads live; its value means nothing): added as unsigned, as int
 * lanes the sum may overflow (UBSan). */
static inline uint64_t pw_bench_lanes_sum(const uint32_t *lanes, int n) {
    uint64_t sum = 0;
    for (int i = 0; i < n; ++i) sum += lanes[i];
    return sum;
}
#if defined(__x86_64__)
double pw_bench_int8_avx2(uint64_t iters);
double pw_bench_int8_avxvnni(uint64_t iters);
double pw_bench_int8_avx512(uint64_t iters);
uint64_t pw_bench_read_avx2(const void *p, size_t bytes, int prefetch, int near, int streams,
                              int work);
uint64_t pw_bench_read_avx512(const void *p, size_t bytes, int prefetch, int near, int streams,
                              int work);
uint64_t pw_bench_read_records_avx2(const void *p, size_t bytes, int streams);
uint64_t pw_bench_read_records_avx512(const void *p, size_t bytes, int streams);
#endif
#if defined(__aarch64__)
double pw_bench_int8_neon(uint64_t iters);
double pw_bench_int8_dotprod(uint64_t iters);
double pw_bench_int8_i8mm(uint64_t iters);
#endif

/* --- sections --- */

/* The matmul suite on its own context: machine figures, then every case
 * (JSON lines are printed as they come with o->json); results appended to r. */
int pw_bench_matmul(const pw_bench_options *o, pw_bench_results *r);
/* A whole decode step per format and thread count (bench_step.c); machine figures from r
 * or measured into it. */
int pw_bench_step(const pw_bench_options *o, pw_bench_results *r);
/* Decode throughput per format: GB/s of packed bytes read and of floats written. */
int pw_bench_decode(pw_context *ctx, const pw_bench_options *o);

/* --- output (bench_report.c) --- */

void pw_bench_print_machine_json(const pw_bench_machine *m);
void pw_bench_print_case_json(const pw_bench_result *c);
void pw_bench_print_table(const pw_bench_results *r);
/* Roofline chart of r drawn by gnuplot into an SVG file (bench_plot.c); returns an exit code. */
int pw_bench_plot(const pw_bench_results *r, const char *svg_path);
/* Before a run: the path is usable and gnuplot is installed (exit code, message on failure). */
int pw_bench_plot_check(const char *svg_path);

#endif
