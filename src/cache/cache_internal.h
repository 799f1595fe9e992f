/*
 * The weights cache inside: keys, the memory side, the file side's byte
 * layout (public description in packwise/cache.h) and the file writer.
 *
 * File header, bytes [0, 128) of page 0:
 *    0 magic "PWCACHE1"          8 u32 format version (2)  12 u32 header bytes (128)
 *   16 u64 file bytes           24 u64 entry count        32 u64 index offset (4096)
 *   40 u64 strings offset       48 u64 strings bytes      56 u64 XXH3-64 of the strings
 *   64 u64 data start           72 char producer[32]     104 u64 reserved[2]
 *  120 u64 XXH3-64 of bytes [0, 120)
 * Index record, 256 bytes each, at index offset + 256 * i:
 *    0 u64 name offset (in strings)   8 u32 name length   12 u32 pw_format, or "QC4W"
 *   16 i64 rows   24 i64 in   32 char family[32]   64 char kernel[48]
 *  112 i32 nr, kr, sr, group, packer version, reserved
 *  136 u8 source key[16] (low 64 bits first)
 *  152 u64 XXH3-64 of the packed bytes   160 u64 data offset   168 u64 data bytes
 *  176 u8 content hash[16] of the source (the full check)
 *  192 reserved (zero)   248 u64 XXH3-64 of record bytes [0, 248)
 * The index and strings sit before the data, so a truncated file loses only
 * the forms past its end.
 */
#ifndef PACKWISE_CACHE_INTERNAL_H
#define PACKWISE_CACHE_INTERNAL_H

#include "base/hash.h"
#include "base/internal.h"
#include "packwise/cache.h"
#include "packwise/qb4w.h"
#include "packwise/qc4w.h"
#include "packwise/view.h"

#include <stdint.h>

#define PW__CACHE_MAGIC "PWCACHE1"
#define PW__CACHE_HEADER_BYTES 128u
#define PW__CACHE_PAGE 4096u
#define PW__CACHE_RECORD_BYTES 256u
#define PW__CACHE_FAMILY_LEN 32u
#define PW__CACHE_KERNEL_LEN 48u
/* Record format value of QC4W weights (not a pw_format): rows = N, in = K. */
#define PW__CACHE_FORMAT_QC4W 0x57344351u /* "QC4W" */
/* Record format value of QB4W weights: rows = N, in = K, group = B. */
#define PW__CACHE_FORMAT_QB4W 0x57344251u /* "QB4W" */

/* ------------------------------------------------------------------------ */
/* Keys                                                                     */
/* ------------------------------------------------------------------------ */

/* What identifies a packed form: its source and its packer. */
typedef struct pw__cache_key {
    pw__digest source;                 /* source key (see packwise/cache.h, Keys) */
    pw_weight_kind kind;
    pw_format format;                  /* PW_WEIGHT_BLOCKS */
    int64_t rows, in;                  /* the source's logical shape */
    char family[PW__CACHE_FAMILY_LEN]; /* the packer's identity ... */
    int32_t nr, kr, sr, group, version;
    uint64_t bytes;                    /* ... and the size it makes */
} pw__cache_key;

/* The source key of a 2-D [out, in] view: its source_id when it has one (nothing is
 * read), otherwise its content hash. */
pw__digest pw__cache_view_key(const pw_view *w);
/* The content hash of a 2-D [out, in] view: format, shape and every block in
 * row-major order, whatever the view's order (reads every byte). */
pw__digest pw__cache_view_content(const pw_view *w);
/* The content hash of raw QC4W weights: shape, zero point, flags, the nibbles as
 * given (an odd row's unused nibble taken as 0), scales and bias. */
pw__digest pw__cache_qc4w_content(const pw_qc4w_weights *w, uint64_t row_bytes);
/* The content hash of raw QB4W weights: shape, block size, scale type, zero-point kind
 * and constant, flags, the nibbles as given (an odd row's unused nibble taken as 0),
 * scales, zero points (an odd block count's unused nibble taken as 0) and bias. */
pw__digest pw__cache_qb4w_content(const pw_qb4w_weights *w);

/* ------------------------------------------------------------------------ */
/* The cache: memory side and file side                                     */
/* ------------------------------------------------------------------------ */

