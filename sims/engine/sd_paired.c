/* sd_paired.c — the output-first path (sd_paired.h). */
#include "sd_paired.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/sd_dist.h"
#include "../verifiers/sd_token.h"

double sd_paired_token_rule(double *s, double r)
{
    (void)s;
    return r < 1.0 ? r : 1.0;
}

double sd_paired_block_rule(double *s, double r)
{
    if (!(r > 0.0))
        return 0.0; /* M_l = ρ_l = 0: nothing from here on is accepted */
    double x = *s * r;
    *s = x > 1.0 ? x : 1.0;
    return x < 1.0 ? x : 1.0;
}

typedef struct {
    const sd_chain *c;
    const sd_params *par;
    sd_given_output_fn rule;
    unsigned bugs;
    size_t max_states; /* states the filter may hold over a trial (all positions) */
} S_plan;

/* The filter of one trial, kept for the backward pass.  States are
 * numbered over the whole trial; L_t (the iterations' states entering
 * position t) is states off[t] .. off[t+1]-1.  State i: its s and drafts
 * left (0: at its bonus position), alpha[i·(T+1) + k] = P(state i at its
 * position and k rejections before it, and x up to there), a[i] the
 * probability that it accepts at its position (0 at a bonus), rej[i]
 * whether ending there is a rejection, child[i] its state after accepting
 * (or SIZE_MAX) and fresh[t] the state that starts after position t. */
typedef struct {
    size_t T, cap;
    double *s, *alpha, *a, *ratio, *term;
    size_t *left, *child, *off, *fresh;
    unsigned char *rej, *ev;
} S_work;

enum { S_EV_ACCEPT = 0, S_EV_REJECT = 1, S_EV_BONUS = 2 };

/* Worst-case states: at most min(t, G+1) iterations can be open at t
 * (one per start in the last G+1 positions). */
static size_t S_max_states(const sd_chain *c, const sd_params *par)
{
    size_t n = 0, G = sd_draft_len_max(par->gamma, c->T);
    for (size_t t = 1; t <= c->T + 1; t++)
        n += t < G + 1 ? t : G + 1;
    return n;
}

/* The filter's tables are refused beyond this many doubles (64 MiB per
 * thread): T up to about 200 at full lookahead. */
#define S_MAX_CELLS ((size_t)1 << 23)

int sd_paired_plan_new(void **plan, const sd_verifier_type *vt, const sd_model *m, const sd_params *par,
                       unsigned bugs, sd_error *err)
{
    *plan = NULL;
    sd_given_output_fn rule = vt->given_output;
    if (!rule || !m->chain || !sd_verifier_claims_lossless(vt, par))
        return sd_error_set(err, SD_EUSAGE,
                            "--algo %s: no output-first law (lossless token-level or block verification "
                            "on a stored chain)", vt->name);
    if (sd_params_draft_policy(par, vt).rule != SD_DRAFT_FIXED)
        return sd_error_set(err, SD_EUSAGE, "--algo %s: the output-first path needs --draft-policy fixed", vt->name);
    size_t ns = S_max_states(m->chain, par);
    if (ns > S_MAX_CELLS / (m->chain->T + 1))
        return sd_error_set(err, SD_ETOOBIG,
                            "the output-first path at T = %zu needs %zu x %zu filter cells; limit %zu",
                            m->chain->T, ns, m->chain->T + 1, S_MAX_CELLS);
    S_plan *p = malloc(sizeof *p);
    if (!p)
        return sd_error_set(err, SD_ENOMEM, "out of memory");
    p->c = m->chain;
    p->par = par;
    p->rule = rule;
    p->bugs = bugs;
    p->max_states = ns;
    *plan = p;
    return SD_OK;
}

static int S_plan_new_refused(void **plan, const sd_model *m, const sd_params *par, size_t max_bytes,
                              unsigned threads, sd_error *err)
{
    (void)m;
    (void)par;
    (void)max_bytes;
    (void)threads;
    *plan = NULL;
    return sd_error_set(err, SD_EUSAGE, "the output-first path is planned with sd_paired_plan_new");
}

static void S_plan_free(void *plan)
{
    free(plan);
}

static void S_work_free(void *work)
{
    S_work *w = work;
    if (w) {
        free(w->s);
        free(w->alpha);
        free(w->a);
        free(w->ratio);
        free(w->term);
        free(w->left);
        free(w->child);
        free(w->off);
        free(w->fresh);
        free(w->rej);
        free(w->ev);
    }
    free(w);
}

