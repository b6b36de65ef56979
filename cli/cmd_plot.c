/* cmd_plot.c — `simdec plot NAME|all`: regenerates the papers' figures;
 * `simdec plot --from FILE --x COL --y COL,...`: plots one's own results
 * (the CSV or JSON of run, check, eval, lp or trace; plots/sd_plot_table.h)
 * into FILE.png with its FILE.dat and FILE.gp beside it.
 *
 * For each figure (plots/sd_figures.h) it writes DIR/NAME.dat (the data, via
 * a temporary file and rename), copies the gnuplot script plots/NAME.gp
 * beside it as DIR/NAME.gp, and runs `gnuplot NAME.gp` in DIR to make
 * DIR/NAME.png, so that a researcher can restyle a figure by editing the
 * script and rerunning gnuplot there.  A failing gnuplot run — a non-zero
 * exit, or a PNG that is missing, empty, not a PNG or smaller than
 * 1000x600 (gnuplot leaves an empty file behind when its script fails) — is
 * an error naming the figure, and the bad PNG is removed. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../plots/sd_figures.h"
#include "../plots/sd_plot_table.h"
#include "cli.h"
#include "suggest.h"
#include "commands.h"

/* Every figure is at least this large (issue: pngcairo >= 1000x600). */
#define S_MIN_WIDTH 1000u
#define S_MIN_HEIGHT 600u

static const char S_help_text[] =
    "Usage: simdec plot NAME... | all  [--out DIR] [--scripts DIR] [--quick]\n"
    "                                  [--seed S] [--data-only] [--json]\n"
    "       simdec plot --list [--json]\n"
    "       simdec plot --from FILE --x COL --y COL[,COL...] [--by COL] [-o FILE.png]\n"
    "                   [--data-only] [--json]\n"
    "\n"
    "Regenerates figures of the papers (and seven of simdec's own) with simdec's\n"
    "numbers: Monte-Carlo estimates with 95% bands beside the exact values.  For\n"
    "each figure NAME it writes DIR/NAME.dat (the data), DIR/NAME.gp (the gnuplot\n"
    "script, copied from the scripts directory) and DIR/NAME.png (gnuplot's\n"
    "pngcairo output).  Restyle a figure by editing DIR/NAME.gp and running\n"
    "`gnuplot NAME.gp` in DIR.  Output is deterministic: fixed seeds, echoed in\n"
    "the data files.\n"
    "\n"
    "  --out DIR       output directory (default plots/out; created if missing)\n"
    "  --scripts DIR   where the NAME.gp scripts are (default: $SIMDEC_PLOTS_DIR,\n"
    "                  else ./plots, else plots/ beside the executable)\n"
    "  --quick         about a tenth of the Monte-Carlo trials (for tests)\n"
    "  --seed S        base seed of the Monte-Carlo runs (default 20240610)\n"
    "  --data-only     write the .dat files only, do not run gnuplot\n"
    "  --json          one JSON object describing what was written\n"
    "  --list          list the figures with what each demonstrates (--json: an\n"
    "                  array of {name, source, summary})\n"
    "\n"
    "Plots of one's own results:\n"
    "  --from FILE     a .csv or .json written by run, check, eval, lp or trace\n"
    "                  (--csv/--json; a sweep's rows, lp's comparisons, eval's\n"
    "                  ccdf by index; nested JSON keys joined with '.', e.g.\n"
    "                  rejections.mean)\n"
    "  --x COL         the x column (numbers, or labels plotted in order)\n"
    "  --y COL,...     the y columns; each gets error bars (+-1 standard error)\n"
    "                  where a column COL_stderr, COL.stderr, COL_se or (for a\n"
    "                  ..mean.. column) the same name with stderr or se exists\n"
    "  --by COL        one line per value of COL (e.g. algo)\n"
    "  -o FILE.png     the PNG (default: FILE with .png); FILE.dat (the data) and\n"
    "                  FILE.gp (the gnuplot script) are written beside it\n"
    "An unknown column is refused with the list of the file's columns (exit 64).\n"
    "\n"
    "Exit status: 0 ok, 64 usage, 66 script not found, 70 gnuplot failed or\n"
    "produced no valid PNG (the bad PNG is removed), 73 cannot write.\n";

