/*
 * Format traits, half/bfloat16 conversions, argument checks, and hand-built
 * blocks whose decoded values are known (nibble order, sign conventions,
 * scale packing). Quantizer quality and determinism are in
 * test_format_quant.c; bit-exactness against ggml in test_format_ggml.c.
 */
#include "pw_test.h"

#include "format/blocks.h"

#include <math.h>

/* ------------------------------------------------------------------------ */
/* Traits                                                                   */
/* ------------------------------------------------------------------------ */

static void test_traits(void) {
    /* name, GGUF id, block size, bytes: typed out independently of the table. */
    static const struct {
        pw_format f;
        const char *name;
        int32_t gguf;
        int32_t bs;
        size_t bytes;
    } expect[] = {
        {PW_FORMAT_F32, "F32", 0, 1, 4},
        {PW_FORMAT_F16, "F16", 1, 1, 2},
        {PW_FORMAT_BF16, "BF16", 30, 1, 2},
        {PW_FORMAT_Q4_0, "Q4_0", 2, 32, sizeof(pw__block_q4_0)},
        {PW_FORMAT_Q4_1, "Q4_1", 3, 32, sizeof(pw__block_q4_1)},
        {PW_FORMAT_Q5_0, "Q5_0", 6, 32, sizeof(pw__block_q5_0)},
        {PW_FORMAT_Q5_1, "Q5_1", 7, 32, sizeof(pw__block_q5_1)},
        {PW_FORMAT_Q8_0, "Q8_0", 8, 32, sizeof(pw__block_q8_0)},
        {PW_FORMAT_Q8_1, "Q8_1", 9, 32, sizeof(pw__block_q8_1)},
        {PW_FORMAT_Q2_K, "Q2_K", 10, 256, sizeof(pw__block_q2_K)},
        {PW_FORMAT_Q3_K, "Q3_K", 11, 256, sizeof(pw__block_q3_K)},
        {PW_FORMAT_Q4_K, "Q4_K", 12, 256, sizeof(pw__block_q4_K)},
        {PW_FORMAT_Q5_K, "Q5_K", 13, 256, sizeof(pw__block_q5_K)},
        {PW_FORMAT_Q6_K, "Q6_K", 14, 256, sizeof(pw__block_q6_K)},
        {PW_FORMAT_Q8_K, "Q8_K", 15, 256, sizeof(pw__block_q8_K)},
        {PW_FORMAT_IQ4_NL, "IQ4_NL", 20, 32, sizeof(pw__block_iq4_nl)},
        {PW_FORMAT_TQ1_0, "TQ1_0", 34, 256, sizeof(pw__block_tq1_0)},
        {PW_FORMAT_TQ2_0, "TQ2_0", 35, 256, sizeof(pw__block_tq2_0)},
    };
    /* GGUF sizes of the block formats (ggml's type_traits), in bytes. */
    static const int ggml_bytes[PW_FORMAT_COUNT] = {4,  2,  2,   18,  20,  22,  24, 34, 36,
                                                    84, 110, 144, 176, 210, 292, 18, 54, 66};
    CHECK(sizeof expect / sizeof expect[0] == PW_FORMAT_COUNT, "one row per format");
    for (size_t i = 0; i < sizeof expect / sizeof expect[0]; ++i) {
        const pw_format_info *info = pw_format_get(expect[i].f);
        REQUIRE(info != NULL, "pw_format_get(%d) is NULL", (int)expect[i].f);
        CHECK(info->format == expect[i].f, "%s: format field %d", expect[i].name, (int)info->format);
        CHECK(strcmp(info->name, expect[i].name) == 0, "name %s, expected %s", info->name,
              expect[i].name);
        CHECK(info->gguf_type == expect[i].gguf, "%s: gguf id %d, expected %d", info->name,
              info->gguf_type, expect[i].gguf);
        CHECK(info->block_size == expect[i].bs, "%s: block size %d", info->name, info->block_size);
        CHECK(info->block_bytes == (int32_t)expect[i].bytes, "%s: block bytes %d, struct %zu",
              info->name, info->block_bytes, expect[i].bytes);
        CHECK(info->block_bytes == ggml_bytes[i], "%s: %d bytes, ggml has %d", info->name,
              info->block_bytes, ggml_bytes[i]);
        CHECK(fabs(pw_format_bits_per_weight(expect[i].f) -
                   8.0 * ggml_bytes[i] / expect[i].bs) < 1e-12,
              "%s: bits per weight %g", info->name, pw_format_bits_per_weight(expect[i].f));

        /* Round trips through name (any case) and GGUF id. */
        pw_format f = PW_FORMAT_COUNT;
        CHECK(pw_format_from_name(expect[i].name, &f) == PW_OK && f == expect[i].f,
              "from_name(%s)", expect[i].name);
        char lower[16];
        size_t n = strlen(expect[i].name);
        for (size_t k = 0; k <= n; ++k)
            lower[k] = (char)(expect[i].name[k] >= 'A' && expect[i].name[k] <= 'Z'
                                  ? expect[i].name[k] + 32 : expect[i].name[k]);
        f = PW_FORMAT_COUNT;
        CHECK(pw_format_from_name(lower, &f) == PW_OK && f == expect[i].f, "from_name(%s)", lower);
        f = PW_FORMAT_COUNT;
        CHECK(pw_format_from_gguf_type((uint32_t)expect[i].gguf, &f) == PW_OK && f == expect[i].f,
              "from_gguf_type(%d)", expect[i].gguf);
    }
    CHECK(fabs(pw_format_bits_per_weight(PW_FORMAT_Q4_K) - 4.5) < 1e-12, "Q4_K is 4.5 bpw");
    CHECK(fabs(pw_format_bits_per_weight(PW_FORMAT_TQ1_0) - 1.6875) < 1e-12, "TQ1_0 1.6875 bpw");

    /* Mixed case and the ggml spellings. */
    pw_format f = PW_FORMAT_COUNT;
    CHECK(pw_format_from_name("q4_K", &f) == PW_OK && f == PW_FORMAT_Q4_K, "q4_K");
    CHECK(pw_format_from_name("Iq4_Nl", &f) == PW_OK && f == PW_FORMAT_IQ4_NL, "Iq4_Nl");
    CHECK(pw_format_from_name("bf16", &f) == PW_OK && f == PW_FORMAT_BF16, "bf16");

    /* Unknown values are refused and leave *out alone. */
    const char *bad_names[] = {"", "Q4", "Q4_K_M", "Q4_KX", "q4_k ", "IQ4_XS", "F64", "Q8_K2"};
    for (size_t i = 0; i < sizeof bad_names / sizeof bad_names[0]; ++i) {
        f = PW_FORMAT_COUNT;
        CHECK(pw_format_from_name(bad_names[i], &f) == PW_ERR_UNSUPPORTED && f == PW_FORMAT_COUNT,
              "from_name(\"%s\") accepted", bad_names[i]);
    }
    CHECK(pw_format_from_name(NULL, &f) == PW_ERR_INVALID_ARGUMENT, "NULL name");
    CHECK(pw_format_from_name("Q4_0", NULL) == PW_ERR_INVALID_ARGUMENT, "NULL out");
    const uint32_t bad_ids[] = {4, 5, 16, 17, 18, 19, 21, 29, 31, 32, 33, 36, 39, 1000, UINT32_MAX};
    for (size_t i = 0; i < sizeof bad_ids / sizeof bad_ids[0]; ++i) {
        f = PW_FORMAT_COUNT;
        CHECK(pw_format_from_gguf_type(bad_ids[i], &f) == PW_ERR_UNSUPPORTED && f == PW_FORMAT_COUNT,
              "from_gguf_type(%u) accepted", bad_ids[i]);
    }
    CHECK(pw_format_from_gguf_type(2, NULL) == PW_ERR_INVALID_ARGUMENT, "NULL out");
    CHECK(pw_format_get(PW_FORMAT_COUNT) == NULL, "get(COUNT)");
    CHECK(pw_format_get((pw_format)-1) == NULL, "get(-1)");
    CHECK(pw_format_bits_per_weight(PW_FORMAT_COUNT) == 0.0, "bpw of unknown");
}

