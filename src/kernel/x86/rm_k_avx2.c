/*
 * AVX2 row-major GEMV kernels of the 256-element formats: Q2_K, Q3_K, Q4_K,
 * Q5_K, Q6_K, TQ1_0 and TQ2_0, read straight from the file's bytes (layout
 * PW_LAYOUT_BLOCKED_ROW_MAJOR, narrowed and offset views included) against
 * PW_ACT_Q8_256 activations, GGUF's Q8_K pairing. Two weight rows per pass.
 * The same block functions read input-block-major views as column streams
 * (pw__rm_ibm_run, rm_avx2.h).
 *
 * Activation block (pw__q8_256, 576 bytes):
 *   [d f32][sum s32][bsums: 16 x s16, one per 16 qs][pad][qs: 256 x s8][qu]
 *
 * Every format's quants are decoded to UNSIGNED codes (0..63) so one
 * vpmaddubsw (codes x qs) never saturates (2*63*127 = 16002); the signed
 * offset, where a format has one, is taken out exactly in int32 from the
 * activation sums: Q3_K codes are q + 4 (correction 4 * sum(scale_j * bsum_j)),
 * Q6_K q + 32, TQ2_0 t = q + 1 (correction sum(qs)). TQ1_0 applies the sign
 * of each trit minus one to the activations (psignb) instead. Sub-block scales
 * multiply in int16 x int16 (vpmaddwd), so one super-block ends in 8 int32
 * lanes and one f32 fma with d * x.d; the Q2_K/Q4_K/Q5_K minimum adds
 * -dmin * x.d * sum(min_j * bsum_j).
 *
 * Element order inside a super-block, by the bytes each format stores:
 *   Q2_K/Q3_K/TQ2_0  byte qs[32h + l], bits 2g..2g+1 -> element 128h + 32g + l
 *   Q3_K high bit    hmask[l] bit 4h + g (set: no -4)
 *   Q4_K/Q5_K        byte qs[32c + l]: low nibble -> 64c + l, high -> 64c + 32 + l
 *   Q5_K fifth bit   qh[l] bit j -> element 32j + l
 *   Q6_K             ql[64h + l] (g = 0, 2) / ql[64h + 32 + l] (g = 1, 3), nibble g/2,
 *                    qh[32h + l] bits 2g..2g+1 -> element 128h + 32g + l
 *   TQ1_0            qs[0..32) trit k -> 32k + l; qs[32..48) trit k -> 160 + 16k + m;
 *                    qh[0..4) trit k -> 240 + 4k + j
 *
 * Built twice (avx2_level.h): avx2, and avxvnni through rm_k_avxvnni.c. At
 * avxvnni only TQ1_0 and TQ2_0 change (vpdpbusd into int32 instead of int16
 * sums and a final widening); Q2_K..Q6_K multiply their int16 pair sums by
 * int16 sub-block scales in the vpmaddwd, which a vpdpbusd cannot do, so both
 * levels run the same instructions for them (rm_avx2.h).
 */
#if !defined(__AVX2__) || !defined(__FMA__) || !defined(__F16C__)
#error "rm_k_avx2.c must be compiled with -mavx2 -mfma -mf16c"
#endif

#include "kernel/x86/rm_avx2.h"

#include <stddef.h>

#define PW__RM_K_ROWS 2

static PW__AVX2_INLINE const pw__q8_256 *xblock(const uint8_t *x) {
    return (const pw__q8_256 *)(const void *)x;
}

/* vpshufb control repeating int16 lane j of each 128-bit half (scales as int16). */
static PW__AVX2_INLINE __m256i pick16(int j) {
    return _mm256_set1_epi16((short)((2 * j + 1) << 8 | 2 * j));
}

/* The eight int16 scales of half h (sub-blocks 8h .. 8h+7) in both 128-bit lanes. */
static PW__AVX2_INLINE __m256i half_scales(__m256i sc16, int h) {
    return h ? _mm256_permute2x128_si256(sc16, sc16, 0x11)
             : _mm256_permute2x128_si256(sc16, sc16, 0x00);
}

