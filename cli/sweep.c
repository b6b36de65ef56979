/* sweep.c — sweeps, paired comparisons and the output of `simdec run`
 * (sweep.h). */
#include "sweep.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../sims/engine/sd_paired.h"
#include "../sims/engine/sd_params.h"
#include "../src/sd_version.h"

#define S_MAX_POINTS 10000
#define S_MAX_ALGOS 64
#define S_MAX_VALUES 10000

/* --- expanding the command line -------------------------------------------- */

/* The parameter `name` of any verifier in vts[0..nv-1]. */
static const sd_param_decl *S_decl_any(const sd_verifier_type *const *vts, size_t nv, const char *name)
{
    for (size_t i = 0; i < nv; i++) {
        const sd_param_decl *d = vts[i] ? sd_params_decl(vts[i], name, NULL) : NULL;
        if (d)
            return d;
    }
    return NULL;
}

static char *S_keep(cli_sweep *sw, const char *text, size_t len)
{
    char **ns = realloc(sw->strings, (sw->nstrings + 1) * sizeof *ns);
    if (!ns)
        return NULL;
    sw->strings = ns;
    char *c = malloc(len + 1);
    if (!c)
        return NULL;
    memcpy(c, text, len);
    c[len] = '\0';
    sw->strings[sw->nstrings++] = c;
    return c;
}

/* Splits a list "a,b,c" or a range of counts "a..b" into value strings. */
static int S_split(const char *cmd, const char *opt, const char *text, int count, cli_sweep *sw,
                   char ***vals, size_t *nv)
{
    *vals = NULL;
    *nv = 0;
    const char *dots = strstr(text, "..");
    if (dots) {
        char *e1, *e2;
        long long lo = strtoll(text, &e1, 10), hi = strtoll(dots + 2, &e2, 10);
        if (!count || e1 != dots || *e2 || dots == text || dots[2] == '\0' || lo > hi ||
            hi - lo >= S_MAX_VALUES)
            return cli_usage_error(cmd, "--%s %s: expected a range of whole numbers LO..HI (LO <= HI, "
                                        "at most %d values)%s", opt, text, S_MAX_VALUES,
                                   count ? "" : "; ranges apply to whole-number parameters, give a comma list");
        *vals = calloc((size_t)(hi - lo + 1), sizeof **vals);
        if (!*vals)
            return cli_out_of_memory();
        for (long long v = lo; v <= hi; v++) {
            char b[32];
            int n = snprintf(b, sizeof b, "%lld", v);
            if (!((*vals)[(*nv)++] = S_keep(sw, b, (size_t)n)))
                return cli_out_of_memory();
        }
        return -1;
    }
    size_t cap = 1;
    for (const char *c = text; *c; c++)
        cap += *c == ',';
    if (cap > S_MAX_VALUES)
        return cli_usage_error(cmd, "--%s: more than %d values", opt, S_MAX_VALUES);
    *vals = calloc(cap, sizeof **vals);
    if (!*vals)
        return cli_out_of_memory();
    for (const char *c = text;;) {
        size_t len = strcspn(c, ",");
        if (len == 0)
            return cli_usage_error(cmd, "--%s %s: an empty entry in the list", opt, text);
        if (!((*vals)[(*nv)++] = S_keep(sw, c, len)))
            return cli_out_of_memory();
        if (!c[len])
            break;
        c += len + 1;
    }
    return -1;
}

/* "--name=value", kept in sw. */
static char *S_option_text(cli_sweep *sw, const char *name, const char *value)
{
    size_t len = strlen(name) + strlen(value) + 3;
    char *b = malloc(len + 1);
    if (!b)
        return NULL;
    snprintf(b, len + 1, "--%s=%s", name, value);
    char *k = S_keep(sw, b, len);
    free(b);
    return k;
}

int cli_sweep_is_list(const sd_param_decl *d, const char *v)
{
    /* lists on numbers, choices (--residual opt,uno) and draft policies, ranges on whole
     * numbers (S_split says so); not on a tree shape, whose commas are its levels */
    int numeric = d && (d->kind == SD_PARAM_COUNT || d->kind == SD_PARAM_REAL);
    return d && ((numeric && (strchr(v, ',') || strstr(v, ".."))) ||
                 ((d->kind == SD_PARAM_CHOICE || d->kind == SD_PARAM_POLICY) && strchr(v, ',')));
}

typedef struct {
    int at;           /* index of the option in argv */
    int val_at;       /* index of its value (== at for --name=value) */
    char name[64];
    char **vals;
    size_t nv;
} S_list;

/* The number of points of verifier a (vts[a]) and the lists it takes
 * (uses[l]): a list of verifiers takes only the lists of the parameters
 * each declares. */
