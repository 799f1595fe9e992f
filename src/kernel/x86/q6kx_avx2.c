#if !defined(__AVX2__) || !defined(__FMA__) || !defined(__F16C__)
#error "q6kx_avx2.c needs AVX2, FMA and F16C (the build sets them for *_avx2.c and *_avxvnni.c)"
#endif
/*
 * AVX2 and AVX-VNNI GEMV and GEMM over the q6kx32k4 family (layout in
 * kernel/q6kx.h): the bytes the AVX-512 kernels read, so a weight packed (or a
 * cache file written) on an AVX-512 machine serves these levels as it is. The
 * loops are tile32_avx2.h's (GEMV) and tile32_kgemm.h's (GEMM,
 * record-major); this file is the record functions, built twice
 * (avx2_level.h: as itself, and through q6kx_avxvnni.c). Activations are
 * pw__q8_256 rows.
 *
 * A 64-byte load of a sub-block is two ymm: half h = 0 (bytes 0..31) holds
 * rows 0..7 (low nibbles) and 16..23 (high nibbles), half h = 1 rows 8..15 and
 * 24..31, four k values per int32 lane; the tile32_avx2.h sums acc[q] are rows
 * 8q..8q+7, so half h feeds chains q = h (low nibbles) and q = 2 + h (high).
 * Per half, high load p (steps 2p and 2p + 1) and low loads v_2p, v_2p+1, the
 * 6-bit quants are joined in bytes (16-bit shifts move bits across a byte
 * boundary only into positions the 0x30 / 0x0F masks drop):
 *
 *   step 2p:     A = (v & 0x0F) | (g        & 0x30)   L0 | H0 << 4 = q of row r
 *                B = (v >> 4 & 0x0F) | (g >> 2 & 0x30) L1 | H1 << 4 = q of row r + 16
 *   step 2p + 1: the same with g << 4 and g << 2 (17 logic ops per 2 steps)
 *
 * and each q (0..63) is the unsigned factor of a dot with the activation
 * bytes a_t = bcast(x.qs[4t .. 4t+3]), its -32 offset taken once per
 * sub-block s from x.bsums[s]:
 *
 *   AVX-VNNI  D = -32 bsums[s] + sum of 4 steps dpbusd(A, a_t)  (B likewise),
 *             S += D * scales[s] (vpmulld; the AVX-512 kernel's sums).
 *   AVX2      vpmaddubsw SATURATES its int16 pair sums, so the int16 sums
 *             must stay in range: one pair is at most 2 * 63 * 128 = 16128,
 *             two steps' pairs added in int16 at most 32256 (exact; four
 *             steps would reach 64512 and wrap). Each two-step int16 sum w is
 *             widened and scaled at once by vpmaddwd against the row's scale
 *             in both int16 halves of its lane: S += w.lo * sc + w.hi * sc
 *             (|.| <= 2 * 32256 * 128), and the offset by one more vpmaddwd
 *             of the scales against (-16 bsums[s], -16 bsums[s]): exact while
 *             |bsums| <= 2047, which holds as pw__q8_256 quants lie in
 *             [-127, 127] (quant/act.c clamps), |bsums| <= 16 * 127 = 2032.
 *             |S| <= 16 sub-blocks * 16 * 63 * 128 * 128 < 2^31 before the
 *             offset, and the result is within 16 * 16 * 32 * 127 * 128.
 *
 * then acc += f32(S) * f32(d) * x.d for each group of 8 rows, as the AVX-512
 * kernel. Rows past `out` in the last tile are zero in the packed bytes; their
 * lanes are computed and not stored.
 *
 * GEMV prefetch (pw__t32a_prefetch, tile32_avx2.h): each sub-block its 384
 * bytes, each record its scales and d.
 *
 * GEMM (one record for a panel of rows of X, tile32_kgemm.h). Joining
 * costs 17 logic ops per 2 steps and half, so decode joins each record once
 * for every panel of its row block, into w = q - 32 (signed, [-32, 31]), 8 KiB
 * of the loop's scratch ([sub-block][rows 8q..8q+7][step]), with the scales in
 * each level's form and the
 * weight-only term corr below. Then one row of X at a time runs through the
 * record with its four int32 sums S in registers: the weights are the signed
 * operand of every dot, so it reads them straight from L1 as memory operands,
 * and the activations are the unsigned one, x.qu = x.qs + 128 (pw__q8_256
 * carries them):
 *
 *   sum qu * w = sum qs * w + 128 sum w,  so  S starts at corr = -128 *
 *   sum_s scales[s] * (sum of w over sub-block s)   (|.| <= 128 * 128 * 512 * 16)
 *   AVX-VNNI  D = sum of 4 steps dpbusd(qu, w): |D| <= 16 * 255 * 32 = 130560,
 *             S += D * scales[s] (vpmulld): |S| <= 16 * 130560 * 128 + |corr| < 2^31.
 *   AVX2      vpmaddubsw(qu, w): a pair within 2 * 255 * 32 = 16320, two steps
 *             added in int16 within 32640 <= 32767 (exact), then vpmaddwd
 *             against the int16 scales as in the GEMV; no offset term.
 *
 * Measured on this machine (2 vCPUs shared with other jobs, load average 4-8:
 * single runs move by 10-20%):
 *   packwise bench --formats Q6_K --shapes 11008x4096 --batch 1,128 --threads 1,
 *   PACKWISE_ISA=avx2 | avxvnni, six runs over the session (GEMV: of the read;
 *   GEMM: of the level's int8 peak):  avx2 GEMV 70-84% (most 81-84%), GEMM
 *   39-53%;  avxvnni GEMV 84-94%, GEMM 43-51% (before these kernels, row-major:
 *   avx2 65% / 16%, avxvnni 44% / 14%). A small harness (not in the tree) timing
 *   pw_matmul_wt by thread CPU time, [2048, 4096] n = 128: avxvnni 218-220
 *   GOP/s, avx2 185-198 (the AVX-512 kernel 384-488 in the same runs); [512,
 *   2048] n = 64, all in L2, within 10% of that: the loop, not memory, is the
 *   limit. AVX2's dots cost 1.5 multiply-unit ops per 32 products
 *   (vpmaddubsw and half a vpmaddwd) where its peak loop spends 1, so about 67%
 *   of that peak is its ceiling.
 *   GEMV with the weight in L2 ([256, 2048], the harness, n = 1): avx2 74-75
 *   GOP/s, about 30 GB/s of packed bytes, no more than the read bandwidth (25-32
 *   GB/s here), so the AVX2 GEMV is as much compute- as memory-bound (its
 *   17-op join, 8 vpmaddubsw and 6 vpmaddwd per half sub-block); avxvnni 85-88
 *   GOP/s, about 35 GB/s. Named sums in place of the sums array there: no change.
 *   Tried, kept: the join once per record (per panel before: 35-38%), the row's
 *   sums in registers, the joined quants in the loop's scratch (a thread-local
 *   buffer first: the row loop called __tls_get_addr each sub-block, 2x slower), the next
 *   record's L1 prefetch spread over the first panel's rows (+7%, avxvnni).
 *   The AVX2 row loop loads each sub-block's four scale vectors once, for both
 *   two-step sums of their rows (GCC had folded them into both vpmaddwd as memory
 *   operands, loading each twice): llvm-mca -mcpu=znver4 puts a sub-block at 14.9
 *   cycles before (28 vector loads at two a cycle, the limit) and 12.1 after (24
 *   loads, 24 multiply-pipe ops). On a Zen 4 VM, PACKWISE_ISA=avx2 packwise bench
 *   --formats Q6_K --shapes 2048x4096 --batch 128 --threads 1, the two builds in
 *   turn, 10 rounds: 41.8-54.8% of the avx2 peak (median 54.2) against 46.4-59.1
 *   (median 57.4); 11 rounds at [11008, 4096] and [4096, 4096]: 8 ahead, 3 behind.
 *   AVX-VNNI takes two rows of X per pass over half the record's rows at a time
 *   (q6kxa_row2): llvm-mca -mcpu=znver5 put the one-row loop at 12.1 cycles per
 *   sub-block for 16 vpdpbusd (24 vector loads at two a cycle; 8 cycles at the
 *   peak), so sharing each weight load between two rows (18 loads for 16: 9 cycles
 *   by the same count) lifts that bound from 0.67 to 0.89 of the peak. On an AMD EPYC Zen 5 VM (AVX-VNNI),
 *   PACKWISE_ISA=avxvnni packwise bench --formats Q6_K --shapes 11008x4096 --batch
 *   128 --threads 1,2, two builds in turn, three rounds: one row 56/56/56% of the
 *   level's peak (1 thread), 56/55/56 (2), two rows 66/65/65, 64/66/66. The same
 *   for AVX2 (two-step int16 sums, the scale vectors kept, 14 ymm by count) was
 *   not kept: GCC spilled sums, and three rounds in turn measured one row 59-64% /
 *   50-61 against two rows 50-61 / 49-63 (its multiply-unit ops, not its loads, are
 *   the bound: 24 either way).
 *   Tried, dropped (the same harness, [512, 2048] n = 64, two builds run in
 *   turn): AVX-VNNI two rows of X per pass over all 32 rows, sharing the weight
 *   loads, sums in registers (spilled: 154-167 against 190-230 GOP/s) or in L1
 *   (154-190 against 227); two sub-blocks' 8 dot chains interleaved, unrolling the
 *   sub-block loop by 2, prefetching the next row's activations into L1 (no
 *   change beyond the noise). vpmulld is not the limit (an add in its place:
 *   no change); the loads are part of it (the weight vectors held in registers,
 *   wrong sums, 243-272 against 223-227 GOP/s).
 */
