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
#include "cli_verifiers.h"
#include "suggest.h"
#include "../src/sd_version.h"
#include "commands.h"

#define S_DEFAULT_TRIALS 100000u
#define S_DEFAULT_SEED 1u
/* Monte-Carlo trials of the tree verifiers without an exact value, in tree-valid's bounds. */
#define S_BOUNDS_TRIALS 20000u

/* --- the problems: one table of names, meanings, help ---------------------
 *
 * `simdec lp --help` lists every problem with its summary and the options;
 * `simdec lp PROBLEM --help` prints the problem's own text and only the
 * options it takes (L_* bits of S_problem_def.opts). */

enum {
    L_PLAN = 1u << 0,    /* --plan FILE */
    L_COMPARE = 1u << 1, /* --compare NAME[,NAME...] --trials --seed */
    L_FLOW = 1u << 2,    /* --method flow is its default */
    L_CTX = 1u << 3      /* --step/--state: a context whose chain continues */
};

typedef struct S_problem_def {
    const char *name, *meaning;
    const char *usage;   /* the problem's own options, after "simdec lp NAME" */
    const char *summary; /* for `lp --help` (28-column indent for continuation lines) */
    const char *text;    /* for `lp NAME --help` */
    unsigned opts;
    const char *method;  /* its --method line when not the generic one (NULL) */
} S_problem_def;

static const S_problem_def S_problems[] = {
    {"otm", "acceptance probability", "--k K [--ordered]",
     "OTM-k (SpecTr, Sun et al. 2023, eq. 4): couplings of p^{(x)k} and q\n"
     "                           with membership cost; optimum = acceptance probability.\n"
     "                           Solved on multisets of drafts (C(V+k-1,k) rows);\n"
     "                           --ordered uses ordered k-tuples (V^k rows) instead.\n",
     "OTM-k (SpecTr, Sun et al. 2023, eq. 4): the couplings of k i.i.d. drafts\n"
     "from p, p^{(x)k}, with the target q, with membership cost; the optimum is the\n"
     "best acceptance probability of any valid k-draft verifier.  Solved on\n"
     "multisets of drafts (C(V+k-1,k) rows); the reference is the closed form\n"
     "1 - max_B [p(B)^k - q(B)] over q/p-sorted prefixes (docs/otm-prefix.md).\n"
     "\n"
     "  --k K                    the number of drafts (required)\n"
     "  --ordered                ordered k-tuples (V^k rows) instead of multisets\n",
     L_PLAN | L_FLOW, NULL},
    {"block-ot", "expected accepted length", "--gamma G",
     "block-level optimal transport (Sun et al. 2024, Def. 1): couplings\n"
     "                           of the draft and target G-blocks maximising the expected\n"
     "                           common-prefix length; optimum = expected accepted length.\n",
     "Block-level optimal transport (Sun et al. 2024, Def. 1): the couplings of the\n"
     "draft and target G-blocks from the context maximising the expected common-\n"
     "prefix length; the optimum is the full-information bound on the expected\n"
     "accepted length, referenced by sum_l sum_x min(p,q) (Sun et al. 2024, Thm 1).\n"
     "\n"
     "  --gamma G                the draft length (required)\n",
     L_PLAN | L_COMPARE | L_FLOW | L_CTX, NULL},
    {"valid-verify", "expected accepted length", "--gamma G",
     "the best verifier among all valid ones (Sun et al. 2025, Def. 1,\n"
     "                           Lemma 2); optimum = expected accepted length E[tau].\n",
     "The best verifier among all valid ones for G-token draft blocks (Sun et al.\n"
     "2025, Def. 1, Lemma 2); the optimum is its expected accepted length E[tau],\n"
     "referenced by block verification (Sun et al. 2025, Thm 2).\n"
     "\n"
     "  --gamma G                the draft length (required)\n",
     L_PLAN | L_COMPARE | L_CTX, NULL},
    {"pareto", "minimal TV", "--reject RHO",
     "least TV bias of a single-token verifier whose rejection\n"
     "                           probability is RHO (Yin et al. 2024, Thm 4-5); optimum = TV.\n",
     "The least total-variation bias of a single-token verifier whose rejection\n"
     "probability is RHO (Yin et al. 2024, Theorems 4-5); the optimum is that TV,\n"
     "referenced by the Theorem 5 line max(0, TV(p,q) - RHO).\n"
     "\n"
     "  --reject RHO             the rejection probability, in [0, 1] (required)\n",
     L_PLAN, NULL},
    {"tree-valid", "expected accepted path length", "--tree b1,..,bd [--draw iid|wor|topk]",
     "the best valid verifier for a draft token tree drafted\n"
     "                           by the rule (default iid, or the --compare verifier's);\n"
     "                           optimum = expected accepted path length.  Drafted trees\n"
     "                           with the same root paths share one block of variables.\n",
     "The best valid verifier for a draft token tree of shape b1,..,bd drafted by\n"
     "the rule; the optimum is its expected accepted path length.  Drafted trees\n"
     "with the same root paths share one block of variables.  References: a chain\n"
     "1,..,1 is block verification, depth 1 with i.i.d. drafts is OTM-k.\n"
     "\n"
     "  --tree b1,..,bd          the draft tree's shape (required)\n"
     "  --draw iid|wor|topk      the drafting rule of the children (default iid, or\n"
     "                           the first --compare verifier's)\n",
     L_COMPARE | L_CTX,
     "  --method M               default: tree-ot's minimum-cost flow where tree-valid\n"
     "                           = tree-ot is proven (docs/lp.md), else the LP on COIN-OR\n"
     "                           CLP (GLPK's primal simplex if CLP's answer is\n"
     "                           uncertified); simplex, dual: GLPK; clp: CLP only\n"},
    {"tree-ot", "expected accepted path length", "--tree b1,..,bd [--draw iid|wor|topk]",
     "the full-information bound: couplings of the drafted\n"
     "                           tree with the target sequence, maximising the depth to\n"
     "                           which the target path stays inside the tree.\n",
     "The full-information bound for a draft token tree: the couplings of the\n"
     "drafted tree with the target sequence maximising the depth to which the\n"
     "target path stays inside the tree, solved as a minimum-cost flow.\n"
     "\n"
     "  --tree b1,..,bd          the draft tree's shape (required)\n"
     "  --draw iid|wor|topk      the drafting rule of the children (default iid, or\n"
     "                           the first --compare verifier's)\n",
     L_COMPARE | L_FLOW | L_CTX, NULL},
};

typedef enum { S_OTM, S_BLOCK_OT, S_VALID, S_PARETO, S_TREE_VALID, S_TREE_OT, S_NPROBLEMS } S_problem;

