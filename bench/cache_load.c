/*
 * Load economics of a weights-cache file (issue: pack once, for good).
 *
 *   cache_load MODEL.gguf MODEL.pwc [N]
 *
 * Runs "open the model, prepare every 2-D weight, one x * W^T (N rows) each"
 * twice per mode: packing at load, and serving from the cache file. Reports the
 * open-plus-first-matmul wall time of each (the second, warm-page-cache run),
 * the adapter and cache events, and checks that every product is bit-identical
 * between the two modes. Exit 1 if a product differs or an adapter shows up
 * with the cache.
 */
#include <packwise.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct counts {
    int adapters, served, repacked;
} counts;

static void on_event(void *user, const pw_trace_event *e) {
    counts *c = user;
    if (e->kind == PW_TRACE_ADAPTER) c->adapters++;
    if (e->kind == PW_TRACE_CACHE) {
        if (strstr(e->reason, "served")) c->served++;
        else c->repacked++;
    }
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* One load: returns seconds; fills *out with the concatenated products (caller frees). */
static double load(const char *model, const char *cache_path, int64_t n, counts *c, float **out, size_t *len) {
    memset(c, 0, sizeof *c);
    pw_context_options o;
    pw_context_options_init(&o);
    o.trace = on_event;
    o.trace_user = c;
    pw_context *ctx = NULL;
    if (pw_context_create(&o, &ctx) != PW_OK) exit(2);
    const double t0 = now();
    pw_gguf_open_options go;
    pw_gguf_open_options_init(&go);
    go.orientation = PW_ORIENT_OUT_IN;
    pw_gguf *g = NULL;
    pw_cache *cache = NULL;
    if (pw_gguf_open(ctx, model, &go, &g) != PW_OK ||
        (cache_path && pw_cache_open(ctx, cache_path, &cache) != PW_OK)) {
        fprintf(stderr, "%s\n", pw_context_message(ctx));
        exit(2);
    }
    size_t cap = 0, used = 0;
    float *y = NULL;
    for (int64_t i = 0; i < pw_gguf_tensor_count(g); ++i) {
        pw_gguf_tensor_info info;
        pw_view w;
        if (pw_gguf_tensor_info_get(ctx, g, i, &info) != PW_OK || !info.format_known || info.rank != 2) continue;
        const int64_t out_dim = info.shape[0], in = info.shape[1];
        float *x = malloc(sizeof(float) * (size_t)(n * in));
        for (int64_t k = 0; k < n * in; ++k) x[k] = (float)((k * 131) % 257) / 128.0f - 1.0f;
        if ((size_t)(n * out_dim) > cap - used) {
            cap = (cap + (size_t)(n * out_dim)) * 2;
            y = realloc(y, cap * sizeof(float));
        }
        pw_weight_options wo;
        pw_weight_options_init(&wo);
        wo.cache = cache;
        pw_weight *h = NULL;
        if (pw_gguf_tensor_view(ctx, g, i, &w) != PW_OK || pw_weight_create(ctx, &w, &wo, &h) != PW_OK ||
            pw_matmul_wt(ctx, x, n, h, y + used) != PW_OK) {
            fprintf(stderr, "%s: %s\n", info.name, pw_context_message(ctx));
            exit(2);
        }
        used += (size_t)(n * out_dim);
        pw_weight_destroy(h);
        free(x);
    }
    const double t = now() - t0;
    pw_cache_close(cache);
    pw_gguf_close(g);
    pw_context_destroy(ctx);
    *out = y;
    *len = used;
    return t;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s MODEL.gguf MODEL.pwc [N]\n", argv[0]);
        return 2;
    }
    const int64_t n = argc > 3 ? atoll(argv[3]) : 16;
    counts a, b;
    float *ya, *yb;
    size_t la, lb;
    double ta = 0, tb = 0;
    for (int rep = 0; rep < 2; ++rep) {
        if (rep) {
            free(ya);
            free(yb);
        }
        ta = load(argv[1], NULL, n, &a, &ya, &la);
        tb = load(argv[1], argv[2], n, &b, &yb, &lb);
    }
    const int same = la == lb && memcmp(ya, yb, la * sizeof(float)) == 0;
    printf("open + first matmul (n=%lld), warm page cache:\n", (long long)n);
    printf("  packing at load : %8.3f s  (%d adapter events)\n", ta, a.adapters);
    printf("  from cache file : %8.3f s  (%d adapter events, %d weights served, %d repacked)\n", tb, b.adapters,
           b.served, b.repacked);
    printf("  speed-up %.1fx; products %s\n", ta / tb, same ? "bit-identical" : "DIFFER");
    free(ya);
    free(yb);
    return same && b.adapters == 0 ? 0 : 1;
}
