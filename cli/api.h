/* api.h — simdec as a library for other languages (the Python package in
 * python/simdec calls these through ctypes from build/libsimdec.so).
 *
 * sd_api_run, sd_api_check, sd_api_eval and sd_api_lp run a command from
 * named fields, in the calling process, and hand back what it printed: the
 * very JSON the command line prints with --json, so that a binding returns
 * the same dictionaries as `simdec ... --json` without building a command
 * line; sd_api_main runs one from an argument vector.  The model functions give a binding
 * the arrays of a chain (to load, generate, or build one from arrays with
 * the library's own validation).
 *
 * Every function returns a process exit status (cli.h: 0 ok, 64 usage, 65
 * bad data, 66 cannot open, 70 internal, 71 out of memory, 73 cannot write)
 * and, on failure, a one-line message in msg (len bytes, NUL-terminated). */
#ifndef API_H
#define API_H

#include <stddef.h>

#include "../src/sd_chain.h"

/* Runs `simdec ARGV...` (cli_dispatch: argv[0] is run, check, eval, lp,
 * gen, plot, --help or --version) with the status and output of ./simdec.
 * *out and *err receive what it wrote on standard output and standard
 * error (NUL-terminated; free with sd_api_free).  Output is captured by
 * pointing C's stdout and stderr at memory streams for the duration of the
 * call (glibc lets a program assign them), so the caller's own output, and
 * a Python callback's, still go where they went.  Not reentrant: one call
 * at a time per process. */
int sd_api_main(int argc, char **argv, char **out, char **err);
void sd_api_free(void *p);

/* `simdec run` from named fields, no command line: the verifier algo
 * (NULL: token-level SD; a comma list: a sweep) and fields {name, value},
 * named as run's options without the dashes (trials, seed, threads,
 * time-limit, target-stderr, estimator, samples, L, paired, csv, list,
 * help, progress, plugin, the model options, the verifier's declared
 * parameters), value the option's text or NULL for a flag.  The values are
 * read by run's own parsers, so a bad one fails with the command line's
 * message and status; a list or a range on a parameter sweeps
 * (cli_sweep_expand_fields, cli/sweep.h: the command line's points); the
 * "plugin" fields are loaded first.  *out receives what `run --json`
 * prints (one object, or an array for a sweep), or with csv, list or help
 * what those print; *err the error text.  A field that is none of run's
 * options is a usage error (64) naming it. */
typedef struct sd_api_field {
    const char *name;
    const char *value;
} sd_api_field;
int sd_api_run(const char *algo, const sd_api_field *fields, size_t n, char **out, char **err);
/* `simdec check --json` the same way: the fields are check's options
 * (trials, seed, L, alpha, min-expected, threads, exact, detect,
 * fail-biased, samples, progress, plugin, help, the model options, the
 * verifier's parameters). */
int sd_api_check(const char *algo, const sd_api_field *fields, size_t n, char **out, char **err);
/* `simdec eval WHAT --json` the same way, every evaluator: generation and
 * speedup (gamma G, a list, LO..HI or best; draft-policy; algo and k
 * lists) read their fields through their own option tables. */
int sd_api_eval(const char *what, const sd_api_field *fields, size_t n, char **out, char **err);
/* `simdec lp PROBLEM --json` the same way (compare: a field). */
int sd_api_lp(const char *problem, const sd_api_field *fields, size_t n, char **out, char **err);

/* A chain from a simdec-chain-1 file, from generator parameters (those of
 * `simdec gen`), or from arrays laid out as in sd_chain (init [V], draft
 * [draft_steps][V][V], target [target_steps][V][V]; steps 1 or T), checked
 * and renormalised as a file's rows are.  Free with sd_chain_free. */
int sd_api_model_load(const char *path, sd_chain **out, char *msg, size_t len);
int sd_api_model_generate(size_t V, size_t T, unsigned long seed, double alpha, double mix,
                          sd_chain **out, char *msg, size_t len);
int sd_api_model_from_arrays(size_t V, size_t T, size_t draft_steps, size_t target_steps,
                             const double *init, const double *draft, const double *target,
                             sd_chain **out, char *msg, size_t len);
/* shape[0..3] = V, T, draft_steps, target_steps. */
void sd_api_model_shape(const sd_chain *c, size_t shape[4]);
/* Copies the arrays out (capacities as shape says). */
void sd_api_model_copy(const sd_chain *c, double *init, double *draft, double *target);
/* Writes c as simdec-chain-1 JSON to path (atomically: a failure leaves no
 * partial file). */
int sd_api_model_save(const sd_chain *c, const char *path, char *msg, size_t len);

#endif