#include "format/blocks.h"
#include "kernel/q3kx.h"
#include "kernel/q6kx.h"
#include "kernel/x86/tile32_avx2.h"
#include "kernel/tile32_kgemm.h"

#include <stddef.h>
#include <string.h>

#define Q6KXA_INLINE static inline __attribute__((always_inline))

/* Steps 2p and 2p + 1 of half h of a sub-block from its loads v0 (low step 2p), v1
 * (low step 2p + 1) and g (high pair p): the quants q (0..63) of rows 8h + lane in
 * qa[e], of rows 16 + 8h + lane in qb[e], e = 0, 1 (the file's comment). */
Q6KXA_INLINE void q6kxa_join_v(__m256i v0, __m256i v1, __m256i g, __m256i qa[2], __m256i qb[2]) {
    const __m256i m0f = _mm256_set1_epi8(0x0F), m30 = _mm256_set1_epi8(0x30);
    qa[0] = _mm256_or_si256(_mm256_and_si256(v0, m0f), _mm256_and_si256(g, m30));
    qb[0] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(v0, 4), m0f),
                            _mm256_and_si256(_mm256_srli_epi16(g, 2), m30));
    qa[1] = _mm256_or_si256(_mm256_and_si256(v1, m0f),
                            _mm256_and_si256(_mm256_slli_epi16(g, 4), m30));
    qb[1] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(v1, 4), m0f),
                            _mm256_and_si256(_mm256_slli_epi16(g, 2), m30));
}

/* The same, loading the three vectors from sub-block sub. */
Q6KXA_INLINE void q6kxa_join(const uint8_t *sub, int p, int h, __m256i qa[2], __m256i qb[2]) {
    const __m256i g = _mm256_loadu_si256((const __m256i *)(sub + PW__Q6KX_HIGH + 64 * p + 32 * h));
    const __m256i v0 = _mm256_loadu_si256((const __m256i *)(sub + 128 * p + 32 * h));
    const __m256i v1 = _mm256_loadu_si256((const __m256i *)(sub + 128 * p + 64 + 32 * h));
    q6kxa_join_v(v0, v1, g, qa, qb);
}

/* Eight int8 scales at p (of rows 8q..8q+7) sign-extended to int32 lanes (AVX-VNNI: one
 * vpmovsxbd from memory). */
Q6KXA_INLINE __m256i q6kxa_sc32_at(const void *p) {
    return _mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)p));
}

/* The same as int16 in both halves of each lane (AVX2, for vpmaddwd): the 8
 * bytes broadcast to every qword, each byte moved to the upper byte of its two
 * int16 and sign-extended by an arithmetic shift. */
Q6KXA_INLINE __m256i q6kxa_sc16_at(const void *p) {
    int64_t b8;
    memcpy(&b8, p, 8);
    const __m256i ctl = _mm256_setr_epi8(
        -128, 0, -128, 0, -128, 1, -128, 1, -128, 2, -128, 2, -128, 3, -128, 3,
        -128, 4, -128, 4, -128, 5, -128, 5, -128, 6, -128, 6, -128, 7, -128, 7);
    return _mm256_srai_epi16(_mm256_shuffle_epi8(_mm256_set1_epi64x(b8), ctl), 8);
}

/* The int8 scales of sub-block s, rows 8q..8q+7, in either form. */
Q6KXA_INLINE __m256i q6kxa_sc32(const uint8_t *rec, int s, int q) {
    return q6kxa_sc32_at(rec + PW__Q6KX_SCALES + 32 * s + 8 * q);
}
Q6KXA_INLINE __m256i q6kxa_sc16(const uint8_t *rec, int s, int q) {
    return q6kxa_sc16_at(rec + PW__Q6KX_SCALES + 32 * s + 8 * q);
}

/* The int32 sums S of one record with one activation block (the file's comment),
 * rows 8q..8q+7 in sum[q]: scales applied, the -32 offset included.
 *
 * AVX2 reads the record in address order: each sub-block's twelve loads in turn (an
 * empty asm keeps GCC from folding them into their uses, in the order of the
 * arithmetic), its int16 two-step sums kept (4 KiB a record, in L1), then the scales.
 * Zen 4's hardware prefetcher follows that order (q6kx_avx512.c, which reads its records
 * so too): on Zen 4, PACKWISE_ISA=avx2 packwise bench --formats Q6_K --shapes
 * 11008x4096,4096x4096 --batch 1 --threads 1,2, one build switched at run time, three
 * rounds in turn, fraction of the read, 1 thread / 2 threads: 56.5-63.4% / 57.2-79.3 (each
 * sub-block's scales read beside it, software prefetch) against 84.2-88.7 / 65.2-87.3
 * (address order, the stream left to the hardware); with the software prefetch kept,
 * address order measured 68.9-74.0 / 77.6-80.6, and the twelve loads in order without
 * the scales moved 22-25 / 32-38 without it. From L2 ([512, 4096]) 36.5 GB/s against
 * 38.1-38.4: keeping the sums costs nothing measurable. AVX-VNNI (not on Zen 4, whose
 * cores lack it; Intel cores take the software prefetch) keeps the order it had. */
