/* sd_exact.c — Theorem 1 of Yin et al. 2024 (sd_exact.h). */
#include "sd_exact.h"

#include <stdlib.h>
#include <string.h>

#include "sd_dist.h"
#include "sd_draft.h"

void sd_exact_target_step(const sd_chain *c, size_t n, const double *cur, double *next)
{
    size_t V = c->V;
    memset(next, 0, V * sizeof *next);
    for (size_t a = 0; a < V; a++) {
        if (cur[a] == 0.0)
            continue;
        const double *row = sd_chain_q(c, n, a);
        for (size_t b = 0; b < V; b++)
            next[b] += cur[a] * row[b];
    }
}

void sd_exact_target_marginals(const sd_chain *c, double *out)
{
    memcpy(out, c->init, c->V * sizeof *out);
    for (size_t n = 1; n <= c->T; n++)
        sd_exact_target_step(c, n, out + (n - 1) * c->V, out + n * c->V);
}

/* Theorem 1's sum; *last receives its n = T term, P(rejection at T). */
static int S_theorem1(const sd_chain *c, double *out, double *last, sd_error *err)
{
    size_t V = c->V;
    /* A time-homogeneous chain ([V][V] rows, or --p/--q) stores V² numbers
     * whatever T: its memory bounds nothing, the work must be bounded. */
    if ((double)c->T * (double)V * (double)V > SD_EXACT_MAX_WORK)
        return sd_error_set(err, SD_ETOOBIG,
                            "Theorem 1 at T = %zu, V = %zu needs T*V^2 = %.3g operations; limit 2^36",
                            c->T, V, (double)c->T * (double)V * (double)V);
    double *cur = malloc(V * sizeof *cur), *next = malloc(V * sizeof *next);
    if (!cur || !next) {
        free(cur);
        free(next);
        return sd_error_set(err, SD_ENOMEM, "out of memory (Theorem 1, vocab %zu)", V);
    }
    memcpy(cur, c->init, V * sizeof *cur);
    /* E[N_rej] = Σ_n Σ_a Q_{n-1}(a) TV(p_n(.|a), q_n(.|a)), Q_{n-1} in cur. */
    double total = 0.0, term = 0.0;
    for (size_t n = 1; n <= c->T; n++) {
        term = 0.0;
        for (size_t a = 0; a < V; a++)
            if (cur[a] != 0.0)
                term += cur[a] * sd_dist_tv(sd_chain_p(c, n, a), sd_chain_q(c, n, a), V);
        total += term;
        if (n < c->T) {
            sd_exact_target_step(c, n, cur, next);
            double *t = cur;
            cur = next;
            next = t;
        }
    }
    free(cur);
    free(next);
    *out = total;
    if (last)
        *last = term;
    return SD_OK;
}

int sd_exact_rejections(const sd_chain *c, double *out, sd_error *err)
{
    return S_theorem1(c, out, NULL, err);
}

int sd_exact_token(const sd_chain *c, size_t gamma, double *rejections,
                   double *target_calls, sd_error *err)
{
    if (sd_draft_binding(gamma, c->T))
        return sd_exact_token_dp(c, gamma, rejections, target_calls, err);
    double rej, last;
    int rc = S_theorem1(c, &rej, &last, err);
    if (rc)
        return rc;
    if (rejections)
        *rejections = rej;
    if (target_calls)
        *target_calls = rej + 1.0 - last;
    return SD_OK;
}

void sd_exact_token_dp_step(const double *p_rows, const double *q_rows, size_t V, size_t G,
                            const double *F, double *N, double *rej, double *calls)
{
    memset(N, 0, V * (G + 1) * sizeof *N);
    for (size_t a = 0; a < V; a++) {
        const double *p = p_rows + a * V, *q = q_rows + a * V;
        const double *f = F + a * (G + 1);
        *calls += f[0];
        double drafted = 0.0;
        for (size_t j = 0; j < G; j++)
            drafted += f[j];
        *rej += drafted * sd_dist_tv(p, q, V);
        for (size_t b = 0; b < V; b++) {
            double acc = p[b] < q[b] ? p[b] : q[b], res = q[b] > p[b] ? q[b] - p[b] : 0.0;
            double *nb = N + b * (G + 1);
            nb[0] += drafted * res + f[G] * q[b];
            for (size_t j = 0; j < G; j++)
                nb[j + 1] += f[j] * acc;
        }
    }
}

int sd_exact_token_dp(const sd_chain *c, size_t gamma, double *rejections,
                      double *target_calls, sd_error *err)
{
    size_t V = c->V, T = c->T;
    size_t G = sd_draft_len_max(gamma, T); /* j never reaches T */
    if ((double)T * (double)V * (double)V * (double)(G + 1) > SD_EXACT_MAX_WORK)
        return sd_error_set(err, SD_ETOOBIG,
                            "the exact token DP needs T*V^2*(gamma+1) = %zu*%zu^2*%zu operations; limit 2^36",
                            T, V, G + 1);
    size_t cells = V * (G + 1);
    double *F = calloc(cells, sizeof *F), *N = calloc(cells, sizeof *N);
    if (!F || !N) {
        free(F);
        free(N);
        return sd_error_set(err, SD_ENOMEM, "out of memory (token DP, vocab %zu, gamma %zu)", V, G);
    }
    for (size_t a = 0; a < V; a++)
        F[a * (G + 1)] = c->init[a];
    double rej = 0.0, calls = 0.0;
    for (size_t n = 1; n <= T; n++) {
        sd_exact_token_dp_step(sd_chain_p(c, n, 0), sd_chain_q(c, n, 0), V, G, F, N, &rej, &calls);
        double *t = F;
        F = N;
        N = t;
    }
    free(F);
    free(N);
    if (rejections)
        *rejections = rej;
    if (target_calls)
        *target_calls = calls;
    return SD_OK;
}
