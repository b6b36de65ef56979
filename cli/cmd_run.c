/* cmd_run.c — `simdec run`: Monte-Carlo of one verifier (sims/sd_sim.h),
 * beside the exact values where simdec has them.  The simulation step is
 * replaceable (cmd_run.h) so simdec-mpi shares everything else. */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "../sims/sd_sim.h"
#include "../sims/sd_params.h"
#include "../sims/sd_exact_gen.h"
#include "../src/sd_samples.h"
#include "cli.h"
#include "cmd_run.h"
#include "commands.h"

#define S_DEFAULT_TRIALS 10000u
#define S_DEFAULT_SEED 1u

static const char S_help_head[] =
    "Usage: simdec run [--algo NAME] [verifier parameters] [model] [--trials N]\n"
    "                  [--seed S] [--threads N] [--time-limit SEC] [--target-stderr X]\n"
    "                  [--samples FILE [--L l]] [--json|--csv]\n"
    "\n"
    "Simulates a verifier on the model and reports, per trial (one pass over the\n"
    "horizon): rejections (iterations ending in a residual sample), target calls,\n"
    "tokens per target call and accepted draft tokens per iteration, each with its\n"
    "standard error and 95% confidence interval, beside the exact value where one\n"
    "is known (each verifier says which: token, Theorem 1 of Yin et al. or an exact\n"
    "DP for finite --gamma; batch, their Theorem 3).  The same --seed gives the same\n"
    "output, whatever --threads (and whatever the number of MPI ranks of simdec-mpi).\n"
    "\n"
    "  --algo NAME     verifier (default token); --list shows them all\n"
    "  --trials N      number of trials (default 10000)\n"
    "  --seed S        random seed (default 1); trial i uses stream (S, i)\n"
    "  --threads N     worker threads (default: all cores)\n"
    "  --time-limit SEC    start no block of 4096 trials after SEC seconds; the\n"
    "                  output is that of --trials = the trials reported\n"
    "  --target-stderr X   stop at the first whole block where the standard\n"
    "                  error of the mean rejections is <= X (reproducible: the\n"
    "                  stopping point depends on the seed only); --trials caps it\n"
    "  --json, --csv   machine-readable output (default: a table)\n"
    "  --samples FILE  also write each trial's output tokens to FILE, one line per\n"
    "                  trial, 0-based token ids separated by single spaces (the\n"
    "                  format 'simdec check --samples' reads)\n"
    "  --L l           with --samples: the first l tokens x_1..x_l (default all T)\n"
    "  --list          list the verifiers and their parameters\n"
    "  --plugin FILE   load verifiers from a plugin (include/simdec.h); repeatable\n"
    "\n";

_Static_assert(SD_SIM_BLOCK == 4096, "the help text states the block size");

static void S_help(const sd_verifier_type *vt)
{
    fputs(S_help_head, stdout);
    cli_params_help(stdout, vt);
    fputc('\n', stdout);
    fputs(cli_model_help, stdout);
}

/* Exact values from the verifier's own evaluator, where it has one; NAN
 * elsewhere (and where an evaluator refuses the size). */