/* 16 int16 = scale 8h + 2g (8 lanes) then scale 8h + 2g + 1 (8 lanes), from half_scales(). */
static PW__AVX2_INLINE __m256i pair_scales(__m256i hs, int g) {
    const char a = (char)(4 * g), b = (char)(4 * g + 2);
    return _mm256_shuffle_epi8(
        hs,
        _mm256_setr_epi8(a, (char)(a + 1), a, (char)(a + 1), a, (char)(a + 1), a, (char)(a + 1), a,
                         (char)(a + 1), a, (char)(a + 1), a, (char)(a + 1), a, (char)(a + 1), b,
                         (char)(b + 1), b, (char)(b + 1), b, (char)(b + 1), b, (char)(b + 1), b,
                         (char)(b + 1), b, (char)(b + 1), b, (char)(b + 1), b, (char)(b + 1)));
}

/* Bit b (0..7) of every byte of v moved to bit `to` (0..7), other bits cleared. */
static PW__AVX2_INLINE __m256i bit_to(__m256i v, int b, int to) {
    const __m256i m = _mm256_set1_epi8((char)(1 << to));
    if (b > to) return _mm256_and_si256(_mm256_srli_epi16(v, b - to), m);
    if (b < to) return _mm256_and_si256(_mm256_slli_epi16(v, to - b), m);
    return _mm256_and_si256(v, m);
}

static PW__AVX2_INLINE __m256i two_bits(__m256i q, int g) {
    return _mm256_and_si256(_mm256_srli_epi16(q, 2 * g), _mm256_set1_epi8(3));
}

/* acc += s * cvt(sumi) where s = f16 d times x.d. */
static PW__AVX2_INLINE __m256 finish(__m256i sumi, uint16_t d, const pw__q8_256 *xb, __m256 acc) {
    return _mm256_fmadd_ps(_mm256_cvtepi32_ps(sumi), pw__f16_times(d, xb->d), acc);
}

/* The 16 int16 bsums of an activation block. */
static PW__AVX2_INLINE __m256i bsums16(const pw__q8_256 *xb) { return pw__ld256(xb->bsums); }

static PW__AVX2_INLINE __m256 q2_k_row(const uint8_t *w, const uint8_t *x, __m256 acc) {
    const pw__q8_256 *xb = xblock(x);
    const __m128i packed = pw__ld128(w + offsetof(pw__block_q2_K, scales));
    const __m256i sc = _mm256_cvtepu8_epi16(_mm_and_si128(packed, _mm_set1_epi8(0x0F)));
    const __m256i mn =
        _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(packed, 4), _mm_set1_epi8(0x0F)));
    __m256i sumi = _mm256_setzero_si256();
    for (int h = 0; h < 2; ++h) {
        const __m256i hs = half_scales(sc, h);
        const __m256i q = pw__ld256(w + offsetof(pw__block_q2_K, qs) + 32 * h);
        for (int g = 0; g < 4; ++g) {
            const __m256i p =
                _mm256_maddubs_epi16(two_bits(q, g), pw__ld256(xb->qs + 128 * h + 32 * g));
            sumi = _mm256_add_epi32(sumi, _mm256_madd_epi16(p, pair_scales(hs, g)));
        }
    }
    const __m256i mdot = _mm256_madd_epi16(mn, bsums16(xb));
    const __m128 dd = pw__f16x2_scale(w + offsetof(pw__block_q2_K, d), xb->d);
    acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sumi), _mm256_broadcastss_ps(dd), acc);
    return _mm256_fnmadd_ps(_mm256_cvtepi32_ps(mdot), _mm256_broadcastss_ps(_mm_movehdup_ps(dd)),
                            acc);
}

/* The sixteen Q3_K scales, stored value - 32, as int8. */
static PW__AVX2_INLINE __m128i q3_k_scales(const uint8_t *p) {
    const uint32_t a0 = pw__rd_u32(p), a1 = pw__rd_u32(p + 4), t = pw__rd_u32(p + 8);
    const uint32_t lo = 0x0f0f0f0fu, two = 0x03030303u;
    const __m128i s =
        _mm_setr_epi32((int)((a0 & lo) | (t & two) << 4), (int)((a1 & lo) | ((t >> 2) & two) << 4),
                       (int)(((a0 >> 4) & lo) | ((t >> 4) & two) << 4),
                       (int)(((a1 >> 4) & lo) | ((t >> 6) & two) << 4));
    return _mm_sub_epi8(s, _mm_set1_epi8(32));
}

