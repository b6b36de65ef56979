/* main.c — `simdec`: dispatches to one command from a table.  The commands
 * live in cmd_*.c; they use only the library's public headers and cli.h. */
#include <stdio.h>
#include <string.h>

#include "../src/sd_error.h"
#include "cli.h"
#include "suggest.h"
#include "../src/sd_version.h"
#include "commands.h"


typedef struct {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *summary;
} S_command;

static const S_command S_commands[] = {
    {"run", cmd_run, "Monte-Carlo of one verifier on a model (rejections, target calls, accepted lengths)"},
    {"check", cmd_check, "is a verifier lossless? chi-square test of its output against the target"},
    {"eval", cmd_eval, "exact evaluators: rejections, generation (any verifier), accept-length, speedup, ..."},
    {"lp", cmd_lp, "exact optima by linear programming (GLPK): otm, block-ot, valid-verify, pareto, tree-valid, tree-ot"},
    {"plot", cmd_plot, "regenerate the papers' figures with gnuplot (PNG beside data and script)"},
    {"gen", cmd_gen, "write a random nonstationary draft/target chain (simdec-chain-1 JSON)"},
    {NULL, NULL, NULL},
};

static void S_help(FILE *f)
{
    fputs("Usage: simdec COMMAND [OPTIONS]\n"
          "\n"
          "Theory and simulation of speculative-decoding verifiers on synthetic\n"
          "nonstationary Markov chains: draft model p, target model q.\n"
          "\n"
          "Commands:\n", f);
    for (const S_command *c = S_commands; c->name; c++)
        fprintf(f, "  %-7s %s\n", c->name, c->summary);
    fputs("\n"
          "  simdec COMMAND --help    options of one command\n"
          "  simdec --version         version\n"
          "\n"
          "Try: simdec run --algo block --T 50\n"
          "Exit status: 0 ok, 64 usage, 65 bad data or problem too large, 66 cannot\n"
          "open input, 70 internal or solver failure, 71 out of memory, 73 cannot write.\n", f);
}

int main(int argc, char **argv)
{
    sd_gsl_quiet();
    if (argc < 2) {
        fputs("simdec: no command given\n", stderr);
        S_help(stderr);
        return EX_USAGE_;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
        S_help(stdout);
        return cli_stdout_status();
    }
    if (strcmp(cmd, "--version") == 0) {
        printf("simdec %s\n", SD_VERSION);
        return cli_stdout_status();
    }
    /* A command that succeeded but whose output did not reach stdout
     * (--help, --list into a full disk) fails with 73. */
    for (const S_command *c = S_commands; c->name; c++)
        if (strcmp(c->name, cmd) == 0) {
            int status = c->fn(argc - 1, argv + 1);
            return status == EX_OK_ ? cli_stdout_status() : status;
        }
    char hint[160];
    cli_suggest sg;
    cli_suggest_init(&sg, cmd);
    for (const S_command *c = S_commands; c->name; c++)
        cli_suggest_add(&sg, c->name);
    return cli_usage_error(NULL, "unknown command '%s'%s", cmd, cli_suggest_text(&sg, "", hint, sizeof hint));
}