/* ------------------------------------------------------------------------ */
/* Half and bfloat16                                                        */
/* ------------------------------------------------------------------------ */

/* Value of a half, computed in double from its fields. */
static double half_value(uint16_t h) {
    const int s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(1024 + m, e - 25);
    return s ? -v : v;
}

/* Float -> half reference: nearest representable half by double arithmetic,
 * ties to the even encoding. */
static uint16_t half_reference(float f) {
    const uint16_t sign = signbit(f) ? 0x8000 : 0;
    const double a = fabs((double)f);
    if (isnan(f)) return 0x7e00;
    if (a >= 65520.0) return sign | 0x7c00;
    uint16_t best = 0;
    for (uint16_t lo = 0, hi = 0x7c00; hi - lo > 1;) { /* largest half <= a */
        const uint16_t mid = (uint16_t)((lo + hi) / 2);
        if (half_value(mid) <= a) lo = mid;
        else hi = mid;
        best = lo;
    }
    if (half_value(best) <= a && half_value((uint16_t)(best + 1)) <= a) best = (uint16_t)(best + 1);
    const double down = a - half_value(best), up = half_value((uint16_t)(best + 1)) - a;
    if (up < down || (up == down && (best & 1))) best = (uint16_t)(best + 1);
    return sign | best;
}

