/*
 * packwise matmul FILE WEIGHT --x X -o OUT [--kernel K] [--threads N] [--cache CACHE]
 *                 [--trace] [--repeat R]
 * Y = X * W^T with the weight left as [out, in] (the file is opened OUT_IN).
 * X is FILE.gguf:TENSOR (any format, decoded to f32) or a raw little-endian
 * float32 file of n x in values; OUT receives n x out float32 values.
 * --cache CACHE serves the packed weight from a weights-cache file made by
 * `packwise prepack` (a cache event in the trace says whether it was used).
 * --repeat R runs the product R times through one prepared weight (the first
 * call packs, later calls reuse it), so --trace shows what steady state costs.
 */
#include "cli_args.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* X as raw float32 values: a regular file, whose size bounds the read (a pipe or a device
 * such as /dev/zero has no size and no end). Returns NULL after printing a message. */
static float *read_raw_floats(pw_context *ctx, const char *path, size_t *count) {
    int fd = -1;
    struct stat sb;
    if (pw_input_open(ctx, path, PW_INPUT_REGULAR, &fd, &sb) != PW_OK) {
        pw_cli_fail("matmul", "--x: %s", pw_context_message(ctx));
        return NULL;
    }
    const uint64_t bytes = (uint64_t)sb.st_size;
    float *buf = NULL;
    if (bytes % 4 != 0 || bytes > SIZE_MAX / 2)
        pw_cli_fail("matmul", "--x: '%s' has %llu bytes, not a whole number of float32 values", path,
                    (unsigned long long)bytes);
    else if ((buf = malloc(bytes ? (size_t)bytes : 1)) == NULL)
        pw_cli_fail("matmul", "--x: '%s': out of memory for %llu bytes", path, (unsigned long long)bytes);
    for (uint64_t done = 0; buf != NULL && done < bytes;) {
        const ssize_t r = read(fd, (char *)buf + done, (size_t)(bytes - done));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) {
            pw_cli_fail("matmul", "--x: cannot read '%s' at byte offset %llu: %s", path,
                        (unsigned long long)done, r < 0 ? strerror(errno) : "the file shrank");
            free(buf);
            buf = NULL;
        } else {
            done += (uint64_t)r;
        }
    }
    close(fd);
    *count = (size_t)(bytes / 4);
    return buf;
}

/* Is X "file.gguf:tensor" (else a raw float32 file)? */
static int x_names_gguf_tensor(const char *spec) {
    const char *colon = strrchr(spec, ':');
    return colon != NULL && colon != spec && strstr(spec, ".gguf:") != NULL;
}

/* X from "file.gguf:tensor": decoded to floats. Returns NULL after printing a message. */
static float *read_gguf_tensor(pw_context *ctx, const char *spec, size_t *count) {
    const char *colon = strrchr(spec, ':');
    char path[4096];
    size_t len = (size_t)(colon - spec);
    if (len >= sizeof path) {
        pw_cli_fail("matmul", "--x: path too long");
        return NULL;
    }
    memcpy(path, spec, len);
    path[len] = '\0';
    pw_gguf_open_options oo;
    pw_gguf_open_options_init(&oo);
    oo.orientation = PW_ORIENT_OUT_IN;
    pw_gguf *g = NULL;
    pw_status st = pw_gguf_open(ctx, path, &oo, &g);
    if (st != PW_OK) {
        pw_cli_fail_status("matmul", ctx, st, path);
        return NULL;
    }
    int64_t idx;
    pw_view v;
    float *x = NULL;
    st = pw_gguf_find_tensor(ctx, g, colon + 1, &idx);
    if (st == PW_OK) st = pw_gguf_tensor_view(ctx, g, idx, &v);
    if (st == PW_OK) {
        *count = (size_t)pw_view_elements(&v);
        x = malloc(sizeof(float) * (*count ? *count : 1));
        if (x == NULL) st = PW_ERR_OUT_OF_MEMORY;
        else st = pw_view_to_float(ctx, &v, x, *count);
    }
    if (st != PW_OK) {
        pw_cli_fail_status("matmul", ctx, st, spec);
        free(x);
        x = NULL;
    }
    pw_gguf_close(g);
    return x;
}

