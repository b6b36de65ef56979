/* test_example.c — the README's worked example of a new verifier
 * (examples/my_verifier.c) builds as a plugin (mk/examples.mk), loads, is
 * lossless by `check`, and matches the exact values of token-level
 * decoding with gamma = 1, which it is.  docs/adding-a-verifier.md must show
 * the file exactly as it is. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../sims/engine/sd_check.h"
#include "../sims/engine/sd_params.h"
#include "../sims/engine/sd_plugin.h"
#include "../sims/engine/sd_sim.h"
#include "../src/sd_exact.h"

#ifndef SD_EXAMPLES_DIR
#define SD_EXAMPLES_DIR "build/examples"
#endif

Test(example, my_verifier_is_lossless_and_exact)
{
    /* The example is loaded as docs/adding-a-verifier.md tells a user to. */
    sd_error e;
    cr_assert_eq(sd_plugin_load(SD_EXAMPLES_DIR "/my_verifier.so", &e), SD_OK, "%s (run `make examples`)",
                 e.msg);
    const sd_verifier_type *vt = sd_verifier_find("my-verifier");
    cr_assert_not_null(vt);

    sd_gen_params gp;
    sd_gen_defaults(&gp);
    gp.T = 20;
    sd_chain *c = sd_chain_generate(&gp, NULL);
    sd_params par;
    sd_params_defaults(&par, vt);
    sd_check_opts co;
    sd_check_defaults(&co);
    co.trials = 100000;
    sd_check_result cr;
    cr_assert_eq(sd_check_run(vt, c, &par, &co, &cr, &e), SD_OK, "%s", e.msg);
    cr_expect(cr.unbiased, "p-value %g", cr.chi.p_value);
    sd_check_result_free(&cr);

    /* Rejections and target calls against the exact DP for token-level SD
     * at gamma = 1; 4 standard errors (false alarm ~6e-5 per check). */
    sd_sim_opts so = {.seed = 5, .trials = 20000};
    sd_sim_result r;
    cr_assert_eq(sd_sim_run(vt, c, &par, &so, &r, &e), SD_OK, "%s", e.msg);
    double rej, calls;
    sd_exact_token(c, 1, &rej, &calls, NULL);
    cr_expect(fabs(r.rejections.mean - rej) < 4 * sd_welford_stderr(&r.rejections));
    cr_expect(fabs(r.target_calls.mean - calls) < 4 * sd_welford_stderr(&r.target_calls));
    sd_sim_result_free(&r);
    sd_chain_free(c);
}

static char *S_slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    cr_assert_eq(fread(s, 1, (size_t)n, f), (size_t)n);
    s[n] = '\0';
    fclose(f);
    return s;
}

Test(example, docs_show_the_example_verbatim)
{
    /* Tests run from the repository root (scripts/run-tests.sh). */
    char *readme = S_slurp("docs/adding-a-verifier.md"), *src = S_slurp("examples/my_verifier.c");
    cr_expect(strstr(readme, src) != NULL, "docs/adding-a-verifier.md must contain examples/my_verifier.c verbatim");
    free(readme);
    free(src);
}
