/*
 * AVX-512 VNNI kernel for QC4W family qc4w_n16k8s2 (layout in qc4w/qc4w.h):
 * GEMM over pairs of 16-channel tiles (two zmm) by PW__QC4W_MR rows of X per
 * micro-tile, and a batch-1 path that keeps four accumulator chains per tile.
 *
 * Bytes read per 8 k values: one 64-byte chunk of the tile, and 8 bytes of
 * u = q + 128 per row of X (two broadcast dwords), from the QD8 panel of the
 * micro-tile's rows (GEMM: one pointer for all rows) or from the row (GEMV):
 *
 *   chunk j (64 B):  | ch 0: 4 B | ch 1: 4 B | ... | ch 15: 4 B |
 *   byte i of ch c:  low nibble w[c, 8j + i], high nibble w[c, 8j + 4 + i]   (i < 4)
 *   QD8 panel:       | row 0: u[8j .. 8j+7] | row 1: u[8j .. 8j+7] | ... | row 15 |  per j
 *   QD8 row:         | header 64 B | q[Kp] | u[Kp] |   (headers: scale, zero point; GEMV's u)
 *
 * Unpacking: `and 0xF0` leaves 16 * w_high as a signed byte; a 4-bit left
 * shift of each dword first moves every low nibble into its byte's high half
 * (the high nibble it displaces lands in the next byte's low half and is
 * masked off), so the same `and` gives 16 * w_low. Three operations per
 * chunk serve 2 * MR vpdpbusd.
 *
 * Sign handling: vpdpbusd multiplies unsigned by signed bytes, so the
 * activations enter as u = q + 128 (unsigned) and the weights as 16 * w
 * (signed). The accumulator holds 16 * sum (q + 128) w; after an exact
 * arithmetic shift by 4, the offset's share, 128 * weight_sum, is absorbed
 * together with the zero point's by one term from the packed weight sums:
 *
 *   isum = (acc >> 4) + (neg_zp - 128) * weight_sum = sum q w - zp * weight_sum
 *
 * |16 * sum u w| <= 16 * 255 * 8 * K stays below 2^31 for K <= 65536 (max_k);
 * int32 lanes wrap, and the final isum is exact. Then the contract's f32
 * steps: s = a_scale * scale, v = cvt(isum) * s + bias, clamp as
 * max(min, v) and min(max, v) (vmaxps returns its second operand unless the
 * first is greater, which keeps a -0.0 v as the scalar comparison does),
 * half out through vcvtps2ph (round to nearest even). Columns past N in the
 * last tile are masked on store; nothing else differs.
 *
 * Each K loop prefetches the same offset of the next tile into L2, so that a
 * tile's first panel does not wait on memory.
 */
#include "kernel/qc4w.h"
#include "kernel/tile32.h"

#include "kernel/x86/int4_avx512.h"
#include "kernel/x86/tile32_prefetch.h"

#include <immintrin.h>
#include <string.h>

#define PW__QC4W_MR 12 /* rows of X per micro-tile: one QD8 panel */
_Static_assert(PW__QC4W_MR <= 12, "the row switch and the arrays stop at 12");


/* The contract's last steps for one row of 16 channels. */
PW__INLINE void finish_row(__m512i acc16, const uint8_t *row, __m512i ws, __m512 sc, __m512 bias,
                           __m512 vmin, __m512 vmax, void *y, int f16, __mmask16 mask) {
    const pw__qd8_header *h = pw__qd8_hdr(row);
    const __m512i corr = _mm512_mullo_epi32(ws, _mm512_set1_epi32(h->neg_zp - 128));
    const __m512i isum = _mm512_add_epi32(_mm512_srai_epi32(acc16, 4), corr);
    const __m512 s = _mm512_mul_ps(_mm512_set1_ps(h->scale), sc);
    __m512 v = _mm512_add_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(isum), s), bias);
    clamp_store16(v, vmin, vmax, y, f16, mask);
}

/* Rows of a panel, out of line: the accumulators leave the loop through memory, which
 * keeps the compiler from shadowing each one in a second register inside the loop. */
