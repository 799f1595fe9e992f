#if !defined(__aarch64__)
#error "qc4w_gemm_sme.c is Arm64 only (its SME code is assembled with .arch_extension sme)"
#endif
/*
 * SME (version 1) kernel for the QC4W families qc4w_vl<BITS>_n<NR>k8s2: the
 * tile follows the streaming vector length (SVL), S bytes = BITS / 8, known
 * only at run time (RDSVL; Linux's PR_SME_GET_VL), so there is one descriptor
 * per length and each is usable only at its own (pw__kernel.sme_bytes):
 *
 *   SVL (bits)      128   256   512   1024   2048
 *   mr (rows of X)    4     8    16     32     64     = S / 4: one ZA.S tile's rows
 *   nr (channels)    16    32    64    128    256     = S: four ZA.S tiles side by side
 *
 * The packer is told nr = S, kr = 8, sr = 2 by the descriptor (qc4w.h), so a
 * chunk (8 k values of the tile's S channels, 4S bytes) is, per channel, 4
 * bytes whose low nibbles are w[k0 .. k0+3] and high nibbles w[k0+4 .. k0+7]:
 *
 *   chunk j (4S bytes):  | ch 0: 4 B | ch 1: 4 B | ... | ch S/4-1 |  -> vector W0 (ZA0)
 *                        | ch S/4 .. S/2-1                        |  -> vector W1 (ZA1)
 *                        | ch S/2 .. 3S/4-1                       |  -> vector W2 (ZA2)
 *                        | ch 3S/4 .. S-1                         |  -> vector W3 (ZA3)
 *
 * Sign-extending the low nibbles of Wg (LSL #4 then ASR #4) gives exactly
 * the right operand of a 4-way outer product for k0 .. k0+3 of S/4 channels
 * (4 int8 per 32-bit lane); ASR #4 alone gives the one for k0+4 .. k0+7.
 *
 * The left operand is u = q + 128 of S/4 rows for the same 4 k, from the
 * QD8 panel of mr = S/4 rows (quant/act.h: rows interleaved by 8 bytes):
 * two vectors V0, V1 hold rows 0 .. S/8-1 and S/8 .. S/4-1, 8 k each, and
 * UZP1 / UZP2 of their 32-bit lanes give [row r: u[k0..k0+3]] and
 * [row r: u[k0+4..k0+7]] for r < S/4. A single row (GEMV, or a cell of one
 * row) broadcasts its two words (LD1RW) instead: every ZA row then holds the
 * same sums and only row 0 is stored.
 *
 * ZA use: the whole array, as its four 32-bit tiles ZA0.S .. ZA3.S, each
 * (S/4) x (S/4) int32: ZAg[r][c] = sum of u[r, k] * w[g*S/4 + c, k]
 * (USMOPA: unsigned u times signed w, 4-way). One chunk per loop:
 *
 *   panel: 2 LD1B (u) + 2 UZP   | row: 2 LD1RW (u)
 *   4 LD1B (w) + 4 LSL + 8 ASR + 8 USMOPA + ADDVL + ADD + SUBS + B.NE
 *
 * Steady state: 8 USMOPA per chunk of 4S weight bytes, i.e. 2 / S MOPA per
 * weight byte: 1/8 at 128 bits, 1/16 at 256, 1/32 at 512 (each MOPA being
 * (S/4)^2 x 4 multiply-adds, S/2 per weight byte: each byte's two weights
 * meet S/4 rows). The 12 SVE ALU operations per 8 MOPA are the weight
 * unpack; the 6 loads per 8 MOPA fit the load ports.
 *
 * A single row (mode 1) issues the same 8 MOPA per chunk, of which one ZA row
 * in S/4 is used: GEMV costs as many MOPA per weight byte as GEMM.
 *
 * Emulation. qemu 7.2 (Debian 12's) gets the 4-way integer MOPA into 32-bit
 * tiles wrong: its helper adds lane pair (2r + e) of the left operand to
 * column pair (2c + e) only, into ZA row 2r (upstream fixed it later with
 * DEF_IMOP_8x4_32). A probe (probe_mopa) runs the tile once on a known chunk
 * and picks: the architecture's outer product, mode 0 above; or that
 * pairwise form, served by mode 2: half a panel (S/8 rows) whose words sit
 * in two adjacent lanes (TRN1 / TRN2 of one panel vector), even ZA rows
 * stored; right under both semantics, at half the rows per MOPA. Under qemu
 * the kernel tests run modes 1 and 2 bit for bit at every length, and
 * test_qc4w_sme_vl runs mode 0 against a model of the pairwise MOPA (each
 * row's lane meets the channels of one parity there, so a wrong UZP pairing
 * shows). Anything else the probe sees: the portable kernel runs.
 *
 * Toolchain: the assembly is in this file, assembled by binutils 2.40 with
 * .arch_extension sme: gcc 12 has no SME intrinsics, and code from clang's
 * ZA attributes (__arm_new("za")) calls the SME ABI's runtime routine
 * __arm_tpidr2_save, which Debian 12's libgcc (gcc 12) does not have. So the
 * Arm64 build needs nothing beyond gcc-aarch64-linux-gnu, and no second
 * compiler.
 *
 * Exactness: |u w| <= 255 * 8, so the int32 lanes hold any K <= 2^20
 * (2040 * 2^20 < 2^31; max_in). The epilogue runs in C after SMSTOP, the
 * contract's f32 steps through pw__qc4w_finish:
 *
 *   isum = acc + (neg_zp - 128) * weight_sum      (acc = sum u w = sum q w + 128 * weight_sum)
 *
 * so the outputs are the QC4W reference's bits.
 *
 * What SME2 (out of reach of binutils 2.40 and qemu 7.2) would add: the
 * four weight vectors in one multi-vector load (LD1B {z0.b-z3.b}), the nibble
 * unpack as LUTI4 from ZT0 (one instruction for two vectors instead of
 * LSL + ASR + ASR, and any zero point for free), and for GEMV the multi-
 * vector dot products into ZA array vectors (SDOT/USDOT ZA.S[w, 0, VGx4])
 * instead of a broadcast outer product that fills S/4 identical rows.
 *
 * ABI: the assembly is an ordinary (non-streaming, private-ZA) AAPCS64
 * function that brackets itself with SMSTART / SMSTOP. Both zero the vector
 * registers, so it saves d8-d15 (callee-saved) around them. ZA must be off
 * or free: a caller with lazily saved ZA (TPIDR2_EL0 != 0) gets it saved
 * through __arm_tpidr2_save when the C runtime has it, else the portable
 * kernel runs instead (gcc 12's libgcc has none; nothing in packwise uses ZA
 * outside this call). Likewise a thread whose SVL is not the descriptor's
 * (prctl(PR_SME_SET_VL) after the context was made) runs the portable kernel.
 *
 * llvm-mca estimate (llvm 19, scripts/arm_mca.py; docs/arm_mca.md has the sources):
 *   not modelled: llvm 19 has no scheduling model for SME (USMOPA unresolved
 *   on neoverse-v2, LD1B/SVE unsupported on apple-m4); no figure.
 */
