/*
 * packwise verify --format F --rows R --blocks B --order kernel|canonical|row_tiled_N FILE
 * disagreement: exit 0 when FILE holds exactly the tag fixture in that order,
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
    "Exit 0 when FILE holds exactly the tag fixture of that grid in that order; otherwise\n"
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
    if (!g.have_format || g.rows < 1 || g.blocks < 1 || !have_order || file == NULL)
        return pw_cli_fail("verify", "usage: packwise verify --format F --rows R --blocks B "
                                     "--order kernel|canonical|row_tiled_N FILE");
    a->grid = g;
    a->file = file;
    return PW_CLI_RUN;
}

int pw_cli_verify_run(const pw_cli_verify_args *a) {
    const pw_cli_grid g = a->grid;
    const char *file = a->file;
    pw_context *ctx = pw_cli_context("verify", 0, 1);
    if (ctx == NULL) return PW_EXIT_USAGE;
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
