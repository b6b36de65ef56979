/* sd_stub.h — a placeholder verifier for a table entry whose simulator is
 * not written yet: every step fails with SD_EINTERNAL naming it.  Remove a
 * use when the real file lands. */
#ifndef SD_STUB_H
#define SD_STUB_H

#include "sd_verifier.h"

#define SD_VERIFIER_STUB(ident, vname, vparams)                                 \
    static int S_stub_step(void *state, const sd_chain *c, const sd_params *par, \
                           sd_stream *rng, size_t n, size_t prev, size_t *out,  \
                           sd_iter *it, sd_error *err)                          \
    {                                                                           \
        (void)state; (void)c; (void)par; (void)rng; (void)n; (void)prev;        \
        (void)out; (void)it;                                                    \
        return sd_error_set(err, SD_EINTERNAL, "verifier %s is not implemented yet", vname); \
    }                                                                           \
    static int S_stub_alloc(void **state, const sd_chain *c, const sd_params *par, \
                            sd_error *err)                                      \
    {                                                                           \
        (void)c; (void)par; (void)err;                                          \
        *state = NULL;                                                          \
        return SD_OK;                                                           \
    }                                                                           \
    const sd_verifier_type ident = {vname, "(not implemented yet)", vparams,    \
                                    NULL, S_stub_alloc, NULL, NULL, S_stub_step};

#endif
