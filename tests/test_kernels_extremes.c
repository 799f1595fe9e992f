/*
 * Every kernel in the list against the oracle on weights and activations at
 * the extremes of their ranges, where an int8 kernel can saturate or wrap:
 * vpmaddubsw sums two u8 x s8 products into a SATURATING int16, a sign trick
 * breaks on -128, an int16 running sum can overflow. Random weights (as in
 * test_kernels.c) almost never reach these corners, so here the block bytes
 * are written directly:
 *
 *   Q8_0       q = -128 and 127       Q4_0  q = -8 and 7       Q5_0  q = -16 and 15
 *   Q4_1/Q5_1  codes 0 and 15/31      IQ4_NL -127 and 113      Q2_K  q = 0 and 3
 *   Q3_K       q = -4 and 3, scales -32 and 31
 *   Q4_K/Q5_K  codes 0 and 15/31, scales and mins 63
 *   Q6_K       q = -32 and 31, scales -128 and 127
 *   TQ1_0/TQ2_0 trits -1 and +1 (TQ2_0 also its unused code, +2)
 *   F16 +-65504 and subnormals, BF16 and F32 +-1e30, rows not a multiple of 8 long
 *
 * in four code patterns (all lowest, all highest, adjacent pairs equal and
 * alternating, random among the extremes) against activations that quantize
 * to exactly +-127 (x = +-1 in a block: d = 1/127) in three sign patterns.
 * The packer's splitter is checked to really produce the intended extreme
 * codes, so the test cannot silently drift away from the corners.
 *
 * Oracle and tolerance as in test_kernels.c: the weight decoded by the
 * format's decoder, the activations as the kernel sees them, a double dot;
 * |y - ref| <= 1e-5 * sum |w x| + 1e-30. Formats with a minimum are built
 * with d * q and the minimum term of the same sign (dmin < 0 for the
 * K-quants), so that sum |w x| also bounds the two partial sums a kernel
 * forms (d * sum(q x) and m * sum(x)).
 */
// pw-test: tunes
#include "kernel_oracle.h"
#include "pw_test.h"

#include "format/blocks.h"
#include "format/format_internal.h"
#include "kernel/i8g.h"
#include "kernel/kernel.h"

enum { PAT_LOW, PAT_HIGH, PAT_PAIRS, PAT_RANDOM, PAT_COUNT };

static int g_cases, g_kernels;

static void put16(uint8_t *p, uint16_t v) { memcpy(p, &v, 2); }

/* Level of element e under pattern pat: 0 = lowest code, 1 = highest. */
static int level(int pat, int e, pw_rng *r) {
    switch (pat) {
    case PAT_LOW: return 0;
    case PAT_HIGH: return 1;
    case PAT_PAIRS: return (e / 2) % 2; /* vpmaddubsw pairs (e, e+1) get equal codes */
    default: return (int)(pw_rng_next(r) & 1);
    }
}

/* Set nibble code c (0..15) of element e of a 32-element block's 16 bytes. */
static void put_nib32(uint8_t *qs, int e, int c) {
    uint8_t *b = &qs[e % 16];
    *b = e < 16 ? (uint8_t)((*b & 0xF0) | c) : (uint8_t)((*b & 0x0F) | c << 4);
}

/* Set the 2-bit field of element e in the Q2_K/Q3_K/TQ2_0 layout. */
static void put2(uint8_t *qs, int e, int c) {
    uint8_t *b = &qs[32 * (e / 128) + e % 32];
    const int sh = 2 * ((e % 128) / 32);
    *b = (uint8_t)((*b & ~(3 << sh)) | c << sh);
}

/* Set nibble code c of element e in the Q4_K/Q5_K layout. */
static void put_nib_k(uint8_t *qs, int e, int c) {
    uint8_t *b = &qs[32 * (e / 64) + e % 32];
    *b = (e % 64) < 32 ? (uint8_t)((*b & 0xF0) | c) : (uint8_t)((*b & 0x0F) | c << 4);
}

/* One TQ1_0 byte holding trits t[0..4] (t[0] most significant), as the format stores them. */
static uint8_t tq1_byte(const int t[5]) {
    const int n = t[0] * 81 + t[1] * 27 + t[2] * 9 + t[3] * 3 + t[4];
    return (uint8_t)((n * 256 + 242) / 243);
}

