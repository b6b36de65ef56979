/* shadowed.c — a plugin that defines its verifier under the C name of a
 * built-in one, sd_verifier_token: the dynamic linker binds the plugin's
 * list to simdec's own sd_verifier_token, so the plugin's "token2" would
 * silently be simdec's token (tests/test_plugin.c expects SD_EDATA naming
 * the symbol). */
#include "common.h"

const sd_verifier_type sd_verifier_token = {
    .name = "token2",
    .summary = "test plugin: a global named like simdec's",
    .alloc = S_alloc,
    .step = S_step,
};

SD_PLUGIN(&sd_verifier_token);
