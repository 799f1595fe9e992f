/**
 * @file cache.h
 * @brief The weights cache: packed forms shared in memory and kept in files.
 *
 * One ::pw_cache has two sides:
 *
 * - a **memory side**, shared by every weight created with it (weight.h,
 *   ::pw_weight_options.cache) on any thread: a form packed by one weight is
 *   served to every other weight over the same source for the same packer,
 *   packed exactly once even when several threads prepare at the same time;
 * - a **file side**: the packed forms of a cache file (pw_cache_open()), made
 *   by `packwise prepack MODEL.gguf -o MODEL.pwc` (pw_cache_prepack()) or
 *   pw_cache_save(), mapped and served without packing.
 *
 * **Keys.** An entry is found by its source key and its packer's identity
 * (family, nr, kr, sr, group, packer version). The source key of a tensor
 * viewed straight from a GGUF file (pw_gguf_tensor_view()) is its identity
 * in that file: a hash of the file's header, metadata, tensor table, size and
 * modification time, with the tensor's name, type, shape and offset and three
 * 64-byte samples of its bytes (first, middle, last). Serving it reads only those
 * samples of the tensor, and a cache file made for another GGUF (or an edited
 * one) simply has no matching entry. Every other source (caller bytes, raw
 * QC4W weights) is keyed by a 128-bit XXH3 hash of its content. A file
 * entry also records the content hash of its source, for the full check
 * (pw_cache_check_gguf(), `packwise check-cache`).
 *
 * A file entry whose packer identity, shape or checksum does not match is not
 * used: the weight packs its form again and a ::PW_TRACE_CACHE event says
 * why. Packed bytes are checked against their checksum before they are first
 * served.
 *
 * **Files** (little-endian; format version ::PW_CACHE_FORMAT_VERSION; data
 * offsets are multiples of 4096 so packed forms map straight into kernel
 * buffers):
 *
 *     [0, 4096)     header: magic "PWCACHE1", version, sizes, offsets, checksums
 *     index         one 256-byte record per packed form, each with its own checksum
 *     strings       tensor names
 *     data          packed forms, each page-aligned
 *
 * The index and the strings come before the data, so a truncated file loses
 * only the forms past its end. A cache file is untrusted input like a GGUF:
 * every field is bounds- and overflow-checked before use. Writing is
 * crash-safe: a temporary file in the same folder, fsync, rename.
 *
 * **Lifetime.** A cache is reference-counted: pw_cache_close() releases the
 * caller's reference, each weight that uses the cache holds its own, and the
 * memory (and the file's mapping) goes with the last one.
 */
#ifndef PACKWISE_CACHE_H
#define PACKWISE_CACHE_H

#include "packwise/base.h"
#include "packwise/format.h"
#include "packwise/gguf.h"
#include "packwise/weight.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Format version of cache files this library writes (and the only one it reads). */
#define PW_CACHE_FORMAT_VERSION 2

/** A weights cache (see the file's description). */
typedef struct pw_cache pw_cache;

/**
 * Create an empty cache (no file side). Packed bytes come from @p ctx's
 * allocator, which must then be safe to call from every thread that uses the
 * cache; @p ctx itself need not outlive the cache. Fails with
 * ::PW_ERR_UNSUPPORTED in a build without xxHash.
 */
PW_API pw_status pw_cache_create(pw_context *ctx, pw_cache **out);

/**
 * Open and validate a cache file: a cache whose file side is the file's
 * entries. A bad header (magic, version, checksum, sizes) refuses the whole
 * file; a bad index record only that entry (it is then reported by
 * pw_cache_entry_get() with a nonzero @c refused and a reason, and never used).
 */
PW_API pw_status pw_cache_open(pw_context *ctx, const char *path, pw_cache **out);

/** As pw_cache_open(), over a cache image in memory (borrowed: it must outlive the
 *  cache and every weight that uses it); for the fuzz target and tests. */
PW_API pw_status pw_cache_open_memory(pw_context *ctx, const void *data, uint64_t size,
                                      pw_cache **out);

/** Release the caller's reference (see Lifetime above). Accepts NULL. */
PW_API void pw_cache_close(pw_cache *cache);

/** Counters of a cache (a snapshot). */
typedef struct pw_cache_stats {
    uint64_t hits;        /**< forms served by an entry (memory or file) */
    uint64_t misses;      /**< forms packed and stored */
    uint64_t entries;     /**< memory-side entries (file entries served count once served) */
    uint64_t bytes;       /**< bytes of packed forms the memory side owns */
    uint64_t file_served; /**< forms served from the file side */
} pw_cache_stats;

