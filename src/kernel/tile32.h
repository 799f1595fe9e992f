/*
 * What the 32-row GEMV tilings share (q4x32k4 for Q4_0, q4kx32k4 for Q4_K,
 * q6kx32k4 for Q6_K; each family's bytes are in its own header). Every one
 * of them is:
 *
 *   packed = tile 0 | tile 1 | ...            ceil(out / 32) tiles
 *   tile   = record 0 | record 1 | ...        one record per block of the format
 *   record = the 32 rows' blocks b, rearranged (rows past `out` zero)
 *
 * so a thread's range of tiles is one linear stream, and one plan function
 * and one descriptor form serve them all.
 */
#ifndef PACKWISE_KERNEL_TILE32_H
#define PACKWISE_KERNEL_TILE32_H

#include "format/blocks.h"
#include "kernel/kernel.h"

#include <string.h>

#define PW__TILE32_NR 32 /* output rows per tile */

/* A family's constants, as its plan needs them. */
typedef struct pw__tile32_family {
    const char *family;     /* e.g. "q4x32k4" */
    pw_format format;       /* the one format it packs */
    int32_t kr;             /* k values per row per 64-byte step */
    int32_t group;          /* k values sharing one scale */
    int32_t version;        /* packer version */
    uint64_t record_bytes;  /* bytes per (tile, block) */
} pw__tile32_family;

/* Fill d for a weight [out, in] of f->format packed into the family f, or fail
 * (another format, in not whole blocks, a size that overflows). */
pw_status pw__tile32_plan(pw_context *ctx, const pw__tile32_family *f, pw_format format,
                          int64_t out, int64_t in, pw__pack_desc *d);

/* The descriptor fields every 32-row tiling kernel shares (packed or input-block-major). */
#define PW__TILE32_INFO(name_, fmt_, layout_key_, format_, layout_, family_, act_, isa_,       \
                        features_, mr_)                                                        \
    {.name = name_,                                                                            \
     .key = PW__KEY(fmt_, layout_key_, act_, isa_),                                            \
     .format = format_,                                                                        \
     .layout = layout_,                                                                        \
     .family = family_,                                                                        \
     .tile_rows = PW__TILE32_NR,                                                               \
     .tile_batch = mr_,                                                                        \
     .activation = PW_ACT_##act_,                                                              \
     .features = features_,                                                                    \
     .isa = isa_}

/* A kernel descriptor of a 32-row tiling: fmt_ the format's lower-case name (a
 * string literal), act_ the activation form's token (Q8_32 for PW_ACT_Q8_32),
 * plan_ and pack_ the family's packer (declared with PW__VIEW_PACKER).
 * PW__TILE32_KERNEL is a GEMV kernel (one row of X at a time, chosen from n = 1);
 * PW__TILE32_GEMM_KERNEL one that spreads each record's unpacking over mr_ rows of
 * X (chosen from n = 2, named <fmt>_<family>_gemm_<isa>). Both read the same bytes. */
#define PW__TILE32_DESC(name_, fmt_, family_, format_, act_, plan_, pack_, isa_, features_,      \
                        run_, priority_, mr_, min_n_)                                           \
    {.info = PW__TILE32_INFO(name_, fmt_, "packed(" family_ ")", format_, PW_LAYOUT_PACKED,      \
                             family_, act_, isa_, features_, mr_),                             \
     .run = run_,                                                                               \
     .pack_plan = plan_##_desc,                                                                 \
     .pack = pack_##_desc,                                                                      \
     .priority = priority_,                                                                     \
     .min_n = min_n_}

#define PW__TILE32_KERNEL(fmt_, family_, format_, act_, plan_, pack_, isa_, features_, run_,     \
                          priority_)                                                            \
    PW__TILE32_DESC(fmt_ "_" family_ "_" isa_, fmt_, family_, format_, act_, plan_, pack_, isa_, \
                    features_, run_, priority_, 1, 1)

