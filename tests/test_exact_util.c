/* test_exact_util.c — see test_exact_util.h. */
#include "test_exact_util.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "test_util.h"

void tx_random_dist(gsl_rng *r, double *x, size_t V, double zero_frac, unsigned levels)
{
    double s = 0.0;
    for (size_t i = 0; i < V; i++) {
        x[i] = levels ? (double)(1 + gsl_rng_uniform_int(r, levels)) : gsl_rng_uniform_pos(r);
        if (gsl_rng_uniform(r) < zero_frac)
            x[i] = 0.0;
        s += x[i];
    }
    if (s == 0.0) {
        x[gsl_rng_uniform_int(r, V)] = 1.0;
        s = 1.0;
    }
    for (size_t i = 0; i < V; i++)
        x[i] /= s;
}

sd_chain *tx_random_chain(size_t V, size_t T, int homogeneous, double zero_frac,
                          unsigned long seed)
{
    size_t steps = homogeneous ? 1 : T;
    sd_chain *c = sd_chain_alloc(V, T, steps, steps, NULL);
    if (!c)
        return NULL;
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, seed);
    tx_random_dist(r, c->init, V, zero_frac, 0);
    for (size_t i = 0; i < steps * V; i++) {
        tx_random_dist(r, c->draft + i * V, V, zero_frac, 0);
        tx_random_dist(r, c->target + i * V, V, zero_frac, 0);
    }
    gsl_rng_free(r);
    if (sd_chain_validate(c, "test", NULL) != SD_OK) {
        sd_chain_free(c);
        return NULL;
    }
    return c;
}

sd_chain *tx_toy_chain(size_t T)
{
    double p[2] = {2.0 / 3.0, 1.0 / 3.0}, q[2] = {1.0 / 3.0, 2.0 / 3.0};
    return sd_chain_from_pq(p, q, 2, T, NULL);
}

double tx_cli_number(const char *args, const char *key)
{
    char *out, *err;
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s --json", args);
    int st = tu_run(cmd, &out, &err);
    double v = NAN;
    if (st == 0) {
        json_error_t je;
        json_t *o = json_loads(out, 0, &je);
        json_t *x = o ? json_object_get(o, key) : NULL;
        if (x && json_is_number(x))
            v = json_number_value(x);
        json_decref(o);
    } else {
        fprintf(stderr, "'%s' exited %d: %s\n", cmd, st, err);
    }
    free(out);
    free(err);
    return v;
}
