/* greedy_exact.c — greedy block verification (sims/verifiers/greedy_block.c; Sun et
 * al. 2025, App. C, Alg. 4–6, eq. 31) computed exactly.
 *
 * An iteration of greedy-block depends on more than (n, x_{n-1}): its
 * target is q modified by every earlier iteration whose zone still covers
 * the position (eq. 31), each with the ratio r_f = Mb(path)/Ms(path) of the
 * path emitted since that iteration started.  Its full state is therefore
 *     s = (n, x_{n-1}, the active frames (e_f, r_f) oldest first),
 * and the generation is a Markov chain on these states.  With D_1 =
 * init on (1, x_0, no frame), states are visited in increasing n; each one
 * of mass W is expanded by enumerating its iteration exactly:
 *
 *   draft prefixes X^i (i = 0..G, draft probability P(X^i) > 0) in a
 *   depth-first walk that keeps the frames' ratios along the prefix
 *   (sd_greedy_extend), with a_0 = 1, a_i = min(h_i, 1) (1 <= i < G) and
 *   a_G = min(p_G, 1) the probabilities that sub-block i is accepted
 *   (Alg. 4: η_i < h_i, η_G < p_G, independent uniforms);
 *   τ is the largest accepted i, so with the probability that no later
 *   sub-block is accepted,
 *       S(X^i) = Σ_x p(x|X^i) (1 - a_{i+1}(X^i x)) S(X^i x),  S(X^G) = 1,
 *   P(X^i, τ = i) = P(X^i) a_i(X^i) S(X^i);
 *   a prefix whose target joint is 0 ends the drafting (a_j = 0 beyond);
 *   then Y ~ sd_greedy_next_row (the bonus when τ = G, eq. 30's residual
 *   otherwise) unless the block ends at the horizon, and the next state
 *   is (n+τ+1, Y, sd_greedy_frames_after) without the frames whose zones
 *   ended before n+τ+1.
 *
 * Every piece of the modification arithmetic is the Monte-Carlo step's own
 * (sd_greedy.h), so the two compute the same targets to the last bit; only
 * the random choices become sums over their outcomes.
 *
 * States that agree exactly (the ratios' bits included) are merged by a
 * hash table per position; E[N_rej] = Σ mass of the outcomes with τ < G,
 * E[target calls] = Σ mass of all outcomes (one call per iteration).  For
 * the law of the first L tokens the state also carries x_1..x_{n-1} (as
 * the cell index) and the walk stops at position L.
 *
 * Cost.  Every state enumerates up to Σ_{i<=G} V^i draft prefixes.  The
 * states do not stay few: a frame's ratio is computed with the target of
 * its iteration, which the frames before it modified, so along a run of
 * iterations that each leave a zone the ratios depend on the whole run,
 * and the states grow geometrically with n (docs/findings.md: about T = 9
 * at V = 7, gamma 2).  Refused (SD_ETOOBIG, naming the count and the
 * limit): V^G beyond S_MAX_PREFIXES before anything is done; then as soon
 * as the live states exceed S_MAX_STATES, or the prefixes enumerated, or
 * projected (the states left at a position, and the positions left, each
 * at the mean work so far at the current position), exceed
 * S_MAX_PREFIXES. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../verifiers/sd_greedy.h"
#include "../engine/sd_sim.h"

/* Live states (those at the positions not yet expanded): 2^20, about
 * 100 MB with their frames. */
#define S_MAX_STATES ((size_t)1 << 20)
/* Draft prefixes enumerated over the whole computation: 2^24, about 2 s
 * of one core (7.5 million prefixes a second at V = 7, gamma = 2;
 * docs/findings.md).  `run` asks for the exact values on every run, so
 * a refusal must come quickly. */
#define S_MAX_PREFIXES_LOG2 24
#define S_MAX_PREFIXES ((double)((size_t)1 << S_MAX_PREFIXES_LOG2))

typedef struct {
    size_t prev, cell, nf, fo; /* fo: offset of its frames in the pool */
    double mass;
    uint64_t hash;
} S_entry;

/* The states at one position: entries in insertion order (the order they
 * are expanded in, so that every sum is in a fixed order), their frames,
 * and an open-addressing index (slot = entry + 1, 0 empty). */
