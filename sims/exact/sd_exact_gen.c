/* sd_exact_gen.c — see sd_exact_gen.h. */
#include "sd_exact_gen.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/sd_backoff.h"
#include "../engine/sd_sim.h"

void sd_iter_law_clear(sd_iter_law *law)
{
    law->n = 0;
    law->ntok = 0;
}

void sd_iter_law_free(sd_iter_law *law)
{
    free(law->o);
    free(law->tokens);
    law->o = NULL;
    law->tokens = NULL;
    law->n = law->cap = law->ntok = law->captok = 0;
}

int sd_iter_law_add(sd_iter_law *law, double prob, const size_t *tokens, size_t emitted,
                    size_t last, int rejected, unsigned target_calls, sd_error *err)
{
    if (!(prob > 0.0))
        return SD_OK;
    if (law->n == SD_ITER_LAW_MAX)
        return sd_error_set(err, SD_ETOOBIG,
                            "the law of one iteration has more than %zu outcomes (limit; use a "
                            "smaller --gamma, V or L)",
                            SD_ITER_LAW_MAX);
    size_t k = emitted < law->keep ? emitted : law->keep;
    if (law->n == law->cap) {
        size_t cap = law->cap ? 2 * law->cap : 64;
        sd_iter_outcome *o = realloc(law->o, cap * sizeof *o);
        if (!o)
            return sd_error_set(err, SD_ENOMEM, "out of memory for %zu outcomes of an iteration", cap);
        law->o = o;
        law->cap = cap;
    }
    if (law->ntok + k > law->captok) {
        size_t cap = law->captok ? 2 * law->captok : 256;
        while (cap < law->ntok + k)
            cap *= 2;
        size_t *t = realloc(law->tokens, cap * sizeof *t);
        if (!t)
            return sd_error_set(err, SD_ENOMEM, "out of memory for the tokens of an iteration's law");
        law->tokens = t;
        law->captok = cap;
    }
    if (k)
        memcpy(law->tokens + law->ntok, tokens, k * sizeof *tokens);
    sd_iter_outcome *o = &law->o[law->n++];
    o->prob = prob;
    o->emitted = emitted;
    o->last = last;
    o->tok = law->ntok;
    o->rejected = rejected;
    o->target_calls = target_calls;
    law->ntok += k;
    return SD_OK;
}

/* --- Markov-inside-the-iteration rules ------------------------------------ */

typedef struct {
    const sd_pos_law *pl;
    const sd_chain *c;
    size_t n, V, S;
    sd_iter_law *law;
    size_t *buf;   /* [G+1]: the current prefix */
    size_t nodes;  /* explicit prefixes visited */
    double *cont, *ok, *rej; /* [S·V], [V], [V] scratch of one call */
} S_markov;

static int S_call(S_markov *mk, size_t t, size_t a, size_t i, size_t s, sd_error *err)
{
    size_t V = mk->V;
    memset(mk->cont, 0, mk->S * V * sizeof *mk->cont);
    memset(mk->ok, 0, V * sizeof *mk->ok);
    memset(mk->rej, 0, V * sizeof *mk->rej);
    return mk->pl->fn(mk->pl->ctx, mk->c, t, a, i, s, mk->cont, mk->ok, mk->rej, err);
}

/* Ends of depth i (token x_{n+i} = y) and the final bonus/horizon step. */
static int S_ends(S_markov *mk, size_t i, const double *ok, const double *rej, sd_error *err)
{
    int rc = SD_OK;
    for (size_t y = 0; y < mk->V && !rc; y++) {
        mk->buf[i] = y;
        rc = sd_iter_law_add(mk->law, ok[y], mk->buf, i + 1, y, 0, 1, err);
        if (!rc)
            rc = sd_iter_law_add(mk->law, rej[y], mk->buf, i + 1, y, 1, 1, err);
    }
    return rc;
}

/* The bonus after G positions went on, from token b in state s with mass
 * w: the position law at depth G, every outcome an ending without a
 * rejection; added to bonus[]. */
static int S_bonus(S_markov *mk, size_t b, size_t s, double w, double *bonus, sd_error *err)
{
    size_t V = mk->V, G = mk->pl->G;
    int rc = S_call(mk, mk->n + G, b, G, s, err);
    for (size_t y = 0; y < V && !rc; y++) {
        double x = mk->ok[y] + mk->rej[y];
        for (size_t s2 = 0; s2 < mk->S; s2++)
            x += mk->cont[s2 * V + y];
        bonus[y] += w * x;
    }
    return rc;
}

