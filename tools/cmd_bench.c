/*
 * packwise bench: throughput measured as ratios in one run (DESIGN.md
 * "Performance method"). With no options, the default matmul suite (issue 4):
 * Q4_0, Q8_0, Q4_K, Q6_K at [out, in] = [4096, 4096], [11008, 4096],
 * [4096, 11008], n = 1, 16, 128, on 1 thread and on every online core. Each
 * section lives in its own bench_*.c file; --decode runs the decode section,
 * --formats QC4W / QB4W add the raw int4 weights' section (bench_qc4w.c).
 */
#include "cli.h"
#include "bench.h"
#include "bench_qc4w.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define USAGE                                                                                     \
    "usage: packwise bench [--formats F,..] [--shapes OUTxIN,..] [--batch N,..] "                 \
    "[--threads T,..] [--policy compact|fastest|in_place,..] [--layout canonical|kernel] "    \
    "[--kernel K] [--json] [--plot FILE.svg] [--quick] [--decode] [--step] [--spin-wait]"

static const pw_format default_formats[] = {PW_FORMAT_Q4_0, PW_FORMAT_Q8_0, PW_FORMAT_Q4_K,
                                            PW_FORMAT_Q6_K};

/* Split a comma list into at most PW_BENCH_MAX_LIST tokens (modifies s). */
static int split(char *s, char **tok, const char *opt) {
    int n = 0;
    for (char *t = strtok(s, ","); t; t = strtok(NULL, ",")) {
        if (n == PW_BENCH_MAX_LIST)
            return -pw_cli_fail("bench", "%s: at most %d entries", opt, PW_BENCH_MAX_LIST);
        tok[n++] = t;
    }
    if (n == 0) return -pw_cli_fail("bench", "%s: empty list", opt);
    return n;
}

static int parse_count(const char *s, long long lo, long long hi, const char *opt, long long *v) {
    if (pw_cli_parse_i64(s, v) != 0 || *v < lo || *v > hi)
        return pw_cli_fail("bench", "%s: '%s' is not an integer in [%lld, %lld]", opt, s, lo, hi);
    return PW_EXIT_OK;
}

static int parse_list(const char *opt, const char *arg, pw_bench_options *o) {
    char buf[1024];
    if (strlen(arg) >= sizeof buf) return pw_cli_fail("bench", "%s: list too long", opt);
    strcpy(buf, arg);
    char *tok[PW_BENCH_MAX_LIST];
    const int n = split(buf, tok, opt);
    if (n < 0) return -n;
    for (int i = 0; i < n; ++i) {
        long long v = 0, w = 0;
        if (strcmp(opt, "--formats") == 0) {
            pw_format f;
            if (strcasecmp(tok[i], "QC4W") == 0)
                o->qc4w = 1; /* not a block format: the int4 weights' own section */
            else if (strcasecmp(tok[i], "QB4W") == 0)
                o->qb4w = 1;
            else if (pw_format_from_name(tok[i], &f) != PW_OK)
                return pw_cli_fail("bench", "--formats: unknown format '%s' (packwise formats "
                                   "lists them; QC4W and QB4W are the raw int4 weights)", tok[i]);
            else
                o->formats_mask |= 1ull << f;
        } else if (strcmp(opt, "--shapes") == 0) {
            char *x = strchr(tok[i], 'x');
            if (x == NULL) return pw_cli_fail("bench", "--shapes: '%s' is not OUTxIN", tok[i]);
            *x = '\0';
            if (parse_count(tok[i], 1, 1ll << 24, opt, &v) || parse_count(x + 1, 1, 1ll << 24, opt, &w))
                return PW_EXIT_USAGE;
            o->shapes[i][0] = v;
            o->shapes[i][1] = w;
            o->nshapes = n;
        } else if (strcmp(opt, "--policy") == 0) {
            if (i >= 3 || pw_memory_policy_from_name(tok[i], &o->policies[i]) != PW_OK)
                return pw_cli_fail("bench", "--policy: '%s' is not compact, fastest or in_place (at "
                                   "most three)", tok[i]);
            o->npolicies = n;
        } else if (strcmp(opt, "--batch") == 0) {
            if (parse_count(tok[i], 1, 1 << 16, opt, &v)) return PW_EXIT_USAGE;
            o->batch[i] = v;
            o->nbatch = n;
        } else {
            if (parse_count(tok[i], 0, 1024, opt, &v)) return PW_EXIT_USAGE;
            o->threads[i] = (int)v;
            o->nthreads = n;
        }
    }
    return PW_EXIT_OK;
}

