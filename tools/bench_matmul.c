/*
 * The matmul suite of `packwise bench`: for every format, shape [out, in],
 * thread count and batch n, the time of Y = X * W^T through pw_weight_create
 * + pw_matmul_wt (the dispatcher's kernel, or --kernel's), as GFLOP/s, weight
 * GB/s and a fraction of what this machine measured in the same run:
 *
 *   GEMV (n == 1): weight_gbps / the case's own read ceiling: a buffer of the
 *                  weight's bytes streamed on the same threads, flushed the
 *                  same way, one sample after each of the kernel's
 *                  (pw_bench_ceiling); above 1.02 the case is flagged, as the
 *                  ceiling was mismeasured. Cold: the weight bytes and every
 *                  block the library holds (a packed copy included) are
 *                  flushed from the caches before each timed call. The machine
 *                  section's read bandwidth stays as context (machine_fraction).
 *   GEMM (n >= 2): gflops / the case's own int8 peak: the machine section's
 *                  peak loop on the same threads, one sample after each of
 *                  the kernel's (pw_bench_peak; the machine section's peak
 *                  stays as context, machine_fraction), warm, packing
 *                  excluded (pack_s is
 *                  reported once, on the case that packed), plus ratios to the
 *                  reference kernel and to an F32 weight of the same shape,
 *                  both timed on the first rows of the shape (enough for about
 *                  0.1 s) because they are too slow to run whole.
 *
 * Every case runs under each memory policy of --policy (compact alone by
 * default): the weight is created under it, the kernel each batch size uses
 * and the bytes of its packed forms come from pw_weight_info_get().
 *
 * The library's memory comes from a tracking allocator here, so that a packed
 * copy and the context's scratch can be flushed without reaching inside the
 * library; its adapter trace events time the packing.
 */
#include "bench.h"
#include "cli.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The context's allocator (a tracker: bench.h) and the user data of its trace hooks. */
typedef struct hooks {
    pw_bench_tracker tr;
    char kernel[64];   /* from the last kernel or fallback event */
    double adapter_at; /* time of the last adapter event (a weight packed), 0 = none */
} hooks;

static void hook_trace(void *user, const pw_trace_event *e) {
    hooks *h = user;
    if ((e->kind == PW_TRACE_KERNEL || e->kind == PW_TRACE_FALLBACK) && e->kernel)
        snprintf(h->kernel, sizeof h->kernel, "%s", e->kernel);
    else if (e->kind == PW_TRACE_ADAPTER)
        h->adapter_at = pw_bench_now();
}

/* The F32 path's speed for one (shape, n, threads), shared by every format. */
typedef struct f32_entry {
    int64_t out, in, n;
    int threads;
    double gflops;
    char kernel[64];
} f32_entry;

typedef struct bench {
    pw_context *ctx;
    hooks hk;
    const pw_bench_options *o;
    pw_bench_results *r;
    double t_start;
    size_t done, total;
    int progress; /* stderr is a terminal */
    f32_entry *f32;
    size_t nf32;
} bench;

/* A weight of `format`, [out, in], row-major in its own 64-byte aligned buffer. */
typedef struct weight {
    uint8_t *bytes;
    uint64_t size;
    pw_view view;
    char name[64];
} weight;

static void weight_free(weight *w) {
    free(w->bytes);
    memset(w, 0, sizeof *w);
}

/* Quantize up to 64 distinct Gaussian rows and repeat them: the content does not
 * change the speed, and the reference quantizers of the K formats are slow. */
