/*
 * The machine section of `packwise bench`: what this machine can do, measured
 * in the same run as the kernels (DESIGN.md "Performance method").
 *
 * - Read bandwidth: a streaming sum over a buffer much larger than the
 *   last-level cache (at least 1 GiB and 4x the largest cache /sys reports),
 *   split into chunks run on the context's threads, with the widest loads the
 *   CPU has (the ISA cap applies to kernels, not to what the memory can do).
 * - int8 peak: register-only loops of independent multiply-accumulate chains
 *   in the best form the context's ISA allows (bench_peak_<isa>.c), 2 ops per
 *   multiply-accumulate, run on the context's threads.
 */
#include "bench.h"
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(__aarch64__)
#include <arm_neon.h>
#endif

/* Portable forms: every chain's inputs pass through an empty asm statement each
 * iteration so that the compiler can neither hoist the loop-invariant products
 * nor turn a multiply by a known constant into shifts and adds. */
double pw_bench_int8_scalar(uint64_t iters) {
    uint32_t a = 3, b0 = 1, b1 = 2, b2 = 3, b3 = 4, b4 = 5, b5 = 6, b6 = 7, b7 = 8;
    uint32_t c0 = 0, c1 = 0, c2 = 0, c3 = 0, c4 = 0, c5 = 0, c6 = 0, c7 = 0;
    for (uint64_t i = 0; i < iters; ++i) {
        __asm__ volatile("" : "+r"(a), "+r"(b0), "+r"(b1), "+r"(b2), "+r"(b3), "+r"(b4), "+r"(b5),
                         "+r"(b6), "+r"(b7));
        c0 += a * b0;
        c1 += a * b1;
        c2 += a * b2;
        c3 += a * b3;
        c4 += a * b4;
        c5 += a * b5;
        c6 += a * b6;
        c7 += a * b7;
    }
    volatile uint32_t sink = c0 + c1 + c2 + c3 + c4 + c5 + c6 + c7;
    (void)sink;
    return (double)iters * 8.0 * 2.0;
}

/* The scalar read's pacing step: a dependent multiply. */
static inline uint64_t pace64(uint64_t a, uint64_t b) { return a * (b | 1); }

uint64_t pw_bench_read_scalar(const void *p, size_t bytes, int prefetch, int near, int streams,
                              int work) {
    const size_t part = bytes / (size_t)streams;
    uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    for (size_t o = 0; o < part; o += 64)
        for (int k = 0; k < streams; ++k) {
            const uint64_t *v = (const uint64_t *)((const uint8_t *)p + (size_t)k * part + o);
            if (prefetch | near) pw_bench_prefetch(v, prefetch, near);
            uint64_t a = v[0] + v[1], b = v[2] + v[3], c = v[4] + v[5], d = v[6] + v[7];
            PW_BENCH_PACE(work, pace64, "+r", a, b, c, d);
            s0 += a;
            s1 += b;
            s2 += c;
            s3 += d;
        }
    return s0 + s1 + s2 + s3;
}

/* acc plus one PW_BENCH_RECORD-byte record in 8-byte loads (bench.h). */
static uint64_t record64(const uint8_t *rec, int pf, uint64_t acc) {
    for (int t = 0; t < 8; ++t) {
        for (int l = 0; pf && l < 9; ++l)
            __builtin_prefetch(rec + 576 * t + PW_BENCH_PREFETCH_BYTES + 64 * l, 0, 3);
        uint64_t a = 0;
        for (int l = 8 * t; l < 8 * t + 8; ++l) {
            const uint64_t *v = (const uint64_t *)(const void *)(rec + 64 * l);
            a = pace64(a ^ (v[0] + v[1] + v[2] + v[3]), v[4] + v[5] + v[6] + v[7]);
        }
        acc += a;
    }
    for (int l = 0; l < 8; ++l) {
        const uint64_t *v = (const uint64_t *)(const void *)(rec + 4096 + 64 * l);
        acc += v[0] + v[1] + v[2] + v[3] + v[4] + v[5] + v[6] + v[7];
    }
    return acc;
}

