/* sd_tree.c — draft token trees and their verification (sd_tree.h).
 *
 * Letters: at a node v of depth l holding token x (the root: the context
 * a), q_v = q_{t+l}(.|x) and p_v = p_{t+l}(.|x) are the target and draft
 * laws of the next token.
 *
 * Top-down recursive rejection sampling (SD_TREE_TOPDOWN; SpecInfer, Miao
 * et al. 2024, "multi-step speculative sampling"; Jeon et al. 2024 for
 * drafts without replacement).  From the root: at node v, R = q_v; its
 * children c_1..c_b are tested in turn, c_j against its own draft law D_j
 * (iid: p_v; wor: p_v with c_1..c_{j-1} removed, renormalised; topk: δ_{c_j}),
 * accepted with probability min(1, R(c_j)/D_j(c_j)); an acceptance moves to
 * c_j; a rejection sets R <- [R - D_j]+ / Σ[R - D_j]+.  When every child is
 * rejected the iteration ends at v with a token from R (a rejection); at a
 * leaf it ends with a bonus token from q_v.  Every step is single-token
 * recursive rejection sampling, whose output law is q_v whatever the draft
 * laws D_j as long as c_j ~ D_j given the earlier siblings; the subtrees
 * are drafted independently of the tests above them, so the accepted path
 * and the emitted token follow q (the losslessness Miao et al. 2024 prove).
 *
 * Traversal Verification (SD_TREE_TRAVERSAL; Weng et al. 2025, arXiv
 * 2505.12398; the rules as published, in the order we read them):
 *   - every node carries a sequence-level acceptance α: α(root) = 1 and,
 *     for a child c of v not yet touched, α(c) = min(1, α(v) q_v(c)/p_v(c))
 *     with v's current q_v, p_v, α(v);
 *   - the current node is the first leaf of the remaining tree in
 *     depth-first order (first remaining child at every level);
 *   - it is accepted (the iteration ends there) with probability α;
 *   - otherwise it is deleted and its parent v is updated, in this order:
 *       q_v <- [α(v) q_v - p_v]+ / r,   r = Σ [α(v) q_v - p_v]+   (p_v before removal),
 *       α(v) <- r / (r + 1 - α(v)),
 *       p_v <- p_v with the deleted token removed, renormalised   (wor only),
 *     and α of v's remaining subtree is recomputed from the new values;
 *   - the iteration ends at the accepted node v with a token from q_v:
 *     a bonus token if v is a leaf of the drafted tree, a residual sample
 *     if v lost children.
 * On a chain (1,1,...,1) this is block verification (Sun et al. 2025,
 * eqs. 3-5: α is p_i, the update is h_i); at depth 1 with wor it is
 * recursive rejection sampling without replacement.  With --draw iid
 * (our adaptation, not in the paper) the draft law p_v is left unchanged
 * after a deletion, as i.i.d. siblings require; check passes it.  Other
 * readings (the token removed before the residual is taken, the residual
 * against q_v instead of α(v) q_v) are discussed in docs/findings.md.
 *
 * Prefix-scaled k-Seq (SD_TREE_SCALED; our reading of UniVer, Weng, Hu and
 * Yairi 2026, and of SpecTr-GBV, Lin, Sheng, Cai and Zhou 2026, whose full
 * rules we could not read; docs/findings.md, items 44–46).  Children i.i.d. from p_v.
 *   Top-down allocation: α(root) = 1; at an inner node v with b children,
 *   the target of the siblings is the sub-probability α(v) q_v, and the
 *   local plan is SpecTr's k-Seq (Sun et al. 2023, Alg. 2) for it: with
 *     β(ρ) = Σ_x min(p_v(x), α(v) q_v(x)/ρ),  f(β) = (1 - (1-β)^b)/β,
 *   ρ_v the least ρ in [1, b] with ρ >= f(β(ρ)) (to 1e-14), every child c
 *   holding x gets α(c) = min(1, α(v) q_v(x) / (ρ_v p_v(x))), and
 *     R_v(x) = α(v) q_v(x) - p_v(x) α(c=x) f(β) >= 0,
 *     h_v = Σ R_v / (1-β)^b  (<= 1 since Σ R_v = α(v) - 1 + (1-β)^b).
 *   Post-order decisions: the children are tried in order; a leaf c is
 *   accepted with probability α(c) (bonus from q_c); an inner node's
 *   subtree is tried recursively; when all of v's children fail, v is
 *   accepted with probability h_v and emits a token from R_v / Σ R_v, else
 *   v fails and its parent tries the next sibling.
 * Invariant (induction from the leaves): averaged over its subtree's
 * drafts, the subtree of a node c holding x accepts with probability α(c)
 * and then emits a continuation with law q(.|x); so at v the children are
 * i.i.d. proposals each accepted with probability a(x) = α(c=x), exactly
 * k-Seq's structure, which emits x with mass p(x) a(x) f(β) and leaves R_v
 * to v: Σ_x of v's output is α(v) q_v.  At the root α = 1 and h = 1.  On a
 * chain (b = 1: ρ = 1, f = 1) it is block verification (α is Sun et al.
 * 2025's p_i, h_v their h_i).  With --draw wor the sequential scaled
 * recursive rejection sampling among siblings is exactly the traversal rule
 * above, which S_scaled then runs. */