/* After G positions went on: the horizon (emitted G, last token b) or a
 * bonus; M[b·S + s] is the mass left (a stride of 0 rows for one token). */
static int S_finish(S_markov *mk, const double *M, size_t b_lo, size_t b_hi, sd_error *err)
{
    size_t V = mk->V, S = mk->S, G = mk->pl->G;
    int rc = SD_OK;
    if (mk->n + G > mk->c->T) {
        for (size_t b = b_lo; b < b_hi && !rc; b++) {
            double m = 0.0;
            for (size_t s = 0; s < S; s++)
                m += M[(b - b_lo) * S + s];
            rc = sd_iter_law_add(mk->law, m, mk->buf, G, b, 0, mk->pl->horizon_calls, err);
        }
        return rc;
    }
    double *bonus = calloc(V, sizeof *bonus);
    if (!bonus)
        return sd_error_set(err, SD_ENOMEM, "out of memory");
    for (size_t b = b_lo; b < b_hi && !rc; b++)
        for (size_t s = 0; s < S && !rc; s++)
            if (M[(b - b_lo) * S + s] > 0.0)
                rc = S_bonus(mk, b, s, M[(b - b_lo) * S + s], bonus, err);
    for (size_t y = 0; y < V && !rc; y++) {
        mk->buf[G] = y;
        rc = sd_iter_law_add(mk->law, bonus[y], mk->buf, G + 1, y, 0, 1, err);
        if (mk->law->emit)
            mk->law->emit[G * V + y] += bonus[y];
    }
    free(bonus);
    return rc;
}

/* Beyond the kept prefix: a forward pass over (token, state) per depth
 * from depth i, where the mass is w[s] at token a. */
static int S_forward(S_markov *mk, size_t i, size_t a, const double *w, sd_error *err)
{
    size_t V = mk->V, S = mk->S, G = mk->pl->G;
    double *M = calloc(V * S, sizeof *M), *M2 = calloc(V * S, sizeof *M2);
    double *ok = calloc(V, sizeof *ok), *rej = calloc(V, sizeof *rej);
    int rc = (!M || !M2 || !ok || !rej) ? sd_error_set(err, SD_ENOMEM, "out of memory") : SD_OK;
    if (!rc)
        memcpy(M + a * S, w, S * sizeof *w);
    for (size_t j = i; j < G && !rc; j++) {
        memset(M2, 0, V * S * sizeof *M2);
        memset(ok, 0, V * sizeof *ok);
        memset(rej, 0, V * sizeof *rej);
        for (size_t b = 0; b < V && !rc; b++)
            for (size_t s = 0; s < S && !rc; s++) {
                double m = M[b * S + s];
                if (!(m > 0.0))
                    continue;
                rc = S_call(mk, mk->n + j, b, j, s, err);
                for (size_t y = 0; y < V && !rc; y++) {
                    ok[y] += m * mk->ok[y];
                    rej[y] += m * mk->rej[y];
                    for (size_t s2 = 0; s2 < S; s2++)
                        M2[y * S + s2] += m * mk->cont[s2 * V + y];
                }
            }
        for (size_t y = 0; y < V && !rc; y++) {
            rc = sd_iter_law_add(mk->law, ok[y], mk->buf, j + 1, y, 0, 1, err);
            if (!rc)
                rc = sd_iter_law_add(mk->law, rej[y], mk->buf, j + 1, y, 1, 1, err);
        }
        /* x_{n+j} = y: the iteration ends there or goes on from y */
        for (size_t y = 0; y < V && !rc && mk->law->emit; y++) {
            double e = ok[y] + rej[y];
            for (size_t s2 = 0; s2 < S; s2++)
                e += M2[y * S + s2];
            mk->law->emit[j * V + y] += e;
        }
        double *tmp = M;
        M = M2;
        M2 = tmp;
    }
    if (!rc)
        rc = S_finish(mk, M, 0, V, err);
    free(M);
    free(M2);
    free(ok);
    free(rej);
    return rc;
}

