/* sd_zipf.h — an on-demand model for large vocabularies.
 *
 * A stored chain costs T·V² numbers: at V = 50 257 (GPT-2) one step alone
 * is 20 GB.  This model computes any row from (seed, t, a) instead:
 *
 *   p_t(b|a) = z_d(π_{t,a}(b)),   q_t(b|a) = z_q(π_{t,a}(b)),
 *   z_s(r) = (r+1)^{-s} / H_{V,s}   (Zipf law over ranks r = 0..V-1),
 *
 * where π_{t,a} is a pseudo-random permutation of the tokens, a 4-round
 * Feistel network on ⌈log2 V⌉ bits (rounded up to even) keyed by
 * (seed, t, a), restricted to 0..V-1 by cycle walking (Black & Rogaway
 * 2002).  Each context ranks the vocabulary differently; the draft (exponent
 * s_d) and the target (s_q) agree on the ranking and differ in sharpness.
 * init is uniform.
 *
 * Consequences used by the simulator (sims/kernels/kernel_token_zipf.c):
 *  - a draw from p_t(.|a) is a rank r ~ z_d mapped to the token π⁻¹(r), and
 *    the residual [q - p]+ is the rank law max(0, z_q - z_d) (normalised)
 *    mapped the same way: O(1) expected work per token, whatever V;
 *  - TV(p_t(.|a), q_t(.|a)) = TV(z_d, z_q) =: τ for every (t, a), so
 *    Theorem 1 (Yin et al. 2024) is E[N_rej] = Σ_n Σ_a Q_{n-1}(a) τ = T·τ,
 *    and with a finite draft length γ the DP of sd_exact_token collapses to
 *    the accepted-in-iteration counter j alone: O(T·min(γ,T)), no sampling.
 *
 * Memory: the rank laws z_d, z_q, their running sums, the residual's, and
 * three guide tables: at most SD_ZIPF_BYTES_PER_TOKEN·V bytes (checked
 * before allocating, limit SD_ZIPF_MAX_BYTES), plus T+1 token slots per
 * thread in the driver.  Nothing grows with T·V or V². */
#ifndef SD_ZIPF_H
#define SD_ZIPF_H

#include <stddef.h>
#include <stdint.h>

#include "sd_chain.h"
#include "sd_error.h"

typedef struct sd_zipf_params {
    size_t V, T;
    uint64_t seed;
    double s_draft;   /* Zipf exponent of the draft, >= 0 (0: uniform) */
    double s_target;  /* Zipf exponent of the target, >= 0 */
} sd_zipf_params;

#define SD_ZIPF_DEFAULT_S_DRAFT 1.0
#define SD_ZIPF_DEFAULT_S_TARGET 1.2

/* 5 doubles and 3 guide entries (4 bytes, over at most 2V buckets) per
 * token of the vocabulary. */
#define SD_ZIPF_BYTES_PER_TOKEN 64u
#define SD_ZIPF_MAX_BYTES ((size_t)1 << 30)
#define SD_ZIPF_MAX_T ((size_t)1 << 24)

typedef struct sd_zipf {
    size_t V, T, G;          /* G = 2^⌈log2 V⌉ guide buckets */
    uint64_t seed;
    double s_draft, s_target;
    unsigned half_bits;      /* Feistel half width: domain 2^(2·half_bits) >= V */
    double tv;               /* τ = TV(z_d, z_q) */
    double *zd, *zq;         /* [V] rank laws */
    double *cd, *cq, *cr;    /* [V] running sums: z_d, z_q, max(0, z_q - z_d) */
    uint32_t *gd, *gq, *gr;  /* [G] guide tables (Chen & Asau; sims/kernels/kernel_token_zipf.c) */
    uint32_t lastd, lastq, lastr;
} sd_zipf;

/* Bytes the model's tables take for vocabulary V. */
size_t sd_zipf_bytes(size_t V);

/* Builds the model: O(V) time and memory.  SD_EUSAGE on a bad parameter
 * (V < 2, T < 1 or > SD_ZIPF_MAX_T, negative or non-finite exponent, equal
 * exponents are allowed: then p = q), SD_ETOOBIG when sd_zipf_bytes(V) >
 * SD_ZIPF_MAX_BYTES (before allocating), SD_ENOMEM.  Free with
 * sd_zipf_free(). */
int sd_zipf_new(const sd_zipf_params *lp, sd_zipf **out, sd_error *err);
void sd_zipf_free(sd_zipf *m);

/* π_{t,a}(b): the rank of token b in context (t, a), and its inverse. */
size_t sd_zipf_rank(const sd_zipf *m, size_t t, size_t a, size_t b);
size_t sd_zipf_token(const sd_zipf *m, size_t t, size_t a, size_t r);

/* Rows p_t(.|a) and q_t(.|a) into p[V] and q[V] (either may be NULL):
 * O(V). */
void sd_zipf_rows(const sd_zipf *m, size_t t, size_t a, double *p, double *q);

/* The stored chain with the same rows (for checks at small V); SD_ETOOBIG
 * beyond SD_CHAIN_MAX_ENTRIES. */
sd_chain *sd_zipf_to_chain(const sd_zipf *m, sd_error *err);

/* Token-level SD with draft length gamma (0 = rest of the horizon) on this
 * model, exactly: E[N_rej] and E[target calls] (either pointer may be
 * NULL), by the collapsed DP described above.  O(T·min(γ,T)) time, O(γ)
 * memory.  SD_ENOMEM. */
int sd_zipf_exact_token(const sd_zipf *m, size_t gamma, double *rejections,
                        double *target_calls, sd_error *err);

#endif
