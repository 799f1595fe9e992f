/*
 * The one list of kernels (STYLE.md rule 5). Dispatch, the tests and the
 * bench all iterate over it; adding a kernel is one line here plus its file.
 * Each PW_KERNEL(id) names a `const pw__kernel pw__k_<id>` defined next to
 * the kernel's code. Lines are grouped by ISA; order inside the list does not
 * matter (dispatch ranks by priority).
 *
 * QC4W kernels (QD8 x per-channel int4, with their epilogue) are entries of
 * the same list: their descriptors say kind PW_WEIGHT_QC4W (kernel/qc4w.h).
 */
#ifndef PW_KERNEL
#define PW_KERNEL(id)
#endif

/* Reference (decode, then dot in double): the oracle, and the fallback. */
PW_KERNEL(ref_f32)
PW_KERNEL(ref_f16)
PW_KERNEL(ref_bf16)
PW_KERNEL(ref_q4_0)
PW_KERNEL(ref_q4_1)
PW_KERNEL(ref_q5_0)
PW_KERNEL(ref_q5_1)
PW_KERNEL(ref_q8_0)
PW_KERNEL(ref_q8_1)
PW_KERNEL(ref_q2_k)
PW_KERNEL(ref_q3_k)
PW_KERNEL(ref_q4_k)
PW_KERNEL(ref_q5_k)
PW_KERNEL(ref_q6_k)
PW_KERNEL(ref_q8_k)
PW_KERNEL(ref_iq4_nl)
PW_KERNEL(ref_tq1_0)
PW_KERNEL(ref_tq2_0)

/* Portable scalar kernels. */
PW_KERNEL(q4_0_i8g_scalar)
PW_KERNEL(q4_1_i8g_scalar)
PW_KERNEL(q5_0_i8g_scalar)
PW_KERNEL(q5_1_i8g_scalar)
PW_KERNEL(q8_0_i8g_scalar)
PW_KERNEL(iq4_nl_i8g_scalar)
PW_KERNEL(q4_k_i8g_scalar)
PW_KERNEL(q5_k_i8g_scalar)
PW_KERNEL(tq1_0_i8g_scalar)
PW_KERNEL(tq2_0_i8g_scalar)
PW_KERNEL(q2_k_i8g_scalar)
PW_KERNEL(q3_k_i8g_scalar)
PW_KERNEL(q6_k_i8g_scalar)
PW_KERNEL(f32_rm_scalar)
PW_KERNEL(f16_rm_scalar)
PW_KERNEL(bf16_rm_scalar)

#if defined(__x86_64__)
/* AVX2 + FMA + F16C: row-major GEMV, 32-element formats and float formats. */
PW_KERNEL(q4_0_rm_avx2)
PW_KERNEL(q4_1_rm_avx2)
PW_KERNEL(q5_0_rm_avx2)
PW_KERNEL(q5_1_rm_avx2)
PW_KERNEL(q8_0_rm_avx2)
PW_KERNEL(iq4_nl_rm_avx2)
PW_KERNEL(f32_rm_avx2)
PW_KERNEL(f16_rm_avx2)
PW_KERNEL(bf16_rm_avx2)

/* AVX2 + FMA + F16C: row-major GEMV, K-quants and ternary. */
PW_KERNEL(q2_k_rm_avx2)
PW_KERNEL(q3_k_rm_avx2)
PW_KERNEL(q4_k_rm_avx2)
PW_KERNEL(q5_k_rm_avx2)
PW_KERNEL(q6_k_rm_avx2)
PW_KERNEL(tq1_0_rm_avx2)
PW_KERNEL(tq2_0_rm_avx2)

/* AVX2 + FMA + F16C: the same GEMV code over input-block-major views (the spec's kernel
 * order, read as it is: rows of a block column are adjacent). */