#include "format/blocks.h"
#include "kernel/qc4w.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/*
 * pw__qc4w_sme_tile (declared in qc4w.h): x0 w, the tile (chunk j at w + 4S j);
 * x1 a, the QD8 panel (mode 0; chunk j at a + 2S j) or one row's u (mode 1;
 * chunk j at a + 8 j); x2 chunks (>= 1); x3 acc: rows x S int32 (row r at
 * acc + 4S r: ZA0 row r, then ZA1, ZA2, ZA3); x4 rows to store (1 .. S/4); x5
 * mode: 0 a panel of S/4 rows, 1 one row, 2 half a panel (S/8 rows at a; ZA
 * rows 0, 2, 4, ... stored; see probe_mopa).
 */
/* RDSVL: the streaming vector length in bytes (readable outside streaming mode). */
int64_t pw__qc4w_sme_svl(void);

__asm__(".arch_extension sme\n"
        ".pushsection .text\n"
        ".p2align 4\n"
        ".globl pw__qc4w_sme_svl\n"
        ".hidden pw__qc4w_sme_svl\n"
        ".type pw__qc4w_sme_svl, %function\n"
        "pw__qc4w_sme_svl:\n"
        "    rdsvl x0, #1\n"
        "    ret\n"
        ".size pw__qc4w_sme_svl, .-pw__qc4w_sme_svl\n"
        "\n"
        /* Four weight vectors of one chunk, unpacked, into ZA0..ZA3 against z2 (k0..3), z3 (k4..7). */
        ".macro pw__qc4w_sme_weights\n"
        "    ld1b {z4.b}, p0/z, [x0]\n"
        "    ld1b {z5.b}, p0/z, [x0, #1, mul vl]\n"
        "    ld1b {z6.b}, p0/z, [x0, #2, mul vl]\n"
        "    ld1b {z7.b}, p0/z, [x0, #3, mul vl]\n"
        "    addvl x0, x0, #4\n"
        "    lsl z16.b, z4.b, #4\n"
        "    lsl z17.b, z5.b, #4\n"
        "    lsl z18.b, z6.b, #4\n"
        "    lsl z19.b, z7.b, #4\n"
        "    asr z16.b, z16.b, #4\n"
        "    asr z17.b, z17.b, #4\n"
        "    asr z18.b, z18.b, #4\n"
        "    asr z19.b, z19.b, #4\n"
        "    asr z4.b, z4.b, #4\n"
        "    asr z5.b, z5.b, #4\n"
        "    asr z6.b, z6.b, #4\n"
        "    asr z7.b, z7.b, #4\n"
        "    usmopa za0.s, p0/m, p0/m, z2.b, z16.b\n"
        "    usmopa za1.s, p0/m, p0/m, z2.b, z17.b\n"
        "    usmopa za2.s, p0/m, p0/m, z2.b, z18.b\n"
        "    usmopa za3.s, p0/m, p0/m, z2.b, z19.b\n"
        "    usmopa za0.s, p0/m, p0/m, z3.b, z4.b\n"
        "    usmopa za1.s, p0/m, p0/m, z3.b, z5.b\n"
        "    usmopa za2.s, p0/m, p0/m, z3.b, z6.b\n"
        "    usmopa za3.s, p0/m, p0/m, z3.b, z7.b\n"
        ".endm\n"
        "\n"
        ".p2align 4\n"
        ".globl pw__qc4w_sme_tile\n"
        ".hidden pw__qc4w_sme_tile\n"
        ".type pw__qc4w_sme_tile, %function\n"
        "pw__qc4w_sme_tile:\n"
        "    stp d8, d9, [sp, #-64]!\n"
        "    stp d10, d11, [sp, #16]\n"
        "    stp d12, d13, [sp, #32]\n"
        "    stp d14, d15, [sp, #48]\n"
        "    smstart\n"
        "    zero {za}\n"
        "    ptrue p0.b\n"
        "    rdsvl x9, #1\n"
        "    cmp x5, #1\n"
        "    mov x11, #1\n" /* ZA rows between stored rows */
        "    b.eq 2f\n"
        "    b.hi 5f\n"
        "1:\n" /* mode 0, panel: S/4 rows */
        "    ld1b {z0.b}, p0/z, [x1]\n"
        "    ld1b {z1.b}, p0/z, [x1, #1, mul vl]\n"
        "    add x1, x1, x9, lsl #1\n"
        "    uzp1 z2.s, z0.s, z1.s\n"
        "    uzp2 z3.s, z0.s, z1.s\n"
        "    pw__qc4w_sme_weights\n"
        "    subs x2, x2, #1\n"
        "    b.ne 1b\n"
        "    b 3f\n"
        "2:\n" /* mode 1, one row, broadcast */
        "    ld1rw {z2.s}, p0/z, [x1]\n"
        "    ld1rw {z3.s}, p0/z, [x1, #4]\n"
        "    add x1, x1, #8\n"
        "    pw__qc4w_sme_weights\n"
        "    subs x2, x2, #1\n"
        "    b.ne 2b\n"
        "    b 3f\n"
        "5:\n" /* mode 2, half a panel (S/8 rows), each row's words in two adjacent lanes */
        "    mov x11, #2\n"
        "6:\n"
        "    ld1b {z0.b}, p0/z, [x1]\n"
        "    add x1, x1, x9, lsl #1\n"
        "    trn1 z2.s, z0.s, z0.s\n"
        "    trn2 z3.s, z0.s, z0.s\n"
        "    pw__qc4w_sme_weights\n"
        "    subs x2, x2, #1\n"
        "    b.ne 6b\n"
        "3:\n" /* rows of ZA0..ZA3 to acc */
        "    mov w12, #0\n"
        "4:\n"
        "    st1w {za0h.s[w12, 0]}, p0, [x3]\n"
        "    addvl x10, x3, #1\n"
        "    st1w {za1h.s[w12, 0]}, p0, [x10]\n"
        "    addvl x10, x3, #2\n"
        "    st1w {za2h.s[w12, 0]}, p0, [x10]\n"
        "    addvl x10, x3, #3\n"
        "    st1w {za3h.s[w12, 0]}, p0, [x10]\n"
        "    addvl x3, x3, #4\n"
        "    add w12, w12, w11\n"
        "    subs x4, x4, #1\n"
        "    b.ne 4b\n"
        "    smstop\n"
        "    ldp d10, d11, [sp, #16]\n"
        "    ldp d12, d13, [sp, #32]\n"
        "    ldp d14, d15, [sp, #48]\n"
        "    ldp d8, d9, [sp], #64\n"
        "    ret\n"
        ".size pw__qc4w_sme_tile, .-pw__qc4w_sme_tile\n"
        ".popsection\n");

