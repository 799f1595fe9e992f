#if !defined(__AVX2__) || !defined(__F16C__) || !defined(__FMA__)
#error "qb4w_avx2.c needs -mavx2 -mf16c -mfma (cmake gives *_avx2.c these flags)"
#endif
/*
 * AVX2 kernel for QB4W family qb4w_n16k8s2 (layout and contract in
 * kernel/qb4w.h): 16 channels (two ymm halves of 8) by up to PW__QB4W_MR rows
 * of X per micro-tile for GEMM (rows from the QD8 panels), and a batch-1 path
 * that streams the tiles once, two at a time (gemv_range: rows' u directly).
 *
 * Bytes read per 8 k values: one 64-byte chunk of the tile (two 32-byte
 * halves of 8 channels), 8 bytes of u = q + 128 per row (two broadcast
 * dwords):
 *
 *   chunk j (64 B):  | ch 0: 4 B | ... | ch 7: 4 B | ch 8: 4 B | ... | ch 15: 4 B |
 *   byte i of ch c:  low nibble u[c, 8j + i], high nibble u[c, 8j + 4 + i]   (i < 4)
 *   QD8 panel:       | row 0: u[8j .. 8j+7] | row 1 | ... | row P-1 |   per j (GEMM)
 *   QD8 row:         | header 64 B | q[Kq] | u[Kq] |                   (GEMV's u)
 *
 * Unpacking, once per chunk half and shared by every row: and 0x0F (and a
 * 16-bit shift by 4 first for the high nibbles) gives the unsigned nibbles,
 * minus the block's zero points (one vpshufb per block and half spreads the
 * 8 channels' z over their 4 bytes) gives w' = u - z_b in -15 .. 15, a signed
 * byte. Activations are the unsigned side: u = q + 128 in 0 .. 255.
 *
 * AVX2: vpmaddubsw(u, w') adds adjacent pairs into int16: |pair| <= 2 * 255
 * * 15 = 7650, and the four products of two chunks (low and high nibbles of
 * each) are added in int16 before one vpmaddwd by ones widens them: |sum| <=
 * 4 * 7650 = 30600 < 2^15, exact. AVX-VNNI (PW__VNNI): vpdpbusd(acc, u, w')
 * straight into int32. Batch 1 (gemv_range) takes the zero points out once per
 * block with the row's block sums instead, and keeps the nibbles as they are.
 *
 * Per block b (chunks counted by pw__qb4w_block_values: a partial last block
 * multiplies only up to Kq; blocks always hold an even number of chunks):
 * d_b = sum (q + 128) (u - z_b), exact in int32 (|d_b| <= 255 * 15 * 256),
 * then the contract's (v2) f32 steps: acc = fma(cvt(d_b), s_b, acc) (vfmadd,
 * one rounding, as fmaf), t = acc + (neg_zp - 128) * F (mul, then add), v =
 * t * a_scale + bias, clamp as max(min, v) then min(max, v) (vmaxps/vminps
 * return their second operand unless the first wins, which keeps -0.0 and
 * NaN as the scalar comparisons do), half out through vcvtps2ph (nearest
 * even). Columns past N in the last tile are computed (the padding channels
 * are zero) but not stored.
 *
 * Prefetch: GEMV prefetches into L2 the block that lies about PW__GEMV_AHEAD
 * bytes of tiles ahead (its data lines, scales and zero points,
 * each region where it is read: a tile's regions are separate streams, and a
 * prefetch running linearly through the tile reached its early blocks' sums
 * and scales only after they were used: on [11008, 4096] B = 32, 1 thread, a
 * busy 2-core machine, medians 15-20 GB/s against 20-21 per region, with the
 * same runs' plain read at 22-25 GB/s); the first GEMM panel of
 * a tile prefetches the next tile's same block.
 *
 * GEMM rows per micro-tile: 4 at avx2 (4 int32 sums + 4 unpacked weight
 * vectors of two chunks per half), 8 at avxvnni (one chunk per step: 8 sums,
 * 8 independent vpdpbusd chains; with 4 rows and low/high sums split the
 * sums spilled and ran ~64 GOPS against ~220).
 *
 * Built twice (avx2_level.h): avx2, and avxvnni through qb4w_avxvnni.c. The
 * packed tiles are the family's (qb4w_pack.c), the same at both levels.
 */
#include "kernel/qb4w.h"
#include "kernel/tile32.h"
#include "kernel/x86/avx2_level.h"
#include "kernel/x86/tile32_prefetch.h"

#include <immintrin.h>
#include <string.h>

/* rows of X per GEMM micro-tile: one QD8 panel (gemm_panel says why they differ) */
#if defined(PW_AVXVNNI)
#define PW__QB4W_MR 8
#else
#define PW__QB4W_MR 4
#endif
#define PW__GEMV_AHEAD 16384

