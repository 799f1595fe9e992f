/*
 * AVX2 GEMM kernels over the i8g packed family (layout and packer in
 * kernel/i8g.h): every integer format with an i8g form, G = 32 with
 * PW_ACT_Q8_32 activations and G = 16 with PW_ACT_Q8_256.
 *
 * Micro-kernel: MR rows of X (6, or 4 for formats that need int16 and int32
 * partial sums at once) times one half of a 16-row tile, 8 outputs in one ymm
 * of int32 / f32 lanes; the two halves of a tile are two passes, which keeps
 * every accumulator in a register (measured: both halves at once, with the
 * f32 sums in L1, is 15% slower). Per k4 step s of a group:
 *
 *   weights  tile + group * rec + 64 s:  [r0 k0..3][r1 k0..3] .. [r15 k0..3]
 *            half h: the 32 bytes at + 32 h = rows 8h .. 8h+7 (s8)
 *   X row m  4 activation bytes k = 4s..4s+3 broadcast to all 8 lanes
 *
 * vpmaddubsw multiplies u8 by s8 into saturating int16 pairs, so each format
 * takes the cheaper of two exact forms:
 *   - u8 form (every format whose |q| <= 32): X as qu = qs + 128 in [1, 255]
 *     times q; a pair is at most 2*255*32 = 16320, and P steps are summed in
 *     int16 while P * 2*255*max|q| <= 32767 before one vpmaddwd widens them.
 *     The group's corr = -128 * sum(q) (stored by the packer) starts the
 *     int32 sum, so it ends at exactly sum(qs * q).
 *   - sign form (Q8_0, IQ4_NL, where |q| reaches 128): |q| as u8 times
 *     sign(qs, q) in [-127, 127], a pair at most 32512; widened every step.
 * Per group: int32 -> f32, one fma with scale * x.d, and for formats with a
 * minimum one fma with min * x.dsum (G = 32) or min * bsum * x.d (G = 16).
 *
 * Dispatch hands whole tiles (o0 a multiple of 16); a last partial tile and
 * the rows of X that do not fill the micro-kernel go through the same code
 * (a smaller MR instantiation, a staged store).
 *
 * Built twice (avx2_level.h): avx2, and avxvnni through i8g_avxvnni.c, where
 * every format takes the u8 form with one vpdpbusd per k4 step and row of X,
 * from corr, straight into int32: no int16 partial sums, no sign form, and so
 * MR = 6 for every format (the int16 partials were what kept some at 4).
 * Bound: a step adds at most 4 * 255 * 128 = 130560 per lane, a group of 32
 * at most 8 steps of it plus |corr| <= 128 * 32 * 128: far inside int32. The
 * packed bytes are the family's (i8g_pack.c), the same at both levels.
 *
 * Why the AVX2 sign form (Q8_0, IQ4_NL) stays near 0.3 of the avx2 int8 peak
 * (bench_peak_avx2.c: vpmaddubsw + vpaddw per 32 products) and cannot reach
 * 0.60: with |q| up to 128 on both sides a pair sum reaches 2 * 127 * 128 =
 * 32512, so int16 holds one step and every step needs its vpmaddwd. On Zen 5
 * vpmaddubsw, vpmaddwd, vmulps and vfmadd share two pipes, and vpsignb runs on
 * two pipes one of which is a multiplier's (measured, registers only: 6
 * vpmaddubsw + 6 vpmaddwd take twice the time of 6 vpmaddubsw, 6 vpmaddubsw +
 * 6 vpsignb 1.35 times). So a step costs two multiplier slots where the peak
 * costs one: at most 0.50 of the peak before anything else. Measured in one
 * process, one thread, Zen 5 EPYC VM, best of 60 short runs, 6 rows a step:
 *
 *   peak sequence (vpmaddubsw + vpaddw)                          392 GOP/s
 *   sign form in registers (vpsignb, vpmaddubsw, vpmaddwd, vpaddd) 185 (0.47)
 *   + the weight load, vpabsb and the 6 broadcast loads           176 (0.45)
 *   u8 form with the same loads (no vpsignb)                      220 (0.56)
 *
 * and the per-group f32 steps (vcvtdq2ps, vmulps, vfmadd per row every 8
 * steps: two more multiplier slots per 16) bring the sign form's ceiling to
 * about 0.40; the kernel measures 0.25-0.33 (92-133 GFLOP/s, [11008, 4096],
 * n = 128, --policy fastest; the machine is shared and noisy). Not better:
 * X + 128 as the u8 side (pairs up to 2 * 255 * 128 saturate), the weight
 * split into nibbles (two vpmaddubsw per 32 products: two multiplier slots
 * again, and more shuffles), 16-bit operands through vpmaddwd alone (16
 * products each: two multiplier slots per 32). Blocking K by 1024 so that a
 * block of X (128 rows, 384 KiB of pw__q8_32) stays in L2 while the tiles
 * pass made no difference beyond the noise (Q8_0 94-126 against 112-133
 * GFLOP/s unblocked, 3 runs each), so the loop order is unchanged. At avxvnni
 * these formats take the u8 form with vpdpbusd (above) and are not limited so.
 */
