#if !defined(__AVX512F__) || !defined(__AVX512BW__) || !defined(__AVX512VL__) || \
    !defined(__AVX512VNNI__)
#error "i8g_avx512.c needs -mavx512f -mavx512bw -mavx512vl -mavx512vnni (cmake gives *_avx512.c these flags)"
#endif
/*
 * AVX-512 VNNI GEMM over the i8g packed family (layout in kernel/i8g.h):
 * Y[i, o] for a rectangle [o0, o1) x [i0, i1). The micro-tile is two packed
 * tiles (32 outputs, two zmm) by PW__VNNI_MR = 8 rows of X.
 *
 * vpdpbusd multiplies unsigned by signed bytes. The activation supplies the
 * unsigned side (qu = qs + 128, one dword = 4 k values broadcast per row),
 * the packed weight the signed side (one 64-byte load = 16 outputs x 4 k),
 * and each group's int32 accumulator starts from the packed corr =
 * -128 * sum(q), so it ends as sum(qs * q) with no extra instruction:
 *
 *   packed group record, per tile (G = 32)   activation block (pw__q8_32, 96 B)
 *   +-- 64 B: rows 0..15 x k 0..3 --+        +-d-+dsum+ ... +- qs[32] -+- qu[32] -+
 *   +-- 64 B: rows 0..15 x k 4..7 --+          0   4          32         64
 *   ...  G/4 steps                           G = 16 reads pw__q8_256: d at 0,
 *   +-- corr i32[16] --+-- scale f32[16] --+(-- min f32[16] --)  bsums at 8, qu at 320
 *
 * Why this shape: vpdpbusd has a latency of about 6 cycles and two issue
 * ports, so a group needs 12 or more independent accumulators to run at
 * peak; 2 tiles x 8 rows gives 16 (in an assembly prototype with the f32
 * work below, one tile x 8 rows ran at 57% of peak, this shape at 73%). The
 * f32 partial sums (16 zmm more) do not fit beside them, so they live in a
 * 1 KB L1 buffer that each group reads and writes once per (row, tile):
 * loads and stores use ports the dot products do not.
 *
 * Per group, row and tile: G/4 vpdpbusd, then G = 32:
 *   acc += cvt(idot) * (scale * d_x)  (+ min * dsum_x)
 * and G = 16 (one activation scale per 256):
 *   sb += cvt(idot) * scale (+ min * bsum_x);  acc += sb * d_x every 16 groups.
 * Those 3 (G = 16: 2) extra vector ops per 8 (4) vpdpbusd bound the kernel at
 * about 73% (67%) of the vpdpbusd peak.
 *
 * Blocking (BLIS order; measured on a shared 2-core VM whose L3 and memory
 * gave one core only 3-8 GB/s, so the weights must be streamed once): row
 * blocks of at most 128 rows of X; passes over the input whose activations
 * for the block fit in L2 (PW__VNNI_XL2: n = 128 at in = 4096 is one pass);
 * tile pairs; chunks of PW__VNNI_KC input values; row panels. Inside a chunk
 * the pair's groups (20 KB for Q4_0) stay in L1 while every panel streams
 * past them; the pair's partial sums for the block (rows x 128 B) stay in a
 * contiguous stack block across its chunks, not in Y, whose rows are often
 * a multiple of 4 KB apart. The next chunk's groups are prefetched a line
 * or two per group (a burst per panel held the fill buffers the activation
 * loads need), activations a few groups ahead, the next pair's Y lines
 * while this pair writes back.
 *
 * Edges take the same path: outputs past o1 (the pack holds zero rows
 * there) are masked off on every Y access, a lone last tile runs with
 * nt = 1, and a short last panel repeats its last row of X in the unused
 * slots (of 4 or 8) and stores only the real ones.
 */
#include "kernel/i8g.h"

#include <immintrin.h>
#include <stddef.h>
#include <string.h>

#define PW__VNNI_MR 8   /* rows of X per micro-tile */
#define PW__VNNI_NT 2   /* packed tiles (of 16 outputs) per micro-tile */
#define PW__VNNI_KC 512 /* input values per chunk: a multiple of 256 */
#define PW__VNNI_XPF 2  /* groups ahead to prefetch activations (G = 32) */
#define PW__VNNI_MB 128 /* most rows of X per row block */
#define PW__VNNI_XL2 (1536u << 10) /* bytes of a row block's activations per pass (L2: 2 MB) */

