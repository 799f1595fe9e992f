/*
 * AVX-512 VNNI kernel for QB4W family qb4w_n16k8s2 (layout and contract in
 * kernel/qb4w.h): GEMM over pairs of 16-channel tiles (two zmm) by up to
 * PW__QB4W_MR rows of X per micro-tile, and a batch-1 path over four tiles at
 * once.
 *
 * Per 8 k values: one 64-byte chunk of the tile and 8 bytes of qu = q + 128
 * per row of X (two broadcast dwords) from the QD8 panel (GEMM) or the row
 * (GEMV):
 *
 *   chunk j (64 B):  | ch 0: 4 B | ch 1: 4 B | ... | ch 15: 4 B |
 *   byte i of ch c:  low nibble u[c, 8j + i], high nibble u[c, 8j + 4 + i]   (i < 4)
 *
 * Unpacking: `and 0x0F` gives the low nibbles, a 16-bit right shift by 4 and
 * the same `and` the high ones; the block's zero points, 16 bytes, are
 * widened to one dword per channel and spread over its 4 bytes (vpmovzxbd,
 * vpshufb), and subtracted bytewise: w' = u - z in -15 .. 15, a signed byte
 * for vpdpbusd (qu unsigned x w' signed; 4 terms of |255 * 15| per dword step,
 * at most 256 * 255 * 15 per block: no int32 overflow). Five operations per
 * chunk serve 2 * MR vpdpbusd.
 *
 * Per block and row (kernel/qb4w.h's contract): accf = fma(cvt(d_b), scale,
 * accf), two operations; after the last block t = accf + (neg_zp - 128) * F
 * and v = t * a_scale + bias (multiplies and adds, unfused), clamp as max(min, v)
 * then min(max, v) (vmaxps returns its second operand unless the first is
 * greater, which keeps a -0.0 v as the scalar comparison does), half out
 * through vcvtps2ph (nearest even). Columns past N in the last tile are
 * masked on store. The last block multiplies only the chunks the QD8 rows
 * hold (pw__qb4w_block_values).
 *
 * Files: this header holds the kernel's inline functions and the two macros that
 * instantiate its GEMV and GEMM at one block size (CH chunks of 8 values a block);
 * qb4w_ch{2,4,8,16,32}_avx512.c instantiate one block size each, and qb4w_avx512.c
 * dispatches (run_avx512). As one file gcc -O2 took 49-55 s on it, a quarter of the
 * library's compile time and a parallel build's critical path; split, the block
 * sizes compile side by side (the largest, B = 256, about 40% of it). The code
 * generated is the same: the instances were out-of-line functions already.
 */
#ifndef PACKWISE_KERNEL_X86_QB4W_AVX512_H
#define PACKWISE_KERNEL_X86_QB4W_AVX512_H

#include "kernel/qb4w.h"
#include "kernel/tile32.h"

#include "kernel/x86/int4_avx512.h"
#include "kernel/x86/tile32_prefetch.h"

#include <immintrin.h>
#include <string.h>

#define PW__QB4W_STREAMS 4 /* GEMV: parts of a thread's tiles read at once (pw__qb4w_avx512_gemv_ch*) */
#define PW__QB4W_MR 10 /* rows of X per micro-tile: one QD8 panel */
_Static_assert(PW__QB4W_MR <= 10, "the row switch and the arrays stop at 10");


/* The block's 16 zero points, each spread over its channel's 4 bytes. */
PW__INLINE __m512i zero_bytes(const uint8_t *z) {
    const __m512i wide = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(const void *)z));
    /* byte 4i of each 128-bit lane to bytes 4i .. 4i+3 */
    const __m512i ctl = _mm512_set_epi8(12, 12, 12, 12, 8, 8, 8, 8, 4, 4, 4, 4, 0, 0, 0, 0,
                                        12, 12, 12, 12, 8, 8, 8, 8, 4, 4, 4, 4, 0, 0, 0, 0,
                                        12, 12, 12, 12, 8, 8, 8, 8, 4, 4, 4, 4, 0, 0, 0, 0,
                                        12, 12, 12, 12, 8, 8, 8, 8, 4, 4, 4, 4, 0, 0, 0, 0);
    return _mm512_shuffle_epi8(wide, ctl);
}