PW_KERNEL(q4_0_ibm_avx2)
PW_KERNEL(q4_0_ibm_gemm_avx2)
PW_KERNEL(q4_1_ibm_avx2)
PW_KERNEL(q4_1_ibm_gemm_avx2)
PW_KERNEL(q5_0_ibm_avx2)
PW_KERNEL(q5_0_ibm_gemm_avx2)
PW_KERNEL(q5_1_ibm_avx2)
PW_KERNEL(q5_1_ibm_gemm_avx2)
PW_KERNEL(q8_0_ibm_avx2)
PW_KERNEL(q8_0_ibm_gemm_avx2)
PW_KERNEL(iq4_nl_ibm_avx2)
PW_KERNEL(iq4_nl_ibm_gemm_avx2)
PW_KERNEL(q2_k_ibm_avx2)
PW_KERNEL(q2_k_ibm_gemm_avx2)
PW_KERNEL(tq1_0_ibm_gemm_avx2)
PW_KERNEL(q3_k_ibm_avx2)
PW_KERNEL(q3_k_ibm_gemm_avx2)
PW_KERNEL(q4_k_ibm_avx2)
PW_KERNEL(q4_k_ibm_gemm_avx2)
PW_KERNEL(q5_k_ibm_avx2)
PW_KERNEL(q5_k_ibm_gemm_avx2)
PW_KERNEL(q6_k_ibm_avx2)
PW_KERNEL(q6_k_ibm_gemm_avx2)
PW_KERNEL(tq1_0_ibm_avx2)
PW_KERNEL(tq2_0_ibm_avx2)
PW_KERNEL(tq2_0_ibm_gemm_avx2)

/* AVX2: i8g GEMM. */
PW_KERNEL(q4_0_i8g32_avx2)
PW_KERNEL(q4_1_i8g32_avx2)
PW_KERNEL(q5_0_i8g32_avx2)
PW_KERNEL(q5_1_i8g32_avx2)
PW_KERNEL(q8_0_i8g32_avx2)
PW_KERNEL(iq4_nl_i8g32_avx2)
PW_KERNEL(q4_k_i8g32_avx2)
PW_KERNEL(q5_k_i8g32_avx2)
PW_KERNEL(tq1_0_i8g32_avx2)
PW_KERNEL(tq2_0_i8g32_avx2)
PW_KERNEL(q2_k_i8g16_avx2)
PW_KERNEL(q3_k_i8g16_avx2)
PW_KERNEL(q6_k_i8g16_avx2)

/* AVX-VNNI (VEX vpdpbusd on ymm): the AVX2 sources built again (x86/avx2_level.h), ranked
 * between AVX2 and AVX-512; GEMV in both block orders, then i8g GEMM. */
PW_KERNEL(q4_0_rm_avxvnni)
PW_KERNEL(q4_1_rm_avxvnni)
PW_KERNEL(q5_0_rm_avxvnni)
PW_KERNEL(q5_1_rm_avxvnni)
PW_KERNEL(q8_0_rm_avxvnni)
PW_KERNEL(iq4_nl_rm_avxvnni)
PW_KERNEL(q2_k_rm_avxvnni)
PW_KERNEL(q3_k_rm_avxvnni)
PW_KERNEL(q4_k_rm_avxvnni)
PW_KERNEL(q5_k_rm_avxvnni)
PW_KERNEL(q6_k_rm_avxvnni)
PW_KERNEL(tq1_0_rm_avxvnni)
PW_KERNEL(tq2_0_rm_avxvnni)
PW_KERNEL(q4_0_ibm_avxvnni)
PW_KERNEL(q4_0_ibm_gemm_avxvnni)
PW_KERNEL(q4_1_ibm_avxvnni)
PW_KERNEL(q4_1_ibm_gemm_avxvnni)
PW_KERNEL(q5_0_ibm_avxvnni)
PW_KERNEL(q5_0_ibm_gemm_avxvnni)
PW_KERNEL(q5_1_ibm_avxvnni)
PW_KERNEL(q5_1_ibm_gemm_avxvnni)
PW_KERNEL(q8_0_ibm_avxvnni)
PW_KERNEL(q8_0_ibm_gemm_avxvnni)
PW_KERNEL(iq4_nl_ibm_avxvnni)
PW_KERNEL(iq4_nl_ibm_gemm_avxvnni)
PW_KERNEL(q2_k_ibm_avxvnni)
PW_KERNEL(q2_k_ibm_gemm_avxvnni)
PW_KERNEL(tq1_0_ibm_gemm_avxvnni)
PW_KERNEL(q3_k_ibm_avxvnni)
PW_KERNEL(q3_k_ibm_gemm_avxvnni)
PW_KERNEL(q4_k_ibm_avxvnni)
PW_KERNEL(q4_k_ibm_gemm_avxvnni)
PW_KERNEL(q5_k_ibm_avxvnni)
PW_KERNEL(q5_k_ibm_gemm_avxvnni)
PW_KERNEL(q6_k_ibm_avxvnni)
PW_KERNEL(q6_k_ibm_gemm_avxvnni)
PW_KERNEL(tq1_0_ibm_avxvnni)
PW_KERNEL(tq2_0_ibm_avxvnni)
PW_KERNEL(tq2_0_ibm_gemm_avxvnni)
PW_KERNEL(q4_0_i8g32_avxvnni)
PW_KERNEL(q4_1_i8g32_avxvnni)
PW_KERNEL(q5_0_i8g32_avxvnni)
PW_KERNEL(q5_1_i8g32_avxvnni)
PW_KERNEL(q8_0_i8g32_avxvnni)
PW_KERNEL(iq4_nl_i8g32_avxvnni)
PW_KERNEL(q4_k_i8g32_avxvnni)
PW_KERNEL(q5_k_i8g32_avxvnni)
PW_KERNEL(tq1_0_i8g32_avxvnni)
PW_KERNEL(tq2_0_i8g32_avxvnni)
PW_KERNEL(q2_k_i8g16_avxvnni)
PW_KERNEL(q3_k_i8g16_avxvnni)
PW_KERNEL(q6_k_i8g16_avxvnni)

