/*
 * QC4W internals: the packed right-hand side, the QD8 activation rows, the
 * kernel descriptor and contract, the packer and its unpacker, the weights
 * cache key. The public side is include/packwise/qc4w.h.
 *
 * Packed RHS (families "qc4w_n<nr>k<kr>s<sr>", made only by pw__qc4w_pack
 * with nr, kr, sr taken from a kernel descriptor). K is padded to
 * Kp = round_up(K, 32) with signed zero; N to whole tiles of nr channels.
 * Tile t holds channels n = t*nr + c (c < nr), Kp*nr/2 + 12*nr bytes:
 *
 *   chunk 0:  | ch 0: kr/2 bytes | ch 1: kr/2 bytes | ... | ch nr-1 |   chunk j = k in [j*kr, j*kr+kr)
 *   chunk 1:  | ch 0             | ...                              |
 *   ...       Kp / kr chunks
 *   int32 weight_sum[nr]   sum over k of the signed int4 values (padding adds 0)
 *   float scale[nr]
 *   float bias[nr]         0 when the weights have no bias
 *
 * Inside one channel's chunk, value j (0 <= j < kr) is a signed two's-
 * complement nibble at
 *   sr = 1: byte j / 2, low nibble when j is even (the raw form's pairing)
 *   sr = 2: byte j % (kr/2), low nibble for the first sub-block (j < kr/2),
 *           high nibble for the second: one byte pairs k0+i with k0+kr/2+i.
 * Channels of a partial last tile are zero throughout (data, sums, scales,
 * bias). Integers and floats are little-endian; tiles start at multiples of
 * tile_bytes from a 64-byte aligned base. The buffer is described by a
 * pw__pack_desc (kernel/kernel.h) with format = PW_FORMAT_COUNT (QC4W is not
 * a GGUF format), group = 0 (one scale per channel) and in_padded = Kp.
 *
 * QD8 rows (the left-hand side, one per row of X, lhs_row_bytes apart):
 *
 *   | pw__qd8_header (64 B) | int8 q[Kp] | uint8 u[Kp] = q + 128 |
 *
 *   x[k] ~ (q[k] - zp) * scale; q[k] = 0 (u = 128) for k >= K.
 *
 * QD8 panels (for kernels with lhs_panel = P > 0, on top of the rows): the
 * u of rows [pP, pP + P) interleaved by 8 bytes, so a micro-tile of P rows
 * reads one contiguous stream with one pointer:
 *
 *   panel p (P * Kp bytes):  | row pP: u[0..7] | row pP+1: u[0..7] | ... | row pP+P-1: u[0..7] |
 *                            | row pP: u[8..15] | ...                                          |
 *
 * A last panel with fewer rows leaves the missing rows' slots unwritten.
 */
#ifndef PACKWISE_QC4W_INTERNAL_H
#define PACKWISE_QC4W_INTERNAL_H

#include "base/internal.h"
#include "kernel/kernel.h"
#include "packwise/qc4w.h"

#include <stddef.h>
#include <stdint.h>

#define PW__QC4W_K_ALIGN 32      /* K padding, in elements */
#define PW__QC4W_PACK_VERSION 1  /* bump when the packed bytes change */

/* ------------------------------------------------------------------------ */
/* QD8 activations                                                          */
/* ------------------------------------------------------------------------ */

typedef struct pw__qd8_header {
    float scale;     /* x ~ (q - zp) * scale; > 0 */
    int32_t neg_zp;  /* -zp, zp in [-128, 127] */
    int32_t sum;     /* sum of q[k] over k < K (for kernels that pair unsigned weights) */
    int32_t bad;     /* 1: the row had a value that is not finite (and is unusable) */
    int64_t bad_k;   /* the first such k */
    int32_t pad[10];
} pw__qd8_header;
_Static_assert(sizeof(pw__qd8_header) == 64, "pw__qd8_header is one cache line");

/* Bytes of one QD8 row for K inputs (a multiple of 64). */
static inline size_t pw__qd8_row_bytes(int64_t k_padded) {
    return sizeof(pw__qd8_header) + 2u * (size_t)k_padded;
}

/* Quantize one row of K floats. A value that is not finite makes the row
 * unusable: header.bad = 1 and header.bad_k names the first such k. */
void pw__qd8_quantize_row(const float *x, int64_t k, int64_t k_padded, uint8_t *row);
typedef void (*pw__qd8_row_fn)(const float *x, int64_t k, int64_t k_padded, uint8_t *row);
#if defined(__x86_64__)
/* kernel/x86/qc4w_qd8_avx512.c: AVX-512 F/BW only. */
void pw__qd8_quantize_row_avx512(const float *x, int64_t k, int64_t k_padded, uint8_t *row);
#endif

