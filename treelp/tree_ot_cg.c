/* tree_ot_cg.c — tree-ot without enumerating the drafted trees: column
 * generation over stop rules (Dantzig & Wolfe 1960) on its aggregated form.
 *
 * tree-ot's network (treelp/tree_ot.c) sends P(S) from each path set S to a
 * node u ∈ S ∪ {root} (reward |u|) and on down the target prefix trie to
 * the leaves o ∈ V^D (demand q(o)).  Aggregate over S: m(u) = Σ_S f(S, u),
 * the stop mass at u, and X(z) = Σ_{v ⪰ z} m(v), the mass stopping in z's
 * subtree.  Mass entering the trie at u can only reach leaves below u; on
 * the laminar family of the trie's subtrees the supplies m fit under the
 * demands q iff X(z) <= q(z) for every prefix z (Hall 1935: the
 * neighbourhood of a set of stop nodes is a disjoint union of subtrees, and
 * Σ m = Σ q = 1).  The per-set flows f(S, ·) are any law of a stop node
 * u ∈ S ∪ root given S, so m ranges over the stop marginals of the drafted
 * tree T, a convex set whose extreme points in direction c are the rules
 * "stop at the node of largest c_u" (the selection polytope of a random
 * set is a polymatroid's base polytope, optimised greedily: Edmonds 1970).
 * So
 *   tree-ot = max Σ_u |u| m(u)  over stop marginals m,
 *             s.t. X(z) <= q(z) for every z of length 1..D with q(z) > 0.
 * tree-valid's LP has the same stop marginals with the rows X(z)/q(z) <=
 * X(parent)/q(parent) (treelp/tree_lagrange.c, the comment before S_dw),
 * which imply these (X(root) = q(root) = 1): tree-valid <= tree-ot.
 *
 * The master: maximise Σ_j w_j val_j over w >= 0, Σ w_j = 1, Σ_j w_j X_j(z)
 * <= q(z) (duals μ_z >= 0), over the columns found so far (the rule "stop
 * at the root" makes it feasible).  With λ_u = Σ_{root ≠ z ⪯ u} μ_z the
 * best column is the rule stopping at the node of largest |u| - λ_u,
 * priced by sd_lp_tree_lagrange_price (the expected maximum over the
 * drafted tree by its rank recursion), and for every μ >= 0
 *   L(μ) = E_T[max_{u ∈ T ∪ root} (|u| - λ_u)] + Σ_z μ_z q(z) >= tree-ot
 * (weak duality: the rows' slack times μ is >= 0): the certified upper
 * bound is the least L evaluated.  The certified lower bound is the
 * master's mixture made feasible by stopping earlier: top-down, a subtree z
 * with X(z) > q(z) has its stop masses scaled by q(z)/X(z) and the excess
 * moved to parent(z) (an ancestor of a node of T is in T, so this is a stop
 * rule; X above z is unchanged, below z it only shrinks), and the value of
 * a feasible m is a coupling's (its flow decomposes into paths).  The
 * master's duals are held in a box around the centre (S_box, boxstep),
 * which moves to a better point (a serious step) and widens when nothing
 * prices out inside it; the pricing points are the master's duals smoothed
 * towards the centre (Wentges 1997), several weights per master solve; a
 * short subgradient start (S_warm) for the upper bound. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <coin/Clp_C_Interface.h>

#include "../sims/engine/sd_params.h"
#include "../lp/sd_lp.h"
#include "../lp/sd_lp_clp.h"
#include "sd_treelp.h"

/* CLP's tolerances in the master (the rows' error is repaired, but a loose
 * master stalls the gap above 1e-9). */
#define S_CLP_TOL 1e-11
#define S_GAP 1e-9
#define S_NALPHA 6
/* The box on the master's duals: first half-width, and the width past
 * which it is dropped.  2,2,2 at V = 8 after 10 s: gap 0.064 with 0.05,
 * 0.013 with 0.15, 0.027 with 0.5, 0.084 with 2. */
#define S_DELTA0 0.15
#define S_DELTA_MAX 1e3
/* The columns' memory: S_PRUNE(N) columns of N doubles, here and in
 * CLP's model (8 bytes and an index each): refused past S_MAX_BYTES. */
