#if !defined(__AVX2__) || !defined(__FMA__) || !defined(__F16C__)
#error "q4x_avx2.c needs AVX2, FMA and F16C (the build sets them for *_avx2.c and *_avxvnni.c)"
#endif
/*
 * AVX2 and AVX-VNNI GEMV and GEMM over the q4x32k4 family (layout in
 * kernel/q4x.h): the bytes the AVX-512 kernels read, so a weight packed (or a
 * cache file written) on an AVX-512 machine serves these levels as it is. The
 * loops are tile32_avx2.h's; this file is the record functions, built twice
 * (avx2_level.h: as itself, and through q4x_avxvnni.c).
 *
 * A 64-byte step s of a record is two ymm: bytes [64s, 64s + 32) hold rows
 * 0..7 (low nibbles) and 16..23 (high), bytes [64s + 32, 64s + 64) rows 8..15
 * and 24..31, four k values per int32 lane. With c = -8 * x.sum per block and
 * row of X:
 *
 *   AVX-VNNI  lo = c + sum_s dpbusd(v & 0x0F, a_s),  all = 17 c + sum_s dpbusd(v, a_s),
 *             hi = (all - lo) >> 4 (q[r] + 16 q[r + 16], unmasked: the AVX-512
 *             kernel's derivation, q4x_avx512.c): 2 masks and 4 dot products a step.
 *   AVX2      vpmaddubsw saturates its int16 pair sums, so the whole byte (up to 255)
 *             cannot be a factor: both nibbles are masked, and the int16 pair sums
 *             of the 8 steps are added in int16 (|.| <= 8 * 2 * 15 * 127 = 30480,
 *             exact), then widened once per record with one vpmaddwd: 6 unpacking
 *             ops, 4 vpmaddubsw and 4 vpaddw a step.
 *
 * then acc += f32(dot) * f32(d) * x.d for each group of 8 rows, as the other kernels.
 * GEMM: the same per row of X for a panel of up to 4 rows, the step unpacked once
 * per panel (tile32_avx2.h keeps the f32 sums in L1).
 *
 * Q5_0 (q5x32k4, kernel/q5x.h) and IQ4_NL (iq4x32k4, kernel/iq4x.h) run the same
 * functions with a constant format (PW__Q4X_*), both nibbles masked: Q5_0's bit 4 or-ed
 * in from the record's planes (a shift and a mask, pw__t32a_bit16), offset -16, AVX2's
 * int16 sums widened every four steps (4 * 2 * 31 * 128 < 32767); IQ4_NL's nibbles
 * through the codebook + 128 on AVX-VNNI (vpshufb, offset -128), and on AVX2 through
 * its magnitudes with the signs moved onto the activations (vpsignb; vpmaddubsw's
 * pairs of 241 x 127 would saturate), widened every step (2 * 127 * 127 a pair).
 * Q4_1 and Q5_1 (q41x32k4, q51x32k4, kernel/q41x.h) run Q4_0's and Q5_0's with no
 * offset, then acc += f32(m) * x.dsum for each group of 8 rows, m the rows' fp16 minima.
 */
#include "format/blocks.h"
#include "kernel/iq4x.h"
#include "kernel/q41x.h"
#include "kernel/q4x.h"
#include "kernel/q5x.h"
#include "kernel/x86/tile32_avx2.h"

#define Q4XA_INLINE static inline __attribute__((always_inline))

/* IQ4_NL (iq4x.h): the codebook in both 128-bit lanes, as vpshufb tables: + 128 (the
 * unsigned side of vpdpbusd) or, for AVX2's vpmaddubsw (whose int16 pairs 241 x 127
 * would saturate), its magnitudes, the signs then taken from the codebook itself onto
 * the activations (vpsignb; no value is 0). */
