/*
 * Activation quantizers: pw__act_quantize_rows (which picks the fastest
 * quantizer the context's ISA allows, e.g. AVX-512) must write exactly the
 * bytes of the scalar pw__act_quantize_row, header padding included, so a
 * kernel's result never depends on which quantizer ran. Rows: Gaussian at
 * several magnitudes, exact rounding ties (x * id = k + 0.5), all zeros, one
 * spike, subnormals; 3 blocks per row of each form (plus 1, 7 and 37: the AVX-512
 * quantizer takes 16 blocks at a time),
 * several rows with a row stride wider than the row. The level's scan of X for NaN and
 * infinities flags each at every position of short rows, and not FLT_MAX.
 * f16 and bf16 X, quantized while converted a chunk at a time (PW__ACT_CHUNK), must
 * give the bytes of the f32 row of the same values for Q8_32, Q8_256 and QD8, over rows
 * of several chunks, a row stride, and rows holding a NaN or an infinity (QD8 names the
 * same first bad k).
 */
#include "pw_test.h"

#include "quant/act.h"

#include <float.h>
#include <math.h>

static void fill_row(float *x, int64_t in, int kind, pw_rng *r) {
    for (int64_t k = 0; k < in; ++k) {
        switch (kind) {
        case 0: x[k] = (float)pw_rng_gauss(r); break;
        case 1: x[k] = (float)(pw_rng_gauss(r) * 1e-3); break;
        case 2: x[k] = (float)(pw_rng_gauss(r) * 1e4); break;
        case 3: /* amax 127 gives d = 1, id = 1: halves are exact ties */
            x[k] = k % 32 == 0 ? 127.0f : (float)((int)(pw_rng_uniform(r) * 250.0) - 125) + 0.5f;
            break;
        case 4: x[k] = 0.0f; break;
        case 5: x[k] = k == in / 2 ? -3.0f : 1e-7f * (float)(k % 7); break;
        default: x[k] = (float)(pw_rng_gauss(r) * 1e-39); break; /* subnormal */
        }
    }
}

static void check_form(pw_context *ctx, pw_activation a) {
    const int64_t bs = pw__act_block_size(a);
    const int64_t blocks[] = {1, 3, 7, 37};
    pw_rng r = {42};
    for (size_t bi = 0; bi < sizeof blocks / sizeof blocks[0]; ++bi) {
        const int64_t in = blocks[bi] * bs, ldx = in + 5, n = 7;
        const size_t row = (size_t)blocks[bi] * pw__act_block_bytes(a);
        float *x = malloc(sizeof(float) * (size_t)(n * ldx));
        unsigned char *want = malloc(row * (size_t)n), *got = malloc(row * (size_t)n);
        for (int64_t i = 0; i < n; ++i) fill_row(x + i * ldx, in, (int)i, &r);
        memset(want, 0xAB, row * (size_t)n);
        memset(got, 0xCD, row * (size_t)n);
        for (int64_t i = 0; i < n; ++i) pw__act_quantize_row(a, x + i * ldx, in, want + (size_t)i * row);
        pw__act_quantize_rows(ctx, a, x, PW_DTYPE_F32, ldx, n, in, got, row);
        for (int64_t i = 0; i < n; ++i) {
            const unsigned char *w = want + (size_t)i * row, *g = got + (size_t)i * row;
            size_t first = row;
            for (size_t b = 0; b < row && first == row; ++b)
                if (w[b] != g[b]) first = b;
            CHECK(first == row, "form %d, %lld blocks, row %lld (kind %lld): byte %zu (block %zu, offset %zu) is %u, scalar wrote %u",
                  (int)a, (long long)blocks[bi], (long long)i, (long long)i, first,
                  first / pw__act_block_bytes(a), first % pw__act_block_bytes(a),
                  first < row ? g[first] : 0u, first < row ? w[first] : 0u);
        }
        free(x);
        free(want);
        free(got);
    }
}

static uint16_t to_bf16(float f) {
    uint32_t b;
    memcpy(&b, &f, 4);
    return (uint16_t)(b >> 16);
}