#define PW__INLINE static inline __attribute__((always_inline))

PW__INLINE __m256i bcast32(const uint8_t *p) {
    int32_t v;
    memcpy(&v, p, 4);
    return _mm256_set1_epi32(v);
}

/* Where a tile's regions are, relative to its start. */
typedef struct geo {
    uint64_t data_bytes, fsum, bias; /* data_bytes: one block's data, 64 * block_chunks */
    int64_t nb, last_chunks; /* blocks; chunks multiplied in the last one */
    int64_t block_chunks;    /* B / 8 */
    uint64_t tile_bytes;
} geo;

/* Where block b's data, scales and zero points lie in a tile (kernel/qb4w.h). */
PW__INLINE pw__qb4w_at at_of(const geo *g, int64_t b) {
    return pw__qb4w_at_of(16, g->nb, g->data_bytes, b);
}

/* Block b's zero points, each channel's repeated over its 4 bytes: channels 0-7 (z0) and
 * 8-15 (z1): the block's 16 bytes of zero points (kernel/qb4w.h). */
PW__INLINE void zero_bytes(const uint8_t *z16, __m256i *z0, __m256i *z1) {
    const __m256i z = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(const void *)z16));
    *z0 = _mm256_shuffle_epi8(z, _mm256_setr_epi8(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4,
                                                  4, 4, 4, 5, 5, 5, 5, 6, 6, 6, 6, 7, 7, 7, 7));
    *z1 = _mm256_shuffle_epi8(z, _mm256_setr_epi8(8, 8, 8, 8, 9, 9, 9, 9, 10, 10, 10, 10, 11, 11, 11,
                                                  11, 12, 12, 12, 12, 13, 13, 13, 13, 14, 14, 14, 14,
                                                  15, 15, 15, 15));
}

/* One chunk half: w' for the low and the high nibbles. */
PW__INLINE void unpack(const uint8_t *p, __m256i zb, __m256i *wl, __m256i *wh) {
    const __m256i m4 = _mm256_set1_epi8(0x0F);
    const __m256i raw = _mm256_loadu_si256((const __m256i *)(const void *)p);
    *wl = _mm256_sub_epi8(_mm256_and_si256(raw, m4), zb);
    *wh = _mm256_sub_epi8(_mm256_and_si256(_mm256_srli_epi16(raw, 4), m4), zb);
}

/* Block b of the tile at t into L2: its data (B / 8 lines), scales and zero
 * points (each region read at its own place, so each is prefetched there). */
PW__INLINE void prefetch_block(const uint8_t *t, const geo *g, pw__qb4w_at at) {
    const char *p = (const char *)(t + at.data);
    for (int64_t i = 0; i < g->block_chunks; ++i) _mm_prefetch(p + 64 * i, _MM_HINT_T1);
    _mm_prefetch((const char *)(t + at.scale), _MM_HINT_T1);
    _mm_prefetch((const char *)(t + at.zero), _MM_HINT_T1);
}

/* Where GEMV prefetches: block b of the tile at t, moved on one block per block. */
typedef struct ahead {
    const uint8_t *t;
    int64_t b;
} ahead;