uint64_t pw_bench_read_records_scalar(const void *p, size_t bytes, int streams) {
    const uint8_t *b = p;
    uint64_t acc = 0;
    size_t done;
    PW_BENCH_RECORDS(record64, acc, b, bytes, streams, done);
    for (size_t r = done; r + 8 <= bytes; r += 8) acc += *(const uint64_t *)(const void *)(b + r);
    return acc;
}

#if defined(__aarch64__)
/* Plain NEON (no SDOT): smull of 8 int8 pairs, pairwise-added into int32 lanes. */
double pw_bench_int8_neon(uint64_t iters) {
    const int8x8_t a = vdup_n_s8(3);
    int8x8_t b0 = vdup_n_s8(-2), b1 = vdup_n_s8(-1), b2 = vdup_n_s8(1), b3 = vdup_n_s8(2),
             b4 = vdup_n_s8(-3), b5 = vdup_n_s8(3), b6 = vdup_n_s8(-4), b7 = vdup_n_s8(4);
    int32x4_t c0 = vdupq_n_s32(0), c1 = c0, c2 = c0, c3 = c0, c4 = c0, c5 = c0, c6 = c0, c7 = c0;
    for (uint64_t i = 0; i < iters; ++i) {
        __asm__ volatile("" : "+w"(b0), "+w"(b1), "+w"(b2), "+w"(b3), "+w"(b4), "+w"(b5),
                         "+w"(b6), "+w"(b7));
        c0 = vpadalq_s16(c0, vmull_s8(a, b0));
        c1 = vpadalq_s16(c1, vmull_s8(a, b1));
        c2 = vpadalq_s16(c2, vmull_s8(a, b2));
        c3 = vpadalq_s16(c3, vmull_s8(a, b3));
        c4 = vpadalq_s16(c4, vmull_s8(a, b4));
        c5 = vpadalq_s16(c5, vmull_s8(a, b5));
        c6 = vpadalq_s16(c6, vmull_s8(a, b6));
        c7 = vpadalq_s16(c7, vmull_s8(a, b7));
    }
    const int32x4_t s = vaddq_s32(vaddq_s32(vaddq_s32(c0, c1), vaddq_s32(c2, c3)),
                                  vaddq_s32(vaddq_s32(c4, c5), vaddq_s32(c6, c7)));
    volatile int32_t sink = vaddvq_s32(s);
    (void)sink;
    return (double)iters * 8.0 * 8.0 * 2.0;
}
#endif

typedef double (*int8_fn)(uint64_t iters);
typedef uint64_t (*read_fn)(const void *p, size_t bytes, int prefetch, int near, int streams,
                            int work);

static int has(uint32_t f, uint32_t want) { return (f & want) == want; }

/* The int8 loop for the ISA the context allows, and its name. */
static int8_fn pick_int8(const pw_context *ctx, const char **isa) {
    const uint32_t f = pw_context_usable_features(ctx);
    (void)f;
#if defined(__x86_64__)
    if (has(f, PW_CPU_AVX512F | PW_CPU_AVX512BW | PW_CPU_AVX512VL | PW_CPU_AVX512VNNI)) {
        *isa = "avx512vnni";
        return pw_bench_int8_avx512;
    }
    if (has(f, PW_CPU_AVX2 | PW_CPU_AVXVNNI)) {
        *isa = "avxvnni";
        return pw_bench_int8_avxvnni;
    }
    if (has(f, PW_CPU_AVX2)) {
        *isa = "avx2";
        return pw_bench_int8_avx2;
    }
#elif defined(__aarch64__)
    if (has(f, PW_CPU_NEON | PW_CPU_I8MM)) {
        *isa = "i8mm";
        return pw_bench_int8_i8mm;
    }
    if (has(f, PW_CPU_NEON | PW_CPU_DOTPROD)) {
        *isa = "dotprod";
        return pw_bench_int8_dotprod;
    }
    if (has(f, PW_CPU_NEON)) {
        *isa = "neon";
        return pw_bench_int8_neon;
    }
#endif
    *isa = "scalar";
    return pw_bench_int8_scalar;
}