static size_t S_points_of(const sd_verifier_type *vt, int listed, const S_list *lists, size_t nl, int *uses)
{
    size_t npts = 1;
    for (size_t l = 0; l < nl; l++) {
        uses[l] = !listed || !vt || sd_params_decl(vt, lists[l].name, NULL);
        if (uses[l])
            npts *= lists[l].nv;
    }
    return npts;
}

/* The value indices of point p, the last list varying fastest. */
static void S_indices(size_t p, const S_list *lists, size_t nl, const int *uses, size_t *idx)
{
    for (size_t l = nl; l-- > 0;)
        if (uses[l]) {
            idx[l] = p % lists[l].nv;
            p /= lists[l].nv;
        }
}

/* The verifiers of --algo (a comma list when listed) split into *algos
 * (*na of them).  -1 to go on, else an exit status. */
static int S_algos(const char *cmd, const char *algo, int listed, cli_sweep *sw, char ***algos, size_t *na)
{
    *algos = NULL;
    *na = 1;
    if (!listed)
        return -1;
    int rc = S_split(cmd, "algo", algo, 0, sw, algos, na);
    if (rc < 0 && *na > S_MAX_ALGOS)
        rc = cli_usage_error(cmd, "--algo: more than %d verifiers", S_MAX_ALGOS);
    return rc;
}

/* Each point's verifier: vts[a] for algos[a], or the one named (the
 * default when none).  NULL for an unknown name: the prescan of its point
 * reports it, suggesting a spelling. */
static void S_find(const char *algo, int listed, char **algos, size_t na, const sd_verifier_type **vts)
{
    for (size_t a = 0; a < na; a++)
        vts[a] = sd_verifier_find(listed ? algos[a] : algo ? algo : sd_verifier_baseline()->name);
}

/* Adds the list value v of option `name` (declared by d) at at..val_at to
 * lists.  -1 to go on, else an exit status. */
static int S_add_list(const char *cmd, S_list *lists, size_t *nl, int at, int val_at, const char *name, const char *v,
                      const sd_param_decl *d, cli_sweep *sw)
{
    if (*nl == SD_PARAMS_MAX * 2)
        return cli_usage_error(cmd, "too many swept parameters");
    S_list *l = &lists[(*nl)++];
    l->at = at;
    l->val_at = val_at;
    snprintf(l->name, sizeof l->name, "%s", name);
    return S_split(cmd, name, v, d->kind == SD_PARAM_COUNT, sw, &l->vals, &l->nv);
}

/* The number of points of the sweep in *total, sw->algo allocated for
 * them.  -1 to go on, else an exit status. */
static int S_count(const char *cmd, const sd_verifier_type *const *vts, size_t na, int listed, const S_list *lists,
                   size_t nl, cli_sweep *sw, size_t *total)
{
    int uses[SD_PARAMS_MAX * 2];
    *total = 0;
    for (size_t a = 0; a < na; a++)
        if ((*total += S_points_of(vts[a], listed, lists, nl, uses)) > S_MAX_POINTS)
            return cli_usage_error(cmd, "the sweep has more than %d points", S_MAX_POINTS);
    if (!(sw->algo = calloc(*total, sizeof *sw->algo)))
        return cli_out_of_memory();
    return -1;
}

/* 1 if the option `name` with a value is another verifier's scalar
 * parameter at a point of vt in a sweep over verifiers: left out there. */
static int S_other_scalar(int listed, const sd_verifier_type *const *vts, size_t na, const sd_verifier_type *vt,
                          const char *name)
{
    return listed && vt && !sd_params_decl(vt, name, NULL) && S_decl_any(vts, na, name);
}

/* The point just built (argv or fields at sw->n) runs the verifier algo. */
static void S_point_done(cli_sweep *sw, const char *algo)
{
    sw->algo[sw->n] = algo;
    sw->n++;
}

/* The end of an expansion with status rc (-1: done): frees the verifier
 * names and the lists' values, and on an exit status (rc >= 0) the sweep
 * too.  Returns rc. */
static int S_end(int rc, char **algos, S_list *lists, size_t nl, cli_sweep *sw)
{
    free(algos);
    for (size_t l = 0; l < nl; l++)
        free(lists[l].vals);
    if (rc >= 0)
        cli_sweep_free(sw);
    return rc;
}

