/* cmd_eval.c — `simdec eval WHAT`: exact evaluators, one
 * subcommand each, dispatched from a table.  All subcommands share one
 * option parser; each names the options it reads (S_sub.accepts), and any
 * other option is refused with a message naming it. */
#include <getopt.h>
#include <math.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>

#include "../src/sd_backoff.h"
#include "../src/sd_dist.h"
#include "../src/sd_exact.h"
#include "../src/sd_exact_accept.h"
#include "../src/sd_accept_iid.h"
#include "../src/sd_mem.h"
#include "../src/sd_exact_batch.h"
#include "../lp/sd_lp.h"
#include "../src/sd_exact_otm.h"
#include "../src/sd_exact_single.h"
#include "../src/sd_kseq.h"
#include "../sims/engine/sd_params.h"
#include "../sims/exact/sd_exact_tree.h"
#include "cli.h"
#include "suggest.h"
#include "eval_speedup.h"
#include "eval_accept.h"
#include "../src/sd_version.h"
#include "commands.h"

/* Options a subcommand may read (bits of S_sub.accepts). */
enum {
    A_MODEL = 1 << 0, /* --model/--V/--T/--model-seed/--alpha/--mix */
    A_PQ = 1 << 1,    /* --p/--q */
    A_M = 1 << 2,     /* --M m|inf */
    A_EPS = 1 << 3,
    A_GAMMA = 1 << 4,
    A_K = 1 << 5,
    A_ALGO = 1 << 6,
    A_CTX = 1 << 7,   /* --step t --state a */
    A_SPRINTER = 1 << 8, /* --tp --fp --r --td */
    A_TREE = 1 << 9,     /* --tree --draw (accept-length of the tree verifiers) */
    A_DRAW = 1 << 10,    /* --draw iid|wor (acceptance) */
    A_METHOD = 1 << 11,  /* --method (acceptance) */
    A_MC = 1 << 12       /* --trials --seed (accept-length's Monte-Carlo terms on --p/--q) */
};

typedef struct {
    cli_model_opts mo;
    int json;
    size_t M;
    int M_inf, M_given;
    double eps;
    int eps_given;
    size_t gamma;
    int gamma_given;
    size_t k;
    const char *algo;
    size_t step, state;
    int ctx_given;
    double tp, fp, td;
    size_t r;
    unsigned sprinter_given; /* bits: 1 tp, 2 fp, 4 r */
    const char *tree, *draw; /* --tree, --draw as given */
    const char *method;      /* --method as given */
    uint64_t trials, seed;   /* --trials, --seed */
} S_args;

typedef struct S_sub {
    const char *name;
    int (*fn)(const struct S_sub *sub, S_args *a);
    const char *summary;
    unsigned accepts;
    const char *help;
} S_sub;

enum {
    O_JSON = CLI_OPT_FIRST_FREE,
    O_ALGO,
    O_STEP,
    O_STATE,
    O_R,
    O_TD,
    O_M,
    O_EPS,
    O_GAMMA,
    O_K,
    O_TP,
    O_FP,
    O_TREE,
    O_DRAW,
    O_METHOD,
    O_TRIALS,
    O_SEED
};

static const struct option S_opts[] = {
    CLI_MODEL_LONGOPTS,
    {"M", required_argument, 0, O_M},
    {"eps", required_argument, 0, O_EPS},
    {"gamma", required_argument, 0, O_GAMMA},
    {"k", required_argument, 0, O_K},
    {"tp", required_argument, 0, O_TP},
    {"fp", required_argument, 0, O_FP},
    {"algo", required_argument, 0, O_ALGO},
    {"step", required_argument, 0, O_STEP},
    {"state", required_argument, 0, O_STATE},
    {"r", required_argument, 0, O_R},
    {"td", required_argument, 0, O_TD},
    {"json", no_argument, 0, O_JSON},
    {"tree", required_argument, 0, O_TREE},
    {"draw", required_argument, 0, O_DRAW},
    {"method", required_argument, 0, O_METHOD},
    {"trials", required_argument, 0, O_TRIALS},
    {"seed", required_argument, 0, O_SEED},
    {"help", no_argument, 0, 'h'},
    {0, 0, 0, 0},
};

/* The bit of S_sub.accepts an option needs (0: always accepted). */
static unsigned S_needs(int c)
{
    switch (c) {
    case CLI_OPT_MODEL: case CLI_OPT_V: case CLI_OPT_MODEL_SEED: case CLI_OPT_ALPHA:
    case CLI_OPT_MIX: return A_MODEL;
    case CLI_OPT_T: return A_MODEL | A_PQ;
    case CLI_OPT_P: case CLI_OPT_Q: return A_PQ;
    case O_M: return A_M;
    case O_EPS: return A_EPS;
    case O_GAMMA: return A_GAMMA;
    case O_K: return A_K;
    case O_ALGO: return A_ALGO;
    case O_STEP: case O_STATE: return A_CTX;
    case O_TP: case O_FP: case O_R: case O_TD: return A_SPRINTER;
    case O_TREE: return A_TREE;
    case O_DRAW: return A_TREE | A_DRAW;
    case O_METHOD: return A_METHOD;
    case O_TRIALS: case O_SEED: return A_MC;
    default: return 0;
    }
}

/* The long name of option c. */
static const char *S_optname(int c)
{
    for (const struct option *o = S_opts; o->name; o++)
        if (o->val == c)
            return o->name;
    return "?";
}

/* Parses one option value into a; SD_OK or a status with err set. */
static int S_option(S_args *a, int c, const char *arg, sd_error *err)
{
    int r = cli_model_option(&a->mo, c, arg, err);
    if (r)
        return r < 0 ? SD_EUSAGE : SD_OK;
    switch (c) {
    case O_M:
        a->M_given = 1;
        if (strcmp(arg, "inf") == 0) {
            a->M_inf = 1;
            return SD_OK;
        }
        a->M_inf = 0;
        return cli_parse_size("--M", arg, 1, (size_t)1 << 30, &a->M, err);
    case O_EPS:
        a->eps_given = 1;
        return cli_parse_double("--eps", arg, 0.0, 1e300, &a->eps, err);
    case O_GAMMA:
        a->gamma_given = 1;
        return cli_parse_size("--gamma", arg, 1, 1u << 24, &a->gamma, err);
    case O_K: return cli_parse_size("--k", arg, 1, (size_t)1 << 30, &a->k, err);
    case O_TP: a->sprinter_given |= 1; return cli_parse_double("--tp", arg, 0.0, 1.0, &a->tp, err);
    case O_FP: a->sprinter_given |= 2; return cli_parse_double("--fp", arg, 0.0, 1.0, &a->fp, err);
    case O_R: a->sprinter_given |= 4; return cli_parse_size("--r", arg, 0, (size_t)1 << 40, &a->r, err);
    case O_TD: return cli_parse_double("--td", arg, 0.0, 1e300, &a->td, err);
    case O_ALGO: a->algo = arg; return SD_OK;
    case O_STEP: a->ctx_given = 1; return cli_parse_size("--step", arg, 1, (size_t)1 << 40, &a->step, err);
    case O_STATE: a->ctx_given = 1; return cli_parse_size("--state", arg, 0, (size_t)1 << 40, &a->state, err);
    case O_JSON: a->json = 1; return SD_OK;
    case O_TREE: a->tree = arg; return SD_OK;
    case O_DRAW: a->draw = arg; return SD_OK;
    case O_METHOD: a->method = arg; return SD_OK;
    case O_TRIALS: return cli_parse_trials(arg, &a->trials, err);
    case O_SEED: return cli_parse_seed(arg, &a->seed, err);
    default: return sd_error_set(err, SD_EINTERNAL, "unhandled option %d", c);
    }
}

