/* eval_accept.c — the expected accepted draft tokens of one iteration from
 * a context, for any verifier (eval_accept.h).
 *
 * The iteration from the context x_{t-1} = a is the first iteration on the
 * sub-chain of horizon G + 1 that starts there (cli_first_iteration), G
 * the verifier's draft length: its gamma, or its tree's depth.  Exact
 * where the verifier has an iteration law (sd_verifier_type.iteration_law:
 * E[accepted] = sum over outcomes of P(outcome) (emitted - 1), the last
 * token being the bonus or residual draw), Monte-Carlo with its standard
 * error always (--trials, default 100000, trial i on stream (--seed, i)):
 * the two side by side are a check of the law. */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../sims/engine/sd_params.h"
#include "../sims/engine/sd_sim.h"
#include "../sims/exact/sd_iid_pos.h"
#include "../src/sd_backoff.h"
#include "../src/sd_mem.h"
#include "../src/sd_model.h"
#include "../src/sd_version.h"
#include "cli.h"
#include "cli_verifiers.h"
#include "eval_accept.h"
#include "../sims/verifiers/sd_tree.h"

static const char S_help[] =
    "Usage: simdec eval accept-length --algo NAME [its parameters: --gamma G | --tree b1,..,bd ...]\n"
    "                                 [--p LIST --q LIST | model --step t --state a]\n"
    "                                 [--trials N] [--seed S] [--plugin FILE.so] [--json]\n"
    "\n"
    "Expected number of draft tokens accepted in one iteration from a context by\n"
    "any verifier other than token, block, full and the built-in tree verifiers\n"
    "(those are enumerated exactly; see --algo token --help): a plugin's, a\n"
    "Python verifier's, a multi-draft one.  Its draft length is its gamma\n"
    "(required) or, for a verifier declaring tree, the tree's depth.  Exact where\n"
    "the verifier has an iteration law (sum over its outcomes of P(outcome)\n"
    "(emitted - 1)) -- for a tree verifier given as a tree rule, the enumeration\n"
    "of every drafted tree (up to 4e6 trees) -- and a Monte-Carlo estimate with\n"
    "its standard error always, so the two check each other.  With --p/--q whose\n"
    "V x V rows exceed half the memory budget, the rows are kept as one pair (O(V))\n"
    "and the verifier's kernel for sparse rows gives the Monte-Carlo estimate (exact\n"
    "too from a per-position law, if the verifier has one); a verifier without such\n"
    "a kernel is refused, naming the size and the budget.\n"
    "\n"
    "  --algo NAME     the verifier (plugins with --plugin FILE.so)\n"
    "  --step t        with a model: the first drafted position (default 1)\n"
    "  --state a       with a model: x_{t-1} (default 0)\n"
    "  --p/--q         a single-token problem (tokens i.i.d.)\n"
    "  --trials N      Monte-Carlo trials (default 100000)\n"
    "  --seed S        trial i uses stream (S, i) (default 1)\n"
    "  --json          {\"expected_accepted\", \"method\", \"exact\", \"mc\": {mean, stderr, ...}}\n"
    "\n";

static int S_is_exact_algo(const char *a)
{
    return !strcmp(a, "token") || !strcmp(a, "block") || !strcmp(a, "full");
}

/* 1 when --p LIST pv (and --max-memory mm, if given) make V x V rows
 * exceed half the memory budget: the i.i.d. rows are then kept as one
 * pair. */
static int S_pq_sparse(const char *pv, const char *mm)
{
    if (!pv)
        return 0;
    cli_model_opts mo;
    sd_error err;
    cli_model_init(&mo);
    int ok = cli_model_option(&mo, CLI_OPT_P, pv, &err) > 0 &&
             (!mm || cli_model_option(&mo, CLI_OPT_MAX_MEMORY, mm, &err) > 0);
    int sparse = ok && sd_gen_chain_bytes(mo.pV, 1) > sd_mem_budget(mo.max_memory) / 2;
    cli_model_release(&mo);
    return sparse;
}

/* Whether --algo `algo` is this file's (--p pv, --max-memory mm); the
 * plugins of args are loaded to know (args NULL: loaded already). */
static int S_takes(const char *algo, const char *pv, const char *mm, const cli_args *args)
{
    if (!algo || S_is_exact_algo(algo))
        return 0;
    if (sd_tree_kind_find(algo) && S_pq_sparse(pv, mm))
        return 1; /* a tree verifier on i.i.d. rows too large to store: its sparse-row kernel here */
    sd_error err;
    if (args && cli_plugins_load(args, &err))
        return 1; /* reported again by the command */
    /* an unknown name stays with cmd_eval.c, which lists what --algo takes;
     * the built-in tree verifiers too (enumeration alone); a tree rule given
     * at run time comes here: enumerated where it can be, and measured */
    const sd_tree_kind *k = sd_tree_kind_find(algo);
    return sd_verifier_find(algo) != NULL && (k == NULL || k->rule == SD_TREE_CALLBACK);
}

