/*
 * libFuzzer target for views and layout arithmetic: hand-made views (any
 * format, rank, shape, strides, offset, block axis, row tiling and storage
 * size, at any byte alignment, over storage of exactly data_bytes so ASan
 * sees a read one byte past it), then narrowing, transposing, element access,
 * decoding, prepack and materialize; and, apart from views, flat indices and
 * the bytes-level converters. It checks invariants, not only "no crash":
 *
 * - pw_view_check accepts a view exactly when every block it addresses lies in
 *   its storage (checked cell by cell for small grids) and its element count
 *   and dense bytes fit int64; pw_view_elements/blocks/bytes agree with the shape;
 * - pw_view_to_float agrees bit for bit with pw_view_get at every sampled
 *   index and refuses a buffer one float short;
 * - pw_view_narrow succeeds exactly when the range is inside the axis (whole
 *   blocks on the block axis, whole tiles on a tiled row axis), and the narrowed
 *   view reads the same elements shifted by start; a transposed view reads
 *   element (j, i) where the source reads (i, j);
 * - pw_view_prepack / pw_view_materialize keep every element, emit one adapter
 *   event with pw_view_bytes() bytes exactly when they copy, and give the layout
 *   asked for;
 * - pw_layout_flat_index is -1 exactly when its arguments are out of range, and
 *   otherwise the layout's formula (computed in 128 bits), a bijection onto
 *   [0, rows * blocks) for small grids; pw_bytes_reorder moves block (o, b) from
 *   its flat index in one layout to its flat index in the other, and back.
 * Allocations above 16 MiB are refused by the context's allocator, so huge
 * (valid) views end in a status. Built into the replay driver too (replay.c).
 */
#include "fuzz_input.h"
#include "packwise.h"
#include "layout/layout_internal.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* 128-bit arithmetic for the expected values (gcc and clang, every 64-bit target). */
__extension__ typedef __int128 wide;


enum {
    ELEMENT_LIMIT = 1 << 16, /* decode whole views up to this many elements */
    GRID_LIMIT = 1 << 14,    /* walk every block address up to this many cells */
    STORAGE_LIMIT = 1 << 20, /* bytes of storage behind a fuzzed view */
    ALLOC_LIMIT = 1 << 24,   /* the context's allocator refuses more */
};


/* A size, count, stride or index: mostly small, sometimes at the ends of int64. */
static int64_t take_i64(input *in) {
    const unsigned sel = (unsigned)take(in, 1);
    switch (sel % 16) {
    case 0: return (int64_t)(take(in, 1) % 4);
    case 1: case 2: case 3: case 4: return (int64_t)(take(in, 1) % 40);
    case 5: return (int64_t)(take(in, 2) % 1024);
    case 6: return (int64_t)32 * (int64_t)(take(in, 1) % 16);
    case 7: return (int64_t)256 * (int64_t)(take(in, 1) % 8);
    case 8: return (int64_t)1 << (take(in, 1) % 63);
    case 9: return ((int64_t)1 << (take(in, 1) % 63)) + (int64_t)(take(in, 1) % 3) - 1;
    case 10: return INT64_MAX - (int64_t)(take(in, 1) % 4);
    case 11: return INT64_MIN + (int64_t)(take(in, 1) % 4);
    case 12: return -(int64_t)(take(in, 1) % 4) - 1;
    case 13: return (int64_t)take(in, 8);
    default: return (int64_t)(take(in, 1) % 8);
    }
}

typedef struct trace_count {
    int adapters;
    uint64_t bytes;
} trace_count;

static void on_trace(void *user, const pw_trace_event *e) {
    trace_count *t = user;
    if (e->kind == PW_TRACE_ADAPTER) {
        t->adapters++;
        t->bytes = e->bytes;
    }
}

static void *limited_alloc(void *user, size_t bytes, size_t alignment) {
    (void)user;
    if (bytes > ALLOC_LIMIT) return NULL;
    void *p = NULL;
    if (alignment < sizeof(void *)) alignment = sizeof(void *);
    return posix_memalign(&p, alignment, bytes ? bytes : 1) == 0 ? p : NULL;
}

static void limited_free(void *user, void *p) {
    (void)user;
    free(p);
}

static bool same_bits(const float *a, const float *b) { return memcmp(a, b, sizeof *a) == 0; }