/* The widest loads the CPU has, whatever the ISA cap: bandwidth belongs to the machine,
 * and plain C with 8-byte loads streams about a third slower on the Xeon this was written on. */
static read_fn pick_read(const pw_context *ctx) {
    const uint32_t f = pw_context_cpu_features(ctx);
    (void)f;
#if defined(__x86_64__)
    if (has(f, PW_CPU_AVX512F)) return pw_bench_read_avx512;
    if (has(f, PW_CPU_AVX2)) return pw_bench_read_avx2;
#endif
    return pw_bench_read_scalar;
}

typedef uint64_t (*records_fn)(const void *p, size_t bytes, int streams);
/* The record-shaped read (the `records_l1` way) with the same loads as pick_read's. */
static records_fn pick_records(const pw_context *ctx) {
    const uint32_t f = pw_context_cpu_features(ctx);
    (void)f;
#if defined(__x86_64__)
    if (has(f, PW_CPU_AVX512F | PW_CPU_AVX512BW)) return pw_bench_read_records_avx512;
    if (has(f, PW_CPU_AVX2)) return pw_bench_read_records_avx2;
#endif
    return pw_bench_read_records_scalar;
}

/* Largest cache size /sys reports for cpu0, in bytes (0 when unknown). */
static uint64_t last_level_cache_bytes(void) {
    uint64_t best = 0;
    for (int i = 0; i < 8; ++i) {
        char path[96], text[32];
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
        FILE *f = fopen(path, "r");
        if (f == NULL) continue;
        const int ok = fgets(text, sizeof text, f) != NULL;
        fclose(f);
        if (!ok) continue;
        char *end = NULL;
        uint64_t v = strtoull(text, &end, 10);
        if (*end == 'K') v <<= 10;
        else if (*end == 'M') v <<= 20;
        else if (*end == 'G') v <<= 30;
        if (v > best) best = v;
    }
    return best;
}

size_t pw_bench_read_buffer_bytes(const pw_bench_options *o) {
    const uint64_t chunk = 1u << 20;
    if (o->quick) return 32u << 20;
    uint64_t want = (uint64_t)1 << 30;
    const uint64_t llc4 = 4 * last_level_cache_bytes();
    if (llc4 > want) want = llc4;
    want = (want + chunk - 1) / chunk * chunk;
    return want > SIZE_MAX ? (size_t)1 << 30 : (size_t)want;
}

typedef struct read_task {
    read_fn fn;
    const uint8_t *base;
    size_t chunk;
    int prefetch, streams;
    uint64_t sink;
} read_task;

/* Task i reads bytes [i * chunk, (i + 1) * chunk) of base. */
static void run_read(void *p, size_t i) {
    read_task *t = p;
    __atomic_fetch_add(&t->sink, t->fn(t->base + i * t->chunk, t->chunk, t->prefetch, 0, t->streams, 0), __ATOMIC_RELAXED);
}

typedef struct int8_task {
    int8_fn fn;
    uint64_t iters;
} int8_task;

static void run_int8(void *p, size_t i) {
    const int8_task *t = p;
    (void)i;
    t->fn(t->iters);
}

static int better(int clean, double value, int best_clean, double best_value);

