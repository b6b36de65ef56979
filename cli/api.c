/* api.c — simdec as a library for other languages (api.h). */
#include "api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"

typedef struct {
    const char *name;
    int (*fn)(int argc, char **argv);
} S_command;

static const S_command S_commands[] = {
    {"run", cmd_run}, {"check", cmd_check}, {"eval", cmd_eval}, {"lp", cmd_lp},
    {"gen", cmd_gen}, {"plot", cmd_plot},   {NULL, NULL},
};

/* A copy of s (or of "" when the stream gave none), for the caller. */
static char *S_dup(const char *s)
{
    return strdup(s ? s : "");
}

int sd_api_main(int argc, char **argv, char **out, char **err)
{
    *out = *err = NULL;
    sd_gsl_quiet();
    int (*fn)(int, char **) = NULL;
    for (const S_command *c = S_commands; argc > 0 && c->name; c++)
        if (strcmp(c->name, argv[0]) == 0)
            fn = c->fn;
    if (!fn) {
        *out = S_dup("");
        *err = S_dup(argc > 0 ? "simdec: unknown command\n" : "simdec: no command given\n");
        return (*out && *err) ? EX_USAGE_ : EX_OSERR_;
    }
    char *obuf = NULL, *ebuf = NULL;
    size_t olen = 0, elen = 0;
    FILE *mo = open_memstream(&obuf, &olen), *me = open_memstream(&ebuf, &elen);
    if (!mo || !me) {
        if (mo)
            fclose(mo);
        if (me)
            fclose(me);
        free(obuf);
        free(ebuf);
        return EX_OSERR_;
    }
    /* glibc's stdout and stderr are variables a program may assign (the
     * GNU C Library manual, "Standard Streams"); the commands print through
     * them, so their output lands in memory. */
    fflush(stdout);
    fflush(stderr);
    FILE *so = stdout, *se = stderr;
    stdout = mo;
    stderr = me;
    int status = fn(argc, argv);
    stdout = so;
    stderr = se;
    if (fclose(mo) != 0 && status == 0)
        status = EX_CANTCREAT_;
    fclose(me);
    *out = obuf ? obuf : S_dup("");
    *err = ebuf ? ebuf : S_dup("");
    return status;
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
