/*
 * Weights from raw int4 arrays (QC4W: op/qc4w.c, QB4W: op/qb4w.c): the steps
 * both share once their descriptor is checked. No kernel reads raw int4 weights
 * as they are, so one packed form serves every batch size and is packed now,
 * while the arrays are borrowed (or found in the weight's cache).
 */
#include "op/op.h"

#include "kernel/qc4w.h"

#include <inttypes.h>
#include <string.h>

typedef struct transpose_job {
    const uint8_t *src;
    uint8_t *dst;
    int64_t k, n, rows_per_task;
} transpose_job;

static void transpose_task(void *p, size_t t) {
    const transpose_job *j = p;
    const int64_t n0 = (int64_t)t * j->rows_per_task;
    const int64_t n1 = n0 + j->rows_per_task < j->n ? n0 + j->rows_per_task : j->n;
    pw__qc4w_transpose_rows(j->src, j->k, j->n, n0, n1, j->dst);
}

pw_status pw__int4_transpose(pw_context *ctx, const pw_weight *h, const uint8_t *data, int64_t k,
                             int64_t n, const char *from, const char *to, uint8_t **nk) {
    const uint64_t nk_bytes = (uint64_t)(k + 1) / 2 * (uint64_t)n;
    *nk = pw__calloc(ctx, 1, (size_t)nk_bytes, 64);
    PW__FAIL_IF(*nk == NULL, ctx, PW_ERR_OUT_OF_MEMORY,
                "weights '%s': cannot allocate %" PRIu64 " bytes to transpose", h->name, nk_bytes);
    transpose_job tj = {data, *nk, k, n, 0};
    const int64_t tasks = 8 * (int64_t)pw__threads(ctx);
    tj.rows_per_task = (n + tasks - 1) / tasks;
    /* Destination rows are disjoint per task: any row split is safe. */
    pw__parallel_for(ctx, transpose_task, &tj, (size_t)((n + tj.rows_per_task - 1) / tj.rows_per_task));
    pw_trace_event e;
    memset(&e, 0, sizeof e);
    e.kind = PW_TRACE_ADAPTER;
    e.tensor = h->name;
    e.bytes = nk_bytes;
    e.from = from;
    e.to = to;
    pw__trace(ctx, &e);
    return PW_OK;
}

pw_status pw__weight_create_raw(pw_context *ctx, const pw__raw_spec *s,
                                const pw_weight_options *options, pw_weight **out) {
    const char *kind = pw__kind_name(s->kind, PW_FORMAT_COUNT);
    pw_weight_options o;
    PW__TRY(pw__take_options(ctx, options, &o, s->api));
    PW__FAIL_IF(o.policy == PW_MEMORY_IN_PLACE, ctx, PW_ERR_UNSUPPORTED,
                "%s weights '%s': the in_place policy holds no copy, and no kernel reads raw "
                "%s weights (they are borrowed only while the weight is created); use compact",
                kind, s->name, kind);
    PW__FAIL_IF(o.bias != NULL && *s->bias != NULL, ctx, PW_ERR_INVALID_ARGUMENT,
                "%s weights '%s': a bias in the descriptor and in the options; give one", kind,
                s->name);
    if (*s->bias == NULL) *s->bias = o.bias; /* packed into the tiles with the scales */
    o.bias = NULL;
    const pw__kernel *forced;
    PW__TRY(pw__forced_kernel(ctx, o.kernel, s->kind, PW_FORMAT_COUNT, s->in, &forced));

    pw_weight *h = NULL;
    pw_status st = pw__weight_new(ctx, s->kind, s->name, s->out, s->in, &o, &h);
    if (st == PW_OK) {
        h->view.format = PW_FORMAT_COUNT;
        h->group = s->group;
        h->source_bytes = s->source_bytes + sizeof(float) * (uint64_t)s->out * (*s->bias != NULL);
        st = pw__plan_make(ctx, h, o.policy, o.serves, forced);
    }
    /* One form serves every class (these kernels serve any n): pack it now. */
    pw__form *f = st == PW_OK && h->plan.nforms > 0 ? &h->plan.forms[0] : NULL;
    if (st == PW_OK && (f == NULL || f->kind != PW__FORM_PACKED || h->plan.nforms != 1))
        st = pw__fail(ctx, PW_ERR_UNSUPPORTED, "%s weights '%s': no single packed form serves "
                      "every batch size here", kind, s->name);
    if (st == PW_OK) {
        s->job->h = h;
        s->job->f = f;
        const pw__digest key = h->cache != NULL ? s->key(s->job) : (pw__digest){0, 0};
        st = pw__ready_packed(ctx, h, f, key, s->pack, s->job);
    }
    for (int c = 0; c < 2 && st == PW_OK; ++c)
        if (h->plan.k[c] != NULL) st = pw__weight_ready(ctx, h, c); /* checks and announces */
    if (st != PW_OK) {
        pw_weight_destroy(h);
        return st;
    }
    *out = h;
    return PW_OK;
}