static int weight_make(bench *b, pw_format f, int64_t out, int64_t in, weight *w) {
    memset(w, 0, sizeof *w);
    const pw_format_info *fi = pw_format_get(f);
    uint64_t row_bytes = 0;
    pw_status st = pw_format_row_bytes(b->ctx, f, in, &row_bytes);
    if (st != PW_OK) return pw_cli_fail_status("bench", b->ctx, st, fi->name);
    if (__builtin_mul_overflow(row_bytes, (uint64_t)out, &w->size) || w->size > SIZE_MAX / 2)
        return pw_cli_fail("bench", "a %s weight of [%" PRId64 ", %" PRId64 "] is too large",
                           fi->name, out, in);
    const int64_t distinct = out < 64 ? out : 64;
    float *src = malloc(sizeof(float) * (size_t)(distinct * in));
    w->bytes = pw_bench_alloc((size_t)w->size);
    if (src == NULL || w->bytes == NULL) {
        free(src);
        weight_free(w);
        return pw_cli_fail("bench", "out of memory for a %s weight of %" PRIu64 " bytes", fi->name,
                           row_bytes * (uint64_t)out);
    }
    pw_bench_gaussian(src, (size_t)(distinct * in), 0x5eedull + (uint64_t)in);
    st = pw_format_quantize(b->ctx, f, src, (size_t)(distinct * (in / fi->block_size)), w->bytes);
    free(src);
    for (int64_t r = distinct; st == PW_OK && r < out; r += distinct) {
        const int64_t rows = out - r < distinct ? out - r : distinct;
        memcpy(w->bytes + (uint64_t)r * row_bytes, w->bytes, (size_t)((uint64_t)rows * row_bytes));
    }
    snprintf(w->name, sizeof w->name, "bench.%s.%" PRId64 "x%" PRId64, fi->name, out, in);
    const int64_t shape[2] = {out, in};
    pw_layout layout = PW_LAYOUT_ROW_MAJOR;
    if (st == PW_OK && b->o->kernel_order) {
        /* --layout kernel: the bytes a converter writes in the spec's kernel order */
        uint8_t *k = pw_bench_alloc((size_t)w->size);
        const pw_block_grid g = {out, in / fi->block_size, fi->block_bytes, PW_LAYOUT_ROW_MAJOR};
        st = k ? pw_bytes_to_kernel_order(b->ctx, &g, w->bytes, w->size, k, w->size) : PW_ERR_OUT_OF_MEMORY;
        free(w->bytes);
        w->bytes = k;
        layout = PW_LAYOUT_INPUT_BLOCK_MAJOR;
    }
    if (st == PW_OK) st = pw_view_init(b->ctx, &w->view, f, 2, shape, layout, w->bytes, w->size);
    if (st != PW_OK) {
        weight_free(w);
        return pw_cli_fail_status("bench", b->ctx, st, fi->name);
    }
    w->view.name = w->name;
    return PW_EXIT_OK;
}

static const char *reference_name(pw_format f) {
    for (size_t i = 0; i < pw_kernel_count(); ++i) {
        const pw_kernel_info *k = pw_kernel_info_get(i);
        if (k->is_reference && k->format == f) return k->name;
    }
    return NULL;
}

/*
 * GFLOP/s of a slow path on the first rows of w: a probe of 32 rows sizes the
 * run to about `target` seconds (whole tiles of 16 rows, at most all of w).
 * kernel == NULL: the dispatcher's choice, whose name is returned in name.
 */
static int time_rows(bench *b, const weight *w, const char *kernel, const float *x, int64_t n,
                     float *y, double *gflops, char *name, size_t name_cap) {
    const int64_t out = w->view.shape[0], in = w->view.shape[1];
    const double target = b->o->quick ? 0.01 : 0.1;
    const int reps = b->o->quick ? 1 : 3;
    int64_t rows = out < 32 ? out : 32;
    for (int pass = 0; pass < 2; ++pass) {
        pw_view part;
        pw_weight *h = NULL;
        pw_weight_options wo;
        pw_weight_options_init(&wo);
        wo.kernel = kernel;
        b->hk.kernel[0] = '\0';
        pw_status st = pw_view_narrow(b->ctx, &w->view, 0, 0, rows, &part);
        if (st == PW_OK) st = pw_weight_create(b->ctx, &part, &wo, &h);
        if (st == PW_OK) st = pw_matmul_wt(b->ctx, x, n, h, y); /* packs if it must */
        const int runs = pass == 0 ? 1 : reps;
        pw_bench_sampler s;
        pw_bench_sampler_init(&s, pw_context_threads(b->ctx));
        while (st == PW_OK && pw_bench_sample_more(&s, runs, runs, target * runs)) {
            pw_bench_sample_start(&s);
            st = pw_matmul_wt(b->ctx, x, n, h, y);
            pw_bench_sample_stop(&s);
        }
        pw_weight_destroy(h);
        if (st != PW_OK) return pw_cli_fail_status("bench", b->ctx, st, w->name);
        const double sec = pw_bench_sample_median(&s);
        if (pass == 1 || rows == out || sec >= target) {
            *gflops = 2.0 * (double)rows * (double)in * (double)n / sec * 1e-9;
            break;
        }
        const double want = (double)rows * target / sec;
        rows = want >= (double)out ? out : ((int64_t)want + 15) / 16 * 16;
        if (rows > out) rows = out;
    }
    snprintf(name, name_cap, "%s", kernel ? kernel : b->hk.kernel[0] ? b->hk.kernel : "?");
    return PW_EXIT_OK;
}

