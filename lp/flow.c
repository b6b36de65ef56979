/* flow.c — real-capacity maximum flow by rounds of GLPK's integer
 * Ford–Fulkerson on the residual network (contract: sd_lp_flow.h).
 *
 * Why the rounds are exact in the limit.  Let x be a feasible flow of
 * value F and (S, T) any s-t cut of capacity U; then F <= max flow <= U
 * (weak duality), so G = U - F bounds the flow still to be found.  The
 * residual network of x has a maximum flow of value max flow - F <= G,
 * and it has one that is a sum of paths (no cycles), each arc carrying at
 * most G; capping every residual capacity at G keeps that flow, hence the
 * residual maximum.  Scaling by 2^30 / G and flooring shrinks each
 * capacity by less than one unit, so the integer maximum is within
 * (arcs of a minimal cut) units of the scaled real one; adding the
 * integer flow / scale to x (forward arcs) or subtracting it (reverse
 * arcs) keeps 0 <= x <= cap.  GLPK's minimal cut of the integer problem
 * is an s-t cut of the real network too; its real capacity is a new U. */
#include <assert.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <glpk.h>

#include "sd_lp.h"
#include "sd_lp_flow.h"

typedef struct S_arc {
    double cap, x;
} S_arc;

typedef struct S_vtx {
    int cut;
} S_vtx;

#define S_SCALE 1073741824.0 /* 2^30: each capacity and the total fit an int */

/* U of the cut whose source side is in_s (original capacities). */
static double S_cut(size_t na, const size_t *tail, const size_t *head, const double *cap,
                    const char *in_s)
{
    double u = 0.0;
    for (size_t a = 0; a < na; a++)
        if (in_s[tail[a]] && !in_s[head[a]])
            u += cap[a];
    return u;
}

static double S_value(size_t na, const size_t *tail, const size_t *head, const double *x, size_t s)
{
    double f = 0.0;
    for (size_t a = 0; a < na; a++) {
        if (tail[a] == s)
            f += x[a];
        if (head[a] == s)
            f -= x[a];
    }
    return f;
}

/* One round: integer max flow on the residual network of x, capacities
 * capped at g and scaled by S_SCALE / g; augments x and writes GLPK's
 * cut into in_s.  arcs and ref: room for 2 na entries.  -1 when GLPK
 * refuses. */
static int S_round(size_t nv, size_t na, const size_t *tail, const size_t *head,
                   const double *cap, size_t s, size_t t, double *x, double g,
                   glp_arc **arcs, long *ref, char *in_s)
{
    double scale = S_SCALE / g;
    glp_graph *G = glp_create_graph((int)sizeof(S_vtx), (int)sizeof(S_arc));
    glp_add_vertices(G, (int)nv);
    size_t m = 0;
    for (size_t a = 0; a < na; a++) {
        double fwd = floor(fmin(cap[a] - x[a], g) * scale);
        double bwd = floor(fmin(x[a], g) * scale);
        if (fwd >= 1.0) {
            arcs[m] = glp_add_arc(G, (int)tail[a] + 1, (int)head[a] + 1);
            ((S_arc *)arcs[m]->data)->cap = fwd;
            ref[m++] = (long)a + 1;
        }
        if (bwd >= 1.0) {
            arcs[m] = glp_add_arc(G, (int)head[a] + 1, (int)tail[a] + 1);
            ((S_arc *)arcs[m]->data)->cap = bwd;
            ref[m++] = -(long)a - 1;
        }
    }
    double sol;
    int rc = glp_maxflow_ffalg(G, (int)s + 1, (int)t + 1, (int)offsetof(S_arc, cap), &sol,
                               (int)offsetof(S_arc, x), (int)offsetof(S_vtx, cut));
    if (!rc) {
        for (size_t i = 0; i < nv; i++)
            in_s[i] = (char)((S_vtx *)G->v[i + 1]->data)->cut;
        for (size_t j = 0; j < m; j++) {
            double f = ((S_arc *)arcs[j]->data)->x / scale;
            if (f <= 0.0)
                continue;
            if (ref[j] > 0) {
                size_t a = (size_t)(ref[j] - 1);
                x[a] = fmin(cap[a], x[a] + f);
            } else {
                size_t a = (size_t)(-ref[j] - 1);
                x[a] = fmax(0.0, x[a] - f);
            }
        }
    }
    glp_delete_graph(G);
    return rc ? -1 : 0;
}

