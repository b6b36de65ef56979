/* cmd_referee.c — `simdec referee`: every lossless verifier's exact
 * expected accepted tokens per iteration beside the optimum of its class,
 * on a fixed benchmark of models (treelp/sd_referee.h; docs/referee.md). */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../sims/engine/sd_params.h"
#include "../sims/verifiers/sd_tree.h"
#include "../treelp/sd_referee.h"
#include "cli.h"
#include "cli_verifier.h"
#include "commands.h"


static const char S_help[] =
    "Usage: simdec referee [model] [--k K] [--gamma G] [--tree b1,..,bd]\n"
    "                      [--plugin FILE] [--json | --csv]\n"
    "\n"
    "For every lossless verifier, built in or loaded with --plugin, its exact\n"
    "expected accepted tokens in one iteration from (t = 1, x_0 = 0) beside the\n"
    "optimum of its class, and the fraction of the optimum it attains:\n"
    "  one draft sequence (gamma G)    valid-verify: the best valid verifier\n"
    "                                  (Sun et al. 2025, Def. 1; its value is block\n"
    "                                  verification's E[tau], their Thm 2)\n"
    "  k i.i.d. drafts (declares k/M)  at one draft position: the k-draft optimum\n"
    "                                  1 - max_B [p(B)^k - q(B)] (Sun et al. 2023);\n"
    "                                  the optimum without replacement (Hu et al.\n"
    "                                  2025) beside it\n"
    "  a draft token tree (declares tree)  tree-valid, with the tree-ot bound\n"
    "                                  beside it, where the LPs reach\n"
    "Verifiers without an exact law, and optima the LPs do not reach, are rows\n"
    "with a note.  Controls and lossy settings are left out.\n"
    "\n"
    "Models: with model options, that model; else the benchmark\n"
    "  default           the default chain (V=7, T=50, model-seed 10)\n"
    "  spectr-bernoulli  Sun et al. 2023's Bernoulli example: p = Ber(0.25),\n"
    "                    q = Ber(0.75), i.i.d.\n"
    "  chain-zeros       a generated chain (V=5, T=8, model-seed 10) with zeros\n"
    "                    put in its rows: draft p(b|a) = 0 where a+b = 0 mod 3,\n"
    "                    target q(b|a) = 0 where a+2b = 1 mod 4, renormalised\n"
    "  fortunes-bigram   " SD_REFEREE_ARPA " (make lm) when present:\n"
    "                    its bigram target and unigram draft on <s> and the 15\n"
    "                    words of highest unigram probability, renormalised\n"
    "\n"
    "  --k K          drafts of the k-draft verifiers (default 2)\n"
    "  --gamma G      draft length of the one-sequence verifiers (default 2)\n"
    "  --tree SHAPE   the tree verifiers' shape (default: each one's own)\n"
    "  --json         an array of rows: algo, params, model, exact_accepted,\n"
    "                 optimum, optimum_kind, fraction_of_optimum, optimum_wor,\n"
    "                 tree_ot, note (null where not computed)\n"
    "  --csv          the same as CSV with a header\n"
    "  --plugin FILE  load verifiers from a plugin (include/simdec.h)\n";

static void S_print_num(double x)
{
    if (isfinite(x))
        printf(" %10.6f", x);
    else
        printf(" %10s", "-");
}

static void S_csv_num(double x)
{
    if (isfinite(x))
        printf(",%.17g", x);
    else
        printf(",");
}

static void S_csv_text(const char *s)
{
    putchar(',');
    putchar('"');
    for (; *s; s++) {
        if (*s == '"')
            putchar('"');
        putchar(*s);
    }
    putchar('"');
}

