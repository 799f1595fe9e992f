/**
 * @file view.h
 * @brief Views: a weight's format, shape and byte layout carried in one value.
 *
 * @section layout_rules Layout rules
 *
 * A 2-D weight is logically `[out, in]`. Its blocks tile the input dimension,
 * so a row of `in` elements is `bpr = in / block_size` blocks and the weight is
 * an `out x bpr` grid of blocks. A view addresses block `(o, b)` at
 *
 *     offset + o * strides[0] + b * strides[1]      (in blocks)
 *
 * and the block order is nothing more than those strides:
 *
 * | order                         | strides      | flat block index | who      |
 * |-------------------------------|--------------|------------------|----------|
 * | ::PW_ORDER_ROW_MAJOR          | `[bpr, 1]`   | `o*bpr + b`      | files, quantizers, the reference |
 * | ::PW_ORDER_INPUT_BLOCK_MAJOR  | `[1, out]`   | `b*out + o`      | packed kernels |
 * | ::PW_ORDER_ROW_TILED (nr)     | tiles of nr rows, blocks interleaved | `(o/nr)*nr*bpr + b*nr + o%nr` | SIMD kernels |
 *
 * The two orders coincide only when `bpr == 1` or `out == 1`; for any wider
 * weight, reading one as the other gives a block-permuted matrix of finite,
 * plausible, wrong numbers. Hence the rules:
 *
 * 1. A file's bytes are ROW_MAJOR. A loader never relayouts.
 * 2. A kernel declares the order it reads; nothing guesses.
 * 3. A conversion is visible: it allocates in an arena and emits an adapter
 *    trace event with its byte count (pw_view_prepack()).
 * 4. pw_view_get() and pw_view_to_float() mean the same thing in every order:
 *    they read through the layout.
 * 5. The byte semantics of an order are public API; changing them is never a
 *    patch release.
 *
 * A view is a plain value: copying it is free and safe. It never owns its
 * bytes; @ref pw_view.storage says who does (the caller, an arena, or a GGUF
 * mapping), and that owner must outlive every view of its bytes.
 */
#ifndef PACKWISE_VIEW_H
#define PACKWISE_VIEW_H

#include "packwise/base.h"
#include "packwise/format.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Highest rank a view may have. */
#define PW_MAX_RANK 4

/**
 * Block order of a 2-D view, derived from its strides (see @ref layout_rules).
 * No order is 0: a zeroed ::pw_layout or ::pw_block_grid names none, and every
 * function that takes one refuses it (::PW_ERR_INVALID_ARGUMENT), so bytes
 * whose order the caller forgot to name are never read in a default order.
 */
typedef enum pw_order {
    PW_ORDER_ROW_MAJOR = 1,         /**< strides [bpr, 1]: what files hold */
    PW_ORDER_INPUT_BLOCK_MAJOR = 2, /**< strides [1, out]: what packed kernels read */
    PW_ORDER_ROW_TILED = 3,         /**< tiles of nr rows, blocks interleaved inside a tile */
    PW_ORDER_STRIDED = 4            /**< none of the above (e.g. a transposed view) */
} pw_order;

/** Who owns the bytes a view reads. */
typedef enum pw_storage {
    PW_STORAGE_BORROWED = 0, /**< the caller's memory; the caller keeps it alive */
    PW_STORAGE_ARENA = 1,    /**< an arena's memory; valid until the arena is reset or destroyed */
    PW_STORAGE_MAPPED = 2    /**< a GGUF or cache file mapping; valid until the file is closed */
} pw_storage;

/** A layout a conversion can target: an order and, for ::PW_ORDER_ROW_TILED, its nr. */
typedef struct pw_layout {
    pw_order order;    /**< the block order (0 names none: refused) */
    int64_t tile_rows; /**< nr for ::PW_ORDER_ROW_TILED, otherwise ignored (0) */
} pw_layout;

/** The canonical layout, what files hold (a C99 compound literal). */
#define PW_LAYOUT_ROW_MAJOR ((pw_layout){PW_ORDER_ROW_MAJOR, 0})
/** The spec's kernel order: input-block-major. */
#define PW_LAYOUT_INPUT_BLOCK_MAJOR ((pw_layout){PW_ORDER_INPUT_BLOCK_MAJOR, 0})

