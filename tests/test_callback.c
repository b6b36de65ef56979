/* test_callback.c — verifiers whose step is a function given at run time
 * (sims/engine/sd_callback.h, the door of the Python interface): the engine runs
 * them with the same streams as any verifier (bit-identical to the
 * example plugin written the same way), and what a faulty function returns
 * is refused with a message before the engine uses it. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "../sims/engine/sd_callback.h"
#include "../sims/engine/sd_params.h"
#include "../sims/engine/sd_plugin.h"
#include "../sims/engine/sd_sim.h"
#include "../src/sd_dist.h"
#include "test_util.h"

#ifndef SD_EXAMPLES_DIR
#define SD_EXAMPLES_DIR "build/examples"
#endif

/* examples/my_verifier.c's step behind the callback signature. */
static long S_one_draft(void *user, const sd_chain *c, const sd_params *par, sd_stream *rng, size_t n,
                        size_t prev, size_t *out, size_t cap, size_t *accepted, int *rejected,
                        unsigned *calls)
{
    (void)user, (void)par, (void)cap, (void)calls;
    const double *p = sd_chain_p(c, n, prev), *q = sd_chain_q(c, n, prev);
    size_t x = sd_dist_sample(p, c->V, 1.0, sd_callback_uniform(rng));
    if (sd_callback_uniform(rng) * p[x] < q[x]) {
        out[0] = x;
        *accepted = 1;
        if (n < c->T) {
            out[1] = sd_dist_sample(sd_chain_q(c, n + 1, x), c->V, 1.0, sd_callback_uniform(rng));
            return 2;
        }
        return 1;
    }
    out[0] = sd_dist_sample_residual(p, q, c->V, sd_dist_tv(p, q, c->V), sd_callback_uniform(rng));
    *rejected = 1;
    return 1;
}

Test(callback, same_streams_as_the_plugin)
{
    sd_error e;
    cr_assert_eq(sd_callback_add("cb-one-draft", "test", NULL, 0, 1, 0, S_one_draft, NULL, &e), SD_OK, "%s",
                 e.msg);
    cr_assert_eq(sd_plugin_load(SD_EXAMPLES_DIR "/my_verifier.so", &e), SD_OK, "%s", e.msg);
    const sd_verifier_type *cb = sd_verifier_find("cb-one-draft"), *pl = sd_verifier_find("my-verifier");
    cr_assert(cb && pl);
    sd_chain *c = tu_chain(7, 20, 10);
    sd_params par;
    sd_params_defaults(&par, cb);
    /* The same numbers from the same streams: identical statistics,
     * whatever the thread counts (test_example.c checks the plugin against
     * the target law; python/tests checks callbacks written in Python). */
    sd_sim_opts one = {.seed = 9, .trials = 10000, .threads = 1}, two = one;
    two.threads = 2;
    sd_sim_result a, b;
    cr_assert_eq(sd_sim_run(cb, c, &par, &one, &a, &e), SD_OK, "%s", e.msg);
    cr_assert_eq(sd_sim_run(pl, c, &par, &two, &b, &e), SD_OK, "%s", e.msg);
    cr_expect(memcmp(&a.rejections, &b.rejections, sizeof a.rejections) == 0);
    cr_expect(memcmp(&a.target_calls, &b.target_calls, sizeof a.target_calls) == 0);
    cr_expect(memcmp(&a.accepted, &b.accepted, sizeof a.accepted) == 0);
    sd_sim_result_free(&a);
    sd_sim_result_free(&b);
    sd_chain_free(c);
}

/* Faulty step functions, selected by user: each return is one mistake. */
static long S_faulty(void *user, const sd_chain *c, const sd_params *par, sd_stream *rng, size_t n,
                     size_t prev, size_t *out, size_t cap, size_t *accepted, int *rejected,
                     unsigned *calls)
{
    (void)par, (void)rng, (void)n, (void)prev, (void)accepted, (void)calls;
    int kind = *(const int *)user;
    out[0] = kind == 2 ? c->V : 0;
    *rejected = kind == 3 ? 2 : 0;
    return kind == 0 ? -1 : kind == 1 ? (long)cap + 1 : 1;
}

Test(callback, faulty_returns_are_refused_with_a_message)
{
    static int kinds[] = {0, 1, 2, 3};
    static const char *const want[] = {
        "verifier cb-faulty: its step function failed at position 1",
        "verifier cb-faulty: step returned 6 tokens at position 1; at most 5 fit before the horizon",
        "verifier cb-faulty: step returned token 4 at position 1; expected 0..3",
        "verifier cb-faulty: step returned rejected = 2; expected 0 or 1",
    };
    sd_chain *c = tu_chain(4, 5, 1);
    for (size_t i = 0; i < 4; i++) {
        sd_error e;
        /* The same name again replaces the function (a cell run twice). */
        cr_assert_eq(sd_callback_add("cb-faulty", NULL, NULL, 0, 1, 0, S_faulty, &kinds[i], &e),
                     SD_OK, "%s", e.msg);
        const sd_verifier_type *vt = sd_verifier_find("cb-faulty");
        sd_params par;
        sd_params_defaults(&par, vt);
        sd_sim_opts so = {.seed = 1, .trials = 10, .threads = 1};
        sd_sim_result r;
        cr_expect_eq(sd_sim_run(vt, c, &par, &so, &r, &e), SD_EINTERNAL);
        cr_expect_str_eq(e.msg, want[i]);
    }
    sd_chain_free(c);
}