int sd_lp_flow_max(size_t nv, size_t na, const size_t *tail, const size_t *head,
                   const double *cap, size_t s, size_t t, double *x, double *value,
                   double *gap, sd_error *err)
{
    return sd_lp_flow_max_cut(nv, na, tail, head, cap, s, t, x, value, gap, NULL, err);
}

int sd_lp_flow_max_cut(size_t nv, size_t na, const size_t *tail, const size_t *head,
                       const double *cap, size_t s, size_t t, double *x, double *value,
                       double *gap, char *cut, sd_error *err)
{
    if (nv < 2 || nv > (size_t)INT_MAX - 1 || na > (size_t)INT_MAX / 2 - 1)
        return sd_error_set(err, SD_ETOOBIG, "flow network: %zu vertices, %zu arcs; GLPK indexes fewer than 2^31",
                            nv, na);
    for (size_t a = 0; a < na; a++)
        if (!(cap[a] >= 0.0 && cap[a] < HUGE_VAL))
            return sd_error_set(err, SD_EDATA, "flow network: arc %zu has capacity %g; expected a finite value >= 0",
                                a, cap[a]);
    glp_arc **arcs = malloc(2 * (na + 1) * sizeof *arcs);
    long *ref = malloc(2 * (na + 1) * sizeof *ref);
    char *in_s = calloc(nv, 1);
    if (!arcs || !ref || !in_s) {
        free(arcs);
        free(ref);
        free(in_s);
        return sd_error_set(err, SD_ENOMEM, "flow network: out of memory (%zu arcs)", na);
    }
    in_s[s] = 1; /* the trivial cut {s} */
    if (cut)
        memcpy(cut, in_s, nv);
    double u = S_cut(na, tail, head, cap, in_s), f = S_value(na, tail, head, x, s);
    int rc = SD_OK;
    for (int r = 0; r < SD_LP_FLOW_ROUNDS && u - f > SD_LP_FLOW_GAP; r++) {
        if (S_round(nv, na, tail, head, cap, s, t, x, u - f, arcs, ref, in_s)) {
            rc = sd_error_set(err, SD_ESOLVER, "flow network: glp_maxflow_ffalg refused the round %d data", r + 1);
            break;
        }
        f = S_value(na, tail, head, x, s);
        double c = S_cut(na, tail, head, cap, in_s);
        if (c < u) { /* the best cut so far: the one returned */
            u = c;
            if (cut)
                memcpy(cut, in_s, nv);
        }
    }
    *value = f;
    *gap = fmax(0.0, u - f);
    free(arcs);
    free(ref);
    free(in_s);
    return rc;
}

/* ---- minimum-cost transshipment (sd_lp_flow.h) ---------------------------- */

#define S_MAX_COST 1048576 /* 2^20: potentials stay exact in long and double */

typedef struct S_mcf {
    size_t nv, na;
    const size_t *tail, *head;
    const int *cost;
    const double *b;
    double *x;
    long *pi;
    size_t *off, *out; /* out-arcs of v: out[off[v] .. off[v+1]-1] */
    char *adm;         /* [na]: 1 admissible this phase (r = 0); 2 not, but
                          carrying flow, which may only decrease; 0 */
} S_mcf;

static long S_rc(const S_mcf *m, size_t a)
{
    return (long)m->cost[a] + m->pi[m->tail[a]] - m->pi[m->head[a]];
}

/* Out-arcs in CSR form and, in topological order (Kahn), π(v) = the
 * shortest distance to v from a virtual vertex joined to every vertex at
 * cost 0: π(head) <= π(tail) + cost, i.e. every r_a >= 0.  -1 on a cycle. */
static int S_mcf_init(S_mcf *m)
{
    size_t nv = m->nv, na = m->na, *indeg = calloc(nv, sizeof *indeg), *queue = malloc(nv * sizeof *queue);
    if (!indeg || !queue) {
        free(indeg);
        free(queue);
        return -2;
    }
    memset(m->off, 0, (nv + 1) * sizeof *m->off);
    for (size_t a = 0; a < na; a++) {
        m->off[m->tail[a] + 1]++;
        indeg[m->head[a]]++;
    }
    for (size_t v = 0; v < nv; v++)
        m->off[v + 1] += m->off[v];
    size_t *fill = queue; /* borrowed as the fill pointers, then the queue */
    for (size_t v = 0; v < nv; v++)
        fill[v] = m->off[v];
    for (size_t a = 0; a < na; a++)
        m->out[fill[m->tail[a]]++] = a;
    size_t qh = 0, qt = 0;
    for (size_t v = 0; v < nv; v++) {
        m->pi[v] = 0;
        if (!indeg[v])
            queue[qt++] = v;
    }
    while (qh < qt) {
        size_t v = queue[qh++];
        for (size_t k = m->off[v]; k < m->off[v + 1]; k++) {
            size_t a = m->out[k], w = m->head[a];
            long d = m->pi[v] + m->cost[a];
            if (d < m->pi[w])
                m->pi[w] = d;
            if (--indeg[w] == 0)
                queue[qt++] = w;
        }
    }
    free(indeg);
    free(queue);
    return qt == nv ? 0 : -1;
}

