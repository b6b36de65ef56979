/* pareto.c — the rejection/bias Pareto LP of a single-token verifier
 * (Yin et al. 2024, §4, Theorems 4–5).
 *
 * A verifier accepts the draft token x ~ p with probability b(x) and
 * otherwise outputs a token from some law P.  With a(x) = b(x) p(x) in
 * [0, p(x)] (accepted mass) and m(x) = (1 - Σa) P(x) >= 0 (residual mass)
 * the output law is a + m, Σa + Σm = 1, and the rejection probability is
 * ρ = 1 - Σa.  The LP
 *   min ½ Σ_x s(x)   s.t.  s >= a + m - q,  s >= q - a - m,
 *                          Σ a = 1 - ρ,  Σ a + Σ m = 1,
 * gives the least TV(output, q) at rejection probability ρ.  Theorem 5:
 * it is the straight line TV(p,q) - ρ for ρ in [0, TV]; for ρ >= TV the
 * output can be q exactly (take a <= min(p,q), possible since
 * Σ min(p,q) = 1 - TV >= 1 - ρ), so the optimum is max(0, TV - ρ). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../src/sd_dist.h"
#include "sd_lp.h"

sd_lp_size sd_lp_pareto_size(size_t V)
{
    sd_lp_size s = {0};
    s.vars = sd_lp_mul(V, 3);
    s.rows = sd_lp_add(sd_lp_mul(V, 2), 2);
    s.nnz = sd_lp_mul(V, 9);
    snprintf(s.what, sizeof s.what, "pareto at V = %zu", V);
    return s;
}

typedef struct S_par {
    const double *p, *q;
    size_t V;
    double rho;
    double *sol; /* [V][3]: a, m, s */
} S_par;

static int S_build(sd_lp_builder *b, void *ctx, sd_error *err)
{
    (void)err;
    S_par *o = ctx;
    int racc = sd_lp_row_fixed(b, 1.0 - o->rho), rall = sd_lp_row_fixed(b, 1.0);
    for (size_t x = 0; x < o->V; x++) {
        int ja = sd_lp_col(b, 0.0, o->p[x], 0.0);
        int jm = sd_lp_col(b, 0.0, HUGE_VAL, 0.0);
        int js = sd_lp_col(b, 0.0, HUGE_VAL, 0.5);
        sd_lp_entry(b, racc, ja, 1.0);
        sd_lp_entry(b, rall, ja, 1.0);
        sd_lp_entry(b, rall, jm, 1.0);
        int up = sd_lp_row_lower(b, -o->q[x]); /* s - a - m >= -q */
        sd_lp_entry(b, up, js, 1.0);
        sd_lp_entry(b, up, ja, -1.0);
        sd_lp_entry(b, up, jm, -1.0);
        int dn = sd_lp_row_lower(b, o->q[x]); /* s + a + m >= q */
        sd_lp_entry(b, dn, js, 1.0);
        sd_lp_entry(b, dn, ja, 1.0);
        sd_lp_entry(b, dn, jm, 1.0);
    }
    return SD_OK;
}

static int S_read(glp_prob *lp, void *ctx, sd_error *err)
{
    (void)err;
    S_par *o = ctx;
    /* columns were added as (a, m, s) per token: 3x+1, 3x+2, 3x+3 */
    for (size_t i = 0; i < 3 * o->V; i++)
        o->sol[i] = fmax(0.0, glp_get_col_prim(lp, (int)i + 1));
    return SD_OK;
}

int sd_lp_pareto(const double *p, const double *q, size_t V, double rho,
                 const sd_lp_opts *opts, sd_lp_result *res, sd_lp_plan **plan,
                 sd_error *err)
{
    sd_lp_result_reset(res, plan);
    if (V == 0)
        return sd_error_set(err, SD_EUSAGE, "pareto: the vocabulary is empty");
    if (!(rho >= 0.0 && rho <= 1.0))
        return sd_error_set(err, SD_EUSAGE, "pareto: --reject %g is out of range; expected 0 to 1", rho);
    double sum;
    if (sd_dist_check(p, V, 1e-9, &sum) >= 0 || sd_dist_check(q, V, 1e-9, &sum) >= 0)
        return sd_error_set(err, SD_EDATA, "pareto: p and q must be probability vectors");
    sd_lp_size sz = sd_lp_pareto_size(V);
    const char *what = sz.what;
    int rc = sd_lp_check_size(&sz, opts && opts->max_vars ? opts->max_vars : SD_LP_DEFAULT_MAX_VARS, err);
    if (rc)
        return rc;
    S_par o = {p, q, V, rho, calloc(3 * V, sizeof(double))};
    if (!o.sol)
        return sd_error_set(err, SD_ENOMEM, "%s: out of memory", what);
    rc = sd_lp_solve(&sz, 0, opts, S_build, S_read, &o, res, err);
    if (!rc && plan && res->optimal) {
        size_t group = 1;
        sd_lp_plan *pl = sd_lp_plan_new("x,p,q,accept_mass,b,residual_mass", 1, &group, 5, V);
        int bad = !pl;
        for (size_t x = 0; !bad && x < V; x++) {
            double a = o.sol[3 * x], vals[5] = {p[x], q[x], a, p[x] > 0 ? fmin(1.0, a / p[x]) : 1.0,
                                                o.sol[3 * x + 1]};
            bad = sd_lp_plan_add(pl, &x, vals) != SD_OK;
        }
        if (bad) {
            sd_lp_plan_free(pl);
            pl = NULL;
            rc = sd_error_set(err, SD_ENOMEM, "%s: out of memory for the plan", what);
        }
        *plan = pl;
    }
    free(o.sol);
    return rc;
}
