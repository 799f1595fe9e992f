#if !defined(__AVX2__) || !defined(__F16C__)
#error "qc4w_gemm_avx2.c needs -mavx2 -mf16c (cmake gives *_avx2.c these flags)"
#endif
/*
 * AVX2 kernel for QC4W family qc4w_n16k8s2 (layout in qc4w/qc4w.h): 16
 * channels (two ymm) by PW__QC4W_MR2 rows of X per micro-tile; batch 1 reads
 * two tiles at once (gemv_range, below).
 *
 * Bytes read per 8 k values: one 64-byte chunk of the tile (two 32-byte
 * halves of 8 channels), and 8 bytes of each row's signed q (two broadcast
 * dwords):
 *
 *   chunk j (64 B):  | ch 0: 4 B | ... | ch 7: 4 B | ch 8: 4 B | ... | ch 15: 4 B |
 *   byte i of ch c:  low nibble w[c, 8j + i], high nibble w[c, 8j + 4 + i]   (i < 4)
 *   QD8 row:         | header 64 B | q[Kp] | u[Kp] |     q[8j .. 8j+3], q[8j+4 .. 8j+7]
 *
 * Sign handling: vpmaddubsw multiplies unsigned by signed bytes and adds
 * pairs into int16. Here the weights are the unsigned side: xor 0x88 turns
 * both signed nibbles of a byte into w + 8 (0..15), and the activations are
 * the signed q, so no pair can saturate (|2 * 15 * 128| < 2^15). vpmaddwd by
 * ones widens to int32. The +8 offset comes back out with the row's sum of q
 * (carried in the QD8 header), the zero point with the packed weight sums:
 *
 *   isum = sum (w + 8) q - 8 * sum q + neg_zp * weight_sum
 *
 * exact in int32 for K <= 65536 (max_k, as the AVX-512 kernel). Then the
 * contract's f32 steps, clamp as max(min, v), min(max, v) so that -0.0
 * survives as in the scalar comparison, half out through vcvtps2ph.
 * A partial last tile is computed in full (its padding channels are zero) and
 * only its first columns are copied out.
 *
 * Built twice (avx2_level.h): avx2, and avxvnni through qc4w_gemm_avxvnni.c.
 * At avxvnni, panels of 1 or 2 rows (batch 1, and the last rows of a batch)
 * replace the two vpmaddubsw, the vpaddw, the vpmaddwd and the vpaddd of a
 * half-chunk and row by two vpdpbusd into int32 sums (the same products, the
 * same bound: |(w + 8) q| <= 15 * 128 per k, K <= 65536), low and high
 * nibbles in separate sums: a sum carried over all of K is a chain of
 * vpdpbusd (several cycles each), and one chain per 8 channels ran batch 1 at
 * 25-27 GB/s against AVX2's 35 (two chains: 34-37). Batches are cut into panels
 * of PW__QC4W_MRV = 5 rows (panel_wide: 10 sums, the weights unpacked once per
 * half-chunk, all low-nibble steps before the high ones); the rows left over
 * take a 4-row panel_wide and the 1-3 row panels above. The first
 * avxvnni GEMM ran 4-row panels through the shared loop below, and GCC 12
 * spilled its sums to the stack: packwise bench --formats QC4W --shapes
 * 11008x4096 --batch 128 --threads 1, PACKWISE_ISA=avxvnni, 236 GOP/s (51.7% of
 * the level's int8 peak) against 370-373 (79-81%) for panel_wide; 6 rows
 * spill again (296, 65%). The packed tiles are the family's (qc4w_pack.c), the
 * same at both levels.
 */
#include "kernel/qc4w.h"
#include "kernel/x86/avx2_level.h"
#include "kernel/x86/tile32_prefetch.h"

#include <immintrin.h>
#include <string.h>

#define PW__QC4W_MR2 4 /* rows of X per micro-tile */

#define PW__INLINE static inline __attribute__((always_inline))