static void measure_once(pw_context *ctx, const pw_bench_options *o, void *buffer, size_t bytes,
                         pw_bench_machine *m) {
    const int threads = pw_context_threads(ctx);
    memset(m, 0, sizeof *m);
    m->threads = threads;

    /* The whole buffer streams through in order, timed in slices short enough
     * (16 MiB, about a millisecond) that some run undisturbed on a loaded machine;
     * chunks of 1 MiB, more than threads, so that an uneven start evens out. */
    read_task rt = {pick_read(ctx), buffer, (size_t)1 << 20, PW_BENCH_PREFETCH_BYTES, 1, 0};
    const size_t chunks = bytes / rt.chunk;
    size_t slice = ((size_t)16 << 20) / rt.chunk;
    if (slice > chunks) slice = chunks;
    const size_t slices = chunks / slice;
    pw_context_parallel_for(ctx, run_read, &rt, chunks); /* warm-up: page tables, frequency */
    /* each slice read with the software prefetch (s) and without (s_plain), in turn */
    pw_bench_sampler s, s_plain;
    pw_bench_sampler_init(&s, threads);
    pw_bench_sampler_init(&s_plain, threads);
    for (size_t k = 0; pw_bench_sample_more(&s, o->quick ? 2 : 8, o->quick ? 4 : 64, 1.0); ++k) {
        read_task part = rt;
        part.base = rt.base + (k % slices) * slice * rt.chunk;
        pw_bench_sample_start(&s);
        pw_context_parallel_for(ctx, run_read, &part, slice);
        pw_bench_sample_stop(&s);
        part.prefetch = 0; /* another slice: this one may still be in the last-level cache */
        part.base = rt.base + ((k + slices / 2) % slices) * slice * rt.chunk;
        pw_bench_sample_start(&s_plain);
        pw_context_parallel_for(ctx, run_read, &part, slice);
        pw_bench_sample_stop(&s_plain);
    }
    m->read_bytes = (uint64_t)(slices * slice * rt.chunk);
    /* Ceilings: a busy neighbour (another process, a sibling hyperthread of the host)
     * only ever slows a sample down, so the figure is the fast end of the undisturbed
     * samples (the 10th percentile of times) rather than their median; of the faster way. */
    const double t_pf = pw_bench_sample_quantile(&s, 0.1), t_plain = pw_bench_sample_quantile(&s_plain, 0.1);
    const int plain = better(s_plain.nclean, 1.0 / t_plain, s.nclean, 1.0 / t_pf);
    m->read_gbps = (double)(slice * rt.chunk) / (plain ? t_plain : t_pf) * 1e-9;
    m->read_clean = plain ? s_plain.nclean : s.nclean;

    pw_bench_peak pk;
    pw_bench_peak_init(ctx, &pk, o->quick);
    m->peak_isa = pk.isa;
    while (pw_bench_sample_more(&pk.s, o->quick ? 2 : 9, o->quick ? 3 : 63, 0.3))
        pw_bench_peak_sample(ctx, &pk);
    m->int8_gops = pk.ops_per_sample / pw_bench_sample_quantile(&pk.s, 0.1) * 1e-9;
    m->peak_clean = pk.s.nclean;
}

/* --- int8 peak samples (bench.h) --- */

void pw_bench_peak_init(pw_context *ctx, pw_bench_peak *p, int quick) {
    memset(p, 0, sizeof *p);
    const int threads = pw_context_threads(ctx);
    /* Calibrate the loop on this thread, then give each thread four tasks of about
     * a quarter of the sample time (so a late-starting thread cannot skew much). */
    p->fn = pick_int8(ctx, &p->isa);
    uint64_t iters = 1u << 14;
    const double t0 = pw_bench_now();
    const double ops_per_iter = p->fn(iters) / (double)iters;
    const double per_iter = (pw_bench_now() - t0) / (double)iters;
    const double target = quick ? 0.0005 : 0.002;
    const double want = target / 4.0 / (per_iter > 0 ? per_iter : 1e-9);
    p->iters = want < 1024 ? 1024 : (uint64_t)want;
    p->tasks = 4 * (size_t)threads;
    p->ops_per_sample = ops_per_iter * (double)p->iters * (double)p->tasks;
    pw_bench_sampler_init(&p->s, threads);
}

void pw_bench_peak_sample(pw_context *ctx, pw_bench_peak *p) {
    int8_task it = {p->fn, p->iters};
    pw_bench_sample_start(&p->s);
    pw_context_parallel_for(ctx, run_int8, &it, p->tasks);
    pw_bench_sample_stop(&p->s);
}

double pw_bench_peak_kernel_median(pw_bench_peak *p, pw_bench_sampler *kernel) {
    p->clean = kernel->nclean >= PW_BENCH_CLEAN_MIN && p->s.nclean >= PW_BENCH_CLEAN_MIN;
    return pw_bench_sample_median_of(kernel, p->clean);
}

