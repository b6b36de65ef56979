/* test_tree_laws.c — the iteration laws of the tree verifiers
 * (sd_tree_verifier_law, sims/verifiers/sd_tree.h) and of the broken-block-kernel
 * control (the law of its kernel, sims/controls/broken_block_kernel.c): the lossless
 * tree verifiers' exact law of the first tokens is the target's, the
 * controls' is not; the DP over the laws gives the tree enumerator's
 * whole-generation values; and each control's Monte-Carlo law (what `run`
 * executes, kernel included) is its exact law cell by cell, while the
 * lossless twin's law is not, so the law is really the control's.
 *
 * Seeds are fixed.  Cells are compared within 4 standard errors of the
 * exact cell probability P, se = sqrt(P (1 - P) / N): a correct law fails
 * a cell with probability 6e-5, at most 64 cells per table here. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../sims/exact/sd_exact_gen.h"
#include "../sims/engine/sd_params.h"
#include "../sims/engine/sd_sim.h"
#include "../sims/verifiers/sd_tree.h"
#include "../src/sd_exact.h"
#include "test_util.h"
#include "tu_rules.h"

/* Every tree verifier with each drafting rule it supports, and the two
 * tree controls. */
static const struct {
    const char *algo, *draw;
} S_rules[] = {
    {"tree-rrs", "iid"},  {"tree-rrs-wor", "wor"}, {"tree-topk", "topk"},
    {"traversal", "wor"}, {"traversal", "iid"},    {"broken-tree-residual", "iid"},
    {"broken-tree-wor", "wor"},
};
#define S_NRULES (sizeof S_rules / sizeof *S_rules)

/* Shapes from one node to five, chains and bushes, deeper than the horizon
 * of the chains below (T = 4) for the last one. */
static const char *const S_shapes[] = {"1", "3", "2,2", "3,1", "1,2,1", "1,1,1,1,1"};
#define S_NSHAPES (sizeof S_shapes / sizeof *S_shapes)

static const sd_verifier_type *S_vt(const char *name)
{
    const sd_verifier_type *vt = sd_verifier_find(name);
    cr_assert_not_null(vt, "%s", name);
    return vt;
}

/* The largest number of children of a node. */
static size_t S_widest(const sd_params *par)
{
    size_t b = 0;
    for (size_t l = 0; l < par->tree_depth; l++)
        b = par->tree[l] > b ? par->tree[l] : b;
    return b;
}

/* The chains: zeros in p and q (a token the target forbids is drafted, one
 * it wants never is), and a plain generated one. */
static void S_chains(sd_chain *cs[2])
{
    cs[0] = tu_zero_chain(3, 4, 2);
    cs[1] = tu_chain(4, 4, 5);
    cr_assert(cs[0] && cs[1]);
}

/* check --exact: the law of x_1..x_3 by the DP over the iteration laws.
 * Lossless verifiers: the target's law to 1e-12 (the same sums in another
 * order) on both chains; controls: a bias (> 1e-9) on one of them at least,
 * for every shape where a control can differ (a broken residual needs a
 * node with two children; stale draws, two children drafted without
 * replacement). */
Test(tree_laws, exact_law_is_the_target_law_for_every_lossless_tree_verifier, .timeout = 120)
{
    sd_chain *cs[2];
    S_chains(cs);
    for (size_t s = 0; s < S_NSHAPES; s++)
        for (size_t r = 0; r < S_NRULES; r++) {
            const sd_verifier_type *vt = S_vt(S_rules[r].algo);
            sd_params par = tu_rule_par(vt, S_shapes[s], S_rules[r].draw);
            double tv[2];
            sd_error err;
            for (int j = 0; j < 2; j++)
                cr_assert_eq(sd_exact_gen_prefix_tv(vt, cs[j], &par, 3, 1u << 20, &tv[j], &err), SD_OK,
                             "%s --tree %s: %s", vt->name, S_shapes[s], err.msg);
            if (!(vt->flags & SD_VERIFIER_CONTROL))
                cr_expect(tv[0] <= 1e-12 && tv[1] <= 1e-12, "%s --tree %s --draw %s: exact TV %.3g, %.3g",
                          vt->name, S_shapes[s], S_rules[r].draw, tv[0], tv[1]);
            else if (S_widest(&par) >= 2)
                cr_expect(tv[0] > 1e-9 || tv[1] > 1e-9, "%s --tree %s: exact TV %.3g, %.3g, expected a bias",
                          vt->name, S_shapes[s], tv[0], tv[1]);
        }
    sd_chain_free(cs[0]);
    sd_chain_free(cs[1]);
}

