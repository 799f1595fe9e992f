/* Kernel names for `packwise formats`: the usable, non-reference kernels of the list, best first. */
#include "cli.h"

#include <string.h>

size_t pw_cli_kernels_for_format(pw_context *ctx, pw_format format, const char **names, size_t cap) {
    size_t n = 0;
    /* Reference kernels last: they serve every format and are usable with --kernel too. */
    for (int pass = 0; pass < 2; ++pass) {
        for (size_t i = 0; i < pw_kernel_count() && n < cap; ++i) {
            const pw_kernel_info *k = pw_kernel_info_get(i);
            if (k->format != format || (k->is_reference != 0) != (pass == 1)) continue;
            if (!pw_kernel_usable(ctx, i)) continue;
            names[n++] = k->name;
        }
    }
    return n;
}
