/* kernel_token.c — the alias lockstep kernel of token-level speculative
 * decoding on a stored chain (sd_token.h): the kernels token-alias and
 * token-alias-broken, and the pieces the streamed kernel
 * (kernel_token_stream.c) shares with them.  The verifier whose law it
 * samples, the mechanistic reference, is sims/verifiers/token.c. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif
#ifdef _OPENMP
#include <omp.h>
#endif

#include "../../src/sd_dist.h"
#include "../../src/sd_rng.h"
#include "../../src/sd_rngbuf.h"
#include "../verifiers/sd_token.h"
#include "../engine/sd_verifier.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define S_HAVE_X86 1
#else
#define S_HAVE_X86 0
#endif

/* --- the kernel (sd_token.h) ----------------------------------------------
 *
 * Why one draw per position has the law of Alg. 1 (Yin et al. 2024
 * Alg. 1 inside Alg. 2's loop; Theorem 1).  Let p = p_n(.|x_{n-1}=a)
 * and q = q_n(.|a) at a position n where the current iteration still drafts
 * (fewer than γ of its drafts accepted, or lookahead to the horizon).
 * Alg. 1 draws x̃_n ~ p and r ~ U[0,1) and keeps x̃_n iff r < q(x̃_n)/p(x̃_n)
 * (line 5, with `<`: sd_rng.h); otherwise line 8 draws x_n ~ [q-p]+/TV(p,q)
 * and the iteration ends (R_n = 1 in Theorem 1).  Given everything before
 * position n,
 *   P(R_n = 0, x_n = b) = p(b)·min(1, q(b)/p(b))                = min(p,q)(b),
 *   P(R_n = 1, x_n = b) = (1 - Σ_c min(p,q)(c))·[q-p]+(b)/TV    = [q-p]+(b),
 * because 1 - Σ min(p,q) = Σ [q-p]+ = TV(p,q).  The 2V numbers add up to
 * Σ q = 1: the pair (x_n, R_n) is ONE categorical draw over 2V outcomes
 * (o = 2b + R_n).  At a bonus position (γ drafts accepted, horizon not
 * reached) x_n ~ q(.|a): the same table read without R_n, since
 * min(p,q) + [q-p]+ = q.  Which positions draft and which are bonuses,
 * where iterations start and end, how many drafts each accepted and how
 * many target calls a trial makes are functions of the sequence
 * (x_n, R_n)_n — (x_{n-1}, j) is the Markov chain of sd_exact_token_dp —
 * and the drafts x̃_{t>n} after a rejection are discarded by Alg. 1
 * unobserved.  The sequence of pairs therefore has the same transition law
 * in both descriptions, so everything `run` reports (tokens x_0..x_T, N_rej,
 * iterations = target calls, accepted drafts per iteration) has the same
 * joint law as with the mechanistic verifier above; only the random numbers
 * differ.  Theorem 1 (1) is E[N_rej] = Σ_n E[P(R_n = 1 | past)]
 * = Σ_n E[TV(p_n, q_n)]; (2) is that the x-marginal of every row is q.
 *
 * Random numbers.  Trial i of run `seed` uses its sd_stream (Philox,
 * src/sd_rng.h): uniform 0 draws x_0 (init as outcomes 2·x_0), uniform n
 * draws position n, as a 53-bit integer (sd_token_alias_draw) whose high 32
 * bits are word n of the stream (four positions per Philox block, computed
 * for eight trials at once by sd_rngbuf_trials_hi) and whose low 21 bits
 * come from another counter range of the same stream, computed only when
 * the high bits leave the draw open ("uniforms" below).  The uniform of
 * (seed, i, n) is a fixed function, equal to the whole uniforms of the
 * scalar reference sd_token_plan_trial.
 *
 * Lockstep.  Every trial consumes exactly one draw per position, so a group
 * of trials advances position by position and only step n's V tables are
 * in use while position n is drawn.  Per-trial state lives in arrays over
 * the group: previous token, drafts accepted so far j, rejections, and one
 * bit per position set where an iteration ended (a rejection or a bonus).
 * After the group the trials' iterations are replayed from their bits
 * (accepted = end - start; a last iteration reaching the horizon accepted
 * all of its T - start + 1 drafts) into the group's integer histogram and
 * exact integer sums, merged into the block's accumulators once per group
 * (S_replay): the statistics are a function of (seed, block). */

#define S_GROUP 1024                  /* trials per lockstep group (power of 2) */
#define S_ENDS_MAX ((size_t)1 << 20)  /* 64-bit words of end bits per group */
#define S_LGK_MAX 24u                 /* alias tables of up to 2^24 columns */

struct sd_token_plan {
    size_t V, T, steps, gamma;
    unsigned lgK;
    uint64_t *tab;  /* [steps][V][K] */
    uint64_t *init; /* [K]: x_0 = outcome / 2 */
    double *tv;     /* [steps][V]: the rejected mass of each row, P(R_n = 1 | x_{n-1}) */
};

struct sd_token_work {
    size_t S, words, T;
    uint32_t *prev, *j, *rej;
    uint64_t *u[4], *ends, *cell;    /* u: a Philox block's four words per trial; ends: [words][S] */
    uint32_t *idx;                   /* a position's table indices and entries (sd_fetch64); */
    uint64_t *ent;                   /* ent: also the rows' TV for the Rao-Blackwell sums */
    uint64_t *cnt;                   /* [8(T + 1)]: the group's histogram of accepted drafts */
    double *rb;                      /* Σ of tv over each trial's drafting positions */
    unsigned char *arena;            /* every array above (sd_carve) */
};

/* The smallest lgK with 2^lgK >= 2V. */
static unsigned S_lgK(size_t V)
{
    unsigned lg = 1;
    while (((size_t)1 << lg) < 2 * V)
        lg++;
    return lg;
}

/* Vose's alias method in integers (see sd_token.h).  m and stk: K words of
 * scratch.  Returns 0, or -1 for weights that are negative, not finite or
 * all zero. */