/* The generic DP over the iteration laws (sd_exact_gen) against the tree
 * enumerator's own forward recursion (the exact slot): the same
 * enumeration summed in another order, so 1e-12. */
Test(tree_laws, dp_over_the_laws_equals_the_exact_slot, .timeout = 120)
{
    sd_chain *cs[2];
    S_chains(cs);
    for (size_t j = 0; j < 2; j++) {
        sd_model m = sd_model_of_chain(cs[j]);
        for (size_t s = 0; s < S_NSHAPES; s++)
            for (size_t r = 0; r < S_NRULES; r++) {
                const sd_verifier_type *vt = S_vt(S_rules[r].algo);
                sd_params par = tu_rule_par(vt, S_shapes[s], S_rules[r].draw);
                sd_exact_values ev;
                double rej, calls;
                sd_error err;
                cr_assert_eq(vt->exact(&m, &par, &ev, &err), SD_OK, "%s", err.msg);
                cr_assert_eq(sd_exact_gen(vt, cs[j], &par, &rej, &calls, &err), SD_OK, "%s", err.msg);
                cr_expect(fabs(rej - ev.rejections) < 1e-12 && fabs(calls - ev.target_calls) < 1e-12,
                          "%s --tree %s --draw %s, chain %zu: DP %.17g, %.17g; exact slot %.17g, %.17g",
                          vt->name, S_shapes[s], S_rules[r].draw, j, rej, calls, ev.rejections, ev.target_calls);
            }
    }
    sd_chain_free(cs[0]);
    sd_chain_free(cs[1]);
}

/* The per-depth token law the laws give (sd_iter_law.emit, used by
 * sd_exact_gen_marginals) against the marginals of the law of the whole
 * output (L = T, every token kept): equal to 1e-12 for every verifier,
 * controls included, and the target's marginals for the lossless ones. */
Test(tree_laws, token_marginals_agree_with_the_prefix_law)
{
    sd_chain *c = tu_zero_chain(3, 4, 2);
    const size_t V = c->V, T = c->T, cells = 81;
    double joint[81], marg[12], from_joint[12], target[15]; /* target: x_0..x_T */
    sd_exact_target_marginals(c, target);
    for (size_t s = 0; s < S_NSHAPES; s++)
        for (size_t r = 0; r < S_NRULES; r++) {
            const sd_verifier_type *vt = S_vt(S_rules[r].algo);
            sd_params par = tu_rule_par(vt, S_shapes[s], S_rules[r].draw);
            sd_error err;
            cr_assert_eq(sd_exact_gen_marginals(vt, c, &par, marg, &err), SD_OK, "%s", err.msg);
            cr_assert_eq(sd_exact_gen_prefix_law(vt, c, &par, T, cells, joint, &err), SD_OK, "%s", err.msg);
            memset(from_joint, 0, sizeof from_joint);
            for (size_t i = 0; i < cells; i++)
                for (size_t t = T, k = i; t > 0; t--, k /= V)
                    from_joint[(t - 1) * V + k % V] += joint[i];
            int lossless = !(vt->flags & SD_VERIFIER_CONTROL);
            for (size_t i = 0; i < T * V; i++) {
                cr_expect(fabs(marg[i] - from_joint[i]) < 1e-12, "%s --tree %s: P(x_%zu = %zu) %.17g vs %.17g",
                          vt->name, S_shapes[s], i / V + 1, i % V, marg[i], from_joint[i]);
                if (lossless)
                    cr_expect(fabs(marg[i] - target[V + i]) < 1e-12, "%s --tree %s: P(x_%zu = %zu) %.17g, target %.17g",
                              vt->name, S_shapes[s], i / V + 1, i % V, marg[i], target[V + i]);
            }
        }
    sd_chain_free(c);
}

/* The largest |observed - N P| / sqrt(N P (1 - P)) over the cells of the
 * law `law` (a probability-0 cell with an observation counts as infinite). */
