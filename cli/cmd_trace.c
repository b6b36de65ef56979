/* cmd_trace.c — `simdec trace`: the target calls, rejections and speed-up
 * of verifiers estimated from logged target-sampled sequences
 * (sims/exact/sd_trace.h: the exact expectation given each sequence,
 * averaged over sequences). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../sims/engine/sd_params.h"
#include "../sims/exact/sd_trace.h"
#include "../src/sd_mem.h"
#include "../src/sd_npy.h"
#include "../src/sd_sha256.h"
#include "../src/sd_version.h"
#include "cli.h"
#include "cmd_trace.h"
#include "commands.h"
#include "sweep.h"

static const char S_help[] =
    "Usage: simdec trace --tokens X.npy (--draft P.npy --target Q.npy | --ratios R.npy)\n"
    "                    --algo a,b,... [--gamma G|LIST|LO..HI|best] [--k LIST] [verifier parameters]\n"
    "                    [--c RATIO [--draft-cost token|step]] [--schedule] [--tol TOL]\n"
    "                    [--max-memory BYTES] [--gamma-max N] [--seed N] [--estimate]\n"
    "                    [--json | --csv]\n"
    "\n"
    "Target calls, rejections and speed-up of each verifier on logged sequences\n"
    "sampled from the target model.  A lossless verifier's output follows the\n"
    "target, so each logged sequence is a sample of its output; given it, the\n"
    "verifier's iterations are a hidden Markov chain whose law needs only the\n"
    "rows along the sequence (token and block: only the ratios p(x)/q(x)).\n"
    "Each sequence gives the exact expected target calls and rejections given\n"
    "it; their mean over sequences is unbiased, with its standard error and 95%\n"
    "CI over sequences.  Where a verifier's law given the output is too costly\n"
    "to compute exactly (tree-rrs-wor with 4 or more children per node at large\n"
    "V, or 3 on rows of many distinct draft probabilities) it is replaced by an\n"
    "unbiased Rao-Blackwellised estimate (one history per node, drawn from the\n"
    "stream of --seed): the mean stays unbiased and the standard error over\n"
    "sequences includes that noise; `method` says which was used.\n"
    "\n"
    "  --tokens X.npy    integers, shape (n, T): x_1..x_T of n sequences\n"
    "  --draft P.npy     float16/32/64, shape (n, T, V): p_t(.|x_{t-1}) per position\n"
    "  --target Q.npy    the same for the target q_t(.|x_{t-1})\n"
    "  --ratios R.npy    float, shape (n, T): p_t(x_t|x_{t-1}) / q_t(x_t|x_{t-1})\n"
    "                    (enough for token and block)\n"
    "  --algo LIST       verifiers: token, block (either form); rrs, spectr, batch,\n"
    "                    tree-rrs, tree-rrs-wor, tree-topk (rows); others are refused\n"
    "  --gamma G         draft length (0: to the end of the sequence); a list\n"
    "                    1,2,4, a range 1..8, or best: the G in 1..--gamma-max\n"
    "                    with the largest speed-up (needs --c)\n"
    "  --gamma-max N     largest G tried by --gamma best (default 16, at most T)\n"
    "  --k LIST          drafts of the multi-draft verifiers (a list sweeps)\n"
    "  --c RATIO         cost of drafting relative to one target call: adds the\n"
    "                    speed-up T / (calls x (1 + c x D)) over target-only decoding\n"
    "  --draft-cost token|step  D = draft tokens per iteration (token, default:\n"
    "                    k drafts of G tokens cost k G) or drafting steps (step: k\n"
    "                    drafts drafted in parallel cost G; a tree its depth)\n"
    "  --schedule        add the acceptance schedule: a_j = P(j-th draft of an\n"
    "                    iteration accepted | the first j-1 were), j = 1..G\n"
    "  --tol TOL         row-sum tolerance before renormalising (default by dtype:\n"
    "                    1e-9 float64, 1e-3 float32, 1e-2 float16)\n"
    "  --max-memory B    refuse before allocating more than B bytes (e.g. 1G)\n"
    "  --seed N          the stream of the estimated laws (default 1; sequence i\n"
    "                    draws from trial i)\n"
    "  --estimate        estimate wherever a verifier can, even where the exact\n"
    "                    law fits (to check the estimate against it)\n"
    "  --json, --csv     machine-readable output (a JSON object, or an array for\n"
    "                    several points; CSV with a header)\n"
    "Exit status: 0 ok, 64 usage, 65 bad data, 66 a file cannot be opened.\n";

typedef struct {
    const char *path[4]; /* tokens, draft, target, ratios */
    double c;            /* NaN: no speed-up */
    int step_cost;
    int schedule;
    cli_format fmt;
    double tol;
    size_t max_memory;
    int best;
    size_t gamma_max;
    uint64_t seed;
    int estimate;
} S_opts;

