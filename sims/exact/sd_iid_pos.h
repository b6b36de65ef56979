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
 * limit), before allocating; SD_ENOMEM; the law's own status. */
int sd_iid_pos_ccdf(const sd_pos_law *pl, const double *p, const double *q, size_t V, size_t max_bytes,
                    double *ccdf, sd_error *err);

#endif
