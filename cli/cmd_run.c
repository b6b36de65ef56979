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
#include "../src/sd_exact.h"
#include "../src/sd_exact_batch.h"
#include "../src/sd_lazy.h"
#include "cli.h"
#include "cmd_run.h"
#include "commands.h"

#define S_DEFAULT_TRIALS 10000u
#define S_DEFAULT_SEED 1u

static const char S_help_head[] =
    "Usage: simdec run [--algo NAME] [verifier parameters] [model] [--trials N]\n"
    "                  [--seed S] [--threads N] [--time-limit SEC] [--target-stderr X]\n"
    "                  [--json|--csv]\n"
    "\n"
    "Simulates a verifier on the model and reports, per trial (one pass over the\n"
    "horizon): rejections (iterations ending in a residual sample), target calls,\n"
    "tokens per target call and accepted draft tokens per iteration, each with its\n"
    "standard error and 95% confidence interval, beside the exact value where one\n"
    "is known (token: Theorem 1 of Yin et al. / an exact DP for finite --gamma;\n"
    "batch: Theorem 3).  The same --seed gives the same output, whatever --threads\n"
    "(and whatever the number of MPI ranks of simdec-mpi).\n"
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
    "  --list          list the verifiers and their parameters\n"
    "\n"
    "On-demand large-vocabulary model (--algo token only; rows computed from\n"
    "(model-seed, t, previous token), memory 64 bytes per vocabulary entry):\n"
    "  --zipf          p_t(.|a), q_t(.|a) = Zipf laws over a pseudo-random ranking\n"
    "                  of the V tokens per context; with --V, --T, --model-seed\n"
    "  --zipf-draft S  draft exponent (default 1.0)\n"
    "  --zipf-target S target exponent (default 1.2)\n"
    "\n";

_Static_assert(SD_SIM_BLOCK == 4096, "the help text states the block size");

static void S_help(void)
{
    fputs(S_help_head, stdout);
    fputs(cli_param_help, stdout);
    fputc('\n', stdout);
    fputs(cli_model_help, stdout);
}

static void S_list(void)
{
    printf("%-22s %-20s %s\n", "verifier", "parameters", "description");
    for (size_t i = 0; sd_verifiers[i]; i++) {
        const sd_verifier_type *v = sd_verifiers[i];
        printf("%-22s %-20s %s%s\n", v->name, v->params[0] ? v->params : "-", v->summary,
               strncmp(v->name, "broken-", 7) == 0 ? " [deliberately broken control]" : "");
    }
}

/* The on-demand model's options (sd_lazy.h). */
typedef struct {
    int on;
    double s_draft, s_target;
    int s_given;
} S_zipf_opts;

/* Exact values where known; NAN elsewhere (and where an evaluator refuses
 * the size: its message goes to *note). */
