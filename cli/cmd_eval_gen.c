/* cmd_eval_gen.c — `simdec eval generation`: exact expected rejections and
 * target calls over a whole generation for any verifier, from its own
 * closed form where it has one, else from the DP over (position, x_{n-1})
 * of the law of one iteration (sims/exact/sd_exact_gen.h); on i.i.d. rows kept
 * as one row pair (--p/--q over the memory budget), the renewal over the
 * positions left fed by the law of τ (sims/exact/sd_iid_gen.h). */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "../sims/exact/sd_exact_gen.h"
#include "../sims/exact/sd_iid_gen.h"
#include "../src/sd_mem.h"
#include "../src/sd_version.h"
#include "../sims/engine/sd_params.h"
#include "cli.h"
#include "cli_eval_common.h"
#include "commands.h"

static const char S_help_head[] =
    "Usage: simdec eval generation --algo NAME [verifier parameters] [model] [--json]\n"
    "\n"
    "Exact expected rejections and target calls over a whole generation: the\n"
    "verifier's closed form where it has one (token: Theorem 1 of Yin et al. 2024;\n"
    "batch: their Theorem 3), else a dynamic program over (position, previous token)\n"
    "fed by the exact law of what one iteration emits (greedy-block, which carries\n"
    "state across iterations: its iterations enumerated over that state).  Refused,\n"
    "with the reason, where that is too large to enumerate (block: V^gamma draft\n"
    "blocks; greedy-block: 2^24 draft prefixes in all, about T = 9 at V = 7,\n"
    "gamma 2).\n"
    "\n"
    "On --p/--q whose V x V rows exceed half the memory budget the rows are kept\n"
    "as one pair (O(V)): every iteration then has the same law, and the values\n"
    "come from the renewal over the positions left fed by the law of the accepted\n"
    "length tau (the last iterations draft min(G, positions left)): exact for\n"
    "token, and for block up to gamma 2; otherwise P(tau >= l) is a Monte-Carlo\n"
    "estimate (block: l >= 3, Rao-Blackwellised; rrs, spectr, tree-rrs: the first\n"
    "iteration by their kernels for sparse rows; --trials, --seed), labelled\n"
    "monte-carlo with the standard errors of the values (delta method).\n"
    "\n"
    "  --algo NAME        verifier (default token); 'simdec run --list' lists them\n"
    "  --json             one JSON object (keys: algo, params, rejections,\n"
    "                     target_calls, method, model)\n"
    "  --trials N         Monte-Carlo trials where the law of tau is estimated\n"
    "                     (default 100000)\n"
    "  --seed S           trial i uses stream (S, i) (default 1)\n"
    "  --plugin FILE      load verifiers from a plugin (include/simdec.h); repeatable\n";

enum { O_TRIALS = CLI_EVAL_OPT_FIRST_FREE, O_SEED };
static const struct option S_base[] = {
    CLI_EVAL_LONGOPTS,
    {"json", no_argument, 0, CLI_EVAL_OPT_JSON},
    {"trials", required_argument, 0, O_TRIALS},
    {"seed", required_argument, 0, O_SEED},
    {"help", no_argument, 0, 'h'},
    {0, 0, 0, 0},
};
static const char S_cmd[] = "eval generation";

typedef struct {
    cli_eval_req e;
    uint64_t trials, seed;
} S_req;

/* Option c with value arg: -1 to go on, 1 when it is not the command's, or
 * an exit status after printing the error (0 after --help). */
static int S_option(void *ctx, int c, const char *arg)
{
    S_req *rq = ctx;
    int status;
    sd_error err;
    if (cli_eval_option(&rq->e, S_help_head, c, arg, &status))
        return status;
    switch (c) {
    case O_TRIALS: return cli_parse_trials(arg, &rq->trials, &err) ? cli_fail(&err) : -1;
    case O_SEED: return cli_parse_seed(arg, &rq->seed, &err) ? cli_fail(&err) : -1;
    default: return 1;
    }
}

/* A verifier other than the baseline on i.i.d. rows kept as one row pair:
 * the renewal fed by the law of τ (sims/exact/sd_iid_gen.h). */
