/* cli_opts.c — option parsing helpers of the command line: getopt with
 * "did you mean", strict numbers, probability lists (cli_opts.h). */
#include "cli_opts.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../sims/engine/sd_params.h"
#include "../sims/engine/sd_sim.h"
#include "../src/sd_dist.h"
#include "cli_exit.h"
#include "suggest.h"

/* The option table of the getopt loop running now (cli_getopt), for "did
 * you mean"; the abbreviated option it refused, if any. */
static const struct option *S_opts;
static const char *S_abbrev, *S_abbrev_of;
/* The long option cli_getopt returned last, as the command line spelled it
 * ("--model-alpha=2"), or NULL. */
static const char *S_tok;

int cli_getopt(int argc, char **argv, const char *shortopts, const struct option *opts)
{
    S_opts = opts;
    S_abbrev = S_abbrev_of = S_tok = NULL;
    int idx = -1;
    int c = getopt_long(argc, argv, shortopts, opts, &idx);
    if (c == -1)
        S_opts = NULL;
    /* A long option must be spelled out: getopt_long would take a unique
     * prefix (--pair for --paired), which the scans of argv that run before
     * it (sweep lists, --algo, --paired, --samples) do not see. */
    if (c != -1 && c != '?' && c != ':' && idx >= 0) {
        const char *tok = optarg && optind >= 2 && optarg == argv[optind - 1] ? argv[optind - 2] : argv[optind - 1];
        S_tok = tok;
        if (strncmp(tok, "--", 2) == 0 && strcspn(tok + 2, "=") != strlen(opts[idx].name)) {
            S_abbrev = tok;
            S_abbrev_of = opts[idx].name;
            return '?';
        }
    }
    return c;
}

int cli_option_error(const char *cmd, int c, char **argv)
{
    if (c == ':')
        return cli_usage_error(cmd, "%s needs a value", argv[optind - 1]);
    const char *a = S_abbrev ? S_abbrev : argv[optind - 1];
    char name[64], hint[160] = "";
    if (S_opts && strncmp(a, "--", 2) == 0) {
        size_t len = strcspn(a + 2, "=");
        snprintf(name, sizeof name, "%.*s", (int)(len < 63 ? len : 63), a + 2);
        /* getopt_long takes a unique prefix of an option and refuses one
         * that several options start with: say which. */
        char list[512] = "";
        size_t used = 0, n = 0;
        for (const struct option *o = S_opts; len > 0 && o->name; o++)
            if (strncmp(o->name, a + 2, len) == 0 && used < sizeof list) {
                int w = snprintf(list + used, sizeof list - used, "%s--%s", n++ ? ", " : "", o->name);
                used += w > 0 ? (size_t)w : 0;
            }
        if (n >= 2)
            return cli_usage_error(cmd, "ambiguous option '%s': it abbreviates %s", a, list);
        cli_suggest sg;
        cli_suggest_init(&sg, name);
        for (const struct option *o = S_opts; o->name; o++)
            cli_suggest_add(&sg, o->name);
        cli_suggest_text(&sg, "--", hint, sizeof hint);
    }
    if (S_abbrev_of)
        return cli_usage_error(cmd, "'%s': options are spelled out; did you mean '--%s'?", a, S_abbrev_of);
    return cli_usage_error(cmd, "unknown option '%s'%s", a, hint);
}

const char *cli_fields_last(const cli_field *fields, size_t n, const char *name)
{
    const char *v = NULL;
    for (size_t i = 0; i < n; i++)
        if (strcmp(fields[i].name, name) == 0)
            v = fields[i].value;
    return v;
}

int cli_fields_has(const cli_field *fields, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(fields[i].name, name) == 0)
            return 1;
    return 0;
}

const char *cli_getopt_spelled(void)
{
    return S_tok;
}

/* --- numbers ------------------------------------------------------------ */

int cli_parse_trials(const char *s, uint64_t *out, sd_error *err)
{
    const uint64_t max = SD_SIM_MAX_BLOCKS * SD_SIM_BLOCK;
    uint64_t v = 0;
    if (sd_parse_u64("--trials", s, &v, NULL) || v == 0 || v > max)
        return sd_error_set(err, SD_EUSAGE, "--trials: expected a whole number from 1 to %llu, got '%s'",
                            (unsigned long long)max, s ? s : "");
    *out = v;
    return SD_OK;
}

