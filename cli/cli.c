/* cli.c — shared helpers of the command-line front end (cli.h). */
#include "cli.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../sims/engine/sd_params.h"
#include "../sims/engine/sd_plugin.h"
#include "../sims/engine/sd_sim.h"
#include "../src/sd_dist.h"
#include "../src/sd_mem.h"
#include "../src/sd_parse.h"
#include "../src/sd_sha256.h"
#include "suggest.h"

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
    /* A failure whose error says "success" (a callee returned a status but
     * set none) is still a failure: exit 70, never 0. */
    sd_status code = err->code != SD_OK ? err->code : SD_EINTERNAL;
    S_put_clean(err->msg[0] ? err->msg : err->code != SD_OK ? sd_status_name(code) : "failed without an error message");
    fputc('\n', stderr);
    return cli_exit_code(code);
}

double cli_gap_in_se(double a, double b, double se)
{
    double tiny = 64 * DBL_EPSILON * fmax(1.0, fmax(fabs(a), fabs(b)));
    double gap = fabs(a - b) <= tiny ? 0.0 : a - b;
    return se > tiny ? gap / se : gap == 0.0 ? 0.0 : NAN;
}

int cli_out_of_memory(void)
{
    sd_error err;
    sd_error_set(&err, SD_ENOMEM, "out of memory");
    return cli_fail(&err);
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

int cli_set_format(const char *cmd, cli_format *fmt, cli_format want)
{
    static const char *const names[] = {"table", "--json", "--csv"};
    if (*fmt != CLI_FMT_TABLE && *fmt != want)
        return cli_usage_error(cmd, "%s and %s are alternatives; give one", names[*fmt], names[want]);
    *fmt = want;
    return -1;
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

static int S_parse_list(const char *opt, const char *s, double tol, double **out, size_t *n, double *sum_out,
                        sd_error *err);

int cli_parse_list(const char *opt, const char *s, double **out, size_t *n, sd_error *err)
{
    double sum;
    return S_parse_list(opt, s, 1e-9, out, n, &sum, err);
}

/* cli_parse_list with row tolerance tol; *sum_out gets the sum before
 * renormalising. */
static int S_parse_list(const char *opt, const char *s, double tol, double **out, size_t *n, double *sum_out,
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
            rc = sd_error_set(err, bad, "%s: the entries sum to %.12g; expected 1 (within 1e-9)", label, sum);
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
    "  --rng NAME          generator of the chain: dirichlet (default: the rows\n"
    "                      above) or numpy-mt19937 (Yin et al. 2024, App. F: numpy's\n"
    "                      np.random.seed(S), np.random.rand rows normalised by\n"
    "                      their sums, draft then target; no --alpha/--mix)\n"
    "  --p LIST --q LIST   a single-token problem: draft p and target q, i.i.d. over\n"
    "                      the horizon (--T, default 1); LIST is comma-separated\n"
    "                      numbers or @FILE\n"
    "  --zipf              the on-demand Zipf model for large vocabularies: rows\n"
    "                      p_t(.|a), q_t(.|a) are Zipf laws over a pseudo-random\n"
    "                      ranking of the V tokens per context, computed from\n"
    "                      (model-seed, t, a), 64 bytes per token; with --V, --T,\n"
    "                      --model-seed (verifiers with a Zipf kernel: run --list)\n"
    "  --zipf-draft S      its draft exponent (default 1.0)\n"
    "  --zipf-target S     its target exponent (default 1.2)\n"
    "  --tol X             accept --model rows whose sums are within X of 1 (default\n"
    "                      1e-9; e.g. 1e-6 for a model exported in single precision);\n"
    "                      rows are renormalised and the largest deviation reported\n"
    "  --max-memory BYTES  memory budget of the model and a kernel's tables, e.g. 4G,\n"
    "                      512M (default: half of the memory available, MemAvailable);\n"
    "                      a generated chain stored over it is refused, and run\n"
    "                      streams one over half of it with a verifier that has a\n"
    "                      kernel for streamed chains (token)\n"
    "  --stream            run: generate the chain's rows step by step while the\n"
    "                      trials advance (O(V^2) memory; same results as stored)\n"
    "  --arpa FILE         an ARPA backoff language model: target its bigram (--order\n"
    "                      2) or unigram (1), starting after <s>; draft the unigram\n"
    "                      of --draft-arpa FILE (default: the same file); rows on\n"
    "                      demand, never V x V; --T (default 50); run and eval\n"
    "                      speedup, with token (exact) and block\n";

void cli_model_init(cli_model_opts *mo)
{
    memset(mo, 0, sizeof *mo);
    sd_gen_defaults(&mo->gen);
    mo->s_draft = SD_ZIPF_DEFAULT_S_DRAFT;
    mo->s_target = SD_ZIPF_DEFAULT_S_TARGET;
}

void cli_model_release(cli_model_opts *mo)
{
    free(mo->p);
    free(mo->q);
    mo->p = mo->q = NULL;
}

/* BYTES with an optional binary suffix K, M, G or T (e.g. 512M, 4G). */
static int S_parse_bytes(const char *opt, const char *arg, size_t *out, sd_error *err)
{
    char *end;
    errno = 0;
    double v = strtod(arg, &end), unit = 1.0;
    int decimal = end > arg && sd_parse_is_decimal(arg, end); /* no 0x1000, as every number */
    const char *units = "KMGT";
    const char *u = *end ? strchr(units, toupper((unsigned char)*end)) : NULL;
    if (u && *u) {
        unit = ldexp(1.0, 10 * (int)(u - units + 1));
        end++;
    }
    if (!decimal || *end || errno || !(v * unit >= 4096.0) || v * unit > 0x1p62)
        return sd_error_set(err, SD_EUSAGE, "%s '%s': expected a number of bytes >= 4096, optionally "
                                            "with K, M, G or T (e.g. 4G)", opt, arg);
    *out = (size_t)(v * unit);
    return SD_OK;
}

int cli_model_option(cli_model_opts *mo, int c, const char *arg, sd_error *err)
{
    int rc = SD_OK;
    switch (c) {
    case CLI_OPT_MODEL: rc = cli_check_path("--model", arg, err); mo->file = arg; break;
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
    case CLI_OPT_ALPHA: { /* named as given: in check, --alpha is the test's level */
        const char *nm = S_tok && strncmp(S_tok, "--model-alpha", 13) == 0 ? "--model-alpha" : "--alpha";
        rc = cli_parse_double(nm, arg, 1e-300, 1e300, &mo->gen.alpha, err);
        mo->gen_given = mo->shape_given = 1;
        break;
    }
    case CLI_OPT_MIX:
        rc = cli_parse_double("--mix", arg, 0.0, 1.0, &mo->gen.mix, err);
        mo->gen_given = mo->shape_given = 1;
        break;
    case CLI_OPT_RNG:
        mo->gen_given = mo->rng_given = 1;
        if ((mo->gen.rng = sd_gen_rng_parse(arg)) < 0)
            rc = sd_error_set(err, SD_EUSAGE, "--rng '%s': expected dirichlet or numpy-mt19937", arg);
        break;
    case CLI_OPT_ZIPF: mo->zipf = 1; break;
    case CLI_OPT_TOL: rc = cli_parse_double("--tol", arg, 1e-9, 0.01, &mo->tol, err); break;
    case CLI_OPT_MAX_MEMORY: rc = S_parse_bytes("--max-memory", arg, &mo->max_memory, err); break;
    case CLI_OPT_STREAM: mo->stream = 1; break;
    case CLI_OPT_ZIPF_DRAFT:
        mo->zipf_given = 1;
        rc = cli_parse_double("--zipf-draft", arg, 0.0, 100.0, &mo->s_draft, err);
        break;
    case CLI_OPT_ZIPF_TARGET:
        mo->zipf_given = 1;
        rc = cli_parse_double("--zipf-target", arg, 0.0, 100.0, &mo->s_target, err);
        break;
    case CLI_OPT_P:
        free(mo->p);
        mo->p = NULL;
        rc = S_parse_list("--p", arg, 0.01, &mo->p, &mo->pV, &mo->psum, err); /* --tol: cli_model_lists_check */
        mo->pq_file[0] = arg[0] == '@';
        break;
    case CLI_OPT_Q:
        free(mo->q);
        mo->q = NULL;
        rc = S_parse_list("--q", arg, 0.01, &mo->q, &mo->qV, &mo->qsum, err);
        mo->pq_file[1] = arg[0] == '@';
        break;
    default: return cli_arpa_option(&mo->arpa, c, arg, err);
    }
    return rc ? -1 : 1;
}

static sd_chain *S_build(const cli_model_opts *mo, double *row_dev, char sha256[65], sd_error *err);


/* The generator's options as given: --alpha/--mix with numpy-mt19937 are
 * refused even at their default values (sd_gen_check, which the generators
 * run, sees only the values). */
static int S_gen_given_check(const cli_model_opts *mo, sd_error *err)
{
    if (mo->shape_given && mo->gen.rng == SD_GEN_NUMPY_MT19937)
        return sd_error_set(err, SD_EUSAGE, "--alpha/--mix do not apply to --rng numpy-mt19937 "
                                            "(rows are uniform draws normalised by their sums)");
    return SD_OK;
}

/* The verifiers (controls aside) with a kernel for streamed chains
 * (SD_KERNEL_ALL), separated by '|', into buf. */
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

/* 1 if vt has a kernel for streamed chains (SD_KERNEL_ALL). */
static int S_streams(const sd_verifier_type *vt)
{
    for (size_t k = 0; vt->kernels && vt->kernels[k]; k++)
        if (vt->kernels[k]->supports & SD_KERNEL_ALL)
            return 1;
    return 0;
}

static void S_stream_verifiers(char *buf, size_t len)
{
    cli_verifier_names(buf, len, "|", S_streams);
}

int cli_model_open(const cli_model_opts *mo, cli_model *m, sd_error *err)
{
    memset(m, 0, sizeof *m);
    if (mo->zipf_given && !mo->zipf)
        return sd_error_set(err, SD_EUSAGE, "--zipf-draft/--zipf-target need --zipf");
    if (mo->zipf) {
        if (mo->file || mo->p || mo->q)
            return sd_error_set(err, SD_EUSAGE, "--zipf is a model of its own: drop --model/--p/--q");
        if (mo->shape_given) /* given at all, even at their defaults */
            return sd_error_set(err, SD_EUSAGE, "--alpha/--mix do not apply to --zipf (use --zipf-draft/--zipf-target)");
        if (mo->rng_given)
            return sd_error_set(err, SD_EUSAGE, "--rng does not apply to --zipf (its rows are computed, not drawn)");
        sd_zipf_params zp = {mo->gen.V, mo->gen.T, mo->gen.seed, mo->s_draft, mo->s_target};
        int rc = sd_zipf_new(&zp, &m->zipf, err);
        if (rc)
            return rc;
        m->view = sd_model_of_zipf(m->zipf);
        return SD_OK;
    }
    m->budget = sd_mem_budget(mo->max_memory);
    int sparse = 0; /* --arpa, or --p/--q whose chain would not fit (model_arpa.c) */
    int rc0 = cli_sparse_open(mo, m, &sparse, err);
    if (rc0 || sparse)
        return rc0;
    if (mo->stream && !mo->may_stream) {
        char names[256];
        S_stream_verifiers(names, sizeof names);
        return sd_error_set(err, SD_EUSAGE, "--stream: this command (or --algo) needs stored rows; "
                                            "run --algo %s streams", names);
    }
    int generated = !mo->file && !mo->p && !mo->q;
    if (mo->stream && !generated)
        return sd_error_set(err, SD_EUSAGE, "--stream applies to generated chains, not to --model/--p/--q");
    if (generated && mo->may_stream && (mo->stream || sd_gen_chain_bytes(mo->gen.V, mo->gen.T) > m->budget / 2)) {
        int rc = S_gen_given_check(mo, err); /* the generator's parameters, now */
        if (!rc)
            rc = sd_gen_check(&mo->gen, err);
        if (rc)
            return rc;
        if (!(m->stream = calloc(1, sizeof *m->stream)))
            return sd_error_set(err, SD_ENOMEM, "out of memory");
        m->stream->gen = mo->gen;
        m->view = sd_model_of_stream(m->stream);
        return SD_OK;
    }
    if (!(m->chain = S_build(mo, &m->row_dev, m->sha256, err)))
        return err ? (int)err->code : SD_EINTERNAL;
    m->view = sd_model_of_chain(m->chain);
    return SD_OK;
}

void cli_model_close(cli_model *m)
{
    sd_chain_free(m->chain);
    sd_zipf_free(m->zipf);
    sd_backoff_free(m->backoff);
    m->backoff = NULL;
    free(m->stream);
    m->chain = NULL;
    m->zipf = NULL;
    m->stream = NULL;
}

sd_chain *cli_model_build(const cli_model_opts *mo, sd_error *err)
{
    double dev;
    return S_build(mo, &dev, NULL, err);
}

sd_chain *cli_model_build_id(const cli_model_opts *mo, cli_model *id, sd_error *err)
{
    memset(id, 0, sizeof *id);
    return S_build(mo, &id->row_dev, id->sha256, err);
}

/* sha256: the SHA-256 of a --model FILE, of the bytes loaded ("" for other
 * models); NULL: not wanted. */
static sd_chain *S_build(const cli_model_opts *mo, double *row_dev, char sha256[65], sd_error *err)
{
    sd_chain *c = NULL;
    *row_dev = 0.0;
    if (sha256)
        sha256[0] = '\0';
    if (mo->tol > 0.0 && !mo->file && !mo->p && !mo->q) {
        sd_error_set(err, SD_EUSAGE, "--tol applies to --model FILE and --p/--q lists only");
        return NULL;
    }
    if (cli_model_lists_check(mo, err))
        return NULL;
    if (mo->stream) {
        char names[256];
        S_stream_verifiers(names, sizeof names);
        sd_error_set(err, SD_EUSAGE, "--stream: this command needs stored rows (run --algo %s streams)", names);
        return NULL;
    }
    if (mo->arpa.given) {
        sd_error_set(err, SD_EUSAGE, "--arpa: this command needs a model with stored rows (run, eval "
                                     "generation, eval speedup and eval rejections without --M take --arpa)");
        return NULL;
    }
    if (mo->zipf || mo->zipf_given) {
        sd_error_set(err, SD_EUSAGE, "--zipf: this command needs a model with stored rows "
                                     "(--model, --p/--q or a generated chain)");
        return NULL;
    }
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
            sd_error_set(err, SD_EUSAGE, "--V/--model-seed/--alpha/--mix/--rng apply to generated models, not to --p/--q");
            return NULL;
        }
        size_t pq_bytes = sd_gen_chain_bytes(mo->pV, 1), pq_budget = sd_mem_budget(mo->max_memory);
        if (pq_bytes > pq_budget) { /* the chain of identical rows, refused before allocating */
            sd_error_set(err, SD_ETOOBIG,
                         "this command stores --p/--q as a chain of V x V rows: V=%zu takes %.4g GB; memory budget "
                         "%.3g GB (%s); run, eval speedup, eval generation and eval rejections without --M keep "
                         "one row pair",
                         mo->pV, (double)pq_bytes / 1e9, (double)pq_budget / 1e9,
                         mo->max_memory ? "--max-memory" : "half of the memory available");
            return NULL;
        }
        return sd_chain_from_pq(mo->p, mo->q, mo->pV, mo->T_given ? mo->gen.T : 1, err);
    }
    if (mo->file) {
        if (mo->gen_given) {
            sd_error_set(err, SD_EUSAGE, "--V/--model-seed/--alpha/--mix/--rng apply to generated models, not to --model");
            return NULL;
        }
        if (sd_chain_load_sha(mo->file, mo->tol, &c, row_dev, sha256, err))
            return NULL;
        if (mo->tol > 0.0 && *row_dev > 1e-9)
            fprintf(stderr, "simdec: note: %s: rows renormalised (--tol %g); largest |row sum - 1| = %.3g\n",
                    mo->file, mo->tol, *row_dev);
        if (mo->T_given && sd_chain_truncate(c, mo->gen.T, err)) {
            sd_chain_free(c);
            return NULL;
        }
        return c;
    }
    if (S_gen_given_check(mo, err)) /* sd_chain_generate checks the values */
        return NULL;
    size_t bytes = sd_gen_chain_bytes(mo->gen.V, mo->gen.T), budget = sd_mem_budget(mo->max_memory);
    if (bytes > budget) {
        char names[256];
        S_stream_verifiers(names, sizeof names);
        sd_error_set(err, SD_ETOOBIG,
                     "a generated chain with V=%zu, T=%zu takes %.4g GB stored (2*T*V^2 doubles); memory "
                     "budget %.3g GB (%s); refusing: lower --V or --T, raise --max-memory, or stream it "
                     "(run --algo %s)",
                     mo->gen.V, mo->gen.T, (double)bytes / 1e9, (double)budget / 1e9,
                     mo->max_memory ? "--max-memory" : "half of the memory available", names);
        return NULL;
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

void cli_model_describe(const cli_model_opts *mo, const sd_model *md, json_t *o)
{
    json_t *m = json_object();
    if (md->backoff) {
        cli_arpa_describe(&mo->arpa, md->backoff, m);
        json_object_set_new(o, "model", m);
        return;
    }
    if (md->zipf) {
        const sd_zipf *z = md->zipf;
        json_object_set_new(m, "source", json_string("zipf"));
        json_object_set_new(m, "model_seed", json_integer((json_int_t)z->seed));
        json_object_set_new(m, "zipf_draft", json_real(z->s_draft));
        json_object_set_new(m, "zipf_target", json_real(z->s_target));
        json_object_set_new(m, "tv_per_row", json_real(z->tv));
        json_object_set_new(m, "table_bytes", json_integer((json_int_t)sd_zipf_bytes(z->V)));
    } else if (mo->p) {
        json_object_set_new(m, "source", json_string("pq"));
    } else if (mo->file) {
        json_object_set_new(m, "source", json_string("file"));
        json_object_set_new(m, "file", json_string(mo->file));
    } else {
        json_object_set_new(m, "source", json_string("generated"));
        if (md->stream)
            json_object_set_new(m, "streamed", json_true());
        json_object_set_new(m, "model_seed", json_integer((json_int_t)mo->gen.seed));
        if (mo->gen.rng == SD_GEN_NUMPY_MT19937) {
            json_object_set_new(m, "rng", json_string(sd_gen_rng_name(mo->gen.rng)));
        } else {
            json_object_set_new(m, "alpha", json_real(mo->gen.alpha));
            json_object_set_new(m, "mix", json_real(mo->gen.mix));
        }
    }
    json_object_set_new(m, "vocab", json_integer((json_int_t)md->V));
    json_object_set_new(m, "horizon", json_integer((json_int_t)md->T));
    json_object_set_new(o, "model", m);
}

/* SHA-256 of a --p/--q list as given: each value written "%.17g\n" (so
 * that Python's hashlib.sha256("".join("%.17g\n" % x for x in p).encode())
 * gives it too). */
static void S_list_sha256(const double *x, size_t n, char hex[65])
{
    sd_sha256 s;
    sd_sha256_init(&s);
    for (size_t i = 0; i < n; i++) {
        char b[40];
        int w = snprintf(b, sizeof b, "%.17g\n", x[i]);
        sd_sha256_update(&s, b, w > 0 ? (size_t)w : 0);
    }
    sd_sha256_hex(&s, hex);
}

void cli_model_identity(const cli_model_opts *mo, const cli_model *m, json_t *o)
{
    json_t *j = json_object_get(o, "model");
    if (!j)
        return;
    if (mo->p && mo->q) { /* the lists' identity (and the lists themselves when short) */
        char hex[65];
        S_list_sha256(mo->p, mo->pV, hex);
        json_object_set_new(j, "p_sha256", json_string(hex));
        S_list_sha256(mo->q, mo->qV, hex);
        json_object_set_new(j, "q_sha256", json_string(hex));
        if (mo->pV <= 16 && mo->qV <= 16) {
            json_t *p = json_array(), *q = json_array();
            for (size_t i = 0; i < mo->pV; i++)
                json_array_append_new(p, json_real(mo->p[i]));
            for (size_t i = 0; i < mo->qV; i++)
                json_array_append_new(q, json_real(mo->q[i]));
            json_object_set_new(j, "p", p);
            json_object_set_new(j, "q", q);
        }
    }
    if ((mo->file || mo->arpa.file) && m->sha256[0])
        json_object_set_new(j, "sha256", json_string(m->sha256));
    if (mo->file) {
        json_object_set_new(j, "row_tol", json_real(mo->tol > 0.0 ? mo->tol : 1e-9));
        json_object_set_new(j, "row_max_deviation", json_real(m->row_dev));
    }
}

void cli_model_identity_line(FILE *f, const cli_model_opts *mo, const cli_model *m)
{
    if (mo->p && mo->q) {
        char hp[65], hq[65];
        S_list_sha256(mo->p, mo->pV, hp);
        S_list_sha256(mo->q, mo->qV, hq);
        fprintf(f, "          p sha256 %s (of the values given, one %%.17g a line)\n          q sha256 %s\n",
                hp, hq);
    }
    if (mo->arpa.file && m->sha256[0])
        fprintf(f, "          sha256 %s\n", m->sha256);
    if (mo->file && m->sha256[0])
        fprintf(f, "          sha256 %s", m->sha256);
    if (mo->file && mo->tol > 0.0)
        fprintf(f, "; rows renormalised (--tol %g), largest |sum - 1| %.3g", mo->tol, m->row_dev);
    if (mo->file && m->sha256[0])
        fputc('\n', f);
}

void cli_model_summary(FILE *f, const char *label, const cli_model_opts *mo, const sd_model *md)
{
    fprintf(f, "%-9s ", label);
    if (md->backoff)
        cli_arpa_summary(f, &mo->arpa, md->backoff);
    else if (md->zipf)
        fprintf(f, "on-demand Zipf rows (--zipf), V=%zu, T=%zu, model-seed %llu, draft exponent %g, "
                   "target exponent %g\n          (TV per row %.6f; tables %zu bytes, no T*V^2 storage)\n",
                md->V, md->T, (unsigned long long)md->zipf->seed, md->zipf->s_draft, md->zipf->s_target,
                md->zipf->tv, sd_zipf_bytes(md->V));
    else if (mo->p)
        fprintf(f, "single-token problem (--p/--q), V=%zu, T=%zu\n", md->V, md->T);
    else if (mo->file)
        fprintf(f, "%s, V=%zu, T=%zu\n", mo->file, md->V, md->T);
    else if (mo->gen.rng == SD_GEN_NUMPY_MT19937)
        fprintf(f, "generated%s, V=%zu, T=%zu, model-seed %lu, rng numpy-mt19937 (Yin et al. App. F)\n",
                md->stream ? " (streamed: rows built step by step)" : "", md->V, md->T, mo->gen.seed);
    else
        fprintf(f, "generated%s, V=%zu, T=%zu, model-seed %lu, alpha %g, mix %g\n",
                md->stream ? " (streamed: rows built step by step)" : "", md->V, md->T, mo->gen.seed,
                mo->gen.alpha, mo->gen.mix);
    if (md->stream)
        fprintf(f, "          (stored it would take %.3g GB; memory budget %.3g GB, %s)\n",
                (double)sd_gen_chain_bytes(md->V, md->T) / 1e9, (double)sd_mem_budget(mo->max_memory) / 1e9,
                mo->max_memory ? "--max-memory" : "half of the memory available");
}

/* --- verifiers and their parameters -------------------------------------- */

/* The value of option `name` in argv (--name VALUE or --name=VALUE) at
 * *at, or NULL; *at moves past it. */
static const char *S_scan(int argc, char **argv, const char *name, int *at)
{
    size_t len = strlen(name);
    for (int i = *at; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0)
            break;
        if (strncmp(a, "--", 2) != 0 || strncmp(a + 2, name, len) != 0)
            continue;
        if (a[2 + len] == '=') {
            *at = i + 1;
            return a + 3 + len;
        }
        if (a[2 + len] == '\0' && i + 1 < argc) {
            *at = i + 2;
            return argv[i + 1];
        }
    }
    *at = argc;
    return NULL;
}

int cli_plugins_load(int argc, char **argv, sd_error *err)
{
    /* A sweep parses the command line once per point: a file loaded
     * already is not loaded again (its names are registered). */
    static char *loaded[64];
    static size_t nloaded;
    int at = 1;
    const char *path;
    while ((path = S_scan(argc, argv, "plugin", &at)) != NULL) {
        int seen = 0;
        for (size_t i = 0; i < nloaded && !seen; i++)
            seen = strcmp(loaded[i], path) == 0;
        if (seen)
            continue;
        int rc = cli_check_path("--plugin", path, err);
        if (!rc)
            rc = sd_plugin_load(path, err);
        if (rc)
            return rc;
        if (nloaded < 64 && (loaded[nloaded] = strdup(path)) != NULL)
            nloaded++;
    }
    return SD_OK;
}

/* 1 if name is in the NULL-terminated list (NULL: none). */
static int S_listed(const char *const *list, const char *name)
{
    for (size_t i = 0; list && list[i]; i++)
        if (strcmp(list[i], name) == 0)
            return 1;
    return 0;
}

int cli_verifier_prescan(const char *cmd, int argc, char **argv, const char *algo_opt,
                         const char *def, const struct option *base, const char *const *skip,
                         cli_verifier *cv, struct option **opts)
{
    sd_error err;
    memset(cv, 0, sizeof *cv);
    *opts = NULL;
    if (cli_plugins_load(argc, argv, &err))
        return cli_fail(&err);
    int at = 1;
    const char *name = S_scan(argc, argv, algo_opt, &at), *again;
    while ((again = S_scan(argc, argv, algo_opt, &at)) != NULL)
        name = again; /* the last one wins, as getopt does */
    cv->named = name != NULL;
    if (!name)
        name = def;
    if (name && !(cv->vt = sd_verifier_find(name))) {
        char hint[160];
        cli_suggest sg;
        cli_suggest_init(&sg, name);
        const sd_verifier_type *v;
        for (size_t i = 0; (v = sd_verifier_at(i)) != NULL; i++)
            cli_suggest_add(&sg, v->name);
        return cli_usage_error(cmd, "unknown verifier '%s'%s (see 'simdec run --list')", name,
                               cli_suggest_text(&sg, "", hint, sizeof hint));
    }
    sd_params_defaults(&cv->par, cv->vt);
    /* getopt takes the command's option first (cli_options_with_params), so
     * a parameter of the same name (a plugin's --seed, a Python verifier's
     * --V) could never be set: refuse the verifier instead of ignoring it. */
    for (size_t i = 0; i < sd_params_count(cv->vt); i++)
        for (const struct option *b = base; b->name; b++)
            if (strcmp(b->name, cv->vt->params[i].name) == 0 && !S_listed(skip, b->name)) {
                sd_error_set(&err, SD_EDATA, "verifier %s: its parameter '%s' has the name of an option of %s "
                             "(--%s), so it could never be set; rename the parameter", cv->vt->name, b->name,
                             cmd, b->name);
                return cli_fail(&err);
            }
    if (!(*opts = cli_options_with_params(base, cv->vt, skip))) {
        fprintf(stderr, "simdec: out of memory\n");
        return EX_OSERR_;
    }
    return -1;
}

struct option *cli_options_with_params(const struct option *base, const sd_verifier_type *vt,
                                       const char *const *skip)
{
    size_t nb = 0, np = sd_params_count(vt), k;
    while (base[nb].name)
        nb++;
    struct option *o = calloc(nb + np + 1, sizeof *o);
    if (!o)
        return NULL;
    /* The command's own options first: getopt_long takes the first exact
     * match, so a parameter can never take a command's option away. */
    memcpy(o, base, nb * sizeof *o);
    k = nb;
    for (size_t i = 0; i < np; i++) {
        if (S_listed(skip, vt->params[i].name))
            continue;
        o[k].name = vt->params[i].name;
        o[k].has_arg = required_argument;
        o[k].val = CLI_OPT_PARAM + (int)i;
        k++;
    }
    return o;
}

int cli_param_option(cli_verifier *cv, int c, const char *arg, sd_error *err)
{
    if (c == CLI_OPT_PLUGIN)
        return 1; /* loaded by cli_verifier_prescan */
    if (c == CLI_OPT_PROGRESS) {
        cli_progress_force = 1;
        return 1;
    }
    size_t np = sd_params_count(cv->vt);
    if (!cv->vt || c < CLI_OPT_PARAM || c >= CLI_OPT_PARAM + (int)np)
        return 0;
    return sd_params_parse(&cv->par, cv->vt, cv->vt->params[c - CLI_OPT_PARAM].name, arg, err) ? -1 : 1;
}

int cli_verifier_option(cli_model_opts *mo, cli_verifier *cv, int c, const char *arg, int *status)
{
    sd_error err;
    int r = cli_model_option(mo, c, arg, &err);
    if (r == 0)
        r = cli_param_option(cv, c, arg, &err);
    if (r < 0)
        *status = cli_fail(&err);
    return r != 0;
}

int cli_unknown_option(const char *cmd, int c, char **argv, const sd_verifier_type *vt)
{
    /* A parameter of another verifier: say whose it is. */
    if (c != ':' && vt && optind > 0 && strncmp(argv[optind - 1], "--", 2) == 0) {
        char name[64];
        const char *a = argv[optind - 1] + 2;
        size_t len = strcspn(a, "=");
        snprintf(name, sizeof name, "%.*s", (int)(len < 63 ? len : 63), a);
        const sd_verifier_type *v;
        for (size_t i = 0; (v = sd_verifier_at(i)) != NULL; i++)
            if (sd_params_decl(v, name, NULL)) {
                char names[256];
                sd_params_names(vt, names, sizeof names);
                return cli_usage_error(cmd, "--%s does not apply to --algo %s (it reads: %s)", name,
                                       vt->name, names);
            }
    }
    return cli_option_error(cmd, c, argv);
}

/* The help line of one declaration: option, argument, help, range. */
static void S_param_line(const sd_param_decl *d, char *line, size_t len)
{
    char arg[96];
    if (d->kind == SD_PARAM_CHOICE)
        snprintf(arg, sizeof arg, "--%s %s", d->name, d->choices);
    else if (d->kind == SD_PARAM_SHAPE)
        snprintf(arg, sizeof arg, "--%s b1,..,bd", d->name);
    else if (d->kind == SD_PARAM_COUNT)
        snprintf(arg, sizeof arg, "--%s N", d->name);
    else
        snprintf(arg, sizeof arg, "--%s X", d->name);
    int n = snprintf(line, len, "  %-20s %s", arg, d->help);
    size_t u = n > 0 && (size_t)n < len ? (size_t)n : len - 1;
    if (d->kind == SD_PARAM_SHAPE)
        snprintf(line + u, len - u, "; b_i %.0f..%.0f, at most %d nodes (default %s)", d->min, d->max,
                 SD_TREE_MAX_NODES, d->choices);
    else if (d->kind != SD_PARAM_CHOICE)
        snprintf(line + u, len - u, d->kind == SD_PARAM_COUNT ? "; %.0f..%.0f" : "; %g..%g", d->min, d->max);
}

/* 1 if verifier w declares `name` with the help line `line`. */
static int S_same_line(const sd_verifier_type *w, const char *name, const char *line)
{
    const sd_param_decl *d = sd_params_decl(w, name, NULL);
    char other[512];
    if (!d)
        return 0;
    S_param_line(d, other, sizeof other);
    return strcmp(other, line) == 0;
}

void cli_params_help(FILE *f, const sd_verifier_type *vt)
{
    const sd_verifier_type *v;
    if (vt) {
        fprintf(f, "Parameters of --algo %s:\n", vt->name);
        if (sd_params_count(vt) == 0)
            fprintf(f, "  (none)\n");
    } else {
        fprintf(f, "Verifier parameters (each verifier reads its own; with --algo NAME, --help\n"
                   "shows that verifier's; 'simdec run --list' lists them all):\n");
    }
    /* Each parameter name once, with the verifiers that read it; a name
     * that verifiers declare differently (--draw: 'iid only', 'wor only',
     * ...) gets one line per declaration, each with its verifiers. */
    for (size_t i = 0; (v = vt ? (i == 0 ? vt : NULL) : sd_verifier_at(i)) != NULL; i++) {
        size_t np = sd_params_count(v);
        for (size_t j = 0; j < np; j++) {
            const sd_param_decl *d = &v->params[j];
            int seen = 0;
            for (size_t e = 0; e < i && !vt && !seen; e++)
                seen = sd_params_decl(sd_verifier_at(e), d->name, NULL) != NULL;
            if (seen)
                continue;
            const sd_verifier_type *w;
            for (size_t e = i; (w = vt ? (e == i ? vt : NULL) : sd_verifier_at(e)) != NULL; e++) {
                const sd_param_decl *dw = sd_params_decl(w, d->name, NULL);
                char line[512];
                if (!dw)
                    continue;
                S_param_line(dw, line, sizeof line);
                int printed = 0;
                for (size_t b = i; b < e && !printed; b++)
                    printed = S_same_line(sd_verifier_at(b), d->name, line);
                if (printed)
                    continue;
                fputs(line, f);
                if (!vt) {
                    fprintf(f, "\n  %-20s [", "");
                    const sd_verifier_type *x;
                    int first = 1;
                    for (size_t y = e; (x = sd_verifier_at(y)) != NULL; y++)
                        if (S_same_line(x, d->name, line)) {
                            fprintf(f, "%s%s", first ? "" : " ", x->name);
                            first = 0;
                        }
                    fprintf(f, "]");
                }
                fputc('\n', f);
            }
        }
    }
}

void cli_verifier_help(const char *head, const cli_verifier *cv)
{
    fputs(head, stdout);
    cli_params_help(stdout, cv->named ? cv->vt : NULL);
    fputc('\n', stdout);
    fputs(cli_model_help, stdout);
}

void cli_verifier_list(FILE *f)
{
    const sd_verifier_type *v;
    fprintf(f, "%-22s %-20s %s\n", "verifier", "parameters", "description");
    for (size_t i = 0; (v = sd_verifier_at(i)) != NULL; i++) {
        char names[256];
        sd_params_names(v, names, sizeof names);
        fprintf(f, "%-22s %-20s %s%s\n", v->name, sd_params_count(v) ? names : "-", v->summary,
                (v->flags & SD_VERIFIER_CONTROL) ? " [deliberately broken control]" : "");
    }
}

void cli_csv_field(const char *s)
{
    putchar(',');
    if (!s)
        return;
    if (strpbrk(s, ",\"\n") == NULL) {
        fputs(s, stdout);
        return;
    }
    putchar('"');
    for (; *s; s++) {
        if (*s == '"')
            putchar('"');
        putchar(*s);
    }
    putchar('"');
}

void cli_verifier_list_csv(void)
{
    const sd_verifier_type *v;
    fputs("name,params,control,summary\n", stdout);
    for (size_t i = 0; (v = sd_verifier_at(i)) != NULL; i++) {
        char names[256] = "";
        if (sd_params_count(v))
            sd_params_names(v, names, sizeof names);
        fputs(v->name, stdout);
        cli_csv_field(names);
        printf(",%d", (v->flags & SD_VERIFIER_CONTROL) != 0);
        cli_csv_field(v->summary);
        putchar('\n');
    }
}

json_t *cli_verifier_list_json(void)
{
    const sd_verifier_type *v;
    json_t *a = json_array();
    for (size_t i = 0; (v = sd_verifier_at(i)) != NULL; i++) {
        json_t *ps = json_array();
        for (size_t k = 0, n = sd_params_count(v); k < n; k++)
            json_array_append_new(ps, json_string(v->params[k].name));
        json_t *o = json_pack("{s:s, s:s, s:o, s:b}", "name", v->name, "summary", v->summary, "params", ps,
                              "control", (v->flags & SD_VERIFIER_CONTROL) != 0);
        json_array_append_new(a, o);
    }
    return a;
}

/* --- output ------------------------------------------------------------- */

int cli_print_json(json_t *v)
{
    int rc = json_dumpf(v, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(17));
    json_decref(v);
    fputc('\n', stdout);
    if (rc != 0) {
        fprintf(stderr, "simdec: cannot write to standard output\n");
        return EX_CANTCREAT_;
    }
    return cli_stdout_status();
}

int cli_stdout_status(void)
{
    if (fflush(stdout) == 0 && !ferror(stdout))
        return EX_OK_;
    fprintf(stderr, "simdec: cannot write to standard output\n");
    return EX_CANTCREAT_;
}

json_t *cli_json_real(double x)
{
    return isfinite(x) ? json_real(x) : json_null();
}

int cli_write_atomic(const char *path, cli_writer_fn fn, void *ctx, sd_error *err)
{
    /* A device, FIFO or terminal (-o /dev/stdout, a pipe) is written in
     * place: renaming a temporary file over it would replace the device
     * itself (as root, -o /dev/null would delete /dev/null). */
    struct stat st;
    int exists = stat(path, &st) == 0;
    if (exists && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
        FILE *f = fopen(path, "w");
        if (!f)
            return sd_error_set(err, SD_EOUTPUT, "%s: cannot write: %s", path, strerror(errno));
        int rc = fn(f, ctx, err);
        if (fclose(f) != 0 && !rc)
            rc = sd_error_set(err, SD_EOUTPUT, "%s: cannot write: %s", path, strerror(errno));
        return rc;
    }
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
    /* mkstemp's 0600 would become the output's mode: give it that of the
     * file it replaces, or what creating it would (0666 less the umask). */
    mode_t mask = umask(0);
    umask(mask);
    (void)fchmod(fd, exists && S_ISREG(st.st_mode) ? st.st_mode & 07777 : 0666 & ~mask);
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

int cli_progress_force;

int cli_stderr_is_tty(void)
{
    return cli_progress_force || isatty(fileno(stderr));
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
