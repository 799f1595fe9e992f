/*
 * Shared pieces of the packwise command: the subcommand entry points, exit
 * codes of the command-line contract, and small helpers. Every subcommand
 * lives in its own cmd_<name>.c.
 */
#ifndef PACKWISE_CLI_H
#define PACKWISE_CLI_H

#include "packwise.h"

#include <stdio.h>

/* Exit codes of the command-line contract (DESIGN.md). */
enum { PW_EXIT_OK = 0, PW_EXIT_DISAGREE = 1, PW_EXIT_USAGE = 2 };

/* Subcommands: argv[0] is the subcommand name. Return an exit code. */
int pw_cmd_formats(int argc, char **argv);
int pw_cmd_inspect(int argc, char **argv);
int pw_cmd_dequant(int argc, char **argv);
int pw_cmd_matmul(int argc, char **argv);
int pw_cmd_prepack(int argc, char **argv);
int pw_cmd_fixtures(int argc, char **argv);
int pw_cmd_verify(int argc, char **argv);
int pw_cmd_bench(int argc, char **argv);
int pw_cmd_synth(int argc, char **argv);

/* packwise fixtures --all DIR (cmd_fixtures_all.c). */
int pw_cli_fixtures_all(const char *dir);

/* Print "packwise <cmd>: <message>" on stderr and return PW_EXIT_USAGE. */
int pw_cli_fail(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Same, with a failed status and the context's message appended. */
int pw_cli_fail_status(const char *cmd, pw_context *ctx, pw_status st, const char *what);

/* A context honouring PACKWISE_ISA; with trace != 0, events go to stderr as
 * "trace ..." lines. Returns NULL after printing a message. */
pw_context *pw_cli_context(const char *cmd, int trace, int threads);

/* Write bytes to a file ("-" = stdout). Returns 0 on success. */
int pw_cli_write_file(const char *path, const void *data, size_t bytes);

/* Names of the kernels usable in ctx for a weight format (at most cap); returns the count. */
size_t pw_cli_kernels_for_format(pw_context *ctx, pw_format format, const char **names, size_t cap);

/* Parse a non-negative decimal integer (digits only: no sign, blank, or junk; a number
 * past LLONG_MAX is refused, never clamped); returns 0 on success. */
int pw_cli_parse_i64(const char *s, long long *out);

#endif
