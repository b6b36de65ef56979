/* cmd_run.c — `simdec run`: parses the command line, calls the run API
 * (sims/engine/sd_run.h) once per point and prints.  The simulation step is
 * replaceable (cmd_run.h) so simdec-mpi shares everything else. */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../sims/engine/sd_params.h"
#include "../sims/engine/sd_run.h"
#include "../src/sd_samples.h"
#include "cli.h"
#include "cmd_run.h"
#include "sweep.h"
#include "../src/sd_version.h"
#include "commands.h"

#define S_DEFAULT_TRIALS 10000u
#define S_DEFAULT_SEED 1u
/* The trial cap of --target-stderr without --trials: 10^8 (24 415 blocks). */
#define S_TARGET_SE_TRIALS 100000000u

static const char S_help_head[] =
    "Usage: simdec run [--algo NAME[,NAME...]] [verifier parameters] [model]\n"
    "                  [--trials N] [--seed S] [--threads N] [--time-limit SEC]\n"
    "                  [--target-stderr X] [--paired] [--progress] [--estimator rb|plain]\n"
    "                  [--json|--csv]\n"
    "\n"
    "Simulates a verifier on the model and reports, per trial (one pass over the\n"
    "horizon): rejections, target calls, tokens per target call and accepted\n"
    "drafts per iteration, with standard errors and 95% intervals, beside the exact\n"
    "value where the verifier has one.  The same --seed gives the same output for\n"
    "any --threads (and any number of MPI ranks of simdec-mpi).\n"
    "\n"
    "  --algo NAME     verifier (default token); --list shows them all\n"
    "  --trials N      number of trials (default 10000)\n"
    "  --seed S        random seed (default 1); trial i uses stream (S, i)\n"
    "  --threads N     worker threads (default: all cores)\n"
    "  --time-limit SEC    start no block of 4096 trials after SEC seconds; the\n"
    "                  output is that of --trials = the trials reported\n"
    "  --target-stderr X   stop at the first whole block of trials where the stderr\n"
    "                  of the mean rejections is <= X (reproducible); --trials caps\n"
    "                  it (default 10^8; JSON \"stopped\": \"trials-cap\" if it does)\n"
    "  --estimator rb|plain  rb (default): also the Rao-Blackwellised estimate of\n"
    "                  rejections (each iteration's rejection probability given what\n"
    "                  it drew: same mean, smaller variance) where the verifier has\n"
    "                  one (an explicit rb fails otherwise); plain: no rb\n"
    "  --json, --csv   machine-readable output (default: a table); not both\n"
    "  --samples FILE  also write each trial's output tokens to FILE, one line per\n"
    "                  trial, 0-based token ids separated by single spaces (the\n"
    "                  format 'simdec check --samples' reads); not with a sweep\n"
    "  --L l           with --samples: the first l tokens x_1..x_l (default all T)\n"
    "  --progress      progress on stderr even when it is not a terminal\n"
    "  --list          list the verifiers and their parameters (--json: a JSON array; --csv)\n"
    "  --plugin FILE   load verifiers from a plugin (include/simdec.h); repeatable\n"
    "\n"
    "Sweeps: --algo a,b and a list on any parameter but --tree, or a range on a\n"
    "whole-number one (--gamma 1..8, --k 2,4, --eps 0,0.1, --residual opt,uno),\n"
    "run the cross product on the same --seed (common random numbers: trial i of\n"
    "every point uses stream (S, i)) and print one long table, CSV (one header, a\n"
    "column per parameter) or JSON array.\n"
    "  --paired        also the difference of each point from the first: mean of\n"
    "                  the per-trial differences, its paired stderr, the stderr\n"
    "                  two independent runs would give and their ratio.  token and\n"
    "                  block (any gamma) then run output-first: the same output\n"
    "                  tokens in trial i and rejection counts drawn from one uniform\n"
    "                  given them (3.6x tighter, token vs block, default chain)\n"
    "\n";

