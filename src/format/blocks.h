/*
 * Block layouts of every packwise format, byte for byte as GGUF files (and
 * ggml) store them, plus the few helpers a decoder or kernel needs to read
 * them: half/bfloat16 conversion, the IQ4_NL codebook and the K-quant scale
 * unpacking.
 *
 * Conventions used in the comments below:
 *   - "fp16" is an IEEE binary16 stored as uint16_t (ggml_half); the block
 *     scale d multiplies the integer quants.
 *   - A block of B elements covers B consecutive elements of one row (along
 *     the input dimension of a weight).
 *   - All multi-byte fields are little-endian; the structs are read in place
 *     on little-endian hosts only (see the check below).
 *   - "element e" is the index inside the block, 0 .. B-1.
 *
 * Kernels include this header; it has no dependency on the rest of packwise
 * beyond <stdint.h>/<string.h>.
 */
#ifndef PACKWISE_FORMAT_BLOCKS_H
#define PACKWISE_FORMAT_BLOCKS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(__BYTE_ORDER__) && defined(__ORDER_LITTLE_ENDIAN__) &&                           \
    __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "packwise block structs describe little-endian bytes; big-endian hosts are not supported"
#endif

/* Elements per block. */
#define PW__QK4_0 32
#define PW__QK4_1 32
#define PW__QK5_0 32
#define PW__QK5_1 32
#define PW__QK8_0 32
#define PW__QK8_1 32
#define PW__QK4_NL 32
#define PW__QK_K 256 /* super-block of every K-quant and of TQ1_0/TQ2_0 */
#define PW__K_SCALE_SIZE 12 /* bytes of packed 6-bit scales/mins in Q4_K, Q5_K (and Q3_K) */

/* ------------------------------------------------------------------------ */
/* 32-element blocks                                                        */
/* ------------------------------------------------------------------------ */

/* Q4_0, 18 bytes: [0,2) fp16 d; [2,18) 16 bytes of nibbles.
 * Byte j holds element j in its low nibble and element j+16 in its high
 * nibble; value = (nibble - 8) * d. */
typedef struct pw__block_q4_0 {
    uint16_t d;
    uint8_t qs[PW__QK4_0 / 2];
} pw__block_q4_0;
_Static_assert(sizeof(pw__block_q4_0) == 18, "Q4_0 block is 18 bytes");

/* Q4_1, 20 bytes: [0,2) fp16 d; [2,4) fp16 m (the block minimum); [4,20)
 * nibbles as Q4_0. value = nibble * d + m. */
typedef struct pw__block_q4_1 {
    uint16_t d;
    uint16_t m;
    uint8_t qs[PW__QK4_1 / 2];
} pw__block_q4_1;
_Static_assert(sizeof(pw__block_q4_1) == 20, "Q4_1 block is 20 bytes");

/* Q5_0, 22 bytes: [0,2) fp16 d; [2,6) qh, a little-endian uint32 whose bit e
 * is bit 4 of element e; [6,22) low nibbles as Q4_0.
 * value = ((nibble | high << 4) - 16) * d. */
typedef struct pw__block_q5_0 {
    uint16_t d;
    uint8_t qh[4];
    uint8_t qs[PW__QK5_0 / 2];
} pw__block_q5_0;
_Static_assert(sizeof(pw__block_q5_0) == 22, "Q5_0 block is 22 bytes");

/* Q5_1, 24 bytes: [0,2) fp16 d; [2,4) fp16 m; [4,8) qh as Q5_0; [8,24) low
 * nibbles. value = (nibble | high << 4) * d + m. */
typedef struct pw__block_q5_1 {
    uint16_t d;
    uint16_t m;
    uint8_t qh[4];
    uint8_t qs[PW__QK5_1 / 2];
} pw__block_q5_1;
_Static_assert(sizeof(pw__block_q5_1) == 24, "Q5_1 block is 24 bytes");

/* Q8_0, 34 bytes: [0,2) fp16 d; [2,34) int8 quants in element order.
 * value = q * d. */
typedef struct pw__block_q8_0 {
    uint16_t d;
    int8_t qs[PW__QK8_0];
} pw__block_q8_0;
_Static_assert(sizeof(pw__block_q8_0) == 34, "Q8_0 block is 34 bytes");