/* The SME ABI's lazy-save routine (libgcc 14+, compiler-rt); absent here with gcc 12. */
extern void __arm_tpidr2_save(void) __attribute__((weak));

/* Whether ZA may be turned on now: free, or saved for a caller that left it dormant. */
static int za_free(void) {
    uint64_t tpidr2;
    __asm__ volatile("mrs %0, S3_3_C13_C0_5" : "=r"(tpidr2)); /* TPIDR2_EL0 */
    if (tpidr2 == 0) return 1;
    if (__arm_tpidr2_save == NULL) return 0;
    __arm_tpidr2_save();
    return 1;
}

/* The contract's epilogue for rows [m, m + rows) x channels [t0, t0 + cols) of one tile. */
static void finish(const pw__mm_call *c, const uint8_t *meta, int32_t nr, const int32_t *acc,
                   int64_t m, int64_t rows, int64_t t0, int32_t cols) {
    for (int64_t i = 0; i < rows; ++i) {
        const pw__qd8_header *h = pw__qd8_hdr(c->xq + (size_t)(m + i) * c->xq_row_bytes);
        const int64_t zfix = (int64_t)h->neg_zp - 128;
        const size_t at = (size_t)((m + i) * c->ldy + t0);
        for (int32_t ch = 0; ch < cols; ++ch) {
            const int64_t isum = (int64_t)acc[i * nr + ch] + zfix * pw__rd_i32(meta + 4 * ch);
            const float v = pw__qc4w_finish(isum, h->scale, pw__rd_f32(meta + 4 * (nr + ch)),
                                            pw__rd_f32(meta + 4 * (2 * nr + ch)), c->min, c->max);
            if (c->y16 != NULL)
                c->y16[at + (size_t)ch] = pw__f32_to_f16(v);
            else
                c->y[at + (size_t)ch] = v;
        }
    }
}

