/*
 * `packwise bench --step`: a whole decode step, as an engine runs it. A 7B-shaped
 * layer (D = 4096, F = 11008: Q, K, V, O at [D, D], gate and up at [F, D], down at
 * [D, F]) repeated for `layers` layers (8 by default: about 0.9 GiB at Q4_0, several
 * times the last-level cache, so every weight comes from memory), one token at a time:
 * X quantized once for Q/K/V and once for gate/up (pw_matmul_wt_many), O and down
 * alone. Formats: Q4_0, Q8_0, Q4_K, Q6_K, QC4W and a Q4_K_M-like mix (Q4_K, with
 * Q6_K for V and down); --formats picks among the first five.
 *
 * Each sample is one token through every layer; the same run also times the token
 * with the seven products called one by one (interleaved, A B B A: which of the two
 * goes first alternates, as the first of a pair follows the ceiling's read), so the
 * saving of the batched call per layer is measured under the same conditions. With the
 * batched token always first, the saving on 1 thread read -80 to -108 us a layer in
 * three of four rows (Q4_0, Q8_0, two runs; Q8_0 on 2 threads -96 once); in turn, the
 * same runs on the same machine read -10 to +14 on 1 thread, +20 to +94 on 2. Before each
 * pair, on the same threads, the case measures its ceiling: a streaming read of the
 * very bytes a token reads, the packed forms the weights hold (the library allocates
 * through a tracker here; pw_bench_ceiling_init_blocks), one way a round, the ways in
 * turn, not flushed (like the weights, they are several times the last-level cache,
 * and were all read one token before). The fraction is the weight bytes read per
 * token (the packed forms the weights hold) over the time, against that ceiling;
 * above 1.02 it is flagged ('!', "ceiling_valid":false) as a mismeasured ceiling.
 * "machine_fraction" is the same against the machine section's read.
 *
 * JSON: {"kind":"step","format":F,"layers":L,"threads":T,"tokens_per_s":..,
 *        "weight_gbps":..,"fraction":..,"ceiling_gbps":..,"ceiling_valid":..,"ceiling_way":..,
 *        "machine_fraction":..,"ceiling_ways":{way:GB/s,..},"layer_us":..,"separate_layer_us":..,
 *        "saving_us_per_layer":..,"weight_bytes":..,"clean_reps":..,"spin_wait":..}
 */
#include "bench.h"
#include "cli.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { NPROD = 7, MIX = PW_FORMAT_COUNT + 1, QC4W = PW_FORMAT_COUNT };

typedef struct step_model {
    int layers;
    int64_t d, f;
    pw_weight **w;     /* layers x 7: q, k, v, o, gate, up, down */
    void **bytes;      /* the sources (a plan may read them in place) */
    float **y;         /* 7 outputs, reused by every layer */
    uint64_t weight_bytes;
    uint64_t min_form;        /* bytes of the smallest packed form (UINT64_MAX: none) */
    pw_bench_block *sources;  /* the sources that kernels read as they are (no form) */
    size_t nsources, sources_cap;
} step_model;

static const char *variant_name(int v) {
    return v == QC4W ? "QC4W" : v == MIX ? "Q4_K_M" : pw_format_get((pw_format)v)->name;
}

/* Product p's shape. */
static void shape_of(const step_model *m, int p, int64_t *out, int64_t *in) {
    *out = p == 4 || p == 5 ? m->f : m->d;
    *in = p == 6 ? m->f : m->d;
}