#define PW__VNNI_FEATURES \
    (PW_CPU_AVX512F | PW_CPU_AVX512BW | PW_CPU_AVX512VL | PW_CPU_AVX512VNNI)

#define PW__INLINE static inline __attribute__((always_inline))

PW__INLINE __m512i bcast_u32(const uint8_t *p) {
    int32_t v;
    memcpy(&v, p, 4);
    return _mm512_set1_epi32(v);
}

PW__INLINE __m512 bcast_f32(const uint8_t *p) {
    float v;
    memcpy(&v, p, 4);
    return _mm512_set1_ps(v);
}

/* Where one micro-tile reads and accumulates. acc: [row][tile][16] f32. */
typedef struct utile {
    const uint8_t *w;              /* group record of the first tile at the chunk start */
    uint64_t tile_bytes, rec;      /* bytes between tiles, between group records */
    int64_t ng;                    /* groups in this chunk */
    const uint8_t *x[PW__VNNI_MR]; /* activation block of each row at the chunk start */
    float *acc;
    /* Packed bytes needed next, prefetched pf_lines lines per group: [pf, pf_end) of
     * the first tile and, when pf_nt is 2, the same bytes of the second. */
    const uint8_t *pf, *pf_end;
    int pf_lines, pf_nt;
} utile;

/* One group's share of the next packed bytes (spread out: a burst would hold the
 * line fill buffers that the activation loads need). */
PW__INLINE const uint8_t *prefetch_next(const utile *u, const uint8_t *pf) {
    for (int l = 0; l < u->pf_lines && pf < u->pf_end; ++l, pf += 64) {
        _mm_prefetch((const char *)pf, _MM_HINT_T0);
        if (u->pf_nt == 2) _mm_prefetch((const char *)(pf + u->tile_bytes), _MM_HINT_T0);
    }
    return pf;
}

/*
 * The integer part of one group for nt tiles x mr rows: idot[r][t] =
 * corr + sum over the group of qu * q, i.e. sum(qs * q). `xo` is the byte
 * offset of the group's first qu within each row.
 */
PW__INLINE void group_dot(__m512i id[PW__VNNI_MR][PW__VNNI_NT], const uint8_t *w, uint64_t tb,
                          const uint8_t *const *x, size_t xo, const int g, const int nt,
                          const int mr) {
#pragma GCC unroll 2
    for (int t = 0; t < nt; ++t) {
        const __m512i corr = _mm512_load_si512(w + t * tb + g * PW__I8G_NR);
#pragma GCC unroll 8
        for (int r = 0; r < mr; ++r) id[r][t] = corr;
    }
#pragma GCC unroll 8
    for (int s = 0; s < g / 4; ++s) {
        __m512i wt[PW__VNNI_NT];
#pragma GCC unroll 2
        for (int t = 0; t < nt; ++t) wt[t] = _mm512_load_si512(w + t * tb + 64 * s);
#pragma GCC unroll 8
        for (int r = 0; r < mr; ++r) {
            const __m512i a = bcast_u32(x[r] + xo + 4 * s);
#pragma GCC unroll 2
            for (int t = 0; t < nt; ++t) id[r][t] = _mm512_dpbusd_epi32(id[r][t], a, wt[t]);
        }
    }
}