/*
 * How this machine's 4-way integer MOPA behaves, probed once by running the tile on one
 * known chunk: the architecture's outer product (mode 0 serves whole panels), or the
 * pairwise form of qemu 7.2's helper (before upstream's DEF_IMOP_8x4_32 fix), which adds
 * lane pair (2r + e) of the left operand only to column pair (2c + e) and ZA row 2r.
 * Mode 2 is right under both: each row's words sit in two adjacent lanes, and only
 * even ZA rows are read. Anything else: the portable kernel.
 */
enum { MOPA_UNKNOWN = 0, MOPA_OUTER = 1, MOPA_PAIRWISE = 2, MOPA_BROKEN = 3 };
static _Atomic int g_mopa;

static int probe_mopa(int32_t svl) {
    const int32_t rows = svl / 4, nr = svl;
    uint8_t *w = malloc((size_t)(4 * svl + 2 * svl));
    int32_t *acc = malloc(sizeof(int32_t) * (size_t)(rows * nr));
    int32_t *want = malloc(sizeof(int32_t) * (size_t)(rows * nr));
    int mode = MOPA_UNKNOWN; /* allocation failed: ask again next time */
    if (w != NULL && acc != NULL && want != NULL) {
        uint8_t *a = w + 4 * svl;
        for (int32_t i = 0; i < 4 * svl; ++i) w[i] = (uint8_t)(i * 37 + 11);
        for (int32_t i = 0; i < 2 * svl; ++i) a[i] = (uint8_t)(i * 53 + 7);
        for (int32_t r = 0; r < rows; ++r)
            for (int32_t c = 0; c < nr; ++c) {
                int32_t sum = 0;
                for (int32_t k = 0; k < 8; ++k) {
                    const uint8_t b = w[4 * c + k % 4];
                    const int32_t v = ((k < 4 ? b & 15 : b >> 4) ^ 8) - 8;
                    sum += a[8 * r + k] * v;
                }
                want[r * nr + c] = sum;
            }
        const size_t bytes = sizeof(int32_t) * (size_t)(rows * nr);
        pw__qc4w_sme_tile(w, a, 1, acc, rows, 0);
        if (memcmp(acc, want, bytes) == 0) {
            mode = MOPA_OUTER;
        } else {
            pw__qc4w_sme_tile(w, a, 1, acc, rows / 2, 2);
            pw__qc4w_sme_tile(w, a + svl, 1, acc + (rows / 2) * nr, rows / 2, 2);
            mode = memcmp(acc, want, bytes) == 0 ? MOPA_PAIRWISE : MOPA_BROKEN;
        }
    }
    free(w);
    free(acc);
    free(want);
    return mode;
}

