/* cmd_lp.c — placeholder until the real command lands. */
#include "cli.h"
#include "commands.h"

int cmd_lp(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    sd_error e;
    sd_error_set(&e, SD_EINTERNAL, "'lp' is not implemented yet");
    return cli_fail(&e);
}
