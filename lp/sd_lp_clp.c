/* sd_lp_clp.c — an LP built for GLPK solved by COIN-OR CLP; the box and
 * the price check of a column-generation master (sd_lp_clp.h).
 *
 * The problem max (or min) c·x subject to rl <= A x <= ru, l <= x <= u is
 * copied from GLPK's problem into CLP's column-major form and solved by
 * CLP's simplex.  The certificate is recomputed here from CLP's row duals
 * y by weak duality (Lagrangian relaxation of the rows), valid for any y:
 *   max c·x <= L(y) = Σ_j max_{x_j∈[l_j,u_j]} (c - Aᵀy)_j x_j
 *                    + Σ_i max_{r_i∈[rl_i,ru_i]} y_i r_i
 * (for a minimisation the min and the reverse inequality).  CLP's sign
 * convention for the duals of a maximisation is not relied upon: L is
 * evaluated at y and -y and the tighter finite bound kept.  A reduced
 * cost below 1e-12 in size against an infinite bound counts as zero (the
 * bound then holds up to 1e-12 times the variable's size).  The primal
 * residual is the largest violation of a row or column bound by x. */
#include "sd_lp_clp.h"

#include <coin/Clp_C_Interface.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static double S_lagrange(int n, int m, const int *start, const int *index, const double *value,
                         const double *c, const double *l, const double *u, const double *rl, const double *ru,
                         const double *y, double sgn, int maximise)
{
    double L = 0.0;
    for (int j = 0; j < n; j++) {
        double d = c[j];
        for (int k = start[j]; k < start[j + 1]; k++)
            d -= value[k] * sgn * y[index[k]];
        if (fabs(d) < 1e-12)
            continue;
        /* max: d>0 takes u, d<0 takes l; min: the reverse */
        double b = ((d > 0) == (maximise != 0)) ? u[j] : l[j];
        if (!isfinite(b))
            return maximise ? INFINITY : -INFINITY;
        L += d * b;
    }
    for (int i = 0; i < m; i++) {
        double yi = sgn * y[i];
        if (yi == 0.0)
            continue;
        double b = ((yi > 0) == (maximise != 0)) ? ru[i] : rl[i];
        if (!isfinite(b))
            return maximise ? INFINITY : -INFINITY;
        L += yi * b;
    }
    return L;
}

static void S_bounds(int type, double lb, double ub, double *lo, double *hi)
{
    *lo = (type == GLP_LO || type == GLP_DB || type == GLP_FX) ? lb : -INFINITY;
    *hi = (type == GLP_UP || type == GLP_DB || type == GLP_FX) ? ub : INFINITY;
}