static int S_alias(const double *w, size_t n, unsigned lgK, uint64_t *tab, uint64_t *m,
                   uint32_t *stk)
{
    const size_t K = (size_t)1 << lgK;
    const uint64_t ONE = (uint64_t)1 << 53, C = ONE >> lgK;
    double total = 0.0;
    for (size_t o = 0; o < n; o++) {
        if (!(w[o] >= 0.0 && w[o] < INFINITY))
            return -1;
        total += w[o];
    }
    if (!(total > 0.0 && total < INFINITY))
        return -1;
    /* m_o = ⌊w_o·2^53/Σw⌋; the rounding remainder (|.| <= 2n) goes to the
     * largest mass (>= 2^53/n - 1 > 2n for n <= 2^24), so Σ m_o = 2^53 and
     * m_o = 0 exactly where w_o is 0 (or below 2^-53·Σw). */
    const double scale = 9007199254740992.0 / total;
    uint64_t sum = 0;
    size_t big = 0;
    for (size_t o = 0; o < K; o++) {
        double f = o < n ? w[o] * scale : 0.0;
        m[o] = f < 9007199254740992.0 ? (uint64_t)(int64_t)f : ONE; /* f < 2^53: exact */
        sum += m[o];
        if (m[o] > m[big])
            big = o;
    }
    int64_t fixed = (int64_t)m[big] + ((int64_t)ONE - (int64_t)sum);
    if (fixed <= 0)
        return -1;
    m[big] = (uint64_t)fixed;
    /* Small masses (< C) from the bottom of stk, large ones from the top.
     * A column s < C is topped up by a large l (m_l >= C > 0), so every
     * alias points to an outcome of positive mass; when the small ones run
     * out, the large ones left hold exactly C each (integer arithmetic). */
    /* (Branch-free pushes: the slot written for the other list is free.) */
    size_t ns = 0, nl = K;
    for (size_t o = 0; o < K; o++) {
        size_t small = m[o] < C;
        stk[nl - 1] = (uint32_t)o;
        stk[ns] = (uint32_t)o;
        ns += small;
        nl -= small ^ 1;
    }
    while (ns > 0 && nl < K) {
        uint32_t s = stk[--ns], l = stk[nl];
        tab[s] = (m[s] << lgK) | l;
        m[l] -= C - m[s];
        size_t small = m[l] < C;
        stk[ns] = l;
        ns += small;
        nl += small;
    }
    for (size_t i = nl; i < K; i++)
        tab[stk[i]] = (C << lgK) | stk[i];
    return ns ? -1 : 0; /* ns = 0: Σ m = K·C exactly, so no small mass is left over */
}

int sd_token_alias_build(const double *w, size_t n, unsigned lgK, uint64_t *tab, sd_error *err)
{
    if (lgK < 1 || lgK > S_LGK_MAX || n > ((size_t)1 << lgK))
        return sd_error_set(err, SD_EUSAGE, "alias table of %zu outcomes in 2^%u columns: expected "
                                            "1 <= lgK <= %u and n <= 2^lgK", n, lgK, S_LGK_MAX);
    size_t K = (size_t)1 << lgK;
    uint64_t *m = malloc(K * sizeof *m);
    uint32_t *stk = malloc(K * sizeof *stk);
    int rc = (!m || !stk) ? sd_error_set(err, SD_ENOMEM, "out of memory for an alias table")
             : S_alias(w, n, lgK, tab, m, stk)
                 ? sd_error_set(err, SD_EDATA, "alias table weights: expected finite values >= 0, "
                                               "not all 0")
                 : SD_OK;
    free(m);
    free(stk);
    return rc;
}

/* The table memory: 2 MiB-aligned and, on Linux, marked for transparent
 * huge pages (the lockstep gathers touch random rows of a step's V·K·8
 * bytes; 4 KiB pages would cost a TLB miss on most of them at V = 256). */
static uint64_t *S_table_alloc(size_t bytes)
{
    const size_t huge = (size_t)1 << 21;
    void *p = NULL;
    if (bytes < huge)
        return malloc(bytes);
    if (posix_memalign(&p, huge, (bytes + huge - 1) / huge * huge))
        return NULL;
#ifdef MADV_HUGEPAGE
    madvise(p, (bytes + huge - 1) / huge * huge, MADV_HUGEPAGE); /* advice only: failure is harmless */
#endif
    return p;
}

static size_t S_steps(const sd_chain *c)
{
    return (c->draft_steps == 1 && c->target_steps == 1) ? 1 : c->T;
}

size_t sd_token_plan_bytes(const sd_chain *c)
{
    size_t V = c->V, steps = S_steps(c);
    if (V > ((size_t)1 << (S_LGK_MAX - 1)))
        return SIZE_MAX;
    size_t K = (size_t)1 << S_lgK(V);
    if (steps > (SIZE_MAX / sizeof(uint64_t) / K - 1) / V)
        return SIZE_MAX;
    return (steps * V + 1) * K * sizeof(uint64_t) + steps * V * sizeof(double); /* + tv */
}

/* The 2V outcome weights of row (p, q) (see the comment above); returns
 * their rejected mass Σ w[2b+1] (TV(p, q) for both kinds). */
static double S_weights(const double *p, const double *q, size_t V, sd_token_kind kind, double *w)
{
    double tv = 0.0;
    for (size_t b = 0; b < V; b++)
        tv += q[b] > p[b] ? q[b] - p[b] : 0.0;
    for (size_t b = 0; b < V; b++) {
        w[2 * b] = p[b] < q[b] ? p[b] : q[b];
        w[2 * b + 1] = kind == SD_TOKEN_BROKEN_RESIDUAL ? tv * q[b] : (q[b] > p[b] ? q[b] - p[b] : 0.0);
    }
    return tv;
}

uint64_t *sd_token_table_alloc(size_t bytes)
{
    return S_table_alloc(bytes);
}

unsigned sd_token_lgK(size_t V)
{
    return S_lgK(V);
}

/* The tables of `steps` steps of V rows, one parallel region: row a of
 * step s is p + s·p_stride + a·V (a stride 0 repeats a time-homogeneous
 * part), likewise q; into tab[(s·V + a)·K ..] and tv[s·V + a]. */