static void S_sub_help(const S_sub *sub)
{
    fputs(sub->help, stdout);
    if (sub->accepts & A_MODEL) {
        fputc('\n', stdout);
        fputs(cli_model_help, stdout);
    } else if (sub->accepts & A_PQ) {
        fputs("\n  --p LIST --q LIST   draft p and target q: comma-separated numbers or @FILE\n", stdout);
    }
}

/* The defaults of every option. */
static void S_args_init(S_args *a)
{
    memset(a, 0, sizeof *a);
    cli_model_init(&a->mo);
    a->M = 1;
    a->k = 2;
    a->step = 1;
    a->td = 1.0;
    a->trials = 100000;
    a->seed = 1;
}

/* Parses argv for sub into a.  Returns -1 to go on, or an exit status
 * (0 after --help). */
static int S_parse(const S_sub *sub, int argc, char **argv, S_args *a)
{
    char cmd[64];
    snprintf(cmd, sizeof cmd, "eval %s", sub->name);
    S_args_init(a);
    sd_error err;
    int c;
    optind = 0;
    opterr = 0;
    while ((c = cli_getopt(argc, argv, ":h", S_opts)) != -1) {
        if (c == 'h') {
            S_sub_help(sub);
            return 0;
        }
        if (c == ':' || c == '?')
            return cli_option_error(cmd, c, argv);
        unsigned need = S_needs(c);
        if (need && !(need & sub->accepts))
            return cli_usage_error(cmd, "option '--%s' does not apply to eval %s", S_optname(c),
                                   sub->name);
        if (S_option(a, c, optarg, &err) != SD_OK)
            return cli_fail(&err);
    }
    if (optind < argc)
        return cli_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
    return -1;
}

/* --- the inputs: a chain, or the distributions of one position ----------- */

/* With --p/--q: checks both are present and of one length. */
static int S_pq(const S_args *a, sd_error *err)
{
    if (!a->mo.p || !a->mo.q)
        return sd_error_set(err, SD_EUSAGE, "a single-token problem needs both --p and --q");
    if (a->mo.pV != a->mo.qV)
        return sd_error_set(err, SD_EUSAGE,
                            "--p has %zu entries but --q has %zu; expected the same vocabulary",
                            a->mo.pV, a->mo.qV);
    if (a->mo.file || a->mo.gen_given)
        return sd_error_set(err, SD_EUSAGE, "--p/--q and a model are alternatives; give one");
    return cli_model_lists_check(&a->mo, err);
}

/* The distributions (p, q) of one position: --p/--q, or the rows
 * p_t(.|a), q_t(.|a) of the model at --step t --state a (*chain then owns
 * them; the caller frees it). */
static int S_rows(const S_args *a, const double **p, const double **q, size_t *V,
                  sd_chain **chain, sd_error *err)
{
    *chain = NULL;
    if (a->mo.p || a->mo.q) {
        if (a->ctx_given)
            return sd_error_set(err, SD_EUSAGE, "--step/--state select a row of a model, not of --p/--q");
        int st = S_pq(a, err);
        if (st)
            return st;
        *p = a->mo.p;
        *q = a->mo.q;
        *V = a->mo.pV;
        return SD_OK;
    }
    sd_chain *c = cli_model_build(&a->mo, err);
    if (!c)
        return err->code;
    int st = cli_context_check(c, a->step, a->state, err);
    if (st) {
        sd_chain_free(c);
        return st;
    }
    *p = sd_chain_p(c, a->step, a->state);
    *q = sd_chain_q(c, a->step, a->state);
    *V = c->V;
    *chain = c;
    return SD_OK;
}

/* JSON description of the input: the model, or {"source": "pq", "vocab": V}
 * plus the context row of a model. */
static void S_describe(const S_args *a, const sd_chain *c, size_t V, json_t *o)
{
    json_object_set_new(o, "version", json_string(SD_VERSION));
    if (c && !a->mo.p) {
        sd_model md = sd_model_of_chain(c);
        cli_model_describe(&a->mo, &md, o);
    } else {
        json_t *m = json_object();
        json_object_set_new(m, "source", json_string("pq"));
        json_object_set_new(m, "vocab", json_integer((json_int_t)V));
        if (c)
            json_object_set_new(m, "horizon", json_integer((json_int_t)c->T));
        json_object_set_new(o, "model", m);
    }
}

static void S_describe_table(const S_args *a, const sd_chain *c, size_t V, int ctx)
{
    if (a->mo.p && a->mo.T_given)
        printf("model        i.i.d. tokens (--p/--q), V=%zu, T=%zu\n", V, a->mo.gen.T);
    else if (a->mo.p)
        printf("model        single-token problem (--p/--q), V=%zu\n", V);
    else if (a->mo.file)
        printf("model        %s, V=%zu, T=%zu\n", a->mo.file, c->V, c->T);
    else if (a->mo.gen.rng == SD_GEN_NUMPY_MT19937)
        printf("model        generated, V=%zu, T=%zu, model-seed %lu, rng numpy-mt19937 (Yin et al. App. F)\n",
               c->V, c->T, a->mo.gen.seed);
    else
        printf("model        generated, V=%zu, T=%zu, model-seed %lu, alpha %g, mix %g\n", c->V, c->T,
               a->mo.gen.seed, a->mo.gen.alpha, a->mo.gen.mix);
    if (ctx && !a->mo.p)
        printf("context      step t=%zu, x_{t-1}=%zu\n", a->step, a->state);
}

static json_t *S_M_json(const S_args *a)
{
    return a->M_inf ? json_string("inf") : json_integer((json_int_t)a->M);
}

/* Finishes a subcommand: frees, prints JSON or returns the table status. */
static int S_finish(S_args *a, sd_chain *c, json_t *o, int status)
{
    if (o && status == 0)
        status = cli_print_json(o);
    else if (o)
        json_decref(o);
    sd_chain_free(c);
    cli_model_release(&a->mo);
    return status;
}

/* --- eval rejections ------------------------------------------------------ */

static const char S_rej_help[] =
    "Usage: simdec eval rejections [model | --p LIST --q LIST] [--M m|inf] [--json]\n"
    "\n"
    "Expected number of rejections with lookahead to the horizon, exactly.\n"
    "  M = 1 (default): token-level SD, Theorem 1 of Yin et al. 2024:\n"
    "      E[N_rej] = sum_n sum_a Q_{n-1}(a) TV(p_n(.|a), q_n(.|a)),  O(T V^2).\n"
    "  M >= 2: batch SD, Theorem 3 of Yin et al. 2024, by a recursion over\n"
    "      F_n(b) = P(x_n = b produced by a rejection), checked against an\n"
    "      independent dynamic program over (x_{n-1}, fresh or continuing);\n"
    "      O(T V^2 M), refused beyond T V^2 M = 2^36.\n"
    "  M = inf: the limit M -> inf (Proposition 1 of Yin et al. 2024, corrected: where the\n"
    "      target puts mass q(Z) on tokens Z the draft never proposes, a fresh\n"
    "      position still rejects with probability q(Z)).\n"
    "With --p/--q (and no --T) the answer is the rejection probability of one\n"
    "token: prod_{m=1..M} TV(q^m, p).\n"
    "\n"
    "  --M m|inf       number of drafts (default 1)\n"
    "  --json          one JSON object: {\"rejections\": x, ...}\n";

/* E[N_rej] for M (0 = ∞) on chain c; *dp gets the DP's value (NAN if not
 * computed). */
static int S_chain_rejections(const sd_chain *c, const S_args *a, double *rej, double *dp,
                              const char **method, sd_error *err)
{
    *dp = NAN;
    if (a->M_inf) {
        *method = "proposition1-corrected";
        return sd_exact_batch_rejections_inf(c, rej, err);
    }
    if (a->M == 1) {
        *method = "theorem1";
        return sd_exact_rejections(c, rej, err);
    }
    *method = "theorem3";
    int st = sd_exact_batch_rejections(c, a->M, rej, err);
    return st ? st : sd_exact_batch_rejections_dp(c, a->M, dp, err);
}

