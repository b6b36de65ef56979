/* eval_speedup.c — `simdec eval speedup`: the expected wall-clock speed-up
 * of a verifier over target-only decoding (sims/exact/sd_speedup.h), from its
 * exact expected target calls where it has them and by Monte-Carlo (the
 * trial engine) otherwise, at one draft length or the best one. */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../sims/engine/sd_params.h"
#include "../sims/engine/sd_sim.h"
#include "../sims/exact/sd_iid_gen.h"
#include "../sims/exact/sd_speedup.h"
#include "../src/sd_mem.h"
#include "../src/sd_dist.h"
#include "../src/sd_version.h"
#include "cli.h"
#include "cli_eval_common.h"
#include "eval_policy.h"
#include "eval_speedup.h"

static const char S_help_head[] =
    "Usage: simdec eval speedup --algo NAME --gamma G|LIST|LO..HI|best [verifier\n"
    "                           parameters] --c RATIO [--draft-cost token|step]\n"
    "                           [model] [--gamma-max N] [--trials N] [--seed S]\n"
    "                           [--json]\n"
    "\n"
    "Expected wall-clock speed-up over target-only decoding when one draft token\n"
    "costs RATIO target calls.  Cost model: target-only decoding of T tokens costs\n"
    "T; an iteration of speculative decoding costs 1 (one target call) + c*d*G\n"
    "(d drafts of G tokens: d = k or M for the multi-draft verifiers, whose every\n"
    "draft is drafted, else 1), so S = T / (E[target calls] (1 + c d G)).  A tree\n"
    "verifier (--tree b1,...,bD) drafts the tree's N = b1 + b1 b2 + ... nodes in\n"
    "D steps: S = T / (E[target calls] (1 + c N)), or c D with --draft-cost step;\n"
    "its draft length (column G, JSON gamma) is D, one point per command.\n"
    "E[target calls] is exact where the verifier has an exact evaluator, else a\n"
    "Monte-Carlo estimate (--trials, --seed) with its 95% CI mapped into S.\n"
    "For a single-token problem (--p/--q: tokens i.i.d.) the limit T -> infinity\n"
    "is printed too; for token-level SD it is Leviathan et al. 2023's\n"
    "(1 - a^(G+1)) / ((1 - a)(G c + 1)), a = sum min(p, q), printed beside it.\n"
    "Without --T, a single-token problem is evaluated at T -> infinity: the\n"
    "headline speed-up and --gamma best are the limit's (said so in the output).\n"
    "The limit is E[calls]/T -> 1/(E[tau] + 1), tau the accepted length of one\n"
    "iteration: exact for token, and from the iteration law where V x V rows fit;\n"
    "on rows kept as one pair (over the budget) exact for block up to gamma 2,\n"
    "else Monte-Carlo (block: the terms l >= 3; rrs, spectr: their kernels for\n"
    "sparse rows, --trials, --seed), marked MC with its 95% CI.  A verifier\n"
    "without an exact iteration law (the tree verifiers) takes the same\n"
    "Monte-Carlo law of tau for the limit at any V, where it has such a kernel.\n"
    "\n"
    "  --algo NAME     verifier (default token)\n"
    "  --gamma G|best  draft length; a list 1,2,4 or a range 1..8; best: the G in\n"
    "                  1..--gamma-max maximising S\n"
    "  --algo a,b, --k 2,4  sweep verifiers and draft counts like run: one table\n"
    "                  per point (JSON: an array), every point on the same --seed\n"
    "  --draft-cost token|step  multi-draft cost: token (default) charges c for each\n"
    "                  of the k drafts' tokens (d = k); step charges c per drafting\n"
    "                  step, the k drafts drafted in parallel (d = 1)\n"
    "  --gamma-max N   largest G tried by --gamma best (default 16, at most T)\n"
    "  --c RATIO       cost of one draft token in target calls (default 0.05)\n"
    "  --trials N      Monte-Carlo trials where there is no exact value (default 10000)\n"
    "  --seed S        their seed (default 1)\n"
    "  --json          one JSON object\n"
    "  --plugin FILE   load verifiers from a plugin (include/simdec.h); repeatable\n"
    "  --draft-policy RULE  a draft-length policy (specdecpp:best, entropy:best, ...):\n"
    "                  see simdec eval speedup --draft-policy fixed --help\n"
    "\n";

