/*
 * packwise fixtures --all DIR: every fixture as data, with a MANIFEST.txt, so a
 * converter in any language tests against the same bytes packwise's own tests
 * use. For every format: tag fixtures (8 rows x 3 blocks) in canonical,
 * kernel (input-block-major) and row_tiled_4 order; the value fixture's
 * canonical bytes and its exactly known float32 values; and that value
 * fixture packed into each private kernel family the library has for it.
 * For QC4W: canonical N x K nibbles (N = 5, K = 37, zero point 8) with scales
 * and bias, and their packed bytes for every (nr, kr, sr) family in use.
 */
#include "cli.h"


#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static uint64_t fnv1a64(const void *p, size_t n) {
    const unsigned char *b = p;
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

static int mkdir_p(const char *path) {
    char tmp[4096];
    size_t n = strlen(path);
    if (n == 0 || n >= sizeof tmp) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(tmp, path, n + 1);
    for (char *p = tmp + 1; *p; ++p) {
        if (*p != '/') continue;
        *p = '\0';
        if (mkdir(tmp, 0755) != 0 && errno != EEXIST) return -1;
        *p = '/';
    }
    return mkdir(tmp, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

/* One fixture file (complete or not at all: cli.h) and its manifest line. */
static int emit(pw_context *ctx, FILE *manifest, const char *dir, const char *file, const void *data,
                size_t bytes, const char *fields) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    const int rc = pw_cli_write_file("fixtures", ctx, path, data, bytes, NULL, 0);
    if (rc != PW_EXIT_OK) return rc;
    fprintf(manifest, "%s %s bytes=%zu fnv1a64=%016llx\n", file, fields, bytes,
            (unsigned long long)fnv1a64(data, bytes));
    return 0;
}

static int write_format(pw_context *ctx, FILE *m, const char *dir, pw_format f) {
    const pw_format_info *fi = pw_format_get(f);
    static const pw_layout layouts[] = {
        {PW_ORDER_ROW_MAJOR, 0}, {PW_ORDER_INPUT_BLOCK_MAJOR, 0}, {PW_ORDER_ROW_TILED, 4}};
    const int64_t rows = 8, blocks = 3;
    uint64_t n;
    if (pw_fixture_bytes(ctx, f, rows, blocks, &n) != PW_OK) return pw_cli_fail("fixtures", "%s", pw_context_message(ctx));
    unsigned char *buf = malloc((size_t)n);
    int rc = buf ? 0 : pw_cli_fail("fixtures", "out of memory");
    for (size_t l = 0; l < 3 && rc == 0; ++l) {
        char lname[32], file[128], fields[256];
        pw_layout_name(layouts[l], lname, sizeof lname);
        if (pw_fixture_tags(ctx, f, rows, blocks, layouts[l], buf, n) != PW_OK)
            rc = pw_cli_fail("fixtures", "%s", pw_context_message(ctx));
        snprintf(file, sizeof file, "%s.tags.%s.bin", fi->name, lname);
        snprintf(fields, sizeof fields, "format=%s kind=tags order=%s rows=%lld blocks=%lld", fi->name,
                 lname, (long long)rows, (long long)blocks);
        if (rc == 0) rc = emit(ctx, m, dir, file, buf, (size_t)n, fields);
    }
    free(buf);
    if (rc) return rc;
    uint64_t vb = 0, vc = 0;
    int64_t vr, vbl;
    pw_fixture_values(ctx, f, NULL, &vb, NULL, &vc, &vr, &vbl);
    unsigned char *vbytes = malloc((size_t)vb);
    float *vals = malloc(sizeof(float) * (size_t)vc);
    if (!vbytes || !vals || pw_fixture_values(ctx, f, vbytes, &vb, vals, &vc, &vr, &vbl) != PW_OK) {
        free(vbytes);
        free(vals);
        return pw_cli_fail("fixtures", "%s value fixture: %s", fi->name, pw_context_message(ctx));
    }
    char file[128], fields[256];
    snprintf(fields, sizeof fields, "format=%s kind=values order=row_major rows=%lld blocks=%lld", fi->name,
             (long long)vr, (long long)vbl);
    snprintf(file, sizeof file, "%s.values.bin", fi->name);
    rc = emit(ctx, m, dir, file, vbytes, (size_t)vb, fields);
    snprintf(fields, sizeof fields, "format=%s kind=values_f32 rows=%lld elements=%lld", fi->name,
             (long long)vr, (long long)(vbl * fi->block_size));
    snprintf(file, sizeof file, "%s.values.f32", fi->name);
    if (rc == 0) rc = emit(ctx, m, dir, file, vals, sizeof(float) * (size_t)vc, fields);
    /* The value fixture in each private packed family that serves this format. */
    const char *done[8];
    int ndone = 0;
    pw_view v;
    const int64_t shape[2] = {vr, vbl * fi->block_size};
    if (rc == 0 && pw_view_init(ctx, &v, f, 2, shape, PW_LAYOUT_ROW_MAJOR, vbytes, vb) != PW_OK) rc = pw_cli_fail("fixtures", "%s", pw_context_message(ctx));
    for (size_t i = 0; i < pw_kernel_count() && rc == 0; ++i) {
        const pw_kernel_info *k = pw_kernel_info_get(i);
        if (k->kind != PW_WEIGHT_BLOCKS || k->format != f || k->layout != PW_LAYOUT_PACKED || k->family == NULL)
            continue;
        int seen = 0;
        for (int j = 0; j < ndone; ++j) seen |= strcmp(done[j], k->family) == 0;
        if (seen || ndone == 8) continue;
        done[ndone++] = k->family;
        pw_packed_form d;
        if (pw_pack_family(ctx, &v, k->family, &d, NULL, 0) != PW_OK) continue;
        unsigned char *pk = calloc(1, (size_t)d.bytes);
        if (pk == NULL) {
            rc = pw_cli_fail("fixtures", "out of memory");
            break;
        }
        if (pw_pack_family(ctx, &v, k->family, &d, pk, d.bytes) != PW_OK) {
            free(pk);
            rc = pw_cli_fail("fixtures", "%s", pw_context_message(ctx));
            break;
        }
        snprintf(file, sizeof file, "%s.values.%s.bin", fi->name, d.family);
        snprintf(fields, sizeof fields,
                 "format=%s kind=packed family=%s nr=%d kr=%d sr=%d group=%d version=%d rows=%lld in=%lld",
                 fi->name, d.family, (int)d.nr, (int)d.kr, (int)d.sr, (int)d.group, (int)d.version,
                 (long long)shape[0], (long long)shape[1]);
        rc = emit(ctx, m, dir, file, pk, (size_t)d.bytes, fields);
        free(pk);
    }
    free(vbytes);
    free(vals);
    return rc;
}

/* QC4W: the case of tests/data/qc4w (make_golden.py): w[n][k] = (5n + 3k + (n*k) % 7) % 16 - 8
 * stored for zero point 8, scale[n] = 0.25 (n + 1) (-1)^n, bias[n] = n - 2.5. The canonical
 * bytes here leave an odd row's unused nibble 0; the golden input sets it to 0xA. */
static int write_qc4w(pw_context *ctx, FILE *m, const char *dir) {
    enum { QN = 5, QK = 37, QZP = 8, ROW = (QK + 1) / 2 };
    uint8_t nk[QN * ROW];
    float scale[QN], bias[QN];
    memset(nk, 0, sizeof nk);
    for (int n = 0; n < QN; ++n) {
        for (int k = 0; k < QK; ++k) {
            const int v = (5 * n + 3 * k + (n * k) % 7) % 16 - 8 + QZP;
            nk[n * ROW + k / 2] |= (uint8_t)(v << (4 * (k & 1)));
        }
        scale[n] = 0.25f * (float)(n + 1) * (n % 2 ? -1.0f : 1.0f);
        bias[n] = (float)n - 2.5f;
    }
    /* canonical: u32 N, u32 K, u32 zero point, the nibble rows, f32 scale[N], f32 bias[N] */
    uint8_t canon[12 + sizeof nk + sizeof scale + sizeof bias];
    const uint32_t head[3] = {QN, QK, QZP};
    memcpy(canon, head, 12);
    memcpy(canon + 12, nk, sizeof nk);
    memcpy(canon + 12 + sizeof nk, scale, sizeof scale);
    memcpy(canon + 12 + sizeof nk + sizeof scale, bias, sizeof bias);
    char fields[256], file[128];
    snprintf(fields, sizeof fields, "format=QC4W kind=qc4w_canonical n=%d k=%d zero_point=%d", QN, QK, QZP);
    int rc = emit(ctx, m, dir, "QC4W.canonical.bin", canon, sizeof canon, fields);
    pw_qc4w_weights w;
    pw_qc4w_weights_init(&w);
    w.out = QN;
    w.in = QK;
    w.data = nk;
    w.scale = scale;
    w.bias = bias;
    w.zero_point = QZP;
    const char *done[16];
    int ndone = 0;
    for (size_t i = 0; i < pw_kernel_count() && rc == 0; ++i) {
        const pw_kernel_info *k = pw_kernel_info_get(i);
        if (k->kind != PW_WEIGHT_QC4W || k->family == NULL) continue;
        int seen = 0;
        for (int j = 0; j < ndone; ++j) seen |= strcmp(done[j], k->family) == 0;
        if (seen || ndone == 16) continue;
        done[ndone++] = k->family;
        pw_packed_form d;
        if (pw_pack_family_qc4w(ctx, &w, k->family, &d, NULL, 0) != PW_OK) continue;
        uint8_t *pk = calloc(1, (size_t)d.bytes);
        if (pk == NULL) return pw_cli_fail("fixtures", "out of memory");
        if (pw_pack_family_qc4w(ctx, &w, k->family, &d, pk, d.bytes) != PW_OK) {
            free(pk);
            return pw_cli_fail("fixtures", "%s", pw_context_message(ctx));
        }
        snprintf(file, sizeof file, "QC4W.%s.bin", d.family);
        snprintf(fields, sizeof fields, "format=QC4W kind=packed family=%s nr=%d kr=%d sr=%d version=%d n=%d k=%d",
                 d.family, (int)d.nr, (int)d.kr, (int)d.sr, (int)d.version, QN, QK);
        rc = emit(ctx, m, dir, file, pk, (size_t)d.bytes, fields);
        free(pk);
    }
    return rc;
}

int pw_cli_fixtures_all(const char *dir) {
    if (mkdir_p(dir) != 0) return pw_cli_fail("fixtures", "cannot create '%s': %s", dir, strerror(errno));
    char path[4096];
    snprintf(path, sizeof path, "%s/MANIFEST.txt", dir);
    /* The manifest is collected in memory and written last, like every file here through a
     * temporary: a failure leaves the previous MANIFEST.txt (or none), never half of one. */
    char *mtext = NULL;
    size_t mbytes = 0;
    FILE *m = open_memstream(&mtext, &mbytes);
    if (m == NULL) return pw_cli_fail("fixtures", "out of memory");
    pw_context *ctx = pw_cli_context("fixtures", 0, 1);
    if (ctx == NULL) {
        fclose(m);
        free(mtext);
        return PW_EXIT_USAGE;
    }
    fprintf(m,
            "# packwise %s layout fixtures (include/packwise/fixtures.h explains them).\n"
            "# tags: block (o, b) of a rows x blocks grid has canonical id o*blocks+b; its first\n"
            "#   min(4, block_bytes) bytes are id's little-endian bytes XOR (0xA5 + 0x3B*p) & 0xFF,\n"
            "#   byte p >= 4 is (167*p + h(id)) & 0xFF. Orders: row_major = canonical (o*blocks+b),\n"
            "#   input_block_major = the kernel order (b*rows+o), row_tiled_N = (o/N)*N*blocks + b*N + o%%N.\n"
            "# values: canonical bytes of a small weight and its exactly known decoded float32 values.\n"
            "# packed: that value fixture in a kernel family's private packed form.\n"
            "# QC4W: canonical N x K nibbles (low nibble = even k, zero point 8) with f32 scale and bias,\n"
            "#   and their packed bytes in every QC4W family (tiles of nr channels, K padded to 32,\n"
            "#   kr-value chunks interleaved, then int32 weight sums, f32 scales, f32 bias per tile).\n",
            pw_version());
    int rc = 0;
    for (int f = 0; f < PW_FORMAT_COUNT && rc == 0; ++f) rc = write_format(ctx, m, dir, (pw_format)f);
    if (rc == 0) rc = write_qc4w(ctx, m, dir);
    if (fclose(m) != 0 && rc == 0) rc = pw_cli_fail("fixtures", "out of memory");
    if (rc == 0) rc = pw_cli_write_file("fixtures", ctx, path, mtext, mbytes, NULL, 0);
    free(mtext);
    pw_context_destroy(ctx);
    return rc;
}