static const char *const S_files[4] = {"tokens", "draft", "target", "ratios"};

/* 1 for an option of trace itself (not a verifier's parameter); *flag: takes no value. */
static int S_own(const char *name, int *flag)
{
    static const char *const vals[] = {"tokens", "draft", "target", "ratios", "c", "draft-cost",
                                       "tol", "max-memory", "gamma-max", "algo", "plugin", "seed", NULL};
    static const char *const flags[] = {"json", "csv", "schedule", "estimate", "help", NULL};
    for (size_t i = 0; flags[i]; i++)
        if (!strcmp(name, flags[i])) {
            *flag = 1;
            return 1;
        }
    *flag = 0;
    for (size_t i = 0; vals[i]; i++)
        if (!strcmp(name, vals[i]))
            return 1;
    return 0;
}

/* Splits argv[i] into name and value (--name=value or --name value);
 * returns the index of the last argument used, or -1 (not an option, or a
 * value missing). */
static int S_arg(int argc, char **argv, int i, char *name, size_t len, const char **value, int flag_known)
{
    const char *a = argv[i];
    if (strncmp(a, "--", 2) || !a[2])
        return -1;
    const char *eq = strchr(a, '=');
    size_t nl = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
    if (nl >= len)
        return -1;
    memcpy(name, a + 2, nl);
    name[nl] = 0;
    int flag = 0;
    if (flag_known)
        S_own(name, &flag);
    if (eq) {
        *value = eq + 1;
        return i;
    }
    if (flag) {
        *value = NULL;
        return i;
    }
    if (i + 1 >= argc)
        return -1;
    *value = argv[i + 1];
    return i + 1;
}

/* The options of trace itself (from the first point's argv). */
static int S_parse_own(int argc, char **argv, S_opts *o, int have_input)
{
    sd_error err;
    for (int i = 1; i < argc; i++) {
        char name[64];
        const char *v;
        int j = S_arg(argc, argv, i, name, sizeof name, &v, 1);
        if (j < 0)
            return cli_usage_error("trace", "'%s': expected --OPTION VALUE", argv[i]);
        int flag;
        if (!S_own(name, &flag)) {
            i = j;
            continue;
        }
        if (flag && v && strchr(argv[i], '='))
            return cli_usage_error("trace", "--%s takes no value", name);
        int rf = -1;
        if (!strcmp(name, "json"))
            rf = cli_set_format("trace", &o->fmt, CLI_FMT_JSON);
        if (!strcmp(name, "csv"))
            rf = cli_set_format("trace", &o->fmt, CLI_FMT_CSV);
        if (rf >= 0)
            return rf;
        if (!strcmp(name, "schedule"))
            o->schedule = 1;
        if (!strcmp(name, "estimate"))
            o->estimate = 1;
        if (!strcmp(name, "seed") && cli_parse_seed(v, &o->seed, &err))
            return cli_fail(&err);
        for (int f = 0; f < 4; f++)
            if (!strcmp(name, S_files[f])) {
                if (have_input)
                    return cli_usage_error("trace", "--%s: the arrays are given directly", name);
                char opt[80];
                snprintf(opt, sizeof opt, "--%s", name);
                if (cli_check_path(opt, v, &err))
                    return cli_fail(&err);
                o->path[f] = v;
            }
        if (!strcmp(name, "c") && cli_parse_double("--c", v, 0.0, 1e6, &o->c, &err))
            return cli_fail(&err);
        if (!strcmp(name, "tol") && cli_parse_double("--tol", v, 0.0, 0.5, &o->tol, &err))
            return cli_fail(&err);
        if (!strcmp(name, "gamma-max") && cli_parse_size("--gamma-max", v, 1, 4096, &o->gamma_max, &err))
            return cli_fail(&err);
        if (!strcmp(name, "max-memory")) {
            cli_model_opts mo;
            cli_model_init(&mo);
            int r = cli_model_option(&mo, CLI_OPT_MAX_MEMORY, v, &err);
            o->max_memory = mo.max_memory;
            cli_model_release(&mo);
            if (r < 0)
                return cli_fail(&err);
        }
        if (!strcmp(name, "draft-cost")) {
            if (!strcmp(v, "token"))
                o->step_cost = 0;
            else if (!strcmp(v, "step"))
                o->step_cost = 1;
            else
                return cli_usage_error("trace", "--draft-cost '%s': expected token or step", v);
        }
        i = j;
    }
    if (o->best && isnan(o->c))
        return cli_usage_error("trace", "--gamma best maximises the speed-up: give --c RATIO");
    return -1;
}