static void test_f16(void) {
    /* Every half decodes to its exact value and converts back to itself. */
    int bad_value = 0, bad_back = 0;
    for (uint32_t h = 0; h < 65536; ++h) {
        const float f = pw_f16_to_f32((uint16_t)h);
        const double v = half_value((uint16_t)h);
        if (isnan(v)) {
            const uint16_t back = pw_f32_to_f16(f);
            bad_value += !isnan(f);
            bad_back += (back & 0x7c00) != 0x7c00 || (back & 0x3ff) == 0 || (back & 0x200) == 0;
            /* Quiet NaNs keep their payload and sign exactly. */
            if (h & 0x200) bad_back += back != h;
        } else {
            bad_value += (double)f != v || (signbit(f) != 0) != (h >> 15 != 0);
            bad_back += pw_f32_to_f16(f) != h;
        }
    }
    CHECK(bad_value == 0, "%d halves decode to a wrong value", bad_value);
    CHECK(bad_back == 0, "%d halves do not round-trip", bad_back);

    /* Ties: the midpoint of two neighbours rounds to the even one, and one
     * float ULP either side rounds to the nearer one. Covers subnormals,
     * the normal boundary and the largest finite half. */
    int bad_tie = 0;
    for (uint32_t h = 0; h < 0x7bff; ++h) {
        for (int s = 0; s < 2; ++s) {
            const uint16_t a = (uint16_t)(h | (s << 15)), b = (uint16_t)((h + 1) | (s << 15));
            const float mid = (float)((half_value(a) + half_value(b)) / 2); /* exact */
            const uint16_t even = (h & 1) ? b : a;
            bad_tie += pw_f32_to_f16(mid) != even;
            bad_tie += pw_f32_to_f16(nextafterf(mid, 0.0f)) != a;
            bad_tie += pw_f32_to_f16(nextafterf(mid, s ? -INFINITY : INFINITY)) != b;
        }
    }
    CHECK(bad_tie == 0, "%d tie cases rounded wrongly", bad_tie);

    /* Edges. */
    CHECK(pw_f32_to_f16(65504.0f) == 0x7bff, "65504");
    CHECK(pw_f32_to_f16(nextafterf(65520.0f, 0.0f)) == 0x7bff, "just below 65520");
    CHECK(pw_f32_to_f16(65520.0f) == 0x7c00, "65520 ties to inf");
    CHECK(pw_f32_to_f16(-1e20f) == 0xfc00, "-1e20");
    CHECK(pw_f32_to_f16(INFINITY) == 0x7c00 && pw_f32_to_f16(-INFINITY) == 0xfc00, "inf");
    CHECK(pw_f32_to_f16(0x1p-25f) == 0x0000, "2^-25 ties to 0");
    CHECK(pw_f32_to_f16(nextafterf(0x1p-25f, 1.0f)) == 0x0001, "above 2^-25");
    CHECK(pw_f32_to_f16(-0x1p-26f) == 0x8000, "tiny negative keeps sign");
    CHECK(pw_f32_to_f16(1e-45f) == 0 && pw_f32_to_f16(-0.0f) == 0x8000, "f32 subnormal, -0");
    const uint16_t qn = pw_f32_to_f16(NAN), sn = pw_f32_to_f16(pw__f32_from_bits(0x7f800001u));
    CHECK((qn & 0x7e00) == 0x7e00 && (sn & 0x7e00) == 0x7e00, "NaN stays a quiet NaN: %04x %04x",
          qn, sn);
    CHECK(isinf(pw_f16_to_f32(0x7c00)) && isnan(pw_f16_to_f32(0x7e00)), "inf/nan decode");

    /* Random floats against the double-arithmetic reference. */
    pw_rng rng = {12345};
    int bad_random = 0;
    for (int i = 0; i < 200000; ++i) {
        const uint32_t u = (uint32_t)pw_rng_next(&rng);
        /* Bias towards the half range: exponents 100..145 half of the time. */
        const uint32_t bits = (i & 1) ? u : (u & 0x807fffffu) | ((100u + (u >> 8) % 46u) << 23);
        const float f = pw__f32_from_bits(bits);
        if (isnan(f)) continue;
        bad_random += pw_f32_to_f16(f) != half_reference(f);
    }
    CHECK(bad_random == 0, "%d random floats convert differently from the reference", bad_random);
}

