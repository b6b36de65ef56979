/* sd_callback.c — verifiers whose iteration is a function given at run
 * time (sd_callback.h). */
#include "sd_callback.h"

#include <stdlib.h>
#include <string.h>

#include "sd_params.h"
#include "../verifiers/sd_node_rule.h"

/* One registered callback verifier.  The type lives here, at a fixed
 * address, for the life of the process (the registry keeps the pointer). */
typedef struct S_slot {
    sd_verifier_type vt;
    sd_param_decl decl[SD_PARAMS_MAX + 3];
    char *strings[3 * (SD_PARAMS_MAX + 2) + 2]; /* owned copies */
    size_t nstrings;
    sd_callback_step_fn fn;
    void *user;
    sd_callback_tree_fn tree_fn; /* sd_callback_tree_rule, or NULL */
    void *tree_user;
    sd_callback_node_fn node_fn; /* sd_callback_node_rule, or NULL */
    void *node_user;
    int used;
} S_slot;

static S_slot S_slots[SD_CALLBACK_MAX];

/* alloc() receives no pointer to its type, so each slot has its own alloc,
 * which hands the slot to step() as the state. */
#define S_ALLOC(i)                                                                                 \
    static int S_alloc_##i(void **state, const sd_chain *c, const sd_params *par, sd_error *err)  \
    {                                                                                              \
        (void)c, (void)par, (void)err;                                                             \
        *state = &S_slots[i];                                                                      \
        return SD_OK;                                                                              \
    }
S_ALLOC(0) S_ALLOC(1) S_ALLOC(2) S_ALLOC(3) S_ALLOC(4) S_ALLOC(5) S_ALLOC(6) S_ALLOC(7)
S_ALLOC(8) S_ALLOC(9) S_ALLOC(10) S_ALLOC(11) S_ALLOC(12) S_ALLOC(13) S_ALLOC(14) S_ALLOC(15)
S_ALLOC(16) S_ALLOC(17) S_ALLOC(18) S_ALLOC(19) S_ALLOC(20) S_ALLOC(21) S_ALLOC(22) S_ALLOC(23)
S_ALLOC(24) S_ALLOC(25) S_ALLOC(26) S_ALLOC(27) S_ALLOC(28) S_ALLOC(29) S_ALLOC(30) S_ALLOC(31)

typedef int (*S_alloc_fn)(void **, const sd_chain *, const sd_params *, sd_error *);
static const S_alloc_fn S_allocs[SD_CALLBACK_MAX] = {
    S_alloc_0,  S_alloc_1,  S_alloc_2,  S_alloc_3,  S_alloc_4,  S_alloc_5,  S_alloc_6,
    S_alloc_7,  S_alloc_8,  S_alloc_9,  S_alloc_10, S_alloc_11, S_alloc_12, S_alloc_13,
    S_alloc_14, S_alloc_15, S_alloc_16, S_alloc_17, S_alloc_18, S_alloc_19, S_alloc_20,
    S_alloc_21, S_alloc_22, S_alloc_23, S_alloc_24, S_alloc_25, S_alloc_26, S_alloc_27,
    S_alloc_28, S_alloc_29, S_alloc_30, S_alloc_31,
};
_Static_assert(SD_CALLBACK_MAX == 32, "one alloc per slot");

/* The checks the engine relies on (sd_verifier_type.step's contract),
 * made before it sees the iteration: a foreign function's mistakes become
 * messages. */
static int S_step(void *state, const sd_chain *c, const sd_params *par, sd_stream *rng, size_t n,
                  size_t prev, size_t *out, sd_iter *it, sd_error *err)
{
    const S_slot *s = state;
    size_t cap = c->T - n + 1, accepted = 0;
    int rejected = 0;
    unsigned calls = 1;
    long e = s->fn(s->user, c, par, rng, n, prev, out, cap, &accepted, &rejected, &calls);
    if (e < 1)
        return sd_error_set(err, SD_EINTERNAL, "verifier %s: its step function failed at position %zu",
                            s->vt.name, n);
    if ((size_t)e > cap)
        return sd_error_set(err, SD_EINTERNAL,
                            "verifier %s: step returned %ld tokens at position %zu; at most %zu "
                            "fit before the horizon",
                            s->vt.name, e, n, cap);
    for (long i = 0; i < e; i++)
        if (out[i] >= c->V)
            return sd_error_set(err, SD_EINTERNAL,
                                "verifier %s: step returned token %zu at position %zu; expected 0..%zu",
                                s->vt.name, out[i], n + (size_t)i, c->V - 1);
    if (rejected != 0 && rejected != 1)
        return sd_error_set(err, SD_EINTERNAL, "verifier %s: step returned rejected = %d; expected 0 or 1",
                            s->vt.name, rejected);
    it->emitted = (size_t)e;
    it->accepted = accepted;
    it->rejected = rejected;
    it->target_calls = calls;
    return SD_OK;
}

