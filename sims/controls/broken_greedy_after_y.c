/* broken_greedy_after_y.c — a deliberately broken control: greedy block verification
 * (sims/verifiers/greedy_block.c) with eq. 31's joint law taken from
 * the context after the token Y (Alg. 6 updates c on line 5 before
 * modifying Mb on line 6): the modified target is then wrong and the
 * output biased.
 * It is greedy-block with another reading of Sun et al. 2025, Alg. 5
 * (the hook SD_GREEDY_READING of sd_greedy.h: the parameters, step, free
 * and begin are greedy-block's, alloc, exact and prefix_law the reading's).
 * Registered nowhere: the tests run `check` and the exact enumeration on
 * it (tests/test_check.c, tests/test_exact_greedy.c), which must flag it. */
#include "../verifiers/sd_greedy.h"

SD_GREEDY_READING(SD_GREEDY_AFTER_Y)

const sd_verifier_type sd_verifier_broken_greedy_after_y = {
    .name = "broken-greedy-after-y",
    .summary = "greedy block, eq. 31 read with the joint law from after Y (a control)",
    .flags = SD_VERIFIER_CONTROL,
    SD_GREEDY_READING_SLOTS,
};