/* Element at idx through pw_view_get; the view must be valid and idx inside it. */
static float get(pw_context *ctx, const pw_view *v, const int64_t *idx) {
    float x = 0;
    PROPERTY(pw_view_get(ctx, v, idx, &x) == PW_OK);
    return x;
}

/* Logical row-major position of idx in the view's shape. */
static int64_t flat_of(const pw_view *v, const int64_t *idx) {
    int64_t f = 0;
    for (int i = 0; i < v->rank; ++i) f = f * v->shape[i] + idx[i];
    return f;
}

static void index_from(input *in, const pw_view *v, int64_t *idx) {
    for (int i = 0; i < PW_MAX_RANK; ++i) idx[i] = 0;
    for (int i = 0; i < v->rank; ++i) idx[i] = (int64_t)(take(in, 8) % (uint64_t)v->shape[i]);
}

/* The view's shape, sizes and every addressed block, given that pw_view_check accepted it. */
static void check_accepted(const pw_view *v) {
    const pw_format_info *fi = pw_format_get(v->format);
    PROPERTY(fi != NULL);
    wide n = 1;
    for (int i = 0; i < v->rank; ++i) n *= v->shape[i];
    PROPERTY(n <= INT64_MAX && pw_view_elements(v) == (int64_t)n);
    PROPERTY(pw_view_blocks(v) == (int64_t)n / fi->block_size);
    PROPERTY(pw_view_bytes(v) == (uint64_t)(n / fi->block_size) * fi->block_bytes);
    int64_t grid[PW_MAX_RANK];
    pw__view_grid(v, grid);
    wide cells = 1;
    for (int i = 0; i < PW_MAX_RANK; ++i) cells *= grid[i];
    if (cells > GRID_LIMIT) return;
    int64_t c[PW_MAX_RANK] = {0, 0, 0, 0};
    for (;;) {
        const int64_t a = pw__view_block_index(v, c);
        PROPERTY(a >= 0 && (uint64_t)(a + 1) * fi->block_bytes <= v->data_bytes);
        int i = v->rank - 1;
        for (; i >= 0; --i) {
            if (++c[i] < grid[i]) break;
            c[i] = 0;
        }
        if (i < 0) break;
    }
}

/* Decoded elements of a valid view, or NULL when it is too large to decode here. */
static float *decode(pw_context *ctx, const pw_view *v) {
    const int64_t n = pw_view_elements(v);
    if (n < 1 || n > ELEMENT_LIMIT) return NULL;
    float *y = malloc(sizeof(float) * (size_t)n);
    PROPERTY(y != NULL);
    PROPERTY(pw_view_to_float(ctx, v, y, (size_t)n) == PW_OK);
    /* One float short is refused, and nothing is written (y + 0 stays as it was). */
    if (n > 1) {
        float first = y[0];
        PROPERTY(pw_view_to_float(ctx, v, y, (size_t)n - 1) == PW_ERR_SHAPE);
        PROPERTY(same_bits(&first, &y[0]));
    }
    return y;
}

static void check_decode(pw_context *ctx, input *in, const pw_view *v, const float *y) {
    int64_t idx[PW_MAX_RANK];
    for (int k = 0; k < 16; ++k) {
        index_from(in, v, idx);
        const float g = get(ctx, v, idx);
        if (y != NULL) PROPERTY(same_bits(&g, &y[flat_of(v, idx)]));
    }
    /* Outside the shape: refused. */
    index_from(in, v, idx);
    const int axis = (int)(take(in, 1) % (uint64_t)v->rank);
    const int64_t keep = idx[axis];
    idx[axis] = take(in, 1) % 2 ? v->shape[axis] : -1;
    float x;
    PROPERTY(pw_view_get(ctx, v, idx, &x) == PW_ERR_SHAPE);
    idx[axis] = keep;
}