typedef struct {
    size_t gamma;                     /* draft length: G, or the tree's depth */
    double draft_tokens;              /* N of the cost model */
    double calls, calls_lo, calls_hi; /* E[target calls] and its CI (= calls when exact) */
    int exact;
    double s, s_lo, s_hi;
    double rate_limit, s_limit;       /* i.i.d. limit (NaN: n/a) */
    double rate_se;                   /* its standard error (0: exact) */
    int limit_exact;                  /* 1: the limit has no Monte-Carlo term */
} S_point;

/* --gamma LIST: counts separated by commas, each N or LO..HI, into g[]
 * (at most cap values, each 1..4096). */
static int S_count_list(const char *opt, const char *s, size_t *g, size_t *n, size_t cap, sd_error *err)
{
    *n = 0;
    while (*s) {
        char *end;
        unsigned long lo = strtoul(s, &end, 10), hi = lo;
        if (end == s || *s == '-' || *s == '+')
            return sd_error_set(err, SD_EUSAGE, "%s '%s': expected counts N or LO..HI%s", opt, s,
                                  strcmp(opt, "--gamma") == 0 ? " or best" : "");
        if (strncmp(end, "..", 2) == 0) {
            const char *h = end + 2;
            hi = strtoul(h, &end, 10);
            if (end == h || *h == '-' || *h == '+')
                return sd_error_set(err, SD_EUSAGE, "%s '%s': expected a range LO..HI", opt, s);
        }
        if (lo < 1 || hi < lo || hi > 4096)
            return sd_error_set(err, SD_EUSAGE, "%s: %lu..%lu; expected 1 <= LO <= HI <= 4096", opt, lo, hi);
        for (unsigned long v = lo; v <= hi; v++) {
            if (*n >= cap)
                return sd_error_set(err, SD_EUSAGE, "%s: more than %zu values", opt, cap);
            g[(*n)++] = v;
        }
        if (*end == ',')
            end++;
        else if (*end)
            return sd_error_set(err, SD_EUSAGE, "%s '%s': expected counts separated by commas", opt, s);
        s = end;
    }
    return SD_OK;
}

enum { O_C = CLI_EVAL_OPT_FIRST_FREE, O_GMAX, O_TRIALS, O_SEED, O_DRAFT_COST, O_GAMMA };
/* --gamma is the command's (G, a list, a range or best), ahead of the
 * verifier's parameter, which it sets for a single G. */
static const struct option S_base[] = {
    CLI_EVAL_LONGOPTS,
    {"gamma", required_argument, 0, O_GAMMA},
    {"c", required_argument, 0, O_C},
    {"gamma-max", required_argument, 0, O_GMAX},
    {"trials", required_argument, 0, O_TRIALS},
    {"seed", required_argument, 0, O_SEED},
    {"json", no_argument, 0, CLI_EVAL_OPT_JSON},
    {"draft-cost", required_argument, 0, O_DRAFT_COST},
    {"help", no_argument, 0, 'h'},
    {0, 0, 0, 0},
};
static const char *const S_skip[] = {"gamma", NULL};
static const char S_cmd[] = "eval speedup";

/* One point's options, from a command line or from named fields. */
typedef struct {
    cli_eval_req e;
    double cr;
    size_t gmax;
    uint64_t trials, seed;
    int per_step, best;
    size_t glist[256], nglist;
    const char *gamma_arg; /* the last --gamma value as given */
    json_t *collect;       /* non-NULL: the JSON object appended there instead of printed */
    int sep;               /* 1: a blank line before the table */
} S_req;

static void S_req_init(S_req *rq)
{
    memset(rq, 0, sizeof *rq);
    rq->cr = 0.05;
    rq->gmax = 16;
    rq->trials = 10000;
    rq->seed = 1;
}

/* --gamma G, LIST, LO..HI or best; the last one given wins, as every
 * repeated option does. */
