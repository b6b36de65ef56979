/* sd_lp_clp.h — an LP built for GLPK solved by COIN-OR CLP instead
 * (lp/sd_lp_clp.c), with a certificate computed here, not trusted; and
 * the dual box and price check of a column-generation master on CLP. */
#ifndef SD_LP_CLP_H
#define SD_LP_CLP_H

#include <coin/Clp_C_Interface.h>
#include <glpk.h>
#include <stddef.h>

typedef struct sd_lp_clp_result {
    int optimal;            /* CLP's status 0 (proven optimal) */
    int clp_status;         /* CLP's status: 0 optimal, 1 infeasible, 2 unbounded,
                               3 stopped (limit), 4 errors */
    double optimum;         /* c·x at CLP's primal point */
    double dual_bound;      /* a bound on the optimum from CLP's row duals by
                               weak duality (>= optimum for max), recomputed */
    double primal_residual; /* max violation of a row or column bound by x */
} sd_lp_clp_result;

/* CLP's algorithms: primal simplex, dual simplex, barrier with crossover
 * (then the dual simplex from its point when the barrier stops short). */
enum { SD_LP_CLP_PRIMAL = 0, SD_LP_CLP_DUAL = 1, SD_LP_CLP_BARRIER = 2 };

/* Solves lp (glp_prob, objective direction as set) with CLP's algorithm
 * algo (SD_LP_CLP_*), time_limit seconds (0: none); lp is read, not
 * changed.  Returns 0, or -1 out of memory. */
int sd_lp_clp_solve(glp_prob *lp, int algo, double time_limit, sd_lp_clp_result *r);

/* --- a column-generation master on CLP with a box on its duals ----------------
 *
 * The master (minimising) has rows 0..nrows-1, row 0 the convexity row,
 * and its first 2(nrows-1) columns are the box (the box step of Marsten,
 * Hogan & Blankenship 1975; du Merle, Villeneuve, Desrosiers & Hansen 1999): for row r >= 1, column 2(r-1) is
 * -e_r of cost c_r + δ (a row's overflow paid at the box's top) and
 * column 2(r-1)+1 is +e_r of cost -(c_r - δ), open only where c_r - δ > 0,
 * so the row's dual is held in [max(0, c_r - δ), c_r + δ].  Used by
 * treelp/tree_lagrange.c and treelp/tree_ot_cg.c. */

/* Sets the box around cen[0..nrows-1] with half-width delta (infinite: the
 * box columns closed, no box); obj and up hold Clp_numberColumns(m)
 * doubles of scratch. */
void sd_lp_clp_box(Clp_Simplex *m, int nrows, const double *cen, double delta, double *obj, double *up);
/* The largest value of a box column in m's solution (0: no box column in use). */
double sd_lp_clp_box_used(Clp_Simplex *m, int nrows);
/* 1 if CLP's row prices y are dual feasible for the optimum it reports:
 * y_r <= 0 on the <= rows r >= 1, and every open column's reduced cost
 * c_j - y·a_j, recomputed from the matrix, >= 0, and 0 on a column in use
 * (1e-9).  CLP's primal simplex warm started after added columns can
 * report an optimum whose prices fail this; the caller then solves afresh. */
int sd_lp_clp_prices_ok(Clp_Simplex *m, int nrows);

#endif
