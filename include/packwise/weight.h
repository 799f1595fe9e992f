/**
 * @file weight.h
 * @brief The operator: one prepared weight for every batch size, every weight kind.
 *
 * A ::pw_weight owns a weight's whole life. It is made from a GGUF view
 * (any block format, F32/F16/BF16: pw_weight_create()) or from raw QC4W
 * weights (pw_weight_create_qc4w(), qc4w.h), and then
 *
 *   1. **plans**, at creation and without packing anything: which kernel
 *      serves n = 1 and which serves n >= 2, which packed forms they read,
 *      and what those forms cost in bytes (pw_weight_info_get());
 *   2. **prepares** once: packs each planned form, or takes it from a
 *      ::pw_cache (cache.h), with one adapter or cache trace event per form
 *      (pw_weight_prepare(), or the first product that needs the form);
 *      once nothing reads the source any more, a source in a GGUF file's
 *      mapping is released from the process (its pages are re-read from
 *      the file if the view is used again);
 *   3. **runs** Y = X * W^T + bias, clamped, f32 or f16 out, quantizing X
 *      into the context's scratch (pw_matmul_wt(), pw_weight_run()).
 *
 * **Memory policy.** What a weight may hold is the policy's call, per
 * context (pw_context_options.memory_policy) with a per-weight override:
 *
 * | policy | holds |
 * |---|---|
 * | ::PW_MEMORY_COMPACT (default) | one form serving every batch size: the source's own bytes read in place, or one packed form of at most the source's bytes plus 3% (the fastest kernels that read one such form) |
 * | ::PW_MEMORY_FASTEST | the fastest kernel for n = 1 and for n >= 2, whatever forms they read (up to two packed forms) |
 * | ::PW_MEMORY_IN_PLACE | no copy: kernels read the source as it is (the reference kernel where none does) |
 *
 * QC4W raw weights are borrowed only while the weight is created, so a QC4W
 * weight always holds one packed form (it is packed at creation); under
 * ::PW_MEMORY_IN_PLACE it is refused.
 *
 * **Non-finite activations.** A row of X holding a NaN or an infinity gives
 * a row of NaN in Y, for every kernel and every weight kind (the reference
 * kernel's answer for NaN; an int8 kernel would otherwise quantize it into
 * finite, wrong numbers). Other rows are unaffected.
 *
 * **Threads.** A prepared weight is read-only: several contexts, one per
 * thread, may run the same weight at once, its packed bytes held once.
 * Preparation (explicit or on first use) is serialized by the weight's own
 * lock, so it is safe from any thread. Each run uses its own context's
 * threads, scratch and trace sink; a context is used by one thread at a time.
 * pw_weight_destroy() must not race with runs of the same weight.
 */
#ifndef PACKWISE_WEIGHT_H
#define PACKWISE_WEIGHT_H

#include "packwise/base.h"
#include "packwise/matmul.h"
#include "packwise/view.h"

