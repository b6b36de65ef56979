/* cmd_gen.c — `simdec gen`: writes a random chain (sd_chain_generate). */
#include <errno.h>
#include <getopt.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../src/sd_mem.h"
#include "../src/sd_trace_write.h"

#include "cli.h"
#include "commands.h"

static const char S_help[] =
    "Usage: simdec gen [--V 7] [--T 50] [--model-seed 10] [--alpha A] [--mix M]\n"
    "                  [--rng dirichlet|numpy-mt19937] [-o FILE]\n"
    "\n"
    "Writes a random nonstationary draft/target chain as simdec-chain-1 JSON:\n"
    "draft rows ~ Dirichlet(A), target rows (1-M)*draft + M*fresh Dirichlet(A) row,\n"
    "uniform init, drawn from GSL's mt19937 seeded with --model-seed.\n"
    "With --rng numpy-mt19937, the chain of Yin et al. 2024, App. F, as numpy draws\n"
    "it (same doubles): np.random.seed(S); draft = np.random.rand(T, V, V), then\n"
    "target = np.random.rand(T, V, V); each row divided by its sum; uniform init\n"
    "(--V 7 --T 50 --model-seed 10 is the paper's chain: Theorem 1 gives 16.405).\n"
    "\n"
    "  --V N            vocabulary (default 7)\n"
    "  --T N            horizon (default 50)\n"
    "  --model-seed S   generator seed (default 10)\n"
    "  --alpha A        Dirichlet concentration, > 0 (default 1)\n"
    "  --mix M          in [0,1] (default 0.5)\n"
    "  --rng NAME       dirichlet (default) or numpy-mt19937 (seed 1 to 4294967295;\n"
    "                   no --alpha/--mix)\n"
    "  --max-memory BYTES  refuse a chain that takes more when stored, e.g. 4G\n"
    "                   (default: half of the memory available, MemAvailable)\n"
    "  -o, --output F   write to F (only on success); default standard output\n"
    "  --trace N        instead: sample N target sequences x_1..x_T of the chain\n"
    "                   (generated, or --model FILE) and write -o DIR/tokens.npy,\n"
    "                   draft.npy, target.npy (the rows along each sequence),\n"
    "                   ratios.npy and prompts.npy (x_0): the input of simdec trace\n"
    "  --seed S         the traces' seed (default 1): sequence i reads stream (S, i)\n"
    "  --arpa FILE      with --trace: sequences of an ARPA backoff language model\n"
    "                   after <s> (--T, default 50): target --order 1, 2 (default)\n"
    "                   or 3 (the trigram: not a first-order chain, fine for\n"
    "                   traces), draft --draft-order 1 (default), 2 or 3 of\n"
    "                   --draft-arpa FILE (default the same file); each row O(V)\n"
    "  --no-rows        with --trace: write tokens.npy, ratios.npy and prompts.npy\n"
    "                   only (enough for token and block; n*T*V rows need not fit)\n";

static int S_write(FILE *f, void *ctx, sd_error *err)
{
    return sd_chain_write(ctx, f, err);
}