/* Explicit prefixes: depth i, last token a, weights w[s]. */
static int S_dfs(S_markov *mk, size_t i, size_t a, const double *w, sd_error *err)
{
    size_t V = mk->V, S = mk->S, G = mk->pl->G;
    if (++mk->nodes > SD_ITER_LAW_MAX)
        return sd_error_set(err, SD_ETOOBIG,
                            "the law of one iteration needs more than %zu draft prefixes (limit)",
                            SD_ITER_LAW_MAX);
    if (i == G)
        return S_finish(mk, w, a, a + 1, err);
    if (i >= mk->law->keep)
        return S_forward(mk, i, a, w, err);
    double *W = calloc(V * S + 2 * V, sizeof *W);
    if (!W)
        return sd_error_set(err, SD_ENOMEM, "out of memory");
    double *ok = W + V * S, *rej = ok + V;
    int rc = SD_OK;
    for (size_t s = 0; s < S && !rc; s++) {
        if (!(w[s] > 0.0))
            continue;
        rc = S_call(mk, mk->n + i, a, i, s, err);
        for (size_t y = 0; y < V && !rc; y++) {
            ok[y] += w[s] * mk->ok[y];
            rej[y] += w[s] * mk->rej[y];
            for (size_t s2 = 0; s2 < S; s2++)
                W[y * S + s2] += w[s] * mk->cont[s2 * V + y];
        }
    }
    if (!rc)
        rc = S_ends(mk, i, ok, rej, err);
    for (size_t y = 0; y < V && !rc; y++) {
        double m = 0.0;
        for (size_t s = 0; s < S; s++)
            m += W[y * S + s];
        if (!(m > 0.0))
            continue;
        mk->buf[i] = y;
        rc = S_dfs(mk, i + 1, y, W + y * S, err);
    }
    free(W);
    return rc;
}

/* The work of sd_iter_law_markov with keep = 0, counted from its loops:
 * S_forward starts at depth 0 with mass at (prev, s0) only: one call;
 * depths 1..G-1 and S_finish's bonus visit (b, s) in V·S (a bound: only
 * masses > 0 are visited): 1 + G·S·V calls, each its zeroing (S+2)·V, fn
 * (call_work·V) and its accumulation (S+2)·V; each of the G+1 depths then
 * adds at most 2V outcomes and V emitted-token sums of S+1 terms. */
static double S_markov_work(const sd_pos_law *pl, size_t V)
{
    double v = (double)V, S = (double)pl->S, G = (double)pl->G;
    double call = pl->call_work > 0.0 ? pl->call_work : 4.0;
    return (1.0 + G * S * v) * v * (call + 2.0 * S + 4.0) + (G + 1.0) * v * (2.0 * SD_WORK_OUTCOME + S + 1.0);
}

int sd_iter_law_markov(const sd_pos_law *pl, const sd_chain *c, size_t n, size_t prev,
                       sd_iter_law *law, sd_error *err)
{
    size_t V = c->V, S = pl->S;
    if (law->work_query) {
        law->work = S_markov_work(pl, V);
        return SD_OK;
    }
    S_markov mk = {pl, c, n, V, S, law, NULL, 0, NULL, NULL, NULL};
    mk.buf = malloc((pl->G + 1) * sizeof *mk.buf);
    mk.cont = malloc((S * V + 2 * V) * sizeof *mk.cont);
    double *w = calloc(S, sizeof *w);
    int rc;
    if (!mk.buf || !mk.cont || !w) {
        rc = sd_error_set(err, SD_ENOMEM, "out of memory for an iteration's law");
    } else {
        mk.ok = mk.cont + S * V;
        mk.rej = mk.ok + V;
        w[pl->s0] = 1.0;
        /* the token laws per depth come from one forward pass: no prefix
         * is kept */
        size_t keep = law->keep;
        if (law->emit)
            law->keep = 0;
        rc = S_dfs(&mk, 0, prev, w, err);
        law->keep = keep;
        law->emit_filled = law->emit != NULL;
    }
    free(mk.buf);
    free(mk.cont);
    free(w);
    return rc;
}

/* --- the DP over (position, previous token) ------------------------------- */

static int S_law(const sd_verifier_type *vt, const sd_chain *c, const sd_params *par, size_t n,
                 size_t a, sd_iter_law *law, sd_error *err)
{
    sd_iter_law_clear(law);
    int rc = vt->iteration_law(c, par, n, a, law, err);
    if (rc)
        return rc;
    /* The law must be one: a cheap guard against a wrong law. */
    double sum = 0.0;
    for (size_t i = 0; i < law->n; i++) {
        const sd_iter_outcome *o = &law->o[i];
        if (o->emitted < 1 || o->emitted > c->T - n + 1 || o->last >= c->V)
            return sd_error_set(err, SD_EINTERNAL,
                                "%s: an outcome of the iteration at n = %zu, x_{n-1} = %zu emits %zu "
                                "tokens (expected 1..%zu)",
                                vt->name, n, a, o->emitted, c->T - n + 1);
        sum += o->prob;
    }
    if (!(fabs(sum - 1.0) <= 1e-9))
        return sd_error_set(err, SD_EINTERNAL,
                            "%s: the law of the iteration at n = %zu, x_{n-1} = %zu sums to %.17g, "
                            "not 1",
                            vt->name, n, a, sum);
    return SD_OK;
}

