/* sd_exact_batch.c — exact rejections of batch speculative decoding
 * (Yin et al. 2024, Theorem 3, App. D.1 eq. 22; Proposition 1,
 * App. D.2).  See sd_exact_batch.h for the contracts.
 *
 * Two independent computations of E[N_rej]:
 *
 * 1. The recursion of Theorem 3 (the paper's eq. 22 summed over histories,
 *    which the Markov property reduces to x_{n-1}):  F_{n-1}(a) is the
 *    probability that x_{n-1} = a was produced by a rejection (F_0 = init:
 *    position 1 starts an iteration), and Q_{n-1} the target marginal.
 *
 * 2. A dynamic program over the state (x_{n-1}, fresh or continuing) that
 *    uses neither unbiasedness nor the residual identity
 *    q = Σ_m (Π_{j<m} r_j) min(p, q^m) + R q^{M+1}: it propagates the two
 *    sub-probabilities G (fresh) and C (continuing) with the acceptance
 *    law of the first-token round built term by term from the normalised
 *    residuals q^m.
 *
 *    At a fresh position (after a rejection, or n = 1) the M first tokens
 *    x̃^m ~ p are tried in turn against q^m; the m-th is accepted and
 *    emitted as b with probability (Π_{j<m} r_j) min(p(b), q^m(b)), and all
 *    fail with probability R = Π_m r_m, emitting b ~ q^{M+1}.  At a
 *    continuing position (x_{n-1} was an accepted draft token) the chosen
 *    draft's next token x̃_n ~ p_n(.|x_{n-1}) (the chain is Markov, and the
 *    draft's later tokens are drawn independently of the acceptance
 *    events) is accepted with min(1, q/p): emitted b with min(p,q)(b),
 *    rejected with TV and b ~ [q-p]+.  Accepted -> next position
 *    continuing; rejected -> fresh.  With lookahead to the horizon a draft
 *    never runs out, so there is no other way to start an iteration.
 *
 *    G_n(b) = Σ_a G_{n-1}(a) R(a) q^{M+1}(b|a) + C_{n-1}(a) max(0, q-p)(b|a)
 *    C_n(b) = Σ_a G_{n-1}(a) A(b|a) + C_{n-1}(a) min(p,q)(b|a)
 *    E[N_rej] = Σ_n Σ_a G_{n-1}(a) R(a) + C_{n-1}(a) TV(a)
 *    with A(b|a) = Σ_m (Π_{j<m} r_j) min(p(b|a), q^m(b|a)).
 *
 *    Identifying G = F and C = Q - F (unbiasedness) turns this into (1).
 *
 * The limit M -> ∞ (Proposition 1, corrected).  Write u_m = R_{m-1} q^m
 * (unnormalised, R_0 = 1), so u_{m+1} = max(0, u_m - R_{m-1} p) with
 * R_{m-1} = Σ u_m.  On Z = {p = 0} u never decreases, and the emitted law
 * of the first-token round is q (RRS is unbiased) while accepted tokens
 * never lie in Z, so u_m(Z) = q(Z) for all m and R_m >= q(Z).
 *   - If q(Z) > 0: every x with p(x) > 0 loses at least q(Z) p(x) per
 *     round, so u vanishes off Z after finitely many rounds and
 *     u_m = q 1_Z from then on: R_∞ = q(Z), R q^{M+1} -> q 1_Z.
 *   - If q(Z) = 0: R_m is non-increasing; were its limit L > 0, every
 *     u(x) would fall by at least L p(x) per round and vanish, giving
 *     R = 0 < L; so R_m -> 0 = q(Z) and u_m -> 0 = q 1_Z.
 * The paper's Proposition 1 writes f_∞(x_{1:n}) = h (q - f_∞), i.e. it
 * assumes R -> 0 ("Π TV(q^m,p) -> 0"), which fails when the target puts
 * mass where the draft has none: e.g. p = (1,0), q = (½,½) gives
 * R_M = ½ for every M >= 1 (the second token can never be drafted). */
#include "sd_exact_batch.h"

#include <stdlib.h>
#include <string.h>

