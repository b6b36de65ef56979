/* eval_speedup.c — `simdec eval speedup`: the expected wall-clock speed-up
 * of a verifier over target-only decoding (sims/exact/sd_speedup.h), from its
 * exact expected target calls where it has them and by Monte-Carlo (the
 * trial engine) otherwise, at one draft length or the best one. */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../sims/engine/sd_params.h"
#include "../sims/engine/sd_sim.h"
#include "../sims/exact/sd_speedup.h"
#include "../src/sd_dist.h"
#include "../src/sd_version.h"
#include "cli.h"
#include "eval_policy.h"
#include "eval_speedup.h"

static const char S_help_head[] =
    "Usage: simdec eval speedup --algo NAME --gamma G|LIST|LO..HI|best [verifier\n"
    "                           parameters] --c RATIO [--draft-cost token|step]\n"
    "                           [model] [--gamma-max N] [--trials N] [--seed S]\n"
    "                           [--json]\n"
    "\n"
    "Expected wall-clock speed-up over target-only decoding when one draft token\n"
    "costs RATIO target calls.  Cost model: target-only decoding of T tokens costs\n"
    "T; an iteration of speculative decoding costs 1 (one target call) + c*d*G\n"
    "(d drafts of G tokens: d = k or M for the multi-draft verifiers, whose every\n"
    "draft is drafted, else 1), so S = T / (E[target calls] (1 + c d G)); a\n"
    "verifier without a draft length --gamma (the tree verifiers) is refused.\n"
    "E[target calls] is exact where the verifier has an exact evaluator, else a\n"
    "Monte-Carlo estimate (--trials, --seed) with its 95% CI mapped into S.\n"
    "For a single-token problem (--p/--q: tokens i.i.d.) the limit T -> infinity\n"
    "is printed too; for token-level SD it is Leviathan et al. 2023's\n"
    "(1 - a^(G+1)) / ((1 - a)(G c + 1)), a = sum min(p, q), printed beside it.\n"
    "Without --T, a single-token problem is evaluated at T -> infinity: the\n"
    "headline speed-up and --gamma best are the limit's (said so in the output).\n"
    "\n"
    "  --algo NAME     verifier (default token)\n"
    "  --gamma G|best  draft length; a list 1,2,4 or a range 1..8; best: the G in\n"
    "                  1..--gamma-max maximising S\n"
    "  --algo a,b, --k 2,4  sweep verifiers and draft counts like run: one table\n"
    "                  per point (JSON: an array), every point on the same --seed\n"
    "  --draft-cost token|step  multi-draft cost: token (default) charges c for each\n"
    "                  of the k drafts' tokens (d = k); step charges c per drafting\n"
    "                  step, the k drafts drafted in parallel (d = 1)\n"
    "  --gamma-max N   largest G tried by --gamma best (default 16, at most T)\n"
    "  --c RATIO       cost of one draft token in target calls (default 0.05)\n"
    "  --trials N      Monte-Carlo trials where there is no exact value (default 10000)\n"
    "  --seed S        their seed (default 1)\n"
    "  --json          one JSON object\n"
    "  --plugin FILE   load verifiers from a plugin (include/simdec.h); repeatable\n"
    "  --draft-policy RULE  a draft-length policy (specdecpp:best, entropy:best, ...):\n"
    "                  see simdec eval speedup --draft-policy fixed --help\n"
    "\n";

typedef struct {
    size_t gamma;
    double calls, calls_lo, calls_hi; /* E[target calls] and its CI (= calls when exact) */
    int exact;
    double s, s_lo, s_hi;
    double rate_limit, s_limit;       /* i.i.d. limit (NaN: n/a) */
} S_point;

/* --gamma LIST: counts separated by commas, each N or LO..HI, into g[]
 * (at most cap values, each 1..4096). */
