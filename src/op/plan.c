/*
 * The planner: which kernel serves n = 1 and which n >= 2, and which forms
 * they read, under a memory policy (packwise/weight.h). Candidates are the
 * usable non-reference kernels of the weight's kind and format; each reads
 * one form: the source as it is, a ROW_MAJOR copy (row-major kernels over a
 * view in another order), or a packer's private form. Priorities rank
 * kernels (kernel/kernel.h); the policy decides which forms may be held:
 *
 *   FASTEST   per class, the highest priority, whatever it reads (ties: the
 *             fewer bytes added, a form the other class holds adding none)
 *   IN_PLACE  per class, the highest priority reading the source as it is
 *             (the reference kernel where none does)
 *   COMPACT   one form for every class: the source, or one copy or packed
 *             form of at most the source's bytes + 3% (pw__compact_budget);
 *             among them the one whose best kernels' priorities sum highest
 *             (ties: fewer bytes). When no form within the budget serves
 *             every class, the source with the reference kernel for the
 *             classes nothing else serves; a QC4W weight, which cannot be
 *             read in place, takes its best single form then.
 */
#include "op/op.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

uint64_t pw__compact_budget(uint64_t source_bytes) {
    return source_bytes + source_bytes / 100 * 3 + (source_bytes % 100) * 3 / 100;
}

int pw__reads_layout(const pw__kernel *k, pw_layout l) {
    switch (k->info.layout) {
    case PW_LAYOUT_BLOCKED_ROW_MAJOR: return l.order == PW_ORDER_ROW_MAJOR;
    case PW_LAYOUT_BLOCKED_INPUT_MAJOR: return l.order == PW_ORDER_INPUT_BLOCK_MAJOR;
    case PW_LAYOUT_ROW_TILED: return l.order == PW_ORDER_ROW_TILED && l.tile_rows == k->info.tile_rows;
    case PW_LAYOUT_PACKED: return 0;
    }
    return 0;
}

int pw__reads_as_is(const pw__kernel *k, const pw_view *v) {
    const pw_layout l = pw_view_layout(v);
    /* one row or one block per row: the two orders are the same bytes (the view says
     * ROW_MAJOR), and the input-block-major kernels step by the view's strides */
    const int64_t bpr = v->shape[1] / pw_format_get(v->format)->block_size;
    if (k->info.layout == PW_LAYOUT_BLOCKED_INPUT_MAJOR && l.order == PW_ORDER_ROW_MAJOR &&
        (v->shape[0] == 1 || bpr == 1))
        return 1;
    return pw__reads_layout(k, l);
}

/* One candidate form and the best kernel reading it per class. */
typedef struct cand {
    pw__form form;
    const pw__kernel *best[2];
} cand;

#define MAX_CANDS 16

static int same_form(const pw__form *a, const pw__form *b) {
    if (a->kind != b->kind) return 0;
    if (a->kind != PW__FORM_PACKED) return 1;
    return strcmp(a->desc.family, b->desc.family) == 0 && a->desc.nr == b->desc.nr &&
           a->desc.kr == b->desc.kr && a->desc.sr == b->desc.sr && a->desc.group == b->desc.group &&
           a->desc.version == b->desc.version && a->desc.bytes == b->desc.bytes;
}

/* The form kernel k reads for weight w; 0 when it reads none w can have (a view in an
 * order it does not read and cannot be copied into, a packer that refuses the shape). */
