/* test_iid.c — i.i.d. problems (--p/--q with --T) in the evaluators: the
 * closed form E[N_rej] = T·TV(p, q) (Theorem 1 of Yin et al. 2024 with
 * identical rows) that `eval rejections` uses without building a chain
 * equals the chain evaluator on the same problem, and a vocabulary whose
 * V×V chain could not be stored (V = 10^5: 80 GB) is answered.  Never
 * timing. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/sd_chain.h"
#include "../src/sd_dist.h"
#include "../src/sd_exact.h"
#include "test_exact_util.h"
#include "test_util.h"

/* A random distribution of V entries written as a list file; returns its path. */
static char *S_list(size_t V, unsigned seed, double *out)
{
    srand(seed);
    double s = 0.0;
    for (size_t i = 0; i < V; i++)
        s += out[i] = (i % 5 == 3) ? 0.0 : 1.0 + rand() % 1000;
    size_t cap = V * 32 + 16, len = 0;
    char *text = malloc(cap);
    cr_assert_not_null(text);
    for (size_t i = 0; i < V; i++) {
        out[i] /= s;
        len += (size_t)snprintf(text + len, cap - len, "%s%.17g", i ? "," : "", out[i]);
    }
    char *path = tu_tempfile(text);
    free(text);
    return path;
}

Test(iid, closed_form_equals_the_chain_evaluator)
{
    const size_t V = 40, T = 7;
    double p[40], q[40];
    char *fp = S_list(V, 3, p), *fq = S_list(V, 4, q);
    char args[600];
    snprintf(args, sizeof args, "eval rejections --json --p @%s --q @%s --T %zu", fp, fq, T);
    double cli = tx_cli_number(args, "rejections");
    sd_error err;
    sd_chain *c = sd_chain_from_pq(p, q, V, T, &err);
    cr_assert_not_null(c, "%s", err.msg);
    double rej;
    cr_assert_eq(sd_exact_rejections(c, &rej, &err), SD_OK, "%s", err.msg);
    cr_expect(fabs(cli - rej) <= 1e-12 * rej, "closed form %.17g, chain %.17g", cli, rej);
    cr_expect(fabs(cli - (double)T * sd_dist_tv(p, q, V)) <= 1e-12 * rej);
    sd_chain_free(c);
    remove(fp);
    remove(fq);
    free(fp);
    free(fq);
}

Test(iid, a_vocabulary_whose_chain_cannot_be_stored)
{
    const size_t V = 100000;
    double *p = malloc(V * sizeof *p), *q = malloc(V * sizeof *q);
    char *fp = S_list(V, 5, p), *fq = S_list(V, 6, q);
    char args[600];
    snprintf(args, sizeof args, "eval rejections --json --p @%s --q @%s --T 10000", fp, fq);
    double cli = tx_cli_number(args, "rejections");
    cr_expect(fabs(cli - 1e4 * sd_dist_tv(p, q, V)) <= 1e-9 * cli, "%.17g", cli);
    remove(fp);
    remove(fq);
    free(fp);
    free(fq);
    free(p);
    free(q);
}
