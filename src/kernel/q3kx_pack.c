/*
 * Packer of the q3kx32k4 family (layout in q3kx.h) and its portable kernel:
 * the reference of what the SIMD kernels compute, so the packer is tested at
 * every ISA level. Its priority is below the i8g scalar kernel of Q3_K (the
 * fastest policy's choice) but above the reference kernel, so the compact
 * policy runs it where no SIMD kernel of the family is usable (the scalar
 * level, Arm without dotprod): it reads each record byte once for both of its
 * rows. PACKWISE_ISA=scalar packwise bench --formats Q3_K --shapes
 * 256x1024,4096x4096 --batch 1,4 --threads 1 --quick, compact against
 * in_place (ref_q3_k), one run on a shared AMD EPYC VM: GEMV 2.5x, n = 4 1.9x
 * (a first version reading each value's byte per row: 0.42x and 0.37x).
 */
#include "base/internal.h"
#include "format/blocks.h"
#include "kernel/q3kx.h"

#include <stddef.h>
#include <string.h>

static const pw__tile32_family q3kx_family = {
    PW__Q3KX_FAMILY, PW_FORMAT_Q3_K, PW__Q3KX_KR, 16, PW__Q3KX_VERSION, PW__Q3KX_RECORD};

pw_status pw__q3kx_pack_plan(pw_context *ctx, pw_format format, int64_t out, int64_t in,
                             pw__pack_desc *d) {
    return pw__tile32_plan(ctx, &q3kx_family, format, out, in, d);
}

/* Where q3kx.h puts value e (0..255) of row r (0..31) in a record: the byte of its
 * load P_k (k = 0..2) and the nibble's shift. Step u = e % 16 / 4 < 3 keeps its
 * quant in bits 0-2 of the nibble of P_u, step 3 bit k of it in bit 3 of P_k's. */
static size_t q3kx_byte(int r, int e, int k) {
    return (size_t)(PW__Q3KX_SUB * (e / 16) + 64 * k + 4 * (r % 16) + e % 4);
}
static int q3kx_shift(int r) { return r < 16 ? 0 : 4; }

/* The 3-bit quant q (0..7) of value e of a Q3_K block: low2 + 4 * (hmask bit). */
static int q3k_quant(const pw__block_q3_K *blk, int e) {
    const int low2 = blk->qs[32 * (e / 128) + e % 32] >> (2 * (e % 128 / 32)) & 3;
    const int high = blk->hmask[e % 32] >> (e / 32) & 1;
    return low2 + 4 * high;
}

void pw__q3kx_pack(const pw__pack_desc *d, const pw_view *w, int64_t o0, int64_t o1, uint8_t *dst) {
    const int64_t nb = d->in / 256;
    for (int64_t t0 = o0; t0 < o1; t0 += PW__Q3KX_NR) {
        uint8_t *tile = dst + (uint64_t)((t0 - o0) / PW__Q3KX_NR) * d->tile_bytes;
        memset(tile, 0, (size_t)d->tile_bytes);
        for (int r = 0; r < PW__Q3KX_NR && t0 + r < d->out; ++r) {
            for (int64_t b = 0; b < nb; ++b) {
                /* A copy: file bytes sit at any address (a GGUF with alignment 1). */
                pw__block_q3_K blk;
                memcpy(&blk, pw_view_block_ptr(w, t0 + r, b), sizeof blk);
                uint8_t *rec = tile + (uint64_t)b * PW__Q3KX_RECORD;
                for (int e = 0; e < 256; ++e) {
                    const int q = q3k_quant(&blk, e), u = e % 16 / 4;
                    if (u < 3) {
                        rec[q3kx_byte(r, e, u)] |= (uint8_t)(q << q3kx_shift(r));
                    } else {
                        for (int k = 0; k < 3; ++k) /* bit k at bit 3 of the nibble of P_k */
                            rec[q3kx_byte(r, e, k)] |=
                                (uint8_t)((q >> k & 1) << (3 + q3kx_shift(r)));
                    }
                }
                for (int i = 0; i < 12; ++i)
                    rec[PW__Q3KX_SCALES + 192 * (r / 16) + 16 * i + r % 16] = blk.scales[i];
                memcpy(rec + PW__Q3KX_D + 2 * r, &blk.d, 2);
            }
        }
    }
}

/* Record-making (q3kx.h) from the 32 blocks of a column, with blocks.h's names: qs dword
 * 8h + D (D = 0..7) holds at bits 2g of its byte j the low2 of value 128h + 32g + 4D + j
 * (sub-block 8h + 2g + D / 4, step D % 4), hmask dword D at bit 4h + g of byte j its high
 * bit; steps 0..2 of rows r and r + 16 fill the nibbles of lane r of P_0..P_2, bit k of
 * step 3 their top bits. */
