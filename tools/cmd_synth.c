/*
 * packwise synth -o FILE.gguf [--layers L] [--dim D] [--ffn F] [--formats F,..] [--seed S]
 * Writes a GGUF of random weights at LLM shapes, for load and cache measurements:
 * per layer, attn_q/k/v/output [D, D] and ffn_gate/up [F, D], ffn_down [D, F]
 * (labelled [out, in]; written in ne order), formats assigned round-robin from
 * --formats (default Q4_0,Q4_K,Q8_0). Blocks are random but valid: every scale
 * is a small finite fp16, every quant field random. Defaults (D = 4096,
 * F = 11008, 8 layers) give about 1.1 GiB of weights.
 */
#include "cli.h"

#include "format/blocks.h"

#include <stdlib.h>
#include <string.h>

static uint64_t next(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Random bytes, then every scale field set to a small positive fp16. */
static void fill_blocks(pw_format f, uint8_t *p, uint64_t blocks, uint64_t *seed) {
    const pw_format_info *fi = pw_format_get(f);
    const uint64_t bytes = blocks * (uint64_t)fi->block_bytes;
    for (uint64_t i = 0; i + 8 <= bytes; i += 8) {
        const uint64_t v = next(seed);
        memcpy(p + i, &v, 8);
    }
    for (uint64_t i = bytes & ~(uint64_t)7; i < bytes; ++i) p[i] = (uint8_t)next(seed);
    for (uint64_t b = 0; b < blocks; ++b) {
        uint8_t *blk = p + b * (uint64_t)fi->block_bytes;
        const uint16_t d = pw__f32_to_f16(0.001f + (float)(next(seed) % 1000) * 1e-5f);
        switch (f) {
        case PW_FORMAT_Q4_0: ((pw__block_q4_0 *)(void *)blk)->d = d; break;
        case PW_FORMAT_Q8_0: ((pw__block_q8_0 *)(void *)blk)->d = d; break;
        case PW_FORMAT_Q4_K:
            ((pw__block_q4_K *)(void *)blk)->d = d;
            ((pw__block_q4_K *)(void *)blk)->dmin = d;
            break;
        case PW_FORMAT_Q6_K: ((pw__block_q6_K *)(void *)blk)->d = d; break;
        case PW_FORMAT_Q5_K:
            ((pw__block_q5_K *)(void *)blk)->d = d;
            ((pw__block_q5_K *)(void *)blk)->dmin = d;
            break;
        case PW_FORMAT_IQ4_NL: ((pw__block_iq4_nl *)(void *)blk)->d = d; break;
        default: break;
        }
    }
}

int pw_cmd_synth(int argc, char **argv) {
    const char *out = NULL, *formats = "Q4_0,Q4_K,Q8_0";
    long long layers = 8, dim = 4096, ffn = 11008, seed = 1;
    for (int i = 1; i < argc; ++i) {
        const int has = i + 1 < argc;
        long long *target = NULL;
        if (strcmp(argv[i], "-o") == 0 && has) out = argv[++i];
        else if (strcmp(argv[i], "--formats") == 0 && has) formats = argv[++i];
        else if (strcmp(argv[i], "--layers") == 0 && has) target = &layers;
        else if (strcmp(argv[i], "--dim") == 0 && has) target = &dim;
        else if (strcmp(argv[i], "--ffn") == 0 && has) target = &ffn;
        else if (strcmp(argv[i], "--seed") == 0 && has) target = &seed;
        else return pw_cli_fail("synth", "unexpected argument '%s'", argv[i]);
        if (target && (pw_cli_parse_i64(argv[++i], target) != 0 || *target < 1 || *target > (1 << 20)))
            return pw_cli_fail("synth", "%s: '%s' is not 1..1048576", argv[i - 1], argv[i]);
    }
    if (out == NULL)
        return pw_cli_fail("synth", "usage: packwise synth -o FILE.gguf [--layers L] [--dim D] [--ffn F] "
                                    "[--formats F,..] [--seed S]");
    pw_format fl[16];
    int nf = 0;
    char *list = strdup(formats);
    if (list == NULL) return pw_cli_fail("synth", "out of memory");
    for (char *t = strtok(list, ","); t && nf < 16; t = strtok(NULL, ",")) {
        if (pw_format_from_name(t, &fl[nf]) != PW_OK || (fl[nf] != PW_FORMAT_Q4_0 && fl[nf] != PW_FORMAT_Q4_K &&
                                                          fl[nf] != PW_FORMAT_Q8_0 && fl[nf] != PW_FORMAT_Q6_K &&
                                                          fl[nf] != PW_FORMAT_Q5_K && fl[nf] != PW_FORMAT_IQ4_NL)) {
            /* t points into list: print before freeing it */
            const int rc = pw_cli_fail("synth", "--formats: '%s' is not one of Q4_0, Q4_K, Q5_K, Q6_K, Q8_0, "
                                                "IQ4_NL", t);
            free(list);
            return rc;
        }
        ++nf;
    }
    free(list);
    if (nf == 0) return pw_cli_fail("synth", "--formats is empty");
    pw_context *ctx = pw_cli_context("synth", 0, 1);
    if (ctx == NULL) return PW_EXIT_USAGE;
    pw_gguf_writer *w = NULL;
    pw_status st = pw_gguf_writer_create(ctx, &w);
    static const char *names[] = {"attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down"};
    const int n_per = 7;
    uint8_t **bufs = calloc((size_t)(layers * n_per), sizeof *bufs);
    uint64_t s = (uint64_t)seed, total = 0;
    if (st == PW_OK) st = pw_gguf_writer_set_string(w, "general.architecture", "packwise-synth", 14);
    int k = 0;
    for (long long l = 0; l < layers && st == PW_OK; ++l) {
        for (int t = 0; t < n_per && st == PW_OK; ++t, ++k) {
            const pw_format f = fl[k % nf];
            const int64_t o = t >= 4 && t < 6 ? ffn : dim, in = t == 6 ? ffn : dim;
            const pw_format_info *fi = pw_format_get(f);
            if (in % fi->block_size != 0) {
                pw_cli_fail("synth", "%s needs in (%lld) to be a multiple of %d", fi->name, (long long)in,
                            (int)fi->block_size);
                st = PW_ERR_SHAPE;
                break;
            }
            const uint64_t blocks = (uint64_t)(o * in / fi->block_size), bytes = blocks * (uint64_t)fi->block_bytes;
            bufs[k] = malloc((size_t)bytes);
            if (bufs[k] == NULL) {
                st = PW_ERR_OUT_OF_MEMORY;
                break;
            }
            fill_blocks(f, bufs[k], blocks, &s);
            char name[64];
            snprintf(name, sizeof name, "blk.%lld.%s.weight", l, names[t]);
            const int64_t ne[2] = {in, o};
            st = pw_gguf_writer_add_tensor(w, name, f, 2, ne, bufs[k], bytes);
            total += bytes;
        }
    }
    if (st == PW_OK) st = pw_gguf_writer_write(w, out);
    int rc = PW_EXIT_OK;
    if (st != PW_OK) rc = pw_cli_fail_status("synth", ctx, st, out);
    else printf("%s: %lld tensors, %.2f GiB of weights\n", out, (long long)k, (double)total / (1u << 30));
    for (long long i = 0; i < layers * n_per; ++i) free(bufs[i]);
    free(bufs);
    pw_gguf_writer_destroy(w);
    pw_context_destroy(ctx);
    return rc;
}