int cli_check_path(const char *opt, const char *path, sd_error *err)
{
    if (!path || !*path)
        return sd_error_set(err, SD_EUSAGE, "%s: expected a file name, got ''", opt);
    return SD_OK;
}

int cli_parse_seed(const char *s, uint64_t *out, sd_error *err)
{
    uint64_t v;
    int rc = sd_parse_u64("--seed", s, &v, err);
    if (!rc && v > (uint64_t)INT64_MAX)
        rc = sd_error_set(err, SD_EUSAGE, "--seed: %s is out of range; expected 0 to %lld (echoed in JSON as a "
                                          "signed 64-bit integer)", s, (long long)INT64_MAX);
    if (!rc)
        *out = v;
    return rc;
}

/* Largest list accepted: 10^8 numbers (800 MB). */
#define S_LIST_MAX 100000000u
/* Largest @FILE read: 1 GiB of text (10^8 numbers of 10 characters). */
#define S_LIST_FILE_MAX ((size_t)1 << 30)

static int S_read_file(const char *opt, const char *path, char **text, sd_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return sd_error_set(err, SD_EIO, "%s: cannot open '%s': %s", opt, path, strerror(errno));
    /* Read in chunks, refusing binary input (a NUL byte) as soon as it is
     * seen and text beyond S_LIST_FILE_MAX before reading further: an
     * @/dev/zero must not fill memory before it is refused. */
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    int rc = SD_OK;
    for (;;) {
        if (!buf) {
            rc = sd_error_set(err, SD_ENOMEM, "%s: out of memory reading '%s'", opt, path);
            break;
        }
        size_t got = fread(buf + len, 1, cap - len - 1, f);
        if (memchr(buf + len, '\0', got)) {
            rc = sd_error_set(err, SD_EDATA, "%s: '%s' is not text (it contains a NUL byte)", opt, path);
            break;
        }
        len += got;
        if (ferror(f)) {
            rc = sd_error_set(err, SD_EIO, "%s: read error on '%s'", opt, path);
            break;
        }
        if (feof(f))
            break;
        if (len + 1 < cap)
            continue;
        if (cap >= S_LIST_FILE_MAX) {
            rc = sd_error_set(err, SD_ETOOBIG, "%s: '%s' is larger than %zu bytes", opt, path,
                              (size_t)S_LIST_FILE_MAX);
            break;
        }
        char *nb = realloc(buf, cap *= 2);
        if (!nb)
            free(buf);
        buf = nb;
    }
    fclose(f);
    if (rc) {
        free(buf);
        return rc;
    }
    buf[len] = '\0';
    *text = buf;
    return SD_OK;
}

int cli_parse_list(const char *opt, const char *s, double **out, size_t *n, sd_error *err)
{
    double sum;
    return cli_parse_list_tol(opt, s, 1e-9, out, n, &sum, err);
}

