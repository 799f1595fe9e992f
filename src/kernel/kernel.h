/*
 * Kernel descriptors and the contract every matmul kernel keeps (QC4W and the
 * block formats alike; the operator in src/op/ is the only caller).
 *
 * A kernel computes Y[i, o] = sum_k X[i, k] W[o, k] for a sub-rectangle of
 * outputs [o0, o1) x rows of X [i0, i1) that the dispatcher hands it (o0 is a
 * multiple of the kernel's nr; o1 is too, or equals out; i0 is a multiple of
 * its mr). It reads the weight in exactly the layout its descriptor names and
 * never guesses:
 *
 *   PW_LAYOUT_BLOCKED_ROW_MAJOR  call->w: a 2-D view with block stride 1;
 *                                block (o, b) at w->data + (w->offset +
 *                                o * w->strides[0] + b) * block_bytes.
 *                                Narrowed and offset views are valid input.
 *   PW_LAYOUT_PACKED             call->packed: bytes made by the descriptor's
 *                                own pack function, with call->pack_desc
 *                                describing them; dispatch refuses, before
 *                                calling, a buffer whose family or tile
 *                                parameters are not the kernel's own.
 *
 * Activations arrive in the descriptor's form (quant/act.h): call->x (f32,
 * row stride call->ldx floats) or call->xq (quantized rows of
 * call->xq_row_bytes bytes; QD8 kernels with xq_panel > 0 also get the rows
 * interleaved in panels, call->xq_panels, when n > 1).
 *
 * Output and epilogue. Every y[i, o] in the rectangle is overwritten, never
 * read. A kernel without .epilogue writes the f32 sums to call->y (row stride
 * call->ldy floats) and nothing else; the dispatcher then applies the
 * epilogue to the same rectangle while it is still in L1 (pw__epilogue: bias,
 * clamp, f16). A kernel with .epilogue (QC4W: scales and bias live in its
 * packed tiles) applies clamp [call->min, call->max] itself and writes half
 * floats to call->y16 when it is not NULL, else f32 to call->y.
 *
 * Kernels are registered only in kernel_list.h. kernel/ is a leaf: it knows
 * formats, views and activation forms, never the operator or the caches.
 */
#ifndef PACKWISE_KERNEL_H
#define PACKWISE_KERNEL_H

#include "packwise/matmul.h"
#include "quant/act.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Description of a packed buffer; it travels with the bytes. */
typedef struct pw__pack_desc {
    const char *family; /* e.g. "i8g32x16k4": packer and kernels agree on it by name */
    pw_weight_kind kind;/* what the source is: block format, QC4W or QB4W */
    pw_format format;   /* source weight format (PW_WEIGHT_BLOCKS) */
    int32_t nr;         /* output rows per tile */
    int32_t kr;         /* k values interleaved per row inside a tile */
    int32_t sr;         /* sub-blocks (1 when unused) */
    int32_t group;      /* k values sharing one scale (and min) */
    int32_t version;    /* packer version: changing bytes bumps it */
    int32_t sme_bytes;  /* SME families: the streaming vector length (bytes) the tile was made
                           for (also in the family's name); 0 for every other family */
    int64_t out, in;    /* logical weight shape */
    int64_t in_padded;  /* in rounded up to the group */
    int64_t tiles;      /* ceil(out / nr) */
    uint64_t tile_bytes;/* bytes of one tile */
    uint64_t bytes;     /* tiles * tile_bytes */
} pw__pack_desc;

typedef struct pw__mm_call {
    int64_t out, in, n;
    const pw_view *w;              /* row-major kernels */
    const uint8_t *packed;         /* packed kernels */
    const pw__pack_desc *pack_desc;
    const float *x;                /* f32 activations */
    int64_t ldx;
    const uint8_t *xq;             /* quantized activations */
    size_t xq_row_bytes;
    const uint8_t *xq_panels;      /* QD8 panels (kernels with xq_panel > 0, n > 1) */
    float *y;                      /* f32 output */
    uint16_t *y16;                 /* epilogue kernels: half output instead of y, or NULL */
    int64_t ldy;                   /* elements between rows of y (or y16) */
    float min, max;                /* epilogue kernels: the clamp */
} pw__mm_call;

