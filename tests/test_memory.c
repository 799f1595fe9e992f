/*
 * The memory policies on a synthetic model at LLM-like shapes (a layer of
 * attn_q/k/v/output [D, D], ffn_gate/up [F, D] and ffn_down [D, F] in Q4_0,
 * Q4_K, Q6_K and Q8_0, read from a GGUF file, plus QC4W weights of the same
 * shapes), every weight prepared for n = 1 and n = 32:
 *
 * - compact: the packed forms a weight holds are at most its source's bytes
 *   plus 3% (pw__compact_budget, the policy's own bound: one form for every
 *   batch size, or none where kernels read the file in place), at every ISA
 *   level; the products at n = 1 and n = 32 agree with the reference kernel
 *   within the int8 activations' error (3% of the largest output: a block in
 *   the wrong place is off by the whole of it);
 * - fastest holds more only where a higher-ranked GEMM form exists: on x86's
 *   SIMD levels the packed family's GEMM ranks above the int8-expanded i8g
 *   form (kernel/kernel.h, PW__PRIO_I8G_X86), and so does it on Arm's dotprod and
 *   i8mm levels for Q4_K and Q6_K (PW__PRIO_I8G_ARM_BELOW), so fastest holds
 *   compact's one form; at the scalar level, and on Arm for Q4_0, it holds the
 *   i8g form (more than compact's bound), and reports it;
 * - in_place holds nothing and reads the file's bytes;
 * - a weight packed from a file's mapping hands the source's pages back: the
 *   process maps none of the tensor's whole pages once it is prepared
 *   (present bits of /proc/self/pagemap), where it mapped all of them before.
 */
#include "pw_test.h"

#include "op/op.h"

#include <math.h>
#include <unistd.h>

enum { D = 256, F = 768, NT = 7, NMAX = 32, QK = 4096 };

static const char *names[NT] = {"attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down"};
static const pw_format formats[] = {PW_FORMAT_Q4_0, PW_FORMAT_Q4_K, PW_FORMAT_Q6_K, PW_FORMAT_Q8_0};
enum { NF = sizeof formats / sizeof formats[0] };

static int64_t rows_of(int t) { return t == 4 || t == 5 ? F : D; }
static int64_t in_of(int t) { return t == 6 ? F : D; }

static void write_model(pw_context *ctx, const char *path) {
    pw_gguf_writer *w = NULL;
    CHECK_OK(pw_gguf_writer_create(ctx, &w), ctx);
    void *bufs[NF * NT];
    int k = 0;
    for (int f = 0; f < NF; ++f) {
        const pw_format_info *fi = pw_format_get(formats[f]);
        for (int t = 0; t < NT; ++t, ++k) {
            const int64_t out = rows_of(t), in = in_of(t);
            const size_t blocks = (size_t)(out * in / fi->block_size);
            bufs[k] = malloc(blocks * (size_t)fi->block_bytes);
            CHECK_OK(pw_format_synthesize(ctx, formats[f], bufs[k], blocks, 100u + (uint64_t)k), ctx);
            char name[64];
            snprintf(name, sizeof name, "%s.%s.weight", fi->name, names[t]);
            const int64_t ne[2] = {in, out};
            CHECK_OK(pw_gguf_writer_add_tensor(w, name, formats[f], 2, ne, bufs[k],
                                               blocks * (uint64_t)fi->block_bytes), ctx);
        }
    }
    CHECK_OK(pw_gguf_writer_write(w, path), ctx);
    pw_gguf_writer_destroy(w);
    for (int i = 0; i < k; ++i) free(bufs[i]);
}

/* y = x W^T through weight h at n = 1 and n = NMAX, against the reference kernel on the
 * same view; returns nonzero when a product is off. */