static void test_bf16(void) {
    int bad = 0;
    for (uint32_t h = 0; h < 65536; ++h) {
        const float f = pw_bf16_to_f32((uint16_t)h);
        bad += pw__f32_bits(f) != h << 16;
        const uint16_t back = pw_f32_to_bf16(f);
        if (isnan(f)) bad += back != (h | 0x40); /* made quiet, payload kept */
        else bad += back != h;
    }
    CHECK(bad == 0, "%d bfloat16 values do not round-trip", bad);

    /* Ties to even, either side, overflow, NaN. */
    CHECK(pw_f32_to_bf16(pw__f32_from_bits(0x3f808000u)) == 0x3f80, "tie down to even");
    CHECK(pw_f32_to_bf16(pw__f32_from_bits(0x3f818000u)) == 0x3f82, "tie up to even");
    CHECK(pw_f32_to_bf16(pw__f32_from_bits(0x3f808001u)) == 0x3f81, "above tie");
    CHECK(pw_f32_to_bf16(pw__f32_from_bits(0x3f817fffu)) == 0x3f81, "below tie");
    CHECK(pw_f32_to_bf16(pw__f32_from_bits(0xbf808000u)) == 0xbf80, "negative tie");
    CHECK(pw_f32_to_bf16(3.4028235e38f) == 0x7f80, "max float rounds to inf");
    CHECK(pw_f32_to_bf16(pw__f32_from_bits(0x00008000u)) == 0x0000, "subnormal tie to 0");
    CHECK(pw_f32_to_bf16(pw__f32_from_bits(0x00018000u)) == 0x0002, "subnormal tie up");
    CHECK(pw_f32_to_bf16(pw__f32_from_bits(0x7f800001u)) == 0x7fc0, "sNaN made quiet");
    CHECK(pw_f32_to_bf16(pw__f32_from_bits(0xffc12345u)) == 0xffc1, "qNaN kept");

    /* Random floats against a double-arithmetic reference. */
    pw_rng rng = {777};
    int bad_random = 0;
    for (int i = 0; i < 200000; ++i) {
        const float f = pw__f32_from_bits((uint32_t)pw_rng_next(&rng));
        if (isnan(f)) continue;
        const uint32_t lo = pw__f32_bits(f) & 0xffff0000u;
        const double vlo = pw__f32_from_bits(lo), a = f;
        const double vhi = (lo & 0x7fffffffu) == 0x7f7f0000u
                               ? copysign(0x1p128, f)
                               : (double)pw__f32_from_bits(lo + 0x10000u);
        const double dlo = fabs(a - vlo), dhi = fabs(vhi - a);
        uint16_t expect = (uint16_t)(lo >> 16);
        if (dhi < dlo || (dhi == dlo && (expect & 1))) expect = (uint16_t)(expect + 1);
        if (isinf(f)) expect = (uint16_t)(lo >> 16);
        bad_random += pw_f32_to_bf16(f) != expect;
    }
    CHECK(bad_random == 0, "%d random floats convert differently from the reference", bad_random);
}

/* ------------------------------------------------------------------------ */
/* Argument checks                                                          */
/* ------------------------------------------------------------------------ */