/* The figures, as a table or (json) a JSON array of {name, source, summary}. */
static int S_list(int json)
{
    json_t *arr = json ? json_array() : NULL;
    for (size_t i = 0; sd_figures[i]; i++)
        if (json)
            json_array_append_new(arr, json_pack("{s:s, s:s, s:s}", "name", sd_figures[i]->name, "source",
                                                 sd_figures[i]->source, "summary", sd_figures[i]->summary));
        else
            printf("%-28s %-22s %s\n", sd_figures[i]->name, sd_figures[i]->source,
                   sd_figures[i]->summary);
    return json ? cli_print_json(arr) : EX_OK_;
}

/* mkdir -p. */
static int S_mkdirs(const char *dir, sd_error *err)
{
    char buf[PATH_MAX];
    size_t n = strlen(dir);
    if (n == 0 || n >= sizeof buf)
        return sd_error_set(err, SD_EUSAGE, "--out: bad directory name '%s'", dir);
    memcpy(buf, dir, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (buf[i] != '/' && buf[i] != '\0')
            continue;
        char save = buf[i];
        buf[i] = '\0';
        if (mkdir(buf, 0777) != 0 && errno != EEXIST)
            return sd_error_set(err, SD_EOUTPUT, "%s: cannot create directory: %s", buf,
                                strerror(errno));
        buf[i] = save;
    }
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return sd_error_set(err, SD_EOUTPUT, "%s: not a directory", dir);
    return SD_OK;
}

static int S_path(char *out, size_t cap, const char *dir, const char *name, const char *ext,
                  sd_error *err)
{
    int n = snprintf(out, cap, "%s/%s%s", dir, name, ext);
    if (n < 0 || (size_t)n >= cap)
        return sd_error_set(err, SD_EUSAGE, "path too long: %s/%s%s", dir, name, ext);
    return SD_OK;
}

/* The scripts directory: --scripts, else $SIMDEC_PLOTS_DIR, else ./plots,
 * else plots/ beside the executable (or its parent, for build/simdec). */
static int S_scripts_dir(const char *given, const char *name, char *out, size_t cap,
                         sd_error *err)
{
    char exe[PATH_MAX], cand[4][PATH_MAX];
    size_t nc = 0;
    const char *env = getenv("SIMDEC_PLOTS_DIR");
    ssize_t len = given ? -1 : readlink("/proc/self/exe", exe, sizeof exe - 1);
    char *slash = NULL;
    if (len > 0) {
        exe[len] = '\0';
        slash = strrchr(exe, '/');
        if (slash)
            *slash = '\0';
    }
    int ok = 1;
    if (given) {
        ok &= snprintf(cand[nc++], PATH_MAX, "%s", given) < PATH_MAX;
    } else {
        if (env && *env)
            ok &= snprintf(cand[nc++], PATH_MAX, "%s", env) < PATH_MAX;
        ok &= snprintf(cand[nc++], PATH_MAX, "plots") < PATH_MAX;
        if (slash) {
            ok &= snprintf(cand[nc++], PATH_MAX, "%s/plots", exe) < PATH_MAX;
            ok &= snprintf(cand[nc++], PATH_MAX, "%s/../plots", exe) < PATH_MAX;
        }
    }
    char path[PATH_MAX];
    for (size_t i = 0; ok && i < nc; i++) {
        if (S_path(path, sizeof path, cand[i], name, ".gp", NULL) == SD_OK &&
            access(path, R_OK) == 0 && snprintf(out, cap, "%s", cand[i]) < (int)cap)
            return SD_OK;
    }
    return sd_error_set(err, SD_EIO,
                        "figure %s: cannot find its gnuplot script %s.gp in %s (use --scripts DIR)",
                        name, name, given ? given : "$SIMDEC_PLOTS_DIR, ./plots or beside the executable");
}

