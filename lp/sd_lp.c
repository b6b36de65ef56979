/* sd_lp.c — GLPK plumbing shared by the LPs of `simdec lp` (sd_lp.h).
 *
 * GLPK's failure modes and how they are contained:
 *   - log output: glp_term_out(GLP_OFF) in every solve (a fresh GLPK
 *     environment starts with output on), plus a terminal hook that
 *     swallows whatever GLPK still writes;
 *   - internal errors (glp_error → abort()): glp_error_hook with a hook
 *     that longjmps back to sd_lp_solve, which then calls glp_free_env()
 *     (GLPK's documented recovery) and reports status "glpk error" with
 *     GLPK's message, captured by the terminal hook (GLPK switches its
 *     output back on just before calling the hook);
 *   - solver outcomes: glp_simplex/glp_exact return codes and
 *     glp_get_status are turned into GLPK's own words (glpk.h comments).
 * GLPK 5 keeps its environment in thread-local storage, so concurrent
 * solves in different threads are independent. */
#include "sd_lp.h"
#include "sd_lp_clp.h"

#include <assert.h>
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- sizes ---------------------------------------------------------------- */

size_t sd_lp_mul(size_t a, size_t b)
{
    if (a == SIZE_MAX || b == SIZE_MAX)
        return (a == 0 || b == 0) ? 0 : SIZE_MAX;
    if (a != 0 && b > SIZE_MAX / a)
        return SIZE_MAX;
    return a * b;
}

size_t sd_lp_add(size_t a, size_t b)
{
    return (a > SIZE_MAX - b) ? SIZE_MAX : a + b;
}

size_t sd_lp_pow(size_t base, size_t e)
{
    size_t r = 1;
    for (size_t i = 0; i < e && r != SIZE_MAX; i++)
        r = sd_lp_mul(r, base);
    return r;
}

void sd_lp_out_slots(size_t V, size_t D, size_t **off, int **col, int **row)
{
    *col = *row = NULL;
    *off = malloc((D + 2) * sizeof **off);
    if (!*off)
        return;
    (*off)[0] = 0;
    for (size_t l = 0; l <= D; l++)
        (*off)[l + 1] = (*off)[l] + sd_lp_pow(V, l + 1);
    *col = calloc((*off)[D + 1], sizeof **col);
    *row = calloc((*off)[D + 1], sizeof **row);
}

/* C(n, r) through C(n, i+1) = C(n, i) (n-i) / (i+1), exact in integers
 * (the product of i+1 consecutive integers is divisible by (i+1)!);
 * saturates when an intermediate product would overflow. */
size_t sd_lp_binom(size_t n, size_t r)
{
    if (r > n)
        return 0;
    if (r > n - r)
        r = n - r;
    size_t c = 1;
    for (size_t i = 0; i < r; i++) {
        size_t num = n - i, den = i + 1;
        /* c * num / den with c*num possibly overflowing: divide first by
         * g = gcd(c, den). */
        size_t g = c, h = den;
        while (h) {
            size_t tmp = g % h;
            g = h;
            h = tmp;
        }
        size_t c2 = c / g, den2 = den / g;
        /* den2 divides num here (binomial integrality). */
        size_t m = sd_lp_mul(c2, num / den2);
        if (m == SIZE_MAX || num % den2 != 0)
            return SIZE_MAX;
        c = m;
    }
    return c;
}