static pw_weight *block_weight(pw_context *ctx, pw_format f, int64_t out, int64_t in, void **keep) {
    const pw_format_info *fi = pw_format_get(f);
    uint64_t row = 0;
    if (pw_format_row_bytes(ctx, f, in, &row) != PW_OK) return NULL;
    const int64_t distinct = out < 64 ? out : 64;
    float *src = malloc(sizeof(float) * (size_t)(distinct * in));
    uint8_t *b = pw_bench_alloc((size_t)(row * (uint64_t)out));
    if (src == NULL || b == NULL) {
        free(src);
        free(b);
        return NULL;
    }
    pw_bench_gaussian(src, (size_t)(distinct * in), 0xabcull + (uint64_t)(out * 7 + in));
    pw_status st = pw_format_quantize(ctx, f, src, (size_t)(distinct * (in / fi->block_size)), b);
    free(src);
    /* The other rows are copies of those, each of one picked at random: rows repeated in
     * a period would make whole pages of the packed form repeat, which a host that
     * merges equal pages (KSM) may serve from one copy, from the cache (Q4_K read 20%
     * above a plain read of as many bytes in a trial). */
    uint64_t pick = 0x2545f4914f6cdd1dull ^ (uint64_t)(out * 31 + in);
    for (int64_t r = distinct; st == PW_OK && r < out; ++r) {
        pick = pick * 6364136223846793005ull + 1442695040888963407ull;
        memcpy(b + (uint64_t)r * row, b + (pick >> 33) % (uint64_t)distinct * row, (size_t)row);
    }
    pw_view v;
    const int64_t shape[2] = {out, in};
    pw_weight *w = NULL;
    if (st == PW_OK) st = pw_view_init(ctx, &v, f, 2, shape, PW_LAYOUT_ROW_MAJOR, b, row * (uint64_t)out);
    if (st == PW_OK) st = pw_weight_create(ctx, &v, NULL, &w);
    if (st == PW_OK) st = pw_weight_prepare(ctx, w);
    if (st != PW_OK) {
        pw_weight_destroy(w);
        free(b);
        return NULL;
    }
    *keep = b;
    return w;
}

static pw_weight *qc4w_weight(pw_context *ctx, int64_t out, int64_t in) {
    const int64_t rb = (in + 1) / 2;
    uint8_t *nib = pw_bench_alloc((size_t)(out * rb));
    float *scale = malloc(sizeof(float) * (size_t)out);
    if (nib == NULL || scale == NULL) {
        free(nib);
        free(scale);
        return NULL;
    }
    uint64_t s = 0x9e3779b97f4a7c15ull ^ (uint64_t)(out * 131 + in);
    for (int64_t i = 0; i < out * rb; ++i) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        nib[i] = (uint8_t)(s >> 56);
    }
    for (int64_t i = 0; i < out; ++i) scale[i] = 0.01f + 0.001f * (float)(i % 7);
    pw_qc4w_weights q;
    pw_qc4w_weights_init(&q);
    q.out = out;
    q.in = in;
    q.data = nib;
    q.scale = scale;
    q.name = "step.qc4w";
    pw_weight *w = NULL;
    const pw_status st = pw_weight_create_qc4w(ctx, &q, NULL, &w);
    free(nib);
    free(scale);
    return st == PW_OK ? w : NULL;
}

static void model_free(step_model *m) {
    for (int i = 0; m->w != NULL && i < m->layers * NPROD; ++i) {
        pw_weight_destroy(m->w[i]);
        free(m->bytes[i]);
    }
    for (int p = 0; m->y != NULL && p < NPROD; ++p) free(m->y[p]);
    free(m->w);
    free(m->bytes);
    free(m->y);
    free(m->sources);
    memset(m, 0, sizeof *m);
}