typedef struct {
    const sd_figure *fig;
    const sd_figure_opts *opts;
} S_data_ctx;

static int S_write_data(FILE *f, void *ctx, sd_error *err)
{
    const S_data_ctx *d = ctx;
    return d->fig->write(f, d->opts, err);
}

typedef struct {
    const char *src;
    FILE *in;
} S_copy_ctx;

static int S_write_copy(FILE *f, void *ctx, sd_error *err)
{
    S_copy_ctx *c = ctx;
    char buf[8192];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, c->in)) > 0)
        if (fwrite(buf, 1, n, f) != n)
            return sd_error_set(err, SD_EOUTPUT, "cannot copy %s: %s", c->src, strerror(errno));
    if (ferror(c->in))
        return sd_error_set(err, SD_EIO, "%s: cannot read: %s", c->src, strerror(errno));
    return SD_OK;
}

/* Copies src to dst (atomically) unless they are the same file. */
static int S_copy(const char *src, const char *dst, sd_error *err)
{
    struct stat a, b;
    if (stat(src, &a) == 0 && stat(dst, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino)
        return SD_OK;
    S_copy_ctx c = {src, fopen(src, "rb")};
    if (!c.in)
        return sd_error_set(err, SD_EIO, "%s: cannot open: %s", src, strerror(errno));
    int rc = cli_write_atomic(dst, S_write_copy, &c, err);
    fclose(c.in);
    return rc;
}

/* Reads the PNG signature and IHDR of path: SD_OK with *w, *h, or an
 * explanation in why. */
static int S_png_check(const char *path, unsigned *w, unsigned *h, char *why, size_t cap)
{
    static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    unsigned char b[24];
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(why, cap, "no PNG was written");
        return SD_EINTERNAL;
    }
    size_t n = fread(b, 1, sizeof b, f);
    fclose(f);
    if (n == 0) {
        snprintf(why, cap, "the PNG is empty");
        return SD_EINTERNAL;
    }
    if (n < sizeof b || memcmp(b, sig, 8) != 0 || memcmp(b + 12, "IHDR", 4) != 0) {
        snprintf(why, cap, "the output is not a PNG");
        return SD_EINTERNAL;
    }
    *w = (unsigned)b[16] << 24 | (unsigned)b[17] << 16 | (unsigned)b[18] << 8 | b[19];
    *h = (unsigned)b[20] << 24 | (unsigned)b[21] << 16 | (unsigned)b[22] << 8 | b[23];
    if (*w < S_MIN_WIDTH || *h < S_MIN_HEIGHT) {
        snprintf(why, cap, "the PNG is %ux%u, smaller than %ux%u", *w, *h, S_MIN_WIDTH,
                 S_MIN_HEIGHT);
        return SD_EINTERNAL;
    }
    return SD_OK;
}

