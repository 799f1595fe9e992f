/*
 * The loop every AVX-512 kernel of a 32-row GEMV tiling runs (kernel/tile32.h):
 * tiles of the range one after another, each row of X in turn, the tile's
 * records one after another, then the 32 results stored with masks so a part
 * tile takes the same path. A family brings only its record function:
 *
 *   block(rec, xb, pf, acc): acc[0] (rows 0..15), acc[1] (rows 16..31) += the
 *   f32 dots of record rec with activation block xb; pf is nonzero where
 *   rec + pw__tile32_ahead() + a record is still inside the packed buffer, so the
 *   function may prefetch its share of the stream that far ahead: it is then the
 *   call's prefetch settings, read once (pw__tile32_pf_code), which the function
 *   passes to pw__tile32_prefetch_pf or pw__tile32_prefetch_near_pf
 *   (tile32_prefetch.h).
 *
 * pw__tile32_run is always inlined into the kernel with a constant block
 * function, which the compiler inlines in turn: no call per record.
 */
#ifndef PACKWISE_KERNEL_X86_TILE32_AVX512_H
#define PACKWISE_KERNEL_X86_TILE32_AVX512_H

#include "kernel/tile32.h"
#include "kernel/x86/tile32_prefetch.h"

#include <immintrin.h>
#include <stdint.h>

typedef void (*pw__tile32_block_fn)(const uint8_t *rec, const uint8_t *xb, int pf, __m512 acc[2]);

/* Four activation bytes (one dword) broadcast to every int32 lane. */
static inline __attribute__((always_inline)) __m512i pw__tile32_bcast4(const int8_t *p) {
    return _mm512_broadcastd_epi32(_mm_loadu_si32(p));
}

/* The eight 64-byte lines [p, p + 512) into w[0..7], loaded in address order by one asm
 * statement, after `after` is ready (the previous call's last line, so that consecutive
 * calls keep their order too). Plain loads are reordered by GCC's scheduler (or folded
 * into their uses, in the order of the arithmetic); Zen 4's hardware prefetcher streams
 * a record read in address order faster (q8x_avx512.c has the figures). `after` is an
 * input the asm does not read. */
static inline __attribute__((always_inline)) void pw__tile32_load_lines8(const uint8_t *p,
                                                                         __m512i w[8],
                                                                         __m512i after) {
    __asm__("vmovdqu64 0(%8), %0\n\tvmovdqu64 64(%8), %1\n\tvmovdqu64 128(%8), %2\n\t"
            "vmovdqu64 192(%8), %3\n\tvmovdqu64 256(%8), %4\n\tvmovdqu64 320(%8), %5\n\t"
            "vmovdqu64 384(%8), %6\n\tvmovdqu64 448(%8), %7"
            : "=v"(w[0]), "=v"(w[1]), "=v"(w[2]), "=v"(w[3]), "=v"(w[4]), "=v"(w[5]), "=v"(w[6]),
              "=v"(w[7])
            : "r"(p), "v"(after), "m"(*(const uint8_t(*)[512])p));
}

/* acc[0] += f32(lo) * d[0..15] * xd, acc[1] += f32(hi) * d[16..31] * xd: a record's
 * integer dots of rows 0..15 (lo) and 16..31 (hi) times the rows' fp16 scales d (32 of
 * them, in row order) and the activation block's scale xd. */
static inline __attribute__((always_inline)) void
pw__tile32_scale_add(__m512 acc[2], __m512i lo, __m512i hi, const uint8_t *d, float xd) {
    const __m512 x = _mm512_set1_ps(xd);
    const __m256i *d16 = (const __m256i *)d;
    acc[0] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(lo),
                             _mm512_mul_ps(_mm512_cvtph_ps(_mm256_loadu_si256(d16)), x), acc[0]);
    acc[1] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(hi),
                             _mm512_mul_ps(_mm512_cvtph_ps(_mm256_loadu_si256(d16 + 1)), x), acc[1]);
}

/* acc[0] += f32(m[0..15]) * xdsum, acc[1] += f32(m[16..31]) * xdsum: a record's 32 fp16
 * minima m (Q4_1, Q5_1: kernel/q41x.h) times the activation block's d * sum(qs). */
static inline __attribute__((always_inline)) void
pw__tile32_min_add(__m512 acc[2], const uint8_t *m, float xdsum) {
    const __m512 x = _mm512_set1_ps(xdsum);
    const __m256i *m16 = (const __m256i *)m;
    acc[0] = _mm512_fmadd_ps(_mm512_cvtph_ps(_mm256_loadu_si256(m16)), x, acc[0]);
    acc[1] = _mm512_fmadd_ps(_mm512_cvtph_ps(_mm256_loadu_si256(m16 + 1)), x, acc[1]);
}

/* The K-quant GEMM panels' scale step (q4kx_gemm_avx512.c, q6kx_gemm_avx512.c) for half h
 * of the mr rows' integer dots dt[i][h]: in f32 (F32, on Intel cores) facc[i][h] +=
 * f32(dt[i][h]) * scd, else in integers sacc[i][h] += dt[i][h] * sc (scd, sc: 16 lanes,
 * 64-byte aligned). */
