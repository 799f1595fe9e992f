/*
 * Running a prepared weight: Y = X * W^T (+ bias, clamped), f32 or f16 out.
 * X is scanned for values that are not finite (such a row gives a row of NaN,
 * whatever the kernel: packwise/weight.h), quantized into the context's
 * scratch in the kernel's activation form, and the kernel runs over the
 * context's threads with the epilogue (kernel/kernel.h).
 */
#include "op/op.h"

#include "format/format_internal.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

void pw_run_args_init(pw_run_args *a) {
    if (a == NULL) return;
    memset(a, 0, sizeof *a);
    a->struct_size = sizeof *a;
}

/* Nonzero when x[0..n) (f32, or f16/bf16 bits) holds a NaN or an infinity: all
 * exponent bits set. */
static int row_not_finite(const void *x, pw_dtype t, int64_t n) {
    uint32_t any = 0;
    if (t == PW_DTYPE_F32) {
        const float *f = x;
        for (int64_t k = 0; k < n; ++k) {
            uint32_t b;
            memcpy(&b, &f[k], 4);
            any |= (uint32_t)((b & 0x7F800000u) == 0x7F800000u);
        }
    } else {
        const uint16_t *h = x;
        const uint16_t e = t == PW_DTYPE_F16 ? 0x7C00u : 0x7F80u;
        for (int64_t k = 0; k < n; ++k) any |= (uint32_t)((h[k] & e) == e);
    }
    return any != 0;
}

typedef struct scan_job {
    const void *x;
    pw_dtype t;
    int64_t ldx, in, n, per;
    uint8_t *bad;
    int (*f32)(const float *x, int64_t n); /* the ISA's scan of f32 rows, or NULL */
} scan_job;

static void scan_task(void *p, size_t t) {
    const scan_job *j = p;
    const int64_t i0 = (int64_t)t * j->per, i1 = i0 + j->per < j->n ? i0 + j->per : j->n;
    const size_t es = j->t == PW_DTYPE_F32 ? 4 : 2;
    for (int64_t i = i0; i < i1; ++i) {
        const void *row = (const uint8_t *)j->x + (size_t)(i * j->ldx) * es;
        j->bad[i] = (uint8_t)(j->f32 != NULL && j->t == PW_DTYPE_F32 ? j->f32(row, j->in)
                                                                     : row_not_finite(row, j->t, j->in));
    }
}

static size_t align64(size_t b) { return (b + 63) & ~(size_t)63; }

/* Flag the rows of X that hold a value that is not finite (their Y is NaN); the count. */
static int64_t flag_bad_rows(pw_context *ctx, const void *x, pw_dtype t, int64_t ldx, int64_t in,
                             int64_t n, uint8_t *bad) {
    const pw__act_forms *forms = pw__act_forms_for(ctx);
    scan_job sj = {x, t, ldx, in, n, n, bad, forms != NULL ? forms->not_finite : NULL};
    const int threads = pw__threads(ctx);
    if (threads > 1 && n * in >= (int64_t)1 << 16) {
        sj.per = (n + 4 * threads - 1) / (4 * threads);
        pw__parallel_for(ctx, scan_task, &sj, (size_t)((n + sj.per - 1) / sj.per));
    } else {
        scan_task(&sj, 0);
    }
    int64_t n_bad = 0;
    for (int64_t i = 0; i < n; ++i) n_bad += bad[i];
    return n_bad;
}

/* The weight operand of batch class c: the source view, its row-major copy, or a packed form. */
static void set_operand(const pw_weight *w, int c, pw__mm_call *call) {
    const int fi = w->plan.form[c];
    if (fi < 0) {
        call->w = &w->view;
    } else if (w->plan.forms[fi].kind == PW__FORM_COPY) {
        call->w = &w->plan.forms[fi].copy_view;
    } else {
        call->packed = w->plan.forms[fi].data;
        call->pack_desc = &w->plan.forms[fi].desc;
    }
}

static pw_status weight_run(pw_context *ctx, pw_weight *w, const pw_run_args *args);

