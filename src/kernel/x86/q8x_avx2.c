#if !defined(__AVX2__) || !defined(__FMA__) || !defined(__F16C__)
#error "q8x_avx2.c needs AVX2, FMA and F16C (the build sets them for *_avx2.c and *_avxvnni.c)"
#endif
/*
 * AVX2 and AVX-VNNI GEMV and GEMM over the q8x32k4 family (layout in
 * kernel/q8x.h): the bytes the AVX-512 kernels read, so a weight packed (or a
 * cache file written) on an AVX-512 machine serves these levels as it is. The
 * loops are tile32_avx2.h's; this file is the record functions, built twice
 * (avx2_level.h: as itself, and through q8x_avxvnni.c).
 *
 * A 128-byte step s of a record is four ymm: bytes [128s + 32q, 128s + 32q + 32)
 * hold rows 8q..8q+7 (q = 0..3), four k values per int32 lane, each byte
 * u = q + 128 (the weight's sign bit flipped). So ymm q of every step feeds
 * acc[q] of tile32_avx2.h directly, and the scales of those rows are the 8 fp16
 * at byte 1024 + 16q. Per record, row of X and ymm q (a_s = x.qs[4s .. 4s+3]
 * broadcast to every int32 lane):
 *
 *   AVX-VNNI  dot = -128 * x.sum + sum_s dpbusd(u_s, a_s): the AVX-512 kernel's
 *             sums (q8x_avx512.c), |sum_s dpbusd| <= 32 * 255 * 127 < 2^20, exact.
 *   AVX2      vpmaddubsw saturates its int16 pair sums, and u (0..255) times
 *             a (-127..127) pairs reach 2 * 255 * 127 = 64770: u cannot be a
 *             factor. With w = u ^ 0x80 = q as int8:
 *                 dot = sum_s madd(maddubs(|w|, sign(a_s, w)), 1)
 *             |w| read as unsigned is |q| (0..128, -128 included: vpabsb gives 0x80),
 *             sign(a, w) = a * sgn(q) (-127..127: the activation quantizer clamps to
 *             [-127, 127], act.c, so -a never wraps), and each product is q * a:
 *             pair sums |.| <= 2 * 128 * 127 = 32512, exact in int16; every step is
 *             widened by vpmaddwd (two pair sums can reach 65024, so no int16 sum
 *             over steps). No offset term: the dots are sum q * a outright,
 *             |dot| <= 32 * 128 * 127 < 2^19, exact in int32 and in f32.
 *             The sign goes on the activation, not the weight: sign(w, a) with
 *             |a| would turn q = -128 into -128 again where a < 0 (-(-128) wraps
 *             in int8), the case test_kernels_extremes builds (q = -128, 127).
 *
 * then acc += f32(dot) * f32(d) * x.d for each group of 8 rows, as the other
 * kernels. GEMM: the same per row of X for a panel of up to 4 rows
 * (tile32_avx2.h keeps the f32 sums in L1), each 64-byte half of a step (rows
 * 0..15, then 16..31) loaded (and at AVX2 turned into |w| and w) once per panel.
 * Per 32 multiply-adds and row of X: VNNI one vpdpbusd; AVX2 vpsignb, vpmaddubsw,
 * vpmaddwd, vpaddd, two multiplier slots where the level's peak loop
 * (bench_peak_avx2.c: vpmaddubsw + vpaddw) has one, and on Zen 5 vmulps, vfmadd
 * and half the vpsignb go to the same two pipes (i8g_avx2.c measured this for the
 * same sign form): about 0.40 of the avx2 peak at best, so the AVX2 GEMM cannot
 * reach 0.60. Per record and row of X the GEMM adds to its 32 dot instructions
 * 4 x (vcvtdq2ps, vmulps, vfmadd, f32 load and store) and, at AVX2, 16 / mr
 * weight ops (vpxor, vpabsb); at AVX-VNNI a half record keeps 2 x mr = 8 vpdpbusd
 * chains in flight, what Zen 5 needs (2 a cycle, latency 4; bench_peak_avxvnni.c).
 *
 * Measured (Zen 5 EPYC VM, 2 vCPUs shared with other builds, load average 4-6:
 * single runs swing by 20%): packwise bench --formats Q8_0 --shapes 11008x4096
 * --batch 1,128 --threads 1, three rounds at each level, and the kernels Q8_0
 * took before (--kernel q8_0_rm_<isa> for GEMV, q8_0_i8g32_<isa> for GEMM) in the
 * same rounds; GEMV as a fraction of the same run's read of the bytes, GEMM of the
 * level's int8 peak (avx2 363-367, avxvnni 412-422 GOP/s):
 *
 *   avx2     GEMV 69-80% (25.1-26.0 GB/s in two rounds, 18.6 in the third; rm 60-73%)
 *            GEMM 27-33%, 100-121 GFLOP/s (i8g32 26-35%; rm 17.7-17.8% in an earlier round)
 *   avxvnni  GEMV 71-82% (rm 60-76%)
 *            GEMM 49-51%, 203-213 GFLOP/s (i8g32 35-46%); at load average 4:
 *            52-66%, 213-271 GFLOP/s
 *
 * Before the empty asm in q8xa_dot2 (below) the AVX2 GEMM measured 27.9%, after
 * it 34-37% in the same minutes. The AVX-VNNI GEMM's offsets -128 * x.sum once per
 * record and row (not once per half record): 10 alternating runs of the two builds
 * (--batch 128 only), 209-280 against 178-245 GFLOP/s, per-pair ratio median 1.04
 * [0.98-1.57].
 */
