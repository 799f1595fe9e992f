#if !defined(__AVX2__) || !defined(__FMA__) || !defined(__F16C__)
#error "q4kx_avx2.c needs AVX2, FMA and F16C (the build sets them for *_avx2.c and *_avxvnni.c)"
#endif
/*
 * AVX2 and AVX-VNNI GEMV and GEMM over the q4kx32k4 family (layout in
 * kernel/q4kx.h): Q4_K in the bytes the AVX-512 kernels read, so a weight
 * packed (or a cache file written) on an AVX-512 machine serves these levels
 * as it is. The GEMV loop is tile32_avx2.h's, the GEMM loop
 * tile32_kgemm.h's; this file is the record functions, built twice
 * (avx2_level.h: as itself, and through q4kx_avxvnni.c). Activations are
 * pw__q8_256 rows (|qs| <= 127).
 *
 * A 64-byte step s of a record is two ymm: half 0, bytes [64s, 64s + 32),
 * holds rows 0..7 (low nibbles) and 16..23 (high), half 1 rows 8..15 and
 * 24..31, four k values per int32 lane. Group g = rows 8g .. 8g+7 of the tile
 * is the low nibbles of half g (g = 0, 1) or the high nibbles of half g - 2.
 *
 * Scales (q4kxa_decode): the 192 packed bytes of rows 16h .. 16h + 15 (byte i
 * of the 16 rows in 16 consecutive bytes) are six plain 32-byte loads, load j
 * holding byte 2j of each row in its low 128-bit lane and byte 2j + 1 in its
 * high one, so that each of the ~22 byte operations per half gives the 6-bit
 * scales or mins of two sub-blocks. A scale of sub-block t for group g is then
 * one vpshufb of a broadcast load of its 16 scale bytes: int32 lanes for
 * vpmulld (AVX-VNNI GEMV), word pairs [sc, sc] for vpmaddwd (AVX2). Mins: per
 * pair of sub-blocks the words [m_2k, m_2k+1] of each row (a vpermq and a
 * vpshufb a group), for one vpmaddwd (vpdpwssd at AVX-VNNI) against the
 * activations' sums [b_2k, b_2k+1] (b_t = the sum of sub-block t's 32
 * activations, from bsums): four a group give M = sum_t m_t b_t. The Q4_K GEMV
 * sums them as they are made (no words in memory); the GEMM and Q5_K store them.
 *
 * Per sub-block t (8 steps) and group, with a_s = bcast(x.qs[4s .. 4s+3]):
 *
 *   AVX-VNNI  lo = sum_s dpbusd(v & 0x0F, a_s), all = sum_s dpbusd(v, a_s),
 *             hi = all - lo = 16 x the high-nibble dot (q4kx_avx512.c's
 *             derivation): one mask and two vpdpbusd per ymm. GEMV: S += dot *
 *             sc_t (vpmulld), the high groups' S >> 4 at the end (exact).
 *   AVX2      vpmaddubsw saturates its int16 pair sums, so the whole byte (up
 *             to 255) cannot be a factor: both nibbles are masked (3 ops per
 *             ymm), and the int16 pair sums of the sub-block's 8 steps are
 *             added in int16: |.| <= 8 * 2 * 15 * 127 = 30480 (exact; even
 *             with -128 activations 30720 < 32767). One vpmaddwd by the word
 *             pairs [sc, sc] then both widens and scales: S += w * sc_t. (An
 *             empty asm per step keeps GCC from reassociating these int16 sums
 *             into trees that spill: 26.0 -> 20.6 us in the warm GEMV below.)
 *
 *   end of record, per group:  acc += (f32(S) * d - f32(M) * dmin) * x.d
 *
 * Integer range: AVX-VNNI |lo| <= 32 * 15 * 127 = 60960, |hi| <= 32 * 240 *
 * 127 = 975360, |S| <= 8 * 63 * 975360 < 2^29; AVX2 |S| <= 8 * 63 * 60960 <
 * 2^25; |M| <= 8 * 63 * 4064 < 2^21. All exact in int32.
 *
 * GEMM (tile32_kgemm.h): the record's scales decoded and widened once
 * for every panel; per half of a step, its nibbles unpacked once for the
 * panel's mr rows of X, 2 x mr dot chains one sub-block long, then S[i][n] +=
 * chain * sc. AVX2: mr = 4 (8 chains, the unpacked bytes, mask and broadcast:
 * 13 ymm; 5 or 6 rows spilled and ran at half the speed), both nibbles
 * masked, S in int32 as in the GEMV. AVX-VNNI: mr = 5, the high chains on the
 * whole byte (all - lo: no shift and mask per step), and S in f32
 * (vcvtdq2ps + vfmadd by the f32 scale, over 16 for the high groups:
 * each product sc * dot is an integer below 2^22, exact; the sum of 8 rounds
 * at most by 2^-24 relative), which measured 4% faster than vpmulld +
 * vpaddd, and the whole-byte chains with 5 rows 2% faster than 4 rows masked.
 *
 * Measured (2-core shared VM, AMD EPYC (Zen 5), load average 7-10 from
 * other work, so every figure is a range over runs):
 *   warm GEMV, [192, 8192] in L2, 1 thread, best of 3000 calls, about 3 us
 *   of it the activations' quantization and call: avx2 20.2-23.3 us,
 *   avxvnni 16.4-17.8 us, avx512vnni kernel 11.2-13.6 us.
 *   packwise bench --formats Q4_K --shapes 11008x4096 --batch 1,128
 *   --threads 1, 3 runs: GEMV avx2 69-82% of the read, avxvnni 65-93%
 *   (avx512vnni in the same runs 71-81%); GEMM avx2 55-60% of the int8 peak,
 *   avxvnni 53-62% (avx512vnni 51-64% of its own). The row-major kernels
 *   these replace measured GEMV 49% (avx2) / 53% (avxvnni), GEMM 16%.
 *
 * Where the cold GEMV's time goes (AMD EPYC Zen 5 VM, 2 vCPUs, shared). The record
 * function in L2 (a scratch harness, this file included, q4kxa_steps over 48 records,
 * best of 2000 passes, rdtsc at 2.096 GHz) took avxvnni 161-163 ticks a record (4608
 * bytes: 60 GB/s), avx2 217-220 (44.6 GB/s), against 40-45 GB/s that one core reads
 * from memory: avxvnni the 64 steps alone 98-112 ticks (256 vpdpbusd, near their
 * bound), decode +30, the scale products, mins and finish +34; avx2 the steps 164
 * (14 ALU operations and 3 loads a step over four ALU pipes: its bound, which the layout
 * fixes: vpmaddubsw saturates on the whole byte, so both nibbles need their own mask), decode
 * +36, the rest +20. A scratch program timing pw_matmul_wt on a flushed [11008, 4096]
 * weight (median of 31 calls) beside two reads of a buffer of the same bytes in the
 * same process (the bench's 1_stream_l1_paced and records_l1 ways, each flushed
 * first), in turn: the ceiling 42-46 GB/s, the record-shaped read 40-43, the GEMV
 * avx2 36-38 and avxvnni 34-38. Cutting the record function short (the steps, then
 * one sum of the dots; wrong results): avx2 31 -> 36 GB/s in one window, the
 * record-shaped read's speed (its compute, not its reads, was the gap); avxvnni level
 * (34.5-36.3 against 35.1-36.3) so long as the record's last 512 bytes were still
 * loaded, 28 GB/s when they were only prefetched. The stream itself was tuned before
 * (tile32_prefetch.h); in that program the GEMV, same window, 4 rounds, GB/s: avx2 8
 * KiB ahead into L1 (shipped) 36.3-37.8, 12 KiB 36.6-37.6, 16 KiB 36.9-37.4, 24 KiB
 * 31.8-36.0, 4 KiB 29.0-30.1, 6 KiB 32.7-34.1, into L2 29.0-36.8, 16 KiB into L2
 * 35.6-39.5, the same and into L1 3 KiB on 34.1-36.0, no software prefetch 19.0-19.6,
 * two streams 32.7-33.8, each line prefetched at its own step (not nine at a
 * sub-block) 27.5-29.3; avxvnni the same order, none above the shipped one.
 *
 * So the record's tail was made cheaper: the scale bytes as six plain loads a half (12
 * broadcast loads and 12 blends before), the mins' words by vpermq + vpshufb and summed
 * in the decode (stored, reloaded and widened by vpmovzx before), d and dmin converted
 * where they are used. Warm ([256, 4096], best of 2000-3000 calls, the call and the
 * activations' quantization included, three rounds in turn): avx2 13.13-13.84 ->
 * 12.45-13.15 us, avxvnni 11.05-12.09 -> 10.34-10.80. PACKWISE_ISA=avxvnni|avx2
 * packwise bench --formats Q4_K,Q5_K,Q6_K --shapes 11008x4096 --batch 1 --threads 1,
 * the two builds in turn, 5 rounds, fraction of the read: Q4_K avxvnni 80.5-85.9%
 * (median 83.1) -> 86.8-93.7 (89.4), avx2 78.8-84.4 (80.0) -> 81.0-85.3 (83.1), and
 * in 7 earlier rounds of the same avxvnni 80.2-85.5 -> 86.1-92.6, avx2 78.5-88.3 ->
 * 81.8-88.0. Q5_K (its own min path kept) avxvnni 58.1-60.9 -> 55.4-59.2, avx2
 * 58.8-67.0 -> 62.2-70.1: within the noise. The avx2 Q4_K GEMV stays near 0.80-0.85:
 * its steps alone are 75% of the record's time, and that time is 0.9 of the read's.
 *
 * Rows past `out` in the last tile are zero in the packed bytes; their lanes
 * are computed and not stored.
 */