#if !defined(__AVX2__) || !defined(__FMA__)
#error "i8g_avx2.c must be compiled with -mavx2 -mfma"
#endif

#include "kernel/i8g.h"
#include "kernel/x86/avx2_level.h"

#include <immintrin.h>
#include <string.h>

/* Largest micro-kernel (rows of X); a format's own MR is 6 or 4 (see below). */
#define PW__I8G_AVX2_MR_MAX 6

#define PW__INLINE inline __attribute__((always_inline))

/* A register barrier: without it GCC reassociates the running sums into a tree
 * that keeps every product of a group live at once and spills them (measured:
 * the micro-kernel runs at half speed), and clang hoists the weight loads. */
static PW__INLINE __m256i keep(__m256i v) {
    __asm__("" : "+x"(v));
    return v;
}

static PW__INLINE __m256i ld(const uint8_t *p) {
    return _mm256_loadu_si256((const __m256i *)(const void *)p);
}
static PW__INLINE __m256 ldf(const uint8_t *p) {
    return _mm256_loadu_ps((const float *)(const void *)p);
}

/*
 * One half (h = 0: rows 0..7, h = 1: rows 8..15) of a tile times X rows
 * [i, i + MR): y[i + m, 8h + r] for r < rows - 8h. G, has_min, P (int16
 * steps per widening, 0 = sign form) and MR are constants at every call.
 * Working on 8 outputs at a time keeps the accumulators of MR rows (float,
 * int32 and, when P < G/4, int16) inside the 16 ymm registers.
 */
