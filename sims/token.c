/* token.c — token-level speculative decoding.
 *
 * 004_2700e131d6873633.txt Alg. 1; 001_b9258a43e636c550.txt Alg. 1; SPEC §2.
 * Draft x̃_n, x̃_{n+1}, ... from p; accept x̃_t with probability
 * min(1, q_t(x̃_t)/p_t(x̃_t)); at the first failure sample [q_t - p_t]+ and
 * stop (a rejection).  If all G draft tokens pass and the horizon is not
 * reached, one bonus token comes from q.  Drafting and verifying are
 * interleaved: tokens after the first failure would be discarded, so not
 * drawing them changes no law.
 *
 * The verifier below is the reference; sd_token_plan_trial() at the end of
 * the file is the same computation on precomputed tables (sd_token.h), which
 * the driver uses for stored chains. */
#include <math.h>
#include <stdlib.h>

#include "../src/sd_dist.h"
#include "../src/sd_rngbuf.h"
#include "sd_token.h"
#include "sd_verifier.h"

/* The accept test, shared by every verifier that uses the standard
 * token-level rule: with u uniform in [0,1), P(accept) = min(1, q/p)
 * exactly (u < q/p written without the division; p > 0 because x was drawn
 * from p).  `<`, not `<=`: see sd_rng.h. */
static int S_accept(double u, double p, double q)
{
    return u * p < q;
}

static int S_step(void *state, const sd_chain *c, const sd_params *par,
                  sd_stream *rng, size_t n, size_t prev, size_t *out,
                  sd_iter *it, sd_error *err)
{
    (void)state;
    (void)err;
    size_t V = c->V, G = sd_draft_len(c, par, n);
    for (size_t i = 0; i < G; i++) {
        size_t t = n + i;
        const double *p = sd_chain_p(c, t, prev), *q = sd_chain_q(c, t, prev);
        size_t x = sd_dist_sample(p, V, 1.0, sd_stream_uniform(rng));
        if (!S_accept(sd_stream_uniform(rng), p[x], q[x])) {
            double mass = sd_dist_tv(p, q, V);
            out[i] = sd_dist_sample_residual(p, q, V, mass, sd_stream_uniform(rng));
            it->accepted = i;
            it->emitted = i + 1;
            it->rejected = 1;
            return SD_OK;
        }
        out[i] = x;
        prev = x;
    }
    it->accepted = G;
    it->emitted = G;
    if (n + G <= c->T) { /* bonus token from q */
        out[G] = sd_dist_sample(sd_chain_q(c, n + G, prev), V, 1.0, sd_stream_uniform(rng));
        it->emitted = G + 1;
    }
    return SD_OK;
}

static int S_alloc(void **state, const sd_chain *c, const sd_params *par, sd_error *err)
{
    (void)c;
    (void)par;
    (void)err;
    *state = NULL;
    return SD_OK;
}

const sd_verifier_type sd_verifier_token = {
    .name = "token",
    .summary = "token-level speculative decoding (004_ Alg. 1, 001_ Alg. 1)",
    .params = "gamma",
    .claims_lossless = NULL,
    .alloc = S_alloc,
    .free = NULL,
    .begin = NULL,
    .step = S_step,
};

/* --- the fast kernel (sd_token.h) ---------------------------------------- */

/* One entry of a row: running sums and the values the accept test reads,
 * together so that a draw and its test touch one cache line. */
typedef struct {
    double cp; /* Σ_{i<=x} p(i), summed as sd_dist_sample does */
    double p, q;
    double cr; /* Σ_{i<=x} max(0, q-p)(i), as sd_dist_sample_residual */
} S_ent;

struct sd_token_plan {
    const sd_chain *c;
    size_t V, T, steps, G, gamma;
    S_ent *ent;              /* [rows][V] */
    uint32_t *gp, *gr;       /* [rows][G] guide tables of cp and cr */
    double *mass;            /* [rows] Σ max(0, q-p) = TV */
    uint32_t *lastp, *lastr; /* [rows] last index of positive weight */
    double *cq;              /* [rows][V] Σ q (bonus draws; gamma > 0 only) */
    uint32_t *gq, *lastq;
    /* V <= S_NARROW: the running sums cp and cr of each row again,
     * contiguous and padded with +inf to S_NARROW entries, for a branchless
     * draw: the smallest i with target < cs[i] is #{i : cs[i] <= target}
     * (the sums do not decrease), with no mispredicted loop exit. */
    double *np, *nr;         /* [rows][S_NARROW] or NULL */
};

#define S_NARROW 8