static int S_work_new(const void *plan, void **work, sd_error *err)
{
    const S_plan *p = plan;
    size_t T = p->c->T, n = p->max_states;
    S_work *w = calloc(1, sizeof *w);
    if (w) {
        w->T = T;
        w->cap = n;
        w->s = malloc(n * sizeof *w->s);
        w->alpha = malloc(n * (T + 1) * sizeof *w->alpha);
        w->a = malloc(n * sizeof *w->a);
        w->ratio = malloc((T + 1) * sizeof *w->ratio);
        w->term = malloc((T + 2) * sizeof *w->term);
        w->left = malloc(n * sizeof *w->left);
        w->child = malloc(n * sizeof *w->child);
        w->off = malloc((T + 2) * sizeof *w->off);
        w->fresh = malloc((T + 1) * sizeof *w->fresh);
        w->rej = malloc(n);
        w->ev = malloc(T + 1);
    }
    if (!w || !w->s || !w->alpha || !w->a || !w->ratio || !w->term || !w->left || !w->child || !w->off ||
        !w->fresh || !w->rej || !w->ev) {
        S_work_free(w);
        return sd_error_set(err, SD_ENOMEM, "out of memory for the output-first path (T = %zu)", T);
    }
    *work = w;
    return SD_OK;
}

/* The state (s, left) of L_{t+1} being built (states off[t+1]..*end-1):
 * an existing one with s = 1 and the same drafts left (their futures are
 * the same: merged), else a new one with zero counts. */
static size_t S_state(S_work *w, size_t t, size_t *end, double s, size_t left)
{
    if (s == 1.0)
        for (size_t i = w->off[t + 1]; i < *end; i++)
            if (w->s[i] == 1.0 && w->left[i] == left)
                return i;
    size_t i = (*end)++;
    assert(i < w->cap); /* at most min(t, G+1) open iterations: S_max_states */
    w->s[i] = s;
    w->left[i] = left;
    memset(w->alpha + i * (w->T + 1), 0, (w->T + 1) * sizeof *w->alpha);
    return i;
}

/* Forward: the law of (state, rejections so far) at every position given
 * x, with ratios w->ratio[1..T]; w->term[k] = P(k rejections in all | x).
 * Returns E[target calls | x]; *e_rej = E[N_rej | x]. */
static double S_forward(const S_plan *p, S_work *w, double *e_rej)
{
    const size_t T = w->T, K = T + 1;
    double calls = 1.0, rej = 0.0;
    w->off[1] = 0;
    size_t end = 0;
    w->off[0] = 0;
    S_state(w, 0, &end, 1.0, sd_draft_len(p->c, p->par, 1));
    w->alpha[0] = 1.0;
    memset(w->term, 0, (T + 2) * sizeof *w->term);
    for (size_t t = 1; t <= T; t++) {
        size_t lo = w->off[t], hi = end;
        w->off[t + 1] = hi;
        size_t fr = t < T ? S_state(w, t, &end, 1.0, sd_draft_len(p->c, p->par, t + 1)) : SIZE_MAX;
        w->fresh[t] = fr;
        for (size_t i = lo; i < hi; i++) {
            double s = w->s[i];
            w->rej[i] = w->left[i] > 0;
            w->a[i] = w->left[i] > 0 ? p->rule(&s, w->ratio[t]) : 0.0;
            w->child[i] = t < T && w->a[i] > 0.0 ? S_state(w, t, &end, s, w->left[i] - 1) : SIZE_MAX;
            const double *al = w->alpha + i * K;
            double a = w->a[i], mass = 0.0;
            double *to_c = w->child[i] != SIZE_MAX ? w->alpha + w->child[i] * K : NULL;
            double *to_f = fr != SIZE_MAX ? w->alpha + fr * K : w->term;
            for (size_t k = 0; k < t; k++) { /* at most t-1 rejections before t */
                if (al[k] == 0.0)
                    continue;
                mass += al[k];
                if (to_c)
                    to_c[k] += al[k] * a;
                else if (t == T)
                    w->term[k] += al[k] * a; /* accepted up to the horizon */
                to_f[k + w->rej[i]] += al[k] * (1.0 - a);
            }
            if (t < T)
                calls += mass * (1.0 - a);
            if (w->rej[i])
                rej += mass * (1.0 - a);
        }
    }
    *e_rej = rej;
    return calls;
}

/* The iteration being replayed: its start and drafts accepted. */
typedef struct {
    size_t start, accepted;
} S_iter;

/* The weights of the two ways state i of L_t leads to (cur, k): it
 * accepts into its child, or its iteration ends there (a rejection or its
 * bonus) and the next starts in the fresh state; at T, cur is the end of
 * the trial with k = N. */
static void S_edges(const S_work *w, size_t i, size_t t, size_t cur, size_t k, double *wa, double *we)
{
    const double *al = w->alpha + i * (w->T + 1);
    int last = t == w->T;
    *wa = last || w->child[i] == cur ? al[k] * w->a[i] : 0.0;
    *we = (last || w->fresh[t] == cur) && k >= w->rej[i] ? al[k - w->rej[i]] * (1.0 - w->a[i]) : 0.0;
}

