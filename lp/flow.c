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
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <glpk.h>

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
    double u = S_cut(na, tail, head, cap, in_s), f = S_value(na, tail, head, x, s);
    int rc = SD_OK;
    for (int r = 0; r < SD_LP_FLOW_ROUNDS && u - f > SD_LP_FLOW_GAP; r++) {
        if (S_round(nv, na, tail, head, cap, s, t, x, u - f, arcs, ref, in_s)) {
            rc = sd_error_set(err, SD_ESOLVER, "flow network: glp_maxflow_ffalg refused the round %d data", r + 1);
            break;
        }
        f = S_value(na, tail, head, x, s);
        u = fmin(u, S_cut(na, tail, head, cap, in_s));
    }
    *value = f;
    *gap = fmax(0.0, u - f);
    free(arcs);
    free(ref);
    free(in_s);
    return rc;
}
