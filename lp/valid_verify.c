/* valid_verify.c — the best valid verifier (Sun et al. 2025
 * Def. 1 / Lemma 2, Theorem 2).
 *
 * A verifier sees the draft block x = x^γ ~ p and outputs (τ, y): it keeps
 * x^τ and appends y; the tokens after are then drawn from the target q.
 * Its law is w(x,τ,y) >= 0 with Σ_{τ,y} w(x,τ,y) = 1.  It is valid when the
 * first γ+1 output tokens o have law q (Sun et al. 2025, Def. 1, Lemma 2), i.e. for
 * every o ∈ V^{γ+1}:
 *   Σ_x p(x) Σ_τ w(x,τ,o_{τ+1}) 1{x^τ = o^τ} q(o_{τ+2..γ+1} | o^{τ+1}) = q(o).
 * The LP maximises E[τ] = Σ_x p(x) Σ_{τ,y} τ w(x,τ,y); Sun et al. 2025, Theorem 2
 * says block verification attains the optimum
 * Σ_{l=1..γ} Σ_{x^l} p(x^l) p_l(x^l).
 *
 * Sparse form.  Written literally the constraint for o touches every
 * w(x,τ,o_{τ+1}) with x^τ = o^τ: V^{2γ+1}-order nonzeros.  The law of x
 * enters only through the aggregates
 *   z_τ(u) = Σ_{x : x^τ = u^τ} p(x) w(x,τ,u_{τ+1}),   u ∈ V^{τ+1}
 * (the probability that the verifier outputs exactly the prefix u with
 * τ = |u|-1; z_τ(u) <= q(u)).  When q(o) > 0 every prefix has q > 0 and
 * q(o | o^{τ+1}) = q(o)/q(o^{τ+1}), so dividing row o by q(o) turns it into
 *   Σ_τ r_τ(o^{τ+1}) = 1,     r_τ(u) = z_τ(u)/q(u) ∈ [0,1].
 * We solve the equivalent LP in v(x,τ,y) = p(x) w(x,τ,y) and r:
 *   Σ_{τ,y} v(x,τ,y) = p(x)                       for x with p(x) > 0,
 *   q(u) r_τ(u) - Σ_{x^τ = u^τ} v(x,τ,u_{τ+1}) = 0  for u with q(u) > 0,
 *   Σ_τ r_τ(o^{τ+1}) = 1                          for o with q(o) > 0,
 * maximise Σ τ v.  Omitted pieces are forced to 0 by the literal LP: when
 * q(u) = 0 every extension o of u has q(o) = 0 while q(.|u) (a product of
 * chain rows) is positive on some extension, so z_τ(u) = 0, i.e. every
 * v(x,τ,u_{τ+1}) with x^τ = u^τ vanishes; the rows for o with q(o) = 0 then
 * hold term by term (each term has z = 0 or q(o|o^{τ+1}) = 0).
 *
 * Redundancy and rounding.  In exact arithmetic the rows are dependent
 * (summing the validity rows weighted by q(o) gives the total mass, and
 * Σ_y q(u y) = q(u) at every node of the target tree ties the levels
 * together); the last validity row is dropped, as in a transport LP
 * (the rows are dependent).  The remaining tree identities hold only up to rounding in
 * doubles, so glp_exact, which takes the rounded data as exact, can find
 * this LP infeasible ("no feasible solution"); the floating-point simplex
 * absorbs the 1e-16 inconsistencies in its tolerances (docs/lp.md).
 * The r form (coefficients 1 in the validity rows) keeps the LP well
 * scaled; with coefficients q(o|o^{τ+1}) GLPK stalled on instances with
 * probabilities near 1e-10.
 *
 * Size: (γ+1)V^{γ+1} + Σ_τ V^{τ+1} variables, O((γ+1)V^{γ+1}) nonzeros.
 *
 * Aggregated over draft prefixes (the default form).  v(x,τ,y) enters the
 * rows above only through its draft's mass row and through z_τ(x^τ y), so
 * route it as a flow up the draft prefix trie, as block-ot's network does
 * (lp/block_ot.c): up(w) >= 0 for each prefix w of length 1..γ with p(w) > 0
 * (the mass of drafts below w that keep fewer than |w| tokens), and the
 * mass leaving across at w towards output w y is z_{|w|}(w y) = q(w y)
 * r_{|w|}(w y) itself.  Conservation at each draft prefix w:
 *   p(x) = up(x) + Σ_y q(x y) r_γ(x y)                      (leaves x),
 *   Σ_{y'} up(w y') = up(w) + Σ_y q(w y) r_{|w|}(w y)       (inner w; the
 *                                                           root has no up),
 * with the validity rows unchanged, maximise Σ_τ τ Σ_u q(u) r_τ(u); r_τ(w y)
 * is left out (fixed at 0) where p(w) = 0.  Equivalence: from v, up(w) =
 * Σ_{x below w} Σ_{τ < |w|} v(x,τ,·) satisfies these rows; conversely a
 * path decomposition of the up/across flow (north-west corner at each w,
 * S_read_trie) is a v with the same z.  Σ_{l≤γ} V^l + Σ_τ V^{τ+1}
 * variables instead of (γ+1)V^{γ+1} + Σ_τ V^{τ+1}: 22 407 against 103 634 at
 * V = 7, γ = 4. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sd_lp.h"
#include "sd_lp_flow.h"

sd_lp_size sd_lp_valid_verify_size(size_t V, size_t gamma)
{
    size_t nx = sd_lp_pow(V, gamma), nleaf = sd_lp_mul(nx, V);
    size_t nw = sd_lp_mul(sd_lp_mul(nx, gamma + 1), V), nz = 0;
    for (size_t tau = 0; tau <= gamma; tau++)
        nz = sd_lp_add(nz, sd_lp_pow(V, tau + 1));
    sd_lp_size s = {0};
    s.vars = sd_lp_add(nw, nz);
    s.rows = sd_lp_add(sd_lp_add(nx, nz), nleaf);
    s.nnz = sd_lp_add(sd_lp_add(sd_lp_mul(nw, 2), nz), sd_lp_mul(nleaf, gamma + 1));
    snprintf(s.what, sizeof s.what, "valid-verify --gamma %zu at V = %zu", gamma, V);
    return s;
}

/* The simplex each form measured fastest (docs/lp.md): SD_LP_AUTO_DUAL or 0. */
#define S_AUTO SD_LP_AUTO_DUAL