int cli_sweep_expand(const char *cmd, const cli_args *args, cli_sweep *sw)
{
    memset(sw, 0, sizeof *sw);
    int argc = args->argc;
    char **argv = args->argv;
    /* The verifiers: the last --algo (getopt's rule), split at commas. */
    int algo_at = -1, algo_val = -1;
    const char *algo = cli_args_last(args, "algo", &algo_at, &algo_val);
    int listed = algo && strchr(algo, ',');
    char **algos = NULL;
    size_t na = 1, nl = 0, total = 0;
    S_list lists[SD_PARAMS_MAX * 2];
    const sd_verifier_type *vts[S_MAX_ALGOS];
    int *opt_of = NULL, uses[SD_PARAMS_MAX * 2];
    sd_error err;
    int rc = S_algos(cmd, algo, listed, sw, &algos, &na);
    if (rc >= 0)
        goto out;
    /* Verifiers' declarations: plugins first (loaded once, cli.c). */
    if (cli_plugins_load(args, &err)) {
        rc = cli_fail(&err);
        goto out;
    }
    S_find(algo, listed, algos, na, vts);
    /* List-valued parameters. */
    for (size_t o = 0; o < args->n; o++) {
        int j;
        const char *v = cli_args_list_value(args, o, &j), *name = args->opt[o].name;
        const sd_param_decl *d = v ? S_decl_any(vts, na, name) : NULL;
        if (cli_sweep_is_list(d, v) && (rc = S_add_list(cmd, lists, &nl, args->opt[o].at, j, name, v, d, sw)) >= 0)
            goto out;
    }
    /* The points: algos × each list, the last list varying fastest; a
     * verifier takes only the lists of parameters it declares. */
    if ((rc = S_count(cmd, vts, na, listed, lists, nl, sw, &total)) >= 0)
        goto out;
    sw->argv = calloc(total, sizeof *sw->argv);
    sw->argc = calloc(total, sizeof *sw->argc);
    if (!sw->argv || !sw->argc) {
        rc = cli_out_of_memory();
        goto out;
    }
    /* the option (in args) at each index of argv, or -1 */
    opt_of = malloc((size_t)argc * sizeof *opt_of);
    if (!opt_of) {
        rc = cli_out_of_memory();
        goto out;
    }
    for (int i = 0; i < argc; i++)
        opt_of[i] = -1;
    for (size_t o = 0; o < args->n; o++)
        opt_of[args->opt[o].at] = (int)o;
    for (size_t a = 0; a < na; a++) {
        size_t idx[SD_PARAMS_MAX * 2] = {0}, npts = S_points_of(vts[a], listed, lists, nl, uses);
        for (size_t p = 0; p < npts; p++) {
            S_indices(p, lists, nl, uses, idx);
            char **av = calloc((size_t)argc + 1, sizeof *av);
            if (!av) {
                rc = cli_out_of_memory();
                goto out;
            }
            int k = 0;
            for (int i = 0; i < argc; i++) {
                if (listed && i == algo_at) {
                    char *s = S_option_text(sw, "algo", algos[a]);
                    if (!s) {
                        free(av);
                        rc = cli_out_of_memory();
                        goto out;
                    }
                    av[k++] = s;
                    i = algo_val;
                    continue;
                }
                int drop = 0;
                for (size_t l = 0; l < nl && !drop; l++) {
                    if (i != lists[l].at)
                        continue;
                    drop = 1;
                    if (uses[l] && !(av[k++] = S_option_text(sw, lists[l].name, lists[l].vals[idx[l]]))) {
                        free(av);
                        rc = cli_out_of_memory();
                        goto out;
                    }
                    i = lists[l].val_at;
                }
                if (!drop && listed && opt_of[i] >= 0) {
                    /* another verifier's scalar parameter: left out */
                    int j;
                    if (cli_args_list_value(args, (size_t)opt_of[i], &j) &&
                        S_other_scalar(listed, vts, na, vts[a], args->opt[opt_of[i]].name)) {
                        i = j;
                        continue;
                    }
                }
                if (!drop)
                    av[k++] = argv[i];
            }
            sw->argv[sw->n] = av;
            sw->argc[sw->n] = k;
            S_point_done(sw, listed ? algos[a] : algo);
        }
    }
    rc = -1;
out:
    free(opt_of);
    return S_end(rc, algos, lists, nl, sw);
}