int sd_lp_check_size(const sd_lp_size *sz, size_t max_vars, sd_error *err)
{
    const char *what = sz->what;
    const char *unit = sz->flow ? "flow arcs" : "LP variables";
    if (max_vars == 0)
        max_vars = sz->flow ? SD_LP_DEFAULT_MAX_ARCS : SD_LP_DEFAULT_MAX_VARS;
    if (sz->vars > max_vars) {
        if (sz->vars == SIZE_MAX)
            return sd_error_set(err, SD_ETOOBIG,
                                "%s needs more than 2^%zu %s (the count overflows); the limit (--max-vars) is %zu",
                                what, sizeof(size_t) * 8, unit, max_vars);
        return sd_error_set(err, SD_ETOOBIG,
                            "%s needs %zu %s; the limit (--max-vars) is %zu",
                            what, sz->vars, unit, max_vars);
    }
    if (sz->vars >= (size_t)INT_MAX || sz->rows >= (size_t)INT_MAX)
        return sd_error_set(err, SD_ETOOBIG,
                            "%s needs %zu variables and %zu constraints; GLPK indexes at most %d",
                            what, sz->vars, sz->rows, INT_MAX - 1);
    if (sz->nnz > SD_LP_MAX_NNZ)
        return sd_error_set(err, SD_ETOOBIG,
                            "%s needs %zu constraint-matrix entries; the limit is %zu",
                            what, sz->nnz, SD_LP_MAX_NNZ);
    return SD_OK;
}

void sd_lp_opts_default(sd_lp_opts *o)
{
    o->max_vars = 0; /* the method's default */
    o->exact = 0;
    o->time_limit = 0.0;
    o->method = SD_LP_METHOD_AUTO;
    o->per_draft = 0;
    o->progress = NULL;
    o->progress_ctx = NULL;
    o->progress_ms = 0;
}

int sd_lp_uses_flow(const sd_lp_opts *opts)
{
    if (!opts)
        return 1;
    return opts->method == SD_LP_METHOD_FLOW || (opts->method == SD_LP_METHOD_AUTO && !opts->exact);
}

/* ---- plans ------------------------------------------------------------------ */

sd_lp_plan *sd_lp_plan_new(const char *header, size_t ngroups, const size_t *group,
                           size_t nvals, size_t cap)
{
    assert(ngroups <= 4);
    sd_lp_plan *pl = calloc(1, sizeof *pl);
    if (!pl)
        return NULL;
    snprintf(pl->header, sizeof pl->header, "%s", header);
    pl->ngroups = ngroups;
    for (size_t g = 0; g < ngroups; g++) {
        pl->group[g] = group[g];
        pl->nkeys += group[g];
    }
    pl->nvals = nvals;
    pl->cap = cap ? cap : 16;
    pl->keys = malloc(pl->cap * (pl->nkeys ? pl->nkeys : 1) * sizeof *pl->keys);
    pl->vals = malloc(pl->cap * (nvals ? nvals : 1) * sizeof *pl->vals);
    if (!pl->keys || !pl->vals) {
        sd_lp_plan_free(pl);
        return NULL;
    }
    return pl;
}

void sd_lp_plan_free(sd_lp_plan *plan)
{
    if (!plan)
        return;
    free(plan->keys);
    free(plan->vals);
    free(plan);
}

int sd_lp_plan_add(sd_lp_plan *plan, const size_t *keys, const double *vals)
{
    if (plan->rows == plan->cap) {
        size_t cap = plan->cap * 2;
        size_t *nk = realloc(plan->keys, cap * (plan->nkeys ? plan->nkeys : 1) * sizeof *nk);
        if (!nk)
            return SD_ENOMEM;
        plan->keys = nk;
        double *nv = realloc(plan->vals, cap * (plan->nvals ? plan->nvals : 1) * sizeof *nv);
        if (!nv)
            return SD_ENOMEM;
        plan->vals = nv;
        plan->cap = cap;
    }
    memcpy(plan->keys + plan->rows * plan->nkeys, keys, plan->nkeys * sizeof *keys);
    memcpy(plan->vals + plan->rows * plan->nvals, vals, plan->nvals * sizeof *vals);
    plan->rows++;
    return SD_OK;
}

