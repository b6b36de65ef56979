/* test_kernel_passes.c — the AVX-512 passes of the table-driven kernels
 * (sims/kernels/kernel_law.c): suite kernel_passes. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../sims/engine/sd_params.h"
#include "../sims/engine/sd_sim.h"
#include "../src/sd_chain.h"
#include "../src/sd_rngbuf.h"
#include "test_util.h"

/* Every kernel of sd_kernel_law.h, lossless (biased with both residuals)
 * and lossy; gamma 0 is the horizon. */
static const tu_conf S_confs[] = {
    {"batch", {"M", NULL}, {2, 0}, "batch-alias"},          {"rrs", {"k", NULL}, {2, 0}, "rrs-alias"},
    {"spectr", {"k", NULL}, {2, 0}, "spectr-alias"},        {"biased", {"eps", NULL}, {0.05, 0}, "biased-alias"},
    {"biased", {"residual", NULL}, {1, 0}, "biased-alias"}, {"sprinter", {"tp", "fp"}, {0.6, 0.3}, "sprinter-alias"},
};

/* One run of cf on c at gamma (0: the horizon) with the vector passes
 * (isa -1) or without (0): statistics, positions and rb (L = 0), or cells
 * and tokens (L > 0). */
static void S_run(const tu_conf *cf, const sd_chain *c, size_t gamma, size_t L, int isa, sd_sim_result *r)
{
    sd_params par;
    const sd_verifier_type *vt = tu_setup(&par, cf);
    if (gamma)
        tu_vpar(&par, vt, "gamma", (double)gamma);
    sd_sim_opts so = {.seed = 7, .trials = 3001, .threads = 1, .want_rb = L == 0, .want_positions = L == 0};
    if (L) {
        so.stop.L = L;
        so.want_cells = 1;
        so.want_tokens = L;
    }
    sd_error err;
    sd_rngbuf_cap_isa(isa);
    int rc = sd_sim_run(vt, c, &par, &so, r, &err);
    sd_rngbuf_cap_isa(-1);
    cr_assert_eq(rc, SD_OK, "%s: %s", cf->algo, err.msg);
    cr_assert_str_eq(r->kernel, cf->kernel);
}

/* The vector passes do S_step's arithmetic: with them switched off
 * (sd_rngbuf_cap_isa(0): scalar Philox too) every statistic, position
 * count, cell and token is the same bits.  V = 3, 7, 20 (one to five bits
 * of token in an entry), gamma 1, 3, 4 and the horizon, 3001 trials (group
 * and lane tails), the horizon and L = 3 (the cells of `check`). */
Test(kernel_passes, vector_passes_equal_the_scalar_code)
{
    const size_t Vs[3] = {3, 7, 20}, gammas[4] = {1, 3, 4, 0}, Ls[2] = {0, 3};
    for (size_t v = 0; v < 3; v++) {
        sd_chain *c = tu_chain(Vs[v], 9, 40 + v);
        cr_assert_not_null(c);
        for (size_t i = 0; i < sizeof S_confs / sizeof *S_confs; i++)
            for (size_t g = 0; g < 4; g++)
                for (size_t l = 0; l < 2; l++) {
                    if (gammas[g] && strcmp(S_confs[i].algo, "sprinter") == 0)
                        continue; /* SPRINTER has no draft length */
                    sd_sim_result a, b;
                    S_run(S_confs + i, c, gammas[g], Ls[l], -1, &a);
                    S_run(S_confs + i, c, gammas[g], Ls[l], 0, &b);
                    char what[96];
                    snprintf(what, sizeof what, "%s V %zu gamma %zu L %zu", S_confs[i].algo, Vs[v], gammas[g], Ls[l]);
                    if (Ls[l] == 0)
                        tu_same_sim(&a, &b, what);
                    else {
                        cr_assert_eq(a.ncells, b.ncells, "%s: cells", what);
                        cr_assert_eq(memcmp(a.cells, b.cells, a.ncells * sizeof *a.cells), 0, "%s: cells", what);
                        cr_assert_eq(memcmp(a.tokens, b.tokens, a.trials * Ls[l] * sizeof *a.tokens), 0,
                                     "%s: tokens", what);
                    }
                    sd_sim_result_free(&a);
                    sd_sim_result_free(&b);
                }
        sd_chain_free(c);
    }
}