/* The verifier and parameters of one point. */
static int S_parse_point(int argc, char **argv, sd_trace_point *pt)
{
    sd_error err;
    const char *algo = NULL;
    for (int i = 1; i < argc; i++) {
        char name[64];
        const char *v;
        int j = S_arg(argc, argv, i, name, sizeof name, &v, 1);
        if (j >= 0 && !strcmp(name, "algo"))
            algo = v;
        if (j > i)
            i = j;
    }
    if (!algo)
        return cli_usage_error("trace", "give --algo NAME[,NAME...]");
    pt->vt = sd_verifier_find(algo);
    if (!pt->vt)
        return cli_usage_error("trace", "--algo '%s': unknown verifier (simdec run --list)", algo);
    sd_params_defaults(&pt->par, pt->vt);
    for (int i = 1; i < argc; i++) {
        char name[64];
        const char *v;
        int j = S_arg(argc, argv, i, name, sizeof name, &v, 1);
        int flag;
        int best = j >= 0 && !strcmp(name, "gamma") && v && !strcmp(v, "best"); /* S_opts.best */
        if (j >= 0 && !S_own(name, &flag) && !best && sd_params_parse(&pt->par, pt->vt, name, v, &err))
            return cli_fail(&err);
        if (j > i)
            i = j;
    }
    return -1;
}

/* Draft cost units per iteration: tokens (k drafts of G, or the tree's
 * nodes) or steps (G, or the tree's depth); NaN when the draft length is
 * the rest of the sequence. */
static double S_draft_units(const sd_trace_point *pt, int step)
{
    if (pt->par.tree_depth)
        return step ? (double)pt->par.tree_depth : (double)sd_params_tree_nodes(&pt->par);
    if (pt->par.gamma == 0)
        return NAN;
    double k = 1.0;
    if (pt->vt->params)
        for (size_t i = 0; pt->vt->params[i].name; i++)
            if (pt->vt->params[i].slot == SD_SLOT_K)
                k = (double)pt->par.k;
    return (step ? 1.0 : k) * (double)pt->par.gamma;
}

/* "gamma 4, k 2": the parameters as run prints them, without the leading ", ". */
static void S_params_text(const sd_trace_point *pt, char *buf, size_t len)
{
    char tmp[256];
    sd_params_format(&pt->par, pt->vt, tmp, sizeof tmp);
    snprintf(buf, len, "%s", strncmp(tmp, ", ", 2) ? tmp : tmp + 2);
}

typedef struct {
    double mean, se, lo, hi;
} S_stat;

static S_stat S_of(const sd_welford *w)
{
    S_stat s = {w->mean, sd_welford_stderr(w), 0, 0};
    sd_welford_ci95(w, &s.lo, &s.hi);
    return s;
}

/* T / (x · f) mapped through the CI of the mean calls x. */
static S_stat S_inverse(const sd_welford *calls, double T, double f)
{
    S_stat c = S_of(calls), s;
    s.mean = T / (c.mean * f);
    s.se = T * c.se / (c.mean * c.mean * f);
    s.lo = c.hi > 0 ? T / (c.hi * f) : NAN;
    s.hi = c.lo > 0 ? T / (c.lo * f) : INFINITY;
    return s;
}

static json_t *S_stat_json(S_stat s)
{
    json_t *o = json_object();
    json_object_set_new(o, "mean", cli_json_real(s.mean));
    json_object_set_new(o, "stderr", cli_json_real(s.se));
    json_object_set_new(o, "ci95", json_pack("[o,o]", cli_json_real(s.lo), cli_json_real(s.hi)));
    return o;
}