static size_t S_pow2_at_least(size_t V)
{
    size_t G = 1;
    while (G < V)
        G <<= 1;
    return G;
}

size_t sd_token_plan_bytes(const sd_chain *c, const sd_params *par)
{
    size_t V = c->V, G = S_pow2_at_least(V);
    size_t steps = (c->draft_steps == 1 && c->target_steps == 1) ? 1 : c->T;
    if (V > UINT32_MAX || steps > SIZE_MAX / V)
        return SIZE_MAX;
    size_t rows = steps * V;
    double per_row = (double)V * sizeof(S_ent) + 2.0 * (double)G * sizeof(uint32_t) +
                     sizeof(double) + 2 * sizeof(uint32_t);
    if (par->gamma)
        per_row += (double)V * sizeof(double) + (double)G * sizeof(uint32_t) + sizeof(uint32_t);
    if (V <= S_NARROW)
        per_row += 2.0 * S_NARROW * sizeof(double);
    double total = per_row * (double)rows;
    return total >= (double)SIZE_MAX ? SIZE_MAX : (size_t)total;
}

/* g[k] = the smallest i with cs[i·stride] > fl((k/G)·m), or V if none. */
static void S_guide(const double *cs, size_t stride, size_t V, size_t G, double m, uint32_t *g)
{
    size_t i = 0;
    for (size_t k = 0; k < G; k++) {
        double lo = ((double)k / (double)G) * m;
        while (i < V && !(cs[i * stride] > lo))
            i++;
        g[k] = (uint32_t)i;
    }
}

/* The same by counting, for rows padded to S_NARROW entries. */
static inline size_t S_count(const double *cs, double target, size_t V, size_t last)
{
    size_t n = 0;
    for (size_t i = 0; i < S_NARROW; i++)
        n += cs[i] <= target;
    return n < V ? n : last;
}

/* The smallest x with target < cs[x·stride], starting at the guide entry of
 * u (target = fl(u·m), see S_guide), or `last` when rounding leaves target
 * beyond the final sum (sd_dist_sample's fallback). */
static inline size_t S_search(const double *cs, size_t stride, const uint32_t *g, size_t V,
                              size_t G, double u, double target, size_t last)
{
    size_t i = g[(size_t)(u * (double)G)];
    while (i < V && !(target < cs[i * stride]))
        i++;
    return i < V ? i : last;
}

void sd_token_plan_free(sd_token_plan *plan)
{
    if (!plan)
        return;
    free(plan->ent);
    free(plan->gp);
    free(plan->gr);
    free(plan->mass);
    free(plan->lastp);
    free(plan->lastr);
    free(plan->cq);
    free(plan->gq);
    free(plan->lastq);
    free(plan->np);
    free(plan->nr);
    free(plan);
}