/* AVX-512 F/BW/VL + VNNI: row-major GEMV. */
PW_KERNEL(q4_0_rm_avx512vnni)
PW_KERNEL(iq4_nl_rm_avx512vnni)
PW_KERNEL(q8_0_rm_avx512vnni)
PW_KERNEL(q4_k_rm_avx512vnni)
PW_KERNEL(q5_k_rm_avx512vnni)
PW_KERNEL(q6_k_rm_avx512vnni)
PW_KERNEL(tq2_0_rm_avx512vnni)

/* AVX-512 VNNI: GEMV and GEMM over input-block-major views, read as they are. */
PW_KERNEL(q4_0_ibm_avx512vnni)
PW_KERNEL(q4_0_ibm_gemm_avx512vnni)
PW_KERNEL(iq4_nl_ibm_avx512vnni)
PW_KERNEL(iq4_nl_ibm_gemm_avx512vnni)
PW_KERNEL(q8_0_ibm_avx512vnni)
PW_KERNEL(q8_0_ibm_gemm_avx512vnni)
PW_KERNEL(q4_k_ibm_avx512vnni)
PW_KERNEL(q4_k_ibm_gemm_avx512vnni)
PW_KERNEL(q5_k_ibm_avx512vnni)
PW_KERNEL(q5_k_ibm_gemm_avx512vnni)
PW_KERNEL(q6_k_ibm_avx512vnni)
PW_KERNEL(q6_k_ibm_gemm_avx512vnni)
PW_KERNEL(q2_k_ibm_gemm_avx512vnni)
PW_KERNEL(tq1_0_ibm_gemm_avx512vnni)
PW_KERNEL(q3_k_ibm_gemm_avx512vnni)
PW_KERNEL(tq2_0_ibm_avx512vnni)
PW_KERNEL(tq2_0_ibm_gemm_avx512vnni)

/* AVX-512 VNNI: i8g GEMM. */
PW_KERNEL(q4_0_i8g32_avx512vnni)
PW_KERNEL(q4_1_i8g32_avx512vnni)
PW_KERNEL(q5_0_i8g32_avx512vnni)
PW_KERNEL(q5_0_ibm_gemm_avx512vnni)
PW_KERNEL(q4_1_ibm_gemm_avx512vnni)
PW_KERNEL(q5_1_ibm_gemm_avx512vnni)
PW_KERNEL(q5_1_i8g32_avx512vnni)
PW_KERNEL(q8_0_i8g32_avx512vnni)
PW_KERNEL(iq4_nl_i8g32_avx512vnni)
PW_KERNEL(q4_k_i8g32_avx512vnni)
PW_KERNEL(q5_k_i8g32_avx512vnni)
PW_KERNEL(tq1_0_i8g32_avx512vnni)
PW_KERNEL(tq2_0_i8g32_avx512vnni)
PW_KERNEL(q2_k_i8g16_avx512vnni)
PW_KERNEL(q3_k_i8g16_avx512vnni)
PW_KERNEL(q6_k_i8g16_avx512vnni)
#endif