#include "sd_tree.h"
#include "../engine/sd_params.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/sd_dist.h"

const sd_param_decl sd_tree_decls[] = {
    [SD_TREE_DECL_SHAPE] = SD_PARAM_TREE("1"),
    [SD_TREE_DECL_DRAW] = SD_PARAM_DRAW(SD_DRAW_IID, "drafting rule of the children: iid, wor or topk"),
    SD_PARAM_END,
};

const sd_tree_kind *sd_tree_kind_find(const char *algo)
{
    const sd_verifier_type *vt = algo ? sd_verifier_find(algo) : NULL;
    return vt ? vt->tree : NULL;
}

const char *sd_tree_draw_name(sd_tree_draw draw)
{
    static const char *const names[] = {"iid", "wor", "topk"};
    return (unsigned)draw < 3 ? names[draw] : "?";
}

int sd_tree_check_draw(const sd_tree_kind *k, sd_tree_draw draw, const char *name, sd_error *err)
{
    if ((unsigned)draw < 3 && (k->draws & (1u << draw)))
        return SD_OK;
    return sd_error_set(err, SD_EUSAGE, "--draw %s does not apply to --algo %s: %s", sd_tree_draw_name(draw),
                        name, k->why_not ? k->why_not : "unsupported drafting rule");
}

int sd_tree_new(sd_tree **out, size_t V, const sd_params *par, sd_error *err)
{
    *out = NULL;
    if (par->tree_depth < 1 || par->tree_depth > SD_TREE_MAX_DEPTH)
        return sd_error_set(err, SD_EUSAGE, "--tree: expected a tree shape b1,b2,...,bd");
    size_t nodes = 1 + sd_params_tree_nodes(par);
    if (nodes > SD_TREE_MAX_NODES + 1 || V > ((size_t)1 << 27) / nodes)
        return sd_error_set(err, SD_ETOOBIG, "--tree: %zu nodes at V = %zu exceed the limit of 2^27 "
                            "node-token entries", nodes, V);
    sd_tree *tr = calloc(1, sizeof *tr);
    if (!tr)
        return sd_error_set(err, SD_ENOMEM, "out of memory for a draft tree");
    tr->V = V;
    tr->d = par->tree_depth;
    memcpy(tr->b, par->tree, tr->d * sizeof *tr->b);
    tr->tok = malloc(nodes * sizeof *tr->tok);
    tr->next = malloc(nodes * sizeof *tr->next);
    tr->mod = malloc(nodes);
    tr->pi = malloc(nodes * sizeof *tr->pi);
    tr->alpha = malloc(nodes * sizeof *tr->alpha);
    tr->reach = malloc(nodes * sizeof *tr->reach);
    tr->law = malloc(nodes * V * sizeof *tr->law);
    tr->Q = malloc(nodes * V * sizeof *tr->Q);
    tr->P = malloc(nodes * V * sizeof *tr->P);
    tr->up = malloc(nodes * sizeof *tr->up);
    tr->lev = malloc(nodes * sizeof *tr->lev);
    tr->par = *par;
    if (!tr->tok || !tr->next || !tr->mod || !tr->pi || !tr->alpha || !tr->reach || !tr->law || !tr->Q ||
        !tr->P || !tr->up || !tr->lev) {
        sd_tree_free(tr);
        return sd_error_set(err, SD_ENOMEM, "out of memory for a draft tree of %zu nodes", nodes);
    }
    sd_tree_cut(tr, tr->d, 1, 0);
    *out = tr;
    return SD_OK;
}

void sd_tree_free(sd_tree *tr)
{
    if (!tr)
        return;
    free(tr->tok);
    free(tr->next);
    free(tr->mod);
    free(tr->pi);
    free(tr->alpha);
    free(tr->reach);
    free(tr->law);
    free(tr->Q);
    free(tr->P);
    free(tr->up);
    free(tr->lev);
    free(tr);
}

void sd_tree_cut(sd_tree *tr, size_t D, size_t t, size_t a)
{
    tr->D = D;
    tr->t = t;
    tr->off[0] = 0;
    tr->off[1] = 1;
    size_t level = 1;
    for (size_t l = 1; l <= D; l++) {
        level *= tr->b[l - 1];
        tr->off[l + 1] = tr->off[l] + level;
    }
    tr->nodes = tr->off[D + 1];
    tr->tok[0] = a;
    tr->up[0] = SD_TREE_ABSENT;
    tr->lev[0] = 0;
    for (size_t l = 1; l <= D; l++)
        for (size_t v = tr->off[l]; v < tr->off[l + 1]; v++) {
            tr->lev[v] = l;
            tr->up[v] = tr->off[l - 1] + (v - tr->off[l]) / tr->b[l - 1];
        }
}

size_t sd_tree_depth_of(const sd_tree *tr, size_t v)
{
    size_t l = 0;
    while (v >= tr->off[l + 1])
        l++;
    return l;
}