/* Little-endian field access. */
static inline uint32_t pw__rd32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t pw__rd64(const uint8_t *p) { return pw__rd32(p) | (uint64_t)pw__rd32(p + 4) << 32; }
static inline void pw__wr32(uint8_t *p, uint32_t v) {
    for (int i = 0; i < 4; ++i) p[i] = (uint8_t)(v >> (8 * i));
}
static inline void pw__wr64(uint8_t *p, uint64_t v) {
    for (int i = 0; i < 8; ++i) p[i] = (uint8_t)(v >> (8 * i));
}

/* A validated file record (reader side). */
typedef struct pw__cache_entry {
    pw_cache_entry_info info;
    pw__digest key;           /* source key */
    pw__digest content;       /* content hash of the source */
    uint64_t checksum;        /* of the packed bytes */
    char family[PW__CACHE_FAMILY_LEN];
    char kernel[PW__CACHE_KERNEL_LEN];
    char reason[192];
} pw__cache_entry;

/* A parsed cache file (cache_read.c). */
typedef struct pw__cache_file pw__cache_file;
pw_status pw__cache_file_open(pw_context *ctx, const char *path, pw__cache_file **out);
pw_status pw__cache_file_open_memory(pw_context *ctx, const void *data, uint64_t size,
                                     pw__cache_file **out);
void pw__cache_file_close(pw__cache_file *f);
int64_t pw__cache_file_count(const pw__cache_file *f);
const pw__cache_entry *pw__cache_file_entry(const pw__cache_file *f, int64_t i);
/* The usable record for key, or NULL with why it is not there in `why` (a refused
 * record, another packer's form of the same source, or no record of this source). */
const pw__cache_entry *pw__cache_file_find(const pw__cache_file *f, const pw__cache_key *key,
                                           char *why, size_t why_capacity);
/* The packed bytes of a record after checking them against its checksum; NULL (with
 * a reason in `why`) when they do not match. */
const uint8_t *pw__cache_file_data(const pw__cache_file *f, const pw__cache_entry *e, char *why,
                                   size_t why_capacity);

/* How pw__cache_get found a form. */
typedef enum pw__cache_how {
    PW__CACHE_PACKED = 0, /* a miss: packed now and stored */
    PW__CACHE_MEMORY = 1, /* packed earlier (by another weight) */
    PW__CACHE_FILE = 2    /* the file side's bytes (checksum verified) */
} pw__cache_how;

/* Fill dst (key->bytes, 64-byte aligned) with the packed form. */
typedef pw_status (*pw__cache_pack_fn)(pw_context *ctx, void *user, uint8_t *dst);

/*
 * The form `key` names: from the memory side, else from the file side, else
 * packed by pack(user) into a new entry (under the cache's lock, so a form is
 * packed once however many threads ask). *bytes stays valid while the caller
 * holds the reference this call takes (release with pw__cache_release).
 * `why` receives the reason when a file record with this source was not used.
 */
pw_status pw__cache_get(pw_context *ctx, pw_cache *cache, const pw__cache_key *key,
                        const char *name, pw__cache_pack_fn pack, void *user, const uint8_t **bytes,
                        pw__cache_how *how, char *why, size_t why_capacity);
void pw__cache_release(pw_cache *cache);
/* Take one more reference (a weight holding the cache). */
void pw__cache_retain(pw_cache *cache);
/* The cache's file side, or NULL. */
const pw__cache_file *pw__cache_file_of(const pw_cache *cache);

/* ------------------------------------------------------------------------ */
/* Writer (cache_write.c, needs xxHash)                                     */
/* ------------------------------------------------------------------------ */

/* Records declared up front, data streamed per entry (in order, each entry's bytes in
 * order), then commit; abort removes the temporary. */
typedef struct pw__cache_record {
    const char *name;
    pw__cache_key key;        /* source key, shape, kind, format and packer identity */
    pw__digest content;       /* content hash of the source ({0, 0} if filled at end_entry) */
    const char *kernel;       /* informational */
} pw__cache_record;
typedef struct pw__cache_writer pw__cache_writer;
pw_status pw__cache_writer_open(pw_context *ctx, const char *path, const pw__cache_record *records,
                                int64_t n, pw__cache_writer **out);
pw_status pw__cache_writer_data(pw__cache_writer *w, int64_t entry, uint64_t at, const void *data,
                                uint64_t n);
/* content: the entry's content hash when known only now (NULL keeps the declared one). */
pw_status pw__cache_writer_end_entry(pw__cache_writer *w, int64_t entry, const pw__digest *content);
pw_status pw__cache_writer_commit(pw__cache_writer *w);
void pw__cache_writer_abort(pw__cache_writer *w);

#endif
