/*
 * Each subcommand in two halves: parse (argv into a struct: every message and exit code of
 * a bad command line, --help, and nothing else: no file opened, no context made) and run
 * (the work). main() and the command-line fuzz target (fuzz/fuzz_cli.c) both go through
 * pw_cli_parse, so the fuzzer exercises exactly the tool's parser.
 *
 * A parse function returns PW_CLI_RUN when the command should run, otherwise the exit code
 * (0 after --help, 2 after a one-line message on stderr).
 */
#ifndef PACKWISE_CLI_ARGS_H
#define PACKWISE_CLI_ARGS_H

#include "cli_layout.h"

enum { PW_CLI_RUN = -1 };

#define PW_CLI_SYNTH_MAX_FORMATS 16

typedef struct pw_cli_formats_args {
    int json;
} pw_cli_formats_args;

typedef struct pw_cli_inspect_args {
    const char *file;
    int json;
} pw_cli_inspect_args;

typedef struct pw_cli_dequant_args {
    const char *file, *tensor, *out;
} pw_cli_dequant_args;

typedef struct pw_cli_matmul_args {
    const char *file, *weight, *x, *out, *kernel, *cache;
    long long threads, repeat;
    int trace;
} pw_cli_matmul_args;

typedef struct pw_cli_prepack_args {
    const char *file, *out;
    long long threads, chunk_mib;
    pw_memory_policy policy;
} pw_cli_prepack_args;

typedef struct pw_cli_check_cache_args {
    const char *file, *cache;
} pw_cli_check_cache_args;

typedef struct pw_cli_fixtures_args {
    const char *all_dir; /* --all DIR; the rest unused then */
    pw_cli_grid grid;
    const char *out, *values;
} pw_cli_fixtures_args;

typedef struct pw_cli_verify_args {
    pw_cli_grid grid;
    const char *file;
    int values; /* --values: FILE is the format's value fixture in --order */
} pw_cli_verify_args;

typedef struct pw_cli_synth_args {
    const char *out;
    pw_format formats[PW_CLI_SYNTH_MAX_FORMATS];
    int nformats;
    long long layers, dim, ffn, seed;
} pw_cli_synth_args;

/* bench parses as it runs (cmd_bench.c): its arguments are kept for the run. */
typedef struct pw_cli_bench_args {
    int argc;
    char **argv;
} pw_cli_bench_args;

int pw_cli_formats_parse(int argc, char **argv, pw_cli_formats_args *a);
int pw_cli_formats_run(const pw_cli_formats_args *a);
int pw_cli_inspect_parse(int argc, char **argv, pw_cli_inspect_args *a);
int pw_cli_inspect_run(const pw_cli_inspect_args *a);
int pw_cli_dequant_parse(int argc, char **argv, pw_cli_dequant_args *a);
int pw_cli_dequant_run(const pw_cli_dequant_args *a);
int pw_cli_matmul_parse(int argc, char **argv, pw_cli_matmul_args *a);
int pw_cli_matmul_run(const pw_cli_matmul_args *a);
int pw_cli_prepack_parse(int argc, char **argv, pw_cli_prepack_args *a);
int pw_cli_prepack_run(const pw_cli_prepack_args *a);
int pw_cli_fixtures_parse(int argc, char **argv, pw_cli_fixtures_args *a);
int pw_cli_fixtures_run(const pw_cli_fixtures_args *a);
int pw_cli_check_cache_parse(int argc, char **argv, pw_cli_check_cache_args *a);
int pw_cli_check_cache_run(const pw_cli_check_cache_args *a);
int pw_cli_verify_parse(int argc, char **argv, pw_cli_verify_args *a);
int pw_cli_verify_run(const pw_cli_verify_args *a);
int pw_cli_synth_parse(int argc, char **argv, pw_cli_synth_args *a);
int pw_cli_synth_run(const pw_cli_synth_args *a);

/* A whole command line (argv[0] = "packwise"). */
typedef struct pw_cli_parsed {
    int command; /* index into the command table of cli_dispatch.c */
    union {
        pw_cli_formats_args formats;
        pw_cli_inspect_args inspect;
        pw_cli_dequant_args dequant;
        pw_cli_matmul_args matmul;
        pw_cli_prepack_args prepack;
        pw_cli_fixtures_args fixtures;
        pw_cli_verify_args verify;
        pw_cli_synth_args synth;
        pw_cli_bench_args bench;
        pw_cli_check_cache_args check_cache;
    } args;
} pw_cli_parsed;

/* Parse a command line: PW_CLI_RUN, or the exit code (usage printed, --help, --version). */
int pw_cli_parse(int argc, char **argv, pw_cli_parsed *p);

/* Run what pw_cli_parse returned PW_CLI_RUN for; returns the exit code. */
int pw_cli_execute(const pw_cli_parsed *p);

/* "--help" or "-h": print text on stdout; returns PW_EXIT_OK. */
int pw_cli_is_help(const char *arg);
int pw_cli_help(const char *text);

/* Lines of --help shared by the commands that write an output file. */
#define PW_CLI_HELP_OUTPUT                                                                   \
    "Outputs are written to a temporary beside them, synced and renamed over them only\n"    \
    "when complete: a failure (exit 2, the message names the path) leaves the old file or\n" \
    "none, never a partial one. An output that is one of the inputs (also through a\n"       \
    "symlink or a hard link) is refused before anything is written; a symlink output\n"      \
    "replaces the file it names.\n"
#define PW_CLI_HELP_OUTPUT_IN_PLACE                                                          \
    PW_CLI_HELP_OUTPUT                                                                       \
    "OUT may be '-' (stdout), a character device or a FIFO (/dev/null, a pipe): those are\n" \
    "written in place, without a temporary. A folder is refused.\n"
#define PW_CLI_HELP_OUTPUT_REGULAR                                                           \
    PW_CLI_HELP_OUTPUT                                                                       \
    "OUT must be a regular file or a new path: a device, a FIFO or a folder is refused\n"    \
    "and left alone.\n"

#endif
