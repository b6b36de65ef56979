/* cmd_run.c — `simdec run`: Monte-Carlo of one verifier (sims/sd_sim.h),
 * beside the exact values where simdec has them. */
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
#include "cli.h"
#include "commands.h"

#define S_DEFAULT_TRIALS 10000u
#define S_DEFAULT_SEED 1u

static const char S_help_head[] =
    "Usage: simdec run [--algo NAME] [verifier parameters] [model] [--trials N]\n"
    "                  [--seed S] [--threads N] [--json|--csv]\n"
    "\n"
    "Simulates a verifier on the model and reports, per trial (one pass over the\n"
    "horizon): rejections (iterations ending in a residual sample), target calls,\n"
    "tokens per target call and accepted draft tokens per iteration, each with its\n"
    "standard error and 95% confidence interval, beside the exact value where one\n"
    "is known (token: Theorem 1 of Yin et al. / an exact DP for finite --gamma).\n"
    "The same --seed gives the same output, whatever --threads.\n"
    "\n"
    "  --algo NAME     verifier (default token); --list shows them all\n"
    "  --trials N      number of trials (default 10000)\n"
    "  --seed S        random seed (default 1); trial i uses stream (S, i)\n"
    "  --threads N     worker threads (default: all cores)\n"
    "  --json, --csv   machine-readable output (default: a table)\n"
    "  --list          list the verifiers and their parameters\n"
    "\n";

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

typedef struct {
    time_t last;
    int shown;
} S_progress_state;

static void S_progress(void *ctx, uint64_t done, uint64_t total)
{
    S_progress_state *ps = ctx;
    time_t now = time(NULL);
    if (now == ps->last && done < total)
        return;
    ps->last = now;
    ps->shown = 1;
    fprintf(stderr, "\rsimdec: %llu / %llu trials (%.0f%%)", (unsigned long long)done,
            (unsigned long long)total, 100.0 * (double)done / (double)total);
    fflush(stderr);
}

/* Exact values for verifiers that have them; NAN where none is known. */
static void S_exact(const sd_verifier_type *vt, const sd_chain *c, const sd_params *par,
                    double *rej, double *calls)
{
    *rej = *calls = NAN;
    if (strcmp(vt->name, "token") == 0)
        sd_exact_token(c, par->gamma, rej, calls, NULL);
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
    const sd_chain *c;
    const cli_model_opts *mo;
    cli_params *cp;
    const sd_sim_result *r;
    double exact_rej, exact_calls, bias_tv;
    unsigned threads;
} S_report;

static double S_tokens_per_call(const S_report *rp)
{
    return (double)rp->c->T / rp->r->target_calls.mean;
}

static int S_print_json(const S_report *rp)
{
    const sd_sim_result *r = rp->r;
    json_t *o = json_object();
    json_object_set_new(o, "algo", json_string(rp->vt->name));
    json_object_set_new(o, "vocab", json_integer((json_int_t)rp->c->V));
    json_object_set_new(o, "horizon", json_integer((json_int_t)rp->c->T));
    json_object_set_new(o, "trials", json_integer((json_int_t)r->trials));
    json_object_set_new(o, "seed", json_integer((json_int_t)r->seed));
    cli_param_describe(rp->cp, rp->vt, o);
    cli_model_describe(rp->mo, rp->c, o);
    json_object_set_new(o, "rejections", S_stat_json(&r->rejections));
    json_object_set_new(o, "target_calls", S_stat_json(&r->target_calls));
    json_object_set_new(o, "tokens_per_call", json_real(S_tokens_per_call(rp)));
    json_object_set_new(o, "exact_rejections", cli_json_real(rp->exact_rej));
    json_object_set_new(o, "exact_target_calls", cli_json_real(rp->exact_calls));
    json_object_set_new(o, "accepted_per_iteration", S_stat_json(&r->accepted));
    json_t *h = json_array();
    size_t last = 0;
    for (size_t j = 0; j <= rp->c->T; j++)
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
           rp->c->V, rp->c->T, (unsigned long long)r->trials, (unsigned long long)r->seed,
           r->rejections.mean, sd_welford_stderr(&r->rejections), lo, hi, r->target_calls.mean,
           sd_welford_stderr(&r->target_calls), S_tokens_per_call(rp), r->accepted.mean);
    if (isfinite(rp->exact_rej))
        printf("%.17g,%.17g\n", rp->exact_rej, rp->exact_calls);
    else
        printf(",\n");
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
    const sd_chain *c = rp->c;
    printf("simdec run --algo %s: %s\n", rp->vt->name, rp->vt->summary);
    if (rp->mo->p)
        printf("model     single-token problem (--p/--q), V=%zu, T=%zu\n", c->V, c->T);
    else if (rp->mo->file)
        printf("model     %s, V=%zu, T=%zu\n", rp->mo->file, c->V, c->T);
    else
        printf("model     generated, V=%zu, T=%zu, model-seed %lu, alpha %g, mix %g\n", c->V, c->T,
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
    printf("\ntrials    %llu   seed %llu   threads %u\n\n", (unsigned long long)r->trials,
           (unsigned long long)r->seed, rp->threads);
    printf("  %-24s %12s %10s  %-22s  %12s  %6s\n", "per trial", "mean", "stderr", "95% CI",
           isfinite(rp->exact_rej) ? "exact" : "", isfinite(rp->exact_rej) ? "z" : "");
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
    for (size_t j = 0; j <= c->T; j++)
        tot += r->accept_hist[j];
    size_t shown = 0;
    for (size_t j = 0; j <= c->T && shown < 8; j++)
        if (r->accept_hist[j] > 0) {
            printf("  P(%zu)=%.4f", j, r->accept_hist[j] / tot);
            shown++;
        }
    printf("%s\n", shown == 8 ? "  ..." : "");
    if (isfinite(rp->exact_rej))
        printf("\n  exact: %s; z = (mean - exact) / stderr\n",
               rp->cp->par->gamma ? "exact DP over (x_{n-1}, accepted-in-iteration), finite gamma"
                                  : "Theorem 1 of Yin et al. (004_), lookahead to the horizon");
    return fflush(stdout) == 0 ? 0 : EX_CANTCREAT_;
}

