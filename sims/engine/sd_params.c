/* sd_params.c — verifier parameters from their declarations (sd_params.h). */
#include "sd_params.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/sd_parse.h"

size_t sd_params_count(const sd_verifier_type *vt)
{
    size_t n = 0;
    if (vt && vt->params)
        while (vt->params[n].name)
            n++;
    return n;
}

const sd_param_decl *sd_params_decl(const sd_verifier_type *vt, const char *name, size_t *index)
{
    size_t n = sd_params_count(vt);
    for (size_t i = 0; i < n; i++)
        if (strcmp(vt->params[i].name, name) == 0) {
            if (index)
                *index = i;
            return &vt->params[i];
        }
    return NULL;
}

void sd_params_store(sd_params *par, const sd_param_decl *d, double x)
{
    if (d->slot == SD_SLOT_GAMMA)
        par->gamma = (size_t)x;
    else if (d->slot == SD_SLOT_K)
        par->k = (size_t)x;
    else if (d->slot == SD_SLOT_TREE) {
        par->tree_depth = 1; /* the shape "x" */
        par->tree[0] = (size_t)x;
    } else if (d->slot >= 0 && d->slot < SD_PARAMS_MAX)
        par->v[d->slot] = x;
}

double sd_params_value(const sd_params *par, const sd_param_decl *d)
{
    if (d->slot == SD_SLOT_GAMMA)
        return (double)par->gamma;
    if (d->slot == SD_SLOT_K)
        return (double)par->k;
    if (d->slot == SD_SLOT_TREE)
        return (double)sd_params_tree_nodes(par);
    return (d->slot >= 0 && d->slot < SD_PARAMS_MAX) ? par->v[d->slot] : NAN;
}

size_t sd_params_tree_nodes(const sd_params *par)
{
    size_t nodes = 0, level = 1;
    for (size_t i = 0; i < par->tree_depth; i++) {
        level *= par->tree[i];
        nodes += level;
    }
    return nodes;
}

/* Parses "b1,b2,...,bd" into par->tree: each b_i a whole number in
 * [d->min, d->max], at most SD_TREE_MAX_DEPTH levels and SD_TREE_MAX_NODES
 * nodes (checked as it goes, so no product overflows).  One-line SD_EUSAGE
 * naming the option, the value and what was expected. */
static int S_shape_parse(sd_params *par, const sd_param_decl *d, const char *text, sd_error *err)
{
    char opt[80];
    snprintf(opt, sizeof opt, "--%s", d->name);
    const char *s = text ? text : "";
    size_t depth = 0, level = 1, nodes = 0, b[SD_TREE_MAX_DEPTH];
    for (;;) {
        size_t w = strcspn(s, ",");
        char item[32];
        if (w == 0 || w >= sizeof item)
            return sd_error_set(err, SD_EUSAGE, "%s '%s': expected branching factors b1,b2,...,bd "
                                "(whole numbers from %.0f to %.0f separated by commas)", opt, text ? text : "",
                                d->min, d->max);
        if (depth == SD_TREE_MAX_DEPTH)
            return sd_error_set(err, SD_EUSAGE, "%s '%s': deeper than %d levels", opt, text, SD_TREE_MAX_DEPTH);
        memcpy(item, s, w);
        item[w] = '\0';
        size_t v;
        if (sd_parse_size(opt, item, (size_t)d->min, (size_t)d->max, &v, NULL))
            return sd_error_set(err, SD_EUSAGE, "%s '%s': level %zu is '%s'; expected a whole number from "
                                "%.0f to %.0f", opt, text, depth + 1, item, d->min, d->max);
        level *= v; /* level, v <= SD_TREE_MAX_NODES: no overflow */
        nodes += level;
        if (nodes > SD_TREE_MAX_NODES)
            return sd_error_set(err, SD_EUSAGE, "%s '%s': more than %d nodes", opt, text, SD_TREE_MAX_NODES);
        b[depth++] = v;
        if (s[w] == '\0')
            break;
        s += w + 1;
    }
    memcpy(par->tree, b, depth * sizeof *b);
    par->tree_depth = depth;
    return SD_OK;
}

