/* Output files of the commands: "-", in place, or through a temporary (cli.h, base/file_io.h). */
#include "cli.h"

#include <string.h>
#include <unistd.h>

int pw_cli_out_open(const char *cmd, pw_context *ctx, pw__outfile *f, const char *path,
                    const char *const *inputs, size_t n_inputs) {
    if (strcmp(path, "-") == 0) {
        fflush(stdout); /* what stdio holds goes first */
        pw__outfile_borrow(f, STDOUT_FILENO, "stdout");
        return PW_EXIT_OK;
    }
    if (pw__outfile_open(ctx, f, path, PW__OUT_SPECIAL_IN_PLACE, inputs, n_inputs) != PW_OK)
        return pw_cli_fail(cmd, "%s", pw_context_message(ctx));
    return PW_EXIT_OK;
}

int pw_cli_out_write(const char *cmd, pw_context *ctx, pw__outfile *f, const void *data,
                     size_t bytes) {
    if (pw__outfile_write(ctx, f, data, bytes) != PW_OK)
        return pw_cli_fail(cmd, "%s", pw_context_message(ctx));
    return PW_EXIT_OK;
}

int pw_cli_out_commit(const char *cmd, pw_context *ctx, pw__outfile *f) {
    if (pw__outfile_commit(ctx, f, PW__OUT_KEEP_SIZE) != PW_OK)
        return pw_cli_fail(cmd, "%s", pw_context_message(ctx));
    return PW_EXIT_OK;
}

int pw_cli_write_file(const char *cmd, pw_context *ctx, const char *path, const void *data,
                      size_t bytes, const char *const *inputs, size_t n_inputs) {
    pw__outfile f;
    int rc = pw_cli_out_open(cmd, ctx, &f, path, inputs, n_inputs);
    if (rc == PW_EXIT_OK) rc = pw_cli_out_write(cmd, ctx, &f, data, bytes);
    if (rc == PW_EXIT_OK) rc = pw_cli_out_commit(cmd, ctx, &f);
    pw__outfile_abort(&f);
    return rc;
}