typedef struct {
    const sd_trace_input *in;
    const sd_trace_shape *sh;
    const char (*sha)[65]; /* [4] ("" when not a file) */
    double max_dev, tol;
    const S_opts *o;
} S_ctx;

static json_t *S_inputs_json(const S_ctx *x)
{
    json_t *o = json_object();
    const sd_npy *a[4] = {x->in->tokens, x->in->draft, x->in->target, x->in->ratios};
    for (int f = 0; f < 4; f++) {
        if (!a[f])
            continue;
        char b[32];
        json_t *e = json_object();
        json_object_set_new(e, "path", x->o->path[f] ? json_string(x->o->path[f]) : json_null());
        json_object_set_new(e, "sha256", x->sha[f][0] ? json_string(x->sha[f]) : json_null());
        json_object_set_new(e, "dtype", json_string(sd_npy_type_name(a[f], b, sizeof b)));
        json_t *sh = json_array();
        for (size_t d = 0; d < a[f]->ndim; d++)
            json_array_append_new(sh, json_integer((json_int_t)a[f]->shape[d]));
        json_object_set_new(e, "shape", sh);
        json_object_set_new(o, S_files[f], e);
    }
    return o;
}

static json_t *S_point_json(const S_ctx *x, const sd_trace_point *pt, const sd_trace_result *r)
{
    double T = (double)x->sh->T;
    json_t *o = json_object();
    json_object_set_new(o, "version", json_string(SD_VERSION));
    json_object_set_new(o, "command", json_string("trace"));
    json_object_set_new(o, "algo", json_string(pt->vt->name));
    json_object_set_new(o, "params", sd_params_json(&pt->par, pt->vt));
    json_object_set_new(o, "sequences", json_integer((json_int_t)x->sh->n));
    json_object_set_new(o, "T", json_integer((json_int_t)x->sh->T));
    json_object_set_new(o, "V", x->sh->V ? json_integer((json_int_t)x->sh->V) : json_null());
    json_object_set_new(o, "inputs", S_inputs_json(x));
    json_object_set_new(o, "row_tolerance", x->sh->V ? cli_json_real(x->tol) : json_null());
    json_object_set_new(o, "max_row_deviation", x->sh->V ? cli_json_real(x->max_dev) : json_null());
    if (r->estimated)
        json_object_set_new(o, "method", json_string("rao-blackwellised (one history per node): expectation "
                                                     "given each logged sequence with the verifier's law given "
                                                     "its output estimated without bias where marked in "
                                                     "laws_estimated, mean over sequences; stderr and ci95 over "
                                                     "sequences, including the estimate's noise"));
    else
        json_object_set_new(o, "method", json_string("exact expectation given each logged sequence (the "
                                                     "verifier's law given its output), mean over sequences; "
                                                     "stderr and ci95 over sequences"));
    json_object_set_new(o, "seed", json_integer((json_int_t)x->o->seed));
    json_object_set_new(o, "laws", json_integer((json_int_t)r->laws));
    json_object_set_new(o, "laws_estimated", json_integer((json_int_t)r->estimated));
    json_object_set_new(o, "target_calls", S_stat_json(S_of(&r->calls)));
    json_object_set_new(o, "rejections", S_stat_json(S_of(&r->rej)));
    S_stat cpt = S_of(&r->calls);
    cpt.mean /= T, cpt.se /= T, cpt.lo /= T, cpt.hi /= T;
    json_object_set_new(o, "calls_per_token", S_stat_json(cpt));
    json_object_set_new(o, "tokens_per_call", S_stat_json(S_inverse(&r->calls, T, 1.0)));
    if (!isnan(x->o->c)) {
        double D = S_draft_units(pt, x->o->step_cost);
        json_object_set_new(o, "c", cli_json_real(x->o->c));
        json_object_set_new(o, "draft_cost", json_string(x->o->step_cost ? "step" : "token"));
        json_object_set_new(o, "draft_units_per_iteration", cli_json_real(D));
        json_object_set_new(o, "speedup",
                            isnan(D) ? json_null() : S_stat_json(S_inverse(&r->calls, T, 1.0 + x->o->c * D)));
    }
    if (x->o->schedule) {
        json_t *s = json_array();
        for (size_t j = 0; j < r->G; j++)
            json_array_append_new(s, r->tried[j] > 0 ? cli_json_real(r->accepted[j] / r->tried[j]) : json_null());
        json_object_set_new(o, "schedule", s);
    }
    return o;
}