#include "format/blocks.h"
#include "kernel/q4kx.h"
#include "kernel/q5kx.h"
#include "kernel/x86/tile32_avx2.h"
#include "kernel/tile32_kgemm.h"

#include <stddef.h>
#include <string.h>

#define Q4KXA_INLINE static inline __attribute__((always_inline))

#define Q4KXA_MR (PW__VNNI ? 5 : 4) /* most rows of X per GEMM panel */

/* Record bytes each sub-block prefetches: 8 of them cover the record (Q5_K's: q5). */
#define Q4KXA_PF_CHUNK(q5) ((q5) ? PW__Q5KX_RECORD / 8 : PW__Q4KX_RECORD / 8)

/* One record's scales in the form the dots use; g = group (rows 8g .. 8g+7). The GEMV
 * record function fills scb (Q5_K's also mn, d and dmin: q4kxa_decode_to) and widens
 * each scale where it is used; the GEMM decode fills all but sc and scf, then widens
 * every scale once for all panels, into sc (AVX2) or scf (AVX-VNNI). */
typedef struct q4kxa_rec {
    int32_t sc[8][4][8];  /* AVX2 GEMM: sub-block t's words [sc, sc] */
    int32_t mn[4][4][8];  /* words [m_2k, m_2k+1] */
    float d[4][8], dmin[4][8];
    uint8_t scb[2][8][16]; /* sub-block t's 6-bit scale of row 16 h + i: [h][t][i] */
    float scf[8][4][8];   /* AVX-VNNI GEMM: sc as f32, groups 2 and 3 over 16 */
} q4kxa_rec;
_Static_assert(sizeof(q4kxa_rec) <= PW__T32K_SCRATCH, "q4kxa_rec fits the loop's scratch");

