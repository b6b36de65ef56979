/* bench.c — `make bench`: throughput of the Monte-Carlo driver (issue 7).
 *
 * Runs sd_sim_run on fixed models and prints one table: verified tokens per
 * second (trials·T / wall time, the kernel's table build included), ns per
 * token, threads, uniforms per token, the speed-up over the numpy baseline
 * (bench/baseline_numpy.py, same model law, run in the same `make bench`
 * when numpy is installed) and, for the multi-draft verifiers, the ratio to
 * token-level on the same chain; in the table of every verifier at gamma 4,
 * the ratio to that verifier's vectorised numpy baseline where
 * baseline_numpy.py has one (block, biased, batch, rrs, spectr, sprinter;
 * its lines "NAME V T GAMMA tokens/s rejections", GAMMA 0 for no draft
 * length), and one summary line each.  It also measures, in the same process and
 * on the same threads, the table build alone and the random-number floor:
 * the time to draw the token kernel's uniforms (1 per position + 1 for x_0,
 * per-trial Philox streams computed across trials exactly as the kernel
 * does) without doing anything with them.  Timings are wall clock, best of
 * --reps runs; on a shared machine they are noisy (docs/performance.md).
 *
 *   simdec-bench [--threads N] [--reps R] [--quick] [--baseline FILE] */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "../sims/engine/sd_params.h"
#include "../sims/engine/sd_sim.h"
#include "../sims/verifiers/sd_token.h"
#include "../src/sd_zipf.h"
#include "../src/sd_rngbuf.h"

/* Process CPU time (all threads), seconds. */
static double S_cpu(void)
{
    struct timespec t;
    if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t))
        return 0.0;
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double S_now(void)
{
#ifdef _OPENMP
    return omp_get_wtime();
#else
    return (double)clock() / CLOCKS_PER_SEC;
#endif
}

/* A verifier's vectorised numpy baseline at V=7 (bench/baseline_numpy.py's
 * lines "NAME 7 50 GAMMA tokens/s rejections" and "NAME-cpu ..."): gamma 4,
 * or 0 for a verifier without a draft length (sprinter). */
typedef struct {
    char name[16];
    size_t gamma;    /* 4, or 0: no draft length */
    double tps, cpu; /* tokens per wall second, per CPU second; 0 if unknown */
} S_bl_row;

enum { S_BL_ROWS = 8 };

typedef struct {
    double v7, v256;  /* baseline tokens/s (inverse-CDF token), 0 if unknown */
    double alias7;    /* the alias-method token baseline at V=7 */
    double alias7cpu; /* the same per second of CPU time */
    S_bl_row row[S_BL_ROWS]; /* block, biased, batch, rrs, spectr, sprinter: the file's order */
    size_t nrow;
} S_baseline;

/* The baseline row of verifier name, or NULL. */
static S_bl_row *S_bl_find(S_baseline *b, const char *name)
{
    for (size_t i = 0; i < b->nrow; i++)
        if (strcmp(b->row[i].name, name) == 0)
            return &b->row[i];
    return NULL;
}

static void S_read_baseline(const char *path, S_baseline *b)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    size_t V, T, g;
    double tps, rej;
    char kind[16];
    while (fscanf(f, " %15s %zu %zu", kind, &V, &T) == 3) {
        if (strcmp(kind, "baseline") != 0 && strcmp(kind, "alias") != 0 && strcmp(kind, "alias-cpu") != 0) {
            /* a verifier's line: its gamma field first */
            if (fscanf(f, " %zu %lf %lf", &g, &tps, &rej) != 3)
                break;
            size_t len = strlen(kind);
            int cpu = len > 4 && strcmp(kind + len - 4, "-cpu") == 0;
            if (cpu)
                kind[len - 4] = '\0';
            if (V != 7 || (g != 4 && g != 0))
                continue;
            S_bl_row *r = S_bl_find(b, kind);
            if (!r && b->nrow < S_BL_ROWS) {
                r = &b->row[b->nrow++];
                memset(r, 0, sizeof *r);
                snprintf(r->name, sizeof r->name, "%s", kind);
            }
            if (r) {
                r->gamma = g;
                *(cpu ? &r->cpu : &r->tps) = tps;
            }
            continue;
        }
        if (fscanf(f, " %lf %lf", &tps, &rej) != 2)
            break;
        if (strcmp(kind, "alias") == 0 && V == 7)
            b->alias7 = tps;
        if (strcmp(kind, "alias-cpu") == 0 && V == 7)
            b->alias7cpu = tps;
        if (strcmp(kind, "baseline") == 0 && V == 7)
            b->v7 = tps;
        if (strcmp(kind, "baseline") == 0 && V == 256)
            b->v256 = tps;
    }
    fclose(f);
}

