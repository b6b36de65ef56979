/* sd_gen.c — random nonstationary chains for `simdec gen` (sd_chain.h). */
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>

#include "sd_chain.h"

void sd_gen_defaults(sd_gen_params *gp)
{
    gp->V = SD_GEN_DEFAULT_V;
    gp->T = SD_GEN_DEFAULT_T;
    gp->seed = SD_GEN_DEFAULT_SEED;
    gp->alpha = SD_GEN_DEFAULT_ALPHA;
    gp->mix = SD_GEN_DEFAULT_MIX;
    gp->rng = SD_GEN_DIRICHLET;
}

sd_chain *sd_chain_generate(const sd_gen_params *gp, sd_error *err)
{
    if (gp->rng == SD_GEN_NUMPY_MT19937)
        return sd_chain_generate_numpy(gp, err);
    sd_gsl_quiet();
    if (!(gp->alpha > 0.0) || !isfinite(gp->alpha)) {
        sd_error_set(err, SD_EUSAGE, "--alpha %g: expected a finite number > 0", gp->alpha);
        return NULL;
    }
    if (!(gp->mix >= 0.0 && gp->mix <= 1.0)) {
        sd_error_set(err, SD_EUSAGE, "--mix %g: expected a number in [0, 1]", gp->mix);
        return NULL;
    }
    sd_chain *c = sd_chain_alloc(gp->V, gp->T, gp->T, gp->T, err);
    if (!c)
        return NULL;
    size_t V = gp->V;
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    double *alpha = malloc(V * sizeof *alpha), *fresh = malloc(V * sizeof *fresh);
    if (!r || !alpha || !fresh) {
        sd_error_set(err, SD_ENOMEM, "out of memory generating a chain");
        goto fail;
    }
    gsl_rng_set(r, gp->seed);
    for (size_t i = 0; i < V; i++) {
        alpha[i] = gp->alpha;
        c->init[i] = 1.0 / (double)V;
    }
    /* Row by row, step by step: draft ~ Dirichlet(alpha); target mixes it
     * with a fresh Dirichlet(alpha) row. */
    for (size_t t = 0; t < gp->T; t++)
        for (size_t a = 0; a < V; a++) {
            double *p = c->draft + (t * V + a) * V, *q = c->target + (t * V + a) * V;
            gsl_ran_dirichlet(r, V, alpha, p);
            gsl_ran_dirichlet(r, V, alpha, fresh);
            for (size_t b = 0; b < V; b++)
                q[b] = (1.0 - gp->mix) * p[b] + gp->mix * fresh[b];
        }
    /* A Dirichlet row with tiny alpha may be all zeros after underflow
     * (gsl then returns NaNs); validation reports that as bad data. */
    if (sd_chain_validate(c, "generated model", err)) {
        sd_error_prefix(err, "--alpha %g too small for a representable chain", gp->alpha);
        goto fail;
    }
    gsl_rng_free(r);
    free(alpha);
    free(fresh);
    return c;
fail:
    gsl_rng_free(r);
    free(alpha);
    free(fresh);
    sd_chain_free(c);
    return NULL;
}
