/* sd_tree_rule.c — verifiers written as tree rules (sd_tree.h,
 * sd_tree_rule_attach): a rule given at run time, a plugin's
 * (sd_verifier_type.tree_rule) or a Python verifier's
 * (sims/engine/sd_callback.h), becomes a tree verifier of rule
 * SD_TREE_CALLBACK, whose step (sd_tree_verifier_step_own: draft, call the
 * rule, sample its outcome), exact values and iteration law
 * (sims/exact/sd_exact_tree.h: the rule's outcome summed over every drafted
 * tree) are those of every tree verifier. */
#include "sd_tree.h"

#include <string.h>

#include "../exact/sd_exact_tree.h"

/* --- verifiers written as tree rules (sd_tree_rule_attach) ------------------------ */

/* One kind per attached verifier, at a fixed address for the process's life
 * (the registry keeps the verifier, the verifier its kind).  alloc, exact
 * and iteration_law receive no pointer to their type, so each slot has its
 * own, which hands the slot's kind on. */
typedef struct S_rule {
    sd_tree_kind kind;
    const sd_verifier_type *vt;
} S_rule;
static S_rule S_rules[SD_TREE_RULE_MAX];
static size_t S_nrules;

#define S_RULE_FNS(i)                                                                                        \
    static int S_ralloc_##i(void **state, const sd_chain *c, const sd_params *par, sd_error *err)            \
    {                                                                                                        \
        return sd_tree_verifier_alloc(state, c, par, &S_rules[i].kind, err);                                 \
    }                                                                                                        \
    static int S_rexact_##i(const sd_model *m, const sd_params *par, sd_exact_values *out, sd_error *err)    \
    {                                                                                                        \
        return sd_tree_verifier_exact(m, par, &S_rules[i].kind, out, err);                                   \
    }                                                                                                        \
    static int S_rlaw_##i(const sd_chain *c, const sd_params *par, size_t n, size_t prev,                    \
                          struct sd_iter_law *out, sd_error *err)                                            \
    {                                                                                                        \
        return sd_tree_verifier_law(c, par, &S_rules[i].kind, n, prev, out, err);                            \
    }
#define S_RULE_FNS8(a, b, c, d, e, f, g, h)                                                                  \
    S_RULE_FNS(a) S_RULE_FNS(b) S_RULE_FNS(c) S_RULE_FNS(d) S_RULE_FNS(e) S_RULE_FNS(f) S_RULE_FNS(g)         \
    S_RULE_FNS(h)
S_RULE_FNS8(0, 1, 2, 3, 4, 5, 6, 7)
S_RULE_FNS8(8, 9, 10, 11, 12, 13, 14, 15)
S_RULE_FNS8(16, 17, 18, 19, 20, 21, 22, 23)
S_RULE_FNS8(24, 25, 26, 27, 28, 29, 30, 31)
S_RULE_FNS8(32, 33, 34, 35, 36, 37, 38, 39)
S_RULE_FNS8(40, 41, 42, 43, 44, 45, 46, 47)
S_RULE_FNS8(48, 49, 50, 51, 52, 53, 54, 55)
S_RULE_FNS8(56, 57, 58, 59, 60, 61, 62, 63)
_Static_assert(SD_TREE_RULE_MAX == 64, "one set of slot functions per rule");

#define S_ROW(i) {S_ralloc_##i, S_rexact_##i, S_rlaw_##i}
#define S_ROW8(a, b, c, d, e, f, g, h) S_ROW(a), S_ROW(b), S_ROW(c), S_ROW(d), S_ROW(e), S_ROW(f), S_ROW(g), S_ROW(h)
static const struct {
    int (*alloc)(void **, const sd_chain *, const sd_params *, sd_error *);
    int (*exact)(const sd_model *, const sd_params *, sd_exact_values *, sd_error *);
    int (*law)(const sd_chain *, const sd_params *, size_t, size_t, struct sd_iter_law *, sd_error *);
} S_rule_fns[SD_TREE_RULE_MAX] = {
    S_ROW8(0, 1, 2, 3, 4, 5, 6, 7),         S_ROW8(8, 9, 10, 11, 12, 13, 14, 15),
    S_ROW8(16, 17, 18, 19, 20, 21, 22, 23), S_ROW8(24, 25, 26, 27, 28, 29, 30, 31),
    S_ROW8(32, 33, 34, 35, 36, 37, 38, 39), S_ROW8(40, 41, 42, 43, 44, 45, 46, 47),
    S_ROW8(48, 49, 50, 51, 52, 53, 54, 55), S_ROW8(56, 57, 58, 59, 60, 61, 62, 63),
};