static __attribute__((noinline)) void finish_rows(const __m512i *sums, int rows, const uint8_t *meta,
                                                  const uint8_t *lhs, size_t ldl, uint8_t *y,
                                                  size_t ldy_bytes, int f16, __mmask16 mask,
                                                  __m512 vmin, __m512 vmax) {
    const __m512i ws = _mm512_load_si512(meta);
    const __m512 sc = _mm512_load_ps(meta + 64), bias = _mm512_load_ps(meta + 128);
    for (int r = 0; r < rows; ++r)
        finish_row(sums[r], lhs + r * ldl, ws, sc, bias, vmin, vmax, y + r * ldy_bytes, f16, mask);
}

/*
 * MR rows x T tiles (T = 2: 32 channels, each activation broadcast serving both; 1 for
 * an odd last tile). From 6 rows up one accumulator per row and tile gives enough
 * independent vpdpbusd chains; fewer rows (SPLIT = 1) keep the low and high nibbles in
 * two chains per row and tile, so latency does not bound them.
 *
 * Why pairs: the broadcasts are loads, and with one tile each vpdpbusd needed one of
 * its own: on a core with two 512-bit ports and two 512-bit loads a cycle (Intel Xeon,
 * Sapphire Rapids class) the loads bound the loop before the multiplies did. A pair
 * halves them (24 broadcasts and 2 weight loads per 48 vpdpbusd at MR = 12, the
 * unpacking 6 operations); 24 accumulators, the 4 unpacked vectors and the mask fill
 * the 32 registers. packwise bench --formats QC4W --shapes 2048x4096 --batch 128
 * --threads 1, this and the 16-row single-tile kernel in turn, 9 rounds on a shared
 * 2-vCPU Intel Xeon VM: 55-76% of the int8 peak (median 61.5%) against 44-70% (median
 * 47.2%), this one ahead in 8 of the 9 pairs.
 */
PW__INLINE void panel(const uint8_t *tile0, const uint8_t *tile1, int64_t chunks, uint64_t next,
                      const uint8_t *a, const uint8_t *lhs, size_t ldl, uint8_t *y, size_t ldy_bytes,
                      int f16, __mmask16 mask1, __m512 vmin, __m512 vmax, const int MR, const int T,
                      const int SPLIT) {
    const __m512i m4 = _mm512_set1_epi8((char)0xF0);
    __m512i lo0[PW__QC4W_MR], hi0[PW__QC4W_MR], lo1[PW__QC4W_MR], hi1[PW__QC4W_MR];
#pragma GCC unroll 12
    for (int r = 0; r < MR; ++r) lo0[r] = hi0[r] = lo1[r] = hi1[r] = _mm512_setzero_si512();
    const uint8_t *w0 = tile0, *w1 = T > 1 ? tile1 : tile0, *const end = tile0 + 64 * chunks;
    for (; w0 != end; w0 += 64, w1 += 64, a += 8 * PW__QC4W_MR) {
        /* the next tiles into L2 while these are in use (a no-op past the buffer's end) */
        _mm_prefetch((const char *)(w0 + next), _MM_HINT_T1);
        const __m512i raw0 = _mm512_load_si512(w0);
        const __m512i wl0 = _mm512_and_si512(_mm512_slli_epi32(raw0, 4), m4);
        const __m512i wh0 = _mm512_and_si512(raw0, m4);
        __m512i wl1 = wl0, wh1 = wh0;
        if (T > 1) {
            _mm_prefetch((const char *)(w1 + next), _MM_HINT_T1);
            const __m512i raw1 = _mm512_load_si512(w1);
            wl1 = _mm512_and_si512(_mm512_slli_epi32(raw1, 4), m4);
            wh1 = _mm512_and_si512(raw1, m4);
        }
#pragma GCC unroll 12
        for (int r = 0; r < MR; ++r) {
            const __m512i ul = bcast32(a + 8 * r), uh = bcast32(a + 8 * r + 4);
            lo0[r] = _mm512_dpbusd_epi32(lo0[r], ul, wl0);
            if (SPLIT)
                hi0[r] = _mm512_dpbusd_epi32(hi0[r], uh, wh0);
            else
                lo0[r] = _mm512_dpbusd_epi32(lo0[r], uh, wh0);
            if (T > 1) {
                lo1[r] = _mm512_dpbusd_epi32(lo1[r], ul, wl1);
                if (SPLIT)
                    hi1[r] = _mm512_dpbusd_epi32(hi1[r], uh, wh1);
                else
                    lo1[r] = _mm512_dpbusd_epi32(lo1[r], uh, wh1);
            }
        }
    }
    __m512i sums[PW__QC4W_MR];
#pragma GCC unroll 12
    for (int r = 0; r < MR; ++r) sums[r] = SPLIT ? _mm512_add_epi32(lo0[r], hi0[r]) : lo0[r];
    finish_rows(sums, MR, end, lhs, ldl, y, ldy_bytes, f16, T > 1 ? (__mmask16)0xFFFF : mask1, vmin,
                vmax);
    if (T > 1) {
#pragma GCC unroll 12
        for (int r = 0; r < MR; ++r) sums[r] = SPLIT ? _mm512_add_epi32(lo1[r], hi1[r]) : lo1[r];
        finish_rows(sums, MR, tile1 + 64 * chunks, lhs, ldl, y + 16 * (f16 ? 2 : 4), ldy_bytes, f16,
                    mask1, vmin, vmax);
    }
}