static int form_of(pw_context *ctx, const pw_weight *w, const pw__kernel *k, pw__form *f) {
    memset(f, 0, sizeof *f);
    if (k->info.layout == PW_LAYOUT_PACKED) {
        if (k->pack == NULL || k->pack_plan == NULL) return 0;
        /* A packer that cannot take this shape is simply not a candidate: keep the
         * context's message as it was. */
        char saved[PW__MESSAGE_CAPACITY];
        pw__strlcpy(saved, pw_context_message(ctx), sizeof saved);
        f->desc.group = w->group; /* QB4W's block size (kernel.h: read on entry) */
        const pw_status st = k->pack_plan(ctx, k, w->view.format, w->out, w->in, &f->desc);
        pw__strlcpy(ctx->message, saved, sizeof ctx->message);
        if (st != PW_OK) return 0;
        f->kind = PW__FORM_PACKED;
        f->packer = k;
        f->bytes = f->desc.bytes;
        return 1;
    }
    if (w->kind != PW_WEIGHT_BLOCKS) return 0;
    if (pw__reads_as_is(k, &w->view)) {
        f->kind = PW__FORM_SOURCE;
        return 1;
    }
    if (k->info.layout == PW_LAYOUT_BLOCKED_ROW_MAJOR) {
        f->kind = PW__FORM_COPY;
        f->bytes = w->source_bytes;
        return 1;
    }
    return 0;
}

static int64_t class_n(int c) { return c == PW__GEMV ? 1 : 2; }

/* Serves class c: n = 1 for GEMV; GEMM from n = 2 (min_n <= 2). */
static int serves_class(const pw__kernel *k, int c) { return k->min_n <= class_n(c); }

static int better(const pw__kernel *a, const pw__kernel *b) {
    return b == NULL || a->priority > b->priority;
}

/* Every candidate form with its best kernel per class. */
static int collect(pw_context *ctx, const pw_weight *w, cand *cs) {
    int n = 0;
    for (size_t i = 0; i < pw__kernel_list_count(); ++i) {
        const pw__kernel *k = pw__kernel_list_get(i);
        if (k->info.is_reference || !pw__kernel_reads(k, w->kind, w->view.format, w->in) ||
            !pw__kernel_usable(ctx, k))
            continue;
        pw__form f;
        if (!form_of(ctx, w, k, &f)) continue;
        int j = 0;
        while (j < n && !same_form(&cs[j].form, &f)) ++j;
        if (j == n) {
            if (n == MAX_CANDS) continue;
            memset(&cs[n], 0, sizeof cs[n]);
            cs[n].form = f;
            ++n;
        }
        for (int c = 0; c < 2; ++c)
            if (serves_class(k, c) && better(k, cs[j].best[c])) cs[j].best[c] = k;
    }
    return n;
}

/* Add form f to the plan (once) and return its index; -1 for the source. */
static int plan_form(pw__plan *p, const pw__form *f) {
    if (f->kind == PW__FORM_SOURCE) return -1;
    for (int i = 0; i < p->nforms; ++i)
        if (same_form(&p->forms[i], f)) return i;
    p->forms[p->nforms] = *f;
    return p->nforms++;
}

static int wants(uint32_t serves, int c) { return (serves & (c == PW__GEMV ? PW_SERVE_GEMV : PW_SERVE_GEMM)) != 0; }