int cli_sweep_expand_fields(const char *cmd, const char *algo, const cli_field *fields, size_t n, cli_sweep *sw)
{
    memset(sw, 0, sizeof *sw);
    int listed = algo && strchr(algo, ',');
    char **algos = NULL;
    size_t na = 1, nl = 0, total = 0;
    S_list lists[SD_PARAMS_MAX * 2];
    const sd_verifier_type *vts[S_MAX_ALGOS];
    int uses[SD_PARAMS_MAX * 2];
    sd_error err;
    int rc = S_algos(cmd, algo, listed, sw, &algos, &na);
    if (rc >= 0)
        goto out;
    if (cli_plugins_load_fields(fields, n, &err)) {
        rc = cli_fail(&err);
        goto out;
    }
    S_find(algo, listed, algos, na, vts);
    for (size_t i = 0; i < n; i++) {
        const char *v = fields[i].value, *name = fields[i].name;
        const sd_param_decl *d = v ? S_decl_any(vts, na, name) : NULL;
        if (cli_sweep_is_list(d, v) && (rc = S_add_list(cmd, lists, &nl, (int)i, (int)i, name, v, d, sw)) >= 0)
            goto out;
    }
    if ((rc = S_count(cmd, vts, na, listed, lists, nl, sw, &total)) >= 0)
        goto out;
    sw->fields = calloc(total, sizeof *sw->fields);
    sw->nfields = calloc(total, sizeof *sw->nfields);
    if (!sw->fields || !sw->nfields) {
        rc = cli_out_of_memory();
        goto out;
    }
    for (size_t a = 0; a < na; a++) {
        size_t idx[SD_PARAMS_MAX * 2] = {0}, npts = S_points_of(vts[a], listed, lists, nl, uses);
        for (size_t p = 0; p < npts; p++) {
            S_indices(p, lists, nl, uses, idx);
            cli_field *f = calloc(n ? n : 1, sizeof *f);
            if (!f) {
                rc = cli_out_of_memory();
                goto out;
            }
            size_t k = 0;
            for (size_t i = 0; i < n; i++) {
                size_t l = 0;
                while (l < nl && lists[l].at != (int)i)
                    l++;
                if (l < nl) { /* a swept parameter: this point's value, if its verifier takes it */
                    if (uses[l])
                        f[k++] = (cli_field){fields[i].name, lists[l].vals[idx[l]]};
                    continue;
                }
                /* another verifier's scalar parameter: left out */
                if (fields[i].value && S_other_scalar(listed, vts, na, vts[a], fields[i].name))
                    continue;
                f[k++] = fields[i];
            }
            sw->fields[sw->n] = f;
            sw->nfields[sw->n] = k;
            S_point_done(sw, listed ? algos[a] : algo);
        }
    }
    rc = -1;
out:
    return S_end(rc, algos, lists, nl, sw);
}

void cli_sweep_free(cli_sweep *sw)
{
    for (size_t i = 0; i < sw->n; i++) {
        if (sw->argv)
            free(sw->argv[i]);
        if (sw->fields)
            free(sw->fields[i]);
    }
    free(sw->fields);
    free(sw->nfields);
    free(sw->argv);
    free(sw->argc);
    free(sw->algo);
    for (size_t i = 0; i < sw->nstrings; i++)
        free(sw->strings[i]);
    free(sw->strings);
    memset(sw, 0, sizeof *sw);
}

/* --- what a point reports ------------------------------------------------------ */

static const char *S_stop_name(const cli_run_point *pt)
{
    const sd_sim_result *r = &pt->run.sim;
    if (r->stop == SD_SIM_STOP_TIME)
        return "time-limit";
    if (r->stop == SD_SIM_STOP_STDERR)
        return "target-stderr";
    return pt->target_stderr > 0.0 && sd_welford_stderr(&r->rejections) > pt->target_stderr ? "trials-cap"
                                                                                             : "done";
}

static json_t *S_stat_json(const sd_welford *w)
{
    double lo, hi;
    sd_welford_ci95(w, &lo, &hi);
    json_t *o = json_object();
    json_object_set_new(o, "mean", json_real(w->mean));
    json_object_set_new(o, "stderr", json_real(sd_welford_stderr(w)));
    json_object_set_new(o, "ci95", json_pack("[f,f]", lo, hi));
    return o;
}

const char *cli_ranks_text(const cli_run_point *pt)
{
    static char buf[48];
    if (pt->ranks <= 1)
        return "";
    snprintf(buf, sizeof buf, " per rank x %u MPI ranks", pt->ranks);
    return buf;
}

