/**
 * @file fixtures.h
 * @brief Layout fixtures and `disagreement`, for converters in other repositories.
 *
 * A converter that writes block bytes in some order proves them right by
 * comparing against the same bytes packwise's own tests use (spec: "For a
 * downstream repository"). Two kinds of fixture:
 *
 * - **Tag fixtures** check block ORDER. Block (o, b) of a `rows x blocks`
 *   grid gets the canonical index `id = o * blocks + b`, and every byte of it
 *   is a function of (id, position): the first `min(4, block_bytes)` bytes
 *   spell `id` (little-endian, each byte XOR a fixed per-position mask) so a
 *   block's bytes name it, and byte p >= 4 is `(167 * p + h(id)) mod 256`, so
 *   bytes are distinct inside a block of up to 256 bytes and a changed or
 *   swapped byte is caught at its position. (A block of 4 bytes or fewer is
 *   all index, so there a changed byte reads as another block's bytes and is
 *   reported as such, at the right slot.) Limit: `rows * blocks` must be
 *   below 2^(8 * min(4, block_bytes)) (65536 for the 2-byte F16/BF16 "blocks",
 *   2^32 otherwise; ::PW_FIXTURE_MAX_BLOCKS caps it further); within it no two
 *   blocks share bytes. Tag bytes are not meant to decode to sensible values.
 * - **Value fixtures** check what the bytes MEAN: a small weight per format,
 *   built from chosen integer quants and scales, whose decoded values are
 *   known exactly. They catch nibble order, scale bit packing and sign
 *   conventions, which tags cannot.
 *
 * Fixtures are three blocks wide by default: at one block per row the two
 * orders coincide and a test passes whichever convention the code holds.
 */
#ifndef PACKWISE_FIXTURES_H
#define PACKWISE_FIXTURES_H

#include "packwise/base.h"
#include "packwise/format.h"
#include "packwise/view.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Default fixture rows. */
#define PW_FIXTURE_DEFAULT_ROWS 5
/** Default fixture blocks per row: three, so the two orders differ. */
#define PW_FIXTURE_DEFAULT_BLOCKS 3
/** Largest rows * blocks a tag fixture may have (also bounded by the block size, above). */
#define PW_FIXTURE_MAX_BLOCKS (1LL << 28)

/** Bytes of a tag fixture: rows * blocks * block_bytes (checked). */
PW_API pw_status pw_fixture_bytes(pw_context *ctx, pw_format format, int64_t rows, int64_t blocks,
                                  uint64_t *bytes);

/**
 * Write the tag fixture of a `rows x blocks` grid in @p layout (canonical =
 * ::PW_ORDER_ROW_MAJOR, the spec's kernel order = ::PW_ORDER_INPUT_BLOCK_MAJOR,
 * or a row-tiled order). @p dst_bytes must equal pw_fixture_bytes().
 */
PW_API pw_status pw_fixture_tags(pw_context *ctx, pw_format format, int64_t rows, int64_t blocks,
                                 pw_layout layout, void *dst, uint64_t dst_bytes);

/** What pw_disagreement() found. */
typedef enum pw_disagreement_kind {
    PW_AGREE = 0,          /**< the bytes are the fixture */
    PW_WRONG_BLOCK = 1,    /**< a slot holds another block's bytes (found_row, found_block) */
    PW_WRONG_BYTE = 2,     /**< a slot holds its own block with a byte changed (byte_index) */
    PW_UNKNOWN_BYTES = 3,  /**< a slot holds bytes of no block of the fixture */
    PW_SHORT = 4,          /**< the buffer is shorter than the fixture (row, block: the first
                                missing block) */
    PW_LONG = 5            /**< the buffer is longer than the fixture */
} pw_disagreement_kind;

