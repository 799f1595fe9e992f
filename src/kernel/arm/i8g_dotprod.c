#if !defined(__aarch64__) || !defined(__ARM_FEATURE_DOTPROD)
#error "i8g_dotprod.c needs Arm64 dotprod (cmake gives *_dotprod.c -march=armv8.2-a+dotprod)"
#endif
/*
 * NEON dotprod GEMM over the i8g packed family (layout in kernel/i8g.h):
 * Y[i, o] for a rectangle [o0, o1) x [i0, i1), s8 weights x s8 activations
 * (the corr field is for x86's u8 x s8 VNNI and is not read).
 *
 * One packed step is 16 rows x 4 k = 64 bytes, i.e. four int8x16 vectors of
 * 4 rows x 4 k: exactly the operand of sdot by element (vdotq_laneq_s32),
 * which dots each row's 4 bytes with one 4-byte lane of the activation.
 * One 16-byte activation load therefore serves 4 steps (lanes 0..3):
 *
 *   group record (G = 32: 8 steps; G = 16: 4)    activation of one X row
 *   step s: +------ 64 B ------+                 q8_32: qs at 32 (32 B / group)
 *           | r0..3 | r4..7 | r8..11 | r12..15 | q8_256: qs at 64 + 16 * (j % 16)
 *           +---------------------------------+  vector q = k 16q .. 16q+15,
 *   corr int32[16] | scale f32[16] | (min f32[16])  lane s % 4 = k 4s .. 4s+3
 *
 *   acc[r0..3] += sdot(w[step s][r0..3], x[q = s / 4], lane s % 4)
 *
 * Micro-tile: half a tile (8 rows: two vectors per step) by up to
 * PW__DP_MR rows of X: 8 int32 + 8 f32 accumulators, 4 activation vectors
 * and 2 weight vectors live, within the 32 NEON registers; each weight load
 * feeds PW__DP_MR sdot. Per group, f32: acc += cvt(idot) * (scale * d_x),
 * plus min * (dsum_x, or d_x * bsum_x for G = 16). Rows of X past a whole
 * micro-tile take the same code instantiated for 3, 2 and 1 rows; the last
 * tile's rows past `out` are zero in the pack and only stores are cut
 * (dotprod_util.h).
 *
 * Each group's int32 chains start by loads (pw__arm_chain_zeros), and the f32 sums
 * are stored once, after the last group, by an unrolled loop: by llvm-mca's Neoverse
 * V2 model the loop is bound by the four vector pipes, and MOVI, register copies and
 * the data of q stores take their slots (as a loop over the rows of X GCC kept the
 * sums in memory too, stored at every group). Neoverse V2, cycles a group: micro_g32
 * 30.78 -> 26.79, micro_g32_min 30.28 -> 27.54, micro_g16 20.29 -> 17.29,
 * micro_g16_min 23.29 -> 19.54; Apple M1's model (Cyclone's three vector pipes)
 * 35.71 -> 33.05, 35.04 -> 36.54 (the one loss), 24.06 -> 24.05, 34.55 -> 32.05.
 *
 * llvm-mca estimate (llvm 19, scripts/arm_mca.py; docs/arm_mca.md has the sources):
 *   micro_g32, neoverse-v2: 26.79 cycles/iter, 0.084 cycles/weight byte,
 *     38.2 int8 MAC/cycle: 60% of the core's int8 peak (SDOT: 64 MAC/cycle)
 *   micro_g32, apple-m1: 33.05 cycles/iter, 0.103 cycles/weight byte,
 *     31.0 int8 MAC/cycle: 48% of the core's int8 peak (SDOT: 64 MAC/cycle)
 *   micro_g32_min, neoverse-v2: 27.54 cycles/iter, 0.078 cycles/weight byte,
 *     37.2 int8 MAC/cycle: 58% of the core's int8 peak (SDOT: 64 MAC/cycle)
 *   micro_g32_min, apple-m1: 36.54 cycles/iter, 0.104 cycles/weight byte,
 *     28.0 int8 MAC/cycle: 44% of the core's int8 peak (SDOT: 64 MAC/cycle)
 *   micro_g16, neoverse-v2: 17.29 cycles/iter, 0.090 cycles/weight byte,
 *     29.6 int8 MAC/cycle: 46% of the core's int8 peak (SDOT: 64 MAC/cycle)
 *   micro_g16, apple-m1: 24.05 cycles/iter, 0.125 cycles/weight byte,
 *     21.3 int8 MAC/cycle: 33% of the core's int8 peak (SDOT: 64 MAC/cycle)
 *   micro_g16_min, neoverse-v2: 19.54 cycles/iter, 0.087 cycles/weight byte,
 *     26.2 int8 MAC/cycle: 41% of the core's int8 peak (SDOT: 64 MAC/cycle)
 *   micro_g16_min, apple-m1: 32.05 cycles/iter, 0.143 cycles/weight byte,
 *     16.0 int8 MAC/cycle: 25% of the core's int8 peak (SDOT: 64 MAC/cycle)
 */
