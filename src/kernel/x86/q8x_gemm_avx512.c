#if !defined(__AVX512F__) || !defined(__AVX512BW__) || !defined(__AVX512VL__) ||            \
    !defined(__AVX512VNNI__) || !defined(__F16C__)
#error "q8x_gemm_avx512.c needs AVX-512 F/BW/VL/VNNI and F16C (the build sets them for *_avx512.c)"
#endif
/*
 * AVX-512 VNNI GEMM over the q8x32k4 family (layout in kernel/q8x.h): the
 * bytes the GEMV kernel reads (the file's size: 34 bytes a block, where the
 * i8g form takes 36), each record loaded once for a panel of up to
 * PW__T32G_MR rows of X. The loops (row blocks, passes, tiles, panels) are
 * tile32_gemm_avx512.h's; this file is the record function. Activations are
 * pw__q8_32 rows; y[i, o] for o in [o0, o1), i in [i0, i1).
 *
 * One block record (1088 bytes) of a tile, rows r < mr of X, c_r = -128 * x_r.sum:
 *
 *   u_s,lo, u_s,hi = bytes [128s, +64), [128s + 64, +64)   s = 0..7: rows 0..15, 16..31
 *   a_rs = bcast(x_r.qs[4s .. 4s+3])
 *   lo_r = c_r + sum_s dpbusd(u_s,lo, a_rs),   hi_r = c_r + sum_s dpbusd(u_s,hi, a_rs)
 *   acc_r,lo += f32(lo_r) * f32(d[0..15]) * x_r.d,   acc_r,hi += f32(hi_r) * f32(d[16..31]) * x_r.d
 *
 * Integer range as the GEMV kernel's (q8x_avx512.c): exact in int32 and f32.
 * Per record and panel: 16 loads, then per row 16 vpdpbusd, 8 activation
 * broadcasts, one offset broadcast and 6 f32 ops; the 20 int32 dots of a 10-row
 * panel stay in registers, its f32 sums in L1 (tile32_gemm_avx512.h).
 *
 * Against q8_0_i8g32_avx512vnni, measured as q4x_gemm_avx512.c records (21
 * interleaved rounds of best-of-25 single calls in one process, load average
 * 14-19), GFLOP/s median [min-max] and per-round ratio median [min-max]:
 *
 *   shape          n  T  i8g                   q8x32k4 GEMM          ratio
 *   [4096, 4096]  16  1   438 [422-453]         479 [386-539]         1.09 [0.88-1.20]
 *                 32  1   458 [430-490]         535 [462-588]         1.15 [0.94-1.25]
 *                128  1   343 [257-557]         375 [271-629]         1.08 [0.71-2.05]
 *   [11008, 4096] 16  1   434 [397-540]         505 [389-598]         1.14 [0.94-1.29]
 *                 32  1   289 [231-480]         285 [263-492]         0.98 [0.55-2.03]
 *                128  1   215 [167-280]         265 [204-573]         1.22 [0.93-2.95]
 *   [4096, 4096]  16  2   777 [313-973]         836 [284-1038]        1.05 [0.39-2.00]
 *                 32  2   469 [271-906]         467 [271-1032]        1.03 [0.57-1.64]
 *                128  2   236 [174-979]         282 [178-1111]        1.34 [0.54-4.21]
 *   [11008, 4096] 16  2   756 [187-883]         770 [116-978]         1.08 [0.14-3.96]
 *                 32  2   252 [145-943]         284 [147-1004]        1.04 [0.18-5.52]
 *                128  2   202 [146-274]         242 [195-437]         1.15 [0.97-1.91]
 *
 * A second run of [4096, 4096] n = 32, 1 thread: 548 vs 525 (1.04 [0.97-1.13]).
 */
#include "format/blocks.h"
#include "kernel/q8x.h"
#include "kernel/x86/tile32_avx512.h"
#include "kernel/x86/tile32_fill_avx512.h"
#include "kernel/x86/tile32_gemm_avx512.h"

#define Q8XG_INLINE static inline __attribute__((always_inline))