json_t *cli_point_json(const cli_run_point *pt)
{
    const sd_sim_result *r = &pt->run.sim;
    const sd_verifier_type *vt = pt->cv.vt;
    json_t *o = json_object();
    json_object_set_new(o, "version", json_string(SD_VERSION));
    json_object_set_new(o, "algo", json_string(vt->name));
    json_object_set_new(o, "params", sd_params_json(&pt->cv.par, vt));
    json_object_set_new(o, "vocab", json_integer((json_int_t)r->V));
    json_object_set_new(o, "horizon", json_integer((json_int_t)r->T));
    json_object_set_new(o, "trials", json_integer((json_int_t)r->trials));
    json_object_set_new(o, "seed", json_integer((json_int_t)r->seed));
    json_object_set_new(o, "threads", json_integer((json_int_t)pt->run.threads));
    json_object_set_new(o, "ranks", json_integer((json_int_t)pt->ranks));
    json_object_set_new(o, "seconds", json_real(r->seconds));
    json_object_set_new(o, "trials_requested", json_integer((json_int_t)r->trials_requested));
    json_object_set_new(o, "stopped", json_string(S_stop_name(pt)));
    if (pt->time_limit > 0.0)
        json_object_set_new(o, "time_limit", json_real(pt->time_limit));
    if (pt->target_stderr > 0.0) {
        json_object_set_new(o, "target_stderr", json_real(pt->target_stderr));
        json_object_set_new(o, "target_reached",
                            json_boolean(sd_welford_stderr(&r->rejections) <= pt->target_stderr));
    }
    if (pt->samples)
        json_object_set_new(o, "samples", json_pack("{s:s, s:I}", "file", pt->samples, "tokens_per_line",
                                                    (json_int_t)r->tokens_per_trial));
    cli_model_describe(&pt->mo, &pt->model.view, o);
    cli_model_identity(&pt->mo, &pt->model, o);
    json_object_set_new(o, "rejections", S_stat_json(&r->rejections));
    json_object_set_new(o, "estimator", json_string(pt->run.rb ? "rb" : "plain"));
    json_object_set_new(o, "rejections_rb", pt->run.rb ? S_stat_json(&r->rejections_rb) : json_null());
    json_object_set_new(o, "target_calls", S_stat_json(&r->target_calls));
    double tpc, se, lo, hi;
    sd_run_tokens_per_call(r, &tpc, &se, &lo, &hi);
    json_object_set_new(o, "tokens_per_call", cli_json_real(tpc));
    json_object_set_new(o, "tokens_per_call_stderr", cli_json_real(se));
    json_object_set_new(o, "tokens_per_call_ci95", json_pack("[o,o]", cli_json_real(lo), cli_json_real(hi)));
    json_object_set_new(o, "exact_rejections", cli_json_real(pt->run.exact.rejections));
    json_object_set_new(o, "exact_target_calls", cli_json_real(pt->run.exact.target_calls));
    json_object_set_new(o, "exact_method", pt->run.exact.method && isfinite(pt->run.exact.rejections)
                                               ? json_string(pt->run.exact.method) : json_null());
    /* why the exact values are null when they were refused as too large */
    json_object_set_new(o, "exact_not_computed", pt->run.exact_refused[0] ? json_string(pt->run.exact_refused) : json_null());
    json_object_set_new(o, "baseline", json_string(pt->run.baseline ? pt->run.baseline->name : ""));
    json_object_set_new(o, "baseline_exact_target_calls", cli_json_real(pt->run.baseline_calls));
    /* The key of earlier versions, kept as a documented alias. */
    json_object_set_new(o, "token_exact_target_calls", cli_json_real(pt->run.baseline_calls));
    json_object_set_new(o, "kernel", json_string(r->kernel));
    json_object_set_new(o, "accepted_per_iteration", S_stat_json(&r->accepted));
    json_t *h = json_array();
    size_t last = 0;
    for (size_t j = 0; j <= r->T; j++)
        if (r->accept_hist[j] > 0)
            last = j;
    for (size_t j = 0; j <= last; j++)
        json_array_append_new(h, json_integer((json_int_t)r->accept_hist[j]));
    json_object_set_new(o, "accepted_hist", h);
    json_object_set_new(o, "lossless_claimed", json_boolean(sd_verifier_claims_lossless(vt, &pt->cv.par)));
    json_object_set_new(o, "exact_bias", cli_json_real(pt->run.bias_exact));
    json_object_set_new(o, "exact_bias_position",
                        isfinite(pt->run.bias_exact) ? json_integer((json_int_t)pt->run.bias_n) : json_null());
    json_object_set_new(o, "bias_estimate",
                        isfinite(pt->run.bias_est.value)
                            ? json_pack("{s:s,s:o,s:o,s:o}", "estimates", CLI_BIAS_ESTIMATES, "value",
                                        cli_json_real(pt->run.bias_est.value), "stderr",
                                        cli_json_real(pt->run.bias_est.stderr), "noise_floor",
                                        cli_json_real(pt->run.bias_est.noise_floor))
                            : json_null());
    return o;
}

/* --- paired differences -------------------------------------------------------- */

static const char *const S_paired_keys[SD_RUN_PAIRED_N] = {"rejections", "target_calls", "rejections_rb",
                                                        "target_calls_rb"};