/* The F32 path's GFLOP/s for this shape, n and thread count (measured once). */
static int f32_speed(bench *b, int64_t out, int64_t in, const float *x, int64_t n, float *y,
                     const f32_entry **result) {
    const int threads = pw_context_threads(b->ctx);
    for (size_t i = 0; i < b->nf32; ++i) {
        const f32_entry *e = &b->f32[i];
        if (e->out == out && e->in == in && e->n == n && e->threads == threads) {
            *result = e;
            return PW_EXIT_OK;
        }
    }
    f32_entry *grown = realloc(b->f32, (b->nf32 + 1) * sizeof *grown);
    if (grown == NULL) return pw_cli_fail("bench", "out of memory");
    b->f32 = grown;
    f32_entry *e = &b->f32[b->nf32];
    memset(e, 0, sizeof *e);
    e->out = out;
    e->in = in;
    e->n = n;
    e->threads = threads;
    weight w;
    int rc = weight_make(b, PW_FORMAT_F32, out, in, &w);
    if (rc != PW_EXIT_OK) return rc;
    rc = time_rows(b, &w, NULL, x, n, y, &e->gflops, e->kernel, sizeof e->kernel);
    weight_free(&w);
    if (rc != PW_EXIT_OK) return rc;
    ++b->nf32;
    *result = e;
    return PW_EXIT_OK;
}

static void progress(bench *b, const char *what) {
    if (!b->progress) return;
    if (what == NULL)
        fprintf(stderr, "\r\033[K");
    else
        fprintf(stderr, "\r\033[K[%zu/%zu] %s  (%.0f s elapsed)", b->done + 1, b->total, what,
                pw_bench_now() - b->t_start);
    fflush(stderr);
}

static int append(pw_bench_results *r, const pw_bench_result *c) {
    if (r->count == r->capacity) {
        const size_t cap = r->capacity ? 2 * r->capacity : 64;
        pw_bench_result *grown = realloc(r->cases, cap * sizeof *grown);
        if (grown == NULL) return pw_cli_fail("bench", "out of memory");
        r->cases = grown;
        r->capacity = cap;
    }
    r->cases[r->count++] = *c;
    return PW_EXIT_OK;
}


/*
 * Time one case on handle h. The first call is not timed: it packs the weight's
 * form when this batch size's kernel needs one (timed as pack_s from the adapter
 * event) and sizes the scratch. GEMV flushes before each timed call.
 */
