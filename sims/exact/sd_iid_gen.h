/* sd_iid_gen.h — a verifier on i.i.d. rows kept as one row pair (--p/--q
 * beyond the memory budget): the law of one iteration's accepted length τ,
 * and from it the whole-generation values and the T -> infinity rate, in
 * O(V) memory.
 *
 * On i.i.d. rows every iteration starts in the same state: its law does
 * not depend on x_{n-1}, and the token it emits after τ does not change
 * the next iteration's.  So the generation is a renewal process on the
 * positions left, fed by P(τ >= l), l = 1..G (sd_accept_iid_renewal), and
 * by the renewal-reward theorem E[target calls]/T -> 1/(E[τ] + 1).
 *
 * The law: exact (src/sd_accept_iid.h) for the verifiers the accepted-
 * length table names (token at every G; block for G <= 2, its terms
 * l >= 3 by Rao-Blackwellised Monte-Carlo); exact from the verifier's
 * per-position law (sd_verifier_type.iid_pos_law, sims/exact/sd_iid_pos.h:
 * the multi-draft trees rrs and spectr, O(G·k²·V) work in O(k·V) memory)
 * when its work is within SD_IID_POS_MAX_OPS (about 9 s) and its memory
 * within the budget; otherwise Monte-Carlo of the first iteration by the
 * verifier's kernel for sparse rows (`trials` trials, trial i on stream
 * (seed, i)), the empirical law of τ, whose `how` says why the exact law
 * was not used when the verifier has one.  Either
 * way P(τ >= l) is used for every draft length g >= l (the horizon cuts
 * the last iterations' drafts): true of a verifier that decides τ >= l
 * from the first l positions of its drafts (token, the multi-draft and
 * top-down tree verifiers) and of block verification (Sun et al. 2025,
 * Lemma 3).  A Monte-Carlo law carries the standard errors of the values
 * by the delta method: the gradient of the value in P(τ >= l) times the
 * estimate's covariance (multinomial for the kernel's law; the per-trial
 * weighted sum for the Rao-Blackwellised terms). */
#ifndef SD_IID_GEN_H
#define SD_IID_GEN_H

#include <stddef.h>
#include <stdint.h>

#include "../engine/sd_verifier.h"

typedef struct sd_iid_law {
    size_t G;          /* draft length (gamma, or the tree's depth) */
    double *ccdf;      /* [G]: P(τ >= l) */
    int exact;         /* 1: no Monte-Carlo term */
    uint64_t trials, seed;
    const char *method; /* "exact", "monte-carlo" */
    const char *how;    /* in words (may point into the struct: do not copy it) */
    /* private: what the standard error needs */
    int src_;            /* 0 rows (sd_accept_iid), 1 kernel, 2 per-position law */
    int alg_;
    const double *p_, *q_;
    size_t V_, max_bytes_;
    double *pmf_;        /* [G+1] (kernel): the empirical law of τ */
    char how_[400];
} sd_iid_law;

/* The law of τ for vt at par on the rows p, q (V entries each, validated
 * by the caller).  SD_EUSAGE for a verifier without a draft length or
 * without a kernel for sparse rows (the engine's message); SD_ETOOBIG over
 * max_bytes before allocating; SD_ENOMEM. */
int sd_iid_law_eval(const sd_verifier_type *vt, const sd_params *par, const double *p, const double *q, size_t V,
                    uint64_t trials, uint64_t seed, size_t max_bytes, sd_iid_law *out, sd_error *err);
void sd_iid_law_free(sd_iid_law *law);

/* Standard error of f(law) with gradient grad[l-1] = ∂f/∂P(τ >= l): 0 for
 * an exact law. */
int sd_iid_law_stderr(const sd_iid_law *law, const double *grad, double *se, sd_error *err);

/* E[target calls] and E[N_rej] over T positions, with their standard errors
 * (0 when exact). */
int sd_iid_gen_values(const sd_iid_law *law, size_t T, size_t max_bytes, double *calls, double *calls_se,
                      double *rej, double *rej_se, sd_error *err);

/* The limit T -> infinity of E[target calls]/T, 1/(E[τ] + 1), and its
 * standard error. */
int sd_iid_gen_rate(const sd_iid_law *law, double *rate, double *rate_se, sd_error *err);

#endif