static double S_worst_z(const double *obs, const double *law, size_t cells, double N)
{
    double worst = 0.0;
    for (size_t i = 0; i < cells; i++) {
        double e = N * law[i], sd = sqrt(N * law[i] * (1.0 - law[i]));
        double z = sd > 0.0 ? fabs(obs[i] - e) / sd : (obs[i] > 0.0 ? INFINITY : 0.0);
        worst = z > worst ? z : worst;
    }
    return worst;
}

/* A control's Monte-Carlo law of x_1..x_L (what run executes: `kernel`
 * must be what ran) against its exact law, cell by cell within 4 se; and
 * against the law of `twin` (the lossless verifier it breaks), which must
 * be more than 4 se off in some cell: the comparison has the power to
 * tell the control's law from the correct one. */
static void S_mc_is_the_law(const char *algo, const char *twin, const char *kernel, const sd_chain *c,
                            const sd_params *par, size_t L, uint64_t trials)
{
    const sd_verifier_type *vt = S_vt(algo), *tw = S_vt(twin);
    size_t cells = sd_sim_cells(c->V, L, 1u << 20);
    double *law = malloc(cells * sizeof *law), *other = malloc(cells * sizeof *other);
    cr_assert(law && other);
    sd_error err;
    cr_assert_eq(sd_exact_gen_prefix_law(vt, c, par, L, cells, law, &err), SD_OK, "%s", err.msg);
    cr_assert_eq(sd_exact_gen_prefix_law(tw, c, par, L, cells, other, &err), SD_OK, "%s", err.msg);
    sd_model m = sd_model_of_chain(c);
    sd_sim_job job = {vt, &m, par};
    sd_sim_opts o = {.seed = 3, .trials = trials, .stop = {.L = L}, .want_cells = 1};
    sd_sim_result res;
    cr_assert_eq(sd_sim_run_job(&job, &o, &res, &err), SD_OK, "%s", err.msg);
    cr_assert_str_eq(res.kernel, kernel, "%s ran %s", algo, res.kernel);
    double z = S_worst_z(res.cells, law, cells, (double)trials);
    double zt = S_worst_z(res.cells, other, cells, (double)trials);
    cr_expect(z < 4.0, "%s: Monte-Carlo cell %.2f se from its exact law", algo, z);
    cr_expect(zt > 4.0, "%s: Monte-Carlo within %.2f se of %s's law: no power", algo, zt, twin);
    sd_sim_result_free(&res);
    free(law);
    free(other);
}

/* broken-block-kernel: the kernel (block-sorted-broken) against the law of
 * the kernel, and against block's law (eq. 4's residual).  V = 3, T = 3,
 * model-seed 3, where the exact bias is 0.024 (so 400 000 trials tell the
 * two laws apart), and a chain with zeros in p and q. */
Test(tree_laws, broken_block_kernel_monte_carlo_is_its_exact_law)
{
    sd_chain *c = tu_chain(3, 3, 3), *z = tu_zero_chain(4, 3, 4);
    cr_assert(c && z);
    sd_params par;
    sd_params_defaults(&par, S_vt("broken-block-kernel"));
    S_mc_is_the_law("broken-block-kernel", "block", "block-sorted-broken", c, &par, 3, 400000);
    S_mc_is_the_law("broken-block-kernel", "block", "block-sorted-broken", z, &par, 3, 400000);
    sd_chain_free(c);
    sd_chain_free(z);
}

/* The tree controls (generic step) against their laws and against the law
 * of the verifier they break. */
Test(tree_laws, tree_controls_monte_carlo_is_their_exact_law, .timeout = 120)
{
    sd_chain *c = tu_chain(4, 3, 5);
    cr_assert(c);
    sd_params par = tu_rule_par(S_vt("broken-tree-residual"), "2,2", "iid");
    S_mc_is_the_law("broken-tree-residual", "tree-rrs", "generic", c, &par, 3, 200000);
    par = tu_rule_par(S_vt("broken-tree-wor"), "3,2", "wor");
    S_mc_is_the_law("broken-tree-wor", "tree-rrs-wor", "generic", c, &par, 3, 200000);
    sd_chain_free(c);
}