static int products_agree(pw_context *ctx, pw_weight *h, const pw_view *v, const float *x) {
    const int64_t out = v->shape[0];
    float *y = malloc(sizeof(float) * (size_t)(NMAX * out)), *r = malloc(sizeof(float) * (size_t)(NMAX * out));
    pw_weight_options ro;
    pw_weight_options_init(&ro);
    char ref[32];
    snprintf(ref, sizeof ref, "ref_%s", pw_format_get(v->format)->name);
    for (char *c = ref; *c; ++c) *c = (char)(*c >= 'A' && *c <= 'Z' ? *c - 'A' + 'a' : *c);
    ro.kernel = ref;
    pw_weight *hr = NULL;
    CHECK_OK(pw_weight_create(ctx, v, &ro, &hr), ctx);
    int bad = 0;
    const int64_t ns[2] = {1, NMAX};
    for (int c = 0; c < 2; ++c) {
        CHECK_OK(pw_matmul_wt(ctx, x, ns[c], h, y), ctx);
        CHECK_OK(pw_matmul_wt(ctx, x, ns[c], hr, r), ctx);
        double err = 0, mag = 0;
        for (int64_t i = 0; i < ns[c] * out; ++i) {
            /* (an fmax reduction here crashes aarch64-linux-gnu-gcc 12's vectorizer) */
            const double e = fabs((double)y[i] - r[i]), m = fabs((double)r[i]);
            if (e > err || e != e) err = e;
            if (m > mag) mag = m;
        }
        /* int8 activations cost up to ~1% of the largest output here; a block read from the
         * wrong place costs the whole of it */
        if (!(err <= 0.03 * mag + 1e-6)) {
            CHECK(0, "%s n=%lld: max |y - ref| = %g of max |ref| %g", v->name, (long long)ns[c], err, mag);
            ++bad;
        }
    }
    pw_weight_destroy(hr);
    free(y);
    free(r);
    return bad;
}

/* Of the whole pages inside [p, p + bytes), how many this process has mapped (present
 * bit of /proc/self/pagemap); *pages gets their count. -1 when pagemap is unreadable. */
static long pages_present(const void *p, uint64_t bytes, long *pages) {
    const uintptr_t ps = (uintptr_t)sysconf(_SC_PAGESIZE);
    const uintptr_t a = ((uintptr_t)p + ps - 1) & ~(ps - 1), e = ((uintptr_t)p + bytes) & ~(ps - 1);
    *pages = e > a ? (long)((e - a) / ps) : 0;
    FILE *f = fopen("/proc/self/pagemap", "rb");
    if (f == NULL) return -1;
    long present = 0;
    for (uintptr_t q = a; q < e; q += ps) {
        uint64_t entry = 0;
        if (fseek(f, (long)(q / ps * 8), SEEK_SET) != 0 || fread(&entry, 8, 1, f) != 1) {
            present = -1;
            break;
        }
        present += (long)(entry >> 63);
    }
    fclose(f);
    return present;
}

