/* wrong_abi.c — a plugin that says it was built for the next version of
 * the plugin interface (tests/test_plugin.c expects SD_EDATA naming both
 * versions). */
#include "common.h"

const sd_verifier_type sd_verifier_test_wrong_abi = {
    .name = "test-wrong-abi",
    .summary = "test plugin: wrong interface version",
    .alloc = S_alloc,
    .step = S_step,
};

SD_PLUGIN_EXPORT const sd_plugin simdec_plugin = {
    SD_PLUGIN_ABI + 1, (const sd_verifier_type *const[]){&sd_verifier_test_wrong_abi, NULL}};