Q4XA_INLINE __m256i q4xa_book(int biased) {
    const __m128i k = _mm_loadu_si128((const __m128i *)pw__iq4nl_values);
    return _mm256_broadcastsi128_si256(biased ? _mm_add_epi8(k, _mm_set1_epi8((char)0x80)) : k);
}
Q4XA_INLINE __m256i q4xa_book_abs(void) {
    const __m128i k = _mm_loadu_si128((const __m128i *)pw__iq4nl_values);
    return _mm256_broadcastsi128_si256(_mm_abs_epi8(k));
}

/* The four int32 dot vectors of a record of format f (PW__Q4X_*) with one activation
 * block, rows 8q..8q+7 in dot[q], the offset included. */
Q4XA_INLINE void q4xa_dots(const uint8_t *rec, const pw__q8_32 *xb, __m256i dot[4], const int f) {
    const int q5 = PW__Q4X_BIT4(f), nl = f == PW__Q4X_IQ4_NL;
    const __m256i m = _mm256_set1_epi8(0x0F);
    const int32_t offset = nl ? (PW__VNNI ? -128 : 0) : PW__Q4X_OFFSET(f);
    const __m256i c = _mm256_set1_epi32(offset * xb->sum);
    if (f != PW__Q4X_Q4_0 && f != PW__Q4X_Q4_1) {
        /* Q5_0, Q5_1 (q5x.h): both nibbles masked, bit 4 or-ed in from the planes (L for
         * groups 0, 1, H for 2, 3, in the halves of the steps); AVX-VNNI in two chains
         * (even and odd steps) as below, AVX2 in int16 four steps at a time: |.| <= 4 * 2
         * * 31 * 128. IQ4_NL (iq4x.h): both nibbles through the codebook (q4xa_book);
         * AVX2 widens every step (|.| <= 2 * 127 * 127 a pair). */
        const __m256i pl[4] = {
            q5 ? _mm256_loadu_si256((const __m256i *)(rec + PW__Q5X_BITS)) : m,
            q5 ? _mm256_loadu_si256((const __m256i *)(rec + PW__Q5X_BITS + 32)) : m,
            q5 ? _mm256_loadu_si256((const __m256i *)(rec + PW__Q5X_BITS + 64)) : m,
            q5 ? _mm256_loadu_si256((const __m256i *)(rec + PW__Q5X_BITS + 96)) : m};
        const __m256i book = q4xa_book(PW__VNNI), book_abs = q4xa_book_abs();
        __m256i d[2][4], wide[4];
        for (int q = 0; q < 4; ++q) {
            d[0][q] = d[1][q] = _mm256_setzero_si256();
            wide[q] = c;
        }
        const __m256i one = _mm256_set1_epi16(1);
#pragma GCC unroll 8
        for (int s = 0; s < 8; ++s) {
            const __m256i v0 = _mm256_loadu_si256((const __m256i *)(rec + 64 * s));
            const __m256i v1 = _mm256_loadu_si256((const __m256i *)(rec + 64 * s + 32));
            const __m256i a = pw__t32a_bcast4(xb->qs + 4 * s);
            __m256i q[4] = {_mm256_and_si256(v0, m), _mm256_and_si256(v1, m),
                            _mm256_and_si256(_mm256_srli_epi16(v0, 4), m),
                            _mm256_and_si256(_mm256_srli_epi16(v1, 4), m)};
#pragma GCC unroll 4
            for (int g = 0; g < 4; ++g) {
                if (q5) q[g] = _mm256_or_si256(q[g], pw__t32a_bit16(pl[g], s));
                if (nl && !PW__VNNI) { /* |value| x (activation with the value's sign) */
                    const __m256i sa = _mm256_sign_epi8(a, _mm256_shuffle_epi8(book, q[g]));
                    const __m256i p = _mm256_maddubs_epi16(_mm256_shuffle_epi8(book_abs, q[g]), sa);
                    wide[g] = _mm256_add_epi32(wide[g], _mm256_madd_epi16(p, one));
                    continue;
                }
                if (nl) q[g] = _mm256_shuffle_epi8(book, q[g]);
                d[PW__VNNI ? s % 2 : 0][g] =
                    PW__VNNI ? pw__dpbusd(d[s % 2][g], q[g], a)
                             : _mm256_add_epi16(d[0][g], _mm256_maddubs_epi16(q[g], a));
            }
            if (q5 && !PW__VNNI && (s == 3 || s == 7))
#pragma GCC unroll 4
                for (int g = 0; g < 4; ++g) {
                    wide[g] = _mm256_add_epi32(wide[g], _mm256_madd_epi16(d[0][g], one));
                    d[0][g] = _mm256_setzero_si256();
                }
        }
        for (int g = 0; g < 4; ++g)
            dot[g] = PW__VNNI ? _mm256_add_epi32(c, _mm256_add_epi32(d[0][g], d[1][g])) : wide[g];
        return;
    }
    if (PW__VNNI) {
        /* two chains per sum (even and odd steps): 8 dependent vpdpbusd a record
         * would make the record's latency, not its throughput, the limit */
        __m256i lo0 = c, lo1 = c, all0 = _mm256_set1_epi32(17 * offset * xb->sum), all1 = all0;
        __m256i lo0b = _mm256_setzero_si256(), lo1b = lo0b, all0b = lo0b, all1b = lo0b;
#pragma GCC unroll 8
        for (int s = 0; s < 8; s += 2) {
            const __m256i v0 = _mm256_loadu_si256((const __m256i *)(rec + 64 * s));
            const __m256i v1 = _mm256_loadu_si256((const __m256i *)(rec + 64 * s + 32));
            const __m256i a = pw__t32a_bcast4(xb->qs + 4 * s);
            const __m256i u0 = _mm256_loadu_si256((const __m256i *)(rec + 64 * s + 64));
            const __m256i u1 = _mm256_loadu_si256((const __m256i *)(rec + 64 * s + 96));
            const __m256i b = pw__t32a_bcast4(xb->qs + 4 * s + 4);
            lo0 = pw__dpbusd(lo0, _mm256_and_si256(v0, m), a);
            lo1 = pw__dpbusd(lo1, _mm256_and_si256(v1, m), a);
            all0 = pw__dpbusd(all0, v0, a);
            all1 = pw__dpbusd(all1, v1, a);
            lo0b = pw__dpbusd(lo0b, _mm256_and_si256(u0, m), b);
            lo1b = pw__dpbusd(lo1b, _mm256_and_si256(u1, m), b);
            all0b = pw__dpbusd(all0b, u0, b);
            all1b = pw__dpbusd(all1b, u1, b);
        }
        lo0 = _mm256_add_epi32(lo0, lo0b);
        lo1 = _mm256_add_epi32(lo1, lo1b);
        all0 = _mm256_add_epi32(all0, all0b);
        all1 = _mm256_add_epi32(all1, all1b);
        dot[0] = lo0;
        dot[1] = lo1;
        dot[2] = _mm256_srai_epi32(_mm256_sub_epi32(all0, lo0), 4);
        dot[3] = _mm256_srai_epi32(_mm256_sub_epi32(all1, lo1), 4);
    } else {
        __m256i w0 = _mm256_setzero_si256(), w1 = w0, w2 = w0, w3 = w0;
#pragma GCC unroll 8
        for (int s = 0; s < 8; ++s) {
            const __m256i v0 = _mm256_loadu_si256((const __m256i *)(rec + 64 * s));
            const __m256i v1 = _mm256_loadu_si256((const __m256i *)(rec + 64 * s + 32));
            const __m256i a = pw__t32a_bcast4(xb->qs + 4 * s);
            w0 = _mm256_add_epi16(w0, _mm256_maddubs_epi16(_mm256_and_si256(v0, m), a));
            w1 = _mm256_add_epi16(w1, _mm256_maddubs_epi16(_mm256_and_si256(v1, m), a));
            w2 = _mm256_add_epi16(
                w2, _mm256_maddubs_epi16(_mm256_and_si256(_mm256_srli_epi16(v0, 4), m), a));
            w3 = _mm256_add_epi16(
                w3, _mm256_maddubs_epi16(_mm256_and_si256(_mm256_srli_epi16(v1, 4), m), a));
            PW__T32A_KEEP(w0); /* named, not an array: an array element pinned by asm */
            PW__T32A_KEEP(w1); /* lives on the stack */
            PW__T32A_KEEP(w2);
            PW__T32A_KEEP(w3);
        }
        const __m256i one = _mm256_set1_epi16(1);
        const __m256i w[4] = {w0, w1, w2, w3};
        for (int q = 0; q < 4; ++q) dot[q] = _mm256_add_epi32(c, _mm256_madd_epi16(w[q], one));
    }
}

