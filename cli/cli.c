/* cli.c — shared helpers of the command-line front end (cli.h). */
#include "cli.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../sims/sd_sim.h"
#include "../src/sd_dist.h"

int cli_exit_code(sd_status code)
{
    switch (code) {
    case SD_OK: return EX_OK_;
    case SD_EUSAGE: return EX_USAGE_;
    case SD_EDATA: return EX_DATAERR_;
    case SD_ETOOBIG: return EX_DATAERR_;
    case SD_EIO: return EX_NOINPUT_;
    case SD_ENOMEM: return EX_OSERR_;
    case SD_EOUTPUT: return EX_CANTCREAT_;
    case SD_ESOLVER: return EX_SOFTWARE_;
    case SD_EINTERNAL: return EX_SOFTWARE_;
    }
    return EX_SOFTWARE_;
}

/* Writes a message that may quote the user's input with control bytes
 * (terminal escape sequences, NULs of a binary file) shown as \xNN. */
static void S_put_clean(const char *msg)
{
    for (const unsigned char *c = (const unsigned char *)msg; *c; c++) {
        if ((*c < 0x20 && *c != '\n' && *c != '\t') || *c == 0x7f)
            fprintf(stderr, "\\x%02x", *c);
        else
            fputc(*c, stderr);
    }
}

