/*
 * Peak memory of an engine's load and first steps (issue: one packed form at the
 * file's size).
 *
 *   rss_load MODEL.gguf [MODEL.pwc] [--policy compact|fastest] [--threads T]
 *
 * Opens the model (weights [out, in]), creates and prepares every 2-D weight
 * for n = 1 and n = 32 under the policy (through the cache file when one is
 * given), runs one product at each n per weight, and reports the process's
 * peak resident memory (VmHWM) against the weights' bytes, with the packed
 * bytes the weights hold. Before opening, the GGUF's pages are dropped from
 * the page cache (posix_fadvise): with a cache file, mincore() on the GGUF's
 * tensor ranges then shows how many of its pages were ever read, separately
 * for the tensors whose weight holds a packed form (none, when every such form
 * is served from the cache) and those kernels read in place (read by the
 * products). Prints one line of key=value pairs.
 * Exit 2 on bad input.
 */
#include <packwise.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static long status_kib(const char *key) {
    FILE *f = fopen("/proc/self/status", "r");
    if (f == NULL) return -1;
    char line[256];
    long v = -1;
    const size_t n = strlen(key);
    while (fgets(line, sizeof line, f))
        if (strncmp(line, key, n) == 0 && sscanf(line + n, ": %ld kB", &v) == 1) break;
    fclose(f);
    return v;
}

static int drop_page_cache(const char *path) {
    const int fd = open(path, O_RDONLY);
    if (fd < 0) return -1;
    const int rc = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    close(fd);
    return rc;
}

/* Pages of [p, p + n) resident in the page cache (mincore); *pages gets their count. */
static long resident_pages(const void *p, uint64_t n, long *pages) {
    const uintptr_t ps = (uintptr_t)sysconf(_SC_PAGESIZE);
    const uintptr_t a = (uintptr_t)p & ~(ps - 1), e = ((uintptr_t)p + n + ps - 1) & ~(ps - 1);
    *pages = (long)((e - a) / ps);
    unsigned char *vec = malloc((size_t)*pages);
    if (vec == NULL || mincore((void *)a, e - a, vec) != 0) {
        free(vec);
        return -1;
    }
    long r = 0;
    for (long i = 0; i < *pages; ++i) r += vec[i] & 1;
    free(vec);
    return r;
}

