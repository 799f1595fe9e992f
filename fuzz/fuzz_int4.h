/*
 * What the two int4 weight targets share (fuzz_qc4w.c, fuzz_qb4w.c): the float
 * reader, the context under a fuzzed ISA cap, a forced kernel of the weight's
 * kind, the activations (a NaN or an infinity in one row), and the check of
 * every product against the target's double-precision reference. Each target
 * keeps what differs: its descriptor, its reference weights and its error bound
 * (int4_expect).
 */
#ifndef PACKWISE_FUZZ_INT4_H
#define PACKWISE_FUZZ_INT4_H

#include "fuzz_input.h"
#include "packwise.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A float: mostly ordinary, sometimes special. */
static float take_float(input *in, int specials) {
    const unsigned sel = (unsigned)take(in, 1);
    if (specials && sel % 32 == 0) {
        static const float odd[] = {NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 1e-40f, 3e38f, -3e38f};
        return odd[take(in, 1) % 8];
    }
    const uint32_t m = (uint32_t)take(in, 2);
    const float f = ((float)m / 65536.0f - 0.5f) * (float)(1 + sel % 4);
    return sel % 7 == 0 ? f * 1e-3f : f;
}

static int row_finite(const float *x, int64_t k) {
    for (int64_t i = 0; i < k; ++i)
        if (!isfinite(x[i])) return 0;
    return 1;
}

/* One thread, no environment, the ISA capped as isa_sel (0..3) says; NULL when the
 * context cannot be made. */
static pw_context *int4_context(int isa_sel) {
    pw_context_options co;
    pw_context_options_init(&co);
    co.threads = 1;
    co.ignore_env = 1;
    co.max_isa = isa_sel == 0 ? PW_ISA_NATIVE : isa_sel == 1 ? PW_ISA_SCALAR : (pw_isa)(isa_sel);
#if defined(__aarch64__)
    if (isa_sel >= 2) co.max_isa = isa_sel == 2 ? PW_ISA_NEON : PW_ISA_DOTPROD;
#endif
    pw_context *ctx = NULL;
    return pw_context_create(&co, &ctx) == PW_OK ? ctx : NULL;
}

/* Weight options from the option byte opt: a memory policy (bits 0-1, in place
 * included, which refuses), the served batch classes (bits 2-3), and with bit 4 a clamp
 * from the input (bit 5: min > max, which refuses). Returns whether it clamps. */
static int int4_options(input *in, unsigned opt, pw_weight_options *o) {
    pw_weight_options_init(o);
    static const pw_memory_policy policies[4] = {PW_MEMORY_DEFAULT, PW_MEMORY_COMPACT,
                                                 PW_MEMORY_FASTEST, PW_MEMORY_IN_PLACE};
    o->policy = policies[opt % 4];
    o->serves = (opt >> 2) % 4;
    const int clamp = (opt >> 4) & 1;
    if (clamp) {
        o->min = take_float(in, 0);
        o->max = take_float(in, 0);
        if ((opt >> 5) & 1) o->max = o->min - 1.0f;
    }
    return clamp;
}

/* Force a kernel into o: mostly one of the weight's kind (refused when not usable
 * here), sometimes any (refused unless it reads that kind). Returns whether one was. */
static int int4_force_kernel(input *in, pw_weight_options *o, pw_weight_kind kind) {
    const size_t count = pw_kernel_count();
    size_t nk = 0;
    for (size_t i = 0; i < count; ++i) {
        const pw_kernel_info *ki = pw_kernel_info_get(i);
        nk += ki != NULL && ki->kind == kind;
    }
    const int any = (int)(take(in, 1) % 4 == 0) || nk == 0;
    const size_t pick = (size_t)take(in, 1);
    size_t seen = 0;
    for (size_t i = 0; i < count; ++i) {
        const pw_kernel_info *ki = pw_kernel_info_get(i);
        if (ki == NULL || (!any && ki->kind != kind)) continue;
        if (seen++ == pick % (any ? count : nk)) {
            o->kernel = ki->name;
            return 1;
        }
    }
    return 0;
}

/* n rows of K activations; with specials, one row of several holds a NaN or an infinity. */
static float *int4_take_x(input *in, int64_t n, int64_t K, int specials) {
    float *x = malloc(sizeof(float) * (size_t)(n * K));
    PROPERTY(x);
    for (int64_t i = 0; i < n * K; ++i) x[i] = take_float(in, 0) * 4.0f;
    if (specials && n > 1) {
        static const float bad[] = {NAN, INFINITY, -INFINITY};
        x[(int64_t)(take(in, 1) % (uint64_t)n) * K + (int64_t)(take(in, 2) % (uint64_t)K)] =
            bad[take(in, 1) % 3];
    }
    return x;
}