#define S_MAX_BYTES 1e9
/* The warm start (S_warm): steps, share of the time, patience. */
#define S_WARM 400
#define S_WARM_SHARE 0.2
#define S_WARM_WAIT 20
/* Past S_PRUNE(rows) columns the master keeps the S_PRUNE(rows)/2 of least
 * reduced cost (and every one in use): the master's simplex, not the
 * pricing, takes the time (2,2,2 at V = 8: 0.1 s and 500 iterations a
 * solve at 400 columns, against 4 ms for a round of pricing). */
#define S_PRUNE(rows) (2 * (size_t)(rows) + 100)

typedef struct S_cg {
    sd_lp_tree_lagrange *g;
    size_t V, D, N;
    size_t noff[SD_TREE_MAX_DEPTH + 2];
    double **Q;
    /* rows 1..nr-1 (row 0 is the convexity row): a(z) X(z) + a(parent)
     * X(parent) <= rhs with a(z) = 1, node rz, parent rp, a(parent) rc */
    int nr;
    size_t *rz, *rp;
    double *rc, *rhs;
    Clp_Simplex *clp;
    int nart;    /* the box's columns, first in CLP's model: 2 per row r >= 1 */
    size_t ncol, cap;
    double *m;   /* [cap][N] the columns' stop marginals */
    double *val; /* [cap] */
    double *X, *lam, *mu, *mub, *mus, *mix, *S, *P;
} S_cg;

static double S_value(const S_cg *x, const double *m)
{
    double v = 0.0;
    for (size_t l = 1; l <= x->D; l++)
        for (size_t i = x->noff[l]; i < x->noff[l + 1]; i++)
            v += (double)l * m[i];
    return v;
}

static void S_free(S_cg *x)
{
    if (x->clp)
        Clp_deleteModel(x->clp);
    sd_lp_tree_lagrange_free(x->g);
    free(x->Q);
    free(x->rz);
    free(x->rp);
    free(x->rc);
    free(x->rhs);
    free(x->m);
    free(x->val);
    free(x->X);
    free(x->lam);
    free(x->mu);
    free(x->mub);
    free(x->mus);
    free(x->mix);
    free(x->S);
    free(x->P);
}

static int S_rows(S_cg *x, int kind)
{
    size_t N = x->N, V = x->V;
    x->rz = malloc(N * sizeof *x->rz);
    x->rp = malloc(N * sizeof *x->rp);
    x->rc = malloc(N * sizeof *x->rc);
    x->rhs = malloc(N * sizeof *x->rhs);
    if (!x->rz || !x->rp || !x->rc || !x->rhs)
        return SD_ENOMEM;
    int nr = 1;
    for (size_t l = 1; l <= x->D; l++) {
        if (kind == SD_LP_TREE_OT_ROWS_NO_LEAVES && l == x->D)
            break;
        for (size_t u = 0; u < x->noff[l + 1] - x->noff[l]; u++) {
            double qz = x->Q[l][u];
            if (!(qz > 0.0))
                continue;
            x->rz[nr] = x->noff[l] + u;
            x->rp[nr] = l > 1 ? x->noff[l - 1] + u / V : 0;
            x->rc[nr] = 0.0;
            x->rhs[nr] = qz;
            if (kind == SD_LP_TREE_OT_ROWS_VALID && l > 1) {
                x->rc[nr] = -qz / x->Q[l - 1][u / V];
                x->rhs[nr] = 0.0;
            }
            nr++;
        }
    }
    x->nr = nr;
    return SD_OK;
}

/* The row activity of stop marginals whose subtree sums are X. */
static double S_act(const S_cg *x, int r, const double *X)
{
    return X[x->rz[r]] + (x->rc[r] != 0.0 ? x->rc[r] * X[x->rp[r]] : 0.0);
}

