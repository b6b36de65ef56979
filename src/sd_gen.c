/* sd_gen.c — random nonstationary chains for `simdec gen` (sd_chain.h),
 * stored whole or streamed step by step. */
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sd_chain.h"
#include "sd_gen_numpy.h"

void sd_gen_defaults(sd_gen_params *gp)
{
    gp->V = SD_GEN_DEFAULT_V;
    gp->T = SD_GEN_DEFAULT_T;
    gp->seed = SD_GEN_DEFAULT_SEED;
    gp->alpha = SD_GEN_DEFAULT_ALPHA;
    gp->mix = SD_GEN_DEFAULT_MIX;
    gp->rng = SD_GEN_DIRICHLET;
}

size_t sd_gen_chain_bytes(size_t V, size_t T)
{
    if (V == 0 || V > SIZE_MAX / V || T > SIZE_MAX / 16 / (V * V))
        return SIZE_MAX;
    size_t mats = 2 * T * V * V;
    return mats > SIZE_MAX / 8 - V ? SIZE_MAX : (mats + V) * sizeof(double);
}

struct sd_gen_stream {
    sd_gen_params gp;
    size_t t;        /* steps produced so far */
    gsl_rng *r;      /* Dirichlet: the one stream; numpy: the draft rows' */
    gsl_rng *rt;     /* numpy: the target rows' (r advanced by 2·T·V² outputs) */
    double *alpha;   /* [V] Dirichlet parameter */
    double *fresh;   /* [V] the fresh row of q_t(.|a) */
};

void sd_gen_stream_free(sd_gen_stream *g)
{
    if (!g)
        return;
    if (g->r)
        gsl_rng_free(g->r);
    if (g->rt)
        gsl_rng_free(g->rt);
    free(g->alpha);
    free(g->fresh);
    free(g);
}

static int S_check_dirichlet(const sd_gen_params *gp, sd_error *err)
{
    if (!(gp->alpha > 0.0) || !isfinite(gp->alpha))
        return sd_error_set(err, SD_EUSAGE, "--alpha %g: expected a finite number > 0", gp->alpha);
    if (!(gp->mix >= 0.0 && gp->mix <= 1.0))
        return sd_error_set(err, SD_EUSAGE, "--mix %g: expected a number in [0, 1]", gp->mix);
    return SD_OK;
}

int sd_gen_check(const sd_gen_params *gp, sd_error *err)
{
    int rc = gp->rng == SD_GEN_NUMPY_MT19937 ? sd_gen_numpy_check(gp, err) : S_check_dirichlet(gp, err);
    if (rc)
        return rc;
    if (gp->V == 0 || gp->T == 0)
        return sd_error_set(err, SD_EUSAGE, "vocabulary and horizon must be >= 1 (got V=%zu, T=%zu)", gp->V,
                            gp->T);
    if (sd_gen_chain_bytes(gp->V, gp->T) == SIZE_MAX)
        return sd_error_set(err, SD_ETOOBIG, "a chain with vocab %zu and horizon %zu overflows the address "
                                             "space", gp->V, gp->T);
    return SD_OK;
}

int sd_gen_stream_new(const sd_gen_params *gp, sd_gen_stream **out, sd_error *err)
{
    *out = NULL;
    sd_gsl_quiet();
    int rc = sd_gen_check(gp, err);
    if (rc)
        return rc;
    sd_gen_stream *g = calloc(1, sizeof *g);
    if (!g)
        return sd_error_set(err, SD_ENOMEM, "out of memory for a chain generator");
    g->gp = *gp;
    g->r = gsl_rng_alloc(gsl_rng_mt19937);
    g->alpha = malloc(gp->V * sizeof *g->alpha);
    g->fresh = malloc(gp->V * sizeof *g->fresh);
    if (!g->r || !g->alpha || !g->fresh) {
        sd_gen_stream_free(g);
        return sd_error_set(err, SD_ENOMEM, "out of memory for a chain generator");
    }
    gsl_rng_set(g->r, gp->seed);
    for (size_t i = 0; i < gp->V; i++)
        g->alpha[i] = gp->alpha;
    if (gp->rng == SD_GEN_NUMPY_MT19937) {
        /* numpy draws all T·V² draft numbers (two outputs each) before the
         * first target number. */
        if (!(g->rt = gsl_rng_clone(g->r))) {
            sd_gen_stream_free(g);
            return sd_error_set(err, SD_ENOMEM, "out of memory for a chain generator");
        }
        for (size_t i = 0, n = 2 * gp->T * gp->V * gp->V; i < n; i++)
            (void)gsl_rng_get(g->rt);
    }
    *out = g;
    return SD_OK;
}

void sd_gen_stream_init(const sd_gen_stream *g, double *init)
{
    for (size_t i = 0; i < g->gp.V; i++)
        init[i] = 1.0 / (double)g->gp.V;
}

int sd_gen_stream_next(sd_gen_stream *g, double *p, double *q, size_t *t_out, sd_error *err)
{
    const sd_gen_params *gp = &g->gp;
    const size_t V = gp->V, t = g->t + 1;
    if (t > gp->T)
        return sd_error_set(err, SD_EUSAGE, "generated chain: step %zu requested after the horizon %zu", t,
                            gp->T);
    if (gp->rng == SD_GEN_NUMPY_MT19937) {
        sd_gen_numpy_fill(g->r, p, 1, V);
        sd_gen_numpy_fill(g->rt, q, 1, V);
    } else {
        /* Row by row: draft ~ Dirichlet(alpha); target mixes it with a
         * fresh Dirichlet(alpha) row. */
        for (size_t a = 0; a < V; a++) {
            double *pa = p + a * V, *qa = q + a * V;
            gsl_ran_dirichlet(g->r, V, g->alpha, pa);
            gsl_ran_dirichlet(g->r, V, g->alpha, g->fresh);
            for (size_t b = 0; b < V; b++)
                qa[b] = (1.0 - gp->mix) * pa[b] + gp->mix * g->fresh[b];
        }
    }
    /* A Dirichlet row with tiny alpha may be all zeros after underflow
     * (gsl then returns NaNs); validation reports that as bad data. */
    int rc = sd_chain_validate_step(p, V, t, "generated model", "draft", err);
    if (!rc)
        rc = sd_chain_validate_step(q, V, t, "generated model", "target", err);
    if (rc) {
        if (gp->rng != SD_GEN_NUMPY_MT19937)
            sd_error_prefix(err, "--alpha %g too small for a representable chain", gp->alpha);
        return rc;
    }
    g->t = t;
    if (t_out)
        *t_out = t;
    return SD_OK;
}

sd_chain *sd_chain_generate(const sd_gen_params *gp, sd_error *err)
{
    if (gp->rng == SD_GEN_NUMPY_MT19937)
        return sd_chain_generate_numpy(gp, err);
    sd_gen_stream *g = NULL;
    if (sd_gen_stream_new(gp, &g, err))
        return NULL;
    sd_chain *c = sd_chain_alloc(gp->V, gp->T, gp->T, gp->T, err);
    int rc = c ? SD_OK : SD_ENOMEM;
    if (c)
        sd_gen_stream_init(g, c->init);
    /* The stored chain is the stream's steps one after the other. */
    size_t VV = gp->V * gp->V;
    for (size_t s = 0; !rc && s < gp->T; s++)
        rc = sd_gen_stream_next(g, c->draft + s * VV, c->target + s * VV, NULL, err);
    sd_gen_stream_free(g);
    if (rc) {
        sd_chain_free(c);
        return NULL;
    }
    return c;
}