typedef struct {
    double tps, seconds, rej_mean;
    double tps_cpu; /* per second of process CPU time (all threads), best */
    uint64_t trials;
    const char *kernel;
} S_meas;

static int S_measure(const sd_sim_job *job, uint64_t trials, unsigned threads, int reps, S_meas *m)
{
    sd_sim_opts so = {.seed = 1, .trials = trials, .threads = threads};
    memset(m, 0, sizeof *m);
    for (int r = 0; r < reps; r++) {
        sd_sim_result res;
        sd_error err;
        double t0 = S_now(), c0 = S_cpu();
        if (sd_sim_run_job(job, &so, &res, &err)) {
            fprintf(stderr, "simdec-bench: %s\n", err.msg);
            return 1;
        }
        double dt = S_now() - t0, dc = S_cpu() - c0;
        double tps = (double)trials * (double)res.T / dt;
        if (dc > 0 && (double)trials * (double)res.T / dc > m->tps_cpu)
            m->tps_cpu = (double)trials * (double)res.T / dc;
        if (tps > m->tps) {
            m->tps = tps;
            m->seconds = dt;
        }
        m->rej_mean = res.rejections.mean;
        m->kernel = res.kernel;
        sd_sim_result_free(&res);
    }
    m->trials = trials;
    return 0;
}

/* Wall time to draw the token kernel's uniforms for `trials` trials of
 * horizon T: their high words, Philox blocks 0..T/4 of every trial's
 * stream (sd_token.h: four positions per block; the low bits, needed with
 * probability <= 2^-28 at V = 7, are not drawn), across trials in groups
 * of 1024 as the kernel draws them, summing them so that nothing is
 * optimised away. */
static double S_rng_floor(uint64_t trials, size_t T, unsigned threads)
{
    double t0 = S_now();
    long long ngroups = (long long)((trials + 1023) / 1024);
    uint64_t sink = 0;
#pragma omp parallel num_threads(threads) reduction(+ : sink)
    {
        uint64_t *w = malloc(4 * 1024 * sizeof *w);
        uint64_t *const wr[4] = {w, w + 1024, w + 2048, w + 3072};
#pragma omp for schedule(static)
        for (long long g = 0; g < ngroups; g++) {
            uint64_t lo = (uint64_t)g * 1024, n = trials - lo < 1024 ? trials - lo : 1024;
            for (uint64_t blk = 0; 4 * blk <= T && w; blk++) {
                sd_rngbuf_trials_hi(1, blk, lo, (size_t)n, wr);
                for (uint64_t i = 0; i < n; i++)
                    sink += wr[0][i] ^ wr[1][i] ^ wr[2][i] ^ wr[3][i];
            }
        }
        free(w);
    }
    double dt = S_now() - t0;
    if (sink == 42) /* keeps the loop */
        puts("");
    return dt;
}

/* Best wall time of building the token kernel's tables for c. */
static double S_build_time(const sd_chain *c, const sd_params *par, unsigned threads, int reps)
{
    double best = 1e300;
    for (int r = 0; r < reps; r++) {
        sd_token_plan *plan = NULL;
        double t0 = S_now();
        if (sd_token_plan_new(c, par, SD_TOKEN_EXACT, 0, threads, &plan, NULL))
            return -1.0;
        double dt = S_now() - t0;
        sd_token_plan_free(plan);
        if (dt < best)
            best = dt;
    }
    return best;
}