static int model_make(pw_context *ctx, int variant, int layers, int64_t d, int64_t f, step_model *m) {
    memset(m, 0, sizeof *m);
    m->layers = layers;
    m->min_form = UINT64_MAX;
    m->d = d;
    m->f = f;
    m->w = calloc((size_t)(layers * NPROD), sizeof *m->w);
    m->bytes = calloc((size_t)(layers * NPROD), sizeof *m->bytes);
    m->y = calloc(NPROD, sizeof *m->y);
    if (!m->w || !m->bytes || !m->y) return pw_cli_fail("bench", "--step: out of memory");
    for (int p = 0; p < NPROD; ++p) {
        int64_t out, in;
        shape_of(m, p, &out, &in);
        m->y[p] = pw_bench_alloc(sizeof(float) * (size_t)out);
        if (m->y[p] == NULL) return pw_cli_fail("bench", "--step: out of memory");
    }
    for (int l = 0; l < layers; ++l)
        for (int p = 0; p < NPROD; ++p) {
            int64_t out, in;
            shape_of(m, p, &out, &in);
            pw_weight *w;
            if (variant == QC4W) {
                w = qc4w_weight(ctx, out, in);
            } else {
                const pw_format fmt = variant != MIX ? (pw_format)variant
                                      : (p == 2 || p == 6) ? PW_FORMAT_Q6_K : PW_FORMAT_Q4_K;
                w = block_weight(ctx, fmt, out, in, &m->bytes[l * NPROD + p]);
            }
            if (w == NULL)
                return pw_cli_fail("bench", "--step: cannot make the %s weight %d of layer %d: %s",
                                   variant_name(variant), p, l, pw_context_message(ctx));
            m->w[l * NPROD + p] = w;
            pw_weight_info info;
            memset(&info, 0, sizeof info);
            info.struct_size = sizeof info;
            (void)pw_weight_info_get(w, &info);
            m->weight_bytes += info.forms > 0 ? info.packed_bytes : info.source_bytes;
            if (info.forms > 0 && info.packed_bytes / (uint64_t)info.forms < m->min_form)
                m->min_form = info.packed_bytes / (uint64_t)info.forms;
            if (info.forms == 0 && m->bytes[l * NPROD + p] != NULL &&
                pw_bench_block_push(&m->sources, &m->nsources, &m->sources_cap,
                                    m->bytes[l * NPROD + p], (size_t)info.source_bytes) != 0)
                return pw_cli_fail("bench", "--step: out of memory");
        }
    return PW_EXIT_OK;
}

/* One token through every layer; batched = Q/K/V and gate/up as one call each. */
static pw_status token(pw_context *ctx, const step_model *m, const float *x, const float *xf, int batched) {
    for (int l = 0; l < m->layers; ++l) {
        pw_weight *const *w = m->w + l * NPROD;
        pw_status st = PW_OK;
        if (batched) {
            const pw_product qkv[3] = {{w[0], m->y[0], 0}, {w[1], m->y[1], 0}, {w[2], m->y[2], 0}};
            const pw_product gu[2] = {{w[4], m->y[4], 0}, {w[5], m->y[5], 0}};
            st = pw_matmul_wt_many(ctx, x, 1, 0, qkv, 3);
            if (st == PW_OK) st = pw_matmul_wt(ctx, x, 1, w[3], m->y[3]);
            if (st == PW_OK) st = pw_matmul_wt_many(ctx, x, 1, 0, gu, 2);
        } else {
            for (int p = 0; st == PW_OK && p < 6; ++p) st = pw_matmul_wt(ctx, x, 1, w[p], m->y[p]);
        }
        if (st == PW_OK) st = pw_matmul_wt(ctx, xf, 1, w[6], m->y[6]);
        if (st != PW_OK) return st;
    }
    return PW_OK;
}