static json_t *S_paired_json(const cli_run_point *a, const cli_run_point *b)
{
    sd_run_paired_stat pd[SD_RUN_PAIRED_N];
    if (sd_run_paired(&a->run, &b->run, pd))
        return json_null();
    json_t *o = json_object();
    char ref[600];
    char pars[512];
    sd_params_format(&a->cv.par, a->cv.vt, pars, sizeof pars);
    snprintf(ref, sizeof ref, "%s%s", a->cv.vt->name, pars);
    json_object_set_new(o, "reference", json_string(ref));
    json_object_set_new(o, "coupling", json_string(sd_run_coupling(&a->run, &b->run)));
    for (int q = 0; q < SD_RUN_PAIRED_N; q++) {
        if (!isfinite(pd[q].diff)) {
            json_object_set_new(o, S_paired_keys[q], json_null());
            continue;
        }
        json_t *d = json_object();
        json_object_set_new(d, "difference", json_real(pd[q].diff));
        json_object_set_new(d, "stderr", json_real(pd[q].se));
        json_object_set_new(d, "ci95", json_pack("[f,f]", pd[q].lo, pd[q].hi));
        json_object_set_new(d, "unpaired_stderr", json_real(pd[q].se_unpaired));
        json_object_set_new(d, "stderr_ratio", cli_json_real(pd[q].se_unpaired / pd[q].se));
        json_object_set_new(o, S_paired_keys[q], d);
    }
    return o;
}

int cli_points_print_json(const cli_run_point *pts, size_t n, int paired)
{
    if (n == 1)
        return cli_print_json(cli_point_json(&pts[0]));
    json_t *arr = json_array();
    for (size_t i = 0; i < n; i++) {
        json_t *o = cli_point_json(&pts[i]);
        if (paired && i > 0)
            json_object_set_new(o, "paired", S_paired_json(&pts[0], &pts[i]));
        json_array_append_new(arr, o);
    }
    return cli_print_json(arr);
}

/* --- CSV ------------------------------------------------------------------------ */

/* The parameter names of the points, each once, in order of first
 * appearance. */
static size_t S_param_columns(const cli_run_point *pts, size_t n, const char **names, size_t cap)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        size_t np = sd_params_count(pts[i].cv.vt);
        for (size_t j = 0; j < np; j++) {
            const char *nm = pts[i].cv.vt->params[j].name;
            int seen = 0;
            for (size_t e = 0; e < k && !seen; e++)
                seen = strcmp(names[e], nm) == 0;
            if (!seen && k < cap)
                names[k++] = nm;
        }
    }
    return k;
}

static void S_csv_num(double x)
{
    if (isfinite(x))
        printf(",%.17g", x);
    else
        printf(",");
}

static void S_csv_stat(const sd_welford *w)
{
    double lo, hi;
    sd_welford_ci95(w, &lo, &hi);
    S_csv_num(w->mean);
    S_csv_num(sd_welford_stderr(w));
    S_csv_num(lo);
    S_csv_num(hi);
}