static void test_bad_input(void) {
    pw_context *ctx = pw_test_context();
    uint64_t bytes = 0;

    /* row_bytes */
    CHECK_OK(pw_format_row_bytes(ctx, PW_FORMAT_Q4_K, 768, &bytes), ctx);
    CHECK(bytes == 3 * 144, "768 Q4_K elements = %llu bytes", (unsigned long long)bytes);
    CHECK_OK(pw_format_row_bytes(ctx, PW_FORMAT_Q4_0, 0, &bytes), ctx);
    CHECK(bytes == 0, "zero elements");
    bytes = 7;
    CHECK_STATUS(pw_format_row_bytes(ctx, PW_FORMAT_Q4_K, 768 + 32, &bytes), PW_ERR_SHAPE, ctx);
    CHECK(bytes == 7, "output untouched on failure");
    CHECK(strstr(pw_context_message(ctx), "Q4_K") && strstr(pw_context_message(ctx), "800"),
          "message names the format and count: %s", pw_context_message(ctx));
    CHECK_STATUS(pw_format_row_bytes(ctx, PW_FORMAT_Q8_0, 33, &bytes), PW_ERR_SHAPE, ctx);
    CHECK_STATUS(pw_format_row_bytes(ctx, PW_FORMAT_Q8_0, -32, &bytes), PW_ERR_SHAPE, ctx);
    CHECK_STATUS(pw_format_row_bytes(ctx, PW_FORMAT_F32, INT64_MAX, &bytes), PW_ERR_OVERFLOW, ctx);
    CHECK_OK(pw_format_row_bytes(ctx, PW_FORMAT_F16, INT64_MAX, &bytes), ctx);
    CHECK(bytes == UINT64_MAX - 1, "largest F16 row is 2^64 - 2 bytes");
    CHECK_STATUS(pw_format_row_bytes(ctx, PW_FORMAT_F32, (int64_t)1 << 62, &bytes),
                 PW_ERR_OVERFLOW, ctx);
    CHECK_STATUS(pw_format_row_bytes(ctx, PW_FORMAT_COUNT, 32, &bytes), PW_ERR_INVALID_ARGUMENT, ctx);
    CHECK(strstr(pw_context_message(ctx), "18") != NULL, "names the bad value: %s",
          pw_context_message(ctx));
    CHECK_STATUS(pw_format_row_bytes(ctx, (pw_format)-3, 32, &bytes), PW_ERR_INVALID_ARGUMENT, ctx);
    CHECK_STATUS(pw_format_row_bytes(ctx, PW_FORMAT_Q4_0, 32, NULL), PW_ERR_INVALID_ARGUMENT, ctx);
    CHECK_STATUS(pw_format_row_bytes(NULL, PW_FORMAT_Q4_0, 31, &bytes), PW_ERR_SHAPE, ctx);

    /* decode/quantize: unknown format, NULL pointers, overflow, zero blocks. */
    float x[3 * 256];
    unsigned char q[3 * 292];
    for (int i = 0; i < 3 * 256; ++i) x[i] = (float)(i % 17) - 8.0f;
    CHECK_STATUS(pw_format_decode(ctx, PW_FORMAT_COUNT, q, 1, x), PW_ERR_INVALID_ARGUMENT, ctx);
    CHECK_STATUS(pw_format_quantize(ctx, (pw_format)99, x, 1, q), PW_ERR_INVALID_ARGUMENT, ctx);
    CHECK_STATUS(pw_format_decode(ctx, PW_FORMAT_Q4_0, NULL, 1, x), PW_ERR_INVALID_ARGUMENT, ctx);
    CHECK_STATUS(pw_format_decode(ctx, PW_FORMAT_Q4_0, q, 1, NULL), PW_ERR_INVALID_ARGUMENT, ctx);
    CHECK_STATUS(pw_format_quantize(ctx, PW_FORMAT_Q4_0, NULL, 1, q), PW_ERR_INVALID_ARGUMENT, ctx);
    CHECK_STATUS(pw_format_quantize(ctx, PW_FORMAT_Q4_0, x, 1, NULL), PW_ERR_INVALID_ARGUMENT, ctx);
    CHECK_OK(pw_format_decode(ctx, PW_FORMAT_Q4_0, NULL, 0, NULL), ctx);
    CHECK_OK(pw_format_quantize(ctx, PW_FORMAT_Q4_0, NULL, 0, NULL), ctx);
    CHECK_STATUS(pw_format_decode(ctx, PW_FORMAT_Q4_K, q, SIZE_MAX / 8, x), PW_ERR_OVERFLOW, ctx);
    CHECK_STATUS(pw_format_quantize(ctx, PW_FORMAT_F32, x, SIZE_MAX / 2, q), PW_ERR_OVERFLOW, ctx);

    /* Non-finite input: refused, message names the element, nothing written.
     * The bad value sits in the last block so a partial write would show. */
    const float bad_values[] = {NAN, -NAN, INFINITY, -INFINITY};
    for (int f = 0; f < PW_FORMAT_COUNT; ++f) {
        const pw_format_info *info = pw_format_get((pw_format)f);
        const size_t blocks = info->block_size == 1 ? 3 * 256 : 3 * 256 / (size_t)info->block_size;
        const size_t n = blocks * (size_t)info->block_size;
        for (int v = 0; v < 4; ++v) {
            const size_t at = n - 1 - (size_t)v * 5;
            const float keep = x[at];
            x[at] = bad_values[v];
            memset(q, 0xA5, sizeof q);
            CHECK_STATUS(pw_format_quantize(ctx, (pw_format)f, x, blocks, q),
                         PW_ERR_INVALID_ARGUMENT, ctx);
            char want[32];
            snprintf(want, sizeof want, "element %zu", at);
            CHECK(strstr(pw_context_message(ctx), want) != NULL, "%s: message '%s' lacks '%s'",
                  info->name, pw_context_message(ctx), want);
            int written = 0;
            for (size_t k = 0; k < sizeof q; ++k) written += q[k] != 0xA5;
            CHECK(written == 0, "%s: %d bytes written despite the refusal", info->name, written);
            x[at] = keep;
        }
    }
    pw_context_destroy(ctx);
}