typedef void (*pw__mm_fn)(const pw__mm_call *call, int64_t o0, int64_t o1, int64_t i0, int64_t i1);

/* QC4W raw weights as a packer reads them: N rows of ceil(K / 2) bytes (a transposed
 * source is converted to this first), the zero point (0 or 8), N scales, N biases or NULL. */
typedef struct pw__qc4w_source {
    const uint8_t *nk;
    int32_t zero_point;
    const float *scale;
    const float *bias;
} pw__qc4w_source;

struct pw__qb4w_source; /* kernel/qb4w.h */
/* What a packer reads: a 2-D [out, in] view (block formats, any order), QC4W or QB4W raw
 * weights. */
typedef struct pw__source {
    const pw_view *view;
    const pw__qc4w_source *qc4w;
    const struct pw__qb4w_source *qb4w;
} pw__source;

struct pw__kernel;
/* Describe the packed form kernel k reads for an [out, in] weight of `format` (fills
 * desc, no bytes); k's own tile parameters are the packer's (nr, kr, sr are never
 * chosen by the caller). QB4W families also read desc->group on entry: the weights'
 * block size, which is the weight's and not the kernel's (every other family ignores
 * what desc holds on entry). */
typedef pw_status (*pw__pack_plan_fn)(pw_context *ctx, const struct pw__kernel *k, pw_format format,
                                      int64_t out, int64_t in, pw__pack_desc *desc);
/* Pack output rows [o0, o1) (o0 a multiple of nr; o1 too, or out) into dst, the base
 * of the tile holding row o0. */
typedef void (*pw__pack_fn)(const pw__pack_desc *desc, const pw__source *src, int64_t o0,
                            int64_t o1, uint8_t *dst);

/*
 * A family whose packer reads block-format views keeps its natural signatures,
 *   pw_status plan(pw_context *, pw_format, int64_t out, int64_t in, pw__pack_desc *)
 *   void pack(const pw__pack_desc *, const pw_view *, int64_t o0, int64_t o1, uint8_t *dst)
 * and states them once in its header with PW__VIEW_PACKER(plan, pack); its
 * descriptors then name plan##_desc and pack##_desc, the contract's forms.
 */
#define PW__VIEW_PACKER(plan_, pack_)                                                          \
    static inline pw_status plan_##_desc(pw_context *ctx, const struct pw__kernel *k,          \
                                         pw_format f, int64_t out, int64_t in,                 \
                                         pw__pack_desc *d) {                                   \
        (void)k;                                                                               \
        return plan_(ctx, f, out, in, d);                                                      \
    }                                                                                          \
    static inline void pack_##_desc(const pw__pack_desc *d, const pw__source *s, int64_t o0,   \
                                    int64_t o1, uint8_t *dst) {                                \
        pack_(d, s->view, o0, o1, dst);                                                        \
    }

typedef struct pw__kernel {
    pw_kernel_info info;
    pw__mm_fn run;
    pw__pack_plan_fn pack_plan; /* PW_LAYOUT_PACKED only */
    pw__pack_fn pack;           /* PW_LAYOUT_PACKED only */
    int32_t priority;           /* among kernels reading the same layout: higher wins */
    int32_t min_n;              /* smallest n it is chosen for by dispatch (1 = GEMV too) */
    int32_t nr, kr, sr;         /* QC4W families: the tile the packer lays out */
    int64_t max_in;             /* largest `in` its integer sums are exact for; 0 = any */
    int32_t xq_panel;           /* > 0: reads QD8 panels of this many rows when n > 1 */
    int32_t epilogue;           /* applies clamp and f16 output itself (see above) */
    int32_t sme_bytes;          /* SME kernels: usable only at this streaming vector length
                                   (bytes), which their tile follows; 0 = any */
} pw__kernel;

/*
 * Priorities: dispatch picks the highest among usable kernels that read the
 * weight's layout (pw_weight may also pack once for a PACKED kernel). Row-major
 * kernels serve GEMV (min_n = 1); packed GEMM kernels add PW__PRIO_GEMM and
 * set min_n = 2 so that n = 1 streams the file's own bytes.
 */
