/* sd_trace.c — exact expectations given logged sequences (sd_trace.h). */
#include "sd_trace.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* One point's forward pass over one sequence. */
typedef struct {
    const sd_verifier_type *vt;
    const sd_trace_type *tt;
    const sd_params *par;
    void *plan;
    size_t S, s0, T, G;
    double *m, *rl, *nm, *nrl; /* [(T+2)·S] masses and real states by (start n, state) */
    double *base;              /* the one allocation behind them (they are swapped) */
    double *go, *cache;        /* [S], [(G+1)·S·S] */
    unsigned char *valid;      /* [(G+1)·S] */
    sd_stream rng;             /* the current sequence's stream */
    int estimate;
    size_t laws, estimated;
} S_ctx;

double sd_trace_default_tol(size_t size)
{
    return size >= 8 ? 1e-9 : size >= 4 ? 1e-3 : 1e-2;
}

int sd_trace_supported(const sd_verifier_type *vt, const sd_params *par, int have_rows, sd_error *err)
{
    if (!vt->trace)
        return sd_error_set(err, SD_EUSAGE, "%s has no law given a logged output (its iterations depend on "
                                            "rows off the logged path, or it carries state across "
                                            "iterations); traces support the verifiers that declare one",
                            vt->name);
    if (!sd_verifier_claims_lossless(vt, par))
        return sd_error_set(err, SD_EUSAGE, "%s is not lossless at these parameters: its output does not "
                                            "follow the target, so a target-sampled trace is not a sample "
                                            "of it", vt->name);
    if (vt->trace->needs_rows && !have_rows)
        return sd_error_set(err, SD_EUSAGE, "%s needs the full rows along the path (--draft and --target); "
                                            "--ratios suffice for token and block only", vt->name);
    return SD_OK;
}

static void S_ctx_free(S_ctx *c)
{
    if (c->tt && c->tt->plan_free)
        c->tt->plan_free(c->plan);
    free(c->base);
    free(c->go);
    free(c->valid);
    memset(c, 0, sizeof *c);
}

static double S_ctx_bytes(size_t T, size_t V, size_t S, size_t G)
{
    return 8.0 * (4.0 * (double)(T + 2) * (double)S + (double)S + (double)(G + 1) * S * S) + (double)(G + 1) * S +
           8.0 * ((double)S + 4.0) * (double)V; /* the plan's position-law scratch, about */
}

static int S_ctx_new(S_ctx *c, const sd_trace_point *pt, size_t T, size_t V, sd_error *err)
{
    memset(c, 0, sizeof *c);
    c->vt = pt->vt;
    c->tt = pt->vt->trace;
    c->par = &pt->par;
    c->T = T;
    c->estimate = pt->estimate;
    sd_stream_init(&c->rng, pt->seed, 0);
    int rc = c->tt->plan_new(&c->plan, pt->vt, &pt->par, V, &c->S, &c->s0, err);
    if (rc) {
        c->tt = NULL;
        return rc;
    }
    if (c->S < 1 || c->s0 >= c->S || (c->tt->real_state && c->S != 1)) {
        S_ctx_free(c);
        return sd_error_set(err, SD_EINTERNAL, "%s: its trace law declares %zu states, start %zu", pt->vt->name,
                            c->S, c->s0);
    }
    c->G = c->tt->draft_len(c->plan, &pt->par, T, 1);
    size_t S = c->S, cells = (T + 2) * S;
    c->base = c->m = calloc(4 * cells, sizeof *c->m);
    c->go = calloc(S + (c->G + 1) * S * S, sizeof *c->go);
    c->valid = calloc((c->G + 1) * S, 1);
    if (!c->m || !c->go || !c->valid) {
        S_ctx_free(c);
        return sd_error_set(err, SD_ENOMEM, "out of memory");
    }
    c->rl = c->m + cells;
    c->nm = c->rl + cells;
    c->nrl = c->nm + cells;
    c->cache = c->go + S;
    return SD_OK;
}