/* Group g's scales of sub-block t in this level's form, from the scale bytes: the 16
 * bytes of rows 16 (g / 2) .. +15 in both 128-bit lanes (a broadcast load), then one
 * vpshufb puts row 8g + j's byte in dword j: [sc, 0, 0, 0] (int32, AVX-VNNI) or
 * [sc, 0, sc, 0] (words [sc, sc], AVX2). One shuffle, where widening instructions
 * (vpmovzx, unpacks, lane extracts) took two to three. */
Q4KXA_INLINE __m256i q4kxa_scale(const q4kxa_rec *rs, int t, int g) {
    const __m256i src =
        _mm256_broadcastsi128_si256(_mm_load_si128((const __m128i *)rs->scb[g / 2][t]));
    const char z = (char)0x80, o = (char)(8 * (g % 2)); /* z: vpshufb writes 0 */
    const __m256i ctl =
        PW__VNNI ? _mm256_setr_epi8(o, z, z, z, o + 1, z, z, z, o + 2, z, z, z, o + 3, z, z, z,
                                    o + 4, z, z, z, o + 5, z, z, z, o + 6, z, z, z, o + 7, z, z, z)
                 : _mm256_setr_epi8(o, z, o, z, o + 1, z, o + 1, z, o + 2, z, o + 2, z, o + 3, z,
                                    o + 3, z, o + 4, z, o + 4, z, o + 5, z, o + 5, z, o + 6, z,
                                    o + 6, z, o + 7, z, o + 7, z);
    return _mm256_shuffle_epi8(src, ctl);
}

/* Decode record rec's scales (as bytes), mins, d and dmin into rs; or (the GEMV: pairs
 * not NULL, q4kxa_pairs') its scales into rs and, in place of the mins, mdot[g] = sum_t
 * m_t b_t of group g's rows (q4kxa_min_dot's sums, without the words in memory). */
Q4KXA_INLINE void q4kxa_decode_to(const uint8_t *rec, q4kxa_rec *rs, const int32_t *pairs,
                                  __m256i mdot[4]) {
    const __m256i m63 = _mm256_set1_epi8(63), m0f = _mm256_set1_epi8(0x0F),
                  m30 = _mm256_set1_epi8(0x30);
    /* Rows 16 h .. 16 h + 15 at a time, in their 192 bytes as they lie: load j holds
     * byte 2j of each row in its low 128-bit lane, byte 2j + 1 in its high one, so that
     * one operation serves two sub-blocks (scales 2j and 2j + 1, ...) and no load is
     * broadcast or blended. */
#pragma GCC unroll 2
    for (int h = 0; h < 2; ++h) {
        __m256i b[6];
        for (int j = 0; j < 6; ++j)
            b[j] = _mm256_loadu_si256((const __m256i *)(rec + PW__Q4KX_SCALES + 192 * h + 32 * j));
        __m256i mn[4]; /* mins [2k | 2k + 1] of the 16 rows */
        for (int j = 0; j < 2; ++j) {
            /* sub-blocks 0..3: the low 6 bits of bytes t (scale) and t + 4 (min); 4..7:
             * the low (scale) or high (min) nibble of byte t + 8 and, as bits 4-5, the
             * top two bits of byte t (scale) or t + 4 (min). The 16-bit shifts carry bits
             * across bytes that the masks then drop. */
            _mm256_store_si256((__m256i *)rs->scb[h][2 * j], _mm256_and_si256(b[j], m63));
            mn[j] = _mm256_and_si256(b[2 + j], m63);
            _mm256_store_si256((__m256i *)rs->scb[h][4 + 2 * j],
                               _mm256_or_si256(_mm256_and_si256(b[4 + j], m0f),
                                               _mm256_and_si256(_mm256_srli_epi16(b[j], 2), m30)));
            mn[2 + j] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(b[4 + j], 4), m0f),
                                        _mm256_and_si256(_mm256_srli_epi16(b[2 + j], 2), m30));
        }
        /* words [m_2k, m_2k+1] of rows 16 h + 8 n + i (dword i): rows 8 n .. 8 n + 7 of
         * both mins to both lanes (vpermq), then each lane's four rows as words */
        const char z = (char)0x80;
        const __m256i ctl = _mm256_setr_epi8(0, z, 8, z, 1, z, 9, z, 2, z, 10, z, 3, z, 11, z,
                                             4, z, 12, z, 5, z, 13, z, 6, z, 14, z, 7, z, 15, z);
        for (int k = 0; k < 4; ++k) {
            const __m256i w0 = _mm256_shuffle_epi8(_mm256_permute4x64_epi64(mn[k], 0x88), ctl);
            const __m256i w1 = _mm256_shuffle_epi8(_mm256_permute4x64_epi64(mn[k], 0xDD), ctl);
            if (pairs) {
                const __m256i bp = _mm256_set1_epi32(pairs[k]);
                mdot[2 * h] = k ? pw__dpwssd(mdot[2 * h], w0, bp) : _mm256_madd_epi16(w0, bp);
                mdot[2 * h + 1] =
                    k ? pw__dpwssd(mdot[2 * h + 1], w1, bp) : _mm256_madd_epi16(w1, bp);
            } else {
                _mm256_store_si256((__m256i *)rs->mn[k][2 * h], w0);
                _mm256_store_si256((__m256i *)rs->mn[k][2 * h + 1], w1);
            }
        }
    }
    if (!pairs)
        for (int g = 0; g < 4; ++g) {
            _mm256_store_ps(rs->d[g], pw__t32a_f16x8(rec + PW__Q4KX_D + 16 * g));
            _mm256_store_ps(rs->dmin[g], pw__t32a_f16x8(rec + PW__Q4KX_DMIN + 16 * g));
        }
}
Q4KXA_INLINE void q4kxa_decode(const uint8_t *rec, q4kxa_rec *rs) {
    q4kxa_decode_to(rec, rs, NULL, NULL);
}