static void check_narrow(pw_context *ctx, input *in, const pw_view *v, const float *y) {
    const int32_t axis = (int32_t)(take(in, 1) % 6) - 1; /* -1 .. 4 */
    const int64_t start = take_i64(in), length = take_i64(in);
    pw_view out;
    const pw_status st = pw_view_narrow(ctx, v, axis, start, length, &out);
    bool ok = axis >= 0 && axis < v->rank && start >= 0 && length >= 1 && start <= v->shape[axis] &&
              length <= v->shape[axis] - start;
    if (ok && axis == v->block_axis) {
        const int64_t bs = pw_format_get(v->format)->block_size;
        ok = start % bs == 0 && length % bs == 0;
    } else if (ok && v->tile_rows > 0) {
        ok = start % v->tile_rows == 0 && length % v->tile_rows == 0;
    }
    PROPERTY(ok == (st == PW_OK));
    if (st != PW_OK) {
        PROPERTY(st == PW_ERR_SHAPE);
        return;
    }
    PROPERTY(pw_view_check(ctx, &out) == PW_OK);
    PROPERTY(out.shape[axis] == length);
    check_accepted(&out);
    int64_t idx[PW_MAX_RANK], src[PW_MAX_RANK];
    for (int k = 0; k < 8; ++k) {
        index_from(in, &out, idx);
        memcpy(src, idx, sizeof idx);
        src[axis] += start;
        const float a = get(ctx, &out, idx), b = get(ctx, v, src);
        PROPERTY(same_bits(&a, &b));
        if (y != NULL) PROPERTY(same_bits(&a, &y[flat_of(v, src)]));
    }
}

static void check_transpose(pw_context *ctx, input *in, const pw_view *v) {
    pw_view t;
    const pw_status st = pw_view_transpose(ctx, v, &t);
    PROPERTY((v->rank >= 2) == (st == PW_OK));
    if (st != PW_OK) return;
    PROPERTY(pw_view_check(ctx, &t) == PW_OK);
    const int a = v->rank - 2, b = v->rank - 1;
    int64_t idx[PW_MAX_RANK], tidx[PW_MAX_RANK];
    for (int k = 0; k < 8; ++k) {
        index_from(in, v, idx);
        memcpy(tidx, idx, sizeof idx);
        tidx[a] = idx[b];
        tidx[b] = idx[a];
        const float x = get(ctx, v, idx), z = get(ctx, &t, tidx);
        PROPERTY(same_bits(&x, &z));
    }
}

static bool same_view(const pw_view *a, const pw_view *b) {
    return a->format == b->format && a->rank == b->rank && memcmp(a->shape, b->shape, sizeof a->shape) == 0 &&
           memcmp(a->strides, b->strides, sizeof a->strides) == 0 && a->offset == b->offset &&
           a->block_axis == b->block_axis && a->tile_rows == b->tile_rows && a->tile_stride == b->tile_stride &&
           a->data == b->data && a->data_bytes == b->data_bytes && a->storage == b->storage;
}

/* Whether two byte layouts of a [rows, bpr]-block grid are the same bytes: with one block
 * per row (bpr == 1) or one row (rows == 1) every order is (a view's label is then
 * ambiguous). */
static bool same_layout(pw_layout a, pw_layout b, int64_t rows, int64_t bpr) {
    if ((bpr == 1 || rows == 1) && a.order != PW_ORDER_STRIDED && b.order != PW_ORDER_STRIDED)
        return true;
    a = pw__layout_normalize(a, rows);
    b = pw__layout_normalize(b, rows);
    return a.order == b.order && a.tile_rows == b.tile_rows;
}