pw_status pw_weight_run(pw_context *ctx, const pw_weight *cw, const pw_run_args *args) {
    PW__FAIL_IF(ctx == NULL || cw == NULL || args == NULL, ctx, PW_ERR_INVALID_ARGUMENT,
                "pw_weight_run: ctx, weight and args must be non-NULL");
    pw_weight *w = (pw_weight *)(uintptr_t)cw; /* preparation is serialized inside */
    pw_run_args a;
    pw_run_args_init(&a);
    PW__FAIL_IF(args->struct_size == 0 || args->struct_size > sizeof a, ctx, PW_ERR_INVALID_ARGUMENT,
                "pw_weight_run: args.struct_size is %zu; use pw_run_args_init", args->struct_size);
    memcpy(&a, args, args->struct_size);
    if (a.threads == 0 && a.parallel_for == NULL) return weight_run(ctx, w, &a);
    /* this call's threads, then the context's setting back */
    PW__FAIL_IF(a.threads < 0 || a.threads > PW_MAX_THREADS, ctx, PW_ERR_INVALID_ARGUMENT,
                "weight '%s': args.threads = %d is not in [0, %d]", w->name, a.threads, PW_MAX_THREADS);
    int threads;
    pw_parallel_for_fn fn;
    void *user;
    pw__call_threads_swap(ctx, a.threads, a.parallel_for, a.parallel_for_user, &threads, &fn, &user);
    const pw_status st = weight_run(ctx, w, &a);
    pw__call_threads_swap(ctx, threads, fn, user, NULL, NULL, NULL);
    return st;
}

