#if !defined(__AVX2__) || !defined(__FMA__) || !defined(__F16C__)
#error "q2kx_avx2.c needs AVX2, FMA and F16C (the build sets them for *_avx2.c and *_avxvnni.c)"
#endif
/*
 * AVX2 and AVX-VNNI GEMV and GEMM over the q2kx32k4 family (layout in
 * kernel/q2kx.h): the bytes the AVX-512 kernels read, so a weight packed (or a
 * cache file written) on an AVX-512 machine serves these levels as it is. The
 * loops are tile32_avx2.h's (GEMV) and tile32_kgemm.h's (GEMM, record-major);
 * this file is the record functions, built twice (avx2_level.h: as itself, and
 * through q2kx_avxvnni.c). Activations are pw__q8_256 rows.
 *
 * A 64-byte load P_k of a sub-block is two ymm: half h = 0 (bytes 0..31) holds
 * rows 0..7 (bits 0-3) and 16..23 (bits 4-7), half h = 1 rows 8..15 and 24..31;
 * the tile32_avx2.h sums acc[g] are rows 8g..8g+7, so half h feeds groups g = h
 * and g = 2 + h. Per half, with q_u = P_u (u = 0, 1) or P_(u-2) >> 2 (u = 2, 3):
 *
 *   A_u = q_u & 0x03 (rows 8h + lane),  B_u = (q_u >> 4) & 0x03 (rows 16 + 8h + lane)
 *
 * GEMV, per sub-block s and group, a_u = bcast(x.qs[16s + 4u .. +3]), and B taken as
 * 16 B_u = q_u & 0x30 (one mask, no shift; |x.qs| <= 127):
 *   AVX-VNNI  D_A = sum_u dpbusd(A_u, a_u)       (int32, |D_A| <= 16 * 3 * 127 = 6096)
 *             D_B = (sum_u dpbusd(16 B_u, a_u)) >> 4   (exact: a multiple of 16)
 *   AVX2      D_A = sum_u maddubs(A_u, a_u)      (int16 pair sums: a pair is at most
 *             2 * 3 * 128 = 768, the four steps 3072: exact, far from saturation)
 *             D_B = (maddubs(16 B_0, a_0) + maddubs(16 B_1, a_1)) >> 4 + (steps 2, 3) >> 4
 *             (a two-step int16 sum of 16 B is at most 4 * 48 * 128 = 24576: exact)
 *   S += dpwssd(D, sc)   sc: the 4-bit scale in the low int16 of its lane and 0 in the
 *             high one (AVX-VNNI: D fits int16, its high word D's sign, times 0), or in
 *             both (AVX2: the lane's two int16 pair sums each times the scale); dpwssd:
 *             AVX-VNNI's vpdpwssd, AVX2's vpmaddwd + vpaddd (avx2_level.h)
 *   M (AVX-VNNI) += dpwssd(m, bcast(bsums[s], 0))   m: the 4-bit min in the low int16
 *   M (AVX2) += vpmaddwd((m[2t], m[2t + 1]), bcast(bsums[2t], bsums[2t + 1])) + vpaddd,
 *             once per pair of sub-blocks (the pair a vpblendw of the two min vectors)
 *   acc += (f32(S) * d - f32(M) * dmin) * x.d       per record
 *   |S| <= 16 * 15 * 6096 < 2^21, |M| <= 16 * 15 * 2048 < 2^19.
 *
 * GEMM (one record for a panel of rows of X, tile32_kgemm.h): decode unpacks each
 * record once for every panel into bytes w = q (0..3), 8 KiB of the loop's scratch
 * ([sub-block][rows 8g..8g+7][step]), with the scales in each level's form, the min
 * pairs, and the weight-only term corr below; then one row of X at a time runs
 * through the record with its four int32 sums in registers, the weights the signed
 * operand of every dot (read from L1 as memory operands), the activations the
 * unsigned one, x.qu = x.qs + 128:
 *
 *   sum qu * w = sum qs * w + 128 sum w,  so  S starts at corr = -128 *
 *   sum_s sc[s] * (sum of w over sub-block s)   (|.| <= 128 * 16 * 15 * 48)
 *   AVX-VNNI  D = sum of 4 steps dpbusd(qu, w): |D| <= 16 * 255 * 3 = 12240 (int16)
 *   AVX2      D = sum of 4 steps maddubs(qu, w): a pair <= 2 * 255 * 3 = 1530, four
 *             steps 6120: exact in int16
 *   S += vpmaddwd(D, sc) as in the GEMV; the mins per record and row of X:
 *   M = sum_t vpmaddwd((m[2t], m[2t + 1]), bcast(bsums[2t], bsums[2t + 1])).
 *
 * Rows past `out` in the last tile are zero in the packed bytes; their lanes are
 * computed and not stored.
 *
 * Measured (packwise bench --formats Q2_K --shapes 11008x4096 --threads 1, the shared
 * 2-vCPU AMD EPYC VM, single runs; before: the row-major kernel of the level, timed with
 * --kernel in the same session): AVX2 GEMV 0.902 -> 0.667 ms (38% -> 57% of the read),
 * n = 128 116 -> 61.5 ms (25% -> 50% of the level's int8 peak; i8g16 72.6 ms); AVX-VNNI
 * GEMV 0.908 -> 0.569 ms (40% -> 65%), n = 128 116 -> 51.6 ms (22% -> 49%; i8g16 85.7
 * ms). The GEMV does about 67 vector ops a sub-block at AVX-VNNI and 90 at AVX2 (loads
 * and broadcasts counted; before the 16 B mask, vpdpwssd and AVX2's min pairs: 80 and
 * 97): still more compute- than memory-bound at 256 bits. That change, measured A/B
 * (--batch 1, old build and new build interleaved, 4 to 6 rounds each, load average
 * 2.6-3.1): AVX-VNNI GEMV 0.550-0.555 -> 0.505-0.523 ms (58-60% -> 63-66% of the read),
 * AVX2 0.615-0.680 -> 0.583-0.613 ms (53-59% -> 58-61%); the record function alone, hot
 * in L1 (an ad hoc loop over 4 records, best of 15 x 200000 calls, 3 rounds): AVX-VNNI
 * 92-93 -> 83-84 ns a record, AVX2 103-103.5 -> 96-99 ns.
 */