static int S_tables(const double *p, size_t p_stride, const double *q, size_t q_stride, size_t steps,
                    size_t V, sd_token_kind kind, int threads, uint64_t *tab, double *tv, sd_error *err)
{
    const unsigned lgK = S_lgK(V);
    const size_t K = (size_t)1 << lgK, rows = steps * V;
    int bad = 0;
#ifndef _OPENMP
    (void)threads;
#endif
#pragma omp parallel num_threads(threads)
    {
        double *w = malloc(2 * V * sizeof *w);
        uint64_t *m = malloc(K * sizeof *m);
        uint32_t *stk = malloc(K * sizeof *stk);
        int ok = w && m && stk;
#pragma omp for schedule(static)
        for (size_t r = 0; r < rows; r++) {
            if (!ok)
                continue;
            size_t st = r / V, a = r % V;
            tv[r] = S_weights(p + st * p_stride + a * V, q + st * q_stride + a * V, V, kind, w);
            if (S_alias(w, 2 * V, lgK, tab + r * K, m, stk))
                ok = 0;
        }
        if (!ok) {
#pragma omp atomic write
            bad = 1;
        }
        free(w);
        free(m);
        free(stk);
    }
    if (bad)
        return sd_error_set(err, SD_ENOMEM, "out of memory (or invalid rows) building the token "
                                            "kernel's tables");
    return SD_OK;
}

int sd_token_step_tables(const double *p, const double *q, size_t V, sd_token_kind kind, int threads,
                         uint64_t *tab, double *tv, sd_error *err)
{
    return S_tables(p, 0, q, 0, 1, V, kind, threads, tab, tv, err);
}

int sd_token_init_table(const double *init, size_t V, uint64_t *tab, sd_error *err)
{
    double *w = malloc(2 * V * sizeof *w);
    if (!w)
        return sd_error_set(err, SD_ENOMEM, "out of memory building the token kernel's tables");
    for (size_t b = 0; b < V; b++) {
        w[2 * b] = init[b];
        w[2 * b + 1] = 0.0;
    }
    int rc = sd_token_alias_build(w, 2 * V, S_lgK(V), tab, err);
    free(w);
    return rc;
}

void sd_token_plan_free(sd_token_plan *plan)
{
    if (!plan)
        return;
    free(plan->tab);
    free(plan->init);
    free(plan->tv);
    free(plan);
}

int sd_token_plan_new(const sd_chain *c, const sd_params *par, sd_token_kind kind,
                      size_t max_bytes, unsigned threads, sd_token_plan **out, sd_error *err)
{
    *out = NULL;
    size_t bytes = sd_token_plan_bytes(c), limit = max_bytes ? max_bytes : SD_TOKEN_PLAN_MAX_BYTES;
    if (bytes > limit)
        return sd_error_set(err, SD_ETOOBIG,
                            "token kernel: alias tables for V=%zu, T=%zu need %zu bytes; limit %zu "
                            "(the generic verifier is used instead)",
                            c->V, c->T, bytes, limit);
    const size_t V = c->V, steps = S_steps(c), rows = steps * V;
    const unsigned lgK = S_lgK(V);
    const size_t K = (size_t)1 << lgK;
    sd_token_plan *pl = calloc(1, sizeof *pl);
    if (!pl)
        return sd_error_set(err, SD_ENOMEM, "out of memory for the token kernel");
    pl->V = V;
    pl->T = c->T;
    pl->steps = steps;
    pl->gamma = par->gamma;
    pl->lgK = lgK;
    pl->tab = S_table_alloc(rows * K * sizeof *pl->tab);
    pl->init = malloc(K * sizeof *pl->init);
    pl->tv = malloc(rows * sizeof *pl->tv);
    if (!pl->tab || !pl->init || !pl->tv) {
        sd_token_plan_free(pl);
        return sd_error_set(err, SD_ENOMEM, "out of memory for the token kernel (%zu bytes)", bytes);
    }
    /* Small tables on one thread: waking a team costs more than the build
     * (and up to a scheduler slice on a loaded machine). */
    int nth = 1;
#ifdef _OPENMP
    nth = rows * K < ((size_t)1 << 18) ? 1 : threads ? (int)threads : omp_get_num_procs();
#else
    (void)threads;
#endif
    int rc = S_tables(c->draft, c->draft_steps == 1 ? 0 : V * V, c->target, c->target_steps == 1 ? 0 : V * V,
                      steps, V, kind, nth, pl->tab, pl->tv, err);
    if (!rc)
        rc = sd_token_init_table(c->init, V, pl->init, err);
    if (rc) {
        sd_token_plan_free(pl);
        return rc;
    }
    *out = pl;
    return SD_OK;
}

void sd_token_work_free(sd_token_work *w)
{
    if (!w)
        return;
    free(w->arena);
    free(w);
}

int sd_token_work_new(const sd_token_plan *plan, sd_token_work **out, sd_error *err)
{
    *out = NULL;
    sd_token_work *w = calloc(1, sizeof *w);
    if (!w)
        return sd_error_set(err, SD_ENOMEM, "out of memory for the token kernel's work arrays");
    w->T = plan->T;
    w->words = (plan->T + 63) / 64;
    w->S = sd_token_group(plan->T);
    const size_t S = w->S;
    for (int pass = 0; pass < 2; pass++) { /* 0: the size, 1: the arrays */
        size_t off = 0;
        unsigned char *a = w->arena;
        w->prev = sd_carve(a, &off, S * sizeof *w->prev);
        w->j = sd_carve(a, &off, S * sizeof *w->j);
        w->rej = sd_carve(a, &off, S * sizeof *w->rej);
        for (int r = 0; r < 4; r++)
            w->u[r] = sd_carve(a, &off, S * sizeof *w->u[r]);
        w->ends = sd_carve(a, &off, S * w->words * sizeof *w->ends);
        w->cell = sd_carve(a, &off, S * sizeof *w->cell);
        w->rb = sd_carve(a, &off, S * sizeof *w->rb);
        w->idx = sd_carve(a, &off, S * sizeof *w->idx);
        w->ent = sd_carve(a, &off, S * sizeof *w->ent);
        w->cnt = sd_carve(a, &off, 8 * (plan->T + 1) * sizeof *w->cnt);
        if (pass == 0 && !(w->arena = aligned_alloc(64, off))) {
            sd_token_work_free(w);
            return sd_error_set(err, SD_ENOMEM, "out of memory for the token kernel's work arrays");
        }
    }
    *out = w;
    return SD_OK;
}

