/* cmd_lp.c — `simdec lp PROBLEM`: exact optima with GLPK (lp/sd_lp.h,
 * docs/lp.md), beside the independent closed form of each, and optionally a
 * Monte-Carlo measurement of a verifier (--compare NAME). */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../lp/sd_lp.h"
#include "../treelp/sd_treelp.h"
#include "../sims/engine/sd_params.h"
#include "../sims/engine/sd_sim.h"
#include "../src/sd_dist.h"
#include "../src/sd_exact_accept.h"
#include "../src/sd_exact_otm.h"
#include "../sims/verifiers/sd_tree.h"
#include "cli.h"
#include "suggest.h"
#include "../src/sd_version.h"
#include "commands.h"

#define S_DEFAULT_TRIALS 100000u
#define S_DEFAULT_SEED 1u

static const char S_help_head[] =
    "Usage: simdec lp PROBLEM [problem options] [--p LIST --q LIST | model --step t --state a]\n"
    "                 [--json] [--plan FILE] [--max-vars N] [--method M] [--exact] [--time-limit S]\n"
    "                 [--compare NAME [--trials N] [--seed S]]\n"
    "\n"
    "Solves one linear program exactly with GLPK and prints its optimum beside the\n"
    "independent closed form (the 'reference').\n"
    "\n"
    "  otm --k K                OTM-k (SpecTr, Sun et al. 2023, eq. 4): couplings of p^{(x)k} and q\n"
    "                           with membership cost; optimum = acceptance probability.\n"
    "                           Solved on multisets of drafts (C(V+k-1,k) rows);\n"
    "                           --ordered uses ordered k-tuples (V^k rows) instead.\n"
    "  block-ot --gamma G       block-level optimal transport (Sun et al. 2024, Def. 1): couplings\n"
    "                           of the draft and target G-blocks maximising the expected\n"
    "                           common-prefix length; optimum = expected accepted length.\n"
    "  valid-verify --gamma G   the best verifier among all valid ones (Sun et al. 2025, Def. 1,\n"
    "                           Lemma 2); optimum = expected accepted length E[tau].\n"
    "  pareto --reject RHO      least TV bias of a single-token verifier whose rejection\n"
    "                           probability is RHO (Yin et al. 2024, Thm 4-5); optimum = TV.\n"
    "  tree-valid --tree b1,..,bd [--draw iid|wor|topk]\n"
    "                           the best valid verifier for a draft token tree drafted\n"
    "                           by the rule (default iid, or the --compare verifier's);\n"
    "                           optimum = expected accepted path length.  Drafted trees\n"
    "                           with the same root paths share one block of variables.\n"
    "  tree-ot --tree b1,..,bd [--draw iid|wor|topk]\n"
    "                           the full-information bound: couplings of the drafted\n"
    "                           tree with the target sequence, maximising the depth to\n"
    "                           which the target path stays inside the tree.\n"
    "\n";

/* The rest of the help (one string would pass C's 4095-character limit). */
static const char S_help_options[] =
    "  --step t, --state a      the context: position t (default 1) after x_{t-1} = a\n"
    "                           (default 0); p, q are the rows p_t(.|a), q_t(.|a), and\n"
    "                           blocks follow the chain from there.  With --p/--q the\n"
    "                           tokens are i.i.d.\n"
    "  --json                   one JSON object: optimum, status, variables,\n"
    "                           constraints, seconds, reference, ...\n"
    "  --plan FILE              write the optimal coupling or verifier as CSV (see\n"
    "                           docs/lp.md)\n"
    "  --max-vars N             refuse an LP with more than N variables, or a flow\n"
    "                           network with more than N arcs (default 200000\n"
    "                           variables, 5000000 arcs)\n"
    "  --method M               flow (default for otm, block-ot, tree-ot): the problem\n"
    "                           as a network flow on GLPK's graph API (otm: a maximum\n"
    "                           flow; block-ot, tree-ot: a minimum-cost flow by maximum\n"
    "                           flows; glp_maxflow_ffalg, certified by duality);\n"
    "                           simplex: the LP on GLPK's primal simplex; dual: on its\n"
    "                           dual simplex (valid-verify, tree-valid, pareto: each\n"
    "                           problem's fastest by default, see docs/lp.md); clp: the\n"
    "                           LP on COIN-OR CLP's dual simplex, optimal when its dual\n"
    "                           bound meets the primal value within 1e-9 (JSON\n"
    "                           dual_bound, primal_residual)\n"
    "  --exact                  certify the simplex optimum with GLPK's exact simplex\n"
    "  --time-limit S           stop the solver after S seconds (status says so)\n"
    "  --compare NAME           (block-ot, valid-verify, tree-valid, tree-ot) also\n"
    "                           measure verifier NAME's expected accepted tokens in\n"
    "                           one iteration of draft length G (a tree: its depth)\n"
    "                           from the same context (--trials, default\n"
    "                           100000; --seed, default 1) and print the gap; its\n"
    "                           parameters are options too (its gamma is G), and a\n"
    "                           verifier that is not lossless is refused: these LPs\n"
    "                           bound lossless verifiers (use 'lp pareto')\n"
    "  --plugin FILE            load verifiers from a plugin (include/simdec.h)\n"
    "\n";