static PW__AVX2_INLINE __m256 q3_k_row(const uint8_t *w, const uint8_t *x, __m256 acc) {
    const pw__q8_256 *xb = xblock(x);
    const __m256i sc = _mm256_cvtepi8_epi16(q3_k_scales(w + offsetof(pw__block_q3_K, scales)));
    /* codes are q + 4: take 4 * sum_j scale_j * bsum_j out up front */
    const __m256i corr = _mm256_madd_epi16(sc, bsums16(xb));
    __m256i sumi = _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(corr, 2));
    const __m256i hm = pw__ld256(w + offsetof(pw__block_q3_K, hmask));
    for (int h = 0; h < 2; ++h) {
        const __m256i hs = half_scales(sc, h);
        const __m256i q = pw__ld256(w + offsetof(pw__block_q3_K, qs) + 32 * h);
        for (int g = 0; g < 4; ++g) {
            const __m256i codes = _mm256_or_si256(two_bits(q, g), bit_to(hm, 4 * h + g, 2));
            const __m256i p = _mm256_maddubs_epi16(codes, pw__ld256(xb->qs + 128 * h + 32 * g));
            sumi = _mm256_add_epi32(sumi, _mm256_madd_epi16(p, pair_scales(hs, g)));
        }
    }
    return finish(sumi, pw__rd_u16(w + offsetof(pw__block_q3_K, d)), xb, acc);
}

/* Q4_K/Q5_K: the eight 6-bit scales (int16 lanes 0..7) and mins (lanes 8..15). */
static PW__AVX2_INLINE __m256i k4_scales_mins(const uint8_t *p) {
    const uint32_t u0 = pw__rd_u32(p), u1 = pw__rd_u32(p + 4), u2 = pw__rd_u32(p + 8);
    const uint32_t six = 0x3f3f3f3fu, lo = 0x0f0f0f0fu, two = 0x03030303u;
    const __m128i b =
        _mm_setr_epi32((int)(u0 & six), (int)((u2 & lo) | ((u0 >> 6) & two) << 4), (int)(u1 & six),
                       (int)(((u2 >> 4) & lo) | ((u1 >> 6) & two) << 4));
    return _mm256_cvtepu8_epi16(b);
}

/* Q4_K and Q5_K share everything but the fifth bit (qh == NULL for Q4_K). */
static PW__AVX2_INLINE __m256 k4_row(const uint8_t *w, const uint8_t *qh, const uint8_t *qs,
                                     const pw__q8_256 *xb, __m256 acc) {
    const __m256i sm = k4_scales_mins(w + offsetof(pw__block_q4_K, scales));
    const __m256i scales = _mm256_permute2x128_si256(sm, sm, 0x00);
    /* min_j pairs with the sum of 32 activations: bsums 2j and 2j+1 */
    const __m256i bs = bsums16(xb);
    const __m128i bs32 =
        _mm_hadd_epi16(_mm256_castsi256_si128(bs), _mm256_extracti128_si256(bs, 1));
    const __m128i mdot = _mm_madd_epi16(_mm256_extracti128_si256(sm, 1), bs32);
    const __m256i m4 = _mm256_set1_epi8(0x0F);
    __m256i hb = qh ? pw__ld256(qh) : _mm256_setzero_si256();
    __m256i sumi = _mm256_setzero_si256();
    for (int c = 0; c < 4; ++c) {
        const __m256i q = pw__ld256(qs + 32 * c);
        __m256i lo = _mm256_and_si256(q, m4);
        __m256i hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), m4);
        if (qh) {
            lo = _mm256_or_si256(lo, bit_to(hb, 0, 4));
            hi = _mm256_or_si256(hi, bit_to(hb, 1, 4));
            hb = _mm256_srli_epi16(hb, 2);
        }
        const __m256i p0 = _mm256_maddubs_epi16(lo, pw__ld256(xb->qs + 64 * c));
        const __m256i p1 = _mm256_maddubs_epi16(hi, pw__ld256(xb->qs + 64 * c + 32));
        sumi = _mm256_add_epi32(sumi,
                                _mm256_madd_epi16(p0, _mm256_shuffle_epi8(scales, pick16(2 * c))));
        sumi = _mm256_add_epi32(
            sumi, _mm256_madd_epi16(p1, _mm256_shuffle_epi8(scales, pick16(2 * c + 1))));
    }
    const __m128 dd = pw__f16x2_scale(w, xb->d); /* [d, dmin] * x.d */
    acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sumi), _mm256_broadcastss_ps(dd), acc);
    return _mm256_fnmadd_ps(_mm256_zextps128_ps256(_mm_cvtepi32_ps(mdot)),
                            _mm256_broadcastss_ps(_mm_movehdup_ps(dd)), acc);
}

