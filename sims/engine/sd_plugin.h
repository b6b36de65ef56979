/* sd_plugin.h — verifiers loaded at run time from shared objects.
 *
 * A plugin is a shared object compiled against include/simdec.h that
 * defines the symbol
 *     const sd_plugin simdec_plugin = { SD_PLUGIN_ABI, verifiers };
 * (the macro SD_PLUGIN(...) of include/simdec.h writes it).  Loading checks
 * the ABI version, then every verifier's declaration
 * (sd_params_check_decls), and registers them (sd_verifier_add) so that
 * every command finds them by name. */
#ifndef SD_PLUGIN_H
#define SD_PLUGIN_H

#include "sd_verifier.h"

/* The version of the plugin interface: sd_verifier_type, sd_param_decl,
 * sd_params, sd_iter, sd_chain and the inline helpers of include/simdec.h.
 * Any change to their layout or meaning increments it. */
#define SD_PLUGIN_ABI 8u /* 2: sd_params.tree, SD_PARAM_SHAPE; 3: sd_verifier_type.prefix_law,
                             given_output; 4: sd_verifier_type.tree; 5: sd_verifier_type.trace;
                             6: sd_verifier_type.tree_rule, tree_draws (sd_tree_view);
                             7: sd_verifier_type.node_rule (sd_node_view); 8: sd_trace_pos.rng,
                             estimate, estimated (appended: a 7 plugin's trace law ignores them) */
/* The oldest version still loaded: 5, whose sd_verifier_type is 7's
 * without the last three fields, and 6, without the last one (read up to
 * them, the rest taken as NULL). */
#define SD_PLUGIN_ABI_OLDEST 5u

typedef struct sd_plugin {
    unsigned abi;                          /* SD_PLUGIN_ABI at compile time */
    const sd_verifier_type *const *verifiers; /* NULL-terminated */
} sd_plugin;

/* Loads the plugin at path and registers its verifiers.
 *   SD_EIO    the file cannot be opened (missing, unreadable, a
 *             directory): exit 66;
 *   SD_EDATA  it is not a shared object simdec can load (not ELF, another
 *             machine, a symbol simdec does not export), has no data symbol
 *             simdec_plugin, was built for an ABI version other than
 *             SD_PLUGIN_ABI_OLDEST..SD_PLUGIN_ABI, lists no
 *             verifier, lists one whose C name is also simdec's (the
 *             dynamic linker would bind it to simdec's), or declares a bad
 *             or already known verifier: exit 65;
 *   SD_ETOOBIG  more than 256 plugin verifiers in all.
 * A verifier giving a tree rule (sd_verifier_type.tree_rule) is
 * completed by sd_tree_rule_attach (sims/verifiers/sd_tree.h), one giving
 * a node rule (node_rule) by sd_node_rule_attach (sd_node_rule.h); each
 * refuses (SD_EDATA) one that also sets the slots simdec fills.  What is
 * registered is simdec's copy of each verifier type (so a version-5 type
 * is never read past its end).
 * The message is one line starting with "PATH: ".  A plugin is registered
 * whole or not at all (SD_ETOOBIG aside).  A path without '/' is the file in
 * the working directory (dlopen would search the system's libraries).
 * Loading the same file twice is harmless.  Not thread-safe: load plugins
 * before running anything.  Plugins stay loaded until the process ends.
 * The executable must export the library to plugins (linked with
 * -rdynamic and the whole of libsimdec.a, as the Makefile does). */
int sd_plugin_load(const char *path, sd_error *err);

#endif