int main(int argc, char **argv) {
    const char *model = NULL, *cache_path = NULL;
    pw_memory_policy policy = PW_MEMORY_COMPACT;
    int threads = 0;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--policy") == 0 && i + 1 < argc) {
            if (pw_memory_policy_from_name(argv[++i], &policy) != PW_OK) {
                fprintf(stderr, "rss_load: --policy compact|fastest|in_place\n");
                return 2;
            }
        } else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
            threads = atoi(argv[++i]);
        } else if (model == NULL) {
            model = argv[i];
        } else {
            cache_path = argv[i];
        }
    }
    if (model == NULL) {
        fprintf(stderr, "usage: rss_load MODEL.gguf [MODEL.pwc] [--policy P] [--threads T]\n");
        return 2;
    }
    drop_page_cache(model);
    const long base_kib = status_kib("VmRSS");
    pw_context_options co;
    pw_context_options_init(&co);
    co.memory_policy = policy;
    co.threads = threads;
    pw_context *ctx = NULL;
    if (pw_context_create(&co, &ctx) != PW_OK) {
        fprintf(stderr, "rss_load: %s\n", pw_last_create_message());
        return 2;
    }
    pw_gguf_open_options go;
    pw_gguf_open_options_init(&go);
    go.orientation = PW_ORIENT_OUT_IN;
    pw_gguf *g = NULL;
    pw_cache *cache = NULL;
    if (pw_gguf_open(ctx, model, &go, &g) != PW_OK ||
        (cache_path != NULL && pw_cache_open(ctx, cache_path, &cache) != PW_OK)) {
        fprintf(stderr, "rss_load: %s\n", pw_context_message(ctx));
        return 2;
    }
    const int64_t count = pw_gguf_tensor_count(g);
    pw_weight **w = calloc((size_t)count, sizeof *w);
    pw_view *views = calloc((size_t)count, sizeof *views);
    uint64_t weights_bytes = 0, packed_bytes = 0;
    int64_t max_in = 0, max_out = 0, nweights = 0, from_cache = 0;
    for (int64_t i = 0; i < count; ++i) {
        pw_gguf_tensor_info info;
        if (pw_gguf_tensor_info_get(ctx, g, i, &info) != PW_OK || !info.format_known || info.rank != 2) continue;
        pw_weight_options wo;
        pw_weight_options_init(&wo);
        wo.cache = cache;
        if (pw_gguf_tensor_view(ctx, g, i, &views[i]) != PW_OK ||
            pw_weight_create(ctx, &views[i], &wo, &w[i]) != PW_OK || pw_weight_prepare(ctx, w[i]) != PW_OK) {
            fprintf(stderr, "rss_load: %s: %s\n", info.name, pw_context_message(ctx));
            return 2;
        }
        pw_weight_info wi;
        memset(&wi, 0, sizeof wi);
        wi.struct_size = sizeof wi;
        pw_weight_info_get(w[i], &wi);
        weights_bytes += wi.source_bytes;
        packed_bytes += wi.packed_bytes;
        from_cache += wi.from_cache;
        ++nweights;
        if (info.shape[1] > max_in) max_in = info.shape[1];
        if (info.shape[0] > max_out) max_out = info.shape[0];
    }
    const long after_load_kib = status_kib("VmRSS");
    float *x = calloc((size_t)(32 * max_in), sizeof(float)), *y = calloc((size_t)(32 * max_out), sizeof(float));
    for (int64_t k = 0; k < 32 * max_in; ++k) x[k] = (float)((k * 7) % 13) / 13.0f - 0.5f;
    for (int64_t i = 0; i < count; ++i) {
        if (w[i] == NULL) continue;
        if (pw_matmul_wt(ctx, x, 1, w[i], y) != PW_OK || pw_matmul_wt(ctx, x, 32, w[i], y) != PW_OK) {
            fprintf(stderr, "rss_load: %s\n", pw_context_message(ctx));
            return 2;
        }
    }
    /* Tensors whose weight does not read them (packed or served from the cache), and
     * those kernels read in place. */
    long pages = 0, resident = 0, inplace_pages = 0, inplace_resident = 0;
    for (int64_t i = 0; i < count; ++i) {
        if (w[i] == NULL) continue;
        pw_weight_info wi;
        memset(&wi, 0, sizeof wi);
        wi.struct_size = sizeof wi;
        pw_weight_info_get(w[i], &wi);
        long p = 0;
        const long r = resident_pages(pw_view_block_ptr(&views[i], 0, 0), pw_view_bytes(&views[i]), &p);
        if (wi.reads_source) {
            inplace_pages += p;
            inplace_resident += r > 0 ? r : 0;
        } else {
            pages += p;
            resident += r > 0 ? r : 0;
        }
    }
    const long hwm_kib = status_kib("VmHWM");
    printf("model=%s cache=%s policy=%s weights=%lld weights_mib=%.1f packed_mib=%.1f from_cache=%lld "
           "base_mib=%.1f after_load_mib=%.1f peak_rss_mib=%.1f peak_over_weights=%.3f "
           "peak_minus_base_over_weights=%.3f packed_tensor_pages=%ld packed_tensor_pages_resident=%ld "
           "in_place_tensor_pages=%ld in_place_tensor_pages_resident=%ld\n",
           model, cache_path ? cache_path : "-", pw_memory_policy_name(policy), (long long)nweights,
           (double)weights_bytes / 1048576.0, (double)packed_bytes / 1048576.0, (long long)from_cache,
           base_kib / 1024.0, after_load_kib / 1024.0, hwm_kib / 1024.0,
           (double)hwm_kib * 1024.0 / (double)weights_bytes,
           (double)(hwm_kib - base_kib) * 1024.0 / (double)weights_bytes, pages, resident, inplace_pages,
           inplace_resident);
    for (int64_t i = 0; i < count; ++i) pw_weight_destroy(w[i]);
    free(w);
    free(views);
    free(x);
    free(y);
    pw_cache_close(cache);
    pw_gguf_close(g);
    pw_context_destroy(ctx);
    return 0;
}
