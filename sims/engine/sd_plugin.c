/* sd_plugin.c — loading verifiers from shared objects (sd_plugin.h).
 *
 * The checks run in order, each naming the file in a one-line message, and
 * nothing is registered unless every verifier of the plugin passes:
 *   1. the file opens for reading and is not a directory      (else SD_EIO);
 *   2. dlopen(RTLD_NOW | RTLD_LOCAL) maps it: an ELF shared object for this
 *      machine whose undefined symbols all resolve against simdec (the
 *      executable exports its library with -rdynamic)          (else SD_EDATA);
 *   3. it defines the data symbol simdec_plugin, at least as large as an
 *      sd_plugin where the symbol table says so               (else SD_EDATA);
 *   4. SD_PLUGIN_ABI_OLDEST <= simdec_plugin.abi <= SD_PLUGIN_ABI (else SD_EDATA);
 *   5. its list holds 1..S_LIST_MAX verifiers, each defined inside the
 *      plugin itself (a global named like one of simdec's, e.g. a copy of
 *      sims/verifiers/token.c keeping sd_verifier_token, is bound to simdec's by the
 *      dynamic linker; that is refused rather than silently loading
 *      simdec's verifier), with a valid declaration (sd_params_check_decls)
 *      and a name no other verifier has                        (else SD_EDATA);
 *      each check after the first on simdec's copy of the verifier's type:
 *      the fields its version has, the later ones NULL, and, for a tree
 *      rule or a node rule, the slots sd_tree_rule_attach or
 *      sd_node_rule_attach fills;
 *   6. sd_verifier_add registers the copies.
 * A file that fails is closed again; a plugin that loaded stays loaded (its
 * code is in the registry) until the process ends.  Loading the same file
 * again maps the same object (dlopen counts references), so its verifiers
 * are the very ones registered and sd_verifier_add accepts them again.
 *
 * dlopen runs the object's initialisers: loading a plugin runs its code, as
 * running any program does.  What this file guarantees is that no file that
 * is not a plugin — text, a directory, an executable, a library without the
 * symbol, a plugin for another version — is used as one. */
#define _GNU_SOURCE /* dladdr, dladdr1 */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <stddef.h>

#include "sd_params.h"
#include "sd_plugin.h"
#include "../verifiers/sd_node_rule.h"

/* Most verifiers one plugin may list (the registry holds 256 in all). */
#define S_LIST_MAX 256

/* dlerror()'s text without a leading "PATH: " (the message already starts
 * with the path) and with control characters blanked, so the message stays
 * one line.  Into buf. */
static const char *S_dlerror(const char *dlpath, char *buf, size_t len)
{
    const char *e = dlerror();
    if (!e)
        e = "unknown dynamic loader error";
    size_t n = strlen(dlpath);
    if (strncmp(e, dlpath, n) == 0 && strncmp(e + n, ": ", 2) == 0)
        e += n + 2;
    snprintf(buf, len, "%s", e);
    for (char *s = buf; *s; s++)
        if ((unsigned char)*s < 0x20)
            *s = ' ';
    return buf;
}

/* simdec's copies of the plugins' verifier types, by the plugin's own
 * address: the first S_ncopies are registered; those past it are being
 * built by S_inspect and count only once the plugin loads whole. */
typedef struct S_copy {
    const sd_verifier_type *orig;
    sd_verifier_type vt;
} S_copy;
static S_copy S_copies[256];
static size_t S_ncopies;

/* The bytes of a verifier type of interface version abi. */
static size_t S_type_size(unsigned abi)
{
    return abi >= 7 ? offsetof(sd_verifier_type, iid_pos_law) /* the built-in-only slots after it stay NULL */
           : abi == 6 ? offsetof(sd_verifier_type, node_rule)
                      : offsetof(sd_verifier_type, tree_rule);
}

/* The copy of orig (the registered one when it was loaded before; else a
 * new one in slot *next); NULL when the table is full. */
static sd_verifier_type *S_copy_of(const sd_verifier_type *orig, unsigned abi, size_t *next, int *fresh)
{
    for (size_t i = 0; i < S_ncopies; i++)
        if (S_copies[i].orig == orig) {
            *fresh = 0;
            return &S_copies[i].vt;
        }
    if (*next >= sizeof S_copies / sizeof *S_copies)
        return NULL;
    S_copy *c = &S_copies[(*next)++];
    memset(c, 0, sizeof *c);
    c->orig = orig;
    memcpy(&c->vt, orig, S_type_size(abi));
    *fresh = 1;
    return &c->vt;
}

/* Checks 3 to 5 on an opened object; SD_OK with *out set to the plugin and
 * the copies of its verifiers in S_copies[S_ncopies..*next). */