void pw_bench_peak_finish(pw_bench_peak *p, double gflops, const pw_bench_machine *m, double *peak_gops,
                          double *fraction, int *invalid, double *machine_fraction) {
    *peak_gops = p->s.nall > 0 ? p->ops_per_sample / pw_bench_sample_median_of(&p->s, p->clean != 0) * 1e-9 : 0;
    *machine_fraction = m != NULL && m->int8_gops > 0 ? gflops / m->int8_gops : 0;
    *fraction = *peak_gops > 0 ? gflops / *peak_gops : 0;
    *invalid = *fraction > PW_BENCH_CEILING_SLACK;
}

/* Keep the better of two measurements of a ceiling: undisturbed beats disturbed, then higher. */
static int better(int clean, double value, int best_clean, double best_value) {
    if ((clean > 0) != (best_clean > 0)) return clean > 0;
    return value > best_value;
}

int pw_bench_machine_measure(pw_context *ctx, const pw_bench_options *o, void *buffer,
                             size_t bytes, pw_bench_machine *m) {
    measure_once(ctx, o, buffer, bytes, m);
    /* On a busy machine every multi-thread sample may miss a CPU: try again a few
     * times after a pause (the other processes may be between jobs by then). */
    for (int attempt = 1; attempt < (o->quick ? 1 : 4) && (m->read_clean == 0 || m->peak_clean == 0);
         ++attempt) {
        const struct timespec pause = {0, 500000000};
        nanosleep(&pause, NULL);
        pw_bench_machine again;
        measure_once(ctx, o, buffer, bytes, &again);
        if (better(again.read_clean, again.read_gbps, m->read_clean, m->read_gbps)) {
            m->read_gbps = again.read_gbps;
            m->read_clean = again.read_clean;
        }
        if (better(again.peak_clean, again.int8_gops, m->peak_clean, m->int8_gops)) {
            m->int8_gops = again.int8_gops;
            m->peak_clean = again.peak_clean;
        }
    }
    return PW_EXIT_OK;
}

/* --- a GEMV case's own ceiling (bench.h) --- */

/* Room for `pieces` pieces; 0 or an exit code after a message. */
static int ceiling_pieces(pw_bench_ceiling *c, size_t pieces, int threads) {
    c->piece = calloc(pieces ? pieces : 1, sizeof *c->piece);
    c->piece_bytes = calloc(pieces ? pieces : 1, sizeof *c->piece_bytes);
    if (c->piece == NULL || c->piece_bytes == NULL)
        return pw_cli_fail("bench", "out of memory for a ceiling of %zu pieces", pieces);
    c->clean = -1;
    c->threads = threads;
    for (int w = 0; w < PW_BENCH_CEILING_WAYS; ++w) pw_bench_sampler_init(&c->way[w], threads);
    return PW_EXIT_OK;
}

int pw_bench_ceiling_init(pw_bench_ceiling *c, size_t bytes, int threads) {
    memset(c, 0, sizeof *c);
    if (threads < 1) threads = 1;
    /* 8 contiguous chunks per thread, taken in order by whichever thread is free (so a
     * thread that starts late does not hold the others up, as a kernel's row ranges
     * even out), each a multiple of 4 KiB (the read loops step by 256 bytes) */
    size_t chunks = 8 * (size_t)threads, chunk = bytes / chunks / 4096 * 4096;
    if (chunk == 0) {
        chunk = 4096;
        chunks = bytes / 4096 ? bytes / 4096 : 1;
    }
    c->bytes = chunk * chunks;
    const pw_allocator lib = pw_allocator_default();
    c->buffer = lib.alloc(lib.user, c->bytes, c->bytes >= ((size_t)4 << 20) ? (size_t)2 << 20 : 64);
    if (c->buffer == NULL)
        return pw_cli_fail("bench", "out of memory for a %zu-byte ceiling buffer", c->bytes);
    pw_bench_fill_distinct(c->buffer, c->bytes);
    const int rc = ceiling_pieces(c, chunks, threads);
    if (rc != PW_EXIT_OK) return rc;
    for (size_t i = 0; i < chunks; ++i) {
        c->piece[i] = c->buffer + i * chunk;
        c->piece_bytes[i] = chunk;
    }
    c->pieces = chunks;
    return PW_EXIT_OK;
}