/* Runs `gnuplot NAME.gp` in dir; gnuplot's messages go to our stderr. */
static int S_gnuplot(const char *dir, const char *name, sd_error *err)
{
    char script[PATH_MAX];
    snprintf(script, sizeof script, "%s.gp", name);
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0)
        return sd_error_set(err, SD_EINTERNAL, "figure %s: cannot start gnuplot: %s", name,
                            strerror(errno));
    if (pid == 0) {
        if (chdir(dir) != 0)
            _exit(126);
        execlp("gnuplot", "gnuplot", script, (char *)NULL);
        _exit(127);
    }
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return sd_error_set(err, SD_EINTERNAL, "figure %s: waiting for gnuplot: %s", name,
                                strerror(errno));
    if (WIFEXITED(st) && WEXITSTATUS(st) == 127)
        return sd_error_set(err, SD_EINTERNAL,
                            "figure %s: cannot run gnuplot (is it installed? `make deps`)", name);
    if (WIFEXITED(st) && WEXITSTATUS(st) == 126)
        return sd_error_set(err, SD_EINTERNAL, "figure %s: cannot enter %s", name, dir);
    if (!WIFEXITED(st))
        return sd_error_set(err, SD_EINTERNAL, "figure %s: gnuplot died of signal %d", name,
                            WIFSIGNALED(st) ? WTERMSIG(st) : 0);
    if (WEXITSTATUS(st) != 0)
        return sd_error_set(err, SD_EINTERNAL, "figure %s: gnuplot %s/%s.gp failed (exit status %d)",
                            name, dir, name, WEXITSTATUS(st));
    return SD_OK;
}

typedef struct {
    unsigned width, height;
    double seconds;
} S_made;

static double S_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Data, script and PNG of one figure. */
static int S_one(const sd_figure *fig, const char *out, const char *scripts_given,
                 const sd_figure_opts *fo, int data_only, S_made *made, sd_error *err)
{
    char dat[PATH_MAX], gp[PATH_MAX], src[PATH_MAX], png[PATH_MAX], sdir[PATH_MAX];
    double t0 = S_now();
    memset(made, 0, sizeof *made);
    int rc = S_path(dat, sizeof dat, out, fig->name, ".dat", err);
    if (!rc)
        rc = S_path(gp, sizeof gp, out, fig->name, ".gp", err);
    if (!rc)
        rc = S_path(png, sizeof png, out, fig->name, ".png", err);
    if (!rc && !data_only)
        rc = S_scripts_dir(scripts_given, fig->name, sdir, sizeof sdir, err);
    if (!rc && !data_only)
        rc = S_path(src, sizeof src, sdir, fig->name, ".gp", err);
    S_data_ctx d = {fig, fo};
    if (!rc && (rc = cli_write_atomic(dat, S_write_data, &d, err)) != 0)
        sd_error_prefix(err, "figure %s", fig->name);
    if (rc || data_only) {
        made->seconds = S_now() - t0;
        return rc;
    }
    if ((rc = S_copy(src, gp, err)) != 0)
        return rc;
    if (unlink(png) != 0 && errno != ENOENT)
        return sd_error_set(err, SD_EOUTPUT, "%s: cannot replace: %s", png, strerror(errno));
    rc = S_gnuplot(out, fig->name, err);
    if (!rc) {
        char why[128];
        if (S_png_check(png, &made->width, &made->height, why, sizeof why) != SD_OK)
            rc = sd_error_set(err, SD_EINTERNAL, "figure %s: gnuplot %s/%s.gp: %s", fig->name,
                              out, fig->name, why);
    }
    if (rc)
        unlink(png); /* never leave an empty or broken PNG behind */
    made->seconds = S_now() - t0;
    return rc;
}

typedef struct {
    const sd_table *t;
    const sd_plot_spec *s;
} S_from_ctx;

static int S_from_data(FILE *f, void *ctx, sd_error *err)
{
    const S_from_ctx *c = ctx;
    return sd_plot_write_data(f, c->t, c->s, err);
}

static int S_from_script(FILE *f, void *ctx, sd_error *err)
{
    const S_from_ctx *c = ctx;
    return sd_plot_write_script(f, c->t, c->s, err);
}

#define S_MAX_Y 16