static int S_rejections(const S_sub *sub, S_args *a)
{
    (void)sub;
    sd_error err;
    sd_chain *c = NULL;
    double rej, dp = NAN;
    const char *method;
    size_t V;
    if (a->mo.p && !a->mo.T_given) {
        /* one token: the probability that its iteration ends in a residual */
        if (S_pq(a, &err))
            return S_finish(a, NULL, NULL, cli_fail(&err));
        V = a->mo.pV;
        if (a->M_inf) {
            double bi;
            sd_exact_batch_improvement(a->mo.p, a->mo.q, V, 0, &bi, &err);
            rej = sd_dist_tv(a->mo.p, a->mo.q, V) - bi;
            method = "proposition1-corrected";
        } else {
            if (sd_exact_batch_improvement(a->mo.p, a->mo.q, V, a->M, &rej, &err))
                return S_finish(a, NULL, NULL, cli_fail(&err));
            rej = sd_dist_tv(a->mo.p, a->mo.q, V) - rej;
            method = a->M == 1 ? "theorem1" : "theorem3";
        }
    } else if (a->mo.arpa.given && a->mo.arpa.draft_order == 2 && !a->M_inf && a->M == 1) {
        /* a bigram draft: Theorem 1 from the per-context TV of the two files' rows */
        char sha[65];
        double calls;
        size_t T = a->mo.T_given ? a->mo.gen.T : 50;
        if (cli_arpa_theorem1_draft2(&a->mo.arpa, T, sd_mem_budget(a->mo.max_memory), &rej, &calls, &V, sha, &err))
            return S_finish(a, NULL, NULL, cli_fail(&err));
        const char *df = a->mo.arpa.draft_file ? a->mo.arpa.draft_file : a->mo.arpa.file;
        if (a->json) {
            json_t *o = json_object(), *mj = json_object();
            json_object_set_new(o, "rejections", json_real(rej));
            json_object_set_new(o, "target_calls", json_real(calls));
            json_object_set_new(o, "M", S_M_json(a));
            json_object_set_new(o, "method", json_string("theorem1"));
            json_object_set_new(o, "version", json_string(SD_VERSION));
            json_object_set_new(mj, "source", json_string("arpa"));
            json_object_set_new(mj, "arpa", json_string(a->mo.arpa.file));
            json_object_set_new(mj, "sha256", json_string(sha));
            json_object_set_new(mj, "order", json_integer(2));
            json_object_set_new(mj, "draft_arpa", json_string(df));
            json_object_set_new(mj, "draft_order", json_integer(2));
            json_object_set_new(mj, "vocab", json_integer((json_int_t)V));
            json_object_set_new(mj, "horizon", json_integer((json_int_t)T));
            json_object_set_new(o, "model", mj);
            return S_finish(a, NULL, o, 0);
        }
        printf("model        %s (ARPA) bigram target, bigram draft from %s, V=%zu, T=%zu\n"
               "             sha256 %s\n", a->mo.arpa.file, df, V, T, sha);
        printf("E[N_rej]     %.12f   (Theorem 1, token-level SD, lookahead to the horizon; the TV of the two "
               "bigram rows at every context)\n", rej);
        printf("E[calls]     %.12f\n", calls);
        return S_finish(a, NULL, NULL, 0);
    } else if (a->mo.arpa.given && !a->M_inf && a->M == 1) {
        /* an ARPA model: Theorem 1 from sparse TV sums (src/sd_backoff.h) */
        cli_model md;
        if (cli_model_open(&a->mo, &md, &err))
            return S_finish(a, NULL, NULL, cli_fail(&err));
        V = md.view.V;
        int st = sd_backoff_exact_token(md.backoff, 0, &rej, NULL, &err);
        if (!st && a->json) {
            json_t *o = json_object();
            json_object_set_new(o, "rejections", json_real(rej));
            json_object_set_new(o, "M", S_M_json(a));
            json_object_set_new(o, "method", json_string("theorem1"));
            cli_model_describe(&a->mo, &md.view, o);
            cli_model_close(&md);
            return S_finish(a, NULL, o, 0);
        }
        if (!st) {
            cli_model_summary(stdout, "model", &a->mo, &md.view);
            printf("E[N_rej]     %.12f   (Theorem 1 from sparse TV sums, token-level SD, lookahead to the "
                   "horizon)\n", rej);
        }
        cli_model_close(&md);
        return S_finish(a, NULL, NULL, st ? cli_fail(&err) : 0);
    } else if (a->mo.p && !a->M_inf && a->M == 1) {
        /* T i.i.d. tokens: every row is (p, q), so Theorem 1 of Yin et al.
         * 2024, E[N_rej] = Σ_n E[TV(p_n, q_n)], is T·TV(p, q) — one row in
         * memory and O(V) time instead of a V×V chain. */
        if (S_pq(a, &err))
            return S_finish(a, NULL, NULL, cli_fail(&err));
        V = a->mo.pV;
        rej = (double)a->mo.gen.T * sd_dist_tv(a->mo.p, a->mo.q, V);
        method = "theorem1";
    } else {
        if (!(c = cli_model_build(&a->mo, &err)))
            return S_finish(a, NULL, NULL, cli_fail(&err));
        V = c->V;
        if (S_chain_rejections(c, a, &rej, &dp, &method, &err))
            return S_finish(a, c, NULL, cli_fail(&err));
    }
    if (a->json) {
        json_t *o = json_object();
        json_object_set_new(o, "rejections", json_real(rej));
        json_object_set_new(o, "M", S_M_json(a));
        json_object_set_new(o, "method", json_string(method));
        if (isfinite(dp))
            json_object_set_new(o, "rejections_dp", json_real(dp));
        S_describe(a, c, V, o);
        if (!c && a->mo.p && a->mo.T_given) /* the closed form: no chain, same description */
            json_object_set_new(json_object_get(o, "model"), "horizon", json_integer((json_int_t)a->mo.gen.T));
        return S_finish(a, c, o, 0);
    }
    S_describe_table(a, c, V, 0);
    if (a->M_inf)
        printf("E[N_rej]     %.12f   (M -> inf, Proposition 1 of Yin et al. 2024, corrected)\n", rej);
    else if (a->M == 1)
        printf("E[N_rej]     %.12f   (Theorem 1, token-level SD, lookahead to the horizon)\n", rej);
    else
        printf("E[N_rej]     %.12f   (Theorem 3, batch SD, M=%zu)\n", rej, a->M);
    if (isfinite(dp))
        printf("  by the DP  %.12f   (difference %.2e)\n", dp, fabs(dp - rej));
    return S_finish(a, c, NULL, 0);
}

/* --- eval batch-improvement ----------------------------------------------- */

static const char S_bi_help[] =
    "Usage: simdec eval batch-improvement --M m|inf [model | --p LIST --q LIST] [--json]\n"
    "\n"
    "Batch improvement of M drafts over one (Yin et al. 2024, section 3.2).\n"
    "  With --p/--q: the single-token BI = TV(q,p) - prod_{m=1..M} TV(q^m, p),\n"
    "      q^1 = q, q^{m+1} = [q^m - p]+.\n"
    "  With a model: E[N_rej](M=1) - E[N_rej](M) (Theorems 1 and 3).\n"
    "\n"
    "  --M m|inf       number of drafts (required)\n"
    "  --json          one JSON object: {\"batch_improvement\": x, ...}\n";