/* One block's step for one row: fma(cvt(d), scale, accf). */
PW__INLINE __m512 block_step(__m512 accf, __m512i d, __m512 sc) {
    return _mm512_fmadd_ps(_mm512_cvtepi32_ps(d), sc, accf);
}

/* The contract's last steps for one row of 16 channels. */
PW__INLINE void finish_row(__m512 accf, const pw__qd8_header *h, __m512 fsum, __m512 bias, __m512 vmin,
                           __m512 vmax, void *y, int f16, __mmask16 mask) {
    const __m512 corr = _mm512_mul_ps(_mm512_set1_ps((float)(h->neg_zp - 128)), fsum);
    const __m512 t = _mm512_add_ps(accf, corr);
    __m512 v = _mm512_add_ps(_mm512_mul_ps(t, _mm512_set1_ps(h->scale)), bias);
    clamp_store16(v, vmin, vmax, y, f16, mask);
}

typedef struct tile_ctx {
    const pw__pack_desc *d;
    const uint8_t *tile;
    int64_t nb, chunks_per_block;
    uint64_t data_bytes, fsum_at, bias_at; /* data_bytes: one block's, 64 * chunks_per_block */
} tile_ctx;

/* Where block b's data, scales and zero points lie in a tile (kernel/qb4w.h). */
PW__INLINE pw__qb4w_at block_at_of(const tile_ctx *t, int64_t b) {
    return pw__qb4w_at_of(16, t->nb, t->data_bytes, b);
}

/*
 * Batch 1 with the row's block sums: d_b = sum qu * u - z_b * QS_b, QS_b = sum of the
 * block's qu (the same integer as sum qu * (u - z_b)), so the nibbles go to vpdpbusd as
 * they are and the zero points cost one multiply per block instead of a subtraction per
 * weight vector. QS is computed once per call (pw__qb4w_row_sums).
 *
 * A thread's tiles are read as PW__QB4W_STREAMS parts at once (pw__qb4w_avx512_gemv_ch*), a record
 * of each part's tile in turn (kernel/qb4w.h: four blocks' data, then their scales and
 * zero points): the row's broadcasts of a chunk pair serve all four tiles, two integer
 * chains per tile and block, the four blocks' sums kept until the record's scales. So
 * each part is read in address order, which the hardware prefetcher follows: on AMD
 * Zen 4 (pw__x86_hw_streams) no software prefetch; elsewhere each record is prefetched
 * PW__TILE32_PF bytes on, into L2 where the tiled GEMVs prefetch there
 * (pw__x86_prefetch_l2), else L1 (not measured on those CPUs for this family).
 *
 * Measured on a Zen 4 EPYC VM (AVX-512 in 256-bit halves, 2 vCPUs), packwise bench
 * --formats QB4W --shapes 11008x4096,4096x4096 --batch 1, each choice in turn, fraction
 * of the read, [11008, 4096] / [4096, 4096]. Version 2 of the tile (all data, then all
 * scales, then all zero points) was read block by block as three streams per tile with
 * a software prefetch of each, one cursor per part (about 30 scalar operations per tile
 * and block, spilled) and the row's broadcasts loaded per tile: 1 thread B = 32 71-76% /
 * 68-71, B = 128 68-71 / 63-67. Compute-bound there: a [256, 4096] weight left in L2 read
 * at 43-49 GB/s against a cold ceiling near 38. Sharing the broadcasts and computing the
 * prefetch once per block for all parts: 56-59 GB/s in L2 (65 without any prefetch),
 * cold 74-75 / 71-72 and 74-79 / 73-76. The record layout read in address order,
 * hardware prefetch only: 85.2-87.7 / 84.6-87.8 and 84.5-86.0 / 84.3-87.6 (five rounds);
 * 2 threads 80-83 / 88-95 and 83-85 / 87-90 (version 2: 65-84 / 84-91 and 80-87 /
 * 82-92). Not kept: the same records read block by block (a block's data, then its zero
 * points and scales: 55-60% with four parts, 47-59 with eight), records prefetched two
 * ahead into L2 (53-63), 2 or 8 parts (55-72, 51-60, version 2), the high nibbles by one
 * vgf2p8affineqb instead of a shift and an and (the same in L2: it takes the vpdpbusd
 * ports there), each chunk loaded once instead of folded into both of its operations
 * (1-2% in L2).
 */
