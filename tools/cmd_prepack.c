/*
 * packwise prepack FILE.gguf -o FILE.pwc [--policy compact|fastest] [--threads N] [--chunk-mib M]
 * Packs every 2-D weight once into the forms a weight would hold on this CPU
 * under the memory policy (compact, the library's default: one form per
 * weight at the file's size, none where kernels read the file in place;
 * fastest: up to two), into a weights-cache file (cache.h). Progress on a
 * terminal (tensor, bytes, MB/s); silent when stderr is not a terminal.
 */
#include "cli_args.h"

#include <string.h>
#include <unistd.h>

typedef struct progress {
    int tty;
    uint64_t total_source, total_packed;
    double seconds;
} progress;

static void on_progress(void *user, const char *tensor, int64_t index, int64_t count, uint64_t source,
                        uint64_t packed, double seconds) {
    progress *p = user;
    p->total_source += source;
    p->total_packed += packed;
    p->seconds += seconds;
    if (!p->tty) return;
    fprintf(stderr, "\r[%lld/%lld] %-40.40s %8.1f MiB -> %8.1f MiB  %8.1f MB/s\033[K",
            (long long)index + 1, (long long)count, tensor, (double)source / 1048576.0,
            (double)packed / 1048576.0, seconds > 0 ? (double)source / seconds * 1e-6 : 0.0);
    if (index + 1 == count) fputc('\n', stderr);
}

static const char HELP[] =
    "usage: packwise prepack FILE.gguf -o FILE.pwc [--policy compact|fastest] [--threads N]\n"
    "       [--chunk-mib M]\n"
    "Pack every 2-D weight of FILE.gguf once into the forms its weights hold on this CPU,\n"
    "into a weights-cache file for matmul --cache. --policy compact (default: one form per\n"
    "weight at the file's size, none where kernels read the file in place) or fastest (the\n"
    "fastest kernel's form for n = 1 and n > 1), --threads N (0 = every core, at most 4096),\n"
    "--chunk-mib M (packed MiB per streaming chunk, 1..65536; default 16).\n"
    PW_CLI_HELP_OUTPUT_REGULAR;

int pw_cli_prepack_parse(int argc, char **argv, pw_cli_prepack_args *a) {
    memset(a, 0, sizeof *a);
    for (int i = 1; i < argc; ++i) {
        if (pw_cli_is_help(argv[i])) return pw_cli_help(HELP);
        else if (strcmp(argv[i], "-o") == 0 && i + 1 < argc) a->out = argv[++i];
        else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
            if (pw_cli_parse_i64(argv[++i], &a->threads) != 0 || a->threads > 4096)
                return pw_cli_fail("prepack", "--threads: '%s' is not a thread count", argv[i]);
        } else if (strcmp(argv[i], "--policy") == 0 && i + 1 < argc) {
            if (pw_memory_policy_from_name(argv[++i], &a->policy) != PW_OK || a->policy == PW_MEMORY_IN_PLACE)
                return pw_cli_fail("prepack", "--policy: '%s' is not compact or fastest", argv[i]);
        } else if (strcmp(argv[i], "--chunk-mib") == 0 && i + 1 < argc) {
            if (pw_cli_parse_i64(argv[++i], &a->chunk_mib) != 0 || a->chunk_mib < 1 || a->chunk_mib > 65536)
                return pw_cli_fail("prepack", "--chunk-mib: '%s' is not 1..65536", argv[i]);
        } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
            return pw_cli_fail("prepack", "unknown option '%s'", argv[i]);
        } else if (a->file == NULL) {
            a->file = argv[i];
        } else {
            return pw_cli_fail("prepack", "unexpected argument '%s'", argv[i]);
        }
    }
    if (a->file == NULL || a->out == NULL)
        return pw_cli_fail("prepack", "usage: packwise prepack FILE.gguf -o FILE.pwc [--policy compact|fastest] "
                                      "[--threads N] [--chunk-mib M]");
    return PW_CLI_RUN;
}

int pw_cli_prepack_run(const pw_cli_prepack_args *a) {
    const char *file = a->file, *out = a->out;
    const long long threads = a->threads, chunk_mib = a->chunk_mib;
    pw_context *ctx = pw_cli_context("prepack", 0, (int)threads);
    if (ctx == NULL) return PW_EXIT_USAGE;
    progress p = {isatty(STDERR_FILENO), 0, 0, 0.0};
    pw_cache_prepack_options o;
    pw_cache_prepack_options_init(&o);
    o.progress = on_progress;
    o.progress_user = &p;
    o.chunk_bytes = (uint64_t)chunk_mib << 20;
    o.policy = a->policy;
    const pw_status st = pw_cache_prepack(ctx, file, out, &o);
    int rc = PW_EXIT_OK;
    if (st != PW_OK) rc = pw_cli_fail_status("prepack", ctx, st, file);
    else if (p.tty)
        fprintf(stderr, "packed %.1f MiB of weights into %.1f MiB in %.2f s\n", (double)p.total_source / 1048576.0,
                (double)p.total_packed / 1048576.0, p.seconds);
    pw_context_destroy(ctx);
    return rc;
}
