/*
 * Byte layout of weights-cache files (public description in packwise/cache.h)
 * and the helpers shared by the reader, the writer and pw_weight.
 *
 * Header, bytes [0, 128) of page 0:
 *    0 magic "PWCACHE1"          8 u32 format version      12 u32 header bytes (128)
 *   16 u64 file bytes           24 u64 entry count        32 u64 index offset (4096)
 *   40 u64 strings offset       48 u64 strings bytes      56 u64 XXH3-64 of the strings
 *   64 u64 data start           72 char producer[32]     104 u64 reserved[2]
 *  120 u64 XXH3-64 of bytes [0, 120)
 * Index record, 256 bytes each, at index offset + 256 * i:
 *    0 u64 name offset (in strings)   8 u32 name length   12 u32 pw_format
 *   16 i64 rows   24 i64 in   32 char family[32]   64 char kernel[48]
 *  112 i32 nr, kr, sr, group, packer version, reserved
 *  136 u8 key[16]: XXH3-128 content key (content, then packer identity)
 *  152 u64 XXH3-64 of the packed bytes   160 u64 data offset   168 u64 data bytes
 *  176 reserved (zero)   248 u64 XXH3-64 of record bytes [0, 248)
 * The index and strings sit before the data, so a truncated file loses only
 * the tensors past its end.
 */
#ifndef PACKWISE_CACHE_FORMAT_H
#define PACKWISE_CACHE_FORMAT_H

#include "packwise/cache.h"
#include "packwise/view.h"
#include "kernel/kernel.h"

#include <stdint.h>

#define PW__CACHE_MAGIC "PWCACHE1"
#define PW__CACHE_HEADER_BYTES 128u
#define PW__CACHE_PAGE 4096u
#define PW__CACHE_RECORD_BYTES 256u
#define PW__CACHE_FAMILY_LEN 32u
#define PW__CACHE_KERNEL_LEN 48u

/* The key of a packed weight: a 128-bit hash of its content, then the packer's identity. */
typedef struct pw__weights_key {
    uint64_t lo, hi;
} pw__weights_key;

/* Content key of a 2-D [out, in] weight view packed as `desc` (reads every source block). */
pw_status pw__gguf_weight_key(pw_context *ctx, const pw_view *w, const pw__pack_desc *desc,
                              pw__weights_key *key);

/* 64-bit checksum of packed bytes. */
uint64_t pw__cache_checksum(const void *data, uint64_t bytes);

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

/* A validated record (reader side). */
typedef struct pw__cache_entry {
    pw_cache_entry_info info;
    pw__weights_key key;
    uint64_t checksum;
    char family[PW__CACHE_FAMILY_LEN];
    char kernel[PW__CACHE_KERNEL_LEN];
    char reason[192];
} pw__cache_entry;

/* Find the usable entry for tensor `name` packed in `family` (a tensor may have one
 * entry per packed family: a GEMM form and a GEMV form); NULL when absent. When no
 * usable entry matches, a refused entry with that name is returned instead (its
 * family may be unreadable; the caller reports its reason). */
const pw__cache_entry *pw__cache_find(const pw_cache *cache, const char *name, const char *family);

/* Writer (cache_write.c, needs xxHash): records declared up front, data streamed per entry
 * (in order, each entry's bytes in order), then commit; abort removes the temporary. */
typedef struct pw__cache_record {
    const char *name;
    uint32_t format;  /* a pw_format, or PW__CACHE_FORMAT_QC4W */
    int64_t rows, in;
    const char *family, *kernel;
    int32_t nr, kr, sr, group, version;
    pw__weights_key key;
    uint64_t bytes;
} pw__cache_record;
typedef struct pw__cache_writer pw__cache_writer;
pw_status pw__cache_writer_open(pw_context *ctx, const char *path, const pw__cache_record *records, int64_t n,
                                pw__cache_writer **out);
pw_status pw__cache_writer_data(pw__cache_writer *w, int64_t entry, uint64_t at, const void *data, uint64_t n);
/* key: the entry's content key when known only now (NULL keeps the declared one). */
pw_status pw__cache_writer_end_entry(pw__cache_writer *w, int64_t entry, const pw__weights_key *key);
pw_status pw__cache_writer_commit(pw__cache_writer *w);
void pw__cache_writer_abort(pw__cache_writer *w);

/* Record format value of QC4W weights (not a pw_format): rows = N, in = K, key = the QC4W key. */
#define PW__CACHE_FORMAT_QC4W 0x57344351u /* "QC4W" */

/* "N index records refused: <first reason>" into buf, or "" when none is. */
void pw__cache_refused_summary(const pw_cache *cache, char *buf, size_t capacity);

/* The packed bytes of an entry after checking them against its checksum; NULL (with a
 * reason in `why`) when the entry is refused or its bytes do not match. */
const uint8_t *pw__cache_entry_data(const pw_cache *cache, const pw__cache_entry *e, char *why,
                                    size_t why_capacity);

#endif