Q6KXA_INLINE void q6kxa_sums(const uint8_t *rec, const pw__q8_256 *xb, int pf, __m256i sum[4],
                             const int x16) {
    for (int q = 0; q < 4; ++q) sum[q] = _mm256_setzero_si256();
    if (PW__VNNI) {
#pragma GCC unroll 2
        for (int s = 0; s < 16; ++s) {
            const uint8_t *sub = rec + PW__Q6KX_SUB * s;
            if (pf) {
                pw__tile32_prefetch_pf(sub, PW__Q6KX_SUB, pf);
            }
            const int8_t *xs = xb->qs + 16 * s;
            const __m256i xv = x16 ? pw__t32a_bcast16(xs) : _mm256_setzero_si256();
#pragma GCC unroll 2
            for (int h = 0; h < 2; ++h) {
                __m256i da = _mm256_set1_epi32(-32 * xb->bsums[s]), db = da;
#pragma GCC unroll 2
                for (int p = 0; p < 2; ++p) {
                    __m256i qa[2], qb[2];
                    q6kxa_join(sub, p, h, qa, qb);
#pragma GCC unroll 2
                    for (int e = 0; e < 2; ++e) {
                        const __m256i a = x16 ? pw__t32a_dword(xv, 2 * p + e)
                                              : pw__t32a_bcast4(xs + 8 * p + 4 * e);
                        da = pw__dpbusd(da, qa[e], a);
                        db = pw__dpbusd(db, qb[e], a);
                    }
                }
                sum[h] = _mm256_add_epi32(sum[h], _mm256_mullo_epi32(da, q6kxa_sc32(rec, s, h)));
                sum[2 + h] = _mm256_add_epi32(sum[2 + h],
                                              _mm256_mullo_epi32(db, q6kxa_sc32(rec, s, 2 + h)));
            }
        }
    } else {
        __m256i w[16][2][2][2]; /* [sub-block][h][p][rows 8h.. (a) or 16 + 8h.. (b)] */
#pragma GCC unroll 1
        for (int s = 0; s < 16; ++s) {
            const uint8_t *sub = rec + PW__Q6KX_SUB * s;
            if (pf) {
                pw__tile32_prefetch_pf(sub, PW__Q6KX_SUB, pf);
            }
            __m256i v[8], g[4]; /* the low loads, then the high ones, in address order */
            for (int k = 0; k < 8; ++k) v[k] = _mm256_loadu_si256((const __m256i *)(sub + 32 * k));
            for (int k = 0; k < 4; ++k)
                g[k] = _mm256_loadu_si256((const __m256i *)(sub + PW__Q6KX_HIGH + 32 * k));
            __asm__("" : "+x"(v[0]), "+x"(v[1]), "+x"(v[2]), "+x"(v[3]), "+x"(v[4]), "+x"(v[5]),
                    "+x"(v[6]), "+x"(v[7]), "+x"(g[0]), "+x"(g[1]), "+x"(g[2]), "+x"(g[3]));
            const int8_t *xs = xb->qs + 16 * s;
#pragma GCC unroll 2
            for (int h = 0; h < 2; ++h)
#pragma GCC unroll 2
                for (int p = 0; p < 2; ++p) {
                    __m256i qa[2], qb[2];
                    q6kxa_join_v(v[4 * p + h], v[4 * p + 2 + h], g[2 * p + h], qa, qb);
                    const __m256i a0 = pw__t32a_bcast4(xs + 8 * p),
                                  a1 = pw__t32a_bcast4(xs + 8 * p + 4);
                    /* two steps in int16: at most 32256 (the file's comment) */
                    w[s][h][p][0] = _mm256_add_epi16(_mm256_maddubs_epi16(qa[0], a0),
                                                     _mm256_maddubs_epi16(qa[1], a1));
                    w[s][h][p][1] = _mm256_add_epi16(_mm256_maddubs_epi16(qb[0], a0),
                                                     _mm256_maddubs_epi16(qb[1], a1));
                }
        }
#pragma GCC unroll 1
        for (int s = 0; s < 16; ++s) {
            /* the offset: scale * (-16 bsums) in both int16 halves */
            const __m256i off = _mm256_set1_epi16((int16_t)(-16 * xb->bsums[s]));
#pragma GCC unroll 2
            for (int h = 0; h < 2; ++h) {
                const __m256i sca = q6kxa_sc16(rec, s, h), scb = q6kxa_sc16(rec, s, 2 + h);
                __m256i ta = _mm256_madd_epi16(sca, off), tb = _mm256_madd_epi16(scb, off);
#pragma GCC unroll 2
                for (int p = 0; p < 2; ++p) {
                    ta = _mm256_add_epi32(ta, _mm256_madd_epi16(w[s][h][p][0], sca));
                    tb = _mm256_add_epi32(tb, _mm256_madd_epi16(w[s][h][p][1], scb));
                }
                sum[h] = _mm256_add_epi32(sum[h], ta);
                sum[2 + h] = _mm256_add_epi32(sum[2 + h], tb);
            }
        }
    }
    if (pf)
        pw__tile32_prefetch_pf(rec + PW__Q6KX_SCALES, PW__Q6KX_RECORD - PW__Q6KX_SCALES, pf);
}

/* GEMV record function (tile32_avx2.h). */
Q6KXA_INLINE void q6kxa_steps(const uint8_t *rec, const uint8_t *xbp, int pf, __m256 acc[4],
                              const int x16) {
    const pw__q8_256 *xb = (const pw__q8_256 *)xbp;
    __m256i sum[4];
    q6kxa_sums(rec, xb, pf, sum, x16);
    const __m256 xd = _mm256_set1_ps(xb->d);
#pragma GCC unroll 4
    for (int q = 0; q < 4; ++q)
        acc[q] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sum[q]),
                                 _mm256_mul_ps(pw__t32a_f16x8(rec + PW__Q6KX_D + 16 * q), xd),
                                 acc[q]);
}

/* The record functions of tile32_avx2.h: activations broadcast from memory a step, or
 * (x16, AVX-VNNI) a sub-block's four from one load of its 16 bytes (q6kxa_run). */
Q6KXA_INLINE void q6kxa_block(const uint8_t *rec, const uint8_t *xbp, int pf, __m256 acc[4]) {
    q6kxa_steps(rec, xbp, pf, acc, 0);
}
Q6KXA_INLINE void q6kxa_block_x16(const uint8_t *rec, const uint8_t *xbp, int pf, __m256 acc[4]) {
    q6kxa_steps(rec, xbp, pf, acc, 1);
}

