/* test_util.c — see test_util.h. */
#include "test_util.h"

#include <criterion/criterion.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <jansson.h>

#include "../sims/engine/sd_check.h"
#include "../sims/engine/sd_params.h"
#include "../sims/engine/sd_sim.h"
#include "../sims/verifiers/sd_token.h"
#include "../src/sd_chain.h"
#include "../src/sd_exact.h"
#include "../src/sd_dist.h"
#include "../src/sd_rngbuf.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char *S_slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return strdup("");
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + len, 1, cap - len - 1, f)) > 0) {
        len += got;
        if (cap - len - 1 == 0) {
            char *nb = realloc(buf, cap *= 2);
            if (!nb) {
                free(buf);
                buf = NULL;
            } else
                buf = nb;
        }
    }
    fclose(f);
    if (buf)
        buf[len] = '\0';
    return buf;
}

int tu_run(const char *args, char **out, char **err)
{
    const char *bin = getenv("SIMDEC_BIN");
    if (!bin || !*bin)
        bin = "./simdec";
    char o[] = "/tmp/simdec-test-outXXXXXX", e[] = "/tmp/simdec-test-errXXXXXX";
    int fo = mkstemp(o), fe = mkstemp(e);
    if (fo >= 0)
        close(fo);
    if (fe >= 0)
        close(fe);
    size_t len = strlen(bin) + strlen(args) + strlen(o) + strlen(e) + 32;
    char *cmd = malloc(len);
    snprintf(cmd, len, "%s %s >%s 2>%s </dev/null", bin, args, o, e);
    int st = system(cmd);
    free(cmd);
    if (out)
        *out = S_slurp(o);
    if (err)
        *err = S_slurp(e);
    unlink(o);
    unlink(e);
    if (st == -1)
        return -1;
    if (WIFEXITED(st))
        return WEXITSTATUS(st);
    if (WIFSIGNALED(st))
        return 128 + WTERMSIG(st);
    return -1;
}

char *tu_slurp(const char *path)
{
    return S_slurp(path);
}

char *tu_tempfile(const char *text)
{
    char path[] = "/tmp/simdec-test-fileXXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        return NULL;
    size_t n = strlen(text);
    ssize_t w = write(fd, text, n);
    close(fd);
    if (w < 0 || (size_t)w != n)
        return NULL;
    return strdup(path);
}

int tu_contains(const char *hay, const char *needle)
{
    return hay && needle && strstr(hay, needle) != NULL;
}

void tu_par(sd_params *par, const char *name, double x)
{
    const sd_verifier_type *vt;
    for (size_t i = 0; (vt = sd_verifier_at(i)) != NULL; i++) {
        const sd_param_decl *d = sd_params_decl(vt, name, NULL);
        if (d) {
            sd_params_store(par, d, x);
            return;
        }
    }
}

double tu_par_get(const sd_params *par, const char *name)
{
    const sd_verifier_type *vt;
    for (size_t i = 0; (vt = sd_verifier_at(i)) != NULL; i++) {
        const sd_param_decl *d = sd_params_decl(vt, name, NULL);
        if (d)
            return sd_params_value(par, d);
    }
    return 0.0;
}

void tu_vpar(sd_params *par, const sd_verifier_type *vt, const char *name, double x)
{
    const sd_param_decl *d = sd_params_decl(vt, name, NULL);
    if (d)
        sd_params_store(par, d, x);
}

const sd_verifier_type *tu_setup(sd_params *par, const tu_conf *cf)
{
    const sd_verifier_type *vt = sd_verifier_find(cf->algo);
    cr_assert_not_null(vt, "%s", cf->algo);
    sd_params_defaults(par, vt);
    for (int i = 0; i < 2; i++)
        if (cf->name[i])
            tu_vpar(par, vt, cf->name[i], cf->value[i]);
    return vt;
}

sd_chain *tu_chain(size_t V, size_t T, unsigned long seed)
{
    return tu_chain_alpha(V, T, seed, SD_GEN_DEFAULT_ALPHA);
}

sd_chain *tu_chain_alpha(size_t V, size_t T, unsigned long seed, double alpha)
{
    sd_gen_params gp;
    sd_gen_defaults(&gp);
    gp.V = V;
    gp.T = T;
    gp.seed = seed;
    gp.alpha = alpha;
    sd_chain *c = sd_chain_generate(&gp, NULL);
    cr_assert_not_null(c, "tu_chain_alpha(%zu, %zu, %lu, %g)", V, T, seed, alpha);
    return c;
}

