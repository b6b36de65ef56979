/* sd_lp_clp.h — an LP built for GLPK solved by COIN-OR CLP instead
 * (lp/sd_lp_clp.c), with a certificate computed here, not trusted. */
#ifndef SD_LP_CLP_H
#define SD_LP_CLP_H

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

#endif