static void S_row(const char *name, size_t V, size_t T, const S_meas *m, unsigned threads,
                  double baseline, double token_tps)
{
    printf("%-30s %6zu %4zu %10llu %12.4g %9.2f %4u", name, V, T, (unsigned long long)m->trials,
           m->tps, 1e9 / m->tps, threads);
    if (m->kernel && strcmp(m->kernel, SD_SIM_KERNEL_TOKEN) == 0)
        printf(" %6.3f", (1.0 + (double)T) / (double)T);
    else
        printf(" %6s", "-");
    if (baseline > 0)
        printf(" %9.1fx", m->tps / baseline);
    else
        printf(" %10s", "-");
    if (token_tps > 0)
        printf(" %9.3f", m->tps / token_tps);
    else
        printf(" %9s", "-");
    printf("  %s\n", m->kernel ? m->kernel : "");
}

/* The line of the back-to-back ratios r[0..n): median, range, and the goal
 * against the median. */
static int S_dbl_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of r[0..n-1] (n >= 1), sorting r. */
static double S_median(double *r, int n)
{
    qsort(r, (size_t)n, sizeof *r, S_dbl_cmp);
    return n % 2 ? r[n / 2] : 0.5 * (r[n / 2 - 1] + r[n / 2]);
}

static void S_pairs_line(double *r, int n, double goal)
{
    if (n <= 0)
        return;
    double med = S_median(r, n);
    printf("    back to back, %d rounds (token run and this one in turn): median %.3f, range %.3f-%.3f "
           "(goal >= %.1f on the median: %s)\n", n, med, r[0], r[n - 1], goal, med >= goal ? "met" : "NOT met");
}

int main(int argc, char **argv)
{
    unsigned threads = 0;
    int reps = 3, quick = 0;
    const char *baseline_file = NULL;
    static const struct option opts[] = {
        {"threads", required_argument, 0, 't'}, {"reps", required_argument, 0, 'r'},
        {"quick", no_argument, 0, 'q'},          {"baseline", required_argument, 0, 'b'},
        {"help", no_argument, 0, 'h'},           {0, 0, 0, 0},
    };
    int c;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 't': threads = (unsigned)strtoul(optarg, NULL, 10); break;
        case 'r': reps = atoi(optarg) > 0 ? atoi(optarg) : 1; break;
        case 'q': quick = 1; break;
        case 'b': baseline_file = optarg; break;
        case 'h':
            puts("Usage: simdec-bench [--threads N] [--reps R] [--quick] [--baseline FILE]");
            return 0;
        default: return 64;
        }
    }
#ifdef _OPENMP
    if (threads == 0)
        threads = (unsigned)omp_get_num_procs();
#else
    threads = 1;
