/*
 * Reference quantizers: quality against ggml's (the qerr column of
 * tests/data/ggml/MANIFEST.txt), round trips on rows of several blocks,
 * degenerate inputs, and determinism (same bytes twice, and golden hashes
 * pinned here so any change of quantizer output on another ISA, compiler
 * or build is caught; ctest runs this under every PACKWISE_ISA level).
 */
#include "pw_test.h"

#include <math.h>

/* ------------------------------------------------------------------------ */
/* Helpers                                                                  */
/* ------------------------------------------------------------------------ */

static size_t blocks_of(pw_format f, size_t elements) {
    return elements / (size_t)pw_format_get(f)->block_size;
}

/* Quantize n values and decode them back into out. Returns the bytes (caller frees). */
static unsigned char *round_trip(pw_context *ctx, pw_format f, const float *x, size_t n,
                                 float *out) {
    const pw_format_info *info = pw_format_get(f);
    const size_t blocks = blocks_of(f, n);
    unsigned char *q = malloc(blocks * (size_t)info->block_bytes + 1);
    REQUIRE(q != NULL, "oom");
    CHECK_OK(pw_format_quantize(ctx, f, x, blocks, q), ctx);
    CHECK_OK(pw_format_decode(ctx, f, q, blocks, out), ctx);
    return q;
}

/* sqrt(sum (y - x)^2 / sum x^2), in double. */
static double rel_rms(const float *x, const float *y, size_t n) {
    double num = 0.0, den = 0.0;
    for (size_t i = 0; i < n; ++i) {
        const double d = (double)y[i] - (double)x[i];
        num += d * d;
        den += (double)x[i] * (double)x[i];
    }
    return den > 0.0 ? sqrt(num / den) : sqrt(num);
}

/* ------------------------------------------------------------------------ */
/* Quality: the MANIFEST's qerr                                             */
/* ------------------------------------------------------------------------ */

enum { MROWS = 40, MCOLS = 768 };

/* The weight of fixture S1, built as MANIFEST.txt describes: row r is
 * s_r * N(0,1) with s_r = 0.02 * 2^U(-3,3), one splitmix64 stream (seed
 * 20250102) drawing per row U, then 768 Box-Muller normals; row 2 starts with
 * 256 zeros, row 3 has element 37 = 25 s_r, row 5 is ternary (a further 768
 * uniforms, t = floor(3u) - 1). With glibc this reproduces the fixture's
 * W.f32 bit for bit; elsewhere exp2f may differ in the last place, which the
 * tolerance below does not notice. */
static void manifest_matrix(float *w) {
    pw_rng rng = {20250102};
    for (int r = 0; r < MROWS; ++r) {
        const float s = 0.02f * exp2f((float)(6.0 * pw_rng_uniform(&rng) - 3.0));
        float *row = w + (size_t)r * MCOLS;
        for (int c = 0; c < MCOLS; ++c) row[c] = s * (float)pw_rng_gauss(&rng);
        if (r == 2)
            for (int c = 0; c < 256; ++c) row[c] = 0.0f;
        if (r == 3) row[37] = 25.0f * s;
        if (r == 5)
            for (int c = 0; c < MCOLS; ++c)
                row[c] = (float)((int)(pw_rng_uniform(&rng) * 3.0) - 1) * s;
    }
}

