/* cmd_eval.c — `simdec eval WHAT`: exact evaluators (SPEC §3), one
 * subcommand each, dispatched from a table. */
#include <getopt.h>
#include <math.h>
#include <string.h>

#include "../src/sd_exact.h"
#include "cli.h"
#include "commands.h"

/* `eval rejections`: Theorem 1 of 004_2700e131d6873633.txt. */
static const char S_rej_help[] =
    "Usage: simdec eval rejections [model] [--json]\n"
    "\n"
    "Expected number of rejections of token-level speculative decoding with\n"
    "lookahead to the horizon, exactly (Theorem 1 of Yin et al., 004_):\n"
    "  E[N_rej] = sum_n sum_a Q_{n-1}(a) TV(p_n(.|a), q_n(.|a)),  O(T V^2).\n"
    "\n"
    "  --json          one JSON object: {\"rejections\": x, ...}\n"
    "\n";

static int S_rejections(int argc, char **argv)
{
    enum { O_JSON = CLI_OPT_FIRST_FREE };
    static const struct option opts[] = {
        CLI_MODEL_LONGOPTS,
        {"json", no_argument, 0, O_JSON},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    cli_model_opts mo;
    cli_model_init(&mo);
    int json = 0, c, status = -1;
    sd_error err;
    optind = 0;
    opterr = 0;
    while (status < 0 && (c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        int r = cli_model_option(&mo, c, optarg, &err);
        if (r < 0)
            status = cli_fail(&err);
        else if (r == 0 && c == 'h') {
            fputs(S_rej_help, stdout);
            fputs(cli_model_help, stdout);
            status = 0;
        } else if (r == 0 && c == O_JSON)
            json = 1;
        else if (r == 0)
            status = c == ':' ? cli_usage_error("eval rejections", "%s needs a value", argv[optind - 1])
                              : cli_usage_error("eval rejections", "unknown option '%s'", argv[optind - 1]);
    }
    if (status < 0 && optind < argc)
        status = cli_usage_error("eval rejections", "unexpected argument '%s'", argv[optind]);
    sd_chain *ch = NULL;
    if (status < 0 && !(ch = cli_model_build(&mo, &err)))
        status = cli_fail(&err);
    if (status >= 0) {
        cli_model_release(&mo);
        return status;
    }
    double rej;
    if (sd_exact_rejections(ch, &rej, &err)) {
        status = cli_fail(&err);
    } else if (json) {
        json_t *o = json_object();
        json_object_set_new(o, "rejections", json_real(rej));
        json_object_set_new(o, "M", json_integer(1));
        json_object_set_new(o, "method", json_string("theorem1"));
        cli_model_describe(&mo, ch, o);
        status = cli_print_json(o);
    } else {
        printf("model       V=%zu, T=%zu\n", ch->V, ch->T);
        printf("E[N_rej]    %.12f   (Theorem 1, token-level SD, lookahead to the horizon)\n", rej);
        status = 0;
    }
    sd_chain_free(ch);
    cli_model_release(&mo);
    return status;
}

typedef struct {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *summary;
} S_sub;

static const S_sub S_subs[] = {
    {"rejections", S_rejections, "expected rejections: Theorem 1 of Yin et al."},
    {NULL, NULL, NULL},
};

static void S_help(FILE *f)
{
    fputs("Usage: simdec eval WHAT [OPTIONS]\n\nExact evaluators:\n", f);
    for (const S_sub *s = S_subs; s->name; s++)
        fprintf(f, "  %-20s %s\n", s->name, s->summary);
    fputs("\n  simdec eval WHAT --help   options of one evaluator\n", f);
}

int cmd_eval(int argc, char **argv)
{
    if (argc < 2) {
        S_help(stderr);
        return EX_USAGE_;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        S_help(stdout);
        return 0;
    }
    for (const S_sub *s = S_subs; s->name; s++)
        if (strcmp(s->name, argv[1]) == 0)
            return s->fn(argc - 1, argv + 1);
    return cli_usage_error("eval", "unknown evaluator '%s'", argv[1]);
}
