/* Kernel names for `packwise formats`: filled from the kernel list once it exists. */
#include "cli.h"

size_t pw_cli_kernels_for_format(pw_context *ctx, pw_format format, const char **names, size_t cap) {
    (void)ctx;
    (void)format;
    (void)names;
    (void)cap;
    return 0;
}
