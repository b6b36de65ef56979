/* sd_verifier.h — the one interface every Monte-Carlo verifier implements.
 *
 * A verifier is one file in sims/ that ends in one
 *     const sd_verifier_type sd_verifier_NAME = { ... };
 * and one line in the table of sims/sd_registry.c.  The driver
 * (sims/sd_sim.h) then gives it `simdec run`, `simdec check` and the LP
 * comparison for free.  See README.md, "Adding a verifier".
 *
 * Conventions (SPEC §2): one call of step() is one iteration = one call of
 * the target model (unless the verifier says otherwise in it->target_calls,
 * as SPRINTER does).  Positions are 1-based: tokens x_1..x_T are generated,
 * x_0 ~ init is the prompt. */
#ifndef SD_VERIFIER_H
#define SD_VERIFIER_H

#include <stddef.h>
#include <stdint.h>

#include "../src/sd_chain.h"
#include "../src/sd_error.h"
#include "../src/sd_rng.h"

/* Parameters of every verifier; each uses the fields it names in
 * sd_verifier_type.params and ignores the others. */
typedef enum { SD_RESIDUAL_OPT = 0, SD_RESIDUAL_UNO = 1 } sd_residual_kind;
typedef enum { SD_PLAN_KSEQ = 0, SD_PLAN_OTM = 1 } sd_plan_kind;

typedef struct sd_params {
    size_t gamma;          /* draft tokens per iteration; 0 = rest of horizon */
    size_t M;              /* batch: number of drafts (>= 1) */
    size_t k;              /* rrs, spectr: number of drafts (>= 1) */
    double eps;            /* biased: ε >= 0 */
    sd_residual_kind residual; /* biased: opt (Theorem 4) or uno (= q) */
    double tp, fp;         /* sprinter: η_TP, η_FP in [0,1] */
    sd_plan_kind plan;     /* spectr: k-Seq or the OTM LP plan */
} sd_params;

/* Defaults: gamma 0 (rest of horizon), M 2, k 2, eps 0, residual opt,
 * tp 0.5, fp 0, plan kseq. */
void sd_params_defaults(sd_params *par);

/* What one iteration did. */
typedef struct sd_iter {
    size_t emitted;        /* tokens written to out[], 1 <= emitted <= T-n+1 */
    size_t accepted;       /* draft tokens accepted in this iteration */
    int rejected;          /* 1 if it ended with a token from a residual
                              (a rejection, 004_… Theorem 1), else 0 */
    unsigned target_calls; /* target-model calls it made (usually 1) */
} sd_iter;

typedef struct sd_verifier_type {
    const char *name;     /* the --algo name, e.g. "block" */
    const char *summary;  /* one line for --help, citing the source */
    const char *params;   /* space-separated sd_params fields it reads,
                             e.g. "gamma" or "k gamma"; "" for none */
    /* 1 if, at these parameters, it claims to preserve the target law
     * (biased is lossless only at ε = 0, sprinter only at η_FP = 0).  NULL
     * means "always".  The broken-* controls claim it and must be caught. */
    int (*claims_lossless)(const sd_params *par);

    /* Allocates per-run scratch state for chain c (its V and T) and checks
     * the parameters (SD_EUSAGE naming the bad one).  *state may be left
     * NULL by verifiers that need none.  One state serves one thread. */
    int (*alloc)(void **state, const sd_chain *c, const sd_params *par,
                 sd_error *err);
    /* Frees what alloc made; accepts NULL. May be NULL itself. */
    void (*free)(void *state);
    /* Called at the start of every trial (for verifiers that carry state
     * between iterations, e.g. greedy-block's modified target).  May be
     * NULL. */
    void (*begin)(void *state);
    /* One iteration at position n (1 <= n <= T) after token prev = x_{n-1}:
     * drafts, verifies, writes x_n..x_{n+emitted-1} to out[] (capacity
     * T-n+1) and fills *it.  Returns SD_OK or a status with err set. */
    int (*step)(void *state, const sd_chain *c, const sd_params *par,
                sd_stream *rng, size_t n, size_t prev, size_t *out,
                sd_iter *it, sd_error *err);
} sd_verifier_type;

/* Draft length of an iteration at position n: the rest of the horizon
 * T-n+1, or par->gamma when it is set and smaller. */
static inline size_t sd_draft_len(const sd_chain *c, const sd_params *par,
                                  size_t n)
{
    size_t rest = c->T - n + 1;
    return (par->gamma && par->gamma < rest) ? par->gamma : rest;
}

/* The registry (sims/sd_registry.c): NULL-terminated, lossless verifiers
 * first, then the deliberately broken controls (whose names start with
 * "broken-"), which `run --algo` accepts but `--help` lists apart. */
extern const sd_verifier_type *const sd_verifiers[];

/* Looks a verifier up by name; NULL if unknown. */
const sd_verifier_type *sd_verifier_find(const char *name);

/* 1 if the verifier reads parameter `field` (a word of its params). */
int sd_verifier_uses(const sd_verifier_type *vt, const char *field);

#endif
