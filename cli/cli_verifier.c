/* cli_verifier.c — the verifier a command runs: plugins, the verifier named
 * on the command line, its declared parameters as options, their help and
 * the verifier list (cli_verifier.h). */
#include "cli_verifier.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "../sims/engine/sd_params.h"
#include "../sims/engine/sd_plugin.h"
#include "cli_exit.h"
#include "cli_opts.h"
#include "cli_output.h"
#include "suggest.h"

int cli_plugin_load(const char *path, sd_error *err)
{
    /* A sweep parses the command line once per point: a file loaded
     * already is not loaded again (its names are registered). */
    static char *loaded[64];
    static size_t nloaded;
    for (size_t k = 0; k < nloaded; k++)
        if (strcmp(loaded[k], path) == 0)
            return SD_OK;
    int rc = cli_check_path("--plugin", path, err);
    if (!rc)
        rc = sd_plugin_load(path, err);
    if (rc)
        return rc;
    if (nloaded < 64 && (loaded[nloaded] = strdup(path)) != NULL)
        nloaded++;
    return SD_OK;
}

int cli_plugins_load(const cli_args *args, sd_error *err)
{
    for (size_t i = 0; i < args->n; i++) {
        const char *path;
        if (strcmp(args->opt[i].name, "plugin") != 0 || !(path = cli_args_value(args, i, NULL)))
            continue;
        int rc = cli_plugin_load(path, err);
        if (rc)
            return rc;
    }
    return SD_OK;
}

int cli_plugins_load_fields(const cli_field *fields, size_t n, sd_error *err)
{
    for (size_t i = 0; i < n; i++) {
        if (strcmp(fields[i].name, "plugin") != 0)
            continue;
        int rc = cli_plugin_load(fields[i].value ? fields[i].value : "", err);
        if (rc)
            return rc;
    }
    return SD_OK;
}

/* 1 if name is in the NULL-terminated list (NULL: none). */
static int S_listed(const char *const *list, const char *name)
{
    for (size_t i = 0; list && list[i]; i++)
        if (strcmp(list[i], name) == 0)
            return 1;
    return 0;
}

int cli_verifier_prescan(const char *cmd, int argc, char **argv, const char *algo_opt,
                         const char *def, const struct option *base, const char *const *skip,
                         cli_verifier *cv, struct option **opts)
{
    sd_error err;
    cli_args args;
    memset(cv, 0, sizeof *cv);
    *opts = NULL;
    if (cli_args_scan(argc, argv, &args))
        return cli_out_of_memory();
    int rc = cli_plugins_load(&args, &err);
    const char *name = cli_args_last(&args, algo_opt, NULL, NULL);
    cli_args_free(&args);
    if (rc)
        return cli_fail(&err);
    return cli_verifier_choose(cmd, name, def, base, skip, cv, opts);
}

int cli_verifier_read(const char *cmd, int argc, char **argv, const char *algo, const cli_field *fields, size_t n,
                      const struct option *base, const char *const *skip, const int *refuse, cli_field_fn fn,
                      void *ctx, cli_verifier *cv, cli_model_opts *mo)
{
    struct option *opts;
    const char *def = sd_verifier_baseline()->name;
    int status = argv ? cli_verifier_prescan(cmd, argc, argv, "algo", def, base, skip, cv, &opts)
                      : cli_verifier_choose(cmd, algo ? algo : cli_fields_last(fields, n, "algo"), def, base, skip,
                                            cv, &opts);
    if (status < 0) {
        if (argv) {
            status = cli_options_read(cmd, argc, argv, opts, fn, ctx, cv->vt);
        } else {
            status = cli_fields_apply(opts, fields, n, refuse, fn, ctx);
            if (status == CLI_NOT_A_FIELD)
                status = cli_fields_refused(cmd, cv->vt);
        }
    }
    free(opts);
    if (status >= 0)
        cli_model_release(mo);
    return status;
}