/* The contract's last steps for one row of 16 channels. */
PW__INLINE void finish_row(__m256 acc0, __m256 acc1, const uint8_t *row, const uint8_t *fsum,
                           const uint8_t *bias, __m256 vmin, __m256 vmax, uint8_t *y, int f16,
                           int64_t cols) {
    const pw__qd8_header *h = pw__qd8_hdr(row);
    const __m256 as = _mm256_set1_ps(h->scale), c = _mm256_set1_ps((float)(h->neg_zp - 128));
    const __m256 t0 = _mm256_add_ps(acc0, _mm256_mul_ps(c, _mm256_loadu_ps((const float *)(const void *)fsum)));
    const __m256 t1 = _mm256_add_ps(acc1, _mm256_mul_ps(c, _mm256_loadu_ps((const float *)(const void *)(fsum + 32))));
    __m256 v0 = _mm256_add_ps(_mm256_mul_ps(t0, as), _mm256_loadu_ps((const float *)(const void *)bias));
    __m256 v1 = _mm256_add_ps(_mm256_mul_ps(t1, as), _mm256_loadu_ps((const float *)(const void *)(bias + 32)));
    v0 = _mm256_min_ps(vmax, _mm256_max_ps(vmin, v0));
    v1 = _mm256_min_ps(vmax, _mm256_max_ps(vmin, v1));
    if (f16) {
        const __m128i h0 = _mm256_cvtps_ph(v0, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        const __m128i h1 = _mm256_cvtps_ph(v1, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        if (cols == 16) {
            _mm_storeu_si128((__m128i *)(void *)y, h0);
            _mm_storeu_si128((__m128i *)(void *)(y + 16), h1);
        } else {
            uint16_t out[16];
            _mm_storeu_si128((__m128i *)(void *)out, h0);
            _mm_storeu_si128((__m128i *)(void *)(out + 8), h1);
            memcpy(y, out, 2 * (size_t)cols);
        }
    } else if (cols == 16) {
        _mm256_storeu_ps((float *)(void *)y, v0);
        _mm256_storeu_ps((float *)(void *)y + 8, v1);
    } else {
        float out[16];
        _mm256_storeu_ps(out, v0);
        _mm256_storeu_ps(out + 8, v1);
        memcpy(y, out, 4 * (size_t)cols);
    }
}

/*
 * Two chunks of one row and one half: sums += u . w' over the chunks' 16 k values.
 * a0..a3: the row's u[8j..8j+3], [8j+4..], [8j+8..], [8j+12..]. AVX2: one int32 sum
 * (s0); AVX-VNNI: low nibbles into s0, high into s1.
 */
PW__INLINE void step2(__m256i *s0, __m256i *s1, __m256i a0, __m256i a1, __m256i a2, __m256i a3,
                      __m256i wl0, __m256i wh0, __m256i wl1, __m256i wh1) {
#if defined(PW_AVXVNNI)
    *s0 = _mm256_dpbusd_avx_epi32(*s0, a0, wl0);
    *s1 = _mm256_dpbusd_avx_epi32(*s1, a1, wh0);
    *s0 = _mm256_dpbusd_avx_epi32(*s0, a2, wl1);
    *s1 = _mm256_dpbusd_avx_epi32(*s1, a3, wh1);
#else
    (void)s1;
    const __m256i p0 = _mm256_add_epi16(_mm256_maddubs_epi16(a0, wl0), _mm256_maddubs_epi16(a1, wh0));
    const __m256i p1 = _mm256_add_epi16(_mm256_maddubs_epi16(a2, wl1), _mm256_maddubs_epi16(a3, wh1));
    *s0 = _mm256_add_epi32(*s0, _mm256_madd_epi16(_mm256_add_epi16(p0, p1), _mm256_set1_epi16(1)));
#endif
}

PW__INLINE __m256i sum_of(__m256i s0, __m256i s1) {
#if defined(PW_AVXVNNI)
    return _mm256_add_epi32(s0, s1);
#else
    (void)s1;
    return s0;
#endif
}

/* Batch 1: one row, both halves per chunk (the broadcasts shared). */
static void gemv_tile(const uint8_t *tile, const geo *g, ahead *pf, const uint8_t *row, int64_t kq,
                      uint8_t *y, int f16, int64_t cols, __m256 vmin, __m256 vmax) {
    const uint8_t *u = pw__qd8_u(row, kq);
    __m256 acc0 = _mm256_setzero_ps(), acc1 = acc0;
    for (int64_t b = 0; b < g->nb; ++b) {
        prefetch_block(pf->t, g, at_of(g, pf->b));
        if (++pf->b == g->nb) {
            pf->b = 0;
            pf->t += g->tile_bytes;
        }
        const pw__qb4w_at at = at_of(g, b);
        __m256i z0, z1;
        zero_bytes(tile + at.zero, &z0, &z1);
        __m256i s00 = _mm256_setzero_si256(), s10 = s00, s01 = s00, s11 = s00;
        const int64_t nch = b + 1 == g->nb ? g->last_chunks : g->block_chunks;
        const uint8_t *w = tile + at.data;
        const uint8_t *a = u + 8 * b * g->block_chunks;
        for (int64_t j = 0; j < nch; j += 2, w += 128, a += 16) {
            const __m256i a0 = bcast32(a), a1 = bcast32(a + 4), a2 = bcast32(a + 8), a3 = bcast32(a + 12);
            __m256i wl0, wh0, wl1, wh1;
            unpack(w, z0, &wl0, &wh0);
            unpack(w + 64, z0, &wl1, &wh1);
            step2(&s00, &s01, a0, a1, a2, a3, wl0, wh0, wl1, wh1);
            unpack(w + 32, z1, &wl0, &wh0);
            unpack(w + 96, z1, &wl1, &wh1);
            step2(&s10, &s11, a0, a1, a2, a3, wl0, wh0, wl1, wh1);
        }
        const __m256 sc0 = _mm256_loadu_ps((const float *)(const void *)(tile + at.scale));
        const __m256 sc1 = _mm256_loadu_ps((const float *)(const void *)(tile + at.scale + 32));
        acc0 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sum_of(s00, s01)), sc0, acc0);
        acc1 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sum_of(s10, s11)), sc1, acc1);
    }
    _mm_prefetch((const char *)(pf->t + g->bias), _MM_HINT_T1); /* a tile's bias, ahead */
    finish_row(acc0, acc1, row, tile + g->fsum, tile + g->bias, vmin, vmax, y, f16, cols);
}