#define PW__TILE32_GEMM_KERNEL(fmt_, family_, format_, act_, plan_, pack_, isa_, features_,      \
                               run_, priority_, mr_)                                            \
    PW__TILE32_DESC(fmt_ "_" family_ "_gemm_" isa_, fmt_, family_, format_, act_, plan_, pack_,  \
                    isa_, features_, run_, priority_, mr_, 2)

/* A GEMM kernel that reads input-block-major blocks as they are and makes a family's
 * records from them as it goes (pw__tile32_fill_ibm below; the loops' *_run_fill);
 * named <fmt>_ibm_gemm_<isa>, chosen from n = 2. */
#define PW__TILE32_IBM_GEMM_KERNEL(fmt_, format_, act_, isa_, features_, run_, priority_, mr_)   \
    {.info = PW__TILE32_INFO(fmt_ "_ibm_gemm_" isa_, fmt_, "input_block_major", format_,         \
                             PW_LAYOUT_BLOCKED_INPUT_MAJOR, NULL, act_, isa_, features_, mr_),  \
     .run = run_,                                                                               \
     .priority = priority_,                                                                     \
     .min_n = 2}

/* The portable record makers' nibble merge (q4x32k4, q4kx32k4, q6kx32k4): from a dword
 * x of row r's nibble bytes and y of row r + 16's, *lo = their low nibbles (r's below)
 * and *hi = their high nibbles, each a record step's lane r. */
static inline void pw__tile32_nibble_pair(uint32_t x, uint32_t y, uint32_t *lo, uint32_t *hi) {
    *lo = (x & 0x0F0F0F0Fu) | (y & 0x0F0F0F0Fu) << 4;
    *hi = (x >> 4 & 0x0F0F0F0Fu) | (y & 0xF0F0F0F0u);
}

/* The portable kernels' integer dots (q4x_pack.c, q4kx_pack.c, q6kx_pack.c,
 * q8x_pack.c), a record's values decoded once for every row of X: dot[r] and dot[16 + r]
 * = the sums over `steps` steps of the values of rows r (lo) and 16 + r (hi) times the
 * activations xq (4 a step), lo[64 s + 4 r + k] being row r's element 4s + k (hi alike).
 * In this loop order the compiler vectorizes it (3-4x the speed of a loop over a step's
 * 64 bytes with the activation indexed by byte): compact dispatch runs the portable
 * kernels where no SIMD kernel of a family is usable (the scalar level, Arm without
 * dotprod), above the reference kernel, so they must not be slower than it. */
/* The portable kernels' scales: the 32 rows' fp16 values at p (any alignment) as f32. */
static inline void pw__tile32_f16_rows(const uint8_t *p, float out[32]) {
    for (int r = 0; r < 32; ++r) {
        uint16_t h;
        memcpy(&h, p + 2 * r, 2);
        out[r] = pw__f16_to_f32(h);
    }
}

static inline void pw__tile32_step_dots(const int8_t *lo, const int8_t *hi, int steps,
                                        const int8_t *xq, int32_t dot[32]) {
    int32_t pl[16][4] = {{0}}, ph[16][4] = {{0}};
    for (int s = 0; s < steps; ++s)
        for (int r = 0; r < 16; ++r)
            for (int k = 0; k < 4; ++k) {
                pl[r][k] += lo[64 * s + 4 * r + k] * xq[4 * s + k];
                ph[r][k] += hi[64 * s + 4 * r + k] * xq[4 * s + k];
            }
    for (int r = 0; r < 16; ++r) {
        dot[r] = pl[r][0] + pl[r][1] + pl[r][2] + pl[r][3];
        dot[16 + r] = ph[r][0] + ph[r][1] + ph[r][2] + ph[r][3];
    }
}

typedef void (*pw__tile32_fill_fn)(const pw__mm_call *c, int64_t t0, int64_t b1, int64_t b2,
                                   uint8_t *dst);
/* Bytes of the records a GEMM pass makes at most (a stack scratch of the loops). */
#define PW__TILE32_FILL_BYTES (36u << 10)
#define PW__TILE32_FILL_BLOCK_MAX 216 /* bytes of the largest block a fill reads (Q6_K: 210) */

