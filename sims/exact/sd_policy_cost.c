/* sd_policy_cost.c — the forward DP of sd_policy_cost.h. */
#include "sd_policy_cost.h"

#include <stdlib.h>

#include "../engine/sd_params.h"
#include "sd_exact_gen.h"

/* E[draft length] from the drafted prefix of depth i (last token x, next
 * draft position n + i, acceptance product A). */
static double S_len(const sd_chain *c, const sd_draft_policy *pol, size_t n, size_t i, size_t cap, size_t x,
                    double A)
{
    size_t V = c->V;
    if (i >= cap || (i > 0 && !sd_draft_policy_continue(pol, A, sd_chain_p(c, n + i, x), V)))
        return (double)i;
    const double *p = sd_chain_p(c, n + i, x), *q = sd_chain_q(c, n + i, x);
    double e = 0.0;
    for (size_t y = 0; y < V; y++)
        if (p[y] > 0.0)
            e += p[y] * S_len(c, pol, n, i + 1, cap, y, A * sd_draft_accept_prob(p[y], q[y]));
    return e;
}

int sd_policy_cost(const sd_verifier_type *vt, const sd_chain *c, const sd_params *par, double *calls,
                   double *drafted, sd_error *err)
{
    if (!vt->iteration_law)
        return sd_error_set(err, SD_EUSAGE, "%s has no iteration law: no exact draft-token count", vt->name);
    size_t V = c->V, T = c->T;
    sd_draft_policy pol = sd_params_draft_policy(par, vt);
    double *S = calloc((T + 2) * V, sizeof *S);
    if (!S)
        return sd_error_set(err, SD_ENOMEM, "out of memory (V = %zu, T = %zu)", V, T);
    for (size_t a = 0; a < V; a++)
        S[V + a] = c->init[a];
    sd_iter_law law = {0};
    double ec = 0.0, ed = 0.0;
    int rc = SD_OK;
    for (size_t n = 1; n <= T && !rc; n++)
        for (size_t a = 0; a < V && !rc; a++) {
            double s = S[n * V + a];
            if (!(s > 0.0))
                continue;
            sd_iter_law_clear(&law);
            law.keep = 0;
            if ((rc = vt->iteration_law(c, par, n, a, &law, err)))
                break;
            for (size_t o = 0; o < law.n; o++) {
                const sd_iter_outcome *oc = &law.o[o];
                if (n + oc->emitted <= T)
                    S[(n + oc->emitted) * V + oc->last] += s * oc->prob;
                ec += s * oc->prob * (double)oc->target_calls;
            }
            ed += s * S_len(c, &pol, n, 0, sd_draft_len(c, par, n), a, 1.0);
        }
    sd_iter_law_free(&law);
    free(S);
    if (rc)
        return rc;
    if (calls)
        *calls = ec;
    if (drafted)
        *drafted = ed;
    return SD_OK;
}