/* Two streams (tile32_avx2.h): packwise bench --formats Q6_K --shapes 11008x4096
 * --batch 1, this build and one streaming once alternately, 2 rounds each at avx2 and
 * avxvnni: 1 thread 77-89% of the read against 75-77% (avx2), 81-86% against 78-85%
 * (avxvnni); 2 threads 82% against 73-75% (avx2), 74-82% against 73-77% (avxvnni).
 * Q4_K measured no gain (72-79% against 76-82%) and streams once; AVX-512 Q6_K
 * (q6kx_avx512.c) neither. */
/* On Zen 5 (pw__x86_zen5) the AVX2 build reads one stream: an AMD EPYC Zen 5 VM,
 * PACKWISE_ISA=avx2, --formats Q6_K --shapes 11008x4096,4096x4096 --batch 1 --threads 1,2,
 * one scratch build choosing at run time, three rounds in turn, [11008, 4096] / [4096,
 * 4096], 1 thread: two streams 78-83 / 77-84%, one 88-91 / 83-91, two with the prefetch
 * into L2 73-75 / 76-80; 2 threads 88-90 / 83-85, 91-94 / 88-92. The AVX-VNNI build
 * keeps two there (two rounds: 93-97 / 93-95 against 91-92 / 91-92 on 1 thread, level on
 * 2). The decode step agrees (packwise bench --step --formats Q6_K --threads 1,2, a
 * scratch bench timing the two in alternate tokens of one run, layer time in us, two
 * runs; q4x_avx512.c says why the step decides): avx2 one stream 4851-4854 / 2702-2723
 * against two 4754-4836 / 2798-2814 (1 / 2 threads), avxvnni one 5585 / 2927 against two
 * 5255 / 2916. And there the AVX-VNNI build takes a sub-block's four activation dwords
 * from one load (q6kxa_block_x16; q4kxa_run in q4kx_avx2.c has why, and why not on
 * Intel): PACKWISE_ISA=avxvnni --formats Q6_K as above, same build switched in turn,
 * median fraction of the read, [11008, 4096] / [4096, 4096], 1 thread: 0.830 / 0.827 ->
 * 0.874 / 0.842 (four rounds) and 0.769 / 0.732 -> 0.850 / 0.766 (three); 2 threads
 * 0.862 / 0.849 -> 0.861 / 0.857 and 0.846 / 0.776 -> 0.904 / 0.776. From L2 ([192,
 * 4096], best of 2000 calls) it is 3% slower (12.78-12.89 -> 13.19-13.27 us): the
 * joins' logic fills the ALU pipes the shuffles take, so the gain is in the stream. */
static void q6kxa_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    /* PW__HW_ZEN4: Zen 4 leaves the stream to its prefetcher (q6kxa_sums) */
    const int zen5 = __atomic_load_n(&pw__x86_zen5, __ATOMIC_RELAXED);
    if (!PW__VNNI && zen5)
        pw__t32a_run(c, o0, o1, i0, i1, 256, PW__Q6KX_RECORD, sizeof(pw__q8_256), q6kxa_block, 1,
                     PW__HW_ZEN4);
    else if (PW__VNNI && zen5)
        pw__t32a_run(c, o0, o1, i0, i1, 256, PW__Q6KX_RECORD, sizeof(pw__q8_256), q6kxa_block_x16,
                     2, PW__HW_ZEN4);
    else
        pw__t32a_run(c, o0, o1, i0, i1, 256, PW__Q6KX_RECORD, sizeof(pw__q8_256), q6kxa_block, 2,
                     PW__HW_ZEN4);
}

/* ---- GEMM ---- */

#define Q6KXA_MR 6 /* most rows of X per panel (PW__T32K_MR_MAX) */

/* One record decoded once for every panel: its scales as the operand each level's
 * scale step takes (q6kxa_sc32, q6kxa_sc16), d as f32, and the weight-only term
 * that taking the activations unsigned adds (corr; GEMM comment above). */
typedef struct q6kxa_rec {
#if defined(PW_AVXVNNI)
    int32_t sc[16][4][8]; /* [sub-block][rows 8q..8q+7][lane] */
#else
    int16_t sc[16][4][16]; /* the same, each scale in both int16 halves of its lane */
#endif
    int32_t corr[4][8]; /* -128 * sum_s scales[s] * sum(q - 32 over sub-block s), per row */
    float d[32];
    /* the record's quants less 32, joined (q6kxa_join), [sub-block][rows 8q..8q+7][step]:
     * 8 KiB that decode fills once per record and every panel reads from L1 */
    __m256i joined[16 * 4 * 4];
} q6kxa_rec;
_Static_assert(sizeof(q6kxa_rec) <= PW__T32K_SCRATCH, "q6kxa_rec fits the loop's scratch");

static void q6kxa_decode(const uint8_t *rec, void *out) {
    q6kxa_rec *rs = out;
    __m256i *jn = rs->joined;
    const __m256i m32 = _mm256_set1_epi8(32), one8 = _mm256_set1_epi8(1);
    __m256i corr[4] = {_mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256(),
                       _mm256_setzero_si256()};
    for (int s = 0; s < 16; ++s, jn += 16) {
        __m256i w[4][4]; /* [q][step] */
        for (int h = 0; h < 2; ++h)
            for (int p = 0; p < 2; ++p) {
                __m256i qa[2], qb[2];
                q6kxa_join(rec + PW__Q6KX_SUB * s, p, h, qa, qb);
                for (int e = 0; e < 2; ++e) {
                    w[h][2 * p + e] = _mm256_sub_epi8(qa[e], m32);
                    w[2 + h][2 * p + e] = _mm256_sub_epi8(qb[e], m32);
                }
            }
        for (int q = 0; q < 4; ++q) {
            /* sum of the 16 values q - 32 of each row: |.| <= 512, int16 exact */
            __m256i ws = _mm256_setzero_si256();
            for (int t = 0; t < 4; ++t) {
                _mm256_store_si256(jn + 4 * q + t, w[q][t]);
                ws = _mm256_add_epi16(ws, _mm256_maddubs_epi16(one8, w[q][t]));
            }
            if (PW__VNNI) {
                const __m256i sc = q6kxa_sc32(rec, s, q);
                _mm256_store_si256((__m256i *)rs->sc[s][q], sc);
                ws = _mm256_madd_epi16(ws, _mm256_set1_epi16(1));
                corr[q] = _mm256_add_epi32(corr[q], _mm256_mullo_epi32(ws, sc));
            } else {
                const __m256i sc = q6kxa_sc16(rec, s, q);
                _mm256_store_si256((__m256i *)rs->sc[s][q], sc);
                corr[q] = _mm256_add_epi32(corr[q], _mm256_madd_epi16(ws, sc));
            }
        }
    }
    for (int q = 0; q < 4; ++q) {
        _mm256_store_si256((__m256i *)rs->corr[q],
                           _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(corr[q], 7)));
        _mm256_store_ps(rs->d + 8 * q, pw__t32a_f16x8(rec + PW__Q6KX_D + 16 * q));
    }
}