static void check_half(pw_context *ctx, pw_activation a, pw_dtype t) {
    const int64_t in = 3 * PW__ACT_CHUNK + 256, ldx = in + 3, n = 5;
    const int64_t kp = pw__qd8_k_padded(in);
    const size_t row = a == PW_ACT_QD8 ? pw__qd8_row_bytes(kp) : pw__act_row_bytes(a, in);
    uint16_t *xh = malloc(sizeof(uint16_t) * (size_t)(n * ldx));
    float *xf = malloc(sizeof(float) * (size_t)(n * ldx));
    unsigned char *want = malloc(row * (size_t)n), *got = malloc(row * (size_t)n);
    REQUIRE(xh && xf && want && got, "malloc");
    pw_rng r = {9};
    for (int64_t i = 0; i < n * ldx; ++i) {
        const float v = (float)(pw_rng_gauss(&r) * (i % 5 == 0 ? 30.0 : 0.7));
        xh[i] = t == PW_DTYPE_F16 ? pw_f32_to_f16(v) : to_bf16(v);
    }
    xh[1 * ldx + 2500] = t == PW_DTYPE_F16 ? 0x7E00 : 0x7FC0; /* NaN in the third chunk */
    xh[3 * ldx + 1100] = t == PW_DTYPE_F16 ? 0xFC00 : 0xFF80; /* -inf in the second */
    for (int64_t i = 0; i < n * ldx; ++i)
        xf[i] = t == PW_DTYPE_F16 ? pw_f16_to_f32(xh[i]) : pw_bf16_to_f32(xh[i]);
    memset(want, 0xAB, row * (size_t)n);
    memset(got, 0xCD, row * (size_t)n);
    pw__act_quantize_rows(ctx, a, xf, PW_DTYPE_F32, ldx, n, in, want, row);
    pw__act_quantize_rows(ctx, a, xh, t, ldx, n, in, got, row);
    for (int64_t i = 0; i < n; ++i) {
        /* a block form of a row with a NaN is garbage either way (the row's Y is NaN) */
        if (a != PW_ACT_QD8 && (i == 1 || i == 3)) continue;
        const unsigned char *w = want + (size_t)i * row, *g = got + (size_t)i * row;
        /* a QD8 row with a NaN is its header alone (the rest is never written) */
        const size_t used = a == PW_ACT_QD8 && (i == 1 || i == 3) ? sizeof(pw__qd8_header) : row;
        size_t first = used;
        for (size_t b = 0; b < used && first == used; ++b)
            if (w[b] != g[b]) first = b;
        CHECK(first == used, "form %d, %s X, row %lld: byte %zu differs from the f32 row's", (int)a,
              t == PW_DTYPE_F16 ? "f16" : "bf16", (long long)i, first);
    }
    if (a == PW_ACT_QD8) {
        const pw__qd8_header *h1 = (const pw__qd8_header *)(const void *)(got + row);
        const pw__qd8_header *h3 = (const pw__qd8_header *)(const void *)(got + 3 * row);
        CHECK(h1->bad == 1 && h1->bad_k == 2500 && h3->bad == 1 && h3->bad_k == 1100,
              "QD8 bad rows: %d at %lld, %d at %lld", (int)h1->bad, (long long)h1->bad_k, (int)h3->bad,
              (long long)h3->bad_k);
    }
    free(xh);
    free(xf);
    free(want);
    free(got);
}

/* The level's scan of X for NaN and infinities (op/run.c) at every position of rows of
 * lengths about its vector widths; FLT_MAX, the largest finite value, is not flagged. */
static void check_scan(pw_context *ctx) {
    const pw__act_forms *forms = pw__act_forms_for(ctx);
    if (forms == NULL) return; /* the portable scan, checked by test_nonfinite */
    const int64_t lens[] = {1, 7, 8, 15, 16, 17, 31, 32, 33, 47, 64, 100};
    const float bad[] = {NAN, -NAN, INFINITY, -INFINITY};
    float x[100];
    for (size_t li = 0; li < sizeof lens / sizeof lens[0]; ++li) {
        const int64_t n = lens[li];
        for (int64_t k = 0; k < n; ++k) x[k] = k % 2 ? FLT_MAX : -FLT_MAX;
        CHECK(!forms->not_finite(x, n), "%lld values of +-FLT_MAX flagged", (long long)n);
        for (int64_t p = 0; p < n; ++p)
            for (size_t b = 0; b < sizeof bad / sizeof bad[0]; ++b) {
                const float keep = x[p];
                x[p] = bad[b];
                CHECK(forms->not_finite(x, n), "%g at %lld of %lld not flagged", (double)bad[b],
                      (long long)p, (long long)n);
                x[p] = keep;
            }
    }
}

int main(void) {
    pw_context *ctx = pw_test_context();
    check_scan(ctx);
    const pw_activation forms[3] = {PW_ACT_Q8_32, PW_ACT_Q8_256, PW_ACT_QD8};
    for (int f = 0; f < 3; ++f) {
        check_half(ctx, forms[f], PW_DTYPE_F16);
        check_half(ctx, forms[f], PW_DTYPE_BF16);
    }
    check_form(ctx, PW_ACT_Q8_32);
    check_form(ctx, PW_ACT_Q8_256);
    /* Ties round to even: 2.5 -> 2, 3.5 -> 4, -2.5 -> -2 with d = 1. */
    {
        float x[32] = {127.0f, 2.5f, 3.5f, -2.5f};
        pw__q8_32 b;
        pw__act_quantize_rows(ctx, PW_ACT_Q8_32, x, PW_DTYPE_F32, 32, 1, 32, &b, sizeof b);
        CHECK(b.d == 1.0f && b.qs[1] == 2 && b.qs[2] == 4 && b.qs[3] == -2 && b.qu[3] == 126,
              "d %g qs %d %d %d qu %u", (double)b.d, b.qs[1], b.qs[2], b.qs[3], b.qu[3]);
        CHECK(b.sum == 127 + 2 + 4 - 2 && b.dsum == 131.0f, "sum %d dsum %g", (int)b.sum, (double)b.dsum);
    }
    printf("activation quantizers agree with the scalar bytes at isa %s\n",
           pw_isa_name(pw_context_isa(ctx)));
    pw_context_destroy(ctx);
    return pw_test_finish();
}