void sd_params_defaults(sd_params *par, const sd_verifier_type *vt)
{
    memset(par, 0, sizeof *par);
    par->gamma = 0;
    par->k = 2;
    size_t n = sd_params_count(vt);
    for (size_t i = 0; i < n; i++) {
        const sd_param_decl *d = &vt->params[i];
        if (d->kind == SD_PARAM_SHAPE) /* checked by sd_params_check_decls */
            S_shape_parse(par, d, d->choices, NULL);
        else
            sd_params_store(par, d, d->def);
    }
}

void sd_params_names(const sd_verifier_type *vt, char *buf, size_t len)
{
    size_t n = sd_params_count(vt), used = 0;
    buf[0] = '\0';
    if (n == 0) {
        snprintf(buf, len, "nothing");
        return;
    }
    for (size_t i = 0; i < n && used < len; i++) {
        int w = snprintf(buf + used, len - used, "%s%s", i ? " " : "", vt->params[i].name);
        if (w < 0)
            break;
        used += (size_t)w;
    }
}

static int S_unknown(const sd_verifier_type *vt, const char *name, sd_error *err)
{
    char names[256];
    sd_params_names(vt, names, sizeof names);
    return sd_error_set(err, SD_EUSAGE, "--%s does not apply to --algo %s (it reads: %s)", name,
                        vt->name, names);
}

/* The longest choice word (sd_params_check_decls refuses longer ones): the
 * buffers below hold S_WORD_MAX + 1 bytes. */
#define S_WORD_MAX 63

/* The i-th word of a choice list into buf (cut to len - 1 bytes); 0 past
 * the end. */
static int S_word(const char *choices, size_t i, char *buf, size_t len)
{
    const char *s = choices;
    for (size_t k = 0; k < i; k++) {
        s = strchr(s, '|');
        if (!s)
            return 0;
        s++;
    }
    size_t w = strcspn(s, "|");
    if (w + 1 > len)
        w = len - 1;
    memcpy(buf, s, w);
    buf[w] = '\0';
    return 1;
}

/* "'opt' or 'uno'", "'a', 'b' or 'c'" */
static void S_choice_list(const char *choices, char *buf, size_t len)
{
    size_t n = 0, used = 0;
    char w[S_WORD_MAX + 1];
    while (S_word(choices, n, w, sizeof w))
        n++;
    buf[0] = '\0';
    for (size_t i = 0; i < n && used < len; i++) {
        S_word(choices, i, w, sizeof w);
        int r = snprintf(buf + used, len - used, "%s'%s'", i == 0 ? "" : i + 1 == n ? " or " : ", ", w);
        if (r < 0)
            break;
        used += (size_t)r;
    }
}

sd_draft_policy sd_params_draft_policy(const sd_params *par, const sd_verifier_type *vt)
{
    const sd_param_decl *d = vt ? sd_params_decl(vt, "draft-policy", NULL) : NULL;
    sd_draft_policy fixed = {SD_DRAFT_FIXED, 0.0};
    return d && d->kind == SD_PARAM_POLICY ? sd_draft_policy_decode(sd_params_value(par, d)) : fixed;
}

static int S_range(const sd_param_decl *d, double x, sd_error *err)
{
    if (d->kind == SD_PARAM_POLICY) {
        if (isfinite(x) && (x == 0.0 || (x >= 1.0 && x <= 2.0) || (x >= 3.0 && x <= d->max)))
            return SD_OK;
        return sd_error_set(err, SD_EUSAGE, "--%s: %g is not a draft-policy code (0 fixed, 1 + H specdecpp, "
                            "3 + H entropy)", d->name, x);
    }
    if (d->kind == SD_PARAM_SHAPE && !(x >= 1 && x <= SD_TREE_MAX_NODES && x <= d->max && x == floor(x)))
        return sd_error_set(err, SD_EUSAGE, "--%s: expected a number of children from 1 to %.0f, got '%g'",
                            d->name, fmin(d->max, SD_TREE_MAX_NODES), x);
    if (d->kind == SD_PARAM_CHOICE) {
        char w[S_WORD_MAX + 1];
        if (x == floor(x) && x >= 0 && S_word(d->choices, (size_t)x, w, sizeof w))
            return SD_OK;
        return sd_error_set(err, SD_EUSAGE, "--%s: %g is not a choice index", d->name, x);
    }
    if (!isfinite(x) || x < d->min || x > d->max || (d->kind == SD_PARAM_COUNT && x != floor(x))) {
        if (d->kind == SD_PARAM_COUNT)
            return sd_error_set(err, SD_EUSAGE, "--%s: expected a whole number from %.0f to %.0f, got '%g'",
                                d->name, d->min, d->max, x);
        return sd_error_set(err, SD_EUSAGE, "--%s: %g is out of range; expected %g to %g", d->name, x,
                            d->min, d->max);
    }
    return SD_OK;
}

