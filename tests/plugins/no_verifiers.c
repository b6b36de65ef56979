/* no_verifiers.c — a plugin whose list is empty (tests/test_plugin.c
 * expects SD_EDATA "lists no verifiers"). */
#include "../../include/simdec.h"

SD_PLUGIN_EXPORT const sd_plugin simdec_plugin = {SD_PLUGIN_ABI, (const sd_verifier_type *const[]){NULL}};