/* acc_lo[s], acc_hi[s] + chunks j, j + 1 of the S tiles at w[s] + off (u: the row's qu of
 * chunk j): the four broadcasts of the row's bytes serve every tile. */
PW__INLINE void gemv_chunk_pair(const uint8_t *const *w, uint64_t off, const uint8_t *u, __m512i *lo,
                                __m512i *hi, const int S) {
    const __m512i m4 = _mm512_set1_epi8(0x0F);
    const __m512i u0 = bcast32(u), u1 = bcast32(u + 4), u2 = bcast32(u + 8), u3 = bcast32(u + 12);
#pragma GCC unroll 4
    for (int s = 0; s < S; ++s) {
        const __m512i r0 = _mm512_load_si512(w[s] + off), r1 = _mm512_load_si512(w[s] + off + 64);
        lo[s] = _mm512_dpbusd_epi32(lo[s], u0, _mm512_and_si512(r0, m4));
        hi[s] = _mm512_dpbusd_epi32(hi[s], u1, _mm512_and_si512(_mm512_srli_epi16(r0, 4), m4));
        lo[s] = _mm512_dpbusd_epi32(lo[s], u2, _mm512_and_si512(r1, m4));
        hi[s] = _mm512_dpbusd_epi32(hi[s], u3, _mm512_and_si512(_mm512_srli_epi16(r1, 4), m4));
    }
}

/* accf[s] + block b's d_b * scale for the S tiles at w[s], from the sums lo, hi and the
 * row's block sum qs_b: d_b = lo + hi - z_b * QS_b. */
PW__INLINE void gemv_block_out(const uint8_t *const *w, uint64_t zero, uint64_t scale, const __m512i *d,
                               int32_t qs_b, __m512 *accf, const int S) {
    const __m512i q = _mm512_set1_epi32(qs_b);
#pragma GCC unroll 4
    for (int s = 0; s < S; ++s) {
        const __m512i z = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(const void *)(w[s] + zero)));
        const __m512i dd = _mm512_sub_epi32(d[s], _mm512_mullo_epi32(z, q));
        accf[s] = block_step(accf[s], dd, _mm512_loadu_ps(w[s] + scale));
    }
}

/* The record at byte base of the S tiles at w[s]: its g whole blocks from block b0 (g <= 4,
 * the record's block count), read in address order: the blocks' data (their integer sums
 * kept in registers), then their scales and zero points. PF as gemv_blocks. */