Q8XG_INLINE void q8x_gemm_block(const uint8_t *rec, const uint8_t *const *x, float acc[][PW__TILE32_NR],
                                const int mr) {
    __m512i lo[PW__T32G_MR], hi[PW__T32G_MR];
#pragma GCC unroll 10
    for (int r = 0; r < mr; ++r) {
        const pw__q8_32 *xb = (const pw__q8_32 *)x[r];
        lo[r] = hi[r] = _mm512_set1_epi32(-128 * xb->sum);
    }
#pragma GCC unroll 8
    for (int s = 0; s < 8; ++s) {
        const __m512i vl = _mm512_loadu_si512(rec + PW__Q8X_STEP * s);
        const __m512i vh = _mm512_loadu_si512(rec + PW__Q8X_STEP * s + 64);
#pragma GCC unroll 10
        for (int r = 0; r < mr; ++r) {
            const __m512i a = pw__tile32_bcast4(((const pw__q8_32 *)x[r])->qs + 4 * s);
            lo[r] = _mm512_dpbusd_epi32(lo[r], vl, a);
            hi[r] = _mm512_dpbusd_epi32(hi[r], vh, a);
        }
    }
    pw__t32g_scale_add(rec + PW__Q8X_SCALES, x, lo, hi, acc, mr);
}

static void q8x_gemm_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    pw__t32g_run(c, o0, o1, i0, i1, 32, PW__Q8X_RECORD, sizeof(pw__q8_32), q8x_gemm_block);
}

const pw__kernel pw__k_q8_0_q8x32k4_gemm_avx512vnni = PW__Q8X_GEMM_KERNEL(
    "avx512vnni", PW_CPU_AVX512F | PW_CPU_AVX512BW | PW_CPU_AVX512VL | PW_CPU_AVX512VNNI,
    q8x_gemm_run, PW__PRIO_AVX512 + PW__PRIO_GEMM - 1, PW__T32G_MR);

/*
 * GEMM over input-block-major Q8_0 bytes as they are, as q4_0_ibm_gemm_avx512vnni
 * (q4x_gemm_avx512.c) does for Q4_0: each tile's records of a pass are made in an
 * L1 scratch from the 32 blocks of each column, then read by every panel. Step s of
 * a record holds dword s of rows 0..15, then of rows 16..31, each byte XOR 0x80:
 * with rows 16h + 4L + g in 128-bit lane L of register g (16 qs bytes, dwords 4q..4q+3),
 * a 4 x 4 dword transpose in every lane gives steps 4q..4q+3 of half h whole.
 */
Q8XG_INLINE void q8x_record_from_blocks(const uint8_t *src, uint8_t *rec) {
    const size_t bb = sizeof(pw__block_q8_0);
    const __m512i flip = _mm512_set1_epi8((char)0x80);
    for (int h = 0; h < 2; ++h) {
        for (int q = 0; q < 2; ++q) {
            __m512i z[4];
            for (int g = 0; g < 4; ++g)
                z[g] = _mm512_xor_si512(pw__t32f_rows4(src + 2 + 16 * q + 16 * h * bb, bb, g), flip);
            pw__t32f_transpose4_store(z, rec + PW__Q8X_STEP * 4 * q + 64 * h, PW__Q8X_STEP);
        }
    }
    pw__t32f_d_from_blocks(src, (int)bb, rec + PW__Q8X_SCALES);
}

PW__TILE32_IBM_FILL(q8x_fill_ibm, pw__block_q8_0, PW__Q8X_RECORD, q8x_record_from_blocks)

static void q8x_ibm_gemm_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    pw__t32g_run_fill(c, o0, o1, i0, i1, 32, PW__Q8X_RECORD, sizeof(pw__q8_32), q8x_gemm_block,
                      q8x_fill_ibm);
}

const pw__kernel pw__k_q8_0_ibm_gemm_avx512vnni = PW__TILE32_IBM_GEMM_KERNEL(
    "q8_0", PW_FORMAT_Q8_0, Q8_32, "avx512vnni",
    PW_CPU_AVX512F | PW_CPU_AVX512BW | PW_CPU_AVX512VL | PW_CPU_AVX512VNNI, q8x_ibm_gemm_run,
    PW__PRIO_AVX512 + PW__PRIO_GEMM - 1, PW__T32G_MR);
