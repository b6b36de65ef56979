/* model_arpa.h — the model options of sparse-row models (model_arpa.c):
 * --arpa FILE [--order 1|2] [--draft-arpa FILE] [--draft-order 1], and the
 * i.i.d. problem --p/--q kept as one row pair when its stored chain would
 * not fit (src/sd_backoff.h). */
#ifndef CLI_MODEL_ARPA_H
#define CLI_MODEL_ARPA_H

#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "../src/sd_backoff.h"
#include "../src/sd_error.h"

typedef struct cli_arpa_opts {
    const char *file, *draft_file; /* --arpa, --draft-arpa */
    size_t order, draft_order;     /* --order (default 2), --draft-order (default 1) */
    int given;                     /* any of the four seen */
} cli_arpa_opts;

/* The option values (below CLI_OPT_FIRST_FREE, above the model options). */
enum { CLI_OPT_ARPA = 1090, CLI_OPT_ORDER, CLI_OPT_DRAFT_ARPA, CLI_OPT_DRAFT_ORDER };
#define CLI_ARPA_LONGOPTS \
    {"arpa", required_argument, 0, CLI_OPT_ARPA}, \
    {"order", required_argument, 0, CLI_OPT_ORDER}, \
    {"draft-arpa", required_argument, 0, CLI_OPT_DRAFT_ARPA}, \
    {"draft-order", required_argument, 0, CLI_OPT_DRAFT_ORDER}

extern const char cli_arpa_help[];

/* 1 handled, 0 not one of these options, -1 bad value (err set). */
int cli_arpa_option(cli_arpa_opts *ao, int c, const char *arg, sd_error *err);

/* Reads the file(s) and builds the model with horizon T under the budget
 * (bytes); sha256 gets the SHA-256 of --arpa FILE's bytes; a note on
 * stderr names the largest row deviation.  A library
 * status with err set. */
int cli_arpa_open(const cli_arpa_opts *ao, size_t T, size_t budget, sd_backoff **out, char sha256[65],
                  sd_error *err);

/* --arpa, or --p/--q whose stored chain would exceed half of m->budget
 * (one row pair kept instead): *opened = 1 and m->backoff, m->view set;
 * else *opened = 0 (the caller opens the model as before).  --p/--q are
 * checked against --tol first (cli_model_lists_check).  A library status. */
struct cli_model_opts;
struct cli_model;
int cli_sparse_open(const struct cli_model_opts *mo, struct cli_model *m, int *opened, sd_error *err);

/* --p/--q were parsed within 0.01 of summing to 1 and renormalised; SD_EDATA
 * (SD_EUSAGE for an inline list) naming the list when its sum is off by
 * more than --tol (default 1e-9). */
int cli_model_lists_check(const struct cli_model_opts *mo, sd_error *err);

/* gen --arpa FILE --trace N -o DIR: n sequences of T tokens sampled from
 * the target (order 1..3) after <s>, with the draft's rows (order 1..3 of
 * --draft-arpa) along them (src/sd_ngram.h, src/sd_trace_write.h); rows = 0
 * writes tokens, ratios and prompts only.  The budget covers the model and
 * the arrays.  A library status. */
int cli_arpa_trace(const cli_arpa_opts *ao, size_t T, size_t n, uint64_t seed, int rows, const char *dir,
                   size_t budget, sd_error *err);

/* The model's table line and JSON description. */
void cli_arpa_summary(FILE *f, const cli_arpa_opts *ao, const sd_backoff *m);

/* Theorem 1 for a bigram target (--order 2) and a bigram draft
 * (--draft-order 2, from --draft-arpa or the same file): the per-context
 * TV of the two files' rows (src/sd_arpa_draft2.h) and the target's
 * marginals (sd_backoff_theorem1_tv).  *V gets the vocabulary, sha256 the
 * target file's.  SD_EUSAGE for another order, SD_EDATA for a reachable
 * context without a draft row (naming its word), SD_ETOOBIG over budget. */
int cli_arpa_theorem1_draft2(const cli_arpa_opts *ao, size_t T, size_t budget, double *rejections,
                             double *target_calls, size_t *V, char sha256[65], sd_error *err);
void cli_arpa_describe(const cli_arpa_opts *ao, const sd_backoff *m, json_t *model);

#endif