/* The options every problem shares, then those of some (by L_* bit). */
static void S_help_common(FILE *f, unsigned opts, const char *method)
{
    fputs("  --p LIST --q LIST        a single-token problem (tokens i.i.d.), or a model\n"
          "                           (below) with its context:\n", f);
    if (opts & L_CTX)
        fputs("  --step t, --state a      the context: position t (default 1) after x_{t-1} = a\n"
              "                           (default 0); p, q are the rows p_t(.|a), q_t(.|a), and\n"
              "                           blocks follow the chain from there\n", f);
    else
        fputs("  --step t, --state a      the row p_t(.|a), q_t(.|a) of a model (default 1, 0)\n", f);
    fputs("  --json                   one JSON object: optimum, status, variables,\n"
          "                           constraints, seconds, reference, ...\n"
          "  --csv                    a header and one row of the LP: status, method,\n"
          "                           optimum, the certificate (dual_bound,\n"
          "                           primal_residual), lower, upper, gap, seconds\n", f);
    if (opts & L_PLAN)
        fputs("  --plan FILE              write the optimal coupling or verifier as CSV (see\n"
              "                           docs/lp.md)\n", f);
    fputs("  --max-vars N             refuse an LP with more than N variables, or a flow\n"
          "                           network with more than N arcs (default 200000\n"
          "                           variables, 5000000 arcs; tree-valid without it: a\n"
          "                           memory estimate of at most 4 GB, then bounds)\n", f);
    if (method)
        fputs(method, f);
    else if (opts & L_FLOW)
        fputs("  --method M               flow (the default): a network flow on GLPK's graph API,\n"
              "                           certified by duality; simplex or dual: the LP on\n"
              "                           GLPK's primal or dual simplex; clp: on COIN-OR CLP\n", f);
    else
        fputs("  --method M               simplex or dual: the LP on GLPK's primal or dual\n"
              "                           simplex (default: the faster, docs/lp.md); clp: on\n"
              "                           COIN-OR CLP's dual simplex, optimal when its dual bound\n"
              "                           meets the primal value within 1e-9\n", f);
    fputs("  --exact                  certify the simplex optimum with GLPK's exact simplex\n"
          "  --time-limit S           stop the solver after S seconds (status says so); for\n"
          "                           tree-valid beyond the enumerating LP, the time of the\n"
          "                           Lagrangian's column generation (default 20): status\n"
          "                           optimal, method lagrangian-cg, when its primal point\n"
          "                           and dual bound meet within 1e-9, else bounds; and as\n"
          "                           long again for tree-ot's column generation (its\n"
          "                           certified ends; upper_at_most_tree_ot)\n"
          "  --progress               the simplex's iteration count on stderr every 2 s even\n"
          "                           when stderr is not a terminal (on a terminal: always)\n", f);
    if (opts & L_COMPARE)
        fputs("  --compare A[,B,...]      also measure each listed verifier's expected accepted\n"
              "                           tokens in one iteration from the same context\n"
              "                           (--trials, default 100000; --seed, default 1), the\n"
              "                           LP solved once; prints each gap.  A verifier must be\n"
              "                           lossless and read the LP's draft length (gamma) or\n"
              "                           tree shape (tree); its parameters are options too,\n"
              "                           set in every listed verifier that reads them\n"
              "  --plugin FILE            load verifiers from a plugin (include/simdec.h)\n", f);
}

/* `lp --help` (pb < 0) or `lp NAME --help`; the parameters of the
 * compared verifiers follow, then the model options. */
static void S_help(FILE *f, int pb)
{
    if (pb < 0) {
        fputs("Usage: simdec lp PROBLEM [problem options] [--p LIST --q LIST | model --step t --state a]\n"
              "                 [--json|--csv] [--plan FILE] [--max-vars N] [--method M] [--exact] [--time-limit S]\n"
              "                 [--progress] [--compare A[,B,...] [--trials N] [--seed S]]\n"
              "\n"
              "Solves one linear program exactly with GLPK and prints its optimum beside the\n"
              "independent closed form (the 'reference').  Problems:\n\n", f);
        for (int i = 0; i < S_NPROBLEMS; i++) {
            char head[64];
            snprintf(head, sizeof head, "%s %s", S_problems[i].name, S_problems[i].usage);
            if (strlen(head) <= 24)
                fprintf(f, "  %-24s %s", head, S_problems[i].summary);
            else
                fprintf(f, "  %s\n                           %s", head, S_problems[i].summary);
        }
        fputs("\n  simdec lp PROBLEM --help   one problem's text and options\n\n", f);
        S_help_common(f, L_PLAN | L_COMPARE | L_CTX, NULL);
    } else {
        const S_problem_def *d = &S_problems[pb];
        fprintf(f, "Usage: simdec lp %s %s\n", d->name, d->usage);
        fprintf(f, "                 [--p LIST --q LIST | model --step t --state a] [--json|--csv]%s\n",
                d->opts & L_PLAN ? " [--plan FILE]" : "");
        fputs("                 [--max-vars N] [--method M] [--exact] [--time-limit S] [--progress]\n", f);
        if (d->opts & L_COMPARE)
            fputs("                 [--compare A[,B,...] [--trials N] [--seed S]]\n", f);
        fputc('\n', f);
        fputs(d->text, f);
        S_help_common(f, d->opts, d->method);
    }
    fputc('\n', f);
}

/* The problem named in argv (for --help before the problem is parsed): the
 * first argument that is a problem's name and not an option's value. */
static int S_problem_in_argv(int argc, char **argv, const struct option *opts)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (a[0] == '-') {
            if (!strcmp(a, "--"))
                continue;
            if (a[1] == '-' && !strchr(a, '=')) /* --name VALUE skips VALUE */
                for (const struct option *o = opts; o->name; o++)
                    if (!strcmp(o->name, a + 2) && o->has_arg == required_argument) {
                        i++;
                        break;
                    }
            continue;
        }
        for (int j = 0; j < S_NPROBLEMS; j++)
            if (!strcmp(a, S_problems[j].name))
                return j;
    }
    return -1;
}

static int S_is_tree(S_problem pb)
{
    return pb == S_TREE_VALID || pb == S_TREE_OT;
}



