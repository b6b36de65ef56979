/* eval_policy.c — `simdec eval speedup --draft-policy RULE`: token-level SD
 * with a draft-length policy (src/sd_draft.h) under the cost model of
 * src/sd_exact_policy.h, S = T / (E[calls] + c E[draft tokens]), exact by
 * the DP over what the drafter sees; RULE specdecpp:best or entropy:best
 * scans the threshold, and the best fixed gamma' <= gamma and the best
 * stopping rule of all are printed beside it (the gap of each heuristic).
 * Block verification (the other verifier that reads a policy) is evaluated
 * through its iteration law (sims/exact/sd_policy_cost.h); the best
 * stopping rule is token-level SD's only. */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../sims/engine/sd_params.h"
#include "../sims/exact/sd_policy_cost.h"
#include "../src/sd_exact_policy.h"
#include "../src/sd_version.h"
#include "cli.h"
#include "cli_eval_common.h"
#include "eval_policy.h"

static const char S_help_head[] =
    "Usage: simdec eval speedup --draft-policy RULE --gamma CAP [--c RATIO] [model]\n"
    "                           [--steps N] [--json]\n"
    "\n"
    "Token-level SD whose draft length is decided while drafting (docs/draft-policy.md):\n"
    "RULE is fixed, specdecpp:H, entropy:H, or specdecpp:best / entropy:best (the\n"
    "threshold on a grid of --steps + 1 values maximising the speed-up: H = i/N for\n"
    "specdecpp, H = i/N log V for entropy, and for entropy every draft row's entropy\n"
    "too, where the rule changes, so that its best is exact).  Cost model: a target call costs 1, a\n"
    "draft token c, S = T / (E[target calls] + c E[draft tokens]); both exact, by\n"
    "the dynamic program over (position, x_{n-1}, drafted prefix).  Printed beside\n"
    "it: the best fixed gamma' <= CAP and the best stopping rule of all (the same\n"
    "DP, deciding at each drafted prefix), so each rule's gap to it is a number.\n"
    "\n"
    "  --algo NAME     token (default) or block; the best stopping rule of all is\n"
    "                  computed for token\n"
    "  --draft-policy RULE  as above (required here)\n"
    "  --gamma CAP     the cap of every iteration's draft (required)\n"
    "  --c RATIO       cost of one draft token in target calls (default 0.05)\n"
    "  --steps N       grid of thresholds for :best (default 40)\n"
    "  --json          one JSON object\n"
    "\n";

typedef struct {
    double h, calls, drafted, s;
} S_row;

/* The verifier of the command: token through the drafter's DP
 * (src/sd_exact_policy.h), another (block) through its iteration law
 * (sims/exact/sd_policy_cost.h). */
static const sd_verifier_type *S_vt;
static sd_params S_par;

static int S_eval(const sd_chain *c, size_t cap, sd_draft_policy pol, double cr, S_row *r, sd_error *err)
{
    r->h = pol.h;
    int rc;
    if (S_vt == sd_verifier_baseline()) {
        rc = sd_exact_policy(c, cap, &pol, &r->calls, &r->drafted, err);
    } else {
        sd_params par = S_par;
        par.gamma = cap;
        rc = sd_params_set(&par, S_vt, "draft-policy", sd_draft_policy_encode(pol), err);
        if (!rc)
            rc = sd_policy_cost(S_vt, c, &par, &r->calls, &r->drafted, err);
    }
    r->s = sd_exact_policy_speedup((double)c->T, r->calls, r->drafted, cr);
    return rc;
}

static json_t *S_row_json(const S_row *r)
{
    return json_pack("{s:f,s:f,s:f,s:f}", "threshold", r->h, "target_calls", r->calls, "draft_tokens", r->drafted,
                     "speedup", r->s);
}

enum { O_C = CLI_EVAL_OPT_FIRST_FREE, O_STEPS, O_POLICY };
/* --draft-policy is the command's (a rule, or RULE:best), ahead of the
 * verifier's parameter of that name. */
static const struct option S_base[] = {
    CLI_EVAL_LONGOPTS,
    {"draft-policy", required_argument, 0, O_POLICY},
    {"c", required_argument, 0, O_C},
    {"steps", required_argument, 0, O_STEPS},
    {"json", no_argument, 0, CLI_EVAL_OPT_JSON},
    {"help", no_argument, 0, 'h'},
    {0, 0, 0, 0},
};
static const char *const S_skip[] = {"draft-policy", NULL};
static const char S_cmd[] = "eval speedup";

