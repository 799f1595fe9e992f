#if !defined(__AVX512F__) || !defined(__AVX512BW__) || !defined(__AVX512VL__) ||            \
    !defined(__AVX512VNNI__) || !defined(__F16C__)
#error "q4x_avx512.c needs AVX-512 F/BW/VL/VNNI and F16C (the build sets them for *_avx512.c)"
#endif
/*
 * AVX-512 VNNI GEMV over the q4x32k4 family (layout in kernel/q4x.h): Q4_0
 * with its nibbles rearranged so that one 64-byte load is one 4-value k step
 * of all 32 rows of a tile. Activations are pw__q8_32 rows; y[i, o] for o in
 * [o0, o1), i in [i0, i1) (n > 1 repeats the tile per row of X: GEMM speed
 * comes from the i8g kernels).
 *
 * One block record (576 bytes) of a tile, one row of X, c = -8 * x.sum:
 *
 *   v_s = bytes [64s, 64s + 64)      s = 0..7; lane r: rows r (lo), r+16 (hi)
 *   a_s = bcast(x.qs[4s .. 4s+3])
 *   lo  = c      + sum_s dpbusd(v_s & 0x0F, a_s)    rows 0..15, offset included
 *   all = 17 c   + sum_s dpbusd(v_s, a_s)           q[r] + 16 q[r+16], unmasked
 *   hi  = (all - lo) >> 4                           rows 16..31: exact, a multiple of 16
 *   acc_lo += f32(lo) * f32(d[0..15]) * x.d,  acc_hi += f32(hi) * f32(d[16..31]) * x.d
 *
 * Taking the high nibbles unmasked and subtracting is why a tile has 32 rows:
 * each 64-byte load costs one mask and two dot products, and the scale work
 * is per 16 rows. About 38 vector instructions per record (32 blocks of the
 * file) where a 16-row tile with a mask per nibble needs 48 and the row-major
 * kernel about 90: a cold GEMV is a stream from memory that the core must keep
 * up with, and arithmetic time per byte shows in it even when the weight is
 * far from the caches. Integer range: |all| <= 32 * 255 * 128 + 136 * 32 * 128.
 *
 * Rows past `out` in the last tile are zero in the packed bytes; their lanes
 * are computed and not stored (masked stores), so edge tiles take the same path.
 *
 * Tiles lie one after another, so a thread's range is one linear stream. Each
 * record prefetches its lines further on (pw__tile32_prefetch: tile32_prefetch.h
 * gives the distance and the measurements that chose it; on an earlier session's machine, L2
 * 16 KiB + L1 2 KiB measured best, 1.53-1.59 ms against 1.59-1.66 for L2 alone). *
 * Q5_0 (q5x32k4, kernel/q5x.h: a record of this family followed by bit 4 in two
 * 64-byte planes, 704 bytes) and IQ4_NL (iq4x32k4, kernel/iq4x.h: this family's
 * record, each nibble a codebook index) run the same code with a constant format
 * (PW__Q4X_*): both nibbles masked, then Q5_0's bit s of the planes added as 16
 * (vptestmb and a masked vpaddb) with the offset -16, or IQ4_NL's nibbles through the
 * codebook + 128 (vpshufb) with the offset -128: two vpdpbusd a step, no whole-byte
 * trick (a 5-bit or 8-bit value does not fit beside another in a byte).
 * Q4_1 and Q5_1 (q41x32k4, q51x32k4, kernel/q41x.h: a record of this family or of
 * q5x32k4, then the rows' fp16 m) run Q4_0's and Q5_0's code with no offset, then one
 * more fma per 16 rows and block: acc += f32(m) * x.dsum.
 */
#include "format/blocks.h"
#include "kernel/iq4x.h"
#include "kernel/q41x.h"
#include "kernel/q4x.h"
#include "kernel/q5x.h"
#include "kernel/x86/tile32_avx512.h"

#define Q4X_INLINE static inline __attribute__((always_inline))

/* The integer dots of record rec with activation block xb: *lo (rows 0..15, offset
 * included) and *hi (rows 16..31), as the file's comment gives them. */
