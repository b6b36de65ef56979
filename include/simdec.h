/* simdec.h — the one header a simdec plugin is compiled against.
 *
 * A plugin is a shared object that adds verifiers to simdec at run time:
 *     simdec run   --plugin my_verifier.so --algo my-verifier
 *     simdec check --plugin my_verifier.so --algo my-verifier
 * Each verifier is written exactly as one in sims/ (sims/engine/sd_verifier.h: a
 * name, a summary, its parameters, alloc and step; docs/adding-a-verifier.md),
 * and the file ends with one line naming them:
 *     SD_PLUGIN(&sd_verifier_mine, &sd_verifier_other);
 * which defines the symbol simdec looks for (sims/engine/sd_plugin.h).  Loading
 * checks the interface version, then every declaration, and registers the
 * verifiers under their names; every command then runs them like its own.
 *
 * Build it from a clone of simdec (this header includes the library's
 * headers by relative path), in the clone's top directory, with
 * `#include "simdec.h"` in my_verifier.c:
 *     cc -std=c11 -O2 -fPIC -shared -I include my_verifier.c -o my_verifier.so -lm
 * (`make examples` builds the two in examples/ this way).  Nothing else is
 * needed: Random123, which src/sd_rng.h includes, is header-only and in
 * the system's include path, and GSL, jansson and GLPK are not used by
 * these headers.  The library functions a plugin calls (sd_dist_sample,
 * sd_error_set, ...) are not linked into it: they resolve against the
 * simdec executable that loads it.  A plugin therefore loads into any
 * simdec of the same SD_PLUGIN_ABI, and must be rebuilt when that changes
 * (loading says so).
 *
 * What a plugin may use:
 *   - the verifier interface (sims/engine/sd_verifier.h): sd_verifier_type,
 *     sd_param_decl (SD_PARAM_GAMMA, SD_PARAM_DRAFTS, SD_PARAM_END, and for a
 *     token-tree verifier SD_PARAM_TREE("2,2") and SD_PARAM_DRAW(SD_DRAW_IID,
 *     "help") in own slot SD_TREE_SLOT_DRAW = 0, read back as par->tree,
 *     par->tree_depth and sd_param_choice(par, SD_TREE_SLOT_DRAW): then
 *     `lp tree-valid --compare` hands it the LP's shape and rule, and
 *     `eval accept-length` measures it; given as a tree rule,
 *     sd_verifier_type.tree_rule with sd_tree_view, simdec enumerates it
 *     exactly: docs/adding-a-verifier.md, examples/tree_rule.c; given as a
 *     rule at one node, sd_verifier_type.node_rule with sd_node_view,
 *     simdec composes it from the root down and enumerates it the same
 *     way: examples/node_rule.c),
 *     sd_params and the accessors sd_param_real, sd_param_count and
 *     sd_param_choice, sd_iter, sd_draft_len (src/sd_draft.h), the kernel
 *     and exact-value hooks;
 *   - the model (src/sd_chain.h): sd_chain, sd_chain_p, sd_chain_q;
 *   - probability vectors (src/sd_dist.h): sd_dist_sample,
 *     sd_dist_sample_residual, sd_dist_tv, sd_dist_residual, ...;
 *   - random numbers (src/sd_rng.h): sd_stream_uniform, sd_stream_u32 —
 *     the only source of randomness a verifier may use, so runs are
 *     reproducible and independent of the thread count;
 *   - errors (src/sd_error.h): sd_error_set.
 *
 * Names: the dynamic linker looks a plugin's globals up in simdec first,
 * so a global named like one of simdec's is simdec's (a copy of
 * sims/verifiers/token.c keeping `sd_verifier_token` would list the built-in
 * verifier; loading refuses it).  Give the verifier types names of your
 * own, as sd_verifier_my_verifier, and make everything else static. */
#ifndef SIMDEC_H
#define SIMDEC_H

#include "../src/sd_chain.h"
#include "../src/sd_dist.h"
#include "../src/sd_error.h"
#include "../src/sd_rng.h"
#include "../sims/engine/sd_plugin.h"
#include "../sims/engine/sd_verifier.h"

/* The symbol simdec looks for in a plugin (defined by SD_PLUGIN). */
#if defined(__GNUC__) || defined(__clang__)
#define SD_PLUGIN_EXPORT __attribute__((visibility("default")))
#else
#define SD_PLUGIN_EXPORT
#endif
extern SD_PLUGIN_EXPORT const sd_plugin simdec_plugin;

/* SD_PLUGIN(&sd_verifier_a, &sd_verifier_b, ...);  — at file scope, once
 * per plugin, after the verifiers: defines simdec_plugin with the interface
 * version this header describes and the NULL-terminated list of the given
 * verifiers (a compound literal, which at file scope has static storage).
 * At least one verifier must be named. */
#define SD_PLUGIN(...)                                                                             \
    SD_PLUGIN_EXPORT const sd_plugin simdec_plugin = {                                             \
        SD_PLUGIN_ABI, (const sd_verifier_type *const[]){__VA_ARGS__, NULL}}

#endif
