/* sd_iter_laws.h — the exact law of one iteration (sims/exact/sd_exact_gen.h)
 * of the built-in verifiers, in their mathematics; each verifier's file
 * wires its own into sd_verifier_type.iteration_law with its parameters.
 * Internal to sims/. */
#ifndef SD_ITER_LAWS_H
#define SD_ITER_LAWS_H

#include "../verifiers/sd_block.h"
#include "sd_exact_gen.h"

/* Token-by-token rules (sd_tokenwise.h), by the probability of their
 * accept test and their residual.  At a drafted position with rows p, q:
 *   STANDARD:  x = y goes on with min(p,q)(y); a rejection gives [q-p]+(y);
 *   BIASED:    goes on with min(p, q+eps); the rejected mass R = Σ p - that
 *              is drawn from [q-p]+/TV (opt) or q (uno) (Yin et al. 2024 §4);
 *   COIN10:    broken-coin's 10-bit coin: accepted iff (j/1024)·p <= q for
 *              the coin j uniform on 0..1023; rejected mass from [q-p]+/TV
 *              (q when TV = 0);
 *   KERNEL_Q:  the alias kernel of broken-token-kernel: rejected with
 *              weight TV·q(y) (and bonus tokens min(p,q) + TV·q, the same
 *              table read without the flag; sims/verifiers/sd_token.h). */
typedef enum {
    SD_LAW_STANDARD = 0,
    SD_LAW_BIASED_OPT = 1,
    SD_LAW_BIASED_UNO = 2,
    SD_LAW_COIN10 = 3,
    SD_LAW_KERNEL_Q = 4
} sd_law_rule;

/* Token-by-token verification of G draft tokens at (n, prev). */
int sd_law_tokenwise(sd_law_rule rule, double eps, const sd_chain *c, size_t G, size_t n,
                     size_t prev, sd_iter_law *law, sd_error *err);

/* Batch SD with M drafts (Yin et al. 2024 Alg. 4, sd_multidraft_batch_step):
 * the first position goes on with q - u and is rejected with u, u =
 * R·q^{M+1} (sd_exact_batch_row); extra_step (broken-batch) draws the
 * rejected token from [q^{M+1} - p]+ instead. */
int sd_law_batch(const sd_chain *c, size_t G, size_t M, int extra_step, size_t n, size_t prev,
                 sd_iter_law *law, sd_error *err);

/* SPRINTER (sims/verifiers/sprinter.c): rates tp, fp. */
int sd_law_sprinter(const sd_chain *c, double tp, double fp, size_t n, size_t prev,
                    sd_iter_law *law, sd_error *err);

/* The k-draft tree of sd_multidraft_tree_step with recursive rejection
 * sampling (kseq = 0, rrs) or k-Seq (kseq = 1, SpecTr) as the selection;
 * the internal state is the number of surviving drafts. */
int sd_law_tree(const sd_chain *c, size_t G, size_t k, int kseq, size_t n, size_t prev,
                sd_iter_law *law, sd_error *err);

/* A selection rule of the k-draft tree (sd_multidraft_tree_step) given by
 * its joint law at one position: with a surviving drafts X_1..X_a drawn
 * i.i.d. from p = p_t(.|prev) (q = q_t(.|prev)), fn adds to
 *     J[j·V + y] = P(Y = y, #{i : X_i = y} = j),   j = 0..a,
 * ((a+1)·V doubles, zeroed by the caller), summing to 1.  Returns SD_OK
 * or a status with err set. */
typedef int (*sd_select_law_fn)(void *ctx, const double *p, const double *q, size_t V, size_t a,
                                double *J, sd_error *err);

/* The position law of the k-draft tree with that selection: at depth
 * i < G in state s (a = s+1 surviving drafts) x_t = y goes on in state
 * j-1 with J[j·V + y] (j >= 1) and ends rejected with J[y]; after G
 * positions the bonus from q.  ctx (the caller's) must outlive *out;
 * call_work bounds one call of fn per token of the vocabulary (the unit of
 * sd_pos_law.call_work).  SD_ETOOBIG beyond 4096 drafts, SD_ENOMEM. */
int sd_pos_law_select(size_t V, size_t G, size_t k, sd_select_law_fn fn, void *ctx,
                      double call_work, sd_pos_law *out, sd_error *err);

/* The joint law of a selection whose output Y ~ q is independent of the
 * drafts (strict; onehot, whose law is the same): J[j·V + y] =
 * q(y) P(Bin(a, p(y)) = j).  ctx unused.  Work per token: (a+1)·
 * SD_WORK_PDF + a + 1. */
int sd_select_law_independent(void *ctx, const double *p, const double *q, size_t V, size_t a,
                              double *J, sd_error *err);

/* out[j] = P(Bin(n, pr) = j), j = 0..n (pr clamped to [0, 1]). */
void sd_law_binomial(size_t n, double pr, double *out);

/* Block verification (sd_block_step) with the given residual, by
 * enumerating the V^G draft blocks (refused beyond SD_ITER_LAW_MAX). */
int sd_law_block(const sd_chain *c, size_t G, sd_block_residual kind, size_t n, size_t prev,
                 sd_iter_law *law, sd_error *err);
/* The same with a draft-length policy (src/sd_draft.h), G its cap: a
 * drafted prefix where the policy stops is the block (h = p_i there, and
 * its bonus). */
int sd_law_block_policy(const sd_chain *c, size_t G, const sd_draft_policy *pol, sd_block_residual kind,
                        size_t n, size_t prev, sd_iter_law *law, sd_error *err);

/* --- the same laws position by position -----------------------------------------
 *
 * The position laws (sd_pos_law, sims/exact/sd_exact_gen.h) behind the iteration
 * laws above, for the table-driven kernels (sims/kernels/sd_kernel_law.h).  Each
 * constructor fills *out for draft length G (SIZE_MAX: drafting goes on to
 * the horizon, no bonus) and allocates out->ctx with its own scratch, so a
 * position law serves one thread at a time; sd_pos_law_free releases it.
 * SD_ENOMEM (sd_pos_law_tree: SD_ETOOBIG beyond 4096 drafts). */
int sd_pos_law_tokenwise(sd_law_rule rule, double eps, size_t G, sd_pos_law *out, sd_error *err);
int sd_pos_law_batch(size_t V, size_t G, size_t M, int extra_step, sd_pos_law *out, sd_error *err);
int sd_pos_law_sprinter(double tp, double fp, size_t G, sd_pos_law *out, sd_error *err);
int sd_pos_law_tree(size_t V, size_t G, size_t k, int kseq, sd_pos_law *out, sd_error *err);

/* Turns *pl into its broken variant for the controls of `check`: every
 * rejection keeps its probability R but draws its token from q_t(.|a)
 * instead of the verifier's residual.  *pl is taken over (freed on
 * failure, SD_ENOMEM). */
int sd_pos_law_broken_q(sd_pos_law *pl, sd_error *err);

/* rc: the status of the constructor that made *pl.  When it is SD_OK, the
 * iteration law at (n, prev) of *pl (sd_iter_law_markov; pl->G must then
 * be the draft length at n); frees *pl either way; returns the first
 * failure. */
int sd_pos_law_iteration(int rc, sd_pos_law *pl, const sd_chain *c, size_t n, size_t prev,
                         sd_iter_law *law, sd_error *err);

/* Frees what a constructor above allocated; accepts a zeroed law. */
void sd_pos_law_free(sd_pos_law *pl);

#endif