/* G = 32 against pw__q8_32 rows: acc += cvt(idot) * scale * d (+ min * dsum). */
PW__INLINE void utile_g32(const utile *u, const int nt, const int mr, const int has_min) {
    const uint8_t *w = u->w, *pf = u->pf;
    const uint8_t *x[PW__VNNI_MR];
#pragma GCC unroll 8
    for (int r = 0; r < mr; ++r) x[r] = u->x[r];
    for (int64_t j = 0; j < u->ng; ++j, w += u->rec) {
        pf = prefetch_next(u, pf);
        __m512i id[PW__VNNI_MR][PW__VNNI_NT];
        group_dot(id, w, u->tile_bytes, x, offsetof(pw__q8_32, qu), 32, nt, mr);
        __m512 sc[PW__VNNI_NT], mn[PW__VNNI_NT];
#pragma GCC unroll 2
        for (int t = 0; t < nt; ++t) {
            sc[t] = _mm512_load_ps(w + t * u->tile_bytes + 32 * PW__I8G_NR + 64);
            if (has_min) mn[t] = _mm512_load_ps(w + t * u->tile_bytes + 32 * PW__I8G_NR + 128);
        }
#pragma GCC unroll 8
        for (int r = 0; r < mr; ++r) {
            const __m512 d = bcast_f32(x[r] + offsetof(pw__q8_32, d));
#pragma GCC unroll 2
            for (int t = 0; t < nt; ++t) {
                float *p = u->acc + (r * PW__VNNI_NT + t) * 16;
                __m512 v = _mm512_load_ps(p);
                if (has_min) v = _mm512_fmadd_ps(mn[t], bcast_f32(x[r] + offsetof(pw__q8_32, dsum)), v);
                v = _mm512_fmadd_ps(_mm512_cvtepi32_ps(id[r][t]), _mm512_mul_ps(sc[t], d), v);
                _mm512_store_ps(p, v);
            }
            _mm_prefetch((const char *)(x[r] + PW__VNNI_XPF * sizeof(pw__q8_32)), _MM_HINT_T0);
            _mm_prefetch((const char *)(x[r] + PW__VNNI_XPF * sizeof(pw__q8_32) + 64), _MM_HINT_T0);
            x[r] += sizeof(pw__q8_32);
        }
        /* Keep the partial sums in the buffer: holding them in registers spills the
         * dot-product accumulators instead (gcc 12, clang 14), about 10% slower. */
        __asm__ volatile("" : : "r"(u->acc) : "memory");
    }
}

/*
 * One G = 16 group j of a block: sb += cvt(idot) * scale (+ min * bsum);
 * `first` (a constant) starts sb instead of reading it.
 */
PW__INLINE void g16_group(const utile *u, const uint8_t *w, const uint8_t *const *x, int j,
                          float *sb, float bs[PW__VNNI_MR][16], const int first, const int nt,
                          const int mr, const int has_min) {
    __m512i id[PW__VNNI_MR][PW__VNNI_NT];
    group_dot(id, w, u->tile_bytes, x, offsetof(pw__q8_256, qu) + 16 * (size_t)j, 16, nt, mr);
#pragma GCC unroll 2
    for (int t = 0; t < nt; ++t) {
        const __m512 sc = _mm512_load_ps(w + t * u->tile_bytes + 16 * PW__I8G_NR + 64);
        const __m512 mn = has_min ? _mm512_load_ps(w + t * u->tile_bytes + 16 * PW__I8G_NR + 128)
                                  : _mm512_setzero_ps();
#pragma GCC unroll 8
        for (int r = 0; r < mr; ++r) {
            float *p = sb + (r * PW__VNNI_NT + t) * 16;
            __m512 v = first ? _mm512_setzero_ps() : _mm512_load_ps(p);
            if (has_min) v = _mm512_fmadd_ps(mn, _mm512_set1_ps(bs[r][j]), v);
            _mm512_store_ps(p, _mm512_fmadd_ps(_mm512_cvtepi32_ps(id[r][t]), sc, v));
        }
    }
}

/*
 * G = 16 against pw__q8_256 rows (ng a multiple of 16): per-256 sums sb in
 * a second buffer, folded into acc with the block's d.
 */