/* Appends stop marginals m as a column of the master. */
static int S_column(S_cg *x, const double *m)
{
    size_t N = x->N, nr = (size_t)x->nr;
    if (x->ncol == x->cap) {
        size_t cap = x->cap ? 2 * x->cap : 256;
        double *mm = realloc(x->m, cap * N * sizeof *mm);
        if (!mm)
            return SD_ENOMEM;
        x->m = mm;
        double *vv = realloc(x->val, cap * sizeof *vv);
        if (!vv)
            return SD_ENOMEM;
        x->val = vv;
        x->cap = cap;
    }
    memcpy(x->m + x->ncol * N, m, N * sizeof *m);
    x->m[x->ncol * N] = fmax(0.0, x->m[x->ncol * N]);
    x->val[x->ncol] = S_value(x, m);
    sd_lp_tree_lagrange_subtree(x->g, m, x->X);
    int *ri = malloc(nr * sizeof *ri);
    double *el = malloc(nr * sizeof *el);
    if (!ri || !el) {
        free(ri);
        free(el);
        return SD_ENOMEM;
    }
    CoinBigIndex st[2] = {0, 0};
    ri[st[1]] = 0;
    el[st[1]++] = 1.0;
    for (int r = 1; r < x->nr; r++) {
        double a = S_act(x, r, x->X);
        if (a != 0.0) {
            ri[st[1]] = r;
            el[st[1]++] = a;
        }
    }
    double lo = 0.0, up = DBL_MAX, ob = -x->val[x->ncol];
    Clp_addColumns(x->clp, 1, &lo, &up, &ob, st, ri, el);
    x->ncol++;
    free(ri);
    free(el);
    return SD_OK;
}

/* L(μ) for μ >= 0 (rows 1..nr-1): the pricing at λ_u = Σ_{v ⪯ u} κ(v),
 * κ(v) = Σ_r μ_r a_r(v), plus Σ_r μ_r rhs_r; the maximiser into x->P. */
static double S_bound(S_cg *x, const double *mu)
{
    size_t V = x->V;
    double *kap = x->X, c = 0.0;
    memset(kap, 0, x->N * sizeof *kap);
    for (int r = 1; r < x->nr; r++) {
        kap[x->rz[r]] += mu[r];
        if (x->rc[r] != 0.0)
            kap[x->rp[r]] += mu[r] * x->rc[r];
        c += mu[r] * x->rhs[r];
    }
    x->lam[0] = 0.0;
    for (size_t l = 1; l <= x->D; l++)
        for (size_t u = 0; u < x->noff[l + 1] - x->noff[l]; u++)
            x->lam[x->noff[l] + u] = kap[x->noff[l] + u] + (l > 1 ? x->lam[x->noff[l - 1] + u / V] : 0.0);
    return sd_lp_tree_lagrange_price(x->g, x->lam, x->P) + c;
}

/* Stop marginals x->mix made a point of tree-ot's rows by stopping
 * earlier (the comment at the top), in place; its value, and the largest
 * row violation before the repair into *viol. */
static double S_repair(S_cg *x, double *viol)
{
    size_t N = x->N, V = x->V;
    sd_lp_tree_lagrange_subtree(x->g, x->mix, x->X);
    *viol = 0.0;
    x->S[0] = 1.0;
    for (size_t l = 1; l <= x->D; l++)
        for (size_t u = 0; u < x->noff[l + 1] - x->noff[l]; u++) {
            size_t i = x->noff[l] + u;
            double sp = x->S[l > 1 ? x->noff[l - 1] + u / V : 0], Xc = sp * x->X[i], qz = x->Q[l][u];
            *viol = fmax(*viol, x->X[i] - qz);
            /* scaled a hair below q(z), so rounding keeps X(z) <= q(z) */
            x->S[i] = Xc > qz ? sp * (qz / Xc) * (1.0 - 4.0 * DBL_EPSILON) : sp;
        }
    double rest = 1.0;
    for (size_t i = 1; i < N; i++) {
        x->mix[i] *= x->S[i];
        rest -= x->mix[i];
    }
    x->mix[0] = rest;
    return S_value(x, x->mix);
}