static void S_exact(const sd_verifier_type *vt, const sd_model *m, const sd_params *par,
                    sd_exact_values *ex)
{
    ex->rejections = ex->target_calls = NAN;
    ex->method = NULL;
    if (!vt->exact || vt->exact(m, par, ex, NULL)) {
        ex->rejections = ex->target_calls = NAN;
        ex->method = NULL;
    }
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

typedef struct {
    const cli_verifier *cv;
    const sd_model *m;
    const cli_model_opts *mo;
    const sd_sim_result *r;
    sd_exact_values ex;
    double bias_tv;
    const sd_verifier_type *base; /* the baseline verifier (token-level SD), or NULL */
    double base_calls;      /* its exact target calls at the same draft length (NaN: n/a) */
    unsigned threads;
    double time_limit, target_stderr;
    int bias_exact;         /* 1: bias_tv is exact (sd_exact_gen_position_tv) */
    const char *samples;    /* --samples FILE written, or NULL */
} S_report;

static double S_tokens_per_call(const S_report *rp)
{
    return (double)rp->r->T / rp->r->target_calls.mean;
}

static const char *S_stop_name(int stop)
{
    return stop == SD_SIM_STOP_TIME ? "time-limit" : stop == SD_SIM_STOP_STDERR ? "target-stderr" : "done";
}

static int S_print_json(const S_report *rp)
{
    const sd_sim_result *r = rp->r;
    json_t *o = json_object();
    const sd_verifier_type *vt = rp->cv->vt;
    json_object_set_new(o, "algo", json_string(vt->name));
    json_object_set_new(o, "vocab", json_integer((json_int_t)r->V));
    json_object_set_new(o, "horizon", json_integer((json_int_t)r->T));
    json_object_set_new(o, "trials", json_integer((json_int_t)r->trials));
    json_object_set_new(o, "seed", json_integer((json_int_t)r->seed));
    if (rp->time_limit > 0.0 || rp->target_stderr > 0.0) {
        json_object_set_new(o, "trials_requested", json_integer((json_int_t)r->trials_requested));
        json_object_set_new(o, "stopped", json_string(S_stop_name(r->stop)));
        if (rp->time_limit > 0.0)
            json_object_set_new(o, "time_limit", json_real(rp->time_limit));
        if (rp->target_stderr > 0.0)
            json_object_set_new(o, "target_stderr", json_real(rp->target_stderr));
    }
    if (rp->samples)
        json_object_set_new(o, "samples", json_pack("{s:s, s:I}", "file", rp->samples, "tokens_per_line",
                                                    (json_int_t)r->tokens_per_trial));
    json_object_set_new(o, "params", sd_params_json(&rp->cv->par, vt));
    cli_model_describe(rp->mo, rp->m, o);
    json_object_set_new(o, "rejections", S_stat_json(&r->rejections));
    json_object_set_new(o, "target_calls", S_stat_json(&r->target_calls));
    json_object_set_new(o, "tokens_per_call", json_real(S_tokens_per_call(rp)));
    json_object_set_new(o, "exact_rejections", cli_json_real(rp->ex.rejections));
    json_object_set_new(o, "exact_target_calls", cli_json_real(rp->ex.target_calls));
    json_object_set_new(o, "token_exact_target_calls", cli_json_real(rp->base_calls));
    json_object_set_new(o, "kernel", json_string(rp->r->kernel));
    json_object_set_new(o, "accepted_per_iteration", S_stat_json(&r->accepted));
    json_t *h = json_array();
    size_t last = 0;
    for (size_t j = 0; j <= r->T; j++)
        if (r->accept_hist[j] > 0)
            last = j;
    for (size_t j = 0; j <= last; j++)
        json_array_append_new(h, json_integer((json_int_t)r->accept_hist[j]));
    json_object_set_new(o, "accepted_hist", h);
    json_object_set_new(o, "lossless_claimed", json_boolean(sd_verifier_claims_lossless(vt, &rp->cv->par)));
    json_object_set_new(o, "position_tv_max", cli_json_real(rp->bias_tv));
    json_object_set_new(o, "position_tv_exact", json_boolean(rp->bias_exact));
    return cli_print_json(o);
}

static int S_print_csv(const S_report *rp)
{
    const sd_sim_result *r = rp->r;
    double lo, hi;
    sd_welford_ci95(&r->rejections, &lo, &hi);
    printf("algo,vocab,horizon,trials,seed,rejections_mean,rejections_stderr,rejections_ci95_lo,"
           "rejections_ci95_hi,target_calls_mean,target_calls_stderr,tokens_per_call,"
           "accepted_per_iteration_mean,exact_rejections,exact_target_calls\n");
    printf("%s,%zu,%zu,%llu,%llu,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,", rp->cv->vt->name,
           r->V, r->T, (unsigned long long)r->trials, (unsigned long long)r->seed,
           r->rejections.mean, sd_welford_stderr(&r->rejections), lo, hi, r->target_calls.mean,
           sd_welford_stderr(&r->target_calls), S_tokens_per_call(rp), r->accepted.mean);
    if (isfinite(rp->ex.rejections))
        printf("%.17g,", rp->ex.rejections);
    else
        printf(",");
    if (isfinite(rp->ex.target_calls))
        printf("%.17g\n", rp->ex.target_calls);
    else
        printf("\n");
    return fflush(stdout) == 0 ? 0 : EX_CANTCREAT_;
}

static void S_row(const char *name, const sd_welford *w, double exact)
{
    double lo, hi, se = sd_welford_stderr(w);
    sd_welford_ci95(w, &lo, &hi);
    printf("  %-24s %12.6f %10.6f  [%.6f, %.6f]", name, w->mean, se, lo, hi);
    if (isfinite(exact))
        printf("  %12.6f  %+6.2f", exact, se > 0 ? (w->mean - exact) / se : 0.0);
    putchar('\n');
}

static int S_print_table(const S_report *rp)
{
    const sd_sim_result *r = rp->r;
    const sd_verifier_type *vt = rp->cv->vt;
    char pars[512];
    sd_params_format(&rp->cv->par, vt, pars, sizeof pars);
    printf("simdec run --algo %s: %s\n", vt->name, vt->summary);
    cli_model_summary(stdout, "model", rp->mo, rp->m);
    printf("verifier  %s%s", vt->name, pars);
    printf("\ntrials    %llu   seed %llu   threads %u   %.3g s (%.3g tokens/s, kernel %s)\n",
           (unsigned long long)r->trials, (unsigned long long)r->seed, rp->threads, r->seconds,
           r->seconds > 0 ? (double)r->trials * (double)r->T / r->seconds : 0.0,
           r->kernel);
    if (r->stop != SD_SIM_STOP_DONE)
        printf("stopped   %s after %llu of %llu trials (the output of --trials %llu)\n",
               S_stop_name(r->stop), (unsigned long long)r->trials,
               (unsigned long long)r->trials_requested, (unsigned long long)r->trials);
    else if (rp->target_stderr > 0.0)
        printf("stopped   --trials reached before --target-stderr %g\n", rp->target_stderr);
    if (rp->samples)
        printf("samples   %s: x_1..x_%zu of each trial, one line per trial\n", rp->samples,
               r->tokens_per_trial);
    putchar('\n');
    printf("  %-24s %12s %10s  %s", "per trial", "mean", "stderr", "95% CI");
    if (isfinite(rp->ex.rejections))
        printf("%-20s  %12s  %6s", "", "exact", "z");
    putchar('\n');
    S_row("rejections", &r->rejections, rp->ex.rejections);
    S_row("target calls", &r->target_calls, rp->ex.target_calls);
    S_row("accepted per iteration", &r->accepted, NAN);
    printf("  %-24s %12.6f\n", "tokens per target call", S_tokens_per_call(rp));
    if (isfinite(rp->bias_tv) && rp->bias_exact)
        printf("  %-24s %12.6g  (exact: max over positions of TV(law of x_n, target); lossy verifier)\n",
               "per-token bias", rp->bias_tv);
    else if (isfinite(rp->bias_tv))
        printf("  %-24s %12.6f  (Monte-Carlo max over positions of TV(empirical x_n, target); noise\n"
               "  %-24s %12s   floor about sqrt(V/(2 pi trials)) = %.2g when unbiased)\n",
               "per-token bias", rp->bias_tv, "", "", sqrt((double)r->V / (2.0 * M_PI * (double)r->trials)));
    /* The distribution of accepted draft tokens per iteration (its CCDF is
     * 001_ Fig. 3): the first few values. */
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
    if (rp->ex.method && isfinite(rp->ex.rejections))
        printf("\n  exact: %s; z = (mean - exact) / stderr\n", rp->ex.method);
    if (isfinite(rp->base_calls)) {
        double m = r->target_calls.mean, se = sd_welford_stderr(&r->target_calls);
        printf("\n  %s-level SD on the same model and draft length needs %.6f target calls (exact);\n"
               "  %s needs %.6f +- %.6f: %.1f%% %s\n",
               rp->base->name, rp->base_calls, vt->name, m, se,
               100.0 * fabs(rp->base_calls - m) / rp->base_calls, m <= rp->base_calls ? "fewer" : "more");
    }
    return fflush(stdout) == 0 ? 0 : EX_CANTCREAT_;
}

static int S_write_samples(FILE *f, void *ctx, sd_error *err)
{
    const sd_sim_result *r = ctx;
    return sd_samples_write(f, r->tokens, r->trials, r->tokens_per_trial, err);
}

static int S_default_sim(void *ctx, const sd_sim_job *job, const sd_sim_opts *opts,
                         sd_sim_result *res, sd_error *err)
{
    (void)ctx;
    return sd_sim_run_job(job, opts, res, err);
}

int cmd_run(int argc, char **argv)
{
    cmd_run_hooks h = {NULL, NULL, 0, 0, "run"};
    return cmd_run_with(argc, argv, &h);
}

int cmd_run_with(int argc, char **argv, const cmd_run_hooks *hooks)
{
    enum {
        O_ALGO = CLI_OPT_FIRST_FREE, O_TRIALS, O_SEED, O_THREADS, O_JSON, O_CSV, O_LIST,
        O_TIME_LIMIT, O_TARGET_SE, O_SAMPLES, O_L
    };
    static const struct option base[] = {
        CLI_MODEL_LONGOPTS,
        CLI_PLUGIN_LONGOPT,
        {"algo", required_argument, 0, O_ALGO},
        {"trials", required_argument, 0, O_TRIALS},
        {"seed", required_argument, 0, O_SEED},
        {"threads", required_argument, 0, O_THREADS},
        {"json", no_argument, 0, O_JSON},
        {"csv", no_argument, 0, O_CSV},
        {"list", no_argument, 0, O_LIST},
        {"time-limit", required_argument, 0, O_TIME_LIMIT},
        {"target-stderr", required_argument, 0, O_TARGET_SE},
        {"samples", required_argument, 0, O_SAMPLES},
        {"L", required_argument, 0, O_L},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    const char *name = hooks->name ? hooks->name : "run";
    cli_verifier cv;
    struct option *opts;
    int status = cli_verifier_prescan(name, argc, argv, "algo", sd_verifier_baseline()->name, base, NULL,
                                      &cv, &opts);
    if (status >= 0)
        return status;
    cli_model_opts mo;
    cli_model_init(&mo);
    uint64_t trials = S_DEFAULT_TRIALS, seed = S_DEFAULT_SEED;
    size_t threads = 0;
    double time_limit = 0.0, target_se = 0.0;
    const char *samples = NULL;
    size_t samples_L = 0;
    cli_format fmt = CLI_FMT_TABLE;
    sd_error err;
    int c;
    optind = 0;
    opterr = 0;
    while (status < 0 && (c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        int r = cli_model_option(&mo, c, optarg, &err);
        if (r == 0)
            r = cli_param_option(&cv, c, optarg, &err);
        if (r < 0) {
            status = cli_fail(&err);
            break;
        }
        if (r > 0)
            continue;
        switch (c) {
        case 'h': S_help(cv.named ? cv.vt : NULL); status = 0; break;
        case O_LIST: cli_verifier_list(stdout); status = 0; break;
        case O_ALGO: break; /* found by cli_verifier_prescan */
        case O_TRIALS:
            if (cli_parse_trials(optarg, &trials, &err))
                status = cli_fail(&err);
            break;
        case O_SEED:
            if (cli_parse_u64("--seed", optarg, &seed, &err))
                status = cli_fail(&err);
            break;
        case O_THREADS:
            if (cli_parse_size("--threads", optarg, 1, 1024, &threads, &err))
                status = cli_fail(&err);
            break;
        case O_TIME_LIMIT:
            if (cli_parse_double("--time-limit", optarg, 1e-6, 1e9, &time_limit, &err))
                status = cli_fail(&err);
            break;
        case O_TARGET_SE:
            if (cli_parse_double("--target-stderr", optarg, 1e-300, 1e300, &target_se, &err))
                status = cli_fail(&err);
            break;
        case O_JSON: fmt = CLI_FMT_JSON; break;
        case O_CSV: fmt = CLI_FMT_CSV; break;
        case O_SAMPLES: samples = optarg; break;
        case O_L:
            if (cli_parse_size("--L", optarg, 1, SD_CHAIN_MAX_HORIZON, &samples_L, &err))
                status = cli_fail(&err);
            break;
        default: status = cli_unknown_option(name, c, argv, cv.vt); break;
        }
    }
    free(opts);
    if (status < 0 && optind < argc)
        status = cli_usage_error(name, "unexpected argument '%s'", argv[optind]);
    if (status < 0 && hooks->no_early_stop && (time_limit > 0.0 || target_se > 0.0))
        status = cli_usage_error(name, "--time-limit and --target-stderr are not available here; give --trials");
    if (status < 0 && samples_L && !samples)
        status = cli_usage_error(name, "--L needs --samples FILE (the tokens written per trial)");
    if (status < 0 && samples && hooks->sim)
        status = cli_usage_error(name, "--samples is not available here; use 'simdec run'");
    cli_model model;
    memset(&model, 0, sizeof model);
    if (status < 0 && cli_model_open(&mo, &model, &err))
        status = cli_fail(&err);
    if (status >= 0) {
        cli_model_close(&model);
        cli_model_release(&mo);
        return status;
    }

    const sd_verifier_type *vt = cv.vt;
    const sd_model *m = &model.view;
    int claims = sd_verifier_claims_lossless(vt, &cv.par);
    cli_progress ps = {0, 0};
    sd_sim_opts so = {.seed = seed,
                      .trials = trials,
                      .threads = (unsigned)threads,
                      .want_positions = !claims && m->chain && m->T <= ((size_t)1 << 24) / m->V,
                      .progress = !hooks->quiet && cli_stderr_is_tty() ? cli_progress_show : NULL,
                      .progress_ctx = &ps,
                      .time_limit = time_limit,
                      .target_stderr = target_se,
                      .want_tokens = samples ? (samples_L ? samples_L : m->T) : 0};
    sd_sim_job job = {vt, m, &cv.par};
    sd_sim_result res;
    cmd_run_sim_fn sim = hooks->sim ? hooks->sim : S_default_sim;
    int rc = sim(hooks->ctx, &job, &so, &res, &err);
    cli_progress_end(&ps);
    if (!rc && samples && (rc = cli_write_atomic(samples, S_write_samples, &res, &err)))
        sd_sim_result_free(&res);
    if (rc) {
        status = cli_fail(&err);
    } else {
        S_report rp = {&cv, m, &mo, &res, {NAN, NAN, NULL}, NAN, NULL, NAN, 0, time_limit, target_se, 0, samples};
#ifdef _OPENMP
        rp.threads = threads ? (unsigned)threads : (unsigned)omp_get_num_procs();
#else
        rp.threads = 1;
#endif
        S_exact(vt, m, &cv.par, &rp.ex);
        /* The question a user asks first: how many target calls does this
         * verifier save over token-level SD on the same model and draft
         * length?  The baseline's expectation is exact. */
        rp.base = sd_verifier_baseline();
        if (m->chain && vt != rp.base) {
            sd_params bp;
            sd_params_defaults(&bp, rp.base);
            bp.gamma = sd_params_decl(vt, "gamma", NULL) ? cv.par.gamma : 0;
            sd_exact_values bx;
            S_exact(rp.base, m, &bp, &bx);
            rp.base_calls = bx.target_calls;
        }
        if (res.pos_counts && m->chain) {
            /* Exact per-token bias where the laws can keep every token;
             * else the Monte-Carlo maximum with its noise floor. */
            rp.bias_exact = sd_exact_gen_position_tv(vt, m->chain, &cv.par, &rp.bias_tv, NULL) == SD_OK;
            if (!rp.bias_exact)
                rp.bias_tv = sd_sim_position_tv(&res, m->chain);
        }
        status = fmt == CLI_FMT_JSON ? S_print_json(&rp)
                 : fmt == CLI_FMT_CSV ? S_print_csv(&rp)
                                      : S_print_table(&rp);
        sd_sim_result_free(&res);
    }
    cli_model_close(&model);
    cli_model_release(&mo);
    return status;
}