static int S_batch_improvement(const S_sub *sub, S_args *a)
{
    sd_error err;
    if (!a->M_given)
        return S_finish(a, NULL, NULL, cli_usage_error("eval batch-improvement", "--M is required"));
    (void)sub;
    sd_chain *c = NULL;
    double bi, tv = NAN, rej1 = NAN, rejM = NAN;
    size_t V;
    if (a->mo.p || a->mo.q) {
        if (S_pq(a, &err) ||
            sd_exact_batch_improvement(a->mo.p, a->mo.q, a->mo.pV, a->M_inf ? 0 : a->M, &bi, &err))
            return S_finish(a, NULL, NULL, cli_fail(&err));
        V = a->mo.pV;
        tv = sd_dist_tv(a->mo.p, a->mo.q, V);
    } else {
        if (!(c = cli_model_build(&a->mo, &err)))
            return S_finish(a, NULL, NULL, cli_fail(&err));
        V = c->V;
        double dp;
        const char *method;
        if (sd_exact_rejections(c, &rej1, &err) || S_chain_rejections(c, a, &rejM, &dp, &method, &err))
            return S_finish(a, c, NULL, cli_fail(&err));
        bi = rej1 - rejM;
    }
    if (a->json) {
        json_t *o = json_object();
        json_object_set_new(o, "batch_improvement", json_real(bi));
        json_object_set_new(o, "M", S_M_json(a));
        if (c) {
            json_object_set_new(o, "rejections_M1", json_real(rej1));
            json_object_set_new(o, "rejections", json_real(rejM));
        } else {
            json_object_set_new(o, "tv", json_real(tv));
        }
        S_describe(a, c, V, o);
        return S_finish(a, c, o, 0);
    }
    char Ms[32];
    if (a->M_inf)
        snprintf(Ms, sizeof Ms, "inf");
    else
        snprintf(Ms, sizeof Ms, "%zu", a->M);
    S_describe_table(a, c, V, 0);
    printf("M              %s\n", Ms);
    if (c) {
        printf("E[N_rej] M=1   %.12f   (Theorem 1)\n", rej1);
        printf("E[N_rej] M=%-3s %.12f\n", Ms, rejM);
        printf("improvement    %.12f\n", bi);
    } else {
        printf("TV(p,q)        %.12f\n", tv);
        printf("BI             %.12f   (TV - prod_m TV(q^m, p))\n", bi);
    }
    return S_finish(a, c, NULL, 0);
}

/* --- eval pareto ---------------------------------------------------------- */

static const char S_pareto_help[] =
    "Usage: simdec eval pareto --eps E [--p LIST --q LIST | model --step t --state a] [--json]\n"
    "\n"
    "The rejection / bias trade-off of the over-accepting rule\n"
    "b(x) = min(1, (q(x)+E)/p(x)) (Yin et al. 2024, Theorems 4 and 5):\n"
    "  reject_prob = sum (1-b) p,\n"
    "  loss_tv     = Loss*_TV(b) = 1/2 sum |q - b p| - 1/2 sum (1-b) p,\n"
    "  tv          = TV(p,q) = reject_prob + loss_tv (Theorem 5),\n"
    "and the optimal residual P* = [A]+ normalised, A ∝ q - b p (Theorem 4),\n"
    "which for this b is the SD residual [q-p]+.\n"
    "\n"
    "  --eps E         over-acceptance E >= 0 (required)\n"
    "  --step t        with a model: the position (1-based, default 1)\n"
    "  --state a       with a model: the previous token x_{t-1} (default 0)\n"
    "  --json          {\"reject_prob\", \"loss_tv\", \"tv\", \"residual\": [P*], ...}\n";

static int S_pareto(const S_sub *sub, S_args *a)
{
    (void)sub;
    sd_error err;
    if (!a->eps_given)
        return S_finish(a, NULL, NULL, cli_usage_error("eval pareto", "--eps is required"));
    const double *p, *q;
    size_t V;
    sd_chain *c;
    if (S_rows(a, &p, &q, &V, &c, &err))
        return S_finish(a, NULL, NULL, cli_fail(&err));
    double *pstar = malloc(V * sizeof *pstar);
    sd_pareto pr;
    int st = pstar ? sd_exact_pareto(p, q, V, a->eps, &pr, pstar, &err)
                   : sd_error_set(&err, SD_ENOMEM, "out of memory (Pareto, vocab %zu)", V);
    if (st) {
        free(pstar);
        return S_finish(a, c, NULL, cli_fail(&err));
    }
    if (a->json) {
        json_t *o = json_object();
        json_object_set_new(o, "reject_prob", json_real(pr.reject_prob));
        json_object_set_new(o, "loss_tv", json_real(pr.loss_tv));
        json_object_set_new(o, "tv", json_real(pr.tv));
        json_object_set_new(o, "eps", json_real(a->eps));
        json_t *res = json_array();
        for (size_t x = 0; x < V && pr.reject_prob > 0.0; x++)
            json_array_append_new(res, json_real(pstar[x]));
        json_object_set_new(o, "residual", pr.reject_prob > 0.0 ? res : (json_decref(res), json_null()));
        if (c && !a->mo.p) {
            json_object_set_new(o, "step", json_integer((json_int_t)a->step));
            json_object_set_new(o, "state", json_integer((json_int_t)a->state));
        }
        S_describe(a, c, V, o);
        free(pstar);
        return S_finish(a, c, o, 0);
    }
    S_describe_table(a, c, V, 1);
    printf("eps          %g\n", a->eps);
    printf("P(reject)    %.12f\n", pr.reject_prob);
    printf("Loss*_TV     %.12f   (Theorem 4)\n", pr.loss_tv);
    printf("TV(p,q)      %.12f   (Theorem 5: P(reject) + Loss*_TV = %.12f)\n", pr.tv,
           pr.reject_prob + pr.loss_tv);
    if (pr.reject_prob > 0.0) {
        printf("P*          ");
        for (size_t x = 0; x < V && x < 20; x++)
            printf(" %.6f", pstar[x]);
        printf(V > 20 ? " ... (--json for all)\n" : "\n");
    } else {
        printf("P*           none (b = 1: never rejects)\n");
    }
    free(pstar);
    return S_finish(a, c, NULL, 0);
}

/* --- eval accept-length --------------------------------------------------- */

static const char S_al_help[] =
    "Usage: simdec eval accept-length --gamma G [--algo token|block|full]\n"
    "                                 [--p LIST --q LIST | model --step t --state a] [--json]\n"
    "\n"
    "Expected number of draft tokens accepted in one iteration of G draft tokens\n"
    "from a context, exactly:\n"
    "  token  token-level verification:  sum_l sum_{x^l} p(x^l) prod_{i<=l} min(1, q/p)\n"
    "  block  block verification (Sun et al. 2025, Alg. 2), following the recursion of Sun et al. 2025, eq. 9,\n"
    "         p_i = min(1, p_{i-1} q(x_i)/p(x_i)):  sum_l sum_{x^l} p(x^l) p_l(x^l)\n"
    "  full   the full-information optimum (Sun et al. 2024, Theorem 1; greedy-block):\n"
    "         sum_l sum_{x^l} min(p(x^l), q(x^l))\n"
    "All three are computed; --algo (default block) picks the one reported as\n"
    "\"expected_accepted\".  The draft blocks are enumerated where V^G <= 10^7.\n"
    "With --p/--q beyond that (or when V x V rows exceed the memory budget) the\n"
    "rows are i.i.d. and O(V) memory suffices: token is alpha + ... + alpha^G,\n"
    "block and full are exact for G <= 2 by sorting the ratios q/p (prefix sums),\n"
    "and for G >= 3 their terms P(tau >= l), l >= 3, are a Monte-Carlo estimate\n"
    "(labelled MONTE-CARLO, \"method\": \"monte-carlo\", with its standard error).\n"
    "\n"
    "  --gamma G       draft tokens per iteration (required)\n"
    "  --algo A        token, block or full (default block)\n"
    "  --step t        with a model: the first drafted position (1-based, default 1);\n"
    "                  t+G-1 may not exceed the horizon\n"
    "  --state a       with a model: x_{t-1} (default 0)\n"
    "  --p/--q         a single-token problem (tokens i.i.d.)\n"
    "  --trials N      --p/--q, G >= 3: Monte-Carlo trials of the terms l >= 3 (default 100000)\n"
    "  --seed S        trial i uses stream (S, i) (default 1)\n"
    "  --json          {\"expected_accepted\": x, \"all\": {...}, \"ccdf\": [P(tau>=l)], ...}\n"
    "\n"
    "Token trees: --algo tree-rrs|tree-rrs-wor|tree-topk|traversal (or a broken-tree-*\n"
    "control) --tree b1,...,bd [--draw iid|wor|topk] (no --gamma): the expected\n"
    "accepted path length from the context (t+d-1 may not exceed the horizon), by\n"
    "enumerating every drafted tree (at most 4e6 trees: V^nodes, 1 with topk;\n"
    "refused beyond), and its law P(l).\n"
    "\n"
    "Any other verifier (--algo NAME with its parameters, a plugin's with\n"
    "--plugin FILE.so, a Python one): exact from its iteration law where it has\n"
    "one, and a Monte-Carlo estimate with its standard error (--trials N, --seed\n"
    "S); 'simdec eval accept-length --algo NAME --help' shows its options.\n";