static int S_has_law(const sd_verifier_type *vt, sd_error *err)
{
    if (!vt->iteration_law)
        return sd_error_set(err, SD_EUSAGE,
                            "%s has no per-iteration law: no exact whole-generation value", vt->name);
    return SD_OK;
}

/* The law at (n, a) with its per-depth token law in emit[] (T-n+1 rows,
 * depths 0..T-n): from the law itself where it gives one, else from its
 * outcomes with every token kept (refused beyond SD_ITER_LAW_MAX token
 * sequences). */
static int S_law_emit(const sd_verifier_type *vt, const sd_chain *c, const sd_params *par, size_t n,
                      size_t a, sd_iter_law *law, double *emit, sd_error *err)
{
    size_t V = c->V, left = c->T - n + 1;
    memset(emit, 0, left * V * sizeof *emit);
    law->keep = 0;
    law->emit = emit;
    law->emit_filled = 0;
    int rc = S_law(vt, c, par, n, a, law, err);
    if (rc || law->emit_filled)
        return rc;
    size_t G = sd_draft_len(c, par, n); /* its drafts, and the bonus where one fits */
    G = G < left ? G + 1 : left;
    if (pow((double)V, (double)G) > (double)SD_ITER_LAW_MAX)
        return sd_error_set(err, SD_ETOOBIG, "%s: the exact per-token law needs V^%zu token "
                                             "sequences per iteration (limit %zu)",
                            vt->name, G, SD_ITER_LAW_MAX);
    law->keep = left;
    law->emit = NULL;
    if ((rc = S_law(vt, c, par, n, a, law, err)))
        return rc;
    for (size_t i = 0; i < law->n; i++)
        for (size_t j = 0; j < law->o[i].emitted; j++)
            emit[j * V + law->tokens[law->o[i].tok + j]] += law->o[i].prob;
    return SD_OK;
}

int sd_exact_gen_work(const sd_verifier_type *vt, const sd_chain *c, const sd_params *par,
                      int marginals, double *work, int *answered, sd_error *err)
{
    *work = 0.0;
    *answered = 0;
    int rc = S_has_law(vt, err);
    size_t V = c->V, T = c->T;
    double total = 0.0;
    sd_iter_law law = {0};
    law.work_query = 1;
    /* The bound of a law does not depend on x_{n-1} (it counts every
     * branch), only on n (the draft length, the horizon): one query per
     * position, times the V contexts there. */
    for (size_t n = 1; n <= T && !rc; n++) {
        law.work = 0.0;
        rc = vt->iteration_law(c, par, n, 0, &law, err);
        if (!rc && (law.n || !(law.work > 0.0))) {
            sd_iter_law_free(&law);
            return SD_OK; /* the law was built, not bounded: no answer */
        }
        /* the DP's own work per context: the law's use is in its bound;
         * the per-token law adds (T-n+1)·V sums and its zeroing, and a law
         * that does not give it is built a second time (S_law_emit) */
        double own = marginals ? 2.0 * (double)(T - n + 1) * (double)V + law.work : 0.0;
        total += (double)V * (law.work + own);
    }
    sd_iter_law_free(&law);
    if (!rc) {
        *work = total;
        *answered = 1;
    }
    return rc;
}

/* The DP; when marg is not NULL (T·V doubles, zeroed) it receives
 * marg[(t-1)V + x] = P(x_t = x). */