static void test_qerr(void) {
    /* MANIFEST.txt, fixture-S1, column qerr (rel RMS of ggml's deq vs W). */
    static const struct {
        pw_format f;
        double ggml;
    } table[] = {
        {PW_FORMAT_F32, 0.0},         {PW_FORMAT_F16, 2.077e-04},   {PW_FORMAT_BF16, 1.652e-03},
        {PW_FORMAT_Q4_0, 8.469e-02},  {PW_FORMAT_Q4_1, 7.678e-02},  {PW_FORMAT_Q5_0, 4.203e-02},
        {PW_FORMAT_Q5_1, 3.730e-02},  {PW_FORMAT_Q8_0, 5.273e-03},  {PW_FORMAT_Q8_1, -1.0},
        {PW_FORMAT_Q2_K, 2.920e-01},  {PW_FORMAT_Q3_K, 1.486e-01},  {PW_FORMAT_Q4_K, 7.005e-02},
        {PW_FORMAT_Q5_K, 3.577e-02},  {PW_FORMAT_Q6_K, 1.754e-02},  {PW_FORMAT_Q8_K, -1.0},
        {PW_FORMAT_IQ4_NL, 7.593e-02}, {PW_FORMAT_TQ1_0, 8.090e-01}, {PW_FORMAT_TQ2_0, 8.090e-01},
    };
    pw_context *ctx = pw_test_context();
    const size_t n = (size_t)MROWS * MCOLS;
    float *w = malloc(n * sizeof(float)), *y = malloc(n * sizeof(float));
    REQUIRE(w && y, "oom");
    manifest_matrix(w);

    double err[PW_FORMAT_COUNT];
    printf("quantization error on the MANIFEST's 40x768 matrix (rel RMS of decode - input)\n");
    printf("  %-7s %-11s %-11s %s\n", "format", "packwise", "ggml", "packwise/ggml");
    for (size_t i = 0; i < sizeof table / sizeof table[0]; ++i) {
        const pw_format f = table[i].f;
        free(round_trip(ctx, f, w, n, y));
        err[f] = rel_rms(w, y, n);
        if (table[i].ggml > 0.0)
            printf("  %-7s %-11.4e %-11.4e %.4f\n", pw_format_get(f)->name, err[f], table[i].ggml,
                   err[f] / table[i].ggml);
        else
            printf("  %-7s %-11.4e %-11s\n", pw_format_get(f)->name, err[f],
                   f == PW_FORMAT_F32 ? "0" : "(none)");
        if (table[i].ggml > 0.0)
            CHECK(fabs(err[f] - table[i].ggml) <= 0.10 * table[i].ggml,
                  "%s: rel RMS error %.4e is not within 10%% of ggml's %.4e",
                  pw_format_get(f)->name, err[f], table[i].ggml);
    }
    CHECK(err[PW_FORMAT_F32] == 0.0, "F32 is lossless");
    /* Q8_1 has Q8_0's quants and fp16 scale (only s is added), so its error
     * is Q8_0's exactly. */
    CHECK(err[PW_FORMAT_Q8_1] == err[PW_FORMAT_Q8_0], "Q8_1 %.6e vs Q8_0 %.6e",
          err[PW_FORMAT_Q8_1], err[PW_FORMAT_Q8_0]);
    /* Q8_K uses the same symmetric 8-bit grid as Q8_0 but one scale per 256
     * values: its step grows with the expected maximum of |N(0,1)| over the
     * block, about 2.9 for 256 values against 2.1 for 32, so its error should
     * be about 1.4x Q8_0's (its f32 scale instead of fp16 changes nothing
     * visible; the zero, outlier and ternary rows pull the ratio down a
     * little, 1.33 measured). Accept 1.2x .. 1.6x: a wrong scale (127 vs 128,
     * a per-32 scale, a lost sign) lands outside. */
    const double ratio = err[PW_FORMAT_Q8_K] / err[PW_FORMAT_Q8_0];
    printf("  Q8_K/Q8_0 error ratio %.3f (expected about 1.4)\n", ratio);
    CHECK(ratio > 1.2 && ratio < 1.6, "Q8_K error %.4e is %.3f x Q8_0's", err[PW_FORMAT_Q8_K],
          ratio);
    free(w);
    free(y);
    pw_context_destroy(ctx);
}

/* ------------------------------------------------------------------------ */
/* Round trips                                                              */
/* ------------------------------------------------------------------------ */

/* Rows of 3 and 5 blocks: one call for everything, one call per row and one
 * per block must give the same bytes (no state between blocks, block i of
 * the output comes from block i of the input). */
