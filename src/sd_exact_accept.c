/* sd_exact_accept.c — exact expected accepted length (sd_exact_accept.h).
 *
 * Depth-first walk over draft prefixes x^l, l = 1..γ.  Each node carries
 *   pp = p(x^l), pq = q(x^l), tok = Π_{i<=l} min(1, q/p), blk = p_l(x^l)
 * (Sun et al. 2025, eq. 9), and adds pp·tok, pp·blk, min(pp, pq) to P(τ >= l) of the
 * token, block and full-information rules.  A prefix with pp = 0 adds 0 to
 * all three (and so does its subtree), so it is skipped. */
#include "sd_exact_accept.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *sd_accept_algo_name(sd_accept_algo a)
{
    static const char *const names[] = {"token", "block", "full"};
    return a < SD_ACCEPT_NALGO ? names[a] : "?";
}

int sd_exact_accept_length(const sd_chain *c, size_t t, size_t a, size_t gamma,
                           double expected[SD_ACCEPT_NALGO], double *ccdf, sd_error *err)
{
    size_t V = c->V;
    if (gamma < 1)
        return sd_error_set(err, SD_EUSAGE, "--gamma %zu: expected at least 1 draft token", gamma);
    if (t < 1 || t > c->T)
        return sd_error_set(err, SD_EUSAGE, "--step %zu: expected a step in 1..%zu (the horizon)", t,
                            c->T);
    if (a >= V)
        return sd_error_set(err, SD_EUSAGE, "--state %zu: expected a token in 0..%zu", a, V - 1);
    if (gamma > c->T - t + 1)
        return sd_error_set(err, SD_EUSAGE,
                            "--gamma %zu at --step %zu runs past the horizon T = %zu "
                            "(at most %zu draft tokens fit)",
                            gamma, t, c->T, c->T - t + 1);
    double blocks = pow((double)V, (double)gamma);
    if (blocks > SD_EXACT_ACCEPT_MAX_BLOCKS)
        return sd_error_set(err, SD_ETOOBIG,
                            "accept-length would enumerate V^gamma = %zu^%zu = %.3g draft blocks, "
                            "beyond the limit %.0f",
                            V, gamma, blocks, SD_EXACT_ACCEPT_MAX_BLOCKS);

    /* frame l (1-based depth) holds the state after choosing x_l = tok_idx[l] */
    size_t *idx = malloc((gamma + 1) * sizeof *idx);
    double *pp = malloc(4 * (gamma + 1) * sizeof *pp);
    double *tail = calloc(SD_ACCEPT_NALGO * gamma, sizeof *tail);
    if (!idx || !pp || !tail) {
        free(idx);
        free(pp);
        free(tail);
        return sd_error_set(err, SD_ENOMEM, "out of memory (accept-length, gamma %zu)", gamma);
    }
    double *pq = pp + (gamma + 1), *tok = pq + (gamma + 1), *blk = tok + (gamma + 1);
    pp[0] = pq[0] = tok[0] = blk[0] = 1.0; /* the empty prefix; p_0 = 1 */
    size_t l = 1;
    idx[1] = 0;
    while (l >= 1) {
        if (idx[l] == V) { /* all children of depth l-1 done: backtrack */
            l--;
            if (l >= 1)
                idx[l]++;
            continue;
        }
        size_t x = idx[l], prev = l == 1 ? a : idx[l - 1];
        size_t n = t + l - 1; /* position of x_l */
        double pd = sd_chain_p(c, n, prev)[x];
        if (pd == 0.0) {
            idx[l]++;
            continue;
        }
        double qd = sd_chain_q(c, n, prev)[x];
        double ratio = qd / pd;
        pp[l] = pp[l - 1] * pd;
        pq[l] = pq[l - 1] * qd;
        tok[l] = tok[l - 1] * (ratio < 1.0 ? ratio : 1.0);
        double b = blk[l - 1] * ratio; /* Sun et al. 2025, eq. 9 */
        blk[l] = b < 1.0 ? b : 1.0;
        tail[SD_ACCEPT_TOKEN * gamma + l - 1] += pp[l] * tok[l];
        tail[SD_ACCEPT_BLOCK * gamma + l - 1] += pp[l] * blk[l];
        tail[SD_ACCEPT_FULL * gamma + l - 1] += pp[l] < pq[l] ? pp[l] : pq[l];
        if (l < gamma) {
            l++;
            idx[l] = 0;
        } else {
            idx[l]++;
        }
    }
    for (int alg = 0; alg < SD_ACCEPT_NALGO; alg++) {
        double s = 0.0;
        for (size_t i = 0; i < gamma; i++)
            s += tail[alg * gamma + i];
        expected[alg] = s;
    }
    if (ccdf)
        memcpy(ccdf, tail, SD_ACCEPT_NALGO * gamma * sizeof *ccdf);
    free(idx);
    free(pp);
    free(tail);
    return SD_OK;
}
