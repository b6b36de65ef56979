/* sd_gen_numpy.c — `simdec gen --rng numpy-mt19937`: the numeric instance
 * of Yin, Chen, Huang & Wang 2024 (App. F) drawn as numpy's legacy
 * generator draws it (sd_chain.h). */
#include <gsl/gsl_rng.h>
#include <string.h>

#include "sd_chain.h"
#include "sd_gen_numpy.h"

static const char *const S_names[] = {
    [SD_GEN_DIRICHLET] = "dirichlet",
    [SD_GEN_NUMPY_MT19937] = "numpy-mt19937",
};

int sd_gen_rng_parse(const char *name)
{
    for (int i = 0; i < (int)(sizeof S_names / sizeof *S_names); i++)
        if (strcmp(name, S_names[i]) == 0)
            return i;
    return -1;
}

const char *sd_gen_rng_name(int rng)
{
    return rng >= 0 && rng < (int)(sizeof S_names / sizeof *S_names) ? S_names[rng] : "?";
}

/* numpy's legacy_double (random_standard_uniform of RandomState): 53 random
 * bits from two 32-bit MT19937 outputs, a >> 5 (27 bits) above b >> 6 (26
 * bits), divided by 2^53. */
static double S_double(gsl_rng *r)
{
    unsigned long a = gsl_rng_get(r) >> 5, b = gsl_rng_get(r) >> 6;
    return ((double)a * 67108864.0 + (double)b) / 9007199254740992.0;
}

/* Fills the T*V*V entries of m in C order (np.random.rand(T, V, V)), then
 * divides each row by its sum, summed left to right (numpy's sum of fewer
 * than 8 numbers; from 8 on, numpy's pairwise order may differ in the last
 * bit).  A row of V doubles in [0, 1) sums to 0 only with probability
 * 2^-53V; validation would report it. */
void sd_gen_numpy_fill(gsl_rng *r, double *m, size_t T, size_t V)
{
    for (size_t i = 0; i < T * V * V; i++)
        m[i] = S_double(r);
    for (size_t row = 0; row < T * V; row++) {
        double *x = m + row * V, s = 0.0;
        for (size_t b = 0; b < V; b++)
            s += x[b];
        for (size_t b = 0; b < V; b++)
            x[b] /= s;
    }
}

int sd_gen_numpy_check(const sd_gen_params *gp, sd_error *err)
{
    if (gp->alpha != SD_GEN_DEFAULT_ALPHA || gp->mix != SD_GEN_DEFAULT_MIX)
        return sd_error_set(err, SD_EUSAGE, "--alpha/--mix do not apply to --rng numpy-mt19937 "
                                            "(rows are uniform draws normalised by their sums)");
    if (gp->seed == 0 || gp->seed > 0xffffffffUL)
        return sd_error_set(err, SD_EUSAGE, "--model-seed %lu: expected 1 to 4294967295 with --rng "
                                            "numpy-mt19937 (GSL's mt19937 replaces seed 0 by 4357, numpy "
                                            "does not)", gp->seed);
    return SD_OK;
}

sd_chain *sd_chain_generate_numpy(const sd_gen_params *gp, sd_error *err)
{
    if (sd_gen_numpy_check(gp, err))
        return NULL;
    sd_chain *c = sd_chain_alloc(gp->V, gp->T, gp->T, gp->T, err);
    if (!c)
        return NULL;
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    if (!r) {
        sd_error_set(err, SD_ENOMEM, "out of memory generating a chain");
        sd_chain_free(c);
        return NULL;
    }
    /* gsl_rng_set = init_genrand(seed) = np.random.seed(seed) for seed != 0 */
    gsl_rng_set(r, gp->seed);
    sd_gen_numpy_fill(r, c->draft, gp->T, gp->V);
    sd_gen_numpy_fill(r, c->target, gp->T, gp->V);
    gsl_rng_free(r);
    for (size_t a = 0; a < gp->V; a++)
        c->init[a] = 1.0 / (double)gp->V;
    if (sd_chain_validate(c, "generated model", err)) {
        sd_chain_free(c);
        return NULL;
    }
    return c;
}
