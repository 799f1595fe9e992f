/*
 * Portable kernel over the i8g32x8k8 family (layout in i8mm_pack.h): the
 * readable reference of what the SMMLA kernel computes, so the packer is
 * tested at every ISA level, i8mm or not. Dispatch never prefers it (its
 * priority is below the i8g scalar kernel of the same formats); tests force
 * it by name.
 */
#include "kernel/arm/i8mm_pack.h"

#include "kernel/i8g.h"

#include <string.h>

static void i8mm_run_scalar(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    const pw__pack_desc *d = c->pack_desc;
    int has_min = 0;
    pw__i8g_group(d->format, &has_min, NULL);
    const uint64_t rec = pw__i8mm_group_bytes(has_min);
    const int64_t groups = d->in / PW__I8MM_GROUP;
    for (int64_t t0 = o0; t0 < o1; t0 += PW__I8MM_NR) {
        const uint8_t *tile = c->packed + (uint64_t)(t0 / PW__I8MM_NR) * d->tile_bytes;
        const int rows = o1 - t0 < PW__I8MM_NR ? (int)(o1 - t0) : PW__I8MM_NR;
        for (int64_t i = i0; i < i1; ++i) {
            const pw__q8_32 *xb = (const pw__q8_32 *)(c->xq + (uint64_t)i * c->xq_row_bytes);
            for (int r = 0; r < rows; ++r) {
                const int row_off = 16 * (r / 2) + 8 * (r % 2);
                float acc = 0.0f;
                for (int64_t j = 0; j < groups; ++j) {
                    const uint8_t *gr = tile + (uint64_t)j * rec;
                    int32_t idot = 0;
                    for (int k = 0; k < PW__I8MM_GROUP; ++k)
                        idot += (int8_t)gr[64 * (k / PW__I8MM_KR) + row_off + k % PW__I8MM_KR] *
                                xb[j].qs[k];
                    const uint8_t *meta = gr + PW__I8MM_GROUP * PW__I8MM_NR;
                    acc += pw__rd_f32(meta + 4 * r) * xb[j].d * (float)idot;
                    if (has_min) acc += pw__rd_f32(meta + 32 + 4 * r) * xb[j].dsum;
                }
                c->y[i * c->ldy + t0 + r] = acc;
            }
        }
    }
}

#define PW__I8MM_SCALAR(id, fmt)                                                              \
    const pw__kernel pw__k_##id##_i8g32x8k8_scalar = {                                        \
        .info = {.name = #id "_i8g32x8k8_scalar",                                             \
                 .key = PW__KEY(#id, "packed(i8g32x8k8)", Q8_32, "scalar"),    \
                 .format = fmt,                                                               \
                 .layout = PW_LAYOUT_PACKED,                                                  \
                 .family = PW__I8MM_FAMILY,                                                   \
                 .tile_rows = PW__I8MM_NR,                                                    \
                 .tile_batch = 1,                                                             \
                 .activation = PW_ACT_Q8_32,                                                  \
                 .features = 0,                                                               \
                 .isa = "scalar"},                                                            \
        .run = i8mm_run_scalar,                                                               \
        .pack_plan = pw__i8mm_pack_plan_desc,                                                    \
        .pack = pw__i8mm_pack_desc,                                                              \
        .priority = PW__PRIO_SCALAR - 1,                                                      \
        .min_n = 2};

PW__I8MM_SCALAR(q4_0, PW_FORMAT_Q4_0)
PW__I8MM_SCALAR(q8_0, PW_FORMAT_Q8_0)
PW__I8MM_SCALAR(q4_k, PW_FORMAT_Q4_K)
PW__I8MM_SCALAR(q4_1, PW_FORMAT_Q4_1)
PW__I8MM_SCALAR(q5_0, PW_FORMAT_Q5_0)
PW__I8MM_SCALAR(q5_1, PW_FORMAT_Q5_1)
PW__I8MM_SCALAR(iq4_nl, PW_FORMAT_IQ4_NL)
PW__I8MM_SCALAR(q5_k, PW_FORMAT_Q5_K)
PW__I8MM_SCALAR(tq1_0, PW_FORMAT_TQ1_0)
PW__I8MM_SCALAR(tq2_0, PW_FORMAT_TQ2_0)