PW__INLINE void gemv_record(const uint8_t *const *w, uint64_t base, int64_t b0, int g, const uint8_t *u,
                            const int32_t *qs, __m512 *accf, const int PF, const int S, const int CH) {
    const uint64_t db = 64 * (uint64_t)CH;
    if (PF) {
        const uint64_t rec = (uint64_t)g * (db + 80);
#pragma GCC unroll 4
        for (int s = 0; s < S; ++s)
            for (uint64_t l = 0; l < rec; l += 64)
                pw__x86_prefetch_line(w[s] + base + PW__TILE32_PF + l, PF == 2);
    }
    __m512i d[4][PW__QB4W_STREAMS];
#pragma GCC unroll 4
    for (int i = 0; i < 4; ++i) {
        __m512i lo[PW__QB4W_STREAMS], hi[PW__QB4W_STREAMS];
#pragma GCC unroll 4
        for (int s = 0; s < S; ++s) lo[s] = hi[s] = _mm512_setzero_si512();
        if (i < g) {
#pragma GCC unroll 16
            for (int j = 0; j < CH; j += 2)
                gemv_chunk_pair(w, base + (uint64_t)i * db + 64 * (uint64_t)j,
                                u + 8 * (uint64_t)((b0 + i) * CH + j), lo, hi, S);
        }
#pragma GCC unroll 4
        for (int s = 0; s < S; ++s) d[i][s] = _mm512_add_epi32(lo[s], hi[s]);
    }
    const uint64_t sc = base + (uint64_t)g * db, zp = sc + 64 * (uint64_t)g;
#pragma GCC unroll 4
    for (int i = 0; i < 4; ++i)
        if (i < g) gemv_block_out(w, zp + 16 * (uint64_t)i, sc + 64 * (uint64_t)i, d[i], qs[b0 + i], accf, S);
}

/* Batch 1 over the S tiles at w[s] (S a constant), record by record in address order
 * (gemv_record); where the QD8 rows end inside the last block, the last record's blocks
 * one by one (block_at_of), the last with a run-time count of chunk pairs. CH (chunks per
 * block) is a constant, so the chunk loops unroll. PF: 0 leaves the streams to the
 * hardware prefetcher, 1 prefetches each record PW__TILE32_PF bytes on into L1, 2 into
 * L2 (tile32_prefetch.h). u: the row's qu. */
PW__INLINE void gemv_blocks(const tile_ctx *t, const uint8_t *const *w, const uint8_t *u, const int32_t *qs,
                            __m512 *accf, const int PF, const int S, const int CH) {
    const int64_t nb = t->nb;
    const int64_t full = pw__qb4w_block_values(t->d, nb - 1) == t->d->group ? nb : nb - 1;
    const uint64_t rec = 4 * (64 * (uint64_t)CH + 80);
    int64_t b = 0;
    for (; b + 4 <= full; b += 4) gemv_record(w, (uint64_t)(b / 4) * rec, b, 4, u, qs, accf, PF, S, CH);
    if (full == nb && b < nb) gemv_record(w, (uint64_t)(b / 4) * rec, b, (int)(nb - b), u, qs, accf, PF, S, CH);
    for (; b < nb && full < nb; ++b) {
        const pw__qb4w_at at = block_at_of(t, b);
        const int64_t chunks = b < full ? CH : pw__qb4w_block_values(t->d, b) / 8;
        __m512i lo[PW__QB4W_STREAMS], hi[PW__QB4W_STREAMS], d[PW__QB4W_STREAMS];
        for (int s = 0; s < S; ++s) lo[s] = hi[s] = _mm512_setzero_si512();
        for (int64_t j = 0; j < chunks; j += 2)
            gemv_chunk_pair(w, at.data + 64 * (uint64_t)j, u + 8 * (uint64_t)(b * CH + j), lo, hi, S);
        for (int s = 0; s < S; ++s) d[s] = _mm512_add_epi32(lo[s], hi[s]);
        gemv_block_out(w, at.zero, at.scale, d, qs[b], accf, S);
    }
}

/* One step of the streams (st): all S parts at once, or part after part in the last
 * part's tail. */
PW__INLINE void gemv_step(const tile_ctx *t, const pw__streams_step *st, const uint8_t *u, const int32_t *qs,
                          __m512 *accf, const int PF, const int S, const int CH) {
    if (st->live == S) {
        gemv_blocks(t, st->tile, u, qs, accf, PF, S, CH);
    } else {
        for (int s = 0; s < st->live; ++s) gemv_blocks(t, &st->tile[s], u, qs, &accf[s], PF, 1, CH);
    }
}

/* The tiles [n0, n1) of one row, at a constant chunk count, read as PW__QB4W_STREAMS
 * contiguous parts at once (kernel/tile32.h, pw__streams_plan; a record of each part's
 * tile in turn, gemv_blocks). The last part's tail, where it has no tile, runs tile
 * after tile. */
