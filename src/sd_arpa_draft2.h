/* sd_arpa_draft2.h — a bigram drafter for a bigram target, both from ARPA
 * backoff models: the TV distance of their rows at every context, which
 * Theorem 1 of Yin et al. 2024 needs (E[N_rej] = Σ_n Σ_a Q_{n-1}(a)
 * TV(p_a, q_a); sd_backoff_theorem1_tv propagates the target's marginals).
 *
 * Both rows are Katz backoff as the files state them (src/sd_ngram.h):
 * p_a(x) = d_a(x) on the draft's bigrams "a x", else c'_a w(x); q_a(x) =
 * e_a(x) on the target's, else c_a u(x).  Off the union of the two seen
 * sets, |p_a - q_a| = |c'_a w(x) - c_a u(x)|: one term (|c'_a - c_a|
 * times the unseen unigram mass) when the draft and target share their
 * unigram, a sum over the rest of the vocabulary otherwise, which one
 * lookup in the tokens sorted by w/u gives (sd_backoff_draft2_tv, sd_backoff.h).
 * sd_arpa_draft2_tv builds each row densely instead (O(V) per context,
 * nothing V x V): the reference the sparse sums are checked against. */
#ifndef SD_ARPA_DRAFT2_H
#define SD_ARPA_DRAFT2_H

#include <stddef.h>

#include "sd_backoff.h"
#include "sd_error.h"
#include "sd_ngram.h"

/* tv[a] = TV(p_a, q_a) for the contexts a = 0..V-1 of the target's
 * vocabulary (V = target->V; draft->V must equal it: the draft opened
 * over the target's words); NaN where either row has no mass (the target
 * may never reach that context: sd_backoff_theorem1_tv decides).  *max_dev
 * (may be NULL) gets the largest |raw row sum - 1| of the draft's rows and
 * *dev_ctx its context.  SD_EUSAGE for mismatched vocabularies; SD_ENOMEM. */
int sd_arpa_draft2_tv(const sd_ngram *draft, const sd_ngram *target, double *tv, double *max_dev, long *dev_ctx,
                      sd_error *err);

/* Attaches the bigram of `draft` as the drafter of m (a bigram target
 * built by sd_backoff_from_arpa(target, 2, draft, ...): its unigram draft
 * p must be the draft file's, checked, SD_EUSAGE otherwise): draft2 = the draft file's
 * own bigram model (sparse rows over its words), the maps between the two
 * vocabularies by spelling, and each draft row's mass on the target's
 * words, so that the draft row after a (a target word) is
 *     p_a(x) = p^d_{a'}(x') / mass_{a'}   (x' the draft's id of x; 0 when it has none),
 * a' = the draft's id of a, or its unigram when it lacks a (src/sd_ngram.h
 * shortens such a history): exactly sd_ngram's rows of the draft over the
 * target's words.  Token verification's kernel draws p_a by drawing the
 * draft's row and redrawing while the word is not the target's (expected
 * 1/mass draws), and [q_a - p_a]+ by drawing q_a and keeping y with
 * probability 1 - p_a(y)/q_a(y) (exact rejection sampling; expected
 * 1/TV(p_a, q_a) draws after a rejection, which happens with probability
 * TV: O(1) per token); block verification's kernel draws its residual
 * max(0, s q_a - p_a) the same way, keeping y with probability
 * max(0, s q_a(y) - p_a(y))/q_a(y) (sd_backoff_draft2_mass gives its mass).
 * SD_EDATA naming the word for a draft row without
 * mass on the target's words; SD_ETOOBIG over max_bytes; SD_ENOMEM. */
int sd_arpa_draft2_attach(sd_backoff *m, const sd_arpa *target, const sd_arpa *draft, size_t max_bytes,
                          sd_error *err);

/* p_a(x) of the attached bigram draft, and the per-context TV from sparse
 * sums: sd_backoff_draft2_p, sd_backoff_draft2_tv (src/sd_backoff.h). */

#endif