/* --- uniforms: 32 bits per position, 21 more on demand ---------------------
 *
 * Uniform n (n = 0..T) of trial t is the 53-bit integer U = w·2^21 + L:
 * w = 32-bit word n of the trial's stream sd_stream(seed, t) (word n mod 4
 * of Philox block n/4: four positions per block, drawn across trials by
 * sd_rngbuf_trials_hi), L = the top 21 bits of word n of the same stream
 * from block SD_TOKEN_LOW_BLOCK on (a counter range no trial reaches).
 * The alias draw (sd_token_alias_draw) compares f = U mod C with the
 * entry's thr; knowing only w, f lies in [f_w, f_w + 2^21 - 1] with f_w =
 * (w·2^21) mod C, so f < thr is decided unless f_w < thr <= f_w + 2^21 - 1,
 * which happens for at most 2^21 of the 2^53 values of U per entry
 * (probability <= 2^-(32-lgK), 2^-28 at V = 7): only then is L computed
 * (one scalar Philox block).  The outcome is the one of the whole 53-bit U,
 * always: the law is the table's masses exactly, as before, with half the
 * Philox blocks of two words per uniform.  S_window is 2^21 - 1, or larger
 * when a test distrusts more of w (sd_token_test_trust_bits), which makes
 * the full computation frequent without changing any outcome. */
#define S_LOW21 (((uint64_t)1 << 21) - 1)
static uint64_t S_window = S_LOW21;

void sd_token_test_trust_bits(unsigned bits)
{
    uint64_t w = bits >= 32 ? S_LOW21 : bits == 0 ? ~(uint64_t)0 >> 11 : ((uint64_t)1 << (53 - bits)) - 1;
    __atomic_store_n(&S_window, w, __ATOMIC_RELAXED);
}

static uint64_t S_window_now(void)
{
    return __atomic_load_n(&S_window, __ATOMIC_RELAXED);
}

uint64_t sd_token_low21(uint64_t seed, uint64_t trial, size_t n)
{
    const uint64_t blk = SD_TOKEN_LOW_BLOCK + n / 4;
    philox4x32_key_t key = {{(uint32_t)seed, (uint32_t)(seed >> 32)}};
    philox4x32_ctr_t ctr = {{(uint32_t)blk, (uint32_t)(blk >> 32), (uint32_t)trial, (uint32_t)(trial >> 32)}};
    return (uint64_t)(philox4x32(ctr, key).v[n % 4] >> 11);
}

/* The outcome of uniform n of trial t, given hi = w·2^21 (its high bits):
 * sd_token_alias_draw of the whole uniform, with its low bits computed
 * only where hi cannot decide (window: S_window_now()). */
static inline size_t S_draw_hi(const uint64_t *tab, unsigned lgK, uint64_t hi, uint64_t window, uint64_t seed,
                               uint64_t t, size_t n)
{
    const unsigned sh = 53u - lgK;
    const uint64_t cm = ((uint64_t)1 << sh) - 1, k = hi >> sh, e = tab[k];
    const uint64_t thr = e >> lgK, f = hi & cm & ~window;
    if (f < thr && (f | window) >= thr) /* undecided by the trusted bits: the whole uniform */
        return sd_token_alias_draw(tab, lgK, hi | sd_token_low21(seed, t, n));
    return f < thr ? (size_t)k : (size_t)(e & (((uint64_t)1 << lgK) - 1));
}

/* Position n of trials i0..s-1, lookahead to the horizon: every position
 * drafts, every rejection ends an iteration. */
static void S_pos_horizon(const uint64_t *tab, unsigned lgK, size_t i0, size_t s, const uint64_t *u,
                          uint32_t *prev, uint32_t *rej, uint64_t *ends, unsigned bit, uint64_t seed,
                          uint64_t t0, size_t n)
{
    const uint64_t window = S_window_now();
    for (size_t i = i0; i < s; i++) {
        size_t o = S_draw_hi(tab + ((size_t)prev[i] << lgK), lgK, u[i], window, seed, t0 + i, n);
        uint32_t f = (uint32_t)(o & 1);
        prev[i] = (uint32_t)(o >> 1);
        rej[i] += f;
        ends[i] |= (uint64_t)f << bit;
    }
}

/* Position n of trials i0..s-1, draft length gamma: j = gamma makes it a
 * bonus (x_n ~ q: the outcome's flag is ignored), which also ends the
 * iteration. */
static void S_pos_gamma(const uint64_t *tab, unsigned lgK, size_t i0, size_t s, const uint64_t *u,
                        uint32_t *prev, uint32_t *rej, uint32_t *jv, uint32_t gamma, uint64_t *ends,
                        unsigned bit, uint64_t seed, uint64_t t0, size_t n)
{
    const uint64_t window = S_window_now();
    for (size_t i = i0; i < s; i++) {
        size_t o = S_draw_hi(tab + ((size_t)prev[i] << lgK), lgK, u[i], window, seed, t0 + i, n);
        uint32_t j = jv[i], f = (uint32_t)(o & 1), bonus = j == gamma, end = f | bonus;
        prev[i] = (uint32_t)(o >> 1);
        rej[i] += f & (bonus ^ 1u);
        jv[i] = (j + 1) * (end ^ 1u);
        ends[i] |= (uint64_t)end << bit;
    }
}

#if S_HAVE_X86
/* The same two loops on eight trials at a time with AVX-512F (the same
 * integer arithmetic, so the same outcomes), in three passes over the
 * trials: (1) each trial's table index, prev·K + k with k = U >> (53 - lgK)
 * (S_index_avx512); (2) the entries, by plain loads into the work array
 * (sd_fetch64); (3) the alias test as a mask and the state's update
 * (S_pos_avx512), instead of one vpgatherqq per eight trials (30–40 cycles
 * on the 2-core Xeon of docs/performance.md, against about 1.5 per word for
 * sd_fetch64; docs/findings.md).  The work array is on the heap: loads
 * through a local array tripped AddressSanitizer's fake stacks.  gamma = 0:
 * lookahead to the horizon. */
typedef struct {
    __m128i sh, lg;
    __m512i cm, km, one, g;
} S_draw_consts;

__attribute__((target("avx512f"))) static inline void S_draw_init(S_draw_consts *c, unsigned lgK, uint32_t gamma)
{
    c->sh = _mm_cvtsi32_si128((int)(53u - lgK));
    c->lg = _mm_cvtsi32_si128((int)lgK);
    c->cm = _mm512_set1_epi64((long long)(((uint64_t)1 << (53u - lgK)) - 1));
    c->km = _mm512_set1_epi64((long long)(((uint64_t)1 << lgK) - 1));
    c->one = _mm512_set1_epi64(1);
    c->g = _mm512_set1_epi64((long long)gamma);
}

