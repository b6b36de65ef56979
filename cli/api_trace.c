/* api_trace.c — `simdec trace` on arrays, and models with a tolerance,
 * for other languages (api_trace.h). */
#include "api_trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmd_trace.h"

int sd_api_trace(const void *const arrays[4], const char *const dtypes[4], const size_t ndims[4],
                 const size_t shapes[4][8], int nopt, const char *const *names, const char *const *values,
                 char **out, char **err)
{
    *out = *err = NULL;
    char *ebuf = NULL;
    size_t elen = 0;
    FILE *me = open_memstream(&ebuf, &elen);
    if (!me)
        return 71;
    fflush(stderr);
    FILE *se = stderr;
    stderr = me; /* glibc lets a program assign its standard streams */
    int status = 0;
    sd_npy arr[4];
    sd_trace_input in = {0};
    const sd_npy **slot[4] = {&in.tokens, &in.draft, &in.target, &in.ratios};
    const char **name[4] = {&in.tokens_name, &in.draft_name, &in.target_name, &in.ratios_name};
    static const char *const label[4] = {"tokens", "draft", "target", "ratios"};
    for (int f = 0; f < 4 && !status; f++) {
        if (!arrays[f])
            continue;
        sd_error e;
        if (sd_npy_wrap(&arr[f], arrays[f], dtypes[f], ndims[f], shapes[f], &e)) {
            fprintf(stderr, "simdec: %s: %s\n", label[f], e.msg);
            status = cli_exit_code(e.code == SD_EUSAGE ? SD_EDATA : e.code);
            break;
        }
        *slot[f] = &arr[f];
        *name[f] = label[f];
    }
    char **argv = calloc((size_t)(2 * nopt + 2), sizeof *argv);
    char **own = calloc((size_t)nopt + 1, sizeof *own);
    if (!status && (!argv || !own))
        status = 71;
    int argc = 0;
    if (!status) {
        argv[argc++] = (char *)(uintptr_t) "trace";
        for (int i = 0; i < nopt && !status; i++) {
            size_t n = strlen(names[i]) + 3;
            own[i] = malloc(n);
            if (!own[i]) {
                status = 71;
                break;
            }
            snprintf(own[i], n, "--%s", names[i]);
            argv[argc++] = own[i];
            if (values[i])
                argv[argc++] = (char *)(uintptr_t)values[i];
        }
    }
    json_t *v = NULL;
    if (!status)
        status = cli_trace_with_input(argc, argv, &in, &v);
    if (!status && v) {
        *out = json_dumps(v, JSON_INDENT(2) | JSON_REAL_PRECISION(17));
        if (!*out)
            status = 71;
    }
    json_decref(v);
    for (int i = 0; own && i < nopt; i++)
        free(own[i]);
    free(own);
    free(argv);
    fflush(stderr);
    stderr = se;
    fclose(me);
    *err = ebuf;
    return status;
}

void sd_api_trace_free(void *p)
{
    free(p);
}

int sd_api_model_from_arrays_tol(size_t V, size_t T, size_t draft_steps, size_t target_steps,
                                 const double *init, const double *draft, const double *target, double tol,
                                 double *max_dev, sd_chain **out, char *msg, size_t len)
{
    sd_error e;
    *out = NULL;
    *max_dev = 0.0;
    int rc = SD_OK;
    sd_chain *c = NULL;
    if (T >= 1 && ((draft_steps != 1 && draft_steps != T) || (target_steps != 1 && target_steps != T)))
        rc = sd_error_set(&e, SD_EUSAGE, "model: %zu draft and %zu target steps at horizon %zu; expected 1 or %zu each",
                          draft_steps, target_steps, T, T);
    else if (!(c = sd_chain_alloc(V, T, draft_steps, target_steps, &e)))
        rc = e.code;
    else {
        memcpy(c->init, init, V * sizeof *init);
        memcpy(c->draft, draft, draft_steps * V * V * sizeof *draft);
        memcpy(c->target, target, target_steps * V * V * sizeof *target);
        rc = sd_chain_validate_tol(c, "model", tol, max_dev, &e);
    }
    if (rc) {
        sd_chain_free(c);
        if (msg && len)
            snprintf(msg, len, "%s", e.msg);
        return cli_exit_code(e.code);
    }
    *out = c;
    return 0;
}