size_t sd_tree_parent(const sd_tree *tr, size_t v)
{
    size_t l = sd_tree_depth_of(tr, v);
    return tr->off[l - 1] + (v - tr->off[l]) / tr->b[l - 1];
}

/* The first child of node v (depth l < D). */
static size_t S_child0(const sd_tree *tr, size_t v, size_t l)
{
    return tr->off[l + 1] + (v - tr->off[l]) * tr->b[l];
}

double sd_tree_draft_law(const sd_tree *tr, const sd_chain *c, size_t u, sd_tree_draw draw, double *w)
{
    size_t V = tr->V, l = sd_tree_depth_of(tr, u), v = sd_tree_parent(tr, u);
    size_t first = S_child0(tr, v, l - 1), j = u - first;
    memset(w, 0, V * sizeof *w);
    if (tr->tok[v] == SD_TREE_NONE)
        return 0.0;
    const double *p = sd_chain_p(c, tr->t + l - 1, tr->tok[v]);
    if (draw == SD_DRAW_IID) {
        memcpy(w, p, V * sizeof *w);
        return 1.0;
    }
    if (draw == SD_DRAW_TOPK) {
        /* the (j+1)-th most probable token, ties to the smaller index */
        size_t best = SD_TREE_NONE;
        for (size_t x = 0; x < V; x++) {
            int taken = 0;
            for (size_t s = first; s < u && !taken; s++)
                taken = tr->tok[s] == x;
            if (!taken && (best == SD_TREE_NONE || p[x] > p[best]))
                best = x;
        }
        if (best == SD_TREE_NONE)
            return 0.0; /* b > V */
        w[best] = 1.0;
        return 1.0;
    }
    /* wor: p without the earlier siblings, renormalised */
    memcpy(w, p, V * sizeof *w);
    for (size_t s = first; s < first + j; s++)
        if (tr->tok[s] != SD_TREE_NONE)
            w[tr->tok[s]] = 0.0;
    double mass = 0.0;
    for (size_t x = 0; x < V; x++)
        mass += w[x];
    if (mass > 0.0)
        for (size_t x = 0; x < V; x++)
            w[x] /= mass;
    return mass;
}

void sd_tree_draft(sd_tree *tr, const sd_chain *c, sd_tree_draw draw, sd_stream *rng, double *w)
{
    for (size_t u = 1; u < tr->nodes; u++) {
        double mass = sd_tree_draft_law(tr, c, u, draw, w);
        tr->tok[u] = mass > 0.0 ? sd_dist_sample(w, tr->V, 1.0, sd_stream_uniform(rng)) : SD_TREE_NONE;
    }
}

/* law[v] <- the bonus law q_v when v's next position is within the horizon,
 * else all 0. */
static void S_bonus(sd_tree *tr, const sd_chain *c, size_t v, size_t l)
{
    double *w = tr->law + v * tr->V;
    if (tr->t + l <= c->T)
        memcpy(w, sd_chain_q(c, tr->t + l, tr->tok[v]), tr->V * sizeof *w);
    else
        memset(w, 0, tr->V * sizeof *w);
}

/* R <- [R - D]+, renormalised unless `raw`; returns Σ[R - D]+. */
static double S_residual(double *R, const double *D, size_t V, int raw)
{
    double mass = 0.0;
    for (size_t x = 0; x < V; x++) {
        R[x] = R[x] > D[x] ? R[x] - D[x] : 0.0;
        mass += R[x];
    }
    if (mass > 0.0 && !raw)
        for (size_t x = 0; x < V; x++)
            R[x] /= mass;
    return mass;
}

/* P <- P without token x, renormalised (left all 0 when nothing remains). */
static void S_drop(double *P, size_t V, size_t x)
{
    P[x] = 0.0;
    double m = 0.0;
    for (size_t y = 0; y < V; y++)
        m += P[y];
    if (m > 0.0)
        for (size_t y = 0; y < V; y++)
            P[y] /= m;
}

static void S_normalise_or_q(double *w, size_t V, const double *q)
{
    double s = 0.0;
    for (size_t x = 0; x < V; x++)
        s += w[x];
    if (s > 0.0)
        for (size_t x = 0; x < V; x++)
            w[x] /= s;
    else
        memcpy(w, q, V * sizeof *w); /* reached with probability 0 only */
}

