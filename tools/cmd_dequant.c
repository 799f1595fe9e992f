/*
 * packwise dequant FILE TENSOR -o OUT
 * Decode one tensor to float32 little-endian in logical row-major order:
 * [out, in] for a 2-D weight, and for every rank the order of the file's
 * bytes (ne[0] fastest), which is row-major of the reversed ne. Blocks are
 * decoded straight from the mapping in chunks, so memory stays small for
 * large tensors. Bad input exits 2 with a one-line message naming the file,
 * the field or tensor, and the byte offset.
 */
#include "cli_args.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* Blocks decoded per chunk (at most 64 Ki floats of the largest block size). */
#define CHUNK_ELEMENTS 65536

static int dequant(pw_context *ctx, const char *file, const pw_view *v, pw_output *out) {
    const pw_format_info *info = pw_format_get(v->format);
    const uint64_t blocks = (uint64_t)pw_view_blocks(v);
    const uint64_t per_chunk = CHUNK_ELEMENTS / (uint64_t)info->block_size;
    float *buf = malloc(sizeof(float) * CHUNK_ELEMENTS);
    if (buf == NULL) return pw_cli_fail("dequant", "out of memory");
    int rc = PW_EXIT_OK;
    /* The view is ROW_MAJOR and dense (a file's bytes), so its blocks in memory
     * order are its elements in logical row-major order. */
    for (uint64_t b = 0; b < blocks && rc == PW_EXIT_OK; b += per_chunk) {
        const uint64_t n = blocks - b < per_chunk ? blocks - b : per_chunk;
        const pw_status st = pw_format_decode(ctx, v->format,
                                              v->data + b * (uint64_t)info->block_bytes,
                                              (size_t)n, buf);
        if (st != PW_OK)
            rc = pw_cli_fail("dequant", "%s: tensor '%s': %s: %s", file, v->name,
                             pw_status_str(st), pw_context_message(ctx));
        else
            rc = pw_cli_out_write("dequant", ctx, out, buf,
                                  sizeof(float) * (size_t)(n * (uint64_t)info->block_size));
    }
    free(buf);
    return rc;
}

static const char HELP[] =
    "usage: packwise dequant FILE TENSOR -o OUT\n"
    "TENSOR of the GGUF FILE decoded to float32 little-endian in logical row-major order\n"
    "([out, in] for a 2-D weight). FILE must be a regular file.\n"
    PW_CLI_HELP_OUTPUT_IN_PLACE;

int pw_cli_dequant_parse(int argc, char **argv, pw_cli_dequant_args *a) {
    memset(a, 0, sizeof *a);
    for (int i = 1; i < argc; ++i) {
        if (pw_cli_is_help(argv[i])) return pw_cli_help(HELP);
        else if (strcmp(argv[i], "-o") == 0 && i + 1 < argc) a->out = argv[++i];
        else if (argv[i][0] == '-' && argv[i][1] != '\0')
            return pw_cli_fail("dequant", "unknown option '%s'", argv[i]);
        else if (a->file == NULL) a->file = argv[i];
        else if (a->tensor == NULL) a->tensor = argv[i];
        else return pw_cli_fail("dequant", "unexpected argument '%s'", argv[i]);
    }
    if (a->file == NULL || a->tensor == NULL || a->out == NULL)
        return pw_cli_fail("dequant", "usage: packwise dequant FILE TENSOR -o OUT");
    return PW_CLI_RUN;
}

int pw_cli_dequant_run(const pw_cli_dequant_args *a) {
    const char *file = a->file, *tensor = a->tensor, *out_path = a->out;
    /* float32 is written as the host stores it: packwise targets little-endian hosts */
    const uint32_t one = 1;
    if (*(const unsigned char *)&one != 1)
        return pw_cli_fail("dequant", "this host is big-endian; output would not be little-endian");
    pw_context *ctx = pw_cli_context("dequant", 0, 1);
    if (ctx == NULL) return PW_EXIT_USAGE;
    pw_gguf_open_options o;
    pw_gguf_open_options_init(&o);
    o.orientation = PW_ORIENT_OUT_IN;
    pw_gguf *g = NULL;
    int rc = PW_EXIT_OK;
    pw_status st = pw_gguf_open(ctx, file, &o, &g);
    if (st != PW_OK) {
        rc = pw_cli_fail("dequant", "%s: %s", pw_status_str(st), pw_context_message(ctx));
        goto done;
    }
    int64_t index = -1;
    pw_gguf_tensor_info info;
    pw_view v;
    memset(&v, 0, sizeof v);
    st = pw_gguf_find_tensor(ctx, g, tensor, &index);
    if (st == PW_OK) st = pw_gguf_tensor_info_get(ctx, g, index, &info);
    /* A tensor with a zero dim has no view; its float32 form is empty. */
    const int empty = st == PW_OK && info.format_known && info.bytes == 0;
    if (st == PW_OK && !empty) st = pw_gguf_tensor_view(ctx, g, index, &v);
    if (st != PW_OK) {
        rc = pw_cli_fail("dequant", "%s: %s: %s", file, pw_status_str(st),
                         pw_context_message(ctx));
        goto done;
    }
    /* The file is mapped: an output that is the file itself is refused before it is touched. */
    pw_output *out = NULL;
    rc = pw_cli_out_open("dequant", ctx, &out, out_path, &file, 1);
    if (rc == PW_EXIT_OK && !empty) rc = dequant(ctx, file, &v, out);
    if (rc == PW_EXIT_OK) rc = pw_cli_out_commit("dequant", ctx, out);
    pw_output_close(out);
done:
    pw_gguf_close(g);
    pw_context_destroy(ctx);
    return rc;
}