/* The balance left at v: supply not yet sent (b > 0) or demand not yet
 * received (b < 0, returned as a positive number). */
static double S_left(const S_mcf *m, const double *net, size_t v)
{
    return m->b[v] > 0 ? m->b[v] - net[v] : m->b[v] < 0 ? -m->b[v] + net[v] : 0.0;
}

/* 1 if v has balance left beyond the rounding of its own updates (a
 * greedy push of the exact remainder can leave an ulp behind). */
static int S_has_left(const S_mcf *m, const double *net, size_t v)
{
    return S_left(m, net, v) > 8.0 * DBL_EPSILON * fabs(m->b[v]);
}

/* A greedy start for one phase: from each supply vertex with supply
 * left, depth-first along admissible arcs (uncapacitated) to demand
 * vertices with demand left, pushing the smaller of the two; vertices
 * from which no such demand is reachable are marked dead for the rest of
 * the pass (demand only decreases), and each vertex keeps its current
 * arc, so a pass costs O(arcs + pushes × path length).  net[v] = out(v)
 * - in(v) is kept up to date.  GLPK's augmenting paths then repair what
 * the greedy choice got wrong. */
static void S_greedy(S_mcf *m, double *net, size_t *cur, char *dead, size_t *stack)
{
    size_t nv = m->nv;
    memset(dead, 0, nv);
    for (size_t v = 0; v < nv; v++)
        cur[v] = m->off[v];
    for (size_t s = 0; s < nv; s++) {
        while (m->b[s] > 0 && S_has_left(m, net, s) && !dead[s]) {
            size_t depth = 0, v = s; /* stack[i]: the arc taken at depth i */
            int found = 0;
            while (!found) {
                if (v != s && m->b[v] < 0 && S_has_left(m, net, v)) {
                    found = 1;
                    break;
                }
                size_t a = SIZE_MAX;
                while (cur[v] < m->off[v + 1]) {
                    size_t c = m->out[cur[v]];
                    if (m->adm[c] == 1 && !dead[m->head[c]]) {
                        a = c;
                        break;
                    }
                    cur[v]++;
                }
                if (a == SIZE_MAX) {
                    dead[v] = 1;
                    if (depth == 0)
                        break;
                    v = m->tail[stack[--depth]];
                    cur[v]++;
                    continue;
                }
                stack[depth++] = a;
                v = m->head[a];
            }
            if (!found)
                break;
            double push = fmin(S_left(m, net, s), S_left(m, net, v));
            for (size_t i = 0; i < depth; i++)
                m->x[stack[i]] += push;
            net[s] += push;
            net[v] -= push;
        }
    }
}

