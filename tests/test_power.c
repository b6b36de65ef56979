/* test_power.c — check's power (src/sd_power.h) against the exact
 * noncentral chi-square where it has a closed form: with one degree of
 * freedom X = (Z + √λ)², so P(X > c) = Φ(√λ - √c) + Φ(-√λ - √c). */
#include <criterion/criterion.h>
#include <gsl/gsl_cdf.h>
#include <math.h>

#include "../src/sd_power.h"

/* Patnaik's two-moment approximation is within 0.02 of the exact power at
 * one degree of freedom over these λ (it is exact in the first two moments;
 * the gap is its shape error, largest near power 0.5). */
Test(power, patnaik_is_close_to_the_exact_one_dof_power)
{
    const double alpha = 1e-3, crit = gsl_cdf_chisq_Qinv(alpha, 1.0);
    const double lambdas[] = {2.0, 5.0, 10.0, 20.0, 40.0};
    for (size_t i = 0; i < sizeof lambdas / sizeof *lambdas; i++) {
        double l = lambdas[i];
        double exact = gsl_cdf_ugaussian_P(sqrt(l) - sqrt(crit)) + gsl_cdf_ugaussian_P(-sqrt(l) - sqrt(crit));
        double approx = sd_power_chisq(1.0, l, alpha);
        cr_expect(fabs(approx - exact) < 0.02, "lambda %g: power %.4f, exact %.4f", l, approx, exact);
    }
    cr_expect_eq(sd_power_chisq(1.0, 0.0, alpha), alpha);
}
