/* sd_power.h — the power of check's chi-square test (sims/engine/sd_check.h).
 *
 * N trials whose output law π differs from the target law e give a Pearson
 * statistic that is approximately noncentral chi-square with the test's
 * dof and noncentrality λ = N Σ (π - e)²/e = N χ²(π, e).  Since
 * TV(π, e) <= ½ sqrt(χ²(π, e)) (Cauchy–Schwarz), every bias of total
 * variation δ has λ >= 4 N δ², with equality for the least favourable
 * bias (mass δ moved from a set of target probability ½ to its
 * complement, in proportion to e).  So the test detects EVERY bias of TV
 * >= δ with probability >= power once 4 N δ² >= λ*(dof, alpha, power).
 *
 * The noncentral chi-square's tail is taken from Patnaik's (1949)
 * approximation χ²_{d,λ} ≈ c χ²_f, c = (d+2λ)/(d+λ), f = (d+λ)²/(d+2λ),
 * with GSL's central chi-square (GSL has no noncentral one); it is
 * accurate to a few per cent in power in the range used here. */
#ifndef SD_POWER_H
#define SD_POWER_H

#include <stdint.h>

#define SD_POWER_DEFAULT 0.9

/* P(χ²_{dof,λ} > the level-alpha critical value of χ²_dof). */
double sd_power_chisq(double dof, double lambda, double alpha);

/* The λ at which that power equals `power` (bisection, relative 1e-10). */
double sd_power_lambda(double dof, double alpha, double power);

/* The smallest TV bias detected with probability `power` whatever its
 * direction: sqrt(λ* / (4 N)). */
double sd_power_detectable_tv(double dof, double alpha, double power, double trials);

/* Trials that detect every bias of TV >= tv with probability `power`:
 * ceil(λ* / (4 tv²)); 0 when tv is not in (0, 1]. */
uint64_t sd_power_trials(double dof, double alpha, double power, double tv);

#endif