int sd_lp_flow_mincost(size_t nv, size_t na, const size_t *tail, const size_t *head,
                       const int *cost, const double *b, double *x, double *cost_x,
                       double *gap, size_t *phases, sd_error *err)
{
    *phases = 0;
    *cost_x = *gap = NAN;
    if (nv < 1 || nv > (size_t)INT_MAX / 2 - 2 || na > (size_t)INT_MAX / 4)
        return sd_error_set(err, SD_ETOOBIG, "flow network: %zu vertices, %zu arcs; GLPK indexes fewer than 2^31",
                            nv, na);
    double total = 0.0, need = 0.0;
    size_t nsup = 0, ndem = 0;
    for (size_t v = 0; v < nv; v++) {
        if (!isfinite(b[v]))
            return sd_error_set(err, SD_EDATA, "flow network: vertex %zu has balance %g; expected a finite value",
                                v, b[v]);
        if (b[v] > 0)
            total += b[v], nsup++;
        else if (b[v] < 0)
            need -= b[v], ndem++;
    }
    for (size_t a = 0; a < na; a++)
        if (cost[a] > S_MAX_COST || cost[a] < -S_MAX_COST)
            return sd_error_set(err, SD_EDATA, "flow network: arc %zu has cost %d; expected |cost| <= %d", a,
                                cost[a], S_MAX_COST);
    S_mcf m = {nv, na, tail, head, cost, b, x, NULL, NULL, NULL, NULL};
    size_t fa = na + nsup + ndem, fv = nv + 2, src = nv, snk = nv + 1;
    m.pi = malloc(nv * sizeof *m.pi);
    m.off = malloc((nv + 1) * sizeof *m.off);
    m.out = malloc((na ? na : 1) * sizeof *m.out);
    m.adm = malloc(na ? na : 1);
    double *net = malloc(nv * sizeof *net), *fcap = malloc(fa * sizeof *fcap), *fx = malloc(fa * sizeof *fx);
    size_t *ftail = malloc(fa * sizeof *ftail), *fhead = malloc(fa * sizeof *fhead), *fref = malloc(fa * sizeof *fref);
    size_t *cur = malloc(nv * sizeof *cur), *stack = malloc(nv * sizeof *stack);
    char *dead = malloc(nv), *cut = malloc(fv);
    int rc = SD_OK;
    if (!m.pi || !m.off || !m.out || !m.adm || !net || !fcap || !fx || !ftail || !fhead || !fref || !cur ||
        !stack || !dead || !cut) {
        rc = sd_error_set(err, SD_ENOMEM, "flow network: out of memory (%zu arcs)", na);
        goto done;
    }
    int ir = S_mcf_init(&m);
    if (ir) {
        rc = ir == -1 ? sd_error_set(err, SD_EDATA, "flow network: the arcs contain a cycle; expected a DAG")
                      : sd_error_set(err, SD_ENOMEM, "flow network: out of memory (%zu vertices)", nv);
        goto done;
    }
    memset(x, 0, na * sizeof *x);
    memset(net, 0, nv * sizeof *net);
    /* inner arcs never bind: a cut through one has capacity above any flow */
    double big = 2.0 * (total + need) + 1.0;
    double routed = 0.0;
    for (;;) {
        if (++*phases > SD_LP_MCF_PHASES) {
            rc = sd_error_set(err, SD_ESOLVER, "flow network: no optimum after %d phases", SD_LP_MCF_PHASES);
            goto done;
        }
        for (size_t a = 0; a < na; a++)
            m.adm[a] = (char)(S_rc(&m, a) == 0 ? 1 : x[a] > 0.0 ? 2 : 0);
        S_greedy(&m, net, cur, dead, stack);
        /* the phase's network: admissible arcs, source and sink arcs */
        size_t k = 0;
        for (size_t a = 0; a < na; a++)
            if (m.adm[a])
                ftail[k] = tail[a], fhead[k] = head[a], fcap[k] = m.adm[a] == 1 ? big : x[a], fx[k] = x[a],
                fref[k++] = a;
        size_t inner = k;
        for (size_t v = 0; v < nv; v++) {
            if (b[v] > 0)
                ftail[k] = src, fhead[k] = v, fcap[k] = b[v], fx[k] = fmin(b[v], fmax(0.0, net[v])), fref[k++] = v;
            else if (b[v] < 0)
                ftail[k] = v, fhead[k] = snk, fcap[k] = -b[v], fx[k] = fmin(-b[v], fmax(0.0, -net[v])),
                fref[k++] = v;
        }
        double value, fgap;
        if ((rc = sd_lp_flow_max_cut(fv, k, ftail, fhead, fcap, src, snk, fx, &value, &fgap, cut, err)))
            goto done;
        memset(net, 0, nv * sizeof *net);
        for (size_t i = 0; i < inner; i++) {
            size_t a = fref[i];
            x[a] = fx[i];
            net[tail[a]] += fx[i];
            net[head[a]] -= fx[i];
        }
        routed = value;
        if (total - routed <= SD_LP_FLOW_GAP)
            break;
        /* raise the potentials of the sink side by θ */
        long theta = LONG_MAX;
        int usable = 1;
        for (size_t a = 0; a < na && usable; a++)
            if (cut[tail[a]] && !cut[head[a]]) {
                if (m.adm[a] == 1) /* uncapacitated: not at a minimal cut */
                    usable = 0;
                else if (S_rc(&m, a) < theta)
                    theta = S_rc(&m, a);
            }
        double rise = 0.0; /* Σb - cut capacity: the dual objective's rise per unit θ */
        for (size_t v = 0; v < nv; v++)
            if (!cut[v])
                rise -= b[v];
        /* No arc to raise across, or a cut that does not raise the dual:
         * stop; *gap then says how far from optimal the flow is. */
        if (!usable || theta == LONG_MAX || !(rise > 0.0))
            break;
        for (size_t v = 0; v < nv; v++)
            if (!cut[v])
                m.pi[v] += theta;
    }
    double c = 0.0, d = 0.0;
    for (size_t a = 0; a < na; a++)
        c += (double)cost[a] * x[a];
    for (size_t v = 0; v < nv; v++)
        d -= (double)m.pi[v] * b[v];
    *cost_x = c;
    *gap = fmax(0.0, c - d);
done:
    free(m.pi);
    free(m.off);
    free(m.out);
    free(m.adm);
    free(net);
    free(fcap);
    free(fx);
    free(ftail);
    free(fhead);
    free(fref);
    free(cur);
    free(stack);
    free(dead);
    free(cut);
    return rc;
}

