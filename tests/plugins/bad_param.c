/* bad_param.c — a plugin of two verifiers, the second declaring a
 * parameter in slot 99 (tests/test_plugin.c expects SD_EDATA naming the
 * slot, and that the first verifier was not registered either). */
#include "common.h"

static const sd_param_decl S_params[] = {
    {.name = "level", .kind = SD_PARAM_REAL, .slot = 99, .def = 0.5, .min = 0.0, .max = 1.0,
     .help = "a parameter in a slot that does not exist"},
    SD_PARAM_END,
};

const sd_verifier_type sd_verifier_test_good = {
    .name = "test-good",
    .summary = "test plugin: a valid verifier listed before a bad one",
    .alloc = S_alloc,
    .step = S_step,
};

const sd_verifier_type sd_verifier_test_bad_slot = {
    .name = "test-bad-slot",
    .summary = "test plugin: parameter in slot 99",
    .params = S_params,
    .alloc = S_alloc,
    .step = S_step,
};

SD_PLUGIN(&sd_verifier_test_good, &sd_verifier_test_bad_slot);