static int S_count_list(const char *opt, const char *s, size_t *g, size_t *n, size_t cap, sd_error *err)
{
    *n = 0;
    while (*s) {
        char *end;
        unsigned long lo = strtoul(s, &end, 10), hi = lo;
        if (end == s || *s == '-' || *s == '+')
            return sd_error_set(err, SD_EUSAGE, "%s '%s': expected counts N or LO..HI%s", opt, s,
                                  strcmp(opt, "--gamma") == 0 ? " or best" : "");
        if (strncmp(end, "..", 2) == 0) {
            const char *h = end + 2;
            hi = strtoul(h, &end, 10);
            if (end == h || *h == '-' || *h == '+')
                return sd_error_set(err, SD_EUSAGE, "%s '%s': expected a range LO..HI", opt, s);
        }
        if (lo < 1 || hi < lo || hi > 4096)
            return sd_error_set(err, SD_EUSAGE, "%s: %lu..%lu; expected 1 <= LO <= HI <= 4096", opt, lo, hi);
        for (unsigned long v = lo; v <= hi; v++) {
            if (*n >= cap)
                return sd_error_set(err, SD_EUSAGE, "%s: more than %zu values", opt, cap);
            g[(*n)++] = v;
        }
        if (*end == ',')
            end++;
        else if (*end)
            return sd_error_set(err, SD_EUSAGE, "%s '%s': expected counts separated by commas", opt, s);
        s = end;
    }
    return SD_OK;
}

/* One verifier at one --k: the command as it was (collect: append the
 * JSON object there instead of printing it; sep: a blank line before the
 * table). */