/* The master's mixture, repaired (S_repair). */
static double S_primal(S_cg *x, double *viol)
{
    size_t N = x->N;
    const double *w = Clp_getColSolution(x->clp) + x->nart;
    double tot = 0.0;
    for (size_t j = 0; j < x->ncol; j++)
        tot += w[j] > 0.0 ? w[j] : 0.0;
    memset(x->mix, 0, N * sizeof *x->mix);
    for (size_t j = 0; j < x->ncol; j++)
        if (w[j] > 0.0)
            for (size_t i = 0; i < N; i++)
                x->mix[i] += (w[j] / tot) * x->m[j * N + i];
    return S_repair(x, viol);
}

/* The warm start: projected subgradient steps on L from μ = 0 (Polyak's
 * step towards the best repaired maximiser's value, halved after
 * S_WARM_WAIT steps without a decrease), at most S_WARM steps and a share
 * S_WARM_SHARE of the time, for the upper bound only (*best; the best
 * repaired maximiser's value into *low).  At V = 8 --tree 2,2,2 it gives
 * 2.3824 in 0.3 s, where the master's boxed duals need about 10 s; as the
 * box's centre, or with its maximisers as columns, it slowed the master
 * (no serious step in 10 s; 400 more dense columns). */
static int S_warm(S_cg *x, double t0, double seconds, double *best, double *low, size_t *pricings)
{
    size_t N = x->N;
    double theta = 1.0, *mu = x->mus;
    size_t wait = 0;
    memset(mu, 0, (size_t)x->nr * sizeof *mu);
    for (size_t k = 0; k < S_WARM && sd_lp_now() - t0 < S_WARM_SHARE * seconds; k++) {
        double L = S_bound(x, mu), viol;
        (*pricings)++;
        memcpy(x->mix, x->P, N * sizeof *x->mix);
        double v = S_repair(x, &viol);
        if (v > *low)
            *low = v;
        if (L < *best) {
            *best = L;
            wait = 0;
        } else if (++wait >= S_WARM_WAIT) {
            theta /= 2.0;
            wait = 0;
        }
        sd_lp_tree_lagrange_subtree(x->g, x->P, x->X);
        double g2 = 0.0;
        for (int r = 1; r < x->nr; r++) {
            double g = x->rhs[r] - S_act(x, r, x->X);
            x->mix[r] = g; /* the subgradient, in the scratch of the repair */
            g2 += g * g;
        }
        if (!(g2 > 0.0))
            break;
        double t = theta * (L - *low) / g2;
        for (int r = 1; r < x->nr; r++)
            mu[r] = fmax(0.0, mu[r] - t * x->mix[r]);
    }
    return SD_OK;
}

static int S_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Drops the columns of largest reduced cost (CLP minimises) down to keep,
 * never the root's (column 0) nor one in use. */
static void S_prune(S_cg *x, size_t keep)
{
    size_t n = x->ncol, N = x->N;
    const double *dj = Clp_getReducedCost(x->clp) + x->nart, *w = Clp_getColSolution(x->clp) + x->nart;
    double *srt = malloc(n * sizeof *srt);
    int *del = malloc(n * sizeof *del);
    if (!srt || !del) {
        free(srt);
        free(del);
        return;
    }
    memcpy(srt, dj, n * sizeof *srt);
    qsort(srt, n, sizeof *srt, S_cmp);
    double thr = srt[keep < n ? keep : n - 1];
    int nd = 0;
    size_t out = 0;
    for (size_t j = 0; j < n; j++) {
        if (j > 0 && !(w[j] > 0.0) && dj[j] >= thr) {
            del[nd++] = x->nart + (int)j;
            continue;
        }
        if (out != j) {
            memmove(x->m + out * N, x->m + j * N, N * sizeof *x->m);
            x->val[out] = x->val[j];
        }
        out++;
    }
    if (nd)
        Clp_deleteColumns(x->clp, nd, del);
    x->ncol = out;
    free(srt);
    free(del);
}

/* The box on the master's duals around the best point cen (sd_lp_clp_box). */
static void S_box(S_cg *x, const double *cen, double delta)
{
    int nc = Clp_numberColumns(x->clp);
    double *ob = malloc((size_t)nc * sizeof *ob), *up = malloc((size_t)nc * sizeof *up);
    if (ob && up)
        sd_lp_clp_box(x->clp, x->nr, cen, delta, ob, up);
    free(ob);
    free(up);
}