/* GEMV record function (tile32_avx2.h). */
Q4XA_INLINE void q4xa_block_any(const uint8_t *rec, const uint8_t *xbp, int pf, __m256 acc[4],
                               const int f) {
    const pw__q8_32 *xb = (const pw__q8_32 *)xbp;
    if (pf) pw__tile32_prefetch_pf(rec, PW__Q4X_RECORD_OF(f), pf);
    __m256i dot[4];
    q4xa_dots(rec, xb, dot, f);
    const __m256 xd = _mm256_set1_ps(xb->d), xm = _mm256_set1_ps(xb->dsum);
    const uint8_t *mins = rec + PW__Q4X_RECORD_OF(f) - 64; /* Q4_1, Q5_1 (q41x.h) */
#pragma GCC unroll 4
    for (int q = 0; q < 4; ++q) {
        acc[q] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot[q]),
                                 _mm256_mul_ps(pw__t32a_f16x8(rec + PW__Q4X_SCALES + 16 * q), xd),
                                 acc[q]);
        if (PW__Q4X_MIN(f)) acc[q] = _mm256_fmadd_ps(pw__t32a_f16x8(mins + 16 * q), xm, acc[q]);
    }
}

Q4XA_INLINE void q4xa_block(const uint8_t *rec, const uint8_t *xbp, int pf, __m256 acc[4]) {
    q4xa_block_any(rec, xbp, pf, acc, PW__Q4X_Q4_0);
}
Q4XA_INLINE void q5xa_block(const uint8_t *rec, const uint8_t *xbp, int pf, __m256 acc[4]) {
    q4xa_block_any(rec, xbp, pf, acc, PW__Q4X_Q5_0);
}
Q4XA_INLINE void iq4xa_block(const uint8_t *rec, const uint8_t *xbp, int pf, __m256 acc[4]) {
    q4xa_block_any(rec, xbp, pf, acc, PW__Q4X_IQ4_NL);
}
Q4XA_INLINE void q41xa_block(const uint8_t *rec, const uint8_t *xbp, int pf, __m256 acc[4]) {
    q4xa_block_any(rec, xbp, pf, acc, PW__Q4X_Q4_1);
}
Q4XA_INLINE void q51xa_block(const uint8_t *rec, const uint8_t *xbp, int pf, __m256 acc[4]) {
    q4xa_block_any(rec, xbp, pf, acc, PW__Q4X_Q5_1);
}

