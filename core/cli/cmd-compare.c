/* core/cli/cmd-compare.c - polysandbox compare (placeholder until the reports land) */
#include "config.h"

#include "eval-cli.h"

int cli_cmd_compare(cli_global *g, int argc, char **argv)
{
    (void)g;
    (void)argc;
    (void)argv;
    cli_err("compare: not yet");
    return CLI_EXIT_ERROR;
}
