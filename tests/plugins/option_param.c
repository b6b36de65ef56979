/* option_param.c — a plugin whose parameter is named like a command's
 * option (--seed): getopt gives --seed to the command, so the parameter
 * could never be set (tests/test_plugin.c expects run, check and lp
 * --compare to refuse the verifier, exit 65, naming both). */
#include "common.h"

static const sd_param_decl S_params[] = {
    {.name = "seed", .kind = SD_PARAM_COUNT, .slot = 0, .def = 3.0, .min = 1.0, .max = 10.0,
     .help = "a parameter that shadows --seed"},
    SD_PARAM_END,
};

const sd_verifier_type sd_verifier_test_option_param = {
    .name = "test-option-param",
    .summary = "test plugin: a parameter named like an option",
    .params = S_params,
    .alloc = S_alloc,
    .step = S_step,
};

SD_PLUGIN(&sd_verifier_test_option_param);