/* pairs[k] = the words [b_2k, b_2k+1] of activation block xb (b_t = the sum of its
 * sub-block t: two bsums, |.| <= 32 * 127, a word). */
Q4KXA_INLINE void q4kxa_pairs(const pw__q8_256 *xb, int32_t pairs[4]) {
    const __m256i bs = _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)xb->bsums),
                                         _mm256_set1_epi16(1));
    _mm_storeu_si128((__m128i *)pairs, _mm_packs_epi32(_mm256_castsi256_si128(bs),
                                                       _mm256_extracti128_si256(bs, 1)));
}

/* sum_t m_t b_t of group g's rows. */
Q4KXA_INLINE __m256i q4kxa_min_dot(const q4kxa_rec *rs, int g, const int32_t pairs[4]) {
    __m256i m = _mm256_madd_epi16(_mm256_load_si256((const __m256i *)rs->mn[0][g]),
                                  _mm256_set1_epi32(pairs[0]));
    for (int k = 1; k < 4; ++k)
        m = _mm256_add_epi32(m, _mm256_madd_epi16(_mm256_load_si256((const __m256i *)rs->mn[k][g]),
                                                  _mm256_set1_epi32(pairs[k])));
    return m;
}

/* S += dot * scale: vpmulld on int32 dots (AVX-VNNI), vpmaddwd of the int16 pair sums
 * by [sc, sc] (AVX2). */
Q4KXA_INLINE __m256i q4kxa_scale_add(__m256i s, __m256i dot, __m256i v) {
    return _mm256_add_epi32(s, PW__VNNI ? _mm256_mullo_epi32(dot, v) : _mm256_madd_epi16(dot, v));
}

/* acc += (f32(s) * d - f32(m) * dmin) * xd for group g. */
Q4KXA_INLINE __m256 q4kxa_finish(__m256 acc, __m256 s, __m256i m, const q4kxa_rec *rs, int g,
                                 __m256 xd) {
    const __m256 f = _mm256_fnmadd_ps(_mm256_cvtepi32_ps(m), _mm256_load_ps(rs->dmin[g]),
                                      _mm256_mul_ps(s, _mm256_load_ps(rs->d[g])));
    return _mm256_fmadd_ps(f, xd, acc);
}

/* ---- GEMV ---- */

/* Record function of tile32_avx2.h: acc[g] += group g's dots with activation block xbp,
 * each sub-block prefetching an eighth of the record further on. The record is read in
 * address order, as the AVX-512 kernel reads it (q4kx_avx512.c has why): the 64 steps
 * (each sub-block's four group dots kept, 1 KiB in L1), then d, dmin and the scales that
 * weigh them. */
