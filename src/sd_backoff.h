/* sd_backoff.h — sparse-row models: a backoff bigram target with a unigram
 * draft (an ARPA language model, src/sd_arpa.h), and the i.i.d. problem
 * (one draft row p and one target row q at every position) as its case
 * without contexts.  Rows are computed on demand; nothing is V×V.
 *
 * The model.  Tokens 0..V-1; x_0 = start (<s> for a language model); the
 * draft is one row p at every position (a unigram, never context-dependent);
 * the target row after x_{n-1} = a is, for the tokens S_a seen after a
 * (the file's bigrams "a x"),
 *     q_a(x) = e_a(x)              x in S_a,
 *     q_a(x) = c_a · u(x)          x not in S_a,
 * with u the target's unigram and c_a = β_a U / Z_a the backoff weight
 * times the renormalisation (Katz 1987, "Estimation of probabilities from
 * sparse data for the language model component of a speech recognizer":
 * P(x|a) = P*(x|a) if seen, else β(a) P(x)).  ARPA files store rounded
 * log10 values, so each row's raw sum Z_a is renormalised to 1 and the
 * largest |Z_a - 1| is kept (row_dev).  <s> starts every sequence and is
 * never generated: its probability is 0 in every row (u(<s>) = 0, bigrams
 * "a <s>" dropped) before renormalising.  The i.i.d. problem has no
 * contexts: S_a = ∅, c_a = 1, u = q.
 *
 * Sums over a row without O(V) work.  Order the tokens with u(x) > 0 by
 * ρ(x) = p(x)/u(x) increasing, with prefix sums A_k = Σ u, B_k = Σ p over
 * the first k.  For any scale s >= 0,
 *     F(s) = Σ_x max(0, s u(x) - p(x)) = s A_k - B_k,  k = #{x : ρ(x) < s},
 * one binary search.  So the residual mass of the row a at scale s (s = 1:
 * TV(p, q_a); block verification's m_i = Σ max(s q - p, 0) with s = p_i,
 * Sun et al. 2025) is
 *     m_a(s) = Σ_{x∈S_a} max(0, s e_a(x) - p(x))
 *            + F(s c_a) - Σ_{x∈S_a} max(0, s c_a u(x) - p(x)),
 * the seen bigrams plus one term for the backed-off rest: O(|S_a| + log V),
 * or O(log V) with the seen part's breakpoints sorted once (below).
 * A residual sample is drawn the same way: a seen token by its cumulative
 * weight, or a rest token by binary search on W_k = s c_a A_k - B_k
 * (increasing for k <= #{ρ < s c_a}), redrawn while it falls in S_a
 * (rejection: exact).  Draws from p and u use Walker alias tables; a draw
 * from q_a picks the seen part with its mass, else u redrawn while in S_a.
 *
 * Exact values of token-level speculative decoding (Leviathan et al. 2023;
 * Yin et al. 2024).  Theorem 1 (lookahead to the horizon):
 *     E[N_rej] = Σ_{n=1..T} Σ_a Q_{n-1}(a) TV(p, q_a),
 * with Q_n the target's marginal, propagated in O(V + |S|) per step since
 * Σ_a Q(a) q_a(x) = (Σ_a Q(a) c_a) u(x) + Σ_{(a,x)∈S} Q(a)(e_a(x) - c_a u(x)).
 * With a finite draft length γ, the DP over (x_{n-1}, j = drafts accepted
 * in the iteration): from j < γ the token is accepted with mass
 * min(p(x), q_a(x)) (to j+1) or rejected with (q_a(x) - p(x))+ (to 0);
 * from j = γ the bonus token ~ q_a (to 0); a target call is counted at
 * every position with j = 0.  Its push Σ_a M(a) min(p(x), c_a u(x)) =
 * p(x) Σ_{c_a >= ρ(x)} M(a) + u(x) Σ_{c_a < ρ(x)} M(a) c_a is one merge of
 * the tokens by ρ with the contexts by c_a, then the seen bigrams are
 * corrected: O(V + |S|) per (n, j).  Without contexts the DP keeps the
 * mass of each j only: O(T γ).
 *
 * Memory: about SD_BACKOFF_BYTES_PER_TOKEN per token (less without
 * contexts) and SD_BACKOFF_BYTES_PER_BIGRAM per seen bigram (with up to
 * 2 MB more per array of 1 MB or more: huge pages), checked
 * against the caller's budget before allocating; the finite-γ DP adds
 * 2(γ+1)V doubles (checked too). */