/* The forward pass (sd_trace.h) on one sequence. */
static int S_run(S_ctx *c, size_t V, const size_t *x, const double *p, const double *q, const double *r,
                 double *rej, double *calls, double *tried, double *accepted, sd_error *err)
{
    size_t T = c->T, S = c->S, cells = (T + 2) * S;
    const sd_trace_type *tt = c->tt;
    memset(c->m, 0, 2 * cells * sizeof *c->m);
    double R = 0.0, C = 0.0, fresh = 1.0;
    size_t lo = 1;
    for (size_t t = 1; t <= T; t++) {
        c->m[t * S + c->s0] += fresh;
        c->rl[t * S + c->s0] = 1.0;
        fresh = 0.0;
        sd_trace_pos pos = {.V = V, .rng = &c->rng, .estimate = c->estimate, .estimated = &c->estimated};
        if (p) {
            pos.p = p + (t - 1) * V;
            pos.q = q + (t - 1) * V;
            pos.y = x[t - 1];
            pos.r = pos.p[pos.y] / pos.q[pos.y];
        } else
            pos.r = r[t - 1];
        if (!tt->real_state)
            memset(c->valid, 0, (c->G + 1) * S);
        memset(c->nm + lo * S, 0, (t + 1 - lo + 1) * S * sizeof *c->nm);
        size_t nlo = t + 1;
        for (size_t n = lo; n <= t; n++) {
            size_t G = tt->draft_len(c->plan, c->par, T, n), i = t - n;
            for (size_t s = 0; s < S; s++) {
                double a = c->m[n * S + s];
                if (!(a > 0.0))
                    continue;
                if (i >= G) { /* the bonus token: the iteration ends at t */
                    C += a;
                    fresh += a;
                    continue;
                }
                const double *go;
                double real = c->rl[n * S + s];
                int rc;
                if (tt->real_state) {
                    rc = tt->go(c->plan, &pos, i, s, &real, c->go, err);
                    c->laws++;
                    go = c->go;
                } else {
                    size_t key = (tt->by_depth ? i : 0) * S + s;
                    double *slot = c->cache + key * S;
                    rc = SD_OK;
                    if (!c->valid[key]) {
                        rc = tt->go(c->plan, &pos, i, s, &real, slot, err);
                        c->valid[key] = 1;
                        c->laws++;
                    }
                    go = slot;
                }
                if (rc)
                    return rc;
                double g = 0.0;
                for (size_t s2 = 0; s2 < S; s2++) {
                    if (!(go[s2] >= -1e-12))
                        return sd_error_set(err, SD_EDATA, "%s: its law given the output gives probability "
                                                           "%.17g at position %zu (expected one in [0, 1])",
                                            c->vt->name, go[s2], t);
                    g += go[s2];
                }
                if (!(g <= 1.0 + 1e-9))
                    return sd_error_set(err, SD_EDATA, "%s: its law given the output accepts with probability "
                                                       "%.17g at position %zu (expected at most 1)",
                                        c->vt->name, g, t);
                if (g > 1.0)
                    g = 1.0;
                if (tried && i < c->G) {
                    tried[i] += a;
                    accepted[i] += a * g;
                }
                double out = a * (1.0 - g);
                R += out;
                C += out;
                fresh += out;
                if (t == T) { /* open at the horizon: it ends there */
                    C += a * g;
                    continue;
                }
                for (size_t s2 = 0; s2 < S; s2++)
                    if (go[s2] > 0.0) {
                        c->nm[n * S + s2] += a * go[s2];
                        c->nrl[n * S + s2] = real;
                        if (n < nlo)
                            nlo = n;
                    }
            }
        }
        double *tmp = c->m;
        c->m = c->nm;
        c->nm = tmp;
        tmp = c->rl;
        c->rl = c->nrl;
        c->nrl = tmp;
        memset(c->m + (t + 1) * S, 0, S * sizeof *c->m);
        lo = nlo;
    }
    *rej = R;
    *calls = C;
    return SD_OK;
}

static int S_sequence(const sd_trace_point *pt, size_t T, size_t V, const size_t *x, const double *p,
                      const double *q, const double *r, double *rej, double *calls, double *tried,
                      double *accepted, size_t *estimated, sd_error *err)
{
    int rc = sd_trace_supported(pt->vt, &pt->par, p != NULL, err);
    if (rc)
        return rc;
    S_ctx c;
    rc = S_ctx_new(&c, pt, T, V, err);
    if (rc)
        return rc;
    rc = S_run(&c, V, x, p, q, r, rej, calls, tried, accepted, err);
    if (estimated)
        *estimated = c.estimated;
    S_ctx_free(&c);
    return rc;
}