/* `plot --from FILE --x COL --y LIST [--by COL] [-o PNG]`. */
static int S_from(const char *from, const char *x, const char *ylist, const char *by, const char *png_given,
                  int data_only, int json)
{
    sd_error err;
    char ybuf[1024], png[PATH_MAX], dir[PATH_MAX], stem[PATH_MAX], dat[PATH_MAX + 8], gp[PATH_MAX + 8],
        datn[PATH_MAX + 8], pngn[PATH_MAX + 8];
    const char *y[S_MAX_Y];
    size_t ny = 0;
    if (!x || !ylist)
        return cli_usage_error("plot", "--from needs --x COL and --y COL[,COL...]");
    if (snprintf(ybuf, sizeof ybuf, "%s", ylist) >= (int)sizeof ybuf)
        return cli_usage_error("plot", "--y: the list is too long");
    for (char *p = ybuf, *e; p; p = e) {
        if ((e = strchr(p, ',')) != NULL)
            *e++ = '\0';
        if (!*p)
            return cli_usage_error("plot", "--y '%s': expected column names separated by commas", ylist);
        if (ny == S_MAX_Y)
            return cli_usage_error("plot", "--y '%s': at most %d columns", ylist, S_MAX_Y);
        y[ny++] = p;
    }
    /* the PNG and, beside it, the data and the script */
    const char *dot = strrchr(from, '.');
    if (png_given) {
        if (snprintf(png, sizeof png, "%s", png_given) >= (int)sizeof png)
            return cli_usage_error("plot", "-o: the path is too long");
    } else if (!dot || snprintf(png, sizeof png, "%.*s.png", (int)(dot - from), from) >= (int)sizeof png) {
        return cli_usage_error("plot", "--from %s: expected a .csv or .json file", from);
    }
    size_t pl = strlen(png);
    if (pl <= 4 || strcmp(png + pl - 4, ".png") != 0)
        return cli_usage_error("plot", "-o %s: expected a file name ending in .png", png);
    const char *slash = strrchr(png, '/');
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - png) : 1, slash ? png : ".");
    if (!dir[0])
        snprintf(dir, sizeof dir, "/");
    snprintf(stem, sizeof stem, "%.*s", (int)(pl - 4 - (slash ? (size_t)(slash + 1 - png) : 0)),
             slash ? slash + 1 : png);
    if (!stem[0])
        return cli_usage_error("plot", "-o %s: expected a file name ending in .png", png);
    snprintf(dat, sizeof dat, "%.*s.dat", (int)(pl - 4), png);
    snprintf(gp, sizeof gp, "%.*s.gp", (int)(pl - 4), png);
    snprintf(datn, sizeof datn, "%s.dat", stem);
    snprintf(pngn, sizeof pngn, "%s.png", stem);
    sd_table *t = NULL;
    if (sd_table_read(from, &t, &err))
        return cli_fail(&err);
    sd_plot_spec sp = {.x = x, .y = y, .ny = ny, .by = by, .data_name = datn, .png_name = pngn, .title = from};
    S_from_ctx ctx = {t, &sp};
    unsigned w = 0, h = 0;
    int rc = sd_plot_check(t, &sp, &err);
    if (!rc)
        rc = cli_write_atomic(dat, S_from_data, &ctx, &err);
    if (!rc)
        rc = cli_write_atomic(gp, S_from_script, &ctx, &err);
    if (!rc && !data_only) {
        if (unlink(png) != 0 && errno != ENOENT)
            rc = sd_error_set(&err, SD_EOUTPUT, "%s: cannot replace: %s", png, strerror(errno));
        if (!rc)
            rc = S_gnuplot(dir, stem, &err);
        char why[128];
        if (!rc && S_png_check(png, &w, &h, why, sizeof why) != SD_OK)
            rc = sd_error_set(&err, SD_EINTERNAL, "plot %s: gnuplot %s: %s", png, gp, why);
        if (rc)
            unlink(png);
    }
    size_t nrow = t->nrow;
    sd_table_free(t);
    if (rc)
        return cli_fail(&err);
    if (json) {
        json_t *o = json_object(), *ya = json_array();
        for (size_t k = 0; k < ny; k++)
            json_array_append_new(ya, json_string(y[k]));
        json_object_set_new(o, "from", json_string(from));
        json_object_set_new(o, "x", json_string(x));
        json_object_set_new(o, "y", ya);
        json_object_set_new(o, "by", by ? json_string(by) : json_null());
        json_object_set_new(o, "rows", json_integer((json_int_t)nrow));
        json_object_set_new(o, "png", data_only ? json_null() : json_string(png));
        json_object_set_new(o, "data", json_string(dat));
        json_object_set_new(o, "script", json_string(gp));
        json_object_set_new(o, "width", json_integer(w));
        json_object_set_new(o, "height", json_integer(h));
        return cli_print_json(o);
    }
    printf("from %s: %zu rows; x %s, y %s%s%s\n", from, nrow, x, ylist, by ? ", by " : "", by ? by : "");
    if (!data_only)
        printf("wrote %s (%ux%u), %s, %s\n", png, w, h, dat, gp);
    else
        printf("wrote %s, %s (--data-only: run gnuplot %s.gp in %s)\n", dat, gp, stem, dir);
    return cli_stdout_status();
}