static int S_gen(const sd_verifier_type *vt, const sd_chain *c, const sd_params *par,
                 double *rejections, double *target_calls, double *marg, sd_error *err)
{
    double projected;
    int answered;
    int rc = sd_exact_gen_work(vt, c, par, marg != NULL, &projected, &answered, err);
    if (rc)
        return rc;
    size_t V = c->V, T = c->T;
    if (answered && projected > SD_EXACT_GEN_MAX_OPS)
        return sd_error_set(err, SD_ETOOBIG,
                            "%s: the exact DP would take %.3g operations (T·V = %zu x %zu contexts "
                            "x %.3g for each one's iteration law%s, on average), beyond the limit "
                            "%.3g (use a smaller T, V or --gamma)",
                            vt->name, projected, T, V, projected / ((double)T * (double)V),
                            marg ? " and its token law" : "", SD_EXACT_GEN_MAX_OPS);
    double *D = calloc((T + 2) * V, sizeof *D);
    double *emit = marg ? malloc(T * V * sizeof *emit) : NULL;
    if (!D || (marg && !emit)) {
        free(D);
        return sd_error_set(err, SD_ENOMEM, "out of memory for the DP over %zu x %zu contexts", T, V);
    }
    memcpy(D + V, c->init, V * sizeof *D);
    sd_iter_law law = {0};
    double rej = 0.0, calls = 0.0, work = 0.0;
    for (size_t n = 1; n <= T && !rc; n++)
        for (size_t a = 0; a < V && !rc; a++) {
            double d = D[n * V + a];
            if (!(d > 0.0))
                continue;
            rc = marg ? S_law_emit(vt, c, par, n, a, &law, emit, err) : S_law(vt, c, par, n, a, &law, err);
            if (rc)
                break;
            work += (double)law.n;
            if (!answered && work > SD_EXACT_GEN_MAX_WORK) {
                rc = sd_error_set(err, SD_ETOOBIG,
                                  "%s: the exact DP would visit more than 2^30 outcomes (limit)",
                                  vt->name);
                break;
            }
            for (size_t i = 0; i < law.n; i++) {
                const sd_iter_outcome *o = &law.o[i];
                double w = d * o->prob;
                if (o->rejected)
                    rej += w;
                calls += w * o->target_calls;
                if (n + o->emitted <= T)
                    D[(n + o->emitted) * V + o->last] += w;
            }
            for (size_t k = 0; marg && k < (T - n + 1) * V; k++)
                marg[(n - 1) * V + k] += d * emit[k];
        }
    sd_iter_law_free(&law);
    free(D);
    free(emit);
    if (!rc) {
        if (rejections)
            *rejections = rej;
        if (target_calls)
            *target_calls = calls;
    }
    return rc;
}

int sd_exact_gen(const sd_verifier_type *vt, const sd_chain *c, const sd_params *par,
                 double *rejections, double *target_calls, sd_error *err)
{
    return S_gen(vt, c, par, rejections, target_calls, NULL, err);
}

int sd_exact_gen_values(const sd_verifier_type *vt, const sd_model *m, const sd_params *par,
                        sd_exact_values *out, sd_error *err)
{
    if (!m->chain && m->backoff && m->backoff->draft2)
        return sd_error_set(err, SD_EUSAGE, "%s: a bigram draft: exact values from sparse sums exist for token "
                            "verification only (Theorem 1 and the finite-gamma DP); the exact DP over %s's "
                            "iteration law needs stored V x V rows (run estimates it where it has a sparse-row "
                            "kernel)", vt->name, vt->name);
    if (!m->chain && m->backoff) /* kept sparse because V x V rows exceed the budget */
        return sd_error_set(err, SD_ETOOBIG, "%s: the exact DP needs stored V x V rows, %.4g GB at V = %zu, over "
                            "the memory budget %.3g GB (--max-memory, or half of the memory available); this model "
                            "keeps sparse rows (O(V)), which only token's evaluator reads", vt->name,
                            (double)sd_gen_chain_bytes(m->V, 1) / 1e9, m->V, (double)m->backoff->max_bytes / 1e9);
    if (!m->chain)
        return sd_error_set(err, SD_EUSAGE, "%s: the exact DP needs a stored chain", vt->name);
    int rc = sd_exact_gen(vt, m->chain, par, &out->rejections, &out->target_calls, err);
    out->method = "exact DP over (position, x_{n-1}) of the law of one iteration";
    return rc;
}

int sd_verifier_exact(const sd_verifier_type *vt, const sd_model *m, const sd_params *par,
                      sd_exact_values *out, sd_error *err)
{
    out->rejections = out->target_calls = NAN;
    out->method = NULL;
    int rc = vt->exact ? vt->exact(m, par, out, err)
                       : sd_error_set(err, SD_EUSAGE, "%s has no exact whole-generation value at these parameters",
                                      vt->name);
    /* A refusal of the verifier's own evaluator (SD_ETOOBIG) names its size
     * and limit: it stands. */
    if (rc == SD_EUSAGE && vt->iteration_law)
        rc = sd_exact_gen_values(vt, m, par, out, err);
    return rc;
}

