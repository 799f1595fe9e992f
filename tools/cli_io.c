/* Output files of the commands: "-", in place, or through a temporary (cli.h, packwise/file.h). */
#include "cli.h"

#include <string.h>
#include <unistd.h>

int pw_cli_out_open(const char *cmd, pw_context *ctx, pw_output **f, const char *path,
                    const char *const *inputs, size_t n_inputs) {
    *f = NULL;
    if (strcmp(path, "-") == 0) {
        fflush(stdout); /* what stdio holds goes first */
        if (pw_output_open_fd(ctx, STDOUT_FILENO, "stdout", f) != PW_OK)
            return pw_cli_fail(cmd, "%s", pw_context_message(ctx));
        return PW_EXIT_OK;
    }
    if (pw_output_open(ctx, path, PW_OUTPUT_SPECIAL_IN_PLACE, inputs, n_inputs, f) != PW_OK)
        return pw_cli_fail(cmd, "%s", pw_context_message(ctx));
    return PW_EXIT_OK;
}

int pw_cli_out_write(const char *cmd, pw_context *ctx, pw_output *f, const void *data,
                     size_t bytes) {
    if (pw_output_write(ctx, f, data, bytes) != PW_OK)
        return pw_cli_fail(cmd, "%s", pw_context_message(ctx));
    return PW_EXIT_OK;
}

int pw_cli_out_commit(const char *cmd, pw_context *ctx, pw_output *f) {
    if (pw_output_commit(ctx, f) != PW_OK)
        return pw_cli_fail(cmd, "%s", pw_context_message(ctx));
    return PW_EXIT_OK;
}

int pw_cli_write_file(const char *cmd, pw_context *ctx, const char *path, const void *data,
                      size_t bytes, const char *const *inputs, size_t n_inputs) {
    pw_output *f = NULL;
    int rc = pw_cli_out_open(cmd, ctx, &f, path, inputs, n_inputs);
    if (rc == PW_EXIT_OK) rc = pw_cli_out_write(cmd, ctx, f, data, bytes);
    if (rc == PW_EXIT_OK) rc = pw_cli_out_commit(cmd, ctx, f);
    pw_output_close(f);
    return rc;
}
