/*
 * Reference kernels, one per format: decode each block through the view
 * (any layout: the address comes from the strides), then dot with the f32
 * activations in double precision. They are the oracle of every test and the
 * fallback when no kernel reads a weight's layout; never copied per ISA.
 */
#include "base/internal.h"
#include "format/format_internal.h"
#include "kernel/kernel.h"

#define PW__REF_CHUNK 32 /* rows of X accumulated together per decoded block */

static void ref_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    const pw_view *w = c->w;
    const pw__format_traits *t = pw__format(w->format);
    const int64_t bs = t->info.block_size;
    const int64_t bpr = c->in / bs;
    float blk[256];
    double acc[PW__REF_CHUNK];
    for (int64_t o = o0; o < o1; ++o) {
        for (int64_t ib = i0; ib < i1; ib += PW__REF_CHUNK) {
            const int64_t ie = ib + PW__REF_CHUNK < i1 ? ib + PW__REF_CHUNK : i1;
            for (int64_t i = ib; i < ie; ++i) acc[i - ib] = 0.0;
            for (int64_t b = 0; b < bpr; ++b) {
                t->decode(pw_view_block_ptr(w, o, b), 1, blk);
                for (int64_t i = ib; i < ie; ++i) {
                    const float *x = c->x + i * c->ldx + b * bs;
                    double s = 0.0;
                    for (int64_t k = 0; k < bs; ++k) s += (double)blk[k] * (double)x[k];
                    acc[i - ib] += s;
                }
            }
            for (int64_t i = ib; i < ie; ++i) c->y[i * c->ldy + o] = (float)acc[i - ib];
        }
    }
}

#define PW__REF_KERNEL(id, fmt, fmtname)                                                    \
    const pw__kernel pw__k_ref_##id = {                                                     \
        .info = {.name = "ref_" #id,                                                        \
                 .key = PW__KEY(fmtname, "any_layout", F32, "scalar"),            \
                 .format = fmt,                                                             \
                 .layout = PW_LAYOUT_BLOCKED_ROW_MAJOR,                                     \
                 .tile_rows = 1,                                                            \
                 .tile_batch = 1,                                                           \
                 .activation = PW_ACT_F32,                                                  \
                 .features = 0,                                                             \
                 .isa = "scalar",                                                           \
                 .is_reference = 1},                                                        \
        .run = ref_run,                                                                     \
        .priority = 0,                                                                      \
        .min_n = 1};

PW__REF_KERNEL(f32, PW_FORMAT_F32, "f32")
PW__REF_KERNEL(f16, PW_FORMAT_F16, "f16")
PW__REF_KERNEL(bf16, PW_FORMAT_BF16, "bf16")
PW__REF_KERNEL(q4_0, PW_FORMAT_Q4_0, "q4_0")
PW__REF_KERNEL(q4_1, PW_FORMAT_Q4_1, "q4_1")
PW__REF_KERNEL(q5_0, PW_FORMAT_Q5_0, "q5_0")
PW__REF_KERNEL(q5_1, PW_FORMAT_Q5_1, "q5_1")
PW__REF_KERNEL(q8_0, PW_FORMAT_Q8_0, "q8_0")
PW__REF_KERNEL(q8_1, PW_FORMAT_Q8_1, "q8_1")
PW__REF_KERNEL(q2_k, PW_FORMAT_Q2_K, "q2_k")
PW__REF_KERNEL(q3_k, PW_FORMAT_Q3_K, "q3_k")
PW__REF_KERNEL(q4_k, PW_FORMAT_Q4_K, "q4_k")
PW__REF_KERNEL(q5_k, PW_FORMAT_Q5_K, "q5_k")
PW__REF_KERNEL(q6_k, PW_FORMAT_Q6_K, "q6_k")
PW__REF_KERNEL(q8_k, PW_FORMAT_Q8_K, "q8_k")
PW__REF_KERNEL(iq4_nl, PW_FORMAT_IQ4_NL, "iq4_nl")
PW__REF_KERNEL(tq1_0, PW_FORMAT_TQ1_0, "tq1_0")
PW__REF_KERNEL(tq2_0, PW_FORMAT_TQ2_0, "tq2_0")