/* Batch 1: one row, four chains (low/high nibbles of even/odd chunks); chunks is a multiple
 * of 4; pf: prefetch the stream with these settings (pw__tile32_pf_code), or 0 not to
 * (gemv_range). */
static void gemv_tile(const uint8_t *tile, int64_t chunks, const uint8_t *lhs, int64_t kp,
                      uint8_t *y, int f16, __mmask16 mask, __m512 vmin, __m512 vmax, int pf) {
    const __m512i m4 = _mm512_set1_epi8((char)0xF0);
    __m512i a0 = _mm512_setzero_si512(), a1 = a0, a2 = a0, a3 = a0;
    const uint8_t *u = lhs + sizeof(pw__qd8_header) + kp;
    for (int64_t j = 0; j < chunks; j += 2) {
        if (pf) pw__tile32_prefetch_near_pf(tile + 64 * j, 128, pf);
        const __m512i r0 = _mm512_load_si512(tile + 64 * j);
        const __m512i r1 = _mm512_load_si512(tile + 64 * j + 64);
        a0 = _mm512_dpbusd_epi32(a0, bcast32(u + 8 * j), _mm512_and_si512(_mm512_slli_epi32(r0, 4), m4));
        a1 = _mm512_dpbusd_epi32(a1, bcast32(u + 8 * j + 4), _mm512_and_si512(r0, m4));
        a2 = _mm512_dpbusd_epi32(a2, bcast32(u + 8 * j + 8), _mm512_and_si512(_mm512_slli_epi32(r1, 4), m4));
        a3 = _mm512_dpbusd_epi32(a3, bcast32(u + 8 * j + 12), _mm512_and_si512(r1, m4));
    }
    const uint8_t *meta = tile + 64 * chunks;
    const __m512i acc = _mm512_add_epi32(_mm512_add_epi32(a0, a1), _mm512_add_epi32(a2, a3));
    finish_row(acc, lhs, _mm512_load_si512(meta), _mm512_load_ps(meta + 64),
               _mm512_load_ps(meta + 128), vmin, vmax, y, f16, mask);
}

/*
 * Batch 1 over the tiles [n0, n1), read as S contiguous parts at once (a
 * tile of each, chunk pair by chunk pair, two chains per tile): one core streams a large
 * weight faster as several streams than as one (kernel/x86/tile32_avx512.h). A last
 * part shorter than the others ends on gemv_tile. Each stream is prefetched into L1 or
 * L2 (tile32_prefetch.h), or left to the hardware where it streams faster so
 * (pw__x86_hw_streams: Zen 4, where this kernel read at 0.87-0.93 of the bench's
 * ceiling without prefetch against 0.68-0.78 with it; tile32_prefetch.h). The prefetch
 * settings are read once per call (pw__tile32_pf_code), not at every 128 bytes: one
 * process alternating the two on the Zen 5 VM ([11008, 4096] evicted before each call,
 * median GB/s of nibbles, two rounds), 2 threads 60.1 -> 61.5, 58.4 -> 59.3 and 60.0 ->
 * 61.1, 58.4 -> 59.7; 1 thread level (38.5 -> 38.5, 40.0 -> 39.8).
 */
