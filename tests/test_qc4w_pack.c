/*
 * QC4W packing: every family's packer against an unpacker (bit-exact round
 * trip over tile-derived shapes, both zero points, garbage in the unused
 * nibble), the weight sums against sums computed here from the raw bytes,
 * padding that is zero, the transposed source's nibble moves, golden bytes
 * for each (nr, kr, sr) in use (made by tests/data/qc4w/make_golden.py, a
 * Python implementation written from the layout's description, independent
 * of the C packer), and the refusal of a buffer of another family or tile
 * shape by every kernel, with the output untouched.
 *
 * The packers are portable C, so every family is checked on every machine.
 */
// pw-test: once
#include "pw_test.h"

#include "kernel/qc4w.h"

#include <math.h>

/* Signed value of nibble k of a raw N x K row, decoded here (not by the library). */
static int raw_value(const uint8_t *row, int64_t k, int zp) {
    const int nib = (row[k / 2] >> ((k & 1) * 4)) & 15;
    return zp == 8 ? nib - 8 : (nib >= 8 ? nib - 16 : nib);
}

static uint8_t *pack_new(pw_context *ctx, const pw__kernel *k, int64_t n, int64_t kk,
                         const uint8_t *raw, int zp, const float *scale, const float *bias,
                         pw__pack_desc *d) {
    CHECK_OK(k->pack_plan(ctx, k, PW_FORMAT_COUNT, n, kk, d), ctx);
    uint8_t *p = aligned_alloc(64, (size_t)(d->bytes + 63) / 64 * 64);
    memset(p, 0xEE, (size_t)d->bytes); /* the packer must write every byte */
    pw__qc4w_pack(d, raw, zp, scale, bias, 0, n, p);
    return p;
}

static void round_trip(pw_context *ctx, const pw__kernel *k, int64_t n, int64_t kk, int zp,
                       int with_bias, uint64_t seed) {
    pw_rng r = {seed};
    const int64_t stride = (kk + 1) / 2;
    uint8_t *raw = malloc((size_t)(n * stride));
    for (int64_t i = 0; i < n * stride; ++i) raw[i] = (uint8_t)pw_rng_next(&r);
    float *scale = malloc(sizeof(float) * (size_t)n), *bias = malloc(sizeof(float) * (size_t)n);
    for (int64_t i = 0; i < n; ++i) {
        scale[i] = (float)(pw_rng_gauss(&r) * 0.01);
        bias[i] = i == 0 ? -0.0f : (float)pw_rng_gauss(&r);
    }
    pw__pack_desc d;
    uint8_t *p = pack_new(ctx, k, n, kk, raw, zp, scale, with_bias ? bias : NULL, &d);
    CHECK(d.in_padded % 32 == 0 && d.in_padded >= kk && d.in_padded < kk + 32,
          "%s K=%lld: Kp=%lld", k->info.name, (long long)kk, (long long)d.in_padded);
    CHECK(d.tile_bytes == (uint64_t)(d.in_padded * k->nr / 2 + 12 * k->nr), "%s tile bytes", k->info.name);

    /* Unpack: the raw bytes with the unused nibble cleared, scales and bias bit for bit. */
    uint8_t *back = malloc((size_t)(n * stride));
    float *s2 = malloc(sizeof(float) * (size_t)n), *b2 = malloc(sizeof(float) * (size_t)n);
    pw__qc4w_unpack(&d, p, zp, back, s2, b2);
    int bad = 0;
    for (int64_t row = 0; row < n && bad < 3; ++row) {
        for (int64_t b = 0; b < stride && bad < 3; ++b) {
            uint8_t want = raw[row * stride + b];
            if ((kk & 1) && b == stride - 1) want &= 0x0F;
            if (back[row * stride + b] != want) {
                ++bad;
                CHECK(0, "%s N=%lld K=%lld zp=%d: unpacked row %lld byte %lld = 0x%02x, raw 0x%02x",
                      k->info.name, (long long)n, (long long)kk, zp, (long long)row, (long long)b,
                      back[row * stride + b], want);
            }
        }
    }
    CHECK(memcmp(s2, scale, sizeof(float) * (size_t)n) == 0, "%s: scales round trip", k->info.name);
    if (with_bias) {
        CHECK(memcmp(b2, bias, sizeof(float) * (size_t)n) == 0, "%s: bias round trip", k->info.name);
    } else {
        for (int64_t i = 0; i < n; ++i) CHECK(b2[i] == 0.0f, "%s: no bias packs zeros", k->info.name);
    }

    /* Weight sums, from the raw bytes here; padding channels and k are zero. */
    const uint64_t sums = (uint64_t)d.in_padded * (uint64_t)k->nr / 2;
    for (int64_t t = 0; t < d.tiles; ++t) {
        const uint8_t *tile = p + (uint64_t)t * d.tile_bytes;
        for (int32_t c = 0; c < k->nr; ++c) {
            const int64_t ch = t * k->nr + c;
            int32_t want = 0;
            if (ch < n)
                for (int64_t q = 0; q < kk; ++q) want += raw_value(raw + ch * stride, q, zp);
            int32_t got;
            memcpy(&got, tile + sums + 4u * (uint64_t)c, 4);
            CHECK(got == want, "%s N=%lld K=%lld zp=%d: weight_sum[%lld] = %d, expected %d",
                  k->info.name, (long long)n, (long long)kk, zp, (long long)ch, (int)got, (int)want);
            if (ch >= n) {
                float sc, bi;
                memcpy(&sc, tile + sums + 4u * (uint64_t)(k->nr + c), 4);
                memcpy(&bi, tile + sums + 4u * (uint64_t)(2 * k->nr + c), 4);
                CHECK(sc == 0.0f && bi == 0.0f, "%s: padding channel %lld has scale/bias", k->info.name,
                      (long long)ch);
            }
            /* Every slot of a padding channel, and k >= K of a real one, is signed zero. */
            for (int64_t q = ch < n ? kk : 0; q < d.in_padded; ++q) {
                int32_t byte;
                int hi;
                pw__qc4w_slot(k->kr, k->sr, (int32_t)(q % k->kr), &byte, &hi);
                const uint8_t v = tile[((uint64_t)(q / k->kr) * (uint64_t)k->nr + (uint64_t)c) *
                                           (uint64_t)(k->kr / 2) + (uint64_t)byte];
                if (((v >> (4 * hi)) & 15) != 0) {
                    CHECK(0, "%s: padding k=%lld of channel %lld is not zero", k->info.name,
                          (long long)q, (long long)ch);
                    break;
                }
            }
        }
    }
    free(raw);
    free(scale);
    free(bias);
    free(p);
    free(back);
    free(s2);
    free(b2);
}

