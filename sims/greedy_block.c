/* greedy_block.c — placeholder; see sd_stub.h. */
#include "sd_stub.h"

SD_VERIFIER_STUB(sd_verifier_greedy_block, "greedy-block", "gamma")
