/* test_figures.c — `simdec plot` (cli/cmd_plot.c) and the figure data
 * (plots/fig_*.c, one file per paper, and the registry plots/sd_figures.c).
 * Figures run with --quick (a tenth of the trials) in
 * temporary directories; the scripts come from ./plots (tests run from the
 * repository root, as `make test` does) or $SIMDEC_PLOTS_DIR. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../plots/sd_fig_util.h"
#include "../plots/sd_figures.h"
#include "../sims/engine/sd_params.h"
#include "test_util.h"

/* A fresh temporary directory (malloc'd path). */
static char *S_tmpdir(void)
{
    char *d = strdup("/tmp/simdec-fig-XXXXXX");
    cr_assert(d && mkdtemp(d), "mkdtemp failed");
    return d;
}

static void S_rmdir(char *d)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", d);
    cr_assert_eq(system(cmd), 0);
    free(d);
}

static long S_file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

/* Width and height from a PNG's signature and IHDR chunk; 0 if it is not a
 * PNG. */
static int S_png_size(const char *path, unsigned *w, unsigned *h)
{
    static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    unsigned char b[24];
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    size_t n = fread(b, 1, sizeof b, f);
    fclose(f);
    if (n != sizeof b || memcmp(b, sig, 8) != 0 || memcmp(b + 12, "IHDR", 4) != 0)
        return 0;
    *w = (unsigned)b[16] << 24 | (unsigned)b[17] << 16 | (unsigned)b[18] << 8 | b[19];
    *h = (unsigned)b[20] << 24 | (unsigned)b[21] << 16 | (unsigned)b[22] << 8 | b[23];
    return 1;
}

/* The size a script asks for: "set terminal pngcairo size W,H". */
static int S_script_size(const char *path, unsigned *w, unsigned *h)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    char line[512];
    int found = 0;
    while (!found && fgets(line, sizeof line, f)) {
        const char *s = strstr(line, "pngcairo size ");
        if (strncmp(line, "set terminal", 12) == 0 && s && sscanf(s, "pngcairo size %u,%u", w, h) == 2)
            found = 1;
    }
    fclose(f);
    return found;
}

static char *S_slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    cr_assert(buf);
    cr_assert_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* Every figure has its script in the repository: pngcairo, the DejaVu Sans
 * font (fonts-dejavu-core, for byte-stable output), at least 1000x600, and
 * output to NAME.png from NAME.dat. */
Test(figures, every_figure_has_a_script)
{
    size_t n = 0;
    for (size_t i = 0; sd_figures[i]; i++, n++) {
        const char *name = sd_figures[i]->name;
        cr_assert_eq(sd_figure_find(name), sd_figures[i]);
        char path[256], want[256];
        snprintf(path, sizeof path, "plots/%s.gp", name);
        char *text = S_slurp(path);
        cr_assert(text, "missing script %s", path);
        cr_assert(strstr(text, "pngcairo"), "%s: not pngcairo", path);
        cr_assert(strstr(text, "font \"DejaVu Sans"), "%s: not the DejaVu Sans font", path);
        snprintf(want, sizeof want, "set output '%s.png'", name);
        cr_assert(strstr(text, want), "%s: lacks %s", path, want);
        snprintf(want, sizeof want, "'%s.dat'", name);
        cr_assert(strstr(text, want), "%s: does not read %s", path, want);
        unsigned w, h;
        cr_assert(S_script_size(path, &w, &h), "%s: no pngcairo size", path);
        cr_assert(w >= 1000 && h >= 600, "%s: %ux%u is below 1000x600", path, w, h);
        cr_assert(sd_figures[i]->summary && strlen(sd_figures[i]->summary) > 20);
        free(text);
    }
    cr_assert_eq(n, 19, "12 figures of the papers + 7 of simdec's own (speed-up, token trees, draft policy, referee), got %zu", n);
    cr_assert_null(sd_figure_find("no-such-figure"));
}

/* The registry joins the papers' tables in the order of `simdec plot all`. */
Test(figures, registry_order)
{
    static const char *const want[] = {
        "yin-fig2a-sd", "yin-fig2b-batch", "yin-fig2c-batch-vs-M", "yin-fig3-batch-improvement",
        "yin-fig4-pareto", "yin-fig5-T100", "block-fig3-ccdf", "spectr-fig4-bernoulli",
        "spectr-fig5-uniform", "spectr-fig6-multiround", "sprinter-fig5-tokens",
        "sprinter-fig6-stoptime", "simdec-multidraft-vs-k", "simdec-verify-vs-gamma",
        "simdec-biased-pareto", "simdec-speedup-vs-gamma", "simdec-trees", "simdec-draft-policy",
        "simdec-referee"};
    size_t n = sizeof want / sizeof *want;
    for (size_t i = 0; i < n; i++) {
        cr_assert_not_null(sd_figures[i], "registry ends at %zu", i);
        cr_assert_str_eq(sd_figures[i]->name, want[i]);
    }
    cr_assert_null(sd_figures[n]);
}