static int S_algo_index(const char *name, const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        if (strcmp(name, names[i]) == 0)
            return i;
    return -1;
}

/* accept-length of a tree verifier (sims/exact/sd_exact_tree.h). */
static int S_accept_length_tree(S_args *a, const sd_tree_kind *k)
{
    sd_error err;
    const sd_verifier_type *vt = sd_verifier_find(k->name);
    sd_params par;
    sd_params_defaults(&par, vt);
    if (a->gamma_given)
        return S_finish(a, NULL, NULL, cli_usage_error("eval accept-length", "--gamma does not apply to --algo %s: "
                                                       "the tree's depth is its draft length", k->name));
    if ((a->tree && sd_params_parse(&par, vt, "tree", a->tree, &err)) ||
        (a->draw && sd_params_parse(&par, vt, "draw", a->draw, &err)) ||
        sd_tree_check_draw(k, sd_tree_draw_of(&par), k->name, &err))
        return S_finish(a, NULL, NULL, cli_fail(&err));
    size_t V = a->mo.p ? a->mo.pV : a->mo.gen.V, d = par.tree_depth;
    double trees = sd_exact_tree_count(V, &par, sd_tree_draw_of(&par));
    if (!a->mo.file && trees > SD_EXACT_TREE_MAX_TREES) { /* refuse before building the chain */
        sd_error_set(&err, SD_ETOOBIG, "accept-length of %s would enumerate %.3g drafted trees (%zu nodes at V = %zu), "
                     "beyond the limit %.0f", k->name, trees, sd_params_tree_nodes(&par), V, SD_EXACT_TREE_MAX_TREES);
        return S_finish(a, NULL, NULL, cli_fail(&err));
    }
    sd_chain *c = NULL;
    size_t t = a->step, st8 = a->state;
    if (a->mo.p || a->mo.q) {
        if (a->ctx_given || a->mo.T_given) {
            sd_error_set(&err, SD_EUSAGE, "--step/--state/--T select a context of a model, not of --p/--q");
            return S_finish(a, NULL, NULL, cli_fail(&err));
        }
        if (S_pq(a, &err) || !(c = cli_model_pq_chain(&a->mo, d, &err)))
            return S_finish(a, NULL, NULL, cli_fail(&err));
        t = 1;
        st8 = 0;
    } else if (!(c = cli_model_build(&a->mo, &err)) || cli_context_check(c, t, st8, &err)) {
        return S_finish(a, c, NULL, cli_fail(&err));
    } else if (d > c->T - t + 1) { /* as --gamma is: the tree's levels are its draft length */
        sd_error_set(&err, SD_EUSAGE, "a tree of depth %zu at --step %zu runs past the horizon T = %zu "
                     "(at most %zu levels fit)", d, t, c->T, c->T - t + 1);
        return S_finish(a, c, NULL, cli_fail(&err));
    }
    double ex, *joint = malloc((d + 1) * c->V * sizeof *joint), law[SD_TREE_MAX_DEPTH + 1] = {0};
    if (!joint) {
        sd_error_set(&err, SD_ENOMEM, "out of memory");
        return S_finish(a, c, NULL, cli_fail(&err));
    }
    if (sd_exact_tree_accept(c, t, st8, &par, k, &ex, joint, &err)) {
        free(joint);
        return S_finish(a, c, NULL, cli_fail(&err));
    }
    for (size_t l = 0; l <= d; l++)
        for (size_t y = 0; y < c->V; y++)
            law[l] += joint[l * c->V + y];
    free(joint);
    if (a->json) {
        json_t *o = json_object(), *lj = json_array();
        json_object_set_new(o, "expected_accepted", json_real(ex));
        json_object_set_new(o, "algo", json_string(k->name));
        json_object_set_new(o, "params", sd_params_json(&par, vt));
        json_object_set_new(o, "nodes", json_integer((json_int_t)sd_params_tree_nodes(&par)));
        for (size_t l = 0; l <= d; l++)
            json_array_append_new(lj, json_real(law[l]));
        json_object_set_new(o, "accept_law", lj);
        if (!a->mo.p) {
            json_object_set_new(o, "step", json_integer((json_int_t)t));
            json_object_set_new(o, "state", json_integer((json_int_t)st8));
        }
        S_describe(a, c, c->V, o);
        return S_finish(a, c, o, 0);
    }
    char pars[256];
    sd_params_format(&par, vt, pars, sizeof pars);
    S_describe_table(a, c, c->V, 1);
    printf("verifier     %s%s (%zu nodes)\n", k->name, pars, sd_params_tree_nodes(&par));
    printf("E[accepted]  %.12f   (enumeration of every drafted tree)\n", ex);
    printf("P(l)        ");
    for (size_t l = 0; l <= d; l++)
        printf(" P(%zu)=%.6f", l, law[l]);
    printf("\n");
    return S_finish(a, c, NULL, 0);
}

/* 1 for a token-tree verifier (the `tree` slot). */
static int S_is_tree(const sd_verifier_type *vt)
{
    return vt->tree != NULL;
}

/* The tree verifiers (controls aside), ", "-separated, into buf. */
static const char *S_tree_verifiers(char *buf, size_t len)
{
    return cli_verifier_names(buf, len, ", ", S_is_tree);
}

/* accept-length on i.i.d. rows (--p/--q) without enumerating blocks
 * (src/sd_accept_iid.h): token exact at every gamma, block and full exact
 * for gamma <= 2 and with Monte-Carlo terms (labelled, --trials, --seed)
 * beyond.  O(V) memory. */