pw_status pw__plan_make(pw_context *ctx, pw_weight *w, pw_memory_policy policy, uint32_t serves,
                        const pw__kernel *forced) {
    pw__plan *p = &w->plan;
    memset(p, 0, sizeof *p);
    p->policy = policy;
    p->serves = serves;
    p->form[0] = p->form[1] = -1;
    const pw__kernel *ref =
        w->kind == PW_WEIGHT_BLOCKS ? pw__kernel_reference(PW_WEIGHT_BLOCKS, w->view.format) : NULL;
    if (forced != NULL) {
        pw__form f;
        PW__FAIL_IF(!form_of(ctx, w, forced, &f) && !forced->info.is_reference, ctx, PW_ERR_LAYOUT,
                    "kernel %s cannot read weight '%s' (%" PRId64 " x %" PRId64 ") in any form it "
                    "can be given; prepack the view first (pw_view_prepack) or let the plan choose",
                    forced->info.name, w->name, w->out, w->in);
        if (forced->info.is_reference) f.kind = PW__FORM_SOURCE;
        for (int c = 0; c < 2; ++c) {
            if (!wants(serves, c)) continue;
            p->k[c] = forced;
            p->form[c] = plan_form(p, &f);
        }
        return PW_OK;
    }
    cand cs[MAX_CANDS];
    const int n = collect(ctx, w, cs);
    int pick = -1;
    if (policy == PW_MEMORY_FASTEST || policy == PW_MEMORY_IN_PLACE) {
        int held = -1; /* the form the first class chose: no more bytes for the second */
        for (int c = 0; c < 2; ++c) {
            if (!wants(serves, c)) continue;
            int best = -1;
            for (int j = 0; j < n; ++j) {
                if (cs[j].best[c] == NULL) continue;
                if (policy == PW_MEMORY_IN_PLACE && cs[j].form.kind != PW__FORM_SOURCE) continue;
                if (best < 0 || better(cs[j].best[c], cs[best].best[c])) {
                    best = j;
                    continue;
                }
                /* a tie: the fewer bytes to add, then the form already held */
                const uint64_t add_j = j == held ? 0 : cs[j].form.bytes;
                const uint64_t add_best = best == held ? 0 : cs[best].form.bytes;
                if (cs[j].best[c]->priority == cs[best].best[c]->priority &&
                    (add_j < add_best || (add_j == add_best && j == held)))
                    best = j;
            }
            if (best >= 0) {
                p->k[c] = cs[best].best[c];
                p->form[c] = plan_form(p, &cs[best].form);
                held = best;
            }
        }
    } else {
        /* COMPACT: the best single form within the budget. */
        const uint64_t budget = pw__compact_budget(w->source_bytes);
        int64_t best_score = -1;
        for (int pass = 0; pass < 2 && pick < 0; ++pass) {
            /* pass 1 (QC4W only, nothing within the budget, as for tiny weights whose scales
             * and tile padding outweigh their nibbles): the best single form */
            if (pass == 1 && w->kind == PW_WEIGHT_BLOCKS) break;
            for (int j = 0; j < n; ++j) {
                if (pass == 0 && cs[j].form.kind != PW__FORM_SOURCE && cs[j].form.bytes > budget) continue;
                int64_t score = 0;
                int ok = 1;
                for (int c = 0; c < 2 && ok; ++c) {
                    if (!wants(serves, c)) continue;
                    if (cs[j].best[c] == NULL) ok = 0;
                    else score += cs[j].best[c]->priority;
                }
                if (!ok) continue;
                if (pick < 0 || score > best_score ||
                    (score == best_score && cs[j].form.bytes < cs[pick].form.bytes)) {
                    pick = j;
                    best_score = score;
                }
            }
        }
        if (pick >= 0) {
            for (int c = 0; c < 2; ++c) {
                if (!wants(serves, c)) continue;
                p->k[c] = cs[pick].best[c];
                p->form[c] = plan_form(p, &cs[pick].form);
            }
        } else {
            /* The source, with whatever reads it in place. */
            for (int j = 0; j < n; ++j) {
                if (cs[j].form.kind != PW__FORM_SOURCE) continue;
                for (int c = 0; c < 2; ++c)
                    if (wants(serves, c)) p->k[c] = cs[j].best[c];
            }
        }
    }
    for (int c = 0; c < 2; ++c) {
        if (!wants(serves, c) || p->k[c] != NULL) continue;
        PW__FAIL_IF(ref == NULL, ctx, PW_ERR_UNSUPPORTED,
                    "no kernel multiplies weight '%s' (%s, %" PRId64 " x %" PRId64 ") for %s under "
                    "the %s policy here (isa %s)",
                    w->name, pw__kind_name(w->kind, w->view.format),
                    w->out, w->in, c == PW__GEMV ? "n = 1" : "n >= 2", pw_memory_policy_name(policy),
                    pw_isa_name(pw_context_isa(ctx)));
        p->k[c] = ref;
        p->form[c] = -1;
        p->fallback[c] = 1;
    }
    return PW_OK;
}