static void test_block_independence(void) {
    pw_context *ctx = pw_test_context();
    pw_rng rng = {4242};
    for (int f = 0; f < PW_FORMAT_COUNT; ++f) {
        const pw_format_info *info = pw_format_get((pw_format)f);
        const size_t bs = info->block_size == 1 ? 32 : (size_t)info->block_size;
        const size_t row_blocks[2] = {3, 5};
        for (int v = 0; v < 2; ++v) {
            const size_t rows = 3, n = rows * row_blocks[v] * bs;
            const size_t blocks = blocks_of((pw_format)f, n);
            const size_t bytes = blocks * (size_t)info->block_bytes;
            float *x = malloc(n * sizeof(float));
            unsigned char *all = malloc(bytes), *parts = malloc(bytes);
            REQUIRE(x && all && parts, "oom");
            for (size_t i = 0; i < n; ++i)
                x[i] = (float)(pw_rng_gauss(&rng) * (0.01 + (double)(i / bs % 7)));
            CHECK_OK(pw_format_quantize(ctx, (pw_format)f, x, blocks, all), ctx);
            const size_t per_row = blocks / rows;
            for (size_t r = 0; r < rows; ++r)
                CHECK_OK(pw_format_quantize(ctx, (pw_format)f, x + r * per_row * info->block_size,
                                            per_row, parts + r * per_row * info->block_bytes),
                         ctx);
            CHECK(memcmp(all, parts, bytes) == 0, "%s: per-row quantize differs", info->name);
            /* Reverse block order: quantizing blocks one at a time, last first. */
            for (size_t b = blocks; b-- > 0;)
                CHECK_OK(pw_format_quantize(ctx, (pw_format)f, x + b * info->block_size, 1,
                                            parts + b * info->block_bytes),
                         ctx);
            CHECK(memcmp(all, parts, bytes) == 0, "%s: per-block quantize differs", info->name);
            /* Decoding block by block gives the same floats as one call. */
            float *y1 = malloc(n * sizeof(float)), *y2 = malloc(n * sizeof(float));
            REQUIRE(y1 && y2, "oom");
            CHECK_OK(pw_format_decode(ctx, (pw_format)f, all, blocks, y1), ctx);
            for (size_t b = 0; b < blocks; ++b)
                CHECK_OK(pw_format_decode(ctx, (pw_format)f, all + b * info->block_bytes, 1,
                                          y2 + b * info->block_size),
                         ctx);
            CHECK(memcmp(y1, y2, n * sizeof(float)) == 0, "%s: per-block decode differs",
                  info->name);
            free(x);
            free(all);
            free(parts);
            free(y1);
            free(y2);
        }
    }
    pw_context_destroy(ctx);
}

/* Decode needs no alignment: the same bytes at an odd address decode the same. */
static void test_unaligned(void) {
    pw_context *ctx = pw_test_context();
    pw_rng rng = {99};
    float x[3 * 256], y1[3 * 256], y2[3 * 256];
    for (int i = 0; i < 3 * 256; ++i) x[i] = (float)pw_rng_gauss(&rng);
    for (int f = 0; f < PW_FORMAT_COUNT; ++f) {
        const pw_format_info *info = pw_format_get((pw_format)f);
        const size_t blocks = blocks_of((pw_format)f, 3 * 256);
        const size_t bytes = blocks * (size_t)info->block_bytes;
        unsigned char *buf = malloc(bytes + 8);
        REQUIRE(buf != NULL, "oom");
        CHECK_OK(pw_format_quantize(ctx, (pw_format)f, x, blocks, buf), ctx);
        CHECK_OK(pw_format_decode(ctx, (pw_format)f, buf, blocks, y1), ctx);
        memmove(buf + 3, buf, bytes);
        CHECK_OK(pw_format_decode(ctx, (pw_format)f, buf + 3, blocks, y2), ctx);
        CHECK(memcmp(y1, y2, sizeof y1) == 0, "%s: unaligned decode differs", info->name);
        CHECK_OK(pw_format_quantize(ctx, (pw_format)f, x, blocks, buf + 5), ctx);
        CHECK_OK(pw_format_decode(ctx, (pw_format)f, buf + 5, blocks, y2), ctx);
        CHECK(memcmp(y1, y2, sizeof y1) == 0, "%s: unaligned quantize differs", info->name);
        free(buf);
    }
    pw_context_destroy(ctx);
}