/*
 * Batch 1, two tiles at once, with the row's block sums (the AVX-512 kernel's GEMV,
 * qb4w_avx512.h): d_b = sum u * nib - z_b * QS_b, QS_b = the sum of the row's u over
 * block b (pw__qb4w_block_values of them), the same integer as sum u * (nib - z_b).
 * The nibbles go to the dot products as they are (0 .. 15, a signed byte as vpmaddubsw
 * and vpdpbusd want the weights): 3 operations a half-chunk where the subtraction of
 * the zero points took 5, and z_b * QS_b is one vpmulld per block and half. The tiles
 * [n0, n1) are read as PW__QB4W_GEMV_S contiguous parts (kernel/tile32.h,
 * pw__streams_plan), a block of each in turn, every sum its own chain:
 *   AVX-VNNI  per tile and half a low- and a high-nibble sum, one vpdpbusd a chunk
 *             each (8 chains; one tile's four sums, two steps a chunk-pair each, made
 *             vpdpbusd's latency the limit);
 *   AVX2      per tile and half the four vpmaddubsw of two chunks added in int16
 *             (|.| <= 4 * 2 * 255 * 15 = 30600 < 2^15, exact), one vpmaddwd to int32.
 * Each part prefetches its own blocks PW__GEMV_AHEAD / S bytes ahead (prefetch_block),
 * except on AMD Zen 4 (pw__x86_hw_streams), where each tile is read in address order
 * (gemv_records2: a record's four block sums kept in L1 until its scales and zero
 * points, kernel/qb4w.h) and the stream left to the hardware prefetcher: one build
 * switched at run time, packwise bench --formats QB4W --shapes 11008x4096,4096x4096
 * --batch 1, two rounds in turn, fraction of the read, [11008, 4096] / [4096, 4096]:
 * avx2 1 thread B = 32 71-72% / 67-68 -> 79-83 / 79-80, B = 128 69-73 / 65-67 -> 82-84 /
 * 82-84; 2 threads 72-76 / 65-76 -> 80-83 / 83-89 (the AVX-VNNI build not measured:
 * Zen 4 has no AVX-VNNI). The last part's tail, where it has no tile, runs gemv_tile tile
 * by tile (as does a row of more than PW__QB4W_MAX_SUMS blocks). Against gemv_tile alone, in one process,
 * the two in turn (an Intel Xeon VM, 1 thread; [512, 4096] in L2, best of 20 calls, 7
 * rounds; [11008, 4096] cold, 11 rounds): avxvnni B = 32 1.04x in L2, 1.08x cold, B =
 * 128 1.17x and 1.08x; avx2 B = 32 1.25x and 1.06-1.09x, B = 128 1.16x and 1.09-1.13x.
 */
#define PW__QB4W_GEMV_S 2
#define PW__QB4W_KEEP(v) __asm__("" : "+x"(v))
#define PW__QB4W_MAX_SUMS 8192

/* The row's block sums QS_b (the u of block b: 8 * chunks values, chunks even). */
static void row_sums(const geo *g, const uint8_t *u, int32_t *qs) {
    for (int64_t b = 0; b < g->nb; ++b) {
        const int64_t n = 8 * (b + 1 == g->nb ? g->last_chunks : g->block_chunks);
        const uint8_t *p = u + 8 * b * g->block_chunks;
        __m256i s = _mm256_setzero_si256();
        int64_t i = 0;
        for (; i + 32 <= n; i += 32)
            s = _mm256_add_epi64(s, _mm256_sad_epu8(_mm256_loadu_si256((const __m256i *)(const void *)(p + i)),
                                                    _mm256_setzero_si256()));
        if (i < n) /* 16 values left (n is a multiple of 16) */
            s = _mm256_add_epi64(s, _mm256_castsi128_si256(_mm_sad_epu8(
                                        _mm_loadu_si128((const __m128i *)(const void *)(p + i)), _mm_setzero_si128())));
        const __m128i h = _mm_add_epi64(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
        qs[b] = (int32_t)(_mm_cvtsi128_si64(h) + _mm_extract_epi64(h, 1));
    }
}

/* Two chunks (w, w + 64) of one tile's half h: the nibbles as they are. */
PW__INLINE void nibbles2(const uint8_t *w, __m256i *l0, __m256i *h0, __m256i *l1, __m256i *h1) {
    const __m256i m4 = _mm256_set1_epi8(0x0F);
    const __m256i r0 = _mm256_loadu_si256((const __m256i *)(const void *)w);
    const __m256i r1 = _mm256_loadu_si256((const __m256i *)(const void *)(w + 64));
    *l0 = _mm256_and_si256(r0, m4);
    *h0 = _mm256_and_si256(_mm256_srli_epi16(r0, 4), m4);
    *l1 = _mm256_and_si256(r1, m4);
    *h1 = _mm256_and_si256(_mm256_srli_epi16(r1, 4), m4);
}

/* AVX2: acc + the products of two chunks of one tile's half (at w, w + 64) with the
 * activations a0..a3, the four vpmaddubsw added in int16 (gemv_range's bound). */
PW__INLINE __m256i dot2_avx2(__m256i acc, const uint8_t *w, __m256i a0, __m256i a1, __m256i a2,
                             __m256i a3, __m256i ones) {
    __m256i l0, h0, l1, h1;
    nibbles2(w, &l0, &h0, &l1, &h1);
    const __m256i p0 = _mm256_add_epi16(_mm256_maddubs_epi16(a0, l0), _mm256_maddubs_epi16(a1, h0));
    const __m256i p1 = _mm256_add_epi16(_mm256_maddubs_epi16(a2, l1), _mm256_maddubs_epi16(a3, h1));
    return _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_add_epi16(p0, p1), ones));
}