int cli_fail(const sd_error *err)
{
    fflush(stdout);
    fputs("simdec: ", stderr);
    S_put_clean(err->msg[0] ? err->msg : sd_status_name(err->code));
    fputc('\n', stderr);
    return cli_exit_code(err->code);
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
    char msg[SD_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fflush(stdout);
    fputs("simdec: ", stderr);
    S_put_clean(msg);
    fprintf(stderr, "\nsimdec: see 'simdec %s%s--help'\n", cmd ? cmd : "", cmd ? " " : "");
    return EX_USAGE_;
}

int cli_option_error(const char *cmd, int c, char **argv)
{
    if (c == ':')
        return cli_usage_error(cmd, "%s needs a value", argv[optind - 1]);
    return cli_usage_error(cmd, "unknown option '%s'", argv[optind - 1]);
}

/* --- numbers ------------------------------------------------------------ */

/* 1 if [s, end) holds only the characters of a decimal number: strtod also
 * reads hexadecimal ("0x10"), "inf" and "nan", which simdec refuses. */
static int S_decimal(const char *s, const char *end)
{
    for (; s < end; s++)
        if (!strchr("0123456789+-.eE", *s) || !*s)
            return 0;
    return 1;
}

/* 2^53: every whole number up to here is exact as a double. */
#define S_EXACT_INT 9007199254740992.0

int cli_parse_u64(const char *opt, const char *s, uint64_t *out, sd_error *err)
{
    if (!s || !*s)
        return sd_error_set(err, SD_EUSAGE, "%s: expected a whole number, got an empty value", opt);
    int digits = 1;
    for (const char *c = s; *c; c++)
        if (!isdigit((unsigned char)*c))
            digits = 0;
    if (digits) {
        errno = 0;
        unsigned long long v = strtoull(s, NULL, 10);
        if (errno == ERANGE)
            return sd_error_set(err, SD_EUSAGE, "%s: '%s' is too large (at most %llu)", opt, s, ULLONG_MAX);
        *out = (uint64_t)v;
        return SD_OK;
    }
    /* Also accept a whole number in scientific notation ("1e6"). */
    char *end;
    double d = strtod(s, &end);
    if (end != s && *end == '\0' && S_decimal(s, end) && isfinite(d) && d >= 0.0 && d == floor(d) &&
        d <= S_EXACT_INT &&
        !isspace((unsigned char)s[0]) && s[0] != '-' && s[0] != '+') {
        *out = (uint64_t)d;
        return SD_OK;
    }
    return sd_error_set(err, SD_EUSAGE, "%s: expected a whole number >= 0, got '%s'", opt, s);
}

int cli_parse_trials(const char *s, uint64_t *out, sd_error *err)
{
    const uint64_t max = SD_SIM_MAX_BLOCKS * SD_SIM_BLOCK;
    uint64_t v = 0;
    if (cli_parse_u64("--trials", s, &v, NULL) || v == 0 || v > max)
        return sd_error_set(err, SD_EUSAGE, "--trials: expected a whole number from 1 to %llu, got '%s'",
                            (unsigned long long)max, s ? s : "");
    *out = v;
    return SD_OK;
}

int cli_parse_size(const char *opt, const char *s, size_t min, size_t max,
                   size_t *out, sd_error *err)
{
    uint64_t v = 0;
    if (cli_parse_u64(opt, s, &v, NULL) || v < min || v > max)
        return sd_error_set(err, SD_EUSAGE, "%s: expected a whole number from %zu to %zu, got '%s'",
                            opt, min, max, s ? s : "");
    *out = (size_t)v;
    return SD_OK;
}

int cli_parse_double(const char *opt, const char *s, double min, double max,
                     double *out, sd_error *err)
{
    char *end = NULL;
    errno = 0;
    double d = (s && *s && !isspace((unsigned char)s[0])) ? strtod(s, &end) : NAN;
    if (!end || end == s || *end != '\0' || !S_decimal(s, end))
        return sd_error_set(err, SD_EUSAGE, "%s: expected a finite decimal number, got '%s'", opt, s ? s : "");
    if (!isfinite(d) || (errno == ERANGE && fabs(d) > 1.0))
        return sd_error_set(err, SD_EUSAGE, "%s: '%s' overflows a double", opt, s);
    if (errno == ERANGE)
        return sd_error_set(err, SD_EUSAGE, "%s: '%s' is too small to represent (it underflows to %g)",
                            opt, s, d);
    if (d < min || d > max)
        return sd_error_set(err, SD_EUSAGE, "%s: %s is out of range; expected %g to %g", opt, s, min, max);
    *out = d;
    return SD_OK;
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
        if (end == c || !S_decimal(c, end) || (*end && *end != ',' && !isspace((unsigned char)*end))) {
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
        long at = sd_dist_check(x, len, 1e-9, &sum);
        if (at >= 0 && (size_t)at < len)
            rc = sd_error_set(err, bad, "%s: entry %ld is %g; expected a finite probability >= 0",
                              label, at, x[at]);
        else if (at >= 0)
            rc = sd_error_set(err, bad, "%s: the entries sum to %.12g; expected 1 (within 1e-9)",
                              label, sum);
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

/* --- model options ------------------------------------------------------ */

const char cli_model_help[] =
    "Model (default: a generated chain, V=7, T=50, model-seed 10):\n"
    "  --model FILE        a simdec-chain-1 JSON model\n"
    "  --V N               vocabulary of the generated chain (default 7)\n"
    "  --T N               horizon; with --model, use the file's first N steps\n"
    "  --model-seed S      seed of the generated chain (default 10)\n"
    "  --alpha A           Dirichlet concentration of generated rows (default 1);\n"
    "                      also --model-alpha A (check uses --alpha for its level)\n"
    "  --mix M             target = (1-M) draft + M fresh row (default 0.5)\n"
    "  --p LIST --q LIST   a single-token problem: draft p and target q, i.i.d. over\n"
    "                      the horizon (--T, default 1); LIST is comma-separated\n"
    "                      numbers or @FILE\n";

void cli_model_init(cli_model_opts *mo)
{
    memset(mo, 0, sizeof *mo);
    sd_gen_defaults(&mo->gen);
}

void cli_model_release(cli_model_opts *mo)
{
    free(mo->p);
    free(mo->q);
    mo->p = mo->q = NULL;
}

int cli_model_option(cli_model_opts *mo, int c, const char *arg, sd_error *err)
{
    int rc = SD_OK;
    switch (c) {
    case CLI_OPT_MODEL: mo->file = arg; break;
    case CLI_OPT_V: rc = cli_parse_size("--V", arg, 1, 1u << 20, &mo->gen.V, err); mo->gen_given = 1; break;
    case CLI_OPT_T: rc = cli_parse_size("--T", arg, 1, 1u << 24, &mo->gen.T, err); mo->T_given = 1; break;
    case CLI_OPT_MODEL_SEED: {
        uint64_t s;
        rc = cli_parse_u64("--model-seed", arg, &s, err);
        if (!rc && s > 0xffffffffu)
            rc = sd_error_set(err, SD_EUSAGE, "--model-seed: %s is out of range; expected 0 to 4294967295", arg);
        mo->gen.seed = (unsigned long)s;
        mo->gen_given = 1;
        break;
    }
    case CLI_OPT_ALPHA: rc = cli_parse_double("--alpha", arg, 1e-300, 1e300, &mo->gen.alpha, err); mo->gen_given = 1; break;
    case CLI_OPT_MIX: rc = cli_parse_double("--mix", arg, 0.0, 1.0, &mo->gen.mix, err); mo->gen_given = 1; break;
    case CLI_OPT_P:
        free(mo->p);
        mo->p = NULL;
        rc = cli_parse_list("--p", arg, &mo->p, &mo->pV, err);
        break;
    case CLI_OPT_Q:
        free(mo->q);
        mo->q = NULL;
        rc = cli_parse_list("--q", arg, &mo->q, &mo->qV, err);
        break;
    default: return 0;
    }
    return rc ? -1 : 1;
}

sd_chain *cli_model_build(const cli_model_opts *mo, sd_error *err)
{
    sd_chain *c = NULL;
    if ((mo->p || mo->q) && mo->file) {
        sd_error_set(err, SD_EUSAGE, "--p/--q and --model are alternatives; give one");
        return NULL;
    }
    if (mo->p || mo->q) {
        if (!mo->p || !mo->q) {
            sd_error_set(err, SD_EUSAGE, "a single-token problem needs both --p and --q");
            return NULL;
        }
        if (mo->pV != mo->qV) {
            sd_error_set(err, SD_EUSAGE, "--p has %zu entries but --q has %zu; expected the same vocabulary",
                         mo->pV, mo->qV);
            return NULL;
        }
        if (mo->gen_given) {
            sd_error_set(err, SD_EUSAGE, "--V/--model-seed/--alpha/--mix apply to generated models, not to --p/--q");
            return NULL;
        }
        return sd_chain_from_pq(mo->p, mo->q, mo->pV, mo->T_given ? mo->gen.T : 1, err);
    }
    if (mo->file) {
        if (mo->gen_given) {
            sd_error_set(err, SD_EUSAGE, "--V/--model-seed/--alpha/--mix apply to generated models, not to --model");
            return NULL;
        }
        if (sd_chain_load(mo->file, &c, err))
            return NULL;
        if (mo->T_given && sd_chain_truncate(c, mo->gen.T, err)) {
            sd_chain_free(c);
            return NULL;
        }
        return c;
    }
    return sd_chain_generate(&mo->gen, err);
}

int cli_context_check(const sd_chain *c, size_t step, size_t state, sd_error *err)
{
    if (step < 1 || step > c->T)
        return sd_error_set(err, SD_EUSAGE, "--step %zu: expected a step in 1..%zu (the horizon)", step, c->T);
    if (state >= c->V)
        return sd_error_set(err, SD_EUSAGE, "--state %zu: expected a token in 0..%zu", state, c->V - 1);
    return SD_OK;
}

void cli_model_describe(const cli_model_opts *mo, const sd_chain *c, json_t *o)
{
    json_t *m = json_object();
    if (mo->p) {
        json_object_set_new(m, "source", json_string("pq"));
    } else if (mo->file) {
        json_object_set_new(m, "source", json_string("file"));
        json_object_set_new(m, "file", json_string(mo->file));
    } else {
        json_object_set_new(m, "source", json_string("generated"));
        json_object_set_new(m, "model_seed", json_integer((json_int_t)mo->gen.seed));
        json_object_set_new(m, "alpha", json_real(mo->gen.alpha));
        json_object_set_new(m, "mix", json_real(mo->gen.mix));
    }
    json_object_set_new(m, "vocab", json_integer((json_int_t)c->V));
    json_object_set_new(m, "horizon", json_integer((json_int_t)c->T));
    json_object_set_new(o, "model", m);
}

/* --- verifier parameters ------------------------------------------------ */

const char cli_param_help[] =
    "Verifier parameters (each verifier reads only its own; see 'simdec run --list'):\n"
    "  --gamma G           draft tokens per iteration (default: the rest of the horizon)\n"
    "  --M m               batch: number of drafts (default 2)\n"
    "  --k k               rrs, spectr: number of drafts (default 2)\n"
    "  --eps E             biased: acceptance b = min(1, (q+E)/p) (default 0)\n"
    "  --residual opt|uno  biased: residual after a rejection (default opt)\n"
    "  --tp E, --fp E      sprinter: cheap verifier's true/false positive rates\n"
    "                      (defaults 0.5, 0)\n"
    "  --plan kseq|otm     spectr: k-Seq selection or the OTM LP plan (default kseq)\n";

static const char *const S_param_names[] = {"gamma", "M", "k", "eps", "residual", "tp", "fp", "plan"};

int cli_param_option(cli_params *cp, int c, const char *arg, sd_error *err)
{
    sd_params *p = cp->par;
    int rc = SD_OK;
    switch (c) {
    case CLI_OPT_GAMMA: rc = cli_parse_size("--gamma", arg, 1, 1u << 24, &p->gamma, err); break;
    case CLI_OPT_M: rc = cli_parse_size("--M", arg, 1, 1u << 20, &p->M, err); break;
    case CLI_OPT_K: rc = cli_parse_size("--k", arg, 1, 1u << 20, &p->k, err); break;
    case CLI_OPT_EPS: rc = cli_parse_double("--eps", arg, 0.0, 1e300, &p->eps, err); break;
    case CLI_OPT_TP: rc = cli_parse_double("--tp", arg, 0.0, 1.0, &p->tp, err); break;
    case CLI_OPT_FP: rc = cli_parse_double("--fp", arg, 0.0, 1.0, &p->fp, err); break;
    case CLI_OPT_RESIDUAL:
        if (strcmp(arg, "opt") == 0)
            p->residual = SD_RESIDUAL_OPT;
        else if (strcmp(arg, "uno") == 0)
            p->residual = SD_RESIDUAL_UNO;
        else
            rc = sd_error_set(err, SD_EUSAGE, "--residual: expected 'opt' or 'uno', got '%s'", arg);
        break;
    case CLI_OPT_PLAN:
        if (strcmp(arg, "kseq") == 0)
            p->plan = SD_PLAN_KSEQ;
        else if (strcmp(arg, "otm") == 0)
            p->plan = SD_PLAN_OTM;
        else
            rc = sd_error_set(err, SD_EUSAGE, "--plan: expected 'kseq' or 'otm', got '%s'", arg);
        break;
    default: return 0;
    }
    cp->given |= 1u << (c - CLI_OPT_GAMMA);
    return rc ? -1 : 1;
}

int cli_shared_option(cli_model_opts *mo, cli_params *cp, int c, const char *arg, sd_error *err)
{
    int r = cli_model_option(mo, c, arg, err);
    if (r == 0 && cp)
        r = cli_param_option(cp, c, arg, err);
    return r;
}

int cli_param_check(const cli_params *cp, const sd_verifier_type *vt, sd_error *err)
{
    for (unsigned i = 0; i < sizeof S_param_names / sizeof *S_param_names; i++)
        if ((cp->given & (1u << i)) && !sd_verifier_uses(vt, S_param_names[i]))
            return sd_error_set(err, SD_EUSAGE, "--%s does not apply to --algo %s (it reads: %s)",
                                S_param_names[i], vt->name, vt->params[0] ? vt->params : "nothing");
    return SD_OK;
}

void cli_param_describe(const cli_params *cp, const sd_verifier_type *vt, json_t *o)
{
    const sd_params *p = cp->par;
    json_t *j = json_object();
    if (sd_verifier_uses(vt, "gamma"))
        json_object_set_new(j, "gamma", p->gamma ? json_integer((json_int_t)p->gamma) : json_null());
    if (sd_verifier_uses(vt, "M"))
        json_object_set_new(j, "M", json_integer((json_int_t)p->M));
    if (sd_verifier_uses(vt, "k"))
        json_object_set_new(j, "k", json_integer((json_int_t)p->k));
    if (sd_verifier_uses(vt, "eps"))
        json_object_set_new(j, "eps", json_real(p->eps));
    if (sd_verifier_uses(vt, "residual"))
        json_object_set_new(j, "residual", json_string(p->residual == SD_RESIDUAL_OPT ? "opt" : "uno"));
    if (sd_verifier_uses(vt, "tp"))
        json_object_set_new(j, "tp", json_real(p->tp));
    if (sd_verifier_uses(vt, "fp"))
        json_object_set_new(j, "fp", json_real(p->fp));
    if (sd_verifier_uses(vt, "plan"))
        json_object_set_new(j, "plan", json_string(p->plan == SD_PLAN_OTM ? "otm" : "kseq"));
    json_object_set_new(o, "params", j);
}

/* --- output ------------------------------------------------------------- */

int cli_print_json(json_t *v)
{
    int rc = json_dumpf(v, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(17));
    json_decref(v);
    fputc('\n', stdout);
    if (rc != 0 || fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "simdec: cannot write to standard output\n");
        return EX_CANTCREAT_;
    }
    return EX_OK_;
}

json_t *cli_json_real(double x)
{
    return isfinite(x) ? json_real(x) : json_null();
}

int cli_write_atomic(const char *path, cli_writer_fn fn, void *ctx, sd_error *err)
{
    size_t len = strlen(path) + 16;
    char *tmp = malloc(len);
    if (!tmp)
        return sd_error_set(err, SD_ENOMEM, "out of memory");
    snprintf(tmp, len, "%s.tmpXXXXXX", path);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        int rc = sd_error_set(err, SD_EOUTPUT, "%s: cannot create: %s", path, strerror(errno));
        free(tmp);
        return rc;
    }
    FILE *f = fdopen(fd, "w");
    int rc = f ? fn(f, ctx, err) : sd_error_set(err, SD_EOUTPUT, "%s: cannot write: %s", path, strerror(errno));
    if (f && fclose(f) != 0 && !rc)
        rc = sd_error_set(err, SD_EOUTPUT, "%s: cannot write: %s", path, strerror(errno));
    if (!f)
        close(fd);
    if (!rc && rename(tmp, path) != 0)
        rc = sd_error_set(err, SD_EOUTPUT, "%s: cannot write: %s", path, strerror(errno));
    if (rc)
        unlink(tmp);
    free(tmp);
    return rc;
}

int cli_stderr_is_tty(void)
{
    return isatty(fileno(stderr));
}

void cli_progress_show(void *ctx, uint64_t done, uint64_t total)
{
    cli_progress *pr = ctx;
    long now = (long)time(NULL);
    if (pr->shown && now == pr->last && done < total)
        return;
    pr->last = now;
    pr->shown = 1;
    fprintf(stderr, "\rsimdec: %llu / %llu trials (%.0f%%)", (unsigned long long)done,
            (unsigned long long)total, 100.0 * (double)done / (double)total);
    fflush(stderr);
}

void cli_progress_end(cli_progress *pr)
{
    if (pr->shown)
        fputs("\r\033[K", stderr);
    pr->shown = 0;
}