/* ---- networks of the transport LPs ---------------------------------------- */

int sd_lp_net_init(sd_lp_net *n, size_t nv, size_t max_arcs, const char *what, sd_error *err)
{
    memset(n, 0, sizeof *n);
    n->nv = nv;
    n->cap = max_arcs;
    n->tail = malloc((max_arcs ? max_arcs : 1) * sizeof *n->tail);
    n->head = malloc((max_arcs ? max_arcs : 1) * sizeof *n->head);
    n->cost = malloc((max_arcs ? max_arcs : 1) * sizeof *n->cost);
    n->x = malloc((max_arcs ? max_arcs : 1) * sizeof *n->x);
    n->b = calloc(nv ? nv : 1, sizeof *n->b);
    if (!n->tail || !n->head || !n->cost || !n->x || !n->b) {
        sd_lp_net_free(n);
        return sd_error_set(err, SD_ENOMEM, "%s: out of memory for the flow network (%zu arcs)", what, max_arcs);
    }
    return SD_OK;
}

void sd_lp_net_free(sd_lp_net *n)
{
    free(n->tail);
    free(n->head);
    free(n->cost);
    free(n->x);
    free(n->b);
    memset(n, 0, sizeof *n);
}

size_t sd_lp_net_arc(sd_lp_net *n, size_t tail, size_t head, int cost)
{
    assert(n->na < n->cap && tail < n->nv && head < n->nv);
    n->tail[n->na] = tail;
    n->head[n->na] = head;
    n->cost[n->na] = cost;
    return n->na++;
}

size_t sd_lp_trie_id(size_t V, size_t l, size_t u)
{
    size_t base = 0, p = 1;
    for (size_t j = 0; j < l; j++, p *= V)
        base += p;
    return base + u;
}

void sd_lp_net_target_trie(sd_lp_net *n, size_t base, size_t V, size_t L, double *const *Q)
{
    size_t m = 1;
    for (size_t l = 0; l < L; l++, m *= V) {
        size_t here = base + sd_lp_trie_id(V, l, 0), below = base + sd_lp_trie_id(V, l + 1, 0);
        for (size_t u = 0; u < m; u++)
            for (size_t y = 0; y < V; y++)
                if (Q[l + 1][u * V + y] > 0)
                    sd_lp_net_arc(n, here + u, below + u * V + y, 0);
    }
    size_t leaves = base + sd_lp_trie_id(V, L, 0);
    for (size_t y = 0; y < m; y++)
        n->b[leaves + y] = -Q[L][y];
}

int sd_lp_net_solve_max(sd_lp_net *n, sd_lp_result *res, sd_error *err)
{
    double cost, gap;
    size_t phases;
    res->variables = n->na;
    res->constraints = n->nv;
    res->nonzeros = 2 * n->na;
    snprintf(res->method, sizeof res->method, "flow");
    int rc = sd_lp_flow_mincost(n->nv, n->na, n->tail, n->head, n->cost, n->b, n->x, &cost, &gap, &phases, err);
    if (rc) {
        snprintf(res->status, sizeof res->status, "solver failed");
        return rc;
    }
    res->optimal = gap <= SD_LP_MCF_GAP;
    res->optimum = res->optimal ? -cost : NAN;
    snprintf(res->status, sizeof res->status, "%s", res->optimal ? "optimal" : "flow gap too large");
    return SD_OK;
}

int sd_lp_chunks_put(sd_lp_chunks *l, size_t x, double m)
{
    if (!(m > 0.0))
        return SD_OK;
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 256;
        sd_lp_chunk *c = realloc(l->c, cap * sizeof *c);
        if (!c)
            return SD_ENOMEM;
        l->c = c;
        l->cap = cap;
    }
    l->c[l->n].x = x;
    l->c[l->n++].m = m;
    return SD_OK;
}