_Static_assert(SD_SIM_BLOCK == 4096, "the help text states the block size");

static double S_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static const char *S_stop_name(int stop)
{
    return stop == SD_SIM_STOP_TIME ? "time-limit" : stop == SD_SIM_STOP_STDERR ? "target-stderr" : "done";
}

static void S_row(const char *name, const sd_welford *w, double exact)
{
    double lo, hi, se = sd_welford_stderr(w);
    sd_welford_ci95(w, &lo, &hi);
    printf("  %-24s %12.6f %10.6f  [%.6f, %.6f]", name, w->mean, se, lo, hi);
    if (isfinite(exact)) {
        double z = cli_gap_in_se(w->mean, exact, se);
        if (isfinite(z))
            printf("  %12.6f  %+6.2f", exact, z);
        else
            printf("  %12.6f  %6s", exact, "-");
    }
    putchar('\n');
}

static int S_print_table(const cli_run_point *rp)
{
    const sd_sim_result *r = &rp->run.sim;
    const sd_verifier_type *vt = rp->cv.vt;
    char pars[512];
    sd_params_format(&rp->cv.par, vt, pars, sizeof pars);
    printf("simdec run --algo %s: %s\n", vt->name, vt->summary);
    cli_model_summary(stdout, "model", &rp->mo, &rp->model.view);
    cli_model_identity_line(stdout, &rp->mo, &rp->model);
    printf("verifier  %s%s", vt->name, pars);
    printf("\ntrials    %llu   seed %llu   threads %u%s   %.3g s (%.3g tokens/s, kernel %s)   simdec %s\n",
           (unsigned long long)r->trials, (unsigned long long)r->seed, rp->run.threads, cli_ranks_text(rp), r->seconds,
           r->seconds > 0 ? (double)r->trials * (double)r->T / r->seconds : 0.0,
           r->kernel, SD_VERSION);
    if (rp->samples)
        printf("samples   %s: x_1..x_%zu of each trial, one line per trial\n", rp->samples,
               r->tokens_per_trial);
    if (rp->model.view.stream)
        printf("setup     %.3g s (the streamed chain's rows and tables are built step by step, inside the "
               "run's %.3g s)\n", rp->setup_seconds, r->seconds);
    else
        printf("setup     %.3g s (model %.3g s, kernel tables %.3g s)\n", rp->setup_seconds,
               rp->setup_seconds - r->setup_seconds, r->setup_seconds);
    if (r->stop != SD_SIM_STOP_DONE)
        printf("stopped   %s after %llu of %llu trials (the output of --trials %llu)\n",
               S_stop_name(r->stop), (unsigned long long)r->trials,
               (unsigned long long)r->trials_requested, (unsigned long long)r->trials);
    else if (rp->target_stderr > 0.0 && sd_welford_stderr(&r->rejections) > rp->target_stderr)
        printf("stopped   --target-stderr %g NOT reached: the trial cap %llu came first (raise --trials)\n",
               rp->target_stderr, (unsigned long long)r->trials);
    putchar('\n');
    printf("  %-24s %12s %10s  %s", "per trial", "mean", "stderr", "95% CI");
    if (isfinite(rp->run.exact.rejections))
        printf("%-20s  %12s  %6s", "", "exact", "z");
    putchar('\n');
    S_row("rejections", &r->rejections, rp->run.exact.rejections);
    if (rp->run.rb)
        S_row("rejections (RB)", &r->rejections_rb, rp->run.exact.rejections);
    S_row("target calls", &r->target_calls, rp->run.exact.target_calls);
    S_row("accepted per iteration", &r->accepted, NAN);
    double tpc, tse, tlo, thi;
    sd_run_tokens_per_call(r, &tpc, &tse, &tlo, &thi);
    printf("  %-24s %12.6f %10.6f  [%.6f, %.6f]  (T / mean calls; the calls' CI mapped)\n",
           "tokens per target call", tpc, tse, tlo, thi);
    if (isfinite(rp->run.bias_exact))
        printf("  %-24s %12.6g  (exact: max over n of TV(law of x_n, target's), at n = %zu)\n",
               "per-token bias", rp->run.bias_exact, rp->run.bias_n);
    else if (isfinite(rp->run.bias_est.value))
        printf("  %-24s %12.6g %10.3g  (estimate, stderr an upper bound; noise floor %.2g, its\n"
               "  %-24s %12s %10s   stderr when unbiased)\n"
               "  estimates the %s\n"
               "  (unbiased U-statistic); max over n of TV(law of x_n, target's) >= sqrt(it) / 2\n",
               "per-token bias (L2^2)", rp->run.bias_est.value, rp->run.bias_est.stderr, rp->run.bias_est.noise_floor, "",
               "", "", CLI_BIAS_ESTIMATES);
    /* The distribution of accepted draft tokens per iteration (its CCDF is
     * Sun et al. 2025, Fig. 3): the first few values. */
    printf("\n  accepted per iteration:");
    double tot = 0.0;
    for (size_t j = 0; j <= r->T; j++)
        tot += r->accept_hist[j];
    size_t shown = 0;
    for (size_t j = 0; j <= r->T && shown < 8; j++)
        if (r->accept_hist[j] > 0) {
            printf("  P(%zu)=%.4f", j, r->accept_hist[j] / tot);
            shown++;
        }
    printf("%s\n", shown == 8 ? "  ..." : "");
    if (rp->run.exact.method && isfinite(rp->run.exact.rejections))
        printf("\n  exact: %s; z = (mean - exact) / stderr\n", rp->run.exact.method);
    else if (rp->run.exact_refused[0])
        printf("\n  exact: not computed: %s\n", rp->run.exact_refused);
    if (rp->run.rb) {
        double vp = sd_welford_var(&r->rejections), vr = sd_welford_var(&r->rejections_rb);
        char gain[64];
        if (vr > 0)
            snprintf(gain, sizeof gain, "%.3gx fewer trials for the same stderr", vp / vr);
        else /* 0 vs 0: neither estimate varies (a deterministic problem), nothing to gain */
            snprintf(gain, sizeof gain, "%s", vp > 0 ? "no variance at all" : "neither varies");
        printf("%s  RB: Rao-Blackwellised rejections (sum of each iteration's rejection probability);\n"
               "      variance %.6g vs %.6g plain (%s)\n",
               (rp->run.exact.method && isfinite(rp->run.exact.rejections)) || rp->run.exact_refused[0] ? "" : "\n", vr, vp,
               gain);
    }
    if (isfinite(rp->run.baseline_calls)) {
        double m = r->target_calls.mean, se = sd_welford_stderr(&r->target_calls);
        /* the baseline's draft length: the verifier's, or the rest of the
         * horizon for one without (S_exact_point) */
        char len[96];
        if (!sd_params_decl(vt, "gamma", NULL))
            snprintf(len, sizeof len, "model, gamma = rest of horizon (%s has no draft length),", vt->name);
        else if (rp->cv.par.gamma)
            snprintf(len, sizeof len, "model and draft length (gamma %zu)", rp->cv.par.gamma);
        else
            snprintf(len, sizeof len, "model and draft length (gamma = rest of horizon)");
        printf("\n  %s-level SD on the same %s needs %.6f target calls (exact);\n"
               "  %s needs %.6f +- %.6f: %.1f%% %s\n",
               rp->run.baseline->name, len, rp->run.baseline_calls, vt->name, m, se,
               100.0 * fabs(rp->run.baseline_calls - m) / rp->run.baseline_calls, m <= rp->run.baseline_calls ? "fewer" : "more");
    }
    return cli_stdout_status();
}