/* Q8_1, 36 bytes: [0,2) fp16 d; [2,4) fp16 s = d * sum(q) (used by the
 * Q4_1/Q5_1 dot products for the min term); [4,36) int8 quants.
 * value = q * d; s is not needed to decode. */
typedef struct pw__block_q8_1 {
    uint16_t d;
    uint16_t s;
    int8_t qs[PW__QK8_1];
} pw__block_q8_1;
_Static_assert(sizeof(pw__block_q8_1) == 36, "Q8_1 block is 36 bytes");

/* IQ4_NL, 18 bytes: [0,2) fp16 d; [2,18) nibbles laid out as Q4_0 (byte j:
 * element j low, element j+16 high); value = pw__iq4nl_values[nibble] * d. */
typedef struct pw__block_iq4_nl {
    uint16_t d;
    uint8_t qs[PW__QK4_NL / 2];
} pw__block_iq4_nl;
_Static_assert(sizeof(pw__block_iq4_nl) == 18, "IQ4_NL block is 18 bytes");

/* The IQ4_NL non-linear codebook (ascending). */
extern const int8_t pw__iq4nl_values[16];

/* ------------------------------------------------------------------------ */
/* 256-element super-blocks (K-quants)                                      */
/* ------------------------------------------------------------------------ */

/* Q2_K, 84 bytes: [0,16) scales, one byte per 16-element sub-block s = e/16:
 * low nibble = scale, high nibble = min; [16,80) 2-bit quants; [80,82) fp16 d;
 * [82,84) fp16 dmin.
 * Element e: byte qs[32*(e/128) + e%32], bits 2*((e%128)/32) .. +1.
 * value = (d * scale) * q - (dmin * min). */
typedef struct pw__block_q2_K {
    uint8_t scales[PW__QK_K / 16];
    uint8_t qs[PW__QK_K / 4];
    uint16_t d;
    uint16_t dmin;
} pw__block_q2_K;
_Static_assert(sizeof(pw__block_q2_K) == 84, "Q2_K block is 84 bytes");

/* Q3_K, 110 bytes: [0,32) hmask: bit e/32 of byte e%32 is the high bit of
 * element e, SET meaning "no -4"; [32,96) low 2 bits laid out as Q2_K;
 * [96,108) sixteen 6-bit signed scales (offset 32) packed as described at
 * pw__q3k_unpack_scales(); [108,110) fp16 d.
 * value = (d * (scale - 32)) * (low2 - (high ? 0 : 4)). */
typedef struct pw__block_q3_K {
    uint8_t hmask[PW__QK_K / 8];
    uint8_t qs[PW__QK_K / 4];
    uint8_t scales[12];
    uint16_t d;
} pw__block_q3_K;
_Static_assert(sizeof(pw__block_q3_K) == 110, "Q3_K block is 110 bytes");

/* Q4_K, 144 bytes: [0,2) fp16 d; [2,4) fp16 dmin; [4,16) eight 6-bit scales
 * and eight 6-bit mins, one per 32-element sub-block (pw__k4_scale_min());
 * [16,144) nibbles: 64-element chunk c = e/64 uses bytes [32c, 32c+32), its
 * first 32 elements in the low nibbles, its last 32 in the high nibbles.
 * value = (d * scale) * q - (dmin * min). */
typedef struct pw__block_q4_K {
    uint16_t d;
    uint16_t dmin;
    uint8_t scales[PW__K_SCALE_SIZE];
    uint8_t qs[PW__QK_K / 2];
} pw__block_q4_K;
_Static_assert(sizeof(pw__block_q4_K) == 144, "Q4_K block is 144 bytes");

/* Q5_K, 176 bytes: [0,2) fp16 d; [2,4) fp16 dmin; [4,16) scales/mins as
 * Q4_K; [16,48) qh: bit e/32 of byte e%32 is bit 4 of element e; [48,176)
 * low nibbles laid out as Q4_K.
 * value = (d * scale) * (low4 + 16*high) - (dmin * min). */