int cmd_run(int argc, char **argv)
{
    enum { O_ALGO = CLI_OPT_FIRST_FREE, O_TRIALS, O_SEED, O_THREADS, O_JSON, O_CSV, O_LIST };
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
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    cli_model_opts mo;
    cli_model_init(&mo);
    sd_params par;
    sd_params_defaults(&par);
    cli_params cp = {&par, 0};
    const char *algo = "token";
    uint64_t trials = S_DEFAULT_TRIALS, seed = S_DEFAULT_SEED;
    size_t threads = 0;
    cli_format fmt = CLI_FMT_TABLE;
    sd_error err;
    int c, status = -1;
    optind = 0;
    opterr = 0;
    while (status < 0 && (c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        int r = cli_model_option(&mo, c, optarg, &err);
        if (r == 0)
            r = cli_param_option(&cp, c, optarg, &err);
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
            if (cli_parse_u64("--trials", optarg, &trials, &err) || trials == 0 ||
                trials > ((uint64_t)1 << 53)) {
                sd_error_set(&err, SD_EUSAGE, "--trials: expected a whole number from 1 to 2^53, got '%s'", optarg);
                status = cli_fail(&err);
            }
            break;
        case O_SEED:
            if (cli_parse_u64("--seed", optarg, &seed, &err))
                status = cli_fail(&err);
            break;
        case O_THREADS:
            if (cli_parse_size("--threads", optarg, 1, 1024, &threads, &err))
                status = cli_fail(&err);
            break;
        case O_JSON: fmt = CLI_FMT_JSON; break;
        case O_CSV: fmt = CLI_FMT_CSV; break;
        case ':': status = cli_usage_error("run", "%s needs a value", argv[optind - 1]); break;
        default: status = cli_usage_error("run", "unknown option '%s'", argv[optind - 1]); break;
        }
    }
    if (status < 0 && optind < argc)
        status = cli_usage_error("run", "unexpected argument '%s'", argv[optind]);
    const sd_verifier_type *vt = NULL;
    if (status < 0 && !(vt = sd_verifier_find(algo)))
        status = cli_usage_error("run", "unknown verifier '%s' (see 'simdec run --list')", algo);
    if (status < 0 && cli_param_check(&cp, vt, &err))
        status = cli_fail(&err);
    sd_chain *ch = NULL;
    if (status < 0 && !(ch = cli_model_build(&mo, &err)))
        status = cli_fail(&err);
    if (status >= 0) {
        cli_model_release(&mo);
        return status;
    }

    int claims = !vt->claims_lossless || vt->claims_lossless(&par);
    S_progress_state ps = {0, 0};
    sd_sim_opts so = {seed, trials, (unsigned)threads, !claims && ch->T <= ((size_t)1 << 24) / ch->V,
                      cli_stderr_is_tty() ? S_progress : NULL, &ps};
    sd_sim_result res;
    int rc = sd_sim_run(vt, ch, &par, &so, &res, &err);
    if (ps.shown)
        fputs("\r\033[K", stderr);
    if (rc) {
        sd_chain_free(ch);
        cli_model_release(&mo);
        return cli_fail(&err);
    }
    S_report rp = {vt, ch, &mo, &cp, &res, NAN, NAN, NAN, 0};
#ifdef _OPENMP
    rp.threads = threads ? (unsigned)threads : (unsigned)omp_get_num_procs();
#else
    rp.threads = 1;
#endif
    S_exact(vt, ch, &par, &rp.exact_rej, &rp.exact_calls);
    if (res.pos_counts)
        rp.bias_tv = sd_sim_position_tv(&res, ch);
    status = fmt == CLI_FMT_JSON ? S_print_json(&rp) : fmt == CLI_FMT_CSV ? S_print_csv(&rp) : S_print_table(&rp);
    sd_sim_result_free(&res);
    sd_chain_free(ch);
    cli_model_release(&mo);
    return status;
}