sd_lp_size sd_lp_valid_verify_trie_size(size_t V, size_t gamma)
{
    size_t nd = 0, nz = 0, nleaf = sd_lp_pow(V, gamma + 1);
    for (size_t l = 0; l <= gamma; l++) {
        nd = sd_lp_add(nd, sd_lp_pow(V, l));
        nz = sd_lp_add(nz, sd_lp_pow(V, l + 1));
    }
    sd_lp_size s = {0};
    s.vars = sd_lp_add(nd, nz); /* up (nd - 1) and r */
    s.rows = sd_lp_add(nd, nleaf);
    s.nnz = sd_lp_add(sd_lp_add(sd_lp_mul(nd, 2), nz), sd_lp_mul(nleaf, gamma + 1));
    snprintf(s.what, sizeof s.what, "valid-verify --gamma %zu at V = %zu", gamma, V);
    return s;
}

sd_lp_size sd_lp_valid_verify_form_size(size_t V, size_t gamma, const sd_lp_opts *opts)
{
    return opts && opts->per_draft ? sd_lp_valid_verify_size(V, gamma) : sd_lp_valid_verify_trie_size(V, gamma);
}

typedef struct S_vv {
    size_t V, G;
    double **P, **Q;  /* prefix laws: P[l] for l <= γ, Q[l] for l <= γ+1 */
    size_t *zoff;     /* [γ+2]: r_τ(u) lives at zoff[τ] + u */
    int *zcol, *zrow; /* [Σ V^{τ+1}] */
    int *vcol;        /* [V^γ][γ+1][V] */
    double *v;        /* the same, after read */
    int trie;         /* the aggregated form */
    int *ucol;        /* trie form: up(w) at sd_lp_trie_id(V, |w|, w) */
    double *z;        /* trie form, after read: z_τ(u) at zoff[τ] + u */
} S_vv;