typedef struct S_out {
    S_problem prob;
    size_t k, gamma, t, a;
    double rho, tv;
    int ordered;
    const cli_model_opts *mo;
    const sd_chain *c;  /* NULL: pareto on --p/--q, the rows alone */
    size_t V;
    sd_lp_result res;
    double ref;
    const char *ref_name;
    const char *plan_file;
    size_t ncmp;                       /* --compare A,B,...: the verifiers measured */
    const sd_verifier_type *cmp[CLI_VERIFIERS_MAX];
    const sd_params *cmp_par[CLI_VERIFIERS_MAX];
    sd_welford acc[CLI_VERIFIERS_MAX];
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
static double S_gap_se(const S_out *o, size_t j)
{
    return cli_gap_in_se(o->res.optimum, o->acc[j].mean, sd_welford_stderr(&o->acc[j]));
}

/* tree-valid's bounds (has_bounds): every candidate upper bound, the
 * Lagrangian's run, and every built-in tree verifier's value. */
static void S_bounds_json(const S_out *o, json_t *j)
{
    const sd_lp_tree_bounds *b = &o->bounds;
    json_t *u = json_object();
    json_object_set_new(u, "tree_ot", cli_json_real(b->tree_ot));
    json_object_set_new(u, "tree_ot_lower", cli_json_real(b->tree_ot_lower));
    json_object_set_new(u, "tree_ot_upper", cli_json_real(b->tree_ot_upper));
    json_object_set_new(u, "tree_ot_method", b->tree_ot_method[0] ? json_string(b->tree_ot_method) : json_null());
    json_object_set_new(u, "path_marginals", cli_json_real(b->marginals));
    json_object_set_new(u, "lagrangian", cli_json_real(b->lagrangian));
    json_object_set_new(j, "upper_candidates", u);
    json_object_set_new(j, "upper_at_most_tree_ot", json_boolean(b->upper_below_tree_ot));
    if (b->ot_cg.masters) {
        json_t *l = json_object();
        json_object_set_new(l, "lower", cli_json_real(b->ot_cg.lower));
        json_object_set_new(l, "upper", cli_json_real(b->ot_cg.upper));
        json_object_set_new(l, "optimal", json_boolean(b->ot_cg.optimal));
        json_object_set_new(l, "masters", json_integer((json_int_t)b->ot_cg.masters));
        json_object_set_new(l, "pricings", json_integer((json_int_t)b->ot_cg.pricings));
        json_object_set_new(l, "columns", json_integer((json_int_t)b->ot_cg.columns));
        json_object_set_new(l, "seconds", json_real(b->ot_cg.seconds));
        json_object_set_new(j, "tree_ot_column_generation", l);
    }
    if (!isnan(b->lagrangian)) {
        json_t *l = json_object();
        json_object_set_new(l, "value", cli_json_real(b->lagrange.value));
        json_object_set_new(l, "evaluations", json_integer((json_int_t)b->lagrange.iters));
        json_object_set_new(l, "serious_steps", json_integer((json_int_t)b->lagrange.serious));
        json_object_set_new(l, "seconds", json_real(b->lagrange.seconds));
        json_object_set_new(l, "converged", json_boolean(b->lagrange.converged));
        json_object_set_new(l, "stopped", json_string(b->lagrange.converged ? "converged" : b->lagrange.flat ? "flat"
                                                      : b->lagrange.master_failed ? "master failed" : "time"));
        json_object_set_new(l, "model_gap", cli_json_real(b->lagrange.model_gap));
        json_object_set_new(l, "primal", cli_json_real(b->lagrange.primal));
        json_object_set_new(l, "primal_residual", cli_json_real(b->lagrange.primal_residual));
        json_object_set_new(j, "lagrangian", l);
    }
    json_t *vs = json_array();
    for (size_t i = 0; i < b->nverifiers; i++) {
        const sd_lp_tree_bound_verifier *v = &b->verifiers[i];
        json_t *m = json_object();
        json_object_set_new(m, "name", json_string(v->name));
        json_object_set_new(m, "value", cli_json_real(v->value));
        json_object_set_new(m, "stderr", cli_json_real(v->stderr_));
        json_object_set_new(m, "method", json_string(v->method));
        if (v->trials) {
            json_object_set_new(m, "trials", json_integer((json_int_t)v->trials));
            json_object_set_new(m, "seed", json_integer((json_int_t)b->seed));
            json_object_set_new(m, "above_lower", json_boolean(v->above_lower));
        }
        json_array_append_new(vs, m);
    }
    json_object_set_new(j, "verifiers", vs);
    json_object_set_new(j, "mc_above_lower", json_boolean(b->mc_above_lower));
}

static void S_bounds_table(const S_out *o)
{
    const sd_lp_tree_bounds *b = &o->bounds;
    if (b->exact)
        printf("  exact        the enumerating LP is out of reach (%s); column generation certified the "
               "optimum\n", o->bounds_why);
    else
        printf("  exact        out of reach: %s\n", o->bounds_why);
    printf("  lower        %.12f   %s (a valid verifier)\n"
           "  upper        %.12f   %s (a relaxation)\n", b->lower, b->lower_by, b->upper, b->upper_by);
    if (b->gap < 1e-9)
        printf("  gap          %.1e   (the optimum, to the exact route's 1e-9)\n", b->gap);
    else
        printf("  gap          %.12f\n", b->gap);
    if (!isnan(b->tree_ot) && b->ot_cg.masters)
        printf("  tree-ot      %.12f   (column generation, certified within %.1e, %.1f s)\n", b->tree_ot,
               b->tree_ot_upper - b->tree_ot_lower, b->ot_cg.seconds);
    else if (!isnan(b->tree_ot))
        printf("  tree-ot      %.12f   (%s)\n", b->tree_ot, b->tree_ot_method);
    else if (!isnan(b->tree_ot_lower))
        printf("  tree-ot      in [%.12f, %.12f]   (column generation, stopped by time after %.1f s)\n",
               b->tree_ot_lower, b->tree_ot_upper, b->ot_cg.seconds);
    printf("  upper<=ot    %s\n", b->upper_below_tree_ot ? "yes (upper <= tree-ot's lower bound + 1e-9)"
           : "not shown");
    if (!isnan(b->marginals))
        printf("  marginals    %.12f   (path marginals, >= tree-ot)\n", b->marginals);
    if (!isnan(b->lagrangian))
        printf("  lagrangian   %.12f   (%zu evaluations, %.1f s, %s; model gap %.1e)\n", b->lagrangian,
               b->lagrange.iters, b->lagrange.seconds,
               b->lagrange.converged ? "converged" : b->lagrange.flat ? "no decrease predicted in the widest region"
               : b->lagrange.master_failed ? "the master LP failed" : "stopped by time",
               b->lagrange.model_gap);
    for (size_t i = 0; i < b->nverifiers; i++) {
        const sd_lp_tree_bound_verifier *v = &b->verifiers[i];
        if (isnan(v->value))
            printf("  verifier     %-20s (%s)\n", v->name, v->method);
        else if (v->trials)
            printf("  verifier     %-20s %.6f +- %.6f (1 se, %s, %llu trials, seed %llu)\n", v->name, v->value,
                   v->stderr_, v->method, (unsigned long long)v->trials, (unsigned long long)b->seed);
        else
            printf("  verifier     %-20s %.12f (%s)\n", v->name, v->value, v->method);
    }
    for (size_t i = 0; i < b->nverifiers; i++)
        if (b->verifiers[i].above_lower)
            printf("  warning      %s's Monte-Carlo value %.6f is not 4 se below the lower bound %.6f: lower >= %s "
                   "is not shown\n", b->verifiers[i].name, b->verifiers[i].value, b->lower, b->verifiers[i].name);
}

static int S_print_json(const S_out *o)
{
    json_t *j = json_object();
    json_object_set_new(j, "problem", json_string(S_problems[o->prob].name));
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
    sd_model md = {o->V, 1, NULL, NULL, NULL, NULL};
    if (o->c)
        md = sd_model_of_chain(o->c);
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
        S_bounds_json(o, j);
    }
    if (!strcmp(o->res.method, "clp") || !strcmp(o->res.method, "lagrangian-cg")) {
        json_object_set_new(j, "dual_bound", cli_json_real(o->res.dual_bound));
        json_object_set_new(j, "primal_residual", cli_json_real(o->res.primal_residual));
    }
    json_object_set_new(j, "meaning", json_string(S_problems[o->prob].meaning));
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
    /* "compare": the first verifier measured (as with one); "comparisons":
     * every one, in the order listed. */
    json_t *all = o->ncmp ? json_array() : NULL;
    for (size_t v = 0; v < o->ncmp; v++) {
        json_t *m = json_object();
        double se = sd_welford_stderr(&o->acc[v]);
        json_object_set_new(m, "verifier", json_string(o->cmp[v]->name));
        json_object_set_new(m, "params", sd_params_json(o->cmp_par[v], o->cmp[v]));
        json_object_set_new(m, "reads_gamma", json_boolean(sd_params_decl(o->cmp[v], "gamma", NULL) != NULL));
        json_object_set_new(m, "reads_tree", json_boolean(sd_params_decl(o->cmp[v], "tree", NULL) != NULL));
        json_object_set_new(m, "trials", json_integer((json_int_t)o->trials));
        json_object_set_new(m, "seed", json_integer((json_int_t)o->seed));
        json_object_set_new(m, "mean", json_real(o->acc[v].mean));
        json_object_set_new(m, "stderr", json_real(se));
        json_object_set_new(m, "gap", cli_json_real(o->res.optimum - o->acc[v].mean));
        json_object_set_new(m, "gap_in_se", cli_json_real(S_gap_se(o, v)));
        if (o->has_bounds) { /* no optimum: the measurement against the bounds */
            json_object_set_new(m, "lower_minus_mean", cli_json_real(o->bounds.lower - o->acc[v].mean));
            json_object_set_new(m, "lower_in_se", cli_json_real(cli_gap_in_se(o->bounds.lower, o->acc[v].mean, se)));
            json_object_set_new(m, "upper_minus_mean", cli_json_real(o->bounds.upper - o->acc[v].mean));
            json_object_set_new(m, "upper_in_se", cli_json_real(cli_gap_in_se(o->bounds.upper, o->acc[v].mean, se)));
        }
        json_array_append_new(all, m);
        if (v == 0)
            json_object_set_new(j, "compare", json_deep_copy(m));
    }
    if (all)
        json_object_set_new(j, "comparisons", all);
    return cli_print_json(j);
}