/* GCC 12's pre-allocation scheduler hoists all 16 weight loads of a group
 * ahead of the sdot chain and then spills the accumulators (about 40 stack
 * accesses per group at 4 rows of X); without it the loop keeps every
 * accumulator in registers. Set before the includes so that every inlined
 * helper shares the options. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-schedule-insns")
#endif

#include "kernel/arm/dotprod_util.h"
#include "kernel/i8g.h"

#define PW__DP_MR 4 /* rows of X per micro-tile */

/* Four packed steps (256 bytes from w, one half-tile: 2 vectors each) against lanes 0..3. */
PW__ALWAYS_INLINE void quad(int32x4_t ia[PW__DP_MR][2], const int8_t *w, const int8x16_t *xv,
                            const int M) {
    int8x16_t w0 = vld1q_s8(w), w1 = vld1q_s8(w + 16);
    for (int m = 0; m < M; ++m) {
        ia[m][0] = vdotq_laneq_s32(ia[m][0], w0, xv[m], 0);
        ia[m][1] = vdotq_laneq_s32(ia[m][1], w1, xv[m], 0);
    }
    w0 = vld1q_s8(w + 64);
    w1 = vld1q_s8(w + 80);
    for (int m = 0; m < M; ++m) {
        ia[m][0] = vdotq_laneq_s32(ia[m][0], w0, xv[m], 1);
        ia[m][1] = vdotq_laneq_s32(ia[m][1], w1, xv[m], 1);
    }
    w0 = vld1q_s8(w + 128);
    w1 = vld1q_s8(w + 144);
    for (int m = 0; m < M; ++m) {
        ia[m][0] = vdotq_laneq_s32(ia[m][0], w0, xv[m], 2);
        ia[m][1] = vdotq_laneq_s32(ia[m][1], w1, xv[m], 2);
    }
    w0 = vld1q_s8(w + 192);
    w1 = vld1q_s8(w + 208);
    for (int m = 0; m < M; ++m) {
        ia[m][0] = vdotq_laneq_s32(ia[m][0], w0, xv[m], 3);
        ia[m][1] = vdotq_laneq_s32(ia[m][1], w1, xv[m], 3);
    }
}

typedef struct half_tile {
    const uint8_t *tile; /* first group record of the tile */
    int half;            /* rows 8 * half .. 8 * half + 7 of the tile */
    int rows;            /* of those, rows to store (1..8) */
    int64_t groups;
    uint64_t rec;        /* bytes of one group record */
    const uint8_t *x[PW__DP_MR];
    float *y[PW__DP_MR]; /* output row pointers at the half's first column */
} half_tile;