static void S_topdown(sd_tree *tr, const sd_chain *c, const sd_tree_kind *k, sd_tree_draw draw)
{
    size_t V = tr->V;
    double *Dj = tr->Q; /* scratch: the current child's draft law */
    double *pw = tr->P; /* scratch: p_v shrinking (wor) */
    for (size_t v = 0; v < tr->nodes; v++)
        tr->reach[v] = v == 0 ? 1.0 : 0.0;
    for (size_t v = 0; v < tr->nodes; v++) {
        size_t l = sd_tree_depth_of(tr, v);
        tr->pi[v] = 0.0;
        if (tr->tok[v] == SD_TREE_NONE) {
            memset(tr->law + v * V, 0, V * sizeof(double));
            continue;
        }
        if (l == tr->D) { /* a leaf: the bonus token */
            tr->pi[v] = tr->reach[v];
            S_bonus(tr, c, v, l);
            continue;
        }
        const double *q = sd_chain_q(c, tr->t + l, tr->tok[v]), *p = sd_chain_p(c, tr->t + l, tr->tok[v]);
        double *R = tr->law + v * V, rem = tr->reach[v];
        memcpy(R, q, V * sizeof *R);
        memcpy(pw, p, V * sizeof *pw);
        size_t first = S_child0(tr, v, l);
        for (size_t j = 0; j < tr->b[l]; j++) {
            size_t u = first + j, x = tr->tok[u];
            if (x == SD_TREE_NONE)
                break;
            /* the law the child is tested against */
            if (draw == SD_DRAW_TOPK) {
                memset(Dj, 0, V * sizeof *Dj);
                Dj[x] = 1.0;
            } else if (draw == SD_DRAW_WOR && !(k->bugs & SD_TREE_BUG_STALE_DRAFT)) {
                memcpy(Dj, pw, V * sizeof *Dj);
            } else {
                memcpy(Dj, p, V * sizeof *Dj);
            }
            double a = Dj[x] > R[x] ? R[x] / Dj[x] : 1.0;
            tr->reach[u] = rem * a;
            rem *= 1.0 - a;
            if (S_residual(R, Dj, V, (k->bugs & SD_TREE_BUG_UNNORMALISED) != 0) <= 0.0) {
                /* R = D_j: the rejection had probability 0 */
                tr->reach[u] += rem;
                rem = 0.0;
                memcpy(R, q, V * sizeof *R);
            }
            if (draw == SD_DRAW_WOR)
                S_drop(pw, V, x); /* the next sibling's draft law: p without the drafted ones */
        }
        tr->pi[v] = rem;
        S_normalise_or_q(R, V, q);
    }
}

static void S_traversal(sd_tree *tr, const sd_chain *c, const sd_tree_kind *k, sd_tree_draw draw)
{
    size_t V = tr->V;
    for (size_t v = 0; v < tr->nodes; v++) {
        size_t l = sd_tree_depth_of(tr, v);
        tr->pi[v] = 0.0;
        tr->next[v] = 0;
        tr->mod[v] = 0;
        if (tr->tok[v] != SD_TREE_NONE && l < tr->D) {
            memcpy(tr->Q + v * V, sd_chain_q(c, tr->t + l, tr->tok[v]), V * sizeof(double));
            memcpy(tr->P + v * V, sd_chain_p(c, tr->t + l, tr->tok[v]), V * sizeof(double));
        }
    }
    tr->alpha[0] = 1.0;
    double carry = 1.0; /* P(every node visited so far was rejected) */
    for (;;) {
        /* the first leaf of the remaining tree */
        size_t v = 0, l = 0;
        while (l < tr->D && tr->next[v] < tr->b[l]) {
            size_t u = S_child0(tr, v, l) + tr->next[v], x = tr->tok[u];
            if (x == SD_TREE_NONE)
                break;
            if (!tr->mod[u]) {
                double q = tr->Q[v * V + x], p = tr->P[v * V + x], a = tr->alpha[v];
                tr->alpha[u] = p > a * q ? a * q / p : 1.0;
            }
            v = u;
            l++;
        }
        double a = tr->alpha[v];
        tr->pi[v] = carry * a;
        if (tr->mod[v])
            memcpy(tr->law + v * V, tr->Q + v * V, V * sizeof(double));
        else if (l == tr->D)
            S_bonus(tr, c, v, l);
        else /* unreachable: an inner node keeps a child until it is modified */
            memcpy(tr->law + v * V, sd_chain_q(c, tr->t + l, tr->tok[v]), V * sizeof(double));
        carry *= 1.0 - a;
        if (v == 0 || !(carry > 0.0))
            break;
        /* delete v; update its parent w */
        size_t w = sd_tree_parent(tr, v), x = tr->tok[v];
        double *Q = tr->Q + w * V, *P = tr->P + w * V, aw = tr->alpha[w];
        int early = draw == SD_DRAW_WOR && (k->bugs & SD_TREE_BUG_REMOVE_FIRST);
        if (early)
            S_drop(P, V, x);
        if (!(k->bugs & SD_TREE_BUG_UNSCALED))
            for (size_t y = 0; y < V; y++)
                Q[y] *= aw;
        double r = S_residual(Q, P, V, 0); /* q_v <- [α q_v - p_v]+ / r */
        double den = r + 1.0 - aw;
        tr->alpha[w] = den > 0.0 ? r / den : 1.0;
        if (draw == SD_DRAW_WOR && !early)
            S_drop(P, V, x);
        tr->mod[w] = 1;
        tr->next[w]++;
    }
    /* the root's α stays 1 (r / r), so the loop ends at the root at the
     * latest; nodes never reached keep pi = 0 */
}

/* k-Seq's f(β) = (1 - (1-β)^b)/β, b at β = 0. */
static double S_f(double beta, size_t b)
{
    return beta > 0.0 ? (1.0 - pow(1.0 - beta, (double)b)) / beta : (double)b;
}

static double S_beta(const double *p, const double *q, double a, double rho, size_t V)
{
    double s = 0.0;
    for (size_t x = 0; x < V; x++) {
        double t = a * q[x] / rho;
        s += p[x] < t ? p[x] : t;
    }
    return s;
}

