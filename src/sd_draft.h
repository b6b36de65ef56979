/* sd_draft.h — the draft length: one meaning, decoded in one place.
 *
 * A verifier's draft length gamma (sd_params.gamma, the option --gamma) is
 * the number of draft tokens an iteration proposes; gamma = 0 means "the
 * rest of the horizon" (lookahead to the horizon, Yin et al. 2024): the
 * iteration at position n (1 <= n <= T) of a horizon T drafts the T - n + 1
 * positions that remain.  A gamma >= T never binds (no iteration has more
 * than T positions left), so it means the same as 0.  Every place that
 * turns gamma into a number of drafts calls one of the functions below;
 * the last three are sd_draft_len_at read at a particular position. */
#ifndef SD_DRAFT_H
#define SD_DRAFT_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

/* The draft length of the iteration at position n (1..T) of horizon T:
 * gamma when it is set and smaller than the T - n + 1 positions left,
 * else T - n + 1. */
static inline size_t sd_draft_len_at(size_t gamma, size_t T, size_t n)
{
    size_t rest = T - n + 1;
    return (gamma && gamma < rest) ? gamma : rest;
}

/* The longest draft of a generation (the first iteration's, position 1):
 * min(gamma, T), T for gamma 0 — the capacity of per-iteration scratch. */
static inline size_t sd_draft_len_max(size_t gamma, size_t T)
{
    return sd_draft_len_at(gamma, T, 1);
}

/* gamma where it binds at some position (1 <= gamma < T), else 0: the form
 * the kernels and the exact evaluators branch on (0: lookahead to the
 * horizon, Theorem 1 of Yin et al. 2024 applies; else a finite draft
 * length and its bonus tokens). */
static inline size_t sd_draft_binding(size_t gamma, size_t T)
{
    size_t g = sd_draft_len_max(gamma, T);
    return g < T ? g : 0;
}

/* The draft length on an unbounded horizon (sd_draft_len_at with
 * T = SIZE_MAX): gamma, or SIZE_MAX ("no bound") for gamma 0 — for the
 * position laws (sims/exact/sd_exact_gen.h), which do not know T. */
static inline size_t sd_draft_len_unbounded(size_t gamma)
{
    return sd_draft_len_at(gamma, SIZE_MAX, 1);
}

/* --- draft-length policies ------------------------------------------------
 *
 * gamma above is the cap; a policy may stop an iteration's drafting
 * earlier, after its i-th draft token (1 <= i < cap), on what the drafter
 * has seen: the drafted tokens x_1..x_i and the rows of p and q along them
 * (on a chain both are known: the "oracle" versions of the rules).
 *   fixed        never stops early: the draft length is the cap.
 *   specdecpp:H  SpecDec++ (Huang, Guo, Wang 2025, "SpecDec++: Boosting
 *                Speculative Decoding via Adaptive Candidate Lengths",
 *                COLM 2025): stop once the probability that at least one
 *                of x_1..x_i is rejected, 1 - prod_{j<=i} a_j with
 *                a_j = min(1, q_j(x_j)/p_j(x_j)) the exact acceptance
 *                probability of token-level SD (the quantity the paper's
 *                head predicts), exceeds H in [0, 1].  x_i stays drafted.
 *   entropy:H    SVIP (Zhang et al. 2025) and AdaEDL (Agrawal et al.
 *                2024): stop before drafting x_{i+1} when the entropy
 *                (in nats) of its draft row p_{n+i}(.|x_i) exceeds H >= 0.
 * The first token is always drafted, so every iteration drafts 1..cap
 * tokens.  The length is a stopping time of the draft tokens: it never
 * looks at a verification coin, so token-level SD stays lossless (check
 * --exact shows it).  Both rules decide with the numbers computed here
 * (sd_draft_accept_prob, sd_draft_entropy, in this order of operations),
 * so that a kernel, the reference step and the exact law take the same
 * branch on a tie.
 *
 * A policy is held in one double (a verifier's own parameter slot): 0 for
 * fixed, 1 + H for specdecpp:H (in [1, 2]), 3 + H for entropy:H (>= 3);
 * the codes in (0, 1) and (2, 3) mean nothing. */
typedef enum { SD_DRAFT_FIXED = 0, SD_DRAFT_SPECDECPP = 1, SD_DRAFT_ENTROPY = 2 } sd_draft_rule;

typedef struct sd_draft_policy {
    sd_draft_rule rule;
    double h; /* the threshold H (0 for fixed) */
} sd_draft_policy;

static inline double sd_draft_policy_encode(sd_draft_policy pol)
{
    return pol.rule == SD_DRAFT_SPECDECPP ? 1.0 + pol.h : pol.rule == SD_DRAFT_ENTROPY ? 3.0 + pol.h : 0.0;
}

static inline sd_draft_policy sd_draft_policy_decode(double code)
{
    sd_draft_policy pol = {SD_DRAFT_FIXED, 0.0};
    if (code >= 3.0) {
        pol.rule = SD_DRAFT_ENTROPY;
        pol.h = code - 3.0;
    } else if (code >= 1.0) {
        pol.rule = SD_DRAFT_SPECDECPP;
        pol.h = code - 1.0;
    }
    return pol;
}

/* The probability that token-level SD accepts a drafted token with draft
 * and target probabilities p > 0, q: min(1, q/p). */
static inline double sd_draft_accept_prob(double p, double q)
{
    return q >= p ? 1.0 : q / p;
}

/* The entropy of a row of V probabilities, in nats. */
static inline double sd_draft_entropy(const double *row, size_t V)
{
    double h = 0.0;
    for (size_t y = 0; y < V; y++)
        if (row[y] > 0.0)
            h -= row[y] * log(row[y]);
    return h;
}

/* After drafting a token: 1 to draft the next one, 0 to stop.  accept is
 * prod_{j<=i} a_j so far (read by specdecpp), next_row the draft row of
 * the next token and V its size (read by entropy; may be NULL for the
 * other rules).  The cap is the caller's. */
static inline int sd_draft_policy_continue(const sd_draft_policy *pol, double accept,
                                           const double *next_row, size_t V)
{
    if (pol->rule == SD_DRAFT_SPECDECPP)
        return !(1.0 - accept > pol->h);
    if (pol->rule == SD_DRAFT_ENTROPY)
        return !(sd_draft_entropy(next_row, V) > pol->h);
    return 1;
}

/* Parses "fixed", "specdecpp:H" (H in [0, 1]) or "entropy:H" (H >= 0,
 * finite) into *code (the one-double form above).  Returns 0, or -1 with
 * a message naming the text and what was expected in msg[len]. */
int sd_draft_policy_parse(const char *text, double *code, char *msg, size_t len);

/* "fixed", "specdecpp:0.3", "entropy:1.5": the policy as parse reads it
 * back (the shortest decimal that gives the same double), into buf. */
void sd_draft_policy_format(double code, char *buf, size_t len);

#endif