/* G, has_min and M are constants at every call, so each instance is straight-line code. */
PW__ALWAYS_INLINE void micro(const half_tile *t, const int G, const int has_min, const int M) {
    float32x4_t acc[PW__DP_MR][2];
    for (int m = 0; m < M; ++m) acc[m][0] = acc[m][1] = vdupq_n_f32(0.0f);
    const uint8_t *gr = t->tile;
    for (int64_t j = 0; j < t->groups; ++j, gr += t->rec) {
        /* Per row of X: the group's activation values, scale and min multiplier. */
        const int8_t *xs[PW__DP_MR];
        float xd[PW__DP_MR], xm[PW__DP_MR];
        for (int m = 0; m < M; ++m) {
            if (G == 32) {
                const pw__q8_32 *b = (const pw__q8_32 *)t->x[m] + j;
                xs[m] = b->qs;
                xd[m] = b->d;
                xm[m] = b->dsum;
            } else {
                const pw__q8_256 *b = (const pw__q8_256 *)t->x[m] + j / 16;
                xs[m] = b->qs + (j % 16) * 16;
                xd[m] = b->d;
                xm[m] = b->d * (float)b->bsums[j % 16];
            }
        }
        int32x4_t ia[PW__DP_MR][2];
        pw__arm_chain_zeros(&ia[0][0], 2 * M);
        const int8_t *w = (const int8_t *)gr + 32 * t->half;
        for (int q = 0; q < G / 16; ++q) {
            int8x16_t xv[PW__DP_MR];
            for (int m = 0; m < M; ++m) xv[m] = vld1q_s8(xs[m] + 16 * q);
            quad(ia, w + 256 * q, xv, M);
        }
        const float *meta = (const float *)(gr + (uint64_t)G * PW__I8G_NR) + 8 * t->half;
        const float32x4_t s0 = vld1q_f32(meta + 16), s1 = vld1q_f32(meta + 20);
        for (int m = 0; m < M; ++m) {
            acc[m][0] = vfmaq_f32(acc[m][0], vcvtq_f32_s32(ia[m][0]), vmulq_n_f32(s0, xd[m]));
            acc[m][1] = vfmaq_f32(acc[m][1], vcvtq_f32_s32(ia[m][1]), vmulq_n_f32(s1, xd[m]));
        }
        if (has_min) {
            const float32x4_t n0 = vld1q_f32(meta + 32), n1 = vld1q_f32(meta + 36);
            for (int m = 0; m < M; ++m) {
                acc[m][0] = vfmaq_n_f32(acc[m][0], n0, xm[m]);
                acc[m][1] = vfmaq_n_f32(acc[m][1], n1, xm[m]);
            }
        }
    }
    /* unrolled: as a loop GCC kept acc in memory too, stored at every group */
#pragma GCC unroll 4
    for (int m = 0; m < M; ++m) pw__arm_store8(t->y[m], acc[m][0], acc[m][1], t->rows);
}

/* M (rows of X) dispatched to constants; one out-of-line instance per (G, has_min). */
PW__ALWAYS_INLINE void micro_m(const half_tile *t, const int G, const int has_min, int M) {
    switch (M) {
    case 4: micro(t, G, has_min, 4); break;
    case 3: micro(t, G, has_min, 3); break;
    case 2: micro(t, G, has_min, 2); break;
    default: micro(t, G, has_min, 1); break;
    }
}

static void micro_g32(const half_tile *t, int M) { micro_m(t, 32, 0, M); }
static void micro_g32_min(const half_tile *t, int M) { micro_m(t, 32, 1, M); }
static void micro_g16(const half_tile *t, int M) { micro_m(t, 16, 0, M); }
static void micro_g16_min(const half_tile *t, int M) { micro_m(t, 16, 1, M); }