Q4KXA_INLINE void q4kxa_steps(const uint8_t *rec, const uint8_t *xbp, int pf, __m256 acc[4],
                              const int x16, const int q5) {
    const pw__q8_256 *xb = (const pw__q8_256 *)xbp;
    const __m256i m = _mm256_set1_epi8(0x0F);
    __m256i dots[8][4];
    __m256i dots2[8][4]; /* AVX2 Q5_K: the sub-block's last four steps (int16 range) */
#pragma GCC unroll 8
    for (int t = 0; t < 8; ++t) {
        if (pf) {
            pw__tile32_prefetch_pf(rec + Q4KXA_PF_CHUNK(q5) * t, Q4KXA_PF_CHUNK(q5), pf);
        }
        __m256i dot[4] = {_mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256(),
                          _mm256_setzero_si256()};
        /* Q5_K: the sub-block's bit planes, in the halves of the steps: L_t (low nibbles,
         * groups 0 and 1), H_t (high, groups 2 and 3) */
        __m256i bp[4] = {m, m, m, m};
        if (q5)
            for (int g = 0; g < 4; ++g)
                bp[g] = _mm256_loadu_si256((const __m256i *)(rec + PW__Q5KX_BITS + 128 * t + 32 * g));
        /* x16: the sub-block's 32 activation bytes in two loads, each step's dword a
         * vpshufd of them (q4kxa_run says where) */
        __m256i xa[2] = {_mm256_setzero_si256(), _mm256_setzero_si256()};
        if (x16) {
            xa[0] = pw__t32a_bcast16(xb->qs + 32 * t);
            xa[1] = pw__t32a_bcast16(xb->qs + 32 * t + 16);
        }
#pragma GCC unroll 8
        for (int u = 0; u < 8; ++u) {
            const int st = 8 * t + u;
            const __m256i v0 = _mm256_loadu_si256((const __m256i *)(rec + 64 * st));
            const __m256i v1 = _mm256_loadu_si256((const __m256i *)(rec + 64 * st + 32));
            const __m256i a = x16 ? pw__t32a_dword(xa[u / 4], u % 4) : pw__t32a_bcast4(xb->qs + 4 * st);
            if (q5) { /* both nibbles masked, bit 4 or-ed in; groups 2, 3 not x 16 */
                const __m256i q[4] = {
                    _mm256_or_si256(_mm256_and_si256(v0, m), pw__t32a_bit16(bp[0], u)),
                    _mm256_or_si256(_mm256_and_si256(v1, m), pw__t32a_bit16(bp[1], u)),
                    _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(v0, 4), m),
                                    pw__t32a_bit16(bp[2], u)),
                    _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(v1, 4), m),
                                    pw__t32a_bit16(bp[3], u))};
                for (int g = 0; g < 4; ++g)
                    dot[g] = PW__VNNI ? pw__dpbusd(dot[g], q[g], a)
                                      : _mm256_add_epi16(dot[g], _mm256_maddubs_epi16(q[g], a));
                if (!PW__VNNI) {
                    __asm__("" : "+x"(dot[0]), "+x"(dot[1]), "+x"(dot[2]), "+x"(dot[3]));
                    if (u == 3) /* four steps of int16 sums: |.| <= 4 * 2 * 31 * 128 */
                        for (int g = 0; g < 4; ++g) {
                            dots2[t][g] = dot[g];
                            dot[g] = _mm256_setzero_si256();
                        }
                }
            } else if (PW__VNNI) { /* dot[2], dot[3]: the whole byte, made hi below */
                dot[0] = pw__dpbusd(dot[0], _mm256_and_si256(v0, m), a);
                dot[1] = pw__dpbusd(dot[1], _mm256_and_si256(v1, m), a);
                dot[2] = pw__dpbusd(dot[2], v0, a);
                dot[3] = pw__dpbusd(dot[3], v1, a);
            } else { /* int16 sums, exact (the file's comment) */
                dot[0] = _mm256_add_epi16(dot[0], _mm256_maddubs_epi16(_mm256_and_si256(v0, m), a));
                dot[1] = _mm256_add_epi16(dot[1], _mm256_maddubs_epi16(_mm256_and_si256(v1, m), a));
                dot[2] = _mm256_add_epi16(
                    dot[2], _mm256_maddubs_epi16(_mm256_and_si256(_mm256_srli_epi16(v0, 4), m), a));
                dot[3] = _mm256_add_epi16(
                    dot[3], _mm256_maddubs_epi16(_mm256_and_si256(_mm256_srli_epi16(v1, 4), m), a));
                /* one chain per group, step by step: GCC otherwise reassociates the
                 * integer sums into trees and spills the products */
                __asm__("" : "+x"(dot[0]), "+x"(dot[1]), "+x"(dot[2]), "+x"(dot[3]));
            }
        }
        if (PW__VNNI && !q5) {
            dot[2] = _mm256_sub_epi32(dot[2], dot[0]);
            dot[3] = _mm256_sub_epi32(dot[3], dot[1]);
        }
        for (int g = 0; g < 4; ++g) dots[t][g] = dot[g];
    }
    q4kxa_rec rs __attribute__((aligned(32)));
    int32_t pairs[4];
    q4kxa_pairs(xb, pairs);
    /* Q5_K's mins through memory, as before: summed in the decode (its bit planes live)
     * it measured lower in one set of three bench rounds, 57.5-61.0% of the read against
     * 59.0-68.8 (both levels; not resolved in the machine's noise) */
    __m256i mdot[4];
    q4kxa_decode_to(rec, &rs, q5 ? NULL : pairs, mdot);
    if (q5)
        for (int g = 0; g < 4; ++g) mdot[g] = q4kxa_min_dot(&rs, g, pairs);
    __m256i s[4] = {_mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256(),
                    _mm256_setzero_si256()};
#pragma GCC unroll 8
    for (int t = 0; t < 8; ++t)
#pragma GCC unroll 4
        for (int g = 0; g < 4; ++g) {
            const __m256i sc = q4kxa_scale(&rs, t, g);
            s[g] = q4kxa_scale_add(s[g], dots[t][g], sc);
            if (q5 && !PW__VNNI) s[g] = q4kxa_scale_add(s[g], dots2[t][g], sc);
        }
    if (PW__VNNI && !q5) {
        s[2] = _mm256_srai_epi32(s[2], 4);
        s[3] = _mm256_srai_epi32(s[3], 4);
    }
    const __m256 xd = _mm256_set1_ps(xb->d);
#pragma GCC unroll 4
    for (int g = 0; g < 4; ++g) {
        const __m256 f = _mm256_fnmadd_ps(
            _mm256_cvtepi32_ps(mdot[g]), pw__t32a_f16x8(rec + PW__Q4KX_DMIN + 16 * g),
            _mm256_mul_ps(_mm256_cvtepi32_ps(s[g]), pw__t32a_f16x8(rec + PW__Q4KX_D + 16 * g)));
        acc[g] = _mm256_fmadd_ps(f, xd, acc[g]);
    }
}