/* sd_sim_opts.kernel_ready: the kernel's tables hold what the run reads. */
static void S_free_chain(void *ctx)
{
    cli_model *m = ctx;
    sd_chain_free(m->chain);
    m->chain = NULL;
    m->view.chain = NULL;
}

static int S_write_samples(FILE *f, void *ctx, sd_error *err)
{
    const sd_sim_result *r = ctx;
    return sd_samples_write(f, r->tokens, r->trials, r->tokens_per_trial, err);
}

int cmd_run(int argc, char **argv)
{
    cmd_run_hooks h = {NULL, NULL, 0, 0, "run", 1};
    return cmd_run_with(argc, argv, &h);
}

/* What the command line asks for beyond one point's parameters. */
typedef struct {
    cli_format fmt;
    int paired;
} S_out;

enum {
    O_ALGO = CLI_OPT_FIRST_FREE, O_TRIALS, O_SEED, O_THREADS, O_JSON, O_CSV, O_LIST,
    O_TIME_LIMIT, O_TARGET_SE, O_PAIRED, O_ESTIMATOR, O_SAMPLES, O_L
};
static const struct option S_base[] = {
    CLI_MODEL_LONGOPTS,
    CLI_PLUGIN_LONGOPT,
    CLI_PROGRESS_LONGOPT,
    {"algo", required_argument, 0, O_ALGO},
    {"trials", required_argument, 0, O_TRIALS},
    {"seed", required_argument, 0, O_SEED},
    {"threads", required_argument, 0, O_THREADS},
    {"json", no_argument, 0, O_JSON},
    {"csv", no_argument, 0, O_CSV},
    {"list", no_argument, 0, O_LIST},
    {"time-limit", required_argument, 0, O_TIME_LIMIT},
    {"target-stderr", required_argument, 0, O_TARGET_SE},
    {"paired", no_argument, 0, O_PAIRED},
    {"estimator", required_argument, 0, O_ESTIMATOR},
    {"samples", required_argument, 0, O_SAMPLES},
    {"L", required_argument, 0, O_L},
    {"help", no_argument, 0, 'h'},
    {0, 0, 0, 0},
};