int sd_exact_gen_marginals(const sd_verifier_type *vt, const sd_chain *c, const sd_params *par,
                           double *marg, sd_error *err)
{
    memset(marg, 0, c->T * c->V * sizeof *marg);
    return S_gen(vt, c, par, NULL, NULL, marg, err);
}

/* --- the law of the first L tokens ---------------------------------------- */

typedef struct {
    const sd_verifier_type *vt;
    const sd_chain *c;
    const sd_params *par;
    size_t L, V;
    sd_iter_law *laws; /* [L][V], keep = L-n+1; n = 0 marks "not built" */
    double *out;
} S_prefix;

static int S_prefix_rec(S_prefix *px, size_t n, size_t a, size_t cell, double w, sd_error *err)
{
    sd_iter_law *law = &px->laws[(n - 1) * px->V + a];
    if (!law->keep) {
        law->keep = px->L - n + 1;
        int rc = S_law(px->vt, px->c, px->par, n, a, law, err);
        if (rc)
            return rc;
    }
    for (size_t i = 0; i < law->n; i++) {
        const sd_iter_outcome *o = &law->o[i];
        size_t r = o->emitted < px->L - n + 1 ? o->emitted : px->L - n + 1, k = cell;
        for (size_t j = 0; j < r; j++)
            k = k * px->V + law->tokens[o->tok + j];
        double x = w * o->prob;
        if (n + r - 1 >= px->L) {
            px->out[k] += x;
        } else {
            int rc = S_prefix_rec(px, n + r, o->last, k, x, err);
            if (rc)
                return rc;
        }
    }
    return SD_OK;
}

int sd_exact_gen_prefix_law(const sd_verifier_type *vt, const sd_chain *c, const sd_params *par,
                            size_t L, size_t max_cells, double *out, sd_error *err)
{
    int rc = vt->prefix_law ? SD_OK : S_has_law(vt, err);
    if (rc)
        return rc;
    size_t V = c->V, ncells = sd_sim_cells(V, L, max_cells);
    if (L < 1 || L > c->T)
        return sd_error_set(err, SD_EUSAGE, "--L %zu: expected 1..T = %zu", L, c->T);
    if (!ncells)
        return sd_error_set(err, SD_ETOOBIG, "V^L = %zu^%zu cells exceed the limit %zu", V, L,
                            max_cells);
    if (vt->prefix_law)
        return vt->prefix_law(c, par, L, out, err);
    S_prefix px = {vt, c, par, L, V, calloc(L * V, sizeof(sd_iter_law)), out};
    if (!px.laws)
        return sd_error_set(err, SD_ENOMEM, "out of memory");
    memset(out, 0, ncells * sizeof *out);
    for (size_t a = 0; a < V && !rc; a++)
        if (c->init[a] > 0.0)
            rc = S_prefix_rec(&px, 1, a, 0, c->init[a], err);
    for (size_t i = 0; i < L * V; i++)
        sd_iter_law_free(&px.laws[i]);
    free(px.laws);
    return rc;
}

int sd_exact_gen_prefix_tv(const sd_verifier_type *vt, const sd_chain *c, const sd_params *par,
                           size_t L, size_t max_cells, double *tv, sd_error *err)
{
    size_t ncells = sd_sim_cells(c->V, L, max_cells);
    if (!ncells)
        return sd_error_set(err, SD_ETOOBIG, "V^L = %zu^%zu cells exceed the limit %zu", c->V, L,
                            max_cells);
    double *law = malloc(ncells * sizeof *law), *tgt = malloc(ncells * sizeof *tgt);
    int rc = (!law || !tgt) ? sd_error_set(err, SD_ENOMEM, "out of memory for %zu cells", ncells)
                            : SD_OK;
    if (!rc)
        rc = sd_exact_gen_prefix_law(vt, c, par, L, max_cells, law, err);
    if (!rc)
        rc = sd_chain_target_joint(c, L, max_cells, tgt, err);
    if (!rc) {
        double s = 0.0;
        for (size_t i = 0; i < ncells; i++)
            s += fabs(law[i] - tgt[i]);
        *tv = 0.5 * s;
    }
    free(law);
    free(tgt);
    return rc;
}