/* The record functions of tile32_avx2.h: activations broadcast a step from memory, or
 * (x16) four steps' from one load of 16 bytes (q4kxa_run). */
Q4KXA_INLINE void q4kxa_block(const uint8_t *rec, const uint8_t *xbp, int pf, __m256 acc[4]) {
    q4kxa_steps(rec, xbp, pf, acc, 0, 0);
}
Q4KXA_INLINE void q4kxa_block_x16(const uint8_t *rec, const uint8_t *xbp, int pf, __m256 acc[4]) {
    q4kxa_steps(rec, xbp, pf, acc, 1, 0);
}
Q4KXA_INLINE void q5kxa_block(const uint8_t *rec, const uint8_t *xbp, int pf, __m256 acc[4]) {
    q4kxa_steps(rec, xbp, pf, acc, 0, 1);
}
Q4KXA_INLINE void q5kxa_block_x16(const uint8_t *rec, const uint8_t *xbp, int pf, __m256 acc[4]) {
    q4kxa_steps(rec, xbp, pf, acc, 1, 1);
}

/* ---- GEMM ---- */

/* The GEMM loop's decode: q4kxa_decode, then every scale widened once for all panels
 * (AVX-VNNI: the high groups' over 16 where their dots are 16 x theirs, not for Q5_K). */
Q4KXA_INLINE void k4xa_gemm_decode(const uint8_t *rec, void *out, const int q5) {
    q4kxa_rec *rs = out;
    q4kxa_decode(rec, rs);
    for (int t = 0; t < 8; ++t)
        for (int g = 0; g < 4; ++g) {
            const __m256i sc = q4kxa_scale(rs, t, g);
            if (PW__VNNI)
                _mm256_store_ps(rs->scf[t][g],
                                _mm256_mul_ps(_mm256_cvtepi32_ps(sc),
                                              _mm256_set1_ps(g < 2 || q5 ? 1.0f : 0.0625f)));
            else
                _mm256_store_si256((__m256i *)rs->sc[t][g], sc);
        }
}
static void q4kxa_gemm_decode(const uint8_t *rec, void *out) { k4xa_gemm_decode(rec, out, 0); }
static void q5kxa_gemm_decode(const uint8_t *rec, void *out) { k4xa_gemm_decode(rec, out, 1); }

/* One record for mr (a constant) rows of X: yb[i][0..31] += their dots. Half h of
 * every step (groups h and 2 + h) at a time, so that the 2 x mr chains of one
 * sub-block stay in registers. */
Q4KXA_INLINE void q4kxa_panel(const uint8_t *rec, const q4kxa_rec *rs, const uint8_t *const *x,
                              float *yb, const uint8_t *pf, const int mr, const int q5) {
    int32_t pairs[Q4KXA_MR][4] __attribute__((aligned(16)));
    for (int i = 0; i < mr; ++i) q4kxa_pairs((const pw__q8_256 *)x[i], pairs[i]);
    const __m256i m = _mm256_set1_epi8(0x0F);
#pragma GCC unroll 1
    for (int h = 0; h < 2; ++h) {
        __m256i sacc[Q4KXA_MR][2]; /* AVX2: int32 S */
        __m256 fs[Q4KXA_MR][2];    /* AVX-VNNI: f32 S */
#pragma GCC unroll 6
        for (int i = 0; i < mr; ++i) {
            sacc[i][0] = sacc[i][1] = _mm256_setzero_si256();
            fs[i][0] = fs[i][1] = _mm256_setzero_ps();
        }
#pragma GCC unroll 1
        for (int t = 0; t < 8; ++t) {
            if (pf && h == 0) pw__t32a_prefetch_l1(pf + Q4KXA_PF_CHUNK(q5) * t, Q4KXA_PF_CHUNK(q5));
            /* Q5_K: this half's bit planes of L_t and H_t */
            const __m256i bl =
                q5 ? _mm256_loadu_si256((const __m256i *)(rec + PW__Q5KX_BITS + 128 * t + 32 * h)) : m;
            const __m256i bh =
                q5 ? _mm256_loadu_si256((const __m256i *)(rec + PW__Q5KX_BITS + 128 * t + 64 + 32 * h))
                   : m;
            __m256i dt[Q4KXA_MR][2];
#pragma GCC unroll 6
            for (int i = 0; i < mr; ++i) dt[i][0] = dt[i][1] = _mm256_setzero_si256();
#pragma GCC unroll 8
            for (int u = 0; u < 8; ++u) {
                const int st = 8 * t + u;
                const __m256i v = _mm256_loadu_si256((const __m256i *)(rec + 64 * st + 32 * h));
                __m256i lo = _mm256_and_si256(v, m);
                /* AVX-VNNI: the whole byte, made 16 x the high nibbles' dot below (Q4_K) */
                __m256i hi = PW__VNNI && !q5 ? v : _mm256_and_si256(_mm256_srli_epi16(v, 4), m);
                if (q5) {
                    lo = _mm256_or_si256(lo, pw__t32a_bit16(bl, u));
                    hi = _mm256_or_si256(hi, pw__t32a_bit16(bh, u));
                }
#pragma GCC unroll 6
                for (int i = 0; i < mr; ++i) {
                    const __m256i a = pw__t32a_bcast4(
                        (const int8_t *)(x[i] + offsetof(pw__q8_256, qs)) + 4 * st);
                    if (PW__VNNI) {
                        dt[i][0] = pw__dpbusd(dt[i][0], lo, a);
                        dt[i][1] = pw__dpbusd(dt[i][1], hi, a);
                    } else { /* int16 sums, exact (the file's comment) */
                        dt[i][0] = _mm256_add_epi16(dt[i][0], _mm256_maddubs_epi16(lo, a));
                        dt[i][1] = _mm256_add_epi16(dt[i][1], _mm256_maddubs_epi16(hi, a));
                        __asm__("" : "+x"(dt[i][0]), "+x"(dt[i][1])); /* as in q4kxa_block */
                    }
                }
                if (q5 && !PW__VNNI && u == 3) { /* int16 sums of four steps (q4kxa_steps) */
                    const __m256i sc_lo = _mm256_load_si256((const __m256i *)rs->sc[t][h]);
                    const __m256i sc_hi = _mm256_load_si256((const __m256i *)rs->sc[t][2 + h]);
#pragma GCC unroll 6
                    for (int i = 0; i < mr; ++i) {
                        sacc[i][0] = q4kxa_scale_add(sacc[i][0], dt[i][0], sc_lo);
                        sacc[i][1] = q4kxa_scale_add(sacc[i][1], dt[i][1], sc_hi);
                        dt[i][0] = dt[i][1] = _mm256_setzero_si256();
                    }
                }
            }
            if (PW__VNNI && !q5)
#pragma GCC unroll 6
                for (int i = 0; i < mr; ++i) dt[i][1] = _mm256_sub_epi32(dt[i][1], dt[i][0]);
            if (PW__VNNI) {
                const __m256 sc_lo = _mm256_load_ps(rs->scf[t][h]);
                const __m256 sc_hi = _mm256_load_ps(rs->scf[t][2 + h]);
#pragma GCC unroll 6
                for (int i = 0; i < mr; ++i) {
                    fs[i][0] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dt[i][0]), sc_lo, fs[i][0]);
                    fs[i][1] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dt[i][1]), sc_hi, fs[i][1]);
                }
            } else {
                const __m256i sc_lo = _mm256_load_si256((const __m256i *)rs->sc[t][h]);
                const __m256i sc_hi = _mm256_load_si256((const __m256i *)rs->sc[t][2 + h]);
#pragma GCC unroll 6
                for (int i = 0; i < mr; ++i) {
                    sacc[i][0] = q4kxa_scale_add(sacc[i][0], dt[i][0], sc_lo);
                    sacc[i][1] = q4kxa_scale_add(sacc[i][1], dt[i][1], sc_hi);
                }
            }
        }