static void check_prepack(pw_context *ctx, trace_count *tc, input *in, const pw_view *v, const float *y) {
    pw_arena *arena = NULL;
    if (pw_arena_create(ctx, &arena) != PW_OK) return;
    const pw_layout target = {(pw_order)(take(in, 1) % 5), take_i64(in)};
    pw_view out;
    tc->adapters = 0;
    const pw_status st = pw_view_prepack(ctx, v, target, arena, &out);
    const int64_t rows = v->shape[0];
    const bool target_ok = target.order == PW_ORDER_ROW_MAJOR || target.order == PW_ORDER_INPUT_BLOCK_MAJOR ||
                           (target.order == PW_ORDER_ROW_TILED && target.tile_rows >= 1 &&
                            rows % target.tile_rows == 0);
    if (v->rank != 2 || v->block_axis != 1 || !target_ok) PROPERTY(st != PW_OK);
    if (st == PW_OK) {
        PROPERTY(pw_view_check(ctx, &out) == PW_OK);
        const int64_t bpr = v->shape[1] / pw_format_get(v->format)->block_size;
        PROPERTY(same_layout(pw_view_layout(&out), target, rows, bpr));
        PROPERTY(tc->adapters <= 1);
        if (tc->adapters == 1) {
            PROPERTY(tc->bytes == pw_view_bytes(v) && out.data_bytes == tc->bytes);
        } else if (bpr == 1) {
            /* one block wide: the same view, or the same bytes relabelled; never a copy */
            PROPERTY(same_view(&out, v) ||
                     (out.data == pw_view_block_ptr(v, 0, 0) && out.format == v->format &&
                      out.shape[0] == v->shape[0] && out.shape[1] == v->shape[1]));
        } else {
            PROPERTY(same_view(&out, v));
        }
        float *z = decode(ctx, &out);
        if (y != NULL && z != NULL) PROPERTY(memcmp(y, z, sizeof(float) * (size_t)pw_view_elements(v)) == 0);
        free(z);
    } else {
        PROPERTY(tc->adapters == 0);
    }
    tc->adapters = 0;
    const pw_status sm = pw_view_materialize(ctx, v, arena, &out);
    if (sm == PW_OK) {
        PROPERTY(pw_view_check(ctx, &out) == PW_OK && pw_view_order(&out) == PW_ORDER_ROW_MAJOR);
        PROPERTY(tc->adapters == 1 && tc->bytes == pw_view_bytes(v));
        float *z = decode(ctx, &out);
        if (y != NULL && z != NULL) PROPERTY(memcmp(y, z, sizeof(float) * (size_t)pw_view_elements(v)) == 0);
        free(z);
    } else {
        PROPERTY(tc->adapters == 0);
    }
    pw_arena_destroy(arena);
}

static void fuzz_view(pw_context *ctx, trace_count *tc, input *in) {
    pw_view v;
    memset(&v, 0, sizeof v);
    const unsigned f = (unsigned)take(in, 1);
    v.format = (pw_format)(f < 250 ? f % PW_FORMAT_COUNT : f);
    v.rank = (int32_t)(take(in, 1) % 7) - 1; /* -1 .. 5 */
    for (int i = 0; i < PW_MAX_RANK; ++i) {
        v.shape[i] = take_i64(in);
        v.strides[i] = take_i64(in);
    }
    const pw_format_info *fi = pw_format_get(v.format);
    const int64_t bs = fi ? fi->block_size : 1;
    /* Usually the last axis is the block axis, and its size whole blocks: a small count
     * scaled by the block size. */
    v.block_axis = take(in, 1) % 2 ? v.rank - 1 : (int32_t)(take(in, 1) % 6) - 1;
    if (v.block_axis >= 0 && v.block_axis < PW_MAX_RANK && take(in, 1) % 4 != 0 &&
        v.shape[v.block_axis] >= 0 && v.shape[v.block_axis] <= INT64_MAX / bs)
        v.shape[v.block_axis] *= bs;
    v.offset = take_i64(in);
    if (take(in, 1) % 4 == 0) {
        v.tile_rows = take_i64(in);
        v.tile_stride = take_i64(in);
    }
    const size_t storage = take(in, 1) % 4 ? (size_t)(take(in, 2) % 4097) : (size_t)(take(in, 3) % (STORAGE_LIMIT + 1));
    const size_t misalign = (size_t)(take(in, 1) % 16);
    uint8_t *buf = malloc(storage + misalign + 1);
    PROPERTY(buf != NULL);
    /* The storage holds whatever input is left, then a pattern; ASan sees reads past it. */
    for (size_t i = 0; i < storage; ++i) buf[misalign + i] = i < in->n ? in->p[i] : (uint8_t)(i * 131u + 7u);
    v.data = buf + misalign;
    v.data_bytes = take(in, 1) % 8 == 0 ? take(in, 8) : storage; /* sometimes a lie larger than the storage */
    const bool honest = v.data_bytes <= storage;
    v.name = "fuzz";

    const pw_status st = pw_view_check(ctx, &v);
    if (st == PW_OK && honest) {
        check_accepted(&v);
        float *y = decode(ctx, &v);
        check_decode(ctx, in, &v, y);
        check_narrow(ctx, in, &v, y);
        check_transpose(ctx, in, &v);
        check_prepack(ctx, tc, in, &v, y);
        free(y);
    } else if (st != PW_OK) {
        PROPERTY(st == PW_ERR_SHAPE || st == PW_ERR_OVERFLOW || st == PW_ERR_UNSUPPORTED ||
                 st == PW_ERR_INVALID_ARGUMENT);
        /* Refused views are refused by every entry point that checks them. */
        float x;
        int64_t idx[PW_MAX_RANK] = {0, 0, 0, 0};
        PROPERTY(pw_view_get(ctx, &v, idx, &x) != PW_OK);
        PROPERTY(pw_view_to_float(ctx, &v, &x, 1) != PW_OK);
        pw_view out;
        PROPERTY(pw_view_narrow(ctx, &v, 0, 0, 1, &out) != PW_OK);
    }
    free(buf);
}