Test(callback, declarations_and_names)
{
    sd_error e;
    sd_callback_param ok[] = {{"gamma", 0, 0, 0, 0, NULL, NULL},
                              {"eps", SD_PARAM_REAL, 0.1, 0.0, 1.0, NULL, "slack"},
                              {"rule", SD_PARAM_CHOICE, 1, 0, 0, "a|b", "a rule"}};
    cr_assert_eq(sd_callback_add("cb-params", "test", ok, 3, 0, 1, S_one_draft, NULL, &e), SD_OK, "%s", e.msg);
    const sd_verifier_type *vt = sd_verifier_find("cb-params");
    sd_params par;
    sd_params_defaults(&par, vt);
    cr_expect_eq(sd_callback_param_value(&par, SD_SLOT_GAMMA), 0.0);
    cr_expect_eq(sd_callback_param_value(&par, 0), 0.1);
    cr_expect_eq(sd_callback_param_value(&par, 1), 1.0);
    cr_expect(!sd_verifier_claims_lossless(vt, &par));
    cr_expect(vt->flags & SD_VERIFIER_CONTROL);
    cr_expect_eq(sd_params_parse(&par, vt, "eps", "2", &e), SD_EUSAGE);
    cr_expect_str_eq(e.msg, "--eps: 2 is out of range; expected 0 to 1");

    /* A bad declaration (an empty range) is refused and registers nothing. */
    sd_callback_param bad[] = {{"eps", SD_PARAM_REAL, 0.5, 1.0, 0.0, NULL, "x"}};
    cr_expect_neq(sd_callback_add("cb-bad", "test", bad, 1, 1, 0, S_one_draft, NULL, &e), SD_OK);
    cr_expect_null(sd_verifier_find("cb-bad"));
    /* A built-in name is not taken over. */
    cr_expect_eq(sd_callback_add("token", "test", NULL, 0, 1, 0, S_one_draft, NULL, &e), SD_EUSAGE);
    cr_expect_str_eq(e.msg, "verifier 'token' is already defined (see 'simdec run --list')");
}

/* A choice word is chosen by its whole name, so every word must fit the
 * parser's buffers (63 characters): a 63-character word is registered,
 * chosen by its name and listed whole in the error for a bad choice; a
 * 64-character one is refused at declaration (it used to be accepted, cut
 * to 63 characters, and could not be chosen by its name). */
Test(callback, choice_words_up_to_63_characters)
{
    char choices[2 + 64 + 1] = "a|", word[64 + 1];
    memset(word, 'w', 64);
    word[63] = '\0';
    strcat(choices, word);
    sd_error e;
    sd_callback_param ok[] = {{"rule", SD_PARAM_CHOICE, 0, 0, 0, choices, "a rule"}};
    cr_assert_eq(sd_callback_add("cb-long-choice", "test", ok, 1, 0, 1, S_one_draft, NULL, &e), SD_OK, "%s", e.msg);
    const sd_verifier_type *vt = sd_verifier_find("cb-long-choice");
    sd_params par;
    sd_params_defaults(&par, vt);
    cr_expect_eq(sd_params_parse(&par, vt, "rule", word, &e), SD_OK, "%s", e.msg);
    cr_expect_eq(sd_callback_param_value(&par, 0), 1.0);
    char want[160];
    snprintf(want, sizeof want, "--rule: expected 'a' or '%s', got 'b'", word);
    cr_expect_eq(sd_params_parse(&par, vt, "rule", "b", &e), SD_EUSAGE);
    cr_expect_str_eq(e.msg, want);

    word[63] = 'w';
    word[64] = '\0';
    strcpy(choices + 2, word);
    cr_expect_eq(sd_callback_add("cb-longer-choice", "test", ok, 1, 0, 1, S_one_draft, NULL, &e), SD_EDATA);
    cr_expect(tu_contains(e.msg, "parameter 'rule': a choice word of 64 characters; expected 1 to 63"), "%s", e.msg);
    cr_expect_null(sd_verifier_find("cb-longer-choice"));
    /* one word is a (trivial) choice list; an empty word is not a word */
    sd_callback_param one[] = {{"rule", SD_PARAM_CHOICE, 0, 0, 0, "only", "a rule"}};
    cr_expect_eq(sd_callback_add("cb-one-choice", "test", one, 1, 0, 1, S_one_draft, NULL, &e), SD_OK, "%s", e.msg);
    one[0].choices = "a||b";
    cr_expect_eq(sd_callback_add("cb-empty-choice", "test", one, 1, 0, 1, S_one_draft, NULL, &e), SD_EDATA);
    cr_expect(tu_contains(e.msg, "a choice word of 0 characters"), "%s", e.msg);
}

/* SD_CALLBACK_MAX verifiers can be added (every slot, the first included);
 * one more is refused; adding a name again replaces its verifier in its
 * slot, whichever slot that is, even when all are taken. */
Test(callback, every_slot_is_used_and_a_name_added_again_is_replaced)
{
    sd_error e;
    char name[32];
    for (int i = 0; i < SD_CALLBACK_MAX; i++) {
        snprintf(name, sizeof name, "cb-slot-%d", i);
        cr_assert_eq(sd_callback_add(name, "test", NULL, 0, 1, 0, S_one_draft, NULL, &e), SD_OK, "%s: %s", name,
                     e.msg);
    }
    cr_expect_eq(sd_callback_add("cb-one-too-many", "test", NULL, 0, 1, 0, S_one_draft, NULL, &e), SD_ETOOBIG);
    cr_expect_str_eq(e.msg, "more than 32 verifiers added at run time");
    const sd_verifier_type *first = sd_verifier_find("cb-slot-0");
    cr_assert_not_null(first);
    cr_expect_eq(sd_callback_add("cb-slot-0", "replaced", NULL, 0, 1, 0, S_one_draft, NULL, &e), SD_OK, "%s", e.msg);
    cr_expect_eq(sd_verifier_find("cb-slot-0"), first);
    cr_expect_str_eq(first->summary, "replaced");
}
