/**
 * @file cache.h
 * @brief Weights-cache files: pack once, for good, and map the result back.
 *
 * `packwise prepack MODEL.gguf -o MODEL.pwc` packs every 2-D weight for the
 * kernels this CPU's dispatch chooses (for GEMM, n >= 2, and for GEMV, n = 1,
 * where that kernel reads another packed family: on AVX-512 VNNI, Q4_0, Q4_K
 * and Q6_K GEMV read 32-row tilings, so those tensors get two entries) and
 * writes the packed bytes to a cache file of packwise's own (magic
 * "PWCACHE1", never GGUF: a file's GGUF bytes stay ROW_MAJOR, rule 1 of
 * @ref layout_rules). A program then opens the
 * GGUF and the cache together; pw_weight_create() with
 * ::pw_weight_options.cache serves each weight's packed form straight from
 * the cache's mapping: no packing, no adapter event.
 *
 * Every entry records the tensor's name, format and shape, the packed layout
 * (family, nr, kr, sr, group, packer version) and the kernel it was packed
 * for, a content hash of the canonical source bytes (the same key scheme as
 * the in-memory weights cache: XXH3-128 of the content, then the packer's
 * identity) and a checksum of the packed bytes. An entry whose source hash,
 * packer version or kernel does not match is not used: the weight is packed
 * again at load and a ::PW_TRACE_CACHE event says why. An entry whose checksum
 * fails, or whose bytes lie past the end of a truncated file, is refused the
 * same way; its bytes are never used.
 *
 * File layout (little-endian; data offsets are multiples of 4096 so packed
 * tensors map straight into kernel-order buffers):
 *
 *     [0, 4096)        header: magic, format version, sizes, offsets, checksum
 *     [4096, ...)      packed tensors, each page-aligned
 *     index            one 256-byte record per packed form, each with its own checksum
 *     strings          tensor names
 *
 * A cache file is untrusted input like a GGUF: every field is bounds- and
 * overflow-checked before use. Writing is crash-safe: a temporary file in the
 * same folder, fsync, rename.
 */
#ifndef PACKWISE_CACHE_H
#define PACKWISE_CACHE_H

#include "packwise/base.h"
#include "packwise/format.h"
#include "packwise/qc4w.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Format version of cache files this library writes (and the only one it reads). */
#define PW_CACHE_FORMAT_VERSION 1

/** An open, validated cache file (memory-mapped). */
typedef struct pw_cache pw_cache;

/**
 * Open and validate a cache file. A bad header (magic, version, checksum,
 * sizes) refuses the whole file; a bad index record only that entry (it is
 * then reported by pw_cache_entry_get() with a nonzero @c refused and a
 * reason, and never used).
 */
PW_API pw_status pw_cache_open(pw_context *ctx, const char *path, pw_cache **out);

/** Parse a cache image in memory (borrowed); for the fuzz target and tests. */
PW_API pw_status pw_cache_open_memory(pw_context *ctx, const void *data, uint64_t size,
                                      pw_cache **out);

/** Unmap and free. Every weight served from it must be destroyed first. Accepts NULL. */
PW_API void pw_cache_close(pw_cache *cache);

/** Number of index records. */
PW_API int64_t pw_cache_entry_count(const pw_cache *cache);

/** What one index record says (strings owned by the cache). */
typedef struct pw_cache_entry_info {
    const char *name;        /**< tensor name */
    pw_format format;        /**< source format */
    int64_t rows;            /**< out */
    int64_t in;              /**< in */
    const char *family;      /**< packed family */
    const char *kernel;      /**< kernel the bytes were packed for */
    int32_t nr;              /**< rows per tile */
    int32_t kr;              /**< k per interleave step */
    int32_t sr;              /**< sub-blocks */
    int32_t group;           /**< values per scale */
    int32_t version;         /**< packer version */
    uint64_t offset;         /**< byte offset of the packed data in the file */
    uint64_t bytes;          /**< bytes of packed data */
    int refused;             /**< nonzero: the record or its data is unusable */
    const char *reason;      /**< why, when refused ("" otherwise) */
    int qc4w;                /**< nonzero: QC4W weights (rows = N, in = K; @c format is unused) */
} pw_cache_entry_info;

/** Index record @p index. */
PW_API pw_status pw_cache_entry_get(pw_context *ctx, const pw_cache *cache, int64_t index,
                                    pw_cache_entry_info *out);

/**
 * Write every packed weight of an in-memory weights cache (qc4w.h) to a cache
 * file, keyed as the cache keys them (content hash, then packer identity: the
 * same scheme as GGUF weights' entries). Crash-safe like pw_cache_prepack().
 */
PW_API pw_status pw_weights_cache_save(pw_context *ctx, pw_weights_cache *cache, const char *path);

/**
 * Make the QC4W entries of an open cache file available through @p cache:
 * an operator later created with @p cache over the same weights for the same
 * packer finds its packed copy there (a cache hit: no packing). Each entry's
 * checksum is verified first; a refused or failing entry is skipped (and
 * counted in @p skipped). @p file must stay open while @p cache or any
 * operator created with it lives.
 */
PW_API pw_status pw_weights_cache_attach(pw_context *ctx, pw_weights_cache *cache, const pw_cache *file,
                                         int64_t *attached, int64_t *skipped);

/** Progress of pw_cache_prepack(): one call per tensor packed. */
typedef void (*pw_cache_progress_fn)(void *user, const char *tensor, int64_t index, int64_t count,
                                     uint64_t source_bytes, uint64_t packed_bytes, double seconds);

/** Options of pw_cache_prepack(); initialise with pw_cache_prepack_options_init(). */
typedef struct pw_cache_prepack_options {
    size_t struct_size;            /**< sizeof(pw_cache_prepack_options), set by init */
    pw_cache_progress_fn progress; /**< called after each tensor, or NULL */
    void *progress_user;           /**< passed to @c progress */
    uint64_t chunk_bytes;          /**< packed bytes per streaming chunk (0 = 16 MiB) */
} pw_cache_prepack_options;

/** Defaults: no progress callback, 16 MiB chunks. */
PW_API void pw_cache_prepack_options_init(pw_cache_prepack_options *options);

/**
 * Pack every 2-D weight of the GGUF at @p gguf_path for the kernels the
 * context's dispatch chooses for a pw_weight handle (GEMM, and GEMV where it
 * reads another packed family: one entry per packed form), streaming: the source is read through the
 * mapping a chunk at a time, each packed chunk is written out and the source
 * pages done with are released (madvise), so peak memory stays near one chunk
 * plus buffers. Threads: the context's. The cache is written to a temporary
 * file next to @p cache_path, synced, and renamed over it; a failed write leaves
 * the old file and no temporary. Refused with ::PW_ERR_INVALID_ARGUMENT before
 * anything is written: a @p cache_path that is the GGUF itself (same file, also
 * through a symlink or hard link), and one that is not a regular file (directory,
 * device, FIFO), which is left alone.
 */
PW_API pw_status pw_cache_prepack(pw_context *ctx, const char *gguf_path, const char *cache_path,
                                  const pw_cache_prepack_options *options);

#ifdef __cplusplus
}
#endif
#endif