#endif
    S_baseline bl;
    memset(&bl, 0, sizeof bl);
    if (baseline_file)
        S_read_baseline(baseline_file, &bl);
    uint64_t scale = quick ? 1 : 8;

    sd_gen_params gp;
    sd_gen_defaults(&gp);
    sd_chain *c7 = sd_chain_generate(&gp, NULL);
    gp.V = 256;
    sd_chain *c256 = sd_chain_generate(&gp, NULL);
    if (!c7 || !c256) {
        fputs("simdec-bench: cannot generate the chains\n", stderr);
        return 70;
    }
    sd_params par;
    sd_params_defaults(&par, NULL);

    printf("simdec-bench: verified tokens x_1..x_T per second (trials*T / wall time), best of %d; "
           "threads %u; Philox %s\n\n",
           reps, threads, sd_rngbuf_avx512() ? "AVX-512" : sd_rngbuf_vectorised() ? "AVX2" : "scalar");
    printf("%-30s %6s %4s %10s %12s %9s %4s %6s %10s %9s  %s\n", "configuration", "V", "T", "trials",
           "tokens/s", "ns/token", "thr", "u/tok", "vs numpy", "vs token", "kernel");

    /* The V=7 token run and its random-number floor are measured in
     * alternation (best of each), so that both see the same load. */
    S_meas tok7 = {0}, tok256, m;
    double floor_best = 1e300;
    sd_model m7 = sd_model_of_chain(c7), m256 = sd_model_of_chain(c256);
    sd_sim_job job = {sd_verifier_find("token"), &m7, &par};
    for (int r = 0; r < reps; r++) {
        if (S_measure(&job, 200000 * scale, threads, 1, &m))
            return 70;
        if (m.tps > tok7.tps)
            tok7 = m;
        double dt = S_rng_floor(tok7.trials, 50, threads);
        if (dt < floor_best)
            floor_best = dt;
    }
    S_row("token, gamma = horizon", 7, 50, &tok7, threads, bl.v7, 0);
    /* the same on one thread: numpy runs on one */
    S_meas tok7_1;
    if (S_measure(&job, 100000 * scale, 1, reps, &tok7_1))
        return 70;
    S_row("token, gamma = horizon", 7, 50, &tok7_1, 1, bl.v7, 0);
    job.model = &m256;
    if (S_measure(&job, 40000 * scale, threads, reps, &tok256))
        return 70;
    S_row("token, gamma = horizon", 256, 50, &tok256, threads, bl.v256, 0);

    /* The multi-draft and block verifiers on the V=7 chain. */
    static const struct {
        const char *algo, *label;
        size_t M, k;
    } multi[] = {{"block", "block, gamma = horizon", 2, 2},
                 {"batch", "batch M=4, gamma = horizon", 4, 2},
                 {"spectr", "spectr k=4 (k-Seq)", 2, 4}};
    for (size_t i = 0; i < sizeof multi / sizeof multi[0]; i++) {
        const sd_verifier_type *vt = sd_verifier_find(multi[i].algo);
        sd_params mp;
        sd_params_defaults(&mp, vt);
        /* one field for the number of drafts: M of batch, k of spectr */
        mp.k = vt && sd_params_decl(vt, "M", NULL) ? multi[i].M : multi[i].k;
        sd_sim_job mj = {vt, &m7, &mp};
        if (!mj.vt)
            continue;
        if (S_measure(&mj, 20000 * scale, threads, reps, &m))
            return 70;
        S_row(multi[i].label, 7, 50, &m, threads, 0, tok7.tps);
    }

    /* Every verifier at V=7, gamma 4, as a ratio to the token kernel at the
     * same gamma (the table) and, for block, to its vectorised numpy
     * baseline. */
    printf("\nevery verifier at V=7, T=50, gamma 4 (vs token = ratio to the token kernel's tokens/s "
           "at gamma 4):\n");
    S_meas tokg;
    sd_params pg;
    sd_params_defaults(&pg, sd_verifier_find("token"));
    pg.gamma = 4;
    sd_sim_job tj = {sd_verifier_find("token"), &m7, &pg};
    if (S_measure(&tj, 200000 * scale, threads, reps, &tokg))
        return 70;
    S_row("token, gamma 4", 7, 50, &tokg, threads, bl.alias7, 0);
    static const char *const every[] = {"block", "greedy-block", "batch", "rrs", "spectr", "biased",
                                        "sprinter"};
    enum { S_NEVERY = sizeof every / sizeof every[0], S_BLOCK = 0, S_GREEDY = 1 }; /* places in every[] */
    S_meas everym[S_NEVERY] = {{0}};
    sd_params everyp[S_NEVERY];
    sd_sim_job everyj[S_NEVERY];
    for (size_t i = 0; i < S_NEVERY; i++) {
        const sd_verifier_type *vt = sd_verifier_find(every[i]);
        everyj[i] = (sd_sim_job){vt, &m7, &everyp[i]};
        if (!vt)
            continue;
        sd_params_defaults(&everyp[i], vt);
        if (sd_params_decl(vt, "gamma", NULL))
            everyp[i].gamma = 4;
        if (S_measure(&everyj[i], 20000 * scale, threads, reps, &everym[i]))
            return 70;
        char label[64];
        snprintf(label, sizeof label, sd_params_decl(vt, "gamma", NULL) ? "%s, gamma 4" : "%s (no gamma)",
                 every[i]);
        const S_bl_row *br = S_bl_find(&bl, every[i]);
        S_row(label, 7, 50, &everym[i], threads, br ? br->tps : 0, tokg.tps);
    }
    const S_meas blockg = everym[S_BLOCK], greedyg = everym[S_GREEDY];

    /* The goals' ratios again from back-to-back runs.  This VM's speed
     * changes by up to 2x from one phase to the next (docs/performance.md),
     * and the table's rows are measured seconds apart, so a row's ratio can
     * compare two phases; a token run and the verifier's runs made back to
     * back see the same one.  S_PAIRS rounds (order reversed every other
     * round, so that neither side is always first), one run each of the
     * table's jobs (the token run and every verifier's), the ratio of each
     * round to the token run, and their median. */
    enum { S_PAIRS = 5 };
    double rpair[S_NEVERY][S_PAIRS];
    int npairs = 0;
    {
        const sd_sim_job *jobs[1 + S_NEVERY] = {&tj};
        uint64_t tr[1 + S_NEVERY] = {200000 * scale};
        size_t nj = 1;
        size_t at[S_NEVERY]; /* every[i]'s place in jobs[] (0: not measured) */
        for (size_t i = 0; i < S_NEVERY; i++) {
            at[i] = everyj[i].vt ? nj : 0;
            if (everyj[i].vt) {
                jobs[nj] = &everyj[i];
                tr[nj++] = 20000 * scale;
            }
        }
        for (; nj > 1 && npairs < S_PAIRS; npairs++) {
            S_meas pm[1 + S_NEVERY];
            for (size_t k = 0; k < nj; k++) {
                size_t j = npairs % 2 ? nj - 1 - k : k;
                if (S_measure(jobs[j], tr[j], threads, 1, &pm[j]))
                    return 70;
            }
            for (size_t i = 0; i < S_NEVERY; i++)
                rpair[i][npairs] = at[i] ? pm[at[i]].tps / pm[0].tps : 0.0;
        }
    }

    /* Block's and greedy-block's ratios on ONE thread, back to back
     * (token, block, greedy-block; S_ONE rounds), beside the goals on
     * `threads` (the test machine's two cores share execution units,
     * docs/findings.md 52).  Printed for comparison, not judged. */
    enum { S_ONE = 3 };
    double rone[2][S_ONE];
    int none = 0;
    for (; threads > 1 && everyj[S_BLOCK].vt && everyj[S_GREEDY].vt && none < S_ONE; none++) {
        S_meas t1, b1, g1;
        if (S_measure(&tj, 200000 * scale, 1, 1, &t1) || S_measure(&everyj[S_BLOCK], 20000 * scale, 1, 1, &b1) ||
            S_measure(&everyj[S_GREEDY], 20000 * scale, 1, 1, &g1))
            return 70;
        rone[0][none] = b1.tps / t1.tps;
        rone[1][none] = g1.tps / t1.tps;
    }

    /* The on-demand model at a GPT-2 vocabulary. */
    sd_zipf_params lp = {50257, 128, 10, SD_ZIPF_DEFAULT_S_DRAFT, SD_ZIPF_DEFAULT_S_TARGET};
    sd_zipf *lz = NULL;
    if (sd_zipf_new(&lp, &lz, NULL) == SD_OK) {
        sd_model mz = sd_model_of_zipf(lz);
        sd_sim_job lj = {sd_verifier_find("token"), &mz, &par};
        if (S_measure(&lj, 5000 * scale, threads, reps, &m))
            return 70;
        S_row("token, on-demand Zipf", 50257, 128, &m, threads, 0, 0);
        printf("  (model tables %zu bytes = 64 bytes x V; no T*V^2 storage)\n", sd_zipf_bytes(50257));
        sd_zipf_free(lz);
    }

    /* The table build alone, and the random-number floor of the token runs. */
    double b7 = S_build_time(c7, &par, threads, reps), b256 = S_build_time(c256, &par, threads, reps);
    printf("\ntoken kernel tables (built on %u threads, included above): V=7 %.3g ms (%zu bytes), "
           "V=256 %.3g ms (%zu bytes)\n", threads, 1e3 * b7, sd_token_plan_bytes(c7), 1e3 * b256,
           sd_token_plan_bytes(c256));
    double best = floor_best;
    double per_trial = 4.0 * (double)(50 / 4 + 1); /* words computed: Philox blocks 0..12 */
    double floor_tps = (double)tok7.trials * 50.0 / best;
    printf("random-number floor: the kernel uses %.3g uniforms per token (x_0, then one per position, "
           "32 bits each, 4 per Philox block; Philox %s across trials);\n  drawing them alone: %.4g "
           "tokens/s (%.3g ns per 32-bit word per thread); the token kernel runs at %.0f%% (V=7) and "
           "%.0f%% (V=256) of that floor.\n",
           51.0 / 50.0, sd_rngbuf_avx512() ? "AVX-512" : sd_rngbuf_vectorised() ? "AVX2" : "scalar",
           floor_tps, best * 1e9 * threads / ((double)tok7.trials * per_trial), 100.0 * tok7.tps / floor_tps,
           100.0 * tok256.tps / floor_tps);
    if (bl.v7 > 0) {
        printf("numpy baseline (bench/baseline_numpy.py, same invocation): %.4g tokens/s at V=7, "
               "%.4g at V=256.\n", bl.v7, bl.v256);
        printf("goals: token >= 20x numpy at V=7: %.1fx, %s; >= 50x at V=256: %.1fx, %s.\n",
               tok7.tps / bl.v7, tok7.tps >= 20.0 * bl.v7 ? "met" : "NOT met", tok256.tps / bl.v256,
               tok256.tps >= 50.0 * bl.v256 ? "met" : "NOT met");
        if (bl.alias7 > 0)
            printf("alias-method numpy token baseline (one draw per token, as the kernel): %.4g tokens/s; "
                   "token kernel (%u threads) %.1fx at gamma = horizon, %.1fx at gamma 4.\n",
                   bl.alias7, threads, tok7.tps / bl.alias7, tokg.tps / bl.alias7);
        for (size_t i = 0; i < bl.nrow; i++)
            printf("vectorised numpy %s (%s): %.4g tokens/s.\n", bl.row[i].name,
                   bl.row[i].gamma ? "gamma 4" : "no draft length", bl.row[i].tps);
    } else
        printf("numpy baseline: not run (python3-numpy missing: scripts/install-deps.sh --extra).\n");
    /* The targets of issue 14, from this run's numbers (numpy on one thread). */
    printf("issue 14 goals (this run):\n");
    if (tokg.tps > 0 && blockg.tps > 0) {
        printf("  block / token kernel at V=7, gamma 4 (%u threads): %.3f (goal >= 0.2: %s)\n", threads,
               blockg.tps / tokg.tps, blockg.tps >= 0.2 * tokg.tps ? "met" : "NOT met");
        printf("    per second of CPU time (both on %u threads): %.3f\n", threads, blockg.tps_cpu / tokg.tps_cpu);
        S_pairs_line(rpair[S_BLOCK], npairs, 0.2);
    }
    if (tokg.tps > 0 && greedyg.tps > 0) {
        printf("  greedy-block (%s) / token kernel at V=7, gamma 4 (%u threads): %.3f (goal >= 0.1: %s)\n",
               greedyg.kernel ? greedyg.kernel : "", threads, greedyg.tps / tokg.tps,
               greedyg.tps >= 0.1 * tokg.tps ? "met" : "NOT met");
        printf("    per second of CPU time (both on %u threads): %.3f\n", threads, greedyg.tps_cpu / tokg.tps_cpu);
        S_pairs_line(rpair[S_GREEDY], npairs, 0.1);
    }
    if (none > 0)
        printf("  for comparison, on ONE thread (back to back, median of %d rounds; the goals are on %u): "
               "block / token %.3f, greedy-block / token %.3f\n",
               none, threads, S_median(rone[0], none), S_median(rone[1], none));
    /* Issue 14's line for every verifier but block (>= 0.1 each): the
     * table's ratio and the median of the back-to-back rounds; the verdict
     * is the medians'. */
    if (tokg.tps > 0 && npairs > 0) {
        printf("  every verifier but block / token kernel at V=7, gamma 4 (%u threads), goal >= 0.1 each "
               "(table/back-to-back median):\n   ", threads);
        const char *sep = " ";
        char shortl[128] = "";
        for (size_t i = 0; i < S_NEVERY; i++) {
            if (i == S_BLOCK || !everyj[i].vt)
                continue;
            double med = S_median(rpair[i], npairs);
            printf("%s%s %.3f/%.3f", sep, every[i], everym[i].tps / tokg.tps, med);
            sep = ", ";
            if (!(med >= 0.1)) /* the names fit: every[] is seven short names */
                snprintf(shortl + strlen(shortl), sizeof shortl - strlen(shortl), "%s%s", *shortl ? ", " : "",
                         every[i]);
        }
        printf("\n    goal: %s%s%s\n", *shortl ? "NOT met (short: " : "met", shortl, *shortl ? ")" : "");
    }
    const S_bl_row *bb = S_bl_find(&bl, "block");
    if (bb && bb->tps > 0 && blockg.tps > 0) {
        printf("  block / vectorised numpy block (%u threads vs 1): %.1fx (goal >= 20x: %s)\n", threads,
               blockg.tps / bb->tps, blockg.tps >= 20.0 * bb->tps ? "met" : "NOT met");
        if (bb->cpu > 0)
            printf("    per second of CPU time, i.e. per core (on %u idle cores the wall-time ratio is %u times "
                   "this): %.1fx\n", threads, threads, blockg.tps_cpu / bb->cpu);
    }
    if (bl.alias7 > 0) {
        printf("  token kernel / alias-method numpy at V=7, gamma = horizon, ONE thread: %.1fx (goal >= 10x: %s)\n",
               tok7_1.tps / bl.alias7, tok7_1.tps >= 10.0 * bl.alias7 ? "met" : "NOT met");
        if (bl.alias7cpu > 0 && tok7_1.tps_cpu > 0)
            printf("    the same per second of CPU time (robust to other processes on the cores): %.1fx "
                   "(%.4g vs %.4g tokens per CPU second)\n",
                   tok7_1.tps_cpu / bl.alias7cpu, tok7_1.tps_cpu, bl.alias7cpu);
        printf("  token kernel / alias-method numpy at V=7, gamma = horizon, %u threads: %.1fx\n", threads,
               tok7.tps / bl.alias7);
    }
    /* The other verifiers against their vectorised numpy baselines (block's
     * are above, with its goal). */
    for (size_t i = 0; i < S_NEVERY; i++) {
        const S_bl_row *br = S_bl_find(&bl, every[i]);
        if (strcmp(every[i], "block") == 0 || !br || !(br->tps > 0) || !(everym[i].tps > 0))
            continue;
        printf("  %s / vectorised numpy %s at V=7, %s (%u threads vs 1): %.1fx; per CPU second: ", every[i],
               every[i], br->gamma ? "gamma 4" : "no draft length", threads,
               everym[i].tps / br->tps);
        if (br->cpu > 0 && everym[i].tps_cpu > 0)
            printf("%.1fx\n", everym[i].tps_cpu / br->cpu);
        else
            printf("-\n");
    }
    sd_chain_free(c7);
    sd_chain_free(c256);
    return 0;
}