static int S_accept_length_iid(S_args *a, int alg)
{
    sd_error err;
    sd_accept_iid r;
    double *cc = malloc(SD_ACCEPT_NALGO * a->gamma * sizeof *cc);
    if (!cc) {
        sd_error_set(&err, SD_ENOMEM, "out of memory (gamma %zu)", a->gamma);
        return S_finish(a, NULL, NULL, cli_fail(&err));
    }
    if (sd_accept_iid_eval(a->mo.p, a->mo.q, a->mo.pV, a->gamma, a->trials, a->seed,
                           sd_mem_budget(a->mo.max_memory), &r, cc, &err)) {
        free(cc);
        return S_finish(a, NULL, NULL, cli_fail(&err));
    }
    const char *how[SD_ACCEPT_NALGO];
    for (int i = 0; i < SD_ACCEPT_NALGO; i++)
        how[i] = r.exact[i] ? "exact" : "monte-carlo";
    if (a->json) {
        json_t *o = json_object(), *all = json_object(), *se = json_object(), *meth = json_object();
        json_t *ccj = json_array();
        json_object_set_new(o, "expected_accepted", json_real(r.expected[alg]));
        json_object_set_new(o, "stderr", json_real(r.stderr_[alg]));
        json_object_set_new(o, "method", json_string(how[alg]));
        json_object_set_new(o, "algo", json_string(sd_accept_algo_name(alg)));
        json_object_set_new(o, "gamma", json_integer((json_int_t)a->gamma));
        for (int i = 0; i < SD_ACCEPT_NALGO; i++) {
            json_object_set_new(all, sd_accept_algo_name(i), json_real(r.expected[i]));
            json_object_set_new(se, sd_accept_algo_name(i), json_real(r.stderr_[i]));
            json_object_set_new(meth, sd_accept_algo_name(i), json_string(how[i]));
        }
        for (size_t l = 0; l < a->gamma; l++)
            json_array_append_new(ccj, json_real(cc[(size_t)alg * a->gamma + l]));
        json_object_set_new(o, "all", all);
        json_object_set_new(o, "all_stderr", se);
        json_object_set_new(o, "all_method", meth);
        json_object_set_new(o, "ccdf", ccj);
        json_object_set_new(o, "exact_terms", json_integer(SD_ACCEPT_IID_EXACT_L));
        if (r.trials) {
            json_t *mc = json_object();
            json_object_set_new(mc, "trials", json_integer((json_int_t)r.trials));
            json_object_set_new(mc, "seed", json_integer((json_int_t)r.seed));
            json_object_set_new(o, "mc", mc);
        }
        S_describe(a, NULL, a->mo.pV, o);
        free(cc);
        return S_finish(a, NULL, o, 0);
    }
    S_describe_table(a, NULL, a->mo.pV, 1);
    printf("gamma        %zu\n", a->gamma);
    for (int i = 0; i < SD_ACCEPT_NALGO; i++) {
        if (r.exact[i])
            printf("E[tau] %-6s %.12f   exact (i.i.d. rows, O(V log V))%s\n", sd_accept_algo_name(i), r.expected[i],
                   i == alg ? "   <- --algo" : "");
        else
            printf("E[tau] %-6s %.6f +- %.2g   MONTE-CARLO for l >= %d (%llu trials, seed %llu; l <= %d "
                   "exact)%s\n", sd_accept_algo_name(i), r.expected[i], r.stderr_[i], SD_ACCEPT_IID_EXACT_L + 1,
                   (unsigned long long)r.trials, (unsigned long long)r.seed, SD_ACCEPT_IID_EXACT_L,
                   i == alg ? "   <- --algo" : "");
    }
    free(cc);
    return S_finish(a, NULL, NULL, 0);
}

/* "; did you mean 'X'?" over token, block, full and every verifier. */
static const char *S_algo_hint(const char *algo, char *buf, size_t len)
{
    cli_suggest sg;
    cli_suggest_init(&sg, algo);
    cli_suggest_add(&sg, "full");
    const sd_verifier_type *v;
    for (size_t i = 0; (v = sd_verifier_at(i)) != NULL; i++)
        cli_suggest_add(&sg, v->name);
    return cli_suggest_text(&sg, "", buf, len);
}

static int S_accept_length(const S_sub *sub, S_args *a)
{
    (void)sub;
    sd_error err;
    static const char *const names[] = {"token", "block", "full"};
    int alg = SD_ACCEPT_BLOCK;
    char trees[512], hint[160];
    const sd_tree_kind *k = a->algo ? sd_tree_kind_find(a->algo) : NULL;
    if (k)
        return S_accept_length_tree(a, k);
    if (a->tree || a->draw)
        return S_finish(a, NULL, NULL, cli_usage_error("eval accept-length", "--tree/--draw apply to the tree "
                                                       "verifiers (--algo %s)", S_tree_verifiers(trees, sizeof trees)));
    if (!a->gamma_given)
        return S_finish(a, NULL, NULL, cli_usage_error("eval accept-length", "--gamma is required"));
    if (a->algo && (alg = S_algo_index(a->algo, names, 3)) < 0)
        return S_finish(a, NULL, NULL,
                        cli_usage_error("eval accept-length",
                                        "--algo: expected token, block, full, a tree verifier (%s) or another "
                                        "verifier of 'simdec run --list', got '%s'%s",
                                        S_tree_verifiers(trees, sizeof trees), a->algo, S_algo_hint(a->algo, hint,
                                                                                                   sizeof hint)));
    sd_chain *c = NULL;
    size_t t = a->step, st8 = a->state;
    if (a->mo.p || a->mo.q) {
        if (a->ctx_given || a->mo.T_given) {
            sd_error_set(&err, SD_EUSAGE, "--step/--state/--T select a context of a model, not of --p/--q");
            return S_finish(a, NULL, NULL, cli_fail(&err));
        }
        if (S_pq(a, &err))
            return S_finish(a, NULL, NULL, cli_fail(&err));
        double blocks = pow((double)a->mo.pV, (double)a->gamma);
        /* the enumeration where it is small and its chain fits, else the
         * i.i.d. evaluator (exact for gamma <= 2, labelled Monte-Carlo terms beyond) */
        if (blocks > SD_EXACT_ACCEPT_MAX_BLOCKS || sd_gen_chain_bytes(a->mo.pV, 1) > sd_mem_budget(a->mo.max_memory) / 2)
            return S_accept_length_iid(a, alg);
        if (!(c = cli_model_pq_chain(&a->mo, a->gamma, &err)))
            return S_finish(a, NULL, NULL, cli_fail(&err));
        t = 1;
        st8 = 0;
    } else if (!(c = cli_model_build(&a->mo, &err))) {
        return S_finish(a, NULL, NULL, cli_fail(&err));
    }
    double ex[SD_ACCEPT_NALGO];
    double *ccdf = malloc(SD_ACCEPT_NALGO * a->gamma * sizeof *ccdf);
    if (!ccdf) {
        sd_error_set(&err, SD_ENOMEM, "out of memory (gamma %zu)", a->gamma);
        return S_finish(a, c, NULL, cli_fail(&err));
    }
    if (sd_exact_accept_length(c, t, st8, a->gamma, ex, ccdf, &err)) {
        free(ccdf);
        return S_finish(a, c, NULL, cli_fail(&err));
    }
    if (a->json) {
        json_t *o = json_object();
        json_object_set_new(o, "expected_accepted", json_real(ex[alg]));
        json_object_set_new(o, "algo", json_string(names[alg]));
        json_object_set_new(o, "gamma", json_integer((json_int_t)a->gamma));
        json_t *all = json_object(), *cc = json_array();
        for (int i = 0; i < SD_ACCEPT_NALGO; i++)
            json_object_set_new(all, names[i], json_real(ex[i]));
        for (size_t l = 0; l < a->gamma; l++)
            json_array_append_new(cc, json_real(ccdf[(size_t)alg * a->gamma + l]));
        json_object_set_new(o, "all", all);
        json_object_set_new(o, "ccdf", cc);
        if (!a->mo.p) {
            json_object_set_new(o, "step", json_integer((json_int_t)t));
            json_object_set_new(o, "state", json_integer((json_int_t)st8));
        }
        S_describe(a, c, c->V, o);
        free(ccdf);
        return S_finish(a, c, o, 0);
    }
    S_describe_table(a, c, c->V, 1);
    printf("gamma        %zu\n", a->gamma);
    for (int i = 0; i < SD_ACCEPT_NALGO; i++)
        printf("E[tau] %-6s %.12f%s\n", names[i], ex[i], i == alg ? "   <- --algo" : "");
    free(ccdf);
    return S_finish(a, c, NULL, 0);
}

/* --- eval acceptance ------------------------------------------------------ */