/* Records [b1, b2) of the tile at output t0 made from the input-block-major view c->w
 * (the IBM GEMM kernels' fill): record(src, rec) makes one record from the 32 blocks
 * of a column, row r's at src + r * bb (bb at most PW__TILE32_FILL_BLOCK_MAX). Rows
 * adjacent in a whole tile are read where they lie; a last part tile, or rows apart
 * (a view narrowed along its blocks), are copied first, the rows past `out` as zero
 * blocks. A fill prefetches nothing itself: the GEMM loops spread what the next fill
 * reads over their record reads (pw__tile32_fill_next, pw__tile32_ibm_blocks). */
static inline __attribute__((always_inline)) void
pw__tile32_fill_ibm(const pw__mm_call *c, int64_t t0, int64_t b1, int64_t b2, uint8_t *dst,
                    size_t bb, uint64_t record_bytes, void (*record)(const uint8_t *, uint8_t *)) {
    const pw_view *w = c->w;
    const int live = c->out - t0 < PW__TILE32_NR ? (int)(c->out - t0) : PW__TILE32_NR;
    const size_t rs = (size_t)w->strides[0] * bb, bs = (size_t)w->strides[1] * bb;
    const uint8_t *col = w->data + (size_t)(w->offset + t0 * w->strides[0]) * bb + (size_t)b1 * bs;
    const int direct = live == PW__TILE32_NR && rs == bb;
    for (int64_t b = b1; b < b2; ++b, col += bs, dst += record_bytes) {
        if (direct) {
            record(col, dst);
        } else {
            _Alignas(64) uint8_t tmp[PW__TILE32_NR * PW__TILE32_FILL_BLOCK_MAX];
            memset(tmp, 0, PW__TILE32_NR * bb);
            for (int r = 0; r < live; ++r) memcpy(tmp + (size_t)r * bb, col + (size_t)r * rs, bb);
            record(tmp, dst);
        }
    }
}

/* The records [b1, b2) of the tile at output t0 that a GEMM pass reads: the packed
 * form's, or (fill not NULL) those fill makes in scratch. */
static inline const uint8_t *pw__tile32_pass_records(const pw__mm_call *c, int64_t t0, int64_t b1,
                                                     int64_t b2, uint64_t record_bytes,
                                                     pw__tile32_fill_fn fill, uint8_t *scratch) {
    if (fill != NULL) {
        fill(c, t0, b1, b2, scratch);
        return scratch;
    }
    return c->packed + (uint64_t)(t0 / PW__TILE32_NR) * c->pack_desc->tile_bytes +
           (uint64_t)b1 * record_bytes;
}

/* The GEMM loops' order over a row block's passes (of kb blocks) and tiles: step u of
 * npass x ntile is pass *pass over tile *tile. Packed records: a pass over every tile,
 * the pass's activations staying in L2 while the tiles stream. Made records (fill): a
 * tile's passes in turn, so that its sums in y stay in L1 from pass to pass; a pass
 * over every tile read and wrote all of y again each pass (5.6 MB at n = 128, [11008,
 * 4096]: Q8_0's IBM GEMM made 4 passes of 33 records, at 0.72x the packed GEMM on
 * AVX-512, 0.92-0.95x tile by tile). */
static inline void pw__tile32_pass_tile(int64_t u, int64_t npass, int64_t ntile, int made,
                                        int64_t *pass, int64_t *tile) {
    *pass = made ? u % npass : u / ntile;
    *tile = made ? u / npass : u % ntile;
}

/* A GEMM pass's activation budget where fill makes at most max_kb records a pass. */
static inline uint64_t pw__tile32_fill_budget(uint64_t budget, pw__tile32_fill_fn fill,
                                              int64_t max_kb, int64_t rows, size_t xb_bytes) {
    const uint64_t fits = (uint64_t)max_kb * (uint64_t)rows * xb_bytes;
    return fill != NULL && fits < budget ? fits : budget;
}

