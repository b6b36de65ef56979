/* dup_param.c — a plugin declaring the parameter eps twice
 * (tests/test_plugin.c expects SD_EDATA "declared twice"). */
#include "common.h"

static const sd_param_decl S_params[] = {
    {"eps", SD_PARAM_REAL, 0, 0.5, 0.0, 1.0, NULL, NULL, "first eps"},
    {"eps", SD_PARAM_REAL, 1, 0.5, 0.0, 1.0, NULL, NULL, "second eps"},
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