/* The transposed source: K x N nibbles, built here from an N x K original. */
static void transposed_source(void) {
    pw_rng r = {77};
    const int64_t shapes[][2] = {{1, 1}, {3, 5}, {17, 33}, {40, 31}, {64, 64}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; ++s) {
        const int64_t n = shapes[s][0], k = shapes[s][1];
        const int64_t nk_stride = (k + 1) / 2, kn_stride = (n + 1) / 2;
        uint8_t *nk = calloc((size_t)(n * nk_stride), 1), *kn = calloc((size_t)(k * kn_stride), 1);
        uint8_t *back = calloc((size_t)(n * nk_stride), 1);
        for (int64_t a = 0; a < n; ++a)
            for (int64_t b = 0; b < k; ++b) {
                const uint8_t v = (uint8_t)(pw_rng_next(&r) & 15);
                nk[a * nk_stride + b / 2] |= (uint8_t)(v << (4 * (b & 1)));
                kn[b * kn_stride + a / 2] |= (uint8_t)(v << (4 * (a & 1)));
            }
        /* Garbage in the K x N rows' unused nibbles must not leak. */
        if (n & 1)
            for (int64_t b = 0; b < k; ++b) kn[b * kn_stride + kn_stride - 1] |= 0xB0;
        pw__qc4w_transpose_rows(kn, k, n, 0, n / 2, back);
        pw__qc4w_transpose_rows(kn, k, n, n / 2, n, back);
        CHECK(memcmp(back, nk, (size_t)(n * nk_stride)) == 0, "transpose %lldx%lld",
              (long long)n, (long long)k);
        free(nk);
        free(kn);
        free(back);
    }
}

static uint8_t *read_golden(const char *name, size_t *size) {
    uint8_t *b = pw_test_read_file(pw_test_data_path(name), size);
    REQUIRE(b != NULL, "cannot read tests/data/%s (made by tests/data/qc4w/make_golden.py)", name);
    return b;
}

