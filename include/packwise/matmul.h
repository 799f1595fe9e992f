/**
 * @file matmul.h
 * @brief Y = X * W^T with the weight left as [out, in]; kernels and dispatch.
 *
 * A block-quantized weight cannot be transposed without requantizing, so the
 * primitive is x * W^T (ggml's mul_mat, BLAS's op(B)): W stays `[out, in]`
 * with its blocks along `in`, and
 *
 *     Y[i, o] = sum_k X[i, k] * W[o, k]      X: [n, in] f32, Y: [n, out] f32
 *
 * Every kernel states in its descriptor the weight format and the layout it
 * reads (@ref layout_rules), the activation form it makes from X (f32, or
 * int8 blocks of 32 or 256 as GGUF's vec-dot pairing does), the CPU features
 * it needs and its tile sizes. Dispatch takes the best kernel that reads the
 * weight's layout as it is. Only when the context allows it
 * (pw_context_options.prepack_weights), or through a ::pw_weight handle that
 * packs once, does a weight change layout; each such copy is an adapter trace
 * event with its byte count, and falling back to the reference kernel is a
 * trace event with the reason.
 */
#ifndef PACKWISE_MATMUL_H
#define PACKWISE_MATMUL_H

#include "packwise/base.h"
#include "packwise/format.h"
#include "packwise/view.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Layout classes a kernel can read (the spec's OperandKey layout classes). */
typedef enum pw_layout_class {
    PW_LAYOUT_BLOCKED_ROW_MAJOR = 0,   /**< canonical blocks, rows contiguous: straight from a mapped file */
    PW_LAYOUT_BLOCKED_INPUT_MAJOR = 1, /**< blocks ordered b*out + o */
    PW_LAYOUT_ROW_TILED = 2,           /**< tiles of nr rows, blocks interleaved */
    PW_LAYOUT_PACKED = 3               /**< a kernel family's private packed form (see family) */
} pw_layout_class;

/** Activation form a kernel consumes (it is made from the f32 X by the dispatcher). */
typedef enum pw_activation {
    PW_ACT_F32 = 0,   /**< X as given */
    PW_ACT_Q8_32 = 1, /**< int8 blocks of 32 with an f32 scale (GGUF Q8_0 pairing) */
    PW_ACT_Q8_256 = 2,/**< int8 blocks of 256 with sums per 16 (GGUF Q8_K pairing) */
    PW_ACT_QD8 = 3    /**< a whole row as int8 with one scale and zero point (QC4W's dynamic
                           int8, see qc4w.h) */
} pw_activation;

/** What a weight is: GGUF block-format bytes (a view), raw per-channel int4 (QC4W) or raw
 *  blockwise int4 (QB4W). */
typedef enum pw_weight_kind {
    PW_WEIGHT_BLOCKS = 0, /**< a ::pw_view of a ::pw_format (GGUF formats, F32/F16/BF16) */
    PW_WEIGHT_QC4W = 1,   /**< ::pw_qc4w_weights (qc4w.h) */
    PW_WEIGHT_QB4W = 2    /**< ::pw_qb4w_weights (qb4w.h) */
} pw_weight_kind;

/** What a kernel is, as listed by pw_kernel_info_get(). Strings are static. */
typedef struct pw_kernel_info {
    const char *name;       /**< encodes what it reads: "<format>_<layout>_<isa>", e.g. "q4_0_rm_avx2" */
    const char *key;        /**< kernel key: op, operand formats, layout class, features */
    pw_weight_kind kind;    /**< the kind of weight it multiplies */
    pw_format format;       /**< weight format (::PW_WEIGHT_BLOCKS; unused for QC4W) */
    pw_layout_class layout; /**< weight layout it reads */
    const char *family;     /**< packed family name (PW_LAYOUT_PACKED), else NULL */
    int32_t tile_rows;      /**< nr: output rows per tile (1 for row-major kernels) */
    int32_t tile_batch;     /**< mr: rows of X per tile */
    pw_activation activation; /**< what the kernel makes from X */
    uint32_t features;      /**< required ::pw_cpu_feature bits */
    const char *isa;        /**< "scalar", "avx2", "avx512vnni", "dotprod", "i8mm", ... */
    int is_reference;       /**< the decode-then-dot oracle */
} pw_kernel_info;

/** Number of kernels in the list compiled into this library (all ISAs of this arch). */
PW_API size_t pw_kernel_count(void);
/** Kernel @p index of the list, or NULL past the end. */
PW_API const pw_kernel_info *pw_kernel_info_get(size_t index);
/** Find a kernel by name (::PW_ERR_NOT_FOUND naming it otherwise). */
PW_API pw_status pw_kernel_find(pw_context *ctx, const char *name, size_t *index);
/** Nonzero when kernel @p index may run in @p ctx (its features are usable). */
PW_API int pw_kernel_usable(const pw_context *ctx, size_t index);

/**
 * One-shot dispatch on a view (@ref layout_rules), as the spec's KernelDispatch.matmul: the best
 * kernel that reads @p w's layout as it is. With prepack_weights set in the
 * context it may instead pick a kernel of another layout and relayout the
 * weight for this call only (an adapter event every call: use ::pw_weight to
 * pack once). With no kernel for the layout, the reference kernel runs and a
 * fallback event says why.
 *
 * @param ctx context: CPU features, threads, trace sink, prepack_weights
 * @param x  n x in floats, row-major (row stride in)
 * @param n  rows of X (1 = GEMV)
 * @param w  2-D `[out, in]` weight view (block_axis 1); a view labelled
 *           `[in, out]` (block_axis 0, e.g. a GGUF opened AS_STORED) is
 *           refused with ::PW_ERR_ORIENTATION naming PW_ORIENT_OUT_IN
 * @param y  n x out floats, row-major (row stride out), fully overwritten
 */
PW_API pw_status pw_matmul_view(pw_context *ctx, const float *x, int64_t n, const pw_view *w,
                                float *y);

#ifdef __cplusplus
}
#endif
#endif