typedef enum { S_OTM, S_BLOCK_OT, S_VALID, S_PARETO, S_TREE_VALID, S_TREE_OT, S_NPROBLEMS } S_problem;

static const char *const S_names[] = {"otm", "block-ot", "valid-verify", "pareto", "tree-valid", "tree-ot"};
static const char *const S_meaning[] = {"acceptance probability", "expected accepted length",
                                        "expected accepted length", "minimal TV",
                                        "expected accepted path length", "expected accepted path length"};

static int S_is_tree(S_problem pb)
{
    return pb == S_TREE_VALID || pb == S_TREE_OT;
}



/* The chain restricted to one iteration from the context: horizon h, steps
 * t..t+h-1 of c, x_0 = a with probability 1.  The first iteration of any
 * verifier on it (n = 1, prev = a) is the iteration from the context. */
static sd_chain *S_subchain(const sd_chain *c, size_t t, size_t a, size_t h, sd_error *err)
{
    size_t V = c->V;
    sd_chain *s = sd_chain_alloc(V, h, h, h, err);
    if (!s)
        return NULL;
    s->init[a] = 1.0;
    for (size_t i = 0; i < h; i++)
        for (size_t r = 0; r < V; r++) {
            memcpy(s->draft + (i * V + r) * V, sd_chain_p(c, t + i, r), V * sizeof(double));
            memcpy(s->target + (i * V + r) * V, sd_chain_q(c, t + i, r), V * sizeof(double));
        }
    return s;
}

/* Accepted draft tokens in the first iteration of verifier vt (parameters
 * par, draft length gamma) from the context, over `trials` trials with
 * streams (seed, i): the trial engine on the sub-chain that starts at the
 * context, stopped after its first iteration. */
static int S_measure(const sd_verifier_type *vt, const sd_params *par, const sd_chain *c, size_t t,
                     size_t a, size_t gamma, uint64_t trials, uint64_t seed, sd_welford *acc,
                     sd_error *err)
{
    size_t h = c->T - t + 1 < gamma + 1 ? c->T - t + 1 : gamma + 1;
    sd_chain *s = S_subchain(c, t, a, h, err);
    if (!s)
        return err ? (int)err->code : SD_ENOMEM;
    sd_params p = *par;
    p.gamma = gamma;
    sd_model m = sd_model_of_chain(s);
    sd_sim_job job = {vt, &m, &p};
    sd_sim_opts so = {.seed = seed, .trials = trials, .stop = {.first_iteration = 1}};
    sd_sim_result res;
    int rc = sd_sim_run_job(&job, &so, &res, err);
    if (!rc) {
        *acc = res.accepted;
        sd_sim_result_free(&res);
    }
    sd_chain_free(s);
    return rc;
}

typedef struct S_out {
    S_problem prob;
    size_t k, gamma, t, a;
    double rho, tv;
    int ordered;
    const cli_model_opts *mo;
    const sd_chain *c;
    sd_lp_result res;
    double ref;
    const char *ref_name;
    const char *plan_file;
    const sd_verifier_type *cmp;
    const sd_params *cmp_par;
    sd_welford acc;
    uint64_t trials, seed;
    sd_params tree;     /* tree-valid, tree-ot: the shape (tree, tree_depth) */
    int draw;           /* and the drafting rule (sd_tree_draw) */
    sd_lp_tree_bounds bounds; /* tree-valid beyond exact reach (has_bounds) */
    int has_bounds;
    char bounds_why[256]; /* why the exact route refused */
} S_out;

static int S_write_plan(FILE *f, void *ctx, sd_error *err)
{
    return sd_lp_plan_write(ctx, f, err);
}

/* The gap in standard errors (cli_gap_in_se: NaN, null in JSON and "n/a"
 * in the table, for a gap without a standard error). */
static double S_gap_se(const S_out *o)
{
    return cli_gap_in_se(o->res.optimum, o->acc.mean, sd_welford_stderr(&o->acc));
}

