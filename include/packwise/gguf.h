/**
 * @file gguf.h
 * @brief GGUF v2/v3 reader: validated header, metadata and tensor views.
 *
 * A GGUF file is untrusted input: every count, length, offset and shape is
 * checked (overflow included) before use, and a refusal names the field and
 * its byte offset in the context message.
 *
 * Rule 1 of the @ref layout_rules "layout rules": a file's bytes are ROW_MAJOR and the reader
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
    size_t struct_size;              /**< sizeof(pw_gguf_open_options), set by init */
    pw_gguf_orientation orientation; /**< default ::PW_ORIENT_AS_STORED, as the spec says */
    int no_mmap;                     /**< nonzero: read tensors with pw_gguf_tensor_read() only */
} pw_gguf_open_options;

/** Fill @p options with defaults (AS_STORED, mmap). */
PW_API void pw_gguf_open_options_init(pw_gguf_open_options *options);

/** An open GGUF file. */
typedef struct pw_gguf pw_gguf;

/**
 * Open and validate a GGUF file (v2 or v3, little-endian; v1 and big-endian
 * files are refused with ::PW_ERR_VERSION). Every header field is checked
 * before use; a refusal's message starts with @p path and names the field and
 * its byte offset. Memory used is bounded by a small multiple of the header's
 * size, whatever counts the header claims.
 *
 * With mmap (the default) tensor views point straight into the mapping
 * (::PW_STORAGE_MAPPED, no copy); the handle owns the mapping, which lives
 * until pw_gguf_close(), so close the file after the last use of its views.
 * (As with any mapping, a file truncated by another process while mapped
 * faults on access; open with no_mmap where that can happen.) With no_mmap
 * only the header is read into memory and tensors are read with
 * pw_gguf_tensor_read(); the handle keeps the file descriptor until close.
 */
PW_API pw_status pw_gguf_open(pw_context *ctx, const char *path,
                              const pw_gguf_open_options *options, pw_gguf **out);