/* The figures' one-iteration runs go through the trial engine from a fixed
 * x_0: trial i is exactly one step() at position 1 after x_0 = prev on the
 * stream (seed, i), with no uniform spent on x_0 (the loop the figures
 * used to have), and no kernel runs. */
Test(figures, first_iteration_is_one_step_from_prev)
{
    const double p[2] = {2.0 / 3.0, 1.0 / 3.0}, q[2] = {1.0 / 3.0, 2.0 / 3.0};
    sd_error err;
    sd_chain *c = sd_chain_from_pq(p, q, 2, 6, &err);
    cr_assert_not_null(c);
    static const char *const algos[] = {"token", "block", "sprinter"};
    for (size_t a = 0; a < 3; a++) {
        const sd_verifier_type *vt = sd_verifier_find(algos[a]);
        cr_assert_not_null(vt);
        sd_params par;
        sd_params_defaults(&par, vt);
        par.gamma = 4;
        const uint64_t seed = 77, trials = 300;
        const size_t prev = 1;
        sd_sim_result res;
        cr_assert_eq(sd_fig_first_iteration(vt, c, &par, prev, seed, trials, 1, &res, &err), SD_OK,
                     "%s", err.msg);
        cr_assert_str_eq(res.kernel, "generic");
        void *state = NULL;
        cr_assert_eq(vt->alloc(&state, c, &par, &err), SD_OK, "%s", err.msg);
        size_t out[6];
        double hist[7] = {0};
        for (uint64_t i = 0; i < trials; i++) {
            sd_stream rng;
            sd_stream_init(&rng, seed, i);
            if (vt->begin)
                vt->begin(state);
            sd_iter it = {0, 0, 0, 1, NAN};
            cr_assert_eq(vt->step(state, c, &par, &rng, 1, prev, out, &it, &err), SD_OK);
            const sd_trial *tr = &res.per_trial[i];
            cr_assert(tr->iterations == 1 && tr->accepted == it.accepted &&
                          tr->emitted == it.emitted && tr->target_calls == it.target_calls &&
                          tr->rejections == (size_t)it.rejected,
                      "%s, trial %llu differs from one step", algos[a], (unsigned long long)i);
            hist[it.accepted] += 1.0;
        }
        for (size_t j = 0; j <= 6; j++)
            cr_assert_eq(res.accept_hist[j], hist[j], "%s: histogram at %zu", algos[a], j);
        if (vt->free)
            vt->free(state);
        sd_sim_result_free(&res);
    }
    sd_chain_free(c);
}

/* A few figures end to end: data, script and a real PNG of the size the
 * script states, beside each other in the output directory. */
Test(figures, produces_png_data_and_script, .timeout = 120)
{
    static const char *const names[] = {"block-fig3-ccdf", "sprinter-fig5-tokens",
                                        "yin-fig2a-sd"};
    char *dir = S_tmpdir(), args[512], *out = NULL, *err = NULL;
    snprintf(args, sizeof args, "plot %s %s %s --quick --out %s/sub", names[0], names[1],
             names[2], dir);
    int st = tu_run(args, &out, &err);
    cr_assert_eq(st, 0, "plot failed (%d): %s", st, err);
    for (size_t i = 0; i < 3; i++) {
        char png[512], dat[512], gp[512];
        snprintf(png, sizeof png, "%s/sub/%s.png", dir, names[i]);
        snprintf(dat, sizeof dat, "%s/sub/%s.dat", dir, names[i]);
        snprintf(gp, sizeof gp, "%s/sub/%s.gp", dir, names[i]);
        cr_assert_gt(S_file_size(png), 1000, "%s missing or tiny", png);
        cr_assert_gt(S_file_size(dat), 100, "%s missing or tiny", dat);
        cr_assert_gt(S_file_size(gp), 100, "%s missing or tiny", gp);
        unsigned w, h, sw, sh;
        cr_assert(S_png_size(png, &w, &h), "%s is not a PNG", png);
        cr_assert(S_script_size(gp, &sw, &sh));
        cr_assert(w == sw && h == sh, "%s is %ux%u, its script says %ux%u", png, w, h, sw, sh);
        cr_assert(w >= 1000 && h >= 600);
        cr_assert(tu_contains(out, names[i]));
    }
    free(out);
    free(err);
    S_rmdir(dir);
}

/* Same seed, same bytes: the data and the PNG are reproducible (pngcairo
 * embeds no time stamp). */