/* Zero, constant, tiny, subnormal and large rows: decode stays finite, zero
 * stays exactly zero, and the error stays bounded. */
static void test_degenerate(void) {
    pw_context *ctx = pw_test_context();
    enum { N = 3 * 256 };
    static float x[N], y[N];
    for (int f = 0; f < PW_FORMAT_COUNT; ++f) {
        const pw_format_info *info = pw_format_get((pw_format)f);
        const int ternary = f == PW_FORMAT_TQ1_0 || f == PW_FORMAT_TQ2_0;
        /* value, relative error bound */
        const struct {
            const char *what;
            float scale;
            double bound;
        } cases[] = {
            {"zero", 0.0f, 0.0},
            {"tiny", 1e-30f, 1.0},     /* below fp16 scales: may decode to 0 */
            {"subnormal", 1e-41f, 1.0},
            {"large", 1000.0f, ternary ? 1.0 : 0.35},
        };
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
            pw_rng rng = {7 + c};
            for (int i = 0; i < N; ++i) x[i] = cases[c].scale * (float)pw_rng_gauss(&rng);
            if (f == PW_FORMAT_F16 && c == 3)
                for (int i = 0; i < N; ++i) x[i] = fmaxf(fminf(x[i], 60000.0f), -60000.0f);
            free(round_trip(ctx, (pw_format)f, x, N, y));
            int finite = 1;
            for (int i = 0; i < N; ++i) finite &= isfinite(y[i]) != 0;
            CHECK(finite, "%s %s: decode is not finite", info->name, cases[c].what);
            if (cases[c].scale == 0.0f) {
                int zeros = 1;
                for (int i = 0; i < N; ++i) zeros &= y[i] == 0.0f;
                CHECK(zeros, "%s: zeros do not decode to zeros", info->name);
            } else {
                const double e = rel_rms(x, y, N);
                CHECK(e <= cases[c].bound, "%s %s: rel error %.3g above %.3g", info->name,
                      cases[c].what, e, cases[c].bound);
            }
        }
        /* A constant row: formats with a min (or a scale per value) keep it
         * well; every format keeps it to within its worst-case step. */
        for (int i = 0; i < N; ++i) x[i] = 0.37f;
        free(round_trip(ctx, (pw_format)f, x, N, y));
        CHECK(rel_rms(x, y, N) < (ternary ? 1e-3 : 0.05), "%s constant: rel error %.3g",
              info->name, rel_rms(x, y, N));
    }
    pw_context_destroy(ctx);
}

/* ------------------------------------------------------------------------ */
/* Determinism                                                              */
/* ------------------------------------------------------------------------ */

static uint64_t fnv1a(const unsigned char *p, size_t n) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

/* 16 super-blocks of 256 values made with integer random numbers and exact
 * arithmetic only (no libm), so the input itself is identical everywhere:
 * approximately normal values at power-of-two scales, a block with a zero
 * run, one with an outlier, one on a 1/16 grid (rounding ties), one narrow
 * positive range (min handling) and one of large values. */
static void golden_input(float *x) {
    pw_rng rng = {0x5eed};
    for (int b = 0; b < 16; ++b) {
        const double scale = ldexp(1.0, b % 5 - 6);
        for (int i = 0; i < 256; ++i) {
            double s = 0.0;
            for (int k = 0; k < 4; ++k) s += (double)(pw_rng_next(&rng) >> 40) * 0x1p-24;
            x[256 * b + i] = (float)((s - 2.0) * 1.7320508075688772 * scale);
        }
    }
    for (int i = 0; i < 64; ++i) x[256 * 3 + i] = 0.0f;
    x[256 * 5 + 37] = 0.75f;
    for (int i = 0; i < 256; ++i) x[256 * 7 + i] = (float)((int)(pw_rng_next(&rng) % 33) - 16) / 16.0f;
    for (int i = 0; i < 256; ++i) x[256 * 9 + i] = 1.0f + (float)(pw_rng_next(&rng) % 1000) * 1e-5f;
    for (int i = 0; i < 256; ++i) x[256 * 11 + i] *= 4096.0f;
}