int sd_trace_sequence(const sd_trace_point *pt, size_t T, size_t V, const size_t *x, const double *p,
                      const double *q, const double *r, double *rej, double *calls, double *tried,
                      double *accepted, sd_error *err)
{
    return S_sequence(pt, T, V, x, p, q, r, rej, calls, tried, accepted, NULL, err);
}

int sd_trace_sequence_est(const sd_trace_point *pt, size_t T, size_t V, const size_t *x, const double *p,
                          const double *q, const double *r, double *rej, double *calls, size_t *estimated,
                          sd_error *err)
{
    return S_sequence(pt, T, V, x, p, q, r, rej, calls, NULL, NULL, estimated, err);
}

static const char *S_shape_str(const sd_npy *a, char *buf, size_t len)
{
    size_t n = (size_t)snprintf(buf, len, "(");
    for (size_t i = 0; i < a->ndim && n < len; i++)
        n += (size_t)snprintf(buf + n, len - n, "%s%zu", i ? ", " : "", a->shape[i]);
    if (n < len)
        snprintf(buf + n, len - n, ")");
    return buf;
}

int sd_trace_check(const sd_trace_input *in, sd_trace_shape *sh, sd_error *err)
{
    char b1[128], b2[32];
    const sd_npy *tk = in->tokens;
    memset(sh, 0, sizeof *sh);
    if (!tk)
        return sd_error_set(err, SD_EUSAGE, "no tokens given (--tokens FILE.npy)");
    if ((in->draft != NULL) != (in->target != NULL))
        return sd_error_set(err, SD_EUSAGE, "--draft and --target go together");
    if (!in->draft && !in->ratios)
        return sd_error_set(err, SD_EUSAGE, "give either --draft and --target (rows) or --ratios");
    if (in->draft && in->ratios)
        return sd_error_set(err, SD_EUSAGE, "give either --draft and --target (rows) or --ratios, not both");
    if (tk->kind == SD_NPY_FLOAT || tk->kind == SD_NPY_BOOL)
        return sd_error_set(err, SD_EDATA, "%s: dtype %s; expected integer tokens (int8..int64, uint8..uint64)",
                            in->tokens_name, sd_npy_type_name(tk, b2, sizeof b2));
    if (tk->ndim != 2 || tk->shape[0] < 1 || tk->shape[1] < 1)
        return sd_error_set(err, SD_EDATA, "%s: shape %s; expected (n, T) with n, T >= 1: n sequences of T tokens",
                            in->tokens_name, S_shape_str(tk, b1, sizeof b1));
    sh->n = tk->shape[0];
    sh->T = tk->shape[1];
    if (sh->T > SD_CHAIN_MAX_HORIZON)
        return sd_error_set(err, SD_EDATA, "%s: T = %zu tokens per sequence; at most %zu", in->tokens_name, sh->T,
                            (size_t)SD_CHAIN_MAX_HORIZON);
    const sd_npy *rows[2] = {in->draft, in->target};
    const char *names[2] = {in->draft_name, in->target_name};
    for (int j = 0; j < 2 && in->draft; j++) {
        const sd_npy *a = rows[j];
        if (a->kind != SD_NPY_FLOAT)
            return sd_error_set(err, SD_EDATA, "%s: dtype %s; expected float16, float32 or float64 rows", names[j],
                                sd_npy_type_name(a, b2, sizeof b2));
        if (a->ndim != 3 || a->shape[0] != sh->n || a->shape[1] != sh->T || a->shape[2] < 1)
            return sd_error_set(err, SD_EDATA, "%s: shape %s; expected (%zu, %zu, V): the rows at each position "
                                               "of the %zu sequences of %s",
                                names[j], S_shape_str(a, b1, sizeof b1), sh->n, sh->T, sh->n, in->tokens_name);
        if (a->shape[2] > ((size_t)1 << 20))
            return sd_error_set(err, SD_EDATA, "%s: V = %zu; at most 2^20 = 1048576", names[j], a->shape[2]);
    }
    if (in->draft) {
        if (in->draft->shape[2] != in->target->shape[2])
            return sd_error_set(err, SD_EDATA, "%s: V = %zu but %s has V = %zu; expected the same vocabulary",
                                in->target_name, in->target->shape[2], in->draft_name, in->draft->shape[2]);
        sh->V = in->draft->shape[2];
    }
    if (in->ratios) {
        const sd_npy *a = in->ratios;
        if (a->kind != SD_NPY_FLOAT)
            return sd_error_set(err, SD_EDATA, "%s: dtype %s; expected float16, float32 or float64 ratios",
                                in->ratios_name, sd_npy_type_name(a, b2, sizeof b2));
        if (a->ndim != 2 || a->shape[0] != sh->n || a->shape[1] != sh->T)
            return sd_error_set(err, SD_EDATA, "%s: shape %s; expected (%zu, %zu), as %s", in->ratios_name,
                                S_shape_str(a, b1, sizeof b1), sh->n, sh->T, in->tokens_name);
    }
    return SD_OK;
}