int pw_bench_ceiling_init_regions(pw_bench_ceiling *c, const pw_bench_block *r, size_t n,
                                  int threads) {
    memset(c, 0, sizeof *c);
    if (threads < 1) threads = 1;
    size_t total = 0;
    for (size_t i = 0; i < n; ++i) total += r[i].bytes;
    /* pieces of about an eighth of a thread's share (as the buffer's chunks), whole 4 KiB
     * pages, the read loops' 4 KiB steps (256 bytes x 16 streams) of each */
    size_t piece = total / (8 * (size_t)threads) / 4096 * 4096;
    if (piece < 4096) piece = 4096;
    size_t pieces = 0;
    for (size_t i = 0; i < n; ++i) pieces += (r[i].bytes + piece - 1) / piece;
    const int rc = ceiling_pieces(c, pieces, threads);
    for (size_t i = 0; rc == PW_EXIT_OK && i < n; ++i) {
        /* from the first 64-byte boundary: the read loops' loads are aligned */
        const size_t skip = (64 - ((uintptr_t)r[i].p & 63)) & 63;
        if (r[i].bytes <= skip) continue;
        const uint8_t *p = (const uint8_t *)r[i].p + skip;
        const size_t bytes = r[i].bytes - skip;
        for (size_t o = 0; o < bytes; o += piece) {
            const size_t left = bytes - o, m = (left < piece ? left : piece) / 4096 * 4096;
            if (m == 0) continue;
            c->piece[c->pieces] = p + o;
            c->piece_bytes[c->pieces++] = m;
            c->bytes += m;
        }
    }
    /* in address order, as a step's weights lie */
    for (size_t i = 1; i < c->pieces; ++i)
        for (size_t j = i; j > 0 && c->piece[j - 1] > c->piece[j]; --j) {
            const uint8_t *p = c->piece[j];
            const size_t m = c->piece_bytes[j];
            c->piece[j] = c->piece[j - 1];
            c->piece_bytes[j] = c->piece_bytes[j - 1];
            c->piece[j - 1] = p;
            c->piece_bytes[j - 1] = m;
        }
    return rc;
}

/* The ceiling's ways of reading (bench.h): one stream with the kernels' software
 * prefetch into L1 and without it; four streams with it; eight without; eight and
 * sixteen with prefetches into L2 (pw_bench_prefetch: a negative distance); each
 * thread's share as one range of four streams without prefetch (`whole`: the GEMVs'
 * way on Zen 4, tile32_prefetch.h); and four streams without prefetch paced by four
 * dependent vpmaddwd on each line (`work`), by pieces and by whole shares; one and
 * two streams with the L1 prefetch, paced the same way; and four streams with the L1
 * prefetch PW_BENCH_PREFETCH_NEAR ahead (the Zen 5 AVX-512 Q4_0, Q8_0 and QC4W GEMVs');
 * and one stream, two paced and four paced over whole shares, prefetched twice, into L2
 * PW_BENCH_PREFETCH_FAR ahead and into L1 PW_BENCH_PREFETCH_L1 ahead (the Intel AVX-512
 * and AVX-VNNI GEMVs'); and in the K-quant GEMVs' record shape, as one stream and as four
 * (pw_bench_read_records_*, bench.h). */