static int S_run_iid(S_req *rq, cli_model *m)
{
    cli_verifier *cv = &rq->e.cv;
    cli_model_opts *mo = &rq->e.mo;
    sd_error err;
    sd_iid_law law;
    size_t budget = sd_mem_budget(mo->max_memory);
    double calls, calls_se, rej, rej_se;
    int rc = sd_iid_law_eval(cv->vt, &cv->par, mo->p, mo->q, mo->pV, rq->trials, rq->seed, budget, &law, &err);
    if (rc == SD_EUSAGE && !sd_params_decl(cv->vt, "gamma", NULL) && !sd_params_decl(cv->vt, "tree", NULL))
        rc = sd_error_set(&err, SD_ETOOBIG, "--algo %s on --p/--q at V = %zu: its DP needs V x V rows, %.4g GB, over "
                          "half the memory budget %.3g GB (%s), and without a draft length it has no law of an "
                          "accepted length to renew", cv->vt->name, mo->pV, (double)sd_gen_chain_bytes(mo->pV, 1) / 1e9,
                          (double)budget / 1e9, mo->max_memory ? "--max-memory" : "half of the memory available");
    else if (rc == SD_EUSAGE && law.G == 0)
        ; /* no --gamma: the message says so */
    else if (rc == SD_EUSAGE) { /* no kernel for sparse rows: the size is why */
        char why[sizeof err.msg];
        snprintf(why, sizeof why, "%s", err.msg);
        rc = sd_error_set(&err, SD_ETOOBIG, "--algo %s on --p/--q at V = %zu: its DP needs V x V rows, %.4g GB, over "
                          "half the memory budget %.3g GB (%s), and it has no kernel for sparse rows to estimate the "
                          "law of its accepted length (%s)", cv->vt->name, mo->pV,
                          (double)sd_gen_chain_bytes(mo->pV, 1) / 1e9, (double)budget / 1e9,
                          mo->max_memory ? "--max-memory" : "half of the memory available", why);
    }
    if (!rc) {
        rc = sd_iid_gen_values(&law, m->view.T, budget, &calls, &calls_se, &rej, &rej_se, &err);
        if (rc)
            sd_iid_law_free(&law);
    }
    int status;
    if (rc) {
        status = cli_fail(&err);
    } else if (rq->e.json) {
        json_t *o = json_object();
        json_object_set_new(o, "version", json_string(SD_VERSION));
        json_object_set_new(o, "algo", json_string(cv->vt->name));
        json_object_set_new(o, "params", sd_params_json(&cv->par, cv->vt));
        json_object_set_new(o, "rejections", cli_json_real(rej));
        json_object_set_new(o, "target_calls", cli_json_real(calls));
        json_object_set_new(o, "rejections_stderr", json_real(rej_se));
        json_object_set_new(o, "target_calls_stderr", json_real(calls_se));
        json_object_set_new(o, "method", json_string(law.method));
        json_object_set_new(o, "law", json_string(law.how));
        json_t *cc = json_array();
        for (size_t l = 0; l < law.G; l++)
            json_array_append_new(cc, json_real(law.ccdf[l]));
        json_object_set_new(o, "ccdf", cc);
        if (!law.exact)
            json_object_set_new(o, "mc", json_pack("{s:I,s:I}", "trials", (json_int_t)law.trials, "seed",
                                                   (json_int_t)law.seed));
        cli_model_describe(mo, &m->view, o);
        status = cli_print_json(o);
    } else {
        char pbuf[512];
        sd_params_format(&cv->par, cv->vt, pbuf, sizeof pbuf);
        printf("algo      %s%s\n", cv->vt->name, pbuf);
        cli_model_summary(stdout, "model", mo, &m->view);
        if (law.exact) {
            printf("rejections    %.12g\ntarget calls  %.12g\n", rej, calls);
            printf("method        exact: renewal over the positions left, %s\n", law.how);
        } else {
            printf("rejections    %.9g +- %.3g (1 se)   MONTE-CARLO\n", rej, rej_se);
            printf("target calls  %.9g +- %.3g (1 se)   MONTE-CARLO\n", calls, calls_se);
            printf("method        monte-carlo: renewal over the positions left, %s; %llu trials, seed %llu; "
                   "standard errors by the delta method\n", law.how, (unsigned long long)law.trials,
                   (unsigned long long)law.seed);
        }
        status = cli_stdout_status();
    }
    if (!rc)
        sd_iid_law_free(&law);
    cli_model_close(m);
    cli_model_release(mo);
    return status;
}

/* The evaluation and its output; releases rq's model options. */
static int S_run(void *ctx)
{
    S_req *rq = ctx;
    cli_verifier *cv = &rq->e.cv;
    cli_model_opts *mo = &rq->e.mo;
    int status;
    sd_error err;
    cli_model m;
    if (cli_model_open(mo, &m, &err)) {
        cli_model_release(mo);
        return cli_fail(&err);
    }
    if (mo->p && m.backoff && !m.view.chain && cv->vt != sd_verifier_baseline())
        return S_run_iid(rq, &m);
    sd_exact_values ex;
    int rc = sd_verifier_exact(cv->vt, &m.view, &cv->par, &ex, &err);
    if (rc) {
        status = cli_fail(&err);
    } else if (rq->e.json) {
        json_t *o = json_object();
        json_object_set_new(o, "algo", json_string(cv->vt->name));
        json_object_set_new(o, "params", sd_params_json(&cv->par, cv->vt));
        json_object_set_new(o, "rejections", cli_json_real(ex.rejections));
        json_object_set_new(o, "target_calls", cli_json_real(ex.target_calls));
        json_object_set_new(o, "method", json_string(ex.method));
        cli_model_describe(mo, &m.view, o);
        status = cli_print_json(o);
    } else {
        char pbuf[512];
        sd_params_format(&cv->par, cv->vt, pbuf, sizeof pbuf);
        printf("algo      %s%s\n", cv->vt->name, pbuf);
        cli_model_summary(stdout, "model", mo, &m.view);
        printf("rejections    %.12g\ntarget calls  %.12g\nmethod        %s\n", ex.rejections,
               ex.target_calls, ex.method);
        status = 0;
    }
    cli_model_close(&m);
    cli_model_release(mo);
    return status;
}

/* The command from a command line (argv) or from named fields (JSON). */
static int S_read(int argc, char **argv, const cli_field *fields, size_t n)
{
    S_req rq;
    memset(&rq, 0, sizeof rq);
    rq.trials = 100000;
    rq.seed = 1;
    return cli_eval_read(S_cmd, argc, argv, fields, n, S_base, NULL, S_option, &rq.e, &rq, S_run);
}

int cmd_eval_generation(int argc, char **argv)
{
    return S_read(argc, argv, NULL, 0);
}

int eval_generation_fields(const cli_field *fields, size_t n)
{
    return S_read(0, NULL, fields, n);
}