/* ρ_v: the least ρ in [1, b] with g(ρ) = ρ - f(β(ρ)) >= 0.  g increases
 * with slope >= 1 (β decreases in ρ, f decreases in β), so a ρ with
 * 0 <= g(ρ) <= 1e-14 is within 1e-14 of the least one and keeps the
 * residual non-negative.  Regula falsi with the Illinois modification on
 * the bracket [lo, hi], g(lo) < 0 <= g(hi): about ten passes over V where
 * bisection took fifty; a bisection step when the secant leaves the
 * bracket. */
static double S_rho_g(const double *p, const double *q, double a, size_t b, size_t V, double rho)
{
    return rho - S_f(S_beta(p, q, a, rho, V), b);
}

static double S_rho(const double *p, const double *q, double a, size_t b, size_t V)
{
    if (b <= 1)
        return 1.0;
    double lo = 1.0, glo = S_rho_g(p, q, a, b, V, lo);
    if (glo >= 0.0)
        return 1.0;
    double hi = (double)b, ghi = S_rho_g(p, q, a, b, V, hi); /* f <= b: ghi >= 0 */
    int side = 0;
    for (int it = 0; it < 200 && ghi > 1e-14 && hi - lo > 1e-15 * hi; it++) {
        double x = (lo * ghi - hi * glo) / (ghi - glo);
        if (!(x > lo && x < hi))
            x = 0.5 * (lo + hi);
        double gx = S_rho_g(p, q, a, b, V, x);
        if (gx >= 0.0) {
            hi = x;
            ghi = gx;
            if (side == 1)
                glo *= 0.5;
            side = 1;
        } else {
            lo = x;
            glo = gx;
            if (side == -1)
                ghi *= 0.5;
            side = -1;
        }
    }
    return hi;
}

static void S_scaled(sd_tree *tr, const sd_chain *c, const sd_tree_kind *k, sd_tree_draw draw)
{
    if (draw != SD_DRAW_IID) {
        for (size_t v = 0; v < tr->nodes; v++)
            memset(tr->law + v * tr->V, 0, tr->V * sizeof(double));
        S_traversal(tr, c, k, draw);
        return;
    }
    size_t V = tr->V;
    double *h = tr->reach, *A = tr->Q; /* h_v; A[v]: P(v's subtree accepts | this tree) */
    /* top-down allocation: α of every node, R_v (in law[v]) and h_v */
    tr->alpha[0] = 1.0;
    for (size_t v = 0; v < tr->nodes; v++) {
        size_t l = sd_tree_depth_of(tr, v);
        h[v] = 0.0;
        if (l == tr->D || tr->tok[v] == SD_TREE_NONE)
            continue;
        const double *q = sd_chain_q(c, tr->t + l, tr->tok[v]), *p = sd_chain_p(c, tr->t + l, tr->tok[v]);
        double a = tr->alpha[v], rho = (k->bugs & SD_TREE_BUG_NO_RHO) ? 1.0 : S_rho(p, q, a, tr->b[l], V), beta = S_beta(p, q, a, rho, V);
        double f = S_f(beta, tr->b[l]), fail = pow(1.0 - beta, (double)tr->b[l]);
        double *R = tr->law + v * V, mass = 0.0;
        for (size_t x = 0; x < V; x++) {
            double ax = p[x] * rho > a * q[x] ? a * q[x] / (rho * p[x]) : 1.0;
            double r = a * q[x] - p[x] * ax * f;
            R[x] = r > 0.0 ? r : 0.0;
            mass += R[x];
        }
        h[v] = v == 0 || (fail > 0.0 && mass >= fail) ? 1.0 : fail > 0.0 ? mass / fail : 0.0; /* root: 1 */
        S_normalise_or_q(R, V, q);
        size_t first = S_child0(tr, v, l);
        for (size_t j = 0; j < tr->b[l]; j++) {
            size_t u = first + j, x = tr->tok[u];
            if (x != SD_TREE_NONE)
                tr->alpha[u] = p[x] * rho > a * q[x] ? a * q[x] / (rho * p[x]) : 1.0;
        }
    }
    /* post-order: A[v] for the drafted tree, children before parents */
    for (size_t v = tr->nodes; v-- > 0;) {
        size_t l = sd_tree_depth_of(tr, v);
        if (tr->tok[v] == SD_TREE_NONE) {
            A[v] = 0.0;
            continue;
        }
        if (l == tr->D) {
            A[v] = tr->alpha[v];
            continue;
        }
        double none = 1.0;
        size_t first = S_child0(tr, v, l);
        for (size_t j = 0; j < tr->b[l]; j++)
            none *= 1.0 - A[first + j];
        A[v] = 1.0 - none * (1.0 - h[v]);
    }
    /* where the iteration ends: E = P(v's subtree is tried) */
    double *E = tr->P;
    E[0] = 1.0;
    for (size_t v = 0; v < tr->nodes; v++) {
        size_t l = sd_tree_depth_of(tr, v);
        tr->pi[v] = 0.0;
        if (tr->tok[v] == SD_TREE_NONE)
            continue;
        if (l == tr->D) {
            tr->pi[v] = E[v] * tr->alpha[v];
            S_bonus(tr, c, v, l);
            continue;
        }
        double e = E[v];
        size_t first = S_child0(tr, v, l);
        for (size_t j = 0; j < tr->b[l]; j++) {
            E[first + j] = e;
            e *= 1.0 - A[first + j];
        }
        tr->pi[v] = e * h[v];
    }
}