int sd_params_set(sd_params *par, const sd_verifier_type *vt, const char *name, double value,
                  sd_error *err)
{
    size_t i;
    const sd_param_decl *d = sd_params_decl(vt, name, &i);
    if (!d)
        return S_unknown(vt, name, err);
    int rc = S_range(d, value, err);
    if (rc)
        return rc;
    sd_params_store(par, d, value);
    par->given |= (uint32_t)1 << i;
    return SD_OK;
}

int sd_params_parse_decl(sd_params *par, const sd_param_decl *d, const char *text, sd_error *err)
{
    char opt[80];
    snprintf(opt, sizeof opt, "--%s", d->name);
    double x = 0.0;
    int rc = SD_OK;
    if (d->kind == SD_PARAM_COUNT) {
        size_t v = 0;
        rc = sd_parse_size(opt, text, (size_t)d->min, (size_t)d->max, &v, err);
        x = (double)v;
    } else if (d->kind == SD_PARAM_REAL) {
        rc = sd_parse_double(opt, text, d->min, d->max, &x, err);
    } else if (d->kind == SD_PARAM_SHAPE) {
        return S_shape_parse(par, d, text, err);
    } else if (d->kind == SD_PARAM_POLICY) {
        char msg[200];
        if (sd_draft_policy_parse(text, &x, msg, sizeof msg))
            rc = sd_error_set(err, SD_EUSAGE, "%s: %s", opt, msg);
    } else {
        char w[S_WORD_MAX + 1];
        size_t k = 0;
        while (S_word(d->choices, k, w, sizeof w) && strcmp(w, text ? text : "") != 0)
            k++;
        if (!S_word(d->choices, k, w, sizeof w)) {
            char list[256];
            S_choice_list(d->choices, list, sizeof list);
            rc = sd_error_set(err, SD_EUSAGE, "%s: expected %s, got '%s'", opt, list, text ? text : "");
        }
        x = (double)k;
    }
    if (!rc)
        sd_params_store(par, d, x);
    return rc;
}

int sd_params_parse(sd_params *par, const sd_verifier_type *vt, const char *name,
                    const char *text, sd_error *err)
{
    size_t i;
    const sd_param_decl *d = sd_params_decl(vt, name, &i);
    if (!d)
        return S_unknown(vt, name, err);
    int rc = sd_params_parse_decl(par, d, text, err);
    if (!rc)
        par->given |= (uint32_t)1 << i;
    return rc;
}

int sd_params_given(const sd_params *par, const sd_verifier_type *vt, const char *name)
{
    size_t i;
    return sd_params_decl(vt, name, &i) && (par->given & ((uint32_t)1 << i));
}