static int time_case(bench *b, pw_weight *h, const weight *w, const float *x, float *y,
                     pw_bench_result *c) {
    const int gemm = c->n >= 2;
    const pw_bench_reps reps = pw_bench_case_reps(gemm, b->o->quick);
    b->hk.kernel[0] = '\0';
    b->hk.adapter_at = 0;
    const double t0 = pw_bench_now();
    pw_status st = pw_matmul_wt(b->ctx, x, c->n, h, y);
    if (st != PW_OK) return pw_cli_fail_status("bench", b->ctx, st, w->name);
    if (b->hk.adapter_at > 0) c->pack_s = b->hk.adapter_at - t0;
    pw_weight_info info;
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    (void)pw_weight_info_get(h, &info);
    snprintf(c->kernel, sizeof c->kernel, "%s", gemm ? info.kernel_gemm : info.kernel_gemv);
    {
        size_t ki = 0;
        const pw_kernel_info *kinf =
            pw_kernel_find(b->ctx, c->kernel, &ki) == PW_OK ? pw_kernel_info_get(ki) : NULL;
        const char *lay = "row_major";
        if (kinf != NULL && kinf->layout == PW_LAYOUT_PACKED && kinf->family != NULL) lay = kinf->family;
        else if (kinf != NULL && kinf->layout == PW_LAYOUT_BLOCKED_INPUT_MAJOR) lay = "input_block_major";
        else if (kinf != NULL && kinf->layout == PW_LAYOUT_ROW_TILED) lay = "row_tiled";
        snprintf(c->layout, sizeof c->layout, "%s", lay);
    }
    c->policy = info.policy;
    c->packed_bytes = info.packed_bytes;
    pw_bench_sampler s;
    pw_bench_sampler_init(&s, c->threads);
    c->cold = !gemm;
    /* GEMV: the same bytes streamed, one sample after each of the kernel's (A, B, A, B) */
    pw_bench_ceiling ceiling;
    memset(&ceiling, 0, sizeof ceiling);
    if (!gemm) {
        const int rc = pw_bench_ceiling_init(&ceiling, (size_t)w->size, c->threads);
        if (rc != PW_EXIT_OK) return rc;
    }
    /* GEMM: the int8 peak loop, one sample after each of the kernel's */
    pw_bench_peak peak;
    if (gemm) pw_bench_peak_init(b->ctx, &peak, b->o->quick);
    while (pw_bench_sample_more(&s, reps.min, reps.max, reps.budget)) {
        if (!gemm) {
            c->cold &= pw_bench_flush(w->bytes, (size_t)w->size);
            pw_bench_tracker_flush(&b->hk.tr);
        }
        pw_bench_sample_start(&s);
        st = pw_matmul_wt(b->ctx, x, c->n, h, y);
        pw_bench_sample_stop(&s);
        if (st != PW_OK) {
            pw_bench_ceiling_free(&ceiling);
            return pw_cli_fail_status("bench", b->ctx, st, w->name);
        }
        if (!gemm) pw_bench_ceiling_sample(b->ctx, &ceiling, 1);
        else pw_bench_peak_sample(b->ctx, &peak);
    }
    c->reps = s.nall;
    c->clean_reps = s.nclean;
    c->median_s = gemm ? pw_bench_peak_kernel_median(&peak, &s) : pw_bench_ceiling_kernel_median(&ceiling, &s);
    c->weight_bytes = w->size;
    c->gflops = 2.0 * (double)c->out * (double)c->in * (double)c->n / c->median_s * 1e-9;
    c->weight_gbps = (double)w->size / c->median_s * 1e-9;
    const pw_bench_machine *m = pw_bench_machine_for(b->r, c->threads);
    if (gemm) {
        pw_bench_peak_finish(&peak, c->gflops, m, &c->peak_gops, &c->fraction, &c->ceiling_invalid,
                             &c->machine_fraction);
    } else {
        pw_bench_ceiling_finish(&ceiling, c->weight_gbps, m, &c->ceiling_gbps, &c->fraction,
                                &c->ceiling_invalid, &c->machine_fraction, &c->ceiling_way,
                                &c->ceiling_ways);
    }
    return PW_EXIT_OK;
}

/* GEMM baselines: the reference kernel and the F32 path at this shape, n and threads. */
static int baselines(bench *b, const weight *w, const float *x, float *y, pw_bench_result *c) {
    const char *ref = reference_name(c->format);
    if (ref != NULL && strcmp(ref, c->kernel) == 0) {
        c->ref_ratio = 1.0;
        snprintf(c->ref_kernel, sizeof c->ref_kernel, "%s", ref);
    } else if (ref != NULL) {
        double g = 0;
        int rc = time_rows(b, w, ref, x, c->n, y, &g, c->ref_kernel, sizeof c->ref_kernel);
        if (rc != PW_EXIT_OK) return rc;
        c->ref_ratio = c->gflops / g;
    }
    const f32_entry *e = NULL;
    int rc = f32_speed(b, c->out, c->in, x, c->n, y, &e);
    if (rc != PW_EXIT_OK) return rc;
    c->f32_ratio = c->gflops / e->gflops;
    snprintf(c->f32_kernel, sizeof c->f32_kernel, "%s", e->kernel);
    return PW_EXIT_OK;
}

