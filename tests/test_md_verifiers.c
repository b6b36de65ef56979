/* test_md_verifiers.c — the verifiers engines run (onehot, strict):
 * lossless under `check` at several draft counts and lengths, on a chain
 * with zeros.  Chi-square at the check's default level: a rejection is a
 * finding, not a tolerance to widen. */
#include <criterion/criterion.h>

#include "../sims/engine/sd_check.h"
#include "../sims/engine/sd_params.h"
#include "../sims/engine/sd_verifier.h"
#include "test_util.h"

static void S_check_verdict(const char *name, double k, double gamma, unsigned long seed,
                            int want)
{
    const sd_verifier_type *vt = sd_verifier_find(name);
    cr_assert_not_null(vt, "%s is registered", name);
    sd_chain *c = tu_zero_chain(4, 4, 7);
    cr_assert_not_null(c);
    sd_params par;
    sd_params_defaults(&par, vt);
    tu_par(&par, "k", k);
    tu_par(&par, "gamma", gamma);
    sd_check_opts o;
    sd_check_defaults(&o);
    o.seed = seed;
    o.trials = 200000;
    o.L = 3;
    sd_check_result r;
    sd_error err;
    cr_assert_eq(sd_check_run(vt, c, &par, &o, &r, &err), SD_OK, "%s: %s", name, err.msg);
    cr_expect_eq(r.unbiased, want, "%s k=%g gamma=%g: p-value %.3g (chi2 %.1f, dof %.0f)", name, k, gamma,
              r.chi.p_value, r.chi.chi2, r.chi.dof);
    sd_check_result_free(&r);
    sd_chain_free(c);
}

static void S_check(const char *name, double k, double gamma, unsigned long seed);

Test(md_verifiers, onehot_is_lossless)
{
    S_check("onehot", 1, 1, 101);
    S_check("onehot", 3, 2, 102);
}

Test(md_verifiers, strict_is_lossless)
{
    S_check("strict", 1, 1, 103);
    S_check("strict", 3, 2, 104);
}

static void S_check(const char *name, double k, double gamma, unsigned long seed)
{
    S_check_verdict(name, k, gamma, seed, 1);
}

Test(md_verifiers, broken_onehot_is_flagged)
{
    S_check_verdict("broken-onehot", 1, 1, 105, 0);
}