#define PW__QC4W_STREAMS 4
static inline __attribute__((always_inline)) void gemv_range_s(const pw__mm_call *c, int64_t n0,
                                                              int64_t n1, const uint8_t *lhs,
                                                              uint8_t *y0, int f16, __m512 vmin,
                                                              __m512 vmax, const int S) {
    const int64_t kp = c->pack_desc->in_padded, chunks = kp / 8;
    const size_t esz = f16 ? 2 : 4;
    const __m512i m4 = _mm512_set1_epi8((char)0xF0);
    const uint8_t *u = lhs + sizeof(pw__qd8_header) + kp;
    const pw__streams p = pw__streams_plan(c, n0, n1, 16, S);
    const int pf =
        __atomic_load_n(&pw__x86_hw_streams, __ATOMIC_RELAXED) ? 0 : pw__tile32_pf_code();
    pw__streams_step st;
    for (int64_t j = 0; j < p.per; ++j) {
        pw__streams_at(&p, j, &st);
        if (st.live < S) { /* the last part has no tile j: one tile at a time */
            for (int s = 0; s < st.live; ++s)
                gemv_tile(st.tile[s], chunks, lhs, kp, y0 + (size_t)st.t0[s] * esz, f16,
                          (__mmask16)((1u << st.rows[s]) - 1u), vmin, vmax, pf);
            continue;
        }
        __m512i lo[PW__QC4W_STREAMS], hi[PW__QC4W_STREAMS];
#pragma GCC unroll 4
        for (int s = 0; s < S; ++s) lo[s] = hi[s] = _mm512_setzero_si512();
        for (int64_t k = 0; k < chunks; k += 2) {
            const __m512i u0 = bcast32(u + 8 * k), u1 = bcast32(u + 8 * k + 4);
            const __m512i u2 = bcast32(u + 8 * k + 8), u3 = bcast32(u + 8 * k + 12);
#pragma GCC unroll 4
            for (int s = 0; s < S; ++s) {
                const uint8_t *w = st.tile[s] + 64 * k;
                if (pf) pw__tile32_prefetch_near_pf(w, 128, pf);
                const __m512i r0 = _mm512_load_si512(w), r1 = _mm512_load_si512(w + 64);
                lo[s] = _mm512_dpbusd_epi32(lo[s], u0, _mm512_and_si512(_mm512_slli_epi32(r0, 4), m4));
                hi[s] = _mm512_dpbusd_epi32(hi[s], u1, _mm512_and_si512(r0, m4));
                lo[s] = _mm512_dpbusd_epi32(lo[s], u2, _mm512_and_si512(_mm512_slli_epi32(r1, 4), m4));
                hi[s] = _mm512_dpbusd_epi32(hi[s], u3, _mm512_and_si512(r1, m4));
            }
        }
#pragma GCC unroll 4
        for (int s = 0; s < S; ++s) {
            const uint8_t *meta = st.tile[s] + 64 * chunks;
            finish_row(_mm512_add_epi32(lo[s], hi[s]), lhs, _mm512_load_si512(meta),
                       _mm512_load_ps(meta + 64), _mm512_load_ps(meta + 128), vmin, vmax,
                       y0 + (size_t)st.t0[s] * esz, f16, (__mmask16)((1u << st.rows[s]) - 1u));
        }
    }
}

/* Streams: PW__QC4W_STREAMS, or two on Intel cores. An Intel Xeon VM of model 207
 * (Emerald Rapids class, 2 vCPUs), packwise bench --formats QC4W --shapes
 * 4096x4096,11008x4096 --batch 1 --threads 1,2, three rounds of two builds in turn,
 * fraction of the read, four streams against two: [4096, 4096] 1 thread 0.90-0.92 /
 * 0.93-0.94, 2 threads 0.84-0.89 / 0.88-0.94; [11008, 4096] 1 thread 0.95-0.97 /
 * 0.94-0.97, 2 threads 0.91-0.92 / 0.91-0.98; packwise bench --step --formats QC4W
 * --threads 1,2, two rounds: 2 threads 35.7-35.9 / 37.6-38.4 tokens/s, 1 thread 19.3-19.5 /
 * 19.0-19.4. On the Zen 5 VM four streams were faster in a decode step
 * (tile32_prefetch.h). */
