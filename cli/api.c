/* api.c — simdec as a library for other languages (api.h), and the one
 * dispatcher of commands (cli_dispatch) that ./simdec and sd_api_main share. */
#include "api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmd_run.h"
#include "commands.h"
#include "suggest.h"
#include "../src/sd_version.h"

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
    {"referee", cmd_referee, "every lossless verifier's exact accepted length beside the optimum of its class"},
    {"trace", cmd_trace, "verifiers on logged target sequences (.npy rows or ratios): calls, speed-up"},
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
          "  simdec COMMAND --help    options of one command (also: simdec help COMMAND)\n"
          "  simdec help models       the model options (--model, --V, --p/--q, --zipf,\n"
          "                           --arpa, ...), which every command shares\n"
          "  simdec --version         version\n"
          "\n"
          "Try: simdec run --algo block --T 50\n"
          "Exit status: 0 ok, 64 usage, 65 bad data or problem too large, 66 cannot\n"
          "open input, 70 internal or solver failure, 71 out of memory, 73 cannot write.\n", f);
}

/* `simdec help TOPIC [...]`: "models" prints the model options' reference
 * (cli_model_help_full); a command's name runs it with --help (the words
 * after it too: `simdec help eval speedup`); anything else is a usage
 * error that names the topics. */
static int S_help_topic(int argc, char **argv)
{
    const char *topic = argv[0];
    if (strcmp(topic, "models") == 0 || strcmp(topic, "model") == 0) {
        if (argc > 1)
            return cli_usage_error(NULL, "'help models' takes no further words (got '%s')", argv[1]);
        fputs(cli_model_help_full, stdout);
        return cli_stdout_status();
    }
    for (const S_command *c = S_commands; c->name; c++)
        if (strcmp(c->name, topic) == 0) {
            char **args = malloc(((size_t)argc + 2) * sizeof *args);
            if (!args)
                return cli_out_of_memory();
            for (int i = 0; i < argc; i++)
                args[i] = argv[i];
            static char help[] = "--help";
            args[argc] = help;
            args[argc + 1] = NULL;
            int status = c->fn(argc + 1, args);
            free(args);
            return status == EX_OK_ ? cli_stdout_status() : status;
        }
    char hint[160];
    cli_suggest sg;
    cli_suggest_init(&sg, topic);
    cli_suggest_add(&sg, "models");
    for (const S_command *c = S_commands; c->name; c++)
        cli_suggest_add(&sg, c->name);
    return cli_usage_error(NULL, "unknown help topic '%s'%s (topics: models, or a command's name)", topic,
                           cli_suggest_text(&sg, "", hint, sizeof hint));
}

int cli_dispatch(int argc, char **argv)
{
    if (argc < 1) {
        fputs("simdec: no command given\n", stderr);
        S_help(stderr);
        return EX_USAGE_;
    }
    const char *cmd = argv[0];
    if (strcmp(cmd, "help") == 0 && argc >= 2)
        return S_help_topic(argc - 1, argv + 1);
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
            int status = c->fn(argc, argv);
            return status == EX_OK_ ? cli_stdout_status() : status;
        }
    char hint[160];
    cli_suggest sg;
    cli_suggest_init(&sg, cmd);
    for (const S_command *c = S_commands; c->name; c++)
        cli_suggest_add(&sg, c->name);
    return cli_usage_error(NULL, "unknown command '%s'%s", cmd, cli_suggest_text(&sg, "", hint, sizeof hint));
}

/* A copy of s (or of "" when the stream gave none), for the caller. */
static char *S_dup(const char *s)
{
    return strdup(s ? s : "");
}

/* C's stdout and stderr pointed at memory for the duration of a call. */
typedef struct {
    char *obuf, *ebuf;
    size_t olen, elen;
    FILE *mo, *me, *so, *se;
} S_capture;

static int S_capture_begin(S_capture *c)
{
    memset(c, 0, sizeof *c);
    sd_gsl_quiet();
    c->mo = open_memstream(&c->obuf, &c->olen);
    c->me = open_memstream(&c->ebuf, &c->elen);
    if (!c->mo || !c->me) {
        if (c->mo)
            fclose(c->mo);
        if (c->me)
            fclose(c->me);
        free(c->obuf);
        free(c->ebuf);
        return EX_OSERR_;
    }
    /* glibc's stdout and stderr are variables a program may assign (the
     * GNU C Library manual, "Standard Streams"); the commands print through
     * them, so their output lands in memory. */
    fflush(stdout);
    fflush(stderr);
    c->so = stdout;
    c->se = stderr;
    stdout = c->mo;
    stderr = c->me;
    return EX_OK_;
}

static int S_capture_end(S_capture *c, int status, char **out, char **err)
{
    stdout = c->so;
    stderr = c->se;
    if (fclose(c->mo) != 0 && status == 0)
        status = EX_CANTCREAT_;
    fclose(c->me);
    *out = c->obuf ? c->obuf : S_dup("");
    *err = c->ebuf ? c->ebuf : S_dup("");
    return status;
}

int sd_api_main(int argc, char **argv, char **out, char **err)
{
    *out = *err = NULL;
    S_capture cap;
    if (S_capture_begin(&cap))
        return EX_OSERR_;
    return S_capture_end(&cap, cli_dispatch(argc, argv), out, err);
}