#define PW__GEMV_TILES(CH)                                                                          \
    __attribute__((noinline)) void pw__qb4w_avx512_gemv_ch##CH(tile_ctx *t, const pw__mm_call *c, \
                                                            int64_t n0, int64_t n1, const uint8_t *lhs, \
                                                            int64_t kq, const int32_t *qs, uint8_t *y0, \
                                                            int f16, __m512 vmin, __m512 vmax) {   \
        enum { S = PW__QB4W_STREAMS };                                                              \
        const size_t esz = f16 ? 2 : 4;                                                             \
        const uint8_t *u = lhs + sizeof(pw__qd8_header) + kq;                                       \
        const pw__streams p = pw__streams_plan(c, n0, n1, 16, S);                                   \
        const int pf = __atomic_load_n(&pw__x86_hw_streams, __ATOMIC_RELAXED)         ? 0           \
                       : __atomic_load_n(&pw__x86_prefetch_l2, __ATOMIC_RELAXED) ? 2                \
                                                                                 : 1;               \
        pw__streams_step st;                                                                        \
        for (int64_t j = 0; j < p.per; ++j) {                                                       \
            pw__streams_at(&p, j, &st);                                                             \
            __m512 accf[S];                                                                         \
            for (int s = 0; s < S; ++s) accf[s] = _mm512_setzero_ps();                              \
            if (pf == 0)                                                                            \
                gemv_step(t, &st, u, qs, accf, 0, S, CH);                                           \
            else if (pf == 1)                                                                       \
                gemv_step(t, &st, u, qs, accf, 1, S, CH);                                           \
            else                                                                                    \
                gemv_step(t, &st, u, qs, accf, 2, S, CH);                                           \
            for (int s = 0; s < st.live; ++s)                                                       \
                finish_row(accf[s], pw__qd8_hdr(lhs), _mm512_loadu_ps(st.tile[s] + t->fsum_at),    \
                           _mm512_loadu_ps(st.tile[s] + t->bias_at), vmin, vmax,                    \
                           y0 + (size_t)st.t0[s] * esz, f16, (__mmask16)((1u << st.rows[s]) - 1u)); \
        }                                                                                           \
    }
/* Rows of a panel, out of line. */
static __attribute__((noinline)) void finish_rows(const float *accf, int rows, const tile_ctx *t,
                                                  const uint8_t *lhs, size_t ldl, uint8_t *y,
                                                  size_t ldy_bytes, int f16, __mmask16 mask,
                                                  __m512 vmin, __m512 vmax) {
    const __m512 bias = _mm512_loadu_ps(t->tile + t->bias_at), fsum = _mm512_loadu_ps(t->tile + t->fsum_at);
    for (int r = 0; r < rows; ++r)
        finish_row(_mm512_load_ps(accf + 16 * r), pw__qd8_hdr(lhs + (size_t)r * ldl), fsum, bias, vmin, vmax,
                   y + (size_t)r * ldy_bytes, f16, mask);
}

/*
 * MR rows x T tiles (T = 2: 32 channels, or 1 for an odd last tile), block by block: one
 * integer chain per row and tile (20 at MR = 10, T = 2), each activation broadcast
 * serving both tiles. The broadcasts are loads: with one tile, a vpdpbusd needs a load
 * of its own, and the loads bound the loop before the multiplies do.
 * CH (chunks per block, B / 8) is a constant, so the chunk loop unrolls and the
 * integer chains stay in registers (a loop over chunks left the compiler copying every
 * chain at every chunk); a partial last block (CH_last < CH) takes the same body with
 * a run-time count. The f32 sums live in an L1 buffer, read and written once per block
 * and row (loads and stores, not the two vector ports).
 *
 * Why 10 rows: on a core with two 512-bit ports (Intel Xeon, Sapphire Rapids class)
 * every vector operation beside the vpdpbusd takes a slot from them. Per block, tile
 * and panel the unpacking costs 5 operations a chunk whatever MR is, and each row 2 f32
 * operations (cvt, fma): at B = 32 (4 chunks), 8 MR vpdpbusd against 20 + 2 MR
 * others, at most 56% of the vpdpbusd peak at MR = 5 and 66% at MR = 10. Measured
 * (packwise bench --formats QB4W,QC4W --shapes 2048x4096 --batch 128 --threads 1, this
 * and the 5-row kernel with its f32 sums in registers alternately, 5 rounds, the
 * quiet ones): QB4W/32 51.4-53.9% of the int8 peak against 46.8-47.8%, QB4W/128
 * 61.8-64.9% against 50.0-54.3%.
 */