static void S_trial(const S_plan *p, S_work *w, uint64_t seed, uint64_t trial, const sd_observe *obs,
                    sd_trial *rec, size_t *row)
{
    const sd_chain *c = p->c;
    const size_t V = c->V, T = c->T;
    sd_stream rng;
    sd_stream_init(&rng, seed, trial);
    size_t prev = sd_dist_sample(c->init, V, 1.0, sd_stream_uniform(&rng));
    double ulast = 0.0;
    if (row)
        row[0] = prev;
    /* The output x ~ q: uniform t draws x_t. */
    for (size_t t = 1; t <= T; t++) {
        const double *pr = sd_chain_p(c, t, prev), *qr = sd_chain_q(c, t, prev);
        double u = sd_stream_uniform(&rng);
        size_t x = sd_dist_sample(qr, V, 1.0, u);
        w->ratio[t] = pr[x] / qr[x]; /* q(x) > 0: x was drawn from q */
        ulast = u;
        if (obs->pos)
            obs->pos[(t - 1) * V + x] += 1.0;
        if (row)
            row[t] = x;
        prev = x;
    }
    double e_rej, e_calls = S_forward(p, w, &e_rej);
    /* The rejections N ~ P(. | x) by the inverse CDF of uniform T+1: the
     * same uniform for every verifier, so their counts are comonotone
     * given x. */
    double U = p->bugs & SD_PAIRED_BUG_REUSE_DRAW ? ulast : sd_stream_uniform(&rng);
    double tot = 0.0;
    for (size_t k = 0; k <= T; k++)
        tot += w->term[k];
    size_t k = sd_dist_sample(w->term, T + 1, tot, U);
    /* Backward: given (x, N), the state entering t and its event, for
     * t = T, ..., 1, by the inverse CDF of uniforms T+2, T+3, ... over
     * the weights alpha_t(i, .) · P(i -> what follows). */
    size_t cur = SIZE_MAX;
    for (size_t t = T; t >= 1; t--) {
        size_t lo = w->off[t], hi = w->off[t + 1], pick = SIZE_MAX, last = SIZE_MAX;
        int ended = 0, last_end = 0;
        double sum = 0.0, wa, we;
        for (size_t i = lo; i < hi; i++) {
            S_edges(w, i, t, cur, k, &wa, &we);
            sum += wa + we;
        }
        double u = sd_stream_uniform(&rng) * sum, acc = 0.0;
        for (size_t i = lo; i < hi && pick == SIZE_MAX; i++) {
            S_edges(w, i, t, cur, k, &wa, &we);
            if (wa > 0.0) {
                last = i;
                last_end = 0;
                if (u < (acc += wa))
                    pick = i;
            }
            if (pick == SIZE_MAX && we > 0.0) {
                last = i;
                last_end = 1;
                if (u < (acc += we)) {
                    pick = i;
                    ended = 1;
                }
            }
        }
        if (pick == SIZE_MAX) { /* u at the top within rounding: the last edge of positive weight */
            pick = last;
            ended = last_end;
        }
        /* (cur, k) has positive weight, and the forward pass formed it from
         * these very products: one of them is positive. */
        assert(pick != SIZE_MAX);
        w->ev[t] = !ended ? S_EV_ACCEPT : w->rej[pick] ? S_EV_REJECT : S_EV_BONUS;
        if (ended)
            k -= w->rej[pick];
        cur = pick;
    }
    /* Replay the events into iterations. */
    sd_trial tr = {0, 0, 0, 0, 0, 0.0, 0.0};
    S_iter it = {1, 0};
    for (size_t t = 1; t <= T; t++) {
        int ends = w->ev[t] != S_EV_ACCEPT || t == T;
        if (w->ev[t] == S_EV_ACCEPT)
            it.accepted++;
        if (!ends)
            continue;
        tr.rejections += w->ev[t] == S_EV_REJECT;
        tr.target_calls++;
        tr.iterations++;
        tr.accepted += it.accepted;
        tr.emitted += t - it.start + 1;
        if (obs->hist)
            obs->hist[it.accepted] += 1.0;
        if (obs->acc)
            sd_welford_add(obs->acc, (double)it.accepted);
        it = (S_iter){t + 1, 0};
    }
    tr.rb_rejections = e_rej;
    tr.rb_target_calls = e_calls;
    *rec = tr;
}

static void S_run(const void *plan, void *work, uint64_t seed, uint64_t lo, uint64_t hi, const sd_observe *obs)
{
    const S_plan *p = plan;
    S_work *w = work;
    size_t T = p->c->T;
    for (uint64_t t = lo; t < hi; t++) {
        sd_trial tr;
        S_trial(p, w, seed, t, obs, &tr, obs->tokens ? obs->tokens + (size_t)(t - lo) * (T + 1) : NULL);
        if (obs->rej)
            sd_welford_add(obs->rej, (double)tr.rejections);
        if (obs->calls)
            sd_welford_add(obs->calls, (double)tr.target_calls);
        if (obs->rb)
            sd_welford_add(obs->rb, tr.rb_rejections);
        if (obs->per_trial)
            obs->per_trial[t - lo] = tr;
    }
}

const sd_kernel_type sd_paired_kernel = {
    .name = SD_PAIRED_KERNEL_NAME,
    .supports = SD_OBS_STATS | SD_OBS_POS | SD_OBS_PER_TRIAL | SD_OBS_TOKENS | SD_OBS_RB,
    .plan_new = S_plan_new_refused,
    .plan_free = S_plan_free,
    .work_new = S_work_new,
    .work_free = S_work_free,
    .run = S_run,
};