int eval_accept_takes(int argc, char **argv)
{
    cli_args args; /* the one argv pass (cli_opts.h) */
    if (cli_args_scan(argc, argv, &args))
        return 0; /* out of memory: the command reports it */
    int takes = S_takes(cli_args_last(&args, "algo", NULL, NULL), cli_args_last(&args, "p", NULL, NULL),
                        cli_args_last(&args, "max-memory", NULL, NULL), &args);
    cli_args_free(&args);
    return takes;
}

/* The first iteration of vt on the i.i.d. rows --p/--q kept as one row
 * pair (src/sd_backoff.h, horizon G + 1), by the verifier's kernel for
 * sparse rows with the first-iteration stop rule: O(V) memory.  A
 * verifier without such a kernel is refused by the engine. */
static int S_iid_first_iteration(const sd_verifier_type *vt, const sd_params *par, const cli_model_opts *mo,
                                 size_t G, uint64_t trials, uint64_t seed, sd_welford *acc, sd_error *err)
{
    sd_backoff *bm = NULL;
    int rc = sd_backoff_iid(mo->p, mo->q, mo->pV, G + 1, sd_mem_budget(mo->max_memory), &bm, err);
    if (rc)
        return rc;
    sd_model m = sd_model_of_backoff(bm, bm->V, bm->T);
    sd_sim_job job = {vt, &m, par};
    sd_sim_opts so = {.seed = seed, .trials = trials, .stop = {.first_iteration = 1}};
    sd_sim_result res;
    rc = sd_sim_run_job(&job, &so, &res, err);
    if (!rc) {
        *acc = res.accepted;
        sd_sim_result_free(&res);
    } else if (rc == SD_EUSAGE) { /* no kernel for sparse rows: the size is why */
        char why[sizeof err->msg];
        snprintf(why, sizeof why, "%s", err->msg);
        size_t budget = sd_mem_budget(mo->max_memory);
        rc = sd_error_set(err, SD_ETOOBIG, "--algo %s on --p/--q at V = %zu: its steps read V x V rows, %.4g GB, "
                          "over half the memory budget %.3g GB (%s); refusing before allocating (%s)", vt->name, mo->pV,
                          (double)sd_gen_chain_bytes(mo->pV, 1) / 1e9, (double)budget / 1e9,
                          mo->max_memory ? "--max-memory" : "half of the memory available", why);
    }
    sd_backoff_free(bm);
    return rc;
}

enum { O_STEP = CLI_OPT_FIRST_FREE, O_STATE, O_JSON, O_TRIALS, O_SEED, O_ALGO };
static const struct option S_base[] = {
    CLI_MODEL_LONGOPTS,
    CLI_PLUGIN_LONGOPT,
    {"algo", required_argument, 0, O_ALGO},
    {"step", required_argument, 0, O_STEP},
    {"state", required_argument, 0, O_STATE},
    {"json", no_argument, 0, O_JSON},
    {"trials", required_argument, 0, O_TRIALS},
    {"seed", required_argument, 0, O_SEED},
    {"help", no_argument, 0, 'h'},
    {0, 0, 0, 0},
};
static const char S_cmd[] = "eval accept-length";

typedef struct {
    cli_verifiers vs;
    cli_model_opts mo;
    size_t t, a;
    int json, ctx; /* ctx: --step or --state given */
    uint64_t trials, seed;
} S_req;

/* Option c with value arg: -1 to go on, 1 when it is not the command's, or
 * an exit status after printing the error (0 after --help). */
static int S_option(void *ctx, int c, const char *arg)
{
    S_req *rq = ctx;
    sd_error err;
    int r = cli_model_option(&rq->mo, c, arg, &err);
    if (r == 0)
        r = cli_verifiers_option(&rq->vs, c, arg, &err);
    if (r)
        return r < 0 ? cli_fail(&err) : -1;
    switch (c) {
    case 'h':
        fputs(S_help, stdout);
        for (size_t j = 0; j < rq->vs.n; j++) {
            cli_params_help(stdout, rq->vs.v[j].vt);
            fputc('\n', stdout);
        }
        fputs(cli_model_help, stdout);
        return 0;
    case O_ALGO: return -1; /* found by cli_verifiers_prescan / _choose */
    case O_STEP: rq->ctx = 1; r = cli_parse_size("--step", arg, 1, SIZE_MAX, &rq->t, &err); break;
    case O_STATE: rq->ctx = 1; r = cli_parse_size("--state", arg, 0, SIZE_MAX, &rq->a, &err); break;
    case O_JSON: rq->json = 1; break;
    case O_TRIALS: r = cli_parse_trials(arg, &rq->trials, &err); break;
    case O_SEED: r = cli_parse_seed(arg, &rq->seed, &err); break;
    default: return 1;
    }
    return r ? cli_fail(&err) : -1;
}

