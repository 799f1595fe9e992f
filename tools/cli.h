/*
 * Shared pieces of the packwise command: exit codes of the command-line contract and
 * small helpers. Every subcommand lives in its own cmd_<name>.c (its parse and run
 * halves are declared in cli_args.h).
 */
#ifndef PACKWISE_CLI_H
#define PACKWISE_CLI_H

#include "packwise.h"


#include <stdio.h>

/* Exit codes of the command-line contract (DESIGN.md). */
enum { PW_EXIT_OK = 0, PW_EXIT_DISAGREE = 1, PW_EXIT_USAGE = 2 };

/* bench: argv[0] is the subcommand name; parses and runs, returns an exit code. The other
 * subcommands are parsed and run in two halves (cli_args.h). pw_cmd_bench_parse parses
 * only: PW_CMD_BENCH_RUN when pw_cmd_bench would measure, else the exit code (0 after
 * printing the usage for --help or -h, 2 after a one-line message). */
int pw_cmd_bench(int argc, char **argv);
enum { PW_CMD_BENCH_RUN = -1 };
int pw_cmd_bench_parse(int argc, char **argv);

/* packwise fixtures --all DIR (cmd_fixtures_all.c). */
int pw_cli_fixtures_all(const char *dir);

/* Print "packwise <cmd>: <message>" on stderr and return PW_EXIT_USAGE. */
int pw_cli_fail(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Same, with a failed status and the context's message appended. */
int pw_cli_fail_status(const char *cmd, pw_context *ctx, pw_status st, const char *what);

/* A context honouring PACKWISE_ISA; with trace != 0, events go to stderr as
 * "trace ..." lines. Returns NULL after printing a message. */
pw_context *pw_cli_context(const char *cmd, int trace, int threads);

/*
 * Output files of the commands (cli_io.c over packwise/file.h). "-" is stdout; a
 * character device or FIFO (/dev/null, a pipe) is written in place; anything else goes
 * to a temporary beside it, renamed over it only when every byte is written, so a
 * failure (a full disk) leaves the old file, or none, and never a partial one. An
 * output that is the same file as one of `inputs` (n_inputs paths, NULL skipped) is
 * refused before anything is written, and so is a directory. Each returns an exit code
 * after printing "packwise <cmd>: <message naming the path>" on failure; a failed write
 * or commit has already removed the temporary.
 */
int pw_cli_out_open(const char *cmd, pw_context *ctx, pw_output **f, const char *path,
                    const char *const *inputs, size_t n_inputs);
int pw_cli_out_write(const char *cmd, pw_context *ctx, pw_output *f, const void *data,
                     size_t bytes);
int pw_cli_out_commit(const char *cmd, pw_context *ctx, pw_output *f);

/* Open, write and commit in one call. */
int pw_cli_write_file(const char *cmd, pw_context *ctx, const char *path, const void *data,
                      size_t bytes, const char *const *inputs, size_t n_inputs);

/* Names of the kernels usable in ctx for a weight format (at most cap); returns the count. */
size_t pw_cli_kernels_for_format(pw_context *ctx, pw_format format, const char **names, size_t cap);

/* Parse a non-negative decimal integer (digits only: no sign, blank, or junk; a number
 * past LLONG_MAX is refused, never clamped); returns 0 on success. */
int pw_cli_parse_i64(const char *s, long long *out);

#endif
