/* sd_paired.c — the output-first path (sd_paired.h). */
#include "sd_paired.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../src/sd_dist.h"
#include "sd_token.h"

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

sd_given_output_fn sd_paired_rule(const sd_verifier_type *vt)
{
    if (vt->given_output)
        return vt->given_output;
    /* sims/token.c does not set the slot yet (see docs/findings.md). */
    return vt == &sd_verifier_token ? sd_paired_token_rule : NULL;
}

typedef struct {
    const sd_chain *c;
    const sd_params *par;
    sd_given_output_fn rule;
    unsigned bugs;
} S_plan;

/* The exact filter of the iteration structure given x: states (mass, s,
 * drafts left); an iteration with 0 drafts left is at its bonus position. */
typedef struct {
    size_t T, n;
    double *mass, *s;
    size_t *left;
} S_work;

int sd_paired_plan_new(void **plan, const sd_verifier_type *vt, const sd_model *m, const sd_params *par,
                       unsigned bugs, sd_error *err)
{
    *plan = NULL;
    sd_given_output_fn rule = sd_paired_rule(vt);
    if (!rule || !m->chain || !sd_verifier_claims_lossless(vt, par))
        return sd_error_set(err, SD_EUSAGE,
                            "--algo %s: no output-first law (lossless token-level or block verification "
                            "on a stored chain)", vt->name);
    S_plan *p = malloc(sizeof *p);
    if (!p)
        return sd_error_set(err, SD_ENOMEM, "out of memory");
    p->c = m->chain;
    p->par = par;
    p->rule = rule;
    p->bugs = bugs;
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

static int S_work_new(const void *plan, void **work, sd_error *err)
{
    const S_plan *p = plan;
    size_t T = p->c->T;
    S_work *w = calloc(1, sizeof *w);
    if (w) {
        w->T = T;
        w->mass = malloc((T + 1) * sizeof *w->mass);
        w->s = malloc((T + 1) * sizeof *w->s);
        w->left = malloc((T + 1) * sizeof *w->left);
    }
    if (!w || !w->mass || !w->s || !w->left) {
        if (w) {
            free(w->mass);
            free(w->s);
            free(w->left);
        }
        free(w);
        return sd_error_set(err, SD_ENOMEM, "out of memory for the output-first path (T = %zu)", T);
    }
    *work = w;
    return SD_OK;
}

static void S_work_free(void *work)
{
    S_work *w = work;
    if (w) {
        free(w->mass);
        free(w->s);
        free(w->left);
    }
    free(w);
}

/* One position of the filter: every state decides at ratio r (or ends at
 * its bonus); the mass that ends starts a new iteration with `next_left`
 * drafts (0: none, the horizon).  States with s = 1 and the same drafts
 * left have the same future and are merged.  Returns the mass that ends;
 * *rej the part that ends with a rejection. */
static double S_filter_step(S_work *w, sd_given_output_fn rule, double r, size_t next_left, double *rej)
{
    double ended = 0.0, rejected = 0.0;
    size_t k = 0;
    for (size_t i = 0; i < w->n; i++) {
        if (w->left[i] == 0) { /* the bonus position */
            ended += w->mass[i];
            continue;
        }
        double s = w->s[i], a = rule(&s, r), stop = w->mass[i] * (1.0 - a);
        ended += stop;
        rejected += stop;
        if (!(a > 0.0))
            continue;
        w->mass[k] = w->mass[i] * a;
        w->s[k] = s;
        w->left[k] = w->left[i] - 1;
        k++;
    }
    if (next_left > 0 && ended > 0.0) {
        w->mass[k] = ended;
        w->s[k] = 1.0;
        w->left[k] = next_left;
        k++;
    }
    /* merge: at most one state with s = 1 per number of drafts left */
    size_t m = 0;
    for (size_t i = 0; i < k; i++) {
        size_t j = 0;
        if (w->s[i] == 1.0)
            for (j = 0; j < m && !(w->s[j] == 1.0 && w->left[j] == w->left[i]); j++)
                ;
        if (w->s[i] == 1.0 && j < m) {
            w->mass[j] += w->mass[i];
        } else {
            w->mass[m] = w->mass[i];
            w->s[m] = w->s[i];
            w->left[m] = w->left[i];
            m++;
        }
    }
    w->n = m;
    *rej = rejected;
    return ended;
}

/* The iteration being run: drafts left, state, start, accepted so far. */
typedef struct {
    size_t left, start, accepted;
    double s;
} S_iter;

static void S_trial(const S_plan *p, S_work *w, uint64_t seed, uint64_t trial, const sd_observe *obs,
                    sd_trial *rec, size_t *row)
{
    const sd_chain *c = p->c;
    const size_t V = c->V, T = c->T;
    sd_stream rng;
    sd_stream_init(&rng, seed, trial);
    size_t prev = sd_dist_sample(c->init, V, 1.0, sd_stream_uniform(&rng));
    if (row)
        row[0] = prev;
    sd_trial tr = {0, 0, 0, 0, 0, 0.0, 0.0};
    S_iter it = {sd_draft_len(c, p->par, 1), 1, 0, 1.0};
    int rb = obs->rb || obs->per_trial;
    w->n = 1;
    w->mass[0] = 1.0;
    w->s[0] = 1.0;
    w->left[0] = it.left;
    double e_rej = 0.0, e_calls = 1.0;
    for (size_t t = 1; t <= T; t++) {
        const double *pr = sd_chain_p(c, t, prev), *qr = sd_chain_q(c, t, prev);
        double u = sd_stream_uniform(&rng);
        size_t x = sd_dist_sample(qr, V, 1.0, u);
        double v = sd_stream_uniform(&rng);
        if (p->bugs & SD_PAIRED_BUG_REUSE_DRAW)
            v = u;
        /* q(x) > 0: x was drawn from q. */
        double r = pr[x] / qr[x];
        size_t next_left = t < T ? sd_draft_len(c, p->par, t + 1) : 0;
        if (rb) {
            double rej;
            double ended = S_filter_step(w, p->rule, r, next_left, &rej);
            e_rej += rej;
            if (t < T)
                e_calls += ended;
        }
        int ends = 0, rejected = 0;
        if (it.left == 0) { /* the bonus token x_t ~ q */
            ends = 1;
        } else if (v < p->rule(&it.s, r)) {
            it.accepted++;
            it.left--;
            ends = t == T; /* all accepted up to the horizon */
        } else {
            ends = rejected = 1; /* x_t is the residual token */
        }
        if (ends) {
            tr.rejections += (size_t)rejected;
            tr.target_calls++;
            tr.iterations++;
            tr.accepted += it.accepted;
            tr.emitted += t - it.start + 1;
            if (obs->hist)
                obs->hist[it.accepted] += 1.0;
            if (obs->acc)
                sd_welford_add(obs->acc, (double)it.accepted);
            it = (S_iter){next_left, t + 1, 0, 1.0};
        }
        if (obs->pos)
            obs->pos[(t - 1) * V + x] += 1.0;
        if (row)
            row[t] = x;
        prev = x;
    }
    tr.rb_rejections = rb ? e_rej : NAN;
    tr.rb_target_calls = rb ? e_calls : NAN;
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