PW__INLINE __m256i bcast32(const int8_t *p) {
    int32_t v;
    memcpy(&v, p, 4);
    return _mm256_set1_epi32(v);
}

/* One row: 16 int32 sums -> outputs, stored whole or as the first `cols`. The sums are
 * sum (w + 8) q (U = 0: the panels), or sum (q + 128) 16 w (U = 1: batch 1 at avxvnni,
 * gemv_range), whose exact shift by 4 leaves sum (q + 128) w; the offsets then come out
 * with the packed weight sums ws:
 *   U = 0:  isum = acc - 8 * sum q + neg_zp * ws
 *   U = 1:  isum = (acc >> 4) + (neg_zp - 128) * ws
 * both sum q w - zp * ws. */
PW__INLINE void finish_row_u(__m256i acc0, __m256i acc1, const uint8_t *row, const uint8_t *meta,
                             __m256 vmin, __m256 vmax, uint8_t *y, int f16, int64_t cols, const int U) {
    const pw__qd8_header *h = pw__qd8_hdr(row);
    const __m256i nzp = _mm256_set1_epi32(U ? h->neg_zp - 128 : h->neg_zp);
    const __m256i off = _mm256_set1_epi32(U ? 0 : -8 * h->sum);
    const __m256 as = _mm256_set1_ps(h->scale);
    __m256 v[2];
    for (int half = 0; half < 2; ++half) {
        const __m256i ws = _mm256_loadu_si256((const __m256i *)(meta + 32 * half));
        const __m256 sc = _mm256_loadu_ps((const float *)(meta + 64 + 32 * half));
        const __m256 bias = _mm256_loadu_ps((const float *)(meta + 128 + 32 * half));
        const __m256i acc = U ? _mm256_srai_epi32(half ? acc1 : acc0, 4) : (half ? acc1 : acc0);
        const __m256i isum = _mm256_add_epi32(_mm256_add_epi32(acc, off), _mm256_mullo_epi32(ws, nzp));
        __m256 t = _mm256_add_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(isum), _mm256_mul_ps(as, sc)), bias);
        v[half] = _mm256_min_ps(vmax, _mm256_max_ps(vmin, t));
    }
    if (f16) {
        uint16_t out[16];
        _mm_storeu_si128((__m128i *)out, _mm256_cvtps_ph(v[0], _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
        _mm_storeu_si128((__m128i *)(out + 8), _mm256_cvtps_ph(v[1], _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
        memcpy(y, out, 2 * (size_t)cols);
    } else if (cols == 16) {
        _mm256_storeu_ps((float *)y, v[0]);
        _mm256_storeu_ps((float *)y + 8, v[1]);
    } else {
        float out[16];
        _mm256_storeu_ps(out, v[0]);
        _mm256_storeu_ps(out + 8, v[1]);
        memcpy(y, out, 4 * (size_t)cols);
    }
}

PW__INLINE void finish_row(__m256i acc0, __m256i acc1, const uint8_t *row, const uint8_t *meta,
                           __m256 vmin, __m256 vmax, uint8_t *y, int f16, int64_t cols) {
    finish_row_u(acc0, acc1, row, meta, vmin, vmax, y, f16, cols, 0);
}

PW__INLINE void panel(const uint8_t *tile, int64_t chunks, const uint8_t *lhs, size_t ldl,
                      uint8_t *y, size_t ldy_bytes, int f16, int64_t cols, __m256 vmin,
                      __m256 vmax, const int MR) {
    const __m256i bias8 = _mm256_set1_epi8((char)0x88), m4 = _mm256_set1_epi8(0x0F);
    const __m256i ones = _mm256_set1_epi16(1);
    /* avxvnni, MR <= 2: vpdpbusd, the high nibbles in sums of their own (acc_hi), since
     * each vpdpbusd's latency (several cycles) bounds a sum carried over all of K; MR = 4
     * runs the AVX2 sequence at both levels (the file's header says why) */
    const int split = PW__VNNI && MR <= 2;
    __m256i acc[PW__QC4W_MR2][2], acc_hi[2][2];
    const int8_t *q = (const int8_t *)(lhs + sizeof(pw__qd8_header));
#pragma GCC unroll 4
    for (int r = 0; r < MR; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_si256();
    for (int r = 0; r < 2; ++r) acc_hi[r][0] = acc_hi[r][1] = _mm256_setzero_si256();
    for (int64_t j = 0; j < chunks; ++j) {
        /* Tiles are contiguous: batch 1 streams them into L1 PW__TILE32_PF bytes ahead, as
         * every GEMV kernel does (tile32_prefetch.h); GEMM fetches 8 KiB ahead into L2
         * (past the end either is a no-op). */
        if (MR == 1)
            pw__tile32_prefetch(tile + 64 * j, 64);
        else
            _mm_prefetch((const char *)(tile + 64 * j + 8192), _MM_HINT_T1);
        if (split) {
            /* both halves' weights, then row by row */
            __m256i wl[2], wh[2];
            for (int half = 0; half < 2; ++half) {
                const __m256i raw = _mm256_xor_si256(
                    _mm256_load_si256((const __m256i *)(tile + 64 * j + 32 * half)), bias8);
                wl[half] = _mm256_and_si256(raw, m4);
                wh[half] = _mm256_and_si256(_mm256_srli_epi16(raw, 4), m4);
            }
#pragma GCC unroll 4
            for (int r = 0; r < MR; ++r) {
                const int8_t *a = q + r * ldl + 8 * j;
                const __m256i alo = bcast32(a), ahi = bcast32(a + 4);
                for (int half = 0; half < 2; ++half) {
                    acc[r][half] = pw__dpbusd(acc[r][half], wl[half], alo);
                    acc_hi[r & 1][half] = pw__dpbusd(acc_hi[r & 1][half], wh[half], ahi);
                }
            }
            continue;
        }
#pragma GCC unroll 2
        for (int half = 0; half < 2; ++half) {
            const __m256i raw = _mm256_xor_si256(
                _mm256_load_si256((const __m256i *)(tile + 64 * j + 32 * half)), bias8);
            const __m256i wl = _mm256_and_si256(raw, m4);
            const __m256i wh = _mm256_and_si256(_mm256_srli_epi16(raw, 4), m4);
#pragma GCC unroll 4
            for (int r = 0; r < MR; ++r) {
                const int8_t *a = q + r * ldl + 8 * j;
                const __m256i p = _mm256_add_epi16(_mm256_maddubs_epi16(wl, bcast32(a)),
                                                   _mm256_maddubs_epi16(wh, bcast32(a + 4)));
                acc[r][half] = _mm256_add_epi32(acc[r][half], _mm256_madd_epi16(p, ones));
            }
        }
    }
    if (split)
        for (int r = 0; r < MR; ++r)
            for (int half = 0; half < 2; ++half)
                acc[r][half] = _mm256_add_epi32(acc[r][half], acc_hi[r & 1][half]);
    const uint8_t *meta = tile + 64 * chunks;
#pragma GCC unroll 4
    for (int r = 0; r < MR; ++r)
        finish_row(acc[r][0], acc[r][1], lhs + r * ldl, meta, vmin, vmax, y + r * ldy_bytes, f16, cols);
}

/* Wide panels of MR rows (PW__QC4W_MRV at avxvnni, PW__QC4W_MR2 at avx2), the weights of a
 * chunk unpacked once for all of them, into 2 x MR int32 sums of 8 channels.
 *   AVX-VNNI: a vpdpbusd per row and nibble, the low nibbles of every row before the
 *   high ones, so that each chain's two steps are MR instructions apart.
 *   AVX2: per row and half, the vpmaddubsw pair sums are added in int16 over
 *   PW__QC4W_SUM16 chunks before one vpmaddwd widens them into the int32 sum: 16
 *   products of |(w + 8) q| <= 15 * 128 are at most 30720 < 2^15, exact. One vpmaddubsw
 *   and one vpaddw per 32 products, as the level's peak loop (bench_peak_avx2.c);
 *   widening every chunk took a multiplier slot each time.
 * Written as one loop for both levels (the AVX2 shape at avxvnni, or the reverse), GCC 12
 * spilled sums again: avxvnni 236-241 GOP/s against 370-392. */
#define PW__QC4W_MRV 5
#define PW__QC4W_SUM16 4
PW__INLINE void panel_wide(const uint8_t *tile, int64_t chunks, const uint8_t *lhs, size_t ldl,
                           uint8_t *y, size_t ldy_bytes, int f16, int64_t cols, __m256 vmin,
                           __m256 vmax, const int MR) {
    enum { MAXR = PW__QC4W_MRV > PW__QC4W_MR2 ? PW__QC4W_MRV : PW__QC4W_MR2 };
    const __m256i bias8 = _mm256_set1_epi8((char)0x88), m4 = _mm256_set1_epi8(0x0F);
    const int8_t *q = (const int8_t *)(lhs + sizeof(pw__qd8_header));
    __m256i a0[MAXR], a1[MAXR];
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) a0[r] = a1[r] = _mm256_setzero_si256();
    if (PW__VNNI) {
        for (int64_t j = 0; j < chunks; ++j) {
            _mm_prefetch((const char *)(tile + 64 * j + 8192), _MM_HINT_T1);
            const __m256i r0 = _mm256_xor_si256(_mm256_load_si256((const __m256i *)(tile + 64 * j)), bias8);
            const __m256i r1 = _mm256_xor_si256(_mm256_load_si256((const __m256i *)(tile + 64 * j + 32)), bias8);
            const __m256i l0 = _mm256_and_si256(r0, m4), l1 = _mm256_and_si256(r1, m4);
#pragma GCC unroll 8
            for (int r = 0; r < MR; ++r) {
                const __m256i a = bcast32(q + r * ldl + 8 * j);
                a0[r] = pw__dpbusd(a0[r], l0, a);
                a1[r] = pw__dpbusd(a1[r], l1, a);
            }
            const __m256i h0 = _mm256_and_si256(_mm256_srli_epi16(r0, 4), m4);
            const __m256i h1 = _mm256_and_si256(_mm256_srli_epi16(r1, 4), m4);
#pragma GCC unroll 8
            for (int r = 0; r < MR; ++r) {
                const __m256i a = bcast32(q + r * ldl + 8 * j + 4);
                a0[r] = pw__dpbusd(a0[r], h0, a);
                a1[r] = pw__dpbusd(a1[r], h1, a);
            }
        }
    } else {
        for (int64_t j0 = 0; j0 < chunks; j0 += PW__QC4W_SUM16) {
            const int64_t j1 = chunks - j0 < PW__QC4W_SUM16 ? chunks : j0 + PW__QC4W_SUM16;
            __m256i s0[MAXR], s1[MAXR];
#pragma GCC unroll 8
            for (int r = 0; r < MR; ++r) s0[r] = s1[r] = _mm256_setzero_si256();
            for (int64_t j = j0; j < j1; ++j) {
                _mm_prefetch((const char *)(tile + 64 * j + 8192), _MM_HINT_T1);
                const __m256i r0 = _mm256_xor_si256(_mm256_load_si256((const __m256i *)(tile + 64 * j)), bias8);
                const __m256i r1 = _mm256_xor_si256(_mm256_load_si256((const __m256i *)(tile + 64 * j + 32)), bias8);
                const __m256i l0 = _mm256_and_si256(r0, m4), l1 = _mm256_and_si256(r1, m4);
                const __m256i h0 = _mm256_and_si256(_mm256_srli_epi16(r0, 4), m4);
                const __m256i h1 = _mm256_and_si256(_mm256_srli_epi16(r1, 4), m4);
#pragma GCC unroll 8
                for (int r = 0; r < MR; ++r) {
                    const __m256i alo = bcast32(q + r * ldl + 8 * j), ahi = bcast32(q + r * ldl + 8 * j + 4);
                    s0[r] = _mm256_add_epi16(s0[r], _mm256_maddubs_epi16(l0, alo));
                    s1[r] = _mm256_add_epi16(s1[r], _mm256_maddubs_epi16(l1, alo));
                    s0[r] = _mm256_add_epi16(s0[r], _mm256_maddubs_epi16(h0, ahi));
                    s1[r] = _mm256_add_epi16(s1[r], _mm256_maddubs_epi16(h1, ahi));
                }
            }
            const __m256i ones = _mm256_set1_epi16(1);
#pragma GCC unroll 8
            for (int r = 0; r < MR; ++r) {
                a0[r] = _mm256_add_epi32(a0[r], _mm256_madd_epi16(s0[r], ones));
                a1[r] = _mm256_add_epi32(a1[r], _mm256_madd_epi16(s1[r], ones));
            }
        }
    }
    const uint8_t *meta = tile + 64 * chunks;
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r)
        finish_row(a0[r], a1[r], lhs + r * ldl, meta, vmin, vmax, y + r * ldy_bytes, f16, cols);
}

/*
 * Batch 1 over the tiles [n0, n1): PW__QC4W_GEMV_S contiguous parts of the range read at
 * once (kernel/tile32.h, pw__streams_plan; a chunk of each part's tile in turn), each
 * stream prefetched as the panels prefetch one (pw__tile32_prefetch). Every sum is its
 * own chain, one step per chunk: a chain of several dependent dot products a chunk made
 * their latency the limit (panel(), MR = 1: 21-23 GB/s with the weight in L2 at both
 * levels, where AVX-512's batch 1 reads 56). Measured against panel() in one process,
 * the two in turn (GEMV [512, 4096], in L2, best of 20 calls, 7-9 rounds; [11008,
 * 4096] cold, 15 rounds; an Intel Xeon VM): avxvnni 1.26-1.29x in L2, cold 1.09x on 1
 * thread and 1.10x on 2; avx2 1.06-1.12x in L2, cold 1.04x on 1 and 2.
 *   AVX-VNNI: the activations as u = q + 128 (unsigned), the weights as 16 w, a signed
 *   byte: `and 0xF0` of the byte gives the high nibble's, a dword shift left by 4 first
 *   the low one's (the AVX-512 kernel's unpacking, qc4w_gemm_avx512.c): 3 operations a
 *   32-byte half-chunk and 2 vpdpbusd, low and high nibbles in sums of their own;
 *   |16 * sum u w| <= 16 * 255 * 8 * K < 2^31 for K <= 65536 (max_in).
 *   AVX2: the weights as w + 8 (xor 0x88, the panels' form) against the signed q; the
 *   vpmaddubsw pair sums added in int16 over PW__QC4W_SUM16 chunks (panel_wide's bound)
 *   before one vpmaddwd widens them.
 * The last part's tail, where it has no tile, takes panel() tile by tile.
 */
#define PW__QC4W_GEMV_S 2
#define PW__QC4W_KEEP(v) __asm__("" : "+x"(v))

/* Batch 1 prefetches its streams PW__TILE32_PF ahead as pw__tile32_prefetch does, with
 * the hint read once per call (T1: Intel cores and AMD Zen 4, tile32_prefetch.h), not at
 * every chunk; or leaves them to the hardware where it streams faster so (PF = 0 on Zen
 * 4, pw__x86_hw_streams: at avx2 there, two rounds of both in turn, 1 thread / 2
 * threads, [11008, 4096] 72.7-81.8 / 78.7-79.0% -> 84.5-85.4 / 87.0-90.8, [4096, 4096]
 * 58.1-61.0 / 85.0-87.1 -> 83.4-83.6 / 92.4-92.9). */

/* Two tiles' int32 sums (s0: tile w0, s1: tile w1; [0] channels 0..7, [1] 8..15) over
 * every chunk, as gemv_range's comment says per level. Named sums, not arrays: GCC 12
 * kept arrays of them on the stack. */
PW__INLINE void gemv_two(const uint8_t *w0, const uint8_t *w1, const int8_t *q, const uint8_t *u,
                         int64_t chunks, __m256i s0[2], __m256i s1[2], const int PF, const int T1) {
    if (PW__VNNI) {
        const __m256i m4 = _mm256_set1_epi8((char)0xF0);
        __m256i a00 = _mm256_setzero_si256(), a01 = a00, a10 = a00, a11 = a00;
        __m256i h00 = a00, h01 = a00, h10 = a00, h11 = a00;
        for (int64_t k = 0; k < chunks; ++k, w0 += 64, w1 += 64) {
            const __m256i ul = bcast32((const int8_t *)(u + 8 * k));
            const __m256i uh = bcast32((const int8_t *)(u + 8 * k + 4));
            if (PF) {
                pw__x86_prefetch_line(w0 + PW__TILE32_PF, T1);
                pw__x86_prefetch_line(w1 + PW__TILE32_PF, T1);
            }
            const __m256i r00 = _mm256_load_si256((const __m256i *)w0);
            const __m256i r01 = _mm256_load_si256((const __m256i *)(w0 + 32));
            const __m256i r10 = _mm256_load_si256((const __m256i *)w1);
            const __m256i r11 = _mm256_load_si256((const __m256i *)(w1 + 32));
            a00 = pw__dpbusd(a00, ul, _mm256_and_si256(_mm256_slli_epi32(r00, 4), m4));
            a01 = pw__dpbusd(a01, ul, _mm256_and_si256(_mm256_slli_epi32(r01, 4), m4));
            a10 = pw__dpbusd(a10, ul, _mm256_and_si256(_mm256_slli_epi32(r10, 4), m4));
            a11 = pw__dpbusd(a11, ul, _mm256_and_si256(_mm256_slli_epi32(r11, 4), m4));
            h00 = pw__dpbusd(h00, uh, _mm256_and_si256(r00, m4));
            h01 = pw__dpbusd(h01, uh, _mm256_and_si256(r01, m4));
            h10 = pw__dpbusd(h10, uh, _mm256_and_si256(r10, m4));
            h11 = pw__dpbusd(h11, uh, _mm256_and_si256(r11, m4));
            PW__QC4W_KEEP(a00); PW__QC4W_KEEP(a01); PW__QC4W_KEEP(a10); PW__QC4W_KEEP(a11);
            PW__QC4W_KEEP(h00); PW__QC4W_KEEP(h01); PW__QC4W_KEEP(h10); PW__QC4W_KEEP(h11);
        }
        s0[0] = _mm256_add_epi32(a00, h00);
        s0[1] = _mm256_add_epi32(a01, h01);
        s1[0] = _mm256_add_epi32(a10, h10);
        s1[1] = _mm256_add_epi32(a11, h11);
    } else {
        const __m256i bias8 = _mm256_set1_epi8((char)0x88), m4 = _mm256_set1_epi8(0x0F);
        const __m256i ones = _mm256_set1_epi16(1);
        __m256i a00 = _mm256_setzero_si256(), a01 = a00, a10 = a00, a11 = a00;
        for (int64_t k0 = 0; k0 < chunks; k0 += PW__QC4W_SUM16) {
            const int64_t k1 = chunks - k0 < PW__QC4W_SUM16 ? chunks : k0 + PW__QC4W_SUM16;
            __m256i t00 = _mm256_setzero_si256(), t01 = t00, t10 = t00, t11 = t00;
            for (int64_t k = k0; k < k1; ++k) {
                const uint8_t *v0 = w0 + 64 * k, *v1 = w1 + 64 * k;
                const __m256i ql = bcast32(q + 8 * k), qh = bcast32(q + 8 * k + 4);
                if (PF) {
                    pw__x86_prefetch_line(v0 + PW__TILE32_PF, T1);
                    pw__x86_prefetch_line(v1 + PW__TILE32_PF, T1);
                }
                const __m256i r00 = _mm256_xor_si256(_mm256_load_si256((const __m256i *)v0), bias8);
                const __m256i r01 = _mm256_xor_si256(_mm256_load_si256((const __m256i *)(v0 + 32)), bias8);
                const __m256i r10 = _mm256_xor_si256(_mm256_load_si256((const __m256i *)v1), bias8);
                const __m256i r11 = _mm256_xor_si256(_mm256_load_si256((const __m256i *)(v1 + 32)), bias8);
                t00 = _mm256_add_epi16(t00, _mm256_maddubs_epi16(_mm256_and_si256(r00, m4), ql));
                t01 = _mm256_add_epi16(t01, _mm256_maddubs_epi16(_mm256_and_si256(r01, m4), ql));
                t10 = _mm256_add_epi16(t10, _mm256_maddubs_epi16(_mm256_and_si256(r10, m4), ql));
                t11 = _mm256_add_epi16(t11, _mm256_maddubs_epi16(_mm256_and_si256(r11, m4), ql));
                t00 = _mm256_add_epi16(t00, _mm256_maddubs_epi16(_mm256_and_si256(_mm256_srli_epi16(r00, 4), m4), qh));
                t01 = _mm256_add_epi16(t01, _mm256_maddubs_epi16(_mm256_and_si256(_mm256_srli_epi16(r01, 4), m4), qh));
                t10 = _mm256_add_epi16(t10, _mm256_maddubs_epi16(_mm256_and_si256(_mm256_srli_epi16(r10, 4), m4), qh));
                t11 = _mm256_add_epi16(t11, _mm256_maddubs_epi16(_mm256_and_si256(_mm256_srli_epi16(r11, 4), m4), qh));
            }
            a00 = _mm256_add_epi32(a00, _mm256_madd_epi16(t00, ones));
            a01 = _mm256_add_epi32(a01, _mm256_madd_epi16(t01, ones));
            a10 = _mm256_add_epi32(a10, _mm256_madd_epi16(t10, ones));
            a11 = _mm256_add_epi32(a11, _mm256_madd_epi16(t11, ones));
        }
        s0[0] = a00;
        s0[1] = a01;
        s1[0] = a10;
        s1[1] = a11;
    }
}

static void gemv_range(const pw__mm_call *c, int64_t n0, int64_t n1, const uint8_t *lhs, uint8_t *y0,
                       int f16, __m256 vmin, __m256 vmax) {
    enum { S = PW__QC4W_GEMV_S };
    const int64_t chunks = c->pack_desc->in_padded / 8;
    const size_t esz = f16 ? 2 : 4;
    const int8_t *q = (const int8_t *)(lhs + sizeof(pw__qd8_header));
    const uint8_t *u = lhs + sizeof(pw__qd8_header) + c->pack_desc->in_padded;
    const int t1 = __atomic_load_n(&pw__x86_prefetch_l2, __ATOMIC_RELAXED);
    const int hw = __atomic_load_n(&pw__x86_hw_streams, __ATOMIC_RELAXED);
    const pw__streams p = pw__streams_plan(c, n0, n1, 16, S);
    pw__streams_step st;
    for (int64_t j = 0; j < p.per; ++j) {
        pw__streams_at(&p, j, &st);
        if (st.live < S) {
            for (int s = 0; s < st.live; ++s)
                panel(st.tile[s], chunks, lhs, 0, y0 + (size_t)st.t0[s] * esz, 0, f16, st.rows[s],
                      vmin, vmax, 1);
            continue;
        }
        __m256i s0[2], s1[2];
        if (hw)
            gemv_two(st.tile[0], st.tile[1], q, u, chunks, s0, s1, 0, 0);
        else if (t1)
            gemv_two(st.tile[0], st.tile[1], q, u, chunks, s0, s1, 1, 1);
        else
            gemv_two(st.tile[0], st.tile[1], q, u, chunks, s0, s1, 1, 0);
        finish_row_u(s0[0], s0[1], lhs, st.tile[0] + 64 * chunks, vmin, vmax, y0 + (size_t)st.t0[0] * esz,
                     f16, st.rows[0], PW__VNNI);
        finish_row_u(s1[0], s1[1], lhs, st.tile[1] + 64 * chunks, vmin, vmax, y0 + (size_t)st.t0[1] * esz,
                     f16, st.rows[1], PW__VNNI);
    }
}

static void run_avx2(const pw__mm_call *c, int64_t n0, int64_t n1, int64_t m0, int64_t m1) {
    const pw__pack_desc *d = c->pack_desc;
    const int f16 = c->y16 != NULL;
    const int64_t chunks = d->in_padded / 8;
    const size_t ldl = c->xq_row_bytes, esz = f16 ? 2 : 4, ldy_bytes = (size_t)c->ldy * esz;
    const __m256 vmin = _mm256_set1_ps(c->min), vmax = _mm256_set1_ps(c->max);
    if (m1 - m0 == 1) {
        gemv_range(c, n0, n1, c->xq + (size_t)m0 * ldl,
                   (f16 ? (uint8_t *)c->y16 : (uint8_t *)c->y) + (size_t)m0 * ldy_bytes, f16, vmin, vmax);
        return;
    }
    for (int64_t t0 = n0; t0 < n1; t0 += 16) {
        const uint8_t *tile = c->packed + (uint64_t)(t0 / 16) * d->tile_bytes;
        const int64_t cols = n1 - t0 < 16 ? n1 - t0 : 16;
        uint8_t *y = (f16 ? (uint8_t *)c->y16 : (uint8_t *)c->y) + (size_t)t0 * esz;
        int64_t m = m0;
        if (PW__VNNI)
            for (; m + PW__QC4W_MRV <= m1; m += PW__QC4W_MRV)
                panel_wide(tile, chunks, c->xq + (size_t)m * ldl, ldl, y + (size_t)m * ldy_bytes,
                           ldy_bytes, f16, cols, vmin, vmax, PW__QC4W_MRV);
        for (; m + PW__QC4W_MR2 <= m1; m += PW__QC4W_MR2)
            panel_wide(tile, chunks, c->xq + (size_t)m * ldl, ldl, y + (size_t)m * ldy_bytes,
                       ldy_bytes, f16, cols, vmin, vmax, PW__QC4W_MR2);
        const uint8_t *a = c->xq + (size_t)m * ldl;
        uint8_t *yy = y + (size_t)m * ldy_bytes;
        switch (m1 - m) {
        case 3: panel(tile, chunks, a, ldl, yy, ldy_bytes, f16, cols, vmin, vmax, 3); break;
        case 2: panel(tile, chunks, a, ldl, yy, ldy_bytes, f16, cols, vmin, vmax, 2); break;
        case 1: panel(tile, chunks, a, ldl, yy, ldy_bytes, f16, cols, vmin, vmax, 1); break;
        default: break;
        }
    }
}

/* Name, key, isa, features and priority are the build's level (avx2_level.h). */
const pw__kernel PW__AVX2_SYM(pw__k_qc4w_n16k8s2) =
    PW__QC4W_KERNEL(16, 8, 2, PW__AVX2_ISA, PW__AVX2_FEATURES(PW_CPU_AVX2 | PW_CPU_F16C), run_avx2,
                    PW__AVX2_PRIO, PW__VNNI ? PW__QC4W_MRV : PW__QC4W_MR2, 65536, 0);
