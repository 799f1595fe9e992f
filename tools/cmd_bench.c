/*
 * packwise bench: throughput measured as ratios in one run (DESIGN.md
 * "Performance method"). The default suite runs every section; each section
 * lives in its own bench_*.c file.
 */
#include "cli.h"
#include "bench.h"

#include <stdlib.h>
#include <string.h>

int pw_cmd_bench(int argc, char **argv) {
    pw_bench_options o;
    memset(&o, 0, sizeof o);
    o.formats_mask = 0;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        if (strcmp(a, "--json") == 0) {
            o.json = 1;
        } else if (strcmp(a, "--formats") == 0 && i + 1 < argc) {
            char *list = strdup(argv[++i]);
            for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
                pw_format f;
                if (pw_format_from_name(tok, &f) != PW_OK) {
                    free(list);
                    return pw_cli_fail("bench", "--formats: unknown format '%s'", tok);
                }
                o.formats_mask |= 1ull << f;
            }
            free(list);
        } else if (strcmp(a, "--quick") == 0) {
            o.quick = 1;
        } else {
            return pw_cli_fail("bench",
                               "unknown option '%s' (usage: packwise bench [--formats F,..] "
                               "[--json] [--quick])",
                               a);
        }
    }
    if (o.formats_mask == 0) o.formats_mask = (1ull << PW_FORMAT_COUNT) - 1;
    pw_context *ctx = pw_cli_context("bench", 0, 1);
    if (ctx == NULL) return PW_EXIT_USAGE;
    int rc = pw_bench_decode(ctx, &o);
    pw_context_destroy(ctx);
    return rc;
}
