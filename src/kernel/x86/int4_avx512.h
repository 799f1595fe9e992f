/*
 * What the AVX-512 VNNI int4 kernels share (QC4W: qc4w_gemm_avx512.c, QB4W:
 * qb4w_avx512.c): the batch-1 prefetch distances, the activation broadcast, and
 * the clamp and store that end every output row.
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

/* Batch 1 streams the packed weights once: every line is prefetched into L2
 * PW__GEMV_AHEAD bytes ahead and into L1 PW__GEMV_AHEAD_L1 bytes ahead (measured on a
 * cold 4096 x 4096 QC4W GEMV, as a fraction of a prefetched streaming read: none ~80%,
 * 4 KiB into L1 ~85%, 8 KiB into L2 ~96%; then on [11008, 4096] against the bench's
 * huge-page read bandwidth, L2 8 KiB 1.47-1.52 ms on 1 thread, L2 16 KiB + L1 2 KiB
 * 1.41-1.44 ms, as in the 32-row tilings of kernel/x86/tile32_avx512.h). */
#define PW__GEMV_AHEAD 16384
#define PW__GEMV_AHEAD_L1 2048
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
