/* test_dist.c — distributions: residuals and sampling never pick an
 * outcome of weight zero; suite dist. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../sims/engine/sd_params.h"
#include "../sims/engine/sd_sim.h"
#include "../src/sd_chain.h"
#include "../src/sd_dist.h"
#include "../src/sd_exact.h"
#include "../src/sd_rng.h"
#include "../src/sd_stats.h"

/* --- distributions ------------------------------------------------------ */

Test(dist, residual_and_sampling_never_pick_zero_weight)
{
    double p[4] = {0.4, 0.1, 0.5, 0.0}, q[4] = {0.2, 0.3, 0.5, 0.0};
    cr_assert(fabs(sd_dist_tv(p, q, 4) - 0.2) < 1e-15);
    double r[4];
    cr_assert(fabs(sd_dist_residual(p, q, 4, r) - 0.2) < 1e-15);
    cr_assert(fabs(r[1] - 1.0) < 1e-15);
    /* u close to 1 with rounding: still the only positive-weight index. */
    cr_assert_eq(sd_dist_sample_residual(p, q, 4, 0.2, 0.9999999999999999), 1u);
    double w[4] = {0.0, 0.5, 0.0, 0.0};
    cr_assert_eq(sd_dist_sample(w, 4, 0.5, 0.0), 1u);
    cr_assert_eq(sd_dist_sample(w, 4, 0.5000001, 0.9999999999), 1u);
    /* p = q: zero residual mass, nothing to sample. */
    cr_assert_eq(sd_dist_residual(q, q, 4, r), 0.0);
}