#define PW__PRIO_SCALAR 10
#define PW__PRIO_AVX2 20
#define PW__PRIO_AVXVNNI 25
#define PW__PRIO_AVX512 30
#define PW__PRIO_NEON 20
#define PW__PRIO_DOTPROD 30
#define PW__PRIO_I8MM 40
#define PW__PRIO_SME 50
#define PW__PRIO_GEMM 5
/* The x86 i8g GEMM kernels (kernel/i8g.h: every weight expanded to int8, 2.2-6.3x the
 * file's bytes) rank below the packed families' GEMMs of their level (PW__PRIO_GEMM - 1),
 * so that `fastest` holds no form that is both larger and no faster. AMD EPYC Zen 5 VM, 1
 * thread, packwise bench --policy compact,fastest (the family's GEMM against i8g, GFLOP/s,
 * one run each, load average 2-4 from other work): [4096, 4096] n = 4 / 16, avx512vnni
 * Q4_0 416 / 589 against 205 / 448, Q8_0 290 / 437 against 181 / 426, Q2_K 297 / 483
 * against 142 / 350, Q4_K 381 / 566 against 174 / 417, Q6_K 322 / 490 against 189 / 402;
 * avx2 Q4_0 201 / 236 against 77 / 161, Q4_K 246 / 279 against 92 / 144, Q6_K 140 / 200
 * against 116 / 161; [11008, 4096] n = 128, eleven formats, avxvnni 221-328 against
 * 178-236 (every format faster), avx2 132-253 against 145-227 (nine faster; Q8_0 151 / 145,
 * IQ4_NL 132 / 138 level), avx512vnni level within the run's noise (Q4_0 446-515 against
 * 471, Q4_K 501-563 against 435-472, Q6_K 415-481 against 439-491); TQ1_0 and TQ2_0
 * ([4096, 4096], n = 4 / 128, after their families came): avx512vnni 464 / 618 and 702 /
 * 654 against 162 / 410 and 178 / 404, avx2 158 / 234 and 204 / 218 against 92 / 214 and
 * 89 / 224. Not measured on Intel cores. So on x86 the planner picks no i8g kernel for a
 * block format with a packed family (all thirteen that have int8 kernels); they stay
 * available by name (pw_weight_options.kernel). On Arm the dotprod and i8mm i8g GEMMs
 * keep their rank (no Arm hardware has timed them). */
#define PW__PRIO_I8G_X86 (PW__PRIO_GEMM - 2)
/* On Arm the i8g GEMMs keep their rank above the packed families' (no Arm hardware has
 * timed either) except where llvm-mca (scripts/arm_mca.py, docs/arm_mca.md; Neoverse V2,
 * int8 MAC/cycle) puts the family's GEMM ahead: Q4_K 46.5 against i8g32 37.2 (dotprod)
 * and 42.6 (i8mm), Q6_K 34.0 and Q3_K 38.5 against i8g16 29.6, Q2_K 39.3 against 26.2.
 * There `fastest` would hold a form 2-6x the file's bytes for a GEMM estimated slower,
 * so those formats' i8g kernels rank here, below the family's GEMM (PW__PRIO_DOTPROD +
 * PW__PRIO_GEMM - 1), on dotprod and i8mm alike. TQ2_0 ranks only
 * its dotprod i8g kernel here (family 46.4 against i8g32 38.2) and keeps the i8mm one
 * above (i8g32x8k8, 51.1). (Q5_K: i8g 37.2 / 42.6 against 29.2, and the 32-element
 * formats, whose family GEMMs estimate at 27-35 against i8g32 38.2, keep the i8g rank.) */
#define PW__PRIO_I8G_ARM_BELOW (PW__PRIO_DOTPROD + PW__PRIO_GEMM - 2)

/*
 * Kernel keys, spelled by this one macro only (never by hand): the operation,
 * the weight's format and the layout class it reads (with the family for
 * packed forms), the activation form made from X, the output, the ISA.
 *   PW__KEY("q4_0", "packed(q4x32k4)", Q8_32, "avx512vnni")
 *     = "matmul_wt:q4_0/packed(q4x32k4) x f32->q8_32 -> f32 :avx512vnni"
 * tests/test_kernels.c rebuilds every key from the descriptor's fields and
 * compares, so a key and its kernel cannot disagree.
 */
