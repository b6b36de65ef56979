/* simdec_mpi.c — `simdec-mpi run ...`: `simdec run` with the trials split
 * over MPI ranks (issue 7).  Built by `make mpi` (mk/mpi.mk), never part of
 * ./simdec.
 *
 * The run's blocks 0..B-1 (sims/engine/sd_sim.h) are cut into N contiguous
 * ranges, one per rank; each rank runs its range with OpenMP threads and
 * rank 0 gathers the per-block statistics, merges them in block order and
 * adds the integer-valued counts.  Every trial uses the stream (seed,
 * trial), so the printed result is the bits of `simdec run` with the same
 * arguments, whatever N.  Only rank 0 prints.
 *
 *   mpirun -np 4 --hostfile hosts ./simdec-mpi run --trials 100000000 --json */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../cli/cli.h"
#include "../cli/cmd_run.h"

typedef struct {
    int rank, size;
} S_mpi;

/* Agrees on a status: the first failing rank's code, or SD_OK. */
static int S_agree(int rc)
{
    int worst = rc, out = 0;
    MPI_Allreduce(&worst, &out, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return out;
}

static int S_sim(void *ctx, const sd_sim_job *job, const sd_sim_opts *opts, sd_sim_result *res,
                 sd_error *err)
{
    const S_mpi *mp = ctx;
    double t0 = MPI_Wtime();
    uint64_t nb = sd_sim_block_count(opts->trials);
    uint64_t lo = nb * (uint64_t)mp->rank / (uint64_t)mp->size;
    uint64_t hi = nb * (uint64_t)(mp->rank + 1) / (uint64_t)mp->size;
    int rc = sd_sim_result_alloc(job, opts, res, err);
    const char *kernel = res->kernel;
    size_t T = rc ? 0 : res->T, V = rc ? 0 : res->V;
    sd_sim_block *mine = rc ? NULL : calloc(hi > lo ? (size_t)(hi - lo) : 1, sizeof *mine);
    double *hist = rc ? NULL : calloc(T + 1, sizeof *hist);
    double *pos = (!rc && opts->want_positions) ? calloc(T * V, sizeof *pos) : NULL;
    if (!rc && (!mine || !hist || (opts->want_positions && !pos)))
        rc = sd_error_set(err, SD_ENOMEM, "out of memory on rank %d", mp->rank);
    if (!rc)
        rc = sd_sim_run_blocks(job, opts, lo, hi, mine, hist, pos, &kernel, err);
    int all = S_agree(rc);
    if (all && !rc)
        sd_error_set(err, (sd_status)all, "another MPI rank failed (status %d)", all);
    sd_sim_block *blocks = NULL;
    if (!all && mp->rank == 0 && !(blocks = calloc((size_t)nb, sizeof *blocks)))
        all = sd_error_set(err, SD_ENOMEM, "out of memory for %llu blocks", (unsigned long long)nb);
    all = S_agree(all);
    if (!all) {
        /* Per-block statistics, in block order, at rank 0. */
        int *counts = malloc((size_t)mp->size * sizeof *counts);
        int *displs = malloc((size_t)mp->size * sizeof *displs);
        for (int r = 0; r < mp->size; r++) {
            uint64_t a = nb * (uint64_t)r / (uint64_t)mp->size, b = nb * (uint64_t)(r + 1) / (uint64_t)mp->size;
            counts[r] = (int)((b - a) * SD_SIM_BLOCK_DOUBLES);
            displs[r] = (int)(a * SD_SIM_BLOCK_DOUBLES);
        }
        MPI_Gatherv(mine, (int)((hi - lo) * SD_SIM_BLOCK_DOUBLES), MPI_DOUBLE, blocks, counts, displs,
                    MPI_DOUBLE, 0, MPI_COMM_WORLD);
        free(counts);
        free(displs);
        /* Integer-valued counts below 2^53: exact sums in any order. */
        MPI_Reduce(hist, res->accept_hist, (int)(T + 1), MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
        if (opts->want_positions)
            MPI_Reduce(pos, res->pos_counts, (int)(T * V), MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
        if (mp->rank == 0) {
            sd_sim_result_merge(res, blocks, nb);
            res->kernel = kernel; /* rank 0's; every rank chooses alike */
            res->seconds = MPI_Wtime() - t0;   /* the whole split run, gathering included */
        }
    }
    free(blocks);
    free(mine);
    free(hist);
    free(pos);
    if (all)
        sd_sim_result_free(res);
    return all;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    S_mpi mp;
    MPI_Comm_rank(MPI_COMM_WORLD, &mp.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &mp.size);
    sd_gsl_quiet();
    if (mp.rank > 0) { /* rank 0 prints results and errors */
        if (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr))
            MPI_Abort(MPI_COMM_WORLD, EX_OSERR_);
    }
    int status;
    if (argc < 2 || strcmp(argv[1], "run") != 0) {
        fputs("Usage: mpirun -np N simdec-mpi run [simdec run options]\n"
              "Splits the trials of `simdec run` over MPI ranks; the results are identical\n"
              "to `simdec run` with the same options (only the timing and the echo of the\n"
              "threads, per rank, and of the ranks differ).  --time-limit and\n"
              "--target-stderr are not available (give --trials).\n",
              argc >= 2 && strcmp(argv[1], "--help") == 0 ? stdout : stderr);
        status = argc >= 2 && strcmp(argv[1], "--help") == 0 ? EX_OK_ : EX_USAGE_;
    } else {
        cmd_run_hooks h = {S_sim, &mp, mp.rank > 0, 1, "run", (unsigned)mp.size};
        status = cmd_run_with(argc - 1, argv + 1, &h);
    }
    MPI_Finalize();
    return status;
}