#pragma GCC unroll 6
        for (int i = 0; i < mr; ++i) {
            const __m256 xd = _mm256_set1_ps(((const pw__q8_256 *)x[i])->d);
#pragma GCC unroll 2
            for (int n = 0; n < 2; ++n) {
                const int g = h + 2 * n;
                float *y = yb + 32 * i + 8 * g;
                const __m256 sf = PW__VNNI ? fs[i][n] : _mm256_cvtepi32_ps(sacc[i][n]);
                _mm256_store_ps(y, q4kxa_finish(_mm256_load_ps(y), sf,
                                                q4kxa_min_dot(rs, g, pairs[i]), rs, g, xd));
            }
        }
    }
}

/* A panel of any height 1..Q4KXA_MR, each height its own instance (q5: Q5_K's). */
Q4KXA_INLINE void k4xa_panel_any(const uint8_t *rec, const void *rs, const uint8_t *const *x,
                                 float *yb, const uint8_t *pf, int mr, const int q5) {
    switch (mr) {
#define Q4KXA_CASE(m_)                                                                  \
    case m_:                                                                            \
        if (m_ <= Q4KXA_MR) q4kxa_panel(rec, (const q4kxa_rec *)rs, x, yb, pf, m_, q5); \
        break;
        Q4KXA_CASE(1)
        Q4KXA_CASE(2)
        Q4KXA_CASE(3)
        Q4KXA_CASE(4)
        Q4KXA_CASE(5)
        Q4KXA_CASE(6)
#undef Q4KXA_CASE
    default: break;
    }
}
_Static_assert(Q4KXA_MR <= PW__T32K_MR_MAX, "panel heights of the switch");
static void q4kxa_panel_any(const uint8_t *rec, const void *rs, const uint8_t *const *x,
                            float *yb, const uint8_t *pf, int mr) {
    k4xa_panel_any(rec, rs, x, yb, pf, mr, 0);
}
static void q5kxa_panel_any(const uint8_t *rec, const void *rs, const uint8_t *const *x,
                            float *yb, const uint8_t *pf, int mr) {
    k4xa_panel_any(rec, rs, x, yb, pf, mr, 1);
}