static PW__INLINE void micro(const pw__mm_call *c, const uint8_t *tile, int64_t i, float *y, int h,
                             int rows, const int G, const int has_min, const int P, const int MR) {
    const uint64_t rec = pw__i8g_group_bytes(G, has_min);
    const int64_t groups = c->pack_desc->in / G;
    /* u8: X as qu against q from corr (every format at avxvnni); else the sign form */
    const int u8 = PW__VNNI || P > 0;
    const int steps = G / 4, chunk = PW__VNNI ? steps : P > 0 ? P : 1;
    const __m256i ones = _mm256_set1_epi16(1);
    /* fixed-size arrays (not VLAs) so that, once MR is a known constant, they live in registers */
    const uint8_t *xrow[PW__I8G_AVX2_MR_MAX];
    __m256 acc[PW__I8G_AVX2_MR_MAX];
    for (int m = 0; m < MR; ++m) {
        xrow[m] = c->xq + (size_t)(i + m) * c->xq_row_bytes;
        acc[m] = _mm256_setzero_ps();
    }
    /* G = 16 with a minimum: bsum * x.d of the 16 groups of the current
     * super-block, as floats, converted once per super-block */
    float bx[PW__I8G_AVX2_MR_MAX][16];
    const uint8_t *gr = tile + 32 * h;
    for (int64_t j = 0; j < groups; ++j, gr += rec) {
        if (G == 16 && has_min && j % 16 == 0) {
            for (int m = 0; m < MR; ++m) {
                const pw__q8_256 *xb = (const pw__q8_256 *)(const void *)xrow[m] + j / 16;
                const __m256i b16 = _mm256_loadu_si256((const __m256i *)(const void *)xb->bsums);
                const __m256 d = _mm256_set1_ps(xb->d);
                const __m256 lo =
                    _mm256_cvtepi32_ps(_mm256_cvtepi16_epi32(_mm256_castsi256_si128(b16)));
                const __m256 hi =
                    _mm256_cvtepi32_ps(_mm256_cvtepi16_epi32(_mm256_extracti128_si256(b16, 1)));
                _mm256_storeu_ps(bx[m], _mm256_mul_ps(lo, d));
                _mm256_storeu_ps(bx[m] + 8, _mm256_mul_ps(hi, d));
            }
        }
        const uint8_t *meta = gr + (size_t)G * PW__I8G_NR; /* corr, scale, min of this half */
        const uint8_t *xs[PW__I8G_AVX2_MR_MAX];
        for (int m = 0; m < MR; ++m) {
            if (G == 32) {
                const pw__q8_32 *xb = (const pw__q8_32 *)(const void *)xrow[m] + j;
                xs[m] = u8 ? xb->qu : (const uint8_t *)xb->qs;
            } else {
                const pw__q8_256 *xb = (const pw__q8_256 *)(const void *)xrow[m] + j / 16;
                xs[m] = (u8 ? xb->qu : (const uint8_t *)xb->qs) + (j % 16) * 16;
            }
        }
        __m256i isum[PW__I8G_AVX2_MR_MAX];
        for (int m = 0; m < MR; ++m) isum[m] = u8 ? ld(meta) : _mm256_setzero_si256();
        for (int s0 = 0; s0 < steps; s0 += chunk) {
            __m256i part[PW__I8G_AVX2_MR_MAX];
#pragma GCC unroll 8
            for (int s = s0; s < s0 + chunk; ++s) {
                const __m256i w = ld(gr + 64 * s);
                const __m256i a = _mm256_abs_epi8(w);
                for (int m = 0; m < MR; ++m) {
                    const __m256i xb = _mm256_broadcastd_epi32(_mm_loadu_si32(xs[m] + 4 * s));
                    if (PW__VNNI) {
                        isum[m] = keep(pw__dpbusd(isum[m], xb, w));
                    } else if (P > 0) {
                        const __m256i p = _mm256_maddubs_epi16(xb, w);
                        part[m] = keep(s == s0 ? p : _mm256_add_epi16(part[m], p));
                    } else {
                        const __m256i p = _mm256_maddubs_epi16(a, _mm256_sign_epi8(xb, w));
                        isum[m] = keep(_mm256_add_epi32(isum[m], _mm256_madd_epi16(p, ones)));
                    }
                }
            }
            if (!PW__VNNI && P > 0)
                for (int m = 0; m < MR; ++m)
                    isum[m] = _mm256_add_epi32(isum[m], _mm256_madd_epi16(part[m], ones));
        }
        const __m256 scale = ldf(meta + 64);
        for (int m = 0; m < MR; ++m) {
            float xd, xm;
            if (G == 32) {
                const pw__q8_32 *xb = (const pw__q8_32 *)(const void *)xrow[m] + j;
                xd = xb->d;
                xm = xb->dsum;
            } else {
                const pw__q8_256 *xb = (const pw__q8_256 *)(const void *)xrow[m] + j / 16;
                xd = xb->d;
                xm = has_min ? bx[m][j % 16] : 0.0f;
            }
            acc[m] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum[m]),
                                     _mm256_mul_ps(scale, _mm256_set1_ps(xd)), acc[m]);
            if (has_min) acc[m] = _mm256_fmadd_ps(ldf(meta + 128), _mm256_set1_ps(xm), acc[m]);
        }
    }
    const int n_out = rows - 8 * h < 8 ? rows - 8 * h : 8;
    for (int m = 0; m < MR; ++m) {
        float *yr = y + (i + m) * c->ldy + 8 * h;
        if (n_out == 8) {
            _mm256_storeu_ps(yr, acc[m]);
        } else {
            float t[8];
            _mm256_storeu_ps(t, acc[m]);
            memcpy(yr, t, sizeof(float) * (size_t)n_out);
        }
    }
}

