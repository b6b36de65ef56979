/* test_util.c — see test_util.h. */
#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char *S_slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return strdup("");
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + len, 1, cap - len - 1, f)) > 0) {
        len += got;
        if (cap - len - 1 == 0) {
            char *nb = realloc(buf, cap *= 2);
            if (!nb) {
                free(buf);
                buf = NULL;
            } else
                buf = nb;
        }
    }
    fclose(f);
    if (buf)
        buf[len] = '\0';
    return buf;
}

int tu_run(const char *args, char **out, char **err)
{
    const char *bin = getenv("SIMDEC_BIN");
    if (!bin || !*bin)
        bin = "./simdec";
    char o[] = "/tmp/simdec-test-outXXXXXX", e[] = "/tmp/simdec-test-errXXXXXX";
    int fo = mkstemp(o), fe = mkstemp(e);
    if (fo >= 0)
        close(fo);
    if (fe >= 0)
        close(fe);
    size_t len = strlen(bin) + strlen(args) + strlen(o) + strlen(e) + 32;
    char *cmd = malloc(len);
    snprintf(cmd, len, "%s %s >%s 2>%s </dev/null", bin, args, o, e);
    int st = system(cmd);
    free(cmd);
    if (out)
        *out = S_slurp(o);
    if (err)
        *err = S_slurp(e);
    unlink(o);
    unlink(e);
    if (st == -1)
        return -1;
    if (WIFEXITED(st))
        return WEXITSTATUS(st);
    if (WIFSIGNALED(st))
        return 128 + WTERMSIG(st);
    return -1;
}

char *tu_tempfile(const char *text)
{
    char path[] = "/tmp/simdec-test-fileXXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        return NULL;
    size_t n = strlen(text);
    ssize_t w = write(fd, text, n);
    close(fd);
    if (w < 0 || (size_t)w != n)
        return NULL;
    return strdup(path);
}

int tu_contains(const char *hay, const char *needle)
{
    return hay && needle && strstr(hay, needle) != NULL;
}
