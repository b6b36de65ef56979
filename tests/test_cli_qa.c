/* test_cli_qa.c — defects found by a user-level pass over `run`, `check`
 * and `gen`: each test failed before its fix. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../src/sd_error.h"
#include "../src/sd_sha256.h"
#include "test_util.h"

/* Runs `args`, which must succeed; its stdout must hold `has` and must not
 * hold `lacks` (either may be NULL). */
static void S_expect_output(const char *args, const char *has, const char *lacks)
{
    char *out;
    cr_assert_eq(tu_run(args, &out, NULL), 0, "%s", args);
    if (has)
        cr_expect(tu_contains(out, has), "'%s': no '%s' in\n%s", args, has, out);
    if (lacks)
        cr_expect(!tu_contains(out, lacks), "'%s': '%s' in\n%s", args, lacks, out);
    free(out);
}

/* `gen -o PATH` where PATH is a FIFO (as it would be a device such as
 * /dev/null): the output goes into it, and it stays a FIFO.  Renaming a
 * temporary file over it replaced the FIFO (and, as root, the device). */
Test(cli_qa, output_into_a_fifo_keeps_the_fifo)
{
    char dir[] = "/tmp/simdec-qa-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char fifo[300], args[400];
    snprintf(fifo, sizeof fifo, "%s/pipe", dir);
    cr_assert_eq(mkfifo(fifo, 0600), 0);
    /* A reader first, so that the writer's open does not block; the
     * output (a few hundred bytes) fits in the pipe's buffer. */
    int fd = open(fifo, O_RDONLY | O_NONBLOCK);
    cr_assert(fd >= 0);
    snprintf(args, sizeof args, "gen --V 2 --T 1 -o %s", fifo);
    tu_expect(args, 0, NULL);
    struct stat st;
    cr_assert_eq(stat(fifo, &st), 0);
    cr_expect(S_ISFIFO(st.st_mode), "%s is no longer a FIFO", fifo);
    char buf[4096];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    buf[n > 0 ? n : 0] = '\0';
    cr_expect(tu_contains(buf, "simdec-chain-1"), "the FIFO received '%s'", buf);
    unlink(fifo);
    rmdir(dir);
}

/* Runs `simdec args` with standard output on /dev/full; returns the exit
 * status and *err its stderr (malloc'd).  Skips the test without a
 * /dev/full device (a redirection would create a regular file). */