/* A fill function of an IBM GEMM kernel: fill_ makes records of record_bytes_ with
 * make_ from blocks of type block_t_ (pw__tile32_fill_ibm). */
#define PW__TILE32_IBM_FILL(fill_, block_t_, record_bytes_, make_)                               \
    static void fill_(const pw__mm_call *c, int64_t t0, int64_t b1, int64_t b2, uint8_t *dst) { \
        pw__tile32_fill_ibm(c, t0, b1, b2, dst, sizeof(block_t_), record_bytes_, make_);       \
    }

/* GEMM loops of the tilings (tile32_gemm_avx512.h, x86/tile32_avx2.h, arm/tile32_neon.h):
 * the blocks of k per pass of a row block of `rows` rows of X, passes of near-equal
 * length whose activations (rows x xb_bytes a block) fit in budget bytes, at least
 * one block a pass. */
static inline int64_t pw__tile32_pass_blocks(int64_t rows, size_t xb_bytes, int64_t nb,
                                             uint64_t budget) {
    int64_t kb = (int64_t)(budget / ((uint64_t)rows * xb_bytes));
    if (kb < 1) kb = 1;
    const int64_t passes = (nb + kb - 1) / kb;
    return (nb + passes - 1) / passes;
}

/* What a GEMM tile prefetches while its panels run: the records read after its own
 * (the next tile of the pass, else the first tile's records of the next pass or row
 * block, else the tile after the range, which the same thread most often runs next;
 * pw__tile32_gemm_next), or the blocks the next fill reads (pw__tile32_fill_next),
 * `lines` lines per record read, from pf up to end, then run after run. */
typedef struct pw__tile32_next {
    const uint8_t *pf, *end; /* the current run: its next line, its end */
    int lines;               /* per record read */
    int64_t runs;            /* runs after the current one (made records: one per column) */
    const uint8_t *run;      /* the current run's first byte */
    uint64_t run_bytes, stride; /* bytes of a run; from a run's first byte to the next's */
} pw__tile32_next;

#define PW__TILE32_NEXT_NONE ((pw__tile32_next){NULL, NULL, 0, 0, NULL, 0, 0})

/* A record read's share of the prefetch: nx->lines lines into L2, run after run. */
static inline __attribute__((always_inline)) void pw__tile32_next_fetch(pw__tile32_next *nx) {
    for (int l = 0; l < nx->lines; ++l) {
        if (nx->pf >= nx->end) {
            if (nx->runs <= 0) return;
            --nx->runs;
            nx->run += nx->stride;
            nx->pf = (const uint8_t *)((uintptr_t)nx->run & ~(uintptr_t)63);
            nx->end = nx->run + nx->run_bytes;
        }
        __builtin_prefetch(nx->pf, 0, 2);
        nx->pf += 64;
    }
}

/* The prefetch of tile t0 (outputs [o0, o1)) of the pass over blocks [b1, b2) (kb a
 * pass, nb in all) of the row block [ib, ib + rows) of [.., i1), read by `panels`
 * panels. */
static inline pw__tile32_next pw__tile32_gemm_next(const pw__mm_call *c, int64_t o0, int64_t o1,
                                                   int64_t t0, int64_t i1, int64_t ib,
                                                   int64_t rows, int64_t b1, int64_t b2,
                                                   int64_t nb, int64_t kb, int64_t panels,
                                                   uint64_t record_bytes) {
    const pw__pack_desc *d = c->pack_desc;
    int64_t nt = t0 + PW__TILE32_NR, nb1 = b1, nb2 = b2;
    if (nt >= o1 && (b2 < nb || ib + rows < i1)) {
        nt = o0;
        nb1 = b2 < nb ? b2 : 0;
        nb2 = nb - nb1 < kb ? nb : nb1 + kb;
    } else if (nt >= o1) {
        nb1 = 0;
        nb2 = kb;
    }
    pw__tile32_next n = PW__TILE32_NEXT_NONE;
    n.pf = c->packed + (uint64_t)(nt / PW__TILE32_NR) * d->tile_bytes + (uint64_t)nb1 * record_bytes;
    const uint64_t span = nt / PW__TILE32_NR < d->tiles ? (uint64_t)(nb2 - nb1) * record_bytes : 0;
    n.end = n.pf + span;
    const uint64_t reads = (uint64_t)(panels * (b2 - b1));
    n.lines = (int)((span / 64 + reads - 1) / reads);
    return n;
}