static void golden(pw_context *ctx) {
    size_t isz = 0;
    uint8_t *in = read_golden("qc4w/golden_input.bin", &isz);
    uint32_t hdr[3];
    memcpy(hdr, in, 12);
    const int64_t n = hdr[0], k = hdr[1];
    const int zp = (int)hdr[2];
    const size_t raw_bytes = (size_t)(n * ((k + 1) / 2));
    REQUIRE(isz == 12 + raw_bytes + 8 * (size_t)n, "golden_input.bin is %zu bytes", isz);
    const uint8_t *raw = in + 12;
    float *scale = malloc(sizeof(float) * (size_t)n), *bias = malloc(sizeof(float) * (size_t)n);
    memcpy(scale, in + 12 + raw_bytes, sizeof(float) * (size_t)n);
    memcpy(bias, in + 12 + raw_bytes + 4 * (size_t)n, sizeof(float) * (size_t)n);
    int families = 0;
    for (size_t i = 0; i < pw__kernel_list_count(); ++i) {
        const pw__kernel *kd = pw__kernel_list_get(i);
        if (kd->info.kind != PW_WEIGHT_QC4W) continue;
        if (strcmp(kd->info.isa, "scalar") != 0) continue; /* one portable kernel per family */
        char name[96];
        snprintf(name, sizeof name, "qc4w/golden_%s.bin", kd->info.family);
        size_t gsz = 0;
        uint8_t *g = read_golden(name, &gsz);
        pw__pack_desc d;
        uint8_t *p = pack_new(ctx, kd, n, k, raw, zp, scale, bias, &d);
        CHECK(gsz == d.bytes, "%s: golden has %zu bytes, packer %llu", kd->info.family, gsz,
              (unsigned long long)d.bytes);
        for (size_t b = 0; b < gsz && b < d.bytes; ++b) {
            if (p[b] != g[b]) {
                CHECK(0, "%s: packed byte %zu (tile %llu, offset %llu) = 0x%02x, golden 0x%02x",
                      kd->info.family, b, (unsigned long long)(b / d.tile_bytes),
                      (unsigned long long)(b % d.tile_bytes), p[b], g[b]);
                break;
            }
        }
        ++families;
        free(g);
        free(p);
    }
    CHECK(families == 4, "golden files for %d families", families);
    free(in);
    free(scale);
    free(bias);
}

/* The operator's run of a kernel over a packed buffer: the family check, then the run. */
static pw_status run_checked(pw_context *ctx, const pw__kernel *k, const pw__mm_call *c) {
    const pw_status st = pw__kernel_check_family(ctx, k, c->pack_desc);
    if (st == PW_OK) pw__kernel_run(ctx, k, c, NULL, NULL);
    return st;
}