static int S_print_json(const S_out *o)
{
    json_t *j = json_object();
    json_object_set_new(j, "problem", json_string(S_names[o->prob]));
    if (o->prob == S_OTM) {
        json_object_set_new(j, "k", json_integer((json_int_t)o->k));
        json_object_set_new(j, "ordered", json_boolean(o->ordered));
    } else if (o->prob == S_PARETO) {
        json_object_set_new(j, "reject", json_real(o->rho));
        json_object_set_new(j, "tv", json_real(o->tv));
    } else if (S_is_tree(o->prob)) {
        json_t *tj = json_array();
        for (size_t l = 0; l < o->tree.tree_depth; l++)
            json_array_append_new(tj, json_integer((json_int_t)o->tree.tree[l]));
        json_object_set_new(j, "tree", tj);
        json_object_set_new(j, "draw", json_string(sd_tree_draw_name((sd_tree_draw)o->draw)));
    } else {
        json_object_set_new(j, "gamma", json_integer((json_int_t)o->gamma));
    }
    json_object_set_new(j, "step", json_integer((json_int_t)o->t));
    json_object_set_new(j, "state", json_integer((json_int_t)o->a));
    sd_model md = sd_model_of_chain(o->c);
    cli_model_describe(o->mo, &md, j);
    json_object_set_new(j, "version", json_string(SD_VERSION));
    json_object_set_new(j, "method", json_string(o->res.method[0] ? o->res.method : "simplex"));
    json_object_set_new(j, "optimum", cli_json_real(o->res.optimum));
    if (o->has_bounds) {
        json_object_set_new(j, "lower", cli_json_real(o->bounds.lower));
        json_object_set_new(j, "lower_by", json_string(o->bounds.lower_by));
        json_object_set_new(j, "upper", cli_json_real(o->bounds.upper));
        json_object_set_new(j, "upper_by", json_string(o->bounds.upper_by));
        json_object_set_new(j, "gap", cli_json_real(o->bounds.gap));
        json_object_set_new(j, "exact_refused", json_string(o->bounds_why));
    }
    if (!strcmp(o->res.method, "clp")) {
        json_object_set_new(j, "dual_bound", cli_json_real(o->res.dual_bound));
        json_object_set_new(j, "primal_residual", cli_json_real(o->res.primal_residual));
    }
    json_object_set_new(j, "meaning", json_string(S_meaning[o->prob]));
    json_object_set_new(j, "status", json_string(o->res.status));
    json_object_set_new(j, "variables", json_integer((json_int_t)o->res.variables));
    json_object_set_new(j, "constraints", json_integer((json_int_t)o->res.constraints));
    json_object_set_new(j, "nonzeros", json_integer((json_int_t)o->res.nonzeros));
    json_object_set_new(j, "seconds", json_real(o->res.seconds));
    if (o->ref_name) {
        json_t *r = json_object();
        json_object_set_new(r, "name", json_string(o->ref_name));
        json_object_set_new(r, "value", cli_json_real(o->ref));
        json_object_set_new(r, "difference", cli_json_real(o->res.optimum - o->ref));
        json_object_set_new(j, "reference", r);
    }
    if (o->plan_file)
        json_object_set_new(j, "plan", json_string(o->plan_file));
    if (o->cmp) {
        json_t *m = json_object();
        double se = sd_welford_stderr(&o->acc);
        json_object_set_new(m, "verifier", json_string(o->cmp->name));
        json_object_set_new(m, "params", sd_params_json(o->cmp_par, o->cmp));
        json_object_set_new(m, "reads_gamma", json_boolean(sd_params_decl(o->cmp, "gamma", NULL) != NULL));
        json_object_set_new(m, "trials", json_integer((json_int_t)o->trials));
        json_object_set_new(m, "seed", json_integer((json_int_t)o->seed));
        json_object_set_new(m, "mean", json_real(o->acc.mean));
        json_object_set_new(m, "stderr", json_real(se));
        json_object_set_new(m, "gap", cli_json_real(o->res.optimum - o->acc.mean));
        json_object_set_new(m, "gap_in_se", cli_json_real(S_gap_se(o)));
        json_object_set_new(j, "compare", m);
    }
    return cli_print_json(j);
}

