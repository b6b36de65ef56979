/* test_kernel_alias.c — the token kernel's alias tables: exact masses and
 * no outcome of weight zero; suite kernel_alias. */
#include <criterion/criterion.h>
#include <gsl/gsl_cdf.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../sims/engine/sd_params.h"
#include "../sims/engine/sd_sim.h"
#include "../sims/verifiers/sd_token.h"
#include "../src/sd_dist.h"
#include "../src/sd_exact.h"
#include "../src/sd_zipf.h"
#include "../src/sd_rngbuf.h"
#include "test_util.h"

/* --- alias tables -------------------------------------------------------------- */

/* Exact accounting of a table: every column's split, every outcome's
 * share of the 2^53 uniform integers, and the boundary values of U. */
static void S_alias_check(const double *w, size_t n, unsigned lgK)
{
    size_t K = (size_t)1 << lgK;
    uint64_t C = ((uint64_t)1 << 53) >> lgK;
    uint64_t *tab = malloc(K * sizeof *tab), *mass = calloc(K, sizeof *mass);
    sd_error e;
    cr_assert_eq(sd_token_alias_build(w, n, lgK, tab, &e), SD_OK, "%s", e.msg);
    double total = 0.0;
    for (size_t o = 0; o < n; o++)
        total += w[o];
    for (size_t k = 0; k < K; k++) {
        uint64_t thr = tab[k] >> lgK, al = tab[k] & (K - 1);
        cr_assert_leq(thr, C);
        if (thr > 0)
            cr_assert(k < n && w[k] > 0.0, "column %zu keeps itself but has weight 0", k);
        if (thr < C)
            cr_assert(al < n && w[al] > 0.0, "column %zu aliases %llu of weight 0", k, (unsigned long long)al);
        mass[k] += thr;
        mass[al] += C - thr;
        /* the draw at the boundaries of the column */
        const uint64_t us[] = {k * C, k * C + (thr ? thr - 1 : 0), k * C + (thr < C ? thr : C - 1), k * C + C - 1};
        for (size_t j = 0; j < 4; j++) {
            size_t o = sd_token_alias_draw(tab, lgK, us[j]);
            cr_assert(o < n && w[o] > 0.0, "U = %llu drew outcome %zu of weight 0", (unsigned long long)us[j], o);
        }
    }
    uint64_t sum = 0;
    for (size_t o = 0; o < K; o++) {
        sum += mass[o];
        double want = o < n ? w[o] / total * 0x1p53 : 0.0;
        cr_assert(fabs((double)mass[o] - want) <= 2.0 * (double)n + 2.0, "outcome %zu: mass %llu, want %.17g", o,
                  (unsigned long long)mass[o], want);
        if (o >= n || w[o] == 0.0)
            cr_assert_eq(mass[o], 0, "outcome %zu of weight 0 has mass %llu", o, (unsigned long long)mass[o]);
    }
    cr_assert_eq(sum, (uint64_t)1 << 53);
    free(tab);
    free(mass);
}

Test(kernel_alias, exact_masses_and_no_outcome_of_weight_zero)
{
    const double one[1] = {1.0};
    const double two[2] = {0.0, 1.0};
    const double z[6] = {0.0, 0.3, 0.0, 0.0, 0.7, 0.0};
    const double tiny[5] = {1e-300, 0.5, 1e-300, 0.5, 0.0};
    const double skew[4] = {1.0 - 3e-17, 1e-17, 1e-17, 1e-17};
    double uni[16], ramp[512];
    for (size_t i = 0; i < 16; i++)
        uni[i] = 1.0 / 16.0;
    for (size_t i = 0; i < 512; i++)
        ramp[i] = (i % 3 == 0) ? 0.0 : (double)i * 1e-3;
    S_alias_check(one, 1, 1);
    S_alias_check(two, 2, 1);
    S_alias_check(z, 6, 3);
    S_alias_check(z, 6, 5); /* padding columns */
    S_alias_check(tiny, 5, 3);
    S_alias_check(skew, 4, 2);
    S_alias_check(uni, 16, 4);
    S_alias_check(ramp, 512, 9);
    S_alias_check(ramp, 300, 10);
    uint64_t tab[8];
    sd_error e;
    const double bad0[2] = {0.0, 0.0}, badn[2] = {NAN, 1.0}, badneg[2] = {-0.1, 1.1};
    cr_assert_eq(sd_token_alias_build(bad0, 2, 1, tab, &e), SD_EDATA);
    cr_assert_eq(sd_token_alias_build(badn, 2, 1, tab, &e), SD_EDATA);
    cr_assert_eq(sd_token_alias_build(badneg, 2, 1, tab, &e), SD_EDATA);
    cr_assert_eq(sd_token_alias_build(uni, 16, 3, tab, &e), SD_EUSAGE);
    cr_assert(strstr(e.msg, "2^lgK") != NULL, "%s", e.msg);
}
