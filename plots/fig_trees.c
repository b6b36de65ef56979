/* fig_trees.c — token trees: the expected accepted path length
 * of one iteration against the tree's size (nodes), for the tree verifiers
 * (tree-rrs: SpecInfer, Miao et al. 2024; tree-rrs-wor: Jeon et al. 2024;
 * tree-topk; traversal: Weng et al. 2025; univer --draw iid: our reading of
 * UniVer, Weng et al. 2026, which on the shapes k,1,...,1 (wide n, mixed 2
 * and 2,1) is spectr-gbv, our reading of Lin et al. 2026), beside the best valid verifier
 * of the same tree (lp tree-valid) and the full-information bound (lp
 * tree-ot), for three families of shapes of equal node count n: deep (a
 * chain 1,...,1), wide (n children of the root) and mixed (1 / 2 / 1,2 /
 * 2,1 / 1,2,1 / 2,2), on two models: simdec's default 7-token chain
 * from x_0 = 1, and the Bernoulli pair of SpecTr (Sun et al. 2023, Fig. 4),
 * p = Ber(0.25), q = Ber(0.6), tokens i.i.d.
 *
 * Exact values from sims/exact/sd_exact_tree.h (enumeration of every drafted
 * tree), optima from lp/sd_lp.h, Monte-Carlo (the verifiers through the
 * trial engine, first iteration) beside them.  On the 7-token chain the
 * LPs of the deep and mixed families are solved up to 3 nodes (4 nodes
 * already takes GLPK minutes); the wide family and the Bernoulli pair go
 * to 6.  The file ends in its table of figures. */
#include <math.h>
#include <stdlib.h>

#include "../lp/sd_lp.h"
#include "../treelp/sd_treelp.h"
#include "../sims/engine/sd_params.h"
#include "../sims/verifiers/sd_tree.h"
#include "../sims/exact/sd_exact_tree.h"
#include "sd_fig_util.h"

enum { S_NMAX = 6, S_NALGO = 5 };
static const char *const S_algos[S_NALGO] = {"tree-rrs", "tree-rrs-wor", "tree-topk", "traversal", "univer"};
/* the drafting rule each is run with (NULL: its default); univer --draw wor
 * is traversal, so the figure shows its i.i.d. plan */
static const char *const S_draws[S_NALGO] = {NULL, NULL, NULL, NULL, "iid"};
static const char *const S_family[3] = {"deep", "wide", "mixed"};
static const char *const S_shapes[3][S_NMAX] = {
    {"1", "1,1", "1,1,1", "1,1,1,1", "1,1,1,1,1", "1,1,1,1,1,1"},
    {"1", "2", "3", "4", "5", "6"},
    {"1", "2", "1,2", "2,1", "1,2,1", "2,2"},
};

/* One line: nodes, the five exact values, tree-valid and tree-ot for iid
 * and wor drafts (NaN beyond lp_max nodes), then the five Monte-Carlo
 * estimates. */
static int S_line(FILE *f, const sd_chain *c, size_t prev, const char *shape, size_t n, size_t lp_max,
                  uint64_t seed, uint64_t trials, sd_error *err)
{
    int rc = SD_OK;
    fprintf(f, "%zu", n);
    sd_fig_est mc[S_NALGO];
    for (size_t i = 0; i < S_NALGO && !rc; i++) {
        const sd_verifier_type *vt = sd_fig_verifier(S_algos[i], err);
        if (!vt)
            return SD_EINTERNAL;
        sd_params par;
        sd_params_defaults(&par, vt);
        double ex = NAN;
        sd_sim_result res;
        if ((rc = sd_params_parse(&par, vt, "tree", shape, err)) ||
            (S_draws[i] && (rc = sd_params_parse(&par, vt, "draw", S_draws[i], err))) ||
            (rc = sd_exact_tree_accept(c, 1, prev, &par, sd_tree_kind_find(vt->name), &ex, NULL, err)) ||
            (rc = sd_fig_first_iteration(vt, c, &par, prev, seed + 10 * n + i, trials, 0, &res, err)))
            break;
        mc[i] = sd_fig_est_welford(&res.accepted);
        sd_sim_result_free(&res);
        fprintf(f, " %.10g", ex);
    }
    sd_lp_opts lo;
    sd_lp_opts_default(&lo);
    const sd_verifier_type *parser = sd_fig_verifier("tree-rrs", err);
    double opt[2][2]; /* [draw][ot] */
    for (int draw = SD_DRAW_IID; draw <= SD_DRAW_WOR && !rc; draw++)
        for (int ot = 0; ot < 2 && !rc; ot++) {
            sd_params par;
            sd_params_defaults(&par, parser);
            sd_lp_result r;
            r.optimum = NAN;
            if ((rc = sd_params_parse(&par, parser, "tree", shape, err)) || n > lp_max) {
                opt[draw][ot] = NAN;
                continue;
            }
            if (draw == SD_DRAW_WOR && sd_params_tree_nodes(&par) == par.tree_depth) {
                opt[draw][ot] = opt[SD_DRAW_IID][ot]; /* a chain: one child, iid = wor, the same LP */
                continue;
            }
            rc = ot ? sd_lp_tree_ot(c, 1, prev, &par, draw, &lo, &r, err)
                    : sd_lp_tree_valid(c, 1, prev, &par, draw, &lo, &r, err);
            if (!rc && !r.optimal)
                rc = sd_error_set(err, SD_ESOLVER, "%s --tree %s: %s", ot ? "tree-ot" : "tree-valid", shape,
                                  r.status);
            opt[draw][ot] = r.optimum;
        }
    for (int draw = 0; draw < 2 && !rc; draw++)
        fprintf(f, " %.10g %.10g", opt[draw][0], opt[draw][1]);
    for (size_t i = 0; i < S_NALGO && !rc; i++)
        sd_fig_put_est(f, mc[i]);
    fputc('\n', f);
    return rc;
}