static const char HELP[] =
    "usage: packwise matmul FILE WEIGHT --x X -o OUT [--kernel K] [--threads N] [--cache CACHE]\n"
    "                       [--trace] [--repeat R]\n"
    "Y = X * W^T for the 2-D weight WEIGHT of the GGUF FILE, kept [out, in]. X is\n"
    "FILE.gguf:TENSOR or a raw little-endian float32 file of n x in values (a regular file);\n"
    "OUT receives n x out float32 values. --kernel K forces a kernel (packwise formats lists\n"
    "them), --threads N (0 = every core, at most 4096), --cache CACHE serves the packed weight\n"
    "from a file made by prepack, --trace prints trace events on stderr, --repeat R runs the\n"
    "product R times through one prepared weight (1..1000000).\n"
    PW_CLI_HELP_OUTPUT_IN_PLACE;

int pw_cli_matmul_parse(int argc, char **argv, pw_cli_matmul_args *m) {
    memset(m, 0, sizeof *m);
    m->repeat = 1;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        const int has = i + 1 < argc;
        if (pw_cli_is_help(a)) return pw_cli_help(HELP);
        else if (strcmp(a, "--x") == 0 && has) m->x = argv[++i];
        else if (strcmp(a, "-o") == 0 && has) m->out = argv[++i];
        else if (strcmp(a, "--kernel") == 0 && has) m->kernel = argv[++i];
        else if (strcmp(a, "--cache") == 0 && has) m->cache = argv[++i];
        else if (strcmp(a, "--trace") == 0) m->trace = 1;
        else if (strcmp(a, "--threads") == 0 && has) {
            if (pw_cli_parse_i64(argv[++i], &m->threads) != 0 || m->threads > 4096)
                return pw_cli_fail("matmul", "--threads: '%s' is not a thread count", argv[i]);
        } else if (strcmp(a, "--repeat") == 0 && has) {
            if (pw_cli_parse_i64(argv[++i], &m->repeat) != 0 || m->repeat < 1 || m->repeat > 1000000)
                return pw_cli_fail("matmul", "--repeat: '%s' is not a count >= 1", argv[i]);
        } else if (a[0] == '-' && a[1] != '\0') {
            return pw_cli_fail("matmul", "unknown option '%s'", a);
        } else if (m->file == NULL) m->file = a;
        else if (m->weight == NULL) m->weight = a;
        else return pw_cli_fail("matmul", "unexpected argument '%s'", a);
    }
    if (m->file == NULL || m->weight == NULL || m->x == NULL || m->out == NULL)
        return pw_cli_fail("matmul", "usage: packwise matmul FILE WEIGHT --x X -o OUT [--kernel K] "
                                     "[--threads N] [--cache CACHE] [--trace] [--repeat R]");
    return PW_CLI_RUN;
}