sd_chain *tu_zero3_chain(void)
{
    const char *txt = "{\"format\":\"simdec-chain-1\",\"vocab\":3,\"horizon\":3,"
                      "\"init\":[0.7,0.3,0],"
                      "\"draft\":[[[1,0,0],[0.5,0.5,0],[0,0,1]],[[0.2,0.8,0],[0,1,0],[0.3,0.3,0.4]],[[0,0,1],[1,0,0],[0.1,0.1,0.8]]],"
                      "\"target\":[[[0,1,0],[0.5,0.5,0],[0,0.5,0.5]],[[0.2,0.8,0],[0,0,1],[1,0,0]],[[0,0.5,0.5],[0.3,0.3,0.4],[0.1,0.1,0.8]]]}";
    sd_chain *c = NULL;
    cr_assert_eq(sd_chain_load_string(txt, "mem", &c, NULL), SD_OK);
    return c;
}

void tu_token_vs_exact(const sd_chain *c, size_t gamma, uint64_t seed, uint64_t trials)
{
    sd_params par;
    sd_params_defaults(&par, NULL);
    par.gamma = gamma;
    sd_sim_opts so = {.seed = seed, .trials = trials};
    sd_sim_result r;
    sd_error e;
    cr_assert_eq(sd_sim_run(&sd_verifier_token, c, &par, &so, &r, &e), SD_OK, "%s", e.msg);
    cr_assert_str_eq(r.kernel, SD_SIM_KERNEL_TOKEN);
    double rej, calls;
    cr_assert_eq(sd_exact_token(c, gamma, &rej, &calls, &e), SD_OK, "%s", e.msg);
    double se = sd_welford_stderr(&r.rejections), sc = sd_welford_stderr(&r.target_calls);
    cr_expect(fabs(r.rejections.mean - rej) < 4.0 * se || (se == 0.0 && r.rejections.mean == rej),
              "V=%zu T=%zu gamma %zu: rejections %.6f vs exact %.6f (se %.6f)", c->V, c->T, gamma,
              r.rejections.mean, rej, se);
    cr_expect(fabs(r.target_calls.mean - calls) < 4.0 * sc || (sc == 0.0 && fabs(r.target_calls.mean - calls) < 1e-12),
              "V=%zu T=%zu gamma %zu: calls %.6f vs exact %.6f (se %.6f)", c->V, c->T, gamma,
              r.target_calls.mean, calls, sc);
    sd_sim_result_free(&r);
}

sd_chain *tu_zero_chain(size_t V, size_t T, unsigned long seed)
{
    sd_chain *c = tu_chain(V, T, seed);
    if (!c)
        return NULL;
    for (size_t r = 0; r < c->target_steps * V; r++) {
        c->target[r * V + V - 1] = 0.0;
        sd_dist_normalise(c->target + r * V, V);
    }
    for (size_t r = 0; r < c->draft_steps * V; r++) {
        c->draft[r * V] = 0.0;
        sd_dist_normalise(c->draft + r * V, V);
    }
    if (sd_chain_validate(c, "zero chain", NULL)) {
        sd_chain_free(c);
        return NULL;
    }
    return c;
}

/* The next line of *s that does not name "seconds" or "threads" ("" at the end). */
static const char *S_next_result_line(const char **s, size_t *len)
{
    for (;;) {
        const char *l = *s;
        if (!*l) {
            *len = 0;
            return l;
        }
        const char *e = strchr(l, '\n');
        size_t n = e ? (size_t)(e - l) + 1 : strlen(l);
        *s = l + n;
        char buf[512];
        snprintf(buf, sizeof buf, "%.*s", (int)(n < 511 ? n : 511), l);
        if (!strstr(buf, "\"seconds\"") && !strstr(buf, "\"threads\"")) {
            *len = n;
            return l;
        }
    }
}

int tu_same_results(const char *a, const char *b)
{
    if (!a || !b)
        return 0;
    for (;;) {
        size_t na, nb;
        const char *la = S_next_result_line(&a, &na), *lb = S_next_result_line(&b, &nb);
        if (na != nb || memcmp(la, lb, na) != 0)
            return 0;
        if (na == 0)
            return 1;
    }
}

void tu_dist(gsl_rng *r, double *x, size_t V, double alpha, double zf)
{
    double a[16];
    for (size_t i = 0; i < 16; i++)
        a[i] = alpha;
    gsl_ran_dirichlet(r, V, a, x);
    int any = 0;
    for (size_t i = 0; i < V; i++) {
        if (gsl_rng_uniform(r) < zf)
            x[i] = 0.0;
        any |= x[i] > 0;
    }
    if (!any)
        x[gsl_rng_uniform_int(r, V)] = 1.0;
    sd_dist_normalise(x, V);
}