#include "format/blocks.h"
#include "kernel/q2kx.h"
#include "kernel/x86/tile32_avx2.h"
#include "kernel/tile32_kgemm.h"

#include <stddef.h>
#include <string.h>

#define Q2KXA_INLINE static inline __attribute__((always_inline))

/* The scale bytes of sub-block s, rows 8g..8g+7, one a dword lane: the byte in both
 * int16 halves of its lane (AVX2) or in the low one (AVX-VNNI), the rest zero; the
 * scale is its low nibble, the min its high one. */
Q2KXA_INLINE __m256i q2kxa_bytes(const uint8_t *rec, int s, int g) {
    const uint8_t *p = rec + PW__Q2KX_SCALES + 32 * s + 8 * g;
    if (PW__VNNI) return _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)p));
    int64_t b8;
    memcpy(&b8, p, 8);
    const __m256i ctl = _mm256_setr_epi8(0, -128, 0, -128, 1, -128, 1, -128, 2, -128, 2, -128, 3,
                                         -128, 3, -128, 4, -128, 4, -128, 5, -128, 5, -128, 6, -128,
                                         6, -128, 7, -128, 7, -128);
    return _mm256_shuffle_epi8(_mm256_set1_epi64x(b8), ctl);
}

/* One step u of half h of a sub-block: A (rows 8h + lane) and B (rows 16 + 8h + lane)
 * from the half's loads p0, p1. */
Q2KXA_INLINE void q2kxa_step(__m256i p0, __m256i p1, int u, __m256i *a, __m256i *b) {
    const __m256i m03 = _mm256_set1_epi8(0x03);
    __m256i q = u % 2 ? p1 : p0;
    if (u >= 2) q = _mm256_srli_epi16(q, 2);
    *a = _mm256_and_si256(q, m03);
    *b = _mm256_and_si256(_mm256_srli_epi16(q, 4), m03);
}

