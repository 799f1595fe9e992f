/* The public face of base/file_io.c (packwise/file.h): a heap pw_output around a
 * pw__outfile, freed through the allocator of the context that opened it. */
#include "packwise/file.h"

#include "base/file_io.h"

struct pw_output {
    pw__outfile f;
    pw_allocator allocator;
};

static pw_status output_new(pw_context *ctx, pw_output **out) {
    PW__FAIL_IF(ctx == NULL || out == NULL, ctx, PW_ERR_INVALID_ARGUMENT,
                "pw_output_open: NULL argument");
    *out = NULL;
    pw_output *o = pw__alloc(ctx, sizeof *o, 64);
    PW__FAIL_IF(o == NULL, ctx, PW_ERR_OUT_OF_MEMORY, "pw_output_open: out of memory");
    pw__outfile_init(&o->f);
    o->allocator = ctx->allocator;
    *out = o;
    return PW_OK;
}

pw_status pw_output_open(pw_context *ctx, const char *path, unsigned flags,
                         const char *const *inputs, size_t n_inputs, pw_output **out) {
    PW__FAIL_IF(flags & ~PW_OUTPUT_SPECIAL_IN_PLACE, ctx, PW_ERR_INVALID_ARGUMENT,
                "pw_output_open: unknown flags 0x%x", flags);
    PW__FAIL_IF(n_inputs > 0 && inputs == NULL, ctx, PW_ERR_INVALID_ARGUMENT,
                "pw_output_open: %zu inputs and no array", n_inputs);
    pw_output *o = NULL;
    PW__TRY(output_new(ctx, &o));
    const pw_status st = pw__outfile_open(
        ctx, &o->f, path, flags & PW_OUTPUT_SPECIAL_IN_PLACE ? PW__OUT_SPECIAL_IN_PLACE : 0,
        inputs, n_inputs);
    if (st != PW_OK) {
        pw_output_close(o);
        return st;
    }
    *out = o;
    return PW_OK;
}

pw_status pw_output_open_fd(pw_context *ctx, int fd, const char *name, pw_output **out) {
    PW__FAIL_IF(fd < 0, ctx, PW_ERR_INVALID_ARGUMENT, "pw_output_open_fd: descriptor %d", fd);
    pw_output *o = NULL;
    PW__TRY(output_new(ctx, &o));
    pw__outfile_borrow(&o->f, fd, name ? name : "(descriptor)");
    *out = o;
    return PW_OK;
}

pw_status pw_output_write(pw_context *ctx, pw_output *output, const void *data, uint64_t bytes) {
    PW__FAIL_IF(output == NULL || (data == NULL && bytes > 0), ctx, PW_ERR_INVALID_ARGUMENT,
                "pw_output_write: NULL argument");
    PW__FAIL_IF(output->f.fd < 0, ctx, PW_ERR_INVALID_ARGUMENT,
                "pw_output_write: '%s' is already finished", output->f.name);
    return pw__outfile_write(ctx, &output->f, data, bytes);
}

pw_status pw_output_commit(pw_context *ctx, pw_output *output) {
    PW__FAIL_IF(output == NULL, ctx, PW_ERR_INVALID_ARGUMENT, "pw_output_commit: NULL output");
    PW__FAIL_IF(output->f.fd < 0, ctx, PW_ERR_INVALID_ARGUMENT,
                "pw_output_commit: '%s' is already finished", output->f.name);
    return pw__outfile_commit(ctx, &output->f, PW__OUT_KEEP_SIZE);
}

const char *pw_output_path(const pw_output *output) {
    if (output == NULL || output->f.fd < 0) return "";
    return output->f.tmp[0] ? output->f.tmp : output->f.name;
}

const char *pw_output_destination(const pw_output *output) {
    return output == NULL || output->f.in_place ? "" : output->f.dest;
}

void pw_output_close(pw_output *output) {
    if (output == NULL) return;
    pw__outfile_abort(&output->f);
    const pw_allocator a = output->allocator;
    a.free(a.user, output);
}

pw_status pw_input_open(pw_context *ctx, const char *path, unsigned flags, int *fd,
                        struct stat *st) {
    PW__FAIL_IF(path == NULL || fd == NULL, ctx, PW_ERR_INVALID_ARGUMENT,
                "pw_input_open: NULL argument");
    PW__FAIL_IF(flags & ~PW_INPUT_REGULAR, ctx, PW_ERR_INVALID_ARGUMENT,
                "pw_input_open: unknown flags 0x%x", flags);
    struct stat local;
    return pw__input_open(ctx, path, flags & PW_INPUT_REGULAR ? PW__IN_REGULAR : 0, fd,
                          st ? st : &local);
}

const char *pw_file_kind_name(unsigned mode) { return pw__file_kind((mode_t)mode); }
