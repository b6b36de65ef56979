/* api_trace.h — `simdec trace` and tolerant models for other languages
 * (the Python package, python/simdec/_trace.py and _model.py, through
 * ctypes), beside cli/api.h.  Statuses are process exit statuses (cli.h). */
#ifndef API_TRACE_H
#define API_TRACE_H

#include <stddef.h>

#include "../src/sd_chain.h"

/* `simdec trace` on arrays in memory: arrays[f] (f = 0 tokens, 1 draft, 2
 * target, 3 ratios; NULL when absent) with numpy dtype strings dtypes[f]
 * ("<i8", "<f4", ...), ndims[f] and shapes[f][0..ndims[f]-1] (shapes is
 * [4][8]); options as nopt name/value pairs (the command's long options
 * without "--"; value NULL for a flag such as "schedule").  *out gets the
 * --json text, *err what the command printed on standard error (both
 * NUL-terminated or NULL; free with sd_api_trace_free). */
int sd_api_trace(const void *const arrays[4], const char *const dtypes[4], const size_t ndims[4],
                 const size_t shapes[4][8], int nopt, const char *const *names, const char *const *values,
                 char **out, char **err);
void sd_api_trace_free(void *p);

/* sd_api_model_from_arrays (api.h) with row tolerance tol (rows within
 * tol of summing to 1 are renormalised: float32 exports; values below
 * 1e-9 mean 1e-9); *max_dev the largest |Σ row - 1| seen. */
int sd_api_model_from_arrays_tol(size_t V, size_t T, size_t draft_steps, size_t target_steps,
                                 const double *init, const double *draft, const double *target, double tol,
                                 double *max_dev, sd_chain **out, char *msg, size_t len);

#endif