int pw_bench_step(const pw_bench_options *o, pw_bench_results *r) {
    const int layers = o->quick ? 2 : 8;
    const int64_t d = o->quick ? 256 : 4096, f = o->quick ? 512 : 11008;
    int variants[8], nvariants = 0;
    for (int v = 0; v < PW_FORMAT_COUNT; ++v)
        if ((o->formats_mask >> v) & 1) variants[nvariants++] = v;
    if (o->qc4w) variants[nvariants++] = QC4W;
    if (nvariants == 0) {
        const int def[6] = {PW_FORMAT_Q4_0, PW_FORMAT_Q8_0, PW_FORMAT_Q4_K, PW_FORMAT_Q6_K, QC4W, MIX};
        memcpy(variants, def, sizeof def);
        nvariants = 6;
    }
    int threads[PW_BENCH_MAX_LIST] = {1, (int)sysconf(_SC_NPROCESSORS_ONLN)};
    int nthreads = threads[1] > 1 ? 2 : 1;
    if (o->nthreads > 0) {
        memcpy(threads, o->threads, sizeof threads);
        nthreads = o->nthreads;
    }
    /* the library's memory from a tracker: the ceiling reads the weights' packed forms */
    pw_bench_tracker tr;
    pw_bench_tracker_init(&tr);
    pw_context_options co;
    pw_context_options_init(&co);
    co.threads = 1;
    co.allocator = pw_bench_tracker_allocator(&tr);
    pw_context *ctx = NULL;
    if (pw_context_create(&co, &ctx) != PW_OK) {
        pw_bench_tracker_free(&tr);
        return pw_cli_fail("bench", "--step: %s", pw_last_create_message());
    }
    float *x = pw_bench_alloc(sizeof(float) * (size_t)d), *xf = pw_bench_alloc(sizeof(float) * (size_t)f);
    int rc = x && xf ? PW_EXIT_OK : pw_cli_fail("bench", "--step: out of memory");
    if (rc == PW_EXIT_OK) {
        pw_bench_gaussian(x, (size_t)d, 1);
        pw_bench_gaussian(xf, (size_t)f, 2);
    }
    for (int ti = 0; rc == PW_EXIT_OK && ti < nthreads; ++ti) {
        pw_status st = pw_context_set_threads(ctx, threads[ti]);
        if (st != PW_OK) rc = pw_cli_fail_status("bench", ctx, st, "threads");
        if (rc == PW_EXIT_OK) rc = pw_bench_ensure_machine(ctx, o, r, threads[ti]);
    }
    /* spinning workers only once the machine is measured: a worker spinning beside the
     * read-bandwidth threads lowered the ceiling (fractions of 1.04-1.5 in a trial run) */
    pw_context_set_spin_wait(ctx, o->spin_wait);
    if (rc == PW_EXIT_OK && !o->json)
        printf("\ndecode step: %d layers of a %" PRId64 "/%" PRId64 " layer, one token at a time "
               "(Q/K/V and gate/up batched; 'separate': the 7 products one by one, same run)\n"
               "%-7s %2s %12s %10s %10s %10s %9s %12s %12s\n",
               layers, d, f, "format", "T", "tokens/s", "layer_us", "GB/s", "ceil_GB/s", "fraction",
               "separate_us", "saving_us");
    for (int vi = 0; rc == PW_EXIT_OK && vi < nvariants; ++vi) {
        step_model m;
        pw_context_set_threads(ctx, threads[nthreads - 1]); /* pack on every thread */
        rc = model_make(ctx, variants[vi], layers, d, f, &m);
        for (int ti = 0; rc == PW_EXIT_OK && ti < nthreads; ++ti) {
            const int t = threads[ti];
            pw_context_set_threads(ctx, t);
            pw_status st = PW_OK;
            for (int k = 0; st == PW_OK && k < 2; ++k) st = token(ctx, &m, x, xf, k & 1); /* warm-up */
            pw_bench_sampler sa, sb;
            pw_bench_sampler_init(&sa, t);
            pw_bench_sampler_init(&sb, t);
            /* Rounds of: one read of the weights' packed forms (the ceiling, its ways in
             * turn), then the timed token batched (a) and one by one (b). The ceiling
             * reads the very bytes the tokens read, just read by the token before, so
             * both see the same pages in the same state and the same minutes of a shared
             * machine. A buffer of its own (the GEMV cases' ceiling) measured this
             * project's VM wrong here: read between tokens, its reads took 10-30x
             * longer than the tokens' reads of as many bytes (fractions up to 19), and
             * the tokens after them up to 2x longer, as if the two working sets could
             * not be mapped at once; measured before the step instead, it gave fractions
             * of 0.6-1.4 for the same code as the machine's load moved. On a later Zen 5
             * VM the tokens on 1 thread still read faster than every way here (Q4_0
             * 1.05-1.16, QC4W up to 1.29, flagged), the regions exactly the tokens' bytes
             * (910688256 for Q4_0) in huge pages; scratch builds that read 256 MiB of other
             * memory before each ceiling read and each token, added the AVX-512 Q4_0
             * GEMVs' way paced (four streams 2 KiB ahead, by pieces and by whole shares),
             * or read 16 lines of a stream in turn instead of 4, all left it so. The ways
             * in the K-quant records' shape (records_l1, bench.h) are the fastest in most
             * rows since, and the 1-thread tokens still above them in most runs. Two
             * things tried and not kept: the regions read in the tokens' order (the
             * library allocates downwards, so address order is the reverse: the same
             * spread: Q4_K on 1 thread at 0.96 and 1.11 against 1.16 and 1.12, two runs
             * each in turn),
             * and every row of the weights made distinct (in case a host merged equal
             * pages: Q4_K 1.18 and 1.17 against 1.20 and 1.19). */
            pw_bench_ceiling ceiling;
            /* the packed forms: the library's blocks as large as the smallest form (its
             * scratch and handles are far smaller), and the sources read in place */
            pw_bench_block *regions = NULL;
            size_t nregions = 0, cap = 0;
            int fail = 0;
            for (size_t i = 0; i < m.nsources && !fail; ++i)
                fail = pw_bench_block_push(&regions, &nregions, &cap, m.sources[i].p, m.sources[i].bytes);
            if (!fail && m.min_form != UINT64_MAX)
                fail = pw_bench_tracker_blocks(&tr, (size_t)m.min_form, &regions, &nregions, &cap);
            rc = fail ? pw_cli_fail("bench", "--step: out of memory")
                      : pw_bench_ceiling_init_regions(&ceiling, regions, nregions, t);
            free(regions);
            if (rc != PW_EXIT_OK) break;
            const int min = o->quick ? 2 : PW_BENCH_CEILING_WAYS * PW_BENCH_CLEAN_MIN;
            const int max = o->quick ? 3 : 2 * PW_BENCH_CEILING_WAYS * PW_BENCH_CLEAN_MIN;
            const double budget = o->quick ? 0.05 : 3.0;
            for (int k = 0; st == PW_OK && pw_bench_sample_more(&sa, min, max, budget); ++k) {
                pw_bench_ceiling_sample_way(ctx, &ceiling, k, 0);
                /* the batched token and the separate one, first one then the other in
                 * turn: the first of a pair comes after the ceiling's read, the second
                 * after a token */
                for (int j = 0; j < 2 && st == PW_OK; ++j) {
                    const int batched = j == (k & 1);
                    pw_bench_sampler *s = batched ? &sa : &sb;
                    pw_bench_sample_start(s);
                    st = token(ctx, &m, x, xf, batched);
                    pw_bench_sample_stop(s);
                }
            }
            if (st != PW_OK) {
                pw_bench_ceiling_free(&ceiling);
                rc = pw_cli_fail_status("bench", ctx, st, "--step");
                break;
            }
            const double ta = pw_bench_ceiling_kernel_median(&ceiling, &sa);
            const double tb = pw_bench_sample_median_of(&sb, ceiling.clean);
            const pw_bench_machine *mach = pw_bench_machine_for(r, t);
            const double gbps = (double)m.weight_bytes / ta * 1e-9;
            double ceil_gbps, frac, mfrac;
            int invalid;
            const char *way;
            pw_bench_ways ways;
            pw_bench_ceiling_finish(&ceiling, gbps, mach, &ceil_gbps, &frac, &invalid, &mfrac, &way,
                                    &ways);
            const double layer_us = ta / layers * 1e6, sep_us = tb / layers * 1e6;
            if (o->json) {
                printf("{\"kind\":\"step\",\"format\":\"%s\",\"layers\":%d,\"threads\":%d,"
                       "\"tokens_per_s\":%.6g,\"weight_gbps\":%.6g,\"fraction\":%.6g",
                       variant_name(variants[vi]), layers, t, 1.0 / ta, gbps, frac);
                pw_bench_print_ceiling_json(ceil_gbps, invalid, way, mfrac, &ways);
                printf(",\"layer_us\":%.6g,\"separate_layer_us\":%.6g,\"saving_us_per_layer\":%.6g,"
                       "\"weight_bytes\":%" PRIu64 ",\"clean_reps\":%d,\"spin_wait\":%d}\n",
                       layer_us, sep_us, sep_us - layer_us, m.weight_bytes, sa.nclean, o->spin_wait);
            } else
                printf("%-7s %2d %12.2f %10.1f %10.2f %10.2f %8.1f%%%s %12.1f %12.1f\n",
                       variant_name(variants[vi]), t, 1.0 / ta, layer_us, gbps, ceil_gbps, 100.0 * frac,
                       invalid ? "!" : " ", sep_us, sep_us - layer_us);
            fflush(stdout);
        }
        model_free(&m);
    }
    free(x);
    free(xf);
    pw_context_destroy(ctx);
    pw_bench_tracker_free(&tr);
    return rc;
}