Q4X_INLINE void q4x_dots(const uint8_t *rec, const pw__q8_32 *xb, __m512i *lo, __m512i *hi,
                         const int f) {
    const __m512i m_lo = _mm512_set1_epi8(0x0F), c16 = _mm512_set1_epi8(16);
    if (f != PW__Q4X_Q4_0 && f != PW__Q4X_Q4_1) {
        /* Q5_0, Q5_1 (q5x.h): both nibbles masked, 16 added under the planes' bit s,
         * offset -16 (Q5_0) or none; IQ4_NL (iq4x.h): both nibbles through the codebook
         * + 128 (vpshufb), offset -128 */
        const int q5 = PW__Q4X_BIT4(f);
        const int32_t c = (q5 ? PW__Q4X_OFFSET(f) : -128) * xb->sum;
        const __m512i pl = q5 ? _mm512_loadu_si512(rec + PW__Q5X_BITS) : m_lo;
        const __m512i ph = q5 ? _mm512_loadu_si512(rec + PW__Q5X_BITS + 64) : m_lo;
        const __m512i book = _mm512_broadcast_i32x4(_mm_add_epi8(
            _mm_loadu_si128((const __m128i *)pw__iq4nl_values), _mm_set1_epi8((char)0x80)));
        __m512i l = _mm512_set1_epi32(c), h = l;
#pragma GCC unroll 8
        for (int s = 0; s < 8; ++s) {
            const __m512i v = _mm512_loadu_si512(rec + 64 * s);
            const __m512i a = pw__tile32_bcast4(xb->qs + 4 * s);
            __m512i vl = _mm512_and_si512(v, m_lo);
            __m512i vh = _mm512_and_si512(_mm512_srli_epi16(v, 4), m_lo);
            if (q5) {
                const __m512i bit = _mm512_set1_epi8((char)(1 << s));
                vl = _mm512_mask_add_epi8(vl, _mm512_test_epi8_mask(pl, bit), vl, c16);
                vh = _mm512_mask_add_epi8(vh, _mm512_test_epi8_mask(ph, bit), vh, c16);
            } else {
                vl = _mm512_shuffle_epi8(book, vl);
                vh = _mm512_shuffle_epi8(book, vh);
            }
            l = _mm512_dpbusd_epi32(l, vl, a);
            h = _mm512_dpbusd_epi32(h, vh, a);
        }
        *lo = l;
        *hi = h;
        return;
    }
    const int32_t c = PW__Q4X_OFFSET(f) * xb->sum; /* Q4_0's -8, Q4_1's none */
    __m512i l = _mm512_set1_epi32(c), all = _mm512_set1_epi32(17 * c);
#pragma GCC unroll 8
    for (int s = 0; s < 8; ++s) {
        const __m512i v = _mm512_loadu_si512(rec + 64 * s);
        const __m512i a = pw__tile32_bcast4(xb->qs + 4 * s);
        l = _mm512_dpbusd_epi32(l, _mm512_and_si512(v, m_lo), a);
        all = _mm512_dpbusd_epi32(all, v, a);
    }
    *lo = l;
    *hi = _mm512_srai_epi32(_mm512_sub_epi32(all, l), 4);
}

/* One record with one pw__q8_32 activation block (the record function of
 * tile32_avx512.h): prefetches its own bytes further on, then its dots. */
Q4X_INLINE void q4x_block_any(const uint8_t *rec, const uint8_t *xbp, int pf, __m512 acc[2],
                              const int f) {
    const pw__q8_32 *xb = (const pw__q8_32 *)xbp;
    if (pf) pw__tile32_prefetch_near_pf(rec, PW__Q4X_RECORD_OF(f), pf);
    __m512i lo, hi;
    q4x_dots(rec, xb, &lo, &hi, f);
    pw__tile32_scale_add(acc, lo, hi, rec + PW__Q4X_SCALES, xb->d);
    if (PW__Q4X_MIN(f)) pw__tile32_min_add(acc, rec + PW__Q4X_RECORD_OF(f) - 64, xb->dsum);
}
Q4X_INLINE void q4x_block(const uint8_t *rec, const uint8_t *xbp, int pf, __m512 acc[2]) {
    q4x_block_any(rec, xbp, pf, acc, PW__Q4X_Q4_0);
}
Q4X_INLINE void q5x_block(const uint8_t *rec, const uint8_t *xbp, int pf, __m512 acc[2]) {
    q4x_block_any(rec, xbp, pf, acc, PW__Q4X_Q5_0);
}
Q4X_INLINE void iq4x_block(const uint8_t *rec, const uint8_t *xbp, int pf, __m512 acc[2]) {
    q4x_block_any(rec, xbp, pf, acc, PW__Q4X_IQ4_NL);
}
Q4X_INLINE void q41x_block(const uint8_t *rec, const uint8_t *xbp, int pf, __m512 acc[2]) {
    q4x_block_any(rec, xbp, pf, acc, PW__Q4X_Q4_1);
}
Q4X_INLINE void q51x_block(const uint8_t *rec, const uint8_t *xbp, int pf, __m512 acc[2]) {
    q4x_block_any(rec, xbp, pf, acc, PW__Q4X_Q5_1);
}