typedef struct pw__block_q5_K {
    uint16_t d;
    uint16_t dmin;
    uint8_t scales[PW__K_SCALE_SIZE];
    uint8_t qh[PW__QK_K / 8];
    uint8_t qs[PW__QK_K / 2];
} pw__block_q5_K;
_Static_assert(sizeof(pw__block_q5_K) == 176, "Q5_K block is 176 bytes");

/* Q6_K, 210 bytes: [0,128) ql low nibbles; [128,192) qh 2-bit highs;
 * [192,208) int8 scales, one per 16-element sub-block e/16; [208,210) fp16 d.
 * Element e, with half h = e/128, l = e%32, group g = (e%128)/32:
 *   low4  = nibble g/2 (low for g<2) of ql[64h + 32*(g%2) + l]
 *   high2 = bits 2g..2g+1 of qh[32h + l]
 * value = (d * scale) * ((low4 | high2 << 4) - 32). */
typedef struct pw__block_q6_K {
    uint8_t ql[PW__QK_K / 2];
    uint8_t qh[PW__QK_K / 4];
    int8_t scales[PW__QK_K / 16];
    uint16_t d;
} pw__block_q6_K;
_Static_assert(sizeof(pw__block_q6_K) == 210, "Q6_K block is 210 bytes");

/* Q8_K (activations of the K-quant dot products), 292 bytes: [0,4) float32
 * d (not fp16); [4,260) int8 quants; [260,292) int16 bsums, the sum of each
 * 16 consecutive quants. value = d * q. */
typedef struct pw__block_q8_K {
    float d;
    int8_t qs[PW__QK_K];
    int16_t bsums[PW__QK_K / 16];
} pw__block_q8_K;
_Static_assert(sizeof(pw__block_q8_K) == 292, "Q8_K block is 292 bytes");

/* ------------------------------------------------------------------------ */
/* Ternary super-blocks                                                     */
/* ------------------------------------------------------------------------ */

/* TQ1_0, 54 bytes: [0,48) qs, [48,52) qh, [52,54) fp16 d. Trits t in
 * {0,1,2} mean t - 1 in {-1,0,+1}; value = (t - 1) * d. A byte holds 5
 * trits (4 in qh) as a fixed-point fraction: byte = ceil(n * 256 / 243)
 * where n is the base-3 number whose most significant trit comes first; trit
 * k is recovered as ((uint8_t)(byte * 3^k) * 3) >> 8.
 * Elements   0..159: trit k of qs[m],       e = 32k + m (m < 32)
 * Elements 160..239: trit k of qs[32 + m],  e = 160 + 16k + m (m < 16)
 * Elements 240..255: trit k of qh[j],       e = 240 + 4k + j (k < 4, j < 4) */
typedef struct pw__block_tq1_0 {
    uint8_t qs[(PW__QK_K - 4 * PW__QK_K / 64) / 5];
    uint8_t qh[PW__QK_K / 64];
    uint16_t d;
} pw__block_tq1_0;
_Static_assert(sizeof(pw__block_tq1_0) == 54, "TQ1_0 block is 54 bytes");

/* TQ2_0, 66 bytes: [0,64) 2-bit trits, [64,66) fp16 d. Element e: byte
 * qs[32*(e/128) + e%32], bits 2*((e%128)/32) .. +1, value = (t - 1) * d. */
typedef struct pw__block_tq2_0 {
    uint8_t qs[PW__QK_K / 4];
    uint16_t d;
} pw__block_tq2_0;
_Static_assert(sizeof(pw__block_tq2_0) == 66, "TQ2_0 block is 66 bytes");

/* ------------------------------------------------------------------------ */
/* Scalar conversions                                                       */
/* ------------------------------------------------------------------------ */