/* One block of format f with codes at the extremes of pattern pat. want[e] receives
 * the int8 value the i8g splitter must produce (NULL for float formats). */
static void make_block(pw_format f, int pat, pw_rng *r, uint8_t *b, int8_t *want) {
    const pw_format_info *fi = pw_format_get(f);
    memset(b, 0, (size_t)fi->block_bytes);
    const uint16_t half_pos = 0x3800, quarter_pos = 0x3400,
                   quarter_neg = 0xB400; /* 0.5, 0.25, -0.25 */
    switch (f) {
    case PW_FORMAT_Q4_0:
    case PW_FORMAT_IQ4_NL:
        put16(b, half_pos);
        for (int e = 0; e < 32; ++e) {
            const int c = level(pat, e, r) ? 15 : 0;
            put_nib32(b + 2, e, c);
            want[e] = (int8_t)(f == PW_FORMAT_Q4_0 ? c - 8 : pw__iq4nl_values[c]);
        }
        break;
    case PW_FORMAT_Q4_1:
        put16(b, quarter_pos);
        put16(b + 2, half_pos); /* m > 0 with d > 0: no cancellation */
        for (int e = 0; e < 32; ++e) {
            const int c = level(pat, e, r) ? 15 : 0;
            put_nib32(b + 4, e, c);
            want[e] = (int8_t)c;
        }
        break;
    case PW_FORMAT_Q5_0:
    case PW_FORMAT_Q5_1: {
        const int with_min = f == PW_FORMAT_Q5_1;
        put16(b, with_min ? quarter_pos : half_pos);
        if (with_min) put16(b + 2, half_pos);
        uint32_t qh = 0;
        for (int e = 0; e < 32; ++e) {
            const int c = level(pat, e, r) ? 31 : 0;
            put_nib32(b + (with_min ? 8 : 6), e, c & 15);
            qh |= (uint32_t)(c >> 4) << e;
            want[e] = (int8_t)(with_min ? c : c - 16);
        }
        memcpy(b + (with_min ? 4 : 2), &qh, 4);
        break;
    }
    case PW_FORMAT_Q8_0:
        put16(b, quarter_neg);
        for (int e = 0; e < 32; ++e) {
            want[e] = (int8_t)(level(pat, e, r) ? 127 : -128);
            b[2 + e] = (uint8_t)want[e];
        }
        break;
    case PW_FORMAT_Q2_K: {
        pw__block_q2_K *k = (pw__block_q2_K *)(void *)b;
        for (int j = 0; j < 16; ++j)
            k->scales[j] = (uint8_t)(j % 2 ? 0xFF : 0x0F); /* scale 15, min 15 or 0 */
        k->d = half_pos;
        k->dmin = quarter_neg; /* -dmin * min > 0: no cancellation */
        for (int e = 0; e < 256; ++e) {
            const int c = level(pat, e, r) ? 3 : 0;
            put2(k->qs, e, c);
            want[e] = (int8_t)c;
        }
        break;
    }
    case PW_FORMAT_Q3_K: {
        pw__block_q3_K *k = (pw__block_q3_K *)(void *)b;
        /* sixteen 6-bit scales alternating 0 (-> -32) and 63 (-> +31) */
        for (int j = 0; j < 16; ++j) {
            const int s = j % 2 ? 63 : 0;
            if (j < 8)
                k->scales[j] = (uint8_t)((k->scales[j] & 0xF0) | (s & 15));
            else
                k->scales[j - 8] = (uint8_t)((k->scales[j - 8] & 0x0F) | (s & 15) << 4);
            k->scales[8 + j % 4] = (uint8_t)(k->scales[8 + j % 4] | (s >> 4) << (2 * (j / 4)));
        }
        k->d = half_pos;
        for (int e = 0; e < 256; ++e) {
            const int hi =
                level(pat, e, r); /* q = 3: low 3 with the bit set; q = -4: low 0, bit clear */
            put2(k->qs, e, hi ? 3 : 0);
            if (hi) k->hmask[e % 32] = (uint8_t)(k->hmask[e % 32] | 1 << (e / 32));
            want[e] = (int8_t)(hi ? 3 : -4);
        }
        break;
    }
    case PW_FORMAT_Q4_K:
    case PW_FORMAT_Q5_K: {
        const int five = f == PW_FORMAT_Q5_K;
        put16(b, half_pos);
        put16(b + 2, quarter_neg);
        memset(b + 4, 0xFF, 12); /* every 6-bit scale and min = 63 */
        uint8_t *qs = b + (five ? 48 : 16);
        for (int e = 0; e < 256; ++e) {
            const int c = level(pat, e, r) ? (five ? 31 : 15) : 0;
            put_nib_k(qs, e, c & 15);
            if (five && c > 15) b[16 + e % 32] = (uint8_t)(b[16 + e % 32] | 1 << (e / 32));
            want[e] = (int8_t)c;
        }
        break;
    }
    case PW_FORMAT_Q6_K: {
        pw__block_q6_K *k = (pw__block_q6_K *)(void *)b;
        for (int j = 0; j < 16; ++j) k->scales[j] = (int8_t)(j % 2 ? 127 : -128);
        k->d = half_pos;
        for (int e = 0; e < 256; ++e) {
            const int c = level(pat, e, r) ? 63 : 0; /* q = c - 32: +31 or -32 */
            const int h = e / 128, l = e % 32, g = (e % 128) / 32;
            uint8_t *lb = &k->ql[64 * h + 32 * (g % 2) + l];
            *lb = g < 2 ? (uint8_t)((*lb & 0xF0) | (c & 15))
                        : (uint8_t)((*lb & 0x0F) | (c & 15) << 4);
            k->qh[32 * h + l] = (uint8_t)(k->qh[32 * h + l] | (c >> 4) << (2 * g));
            want[e] = (int8_t)(c - 32);
        }
        break;
    }
    case PW_FORMAT_TQ2_0: {
        pw__block_tq2_0 *k = (pw__block_tq2_0 *)(void *)b;
        k->d = quarter_neg;
        for (int e = 0; e < 256; ++e) {
            /* high: the unused code 3 (+2) in the random pattern, else 2 (+1); low: 0 (-1) */
            const int c = level(pat, e, r) ? (pat == PAT_RANDOM ? 3 : 2) : 0;
            put2(k->qs, e, c);
            want[e] = (int8_t)(c - 1);
        }
        break;
    }
    case PW_FORMAT_TQ1_0: {
        pw__block_tq1_0 *k = (pw__block_tq1_0 *)(void *)b;
        k->d = half_pos;
        int t[256];
        for (int e = 0; e < 256; ++e) {
            t[e] = level(pat, e, r) ? 2 : 0;
            want[e] = (int8_t)(t[e] - 1);
        }
        for (int m = 0; m < 32; ++m) {
            const int v[5] = {t[m], t[32 + m], t[64 + m], t[96 + m], t[128 + m]};
            k->qs[m] = tq1_byte(v);
        }
        for (int m = 0; m < 16; ++m) {
            const int v[5] = {t[160 + m], t[176 + m], t[192 + m], t[208 + m], t[224 + m]};
            k->qs[32 + m] = tq1_byte(v);
        }
        for (int j = 0; j < 4; ++j) {
            const int v[5] = {t[240 + j], t[244 + j], t[248 + j], t[252 + j], 0};
            k->qh[j] = tq1_byte(v);
        }
        break;
    }
    case PW_FORMAT_F16: {
        const uint16_t v = pat == PAT_LOW         ? 0xFBFF
                           : pat == PAT_HIGH      ? 0x7BFF
                           : (pw_rng_next(r) & 1) ? 0x0001
                                                  : 0x8201;
        put16(b, v); /* -65504, +65504, or subnormals */
        break;
    }
    case PW_FORMAT_BF16:
        put16(b, pw__f32_to_bf16(level(pat, (int)(pw_rng_next(r) % 4), r) ? 1e30f : -1e30f));
        break;
    case PW_FORMAT_F32: {
        const float v = level(pat, (int)(pw_rng_next(r) % 4), r) ? 1e30f : -3e29f;
        memcpy(b, &v, 4);
        break;
    }
    default: break;
    }
}

