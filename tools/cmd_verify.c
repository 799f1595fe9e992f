/*
 * packwise verify --format F --rows R --blocks B --order kernel|canonical|row_tiled_N FILE
 * packwise verify --format F --values --order kernel|canonical|row_tiled_N FILE
 * disagreement: exit 0 when FILE holds exactly the tag fixture (with --values: the
 * format's value fixture, `packwise fixtures --values`) in that order,
 * else exit 1 with one line naming the first misplaced block, where it was
 * expected (flat index and order) and what was found there. FILE may be a pipe or
 * a FIFO: it is read up to the fixture's size, and more than that is refused (exit 2).
 */
#include "cli_args.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* The bytes to check: a regular file mapped whole (its size bounds it, and a long file is
 * reported as long, exit 1); anything else (a pipe, a FIFO, a device) read up to one byte
 * more than the fixture, so an endless input (/dev/zero) cannot fill memory: more than the
 * fixture is refused, exit 2. */
typedef struct input {
    unsigned char *bytes;
    uint64_t length;
    int mapped;
} input;

static void input_free(input *in) {
    if (in->mapped) munmap(in->bytes, (size_t)in->length);
    else free(in->bytes);
    in->bytes = NULL;
}

static int read_input(pw_context *ctx, const char *file, uint64_t need, input *in) {
    int fd = -1;
    struct stat sb;
    if (pw_input_open(ctx, file, 0, &fd, &sb) != PW_OK) return pw_cli_fail("verify", "%s", pw_context_message(ctx));
    int rc = PW_EXIT_OK;
    if (S_ISREG(sb.st_mode)) {
        in->length = (uint64_t)sb.st_size;
        if (in->length > SIZE_MAX) {
            rc = pw_cli_fail("verify", "'%s': %llu bytes do not fit the address space", file,
                             (unsigned long long)in->length);
        } else if (in->length > 0) {
            void *m = mmap(NULL, (size_t)in->length, PROT_READ, MAP_PRIVATE, fd, 0);
            if (m == MAP_FAILED) rc = pw_cli_fail("verify", "cannot read '%s': %s", file, strerror(errno));
            else {
                in->bytes = m;
                in->mapped = 1;
            }
        }
        close(fd);
        return rc;
    }
    const uint64_t cap = need + 1;
    in->bytes = cap <= SIZE_MAX ? malloc((size_t)cap) : NULL;
    if (in->bytes == NULL) rc = pw_cli_fail("verify", "out of memory");
    while (rc == PW_EXIT_OK && in->length < cap) {
        const ssize_t n = read(fd, in->bytes + in->length, (size_t)(cap - in->length));
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) rc = pw_cli_fail("verify", "cannot read '%s': %s", file, strerror(errno));
        if (n <= 0) break;
        in->length += (uint64_t)n;
    }
    close(fd);
    if (rc == PW_EXIT_OK && in->length > need)
        rc = pw_cli_fail("verify", "'%s' (%s) holds more than the %llu bytes of the fixture; refused after "
                         "reading %llu bytes", file, pw_file_kind_name(sb.st_mode), (unsigned long long)need,
                         (unsigned long long)in->length);
    return rc;
}

static const char HELP[] =
    "usage: packwise verify --format F --rows R --blocks B --order kernel|canonical|row_tiled_N FILE\n"
    "       packwise verify --format F --values --order kernel|canonical|row_tiled_N FILE\n"
    "Exit 0 when FILE holds exactly the tag fixture of that grid in that order (with --values:\n"
    "the format's value fixture, as packwise fixtures --values writes it); otherwise\n"
    "exit 1 and one line naming the first misplaced block, where it was expected and what\n"
    "was found there. FILE may be a pipe or a FIFO: it is read up to the fixture's size, and\n"
    "more than that is refused (exit 2).\n";

int pw_cli_verify_parse(int argc, char **argv, pw_cli_verify_args *a) {
    memset(a, 0, sizeof *a);
    pw_cli_grid g = {PW_FORMAT_Q4_0, 0, 0, 0, {PW_ORDER_ROW_MAJOR, 0}};
    int have_order = 0;
    const char *file = NULL;
    for (int i = 1; i < argc; ++i) {
        if (pw_cli_is_help(argv[i])) return pw_cli_help(HELP);
        if (strcmp(argv[i], "--values") == 0) {
            a->values = 1;
            continue;
        }
        const int is_order = strcmp(argv[i], "--order") == 0;
        const int r = pw_cli_grid_option("verify", argc, argv, &i, &g);
        if (r < 0) return PW_EXIT_USAGE;
        if (r > 0) {
            have_order |= is_order;
            continue;
        }
        if (argv[i][0] == '-' && argv[i][1] != '\0') return pw_cli_fail("verify", "unknown option '%s'", argv[i]);
        if (file != NULL) return pw_cli_fail("verify", "unexpected argument '%s'", argv[i]);
        file = argv[i];
    }
    if (a->values && (g.rows > 0 || g.blocks > 0))
        return pw_cli_fail("verify", "%s: the value fixture's grid is fixed; --values takes --format "
                                     "and --order only", g.rows > 0 ? "--rows" : "--blocks");
    if (!g.have_format || (!a->values && (g.rows < 1 || g.blocks < 1)) || !have_order || file == NULL)
        return pw_cli_fail("verify", "usage: packwise verify --format F (--rows R --blocks B | --values) "
                                     "--order kernel|canonical|row_tiled_N FILE");
    a->grid = g;
    a->file = file;
    return PW_CLI_RUN;
}