/* --csv: a header and one row; the certificate's columns (dual_bound,
 * primal_residual) are empty where the route has none, and lower, upper,
 * gap where no bounds were computed. */
static int S_print_csv(const S_out *o)
{
    int cert = !strcmp(o->res.method, "clp") || !strcmp(o->res.method, "lagrangian-cg");
    char tree[SD_TREE_MAX_DEPTH * 24 + 1] = "";
    for (size_t l = 0, used = 0; S_is_tree(o->prob) && l < o->tree.tree_depth && used < sizeof tree; l++)
        used += (size_t)snprintf(tree + used, sizeof tree - used, "%s%zu", l ? "," : "", o->tree.tree[l]);
    fputs("problem", stdout);
    fputs(",tree,draw,V,step,state,status,method,optimum,dual_bound,primal_residual,lower,upper,gap,tree_ot,"
          "tree_ot_lower,tree_ot_upper,upper_at_most_tree_ot,seconds\n", stdout);
    fputs(S_problems[o->prob].name, stdout);
    cli_csv_field(tree);
    cli_csv_field(S_is_tree(o->prob) ? sd_tree_draw_name((sd_tree_draw)o->draw) : "");
    printf(",%zu,%zu,%zu", o->V, o->t, o->a);
    cli_csv_field(o->res.status);
    cli_csv_field(o->res.method[0] ? o->res.method : "simplex");
    printf(",%.17g", o->res.optimum);
    if (cert)
        printf(",%.17g,%.3g", o->res.dual_bound, o->res.primal_residual);
    else
        fputs(",,", stdout);
    if (o->has_bounds)
        printf(",%.17g,%.17g,%.17g", o->bounds.lower, o->bounds.upper, o->bounds.gap);
    else
        fputs(",,,", stdout);
    if (o->has_bounds) {
        const sd_lp_tree_bounds *b = &o->bounds;
        const double v[3] = {b->tree_ot, b->tree_ot_lower, b->tree_ot_upper};
        for (int k = 0; k < 3; k++)
            if (isnan(v[k]))
                fputs(",", stdout);
            else
                printf(",%.17g", v[k]);
        printf(",%s", b->upper_below_tree_ot ? "true" : "false");
    } else {
        fputs(",,,,", stdout);
    }
    printf(",%.6f\n", o->res.seconds);
    return cli_stdout_status();
}