/* The flat index's formula in 128 bits; -1 when out of range. */
static wide expected_flat(pw_layout l, int64_t rows, int64_t bpr, int64_t o, int64_t b) {
    if (rows < 1 || bpr < 1 || o < 0 || o >= rows || b < 0 || b >= bpr) return -1;
    if ((wide)rows * bpr > INT64_MAX) return -1;
    switch (l.order) {
    case PW_ORDER_ROW_MAJOR: return (wide)o * bpr + b;
    case PW_ORDER_INPUT_BLOCK_MAJOR: return (wide)b * rows + o;
    case PW_ORDER_ROW_TILED:
        if (l.tile_rows < 1 || rows % l.tile_rows != 0) return -1;
        return (wide)(o / l.tile_rows) * l.tile_rows * bpr + (wide)b * l.tile_rows + o % l.tile_rows;
    default: return -1;
    }
}

static pw_layout take_layout(input *in) {
    pw_layout l;
    l.order = (pw_order)(take(in, 1) % 5);
    l.tile_rows = take(in, 1) % 2 ? (int64_t)(take(in, 1) % 9) : take_i64(in);
    return l;
}

/* pw_view_init over caller bytes: accepted exactly when the shape is whole blocks, fits, and the bytes suffice. */
static void fuzz_init(pw_context *ctx, input *in) {
    const pw_format format = (pw_format)(take(in, 1) % PW_FORMAT_COUNT);
    const int32_t rank = (int32_t)(take(in, 1) % 6);
    int64_t shape[PW_MAX_RANK + 1];
    for (int i = 0; i < PW_MAX_RANK + 1; ++i) shape[i] = take_i64(in);
    const pw_format_info *fi = pw_format_get(format);
    if (rank >= 1 && take(in, 1) % 2 && shape[rank - 1] >= 0 && shape[rank - 1] <= INT64_MAX / fi->block_size)
        shape[rank - 1] *= fi->block_size;
    static uint8_t storage[4096];
    const uint64_t bytes = take(in, 2) % (sizeof storage + 1);
    /* mostly canonical bytes; sometimes any layout, a zeroed one (no order) included */
    const pw_layout given = take(in, 1) % 4 == 0 ? take_layout(in) : PW_LAYOUT_ROW_MAJOR;
    pw_view v;
    const pw_status st = pw_view_init(ctx, &v, format, rank, shape, given, storage, bytes);
    if (given.order != PW_ORDER_ROW_MAJOR &&
        (rank != 2 || expected_flat(given, shape[0], 1, 0, 0) < 0))
        PROPERTY(st != PW_OK); /* no order, strided, a bad tile, or not 2-D */
    if (st != PW_OK) return;
    PROPERTY(rank >= 1 && rank <= PW_MAX_RANK && pw_view_check(ctx, &v) == PW_OK);
    PROPERTY(pw_view_bytes(&v) <= bytes);
    const int64_t bpr = rank == 2 ? shape[1] / fi->block_size : 0;
    PROPERTY(same_layout(pw_view_layout(&v), given, rank == 2 ? shape[0] : 1, rank == 2 ? bpr : 2));
    check_accepted(&v);
}

static void fuzz_flat_index(input *in) {
    const pw_layout l = take_layout(in);
    const int64_t rows = take_i64(in), bpr = take_i64(in), o = take_i64(in), b = take_i64(in);
    const int64_t got = pw_layout_flat_index(l, rows, bpr, o, b);
    PROPERTY((wide)got == expected_flat(l, rows, bpr, o, b));
    /* Small grids: a bijection onto [0, rows * bpr) (or -1 everywhere for a bad layout). */
    const int64_t r = (int64_t)(take(in, 1) % 24) + 1, n = (int64_t)(take(in, 1) % 24) + 1;
    static uint8_t seen[24 * 24];
    memset(seen, 0, sizeof seen);
    const bool valid = expected_flat(l, r, n, 0, 0) >= 0;
    for (int64_t i = 0; i < r; ++i)
        for (int64_t j = 0; j < n; ++j) {
            const int64_t f = pw_layout_flat_index(l, r, n, i, j);
            if (!valid) {
                PROPERTY(f == -1);
                continue;
            }
            PROPERTY(f >= 0 && f < r * n && !seen[f]);
            seen[f] = 1;
        }
}