#include "format/blocks.h"
#include "kernel/q8x.h"
#include "kernel/x86/tile32_avx2.h"

#define Q8XA_INLINE static inline __attribute__((always_inline))

/* -128 * sum as int32 lanes: the sum broadcast from memory (a load-port
 * operation), shifted and negated. */
Q8XA_INLINE __m256i q8xa_offset(const pw__q8_32 *xb) {
    const __m256i s = pw__t32a_bcast4((const int8_t *)(const void *)&xb->sum);
    return _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(s, 7));
}

/* AVX2: the int32 sums of q * a over each 4 bytes, w = u ^ 0x80 = q and m = |q|
 * (the file's comment gives the bounds). The empty asm keeps the sum a chain in
 * one register: without it GCC 12 reassociates the 8 steps' vpaddd into a tree
 * and parks every vpmaddwd result on the stack first (64 ymm stores per half
 * record in the GEMM, 32 per record in the GEMV). */
Q8XA_INLINE __m256i q8xa_dot2(__m256i acc, __m256i m, __m256i w, __m256i a) {
    const __m256i p = _mm256_maddubs_epi16(m, _mm256_sign_epi8(a, w));
    acc = _mm256_add_epi32(acc, _mm256_madd_epi16(p, _mm256_set1_epi16(1)));
    __asm__("" : "+x"(acc));
    return acc;
}

/* GEMV record function (tile32_avx2.h). */
Q8XA_INLINE void q8xa_block(const uint8_t *rec, const uint8_t *xbp, int pf, __m256 acc[4]) {
    const pw__q8_32 *xb = (const pw__q8_32 *)xbp;
    if (pf) {
        pw__tile32_prefetch_pf(rec, PW__Q8X_RECORD, pf);
    }
    __m256i dot[4];
    if (PW__VNNI) {
        const __m256i c = q8xa_offset(xb);
        dot[0] = dot[1] = dot[2] = dot[3] = c;
    } else {
        dot[0] = dot[1] = dot[2] = dot[3] = _mm256_setzero_si256();
    }
    const __m256i flip = _mm256_set1_epi8((char)0x80);
#pragma GCC unroll 8
    for (int s = 0; s < 8; ++s) {
        const __m256i a = pw__t32a_bcast4(xb->qs + 4 * s);
#pragma GCC unroll 4
        for (int q = 0; q < 4; ++q) {
            const __m256i v =
                _mm256_loadu_si256((const __m256i *)(rec + PW__Q8X_STEP * s + 32 * q));
            if (PW__VNNI) {
                dot[q] = pw__dpbusd(dot[q], v, a);
            } else {
                const __m256i w = _mm256_xor_si256(v, flip);
                dot[q] = q8xa_dot2(dot[q], _mm256_abs_epi8(w), w, a);
            }
        }
    }
    const __m256 xd = _mm256_set1_ps(xb->d);
#pragma GCC unroll 4
    for (int q = 0; q < 4; ++q)
        acc[q] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot[q]),
                                 _mm256_mul_ps(pw__t32a_f16x8(rec + PW__Q8X_SCALES + 16 * q), xd),
                                 acc[q]);
}