sd_chain *tu_random_chain(gsl_rng *r, size_t V, size_t T, double alpha, double zf)
{
    sd_chain *c = sd_chain_alloc(V, T, T, T, NULL);
    if (!c)
        return NULL;
    tu_dist(r, c->init, V, alpha, 0.0);
    for (size_t i = 0; i < T * V; i++) {
        tu_dist(r, c->draft + i * V, V, alpha, zf);
        tu_dist(r, c->target + i * V, V, alpha, zf);
    }
    return c;
}

sd_check_result tu_check_run(const sd_verifier_type *vt, const sd_chain *c, const sd_params *par, uint64_t seed,
                             uint64_t trials, size_t L)
{
    sd_check_opts o;
    sd_check_defaults(&o);
    o.seed = seed;
    o.trials = trials;
    o.L = L;
    sd_check_result r;
    sd_error err;
    cr_assert_eq(sd_check_run(vt, c, par, &o, &r, &err), SD_OK, "%s: %s", vt->name, err.msg);
    return r;
}

int tu_check(const sd_verifier_type *vt, const sd_params *par, const sd_chain *c, uint64_t seed, uint64_t trials,
             size_t L, double *pv)
{
    sd_check_result r = tu_check_run(vt, c, par, seed, trials, L);
    int ok = r.unbiased;
    *pv = r.chi.p_value;
    sd_check_result_free(&r);
    return ok;
}

json_t *tu_run_json(const char *args, char **out)
{
    int st = tu_run(args, out, NULL);
    cr_assert_eq(st, 0, "'%s': exit %d; stdout: %s", args, st, *out);
    json_t *j = json_loads(*out, 0, NULL);
    cr_assert_not_null(j, "%s", *out);
    return j;
}

void tu_expect(const char *args, int code, const char *fragment)
{
    char *out, *err;
    int st = tu_run(args, &out, &err);
    cr_expect_eq(st, code, "'%s': exit %d, expected %d; stderr: %s", args, st, code, err);
    if (fragment)
        cr_expect(tu_contains(err, fragment), "'%s': stderr '%s' lacks '%s'", args, err, fragment);
    if (code != 0) {
        cr_expect(tu_contains(err, "simdec: "), "'%s': message not prefixed: %s", args, err);
        cr_expect_eq(out[0], '\0', "'%s': printed on stdout despite failing: %s", args, out);
    }
    free(out);
    free(err);
}

void tu_same_sim_scalar(const sd_verifier_type *vt, const sd_chain *c, const sd_params *par, const sd_sim_opts *so,
                        const char *kernel, const char *what)
{
    sd_sim_result a, b;
    sd_rngbuf_cap_isa(-1);
    cr_assert_eq(sd_sim_run(vt, c, par, so, &a, NULL), SD_OK, "%s", what);
    sd_rngbuf_cap_isa(0);
    int rc = sd_sim_run(vt, c, par, so, &b, NULL);
    sd_rngbuf_cap_isa(-1);
    cr_assert_eq(rc, SD_OK, "%s (scalar)", what);
    cr_assert_str_eq(a.kernel, kernel, "%s", what);
    cr_assert_str_eq(b.kernel, kernel, "%s (scalar)", what);
    tu_same_sim(&a, &b, what);
    sd_sim_result_free(&a);
    sd_sim_result_free(&b);
}

void tu_same_sim(const sd_sim_result *a, const sd_sim_result *b, const char *what)
{
    cr_assert_eq(a->trials, b->trials, "%s: trials", what);
    cr_assert_eq(memcmp(&a->rejections, &b->rejections, sizeof a->rejections), 0, "%s: rejections", what);
    cr_assert_eq(memcmp(&a->target_calls, &b->target_calls, sizeof a->target_calls), 0, "%s: calls", what);
    cr_assert_eq(memcmp(&a->accepted, &b->accepted, sizeof a->accepted), 0, "%s: accepted", what);
    cr_assert_eq(memcmp(&a->rejections_rb, &b->rejections_rb, sizeof a->rejections_rb), 0, "%s: rb", what);
    cr_assert_eq(memcmp(a->accept_hist, b->accept_hist, (a->T + 1) * sizeof *a->accept_hist), 0,
                 "%s: histogram", what);
    if (a->pos_counts || b->pos_counts) {
        cr_assert(a->pos_counts && b->pos_counts, "%s: positions kept by one run only", what);
        cr_assert_eq(memcmp(a->pos_counts, b->pos_counts, a->T * a->V * sizeof *a->pos_counts), 0,
                     "%s: positions", what);
    }
}