int sd_lp_plan_write(const sd_lp_plan *plan, FILE *f, sd_error *err)
{
    int bad = fprintf(f, "%s\n", plan->header) < 0;
    for (size_t r = 0; r < plan->rows && !bad; r++) {
        const size_t *k = plan->keys + r * plan->nkeys;
        for (size_t g = 0; g < plan->ngroups; g++) {
            if (g)
                bad |= fputc(',', f) == EOF;
            for (size_t i = 0; i < plan->group[g]; i++)
                bad |= fprintf(f, i ? " %zu" : "%zu", *k++) < 0;
        }
        for (size_t v = 0; v < plan->nvals; v++)
            bad |= fprintf(f, ",%.17g", plan->vals[r * plan->nvals + v]) < 0;
        bad |= fputc('\n', f) == EOF;
    }
    if (bad || ferror(f))
        return sd_error_set(err, SD_EOUTPUT, "cannot write the LP plan");
    return SD_OK;
}

void sd_lp_digits(size_t u, size_t V, size_t L, size_t *out)
{
    for (size_t i = L; i-- > 0;) {
        out[i] = u % V;
        u /= V;
    }
}

/* ---- block laws ----------------------------------------------------------- */

int sd_lp_prefix_laws(const sd_chain *c, size_t t, size_t a, size_t L,
                      int target, double ***out, sd_error *err)
{
    size_t V = c->V, total = 0, n = 1;
    assert(t >= 1 && t + L - 1 <= c->T && a < V);
    for (size_t l = 0; l <= L; l++) {
        total = sd_lp_add(total, n);
        if (l < L)
            n = sd_lp_mul(n, V);
    }
    if (total == SIZE_MAX || total > (SIZE_MAX - (L + 1) * sizeof(double *)) / sizeof(double))
        return sd_error_set(err, SD_ETOOBIG, "block laws of length %zu over V = %zu overflow", L, V);
    /* one block: L+1 pointers, then the doubles (pointers are 8-aligned). */
    char *mem = malloc((L + 1) * sizeof(double *) + total * sizeof(double));
    if (!mem)
        return sd_error_set(err, SD_ENOMEM, "out of memory for block laws (%zu numbers)", total);
    double **laws = (double **)(void *)mem;
    double *d = (double *)(void *)(mem + (L + 1) * sizeof(double *));
    laws[0] = d;
    d[0] = 1.0;
    n = 1;
    for (size_t l = 1; l <= L; l++) {
        double *prev = laws[l - 1], *cur = prev + n;
        laws[l] = cur;
        size_t pos = t + l - 1;
        for (size_t u = 0; u < n; u++) {
            size_t last = (l == 1) ? a : u % V;
            const double *row = target ? sd_chain_q(c, pos, last) : sd_chain_p(c, pos, last);
            for (size_t y = 0; y < V; y++)
                cur[u * V + y] = prev[u] * row[y];
        }
        n *= V;
    }
    *out = laws;
    return SD_OK;
}

/* ---- the solver wrapper --------------------------------------------------- */

int sd_lp_col(sd_lp_builder *b, double lo, double hi, double obj)
{
    int j = glp_add_cols(b->lp, 1);
    if (hi == HUGE_VAL)
        glp_set_col_bnds(b->lp, j, GLP_LO, lo, 0.0);
    else if (hi == lo)
        glp_set_col_bnds(b->lp, j, GLP_FX, lo, lo);
    else
        glp_set_col_bnds(b->lp, j, GLP_DB, lo, hi);
    glp_set_obj_coef(b->lp, j, obj);
    return j;
}

int sd_lp_row_fixed(sd_lp_builder *b, double rhs)
{
    int i = glp_add_rows(b->lp, 1);
    glp_set_row_bnds(b->lp, i, GLP_FX, rhs, rhs);
    return i;
}

int sd_lp_row_lower(sd_lp_builder *b, double lo)
{
    int i = glp_add_rows(b->lp, 1);
    glp_set_row_bnds(b->lp, i, GLP_LO, lo, 0.0);
    return i;
}