typedef struct {
    S_entry *e;
    size_t n, cap;
    sd_greedy_frame *pool;
    size_t np, capp;
    size_t *idx;
    size_t nidx; /* a power of 2, at least twice n */
} S_table;

typedef struct {
    const sd_chain *c;
    const sd_params *par;
    sd_greedy *st;
    size_t V, T, cap;
    size_t L;            /* > 0: the law of x_1..x_L into out; 0: the expectations */
    double *out;
    S_table *tab;        /* [T+2], by position */
    double *Dd;          /* [(cap+1) (cap+1) V]: the levels at each draft depth */
    double *w;           /* [V]: the law of Y */
    size_t *tok;         /* [cap+1]: the draft prefix */
    sd_greedy_frame *nx; /* [cap]: the frames after an outcome */
    /* the state being expanded */
    size_t n, G, cell;
    double W;
    /* results */
    double rej, calls, first;
    double prefixes;
    size_t live, states;
    sd_error *err;
} S_ex;

static uint64_t S_mix(uint64_t h, uint64_t x)
{
    h ^= x + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h ^= h >> 31;
    h *= 0xbf58476d1ce4e5b9ull;
    return h ^ (h >> 29);
}

static uint64_t S_bits(double x)
{
    uint64_t b;
    x += 0.0; /* -0 -> +0 */
    memcpy(&b, &x, sizeof b);
    return b;
}

static uint64_t S_hash(size_t prev, size_t cell, const sd_greedy_frame *f, size_t nf)
{
    uint64_t h = S_mix(S_mix(S_mix(0, prev), cell), nf);
    for (size_t a = 0; a < nf; a++)
        h = S_mix(S_mix(S_mix(h, f[a].e), S_bits(f[a].r.a)), S_bits(f[a].r.b));
    return h;
}

static int S_same(const S_table *t, const S_entry *s, size_t prev, size_t cell,
                  const sd_greedy_frame *f, size_t nf)
{
    if (s->prev != prev || s->cell != cell || s->nf != nf)
        return 0;
    const sd_greedy_frame *g = t->pool + s->fo;
    for (size_t a = 0; a < nf; a++)
        if (g[a].e != f[a].e || g[a].r.a != f[a].r.a || g[a].r.b != f[a].r.b)
            return 0;
    return 1;
}

static void S_table_free(S_table *t)
{
    free(t->e);
    free(t->pool);
    free(t->idx);
    memset(t, 0, sizeof *t);
}

static int S_grow(void **p, size_t *cap, size_t need, size_t size, sd_error *err)
{
    if (need <= *cap)
        return SD_OK;
    size_t c = *cap ? *cap : 16;
    while (c < need)
        c *= 2;
    void *q = realloc(*p, c * size);
    if (!q)
        return sd_error_set(err, SD_ENOMEM, "greedy-block exact: out of memory for %zu states", c);
    *p = q;
    *cap = c;
    return SD_OK;
}

static int S_reindex(S_table *t, sd_error *err)
{
    size_t m = t->nidx ? 2 * t->nidx : 64;
    size_t *idx = calloc(m, sizeof *idx);
    if (!idx)
        return sd_error_set(err, SD_ENOMEM, "greedy-block exact: out of memory for %zu states", t->n);
    for (size_t k = 0; k < t->n; k++) {
        size_t h = (size_t)t->e[k].hash & (m - 1);
        while (idx[h])
            h = (h + 1) & (m - 1);
        idx[h] = k + 1;
    }
    free(t->idx);
    t->idx = idx;
    t->nidx = m;
    return SD_OK;
}