PW__INLINE void utile_g16(const utile *u, float *sb, const int nt, const int mr,
                          const int has_min) {
    const uint8_t *w = u->w, *pf = u->pf;
    const uint8_t *x[PW__VNNI_MR];
#pragma GCC unroll 8
    for (int r = 0; r < mr; ++r) x[r] = u->x[r];
    for (int64_t b = 0; b < u->ng / 16; ++b) {
        /* bsums as f32, so each min term is one fma with a broadcast operand. */
        float bs[PW__VNNI_MR][16] __attribute__((aligned(64)));
        if (has_min) {
#pragma GCC unroll 8
            for (int r = 0; r < mr; ++r) {
                const __m256i s16 = _mm256_loadu_si256(
                    (const __m256i *)(const void *)(x[r] + offsetof(pw__q8_256, bsums)));
                _mm512_store_ps(bs[r], _mm512_cvtepi32_ps(_mm512_cvtepi16_epi32(s16)));
            }
        }
        for (int j = 0; j < 16; ++j, w += u->rec) {
            pf = prefetch_next(u, pf);
            if (j < 5) {
                /* The lines of the next activation block this kernel reads: header, qu. */
                const size_t line = j == 0 ? 0 : offsetof(pw__q8_256, qu) + 64 * (size_t)(j - 1);
#pragma GCC unroll 8
                for (int r = 0; r < mr; ++r)
                    _mm_prefetch((const char *)(x[r] + sizeof(pw__q8_256) + line), _MM_HINT_T0);
            }
            if (j == 0)
                g16_group(u, w, x, j, sb, bs, 1, nt, mr, has_min);
            else
                g16_group(u, w, x, j, sb, bs, 0, nt, mr, has_min);
        }
#pragma GCC unroll 8
        for (int r = 0; r < mr; ++r) {
            const __m512 d = bcast_f32(x[r] + offsetof(pw__q8_256, d));
#pragma GCC unroll 2
            for (int t = 0; t < nt; ++t) {
                float *p = u->acc + (r * PW__VNNI_NT + t) * 16;
                _mm512_store_ps(p, _mm512_fmadd_ps(_mm512_load_ps(sb + (r * PW__VNNI_NT + t) * 16), d,
                                                   _mm512_load_ps(p)));
            }
            x[r] += sizeof(pw__q8_256);
        }
    }
}

/* One micro-tile instance: nt, mr, g and has_min are constants at each call site. */
PW__INLINE void utile_run(const utile *u, float *sb, const int g, const int nt, const int mr,
                          const int has_min) {
    if (g == 32)
        utile_g32(u, nt, mr, has_min);
    else
        utile_g16(u, sb, nt, mr, has_min);
}

/* Dispatch on the (runtime) tile count and panel height to constant instances. */
PW__INLINE void utile_any(const utile *u, float *sb, int nt, int mr, const int g,
                          const int has_min) {
    if (nt == 2) {
        if (mr == 8)
            utile_run(u, sb, g, 2, 8, has_min);
        else
            utile_run(u, sb, g, 2, 4, has_min);
    } else {
        if (mr == 8)
            utile_run(u, sb, g, 1, 8, has_min);
        else
            utile_run(u, sb, g, 1, 4, has_min);
    }
}

/* Output masks of a tile pair starting at t0: outputs past o1 are never touched. */
static void pair_masks(int64_t t0, int64_t o1, __mmask16 m[PW__VNNI_NT]) {
    for (int t = 0; t < PW__VNNI_NT; ++t) {
        const int64_t l = o1 - t0 - t * PW__I8G_NR;
        m[t] = l <= 0 ? 0 : (__mmask16)(l >= PW__I8G_NR ? 0xFFFFu : (1u << l) - 1u);
    }
}

/* Where one tile pair of one row block runs (see run_family). */
typedef struct pair_run {
    int64_t ib, ie;           /* rows of X */
    int64_t j1, j2;           /* groups of this pass over the input */
    int64_t t0, o1;           /* first output; end of the rectangle */
    __mmask16 m[PW__VNNI_NT]; /* live outputs of each tile */
    int nt;                   /* tiles present (1 for a lone last tile) */
} pair_run;

/*
 * The chunks of groups [j1, j2) of one tile pair for the rows of one row
 * block. The pair's partial sums live in yb ([row][tile][16] f32, rows
 * contiguous): Y's rows are out * 4 bytes apart, often a multiple of 4 KB,
 * so held in Y they would crowd a few L1 sets. yb is read from Y (masked)
 * before the pass unless it is the first, and written back panel by panel
 * in its last chunk.
 */