/* The rectangle: tiles of 16 outputs in two halves, rows of X in micro-kernels
 * of MR, the last fewer rows through smaller instantiations of the same code. */
static PW__INLINE void i8g_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1,
                               const int G, const int has_min, const int P, const int MR) {
    const pw__pack_desc *d = c->pack_desc;
    for (int64_t t0 = o0; t0 < o1; t0 += PW__I8G_NR) {
        const uint8_t *tile = c->packed + (uint64_t)(t0 / PW__I8G_NR) * d->tile_bytes;
        const int rows = o1 - t0 < PW__I8G_NR ? (int)(o1 - t0) : PW__I8G_NR;
        float *y = c->y + t0;
        for (int h = 0; h < 2 && 8 * h < rows; ++h) {
            int64_t i = i0;
            for (; i + MR <= i1; i += MR) micro(c, tile, i, y, h, rows, G, has_min, P, MR);
            switch (i1 - i) {
            case 5: micro(c, tile, i, y, h, rows, G, has_min, P, 5); break;
            case 4: micro(c, tile, i, y, h, rows, G, has_min, P, 4); break;
            case 3: micro(c, tile, i, y, h, rows, G, has_min, P, 3); break;
            case 2: micro(c, tile, i, y, h, rows, G, has_min, P, 2); break;
            case 1: micro(c, tile, i, y, h, rows, G, has_min, P, 1); break;
            default: break;
            }
        }
    }
}

/*
 * Per format: G, has_min and P. P is the number of k4 steps whose int16
 * pair sums fit (P * 2*255*max|q| <= 32767, P dividing G/4), 0 for the sign
 * form: Q4_0 |q| <= 8: 8; Q4_1/Q4_K q <= 15: 4; Q5_0 |q| <= 16: 4;
 * Q5_1/Q5_K q <= 31: 2; TQ1_0/TQ2_0 |q| <= 2: 8; Q2_K q <= 3: 4 (G = 16);
 * Q3_K |q| <= 4: 4; Q6_K |q| <= 32: 2; Q8_0 and IQ4_NL: sign form.
 */
#if PW__VNNI
#define PW__I8G_MR(avx2_mr) 6 /* one int32 sum per row: 6 f32 + 6 int32 + w + x in 16 ymm */
#else
#define PW__I8G_MR(avx2_mr) avx2_mr
#endif
#define Q4_0_MR PW__I8G_MR(6)
#define Q4_1_MR PW__I8G_MR(4)
#define Q5_0_MR PW__I8G_MR(4)
#define Q5_1_MR PW__I8G_MR(4)
#define Q8_0_MR PW__I8G_MR(6)
#define IQ4_NL_MR PW__I8G_MR(6)
#define Q4_K_MR PW__I8G_MR(4)
#define Q5_K_MR PW__I8G_MR(4)
#define TQ1_0_MR PW__I8G_MR(6)
#define TQ2_0_MR PW__I8G_MR(6)
#define Q2_K_MR PW__I8G_MR(6)
#define Q3_K_MR PW__I8G_MR(6)
#define Q6_K_MR PW__I8G_MR(4)