static void test_determinism(void) {
    /* FNV-1a of the quantized bytes of golden_input(), per format. Computed
     * once with this code (the F32 entry pins the input itself). The same
     * quantizers reproduce ggml's bytes on its fixtures (test_format_ggml.c).
     * A change here means the bytes packwise writes changed: that is a file
     * format change, not a refactoring. */
    static const uint64_t golden[PW_FORMAT_COUNT] = {
        [PW_FORMAT_F32] = 0xc6f6ec3bf824e6b6ull,
        [PW_FORMAT_F16] = 0x9ab3bdff4c68b5faull,
        [PW_FORMAT_BF16] = 0x27ba2f07ea53c6c1ull,
        [PW_FORMAT_Q4_0] = 0x24e45a710cf3b9f2ull,
        [PW_FORMAT_Q4_1] = 0x21c8079817cd2795ull,
        [PW_FORMAT_Q5_0] = 0xeb0430a667041b9dull,
        [PW_FORMAT_Q5_1] = 0x7750ae5783254fe9ull,
        [PW_FORMAT_Q8_0] = 0xbe26e4fd3244c804ull,
        [PW_FORMAT_Q8_1] = 0xcbdb9c5abc513666ull,
        [PW_FORMAT_Q2_K] = 0x9a998e9dbbc1276aull,
        [PW_FORMAT_Q3_K] = 0x904f4f5dc16df18cull,
        [PW_FORMAT_Q4_K] = 0xccb5b3a28591d118ull,
        [PW_FORMAT_Q5_K] = 0xb7ee1eb92f0deb65ull,
        [PW_FORMAT_Q6_K] = 0x3cfc946c65fbea9bull,
        [PW_FORMAT_Q8_K] = 0xa11403ed06bf624full,
        [PW_FORMAT_IQ4_NL] = 0x6f5f6a8a54549645ull,
        [PW_FORMAT_TQ1_0] = 0xf0682cafc4e76095ull,
        [PW_FORMAT_TQ2_0] = 0xb1028dca660dc968ull,
    };
    pw_context *ctx = pw_test_context();
    enum { N = 16 * 256 };
    static float x[N];
    golden_input(x);
    static unsigned char a[N * 4], b[N * 4];
    for (int f = 0; f < PW_FORMAT_COUNT; ++f) {
        const pw_format_info *info = pw_format_get((pw_format)f);
        const size_t blocks = blocks_of((pw_format)f, N);
        const size_t bytes = blocks * (size_t)info->block_bytes;
        memset(a, 0x11, sizeof a);
        memset(b, 0x22, sizeof b);
        CHECK_OK(pw_format_quantize(ctx, (pw_format)f, x, blocks, a), ctx);
        CHECK_OK(pw_format_quantize(ctx, (pw_format)f, x, blocks, b), ctx);
        CHECK(memcmp(a, b, bytes) == 0, "%s: two quantizations differ", info->name);
        const uint64_t h = fnv1a(a, bytes);
        printf("  golden %-7s 0x%016llxull\n", info->name, (unsigned long long)h);
        CHECK(h == golden[f], "%s: quantized bytes hash to 0x%016llx, pinned 0x%016llx",
              info->name, (unsigned long long)h, (unsigned long long)golden[f]);
    }
    pw_context_destroy(ctx);
}

int main(void) {
    test_qerr();
    test_block_independence();
    test_unaligned();
    test_degenerate();
    test_determinism();
    return pw_test_finish();
}