typedef struct {
    cli_eval_req e;
    double cr;
    size_t steps;
    const char *rule;
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
    case O_POLICY: rq->rule = arg; return -1;
    case O_C: return cli_parse_double("--c", arg, 0.0, 1e6, &rq->cr, &err) ? cli_fail(&err) : -1;
    case O_STEPS: return cli_parse_size("--steps", arg, 1, 10000, &rq->steps, &err) ? cli_fail(&err) : -1;
    default: return 1;
    }
}

static int S_run(void *ctx);

/* The command from a command line (argv) or from named fields (JSON). */
static int S_read(int argc, char **argv, const cli_field *fields, size_t n)
{
    S_req rq;
    memset(&rq, 0, sizeof rq);
    rq.cr = 0.05;
    rq.steps = 40;
    return cli_eval_read(S_cmd, argc, argv, fields, n, S_base, S_skip, S_option, &rq.e, &rq, S_run);
}

int cmd_eval_policy(int argc, char **argv)
{
    return S_read(argc, argv, NULL, 0);
}

int eval_policy_fields(const cli_field *fields, size_t n)
{
    return S_read(0, NULL, fields, n);
}

/* The evaluation and its output. */
static int S_run(void *ctx)
{
    S_req *rq = ctx;
    const char *cmd = S_cmd, *rule = rq->rule;
    cli_verifier cv = rq->e.cv;
    cli_model_opts mo = rq->e.mo;
    double cr = rq->cr;
    size_t steps = rq->steps;
    int json = rq->e.json, status = -1;
    sd_error err;
    if (!sd_params_decl(cv.vt, "draft-policy", NULL) || !cv.vt->iteration_law)
        status = cli_usage_error(cmd, "--draft-policy: --algo %s reads no draft policy (token and block do)",
                                 cv.vt->name);
    S_vt = cv.vt;
    S_par = cv.par;
    if (status < 0 && cv.par.gamma == 0)
        status = cli_usage_error(cmd, "--draft-policy: give --gamma CAP, the longest draft");
    int best = 0;
    sd_draft_policy pol = {SD_DRAFT_FIXED, 0.0};
    if (status < 0) {
        char msg[200];
        double code = 0.0;
        if (rule && (strcmp(rule, "specdecpp:best") == 0 || strcmp(rule, "entropy:best") == 0)) {
            best = 1;
            pol.rule = rule[0] == 's' ? SD_DRAFT_SPECDECPP : SD_DRAFT_ENTROPY;
        } else if (!rule || sd_draft_policy_parse(rule, &code, msg, sizeof msg)) {
            status = cli_usage_error(cmd, "--draft-policy %s", rule ? msg : "needs a value");
        } else {
            pol = sd_draft_policy_decode(code);
        }
    }
    cli_model model;
    memset(&model, 0, sizeof model);
    if (status < 0 && cli_model_open(&mo, &model, &err))
        status = cli_fail(&err);
    if (status < 0 && !model.view.chain)
        status = cli_usage_error(cmd, "--draft-policy: needs a stored chain (not --zipf or --stream)");
    if (status >= 0) {
        cli_model_close(&model);
        cli_model_release(&mo);
        return status;
    }
    const sd_chain *ch = model.view.chain;
    size_t cap = sd_draft_len_max(cv.par.gamma, ch->T), nrow = best ? steps + 1 : 1, ib = 0, ifix = 0;
    S_row *rows = calloc(nrow + cap, sizeof *rows), opt = {NAN, 0, 0, 0};
    S_row *fixed = rows ? rows + nrow : NULL;
    if (!rows)
        status = cli_out_of_memory();
    for (size_t i = 0; status < 0 && i < nrow; i++) {
        sd_draft_policy p = pol;
        if (best)
            p.h = (double)i / (double)steps * (pol.rule == SD_DRAFT_ENTROPY ? log((double)ch->V) : 1.0);
        if (S_eval(ch, cap, p, cr, &rows[i], &err))
            status = cli_fail(&err);
        else if (rows[i].s > rows[ib].s)
            ib = i;
    }
    /* entropy:best: also every row entropy, the thresholds where the rule
     * changes (src/sd_exact_policy.h), so its best is exact, not a grid's */
    size_t nent = 0, ient = 0;
    double ents[4096];
    S_row erow = {NAN, 0, 0, 0};
    if (status < 0 && best && pol.rule == SD_DRAFT_ENTROPY &&
        sd_exact_policy_entropies(ch, ents, sizeof ents / sizeof *ents, &nent, NULL) != SD_OK)
        nent = 0; /* too many: the grid only */
    for (size_t i = 0; status < 0 && i < nent; i++) {
        S_row r;
        sd_draft_policy p = {SD_DRAFT_ENTROPY, ents[i]};
        if (S_eval(ch, cap, p, cr, &r, &err))
            status = cli_fail(&err);
        else if (i == 0 || r.s > erow.s) {
            erow = r;
            ient = i;
        }
    }
    (void)ient;
    /* the best: the grid's, or a row entropy off the grid */
    S_row top = rows ? rows[ib] : erow;
    if (nent && erow.s > top.s)
        top = erow;
    for (size_t g = 1; status < 0 && g <= cap; g++) {
        sd_draft_policy f = {SD_DRAFT_FIXED, 0.0};
        if (S_eval(ch, g, f, cr, &fixed[g - 1], &err))
            status = cli_fail(&err);
        else if (fixed[g - 1].s > fixed[ifix].s)
            ifix = g - 1;
    }
    /* the best stopping rule: the drafter's DP is token-level SD's */
    int has_opt = cv.vt == sd_verifier_baseline();
    if (status < 0 && has_opt && sd_exact_policy_best(ch, cap, cr, &opt.calls, &opt.drafted, &err))
        status = cli_fail(&err);
    opt.s = has_opt ? sd_exact_policy_speedup((double)ch->T, opt.calls, opt.drafted, cr) : NAN;
    char name[80];
    sd_draft_policy_format(sd_draft_policy_encode((sd_draft_policy){pol.rule, top.h}), name, sizeof name);
    if (status < 0 && json) {
        json_t *o = json_object();
        json_object_set_new(o, "version", json_string(SD_VERSION));
        json_object_set_new(o, "algo", json_string(cv.vt->name));
        json_object_set_new(o, "draft_policy", json_string(rule));
        json_object_set_new(o, "gamma_cap", json_integer((json_int_t)cap));
        cli_model_describe(&mo, &model.view, o);
        cli_model_identity(&mo, &model, o);
        json_object_set_new(o, "c", json_real(cr));
        json_object_set_new(o, "cost_model", json_string("S = T / (E[target calls] + c E[draft tokens])"));
        json_t *arr = json_array();
        for (size_t i = 0; i < nrow; i++)
            json_array_append_new(arr, S_row_json(&rows[i]));
        json_object_set_new(o, "points", arr);
        json_object_set_new(o, "best_policy", json_string(name));
        json_object_set_new(o, "best_threshold", json_real(top.h));
        json_object_set_new(o, "best_speedup", json_real(top.s));
        json_object_set_new(o, "row_entropies_tried", json_integer((json_int_t)nent));
        json_object_set_new(o, "best_fixed_gamma", json_integer((json_int_t)ifix + 1));
        json_object_set_new(o, "best_fixed_speedup", json_real(fixed[ifix].s));
        json_object_set_new(o, "optimal_stopping",
                            has_opt ? json_pack("{s:f,s:f,s:f}", "target_calls", opt.calls, "draft_tokens",
                                                opt.drafted, "speedup", opt.s)
                                    : json_null());
        json_object_set_new(o, "gap_to_optimal", cli_json_real(opt.s - top.s));
        status = cli_print_json(o);
    } else if (status < 0) {
        printf("simdec %s eval speedup --algo %s --draft-policy %s, cap gamma %zu, draft cost c = %g\n",
               SD_VERSION, cv.vt->name, rule, cap, cr);
        cli_model_summary(stdout, "model", &mo, &model.view);
        cli_model_identity_line(stdout, &mo, &model);
        printf("cost      S = T / (E[target calls] + c E[draft tokens]), exact (DP over the drafted prefixes)\n\n");
        printf("  %12s %14s %14s %10s\n", "threshold", "target calls", "draft tokens", "speed-up");
        for (size_t i = 0; i < nrow; i++)
            printf("  %12.6g %14.6f %14.6f %10.6f%s\n", rows[i].h, rows[i].calls, rows[i].drafted, rows[i].s,
                   best && i == ib ? "   <- best" : "");
        if (nent)
            printf("\n  and the %zu draft-row entropies, where the rule changes (exact best)", nent);
        printf("\n  best %-24s speed-up %.6f\n", name, top.s);
        printf("  best fixed gamma %-12zu speed-up %.6f\n", ifix + 1, fixed[ifix].s);
        if (has_opt) {
            printf("  optimal stopping rule         speed-up %.6f   (calls %.6f, draft tokens %.6f)\n", opt.s,
                   opt.calls, opt.drafted);
            printf("  gap of %s to the optimum: %.6f\n", name, opt.s - top.s);
        } else {
            printf("  optimal stopping rule         n/a (the drafter's DP is token-level SD's)\n");
        }
        status = cli_stdout_status();
    }
    if (status < 0)
        status = 0;
    free(rows);
    cli_model_close(&model);
    cli_model_release(&mo);
    return status;
}