/**
 * A view of a block-quantized (or float) tensor. Fill it with pw_view_init()
 * and derive others with pw_view_narrow(), pw_view_transpose() and
 * pw_view_prepack(); change fields by hand only if you know the invariants
 * pw_view_check() verifies.
 *
 * Elements: @c shape. Blocks: one axis (@c block_axis) is tiled by
 * blocks of the format's block_size; the block grid has the same dims as
 * @c shape except `shape[block_axis] / block_size` on that axis.
 */
typedef struct pw_view {
    pw_format format;             /**< format of the blocks */
    int32_t rank;                 /**< 1..PW_MAX_RANK */
    int64_t shape[PW_MAX_RANK];   /**< logical shape in elements */
    int64_t strides[PW_MAX_RANK]; /**< per axis of the block grid, in blocks */
    int64_t offset;               /**< first block, in blocks from @ref data */
    int32_t block_axis;           /**< axis the blocks tile: rank-1 for [out, in], 0 for a transposed 2-D view */
    int64_t tile_rows;            /**< 2-D row-tiled views: rows per tile (nr); 0 otherwise */
    int64_t tile_stride;          /**< 2-D row-tiled views: blocks from one tile to the next */
    const uint8_t *data;          /**< base of the storage */
    uint64_t data_bytes;          /**< bytes readable from @ref data */
    pw_storage storage;           /**< who owns @ref data */
    const char *name;             /**< tensor name for traces and messages, or NULL (borrowed) */
    /** The bytes' identity when they are a tensor of a GGUF file's mapping, as
     *  pw_gguf_tensor_view() sets it (a hash of the file's header, metadata,
     *  tensor table, size and modification time, and the tensor's name, type,
     *  shape, offset and three 64-byte samples of its bytes): a weights cache
     *  (cache.h) finds the tensor's packed forms by it without reading the rest
     *  of the bytes. {0, 0} = unknown: a cache hashes the content instead.
     *  Every function that derives a view of other bytes (narrow, transpose,
     *  a prepack that copies, materialize) clears it; a view edited by hand
     *  must clear it too. */
    uint64_t source_id[2];
} pw_view;

/**
 * A contiguous view over caller bytes in the layout they are in (@ref layout_rules).
 * The caller names the layout: there is no default, so bytes in the kernel
 * order can never be read as canonical ones, or the other way round.
 * @param ctx    context for the failure message
 * @param out    receives the view
 * @param format format of the blocks
 * @param rank   1..PW_MAX_RANK
 * @param shape  @p rank sizes in elements; the last axis is tiled by blocks
 *               and must be a whole number of them (::PW_ERR_SHAPE otherwise)
 * @param layout the order the bytes are in: ::PW_LAYOUT_ROW_MAJOR (what files
 *               hold; any rank), ::PW_LAYOUT_INPUT_BLOCK_MAJOR or
 *               ::PW_ORDER_ROW_TILED with its nr (rank 2, `[out, in]`, out a
 *               whole number of tiles). A layout naming no order (a zeroed
 *               one) or ::PW_ORDER_STRIDED is refused with
 *               ::PW_ERR_INVALID_ARGUMENT.
 * @param data   the tensor's bytes; borrowed
 * @param bytes  bytes readable at @p data; at least the tensor's size
 *               (::PW_ERR_SHAPE naming both sizes otherwise)
 */
PW_API pw_status pw_view_init(pw_context *ctx, pw_view *out, pw_format format, int32_t rank,
                              const int64_t *shape, pw_layout layout, const void *data,
                              uint64_t bytes);

/**
 * Check every invariant of a hand-made view (bounds included). The element
 * count and the dense byte size (blocks x block bytes) must each fit int64,
 * even for a view whose strides are 0 (a broadcast view reads one block but
 * decodes to every element): ::PW_ERR_OVERFLOW otherwise.
 */
PW_API pw_status pw_view_check(pw_context *ctx, const pw_view *view);

