/* cli_eval_common.c — the shared parts of the one-verifier eval commands
 * (cli_eval_common.h). */
#include <getopt.h>

#include "cli_eval_common.h"

int cli_eval_option(cli_eval_req *e, const char *head, int c, const char *arg, int *status)
{
    *status = -1;
    if (cli_verifier_option(&e->mo, &e->cv, c, arg, status))
        return 1;
    switch (c) {
    case 'h': cli_verifier_help(head, &e->cv); *status = 0; return 1;
    case CLI_EVAL_OPT_JSON: e->json = 1; return 1;
    case CLI_EVAL_OPT_ALGO: return 1;
    default: return 0;
    }
}

int cli_eval_read(const char *cmd, int argc, char **argv, const cli_field *fields, size_t n,
                  const struct option *base, const char *const *skip, cli_field_fn fn, cli_eval_req *e, void *rq,
                  int (*run)(void *rq))
{
    static const int refuse[] = {0};
    cli_model_init(&e->mo);
    e->json = !argv;
    int status = cli_verifier_read(cmd, argc, argv, NULL, fields, n, base, skip, refuse, fn, rq, &e->cv, &e->mo);
    return status >= 0 ? status : run(rq);
}