static void block_formats(pw_context *ctx, const char *path, const float *x) {
    pw_gguf_open_options go;
    pw_gguf_open_options_init(&go);
    go.orientation = PW_ORIENT_OUT_IN;
    pw_gguf *g = NULL;
    CHECK_OK(pw_gguf_open(ctx, path, &go, &g), ctx);
    REQUIRE(g != NULL, "open");
    uint64_t source = 0, compact = 0, fastest = 0;
    int released = 0, packed_views = 0;
    for (int64_t i = 0; i < pw_gguf_tensor_count(g); ++i) {
        pw_view v;
        CHECK_OK(pw_gguf_tensor_view(ctx, g, i, &v), ctx);
        const uint64_t bytes = pw_view_bytes(&v);
        pw_weight_options o;
        pw_weight_options_init(&o);
        pw_weight *hc = NULL, *hf = NULL, *hi = NULL;
        /* compact (the default), with the source's pages first made resident */
        volatile uint8_t sink = 0;
        const uint8_t *first = pw_view_block_ptr(&v, 0, 0);
        for (uint64_t b = 0; b < bytes; b += 1024) sink ^= first[b];
        (void)sink;
        long pages = 0;
        const long before = pages_present(pw_view_block_ptr(&v, 0, 0), bytes, &pages);
        CHECK_OK(pw_weight_create(ctx, &v, &o, &hc), ctx);
        const pw_weight_info pc = pw_test_weight_info(hc);
        CHECK(pc.policy == PW_MEMORY_COMPACT && pc.source_bytes == bytes, "%s: policy %d, %llu bytes",
              v.name, (int)pc.policy, (unsigned long long)pc.source_bytes);
        CHECK(pc.forms <= 1 && pc.packed_bytes <= pw__compact_budget(bytes),
              "%s: compact holds %d forms, %llu bytes for a %llu-byte source (budget %llu)", v.name,
              (int)pc.forms, (unsigned long long)pc.packed_bytes, (unsigned long long)bytes,
              (unsigned long long)pw__compact_budget(bytes));
        CHECK_OK(pw_weight_prepare(ctx, hc), ctx);
        if (pc.forms == 1) {
            /* Every page of the tensor was resident; the packed weight gives them back. */
            const long after = pages_present(pw_view_block_ptr(&v, 0, 0), bytes, &pages);
            ++packed_views;
            const int ok = before == pages && after == 0;
            released += ok;
            if (!ok)
                printf("%s: %ld of its %ld whole pages mapped before preparing, %ld after\n", v.name,
                       before, pages, after);
        }
        CHECK(pw_weight_bytes(hc) == pc.packed_bytes, "%s: weight owns %llu bytes, plan says %llu",
              v.name, (unsigned long long)pw_weight_bytes(hc), (unsigned long long)pc.packed_bytes);
        products_agree(ctx, hc, &v, x);
        /* fastest */
        o.policy = PW_MEMORY_FASTEST;
        CHECK_OK(pw_weight_create(ctx, &v, &o, &hf), ctx);
        const pw_weight_info pf = pw_test_weight_info(hf);
        CHECK(pf.packed_bytes >= pc.packed_bytes, "%s: fastest %llu < compact %llu bytes", v.name,
              (unsigned long long)pf.packed_bytes, (unsigned long long)pc.packed_bytes);
        const pw_isa isa = pw_context_isa(ctx);
        /* the family's GEMM first: x86's SIMD levels, and on Arm's Q4_K and Q6_K
         * (kernel.h, PW__PRIO_I8G_ARM_BELOW) */
        const int arm = isa == PW_ISA_DOTPROD || isa == PW_ISA_I8MM || isa == PW_ISA_SME;
        if (isa == PW_ISA_AVX2 || isa == PW_ISA_AVXVNNI || isa == PW_ISA_AVX512 ||
            (arm && (v.format == PW_FORMAT_Q4_K || v.format == PW_FORMAT_Q6_K)))
            CHECK(pf.forms == pc.forms && pf.packed_bytes == pc.packed_bytes &&
                      strcmp(pf.kernel_gemm, pc.kernel_gemm) == 0 &&
                      strcmp(pf.kernel_gemv, pc.kernel_gemv) == 0,
                  "%s: fastest holds %d forms, %llu bytes (%s, %s); compact %d, %llu (%s, %s)",
                  v.name, (int)pf.forms, (unsigned long long)pf.packed_bytes, pf.kernel_gemv,
                  pf.kernel_gemm, (int)pc.forms, (unsigned long long)pc.packed_bytes,
                  pc.kernel_gemv, pc.kernel_gemm);
        else if (v.format != PW_FORMAT_Q8_0)
            CHECK(pf.packed_bytes > pw__compact_budget(bytes),
                  "%s: fastest holds %llu bytes, no more than compact's bound", v.name,
                  (unsigned long long)pf.packed_bytes);
        products_agree(ctx, hf, &v, x);
        /* in place */
        o.policy = PW_MEMORY_IN_PLACE;
        CHECK_OK(pw_weight_create(ctx, &v, &o, &hi), ctx);
        const pw_weight_info pi = pw_test_weight_info(hi);
        CHECK(pi.forms == 0 && pi.packed_bytes == 0 && pi.reads_source, "%s: in_place holds %llu bytes",
              v.name, (unsigned long long)pi.packed_bytes);
        source += bytes;
        compact += pc.packed_bytes;
        fastest += pf.packed_bytes;
        pw_weight_destroy(hc);
        pw_weight_destroy(hf);
        pw_weight_destroy(hi);
    }
    CHECK(packed_views == 0 || released == packed_views, "%d of %d packed weights gave their source's pages back",
          released, packed_views);
    printf("block formats at isa %s: %llu source bytes; compact holds %.3fx, fastest %.3fx; %d packed "
           "from the mapping, %d handed its pages back\n",
           pw_isa_name(pw_context_isa(ctx)), (unsigned long long)source, (double)compact / (double)source,
           (double)fastest / (double)source, packed_views, released);
    pw_gguf_close(g);
}