static int S_lossy(const sd_params *par)
{
    (void)par;
    return 0;
}

static void S_clear(S_slot *s)
{
    for (size_t i = 0; i < s->nstrings; i++)
        free(s->strings[i]);
    s->nstrings = 0;
}

/* A copy owned by the slot (NULL stays NULL). */
static const char *S_keep(S_slot *s, const char *text, int *oom)
{
    if (!text)
        return NULL;
    char *copy = strdup(text);
    if (!copy)
        *oom = 1;
    else
        s->strings[s->nstrings++] = copy;
    return copy;
}

int sd_callback_add(const char *name, const char *summary, const sd_callback_param *params,
                    size_t nparams, int claims_lossless, int control, sd_callback_step_fn fn,
                    void *user, sd_error *err)
{
    if (!name || !*name || !fn)
        return sd_error_set(err, SD_EUSAGE, "a verifier needs a name and a step function");
    if (nparams > SD_PARAMS_MAX + 2)
        return sd_error_set(err, SD_EUSAGE, "verifier %s: %zu parameters; at most %d of its own plus "
                            "gamma and the number of drafts", name, nparams, SD_PARAMS_MAX);
    /* The slot: the one already holding this name (replaced), else a free one. */
    S_slot *s = NULL;
    size_t i;
    for (i = 0; i < SD_CALLBACK_MAX && !s; i++)
        if (S_slots[i].used && strcmp(S_slots[i].vt.name, name) == 0)
            s = &S_slots[i];
    const int replacing = s != NULL;
    if (!s && sd_verifier_find(name))
        return sd_error_set(err, SD_EUSAGE, "verifier '%s' is already defined (see 'simdec run --list')",
                            name);
    for (i = 0; i < SD_CALLBACK_MAX && !s; i++)
        if (!S_slots[i].used)
            s = &S_slots[i];
    if (!s)
        return sd_error_set(err, SD_ETOOBIG, "more than %d verifiers added at run time", SD_CALLBACK_MAX);
    size_t index = (size_t)(s - S_slots);

    /* Build the new type beside the slot, check it, then install it. */
    S_slot fresh;
    memset(&fresh, 0, sizeof fresh);
    int oom = 0, own = 0;
    /* draw, when declared, takes own slot 0 as in every tree verifier
     * (SD_TREE_SLOT_DRAW): the tree commands read the rule there. */
    for (size_t j = 0; j < nparams; j++)
        if (params[j].name && strcmp(params[j].name, "draw") == 0)
            own = 1;
    fresh.vt.name = S_keep(&fresh, name, &oom);
    fresh.vt.summary = S_keep(&fresh, summary && *summary ? summary : "a verifier added at run time", &oom);
    for (size_t j = 0; j < nparams; j++) {
        const sd_callback_param *p = &params[j];
        sd_param_decl *d = &fresh.decl[j];
        if (!p->name || !*p->name) {
            S_clear(&fresh);
            return sd_error_set(err, SD_EUSAGE, "verifier %s: parameter %zu has no name", name, j);
        }
        if (strcmp(p->name, "gamma") == 0) {
            *d = (sd_param_decl)SD_PARAM_GAMMA;
        } else if (strcmp(p->name, "k") == 0 || strcmp(p->name, "M") == 0) {
            *d = (sd_param_decl)SD_PARAM_DRAFTS("k");
            d->name = S_keep(&fresh, p->name, &oom);
        } else if (strcmp(p->name, "tree") == 0) {
            *d = (sd_param_decl)SD_PARAM_TREE("2,2");
            if (p->choices && *p->choices)
                d->choices = S_keep(&fresh, p->choices, &oom);
        } else if (strcmp(p->name, "draw") == 0) {
            *d = (sd_param_decl)SD_PARAM_DRAW(0, "drafting rule of the children: iid, wor or topk");
            d->def = p->def;
        } else {
            *d = (sd_param_decl){.name = S_keep(&fresh, p->name, &oom),
                                 .kind = (sd_param_kind)p->kind,
                                 .slot = own++,
                                 .def = p->def,
                                 .min = p->min,
                                 .max = p->max,
                                 .choices = S_keep(&fresh, p->choices, &oom),
                                 .help = S_keep(&fresh, p->help ? p->help : "", &oom)};
        }
    }
    fresh.decl[nparams] = (sd_param_decl)SD_PARAM_END;
    fresh.vt.params = fresh.decl;
    fresh.vt.claims_lossless = claims_lossless ? NULL : S_lossy;
    fresh.vt.alloc = S_allocs[index];
    fresh.vt.step = S_step;
    fresh.vt.flags = control ? SD_VERIFIER_CONTROL : 0;
    fresh.fn = fn;
    fresh.user = user;
    fresh.used = 1;
    int rc = oom ? sd_error_set(err, SD_ENOMEM, "verifier %s: out of memory", name)
                 : sd_params_check_decls(&fresh.vt, err);
    if (rc) {
        S_clear(&fresh);
        return rc;
    }
    /* The registry keeps &s->vt; the fields are replaced in place (the
     * declarations moved into the slot's own array). */
    S_clear(s);
    *s = fresh;
    s->vt.params = s->decl;
    if (!replacing && (rc = sd_verifier_add(&s->vt, name, err)) != SD_OK) {
        S_clear(s);
        memset(s, 0, sizeof *s);
    }
    return rc;
}

