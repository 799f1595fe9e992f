/* packwise prepack: placeholder until its issue lands; refuses with exit 2. */
#include "cli.h"

int pw_cmd_prepack(int argc, char **argv) {
    (void)argc;
    (void)argv;
    return pw_cli_fail("prepack", "not available in this build yet");
}