/* The value of d as text ("4", "0.1", "opt"); NULL for an `unset` default. */
static const char *S_text(const sd_params *par, const sd_param_decl *d, char *buf, size_t len)
{
    double x = sd_params_value(par, d);
    if (d->unset && x == d->def)
        return NULL;
    if (d->kind == SD_PARAM_SHAPE) {
        size_t used = 0;
        buf[0] = '\0';
        for (size_t i = 0; i < par->tree_depth && used < len; i++) {
            int w = snprintf(buf + used, len - used, "%s%zu", i ? "," : "", par->tree[i]);
            if (w < 0)
                break;
            used += (size_t)w;
        }
    } else if (d->kind == SD_PARAM_CHOICE) {
        if (!S_word(d->choices, (size_t)x, buf, len))
            snprintf(buf, len, "?");
    } else if (d->kind == SD_PARAM_POLICY) {
        sd_draft_policy_format(x, buf, len);
    } else if (d->kind == SD_PARAM_COUNT) {
        snprintf(buf, len, "%.0f", x); /* a whole number: 60, not 6e+01 */
    } else {
        snprintf(buf, len, "%.17g", x);
        /* the shortest form that reads back the same double, in positional
         * notation up to 6 digits (100, not 1e+02) */
        for (int prec = 6; prec <= 17; prec++) {
            char t[64];
            snprintf(t, sizeof t, "%.*g", prec, x);
            if (strtod(t, NULL) == x) {
                snprintf(buf, len, "%s", t);
                break;
            }
        }
    }
    return buf;
}

void sd_params_format(const sd_params *par, const sd_verifier_type *vt, char *buf, size_t len)
{
    size_t n = sd_params_count(vt), used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n && used < len; i++) {
        const sd_param_decl *d = &vt->params[i];
        if (d->kind == SD_PARAM_POLICY && sd_params_value(par, d) == d->def)
            continue; /* fixed, as for every verifier without the option: JSON still says it */
        char v[S_WORD_MAX + 1];
        const char *t = S_text(par, d, v, sizeof v);
        int w = t ? snprintf(buf + used, len - used, ", %s %s", d->name, t)
                  : snprintf(buf + used, len - used, ", %s = %s", d->name, d->unset);
        if (w < 0)
            break;
        used += (size_t)w;
    }
}

json_t *sd_params_json(const sd_params *par, const sd_verifier_type *vt)
{
    json_t *o = json_object();
    size_t n = sd_params_count(vt);
    for (size_t i = 0; i < n; i++) {
        const sd_param_decl *d = &vt->params[i];
        double x = sd_params_value(par, d);
        char w[S_WORD_MAX + 1];
        json_t *j;
        if (d->unset && x == d->def)
            j = json_null();
        else if (d->kind == SD_PARAM_CHOICE)
            j = json_string(S_word(d->choices, (size_t)x, w, sizeof w) ? w : "?");
        else if (d->kind == SD_PARAM_POLICY) {
            sd_draft_policy_format(x, w, sizeof w);
            j = json_string(w);
        }
        else if (d->kind == SD_PARAM_SHAPE) {
            j = json_array();
            for (size_t l = 0; l < par->tree_depth; l++)
                json_array_append_new(j, json_integer((json_int_t)par->tree[l]));
        }
        else if (d->kind == SD_PARAM_COUNT)
            j = json_integer((json_int_t)x);
        else
            j = json_real(x);
        json_object_set_new(o, d->name, j);
    }
    return o;
}

