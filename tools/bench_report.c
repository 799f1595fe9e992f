/* Output of the matmul suite: JSON lines (DESIGN.md "command-line contract") and the table. */
#include "bench.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* JSON has no inf or nan: a figure that could not be measured is written as 0. */
static double json_num(double v) { return isfinite(v) ? v : 0.0; }

void pw_bench_print_machine_json(const pw_bench_machine *m) {
    printf("{\"kind\":\"bandwidth\",\"threads\":%d,\"gbps\":%.6g,\"read_bytes\":%" PRIu64
           ",\"clean_samples\":%d}\n",
           m->threads, json_num(m->read_gbps), m->read_bytes, m->read_clean);
    printf("{\"kind\":\"int8_peak\",\"threads\":%d,\"gops\":%.6g,\"isa\":\"%s\",\"clean_samples\":%d}\n",
           m->threads, json_num(m->int8_gops), m->peak_isa, m->peak_clean);
}

void pw_bench_print_ceiling_json(double ceiling_gbps, int invalid, const char *way,
                                 double machine_fraction, const pw_bench_ways *ways) {
    printf(",\"ceiling_gbps\":%.6g,\"ceiling_valid\":%s,\"ceiling_way\":\"%s\","
           "\"machine_fraction\":%.6g,\"ceiling_ways\":{",
           json_num(ceiling_gbps), invalid ? "false" : "true", way != NULL ? way : "none",
           json_num(machine_fraction));
    for (int w = 0; w < PW_BENCH_CEILING_WAYS; ++w)
        printf("%s\"%s\":%.6g", w > 0 ? "," : "", pw_bench_ceiling_way_name(w), json_num(ways->gbps[w]));
    printf("}");
}

void pw_bench_print_case_json(const pw_bench_result *c) {
    /* The fields up to "fraction" are the contract, in this order; the rest are extras. */
    printf("{\"kind\":\"%s\",\"format\":\"%s\",\"kernel\":\"%s\",\"out\":%" PRId64 ",\"in\":%" PRId64
           ",\"n\":%" PRId64 ",\"threads\":%d,\"median_s\":%.6e,\"gflops\":%.6g,"
           "\"weight_gbps\":%.6g,\"fraction\":%.6g",
           c->gemm ? "gemm" : "gemv", pw_format_get(c->format)->name, c->kernel, c->out, c->in,
           c->n, c->threads, json_num(c->median_s), json_num(c->gflops), json_num(c->weight_gbps),
           json_num(c->fraction));
    printf(",\"reps\":%d,\"clean_reps\":%d,\"cold\":%s,\"weight_bytes\":%" PRIu64, c->reps,
           c->clean_reps, c->cold ? "true" : "false", c->weight_bytes);
    printf(",\"policy\":\"%s\",\"packed_bytes\":%" PRIu64 ",\"layout\":\"%s\"",
           pw_memory_policy_name(c->policy), c->packed_bytes, c->layout);
    if (!c->gemm)
        pw_bench_print_ceiling_json(c->ceiling_gbps, c->ceiling_invalid, c->ceiling_way,
                                    c->machine_fraction, &c->ceiling_ways);
    else
        printf(",\"peak_gops\":%.6g,\"peak_valid\":%s,\"machine_fraction\":%.6g", json_num(c->peak_gops),
               c->ceiling_invalid ? "false" : "true", json_num(c->machine_fraction));
    if (c->pack_s > 0) printf(",\"pack_s\":%.6e", c->pack_s);
    if (c->ref_ratio > 0)
        printf(",\"ref_kernel\":\"%s\",\"ref_ratio\":%.6g", c->ref_kernel, json_num(c->ref_ratio));
    if (c->f32_ratio > 0)
        printf(",\"f32_kernel\":\"%s\",\"f32_ratio\":%.6g", c->f32_kernel, json_num(c->f32_ratio));
    printf("}\n");
}

/* Whether cases a and b time the same product: kind, format, shape, batch and threads (the
 * policies of one weight). */
static int same_product(const pw_bench_result *a, const pw_bench_result *b) {
    return a->gemm == b->gemm && a->format == b->format && a->out == b->out && a->in == b->in &&
           a->n == b->n && a->threads == b->threads;
}

/* Case i's GFLOP/s over the fastest case of the same product in this run, or 0 where it
 * is the only one (the table's x_best). */
static double over_best(const pw_bench_results *r, size_t i) {
    double best = 0;
    int peers = 0;
    for (size_t j = 0; j < r->count; ++j)
        if (same_product(&r->cases[i], &r->cases[j])) {
            ++peers;
            if (r->cases[j].gflops > best) best = r->cases[j].gflops;
        }
    return peers > 1 && best > 0 ? r->cases[i].gflops / best : 0.0;
}