/* The validity rows Σ_τ r_τ(o^{τ+1}) = 1, one per output o with q(o) > 0
 * but the last (both forms). */
static void S_validity_rows(sd_lp_builder *b, const S_vv *o)
{
    size_t V = o->V, G = o->G, nleaf = sd_lp_pow(V, G + 1), last = nleaf;
    for (size_t out = 0; out < nleaf; out++)
        if (o->Q[G + 1][out] > 0)
            last = out;
    for (size_t out = 0; out < nleaf; out++) {
        double qo = o->Q[G + 1][out];
        if (!(qo > 0) || out == last)
            continue;
        int row = sd_lp_row_fixed(b, 1.0);
        size_t div = nleaf / V; /* out / div = o^{τ+1} */
        for (size_t tau = 0; tau <= G; tau++) {
            size_t u = out / div, i = o->zoff[tau] + u;
            if (o->zcol[i])
                sd_lp_entry(b, row, o->zcol[i], 1.0);
            div /= V;
        }
    }
}

/* The aggregated form (header): a row per draft prefix w with p(w) > 0,
 * built from the leaves up so that each up(w) column exists before its
 * parent's row takes it. */
static int S_build_trie(sd_lp_builder *b, void *ctx, sd_error *err)
{
    (void)err;
    S_vv *o = ctx;
    size_t V = o->V, G = o->G, m = sd_lp_pow(V, G);
    for (size_t l = G + 1; l-- > 0; m /= V) {
        for (size_t w = 0; w < m; w++) {
            if (!(o->P[l][w] > 0))
                continue;
            size_t id = sd_lp_trie_id(V, l, w);
            int row = sd_lp_row_fixed(b, l == G ? o->P[G][w] : 0.0);
            if (l < G) /* inflow from the children */
                for (size_t y = 0; y < V; y++) {
                    int j = o->ucol[sd_lp_trie_id(V, l + 1, w * V + y)];
                    if (j)
                        sd_lp_entry(b, row, j, -1.0);
                }
            if (l > 0) {
                o->ucol[id] = sd_lp_col(b, 0.0, HUGE_VAL, 0.0);
                sd_lp_entry(b, row, o->ucol[id], 1.0);
            }
            for (size_t y = 0; y < V; y++) {
                size_t u = w * V + y, i = o->zoff[l] + u;
                double qu = o->Q[l + 1][u];
                if (!(qu > 0))
                    continue;
                o->zcol[i] = sd_lp_col(b, 0.0, 1.0, (double)l * qu);
                sd_lp_entry(b, row, o->zcol[i], qu);
            }
        }
        if (l == 0)
            break;
    }
    S_validity_rows(b, o);
    return SD_OK;
}

static int S_read_trie(glp_prob *lp, void *ctx, sd_error *err)
{
    (void)err;
    S_vv *o = ctx;
    size_t G = o->G;
    for (size_t tau = 0; tau <= G; tau++)
        for (size_t u = 0; u < o->zoff[tau + 1] - o->zoff[tau]; u++) {
            size_t i = o->zoff[tau] + u;
            o->z[i] = o->zcol[i] ? fmax(0.0, glp_get_col_prim(lp, o->zcol[i])) * o->Q[tau + 1][u] : 0.0;
        }
    return SD_OK;
}

/* v(x,τ,y) from the aggregated solution: chunks (x, mass) climb the draft
 * trie from the leaves; at each prefix w the first z_{|w|}(w y) of the
 * arriving mass leaves across to y = 0, 1, ... in turn (one chunk split
 * at each boundary), the rest goes up; the root sends all it receives
 * across (its last y with z > 0 takes the rounding remainder).  Each
 * draft's chunks sum to p(x) and each across amount is z: a verifier with
 * the LP's z, hence valid with the same E[τ]. */
