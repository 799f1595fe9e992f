/* packwise matmul: placeholder until its issue lands; refuses with exit 2. */
#include "cli.h"

int pw_cmd_matmul(int argc, char **argv) {
    (void)argc;
    (void)argv;
    return pw_cli_fail("matmul", "not available in this build yet");
}
