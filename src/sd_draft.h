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

#endif