PW__INLINE void chunk_step(const uint8_t *w0, const uint8_t *w1, uint64_t next, const uint8_t *aj,
                           __m512i zv0, __m512i zv1, __m512i *acc0, __m512i *acc1, const int MR,
                           const int T) {
    const __m512i m4 = _mm512_set1_epi8(0x0F);
    _mm_prefetch((const char *)(w0 + next), _MM_HINT_T1);
    const __m512i raw0 = _mm512_load_si512(w0);
    const __m512i l0 = _mm512_sub_epi8(_mm512_and_si512(raw0, m4), zv0);
    const __m512i h0 = _mm512_sub_epi8(_mm512_and_si512(_mm512_srli_epi16(raw0, 4), m4), zv0);
    __m512i l1 = l0, h1 = h0;
    if (T > 1) {
        _mm_prefetch((const char *)(w1 + next), _MM_HINT_T1);
        const __m512i raw1 = _mm512_load_si512(w1);
        l1 = _mm512_sub_epi8(_mm512_and_si512(raw1, m4), zv1);
        h1 = _mm512_sub_epi8(_mm512_and_si512(_mm512_srli_epi16(raw1, 4), m4), zv1);
    }
#pragma GCC unroll 10
    for (int r = 0; r < MR; ++r) {
        const __m512i lo = bcast32(aj + 8 * r), hi = bcast32(aj + 8 * r + 4);
        acc0[r] = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(acc0[r], lo, l0), hi, h0);
        if (T > 1) acc1[r] = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(acc1[r], lo, l1), hi, h1);
    }
}

PW__INLINE void block_chunks(const uint8_t *w0, const uint8_t *w1, uint64_t next, const uint8_t *a,
                             int64_t chunks, __m512i zv0, __m512i zv1, __m512i *acc0, __m512i *acc1,
                             const int MR, const int T, const int CH) {
    if (CH > 0) {
#pragma GCC unroll 32
        for (int j = 0; j < CH; ++j)
            chunk_step(w0 + 64 * j, w1 + 64 * j, next, a + 8 * PW__QB4W_MR * j, zv0, zv1, acc0, acc1, MR, T);
    } else {
        for (int64_t j = 0; j < chunks; ++j)
            chunk_step(w0 + 64 * j, w1 + 64 * j, next, a + 8 * PW__QB4W_MR * j, zv0, zv1, acc0, acc1, MR, T);
    }
}

