/* packwise: the command-line tool. Subcommands follow DESIGN.md's contract. */
#include "cli.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

typedef struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} command;

static const command commands[] = {
    {"formats", pw_cmd_formats, "list every format and the kernels available on this CPU"},
    {"inspect", pw_cmd_inspect, "show a GGUF file's header, metadata and tensors"},
    {"dequant", pw_cmd_dequant, "decode one tensor to float32"},
    {"matmul", pw_cmd_matmul, "Y = X * W^T for a weight in a GGUF file"},
    {"prepack", pw_cmd_prepack, "pack every 2-D weight once into a weights-cache file"},
    {"fixtures", pw_cmd_fixtures, "write layout fixture bytes"},
    {"verify", pw_cmd_verify, "check bytes against a layout fixture"},
    {"bench", pw_cmd_bench, "measure throughput against this machine's bandwidth and peak"},
    {"synth", pw_cmd_synth, "write a GGUF of random weights at LLM shapes (for measurements)"},
};

static void usage(FILE *f) {
    fprintf(f, "usage: packwise <command> [options]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; ++i)
        fprintf(f, "  %-9s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\nPACKWISE_ISA=scalar|avx2|avx512|neon|dotprod|i8mm caps the kernels used.\n"
               "Exit codes: 0 success, 1 a check disagreed, 2 bad usage or bad input.\n");
}

int main(int argc, char **argv) {
    if (argc < 2) {
        usage(stderr);
        return PW_EXIT_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return PW_EXIT_OK;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("packwise %s\n", pw_version());
        return PW_EXIT_OK;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; ++i)
        if (strcmp(argv[1], commands[i].name) == 0) return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "packwise: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return PW_EXIT_USAGE;
}

int pw_cli_fail(const char *cmd, const char *fmt, ...) {
    fprintf(stderr, "packwise %s: ", cmd);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return PW_EXIT_USAGE;
}

int pw_cli_fail_status(const char *cmd, pw_context *ctx, pw_status st, const char *what) {
    const char *msg = ctx ? pw_context_message(ctx) : "";
    return pw_cli_fail(cmd, "%s: %s%s%s", what, pw_status_str(st), msg[0] ? ": " : "", msg);
}

static void trace_to_stderr(void *user, const pw_trace_event *e) {
    (void)user;
    char line[1024];
    pw_trace_format(e, line, sizeof line);
    fprintf(stderr, "%s\n", line);
}

pw_context *pw_cli_context(const char *cmd, int trace, int threads) {
    pw_context_options o;
    pw_context_options_init(&o);
    o.threads = threads;
    if (trace) o.trace = trace_to_stderr;
    pw_context *ctx = NULL;
    pw_status st = pw_context_create(&o, &ctx);
    if (st != PW_OK) {
        pw_cli_fail(cmd, "%s: %s", pw_status_str(st), pw_last_create_message());
        return NULL;
    }
    return ctx;
}

int pw_cli_parse_i64(const char *s, long long *out) {
    /* Digits only: strtoll alone would skip leading blanks, take a sign and clamp a
     * number too large to LLONG_MAX without a word. */
    if (s == NULL || *s < '0' || *s > '9') return -1;
    errno = 0;
    char *end = NULL;
    const long long v = strtoll(s, &end, 10);
    if (*end != '\0' || errno == ERANGE) return -1;
    *out = v;
    return 0;
}
