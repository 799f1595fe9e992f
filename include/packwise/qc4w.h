/**
 * @file qc4w.h
 * @brief QC4W fully connected: per-channel int4 weights, dynamic int8 (QD8)
 *        activations, bias and clamp, packed once and shared through a
 *        weights cache.
 *
 * A QC4W weight is N output channels by K input channels of int4 values
 * with one f32 scale per channel and an optional f32 bias per channel:
 *
 *     w_real[n, k] = scale[n] * w[n, k]              w[n, k] in -8 .. 7
 *
 * The model's (raw) form is described by ::pw_qc4w_weights: N rows of
 * ceil(K / 2) bytes, two values per byte along K, the low nibble holding the
 * even k. The nibble encodes w[n, k] either as a signed two's-complement int4
 * (kernel zero point 0) or as an unsigned 0..15 from which 8 is subtracted
 * (kernel zero point 8). A transposed source (::PW_QC4W_TRANSPOSED: K rows
 * of ceil(N / 2) bytes, nibbles paired along N) is accepted too; it is
 * converted to N x K, nibble by nibble, before packing.
 *
 * pw_qc4w_fc_create() packs the weight once for the best kernel the context
 * allows (tiles of nr channels, K in kr-value chunks interleaved across the
 * tile, weight sums, scales and bias after each tile; the layout belongs to
 * the kernel family and is never read by another family). Each run quantizes
 * every row of X to int8 with its own scale and zero point (QD8: the row's
 * min and max, zero exactly representable) and computes
 *
 *     y[i, n] = clamp((sum_k (a[i, k] - zp[i]) * w[n, k]) * (a_scale[i] * scale[n]) + bias[n],
 *                     min, max)
 *
 * with an exact integer sum. Operators created over the same raw weights
 * with one ::pw_weights_cache share one packed copy.
 */
#ifndef PACKWISE_QC4W_H
#define PACKWISE_QC4W_H

#include "packwise/base.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Flags of ::pw_qc4w_weights. */
enum pw_qc4w_flag {
    /** data is K rows of ceil(N / 2) bytes, nibbles paired along N (low nibble = even n) */
    PW_QC4W_TRANSPOSED = 1u << 0
};

/**
 * Raw QC4W weights, as the model holds them. Every pointer is borrowed and
 * only read, and only during pw_qc4w_fc_create(). Initialise with
 * pw_qc4w_weights_init(); new fields are only ever appended.
 */
typedef struct pw_qc4w_weights {
    size_t struct_size;  /**< sizeof(pw_qc4w_weights), set by init */
    int64_t out;         /**< N: output channels (elements), >= 1 */
    int64_t in;          /**< K: input channels (elements), >= 1; odd K is fine */
    const uint8_t *data; /**< N x ceil(K/2) bytes (K x ceil(N/2) when transposed); the unused
                              high nibble at the end of an odd-length row is ignored */
    const float *scale;  /**< N finite per-channel scales */
    const float *bias;   /**< N finite biases, or NULL for none */
    int32_t zero_point;  /**< 0: nibbles are signed -8..7; 8: nibbles are 0..15, value - 8 */
    uint32_t flags;      /**< bitwise OR of ::pw_qc4w_flag */
    const char *name;    /**< for messages and trace events; may be NULL */
} pw_qc4w_weights;

/** Zero everything and set struct_size. */
PW_API void pw_qc4w_weights_init(pw_qc4w_weights *weights);

/* ------------------------------------------------------------------------ */
/* Weights cache                                                            */
/* ------------------------------------------------------------------------ */

/**
 * A weights cache: packed weights keyed by the content of the raw weights
 * (a hash of the nibbles, scales and bias, with the shape, zero point and
 * flags) and by the identity of the packer (family, nr, kr, sr, packer
 * version). Operators created over equal weights for the same packer share
 * one packed copy. Safe to use from several threads at once (each with its
 * own context); packing happens under the cache's lock, so equal weights are
 * packed exactly once. Entries live until the cache is destroyed and the last
 * operator using it is destroyed.
 */
typedef struct pw_weights_cache pw_weights_cache;

/** Counters of a cache (a snapshot). */
typedef struct pw_weights_cache_stats {
    uint64_t hits;    /**< lookups served by an existing entry */
    uint64_t misses;  /**< lookups that packed a new entry */
    uint64_t entries; /**< packed weights held */
    uint64_t bytes;   /**< bytes of packed weights held */
} pw_weights_cache_stats;

