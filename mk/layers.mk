# layers.mk — `make layers`: the floors of the source tree, checked
# (scripts/layers.py; docs/architecture.md).  src/ < lp/ < sims/ (and
# include/) < treelp/, bench/ < plots/ < cli/ < mpi/, fuzz/, python/: no
# file includes a header of a higher floor, no object references a symbol
# defined on a higher floor, and no two objects reference each other.
# `make check` runs it, and scripts/layers-selftest.sh, which shows that it
# fails on an injected upward include, an upward call and a pair.

.PHONY: layers check-layers

layers: $(BIN) $(BUILD)/bench/bench.o
	python3 scripts/layers.py --build $(BUILD)

check-layers: layers
	CC='$(CC)' sh scripts/layers-selftest.sh

CHECK_EXTRA += check-layers
