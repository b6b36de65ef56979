/* cmd_check.c — `simdec check`: is a verifier lossless?  Chi-square test of
 * the joint law of its first L output tokens against the exact target
 * joint (sims/engine/sd_check.h). */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../sims/engine/sd_check.h"
#include "../sims/engine/sd_params.h"
#include "../sims/exact/sd_exact_gen.h"
#include "../src/sd_power.h"
#include "cli.h"
#include "../src/sd_version.h"
#include "commands.h"

#define S_ALL_CELLS 64 /* tables up to this many cells are printed whole */
#define S_WORST 10     /* otherwise the cells with the largest |z| */
#define S_EXIT_BIASED 1

static const char S_help_head[] =
    "Usage: simdec check --algo NAME [verifier parameters] [model] [--L l]\n"
    "                    [--trials N] [--seed S] [--alpha a] [--threads N]\n"
    "                    [--min-expected e] [--fail-biased] [--json] [--plugin FILE]\n"
    "       simdec check --samples FILE [model] [--L l] [--alpha a] [--json] ...\n"
    "\n"
    "Runs the verifier N times, tabulates the joint law of its first l output\n"
    "tokens x_1..x_l (V^l cells) and compares it with the exact target joint of\n"
    "the chain by Pearson's chi-square test.  Cells whose expected count is below\n"
    "--min-expected are pooled (in index order) so that the test is honest; an\n"
    "output in a cell of target probability 0 gives p-value 0.  The verdict is\n"
    "'unbiased' when the p-value is >= alpha (and inconclusive when the test has\n"
    "no degrees of freedom left after pooling).  Each trial stops once x_1..x_l\n"
    "are out; trial i uses random stream (S, i), as in 'simdec run'.\n"
    "\n"
    "  --algo NAME        verifier (default token); 'simdec run --list' lists them\n"
    "  --L l              tokens tabulated, 1..T (default 2, or fewer when V^l\n"
    "                     would exceed 2^20 cells)\n"
    "  --trials N         number of trials (default 200000)\n"
    "  --seed S           random seed (default 1)\n"
    "  --alpha a          significance level in (0,1) (default 0.001)\n"
    "  --min-expected e   pooling threshold on expected counts (default 5)\n"
    "  --threads N        worker threads (default: all cores); the result does not\n"
    "                     depend on it\n"
    "  --json             one JSON object (keys: unbiased, p_value, chi2, dof,\n"
    "                     algo, seed, trials, L, max_abs_dev, cells, cells_tested,\n"
    "                     zero_hits, ...)\n"
    "  --exact            also the exact law of x_1..x_L (enumerated from the\n"
    "                     verifier's per-iteration law, or over greedy-block's\n"
    "                     state) and its TV to the target's\n"
    "                     (JSON exact_tv): ~1e-15 when lossless, else the true bias\n"
    "  --detect TV        choose the trials (instead of --trials) so that any bias\n"
    "                     of total variation TV is detected with probability 0.9\n"
    "                     at --alpha (the report's detectable_tv is that TV for\n"
    "                     the trials run)\n"
    "  --fail-biased      exit with status 1 when the verdict is 'biased'\n"
    "  --progress         progress on stderr even when it is not a terminal\n"
    "  --plugin FILE      load verifiers from a plugin (include/simdec.h); repeatable\n"
    "  --samples FILE     test sequences another program produced instead of a\n"
    "                     verifier: one line per trial, 0-based token ids separated\n"
    "                     by single spaces (as 'simdec run --samples' writes), at\n"
    "                     least l per line; the same test, against the model's\n"
    "                     exact law of x_1..x_l, with the lines as trials ('-':\n"
    "                     standard input)\n"
    "\n"
    "The verdict is data: the exit status is 0 whether the verifier is found\n"
    "unbiased or biased, unless --fail-biased is given.\n"
    "\n";

static void S_help(const cli_verifier *cv)
{
    cli_verifier_help(S_help_head, cv);
    fputs("\nIn 'check', --alpha is the significance level; give the generated model's\n"
          "Dirichlet concentration as --model-alpha A.\n", stdout);
}

