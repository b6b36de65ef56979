/* dup_param.c — a plugin declaring the parameter eps twice
 * (tests/test_plugin.c expects SD_EDATA "declared twice"). */
#include "common.h"

static const sd_param_decl S_params[] = {
    {.name = "eps", .kind = SD_PARAM_REAL, .slot = 0, .def = 0.5, .min = 0.0, .max = 1.0, .help = "first eps"},
    {.name = "eps", .kind = SD_PARAM_REAL, .slot = 1, .def = 0.5, .min = 0.0, .max = 1.0, .help = "second eps"},
    SD_PARAM_END,
};

const sd_verifier_type sd_verifier_test_dup_param = {
    .name = "test-dup-param",
    .summary = "test plugin: parameter declared twice",
    .params = S_params,
    .alloc = S_alloc,
    .step = S_step,
};

SD_PLUGIN(&sd_verifier_test_dup_param);
