/*
 * packwise fixtures --format F [--rows R --blocks B] [--order canonical|kernel|row_tiled_N]
 *                  -o OUT [--values VALUES.f32]
 * Writes the tag fixture bytes (defaults: 5 rows x 3 blocks, canonical order).
 * `packwise fixtures --all DIR` writes every fixture with a MANIFEST.txt (cmd_fixtures_all.c).
 * With --values, writes the format's value fixture instead: its block bytes
 * (its own grid, in the order --order names: canonical by default) to OUT and
 * the exactly known decoded values, float32 little-endian row-major, to
 * VALUES.f32. Its grid is fixed, so --rows and --blocks are refused with it.
 */
#include "cli_args.h"

#include <stdlib.h>
#include <string.h>

static const char HELP[] =
    "usage: packwise fixtures --format F [--rows R --blocks B] [--order canonical|kernel|row_tiled_N]\n"
    "                         -o OUT [--values V.f32]\n"
    "       packwise fixtures --all DIR\n"
    "The tag fixture of a rows x blocks grid of F blocks (default 5 x 3) in the order named\n"
    "(canonical = row-major, kernel = input-block-major); with --values, the format's value\n"
    "fixture (its bytes in that order to OUT, its exactly known float32 values, row-major, to\n"
    "V.f32; its grid is fixed, so --rows and --blocks are refused with it). --all\n"
    "writes every fixture into DIR with a MANIFEST.txt, written last.\n"
    PW_CLI_HELP_OUTPUT_IN_PLACE;

int pw_cli_fixtures_parse(int argc, char **argv, pw_cli_fixtures_args *a) {
    memset(a, 0, sizeof *a);
    if (argc == 3 && strcmp(argv[1], "--all") == 0) {
        a->all_dir = argv[2];
        return PW_CLI_RUN;
    }
    a->grid = (pw_cli_grid){PW_FORMAT_Q4_0, 0, PW_FIXTURE_DEFAULT_ROWS, PW_FIXTURE_DEFAULT_BLOCKS,
                            {PW_ORDER_ROW_MAJOR, 0}};
    const char *sized = NULL; /* --rows or --blocks, which --values cannot honour */
    for (int i = 1; i < argc; ++i) {
        if (pw_cli_is_help(argv[i])) return pw_cli_help(HELP);
        if (strcmp(argv[i], "--rows") == 0 || strcmp(argv[i], "--blocks") == 0) sized = argv[i];
        const int r = pw_cli_grid_option("fixtures", argc, argv, &i, &a->grid);
        if (r < 0) return PW_EXIT_USAGE;
        if (r > 0) continue;
        if (strcmp(argv[i], "-o") == 0 && i + 1 < argc) a->out = argv[++i];
        else if (strcmp(argv[i], "--values") == 0 && i + 1 < argc) a->values = argv[++i];
        else return pw_cli_fail("fixtures", "unexpected argument '%s'", argv[i]);
    }
    if (!a->grid.have_format || a->out == NULL)
        return pw_cli_fail("fixtures", "usage: packwise fixtures --format F [--rows R --blocks B] "
                                       "[--order canonical|kernel|row_tiled_N] -o OUT [--values V.f32]");
    if (a->values != NULL && sized != NULL)
        return pw_cli_fail("fixtures", "%s: the value fixture's grid is fixed (packwise fixtures --all "
                                       "lists it); --values takes --format and --order only", sized);
    return PW_CLI_RUN;
}

int pw_cli_fixtures_run(const pw_cli_fixtures_args *a) {
    if (a->all_dir != NULL) return pw_cli_fixtures_all(a->all_dir);
    const pw_cli_grid g = a->grid;
    const char *out = a->out, *values = a->values;
    pw_context *ctx = pw_cli_context("fixtures", 0, 1);
    if (ctx == NULL) return PW_EXIT_USAGE;
    int rc = PW_EXIT_OK;
    void *buf = NULL;
    float *vals = NULL;
    uint64_t bytes = 0, count = 0;
    pw_status st;
    if (values != NULL) {
        int64_t rows, blocks;
        st = pw_fixture_values(ctx, g.format, NULL, &bytes, NULL, &count, &rows, &blocks);
        if (st == PW_OK) {
            buf = malloc((size_t)bytes);
            vals = malloc(sizeof(float) * (size_t)count);
            st = buf && vals ? pw_fixture_values(ctx, g.format, buf, &bytes, vals, &count, &rows, &blocks)
                             : PW_ERR_OUT_OF_MEMORY;
        }
        if (st == PW_OK && g.layout.order != PW_ORDER_ROW_MAJOR) {
            /* the bytes in the order named (the values stay row-major: they are the matrix) */
            void *ordered = malloc((size_t)bytes);
            const pw_block_grid grid = {rows, blocks, pw_format_get(g.format)->block_bytes,
                                        {PW_ORDER_ROW_MAJOR, 0}};
            st = ordered ? pw_bytes_reorder(ctx, &grid, buf, bytes, g.layout, ordered, bytes)
                         : PW_ERR_OUT_OF_MEMORY;
            free(buf);
            buf = ordered;
        }
    } else {
        st = pw_fixture_bytes(ctx, g.format, g.rows, g.blocks, &bytes);
        if (st == PW_OK) {
            buf = malloc((size_t)bytes ? (size_t)bytes : 1);
            st = buf ? pw_fixture_tags(ctx, g.format, g.rows, g.blocks, g.layout, buf, bytes)
                     : PW_ERR_OUT_OF_MEMORY;
        }
    }
    pw_output *fo = NULL, *fv = NULL;
    if (st != PW_OK) rc = pw_cli_fail_status("fixtures", ctx, st, pw_format_get(g.format)->name);
    else rc = pw_cli_out_open("fixtures", ctx, &fo, out, NULL, 0);
    /* Both outputs are opened before either is written: one file for both is refused. */
    if (rc == PW_EXIT_OK && values != NULL) {
        rc = pw_cli_out_open("fixtures", ctx, &fv, values, &out, 1);
        if (rc == PW_EXIT_OK && (strcmp(out, values) == 0 || (pw_output_destination(fo)[0] &&
                                  strcmp(pw_output_destination(fo),
                                         pw_output_destination(fv)) == 0)))
            rc = pw_cli_fail("fixtures", "-o and --values name the same file '%s'", values);
    }
    if (rc == PW_EXIT_OK) rc = pw_cli_out_write("fixtures", ctx, fo, buf, (size_t)bytes);
    if (rc == PW_EXIT_OK && values != NULL)
        rc = pw_cli_out_write("fixtures", ctx, fv, vals, sizeof(float) * (size_t)count);
    if (rc == PW_EXIT_OK) rc = pw_cli_out_commit("fixtures", ctx, fo);
    if (rc == PW_EXIT_OK && values != NULL) rc = pw_cli_out_commit("fixtures", ctx, fv);
    pw_output_close(fo);
    pw_output_close(fv);
    free(buf);
    free(vals);
    pw_context_destroy(ctx);
    return rc;
}