int cli_verifier_choose(const char *cmd, const char *name, const char *def, const struct option *base,
                        const char *const *skip, cli_verifier *cv, struct option **opts)
{
    sd_error err;
    memset(cv, 0, sizeof *cv);
    *opts = NULL;
    cv->named = name != NULL;
    if (!name)
        name = def;
    if (name && !(cv->vt = sd_verifier_find(name))) {
        char hint[160];
        cli_suggest sg;
        cli_suggest_init(&sg, name);
        const sd_verifier_type *v;
        for (size_t i = 0; (v = sd_verifier_at(i)) != NULL; i++)
            cli_suggest_add(&sg, v->name);
        return cli_usage_error(cmd, "unknown verifier '%s'%s (see 'simdec run --list')", name,
                               cli_suggest_text(&sg, "", hint, sizeof hint));
    }
    sd_params_defaults(&cv->par, cv->vt);
    /* getopt takes the command's option first (cli_options_with_params), so
     * a parameter of the same name (a plugin's --seed, a Python verifier's
     * --V) could never be set: refuse the verifier instead of ignoring it. */
    for (size_t i = 0; i < sd_params_count(cv->vt); i++)
        for (const struct option *b = base; b->name; b++)
            if (strcmp(b->name, cv->vt->params[i].name) == 0 && !S_listed(skip, b->name)) {
                sd_error_set(&err, SD_EDATA, "verifier %s: its parameter '%s' has the name of an option of %s "
                             "(--%s), so it could never be set; rename the parameter", cv->vt->name, b->name,
                             cmd, b->name);
                return cli_fail(&err);
            }
    if (!(*opts = cli_options_with_params(base, cv->vt, skip))) {
        fprintf(stderr, "simdec: out of memory\n");
        return EX_OSERR_;
    }
    return -1;
}

struct option *cli_options_with_params(const struct option *base, const sd_verifier_type *vt,
                                       const char *const *skip)
{
    size_t nb = 0, np = sd_params_count(vt), k;
    while (base[nb].name)
        nb++;
    struct option *o = calloc(nb + np + 1, sizeof *o);
    if (!o)
        return NULL;
    /* The command's own options first: getopt_long takes the first exact
     * match, so a parameter can never take a command's option away. */
    memcpy(o, base, nb * sizeof *o);
    k = nb;
    for (size_t i = 0; i < np; i++) {
        if (S_listed(skip, vt->params[i].name))
            continue;
        o[k].name = vt->params[i].name;
        o[k].has_arg = required_argument;
        o[k].val = CLI_OPT_PARAM + (int)i;
        k++;
    }
    return o;
}

int cli_param_option(cli_verifier *cv, int c, const char *arg, sd_error *err)
{
    if (c == CLI_OPT_PLUGIN)
        return 1; /* loaded by cli_verifier_prescan */
    if (c == CLI_OPT_PROGRESS) {
        cli_progress_force = 1;
        return 1;
    }
    size_t np = sd_params_count(cv->vt);
    if (!cv->vt || c < CLI_OPT_PARAM || c >= CLI_OPT_PARAM + (int)np)
        return 0;
    return sd_params_parse(&cv->par, cv->vt, cv->vt->params[c - CLI_OPT_PARAM].name, arg, err) ? -1 : 1;
}

int cli_verifier_option(cli_model_opts *mo, cli_verifier *cv, int c, const char *arg, int *status)
{
    sd_error err;
    int r = cli_model_option(mo, c, arg, &err);
    if (r == 0)
        r = cli_param_option(cv, c, arg, &err);
    if (r < 0)
        *status = cli_fail(&err);
    return r != 0;
}

int cli_unknown_option(const char *cmd, int c, char **argv, const sd_verifier_type *vt)
{
    /* A parameter of another verifier: say whose it is. */
    if (c != ':' && vt && optind > 0 && strncmp(argv[optind - 1], "--", 2) == 0) {
        char name[64];
        const char *a = argv[optind - 1] + 2;
        size_t len = strcspn(a, "=");
        snprintf(name, sizeof name, "%.*s", (int)(len < 63 ? len : 63), a);
        const sd_verifier_type *v;
        for (size_t i = 0; (v = sd_verifier_at(i)) != NULL; i++)
            if (sd_params_decl(v, name, NULL)) {
                char names[256];
                sd_params_names(vt, names, sizeof names);
                return cli_usage_error(cmd, "--%s does not apply to --algo %s (it reads: %s)", name,
                                       vt->name, names);
            }
    }
    return cli_option_error(cmd, c, argv);
}