static int S_print_table(const S_out *o)
{
    const sd_chain *c = o->c;
    printf("simdec lp %s", S_problems[o->prob].name);
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
        printf("  model        single-token problem (--p/--q), V=%zu, tokens i.i.d.\n", o->V);
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
        S_bounds_table(o);
    else if (!strcmp(o->res.method, "otm-prefix"))
        printf("  closed form  OTM-k by the q/p-sorted prefix (depth 1, i.i.d. drafts; nothing enumerated)\n");
    else if (!strcmp(o->res.method, "flow"))
        printf("  flow         %zu arcs, %zu vertices (%s flow, glp_maxflow_ffalg)\n", o->res.variables,
               o->res.constraints, o->prob == S_OTM ? "maximum" : "minimum-cost");
    else
        printf("  LP           %zu variables, %zu constraints, %zu nonzeros%s\n", o->res.variables,
               o->res.constraints, o->res.nonzeros,
               !strcmp(o->res.method, "dual") ? " (dual simplex)" : !strcmp(o->res.method, "clp") ? " (COIN-OR CLP)" : "");
    if (!strcmp(o->res.method, "clp") || !strcmp(o->res.method, "lagrangian-cg"))
        printf("  certificate  primal %.12f, dual bound %.12f, primal residual %.1e%s\n", o->res.optimum,
               o->res.dual_bound, o->res.primal_residual,
               !strcmp(o->res.method, "lagrangian-cg") ? " (lagrangian-cg: column generation)" : "");
    printf("  status       %s\n", o->res.status);
    if (isnan(o->res.optimum) && o->has_bounds) /* not certified: only the bounds above */
        printf("  optimum      within [lower, upper] above (%s)\n", S_problems[o->prob].meaning);
    else
        printf("  optimum      %.12f   (%s)\n", o->res.optimum, S_problems[o->prob].meaning);
    if (o->ref_name)
        printf("  reference    %.12f   %s; difference %.2e\n", o->ref, o->ref_name, o->res.optimum - o->ref);
    if (o->prob == S_PARETO)
        printf("  TV(p,q)      %.12f\n", o->tv);
    printf("  seconds      %.4f\n", o->res.seconds);
    if (o->plan_file)
        printf("  plan         %s\n", o->plan_file);
    for (size_t v = 0; v < o->ncmp; v++) {
        double se = sd_welford_stderr(&o->acc[v]), gap = o->res.optimum - o->acc[v].mean, z = S_gap_se(o, v);
        char pars[512];
        sd_params_format(o->cmp_par[v], o->cmp[v], pars, sizeof pars);
        printf("  compare      %s%s: %.6f +- %.6f (1 se), %llu trials, seed %llu\n", o->cmp[v]->name, pars,
               o->acc[v].mean, se, (unsigned long long)o->trials, (unsigned long long)o->seed);
        if (o->has_bounds)
            printf("  against      lower - measured = %+.6f (%+.2f se), upper - measured = %+.6f (%+.2f se)\n",
                   o->bounds.lower - o->acc[v].mean, cli_gap_in_se(o->bounds.lower, o->acc[v].mean, se),
                   o->bounds.upper - o->acc[v].mean, cli_gap_in_se(o->bounds.upper, o->acc[v].mean, se));
        else if (isfinite(z))
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
        return sd_lp_tree_enum_check(S_problems[o->prob].name, V, &o->tree, o->draw, err) == SD_OK;
    default: sz = sd_lp_pareto_size(V); break;
    }
    return sd_lp_check_size(&sz, lo->max_vars, err) == SD_OK;
}

/* --tree and --draw of tree-valid/tree-ot into o->tree and o->draw, and
 * into each compared verifier's parameters when it reads them.  The draw
 * defaults to the first compared verifier's that reads one, else iid. */
static int S_tree_options(S_out *o, cli_verifiers *vs, const char *tree_text, const char *draw_text,
                          sd_error *err)
{
    sd_params_defaults(&o->tree, NULL);
    o->draw = SD_DRAW_IID;
    for (size_t j = vs->n; j-- > 0;)
        if (sd_params_decl(vs->v[j].vt, "draw", NULL))
            o->draw = (int)sd_tree_draw_of(&vs->v[j].par);
    int rc = sd_params_parse_decl(&o->tree, &sd_tree_decls[SD_TREE_DECL_SHAPE], tree_text, err);
    if (!rc && draw_text && !(rc = sd_params_parse_decl(&o->tree, &sd_tree_decls[SD_TREE_DECL_DRAW], draw_text, err)))
        o->draw = (int)sd_tree_draw_of(&o->tree);
    for (size_t j = 0; j < vs->n && !rc; j++) {
        cli_verifier *cv = &vs->v[j];
        const sd_verifier_type *cmp = cv->vt;
        if (sd_params_decl(cmp, "tree", NULL))
            rc = sd_params_parse(&cv->par, cmp, "tree", tree_text, err);
        if (!rc && sd_params_decl(cmp, "draw", NULL))
            rc = sd_params_parse(&cv->par, cmp, "draw", sd_tree_draw_name((sd_tree_draw)o->draw), err);
        const sd_tree_kind *k = sd_tree_kind_find(cmp->name);
        if (!rc && k)
            rc = sd_tree_check_draw(k, (sd_tree_draw)o->draw, cmp->name, err);
    }
    return rc;
}

/* 1 if the tree of o is a chain 1,...,1. */
static int S_tree_is_chain(const S_out *o)
{
    for (size_t l = 0; l < o->tree.tree_depth; l++)
        if (o->tree.tree[l] != 1)
            return 0;
    return 1;
}

/* The compared verifiers against problem pb: each lossless, and each
 * reading what the LP fixes — the draft length G (block-ot, valid-verify:
 * it declares gamma, with one draft: k = 1 where it reads k) or the tree
 * (it declares tree; or the tree is a chain 1,..,1 drafted by sampling and
 * it is a single-draft chain verifier, which reads gamma).  A verifier that reads neither would run on a draft of its
 * own and its "gap" would compare two different problems.  -1 to go on,
 * or the exit status after the message. */