/* One point's request while its options are read (from getopt or from
 * cmd_run_fields), then what S_run_point runs. */
typedef struct {
    const char *name;   /* the command in messages */
    cli_run_point *pt;
    S_out *out;
    uint64_t trials, seed;
    int trials_given;
    size_t threads;
    double time_limit, target_se;
    int estimator; /* SD_RUN_RB_AUTO: rb where the verifier gives it; SD_RUN_PLAIN; SD_RUN_RB */
    int list;      /* --list */
    size_t samples_L;
    double t_start;
} S_req;

static void S_req_init(S_req *rq, const char *name, cli_run_point *pt, S_out *out)
{
    memset(rq, 0, sizeof *rq);
    rq->name = name;
    rq->pt = pt;
    rq->out = out;
    rq->trials = S_DEFAULT_TRIALS;
    rq->seed = S_DEFAULT_SEED;
    rq->estimator = SD_RUN_RB_AUTO;
    rq->t_start = S_now();
    out->fmt = CLI_FMT_TABLE;
}

/* Option c of the point with value arg (the getopt loop's body).  Returns
 * -1 to go on, 1 when c is no option of run's (the caller says so), or an
 * exit status after printing the error (0 after --help). */
static int S_option(S_req *rq, int c, const char *arg)
{
    cli_run_point *pt = rq->pt;
    int status = -1;
    sd_error err;
    if (cli_verifier_option(&pt->mo, &pt->cv, c, arg, &status))
        return status;
    switch (c) {
    case 'h': cli_verifier_help(S_help_head, &pt->cv); return 0;
    case O_LIST: rq->list = 1; break;
    case O_ALGO: break; /* found by cli_sweep_expand */
    case O_TRIALS:
        rq->trials_given = 1;
        if (cli_parse_trials(arg, &rq->trials, &err))
            return cli_fail(&err);
        break;
    case O_SEED:
        if (cli_parse_seed(arg, &rq->seed, &err))
            return cli_fail(&err);
        break;
    case O_THREADS:
        if (cli_parse_size("--threads", arg, 1, 1024, &rq->threads, &err))
            return cli_fail(&err);
        break;
    case O_TIME_LIMIT:
        if (cli_parse_double("--time-limit", arg, 1e-6, 1e9, &rq->time_limit, &err))
            return cli_fail(&err);
        break;
    case O_TARGET_SE:
        if (cli_parse_double("--target-stderr", arg, 1e-300, 1e300, &rq->target_se, &err))
            return cli_fail(&err);
        break;
    case O_JSON: return cli_set_format(rq->name, &rq->out->fmt, CLI_FMT_JSON);
    case O_CSV: return cli_set_format(rq->name, &rq->out->fmt, CLI_FMT_CSV);
    case O_PAIRED: rq->out->paired = 1; break;
    case O_SAMPLES:
        pt->samples = arg;
        if (cli_check_path("--samples", arg, &err))
            return cli_fail(&err);
        break;
    case O_L:
        if (cli_parse_size("--L", arg, 1, SD_CHAIN_MAX_HORIZON, &rq->samples_L, &err))
            return cli_fail(&err);
        break;
    case O_ESTIMATOR:
        if (strcmp(arg, "rb") == 0 || strcmp(arg, "plain") == 0)
            rq->estimator = arg[0] == 'r' ? SD_RUN_RB : SD_RUN_PLAIN;
        else
            return cli_usage_error(rq->name, "--estimator: expected rb or plain, got '%s'", arg);
        break;
    default: return 1;
    }
    return -1;
}

