/*
 * `packwise bench --plot FILE.svg`: a roofline chart of the matmul suite,
 * drawn by gnuplot (its svg terminal) from the collected results.
 *
 *   x: arithmetic intensity, flop per weight byte = 2 * out * in * n / weight_bytes
 *   y: GFLOP/s of each case (one point type per format, one colour per thread count)
 *   roofs: min(int8 peak, read bandwidth * x) per thread count, both measured in
 *          this run, so GEMV points (left) sit under the bandwidth slope and
 *          GEMM points (right) under the int8 ceiling.
 */
#include "bench.h"
#include "cli.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

static const char *const colours[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e",
                                      "#8c564b"};
#define NCOLOURS (int)(sizeof colours / sizeof colours[0])

static int thread_index(const pw_bench_results *r, int threads) {
    for (int i = 0; i < r->nmachine; ++i)
        if (r->machine[i].threads == threads) return i;
    return 0;
}

static double intensity(const pw_bench_result *c) {
    return 2.0 * (double)c->out * (double)c->in * (double)c->n / (double)c->weight_bytes;
}

/* The gnuplot script: roofs as functions, cases as one datablock per (format, threads). */
/* Cases whose every run was disturbed (see pw_bench_sampler) would chart the
 * machine's load, not the kernel: they are left out, and the title says so. */
static int charted(const pw_bench_result *c) { return c->clean_reps > 0; }

static void write_script(FILE *g, const pw_bench_results *r, const char *path) {
    double lo = 0, hi = 0;
    size_t left_out = 0;
    for (size_t i = 0; i < r->count; ++i) {
        const double ai = intensity(&r->cases[i]);
        lo = (i == 0 || ai < lo) ? ai : lo;
        hi = (i == 0 || ai > hi) ? ai : hi;
        left_out += !charted(&r->cases[i]);
    }
    fprintf(g, "set terminal svg size 1100,760 dynamic noenhanced font 'sans,12'\n"
               "set output '%s'\n"
               "set title 'packwise bench: GFLOP/s against the roofline measured in the same run"
               " (%zu disturbed case%s left out)'\n"
               "set logscale xy\nset grid xtics ytics mxtics mytics lc rgb '#dddddd'\n"
               "set xlabel 'arithmetic intensity (flop per weight byte; GEMV left, GEMM right)'\n"
               "set ylabel 'GFLOP/s'\nset key inside left top opaque box\nset samples 400\n"
               "set xrange [%g:%g]\n",
            path, left_out, left_out == 1 ? "" : "s", lo / 2, hi * 2);
    for (int t = 0; t < r->nmachine; ++t) {
        const pw_bench_machine *m = &r->machine[t];
        fprintf(g, "bw%d = %.6g\npk%d = %.6g\nroof%d(x) = bw%d * x < pk%d ? bw%d * x : pk%d\n", t,
                m->read_gbps, t, m->int8_gops, t, t, t, t, t);
    }
    /* One datablock per (format, thread count) present, in the order cases came. */
    int have[PW_FORMAT_COUNT][PW_BENCH_MAX_LIST] = {{0}};
    for (size_t i = 0; i < r->count; ++i)
        if (charted(&r->cases[i])) have[r->cases[i].format][thread_index(r, r->cases[i].threads)] = 1;
    for (int f = 0; f < PW_FORMAT_COUNT; ++f) {
        for (int t = 0; t < r->nmachine; ++t) {
            if (!have[f][t]) continue;
            fprintf(g, "$d%d_%d << EOD\n", f, t);
            for (size_t i = 0; i < r->count; ++i) {
                const pw_bench_result *c = &r->cases[i];
                if (charted(c) && (int)c->format == f && thread_index(r, c->threads) == t)
                    fprintf(g, "%.6g %.6g\n", intensity(c), c->gflops);
            }
            fprintf(g, "EOD\n");
        }
    }
    fprintf(g, "plot ");
    const char *sep = "";
    for (int t = 0; t < r->nmachine; ++t) {
        const pw_bench_machine *m = &r->machine[t];
        fprintf(g, "%sroof%d(x) with lines dt 2 lw 2 lc rgb '%s' title 'roof, %d thread%s: %.1f GB/s, "
                   "%.0f int8 GOP/s (%s)'",
                sep, t, colours[t % NCOLOURS], m->threads, m->threads == 1 ? "" : "s", m->read_gbps,
                m->int8_gops, m->peak_isa);
        sep = ", \\\n     ";
    }
    int series = 0;
    for (int f = 0; f < PW_FORMAT_COUNT; ++f) {
        int shown = 0;
        for (int t = 0; t < r->nmachine; ++t) {
            if (!have[f][t]) continue;
            fprintf(g, "%s$d%d_%d using 1:2 with points pt %d ps 1.4 lc rgb '%s' title '%s, %d thread%s'",
                    sep, f, t, 4 + 2 * (series % 6), colours[t % NCOLOURS],
                    pw_format_get((pw_format)f)->name, r->machine[t].threads,
                    r->machine[t].threads == 1 ? "" : "s");
            shown = 1;
        }
        series += shown;
    }
    fprintf(g, "\n");
}

