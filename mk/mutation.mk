# mutation.mk — `make mutation`: single-line mutants of sims/, src/ and lp/
# (comparison, arithmetic, constant, deleted assignment), each rebuilt
# incrementally in a scratch copy under /tmp and run against the Criterion
# suites that execute its line (a coverage map, cached in build/mutation/);
# survivors run again under the sanitizers where make check would.  Prints
# the share caught with a 95% Clopper-Pearson interval, the survivors and
# the known equivalent mutants (scripts/mutation-equivalent.tsv).  The
# default is a seeded sample of 400 mutants stratified by file: an estimated
# 45 minutes on 2 idle cores, about 2 hours on the shared 2-core machine
# (docs/mutation.md), plus the coverage map once per state of the sources.
# Below 20 mutants to run and with no cached map it picks the suites by name
# instead (MUTATION_MAP=0: seconds, the share errs low), so a handful runs
# in minutes on a fresh clone.  Not part of `make check` (mutation-smoke,
# below, is).  Examples:
#   make mutation MUTATION_LIMIT=all            every mutant (many hours)
#   make mutation MUTATION_FILES=sims/verifiers/block.c MUTATION_GREP='rejected'
#   make mutation MUTATION_RERUN=1              survivors again, after new tests
# Results accumulate in build/mutation/results.tsv (delete it to start over);
# docs/mutation.md has the knobs and the last measured share.
.PHONY: mutation
mutation: $(BIN) tests
	python3 scripts/mutation.py

# `make mutation-smoke` (part of `make check`): the machinery end to end in
# under two minutes on a fresh clone: 3 mutants of three small files, the
# nearest tests by name instead of the coverage map (MUTATION_MAP=0), no
# sanitizer pass, in a results file of its own started afresh.  It checks
# that mutants are made, rebuilt, run and reported; it measures nothing.
MUTATION_SMOKE_FILES ?= src/sd_power.c sims/engine/sd_bias.c sims/engine/sd_callback.c
.PHONY: mutation-smoke
mutation-smoke: $(BIN) tests
	@mkdir -p $(BUILD)/mutation && rm -f $(BUILD)/mutation/smoke.tsv
	MUTATION_FILES="$(MUTATION_SMOKE_FILES)" MUTATION_LIMIT=3 MUTATION_SEED=1 MUTATION_MAP=0 \
	  MUTATION_SANITIZE=0 MUTATION_RESULTS=$(BUILD)/mutation/smoke.tsv python3 scripts/mutation.py
CHECK_EXTRA += mutation-smoke