/* Every (policy, threads, n) case of one format and shape, on one weight handle per policy. */
static int run_weight(bench *b, pw_format f, int64_t out, int64_t in) {
    const pw_bench_options *o = b->o;
    const pw_format_info *fi = pw_format_get(f);
    if (in % fi->block_size != 0)
        return pw_cli_fail("bench", "--shapes %" PRId64 "x%" PRId64 ": in = %" PRId64
                           " is not a whole number of %s blocks of %d; use a multiple of %d",
                           out, in, in, fi->name, (int)fi->block_size, (int)fi->block_size);
    int64_t nmax = 1;
    for (int i = 0; i < o->nbatch; ++i) nmax = o->batch[i] > nmax ? o->batch[i] : nmax;
    weight w;
    int rc = weight_make(b, f, out, in, &w);
    if (rc != PW_EXIT_OK) return rc;
    float *x = malloc(sizeof(float) * (size_t)(nmax * in));
    float *y = malloc(sizeof(float) * (size_t)(nmax * out));
    if (x == NULL || y == NULL)
        rc = pw_cli_fail("bench", "out of memory for X and Y of %" PRId64 " rows", nmax);
    else
        pw_bench_gaussian(x, (size_t)(nmax * in), 0xac71ull);
    for (int pi = 0; rc == PW_EXIT_OK && pi < o->npolicies; ++pi) {
        pw_weight *h = NULL;
        pw_weight_options wo;
        pw_weight_options_init(&wo);
        wo.kernel = o->kernel;
        wo.policy = o->policies[pi];
        pw_status st = pw_weight_create(b->ctx, &w.view, &wo, &h);
        if (st != PW_OK) rc = pw_cli_fail_status("bench", b->ctx, st, w.name);
        for (int ti = 0; rc == PW_EXIT_OK && ti < o->nthreads; ++ti) {
            st = pw_context_set_threads(b->ctx, o->threads[ti]);
            if (st != PW_OK) rc = pw_cli_fail_status("bench", b->ctx, st, "threads");
            for (int ni = 0; rc == PW_EXIT_OK && ni < o->nbatch; ++ni) {
                pw_bench_result c;
                memset(&c, 0, sizeof c);
                c.gemm = o->batch[ni] >= 2;
                c.format = f;
                c.out = out;
                c.in = in;
                c.n = o->batch[ni];
                c.threads = o->threads[ti];
                char what[160];
                snprintf(what, sizeof what, "%s %s %s [%" PRId64 ", %" PRId64 "] n=%" PRId64 " threads=%d",
                         fi->name, pw_memory_policy_name(wo.policy), c.gemm ? "gemm" : "gemv", out,
                         in, c.n, c.threads);
                progress(b, what);
                rc = time_case(b, h, &w, x, y, &c);
                if (rc == PW_EXIT_OK && c.gemm) rc = baselines(b, &w, x, y, &c);
                if (rc == PW_EXIT_OK) rc = append(b->r, &c);
                if (rc == PW_EXIT_OK && o->json) {
                    pw_bench_print_case_json(&c);
                    fflush(stdout);
                }
                ++b->done;
            }
        }
        pw_weight_destroy(h);
    }
    free(x);
    free(y);
    weight_free(&w);
    return rc;
}