static void fuzz_reorder(pw_context *ctx, input *in) {
    pw_block_grid g;
    g.layout = take_layout(in);
    const pw_layout target = take_layout(in);
    const bool small = take(in, 1) % 4 != 0;
    if (small) {
        g.rows = (int64_t)(take(in, 1) % 40);
        g.blocks_per_row = (int64_t)(take(in, 1) % 40);
        g.block_bytes = (int64_t)(take(in, 1) % 9);
    } else {
        g.rows = take_i64(in);
        g.blocks_per_row = take_i64(in);
        g.block_bytes = take_i64(in);
    }
    const size_t cap = 40 * 40 * 8;
    uint8_t *src = malloc(cap), *dst = malloc(cap), *back = malloc(cap);
    PROPERTY(src != NULL && dst != NULL && back != NULL);
    for (size_t i = 0; i < cap; ++i) src[i] = (uint8_t)take(in, 1);
    const int64_t c = (int64_t)cap;
    const bool positive = g.rows >= 1 && g.blocks_per_row >= 1 && g.block_bytes >= 1;
    const bool fits = positive && g.rows <= c && g.blocks_per_row <= c && g.block_bytes <= c &&
                      (wide)g.rows * g.blocks_per_row * g.block_bytes <= (wide)cap;
    const uint64_t total = fits ? (uint64_t)(g.rows * g.blocks_per_row * g.block_bytes) : 0;
    /* Claim exactly the grid's size when it fits our buffers; otherwise the buffers' size. */
    const uint64_t claim = fits ? (uint64_t)total : cap;
    const pw_status st = pw_bytes_reorder(ctx, &g, src, claim, target, dst, claim);
    if (!fits) {
        PROPERTY(st != PW_OK);
    } else {
        const bool layouts_ok = expected_flat(g.layout, g.rows, g.blocks_per_row, 0, 0) >= 0 &&
                                expected_flat(target, g.rows, g.blocks_per_row, 0, 0) >= 0;
        PROPERTY(layouts_ok == (st == PW_OK));
    }
    if (st == PW_OK) {
        const size_t bb = (size_t)g.block_bytes;
        for (int64_t o = 0; o < g.rows; ++o)
            for (int64_t b = 0; b < g.blocks_per_row; ++b) {
                const int64_t fs = pw_layout_flat_index(g.layout, g.rows, g.blocks_per_row, o, b);
                const int64_t fd = pw_layout_flat_index(target, g.rows, g.blocks_per_row, o, b);
                PROPERTY(memcmp(dst + (size_t)fd * bb, src + (size_t)fs * bb, bb) == 0);
            }
        pw_block_grid back_grid = g;
        back_grid.layout = target;
        PROPERTY(pw_bytes_reorder(ctx, &back_grid, dst, claim, g.layout, back, claim) == PW_OK);
        PROPERTY(memcmp(back, src, (size_t)claim) == 0);
        /* A size one byte off either way is refused. */
        PROPERTY(pw_bytes_reorder(ctx, &g, src, claim - 1, target, dst, claim) == PW_ERR_SHAPE);
        PROPERTY(pw_bytes_reorder(ctx, &g, src, claim, target, dst, claim + 1) == PW_ERR_SHAPE);
    }
    free(src);
    free(dst);
    free(back);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    input in = {data, size};
    trace_count tc = {0, 0};
    pw_context_options o;
    pw_context_options_init(&o);
    o.ignore_env = 1;
    o.threads = 1;
    o.trace = on_trace;
    o.trace_user = &tc;
    o.allocator.alloc = limited_alloc;
    o.allocator.free = limited_free;
    pw_context *ctx = NULL;
    if (pw_context_create(&o, &ctx) != PW_OK) return 0;
    switch (take(&in, 1) % 4) {
    case 0: case 1: fuzz_view(ctx, &tc, &in); break;
    case 2: fuzz_init(ctx, &in); fuzz_flat_index(&in); break;
    default: fuzz_reorder(ctx, &in); break;
    }
    pw_context_destroy(ctx);
    return 0;
}
