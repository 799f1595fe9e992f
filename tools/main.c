/* packwise: the command-line tool (packwise.c parses, the cmd_*.c files run). */
#include "cli_args.h"

int main(int argc, char **argv) {
    pw_cli_parsed p;
    const int rc = pw_cli_parse(argc, argv, &p);
    return rc == PW_CLI_RUN ? pw_cli_execute(&p) : rc;
}