/* Writes the tokens of cell k (x_1..x_L) as "a b c" into buf. */
static void S_cell_tokens(size_t k, size_t V, size_t L, char *buf, size_t len)
{
    size_t x[64], used = 0;
    for (size_t i = L; i-- > 0;) {
        x[i] = k % V;
        k /= V;
    }
    buf[0] = '\0';
    for (size_t i = 0; i < L && used + 1 < len; i++) {
        int w = snprintf(buf + used, len - used, i ? " %zu" : "%zu", x[i]);
        if (w < 0)
            break;
        used += (size_t)w;
    }
}

/* z = (observed - expected count) / sqrt(expected count); ±inf for an
 * observation in a probability-0 cell, 0 for an empty one. */
static double S_z(const sd_check_result *r, size_t k)
{
    double e = (double)r->trials * r->expected[k], o = r->observed[k];
    if (e > 0.0)
        return (o - e) / sqrt(e);
    return o > 0.0 ? INFINITY : 0.0;
}

/* The cells to show: all of them for a small table, else the S_WORST with
 * the largest |z| (ties by index).  Returns how many were written to idx. */
static size_t S_pick_cells(const sd_check_result *r, size_t *idx)
{
    if (r->cells <= S_ALL_CELLS) {
        for (size_t k = 0; k < r->cells; k++)
            idx[k] = k;
        return r->cells;
    }
    size_t m = 0;
    for (size_t k = 0; k < r->cells; k++) {
        double z = fabs(S_z(r, k));
        size_t at = m < S_WORST ? m++ : S_WORST;
        while (at > 0 && fabs(S_z(r, idx[at - 1])) < z) {
            if (at < S_WORST)
                idx[at] = idx[at - 1];
            at--;
        }
        if (at < S_WORST)
            idx[at] = k;
    }
    return m;
}

typedef struct {
    const sd_verifier_type *vt;
    const sd_chain *c;
    const cli_model_opts *mo;
    const sd_params *par;
    const sd_check_result *r;
    double detectable_tv; /* smallest TV detected w.p. 0.9 (src/sd_power.h) */
    double exact_tv;      /* --exact: TV of the exact law of x_1..x_L, or NaN */
    const char *exact_why; /* --exact refused: the reason */
    const char *samples;   /* --samples FILE, or NULL */
    const cli_model *id;   /* a --model FILE's identity (sha256, row_dev), as run's */
} S_report;

/* No degrees of freedom left after pooling: "unbiased" then only says that
 * no output fell in a cell of target probability 0. */
static int S_inconclusive(const sd_check_result *r)
{
    return r->unbiased && r->chi.dof == 0;
}