static void gemv_range(const pw__mm_call *c, int64_t n0, int64_t n1, const uint8_t *lhs,
                       uint8_t *y0, int f16, __m512 vmin, __m512 vmax) {
    if (__atomic_load_n(&pw__x86_intel, __ATOMIC_RELAXED))
        gemv_range_s(c, n0, n1, lhs, y0, f16, vmin, vmax, 2);
    else
        gemv_range_s(c, n0, n1, lhs, y0, f16, vmin, vmax, PW__QC4W_STREAMS);
}

static void run_avx512(const pw__mm_call *c, int64_t n0, int64_t n1, int64_t m0, int64_t m1) {
    const pw__pack_desc *d = c->pack_desc;
    const int f16 = c->y16 != NULL;
    const int64_t kp = d->in_padded, chunks = kp / 8;
    const size_t ldl = c->xq_row_bytes, esz = f16 ? 2 : 4, ldy_bytes = (size_t)c->ldy * esz;
    const size_t panel_bytes = (size_t)PW__QC4W_MR * (size_t)kp;
    const __m512 vmin = _mm512_set1_ps(c->min), vmax = _mm512_set1_ps(c->max);
    if (m1 - m0 == 1) {
        gemv_range(c, n0, n1, c->xq + (size_t)m0 * ldl,
                   (f16 ? (uint8_t *)c->y16 : (uint8_t *)c->y) + (size_t)m0 * ldy_bytes, f16, vmin, vmax);
        return;
    }
    /* Pairs of tiles (one alone at the end), each over every panel of rows: the pair's
     * weights stay in L2 while the panels pass. */
    for (int64_t t0 = n0; t0 < n1; t0 += 32) {
        const uint8_t *tile0 = c->packed + (uint64_t)(t0 / 16) * d->tile_bytes;
        const uint8_t *tile1 = tile0 + d->tile_bytes;
        const int pair = n1 - t0 > 16;
        const int64_t last = pair ? t0 + 16 : t0; /* the tile that may be partial */
        const int64_t cols = n1 - last < 16 ? n1 - last : 16;
        const __mmask16 mask = (__mmask16)((1u << cols) - 1u);
        const uint64_t next = (pair ? 2 : 1) * d->tile_bytes;
        uint8_t *y = (f16 ? (uint8_t *)c->y16 : (uint8_t *)c->y) + (size_t)t0 * esz;
        /* m0 is a multiple of mr (the contract), so panels start at whole panels. */
        for (int64_t m = m0; m < m1; m += PW__QC4W_MR) {
            const uint8_t *a = c->xq_panels + (size_t)(m / PW__QC4W_MR) * panel_bytes;
            const uint8_t *rows = c->xq + (size_t)m * ldl;
            uint8_t *yy = y + (size_t)m * ldy_bytes;
            switch ((m1 - m < PW__QC4W_MR ? m1 - m : PW__QC4W_MR) * 2 + pair) {
#define PW__ROWS(R)                                                                              \
    case 2 * R:                                                                                  \
        panel(tile0, tile0, chunks, next, a, rows, ldl, yy, ldy_bytes, f16, mask, vmin, vmax, R, 1, \
              R < 6);                                                                            \
        break;                                                                                   \
    case 2 * R + 1:                                                                              \
        panel(tile0, tile1, chunks, next, a, rows, ldl, yy, ldy_bytes, f16, mask, vmin, vmax, R, 2, \
              R < 6);                                                                            \
        break;
                PW__ROWS(1) PW__ROWS(2) PW__ROWS(3) PW__ROWS(4) PW__ROWS(5) PW__ROWS(6)
                PW__ROWS(7) PW__ROWS(8) PW__ROWS(9) PW__ROWS(10) PW__ROWS(11) PW__ROWS(12)
#undef PW__ROWS
            default: break;
            }
        }
    }
}

const pw__kernel pw__k_qc4w_n16k8s2_avx512vnni = PW__QC4W_KERNEL(
    16, 8, 2, "avx512vnni", PW_CPU_AVX512F | PW_CPU_AVX512BW | PW_CPU_AVX512VL | PW_CPU_AVX512VNNI | PW_CPU_F16C,
    run_avx512, PW__PRIO_AVX512, PW__QC4W_MR, 65536, PW__QC4W_MR);