/* fn(name, fields) -- cmd_run_fields, cmd_check_fields, cmd_eval_fields
 * or cmd_lp_fields -- on a copy of the fields, output captured.  The
 * plugins are loaded first and their fields left out (a verifier's
 * parameters are known only once its plugin is loaded); a field the
 * command refuses is a usage error naming it. */
static int S_fields_command(int (*fn)(const char *, const cli_field *, size_t), const char *cmd,
                            const char *name, const sd_api_field *fields, size_t n, char **out, char **err)
{
    *out = *err = NULL;
    _Static_assert(sizeof(sd_api_field) == sizeof(cli_field), "the same layout");
    cli_field *f = calloc(n ? n : 1, sizeof *f);
    if (!f)
        return EX_OSERR_;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (strcmp(fields[i].name, "plugin") != 0)
            f[k++] = (cli_field){fields[i].name, fields[i].value};
    S_capture cap;
    if (S_capture_begin(&cap)) {
        free(f);
        return EX_OSERR_;
    }
    sd_error e;
    int status = cli_plugins_load_fields((const cli_field *)fields, n, &e) ? cli_fail(&e) : fn(name, f, k);
    if (status == CLI_NOT_A_FIELD)
        status = cli_fields_refused(cmd, NULL);
    free(f);
    return S_capture_end(&cap, status, out, err);
}

int sd_api_run(const char *algo, const sd_api_field *fields, size_t n, char **out, char **err)
{
    return S_fields_command(cmd_run_fields, "run", algo, fields, n, out, err);
}

int sd_api_eval(const char *what, const sd_api_field *fields, size_t n, char **out, char **err)
{
    return S_fields_command(cmd_eval_fields, "eval", what, fields, n, out, err);
}

int sd_api_lp(const char *problem, const sd_api_field *fields, size_t n, char **out, char **err)
{
    return S_fields_command(cmd_lp_fields, "lp", problem, fields, n, out, err);
}

int sd_api_check(const char *algo, const sd_api_field *fields, size_t n, char **out, char **err)
{
    return S_fields_command(cmd_check_fields, "check", algo, fields, n, out, err);
}

void sd_api_free(void *p)
{
    free(p);
}

static int S_status(const sd_error *e, char *msg, size_t len)
{
    if (msg && len)
        snprintf(msg, len, "%s", e->msg[0] ? e->msg : sd_status_name(e->code));
    return cli_exit_code(e->code);
}

int sd_api_model_load(const char *path, sd_chain **out, char *msg, size_t len)
{
    sd_error e;
    *out = NULL;
    return sd_chain_load(path, out, &e) ? S_status(&e, msg, len) : EX_OK_;
}

int sd_api_model_generate(size_t V, size_t T, unsigned long seed, double alpha, double mix,
                          sd_chain **out, char *msg, size_t len)
{
    sd_error e;
    sd_gen_params gp = {V, T, seed, alpha, mix, SD_GEN_DIRICHLET};
    return (*out = sd_chain_generate(&gp, &e)) ? EX_OK_ : S_status(&e, msg, len);
}

int sd_api_model_from_arrays(size_t V, size_t T, size_t draft_steps, size_t target_steps,
                             const double *init, const double *draft, const double *target,
                             sd_chain **out, char *msg, size_t len)
{
    sd_error e;
    *out = NULL;
    if (T >= 1 && ((draft_steps != 1 && draft_steps != T) || (target_steps != 1 && target_steps != T))) {
        sd_error_set(&e, SD_EUSAGE, "model: %zu draft and %zu target steps at horizon %zu; expected 1 or %zu each",
                     draft_steps, target_steps, T, T);
        return S_status(&e, msg, len);
    }
    sd_chain *c = sd_chain_alloc(V, T, draft_steps, target_steps, &e);
    if (!c)
        return S_status(&e, msg, len);
    memcpy(c->init, init, V * sizeof *init);
    memcpy(c->draft, draft, draft_steps * V * V * sizeof *draft);
    memcpy(c->target, target, target_steps * V * V * sizeof *target);
    if (sd_chain_validate(c, "model", &e)) {
        sd_chain_free(c);
        return S_status(&e, msg, len);
    }
    *out = c;
    return EX_OK_;
}

void sd_api_model_shape(const sd_chain *c, size_t shape[4])
{
    shape[0] = c->V;
    shape[1] = c->T;
    shape[2] = c->draft_steps;
    shape[3] = c->target_steps;
}

void sd_api_model_copy(const sd_chain *c, double *init, double *draft, double *target)
{
    memcpy(init, c->init, c->V * sizeof *init);
    memcpy(draft, c->draft, c->draft_steps * c->V * c->V * sizeof *draft);
    memcpy(target, c->target, c->target_steps * c->V * c->V * sizeof *target);
}

static int S_write(FILE *f, void *ctx, sd_error *err)
{
    return sd_chain_write(ctx, f, err);
}

int sd_api_model_save(const sd_chain *c, const char *path, char *msg, size_t len)
{
    sd_error e;
    /* cli_write_atomic's writer takes a non-const context; it only reads. */
    union {
        const sd_chain *in;
        void *out;
    } ctx = {c};
    return cli_write_atomic(path, S_write, ctx.out, &e) ? S_status(&e, msg, len) : EX_OK_;
}