/**
 * Create an empty cache. Packed bytes come from @p ctx's allocator (which
 * must then be safe to call from every thread that uses the cache); @p ctx
 * itself need not outlive the cache. Fails with ::PW_ERR_UNSUPPORTED in a
 * build without xxHash.
 */
PW_API pw_status pw_weights_cache_create(pw_context *ctx, pw_weights_cache **out);

/**
 * Release the caller's hold on the cache. Operators created with it keep
 * their packed weights; the memory goes when the last of them is destroyed.
 * Accepts NULL.
 */
PW_API void pw_weights_cache_destroy(pw_weights_cache *cache);

/** Read the counters. */
PW_API void pw_weights_cache_get_stats(pw_weights_cache *cache, pw_weights_cache_stats *stats);

/* ------------------------------------------------------------------------ */
/* Fully-connected operator                                                 */
/* ------------------------------------------------------------------------ */

/** A QC4W fully-connected operator: packed weights, clamp, chosen kernel and scratch. */
typedef struct pw_qc4w_fc pw_qc4w_fc;

/** Options of pw_qc4w_fc_create(); initialise with pw_qc4w_fc_options_init(). */
typedef struct pw_qc4w_fc_options {
    size_t struct_size;       /**< sizeof(pw_qc4w_fc_options), set by init */
    float min;                /**< output clamp, lower bound (init: -INFINITY) */
    float max;                /**< output clamp, upper bound (init: +INFINITY); min <= max */
    pw_weights_cache *cache;  /**< share packed weights through this cache; NULL = own copy */
    const char *kernel;       /**< force this QC4W kernel by name; NULL = the best usable */
} pw_qc4w_fc_options;

/** Defaults: no clamp, no cache, best kernel. */
PW_API void pw_qc4w_fc_options_init(pw_qc4w_fc_options *options);

/**
 * Validate @p weights, pick the kernel, and pack the weights once (or take
 * them from the cache). Refused, with a message naming the field: N or K of
 * zero or negative, a zero point other than 0 or 8, unknown flags, a NaN or
 * infinite scale or bias (the first bad channel is named), NULL data or
 * scale, min > max or a NaN bound, a size that overflows.
 * Trace events: the kernel chosen, the transposed source's conversion and
 * the packing (adapter, with bytes), the cache's hit or miss.
 * The operator belongs to @p ctx (runs must pass the same context, which must
 * outlive it) and is used by one thread at a time; each run uses the
 * context's threads.
 */
PW_API pw_status pw_qc4w_fc_create(pw_context *ctx, const pw_qc4w_weights *weights,
                                   const pw_qc4w_fc_options *options, pw_qc4w_fc **out);

/**
 * y = x * W^T (+ bias, clamped), f32 out.
 * @param ctx    context: threads, trace sink, ISA cap
 * @param op     the operator
 * @param batch  rows of x and y (>= 1)
 * @param x      batch x K floats, row-major; every value must be finite
 * @param y      batch x N floats, row-major, fully overwritten on success and
 *               untouched on failure
 * Steady state (same or smaller batch than an earlier run) allocates nothing.
 */
PW_API pw_status pw_qc4w_fc_run(pw_context *ctx, pw_qc4w_fc *op, int64_t batch, const float *x,
                                float *y);

/** As pw_qc4w_fc_run(), IEEE half out (round to nearest even after the clamp). */
PW_API pw_status pw_qc4w_fc_run_f16(pw_context *ctx, pw_qc4w_fc *op, int64_t batch,
                                    const float *x, uint16_t *y);

/** Destroy an operator (its packed weights go unless a cache still holds them). Accepts NULL. */
PW_API void pw_qc4w_fc_destroy(pw_qc4w_fc *op);

/** Name of the kernel the operator runs, GEMV and GEMM alike (static string; "" for NULL). */
PW_API const char *pw_qc4w_fc_kernel(const pw_qc4w_fc *op);

/** Bytes of the packed weights the operator reads. */
PW_API uint64_t pw_qc4w_fc_packed_bytes(const pw_qc4w_fc *op);

#ifdef __cplusplus
}
#endif
#endif