int cli_parse_list_tol(const char *opt, const char *s, double tol, double **out, size_t *n, double *sum_out,
                       sd_error *err)
{
    char *text = NULL;
    const char *src = s, *what = "list";
    char label[300];
    /* Bad contents of an @FILE are bad data (65); of an inline list, a bad
     * option value (64). */
    sd_status bad = s[0] == '@' ? SD_EDATA : SD_EUSAGE;
    if (s[0] == '@') {
        int rc = S_read_file(opt, s + 1, &text, err);
        if (rc)
            return rc;
        src = text;
        what = s + 1;
    }
    snprintf(label, sizeof label, "%s %s", opt, what);
    size_t cap = 16, len = 0;
    double *x = malloc(cap * sizeof *x);
    int rc = SD_OK;
    const char *c = src;
    for (;;) {
        while (*c && (isspace((unsigned char)*c)))
            c++;
        if (!*c)
            break;
        if (len == S_LIST_MAX) {
            rc = sd_error_set(err, SD_ETOOBIG, "%s: more than %u numbers", label, S_LIST_MAX);
            break;
        }
        char *end;
        errno = 0;
        double d = strtod(c, &end);
        if (end == c || !sd_parse_is_decimal(c, end) || (*end && *end != ',' && !isspace((unsigned char)*end))) {
            const char *e = c;
            while (*e && *e != ',' && !isspace((unsigned char)*e))
                e++;
            rc = sd_error_set(err, bad, "%s: entry %zu '%.*s' is not a number", label, len,
                              (int)(e - c > 40 ? 40 : e - c), c);
            break;
        }
        if (errno == ERANGE && fabs(d) > 1.0) {
            rc = sd_error_set(err, bad, "%s: entry %zu '%.*s' overflows a double", label, len,
                              (int)(end - c > 40 ? 40 : end - c), c);
            break;
        }
        if (len == cap) {
            double *nx = realloc(x, (cap *= 2) * sizeof *x);
            if (!nx) {
                rc = sd_error_set(err, SD_ENOMEM, "%s: out of memory", label);
                break;
            }
            x = nx;
        }
        if (!x) {
            rc = sd_error_set(err, SD_ENOMEM, "%s: out of memory", label);
            break;
        }
        x[len++] = d;
        c = end;
        while (*c && isspace((unsigned char)*c))
            c++;
        if (*c == ',') {
            c++;
            const char *look = c;
            while (*look && isspace((unsigned char)*look))
                look++;
            if (!*look || *look == ',') {
                rc = sd_error_set(err, bad, "%s: empty entry after entry %zu", label, len - 1);
                break;
            }
        }
    }
    free(text);
    if (!rc && len == 0)
        rc = sd_error_set(err, bad, "%s: expected a list of probabilities, got none", label);
    if (!rc) {
        double sum;
        long at = sd_dist_check(x, len, tol, &sum);
        *sum_out = sum;
        if (at >= 0 && (size_t)at < len)
            rc = sd_error_set(err, bad, "%s: entry %ld is %g; expected a finite probability >= 0",
                              label, at, x[at]);
        else if (at >= 0)
            rc = sd_error_set(err, bad, "%s: the entries sum to %.12g; expected 1 (within %g)",
                              label, sum, tol);
        else
            sd_dist_normalise(x, len);
    }
    if (rc) {
        free(x);
        return rc;
    }
    *out = x;
    *n = len;
    return SD_OK;
}

/* --- lists of names ------------------------------------------------------ */
const char *cli_verifier_names(char *buf, size_t len, const char *sep, int (*pick)(const sd_verifier_type *))
{
    const sd_verifier_type *vt;
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; (vt = sd_verifier_at(i)) != NULL && used < len; i++)
        if (!(vt->flags & SD_VERIFIER_CONTROL) && pick(vt)) {
            int w = snprintf(buf + used, len - used, "%s%s", used ? sep : "", vt->name);
            used += w > 0 ? (size_t)w : 0;
        }
    return buf;
}

/* --- one pass over a command line ------------------------------------------------ */

int cli_args_scan(int argc, char **argv, cli_args *a)
{
    memset(a, 0, sizeof *a);
    a->argc = argc;
    a->argv = argv;
    int end = 1;
    while (end < argc && strcmp(argv[end], "--") != 0)
        end++;
    if (end > 1 && !(a->opt = calloc((size_t)(end - 1), sizeof *a->opt)))
        return SD_ENOMEM;
    for (int i = 1; i < end; i++) {
        const char *s = argv[i];
        if (strncmp(s, "--", 2) != 0 || s[2] == '\0')
            continue;
        cli_arg *o = &a->opt[a->n++];
        o->at = i;
        const char *eq = strchr(s, '=');
        size_t nl = eq ? (size_t)(eq - s - 2) : strlen(s + 2);
        if (nl < sizeof o->name) {
            memcpy(o->name, s + 2, nl);
            o->name[nl] = '\0';
        }
        o->joined = eq ? eq + 1 : NULL;
    }
    return SD_OK;
}

void cli_args_free(cli_args *a)
{
    free(a->opt);
    memset(a, 0, sizeof *a);
}