#ifndef SD_BACKOFF_H
#define SD_BACKOFF_H

#include <stddef.h>
#include <stdint.h>

#include "sd_arpa.h"
#include "sd_error.h"
#include "sd_rngbuf.h"

#define SD_BACKOFF_BYTES_PER_TOKEN 248u
#define SD_BACKOFF_BYTES_PER_IID_TOKEN 84u
#define SD_BACKOFF_BYTES_PER_BIGRAM 123u
#define SD_BACKOFF_MAX_T ((size_t)1 << 24)
/* A context whose seen bigrams leave less than this much unigram mass
 * unseen backs off to nothing (c_a = 0): the rest is empty in exact
 * arithmetic (CMU Sphinx writes a backoff of 10^99.999 for such contexts,
 * and c_a u(x) - c_a u(x) would cancel at that scale). */
#define SD_BACKOFF_REST_EPS 1e-9


/* What the kernels read of a context, in one cache line (copies of the
 * arrays of sd_backoff: the same values, one miss instead of several). */
typedef struct sd_backoff_ctx {
    uint32_t lo, hi;       /* off[a], off[a+1] */
    uint32_t goff, glev;   /* the row's guide in gde and its levels L (0: 16 seen bigrams or fewer) */
    double c, m1, m1d;     /* c_a, m_a(1), m_a'(1-) (m1[2a], m1[2a+1]) */
    double eres, emass, restm;
} sd_backoff_ctx;

/* One column of a row's Walker table (rrw below). */
typedef struct sd_backoff_walker {
    double thr;            /* the column's own token is kept below this */
    uint32_t keep, alias;  /* the tokens of the two outcomes */
} sd_backoff_walker;