/* y[8q .. 8q + 7] += f32(S) * d (rows 8q..8q+7 of the record) * x.d (xd). */
Q6KXA_INLINE void q6kxa_out(float *y, const q6kxa_rec *rs, __m256 xd, int q, __m256i S) {
    _mm256_store_ps(y + 8 * q, _mm256_fmadd_ps(_mm256_cvtepi32_ps(S),
                                               _mm256_mul_ps(_mm256_load_ps(rs->d + 8 * q), xd),
                                               _mm256_load_ps(y + 8 * q)));
}

/* One row of X over the joined record (q6kxa_decode): y[0..31] += its dots, the
 * four scaled int32 sums (rows 8q..8q+7) in registers for the whole record. The
 * joined weights are the signed operand, so each dot takes them straight from
 * memory (L1). Its own function, not inlined into the panels (a call per record
 * and row is nothing beside its 16 sub-blocks, and the panels' instances stay small). */
#if defined(__clang__)
#define Q6KXA_OUTLINE __attribute__((noinline)) /* clang has no noipa */
#else
#define Q6KXA_OUTLINE __attribute__((noipa))
#endif
static Q6KXA_OUTLINE void q6kxa_row(const __m256i *jn, const q6kxa_rec *rs,
                                    const pw__q8_256 *xb, float *yb) {
    __m256i s0 = _mm256_load_si256((const __m256i *)rs->corr[0]),
            s1 = _mm256_load_si256((const __m256i *)rs->corr[1]),
            s2 = _mm256_load_si256((const __m256i *)rs->corr[2]),
            s3 = _mm256_load_si256((const __m256i *)rs->corr[3]);
    const __m256i *sc = (const __m256i *)rs->sc;
    for (int s = 0; s < 16; ++s, jn += 16, sc += 4) {
        const uint8_t *xu = xb->qu + 16 * s;
        if (PW__VNNI) {
            const __m256i a0 = pw__t32a_bcast4((const int8_t *)xu);
            __m256i d0 = pw__dpbusd(_mm256_setzero_si256(), a0, jn[0]),
                    d1 = pw__dpbusd(_mm256_setzero_si256(), a0, jn[4]),
                    d2 = pw__dpbusd(_mm256_setzero_si256(), a0, jn[8]),
                    d3 = pw__dpbusd(_mm256_setzero_si256(), a0, jn[12]);
#pragma GCC unroll 3
            for (int t = 1; t < 4; ++t) {
                const __m256i a = pw__t32a_bcast4((const int8_t *)xu + 4 * t);
                d0 = pw__dpbusd(d0, a, jn[t]);
                d1 = pw__dpbusd(d1, a, jn[4 + t]);
                d2 = pw__dpbusd(d2, a, jn[8 + t]);
                d3 = pw__dpbusd(d3, a, jn[12 + t]);
            }
            s0 = _mm256_add_epi32(s0, _mm256_mullo_epi32(d0, sc[0]));
            s1 = _mm256_add_epi32(s1, _mm256_mullo_epi32(d1, sc[1]));
            s2 = _mm256_add_epi32(s2, _mm256_mullo_epi32(d2, sc[2]));
            s3 = _mm256_add_epi32(s3, _mm256_mullo_epi32(d3, sc[3]));
        } else { /* int16 sums of two steps, exact (the file's comment) */
            const __m256i a0 = pw__t32a_bcast4((const int8_t *)xu),
                          a1 = pw__t32a_bcast4((const int8_t *)xu + 4),
                          a2 = pw__t32a_bcast4((const int8_t *)xu + 8),
                          a3 = pw__t32a_bcast4((const int8_t *)xu + 12);
            /* each scale vector loaded once for both two-step sums of its rows */
#define Q6KXA_W(q_)                                                                             \
    __extension__({                                                                             \
        __m256i c_ = _mm256_load_si256(sc + (q_));                                              \
        PW__T32A_KEEP(c_); /* a register for both vpmaddwd: GCC would fold two loads */         \
        const __m256i w0_ = _mm256_add_epi16(_mm256_maddubs_epi16(a0, jn[4 * (q_)]),           \
                                             _mm256_maddubs_epi16(a1, jn[4 * (q_) + 1]));       \
        const __m256i w1_ = _mm256_add_epi16(_mm256_maddubs_epi16(a2, jn[4 * (q_) + 2]),       \
                                             _mm256_maddubs_epi16(a3, jn[4 * (q_) + 3]));       \
        _mm256_add_epi32(_mm256_madd_epi16(w0_, c_), _mm256_madd_epi16(w1_, c_));               \
    })
            s0 = _mm256_add_epi32(s0, Q6KXA_W(0));
            s1 = _mm256_add_epi32(s1, Q6KXA_W(1));
            s2 = _mm256_add_epi32(s2, Q6KXA_W(2));
            s3 = _mm256_add_epi32(s3, Q6KXA_W(3));
#undef Q6KXA_W
        }
    }
    const __m256 xd = _mm256_set1_ps(xb->d);
    q6kxa_out(yb, rs, xd, 0, s0);
    q6kxa_out(yb, rs, xd, 1, s1);
    q6kxa_out(yb, rs, xd, 2, s2);
    q6kxa_out(yb, rs, xd, 3, s3);
}

#if defined(PW_AVXVNNI)
/* AVX-VNNI: two rows of X (xa, xb) over the joined record, rows 8q..8q+7 for two q
 * at a time: each weight vector, loaded once, feeds both rows' dots, and each scale
 * vector both rows' vpmulld. A sub-block and pair of q: 8 weight loads, 8 activation
 * broadcasts and 2 scale vectors for 16 vpdpbusd (q6kxa_row: 24 loads for 16), and 14
 * ymm live (two rows over all four q at once had needed 16 sums alone and spilled). */