int cmd_plot(int argc, char **argv)
{
    enum { O_OUT = CLI_OPT_FIRST_FREE, O_SCRIPTS, O_QUICK, O_SEED, O_DATA_ONLY, O_JSON, O_LIST, O_FROM, O_X, O_Y, O_BY };
    static const struct option opts[] = {
        {"out", required_argument, 0, O_OUT},
        {"scripts", required_argument, 0, O_SCRIPTS},
        {"quick", no_argument, 0, O_QUICK},
        {"seed", required_argument, 0, O_SEED},
        {"data-only", no_argument, 0, O_DATA_ONLY},
        {"json", no_argument, 0, O_JSON},
        {"list", no_argument, 0, O_LIST},
        {"from", required_argument, 0, O_FROM},
        {"x", required_argument, 0, O_X},
        {"y", required_argument, 0, O_Y},
        {"by", required_argument, 0, O_BY},
        {"output", required_argument, 0, 'o'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    const char *out = "plots/out", *scripts = NULL;
    const char *from = NULL, *x = NULL, *ylist = NULL, *by = NULL, *png = NULL;
    int data_only = 0, json = 0, list = 0, figure_opt = 0, c;
    sd_figure_opts fo;
    sd_figure_opts_default(&fo);
    sd_error err;
    optind = 0;
    opterr = 0;
    while ((c = cli_getopt(argc, argv, ":ho:", opts)) != -1) {
        if (c == O_OUT || c == O_SCRIPTS || c == O_QUICK || c == O_SEED || c == O_LIST)
            figure_opt = 1;
        switch (c) {
        case 'h': fputs(S_help_text, stdout); return EX_OK_;
        case O_LIST: list = 1; break;
        case O_FROM: from = optarg; break;
        case O_X: x = optarg; break;
        case O_Y: ylist = optarg; break;
        case O_BY: by = optarg; break;
        case 'o': png = optarg; break;
        case O_OUT: out = optarg; break;
        case O_SCRIPTS:
            if (!*optarg) /* as --out '' */
                return cli_usage_error("plot", "--scripts: bad directory name ''");
            scripts = optarg;
            break;
        case O_QUICK: fo.quick = 1; break;
        case O_DATA_ONLY: data_only = 1; break;
        case O_JSON: json = 1; break;
        case O_SEED:
            if (cli_parse_seed(optarg, &fo.seed, &err))
                return cli_fail(&err);
            break;
        default: return cli_option_error("plot", c, argv);
        }
    }
    if (from && figure_opt)
        return cli_usage_error("plot", "--from plots a file; --out, --scripts, --quick, --seed and --list are for "
                               "the built-in figures (use -o FILE.png)");
    if (from && optind < argc)
        return cli_usage_error("plot", "--from plots a file; it takes no figure name ('%s')", argv[optind]);
    if (from)
        return S_from(from, x, ylist, by, png, data_only, json);
    if (x || ylist || by || png)
        return cli_usage_error("plot", "--x, --y, --by and -o go with --from FILE");
    if (list && optind < argc)
        return cli_usage_error("plot", "--list lists the figures; it takes no figure name ('%s')", argv[optind]);
    if (list)
        return S_list(json);
    if (optind >= argc)
        return cli_usage_error("plot", "name a figure or 'all' (see 'simdec plot --list')");
    /* Resolve every name before doing any work. */
    size_t nfig = 0, cap = 0;
    for (size_t i = 0; sd_figures[i]; i++)
        cap++;
    const sd_figure **todo = calloc(cap * (size_t)(argc - optind) + 1, sizeof *todo);
    if (!todo) {
        sd_error_set(&err, SD_ENOMEM, "out of memory");
        return cli_fail(&err);
    }
    for (int a = optind; a < argc; a++) {
        if (strcmp(argv[a], "all") == 0) {
            for (size_t i = 0; sd_figures[i]; i++)
                todo[nfig++] = sd_figures[i];
        } else if ((todo[nfig] = sd_figure_find(argv[a])) != NULL) {
            nfig++;
        } else {
            char hint[160];
            cli_suggest sg;
            cli_suggest_init(&sg, argv[a]);
            for (size_t i = 0; sd_figures[i]; i++)
                cli_suggest_add(&sg, sd_figures[i]->name);
            free(todo);
            return cli_usage_error("plot", "unknown figure '%s'%s (see 'simdec plot --list')", argv[a],
                                   cli_suggest_text(&sg, "", hint, sizeof hint));
        }
    }
    if (S_mkdirs(out, &err)) {
        free(todo);
        return cli_fail(&err);
    }
    int status = EX_OK_;
    json_t *arr = json ? json_array() : NULL;
    if (!json) { /* the seed, as JSON and the data files echo it */
        printf("seed %llu%s\n", (unsigned long long)fo.seed, fo.quick ? " (--quick: a tenth of the trials)" : "");
        printf("%-28s %-12s %8s  %s\n", "figure", "size", "seconds", "files");
    }
    for (size_t i = 0; i < nfig; i++) {
        const sd_figure *fig = todo[i];
        S_made m;
        sd_error_clear(&err);
        int rc = S_one(fig, out, scripts, &fo, data_only, &m, &err);
        if (rc) {
            int st = cli_fail(&err);
            if (status == EX_OK_)
                status = st;
        }
        if (json) {
            json_t *o = json_object();
            json_object_set_new(o, "figure", json_string(fig->name));
            json_object_set_new(o, "ok", json_boolean(!rc));
            json_object_set_new(o, "dir", json_string(out));
            json_object_set_new(o, "width", json_integer(m.width));
            json_object_set_new(o, "height", json_integer(m.height));
            json_object_set_new(o, "seconds", json_real(m.seconds));
            if (rc)
                json_object_set_new(o, "error", json_string(err.msg));
            json_array_append_new(arr, o);
        } else {
            char size[32];
            if (rc)
                snprintf(size, sizeof size, "FAILED");
            else if (data_only)
                snprintf(size, sizeof size, "-");
            else
                snprintf(size, sizeof size, "%ux%u", m.width, m.height);
            printf("%-28s %-12s %8.1f  %s/%s.{dat%s}\n", fig->name, size, m.seconds, out,
                   fig->name, data_only ? "" : ",gp,png");
            fflush(stdout);
        }
    }
    free(todo);
    if (json) {
        json_t *o = json_object();
        json_object_set_new(o, "out", json_string(out));
        json_object_set_new(o, "quick", json_boolean(fo.quick));
        json_object_set_new(o, "seed", json_integer((json_int_t)fo.seed));
        json_object_set_new(o, "figures", arr);
        int st = cli_print_json(o);
        if (status == EX_OK_)
            status = st;
    }
    return status;
}