/* --- playing a plan (SD_TREE_PLAN) --------------------------------------------- */

static sd_tree_plan_fn S_provider;

void sd_tree_plan_provider(sd_tree_plan_fn fn)
{
    S_provider = fn;
}

int sd_tree_plan_available(void)
{
    return S_provider != NULL;
}

void sd_tree_plan_free(sd_tree_plan *plan)
{
    if (plan) {
        free(plan->ids);
        free(plan->stop);
        free(plan->emit);
        free(plan);
    }
}

/* The per-thread cache: one plan per (chain, context, shape, rule); a
 * context the provider cannot plan (the tree reaches the horizon's end:
 * no position for the token after it) is cached as NULL. */
#define S_PLAN_CACHE 8192
typedef struct S_plan_entry {
    const sd_chain *c;
    size_t t, a, D, b[SD_TREE_MAX_DEPTH];
    int draw;
    sd_tree_plan *plan;
} S_plan_entry;
static _Thread_local S_plan_entry S_cache[S_PLAN_CACHE];
static _Thread_local size_t S_ncache;

static sd_tree_plan *S_plan_get(const sd_tree *tr, const sd_chain *c, sd_tree_draw draw, int *ok)
{
    *ok = 0;
    for (size_t i = 0; i < S_ncache; i++) {
        S_plan_entry *e = &S_cache[i];
        if (e->c == c && e->t == tr->t && e->a == tr->tok[0] && e->D == tr->D && e->draw == (int)draw &&
            !memcmp(e->b, tr->b, tr->D * sizeof *tr->b)) {
            *ok = 1;
            return e->plan;
        }
    }
    if (!S_provider || S_ncache == S_PLAN_CACHE)
        return NULL;
    sd_params par;
    sd_params_defaults(&par, NULL);
    par.tree_depth = tr->D;
    for (size_t l = 0; l < tr->D; l++)
        par.tree[l] = tr->b[l];
    sd_tree_plan *plan = NULL;
    sd_error err;
    if (S_provider(c, tr->t, tr->tok[0], &par, (int)draw, &plan, &err))
        plan = NULL;
    S_plan_entry *e = &S_cache[S_ncache++];
    e->c = c;
    e->t = tr->t;
    e->a = tr->tok[0];
    e->D = tr->D;
    e->draw = (int)draw;
    memcpy(e->b, tr->b, tr->D * sizeof *tr->b);
    e->plan = plan;
    *ok = 1;
    return plan;
}

static int S_cmp_id(const void *x, const void *y)
{
    size_t a = *(const size_t *)x, b = *(const size_t *)y;
    return a < b ? -1 : a > b;
}

/* The plan's outcome for the drafted tree: find its path set, stop at each
 * of its paths (at the first node carrying it) with the plan's
 * probability, emit from the plan's law (or, under SD_TREE_BUG_PLAN_Q,
 * from q).  0 when there is no plan or the set is not in it. */