#include "sd_dist.h"

double sd_exact_batch_row(const double *p, const double *q, size_t V, size_t M,
                          double *u_out)
{
    memcpy(u_out, q, V * sizeof *u_out);
    double R = 1.0; /* R_{m-1} = Σ u_m, Σ u_1 = 1 */
    for (size_t m = 1; m <= M; m++) {
        double next = 0.0;
        int changed = 0;
        for (size_t x = 0; x < V; x++) {
            double v = u_out[x] - R * p[x];
            if (v < 0.0)
                v = 0.0;
            if (v != u_out[x])
                changed = 1;
            u_out[x] = v;
            next += v;
        }
        R = next;
        /* a fixed point (all residual mass on {p = 0}, or none left):
         * further rounds change nothing */
        if (!changed || R == 0.0)
            break;
    }
    return R;
}

/* Refuses T·V²·M beyond the work limit before anything is allocated. */
static int S_check_size(const sd_chain *c, size_t M, sd_error *err)
{
    if (M < 1)
        return sd_error_set(err, SD_EUSAGE, "batch size M = %zu: expected M >= 1", M);
    double work = (double)c->T * (double)c->V * (double)c->V * (double)M;
    if (work > SD_EXACT_MAX_WORK)
        return sd_error_set(err, SD_ETOOBIG,
                            "Theorem 3 at T = %zu, V = %zu, M = %zu needs %.3g row operations, "
                            "beyond the limit %.3g (T·V²·M); use a smaller M or M = inf",
                            c->T, c->V, M, work, SD_EXACT_MAX_WORK);
    return SD_OK;
}

/* u = lim R_M q^{M+1} = q 1{p = 0}; returns its mass q(Z). */
static double S_row_inf(const double *p, const double *q, size_t V, double *u_out)
{
    double R = 0.0;
    for (size_t x = 0; x < V; x++) {
        u_out[x] = p[x] == 0.0 ? q[x] : 0.0;
        R += u_out[x];
    }
    return R;
}

/* The recursion of Theorem 3; M = 0 means the limit M -> ∞. */
static int S_recursion(const sd_chain *c, size_t M, double *out, sd_error *err)
{
    size_t V = c->V;
    double *buf = malloc(5 * V * sizeof *buf);
    if (!buf)
        return sd_error_set(err, SD_ENOMEM, "out of memory (Theorem 3, vocab %zu)", V);
    double *Q = buf, *Qn = buf + V, *F = buf + 2 * V, *Fn = buf + 3 * V, *u = buf + 4 * V;
    memcpy(Q, c->init, V * sizeof *Q);
    memcpy(F, c->init, V * sizeof *F);
    double total = 0.0;
    for (size_t n = 1; n <= c->T; n++) {
        memset(Fn, 0, V * sizeof *Fn);
        for (size_t a = 0; a < V; a++) {
            if (Q[a] == 0.0 && F[a] == 0.0)
                continue;
            const double *p = sd_chain_p(c, n, a), *q = sd_chain_q(c, n, a);
            double tv = sd_dist_tv(p, q, V);
            double R = M ? sd_exact_batch_row(p, q, V, M, u) : S_row_inf(p, q, V, u);
            /* E[N_rej] += Q_{n-1}(a) TV_n(a) - F_{n-1}(a) (TV_n(a) - R_n(a)) */
            total += Q[a] * tv - F[a] * (tv - R);
            /* F_n(b) += h(b|a) Q_{n-1}(a) - (h(b|a) - R q^{M+1}(b|a)) F_{n-1}(a) */
            for (size_t b = 0; b < V; b++) {
                double h = q[b] > p[b] ? q[b] - p[b] : 0.0;
                Fn[b] += h * Q[a] - (h - u[b]) * F[a];
            }
        }
        sd_exact_target_step(c, n, Q, Qn);
        double *t = Q;
        Q = Qn;
        Qn = t;
        t = F;
        F = Fn;
        Fn = t;
    }
    free(buf);
    *out = total;
    return SD_OK;
}

