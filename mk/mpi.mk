# mpi.mk — `make mpi` builds ./simdec-mpi (Open MPI, mpi/simdec_mpi.c), and
# `make check-mpi` runs a 2-rank case and compares its JSON byte for byte
# with the single-process `simdec run` (appended to CHECK_EXTRA, so `make
# check` runs it).  The MPI sources live in mpi/, which the main Makefile
# does not glob, so ./simdec never links MPI.

MPICC   ?= mpicc
MPIRUN  ?= mpirun
MPI_BIN ?= simdec-mpi
MPI_OBJ := $(BUILD)/mpi/simdec_mpi.o
# The command objects simdec-mpi needs: `run` and the shared helpers.
MPI_CLI_OBJ := $(BUILD)/cli/cmd_run.o $(BUILD)/cli/sweep.o $(BUILD)/cli/suggest.o \
    $(patsubst %,$(BUILD)/cli/cli_%.o,exit opts model verifier output) $(BUILD)/cli/model_arpa.o
# As root, Open MPI wants both variables; --oversubscribe lets 2 ranks run
# whatever slots the machine reports.
MPIRUN_FLAGS ?= --oversubscribe
# Paths to run the binaries by (BIN may be absolute or relative).
S_run_path = $(if $(filter /%,$(1)),$(1),./$(1))
MPI_ENV = OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1

.PHONY: mpi check-mpi
mpi: $(MPI_BIN)

$(BUILD)/mpi/%.o: mpi/%.c
	@mkdir -p $(dir $@)
	$(MPICC) $(CFLAGS) -c $< -o $@

$(MPI_BIN): $(MPI_OBJ) $(MPI_CLI_OBJ) $(LIB)
	$(MPICC) $(LDFLAGS) $(PLUGIN_HOST) -o $@ $(MPI_OBJ) $(MPI_CLI_OBJ) $(WHOLE_LIB) $(LDLIBS)

# The 2-rank case against the single process, several verifiers' worth of
# blocks (3 blocks + a partial one), with the JSON compared byte for byte.
MPI_CASE = run --algo token --trials 13000 --seed 7 --json
MPI_CASE2 = run --algo block --gamma 4 --trials 9000 --seed 3 --json
check-mpi: $(MPI_BIN) $(BIN)
	@tmp=$$(mktemp -d) && \
	$(call S_run_path,$(BIN)) $(MPI_CASE) > $$tmp/one.json && \
	$(MPI_ENV) $(MPIRUN) $(MPIRUN_FLAGS) -np 2 $(call S_run_path,$(MPI_BIN)) $(MPI_CASE) > $$tmp/two.json && \
	grep -v '"seconds"\|"threads"\|"ranks"' $$tmp/one.json > $$tmp/one.json.r; grep -v '"seconds"\|"threads"\|"ranks"' $$tmp/two.json > $$tmp/two.json.r; cmp $$tmp/one.json.r $$tmp/two.json.r && \
	grep -q '"ranks": 1,' $$tmp/one.json && grep -q '"ranks": 2,' $$tmp/two.json && \
	$(call S_run_path,$(BIN)) $(MPI_CASE2) > $$tmp/one2.json && \
	$(MPI_ENV) $(MPIRUN) $(MPIRUN_FLAGS) -np 2 $(call S_run_path,$(MPI_BIN)) $(MPI_CASE2) > $$tmp/two2.json && \
	grep -v '"seconds"\|"threads"\|"ranks"' $$tmp/one2.json > $$tmp/one2.json.r; grep -v '"seconds"\|"threads"\|"ranks"' $$tmp/two2.json > $$tmp/two2.json.r; cmp $$tmp/one2.json.r $$tmp/two2.json.r && \
	echo "check-mpi: 1 and 2 ranks give byte-identical JSON" && rm -rf $$tmp || \
	{ echo "check-mpi: FAILED (outputs in $$tmp)"; exit 1; }

CHECK_EXTRA += check-mpi

# Header dependencies of the MPI objects (a changed sims/engine/sd_sim.h layout
# must rebuild simdec_mpi.o).
-include $(MPI_OBJ:.o=.d)
