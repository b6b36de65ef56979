/* broken_greedy_tokenwise.c — a deliberately broken control: greedy block verification
 * (sims/verifiers/greedy_block.c) with eq. 31 read per token, as the
 * residual [Mb(x|.) - Ms(x|.)]+ of each position instead of the joint
 * laws of the block: the output is biased.
 * It is greedy-block with another reading of Sun et al. 2025, Alg. 5
 * (the hook SD_GREEDY_READING of sd_greedy.h: the parameters, step, free
 * and begin are greedy-block's, alloc, exact and prefix_law the reading's).
 * Registered nowhere: the tests run `check` and the exact enumeration on
 * it (tests/test_check.c, tests/test_exact_greedy.c), which must flag it. */
#include "../verifiers/sd_greedy.h"

SD_GREEDY_READING(SD_GREEDY_TOKENWISE)

const sd_verifier_type sd_verifier_broken_greedy_tokenwise = {
    .name = "broken-greedy-tokenwise",
    .summary = "greedy block, eq. 31 read per token (a control)",
    .flags = SD_VERIFIER_CONTROL,
    SD_GREEDY_READING_SLOTS,
};