static const struct {
    int prefetch, near, streams, whole, work;
    const char *name; /* JSON "ceiling_way" when it is the fastest */
    int records;      /* read in the K-quant GEMVs' record shape (pick_records), the rest unused */
} ceiling_ways[PW_BENCH_CEILING_WAYS] = {
    {PW_BENCH_PREFETCH_BYTES, 0, 1, 0, 0, "1_stream_l1", 0},
    {0, 0, 1, 0, 0, "1_stream", 0},
    {PW_BENCH_PREFETCH_BYTES, 0, 4, 0, 0, "4_streams_l1", 0},
    {0, 0, 8, 0, 0, "8_streams", 0},
    {-8192, 0, 8, 0, 0, "8_streams_l2", 0},
    {-4096, 0, 16, 0, 0, "16_streams_l2", 0},
    {0, 0, 4, 1, 0, "4_streams_share", 0},
    {0, 0, 4, 0, 4, "4_streams_paced", 0},
    {0, 0, 4, 1, 4, "4_streams_share_paced", 0},
    {PW_BENCH_PREFETCH_BYTES, 0, 1, 0, 4, "1_stream_l1_paced", 0},
    {PW_BENCH_PREFETCH_BYTES, 0, 2, 0, 4, "2_streams_l1_paced", 0},
    {PW_BENCH_PREFETCH_NEAR, 0, 4, 0, 0, "4_streams_l1_near", 0},
    {-PW_BENCH_PREFETCH_FAR, PW_BENCH_PREFETCH_L1, 1, 0, 0, "1_stream_l2_l1", 0},
    {-PW_BENCH_PREFETCH_FAR, PW_BENCH_PREFETCH_L1, 2, 0, 4, "2_streams_l2_l1_paced", 0},
    {-PW_BENCH_PREFETCH_FAR, PW_BENCH_PREFETCH_L1, 4, 1, 4, "4_streams_l2_l1_paced", 0},
    {PW_BENCH_PREFETCH_BYTES, 0, 1, 0, 0, "records_l1", 1},
    {PW_BENCH_PREFETCH_BYTES, 0, 4, 0, 0, "4_streams_records_l1", 1}};

typedef struct piece_task {
    read_fn fn;
    records_fn records; /* instead of fn when not NULL */
    const pw_bench_ceiling *c;
    int prefetch, near, streams, work;
    uint64_t sink;
} piece_task;

static void run_piece(void *p, size_t i) {
    piece_task *t = p;
    const uint8_t *q = t->c->piece[i];
    const size_t n = t->c->piece_bytes[i];
    __atomic_fetch_add(&t->sink,
                       t->records ? t->records(q, n, t->streams)
                                  : t->fn(q, n, t->prefetch, t->near, t->streams, t->work),
                       __ATOMIC_RELAXED);
}

/* Task i of c->threads: the i-th share of the buffer, one range (a `whole` way). */
static void run_share(void *p, size_t i) {
    piece_task *t = p;
    const size_t share = t->c->bytes / (size_t)t->c->threads;
    __atomic_fetch_add(&t->sink, t->fn(t->c->buffer + i * share, share, t->prefetch, t->near, t->streams, t->work),
                       __ATOMIC_RELAXED);
}

/* One timed read of the pieces way w: after a flush of them, or (flush 0) of a buffer
 * of its own after one untimed read (the blocks of a tracker: no read first; the caller
 * read them just before, bench.h). */
static void ceiling_read(pw_context *ctx, pw_bench_ceiling *c, int w, int flush) {
    piece_task t = {pick_read(ctx), ceiling_ways[w].records ? pick_records(ctx) : NULL, c,
                    ceiling_ways[w].prefetch, ceiling_ways[w].near, ceiling_ways[w].streams,
                    ceiling_ways[w].work, 0};
    /* whole shares: the buffer's threads shares are each a whole number of 4 KiB pages */
    const size_t unit = 4096 * (size_t)c->threads;
    const int whole = ceiling_ways[w].whole && c->buffer != NULL && c->threads > 0 &&
                      c->bytes % unit == 0;
    void (*task)(void *, size_t) = whole ? run_share : run_piece;
    const size_t tasks = whole ? (size_t)c->threads : c->pieces;
    if (flush)
        for (size_t i = 0; i < c->pieces; ++i) pw_bench_flush(c->piece[i], c->piece_bytes[i]);
    else if (c->buffer != NULL)
        pw_context_parallel_for(ctx, task, &t, tasks);
    pw_bench_sample_start(&c->way[w]);
    pw_context_parallel_for(ctx, task, &t, tasks);
    pw_bench_sample_stop(&c->way[w]);
}

void pw_bench_ceiling_sample(pw_context *ctx, pw_bench_ceiling *c, int flush) {
    for (int w = 0; w < PW_BENCH_CEILING_WAYS; ++w) ceiling_read(ctx, c, w, flush);
}

void pw_bench_ceiling_sample_way(pw_context *ctx, pw_bench_ceiling *c, int way, int flush) {
    ceiling_read(ctx, c, way % PW_BENCH_CEILING_WAYS, flush);
}