static int S_print_json(const S_report *rp)
{
    const sd_check_result *r = rp->r;
    json_t *o = json_object();
    json_object_set_new(o, "algo", rp->samples ? json_null() : json_string(rp->vt->name));
    if (rp->samples)
        json_object_set_new(o, "samples", json_string(rp->samples));
    json_object_set_new(o, "unbiased", json_boolean(r->unbiased));
    json_object_set_new(o, "inconclusive", json_boolean(S_inconclusive(r)));
    json_object_set_new(o, "p_value", cli_json_real(r->chi.p_value));
    json_object_set_new(o, "chi2", cli_json_real(r->chi.chi2));
    json_object_set_new(o, "dof", json_integer((json_int_t)r->chi.dof));
    json_object_set_new(o, "alpha", json_real(r->alpha));
    json_object_set_new(o, "max_abs_dev", json_real(r->chi.max_abs_dev));
    json_object_set_new(o, "seed", rp->samples ? json_null() : json_integer((json_int_t)r->seed));
    json_object_set_new(o, "trials", json_integer((json_int_t)r->trials));
    json_object_set_new(o, "L", json_integer((json_int_t)r->L));
    json_object_set_new(o, "cells", json_integer((json_int_t)r->cells));
    json_object_set_new(o, "cells_tested", json_integer((json_int_t)r->chi.cells_tested));
    json_object_set_new(o, "min_expected", json_real(r->min_expected));
    json_object_set_new(o, "zero_hits", json_integer((json_int_t)r->chi.zero_hits));
    if (!rp->samples)
        json_object_set_new(o, "lossless_claimed", json_boolean(sd_verifier_claims_lossless(rp->vt, rp->par)));
    json_object_set_new(o, "kernel", json_string(r->kernel));
    json_object_set_new(o, "vocab", json_integer((json_int_t)rp->c->V));
    json_object_set_new(o, "horizon", json_integer((json_int_t)rp->c->T));
    if (!rp->samples)
        json_object_set_new(o, "params", sd_params_json(rp->par, rp->vt));
    json_object_set_new(o, "detectable_tv", cli_json_real(rp->detectable_tv));
    json_object_set_new(o, "power", json_real(SD_POWER_DEFAULT));
    if (rp->exact_why)
        json_object_set_new(o, "exact_tv", cli_json_real(rp->exact_tv));
    if (rp->exact_why && *rp->exact_why)
        json_object_set_new(o, "exact_error", json_string(rp->exact_why));
    json_object_set_new(o, "version", json_string(SD_VERSION));
    sd_model md = sd_model_of_chain(rp->c);
    cli_model_describe(rp->mo, &md, o);
    cli_model_identity(rp->mo, rp->id, o);
    size_t idx[S_ALL_CELLS > S_WORST ? S_ALL_CELLS : S_WORST];
    size_t m = S_pick_cells(r, idx);
    json_t *cells = json_array();
    for (size_t i = 0; i < m; i++) {
        size_t k = idx[i], v = k;
        json_t *toks = json_array();
        size_t x[64];
        for (size_t j = r->L; j-- > 0;) {
            x[j] = v % r->V;
            v /= r->V;
        }
        for (size_t j = 0; j < r->L; j++)
            json_array_append_new(toks, json_integer((json_int_t)x[j]));
        json_array_append_new(cells, json_pack("{s:o, s:f, s:f, s:o}", "tokens", toks, "observed",
                                               r->observed[k], "expected",
                                               (double)r->trials * r->expected[k], "z",
                                               cli_json_real(S_z(r, k))));
    }
    json_object_set_new(o, r->cells <= S_ALL_CELLS ? "table" : "worst_cells", cells);
    return cli_print_json(o);
}

static int S_print_table(const S_report *rp)
{
    const sd_check_result *r = rp->r;
    const sd_chain *c = rp->c;
    if (rp->samples)
        printf("simdec check --samples %s: sequences from a file\n", rp->samples);
    else
        printf("simdec check --algo %s: %s\n", rp->vt->name, rp->vt->summary);
    sd_model md = sd_model_of_chain(c);
    cli_model_summary(stdout, "model", rp->mo, &md);
    cli_model_identity_line(stdout, rp->mo, rp->id);
    char pars[512];
    sd_params_format(rp->par, rp->vt, pars, sizeof pars);
    if (rp->samples)
        printf("trials    %llu (the lines of the file)   simdec %s\n", (unsigned long long)r->trials,
               SD_VERSION);
    else
        printf("verifier  %s%s (%s)\ntrials    %llu   seed %llu   simdec %s\n", rp->vt->name, pars,
               r->kernel, (unsigned long long)r->trials, (unsigned long long)r->seed, SD_VERSION);
    printf("tested    joint law of x_1..x_%zu: %zu cells, %zu after pooling cells with "
           "expected count < %g\n\n",
           r->L, r->cells, r->chi.cells_tested, r->min_expected);

    size_t idx[S_ALL_CELLS > S_WORST ? S_ALL_CELLS : S_WORST];
    size_t m = S_pick_cells(r, idx);
    if (r->cells > S_ALL_CELLS)
        printf("  the %zu cells with the largest |z| of %zu:\n", m, r->cells);
    printf("  %-*s %12s %14s %9s\n", (int)(2 * r->L + 8), "x_1..x_L", "observed", "expected", "z");
    for (size_t i = 0; i < m; i++) {
        char buf[256];
        S_cell_tokens(idx[i], r->V, r->L, buf, sizeof buf);
        printf("  %-*s %12.0f %14.2f %9.2f\n", (int)(2 * r->L + 8), buf, r->observed[idx[i]],
               (double)r->trials * r->expected[idx[i]], S_z(r, idx[i]));
    }
    printf("\n  chi2 %.4f   dof %.0f   p-value %.4g\n", r->chi.chi2, r->chi.dof, r->chi.p_value);
    printf("  max |observed/N - expected| over cells %.3g\n", r->chi.max_abs_dev);
    printf("  outputs in probability-0 cells %.0f\n", r->chi.zero_hits);
    if (isfinite(rp->detectable_tv))
        printf("  power      detects any bias of TV >= %.3g with probability %.1f\n", rp->detectable_tv,
               SD_POWER_DEFAULT);
    else /* 0 degrees of freedom: the chi-square test compares nothing */
        printf("  power      none: 0 degrees of freedom after pooling (too few trials, or a target law\n"
               "             of x_1..x_L with one cell); only outputs in probability-0 cells were tested\n");
    if (rp->exact_why && *rp->exact_why)
        printf("  exact TV   not computed: %s\n", rp->exact_why);
    if (rp->exact_why && !*rp->exact_why)
        printf("  exact TV of the law of x_1..x_L to the target's: %.3g\n", rp->exact_tv);
    printf("  verdict    %s (p-value %s alpha %g)%s%s\n", r->unbiased ? "unbiased" : "BIASED",
           r->unbiased ? ">=" : "<", r->alpha,
           !rp->samples && !sd_verifier_claims_lossless(rp->vt, rp->par)
               ? "; this verifier is lossy at these parameters by design"
               : "",
           S_inconclusive(r) ? "; inconclusive: no degrees of freedom (see power)" : "");
    return cli_stdout_status();
}