/* Eight records of a tile (a group: 256 values of the row) with the eight activation
 * blocks after xbp, the record function of the grouped loop: each record's dots as
 * q4x_block's (its nine lines prefetched pw__tile32_prefetch's distance on, into L1 on
 * Zen 5), all eight kept, then their scale steps in record order, so acc sees the same
 * operations in the same order as eight calls of q4x_block: the same bits. */
Q4X_INLINE void q4x_group_any(const uint8_t *rec, const uint8_t *xbp, int pf, __m512 acc[2],
                              const int f) {
    const pw__q8_32 *xb = (const pw__q8_32 *)xbp;
    const int rb = PW__Q4X_RECORD_OF(f);
    __m512i lo[8], hi[8];
#pragma GCC unroll 8
    for (int j = 0; j < 8; ++j) {
        if (pf) pw__tile32_prefetch_pf(rec + rb * j, rb, pf);
        q4x_dots(rec + rb * j, xb + j, &lo[j], &hi[j], f);
    }
#pragma GCC unroll 8
    for (int j = 0; j < 8; ++j) {
        pw__tile32_scale_add(acc, lo[j], hi[j], rec + rb * j + PW__Q4X_SCALES, xb[j].d);
        if (PW__Q4X_MIN(f)) pw__tile32_min_add(acc, rec + rb * j + rb - 64, xb[j].dsum);
    }
}
Q4X_INLINE void q4x_group(const uint8_t *rec, const uint8_t *xbp, int pf, __m512 acc[2]) {
    q4x_group_any(rec, xbp, pf, acc, PW__Q4X_Q4_0);
}
Q4X_INLINE void q5x_group(const uint8_t *rec, const uint8_t *xbp, int pf, __m512 acc[2]) {
    q4x_group_any(rec, xbp, pf, acc, PW__Q4X_Q5_0);
}
Q4X_INLINE void iq4x_group(const uint8_t *rec, const uint8_t *xbp, int pf, __m512 acc[2]) {
    q4x_group_any(rec, xbp, pf, acc, PW__Q4X_IQ4_NL);
}
Q4X_INLINE void q41x_group(const uint8_t *rec, const uint8_t *xbp, int pf, __m512 acc[2]) {
    q4x_group_any(rec, xbp, pf, acc, PW__Q4X_Q4_1);
}
Q4X_INLINE void q51x_group(const uint8_t *rec, const uint8_t *xbp, int pf, __m512 acc[2]) {
    q4x_group_any(rec, xbp, pf, acc, PW__Q4X_Q5_1);
}