int cli_options_read(const char *cmd, int argc, char **argv, const struct option *opts, cli_field_fn fn, void *ctx,
                     const sd_verifier_type *vt)
{
    int status = -1, c;
    optind = 0;
    opterr = 0;
    while (status < 0 && (c = cli_getopt(argc, argv, ":h", opts)) != -1)
        if ((status = fn(ctx, c, optarg)) == 1)
            status = cli_unknown_option(cmd, c, argv, vt);
    if (status < 0 && optind < argc)
        status = cli_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
    return status;
}

/* The help line of one declaration: option, argument, help, range. */
static void S_param_line(const sd_param_decl *d, char *line, size_t len)
{
    char arg[96];
    if (d->kind == SD_PARAM_CHOICE)
        snprintf(arg, sizeof arg, "--%s %s", d->name, d->choices);
    else if (d->kind == SD_PARAM_SHAPE)
        snprintf(arg, sizeof arg, "--%s b1,..,bd", d->name);
    else if (d->kind == SD_PARAM_COUNT)
        snprintf(arg, sizeof arg, "--%s N", d->name);
    else if (d->kind == SD_PARAM_POLICY)
        snprintf(arg, sizeof arg, "--%s RULE", d->name);
    else
        snprintf(arg, sizeof arg, "--%s X", d->name);
    int n = snprintf(line, len, "  %-20s %s", arg, d->help);
    size_t u = n > 0 && (size_t)n < len ? (size_t)n : len - 1;
    if (d->kind == SD_PARAM_SHAPE)
        snprintf(line + u, len - u, "; b_i %.0f..%.0f, at most %d nodes (default %s)", d->min, d->max,
                 SD_TREE_MAX_NODES, d->choices);
    else if (d->kind != SD_PARAM_CHOICE && d->kind != SD_PARAM_POLICY)
        snprintf(line + u, len - u, d->kind == SD_PARAM_COUNT ? "; %.0f..%.0f" : "; %g..%g", d->min, d->max);
}

/* Writes `lead` as it is, then the words of `text` (separated by spaces),
 * wrapped before column 80 onto lines indented to column `indent`. */
static void S_wrapped(FILE *f, const char *lead, const char *text, size_t indent)
{
    size_t col = strlen(lead);
    fputs(lead, f);
    for (const char *w = text; *w;) {
        size_t n = strcspn(w, " ");
        if (col > indent + 2 && col + 1 + n > 79) {
            fprintf(f, "\n%*s", (int)indent, "");
            col = indent;
        } else if (w != text) {
            fputc(' ', f);
            col++;
        }
        fprintf(f, "%.*s", (int)n, w);
        col += n;
        w += n;
        while (*w == ' ')
            w++;
    }
    fputc('\n', f);
}

/* Where the help starts in a line of S_param_line: past "  --name ARG"
 * and the spaces after it. */
static size_t S_help_at(const char *line)
{
    size_t h = 2 + strcspn(line + 2, " "); /* --name */
    h += strspn(line + h, " ");
    h += strcspn(line + h, " "); /* its argument (no spaces: N, X, RULE, a|b, b1,..,bd) */
    return h + strspn(line + h, " ");
}

/* A help line of S_param_line wrapped: the option and its argument as they
 * are, the help after them wrapped onto lines indented to column 23. */
static void S_put_line(FILE *f, const char *line)
{
    char lead[128];
    size_t h = S_help_at(line);
    snprintf(lead, sizeof lead, "%.*s", (int)(h < sizeof lead ? h : sizeof lead - 1), line);
    S_wrapped(f, lead, line + strlen(lead), 23);
}

/* The verifiers (from index `from` on) that declare `name` with the help
 * line `line`, separated by spaces, in out. */