static int S_print_table(const S_out *o)
{
    const sd_chain *c = o->c;
    printf("simdec lp %s", S_names[o->prob]);
    if (o->prob == S_OTM)
        printf(" --k %zu%s", o->k, o->ordered ? " --ordered" : "");
    else if (o->prob == S_PARETO)
        printf(" --reject %g", o->rho);
    else if (S_is_tree(o->prob)) {
        printf(" --tree ");
        for (size_t l = 0; l < o->tree.tree_depth; l++)
            printf("%s%zu", l ? "," : "", o->tree.tree[l]);
        printf(" --draw %s", sd_tree_draw_name((sd_tree_draw)o->draw));
    } else
        printf(" --gamma %zu", o->gamma);
    putchar('\n');
    if (o->mo->p)
        printf("  model        single-token problem (--p/--q), V=%zu, tokens i.i.d.\n", c->V);
    else if (o->mo->file)
        printf("  model        %s, V=%zu, T=%zu; context step %zu after state %zu\n", o->mo->file, c->V,
               c->T, o->t, o->a);
    else if (o->mo->gen.rng == SD_GEN_NUMPY_MT19937) /* the generator's options, as JSON has them */
        printf("  model        generated (model-seed %lu, rng numpy-mt19937), V=%zu, T=%zu; context step %zu after "
               "state %zu\n", o->mo->gen.seed, c->V, c->T, o->t, o->a);
    else
        printf("  model        generated (model-seed %lu, alpha %g, mix %g), V=%zu, T=%zu; context step %zu after "
               "state %zu\n", o->mo->gen.seed, o->mo->gen.alpha, o->mo->gen.mix, c->V, c->T, o->t, o->a);
    if (o->has_bounds)
        printf("  exact        out of reach: %s\n  lower        %.12f   %s (a valid verifier)\n"
               "  upper        %.12f   %s (a relaxation)\n  gap          %.12f\n",
               o->bounds_why, o->bounds.lower, o->bounds.lower_by, o->bounds.upper, o->bounds.upper_by, o->bounds.gap);
    else if (!strcmp(o->res.method, "otm-prefix"))
        printf("  closed form  OTM-k by the q/p-sorted prefix (depth 1, i.i.d. drafts; nothing enumerated)\n");
    else if (!strcmp(o->res.method, "flow"))
        printf("  flow         %zu arcs, %zu vertices (%s flow, glp_maxflow_ffalg)\n", o->res.variables,
               o->res.constraints, o->prob == S_OTM ? "maximum" : "minimum-cost");
    else
        printf("  LP           %zu variables, %zu constraints, %zu nonzeros%s\n", o->res.variables,
               o->res.constraints, o->res.nonzeros,
               !strcmp(o->res.method, "dual") ? " (dual simplex)" : !strcmp(o->res.method, "clp") ? " (COIN-OR CLP)" : "");
    if (!strcmp(o->res.method, "clp"))
        printf("  certificate  dual bound %.12f, primal residual %.1e\n", o->res.dual_bound, o->res.primal_residual);
    printf("  status       %s\n", o->res.status);
    printf("  optimum      %.12f   (%s)\n", o->res.optimum, S_meaning[o->prob]);
    if (o->ref_name)
        printf("  reference    %.12f   %s; difference %.2e\n", o->ref, o->ref_name, o->res.optimum - o->ref);
    if (o->prob == S_PARETO)
        printf("  TV(p,q)      %.12f\n", o->tv);
    printf("  seconds      %.4f\n", o->res.seconds);
    if (o->plan_file)
        printf("  plan         %s\n", o->plan_file);
    if (o->cmp) {
        double se = sd_welford_stderr(&o->acc), gap = o->res.optimum - o->acc.mean, z = S_gap_se(o);
        char pars[512];
        sd_params_format(o->cmp_par, o->cmp, pars, sizeof pars);
        printf("  compare      %s%s: %.6f +- %.6f (1 se), %llu trials, seed %llu\n", o->cmp->name, pars,
               o->acc.mean, se, (unsigned long long)o->trials, (unsigned long long)o->seed);
        if (!sd_params_decl(o->cmp, "gamma", NULL) && !(S_is_tree(o->prob) && sd_params_decl(o->cmp, "tree", NULL)))
            printf("  note         %s does not read gamma: it drafts up to the %zu positions of the\n"
                   "               sub-problem (gamma + 1), not gamma\n", o->cmp->name, o->gamma + 1);
        if (isfinite(z))
            printf("  gap          optimum - measured = %+.6f (%+.2f se)\n", gap, z);
        else
            printf("  gap          optimum - measured = %+.6f (n/a se: the standard error is 0)\n", gap);
    }
    return cli_stdout_status();
}

/* The reductions of the tree LPs to what simdec computes otherwise: a
 * chain (1,...,1) is a draft block (tree-valid: block verification, Sun et
 * al. 2024 Thm 2; tree-ot: the full-information optimum), and depth 1 with
 * i.i.d. drafts is OTM-k for both.  Other trees: no reference. */
static void S_tree_reference(S_out *o, const double *p, const double *q)
{
    const sd_params *tp = &o->tree;
    int chain = 1;
    for (size_t l = 0; l < tp->tree_depth; l++)
        chain &= tp->tree[l] == 1;
    double e[SD_ACCEPT_NALGO];
    if (chain && !sd_exact_accept_length(o->c, o->t, o->a, tp->tree_depth, e, NULL, NULL)) {
        o->ref = e[o->prob == S_TREE_VALID ? SD_ACCEPT_BLOCK : SD_ACCEPT_FULL];
        o->ref_name = o->prob == S_TREE_VALID ? "a chain: block verification (Sun et al. 2025, Thm 2)"
                                              : "a chain: full information sum_l sum_x min(p,q) (Sun et al. 2024, Thm 1)";
    } else if (tp->tree_depth == 1 && o->draw == SD_DRAW_IID &&
               !sd_exact_otm_acceptance(p, q, o->c->V, tp->tree[0], &o->ref, NULL, NULL)) {
        o->ref_name = "depth 1, iid: optimal k-draft acceptance (eval acceptance --algo otm)";
    }
}