/* Chooses the verifiers (the last --algo of argv, or `algo` when argv is
 * NULL) into rq. */
static int S_begin(S_req *rq, const char *algo, int argc, char **argv, struct option **opts)
{
    memset(rq, 0, sizeof *rq);
    cli_model_init(&rq->mo);
    rq->t = 1;
    rq->trials = 100000;
    rq->seed = 1;
    return argv ? cli_verifiers_prescan(S_cmd, argc, argv, "algo", S_base, NULL, &rq->vs, opts)
                : cli_verifiers_choose(S_cmd, "algo", algo, S_base, NULL, &rq->vs, opts);
}

static int S_run(S_req *rq);

int cmd_eval_accept_verifier(int argc, char **argv)
{
    S_req rq;
    struct option *opts;
    int status = S_begin(&rq, NULL, argc, argv, &opts);
    if (status >= 0)
        return status;
    status = cli_options_read(S_cmd, argc, argv, opts, S_option, &rq, rq.vs.n ? rq.vs.v[0].vt : NULL);
    free(opts);
    if (status >= 0) {
        cli_model_release(&rq.mo);
        return status;
    }
    return S_run(&rq);
}

int eval_accept_fields(const cli_field *fields, size_t n)
{
    static const int refuse[] = {0};
    const char *algo = cli_fields_last(fields, n, "algo");
    if (!S_takes(algo, cli_fields_last(fields, n, "p"), cli_fields_last(fields, n, "max-memory"), NULL))
        return -1;
    S_req rq;
    struct option *opts;
    int status = S_begin(&rq, algo, 0, NULL, &opts);
    if (status >= 0)
        return status;
    status = cli_fields_apply(opts, fields, n, refuse, S_option, &rq);
    free(opts);
    if (status == CLI_NOT_A_FIELD)
        status = cli_fields_refused(S_cmd, rq.vs.n ? rq.vs.v[0].vt : NULL);
    if (status >= 0) {
        cli_model_release(&rq.mo);
        return status;
    }
    rq.json = 1;
    return S_run(&rq);
}