static PW__AVX2_INLINE __m256 q4_k_row(const uint8_t *w, const uint8_t *x, __m256 acc) {
    return k4_row(w, NULL, w + offsetof(pw__block_q4_K, qs), xblock(x), acc);
}

static PW__AVX2_INLINE __m256 q5_k_row(const uint8_t *w, const uint8_t *x, __m256 acc) {
    return k4_row(w, w + offsetof(pw__block_q5_K, qh), w + offsetof(pw__block_q5_K, qs), xblock(x),
                  acc);
}

static PW__AVX2_INLINE __m256 q6_k_row(const uint8_t *w, const uint8_t *x, __m256 acc) {
    const pw__q8_256 *xb = xblock(x);
    const __m256i sc = _mm256_cvtepi8_epi16(pw__ld128(w + offsetof(pw__block_q6_K, scales)));
    /* codes are q + 32: take 32 * sum_j scale_j * bsum_j out up front */
    const __m256i corr = _mm256_madd_epi16(sc, bsums16(xb));
    __m256i sumi = _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(corr, 5));
    const __m256i m4 = _mm256_set1_epi8(0x0F);
    for (int h = 0; h < 2; ++h) {
        const __m256i hs = half_scales(sc, h);
        const __m256i a = pw__ld256(w + offsetof(pw__block_q6_K, ql) + 64 * h);
        const __m256i b = pw__ld256(w + offsetof(pw__block_q6_K, ql) + 64 * h + 32);
        const __m256i hq = pw__ld256(w + offsetof(pw__block_q6_K, qh) + 32 * h);
        const __m256i m2 = _mm256_set1_epi8(0x30);
        const __m256i codes[4] = {_mm256_or_si256(_mm256_and_si256(a, m4),
                                                  _mm256_and_si256(_mm256_slli_epi16(hq, 4), m2)),
                                  _mm256_or_si256(_mm256_and_si256(b, m4),
                                                  _mm256_and_si256(_mm256_slli_epi16(hq, 2), m2)),
                                  _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(a, 4), m4),
                                                  _mm256_and_si256(hq, m2)),
                                  _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(b, 4), m4),
                                                  _mm256_and_si256(_mm256_srli_epi16(hq, 2), m2))};
        for (int g = 0; g < 4; ++g) {
            const __m256i p = _mm256_maddubs_epi16(codes[g], pw__ld256(xb->qs + 128 * h + 32 * g));
            sumi = _mm256_add_epi32(sumi, _mm256_madd_epi16(p, pair_scales(hs, g)));
        }
    }
    return finish(sumi, pw__rd_u16(w + offsetof(pw__block_q6_K, d)), xb, acc);
}

/*
 * Ternary and TQ1_0's signed sums: products u x s (u <= 3) added up over a whole
 * block. avx2: in int16 pairs (vpmaddubsw, vpaddw; 8 x 2*3*127 < 32767), widened
 * once at the end; avxvnni: vpdpbusd into int32 quads, nothing to widen.
 */
static PW__AVX2_INLINE __m256i small_acc(__m256i acc, __m256i u, __m256i s) {
    if (PW__VNNI) return pw__dpbusd(acc, u, s);
    return _mm256_add_epi16(acc, _mm256_maddubs_epi16(u, s));
}

static PW__AVX2_INLINE __m256i small_widen(__m256i acc) {
    if (PW__VNNI) return acc;
    return _mm256_madd_epi16(acc, _mm256_set1_epi16(1));
}

/* Ternary: sum of t * qs over a block, t = q + 1 in {0, 1, 2} (TQ2_0 may store 3),
 * summed by small_acc, minus sum(qs) in lane 0. */
static PW__AVX2_INLINE __m256 ternary_finish(__m256i part, uint16_t d, const pw__q8_256 *xb,
                                             __m256 acc) {
    __m256i sumi = small_widen(part);
    sumi = _mm256_sub_epi32(sumi, pw__lane0_epi32(xb->sum));
    return finish(sumi, d, xb, acc);
}