static inline uint32_t pw__f32_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static inline float pw__f32_from_bits(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* IEEE half -> float, exact. Branch-free (both candidates computed, then
 * selected by masks) so loops over it vectorize. Normal and inf/NaN halves
 * only need their exponent rebiased (15 -> 127, or 31 -> 255), which keeps
 * NaN payloads bit for bit; a subnormal half is em * 2^-24 exactly. */
static inline float pw__f16_to_f32(uint16_t h) {
    const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    const uint32_t em = h & 0x7fffu;
    const uint32_t special = 0u - (uint32_t)(em >= 0x7c00u);
    const uint32_t subnormal_mask = 0u - (uint32_t)(em < 0x0400u);
    const uint32_t normal = (em << 13) + 0x38000000u + (special & 0x38000000u);
    const uint32_t subnormal = pw__f32_bits((float)(int32_t)em * 0x1p-24f);
    return pw__f32_from_bits(sign | (subnormal & subnormal_mask) | (normal & ~subnormal_mask));
}

/* Float -> IEEE half, round to nearest even, in integer arithmetic only so
 * the result is the same on every ISA and floating-point environment. NaN
 * becomes a quiet NaN with the top payload bits kept. */
static inline uint16_t pw__f32_to_f16(float f) {
    const uint32_t x = pw__f32_bits(f);
    const uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
    const uint32_t a = x & 0x7fffffffu;
    if (a > 0x7f800000u) return (uint16_t)(sign | 0x7e00u | ((a >> 13) & 0x3ffu));
    if (a >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* >= 65520 rounds to inf */
    if (a >= 0x38800000u) {                                  /* normal half */
        const uint32_t r = a - 0x38000000u;
        return (uint16_t)(sign | ((r + 0x0fffu + ((r >> 13) & 1u)) >> 13));
    }
    const uint32_t e = a >> 23;
    if (e < 102) return sign; /* below 2^-25: rounds to zero (2^-25 itself ties to even 0) */
    /* Half subnormal (or the smallest normal after rounding up): the value in
     * units of 2^-24 is m >> shift, rounded to nearest even. */
    const uint32_t m = (a & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126u - e; /* 14 .. 24 */
    uint32_t q = m >> shift;
    const uint32_t rem = m & ((1u << shift) - 1u);
    const uint32_t half = 1u << (shift - 1u);
    q += (rem > half) | ((rem == half) & (q & 1u));
    return (uint16_t)(sign | q);
}

/* bfloat16 -> float, exact. */
static inline float pw__bf16_to_f32(uint16_t h) { return pw__f32_from_bits((uint32_t)h << 16); }

/* Float -> bfloat16, round to nearest even; NaN is kept and made quiet, as
 * ggml does. */
static inline uint16_t pw__f32_to_bf16(float f) {
    const uint32_t x = pw__f32_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40u);
    return (uint16_t)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

/* ------------------------------------------------------------------------ */
/* K-quant scale packing                                                    */
/* ------------------------------------------------------------------------ */

/* Q4_K/Q5_K: scale and min (6 bits each) of 32-element sub-block j (0..7)
 * from the 12 packed bytes. Sub-blocks 0..3 keep their 6 bits in bytes j
 * (scale) and j+4 (min); sub-blocks 4..7 keep their low 4 bits in byte j+4
 * (scale low nibble, min high nibble) and their top 2 bits in the top bits
 * of bytes j-4 (scale) and j (min). */
static inline void pw__k4_scale_min(int j, const uint8_t *packed, uint8_t *scale, uint8_t *min) {
    if (j < 4) {
        *scale = packed[j] & 63;
        *min = packed[j + 4] & 63;
    } else {
        *scale = (uint8_t)((packed[j + 4] & 0xF) | ((packed[j - 4] >> 6) << 4));
        *min = (uint8_t)((packed[j + 4] >> 4) | ((packed[j] >> 6) << 4));
    }
}

/* Q3_K: the sixteen 6-bit scales of the 16-element sub-blocks, as stored
 * (0..63, the decoder subtracts 32). Low 4 bits of scale j: byte j%8, low
 * nibble for j < 8, high nibble for j >= 8. Top 2 bits: byte 8 + j%4, bits
 * 2*(j/4) .. +1. */
static inline void pw__q3k_unpack_scales(const uint8_t packed[12], int8_t out[16]) {
    for (int j = 0; j < 16; ++j) {
        const int low = j < 8 ? (packed[j] & 0xF) : (packed[j - 8] >> 4);
        const int high = (packed[8 + j % 4] >> (2 * (j / 4))) & 3;
        out[j] = (int8_t)(low | (high << 4));
    }
}

#endif