/* What every quantizer shares: the row's scale, 1 / scale and zero point from
 * its min and max (lo <= 0 <= hi, finite), and one value's q. */
void pw__qd8_params(float lo, float hi, float *scale, float *inv, int32_t *zp);
static inline float pw__qd8_round_even(float v) {
    const float magic = 12582912.0f; /* 1.5 * 2^23: exact for |v| < 2^22 */
    return (v + magic) - magic;
}
static inline int32_t pw__qd8_value(float x, float inv, int32_t zp) {
    float v = x * inv;
    v = v < -256.0f ? -256.0f : (v > 256.0f ? 256.0f : v);
    const int32_t iv = (int32_t)pw__qd8_round_even(v) + zp;
    return iv < -128 ? -128 : (iv > 127 ? 127 : iv);
}

/* Bytes of the panels for `batch` rows, and the copy of rows [m0, m1)'s u into them. */
static inline size_t pw__qd8_panels_bytes(int64_t batch, int64_t k_padded, int32_t p) {
    return (size_t)((batch + p - 1) / p) * (size_t)p * (size_t)k_padded;
}
void pw__qd8_panel_rows(const uint8_t *lhs, size_t row_bytes, int64_t k_padded, int32_t p,
                        int64_t m0, int64_t m1, uint8_t *panels);

/* The row's parts. */
static inline const pw__qd8_header *pw__qd8_hdr(const uint8_t *row) {
    return (const pw__qd8_header *)(const void *)row;
}
static inline const int8_t *pw__qd8_q(const uint8_t *row) {
    return (const int8_t *)(row + sizeof(pw__qd8_header));
}
static inline const uint8_t *pw__qd8_u(const uint8_t *row, int64_t k_padded) {
    return row + sizeof(pw__qd8_header) + (size_t)k_padded;
}

/* ------------------------------------------------------------------------ */
/* Raw weights                                                              */
/* ------------------------------------------------------------------------ */

/* Bytes per row of the raw form and its total size; PW_ERR_* on overflow. */
pw_status pw__qc4w_raw_bytes(pw_context *ctx, const pw_qc4w_weights *w, uint64_t *row_bytes,
                             uint64_t *bytes);

/* Signed value of w[n, k] read from the raw form (either orientation). */
static inline int pw__qc4w_raw_get(const pw_qc4w_weights *w, int64_t n, int64_t k) {
    const int transposed = (w->flags & PW_QC4W_TRANSPOSED) != 0;
    const int64_t row = transposed ? k : n, col = transposed ? n : k;
    const int64_t stride = transposed ? (w->out + 1) / 2 : (w->in + 1) / 2;
    const int nib = (w->data[row * stride + col / 2] >> ((col & 1) * 4)) & 15;
    return w->zero_point == 8 ? nib - 8 : (nib ^ 8) - 8;
}

/* The spec's conversion of a transposed K x N source to N x K: single
 * nibbles moved into dst (N rows of ceil(K/2) bytes), which must be zeroed.
 * Only destination rows [n0, n1) are written, so disjoint ranges may run
 * concurrently. */
void pw__qc4w_transpose_rows(const uint8_t *src, int64_t k, int64_t n, int64_t n0, int64_t n1,
                             uint8_t *dst);

/* ------------------------------------------------------------------------ */
/* Kernels                                                                  */
/* ------------------------------------------------------------------------ */

typedef struct pw__qc4w_call {
    const uint8_t *packed;         /* tile 0 of the packed RHS (64-byte aligned) */
    const pw__pack_desc *desc;     /* its description: Kp = desc->in_padded */
    const uint8_t *lhs;            /* QD8 row 0 */
    size_t lhs_row_bytes;
    const uint8_t *panels;         /* QD8 panels of the kernel's lhs_panel rows, or NULL */
    void *y;                       /* float or uint16_t (IEEE half) */
    int64_t ldy;                   /* elements between rows of y */
    int f16;                       /* y is half */
    float min, max;                /* clamp */
} pw__qc4w_call;