/* Zen 4 streams these records without software prefetch (hw = 1, tile32_avx512.h).
 *
 * Streams: four, on Zen 5 too, where the bench's single GEMV case (its weight flushed
 * with clflush before each call) reads faster with fewer and a decode step reads slower.
 * An AMD EPYC Zen 5 VM (2 vCPUs, shared), one scratch build choosing at run time:
 *   packwise bench --formats Q4_0,Q8_0,QC4W --shapes 11008x4096,4096x4096 --batch 1
 *   --threads 1,2, the choices in turn, fraction of the read, 1 thread / 2 threads:
 *   Q4_0 [11008, 4096] four 79-91 / 83-90%, two 87-95 / 83-95, one 93-99 / 87-102;
 *        [4096, 4096]  four 75-83 / 72-79,  two 85-88 / 76-92, one 93-97 / 87-95;
 *   Q8_0 four 66-81 / 69-86, two 78-89 / 73-93, one 81-87 / 75-91 (both shapes);
 *   QC4W (qc4w_gemm_avx512.c, four streams) four 81-95 / 72-89, one 93-99 / 84-97.
 *   packwise bench --step --threads 1,2 (8 layers of a 7B-shaped layer, about 0.9 GiB at
 *   Q4_0, each weight read again one token later, not flushed; a scratch bench timing
 *   the two choices in alternate tokens of one run, layer time in us), 1 thread / 2:
 *   Q4_0 four 3442-3479 / 2145-2263 against two 4055-4182 / 2367-2390, one 4619-5667 /
 *        2424-2664 against two or four 4047-4252 / 2228-2300;
 *   Q8_0 four 6616-7263 / 3891-4253 against two 6985-7325 / 3887-4158;
 *   QC4W four 2987-3165 / 1797-1923 against two 3298-3383 / 1835-1880, one 4117-5074.
 * The step is what a user's decode reads, so it decides (the notes in bench.h on the
 * ways of reading: a flushed buffer reads fastest as one stream on Zen 5, one read again
 * after the rest of a large model as several). Leaving the streams to the hardware there
 * as on Zen 4 read above the per-case ceiling in several rounds (fractions 1.01-1.06)
 * and lower in others; Q4_K and Q6_K read 55-76% without software prefetch against
 * 87-100 with it, and the AVX2 level's Q4_0 and Q8_0 lost 5-30 points without it: Zen 5
 * keeps the prefetch.
 *
 * On Zen 5, rows whose length is a multiple of 256 are now read in groups of eight
 * records (q4x_group: a Q4_K record's shape, 4608 bytes, the scale steps after the eight
 * records' dots) as one stream prefetched 8 KiB on, as the K-quant GEMVs read: a pure
 * read in that shape streamed 608.7 MB of packed weights at 0.97-1.08 of the Q4_K GEMV's
 * speed where four interleaved streams of 576-byte records read at 0.7-0.9 of it
 * (tools/bench.h). In a scratch program over 24 [11008, 4096] Q4_0 weights' packed
 * forms, 1 thread, nine rounds, median GB/s: grouped 37.8 and 38.6 against 30.7 and
 * 34.1 for this loop (four streams 2 KiB ahead) and 26.6 and 27.4 for one stream of
 * single records 8 KiB ahead. In the bench, one build switching at run time, five rounds
 * of packwise bench --step --formats Q4_0 --threads 1,2 and of --formats Q4_0 --shapes
 * 11008x4096,4096x4096 --batch 1 --threads 1,2, each choice in turn, weight GB/s
 * (grouped against four streams, round by round): the step 31.3 39.0 35.3 34.1 33.8
 * against 32.8 36.9 34.1 30.9 30.1 on 1 thread, 67.5 44.4 65.8 65.6 60.1 against 55.6
 * 66.9 60.2 55.5 54.6 on 2; [11008, 4096] 2 threads 65.9 45.2 61.0 63.3 55.2 against
 * 34.3 61.6 53.4 55.7 54.5; 1 thread alike (40.5 39.7 35.9 35.0 32.2 against 32.9 41.7
 * 36.5 39.0 33.6); [4096, 4096] on 1 thread lower (38.3 40.6 34.3 34.2 31.4 against 32.6
 * 42.9 38.4 39.4 37.6). The step decides, as above. Groups read as four streams were far
 * slower (0.50-0.73 of the ceiling). Other row lengths keep the four streams. */
/* A family's GEMV run as above over records of record_ bytes (pre_##_group,
 * pre_##_block) and its descriptor, sym_ naming the kernel (q4_0_q4x32k4 ->
 * q4_0_q4x32k4_avx512vnni). */
#define Q4X_FAMILY(pre_, sym_, record_, KERNEL_)                                              \
    static void pre_##_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0,         \
                           int64_t i1) {                                                     \
        if (c->pack_desc->in % 256 == 0 && __atomic_load_n(&pw__x86_zen5, __ATOMIC_RELAXED)) \
            pw__tile32_run(c, o0, o1, i0, i1, 256, 8 * (record_), 8 * sizeof(pw__q8_32),      \
                           pre_##_group, 1, PW__HW_ZEN4);                                    \
        else                                                                                 \
            pw__tile32_run(c, o0, o1, i0, i1, 32, record_, sizeof(pw__q8_32), pre_##_block,  \
                           4, PW__HW_ZEN4);                                                  \
    }                                                                                        \
    const pw__kernel pw__k_##sym_##_avx512vnni = KERNEL_(                                    \
        "avx512vnni", PW_CPU_AVX512F | PW_CPU_AVX512BW | PW_CPU_AVX512VL | PW_CPU_AVX512VNNI, \
        pre_##_run, PW__PRIO_AVX512 + 2);

Q4X_FAMILY(q4x, q4_0_q4x32k4, PW__Q4X_RECORD, PW__Q4X_KERNEL)
/* Q5_0's records (q5x.h) and IQ4_NL's (iq4x.h), read as Q4_0's are. */
Q4X_FAMILY(q5x, q5_0_q5x32k4, PW__Q5X_RECORD, PW__Q5X_KERNEL)
Q4X_FAMILY(iq4x, iq4_nl_iq4x32k4, PW__Q4X_RECORD, PW__IQ4X_KERNEL)
/* Q4_1's and Q5_1's (q41x.h): Q4_0's and Q5_0's with no offset, then the rows' m. */
Q4X_FAMILY(q41x, q4_1_q41x32k4, PW__Q41X_RECORD, PW__Q41X_KERNEL)
Q4X_FAMILY(q51x, q5_1_q51x32k4, PW__Q51X_RECORD, PW__Q51X_KERNEL)