/* Adds mass to the state (position of t, prev, cell, frames), creating it. */
static int S_add(S_ex *ex, S_table *t, size_t prev, size_t cell, const sd_greedy_frame *f,
                 size_t nf, double mass)
{
    uint64_t hash = S_hash(prev, cell, f, nf);
    if (t->nidx) {
        size_t h = (size_t)hash & (t->nidx - 1);
        for (; t->idx[h]; h = (h + 1) & (t->nidx - 1)) {
            S_entry *s = &t->e[t->idx[h] - 1];
            if (s->hash == hash && S_same(t, s, prev, cell, f, nf)) {
                s->mass += mass;
                return SD_OK;
            }
        }
    }
    if (++ex->live > S_MAX_STATES)
        return sd_error_set(ex->err, SD_ETOOBIG,
                            "greedy-block exact: more than %zu live states (n, x_{n-1}, active "
                            "modifications) at position %zu (limit): give a smaller --gamma, V or T",
                            S_MAX_STATES, ex->n);
    ex->states++;
    int rc = S_grow((void **)&t->e, &t->cap, t->n + 1, sizeof *t->e, ex->err);
    if (!rc)
        rc = S_grow((void **)&t->pool, &t->capp, t->np + nf, sizeof *t->pool, ex->err);
    if (rc)
        return rc;
    S_entry *s = &t->e[t->n++];
    *s = (S_entry){prev, cell, nf, t->np, mass, hash};
    if (nf)
        memcpy(t->pool + t->np, f, nf * sizeof *f);
    t->np += nf;
    if (2 * t->n > t->nidx)
        return S_reindex(t, ex->err);
    size_t h = (size_t)hash & (t->nidx - 1);
    while (t->idx[h])
        h = (h + 1) & (t->nidx - 1);
    t->idx[h] = t->n;
    return SD_OK;
}

/* An outcome of mass m: the iteration at ex->n emitted X^tau (ex->tok)
 * and, when y < V, the token y; nf frames in ex->nx after it. */
static int S_land(S_ex *ex, size_t tau, size_t y, double m, size_t nf)
{
    size_t V = ex->V, n = ex->n, e = tau + (y < V), n2 = n + e, cell = ex->cell;
    if (ex->L) { /* x_1..x_{n-1} are in the cell: append up to x_L */
        for (size_t k = 0; k < e && n + k <= ex->L; k++)
            cell = cell * V + (k < tau ? ex->tok[k] : y);
        if (n2 > ex->L) {
            ex->out[cell] += m;
            return SD_OK;
        }
    } else if (n2 > ex->T) {
        return SD_OK;
    }
    /* n2 <= T: the iteration ended with a token y < V */
    size_t keep = 0;
    while (keep < nf && ex->nx[keep].e < n2)
        keep++;
    return S_add(ex, &ex->tab[n2], y, cell, ex->nx + keep, nf - keep, m);
}

/* The outcomes τ = tau of mass m (the drafts X^tau in ex->tok; D, a0, top,
 * p: the levels and rows at depth tau, after token ytau). */
static int S_emit(S_ex *ex, size_t tau, double m, const double *D, size_t a0, const double *top,
                  const double *p, size_t ytau)
{
    size_t V = ex->V, n = ex->n, G = ex->G;
    ex->calls += m;
    if (n == 1)
        ex->first += m * (double)tau;
    if (tau == G && n + G > ex->T) /* the block ends at the horizon */
        return S_land(ex, tau, V, m, 0);
    double norm = sd_greedy_next_row(ex->st, tau, tau == G, top, p, sd_chain_q(ex->c, n + tau, ytau),
                                      ex->w);
    int rc = SD_OK;
    for (size_t y = 0; y < V && !rc; y++) {
        double my = m * (ex->w[y] / norm);
        if (!(my > 0.0))
            continue;
        if (tau < G)
            ex->rej += my;
        size_t nf = sd_greedy_frames_after(ex->st, n, G, tau, y, p[y], D, a0, top, ex->nx);
        rc = S_land(ex, tau, y, my, nf);
    }
    return rc;
}

/* The draft prefix X^i (last token y, draft probability P): emits the
 * outcomes τ = i and returns in *ret (1 - a_i) S(X^i). */