/* Zen 4 streams these records without software prefetch (hw = 1, tile32_prefetch.h) now
 * that q4kxa_block reads them in address order: one build switched at run time (not in
 * the tree), PACKWISE_ISA=avx2 packwise bench --formats Q4_K --shapes
 * 11008x4096,4096x4096 --batch 1 --threads 1,2, three rounds in turn, fraction of the
 * read, 1 thread / 2 threads: scales first with the prefetch (as before) 52.8-61.7% /
 * 63.3-75.6, address order with it 66.9-72.5 / 76.5-83.1, address order without it
 * 81.9-85.5 / 82.3-90.5.
 *
 * On Zen 5 (pw__x86_zen5) the AVX-VNNI GEMV takes its activations four steps to a load
 * (q4kxa_block_x16: a 16-byte broadcast load and a vpshufd a step, not a vbroadcastss a
 * step). There one core issues fewer vector loads than ALU operations a cycle, and these
 * loads share the load pipes with the weights' stream: llvm-mca-19 -mcpu=znver4 puts a
 * record at 292 cycles with broadcast loads, 266 with the shuffles (the record function
 * alone; -mcpu=alderlake 243 against 262, the shuffles on Intel's one shuffle port, so
 * Intel keeps the loads). Measured on an AMD EPYC Zen 5 VM (2 vCPUs, shared), same
 * build switched in turn: a [288, 4096] weight in L2, best of 2000 calls, 5 rounds,
 * 13.33-14.33 us -> 12.39-13.38; PACKWISE_ISA=avxvnni packwise bench --formats Q4_K
 * --shapes 11008x4096,4096x4096 --batch 1 --threads 1,2, two sets of three rounds,
 * median fraction of the read, [11008, 4096] / [4096, 4096]: 1 thread 0.819 / 0.794 ->
 * 0.838 / 0.809 and 0.829 / 0.767 -> 0.836 / 0.787; 2 threads 0.837 / 0.830 -> 0.878 /
 * 0.847 and 0.859 / 0.855 -> 0.858 / 0.810. The AVX2 build keeps the loads: its dots
 * take more ALU work (vpmaddubsw, shifts), and the shuffles measured slower there (best
 * 13.79 -> 15.83 us). */
#define Q4KXA_FEATURES PW__AVX2_FEATURES(PW_CPU_AVX2 | PW_CPU_FMA | PW_CPU_F16C)

/* A family's runs and descriptors: the GEMV over records of record_ bytes (one stream;
 * pre_##_block_x16 on AVX-VNNI on Zen 5, as above, else pre_##_block), the GEMM
 * (pre_##_gemm_decode, pre_##_panel_any) and the GEMM over input-block-major bytes as
 * they are (the same loop over records made one at a time from a column's blocks by
 * make_, portable C). sym_ names the family's kernels (q4_k_q4kx32k4 ->
 * q4_k_q4kx32k4_<isa>, _gemm_<isa>), id_ the format (q4_k_ibm_gemm_<isa>). */
#define Q4KXA_FAMILY(pre_, sym_, id_, format_, record_, block_t_, make_, KERNEL_, GEMM_KERNEL_) \
    static void pre_##_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0,          \
                           int64_t i1) {                                                      \
        if (PW__VNNI && __atomic_load_n(&pw__x86_zen5, __ATOMIC_RELAXED))                     \
            pw__t32a_run(c, o0, o1, i0, i1, PW__QK_K, record_, sizeof(pw__q8_256),            \
                         pre_##_block_x16, 1, PW__HW_ZEN4);                                   \
        else                                                                                  \
            pw__t32a_run(c, o0, o1, i0, i1, PW__QK_K, record_, sizeof(pw__q8_256),            \
                         pre_##_block, 1, PW__HW_ZEN4);                                       \
    }                                                                                         \
    static void pre_##_gemm_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0,     \
                                int64_t i1) {                                                 \
        pw__t32k_run(c, o0, o1, i0, i1, record_, Q4KXA_MR, pre_##_gemm_decode,                \
                     pre_##_panel_any);                                                       \
    }                                                                                         \
    const pw__kernel PW__AVX2_SYM(pw__k_##sym_) =                                             \
        KERNEL_(PW__AVX2_ISA, Q4KXA_FEATURES, pre_##_run, PW__AVX2_PRIO + 2);                  \
    const pw__kernel PW__AVX2_SYM(pw__k_##sym_##_gemm) = GEMM_KERNEL_(                        \
        PW__AVX2_ISA, Q4KXA_FEATURES, pre_##_gemm_run, PW__AVX2_PRIO + PW__PRIO_GEMM - 1,      \
        Q4KXA_MR);                                                                            \
    PW__TILE32_IBM_FILL(pre_##_fill_ibm, block_t_, record_, make_)                            \
    static void pre_##_ibm_gemm_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, \
                                    int64_t i1) {                                             \
        pw__t32k_run_fill(c, o0, o1, i0, i1, record_, Q4KXA_MR, pre_##_gemm_decode,           \
                          pre_##_panel_any, pre_##_fill_ibm);                                 \
    }                                                                                         \
    const pw__kernel PW__AVX2_SYM(pw__k_##id_##_ibm_gemm) = PW__TILE32_IBM_GEMM_KERNEL(       \
        #id_, format_, Q8_256, PW__AVX2_ISA, Q4KXA_FEATURES, pre_##_ibm_gemm_run,              \
        PW__AVX2_PRIO + PW__PRIO_GEMM - 1, Q4KXA_MR);

Q4KXA_FAMILY(q4kxa, q4_k_q4kx32k4, q4_k, PW_FORMAT_Q4_K, PW__Q4KX_RECORD, pw__block_q4_K,
             pw__q4kx_record_from_blocks, PW__Q4KX_KERNEL, PW__Q4KX_GEMM_KERNEL)
/* Q5_K's records (kernel/q5kx.h), read as Q4_K's are. */
Q4KXA_FAMILY(q5kxa, q5_k_q5kx32k4, q5_k, PW_FORMAT_Q5_K, PW__Q5KX_RECORD, pw__block_q5_K,
             pw__q5kx_record_from_blocks, PW__Q5KX_KERNEL, PW__Q5KX_GEMM_KERNEL)