static int S_speedup_one(int argc, char **argv, json_t *collect, int sep)
{
    enum { O_ALGO = CLI_OPT_FIRST_FREE, O_C, O_GMAX, O_TRIALS, O_SEED, O_JSON, O_DRAFT_COST };
    static const struct option base[] = {
        CLI_MODEL_LONGOPTS,
        CLI_PLUGIN_LONGOPT,
        {"algo", required_argument, 0, O_ALGO},
        {"c", required_argument, 0, O_C},
        {"gamma-max", required_argument, 0, O_GMAX},
        {"trials", required_argument, 0, O_TRIALS},
        {"seed", required_argument, 0, O_SEED},
        {"json", no_argument, 0, O_JSON},
        {"draft-cost", required_argument, 0, O_DRAFT_COST},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    const char *cmd = "eval speedup";
    for (int i = 0; i < argc; i++) /* a draft-length policy: eval_policy.c */
        if (strcmp(argv[i], "--draft-policy") == 0 || strncmp(argv[i], "--draft-policy=", 15) == 0)
            return cmd_eval_policy(argc, argv);
    /* --gamma best is taken out before the verifier's options parse. */
    char **av = calloc((size_t)argc + 1, sizeof *av);
    if (!av)
        return EX_OSERR_;
    int ac = 0, best = 0;
    size_t glist[256], nglist = 0;
    for (int i = 0; i < argc; i++) {
        const char *gv = NULL; /* --gamma LIST or LO..HI */
        if (strcmp(argv[i], "--gamma") == 0 && i + 1 < argc && (strchr(argv[i + 1], ',') || strstr(argv[i + 1], "..")))
            gv = argv[++i];
        else if (strncmp(argv[i], "--gamma=", 8) == 0 && (strchr(argv[i] + 8, ',') || strstr(argv[i] + 8, "..")))
            gv = argv[i] + 8;
        if (gv) {
            sd_error gerr;
            if (S_count_list("--gamma", gv, glist, &nglist, sizeof glist / sizeof glist[0], &gerr)) {
                free(av);
                return cli_usage_error("eval speedup", "%s", gerr.msg);
            }
            best = 0;
            continue;
        }
        if (strcmp(argv[i], "--gamma=best") == 0) {
            best = 1;
            nglist = 0;
            continue;
        }
        if (strcmp(argv[i], "--gamma") == 0 && i + 1 < argc && strcmp(argv[i + 1], "best") == 0) {
            best = 1;
            nglist = 0;
            i++;
            continue;
        }
        if (strcmp(argv[i], "--gamma") == 0 || strncmp(argv[i], "--gamma=", 8) == 0)
            best = 0, nglist = 0; /* the last --gamma wins, as every repeated option does */
        av[ac++] = argv[i];
    }
    cli_verifier cv;
    struct option *opts;
    int status = cli_verifier_prescan(cmd, ac, av, "algo", sd_verifier_baseline()->name, base, NULL, &cv, &opts);
    if (status >= 0) {
        free(av);
        return status;
    }
    cli_model_opts mo;
    cli_model_init(&mo);
    double cr = 0.05;
    size_t gmax = 16;
    uint64_t trials = 10000, seed = 1;
    int json = 0, c, per_step = 0;
    sd_error err;
    optind = 0;
    opterr = 0;
    while (status < 0 && (c = cli_getopt(ac, av, ":h", opts)) != -1) {
        if (cli_verifier_option(&mo, &cv, c, optarg, &status))
            continue;
        switch (c) {
        case 'h':
            cli_verifier_help(S_help_head, &cv);
            status = 0;
            break;
        case O_ALGO: break;
        case O_C:
            if (cli_parse_double("--c", optarg, 0.0, 1e6, &cr, &err))
                status = cli_fail(&err);
            break;
        case O_GMAX:
            if (cli_parse_size("--gamma-max", optarg, 1, 4096, &gmax, &err))
                status = cli_fail(&err);
            break;
        case O_TRIALS:
            if (cli_parse_trials(optarg, &trials, &err))
                status = cli_fail(&err);
            break;
        case O_SEED:
            if (cli_parse_seed(optarg, &seed, &err))
                status = cli_fail(&err);
            break;
        case O_JSON: json = 1; break;
        case O_DRAFT_COST:
            if (strcmp(optarg, "token") == 0)
                per_step = 0;
            else if (strcmp(optarg, "step") == 0)
                per_step = 1;
            else
                status = cli_usage_error(cmd, "--draft-cost '%s': expected token or step", optarg);
            break;
        default: status = cli_unknown_option(cmd, c, av, cv.vt); break;
        }
    }
    free(opts);
    if (status < 0 && optind < ac)
        status = cli_usage_error(cmd, "unexpected argument '%s'", av[optind]);
    const sd_verifier_type *vt = cv.vt;
    if (status < 0 && !sd_params_decl(vt, "gamma", NULL))
        status = cli_usage_error(cmd, "--algo %s has no draft length --gamma; the speed-up model needs one",
                                 vt->name);
    if (status < 0 && !best && !nglist && cv.par.gamma == 0)
        status = cli_usage_error(cmd, "give --gamma G or --gamma best (every iteration drafts G tokens)");
    cli_model model;
    memset(&model, 0, sizeof model);
    if (status < 0 && cli_model_open(&mo, &model, &err))
        status = cli_fail(&err);
    free(av);
    if (status >= 0) {
        cli_model_close(&model);
        cli_model_release(&mo);
        return status;
    }
    const sd_model *m = &model.view;
    int iid = mo.p != NULL;
    /* An i.i.d. problem without --T: the limit T -> infinity is the headline. */
    int limit = iid && !mo.T_given;
    size_t g0 = best ? 1 : cv.par.gamma, g1 = best ? (limit || gmax < m->T ? gmax : m->T) : cv.par.gamma;
    size_t npts = nglist ? nglist : g1 - g0 + 1;
    S_point *pts = calloc(npts, sizeof *pts);
    size_t npt = 0, ibest = 0;
    double alpha = NAN;
    if (iid) {
        alpha = 0.0;
        for (size_t b = 0; b < mo.pV; b++)
            alpha += fmin(mo.p[b], mo.q[b]);
    }
    int is_token = vt == sd_verifier_baseline();
    for (size_t i = 0; pts && status < 0 && i < npts; i++) {
        size_t g = nglist ? glist[i] : g0 + i;
        S_point *pt = &pts[npt];
        sd_params par = cv.par;
        par.gamma = g;
        pt->gamma = g;
        double dt = per_step ? (double)g : sd_speedup_draft_tokens(vt, &par);
        pt->rate_limit = pt->s_limit = NAN;
        if (iid) {
            if (is_token) /* the renewal rate in closed form (sims/exact/sd_speedup.h) */
                pt->rate_limit = sd_speedup_iid_rate_token(alpha, g);
            else if (sd_gen_chain_bytes(mo.pV, g + 1) <= model.budget / 2 || !model.backoff)
                sd_speedup_iid_rate(vt, &par, mo.p, mo.q, mo.pV, &pt->rate_limit, NULL);
            if (isfinite(pt->rate_limit))
                pt->s_limit = sd_speedup(1.0, pt->rate_limit, cr, dt);
        }
        if (limit) {
            if (!isfinite(pt->s_limit)) {
                status = cli_usage_error(cmd, "--algo %s has no exact T -> infinity value here (V = %zu, gamma %zu); "
                                         "give --T N for a finite horizon", vt->name, mo.pV, g);
                break;
            }
            pt->calls = pt->calls_lo = pt->calls_hi = pt->rate_limit;
            pt->exact = 1;
            pt->s = pt->s_lo = pt->s_hi = pt->s_limit;
        } else {
            if (sd_speedup_calls(vt, m, &par, trials, seed, &pt->calls, &pt->calls_lo, &pt->calls_hi, &pt->exact,
                                 &err)) {
                status = cli_fail(&err);
                break;
            }
            pt->s = sd_speedup((double)m->T, pt->calls, cr, dt);
            pt->s_lo = sd_speedup((double)m->T, pt->calls_hi, cr, dt);
            pt->s_hi = sd_speedup((double)m->T, pt->calls_lo, cr, dt);
        }
        if (pt->s > pts[ibest].s)
            ibest = npt;
        npt++;
    }
    if (!pts)
        status = cli_out_of_memory();
    if (status < 0 && json) {
        json_t *o = json_object();
        json_object_set_new(o, "version", json_string(SD_VERSION));
        json_object_set_new(o, "algo", json_string(vt->name));
        json_object_set_new(o, "params", sd_params_json(&cv.par, vt));
        cli_model_describe(&mo, m, o);
        cli_model_identity(&mo, &model, o);
        json_object_set_new(o, "c", json_real(cr));
        json_object_set_new(o, "cost_model", json_string("S = T / (E[target calls] (1 + c d gamma)), d drafts"));
        json_object_set_new(o, "draft_cost", json_string(per_step ? "step" : "token"));
        json_object_set_new(o, "horizon_limit", json_boolean(limit));
        json_object_set_new(o, "seed", json_integer((json_int_t)seed));
        json_object_set_new(o, "trials", json_integer((json_int_t)trials));
        json_t *arr = json_array();
        for (size_t i = 0; i < npt; i++) {
            json_t *p = json_object();
            json_object_set_new(p, "gamma", json_integer((json_int_t)pts[i].gamma));
            json_object_set_new(p, "target_calls", json_real(pts[i].calls));
            json_object_set_new(p, "exact", json_boolean(pts[i].exact));
            json_object_set_new(p, "speedup", json_real(pts[i].s));
            json_object_set_new(p, "speedup_ci95", json_pack("[f,f]", pts[i].s_lo, pts[i].s_hi));
            json_object_set_new(p, "speedup_iid_limit", cli_json_real(pts[i].s_limit));
            if (iid && is_token)
                json_object_set_new(p, "leviathan", json_real(sd_speedup_leviathan(alpha, pts[i].gamma, cr)));
            json_array_append_new(arr, p);
        }
        json_object_set_new(o, "points", arr);
        json_object_set_new(o, "best_gamma", json_integer((json_int_t)pts[ibest].gamma));
        json_object_set_new(o, "best_speedup", json_real(pts[ibest].s));
        if (collect) {
            json_array_append_new(collect, o);
            status = 0;
        } else {
            status = cli_print_json(o);
        }
    } else if (status < 0) {
        if (sep)
            putchar('\n');
        printf("simdec %s eval speedup --algo %s, draft cost c = %g target calls per draft token\n", SD_VERSION,
               vt->name, cr);
        cli_model_summary(stdout, "model", &mo, m);
        cli_model_identity_line(stdout, &mo, &model);
        printf("cost      S = T / (E[target calls] (1 + c d G)), d = %g drafts%s\n",
               per_step ? 1.0 : sd_speedup_draft_tokens(vt, &(sd_params){.gamma = 1, .k = cv.par.k}),
               per_step ? " (--draft-cost step: the drafts of a step drafted in parallel)" : "");
        if (limit)
            printf("horizon   T -> infinity (i.i.d. tokens, no --T): target calls per token and the limit "
                   "speed-up\n");
        int mc = 0;
        for (size_t i = 0; i < npt; i++)
            mc |= !pts[i].exact;
        if (mc) /* the seed of the Monte-Carlo points, as in JSON */
            printf("trials    %llu   seed %llu   (the points marked MC)\n", (unsigned long long)trials,
                   (unsigned long long)seed);
        putchar('\n');
        printf("  %5s %14s %6s %10s %22s", "G", limit ? "calls/token" : "target calls", "", "speed-up", "95% CI");
        if (iid)
            printf(" %16s%s", "T->inf (i.i.d.)", is_token ? "   Leviathan et al." : "");
        putchar('\n');
        for (size_t i = 0; i < npt; i++) {
            const S_point *pt = &pts[i];
            printf("  %5zu %14.6f %6s %10.6f", pt->gamma, pt->calls, pt->exact ? "exact" : "MC", pt->s);
            if (pt->exact)
                printf(" %22s", "");
            else
                printf("   [%8.6f, %8.6f]", pt->s_lo, pt->s_hi);
            if (iid && isfinite(pt->s_limit))
                printf(" %16.10f", pt->s_limit);
            else if (iid)
                printf(" %16s", "n/a"); /* no exact iteration law here: null in JSON */
            if (iid && is_token)
                printf("   %.10f", sd_speedup_leviathan(alpha, pt->gamma, cr));
            printf("%s\n", best && i == ibest ? "   <- best" : "");
        }
        status = cli_stdout_status();
    }
    if (status < 0)
        status = 0;
    free(pts);
    cli_model_close(&model);
    cli_model_release(&mo);
    return status;
}

/* The value of option `name` in argv (the last one), as "--name V" or
 * "--name=V"; its index in *at (the value's), or NULL. */
static const char *S_opt(int argc, char **argv, const char *name, int *at)
{
    size_t n = strlen(name);
    const char *v = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], name) == 0 && i + 1 < argc) {
            v = argv[i + 1];
            *at = i + 1;
            i++;
        } else if (strncmp(argv[i], name, n) == 0 && argv[i][n] == '=') {
            v = argv[i] + n + 1;
            *at = -i; /* the whole word */
        }
    }
    return v;
}