double sd_trace_bytes(const sd_trace_shape *sh, const sd_trace_point *pts, size_t npts)
{
    double b = 8.0 * (double)sh->T * (2.0 * (double)sh->V + 2.0) + 8.0 * (double)sh->T;
    for (size_t j = 0; j < npts; j++) {
        size_t S = pts[j].par.k > 0 ? pts[j].par.k : 1, G = sd_draft_len_at(pts[j].par.gamma, sh->T, 1);
        b += S_ctx_bytes(sh->T, sh->V, S, G) + 16.0 * (double)(G + 1);
    }
    return b;
}

void sd_trace_result_free(sd_trace_result *r)
{
    free(r->tried);
    r->tried = r->accepted = NULL;
}

/* Reads, checks and renormalises one row (position t of sequence i). */
static int S_row(const sd_npy *a, const char *name, size_t i, size_t t, size_t T, size_t V, double tol, double *out,
                 double *max_dev, sd_error *err)
{
    size_t base = (i * T + (t - 1)) * V;
    double sum = 0.0;
    for (size_t y = 0; y < V; y++) {
        double v = sd_npy_get(a, base + y);
        if (!isfinite(v) || v < 0.0)
            return sd_error_set(err, SD_EDATA, "%s: sequence %zu, position %zu, token %zu: %.17g; expected a "
                                               "finite probability >= 0 (index [%zu, %zu, %zu])",
                                name, i, t, y, v, i, t - 1, y);
        out[y] = v;
        sum += v;
    }
    double dev = fabs(sum - 1.0);
    if (!(dev <= tol))
        return sd_error_set(err, SD_EDATA, "%s: sequence %zu, position %zu (index [%zu, %zu, :]): the row sums to "
                                           "%.12g; expected 1 (within %g; --tol sets it)",
                            name, i, t, i, t - 1, sum, tol);
    if (dev > *max_dev)
        *max_dev = dev;
    for (size_t y = 0; y < V; y++)
        out[y] /= sum;
    return SD_OK;
}