void pw__q3kx_record_from_blocks(const uint8_t *src, uint8_t *rec) {
    const size_t bb = sizeof(pw__block_q3_K);
    const uint32_t m2 = 0x03030303u, m1 = 0x01010101u;
    for (int r = 0; r < 16; ++r) {
        const uint8_t *a = src + r * bb, *b = src + (r + 16) * bb;
        uint32_t ha[8], hb[8];
        memcpy(ha, a + offsetof(pw__block_q3_K, hmask), 32);
        memcpy(hb, b + offsetof(pw__block_q3_K, hmask), 32);
        for (int h = 0; h < 2; ++h) {
            uint32_t x[8], y[8];
            memcpy(x, a + offsetof(pw__block_q3_K, qs) + 32 * h, 32);
            memcpy(y, b + offsetof(pw__block_q3_K, qs) + 32 * h, 32);
            for (int g = 0; g < 4; ++g) {
                uint32_t qa[8], qb[8]; /* the 3-bit quants, one a byte */
                for (int D = 0; D < 8; ++D) {
                    qa[D] = (x[D] >> 2 * g & m2) | (ha[D] >> (4 * h + g) & m1) << 2;
                    qb[D] = (y[D] >> 2 * g & m2) | (hb[D] >> (4 * h + g) & m1) << 2;
                }
                for (int half = 0; half < 2; ++half) {
                    const uint32_t *pa = qa + 4 * half, *pb = qb + 4 * half;
                    const int s = 8 * h + 2 * g + half;
                    for (int k = 0; k < 3; ++k) {
                        const uint32_t lo = pa[k] | (pa[3] >> k & m1) << 3;
                        const uint32_t hi = pb[k] | (pb[3] >> k & m1) << 3;
                        const uint32_t v = lo | hi << 4;
                        memcpy(rec + PW__Q3KX_SUB * s + 64 * k + 4 * r, &v, 4);
                    }
                }
            }
        }
    }
    for (int r = 0; r < 32; ++r) {
        const uint8_t *blk = src + r * bb;
        for (int i = 0; i < 12; ++i)
            rec[PW__Q3KX_SCALES + 192 * (r / 16) + 16 * i + r % 16] =
                blk[offsetof(pw__block_q3_K, scales) + i];
        memcpy(rec + PW__Q3KX_D + 2 * r, blk + offsetof(pw__block_q3_K, d), 2);
    }
}

/* A record's 32 rows at once with one activation block: isum[r] = sum_s (scale_s - 32) *
 * sum_e (q - 4) x.qs[e], the unsigned quants against the activations and the -4 offset
 * once per sub-block. Each byte of a step's load read once for both its rows, so the
 * portable kernel, which compact dispatch runs where no SIMD kernel of the family is
 * usable (it ranks above the reference kernel, which reads the file's bytes in place),
 * is not slower than the reference kernel it displaces. */
static void q3kx_record_dots(const uint8_t *rec, const pw__q8_256 *x, int32_t isum[32]) {
    int8_t sc[32][16];
    for (int r = 0; r < 32; ++r) {
        uint8_t packed[12];
        for (int k = 0; k < 12; ++k)
            packed[k] = rec[PW__Q3KX_SCALES + 192 * (r / 16) + 16 * k + r % 16];
        pw__q3k_unpack_scales(packed, sc[r]);
    }
    for (int r = 0; r < 32; ++r) isum[r] = 0;
    for (int s = 0; s < 16; ++s) {
        const uint8_t *sub = rec + PW__Q3KX_SUB * s;
        const int8_t *xs = x->qs + 16 * s;
        const int32_t c = -4 * x->bsums[s];
        for (int l = 0; l < 16; ++l) { /* lane l: rows l (low nibbles) and l + 16 (high) */
            int32_t lo = c, hi = c;
            for (int j = 0; j < 4; ++j) {
                const int b0 = sub[4 * l + j], b1 = sub[64 + 4 * l + j], b2 = sub[128 + 4 * l + j];
                /* steps 0..2: the nibbles' bits 0-2; step 3: bit k in bit 3 of load k's */
                const int q3 = (b0 >> 3 & 0x11) | (b1 >> 2 & 0x22) | (b2 >> 1 & 0x44);
                lo += (b0 & 7) * xs[j] + (b1 & 7) * xs[4 + j] + (b2 & 7) * xs[8 + j] +
                      (q3 & 7) * xs[12 + j];
                hi += (b0 >> 4 & 7) * xs[j] + (b1 >> 4 & 7) * xs[4 + j] +
                      (b2 >> 4 & 7) * xs[8 + j] + (q3 >> 4) * xs[12 + j];
            }
            isum[l] += (sc[l][s] - 32) * lo;
            isum[l + 16] += (sc[l + 16][s] - 32) * hi;
        }
    }
}

static void q3kx_run_scalar(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    const pw__pack_desc *d = c->pack_desc;
    const int64_t nb = d->in / 256;
    for (int64_t t0 = o0; t0 < o1; t0 += PW__Q3KX_NR) {
        const uint8_t *tile = c->packed + (uint64_t)(t0 / PW__Q3KX_NR) * d->tile_bytes;
        const int rows = o1 - t0 < PW__Q3KX_NR ? (int)(o1 - t0) : PW__Q3KX_NR;
        for (int64_t i = i0; i < i1; ++i) {
            const pw__q8_256 *x = (const pw__q8_256 *)(c->xq + (uint64_t)i * c->xq_row_bytes);
            float acc[32] = {0};
            for (int64_t b = 0; b < nb; ++b) {
                const uint8_t *rec = tile + (uint64_t)b * PW__Q3KX_RECORD;
                int32_t isum[32];
                q3kx_record_dots(rec, &x[b], isum);
                for (int r = 0; r < rows; ++r) {
                    uint16_t h;
                    memcpy(&h, rec + PW__Q3KX_D + 2 * r, 2);
                    acc[r] += pw__f16_to_f32(h) * x[b].d * (float)isum[r];
                }
            }
            for (int r = 0; r < rows; ++r) c->y[i * c->ldy + t0 + r] = acc[r];
        }
    }
}

const pw__kernel pw__k_q3_k_q3kx32k4_scalar =
    PW__Q3KX_KERNEL("scalar", 0, q3kx_run_scalar, PW__PRIO_SCALAR - 1);
