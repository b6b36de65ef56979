/* sd_iid_pos.h — the exact law of one iteration's accepted length τ on
 * i.i.d. rows (one row pair p, q at every position and context), for any
 * verifier that is Markov inside an iteration (sd_pos_law,
 * sims/exact/sd_exact_gen.h), in O(G·S·V) memory-free passes.
 *
 * On i.i.d. rows the position law does not depend on the token the
 * iteration just emitted (the rows after it are the same p and q), so the
 * forward pass over (token, state) of sd_iter_law_markov lumps into one
 * over the internal state alone: with d_0 = δ_{s0} and
 *     d_{i+1}(s') = Σ_s d_i(s) Σ_y cont_{i,s}(s', y),
 *     P(τ >= i+1) = Σ_{s'} d_{i+1}(s'),
 * G·S calls of the position law, each O(call_work·V).  For the k-draft
 * tree (sd_pos_law_tree: recursive rejection sampling, SpecInfer, Miao et
 * al. 2024; k-Seq, Sun et al. 2023) the state is the number of surviving
 * drafts sharing the accepted prefix, S = k: O(G·k·call_work·V) where the
 * dense law of a stored chain of identical rows costs O(G·k·V²) calls. */
#ifndef SD_IID_POS_H
#define SD_IID_POS_H

#include <stddef.h>

#include "sd_exact_gen.h"

/* ccdf[l-1] = P(τ >= l), l = 1..pl->G, for the position law pl (built for
 * vocabulary V) on the rows p, q (V entries each, validated by the
 * caller).  SD_EUSAGE for a law that ends an iteration without a
 * rejection before its last draft (τ would not be the depth reached);
 * SD_ETOOBIG when its S·V doubles of weights exceed max_bytes (0: no
 * limit) or the address space, before allocating; SD_ENOMEM; the law's own status. */
int sd_iid_pos_ccdf(const sd_pos_law *pl, const double *p, const double *q, size_t V, size_t max_bytes,
                    double *ccdf, sd_error *err);

/* Elementary operations of sd_iid_pos_ccdf for pl on V tokens (an upper
 * bound): G·S calls of the law, each call_work·V, each followed by
 * (S + 3)·V clears and sums. */
double sd_iid_pos_work(const sd_pos_law *pl, size_t V);

/* The work limit of sd_iid_pos_verifier: 2e10 operations of the unit of
 * SD_WORK_PDF, at most about 9 s (the bound runs at 2.2e9 to 6e9 of them
 * per second on one loaded core; at V = 10^6, G = 4: rrs k = 2, 4, 8 take
 * 0.8, 2.9, 12.8 s for bounds 1.7e9, 1.1e10, 7.7e10; spectr k = 2, 4 take
 * 2.0, 6.5 s for 6.0e9, 2.2e10, so rrs k = 8 and spectr k = 4 there fall
 * back to Monte-Carlo). */
#define SD_IID_POS_MAX_OPS 2e10

struct sd_verifier_type;
struct sd_params;

/* ccdf[l-1] = P(τ >= l), l = 1..G, of vt at par on the i.i.d. rows p, q
 * (V entries each, validated by the caller) from vt's per-position law
 * (sd_verifier_type.iid_pos_law, its draft length set to G), exact.
 * SD_EUSAGE when vt has none at par (the message says so); SD_ETOOBIG,
 * before allocating anything of size V, when the work (sd_iid_pos_work)
 * exceeds SD_IID_POS_MAX_OPS or the memory exceeds max_bytes (0: no
 * limit): the weights' (S + 2)·V doubles and the law's own scratch, at
 * most (S + 1)·V doubles by the slot's contract, S and call_work read
 * from the law built at V = 1 (they do not depend on V); the law's and
 * sd_iid_pos_ccdf's other statuses. */
int sd_iid_pos_verifier(const struct sd_verifier_type *vt, const struct sd_params *par, const double *p,
                        const double *q, size_t V, size_t G, size_t max_bytes, double *ccdf, sd_error *err);

/* E[τ] = Σ_{l<=G} P(τ >= l) by sd_iid_pos_verifier; *mean = NaN and its
 * status on failure. */
int sd_iid_pos_mean(const struct sd_verifier_type *vt, const struct sd_params *par, const double *p, const double *q,
                    size_t V, size_t G, size_t max_bytes, double *mean, sd_error *err);

#endif