/* GEMM record function (tile32_avx2.h): each half of a step (rows 0..7 and 16..23,
 * then 8..15 and 24..31) unpacked once for the panel's mr rows. */
Q4XA_INLINE void q4xa_gemm_any(const uint8_t *rec, const uint8_t *const *x,
                               float acc[][PW__TILE32_NR], const int mr, const int f) {
    const int q5 = PW__Q4X_BIT4(f), nl = f == PW__Q4X_IQ4_NL;
    const int32_t offset = nl ? (PW__VNNI ? -128 : 0) : PW__Q4X_OFFSET(f);
    const uint8_t *mins = rec + PW__Q4X_RECORD_OF(f) - 64; /* Q4_1, Q5_1 (q41x.h) */
    const __m256i m = _mm256_set1_epi8(0x0F);
    const __m256i one = _mm256_set1_epi16(1);
    const __m256i book = q4xa_book(PW__VNNI), book_abs = q4xa_book_abs(); /* IQ4_NL */
#pragma GCC unroll 2
    for (int h = 0; h < 2; ++h) {
        __m256i lo[PW__T32AG_MR], hi[PW__T32AG_MR];
        /* AVX2 Q5_0: the first four steps' int16 sums, widened (q4xa_dots) */
        __m256i part[PW__T32AG_MR][2];
        const __m256i bl =
            q5 ? _mm256_loadu_si256((const __m256i *)(rec + PW__Q5X_BITS + 32 * h)) : m;
        const __m256i bh =
            q5 ? _mm256_loadu_si256((const __m256i *)(rec + PW__Q5X_BITS + 64 + 32 * h)) : m;
#pragma GCC unroll 4
        for (int r = 0; r < mr; ++r) {
            lo[r] = hi[r] = _mm256_setzero_si256();
            part[r][0] = part[r][1] = _mm256_setzero_si256();
        }
#pragma GCC unroll 8
        for (int s = 0; s < 8; ++s) {
            const __m256i v = _mm256_loadu_si256((const __m256i *)(rec + 64 * s + 32 * h));
            __m256i vl = _mm256_and_si256(v, m);
            __m256i vh = _mm256_and_si256(_mm256_srli_epi16(v, 4), m);
            if (q5) {
                vl = _mm256_or_si256(vl, pw__t32a_bit16(bl, s));
                vh = _mm256_or_si256(vh, pw__t32a_bit16(bh, s));
            }
            /* IQ4_NL on AVX2: magnitudes (vl, vh) and signs (sl, sh), as q4xa_dots */
            __m256i sl = m, sh = m;
            if (nl && !PW__VNNI) {
                sl = _mm256_shuffle_epi8(book, vl);
                sh = _mm256_shuffle_epi8(book, vh);
                vl = _mm256_shuffle_epi8(book_abs, vl);
                vh = _mm256_shuffle_epi8(book_abs, vh);
            } else if (nl) {
                vl = _mm256_shuffle_epi8(book, vl);
                vh = _mm256_shuffle_epi8(book, vh);
            }
#pragma GCC unroll 4
            for (int r = 0; r < mr; ++r) {
                const __m256i a = pw__t32a_bcast4(((const pw__q8_32 *)x[r])->qs + 4 * s);
                if (nl && !PW__VNNI) { /* int32 sums, widened every step */
                    const __m256i pl = _mm256_maddubs_epi16(vl, _mm256_sign_epi8(a, sl));
                    const __m256i ph = _mm256_maddubs_epi16(vh, _mm256_sign_epi8(a, sh));
                    lo[r] = _mm256_add_epi32(lo[r], _mm256_madd_epi16(pl, one));
                    hi[r] = _mm256_add_epi32(hi[r], _mm256_madd_epi16(ph, one));
                } else if (PW__VNNI) {
                    lo[r] = pw__dpbusd(lo[r], vl, a);
                    hi[r] = pw__dpbusd(hi[r], vh, a);
                } else { /* int16 sums, exact (the file's comment) */
                    lo[r] = _mm256_add_epi16(lo[r], _mm256_maddubs_epi16(vl, a));
                    hi[r] = _mm256_add_epi16(hi[r], _mm256_maddubs_epi16(vh, a));
                }
                PW__T32A_KEEP(lo[r]);
                PW__T32A_KEEP(hi[r]);
            }
            if (q5 && !PW__VNNI && s == 3)
#pragma GCC unroll 4
                for (int r = 0; r < mr; ++r) {
                    part[r][0] = _mm256_madd_epi16(lo[r], one);
                    part[r][1] = _mm256_madd_epi16(hi[r], one);
                    lo[r] = hi[r] = _mm256_setzero_si256();
                }
        }
        const __m256 dl = pw__t32a_f16x8(rec + PW__Q4X_SCALES + 16 * h);
        const __m256 dh = pw__t32a_f16x8(rec + PW__Q4X_SCALES + 32 + 16 * h);
#pragma GCC unroll 4
        for (int r = 0; r < mr; ++r) {
            const pw__q8_32 *xb = (const pw__q8_32 *)x[r];
            const __m256i c = _mm256_set1_epi32(offset * xb->sum);
            __m256i l = lo[r], u = hi[r];
            if (!PW__VNNI && !nl) {
                l = _mm256_madd_epi16(l, one);
                u = _mm256_madd_epi16(u, one);
                if (q5) {
                    l = _mm256_add_epi32(l, part[r][0]);
                    u = _mm256_add_epi32(u, part[r][1]);
                }
            }
            l = _mm256_add_epi32(l, c);
            u = _mm256_add_epi32(u, c);
            const __m256 xd = _mm256_set1_ps(xb->d);
            float *a0 = acc[r] + 8 * h, *a1 = acc[r] + 16 + 8 * h;
            __m256 s0 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(l), _mm256_mul_ps(dl, xd),
                                        _mm256_load_ps(a0));
            __m256 s1 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(u), _mm256_mul_ps(dh, xd),
                                        _mm256_load_ps(a1));
            if (PW__Q4X_MIN(f)) {
                const __m256 xm = _mm256_set1_ps(xb->dsum);
                s0 = _mm256_fmadd_ps(pw__t32a_f16x8(mins + 16 * h), xm, s0);
                s1 = _mm256_fmadd_ps(pw__t32a_f16x8(mins + 32 + 16 * h), xm, s1);
            }
            _mm256_store_ps(a0, s0);
            _mm256_store_ps(a1, s1);
        }
    }
}

