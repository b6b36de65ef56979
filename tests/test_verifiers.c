/* test_verifiers.c — one test over every registered verifier, plugins
 * included (the examples of build/examples/ are loaded first): its
 * declaration is valid, hostile parameter values are refused with the
 * option and its range named, runs are reproducible whatever the threads,
 * and `check` gives the verdict the verifier claims — unbiased for a
 * verifier that claims losslessness at its defaults, biased for the
 * deliberately broken controls and for the lossy plugin `typical`.
 *
 * A new verifier (in sims/ or as a plugin) is covered here without a line
 * of test code: that is the point of the platform. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "../sims/engine/sd_check.h"
#include "../sims/engine/sd_params.h"
#include "../sims/engine/sd_plugin.h"
#include "../sims/engine/sd_sim.h"
#include "../src/sd_dist.h"
#include "../treelp/sd_treelp.h"
#include "test_util.h"

static void S_load_examples(void)
{
    sd_error err;
    cr_assert_eq(sd_plugin_load("build/examples/my_verifier.so", &err), SD_OK, "%s", err.msg);
    cr_assert_eq(sd_plugin_load("build/examples/typical.so", &err), SD_OK, "%s", err.msg);
}

static sd_chain *S_chain(size_t V, size_t T, unsigned long seed)
{
    sd_chain *c = tu_chain(V, T, seed);
    cr_assert_not_null(c);
    return c;
}

Test(verifiers, declarations_are_valid_and_parameters_round_trip)
{
    S_load_examples();
    const sd_verifier_type *vt;
    size_t n = 0;
    for (size_t i = 0; (vt = sd_verifier_at(i)) != NULL; i++, n++) {
        sd_error err;
        cr_expect_eq(sd_params_check_decls(vt, &err), SD_OK, "%s", err.msg);
        cr_expect_eq(sd_verifier_find(vt->name), vt, "%s: the name must be unique", vt->name);
        /* Every default is a valid value, and the JSON echo has one key per
         * declared parameter. */
        sd_params par;
        sd_params_defaults(&par, vt);
        json_t *j = sd_params_json(&par, vt);
        cr_expect_eq(json_object_size(j), sd_params_count(vt), "%s", vt->name);
        json_decref(j);
    }
    cr_expect_geq(n, 14u, "built-in verifiers and the two example plugins");
    cr_expect_not_null(sd_verifier_find("typical"));
    cr_expect_not_null(sd_verifier_find("my-verifier"));
}

Test(verifiers, hostile_parameter_values_are_refused_with_the_range)
{
    S_load_examples();
    static const char *const bad[] = {"", "-1", "nan", "inf", "1e999", "0x10", "12x", " 3", "1.5.2"};
    const sd_verifier_type *vt;
    for (size_t i = 0; (vt = sd_verifier_at(i)) != NULL; i++) {
        size_t np = sd_params_count(vt);
        for (size_t j = 0; j < np; j++) {
            const sd_param_decl *d = &vt->params[j];
            char opt[64];
            snprintf(opt, sizeof opt, "--%s", d->name);
            for (size_t b = 0; b < sizeof bad / sizeof *bad; b++) {
                /* "-1" is a valid value of a parameter whose range has it */
                if (strcmp(bad[b], "-1") == 0 && d->kind == SD_PARAM_REAL && d->min <= -1)
                    continue;
                sd_params par;
                sd_params_defaults(&par, vt);
                sd_error err;
                cr_expect_eq(sd_params_parse(&par, vt, d->name, bad[b], &err), SD_EUSAGE,
                             "%s %s '%s' accepted", vt->name, opt, bad[b]);
                cr_expect(tu_contains(err.msg, opt), "%s: message '%s' must name %s", vt->name, err.msg, opt);
            }
            if (d->kind != SD_PARAM_CHOICE) {
                sd_params par;
                sd_params_defaults(&par, vt);
                sd_error err;
                cr_expect_eq(sd_params_set(&par, vt, d->name, d->min, &err), SD_OK, "%s", err.msg);
                cr_expect_eq(sd_params_set(&par, vt, d->name, d->max, &err), SD_OK, "%s", err.msg);
                if (d->min > -1e300) {
                    cr_expect_eq(sd_params_set(&par, vt, d->name, d->min - fmax(1.0, fabs(d->min)), &err),
                                 SD_EUSAGE, "%s %s below its range accepted", vt->name, opt);
                    cr_expect(tu_contains(err.msg, opt), "%s", err.msg);
                }
            }
        }
        /* A parameter it does not declare is named as such. */
        sd_params par;
        sd_params_defaults(&par, vt);
        sd_error err;
        cr_expect_eq(sd_params_parse(&par, vt, "no-such-parameter", "1", &err), SD_EUSAGE);
        cr_expect(tu_contains(err.msg, "does not apply to --algo"), "%s", err.msg);
    }
}

