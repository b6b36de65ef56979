/* test_qa_cli.c — defects found by a user-level pass over `run`, `check`
 * and `gen`: each test failed before its fix. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test_util.h"

/* Runs `args`; expects exit status `code` and, if fragment is not NULL,
 * that stderr contains it; a failing command prints nothing on stdout. */
static void S_expect(const char *args, int code, const char *fragment)
{
    char *out, *err;
    int st = tu_run(args, &out, &err);
    cr_expect_eq(st, code, "'%s': exit %d, expected %d; stderr: %s", args, st, code, err);
    if (fragment)
        cr_expect(tu_contains(err, fragment), "'%s': stderr '%s' lacks '%s'", args, err, fragment);
    if (code != 0)
        cr_expect_eq(out[0], '\0', "'%s': printed on stdout despite failing: %s", args, out);
    free(out);
    free(err);
}

/* `gen -o PATH` where PATH is a FIFO (as it would be a device such as
 * /dev/null): the output goes into it, and it stays a FIFO.  Renaming a
 * temporary file over it replaced the FIFO (and, as root, the device). */
Test(qa_cli, output_into_a_fifo_keeps_the_fifo)
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
    S_expect(args, 0, NULL);
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