static void i8g_dotprod_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    const pw__pack_desc *d = c->pack_desc;
    int has_min = 0;
    const int g = pw__i8g_group(d->format, &has_min, NULL);
    void (*fn)(const half_tile *, int) =
        g == 32 ? (has_min ? micro_g32_min : micro_g32) : (has_min ? micro_g16_min : micro_g16);
    half_tile t;
    t.groups = d->in / g;
    t.rec = pw__i8g_group_bytes(g, has_min);
    for (int64_t t0 = o0; t0 < o1; t0 += PW__I8G_NR) {
        t.tile = c->packed + (uint64_t)(t0 / PW__I8G_NR) * d->tile_bytes;
        const int rows = o1 - t0 < PW__I8G_NR ? (int)(o1 - t0) : PW__I8G_NR;
        for (int64_t i = i0; i < i1; i += PW__DP_MR) {
            const int M = i1 - i < PW__DP_MR ? (int)(i1 - i) : PW__DP_MR;
            for (int m = 0; m < M; ++m) t.x[m] = c->xq + (uint64_t)(i + m) * c->xq_row_bytes;
            for (t.half = 0; t.half < 2 && 8 * t.half < rows; ++t.half) {
                t.rows = rows - 8 * t.half < 8 ? rows - 8 * t.half : 8;
                for (int m = 0; m < M; ++m) t.y[m] = c->y + (i + m) * c->ldy + t0 + 8 * t.half;
                fn(&t, M);
            }
        }
    }
}

#define PW__I8G_DOTPROD(id, fmt, G, ACT, prio)                                                  \
    const pw__kernel pw__k_##id##_i8g##G##_dotprod = {                                       \
        .info = {.name = #id "_i8g" #G "_dotprod",                                          \
                 .key = PW__KEY(#id, "packed(i8g" #G "x16k4)", ACT, "dotprod"),                                                 \
                 .format = fmt,                                                             \
                 .layout = PW_LAYOUT_PACKED,                                                \
                 .family = "i8g" #G "x16k4",                                                \
                 .tile_rows = PW__I8G_NR,                                                   \
                 .tile_batch = PW__DP_MR,                                                   \
                 .activation = PW_ACT_##ACT,                                                \
                 .features = PW_CPU_NEON | PW_CPU_DOTPROD,                                  \
                 .isa = "dotprod"},                                                         \
        .run = i8g_dotprod_run,                                                             \
        .pack_plan = pw__i8g_pack_plan_desc,                                                   \
        .pack = pw__i8g_pack_desc,                                                             \
        .priority = prio,                                                                   \
        .min_n = 2};

/* Rank: kernel.h, PW__PRIO_I8G_ARM_BELOW (the formats whose family GEMM llvm-mca puts ahead) */
#define PW__I8G_UP (PW__PRIO_DOTPROD + PW__PRIO_GEMM)
#define PW__I8G_DOWN PW__PRIO_I8G_ARM_BELOW
PW__I8G_DOTPROD(q4_0, PW_FORMAT_Q4_0, 32, Q8_32, PW__I8G_UP)
PW__I8G_DOTPROD(q4_1, PW_FORMAT_Q4_1, 32, Q8_32, PW__I8G_UP)
PW__I8G_DOTPROD(q5_0, PW_FORMAT_Q5_0, 32, Q8_32, PW__I8G_UP)
PW__I8G_DOTPROD(q5_1, PW_FORMAT_Q5_1, 32, Q8_32, PW__I8G_UP)
PW__I8G_DOTPROD(q8_0, PW_FORMAT_Q8_0, 32, Q8_32, PW__I8G_UP)
PW__I8G_DOTPROD(iq4_nl, PW_FORMAT_IQ4_NL, 32, Q8_32, PW__I8G_UP)
PW__I8G_DOTPROD(q4_k, PW_FORMAT_Q4_K, 32, Q8_32, PW__I8G_DOWN)
PW__I8G_DOTPROD(q5_k, PW_FORMAT_Q5_K, 32, Q8_32, PW__I8G_UP)
PW__I8G_DOTPROD(tq1_0, PW_FORMAT_TQ1_0, 32, Q8_32, PW__I8G_UP)
PW__I8G_DOTPROD(tq2_0, PW_FORMAT_TQ2_0, 32, Q8_32, PW__I8G_DOWN)
PW__I8G_DOTPROD(q2_k, PW_FORMAT_Q2_K, 16, Q8_256, PW__I8G_DOWN)
PW__I8G_DOTPROD(q3_k, PW_FORMAT_Q3_K, 16, Q8_256, PW__I8G_DOWN)
PW__I8G_DOTPROD(q6_k, PW_FORMAT_Q6_K, 16, Q8_256, PW__I8G_DOWN)
