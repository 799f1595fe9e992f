/*
 * The one list of kernels (STYLE.md rule 5). Dispatch, the tests and the
 * bench all iterate over it; adding a kernel is one line here plus its file.
 * Each PW_KERNEL(id) names a `const pw__kernel pw__k_<id>` defined next to
 * the kernel's code. Lines are grouped by ISA; order inside the list does not
 * matter (dispatch ranks by priority).
 */

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

#if defined(__x86_64__)
/* AVX2 + FMA + F16C: row-major GEMV, 32-element formats and float formats. */

/* AVX2 + FMA + F16C: row-major GEMV, K-quants and ternary. */

/* AVX2: i8g GEMM. */

/* AVX-512 F/BW/VL + VNNI: row-major GEMV. */

/* AVX-512 VNNI: i8g GEMM. */
#endif

#if defined(__aarch64__)
/* NEON dotprod: row-major GEMV. */

/* NEON dotprod: i8g GEMM. */

/* NEON i8mm: GEMM. */
#endif
