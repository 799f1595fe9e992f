#if !defined(__aarch64__) || !defined(__ARM_FEATURE_MATMUL_INT8)
#error "gemm_i8mm.c needs Arm64 i8mm (cmake gives *_i8mm.c -march=armv8.2-a+dotprod+i8mm)"
#endif
/*
 * Arm i8mm GEMM over the i8g32x8k8 packed family (layout in i8mm_pack.h):
 * Y[i, o] for a rectangle [o0, o1) x [i0, i1), s8 weights x s8 activations.
 *
 * SMMLA (vmmlaq_s32(acc, a, b)) adds the 2x2 int32 product of a (2 rows x 8
 * k) and b^T (b: 2 rows x 8 k). Here a is a pair of weight rows and b a pair
 * of X rows, both 8 k wide:
 *
 *   a = | w[2c,   8s .. 8s+7] |     b = | x[i,   8s .. 8s+7] |
 *       | w[2c+1, 8s .. 8s+7] |         | x[i+1, 8s .. 8s+7] |
 *
 *   acc lanes: w[2c].x[i], w[2c].x[i+1], w[2c+1].x[i], w[2c+1].x[i+1]
 *
 * a is one 16-byte load from the packed step (pairs c = 0..3 at 16c); b is
 * made from one 16-byte load of each X row (k 16h .. 16h+15) by zipping
 * their 64-bit halves (ZIP1/ZIP2 on .2d: steps 2h and 2h+1). The activation
 * blocks are PW_ACT_Q8_32 (pw__q8_32: d at 0, dsum at 4, qs at 32).
 *
 * Micro-tile: the whole 8-row tile by PW__MM_MR = 4 rows of X (two pairs):
 * 8 f32 accumulators of 2x2 lanes; per group, weight pair c's 4 SMMLA against
 * each X pair into a fresh int32 sum, then acc += cvt(idot) * (scale_w x d_x).
 * The weight side's lanes (s[2c], s[2c], s[2c+1], s[2c+1]) are one ZIP of the
 * group's four scales with themselves, the X side's (d[i], d[i+1], d[i], d[i+1])
 * a load, a lane load and a combine; plus min_w x dsum_x the same way for
 * formats with a minimum. An odd last row of X is paired with itself and not
 * stored; rows past `out` are zero in the pack and only stores are cut
 * (dotprod_util.h).
 *
 * By llvm-mca's Neoverse V2 model the loop is bound by the four vector pipes
 * (SMMLA, ZIP, SCVTF at two slots, FMUL, FMLA, and the data of q stores). What
 * took it from 25.78 to 20.04 cycles a group: the weight pair, not the X pair,
 * as SMMLA's first operand (the scales' lanes by ZIP, where DUP, INS and MOV
 * combined them), each int32 chain started by a load rather than MOVI or a
 * register copy, and the final stores unrolled over the X pairs (as a loop GCC
 * kept the f32 sums in memory too and stored all 8 at every group).
 *
 * llvm-mca estimate (llvm 19, scripts/arm_mca.py; docs/arm_mca.md has the sources):
 *   micro_plain, neoverse-v2: 20.04 cycles/iter, 0.070 cycles/weight byte,
 *     51.1 int8 MAC/cycle: 40% of the core's int8 peak (SMMLA: 128 MAC/cycle)
 *   micro_plain, apple-m2: 24.05 cycles/iter, 0.084 cycles/weight byte,
 *     42.6 int8 MAC/cycle: 33% of the core's int8 peak (SMMLA: 128 MAC/cycle)
 *   micro_min, neoverse-v2: 24.04 cycles/iter, 0.075 cycles/weight byte,
 *     42.6 int8 MAC/cycle: 33% of the core's int8 peak (SMMLA: 128 MAC/cycle)
 *   micro_min, apple-m2: 30.06 cycles/iter, 0.094 cycles/weight byte,
 *     34.1 int8 MAC/cycle: 27% of the core's int8 peak (SMMLA: 128 MAC/cycle)
 */
/* As in i8g_dotprod.c: GCC 12's pre-allocation scheduler hoists the group's
 * weight loads and spills accumulators; without it they stay in registers. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-schedule-insns")
#endif

#include "kernel/arm/dotprod_util.h"
#include "kernel/arm/i8mm_pack.h"
#include "kernel/i8g.h"

#define PW__MM_MR 4 /* rows of X per micro-tile: two SMMLA pairs */

typedef struct mm_tile {
    const uint8_t *tile;
    int rows;            /* output rows to store (1..8) */
    int64_t groups;
    uint64_t rec;
    const pw__q8_32 *x[PW__MM_MR]; /* rows of X; an odd last row repeats the one before */
    float *y[PW__MM_MR];           /* output rows at the tile's first column, NULL: not stored */
} mm_tile;

