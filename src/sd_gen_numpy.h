/* sd_gen_numpy.h — internal to the generators (sd_gen.c, sd_gen_numpy.c):
 * numpy's legacy rows, shared by the stored and the streamed generator. */
#ifndef SD_GEN_NUMPY_H
#define SD_GEN_NUMPY_H

#include <gsl/gsl_rng.h>

#include "sd_chain.h"

/* SD_EUSAGE unless gp suits --rng numpy-mt19937 (seed 1..2^32-1, alpha
 * and mix at their defaults). */
int sd_gen_numpy_check(const sd_gen_params *gp, sd_error *err);

/* np.random.rand(steps, V, V) from r, each row divided by its sum. */
void sd_gen_numpy_fill(gsl_rng *r, double *m, size_t steps, size_t V);

#endif
