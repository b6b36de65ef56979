# bench.mk — `make bench`: the throughput table of bench/bench.c, with the
# numpy baseline (bench/baseline_numpy.py) run first when python3 has numpy
# (scripts/install-deps.sh installs python3-numpy), then the whole-process
# measurements of bench/goals.py (the CLI as a user runs it: rb variance,
# lp otm flow vs simplex, eval rejections at V = 10^6, the demo).  Timings,
# not tests: nothing here fails on a slow machine.
#   make bench BENCH_ARGS="--threads 1 --quick"

BENCH_BIN  ?= $(BUILD)/simdec-bench
BENCH_ARGS ?=
PYTHON     ?= python3

$(BENCH_BIN): $(BUILD)/bench/bench.o $(LIB)
	$(CC) $(LDFLAGS) -o $@ $(BUILD)/bench/bench.o $(LIB) $(LDLIBS)

bench: $(BENCH_BIN) $(BIN)
	@tmp=$$(mktemp) && py="" && \
	for p in $(PYTHON) /usr/bin/python3; do \
	    if $$p -c 'import numpy' 2>/dev/null; then py=$$p; break; fi; \
	done; \
	if [ -n "$$py" ]; then \
	    echo "bench: numpy baseline ($$py bench/baseline_numpy.py) ..."; \
	    $$py bench/baseline_numpy.py $(filter --quick,$(BENCH_ARGS)) > $$tmp; \
	else \
	    echo "bench: no python3 with numpy; the baseline is skipped" >&2; : > $$tmp; \
	fi; \
	$(BENCH_BIN) --baseline $$tmp $(BENCH_ARGS); status=$$?; rm -f $$tmp; \
	[ $$status -eq 0 ] || exit $$status; \
	$${py:-$(PYTHON)} bench/goals.py $(abspath $(BIN)) $(filter --quick,$(BENCH_ARGS)); \
	$${py:-$(PYTHON)} bench/arpa_bench.py $(abspath $(BIN)) $(BUILD)/lm

# Header dependencies of the benchmark (compiled with -MMD).
-include $(BUILD)/bench/bench.d