static int S_model(FILE *f, const char *name, const sd_chain *c, size_t prev, size_t lp_max_deep,
                   uint64_t seed, uint64_t trials, sd_error *err)
{
    int rc = SD_OK;
    for (size_t fam = 0; fam < 3 && !rc; fam++) {
        char block[32];
        snprintf(block, sizeof block, "%s-%s", name, S_family[fam]);
        sd_fig_block(f, block, "nodes exact_tree-rrs exact_tree-rrs-wor exact_tree-topk exact_traversal exact_univer-iid "
                               "tree-valid_iid tree-ot_iid tree-valid_wor tree-ot_wor "
                               "then mean ci95_lo ci95_hi of each verifier (Monte-Carlo)");
        for (size_t n = 1; n <= S_NMAX && !rc; n++)
            rc = S_line(f, c, prev, S_shapes[fam][n - 1], n, fam == 1 ? S_NMAX : lp_max_deep,
                        seed + 1000 * fam, trials, err);
    }
    return rc;
}

static int S_trees(FILE *f, const sd_figure_opts *o, sd_error *err)
{
    uint64_t trials = sd_fig_trials(o, 20000), seed = o->seed + 9000;
    sd_fig_head(f, "simdec-trees", "expected accepted path length of one iteration vs tree size: tree "
                "verifiers (exact and Monte-Carlo), the best valid verifier (tree-valid) and full information "
                "(tree-ot)");
    fprintf(f, "# shapes: deep 1,...,1; wide n; mixed 1 / 2 / 1,2 / 2,1 / 1,2,1 / 2,2\n");
    fprintf(f, "# Monte-Carlo: %llu first iterations per point, seeds %llu + 1000 family + 10 nodes + verifier"
            " (+ 100000 on the Bernoulli pair)\n", (unsigned long long)trials, (unsigned long long)seed);
    /* simdec's default chain (`gen --rng dirichlet`), on which this
     * figure's caption was checked; the Yin figures use the paper's own. */
    sd_gen_params gp;
    sd_gen_defaults(&gp);
    gp.T = S_NMAX + 1;
    sd_chain *c = sd_chain_generate(&gp, err);
    if (!c)
        return err->code;
    fprintf(f, "# model: simdec gen --V %zu --T %zu --model-seed %lu --alpha %g --mix %g\n", gp.V, gp.T, gp.seed,
            gp.alpha, gp.mix);
    fprintf(f, "# chain context: position 1 after x_0 = 1\n");
    int rc = S_model(f, "chain", c, 1, 3, seed, trials, err);
    sd_chain_free(c);
    double p[2], q[2];
    sd_fig_ber(0.25, p);
    sd_fig_ber(0.6, q);
    fprintf(f, "# Bernoulli pair: p = Ber(0.25), q = Ber(0.6), tokens i.i.d.\n");
    if (!rc && !(c = sd_chain_from_pq(p, q, 2, S_NMAX + 1, err)))
        rc = err->code;
    if (!rc)
        rc = S_model(f, "ber", c, 0, S_NMAX, seed + 100000, trials, err);
    sd_chain_free(c);
    return sd_fig_done(f, rc, err);
}

const sd_figure sd_fig_simdec_trees = {
    "simdec-trees", "simdec (token trees)",
    "Expected accepted path length against tree size for every tree verifier, the best valid tree verifier "
    "(LP) and the full-information bound, deep vs wide vs mixed trees, on the 7-token chain and SpecTr's "
    "Bernoulli pair: traversal beats recursive rejection sampling but stays below the optimum on trees; "
    "univer's prefix-scaled k-Seq plan (i.i.d. children) beats traversal with i.i.d. children.",
    S_trees,
};