double pw_bench_ceiling_kernel_median(pw_bench_ceiling *c, pw_bench_sampler *kernel) {
    c->clean = kernel->nclean >= PW_BENCH_CLEAN_MIN;
    for (int w = 0; w < PW_BENCH_CEILING_WAYS; ++w) c->clean &= c->way[w].nclean >= PW_BENCH_CLEAN_MIN;
    return pw_bench_sample_median_of(kernel, c->clean);
}

/* The fastest way (-1 when no sample was taken), its GB/s in *gbps and every way's in
 * *ways (when not NULL). */
static int fastest_way(pw_bench_ceiling *c, double *gbps, pw_bench_ways *ways) {
    const int clean = c->clean != 0; /* -1 (no kernel median asked for): undisturbed when any */
    double best = 0;
    int at = -1;
    for (int w = 0; w < PW_BENCH_CEILING_WAYS; ++w) {
        if (ways != NULL) ways->gbps[w] = 0;
        if (c->way[w].nall == 0) continue;
        const double g = (double)c->bytes / pw_bench_sample_median_of(&c->way[w], clean) * 1e-9;
        if (ways != NULL) ways->gbps[w] = g;
        if (g > best) {
            best = g;
            at = w;
        }
    }
    *gbps = best;
    return at;
}

static void ceiling_release(pw_bench_ceiling *c) {
    if (c->buffer != NULL) {
        const pw_allocator lib = pw_allocator_default();
        lib.free(lib.user, c->buffer);
    }
    free(c->piece);
    free(c->piece_bytes);
    c->buffer = NULL;
    c->piece = NULL;
    c->piece_bytes = NULL;
    c->pieces = 0;
}

void pw_bench_ceiling_free(pw_bench_ceiling *c) {
    ceiling_release(c);
    memset(c, 0, sizeof *c);
}

const char *pw_bench_ceiling_way_name(int way) {
    return way >= 0 && way < PW_BENCH_CEILING_WAYS ? ceiling_ways[way].name : "none";
}

void pw_bench_ceiling_finish(pw_bench_ceiling *c, double weight_gbps, const pw_bench_machine *m,
                             double *ceiling_gbps, double *fraction, int *invalid,
                             double *machine_fraction, const char **way, pw_bench_ways *ways) {
    const int w = fastest_way(c, ceiling_gbps, ways);
    *way = pw_bench_ceiling_way_name(w);
    pw_bench_ceiling_free(c);
    *machine_fraction = m != NULL && m->read_gbps > 0 ? weight_gbps / m->read_gbps : 0;
    *fraction = *ceiling_gbps > 0 ? weight_gbps / *ceiling_gbps : 0;
    *invalid = *fraction > PW_BENCH_CEILING_SLACK;
}

/* --- the machine figures of a results set (bench.h) --- */

const pw_bench_machine *pw_bench_machine_for(const pw_bench_results *r, int threads) {
    for (int i = 0; i < r->nmachine; ++i)
        if (r->machine[i].threads == threads) return &r->machine[i];
    return NULL;
}

int pw_bench_ensure_machine(pw_context *ctx, const pw_bench_options *o, pw_bench_results *r,
                          int threads) {
    if (pw_bench_machine_for(r, threads) != NULL) return PW_EXIT_OK;
    if (r->nmachine == PW_BENCH_MAX_LIST) return pw_cli_fail("bench", "too many thread counts");
    const size_t bytes = pw_bench_read_buffer_bytes(o);
    uint8_t *buf = pw_bench_alloc(bytes);
    if (buf == NULL) return pw_cli_fail("bench", "out of memory for a %zu-byte read buffer", bytes);
    pw_bench_fill_distinct(buf, bytes);
    pw_bench_machine *m = &r->machine[r->nmachine];
    const int rc = pw_bench_machine_measure(ctx, o, buf, bytes, m);
    free(buf);
    if (rc != PW_EXIT_OK) return rc;
    m->threads = threads;
    ++r->nmachine;
    if (o->json) pw_bench_print_machine_json(m);
    return PW_EXIT_OK;
}

