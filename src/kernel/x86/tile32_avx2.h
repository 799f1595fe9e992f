/*
 * The loops every AVX2 / AVX-VNNI kernel of a 32-row tiling runs (kernel/tile32.h):
 * the AVX-512 kernels' loops (tile32_avx512.h, tile32_gemm_avx512.h) at 256 bits,
 * over the same packed bytes. A family's *_avx2.c file includes avx2_level.h,
 * then this header, and brings only its record functions:
 *
 * GEMV   block(rec, xb, pf, acc): acc[q] (rows 8q .. 8q+7 of the tile, q = 0..3) +=
 *        the f32 dots of record rec with activation block xb; pf is nonzero where
 *        rec + pw__tile32_ahead() + a record is still inside the packed buffer, so the
 *        function may prefetch its share of the stream that far ahead: it is then the
 *        call's prefetch settings, read once (pw__tile32_pf_code), which the function
 *        passes to pw__tile32_prefetch_pf (tile32_prefetch.h).
 *
 * GEMM   block(rec, x, acc, mr): kernel/tile32_gemm.h's loop (f32 sums in an L1
 *        buffer: with 16 ymm registers the 32 sums of a row do not stay in
 *        registers beside the record's unpacked bytes and integer dots).
 *
 * Both loops are always inlined into the kernel with a constant block function,
 * which the compiler inlines in turn: no call per record. Rows past `out` in the
 * last tile are zero in the packed bytes; their lanes are computed and not stored.
 */
#ifndef PACKWISE_KERNEL_X86_TILE32_AVX2_H
#define PACKWISE_KERNEL_X86_TILE32_AVX2_H

#include "kernel/tile32.h"
#include "kernel/tile32_gemm.h"
#include "kernel/x86/avx2_level.h"
#include "kernel/x86/tile32_prefetch.h"

#include <immintrin.h>
#include <stdint.h>
#include <string.h>

#define PW__T32A_INLINE static inline __attribute__((always_inline))

/* The running sum v as it stands, in a register: GCC reassociates a chain of integer
 * vector adds over an unrolled loop into a tree, computing every product of the
 * record first and spilling them to the stack (the AVX2 Q4_0 GEMM kernel stored 64
 * products a record that way and ran at 37% of the int8 peak). An empty asm that
 * takes and gives v back pins the chain's order. */
#define PW__T32A_KEEP(v) __asm__("" : "+x"(v))

/* Four activation bytes (one dword) broadcast to every int32 lane: vbroadcastss from
 * memory, a load-port operation (set1 of an int32 costs a vmovd and a shuffle). */
PW__T32A_INLINE __m256i pw__t32a_bcast4(const int8_t *p) {
    return _mm256_castps_si256(_mm256_broadcast_ss((const float *)(const void *)p));
}

/* The 5-bit families (q5x32k4, q5kx32k4: kernel/q5x.h, q5kx.h): bit u of each byte of a
 * bit plane x as 16 (bit 4), nothing else; the 16-bit shifts move no other byte's bit
 * to bit 4 of a byte. */
PW__T32A_INLINE __m256i pw__t32a_bit16(__m256i x, int u) {
    const __m256i m10 = _mm256_set1_epi8(0x10);
    if (u < 4) x = _mm256_slli_epi16(x, 4 - u);
    if (u > 4) x = _mm256_srli_epi16(x, u - 4);
    return _mm256_and_si256(x, m10);
}

/* Sixteen activation bytes at p in both 128-bit lanes: one load, from which
 * pw__t32a_dword broadcasts each of its four dwords with a vpshufd, where four
 * vbroadcastss would take four load slots (the AVX-VNNI Q4_K and Q6_K GEMVs on Zen 5:
 * q4kx_avx2.c's q4kxa_run has the measurements). */
PW__T32A_INLINE __m256i pw__t32a_bcast16(const int8_t *p) {
    return _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(const void *)p));
}

/* Dword u (0..3, a constant once unrolled) of each 128-bit lane of v in every lane. */
PW__T32A_INLINE __m256i pw__t32a_dword(__m256i v, int u) {
    switch (u) {
    case 0: return _mm256_shuffle_epi32(v, 0x00);
    case 1: return _mm256_shuffle_epi32(v, 0x55);
    case 2: return _mm256_shuffle_epi32(v, 0xAA);
    default: return _mm256_shuffle_epi32(v, 0xFF);
    }
}

/* Eight fp16 scales at p as f32. */
PW__T32A_INLINE __m256 pw__t32a_f16x8(const uint8_t *p) {
    return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p));
}