/* ------------------------------------------------------------------------ */
/* Hand-built blocks                                                        */
/* ------------------------------------------------------------------------ */

/* Decode `blocks` blocks and compare with expected values exactly. */
static void expect_decode(pw_format f, const void *src, size_t blocks, const float *expect,
                          const char *what) {
    pw_context *ctx = pw_test_context();
    const pw_format_info *info = pw_format_get(f);
    const size_t n = blocks * (size_t)info->block_size;
    float *out = malloc(n * sizeof(float));
    REQUIRE(out != NULL, "oom");
    CHECK_OK(pw_format_decode(ctx, f, src, blocks, out), ctx);
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < n; ++i)
        if (out[i] != expect[i] && bad++ == 0) first = i;
    CHECK(bad == 0, "%s %s: %zu values wrong, first element %zu: got %g, expected %g", info->name,
          what, bad, first, bad ? out[first] : 0.0, bad ? expect[first] : 0.0);
    free(out);
    pw_context_destroy(ctx);
}

#define H_ONE 0x3c00   /* 1.0 */
#define H_HALF 0x3800  /* 0.5 */
#define H_TWO 0x4000   /* 2.0 */
#define H_QUART 0x3400 /* 0.25 */

static void test_blocks_32(void) {
    float e[3 * 32];

    /* Q4_0: byte j = element j (low nibble) and element j+16 (high). Three
     * blocks with different scales, so a block-order mistake shows. */
    pw__block_q4_0 q40[3];
    const uint16_t ds[3] = {H_ONE, H_HALF, H_TWO};
    const float dv[3] = {1.0f, 0.5f, 2.0f};
    for (int b = 0; b < 3; ++b) {
        q40[b].d = ds[b];
        for (int j = 0; j < 16; ++j) {
            q40[b].qs[j] = (uint8_t)(j | ((15 - j) << 4));
            e[32 * b + j] = (float)(j - 8) * dv[b];
            e[32 * b + j + 16] = (float)(7 - j) * dv[b];
        }
    }
    expect_decode(PW_FORMAT_Q4_0, q40, 3, e, "nibble order");

    /* Q4_1: value = nibble * d + m. */
    pw__block_q4_1 q41 = {.d = H_HALF, .m = 0xbc00 /* -1 */};
    for (int j = 0; j < 16; ++j) {
        q41.qs[j] = (uint8_t)(j | ((15 - j) << 4));
        e[j] = (float)j * 0.5f - 1.0f;
        e[j + 16] = (float)(15 - j) * 0.5f - 1.0f;
    }
    expect_decode(PW_FORMAT_Q4_1, &q41, 1, e, "min");

    /* Q5_0: qh bit e is bit 4 of element e; value = (q - 16) * d. */
    pw__block_q5_0 q50 = {.d = H_TWO, .qh = {0x01, 0x00, 0x80, 0x80}};
    for (int j = 0; j < 16; ++j) {
        q50.qs[j] = (uint8_t)(j | ((15 - j) << 4));
        e[j] = (float)(j + (j == 0 ? 16 : 0) - 16) * 2.0f;
        e[j + 16] = (float)(15 - j + (j == 7 || j == 15 ? 16 : 0) - 16) * 2.0f;
    }
    expect_decode(PW_FORMAT_Q5_0, &q50, 1, e, "high bits");

    /* Q5_1 with every high bit set. */
    pw__block_q5_1 q51 = {.d = H_QUART, .m = H_ONE, .qh = {0xff, 0xff, 0xff, 0xff}};
    for (int j = 0; j < 16; ++j) {
        q51.qs[j] = (uint8_t)(j | ((15 - j) << 4));
        e[j] = (float)(j + 16) * 0.25f + 1.0f;
        e[j + 16] = (float)(31 - j) * 0.25f + 1.0f;
    }
    expect_decode(PW_FORMAT_Q5_1, &q51, 1, e, "all high bits");

    /* Q8_0 and Q8_1: signed bytes in element order; Q8_1's s is not used. */
    pw__block_q8_0 q80 = {.d = H_HALF};
    pw__block_q8_1 q81 = {.d = H_HALF, .s = 0x5bb0 /* 246, arbitrary */};
    for (int j = 0; j < 32; ++j) {
        q80.qs[j] = q81.qs[j] = (int8_t)(j == 0 ? -128 : j == 1 ? 127 : j - 16);
        e[j] = (float)q80.qs[j] * 0.5f;
    }
    expect_decode(PW_FORMAT_Q8_0, &q80, 1, e, "signed bytes");
    expect_decode(PW_FORMAT_Q8_1, &q81, 1, e, "signed bytes, s ignored");

    /* IQ4_NL: the codebook, typed out here independently. */
    static const float book[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                   1,    13,   25,  38,  53,  69,  89,  113};
    pw__block_iq4_nl iq = {.d = H_HALF};
    for (int j = 0; j < 16; ++j) {
        iq.qs[j] = (uint8_t)(j | ((15 - j) << 4));
        e[j] = book[j] * 0.5f;
        e[j + 16] = book[15 - j] * 0.5f;
    }
    expect_decode(PW_FORMAT_IQ4_NL, &iq, 1, e, "codebook");
}

