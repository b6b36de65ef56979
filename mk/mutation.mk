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
# Not part of `make check`.  Examples:
#   make mutation MUTATION_LIMIT=all            every mutant (many hours)
#   make mutation MUTATION_FILES=sims/verifiers/block.c MUTATION_GREP='rejected'
#   make mutation MUTATION_RERUN=1              survivors again, after new tests
# Results accumulate in build/mutation/results.tsv (delete it to start over);
# docs/mutation.md has the knobs and the last measured share.
.PHONY: mutation
mutation: $(BIN) tests
	python3 scripts/mutation.py