static const char S_acc_help[] =
    "Usage: simdec eval acceptance --k k [--algo otm|kseq|rrs] [--draw iid|wor]\n"
    "                              [--method prefix|brute|lp|convex]\n"
    "                              [--p LIST --q LIST | model --step t --state a] [--json]\n"
    "\n"
    "Probability that one of k drafts from p is accepted at one position:\n"
    "  otm   the optimum over all valid verifiers (Sun et al. 2023, section 5):\n"
    "        alpha_k = 1 - max_B [P(drafts in B) - q(B)], P(drafts in B) = p(B)^k for\n"
    "        i.i.d. drafts; B a prefix of the tokens sorted by q/p (proof:\n"
    "        docs/otm-prefix.md), O(V log V) for any k\n"
    "  kseq  SpecTr k-Seq (Sun et al. 2023, Alg. 2) at rho*: 1 - (1 - beta(rho*))^k\n"
    "  rrs   recursive rejection sampling (SpecInfer): 1 - prod_{m<=k} TV(q^m, p)\n"
    "\n"
    "  --k k           number of drafts (default 2)\n"
    "  --algo A        otm, kseq or rrs (default otm)\n"
    "  --draw D        otm: iid (default) or wor, the k drafts drawn without\n"
    "                  replacement (Hu et al. 2025): P(drafts in B) summed over the\n"
    "                  ordered distinct tuples in B, work V^(k+1) (limit 1e9)\n"
    "  --method M      otm, how the optimum is computed (the same number each way):\n"
    "                    prefix  the q/p-sorted prefixes (default)\n"
    "                    brute   all 2^V subsets B (V <= 24)\n"
    "                    lp      the transport LP by GLPK (lp/otm.c; small V, k)\n"
    "                    convex  iid only: the minimum-norm point of the base polytope\n"
    "                            of h(B) = q(B) - p(B)^k, a convex problem in V\n"
    "                            variables (Thomas & Pal 2025), O(V log V)\n"
    "  --step t, --state a   with a model: the row p_t(.|a), q_t(.|a) (defaults 1, 0)\n"
    "  --json          {\"acceptance\": x, \"draw\", \"method\", ...}\n";

static int S_acceptance(const S_sub *sub, S_args *a)
{
    (void)sub;
    sd_error err;
    static const char *const names[] = {"otm", "kseq", "rrs"};
    static const char *const draws[] = {"iid", "wor"};
    static const char *const methods[] = {"prefix", "brute", "lp", "convex"};
    int alg = 0, draw = 0, meth = 0;
    if (a->algo && (alg = S_algo_index(a->algo, names, 3)) < 0)
        return S_finish(a, NULL, NULL,
                        cli_usage_error("eval acceptance", "--algo: expected otm, kseq or rrs, got '%s'",
                                        a->algo));
    if (a->draw && (draw = S_algo_index(a->draw, draws, 2)) < 0)
        return S_finish(a, NULL, NULL,
                        cli_usage_error("eval acceptance", "--draw: expected iid or wor, got '%s'", a->draw));
    if (a->method && (meth = S_algo_index(a->method, methods, 4)) < 0)
        return S_finish(a, NULL, NULL,
                        cli_usage_error("eval acceptance",
                                        "--method: expected prefix, brute, lp or convex, got '%s'", a->method));
    if (alg != 0 && (a->draw || a->method))
        return S_finish(a, NULL, NULL,
                        cli_usage_error("eval acceptance", "--draw and --method apply to --algo otm only"));
    if (draw == 1 && meth == 3)
        return S_finish(a, NULL, NULL,
                        cli_usage_error("eval acceptance",
                                        "--method convex: the convex problem is for i.i.d. drafts; "
                                        "with --draw wor use prefix, brute or lp"));
    const double *p, *q;
    size_t V, prefix = 0;
    sd_chain *c;
    if (S_rows(a, &p, &q, &V, &c, &err))
        return S_finish(a, NULL, NULL, cli_fail(&err));
    double acc, rho = NAN, beta = NAN, secs = 0.0;
    int st = SD_OK;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (alg == 0 && meth == 2) {
        sd_lp_result res;
        st = draw ? sd_lp_otm_wor(p, q, V, a->k, NULL, &res, &err)
                  : sd_lp_otm(p, q, V, a->k, 0, NULL, &res, NULL, &err);
        if (!st && !res.optimal)
            st = sd_error_set(&err, SD_ESOLVER, "eval acceptance --method lp: GLPK status '%s'", res.status);
        acc = res.optimum;
    } else if (alg == 0 && draw == 1)
        st = sd_exact_otm_wor_acceptance(p, q, V, a->k, meth == 1, &acc, &prefix, &err);
    else if (alg == 0 && meth == 1)
        st = sd_exact_otm_acceptance_brute(p, q, V, a->k, &acc, &err);
    else if (alg == 0 && meth == 3)
        st = sd_exact_otm_convex(p, q, V, a->k, &acc, &prefix, &err);
    else if (alg == 0)
        st = sd_exact_otm_acceptance(p, q, V, a->k, &acc, &prefix, &err);
    else if (alg == 1) {
        st = sd_kseq_solve(p, q, V, a->k, &rho, &beta, &err);
        acc = st ? NAN : sd_kseq_pacc(beta, a->k);
    } else
        st = sd_exact_rrs_acceptance(p, q, V, a->k, &acc, &err);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    secs = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    if (st)
        return S_finish(a, c, NULL, cli_fail(&err));
    if (a->json) {
        json_t *o = json_object();
        json_object_set_new(o, "acceptance", json_real(acc));
        json_object_set_new(o, "algo", json_string(names[alg]));
        json_object_set_new(o, "k", json_integer((json_int_t)a->k));
        if (alg == 0) {
            json_object_set_new(o, "draw", json_string(draws[draw]));
            json_object_set_new(o, "method", json_string(methods[meth]));
            json_object_set_new(o, "seconds", json_real(secs));
        }
        if (alg == 0 && meth == 0)
            json_object_set_new(o, "prefix_length", json_integer((json_int_t)prefix));
        if (alg == 0 && meth == 3)
            json_object_set_new(o, "minimiser_size", json_integer((json_int_t)prefix));
        if (alg == 1) {
            json_object_set_new(o, "rho", json_real(rho));
            json_object_set_new(o, "beta", json_real(beta));
        }
        S_describe(a, c, V, o);
        return S_finish(a, c, o, 0);
    }
    S_describe_table(a, c, V, 1);
    printf("k            %zu\n", a->k);
    if (alg == 0)
        printf("acceptance   %.12f   (otm, %s drafts, method %s, %.3g s)\n", acc, draws[draw], methods[meth],
               secs);
    else
        printf("acceptance   %.12f   (%s)\n", acc, names[alg]);
    if (alg == 0 && meth == 0)
        printf("  maximising set: the first %zu tokens in q/p order\n", prefix);
    if (alg == 0 && meth == 3)
        printf("  minimiser of h: %zu tokens (x* < 0)\n", prefix);
    if (alg == 1)
        printf("  rho* %.12f, beta(rho*) %.12f\n", rho, beta);
    return S_finish(a, c, NULL, 0);
}

/* --- eval sprinter -------------------------------------------------------- */

static const char S_spr_help[] =
    "Usage: simdec eval sprinter --tp E --fp E --r R [--td T] [--p LIST --q LIST] [--json]\n"
    "\n"
    "SPRINTER's cheap verifier (Zhong et al. 2025, letters reversed there; here p is the draft):\n"
    "with R acceptable draft tokens in a row and i.i.d. verifier decisions (yes with\n"
    "probability tp on acceptable tokens, fp on the others),\n"
    "  expected_tokens    E[N] = (tp - tp^R)/(1-tp) + tp^R/(1-fp)       (Theorem 3.3)\n"
    "  expected_stop_time E[T_stop] = (1-tp^R) T/(1-tp) + tp^R T/(1-fp)  (Theorem 3.4)\n"
    "and, with --p/--q, the output bias TV = fp TV(p,q)                  (Theorem 3.1).\n"
    "fp = 1 gives infinity (null in JSON) when tp^R > 0; with tp = 0 and R >= 1 the\n"
    "expectation is finite (E[N] = 0, E[T_stop] = T: the first token is refused).\n"
    "\n"
    "  --tp E, --fp E  true- and false-positive rates in [0,1] (required)\n"
    "  --r R           acceptable tokens in a row, R >= 0 (required)\n"
    "  --td T          draft time per token (default 1)\n"
    "  --json          {\"expected_tokens\", \"expected_stop_time\", ...}\n";