/* Prefetch bytes [p, p + bytes) into L2 (hint T1), a line at a time. */
PW__T32A_INLINE void pw__t32a_prefetch_l2(const uint8_t *p, int bytes) {
    for (int l = 0; l < bytes; l += 64) _mm_prefetch((const char *)(p + l), _MM_HINT_T1);
}

/* Prefetch bytes [p, p + bytes) into L1 (hint T0), a line at a time. */
PW__T32A_INLINE void pw__t32a_prefetch_l1(const uint8_t *p, int bytes) {
    for (int l = 0; l < bytes; l += 64) _mm_prefetch((const char *)(p + l), _MM_HINT_T0);
}

/* Store the first `rows` (0..32) of the 32 values of acc[0..3] at y. */
PW__T32A_INLINE void pw__t32a_store(float *y, const __m256 acc[4], int rows) {
    if (rows == 32) {
        for (int q = 0; q < 4; ++q) _mm256_storeu_ps(y + 8 * q, acc[q]);
        return;
    }
    float t[32];
    for (int q = 0; q < 4; ++q) _mm256_storeu_ps(t + 8 * q, acc[q]);
    memcpy(y, t, sizeof(float) * (size_t)rows);
}

/* ---- GEMV ---- */

typedef void (*pw__t32a_block_fn)(const uint8_t *rec, const uint8_t *xb, int pf, __m256 acc[4]);

/* y[i, o] for o in [o0, o1), i in [i0, i1): records of record_bytes, one per
 * activation block of xb_bytes (block_values k values each). The range's tiles are
 * read as `streams` (1 or 2, a constant: 2 x 4 accumulators of 16 registers) contiguous
 * parts at once, a record of each in turn, as the AVX-512 loop does
 * (tile32_avx512.h); `hw` as there: the CPUs (PW__HW_* mask) on which the family's
 * records are left to the hardware prefetcher. */
PW__T32A_INLINE void pw__t32a_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0,
                                  int64_t i1, int64_t block_values, uint64_t record_bytes,
                                  size_t xb_bytes, pw__t32a_block_fn block, const int S,
                                  const int hw) {
    const int64_t nb = c->pack_desc->in / block_values;
    const uint64_t ahead = pw__tile32_ahead(hw);
    const int pfc = pw__tile32_pf_code();
    const pw__streams p = pw__tile32_streams_begin(c, o0, o1, S);
    for (int64_t j = 0; j < p.per; ++j) {
        pw__streams_step st;
        pw__streams_at(&p, j, &st);
        for (int64_t i = i0; i < i1; ++i) {
            const uint8_t *x = c->xq + (uint64_t)i * c->xq_row_bytes;
            __m256 acc[2][4];
            for (int s = 0; s < 2; ++s)
                for (int q = 0; q < 4; ++q) acc[s][q] = _mm256_setzero_ps();
            PW__STREAMS_RECORDS(st, S, nb, record_bytes, x, xb_bytes, ahead, pfc, block, acc);
            for (int s = 0; s < st.live; ++s)
                pw__t32a_store(c->y + i * c->ldy + st.t0[s], acc[s], st.rows[s]);
        }
    }
}

/* ---- GEMM ---- */

/* The L1-sum GEMM loop (kernel/tile32_gemm.h) with its next-record prefetch into L2
 * and the AVX-512 loop's activation budget per pass (tile32_gemm_avx512.h). */
#define PW__T32AG_MR 4 /* rows of X per panel: 16 ymm registers */
#define PW__T32AG_XL2 (4096u << 10)

PW__T32A_INLINE void pw__t32ag_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0,
                                   int64_t i1, int64_t block_values, uint64_t record_bytes,
                                   size_t xb_bytes, pw__t32l_block_fn block) {
    pw__t32l_run(c, o0, o1, i0, i1, block_values, record_bytes, xb_bytes, PW__T32AG_XL2, 1, block,
                 PW__T32AG_MR);
}

/* The same over records made from input-block-major bytes as it goes (the IBM GEMM
 * kernels: kernel/tile32.h, pw__tile32_fill_ibm). */
PW__T32A_INLINE void pw__t32ag_run_fill(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0,
                                        int64_t i1, int64_t block_values, uint64_t record_bytes,
                                        size_t xb_bytes, pw__t32l_block_fn block,
                                        pw__tile32_fill_fn fill) {
    pw__t32l_run_fill(c, o0, o1, i0, i1, block_values, record_bytes, xb_bytes, PW__T32AG_XL2, block,
                      fill, PW__T32AG_MR);
}

#endif