#ifdef __cplusplus
extern "C" {
#endif

struct pw_cache;

/** Name of a policy: "compact", "fastest", "in_place" ("default" for 0). Never NULL. */
PW_API const char *pw_memory_policy_name(pw_memory_policy policy);
/** Parse a policy name as pw_memory_policy_name() writes it. */
PW_API pw_status pw_memory_policy_from_name(const char *name, pw_memory_policy *out);

/** Batch classes a weight serves (bits of ::pw_weight_options.serves). */
enum pw_serve {
    PW_SERVE_GEMV = 1u << 0, /**< n = 1 */
    PW_SERVE_GEMM = 1u << 1  /**< n >= 2 */
};

/** A prepared weight (see the file's description). */
typedef struct pw_weight pw_weight;

/** Options of pw_weight_create() and pw_weight_create_qc4w(); initialise with
 *  pw_weight_options_init(). New fields are only ever appended. */
typedef struct pw_weight_options {
    size_t struct_size;        /**< sizeof(pw_weight_options), set by init */
    const char *kernel;        /**< force this kernel (by name) for every batch size; NULL = plan */
    /** share packed forms through this cache (cache.h): forms already in it (packed by
     *  another weight, or in a cache file it opened) are served without packing, new
     *  ones are stored in it. NULL = the weight packs and owns its forms. The weight
     *  holds a reference: the cache may be closed first. */
    struct pw_cache *cache;
    pw_memory_policy policy;   /**< PW_MEMORY_DEFAULT = the context's */
    uint32_t serves;           /**< bitwise OR of ::pw_serve; 0 = both */
    float min;                 /**< output clamp, lower bound (init: -INFINITY) */
    float max;                 /**< output clamp, upper bound (init: +INFINITY); min <= max */
    /** out finite biases added to every row of Y (copied at creation), or NULL. For QC4W
     *  weights the descriptor's bias is used instead: setting both is refused. */
    const float *bias;
} pw_weight_options;

/** Defaults: the planned kernels, no cache, the context's policy, both batch classes,
 *  no clamp, no bias. */
PW_API void pw_weight_options_init(pw_weight_options *options);

/**
 * Plan a weight over @p w, a 2-D `[out, in]` view (@ref layout_rules), in any
 * order. Nothing is packed yet (see pw_weight_prepare()). The view's bytes are
 * borrowed: they must stay valid while the weight lives if the plan reads them
 * (info.reads_source), and until pw_weight_prepare() otherwise. Refused: a view
 * that is not 2-D, one labelled `[in, out]` (::PW_ERR_ORIENTATION naming
 * PW_ORIENT_OUT_IN), a forced kernel of another format or not usable here,
 * min > max or a NaN bound, a non-finite bias.
 */
PW_API pw_status pw_weight_create(pw_context *ctx, const pw_view *w,
                                  const pw_weight_options *options, pw_weight **out);

/**
 * The experts of a 3-D mixture-of-experts weight @p w `[E, out, in]` (as a GGUF
 * file holds `ffn_*_exps`), one pw_weight each: experts[e] is pw_weight_create() of
 * pw_view_select(w, 0, e), named "<name>[e]", with the same @p options (a bias, if
 * any, is every expert's; for per-expert biases create each from its selected view).
 * Each expert is planned and packed on its own, in the one form its policy gives a
 * 2-D weight, through the same cache; pw_matmul_wt_experts() runs rows through them.
 * @p count must be E. On failure nothing is left: every experts[e] is NULL.
 */
PW_API pw_status pw_weight_create_experts(pw_context *ctx, const pw_view *w,
                                          const pw_weight_options *options, pw_weight **experts,
                                          size_t count);

/** Free the weight and the forms it owns (forms held by a cache stay there until the
 *  cache goes). Accepts NULL. */
PW_API void pw_weight_destroy(pw_weight *weight);

/** What a weight's plan is and costs. Strings are static or owned by the weight. */
typedef struct pw_weight_info {
    size_t struct_size;          /**< sizeof(pw_weight_info): set it before the call */
    const char *name;            /**< tensor name ("" when none) */
    pw_weight_kind kind;         /**< block format or QC4W */
    int64_t out;                 /**< output rows (logical shape [out, in]) */
    int64_t in;                  /**< inputs per row */
    pw_memory_policy policy;     /**< the policy the plan follows (never DEFAULT) */
    const char *kernel_gemv;     /**< kernel for n = 1 ("" when not served) */
    const char *kernel_gemm;     /**< kernel for n >= 2 ("" when not served) */
    uint64_t source_bytes;       /**< the source's bytes (view: its blocks; QC4W: nibbles,
                                      scales and bias) */
    uint64_t packed_bytes;       /**< bytes of the packed forms the plan holds */
    int32_t forms;               /**< packed forms the plan holds (0: kernels read the source) */
    int32_t reads_source;        /**< nonzero: a kernel reads the source view at run time */
    int32_t prepared;            /**< nonzero: every planned form is ready */
    int32_t from_cache;          /**< forms served by a cache (packed by another weight or
                                      mapped from a cache file) */
} pw_weight_info;

/** Describe @p weight's plan. ::PW_ERR_INVALID_ARGUMENT when info->struct_size is 0. */
PW_API pw_status pw_weight_info_get(const pw_weight *weight, pw_weight_info *info);

/**
 * Pack (or take from the cache) every planned form now, on @p ctx's threads,
 * so that the first product packs nothing. Idempotent; safe to call from
 * several threads. Trace events go to @p ctx.
 */
PW_API pw_status pw_weight_prepare(pw_context *ctx, pw_weight *weight);

/** Element types of activations and outputs. */
typedef enum pw_dtype {
    PW_DTYPE_F32 = 0, /**< IEEE binary32 */
    PW_DTYPE_F16 = 1, /**< IEEE binary16 (outputs: rounded to nearest even after the clamp) */
    PW_DTYPE_BF16 = 2 /**< bfloat16 (activations only) */
} pw_dtype;

/** One product's operands; initialise with pw_run_args_init(). New fields are only
 *  ever appended. */
typedef struct pw_run_args {
    size_t struct_size;   /**< sizeof(pw_run_args), set by init */
    int64_t n;            /**< rows of X and Y (1 = GEMV) */
    const void *x;        /**< n rows of `in` values of x_type */
    int64_t ldx;          /**< elements between rows of x; 0 = in */
    void *y;              /**< n rows of `out` values of y_type, fully overwritten on success */
    pw_dtype y_type;      /**< F32 (default) or F16 */
    int64_t ldy;          /**< elements between rows of y; 0 = out */
    pw_dtype x_type;      /**< F32 (default), F16 or BF16: converted to f32 exactly, then as f32 X */
    float beta;           /**< 0 (default): Y = the product; otherwise Y = beta * Y + the product
                               (bias and clamp apply to the product), beta finite */
    int threads;          /**< this call's threads, as pw_context_set_call_threads():
                               0 (default) = what the context runs calls on now */
    pw_parallel_for_fn parallel_for; /**< this call's host parallel-for with `threads`
                               threads (0 = the context's count); NULL = none */
    void *parallel_for_user;         /**< passed to @c parallel_for */
} pw_run_args;

/** Zero everything and set struct_size (F32 output, dense rows). */
PW_API void pw_run_args_init(pw_run_args *args);

/**
 * Y = X * W^T (+ bias, clamped) (@ref layout_rules). A form not yet prepared is
 * prepared first (as pw_weight_prepare()). In steady state (same or smaller n
 * on the same context) a call allocates nothing and packs nothing. On failure
 * Y is untouched.
 */
PW_API pw_status pw_weight_run(pw_context *ctx, const pw_weight *weight, const pw_run_args *args);

/**
 * pw_weight_run() with f32 X and Y, dense rows.
 * @param ctx    context: threads, ISA cap, scratch, trace sink
 * @param x      n x in floats, row-major
 * @param n      rows of X (1 = GEMV)
 * @param weight the prepared weight
 * @param y      n x out floats, row-major, fully overwritten
 */
PW_API pw_status pw_matmul_wt(pw_context *ctx, const float *x, int64_t n, const pw_weight *weight,
                              float *y);

/** The most products one pw_matmul_wt_many() call takes (a layer's products fit many times). */
#define PW_MATMUL_MANY_MAX 64

/** One product of pw_matmul_wt_many(): its weight and where its Y goes. */
typedef struct pw_product {
    const pw_weight *weight; /**< the prepared weight */
    float *y;                /**< n rows of the weight's `out` f32 values, fully overwritten */
    int64_t ldy;             /**< elements between rows of y; 0 = out */
} pw_product;

/**
 * Several weights over the same X in one call, as a decode step runs them (Q, K and
 * V; gate and up): X is scanned once, quantized once per activation form the
 * weights' kernels read, and every product runs in one dispatch of the context's
 * threads instead of one each. Each y is bit for bit what pw_matmul_wt() writes for
 * its weight alone (bias, clamp and the NaN rows of non-finite X included). Every
 * weight must take `in` = the same row length (::PW_ERR_SHAPE naming the first that
 * does not); @p ldx is the elements between rows of x (0 = in). Nothing is written
 * when a check fails. @p count may be 0, and at most ::PW_MATMUL_MANY_MAX; in steady
 * state a call allocates nothing (its scratch is the context's).
 */
PW_API pw_status pw_matmul_wt_many(pw_context *ctx, const float *x, int64_t n, int64_t ldx,
                                   const pw_product *products, size_t count);

/**
 * Mixture-of-experts rows: row i of X goes through the weight experts[route[i]]
 * (route[i] < count), or through none when route[i] is -1 (row i of Y is then left
 * as it is). Bit for bit what gathering each expert's rows in order, one
 * pw_matmul_wt() per expert over them, and scattering the rows back gives; an expert
 * with no rows costs nothing. Every expert takes the same `in` and gives the same
 * `out` (::PW_ERR_SHAPE otherwise); @p ldx, @p ldy: elements between rows (0 = in,
 * out). Allocates the gathered rows per call. Nothing is written when a check fails.
 */
PW_API pw_status pw_matmul_wt_experts(pw_context *ctx, const float *x, int64_t n, int64_t ldx,
                                      const pw_weight *const *experts, size_t count,
                                      const int32_t *route, float *y, int64_t ldy);

/**
 * Evict the bytes the weight's kernels read (its forms, and the source where a
 * kernel reads it in place) from every level of the CPU's caches, for
 * cold-start measurements. Returns nonzero when this CPU has an instruction
 * for it (x86-64: clflush; Arm64: dc civac), 0 when nothing was evicted.
 */
PW_API int pw_weight_evict(const pw_weight *weight);

/** Evict [p, p + bytes) from every level of the CPU's caches (see pw_weight_evict()). */
PW_API int pw_memory_evict(const void *p, size_t bytes);

/** Bytes the weight holds beyond the caller's memory: packed forms it owns (forms a
 *  cache holds are the cache's). */
PW_API uint64_t pw_weight_bytes(const pw_weight *weight);

#ifdef __cplusplus
}
#endif
#endif
