/* test_referee_cmd.c — `simdec referee` (cli/cmd_referee.c,
 * treelp/sd_referee.h): suite referee_cmd.
 *   - JSON: an array of rows with the keys of the brief; every fraction of
 *     the optimum <= 1 + 1e-9 (no lossless verifier beats the optimum of
 *     its class); block verification and optimal-md (at one position)
 *     attain theirs (1e-9);
 *     every benchmark model present (fortunes-bigram when build/lm has it);
 *   - CSV header; a plugin's verifier becomes a row. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "test_util.h"

#ifndef SD_EXAMPLES_DIR
#define SD_EXAMPLES_DIR "build/examples"
#endif

static json_t *S_json(const char *args)
{
    char *out = NULL;
    cr_assert_eq(tu_run(args, &out, NULL), 0, "simdec %s", args);
    json_error_t je;
    json_t *o = json_loads(out, 0, &je);
    cr_assert_not_null(o, "simdec %s: not JSON: %s", args, je.text);
    free(out);
    return o;
}

Test(referee_cmd, benchmark_rows_keys_and_fractions)
{
    json_t *a = S_json("referee --json");
    cr_assert(json_is_array(a));
    static const char *const keys[] = {"algo", "params", "model", "exact_accepted", "optimum", "optimum_kind",
                                       "fraction_of_optimum"};
    int models[4] = {0}, seen_opt = 0, seen_block = 0;
    static const char *const names[4] = {"default", "spectr-bernoulli", "chain-zeros", "fortunes-bigram"};
    size_t i, numeric = 0;
    json_t *r;
    json_array_foreach(a, i, r) {
        for (size_t k = 0; k < sizeof keys / sizeof *keys; k++)
            cr_assert_not_null(json_object_get(r, keys[k]), "row %zu lacks %s", i, keys[k]);
        const char *algo = json_string_value(json_object_get(r, "algo"));
        const char *model = json_string_value(json_object_get(r, "model"));
        cr_assert(algo && model);
        for (int m = 0; m < 4; m++)
            models[m] |= strcmp(model, names[m]) == 0;
        json_t *f = json_object_get(r, "fraction_of_optimum");
        if (json_is_number(f)) {
            double x = json_number_value(f);
            numeric++;
            cr_expect(x <= 1 + 1e-9, "%s on %s: %.17g of the optimum", algo, model, x);
            const char *kind = json_string_value(json_object_get(r, "optimum_kind"));
            int attains = strcmp(algo, "block") == 0 ||
                          (strcmp(algo, "optimal-md") == 0 && kind && strcmp(kind, "k-draft") == 0);
            if (attains) {
                cr_expect(fabs(x - 1) < 1e-9, "%s on %s attains %.17g of its optimum", algo, model, x);
                seen_opt += strcmp(algo, "optimal-md") == 0;
                seen_block += strcmp(algo, "block") == 0;
            }
        } else {
            cr_expect(json_is_string(json_object_get(r, "note")), "%s on %s: no fraction and no note", algo, model);
        }
    }
    struct stat st;
    int lm = stat("build/lm/fortunes-bigram.arpa", &st) == 0;
    for (int m = 0; m < (lm ? 4 : 3); m++)
        cr_expect(models[m], "model %s missing", names[m]);
    cr_expect_geq(seen_opt, 3);
    cr_expect_geq(seen_block, 3);
    cr_expect_geq(numeric, 20u);
    json_decref(a);
}

Test(referee_cmd, csv_header_and_a_plugin_row)
{
    char *out = NULL;
    cr_assert_eq(tu_run("referee --csv --p 0.75,0.25 --q 0.25,0.75 --T 8", &out, NULL), 0);
    cr_expect(strncmp(out,
                      "algo,params,model,exact_accepted,optimum,optimum_kind,fraction_of_optimum,optimum_wor,"
                      "tree_ot,note\n",
                      strlen("algo,params,model,exact_accepted,optimum,optimum_kind,fraction_of_optimum,"
                             "optimum_wor,tree_ot,note\n")) == 0,
              "header: %.120s", out);
    cr_expect(strstr(out, "\noptimal-md,\"k=2 gamma=1\",given,0.6875") != NULL, "optimal-md row: %s", out);
    free(out);
    json_t *a = S_json("referee --json --p 0.75,0.25 --q 0.25,0.75 --T 8 --plugin " SD_EXAMPLES_DIR
                       "/my_verifier.so");
    size_t i;
    json_t *r;
    int found = 0;
    json_array_foreach(a, i, r) found |= strcmp(json_string_value(json_object_get(r, "algo")), "my-verifier") == 0;
    cr_expect(found, "the plugin's verifier is not a row");
    json_decref(a);
}