static void test_blocks_k(void) {
    float e[256];

    /* Q2_K: scale s in the low nibble, min 15-s in the high nibble; every
     * qs byte 0b11100100 gives level (e%128)/32. */
    pw__block_q2_K q2 = {.d = H_ONE, .dmin = H_HALF};
    for (int s = 0; s < 16; ++s) q2.scales[s] = (uint8_t)(s | ((15 - s) << 4));
    memset(q2.qs, 0xE4, sizeof q2.qs);
    for (int k = 0; k < 256; ++k)
        e[k] = (float)(k / 16) * (float)((k % 128) / 32) - 0.5f * (float)(15 - k / 16);
    expect_decode(PW_FORMAT_Q2_K, &q2, 1, e, "scales, mins, 2-bit order");

    /* Q3_K: 6-bit scales 2j+1 (stored with offset 32), hmask set on even
     * elements meaning "no -4". */
    pw__block_q3_K q3 = {.d = H_HALF};
    memset(q3.scales, 0, sizeof q3.scales);
    for (int j = 0; j < 16; ++j) {
        const int v = 2 * j + 1;
        q3.scales[j % 8] |= (uint8_t)((v & 0xF) << (j < 8 ? 0 : 4));
        q3.scales[8 + j % 4] |= (uint8_t)((v >> 4) << (2 * (j / 4)));
    }
    memset(q3.qs, 0xE4, sizeof q3.qs);
    memset(q3.hmask, 0, sizeof q3.hmask);
    for (int k = 0; k < 256; k += 2) q3.hmask[k % 32] |= (uint8_t)(1u << (k / 32));
    for (int k = 0; k < 256; ++k) {
        const int low = (k % 128) / 32, q = low - ((k % 2 == 0) ? 0 : 4);
        e[k] = 0.5f * (float)(2 * (k / 16) + 1 - 32) * (float)q;
    }
    expect_decode(PW_FORMAT_Q3_K, &q3, 1, e, "signed scales, inverted hmask");

    /* Q4_K and Q5_K: 6-bit scales and mins, sub-blocks 4..7 split across bytes. */
    uint8_t sc[8], mn[8], packed[12];
    for (int j = 0; j < 8; ++j) {
        sc[j] = (uint8_t)(10 + 7 * j); /* up to 59: uses the top bits */
        mn[j] = (uint8_t)(63 - 5 * j);
    }
    for (int j = 0; j < 4; ++j) {
        packed[j] = (uint8_t)(sc[j] | ((sc[j + 4] >> 4) << 6));
        packed[j + 4] = (uint8_t)(mn[j] | ((mn[j + 4] >> 4) << 6));
        packed[j + 8] = (uint8_t)((sc[j + 4] & 0xF) | ((mn[j + 4] & 0xF) << 4));
    }
    pw__block_q4_K q4 = {.d = H_ONE, .dmin = H_QUART};
    memcpy(q4.scales, packed, 12);
    for (int k = 0; k < 128; ++k) q4.qs[k] = (uint8_t)(k * 7);
    for (int k = 0; k < 256; ++k) {
        const int c = k / 64, l = k % 32, hi = (k % 64) >= 32;
        const int q = (q4.qs[32 * c + l] >> (hi ? 4 : 0)) & 0xF;
        e[k] = (float)sc[k / 32] * (float)q - 0.25f * (float)mn[k / 32];
    }
    expect_decode(PW_FORMAT_Q4_K, &q4, 1, e, "packed scales, nibble chunks");

    pw__block_q5_K q5 = {.d = H_ONE, .dmin = H_QUART};
    memcpy(q5.scales, packed, 12);
    memcpy(q5.qs, q4.qs, sizeof q5.qs);
    for (int l = 0; l < 32; ++l) q5.qh[l] = (uint8_t)(l * 37 + 11);
    for (int k = 0; k < 256; ++k) {
        const int c = k / 64, l = k % 32, hi = (k % 64) >= 32;
        const int q = ((q5.qs[32 * c + l] >> (hi ? 4 : 0)) & 0xF) + 16 * ((q5.qh[l] >> (k / 32)) & 1);
        e[k] = (float)sc[k / 32] * (float)q - 0.25f * (float)mn[k / 32];
    }
    expect_decode(PW_FORMAT_Q5_K, &q5, 1, e, "fifth bit");

    /* Q6_K: signed scales, quants with offset 32. */
    pw__block_q6_K q6 = {.d = H_HALF};
    for (int s = 0; s < 16; ++s) q6.scales[s] = (int8_t)(9 * s - 70);
    for (int k = 0; k < 128; ++k) q6.ql[k] = (uint8_t)(k * 13 + 5);
    for (int k = 0; k < 64; ++k) q6.qh[k] = (uint8_t)(k * 29 + 3);
    for (int k = 0; k < 256; ++k) {
        const int h = k / 128, l = k % 32, g = (k % 128) / 32;
        const int low = (q6.ql[64 * h + 32 * (g % 2) + l] >> (4 * (g / 2))) & 0xF;
        const int high = (q6.qh[32 * h + l] >> (2 * g)) & 3;
        e[k] = 0.5f * (float)q6.scales[k / 16] * (float)((low | (high << 4)) - 32);
    }
    expect_decode(PW_FORMAT_Q6_K, &q6, 1, e, "ql/qh interleave");

    /* Q8_K: float d, int8 quants; bsums do not enter the decode. */
    pw__block_q8_K q8 = {.d = 0.25f};
    for (int k = 0; k < 256; ++k) {
        q8.qs[k] = (int8_t)(k - 128);
        e[k] = 0.25f * (float)(k - 128);
    }
    for (int j = 0; j < 16; ++j) q8.bsums[j] = (int16_t)(1000 * j);
    expect_decode(PW_FORMAT_Q8_K, &q8, 1, e, "float scale");
}

