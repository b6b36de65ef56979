# quality.mk — sanitizers, leak checking and fuzzing.
#
#   make sanitize          ./simdec-asan and build-asan/simdec-tests, built from the
#                          same sources with -fsanitize=address,undefined
#                          -fno-sanitize-recover=undefined (in build-asan/)
#   make check-sanitize    docs/errors.md's hostile invocations and a fast Criterion
#                          subset under ASan/UBSan/LSan; fails on any report in the
#                          logs (scripts/check-sanitize.sh)
#   make leakcheck         valgrind --error-exitcode on the hostile invocations and
#                          on one successful run of every command and verifier
#   make fuzz              each libFuzzer harness (fuzz/) for FUZZ_TIME seconds
#                          (default 60) with clang-14; crashes land in build-fuzz/
#   make check-fuzz-short  each harness for FUZZ_SHORT seconds (default 10)
#
# `make check` runs check-sanitize and check-fuzz-short after the main suite.

ASAN_BUILD ?= build-asan
ASAN_BIN   ?= simdec-asan
SAN_FLAGS   = -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
# Criterion suites run under the sanitizers by check-sanitize: the hostile
# inputs and edge cases, the CLI's error cases, the foundation, and the
# lossless checks of every verifier, the Zipf kernel and the LP suites, the
# streamed chain's refusals, and the fast kernels (their vector passes and
# arenas: about 15 s more)
# (their memory errors are silent without a sanitizer; about a minute on 2 cores).
SANITIZE_FILTER ?= @(hostile_*|cli_*|dist*|exact_token*|gen*|model_io*|rng*|engine*|stats*|lossless*|check*|exact_cli*|plugin*|verifiers*|callback*|samples_engine*|samples_format*|zipf*|lp_*|tree_laws*|stream_cli/refusals*|kernel*|stream_kernel*)

FUZZ_CC    ?= clang-14
FUZZ_BUILD ?= build-fuzz
FUZZ_TIME  ?= 60
FUZZ_SHORT ?= 10
FUZZ_SAN    = -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
# OpenMP for the instrumented library when clang can link it (libomp);
# without it the pragmas are ignored, which the parsers do not notice.
FUZZ_OPENMP = $(shell echo 'int main(void){return 0;}' | $(FUZZ_CC) -fopenmp -x c - -o /dev/null 2>/dev/null && echo -fopenmp)
FUZZ_HARNESSES = model list samples
# libFuzzer flags: fixed seed (a short run is reproducible in what it
# tries), 10 s per input, 2 GB of memory and no single allocation above it.
FUZZ_FLAGS = -seed=1 -timeout=10 -rss_limit_mb=2048 -max_len=8192 -print_final_stats=1

q8_path = $(if $(filter /%,$(1)),$(1),./$(1))

.PHONY: sanitize check-sanitize leakcheck fuzz fuzz-build check-fuzz-short

sanitize:
	$(MAKE) $(PAR) BUILD=$(ASAN_BUILD) BIN=$(ASAN_BIN) OPT='-O1 -g $(SAN_FLAGS)' \
	    LDFLAGS='$(OPENMP) $(SAN_FLAGS)' $(ASAN_BIN) $(ASAN_BUILD)/simdec-tests

check-sanitize: sanitize
	SANITIZE_FILTER='$(SANITIZE_FILTER)' sh scripts/check-sanitize.sh \
	    $(call q8_path,$(ASAN_BIN)) $(call q8_path,$(ASAN_BUILD)/simdec-tests)

leakcheck: $(BIN)
	sh scripts/check-sanitize.sh --valgrind $(call q8_path,$(BIN))

# The harnesses link the project's own library and CLI helpers, compiled by
# clang with -fsanitize=fuzzer-no-link so libFuzzer sees their coverage.
fuzz-build:
	$(MAKE) $(PAR) BUILD=$(FUZZ_BUILD) CC=$(FUZZ_CC) OPENMP='$(FUZZ_OPENMP)' \
	    OPT='-O1 -g -fsanitize=fuzzer-no-link $(FUZZ_SAN)' \
	    $(FUZZ_BUILD)/libsimdec.a $(FUZZ_BUILD)/cli/cli.o $(FUZZ_BUILD)/cli/suggest.o $(FUZZ_BUILD)/cli/model_arpa.o
	@for h in $(FUZZ_HARNESSES); do \
	    echo "  LINK $(FUZZ_BUILD)/fuzz_$$h"; \
	    $(FUZZ_CC) $(CSTD) $(WARN) -O1 -g $(PKG_CFLAGS) -fsanitize=fuzzer $(FUZZ_SAN) \
	        $(FUZZ_OPENMP) -o $(FUZZ_BUILD)/fuzz_$$h fuzz/fuzz_$$h.c \
	        $$([ $$h = list ] && echo $(FUZZ_BUILD)/cli/cli.o $(FUZZ_BUILD)/cli/suggest.o $(FUZZ_BUILD)/cli/model_arpa.o) \
	        $(FUZZ_BUILD)/libsimdec.a \
	        $(LDLIBS) || exit 1; \
	done

# Runs every harness for $(1) seconds on a scratch copy of its corpus (new
# inputs go to $(FUZZ_BUILD)/corpus-NAME; the seeds in fuzz/corpus/NAME and,
# for the model parser, tests/hostile/ are only read).  A crash, leak,
# timeout or out-of-memory leaves $(FUZZ_BUILD)/crash-NAME-* and fails.
define q8_fuzz_run
	@for h in $(FUZZ_HARNESSES); do \
	    mkdir -p $(FUZZ_BUILD)/corpus-$$h; \
	    extra=$$([ $$h = model ] && echo tests/hostile); \
	    echo "fuzz: fuzz_$$h for $(1) s"; \
	    ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
	    $(FUZZ_BUILD)/fuzz_$$h $(FUZZ_FLAGS) -max_total_time=$(1) \
	        -dict=fuzz/$$h.dict -artifact_prefix=$(FUZZ_BUILD)/crash-$$h- \
	        $(FUZZ_BUILD)/corpus-$$h fuzz/corpus/$$h $$extra \
	        > $(FUZZ_BUILD)/fuzz-$$h.log 2>&1 \
	    || { tail -n 40 $(FUZZ_BUILD)/fuzz-$$h.log; \
	         echo "fuzz: fuzz_$$h FAILED; reproduce with $(FUZZ_BUILD)/fuzz_$$h $(FUZZ_BUILD)/crash-$$h-*"; \
	         exit 1; }; \
	    grep -h '^stat::number_of_executed_units\|^stat::peak_rss_mb' $(FUZZ_BUILD)/fuzz-$$h.log; \
	done
endef

fuzz: fuzz-build
	$(call q8_fuzz_run,$(FUZZ_TIME))

check-fuzz-short: fuzz-build
	$(call q8_fuzz_run,$(FUZZ_SHORT))

CHECK_EXTRA += check-sanitize check-fuzz-short