void sd_lp_entry(sd_lp_builder *b, int row, int col, double v)
{
    assert(b->nnz < b->cap);
    b->nnz++;
    b->ia[b->nnz] = row;
    b->ja[b->nnz] = col;
    b->ar[b->nnz] = v;
}

int sd_lp_transport_build(sd_lp_builder *b, const double *a, size_t m, const double *bm,
                          size_t n, sd_lp_gain_fn gain, const void *ctx, int *col,
                          sd_error *err)
{
    size_t last = n;
    for (size_t j = 0; j < n; j++)
        if (bm[j] > 0)
            last = j;
    int *jrow = calloc(n, sizeof *jrow);
    if (!jrow)
        return sd_error_set(err, SD_ENOMEM, "out of memory for a transport LP");
    for (size_t j = 0; j < n; j++)
        if (bm[j] > 0 && j != last)
            jrow[j] = sd_lp_row_fixed(b, bm[j]);
    for (size_t i = 0; i < m; i++) {
        if (!(a[i] > 0))
            continue;
        int row = sd_lp_row_fixed(b, a[i]);
        for (size_t j = 0; j < n; j++) {
            if (!(bm[j] > 0))
                continue;
            int c = sd_lp_col(b, 0.0, HUGE_VAL, gain(i, j, ctx));
            col[i * n + j] = c;
            sd_lp_entry(b, row, c, 1.0);
            if (jrow[j])
                sd_lp_entry(b, jrow[j], c, 1.0);
        }
    }
    free(jrow);
    return SD_OK;
}

void sd_lp_read_cols(glp_prob *lp, const int *col, size_t count, double *out)
{
    for (size_t i = 0; i < count; i++)
        out[i] = col[i] ? fmax(0.0, glp_get_col_prim(lp, col[i])) : 0.0;
}

/* GLPK's words for glp_get_status (glpk.h). */
static const char *S_status_word(int st)
{
    switch (st) {
    case GLP_OPT: return "optimal";
    case GLP_FEAS: return "feasible";
    case GLP_INFEAS: return "infeasible";
    case GLP_NOFEAS: return "no feasible solution";
    case GLP_UNBND: return "unbounded";
    default: return "undefined";
    }
}

/* GLPK's words for a glp_simplex/glp_exact return code (glpk.h). */
static const char *S_return_word(int rc)
{
    switch (rc) {
    case GLP_EBADB: return "invalid basis";
    case GLP_ESING: return "singular matrix";
    case GLP_ECOND: return "ill-conditioned matrix";
    case GLP_EBOUND: return "invalid bounds";
    case GLP_EOBJLL: return "objective lower limit reached";
    case GLP_EOBJUL: return "objective upper limit reached";
    case GLP_EITLIM: return "iteration limit exceeded";
    case GLP_ETMLIM: return "time limit exceeded";
    case GLP_ENOPFS: return "no primal feasible solution";
    case GLP_ENODFS: return "no dual feasible solution";
    default: return "solver failed";
    }
}

/* Everything one solve needs that must survive a longjmp lives on the
 * heap (automatic variables changed after setjmp are indeterminate after
 * longjmp, C11 7.13.2.1). */
typedef struct S_job {
    jmp_buf jb;
    char glpk_msg[512];
    size_t msg_len;
    sd_lp_builder b;
    unsigned flags;
    const sd_lp_opts *opts;
    sd_lp_build_fn build;
    sd_lp_read_fn read;
    void *ctx;
    sd_lp_result *res;
    sd_error *err;
    double t0; /* when the solve began (for opts->progress) */
} S_job;

/* The iteration count of a line of GLPK's simplex log ("*  1234: obj =
 * ...", '*' in phase 2), or -1 for another line. */
static long S_log_iteration(const char *s)
{
    while (*s == ' ' || *s == '*')
        s++;
    if (*s < '0' || *s > '9')
        return -1;
    char *end;
    long it = strtol(s, &end, 10);
    return *end == ':' ? it : -1;
}

