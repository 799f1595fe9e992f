/*
 * What the AVX-512 VNNI int4 kernels share (QC4W: qc4w_gemm_avx512.c, QB4W:
 * qb4w_avx512.h and its qb4w_ch*_avx512.c): the batch-1 prefetch distances, the
 * activation broadcast, and the clamp and store that end every output row.
 */
#ifndef PACKWISE_KERNEL_X86_INT4_AVX512_H
#define PACKWISE_KERNEL_X86_INT4_AVX512_H

#if !defined(__AVX512F__) || !defined(__AVX512BW__) || !defined(__AVX512VL__) || \
    !defined(__AVX512VNNI__) || !defined(__F16C__)
#error "int4_avx512.h needs -mavx512f -mavx512bw -mavx512vl -mavx512vnni -mf16c (cmake gives *_avx512.c these flags)"
#endif

#include <immintrin.h>
#include <stdint.h>
#include <string.h>

/* Batch 1 streams the packed weights once, every line prefetched into L1 (hint T0,
 * nothing into L2; into L2 on Intel and Zen 4, and QC4W not at all on Zen 4:
 * tile32_prefetch.h) a fixed distance ahead: QC4W PW__TILE32_PF bytes (8 KiB; 2 KiB on
 * Zen 5, pw__tile32_prefetch_near), as the 32-row tilings do (tile32_prefetch.h); QB4W's batch-1 path without block sums
 * (gemv_tile) PW__QB4W_PF bytes. The QB4W figures below are of its version-2 tile, whose
 * data, scales and zero points were three streams each prefetched where it was read;
 * since version 3 (records of four blocks, kernel/qb4w.h) its main batch-1 path reads
 * each tile in address order as QC4W does (qb4w_avx512.h has the figures, where the
 * interleaved records did raise the rate on a Zen 4 VM, against the conclusion below).
 * Measured with packwise bench --shapes 11008x4096 --batch 1 --threads 1, three runs
 * each, fraction of the same run's read of the same bytes: the earlier pair (L2 16 KiB
 * + L1 2 KiB) QC4W 73-78%, QB4W 63-74%; L1 8 KiB QC4W 84-93%; L1 4 KiB QC4W 86-90%,
 * QB4W 81-88% (B = 32 and 128); QB4W at 2, 3, 8 and 12 KiB 71-79%, 77-84%, 74-81%,
 * 72-78%. The three streams are not what holds QB4W/32 below QC4W: a timing-only build
 * that read no scales or zero points (wrong sums) streamed the data at the rate the
 * whole tiles stream (B = 32, [11008, 4096]: 23.6 MB in 0.67-0.71 ms against 29.7 MB in
 * 0.82-0.87 ms, 34-35 GB/s either way), so interleaving them with the data would not
 * raise it; the scales and zero points cost their bytes, no more. Without the per-block
 * work too (zero points, block sums, scales) the data alone ran at 37 GB/s (0.63-0.64
 * ms): the loop's own ceiling here. Prefetching the data linearly as QC4W does (every
 * 128 bytes, 3 or 8 KiB ahead) with only the scales and zero points by blocks: 75-82%
 * against 80-84%. */
#define PW__QB4W_PF 4096
#define PW__INLINE static inline __attribute__((always_inline))

/* Four bytes of activations, in every dword. */
PW__INLINE __m512i bcast32(const uint8_t *p) {
    int32_t v;
    memcpy(&v, p, 4);
    return _mm512_set1_epi32(v);
}

/* Clamp as max(min, v), then min(max, v) (vmaxps returns its second operand unless the
 * first is greater, which keeps a -0.0 v as the scalar comparison does), and store the
 * mask's lanes: half through vcvtps2ph (nearest even) when f16, else f32. */
PW__INLINE void clamp_store16(__m512 v, __m512 vmin, __m512 vmax, void *y, int f16, __mmask16 mask) {
    v = _mm512_min_ps(vmax, _mm512_max_ps(vmin, v));
    if (f16)
        _mm256_mask_storeu_epi16(y, mask, _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    else
        _mm512_mask_storeu_ps(y, mask, v);
}

#endif
