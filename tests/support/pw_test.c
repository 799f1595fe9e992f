#include "pw_test.h"

#include <math.h>
#include <stdarg.h>

int pw_test_failures = 0;
int pw_test_checks = 0;

void pw_test_fail(const char *file, int line, const char *fmt, ...) {
    ++pw_test_failures;
    fprintf(stderr, "%s:%d: ", file, line);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n");
}

int pw_test_finish(void) {
    const char *isa = getenv("PACKWISE_ISA");
    printf("%d checks, %d failures (PACKWISE_ISA=%s)\n", pw_test_checks, pw_test_failures,
           isa ? isa : "unset");
    return pw_test_failures ? 1 : 0;
}

pw_context *pw_test_context(void) {
    pw_context *ctx = NULL;
    pw_status st = pw_context_create(NULL, &ctx);
    if (st != PW_OK) {
        fprintf(stderr, "pw_context_create: %s: %s\n", pw_status_name(st),
                pw_last_create_message());
        exit(1);
    }
    return ctx;
}

uint64_t pw_rng_next(pw_rng *r) {
    uint64_t z = (r->state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

double pw_rng_uniform(pw_rng *r) { return (double)(pw_rng_next(r) >> 11) * 0x1.0p-53; }

double pw_rng_gauss(pw_rng *r) {
    double u1 = pw_rng_uniform(r), u2 = pw_rng_uniform(r);
    if (u1 < 1e-300) u1 = 1e-300;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

unsigned char *pw_test_read_file(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    if (fseek(f, 0, SEEK_END) != 0) {
        fclose(f);
        return NULL;
    }
    long n = ftell(f);
    if (n < 0 || fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        return NULL;
    }
    unsigned char *buf = malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    if (buf && size) *size = (size_t)n;
    return buf;
}

const char *pw_test_data_path(const char *relative) {
    static char path[4096];
    snprintf(path, sizeof path, "%s/%s", PW_TEST_DATA_DIR, relative);
    return path;
}

pw_weight_info pw_test_weight_info(const pw_weight *w) {
    pw_weight_info i;
    memset(&i, 0, sizeof i);
    i.struct_size = sizeof i;
    CHECK(pw_weight_info_get(w, &i) == PW_OK, "pw_weight_info_get");
    return i;
}

void pw_test_view_for(pw_context *ctx, pw_layout_class layout, pw_format format, int64_t out,
                      int64_t in, void *bytes, uint64_t nbytes, pw_view *view) {
    const int64_t shape[2] = {out, in};
    pw_layout order = PW_LAYOUT_ROW_MAJOR;
    if (layout == PW_LAYOUT_BLOCKED_INPUT_MAJOR) {
        const pw_format_info *fi = pw_format_get(format);
        const pw_block_grid g = {out, in / fi->block_size, fi->block_bytes, PW_LAYOUT_ROW_MAJOR};
        unsigned char *t = malloc((size_t)nbytes);
        REQUIRE(t != NULL, "malloc");
        CHECK_OK(pw_bytes_to_kernel_order(ctx, &g, bytes, nbytes, t, nbytes), ctx);
        memcpy(bytes, t, (size_t)nbytes);
        free(t);
        order = PW_LAYOUT_INPUT_BLOCK_MAJOR;
    }
    CHECK_OK(pw_view_init(ctx, view, format, 2, shape, order, bytes, nbytes), ctx);
}