/* Swallows GLPK's terminal output, keeping the first 511 bytes (the text
 * of an internal error; nothing else is printed with output off).  With
 * opts->progress the simplex log is on: its iteration lines go to the
 * callback, and the text kept restarts at each (and after each solve), so
 * that an error's text is what follows the last of them. */
static int S_term_hook(void *info, const char *s)
{
    S_job *job = info;
    if (job->opts && job->opts->progress) {
        long it = S_log_iteration(s);
        if (it >= 0) {
            job->msg_len = 0;
            job->glpk_msg[0] = '\0';
            job->opts->progress(job->opts->progress_ctx, it, sd_lp_now() - job->t0);
            return 1;
        }
    }
    size_t n = strlen(s), room = sizeof job->glpk_msg - 1 - job->msg_len;
    if (n > room)
        n = room;
    memcpy(job->glpk_msg + job->msg_len, s, n);
    job->msg_len += n;
    job->glpk_msg[job->msg_len] = '\0';
    return 1;
}

static void S_error_hook(void *info)
{
    S_job *job = info;
    longjmp(job->jb, 1);
}

static int S_work(S_job *job)
{
    sd_lp_result *res = job->res;
    glp_term_hook(S_term_hook, job);
    glp_error_hook(S_error_hook, job);
    glp_term_out(GLP_OFF);
    glp_prob *lp = glp_create_prob();
    job->b.lp = lp;
    glp_set_obj_dir(lp, (job->flags & SD_LP_MAXIMISE) ? GLP_MAX : GLP_MIN);
    int rc = job->build(&job->b, job->ctx, job->err);
    if (rc) {
        glp_delete_prob(lp);
        glp_error_hook(NULL, NULL);
        glp_term_hook(NULL, NULL);
        return rc;
    }
    if (job->b.nnz)
        glp_load_matrix(lp, (int)job->b.nnz, job->b.ia, job->b.ja, job->b.ar);
    res->variables = (size_t)glp_get_num_cols(lp);
    res->constraints = (size_t)glp_get_num_rows(lp);
    res->nonzeros = (size_t)glp_get_num_nz(lp);

    if (job->opts->method == SD_LP_METHOD_CLP) {
        /* COIN-OR CLP's barrier with crossover on the same problem (lp/sd_lp_clp.h);
         * optimal only when its weak-duality bound meets the primal value
         * within 1e-9 and the point is feasible within 1e-9 */
        sd_lp_clp_result cr;
        snprintf(res->method, sizeof res->method, "clp");
        if (job->read)
            rc = sd_error_set(job->err, SD_EUSAGE, "--method clp reports the optimum only; it writes no plan");
        else if (sd_lp_clp_solve(lp, SD_LP_CLP_BARRIER, job->opts->time_limit, &cr))
            rc = sd_error_set(job->err, SD_ENOMEM, "out of memory copying the LP to CLP");
        else {
            res->dual_bound = cr.dual_bound;
            res->primal_residual = cr.primal_residual;
            res->optimal = cr.optimal && fabs(cr.dual_bound - cr.optimum) <= 1e-9 && cr.primal_residual <= 1e-9;
            res->optimum = res->optimal ? cr.optimum : NAN;
            snprintf(res->status, sizeof res->status, "%s",
                     res->optimal ? "optimal"
                     : cr.clp_status == 0 ? "uncertified"
                     : cr.clp_status == 1 ? "infeasible"
                     : cr.clp_status == 2 ? "unbounded"
                     : cr.clp_status == 3 ? "time limit exceeded" : "solver failed");
        }
        glp_delete_prob(lp);
        glp_error_hook(NULL, NULL);
        glp_term_hook(NULL, NULL);
        return rc;
    }
    glp_smcp sm;
    glp_init_smcp(&sm);
    sm.msg_lev = GLP_MSG_OFF;
    sm.presolve = GLP_OFF;
    /* Tighter than GLPK's 1e-7, which left valid-verify optima 2e-6 off
     * on random instances with probabilities near 1e-10; 1e-9 keeps them
     * within 3e-8 (1e-10 stalled more often on such instances). */
    sm.tol_bnd = 1e-9;
    sm.tol_dj = 1e-9;
    int dual = job->opts->method == SD_LP_METHOD_DUAL ||
               (job->opts->method != SD_LP_METHOD_SIMPLEX && (job->flags & SD_LP_AUTO_DUAL));
    if (dual)
        sm.meth = GLP_DUALP;
    snprintf(res->method, sizeof res->method, "%s", dual ? "dual" : "simplex");
    if (job->opts->time_limit > 0)
        sm.tm_lim = job->opts->time_limit * 1000 > INT_MAX ? INT_MAX
                                                            : (int)(job->opts->time_limit * 1000);
    glp_scale_prob(lp, GLP_SF_AUTO);
    /* A crash basis instead of the all-slack one: on block-ot at V=7,
     * gamma=3 (117649 columns) Bixby's basis cuts primal simplex from 1.9 s
     * to 0.7 s; on valid-verify (12404 columns) the triangular basis cuts
     * it from 1.8 s to 0.25 s.  (Dual simplex took minutes on block-ot.) */
    if (job->flags & SD_LP_ADV_BASIS)
        glp_adv_basis(lp, 0);
    else if (job->flags & SD_LP_CPX_BASIS)
        glp_cpx_basis(lp);
    if (job->opts->progress) { /* the log on, read by S_term_hook */
        sm.msg_lev = GLP_MSG_ON;
        sm.out_frq = job->opts->progress_ms > 0 ? job->opts->progress_ms : 2000;
        sm.out_dly = sm.out_frq; /* a short solve shows nothing */
        glp_term_out(GLP_ON);
    }
    int src = glp_simplex(lp, &sm);
    job->msg_len = 0; /* the log of a solve that returned: no error's text */
    /* Ill-conditioned data (probabilities near 1e-10, where scaling
     * magnifies the 1e-16 inconsistencies of rounded probabilities) can
     * make this fail ("no feasible solution"): retry unscaled from the
     * slack basis with tolerances 1e-9, 1e-8, then GLPK's default 1e-7,
     * keeping the first optimum.  (Measured on 6000 random valid-verify
     * instances with Dirichlet(0.2) rows and zeros: 2 needed the retry;
     * all then agreed with the closed form to 3e-8.)  A time or iteration
     * limit is the user's answer, not retried. */
    static const double retry_tol[3] = {1e-9, 1e-8, 1e-7};
    for (int i = 0; i < 3 && src != GLP_ETMLIM && src != GLP_EITLIM &&
                    (src || glp_get_status(lp) != GLP_OPT);
         i++) {
        if (i == 0)
            glp_unscale_prob(lp);
        glp_std_basis(lp);
        sm.tol_bnd = sm.tol_dj = retry_tol[i];
        src = glp_simplex(lp, &sm);
        job->msg_len = 0;
    }
    const char *word = src ? S_return_word(src) : S_status_word(glp_get_status(lp));
    if (!src && job->opts->exact && glp_get_status(lp) == GLP_OPT) {
        /* Rational simplex from the final basis: certifies the optimum. */
        glp_smcp ex;
        glp_init_smcp(&ex);
        ex.msg_lev = GLP_MSG_OFF;
        ex.tm_lim = sm.tm_lim;
        int erc = glp_exact(lp, &ex);
        word = erc ? S_return_word(erc) : S_status_word(glp_get_status(lp));
        src = erc;
        /* glp_exact reports the primal values of the certified basis only
         * to ~1e-13 relative (measured: max x s.t. x/3 + y = 0.1234...
         * gives 0.3703703670368837 instead of 0.37037036703703707), so
         * the floating-point simplex recomputes them from that basis (no
         * pivots: it is optimal). */
        if (!src && glp_get_status(lp) == GLP_OPT) {
            src = glp_simplex(lp, &sm);
            job->msg_len = 0;
            word = src ? S_return_word(src) : S_status_word(glp_get_status(lp));
        }
    }
    snprintf(res->status, sizeof res->status, "%s", word);
    res->optimal = !src && glp_get_status(lp) == GLP_OPT;
    res->optimum = res->optimal ? glp_get_obj_val(lp) : NAN;
    rc = SD_OK;
    if (res->optimal && job->read)
        rc = job->read(lp, job->ctx, job->err);
    glp_delete_prob(lp);
    glp_error_hook(NULL, NULL);
    glp_term_hook(NULL, NULL);
    return rc;
}

