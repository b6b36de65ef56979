/* cli_model.c — the model options every command shares and the model's
 * identity in tables and JSON (cli_model.h). */
#include "cli_model.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../src/sd_mem.h"
#include "../src/sd_sha256.h"
#include "cli_opts.h"

/* The short paragraph every command's --help ends with; the reference of
 * each option is cli_model_help_full ('simdec help models'). */
const char cli_model_help[] =
    "Model (default: a generated chain, V=7, T=50, model-seed 10): --model FILE,\n"
    "--V N, --T N, --model-seed S, --model-alpha A (also --alpha), --mix M, --rng\n"
    "NAME; --p LIST --q LIST (one token); --zipf [--zipf-draft S --zipf-target S];\n"
    "--arpa FILE; --tol X, --max-memory BYTES, --stream.  'simdec help models'\n"
    "describes each.\n";

const char cli_model_help_full[] =
    "Model options (default: a generated chain, V=7, T=50, model-seed 10):\n"
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
    "                      of --draft-arpa FILE (default: the same file; its order\n"
    "                      --draft-order, 1); rows on demand, never V x V; --T\n"
    "                      (default 50); run and eval speedup, with token (exact),\n"
    "                      block, rrs, spectr, tree-rrs\n"
    "\n"
    "Each command's --help lists the options it reads besides these; a command\n"
    "that needs stored rows refuses --zipf and --arpa with a message.\n";

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
        const char *tok = cli_getopt_spelled();
        const char *nm = tok && strncmp(tok, "--model-alpha", 13) == 0 ? "--model-alpha" : "--alpha";
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
        rc = cli_parse_list_tol("--p", arg, 0.01, &mo->p, &mo->pV, &mo->psum, err); /* --tol: cli_model_lists_check */
        mo->pq_file[0] = arg[0] == '@';
        break;
    case CLI_OPT_Q:
        free(mo->q);
        mo->q = NULL;
        rc = cli_parse_list_tol("--q", arg, 0.01, &mo->q, &mo->qV, &mo->qsum, err);
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

sd_chain *cli_model_pq_chain(const cli_model_opts *mo, size_t T, sd_error *err)
{
    size_t bytes = sd_gen_chain_bytes(mo->pV, 1), budget = sd_mem_budget(mo->max_memory);
    if (bytes > budget) {
        sd_error_set(err, SD_ETOOBIG,
                     "this evaluator stores --p/--q as V x V rows: V=%zu takes %.4g GB; memory budget %.3g GB "
                     "(%s); refusing before allocating",
                     mo->pV, (double)bytes / 1e9, (double)budget / 1e9,
                     mo->max_memory ? "--max-memory" : "half of the memory available");
        return NULL;
    }
    return sd_chain_from_pq(mo->p, mo->q, mo->pV, T, err);
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