Test(figures, output_is_byte_stable, .timeout = 120)
{
    char *a = S_tmpdir(), *b = S_tmpdir(), args[512];
    snprintf(args, sizeof args, "plot sprinter-fig6-stoptime --quick --out %s", a);
    cr_assert_eq(tu_run(args, NULL, NULL), 0);
    snprintf(args, sizeof args, "plot sprinter-fig6-stoptime --quick --out %s", b);
    cr_assert_eq(tu_run(args, NULL, NULL), 0);
    static const char *const ext[] = {".dat", ".png"};
    for (int i = 0; i < 2; i++) {
        char pa[512], pb[512];
        snprintf(pa, sizeof pa, "%s/sprinter-fig6-stoptime%s", a, ext[i]);
        snprintf(pb, sizeof pb, "%s/sprinter-fig6-stoptime%s", b, ext[i]);
        long na = S_file_size(pa), nb = S_file_size(pb);
        cr_assert(na > 0 && na == nb, "%s: sizes %ld and %ld", ext[i], na, nb);
        char *x = S_slurp(pa), *y = S_slurp(pb);
        cr_assert(memcmp(x, y, (size_t)na) == 0, "%s differs between two runs", ext[i]);
        free(x);
        free(y);
    }
    S_rmdir(a);
    S_rmdir(b);
}

/* The committed figures are those of this code: the data of every figure
 * that takes well under a second is made again and compared byte for byte
 * with plots/out/NAME.dat.  A change that moves a Monte-Carlo digit of a
 * figure (a kernel's draws) must come with `make figures` (it once did not:
 * seven figures' points were left from before the NAME-alias kernels). */
Test(figures, committed_data_are_current, .timeout = 120)
{
    static const char *const names[] = {"yin-fig2a-sd",          "yin-fig2b-batch",        "yin-fig2c-batch-vs-M",
                                        "yin-fig3-batch-improvement", "yin-fig4-pareto",  "yin-fig5-T100",
                                        "block-fig3-ccdf",       "spectr-fig4-bernoulli",  "spectr-fig6-multiround",
                                        "sprinter-fig5-tokens",  "sprinter-fig6-stoptime", "simdec-multidraft-vs-k",
                                        "simdec-verify-vs-gamma", "simdec-biased-pareto"};
    const size_t n = sizeof names / sizeof names[0];
    char *dir = S_tmpdir(), args[2048];
    size_t used = (size_t)snprintf(args, sizeof args, "plot");
    for (size_t i = 0; i < n; i++)
        used += (size_t)snprintf(args + used, sizeof args - used, " %s", names[i]);
    snprintf(args + used, sizeof args - used, " --data-only --out %s", dir);
    cr_assert_eq(tu_run(args, NULL, NULL), 0, "%s", args);
    for (size_t i = 0; i < n; i++) {
        char made[512], kept[512];
        snprintf(made, sizeof made, "%s/%s.dat", dir, names[i]);
        snprintf(kept, sizeof kept, "plots/out/%s.dat", names[i]);
        long nm = S_file_size(made), nk = S_file_size(kept);
        cr_assert(nm > 0, "%s not made", made);
        char *x = S_slurp(made), *y = nk == nm ? S_slurp(kept) : NULL;
        cr_expect(y && memcmp(x, y, (size_t)nm) == 0, "plots/out/%s.dat is not what this code makes (make figures)",
                  names[i]);
        free(x);
        free(y);
    }
    S_rmdir(dir);
}

/* Runs `plot sprinter-fig5-tokens` with a scripts directory holding the
 * given script; returns the exit status, *err the messages, and whether a
 * PNG was left behind. */
static int S_run_with_script(const char *script, char **err, int *png_left)
{
    char *sdir = S_tmpdir(), *odir = S_tmpdir(), path[512], args[1024];
    snprintf(path, sizeof path, "%s/sprinter-fig5-tokens.gp", sdir);
    FILE *f = fopen(path, "w");
    cr_assert(f);
    fputs(script, f);
    fclose(f);
    snprintf(args, sizeof args, "plot sprinter-fig5-tokens --quick --scripts %s --out %s", sdir,
             odir);
    int st = tu_run(args, NULL, err);
    snprintf(path, sizeof path, "%s/sprinter-fig5-tokens.png", odir);
    *png_left = S_file_size(path) >= 0;
    S_rmdir(sdir);
    S_rmdir(odir);
    return st;
}

/* A script that fails: gnuplot exits non-zero and leaves an empty PNG
 * behind; plot must say which figure failed, exit 70 and remove the PNG. */
Test(figures, failing_gnuplot_is_reported, .timeout = 60)
{
    char *err = NULL;
    int left = 1;
    int st = S_run_with_script("set terminal pngcairo size 1000,600 font \"DejaVu Sans,12\"\n"
                               "set output 'sprinter-fig5-tokens.png'\n"
                               "plot 'sprinter-fig5-tokens.dat' index '[no-such-block]' using 1:2 with lines\n",
                               &err, &left);
    cr_assert_eq(st, 70, "exit %d: %s", st, err);
    cr_assert(tu_contains(err, "figure sprinter-fig5-tokens"), "%s", err);
    cr_assert(tu_contains(err, "gnuplot"), "%s", err);
    cr_assert_not(left, "the broken PNG was left behind");
    free(err);
}