static int S_gamma(S_req *rq, const char *arg)
{
    sd_error err;
    rq->best = 0;
    rq->nglist = 0;
    rq->gamma_arg = arg;
    if (strcmp(arg, "best") == 0) {
        rq->best = 1;
        return -1;
    }
    if (strchr(arg, ',') || strstr(arg, "..")) {
        if (S_count_list("--gamma", arg, rq->glist, &rq->nglist, sizeof rq->glist / sizeof rq->glist[0], &err))
            return cli_usage_error(S_cmd, "%s", err.msg);
        return -1;
    }
    if (!sd_params_decl(rq->e.cv.vt, "gamma", NULL)) {
        char names[256];
        sd_params_names(rq->e.cv.vt, names, sizeof names);
        return cli_usage_error(S_cmd, "--gamma does not apply to --algo %s (it reads: %s)", rq->e.cv.vt->name, names);
    }
    return sd_params_parse(&rq->e.cv.par, rq->e.cv.vt, "gamma", arg, &err) ? cli_fail(&err) : -1;
}

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
    case O_GAMMA: return S_gamma(rq, arg);
    case O_C: return cli_parse_double("--c", arg, 0.0, 1e6, &rq->cr, &err) ? cli_fail(&err) : -1;
    case O_GMAX: return cli_parse_size("--gamma-max", arg, 1, 4096, &rq->gmax, &err) ? cli_fail(&err) : -1;
    case O_TRIALS: return cli_parse_trials(arg, &rq->trials, &err) ? cli_fail(&err) : -1;
    case O_SEED: return cli_parse_seed(arg, &rq->seed, &err) ? cli_fail(&err) : -1;
    case O_DRAFT_COST:
        if (strcmp(arg, "token") == 0)
            rq->per_step = 0;
        else if (strcmp(arg, "step") == 0)
            rq->per_step = 1;
        else
            return cli_usage_error(S_cmd, "--draft-cost '%s': expected token or step", arg);
        return -1;
    default: return 1;
    }
}

static int S_run(void *ctx);

/* One verifier at one --k, from a command line (argv) or from named fields
 * (JSON); collect: append the JSON object there instead of printing it;
 * sep: a blank line before the table. */
static int S_speedup_one(int argc, char **argv, const cli_field *fields, size_t n, json_t *collect, int sep)
{
    S_req rq;
    S_req_init(&rq);
    rq.collect = collect;
    rq.sep = sep;
    return cli_eval_read(S_cmd, argc, argv, fields, n, S_base, S_skip, S_option, &rq.e, &rq, S_run);
}