/**
 * Parse a GGUF image held in memory (borrowed: @p data must outlive the
 * handle and its views, which are ::PW_STORAGE_BORROWED views of @p data).
 * Same checks and messages as pw_gguf_open(). Used by the fuzz target.
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
    const char *name;          /**< tensor name (UTF-8, NUL-terminated copy) */
    uint32_t gguf_type;        /**< type id as written in the file */
    int format_known;          /**< nonzero when packwise has a format for gguf_type */
    pw_format format;          /**< valid when format_known, else PW_FORMAT_COUNT */
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
 * A ROW_MAJOR view (@ref layout_rules) of tensor @p index straight into the mapping (no copy,
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


/**
 * Refuse a weight view labelled `[in, out]` (::PW_ERR_ORIENTATION, naming
 * PW_ORIENT_OUT_IN and the tensor). A view from a GGUF file carries its
 * orientation in block_axis: a 2-D view whose blocks do not tile its last axis
 * was opened ::PW_ORIENT_AS_STORED (or transposed) and cannot be fed to a
 * kernel as `[out, in]`, even when both dimensions are whole blocks (the case
 * pw_require_out_in()'s heuristic cannot see). Rank 1 always passes.
 */
PW_API pw_status pw_gguf_require_out_in(pw_context *ctx, const pw_view *weight);

/* ------------------------------------------------------------------------ */
/* Metadata                                                                 */
/* ------------------------------------------------------------------------ */

/** GGUF metadata value types; values are the file's type ids. */
typedef enum pw_gguf_type {
    PW_GGUF_TYPE_UINT8 = 0,
    PW_GGUF_TYPE_INT8 = 1,
    PW_GGUF_TYPE_UINT16 = 2,
    PW_GGUF_TYPE_INT16 = 3,
    PW_GGUF_TYPE_UINT32 = 4,
    PW_GGUF_TYPE_INT32 = 5,
    PW_GGUF_TYPE_FLOAT32 = 6,
    PW_GGUF_TYPE_BOOL = 7,   /**< one byte, 0 or 1 (anything else is refused at open) */
    PW_GGUF_TYPE_STRING = 8, /**< u64 length + bytes, no terminator in the file */
    PW_GGUF_TYPE_ARRAY = 9,  /**< element type + u64 count + elements; may nest */
    PW_GGUF_TYPE_UINT64 = 10,
    PW_GGUF_TYPE_INT64 = 11,
    PW_GGUF_TYPE_FLOAT64 = 12
} pw_gguf_type;

/** Name of a metadata type as GGUF documents it ("uint32", "string", ...); "unknown" otherwise. */
PW_API const char *pw_gguf_type_name(pw_gguf_type type);

/** Bytes one value of a fixed-size type takes in the file (0 for STRING, ARRAY, unknown). */
PW_API size_t pw_gguf_type_size(pw_gguf_type type);

/**
 * ggml's name of tensor type id @p gguf_type ("q4_K", "iq2_xxs", ...), also for
 * types packwise cannot decode; NULL for an id ggml does not define.
 */
PW_API const char *pw_gguf_tensor_type_name(uint32_t gguf_type);

/**
 * A handle to one metadata value (a KV's value or an array element). A plain
 * value, valid until pw_gguf_close(). Read it with the typed getters below;
 * they refuse (::PW_ERR_INVALID_ARGUMENT, naming both types) a handle of
 * another type: no getter converts.
 */
typedef struct pw_gguf_value {
    pw_gguf_type type;       /**< the value's type */
    pw_gguf_type array_type; /**< element type when type == ARRAY */
    uint64_t count;          /**< ARRAY: elements; STRING: bytes; otherwise 1 */
    uint64_t offset;         /**< byte offset of the value's payload in the file */
    const pw_gguf *owner_;   /**< private */
    int64_t node_;           /**< private */
} pw_gguf_value;

/** Number of metadata key-value pairs. */
PW_API int64_t pw_gguf_kv_count(const pw_gguf *gguf);

/**
 * Key-value pair @p index (0-based, file order). @p key receives the key,
 * NUL-terminated (keys are non-empty valid UTF-8 without NUL bytes: a file
 * with any other key is refused at open); @p key_len (may be NULL) its length in bytes;
 * @p value (may be NULL) a handle to the value.
 */
PW_API pw_status pw_gguf_kv_get(pw_context *ctx, const pw_gguf *gguf, int64_t index,
                                const char **key, uint64_t *key_len, pw_gguf_value *value);

/** Index of the pair whose key is @p key (::PW_ERR_NOT_FOUND naming it otherwise). */
PW_API pw_status pw_gguf_find_key(pw_context *ctx, const pw_gguf *gguf, const char *key,
                                  int64_t *index);

/** pw_gguf_find_key() + the value's handle. */
PW_API pw_status pw_gguf_find_value(pw_context *ctx, const pw_gguf *gguf, const char *key,
                                    pw_gguf_value *value);

/** Typed getters: the handle's type must be exactly the getter's (::PW_ERR_INVALID_ARGUMENT otherwise). */
/**@{*/
PW_API pw_status pw_gguf_value_u8(pw_context *ctx, const pw_gguf_value *v, uint8_t *out);
PW_API pw_status pw_gguf_value_i8(pw_context *ctx, const pw_gguf_value *v, int8_t *out);
PW_API pw_status pw_gguf_value_u16(pw_context *ctx, const pw_gguf_value *v, uint16_t *out);
PW_API pw_status pw_gguf_value_i16(pw_context *ctx, const pw_gguf_value *v, int16_t *out);
PW_API pw_status pw_gguf_value_u32(pw_context *ctx, const pw_gguf_value *v, uint32_t *out);
PW_API pw_status pw_gguf_value_i32(pw_context *ctx, const pw_gguf_value *v, int32_t *out);
PW_API pw_status pw_gguf_value_u64(pw_context *ctx, const pw_gguf_value *v, uint64_t *out);
PW_API pw_status pw_gguf_value_i64(pw_context *ctx, const pw_gguf_value *v, int64_t *out);
PW_API pw_status pw_gguf_value_f32(pw_context *ctx, const pw_gguf_value *v, float *out);
PW_API pw_status pw_gguf_value_f64(pw_context *ctx, const pw_gguf_value *v, double *out);
/**@}*/
/** BOOL: *out is 0 or 1. */
PW_API pw_status pw_gguf_value_bool(pw_context *ctx, const pw_gguf_value *v, int *out);

/**
 * STRING: @p out receives the bytes followed by a NUL the file does not have
 * (owned by the handle); @p len (may be NULL) the length in bytes, which is
 * authoritative. Policy: string VALUES are bytes, not checked for UTF-8 and
 * possibly holding NUL bytes (tokenizer vocabularies hold raw byte pieces);
 * only keys and tensor names must be UTF-8.
 */
PW_API pw_status pw_gguf_value_string(pw_context *ctx, const pw_gguf_value *v, const char **out,
                                      uint64_t *len);

/**
 * ARRAY: a handle to element @p index (< v->count). Works for every element
 * type: numbers, strings and nested arrays.
 */
PW_API pw_status pw_gguf_value_element(pw_context *ctx, const pw_gguf_value *v, uint64_t index,
                                       pw_gguf_value *element);

/**
 * ARRAY of a fixed-size type: the elements as stored, little-endian and
 * possibly unaligned (count * pw_gguf_type_size(array_type) bytes; read them
 * with memcpy). Valid until pw_gguf_close(). STRING and ARRAY elements are
 * refused: use pw_gguf_value_element().
 */
PW_API pw_status pw_gguf_value_array_data(pw_context *ctx, const pw_gguf_value *v,
                                          const void **data);

/* ------------------------------------------------------------------------ */
/* Writer                                                                   */
/* ------------------------------------------------------------------------ */

/**
 * Builds a GGUF v3 file that ggml reads: metadata in the order it is set,
 * then tensor records and data in the order tensors are added, each tensor's
 * data padded with zeros to the alignment (as ggml's own writer does).
 * Tensor data is borrowed until the write.
 */
typedef struct pw_gguf_writer pw_gguf_writer;

/**
 * Create an empty writer (alignment 32, no metadata, no tensors). Failures of
 * every writer call leave their message in @p ctx, which must outlive the writer.
 */
PW_API pw_status pw_gguf_writer_create(pw_context *ctx, pw_gguf_writer **out);
/** Destroy a writer. Accepts NULL. */
PW_API void pw_gguf_writer_destroy(pw_gguf_writer *w);

/**
 * Set the data alignment (bytes; a power of two). Stored in
 * the file as the u32 key `general.alignment`: updated in place when that key
 * exists, appended otherwise. Setting `general.alignment` with
 * pw_gguf_writer_set_u32() does the same; any other type for that key is refused.
 */
PW_API pw_status pw_gguf_writer_set_alignment(pw_gguf_writer *w, uint32_t alignment);

/**
 * Scalar and string setters. @p key must be valid UTF-8 without NUL bytes and
 * not yet set (::PW_ERR_DUPLICATE otherwise). Refused while an array is open.
 */
/**@{*/
PW_API pw_status pw_gguf_writer_set_u8(pw_gguf_writer *w, const char *key, uint8_t v);
PW_API pw_status pw_gguf_writer_set_i8(pw_gguf_writer *w, const char *key, int8_t v);
PW_API pw_status pw_gguf_writer_set_u16(pw_gguf_writer *w, const char *key, uint16_t v);
PW_API pw_status pw_gguf_writer_set_i16(pw_gguf_writer *w, const char *key, int16_t v);
PW_API pw_status pw_gguf_writer_set_u32(pw_gguf_writer *w, const char *key, uint32_t v);
PW_API pw_status pw_gguf_writer_set_i32(pw_gguf_writer *w, const char *key, int32_t v);
PW_API pw_status pw_gguf_writer_set_u64(pw_gguf_writer *w, const char *key, uint64_t v);
PW_API pw_status pw_gguf_writer_set_i64(pw_gguf_writer *w, const char *key, int64_t v);
PW_API pw_status pw_gguf_writer_set_f32(pw_gguf_writer *w, const char *key, float v);
PW_API pw_status pw_gguf_writer_set_f64(pw_gguf_writer *w, const char *key, double v);
PW_API pw_status pw_gguf_writer_set_bool(pw_gguf_writer *w, const char *key, int v);
/**@}*/
/** @p len bytes of @p s (any bytes, see pw_gguf_value_string()). */
PW_API pw_status pw_gguf_writer_set_string(pw_gguf_writer *w, const char *key, const char *s,
                                           uint64_t len);
/**
 * An array of @p count fixed-size elements of @p type, given as host values
 * of that type (uint16_t[] for UINT16, float[] for FLOAT32, ...; BOOL elements
 * are uint8_t 0 or 1).
 */
PW_API pw_status pw_gguf_writer_set_array(pw_gguf_writer *w, const char *key, pw_gguf_type type,
                                          const void *elements, uint64_t count);
/** An array of strings; @p lengths may be NULL for NUL-terminated strings. */
PW_API pw_status pw_gguf_writer_set_string_array(pw_gguf_writer *w, const char *key,
                                                 const char *const *strings,
                                                 const uint64_t *lengths, uint64_t count);
/** Copy any value read from a file (nested arrays included) under @p key. */
PW_API pw_status pw_gguf_writer_set_value(pw_gguf_writer *w, const char *key,
                                          const pw_gguf_value *value);

/**
 * Arrays built element by element, which is how nested arrays are made:
 * begin (with @p key at top level, NULL for an element of the open array),
 * push elements, end. The element type is fixed at begin; a push of another
 * type is refused. GGUF allows arrays of arrays (packwise reads 16 levels)
 * but ggml's reader refuses them: write them only for readers that accept them.
 */
PW_API pw_status pw_gguf_writer_array_begin(pw_gguf_writer *w, const char *key,
                                            pw_gguf_type element_type);
/** Push @p count fixed-size elements (host values, as pw_gguf_writer_set_array()). */
PW_API pw_status pw_gguf_writer_array_push(pw_gguf_writer *w, const void *elements,
                                           uint64_t count);
/** Push one string element of @p len bytes. */
PW_API pw_status pw_gguf_writer_array_push_string(pw_gguf_writer *w, const char *s, uint64_t len);
/** Close the innermost open array. */
PW_API pw_status pw_gguf_writer_array_end(pw_gguf_writer *w);

/**
 * Add a tensor. @p ne: @p n_dims (1..4) dims in ne order (ne[0] fastest, a
 * whole number of blocks); @p data: @p bytes bytes, exactly the tensor's size,
 * ROW_MAJOR as files hold; borrowed until the write. @p data may be NULL: the
 * tensor's bytes are zeros, left as a hole in the file (a sparse file).
 * Names are UTF-8 without NUL, at most 63 bytes (ggml's limit), unique.
 */
PW_API pw_status pw_gguf_writer_add_tensor(pw_gguf_writer *w, const char *name, pw_format format,
                                           int32_t n_dims, const int64_t *ne, const void *data,
                                           uint64_t bytes);

/**
 * As pw_gguf_writer_add_tensor() for a raw type id packwise may not decode
 * (e.g. to copy a tensor of unknown type): @p bytes is taken as given.
 */
PW_API pw_status pw_gguf_writer_add_tensor_raw(pw_gguf_writer *w, const char *name,
                                               uint32_t gguf_type, int32_t n_dims,
                                               const int64_t *ne, const void *data,
                                               uint64_t bytes);

/** Size in bytes of the file pw_gguf_writer_write() would write. */
PW_API pw_status pw_gguf_writer_file_size(pw_gguf_writer *w, uint64_t *bytes);

/**
 * Write the file: to a temporary beside @p path, synced, then renamed over it, so a
 * reader never sees half a file and a failed write (a full disk) leaves the old file
 * and no temporary. A symbolic link is followed (the file it names is replaced); a
 * destination that is not a regular file (directory, device, FIFO) is refused with
 * ::PW_ERR_INVALID_ARGUMENT and left alone. The writer stays usable.
 */
PW_API pw_status pw_gguf_writer_write(pw_gguf_writer *w, const char *path);

/** Write the file image into @p dst (at least pw_gguf_writer_file_size() bytes). */
PW_API pw_status pw_gguf_writer_write_memory(pw_gguf_writer *w, void *dst, uint64_t capacity);

#ifdef __cplusplus
}
#endif
#endif