PW__INLINE void panel(const tile_ctx *t0, const tile_ctx *t1, uint64_t next, const uint8_t *a,
                      const uint8_t *lhs, size_t ldl, uint8_t *y, size_t ldy_bytes, int f16,
                      __mmask16 mask1, __m512 vmin, __m512 vmax, const int MR, const int T, const int CH) {
    /* the f32 sums in L1: the 2 * MR integer chains, the unpacked step and the zero
     * points fill the registers; a sum is read and written once per block and row */
    float f[2][PW__QB4W_MR][16] __attribute__((aligned(64)));
#pragma GCC unroll 10
    for (int r = 0; r < MR; ++r) {
        _mm512_store_ps(f[0][r], _mm512_setzero_ps());
        if (T > 1) _mm512_store_ps(f[1][r], _mm512_setzero_ps());
    }
    const int64_t cpb = t0->chunks_per_block;
    for (int64_t b = 0; b < t0->nb; ++b, a += 8 * PW__QB4W_MR * cpb) {
        const pw__qb4w_at at = block_at_of(t0, b);
        const uint8_t *w0 = t0->tile + at.data, *w1 = (T > 1 ? t1->tile : t0->tile) + at.data;
        const __m512i zv0 = zero_bytes(t0->tile + at.zero);
        const __m512i zv1 = T > 1 ? zero_bytes(t1->tile + at.zero) : zv0;
        /* the next tiles' scales and zero points, which chunk_step's data lines miss */
        _mm_prefetch((const char *)(t0->tile + next + at.scale), _MM_HINT_T1);
        _mm_prefetch((const char *)(t0->tile + next + at.zero), _MM_HINT_T1);
        if (T > 1) {
            _mm_prefetch((const char *)(t1->tile + next + at.scale), _MM_HINT_T1);
            _mm_prefetch((const char *)(t1->tile + next + at.zero), _MM_HINT_T1);
        }
        __m512i acc0[PW__QB4W_MR], acc1[PW__QB4W_MR];
#pragma GCC unroll 10
        for (int r = 0; r < MR; ++r) acc0[r] = acc1[r] = _mm512_setzero_si512();
        if (b + 1 < t0->nb || pw__qb4w_block_values(t0->d, b) == t0->d->group)
            block_chunks(w0, w1, next, a, CH, zv0, zv1, acc0, acc1, MR, T, CH);
        else
            block_chunks(w0, w1, next, a, pw__qb4w_block_values(t0->d, b) / 8, zv0, zv1, acc0, acc1, MR, T, 0);
        const __m512 s0 = _mm512_loadu_ps(t0->tile + at.scale);
#pragma GCC unroll 10
        for (int r = 0; r < MR; ++r) _mm512_store_ps(f[0][r], block_step(_mm512_load_ps(f[0][r]), acc0[r], s0));
        if (T > 1) {
            const __m512 s1 = _mm512_loadu_ps(t1->tile + at.scale);
#pragma GCC unroll 10
            for (int r = 0; r < MR; ++r)
                _mm512_store_ps(f[1][r], block_step(_mm512_load_ps(f[1][r]), acc1[r], s1));
        }
    }
    finish_rows(f[0][0], MR, t0, lhs, ldl, y, ldy_bytes, f16, T > 1 ? 0xFFFF : mask1, vmin, vmax);
    if (T > 1) finish_rows(f[1][0], MR, t1, lhs, ldl, y + 16 * (f16 ? 2 : 4), ldy_bytes, f16, mask1,
                           vmin, vmax);
}