/* GEMV record function (tile32_avx2.h). */
Q2KXA_INLINE void q2kxa_block(const uint8_t *rec, const uint8_t *xbp, int pf, __m256 acc[4]) {
    const pw__q8_256 *xb = (const pw__q8_256 *)xbp;
    const __m256i m0f = _mm256_set1_epi16(0x0F);
    __m256i S[4], M[4];
    for (int g = 0; g < 4; ++g) S[g] = M[g] = _mm256_setzero_si256();
#pragma GCC unroll 1
    for (int t = 0; t < 8; ++t) { /* sub-blocks 2t, 2t + 1 */
        int32_t b2;
        memcpy(&b2, xb->bsums + 2 * t, 4);
        const __m256i bs2 = _mm256_set1_epi32(b2); /* AVX2's min pairs */
        __m256i ml[4] = {_mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256(),
                         _mm256_setzero_si256()};
#pragma GCC unroll 2
        for (int s = 2 * t; s < 2 * t + 2; ++s) {
            const uint8_t *sub = rec + PW__Q2KX_SUB * s;
            if (pf) pw__tile32_prefetch_pf(sub, PW__Q2KX_SUB, pf);
            const int8_t *xs = xb->qs + 16 * s;
            const __m256i bs = _mm256_set1_epi32((uint16_t)xb->bsums[s]);
#pragma GCC unroll 2
            for (int h = 0; h < 2; ++h) {
                const __m256i p0 = _mm256_loadu_si256((const __m256i *)(sub + 32 * h));
                const __m256i p1 = _mm256_loadu_si256((const __m256i *)(sub + 64 + 32 * h));
                /* da: A's dots; db: 16 B's (AVX2: steps 0-1 in da, db, 2-3 in da2, db2) */
                __m256i da = _mm256_setzero_si256(), db = da, da2 = da, db2 = da;
#pragma GCC unroll 4
                for (int u = 0; u < 4; ++u) {
                    const __m256i x = pw__t32a_bcast4(xs + 4 * u);
                    __m256i q = u % 2 ? p1 : p0;
                    if (u >= 2) q = _mm256_srli_epi16(q, 2);
                    const __m256i a = _mm256_and_si256(q, _mm256_set1_epi8(0x03));
                    const __m256i b16 = _mm256_and_si256(q, _mm256_set1_epi8(0x30));
                    if (PW__VNNI) {
                        da = pw__dpbusd(da, a, x);
                        db = pw__dpbusd(db, b16, x);
                    } else if (u < 2) {
                        da = _mm256_add_epi16(da, _mm256_maddubs_epi16(a, x));
                        db = _mm256_add_epi16(db, _mm256_maddubs_epi16(b16, x));
                    } else {
                        da2 = _mm256_add_epi16(da2, _mm256_maddubs_epi16(a, x));
                        db2 = _mm256_add_epi16(db2, _mm256_maddubs_epi16(b16, x));
                    }
                }
                if (PW__VNNI) {
                    db = _mm256_srai_epi32(db, 4);
                } else {
                    da = _mm256_add_epi16(da, da2);
                    db = _mm256_add_epi16(_mm256_srai_epi16(db, 4), _mm256_srai_epi16(db2, 4));
                }
                const __m256i va = q2kxa_bytes(rec, s, h), vb = q2kxa_bytes(rec, s, 2 + h);
                S[h] = pw__dpwssd(S[h], da, _mm256_and_si256(va, m0f));
                S[2 + h] = pw__dpwssd(S[2 + h], db, _mm256_and_si256(vb, m0f));
                if (PW__VNNI) {
                    /* the min in the low int16 of each lane, bs's high int16 zero */
                    M[h] = pw__dpwssd(M[h], _mm256_srli_epi16(va, 4), bs);
                    M[2 + h] = pw__dpwssd(M[2 + h], _mm256_srli_epi16(vb, 4), bs);
                } else if (s % 2 == 0) {
                    ml[h] = _mm256_srli_epi16(va, 4); /* m[2t] in both int16 of each lane */
                    ml[2 + h] = _mm256_srli_epi16(vb, 4);
                } else { /* (m[2t], m[2t + 1]) . (bsums[2t], bsums[2t + 1]) */
                    M[h] = pw__dpwssd(M[h], _mm256_blend_epi16(ml[h], _mm256_srli_epi16(va, 4), 0xAA),
                                      bs2);
                    M[2 + h] = pw__dpwssd(
                        M[2 + h], _mm256_blend_epi16(ml[2 + h], _mm256_srli_epi16(vb, 4), 0xAA), bs2);
                }
            }
        }
    }
    if (pf)
        pw__tile32_prefetch_pf(rec + PW__Q2KX_SCALES, PW__Q2KX_RECORD - PW__Q2KX_SCALES, pf);
    const __m256 xd = _mm256_set1_ps(xb->d);
#pragma GCC unroll 4
    for (int g = 0; g < 4; ++g) {
        const __m256 t = _mm256_fmsub_ps(
            _mm256_cvtepi32_ps(S[g]), pw__t32a_f16x8(rec + PW__Q2KX_D + 16 * g),
            _mm256_mul_ps(_mm256_cvtepi32_ps(M[g]), pw__t32a_f16x8(rec + PW__Q2KX_DMIN + 16 * g)));
        acc[g] = _mm256_fmadd_ps(t, xd, acc[g]);
    }
}