/* The value fixture of g.format, its bytes in `layout` (row-major first); NULL after a message. */
static unsigned char *value_fixture(pw_context *ctx, pw_format format, pw_layout layout,
                                    uint64_t *bytes, int64_t *rows, int64_t *blocks) {
    uint64_t count = 0;
    if (pw_fixture_values(ctx, format, NULL, bytes, NULL, &count, rows, blocks) != PW_OK) return NULL;
    unsigned char *canon = malloc((size_t)*bytes), *out = malloc((size_t)*bytes);
    float *vals = malloc(sizeof(float) * (size_t)(count ? count : 1));
    const pw_block_grid grid = {*rows, *blocks, pw_format_get(format)->block_bytes,
                                {PW_ORDER_ROW_MAJOR, 0}};
    pw_status st = canon && out && vals ? PW_OK : PW_ERR_OUT_OF_MEMORY;
    if (st == PW_OK) st = pw_fixture_values(ctx, format, canon, bytes, vals, &count, rows, blocks);
    if (st == PW_OK) st = pw_bytes_reorder(ctx, &grid, canon, *bytes, layout, out, *bytes);
    free(canon);
    free(vals);
    if (st != PW_OK) {
        free(out);
        return NULL;
    }
    return out;
}

/* --values: FILE against the value fixture in the order named; the other order is named
 * when the bytes are exactly in it. */
static int verify_values(pw_context *ctx, const pw_cli_grid *g, const char *file) {
    uint64_t need = 0;
    int64_t rows = 0, blocks = 0;
    unsigned char *want = value_fixture(ctx, g->format, g->layout, &need, &rows, &blocks);
    if (want == NULL) return pw_cli_fail("verify", "%s: %s", file, pw_context_message(ctx));
    input in = {NULL, 0, 0};
    int rc = read_input(ctx, file, need, &in);
    const pw_format_info *fi = pw_format_get(g->format);
    char l[32];
    pw_layout_name(g->layout, l, sizeof l);
    if (rc == PW_EXIT_OK && in.length != need) {
        printf("%s: %s value fixture %lldx%lld in %s: %llu bytes given, %llu expected\n", file,
               fi->name, (long long)rows, (long long)blocks, l, (unsigned long long)in.length,
               (unsigned long long)need);
        rc = PW_EXIT_DISAGREE;
    } else if (rc == PW_EXIT_OK && memcmp(in.bytes, want, (size_t)need) != 0) {
        uint64_t f = 0;
        const uint64_t bb = (uint64_t)fi->block_bytes;
        while (memcmp(in.bytes + f * bb, want + f * bb, (size_t)bb) == 0) ++f;
        const pw_layout other = {g->layout.order == PW_ORDER_ROW_MAJOR ? PW_ORDER_INPUT_BLOCK_MAJOR
                                                                        : PW_ORDER_ROW_MAJOR, 0};
        uint64_t ob = 0;
        int64_t orow = 0, oblk = 0;
        unsigned char *alt = value_fixture(ctx, g->format, other, &ob, &orow, &oblk);
        char o[32];
        pw_layout_name(other, o, sizeof o);
        const int in_other = alt != NULL && memcmp(in.bytes, alt, (size_t)need) == 0;
        printf("%s: %s value fixture %lldx%lld in %s: the block at flat index %llu (%s) differs%s%s%s\n",
               file, fi->name, (long long)rows, (long long)blocks, l, (unsigned long long)f, l,
               in_other ? "; every block sits where " : "", in_other ? o : "",
               in_other ? " puts it: the bytes are in the other order" : "");
        free(alt);
        rc = PW_EXIT_DISAGREE;
    } else if (rc == PW_EXIT_OK) {
        printf("agrees: %s value fixture %lldx%lld in %s (%llu bytes)\n", fi->name, (long long)rows,
               (long long)blocks, l, (unsigned long long)need);
    }
    input_free(&in);
    free(want);
    return rc;
}

int pw_cli_verify_run(const pw_cli_verify_args *a) {
    const pw_cli_grid g = a->grid;
    const char *file = a->file;
    pw_context *ctx = pw_cli_context("verify", 0, 1);
    if (ctx == NULL) return PW_EXIT_USAGE;
    if (a->values) {
        const int rc = verify_values(ctx, &g, file);
        pw_context_destroy(ctx);
        return rc;
    }
    uint64_t need = 0;
    pw_status st = pw_fixture_bytes(ctx, g.format, g.rows, g.blocks, &need);
    input in = {NULL, 0, 0};
    int rc = st != PW_OK ? pw_cli_fail_status("verify", ctx, st, file) : read_input(ctx, file, need, &in);
    pw_disagreement_report r;
    if (rc == PW_EXIT_OK) {
        st = pw_disagreement(ctx, in.bytes, in.length, g.format, g.rows, g.blocks, g.layout, &r);
        if (st != PW_OK) rc = pw_cli_fail_status("verify", ctx, st, file);
        else if (r.kind == PW_AGREE) {
            char l[32];
            printf("agrees: %s fixture %lldx%lld in %s (%llu bytes)\n", pw_format_get(g.format)->name,
                   (long long)g.rows, (long long)g.blocks, pw_layout_name(g.layout, l, sizeof l),
                   (unsigned long long)in.length);
        } else {
            printf("%s: %s\n", file, r.message);
            rc = PW_EXIT_DISAGREE;
        }
    }
    input_free(&in);
    pw_context_destroy(ctx);
    return rc;
}