/* What one output row needs: the point and its result. */
typedef struct {
    const sd_trace_point *pt;
    const sd_trace_result *r;
    json_t *best; /* [{gamma, speedup}] of --gamma best, or NULL */
} S_row;

static void S_print_table(const S_ctx *x, const S_row *rows, size_t n)
{
    const sd_trace_shape *sh = x->sh;
    printf("trace        %zu sequences of T = %zu tokens", sh->n, sh->T);
    if (sh->V)
        printf(", V = %zu", sh->V);
    printf("\n");
    const sd_npy *a[4] = {x->in->tokens, x->in->draft, x->in->target, x->in->ratios};
    for (int f = 0; f < 4; f++)
        if (a[f]) {
            char b[32];
            printf("  %-8s   %s  %s", S_files[f], x->o->path[f] ? x->o->path[f] : "(array)",
                   sd_npy_type_name(a[f], b, sizeof b));
            if (x->sha[f][0])
                printf("  sha256 %s", x->sha[f]);
            printf("\n");
        }
    if (sh->V)
        printf("rows         renormalised; largest |row sum - 1| %.3g (tolerance %g)\n", x->max_dev, x->tol);
    int est = 0;
    for (size_t i = 0; i < n; i++)
        est |= rows[i].r->estimated > 0;
    printf("method       exact expectation given each sequence, mean over sequences (se, 95%% CI over "
           "sequences)\n");
    if (est)
        printf("             rb: the law given the output estimated without bias where exact is refused "
               "(rao-blackwellised,\n             one history per node, seed %llu); the se includes its "
               "noise\n", (unsigned long long)x->o->seed);
    printf("\n");
    int sp = !isnan(x->o->c);
    printf("%-14s %-24s %22s %22s %12s %26s", "algo", "params", "target calls (se)", "rejections (se)",
           "calls/token", "tokens/call [95% CI]");
    if (sp)
        printf(" %26s", "speed-up [95% CI]");
    printf("\n");
    for (size_t i = 0; i < n; i++) {
        const sd_trace_point *pt = rows[i].pt;
        const sd_trace_result *r = rows[i].r;
        char ps[256];
        S_params_text(pt, ps, sizeof ps);
        S_stat c = S_of(&r->calls), j = S_of(&r->rej), t = S_inverse(&r->calls, (double)sh->T, 1.0);
        char b1[64], b2[64], b3[64];
        snprintf(b1, sizeof b1, "%.4f (%.4f)", c.mean, c.se);
        snprintf(b2, sizeof b2, "%.4f (%.4f)", j.mean, j.se);
        snprintf(b3, sizeof b3, "%.4f [%.4f, %.4f]", t.mean, t.lo, t.hi);
        printf("%-14s %-24s %22s %22s %12.4f %26s", pt->vt->name, ps[0] ? ps : "-", b1, b2,
               c.mean / (double)sh->T, b3);
        if (sp) {
            double D = S_draft_units(pt, x->o->step_cost);
            if (isnan(D))
                printf(" %26s", "n/a (give --gamma)");
            else {
                S_stat s = S_inverse(&r->calls, (double)sh->T, 1.0 + x->o->c * D);
                snprintf(b3, sizeof b3, "%.4f [%.4f, %.4f]", s.mean, s.lo, s.hi);
                printf(" %26s", b3);
            }
        }
        if (rows[i].r->estimated)
            printf("  rb");
        if (rows[i].best)
            printf("  <- best gamma");
        printf("\n");
        if (x->o->schedule) {
            printf("  schedule     ");
            for (size_t q = 0; q < r->G; q++)
                printf("%s%.4f", q ? ", " : "", r->tried[q] > 0 ? r->accepted[q] / r->tried[q] : NAN);
            printf("\n");
        }
    }
    if (sp)
        printf("\nspeed-up     T / (target calls x (1 + c x D)), c = %g, D = draft %s per iteration\n", x->o->c,
               x->o->step_cost ? "steps" : "tokens");
}