/* The independent value each LP must reproduce (NAN/NULL when unavailable). */
static void S_reference(S_out *o, const double *p, const double *q)
{
    o->ref = NAN;
    o->ref_name = NULL;
    double e[SD_ACCEPT_NALGO];
    switch (o->prob) {
    case S_OTM:
        if (!sd_exact_otm_acceptance(p, q, o->c->V, o->k, &o->ref, NULL, NULL))
            o->ref_name = "1 - max_B [p(B)^k - q(B)] over q/p-sorted prefixes (docs/otm-prefix.md)";
        break;
    case S_BLOCK_OT:
        if (!sd_exact_accept_length(o->c, o->t, o->a, o->gamma, e, NULL, NULL)) {
            o->ref = e[SD_ACCEPT_FULL];
            o->ref_name = "full information sum_l sum_x min(p,q) (Sun et al. 2024, Thm 1)";
        }
        break;
    case S_VALID:
        if (!sd_exact_accept_length(o->c, o->t, o->a, o->gamma, e, NULL, NULL)) {
            o->ref = e[SD_ACCEPT_BLOCK];
            o->ref_name = "block verification (Sun et al. 2025, Thm 2)";
        }
        break;
    case S_PARETO:
        o->ref = fmax(0.0, o->tv - o->rho);
        o->ref_name = "Theorem 5 line max(0, TV - rho)";
        break;
    default:
        S_tree_reference(o, p, q);
        break;
    }
}

/* 1 if the LP of o at vocabulary V is within the limits, else 0 (err set). */
static int S_size_ok(const S_out *o, size_t V, const sd_lp_opts *lo, sd_error *err)
{
    sd_lp_size sz;
    switch (o->prob) {
    case S_OTM:
        sz = sd_lp_uses_flow(lo) ? sd_lp_otm_flow_size(V, o->k, o->ordered) : sd_lp_otm_size(V, o->k, o->ordered);
        break;
    case S_BLOCK_OT:
        sz = sd_lp_uses_flow(lo) ? sd_lp_block_ot_flow_size(V, o->gamma) : sd_lp_block_ot_size(V, o->gamma);
        break;
    case S_VALID: sz = sd_lp_valid_verify_form_size(V, o->gamma, lo); break;
    case S_TREE_VALID: /* routed by the library (treelp/tree_route.c), which refuses itself */
        return 1;
    case S_TREE_OT: /* the LP's size is known once the trees are enumerated */
        return sd_lp_tree_enum_check(S_names[o->prob], V, &o->tree, o->draw, err) == SD_OK;
    default: sz = sd_lp_pareto_size(V); break;
    }
    return sd_lp_check_size(&sz, lo->max_vars, err) == SD_OK;
}

/* --tree and --draw of tree-valid/tree-ot into o->tree and o->draw, and
 * into the compared verifier's parameters when it reads them.  The draw
 * defaults to the compared verifier's, else iid. */
static int S_tree_options(S_out *o, cli_verifier *cv, const char *tree_text, const char *draw_text,
                          sd_error *err)
{
    const sd_verifier_type *cmp = cv->vt;
    int reads_tree = cmp && sd_params_decl(cmp, "tree", NULL), reads_draw = cmp && sd_params_decl(cmp, "draw", NULL);
    sd_params_defaults(&o->tree, NULL);
    o->draw = reads_draw ? (int)sd_tree_draw_of(&cv->par) : SD_DRAW_IID;
    int rc = sd_params_parse_decl(&o->tree, &sd_tree_decls[SD_TREE_DECL_SHAPE], tree_text, err);
    if (!rc && draw_text && !(rc = sd_params_parse_decl(&o->tree, &sd_tree_decls[SD_TREE_DECL_DRAW], draw_text, err)))
        o->draw = (int)sd_tree_draw_of(&o->tree);
    if (!rc && reads_tree)
        rc = sd_params_parse(&cv->par, cmp, "tree", tree_text, err);
    if (!rc && reads_draw)
        rc = sd_params_parse(&cv->par, cmp, "draw", sd_tree_draw_name((sd_tree_draw)o->draw), err);
    const sd_tree_kind *k = cmp ? sd_tree_kind_find(cmp->name) : NULL;
    if (!rc && k)
        rc = sd_tree_check_draw(k, (sd_tree_draw)o->draw, cmp->name, err);
    return rc;
}

