/* main.c — `simdec`: cli_dispatch (cli/api.c) runs one command from its
 * table.  The commands live in cmd_*.c; they use only the library's public
 * headers and cli.h. */
#include <stdio.h>

#include "../src/sd_error.h"
#include "../treelp/sd_treelp.h"
#include "cli.h"
#include "commands.h"

int main(int argc, char **argv)
{
    sd_gsl_quiet();
    sd_treelp_install(); /* tree-lp's plans (sims/verifiers/tree_lp.c) */
    return cli_dispatch(argc - 1, argv + 1);
}