static void S_readers(size_t from, const char *name, const char *line, int controls, char *out, size_t len)
{
    const sd_verifier_type *x;
    size_t u = 0;
    out[0] = '\0';
    for (size_t y = from; (x = sd_verifier_at(y)) != NULL && u + 1 < len; y++) {
        const sd_param_decl *d = sd_params_decl(x, name, NULL);
        char other[512];
        if (!d || ((x->flags & SD_VERIFIER_CONTROL) && !controls))
            continue;
        S_param_line(d, other, sizeof other);
        if (strcmp(other, line) == 0) {
            int n = snprintf(out + u, len - u, "%s%s", u ? " " : "", x->name);
            u = n > 0 && (size_t)n < len - u ? u + (size_t)n : len - 1;
        }
    }
}

/* Where the common start `prefix` of a parameter's differing help lines
 * is cut: just before its last "; ", ": " or " (" past the option's
 * column (the rest of each line, from there, tells its verifiers apart);
 * 0 when there is none. */
static size_t S_cut(const char *prefix, size_t n)
{
    size_t cut = 0;
    for (size_t i = S_help_at(prefix); i + 1 < n; i++)
        if ((prefix[i] == ';' || prefix[i] == ':') && prefix[i + 1] == ' ')
            cut = i;
        else if (prefix[i] == ' ' && prefix[i + 1] == '(')
            cut = i;
    return cut;
}

/* The line after the cut of a parameter's help line, for its group of
 * verifiers: "; x" and ": x" give x, " (x)" gives x. */
static void S_rest(const char *line, size_t cut, char *out, size_t len)
{
    const char *r = line + cut;
    if (cut == 0) { /* the help text, past the option's column */
        snprintf(out, len, "%s", strlen(line) > 23 ? line + 23 : line + 2);
        return;
    }
    r += 2;
    size_t n = strlen(r);
    if (line[cut] == ' ' && n > 0 && r[n - 1] == ')' && !memchr(r, ')', n - 1))
        n--; /* " (x)": x */
    else if (line[cut] == ' ') {
        r--; /* " (x) more": keep the parenthesis */
        n++;
    }
    snprintf(out, len, "%.*s", (int)n, r);
}

/* One parameter name of the list of every verifier's parameters: the
 * option once, then the verifiers that read it.  Verifiers that declare
 * it alike share one line "[v1 v2 ...]"; where declarations differ (a
 * default, 'iid only' / 'wor only'), the help they share is printed once
 * and each declaration's difference is followed by its verifiers.
 * Controls are left out (they read their verifier's parameters; --algo
 * NAME --help shows them) unless only controls declare the name. */
static void S_param_group(FILE *f, size_t first, const char *name)
{
    int controls = 1;
    for (size_t e = first; sd_verifier_at(e) && controls; e++)
        controls = !sd_params_decl(sd_verifier_at(e), name, NULL) || (sd_verifier_at(e)->flags & SD_VERIFIER_CONTROL);
    size_t nv = 0;
    while (sd_verifier_at(nv))
        nv++;
    char(*lines)[512] = malloc((nv ? nv : 1) * sizeof *lines);
    char readers[2048], text[2600];
    size_t ng = 0;
    if (!lines)
        return;
    for (size_t e = first; e < nv; e++) {
        const sd_param_decl *d = sd_params_decl(sd_verifier_at(e), name, NULL);
        int seen = 0;
        if (!d || ((sd_verifier_at(e)->flags & SD_VERIFIER_CONTROL) && !controls))
            continue;
        S_param_line(d, lines[ng], sizeof lines[ng]);
        for (size_t g = 0; g < ng && !seen; g++)
            seen = strcmp(lines[g], lines[ng]) == 0;
        if (!seen)
            ng++;
    }
    if (ng == 1) {
        S_put_line(f, lines[0]);
        S_readers(first, name, lines[0], controls, readers, sizeof readers);
        snprintf(text, sizeof text, "[%s]", readers);
        S_wrapped(f, "                       ", text, 24);
    } else if (ng > 1) {
        size_t n = strlen(lines[0]);
        for (size_t g = 1; g < ng; g++) {
            size_t k = 0;
            while (k < n && lines[g][k] == lines[0][k])
                k++;
            n = k;
        }
        size_t cut = S_cut(lines[0], n);
        if (cut) {
            char head[512];
            snprintf(head, sizeof head, "%.*s", (int)cut, lines[0]);
            S_put_line(f, head);
        } else { /* the option and its argument, as its first line has them */
            size_t w = strlen(lines[0]) < 22 ? strlen(lines[0]) : 22;
            while (w > 0 && lines[0][w - 1] == ' ')
                w--;
            fprintf(f, "%.*s\n", (int)w, lines[0]);
        }
        for (size_t g = 0; g < ng; g++) {
            char rest[512];
            S_rest(lines[g], cut, rest, sizeof rest);
            S_readers(first, name, lines[g], controls, readers, sizeof readers);
            snprintf(text, sizeof text, "%s: %s", rest, readers);
            S_wrapped(f, "                       ", text, 25);
        }
    }
    free(lines);
}