/* QC4W at K = 4096, as a 7B model's: a tile's sums, scales and bias (12 bytes per row) are
 * 0.6% of its nibbles there. */
static void qc4w(pw_context *ctx, const float *x) {
    pw_rng r = {77};
    uint64_t source = 0, compact = 0;
    for (int t = 0; t < NT; ++t) {
        const int64_t out = rows_of(t), in = QK;
        uint8_t *nib = malloc((size_t)(out * in / 2));
        float *scale = malloc(sizeof(float) * (size_t)out);
        for (int64_t i = 0; i < out * in / 2; ++i) nib[i] = (uint8_t)pw_rng_next(&r);
        for (int64_t i = 0; i < out; ++i) scale[i] = 0.01f;
        pw_qc4w_weights w;
        pw_qc4w_weights_init(&w);
        w.out = out;
        w.in = in;
        w.data = nib;
        w.scale = scale;
        w.zero_point = 8;
        w.name = names[t];
        pw_weight *h = NULL;
        CHECK_OK(pw_weight_create_qc4w(ctx, &w, NULL, &h), ctx);
        const pw_weight_info p = pw_test_weight_info(h);
        CHECK(p.forms == 1 && p.packed_bytes <= pw__compact_budget(p.source_bytes) && p.prepared,
              "QC4W %s: %d forms, %llu bytes for %llu", names[t], (int)p.forms,
              (unsigned long long)p.packed_bytes, (unsigned long long)p.source_bytes);
        float *y = malloc(sizeof(float) * (size_t)(NMAX * out));
        CHECK_OK(pw_matmul_wt(ctx, x, 1, h, y), ctx);
        CHECK_OK(pw_matmul_wt(ctx, x, NMAX, h, y), ctx);
        CHECK(strcmp(p.kernel_gemv, p.kernel_gemm) == 0, "QC4W: one kernel for both");
        source += p.source_bytes;
        compact += p.packed_bytes;
        pw_weight_destroy(h);
        free(y);
        free(nib);
        free(scale);
    }
    printf("QC4W: %llu source bytes, compact holds %.4fx\n", (unsigned long long)source,
           (double)compact / (double)source);
}

int main(void) {
    pw_context *ctx = pw_test_context();
    char path[512];
    snprintf(path, sizeof path, "%s/test_memory_%d.gguf", PW_TEST_BINARY_DIR, (int)getpid());
    write_model(ctx, path);
    float *x = malloc(sizeof(float) * NMAX * QK);
    pw_rng r = {5};
    for (int i = 0; i < NMAX * QK; ++i) x[i] = (float)pw_rng_gauss(&r);
    block_formats(ctx, path, x);
    qc4w(ctx, x);
    free(x);
    unlink(path);
    pw_context_destroy(ctx);
    return pw_test_finish();
}