#if defined(__aarch64__)
/* NEON (baseline Armv8-A): row-major GEMV of the float formats. */
PW_KERNEL(f32_rm_neon)
PW_KERNEL(f16_rm_neon)
PW_KERNEL(bf16_rm_neon)
/* NEON dotprod: row-major GEMV. */
PW_KERNEL(q4_0_rm_dotprod)
PW_KERNEL(q8_0_rm_dotprod)
PW_KERNEL(q4_k_rm_dotprod)
PW_KERNEL(q6_k_rm_dotprod)
PW_KERNEL(tq2_0_rm_dotprod)
/* NEON dotprod: row-major GEMV of the other 32-element formats (rm_q32_dotprod.c). */
PW_KERNEL(q4_1_rm_dotprod)
PW_KERNEL(q4_1_ibm_dotprod)
PW_KERNEL(q4_1_ibm_gemm_dotprod)
PW_KERNEL(q5_0_rm_dotprod)
PW_KERNEL(q5_0_ibm_dotprod)
PW_KERNEL(q5_0_ibm_gemm_dotprod)
PW_KERNEL(q5_1_rm_dotprod)
PW_KERNEL(q5_1_ibm_dotprod)
PW_KERNEL(q5_1_ibm_gemm_dotprod)
PW_KERNEL(iq4_nl_rm_dotprod)
PW_KERNEL(iq4_nl_ibm_dotprod)
PW_KERNEL(iq4_nl_ibm_gemm_dotprod)
/* NEON dotprod: row-major GEMV of the other 256-element formats (rm_kq_dotprod.c). */
PW_KERNEL(q2_k_rm_dotprod)
PW_KERNEL(q2_k_ibm_dotprod)
PW_KERNEL(q2_k_ibm_gemm_dotprod)
PW_KERNEL(tq1_0_ibm_gemm_dotprod)
PW_KERNEL(q3_k_rm_dotprod)
PW_KERNEL(q3_k_ibm_dotprod)
PW_KERNEL(q3_k_ibm_gemm_dotprod)
PW_KERNEL(q5_k_rm_dotprod)
PW_KERNEL(q5_k_ibm_dotprod)
PW_KERNEL(q5_k_ibm_gemm_dotprod)
PW_KERNEL(tq1_0_rm_dotprod)
PW_KERNEL(tq1_0_ibm_dotprod)

/* NEON dotprod: the same GEMV code over input-block-major views. */
PW_KERNEL(q4_0_ibm_dotprod)
PW_KERNEL(q4_0_ibm_gemm_dotprod)
PW_KERNEL(q8_0_ibm_dotprod)
PW_KERNEL(q8_0_ibm_gemm_dotprod)
PW_KERNEL(q4_k_ibm_dotprod)
PW_KERNEL(q4_k_ibm_gemm_dotprod)
PW_KERNEL(q6_k_ibm_dotprod)
PW_KERNEL(q6_k_ibm_gemm_dotprod)
PW_KERNEL(tq2_0_ibm_dotprod)
PW_KERNEL(tq2_0_ibm_gemm_dotprod)

/* NEON dotprod: i8g GEMM. */
PW_KERNEL(q4_0_i8g32_dotprod)
PW_KERNEL(q4_1_i8g32_dotprod)
PW_KERNEL(q5_0_i8g32_dotprod)
PW_KERNEL(q5_1_i8g32_dotprod)
PW_KERNEL(q8_0_i8g32_dotprod)
PW_KERNEL(iq4_nl_i8g32_dotprod)
PW_KERNEL(q4_k_i8g32_dotprod)
PW_KERNEL(q5_k_i8g32_dotprod)
PW_KERNEL(tq1_0_i8g32_dotprod)
PW_KERNEL(tq2_0_i8g32_dotprod)
PW_KERNEL(q2_k_i8g16_dotprod)
PW_KERNEL(q3_k_i8g16_dotprod)
PW_KERNEL(q6_k_i8g16_dotprod)

