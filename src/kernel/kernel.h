/*
 * Kernel descriptors and the contract every matmul kernel keeps.
 *
 * A kernel computes Y[i, o] = sum_k X[i, k] W[o, k] for a sub-rectangle of
 * outputs [o0, o1) x rows of X [i0, i1) that the dispatcher hands it (o0 is a
 * multiple of the kernel's nr; o1 is too, or equals out). It reads the weight
 * in exactly the layout its descriptor names and never guesses:
 *
 *   PW_LAYOUT_BLOCKED_ROW_MAJOR  call->w: a 2-D view with block stride 1;
 *                                block (o, b) at w->data + (w->offset +
 *                                o * w->strides[0] + b) * block_bytes.
 *                                Narrowed and offset views are valid input.
 *   PW_LAYOUT_PACKED             call->packed: bytes made by the descriptor's
 *                                own pack function, with call->pack_desc
 *                                describing them; a kernel refuses (dispatch
 *                                does, before calling) a buffer whose family
 *                                or tile parameters are not its own.
 *
 * Activations arrive in the descriptor's form: call->x (f32, row stride
 * call->ldx floats) or call->xq (quantized rows of call->xq_row_bytes bytes,
 * see quant/act.h). Y rows have stride call->ldy floats; every y[i, o] in the
 * rectangle is overwritten (never read).
 *
 * Kernels are registered only in kernel_list.h.
 */
#ifndef PACKWISE_KERNEL_H
#define PACKWISE_KERNEL_H

#include "packwise/matmul.h"
#include "quant/act.h"

#include <stddef.h>
#include <stdint.h>

/* Description of a packed buffer; it travels with the bytes. */
typedef struct pw__pack_desc {
    const char *family; /* e.g. "i8g32x16k4": packer and kernels agree on it by name */
    pw_format format;   /* source weight format */
    int32_t nr;         /* output rows per tile */
    int32_t kr;         /* k values interleaved per row inside a tile */
    int32_t sr;         /* sub-blocks (1 when unused) */
    int32_t group;      /* k values sharing one scale (and min) */
    int32_t version;    /* packer version: changing bytes bumps it */
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
    float *y;
    int64_t ldy;
} pw__mm_call;

typedef void (*pw__mm_fn)(const pw__mm_call *call, int64_t o0, int64_t o1, int64_t i0, int64_t i1);

/* Describe the packed form of an [out, in] weight of `format` (fills desc, no bytes). */
typedef pw_status (*pw__pack_plan_fn)(pw_context *ctx, pw_format format, int64_t out, int64_t in,
                                      pw__pack_desc *desc);
/* Pack rows [o0, o1) of a row-major view (o0, o1 multiples of nr, or o1 == out). */
typedef void (*pw__pack_fn)(const pw__pack_desc *desc, const pw_view *w, int64_t o0, int64_t o1,
                            uint8_t *dst);

typedef struct pw__kernel {
    pw_kernel_info info;
    pw__mm_fn run;
    pw__pack_plan_fn pack_plan; /* PW_LAYOUT_PACKED only */
    pw__pack_fn pack;           /* PW_LAYOUT_PACKED only */
    int32_t priority;           /* among kernels reading the same layout: higher wins */
    int32_t min_n;              /* smallest n it is chosen for by dispatch (1 = GEMV too) */
} pw__kernel;

/*
 * Priorities: dispatch picks the highest among usable kernels that read the
 * weight's layout (pw_weight may also pack once for a PACKED kernel). Row-major
 * kernels serve GEMV (min_n = 1); packed GEMM kernels add PW__PRIO_GEMM and
 * set min_n = 2 so that n = 1 streams the file's own bytes.
 */
#define PW__PRIO_SCALAR 10
#define PW__PRIO_AVX2 20
#define PW__PRIO_AVX512 30
#define PW__PRIO_NEON 20
#define PW__PRIO_DOTPROD 30
#define PW__PRIO_I8MM 40
#define PW__PRIO_GEMM 5

/* The list (kernel/list.c). */
size_t pw__kernel_list_count(void);
const pw__kernel *pw__kernel_list_get(size_t i);

/* Whether a kernel's features are usable in ctx. */
int pw__kernel_usable(const pw_context *ctx, const pw__kernel *k);

/* The highest-priority usable non-reference kernel for `format` and n rows of X that
 * accept(k, arg) admits; NULL if none. */
typedef int (*pw__kernel_accept)(const pw__kernel *k, const void *arg);
const pw__kernel *pw__kernel_pick(const pw_context *ctx, pw_format format, int64_t n,
                                  pw__kernel_accept accept, const void *arg);

/* Best usable kernel for (format, layout class, family or NULL, n); NULL if none. */
const pw__kernel *pw__kernel_best(const pw_context *ctx, pw_format format, pw_layout_class layout,
                                  const char *family, int64_t n);

/* The kernel a pw_weight handle (which can pack its weight once) uses for n rows of
 * X: the best usable non-reference kernel reading the file's ROW_MAJOR bytes or a
 * packed form it can make; NULL if none. The weights-cache writer packs the same. */
const pw__kernel *pw__kernel_for_weight(const pw_context *ctx, pw_format format, int64_t n);

/* The reference kernel of a format (always present, reads any 2-D [out, in] view). */
const pw__kernel *pw__kernel_reference(pw_format format);

/* Run a kernel over the whole problem on the context's threads. */
void pw__kernel_run(pw_context *ctx, const pw__kernel *k, const pw__mm_call *call);

#endif
