/*
 * packwise: the command table, the top-level parse (pw_cli_parse) and the helpers every
 * subcommand shares. Subcommands follow DESIGN.md's contract; main() is in main.c, so the
 * command-line fuzz target links all of this without it.
 */
#include "cli_args.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

typedef struct command {
    const char *name;
    int (*parse)(int argc, char **argv, pw_cli_parsed *p);
    int (*run)(const pw_cli_parsed *p);
    const char *summary;
    const char *exits;   /* what exit codes 0 and 1 mean for it (2 is always usage/input) */
    const char *example; /* one command line */
} command;

/* Typed halves of each subcommand behind one signature. */
#define PW_CLI_COMMAND(name)                                                                  \
    static int parse_##name(int argc, char **argv, pw_cli_parsed *p) {                        \
        return pw_cli_##name##_parse(argc, argv, &p->args.name);                               \
    }                                                                                         \
    static int run_##name(const pw_cli_parsed *p) { return pw_cli_##name##_run(&p->args.name); }
PW_CLI_COMMAND(formats)
PW_CLI_COMMAND(inspect)
PW_CLI_COMMAND(dequant)
PW_CLI_COMMAND(matmul)
PW_CLI_COMMAND(prepack)
PW_CLI_COMMAND(fixtures)
PW_CLI_COMMAND(verify)
PW_CLI_COMMAND(synth)
PW_CLI_COMMAND(check_cache)

/* bench parses its options again as it runs (cmd_bench.c); here only whether it would. */
static int parse_bench(int argc, char **argv, pw_cli_parsed *p) {
    const int rc = pw_cmd_bench_parse(argc, argv);
    if (rc != PW_CMD_BENCH_RUN) return rc;
    p->args.bench.argc = argc;
    p->args.bench.argv = argv;
    return PW_CLI_RUN;
}
static int run_bench(const pw_cli_parsed *p) { return pw_cmd_bench(p->args.bench.argc, p->args.bench.argv); }

static const command commands[] = {
    {"formats", parse_formats, run_formats, "list every format and the kernels available on this CPU",
     "0 listed", "packwise formats --json"},
    {"inspect", parse_inspect, run_inspect, "show a GGUF file's header, metadata and tensors",
     "0 shown", "packwise inspect model.gguf --json"},
    {"dequant", parse_dequant, run_dequant, "decode one tensor to float32",
     "0 written", "packwise dequant model.gguf blk.0.attn_q.weight -o q.f32"},
    {"matmul", parse_matmul, run_matmul, "Y = X * W^T for a weight in a GGUF file",
     "0 written", "packwise matmul model.gguf blk.0.ffn_up.weight --x x.f32 -o y.f32 --threads 4"},
    {"prepack", parse_prepack, run_prepack, "pack every 2-D weight once into a weights-cache file",
     "0 written", "packwise prepack model.gguf -o model.pwc"},
    {"fixtures", parse_fixtures, run_fixtures, "write layout fixture bytes",
     "0 written", "packwise fixtures --format Q4_K --rows 5 --blocks 3 --order kernel -o tags.bin"},
    {"verify", parse_verify, run_verify, "check bytes against a layout fixture",
     "0 the bytes are the fixture, 1 they disagree (the first block that does is named)",
     "packwise verify --format Q4_K --rows 5 --blocks 3 --order kernel tags.bin"},
    {"bench", parse_bench, run_bench, "measure throughput against this machine's bandwidth and peak",
     "0 measured", "packwise bench --formats Q4_0,Q4_K --shapes 11008x4096 --batch 1,128 --threads 1,2"},
    {"synth", parse_synth, run_synth, "write a GGUF of random weights at LLM shapes (for measurements)",
     "0 written", "packwise synth -o synth.gguf --layers 2 --formats Q4_0,Q6_K"},
    {"check-cache", parse_check_cache, run_check_cache, "check a weights-cache file's entries against its GGUF's bytes",
     "0 every entry matches, 1 an entry does not (it is named)", "packwise check-cache model.gguf model.pwc"},
};

/* The end of every subcommand's --help: its exit codes and an example. */
static void help_footer(const command *c) {
    printf("\nExit codes: %s; 2 bad usage or bad input (the message says which).\n"
           "Example: %s\n",
           c->exits, c->example);
}

static void usage(FILE *f) {
    fprintf(f, "usage: packwise <command> [options]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; ++i)
        fprintf(f, "  %-11s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\nPACKWISE_ISA=scalar|avx2|avxvnni|avx512|neon|dotprod|i8mm|sme caps the kernels used.\n"
               "Exit codes: 0 success, 1 a check disagreed, 2 bad usage or bad input.\n"
               "packwise <command> --help describes a command.\n");
}

int pw_cli_parse(int argc, char **argv, pw_cli_parsed *p) {
    memset(p, 0, sizeof *p);
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
        if (strcmp(argv[1], commands[i].name) == 0) {
            p->command = (int)i;
            int help = 0;
            for (int a = 2; a < argc; ++a) help |= pw_cli_is_help(argv[a]);
            const int rc = commands[i].parse(argc - 1, argv + 1, p);
            /* --help: every parser prints the command's text and returns 0; the footer
             * follows. A parser that returns PW_CLI_RUN took "--help" as an option's value
             * (-o --help names a file): a command to run, never run here (parsing opens
             * and writes nothing). */
            if (help && rc == PW_EXIT_OK) help_footer(&commands[i]);
            return rc;
        }
    fprintf(stderr, "packwise: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return PW_EXIT_USAGE;
}

int pw_cli_execute(const pw_cli_parsed *p) { return commands[p->command].run(p); }

int pw_cli_is_help(const char *arg) { return strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0; }

int pw_cli_help(const char *text) {
    fputs(text, stdout);
    return PW_EXIT_OK;
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