/* `--algo a,b` and `--k 2,4` (or LO..HI) sweep like run: one table per
 * point (JSON: an array of the points' objects), every point on the same
 * --seed.  --gamma lists stay within a point (one table per verifier). */
int cmd_eval_speedup(int argc, char **argv)
{
    int at_a = 0, at_k = 0;
    const char *algos = S_opt(argc, argv, "--algo", &at_a), *ks = S_opt(argc, argv, "--k", &at_k);
    int list_a = algos && strchr(algos, ','), list_k = ks && (strchr(ks, ',') || strstr(ks, ".."));
    if (!list_a && !list_k)
        return S_speedup_one(argc, argv, NULL, 0);
    size_t kv[256], nk = 1;
    if (list_k) {
        sd_error e;
        if (S_count_list("--k", ks, kv, &nk, sizeof kv / sizeof kv[0], &e))
            return cli_usage_error("eval speedup", "%s", e.msg);
    }
    char *acopy = strdup(algos ? algos : sd_verifier_baseline()->name);
    char **av = calloc((size_t)argc + 1, sizeof *av);
    json_t *arr = json_array();
    int json = 0, status = 0;
    for (int i = 1; i < argc; i++)
        json |= strcmp(argv[i], "--json") == 0;
    if (!acopy || !av || !arr) {
        free(acopy);
        free(av);
        json_decref(arr);
        return cli_out_of_memory();
    }
    char kbuf[32], wbuf[300];
    int first = 1;
    char *save = NULL;
    for (char *a = strtok_r(acopy, ",", &save); status == 0 && a; a = strtok_r(NULL, ",", &save)) {
        for (size_t j = 0; status == 0 && j < nk; j++) {
            memcpy(av, argv, (size_t)argc * sizeof *av);
            if (list_a && at_a > 0)
                av[at_a] = a;
            else if (list_a) {
                snprintf(wbuf, sizeof wbuf, "--algo=%s", a);
                av[-at_a] = wbuf;
            }
            if (list_k) {
                const sd_verifier_type *vt = sd_verifier_find(a);
                if (vt && !sd_params_decl(vt, "k", NULL) && j > 0)
                    continue; /* a verifier without k: once */
                snprintf(kbuf, sizeof kbuf, at_k > 0 ? "%zu" : "--k=%zu", kv[j]);
                if (vt && !sd_params_decl(vt, "k", NULL)) { /* drop --k for it */
                    int w = 0;
                    for (int i = 0; i < argc; i++) {
                        if ((at_k > 0 && (i == at_k || i == at_k - 1)) || (at_k < 0 && i == -at_k))
                            continue;
                        av[w++] = av[i];
                    }
                    av[w] = NULL;
                    status = S_speedup_one(w, av, json ? arr : NULL, !first);
                    first = 0;
                    continue;
                }
                av[at_k > 0 ? at_k : -at_k] = kbuf;
            }
            av[argc] = NULL;
            status = S_speedup_one(argc, av, json ? arr : NULL, !first);
            first = 0;
        }
    }
    if (status == 0 && json)
        status = cli_print_json(arr);
    else
        json_decref(arr);
    free(acopy);
    free(av);
    return status;
}