/* acc + (d_b as f32) * scale for one tile's half: d_b = sum - z_b * QS_b. */
PW__INLINE __m256 block_out(__m256 acc, __m256i sum, const uint8_t *z8, int32_t qs, const uint8_t *sc) {
    const __m256i z = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)z8));
    const __m256i d = _mm256_sub_epi32(sum, _mm256_mullo_epi32(z, _mm256_set1_epi32(qs)));
    return _mm256_fmadd_ps(_mm256_cvtepi32_ps(d), _mm256_loadu_ps((const float *)(const void *)sc), acc);
}

/* The integer sums sum[tile][half] of one block of tiles t0 and t1 (its data at byte
 * `data` of each; a constant-free loop over its nch chunks). */
PW__INLINE void gemv_sums2(const uint8_t *t0, const uint8_t *t1, uint64_t data, int64_t nch, const uint8_t *a,
                           __m256i sum[2][2]) {
    const uint8_t *w0 = t0 + data, *w1 = t1 + data;
#if defined(PW_AVXVNNI)
    /* one chunk a step: 8 sums [tile][half][low, high], 2 broadcasts, the mask and two
     * nibble vectors fit the 16 ymm (chunk pairs spilled sums) */
    const __m256i m4 = _mm256_set1_epi8(0x0F);
    __m256i s000 = _mm256_setzero_si256(), s001 = s000, s010 = s000, s011 = s000;
    __m256i s100 = s000, s101 = s000, s110 = s000, s111 = s000;
    for (int64_t j = 0; j < nch; ++j, w0 += 64, w1 += 64, a += 8) {
        const __m256i al = bcast32(a), ah = bcast32(a + 4);
        __m256i r = _mm256_loadu_si256((const __m256i *)(const void *)w0);
        s000 = _mm256_dpbusd_avx_epi32(s000, al, _mm256_and_si256(r, m4));
        s001 = _mm256_dpbusd_avx_epi32(s001, ah, _mm256_and_si256(_mm256_srli_epi16(r, 4), m4));
        r = _mm256_loadu_si256((const __m256i *)(const void *)(w0 + 32));
        s010 = _mm256_dpbusd_avx_epi32(s010, al, _mm256_and_si256(r, m4));
        s011 = _mm256_dpbusd_avx_epi32(s011, ah, _mm256_and_si256(_mm256_srli_epi16(r, 4), m4));
        r = _mm256_loadu_si256((const __m256i *)(const void *)w1);
        s100 = _mm256_dpbusd_avx_epi32(s100, al, _mm256_and_si256(r, m4));
        s101 = _mm256_dpbusd_avx_epi32(s101, ah, _mm256_and_si256(_mm256_srli_epi16(r, 4), m4));
        r = _mm256_loadu_si256((const __m256i *)(const void *)(w1 + 32));
        s110 = _mm256_dpbusd_avx_epi32(s110, al, _mm256_and_si256(r, m4));
        s111 = _mm256_dpbusd_avx_epi32(s111, ah, _mm256_and_si256(_mm256_srli_epi16(r, 4), m4));
        PW__QB4W_KEEP(s000); PW__QB4W_KEEP(s001); PW__QB4W_KEEP(s010); PW__QB4W_KEEP(s011);
        PW__QB4W_KEEP(s100); PW__QB4W_KEEP(s101); PW__QB4W_KEEP(s110); PW__QB4W_KEEP(s111);
    }
    sum[0][0] = _mm256_add_epi32(s000, s001);
    sum[0][1] = _mm256_add_epi32(s010, s011);
    sum[1][0] = _mm256_add_epi32(s100, s101);
    sum[1][1] = _mm256_add_epi32(s110, s111);
#else
    const __m256i ones = _mm256_set1_epi16(1);
    __m256i s00 = _mm256_setzero_si256(), s01 = s00, s10 = s00, s11 = s00; /* [tile][half] */
    for (int64_t j = 0; j < nch; j += 2, w0 += 128, w1 += 128, a += 16) {
        const __m256i a0 = bcast32(a), a1 = bcast32(a + 4), a2 = bcast32(a + 8), a3 = bcast32(a + 12);
        s00 = dot2_avx2(s00, w0, a0, a1, a2, a3, ones);
        s01 = dot2_avx2(s01, w0 + 32, a0, a1, a2, a3, ones);
        s10 = dot2_avx2(s10, w1, a0, a1, a2, a3, ones);
        s11 = dot2_avx2(s11, w1 + 32, a0, a1, a2, a3, ones);
        PW__QB4W_KEEP(s00);
        PW__QB4W_KEEP(s01);
        PW__QB4W_KEEP(s10);
        PW__QB4W_KEEP(s11);
    }
    sum[0][0] = s00;
    sum[0][1] = s01;
    sum[1][0] = s10;
    sum[1][1] = s11;
#endif
}