int cmd_referee(int argc, char **argv)
{
    enum { O_K = CLI_OPT_FIRST_FREE, O_GAMMA, O_TREE, O_JSON, O_CSV };
    static const struct option opts[] = {
        CLI_MODEL_LONGOPTS,
        CLI_PLUGIN_LONGOPT,
        {"k", required_argument, 0, O_K},
        {"gamma", required_argument, 0, O_GAMMA},
        {"tree", required_argument, 0, O_TREE},
        {"json", no_argument, 0, O_JSON},
        {"csv", no_argument, 0, O_CSV},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    cli_model_opts mo;
    cli_model_init(&mo);
    sd_referee_opts ro = {.k = 2, .gamma = 2, .tree = NULL};
    int json = 0, csv = 0, c, model_given = 0;
    sd_error err;
    optind = 0;
    opterr = 0;
    while ((c = cli_getopt(argc, argv, ":h", opts)) != -1) {
        int r = 0;
        if (c == 'h') {
            fputs(S_help, stdout);
            cli_model_release(&mo);
            return cli_stdout_status();
        }
        if (c == ':' || c == '?') {
            cli_model_release(&mo);
            return cli_option_error("referee", c, argv);
        }
        switch (c) {
        case O_K: r = cli_parse_size("--k", optarg, 1, 64, &ro.k, &err); break;
        case O_GAMMA: r = cli_parse_size("--gamma", optarg, 1, 64, &ro.gamma, &err); break;
        case O_TREE: ro.tree = optarg; break;
        case O_JSON: json = 1; break;
        case O_CSV: csv = 1; break;
        case CLI_OPT_PLUGIN: break; /* loaded below */
        default:
            r = cli_model_option(&mo, c, optarg, &err);
            if (r > 0) {
                model_given = 1;
                r = SD_OK;
            } else if (r < 0)
                r = SD_EUSAGE;
            else
                r = sd_error_set(&err, SD_EINTERNAL, "unhandled option %d", c);
        }
        if (r) {
            cli_model_release(&mo);
            return cli_fail(&err);
        }
    }
    if (optind < argc) {
        cli_model_release(&mo);
        return cli_usage_error("referee", "unexpected argument '%s'", argv[optind]);
    }
    if (ro.tree) { /* the shape itself, before any verifier reads it */
        sd_params tp;
        sd_params_defaults(&tp, NULL);
        if (sd_params_parse_decl(&tp, &sd_tree_decls[SD_TREE_DECL_SHAPE], ro.tree, &err)) {
            cli_model_release(&mo);
            return cli_fail(&err);
        }
    }
    if (json && csv) {
        cli_model_release(&mo);
        return cli_usage_error("referee", "--json and --csv exclude each other");
    }
    cli_args args;
    if (cli_args_scan(argc, argv, &args)) {
        cli_model_release(&mo);
        return cli_out_of_memory();
    }
    int prc = cli_plugins_load(&args, &err);
    cli_args_free(&args);
    if (prc) {
        cli_model_release(&mo);
        return cli_fail(&err);
    }
    sd_referee_row *rows = NULL;
    size_t n = 0;
    int status = 0;
    char skipped[SD_ERROR_MSG_MAX + 64] = "";
    for (size_t mi = 0; mi < (model_given ? 1 : SD_REFEREE_NMODELS) && !status; mi++) {
        sd_chain *ch = NULL;
        const char *name = "given";
        err = (sd_error){0};
        if (model_given) {
            ch = cli_model_build(&mo, &err);
        } else if (sd_referee_bench_model(mi, SD_REFEREE_ARPA, &ch, &name, &err) == SD_EIO) {
            /* the n-gram model absent or unreadable: a note, not a failure */
            snprintf(skipped, sizeof skipped, "%s skipped: %s", name, err.msg);
            continue;
        }
        if (!ch) {
            status = cli_fail(&err);
            break;
        }
        if (sd_referee_model(ch, name, 0, &ro, &rows, &n, &err))
            status = cli_fail(&err);
        sd_chain_free(ch);
    }
    cli_model_release(&mo);
    if (status) {
        free(rows);
        return status;
    }
    if (json) {
        json_t *a = json_array();
        for (size_t i = 0; i < n; i++) {
            const sd_referee_row *r = &rows[i];
            json_t *o = json_object();
            json_object_set_new(o, "algo", json_string(r->algo));
            json_object_set_new(o, "params", json_string(r->params));
            json_object_set_new(o, "model", json_string(r->model));
            json_object_set_new(o, "exact_accepted", isfinite(r->exact_accepted) ? json_real(r->exact_accepted) : json_null());
            json_object_set_new(o, "optimum", isfinite(r->optimum) ? json_real(r->optimum) : json_null());
            json_object_set_new(o, "optimum_kind", json_string(r->optimum_kind));
            json_object_set_new(o, "fraction_of_optimum", isfinite(r->fraction) ? json_real(r->fraction) : json_null());
            json_object_set_new(o, "optimum_wor", isfinite(r->optimum_wor) ? json_real(r->optimum_wor) : json_null());
            json_object_set_new(o, "tree_ot", isfinite(r->tree_ot) ? json_real(r->tree_ot) : json_null());
            json_object_set_new(o, "note", r->note[0] ? json_string(r->note) : json_null());
            json_array_append_new(a, o);
        }
        char *s = json_dumps(a, JSON_INDENT(2) | JSON_REAL_PRECISION(17));
        json_decref(a);
        if (s)
            puts(s);
        free(s);
    } else if (csv) {
        puts("algo,params,model,exact_accepted,optimum,optimum_kind,fraction_of_optimum,optimum_wor,tree_ot,note");
        for (size_t i = 0; i < n; i++) {
            const sd_referee_row *r = &rows[i];
            printf("%s", r->algo);
            S_csv_text(r->params);
            printf(",%s", r->model);
            S_csv_num(r->exact_accepted);
            S_csv_num(r->optimum);
            printf(",%s", r->optimum_kind);
            S_csv_num(r->fraction);
            S_csv_num(r->optimum_wor);
            S_csv_num(r->tree_ot);
            S_csv_text(r->note);
            putchar('\n');
        }
    } else {
        printf("k %zu, gamma %zu, context t = 1 after x_0 = 0%s%s\n", ro.k, ro.gamma, ro.tree ? ", tree " : "",
               ro.tree ? ro.tree : "");
        printf("%-16s %-14s %-22s %10s %10s %10s  %s\n", "model", "algo", "params", "exact", "optimum", "fraction",
               "class");
        for (size_t i = 0; i < n; i++) {
            const sd_referee_row *r = &rows[i];
            printf("%-16s %-14s %-22s", r->model, r->algo, r->params);
            S_print_num(r->exact_accepted);
            S_print_num(r->optimum);
            S_print_num(r->fraction);
            printf("  %s", r->optimum_kind);
            if (isfinite(r->optimum_wor))
                printf(" (without replacement %.6f)", r->optimum_wor);
            if (isfinite(r->tree_ot))
                printf(" (tree-ot %.6f)", r->tree_ot);
            putchar('\n');
            if (r->note[0])
                printf("%-16s   note: %s\n", "", r->note);
        }
        if (skipped[0])
            printf("%s\n", skipped);
    }
    if (skipped[0] && (json || csv))
        fprintf(stderr, "simdec: note: %s\n", skipped);
    free(rows);
    return cli_stdout_status();
}