int sd_exact_batch_rejections(const sd_chain *c, size_t M, double *out, sd_error *err)
{
    int st = S_check_size(c, M, err);
    if (st != SD_OK)
        return st;
    return S_recursion(c, M, out, err);
}

int sd_exact_batch_rejections_inf(const sd_chain *c, double *out, sd_error *err)
{
    /* O(T V²) whatever M; a time-homogeneous chain stores V² numbers
     * whatever T, so its memory bounds nothing. */
    double work = (double)c->T * (double)c->V * (double)c->V;
    if (work > SD_EXACT_MAX_WORK)
        return sd_error_set(err, SD_ETOOBIG,
                            "the limit M -> inf at T = %zu, V = %zu needs %.3g row operations, "
                            "beyond the limit %.3g (T·V²)", c->T, c->V, work, SD_EXACT_MAX_WORK);
    return S_recursion(c, 0, out, err);
}

/* The first-token round of one row, from the normalised residuals
 * q^{m+1} = max(0, q^m - p) / r_m:  acc(b) = Σ_m (Π_{j<m} r_j) min(p, q^m)(b),
 * res(b) = q^{M+1}(b) (zero when R = 0); returns R = Π_m r_m. */
static double S_first_round(const double *p, const double *q, size_t V, size_t M,
                            double *acc, double *qm, double *res)
{
    memcpy(qm, q, V * sizeof *qm);
    memset(acc, 0, V * sizeof *acc);
    double R = 1.0;
    for (size_t m = 1; m <= M; m++) {
        double r = 0.0;
        for (size_t x = 0; x < V; x++) {
            acc[x] += R * (p[x] < qm[x] ? p[x] : qm[x]);
            r += qm[x] > p[x] ? qm[x] - p[x] : 0.0;
        }
        R *= r;
        if (r == 0.0)
            break;
        for (size_t x = 0; x < V; x++)
            qm[x] = qm[x] > p[x] ? (qm[x] - p[x]) / r : 0.0;
    }
    if (R == 0.0)
        memset(res, 0, V * sizeof *res);
    else
        memcpy(res, qm, V * sizeof *res);
    return R;
}

int sd_exact_batch_rejections_dp(const sd_chain *c, size_t M, double *out, sd_error *err)
{
    int st = S_check_size(c, M, err);
    if (st != SD_OK)
        return st;
    size_t V = c->V;
    double *buf = malloc(7 * V * sizeof *buf);
    if (!buf)
        return sd_error_set(err, SD_ENOMEM, "out of memory (batch DP, vocab %zu)", V);
    double *G = buf, *C = buf + V, *Gn = buf + 2 * V, *Cn = buf + 3 * V;
    double *acc = buf + 4 * V, *qm = buf + 5 * V, *res = buf + 6 * V;
    memcpy(G, c->init, V * sizeof *G); /* position 1 starts an iteration */
    memset(C, 0, V * sizeof *C);
    double total = 0.0;
    for (size_t n = 1; n <= c->T; n++) {
        memset(Gn, 0, V * sizeof *Gn);
        memset(Cn, 0, V * sizeof *Cn);
        for (size_t a = 0; a < V; a++) {
            const double *p = sd_chain_p(c, n, a), *q = sd_chain_q(c, n, a);
            if (G[a] != 0.0) {
                double R = S_first_round(p, q, V, M, acc, qm, res);
                total += G[a] * R;
                for (size_t b = 0; b < V; b++) {
                    Gn[b] += G[a] * R * res[b];
                    Cn[b] += G[a] * acc[b];
                }
            }
            if (C[a] != 0.0) {
                for (size_t b = 0; b < V; b++) {
                    double mn = p[b] < q[b] ? p[b] : q[b];
                    double h = q[b] - mn; /* max(0, q - p) */
                    total += C[a] * h;
                    Gn[b] += C[a] * h;
                    Cn[b] += C[a] * mn;
                }
            }
        }
        double *t = G;
        G = Gn;
        Gn = t;
        t = C;
        C = Cn;
        Cn = t;
    }
    free(buf);
    *out = total;
    return SD_OK;
}