Test(verifiers, runs_are_reproducible_whatever_the_threads)
{
    S_load_examples();
    sd_chain *c = S_chain(4, 6, 3);
    sd_model m = sd_model_of_chain(c);
    const sd_verifier_type *vt;
    for (size_t i = 0; (vt = sd_verifier_at(i)) != NULL; i++) {
        sd_params par;
        sd_params_defaults(&par, vt);
        sd_sim_job job = {vt, &m, &par};
        sd_sim_result r1, r2;
        sd_sim_opts o1 = {.seed = 5, .trials = 2 * SD_SIM_BLOCK + 17, .threads = 1};
        sd_sim_opts o2 = o1;
        o2.threads = 2;
        sd_error err;
        cr_assert_eq(sd_sim_run_job(&job, &o1, &r1, &err), SD_OK, "%s: %s", vt->name, err.msg);
        cr_assert_eq(sd_sim_run_job(&job, &o2, &r2, &err), SD_OK, "%s: %s", vt->name, err.msg);
        cr_expect(r1.rejections.mean == r2.rejections.mean && r1.target_calls.mean == r2.target_calls.mean &&
                      r1.accepted.mean == r2.accepted.mean && r1.rejections.m2 == r2.rejections.m2,
                  "%s: 1 and 2 threads differ", vt->name);
        cr_expect_str_eq(r1.kernel, r2.kernel);
        sd_sim_result_free(&r1);
        sd_sim_result_free(&r2);
    }
    sd_chain_free(c);
}

/* The verdict each verifier claims, on a V = 4, T = 4 chain with zeros,
 * L = 3 (64 cells), 200 000 trials at alpha 1e-3: a lossless verifier
 * fails with probability 1e-3 by construction (fixed seed: the outcome is
 * deterministic); each biased one is flagged here with a p-value far below
 * alpha. */
Test(verifiers, check_gives_the_claimed_verdict)
{
    S_load_examples();
    sd_treelp_install(); /* tree-lp and broken-tree-lp play the tree-valid LP's plans */
    sd_chain *c = tu_zero_chain(4, 4, 7); /* zeros: see test_util.h */
    cr_assert_not_null(c);
    const sd_verifier_type *vt;
    for (size_t i = 0; (vt = sd_verifier_at(i)) != NULL; i++) {
        sd_params par;
        sd_params_defaults(&par, vt);
        int lossless = sd_verifier_claims_lossless(vt, &par) && !(vt->flags & SD_VERIFIER_CONTROL);
        sd_check_opts o;
        sd_check_defaults(&o);
        o.seed = 40 + i;
        o.trials = 200000;
        o.L = 3;
        sd_check_result r;
        sd_error err;
        cr_assert_eq(sd_check_run(vt, c, &par, &o, &r, &err), SD_OK, "%s: %s", vt->name, err.msg);
        cr_expect_eq(r.unbiased, lossless, "%s: p-value %.3g (chi2 %.1f, dof %.0f, kernel %s), claims %s",
                     vt->name, r.chi.p_value, r.chi.chi2, r.chi.dof, r.kernel,
                     lossless ? "lossless" : "biased");
        sd_check_result_free(&r);
    }
    sd_chain_free(c);
}
