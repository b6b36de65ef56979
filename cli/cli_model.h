/* cli_model.h — the model options every command that needs a chain
 * shares, the model they build and its identity in tables and JSON. */
#ifndef CLI_MODEL_H
#define CLI_MODEL_H

#include <jansson.h>
#include <stdio.h>

#include "../src/sd_chain.h"
#include "../src/sd_error.h"
#include "../src/sd_model.h"
#include "cli_opts.h"
#include "model_arpa.h"

/* Model options shared by every command that needs a chain:
 *   --model FILE | --V n --T n --model-seed s [--alpha a --mix m]
 * and --T also truncates a file's horizon. */
typedef struct cli_model_opts {
    const char *file;
    sd_gen_params gen;
    int T_given;
    int gen_given;      /* --V/--model-seed/--alpha/--mix seen */
    int shape_given;    /* --alpha or --mix seen (even at its default) */
    int rng_given;      /* --rng seen */
    double *p, *q;      /* --p/--q single-token problem (malloc'd, renormalised), or NULL */
    size_t pV, qV;
    double psum, qsum;  /* their sums as given (checked against --tol by cli_model_lists_check) */
    int pq_file[2];     /* --p, --q given as @FILE (a bad sum is bad data, else a bad option value) */
    int zipf, zipf_given; /* --zipf; --zipf-draft/--zipf-target seen */
    double s_draft, s_target;
    double tol;         /* --tol: row-sum tolerance of --model (0: 1e-9) */
    size_t max_memory;  /* --max-memory: the memory budget in bytes (0: sd_mem_budget's default) */
    int stream;         /* --stream: a generated chain is streamed step by step */
    int may_stream;     /* set by the command: its verifier runs on a streamed chain, so a
                           generated chain over half the budget is streamed, not stored */
    cli_arpa_opts arpa; /* --arpa FILE ... (model_arpa.h) */
} cli_model_opts;

/* A model built from the options: its owner and the view the library
 * takes (src/sd_model.h). */
typedef struct cli_model {
    sd_chain *chain;
    sd_zipf *zipf;
    sd_model_stream *stream; /* a generated chain streamed step by step */
    size_t budget;           /* the memory budget the model was opened under (bytes) */
    sd_model view;
    char sha256[65];    /* of --model FILE ("" otherwise) */
    double row_dev;     /* largest |row sum - 1| of --model FILE before renormalising */
    sd_backoff *backoff; /* --arpa, or --p/--q whose chain would not fit (model_arpa.h) */
} cli_model;

void cli_model_init(cli_model_opts *mo);
/* Frees --p/--q lists. */
void cli_model_release(cli_model_opts *mo);
/* getopt_long option entries for the model options (their `val`s are
 * CLI_OPT_MODEL.., cli_opts.h).  Append them to a command's table. */
#define CLI_MODEL_LONGOPTS \
    {"model", required_argument, 0, CLI_OPT_MODEL}, \
    {"V", required_argument, 0, CLI_OPT_V}, \
    {"T", required_argument, 0, CLI_OPT_T}, \
    {"model-seed", required_argument, 0, CLI_OPT_MODEL_SEED}, \
    {"alpha", required_argument, 0, CLI_OPT_ALPHA}, \
    {"model-alpha", required_argument, 0, CLI_OPT_ALPHA}, \
    {"mix", required_argument, 0, CLI_OPT_MIX}, \
    {"p", required_argument, 0, CLI_OPT_P}, \
    {"q", required_argument, 0, CLI_OPT_Q}, \
    {"zipf", no_argument, 0, CLI_OPT_ZIPF}, \
    {"zipf-draft", required_argument, 0, CLI_OPT_ZIPF_DRAFT}, \
    {"zipf-target", required_argument, 0, CLI_OPT_ZIPF_TARGET}, \
    {"tol", required_argument, 0, CLI_OPT_TOL}, \
    {"max-memory", required_argument, 0, CLI_OPT_MAX_MEMORY}, \
    {"stream", no_argument, 0, CLI_OPT_STREAM}, \
    {"rng", required_argument, 0, CLI_OPT_RNG}, \
    CLI_ARPA_LONGOPTS
/* Help text for the model options: cli_model_help, the short paragraph
 * each command's --help ends with (the options named, a pointer to
 * 'simdec help models'); cli_model_help_full, the reference of each
 * option that 'simdec help models' prints. */
extern const char cli_model_help[];
extern const char cli_model_help_full[];
/* Handles option c if it is a model option: 1 handled, 0 not a model
 * option, -1 bad value (err set). */
int cli_model_option(cli_model_opts *mo, int c, const char *arg, sd_error *err);
/* Loads, generates or (with --p/--q: a single-token problem whose tokens
 * are i.i.d., horizon --T or 1) builds the chain, applying --T.  NULL with
 * err set; --zipf is refused (SD_EUSAGE): the command needs stored rows. */
sd_chain *cli_model_build(const cli_model_opts *mo, sd_error *err);

/* The --p/--q rows (validated by the caller) as a chain of T identical
 * steps (V x V rows each), refused (SD_ETOOBIG, naming the size and the
 * budget: --max-memory, or half of the memory available) before
 * allocating when it would exceed the budget. */
sd_chain *cli_model_pq_chain(const cli_model_opts *mo, size_t T, sd_error *err);
/* cli_model_build that also fills the identity of a --model FILE in *id
 * (sha256 of the bytes loaded, row_dev; "" and 0 for other models), for
 * cli_model_identity and cli_model_identity_line; id->chain is not set. */
struct cli_model;
sd_chain *cli_model_build_id(const cli_model_opts *mo, struct cli_model *id, sd_error *err);
/* Any model, the Zipf model included: fills *m (release with
 * cli_model_close).  A generated chain is streamed step by step (m->stream)
 * with --stream, or when mo->may_stream and stored it would take more than
 * half the memory budget (the other half for a kernel's tables); a stored
 * chain over the budget is refused (SD_ETOOBIG) before allocating.  A
 * library status with err set. */
int cli_model_open(const cli_model_opts *mo, cli_model *m, sd_error *err);
void cli_model_close(cli_model *m);
/* "model     generated, V=7, T=50, ..." — the model's line in every table,
 * after a label padded to 9 columns. */
void cli_model_summary(FILE *f, const char *label, const cli_model_opts *mo, const sd_model *md);
/* SD_EUSAGE unless --step t --state a name a row of c: 1 <= t <= T,
 * 0 <= a < V. */
int cli_context_check(const sd_chain *c, size_t step, size_t state, sd_error *err);
/* Adds "model": {"file"|"generated": ..., "vocab", "horizon", ...} to o. */
void cli_model_describe(const cli_model_opts *mo, const sd_model *md, json_t *o);
/* Adds to o's "model" the identity of a --model FILE that cli_model_open
 * read: "sha256", "row_tol", "row_max_deviation". */
void cli_model_identity(const cli_model_opts *mo, const cli_model *m, json_t *o);
/* The table line of the same ("          sha256 ..."), nothing for other models. */
void cli_model_identity_line(FILE *f, const cli_model_opts *mo, const cli_model *m);

#endif