void cli_params_help(FILE *f, const sd_verifier_type *vt)
{
    const sd_verifier_type *v;
    if (vt) {
        char line[512];
        fprintf(f, "Parameters of --algo %s:\n", vt->name);
        if (sd_params_count(vt) == 0)
            fprintf(f, "  (none)\n");
        for (size_t j = 0, np = sd_params_count(vt); j < np; j++) {
            S_param_line(&vt->params[j], line, sizeof line);
            S_put_line(f, line);
        }
        return;
    }
    fprintf(f, "Verifier parameters (each verifier reads its own; with --algo NAME, --help\n"
               "shows that verifier's; 'simdec run --list' lists them all):\n");
    /* Each parameter name once, at its first verifier. */
    for (size_t i = 0; (v = sd_verifier_at(i)) != NULL; i++)
        for (size_t j = 0, np = sd_params_count(v); j < np; j++) {
            const char *name = v->params[j].name;
            int seen = 0;
            for (size_t e = 0; e < i && !seen; e++)
                seen = sd_params_decl(sd_verifier_at(e), name, NULL) != NULL;
            if (!seen)
                S_param_group(f, i, name);
        }
}

void cli_verifier_help(const char *head, const cli_verifier *cv)
{
    fputs(head, stdout);
    cli_params_help(stdout, cv->named ? cv->vt : NULL);
    fputc('\n', stdout);
    fputs(cli_model_help, stdout);
}

void cli_verifier_list(FILE *f)
{
    const sd_verifier_type *v;
    fprintf(f, "%-22s %-20s %s\n", "verifier", "parameters", "description");
    for (size_t i = 0; (v = sd_verifier_at(i)) != NULL; i++) {
        char names[256];
        sd_params_names(v, names, sizeof names);
        fprintf(f, "%-22s %-20s %s%s\n", v->name, sd_params_count(v) ? names : "-", v->summary,
                (v->flags & SD_VERIFIER_CONTROL) ? " [deliberately broken control]" : "");
    }
}

void cli_verifier_list_csv(void)
{
    const sd_verifier_type *v;
    fputs("name,params,control,summary\n", stdout);
    for (size_t i = 0; (v = sd_verifier_at(i)) != NULL; i++) {
        char names[256] = "";
        if (sd_params_count(v))
            sd_params_names(v, names, sizeof names);
        fputs(v->name, stdout);
        cli_csv_field(names);
        printf(",%d", (v->flags & SD_VERIFIER_CONTROL) != 0);
        cli_csv_field(v->summary);
        putchar('\n');
    }
}

json_t *cli_verifier_list_json(void)
{
    const sd_verifier_type *v;
    json_t *a = json_array();
    for (size_t i = 0; (v = sd_verifier_at(i)) != NULL; i++) {
        json_t *ps = json_array();
        for (size_t k = 0, n = sd_params_count(v); k < n; k++)
            json_array_append_new(ps, json_string(v->params[k].name));
        json_t *o = json_pack("{s:s, s:s, s:o, s:b}", "name", v->name, "summary", v->summary, "params", ps,
                              "control", (v->flags & SD_VERIFIER_CONTROL) != 0);
        json_array_append_new(a, o);
    }
    return a;
}