void pw_bench_print_table(const pw_bench_results *r) {
    printf("machine, measured in this run (context; the fractions are of each case's own ceiling, "
           "sampled between its runs: GEMV the same bytes read, ceiling in GB/s; GEMM the int8 peak "
           "loop, ceiling in GOP/s)");
    if (r->load_average >= 0) printf("; load average %.2f at the start", r->load_average);
    const char *tune = getenv("PACKWISE_TUNE"); /* the kernels' settings, when not the CPU's */
    if (tune != NULL && tune[0] != '\0') printf("; PACKWISE_TUNE=%.32s", tune);
    printf("\n");
    printf("%7s %10s %11s %11s  %-11s %s\n", "threads", "read_GB/s", "buffer_MiB", "int8_GOP/s",
           "peak_loop", "undisturbed samples (read, peak)");
    for (int i = 0; i < r->nmachine; ++i) {
        const pw_bench_machine *m = &r->machine[i];
        printf("%7d %10.2f %11.0f %11.1f  %-11s %d, %d\n", m->threads, m->read_gbps,
               (double)m->read_bytes / (1 << 20), m->int8_gops, m->peak_isa, m->read_clean,
               m->peak_clean);
    }
    printf("\n%-4s %-6s %-8s %-28s %6s %6s %4s %2s %11s %9s %8s %9s %14s %7s %7s %6s %8s %7s\n",
           "kind", "format", "policy", "kernel", "out", "in", "n", "T", "median_ms", "GFLOP/s", "GB/s",
           "ceiling", "fraction", "x_ref", "x_f32", "x_best", "pack_ms", "packed");
    int invalid = 0;
    int disturbed = 0;
    for (int i = 0; i < r->nmachine; ++i)
        if (r->machine[i].read_clean == 0 || r->machine[i].peak_clean == 0)
            printf("(threads=%d: a machine figure comes from disturbed samples only, so it is low "
                   "and the fractions at that thread count are high)\n",
                   r->machine[i].threads);
    for (size_t i = 0; i < r->count; ++i) {
        const pw_bench_result *c = &r->cases[i];
        char frac[32], xref[16] = "-", xf32[16] = "-", xbest[16] = "-", pack[16] = "-";
        snprintf(frac, sizeof frac, "%5.1f%% %s%s", 100.0 * c->fraction, c->gemm ? "int8" : "bw",
                 c->ceiling_invalid ? "!" : "");
        invalid += c->ceiling_invalid;
        char ceil[16] = "-";
        if (!c->gemm) snprintf(ceil, sizeof ceil, "%.2f", c->ceiling_gbps);
        else snprintf(ceil, sizeof ceil, "%.0f", c->peak_gops);
        if (c->ref_ratio > 0) snprintf(xref, sizeof xref, "%.1f", c->ref_ratio);
        if (c->f32_ratio > 0) snprintf(xf32, sizeof xf32, "%.2f", c->f32_ratio);
        const double xb = over_best(r, i);
        if (xb > 0) snprintf(xbest, sizeof xbest, "%.2f", xb);
        if (c->pack_s > 0) snprintf(pack, sizeof pack, "%.1f", 1e3 * c->pack_s);
        disturbed += c->clean_reps == 0;
        char packed[16];
        snprintf(packed, sizeof packed, "%.2fx", (double)c->packed_bytes / (double)c->weight_bytes);
        printf("%-4s %-6s %-8s %-28s %6" PRId64 " %6" PRId64 " %4" PRId64 " %2d %10.3f%c %9.2f %8.2f "
               "%9s %14s %7s %7s %6s %8s %7s\n",
               c->gemm ? "gemm" : "gemv", pw_format_get(c->format)->name,
               pw_memory_policy_name(c->policy), c->kernel, c->out, c->in, c->n, c->threads,
               1e3 * c->median_s, c->clean_reps ? ' ' : '*', c->gflops, c->weight_gbps, ceil, frac, xref,
               xf32, xbest, pack, packed);
    }
    if (invalid)
        printf("! above %.0f%% of its ceiling (GEMV: the same bytes streamed in the same run; GEMM: "
               "the int8 peak loop): that ceiling was mismeasured, and the fraction is not a result\n",
               100.0 * PW_BENCH_CEILING_SLACK);
    if (disturbed)
        printf("* no run of this case kept its threads on a CPU 80%% of the time (a loaded machine, "
               "or work that does not spread over the threads): its median is of disturbed runs\n");
    printf("\n%zu cases in %.1f s (GEMV cold: weights flushed before each run; GEMM warm, packing "
           "excluded; x_ref, x_f32: GFLOP/s over the reference kernel and the f32 path; x_best: over the "
           "fastest case of the same format, shape, n and threads in this run, where several "
           "policies timed it (with --layout kernel, in_place reads the kernel-order bytes as they are); "
           "packed: bytes of the packed forms the weight holds over its own bytes)\n",
           r->count, r->elapsed_s);
}
