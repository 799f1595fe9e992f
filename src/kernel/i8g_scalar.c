/*
 * Portable kernel over the i8g family (layout in i8g.h): integer dot products
 * per group, scaled in f32. Serves GEMV and GEMM at the scalar ISA level and
 * is the model the SIMD kernels of the family follow.
 */
#include "kernel/i8g.h"

#include <string.h>

void pw__i8g_run_scalar(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    const pw__pack_desc *d = c->pack_desc;
    int has_min = 0;
    const int g = pw__i8g_group(d->format, &has_min, NULL);
    const uint64_t rec = pw__i8g_group_bytes(g, has_min);
    const int64_t groups = d->in / g;
    for (int64_t t0 = o0; t0 < o1; t0 += PW__I8G_NR) {
        const uint8_t *tile = c->packed + (uint64_t)(t0 / PW__I8G_NR) * d->tile_bytes;
        const int rows = o1 - t0 < PW__I8G_NR ? (int)(o1 - t0) : PW__I8G_NR;
        for (int64_t i = i0; i < i1; ++i) {
            const uint8_t *xrow = c->xq + (uint64_t)i * c->xq_row_bytes;
            float acc[PW__I8G_NR] = {0};
            float acc_sb[PW__I8G_NR] = {0};
            for (int64_t j = 0; j < groups; ++j) {
                const uint8_t *gr = tile + (uint64_t)j * rec;
                const uint8_t *meta = gr + (uint64_t)g * PW__I8G_NR;
                const int8_t *xs;
                if (g == 32) {
                    xs = ((const pw__q8_32 *)xrow)[j].qs;
                } else {
                    xs = ((const pw__q8_256 *)xrow)[j / 16].qs + (j % 16) * 16;
                }
                int32_t idot[PW__I8G_NR] = {0};
                for (int s = 0; s < g / 4; ++s) {
                    const int8_t *qs = (const int8_t *)gr + s * 64;
                    for (int r = 0; r < PW__I8G_NR; ++r)
                        for (int u = 0; u < 4; ++u) idot[r] += qs[r * 4 + u] * xs[s * 4 + u];
                }
                if (g == 32) {
                    const pw__q8_32 *xb = &((const pw__q8_32 *)xrow)[j];
                    for (int r = 0; r < PW__I8G_NR; ++r) {
                        acc[r] += pw__rd_f32(meta + 64 + 4 * r) * xb->d * (float)idot[r];
                        if (has_min) acc[r] += pw__rd_f32(meta + 128 + 4 * r) * xb->dsum;
                    }
                } else {
                    const pw__q8_256 *xb = &((const pw__q8_256 *)xrow)[j / 16];
                    for (int r = 0; r < PW__I8G_NR; ++r) {
                        acc_sb[r] += pw__rd_f32(meta + 64 + 4 * r) * (float)idot[r];
                        if (has_min) acc_sb[r] += pw__rd_f32(meta + 128 + 4 * r) * (float)xb->bsums[j % 16];
                    }
                    if (j % 16 == 15) {
                        for (int r = 0; r < PW__I8G_NR; ++r) {
                            acc[r] += xb->d * acc_sb[r];
                            acc_sb[r] = 0.0f;
                        }
                    }
                }
            }
            for (int r = 0; r < rows; ++r) c->y[i * c->ldy + t0 + r] = acc[r];
        }
    }
}

#define PW__I8G_SCALAR(id, fmt, G, ACT)                                                     \
    const pw__kernel pw__k_##id##_i8g_scalar = {                                            \
        .info = {.name = #id "_i8g" #G "_scalar",                                           \
                 .key = PW__KEY(#id, "packed(i8g" #G "x16k4)", ACT, "scalar"), \
                 .format = fmt,                                                             \
                 .layout = PW_LAYOUT_PACKED,                                                \
                 .family = "i8g" #G "x16k4",                                                \
                 .tile_rows = PW__I8G_NR,                                                   \
                 .tile_batch = 1,                                                           \
                 .activation = PW_ACT_##ACT,                                                \
                 .features = 0,                                                             \
                 .isa = "scalar"},                                                          \
        .run = pw__i8g_run_scalar,                                                          \
        .pack_plan = pw__i8g_pack_plan_desc,                                                   \
        .pack = pw__i8g_pack_desc,                                                             \
        .priority = PW__PRIO_SCALAR,                                                                     \
        .min_n = 1};

PW__I8G_SCALAR(q4_0, PW_FORMAT_Q4_0, 32, Q8_32)
PW__I8G_SCALAR(q4_1, PW_FORMAT_Q4_1, 32, Q8_32)
PW__I8G_SCALAR(q5_0, PW_FORMAT_Q5_0, 32, Q8_32)
PW__I8G_SCALAR(q5_1, PW_FORMAT_Q5_1, 32, Q8_32)
PW__I8G_SCALAR(q8_0, PW_FORMAT_Q8_0, 32, Q8_32)
PW__I8G_SCALAR(iq4_nl, PW_FORMAT_IQ4_NL, 32, Q8_32)
PW__I8G_SCALAR(q4_k, PW_FORMAT_Q4_K, 32, Q8_32)
PW__I8G_SCALAR(q5_k, PW_FORMAT_Q5_K, 32, Q8_32)
PW__I8G_SCALAR(tq1_0, PW_FORMAT_TQ1_0, 32, Q8_32)
PW__I8G_SCALAR(tq2_0, PW_FORMAT_TQ2_0, 32, Q8_32)
PW__I8G_SCALAR(q2_k, PW_FORMAT_Q2_K, 16, Q8_256)
PW__I8G_SCALAR(q3_k, PW_FORMAT_Q3_K, 16, Q8_256)
PW__I8G_SCALAR(q6_k, PW_FORMAT_Q6_K, 16, Q8_256)