/* Pass 1 on trials 0..s-1 (s a multiple of 8): idx[i] = prev[i]·K + k_i. */
__attribute__((target("avx512f"))) static void S_index_avx512(unsigned lgK, size_t s, const uint64_t *u,
                                                               const uint32_t *prev, uint32_t *idx)
{
    const __m128i sh = _mm_cvtsi32_si128((int)(53u - lgK)), lg = _mm_cvtsi32_si128((int)lgK);
    for (size_t i = 0; i < s; i += 8) {
        __m512i k = _mm512_srl_epi64(_mm512_loadu_si512((const void *)(u + i)), sh);
        SD_ST32X8(idx + i, _mm512_or_si512(_mm512_sll_epi64(SD_LD32X8(prev + i), lg), k));
    }
}

/* Pass 3: position n of trials 0..8⌊s/8⌋-1 with their entries in ent (pass
 * 2), or, ent = NULL, gathered here (sd_gather8: the streamed kernel, which
 * has no work array).  Returns the number of trials done (a multiple of 8). */
__attribute__((target("avx512f"))) static size_t S_pos_avx512(const uint64_t *tab, unsigned lgK, size_t s,
                                                               const uint64_t *u, const uint64_t *ent,
                                                               uint32_t *prev, uint32_t *rej, uint32_t *jv,
                                                               uint32_t gamma, uint64_t *ends, unsigned bit,
                                                               uint64_t seed, uint64_t t0, size_t n)
{
    S_draw_consts c;
    S_draw_init(&c, lgK, gamma);
    const uint64_t window = S_window_now();
    const __m512i endbit = _mm512_set1_epi64((long long)((uint64_t)1 << bit));
    const __m512i cmw = _mm512_andnot_si512(_mm512_set1_epi64((long long)window), c.cm),
                  win = _mm512_set1_epi64((long long)window);
    size_t i = 0;
    for (; i + 8 <= s; i += 8) {
        __m512i a = SD_LD32X8(prev + i), r = SD_LD32X8(rej + i);
        __m512i U = _mm512_loadu_si512((const void *)(u + i)), k = _mm512_srl_epi64(U, c.sh);
        __m512i t = ent ? _mm512_loadu_si512((const void *)(ent + i))
                        : sd_gather8(tab, _mm512_slli_epi64(_mm512_or_si512(_mm512_sll_epi64(a, c.lg), k), 3));
        __m512i thr = _mm512_srl_epi64(t, c.lg), fw = _mm512_and_si512(U, cmw);
        __mmask8 keep = _mm512_cmplt_epu64_mask(_mm512_or_si512(fw, win), thr);
        __mmask8 open = (__mmask8)(_mm512_cmplt_epu64_mask(fw, thr) & ~keep);
        while (open) { /* rare (S_draw_hi): the lane's whole uniform */
            unsigned l = (unsigned)__builtin_ctz(open);
            uint64_t Ul = u[i + l] | sd_token_low21(seed, t0 + i + l, n);
            size_t o = sd_token_alias_draw(tab + ((size_t)prev[i + l] << lgK), lgK, Ul);
            if (o == (size_t)(Ul >> (53u - lgK))) /* the column itself: kept */
                keep = (__mmask8)(keep | (1u << l));
            open = (__mmask8)(open & (open - 1));
        }
        __m512i o = _mm512_mask_blend_epi64(keep, _mm512_and_si512(t, c.km), k);
        __mmask8 f = _mm512_test_epi64_mask(o, c.one), end = f, inc = f;
        SD_ST32X8(prev + i, _mm512_srli_epi64(o, 1));
        if (gamma) {
            __m512i j = SD_LD32X8(jv + i);
            __mmask8 bonus = _mm512_cmpeq_epi64_mask(j, c.g);
            end = (__mmask8)(f | bonus);
            inc = (__mmask8)(f & ~bonus);
            SD_ST32X8(jv + i, _mm512_maskz_add_epi64((__mmask8)~end, j, c.one));
        }
        SD_ST32X8(rej + i, _mm512_mask_add_epi64(r, inc, r, c.one));
        __m512i e = _mm512_loadu_si512((const void *)(ends + i));
        _mm512_storeu_si512((void *)(ends + i), _mm512_mask_or_epi64(e, end, e, endbit));
    }
    return i;
}
#endif

/* Rao-Blackwell (sd_verifier.h): before position n is drawn, each trial
 * that drafts there (not a bonus) adds P(R_n = 1 | x_{n-1}) = tv[x_{n-1}]
 * (Theorem 1's summand) to its estimate. */
#if S_HAVE_X86
/* Trials 0..8⌊s/8⌋-1 of S_pos_rb: the tv entries loaded into scratch
 * (sd_fetch64: prev holds their indices), or, scratch = NULL, gathered
 * (sd_gather8); the same additions (a bonus adds nothing). */
__attribute__((target("avx512f"))) static size_t S_pos_rb_avx512(const double *tv, size_t s,
                                                                  const uint32_t *prev,
                                                                  const uint32_t *jv, uint32_t gamma,
                                                                  double *rb, uint64_t *scratch)
{
    const __m512i g = _mm512_set1_epi64((long long)gamma);
    const size_t nb = s / 8 * 8;
    if (scratch)
        sd_fetch64(tv, prev, nb, scratch);
    for (size_t i = 0; i < nb; i += 8) {
        __m512d t;
        if (scratch) {
            t = _mm512_loadu_pd((const double *)(const void *)(scratch + i));
        } else {
            __m512i a = SD_LD32X8(prev + i);
            t = _mm512_castsi512_pd(sd_gather8(tv, _mm512_slli_epi64(a, 3)));
        }
        __mmask8 draft = 0xff;
        if (gamma) {
            __m512i j = SD_LD32X8(jv + i);
            draft = _mm512_cmpneq_epi64_mask(j, g);
        }
        __m512d r = _mm512_loadu_pd(rb + i);
        _mm512_storeu_pd(rb + i, _mm512_mask_add_pd(r, draft, r, t));
    }
    return nb;
}
#endif