/** Report of pw_disagreement(). */
typedef struct pw_disagreement_report {
    pw_disagreement_kind kind; /**< ::PW_AGREE or what is wrong */
    int64_t row;               /**< the first misplaced block's row o */
    int64_t block;             /**< the first misplaced block's input block b */
    int64_t expected_flat;     /**< where (o, b) belongs in the checked layout (block index) */
    int64_t found_row;         /**< PW_WRONG_BLOCK: the row of the block whose bytes are there */
    int64_t found_block;       /**< PW_WRONG_BLOCK: its input block */
    int64_t byte_index;        /**< PW_WRONG_BYTE: offset inside the block */
    uint64_t length;           /**< bytes given */
    uint64_t expected_length;  /**< bytes the fixture has */
    int other_layout;          /**< nonzero when every block sits where the other order
                                    (row-major vs input-block-major) puts it */
    char message[512];         /**< one line naming all of the above; "" when they agree */
} pw_disagreement_report;

/**
 * Compare @p bytes with the tag fixture of a `rows x blocks` grid in
 * @p layout. Returns ::PW_OK whether or not they agree (bad arguments are the
 * only errors); @p report->kind is ::PW_AGREE when they do. A buffer of
 * another length than the fixture's is reported first, as ::PW_SHORT or
 * ::PW_LONG, with both lengths at the start of the message and whether it is a
 * whole number of blocks (the usual cause: a wrong row or block count, which
 * would otherwise make every block look misplaced). Otherwise @p report->kind
 * and @p report->message name the first block in the wrong place (scanning in the
 * layout's own flat order), where it was expected (flat index and order), and
 * what was found there (which block's bytes, a changed byte, or a short or
 * long buffer).
 */
PW_API pw_status pw_disagreement(pw_context *ctx, const void *bytes, uint64_t length,
                                 pw_format format, int64_t rows, int64_t blocks, pw_layout layout,
                                 pw_disagreement_report *report);

/**
 * The value fixture of @p format: a ROW_MAJOR weight of *rows x *blocks
 * blocks whose decoded values are exactly @p values (row-major floats).
 * Call with NULL buffers to learn the sizes (*bytes, *count).
 */
PW_API pw_status pw_fixture_values(pw_context *ctx, pw_format format, void *dst, uint64_t *bytes,
                                   float *values, uint64_t *count, int64_t *rows,
                                   int64_t *blocks);

struct pw_qc4w_weights;

/** A kernel family's packed form, as pw_pack_family() describes it. */
typedef struct pw_packed_form {
    const char *family; /**< the family's name (static string) */
    int32_t nr;         /**< output rows per tile */
    int32_t kr;         /**< k values per row per interleave step */
    int32_t sr;         /**< sub-blocks (1 when unused) */
    int32_t group;      /**< k values sharing one scale (0: one per row) */
    int32_t version;    /**< packer version */
    uint64_t bytes;     /**< bytes of the packed form */
} pw_packed_form;

/**
 * The bytes kernel family @p family (a name of ::pw_kernel_info.family) packs
 * from @p w, a 2-D `[out, in]` view of a format the family packs, in any
 * order: a packed form's fixture, for converter authors proving their bytes.
 * @p form receives the family's description; with @p dst NULL only that. The
 * packer is portable: any family of this build can be packed on any CPU.
 * ::PW_ERR_NOT_FOUND for an unknown family, ::PW_ERR_UNSUPPORTED for a family
 * of another format, ::PW_ERR_INVALID_ARGUMENT when @p capacity is too small.
 */
PW_API pw_status pw_pack_family(pw_context *ctx, const pw_view *w, const char *family,
                                pw_packed_form *form, void *dst, uint64_t capacity);

/** As pw_pack_family(), for raw QC4W weights (qc4w.h) and a QC4W family. */
PW_API pw_status pw_pack_family_qc4w(pw_context *ctx, const struct pw_qc4w_weights *w,
                                     const char *family, pw_packed_form *form, void *dst,
                                     uint64_t capacity);

#ifdef __cplusplus
}
#endif
#endif
