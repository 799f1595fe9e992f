/* Options shared by `packwise fixtures` and `packwise verify`. */
#ifndef PACKWISE_CLI_LAYOUT_H
#define PACKWISE_CLI_LAYOUT_H

#include "cli.h"

typedef struct pw_cli_grid {
    pw_format format;
    int have_format;
    int64_t rows, blocks;
    pw_layout layout;
} pw_cli_grid;

/* "canonical" | "row_major" | "kernel" | "input_block_major" | "row_tiled_N". */
int pw_cli_parse_order(const char *s, pw_layout *out);

/* Consume argv[*i] (and its value) if it is --format/--rows/--blocks/--order:
 * returns 1 when consumed, 0 when not one of them, -1 after printing an error. */
int pw_cli_grid_option(const char *cmd, int argc, char **argv, int *i, pw_cli_grid *g);

#endif