/* NEON i8mm: GEMM. */
PW_KERNEL(q4_0_i8g32x8k8_i8mm)
PW_KERNEL(q8_0_i8g32x8k8_i8mm)
PW_KERNEL(q4_k_i8g32x8k8_i8mm)
PW_KERNEL(q4_1_i8g32x8k8_i8mm)
PW_KERNEL(q5_0_i8g32x8k8_i8mm)
PW_KERNEL(q5_1_i8g32x8k8_i8mm)
PW_KERNEL(iq4_nl_i8g32x8k8_i8mm)
PW_KERNEL(q5_k_i8g32x8k8_i8mm)
PW_KERNEL(tq1_0_i8g32x8k8_i8mm)
PW_KERNEL(tq2_0_i8g32x8k8_i8mm)
/* Portable reference of the i8mm family's packer and layout (never preferred by dispatch). */
PW_KERNEL(q4_0_i8g32x8k8_scalar)
PW_KERNEL(q8_0_i8g32x8k8_scalar)
PW_KERNEL(q4_k_i8g32x8k8_scalar)
PW_KERNEL(q4_1_i8g32x8k8_scalar)
PW_KERNEL(q5_0_i8g32x8k8_scalar)
PW_KERNEL(q5_1_i8g32x8k8_scalar)
PW_KERNEL(iq4_nl_i8g32x8k8_scalar)
PW_KERNEL(q5_k_i8g32x8k8_scalar)
PW_KERNEL(tq1_0_i8g32x8k8_scalar)
PW_KERNEL(tq2_0_i8g32x8k8_scalar)
#endif

/* QB4W (kernel/qb4w.h): one portable kernel per packed family. */
PW_KERNEL(qb4w_n16k8s2_scalar)
PW_KERNEL(qb4w_n8k8s2_scalar)
PW_KERNEL(qb4w_n4k16s2_scalar)
/* QB4W: AVX2 and AVX-VNNI, family qb4w_n16k8s2. */
#if defined(__x86_64__)
PW_KERNEL(qb4w_n16k8s2_avx2)
PW_KERNEL(qb4w_n16k8s2_avxvnni)
#endif

#if defined(__aarch64__)
/* QB4W: NEON dotprod (qb4w_n8k8s2) and i8mm (qb4w_n4k16s2). */
PW_KERNEL(qb4w_n8k8s2_dotprod)
PW_KERNEL(qb4w_n4k16s2_i8mm)
#endif

/* QC4W (kernel/qc4w.h): one portable kernel per packed family. */
PW_KERNEL(qc4w_n16k8s2_scalar)
PW_KERNEL(qc4w_n8k8s2_scalar)
PW_KERNEL(qc4w_n4k16s2_scalar)
PW_KERNEL(qc4w_n8k4s1_scalar)
#if defined(__x86_64__)
/* QC4W: AVX2, AVX-VNNI and AVX-512 VNNI, family qc4w_n16k8s2. */
PW_KERNEL(qc4w_n16k8s2_avx2)
PW_KERNEL(qc4w_n16k8s2_avxvnni)
PW_KERNEL(qc4w_n16k8s2_avx512vnni)
/* QB4W: AVX-512 VNNI, family qb4w_n16k8s2 (kernel/qb4w.h). */
PW_KERNEL(qb4w_n16k8s2_avx512vnni)
#endif
#if defined(__aarch64__)
/* QC4W: NEON dotprod (qc4w_n8k8s2) and i8mm (qc4w_n4k16s2). */
PW_KERNEL(qc4w_n8k8s2_dotprod)
PW_KERNEL(qc4w_n4k16s2_i8mm)
/* QC4W: SME, one family per streaming vector length (its tile follows it; usable only there). */
PW_KERNEL(qc4w_vl128_n16k8s2_sme)
PW_KERNEL(qc4w_vl256_n32k8s2_sme)
PW_KERNEL(qc4w_vl512_n64k8s2_sme)
PW_KERNEL(qc4w_vl1024_n128k8s2_sme)
PW_KERNEL(qc4w_vl2048_n256k8s2_sme)
#endif

/* Q4_0 4-bit tiled family (kernel/q4x.h): the file's nibbles rearranged for SIMD GEMV.
 * The portable kernel is the family's reference (compact runs it where no SIMD one is usable). */
PW_KERNEL(q4_0_q4x32k4_scalar)
#if defined(__x86_64__)
PW_KERNEL(q4_0_q4x32k4_avx512vnni)
PW_KERNEL(q4_0_q4x32k4_gemm_avx512vnni)
PW_KERNEL(q4_0_q4x32k4_avx2)
PW_KERNEL(q4_0_q4x32k4_gemm_avx2)
PW_KERNEL(q4_0_q4x32k4_avxvnni)
PW_KERNEL(q4_0_q4x32k4_gemm_avxvnni)
#endif
#if defined(__aarch64__)
PW_KERNEL(q4_0_q4x32k4_dotprod)
PW_KERNEL(q4_0_q4x32k4_gemm_dotprod)
/* the GEMV again on i8mm (USDOT on the whole bytes: tile32_neon.h) */
PW_KERNEL(q4_0_q4x32k4_i8mm)
#endif