static PW__AVX2_INLINE __m256 tq2_0_row(const uint8_t *w, const uint8_t *x, __m256 acc) {
    const pw__q8_256 *xb = xblock(x);
    __m256i part = _mm256_setzero_si256();
    for (int h = 0; h < 2; ++h) {
        const __m256i q = pw__ld256(w + offsetof(pw__block_tq2_0, qs) + 32 * h);
        for (int g = 0; g < 4; ++g)
            part = small_acc(part, two_bits(q, g), pw__ld256(xb->qs + 128 * h + 32 * g));
    }
    return ternary_finish(part, pw__rd_u16(w + offsetof(pw__block_tq2_0, d)), xb, acc);
}

/* Bytes times 3, mod 256. */
static PW__AVX2_INLINE __m256i times3(__m256i v) {
    return _mm256_add_epi8(v, _mm256_add_epi8(v, v));
}

/* acc plus the sum of (t - 1) * x over 32 bytes (small_acc), t the leading trit of the
 * fixed-point bytes v ((v * 3) >> 8: 0 below 86, 1 below 171, else 2). The sign
 * of (v - 170 saturated) - (86 - v saturated) is the sign of t - 1, so psignb
 * applies it to x directly; the pair sums stay within +-254. */
static PW__AVX2_INLINE __m256i trit_dot(__m256i acc, __m256i v, __m256i x) {
    const __m256i up = _mm256_subs_epu8(v, _mm256_set1_epi8((char)170));
    const __m256i down = _mm256_subs_epu8(_mm256_set1_epi8(86), v);
    const __m256i sx = _mm256_sign_epi8(x, _mm256_sub_epi8(up, down));
    return small_acc(acc, _mm256_set1_epi8(1), sx);
}

/*
 * TQ1_0 is compute-bound here, by the trits' decoding: each 32 weights cost two
 * vpaddb (the next trit: times 3), two saturating subtractions and a vpsubb (the sign),
 * vpsignb, the dot and its add, and the 80 weights of qs[32..48) and qh one more
 * broadcast-blend chain: about 80 vector operations per 54-byte block, against 8 to 12
 * for Q4_0's 18 bytes. Measured (Xeon, 2-core VM, one thread): with the weight in L2
 * ([512, 4096], 442 KiB, best of 5 x 2000 calls) avx2 3.9-4.6 GB/s, avxvnni 4.3-4.9;
 * packwise bench --kernel K --formats TQ1_0 --shapes 11008x4096 --batch 1 (cold), two
 * rounds: avx2 2.30 ms (28-29% of the read), avxvnni 1.99-2.10 ms (36-38%). A kernel
 * can read TQ1_0 no faster than about 4.5 GB/s on this core, whatever the bus.
 * Tried and dropped: an AVX-512 VNNI one (four 64-byte vectors a block holding all
 * 256 trits, each trit t = (3z) >> 8 made by two byte compares to masks, a masked
 * move and a blend, then one vpdpbusd(t, x) from -sum(x): about 48 operations a
 * block), measured 4.2-4.3 GB/s warm and 2.28-2.31 ms cold in the same runs: its
 * compares and mask moves share the one port that 512-bit shuffles and compares use.
 * TQ2_0 (2 bits a weight, a shift and a mask) is the ternary form to use where speed
 * matters.
 */
static PW__AVX2_INLINE __m256 tq1_0_row(const uint8_t *w, const uint8_t *x, __m256 acc) {
    const pw__q8_256 *xb = xblock(x);
    const uint8_t *qs = w + offsetof(pw__block_tq1_0, qs);
    __m256i part = _mm256_setzero_si256();
    /* elements 0..159: trit k of qs[l] -> 32k + l; multiplying by 3 shifts the next trit up */
    __m256i v = pw__ld256(qs);
    for (int k = 0; k < 5; ++k) {
        part = trit_dot(part, v, pw__ld256(xb->qs + 32 * k));
        v = times3(v);
    }
    /* elements 160..239: trit k of qs[32 + m] -> 160 + 16k + m, two trits per vector */
    const __m256i b = _mm256_broadcastsi128_si256(pw__ld128(qs + 32));
    const __m256i b01 = _mm256_blend_epi32(b, times3(b), 0xF0); /* [b | 3b] */
    const __m256i b23 = times3(times3(b01));                    /* [9b | 27b] */
    const __m256i b4 = times3(times3(b23));                     /* [81b | ...] */
    /* elements 240..255: trit k of qh[j] -> 240 + 4k + j */
    const __m128i h = _mm_set1_epi32((int)pw__rd_u32(w + offsetof(pw__block_tq1_0, qh)));
    const __m128i h3 = _mm_add_epi8(h, _mm_add_epi8(h, h));
    const __m128i h9 = _mm_add_epi8(h3, _mm_add_epi8(h3, h3));
    const __m128i h27 = _mm_add_epi8(h9, _mm_add_epi8(h9, h9));
    const __m128i hk =
        _mm_blend_epi32(_mm_blend_epi32(h, h3, 0x2), _mm_blend_epi32(h9, h27, 0x8), 0xC);
    const __m256i last = _mm256_inserti128_si256(b4, hk, 1);
    part = trit_dot(part, b01, pw__ld256(xb->qs + 160));
    part = trit_dot(part, b23, pw__ld256(xb->qs + 192));
    part = trit_dot(part, last, pw__ld256(xb->qs + 224));
    const __m256i sumi = small_widen(part);
    return finish(sumi, pw__rd_u16(w + offsetof(pw__block_tq1_0, d)), xb, acc);
}