/**
 * Block order of the last two axes, derived from the strides (rank 1: ROW_MAJOR).
 * When `bpr == 1` or there is one row the orders coincide and ROW_MAJOR is
 * reported. A transposed view (block_axis != rank-1) is ::PW_ORDER_STRIDED.
 */
PW_API pw_order pw_view_order(const pw_view *view);

/** The view's layout: its order and, for row-tiled views, nr. */
PW_API pw_layout pw_view_layout(const pw_view *view);

/** Name of an order: "row_major", "input_block_major", "row_tiled", "strided". */
PW_API const char *pw_order_name(pw_order order);

/**
 * Name of a layout as trace events show it: "row_major",
 * "input_block_major", "row_tiled_8" (nr appended). Writes into @p buffer.
 */
PW_API const char *pw_layout_name(pw_layout layout, char *buffer, size_t capacity);

/** Number of elements (product of the shape); -1 when it does not fit int64
 *  (pw_view_check() refuses such a view). */
PW_API int64_t pw_view_elements(const pw_view *view);
/** Number of blocks (elements / block_size); -1 as pw_view_elements(). */
PW_API int64_t pw_view_blocks(const pw_view *view);
/** Bytes the view's blocks occupy when packed densely (blocks * block_bytes);
 *  UINT64_MAX when that does not fit int64 (pw_view_check() refuses such a view). */
PW_API uint64_t pw_view_bytes(const pw_view *view);

/**
 * Narrow one axis to [start, start + length). Rows may take any range (on a
 * row-tiled view, whole tiles only); the block axis only whole blocks
 * (::PW_ERR_SHAPE naming the block size otherwise). No bytes move.
 */
PW_API pw_status pw_view_narrow(pw_context *ctx, const pw_view *src, int32_t axis,
                                int64_t start, int64_t length, pw_view *out);

/**
 * Index one axis at @p index and drop it: the result has rank - 1 axes (a 3-D
 * expert weight [E, out, in] at axis 0 gives expert @p index's 2-D [out, in]
 * view, usable wherever a 2-D weight is). No bytes move; the result keeps the
 * order of its last two axes. Refused (::PW_ERR_SHAPE): a rank-1 view, the axis
 * the blocks tile (that would cut blocks), a row-tiled view, an index outside
 * the axis.
 */
PW_API pw_status pw_view_select(pw_context *ctx, const pw_view *src, int32_t axis, int64_t index,
                                pw_view *out);

/**
 * Swap the last two axes: metadata only, no bytes move. The result reads the
 * transposed matrix through get/to_float, but its blocks now tile axis 0, so
 * kernels refuse it: to multiply by a weight's transpose use pw_matmul_wt().
 */
PW_API pw_status pw_view_transpose(pw_context *ctx, const pw_view *src, pw_view *out);

/** Byte address of block (row, block) of a 2-D view, in its grid coordinates. */
PW_API const uint8_t *pw_view_block_ptr(const pw_view *view, int64_t row, int64_t block);

/** Element at @p index (view->rank coordinates), decoded to float. */
PW_API pw_status pw_view_get(pw_context *ctx, const pw_view *view, const int64_t *index,
                             float *value);

/**
 * Decode the whole view to floats in logical row-major order of its shape,
 * reading through its layout (rule 4 of @ref layout_rules).
 * @param ctx    context for the failure message
 * @param view   any valid view, in any order
 * @param dst    receives the floats
 * @param count  floats available at @p dst; at least pw_view_elements()
 */
PW_API pw_status pw_view_to_float(pw_context *ctx, const pw_view *view, float *dst,
                                  size_t count);

/**
 * Bring a 2-D `[out, in]` view into @p target layout (@ref layout_rules, rule 3).
 *
 * When the view is already in that layout, *out = *src: no copy, no event.
 * A weight one block wide whose blocks lie one after another is in every
 * layout at once (each puts block (o, 0) at flat index o): *out views the
 * same bytes (same data pointer) labelled in @p target, with no copy and no
 * event.
 * Otherwise the blocks are copied into @p arena, an adapter event is traced
 * (tensor name, bytes copied, from, to), and *out views the same matrix in the
 * new layout (dense, ::PW_STORAGE_ARENA). ::PW_ORDER_ROW_TILED needs
 * `out % nr == 0`. A transposed view is refused (::PW_ERR_LAYOUT): see
 * pw_view_transpose(). When no kernel usable in @p ctx reads the result as it
 * is (a product over it would run the reference kernel), a ::PW_TRACE_WARNING
 * event says so and names the layouts the format's kernels read;
 * pw_weight_create() packs a view in any order into the form they read.
 */