/* pw_weight_run after its arguments' struct and threads are taken care of. */
static pw_status weight_run(pw_context *ctx, pw_weight *w, const pw_run_args *args) {
    const pw_run_args a = *args;
    const int64_t n = a.n, in = w->in, out = w->out;
    const int64_t ldx = a.ldx ? a.ldx : in, ldy = a.ldy ? a.ldy : out;
    PW__FAIL_IF(a.x == NULL || a.y == NULL || n < 1, ctx, PW_ERR_INVALID_ARGUMENT,
                "weight '%s': x and y must be non-NULL and n >= 1 (n = %" PRId64 ")", w->name, n);
    PW__FAIL_IF(ldx < in || ldy < out, ctx, PW_ERR_SHAPE,
                "weight '%s': row strides ldx = %" PRId64 " (>= in = %" PRId64 ") and ldy = %" PRId64
                " (>= out = %" PRId64 ") are too short",
                w->name, ldx, in, ldy, out);
    PW__FAIL_IF(a.y_type != PW_DTYPE_F32 && a.y_type != PW_DTYPE_F16, ctx, PW_ERR_INVALID_ARGUMENT,
                "weight '%s': y_type %d is not F32 or F16", w->name, (int)a.y_type);
    PW__FAIL_IF(a.x_type != PW_DTYPE_F32 && a.x_type != PW_DTYPE_F16 && a.x_type != PW_DTYPE_BF16, ctx,
                PW_ERR_INVALID_ARGUMENT, "weight '%s': x_type %d is not F32, F16 or BF16", w->name,
                (int)a.x_type);
    PW__FAIL_IF(!isfinite(a.beta), ctx, PW_ERR_INVALID_ARGUMENT, "weight '%s': beta = %g is not finite",
                w->name, (double)a.beta);
    int64_t span;
    PW__FAIL_IF(pw__mul_overflow_i64(n - 1, ldx > ldy ? ldx : ldy, &span) ||
                    pw__add_overflow_i64(span, in > out ? in : out, &span) ||
                    (uint64_t)span > SIZE_MAX / sizeof(float),
                ctx, PW_ERR_OVERFLOW, "weight '%s': n = %" PRId64 " rows overflow", w->name, n);
    const int c = n >= 2 ? PW__GEMM : PW__GEMV;
    const pw__kernel *k = w->plan.k[c];
    PW__FAIL_IF(k == NULL, ctx, PW_ERR_UNSUPPORTED,
                "weight '%s' was created to serve %s only (pw_weight_options.serves), not n = %" PRId64,
                w->name, c == PW__GEMV ? "n >= 2" : "n = 1", n);
    if (!atomic_load_explicit(&w->ready[c], memory_order_acquire)) PW__TRY(pw__weight_ready(ctx, w, c));

    /* Scratch: row flags, quantized rows, QD8 panels, f32 sums for a half output. */
    const pw_activation act = k->info.activation;
    const int64_t abs_ = pw__act_block_size(act);
    PW__FAIL_IF(in % abs_ != 0, ctx, PW_ERR_SHAPE,
                "kernel %s quantizes activations in blocks of %" PRId64 " but in is %" PRId64,
                k->info.name, abs_, in);
    const size_t row = act == PW_ACT_F32 ? 0 : pw__act_row_bytes(act, in);
    const int32_t panel = n > 1 ? k->xq_panel : 0;
    const int f16 = a.y_type == PW_DTYPE_F16;
    size_t at_rows = align64((size_t)n), at_panels, at_sums, need;
    PW__FAIL_IF((act != PW_ACT_F32 && row == 0) || __builtin_mul_overflow(row, (size_t)n, &at_panels) ||
                    __builtin_add_overflow(at_panels, at_rows, &at_panels),
                ctx, PW_ERR_OVERFLOW, "weight '%s': activation scratch for n = %" PRId64 " overflows",
                w->name, n);
    at_panels = align64(at_panels);
    at_sums = at_panels + (panel > 0 ? align64(pw__qd8_panels_bytes(n, pw__qd8_k_padded(in), panel)) : 0);
    /* beta != 0: the product goes to f32 scratch first, then Y = beta * Y + it */
    const int blend = a.beta != 0.0f;
    need = at_sums + ((f16 && !k->epilogue) || blend ? align64(sizeof(float) * (size_t)n * (size_t)out) : 0);
    /* f16 or bf16 X for a kernel of f32 activations (float weights): converted to f32 rows
     * (exact); a quantizing kernel's X is converted while it is quantized, a chunk at a time */
    const size_t at_xf = need;
    const int x_copy = a.x_type != PW_DTYPE_F32 && act == PW_ACT_F32;
    if (x_copy) need += sizeof(float) * (size_t)n * (size_t)in;
    uint8_t *s = pw__ctx_scratch(ctx, need);
    PW__FAIL_IF(s == NULL, ctx, PW_ERR_OUT_OF_MEMORY,
                "weight '%s': cannot allocate %zu bytes of scratch for n = %" PRId64, w->name, need, n);
    uint8_t *bad = s;
    const float *x32 = a.x;
    int64_t ldx32 = ldx;
    if (x_copy) {
        float *xf = (float *)(void *)(s + at_xf);
        const uint16_t *xh = a.x;
        for (int64_t i = 0; i < n; ++i)
            for (int64_t j = 0; j < in; ++j)
                xf[i * in + j] = a.x_type == PW_DTYPE_F16 ? pw_f16_to_f32(xh[i * ldx + j])
                                                          : pw_bf16_to_f32(xh[i * ldx + j]);
        x32 = xf;
        ldx32 = in;
    }

    /* Rows that hold a value that is not finite: their Y is NaN. */
    const int64_t n_bad = flag_bad_rows(ctx, a.x, a.x_type, ldx, in, n, bad);

    pw__mm_call call;
    memset(&call, 0, sizeof call);
    call.out = out;
    call.in = in;
    call.n = n;
    call.x = x32;
    call.ldx = ldx32;
    call.ldy = blend ? out : ldy;
    call.min = w->min;
    call.max = w->max;
    float *product = blend ? (float *)(void *)(s + at_sums) : NULL;
    if (blend)
        call.y = product;
    else if (f16)
        call.y16 = a.y;
    else
        call.y = a.y;
    set_operand(w, c, &call);
    if (act != PW_ACT_F32) {
        uint8_t *xq = s + at_rows;
        pw__act_quantize_rows(ctx, act, a.x, a.x_type, ldx, n, in, xq, row);
        call.xq = xq;
        call.xq_row_bytes = row;
        if (panel > 0) {
            uint8_t *panels = s + at_panels;
            pw__qd8_panel_rows(xq, row, pw__qd8_k_padded(in), panel, 0, n, panels);
            call.xq_panels = panels;
        }
    }
    pw__kernel_run(ctx, k, &call, w->bias,
                   !blend && f16 && !k->epilogue ? (float *)(void *)(s + at_sums) : NULL);
    if (blend) {
        for (int64_t i = 0; i < n; ++i)
            for (int64_t o = 0; o < out; ++o) {
                const float p = product[i * out + o];
                if (f16) {
                    uint16_t *y16 = (uint16_t *)a.y + i * ldy + o;
                    *y16 = pw_f32_to_f16(a.beta * pw_f16_to_f32(*y16) + p);
                } else {
                    float *y32 = (float *)a.y + i * ldy + o;
                    *y32 = a.beta * *y32 + p;
                }
            }
    }
    if (n_bad > 0) {
        for (int64_t i = 0; i < n; ++i) {
            if (!bad[i]) continue;
            for (int64_t o = 0; o < out; ++o) {
                if (f16)
                    ((uint16_t *)a.y)[i * ldy + o] = 0x7E00; /* quiet NaN */
                else
                    ((float *)a.y)[i * ldy + o] = NAN;
            }
        }
    }
    return PW_OK;
}