/* The frame that setjmp returns to; returns -1 after a GLPK error. */
static int S_guarded(S_job *job)
{
    if (setjmp(job->jb))
        return -1;
    return S_work(job);
}

double sd_lp_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void sd_lp_result_reset(sd_lp_result *res, sd_lp_plan **plan)
{
    if (plan)
        *plan = NULL;
    memset(res, 0, sizeof *res);
    res->optimum = NAN;
    res->dual_bound = NAN;
    res->primal_residual = NAN;
    snprintf(res->status, sizeof res->status, "not solved");
}

int sd_lp_solve(const sd_lp_size *sz, unsigned flags,
                const sd_lp_opts *opts, sd_lp_build_fn build, sd_lp_read_fn read,
                void *ctx, sd_lp_result *res, sd_error *err)
{
    sd_lp_opts dflt;
    if (!opts) {
        sd_lp_opts_default(&dflt);
        opts = &dflt;
    }
    sd_lp_result_reset(res, NULL);
    const char *what = sz->what;
    int rc = sd_lp_check_size(sz, opts->max_vars, err);
    if (rc)
        return rc;
    double t0 = sd_lp_now();
    S_job *job = calloc(1, sizeof *job);
    if (!job)
        return sd_error_set(err, SD_ENOMEM, "out of memory for %s", what);
    job->b.cap = sz->nnz;
    job->b.ia = malloc((sz->nnz + 1) * sizeof *job->b.ia);
    job->b.ja = malloc((sz->nnz + 1) * sizeof *job->b.ja);
    job->b.ar = malloc((sz->nnz + 1) * sizeof *job->b.ar);
    if (!job->b.ia || !job->b.ja || !job->b.ar) {
        rc = sd_error_set(err, SD_ENOMEM, "out of memory for %s (%zu matrix entries)", what, sz->nnz);
    } else {
        job->flags = flags;
        job->opts = opts;
        job->build = build;
        job->read = read;
        job->ctx = ctx;
        job->res = res;
        job->err = err;
        job->t0 = t0;
        rc = S_guarded(job);
        if (rc == -1) {
            /* GLPK's documented recovery after an intercepted error: free
             * the whole (thread-local) environment, problems included. */
            glp_free_env();
            size_t n = job->msg_len;
            while (n && (job->glpk_msg[n - 1] == '\n' || job->glpk_msg[n - 1] == ' '))
                job->glpk_msg[--n] = '\0';
            for (char *s = job->glpk_msg; *s; s++)
                if (*s == '\n')
                    *s = ' ';
            snprintf(res->status, sizeof res->status, "glpk error");
            res->optimal = 0;
            res->optimum = NAN;
            rc = sd_error_set(err, SD_ESOLVER, "%s: GLPK internal error: %s", what,
                              job->msg_len ? job->glpk_msg : "(no message)");
        }
    }
    free(job->b.ia);
    free(job->b.ja);
    free(job->b.ar);
    free(job);
    res->seconds = sd_lp_now() - t0;
    return rc;
}
