/* packwise formats [--json]: every format with its traits and the kernels usable on this CPU. */
#include "cli.h"

#include <string.h>

int pw_cmd_formats(int argc, char **argv) {
    int json = 0;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--json") == 0)
            json = 1;
        else
            return pw_cli_fail("formats", "unknown option '%s' (usage: packwise formats [--json])",
                               argv[i]);
    }
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