static void q2kxa_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    pw__t32a_run(c, o0, o1, i0, i1, 256, PW__Q2KX_RECORD, sizeof(pw__q8_256), q2kxa_block, 1,
                 PW__HW_ZEN4);
}

/* ---- GEMM ---- */

#define Q2KXA_MR 6 /* most rows of X per panel (PW__T32K_MR_MAX) */

/* One record decoded once for every panel (the file's comment). */
typedef struct q2kxa_rec {
    int16_t sc[16][4][16];  /* [sub-block][rows 8g..8g+7][int16]: the scale as vpmaddwd takes it */
    int16_t mp[8][4][16];   /* [pair t][rows 8g..][int16]: m[2t], m[2t + 1] of each lane */
    int32_t corr[4][8];     /* -128 * sum_s sc[s] * sum(w over sub-block s), per row */
    float d[32], dmin[32];
    __m256i w[16 * 4 * 4];  /* the quants as bytes, [sub-block][rows 8g..8g+7][step] */
} q2kxa_rec;
_Static_assert(sizeof(q2kxa_rec) <= PW__T32K_SCRATCH, "q2kxa_rec fits the loop's scratch");

static void q2kxa_decode(const uint8_t *rec, void *out) {
    q2kxa_rec *rs = out;
    const __m256i one8 = _mm256_set1_epi8(1), m0f = _mm256_set1_epi16(0x0F);
    __m256i corr[4] = {_mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256(),
                       _mm256_setzero_si256()};
    for (int s = 0; s < 16; ++s) {
        const uint8_t *sub = rec + PW__Q2KX_SUB * s;
        __m256i *w = rs->w + 16 * s;
        for (int h = 0; h < 2; ++h) {
            const __m256i p0 = _mm256_loadu_si256((const __m256i *)(sub + 32 * h));
            const __m256i p1 = _mm256_loadu_si256((const __m256i *)(sub + 64 + 32 * h));
            __m256i sa = _mm256_setzero_si256(), sb = sa;
            for (int u = 0; u < 4; ++u) {
                __m256i a, b;
                q2kxa_step(p0, p1, u, &a, &b);
                _mm256_store_si256(w + 4 * h + u, a);
                _mm256_store_si256(w + 4 * (2 + h) + u, b);
                sa = _mm256_add_epi16(sa, _mm256_maddubs_epi16(a, one8));
                sb = _mm256_add_epi16(sb, _mm256_maddubs_epi16(b, one8));
            }
            for (int e = 0; e < 2; ++e) {
                const int g = 2 * e + h;
                const __m256i sc = _mm256_and_si256(q2kxa_bytes(rec, s, g), m0f);
                _mm256_store_si256((__m256i *)rs->sc[s][g], sc);
                /* AVX2's sc has the scale in both int16: sum of the lane's two int16
                 * pair sums times it; AVX-VNNI's in the low one: the int32 sum first */
                const __m256i ws = e ? sb : sa;
                corr[g] = _mm256_add_epi32(
                    corr[g], PW__VNNI ? _mm256_madd_epi16(_mm256_madd_epi16(ws, _mm256_set1_epi16(1)), sc)
                                      : _mm256_madd_epi16(ws, sc));
            }
        }
    }
    for (int t = 0; t < 8; ++t)
        for (int g = 0; g < 4; ++g) {
            const __m256i lo = _mm256_cvtepu8_epi32(
                _mm_loadl_epi64((const __m128i *)(rec + PW__Q2KX_SCALES + 64 * t + 8 * g)));
            const __m256i hi = _mm256_cvtepu8_epi32(
                _mm_loadl_epi64((const __m128i *)(rec + PW__Q2KX_SCALES + 64 * t + 32 + 8 * g)));
            _mm256_store_si256((__m256i *)rs->mp[t][g],
                               _mm256_or_si256(_mm256_srli_epi32(lo, 4),
                                               _mm256_slli_epi32(_mm256_srli_epi32(hi, 4), 16)));
        }
    for (int g = 0; g < 4; ++g) {
        _mm256_store_si256((__m256i *)rs->corr[g],
                           _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(corr[g], 7)));
        _mm256_store_ps(rs->d + 8 * g, pw__t32a_f16x8(rec + PW__Q2KX_D + 16 * g));
        _mm256_store_ps(rs->dmin + 8 * g, pw__t32a_f16x8(rec + PW__Q2KX_DMIN + 16 * g));
    }
}