pw_status pw_matmul_wt(pw_context *ctx, const float *x, int64_t n, const pw_weight *w, float *y) {
    pw_run_args a;
    pw_run_args_init(&a);
    a.n = n;
    a.x = x;
    a.y = y;
    return pw_weight_run(ctx, w, &a);
}

_Static_assert(PW_MATMUL_MANY_MAX == PW__RUN_MANY_MAX, "one bound for batched products");

/* One activation form X is quantized into for pw_matmul_wt_many: kernels that read the
 * same form (and, for QD8, the same panel height) share it. */
typedef struct act_group {
    pw_activation act;
    int32_t panel;
    size_t row;                /* bytes per quantized row */
    size_t at_rows, at_panels; /* offsets in the scratch */
} act_group;

pw_status pw_matmul_wt_many(pw_context *ctx, const float *x, int64_t n, int64_t ldx,
                            const pw_product *products, size_t count) {
    PW__FAIL_IF(ctx == NULL || (count > 0 && (x == NULL || products == NULL)) || n < 1, ctx,
                PW_ERR_INVALID_ARGUMENT,
                "pw_matmul_wt_many: ctx, x and products must be non-NULL and n >= 1 (n = %" PRId64 ")", n);
    if (count == 0) return PW_OK;
    PW__FAIL_IF(count > PW_MATMUL_MANY_MAX, ctx, PW_ERR_INVALID_ARGUMENT,
                "pw_matmul_wt_many: %zu products in one call (at most %d)", count, PW_MATMUL_MANY_MAX);
    const int c = n >= 2 ? PW__GEMM : PW__GEMV;
    const int64_t in = products[0].weight ? products[0].weight->in : 0;
    if (ldx == 0) ldx = in;
    act_group groups[16];
    size_t ngroups = 0;
    uint8_t group_of[PW_MATMUL_MANY_MAX];
    for (size_t p = 0; p < count; ++p) {
        pw_weight *w = (pw_weight *)(uintptr_t)products[p].weight;
        PW__FAIL_IF(w == NULL || products[p].y == NULL, ctx, PW_ERR_INVALID_ARGUMENT,
                    "pw_matmul_wt_many: product %zu has no weight or no y", p);
        PW__FAIL_IF(w->in != in, ctx, PW_ERR_SHAPE,
                    "pw_matmul_wt_many: weight '%s' (product %zu) takes in = %" PRId64
                    ", the first takes %" PRId64 ": one X serves weights of one row length",
                    w->name, p, w->in, in);
        const int64_t ldy = products[p].ldy ? products[p].ldy : w->out;
        PW__FAIL_IF(ldx < in || ldy < w->out, ctx, PW_ERR_SHAPE,
                    "weight '%s': row strides ldx = %" PRId64 " (>= in = %" PRId64 ") and ldy = %" PRId64
                    " (>= out = %" PRId64 ") are too short",
                    w->name, ldx, in, ldy, w->out);
        int64_t span;
        PW__FAIL_IF(pw__mul_overflow_i64(n - 1, ldx > ldy ? ldx : ldy, &span) ||
                        pw__add_overflow_i64(span, in > w->out ? in : w->out, &span) ||
                        (uint64_t)span > SIZE_MAX / sizeof(float),
                    ctx, PW_ERR_OVERFLOW, "weight '%s': n = %" PRId64 " rows overflow", w->name, n);
        const pw__kernel *k = w->plan.k[c];
        PW__FAIL_IF(k == NULL, ctx, PW_ERR_UNSUPPORTED,
                    "weight '%s' was created to serve %s only (pw_weight_options.serves), not n = %" PRId64,
                    w->name, c == PW__GEMV ? "n >= 2" : "n = 1", n);
        if (!atomic_load_explicit(&w->ready[c], memory_order_acquire)) PW__TRY(pw__weight_ready(ctx, w, c));
        const pw_activation act = k->info.activation;
        PW__FAIL_IF(in % pw__act_block_size(act) != 0, ctx, PW_ERR_SHAPE,
                    "kernel %s quantizes activations in blocks of %" PRId64 " but in is %" PRId64,
                    k->info.name, pw__act_block_size(act), in);
        const int32_t panel = n > 1 ? k->xq_panel : 0;
        size_t g = 0;
        while (g < ngroups && !(groups[g].act == act && groups[g].panel == panel)) ++g;
        PW__FAIL_IF(g == sizeof groups / sizeof groups[0], ctx, PW_ERR_UNSUPPORTED,
                    "pw_matmul_wt_many: more than %zu activation forms in one call",
                    sizeof groups / sizeof groups[0]);
        if (g == ngroups) {
            groups[g].act = act;
            groups[g].panel = panel;
            groups[g].row = act == PW_ACT_F32 ? 0 : pw__act_row_bytes(act, in);
            PW__FAIL_IF(act != PW_ACT_F32 && groups[g].row == 0, ctx, PW_ERR_OVERFLOW,
                        "weight '%s': activation rows of in = %" PRId64 " overflow", w->name, in);
            ++ngroups;
        }
        group_of[p] = (uint8_t)g;
    }

    /* Scratch: row flags, then each form's quantized rows and QD8 panels. */
    size_t need = align64((size_t)n);
    for (size_t g = 0; g < ngroups; ++g) {
        size_t rows_bytes;
        PW__FAIL_IF(__builtin_mul_overflow(groups[g].row, (size_t)n, &rows_bytes), ctx, PW_ERR_OVERFLOW,
                    "pw_matmul_wt_many: activation scratch for n = %" PRId64 " overflows", n);
        groups[g].at_rows = need;
        need += align64(rows_bytes);
        groups[g].at_panels = need;
        if (groups[g].panel > 0)
            need += align64(pw__qd8_panels_bytes(n, pw__qd8_k_padded(in), groups[g].panel));
    }
    uint8_t *s = pw__ctx_scratch(ctx, need);
    PW__FAIL_IF(s == NULL, ctx, PW_ERR_OUT_OF_MEMORY,
                "pw_matmul_wt_many: cannot allocate %zu bytes of scratch for n = %" PRId64, need, n);
    uint8_t *bad = s;
    const int64_t n_bad = flag_bad_rows(ctx, x, PW_DTYPE_F32, ldx, in, n, bad);
    for (size_t g = 0; g < ngroups; ++g) {
        if (groups[g].act == PW_ACT_F32) continue;
        uint8_t *xq = s + groups[g].at_rows;
        pw__act_quantize_rows(ctx, groups[g].act, x, PW_DTYPE_F32, ldx, n, in, xq, groups[g].row);
        if (groups[g].panel > 0)
            pw__qd8_panel_rows(xq, groups[g].row, pw__qd8_k_padded(in), groups[g].panel, 0, n,
                               s + groups[g].at_panels);
    }

    pw__mm_call calls[PW_MATMUL_MANY_MAX];
    const pw__kernel *ks[PW_MATMUL_MANY_MAX];
    const float *biases[PW_MATMUL_MANY_MAX];
    for (size_t p = 0; p < count; ++p) {
        const pw_weight *w = products[p].weight;
        const act_group *gr = &groups[group_of[p]];
        pw__mm_call *call = &calls[p];
        memset(call, 0, sizeof *call);
        call->out = w->out;
        call->in = in;
        call->n = n;
        call->x = x;
        call->ldx = ldx;
        call->ldy = products[p].ldy ? products[p].ldy : w->out;
        call->min = w->min;
        call->max = w->max;
        call->y = products[p].y;
        set_operand(w, c, call);
        if (gr->act != PW_ACT_F32) {
            call->xq = s + gr->at_rows;
            call->xq_row_bytes = gr->row;
            if (gr->panel > 0) call->xq_panels = s + gr->at_panels;
        }
        ks[p] = w->plan.k[c];
        biases[p] = w->bias;
    }
    pw__kernel_run_many(ctx, count, ks, calls, biases);
    if (n_bad > 0)
        for (size_t p = 0; p < count; ++p)
            for (int64_t i = 0; i < n; ++i)
                if (bad[i])
                    for (int64_t o = 0; o < calls[p].out; ++o) products[p].y[i * calls[p].ldy + o] = NAN;
    return PW_OK;
}

