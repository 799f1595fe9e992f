/*
 * AVX-512 VNNI kernel for QB4W family qb4w_n16k8s2: the dispatch over the block sizes'
 * instances (qb4w_ch<CH>_avx512.c) and the batch-1 paths that need no block size
 * (kernel/x86/qb4w_avx512.h has the layout, the arithmetic and the measurements).
 */
#include "kernel/x86/qb4w_avx512.h"

/* The row's block sums QS_b = sum of qu over the values block b multiplies. */
#define PW__QB4W_MAX_SUMS 8192
static void row_sums(const pw__pack_desc *d, const uint8_t *lhs, int64_t kq, int32_t *qs) {
    const uint8_t *u = lhs + sizeof(pw__qd8_header) + kq;
    const int64_t nb = pw__qb4w_blocks_of(d);
    for (int64_t b = 0; b < nb; ++b) {
        const int64_t n = pw__qb4w_block_values(d, b);
        const uint8_t *p = u + b * d->group;
        __m512i s = _mm512_setzero_si512();
        int64_t i = 0;
        for (; i + 64 <= n; i += 64) s = _mm512_add_epi64(s, _mm512_sad_epu8(_mm512_loadu_si512(p + i), _mm512_setzero_si512()));
        int32_t sum = (int32_t)_mm512_reduce_add_epi64(s);
        for (; i < n; ++i) sum += p[i];
        qs[b] = sum;
    }
}

/* Batch 1 without block sums (a row of more than PW__QB4W_MAX_SUMS blocks): the zero
 * points subtracted from the nibbles. Four chains (low/high nibbles of even/odd chunks). */
static void gemv_tile(const tile_ctx *t, const uint8_t *lhs, int64_t kq, uint8_t *y, int f16,
                      __mmask16 mask, __m512 vmin, __m512 vmax) {
    const __m512i m4 = _mm512_set1_epi8(0x0F);
    const uint8_t *u = lhs + sizeof(pw__qd8_header) + kq;
    __m512 accf = _mm512_setzero_ps();
    for (int64_t b = 0; b < t->nb; ++b) {
        const pw__qb4w_at at = block_at_of(t, b);
        const __m512i zv = zero_bytes(t->tile + at.zero);
        const int64_t chunks = b + 1 < t->nb ? t->chunks_per_block : pw__qb4w_block_values(t->d, b) / 8;
        __m512i a0 = _mm512_setzero_si512(), a1 = a0, a2 = a0, a3 = a0;
        const uint8_t *wb = t->tile + at.data;
        const uint8_t *ub = u + 8 * b * t->chunks_per_block;
        for (int64_t j = 0; j < chunks; j += 2) {
            _mm_prefetch((const char *)(wb + 64 * j + PW__QB4W_PF), _MM_HINT_T0);
            _mm_prefetch((const char *)(wb + 64 * j + PW__QB4W_PF + 64), _MM_HINT_T0);
            const __m512i r0 = _mm512_load_si512(wb + 64 * j);
            const __m512i r1 = _mm512_load_si512(wb + 64 * j + 64);
            const __m512i l0 = _mm512_sub_epi8(_mm512_and_si512(r0, m4), zv);
            const __m512i h0 = _mm512_sub_epi8(_mm512_and_si512(_mm512_srli_epi16(r0, 4), m4), zv);
            const __m512i l1 = _mm512_sub_epi8(_mm512_and_si512(r1, m4), zv);
            const __m512i h1 = _mm512_sub_epi8(_mm512_and_si512(_mm512_srli_epi16(r1, 4), m4), zv);
            a0 = _mm512_dpbusd_epi32(a0, bcast32(ub + 8 * j), l0);
            a1 = _mm512_dpbusd_epi32(a1, bcast32(ub + 8 * j + 4), h0);
            a2 = _mm512_dpbusd_epi32(a2, bcast32(ub + 8 * j + 8), l1);
            a3 = _mm512_dpbusd_epi32(a3, bcast32(ub + 8 * j + 12), h1);
        }
        const __m512i acc = _mm512_add_epi32(_mm512_add_epi32(a0, a1), _mm512_add_epi32(a2, a3));
        accf = block_step(accf, acc, _mm512_loadu_ps(t->tile + at.scale));
    }
    finish_row(accf, pw__qd8_hdr(lhs), _mm512_loadu_ps(t->tile + t->fsum_at),
               _mm512_loadu_ps(t->tile + t->bias_at), vmin, vmax, y, f16, mask);
}