int cmd_gen(int argc, char **argv)
{
    static const struct option opts[] = {
        CLI_MODEL_LONGOPTS,
        {"output", required_argument, 0, 'o'},
        {"trace", required_argument, 0, 0x7101},
        {"seed", required_argument, 0, 0x7102},
        {"no-rows", no_argument, 0, 0x7103},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    cli_model_opts mo;
    cli_model_init(&mo);
    const char *out = NULL;
    size_t trace_n = 0;
    uint64_t trace_seed = 1;
    int no_rows = 0;
    sd_error err;
    int c, status = 0;
    optind = 0;
    opterr = 0;
    while ((c = cli_getopt(argc, argv, ":ho:", opts)) != -1) {
        if (c == 'h') {
            fputs(S_help, stdout);
            cli_model_release(&mo);
            return 0;
        }
        if (c == 'o') {
            out = optarg;
            if (cli_check_path("--output", optarg, &err)) {
                status = cli_fail(&err);
                break;
            }
            continue;
        }
        if (c == 0x7101 || c == 0x7102) {
            int r = c == 0x7101 ? cli_parse_size("--trace", optarg, 1, (size_t)1 << 30, &trace_n, &err)
                              : cli_parse_seed(optarg, &trace_seed, &err);
            if (r) {
                status = cli_fail(&err);
                break;
            }
            continue;
        }
        if (c == 0x7103) {
            no_rows = 1;
            continue;
        }
        if (c == CLI_OPT_MODEL) { /* with --trace only (checked below) */
            int r = cli_model_option(&mo, c, optarg, &err);
            if (r < 0) {
                status = cli_fail(&err);
                break;
            }
            continue;
        }
        if (c == CLI_OPT_MODEL || c == CLI_OPT_P || c == CLI_OPT_Q) {
            status = cli_usage_error("gen", "--%s does not apply to gen (it writes a new model)",
                                     c == CLI_OPT_MODEL ? "model" : c == CLI_OPT_P ? "p" : "q");
            break;
        }
        int r = cli_model_option(&mo, c, optarg, &err);
        if (r < 0) {
            status = cli_fail(&err);
            break;
        }
        if (r == 0) {
            status = cli_option_error("gen", c, argv);
            break;
        }
    }
    if (!status && optind < argc)
        status = cli_usage_error("gen", "unexpected argument '%s'", argv[optind]);
    if (!status && mo.file && !trace_n)
        status = cli_usage_error("gen", "--model does not apply to gen (it writes a new model), except "
                                        "with --trace N (traces sampled from that model)");
    if (!status && mo.arpa.given && !trace_n)
        status = cli_usage_error("gen", "--arpa applies to gen with --trace N (traces sampled from the language "
                                        "model); run and eval take --arpa directly");
    if (!status && mo.arpa.given && (mo.file || mo.gen_given))
        status = cli_usage_error("gen", "--arpa is a model of its own: drop --model/--V/--model-seed/--alpha/--mix");
    if (!status && no_rows && !trace_n)
        status = cli_usage_error("gen", "--no-rows applies to --trace N");
    if (!status && no_rows && !mo.arpa.given)
        status = cli_usage_error("gen", "--no-rows applies to --arpa traces (a chain's rows are V x V already)");
    if (!status && trace_n && !out)
        status = cli_usage_error("gen", "--trace writes a directory of .npy files: give -o DIR");
    if (status) {
        cli_model_release(&mo);
        return status;
    }
    if (trace_n) {
        struct stat st;
        int made = stat(out, &st) != 0; /* a directory made here is removed again on a refusal */
        if (made && mkdir(out, 0777) != 0) {
            cli_model_release(&mo);
            sd_error_set(&err, SD_EOUTPUT, "%s: cannot create the directory: %s", out, strerror(errno));
            return cli_fail(&err);
        }
        size_t budget = sd_mem_budget(mo.max_memory);
        int rc;
        if (mo.arpa.given) {
            rc = cli_arpa_trace(&mo.arpa, mo.T_given ? mo.gen.T : 50, trace_n, trace_seed, !no_rows, out, budget, &err);
            cli_model_release(&mo);
        } else {
            sd_chain *ch = cli_model_build(&mo, &err);
            cli_model_release(&mo);
            rc = ch ? sd_trace_write(ch, trace_n, trace_seed, out, budget, &err) : (int)err.code;
            sd_chain_free(ch);
        }
        if (rc && made)
            rmdir(out); /* empty: the writers leave nothing behind on failure */
        return rc ? cli_fail(&err) : 0;
    }
    cli_model_release(&mo);
    sd_chain *ch = cli_model_build(&mo, &err); /* generated: --V, --T, ..., within the memory budget */
    if (!ch)
        return cli_fail(&err);
    int rc = out ? cli_write_atomic(out, S_write, ch, &err) : sd_chain_write(ch, stdout, &err);
    sd_chain_free(ch);
    return rc ? cli_fail(&err) : 0;
}