/* Bandwidth and int8 peak at every thread count, before any case. */
static int measure_machine(bench *b) {
    const size_t bytes = pw_bench_read_buffer_bytes(b->o);
    uint8_t *buf = pw_bench_alloc(bytes);
    if (buf == NULL) return pw_cli_fail("bench", "out of memory for a %zu-byte read buffer", bytes);
    /* Touch every page with varied bytes before timing; the sum must not be constant-foldable. */
    for (size_t i = 0; i < bytes; i += 4096) memset(buf + i, (int)(i >> 12) & 0xff, 4096);
    int rc = PW_EXIT_OK;
    for (int ti = 0; rc == PW_EXIT_OK && ti < b->o->nthreads; ++ti) {
        pw_status st = pw_context_set_threads(b->ctx, b->o->threads[ti]);
        if (st != PW_OK) {
            rc = pw_cli_fail_status("bench", b->ctx, st, "threads");
            break;
        }
        char what[96];
        snprintf(what, sizeof what, "machine: read bandwidth and int8 peak, threads=%d",
                 b->o->threads[ti]);
        if (b->progress) {
            fprintf(stderr, "\r\033[K%s  (%.0f s elapsed)", what, pw_bench_now() - b->t_start);
            fflush(stderr);
        }
        pw_bench_machine *m = &b->r->machine[b->r->nmachine];
        rc = pw_bench_machine_measure(b->ctx, b->o, buf, bytes, m);
        m->threads = b->o->threads[ti];
        if (rc != PW_EXIT_OK) break;
        ++b->r->nmachine;
        if (b->o->json) pw_bench_print_machine_json(m);
    }
    fflush(stdout);
    free(buf);
    return rc;
}

int pw_bench_matmul(const pw_bench_options *o, pw_bench_results *r) {
    bench b;
    memset(&b, 0, sizeof b);
    b.o = o;
    b.r = r;
    b.t_start = pw_bench_now();
    double load[1];
    r->load_average = getloadavg(load, 1) == 1 ? load[0] : -1.0;
    b.progress = isatty(STDERR_FILENO);
    pw_bench_tracker_init(&b.hk.tr);
    pw_context_options co;
    pw_context_options_init(&co);
    co.threads = 1;
    co.trace = hook_trace;
    co.trace_user = &b.hk;
    co.allocator = pw_bench_tracker_allocator(&b.hk.tr);
    pw_status st = pw_context_create(&co, &b.ctx);
    if (st != PW_OK) {
        pw_bench_tracker_free(&b.hk.tr);
        return pw_cli_fail("bench", "%s: %s", pw_status_str(st), pw_last_create_message());
    }
    int rc = PW_EXIT_OK;
    if (o->kernel != NULL) {
        size_t idx = 0;
        st = pw_kernel_find(b.ctx, o->kernel, &idx);
        if (st != PW_OK) rc = pw_cli_fail_status("bench", b.ctx, st, "--kernel");
        else if (!pw_kernel_usable(b.ctx, idx))
            rc = pw_cli_fail("bench", "--kernel %s needs CPU features this machine or PACKWISE_ISA=%s "
                             "does not allow", o->kernel, pw_isa_name(pw_context_isa(b.ctx)));
    }
    int nformats = 0;
    for (int f = 0; f < PW_FORMAT_COUNT; ++f) nformats += (o->formats_mask >> f) & 1;
    b.total = (size_t)nformats * (size_t)o->nshapes * (size_t)o->nthreads * (size_t)o->nbatch *
              (size_t)o->npolicies;
    if (rc == PW_EXIT_OK) rc = measure_machine(&b);
    for (int f = 0; rc == PW_EXIT_OK && f < PW_FORMAT_COUNT; ++f) {
        if (!((o->formats_mask >> f) & 1)) continue;
        for (int s = 0; rc == PW_EXIT_OK && s < o->nshapes; ++s)
            rc = run_weight(&b, (pw_format)f, o->shapes[s][0], o->shapes[s][1]);
    }
    progress(&b, NULL);
    r->elapsed_s = pw_bench_now() - b.t_start;
    if (b.progress && rc == PW_EXIT_OK)
        fprintf(stderr, "bench: %zu cases in %.1f s\n", b.done, r->elapsed_s);
    free(b.f32);
    pw_context_destroy(b.ctx);
    pw_bench_tracker_free(&b.hk.tr);
    return rc;
}