/* GEMM record function (tile32_avx2.h): each 64-byte half of a step (rows 0..15,
 * then 16..31) loaded once for the panel's mr rows; the AVX-VNNI offsets made once
 * for both halves. */
Q8XA_INLINE void q8xa_gemm_block(const uint8_t *rec, const uint8_t *const *x,
                                 float acc[][PW__TILE32_NR], const int mr) {
    const __m256i flip = _mm256_set1_epi8((char)0x80);
    __m256i c[PW__T32AG_MR];
#pragma GCC unroll 4
    for (int r = 0; r < mr; ++r)
        c[r] = PW__VNNI ? q8xa_offset((const pw__q8_32 *)x[r]) : _mm256_setzero_si256();
#pragma GCC unroll 2
    for (int h = 0; h < 2; ++h) {
        __m256i lo[PW__T32AG_MR], hi[PW__T32AG_MR];
#pragma GCC unroll 4
        for (int r = 0; r < mr; ++r) lo[r] = hi[r] = c[r];
#pragma GCC unroll 8
        for (int s = 0; s < 8; ++s) {
            const uint8_t *p = rec + PW__Q8X_STEP * s + 64 * h;
            const __m256i v0 = _mm256_loadu_si256((const __m256i *)p);
            const __m256i v1 = _mm256_loadu_si256((const __m256i *)(p + 32));
            if (PW__VNNI) {
#pragma GCC unroll 4
                for (int r = 0; r < mr; ++r) {
                    const __m256i a = pw__t32a_bcast4(((const pw__q8_32 *)x[r])->qs + 4 * s);
                    lo[r] = pw__dpbusd(lo[r], v0, a);
                    hi[r] = pw__dpbusd(hi[r], v1, a);
                }
            } else {
                const __m256i w0 = _mm256_xor_si256(v0, flip), w1 = _mm256_xor_si256(v1, flip);
                const __m256i m0 = _mm256_abs_epi8(w0), m1 = _mm256_abs_epi8(w1);
#pragma GCC unroll 4
                for (int r = 0; r < mr; ++r) {
                    const __m256i a = pw__t32a_bcast4(((const pw__q8_32 *)x[r])->qs + 4 * s);
                    lo[r] = q8xa_dot2(lo[r], m0, w0, a);
                    hi[r] = q8xa_dot2(hi[r], m1, w1, a);
                }
            }
        }
        const __m256 dl = pw__t32a_f16x8(rec + PW__Q8X_SCALES + 32 * h);
        const __m256 dh = pw__t32a_f16x8(rec + PW__Q8X_SCALES + 32 * h + 16);
#pragma GCC unroll 4
        for (int r = 0; r < mr; ++r) {
            const __m256 xd = _mm256_set1_ps(((const pw__q8_32 *)x[r])->d);
            float *a0 = acc[r] + 16 * h, *a1 = acc[r] + 16 * h + 8;
            _mm256_store_ps(a0, _mm256_fmadd_ps(_mm256_cvtepi32_ps(lo[r]), _mm256_mul_ps(dl, xd),
                                                _mm256_load_ps(a0)));
            _mm256_store_ps(a1, _mm256_fmadd_ps(_mm256_cvtepi32_ps(hi[r]), _mm256_mul_ps(dh, xd),
                                                _mm256_load_ps(a1)));
        }
    }
}

