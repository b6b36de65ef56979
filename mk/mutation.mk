# mutation.mk — `make mutation`: single-line mutants of sims/, src/ and lp/
# (comparison, arithmetic, constant, deleted assignment), each built and run
# against the fast suite in a scratch copy under /tmp; prints the share
# caught and the survivors (scripts/mutation.py; docs/mutation.md lists the
# equivalent survivors).  Not part of `make check`: all ~4000 mutants take
# many hours on 2 cores.  Sample and resume with the environment, e.g.
#   make mutation MUTATION_LIMIT=60            a 60-mutant sample over the files
#   make mutation MUTATION_FILES=sims/block.c MUTATION_GREP='rejected'
#   make mutation MUTATION_RERUN=1             survivors again, after new tests
# Results accumulate in build/mutation/results.tsv (delete it to start over).
.PHONY: mutation
mutation: $(BIN) tests
	python3 scripts/mutation.py