/*
 * Kernel contract: write y[m, n] for n in [n0, n1), m in [m0, m1) with
 *
 *   isum = sum_{k < Kp} q[m, k] * w[n, k] + neg_zp[m] * weight_sum[n]   (exact integer)
 *   s    = scale_a[m] * scale[n]                                        (f32)
 *   v    = (float)isum * s + bias[n]                                    (f32 mul, then add)
 *   y    = min(max(v, min), max), then to half if f16 (round to nearest even)
 *
 * in exactly these f32 operations (no fused multiply-add), so every kernel
 * gives the reference's bits. n0 is a multiple of nr; n1 is too, or equals
 * N; m0 is a multiple of mr (so that QD8 panels start whole). y outside the
 * rectangle is never written; y inside is never read.
 */
typedef void (*pw__qc4w_run_fn)(const pw__qc4w_call *c, int64_t n0, int64_t n1, int64_t m0,
                                int64_t m1);

/* Fill desc for N x K weights packed with (nr, kr, sr) under `family`. */
pw_status pw__qc4w_pack_plan(pw_context *ctx, const char *family, int32_t nr, int32_t kr,
                             int32_t sr, int64_t n, int64_t k, pw__pack_desc *desc);

/* Pack channels [n0, n1) (n0 a multiple of nr; n1 too, or N) of the N x K
 * nibbles `nk` (rows of ceil(K/2) bytes; zero point `zp`) with their scales
 * and bias (may be NULL) into dst (the whole buffer's base). */
void pw__qc4w_pack(const pw__pack_desc *desc, const uint8_t *nk, int zp, const float *scale,
                   const float *bias, int64_t n0, int64_t n1, uint8_t *dst);

/* Unpack to the canonical form: N rows of ceil(K/2) bytes encoded for
 * zero point zp (0 or 8; an odd K's unused high nibble is 0), scales and
 * bias (either may be NULL to skip). Bit-exact inverse of pw__qc4w_pack. */
void pw__qc4w_unpack(const pw__pack_desc *desc, const uint8_t *packed, int zp, uint8_t *nk,
                     float *scale, float *bias);

/* Where value j of a channel's kr-chunk lives: byte and nibble (0 low, 1 high). */
static inline void pw__qc4w_slot(int32_t kr, int32_t sr, int32_t j, int32_t *byte, int *nibble) {
    if (sr == 1) {
        *byte = j / 2;
        *nibble = j & 1;
    } else {
        *byte = j % (kr / 2);
        *nibble = j / (kr / 2);
    }
}

/* Offsets inside a tile (bytes). */
static inline uint64_t pw__qc4w_sums_offset(const pw__pack_desc *d) {
    return (uint64_t)d->in_padded * (uint64_t)d->nr / 2u;
}

typedef struct pw__qc4w_kernel {
    const char *name;    /* "qc4w_<family tile>_<isa>", e.g. "qc4w_n16k8s2_avx512vnni" */
    const char *family;  /* the packed family it reads, e.g. "qc4w_n16k8s2" */
    int32_t nr, kr, sr;  /* tile: channels, k per chunk, sub-blocks per chunk */
    int32_t mr;          /* rows of X per micro-tile (the GEMM path; batch 1 has its own) */
    uint32_t features;   /* required PW_CPU_* bits */
    const char *isa;     /* "scalar", "avx2", "avx512vnni", "dotprod", "i8mm" */
    int32_t priority;    /* PW__PRIO_* of kernel/kernel.h: higher wins */
    int64_t max_k;       /* largest K whose int32 accumulation is exact in this kernel */
    int32_t lhs_panel;   /* > 0: also reads QD8 panels of this many rows (call->panels) */
    pw__qd8_row_fn quantize; /* this ISA's QD8 quantizer (same bits as pw__qd8_quantize_row), or NULL */
    pw__qc4w_run_fn run;
} pw__qc4w_kernel;

/* The list (qc4w/kernels.c, expanded from kernel/kernel_list.h). */
size_t pw__qc4w_kernel_count(void);
const pw__qc4w_kernel *pw__qc4w_kernel_get(size_t i);
const pw__qc4w_kernel *pw__qc4w_kernel_find(const char *name);
int pw__qc4w_kernel_usable(const pw_context *ctx, const pw__qc4w_kernel *k);
/* Best usable packed kernel for K (NULL: none). */
const pw__qc4w_kernel *pw__qc4w_kernel_best(const pw_context *ctx, int64_t k);

/* Plan the packed form kernel k reads. */
pw_status pw__qc4w_kernel_plan(pw_context *ctx, const pw__qc4w_kernel *k, int64_t n, int64_t kk,
                               pw__pack_desc *desc);

/* Whether kernel k reads a buffer described by d: PW_ERR_FAMILY naming both otherwise. */
pw_status pw__qc4w_kernel_check(pw_context *ctx, const pw__qc4w_kernel *k, const pw__pack_desc *d);