/* acc[tile][half] + one block's sums weighed (block_out), its zero points and scales at
 * bytes zero and scale of each tile. */
PW__INLINE void gemv_out2(const uint8_t *t0, const uint8_t *t1, uint64_t zero, uint64_t scale,
                          __m256i sum[2][2], int32_t qs, __m256 acc[2][2]) {
#pragma GCC unroll 2
    for (int t = 0; t < 2; ++t) {
        const uint8_t *tile = t ? t1 : t0;
#pragma GCC unroll 2
        for (int h = 0; h < 2; ++h)
            acc[t][h] = block_out(acc[t][h], sum[t][h], tile + zero + 8 * h, qs, tile + scale + 32 * h);
    }
}

/* Block b of tiles t0 and t1 into acc. */
PW__INLINE void gemv_block2(const uint8_t *t0, const uint8_t *t1, const geo *g, int64_t b, int64_t nch,
                            const uint8_t *a, int32_t qs, __m256 acc[2][2]) {
    const pw__qb4w_at at = at_of(g, b);
    __m256i sum[2][2];
    gemv_sums2(t0, t1, at.data, nch, a, sum);
    gemv_out2(t0, t1, at.zero, at.scale, sum, qs, acc);
}

/* Tiles t0 and t1 in address order (kernel/qb4w.h): per record of four whole blocks
 * their sums (kept in L1), then the record's scales and zero points; the blocks after the
 * last such record one by one. No software prefetch: where the hardware prefetcher
 * follows such a stream (pw__x86_hw_streams). */
PW__INLINE void gemv_records2(const uint8_t *t0, const uint8_t *t1, const geo *g, const uint8_t *u,
                              const int32_t *qs, __m256 acc[2][2]) {
    const int64_t full = g->last_chunks == g->block_chunks ? g->nb : g->nb - 1, recs = full / 4;
    const uint64_t rec = 4 * (g->data_bytes + 80);
    for (int64_t r = 0; r < recs; ++r) {
        const uint64_t base = (uint64_t)r * rec;
        __m256i sum[4][2][2];
        for (int i = 0; i < 4; ++i)
            gemv_sums2(t0, t1, base + (uint64_t)i * g->data_bytes, g->block_chunks,
                       u + 8 * (4 * r + i) * g->block_chunks, sum[i]);
        for (int i = 0; i < 4; ++i)
            gemv_out2(t0, t1, base + 4 * g->data_bytes + 256 + 16 * (uint64_t)i,
                      base + 4 * g->data_bytes + 64 * (uint64_t)i, sum[i], qs[4 * r + i], acc);
    }
    for (int64_t b = 4 * recs; b < g->nb; ++b)
        gemv_block2(t0, t1, g, b, b + 1 == g->nb ? g->last_chunks : g->block_chunks,
                    u + 8 * b * g->block_chunks, qs[b], acc);
}

