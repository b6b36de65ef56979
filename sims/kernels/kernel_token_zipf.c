/* token_zipf.c — token-level speculative decoding on the on-demand model
 * (src/sd_zipf.h; the algorithm of sims/verifiers/token.c, Yin et al. 2024
 * Alg. 1).  Rows are never built: p_t(.|a) and q_t(.|a) are the rank laws
 * z_d and z_q seen through the permutation π_{t,a}, so every draw is a
 * draw of a rank followed by π⁻¹ (a Feistel network, O(1) expected). */
#include <stdlib.h>

#include "../../src/sd_zipf.h"
#include "../../src/sd_rngbuf.h"
#include "../verifiers/sd_token.h"

/* The smallest rank r with u·m < cs[r], starting from the guide table g
 * (Chen & Asau 1974: g[k] = the smallest i with cs[i] > fl((k/G)·m)); since
 * rounding is monotone, u >= k/G gives fl(u·m) >= fl((k/G)·m), so the search
 * never starts past the answer and is exact.  `last` when rounding leaves
 * u·m beyond the final sum. */
static size_t S_rank(const double *cs, const uint32_t *g, size_t V, size_t G, double u, double m,
                     size_t last)
{
    double target = u * m;
    size_t i = g[(size_t)(u * (double)G)];
    while (i < V && !(target < cs[i]))
        i++;
    return i < V ? i : last;
}

void sd_token_zipf_trial(const sd_zipf *m, size_t gamma, uint64_t seed, uint64_t trial,
                         size_t *tokens, size_t *rejections, size_t *iterations, double *hist,
                         sd_welford *acc)
{
    const size_t V = m->V, T = m->T, G = m->G;
    const double md = m->cd[V - 1], mq = m->cq[V - 1], mr = m->tv;
    sd_rngbuf rng;
    sd_rngbuf_init(&rng, seed, trial);
    size_t prev = (size_t)(sd_rngbuf_uniform(&rng) * (double)V);
    tokens[0] = prev;
    size_t rej = 0, its = 0;
    for (size_t n = 1; n <= T;) {
        size_t len = sd_draft_len_at(gamma, T, n);
        size_t i = 0;
        int rejected = 0;
        for (; i < len; i++) {
            size_t t = n + i;
            size_t r = S_rank(m->cd, m->gd, V, G, sd_rngbuf_uniform(&rng), md, m->lastd);
            if (!(sd_rngbuf_uniform(&rng) * m->zd[r] < m->zq[r])) {
                r = S_rank(m->cr, m->gr, V, G, sd_rngbuf_uniform(&rng), mr, m->lastr);
                prev = tokens[t] = sd_zipf_token(m, t, prev, r);
                rejected = 1;
                break;
            }
            prev = tokens[t] = sd_zipf_token(m, t, prev, r);
        }
        size_t accepted = i, emitted = rejected ? i + 1 : i;
        if (!rejected && n + len <= T) { /* bonus token from q */
            size_t t = n + len;
            size_t r = S_rank(m->cq, m->gq, V, G, sd_rngbuf_uniform(&rng), mq, m->lastq);
            prev = tokens[t] = sd_zipf_token(m, t, prev, r);
            emitted++;
        }
        rej += (size_t)rejected;
        its++;
        if (hist)
            hist[accepted] += 1.0;
        if (acc)
            sd_welford_add(acc, (double)accepted);
        n += emitted;
    }
    *rejections = rej;
    *iterations = its;
}

/* --- the kernel (sd_verifier.h) --------------------------------------------- */

typedef struct {
    const sd_zipf *m;
    size_t gamma;
} S_plan;

static int S_new(void **plan, const sd_model *m, const sd_params *par, size_t max_bytes,
                 unsigned threads, sd_error *err)
{
    (void)max_bytes, (void)threads;
    if (!m->zipf || !sd_token_policy_fixed(par))
        return SD_EUSAGE; /* not applicable: stored rows have their own kernel; a draft policy */
    S_plan *p = malloc(sizeof *p);
    if (!p)
        return sd_error_set(err, SD_ENOMEM, "out of memory");
    p->m = m->zipf;
    p->gamma = par->gamma;
    *plan = p;
    return SD_OK;
}

static int S_work_new(const void *plan, void **work, sd_error *err)
{
    const S_plan *p = plan;
    *work = malloc((p->m->T + 1) * sizeof(size_t));
    return *work ? SD_OK : sd_error_set(err, SD_ENOMEM, "out of memory");
}

static void S_run(const void *plan, void *work, uint64_t seed, uint64_t lo, uint64_t hi,
                  const sd_observe *obs)
{
    const S_plan *p = plan;
    size_t *tokens = work;
    for (uint64_t t = lo; t < hi; t++) {
        size_t rej, its;
        sd_token_zipf_trial(p->m, p->gamma, seed, t, tokens, &rej, &its, obs->hist, obs->acc);
        if (obs->rej)
            sd_welford_add(obs->rej, (double)rej);
        if (obs->calls)
            sd_welford_add(obs->calls, (double)its);
    }
}

const sd_kernel_type sd_token_kernel_zipf = {
    .name = "token-zipf",
    .supports = SD_OBS_STATS,
    .plan_new = S_new,
    .plan_free = free,
    .work_new = S_work_new,
    .work_free = free,
    .run = S_run,
};