/* The point's evaluation and its output. */
static int S_run(void *ctx)
{
    S_req *rq = ctx;
    json_t *collect = rq->collect;
    int sep = rq->sep;
    int status = -1;
    sd_error err;
    cli_verifier cv = rq->e.cv;
    cli_model_opts mo = rq->e.mo;
    double cr = rq->cr;
    size_t gmax = rq->gmax, nglist = rq->nglist;
    const size_t *glist = rq->glist;
    uint64_t trials = rq->trials, seed = rq->seed;
    int json = rq->e.json, per_step = rq->per_step, best = rq->best;
    const sd_verifier_type *vt = cv.vt;
    /* A tree verifier's draft length is its tree's depth D, and it drafts
     * the tree's nodes: one point per command (no --gamma to sweep). */
    int treed = !sd_params_decl(vt, "gamma", NULL) && sd_params_decl(vt, "tree", NULL);
    if (!sd_params_decl(vt, "gamma", NULL) && !treed)
        status = cli_usage_error(S_cmd, "--algo %s has neither a draft length --gamma nor a draft tree --tree; the "
                                 "speed-up model needs one", vt->name);
    if (status < 0 && treed && (best || nglist))
        status = cli_usage_error(S_cmd, "--gamma %s: --algo %s drafts the tree --tree (its depth is the draft "
                                 "length); give one --tree per command", rq->gamma_arg, vt->name);
    if (status < 0 && treed && cv.par.tree_depth == 0)
        status = cli_usage_error(S_cmd, "give --tree b1,...,bD (every iteration drafts its nodes)");
    if (status < 0 && !treed && !best && !nglist && cv.par.gamma == 0)
        status = cli_usage_error(S_cmd, "give --gamma G or --gamma best (every iteration drafts G tokens)");
    cli_model model;
    memset(&model, 0, sizeof model);
    if (status < 0 && cli_model_open(&mo, &model, &err))
        status = cli_fail(&err);
    if (status >= 0) {
        cli_model_close(&model);
        cli_model_release(&mo);
        return status;
    }
    const sd_model *m = &model.view;
    int iid = mo.p != NULL;
    /* An i.i.d. problem without --T: the limit T -> infinity is the headline. */
    int limit = iid && !mo.T_given;
    size_t g0 = best ? 1 : sd_speedup_draft_length(vt, &cv.par), g1 = best ? (limit || gmax < m->T ? gmax : m->T) : g0;
    size_t npts = nglist ? nglist : g1 - g0 + 1;
    S_point *pts = calloc(npts, sizeof *pts);
    size_t npt = 0, ibest = 0;
    double alpha = NAN;
    if (iid) {
        alpha = 0.0;
        for (size_t b = 0; b < mo.pV; b++)
            alpha += fmin(mo.p[b], mo.q[b]);
    }
    int is_token = vt == sd_verifier_baseline();
    char why[512] = "";
    for (size_t i = 0; pts && status < 0 && i < npts; i++) {
        size_t g = nglist ? glist[i] : g0 + i;
        S_point *pt = &pts[npt];
        sd_params par = cv.par;
        if (!treed)
            par.gamma = g;
        pt->gamma = g;
        double dt = per_step ? (double)g : sd_speedup_draft_tokens(vt, &par);
        pt->draft_tokens = dt;
        pt->rate_limit = pt->s_limit = NAN;
        if (iid) {
            pt->limit_exact = 1;
            if (is_token) /* the renewal rate in closed form (sims/exact/sd_speedup.h) */
                pt->rate_limit = sd_speedup_iid_rate_token(alpha, g);
            else if (!vt->iteration_law || (sd_gen_chain_bytes(mo.pV, g + 1) > model.budget / 2 && model.backoff)
                     || sd_speedup_iid_rate(vt, &par, mo.p, mo.q, mo.pV, &pt->rate_limit, NULL)
                     || !isfinite(pt->rate_limit)) {
                /* one row pair, or an iteration law that refuses the size
                 * (a tree's V^nodes drafted trees): the law of tau
                 * (sims/exact/sd_iid_gen.h) */
                sd_iid_law law;
                int rc = sd_iid_law_eval(vt, &par, mo.p, mo.q, mo.pV, trials, seed, sd_mem_budget(mo.max_memory),
                                         &law, &err);
                if (!rc) {
                    rc = sd_iid_gen_rate(&law, &pt->rate_limit, &pt->rate_se, &err);
                    pt->limit_exact = law.exact;
                    sd_iid_law_free(&law);
                }
                if (rc && rc != SD_EUSAGE) { /* a refusal of the size stands */
                    status = cli_fail(&err);
                    break;
                }
                if (rc) {
                    pt->rate_limit = NAN;
                    snprintf(why, sizeof why, "; it has no kernel for sparse rows to estimate the law of its "
                             "accepted length on the row pair kept (%.300s)", err.msg);
                }
            }
            if (isfinite(pt->rate_limit))
                pt->s_limit = sd_speedup(1.0, pt->rate_limit, cr, dt);
        }
        if (limit) {
            if (!isfinite(pt->s_limit)) {
                status = cli_usage_error(S_cmd, "--algo %s has no T -> infinity value here (V = %zu, gamma %zu)%s; "
                                         "give --T N for a finite horizon", vt->name, mo.pV, g, why);
                break;
            }
            pt->calls = pt->calls_lo = pt->calls_hi = pt->rate_limit;
            pt->exact = pt->limit_exact;
            pt->s = pt->s_lo = pt->s_hi = pt->s_limit;
            if (!pt->exact) { /* the 95% CI of the rate, mapped into S */
                pt->calls_lo = pt->rate_limit - 1.959963984540054 * pt->rate_se;
                pt->calls_hi = pt->rate_limit + 1.959963984540054 * pt->rate_se;
                pt->s_lo = sd_speedup(1.0, pt->calls_hi, cr, dt);
                pt->s_hi = sd_speedup(1.0, pt->calls_lo, cr, dt);
            }
        } else {
            int done = 0;
            if (iid && !is_token && model.backoff && !m->chain) { /* the renewal fed by the law of tau */
                sd_iid_law law;
                double cse, rej, rse;
                size_t budget = sd_mem_budget(mo.max_memory);
                int rc = sd_iid_law_eval(vt, &par, mo.p, mo.q, mo.pV, trials, seed, budget, &law, &err);
                if (!rc) {
                    rc = sd_iid_gen_values(&law, m->T, budget, &pt->calls, &cse, &rej, &rse, &err);
                    pt->exact = law.exact;
                    sd_iid_law_free(&law);
                    pt->calls_lo = pt->calls - 1.959963984540054 * cse;
                    pt->calls_hi = pt->calls + 1.959963984540054 * cse;
                    done = !rc;
                }
                if (rc && rc != SD_EUSAGE) {
                    status = cli_fail(&err);
                    break;
                }
            }
            if (!done && sd_speedup_calls(vt, m, &par, trials, seed, &pt->calls, &pt->calls_lo, &pt->calls_hi,
                                          &pt->exact, &err)) {
                status = cli_fail(&err);
                break;
            }
            pt->s = sd_speedup((double)m->T, pt->calls, cr, dt);
            pt->s_lo = sd_speedup((double)m->T, pt->calls_hi, cr, dt);
            pt->s_hi = sd_speedup((double)m->T, pt->calls_lo, cr, dt);
        }
        if (pt->s > pts[ibest].s)
            ibest = npt;
        npt++;
    }
    if (!pts)
        status = cli_out_of_memory();
    if (status < 0 && json) {
        json_t *o = json_object();
        json_object_set_new(o, "version", json_string(SD_VERSION));
        json_object_set_new(o, "algo", json_string(vt->name));
        json_object_set_new(o, "params", sd_params_json(&cv.par, vt));
        cli_model_describe(&mo, m, o);
        cli_model_identity(&mo, &model, o);
        json_object_set_new(o, "c", json_real(cr));
        json_object_set_new(o, "cost_model", json_string(treed ? "S = T / (E[target calls] (1 + c N)), N drafted "
                                                         "tokens: the tree's nodes, or its depth with draft_cost step"
                                                         : "S = T / (E[target calls] (1 + c d gamma)), d drafts"));
        json_object_set_new(o, "draft_cost", json_string(per_step ? "step" : "token"));
        json_object_set_new(o, "horizon_limit", json_boolean(limit));
        json_object_set_new(o, "seed", json_integer((json_int_t)seed));
        json_object_set_new(o, "trials", json_integer((json_int_t)trials));
        json_t *arr = json_array();
        for (size_t i = 0; i < npt; i++) {
            json_t *p = json_object();
            json_object_set_new(p, "gamma", json_integer((json_int_t)pts[i].gamma));
            json_object_set_new(p, "draft_tokens", json_real(pts[i].draft_tokens));
            json_object_set_new(p, "target_calls", json_real(pts[i].calls));
            json_object_set_new(p, "exact", json_boolean(pts[i].exact));
            json_object_set_new(p, "speedup", json_real(pts[i].s));
            json_object_set_new(p, "speedup_ci95", json_pack("[f,f]", pts[i].s_lo, pts[i].s_hi));
            json_object_set_new(p, "speedup_iid_limit", cli_json_real(pts[i].s_limit));
            if (iid && isfinite(pts[i].s_limit)) {
                json_object_set_new(p, "iid_limit_method", json_string(pts[i].limit_exact ? "exact" : "monte-carlo"));
                json_object_set_new(p, "iid_limit_calls_per_token_stderr", json_real(pts[i].rate_se));
            }
            if (iid && is_token)
                json_object_set_new(p, "leviathan", json_real(sd_speedup_leviathan(alpha, pts[i].gamma, cr)));
            json_array_append_new(arr, p);
        }
        json_object_set_new(o, "points", arr);
        json_object_set_new(o, "best_gamma", json_integer((json_int_t)pts[ibest].gamma));
        json_object_set_new(o, "best_speedup", json_real(pts[ibest].s));
        if (collect) {
            json_array_append_new(collect, o);
            status = 0;
        } else {
            status = cli_print_json(o);
        }
    } else if (status < 0) {
        if (sep)
            putchar('\n');
        printf("simdec %s eval speedup --algo %s, draft cost c = %g target calls per draft token\n", SD_VERSION,
               vt->name, cr);
        cli_model_summary(stdout, "model", &mo, m);
        cli_model_identity_line(stdout, &mo, &model);
        if (treed)
            printf("cost      S = T / (E[target calls] (1 + c N)), N = %g %s\n",
                   per_step ? (double)g0 : sd_speedup_draft_tokens(vt, &cv.par),
                   per_step ? "drafting steps, the depth of the tree (--draft-cost step: a level drafted in parallel)"
                            : "nodes of the tree, each one draft token; G below is its depth");
        else
            printf("cost      S = T / (E[target calls] (1 + c d G)), d = %g drafts%s\n",
                   per_step ? 1.0 : sd_speedup_draft_tokens(vt, &(sd_params){.gamma = 1, .k = cv.par.k}),
                   per_step ? " (--draft-cost step: the drafts of a step drafted in parallel)" : "");
        if (limit)
            printf("horizon   T -> infinity (i.i.d. tokens, no --T): target calls per token and the limit "
                   "speed-up\n");
        int mc = 0;
        for (size_t i = 0; i < npt; i++)
            mc |= !pts[i].exact;
        if (mc) /* the seed of the Monte-Carlo points, as in JSON */
            printf("trials    %llu   seed %llu   (the points marked MC)\n", (unsigned long long)trials,
                   (unsigned long long)seed);
        putchar('\n');
        printf("  %5s %14s %6s %10s %22s", "G", limit ? "calls/token" : "target calls", "", "speed-up", "95% CI");
        if (iid)
            printf(" %16s%s", "T->inf (i.i.d.)", is_token ? "   Leviathan et al." : "");
        putchar('\n');
        for (size_t i = 0; i < npt; i++) {
            const S_point *pt = &pts[i];
            printf("  %5zu %14.6f %6s %10.6f", pt->gamma, pt->calls, pt->exact ? "exact" : "MC", pt->s);
            if (pt->exact)
                printf(" %22s", "");
            else
                printf("   [%8.6f, %8.6f]", pt->s_lo, pt->s_hi);
            if (iid && isfinite(pt->s_limit) && pt->limit_exact)
                printf(" %16.10f", pt->s_limit);
            else if (iid && isfinite(pt->s_limit)) /* the limit from a Monte-Carlo law of tau */
                printf(" %13.7f MC", pt->s_limit);
            else if (iid)
                printf(" %16s", "n/a"); /* no exact iteration law here: null in JSON */
            if (iid && is_token)
                printf("   %.10f", sd_speedup_leviathan(alpha, pt->gamma, cr));
            printf("%s\n", best && i == ibest ? "   <- best" : "");
        }
        status = cli_stdout_status();
    }
    if (status < 0)
        status = 0;
    free(pts);
    cli_model_close(&model);
    cli_model_release(&mo);
    return status;
}