#define PW__ACT_KEY_F32 "f32"
#define PW__ACT_KEY_Q8_32 "f32->q8_32"
#define PW__ACT_KEY_Q8_256 "f32->q8_256"
#define PW__ACT_KEY_QD8 "f32->qd8"
#define PW__KEY(fmt_, layout_, act_, isa_) \
    "matmul_wt:" fmt_ "/" layout_ " x " PW__ACT_KEY_##act_ " -> f32 :" isa_

/* A field of a block or packed buffer at any byte address (formats put them where the
 * format says, not at aligned addresses): 16 and 32 bits unsigned, f32, int32. */
static inline uint16_t pw__rd_u16(const uint8_t *p) {
    uint16_t v;
    memcpy(&v, p, 2);
    return v;
}
static inline uint32_t pw__rd_u32(const uint8_t *p) {
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}
static inline float pw__rd_f32(const uint8_t *p) {
    float v;
    memcpy(&v, p, 4);
    return v;
}
static inline int32_t pw__rd_i32(const uint8_t *p) {
    int32_t v;
    memcpy(&v, p, 4);
    return v;
}

/* The list (kernel/list.c). */
size_t pw__kernel_list_count(void);
const pw__kernel *pw__kernel_list_get(size_t i);

/* Whether a kernel's features are usable in ctx. */
int pw__kernel_usable(const pw_context *ctx, const pw__kernel *k);

/* Whether k multiplies weights of this kind and format (format ignored for QC4W)
 * and its sums are exact for `in` inputs. */
int pw__kernel_reads(const pw__kernel *k, pw_weight_kind kind, pw_format format, int64_t in);

/* The highest-priority usable non-reference kernel for (kind, format, in) and n rows of
 * X that accept(k, arg) admits; NULL if none. */
typedef int (*pw__kernel_accept)(const pw__kernel *k, const void *arg);
const pw__kernel *pw__kernel_pick(const pw_context *ctx, pw_weight_kind kind, pw_format format,
                                  int64_t in, int64_t n, pw__kernel_accept accept, const void *arg);

/* The reference kernel of a format (always present, reads any 2-D [out, in] view);
 * NULL for QC4W, whose portable kernels read only their packed families. */
const pw__kernel *pw__kernel_reference(pw_weight_kind kind, pw_format format);

/* Whether k reads the packed buffer described by d (same family, tile and packer
 * version): PW_ERR_FAMILY naming both otherwise. */
pw_status pw__kernel_check_family(pw_context *ctx, const pw__kernel *k, const pw__pack_desc *d);

/* Several runs in one dispatch of the context's threads (pw_matmul_wt_many): kernel ks[i]
 * over calls[i] with bias[i] (NULL for none), f32 output only; each product split as
 * pw__kernel_run splits it, so each y is what pw__kernel_run writes. At most
 * PW__RUN_MANY_MAX runs (= PW_MATMUL_MANY_MAX, weight.h); nothing is allocated. */
#define PW__RUN_MANY_MAX 64
void pw__kernel_run_many(pw_context *ctx, size_t count, const pw__kernel *const *ks,
                         const pw__mm_call *calls, const float *const *bias);

/* The shared epilogue, for kernels without .epilogue: y[i, o] for the rectangle
 * gets bias[o] added (bias may be NULL), is clamped to [min, max], and is written
 * to y16 as half when y16 is not NULL (from the f32 sums in y). */
void pw__epilogue(float *y, uint16_t *y16, int64_t ldy, const float *bias, float min, float max,
                  int64_t o0, int64_t o1, int64_t i0, int64_t i1);

/* Run a kernel over the whole problem on the context's threads. `f32_scratch` is
 * n x out floats the dispatcher uses for the sums when call->y16 is set and the kernel
 * has no epilogue (NULL otherwise); bias, min and max are the epilogue's. */
void pw__kernel_run(pw_context *ctx, const pw__kernel *k, const pw__mm_call *call,
                    const float *bias, float *f32_scratch);

#endif
