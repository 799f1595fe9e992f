/*
 * packwise synth -o FILE.gguf [--layers L] [--dim D] [--ffn F] [--formats F,..] [--seed S]
 * Writes a GGUF of random weights at LLM shapes, for load and cache measurements:
 * per layer, attn_q/k/v/output [D, D] and ffn_gate/up [F, D], ffn_down [D, F]
 * (labelled [out, in]; written in ne order), formats assigned round-robin from
 * --formats (default Q4_0,Q4_K,Q8_0). Blocks are random but valid: every scale
 * is a small finite fp16, every quant field random. Defaults (D = 4096,
 * F = 11008, 8 layers) give about 1.1 GiB of weights.
 */
#include "cli_args.h"


#include <stdlib.h>
#include <string.h>


static const char HELP[] =
    "usage: packwise synth -o FILE.gguf [--layers L] [--dim D] [--ffn F] [--formats F,..] [--seed S]\n"
    "A GGUF of random but valid weights at LLM shapes, for load and cache measurements: per\n"
    "layer attn_q/k/v/output [D, D], ffn_gate/up [F, D], ffn_down [D, F], formats round-robin\n"
    "from --formats (at most 16 of Q4_0, Q4_K, Q5_K, Q6_K, Q8_0, IQ4_NL; default\n"
    "Q4_0,Q4_K,Q8_0). L, D, F, S: 1..1048576 (defaults 8, 4096, 11008, 1).\n"
    PW_CLI_HELP_OUTPUT_REGULAR;

/* --formats: a comma list (empty entries skipped) of the formats synth can fill. */
static int parse_formats(const char *list, pw_cli_synth_args *a) {
    a->nformats = 0;
    for (const char *t = list; *t != '\0';) {
        const size_t n = strcspn(t, ",");
        if (n > 0) {
            char name[32];
            pw_format f = PW_FORMAT_COUNT;
            if (n < sizeof name) {
                memcpy(name, t, n);
                name[n] = '\0';
                if (pw_format_from_name(name, &f) != PW_OK) f = PW_FORMAT_COUNT;
            }
            if (f != PW_FORMAT_Q4_0 && f != PW_FORMAT_Q4_K && f != PW_FORMAT_Q8_0 && f != PW_FORMAT_Q6_K &&
                f != PW_FORMAT_Q5_K && f != PW_FORMAT_IQ4_NL)
                return pw_cli_fail("synth", "--formats: '%.*s' is not one of Q4_0, Q4_K, Q5_K, Q6_K, Q8_0, "
                                            "IQ4_NL", (int)n, t);
            if (a->nformats == PW_CLI_SYNTH_MAX_FORMATS)
                return pw_cli_fail("synth", "--formats: at most %d entries", PW_CLI_SYNTH_MAX_FORMATS);
            a->formats[a->nformats++] = f;
        }
        t += n + (t[n] == ',');
    }
    if (a->nformats == 0) return pw_cli_fail("synth", "--formats is empty");
    return PW_EXIT_OK;
}

int pw_cli_synth_parse(int argc, char **argv, pw_cli_synth_args *a) {
    memset(a, 0, sizeof *a);
    const char *formats = "Q4_0,Q4_K,Q8_0";
    a->layers = 8;
    a->dim = 4096;
    a->ffn = 11008;
    a->seed = 1;
    for (int i = 1; i < argc; ++i) {
        const int has = i + 1 < argc;
        long long *target = NULL;
        if (pw_cli_is_help(argv[i])) return pw_cli_help(HELP);
        else if (strcmp(argv[i], "-o") == 0 && has) a->out = argv[++i];
        else if (strcmp(argv[i], "--formats") == 0 && has) formats = argv[++i];
        else if (strcmp(argv[i], "--layers") == 0 && has) target = &a->layers;
        else if (strcmp(argv[i], "--dim") == 0 && has) target = &a->dim;
        else if (strcmp(argv[i], "--ffn") == 0 && has) target = &a->ffn;
        else if (strcmp(argv[i], "--seed") == 0 && has) target = &a->seed;
        else return pw_cli_fail("synth", "unexpected argument '%s'", argv[i]);
        if (target && (pw_cli_parse_i64(argv[++i], target) != 0 || *target < 1 || *target > (1 << 20)))
            return pw_cli_fail("synth", "%s: '%s' is not 1..1048576", argv[i - 1], argv[i]);
    }
    if (a->out == NULL)
        return pw_cli_fail("synth", "usage: packwise synth -o FILE.gguf [--layers L] [--dim D] [--ffn F] "
                                    "[--formats F,..] [--seed S]");
    return parse_formats(formats, a) == PW_EXIT_OK ? PW_CLI_RUN : PW_EXIT_USAGE;
}