static void run_sme(const pw__mm_call *c, int64_t n0, int64_t n1, int64_t m0, int64_t m1,
                    int32_t *acc) {
    const pw__pack_desc *d = c->pack_desc;
    const int32_t nr = d->nr, mr = d->sme_bytes / 4;
    int mopa = MOPA_BROKEN;
    if (pw__qc4w_sme_svl() == d->sme_bytes && za_free()) {
        mopa = atomic_load_explicit(&g_mopa, memory_order_relaxed);
        if (mopa == MOPA_UNKNOWN) {
            /* Threads racing here probe alike and store the same answer. */
            mopa = probe_mopa(d->sme_bytes);
            atomic_store_explicit(&g_mopa, mopa, memory_order_relaxed);
        }
    }
    if (mopa != MOPA_OUTER && mopa != MOPA_PAIRWISE) {
        pw__qc4w_run_scalar(c, n0, n1, m0, m1);
        return;
    }
    const int64_t kp = d->in_padded, chunks = kp / 8;
    const size_t panel_bytes = (size_t)mr * (size_t)kp;
    const uint64_t sums = pw__qc4w_sums_offset(d);
    for (int64_t t0 = n0; t0 < n1; t0 += nr) {
        const uint8_t *tile = c->packed + (uint64_t)(t0 / nr) * d->tile_bytes;
        const int32_t cols = n1 - t0 < nr ? (int32_t)(n1 - t0) : nr;
        /* m0 is a multiple of mr (the contract), so panels start whole. */
        for (int64_t m = m0; m < m1; m += mr) {
            const int64_t rows = m1 - m < mr ? m1 - m : mr;
            const uint8_t *panel =
                c->xq_panels != NULL ? c->xq_panels + (size_t)(m / mr) * panel_bytes : NULL;
            if (rows > 1 && panel != NULL && mopa == MOPA_OUTER) {
                pw__qc4w_sme_tile(tile, panel, chunks, acc, rows, 0);
                finish(c, tile + sums, nr, acc, m, rows, t0, cols);
            } else if (rows > 1 && panel != NULL) {
                /* Two halves of S/8 rows: V0 (rows 0 .. S/8-1), then V1. */
                for (int64_t h = 0; h < rows; h += mr / 2) {
                    const int64_t hr = rows - h < mr / 2 ? rows - h : mr / 2;
                    pw__qc4w_sme_tile(tile, panel + (h > 0 ? d->sme_bytes : 0), chunks, acc, hr, 2);
                    finish(c, tile + sums, nr, acc, m + h, hr, t0, cols);
                }
            } else {
                for (int64_t i = m; i < m + rows; ++i) {
                    pw__qc4w_sme_tile(tile, pw__qd8_u(c->xq + (size_t)i * c->xq_row_bytes, kp),
                                      chunks, acc, 1, 1);
                    finish(c, tile + sums, nr, acc, i, 1, t0, cols);
                }
            }
        }
    }
}

int pw__qc4w_sme_mopa_form(int32_t svl_bytes) {
    if (pw__qc4w_sme_svl() != svl_bytes || !za_free()) return 0;
    int mopa = atomic_load_explicit(&g_mopa, memory_order_relaxed);
    if (mopa == MOPA_UNKNOWN) {
        mopa = probe_mopa(svl_bytes);
        atomic_store_explicit(&g_mopa, mopa, memory_order_relaxed);
    }
    return mopa;
}

/* One descriptor per streaming vector length, each with its accumulator rows on the stack
 * (mr x nr int32 = S^2 bytes: 256 B at 128 bits, 4 KiB at 512). */
#define PW__QC4W_SME(BITS, NR)                                                              \
    _Static_assert((NR) == (BITS) / 8, "nr is the SVL in bytes");                           \
    static void run_vl##BITS(const pw__mm_call *c, int64_t n0, int64_t n1, int64_t m0,      \
                             int64_t m1) {                                                  \
        _Alignas(64) int32_t acc[(BITS) / 32 * (NR)];                                       \
        run_sme(c, n0, n1, m0, m1, acc);                                                    \
    }                                                                                       \
    const pw__kernel pw__k_qc4w_vl##BITS##_n##NR##k8s2_sme =                                \
        PW__QC4W_SME_KERNEL(BITS, NR, run_vl##BITS, 1 << 20);

PW__QC4W_SME(128, 16)
PW__QC4W_SME(256, 32)
PW__QC4W_SME(512, 64)
PW__QC4W_SME(1024, 128)
PW__QC4W_SME(2048, 256)