enum {
    O_ALGO = CLI_OPT_FIRST_FREE, O_L, O_TRIALS, O_SEED, O_ALPHA, O_MINEXP, O_THREADS,
    O_JSON, O_FAIL, O_EXACT, O_DETECT, O_SAMPLES
};
/* {"alpha"} comes before the model options so that it wins over their
 * --alpha (the generator's Dirichlet concentration, here --model-alpha):
 * getopt_long takes the first exact match. */
static const struct option S_base[] = {
    {"alpha", required_argument, 0, O_ALPHA},
    {"model-alpha", required_argument, 0, CLI_OPT_ALPHA},
    CLI_MODEL_LONGOPTS,
    CLI_PLUGIN_LONGOPT,
    {"algo", required_argument, 0, O_ALGO},
    {"L", required_argument, 0, O_L},
    {"trials", required_argument, 0, O_TRIALS},
    {"seed", required_argument, 0, O_SEED},
    {"min-expected", required_argument, 0, O_MINEXP},
    {"threads", required_argument, 0, O_THREADS},
    {"json", no_argument, 0, O_JSON},
    CLI_PROGRESS_LONGOPT,
    {"fail-biased", no_argument, 0, O_FAIL},
    {"exact", no_argument, 0, O_EXACT},
    {"detect", required_argument, 0, O_DETECT},
    {"samples", required_argument, 0, O_SAMPLES},
    {"help", no_argument, 0, 'h'},
    {0, 0, 0, 0},
};

/* What a check asks for, while its options are read (from getopt or from
 * cmd_check_fields). */
typedef struct {
    cli_verifier cv;
    cli_model_opts mo;
    sd_check_opts co;
    size_t threads;
    int json, fail_biased, exact;
    double detect;
    int trials_given;
    const char *samples, *sim_opt; /* sim_opt: an option --samples excludes */
} S_req;

static void S_req_init(S_req *rq)
{
    cli_model_init(&rq->mo);
    sd_check_defaults(&rq->co);
    rq->threads = 0;
    rq->json = rq->fail_biased = rq->exact = rq->trials_given = 0;
    rq->detect = 0.0;
    rq->samples = rq->sim_opt = NULL;
}

/* Option c with value arg: -1 to go on, 1 when c is no option of check's,
 * or an exit status after printing the error (0 after --help). */