/* The value of the last --name in args (the one pass over argv,
 * cli_opts.h); *at the index of that value in argv, or minus the index of
 * the word --name=value; NULL: none. */
static const char *S_opt(const cli_args *args, const char *name, int *at)
{
    int o, v;
    const char *val = cli_args_last(args, name, &o, &v);
    if (val)
        *at = v == o ? -o : v;
    return val;
}

/* `--algo a,b` and `--k 2,4` (or LO..HI) sweep like run: one table per
 * point (JSON: an array of the points' objects), every point on the same
 * --seed.  --gamma lists stay within a point (one table per verifier). */
int cmd_eval_speedup(int argc, char **argv)
{
    cli_args args;
    if (cli_args_scan(argc, argv, &args))
        return cli_out_of_memory();
    if (cli_args_has(&args, "draft-policy")) { /* a draft-length policy: eval_policy.c */
        cli_args_free(&args);
        return cmd_eval_policy(argc, argv);
    }
    int at_a = 0, at_k = 0;
    const char *algos = S_opt(&args, "algo", &at_a), *ks = S_opt(&args, "k", &at_k);
    cli_args_free(&args);
    int list_a = algos && strchr(algos, ','), list_k = ks && (strchr(ks, ',') || strstr(ks, ".."));
    if (!list_a && !list_k)
        return S_speedup_one(argc, argv, NULL, 0, NULL, 0);
    size_t kv[256], nk = 1;
    if (list_k) {
        sd_error e;
        if (S_count_list("--k", ks, kv, &nk, sizeof kv / sizeof kv[0], &e))
            return cli_usage_error("eval speedup", "%s", e.msg);
    }
    char *acopy = strdup(algos ? algos : sd_verifier_baseline()->name);
    char **av = calloc((size_t)argc + 1, sizeof *av);
    json_t *arr = json_array();
    int json = 0, status = 0;
    for (int i = 1; i < argc; i++)
        json |= strcmp(argv[i], "--json") == 0;
    if (!acopy || !av || !arr) {
        free(acopy);
        free(av);
        json_decref(arr);
        return cli_out_of_memory();
    }
    char kbuf[32], wbuf[300];
    int first = 1;
    char *save = NULL;
    for (char *a = strtok_r(acopy, ",", &save); status == 0 && a; a = strtok_r(NULL, ",", &save)) {
        for (size_t j = 0; status == 0 && j < nk; j++) {
            memcpy(av, argv, (size_t)argc * sizeof *av);
            if (list_a && at_a > 0)
                av[at_a] = a;
            else if (list_a) {
                snprintf(wbuf, sizeof wbuf, "--algo=%s", a);
                av[-at_a] = wbuf;
            }
            if (list_k) {
                const sd_verifier_type *vt = sd_verifier_find(a);
                if (vt && !sd_params_decl(vt, "k", NULL) && j > 0)
                    continue; /* a verifier without k: once */
                snprintf(kbuf, sizeof kbuf, at_k > 0 ? "%zu" : "--k=%zu", kv[j]);
                if (vt && !sd_params_decl(vt, "k", NULL)) { /* drop --k for it */
                    int w = 0;
                    for (int i = 0; i < argc; i++) {
                        if ((at_k > 0 && (i == at_k || i == at_k - 1)) || (at_k < 0 && i == -at_k))
                            continue;
                        av[w++] = av[i];
                    }
                    av[w] = NULL;
                    status = S_speedup_one(w, av, NULL, 0, json ? arr : NULL, !first);
                    first = 0;
                    continue;
                }
                av[at_k > 0 ? at_k : -at_k] = kbuf;
            }
            av[argc] = NULL;
            status = S_speedup_one(argc, av, NULL, 0, json ? arr : NULL, !first);
            first = 0;
        }
    }
    if (status == 0 && json)
        status = cli_print_json(arr);
    else
        json_decref(arr);
    free(acopy);
    free(av);
    return status;
}