static int S_compare_check(const S_out *o, const cli_verifiers *vs, S_problem pb)
{
    const char *name = S_problems[pb].name;
    for (size_t j = 0; j < vs->n; j++) {
        const sd_verifier_type *cmp = vs->v[j].vt;
        int gamma = sd_params_decl(cmp, "gamma", NULL) != NULL, tree = sd_params_decl(cmp, "tree", NULL) != NULL,
            k = (sd_params_decl(cmp, "k", NULL) || sd_params_decl(cmp, "M", NULL)) && vs->v[j].par.k > 1;
        /* Both LPs bound verifiers whose output follows the target law:
         * ranking a lossy one against them says nothing. */
        if (!sd_verifier_claims_lossless(cmp, &vs->v[j].par))
            return cli_usage_error("lp", "--compare %s: %s does not claim to be lossless at these parameters, "
                                   "and the optimum of %s is over lossless verifiers only; compare a lossy "
                                   "verifier with 'simdec lp pareto' (the rejection-TV trade-off)",
                                   cmp->name, cmp->name, name);
        if (!S_is_tree(pb) && k)
            return cli_usage_error("lp", "--compare %s: %s drafts k = %zu sequences, and %s bounds verifiers of "
                                   "one draft block; compare it at --k 1, or as a tree (lp tree-valid)", cmp->name,
                                   cmp->name, vs->v[j].par.k, name);
        if (!S_is_tree(pb) && !gamma)
            return cli_usage_error("lp", "--compare %s: %s does not read gamma, the draft length G = %zu of %s, so "
                                   "it would not draft G-token blocks and its gap would compare another problem; "
                                   "compare a verifier that declares gamma", cmp->name, cmp->name, o->gamma, name);
        if (S_is_tree(pb) && !tree && !(S_tree_is_chain(o) && gamma && !k && o->draw != SD_DRAW_TOPK))
            return cli_usage_error("lp", "--compare %s: %s does not read the tree shape (parameter 'tree') of %s, "
                                   "so it would draft a tree of its own and its gap would compare another problem; "
                                   "compare a tree verifier (declaring tree and draw%s)", cmp->name, cmp->name, name,
                                   S_tree_is_chain(o) ? ", or a single-draft chain verifier reading gamma" : "");
    }
    return -1;
}