static int S_node(S_ex *ex, size_t i, size_t y, double P, double *ret)
{
    sd_greedy *st = ex->st;
    size_t V = ex->V, n = ex->n, G = ex->G;
    if (++ex->prefixes > S_MAX_PREFIXES)
        return sd_error_set(ex->err, SD_ETOOBIG,
                            "greedy-block exact: more than 2^%d draft prefixes to enumerate (limit; "
                            "%zu states so far, at position %zu): give a smaller --gamma, V or T",
                            S_MAX_PREFIXES_LOG2, ex->states, n);
    if (i > 0 && st->K[i].a == 0.0) { /* a_j = 0 from here on */
        *ret = 1.0;
        return SD_OK;
    }
    double *D = ex->Dd + i * (ex->cap + 1) * V;
    size_t a0 = 0, L = 0;
    const double *top = NULL, *p = NULL;
    if (i < G || n + G <= ex->T) {
        L = sd_greedy_levels(st, ex->c, i, n + i, y, D, &a0);
        top = D + L * V;
        p = sd_chain_p(ex->c, n + i, y);
    }
    double S = 1.0, a;
    if (i < G) {
        S = 0.0;
        for (size_t x = 0; x < V; x++) {
            if (!(p[x] > 0.0))
                continue;
            sd_greedy_extend(st, D, a0, L, i, x, p[x]);
            ex->tok[i] = x;
            double r;
            int rc = S_node(ex, i + 1, x, P * p[x], &r);
            if (rc)
                return rc;
            S += p[x] * r;
        }
        if (i == 0) {
            a = 1.0;
        } else { /* P(η den < num) for η uniform on [0,1) */
            double num, den;
            sd_greedy_h(st, i, top, p, &num, &den);
            a = num > 0.0 ? (den > num ? num / den : 1.0) : 0.0;
        }
    } else {
        double pg = sd_greedy_pG(st, G);
        a = pg < 1.0 ? pg : 1.0;
    }
    *ret = (1.0 - a) * S;
    double m = ex->W * P * a * S;
    return m > 0.0 ? S_emit(ex, i, m, D, a0, top, p, y) : SD_OK;
}

static void S_ex_free(S_ex *ex)
{
    if (ex->tab)
        for (size_t n = 0; n < ex->T + 2; n++)
            S_table_free(&ex->tab[n]);
    free(ex->tab);
    free(ex->Dd);
    free(ex->w);
    free(ex->tok);
    free(ex->nx);
    sd_greedy_free(ex->st);
}

static int S_refuse(S_ex *ex, double projected)
{
    return sd_error_set(ex->err, SD_ETOOBIG,
                        "greedy-block exact: about %.3g draft prefixes to enumerate, at the rate "
                        "of position %zu (%zu states so far); limit 2^%d: give a smaller --gamma, "
                        "V or T",
                        projected, ex->n, ex->states, S_MAX_PREFIXES_LOG2);
}

/* Draft prefixes of one iteration with draft length G: Σ_{i<=G} V^i. */
static double S_tree(size_t V, size_t G)
{
    double s = 0.0, x = 1.0;
    for (size_t i = 0; i <= G; i++, x *= (double)V)
        s += x;
    return s;
}