int sd_trace_eval(const sd_trace_input *in, const sd_trace_point *pts, size_t npts, size_t max_bytes,
                  sd_trace_result *res, double *max_dev, sd_error *err)
{
    sd_trace_shape sh;
    int rc = sd_trace_check(in, &sh, err);
    if (rc)
        return rc;
    int rows = in->draft != NULL;
    for (size_t j = 0; j < npts; j++)
        if ((rc = sd_trace_supported(pts[j].vt, &pts[j].par, rows, err)))
            return rc;
    double need = sd_trace_bytes(&sh, pts, npts);
    if (max_bytes && need > (double)max_bytes)
        return sd_error_set(err, SD_ETOOBIG, "the trace needs about %.0f MB of memory (%zu positions of V = %zu, "
                                             "%zu points); the limit is %.0f MB (--max-memory)",
                            need / 1e6, sh.T, sh.V, npts, (double)max_bytes / 1e6);
    size_t n = sh.n, T = sh.T, V = sh.V;
    double *p = NULL, *q = NULL, *r = malloc(T * sizeof *r);
    size_t *x = malloc(T * sizeof *x);
    S_ctx *ctx = calloc(npts, sizeof *ctx);
    if (rows) {
        p = malloc(T * V * sizeof *p);
        q = malloc(T * V * sizeof *q);
    }
    memset(res, 0, npts * sizeof *res);
    if (!r || !x || !ctx || (rows && (!p || !q))) {
        rc = sd_error_set(err, SD_ENOMEM, "out of memory");
        goto done;
    }
    for (size_t j = 0; j < npts && !rc; j++) {
        rc = S_ctx_new(&ctx[j], &pts[j], T, V, err);
        if (rc)
            break;
        sd_welford_init(&res[j].rej);
        sd_welford_init(&res[j].calls);
        res[j].G = ctx[j].G;
        res[j].tried = calloc(2 * (ctx[j].G + 1), sizeof(double));
        if (!res[j].tried)
            rc = sd_error_set(err, SD_ENOMEM, "out of memory");
        else
            res[j].accepted = res[j].tried + ctx[j].G + 1;
    }
    double tolr = in->tol > 0.0 ? in->tol : (rows ? sd_trace_default_tol(in->draft->size < in->target->size ? in->draft->size : in->target->size) : 0.0);
    *max_dev = 0.0;
    for (size_t i = 0; i < n && !rc; i++) {
        for (size_t t = 1; t <= T && !rc; t++) {
            uint64_t v;
            if (sd_npy_get_index(in->tokens, i * T + t - 1, &v)) {
                rc = sd_error_set(err, SD_EDATA, "%s: sequence %zu, position %zu (index [%zu, %zu]): a negative "
                                                 "token; expected 0..V-1", in->tokens_name, i, t, i, t - 1);
                break;
            }
            if (rows && v >= V) {
                rc = sd_error_set(err, SD_EDATA, "%s: sequence %zu, position %zu (index [%zu, %zu]): token %llu; "
                                                 "expected 0..%zu (V = %zu from %s)", in->tokens_name, i, t, i, t - 1,
                                  (unsigned long long)v, V - 1, V, in->draft_name);
                break;
            }
            x[t - 1] = (size_t)v;
            if (rows) {
                rc = S_row(in->draft, in->draft_name, i, t, T, V, tolr, p + (t - 1) * V, max_dev, err);
                if (!rc)
                    rc = S_row(in->target, in->target_name, i, t, T, V, tolr, q + (t - 1) * V, max_dev, err);
                if (!rc && !(q[(t - 1) * V + v] > 0.0))
                    rc = sd_error_set(err, SD_EDATA, "%s: sequence %zu, position %zu: the logged token %llu has "
                                                     "target probability 0 in %s; a target-sampled sequence "
                                                     "cannot contain it", in->tokens_name, i, t,
                                      (unsigned long long)v, in->target_name);
                if (!rc)
                    r[t - 1] = p[(t - 1) * V + v] / q[(t - 1) * V + v];
            } else {
                double rv = sd_npy_get(in->ratios, i * T + t - 1);
                if (!isfinite(rv) || rv < 0.0)
                    rc = sd_error_set(err, SD_EDATA, "%s: sequence %zu, position %zu (index [%zu, %zu]): %.17g; "
                                                     "expected a finite ratio p(x)/q(x) >= 0", in->ratios_name, i, t,
                                      i, t - 1, rv);
                r[t - 1] = rv;
            }
        }
        for (size_t j = 0; j < npts && !rc; j++) {
            double R, C;
            const sd_trace_type *tt = pts[j].vt->trace;
            int use_rows = rows && tt->needs_rows;
            sd_stream_init(&ctx[j].rng, pts[j].seed, i);
            rc = S_run(&ctx[j], V, x, use_rows ? p : NULL, use_rows ? q : NULL, r, &R, &C, res[j].tried,
                       res[j].accepted, err);
            if (rc) {
                char msg[SD_ERROR_MSG_MAX];
                snprintf(msg, sizeof msg, "%s", err ? err->msg : "");
                rc = sd_error_set(err, rc, "sequence %zu: %s", i, msg);
                break;
            }
            sd_welford_add(&res[j].rej, R);
            sd_welford_add(&res[j].calls, C);
            res[j].laws = ctx[j].laws;
            res[j].estimated = ctx[j].estimated;
        }
        if (rows) { /* one pass: sequence i's rows are not read again */
            sd_npy_release(in->draft, i * T * V, T * V);
            sd_npy_release(in->target, i * T * V, T * V);
        }
    }
done:
    for (size_t j = 0; ctx && j < npts; j++)
        if (ctx[j].tt)
            S_ctx_free(&ctx[j]);
    if (rc)
        for (size_t j = 0; j < npts; j++)
            sd_trace_result_free(&res[j]);
    free(ctx);
    free(p);
    free(q);
    free(r);
    free(x);
    return rc;
}