static int S_option(S_req *rq, int c, const char *arg)
{
    int status = -1;
    if (cli_verifier_option(&rq->mo, &rq->cv, c, arg, &status))
        return status;
    sd_check_opts *co = &rq->co;
    sd_error err;
    int rc = SD_OK;
    switch (c) {
    case 'h': S_help(&rq->cv); return 0;
    case O_ALGO: break; /* found by cli_verifier_prescan */
    case O_L: rc = cli_parse_size("--L", arg, 1, 64, &co->L, &err); break;
    case O_TRIALS:
        rq->trials_given = 1;
        rc = cli_parse_trials(arg, &co->trials, &err);
        rq->sim_opt = "--trials";
        break;
    case O_SEED: rc = cli_parse_seed(arg, &co->seed, &err); rq->sim_opt = "--seed"; break;
    case O_ALPHA:
        rc = cli_parse_double("--alpha", arg, 0.0, 1.0, &co->alpha, &err);
        if (!rc && (co->alpha <= 0.0 || co->alpha >= 1.0))
            rc = sd_error_set(&err, SD_EUSAGE, "--alpha: expected a number strictly between 0 and 1, got '%s'",
                              arg);
        break;
    case O_MINEXP:
        rc = cli_parse_double("--min-expected", arg, 1e-9, 1e12, &co->min_expected, &err);
        break;
    case O_THREADS: rc = cli_parse_size("--threads", arg, 1, 1024, &rq->threads, &err); break;
    case O_JSON: rq->json = 1; break;
    case O_FAIL: rq->fail_biased = 1; break;
    case O_EXACT: rq->exact = 1; rq->sim_opt = "--exact"; break;
    case O_DETECT:
        rc = cli_parse_double("--detect", arg, 1e-9, 1.0, &rq->detect, &err);
        rq->sim_opt = "--detect";
        break;
    case O_SAMPLES: rq->samples = arg; rc = cli_check_path("--samples", arg, &err); break;
    default: return 1;
    }
    return rc ? cli_fail(&err) : -1;
}