static Q6KXA_OUTLINE void q6kxa_row2(const __m256i *jn0, const q6kxa_rec *rs,
                                     const pw__q8_256 *xa, const pw__q8_256 *xb, float *ya,
                                     float *yb) {
    const __m256 xda = _mm256_set1_ps(xa->d), xdb = _mm256_set1_ps(xb->d);
    for (int q = 0; q < 4; q += 2) {
        __m256i sa0 = _mm256_load_si256((const __m256i *)rs->corr[q]),
                sa1 = _mm256_load_si256((const __m256i *)rs->corr[q + 1]), sb0 = sa0, sb1 = sa1;
        const __m256i *jn = jn0 + 4 * q, *sc = (const __m256i *)rs->sc + q;
        for (int s = 0; s < 16; ++s, jn += 16, sc += 4) {
            const int8_t *ua = (const int8_t *)xa->qu + 16 * s, *ub = (const int8_t *)xb->qu + 16 * s;
            __m256i w0 = _mm256_load_si256(jn), w1 = _mm256_load_si256(jn + 4);
            PW__T32A_KEEP(w0); /* in registers for both rows: GCC would fold two loads */
            PW__T32A_KEEP(w1);
            __m256i a = pw__t32a_bcast4(ua), b = pw__t32a_bcast4(ub);
            __m256i da0 = pw__dpbusd(_mm256_setzero_si256(), a, w0),
                    da1 = pw__dpbusd(_mm256_setzero_si256(), a, w1),
                    db0 = pw__dpbusd(_mm256_setzero_si256(), b, w0),
                    db1 = pw__dpbusd(_mm256_setzero_si256(), b, w1);
#pragma GCC unroll 3
            for (int t = 1; t < 4; ++t) {
                w0 = _mm256_load_si256(jn + t);
                w1 = _mm256_load_si256(jn + 4 + t);
                PW__T32A_KEEP(w0);
                PW__T32A_KEEP(w1);
                a = pw__t32a_bcast4(ua + 4 * t);
                b = pw__t32a_bcast4(ub + 4 * t);
                da0 = pw__dpbusd(da0, a, w0);
                da1 = pw__dpbusd(da1, a, w1);
                db0 = pw__dpbusd(db0, b, w0);
                db1 = pw__dpbusd(db1, b, w1);
            }
            __m256i c0 = _mm256_load_si256(sc), c1 = _mm256_load_si256(sc + 1);
            PW__T32A_KEEP(c0);
            PW__T32A_KEEP(c1);
            sa0 = _mm256_add_epi32(sa0, _mm256_mullo_epi32(da0, c0));
            sa1 = _mm256_add_epi32(sa1, _mm256_mullo_epi32(da1, c1));
            sb0 = _mm256_add_epi32(sb0, _mm256_mullo_epi32(db0, c0));
            sb1 = _mm256_add_epi32(sb1, _mm256_mullo_epi32(db1, c1));
        }
        q6kxa_out(ya, rs, xda, q, sa0);
        q6kxa_out(ya, rs, xda, q + 1, sa1);
        q6kxa_out(yb, rs, xdb, q, sb0);
        q6kxa_out(yb, rs, xdb, q + 1, sb1);
    }
}
#endif

/* One record (of rb bytes, a constant: Q6_K's or Q3_K's, whose decode makes the same
 * q6kxa_rec) for mr (a constant) rows of X: yb[i][0..31] += their dots. */
Q6KXA_INLINE void q6kxa_panel(const uint8_t *rec, const q6kxa_rec *rs, const uint8_t *const *x,
                              float *yb, const uint8_t *pf, const int mr, const int rb) {
    (void)rec;
    /* the next record into L1, which the next decode reads: its lines spread over
     * the panel's rows (all 105 at once stalled on the line fill buffers) */
    const int lines = (rb / 64 + mr - 1) / mr;
    int i = 0;
#if defined(PW_AVXVNNI)
    for (; i + 2 <= mr; i += 2) {
        if (pf)
            for (int l = 64 * lines * i; l < 64 * lines * (i + 2) && l < rb; l += 64)
                _mm_prefetch((const char *)(pf + l), _MM_HINT_T0);
        q6kxa_row2(rs->joined, rs, (const pw__q8_256 *)x[i], (const pw__q8_256 *)x[i + 1],
                   yb + 32 * i, yb + 32 * (i + 1));
    }
#endif
    for (; i < mr; ++i) {
        if (pf)
            for (int l = 64 * lines * i; l < 64 * lines * (i + 1) && l < rb; l += 64)
                _mm_prefetch((const char *)(pf + l), _MM_HINT_T0);
        q6kxa_row(rs->joined, rs, (const pw__q8_256 *)x[i], yb + 32 * i);
    }
}

/* A panel of any height 1..Q6KXA_MR over records of rb_ bytes, each height its own
 * instance, named fn_. */
#define Q6KXA_PANEL_ANY(fn_, rb_)                                                               \
    static void fn_(const uint8_t *rec, const void *rs, const uint8_t *const *x, float *yb,    \
                    const uint8_t *pf, int mr) {                                               \
        switch (mr) {                                                                          \
        case 1: q6kxa_panel(rec, (const q6kxa_rec *)rs, x, yb, pf, 1, rb_); break;             \
        case 2: q6kxa_panel(rec, (const q6kxa_rec *)rs, x, yb, pf, 2, rb_); break;             \
        case 3: q6kxa_panel(rec, (const q6kxa_rec *)rs, x, yb, pf, 3, rb_); break;             \
        case 4: q6kxa_panel(rec, (const q6kxa_rec *)rs, x, yb, pf, 4, rb_); break;             \
        case 5: q6kxa_panel(rec, (const q6kxa_rec *)rs, x, yb, pf, 5, rb_); break;             \
        case 6: q6kxa_panel(rec, (const q6kxa_rec *)rs, x, yb, pf, 6, rb_); break;             \
        default: break;                                                                        \
        }                                                                                      \
    }
_Static_assert(Q6KXA_MR == 6, "Q6KXA_PANEL_ANY makes heights 1..6");
Q6KXA_PANEL_ANY(q6kxa_panel_any, PW__Q6KX_RECORD)

static void q6kxa_gemm_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    pw__t32k_run(c, o0, o1, i0, i1, PW__Q6KX_RECORD, Q6KXA_MR, q6kxa_decode, q6kxa_panel_any);
}

const pw__kernel PW__AVX2_SYM(pw__k_q6_k_q6kx32k4) =
    PW__Q6KX_KERNEL(PW__AVX2_ISA, PW__AVX2_FEATURES(PW_CPU_AVX2 | PW_CPU_FMA | PW_CPU_F16C),
                    q6kxa_run, PW__AVX2_PRIO + 2);

const pw__kernel PW__AVX2_SYM(pw__k_q6_k_q6kx32k4_gemm) = PW__Q6KX_GEMM_KERNEL(
    PW__AVX2_ISA, PW__AVX2_FEATURES(PW_CPU_AVX2 | PW_CPU_FMA | PW_CPU_F16C), q6kxa_gemm_run,
    PW__AVX2_PRIO + PW__PRIO_GEMM - 1, Q6KXA_MR);

/* GEMM over input-block-major Q6_K bytes as they are: the loop above over records made
 * one at a time from a column's blocks (pw__q6kx_record_from_blocks, portable C). */
PW__TILE32_IBM_FILL(q6kxa_fill_ibm, pw__block_q6_K, PW__Q6KX_RECORD, pw__q6kx_record_from_blocks)

static void q6kxa_ibm_gemm_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    pw__t32k_run_fill(c, o0, o1, i0, i1, PW__Q6KX_RECORD, Q6KXA_MR, q6kxa_decode, q6kxa_panel_any,
                      q6kxa_fill_ibm);
}

const pw__kernel PW__AVX2_SYM(pw__k_q6_k_ibm_gemm) = PW__TILE32_IBM_GEMM_KERNEL(
    "q6_k", PW_FORMAT_Q6_K, Q8_256, PW__AVX2_ISA, PW__AVX2_FEATURES(PW_CPU_AVX2 | PW_CPU_FMA | PW_CPU_F16C), q6kxa_ibm_gemm_run,
    PW__AVX2_PRIO + PW__PRIO_GEMM - 1, Q6KXA_MR);