/* Block functions: a super-block is large enough that each row converts its own scales. */
typedef __m256 (*row_fn)(const uint8_t *w, const uint8_t *x, __m256 acc);

static PW__AVX2_INLINE void each_row(const uint8_t *w, int64_t rs, int rows, const uint8_t *x,
                                     __m256 acc[5], row_fn f) {
    for (int r = 0; r < rows; ++r) acc[r] = f(w + r * rs, x, acc[r]);
}

static PW__AVX2_INLINE void q2_k_block(const uint8_t *w, int64_t rs, int rows, const uint8_t *x,
                                       __m256 acc[5]) {
    each_row(w, rs, rows, x, acc, q2_k_row);
}

static PW__AVX2_INLINE void q3_k_block(const uint8_t *w, int64_t rs, int rows, const uint8_t *x,
                                       __m256 acc[5]) {
    each_row(w, rs, rows, x, acc, q3_k_row);
}

static PW__AVX2_INLINE void q4_k_block(const uint8_t *w, int64_t rs, int rows, const uint8_t *x,
                                       __m256 acc[5]) {
    each_row(w, rs, rows, x, acc, q4_k_row);
}

static PW__AVX2_INLINE void q5_k_block(const uint8_t *w, int64_t rs, int rows, const uint8_t *x,
                                       __m256 acc[5]) {
    each_row(w, rs, rows, x, acc, q5_k_row);
}

static PW__AVX2_INLINE void q6_k_block(const uint8_t *w, int64_t rs, int rows, const uint8_t *x,
                                       __m256 acc[5]) {
    each_row(w, rs, rows, x, acc, q6_k_row);
}

static PW__AVX2_INLINE void tq1_0_block(const uint8_t *w, int64_t rs, int rows, const uint8_t *x,
                                        __m256 acc[5]) {
    each_row(w, rs, rows, x, acc, tq1_0_row);
}

static PW__AVX2_INLINE void tq2_0_block(const uint8_t *w, int64_t rs, int rows, const uint8_t *x,
                                        __m256 acc[5]) {
    each_row(w, rs, rows, x, acc, tq2_0_row);
}

/* Each format's run functions and kernel descriptors (PW__RM_KERNELS, rm_avx2.h): its
 * block function in the row-major loop and in the input-block-major streams. */
PW__RM_KERNELS(q2_k, PW_FORMAT_Q2_K, q2_K, 256, Q8_256, PW__RM_K_ROWS, 0, PASSES)
PW__RM_KERNELS(q3_k, PW_FORMAT_Q3_K, q3_K, 256, Q8_256, PW__RM_K_ROWS, 0, PASSES)
PW__RM_KERNELS(q4_k, PW_FORMAT_Q4_K, q4_K, 256, Q8_256, PW__RM_K_ROWS, 0, PASSES)
PW__RM_KERNELS(q5_k, PW_FORMAT_Q5_K, q5_K, 256, Q8_256, PW__RM_K_ROWS, 0, PASSES)
PW__RM_KERNELS(q6_k, PW_FORMAT_Q6_K, q6_K, 256, Q8_256, PW__RM_K_ROWS, 0, PASSES)
PW__RM_KERNELS(tq1_0, PW_FORMAT_TQ1_0, tq1_0, 256, Q8_256, PW__RM_K_ROWS, 0, PASSES)
PW__RM_KERNELS(tq2_0, PW_FORMAT_TQ2_0, tq2_0, 256, Q8_256, PW__RM_K_ROWS, 0, PASSES)