static int S_trie_plan(S_vv *o)
{
    size_t V = o->V, G = o->G, n = sd_lp_pow(V, G);
    sd_lp_chunks cur = {0}, up = {0};
    size_t *start = malloc((n + 1) * sizeof *start), *ust = malloc((n + 1) * sizeof *ust);
    int rc = (!start || !ust) ? SD_ENOMEM : SD_OK;
    for (size_t x = 0; !rc && x < n; x++) {
        start[x] = cur.n;
        rc = sd_lp_chunks_put(&cur, x, o->P[G][x]);
    }
    if (!rc)
        start[n] = cur.n;
    for (size_t l = G + 1, m = n; !rc && l-- > 0; m /= V) {
        up.n = 0;
        for (size_t w = 0; !rc && w < m; w++) {
            const double *z = o->z + o->zoff[l] + w * V; /* z_l(w y), y < V */
            if (l > 0 && w % V == 0)
                ust[w / V] = up.n;
            size_t last = V, y = 0;
            for (size_t j = 0; j < V; j++)
                if (z[j] > 0)
                    last = j;
            double want = last == V ? 0.0 : z[0];
            for (size_t k = start[w]; !rc && k < start[w + 1]; k++) {
                sd_lp_chunk ch = cur.c[k];
                while (!rc && ch.m > 0.0) {
                    while (last < V && y < last && !(want > 0.0))
                        want = z[++y];
                    if (last == V || (y == last && !(want > 0.0) && l > 0)) {
                        rc = sd_lp_chunks_put(&up, ch.x, ch.m); /* the rest goes up */
                        break;
                    }
                    /* the root sends all it receives across: its last y
                     * takes the rounding remainder */
                    double take = (l == 0 && y == last) ? ch.m : fmin(ch.m, want);
                    o->v[(ch.x * (G + 1) + l) * V + y] += take;
                    ch.m -= take;
                    want -= take;
                }
            }
        }
        if (l == 0)
            break;
        ust[m / V] = up.n;
        sd_lp_chunks t = cur;
        cur = up;
        up = t;
        memcpy(start, ust, (m / V + 1) * sizeof *start);
    }
    free(cur.c);
    free(up.c);
    free(start);
    free(ust);
    return rc;
}

static int S_build(sd_lp_builder *b, void *ctx, sd_error *err)
{
    (void)err;
    S_vv *o = ctx;
    size_t V = o->V, G = o->G, nx = sd_lp_pow(V, G);
    /* r columns (r_τ(u) = z_τ(u)/q(u) in [0,1]) and their definition rows */
    for (size_t tau = 0; tau <= G; tau++) {
        size_t nu = o->zoff[tau + 1] - o->zoff[tau];
        for (size_t u = 0; u < nu; u++) {
            if (!(o->Q[tau + 1][u] > 0))
                continue;
            size_t i = o->zoff[tau] + u;
            o->zcol[i] = sd_lp_col(b, 0.0, 1.0, 0.0);
            o->zrow[i] = sd_lp_row_fixed(b, 0.0);
            sd_lp_entry(b, o->zrow[i], o->zcol[i], o->Q[tau + 1][u]);
        }
    }
    /* v columns: one block row per draft block */
    for (size_t x = 0; x < nx; x++) {
        double px = o->P[G][x];
        if (!(px > 0))
            continue;
        int row = sd_lp_row_fixed(b, px);
        size_t div = nx; /* x / div = x^τ */
        for (size_t tau = 0; tau <= G; tau++) {
            size_t pre = x / div;
            for (size_t y = 0; y < V; y++) {
                size_t u = pre * V + y, i = o->zoff[tau] + u;
                if (!o->zcol[i])
                    continue; /* q(x^τ, y) = 0 */
                int j = sd_lp_col(b, 0.0, HUGE_VAL, (double)tau);
                o->vcol[(x * (G + 1) + tau) * V + y] = j;
                sd_lp_entry(b, row, j, 1.0);
                sd_lp_entry(b, o->zrow[i], j, -1.0);
            }
            div /= V;
        }
    }
    S_validity_rows(b, o);
    return SD_OK;
}

static int S_read(glp_prob *lp, void *ctx, sd_error *err)
{
    (void)err;
    S_vv *o = ctx;
    sd_lp_read_cols(lp, o->vcol, sd_lp_pow(o->V, o->G) * (o->G + 1) * o->V, o->v);
    return SD_OK;
}