/* The checks across options, the model, and the run API's call.  Returns
 * -1 when the point ran, or an exit status (0 after --list). */
static int S_run_point(S_req *rq, const cmd_run_hooks *hooks, int want_per_trial)
{
    cli_run_point *pt = rq->pt;
    S_out *out = rq->out;
    const char *name = rq->name;
    cli_verifier *cv = &pt->cv;
    cli_model_opts *mo = &pt->mo;
    int status = -1;
    sd_error err;
    if (rq->list) /* after the options: --json may come after --list */
        return out->fmt == CLI_FMT_JSON  ? cli_print_json(cli_verifier_list_json())
               : out->fmt == CLI_FMT_CSV ? (cli_verifier_list_csv(), 0)
                                         : (cli_verifier_list(stdout), 0);
    if (hooks->no_early_stop && (rq->time_limit > 0.0 || rq->target_se > 0.0 || out->paired))
        return cli_usage_error(name, "--time-limit, --target-stderr and --paired are not available here; "
                                     "give --trials");
    if (out->paired && (rq->time_limit > 0.0 || rq->target_se > 0.0))
        return cli_usage_error(name, "--paired compares the same trials: give --trials, not "
                                     "--time-limit or --target-stderr");
    /* --samples keeps every trial's tokens for the cap of trials: without
     * --trials that cap is 10^8, beyond the sampled-token limit. */
    if (pt->samples && rq->target_se > 0.0 && !rq->trials_given)
        return cli_usage_error(name, "--samples with --target-stderr needs --trials N (the cap: every trial's "
                                     "tokens are kept until the run stops)");
    if (rq->samples_L && !pt->samples)
        return cli_usage_error(name, "--L needs --samples FILE (the tokens written per trial)");
    if (pt->samples && hooks->sim)
        return cli_usage_error(name, "--samples is not available here; use 'simdec run'");
    mo->may_stream = sd_run_streams(cv->vt);
    if (cli_model_open(mo, &pt->model, &err))
        return cli_fail(&err);
    (void)status;
    /* --target-stderr without --trials: the cap is S_TARGET_SE_TRIALS, so
     * the target is what stops the run. */
    uint64_t trials = rq->target_se > 0.0 && !rq->trials_given ? S_TARGET_SE_TRIALS : rq->trials;
    const sd_model *m = &pt->model.view;
    cli_progress ps = {0, 0};
    sd_run_opts ro = {.trials = trials,
                      .seed = rq->seed,
                      .threads = (unsigned)rq->threads,
                      .time_limit = rq->time_limit,
                      .target_stderr = rq->target_se,
                      .estimator = rq->estimator,
                      .paired = want_per_trial,
                      .want_tokens = pt->samples ? (rq->samples_L ? rq->samples_L : m->T) : 0,
                      .kernel_max_bytes = sd_run_kernel_budget(pt->model.chain, pt->model.budget),
                      .progress = !hooks->quiet && cli_stderr_is_tty() ? cli_progress_show : NULL,
                      .progress_ctx = &ps,
                      .release_rows = S_free_chain,
                      .release_ctx = &pt->model,
                      .sim = hooks->sim,
                      .sim_ctx = hooks->ctx};
    double t_model = S_now();
    int rc = sd_run_point(m, cv->vt, &cv->par, &ro, &pt->run, &err);
    cli_progress_end(&ps);
    /* Refused before --samples is written: a failing command leaves no file. */
    if (rc && pt->run.no_rb)
        return cli_usage_error(name, "%s", err.msg);
    if (!rc && pt->samples && (rc = cli_write_atomic(pt->samples, S_write_samples, &pt->run.sim, &err)))
        sd_run_result_free(&pt->run);
    if (rc)
        return cli_fail(&err);
    pt->setup_seconds = t_model - rq->t_start + pt->run.sim.setup_seconds;
    pt->time_limit = rq->time_limit;
    pt->target_stderr = rq->target_se;
    pt->ranks = hooks->ranks > 1 ? hooks->ranks : 1;
    return -1;
}