/*
 * ---- Q3_K: the q3kx32k4 family (kernel/q3kx.h) ----
 *
 * The same levels and loops over Q3_K's records, the bytes the AVX-512 kernels read.
 * Half h of a sub-block's loads P_k (bytes 32h..32h + 31) holds rows 8h..8h + 7 (low
 * nibbles) and 16 + 8h.. (high); step u < 3 is P_u, step 3 gathered from the loads' top
 * bits, (P_0 >> 3 & 0x11) | (P_1 >> 2 & 0x22) | (P_2 >> 1 & 0x44) (8 ops, its bits 3 and
 * 7 clear), then A = q & 7 (row 8h + lane), B = q >> 4 & 7 (row 16 + 8h + lane), the
 * unsigned quants (0..7) of a dot against the activation bytes a_u, the -4 offset once
 * per sub-block from x.bsums[s]:
 *
 *   AVX-VNNI  D = -4 bsums[s] + sum of 4 steps dpbusd(A, a_u) (B likewise),
 *             S += D * (scale - 32) (vpmulld).
 *   AVX2      vpmaddubsw pairs within 2 * 7 * 128 = 1792, the four steps summed in
 *             int16 (7168) with -2 bsums[s] added to both halves of each lane
 *             (|bsums| <= 2032: within 11232, exact), then vpmaddwd against the
 *             scale in both halves: S += (w.lo + w.hi) * (scale - 32).
 *
 * |D| <= 16 * 4 * 127 = 8128, |S| <= 16 * 32 * 8128 < 2^23. The GEMV reads a record in
 * address order, each sub-block's 4 sums kept (2 KiB, L1), then the scales (decoded for
 * 32 rows at once, q3kxa_scales) and d. The GEMM's decode joins the record into the
 * Q6_K GEMM's form (q6kxa_rec: w = q - 4 in [-4, 3], the scales in each level's form,
 * corr), so q6kxa_panel runs it as it is: |D| there <= 16 * 255 * 4, the AVX2 two-step
 * int16 sums within 2 * 2 * 255 * 4 = 4080.
 *
 * packwise bench --formats Q3_K --shapes 11008x4096 --batch 1,128 --threads 1, an AMD
 * EPYC VM (2 vCPUs shared with other jobs, one run each), row-major (--policy in_place)
 * -> these kernels: avxvnni GEMV 33.0% -> 72.5% of the read, GEMM 14.4% -> 66.9% of the
 * level's int8 peak; avx2 32.5% -> 64.3%, 16.8% -> 65.3%. Not tuned further (streams,
 * the x16 activation loads, two rows per pass): the Q6_K kernels' measurements say
 * where to look.
 */

/* Step 3 of half a sub-block from its loads p0, p1, p2 (kernel/q3kx.h): bit k of each
 * nibble's quant is bit 3 of that nibble of p_k; the 16-bit shifts move bits across a
 * byte boundary only into positions the masks drop. */
Q6KXA_INLINE __m256i q3kxa_step3(__m256i p0, __m256i p1, __m256i p2) {
    return _mm256_or_si256(
        _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(p0, 3), _mm256_set1_epi8(0x11)),
                        _mm256_and_si256(_mm256_srli_epi16(p1, 2), _mm256_set1_epi8(0x22))),
        _mm256_and_si256(_mm256_srli_epi16(p2, 1), _mm256_set1_epi8(0x44)));
}

/* The 16 scales (stored value - 32, int8) of a record's 32 rows, from their packed bytes
 * (q3kx.h: byte i of row r at 192 (r / 16) + 16 i + r % 16): out[256 (r / 16) + 16 j +
 * r % 16] = scale j of row r. Quarter q (scales 4q .. 4q + 3) takes the low nibbles of
 * bytes 0..3 (q = 0) or 4..7 (q = 1), their high nibbles (q = 2, 3), and bits 2q, 2q + 1
 * of bytes 8..11 as bits 4-5 (pw__q3k_unpack_scales). */
Q6KXA_INLINE void q3kxa_scales(const uint8_t *rec, int8_t *out) {
    const __m256i m0f = _mm256_set1_epi8(0x0F), m30 = _mm256_set1_epi8(0x30),
                  c32 = _mm256_set1_epi8(32);
    for (int h = 0; h < 2; ++h)
        for (int v = 0; v < 2; ++v) {
            const uint8_t *p = rec + PW__Q3KX_SCALES + 192 * h + 32 * v;
            const __m256i l0 = _mm256_loadu_si256((const __m256i *)p),
                          l1 = _mm256_loadu_si256((const __m256i *)(p + 64)),
                          hb = _mm256_loadu_si256((const __m256i *)(p + 128));
            const __m256i lo[4] = {l0, l1, _mm256_srli_epi16(l0, 4), _mm256_srli_epi16(l1, 4)};
            const __m256i hi[4] = {_mm256_slli_epi16(hb, 4), _mm256_slli_epi16(hb, 2), hb,
                                   _mm256_srli_epi16(hb, 2)};
            for (int q = 0; q < 4; ++q) {
                const __m256i sc = _mm256_or_si256(_mm256_and_si256(lo[q], m0f),
                                                   _mm256_and_si256(hi[q], m30));
                _mm256_storeu_si256((__m256i *)(out + 256 * h + 64 * q + 32 * v),
                                    _mm256_sub_epi8(sc, c32));
            }
        }
}

/* The scales of sub-block s, rows 8q..8q+7, in q3kxa_scales' out. */
Q6KXA_INLINE const int8_t *q3kxa_sc_at(const int8_t *sc, int s, int q) {
    return sc + 256 * (q / 2) + 16 * s + 8 * (q % 2);
}

/* Steps 0..3 of half h of a sub-block: the quants of rows 8h + lane in qa[u], of rows
 * 16 + 8h + lane in qb[u]. */
Q6KXA_INLINE void q3kxa_join(const uint8_t *sub, int h, __m256i qa[4], __m256i qb[4]) {
    const __m256i m07 = _mm256_set1_epi8(0x07);
    __m256i p[4];
    for (int k = 0; k < 3; ++k) p[k] = _mm256_loadu_si256((const __m256i *)(sub + 64 * k + 32 * h));
    p[3] = q3kxa_step3(p[0], p[1], p[2]);
    for (int u = 0; u < 4; ++u) {
        qa[u] = _mm256_and_si256(p[u], m07);
        qb[u] = _mm256_and_si256(_mm256_srli_epi16(p[u], 4), m07);
    }
}

