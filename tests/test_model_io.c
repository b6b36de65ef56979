/* test_model_io.c — the chain model file: write then load is exact,
 * homogeneous and nested forms, malformed models refused with a precise
 * message, horizon truncation; suite model_io. */
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

/* --- model files -------------------------------------------------------- */

static char *S_write_chain(const sd_chain *c)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    cr_assert_eq(sd_chain_write(c, f, NULL), SD_OK);
    fclose(f);
    return buf;
}

Test(model_io, write_then_load_is_exact)
{
    sd_gen_params gp;
    sd_gen_defaults(&gp);
    gp.V = 5;
    gp.T = 6;
    gp.alpha = 0.3;
    sd_chain *c = sd_chain_generate(&gp, NULL), *d = NULL;
    char *text = S_write_chain(c);
    cr_assert_eq(sd_chain_load_string(text, "mem", &d, NULL), SD_OK);
    cr_assert_eq(d->V, 5u);
    cr_assert_eq(d->T, 6u);
    cr_assert_eq(memcmp(c->draft, d->draft, 6 * 25 * sizeof(double)), 0);
    cr_assert_eq(memcmp(c->target, d->target, 6 * 25 * sizeof(double)), 0);
    free(text);
    sd_chain_free(c);
    sd_chain_free(d);
}

Test(model_io, homogeneous_and_renormalised)
{
    /* [V][V] means the same matrix at every step; a row off by 5e-10 is
     * renormalised; an exact zero is kept. */
    const char *txt = "{\"format\":\"simdec-chain-1\",\"vocab\":2,\"horizon\":3,"
                      "\"init\":[1,0],\"draft\":[[0.5,0.5000000005],[1,0]],"
                      "\"target\":[[0,1],[0.25,0.75]]}";
    sd_chain *c = NULL;
    sd_error e;
    cr_assert_eq(sd_chain_load_string(txt, "mem", &c, &e), SD_OK, "%s", e.msg);
    cr_assert_eq(c->draft_steps, 1u);
    cr_assert(fabs(sd_chain_p(c, 3, 0)[0] + sd_chain_p(c, 3, 0)[1] - 1.0) < 1e-15);
    cr_assert_eq(sd_chain_q(c, 2, 0)[0], 0.0);
    /* Theorem 1 by hand: x_0 = 0; step 1 TV(p(.|0), q(.|0)) = 0.5; then
     * x_1 = 1 surely (q(1|0) = 1), TV(p(.|1), q(.|1)) = 0.75 at steps 2, 3
     * ... x_2 ~ q(.|1) = (0.25, 0.75): E TV = 0.25*0.5 + 0.75*0.75. */
    double rej;
    sd_exact_rejections(c, &rej, NULL);
    cr_assert(fabs(rej - (0.5 + 0.75 + (0.25 * 0.5 + 0.75 * 0.75))) < 1e-9, "%.17g", rej);
    sd_chain_free(c);
}

Test(model_io, one_step_nested_equals_flat)
{
    /* horizon 1 written as [T][V][V] = [[[...]]] must not be read as [V][V]
     * (a bug found by an independent implementation's random chains). */
    const char *nested = "{\"format\":\"simdec-chain-1\",\"vocab\":2,\"horizon\":1,\"init\":[0.5,0.5],"
                         "\"draft\":[[[1,0],[0.5,0.5]]],\"target\":[[[0,1],[0.5,0.5]]]}";
    const char *v1 = "{\"format\":\"simdec-chain-1\",\"vocab\":1,\"horizon\":1,\"init\":[1],"
                     "\"draft\":[[[1]]],\"target\":[[1]]}";
    sd_chain *c = NULL;
    sd_error e;
    cr_assert_eq(sd_chain_load_string(nested, "mem", &c, &e), SD_OK, "%s", e.msg);
    double rej;
    sd_exact_rejections(c, &rej, NULL);
    cr_assert(fabs(rej - 0.5) < 1e-15, "%.17g", rej);
    sd_chain_free(c);
    cr_assert_eq(sd_chain_load_string(v1, "mem", &c, &e), SD_OK, "%s", e.msg);
    sd_exact_rejections(c, &rej, NULL);
    cr_assert_eq(rej, 0.0);
    sd_chain_free(c);
}