static inline __attribute__((always_inline)) void
pw__t32k_scale_step(__m512i dt[][2], int h, const float *scd, const int32_t *sc, __m512 facc[][2],
                    __m512i sacc[][2], const int mr, const int F32) {
    if (F32) {
        const __m512 s = _mm512_load_ps(scd);
#pragma GCC unroll 8
        for (int i = 0; i < mr; ++i) facc[i][h] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dt[i][h]), s, facc[i][h]);
    } else {
        const __m512i s = _mm512_load_si512(sc);
#pragma GCC unroll 8
        for (int i = 0; i < mr; ++i) sacc[i][h] = _mm512_add_epi32(sacc[i][h], _mm512_mullo_epi32(dt[i][h], s));
    }
}

/* A K-quant GEMM's panel function of any height 1..8 (each height its own instance of
 * panel_(rec, (const rec_t_ *)rs, x, yb, pf, mr, F32)), named fn_, the scale step in f32
 * on Intel cores (pw__x86_intel, base/cpu.c). */
#define PW__T32K_PANEL_CASE(panel_, rec_t_, m_)                                                   \
    case m_:                                                                                      \
        if (__atomic_load_n(&pw__x86_intel, __ATOMIC_RELAXED))                                    \
            panel_(rec, (const rec_t_ *)rs, x, yb, pf, m_, 1);                                    \
        else                                                                                      \
            panel_(rec, (const rec_t_ *)rs, x, yb, pf, m_, 0);                                    \
        break;
#define PW__T32K_PANEL_ANY(fn_, panel_, rec_t_)                                                   \
    static void fn_(const uint8_t *rec, const void *rs, const uint8_t *const *x, float *yb,      \
                    const uint8_t *pf, int mr) {                                                  \
        switch (mr) {                                                                             \
            PW__T32K_PANEL_CASE(panel_, rec_t_, 1)                                                \
            PW__T32K_PANEL_CASE(panel_, rec_t_, 2)                                                \
            PW__T32K_PANEL_CASE(panel_, rec_t_, 3)                                                \
            PW__T32K_PANEL_CASE(panel_, rec_t_, 4)                                                \
            PW__T32K_PANEL_CASE(panel_, rec_t_, 5)                                                \
            PW__T32K_PANEL_CASE(panel_, rec_t_, 6)                                                \
            PW__T32K_PANEL_CASE(panel_, rec_t_, 7)                                                \
            PW__T32K_PANEL_CASE(panel_, rec_t_, 8)                                                \
        default: break;                                                                           \
        }                                                                                         \
    }

/* Store the first `rows` (1..32) of a tile's 32 sums acc[0] (rows 0..15), acc[1] at y. */
static inline __attribute__((always_inline)) void pw__tile32_store(float *y, const __m512 acc[2],
                                                                   int rows) {
    const uint32_t keep = rows == 32 ? 0xFFFFFFFFu : (1u << rows) - 1;
    _mm512_mask_storeu_ps(y, (__mmask16)keep, acc[0]);
    _mm512_mask_storeu_ps(y + 16, (__mmask16)(keep >> 16), acc[1]);
}

/* y[i, o] for o in [o0, o1), i in [i0, i1): records of record_bytes, one per
 * activation block of xb_bytes (block_values k values each). The range's tiles are
 * read as `streams` (1 to PW__STREAMS_MAX, a constant) contiguous parts at
 * once, a record of each in turn: on this project's machine one core streams a large
 * weight faster as several streams than as one (a decode step, packwise bench --step,
 * 1 thread: Q4_0 23 -> 34 GB/s, Q8_0 26 -> 37 GB/s at 4 streams; a plain read of 900
 * MiB 30-33 -> 38-39 GB/s at 8), while K-quant records (4.6 and 6.6 KiB, prefetched in
 * parts) lose (Q4_K 30 -> 21 GB/s at 4): each family passes its own count. `hw`: the
 * CPUs on which the family's records are left to the hardware prefetcher (a mask of
 * PW__HW_*, tile32_prefetch.h): the record function is then never asked to prefetch. */
static inline __attribute__((always_inline)) void
pw__tile32_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1,
               int64_t block_values, uint64_t record_bytes, size_t xb_bytes,
               pw__tile32_block_fn block, const int S, const int hw) {
    const int64_t nb = c->pack_desc->in / block_values;
    const uint64_t ahead = pw__tile32_ahead(hw);
    const int pfc = pw__tile32_pf_code();
    const pw__streams p = pw__tile32_streams_begin(c, o0, o1, S);
    for (int64_t j = 0; j < p.per; ++j) {
        pw__streams_step st;
        pw__streams_at(&p, j, &st);
        for (int64_t i = i0; i < i1; ++i) {
            const uint8_t *x = c->xq + (uint64_t)i * c->xq_row_bytes;
            __m512 acc[PW__STREAMS_MAX][2];
#pragma GCC unroll 8
            for (int s = 0; s < S; ++s) acc[s][0] = acc[s][1] = _mm512_setzero_ps();
            PW__STREAMS_RECORDS(st, S, nb, record_bytes, x, xb_bytes, ahead, pfc, block, acc);
            for (int s = 0; s < st.live; ++s)
                pw__tile32_store(c->y + i * c->ldy + st.t0[s], acc[s], st.rows[s]);
        }
    }
}

#endif