int sd_lp_tree_ot_cg(const sd_chain *c, size_t t, size_t a, const sd_params *par, int draw, double seconds,
                     int rows, sd_lp_tree_ot_cg_info *info, sd_error *err)
{
    static const double alphas[S_NALPHA] = {0.0, 0.5, 0.8, 0.3, 0.9, 0.65};
    double t0 = sd_lp_now();
    memset(info, 0, sizeof *info);
    info->lower = -INFINITY;
    info->upper = INFINITY;
    info->method = "column generation (CLP)";
    int rc = sd_lp_tree_context("tree-ot", c, t, a, par, err);
    if (rc)
        return rc;
    if (rows < SD_LP_TREE_OT_ROWS_OT || rows > SD_LP_TREE_OT_ROWS_NO_LEAVES)
        return sd_error_set(err, SD_EUSAGE, "tree-ot's column generation: unknown rows %d", rows);
    /* the columns kept (dense, N doubles each) and CLP's copy of them,
     * refused before anything is allocated */
    double Nd = 0.0, lv = 1.0;
    for (size_t l = 0; l <= par->tree_depth; l++, lv *= (double)c->V)
        Nd += lv;
    double bytes = 20.0 * Nd * (2.0 * Nd + 100.0);
    if (bytes > S_MAX_BYTES)
        return sd_error_set(err, SD_ETOOBIG, "tree-ot's column generation would keep %.3g bytes of columns "
                            "(%.0f prefixes); the limit is %.3g", bytes, Nd, S_MAX_BYTES);
    S_cg x = {0};
    x.V = c->V;
    x.D = par->tree_depth;
    if ((rc = sd_lp_tree_lagrange_new(c, t, a, par, draw, &x.g, err)))
        return rc;
    x.N = sd_lp_tree_lagrange_dim(x.g);
    x.noff[0] = 0;
    for (size_t l = 0; l <= x.D; l++)
        x.noff[l + 1] = x.noff[l] + sd_lp_pow(x.V, l);
    if ((rc = sd_lp_prefix_laws(c, t, a, x.D, 1, &x.Q, err))) {
        S_free(&x);
        return rc;
    }
    size_t N = x.N;
    x.lam = calloc(N, sizeof *x.lam);
    x.X = calloc(N, sizeof *x.X);
    x.mix = calloc(N, sizeof *x.mix);
    x.S = calloc(N, sizeof *x.S);
    x.P = calloc(N, sizeof *x.P);
    x.mu = calloc(N + 1, sizeof *x.mu);
    x.mub = calloc(N + 1, sizeof *x.mub);
    x.mus = calloc(N + 1, sizeof *x.mus);
    x.clp = Clp_newModel();
    if (!x.lam || !x.X || !x.mix || !x.S || !x.P || !x.mu || !x.mub || !x.mus || !x.clp || S_rows(&x, rows)) {
        S_free(&x);
        return sd_error_set(err, SD_ENOMEM, "out of memory for tree-ot's column generation");
    }
    /* the master's rows: Σ w = 1, then a(z) X(z) + a(parent) X(parent) <= rhs */
    double *rl = malloc((size_t)x.nr * sizeof *rl), *ru = malloc((size_t)x.nr * sizeof *ru);
    if (!rl || !ru) {
        free(rl);
        free(ru);
        S_free(&x);
        return sd_error_set(err, SD_ENOMEM, "out of memory for tree-ot's column generation");
    }
    rl[0] = ru[0] = 1.0;
    for (int r = 1; r < x.nr; r++) {
        rl[r] = -DBL_MAX;
        ru[r] = x.rhs[r];
    }
    CoinBigIndex st0 = 0;
    Clp_setLogLevel(x.clp, 0);
    Clp_loadProblem(x.clp, 0, x.nr, &st0, NULL, NULL, NULL, NULL, NULL, rl, ru);
    free(rl);
    free(ru);
    /* no scaling: its factors are not renewed for columns added later */
    Clp_scaling(x.clp, 0);
    Clp_setPrimalTolerance(x.clp, S_CLP_TOL);
    Clp_setDualTolerance(x.clp, S_CLP_TOL);
    for (int r = 1; r < x.nr; r++)
        for (int sgn = -1; sgn <= 1; sgn += 2) {
            double lo = 0.0, up = 0.0, obj = 0.0, v = sgn;
            CoinBigIndex st[2] = {0, 1};
            Clp_addColumns(x.clp, 1, &lo, &up, &obj, st, &r, &v);
        }
    x.nart = 2 * (x.nr - 1);
    /* the first columns: stop at the root; the deepest node (λ = 0) */
    memset(x.mix, 0, N * sizeof *x.mix);
    x.mix[0] = 1.0;
    /* best: the least L evaluated (the bound); bestc: L at the box's centre */
    double best = S_bound(&x, x.mub), low = -INFINITY, bestc = best;
    info->pricings = 1;
    if ((rc = S_column(&x, x.mix)) || (rc = S_column(&x, x.P)) ||
        (rc = S_warm(&x, t0, seconds, &best, &low, &info->pricings))) {
        S_free(&x);
        return sd_error_set(err, SD_ENOMEM, "out of memory for tree-ot's column generation");
    }
    double delta = S_DELTA0;
    int rebox = 1;
    while (sd_lp_now() - t0 < seconds) {
        if (x.ncol > S_PRUNE(x.nr))
            S_prune(&x, S_PRUNE(x.nr) / 2);
        if (rebox) {
            S_box(&x, x.mub, delta);
            rebox = 0;
        }
        Clp_setMaximumSeconds(x.clp, fmax(0.01, seconds - (sd_lp_now() - t0)));
        Clp_primal(x.clp, 0);
        int st = Clp_status(x.clp);
        if (st == 0 && !sd_lp_clp_prices_ok(x.clp, x.nr)) {
            Clp_initialSolve(x.clp);
            st = Clp_status(x.clp);
        }
        if (st == 3)
            break; /* CLP's time limit */
        if (st != 0) {
            info->master_failed = 1;
            break;
        }
        info->masters++;
        double viol, pv = S_primal(&x, &viol);
        if (pv > low)
            low = pv;
        const double *y = Clp_getRowPrice(x.clp);
        double th = -y[0];
        for (int r = 1; r < x.nr; r++)
            x.mu[r] = fmax(0.0, -y[r]);
        int added = 0;
        double bround = bestc;
        for (int k = 0; k < S_NALPHA; k++) {
            for (int r = 1; r < x.nr; r++)
                x.mus[r] = alphas[k] * x.mub[r] + (1.0 - alphas[k]) * x.mu[r];
            double L = S_bound(&x, x.mus), red = S_value(&x, x.P) - th;
            info->pricings++;
            sd_lp_tree_lagrange_subtree(x.g, x.P, x.X);
            for (int r = 1; r < x.nr; r++)
                red -= x.mu[r] * S_act(&x, r, x.X);
            if (L < bround) {
                bround = L;
                memcpy(x.mix, x.mus, (size_t)x.nr * sizeof *x.mix);
            }
            if (red > 1e-12) {
                if ((rc = S_column(&x, x.P)))
                    break;
                added++;
            }
        }
        if (rc)
            break;
        if (bround < bestc) { /* a serious step: the box follows */
            bestc = bround;
            best = fmin(best, bround);
            memcpy(x.mub, x.mix, (size_t)x.nr * sizeof *x.mub);
            rebox = 1;
        }
        if (best - low <= S_GAP)
            break;
        if (!added) {
            /* nothing prices out at the master's duals: the box binds
             * (widen it) or the master is the LP's optimum */
            if (isfinite(delta) && sd_lp_clp_box_used(x.clp, x.nr) > 0.0) {
                delta = 4.0 * delta > S_DELTA_MAX ? INFINITY : 4.0 * delta;
                rebox = 1;
                continue;
            }
            break;
        }
    }
    info->columns = x.ncol;
    S_free(&x);
    if (rc)
        return sd_error_set(err, SD_ENOMEM, "out of memory for tree-ot's column generation");
    info->lower = low;
    info->upper = best;
    info->optimal = best - low <= S_GAP;
    info->seconds = sd_lp_now() - t0;
    return SD_OK;
}