static int S_run_full(const char *args, char **err)
{
    struct stat st;
    if (stat("/dev/full", &st) != 0 || !S_ISCHR(st.st_mode))
        cr_skip_test("no /dev/full device");
    const char *bin = getenv("SIMDEC_BIN");
    char e[] = "/tmp/simdec-qa-errXXXXXX", cmd[600];
    int fd = mkstemp(e);
    cr_assert(fd >= 0);
    close(fd);
    snprintf(cmd, sizeof cmd, "%s %s >/dev/full 2>%s </dev/null", bin && *bin ? bin : "./simdec", args, e);
    int status = system(cmd);
    FILE *f = fopen(e, "rb");
    *err = calloc(1, 4096);
    if (f) {
        size_t n = fread(*err, 1, 4095, f);
        (*err)[n] = '\0';
        fclose(f);
    }
    unlink(e);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Output that cannot be written (a full disk) is exit 73 with one line
 * saying so, whatever the format: the table and CSV exited 73 silently,
 * --help, --list and --version exited 0. */
Test(cli_qa, a_full_stdout_is_reported)
{
    static const char *const args[] = {
        "run --trials 10", "run --trials 10 --csv", "run --trials 10 --json",
        "run --algo token,block --trials 10", "check --trials 100", "check --trials 100 --json",
        "run --help", "run --list", "check --help", "gen --help", "--version", "--help",
        "eval speedup --gamma 2", "lp otm --k 2 --V 3",
    };
    for (size_t i = 0; i < sizeof args / sizeof args[0]; i++) {
        char *err;
        int st = S_run_full(args[i], &err);
        cr_expect_eq(st, 73, "'%s' >/dev/full: exit %d, expected 73", args[i], st);
        cr_expect(tu_contains(err, "simdec: cannot write to standard output\n"), "'%s' >/dev/full: stderr '%s'",
                  args[i], err);
        free(err);
    }
}

/* `run --estimator rb` on a verifier without a Rao-Blackwellised estimate
 * is refused (64) — and then leaves no --samples file: it used to write
 * the file first. */
Test(cli_qa, refused_estimator_leaves_no_samples_file)
{
    char dir[] = "/tmp/simdec-qa-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char path[300], args[400];
    snprintf(path, sizeof path, "%s/s.txt", dir);
    snprintf(args, sizeof args, "run --algo rrs --estimator rb --trials 100 --T 3 --samples %s", path);
    tu_expect(args, 64, "--estimator rb");
    cr_expect_neq(access(path, F_OK), 0, "a refused run left %s behind", path);
    unlink(path);
    rmdir(dir);
}

/* The echo of a parameter's value in the table: whole numbers in full,
 * reals without an exponent below 10^6 (gamma 60 read "6e+01", eps 100
 * "1e+02"). */
Test(cli_qa, parameter_echo_is_positional)
{
    static const struct {
        const char *args, *line;
    } cases[] = {
        {"run --algo block --gamma 60 --trials 10", "\nverifier  block, gamma 60\n"},
        {"run --algo block --gamma 1000000 --trials 10", "\nverifier  block, gamma 1000000\n"},
        {"run --algo biased --eps 100 --gamma 50 --trials 10", "\nverifier  biased, eps 100, residual opt, gamma 50\n"},
        {"run --algo biased --eps 0.1 --trials 10", ", eps 0.1, "},
        {"run --algo token --gamma 30,40 --trials 10", "\n  token, gamma 30 "},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        S_expect_output(cases[i].args, cases[i].line, NULL);
}

/* Field `name` of the first data row of a CSV without quoted fields, into
 * buf; 0 if the header has no such column. */
static int S_csv_field(const char *csv, const char *name, char *buf, size_t len)
{
    const char *row = strchr(csv, '\n');
    if (!row)
        return 0;
    row++;
    size_t col = 0;
    for (const char *h = csv; h < row - 1; col++) {
        size_t w = strcspn(h, ",\n");
        if (w == strlen(name) && strncmp(h, name, w) == 0) {
            const char *f = row;
            for (size_t c = 0; c < col; c++)
                f += strcspn(f, ",\n") + 1;
            size_t fw = strcspn(f, ",\n");
            snprintf(buf, len, "%.*s", (int)fw, f);
            return 1;
        }
        h += w + 1;
    }
    return 0;
}

/* Without a bias estimate (a lossless verifier) its stderr and noise
 * floor are empty in the CSV, as JSON's "bias_estimate" is null; they read
 * 0, as if estimated exactly. */
Test(cli_qa, csv_bias_estimate_columns_empty_without_estimate)
{
    char *out, f[64];
    cr_assert_eq(tu_run("run --trials 100 --csv", &out, NULL), 0);
    static const char *const cols[] = {"bias_estimate", "bias_estimate_stderr", "bias_estimate_noise_floor"};
    for (size_t i = 0; i < 3; i++) {
        cr_assert(S_csv_field(out, cols[i], f, sizeof f), "no column %s", cols[i]);
        cr_expect_str_empty(f, "%s = '%s' without an estimate", cols[i], f);
    }
    free(out);
}

/* --help lists the options that work: gen --max-memory, check --progress
 * and --plugin were accepted but not listed; and the list of every
 * verifier's parameters gave --draw the help of its first verifier ("iid
 * only") over all six tree verifiers. */
Test(cli_qa, help_lists_what_works)
{
    static const struct {
        const char *args, *text;
    } cases[] = {
        {"gen --help", "\n  --max-memory BYTES "},
        {"check --help", "\n  --progress "},
        {"check --help", "\n  --plugin FILE "},
        {"run --help", "drafting rule of the children\n                       iid only: tree-rrs\n"},
        {"run --help", "\n                       topk only: tree-topk\n"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        S_expect_output(cases[i].args, cases[i].text, NULL);
    tu_expect("gen --max-memory 1G --V 2 --T 1", 0, NULL);
    tu_expect("check --progress --trials 100", 0, NULL);
}

/* Output files get the mode a new file gets (0666 less the umask), or keep
 * the mode of the file they replace: written through mkstemp, they were
 * always 0600. */
Test(cli_qa, output_file_mode_follows_umask)
{
    char dir[] = "/tmp/simdec-qa-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char path[300], args[400];
    struct stat st;
    mode_t old = umask(022);
    snprintf(path, sizeof path, "%s/m.json", dir);
    snprintf(args, sizeof args, "gen --V 2 --T 1 -o %s", path);
    tu_expect(args, 0, NULL);
    cr_assert_eq(stat(path, &st), 0);
    cr_expect_eq(st.st_mode & 0777, 0644, "gen -o made mode %o under umask 022", (unsigned)(st.st_mode & 0777));
    cr_assert_eq(chmod(path, 0640), 0);
    tu_expect(args, 0, NULL);
    cr_assert_eq(stat(path, &st), 0);
    cr_expect_eq(st.st_mode & 0777, 0640, "gen -o over a 0640 file made mode %o", (unsigned)(st.st_mode & 0777));
    unlink(path);
    snprintf(path, sizeof path, "%s/s.txt", dir);
    snprintf(args, sizeof args, "run --trials 10 --T 2 --samples %s", path);
    tu_expect(args, 0, NULL);
    cr_assert_eq(stat(path, &st), 0);
    cr_expect_eq(st.st_mode & 0777, 0644, "run --samples made mode %o under umask 022", (unsigned)(st.st_mode & 0777));
    unlink(path);
    umask(old);
    rmdir(dir);
}

/* A sweep list after an option that takes no value (--json, --csv,
 * --paired, --progress, --stream) is still a sweep: the scan took the
 * next option for that option's value, and `run --json --algo token,block`
 * failed with "unknown verifier 'token,block'". */
Test(cli_qa, sweep_after_a_flag)
{
    char *out;
    cr_assert_eq(tu_run("run --json --algo token,block --trials 100 --T 5", &out, NULL), 0);
    json_error_t je;
    json_t *j = json_loads(out, 0, &je);
    cr_expect(json_is_array(j) && json_array_size(j) == 2, "%s", out);
    json_decref(j);
    free(out);
    cr_assert_eq(tu_run("run --paired --algo token,block --trials 100 --T 5 --csv", &out, NULL), 0);
    cr_expect(tu_contains(out, "\ntoken,") && tu_contains(out, "\nblock,") && tu_contains(out, "output-first"), "%s", out);
    free(out);
    cr_assert_eq(tu_run("run --csv --gamma 2,3 --trials 100 --T 5", &out, NULL), 0);
    cr_expect(tu_contains(out, "\ntoken,2,") && tu_contains(out, "\ntoken,3,"), "%s", out);
    free(out);
}

/* The CSV carries the model's identity as JSON does: the generator of
 * --rng numpy-mt19937 and the Zipf model's exponents were missing, so two
 * different models gave indistinguishable rows. */
Test(cli_qa, csv_names_the_generator_and_zipf_exponents)
{
    char *out, f[64];
    cr_assert_eq(tu_run("run --rng numpy-mt19937 --trials 10 --T 3 --csv", &out, NULL), 0);
    cr_assert(S_csv_field(out, "model_rng", f, sizeof f), "%s", out);
    cr_expect_str_eq(f, "numpy-mt19937");
    free(out);
    cr_assert_eq(tu_run("run --zipf --zipf-draft 0.5 --zipf-target 2 --trials 10 --T 3 --csv", &out, NULL), 0);
    cr_assert(S_csv_field(out, "model_zipf_draft", f, sizeof f), "%s", out);
    cr_expect_str_eq(f, "0.5");
    cr_assert(S_csv_field(out, "model_zipf_target", f, sizeof f), "%s", out);
    cr_expect_str_eq(f, "2");
    free(out);
}

/* The SHA-256 echoed for a --model read from a pipe is that of the bytes
 * loaded: the file was read a second time to hash it, and a pipe then gave
 * nothing (the hash of the empty string, e3b0c442...). */
Test(cli_qa, model_from_a_pipe_has_its_own_sha256)
{
    char *path = tu_tempfile(""), *out;
    char cmd[900], hex[65];
    snprintf(cmd, sizeof cmd, "gen --V 3 --T 2 -o %s", path);
    cr_assert_eq(tu_run(cmd, NULL, NULL), 0);
    cr_assert_eq(sd_sha256_file(path, hex, NULL), SD_OK);
    const char *bin = getenv("SIMDEC_BIN");
    /* (check's table did not print the identity at all) */
    static const char *const what[] = {"run --trials 10 --json", "run --trials 10", "check --trials 100 --json",
                                       "check --trials 100"};
    for (size_t i = 0; i < sizeof what / sizeof what[0]; i++) {
        char o[] = "/tmp/simdec-qa-outXXXXXX";
        int fd = mkstemp(o);
        cr_assert(fd >= 0);
        close(fd);
        snprintf(cmd, sizeof cmd, "cat %s | %s %s --model /dev/stdin >%s 2>/dev/null", path,
                 bin && *bin ? bin : "./simdec", what[i], o);
        int st = system(cmd);
        cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s", cmd);
        FILE *f = fopen(o, "rb");
        out = calloc(1, 1 << 16);
        if (f) {
            size_t n = fread(out, 1, (1 << 16) - 1, f);
            out[n] = '\0';
            fclose(f);
        }
        cr_expect(tu_contains(out, hex), "'%s' on a pipe: no sha256 %s in\n%s", what[i], hex, out);
        free(out);
        unlink(o);
    }
    remove(path);
    free(path);
}

/* A sweep stopped by --target-stderr runs each point to its own trials;
 * the table's header gave the first point's count for all of them (12288
 * where block ran 16384).  The counts come from the CSV of the same run. */
Test(cli_qa, sweep_table_names_each_points_trials)
{
    const char *args = "run --algo token,block --target-stderr 0.028 --T 50";
    char cmd[200], *csv, *tab, f[64];
    snprintf(cmd, sizeof cmd, "%s --csv", args);
    cr_assert_eq(tu_run(cmd, &csv, NULL), 0);
    char *second = strchr(strchr(csv, '\n') + 1, '\n'); /* row 2 starts after it */
    cr_assert(S_csv_field(csv, "trials", f, sizeof f));
    unsigned long long t1 = strtoull(f, NULL, 10), t2 = 0;
    cr_assert_not_null(second);
    const char *t = strstr(second, ",7,50,");
    cr_assert_not_null(t, "%s", csv);
    t2 = strtoull(t + 6, NULL, 10);
    free(csv);
    if (t1 == t2)
        cr_skip_test("both points stopped at %llu trials", t1);
    cr_assert_eq(tu_run(args, &tab, NULL), 0);
    char want[64];
    snprintf(want, sizeof want, "%llu trials\n", t1);
    cr_expect(tu_contains(tab, want), "no '%s' in\n%s", want, tab);
    snprintf(want, sizeof want, "%llu trials\n", t2);
    cr_expect(tu_contains(tab, want), "no '%s' in\n%s", want, tab);
    snprintf(want, sizeof want, "trials    %llu   seed", t1);
    cr_expect(!tu_contains(tab, want), "the header claims one count:\n%s", tab);
    free(tab);
}

/* With 0 degrees of freedom after pooling (here one trial) the table said
 * "detects any bias of TV >= nan"; it says that the test has no power. */
Test(cli_qa, check_without_degrees_of_freedom_says_so)
{
    S_expect_output("check --trials 1", "  power      none: 0 degrees of freedom", "nan");
}

/* On a problem where nothing varies the RB line read "variance 0 vs 0
 * plain (infx fewer trials for the same stderr)". */
Test(cli_qa, rb_gain_of_a_deterministic_problem)
{
    S_expect_output("run --p 1,0 --q 0,1 --trials 100", "variance 0 vs 0 plain (neither varies)", "infx");
}

/* The paired table's se ratio of two runs that do not vary (0 / 0) read
 * "-nanx"; it reads "-", as JSON's stderr_ratio is null. */
Test(cli_qa, paired_ratio_of_no_variance)
{
    S_expect_output("run --p 1,0 --q 0,1 --algo token,block --paired --trials 100", "  target calls (RB)", "nan");
}

/* A comma list on a choice parameter is a sweep, as README says of any
 * declared parameter: `--residual opt,uno` was refused ("expected 'opt' or
 * 'uno', got 'opt,uno'"). */
Test(cli_qa, sweep_over_a_choice)
{
    char *out;
    cr_assert_eq(tu_run("run --algo biased --residual opt,uno --trials 100 --T 5 --csv", &out, NULL), 0);
    cr_expect(tu_contains(out, "\nbiased,0,opt,") && tu_contains(out, "\nbiased,0,uno,"), "%s", out);
    free(out);
    S_expect_output("run --algo traversal --draw iid,wor --trials 100 --T 5", "  traversal, tree 2,2, draw wor ", NULL);
}