static void S_print_csv(const S_ctx *x, const S_row *rows, size_t n)
{
    int sp = !isnan(x->o->c);
    printf("algo,params,sequences,T,V,target_calls,target_calls_se,target_calls_lo,target_calls_hi,rejections,"
           "rejections_se,rejections_lo,rejections_hi,calls_per_token,tokens_per_call,tokens_per_call_se,"
           "tokens_per_call_lo,tokens_per_call_hi%s%s,max_row_deviation,tokens_sha256,draft_sha256,target_sha256,"
           "ratios_sha256,method,seed\n", sp ? ",c,draft_cost,speedup,speedup_se,speedup_lo,speedup_hi" : "",
           x->o->schedule ? ",schedule" : "");
    for (size_t i = 0; i < n; i++) {
        const sd_trace_point *pt = rows[i].pt;
        const sd_trace_result *r = rows[i].r;
        char ps[256];
        S_params_text(pt, ps, sizeof ps);
        S_stat c = S_of(&r->calls), j = S_of(&r->rej), t = S_inverse(&r->calls, (double)x->sh->T, 1.0);
        fputs(pt->vt->name, stdout);
        cli_csv_field(ps);
        printf(",%zu,%zu,%zu,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g", x->sh->n,
               x->sh->T, x->sh->V, c.mean, c.se, c.lo, c.hi, j.mean, j.se, j.lo, j.hi, c.mean / (double)x->sh->T,
               t.mean, t.se, t.lo, t.hi);
        if (sp) {
            double D = S_draft_units(pt, x->o->step_cost);
            S_stat s = S_inverse(&r->calls, (double)x->sh->T, 1.0 + x->o->c * D);
            printf(",%.17g,%s,%.17g,%.17g,%.17g,%.17g", x->o->c, x->o->step_cost ? "step" : "token", s.mean, s.se,
                   s.lo, s.hi);
        }
        if (x->o->schedule) {
            char sched[4096];
            size_t m = 0;
            for (size_t q = 0; q < r->G && m < sizeof sched - 32; q++)
                m += (size_t)snprintf(sched + m, sizeof sched - m, "%s%.17g", q ? ";" : "",
                                      r->tried[q] > 0 ? r->accepted[q] / r->tried[q] : NAN);
            cli_csv_field(sched);
        }
        printf(",%.17g", x->max_dev);
        for (int f = 0; f < 4; f++)
            printf(",%s", x->sha[f]);
        printf(",%s,%llu\n", r->estimated ? "rao-blackwellised" : "exact", (unsigned long long)x->o->seed);
    }
}