Q4XA_INLINE void q4xa_gemm_block(const uint8_t *rec, const uint8_t *const *x,
                                 float acc[][PW__TILE32_NR], const int mr) {
    q4xa_gemm_any(rec, x, acc, mr, PW__Q4X_Q4_0);
}
Q4XA_INLINE void q5xa_gemm_block(const uint8_t *rec, const uint8_t *const *x,
                                 float acc[][PW__TILE32_NR], const int mr) {
    q4xa_gemm_any(rec, x, acc, mr, PW__Q4X_Q5_0);
}
Q4XA_INLINE void iq4xa_gemm_block(const uint8_t *rec, const uint8_t *const *x,
                                  float acc[][PW__TILE32_NR], const int mr) {
    q4xa_gemm_any(rec, x, acc, mr, PW__Q4X_IQ4_NL);
}
Q4XA_INLINE void q41xa_gemm_block(const uint8_t *rec, const uint8_t *const *x,
                                  float acc[][PW__TILE32_NR], const int mr) {
    q4xa_gemm_any(rec, x, acc, mr, PW__Q4X_Q4_1);
}
Q4XA_INLINE void q51xa_gemm_block(const uint8_t *rec, const uint8_t *const *x,
                                  float acc[][PW__TILE32_NR], const int mr) {
    q4xa_gemm_any(rec, x, acc, mr, PW__Q4X_Q5_1);
}