/* Parses one point's command line and runs it into *pt.  Returns -1 when it
 * ran, or an exit status (0 after --help/--list). */
static int S_point(int argc, char **argv, const char *algo, const cmd_run_hooks *hooks, int want_per_trial,
                   cli_run_point *pt, S_out *out)
{
    const char *name = hooks->name ? hooks->name : "run";
    struct option *opts;
    S_req rq;
    memset(pt, 0, sizeof *pt);
    cli_model_init(&pt->mo);
    S_req_init(&rq, name, pt, out);
    int status = cli_verifier_choose(name, algo, sd_verifier_baseline()->name, S_base, NULL, &pt->cv, &opts);
    if (status >= 0)
        return status;
    int c;
    optind = 0;
    opterr = 0;
    while (status < 0 && (c = cli_getopt(argc, argv, ":h", opts)) != -1)
        if ((status = S_option(&rq, c, optarg)) == 1)
            status = cli_unknown_option(name, c, argv, pt->cv.vt);
    free(opts);
    if (status < 0 && !rq.list && optind < argc)
        status = cli_usage_error(name, "unexpected argument '%s'", argv[optind]);
    if (status >= 0)
        return status;
    return S_run_point(&rq, hooks, want_per_trial);
}

static int S_option_any(void *rq, int c, const char *arg)
{
    return S_option(rq, c, arg);
}

/* S_point from named fields: the point's verifier and fields as
 * cli_sweep_expand_fields gives them, the plugins loaded already.  Output
 * in JSON unless a field asks for CSV. */