/* scratch: s words of work memory, or NULL (see S_pos_rb_avx512). */
static void S_pos_rb(const double *tv, size_t s, const uint32_t *prev, const uint32_t *jv,
                     uint32_t gamma, double *rb, uint64_t *scratch)
{
    size_t i = 0;
#if S_HAVE_X86
    if (sd_rngbuf_avx512())
        i = S_pos_rb_avx512(tv, s, prev, jv, gamma, rb, scratch);
#else
    (void)scratch;
#endif
    for (; i < s; i++)
        if (gamma == 0 || jv[i] != gamma)
            rb[i] += tv[prev[i]];
}

/* The statistics of trials i0..i0+n-1 of one lockstep group (word wd of
 * trial i's end bits at ends[wd·stride + i]).  Each trial's iterations are
 * replayed from its bits (accepted = end - start; a last iteration reaching
 * the horizon accepted all of its T - start + 1 drafts) into the group's
 * integer histogram; rejections and iterations (= target calls) enter exact
 * integer sums Σx, Σx² over the group.  Then one Chan merge per statistic
 * and group (sd_welford_merge_sums): rej, calls, and acc from the histogram
 * (Σ cnt, Σ a·cnt, Σ a²·cnt); hist += the histogram (integers below 2^32:
 * the same sums in any order).  rb, a double per trial, enters as the
 * group's mean and sum of squared deviations from it (two passes, four
 * partial sums in a fixed order), merged once.  Everything is a function of
 * the group's trials, in trial order: the same bits for any thread count,
 * and on every path below. */
typedef struct {
    uint64_t r1, r2, c1, c2; /* Σ rej, Σ rej², Σ its, Σ its² */
} S_sums;

/* Trial i's iterations into cnt[a], a = accepted drafts; its counts into
 * *sm. */
static void S_replay_trial(size_t T, size_t stride, const uint64_t *ends, const uint32_t *rej, size_t i,
                           uint64_t *cnt, S_sums *sm)
{
    uint64_t its = 0;
    size_t n0 = 1;
    for (size_t wd = 0; wd < (T + 63) / 64; wd++)
        for (uint64_t m = ends[wd * stride + i]; m; m &= m - 1) {
            size_t e = wd * 64 + (size_t)__builtin_ctzll(m) + 1;
            cnt[e - n0]++;
            its++;
            n0 = e + 1;
        }
    if (n0 <= T) {
        cnt[T - n0 + 1]++;
        its++;
    }
    sm->r1 += rej[i];
    sm->r2 += (uint64_t)rej[i] * rej[i];
    sm->c1 += its;
    sm->c2 += its * its;
}

#if S_HAVE_X86
/* Trials i0..i0+8⌊n/8⌋-1 for T <= 62 (one word of end bits per trial), eight
 * at a time, without a data-dependent branch per iteration: with
 * M = (ends << 1) | 1 | [x_T not an end]·2^(T+1), the ones of M are the
 * iterations' ends with a virtual end at 0 (the first iteration starts at
 * 1) and at T + 1 (a last iteration reaching the horizon), and an end at e
 * whose previous end is e - a - 1 had a accepted drafts.  For a = 0, 1, ...
 * the ends not yet matched that have an end a + 1 before them,
 * todo & (M << (a + 1)), are the iterations with exactly a accepted (the
 * nearest earlier end is found first); their count per lane is a popcount.
 * h8[8a + lane] receives the counts per lane (summed by the caller);
 * iterations = popcount(M) - 1.  The same integers as S_replay_trial. */
__attribute__((target("avx512f,avx512vpopcntdq"))) static size_t S_replay_avx512(size_t T, const uint64_t *ends,
                                                                               const uint32_t *rej, size_t i0,
                                                                               size_t n, uint64_t *h8,
                                                                               S_sums *sm)
{
    const __m512i one = _mm512_set1_epi64(1);
    __m512i r1 = _mm512_setzero_si512(), r2 = r1, c1 = r1, c2 = r1;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m512i e = _mm512_loadu_si512((const void *)(ends + i0 + i));
        __m512i last = _mm512_andnot_si512(_mm512_srli_epi64(e, (unsigned)T - 1), one);
        __m512i M = _mm512_or_si512(_mm512_or_si512(_mm512_slli_epi64(e, 1), one),
                                    _mm512_slli_epi64(last, (unsigned)T + 1));
        __m512i its = _mm512_sub_epi64(_mm512_popcnt_epi64(M), one);
        __m512i r = SD_LD32X8(rej + i0 + i);
        r1 = _mm512_add_epi64(r1, r);
        r2 = _mm512_add_epi64(r2, _mm512_mul_epu32(r, r));
        c1 = _mm512_add_epi64(c1, its);
        c2 = _mm512_add_epi64(c2, _mm512_mul_epu32(its, its));
        __m512i todo = _mm512_andnot_si512(one, M), P = M;
        for (uint64_t *h = h8; _mm512_test_epi64_mask(todo, todo); h += 8) {
            P = _mm512_slli_epi64(P, 1);
            __m512i hit = _mm512_and_si512(todo, P);
            _mm512_storeu_si512((void *)h, _mm512_add_epi64(_mm512_loadu_si512((const void *)h),
                                                           _mm512_popcnt_epi64(hit)));
            todo = _mm512_andnot_si512(hit, todo);
        }
    }
    sm->r1 += (uint64_t)_mm512_reduce_add_epi64(r1);
    sm->r2 += (uint64_t)_mm512_reduce_add_epi64(r2);
    sm->c1 += (uint64_t)_mm512_reduce_add_epi64(c1);
    sm->c2 += (uint64_t)_mm512_reduce_add_epi64(c2);
    return i;
}
#endif