/* X rows of +-1 per element: every activation block quantizes to exactly +-127. */
static void make_x(int xpat, int64_t n, int64_t in, pw_rng *r, float *x) {
    for (int64_t i = 0; i < n * in; ++i) {
        switch (xpat) {
        case 0: x[i] = 1.0f; break;
        case 1: x[i] = -1.0f; break;
        default: x[i] = (pw_rng_next(r) & 1) ? 1.0f : -1.0f; break;
        }
    }
}

static void check_case(pw_context *ctx, const pw__kernel *k, const pw_view *w, int64_t n, int xpat,
                       pw_rng *r, const char *what) {
    const int64_t in = w->shape[1];
    float *x = malloc(sizeof(float) * (size_t)(n * in));
    make_x(xpat, n, in, r, x);
    pw_test_kernel_vs_oracle(ctx, k, w, x, n, what);
    ++g_cases;
    free(x);
}

static void check_kernel(pw_context *ctx, const pw__kernel *k) {
    const pw_format f = k->info.format;
    const pw_format_info *fi = pw_format_get(f);
    const int64_t nr = k->info.tile_rows > 0 ? k->info.tile_rows : 1;
    const int64_t mr = k->info.tile_batch > 0 ? k->info.tile_batch : 1;
    const int64_t abs_ = pw__act_block_size(k->info.activation);
    const int64_t unit = fi->block_size == 1 ? 1 : (abs_ > fi->block_size ? abs_ : fi->block_size);
    /* float formats: lengths around the 8- and 16-element steps; others: 1 and 3 blocks */
    const int64_t ins_float[] = {1, 7, 13, 35};
    const int64_t ins_block[] = {1, 3};
    const int nins = fi->block_size == 1 ? 4 : 2;
    const int64_t outs[] = {1, nr + 1, 2 * nr + 3};
    const int64_t ns[] = {1, mr, mr + 1};
    const int split = pw__i8g_group(f, NULL, NULL) > 0;
    pw_rng r = {77};
    for (int a = 0; a < nins; ++a) {
        const int64_t in = fi->block_size == 1 ? ins_float[a] : ins_block[a] * unit;
        for (int pat = 0; pat < PAT_COUNT; ++pat) {
            for (size_t oi = 0; oi < 3; ++oi) {
                const int64_t out = outs[oi];
                const int64_t blocks = out * (in / fi->block_size);
                const uint64_t nb = (uint64_t)blocks * (uint64_t)fi->block_bytes;
                uint8_t *bytes = malloc((size_t)nb);
                int8_t want[256], got[256];
                float s[16], m[16];
                for (int64_t bi = 0; bi < blocks; ++bi) {
                    uint8_t *blk = bytes + bi * fi->block_bytes;
                    make_block(f, pat, &r, blk, want);
                    if (split) {
                        pw__i8g_split(f, blk, got, s, m);
                        REQUIRE(memcmp(want, got, (size_t)fi->block_size) == 0,
                                "%s pattern %d: the block does not hold the intended extreme codes",
                                fi->name, pat);
                    }
                }
                pw_view w;
                pw_test_view_for(ctx, k->info.layout, f, out, in, bytes, nb, &w);
                for (size_t ni = 0; ni < 3; ++ni) {
                    if (ni > 0 && ns[ni] == ns[ni - 1]) continue;
                    for (int xpat = 0; xpat < 3; ++xpat) {
                        char what[64];
                        snprintf(what, sizeof what, "pattern %d x%d", pat, xpat);
                        check_case(ctx, k, &w, ns[ni], xpat, &r, what);
                    }
                }
                free(bytes);
            }
        }
    }
    ++g_kernels;
}

int main(void) {
    pw_context *ctx = pw_test_context();
    const int skipped = pw_test_each_usable_kernel(ctx, check_kernel);
    printf("%d kernels checked at the extremes on %d cases, %d not usable at isa %s\n", g_kernels,
           g_cases, skipped, pw_isa_name(pw_context_isa(ctx)));
    pw_context_destroy(ctx);
    return pw_test_finish();
}