static void q4_0_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    i8g_run(c, o0, o1, i0, i1, 32, 0, 8, Q4_0_MR);
}
static void q4_1_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    i8g_run(c, o0, o1, i0, i1, 32, 1, 4, Q4_1_MR);
}
static void q5_0_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    i8g_run(c, o0, o1, i0, i1, 32, 0, 4, Q5_0_MR);
}
static void q5_1_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    i8g_run(c, o0, o1, i0, i1, 32, 1, 2, Q5_1_MR);
}
static void q8_0_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    i8g_run(c, o0, o1, i0, i1, 32, 0, 0, Q8_0_MR);
}
static void iq4_nl_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    i8g_run(c, o0, o1, i0, i1, 32, 0, 0, IQ4_NL_MR);
}
static void q4_k_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    i8g_run(c, o0, o1, i0, i1, 32, 1, 4, Q4_K_MR);
}
static void q5_k_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    i8g_run(c, o0, o1, i0, i1, 32, 1, 2, Q5_K_MR);
}
static void tq1_0_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    i8g_run(c, o0, o1, i0, i1, 32, 0, 8, TQ1_0_MR);
}
static void tq2_0_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    i8g_run(c, o0, o1, i0, i1, 32, 0, 8, TQ2_0_MR);
}
static void q2_k_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    i8g_run(c, o0, o1, i0, i1, 16, 1, 4, Q2_K_MR);
}
static void q3_k_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    i8g_run(c, o0, o1, i0, i1, 16, 0, 4, Q3_K_MR);
}
static void q6_k_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    i8g_run(c, o0, o1, i0, i1, 16, 0, 2, Q6_K_MR);
}

/* Name, key, isa, features and priority are the build's level (avx2_level.h). */
#define PW__I8G_AVX2(id, fmt, G, ACT, MR)                                                          \
    const pw__kernel PW__AVX2_SYM(pw__k_##id##_i8g##G) = {                                         \
        .info = {.name = #id "_i8g" #G "_" PW__AVX2_ISA,                                           \
                 .key = PW__KEY(#id, "packed(i8g" #G "x16k4)", ACT, PW__AVX2_ISA),                 \
                 .format = fmt,                                                                    \
                 .layout = PW_LAYOUT_PACKED,                                                       \
                 .family = "i8g" #G "x16k4",                                                       \
                 .tile_rows = PW__I8G_NR,                                                          \
                 .tile_batch = MR,                                                                 \
                 .activation = PW_ACT_##ACT,                                                       \
                 .features = PW__AVX2_FEATURES(PW_CPU_AVX2 | PW_CPU_FMA),                          \
                 .isa = PW__AVX2_ISA},                                                             \
        .run = id##_run,                                                                           \
        .pack_plan = pw__i8g_pack_plan_desc,                                                       \
        .pack = pw__i8g_pack_desc,                                                                 \
        .priority = PW__AVX2_PRIO + PW__PRIO_I8G_X86,                                              \
        .min_n = 2};

PW__I8G_AVX2(q4_0, PW_FORMAT_Q4_0, 32, Q8_32, Q4_0_MR)
PW__I8G_AVX2(q4_1, PW_FORMAT_Q4_1, 32, Q8_32, Q4_1_MR)
PW__I8G_AVX2(q5_0, PW_FORMAT_Q5_0, 32, Q8_32, Q5_0_MR)
PW__I8G_AVX2(q5_1, PW_FORMAT_Q5_1, 32, Q8_32, Q5_1_MR)
PW__I8G_AVX2(q8_0, PW_FORMAT_Q8_0, 32, Q8_32, Q8_0_MR)
PW__I8G_AVX2(iq4_nl, PW_FORMAT_IQ4_NL, 32, Q8_32, IQ4_NL_MR)
PW__I8G_AVX2(q4_k, PW_FORMAT_Q4_K, 32, Q8_32, Q4_K_MR)
PW__I8G_AVX2(q5_k, PW_FORMAT_Q5_K, 32, Q8_32, Q5_K_MR)
PW__I8G_AVX2(tq1_0, PW_FORMAT_TQ1_0, 32, Q8_32, TQ1_0_MR)
PW__I8G_AVX2(tq2_0, PW_FORMAT_TQ2_0, 32, Q8_32, TQ2_0_MR)
PW__I8G_AVX2(q2_k, PW_FORMAT_Q2_K, 16, Q8_256, Q2_K_MR)
PW__I8G_AVX2(q3_k, PW_FORMAT_Q3_K, 16, Q8_256, Q3_K_MR)
PW__I8G_AVX2(q6_k, PW_FORMAT_Q6_K, 16, Q8_256, Q6_K_MR)