int cmd_lp(int argc, char **argv)
{
    enum {
        O_K = CLI_OPT_FIRST_FREE, O_GAMMA, O_REJECT, O_STEP, O_STATE, O_JSON, O_PLAN, O_MAXV,
        O_EXACT, O_TLIM, O_ORDERED, O_COMPARE, O_TRIALS, O_SEED, O_METHOD, O_TREE, O_DRAW
    };
    static const struct option base[] = {
        CLI_MODEL_LONGOPTS,
        CLI_PLUGIN_LONGOPT,
        {"k", required_argument, 0, O_K},
        {"gamma", required_argument, 0, O_GAMMA},
        {"reject", required_argument, 0, O_REJECT},
        {"step", required_argument, 0, O_STEP},
        {"state", required_argument, 0, O_STATE},
        {"json", no_argument, 0, O_JSON},
        {"plan", required_argument, 0, O_PLAN},
        {"max-vars", required_argument, 0, O_MAXV},
        {"exact", no_argument, 0, O_EXACT},
        {"time-limit", required_argument, 0, O_TLIM},
        {"ordered", no_argument, 0, O_ORDERED},
        {"method", required_argument, 0, O_METHOD},
        {"compare", required_argument, 0, O_COMPARE},
        {"trials", required_argument, 0, O_TRIALS},
        {"seed", required_argument, 0, O_SEED},
        {"tree", required_argument, 0, O_TREE},
        {"draw", required_argument, 0, O_DRAW},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    /* The compared verifier's parameters are options too, but for those lp
     * owns: gamma (the LP's draft length, which the verifier gets), k (otm's
     * drafts; passed to the verifier with the other problems) and plan (the
     * output file). */
    static const char *const owned[] = {"gamma", "k", "plan", "tree", "draw", NULL};
    cli_verifier cv;
    struct option *opts;
    int status = cli_verifier_prescan("lp", argc, argv, "compare", NULL, base, owned, &cv, &opts);
    if (status >= 0)
        return status;
    const char *k_text = NULL, *tree_text = NULL, *draw_text = NULL;
    cli_model_opts mo;
    cli_model_init(&mo);
    sd_lp_opts lo;
    sd_lp_opts_default(&lo);
    S_out o;
    memset(&o, 0, sizeof o);
    o.t = 1;
    o.trials = S_DEFAULT_TRIALS;
    o.seed = S_DEFAULT_SEED;
    int json = 0, have_k = 0, have_gamma = 0, have_rho = 0, have_ctx = 0, have_mc = 0;
    sd_error err;
    int c;
    optind = 0;
    opterr = 0;
    while (status < 0 && (c = cli_getopt(argc, argv, ":h", opts)) != -1) {
        int r = cli_model_option(&mo, c, optarg, &err);
        if (r == 0 && cv.vt)
            r = cli_param_option(&cv, c, optarg, &err);
        else if (r == 0 && c == CLI_OPT_PLUGIN)
            r = 1;
        if (r < 0) {
            status = cli_fail(&err);
            break;
        }
        if (r > 0)
            continue;
        r = SD_OK;
        switch (c) {
        case 'h':
            fputs(S_help_head, stdout);
            fputs(S_help_options, stdout);
            if (cv.vt) {
                cli_params_help(stdout, cv.vt);
                fputc('\n', stdout);
            }
            fputs(cli_model_help, stdout);
            status = 0;
            break;
        case O_K: k_text = optarg; have_k = 1; break;
        case O_GAMMA: r = cli_parse_size("--gamma", optarg, 1, 64, &o.gamma, &err); have_gamma = 1; break;
        case O_REJECT: r = cli_parse_double("--reject", optarg, 0.0, 1.0, &o.rho, &err); have_rho = 1; break;
        case O_STEP: r = cli_parse_size("--step", optarg, 1, SIZE_MAX, &o.t, &err); have_ctx = 1; break;
        case O_STATE: r = cli_parse_size("--state", optarg, 0, SIZE_MAX, &o.a, &err); have_ctx = 1; break;
        case O_JSON: json = 1; break;
        case O_PLAN: o.plan_file = optarg; r = cli_check_path("--plan", optarg, &err); break;
        case O_MAXV: r = cli_parse_size("--max-vars", optarg, 1, (size_t)1 << 40, &lo.max_vars, &err); break;
        case O_EXACT: lo.exact = 1; break;
        case O_TLIM: r = cli_parse_double("--time-limit", optarg, 0.0, 1e7, &lo.time_limit, &err); break;
        case O_ORDERED: o.ordered = 1; break;
        case O_METHOD:
            if (!strcmp(optarg, "flow"))
                lo.method = SD_LP_METHOD_FLOW;
            else if (!strcmp(optarg, "simplex"))
                lo.method = SD_LP_METHOD_SIMPLEX;
            else if (!strcmp(optarg, "dual"))
                lo.method = SD_LP_METHOD_DUAL;
            else if (!strcmp(optarg, "clp"))
                lo.method = SD_LP_METHOD_CLP;
            else
                status = cli_usage_error("lp", "--method '%s': expected flow, simplex or dual, or clp (COIN-OR CLP)",
                                         optarg);
            break;
        case O_COMPARE: break; /* found by cli_verifier_prescan */
        case O_TRIALS:
            r = cli_parse_trials(optarg, &o.trials, &err);
            have_mc = 1;
            break;
        case O_SEED: r = cli_parse_seed(optarg, &o.seed, &err); have_mc = 1; break;
        case O_TREE: tree_text = optarg; break;
        case O_DRAW: draw_text = optarg; break;
        default: status = cli_unknown_option("lp", c, argv, cv.vt); break;
        }
        if (r && status < 0)
            status = cli_fail(&err);
    }
    free(opts);
    /* the problem name */
    if (status < 0 && optind >= argc)
        status = cli_usage_error("lp", "which problem? expected otm, block-ot, valid-verify, pareto, tree-valid "
                                 "or tree-ot");
    if (status < 0) {
        size_t i = 0;
        while (i < S_NPROBLEMS && strcmp(argv[optind], S_names[i]) != 0)
            i++;
        if (i == S_NPROBLEMS) {
            char hint[160];
            cli_suggest sg;
            cli_suggest_init(&sg, argv[optind]);
            for (size_t j = 0; j < S_NPROBLEMS; j++)
                cli_suggest_add(&sg, S_names[j]);
            status = cli_usage_error("lp", "unknown problem '%s'%s; expected otm, block-ot, valid-verify, pareto, "
                                     "tree-valid or tree-ot", argv[optind], cli_suggest_text(&sg, "", hint, sizeof hint));
        }
        else if (optind + 1 < argc)
            status = cli_usage_error("lp", "unexpected argument '%s'", argv[optind + 1]);
        o.prob = (S_problem)i;
    }
    /* which options go with which problem */
    if (status < 0) {
        S_problem pb = o.prob;
        const sd_verifier_type *cmp = cv.vt;
        if (pb == S_OTM && have_k && cli_parse_size("--k", k_text, 1, 64, &o.k, &err))
            status = cli_fail(&err);
        else if (pb != S_OTM && have_k && cmp && sd_params_decl(cmp, "k", NULL) &&
                 sd_params_parse(&cv.par, cmp, "k", k_text, &err))
            status = cli_fail(&err);
        else if (pb == S_OTM && !have_k)
            status = cli_usage_error("lp", "otm needs --k K (the number of drafts)");
        else if ((pb == S_BLOCK_OT || pb == S_VALID) && !have_gamma)
            status = cli_usage_error("lp", "%s needs --gamma G (the draft length)", S_names[pb]);
        else if (pb == S_PARETO && !have_rho)
            status = cli_usage_error("lp", "pareto needs --reject RHO (the rejection probability)");
        else if (have_k && pb != S_OTM && !(cmp && sd_params_decl(cmp, "k", NULL)))
            status = cli_usage_error("lp", "--k applies to otm (or to a --compare verifier that reads k)");
        else if (o.ordered && pb != S_OTM)
            status = cli_usage_error("lp", "--ordered applies to otm only");
        else if (have_gamma && pb != S_BLOCK_OT && pb != S_VALID)
            status = cli_usage_error("lp", "--gamma applies to block-ot and valid-verify only");
        else if (lo.exact && lo.method == SD_LP_METHOD_FLOW)
            status = cli_usage_error("lp", "--exact certifies a simplex optimum; it does not go with --method flow");
        else if (have_rho && pb != S_PARETO)
            status = cli_usage_error("lp", "--reject applies to pareto only");
        else if (cmp && pb != S_BLOCK_OT && pb != S_VALID && !S_is_tree(pb))
            status = cli_usage_error("lp", "--compare applies to block-ot, valid-verify, tree-valid and tree-ot "
                                     "(expected accepted length)");
        else if ((tree_text || draw_text) && !S_is_tree(pb))
            status = cli_usage_error("lp", "--tree/--draw apply to tree-valid and tree-ot only");
        else if (S_is_tree(pb) && !tree_text)
            status = cli_usage_error("lp", "%s needs --tree b1,...,bd (the draft tree's shape)", S_names[pb]);
        else if (S_is_tree(pb) && o.plan_file)
            status = cli_usage_error("lp", "--plan is not written for %s", S_names[pb]);
        else if (S_is_tree(pb) && S_tree_options(&o, &cv, tree_text, draw_text, &err))
            status = cli_fail(&err);
        else if (have_mc && !cmp)
            status = cli_usage_error("lp", "--trials/--seed apply to --compare only");
        else if (have_ctx && mo.p)
            status = cli_usage_error("lp", "--step/--state choose a context in a model; with --p/--q there is none");
        /* Both LPs bound verifiers whose output follows the target law:
         * ranking a lossy one against them says nothing. */
        else if (cmp && !sd_verifier_claims_lossless(cmp, &cv.par))
            status = cli_usage_error("lp", "--compare %s: %s does not claim to be lossless at these parameters, "
                                     "and the optimum of %s is over lossless verifiers only; compare a lossy "
                                     "verifier with 'simdec lp pareto' (the rejection-TV trade-off)",
                                     cmp->name, cmp->name, S_names[pb]);
        o.cmp = cmp;
        o.cmp_par = &cv.par;
        if (S_is_tree(pb))
            o.gamma = o.tree.tree_depth; /* the draft length a compared chain verifier gets */
        cv.par.gamma = o.gamma; /* the LP's draft length is the verifier's */
    }
    /* Refuse an oversize LP before building (or generating) the model when
     * V is known from the options; a model file is refused once loaded. */
    if (status < 0 && !mo.file && !S_size_ok(&o, mo.p ? mo.pV : mo.gen.V, &lo, &err))
        status = cli_fail(&err);
    /* The chain.  A --p/--q problem needs a horizon covering the block and
     * the bonus token. */
    sd_chain *ch = NULL;
    if (status < 0) {
        if (mo.p && !mo.T_given) {
            mo.T_given = 1;
            mo.gen.T = (o.prob == S_BLOCK_OT || o.prob == S_VALID || S_is_tree(o.prob)) ? o.gamma + 1 : 1;
        }
        if (!(ch = cli_model_build(&mo, &err)))
            status = cli_fail(&err);
        else if (cli_context_check(ch, o.t, o.a, &err))
            status = cli_fail(&err);
        else if (!S_size_ok(&o, ch->V, &lo, &err))
            status = cli_fail(&err);
    }
    if (status >= 0) {
        sd_chain_free(ch);
        cli_model_release(&mo);
        return status;
    }
    o.mo = &mo;
    o.c = ch;
    const double *p = sd_chain_p(ch, o.t, o.a), *q = sd_chain_q(ch, o.t, o.a);
    o.tv = sd_dist_tv(p, q, ch->V);
    sd_lp_plan *plan = NULL, **want = o.plan_file ? &plan : NULL;
    int rc = SD_OK;
    switch (o.prob) {
    case S_OTM: rc = sd_lp_otm(p, q, ch->V, o.k, o.ordered, &lo, &o.res, want, &err); break;
    case S_BLOCK_OT: rc = sd_lp_block_ot(ch, o.t, o.a, o.gamma, &lo, &o.res, want, &err); break;
    case S_VALID: rc = sd_lp_valid_verify(ch, o.t, o.a, o.gamma, &lo, &o.res, want, &err); break;
    case S_PARETO: rc = sd_lp_pareto(p, q, ch->V, o.rho, &lo, &o.res, want, &err); break;
    case S_TREE_VALID:
        rc = sd_lp_tree_valid(ch, o.t, o.a, &o.tree, o.draw, &lo, &o.res, &err);
        if (rc == SD_ETOOBIG && !lo.max_vars) { /* beyond exact reach: certified bounds */
            snprintf(o.bounds_why, sizeof o.bounds_why, "%.250s", err.msg);
            rc = sd_lp_tree_valid_bounds(ch, o.t, o.a, &o.tree, o.draw, &o.bounds, &err);
            o.has_bounds = rc == SD_OK;
            if (rc == SD_ETOOBIG) {
                char why[256];
                snprintf(why, sizeof why, "%.250s", err.msg);
                sd_error_set(&err, SD_ETOOBIG, "%s; and %s", o.bounds_why, why);
            }
            if (o.has_bounds) {
                snprintf(o.res.status, sizeof o.res.status, "bounds");
                snprintf(o.res.method, sizeof o.res.method, "bounds");
                o.res.seconds = o.bounds.seconds;
            }
        }
        break;
    case S_TREE_OT: rc = sd_lp_tree_ot(ch, o.t, o.a, &o.tree, o.draw, &lo, &o.res, &err); break;
    default: break;
    }
    if (!rc && plan)
        rc = cli_write_atomic(o.plan_file, S_write_plan, plan, &err);
    if (!rc && o.cmp)
        rc = S_measure(o.cmp, &cv.par, ch, o.t, o.a, o.gamma, o.trials, o.seed, &o.acc, &err);
    if (rc) {
        status = cli_fail(&err);
    } else {
        if (!plan)
            o.plan_file = NULL;
        S_reference(&o, p, q);
        status = json ? S_print_json(&o) : S_print_table(&o);
        if (!status && !o.res.optimal && !o.has_bounds) {
            fprintf(stderr, "simdec: the LP solver ended with status '%s'; no optimum\n", o.res.status);
            status = EX_SOFTWARE_;
        }
    }
    sd_lp_plan_free(plan);
    sd_chain_free(ch);
    cli_model_release(&mo);
    return status;
}
