/**
 * @file gguf.h
 * @brief GGUF v2/v3 reader: validated header, metadata and tensor views.
 *
 * A GGUF file is untrusted input: every count, length, offset and shape is
 * checked (overflow included) before use, and a refusal names the field and
 * its byte offset in the context message.
 *
 * Rule 1 of @ref layout_rules: a file's bytes are ROW_MAJOR and the reader
 * never relayouts. GGUF writes dimensions in ne order (fastest first), so a
 * weight the engine calls `[out, in]` is written `ne = [in, out]`. The caller
 * states at open which labels it wants (::pw_gguf_orientation); the record
 * keeps the ne order either way.
 */
#ifndef PACKWISE_GGUF_H
#define PACKWISE_GGUF_H

#include "packwise/base.h"
#include "packwise/format.h"
#include "packwise/view.h"

#ifdef __cplusplus
extern "C" {
#endif

/** How 2-D tensor shapes are labelled. */
typedef enum pw_gguf_orientation {
    /** dims in ne order, as the file writes them: a 2-D weight is `[in, out]`,
     *  its view has block_axis 0 (blocks tile axis 0), and kernels refuse it */
    PW_ORIENT_AS_STORED = 0,
    /** 2-D weights reported as `[out, in]` (ne reversed); other ranks left alone.
     *  Nothing about the bytes changes. What new code should ask for. */
    PW_ORIENT_OUT_IN = 1
} pw_gguf_orientation;

/** Options for pw_gguf_open(); initialise with pw_gguf_open_options_init(). */
typedef struct pw_gguf_open_options {
    size_t struct_size;
    pw_gguf_orientation orientation; /**< default ::PW_ORIENT_AS_STORED, as the spec says */
    int no_mmap;                     /**< nonzero: read tensors with pw_gguf_tensor_read() only */
} pw_gguf_open_options;

PW_API void pw_gguf_open_options_init(pw_gguf_open_options *options);

/** An open GGUF file. */
typedef struct pw_gguf pw_gguf;

/**
 * Open and validate a GGUF file. With mmap (the default) tensor views point
 * straight into the mapping; the mapping lives until pw_gguf_close().
 */
PW_API pw_status pw_gguf_open(pw_context *ctx, const char *path,
                              const pw_gguf_open_options *options, pw_gguf **out);

/**
 * Parse a GGUF image held in memory (borrowed: @p data must outlive the
 * handle). Views borrow @p data. Used by the fuzz target.
 */
PW_API pw_status pw_gguf_open_memory(pw_context *ctx, const void *data, uint64_t size,
                                     const pw_gguf_open_options *options, pw_gguf **out);

/** Close the file and unmap it: every view of its tensors becomes invalid. Accepts NULL. */
PW_API void pw_gguf_close(pw_gguf *gguf);

/** GGUF version of the file (2 or 3). */
PW_API uint32_t pw_gguf_version(const pw_gguf *gguf);
/** Alignment of tensor data (general.alignment, default 32). */
PW_API uint64_t pw_gguf_alignment(const pw_gguf *gguf);
/** Byte offset of the tensor data section in the file. */
PW_API uint64_t pw_gguf_data_offset(const pw_gguf *gguf);
/** Size of the file in bytes. */
PW_API uint64_t pw_gguf_file_size(const pw_gguf *gguf);
/** The orientation the file was opened with. */
PW_API pw_gguf_orientation pw_gguf_orientation_of(const pw_gguf *gguf);

/** Number of tensors. */
PW_API int64_t pw_gguf_tensor_count(const pw_gguf *gguf);

/** What the header says about one tensor. Strings are owned by the handle. */
typedef struct pw_gguf_tensor_info {
    const char *name;
    uint32_t gguf_type;        /**< type id as written in the file */
    int format_known;          /**< nonzero when packwise has a format for gguf_type */
    pw_format format;          /**< valid when format_known */
    int32_t n_dims;            /**< as written, 1..4 */
    int64_t ne[PW_MAX_RANK];   /**< dims in ne order (ne[0] fastest), as written; unused = 1 */
    int32_t rank;              /**< == n_dims */
    int64_t shape[PW_MAX_RANK];/**< dims as labelled by the open orientation */
    uint64_t offset;           /**< absolute byte offset of the data in the file */
    uint64_t bytes;            /**< bytes of data (0 when the type is unknown) */
    uint64_t info_offset;      /**< byte offset of this tensor's header record */
} pw_gguf_tensor_info;

/** Header record of tensor @p index (0-based). */
PW_API pw_status pw_gguf_tensor_info_get(pw_context *ctx, const pw_gguf *gguf, int64_t index,
                                         pw_gguf_tensor_info *out);

/** Index of the tensor called @p name (::PW_ERR_NOT_FOUND naming it otherwise). */
PW_API pw_status pw_gguf_find_tensor(pw_context *ctx, const pw_gguf *gguf, const char *name,
                                     int64_t *index);

/**
 * A ROW_MAJOR view of tensor @p index straight into the mapping (no copy,
 * ::PW_STORAGE_MAPPED; valid until pw_gguf_close()). Labelled per the open
 * orientation: with AS_STORED a 2-D weight is `[in, out]` with block_axis 0;
 * with OUT_IN it is `[out, in]` with block_axis 1. An unknown type is refused
 * with ::PW_ERR_UNSUPPORTED naming the tensor and the type id.
 */
PW_API pw_status pw_gguf_tensor_view(pw_context *ctx, const pw_gguf *gguf, int64_t index,
                                     pw_view *out);

/**
 * Streaming access: read tensor @p index into @p dst (at least info.bytes)
 * with pread, for files opened without mmap (works with mmap too).
 */
PW_API pw_status pw_gguf_tensor_read(pw_context *ctx, const pw_gguf *gguf, int64_t index,
                                     void *dst, uint64_t dst_bytes);

/**
 * Label caller-held bytes of tensor @p index (read with pw_gguf_tensor_read)
 * as a view with the same shape and orientation pw_gguf_tensor_view() gives.
 */
PW_API pw_status pw_gguf_tensor_view_over(pw_context *ctx, const pw_gguf *gguf, int64_t index,
                                          const void *data, uint64_t bytes, pw_view *out);

#ifdef __cplusplus
}
#endif
#endif