/* (v[0], v[0], v[1], v[1]) and (v[2], v[2], v[3], v[3]): a row pair's values in the
 * SMMLA lane order (weight pair first), one ZIP each. */
PW__ALWAYS_INLINE float32x4_t pair_lanes_lo(float32x4_t v) { return vzip1q_f32(v, v); }
PW__ALWAYS_INLINE float32x4_t pair_lanes_hi(float32x4_t v) { return vzip2q_f32(v, v); }

/* (a, b, a, b): one X pair's values in the SMMLA lane order. */
PW__ALWAYS_INLINE float32x4_t x_lanes(const float *a, const float *b) {
    const float32x2_t ab = vld1_lane_f32(b, vld1_dup_f32(a), 1);
    return vcombine_f32(ab, ab);
}

PW__ALWAYS_INLINE void micro(const mm_tile *t, const int has_min, const int P) {
    float32x4_t acc[2][4];
    for (int p = 0; p < P; ++p)
        for (int c = 0; c < 4; ++c) acc[p][c] = vdupq_n_f32(0.0f);
    const uint8_t *gr = t->tile;
    for (int64_t j = 0; j < t->groups; ++j, gr += t->rec) {
        /* step k (k 8k .. 8k+7) of X pair p: its two rows' 8 bytes, one 64-bit half each */
        int8x16_t xs[2][4];
        for (int p = 0; p < P; ++p)
            for (int h = 0; h < 2; ++h) {
                const int64x2_t a = vreinterpretq_s64_s8(vld1q_s8(t->x[2 * p][j].qs + 16 * h));
                const int64x2_t b = vreinterpretq_s64_s8(vld1q_s8(t->x[2 * p + 1][j].qs + 16 * h));
                xs[p][2 * h] = vreinterpretq_s8_s64(vzip1q_s64(a, b));
                xs[p][2 * h + 1] = vreinterpretq_s8_s64(vzip2q_s64(a, b));
            }
        const float *meta = (const float *)(gr + PW__I8MM_GROUP * PW__I8MM_NR);
        const float32x4_t s03 = vld1q_f32(meta), s47 = vld1q_f32(meta + 4);
        const float32x4_t sw[4] = {pair_lanes_lo(s03), pair_lanes_hi(s03), pair_lanes_lo(s47),
                                   pair_lanes_hi(s47)};
        float32x4_t xd[2];
        for (int p = 0; p < P; ++p) xd[p] = x_lanes(&t->x[2 * p][j].d, &t->x[2 * p + 1][j].d);
        /* weight pair c (rows 2c, 2c+1) against each X pair: its four steps, then the
         * float step, so that a pair's int32 sums live only while its four SMMLA run */
        for (int c = 0; c < 4; ++c) {
            int32x4_t ia[2];
            pw__arm_chain_zeros(ia, P);
            for (int k = 0; k < 4; ++k) {
                const int8x16_t wv = vld1q_s8((const int8_t *)gr + 64 * k + 16 * c);
                for (int p = 0; p < P; ++p) ia[p] = vmmlaq_s32(ia[p], wv, xs[p][k]);
            }
            for (int p = 0; p < P; ++p)
                acc[p][c] = vfmaq_f32(acc[p][c], vcvtq_f32_s32(ia[p]), vmulq_f32(sw[c], xd[p]));
        }
        if (has_min) {
            const float32x4_t m03 = vld1q_f32(meta + 8), m47 = vld1q_f32(meta + 12);
            const float32x4_t mw[4] = {pair_lanes_lo(m03), pair_lanes_hi(m03), pair_lanes_lo(m47),
                                       pair_lanes_hi(m47)};
            for (int p = 0; p < P; ++p) {
                const float32x4_t xm = x_lanes(&t->x[2 * p][j].dsum, &t->x[2 * p + 1][j].dsum);
                for (int c = 0; c < 4; ++c) acc[p][c] = vfmaq_f32(acc[p][c], mw[c], xm);
            }
        }
    }
    /* Lanes 0 and 2 of acc[p][c] are row 2p of X at outputs 2c, 2c+1; lanes 1 and 3 are
     * row 2p+1. Unrolled: as a loop over p GCC kept acc in memory, stored at every group. */
#pragma GCC unroll 2
    for (int p = 0; p < P; ++p) {
        pw__arm_store8(t->y[2 * p], vuzp1q_f32(acc[p][0], acc[p][1]),
                       vuzp1q_f32(acc[p][2], acc[p][3]), t->rows);
        if (t->y[2 * p + 1] != NULL)
            pw__arm_store8(t->y[2 * p + 1], vuzp2q_f32(acc[p][0], acc[p][1]),
                           vuzp2q_f32(acc[p][2], acc[p][3]), t->rows);
    }
}