typedef struct sd_backoff {
    size_t V, T;
    size_t start;          /* x_0 */
    size_t max_bytes;      /* the budget it was built under (the DP checks against it) */
    double row_dev;        /* largest |raw row sum - 1| before renormalising */
    long row_dev_ctx;      /* the context of that row (-1: the unigram, -2: none) */
    double *p, *u;         /* [V]: draft row, target unigram */
    /* contexts (NULL when there are none: the i.i.d. problem) */
    size_t *off;           /* [V+1]: seen bigrams of context a: off[a]..off[a+1]-1 */
    uint32_t *tok;         /* [nnz]: their tokens, increasing within a context */
    double *qe;            /* [nnz]: e_a(x) */
    double *qcum, *rcum;   /* [nnz]: running sums of e_a and of (e_a - p)+ within a context */
    double *c;             /* [V]: c_a */
    double *tv;            /* [V]: TV(p, q_a) (i.i.d.: tv[0] only) */
    double *emass, *eres, *restm; /* [V]: Σ_{S_a} e_a, Σ_{S_a} (e_a - p)+, c_a (1 - Σ_{S_a} u) */
    uint32_t *cord;        /* [V]: contexts by c_a increasing */
    /* the seen part of m_a(s) as a function of s: g_a(s) = Σ_{x∈S_a}
     * max(0, s e_a(x) - p(x)) - max(0, s c_a u(x) - p(x)) is piecewise
     * linear with the 2|S_a| breakpoints p/e_a and p/(c_a u); sorted per
     * context (at 2 off[a]..2 off[a+1]-1) with running sums of the slopes
     * and offsets of the terms active beyond each, g_a(s) = s·sl_j - of_j
     * at the last breakpoint j < s: O(log |S_a|) per query */
    double *bp;            /* [2 nnz] */
    double *bso;           /* [4 nnz]: sl_j, of_j interleaved (one cache line for both) */
    /* the seen residual max(0, s e_a(x) - p(x)): the seen tokens of each
     * context by p/e_a increasing (sthr), with running sums se_j of e_a
     * and sp_j of p in that order, so its mass at s is s·se_j - sp_j
     * (j = #sthr < s) and a draw is a binary search: O(log |S_a|).  Entry
     * j's se_j, sp_j and token are in the 64-byte line ssl[j / 3] (slot
     * j % 3): the draw's token is on the line of its search's last probe */
    double *sthr;          /* [nnz] */
    struct sd_backoff_sline {
        double sesp[6];    /* se, sp of three entries */
        uint32_t tok[3], pad;
    } *ssl;                /* [ceil(nnz / 3)], 64-byte aligned */
    size_t nnz;
    /* tokens with u > 0 by ρ = p/u increasing */
    size_t nr;
    uint32_t *rord;
    double *rho;           /* [nr] */
    double *A, *B;         /* [nr+1] */
    /* a bucket index into rho (speed only: the same counts as the plain
     * search).  The bit patterns of doubles >= 0 increase with their values,
     * so key(s) = bits(s) >> rbk_shift is monotone; rbk[j] = #{ρ : key(ρ) <
     * rbk_lo + j}, j = 0..rbk_n, and #{ρ < s} is rbk[j] plus a search within
     * bucket j = key(s) - rbk_lo alone (a few entries instead of log2 V
     * levels of cache misses) */
    uint32_t *rbk;         /* [rbk_n + 1], at most max(nr, 1024) + 1 entries; NULL: plain search */
    uint64_t rbk_lo;
    size_t rbk_n;
    unsigned rbk_shift;
    double *m1;            /* [2V] or NULL: m1[2a] = m_a(1) as sd_backoff_mass computes it (block
                              at p_i = 1, rrs's first round: the same bits, no search), and
                              m1[2a+1] = m_a'(1-), the left derivative: m_a is convex with
                              m_a(0) = 0, so for s in [0, 1]
                                  max(0, m_a(1) + m_a'(1-) (s - 1)) <= m_a(s) <= s m_a(1),
                              bounds that settle most of block verification's tests
                              without the searches (kernel_backoff.c) */
    sd_backoff_ctx *hctx;  /* [V], 64-byte aligned, or NULL (with m1; built when m1 is, and nnz < 2^32) */
    /* The guide of the rows (built with hctx; speed only: the same values as
     * the plain search).  A row of n > 16 seen tokens t_0 < ... < t_{n-1}
     * keeps levels l = L..1 (L the least with n <= 16^(L+1)), level l the
     * ceil(n / 16^l) keys g_l[j] = t_{16^l j}, top level first from
     * gde[hctx[a].goff].  A lookup of x counts, in one group of at most 16
     * keys per level, those <= x (one vector compare): the group of level
     * l - 1 that can hold x is 16 b + max(count - 1, 0), b the group of
     * level l, and at the row itself an equality compare finds x or not:
     * L + 1 groups of 16 keys (64 bytes each) instead of log2 n probes.
     * tok and gde have 16 readable entries past their ends. */
    uint32_t *gde;
    /* Each row's Walker table (Walker 1977) of its seen residual at scale
     * 1, max(0, e_a(x) - p(x)) normalised, at off[a]..: column k keeps
     * its token with probability thr, else gives its alias's token (built
     * with hctx; the lines' residual draw at s = 1 reads it: one 16-byte
     * entry where rcum is searched) */
    sd_backoff_walker *rrw;
    int rho_const;         /* every ρ equal (the draft is the target's own unigram: p = u):
                              F(s) is 0 or s A - B without a search, and the rest residual
                              is ∝ u (drawn from u's alias table, redrawn while in S_a) */
    /* alias tables of p and u */
    double *ap, *au;       /* [V] acceptance thresholds */
    uint32_t *lp, *lu;     /* [V] aliases */
    /* the words of a language model (borrowed from nothing: owned copies), or NULL */
    char **words;
    /* A bigram draft (src/sd_arpa_draft2.h), or NULL: the draft row after a
     * is then draft2's row after d2map[a] (its unigram when -1), restricted
     * to the target's words and renormalised by d2mass; p above is its unigram (the rest term w)
     * and these are read by the kernels of token, block, rrs, spectr and
     * tree-rrs and by token's exact values (src/sd_draft2_dp.h) (owned). */
    struct sd_backoff *draft2;
    int32_t *d2map;        /* [V]: target id -> draft2 id, -1: a word the draft lacks */
    int32_t *d2inv;        /* [draft2->V]: draft2 id -> target id, -1: not a target word */
    double *d2mass;        /* [draft2->V + 1]: each draft2 row's mass on target words; [draft2->V]: its unigram's */
} sd_backoff;