/* cnt: 8(T + 1) words of scratch (sd_token_replay). */
static void S_replay(size_t T, size_t stride, const uint64_t *ends, const uint32_t *rej, const double *rb,
                     size_t i0, size_t n, uint64_t *cnt, const sd_observe *out)
{
    S_sums sm = {0, 0, 0, 0};
    size_t i = 0;
    memset(cnt, 0, 8 * (T + 1) * sizeof *cnt);
#if S_HAVE_X86
    if (T <= 62 && sd_rngbuf_avx512popcnt()) {
        i = S_replay_avx512(T, ends, rej, i0, n, cnt, &sm);
        for (size_t a = 0; a <= T; a++) { /* the lanes' counts */
            uint64_t k = 0;
            for (size_t l = 0; l < 8; l++)
                k += cnt[8 * a + l];
            cnt[a] = k;
        }
    }
#endif
    for (; i < n; i++)
        S_replay_trial(T, stride, ends, rej, i0 + i, cnt, &sm);
    if (out->rb && n) { /* two passes over the group: its mean, then Σ (x - mean)²; one merge */
        double a[4] = {0, 0, 0, 0}, d[4] = {0, 0, 0, 0};
        for (size_t t = 0; t < n; t++)
            a[t % 4] += rb[i0 + t];
        const double mean = ((a[0] + a[1]) + (a[2] + a[3])) / (double)n;
        for (size_t t = 0; t < n; t++)
            d[t % 4] += (rb[i0 + t] - mean) * (rb[i0 + t] - mean);
        sd_welford g = {(double)n, mean, (d[0] + d[1]) + (d[2] + d[3])};
        sd_welford_merge(out->rb, &g);
    }
    if (out->rej)
        sd_welford_merge_sums(out->rej, n, sm.r1, sm.r2);
    if (out->calls)
        sd_welford_merge_sums(out->calls, n, sm.c1, sm.c2);
    if (out->acc) {
        uint64_t k = 0, s1 = 0, s2 = 0;
        for (uint64_t a = 0; a <= T; a++) {
            k += cnt[a];
            s1 += a * cnt[a];
            s2 += a * a * cnt[a];
        }
        sd_welford_merge_sums(out->acc, k, s1, s2);
    }
    for (size_t a = 0; out->hist && a <= T; a++)
        out->hist[a] += (double)cnt[a];
}

/* Trials g0..g0+s-1 (s <= w->S) over positions 1..N; tok: their token rows
 * or NULL. */
static void S_group(const sd_token_plan *pl, sd_token_work *w, uint64_t seed, uint64_t g0, size_t s,
                    size_t N, const sd_observe *out, size_t *tok)
{
    const size_t V = pl->V, T = pl->T, K = (size_t)1 << pl->lgK, S = w->S;
    const unsigned lgK = pl->lgK;
    uint32_t *prev = w->prev;
#if S_HAVE_X86
    const int wide = sd_rngbuf_avx512();
    const int fetch = V * K - 1 <= UINT32_MAX; /* a step's entries indexed by 32 bits (S_index_avx512) */
#endif
    const uint64_t window = S_window_now();
    sd_rngbuf_trials_hi(seed, 0, g0, s, w->u);
    for (size_t i = 0; i < s; i++)
        prev[i] = (uint32_t)(S_draw_hi(pl->init, lgK, w->u[0][i], window, seed, g0 + i, 0) >> 1);
    memset(w->rej, 0, s * sizeof *w->rej);
    memset(w->j, 0, s * sizeof *w->j);
    memset(w->cell, 0, s * sizeof *w->cell);
    for (size_t i = 0; out->rb && i < s; i++)
        w->rb[i] = 0.0;
    for (size_t wd = 0; wd < w->words; wd++)
        memset(w->ends + wd * S, 0, s * sizeof *w->ends);
    if (tok)
        for (size_t i = 0; i < s; i++)
            tok[i * (T + 1)] = prev[i];
    const uint32_t gamma = (uint32_t)sd_draft_binding(pl->gamma, T);
    for (size_t n = 1; n <= N; n++) {
        if (n % 4 == 0) /* uniforms n..n+3 */
            sd_rngbuf_trials_hi(seed, n / 4, g0, s, w->u);
        const uint64_t *u = w->u[n % 4];
        const uint64_t *tab = pl->tab + (pl->steps == 1 ? 0 : (n - 1) * V * K);
        uint64_t *ends = w->ends + ((n - 1) / 64) * S;
        const unsigned bit = (unsigned)((n - 1) % 64);
        size_t i0 = 0;
        if (out->rb)
            S_pos_rb(pl->tv + (pl->steps == 1 ? 0 : (n - 1) * V), s, prev, w->j, gamma, w->rb, w->ent);
#if S_HAVE_X86
        if (wide && fetch) {
            size_t nb = s / 8 * 8;
            S_index_avx512(lgK, nb, u, prev, w->idx);
            sd_fetch64(tab, w->idx, nb, w->ent);
            i0 = S_pos_avx512(tab, lgK, s, u, w->ent, prev, w->rej, w->j, gamma, ends, bit, seed, g0, n);
        } else if (wide) {
            i0 = S_pos_avx512(tab, lgK, s, u, NULL, prev, w->rej, w->j, gamma, ends, bit, seed, g0, n);
        }
#endif
        if (gamma == 0)
            S_pos_horizon(tab, lgK, i0, s, u, prev, w->rej, ends, bit, seed, g0, n);
        else
            S_pos_gamma(tab, lgK, i0, s, u, prev, w->rej, w->j, gamma, ends, bit, seed, g0, n);
        if (out->pos)
            for (size_t i = 0; i < s; i++)
                out->pos[(n - 1) * V + prev[i]] += 1.0;
        if (tok)
            for (size_t i = 0; i < s; i++)
                tok[i * (T + 1) + n] = prev[i];
        if (out->cells)
            for (size_t i = 0; i < s; i++)
                w->cell[i] = w->cell[i] * V + prev[i];
    }
    if (out->L) {
        if (out->cells)
            for (size_t i = 0; i < s; i++)
                out->cells[w->cell[i]] += 1.0;
        return;
    }
    S_replay(T, S, w->ends, w->rej, w->rb, 0, s, w->cnt, out);
}

void sd_token_plan_run(const sd_token_plan *plan, sd_token_work *w, uint64_t seed, uint64_t lo,
                       uint64_t hi, const sd_observe *out)
{
    size_t N = out->L && out->L < plan->T ? out->L : plan->T;
    for (uint64_t g0 = lo; g0 < hi; g0 += w->S) {
        size_t s = hi - g0 < w->S ? (size_t)(hi - g0) : w->S;
        S_group(plan, w, seed, g0, s, N, out, out->tokens ? out->tokens + (g0 - lo) * (plan->T + 1) : NULL);
    }
}

/* The next uniform of the reference: the next word of hi, times 2^21, plus
 * the top 21 bits of the next word of lo (the stream from block
 * SD_TOKEN_LOW_BLOCK): every uniform whole, none of the kernel's shortcuts. */