int pw_cli_synth_run(const pw_cli_synth_args *a) {
    const char *out = a->out;
    const long long layers = a->layers, dim = a->dim, ffn = a->ffn, seed = a->seed;
    const pw_format *fl = a->formats;
    const int nf = a->nformats;
    pw_context *ctx = pw_cli_context("synth", 0, 1);
    if (ctx == NULL) return PW_EXIT_USAGE;
    pw_gguf_writer *w = NULL;
    pw_status st = pw_gguf_writer_create(ctx, &w);
    static const char *names[] = {"attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down"};
    const int n_per = 7;
    uint8_t **bufs = calloc((size_t)(layers * n_per), sizeof *bufs);
    /* A refusal found here is printed here; `printed` keeps it to one line. */
    int printed = 0;
    if (bufs == NULL) {
        printed = pw_cli_fail("synth", "out of memory");
        st = PW_ERR_OUT_OF_MEMORY;
    }
    uint64_t s = (uint64_t)seed, total = 0;
    if (st == PW_OK) st = pw_gguf_writer_set_string(w, "general.architecture", "packwise-synth", 14);
    int k = 0;
    for (long long l = 0; l < layers && st == PW_OK; ++l) {
        for (int t = 0; t < n_per && st == PW_OK; ++t, ++k) {
            const pw_format f = fl[k % nf];
            const int64_t o = t >= 4 && t < 6 ? ffn : dim, in = t == 6 ? ffn : dim;
            const pw_format_info *fi = pw_format_get(f);
            if (in % fi->block_size != 0) {
                printed = pw_cli_fail("synth", "%s needs in (%lld) to be a multiple of %d", fi->name,
                                      (long long)in, (int)fi->block_size);
                st = PW_ERR_SHAPE;
                break;
            }
            const uint64_t blocks = (uint64_t)(o * in / fi->block_size), bytes = blocks * (uint64_t)fi->block_bytes;
            bufs[k] = malloc((size_t)bytes);
            if (bufs[k] == NULL) {
                printed = pw_cli_fail("synth", "out of memory for %s (%llu bytes)", names[t],
                                      (unsigned long long)bytes);
                st = PW_ERR_OUT_OF_MEMORY;
                break;
            }
            st = pw_format_synthesize(ctx, f, bufs[k], (size_t)blocks, s + 0x9e3779b97f4a7c15ull * (uint64_t)k);
            if (st != PW_OK) break;
            char name[64];
            snprintf(name, sizeof name, "blk.%lld.%s.weight", l, names[t]);
            const int64_t ne[2] = {in, o};
            st = pw_gguf_writer_add_tensor(w, name, f, 2, ne, bufs[k], bytes);
            total += bytes;
        }
    }
    if (st == PW_OK) st = pw_gguf_writer_write(w, out);
    int rc = PW_EXIT_OK;
    if (st != PW_OK) rc = printed ? PW_EXIT_USAGE : pw_cli_fail_status("synth", ctx, st, out);
    else printf("%s: %lld tensors, %.2f GiB of weights\n", out, (long long)k, (double)total / (1u << 30));
    for (long long i = 0; bufs != NULL && i < layers * n_per; ++i) free(bufs[i]);
    free(bufs);
    pw_gguf_writer_destroy(w);
    pw_context_destroy(ctx);
    return rc;
}
