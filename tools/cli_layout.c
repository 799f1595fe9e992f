/* Shared option parsing for `fixtures` and `verify`: --format, --rows, --blocks, --order. */
#include "cli_layout.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int pw_cli_parse_order(const char *s, pw_layout *out) {
    if (strcmp(s, "canonical") == 0 || strcmp(s, "row_major") == 0) {
        *out = (pw_layout){PW_ORDER_ROW_MAJOR, 0};
        return 0;
    }
    if (strcmp(s, "kernel") == 0 || strcmp(s, "input_block_major") == 0) {
        *out = (pw_layout){PW_ORDER_INPUT_BLOCK_MAJOR, 0};
        return 0;
    }
    long long nr;
    if (strncmp(s, "row_tiled_", 10) == 0 && pw_cli_parse_i64(s + 10, &nr) == 0 && nr >= 1) {
        *out = (pw_layout){PW_ORDER_ROW_TILED, nr};
        return 0;
    }
    return -1;
}

int pw_cli_grid_option(const char *cmd, int argc, char **argv, int *i, pw_cli_grid *g) {
    const char *a = argv[*i];
    if (*i + 1 >= argc) return 0;
    const char *v = argv[*i + 1];
    long long n;
    if (strcmp(a, "--format") == 0) {
        if (pw_format_from_name(v, &g->format) != PW_OK)
            return pw_cli_fail(cmd, "--format: unknown format '%s' (packwise formats lists them)", v), -1;
        g->have_format = 1;
    } else if (strcmp(a, "--rows") == 0) {
        if (pw_cli_parse_i64(v, &n) != 0 || n < 1)
            return pw_cli_fail(cmd, "--rows: '%s' is not a positive count", v), -1;
        g->rows = n;
    } else if (strcmp(a, "--blocks") == 0) {
        if (pw_cli_parse_i64(v, &n) != 0 || n < 1)
            return pw_cli_fail(cmd, "--blocks: '%s' is not a positive count", v), -1;
        g->blocks = n;
    } else if (strcmp(a, "--order") == 0) {
        if (pw_cli_parse_order(v, &g->layout) != 0)
            return pw_cli_fail(cmd, "--order: '%s' is not canonical, kernel or row_tiled_N", v), -1;
    } else {
        return 0;
    }
    ++*i;
    return 1;
}