/* Q3_K tiled family (kernel/q3kx.h): the file's 3-bit quants, whole in a nibble for three
 * steps in four, rearranged for SIMD GEMV and GEMM. The portable kernel is the family's
 * reference (never preferred by dispatch). */
PW_KERNEL(q3_k_q3kx32k4_scalar)
#if defined(__x86_64__)
PW_KERNEL(q3_k_q3kx32k4_avx512vnni)
/* GEMM over the same bytes, ranked above the i8g kernel (PW__PRIO_I8G_X86). */
PW_KERNEL(q3_k_q3kx32k4_gemm_avx512vnni)
/* The same bytes at 256 bits (in q6kx_avx2.c, built twice). */
PW_KERNEL(q3_k_q3kx32k4_avx2)
PW_KERNEL(q3_k_q3kx32k4_gemm_avx2)
PW_KERNEL(q3_k_q3kx32k4_avxvnni)
PW_KERNEL(q3_k_q3kx32k4_gemm_avxvnni)
#endif
#if defined(__aarch64__)
PW_KERNEL(q3_k_q3kx32k4_dotprod)
PW_KERNEL(q3_k_q3kx32k4_gemm_dotprod)
#endif

/* Q4_K 4-bit tiled family (kernel/q4kx.h): the file's super-blocks rearranged for SIMD GEMV.
 * The portable kernel is the family's reference (compact runs it where no SIMD one is usable). */
PW_KERNEL(q4_k_q4kx32k4_scalar)
#if defined(__x86_64__)
PW_KERNEL(q4_k_q4kx32k4_avx512vnni)
/* GEMM over the same bytes, ranked above the i8g kernel (PW__PRIO_I8G_X86). */
PW_KERNEL(q4_k_q4kx32k4_gemm_avx512vnni)
PW_KERNEL(q4_k_q4kx32k4_avx2)
PW_KERNEL(q4_k_q4kx32k4_gemm_avx2)
PW_KERNEL(q4_k_q4kx32k4_avxvnni)
PW_KERNEL(q4_k_q4kx32k4_gemm_avxvnni)
#endif
#if defined(__aarch64__)
PW_KERNEL(q4_k_q4kx32k4_dotprod)
PW_KERNEL(q4_k_q4kx32k4_gemm_dotprod)
/* the GEMV again on i8mm (USDOT on the whole bytes: tile32_neon.h) */
PW_KERNEL(q4_k_q4kx32k4_i8mm)
#endif

/* Q5_0 tiled family (kernel/q5x.h): a q4x32k4 record of the low 4 bits, then bit 4 as
 * two planes. The portable kernel is the family's reference (compact runs it where no
 * SIMD one is usable). */
PW_KERNEL(q5_0_q5x32k4_scalar)
#if defined(__x86_64__)
PW_KERNEL(q5_0_q5x32k4_avx512vnni)
PW_KERNEL(q5_0_q5x32k4_gemm_avx512vnni)
PW_KERNEL(q5_0_q5x32k4_avx2)
PW_KERNEL(q5_0_q5x32k4_gemm_avx2)
PW_KERNEL(q5_0_q5x32k4_avxvnni)
PW_KERNEL(q5_0_q5x32k4_gemm_avxvnni)
#endif
#if defined(__aarch64__)
PW_KERNEL(q5_0_q5x32k4_dotprod)
PW_KERNEL(q5_0_q5x32k4_gemm_dotprod)
#endif

/* IQ4_NL tiled family (kernel/iq4x.h): Q4_0's record, the nibbles through the codebook.
 * The portable kernel is the family's reference (compact runs it where no SIMD one is usable). */
PW_KERNEL(iq4_nl_iq4x32k4_scalar)
#if defined(__x86_64__)
PW_KERNEL(iq4_nl_iq4x32k4_avx512vnni)
PW_KERNEL(iq4_nl_iq4x32k4_gemm_avx512vnni)
PW_KERNEL(iq4_nl_iq4x32k4_avx2)
PW_KERNEL(iq4_nl_iq4x32k4_gemm_avx2)
PW_KERNEL(iq4_nl_iq4x32k4_avxvnni)
PW_KERNEL(iq4_nl_iq4x32k4_gemm_avxvnni)
#endif
#if defined(__aarch64__)
PW_KERNEL(iq4_nl_iq4x32k4_dotprod)
PW_KERNEL(iq4_nl_iq4x32k4_gemm_dotprod)
#endif