int eval_speedup_fields(const cli_field *fields, size_t n)
{
    if (cli_fields_has(fields, n, "draft-policy"))
        return eval_policy_fields(fields, n);
    const char *algos = cli_fields_last(fields, n, "algo"), *ks = cli_fields_last(fields, n, "k");
    int list_a = algos && strchr(algos, ','), list_k = ks && (strchr(ks, ',') || strstr(ks, ".."));
    if (!list_a && !list_k)
        return S_speedup_one(0, NULL, fields, n, NULL, 0);
    size_t kv[256], nk = 1;
    if (list_k) {
        sd_error e;
        if (S_count_list("--k", ks, kv, &nk, sizeof kv / sizeof kv[0], &e))
            return cli_usage_error(S_cmd, "%s", e.msg);
    }
    char *acopy = strdup(algos ? algos : sd_verifier_baseline()->name);
    cli_field *f = calloc(n ? n : 1, sizeof *f);
    json_t *arr = json_array();
    int status = 0;
    if (!acopy || !f || !arr)
        status = cli_out_of_memory();
    char kbuf[32], *save = NULL;
    for (char *a = acopy ? strtok_r(acopy, ",", &save) : NULL; status == 0 && a; a = strtok_r(NULL, ",", &save)) {
        const sd_verifier_type *vt = sd_verifier_find(a);
        int has_k = !vt || sd_params_decl(vt, "k", NULL);
        for (size_t j = 0; status == 0 && j < nk && (has_k || j == 0); j++) {
            /* the point's fields: its verifier, its k (none for a verifier
             * without k: evaluated once) */
            size_t m = 0;
            snprintf(kbuf, sizeof kbuf, "%zu", kv[j]);
            for (size_t i = 0; i < n; i++) {
                if (list_a && strcmp(fields[i].name, "algo") == 0)
                    f[m++] = (cli_field){"algo", a};
                else if (list_k && strcmp(fields[i].name, "k") == 0) {
                    if (has_k)
                        f[m++] = (cli_field){"k", kbuf};
                } else
                    f[m++] = fields[i];
            }
            status = S_speedup_one(0, NULL, f, m, arr, 0);
        }
    }
    if (status == 0)
        status = cli_print_json(arr);
    else
        json_decref(arr);
    free(acopy);
    free(f);
    return status;
}