/* GEMV record function (tile32_avx2.h): the file's comment above. */
Q6KXA_INLINE void q3kxa_block(const uint8_t *rec, const uint8_t *xbp, int pf, __m256 acc[4]) {
    const pw__q8_256 *xb = (const pw__q8_256 *)xbp;
    __m256i t[16][4]; /* [sub-block][rows 8q..8q+7]: D (AVX-VNNI) or the int16 sums (AVX2) */
#pragma GCC unroll 1
    for (int s = 0; s < 16; ++s) {
        const uint8_t *sub = rec + PW__Q3KX_SUB * s;
        if (pf) pw__tile32_prefetch_pf(sub, PW__Q3KX_SUB, pf);
        const int8_t *xs = xb->qs + 16 * s;
        __m256i a[4];
        for (int u = 0; u < 4; ++u) a[u] = pw__t32a_bcast4(xs + 4 * u);
#pragma GCC unroll 2
        for (int h = 0; h < 2; ++h) {
            __m256i qa[4], qb[4];
            q3kxa_join(sub, h, qa, qb);
            if (PW__VNNI) {
                __m256i da = _mm256_set1_epi32(-4 * xb->bsums[s]), db = da;
                for (int u = 0; u < 4; ++u) {
                    da = pw__dpbusd(da, qa[u], a[u]);
                    db = pw__dpbusd(db, qb[u], a[u]);
                }
                t[s][h] = da;
                t[s][2 + h] = db;
            } else {
                const __m256i off = _mm256_set1_epi16((int16_t)(-2 * xb->bsums[s]));
                __m256i wa = off, wb = off;
                for (int u = 0; u < 4; ++u) {
                    wa = _mm256_add_epi16(wa, _mm256_maddubs_epi16(qa[u], a[u]));
                    wb = _mm256_add_epi16(wb, _mm256_maddubs_epi16(qb[u], a[u]));
                }
                t[s][h] = wa;
                t[s][2 + h] = wb;
            }
        }
    }
    if (pf) pw__tile32_prefetch_pf(rec + PW__Q3KX_SCALES, PW__Q3KX_RECORD - PW__Q3KX_SCALES, pf);
    _Alignas(32) int8_t sc[512];
    q3kxa_scales(rec, sc);
    __m256i sum[4];
    for (int q = 0; q < 4; ++q) sum[q] = _mm256_setzero_si256();
#pragma GCC unroll 2
    for (int s = 0; s < 16; ++s)
        for (int q = 0; q < 4; ++q) {
            const int8_t *p = q3kxa_sc_at(sc, s, q);
            sum[q] = _mm256_add_epi32(sum[q], PW__VNNI
                                                  ? _mm256_mullo_epi32(t[s][q], q6kxa_sc32_at(p))
                                                  : _mm256_madd_epi16(t[s][q], q6kxa_sc16_at(p)));
        }
    const __m256 xd = _mm256_set1_ps(xb->d);
#pragma GCC unroll 4
    for (int q = 0; q < 4; ++q)
        acc[q] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sum[q]),
                                 _mm256_mul_ps(pw__t32a_f16x8(rec + PW__Q3KX_D + 16 * q), xd),
                                 acc[q]);
}

/* One stream, as Q4_K's GEMV (tile32_avx2.h); Zen 4 leaves it to its prefetcher. */
static void q3kxa_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    pw__t32a_run(c, o0, o1, i0, i1, 256, PW__Q3KX_RECORD, sizeof(pw__q8_256), q3kxa_block, 1,
                 PW__HW_ZEN4);
}

/* A Q3_K record joined into the Q6_K GEMM's form (q6kxa_rec, q6kxa_decode): w = q - 4. */
static void q3kxa_decode(const uint8_t *rec, void *out) {
    q6kxa_rec *rs = out;
    __m256i *jn = rs->joined;
    _Alignas(32) int8_t sc8[512];
    q3kxa_scales(rec, sc8);
    const __m256i c4 = _mm256_set1_epi8(4), one8 = _mm256_set1_epi8(1);
    __m256i corr[4] = {_mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256(),
                       _mm256_setzero_si256()};
    for (int s = 0; s < 16; ++s, jn += 16) {
        __m256i w[4][4]; /* [q][step] */
        for (int h = 0; h < 2; ++h) {
            __m256i qa[4], qb[4];
            q3kxa_join(rec + PW__Q3KX_SUB * s, h, qa, qb);
            for (int u = 0; u < 4; ++u) {
                w[h][u] = _mm256_sub_epi8(qa[u], c4);
                w[2 + h][u] = _mm256_sub_epi8(qb[u], c4);
            }
        }
        for (int q = 0; q < 4; ++q) {
            /* sum of the 16 values q - 4 of each row: |.| <= 64, int16 exact */
            __m256i ws = _mm256_setzero_si256();
            for (int u = 0; u < 4; ++u) {
                _mm256_store_si256(jn + 4 * q + u, w[q][u]);
                ws = _mm256_add_epi16(ws, _mm256_maddubs_epi16(one8, w[q][u]));
            }
            const int8_t *p = q3kxa_sc_at(sc8, s, q);
            if (PW__VNNI) {
                const __m256i sc = q6kxa_sc32_at(p);
                _mm256_store_si256((__m256i *)rs->sc[s][q], sc);
                ws = _mm256_madd_epi16(ws, _mm256_set1_epi16(1));
                corr[q] = _mm256_add_epi32(corr[q], _mm256_mullo_epi32(ws, sc));
            } else {
                const __m256i sc = q6kxa_sc16_at(p);
                _mm256_store_si256((__m256i *)rs->sc[s][q], sc);
                corr[q] = _mm256_add_epi32(corr[q], _mm256_madd_epi16(ws, sc));
            }
        }
    }
    for (int q = 0; q < 4; ++q) {
        _mm256_store_si256((__m256i *)rs->corr[q],
                           _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(corr[q], 7)));
        _mm256_store_ps(rs->d + 8 * q, pw__t32a_f16x8(rec + PW__Q3KX_D + 16 * q));
    }
}

Q6KXA_PANEL_ANY(q3kxa_panel_any, PW__Q3KX_RECORD)

static void q3kxa_gemm_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    pw__t32k_run(c, o0, o1, i0, i1, PW__Q3KX_RECORD, Q6KXA_MR, q3kxa_decode, q3kxa_panel_any);
}

const pw__kernel PW__AVX2_SYM(pw__k_q3_k_q3kx32k4) =
    PW__Q3KX_KERNEL(PW__AVX2_ISA, PW__AVX2_FEATURES(PW_CPU_AVX2 | PW_CPU_FMA | PW_CPU_F16C),
                    q3kxa_run, PW__AVX2_PRIO + 2);

const pw__kernel PW__AVX2_SYM(pw__k_q3_k_q3kx32k4_gemm) = PW__Q3KX_GEMM_KERNEL(
    PW__AVX2_ISA, PW__AVX2_FEATURES(PW_CPU_AVX2 | PW_CPU_FMA | PW_CPU_F16C), q3kxa_gemm_run,
    PW__AVX2_PRIO + PW__PRIO_GEMM - 1, Q6KXA_MR);

/* GEMM over input-block-major Q3_K bytes as they are: the loop above over records made
 * one at a time from a column's blocks (pw__q3kx_record_from_blocks, portable C). */
PW__TILE32_IBM_FILL(q3kxa_fill_ibm, pw__block_q3_K, PW__Q3KX_RECORD, pw__q3kx_record_from_blocks)

static void q3kxa_ibm_gemm_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    pw__t32k_run_fill(c, o0, o1, i0, i1, PW__Q3KX_RECORD, Q6KXA_MR, q3kxa_decode, q3kxa_panel_any,
                      q3kxa_fill_ibm);
}

const pw__kernel PW__AVX2_SYM(pw__k_q3_k_ibm_gemm) = PW__TILE32_IBM_GEMM_KERNEL(
    "q3_k", PW_FORMAT_Q3_K, Q8_256, PW__AVX2_ISA, PW__AVX2_FEATURES(PW_CPU_AVX2 | PW_CPU_FMA | PW_CPU_F16C), q3kxa_ibm_gemm_run,
    PW__AVX2_PRIO + PW__PRIO_GEMM - 1, Q6KXA_MR);
