/* sd_params.h — verifier parameters from their declarations
 * (sd_verifier.h): defaults, parsing with range errors, and the echo of a
 * verifier's parameters in tables and JSON.  Every command that takes a
 * verifier, plugins and the Python interface go through these functions, so
 * a parameter is declared once, in its verifier's file. */
#ifndef SD_PARAMS_H
#define SD_PARAMS_H

#include <jansson.h>
#include <stddef.h>

#include "sd_verifier.h"

/* The number of nodes b1 + b1 b2 + ... + b1...bd of par's draft tree (0
 * for none). */
size_t sd_params_tree_nodes(const sd_params *par);

/* Number of declared parameters of vt (0 for none). */
size_t sd_params_count(const sd_verifier_type *vt);

/* The declaration of parameter `name` of vt, or NULL; *index (if not NULL)
 * receives its position in the declaration. */
const sd_param_decl *sd_params_decl(const sd_verifier_type *vt, const char *name, size_t *index);

/* Every parameter at its declared default; gamma 0 and k 2 when vt does not
 * declare them (vt may be NULL: shared defaults only). */
void sd_params_defaults(sd_params *par, const sd_verifier_type *vt);

/* Stores x as the value of declaration d in par, unchecked (tests that
 * hand a verifier out-of-range values; everything else uses
 * sd_params_set). */
void sd_params_store(sd_params *par, const sd_param_decl *d, double x);

/* The value of declaration d in par. */
double sd_params_value(const sd_params *par, const sd_param_decl *d);

/* Sets parameter `name` of vt from text, as the option --NAME: a count or
 * number within the declared range, or one of the declared words; marks it
 * given.  SD_EUSAGE naming the option, value and range; an unknown name is
 * SD_EUSAGE "--NAME does not apply to --algo X (it reads: ...)". */
int sd_params_parse(sd_params *par, const sd_verifier_type *vt, const char *name,
                    const char *text, sd_error *err);

/* Parses text as the value of declaration d into par (what
 * sd_params_parse does once it has found d; the `given` bit is not set):
 * for a parameter declared outside a verifier, e.g. the tree LPs' --tree
 * and --draw (sims/verifiers/sd_tree.h). */
int sd_params_parse_decl(sd_params *par, const sd_param_decl *d, const char *text, sd_error *err);

/* The same with a number (a choice: its index), range-checked. */
int sd_params_set(sd_params *par, const sd_verifier_type *vt, const char *name, double value,
                  sd_error *err);

/* 1 if parameter name of vt was given explicitly. */
int sd_params_given(const sd_params *par, const sd_verifier_type *vt, const char *name);

/* "gamma eps" — the names vt reads, space-separated ("nothing" for none),
 * into buf. */
void sd_params_names(const sd_verifier_type *vt, char *buf, size_t len);

/* ", gamma 4, eps 0.1" — each declared parameter and its value (or its
 * `unset` meaning), into buf; "" for none.  A --draft-policy at its
 * default (fixed) is left out: it means what no option means. */
void sd_params_format(const sd_params *par, const sd_verifier_type *vt, char *buf, size_t len);

/* {"gamma": 4 | null, "eps": 0.1, "residual": "opt"}: a new JSON object. */
json_t *sd_params_json(const sd_params *par, const sd_verifier_type *vt);

/* Checks a verifier's declaration (names, kinds, slots, ranges, defaults)
 * and its required functions (name, summary, alloc, step); choice words
 * have 1 to 63 characters.  SD_EDATA naming the problem.  The tests run it over every registered verifier;
 * plugins are checked with it before they are registered. */
int sd_params_check_decls(const sd_verifier_type *vt, sd_error *err);

#endif