/* The kind's call (sd_tree_rule_call): the slot's tree function. */
static int S_tree_call(void *user, const sd_chain *c, const sd_params *par, const sd_tree_view *tree, double *pi,
                       double *law, sd_error *err)
{
    const S_slot *s = user;
    if (s->tree_fn(s->tree_user, c, par, tree, pi, law) < 0)
        return sd_error_set(err, SD_EINTERNAL, "verifier %s: its tree rule failed at position %zu after token %zu",
                            s->vt.name, tree->t, tree->tok[0]);
    return SD_OK;
}

int sd_callback_tree_rule(const char *name, unsigned draws, sd_callback_tree_fn fn, void *user, sd_error *err)
{
    S_slot *s = NULL;
    for (size_t i = 0; i < SD_CALLBACK_MAX && !s; i++)
        if (S_slots[i].used && name && strcmp(S_slots[i].vt.name, name) == 0)
            s = &S_slots[i];
    if (!s || !fn)
        return sd_error_set(err, SD_EUSAGE, "a tree rule for '%s': expected a verifier added at run time and a "
                            "function", name ? name : "(null)");
    /* attach changes nothing when it refuses (no tree or draw declared) */
    int rc = sd_tree_rule_attach(&s->vt, S_tree_call, s, draws, err);
    if (!rc) {
        s->tree_fn = fn;
        s->tree_user = user;
        rc = sd_node_rule_cost(&s->vt, SD_CALLBACK_CALL_COST, 0, err);
    }
    return rc;
}

/* The node rule's call (sd_node_rule_call): the slot's node function. */
static int S_node_call(void *user, const sd_chain *c, const sd_params *par, const sd_node_view *node, double *go,
                       double *residual, sd_error *err)
{
    const S_slot *s = user;
    if (s->node_fn(s->node_user, c, par, node, go, residual) < 0)
        return sd_error_set(err, SD_EINTERNAL, "verifier %s: its node rule failed at depth %zu, position %zu "
                            "after token %zu", s->vt.name, node->depth, node->t, node->path[node->depth]);
    return SD_OK;
}

int sd_callback_node_rule(const char *name, unsigned draws, sd_callback_node_fn fn, void *user, sd_error *err)
{
    S_slot *s = NULL;
    for (size_t i = 0; i < SD_CALLBACK_MAX && !s; i++)
        if (S_slots[i].used && name && strcmp(S_slots[i].vt.name, name) == 0)
            s = &S_slots[i];
    if (!s || !fn)
        return sd_error_set(err, SD_EUSAGE, "a node rule for '%s': expected a verifier added at run time and a "
                            "function", name ? name : "(null)");
    int rc = sd_node_rule_attach(&s->vt, S_node_call, s, draws, err);
    if (!rc) {
        s->node_fn = fn;
        s->node_user = user;
        rc = sd_node_rule_cost(&s->vt, SD_CALLBACK_CALL_COST, 1, err);
    }
    return rc;
}

size_t sd_callback_vocab(const sd_chain *c)
{
    return c->V;
}

size_t sd_callback_horizon(const sd_chain *c)
{
    return c->T;
}

const double *sd_callback_rows(const sd_chain *c, int target, size_t *steps)
{
    *steps = target ? c->target_steps : c->draft_steps;
    return target ? c->target : c->draft;
}

double sd_callback_uniform(sd_stream *rng)
{
    return sd_stream_uniform(rng);
}

size_t sd_callback_tree(const sd_params *par, size_t *shape, size_t cap)
{
    for (size_t l = 0; l < par->tree_depth && l < cap; l++)
        shape[l] = par->tree[l];
    return par->tree_depth;
}

double sd_callback_param_value(const sd_params *par, int slot)
{
    if (slot == SD_SLOT_GAMMA)
        return (double)par->gamma;
    if (slot == SD_SLOT_K)
        return (double)par->k;
    return slot >= 0 && slot < SD_PARAMS_MAX ? par->v[slot] : 0.0;
}