/* The first cache line of the 32 blocks of tile t0 at column b of the input-block-major
 * view c->w, which a fill reads (*bb: the format's block bytes), or NULL where tile t0
 * is past o1 or its rows lie apart (a fill that copies). Prefetching only: a last part
 * tile's run may reach past its live rows. */
static inline const uint8_t *pw__tile32_ibm_blocks(const pw__mm_call *c, int64_t o1, int64_t t0,
                                                   int64_t b, size_t *bb) {
    const pw_view *w = c->w;
    const pw_format_info *f = pw_format_get(w->format);
    if (t0 >= o1 || w->strides[0] != 1 || f == NULL) return NULL;
    *bb = (size_t)f->block_bytes;
    const uint8_t *p = w->data + ((size_t)(w->offset + t0) + (size_t)b * (size_t)w->strides[1]) * *bb;
    return (const uint8_t *)((uintptr_t)p & ~(uintptr_t)63);
}

/* The same for made records (the IBM GEMMs' fills of a pass of columns): the blocks the
 * next fill reads, its tile's columns [nb1, nb2) (the next pass of tile t0, else the
 * first of the next tile), one run of the 32 rows' blocks per column. Spread so, not
 * issued by the fill itself as a burst before each record (every line of the next
 * tile's column): [11008, 4096] n = 128, 1 thread, both in turn, the IBM GEMM's
 * fraction of its int8 peak over the packed one's in the same run: Zen 4, three rounds,
 * Q8_0 0.87-0.91x -> 0.96-0.99x; an Intel Xeon, five rounds, the IBM GEMM's fraction of
 * the int8 peak (medians) Q8_0 47.6 -> 53.1%, Q4_0 49.3 -> 53.0%. */
static inline pw__tile32_next pw__tile32_fill_next(const pw__mm_call *c, int64_t o1, int64_t t0,
                                                   int64_t b1, int64_t b2, int64_t nb, int64_t kb,
                                                   int64_t panels) {
    pw__tile32_next n = PW__TILE32_NEXT_NONE;
    int64_t nt = t0, nb1 = b2, nb2 = nb - b2 < kb ? nb : b2 + kb;
    if (b2 >= nb) {
        nt = t0 + PW__TILE32_NR;
        nb1 = 0;
        nb2 = kb;
    }
    size_t bb = 0;
    n.run = pw__tile32_ibm_blocks(c, o1, nt, nb1, &bb);
    if (n.run == NULL) return n;
    n.stride = (uint64_t)c->w->strides[1] * bb;
    n.run_bytes = (uint64_t)PW__TILE32_NR * bb + 63; /* from the line the run starts in */
    n.pf = n.run;
    n.end = n.run + n.run_bytes;
    n.runs = nb2 - nb1 - 1;
    const uint64_t lines = (uint64_t)(nb2 - nb1) * (n.run_bytes / 64 + 1);
    const uint64_t reads = (uint64_t)(panels * (b2 - b1));
    n.lines = (int)((lines + reads - 1) / reads);
    return n;
}

/* ---- A GEMV range read as several streams ----
 * A thread's outputs [o0, o1) cover n tiles of nr rows, from tile o0 / nr of the packed
 * buffer. The batch-1 loops read them as S contiguous parts of per = ceil(n / S) tiles
 * (the last part may be shorter), tile j of every part in step j: S streams through
 * the buffer at once, which one core of this project's machine reads faster than one
 * (figures in x86/tile32_avx512.h). pw__streams_at gives step j's tiles; the loops keep
 * their own accumulators and stores. */