PW__INLINE void pair_chunks(const pw__mm_call *c, utile *u, float *sb, float *yb, const pair_run *p,
                            const int g, const int has_min) {
    const pw__pack_desc *d = c->pack_desc;
    const int64_t groups = p->j2, kc = PW__VNNI_KC / g, pair = PW__VNNI_NT * PW__I8G_NR;
    const int64_t xblock = g == 32 ? (int64_t)sizeof(pw__q8_32) : (int64_t)sizeof(pw__q8_256);
    const int64_t xgroups = g == 32 ? 1 : 16; /* groups per activation block */
    const int64_t rows = p->ie - p->ib, panels = (rows + PW__VNNI_MR - 1) / PW__VNNI_MR;
    const int64_t ldy = c->ldy;
    float *y = c->y + p->ib * ldy + p->t0;
    for (int64_t r = 0; r < panels * PW__VNNI_MR; ++r)
        for (int t = 0; t < PW__VNNI_NT; ++t)
            _mm512_store_ps(yb + (r * PW__VNNI_NT + t) * 16,
                            p->j1 > 0 && r < rows ? _mm512_maskz_loadu_ps(p->m[t], y + r * ldy + 16 * t)
                                                  : _mm512_setzero_ps());
    const uint8_t *tile = c->packed + (uint64_t)(p->t0 / PW__I8G_NR) * d->tile_bytes;
    for (int64_t j0 = p->j1; j0 < groups; j0 += kc) {
        u->ng = groups - j0 < kc ? groups - j0 : kc;
        u->w = tile + (uint64_t)j0 * u->rec;
        /* What comes next: this pair's next chunk, else the next pair's first. */
        const int last = j0 + kc >= groups;
        const int64_t tn = last ? p->t0 + pair : p->t0, jn = last ? p->j1 : j0 + kc;
        const int next_nt = tn >= p->o1 ? 0 : (p->o1 - tn > PW__I8G_NR ? 2 : 1);
        const uint64_t lines = ((uint64_t)(groups - jn < kc ? groups - jn : kc) * u->rec + 63) / 64;
        u->pf = c->packed + (uint64_t)(tn / PW__I8G_NR) * d->tile_bytes + (uint64_t)jn * u->rec;
        u->pf_end = next_nt ? u->pf + 64 * lines : u->pf;
        u->pf_nt = next_nt;
        u->pf_lines = (int)((lines + (uint64_t)(panels * u->ng) - 1) / (uint64_t)(panels * u->ng));
        const int64_t xoff = j0 / xgroups * xblock;
        for (int64_t i = 0; i < rows; i += PW__VNNI_MR) {
            const int live = rows - i < PW__VNNI_MR ? (int)(rows - i) : PW__VNNI_MR;
            /* Rows past the block repeat its last row; their sums are never stored. */
            for (int r = 0; r < PW__VNNI_MR; ++r)
                u->x[r] = c->xq + (uint64_t)(p->ib + i + (r < live ? r : live - 1)) * c->xq_row_bytes +
                          (uint64_t)xoff;
            u->acc = yb + i * PW__VNNI_NT * 16;
            utile_any(u, sb, p->nt, live > 4 ? 8 : 4, g, has_min);
            u->pf += 64 * u->pf_lines * u->ng;
            if (!last) continue;
            /* Write the panel back, and fetch the next pair's Y lines of the same rows so
             * that its write-back does not wait for memory (into L2: rows of Y that are a
             * multiple of 4 KB apart would evict each other from L1). */
            for (int64_t r = i; r < i + live; ++r) {
                for (int t = 0; t < p->nt; ++t)
                    _mm512_mask_storeu_ps(y + r * ldy + 16 * t, p->m[t],
                                          _mm512_load_ps(yb + (r * PW__VNNI_NT + t) * 16));
                for (int t = 0; t < next_nt; ++t)
                    _mm_prefetch((const char *)(y + r * ldy + pair + 16 * t), _MM_HINT_T1);
            }
        }
    }
}

/*
 * Row blocks of X (at most 128 rows: more adds no reuse of a weight load),
 * passes over the input whose activations for the block fit in PW__VNNI_XL2
 * (more passes re-read Y's partial sums, which costs less than streaming the
 * weights again for another row block once in > ~1K), then tile pairs.
 */