int cli_trace_with_input(int argc, char **argv, const sd_trace_input *given, json_t **json_out)
{
    S_opts o = {.c = NAN, .gamma_max = 16, .seed = 1};
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            fputs(S_help, stdout);
            return 0;
        }
    /* The one pass over argv: --gamma best (the last --gamma wins) picks
     * each point's best G; a sweep leaves it in every point's argv (it is
     * no list), where S_parse_point passes it over. */
    cli_sweep sw = {0};
    cli_args args;
    int status = cli_args_scan(argc, argv, &args) ? cli_out_of_memory() : cli_sweep_expand("trace", &args, &sw);
    const char *gv = status < 0 ? cli_args_last(&args, "gamma", NULL, NULL) : NULL;
    o.best = gv && !strcmp(gv, "best");
    cli_args_free(&args);
    sd_trace_point *pts = NULL;
    sd_trace_result *res = NULL;
    S_row *rows = NULL;
    sd_npy arr[4];
    memset(arr, 0, sizeof arr);
    char sha[4][65] = {"", "", "", ""};
    size_t npts = 0, nrows = 0;
    if (status >= 0)
        goto out;
    status = S_parse_own(sw.argc[0], sw.argv[0], &o, given != NULL);
    if (status >= 0)
        goto out;
    /* the points (each verifier's gamma 1..gamma-max with --gamma best) */
    size_t cap = sw.n * (o.best ? o.gamma_max : 1);
    pts = calloc(cap, sizeof *pts);
    rows = calloc(sw.n, sizeof *rows);
    size_t *first = calloc(sw.n + 1, sizeof *first);
    if (!pts || !rows || !first) {
        free(first);
        status = cli_out_of_memory();
        goto out;
    }
    sd_trace_input in = {0};
    if (given)
        in = *given;
    else {
        if (!o.path[0]) {
            free(first);
            status = cli_usage_error("trace", "give --tokens X.npy and --draft/--target or --ratios");
            goto out;
        }
        sd_error err;
        const sd_npy **slot[4] = {&in.tokens, &in.draft, &in.target, &in.ratios};
        const char **name[4] = {&in.tokens_name, &in.draft_name, &in.target_name, &in.ratios_name};
        for (int f = 0; f < 4; f++) {
            if (!o.path[f])
                continue;
            if (sd_npy_open(&arr[f], o.path[f], &err) || sd_sha256_file(o.path[f], sha[f], &err)) {
                free(first);
                status = cli_fail(&err);
                goto out;
            }
            *slot[f] = &arr[f];
            *name[f] = o.path[f];
        }
    }
    in.tol = o.tol;
    sd_trace_shape sh;
    sd_error err;
    if (sd_trace_check(&in, &sh, &err)) {
        free(first);
        status = cli_fail(&err);
        goto out;
    }
    for (size_t j = 0; j < sw.n; j++) {
        sd_trace_point pt = {0};
        status = S_parse_point(sw.argc[j], sw.argv[j], &pt);
        if (status >= 0) {
            free(first);
            goto out;
        }
        pt.seed = o.seed;
        pt.estimate = o.estimate;
        first[j] = npts;
        if (o.best && sd_params_decl(pt.vt, "gamma", NULL)) {
            size_t gm = o.gamma_max < sh.T ? o.gamma_max : sh.T;
            for (size_t g = 1; g <= gm; g++) {
                pts[npts] = pt;
                pts[npts].par.gamma = g;
                npts++;
            }
        } else
            pts[npts++] = pt;
    }
    first[sw.n] = npts;
    res = calloc(npts, sizeof *res);
    if (!res) {
        free(first);
        status = cli_out_of_memory();
        goto out;
    }
    double max_dev = 0.0;
    if (sd_trace_eval(&in, pts, npts, sd_mem_budget(o.max_memory), res, &max_dev, &err)) {
        free(res);
        res = NULL;
        free(first);
        status = cli_fail(&err);
        goto out;
    }
    /* one row per sweep point: with --gamma best the best gamma's */
    for (size_t j = 0; j < sw.n; j++) {
        size_t b = first[j];
        if (o.best && first[j + 1] - first[j] > 1) {
            double bs = -1.0;
            json_t *tried = json_array();
            for (size_t i = first[j]; i < first[j + 1]; i++) {
                double D = S_draft_units(&pts[i], o.step_cost);
                double s = (double)sh.T / (res[i].calls.mean * (1.0 + o.c * D));
                json_array_append_new(tried, json_pack("{s:i, s:o}", "gamma", (json_int_t)pts[i].par.gamma,
                                                       "speedup", cli_json_real(s)));
                if (s > bs) {
                    bs = s;
                    b = i;
                }
            }
            rows[nrows].best = tried;
        }
        rows[nrows].pt = &pts[b];
        rows[nrows].r = &res[b];
        nrows++;
    }
    free(first);
    S_ctx x = {&in, &sh, (const char(*)[65])sha, max_dev,
               in.tol > 0 ? in.tol : (in.draft ? sd_trace_default_tol(in.draft->size < in.target->size ? in.draft->size : in.target->size) : 0.0),
               &o};
    if (o.fmt == CLI_FMT_JSON || json_out) {
        json_t *all = nrows > 1 ? json_array() : NULL, *one = NULL;
        for (size_t i = 0; i < nrows; i++) {
            one = S_point_json(&x, rows[i].pt, rows[i].r);
            if (rows[i].best) {
                json_object_set_new(one, "gamma_best", json_true());
                json_object_set(one, "gamma_tried", rows[i].best);
            }
            if (all)
                json_array_append_new(all, one);
        }
        json_t *v = all ? all : one;
        if (json_out) {
            *json_out = v;
            status = 0;
        } else
            status = cli_print_json(v);
    } else if (o.fmt == CLI_FMT_CSV) {
        S_print_csv(&x, rows, nrows);
        status = cli_stdout_status();
    } else {
        S_print_table(&x, rows, nrows);
        status = cli_stdout_status();
    }
out:
    if (rows)
        for (size_t i = 0; i < nrows; i++)
            json_decref(rows[i].best);
    if (res)
        for (size_t i = 0; i < npts; i++)
            sd_trace_result_free(&res[i]);
    free(res);
    free(rows);
    free(pts);
    for (int f = 0; f < 4; f++)
        sd_npy_close(&arr[f]);
    cli_sweep_free(&sw);
    return status < 0 ? 0 : status;
}

int cmd_trace(int argc, char **argv)
{
    return cli_trace_with_input(argc, argv, NULL, NULL);
}
