/*
 * packwise verify --format F --rows R --blocks B --order kernel|canonical|row_tiled_N FILE
 * disagreement: exit 0 when FILE holds exactly the tag fixture in that order,
 * else exit 1 with one line naming the first misplaced block, where it was
 * expected (flat index and order) and what was found there.
 */
#include "cli_layout.h"

#include <stdlib.h>
#include <string.h>

int pw_cmd_verify(int argc, char **argv) {
    pw_cli_grid g = {PW_FORMAT_Q4_0, 0, 0, 0, {PW_ORDER_ROW_MAJOR, 0}};
    int have_order = 0;
    const char *file = NULL;
    for (int i = 1; i < argc; ++i) {
        const int is_order = strcmp(argv[i], "--order") == 0;
        const int r = pw_cli_grid_option("verify", argc, argv, &i, &g);
        if (r < 0) return PW_EXIT_USAGE;
        if (r > 0) {
            have_order |= is_order;
            continue;
        }
        if (argv[i][0] == '-' && argv[i][1] != '\0') return pw_cli_fail("verify", "unknown option '%s'", argv[i]);
        if (file != NULL) return pw_cli_fail("verify", "unexpected argument '%s'", argv[i]);
        file = argv[i];
    }
    if (!g.have_format || g.rows < 1 || g.blocks < 1 || !have_order || file == NULL)
        return pw_cli_fail("verify", "usage: packwise verify --format F --rows R --blocks B "
                                     "--order kernel|canonical|row_tiled_N FILE");
    FILE *f = fopen(file, "rb");
    if (f == NULL) return pw_cli_fail("verify", "cannot open '%s'", file);
    size_t cap = 1 << 16, len = 0;
    unsigned char *buf = malloc(cap);
    for (;;) {
        if (buf == NULL) break;
        len += fread(buf + len, 1, cap - len, f);
        if (len < cap) break;
        unsigned char *nb = realloc(buf, cap * 2);
        if (nb == NULL) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = nb;
        cap *= 2;
    }
    const int read_error = ferror(f);
    fclose(f);
    if (buf == NULL || read_error) {
        free(buf);
        return pw_cli_fail("verify", "cannot read '%s'", file);
    }
    pw_context *ctx = pw_cli_context("verify", 0, 1);
    if (ctx == NULL) {
        free(buf);
        return PW_EXIT_USAGE;
    }
    pw_disagreement_report r;
    pw_status st = pw_disagreement(ctx, buf, len, g.format, g.rows, g.blocks, g.layout, &r);
    int rc;
    if (st != PW_OK) rc = pw_cli_fail_status("verify", ctx, st, file);
    else if (r.kind == PW_AGREE) {
        char l[32];
        printf("agrees: %s fixture %lldx%lld in %s (%zu bytes)\n", pw_format_get(g.format)->name,
               (long long)g.rows, (long long)g.blocks, pw_layout_name(g.layout, l, sizeof l), len);
        rc = PW_EXIT_OK;
    } else {
        printf("%s: %s\n", file, r.message);
        rc = PW_EXIT_DISAGREE;
    }
    free(buf);
    pw_context_destroy(ctx);
    return rc;
}
