/* test_trial_until.c — sd_sim_trial_until's contract (sims/engine/sd_sim.h):
 * the trial stops after x_L, and x_0..x_L are those of the whole trial
 * (suite trial_until). */
#include <criterion/criterion.h>
#include <string.h>

#include "../sims/engine/sd_params.h"
#include "../sims/engine/sd_sim.h"
#include "../sims/engine/sd_verifier.h"
#include "test_util.h"

Test(trial_until, stops_after_x_L_with_the_whole_trials_tokens)
{
    sd_chain *c = tu_chain(3, 9, 4);
    cr_assert_not_null(c);
    const sd_verifier_type *vt = sd_verifier_find("block");
    sd_params par;
    sd_params_defaults(&par, vt);
    par.gamma = 2;
    void *state = NULL;
    sd_error err;
    cr_assert_eq(vt->alloc(&state, c, &par, &err), SD_OK, "%s", err.msg);
    for (size_t L = 1; L <= c->T; L++)
        for (uint64_t t = 0; t < 50; t++) {
            size_t whole[10], part[10];
            sd_trial tw, tp;
            cr_assert_eq(sd_sim_trial(vt, state, c, &par, 3, t, whole, &tw, NULL, NULL, &err), SD_OK);
            cr_assert_eq(sd_sim_trial_until(vt, state, c, &par, 3, t, L, part, &tp, NULL, NULL, &err), SD_OK);
            /* at least L tokens, fewer than L + gamma + 1 (the last iteration's) */
            cr_expect(tp.emitted >= L && tp.emitted <= L + par.gamma, "L %zu: emitted %zu", L, tp.emitted);
            cr_expect(memcmp(whole, part, (L + 1) * sizeof *whole) == 0, "L %zu trial %llu: tokens differ", L,
                      (unsigned long long)t);
        }
    if (vt->free)
        vt->free(state);
    sd_chain_free(c);
}