static int S_plan_outcome(sd_tree *tr, const sd_chain *c, const sd_tree_kind *k, sd_tree_draw draw)
{
    int cached;
    const sd_tree_plan *pl = S_plan_get(tr, c, draw, &cached);
    size_t V = tr->V, n = tr->nodes;
    if (!pl || pl->width != n - 1)
        return 0;
    size_t *id = malloc(2 * n * sizeof *id), *key = id ? id + n : NULL;
    if (!id)
        return 0;
    id[0] = 0;
    size_t m = 0;
    for (size_t v = 1; v < n; v++) {
        size_t w = sd_tree_parent(tr, v), l = sd_tree_depth_of(tr, v), off = 0, woff = 0, p = 1;
        if (tr->tok[v] == SD_TREE_NONE || id[w] == SIZE_MAX) {
            id[v] = SIZE_MAX;
            continue;
        }
        /* trie ids: Σ_{j<l} V^j + u; v's index is its parent's times V plus its token */
        for (size_t j = 0; j < l; j++, p *= V) {
            off += p;
            if (j + 1 < l)
                woff += p;
        }
        id[v] = off + (id[w] - woff) * V + tr->tok[v];
        key[m++] = id[v];
    }
    qsort(key, m, sizeof *key, S_cmp_id);
    size_t d = 0;
    for (size_t i = 0; i < m; i++)
        if (d == 0 || key[d - 1] != key[i])
            key[d++] = key[i];
    for (; d < pl->width; d++)
        key[d] = SIZE_MAX;
    size_t lo = 0, hi = pl->n, s = SIZE_MAX;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int cmp = 0;
        for (size_t i = 0; i < pl->width; i++)
            if (pl->ids[mid * pl->width + i] != key[i]) {
                cmp = pl->ids[mid * pl->width + i] < key[i] ? -1 : 1;
                break;
            }
        if (cmp == 0) {
            s = mid;
            break;
        }
        if (cmp < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (s == SIZE_MAX) {
        free(id);
        return 0;
    }
    for (size_t v = 0; v < n; v++) {
        tr->pi[v] = 0.0;
        memset(tr->law + v * V, 0, V * sizeof(double));
    }
    for (size_t kk = 0; kk <= pl->width; kk++) {
        size_t pidk = kk == 0 ? 0 : pl->ids[s * pl->width + kk - 1];
        if (pidk == SIZE_MAX)
            break;
        size_t v = 0;
        if (kk > 0)
            for (v = 1; v < n && id[v] != pidk; v++)
                ;
        double st = pl->stop[s * (pl->width + 1) + kk];
        if (v == n || !(st > 0.0))
            continue;
        tr->pi[v] = st;
        if (k->bugs & SD_TREE_BUG_PLAN_Q)
            memcpy(tr->law + v * V, sd_chain_q(c, tr->t + sd_tree_depth_of(tr, v), tr->tok[v]), V * sizeof(double));
        else
            memcpy(tr->law + v * V, pl->emit + pidk * V, V * sizeof(double));
    }
    free(id);
    return 1;
}

/* --- a rule given at run time (SD_TREE_CALLBACK) ------------------------------ */

/* The outcome "end at the root, emit from q" (after a failed rule). */
static void S_fallback(sd_tree *tr, const sd_chain *c)
{
    for (size_t v = 0; v < tr->nodes; v++)
        tr->pi[v] = v == 0 ? 1.0 : 0.0;
    S_bonus(tr, c, 0, 0);
}

/* Calls the rule and checks what it returns against the contract of
 * sd_tree_view (sd_verifier.h): pi >= 0 (a rounding -1e-12 clipped to 0),
 * 0 at absent nodes, Σ pi = 1 within 1e-9; law[v] >= 0 summing to 1 within
 * 1e-9 where pi[v] > 0 and a token follows.  Rows past the horizon and
 * rows of nodes never ended at are zeroed (the callers read only the rest). */
static int S_callback(sd_tree *tr, const sd_chain *c, const sd_tree_kind *k, sd_tree_draw draw, sd_error *err)
{
    size_t V = tr->V, n = tr->nodes;
    memset(tr->pi, 0, n * sizeof *tr->pi);
    memset(tr->law, 0, n * V * sizeof *tr->law);
    sd_tree_view view = {.V = V, .D = tr->D, .nodes = n, .t = tr->t, .draw = draw, .b = tr->b, .off = tr->off,
                         .tok = tr->tok, .parent = tr->up, .depth = tr->lev};
    sd_error own;
    sd_error *e = err ? err : &own;
    sd_error_clear(e);
    int rc = k->call(k->user, c, &tr->par, &view, tr->pi, tr->law, e);
    if (rc)
        return e->msg[0] ? rc : sd_error_set(e, rc, "verifier %s: its tree rule failed (status %d)", k->name, rc);
    double sum = 0.0;
    for (size_t v = 0; v < n; v++) {
        double p = tr->pi[v];
        if (p < 0.0 && p >= -1e-12)
            p = tr->pi[v] = 0.0;
        if (!(p >= 0.0 && p <= 1.0 + 1e-9))
            return sd_error_set(e, SD_EINTERNAL, "verifier %s: its tree rule gave pi[%zu] = %.17g at position "
                                "%zu; expected a probability in [0, 1]", k->name, v, p, tr->t);
        if (p > 0.0 && tr->tok[v] == SD_TREE_ABSENT)
            return sd_error_set(e, SD_EINTERNAL, "verifier %s: its tree rule gave pi[%zu] = %.17g to an absent "
                                "node; expected 0", k->name, v, p);
        sum += p;
        double *w = tr->law + v * V;
        if (!(p > 0.0) || tr->t + tr->lev[v] > c->T) {
            memset(w, 0, V * sizeof *w);
            continue;
        }
        double m = 0.0;
        for (size_t y = 0; y < V; y++) {
            if (!(w[y] >= 0.0 && w[y] <= 1.0 + 1e-9))
                return sd_error_set(e, SD_EINTERNAL, "verifier %s: its tree rule gave law[%zu][%zu] = %.17g; "
                                    "expected a probability", k->name, v, y, w[y]);
            m += w[y];
        }
        if (!(fabs(m - 1.0) <= 1e-9))
            return sd_error_set(e, SD_EINTERNAL, "verifier %s: its tree rule's law[%zu] sums to %.17g; expected "
                                "1 (within 1e-9) where pi[%zu] = %.3g > 0", k->name, v, m, v, p);
    }
    if (!(fabs(sum - 1.0) <= 1e-9))
        return sd_error_set(e, SD_EINTERNAL, "verifier %s: its tree rule's pi sums to %.17g over %zu nodes at "
                            "position %zu; expected 1 (within 1e-9)", k->name, sum, n, tr->t);
    return SD_OK;
}

int sd_tree_outcome_checked(sd_tree *tr, const sd_chain *c, const sd_tree_kind *k, sd_tree_draw draw,
                            sd_error *err)
{
    if (k->rule != SD_TREE_CALLBACK) {
        sd_tree_outcome(tr, c, k, draw);
        return SD_OK;
    }
    int rc = S_callback(tr, c, k, draw, err);
    if (rc)
        S_fallback(tr, c);
    return rc;
}

void sd_tree_outcome(sd_tree *tr, const sd_chain *c, const sd_tree_kind *k, sd_tree_draw draw)
{
    if (k->rule == SD_TREE_CALLBACK) {
        (void)sd_tree_outcome_checked(tr, c, k, draw, NULL);
        return;
    }
    if (k->rule == SD_TREE_SCALED) {
        S_scaled(tr, c, k, draw);
        return;
    }
    if (k->rule == SD_TREE_PLAN) {
        /* where no plan exists (the tree reaches the horizon's end, or no
         * provider), the iteration is verified from the root down as
         * tree-rrs does: lossless too, so the generation stays lossless */
        if (!S_plan_outcome(tr, c, k, draw))
            S_topdown(tr, c, k, draw);
    } else if (k->rule == SD_TREE_TRAVERSAL) {
        for (size_t v = 0; v < tr->nodes; v++)
            memset(tr->law + v * tr->V, 0, tr->V * sizeof(double));
        S_traversal(tr, c, k, draw);
    } else {
        S_topdown(tr, c, k, draw);
    }
}

/* --- the verifier pieces ---------------------------------------------------- */

typedef struct S_state {
    sd_tree *tr;
    double *w;
    sd_tree_draw draw;
    const sd_tree_kind *k;
} S_state;

const sd_params *sd_tree_params(const sd_tree_kind *k, const sd_params *par, sd_params *buf)
{
    if (par->tree_depth > 0)
        return par;
    sd_params_defaults(buf, sd_verifier_find(k->name));
    return buf;
}

int sd_tree_verifier_alloc(void **state, const sd_chain *c, const sd_params *par,
                           const sd_tree_kind *k, sd_error *err)
{
    const char *name = k->name;
    *state = NULL;
    sd_params def;
    par = sd_tree_params(k, par, &def);
    int rc = sd_tree_check_draw(k, sd_tree_draw_of(par), name, err);
    if (rc)
        return rc;
    S_state *s = calloc(1, sizeof *s);
    if (!s)
        return sd_error_set(err, SD_ENOMEM, "out of memory for --algo %s", name);
    s->draw = sd_tree_draw_of(par);
    s->k = k;
    rc = sd_tree_new(&s->tr, c->V, par, err);
    if (!rc && !(s->w = malloc(c->V * sizeof *s->w)))
        rc = sd_error_set(err, SD_ENOMEM, "out of memory for --algo %s", name);
    if (rc) {
        sd_tree_verifier_free(s);
        return rc;
    }
    *state = s;
    return SD_OK;
}

void sd_tree_verifier_free(void *state)
{
    S_state *s = state;
    if (!s)
        return;
    sd_tree_free(s->tr);
    free(s->w);
    free(s);
}

static int S_step(S_state *s, const sd_chain *c, const sd_tree_kind *k, sd_stream *rng, size_t n, size_t prev,
                  size_t *out, sd_iter *it, sd_error *err);

int sd_tree_verifier_step_own(void *state, const sd_chain *c, const sd_params *par, sd_stream *rng, size_t n,
                              size_t prev, size_t *out, sd_iter *it, sd_error *err)
{
    S_state *s = state;
    (void)par; /* read by alloc */
    return S_step(s, c, s->k, rng, n, prev, out, it, err);
}

int sd_tree_verifier_step(void *state, const sd_chain *c, const sd_params *par,
                          const sd_tree_kind *k, sd_stream *rng, size_t n, size_t prev,
                          size_t *out, sd_iter *it)
{
    (void)par; /* read by alloc */
    return S_step(state, c, k, rng, n, prev, out, it, NULL);
}

static int S_step(S_state *s, const sd_chain *c, const sd_tree_kind *k, sd_stream *rng, size_t n, size_t prev,
                  size_t *out, sd_iter *it, sd_error *err)
{
    sd_tree *tr = s->tr;
    size_t rest = c->T - n + 1, D = tr->d < rest ? tr->d : rest;
    sd_tree_draw draw = s->draw;
    sd_tree_cut(tr, D, n, prev);
    sd_tree_draft(tr, c, draw, rng, s->w);
    int rc = sd_tree_outcome_checked(tr, c, k, draw, err);
    if (rc)
        return rc;
    size_t v = sd_dist_sample(tr->pi, tr->nodes, 1.0, sd_stream_uniform(rng));
    size_t l = sd_tree_depth_of(tr, v);
    for (size_t u = v, i = l; i > 0; i--, u = sd_tree_parent(tr, u))
        out[i - 1] = tr->tok[u];
    it->target_calls = 1;
    it->accepted = l;
    it->emitted = l;
    it->rejected = l < D;
    if (n + l <= c->T) {
        out[l] = sd_dist_sample(tr->law + v * tr->V, tr->V, 1.0, sd_stream_uniform(rng));
        it->emitted = l + 1;
    }
    return SD_OK;
}