PW__INLINE void run_family(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1,
                           const int g, const int has_min) {
    float yb[PW__VNNI_MB * PW__VNNI_NT * 16] __attribute__((aligned(64)));
    /* Zeroed only because gcc 12 cannot see that group 0 of every block writes it first. */
    float sb[PW__VNNI_MR * PW__VNNI_NT * 16] __attribute__((aligned(64))) = {0};
    utile u;
    memset(&u, 0, sizeof u);
    u.tile_bytes = c->pack_desc->tile_bytes;
    u.rec = pw__i8g_group_bytes(g, has_min);
    const int64_t groups = c->pack_desc->in / g, kc = PW__VNNI_KC / g;
    const int64_t blocks = (i1 - i0 + PW__VNNI_MB - 1) / PW__VNNI_MB;
    const int64_t mc = ((i1 - i0 + blocks - 1) / blocks + PW__VNNI_MR - 1) / PW__VNNI_MR * PW__VNNI_MR;
    /* Activation bytes of one row per group: 96 / 1 (G = 32), 576 / 16 (G = 16). */
    const int64_t xgroup_bytes = g == 32 ? (int64_t)sizeof(pw__q8_32) : (int64_t)sizeof(pw__q8_256) / 16;
    int64_t kpass = (int64_t)PW__VNNI_XL2 / (mc * xgroup_bytes) / kc * kc;
    if (kpass < kc) kpass = kc;
    for (int64_t ib = i0; ib < i1; ib += mc) {
        for (int64_t j1 = 0; j1 < groups; j1 += kpass) {
            for (int64_t t0 = o0; t0 < o1; t0 += PW__VNNI_NT * PW__I8G_NR) {
                pair_run p = {ib, ib + mc < i1 ? ib + mc : i1, j1, j1 + kpass < groups ? j1 + kpass : groups,
                              t0, o1, {0, 0}, 1};
                pair_masks(t0, o1, p.m);
                p.nt = p.m[1] ? 2 : 1;
                pair_chunks(c, &u, sb, yb, &p, g, has_min);
            }
        }
    }
}

static void run_g32(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    int has_min = 0;
    pw__i8g_group(c->pack_desc->format, &has_min, NULL);
    if (has_min)
        run_family(c, o0, o1, i0, i1, 32, 1);
    else
        run_family(c, o0, o1, i0, i1, 32, 0);
}

static void run_g16(const pw__mm_call *c, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    int has_min = 0;
    pw__i8g_group(c->pack_desc->format, &has_min, NULL);
    if (has_min)
        run_family(c, o0, o1, i0, i1, 16, 1);
    else
        run_family(c, o0, o1, i0, i1, 16, 0);
}

#define PW__I8G_VNNI(id, fmt, G, ACT)                                                       \
    const pw__kernel pw__k_##id##_i8g##G##_avx512vnni = {                                   \
        .info = {.name = #id "_i8g" #G "_avx512vnni",                                       \
                 .key = PW__KEY(#id, "packed(i8g" #G "x16k4)", ACT, "avx512vnni"),                                      \
                 .format = fmt,                                                             \
                 .layout = PW_LAYOUT_PACKED,                                                \
                 .family = "i8g" #G "x16k4",                                                \
                 .tile_rows = PW__I8G_NR,                                                   \
                 .tile_batch = PW__VNNI_MR,                                                 \
                 .activation = PW_ACT_##ACT,                                                \
                 .features = PW__VNNI_FEATURES,                                             \
                 .isa = "avx512vnni"},                                                      \
        .run = run_g##G,                                                                    \
        .pack_plan = pw__i8g_pack_plan_desc,                                                   \
        .pack = pw__i8g_pack_desc,                                                             \
        .priority = PW__PRIO_AVX512 + PW__PRIO_I8G_X86,                                     \
        .min_n = 2};

PW__I8G_VNNI(q4_0, PW_FORMAT_Q4_0, 32, Q8_32)
PW__I8G_VNNI(q4_1, PW_FORMAT_Q4_1, 32, Q8_32)
PW__I8G_VNNI(q5_0, PW_FORMAT_Q5_0, 32, Q8_32)
PW__I8G_VNNI(q5_1, PW_FORMAT_Q5_1, 32, Q8_32)
PW__I8G_VNNI(q8_0, PW_FORMAT_Q8_0, 32, Q8_32)
PW__I8G_VNNI(iq4_nl, PW_FORMAT_IQ4_NL, 32, Q8_32)
PW__I8G_VNNI(q4_k, PW_FORMAT_Q4_K, 32, Q8_32)
PW__I8G_VNNI(q5_k, PW_FORMAT_Q5_K, 32, Q8_32)
PW__I8G_VNNI(tq1_0, PW_FORMAT_TQ1_0, 32, Q8_32)
PW__I8G_VNNI(tq2_0, PW_FORMAT_TQ2_0, 32, Q8_32)
PW__I8G_VNNI(q2_k, PW_FORMAT_Q2_K, 16, Q8_256)
PW__I8G_VNNI(q3_k, PW_FORMAT_Q3_K, 16, Q8_256)
PW__I8G_VNNI(q6_k, PW_FORMAT_Q6_K, 16, Q8_256)