/* Defaults for what the options left out; 0 threads means every online core. */
static int complete(pw_bench_options *o) {
    const int qb4w_kernel = o->kernel != NULL && strncasecmp(o->kernel, "qb4w", 4) == 0;
    if (o->kernel != NULL && (strncasecmp(o->kernel, "qc4w", 4) == 0 || qb4w_kernel)) {
        if (o->formats_mask != 0 || (qb4w_kernel ? o->qc4w : o->qb4w))
            return pw_cli_fail("bench", "--kernel %s is a %s kernel; drop --formats or list just "
                               "%s", o->kernel, qb4w_kernel ? "QB4W" : "QC4W", qb4w_kernel ? "QB4W" : "QC4W");
        if (qb4w_kernel) o->qb4w = 1;
        else o->qc4w = 1;
    } else if (o->kernel != NULL) {
        if (o->qc4w || o->qb4w)
            return pw_cli_fail("bench", "--kernel %s does not run %s; drop it from --formats",
                               o->kernel, o->qc4w ? "QC4W" : "QB4W");
        const pw_kernel_info *k = NULL;
        for (size_t i = 0; i < pw_kernel_count() && k == NULL; ++i)
            if (strcasecmp(pw_kernel_info_get(i)->name, o->kernel) == 0) k = pw_kernel_info_get(i);
        if (k == NULL)
            return pw_cli_fail("bench", "--kernel: no kernel named '%s' in this build (packwise "
                               "formats lists them)", o->kernel);
        if (o->formats_mask != 0 && o->formats_mask != 1ull << k->format)
            return pw_cli_fail("bench", "--kernel %s reads %s weights only; drop --formats or "
                               "list just %s", k->name, pw_format_get(k->format)->name,
                               pw_format_get(k->format)->name);
        o->kernel = k->name;
        o->formats_mask = 1ull << k->format;
    }
    if (o->formats_mask == 0 && !o->qc4w && !o->qb4w && !o->step) { /* --step has its own default set */
        if (o->decode) o->formats_mask = (1ull << PW_FORMAT_COUNT) - 1;
        for (size_t i = 0; !o->decode && i < sizeof default_formats / sizeof default_formats[0]; ++i)
            o->formats_mask |= 1ull << default_formats[i];
    }
    if (o->nshapes == 0) {
        static const int64_t full[3][2] = {{4096, 4096}, {11008, 4096}, {4096, 11008}};
        /* Quick: an edge tile of rows (40 = 2.5 tiles of 16) and two block sizes of in. */
        static const int64_t quick[2][2] = {{64, 512}, {40, 768}};
        o->nshapes = o->quick ? 2 : 3;
        memcpy(o->shapes, o->quick ? quick : full, sizeof(int64_t) * 2 * (size_t)o->nshapes);
    }
    if (o->nbatch == 0) {
        static const int64_t full[3] = {1, 16, 128}, quick[2] = {1, 5};
        o->nbatch = o->quick ? 2 : 3;
        memcpy(o->batch, o->quick ? quick : full, sizeof(int64_t) * (size_t)o->nbatch);
    }
    if (o->nthreads == 0) {
        o->threads[0] = 1;
        o->threads[1] = 0;
        o->nthreads = 2;
    }
    if (o->npolicies == 0) {
        o->policies[0] = PW_MEMORY_COMPACT;
        o->npolicies = 1;
    }
    const long online = sysconf(_SC_NPROCESSORS_ONLN);
    int kept = 0;
    for (int i = 0; i < o->nthreads; ++i) {
        const int t = o->threads[i] ? o->threads[i] : (online > 0 ? (int)online : 1);
        int dup = 0;
        for (int j = 0; j < kept; ++j) dup |= o->threads[j] == t;
        if (!dup) o->threads[kept++] = t;
    }
    o->nthreads = kept;
    return PW_EXIT_OK;
}

/* The options of argv into o: PW_BENCH_RUN, or the exit code (usage after --help, or a
 * one-line message). Opens nothing and measures nothing. */