/* Runs the chain of states up to position last (T, or L for the law). */
static int S_run(S_ex *ex, const sd_chain *c, const sd_params *par, sd_greedy_mode mode,
                 size_t last, sd_error *err)
{
    size_t V = c->V;
    ex->c = c;
    ex->par = par;
    ex->V = V;
    ex->T = c->T;
    ex->err = err;
    size_t G1 = sd_draft_len(c, par, 1);
    double blocks = pow((double)V, (double)G1);
    if (blocks > S_MAX_PREFIXES)
        return sd_error_set(err, SD_ETOOBIG,
                            "greedy-block exact: one iteration enumerates up to V^G = %zu^%zu = %.3g "
                            "draft blocks; limit 2^%d draft prefixes in all: give a smaller --gamma",
                            V, G1, blocks, S_MAX_PREFIXES_LOG2);
    int rc = sd_greedy_alloc(&ex->st, c, par, mode, err);
    if (rc)
        return rc;
    size_t cap = ex->cap = ex->st->cap;
    ex->tab = calloc(c->T + 2, sizeof *ex->tab);
    ex->Dd = malloc((cap + 1) * (cap + 1) * V * sizeof *ex->Dd);
    ex->w = malloc(V * sizeof *ex->w);
    ex->tok = malloc((cap + 1) * sizeof *ex->tok);
    ex->nx = malloc(cap * sizeof *ex->nx);
    /* rest[n] = Σ_{k=n..last} S_tree(V, G_k): the projection below */
    double *rest = calloc(last + 2, sizeof *rest);
    if (!ex->tab || !ex->Dd || !ex->w || !ex->tok || !ex->nx || !rest) {
        free(rest);
        return sd_error_set(err, SD_ENOMEM, "greedy-block exact: out of memory");
    }
    for (size_t n = last; n >= 1; n--)
        rest[n] = rest[n + 1] + S_tree(V, sd_draft_len(c, par, n));
    ex->n = 1;
    for (size_t a = 0; a < V && !rc; a++)
        if (c->init[a] > 0.0)
            rc = S_add(ex, &ex->tab[1], a, 0, NULL, 0, c->init[a]);
    for (size_t n = 1; n <= last && !rc; n++) {
        S_table *t = &ex->tab[n];
        ex->n = n;
        ex->G = sd_draft_len(c, par, n);
        double before = ex->prefixes;
        for (size_t k = 0; k < t->n && !rc; k++) {
            const S_entry *s = &t->e[k];
            ex->st->nf = s->nf;
            if (s->nf)
                memcpy(ex->st->fr, t->pool + s->fo, s->nf * sizeof *ex->st->fr);
            sd_greedy_enter(ex->st, n);
            ex->W = s->mass;
            ex->cell = s->cell;
            double r;
            rc = S_node(ex, 0, s->prev, 1.0, &r);
            /* the states left at this position, at the mean so far */
            double here = (ex->prefixes - before) * (double)t->n / (double)(k + 1);
            if (!rc && before + here > S_MAX_PREFIXES)
                rc = S_refuse(ex, before + here);
        }
        ex->live -= t->n;
        S_table_free(t);
        /* Refuse early: the positions left, each at this position's work
         * scaled to its draft length (the states rarely become fewer). */
        double proj = ex->prefixes + (ex->prefixes - before) * rest[n + 1] / S_tree(V, ex->G);
        if (!rc && proj > S_MAX_PREFIXES)
            rc = S_refuse(ex, proj);
    }
    free(rest);
    return rc;
}

int sd_greedy_exact(const sd_chain *c, const sd_params *par, sd_greedy_mode mode,
                    sd_greedy_exact_result *out, sd_error *err)
{
    S_ex ex = {0};
    int rc = S_run(&ex, c, par, mode, c->T, err);
    if (!rc) {
        out->rejections = ex.rej;
        out->target_calls = ex.calls;
        out->first_accepted = ex.first;
        out->states = ex.states;
        out->prefixes = (size_t)ex.prefixes;
    }
    S_ex_free(&ex);
    return rc;
}

int sd_greedy_exact_prefix(const sd_chain *c, const sd_params *par, sd_greedy_mode mode, size_t L,
                           double *out, sd_error *err)
{
    if (L < 1 || L > c->T)
        return sd_error_set(err, SD_EUSAGE, "--L %zu: expected 1..T = %zu", L, c->T);
    size_t ncells = sd_sim_cells(c->V, L, SD_SIM_MAX_CELLS);
    if (!ncells)
        return sd_error_set(err, SD_ETOOBIG, "V^L = %zu^%zu cells exceed the limit %zu", c->V, L,
                            SD_SIM_MAX_CELLS);
    memset(out, 0, ncells * sizeof *out);
    S_ex ex = {0};
    ex.L = L;
    ex.out = out;
    int rc = S_run(&ex, c, par, mode, L, err);
    S_ex_free(&ex);
    return rc;
}

/* The verifier's exact slot: the enumeration of sims/exact/greedy_exact.c. */
int sd_greedy_exact_values(const sd_model *m, const sd_params *par, sd_greedy_mode mode, sd_exact_values *out,
                           sd_error *err)
{
    if (!m->chain)
        return sd_error_set(err, SD_EUSAGE, "greedy-block: the exact enumeration needs a stored chain");
    sd_greedy_exact_result r;
    int rc = sd_greedy_exact(m->chain, par, mode, &r, err);
    if (rc)
        return rc;
    out->rejections = r.rejections;
    out->target_calls = r.target_calls;
    out->method = "exact enumeration of the iterations over (position, x_{n-1}, active "
                  "modifications of Sun et al. 2025, eq. 31)";
    return SD_OK;
}