static void gemv_range(const pw__mm_call *c, const geo *g, int64_t n0, int64_t n1, const uint8_t *row,
                       int64_t kq, const int32_t *qs, uint8_t *y0, int f16, __m256 vmin, __m256 vmax) {
    enum { S = PW__QB4W_GEMV_S };
    const size_t esz = f16 ? 2 : 4;
    const uint8_t *u = pw__qd8_u(row, kq);
    const int64_t per_block = (int64_t)(g->tile_bytes / (uint64_t)g->nb) + 1;
    const int64_t ahead_blocks = PW__GEMV_AHEAD / S / per_block + 1;
    const pw__streams p = pw__streams_plan(c, n0, n1, 16, S);
    ahead pf[S];
    for (int s = 0; s < S; ++s)
        pf[s] = (ahead){c->packed + (uint64_t)(p.first + s * p.per + ahead_blocks / g->nb) * g->tile_bytes,
                        ahead_blocks % g->nb};
    const int hw = __atomic_load_n(&pw__x86_hw_streams, __ATOMIC_RELAXED);
    pw__streams_step st;
    for (int64_t j = 0; j < p.per; ++j) {
        pw__streams_at(&p, j, &st);
        if (st.live < S) {
            for (int s = 0; s < st.live; ++s)
                gemv_tile(st.tile[s], g, &pf[s], row, kq, y0 + (size_t)st.t0[s] * esz, f16, st.rows[s], vmin,
                          vmax);
            continue;
        }
        __m256 acc[2][2] = {{_mm256_setzero_ps(), _mm256_setzero_ps()}, {_mm256_setzero_ps(), _mm256_setzero_ps()}};
        if (hw)
            gemv_records2(st.tile[0], st.tile[1], g, u, qs, acc);
        for (int64_t b = 0; !hw && b < g->nb; ++b) {
            for (int s = 0; s < S; ++s) {
                prefetch_block(pf[s].t, g, at_of(g, pf[s].b));
                if (++pf[s].b == g->nb) {
                    pf[s].b = 0;
                    pf[s].t += g->tile_bytes;
                }
            }
            const int64_t nch = b + 1 == g->nb ? g->last_chunks : g->block_chunks;
            gemv_block2(st.tile[0], st.tile[1], g, b, nch, u + 8 * b * g->block_chunks, qs[b], acc);
        }
        for (int s = 0; s < S; ++s) {
            _mm_prefetch((const char *)(pf[s].t + g->bias), _MM_HINT_T1);
            finish_row(acc[s][0], acc[s][1], row, st.tile[s] + g->fsum, st.tile[s] + g->bias, vmin, vmax,
                       y0 + (size_t)st.t0[s] * esz, f16, st.rows[s]);
        }
    }
}

/*
 * R rows (R <= P) x one tile, from panel `a` (P rows interleaved by 8 bytes). Per block,
 * half by half: the half's weights unpacked once, then every row. AVX2: two chunks per
 * step (their four vpmaddubsw summed in int16); AVX-VNNI: one chunk per step, one int32
 * sum per row (P = 8 rows give 8 independent vpdpbusd chains and no spills).
 */
PW__INLINE void gemm_panel(const uint8_t *tile, const geo *g, const uint8_t *a, const uint8_t *pf,
                           const uint8_t *lhs, size_t ldl, uint8_t *y, size_t ldy_bytes, int f16,
                           int64_t cols, __m256 vmin, __m256 vmax, const int R) {
    const int P = PW__QB4W_MR;
    __m256 acc[PW__QB4W_MR][2];
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_ps();
    for (int64_t b = 0; b < g->nb; ++b) {
        const pw__qb4w_at at = at_of(g, b);
        if (pf) prefetch_block(pf, g, at);
        __m256i zz[2];
        zero_bytes(tile + at.zero, &zz[0], &zz[1]);
        const int64_t nch = b + 1 == g->nb ? g->last_chunks : g->block_chunks;
        const uint8_t *wb = tile + at.data;
        const uint8_t *ab = a + (size_t)(8 * P) * (size_t)(b * g->block_chunks);
#pragma GCC unroll 2
        for (int h = 0; h < 2; ++h) {
            __m256i s[PW__QB4W_MR];
#pragma GCC unroll 8
            for (int r = 0; r < R; ++r) s[r] = _mm256_setzero_si256();
            const uint8_t *w = wb + 32 * h, *ap = ab;
#if defined(PW_AVXVNNI)
            for (int64_t j = 0; j < nch; ++j, w += 64, ap += 8 * P) {
                __m256i wl, wh;
                unpack(w, zz[h], &wl, &wh);
#pragma GCC unroll 8
                for (int r = 0; r < R; ++r) {
                    s[r] = _mm256_dpbusd_avx_epi32(s[r], bcast32(ap + 8 * r), wl);
                    s[r] = _mm256_dpbusd_avx_epi32(s[r], bcast32(ap + 8 * r + 4), wh);
                }
            }
#else
            for (int64_t j = 0; j < nch; j += 2, w += 128, ap += 16 * P) {
                __m256i wl0, wh0, wl1, wh1;
                unpack(w, zz[h], &wl0, &wh0);
                unpack(w + 64, zz[h], &wl1, &wh1);
#pragma GCC unroll 8
                for (int r = 0; r < R; ++r) {
                    const uint8_t *ar = ap + 8 * r;
                    __m256i unused = s[r];
                    step2(&s[r], &unused, bcast32(ar), bcast32(ar + 4), bcast32(ar + 8 * P),
                          bcast32(ar + 8 * P + 4), wl0, wh0, wl1, wh1);
                }
            }
#endif
            const __m256 sc =
                _mm256_loadu_ps((const float *)(const void *)(tile + at.scale + 32u * (unsigned)h));
#pragma GCC unroll 8
            for (int r = 0; r < R; ++r)
                acc[r][h] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s[r]), sc, acc[r][h]);
        }
    }
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r)
        finish_row(acc[r][0], acc[r][1], lhs + (size_t)r * ldl, tile + g->fsum, tile + g->bias, vmin, vmax,
                   y + (size_t)r * ldy_bytes, f16, cols);
}