PW_API pw_status pw_view_prepack(pw_context *ctx, const pw_view *src, pw_layout target,
                                 pw_arena *arena, pw_view *out);

/**
 * A dense ROW_MAJOR copy of @p src in @p arena (a narrowed view becomes
 * contiguous). Materialising the transpose of a block-quantized weight would
 * need requantization and is refused with ::PW_ERR_LAYOUT naming
 * pw_matmul_wt(); for F32/F16/BF16 it is a plain transpose.
 */
PW_API pw_status pw_view_materialize(pw_context *ctx, const pw_view *src, pw_arena *arena,
                                     pw_view *out);

/**
 * The spec's orientation heuristic for raw bytes of unknown origin: refuse
 * (::PW_ERR_ORIENTATION, naming PW_ORIENT_OUT_IN) a weight described as
 * `[rows, in]` when @p rows is a whole number of blocks and @p in is not,
 * which is what a ggml ne-order label produces. Quiet when it cannot tell
 * (both aligned). Views from a GGUF file carry their orientation in
 * block_axis and need no heuristic.
 */
PW_API pw_status pw_require_out_in(pw_context *ctx, int64_t rows, int64_t in, pw_format format);

/* ------------------------------------------------------------------------ */
/* Bytes-level converters, for converter authors holding raw bytes          */
/* ------------------------------------------------------------------------ */

/**
 * Describes raw block bytes: a `rows x blocks_per_row` grid of blocks of
 * @p block_bytes each, currently in @p layout.
 */
typedef struct pw_block_grid {
    int64_t rows;           /**< rows (out) */
    int64_t blocks_per_row; /**< blocks per row (in / block_size) */
    int64_t block_bytes;    /**< bytes per block */
    pw_layout layout; /**< the order the bytes ARE in */
} pw_block_grid;

/**
 * Copy block bytes from the layout they are in (@p grid->layout) into
 * @p target (the orders are defined in @ref layout_rules). The caller names both, so converting to the layout the bytes are
 * already in is a plain copy and a double permutation cannot happen.
 * @p src and @p dst must not overlap; both hold exactly
 * rows * blocks_per_row * block_bytes bytes (::PW_ERR_SHAPE otherwise), a
 * product that must fit int64 (::PW_ERR_OVERFLOW otherwise).
 */
PW_API pw_status pw_bytes_reorder(pw_context *ctx, const pw_block_grid *grid, const void *src,
                                  uint64_t src_bytes, pw_layout target, void *dst,
                                  uint64_t dst_bytes);

/** pw_bytes_reorder() to ::PW_ORDER_INPUT_BLOCK_MAJOR (the spec's kernel order). */
PW_API pw_status pw_bytes_to_kernel_order(pw_context *ctx, const pw_block_grid *grid,
                                          const void *src, uint64_t src_bytes, void *dst,
                                          uint64_t dst_bytes);

/** pw_bytes_reorder() to ::PW_ORDER_ROW_MAJOR (canonical, what files hold). */
PW_API pw_status pw_bytes_to_canonical_order(pw_context *ctx, const pw_block_grid *grid,
                                             const void *src, uint64_t src_bytes, void *dst,
                                             uint64_t dst_bytes);

/**
 * Flat index of block (o, b) in @p layout for a grid of @p rows x
 * @p blocks_per_row; -1 when the arguments do not fit: (o, b) outside the
 * grid, a bad tile, ::PW_ORDER_STRIDED, or a grid of more than INT64_MAX
 * blocks.
 */
PW_API int64_t pw_layout_flat_index(pw_layout layout, int64_t rows, int64_t blocks_per_row,
                                    int64_t o, int64_t b);

#ifdef __cplusplus
}
#endif
#endif
