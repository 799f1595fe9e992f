/* Internal helpers of the layout module shared by view.c, prepack.c and convert.c. */
#ifndef PACKWISE_LAYOUT_INTERNAL_H
#define PACKWISE_LAYOUT_INTERNAL_H

#include "packwise/view.h"

/* Grid dims of a view: shape with the block axis divided by the block size. */
void pw__view_grid(const pw_view *v, int64_t grid[PW_MAX_RANK]);

/* Block address (in blocks from data) of grid coordinates c[rank]. */
int64_t pw__view_block_index(const pw_view *v, const int64_t *c);

/* Normalise a layout for a grid of `rows` rows: ROW_TILED with nr == 1 is
 * ROW_MAJOR and with nr == rows is INPUT_BLOCK_MAJOR (same bytes). */
pw_layout pw__layout_normalize(pw_layout l, int64_t rows);

/* A layout raw bytes can be in: ROW_MAJOR, INPUT_BLOCK_MAJOR, or ROW_TILED with nr >= 1
 * dividing rows. Refused, with a message "<who>: <which> layout ...": a layout naming no
 * order (0, a zeroed struct), STRIDED, an unknown order, a bad tile. */
pw_status pw__check_byte_layout(pw_context *ctx, pw_layout l, int64_t rows, const char *who,
                                const char *which);

/* Fill the view fields that describe a dense [rows, bpr] block grid in layout l
 * (offset 0, block axis 1). */
void pw__view_set_dense(pw_view *v, pw_layout l, int64_t rows, int64_t bpr);

/* pw_view_prepack's conversion itself (the public function, in src/op/, adds the warning
 * when no kernel reads the result as it is). */
pw_status pw__view_prepack(pw_context *ctx, const pw_view *src, pw_layout target, pw_arena *arena,
                           pw_view *out);

#endif