int pw_bench_plot_check(const char *path) {
    if (strpbrk(path, "'\"\\`$\n") != NULL)
        return pw_cli_fail("bench", "--plot: the path may not contain quotes, backslashes, '$' or "
                           "newlines (gnuplot reads it inside quotes): %s", path);
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
        return pw_cli_fail("bench", "--plot: '%s' is %s, not a regular file; it is left alone (name "
                           "a regular file)", path, pw_file_kind_name(st.st_mode));
    if (system("command -v gnuplot >/dev/null 2>&1") != 0)
        return pw_cli_fail("bench", "--plot needs gnuplot on PATH (Debian: apt-get install gnuplot-nox)");
    return PW_EXIT_OK;
}

int pw_bench_plot(const pw_bench_results *r, const char *path) {
    if (r->count == 0)
        return pw_cli_fail("bench", "--plot %s: no block-format matmul case to plot", path);
    int rc = pw_bench_plot_check(path);
    if (rc != PW_EXIT_OK) return rc;
    /* gnuplot writes a temporary beside the chart (file_io.h), renamed over it when gnuplot
     * succeeded: a failure leaves the old chart, and a path that is not a regular file
     * (a device, a FIFO, a folder) is refused, never removed or replaced. */
    pw_context *ctx = pw_cli_context("bench", 0, 1);
    if (ctx == NULL) return PW_EXIT_USAGE;
    pw_output *f = NULL;
    if (pw_output_open(ctx, path, 0, NULL, 0, &f) != PW_OK) {
        rc = pw_cli_fail("bench", "--plot: %s", pw_context_message(ctx));
        pw_context_destroy(ctx);
        return rc;
    }
    if (strpbrk(pw_output_path(f), "'\"\\`$\n") != NULL)
        rc = pw_cli_fail("bench", "--plot %s: the folder's real path '%s' has a quote, backslash, '$' "
                         "or newline, which gnuplot cannot take", path, pw_output_destination(f));
    /* gnuplot reads the script from a pipe; if it dies early, writing must not kill us. */
    void (*old)(int) = signal(SIGPIPE, SIG_IGN);
    FILE *g = rc == PW_EXIT_OK ? popen("gnuplot", "w") : NULL;
    int status = -1;
    if (g != NULL) {
        write_script(g, r, pw_output_path(f));
        status = pclose(g);
    }
    signal(SIGPIPE, old);
    struct stat st;
    if (rc == PW_EXIT_OK && g == NULL)
        rc = pw_cli_fail("bench", "--plot: cannot start gnuplot");
    else if (rc == PW_EXIT_OK && (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0))
        rc = pw_cli_fail("bench", "--plot %s: gnuplot failed (status %d; its messages are above)",
                         path, status);
    else if (rc == PW_EXIT_OK && (stat(pw_output_path(f), &st) != 0 || st.st_size == 0))
        rc = pw_cli_fail("bench", "--plot %s: gnuplot wrote no chart", path);
    else if (rc == PW_EXIT_OK && pw_output_commit(ctx, f) != PW_OK)
        rc = pw_cli_fail("bench", "--plot: %s", pw_context_message(ctx));
    pw_output_close(f);
    pw_context_destroy(ctx);
    return rc;
}