#if defined(__clang__)
#define Q2KXA_OUTLINE __attribute__((noinline)) /* clang has no noipa */
#else
#define Q2KXA_OUTLINE __attribute__((noipa))
#endif

/* y[8g .. 8g + 7] += (f32(S) * d - f32(M) * dmin) * x.d for rows 8g..8g+7. */
Q2KXA_INLINE void q2kxa_out(float *y, const q2kxa_rec *rs, __m256 xd, int g, __m256i S, __m256i M) {
    const __m256 t = _mm256_fmsub_ps(_mm256_cvtepi32_ps(S), _mm256_load_ps(rs->d + 8 * g),
                                     _mm256_mul_ps(_mm256_cvtepi32_ps(M), _mm256_load_ps(rs->dmin + 8 * g)));
    _mm256_store_ps(y + 8 * g, _mm256_fmadd_ps(t, xd, _mm256_load_ps(y + 8 * g)));
}

/* One row of X over the decoded record: y[0..31] += its dots, the four int32 sums
 * (rows 8g..8g+7) in registers for the whole record; the weights, the signed operand,
 * straight from L1. */
static Q2KXA_OUTLINE void q2kxa_row(const q2kxa_rec *rs, const pw__q8_256 *xb, float *yb) {
    __m256i s0 = _mm256_load_si256((const __m256i *)rs->corr[0]),
            s1 = _mm256_load_si256((const __m256i *)rs->corr[1]),
            s2 = _mm256_load_si256((const __m256i *)rs->corr[2]),
            s3 = _mm256_load_si256((const __m256i *)rs->corr[3]);
    const __m256i *jn = rs->w, *sc = (const __m256i *)rs->sc;
    for (int s = 0; s < 16; ++s, jn += 16, sc += 4) {
        const int8_t *xu = (const int8_t *)xb->qu + 16 * s;
        const __m256i a0 = pw__t32a_bcast4(xu), a1 = pw__t32a_bcast4(xu + 4),
                      a2 = pw__t32a_bcast4(xu + 8), a3 = pw__t32a_bcast4(xu + 12);
#define Q2KXA_D(g_)                                                                            \
    (PW__VNNI ? pw__dpbusd(pw__dpbusd(pw__dpbusd(pw__dpbusd(_mm256_setzero_si256(), a0,         \
                                                            jn[4 * (g_)]),                      \
                                                 a1, jn[4 * (g_) + 1]),                         \
                                      a2, jn[4 * (g_) + 2]),                                    \
                           a3, jn[4 * (g_) + 3])                                                \
              : _mm256_add_epi16(_mm256_add_epi16(_mm256_maddubs_epi16(a0, jn[4 * (g_)]),       \
                                                  _mm256_maddubs_epi16(a1, jn[4 * (g_) + 1])),  \
                                 _mm256_add_epi16(_mm256_maddubs_epi16(a2, jn[4 * (g_) + 2]),   \
                                                  _mm256_maddubs_epi16(a3, jn[4 * (g_) + 3]))))
        s0 = _mm256_add_epi32(s0, _mm256_madd_epi16(Q2KXA_D(0), sc[0]));
        s1 = _mm256_add_epi32(s1, _mm256_madd_epi16(Q2KXA_D(1), sc[1]));
        s2 = _mm256_add_epi32(s2, _mm256_madd_epi16(Q2KXA_D(2), sc[2]));
        s3 = _mm256_add_epi32(s3, _mm256_madd_epi16(Q2KXA_D(3), sc[3]));
#undef Q2KXA_D
    }
    __m256i m0 = _mm256_setzero_si256(), m1 = m0, m2 = m0, m3 = m0;
    const __m256i *mp = (const __m256i *)rs->mp;
    for (int t = 0; t < 8; ++t, mp += 4) {
        int32_t b2;
        memcpy(&b2, xb->bsums + 2 * t, 4);
        const __m256i bs = _mm256_set1_epi32(b2);
        m0 = _mm256_add_epi32(m0, _mm256_madd_epi16(mp[0], bs));
        m1 = _mm256_add_epi32(m1, _mm256_madd_epi16(mp[1], bs));
        m2 = _mm256_add_epi32(m2, _mm256_madd_epi16(mp[2], bs));
        m3 = _mm256_add_epi32(m3, _mm256_madd_epi16(mp[3], bs));
    }
    const __m256 xd = _mm256_set1_ps(xb->d);
    q2kxa_out(yb, rs, xd, 0, s0, m0);
    q2kxa_out(yb, rs, xd, 1, s1, m1);
    q2kxa_out(yb, rs, xd, 2, s2, m2);
    q2kxa_out(yb, rs, xd, 3, s3, m3);
}