#define PW__STREAMS_MAX 4

typedef struct {
    const uint8_t *packed;
    uint64_t tile_bytes, bytes; /* one tile; the whole packed buffer */
    int64_t o0, o1, first, n, per;
    int nr, S;
} pw__streams;

typedef struct {
    const uint8_t *tile[PW__STREAMS_MAX];
    uint64_t left[PW__STREAMS_MAX]; /* bytes from the tile to the buffer's end */
    int64_t t0[PW__STREAMS_MAX];    /* the tile's first output */
    int rows[PW__STREAMS_MAX];      /* its outputs inside [o0, o1): 1 to nr */
    int live;                       /* parts that have a tile j: S but in the last part's tail */
} pw__streams_step;

static inline pw__streams pw__streams_plan(const pw__mm_call *c, int64_t o0, int64_t o1, int nr,
                                           int S) {
    pw__streams p;
    p.packed = c->packed;
    p.tile_bytes = c->pack_desc->tile_bytes;
    p.bytes = c->pack_desc->bytes;
    p.o0 = o0;
    p.o1 = o1;
    p.first = o0 / nr;
    p.n = (o1 - o0 + nr - 1) / nr;
    p.per = (p.n + S - 1) / S;
    p.nr = nr;
    p.S = S;
    return p;
}

static inline __attribute__((always_inline)) void pw__streams_at(const pw__streams *p, int64_t j,
                                                                 pw__streams_step *st) {
    st->live = 0;
    for (int s = 0; s < p->S && s * p->per + j < p->n; ++s, ++st->live) {
        const int64_t t = s * p->per + j;
        const uint64_t at = (uint64_t)(p->first + t) * p->tile_bytes;
        st->tile[s] = p->packed + at;
        st->left[s] = p->bytes - at;
        st->t0[s] = p->o0 + t * p->nr;
        st->rows[s] = p->o1 - st->t0[s] < p->nr ? (int)(p->o1 - st->t0[s]) : p->nr;
    }
    for (int s = st->live; s < p->S; ++s) { /* defined, never read */
        st->tile[s] = p->packed;
        st->left[s] = 0;
        st->t0[s] = p->o1;
        st->rows[s] = 0;
    }
}

/* Step st's nb records of record_bytes for one activation row x (blocks of xb_bytes),
 * part s into acc[s]: record b of every part in turn when all S parts are live, part
 * after part in the last part's tail, so the common loop has no branch per record.
 * block(rec, xb, pf, acc) is the ISA loop's record function; pf is pf_code (nonzero)
 * where rec + pf_ahead + a record is still inside the buffer, else 0. */
#define PW__STREAMS_RECORDS(st, S, nb, record_bytes, x, xb_bytes, pf_ahead, pf_code, block, acc) \
    do {                                                                                        \
        if ((st).live == (S)) {                                                                 \
            for (int64_t b_ = 0; b_ < (nb); ++b_) {                                             \
                const uint64_t rb_ = (uint64_t)b_ * (record_bytes);                             \
                _Pragma("GCC unroll 8") for (int s_ = 0; s_ < (S); ++s_)                        \
                    block((st).tile[s_] + rb_, (x) + (size_t)b_ * (xb_bytes),                   \
                          rb_ + (pf_ahead) + (record_bytes) <= (st).left[s_] ? (pf_code) : 0,   \
                          (acc)[s_]);                                                           \
            }                                                                                   \
        } else {                                                                                \
            for (int s_ = 0; s_ < (st).live; ++s_)                                              \
                for (int64_t b_ = 0; b_ < (nb); ++b_) {                                         \
                    const uint64_t rb_ = (uint64_t)b_ * (record_bytes);                         \
                    block((st).tile[s_] + rb_, (x) + (size_t)b_ * (xb_bytes),                   \
                          rb_ + (pf_ahead) + (record_bytes) <= (st).left[s_] ? (pf_code) : 0,   \
                          (acc)[s_]);                                                           \
                }                                                                               \
        }                                                                                       \
    } while (0)

#endif