static void run_avx2(const pw__mm_call *c, int64_t n0, int64_t n1, int64_t m0, int64_t m1) {
    const pw__pack_desc *d = c->pack_desc;
    const int f16 = c->y16 != NULL;
    const int64_t kq = pw__qd8_k_padded(d->in);
    geo g;
    g.data_bytes = pw__qb4w_block_data_bytes(d);
    g.fsum = pw__qb4w_fsum_offset(d);
    g.bias = pw__qb4w_bias_offset(d);
    g.nb = pw__qb4w_blocks_of(d);
    g.block_chunks = d->group / 8;
    g.last_chunks = pw__qb4w_block_values(d, g.nb - 1) / 8;
    g.tile_bytes = d->tile_bytes;
    const size_t ldl = c->xq_row_bytes, esz = f16 ? 2 : 4, ldy_bytes = (size_t)c->ldy * esz;
    const size_t panel_bytes = (size_t)PW__QB4W_MR * (size_t)kq;
    const __m256 vmin = _mm256_set1_ps(c->min), vmax = _mm256_set1_ps(c->max);
    /* GEMV prefetches about PW__GEMV_AHEAD bytes of tiles ahead, counted in blocks */
    const int64_t per_block = (int64_t)(d->tile_bytes / (uint64_t)g.nb) + 1;
    const int64_t blocks_ahead = PW__GEMV_AHEAD / per_block + 1;
    ahead pf = {c->packed + (uint64_t)(n0 / 16 + blocks_ahead / g.nb) * d->tile_bytes, blocks_ahead % g.nb};
    if (m1 - m0 == 1 && g.nb <= PW__QB4W_MAX_SUMS) {
        int32_t qs[PW__QB4W_MAX_SUMS];
        const uint8_t *row = c->xq + (size_t)m0 * ldl;
        row_sums(&g, pw__qd8_u(row, kq), qs);
        gemv_range(c, &g, n0, n1, row, kq, qs,
                   (f16 ? (uint8_t *)c->y16 : (uint8_t *)c->y) + (size_t)m0 * ldy_bytes, f16, vmin, vmax);
        return;
    }
    for (int64_t t0 = n0; t0 < n1; t0 += 16) {
        const uint8_t *tile = c->packed + (uint64_t)(t0 / 16) * d->tile_bytes;
        const int64_t cols = n1 - t0 < 16 ? n1 - t0 : 16;
        uint8_t *y = (f16 ? (uint8_t *)c->y16 : (uint8_t *)c->y) + (size_t)t0 * esz;
        if (m1 - m0 == 1) {
            gemv_tile(tile, &g, &pf, c->xq + (size_t)m0 * ldl, kq, y + (size_t)m0 * ldy_bytes, f16, cols,
                      vmin, vmax);
            continue;
        }
        /* m0 is a multiple of mr (the contract), so panels start at whole panels. */
        for (int64_t m = m0; m < m1; m += PW__QB4W_MR) {
            const uint8_t *a = c->xq_panels + (size_t)(m / PW__QB4W_MR) * panel_bytes;
            const uint8_t *rows = c->xq + (size_t)m * ldl;
            const uint8_t *next = m == m0 ? tile + d->tile_bytes : NULL;
            uint8_t *yy = y + (size_t)m * ldy_bytes;
            switch (m1 - m < PW__QB4W_MR ? m1 - m : PW__QB4W_MR) {
#define PW__ROWS(R)                                                                         \
    case R:                                                                                 \
        if (R <= PW__QB4W_MR)                                                               \
            gemm_panel(tile, &g, a, next, rows, ldl, yy, ldy_bytes, f16, cols, vmin, vmax,    \
                       R <= PW__QB4W_MR ? R : 1);                                           \
        break;
                PW__ROWS(1) PW__ROWS(2) PW__ROWS(3) PW__ROWS(4) PW__ROWS(5) PW__ROWS(6)
                PW__ROWS(7) PW__ROWS(8)
#undef PW__ROWS
            default: break;
            }
        }
    }
}

/* Name, key, isa, features and priority are the build's level (avx2_level.h). */
const pw__kernel PW__AVX2_SYM(pw__k_qb4w_n16k8s2) =
    PW__QB4W_KERNEL(16, 8, 2, PW__AVX2_ISA, PW__AVX2_FEATURES(PW_CPU_AVX2 | PW_CPU_F16C), run_avx2,
                    PW__AVX2_PRIO, PW__QB4W_MR, PW__QB4W_MR);