pw_status pw_matmul_wt_experts(pw_context *ctx, const float *x, int64_t n, int64_t ldx,
                               const pw_weight *const *experts, size_t count, const int32_t *route,
                               float *y, int64_t ldy) {
    PW__FAIL_IF(ctx == NULL || x == NULL || experts == NULL || route == NULL || y == NULL || n < 1 ||
                    count < 1,
                ctx, PW_ERR_INVALID_ARGUMENT,
                "pw_matmul_wt_experts: ctx, x, experts, route and y must be non-NULL, n >= 1 and "
                "count >= 1 (n = %" PRId64 ", count = %zu)", n, count);
    for (size_t e = 0; e < count; ++e)
        PW__FAIL_IF(experts[e] == NULL, ctx, PW_ERR_INVALID_ARGUMENT,
                    "pw_matmul_wt_experts: expert %zu is NULL", e);
    const int64_t in = experts[0]->in, out = experts[0]->out;
    for (size_t e = 1; e < count; ++e)
        PW__FAIL_IF(experts[e]->in != in || experts[e]->out != out, ctx, PW_ERR_SHAPE,
                    "pw_matmul_wt_experts: expert %zu ('%s') is [%" PRId64 ", %" PRId64
                    "], expert 0 is [%" PRId64 ", %" PRId64 "]: experts share one shape",
                    e, experts[e]->name, experts[e]->out, experts[e]->in, out, in);
    if (ldx == 0) ldx = in;
    if (ldy == 0) ldy = out;
    PW__FAIL_IF(ldx < in || ldy < out, ctx, PW_ERR_SHAPE,
                "pw_matmul_wt_experts: ldx = %" PRId64 " (>= in = %" PRId64 ") and ldy = %" PRId64
                " (>= out = %" PRId64 ") are too short", ldx, in, ldy, out);
    int64_t most = 0;
    for (size_t e = 0; e < count; ++e) {
        int64_t rows = 0;
        for (int64_t i = 0; i < n; ++i) rows += route[i] == (int32_t)e;
        most = rows > most ? rows : most;
    }
    for (int64_t i = 0; i < n; ++i)
        PW__FAIL_IF(route[i] < -1 || (route[i] >= 0 && (size_t)route[i] >= count), ctx,
                    PW_ERR_INVALID_ARGUMENT,
                    "pw_matmul_wt_experts: route[%" PRId64 "] = %d is not an expert (0..%zu) or -1", i,
                    (int)route[i], count - 1);
    for (size_t e = 0; e < count; ++e) { /* every expert serves its batch: checked before any write */
        int64_t m = 0;
        for (int64_t i = 0; i < n; ++i) m += route[i] == (int32_t)e;
        const int c = m >= 2 ? PW__GEMM : PW__GEMV;
        PW__FAIL_IF(m > 0 && experts[e]->plan.k[c] == NULL, ctx, PW_ERR_UNSUPPORTED,
                    "pw_matmul_wt_experts: expert %zu ('%s') gets %" PRId64 " rows but was created to "
                    "serve %s only (pw_weight_options.serves)",
                    e, experts[e]->name, m, c == PW__GEMV ? "n >= 2" : "n = 1");
    }
    if (most == 0) return PW_OK;
    /* gathered X rows, their Y rows and their indices, in the context's outer scratch: in
     * steady state (same or fewer rows per expert) a call allocates nothing */
    size_t xb, yb, need;
    PW__FAIL_IF(__builtin_mul_overflow((size_t)most, (size_t)in * sizeof(float), &xb) ||
                    __builtin_mul_overflow((size_t)most, (size_t)out * sizeof(float), &yb) ||
                    __builtin_add_overflow(align64(xb), align64(yb), &need) ||
                    __builtin_add_overflow(need, sizeof(int64_t) * (size_t)most, &need),
                ctx, PW_ERR_OVERFLOW, "pw_matmul_wt_experts: %" PRId64 " rows overflow", most);
    uint8_t *s = pw__ctx_outer_scratch(ctx, need);
    PW__FAIL_IF(s == NULL, ctx, PW_ERR_OUT_OF_MEMORY,
                "pw_matmul_wt_experts: out of memory for %" PRId64 " rows", most);
    float *xg = (float *)(void *)s, *yg = (float *)(void *)(s + align64(xb));
    int64_t *rows = (int64_t *)(void *)(s + align64(xb) + align64(yb));
    pw_status st = PW_OK;
    for (size_t e = 0; st == PW_OK && e < count; ++e) {
        int64_t m = 0;
        for (int64_t i = 0; i < n; ++i)
            if (route[i] == (int32_t)e) {
                memcpy(xg + m * in, x + i * ldx, sizeof(float) * (size_t)in);
                rows[m++] = i;
            }
        if (m == 0) continue;
        st = pw_matmul_wt(ctx, xg, m, experts[e], yg);
        for (int64_t r = 0; st == PW_OK && r < m; ++r)
            memcpy(y + rows[r] * ldy, yg + r * out, sizeof(float) * (size_t)out);
    }
    return st;
}