/* Bytes the model takes (V tokens, nnz seen bigrams; iid: no contexts). */
size_t sd_backoff_bytes(size_t V, size_t nnz, int iid);

/* The i.i.d. problem: draft p, target q (each V entries, validated by the
 * caller), horizon T.  SD_ETOOBIG over max_bytes (0: no limit) before
 * allocating; SD_EUSAGE for T out of 1..SD_BACKOFF_MAX_T or V < 1. */
int sd_backoff_iid(const double *p, const double *q, size_t V, size_t T, size_t max_bytes, sd_backoff **out,
                   sd_error *err);

/* The language model: target = the bigram (order 2) or unigram (order 1)
 * of `target`, draft = the unigram of `draft` (the same file, or another
 * whose words are matched by spelling: target words it lacks get draft
 * probability 0, its other words are dropped).  x_0 = <s> (absent: token
 * 0).  SD_EUSAGE for an order other than 1 or 2 or a draft with no mass on
 * the target's words; SD_EDATA for a row of zero mass (naming the context
 * word); SD_ETOOBIG over max_bytes. */
int sd_backoff_from_arpa(const sd_arpa *target, size_t order, const sd_arpa *draft, size_t T, size_t max_bytes,
                         sd_backoff **out, sd_error *err);

void sd_backoff_free(sd_backoff *m);

/* q_a(x). */
double sd_backoff_q(const sd_backoff *m, size_t a, size_t x);
/* q[j] = q_{a[j]}(x[j]) for j < n, the same values as sd_backoff_q: the
 * searches advance level by level together, four at a time without
 * branches, so their cache misses overlap (a block's draft tokens, whose
 * contexts are known before any is verified). */
void sd_backoff_q_many(const sd_backoff *m, const size_t *a, const size_t *x, size_t n, double *q);
/* Rows p and q_a into p[V], q[V] (either may be NULL): O(V). */
void sd_backoff_rows(const sd_backoff *m, size_t a, double *p, double *q);

/* F(s) = Σ_x max(0, s u(x) - p(x)). */
double sd_backoff_F(const sd_backoff *m, double s);
/* m_a(s) = Σ_x max(0, s q_a(x) - p(x)); s = 1 is TV(p, q_a). */
double sd_backoff_mass(const sd_backoff *m, size_t a, double s);

/* Draws. */
size_t sd_backoff_draw_p(const sd_backoff *m, sd_rngbuf *rng);
size_t sd_backoff_draw_q(const sd_backoff *m, size_t a, sd_rngbuf *rng);
/* The inverse CDF of q_a in token order: the smallest y with
 *     Σ_{x<=y} q_a(x) = c_a U(y+1) + Σ_{x∈S_a, x<=y} (e_a(x) - c_a u(x)) > v,
 * U(k) = Σ_{x<k} u(x) = ucum[k] (V + 1 doubles, sd_backoff_ucum), for v in
 * [0, 1): the same token as the inverse CDF of the dense row (up to the
 * rounding of the sums), without O(V) work: the seen tokens in order, then
 * a binary search on U inside the unseen block that holds v:
 * O(|S_a| + log V).  Tokens of probability 0 are never returned (at the
 * rounding edge past the last, the last token of positive mass). */
void sd_backoff_ucum(const sd_backoff *m, double *ucum);
size_t sd_backoff_q_inverse(const sd_backoff *m, const double *ucum, size_t a, double v);
/* A draw from the target's unigram u. */
size_t sd_backoff_draw_u(const sd_backoff *m, sd_rngbuf *rng);
/* A draw from max(0, s q_a - p) normalised, whose mass is `mass`
 * (sd_backoff_mass(m, a, s)), or NaN: computed here, with no search of its
 * own when the rest has no residual (s c_a <= min ρ: the seen part's
 * search gives it).  A mass of 0: a draw from q_a instead. */