/* GEMV: two streams. Zen 4 leaves them to the hardware prefetcher at both levels
 * (tile32_prefetch.h), Zen 5 at AVX-VNNI only. On Zen 5 the AVX-VNNI GEMV read slower
 * with the record's software prefetch (8 KiB ahead into L1) than the AVX2 one, whose
 * record function computes slower: one build switched at run time (not in the tree),
 * AMD EPYC Zen 5 VM (2 vCPUs, the other core busy with a build), PACKWISE_ISA=avxvnni
 * packwise bench --formats Q8_0 --shapes 11008x4096,4096x4096 --batch 1 --threads 1,
 * three rounds in turn, fraction of the read, [11008, 4096] / [4096, 4096]: software
 * prefetch 85.5-91.5% / 85.4-87.3, hardware only 91.9-98.4 / 95.0-96.4; 2 threads
 * 84.5-85.8 / 81.8-88.0 against 85.8-88.6 / 85.7-93.7. At avx2 hardware only was
 * worse (78.8-88.4 / 80.7-94.3 against 91.7-98.0 / 93.0-94.5), so AVX2 keeps the
 * prefetch. One stream (8 KiB ahead, or hardware only) and 2 KiB ahead
 * (PW__TILE32_PF_ZEN5) were between the two (82.8-89.0). A decode step
 * (PACKWISE_ISA=avxvnni packwise bench --step --formats Q8_0 --threads 1, the old and
 * new builds in turn, two rounds): 8114 and 8095 us a layer before, 7704 and 7969 after
 * (15.4 -> 15.7-16.2 tokens/s). The AVX-512 Q8_0 GEMV on Zen 5 reads the same way
 * (q8x_avx512.c). */
static void q8xa_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    pw__t32a_run(c, o0, o1, i0, i1, 32, PW__Q8X_RECORD, sizeof(pw__q8_32), q8xa_block, 2,
                 PW__HW_ZEN4 | (PW__VNNI ? PW__HW_ZEN5 : 0));
}

static void q8xa_gemm_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    pw__t32ag_run(c, o0, o1, i0, i1, 32, PW__Q8X_RECORD, sizeof(pw__q8_32), q8xa_gemm_block);
}

const pw__kernel PW__AVX2_SYM(pw__k_q8_0_q8x32k4) =
    PW__Q8X_KERNEL(PW__AVX2_ISA, PW__AVX2_FEATURES(PW_CPU_AVX2 | PW_CPU_FMA | PW_CPU_F16C),
                   q8xa_run, PW__AVX2_PRIO + 2);

const pw__kernel PW__AVX2_SYM(pw__k_q8_0_q8x32k4_gemm) = PW__Q8X_GEMM_KERNEL(
    PW__AVX2_ISA, PW__AVX2_FEATURES(PW_CPU_AVX2 | PW_CPU_FMA | PW_CPU_F16C), q8xa_gemm_run,
    PW__AVX2_PRIO + PW__PRIO_GEMM - 1, PW__T32AG_MR);

/* GEMM over input-block-major Q8_0 bytes as they are (as q4x_avx2.c's). */
PW__TILE32_IBM_FILL(q8xa_fill_ibm, pw__block_q8_0, PW__Q8X_RECORD, pw__q8x_record_from_blocks)

static void q8xa_ibm_gemm_run(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    pw__t32ag_run_fill(c, o0, o1, i0, i1, 32, PW__Q8X_RECORD, sizeof(pw__q8_32), q8xa_gemm_block,
                       q8xa_fill_ibm);
}

const pw__kernel PW__AVX2_SYM(pw__k_q8_0_ibm_gemm) = PW__TILE32_IBM_GEMM_KERNEL(
    "q8_0", PW_FORMAT_Q8_0, Q8_32, PW__AVX2_ISA, PW__AVX2_FEATURES(PW_CPU_AVX2 | PW_CPU_FMA | PW_CPU_F16C), q8xa_ibm_gemm_run,
    PW__AVX2_PRIO + PW__PRIO_GEMM - 1, PW__T32AG_MR);