/* A target's reference for output channel c of a row of X: from the double dot of the
 * row with the reference weights (dot), its magnitude (mag = sum |x w|), and the row's
 * QD8 range (range = max - min, with 0 in it; step = range / 255), the answer before the
 * clamp (*ref) and the error bound around it (*tol); *overflow: an intermediate f32 step
 * may leave the float range, so a result that is not finite is accepted. */
typedef struct int4_expect {
    const double *wd;     /* reference weights, N x K */
    const double *absrow; /* sum over k of |weight| of each channel (the target's units) */
    void (*bound)(const struct int4_expect *e, int64_t c, double dot, double mag, double range,
                  double step, double *ref, double *tol, int *overflow);
    const void *user;
} int4_expect;

/* Every served batch class of wt run on the first 1 and n rows of x (n x K), each product
 * against e; an unserved class must be refused. A row holding a NaN or an infinity gives
 * NaN in every output of its row. */
static void int4_check_products(pw_context *ctx, pw_weight *wt, const float *x, int64_t n, int64_t K,
                                int64_t N, uint32_t serves, int clamp, float min, float max,
                                const int4_expect *e, float *y) {
    for (int64_t rows_run = 1; rows_run <= n; rows_run += n > 1 ? n - 1 : 1) {
        const int served = rows_run == 1 ? (serves & PW_SERVE_GEMV) != 0 : (serves & PW_SERVE_GEMM) != 0;
        const pw_status rs = pw_matmul_wt(ctx, x, rows_run, wt, y);
        if (!served) {
            PROPERTY(rs != PW_OK);
            continue;
        }
        PROPERTY(rs == PW_OK);
        for (int64_t i = 0; i < rows_run; ++i) {
            const float *xr = x + i * K;
            if (!row_finite(xr, K)) {
                for (int64_t c = 0; c < N; ++c) PROPERTY(isnan(y[i * N + c]));
                continue;
            }
            float lo = 0, hi = 0;
            for (int64_t k = 0; k < K; ++k) {
                lo = xr[k] < lo ? xr[k] : lo;
                hi = xr[k] > hi ? xr[k] : hi;
            }
            const double range = (double)hi - (double)lo, step = range / 255.0;
            for (int64_t c = 0; c < N; ++c) {
                double dot = 0, mag = 0;
                for (int64_t k = 0; k < K; ++k) {
                    dot += (double)xr[k] * e->wd[c * K + k];
                    mag += fabs((double)xr[k] * e->wd[c * K + k]);
                }
                double ref = 0, tol = 0;
                int overflow = 0;
                e->bound(e, c, dot, mag, range, step, &ref, &tol, &overflow);
                double lo_ref = ref - tol, hi_ref = ref + tol;
                if (clamp) {
                    lo_ref = fmax(fmin(lo_ref, (double)max), (double)min);
                    hi_ref = fmax(fmin(hi_ref, (double)max), (double)min);
                }
                const double got = (double)y[i * N + c];
                if (!isfinite(got)) {
                    PROPERTY(overflow || !isnan(got));
                    if (overflow) continue;
                    /* infinite only where the answer leaves the float range */
                    PROPERTY(got > 0 ? hi_ref >= 0.999 * FLT_MAX : lo_ref <= -0.999 * FLT_MAX);
                    continue;
                }
                PROPERTY(got >= lo_ref - 1e-6 * fabs(lo_ref) && got <= hi_ref + 1e-6 * fabs(hi_ref));
            }
        }
    }
}

/* One weight's products, made and checked: the activations taken from the input, the
 * outputs (y2 a second buffer for the target's own comparisons), the weight's info (it has
 * one prepared form: the one-form contract) and the batch classes it serves. */
typedef struct int4_run {
    float *x, *y, *y2;
    pw_weight_info info;
    uint32_t serves;
} int4_run;

static int4_run int4_run_products(pw_context *ctx, pw_weight *wt, input *in, int64_t n, int64_t K,
                                  int64_t N, int specials, const pw_weight_options *o, int clamp,
                                  const int4_expect *e) {
    int4_run r;
    r.x = int4_take_x(in, n, K, specials);
    r.y = malloc(sizeof(float) * (size_t)(n * N));
    r.y2 = malloc(sizeof(float) * (size_t)(n * N));
    PROPERTY(r.y && r.y2);
    memset(&r.info, 0, sizeof r.info);
    r.info.struct_size = sizeof r.info;
    PROPERTY(pw_weight_info_get(wt, &r.info) == PW_OK && r.info.forms == 1 && r.info.prepared);
    r.serves = o->serves ? o->serves : (PW_SERVE_GEMV | PW_SERVE_GEMM);
    int4_check_products(ctx, wt, r.x, n, K, N, r.serves, clamp, o->min, o->max, e, r.y);
    return r;
}

static void int4_run_free(int4_run *r) {
    free(r->x);
    free(r->y);
    free(r->y2);
}

#endif