/* One panel of R rows over a pair of tiles or one, at a constant chunk count (B / 8). */
#define PW__PANELS(CH)                                                                                    \
    __attribute__((noinline)) void pw__qb4w_avx512_panel_ch##CH(                                  \
        const tile_ctx *t0, const tile_ctx *t1, int pair, uint64_t next, const uint8_t *a,           \
        const uint8_t *lhs, size_t ldl, uint8_t *y, size_t ldy_bytes, int f16, __mmask16 mask,       \
        __m512 vmin, __m512 vmax, int rows) {                                                         \
        switch (rows * 2 + pair) {                                                                        \
        case 20: panel(t0, t0, next, a, lhs, ldl, y, ldy_bytes, f16, mask, vmin, vmax, 10, 1, CH); break; \
        case 21: panel(t0, t1, next, a, lhs, ldl, y, ldy_bytes, f16, mask, vmin, vmax, 10, 2, CH); break; \
        case 18: panel(t0, t0, next, a, lhs, ldl, y, ldy_bytes, f16, mask, vmin, vmax, 9, 1, CH); break; \
        case 19: panel(t0, t1, next, a, lhs, ldl, y, ldy_bytes, f16, mask, vmin, vmax, 9, 2, CH); break; \
        case 16: panel(t0, t0, next, a, lhs, ldl, y, ldy_bytes, f16, mask, vmin, vmax, 8, 1, CH); break; \
        case 17: panel(t0, t1, next, a, lhs, ldl, y, ldy_bytes, f16, mask, vmin, vmax, 8, 2, CH); break; \
        case 14: panel(t0, t0, next, a, lhs, ldl, y, ldy_bytes, f16, mask, vmin, vmax, 7, 1, CH); break; \
        case 15: panel(t0, t1, next, a, lhs, ldl, y, ldy_bytes, f16, mask, vmin, vmax, 7, 2, CH); break; \
        case 12: panel(t0, t0, next, a, lhs, ldl, y, ldy_bytes, f16, mask, vmin, vmax, 6, 1, CH); break; \
        case 13: panel(t0, t1, next, a, lhs, ldl, y, ldy_bytes, f16, mask, vmin, vmax, 6, 2, CH); break; \
        case 10: panel(t0, t0, next, a, lhs, ldl, y, ldy_bytes, f16, mask, vmin, vmax, 5, 1, CH); break; \
        case 11: panel(t0, t1, next, a, lhs, ldl, y, ldy_bytes, f16, mask, vmin, vmax, 5, 2, CH); break; \
        case 8: panel(t0, t0, next, a, lhs, ldl, y, ldy_bytes, f16, mask, vmin, vmax, 4, 1, CH); break; \
        case 9: panel(t0, t1, next, a, lhs, ldl, y, ldy_bytes, f16, mask, vmin, vmax, 4, 2, CH); break; \
        case 6: panel(t0, t0, next, a, lhs, ldl, y, ldy_bytes, f16, mask, vmin, vmax, 3, 1, CH); break; \
        case 7: panel(t0, t1, next, a, lhs, ldl, y, ldy_bytes, f16, mask, vmin, vmax, 3, 2, CH); break; \
        case 4: panel(t0, t0, next, a, lhs, ldl, y, ldy_bytes, f16, mask, vmin, vmax, 2, 1, CH); break; \
        case 5: panel(t0, t1, next, a, lhs, ldl, y, ldy_bytes, f16, mask, vmin, vmax, 2, 2, CH); break; \
        case 2: panel(t0, t0, next, a, lhs, ldl, y, ldy_bytes, f16, mask, vmin, vmax, 1, 1, CH); break; \
        case 3: panel(t0, t1, next, a, lhs, ldl, y, ldy_bytes, f16, mask, vmin, vmax, 1, 2, CH); break; \
        default: break;                                                                                   \
        }                                                                                                 \
    }

/* The instances of one block size (qb4w_ch<CH>_avx512.c) and their declarations. */
#define PW__QB4W_AVX512_DECLARE(CH)                                                                 \
    void pw__qb4w_avx512_gemv_ch##CH(tile_ctx *t, const pw__mm_call *c, int64_t n0, int64_t n1,     \
                                     const uint8_t *lhs, int64_t kq, const int32_t *qs, uint8_t *y0, \
                                     int f16, __m512 vmin, __m512 vmax);                              \
    void pw__qb4w_avx512_panel_ch##CH(const tile_ctx *t0, const tile_ctx *t1, int pair, uint64_t next, \
                                      const uint8_t *a, const uint8_t *lhs, size_t ldl, uint8_t *y,     \
                                      size_t ldy_bytes, int f16, __mmask16 mask, __m512 vmin,           \
                                      __m512 vmax, int rows);
PW__QB4W_AVX512_DECLARE(2)
PW__QB4W_AVX512_DECLARE(4)
PW__QB4W_AVX512_DECLARE(8)
PW__QB4W_AVX512_DECLARE(16)
PW__QB4W_AVX512_DECLARE(32)
#define PW__QB4W_AVX512_INSTANCES(CH) PW__GEMV_TILES(CH) PW__PANELS(CH)

#endif
