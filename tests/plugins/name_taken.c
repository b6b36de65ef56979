/* name_taken.c — a plugin whose verifier is named like a built-in one,
 * "block" (tests/test_plugin.c expects SD_EDATA "already defined"). */
#include "common.h"

const sd_verifier_type sd_verifier_test_name_taken = {
    .name = "block",
    .summary = "test plugin: a name simdec already has",
    .alloc = S_alloc,
    .step = S_step,
};

SD_PLUGIN(&sd_verifier_test_name_taken);
