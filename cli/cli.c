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
#include <unistd.h>

#include "../sims/sd_verifier.h"
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

int cli_fail(const sd_error *err)
{
    fflush(stdout);
    fprintf(stderr, "simdec: %s\n", err->msg[0] ? err->msg : sd_status_name(err->code));
    return cli_exit_code(err->code);
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("simdec: ", stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nsimdec: see 'simdec %s%s--help'\n", cmd ? cmd : "", cmd ? " " : "");
    return EX_USAGE_;
}

/* --- numbers ------------------------------------------------------------ */

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
    if (end != s && *end == '\0' && isfinite(d) && d >= 0.0 && d == floor(d) && d <= S_EXACT_INT &&
        !isspace((unsigned char)s[0]) && s[0] != '-' && s[0] != '+') {
        *out = (uint64_t)d;
        return SD_OK;
    }
    return sd_error_set(err, SD_EUSAGE, "%s: expected a whole number >= 0, got '%s'", opt, s);
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
    if (!end || end == s || *end != '\0' || errno == ERANGE || !isfinite(d))
        return sd_error_set(err, SD_EUSAGE, "%s: expected a finite number, got '%s'", opt, s ? s : "");
    if (d < min || d > max)
        return sd_error_set(err, SD_EUSAGE, "%s: %s is out of range; expected %g to %g", opt, s, min, max);
    *out = d;
    return SD_OK;
}

/* Largest list accepted: 10^8 numbers (800 MB). */
#define S_LIST_MAX 100000000u
/* Largest @FILE read: 4 GiB of text. */
#define S_LIST_FILE_MAX ((long)1 << 32)

static int S_read_file(const char *opt, const char *path, char **text, sd_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return sd_error_set(err, SD_EIO, "%s: cannot open '%s': %s", opt, path, strerror(errno));
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (!buf) {
            fclose(f);
            return sd_error_set(err, SD_ENOMEM, "%s: out of memory reading '%s'", opt, path);
        }
        len += fread(buf + len, 1, cap - len - 1, f);
        if (ferror(f)) {
            free(buf);
            fclose(f);
            return sd_error_set(err, SD_EIO, "%s: read error on '%s'", opt, path);
        }
        if (feof(f))
            break;
        if ((long)cap >= S_LIST_FILE_MAX) {
            free(buf);
            fclose(f);
            return sd_error_set(err, SD_ETOOBIG, "%s: '%s' is larger than %ld bytes", opt, path, S_LIST_FILE_MAX);
        }
        char *nb = realloc(buf, cap *= 2);
        if (!nb)
            free(buf);
        buf = nb;
    }
    fclose(f);
    buf[len] = '\0';
    if (memchr(buf, '\0', len))
        return free(buf), sd_error_set(err, SD_EDATA, "%s: '%s' is not text (it contains a NUL byte)", opt, path);
    *text = buf;
    return SD_OK;
}

int cli_parse_list(const char *opt, const char *s, double **out, size_t *n, sd_error *err)
{
    char *text = NULL;
    const char *src = s, *what = "list";
    char label[300];
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
        if (end == c || (*end && *end != ',' && !isspace((unsigned char)*end))) {
            const char *e = c;
            while (*e && *e != ',' && !isspace((unsigned char)*e))
                e++;
            rc = sd_error_set(err, SD_EUSAGE, "%s: entry %zu '%.*s' is not a number", label, len,
                              (int)(e - c > 40 ? 40 : e - c), c);
            break;
        }
        if (errno == ERANGE && fabs(d) > 1.0) {
            rc = sd_error_set(err, SD_EUSAGE, "%s: entry %zu '%.*s' overflows a double", label, len,
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
                rc = sd_error_set(err, SD_EUSAGE, "%s: empty entry after entry %zu", label, len - 1);
                break;
            }
        }
    }
    free(text);
    if (!rc && len == 0)
        rc = sd_error_set(err, SD_EUSAGE, "%s: expected a list of probabilities, got none", label);
    if (!rc) {
        double sum;
        long bad = sd_dist_check(x, len, 1e-9, &sum);
        if (bad >= 0 && (size_t)bad < len)
            rc = sd_error_set(err, SD_EUSAGE, "%s: entry %ld is %g; expected a finite probability >= 0",
                              label, bad, x[bad]);
        else if (bad >= 0)
            rc = sd_error_set(err, SD_EUSAGE, "%s: the entries sum to %.12g; expected 1 (within 1e-9)",
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