int pw_cli_matmul_run(const pw_cli_matmul_args *m) {
    const char *file = m->file, *weight = m->weight, *xspec = m->x, *out = m->out,
               *kernel = m->kernel, *cache = m->cache;
    const long long threads = m->threads, repeat = m->repeat;
    const int trace = m->trace;
    pw_context *ctx = pw_cli_context("matmul", trace, (int)threads);
    if (ctx == NULL) return PW_EXIT_USAGE;
    /* The output is checked against every input before anything is read or written. */
    char xpath[4096];
    const int x_is_gguf = x_names_gguf_tensor(xspec);
    snprintf(xpath, sizeof xpath, "%.*s", x_is_gguf ? (int)(strrchr(xspec, ':') - xspec) : (int)strlen(xspec),
             xspec);
    const char *inputs[3] = {file, xpath, cache};
    pw_output *of = NULL;
    int rc = pw_cli_out_open("matmul", ctx, &of, out, inputs, 3);
    if (rc != PW_EXIT_OK) {
        pw_context_destroy(ctx);
        return rc;
    }
    pw_gguf *g = NULL;
    pw_cache *pc = NULL;
    pw_weight *h = NULL;
    float *x = NULL, *y = NULL;
    pw_gguf_open_options oo;
    pw_gguf_open_options_init(&oo);
    oo.orientation = PW_ORIENT_OUT_IN;
    pw_status st = pw_gguf_open(ctx, file, &oo, &g);
    if (st != PW_OK) {
        rc = pw_cli_fail_status("matmul", ctx, st, file);
        goto done;
    }
    int64_t idx;
    pw_view w;
    st = pw_gguf_find_tensor(ctx, g, weight, &idx);
    if (st == PW_OK) st = pw_gguf_tensor_view(ctx, g, idx, &w);
    if (st != PW_OK) {
        rc = pw_cli_fail_status("matmul", ctx, st, weight);
        goto done;
    }
    if (w.rank != 2) {
        rc = pw_cli_fail("matmul", "%s: weight '%s' has rank %d; matmul needs a 2-D [out, in] weight",
                         file, weight, (int)w.rank);
        goto done;
    }
    const int64_t o_dim = w.shape[0], in = w.shape[1];
    size_t count = 0;
    if (x_is_gguf)
        x = read_gguf_tensor(ctx, xspec, &count);
    else
        x = read_raw_floats(ctx, xspec, &count);
    if (x == NULL) {
        rc = PW_EXIT_USAGE;
        goto done;
    }
    if (count == 0 || count % (size_t)in != 0) {
        rc = pw_cli_fail("matmul", "--x: %zu values are not a whole number of rows of in = %lld",
                         count, (long long)in);
        goto done;
    }
    const int64_t n = (int64_t)(count / (size_t)in);
    size_t y_bytes = 0;
    if (__builtin_mul_overflow((size_t)n, (size_t)o_dim, &y_bytes) ||
        __builtin_mul_overflow(y_bytes, sizeof(float), &y_bytes) || (y = malloc(y_bytes)) == NULL) {
        rc = pw_cli_fail("matmul", "out of memory for Y = %lld x %lld float32 values", (long long)n,
                         (long long)o_dim);
        goto done;
    }
    /* A cache is mapped: a FIFO (which would block the library's open) or a device is refused. */
    struct stat cst;
    if (cache != NULL && stat(cache, &cst) == 0 && !S_ISREG(cst.st_mode)) {
        rc = pw_cli_fail("matmul", "--cache: '%s' is %s, not a regular file", cache,
                         pw_file_kind_name(cst.st_mode));
        goto done;
    }
    if (cache != NULL && (st = pw_cache_open(ctx, cache, &pc)) != PW_OK) {
        rc = pw_cli_fail_status("matmul", ctx, st, cache);
        goto done;
    }
    pw_weight_options wo;
    pw_weight_options_init(&wo);
    wo.kernel = kernel;
    wo.cache = pc;
    st = pw_weight_create(ctx, &w, &wo, &h);
    for (long long r = 0; r < repeat && st == PW_OK; ++r) st = pw_matmul_wt(ctx, x, n, h, y);
    if (st != PW_OK) {
        rc = pw_cli_fail_status("matmul", ctx, st, weight);
        goto done;
    }
    rc = pw_cli_out_write("matmul", ctx, of, y, y_bytes);
    if (rc == PW_EXIT_OK) rc = pw_cli_out_commit("matmul", ctx, of);
done:
    pw_output_close(of);
    pw_weight_destroy(h);
    pw_cache_close(pc);
    pw_gguf_close(g);
    free(x);
    free(y);
    pw_context_destroy(ctx);
    return rc;
}
