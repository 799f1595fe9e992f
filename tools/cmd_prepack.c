/*
 * packwise prepack FILE.gguf -o FILE.pwc [--threads N] [--chunk-mib M]
 * Packs every 2-D weight once, for the kernels this CPU's dispatch would choose
 * (GEMM, and GEMV where it reads another packed family), into a weights-cache
 * file (cache.h). Progress on a terminal
 * (tensor, bytes, MB/s); silent when stderr is not a terminal.
 */
#include "cli.h"

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

int pw_cmd_prepack(int argc, char **argv) {
    const char *file = NULL, *out = NULL;
    long long threads = 0, chunk_mib = 0;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "-o") == 0 && i + 1 < argc) out = argv[++i];
        else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
            if (pw_cli_parse_i64(argv[++i], &threads) != 0 || threads > 4096)
                return pw_cli_fail("prepack", "--threads: '%s' is not a thread count", argv[i]);
        } else if (strcmp(argv[i], "--chunk-mib") == 0 && i + 1 < argc) {
            if (pw_cli_parse_i64(argv[++i], &chunk_mib) != 0 || chunk_mib < 1 || chunk_mib > 65536)
                return pw_cli_fail("prepack", "--chunk-mib: '%s' is not 1..65536", argv[i]);
        } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
            return pw_cli_fail("prepack", "unknown option '%s'", argv[i]);
        } else if (file == NULL) {
            file = argv[i];
        } else {
            return pw_cli_fail("prepack", "unexpected argument '%s'", argv[i]);
        }
    }
    if (file == NULL || out == NULL)
        return pw_cli_fail("prepack", "usage: packwise prepack FILE.gguf -o FILE.pwc [--threads N] [--chunk-mib M]");
    pw_context *ctx = pw_cli_context("prepack", 0, (int)threads);
    if (ctx == NULL) return PW_EXIT_USAGE;
    progress p = {isatty(STDERR_FILENO), 0, 0, 0.0};
    pw_cache_prepack_options o;
    pw_cache_prepack_options_init(&o);
    o.progress = on_progress;
    o.progress_user = &p;
    o.chunk_bytes = (uint64_t)chunk_mib << 20;
    const pw_status st = pw_cache_prepack(ctx, file, out, &o);
    int rc = PW_EXIT_OK;
    if (st != PW_OK) rc = pw_cli_fail_status("prepack", ctx, st, file);
    else if (p.tty)
        fprintf(stderr, "packed %.1f MiB of weights into %.1f MiB in %.2f s\n", (double)p.total_source / 1048576.0,
                (double)p.total_packed / 1048576.0, p.seconds);
    pw_context_destroy(ctx);
    return rc;
}