int cli_points_print_csv(const cli_run_point *pts, size_t n, int paired)
{
    const char *pn[SD_PARAMS_MAX * 8];
    size_t np = S_param_columns(pts, n, pn, sizeof pn / sizeof pn[0]);
    printf("algo");
    for (size_t j = 0; j < np; j++)
        printf(",%s", pn[j]);
    printf(",vocab,horizon,trials,seed,threads,ranks,seconds,version,model_source,model_file,model_sha256,"
           "model_seed,model_alpha,model_mix,model_rng,model_zipf_draft,model_zipf_target,kernel,stopped,"
           "rejections_mean,rejections_stderr,rejections_ci95_lo,rejections_ci95_hi,"
           "target_calls_mean,target_calls_stderr,target_calls_ci95_lo,target_calls_ci95_hi,"
           "tokens_per_call,tokens_per_call_stderr,tokens_per_call_ci95_lo,tokens_per_call_ci95_hi,"
           "accepted_per_iteration_mean,accepted_per_iteration_stderr,accepted_per_iteration_ci95_lo,"
           "accepted_per_iteration_ci95_hi,exact_rejections,exact_target_calls,baseline_exact_target_calls,"
           "rejections_rb_mean,rejections_rb_stderr,exact_bias,exact_bias_position,bias_estimate,"
           "bias_estimate_stderr,bias_estimate_noise_floor");
    if (paired)
        printf(",diff_rejections,diff_rejections_stderr,diff_rejections_unpaired_stderr,"
               "diff_target_calls,diff_target_calls_stderr,diff_target_calls_unpaired_stderr,paired_coupling,"
               "diff_rejections_se_ratio,diff_target_calls_se_ratio,"
               "diff_rejections_rb,diff_rejections_rb_stderr,diff_rejections_rb_unpaired_stderr,"
               "diff_rejections_rb_se_ratio,diff_target_calls_rb,diff_target_calls_rb_stderr,"
               "diff_target_calls_rb_unpaired_stderr,diff_target_calls_rb_se_ratio");
    putchar('\n');
    for (size_t i = 0; i < n; i++) {
        const cli_run_point *pt = &pts[i];
        const sd_sim_result *r = &pt->run.sim;
        json_t *pj = sd_params_json(&pt->cv.par, pt->cv.vt), *mj = json_object();
        cli_model_describe(&pt->mo, &pt->model.view, mj);
        json_t *m = json_object_get(mj, "model");
        fputs(pt->cv.vt->name, stdout);
        for (size_t j = 0; j < np; j++) {
            json_t *v = json_object_get(pj, pn[j]);
            if (json_is_integer(v))
                printf(",%lld", (long long)json_integer_value(v));
            else if (json_is_real(v))
                printf(",%.17g", json_real_value(v));
            else
                cli_csv_field(json_is_string(v) ? json_string_value(v) : NULL);
        }
        printf(",%zu,%zu,%llu,%llu,%u,%u,%.6f,%s", r->V, r->T, (unsigned long long)r->trials,
               (unsigned long long)r->seed, pt->run.threads, pt->ranks, r->seconds, SD_VERSION);
        cli_csv_field(json_string_value(json_object_get(m, "source")));
        cli_csv_field(pt->mo.file ? pt->mo.file : pt->mo.arpa.file);
        cli_csv_field(pt->model.sha256[0] ? pt->model.sha256 : NULL);
        json_t *ms = json_object_get(m, "model_seed");
        if (ms)
            printf(",%lld", (long long)json_integer_value(ms));
        else
            printf(",");
        S_csv_num(json_is_real(json_object_get(m, "alpha")) ? json_real_value(json_object_get(m, "alpha")) : NAN);
        S_csv_num(json_is_real(json_object_get(m, "mix")) ? json_real_value(json_object_get(m, "mix")) : NAN);
        /* the rest of the model's identity, as in JSON: the generator (when
         * not the Dirichlet default) and the Zipf model's exponents */
        cli_csv_field(json_string_value(json_object_get(m, "rng")));
        S_csv_num(json_is_real(json_object_get(m, "zipf_draft")) ? json_real_value(json_object_get(m, "zipf_draft")) : NAN);
        S_csv_num(json_is_real(json_object_get(m, "zipf_target")) ? json_real_value(json_object_get(m, "zipf_target"))
                                                                   : NAN);
        cli_csv_field(r->kernel);
        cli_csv_field(S_stop_name(pt));
        S_csv_stat(&r->rejections);
        S_csv_stat(&r->target_calls);
        double tpc, se, lo, hi;
        sd_run_tokens_per_call(r, &tpc, &se, &lo, &hi);
        S_csv_num(tpc);
        S_csv_num(se);
        S_csv_num(lo);
        S_csv_num(hi);
        S_csv_stat(&r->accepted);
        S_csv_num(pt->run.exact.rejections);
        S_csv_num(pt->run.exact.target_calls);
        S_csv_num(pt->run.baseline_calls);
        S_csv_num(pt->run.rb ? r->rejections_rb.mean : NAN);
        S_csv_num(pt->run.rb ? sd_welford_stderr(&r->rejections_rb) : NAN);
        S_csv_num(pt->run.bias_exact);
        S_csv_num(isfinite(pt->run.bias_exact) ? (double)pt->run.bias_n : NAN);
        /* empty without an estimate, as JSON's "bias_estimate": null */
        int has_est = isfinite(pt->run.bias_est.value);
        S_csv_num(pt->run.bias_est.value);
        S_csv_num(has_est ? pt->run.bias_est.stderr : NAN);
        S_csv_num(has_est ? pt->run.bias_est.noise_floor : NAN);
        if (paired) {
            sd_run_paired_stat pd[SD_RUN_PAIRED_N];
            if (i > 0 && sd_run_paired(&pts[0].run, &pt->run, pd) == 0) {
                for (int q = 0; q < 2; q++) {
                    S_csv_num(pd[q].diff);
                    S_csv_num(pd[q].se);
                    S_csv_num(pd[q].se_unpaired);
                }
                cli_csv_field(sd_run_coupling(&pts[0].run, &pt->run));
                S_csv_num(pd[SD_RUN_PAIRED_REJ].se_unpaired / pd[SD_RUN_PAIRED_REJ].se);
                S_csv_num(pd[SD_RUN_PAIRED_CALLS].se_unpaired / pd[SD_RUN_PAIRED_CALLS].se);
                for (int q = SD_RUN_PAIRED_REJ_RB; q < SD_RUN_PAIRED_N; q++) {
                    S_csv_num(pd[q].diff);
                    S_csv_num(pd[q].se);
                    S_csv_num(pd[q].se_unpaired);
                    S_csv_num(pd[q].se_unpaired / pd[q].se);
                }
            } else {
                printf(",,,,,,,,,,,,,,,,,");
            }
        }
        putchar('\n');
        json_decref(pj);
        json_decref(mj);
    }
    return cli_stdout_status();
}

/* --- the long table ---------------------------------------------------------- */

