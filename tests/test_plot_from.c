/* test_plot_from.c — `simdec plot --from FILE`: one's own results (the CSV
 * or JSON of run, check, eval, lp, trace) drawn with gnuplot; the table
 * reader (plots/sd_plot_table.h) and the refusals (an unknown column names
 * the file's columns). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../plots/sd_plot_table.h"
#include "test_util.h"

static char S_dir[64];

static void S_mkdir(void)
{
    snprintf(S_dir, sizeof S_dir, "/tmp/simdec-plot-fromXXXXXX");
    cr_assert_not_null(mkdtemp(S_dir));
}

static void S_rmdir(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", S_dir);
    cr_expect_eq(system(cmd), 0);
}

/* Runs args and writes its stdout to DIR/name. */
static void S_save(const char *args, const char *name)
{
    char *out = NULL, path[128];
    cr_assert_eq(tu_run(args, &out, NULL), 0, "%s", args);
    snprintf(path, sizeof path, "%s/%s", S_dir, name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(out, f);
    fclose(f);
    free(out);
}

static long S_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

/* A sweep's CSV plotted: the PNG (a PNG, non-empty), its data and script;
 * the rejections get error bars from rejections_stderr. */
Test(plot_from, a_sweeps_csv_is_plotted, .init = S_mkdir, .fini = S_rmdir)
{
    char args[512], path[128];
    S_save("run --algo token,block --gamma 1..3 --V 5 --T 20 --trials 2000 --csv", "sweep.csv");
    snprintf(args, sizeof args, "plot --from %s/sweep.csv --x gamma --y rejections_mean,exact_rejections --by algo",
             S_dir);
    char *out = NULL, *err = NULL;
    cr_assert_eq(tu_run(args, &out, &err), 0, "%s", err);
    snprintf(path, sizeof path, "%s/sweep.png", S_dir);
    cr_expect(S_size(path) > 1000, "%s: %ld bytes", path, S_size(path));
    char *png = tu_slurp(path);
    cr_expect(png && !memcmp(png, "\x89PNG", 4), "not a PNG");
    free(png);
    snprintf(path, sizeof path, "%s/sweep.gp", S_dir);
    char *gp = tu_slurp(path);
    cr_expect(tu_contains(gp, "yerrorlines"), "%s", gp);
    cr_expect(tu_contains(gp, "algo = block"), "%s", gp);
    free(gp);
    snprintf(path, sizeof path, "%s/sweep.dat", S_dir);
    char *dat = tu_slurp(path);
    cr_expect(tu_contains(dat, "standard error: rejections_stderr"), "%s", dat);
    free(dat);
    free(out);
    free(err);
}

/* Bad columns are refused with the list of the columns, and nothing is
 * written. */
Test(plot_from, bad_columns_are_refused_with_the_list, .init = S_mkdir, .fini = S_rmdir)
{
    char args[512], path[128];
    S_save("run --algo token --gamma 1,2 --V 4 --T 10 --trials 500 --csv", "s.csv");
    snprintf(args, sizeof args, "plot --from %s/s.csv --x gama --y rejections_mean", S_dir);
    tu_expect(args, 64, "--x gama: no such column; the columns are: algo, gamma, ");
    snprintf(args, sizeof args, "plot --from %s/s.csv --x gamma --y rejections_mean,nope", S_dir);
    tu_expect(args, 64, "--y nope: no such column; the columns are: algo, gamma");
    snprintf(args, sizeof args, "plot --from %s/s.csv --x gamma --y rejections_mean --by nope", S_dir);
    tu_expect(args, 64, "--by nope: no such column");
    snprintf(args, sizeof args, "plot --from %s/s.csv --x gamma --y algo", S_dir);
    tu_expect(args, 65, "--y algo: the column holds no numbers");
    snprintf(path, sizeof path, "%s/s.png", S_dir);
    cr_expect_eq(S_size(path), -1, "a PNG was written");
    snprintf(path, sizeof path, "%s/s.dat", S_dir);
    cr_expect_eq(S_size(path), -1, "a data file was written");
    tu_expect("plot --from tests/no-such-file.csv --x a --y b", 66, "cannot open");
    tu_expect("plot --from README.md --x a --y b", 64, "expected a .csv or .json file");
    tu_expect("plot --x a --y b", 64, "--x, --y, --by and -o go with --from FILE");
    snprintf(args, sizeof args, "plot --from %s/s.csv --x gamma --y rejections_mean -o %s/s.svg", S_dir, S_dir);
    tu_expect(args, 64, "ending in .png");
}

/* The table reader: CSV quotes, JSON forms (lp's comparisons with the
 * object's scalars repeated; eval's arrays by index), error columns. */
Test(plot_from, the_reader_takes_simdecs_forms)
{
    sd_error err;
    sd_table *t = NULL;
    char *csv = tu_tempfile("a,b,\"c, d\"\n1,\"x\"\"y\",3\n# a comment\n2,z,\n");
    char csvp[256];
    snprintf(csvp, sizeof csvp, "%s.csv", csv);
    cr_assert_eq(rename(csv, csvp), 0);
    cr_assert_eq(sd_table_read(csvp, &t, &err), SD_OK, "%s", err.msg);
    cr_expect_eq(t->nrow, 2);
    cr_expect_eq(t->ncol, 3);
    cr_expect_str_eq(t->name[2], "c, d");
    cr_expect_str_eq(t->cell[1], "x\"y");
    cr_expect_null(t->cell[5]);
    sd_table_free(t);
    FILE *f = fopen(csvp, "w");
    fputs("a,b\n1,2\n3\n", f);
    fclose(f);
    cr_expect_eq(sd_table_read(csvp, &t, &err), SD_EDATA);
    cr_expect(tu_contains(err.msg, ":3: 1 fields; expected 2"), "%s", err.msg);
    unlink(csvp);
    free(csv);

    char *js = tu_tempfile("{\"optimum\": 2.5, \"tree\": [2, 1], \"comparisons\": [{\"verifier\": \"a\", \"mean\": 2.4, "
                           "\"stderr\": 0.01}, {\"verifier\": \"b\", \"mean\": 2.2, \"stderr\": 0.02}]}");
    char jsp[256];
    snprintf(jsp, sizeof jsp, "%s.json", js);
    cr_assert_eq(rename(js, jsp), 0);
    cr_assert_eq(sd_table_read(jsp, &t, &err), SD_OK, "%s", err.msg);
    cr_expect_eq(t->nrow, 2);
    long opt = sd_table_col(t, "optimum"), mean = sd_table_col(t, "mean");
    cr_assert(opt >= 0 && mean >= 0);
    cr_expect_str_eq(t->cell[1 * t->ncol + (size_t)opt], "2.5");
    cr_expect_eq(sd_plot_err_col(t, "mean"), sd_table_col(t, "stderr"));
    cr_expect_eq(sd_plot_err_col(t, "optimum"), -1);
    cr_expect(sd_table_col(t, "tree.1") >= 0);
    sd_table_free(t);
    f = fopen(jsp, "w");
    fputs("{\"expected_accepted\": 1.5, \"ccdf\": [0.9, 0.5, 0.1], \"all\": {\"token\": 1.4}}", f);
    fclose(f);
    cr_assert_eq(sd_table_read(jsp, &t, &err), SD_OK, "%s", err.msg);
    cr_expect_eq(t->nrow, 3);
    cr_expect(sd_table_col(t, "index") >= 0 && sd_table_col(t, "ccdf") >= 0 && sd_table_col(t, "all.token") >= 0);
    sd_table_free(t);
    f = fopen(jsp, "w");
    fputs("{\"a\": 1,", f);
    fclose(f);
    cr_expect_eq(sd_table_read(jsp, &t, &err), SD_EDATA);
    cr_expect(tu_contains(err.msg, ".json:1:"), "%s", err.msg);
    unlink(jsp);
    free(js);
}