int sd_lp_clp_solve(glp_prob *lp, int algo, double time_limit, sd_lp_clp_result *r)
{
    int n = glp_get_num_cols(lp), m = glp_get_num_rows(lp), nz = glp_get_num_nz(lp);
    int maximise = glp_get_obj_dir(lp) == GLP_MAX;
    int *start = malloc((size_t)(n + 1) * sizeof *start), *index = malloc((size_t)(nz + 1) * sizeof *index);
    double *value = malloc((size_t)(nz + 1) * sizeof *value);
    double *c = malloc((size_t)n * sizeof *c), *l = malloc((size_t)n * sizeof *l), *u = malloc((size_t)n * sizeof *u);
    double *rl = malloc((size_t)m * sizeof *rl + 1), *ru = malloc((size_t)m * sizeof *ru + 1);
    int *ind = malloc((size_t)(m + 1) * sizeof *ind);
    double *val = malloc((size_t)(m + 1) * sizeof *val);
    int rc = -1;
    if (!start || !index || !value || !c || !l || !u || !rl || !ru || !ind || !val)
        goto out;
    int k = 0;
    for (int j = 1; j <= n; j++) {
        start[j - 1] = k;
        int len = glp_get_mat_col(lp, j, ind, val);
        for (int t = 1; t <= len; t++, k++) {
            index[k] = ind[t] - 1;
            value[k] = val[t];
        }
        c[j - 1] = glp_get_obj_coef(lp, j);
        S_bounds(glp_get_col_type(lp, j), glp_get_col_lb(lp, j), glp_get_col_ub(lp, j), &l[j - 1], &u[j - 1]);
    }
    start[n] = k;
    for (int i = 1; i <= m; i++)
        S_bounds(glp_get_row_type(lp, i), glp_get_row_lb(lp, i), glp_get_row_ub(lp, i), &rl[i - 1], &ru[i - 1]);
    Clp_Simplex *model = Clp_newModel();
    Clp_setLogLevel(model, 0);
    /* CLP reads COIN_DBL_MAX as infinite */
    for (int j = 0; j < n; j++) {
        if (!isfinite(l[j]))
            l[j] = -DBL_MAX;
        if (!isfinite(u[j]))
            u[j] = DBL_MAX;
    }
    for (int i = 0; i < m; i++) {
        if (!isfinite(rl[i]))
            rl[i] = -DBL_MAX;
        if (!isfinite(ru[i]))
            ru[i] = DBL_MAX;
    }
    Clp_loadProblem(model, n, m, start, index, value, l, u, c, rl, ru);
    Clp_setOptimizationDirection(model, maximise ? -1.0 : 1.0);
    /* CLP's default tolerances (1e-7) left a primal residual of 1.6e-6
     * on tree-valid --tree 2,2 at V = 5; 1e-10 keeps it under 1e-9 */
    Clp_setPrimalTolerance(model, 1e-10);
    Clp_setDualTolerance(model, 1e-10);
    if (time_limit > 0)
        Clp_setMaximumSeconds(model, time_limit);
    /* The barrier with crossover to a basic solution was measured fastest
     * on tree-valid's aggregated LP (--tree 3,1 at V = 6: 0.74 s CPU
     * against the dual simplex's 2.1 s, the primal's 1.8 s and CLP's
     * initialSolve's 13 s; at V = 8, 11.5 s against 118 s); the dual
     * simplex continues from its point when it stops short of optimal. */
    if (algo == SD_LP_CLP_BARRIER) {
        Clp_initialBarrierSolve(model);
        if (Clp_status(model) != 0 && Clp_status(model) != 3)
            Clp_dual(model, 0);
    } else if (algo == SD_LP_CLP_DUAL)
        Clp_dual(model, 0);
    else
        Clp_primal(model, 0);
    r->clp_status = Clp_status(model);
    r->optimal = r->clp_status == 0;
    const double *x = Clp_getColSolution(model), *y = Clp_getRowPrice(model);
    double obj = 0.0, res = 0.0;
    for (int j = 0; j < n; j++) {
        obj += c[j] * x[j];
        res = fmax(res, fmax(l[j] - x[j], x[j] - u[j]));
    }
    double *ax = calloc((size_t)m + 1, sizeof *ax);
    if (!ax) {
        Clp_deleteModel(model);
        goto out;
    }
    for (int j = 0; j < n; j++)
        for (int t = start[j]; t < start[j + 1]; t++)
            ax[index[t]] += value[t] * x[j];
    for (int i = 0; i < m; i++)
        res = fmax(res, fmax(rl[i] - ax[i], ax[i] - ru[i]));
    free(ax);
    for (int j = 0; j < n; j++) {
        if (l[j] < -1e299)
            l[j] = -INFINITY;
        if (u[j] > 1e299)
            u[j] = INFINITY;
    }
    for (int i = 0; i < m; i++) {
        if (rl[i] < -1e299)
            rl[i] = -INFINITY;
        if (ru[i] > 1e299)
            ru[i] = INFINITY;
    }
    double a = S_lagrange(n, m, start, index, value, c, l, u, rl, ru, y, 1.0, maximise);
    double b = S_lagrange(n, m, start, index, value, c, l, u, rl, ru, y, -1.0, maximise);
    r->dual_bound = maximise ? fmin(a, b) : fmax(a, b);
    r->optimum = obj;
    r->primal_residual = res;
    Clp_deleteModel(model);
    rc = 0;
out:
    free(start);
    free(index);
    free(value);
    free(c);
    free(l);
    free(u);
    free(rl);
    free(ru);
    free(ind);
    free(val);
    return rc;
}

void sd_lp_clp_box(Clp_Simplex *m, int nrows, const double *cen, double delta, double *obj, double *up)
{
    int nc = Clp_numberColumns(m), fin = isfinite(delta);
    memcpy(obj, Clp_getObjCoefficients(m), (size_t)nc * sizeof *obj);
    memcpy(up, Clp_getColUpper(m), (size_t)nc * sizeof *up);
    for (int r = 1; r < nrows; r++) {
        int j = 2 * (r - 1);
        up[j] = fin ? DBL_MAX : 0.0;
        up[j + 1] = fin && cen[r] - delta > 0.0 ? DBL_MAX : 0.0; /* else the dual is >= 0 already */
        obj[j] = fin ? cen[r] + delta : 0.0;
        obj[j + 1] = fin ? -fmax(0.0, cen[r] - delta) : 0.0;
    }
    Clp_chgObjCoefficients(m, obj);
    Clp_chgColumnUpper(m, up);
}

double sd_lp_clp_box_used(Clp_Simplex *m, int nrows)
{
    const double *sol = Clp_getColSolution(m);
    double most = 0.0;
    for (int j = 0; j < 2 * (nrows - 1); j++)
        most = fmax(most, sol[j]);
    return most;
}

int sd_lp_clp_prices_ok(Clp_Simplex *m, int nrows)
{
    const double *y = Clp_getRowPrice(m), *ob = Clp_getObjCoefficients(m);
    const double *up = Clp_getColUpper(m), *x = Clp_getColSolution(m);
    const CoinBigIndex *vs = Clp_getVectorStarts(m);
    const int *ri = Clp_getIndices(m), *len = Clp_getVectorLengths(m);
    const double *el = Clp_getElements(m);
    for (int r = 1; r < nrows; r++)
        if (y[r] > 1e-9)
            return 0;
    for (int j = 0; j < Clp_numberColumns(m); j++) {
        if (!(up[j] > 0.0))
            continue;
        double dj = ob[j];
        for (CoinBigIndex k = vs[j]; k < vs[j] + len[j]; k++)
            dj -= y[ri[k]] * el[k];
        if (dj < -1e-9 || (x[j] > 1e-9 && dj > 1e-9))
            return 0;
    }
    return 1;
}