/* One record for mr (a constant) rows of X: yb[i][0..31] += their dots. */
Q2KXA_INLINE void q2kxa_panel(const uint8_t *rec, const q2kxa_rec *rs, const uint8_t *const *x,
                              float *yb, const uint8_t *pf, const int mr) {
    (void)rec;
    /* the next record into L1, which the next decode reads: its lines spread over
     * the panel's rows */
    const int lines = (PW__Q2KX_RECORD / 64 + mr - 1) / mr;
    for (int i = 0; i < mr; ++i) {
        if (pf)
            for (int l = 64 * lines * i; l < 64 * lines * (i + 1) && l < PW__Q2KX_RECORD; l += 64)
                _mm_prefetch((const char *)(pf + l), _MM_HINT_T0);
        q2kxa_row(rs, (const pw__q8_256 *)x[i], yb + 32 * i);
    }
}

/* A panel of any height 1..Q2KXA_MR, each height its own instance. */
static void q2kxa_panel_any(const uint8_t *rec, const void *rs, const uint8_t *const *x, float *yb,
                            const uint8_t *pf, int mr) {
    switch (mr) {
#define Q2KXA_CASE(m_)                                                                  \
    case m_:                                                                            \
        if (m_ <= Q2KXA_MR) q2kxa_panel(rec, (const q2kxa_rec *)rs, x, yb, pf, m_);    \
        break;
        Q2KXA_CASE(1)
        Q2KXA_CASE(2)
        Q2KXA_CASE(3)
        Q2KXA_CASE(4)
        Q2KXA_CASE(5)
        Q2KXA_CASE(6)
#undef Q2KXA_CASE
    default: break;
    }
}

static void q2kxa_gemm_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    pw__t32k_run(c, o0, o1, i0, i1, PW__Q2KX_RECORD, Q2KXA_MR, q2kxa_decode, q2kxa_panel_any);
}

const pw__kernel PW__AVX2_SYM(pw__k_q2_k_q2kx32k4) =
    PW__Q2KX_KERNEL(PW__AVX2_ISA, PW__AVX2_FEATURES(PW_CPU_AVX2 | PW_CPU_FMA | PW_CPU_F16C),
                    q2kxa_run, PW__AVX2_PRIO + 2);

const pw__kernel PW__AVX2_SYM(pw__k_q2_k_q2kx32k4_gemm) = PW__Q2KX_GEMM_KERNEL(
    PW__AVX2_ISA, PW__AVX2_FEATURES(PW_CPU_AVX2 | PW_CPU_FMA | PW_CPU_F16C), q2kxa_gemm_run,
    PW__AVX2_PRIO + PW__PRIO_GEMM - 1, Q2KXA_MR);

/* GEMM over input-block-major Q2_K bytes as they are: the loop above over records made
 * one at a time from a column's blocks (pw__q2kx_record_from_blocks, portable C). */
PW__TILE32_IBM_FILL(q2kxa_fill_ibm, pw__block_q2_K, PW__Q2KX_RECORD, pw__q2kx_record_from_blocks)

static void q2kxa_ibm_gemm_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    pw__t32k_run_fill(c, o0, o1, i0, i1, PW__Q2KX_RECORD, Q2KXA_MR, q2kxa_decode, q2kxa_panel_any,
                      q2kxa_fill_ibm);
}

const pw__kernel PW__AVX2_SYM(pw__k_q2_k_ibm_gemm) = PW__TILE32_IBM_GEMM_KERNEL(
    "q2_k", PW_FORMAT_Q2_K, Q8_256, PW__AVX2_ISA, PW__AVX2_FEATURES(PW_CPU_AVX2 | PW_CPU_FMA | PW_CPU_F16C), q2kxa_ibm_gemm_run,
    PW__AVX2_PRIO + PW__PRIO_GEMM - 1, Q2KXA_MR);