int sd_token_plan_new(const sd_chain *c, const sd_params *par, sd_token_plan **out, sd_error *err)
{
    *out = NULL;
    size_t bytes = sd_token_plan_bytes(c, par);
    if (bytes > SD_TOKEN_PLAN_MAX_BYTES)
        return sd_error_set(err, SD_ETOOBIG,
                            "token kernel tables for V=%zu, T=%zu need %zu bytes; limit %zu", c->V,
                            c->T, bytes, SD_TOKEN_PLAN_MAX_BYTES);
    sd_token_plan *pl = calloc(1, sizeof *pl);
    if (!pl)
        return sd_error_set(err, SD_ENOMEM, "out of memory for the token kernel");
    size_t V = c->V, G = S_pow2_at_least(V);
    size_t steps = (c->draft_steps == 1 && c->target_steps == 1) ? 1 : c->T;
    size_t rows = steps * V;
    pl->c = c;
    pl->V = V;
    pl->T = c->T;
    pl->steps = steps;
    pl->G = G;
    pl->gamma = par->gamma;
    pl->ent = malloc(rows * V * sizeof *pl->ent);
    pl->gp = malloc(rows * G * sizeof *pl->gp);
    pl->gr = malloc(rows * G * sizeof *pl->gr);
    pl->mass = malloc(rows * sizeof *pl->mass);
    pl->lastp = malloc(rows * sizeof *pl->lastp);
    pl->lastr = malloc(rows * sizeof *pl->lastr);
    int ok = pl->ent && pl->gp && pl->gr && pl->mass && pl->lastp && pl->lastr;
    if (ok && par->gamma) {
        pl->cq = malloc(rows * V * sizeof *pl->cq);
        pl->gq = malloc(rows * G * sizeof *pl->gq);
        pl->lastq = malloc(rows * sizeof *pl->lastq);
        ok = pl->cq && pl->gq && pl->lastq;
    }
    if (ok && V <= S_NARROW) {
        pl->np = malloc(rows * S_NARROW * sizeof *pl->np);
        pl->nr = malloc(rows * S_NARROW * sizeof *pl->nr);
        ok = pl->np && pl->nr;
    }
    if (!ok) {
        sd_token_plan_free(pl);
        return sd_error_set(err, SD_ENOMEM, "out of memory for the token kernel (%zu bytes)", bytes);
    }
    for (size_t r = 0; r < rows; r++) {
        size_t t = r / V + 1, a = r % V;
        const double *p = sd_chain_p(c, t, a), *q = sd_chain_q(c, t, a);
        S_ent *e = pl->ent + r * V;
        double rp = 0.0, rr = 0.0, rq = 0.0;
        size_t lp = 0, lr = 0, lq = 0;
        for (size_t x = 0; x < V; x++) {
            double d = q[x] - p[x];
            if (p[x] > 0.0) {
                rp += p[x];
                lp = x;
            }
            if (d > 0.0) {
                rr += d;
                lr = x;
            }
            e[x].cp = rp;
            e[x].p = p[x];
            e[x].q = q[x];
            e[x].cr = rr;
            if (pl->cq) {
                if (q[x] > 0.0) {
                    rq += q[x];
                    lq = x;
                }
                pl->cq[r * V + x] = rq;
            }
        }
        if (pl->np)
            for (size_t x = 0; x < S_NARROW; x++) {
                pl->np[r * S_NARROW + x] = x < V ? e[x].cp : INFINITY;
                pl->nr[r * S_NARROW + x] = x < V ? e[x].cr : INFINITY;
            }
        pl->mass[r] = rr;
        pl->lastp[r] = (uint32_t)lp;
        pl->lastr[r] = (uint32_t)lr;
        S_guide(&e[0].cp, 4, V, G, 1.0, pl->gp + r * G);
        S_guide(&e[0].cr, 4, V, G, rr, pl->gr + r * G);
        if (pl->cq) {
            pl->lastq[r] = (uint32_t)lq;
            S_guide(pl->cq + r * V, 1, V, G, 1.0, pl->gq + r * G);
        }
    }
    *out = pl;
    return SD_OK;
}

void sd_token_plan_trial(const sd_token_plan *pl, uint64_t seed, uint64_t trial, size_t *tokens,
                         size_t *rejections, size_t *iterations, double *hist, sd_welford *acc)
{
    const sd_chain *c = pl->c;
    const size_t V = pl->V, T = pl->T, G = pl->G, per_step = pl->steps == 1 ? 0 : V;
    sd_rngbuf rng;
    sd_rngbuf_init(&rng, seed, trial);
    size_t prev = sd_dist_sample(c->init, V, 1.0, sd_rngbuf_uniform(&rng));
    tokens[0] = prev;
    size_t rej = 0, its = 0;
    for (size_t n = 1; n <= T;) {
        size_t len = T - n + 1;
        if (pl->gamma && pl->gamma < len)
            len = pl->gamma;
        size_t i = 0;
        int rejected = 0;
        for (; i < len; i++) {
            size_t t = n + i, row = (t - 1) * per_step + prev;
            const S_ent *e = pl->ent + row * V;
            double u = sd_rngbuf_uniform(&rng);
            size_t x = pl->np ? S_count(pl->np + row * S_NARROW, u, V, pl->lastp[row])
                              : S_search(&e[0].cp, 4, pl->gp + row * G, V, G, u, u, pl->lastp[row]);
            if (!(sd_rngbuf_uniform(&rng) * e[x].p < e[x].q)) {
                double m = pl->mass[row];
                u = sd_rngbuf_uniform(&rng);
                x = pl->np ? S_count(pl->nr + row * S_NARROW, u * m, V, pl->lastr[row])
                           : S_search(&e[0].cr, 4, pl->gr + row * G, V, G, u, u * m, pl->lastr[row]);
                tokens[t] = x;
                prev = x;
                rejected = 1;
                break;
            }
            tokens[t] = x;
            prev = x;
        }
        size_t accepted = i, emitted = rejected ? i + 1 : i;
        if (!rejected && n + len <= T) { /* bonus token from q */
            size_t t = n + len, row = (t - 1) * per_step + prev;
            double u = sd_rngbuf_uniform(&rng);
            prev = S_search(pl->cq + row * V, 1, pl->gq + row * G, V, G, u, u, pl->lastq[row]);
            tokens[t] = prev;
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