#define Q4XA_FEATURES PW__AVX2_FEATURES(PW_CPU_AVX2 | PW_CPU_FMA | PW_CPU_F16C)

/* A family's runs and descriptors: the GEMV (pre_##_block over records of record_
 * bytes, two streams), the GEMM (pre_##_gemm_block) and the GEMM over input-block-major
 * bytes as they are (each tile's records of a pass made in an L1 scratch from the
 * blocks of its columns by make_, portable C, then the same panels over them:
 * kernel/tile32_gemm.h). sym_ names the family's kernels (q4_0_q4x32k4 ->
 * q4_0_q4x32k4_<isa>, q4_0_q4x32k4_gemm_<isa>), id_ the format (q4_0_ibm_gemm_<isa>);
 * KERNEL_ and GEMM_KERNEL_ are the family's descriptor macros. */
#define Q4XA_FAMILY(pre_, sym_, id_, format_, record_, block_t_, make_, KERNEL_, GEMM_KERNEL_)  \
    static void pre_##_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0,          \
                           int64_t i1) {                                                      \
        pw__t32a_run(c, o0, o1, i0, i1, 32, record_, sizeof(pw__q8_32), pre_##_block, 2,      \
                     PW__HW_ZEN4);                                                            \
    }                                                                                         \
    static void pre_##_gemm_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0,     \
                                int64_t i1) {                                                 \
        pw__t32ag_run(c, o0, o1, i0, i1, 32, record_, sizeof(pw__q8_32), pre_##_gemm_block);  \
    }                                                                                         \
    const pw__kernel PW__AVX2_SYM(pw__k_##sym_) =                                             \
        KERNEL_(PW__AVX2_ISA, Q4XA_FEATURES, pre_##_run, PW__AVX2_PRIO + 2);                   \
    const pw__kernel PW__AVX2_SYM(pw__k_##sym_##_gemm) = GEMM_KERNEL_(                        \
        PW__AVX2_ISA, Q4XA_FEATURES, pre_##_gemm_run, PW__AVX2_PRIO + PW__PRIO_GEMM - 1,       \
        PW__T32AG_MR);                                                                        \
    PW__TILE32_IBM_FILL(pre_##_fill_ibm, block_t_, record_, make_)                            \
    static void pre_##_ibm_gemm_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, \
                                    int64_t i1) {                                             \
        pw__t32ag_run_fill(c, o0, o1, i0, i1, 32, record_, sizeof(pw__q8_32),                 \
                           pre_##_gemm_block, pre_##_fill_ibm);                               \
    }                                                                                         \
    const pw__kernel PW__AVX2_SYM(pw__k_##id_##_ibm_gemm) = PW__TILE32_IBM_GEMM_KERNEL(       \
        #id_, format_, Q8_32, PW__AVX2_ISA, Q4XA_FEATURES, pre_##_ibm_gemm_run,                \
        PW__AVX2_PRIO + PW__PRIO_GEMM - 1, PW__T32AG_MR);

Q4XA_FAMILY(q4xa, q4_0_q4x32k4, q4_0, PW_FORMAT_Q4_0, PW__Q4X_RECORD, pw__block_q4_0,
            pw__q4x_record_from_blocks, PW__Q4X_KERNEL, PW__Q4X_GEMM_KERNEL)
/* Q5_0's records (q5x.h) and IQ4_NL's (iq4x.h; its blocks are laid out as Q4_0's: the
 * same record maker), read as Q4_0's are. */
Q4XA_FAMILY(q5xa, q5_0_q5x32k4, q5_0, PW_FORMAT_Q5_0, PW__Q5X_RECORD, pw__block_q5_0,
            pw__q5x_record_from_blocks, PW__Q5X_KERNEL, PW__Q5X_GEMM_KERNEL)
Q4XA_FAMILY(iq4xa, iq4_nl_iq4x32k4, iq4_nl, PW_FORMAT_IQ4_NL, PW__Q4X_RECORD, pw__block_iq4_nl,
            pw__q4x_record_from_blocks, PW__IQ4X_KERNEL, PW__IQ4X_GEMM_KERNEL)
/* Q4_1's and Q5_1's (q41x.h): Q4_0's and Q5_0's with no offset, then the rows' m. */
Q4XA_FAMILY(q41xa, q4_1_q41x32k4, q4_1, PW_FORMAT_Q4_1, PW__Q41X_RECORD, pw__block_q4_1,
            pw__q41x_record_from_blocks, PW__Q41X_KERNEL, PW__Q41X_GEMM_KERNEL)
Q4XA_FAMILY(q51xa, q5_1_q51x32k4, q5_1, PW_FORMAT_Q5_1, PW__Q51X_RECORD, pw__block_q5_1,
            pw__q51x_record_from_blocks, PW__Q51X_KERNEL, PW__Q51X_GEMM_KERNEL)
