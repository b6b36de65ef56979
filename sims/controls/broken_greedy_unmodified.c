/* broken_greedy_unmodified.c — a deliberately broken control: greedy block verification
 * (sims/verifiers/greedy_block.c) with Alg. 4 alone, without the
 * distribution modification of Alg. 5: Sun et al. 2025, App. C show it
 * biased (P(x_1 x_2 = BA) = 1/3 instead of 2/9 on their toy model).
 * It is greedy-block with another reading of Sun et al. 2025, Alg. 5
 * (the hook SD_GREEDY_READING of sd_greedy.h: the parameters, step, free
 * and begin are greedy-block's, alloc, exact and prefix_law the reading's).
 * Registered nowhere: the tests run `check` and the exact enumeration on
 * it (tests/test_check.c, tests/test_exact_greedy.c), which must flag it. */
#include "../verifiers/sd_greedy.h"

SD_GREEDY_READING(SD_GREEDY_UNMODIFIED)

const sd_verifier_type sd_verifier_broken_greedy_unmodified = {
    .name = "broken-greedy-unmodified",
    .summary = "greedy block (Sun et al. 2025, Alg. 4) without the distribution modification (a control)",
    .flags = SD_VERIFIER_CONTROL,
    SD_GREEDY_READING_SLOTS,
};