enum { PW_BENCH_RUN = -1 };
static int bench_parse(int argc, char **argv, pw_bench_options *o_out) {
    pw_bench_options o;
    memset(&o, 0, sizeof o);
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        const int has_value = i + 1 < argc;
        int rc = PW_EXIT_OK;
        if (strcmp(a, "--json") == 0) {
            o.json = 1;
        } else if (strcmp(a, "--quick") == 0) {
            o.quick = 1;
        } else if (strcmp(a, "--decode") == 0) {
            o.decode = 1;
        } else if (strcmp(a, "--step") == 0) {
            o.step = 1;
        } else if (strcmp(a, "--spin-wait") == 0) {
            o.spin_wait = 1;
        } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            printf("%s\n", USAGE);
            return PW_EXIT_OK;
        } else if (strcmp(a, "--kernel") == 0 && has_value) {
            o.kernel = argv[++i];
        } else if (strcmp(a, "--layout") == 0 && has_value) {
            const char *l = argv[++i];
            if (strcmp(l, "canonical") == 0 || strcmp(l, "row_major") == 0) o.kernel_order = 0;
            else if (strcmp(l, "kernel") == 0 || strcmp(l, "input_block_major") == 0) o.kernel_order = 1;
            else rc = pw_cli_fail("bench", "--layout: '%s' is not canonical or kernel", l);
        } else if (strcmp(a, "--plot") == 0 && has_value) {
            o.plot = argv[++i];
        } else if ((strcmp(a, "--formats") == 0 || strcmp(a, "--shapes") == 0 ||
                    strcmp(a, "--batch") == 0 || strcmp(a, "--threads") == 0 ||
                    strcmp(a, "--policy") == 0) &&
                   has_value) {
            rc = parse_list(a, argv[++i], &o);
        } else {
            rc = pw_cli_fail("bench", "unknown option or missing value '%s' (%s)", a, USAGE);
        }
        if (rc != PW_EXIT_OK) return rc;
    }
    const int rc = complete(&o);
    if (rc != PW_EXIT_OK) return rc;
    if (o.spin_wait && !o.step)
        return pw_cli_fail("bench", "--spin-wait applies to --step (the matmul cases read their "
                                    "bandwidth ceiling between samples, which spinning workers disturb)");
    if (o.decode && o.plot)
        return pw_cli_fail("bench", "--plot charts the matmul suite; drop --decode");
    if (o.step && (o.decode || o.plot || o.kernel))
        return pw_cli_fail("bench", "--step times whole layers: drop --decode, --plot and --kernel");
    if (o_out != NULL) *o_out = o;
    return PW_BENCH_RUN;
}

int pw_cmd_bench_parse(int argc, char **argv) {
    const int rc = bench_parse(argc, argv, NULL);
    return rc == PW_BENCH_RUN ? PW_CMD_BENCH_RUN : rc;
}

int pw_cmd_bench(int argc, char **argv) {
    pw_bench_options o;
    int rc = bench_parse(argc, argv, &o);
    if (rc != PW_BENCH_RUN) return rc;
    if (o.plot && (rc = pw_bench_plot_check(o.plot)) != PW_EXIT_OK) return rc;
    rc = PW_EXIT_OK;
    if (o.decode) {
        pw_context *ctx = pw_cli_context("bench", 0, 1);
        if (ctx == NULL) return PW_EXIT_USAGE;
        rc = pw_bench_decode(ctx, &o);
        pw_context_destroy(ctx);
        return rc;
    }
    pw_bench_results r;
    memset(&r, 0, sizeof r);
    if (o.step) {
        rc = pw_bench_step(&o, &r);
        free(r.cases);
        return rc;
    }
    if (o.formats_mask != 0) {
        rc = pw_bench_matmul(&o, &r);
        if (rc == PW_EXIT_OK && !o.json) pw_bench_print_table(&r);
    }
    /* QC4W reuses the machine figures measured above (or measures its own). */
    if (rc == PW_EXIT_OK && (o.qc4w || o.qb4w)) rc = pw_bench_qc4w(&o, &r);
    if (rc == PW_EXIT_OK && o.plot) rc = pw_bench_plot(&r, o.plot);
    free(r.cases);
    return rc;
}