/* gnuplot succeeds but writes no PNG of that name, or one too small. */
Test(figures, missing_or_small_png_is_reported, .timeout = 60)
{
    char *err = NULL;
    int left = 1;
    int st = S_run_with_script("set terminal pngcairo size 1000,600\nset output 'other.png'\nplot x\n",
                               &err, &left);
    cr_assert_eq(st, 70, "exit %d: %s", st, err);
    cr_assert(tu_contains(err, "no PNG was written"), "%s", err);
    free(err);
    st = S_run_with_script("set terminal pngcairo size 400,300\n"
                           "set output 'sprinter-fig5-tokens.png'\nplot x\n",
                           &err, &left);
    cr_assert_eq(st, 70, "exit %d: %s", st, err);
    cr_assert(tu_contains(err, "400x300"), "%s", err);
    cr_assert_not(left, "the undersized PNG was left behind");
    free(err);
}

Test(figures, usage_errors)
{
    char *err = NULL;
    cr_assert_eq(tu_run("plot no-such-figure --data-only --out /tmp", NULL, &err), 64);
    cr_assert(tu_contains(err, "no-such-figure"));
    free(err);
    cr_assert_eq(tu_run("plot", NULL, NULL), 64);
    char *out = NULL;
    cr_assert_eq(tu_run("plot --list", &out, NULL), 0);
    cr_assert(tu_contains(out, "spectr-fig5-uniform") && tu_contains(out, "simdec-biased-pareto"));
    free(out);
    cr_assert_eq(tu_run("plot --help", &out, NULL), 0);
    cr_assert(tu_contains(out, "--out DIR"));
    free(out);
}

/* Reads the rows of block "[name]" of a figure data file. */
static size_t S_block_rows(const char *text, const char *name, double rows[][8], size_t max)
{
    char tag[64];
    snprintf(tag, sizeof tag, "# [%s]\n", name);
    const char *s = strstr(text, tag);
    cr_assert(s, "no block %s", name);
    s += strlen(tag);
    size_t n = 0;
    while (*s && n < max) {
        const char *e = strchr(s, '\n');
        if (!e || e == s)
            break; /* a blank line ends the block */
        if (*s != '#') {
            char *end;
            const char *p = s;
            for (int j = 0; j < 8; j++, p = end) {
                rows[n][j] = strtod(p, &end);
                if (end == p)
                    break;
            }
            n++;
        }
        s = e + 1;
    }
    return n;
}

/* The figure data say what the figure claims: in the quick CCDF of Fig. 3
 * of Sun et al. 2025 (block verification), every Monte-Carlo point is within 4 standard errors of the exact
 * CCDF (22 points: a 4-se excursion has probability ~1e-3 overall), and
 * block >= token at every length. */
Test(figures, ccdf_data_agree_with_exact)
{
    sd_figure_opts o;
    sd_figure_opts_default(&o);
    o.quick = 1;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    cr_assert(f);
    sd_error err;
    const sd_figure *fig = sd_figure_find("block-fig3-ccdf");
    cr_assert(fig);
    int rc = fig->write(f, &o, &err);
    fclose(f);
    cr_assert_eq(rc, 0, "%s", err.msg);
    double ex[16][8], mc[16][8];
    size_t ne = S_block_rows(buf, "exact", ex, 16), nm = S_block_rows(buf, "mc", mc, 16);
    cr_assert_eq(ne, 11);
    cr_assert_eq(nm, 11);
    for (size_t l = 1; l <= 10; l++) {
        cr_assert_geq(ex[l][2], ex[l][1] - 1e-15, "block below token at l = %zu", l);
        for (int a = 0; a < 2; a++) {
            double m = mc[l][1 + 3 * a], se = (mc[l][3 + 3 * a] - mc[l][2 + 3 * a]) / (2 * 1.96);
            double e = ex[l][1 + a];
            cr_assert(fabs(m - e) < 4 * se + 1e-12, "l = %zu, %s: MC %g vs exact %g (se %g)", l,
                      a ? "block" : "token", m, e, se);
        }
    }
    /* Sun et al. 2025, §2: E[tau] at gamma = 2 is 10/9 and 11/9; here the CCDF at l = 1, 2. */
    cr_assert_float_eq(ex[1][1] + ex[2][1], 10.0 / 9.0, 1e-9); /* 10 digits in the file */
    cr_assert_float_eq(ex[1][2] + ex[2][2], 11.0 / 9.0, 1e-9);
    free(buf);
}