/* A plugin's rule: the sd_verifier_type.tree_rule of user. */
static int S_plugin_rule(void *user, const sd_chain *c, const sd_params *par, const sd_tree_view *tree, double *pi,
                         double *law, sd_error *err)
{
    const sd_verifier_type *vt = user;
    return vt->tree_rule(c, par, tree, pi, law, err);
}

int sd_tree_rule_attach(sd_verifier_type *vt, sd_tree_rule_call call, void *user, unsigned draws, sd_error *err)
{
    static const char *const own[] = {"alloc", "free", "exact", "kernels", "iteration_law", "prefix_law",
                                      "given_output", "tree", "trace"};
    const int set[] = {vt->alloc != NULL,      vt->free != NULL,         vt->exact != NULL,
                       vt->kernels != NULL,    vt->iteration_law != NULL, vt->prefix_law != NULL,
                       vt->given_output != NULL, vt->tree != NULL,        vt->trace != NULL};
    size_t i;
    for (i = 0; i < S_nrules && S_rules[i].vt != vt; i++)
        ;
    /* a plugin's type: the slots simdec fills must be empty (a Python
     * verifier's, built by sd_callback.c, has its own alloc and step,
     * replaced here) */
    int checked = call != NULL || i < S_nrules;
    for (size_t j = 0; j < sizeof own / sizeof *own && !checked; j++)
        if (set[j])
            return sd_error_set(err, SD_EDATA, "verifier '%s': a tree rule is given, so simdec supplies %s; "
                                "expected it NULL", vt->name, own[j]);
    if (!checked && vt->step)
        return sd_error_set(err, SD_EDATA, "verifier '%s': a tree rule is given, so simdec supplies step; "
                            "expected it NULL", vt->name);
    if (!call && !vt->tree_rule)
        return sd_error_set(err, SD_EDATA, "verifier '%s': no tree rule", vt->name);
    const sd_param_decl *dt = NULL, *dd = NULL;
    for (const sd_param_decl *d = vt->params; d && d->name; d++) {
        if (!strcmp(d->name, "tree") && d->kind == SD_PARAM_SHAPE)
            dt = d;
        if (!strcmp(d->name, "draw") && d->kind == SD_PARAM_CHOICE && d->slot == SD_TREE_SLOT_DRAW)
            dd = d;
    }
    if (!dt || !dd)
        return sd_error_set(err, SD_EDATA, "verifier '%s': a tree rule needs the parameters tree and draw "
                            "(SD_PARAM_TREE, SD_PARAM_DRAW in own slot %d)", vt->name, SD_TREE_SLOT_DRAW);
    int again = i < S_nrules;
    if (!again && S_nrules == SD_TREE_RULE_MAX)
        return sd_error_set(err, SD_ETOOBIG, "verifier '%s': more than %d verifiers given as tree rules", vt->name,
                            SD_TREE_RULE_MAX);
    if (!again)
        S_nrules++;
    S_rule *r = &S_rules[i];
    unsigned all = (1u << SD_DRAW_IID) | (1u << SD_DRAW_WOR) | (1u << SD_DRAW_TOPK);
    r->vt = vt;
    r->kind = (sd_tree_kind){.name = vt->name,
                             .rule = SD_TREE_CALLBACK,
                             .draws = draws & all ? draws & all : all,
                             .why_not = "its tree rule does not support this drafting rule",
                             .call = call ? call : S_plugin_rule,
                             .user = call ? user : (void *)vt};
    vt->alloc = S_rule_fns[i].alloc;
    vt->free = sd_tree_verifier_free;
    vt->step = sd_tree_verifier_step_own;
    vt->exact = S_rule_fns[i].exact;
    vt->iteration_law = S_rule_fns[i].law;
    vt->tree = &r->kind;
    return SD_OK;
}