/* Run k over batch rows on the context's threads, after pw__qc4w_kernel_check:
 * tasks are rectangles of whole N tiles by blocks of whole mr-row panels. */
pw_status pw__qc4w_gemm(pw_context *ctx, const pw__qc4w_kernel *k, const pw__qc4w_call *c,
                        int64_t n, int64_t batch);

/* The oracle: plain loops over the raw weights and the QD8 rows, writing y
 * by the kernel contract (integer sum in int64 from (q - zp) * w directly,
 * not from weight sums). `row` is K bytes of scratch for one decoded row. */
void pw__qc4w_reference(const pw_qc4w_weights *w, const uint8_t *lhs, size_t lhs_row_bytes,
                        int64_t batch, float min, float max, int f16, void *y, int64_t ldy,
                        int8_t *row);

/* The portable packed kernel, generic over (nr, kr, sr); the scalar
 * descriptors and the SIMD kernels' edge cases share it. */
void pw__qc4w_run_scalar(const pw__qc4w_call *c, int64_t n0, int64_t n1, int64_t m0, int64_t m1);

/* Final f32 step of the contract, shared by every scalar path. */
static inline float pw__qc4w_finish(int64_t isum, float a_scale, float w_scale, float bias,
                                    float min, float max) {
    const float s = a_scale * w_scale;
    float v = (float)isum * s;
    v = v + bias;
    v = v < min ? min : v;
    return v > max ? max : v;
}

/* The packed bytes an operator reads (for the bench's cache flush). */
const uint8_t *pw__qc4w_fc_packed(const pw_qc4w_fc *op);

/* ------------------------------------------------------------------------ */
/* Weights cache key                                                        */
/* ------------------------------------------------------------------------ */

/*
 * The cache key: a 128-bit XXH3 hash of this byte stream (integers little-
 * endian, floats as their IEEE-754 binary32 bits, little-endian):
 *
 *   "packwise-qc4w-key"  17 bytes, no NUL
 *   u32 key version (1)
 *   u64 N, u64 K, u32 zero_point, u32 flags, u32 has_bias
 *   rows of the raw data as given (N rows of ceil(K/2) bytes, or K rows of
 *     ceil(N/2) bytes when transposed), with the unused high nibble of an
 *     odd-length row's last byte taken as 0
 *   f32 scale[N], then f32 bias[N] when has_bias
 *   u32 length of the family name, its bytes, u32 nr, u32 kr, u32 sr, u32 packer version
 *
 * Two keys are equal when hash and packer identity are equal. A persisted
 * cache can store the 16 hash bytes (low 64 bits first, each little-endian).
 */
typedef struct pw__qc4w_key {
    uint64_t lo, hi;         /* XXH3-128 of the stream above */
    char family[32];
    int32_t nr, kr, sr, version;
} pw__qc4w_key;

/* PW_ERR_UNSUPPORTED when the build has no xxHash. */
pw_status pw__qc4w_key_compute(pw_context *ctx, const pw_qc4w_weights *w, const char *family,
                               int32_t nr, int32_t kr, int32_t sr, int32_t version,
                               pw__qc4w_key *key);

/* Find or pack: on a miss, pack() fills a new entry of desc->bytes bytes.
 * Returns the entry's bytes (held until pw__weights_cache_release). */
typedef pw_status (*pw__qc4w_pack_cb)(pw_context *ctx, void *user, uint8_t *dst);
pw_status pw__weights_cache_get(pw_context *ctx, pw_weights_cache *cache, const pw__qc4w_key *key,
                                const pw__pack_desc *desc, pw__qc4w_pack_cb pack, void *user,
                                const uint8_t **bytes, int *hit);
/* Visit every entry under the cache's lock (for saving it to a file). */
typedef void (*pw__weights_cache_visit)(void *user, const pw__qc4w_key *key, int64_t out, int64_t in,
                                        const uint8_t *bytes, uint64_t size);
void pw__weights_cache_visit_all(pw_weights_cache *cache, pw__weights_cache_visit visit, void *user);
/* Add an entry whose bytes belong to someone else (a cache file's mapping); 1 when added,
 * 0 when the key is already present or memory ran out. */
int pw__weights_cache_add_borrowed(pw_weights_cache *cache, const pw__qc4w_key *key, int64_t out, int64_t in,
                                   const uint8_t *bytes, uint64_t size);

/* An operator's hold on the cache (taken by a successful get). */
void pw__weights_cache_release(pw_weights_cache *cache);

#endif
