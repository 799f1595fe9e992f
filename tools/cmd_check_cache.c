/*
 * packwise check-cache FILE.gguf FILE.pwc
 * The full content check of a weights-cache file against its GGUF: every
 * entry made from a tensor of the file (found by the tensor's identity, as a
 * weight finds it) has the content hash of the bytes it was packed from
 * compared with the tensor's bytes now (pw_cache_check_gguf: reads every such
 * tensor). Serving a form never reads its tensor; this is the check that
 * does. Exit 0 when every entry matches, 1 when one does not (named on
 * stderr), 2 on bad usage or input.
 */
#include "cli_args.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static const char HELP[] =
    "usage: packwise check-cache FILE.gguf FILE.pwc\n"
    "Compare every entry of the weights-cache file FILE.pwc made from a tensor of FILE.gguf\n"
    "with that tensor's bytes now (a content hash of each; reads every such tensor). A\n"
    "weight served from a cache never reads its tensor: the cache finds it by the file's\n"
    "identity (header, tensor table, size, modification time), and this is the check of\n"
    "the bytes themselves.\n"
    "Exit codes: 0 every entry matches, 1 one does not (named on stderr), 2 bad usage or\n"
    "input.\n"
    "Example: packwise check-cache model.gguf model.pwc\n";

int pw_cli_check_cache_parse(int argc, char **argv, pw_cli_check_cache_args *a) {
    memset(a, 0, sizeof *a);
    for (int i = 1; i < argc; ++i) {
        if (pw_cli_is_help(argv[i])) return pw_cli_help(HELP);
        if (argv[i][0] == '-' && argv[i][1] != '\0')
            return pw_cli_fail("check-cache", "unknown option '%s'", argv[i]);
        if (a->file == NULL) a->file = argv[i];
        else if (a->cache == NULL) a->cache = argv[i];
        else return pw_cli_fail("check-cache", "unexpected argument '%s'", argv[i]);
    }
    if (a->file == NULL || a->cache == NULL)
        return pw_cli_fail("check-cache", "usage: packwise check-cache FILE.gguf FILE.pwc");
    return PW_CLI_RUN;
}

int pw_cli_check_cache_run(const pw_cli_check_cache_args *a) {
    pw_context *ctx = pw_cli_context("check-cache", 0, 1);
    if (ctx == NULL) return PW_EXIT_USAGE;
    pw_gguf_open_options go;
    pw_gguf_open_options_init(&go);
    go.orientation = PW_ORIENT_OUT_IN;
    pw_gguf *g = NULL;
    pw_cache *c = NULL;
    int rc = PW_EXIT_OK;
    pw_status st = pw_gguf_open(ctx, a->file, &go, &g);
    if (st != PW_OK) rc = pw_cli_fail_status("check-cache", ctx, st, a->file);
    if (rc == PW_EXIT_OK && (st = pw_cache_open(ctx, a->cache, &c)) != PW_OK)
        rc = pw_cli_fail_status("check-cache", ctx, st, a->cache);
    int64_t checked = 0, mismatched = 0;
    if (rc == PW_EXIT_OK && (st = pw_cache_check_gguf(ctx, c, g, &checked, &mismatched)) != PW_OK)
        rc = pw_cli_fail_status("check-cache", ctx, st, a->cache);
    if (rc == PW_EXIT_OK) {
        const int64_t entries = pw_cache_entry_count(c);
        if (mismatched > 0) {
            fprintf(stderr, "packwise check-cache: %s: %s\n", a->cache, pw_context_message(ctx));
            rc = PW_EXIT_DISAGREE;
        } else {
            printf("%s: %" PRId64 " of %" PRId64 " entries checked against %s, all match\n", a->cache,
                   checked, entries, a->file);
            if (checked < entries)
                printf("(%" PRId64 " entries are not of this file's tensors: another file's, or refused)\n",
                       entries - checked);
        }
    }
    pw_cache_close(c);
    pw_gguf_close(g);
    pw_context_destroy(ctx);
    return rc;
}