/* Each malformed model: the status and a fragment the message must hold. */
typedef struct {
    const char *json;
    sd_status code;
    const char *fragment;
} S_bad;

#define HDR "{\"format\":\"simdec-chain-1\","

static const S_bad S_bad_models[] = {
    {"{\"format\":\"simdec-chain-1\",", SD_EDATA, "mem:1:"},
    {"[1,2]", SD_EDATA, "expected a JSON object"},
    {"{\"vocab\":2}", SD_EDATA, "missing field \"format\""},
    {"{\"format\":\"other\",\"vocab\":2}", SD_EDATA, "\"format\" must be"},
    {HDR "\"horizon\":1,\"init\":[1,0],\"draft\":[[1,0],[0,1]],\"target\":[[1,0],[0,1]]}", SD_EDATA, "missing field \"vocab\""},
    {HDR "\"vocab\":2.5,\"horizon\":1,\"init\":[1,0],\"draft\":[[1,0],[0,1]],\"target\":[[1,0],[0,1]]}", SD_EDATA, "\"vocab\" is 2.5"},
    {HDR "\"vocab\":0,\"horizon\":1,\"init\":[1,0],\"draft\":[[1,0],[0,1]],\"target\":[[1,0],[0,1]]}", SD_EDATA, "\"vocab\" is 0"},
    {HDR "\"vocab\":2,\"horizon\":-3,\"init\":[1,0],\"draft\":[[1,0],[0,1]],\"target\":[[1,0],[0,1]]}", SD_EDATA, "\"horizon\" is -3"},
    {HDR "\"vocab\":2,\"horizon\":1,\"draft\":[[1,0],[0,1]],\"target\":[[1,0],[0,1]]}", SD_EDATA, "missing field \"init\""},
    {HDR "\"vocab\":2,\"horizon\":1,\"init\":[1,0,0],\"draft\":[[1,0],[0,1]],\"target\":[[1,0],[0,1]]}", SD_EDATA, "init has 3 entries; expected 2"},
    {HDR "\"vocab\":2,\"horizon\":1,\"init\":[1,0],\"draft\":[[1,0],[0,1]],\"target\":[[1.5,-0.5],[0,1]]}", SD_EDATA, "target row 0 entry 1 is -0.5"},
    {HDR "\"vocab\":2,\"horizon\":1,\"init\":[1,0],\"draft\":[[0.5,0.6],[0,1]],\"target\":[[1,0],[0,1]]}", SD_EDATA, "draft row 0 sums to 1.1"},
    {HDR "\"vocab\":2,\"horizon\":2,\"init\":[1,0],\"draft\":[[[1,0],[0,1]]],\"target\":[[1,0],[0,1]]}", SD_EDATA, "\"draft\" has 1 steps; expected 2"},
    {HDR "\"vocab\":2,\"horizon\":2,\"init\":[1,0],\"draft\":[[1,0],[0,1]],\"target\":[[[1,0],[0,1]],[[1,0],[0.3,0.3]]]}", SD_EDATA, "target step 2 row 1 sums to 0.6"},
    {HDR "\"vocab\":2,\"horizon\":1,\"init\":[1,0],\"draft\":[[1,0],[0,\"x\"]],\"target\":[[1,0],[0,1]]}", SD_EDATA, "draft row 1 entry 1 is not a number"},
    {HDR "\"vocab\":2,\"vocab\":2,\"horizon\":1}", SD_EDATA, "duplicate"},
    {HDR "\"vocab\":2,\"horizon\":1,\"init\":[1e400,0]}", SD_EDATA, "mem:1:"},
    {HDR "\"vocab\":2,\"horizon\":1,\"init\":[NaN,0]}", SD_EDATA, "mem:1:"},
    {HDR "\"vocab\":3000000,\"horizon\":2,\"init\":[1],\"draft\":[[1]],\"target\":[[1]]}", SD_EDATA, "expected 3000000"},
    {HDR "\"vocab\":1,\"horizon\":1,\"init\":[1],\"draft\":[[[1]]],\"target\":[[1]],\"x\":0}", SD_OK, ""},
    {HDR "\"vocab\":1,\"horizon\":1000000000000,\"init\":[1],\"draft\":[[1]],\"target\":[[1]]}", SD_ETOOBIG, "horizons up to 16777216"},
    {HDR "\"vocab\":3,\"horizon\":1,\"init\":[1,0,0],\"draft\":[[1,0,0],[0,1],[0,0,1]],\"target\":[[1,0,0],[0,1,0],[0,0,1]]}", SD_EDATA, "draft row 1 must be an array of 3"},
    {"", SD_EDATA, "mem:1:"},
};