static int S_point_fields(const char *algo, const cli_field *fields, size_t n, const cmd_run_hooks *hooks,
                          int want_per_trial, cli_run_point *pt, S_out *out)
{
    static const int refuse[] = {O_ALGO, 0};
    struct option *opts;
    S_req rq;
    memset(pt, 0, sizeof *pt);
    cli_model_init(&pt->mo);
    S_req_init(&rq, "run", pt, out);
    int status = cli_verifier_choose("run", algo, sd_verifier_baseline()->name, S_base, NULL, &pt->cv, &opts);
    if (status >= 0)
        return status;
    status = cli_fields_apply(opts, fields, n, refuse, S_option_any, &rq);
    free(opts);
    if (status == CLI_NOT_A_FIELD)
        status = cli_fields_refused("run", pt->cv.vt);
    if (status >= 0)
        return status;
    if (out->fmt == CLI_FMT_TABLE)
        out->fmt = CLI_FMT_JSON;
    return S_run_point(&rq, hooks, want_per_trial);
}

/* The points of a sweep (argv or fields), then their output. */
static int S_points(const char *name, cli_sweep *sw, int paired, int samples, const cmd_run_hooks *hooks)
{
    int status = -1;
    if (samples && sw->n > 1)
        return cli_usage_error(name, "--samples writes one run's tokens: not with a sweep (--algo A,B or a "
                                     "parameter list)");
    cli_run_point *pts = calloc(sw->n, sizeof *pts);
    S_out out = {CLI_FMT_TABLE, 0};
    size_t done = 0;
    if (!pts)
        status = cli_out_of_memory();
    for (size_t i = 0; status < 0 && i < sw->n; i++) {
        status = sw->fields ? S_point_fields(sw->algo[i], sw->fields[i], sw->nfields[i], hooks, paired, &pts[i], &out)
                            : S_point(sw->argc[i], sw->argv[i], sw->algo[i], hooks, paired, &pts[i], &out);
        if (status < 0)
            done++;
        else
            cmd_run_point_free(&pts[i]);
    }
    if (status < 0 && out.paired && sw->n < 2)
        status = cli_usage_error(name, "--paired compares points of a sweep: give --algo A,B (or a "
                                       "parameter list)");
    if (status < 0)
        status = out.fmt == CLI_FMT_JSON  ? cli_points_print_json(pts, done, out.paired)
                 : out.fmt == CLI_FMT_CSV ? cli_points_print_csv(pts, done, out.paired)
                 : done == 1              ? S_print_table(&pts[0])
                                          : cli_points_print_table(pts, done, out.paired);
    for (size_t i = 0; i < done; i++)
        cmd_run_point_free(&pts[i]);
    free(pts);
    return status;
}

int cmd_run_fields(const char *algo, const cli_field *fields, size_t n)
{
    static const cmd_run_hooks hooks = {NULL, NULL, 0, 0, "run", 1};
    cli_sweep sw;
    int status = cli_sweep_expand_fields("run", algo, fields, n, &sw);
    if (status >= 0)
        return status;
    int paired = 0, samples = 0;
    for (size_t i = 0; i < n; i++) {
        paired |= strcmp(fields[i].name, "paired") == 0;
        samples |= strcmp(fields[i].name, "samples") == 0;
    }
    status = S_points("run", &sw, paired, samples, &hooks);
    cli_sweep_free(&sw);
    return status;
}

void cmd_run_point_free(cli_run_point *pt)
{
    sd_run_result_free(&pt->run);
    cli_model_close(&pt->model);
    cli_model_release(&pt->mo);
}

int cmd_run_with(int argc, char **argv, const cmd_run_hooks *hooks)
{
    const char *name = hooks->name ? hooks->name : "run";
    /* The one pass over the command line before getopt: plugins, the
     * verifiers, the lists of a sweep, --paired and --samples. */
    cli_args args;
    if (cli_args_scan(argc, argv, &args))
        return cli_out_of_memory();
    cli_sweep sw;
    int status = cli_sweep_expand(name, &args, &sw);
    /* --paired needs the per-trial records of every point. */
    int paired = cli_args_has(&args, "paired"), samples = cli_args_has(&args, "samples");
    cli_args_free(&args);
    if (status >= 0)
        return status;
    status = S_points(name, &sw, paired, samples, hooks);
    cli_sweep_free(&sw);
    return status;
}