static int S_sprinter(const S_sub *sub, S_args *a)
{
    (void)sub;
    sd_error err;
    if ((a->sprinter_given & 7) != 7)
        return S_finish(a, NULL, NULL,
                        cli_usage_error("eval sprinter", "--tp, --fp and --r are required"));
    double en, et, bias = NAN;
    if (sd_exact_sprinter(a->tp, a->fp, a->r, a->td, &en, &et, &err))
        return S_finish(a, NULL, NULL, cli_fail(&err));
    if (a->mo.p || a->mo.q) {
        if (S_pq(a, &err))
            return S_finish(a, NULL, NULL, cli_fail(&err));
        bias = sd_exact_sprinter_bias(a->mo.p, a->mo.q, a->mo.pV, a->fp);
    }
    if (a->json) {
        json_t *o = json_object();
        json_object_set_new(o, "expected_tokens", cli_json_real(en));
        json_object_set_new(o, "expected_stop_time", cli_json_real(et));
        json_object_set_new(o, "tp", json_real(a->tp));
        json_object_set_new(o, "fp", json_real(a->fp));
        json_object_set_new(o, "r", json_integer((json_int_t)a->r));
        json_object_set_new(o, "td", json_real(a->td));
        if (isfinite(bias))
            json_object_set_new(o, "bias_tv", json_real(bias));
        return S_finish(a, NULL, o, 0);
    }
    printf("tp %g, fp %g, r %zu, td %g\n", a->tp, a->fp, a->r, a->td);
    printf("E[N]         %.12g   (Theorem 3.3)\n", en);
    printf("E[T_stop]    %.12g   (Theorem 3.4)\n", et);
    if (isfinite(bias))
        printf("output TV    %.12g   (Theorem 3.1: fp TV(p,q))\n", bias);
    return S_finish(a, NULL, NULL, 0);
}

/* --- dispatch ------------------------------------------------------------- */

static const S_sub S_subs[] = {
    {"rejections", S_rejections, "expected rejections: Theorem 1 (M=1), Theorem 3 (batch), M=inf",
     A_MODEL | A_PQ | A_M, S_rej_help},
    {"batch-improvement", S_batch_improvement, "batch improvement of M drafts over one (Yin et al. 2024, 3.2)",
     A_MODEL | A_PQ | A_M, S_bi_help},
    {"pareto", S_pareto, "rejection vs bias of b = min(1,(q+eps)/p): Theorems 4, 5 of Yin et al. 2024",
     A_MODEL | A_PQ | A_EPS | A_CTX, S_pareto_help},
    {"accept-length", S_accept_length, "expected accepted tokens per iteration: token, block, full",
     A_MODEL | A_PQ | A_GAMMA | A_ALGO | A_CTX | A_TREE | A_MC, S_al_help},
    {"acceptance", S_acceptance, "k-draft acceptance: optimal (OTM), k-Seq, RRS",
     A_MODEL | A_PQ | A_K | A_ALGO | A_CTX | A_DRAW | A_METHOD, S_acc_help},
    {"sprinter", S_sprinter, "SPRINTER's expected tokens and stopping time (Zhong et al. 2025, Thm 3.3, 3.4)",
     A_PQ | A_SPRINTER, S_spr_help},
    {NULL, NULL, NULL, 0, NULL},
};

/* The evaluators with a command of their own: name, summary, command. */
static const struct {
    const char *name, *summary;
    int (*cmd)(int, char **);
    int (*fields)(const cli_field *, size_t); /* the same from named fields */
} S_cmds[] = {
    {"generation", "whole-generation rejections and target calls, any verifier", cmd_eval_generation,
     eval_generation_fields},
    {"speedup", "wall-clock speed-up at draft cost ratio c (Leviathan et al. 2023)", cmd_eval_speedup,
     eval_speedup_fields},
    {NULL, NULL, NULL, NULL},
};

static void S_help(FILE *f)
{
    fputs("Usage: simdec eval WHAT [OPTIONS]\n\nExact evaluators:\n", f);
    for (const S_sub *s = S_subs; s->name; s++)
        fprintf(f, "  %-20s %s\n", s->name, s->summary);
    for (size_t i = 0; S_cmds[i].name; i++)
        fprintf(f, "  %-20s %s\n", S_cmds[i].name, S_cmds[i].summary);
    fputs("\n  simdec eval WHAT --help   options of one evaluator\n", f);
}

/* cmd_eval_fields: a field of sub, read as S_parse reads the option. */
typedef struct {
    const S_sub *sub;
    S_args *a;
    char cmd[64];
} S_fields;

static int S_field(void *ctx, int c, const char *arg)
{
    S_fields *f = ctx;
    sd_error err;
    if (c == 'h') {
        S_sub_help(f->sub);
        return 0;
    }
    unsigned need = S_needs(c);
    if (need && !(need & f->sub->accepts))
        return cli_usage_error(f->cmd, "option '--%s' does not apply to eval %s", S_optname(c), f->sub->name);
    return S_option(f->a, c, arg, &err) != SD_OK ? cli_fail(&err) : -1;
}

/* "unknown evaluator 'x'; did you mean ...". */
static int S_unknown(const char *what)
{
    char hint[160];
    cli_suggest sg;
    cli_suggest_init(&sg, what);
    for (const S_sub *s = S_subs; s->name; s++)
        cli_suggest_add(&sg, s->name);
    for (size_t i = 0; S_cmds[i].name; i++)
        cli_suggest_add(&sg, S_cmds[i].name);
    return cli_usage_error("eval", "unknown evaluator '%s'%s", what, cli_suggest_text(&sg, "", hint, sizeof hint));
}

int cmd_eval_fields(const char *what, const cli_field *fields, size_t n)
{
    static const int refuse[] = {0};
    for (size_t i = 0; S_cmds[i].name; i++)
        if (strcmp(what, S_cmds[i].name) == 0)
            return S_cmds[i].fields(fields, n);
    int st;
    if (strcmp(what, "accept-length") == 0 && (st = eval_accept_fields(fields, n)) >= 0)
        return st;
    for (const S_sub *s = S_subs; s->name; s++)
        if (strcmp(s->name, what) == 0) {
            S_args a;
            S_fields f = {s, &a, ""};
            snprintf(f.cmd, sizeof f.cmd, "eval %s", s->name);
            S_args_init(&a);
            st = cli_fields_apply(S_opts, fields, n, refuse, S_field, &f);
            if (st == CLI_NOT_A_FIELD)
                st = cli_fields_refused(f.cmd, NULL);
            a.json = 1;
            if (st >= 0) {
                cli_model_release(&a.mo);
                return st;
            }
            return s->fn(s, &a);
        }
    return S_unknown(what);
}

int cmd_eval(int argc, char **argv)
{
    if (argc < 2) {
        fputs("simdec: eval needs an evaluator\n", stderr);
        S_help(stderr);
        return EX_USAGE_;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        S_help(stdout);
        return 0;
    }
    for (size_t i = 0; S_cmds[i].name; i++)
        if (strcmp(argv[1], S_cmds[i].name) == 0)
            return S_cmds[i].cmd(argc - 1, argv + 1);
    /* accept-length of a verifier without an enumerator here (a plugin's,
     * a Python one, a multi-draft one): eval_accept.c */
    if (strcmp(argv[1], "accept-length") == 0 && eval_accept_takes(argc - 1, argv + 1))
        return cmd_eval_accept_verifier(argc - 1, argv + 1);
    for (const S_sub *s = S_subs; s->name; s++)
        if (strcmp(s->name, argv[1]) == 0) {
            S_args a;
            int st = S_parse(s, argc - 1, argv + 1, &a);
            if (st >= 0) {
                cli_model_release(&a.mo);
                return st;
            }
            return s->fn(s, &a);
        }
    return S_unknown(argv[1]);
}