static void micro_plain(const mm_tile *t, int pairs) {
    if (pairs == 2)
        micro(t, 0, 2);
    else
        micro(t, 0, 1);
}

static void micro_min(const mm_tile *t, int pairs) {
    if (pairs == 2)
        micro(t, 1, 2);
    else
        micro(t, 1, 1);
}

static void i8mm_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    const pw__pack_desc *d = c->pack_desc;
    int has_min = 0;
    pw__i8g_group(d->format, &has_min, NULL);
    void (*fn)(const mm_tile *, int) = has_min ? micro_min : micro_plain;
    mm_tile t;
    t.groups = d->in / PW__I8MM_GROUP;
    t.rec = pw__i8mm_group_bytes(has_min);
    for (int64_t t0 = o0; t0 < o1; t0 += PW__I8MM_NR) {
        t.tile = c->packed + (uint64_t)(t0 / PW__I8MM_NR) * d->tile_bytes;
        t.rows = o1 - t0 < PW__I8MM_NR ? (int)(o1 - t0) : PW__I8MM_NR;
        for (int64_t i = i0; i < i1; i += PW__MM_MR) {
            const int m = i1 - i < PW__MM_MR ? (int)(i1 - i) : PW__MM_MR;
            for (int r = 0; r < PW__MM_MR; ++r) {
                const int64_t row = i + (r < m ? r : m - 1);
                t.x[r] = (const pw__q8_32 *)(c->xq + (uint64_t)row * c->xq_row_bytes);
                t.y[r] = r < m ? c->y + row * c->ldy + t0 : NULL;
            }
            fn(&t, (m + 1) / 2);
        }
    }
}

#define PW__I8MM_KERNEL(id, fmt, prio)                                                          \
    const pw__kernel pw__k_##id##_i8g32x8k8_i8mm = {                                          \
        .info = {.name = #id "_i8g32x8k8_i8mm",                                               \
                 .key = PW__KEY(#id, "packed(i8g32x8k8)", Q8_32, "i8mm"),      \
                 .format = fmt,                                                               \
                 .layout = PW_LAYOUT_PACKED,                                                  \
                 .family = PW__I8MM_FAMILY,                                                   \
                 .tile_rows = PW__I8MM_NR,                                                    \
                 .tile_batch = PW__MM_MR,                                                     \
                 .activation = PW_ACT_Q8_32,                                                  \
                 .features = PW_CPU_NEON | PW_CPU_DOTPROD | PW_CPU_I8MM,                      \
                 .isa = "i8mm"},                                                              \
        .run = i8mm_run,                                                                      \
        .pack_plan = pw__i8mm_pack_plan_desc,                                                    \
        .pack = pw__i8mm_pack_desc,                                                              \
        .priority = prio,                                                                     \
        .min_n = 2};

/* Rank: kernel.h, PW__PRIO_I8G_ARM_BELOW (Q4_K: the family's dotprod GEMM ahead) */
#define PW__I8MM_UP (PW__PRIO_I8MM + PW__PRIO_GEMM)
#define PW__I8MM_DOWN PW__PRIO_I8G_ARM_BELOW

PW__I8MM_KERNEL(q4_0, PW_FORMAT_Q4_0, PW__I8MM_UP)
PW__I8MM_KERNEL(q8_0, PW_FORMAT_Q8_0, PW__I8MM_UP)
PW__I8MM_KERNEL(q4_k, PW_FORMAT_Q4_K, PW__I8MM_DOWN)
PW__I8MM_KERNEL(q4_1, PW_FORMAT_Q4_1, PW__I8MM_UP)
PW__I8MM_KERNEL(q5_0, PW_FORMAT_Q5_0, PW__I8MM_UP)
PW__I8MM_KERNEL(q5_1, PW_FORMAT_Q5_1, PW__I8MM_UP)
PW__I8MM_KERNEL(iq4_nl, PW_FORMAT_IQ4_NL, PW__I8MM_UP)
PW__I8MM_KERNEL(q5_k, PW_FORMAT_Q5_K, PW__I8MM_UP)
PW__I8MM_KERNEL(tq1_0, PW_FORMAT_TQ1_0, PW__I8MM_UP)
PW__I8MM_KERNEL(tq2_0, PW_FORMAT_TQ2_0, PW__I8MM_UP)