static void run_avx512(const pw__mm_call *c, int64_t n0, int64_t n1, int64_t m0, int64_t m1) {
    const pw__pack_desc *d = c->pack_desc;
    const int f16 = c->y16 != NULL;
    const int64_t kq = pw__qd8_k_padded(d->in);
    const size_t ldl = c->xq_row_bytes, esz = f16 ? 2 : 4, ldy_bytes = (size_t)c->ldy * esz;
    const size_t panel_bytes = (size_t)PW__QB4W_MR * (size_t)kq;
    const __m512 vmin = _mm512_set1_ps(c->min), vmax = _mm512_set1_ps(c->max);
    tile_ctx t = {d, NULL, pw__qb4w_blocks_of(d), d->group / 8, pw__qb4w_block_data_bytes(d),
                  pw__qb4w_fsum_offset(d), pw__qb4w_bias_offset(d)};
    int32_t qs[PW__QB4W_MAX_SUMS];
    const int sums = m1 - m0 == 1 && t.nb <= PW__QB4W_MAX_SUMS;
    if (sums) row_sums(d, c->xq + (size_t)m0 * ldl, kq, qs);
    if (sums) {
        const uint8_t *lhs = c->xq + (size_t)m0 * ldl;
        uint8_t *y0 = (f16 ? (uint8_t *)c->y16 : (uint8_t *)c->y) + (size_t)m0 * ldy_bytes;
        switch (d->group / 8) {
        case 2: pw__qb4w_avx512_gemv_ch2(&t, c, n0, n1, lhs, kq, qs, y0, f16, vmin, vmax); break;
        case 4: pw__qb4w_avx512_gemv_ch4(&t, c, n0, n1, lhs, kq, qs, y0, f16, vmin, vmax); break;
        case 8: pw__qb4w_avx512_gemv_ch8(&t, c, n0, n1, lhs, kq, qs, y0, f16, vmin, vmax); break;
        case 16: pw__qb4w_avx512_gemv_ch16(&t, c, n0, n1, lhs, kq, qs, y0, f16, vmin, vmax); break;
        default: pw__qb4w_avx512_gemv_ch32(&t, c, n0, n1, lhs, kq, qs, y0, f16, vmin, vmax); break;
        }
        return;
    }
    /* Pairs of tiles (one alone at the end), each over every panel of rows: the pair's
     * weights stay in L2 while the panels pass. */
    for (int64_t t0 = n0; t0 < n1; t0 += 32) {
        tile_ctx u = t;
        t.tile = c->packed + (uint64_t)(t0 / 16) * d->tile_bytes;
        u.tile = t.tile + d->tile_bytes;
        const int pair = n1 - t0 > 16;
        const int64_t last = pair ? t0 + 16 : t0; /* the tile that may be partial */
        const int64_t cols = n1 - last < 16 ? n1 - last : 16;
        const __mmask16 mask = (__mmask16)((1u << cols) - 1u);
        uint8_t *y = (f16 ? (uint8_t *)c->y16 : (uint8_t *)c->y) + (size_t)t0 * esz;
        if (m1 - m0 == 1) {
            gemv_tile(&t, c->xq + (size_t)m0 * ldl, kq, y + (size_t)m0 * ldy_bytes, f16,
                      pair ? (__mmask16)0xFFFF : mask, vmin, vmax);
            if (pair)
                gemv_tile(&u, c->xq + (size_t)m0 * ldl, kq, y + (size_t)m0 * ldy_bytes + 16 * esz, f16, mask,
                          vmin, vmax);
            continue;
        }
        /* m0 is a multiple of mr (the contract), so panels start at whole panels. */
        for (int64_t m = m0; m < m1; m += PW__QB4W_MR) {
            const uint8_t *a = c->xq_panels + (size_t)(m / PW__QB4W_MR) * panel_bytes;
            const uint8_t *rows = c->xq + (size_t)m * ldl;
            uint8_t *yy = y + (size_t)m * ldy_bytes;
            const int nrows = (int)(m1 - m < PW__QB4W_MR ? m1 - m : PW__QB4W_MR);
            const uint64_t next = (pair ? 2 : 1) * d->tile_bytes;
            switch (d->group / 8) {
            case 2: pw__qb4w_avx512_panel_ch2(&t, &u, pair, next, a, rows, ldl, yy, ldy_bytes, f16, mask, vmin, vmax, nrows); break;
            case 4: pw__qb4w_avx512_panel_ch4(&t, &u, pair, next, a, rows, ldl, yy, ldy_bytes, f16, mask, vmin, vmax, nrows); break;
            case 8: pw__qb4w_avx512_panel_ch8(&t, &u, pair, next, a, rows, ldl, yy, ldy_bytes, f16, mask, vmin, vmax, nrows); break;
            case 16: pw__qb4w_avx512_panel_ch16(&t, &u, pair, next, a, rows, ldl, yy, ldy_bytes, f16, mask, vmin, vmax, nrows); break;
            default: pw__qb4w_avx512_panel_ch32(&t, &u, pair, next, a, rows, ldl, yy, ldy_bytes, f16, mask, vmin, vmax, nrows); break;
            }
        }
    }
}

const pw__kernel pw__k_qb4w_n16k8s2_avx512vnni = PW__QB4W_KERNEL(
    16, 8, 2, "avx512vnni",
    PW_CPU_AVX512F | PW_CPU_AVX512BW | PW_CPU_AVX512VL | PW_CPU_AVX512VNNI | PW_CPU_F16C | PW_CPU_FMA,
    run_avx512,
    PW__PRIO_AVX512, PW__QB4W_MR, PW__QB4W_MR);
