/*
 * How to use packwise in an engine: open a GGUF with its weights labelled
 * [out, in], prepare every 2-D weight once at load (from a weights-cache file
 * made by `packwise prepack` when there is one), run x * W^T for a few inputs
 * with the trace printed, and free everything.
 *
 *   gguf_matmul MODEL.gguf [INPUTS [MODEL.pwc]]
 *
 * Each weight holds one form for every batch size (the compact memory
 * policy): its packed form at the file's size, or the file's own bytes where
 * kernels read them in place. Without a cache, preparing a weight that needs a
 * packed form packs it (one adapter event) and hands the file's pages back;
 * with a matching cache nothing is packed (a cache event per weight says it
 * was served from the file). The decode steps pack nothing.
 */
#include <packwise.h>

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void print_event(void *user, const pw_trace_event *e) {
    (void)user;
    char line[512];
    pw_trace_format(e, line, sizeof line);
    printf("  %s\n", line);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s MODEL.gguf [INPUTS [MODEL.pwc]]\n", argv[0]);
        return 2;
    }
    const int inputs = argc > 2 ? atoi(argv[2]) : 4;
    pw_context_options co;
    pw_context_options_init(&co);
    co.trace = print_event; /* the library never prints: we do, from its events */
    pw_context *ctx = NULL;
    if (pw_context_create(&co, &ctx) != PW_OK) {
        fprintf(stderr, "%s\n", pw_last_create_message());
        return 2;
    }
    pw_gguf_open_options go;
    pw_gguf_open_options_init(&go);
    go.orientation = PW_ORIENT_OUT_IN; /* 2-D weights as [out, in]; the bytes are untouched */
    pw_gguf *g = NULL;
    pw_status st = pw_gguf_open(ctx, argv[1], &go, &g);
    if (st != PW_OK) {
        fprintf(stderr, "%s: %s\n", pw_status_str(st), pw_context_message(ctx));
        pw_context_destroy(ctx);
        return 2;
    }
    /* The cache is optional: use it when the file is there (pw_weight checks every entry). */
    pw_cache *cache = NULL;
    if (argc > 3 && access(argv[3], R_OK) == 0 && pw_cache_open(ctx, argv[3], &cache) != PW_OK)
        fprintf(stderr, "ignoring cache %s: %s\n", argv[3], pw_context_message(ctx));
    int rc = 0;
    const int64_t count = pw_gguf_tensor_count(g);
    pw_weight **weights = calloc((size_t)count, sizeof *weights);
    /* Prepare every 2-D weight once, at load. */
    for (int64_t i = 0; i < count && rc == 0; ++i) {
        pw_gguf_tensor_info info;
        pw_view w;
        if (pw_gguf_tensor_info_get(ctx, g, i, &info) != PW_OK || !info.format_known || info.rank != 2)
            continue;
        pw_weight_options wo;
        pw_weight_options_init(&wo);
        wo.cache = cache;
        if (pw_gguf_tensor_view(ctx, g, i, &w) != PW_OK || pw_weight_create(ctx, &w, &wo, &weights[i]) != PW_OK ||
            pw_weight_prepare(ctx, weights[i]) != PW_OK) {
            fprintf(stderr, "%s: %s\n", info.name, pw_context_message(ctx));
            rc = 1;
        }
    }
    /* A few decode steps: each step multiplies a batch of 2 rows by every weight. */
    for (int step = 0; step < inputs && rc == 0; ++step) {
        printf("step %d\n", step);
        for (int64_t i = 0; i < count && rc == 0; ++i) {
            if (weights[i] == NULL) continue;
            pw_gguf_tensor_info info;
            pw_gguf_tensor_info_get(ctx, g, i, &info);
            const int64_t out = info.shape[0], in = info.shape[1], n = 2;
            float *x = malloc(sizeof(float) * (size_t)(n * in)), *y = malloc(sizeof(float) * (size_t)(n * out));
            for (int64_t k = 0; k < n * in; ++k) x[k] = (float)((k * 7 + step) % 13) / 13.0f - 0.5f;
            if (pw_matmul_wt(ctx, x, n, weights[i], y) != PW_OK) {
                fprintf(stderr, "%s: %s\n", info.name, pw_context_message(ctx));
                rc = 1;
            }
            free(x);
            free(y);
        }
    }
    for (int64_t i = 0; i < count; ++i) pw_weight_destroy(weights[i]);
    free(weights);
    pw_cache_close(cache); /* after every weight served from it */
    pw_gguf_close(g);      /* after every weight that borrows its mapping */
    pw_context_destroy(ctx);
    return rc;
}