enum {
    O_K = CLI_OPT_FIRST_FREE, O_GAMMA, O_REJECT, O_STEP, O_STATE, O_JSON, O_CSV, O_PLAN, O_MAXV,
    O_EXACT, O_TLIM, O_ORDERED, O_COMPARE, O_TRIALS, O_SEED, O_METHOD, O_TREE, O_DRAW
};
static const struct option S_base[] = {
    CLI_MODEL_LONGOPTS,
    CLI_PLUGIN_LONGOPT,
    CLI_PROGRESS_LONGOPT,
    {"k", required_argument, 0, O_K},
    {"gamma", required_argument, 0, O_GAMMA},
    {"reject", required_argument, 0, O_REJECT},
    {"step", required_argument, 0, O_STEP},
    {"state", required_argument, 0, O_STATE},
    {"json", no_argument, 0, O_JSON},
    {"csv", no_argument, 0, O_CSV},
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
/* The compared verifiers' parameters are options too, but for those lp
 * owns: gamma (the LP's draft length, which the verifier gets), k (otm's
 * drafts; passed to the verifiers with the other problems), plan (the
 * output file), tree and draw (the tree problems' shape and rule). */
static const char *const S_owned[] = {"gamma", "k", "plan", "tree", "draw", NULL};
/* What an lp asks for, while its options are read (from getopt or from
 * cmd_lp_fields). */
typedef struct {
    cli_verifiers vs; /* --compare A[,B,...] */
    int help_pb;      /* the problem named in argv, for --help (-1: none) */
    const char *k_text, *tree_text, *draw_text;
    cli_model_opts mo;
    sd_lp_opts lo;
    S_out o;
    int json, have_k, have_gamma, have_rho, have_ctx, have_mc;
    cli_format fmt; /* table, --json or --csv */
} S_req;

static void S_req_init(S_req *rq)
{
    memset(rq, 0, sizeof *rq);
    rq->help_pb = -1;
    cli_model_init(&rq->mo);
    sd_lp_opts_default(&rq->lo);
    rq->o.t = 1;
    rq->o.trials = S_DEFAULT_TRIALS;
    rq->o.seed = S_DEFAULT_SEED;
}

/* Option c with value arg: -1 to go on, 1 when c is no option of lp's, or
 * an exit status after printing the error (0 after --help). */
static int S_option(S_req *rq, int c, const char *optarg)
{
    S_out *op = &rq->o;
    sd_lp_opts *lo = &rq->lo;
    sd_error err;
    int status = -1;
    int r = cli_model_option(&rq->mo, c, optarg, &err);
    if (r == 0)
        r = cli_verifiers_option(&rq->vs, c, optarg, &err);
    if (r < 0)
        return cli_fail(&err);
    if (r > 0)
        return -1;
    r = SD_OK;
    switch (c) {
    case 'h':
        S_help(stdout, rq->help_pb);
        for (size_t j = 0; j < rq->vs.n; j++) {
            cli_params_help(stdout, rq->vs.v[j].vt);
            fputc('\n', stdout);
        }
        fputs(cli_model_help, stdout);
        return 0;
    case O_K: rq->k_text = optarg; rq->have_k = 1; break;
    case O_GAMMA: r = cli_parse_size("--gamma", optarg, 1, 64, &op->gamma, &err); rq->have_gamma = 1; break;
    case O_REJECT: r = cli_parse_double("--reject", optarg, 0.0, 1.0, &op->rho, &err); rq->have_rho = 1; break;
    case O_STEP: r = cli_parse_size("--step", optarg, 1, SIZE_MAX, &op->t, &err); rq->have_ctx = 1; break;
    case O_STATE: r = cli_parse_size("--state", optarg, 0, SIZE_MAX, &op->a, &err); rq->have_ctx = 1; break;
    case O_JSON:
        rq->json = 1;
        status = cli_set_format("lp", &rq->fmt, CLI_FMT_JSON);
        break;
    case O_CSV: status = cli_set_format("lp", &rq->fmt, CLI_FMT_CSV); break;
    case O_PLAN: op->plan_file = optarg; r = cli_check_path("--plan", optarg, &err); break;
    case O_MAXV: r = cli_parse_size("--max-vars", optarg, 1, (size_t)1 << 40, &lo->max_vars, &err); break;
    case O_EXACT: lo->exact = 1; break;
    case O_TLIM: r = cli_parse_double("--time-limit", optarg, 0.0, 1e7, &lo->time_limit, &err); break;
    case O_ORDERED: op->ordered = 1; break;
    case CLI_OPT_PROGRESS: cli_progress_force = 1; break;
    case O_METHOD:
        if (!strcmp(optarg, "flow"))
            lo->method = SD_LP_METHOD_FLOW;
        else if (!strcmp(optarg, "simplex"))
            lo->method = SD_LP_METHOD_SIMPLEX;
        else if (!strcmp(optarg, "dual"))
            lo->method = SD_LP_METHOD_DUAL;
        else if (!strcmp(optarg, "clp"))
            lo->method = SD_LP_METHOD_CLP;
        else
            status = cli_usage_error("lp", "--method '%s': expected flow, simplex or dual, or clp (COIN-OR CLP)",
                                     optarg);
        break;
    case O_COMPARE: break; /* found by cli_verifiers_prescan (cli_verifiers_choose) */
    case O_TRIALS:
        r = cli_parse_trials(optarg, &op->trials, &err);
        rq->have_mc = 1;
        break;
    case O_SEED: r = cli_parse_seed(optarg, &op->seed, &err); rq->have_mc = 1; break;
    case O_TREE: rq->tree_text = optarg; break;
    case O_DRAW: rq->draw_text = optarg; break;
    default: return 1;
    }
    if (r && status < 0)
        status = cli_fail(&err);
    return status;
}

/* A progress line of GLPK's simplex on stderr (sd_lp_opts.progress; ctx a
 * cli_progress), redrawn in place; cli_progress_end() erases it. */
static void S_progress(void *ctx, long iteration, double seconds)
{
    cli_progress *pr = ctx;
    pr->shown = 1;
    fprintf(stderr, "\r\033[Ksimdec: simplex iteration %ld, %.0f s", iteration, seconds);
    fflush(stderr);
}

/* The problem (extra: an argument after it, or NULL), the checks across
 * options, the model, the LP and its output.  Works on *rq (the compared
 * verifiers' parameters stay there) and releases its model options. */
static int S_lp(S_req *rq, const char *problem, const char *extra)
{
    cli_verifiers *vs = &rq->vs;
    const char *k_text = rq->k_text, *tree_text = rq->tree_text, *draw_text = rq->draw_text;
    cli_model_opts mo = rq->mo;
    sd_lp_opts lo = rq->lo;
    S_out o = rq->o;
    int json = rq->json, have_k = rq->have_k, have_gamma = rq->have_gamma, have_rho = rq->have_rho,
        have_ctx = rq->have_ctx, have_mc = rq->have_mc;
    int status = -1;
    sd_error err;
    /* the problem name */
    if (status < 0) {
        size_t i = 0;
        while (i < S_NPROBLEMS && strcmp(problem, S_problems[i].name) != 0)
            i++;
        if (i == S_NPROBLEMS) {
            char hint[160];
            cli_suggest sg;
            cli_suggest_init(&sg, problem);
            for (size_t j = 0; j < S_NPROBLEMS; j++)
                cli_suggest_add(&sg, S_problems[j].name);
            status = cli_usage_error("lp", "unknown problem '%s' (expected otm, block-ot, valid-verify, pareto, "
                                     "tree-valid or tree-ot)%s", problem, cli_suggest_text(&sg, "", hint,
                                                                                           sizeof hint));
        }
        else if (extra)
            status = cli_usage_error("lp", "unexpected argument '%s'", extra);
        o.prob = (S_problem)i;
    }
    /* which options go with which problem */
    if (status < 0) {
        S_problem pb = o.prob;
        int cmp = vs->n > 0, cmp_k = 0;
        for (size_t j = 0; j < vs->n; j++)
            if (sd_params_decl(vs->v[j].vt, "k", NULL)) {
                cmp_k = 1;
                if (pb != S_OTM && have_k && status < 0 && sd_params_parse(&vs->v[j].par, vs->v[j].vt, "k", k_text, &err))
                    status = cli_fail(&err);
            }
        if (status >= 0) {
            /* a compared verifier's --k was refused */
        } else if (pb == S_OTM && have_k && cli_parse_size("--k", k_text, 1, 64, &o.k, &err))
            status = cli_fail(&err);
        else if (pb == S_OTM && !have_k)
            status = cli_usage_error("lp", "otm needs --k K (the number of drafts)");
        else if ((pb == S_BLOCK_OT || pb == S_VALID) && !have_gamma)
            status = cli_usage_error("lp", "%s needs --gamma G (the draft length)", S_problems[pb].name);
        else if (pb == S_PARETO && !have_rho)
            status = cli_usage_error("lp", "pareto needs --reject RHO (the rejection probability)");
        else if (have_k && pb != S_OTM && !cmp_k)
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
            status = cli_usage_error("lp", "%s needs --tree b1,...,bd (the draft tree's shape)", S_problems[pb].name);
        else if (S_is_tree(pb) && o.plan_file)
            status = cli_usage_error("lp", "--plan is not written for %s", S_problems[pb].name);
        else if (S_is_tree(pb) && S_tree_options(&o, vs, tree_text, draw_text, &err))
            status = cli_fail(&err);
        else if (have_mc && !cmp)
            status = cli_usage_error("lp", "--trials/--seed apply to --compare only");
        else if (have_ctx && mo.p)
            status = cli_usage_error("lp", "--step/--state choose a context in a model; with --p/--q there is none");
        else if (cmp)
            status = S_compare_check(&o, vs, pb);
        if (S_is_tree(pb))
            o.gamma = o.tree.tree_depth; /* the draft length a compared chain verifier gets */
        o.ncmp = vs->n;
        for (size_t j = 0; j < vs->n; j++) {
            o.cmp[j] = vs->v[j].vt;
            o.cmp_par[j] = &vs->v[j].par;
            vs->v[j].par.gamma = o.gamma; /* the LP's draft length is the verifier's */
        }
    }
    /* Refuse an oversize LP before building (or generating) the model when
     * V is known from the options; a model file is refused once loaded. */
    if (status < 0 && !mo.file && !S_size_ok(&o, mo.p ? mo.pV : mo.gen.V, &lo, &err))
        status = cli_fail(&err);
    /* The chain.  A --p/--q problem needs a horizon covering the block and
     * the bonus token. */
    sd_chain *ch = NULL;
    /* pareto is a problem of one position: on --p/--q it reads the two rows
     * (O(V)), never a chain of V x V rows */
    int rows_only = mo.p && o.prob == S_PARETO && !vs->n;
    if (status < 0 && rows_only) {
        if (!mo.q)
            status = cli_usage_error("lp", "a single-token problem needs both --p and --q");
        else if (mo.pV != mo.qV)
            status = cli_usage_error("lp", "--p has %zu entries but --q has %zu; expected the same vocabulary",
                                     mo.pV, mo.qV);
        else if (cli_model_lists_check(&mo, &err))
            status = cli_fail(&err);
    } else if (status < 0) {
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
    o.V = ch ? ch->V : mo.pV;
    const double *p = ch ? sd_chain_p(ch, o.t, o.a) : mo.p, *q = ch ? sd_chain_q(ch, o.t, o.a) : mo.q;
    o.tv = sd_dist_tv(p, q, o.V);
    sd_lp_plan *plan = NULL, **want = o.plan_file ? &plan : NULL;
    int rc = SD_OK;
    cli_progress pr = {0, 0};
    if (cli_stderr_is_tty()) { /* long simplex runs show their iterations (stdout untouched) */
        lo.progress = S_progress;
        lo.progress_ctx = &pr;
    }
    switch (o.prob) {
    case S_OTM: rc = sd_lp_otm(p, q, ch->V, o.k, o.ordered, &lo, &o.res, want, &err); break;
    case S_BLOCK_OT: rc = sd_lp_block_ot(ch, o.t, o.a, o.gamma, &lo, &o.res, want, &err); break;
    case S_VALID: rc = sd_lp_valid_verify(ch, o.t, o.a, o.gamma, &lo, &o.res, want, &err); break;
    case S_PARETO: rc = sd_lp_pareto(p, q, o.V, o.rho, &lo, &o.res, want, &err); break;
    case S_TREE_VALID:
        rc = sd_lp_tree_valid(ch, o.t, o.a, &o.tree, o.draw, &lo, &o.res, &err);
        if (rc == SD_ETOOBIG && !lo.max_vars) { /* beyond exact reach: certified bounds */
            snprintf(o.bounds_why, sizeof o.bounds_why, "%.250s", err.msg);
            sd_lp_tree_bounds_opts bo;
            sd_lp_tree_bounds_opts_default(&bo);
            if (lo.time_limit > 0.0)
                bo.lagrange_seconds = bo.ot_seconds = lo.time_limit;
            bo.trials = S_BOUNDS_TRIALS;
            bo.seed = o.seed;
            rc = sd_lp_tree_valid_bounds_opts(ch, o.t, o.a, &o.tree, o.draw, &bo, &o.bounds, &err);
            o.has_bounds = rc == SD_OK;
            if (rc == SD_ETOOBIG) {
                char why[256];
                snprintf(why, sizeof why, "%.250s", err.msg);
                sd_error_set(&err, SD_ETOOBIG, "%s; and %s", o.bounds_why, why);
            }
            if (o.has_bounds && o.bounds.exact) {
                /* column generation certified the optimum: a point of the LP
                 * (lower, its residual recomputed) within 1e-9 of a dual bound */
                snprintf(o.res.status, sizeof o.res.status, "optimal");
                snprintf(o.res.method, sizeof o.res.method, "lagrangian-cg");
                o.res.optimal = 1;
                o.res.optimum = o.bounds.lower;
                o.res.dual_bound = o.bounds.upper;
                o.res.primal_residual = o.bounds.lagrange.primal_residual;
                o.res.seconds = o.bounds.seconds;
            } else if (o.has_bounds) { /* not converged within --time-limit: the bounds */
                snprintf(o.res.status, sizeof o.res.status, "bounds");
                snprintf(o.res.method, sizeof o.res.method, "bounds");
                o.res.seconds = o.bounds.seconds;
            }
        }
        break;
    case S_TREE_OT: rc = sd_lp_tree_ot(ch, o.t, o.a, &o.tree, o.draw, &lo, &o.res, &err); break;
    default: break;
    }
    cli_progress_end(&pr);
    /* the status is decided before anything is written: a solver that
     * stopped without an optimum (and no bounds) prints nothing on stdout
     * and writes no plan */
    int unsolved = !rc && !o.res.optimal && !o.has_bounds;
    if (!rc && !unsolved && plan)
        rc = cli_write_atomic(o.plan_file, S_write_plan, plan, &err);
    for (size_t j = 0; !rc && !unsolved && j < o.ncmp; j++) /* the LP solved once, each verifier measured */
        rc = cli_first_iteration(o.cmp[j], o.cmp_par[j], ch, o.t, o.a, o.gamma, o.trials, o.seed, &o.acc[j], NULL,
                                 NULL, 0, &err);
    if (rc) {
        status = cli_fail(&err);
    } else if (unsolved) {
        fprintf(stderr, "simdec: the LP solver ended with status '%s'; no optimum\n", o.res.status);
        status = EX_SOFTWARE_;
    } else {
        if (!plan)
            o.plan_file = NULL;
        S_reference(&o, p, q);
        status = json ? S_print_json(&o) : rq->fmt == CLI_FMT_CSV ? S_print_csv(&o) : S_print_table(&o);
    }
    sd_lp_plan_free(plan);
    sd_chain_free(ch);
    cli_model_release(&mo);
    return status;
}

int cmd_lp(int argc, char **argv)
{
    S_req rq;
    struct option *opts;
    S_req_init(&rq);
    int status = cli_verifiers_prescan("lp", argc, argv, "compare", S_base, S_owned, &rq.vs, &opts);
    if (status >= 0)
        return status;
    rq.help_pb = S_problem_in_argv(argc, argv, opts);
    int c;
    optind = 0;
    opterr = 0;
    while (status < 0 && (c = cli_getopt(argc, argv, ":h", opts)) != -1)
        if ((status = S_option(&rq, c, optarg)) == 1)
            status = cli_unknown_option("lp", c, argv, rq.vs.n ? rq.vs.v[0].vt : NULL);
    free(opts);
    if (status < 0 && optind >= argc)
        status = cli_usage_error("lp", "which problem? expected otm, block-ot, valid-verify, pareto, tree-valid "
                                 "or tree-ot");
    if (status >= 0) {
        cli_model_release(&rq.mo);
        return status;
    }
    return S_lp(&rq, argv[optind], optind + 1 < argc ? argv[optind + 1] : NULL);
}

static int S_option_any(void *rq, int c, const char *arg)
{
    return S_option(rq, c, arg);
}

/* The field "compare" is a verifier or a comma-separated list of them, as
 * --compare. */
int cmd_lp_fields(const char *problem, const cli_field *fields, size_t n)
{
    static const int refuse[] = {CLI_OPT_PLUGIN, 0};
    S_req rq;
    struct option *opts;
    S_req_init(&rq);
    for (int j = 0; problem && j < S_NPROBLEMS; j++) /* help=True shows this problem's help */
        if (!strcmp(problem, S_problems[j].name))
            rq.help_pb = j;
    const char *compare = NULL;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(fields[i].name, "plugin") == 0) /* plugins are loaded before the verifiers are known */
            return CLI_NOT_A_FIELD;
        if (strcmp(fields[i].name, "compare") == 0 && fields[i].value)
            compare = fields[i].value; /* the last one, as getopt's */
    }
    int status = cli_verifiers_choose("lp", "compare", compare, S_base, S_owned, &rq.vs, &opts);
    if (status >= 0)
        return status;
    status = cli_fields_apply(opts, fields, n, refuse, S_option_any, &rq);
    free(opts);
    rq.json = 1;
    if (status >= 0) {
        cli_model_release(&rq.mo);
        return status;
    }
    return S_lp(&rq, problem, NULL);
}