static void S_exact(const sd_verifier_type *vt, const sd_chain *c, const sd_lazy *lz,
                    const sd_params *par, double *rej, double *calls, const char **source)
{
    *rej = *calls = NAN;
    *source = NULL;
    sd_error e;
    if (strcmp(vt->name, "token") == 0) {
        if (lz ? sd_lazy_exact_token(lz, par->gamma, rej, calls, &e)
               : sd_exact_token(c, par->gamma, rej, calls, &e))
            *rej = *calls = NAN;
        else
            *source = lz ? (par->gamma ? "on-demand model: DP over the accepted-in-iteration counter, finite gamma"
                                       : "on-demand model: Theorem 1, E[N_rej] = T * TV(z_d, z_q)")
                         : (par->gamma ? "exact DP over (x_{n-1}, accepted-in-iteration), finite gamma"
                                       : "Theorem 1 of Yin et al. (004_), lookahead to the horizon");
    } else if (strcmp(vt->name, "batch") == 0 && par->gamma == 0 && c) {
        if (sd_exact_batch_rejections(c, par->M, rej, &e))
            *rej = NAN;
        else
            *source = "Theorem 3 of Yin et al. (004_), batch of M drafts, lookahead to the horizon";
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
    const sd_verifier_type *vt;
    const sd_chain *c;      /* NULL with the on-demand model */
    const sd_lazy *lz;      /* or NULL */
    const cli_model_opts *mo;
    cli_params *cp;
    const sd_sim_result *r;
    double exact_rej, exact_calls, bias_tv;
    const char *exact_source;
    double token_calls;     /* token-level SD at the same gamma, exact (NaN: n/a) */
    unsigned threads;
    double time_limit, target_stderr;
} S_report;

static double S_tokens_per_call(const S_report *rp)
{
    return (double)rp->r->T / rp->r->target_calls.mean;
}

static const char *S_stop_name(int stop)
{
    return stop == SD_SIM_STOP_TIME ? "time-limit" : stop == SD_SIM_STOP_STDERR ? "target-stderr" : "done";
}

static void S_lazy_describe(const sd_lazy *lz, json_t *o)
{
    json_t *m = json_object();
    json_object_set_new(m, "source", json_string("zipf-on-demand"));
    json_object_set_new(m, "model_seed", json_integer((json_int_t)lz->seed));
    json_object_set_new(m, "zipf_draft", json_real(lz->s_draft));
    json_object_set_new(m, "zipf_target", json_real(lz->s_target));
    json_object_set_new(m, "tv_per_row", json_real(lz->tv));
    json_object_set_new(m, "table_bytes", json_integer((json_int_t)sd_lazy_bytes(lz->V)));
    json_object_set_new(m, "vocab", json_integer((json_int_t)lz->V));
    json_object_set_new(m, "horizon", json_integer((json_int_t)lz->T));
    json_object_set_new(o, "model", m);
}

static int S_print_json(const S_report *rp)
{
    const sd_sim_result *r = rp->r;
    json_t *o = json_object();
    json_object_set_new(o, "algo", json_string(rp->vt->name));
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
    cli_param_describe(rp->cp, rp->vt, o);
    if (rp->lz)
        S_lazy_describe(rp->lz, o);
    else
        cli_model_describe(rp->mo, rp->c, o);
    json_object_set_new(o, "rejections", S_stat_json(&r->rejections));
    json_object_set_new(o, "target_calls", S_stat_json(&r->target_calls));
    json_object_set_new(o, "tokens_per_call", json_real(S_tokens_per_call(rp)));
    json_object_set_new(o, "exact_rejections", cli_json_real(rp->exact_rej));
    json_object_set_new(o, "exact_target_calls", cli_json_real(rp->exact_calls));
    json_object_set_new(o, "token_exact_target_calls", cli_json_real(rp->token_calls));
    json_object_set_new(o, "kernel", json_string(rp->r->kernel ? rp->r->kernel : "generic"));
    json_object_set_new(o, "accepted_per_iteration", S_stat_json(&r->accepted));
    json_t *h = json_array();
    size_t last = 0;
    for (size_t j = 0; j <= r->T; j++)
        if (r->accept_hist[j] > 0)
            last = j;
    for (size_t j = 0; j <= last; j++)
        json_array_append_new(h, json_integer((json_int_t)r->accept_hist[j]));
    json_object_set_new(o, "accepted_hist", h);
    json_object_set_new(o, "lossless_claimed",
                        json_boolean(!rp->vt->claims_lossless || rp->vt->claims_lossless(rp->cp->par)));
    json_object_set_new(o, "position_tv_max", cli_json_real(rp->bias_tv));
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
    printf("%s,%zu,%zu,%llu,%llu,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,", rp->vt->name,
           r->V, r->T, (unsigned long long)r->trials, (unsigned long long)r->seed,
           r->rejections.mean, sd_welford_stderr(&r->rejections), lo, hi, r->target_calls.mean,
           sd_welford_stderr(&r->target_calls), S_tokens_per_call(rp), r->accepted.mean);
    if (isfinite(rp->exact_rej))
        printf("%.17g,", rp->exact_rej);
    else
        printf(",");
    if (isfinite(rp->exact_calls))
        printf("%.17g\n", rp->exact_calls);
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
    printf("simdec run --algo %s: %s\n", rp->vt->name, rp->vt->summary);
    if (rp->lz)
        printf("model     on-demand Zipf rows, V=%zu, T=%zu, model-seed %llu, draft exponent %g, "
               "target exponent %g\n          (TV per row %.6f; tables %zu bytes, no T*V^2 storage)\n",
               r->V, r->T, (unsigned long long)rp->lz->seed, rp->lz->s_draft, rp->lz->s_target,
               rp->lz->tv, sd_lazy_bytes(rp->lz->V));
    else if (rp->mo->p)
        printf("model     single-token problem (--p/--q), V=%zu, T=%zu\n", r->V, r->T);
    else if (rp->mo->file)
        printf("model     %s, V=%zu, T=%zu\n", rp->mo->file, r->V, r->T);
    else
        printf("model     generated, V=%zu, T=%zu, model-seed %lu, alpha %g, mix %g\n", r->V, r->T,
               rp->mo->gen.seed, rp->mo->gen.alpha, rp->mo->gen.mix);
    const sd_params *p = rp->cp->par;
    printf("verifier  %s", rp->vt->name);
    if (sd_verifier_uses(rp->vt, "gamma")) {
        if (p->gamma)
            printf(", gamma %zu", p->gamma);
        else
            printf(", gamma = rest of horizon");
    }
    if (sd_verifier_uses(rp->vt, "M")) printf(", M %zu", p->M);
    if (sd_verifier_uses(rp->vt, "k")) printf(", k %zu", p->k);
    if (sd_verifier_uses(rp->vt, "eps")) printf(", eps %g", p->eps);
    if (sd_verifier_uses(rp->vt, "residual")) printf(", residual %s", p->residual == SD_RESIDUAL_OPT ? "opt" : "uno");
    if (sd_verifier_uses(rp->vt, "tp")) printf(", tp %g", p->tp);
    if (sd_verifier_uses(rp->vt, "fp")) printf(", fp %g", p->fp);
    if (sd_verifier_uses(rp->vt, "plan")) printf(", plan %s", p->plan == SD_PLAN_OTM ? "otm" : "kseq");
    printf("\ntrials    %llu   seed %llu   threads %u   %.3g s (%.3g tokens/s, kernel %s)\n",
           (unsigned long long)r->trials, (unsigned long long)r->seed, rp->threads, r->seconds,
           r->seconds > 0 ? (double)r->trials * (double)r->T / r->seconds : 0.0,
           r->kernel ? r->kernel : "generic");
    if (r->stop != SD_SIM_STOP_DONE)
        printf("stopped   %s after %llu of %llu trials (the output of --trials %llu)\n",
               S_stop_name(r->stop), (unsigned long long)r->trials,
               (unsigned long long)r->trials_requested, (unsigned long long)r->trials);
    else if (rp->target_stderr > 0.0)
        printf("stopped   --trials reached before --target-stderr %g\n", rp->target_stderr);
    putchar('\n');
    printf("  %-24s %12s %10s  %s", "per trial", "mean", "stderr", "95% CI");
    if (isfinite(rp->exact_rej))
        printf("%-20s  %12s  %6s", "", "exact", "z");
    putchar('\n');
    S_row("rejections", &r->rejections, rp->exact_rej);
    S_row("target calls", &r->target_calls, rp->exact_calls);
    S_row("accepted per iteration", &r->accepted, NAN);
    printf("  %-24s %12.6f\n", "tokens per target call", S_tokens_per_call(rp));
    if (isfinite(rp->bias_tv))
        printf("  %-24s %12.6f  (max over positions of TV(empirical x_n, target); lossy verifier)\n",
               "per-token bias", rp->bias_tv);
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
    if (rp->exact_source)
        printf("\n  exact: %s; z = (mean - exact) / stderr\n", rp->exact_source);
    if (isfinite(rp->token_calls)) {
        double m = r->target_calls.mean, se = sd_welford_stderr(&r->target_calls);
        printf("\n  token-level SD on the same model and draft length needs %.6f target calls (exact);\n"
               "  %s needs %.6f +- %.6f: %.1f%% %s\n",
               rp->token_calls, rp->vt->name, m, se, 100.0 * fabs(rp->token_calls - m) / rp->token_calls,
               m <= rp->token_calls ? "fewer" : "more");
    }
    return fflush(stdout) == 0 ? 0 : EX_CANTCREAT_;
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
        O_TIME_LIMIT, O_TARGET_SE, O_ZIPF, O_ZIPF_DRAFT, O_ZIPF_TARGET
    };
    static const struct option opts[] = {
        CLI_MODEL_LONGOPTS,
        CLI_PARAM_LONGOPTS,
        {"algo", required_argument, 0, O_ALGO},
        {"trials", required_argument, 0, O_TRIALS},
        {"seed", required_argument, 0, O_SEED},
        {"threads", required_argument, 0, O_THREADS},
        {"json", no_argument, 0, O_JSON},
        {"csv", no_argument, 0, O_CSV},
        {"list", no_argument, 0, O_LIST},
        {"time-limit", required_argument, 0, O_TIME_LIMIT},
        {"target-stderr", required_argument, 0, O_TARGET_SE},
        {"zipf", no_argument, 0, O_ZIPF},
        {"zipf-draft", required_argument, 0, O_ZIPF_DRAFT},
        {"zipf-target", required_argument, 0, O_ZIPF_TARGET},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    const char *name = hooks->name ? hooks->name : "run";
    cli_model_opts mo;
    cli_model_init(&mo);
    sd_params par;
    sd_params_defaults(&par);
    cli_params cp = {&par, 0};
    const char *algo = "token";
    uint64_t trials = S_DEFAULT_TRIALS, seed = S_DEFAULT_SEED;
    size_t threads = 0;
    double time_limit = 0.0, target_se = 0.0;
    S_zipf_opts zo = {0, SD_LAZY_DEFAULT_S_DRAFT, SD_LAZY_DEFAULT_S_TARGET, 0};
    cli_format fmt = CLI_FMT_TABLE;
    sd_error err;
    int c, status = -1;
    optind = 0;
    opterr = 0;
    while (status < 0 && (c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        int r = cli_shared_option(&mo, &cp, c, optarg, &err);
        if (r < 0) {
            status = cli_fail(&err);
            break;
        }
        if (r > 0)
            continue;
        switch (c) {
        case 'h': S_help(); status = 0; break;
        case O_LIST: S_list(); status = 0; break;
        case O_ALGO: algo = optarg; break;
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
        case O_ZIPF: zo.on = 1; break;
        case O_ZIPF_DRAFT:
            zo.s_given = 1;
            if (cli_parse_double("--zipf-draft", optarg, 0.0, 100.0, &zo.s_draft, &err))
                status = cli_fail(&err);
            break;
        case O_ZIPF_TARGET:
            zo.s_given = 1;
            if (cli_parse_double("--zipf-target", optarg, 0.0, 100.0, &zo.s_target, &err))
                status = cli_fail(&err);
            break;
        case O_JSON: fmt = CLI_FMT_JSON; break;
        case O_CSV: fmt = CLI_FMT_CSV; break;
        default: status = cli_option_error(name, c, argv); break;
        }
    }
    if (status < 0 && optind < argc)
        status = cli_usage_error(name, "unexpected argument '%s'", argv[optind]);
    const sd_verifier_type *vt = NULL;
    if (status < 0 && !(vt = sd_verifier_find(algo)))
        status = cli_usage_error(name, "unknown verifier '%s' (see 'simdec run --list')", algo);
    if (status < 0 && cli_param_check(&cp, vt, &err))
        status = cli_fail(&err);
    if (status < 0 && hooks->no_early_stop && (time_limit > 0.0 || target_se > 0.0))
        status = cli_usage_error(name, "--time-limit and --target-stderr are not available here; give --trials");
    if (status < 0 && zo.s_given && !zo.on)
        status = cli_usage_error(name, "--zipf-draft/--zipf-target need --zipf");
    if (status < 0 && zo.on) {
        if (mo.file || mo.p || mo.q)
            status = cli_usage_error(name, "--zipf is a model of its own: drop --model/--p/--q");
        else if (mo.gen.alpha != SD_GEN_DEFAULT_ALPHA || mo.gen.mix != SD_GEN_DEFAULT_MIX)
            status = cli_usage_error(name, "--alpha/--mix do not apply to --zipf (use --zipf-draft/--zipf-target)");
        else if (strcmp(vt->name, "token") != 0)
            status = cli_usage_error(name, "--zipf supports --algo token only (the other verifiers read stored rows), not '%s'",
                                     vt->name);
    }
    sd_chain *ch = NULL;
    sd_lazy *lz = NULL;
    if (status < 0 && zo.on) {
        sd_lazy_params lp = {mo.gen.V, mo.gen.T, mo.gen.seed, zo.s_draft, zo.s_target};
        if (sd_lazy_new(&lp, &lz, &err))
            status = cli_fail(&err);
    } else if (status < 0 && !(ch = cli_model_build(&mo, &err))) {
        status = cli_fail(&err);
    }
    if (status >= 0) {
        cli_model_release(&mo);
        return status;
    }

    int claims = !vt->claims_lossless || vt->claims_lossless(&par);
    cli_progress ps = {0, 0};
    sd_sim_opts so = {.seed = seed,
                      .trials = trials,
                      .threads = (unsigned)threads,
                      .want_positions = !claims && ch && ch->T <= ((size_t)1 << 24) / ch->V,
                      .progress = !hooks->quiet && cli_stderr_is_tty() ? cli_progress_show : NULL,
                      .progress_ctx = &ps,
                      .time_limit = time_limit,
                      .target_stderr = target_se};
    sd_sim_job job = {vt, ch, lz, &par};
    sd_sim_result res;
    cmd_run_sim_fn sim = hooks->sim ? hooks->sim : S_default_sim;
    int rc = sim(hooks->ctx, &job, &so, &res, &err);
    cli_progress_end(&ps);
    if (rc) {
        status = cli_fail(&err);
    } else {
        S_report rp = {vt, ch, lz, &mo, &cp, &res, NAN, NAN, NAN, NULL, NAN, 0, time_limit, target_se};
#ifdef _OPENMP
        rp.threads = threads ? (unsigned)threads : (unsigned)omp_get_num_procs();
#else
        rp.threads = 1;
#endif
        S_exact(vt, ch, lz, &par, &rp.exact_rej, &rp.exact_calls, &rp.exact_source);
        /* The question a user asks first: how many target calls does this
         * verifier save over token-level SD on the same model and draft
         * length?  Token's expectation is exact (sd_exact_token). */
        if (ch && strcmp(vt->name, "token") != 0 &&
            sd_exact_token(ch, sd_verifier_uses(vt, "gamma") ? par.gamma : 0, NULL, &rp.token_calls, NULL))
            rp.token_calls = NAN;
        if (res.pos_counts && ch)
            rp.bias_tv = sd_sim_position_tv(&res, ch);
        status = fmt == CLI_FMT_JSON ? S_print_json(&rp)
                 : fmt == CLI_FMT_CSV ? S_print_csv(&rp)
                                      : S_print_table(&rp);
        sd_sim_result_free(&res);
    }
    sd_chain_free(ch);
    sd_lazy_free(lz);
    cli_model_release(&mo);
    return status;
}