/* The iteration's accepted length and its output. */
static int S_run(S_req *rq)
{
    const char *cmd = S_cmd;
    cli_verifiers vs = rq->vs;
    cli_model_opts mo = rq->mo;
    size_t t = rq->t, a = rq->a;
    int json = rq->json, ctx = rq->ctx, status = -1;
    uint64_t trials = rq->trials, seed = rq->seed;
    sd_error err;
    if (vs.n != 1)
        status = cli_usage_error(cmd, "--algo: one verifier (got %zu)", vs.n);
    const sd_verifier_type *vt = status < 0 ? vs.v[0].vt : NULL;
    sd_params *par = &vs.v[0].par;
    size_t G = 0;
    if (status < 0) {
        if (sd_params_decl(vt, "tree", NULL))
            G = par->tree_depth;
        else if (!sd_params_decl(vt, "gamma", NULL))
            status = cli_usage_error(cmd, "%s reads neither gamma nor tree, so an iteration of it has no draft "
                                     "length to evaluate; expected a verifier declaring gamma or tree", vt->name);
        else if ((G = par->gamma) == 0)
            status = cli_usage_error(cmd, "--gamma G is required for %s (its draft length)", vt->name);
    }
    sd_chain *ch = NULL;
    int sparse = 0;
    if (status < 0 && (mo.p || mo.q)) {
        if (ctx || mo.T_given)
            status = cli_usage_error(cmd, "--step/--state/--T select a context of a model, not of --p/--q");
        else if (!mo.p || !mo.q)
            status = cli_usage_error(cmd, "a single-token problem needs both --p and --q");
        else if (mo.pV != mo.qV)
            status = cli_usage_error(cmd, "--p has %zu entries but --q has %zu; expected the same vocabulary", mo.pV,
                                     mo.qV);
        else if (cli_model_lists_check(&mo, &err))
            status = cli_fail(&err);
        else if (sd_gen_chain_bytes(mo.pV, 1) > sd_mem_budget(mo.max_memory) / 2)
            sparse = 1; /* V x V rows would not fit: one row pair, Monte-Carlo by the verifier's sparse kernel
                         * and, where it has one, the exact per-position law */
        else if (!(ch = cli_model_pq_chain(&mo, G + 1, &err)))
            status = cli_fail(&err);
        t = 1;
        a = 0;
    } else if (status < 0) {
        if (!(ch = cli_model_build(&mo, &err)) || cli_context_check(ch, t, a, &err))
            status = cli_fail(&err);
        else if (G > ch->T - t + 1)
            status = cli_usage_error(cmd, "a draft of %zu tokens at --step %zu runs past the horizon T = %zu (at "
                                     "most %zu fit)", G, t, ch->T, ch->T - t + 1);
    }
    sd_welford acc;
    double exact = NAN;
    char why[256] = "";
    if (status < 0 && sparse) {
        snprintf(why, sizeof why, "i.i.d. rows at V = %zu kept as one row pair: the iteration law needs V x V rows "
                 "(%.4g GB, over half the memory budget)", mo.pV, (double)sd_gen_chain_bytes(mo.pV, 1) / 1e9);
        int rc = S_iid_first_iteration(vt, par, &mo, G, trials, seed, &acc, &err), rx = SD_OK;
        if (!rc) /* exact where the verifier has a per-position law (sims/exact/sd_iid_pos.h) */
            rx = sd_iid_pos_mean(vt, par, mo.p, mo.q, mo.pV, G, sd_mem_budget(mo.max_memory), &exact, &err);
        if (rx == SD_ETOOBIG) /* over the work limit or the budget: Monte-Carlo alone, saying why */
            snprintf(why, sizeof why, "%.250s", err.msg);
        else if (rc || (rx && rx != SD_EUSAGE))
            status = cli_fail(&err);
    } else if (status < 0 &&
               cli_first_iteration(vt, par, ch, t, a, G, trials, seed, &acc, &exact, why, sizeof why, &err)) {
        status = cli_fail(&err);
    }
    if (status >= 0) {
        sd_chain_free(ch);
        cli_model_release(&mo);
        return status;
    }
    double se = sd_welford_stderr(&acc), best = isfinite(exact) ? exact : acc.mean;
    double z = isfinite(exact) ? cli_gap_in_se(exact, acc.mean, se) : NAN;
    const char *method = !isfinite(exact) ? "Monte-Carlo"
                         : sparse ? "the verifier's per-position law on the row pair (exact)"
                         : vt->tree ? "enumeration of every drafted tree (exact)"
                                    : "the verifier's iteration law (exact)";
    if (json) {
        json_t *o = json_object(), *m = json_object();
        json_object_set_new(o, "expected_accepted", json_real(best));
        json_object_set_new(o, "method", json_string(method));
        json_object_set_new(o, "algo", json_string(vt->name));
        json_object_set_new(o, "params", sd_params_json(par, vt));
        json_object_set_new(o, "draft_length", json_integer((json_int_t)G));
        json_object_set_new(o, "exact", cli_json_real(exact));
        if (!isfinite(exact))
            json_object_set_new(o, "exact_not_computed", json_string(why));
        json_object_set_new(m, "mean", json_real(acc.mean));
        json_object_set_new(m, "stderr", json_real(se));
        json_object_set_new(m, "trials", json_integer((json_int_t)trials));
        json_object_set_new(m, "seed", json_integer((json_int_t)seed));
        json_object_set_new(m, "exact_minus_mean_in_se", cli_json_real(z));
        json_object_set_new(o, "mc", m);
        if (!mo.p) {
            json_object_set_new(o, "step", json_integer((json_int_t)t));
            json_object_set_new(o, "state", json_integer((json_int_t)a));
            sd_model md = sd_model_of_chain(ch);
            cli_model_describe(&mo, &md, o);
        } else {
            json_t *mm = json_object();
            json_object_set_new(mm, "source", json_string("pq"));
            json_object_set_new(mm, "vocab", json_integer((json_int_t)mo.pV));
            json_object_set_new(o, "model", mm);
        }
        json_object_set_new(o, "version", json_string(SD_VERSION));
        status = cli_print_json(o);
    } else {
        char pars[512];
        sd_params_format(par, vt, pars, sizeof pars);
        if (mo.p)
            printf("model        single-token problem (--p/--q), V=%zu%s\n", mo.pV,
                   sparse ? " (one row pair kept: O(V) memory)" : "");
        else
            printf("model        V=%zu, T=%zu; context step t=%zu, x_{t-1}=%zu\n", ch->V, ch->T, t, a);
        printf("verifier     %s%s (draft length %zu)\n", vt->name, pars, G);
        if (isfinite(exact))
            printf("E[accepted]  %.12f   (%s)\n", exact, method);
        else
            printf("E[accepted]  n/a exactly (%s)\n", why);
        printf("Monte-Carlo  %.6f +- %.6f (1 se), %llu trials, seed %llu", acc.mean, se,
               (unsigned long long)trials, (unsigned long long)seed);
        if (isfinite(z))
            printf("; exact - MC = %+.2f se", z);
        putchar('\n');
        status = cli_stdout_status();
    }
    sd_chain_free(ch);
    cli_model_release(&mo);
    return status;
}