static uint64_t S_u53(sd_stream *hi, sd_stream *lo)
{
    uint64_t w = sd_stream_u32(hi);
    return (w << 21) | (sd_stream_u32(lo) >> 11);
}

void sd_token_plan_trial(const sd_token_plan *pl, uint64_t seed, uint64_t trial, size_t *tokens,
                         size_t *rejections, size_t *iterations, double *hist)
{
    const size_t V = pl->V, T = pl->T, K = (size_t)1 << pl->lgK;
    const size_t gamma = sd_draft_binding(pl->gamma, T);
    sd_stream rng, low;
    sd_stream_init(&rng, seed, trial);
    sd_stream_init(&low, seed, trial);
    low.ctr.v[0] = (uint32_t)SD_TOKEN_LOW_BLOCK;
    low.ctr.v[1] = (uint32_t)(SD_TOKEN_LOW_BLOCK >> 32);
    size_t prev = sd_token_alias_draw(pl->init, pl->lgK, S_u53(&rng, &low)) >> 1;
    tokens[0] = prev;
    size_t rej = 0, its = 0, n0 = 1, j = 0;
    for (size_t n = 1; n <= T; n++) {
        const uint64_t *tab = pl->tab + (pl->steps == 1 ? 0 : (n - 1) * V * K) + prev * K;
        size_t o = sd_token_alias_draw(tab, pl->lgK, S_u53(&rng, &low));
        prev = tokens[n] = o >> 1;
        int bonus = gamma && j == gamma;
        if (bonus || (o & 1)) { /* the iteration ends at n, after n - n0 accepted drafts */
            rej += !bonus;
            its++;
            if (hist)
                hist[n - n0] += 1.0;
            n0 = n + 1;
            j = 0;
        } else {
            j++;
        }
    }
    if (n0 <= T) {
        its++;
        if (hist)
            hist[T - n0 + 1] += 1.0;
    }
    *rejections = rej;
    *iterations = its;
}

/* --- the kernels as sd_kernel_type (sd_verifier.h) -------------------------- */

static int S_kernel_new(void **plan, const sd_model *m, const sd_params *par, sd_token_kind kind,
                        size_t max_bytes, unsigned threads, sd_error *err)
{
    if (!m->chain || !sd_token_policy_fixed(par))
        return SD_EUSAGE; /* not applicable: no stored rows, or a draft policy */
    sd_token_plan *pl = NULL;
    int rc = sd_token_plan_new(m->chain, par, kind, max_bytes, threads, &pl, err);
    *plan = pl;
    return rc;
}

static int S_alias_new(void **plan, const sd_model *m, const sd_params *par, size_t max_bytes,
                       unsigned threads, sd_error *err)
{
    return S_kernel_new(plan, m, par, SD_TOKEN_EXACT, max_bytes, threads, err);
}

static int S_broken_new(void **plan, const sd_model *m, const sd_params *par, size_t max_bytes,
                        unsigned threads, sd_error *err)
{
    return S_kernel_new(plan, m, par, SD_TOKEN_BROKEN_RESIDUAL, max_bytes, threads, err);
}

static void S_plan_free(void *plan)
{
    sd_token_plan_free(plan);
}

static int S_work_new(const void *plan, void **work, sd_error *err)
{
    sd_token_work *w = NULL;
    int rc = sd_token_work_new(plan, &w, err);
    *work = w;
    return rc;
}

static void S_work_free(void *work)
{
    sd_token_work_free(work);
}

static void S_run(const void *plan, void *work, uint64_t seed, uint64_t lo, uint64_t hi,
                  const sd_observe *obs)
{
    sd_token_plan_run(plan, work, seed, lo, hi, obs);
}

#define S_ALIAS_SUPPORTS \
    (SD_OBS_STATS | SD_OBS_POS | SD_OBS_CELLS | SD_OBS_TOKENS | SD_OBS_RB | SD_KERNEL_COPIES)

const sd_kernel_type sd_token_kernel_alias = {
    .name = "token-alias",
    .supports = S_ALIAS_SUPPORTS,
    .plan_new = S_alias_new,
    .plan_free = S_plan_free,
    .work_new = S_work_new,
    .work_free = S_work_free,
    .run = S_run,
};

const sd_kernel_type sd_token_kernel_broken = {
    .name = "token-alias-broken",
    .supports = S_ALIAS_SUPPORTS,
    .plan_new = S_broken_new,
    .plan_free = S_plan_free,
    .work_new = S_work_new,
    .work_free = S_work_free,
    .run = S_run,
};

/* --- pieces of the lockstep loop for the streamed kernel (sd_token.h) ------ */

void sd_token_position(const uint64_t *tab, const double *tv, unsigned lgK, uint32_t gamma, size_t s,
                       const uint64_t *u, uint32_t *prev, uint32_t *rej, uint32_t *j, double *rb,
                       uint64_t *ends, unsigned bit, uint64_t seed, uint64_t t0, size_t n)
{
    size_t i0 = 0;
    if (rb)
        S_pos_rb(tv, s, prev, j, gamma, rb, NULL);
#if S_HAVE_X86
    if (sd_rngbuf_avx512())
        i0 = S_pos_avx512(tab, lgK, s, u, NULL, prev, rej, j, gamma, ends, bit, seed, t0, n);
#endif
    if (gamma == 0)
        S_pos_horizon(tab, lgK, i0, s, u, prev, rej, ends, bit, seed, t0, n);
    else
        S_pos_gamma(tab, lgK, i0, s, u, prev, rej, j, gamma, ends, bit, seed, t0, n);
}

size_t sd_token_group(size_t T)
{
    size_t S = S_GROUP, words = (T + 63) / 64;
    while (S > 8 && S * words > S_ENDS_MAX)
        S /= 2;
    return S;
}

void sd_token_replay(size_t T, size_t stride, const uint64_t *ends, const uint32_t *rej, const double *rb,
                     size_t i0, size_t n, uint64_t *cnt, const sd_observe *out)
{
    S_replay(T, stride, ends, rej, rb, i0, n, cnt, out);
}

size_t sd_token_draw_hi(const uint64_t *tab, unsigned lgK, uint64_t hi, uint64_t seed, uint64_t trial, size_t n)
{
    return S_draw_hi(tab, lgK, hi, S_window_now(), seed, trial, n);
}