/* Q4_1 and Q5_1 tiled families (kernel/q41x.h): a q4x32k4 or q5x32k4 record, then the
 * rows' m. The portable kernels are the families' references (compact runs them where no SIMD
 * one is usable). */
PW_KERNEL(q4_1_q41x32k4_scalar)
PW_KERNEL(q5_1_q51x32k4_scalar)
#if defined(__x86_64__)
PW_KERNEL(q4_1_q41x32k4_avx512vnni)
PW_KERNEL(q4_1_q41x32k4_gemm_avx512vnni)
PW_KERNEL(q5_1_q51x32k4_avx512vnni)
PW_KERNEL(q5_1_q51x32k4_gemm_avx512vnni)
PW_KERNEL(q4_1_q41x32k4_avx2)
PW_KERNEL(q4_1_q41x32k4_gemm_avx2)
PW_KERNEL(q4_1_q41x32k4_avxvnni)
PW_KERNEL(q4_1_q41x32k4_gemm_avxvnni)
PW_KERNEL(q5_1_q51x32k4_avx2)
PW_KERNEL(q5_1_q51x32k4_gemm_avx2)
PW_KERNEL(q5_1_q51x32k4_avxvnni)
PW_KERNEL(q5_1_q51x32k4_gemm_avxvnni)
#endif
#if defined(__aarch64__)
PW_KERNEL(q4_1_q41x32k4_dotprod)
PW_KERNEL(q4_1_q41x32k4_gemm_dotprod)
/* the GEMV again on i8mm (USDOT on the whole bytes: tile32_neon.h) */
PW_KERNEL(q4_1_q41x32k4_i8mm)
PW_KERNEL(q5_1_q51x32k4_dotprod)
PW_KERNEL(q5_1_q51x32k4_gemm_dotprod)
#endif

/* Q5_K tiled family (kernel/q5kx.h): a q4kx32k4 record of the low 4 bits, then bit 4
 * as byte masks. The portable kernel is the family's reference (compact runs it where
 * no SIMD one is usable). */
PW_KERNEL(q5_k_q5kx32k4_scalar)
#if defined(__x86_64__)
PW_KERNEL(q5_k_q5kx32k4_avx512vnni)
/* GEMM over the same bytes, ranked above the i8g kernel (PW__PRIO_I8G_X86). */
PW_KERNEL(q5_k_q5kx32k4_gemm_avx512vnni)
PW_KERNEL(q5_k_q5kx32k4_avx2)
PW_KERNEL(q5_k_q5kx32k4_gemm_avx2)
PW_KERNEL(q5_k_q5kx32k4_avxvnni)
PW_KERNEL(q5_k_q5kx32k4_gemm_avxvnni)
#endif
#if defined(__aarch64__)
PW_KERNEL(q5_k_q5kx32k4_dotprod)
PW_KERNEL(q5_k_q5kx32k4_gemm_dotprod)
#endif

/* Q6_K tiled family (kernel/q6kx.h): the file's 4- and 2-bit quants rearranged for SIMD GEMV.
 * The portable kernel is the family's reference (compact runs it where no SIMD one is usable). */
PW_KERNEL(q6_k_q6kx32k4_scalar)
#if defined(__x86_64__)
PW_KERNEL(q6_k_q6kx32k4_avx512vnni)
/* GEMM over the same bytes, ranked above the i8g kernel (PW__PRIO_I8G_X86). */
PW_KERNEL(q6_k_q6kx32k4_gemm_avx512vnni)
/* The same bytes at 256 bits (q6kx_avx2.c, built twice). */
PW_KERNEL(q6_k_q6kx32k4_avx2)
PW_KERNEL(q6_k_q6kx32k4_gemm_avx2)
PW_KERNEL(q6_k_q6kx32k4_avxvnni)
PW_KERNEL(q6_k_q6kx32k4_gemm_avxvnni)
#endif
#if defined(__aarch64__)
PW_KERNEL(q6_k_q6kx32k4_dotprod)
PW_KERNEL(q6_k_q6kx32k4_gemm_dotprod)
#endif

/* Q2_K tiled family (kernel/q2kx.h): the file's 2-bit quants, two k steps of 32 rows per
 * 64-byte load, rearranged for SIMD GEMV and GEMM. The portable kernel is the family's
 * reference, ranked below the i8g scalar kernel and above the reference kernel (compact
 * runs it where no SIMD kernel of the family is usable). */