/** Read the counters. */
PW_API void pw_cache_get_stats(pw_cache *cache, pw_cache_stats *stats);

/** Number of file index records (0 for a cache with no file side). */
PW_API int64_t pw_cache_entry_count(const pw_cache *cache);

/** What one file index record says (strings owned by the cache). */
typedef struct pw_cache_entry_info {
    const char *name;        /**< tensor name ("qc4w:<key>" for QC4W weights saved from memory) */
    pw_weight_kind kind;     /**< block format or QC4W */
    pw_format format;        /**< source format (::PW_WEIGHT_BLOCKS) */
    int64_t rows;            /**< out */
    int64_t in;              /**< in */
    const char *family;      /**< packed family */
    const char *kernel;      /**< kernel the form was packed for (any kernel of the family reads it) */
    int32_t nr;              /**< rows per tile */
    int32_t kr;              /**< k per interleave step */
    int32_t sr;              /**< sub-blocks */
    int32_t group;           /**< values per scale */
    int32_t version;         /**< packer version */
    uint64_t offset;         /**< byte offset of the packed data in the file */
    uint64_t bytes;          /**< bytes of packed data */
    int refused;             /**< nonzero: the record or its data is unusable */
    const char *reason;      /**< why, when refused ("" otherwise) */
} pw_cache_entry_info;

/** Index record @p index. */
PW_API pw_status pw_cache_entry_get(pw_context *ctx, const pw_cache *cache, int64_t index,
                                    pw_cache_entry_info *out);

/**
 * Write every packed form the cache holds (memory side and file side) to a
 * cache file at @p path, each under its key. Crash-safe like pw_cache_prepack().
 */
PW_API pw_status pw_cache_save(pw_context *ctx, pw_cache *cache, const char *path);

/** Progress of pw_cache_prepack(): one call per packed form written. */
typedef void (*pw_cache_progress_fn)(void *user, const char *tensor, int64_t index, int64_t count,
                                     uint64_t source_bytes, uint64_t packed_bytes, double seconds);

/** Options of pw_cache_prepack(); initialise with pw_cache_prepack_options_init(). */
typedef struct pw_cache_prepack_options {
    size_t struct_size;            /**< sizeof(pw_cache_prepack_options), set by init */
    pw_cache_progress_fn progress; /**< called after each form, or NULL */
    void *progress_user;           /**< passed to @c progress */
    uint64_t chunk_bytes;          /**< packed bytes per streaming chunk (0 = 16 MiB) */
    pw_memory_policy policy;       /**< the forms a weight will plan (DEFAULT = the context's) */
} pw_cache_prepack_options;

/** Defaults: no progress callback, 16 MiB chunks, the context's policy. */
PW_API void pw_cache_prepack_options_init(pw_cache_prepack_options *options);

/**
 * Pack every 2-D weight of the GGUF at @p gguf_path into the forms a weight
 * planned under the policy would hold on this context (the same planner as
 * pw_weight_create(): under COMPACT one form per tensor, none where kernels
 * read the file's bytes in place; under FASTEST up to two), streaming: the
 * source is read through the mapping a chunk at a time, each packed chunk is
 * written out and the source pages done with are released (madvise), so
 * peak memory stays near one chunk plus buffers. Threads: the context's. The
 * file is written to a temporary next to @p cache_path, synced, and renamed
 * over it; a failed write leaves the old file and no temporary. Refused with
 * ::PW_ERR_INVALID_ARGUMENT before anything is written: a @p cache_path that is
 * the GGUF itself (same file, also through a symlink or hard link), and one
 * that is not a regular file (directory, device, FIFO), which is left alone.
 */
PW_API pw_status pw_cache_prepack(pw_context *ctx, const char *gguf_path, const char *cache_path,
                                  const pw_cache_prepack_options *options);

/**
 * The full content check: for every file entry made from a tensor of @p gguf
 * (matched by source key), hash the tensor's bytes and compare with the
 * content hash the entry recorded. Reads every such tensor. *mismatched
 * counts the entries whose content differs (the first is named in the
 * context's message when nonzero), *checked those compared; entries of other
 * sources are skipped.
 */
PW_API pw_status pw_cache_check_gguf(pw_context *ctx, const pw_cache *cache, const pw_gguf *gguf,
                                     int64_t *checked, int64_t *mismatched);

#ifdef __cplusplus
}
#endif
#endif