int cli_points_print_table(const cli_run_point *pts, size_t n, int paired)
{
    const cli_run_point *p0 = &pts[0];
    printf("simdec %s run: %zu points on common random numbers (the same seed: trial i uses stream "
           "(seed, i) at every point)\n", SD_VERSION, n);
    cli_model_summary(stdout, "model", &p0->mo, &p0->model.view);
    cli_model_identity_line(stdout, &p0->mo, &p0->model);
    double secs = 0.0;
    uint64_t tlo = p0->run.sim.trials, thi = p0->run.sim.trials;
    for (size_t i = 0; i < n; i++) {
        secs += pts[i].run.sim.seconds;
        tlo = pts[i].run.sim.trials < tlo ? pts[i].run.sim.trials : tlo;
        thi = pts[i].run.sim.trials > thi ? pts[i].run.sim.trials : thi;
    }
    /* --target-stderr or --time-limit stop each point on its own: then
     * each row names its trials */
    if (tlo == thi)
        printf("trials    %llu", (unsigned long long)tlo);
    else
        printf("trials    %llu to %llu (each point's at the end of its row)", (unsigned long long)tlo,
               (unsigned long long)thi);
    printf("   seed %llu   threads %u%s   %.3g s in all\n\n", (unsigned long long)p0->run.sim.seed, p0->run.threads,
           cli_ranks_text(p0), secs);
    printf("  %-30s %22s %22s %26s %12s\n", "verifier", "rejections (se)", "target calls (se)",
           "tokens/call [95% CI]", "exact calls");
    for (size_t i = 0; i < n; i++) {
        const cli_run_point *pt = &pts[i];
        const sd_sim_result *r = &pt->run.sim;
        char pars[512], label[600], a[64], b[64], c[64];
        sd_params_format(&pt->cv.par, pt->cv.vt, pars, sizeof pars);
        snprintf(label, sizeof label, "%s%s", pt->cv.vt->name, pars);
        double tpc, se, lo, hi;
        sd_run_tokens_per_call(r, &tpc, &se, &lo, &hi);
        snprintf(a, sizeof a, "%.5f (%.5f)", r->rejections.mean, sd_welford_stderr(&r->rejections));
        snprintf(b, sizeof b, "%.5f (%.5f)", r->target_calls.mean, sd_welford_stderr(&r->target_calls));
        snprintf(c, sizeof c, "%.4f [%.4f, %.4f]", tpc, lo, hi);
        printf("  %-30s %22s %22s %26s", label, a, b, c);
        if (isfinite(pt->run.exact.target_calls))
            printf(" %12.6f", pt->run.exact.target_calls);
        else if (tlo != thi)
            printf(" %12s", "");
        if (tlo != thi)
            printf("  %llu trials", (unsigned long long)r->trials);
        putchar('\n');
    }
    if (paired && n > 1) {
        static const char *const what[SD_RUN_PAIRED_N] = {"rejections", "target calls", "rejections (RB)",
                                                       "target calls (RB)"};
        char pars[512];
        sd_params_format(&p0->cv.par, p0->cv.vt, pars, sizeof pars);
        printf("\n  paired differences against %s%s (same trials): the mean of the per-trial differences,\n"
               "  its se, the se two independent runs would give, and their ratio.  Coupling output-first:\n"
               "  both verifiers output the same tokens, and their rejections are drawn from one uniform\n"
               "  given them (RB: expectations given them); common-seed: the same stream per trial only.\n",
               p0->cv.vt->name, pars);
        printf("  %-30s %-13s %-18s %12s %10s %10s %7s\n", "verifier", "coupling", "quantity", "difference",
               "paired se", "unpaired", "ratio");
        for (size_t i = 1; i < n; i++) {
            sd_run_paired_stat pd[SD_RUN_PAIRED_N];
            char label[600];
            sd_params_format(&pts[i].cv.par, pts[i].cv.vt, pars, sizeof pars);
            snprintf(label, sizeof label, "%s%s", pts[i].cv.vt->name, pars);
            if (sd_run_paired(&p0->run, &pts[i].run, pd))
                continue;
            for (int q = 0, first = 1; q < SD_RUN_PAIRED_N; q++) {
                if (!isfinite(pd[q].diff))
                    continue;
                double ratio = pd[q].se_unpaired / pd[q].se;
                char rt[32];
                if (isnan(ratio)) /* 0 / 0: neither run varies */
                    snprintf(rt, sizeof rt, "%7s", "-");
                else
                    snprintf(rt, sizeof rt, "%6.2fx", ratio);
                printf("  %-30s %-13s %-18s %12.6f %10.6f %10.6f %s\n", first ? label : "",
                       first ? sd_run_coupling(&p0->run, &pts[i].run) : "", what[q], pd[q].diff, pd[q].se,
                       pd[q].se_unpaired, rt);
                first = 0;
            }
        }
    }
    return cli_stdout_status();
}