PW_KERNEL(q2_k_q2kx32k4_scalar)
#if defined(__x86_64__)
PW_KERNEL(q2_k_q2kx32k4_avx512vnni)
/* GEMM over the same bytes, ranked above the i8g kernel (PW__PRIO_I8G_X86). */
PW_KERNEL(q2_k_q2kx32k4_gemm_avx512vnni)
/* The same bytes at 256 bits (q2kx_avx2.c, built twice). */
PW_KERNEL(q2_k_q2kx32k4_avx2)
PW_KERNEL(q2_k_q2kx32k4_gemm_avx2)
PW_KERNEL(q2_k_q2kx32k4_avxvnni)
PW_KERNEL(q2_k_q2kx32k4_gemm_avxvnni)
#endif
#if defined(__aarch64__)
PW_KERNEL(q2_k_q2kx32k4_dotprod)
PW_KERNEL(q2_k_q2kx32k4_gemm_dotprod)
#endif

/* TQ2_0 tiled family (kernel/tq2x.h): the file's 2-bit trits laid out as q2kx32k4's quants,
 * then the 32 rows' d. The portable kernel is the family's reference, ranked below the i8g
 * scalar kernel and above the reference kernel (compact runs it where no SIMD kernel of the
 * family is usable). */
PW_KERNEL(tq2_0_tq2x32k4_scalar)
#if defined(__x86_64__)
PW_KERNEL(tq2_0_tq2x32k4_avx512vnni)
/* GEMM over the same bytes, ranked above the i8g kernel (PW__PRIO_I8G_X86). */
PW_KERNEL(tq2_0_tq2x32k4_gemm_avx512vnni)
/* The same bytes at 256 bits (tq2x_avx2.c, built twice). */
PW_KERNEL(tq2_0_tq2x32k4_avx2)
PW_KERNEL(tq2_0_tq2x32k4_gemm_avx2)
PW_KERNEL(tq2_0_tq2x32k4_avxvnni)
PW_KERNEL(tq2_0_tq2x32k4_gemm_avxvnni)
#endif
#if defined(__aarch64__)
PW_KERNEL(tq2_0_tq2x32k4_dotprod)
PW_KERNEL(tq2_0_tq2x32k4_gemm_dotprod)
#endif

/* TQ1_0 tiled family (kernel/tq1x.h): the file's trit bytes moved, one dword of 16 rows
 * per 64-byte load, each of its trits a k step. The portable kernel ranks as Q2_K's. */
PW_KERNEL(tq1_0_tq1x32k4_scalar)
#if defined(__x86_64__)
PW_KERNEL(tq1_0_tq1x32k4_avx512vnni)
PW_KERNEL(tq1_0_tq1x32k4_gemm_avx512vnni)
/* The same bytes at 256 bits (tq1x_avx2.c, built twice). */
PW_KERNEL(tq1_0_tq1x32k4_avx2)
PW_KERNEL(tq1_0_tq1x32k4_gemm_avx2)
PW_KERNEL(tq1_0_tq1x32k4_avxvnni)
PW_KERNEL(tq1_0_tq1x32k4_gemm_avxvnni)
#endif
#if defined(__aarch64__)
PW_KERNEL(tq1_0_tq1x32k4_dotprod)
PW_KERNEL(tq1_0_tq1x32k4_gemm_dotprod)
#endif

/* Q8_0 tiled family (kernel/q8x.h): the file's blocks rearranged for SIMD GEMV and GEMM
 * (one form at the file's size). The portable kernel is the family's reference (never
 * preferred by dispatch). */
PW_KERNEL(q8_0_q8x32k4_scalar)
#if defined(__x86_64__)
PW_KERNEL(q8_0_q8x32k4_avx512vnni)
PW_KERNEL(q8_0_q8x32k4_gemm_avx512vnni)
PW_KERNEL(q8_0_q8x32k4_avx2)
PW_KERNEL(q8_0_q8x32k4_gemm_avx2)
PW_KERNEL(q8_0_q8x32k4_avxvnni)
PW_KERNEL(q8_0_q8x32k4_gemm_avxvnni)
#endif
#if defined(__aarch64__)
PW_KERNEL(q8_0_q8x32k4_dotprod)
PW_KERNEL(q8_0_q8x32k4_gemm_dotprod)
#endif
