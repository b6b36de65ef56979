/* sd_registry.c — the table of verifiers (sd_verifier.h).  Adding a
 * verifier: write sims/NAME.c ending in `const sd_verifier_type
 * sd_verifier_NAME = {...};`, declare it below and add it to the table. */
#include <string.h>

#include "sd_verifier.h"

extern const sd_verifier_type sd_verifier_token;
extern const sd_verifier_type sd_verifier_block;
extern const sd_verifier_type sd_verifier_greedy_block;
extern const sd_verifier_type sd_verifier_batch;
extern const sd_verifier_type sd_verifier_rrs;
extern const sd_verifier_type sd_verifier_spectr;
extern const sd_verifier_type sd_verifier_biased;
extern const sd_verifier_type sd_verifier_sprinter;
extern const sd_verifier_type sd_verifier_broken_block_residual;
extern const sd_verifier_type sd_verifier_broken_coin;
extern const sd_verifier_type sd_verifier_broken_batch;

const sd_verifier_type *const sd_verifiers[] = {
    &sd_verifier_token,
    &sd_verifier_block,
    &sd_verifier_greedy_block,
    &sd_verifier_batch,
    &sd_verifier_rrs,
    &sd_verifier_spectr,
    &sd_verifier_biased,
    &sd_verifier_sprinter,
    &sd_verifier_broken_block_residual,
    &sd_verifier_broken_coin,
    &sd_verifier_broken_batch,
    NULL,
};

const sd_verifier_type *sd_verifier_find(const char *name)
{
    for (size_t i = 0; sd_verifiers[i]; i++)
        if (strcmp(sd_verifiers[i]->name, name) == 0)
            return sd_verifiers[i];
    return NULL;
}

int sd_verifier_uses(const sd_verifier_type *vt, const char *field)
{
    size_t len = strlen(field);
    for (const char *s = vt->params; (s = strstr(s, field)) != NULL; s += len)
        if ((s == vt->params || s[-1] == ' ') && (s[len] == '\0' || s[len] == ' '))
            return 1;
    return 0;
}