int sd_params_check_decls(const sd_verifier_type *vt, sd_error *err)
{
    const char *who = vt && vt->name ? vt->name : "(unnamed)";
    if (!vt || !vt->name || !vt->name[0] || strlen(vt->name) > 64 || strcspn(vt->name, " \t\n,=") != strlen(vt->name))
        return sd_error_set(err, SD_EDATA, "verifier '%s': expected a name of 1 to 64 characters without spaces, ',' or '='", who);
    if (!vt->summary || !vt->alloc || !vt->step)
        return sd_error_set(err, SD_EDATA, "verifier '%s': summary, alloc and step are required", who);
    size_t n = sd_params_count(vt);
    if (n > 32)
        return sd_error_set(err, SD_EDATA, "verifier '%s': %zu parameters; at most 32", who, n);
    uint32_t used = 0;
    for (size_t i = 0; i < n; i++) {
        const sd_param_decl *d = &vt->params[i];
        if (!d->name[0] || strlen(d->name) > 32 || strcspn(d->name, " \t\n=") != strlen(d->name) || !d->help)
            return sd_error_set(err, SD_EDATA, "verifier '%s': parameter %zu: expected a name of 1 to 32 "
                                "characters without spaces and one line of help", who, i);
        for (size_t j = 0; j < i; j++)
            if (strcmp(vt->params[j].name, d->name) == 0)
                return sd_error_set(err, SD_EDATA, "verifier '%s': parameter '%s' declared twice", who, d->name);
        if (d->kind == SD_PARAM_SHAPE || d->slot == SD_SLOT_TREE) {
            sd_params tmp;
            memset(&tmp, 0, sizeof tmp);
            if (d->kind != SD_PARAM_SHAPE || d->slot != SD_SLOT_TREE || !(d->min >= 1 && d->min <= d->max) ||
                !d->choices || S_shape_parse(&tmp, d, d->choices, NULL))
                return sd_error_set(err, SD_EDATA, "verifier '%s': parameter '%s': a tree shape lives in "
                                    "SD_SLOT_TREE with a range from 1 and a valid default shape", who, d->name);
            continue;
        }
        if (d->slot == SD_SLOT_GAMMA || d->slot == SD_SLOT_K) {
            if (d->kind != SD_PARAM_COUNT)
                return sd_error_set(err, SD_EDATA, "verifier '%s': parameter '%s': the shared slots hold counts",
                                    who, d->name);
        } else if (d->slot < 0 || d->slot >= SD_PARAMS_MAX) {
            return sd_error_set(err, SD_EDATA, "verifier '%s': parameter '%s': slot %d; expected 0..%d or a shared slot",
                                who, d->name, d->slot, SD_PARAMS_MAX - 1);
        } else if (used & ((uint32_t)1 << d->slot)) {
            return sd_error_set(err, SD_EDATA, "verifier '%s': parameter '%s': slot %d is used twice", who,
                                d->name, d->slot);
        } else {
            used |= (uint32_t)1 << d->slot;
        }
        if (d->kind == SD_PARAM_CHOICE) {
            char w[S_WORD_MAX + 1];
            /* every word must fit S_word's buffers whole: a longer one would
             * be cut there and could never be chosen by its own name */
            for (const char *s = d->choices; s; s = strchr(s, '|') ? strchr(s, '|') + 1 : NULL) {
                size_t wl = strcspn(s, "|");
                if (wl < 1 || wl > S_WORD_MAX)
                    return sd_error_set(err, SD_EDATA, "verifier '%s': parameter '%s': a choice word of %zu "
                                        "characters; expected 1 to %d", who, d->name, wl, S_WORD_MAX);
            }
            if (!d->choices || !S_word(d->choices, 0, w, sizeof w) || !w[0] ||
                !(d->def >= 0 && d->def == floor(d->def) && S_word(d->choices, (size_t)d->def, w, sizeof w)))
                return sd_error_set(err, SD_EDATA, "verifier '%s': parameter '%s': expected choices "
                                    "'a|b|...' and a default index among them", who, d->name);
        } else if (d->kind == SD_PARAM_POLICY) {
            if (d->def != 0.0)
                return sd_error_set(err, SD_EDATA, "verifier '%s': parameter '%s': a draft policy defaults to fixed (0)",
                                    who, d->name);
        } else if (d->kind == SD_PARAM_COUNT || d->kind == SD_PARAM_REAL) {
            if (!(isfinite(d->min) && isfinite(d->max) && d->min <= d->max) ||
                (d->kind == SD_PARAM_COUNT && (d->min < 0 || d->max > 9007199254740992.0)))
                return sd_error_set(err, SD_EDATA, "verifier '%s': parameter '%s': bad range [%g, %g]", who,
                                    d->name, d->min, d->max);
            if (!d->unset && (d->def < d->min || d->def > d->max || !isfinite(d->def)))
                return sd_error_set(err, SD_EDATA, "verifier '%s': parameter '%s': default %g outside [%g, %g]",
                                    who, d->name, d->def, d->min, d->max);
        } else {
            return sd_error_set(err, SD_EDATA, "verifier '%s': parameter '%s': unknown kind %d", who, d->name,
                                (int)d->kind);
        }
    }
    return SD_OK;
}