Test(model_io, malformed_models_are_refused_with_a_precise_message)
{
    for (size_t i = 0; i < sizeof S_bad_models / sizeof *S_bad_models; i++) {
        sd_chain *c = NULL;
        sd_error e;
        sd_error_clear(&e);
        int rc = sd_chain_load_string(S_bad_models[i].json, "mem", &c, &e);
        cr_expect_eq(rc, (int)S_bad_models[i].code, "case %zu: status %d (%s)", i, rc, e.msg);
        cr_expect(strstr(e.msg, S_bad_models[i].fragment) != NULL, "case %zu: message '%s' lacks '%s'", i,
                  e.msg, S_bad_models[i].fragment);
        if (S_bad_models[i].code != SD_OK)
            cr_expect_null(c);
        sd_chain_free(c);
    }
}

Test(model_io, truncate_horizon)
{
    sd_gen_params gp;
    sd_gen_defaults(&gp);
    sd_chain *c = sd_chain_generate(&gp, NULL);
    sd_error e;
    cr_assert_eq(sd_chain_truncate(c, 60, &e), SD_EUSAGE);
    cr_assert(strstr(e.msg, "horizon is 50") != NULL, "%s", e.msg);
    double full, part;
    sd_exact_rejections(c, &full, NULL);
    cr_assert_eq(sd_chain_truncate(c, 20, &e), SD_OK);
    sd_exact_rejections(c, &part, NULL);
    cr_assert(part < full && part > 0.0);
    /* horizons 1..T: 0 is refused, 1 (one token) is a horizon */
    cr_assert_eq(sd_chain_truncate(c, 0, &e), SD_EUSAGE);
    cr_assert(strstr(e.msg, "expected 1..20") != NULL, "%s", e.msg);
    cr_assert_eq(sd_chain_truncate(c, 1, &e), SD_OK, "%s", e.msg);
    cr_assert_eq(c->T, 1u);
    sd_chain_free(c);
    /* A homogeneous chain (one matrix each) keeps its one matrix: cut to
     * T = 3 it is the chain built with T = 3 (Theorem 1: the same sum). */
    const double p[3] = {0.5, 0.3, 0.2}, q[3] = {0.2, 0.3, 0.5};
    sd_chain *h = sd_chain_from_pq(p, q, 3, 8, &e), *h3 = sd_chain_from_pq(p, q, 3, 3, &e);
    cr_assert(h && h3);
    cr_assert_eq(sd_chain_truncate(h, 3, &e), SD_OK, "%s", e.msg);
    cr_expect(h->draft_steps == 1 && h->target_steps == 1, "steps %zu %zu", h->draft_steps, h->target_steps);
    sd_exact_rejections(h, &part, NULL);
    sd_exact_rejections(h3, &full, NULL);
    cr_expect_eq(part, full, "%.17g %.17g", part, full);
    sd_chain_free(h);
    sd_chain_free(h3);
}