static int S_inspect(void *h, const char *path, const sd_plugin **out, size_t *next, sd_error *err)
{
    dlerror();
    void *sym = dlsym(h, "simdec_plugin");
    if (!sym)
        return sd_error_set(err, SD_EDATA, "%s: not a simdec plugin (no symbol simdec_plugin)", path);

    /* The symbol's own entry, where the loader can give it: a function or a
     * variable too small to be an sd_plugin is not read. */
    Dl_info base;
    void *entry = NULL;
    if (!dladdr1(sym, &base, &entry, RTLD_DL_SYMENT) || !base.dli_fbase)
        return sd_error_set(err, SD_EDATA, "%s: not a simdec plugin (simdec_plugin is not in a loaded "
                            "object)", path);
    const ElfW(Sym) *es = entry;
    if (es) {
        unsigned type = ELF64_ST_TYPE(es->st_info); /* the same macro as ELF32_ST_TYPE */
        if (type == STT_FUNC || type == STT_GNU_IFUNC)
            return sd_error_set(err, SD_EDATA, "%s: not a simdec plugin (simdec_plugin is a function; "
                                "expected `SD_PLUGIN(...)` of include/simdec.h)", path);
        if (es->st_size != 0 && es->st_size < sizeof(unsigned))
            return sd_error_set(err, SD_EDATA, "%s: not a simdec plugin (simdec_plugin has %zu bytes)", path,
                                (size_t)es->st_size);
    }
    const sd_plugin *pl = sym;
    if (pl->abi < SD_PLUGIN_ABI_OLDEST || pl->abi > SD_PLUGIN_ABI)
        return sd_error_set(err, SD_EDATA, "%s: built for plugin interface version %u; this simdec has "
                            "version %u and loads %u to %u — rebuild it against include/simdec.h", path, pl->abi,
                            SD_PLUGIN_ABI, SD_PLUGIN_ABI_OLDEST, SD_PLUGIN_ABI);
    if (es && es->st_size != 0 && es->st_size < sizeof *pl)
        return sd_error_set(err, SD_EDATA, "%s: not a simdec plugin (simdec_plugin has %zu bytes, "
                            "expected %zu)", path, (size_t)es->st_size, sizeof *pl);

    const sd_verifier_type *const *list = pl->verifiers;
    if (!list || !list[0])
        return sd_error_set(err, SD_EDATA, "%s: simdec_plugin lists no verifiers", path);
    size_t n = 0;
    while (list[n]) {
        if (++n > S_LIST_MAX)
            return sd_error_set(err, SD_EDATA, "%s: simdec_plugin lists more than %d verifiers (or its list "
                                "lacks the closing NULL)", path, S_LIST_MAX);
    }
    *next = S_ncopies;
    for (size_t i = 0; i < n; i++) {
        const sd_verifier_type *orig = list[i];
        Dl_info in;
        if (!dladdr(orig, &in))
            return sd_error_set(err, SD_EDATA, "%s: verifier %zu of simdec_plugin points outside any loaded "
                                "object", path, i + 1);
        if (in.dli_fbase != base.dli_fbase)
            return sd_error_set(err, SD_EDATA, "%s: verifier %zu of simdec_plugin is not the plugin's own: its "
                                "C name %s is also a global of simdec, which the dynamic linker uses instead "
                                "(rename it or make it static)", path, i + 1,
                                in.dli_sname ? in.dli_sname : "(unknown)");
        int fresh, rc = SD_OK;
        sd_verifier_type *vt = S_copy_of(orig, pl->abi, next, &fresh);
        if (!vt)
            return sd_error_set(err, SD_ETOOBIG, "%s: more than %zu plugin verifiers", path,
                                sizeof S_copies / sizeof *S_copies);
        if (fresh && pl->abi >= 7 && vt->node_rule)
            rc = sd_node_rule_attach(vt, NULL, NULL, vt->tree_draws, err);
        else if (fresh && pl->abi >= 6 && vt->tree_rule)
            rc = sd_tree_rule_attach(vt, NULL, NULL, vt->tree_draws, err);
        if (!rc)
            rc = sd_params_check_decls(vt, err);
        if (rc) {
            sd_error_prefix(err, "%s", path);
            return rc;
        }
        for (size_t j = 0; j < i; j++)
            if (strcmp(list[j]->name, vt->name) == 0)
                return sd_error_set(err, SD_EDATA, "%s: verifier '%s' is listed twice", path, vt->name);
        const sd_verifier_type *old = sd_verifier_find(vt->name);
        if (old && old != vt)
            return sd_error_set(err, SD_EDATA, "%s: verifier '%s' is already defined (choose another name)",
                                path, vt->name);
    }
    *out = pl;
    return SD_OK;
}

int sd_plugin_load(const char *path, sd_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return sd_error_set(err, SD_EIO, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    int isdir = fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode);
    fclose(f);
    if (isdir)
        return sd_error_set(err, SD_EIO, "%s: cannot open: %s", path, strerror(EISDIR));

    /* A name without '/' would be searched for in the system's library
     * directories; the file meant is the one just opened. */
    char dlpath[4096];
    if (snprintf(dlpath, sizeof dlpath, "%s%s", strchr(path, '/') ? "" : "./", path) >= (int)sizeof dlpath)
        return sd_error_set(err, SD_EIO, "%s: cannot open: %s", path, strerror(ENAMETOOLONG));
    dlerror();
    void *h = dlopen(dlpath, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        char why[512];
        return sd_error_set(err, SD_EDATA, "%s: not a shared object simdec can load (%s)", path,
                            S_dlerror(dlpath, why, sizeof why));
    }

    const sd_plugin *pl = NULL;
    size_t next = S_ncopies;
    int rc = S_inspect(h, path, &pl, &next, err);
    if (rc) {
        dlclose(h);
        return rc;
    }
    S_ncopies = next;
    for (size_t i = 0; pl->verifiers[i]; i++) {
        int fresh;
        rc = sd_verifier_add(S_copy_of(pl->verifiers[i], pl->abi, &next, &fresh), path, err);
        if (rc)
            return rc; /* the registry is full; what was added stays, so h stays open */
    }
    return SD_OK;
}