int sd_lp_valid_verify(const sd_chain *c, size_t t, size_t a, size_t gamma,
                       const sd_lp_opts *opts, sd_lp_result *res,
                       sd_lp_plan **plan, sd_error *err)
{
    sd_lp_result_reset(res, plan);
    size_t V = c->V;
    if (gamma < 1)
        return sd_error_set(err, SD_EUSAGE, "valid-verify: --gamma must be >= 1");
    if (t < 1 || t > c->T || gamma > c->T - t)
        return sd_error_set(err, SD_EUSAGE,
                            "valid-verify: --step %zu --gamma %zu needs positions %zu..%zu (the draft block and "
                            "the bonus token); the model's horizon is %zu",
                            t, gamma, t, t + gamma, c->T);
    if (a >= V)
        return sd_error_set(err, SD_EUSAGE, "valid-verify: --state %zu is not a token; expected 0 to %zu", a, V - 1);
    int trie = !(opts && opts->per_draft);
    sd_lp_size sz = sd_lp_valid_verify_form_size(V, gamma, opts);
    const char *what = sz.what;
    int rc = sd_lp_check_size(&sz, opts && opts->max_vars ? opts->max_vars : SD_LP_DEFAULT_MAX_VARS, err);
    if (rc)
        return rc;
    S_vv o;
    memset(&o, 0, sizeof o);
    o.V = V;
    o.G = gamma;
    o.trie = trie;
    size_t nx = sd_lp_pow(V, gamma), nw = nx * (gamma + 1) * V;
    if ((rc = sd_lp_prefix_laws(c, t, a, gamma, 0, &o.P, err)) ||
        (rc = sd_lp_prefix_laws(c, t, a, gamma + 1, 1, &o.Q, err))) {
        free(o.P);
        return rc;
    }
    sd_lp_out_slots(V, gamma, &o.zoff, &o.zcol, &o.zrow);
    o.vcol = trie ? NULL : calloc(nw, sizeof *o.vcol);
    o.v = calloc(nw, sizeof *o.v);
    if (trie && o.zoff) {
        o.ucol = calloc(sd_lp_trie_id(V, gamma + 1, 0), sizeof *o.ucol);
        o.z = calloc(o.zoff[gamma + 1], sizeof *o.z);
    }
    if (!o.zoff || !o.zcol || !o.zrow || (!trie && !o.vcol) || !o.v || (trie && (!o.ucol || !o.z)))
        rc = sd_error_set(err, SD_ENOMEM, "%s: out of memory", what);
    else if (trie)
        rc = sd_lp_solve(&sz, SD_LP_MAXIMISE | SD_LP_ADV_BASIS | S_AUTO, opts, S_build_trie, S_read_trie, &o, res,
                         err);
    else
        rc = sd_lp_solve(&sz, SD_LP_MAXIMISE | SD_LP_ADV_BASIS | S_AUTO, opts, S_build, S_read, &o, res, err);
    if (!rc && trie && plan && res->optimal && S_trie_plan(&o))
        rc = sd_error_set(err, SD_ENOMEM, "%s: out of memory for the plan", what);
    if (!rc && plan && res->optimal) {
        size_t groups[3] = {gamma, 1, 1};
        sd_lp_plan *pl = sd_lp_plan_new("draft,tau,y,prob", 3, groups, 1, 64);
        size_t *keys = malloc((gamma + 2) * sizeof *keys);
        int bad = !pl || !keys;
        for (size_t i = 0; !bad && i < nw; i++) {
            size_t x = i / ((gamma + 1) * V);
            double px = o.P[gamma][x], w = px > 0 ? o.v[i] / px : 0.0;
            if (!(w > 1e-12))
                continue;
            sd_lp_digits(x, V, gamma, keys);
            keys[gamma] = (i / V) % (gamma + 1);
            keys[gamma + 1] = i % V;
            bad = sd_lp_plan_add(pl, keys, &w) != SD_OK;
        }
        free(keys);
        if (bad) {
            sd_lp_plan_free(pl);
            pl = NULL;
            rc = sd_error_set(err, SD_ENOMEM, "%s: out of memory for the plan", what);
        }
        *plan = pl;
    }
    free(o.P);
    free(o.Q);
    free(o.zoff);
    free(o.zcol);
    free(o.zrow);
    free(o.vcol);
    free(o.v);
    free(o.ucol);
    free(o.z);
    return rc;
}
