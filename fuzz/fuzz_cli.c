/*
 * libFuzzer target for the command-line parser: the input is an argv vector (arguments
 * separated by NUL bytes, at most 48 of them after "packwise"), parsed by pw_cli_parse,
 * the same code main() runs (tools/cli_args.h). Nothing is executed: parsing opens no
 * file and makes no context, so a run touches no file at all.
 *
 * Properties, checked on every input (abort: a finding):
 *   - the result is PW_CLI_RUN, 0 or 2, and the same when the same argv is parsed again;
 *   - the arguments are not written to (the old synth tokenised with strtok in a copy);
 *   - a command line accepted to run carries what its command needs, and every number
 *     is inside the range its option states (so a clamped or wrapped value cannot get by).
 * fuzz_cli.dict names the subcommands, options and typical values.
 * Built into the replay driver too (replay.c), so the corpus replays in ctest.
 */
#include "fuzz_input.h"
#include "cli_args.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_ARGS 48


static int in_range(long long v, long long lo, long long hi) { return v >= lo && v <= hi; }

static int grid_ok(const pw_cli_grid *g, int defaults_allowed) {
    return (g->have_format || defaults_allowed) && g->rows >= 1 && g->blocks >= 1 &&
           (g->layout.order != PW_ORDER_ROW_TILED || g->layout.tile_rows >= 1);
}

/* What a command line accepted to run must hold (cli_args.h). */
static void check_parsed(const pw_cli_parsed *p, const char *cmd) {
    if (strcmp(cmd, "inspect") == 0) {
        PROPERTY(p->args.inspect.file != NULL);
    } else if (strcmp(cmd, "dequant") == 0) {
        const pw_cli_dequant_args *a = &p->args.dequant;
        PROPERTY(a->file && a->tensor && a->out);
    } else if (strcmp(cmd, "matmul") == 0) {
        const pw_cli_matmul_args *a = &p->args.matmul;
        PROPERTY(a->file && a->weight && a->x && a->out);
        PROPERTY(in_range(a->threads, 0, 4096) && in_range(a->repeat, 1, 1000000));
    } else if (strcmp(cmd, "prepack") == 0) {
        const pw_cli_prepack_args *a = &p->args.prepack;
        PROPERTY(a->file && a->out);
        PROPERTY(in_range(a->threads, 0, 4096) && in_range(a->chunk_mib, 0, 65536));
    } else if (strcmp(cmd, "fixtures") == 0) {
        const pw_cli_fixtures_args *a = &p->args.fixtures;
        PROPERTY(a->all_dir != NULL || (a->out != NULL && grid_ok(&a->grid, 0)));
    } else if (strcmp(cmd, "verify") == 0) {
        const pw_cli_verify_args *a = &p->args.verify;
        /* --values: the value fixture's own grid, so no --rows or --blocks */
        PROPERTY(a->file != NULL &&
                 (a->values ? a->grid.have_format && a->grid.rows == 0 && a->grid.blocks == 0
                            : grid_ok(&a->grid, 0)));
    } else if (strcmp(cmd, "synth") == 0) {
        const pw_cli_synth_args *a = &p->args.synth;
        PROPERTY(a->out != NULL && in_range(a->nformats, 1, PW_CLI_SYNTH_MAX_FORMATS));
        PROPERTY(in_range(a->layers, 1, 1 << 20) && in_range(a->dim, 1, 1 << 20) &&
                 in_range(a->ffn, 1, 1 << 20) && in_range(a->seed, 1, 1 << 20));
        for (int i = 0; i < a->nformats; ++i) PROPERTY(pw_format_get(a->formats[i]) != NULL);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    /* One copy holds the argument strings; a second is compared with it afterwards. */
    char *buf = malloc(size + 1), *copy = malloc(size + 1);
    if (buf == NULL || copy == NULL) {
        free(buf);
        free(copy);
        return 0;
    }
    memcpy(buf, data, size);
    buf[size] = '\0';
    memcpy(copy, buf, size + 1);
    char *argv[MAX_ARGS + 2];
    int argc = 0;
    static char name[] = "packwise";
    argv[argc++] = name;
    for (size_t at = 0; at < size && argc <= MAX_ARGS;) {
        argv[argc++] = buf + at;
        at += strlen(buf + at) + 1;
    }
    argv[argc] = NULL;
    pw_cli_parsed p;
    const int rc = pw_cli_parse(argc, argv, &p);
    PROPERTY(rc == PW_CLI_RUN || rc == 0 || rc == 2);
    PROPERTY(memcmp(buf, copy, size + 1) == 0);
    if (rc == PW_CLI_RUN) {
        PROPERTY(argc >= 2);
        check_parsed(&p, argv[1]);
    }
    pw_cli_parsed again;
    PROPERTY(pw_cli_parse(argc, argv, &again) == rc);
    free(buf);
    free(copy);
    return 0;
}