/* Encode trits (most significant first) as a TQ1_0 byte: ceil(v*256/243). */
static uint8_t tq1_byte(const int *t, int n) {
    int v = 0;
    for (int k = 0; k < 5; ++k) v = 3 * v + (k < n ? t[k] : 0);
    return (uint8_t)((v * 256 + 242) / 243);
}

static void test_blocks_ternary(void) {
    float e[256];
    int trit[256];
    for (int k = 0; k < 256; ++k) trit[k] = (k * 7 + k / 5) % 3;

    pw__block_tq1_0 t1 = {.d = H_HALF};
    for (int m = 0; m < 32; ++m) {
        int t[5];
        for (int k = 0; k < 5; ++k) t[k] = trit[32 * k + m];
        t1.qs[m] = tq1_byte(t, 5);
    }
    for (int m = 0; m < 16; ++m) {
        int t[5];
        for (int k = 0; k < 5; ++k) t[k] = trit[160 + 16 * k + m];
        t1.qs[32 + m] = tq1_byte(t, 5);
    }
    for (int j = 0; j < 4; ++j) {
        int t[4];
        for (int k = 0; k < 4; ++k) t[k] = trit[240 + 4 * k + j];
        t1.qh[j] = tq1_byte(t, 4);
    }
    for (int k = 0; k < 256; ++k) e[k] = (float)(trit[k] - 1) * 0.5f;
    expect_decode(PW_FORMAT_TQ1_0, &t1, 1, e, "base-3 packing");
    /* Known bytes: five "zero" trits (1,1,1,1,1) = 121 -> ceil(121*256/243) = 128. */
    CHECK(tq1_byte((const int[]){1, 1, 1, 1, 1}, 5) == 128, "tq1 byte of zeros");

    pw__block_tq2_0 t2 = {.d = H_TWO};
    memset(t2.qs, 0, sizeof t2.qs);
    for (int k = 0; k < 256; ++k)
        t2.qs[32 * (k / 128) + k % 32] |= (uint8_t)(trit[k] << (2 * ((k % 128) / 32)));
    for (int k = 0; k < 256; ++k) e[k] = (float)(trit[k] - 1) * 2.0f;
    expect_decode(PW_FORMAT_TQ2_0, &t2, 1, e, "2-bit packing");
}

int main(void) {
    test_traits();
    test_f16();
    test_bf16();
    test_bad_input();
    test_blocks_32();
    test_blocks_k();
    test_blocks_ternary();
    return pw_test_finish();
}