const char *cli_args_value(const cli_args *a, size_t i, int *val_at)
{
    const cli_arg *o = &a->opt[i];
    int at = o->joined ? o->at : o->at + 1 < a->argc ? o->at + 1 : -1;
    if (val_at)
        *val_at = at;
    return o->joined ? o->joined : at >= 0 ? a->argv[at] : NULL;
}

const char *cli_args_list_value(const cli_args *a, size_t i, int *val_at)
{
    const char *v = cli_args_value(a, i, val_at);
    if (v && !a->opt[i].joined && strncmp(v, "--", 2) == 0)
        v = NULL;
    if (!v && val_at)
        *val_at = -1;
    return v;
}

const char *cli_args_last(const cli_args *a, const char *name, int *at, int *val_at)
{
    const char *v = NULL;
    for (size_t i = 0; i < a->n; i++) {
        int va;
        const char *x;
        if (strcmp(a->opt[i].name, name) != 0 || !(x = cli_args_value(a, i, &va)))
            continue;
        v = x;
        if (at)
            *at = a->opt[i].at;
        if (val_at)
            *val_at = va;
    }
    return v;
}

int cli_args_has(const cli_args *a, const char *name)
{
    for (size_t i = 0; i < a->n; i++)
        if (strcmp(a->opt[i].name, name) == 0)
            return 1;
    return 0;
}

/* --- named fields instead of a command line ---------------------------------------- */

/* Why cli_fields_apply last returned CLI_NOT_A_FIELD (cli_fields_refused). */
static char S_refused[320], S_refused_name[64];
static int S_refused_unknown;

static int S_refuse(const struct option *opts, const cli_field *f, const struct option *o)
{
    char hint[160] = "";
    snprintf(S_refused_name, sizeof S_refused_name, "%s", f->name);
    S_refused_unknown = o && !o->name;
    if (!o) {
        snprintf(S_refused, sizeof S_refused, "'%s' is not an option here", f->name);
    } else if (!o->name) {
        cli_suggest sg;
        cli_suggest_init(&sg, f->name);
        for (const struct option *p = opts; p->name; p++)
            cli_suggest_add(&sg, p->name);
        cli_suggest_text(&sg, "--", hint, sizeof hint);
        snprintf(S_refused, sizeof S_refused, "unknown option '--%s'%s", f->name, hint);
    } else if (o->has_arg != required_argument && f->value) {
        snprintf(S_refused, sizeof S_refused, "'%s' is a flag; it takes no value (got '%s')", f->name, f->value);
    } else {
        snprintf(S_refused, sizeof S_refused, "'%s' needs a value", f->name);
    }
    return CLI_NOT_A_FIELD;
}

int cli_fields_apply(const struct option *opts, const cli_field *fields, size_t n, const int *refuse,
                     cli_field_fn fn, void *ctx)
{
    for (size_t i = 0; i < n; i++) {
        const struct option *o = opts;
        while (o->name && strcmp(o->name, fields[i].name) != 0)
            o++;
        if (!o->name || (o->has_arg == required_argument) != (fields[i].value != NULL))
            return S_refuse(opts, &fields[i], o);
        for (const int *r = refuse; *r; r++)
            if (*r == o->val)
                return S_refuse(opts, &fields[i], NULL);
        int status = fn(ctx, o->val, fields[i].value);
        if (status == 1) { /* not the command's after all: as an unknown name */
            S_refuse(opts, &fields[i], NULL);
            S_refused_unknown = 1;
            return CLI_NOT_A_FIELD;
        }
        if (status >= 0)
            return status;
    }
    return -1;
}

int cli_fields_refused(const char *cmd, const sd_verifier_type *vt)
{
    /* A parameter of another verifier: say whose it is (cli_unknown_option's rule). */
    const sd_verifier_type *v;
    for (size_t i = 0; vt && S_refused_unknown && (v = sd_verifier_at(i)) != NULL; i++)
        if (sd_params_decl(v, S_refused_name, NULL)) {
            char names[256];
            sd_params_names(vt, names, sizeof names);
            return cli_usage_error(cmd, "--%s does not apply to --algo %s (it reads: %s)", S_refused_name, vt->name,
                                   names);
        }
    return cli_usage_error(cmd, "%s", S_refused[0] ? S_refused : "a field is not an option here");
}