/* The checks across options, the model, the test and its output. */
static int S_check(S_req *rq)
{
    int status = -1;
    const sd_verifier_type *vt = rq->cv.vt;
    sd_check_opts *co = &rq->co;
    cli_model_opts *mo = &rq->mo;
    sd_error err;
    if (rq->detect > 0.0 && rq->trials_given) /* one of them chooses the trials */
        status = cli_usage_error("check", "--detect chooses the trials: give --detect TV or --trials N, not both");
    if (status < 0 && rq->samples && (rq->cv.named || rq->sim_opt))
        status = cli_usage_error("check", "%s: not with --samples (the file's lines are the trials)",
                                 rq->cv.named ? "--algo" : rq->sim_opt);
    /* Refuse V^L before building a generated model of that vocabulary,
     * which may itself take minutes (a model file is only known once read). */
    if (status < 0 && co->L && !mo->file) {
        size_t V = mo->p ? mo->pV : mo->gen.V, cells = 1;
        for (size_t i = 0; i < co->L && status < 0; i++) {
            if (cells > SD_CHECK_MAX_CELLS / V) {
                sd_error_set(&err, SD_ETOOBIG, "--L %zu: the joint law of %zu tokens has V^L = %zu^%zu cells; limit %zu",
                             co->L, co->L, V, co->L, (size_t)SD_CHECK_MAX_CELLS);
                status = cli_fail(&err);
            }
            cells *= V;
        }
    }
    sd_chain *ch = NULL;
    cli_model id;
    if (status < 0 && !(ch = cli_model_build_id(mo, &id, &err)))
        status = cli_fail(&err);
    if (status >= 0)
        return status;
    co->threads = (unsigned)rq->threads;
    cli_progress pr = {0, 0};
    if (cli_stderr_is_tty()) {
        co->progress = cli_progress_show;
        co->progress_ctx = &pr;
    }
    if (rq->detect > 0.0) {
        /* --detect TV: the trials at which any bias of that TV is detected
         * with probability 0.9; dof bounded by the cells of positive
         * target probability minus one (more dof, more trials). */
        double detect = rq->detect;
        size_t L = co->L ? co->L : sd_check_default_L(ch, SD_CHECK_MAX_CELLS);
        size_t cells = sd_sim_cells(ch->V, L, SD_CHECK_MAX_CELLS);
        double *tg = cells ? malloc(cells * sizeof *tg) : NULL, dof = 0.0;
        if (tg && sd_chain_target_joint(ch, L, SD_CHECK_MAX_CELLS, tg, &err) == SD_OK)
            for (size_t i = 0; i < cells; i++)
                dof += tg[i] > 0.0;
        free(tg);
        co->trials = sd_power_trials(dof > 1.0 ? dof - 1.0 : 1.0, co->alpha, SD_POWER_DEFAULT, detect);
        const uint64_t max_trials = SD_SIM_MAX_BLOCKS * SD_SIM_BLOCK;
        if (co->trials > max_trials) { /* named as --detect: the user gave no such --trials */
            sd_error_set(&err, SD_ETOOBIG, "--detect %g: detecting a bias of TV %g at --alpha %g needs %s%.3g trials; "
                         "the limit is %llu (raise --detect)", detect, detect, co->alpha,
                         co->trials == UINT64_MAX ? "more than " : "", co->trials == UINT64_MAX ? 9e18 : (double)co->trials,
                         (unsigned long long)max_trials);
            sd_chain_free(ch);
            return cli_fail(&err);
        }
    }
    sd_check_result res;
    memset(&res, 0, sizeof res);
    int crc;
    const char *samples = rq->samples;
    if (samples) {
        int in = strcmp(samples, "-") == 0;
        FILE *f = in ? stdin : fopen(samples, "rb");
        crc = f ? sd_check_samples(ch, f, in ? "(stdin)" : samples, co, &res, &err)
                : sd_error_set(&err, SD_EIO, "--samples: cannot open '%s': %s", samples, strerror(errno));
        if (f && !in)
            fclose(f);
    } else {
        crc = sd_check_run(vt, ch, &rq->cv.par, co, &res, &err);
    }
    cli_progress_end(&pr);
    if (crc) {
        sd_check_result_free(&res);
        sd_chain_free(ch);
        return cli_fail(&err);
    }
    S_report rp = {vt, ch, mo, &rq->cv.par, &res, NAN, NAN, NULL, samples, &id};
    rp.detectable_tv = sd_power_detectable_tv(res.chi.dof, res.alpha, SD_POWER_DEFAULT, (double)res.trials);
    sd_error xerr;
    if (rq->exact) {
        rp.exact_why = "";
        if (sd_exact_gen_prefix_tv(vt, ch, &rq->cv.par, res.L, SD_CHECK_MAX_CELLS, &rp.exact_tv, &xerr))
            rp.exact_why = xerr.msg;
    }
    status = rq->json ? S_print_json(&rp) : S_print_table(&rp);
    if (status == 0 && rq->fail_biased && !res.unbiased)
        status = S_EXIT_BIASED;
    sd_check_result_free(&res);
    sd_chain_free(ch);
    return status;
}

static int S_option_any(void *rq, int c, const char *arg)
{
    return S_option(rq, c, arg);
}

/* The command from a command line (argv) or from named fields (JSON). */
static int S_read(int argc, char **argv, const char *algo, const cli_field *fields, size_t n)
{
    static const int refuse[] = {O_ALGO, 0};
    S_req rq;
    S_req_init(&rq);
    rq.json = !argv;
    int status = cli_verifier_read("check", argc, argv, algo, fields, n, S_base, NULL, refuse, S_option_any, &rq,
                                   &rq.cv, &rq.mo);
    if (status < 0) {
        status = S_check(&rq);
        cli_model_release(&rq.mo);
    }
    return status;
}

int cmd_check(int argc, char **argv)
{
    return S_read(argc, argv, NULL, NULL, 0);
}

int cmd_check_fields(const char *algo, const cli_field *fields, size_t n)
{
    return S_read(0, NULL, algo, fields, n);
}