size_t sd_backoff_draw_residual(const sd_backoff *m, size_t a, double s, double mass, sd_rngbuf *rng);
/* The same two draws reading the context's bounds and masses from its line
 * (hctx, when built): one cache line, already read by block verification's
 * test at that context.  The same numbers are used, and the same tokens
 * come out, except for the seen residual at s = 1, drawn by the row's
 * Walker table (rrw) instead of a search of rcum: the same law. */
size_t sd_backoff_draw_q_line(const sd_backoff *m, size_t a, sd_rngbuf *rng);
size_t sd_backoff_draw_residual_line(const sd_backoff *m, size_t a, double s, double mass, sd_rngbuf *rng);

/* Token-level SD with draft length gamma (0 = rest of the horizon):
 * E[N_rej] and E[target calls] (either may be NULL), exactly (above; with
 * a bigram draft attached, Theorem 1 from sd_backoff_draft2_tv at the
 * horizon and src/sd_draft2_dp.h's DP at a finite gamma).
 * SD_ETOOBIG when the DP's vectors exceed the model's budget; SD_ENOMEM. */
int sd_backoff_exact_token(const sd_backoff *m, size_t gamma, double *rejections, double *target_calls,
                           sd_error *err);

/* Theorem 1 with a per-context TV(p_a, q_a) given by the caller (a draft
 * whose rows depend on the context, e.g. an n-gram bigram: src/sd_arpa_draft2.h):
 *     E[N_rej] = Σ_{n=1..T} Σ_a Q_{n-1}(a) tv[a],  E[calls] = 1 + E[N_rej] - (the n = T term),
 * with the target's marginals Q_n propagated by its sparse rows.  tv[a]
 * may be NaN for a context without a draft row: SD_EDATA (with *bad_ctx =
 * a, if not NULL) when the target reaches it.  SD_ETOOBIG over the budget. */
int sd_backoff_theorem1_tv(const sd_backoff *m, const double *tv, double *rejections, double *target_calls,
                           long *bad_ctx, sd_error *err);

/* With a bigram draft attached (src/sd_arpa_draft2.h): p_a(x), and
 * tv[a] = TV(p_a, q_a) = Σ_x max(0, q_a(x) - p_a(x)) for every context from
 * sparse sums: the union of the two rows' seen sets term by term, and for
 * the rest, where p_a = k_a w and q_a = c_a u (w the draft's unigram over
 * the target's words, which is p),
 *     Σ_rest max(0, c_a u - k_a w) = k_a F(c_a / k_a) - Σ_union max(0, c_a u - k_a w),
 * one binary search in the tokens sorted by w/u.  O((|S_a| + |D_a|) log V)
 * per context.  sd_backoff_exact_token at the horizon is then Theorem 1
 * with these TVs. */
double sd_backoff_draft2_p(const sd_backoff *m, size_t a, size_t x);
int sd_backoff_draft2_tv(const sd_backoff *m, double *tv, sd_error *err);
/* m_a(s) = Σ_x max(0, s q_a(x) - p_a(x)) with the bigram draft, s >= 0
 * (block verification's m_i at s = p_i, Sun et al. 2025, eq. 3; s = 1 is
 * tv[a] above): the same sparse sums with the target row scaled,
 *     Σ_rest max(0, s c_a u - k_a w) = k_a F(s c_a / k_a) - Σ_union max(0, s c_a u - k_a w).
 * O((|S_a| + |D_a|) log |S_a| + log V). */
double sd_backoff_draft2_mass(const sd_backoff *m, size_t a, double s);
/* m_a'(1-), the left derivative of that mass at s = 1: Σ q_a(x) over the x
 * with q_a(x) > p_a(x), from the same sparse sums (the rest's share is
 * c_a A_k, k = #{ρ < c_a/k_a}).  m_a is convex with m_a(0) = 0, so for s in
 * [0, 1]: max(0, m_a(1) + m_a'(1-)(s - 1)) <= m_a(s) <= s m_a(1). */
double sd_backoff_draft2_slope(const sd_backoff *m, size_t a);

#endif