/* A buffer packed for one family (or tile shape) is refused by every other kernel. */
static void refusal(pw_context *ctx) {
    const int64_t n = 21, k = 64;
    uint8_t raw[21 * 32];
    float scale[21];
    for (int i = 0; i < 21 * 32; ++i) raw[i] = (uint8_t)(i * 37);
    for (int i = 0; i < 21; ++i) scale[i] = 0.5f;
    uint8_t *lhs = aligned_alloc(64, pw__qd8_row_bytes(k));
    float x[64];
    for (int i = 0; i < 64; ++i) x[i] = (float)i - 20.0f;
    pw__qd8_quantize_row(x, k, k, lhs);
    int refused = 0;
    for (size_t a = 0; a < pw__kernel_list_count(); ++a) {
        const pw__kernel *ka = pw__kernel_list_get(a);
        if (ka->info.kind != PW_WEIGHT_QC4W) continue;
        pw__pack_desc d;
        uint8_t *p = pack_new(ctx, ka, n, k, raw, 0, scale, NULL, &d);
        for (size_t b = 0; b < pw__kernel_list_count(); ++b) {
            const pw__kernel *kb = pw__kernel_list_get(b);
            if (kb->info.kind != PW_WEIGHT_QC4W || !pw__kernel_usable(ctx, kb)) continue;
            float y[21];
            for (int i = 0; i < 21; ++i) y[i] = NAN;
            pw__mm_call c = {.out = n, .in = k, .n = 1, .packed = p, .pack_desc = &d, .xq = lhs, .xq_row_bytes = pw__qd8_row_bytes(k),
                              .y = y, .ldy = n, .min = -INFINITY, .max = INFINITY};
            const pw_status st = run_checked(ctx, kb, &c);
            if (strcmp(ka->info.family, kb->info.family) == 0) {
                CHECK(st == PW_OK, "%s on %s's buffer: %s", kb->info.name, ka->info.name, pw_context_message(ctx));
                continue;
            }
            ++refused;
            CHECK(st == PW_ERR_FAMILY, "%s accepted %s's buffer", kb->info.name, ka->info.name);
            const char *msg = pw_context_message(ctx);
            CHECK(strstr(msg, ka->info.family) && strstr(msg, kb->info.family) && strstr(msg, kb->info.name),
                  "message names both families: %s", msg);
            int untouched = 1;
            for (int i = 0; i < 21; ++i) untouched &= isnan(y[i]);
            CHECK(untouched, "%s wrote output for a refused buffer", kb->info.name);
        }
        /* Same family name, other tile parameters or packer version. */
        pw__pack_desc other = d;
        other.nr = d.nr * 2;
        float y[21];
        pw__mm_call c = {.out = n, .in = k, .n = 1, .packed = p, .pack_desc = &other, .xq = lhs, .xq_row_bytes = pw__qd8_row_bytes(k),
                          .y = y, .ldy = n, .min = -INFINITY, .max = INFINITY};
        if (pw__kernel_usable(ctx, ka))
            CHECK_STATUS(run_checked(ctx, ka, &c), PW_ERR_FAMILY, ctx);
        other = d;
        other.version = d.version + 1;
        if (pw__kernel_usable(ctx, ka))
            CHECK_STATUS(run_checked(ctx, ka, &c), PW_ERR_FAMILY, ctx);
        free(p);
    }
    CHECK(refused > 0, "no cross-family pair was tried");
    /* Another packed family of the library altogether (the i8g GEMM family). */
    pw__pack_desc i8g = {.family = "i8g32x16k4", .format = PW_FORMAT_Q4_0, .nr = 16, .kr = 4,
                         .sr = 1, .group = 32, .version = 1, .out = n, .in = k};
    const pw__kernel *k0 = NULL;
    for (size_t i = 0; i < pw__kernel_list_count() && k0 == NULL; ++i)
        if (pw__kernel_list_get(i)->info.kind == PW_WEIGHT_QC4W) k0 = pw__kernel_list_get(i);
    float y[21];
    pw__mm_call c = {.out = n, .in = k, .n = 1, .packed = raw, .pack_desc = &i8g, .xq = lhs, .xq_row_bytes = pw__qd8_row_bytes(k),
                      .y = y, .ldy = n, .min = -INFINITY, .max = INFINITY};
    CHECK_STATUS(run_checked(ctx, k0, &c), PW_ERR_FAMILY, ctx);
    CHECK(strstr(pw_context_message(ctx), "i8g32x16k4") != NULL, "names i8g: %s",
          pw_context_message(ctx));
    free(lhs);
}

static void plan_errors(pw_context *ctx) {
    pw__pack_desc d;
    CHECK_STATUS(pw__qc4w_pack_plan(ctx, "f", 16, 8, 2, 0, 5, &d), PW_ERR_SHAPE, ctx);
    CHECK_STATUS(pw__qc4w_pack_plan(ctx, "f", 16, 8, 2, 5, 0, &d), PW_ERR_SHAPE, ctx);
    CHECK_STATUS(pw__qc4w_pack_plan(ctx, "f", 16, 8, 3, 5, 5, &d), PW_ERR_INVALID_ARGUMENT, ctx);
    CHECK_STATUS(pw__qc4w_pack_plan(ctx, "f", 16, 12, 2, 5, 5, &d), PW_ERR_INVALID_ARGUMENT, ctx);
    CHECK_STATUS(pw__qc4w_pack_plan(ctx, "f", 1 << 30, 8, 2, INT64_MAX / 4, INT64_MAX / 4, &d),
                 PW_ERR_OVERFLOW, ctx);
}

int main(void) {
    pw_context *ctx = pw_test_context();
    const int64_t ks[] = {1, 2, 31, 32, 33, 100, 257};
    uint64_t seed = 1;
    for (size_t i = 0; i < pw__kernel_list_count(); ++i) {
        const pw__kernel *k = pw__kernel_list_get(i);
        if (k->info.kind != PW_WEIGHT_QC4W) continue;
        const int64_t nr = k->nr;
        const int64_t ns[] = {1, nr - 1 > 0 ? nr - 1 : 1, nr, nr + 1, 3 * nr + 5};
        for (size_t a = 0; a < sizeof ks / sizeof ks[0]; ++a)
            for (size_t b = 0; b < 5; ++b)
                for (int zp = 0; zp <= 8; zp += 8) round_trip(ctx, k, ns[b], ks[a], zp, zp == 0, seed++);
    }
    transposed_source();
    golden(ctx);
    refusal(ctx);
    plan_errors(ctx);
    pw_context_destroy(ctx);
    return pw_test_finish();
}
