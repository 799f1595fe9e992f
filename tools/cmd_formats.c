/* packwise formats [--json]: every format with its traits and the kernels usable on this CPU. */
#include "cli_args.h"

#include <string.h>

static const char HELP[] =
    "usage: packwise formats [--json]\n"
    "Every format: name, GGUF type id, block size, bytes per block, bits per weight, and the\n"
    "kernels usable on this CPU (PACKWISE_ISA caps them). --json: one JSON array.\n";

int pw_cli_formats_parse(int argc, char **argv, pw_cli_formats_args *a) {
    memset(a, 0, sizeof *a);
    for (int i = 1; i < argc; ++i) {
        if (pw_cli_is_help(argv[i]))
            return pw_cli_help(HELP);
        else if (strcmp(argv[i], "--json") == 0)
            a->json = 1;
        else
            return pw_cli_fail("formats", "unknown option '%s' (usage: packwise formats [--json])",
                               argv[i]);
    }
    return PW_CLI_RUN;
}

int pw_cli_formats_run(const pw_cli_formats_args *a) {
    const int json = a->json;
    pw_context *ctx = pw_cli_context("formats", 0, 1);
    if (ctx == NULL) return PW_EXIT_USAGE;
    if (json) printf("[");
    else
        printf("%-8s %9s %6s %6s %6s  %s\n", "format", "gguf_type", "block", "bytes", "bpw",
               "kernels");
    for (int f = 0; f < PW_FORMAT_COUNT; ++f) {
        const pw_format_info *fi = pw_format_get((pw_format)f);
        const char *names[64];
        size_t n = pw_cli_kernels_for_format(ctx, (pw_format)f, names, 64);
        if (json) {
            printf("%s\n {\"name\":\"%s\",\"gguf_type\":", f ? "," : "", fi->name);
            if (fi->gguf_type >= 0) printf("%d", (int)fi->gguf_type);
            else printf("null");
            printf(",\"block_size\":%d,\"block_bytes\":%d,\"bits_per_weight\":%.4f,\"kernels\":[",
                   (int)fi->block_size, (int)fi->block_bytes,
                   pw_format_bits_per_weight((pw_format)f));
            for (size_t k = 0; k < n; ++k) printf("%s\"%s\"", k ? "," : "", names[k]);
            printf("]}");
        } else {
            printf("%-8s %9d %6d %6d %6.3f  ", fi->name, (int)fi->gguf_type, (int)fi->block_size,
                   (int)fi->block_bytes, pw_format_bits_per_weight((pw_format)f));
            for (size_t k = 0; k < n; ++k) printf("%s%s", k ? "," : "", names[k]);
            printf("%s\n", n ? "" : "-");
        }
    }
    if (json) printf("\n]\n");
    pw_context_destroy(ctx);
    return PW_EXIT_OK;
}
