# simdec — build, test and quality targets.
#
#   make            build ./simdec
#   make demo       install missing Debian packages, build, run the demo
#   make check      install missing Debian packages, build, run all tests
#   make test       build and run the test suite (no install step)
#   make examples   the example plugins, examples/*.c -> build/examples/*.so
#   make bench      throughput benchmarks (see bench/)
#   make figures    regenerate the papers' figures under plots/out/
#   make mutation   single-line mutants against the fast suite (mk/mutation.mk)
#
# Parallel developers can build side by side with BUILD=dir BIN=path.
# VERBOSE=1 shows the full compiler command lines.

BUILD ?= build
BIN   ?= simdec
CC    ?= cc

# --- flags ---------------------------------------------------------------
CSTD     = -std=c11 -D_DEFAULT_SOURCE
# warnings: the usual set, plus prototypes and shadowing (Lua's habits)
WARN     = -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes \
           -Wmissing-prototypes -Wpointer-arith -Wwrite-strings \
           -Wformat=2 -Wundef -Wvla -Wcast-qual
OPT      ?= -O2 -g
OPENMP   = -fopenmp
PKG_CFLAGS := $(shell pkg-config --cflags gsl jansson 2>/dev/null) $(shell pkg-config --cflags clp 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs gsl jansson 2>/dev/null || echo -lgsl -lgslcblas -ljansson)
CFLAGS   ?=
CFLAGS  += $(CSTD) $(WARN) $(OPT) $(OPENMP) $(PKG_CFLAGS) -MMD -MP
# GLPK ships no pkg-config file.  -ldl: dlopen for plugins (in libc since
# glibc 2.34; harmless there).
LDLIBS   = $(PKG_LIBS) -lglpk $(shell pkg-config --libs clp 2>/dev/null || echo -lClp -lCoinUtils) -lm -ldl
LDFLAGS += $(OPENMP)
# The executables that load plugins (sims/engine/sd_plugin.h) export the whole
# library to them: every object of the archive is linked (not only those
# the program itself references) and every global is made visible to the
# dynamic linker, so a plugin's sd_dist_sample, sd_error_set, ... resolve.
PLUGIN_HOST = -rdynamic
WHOLE_LIB   = -Wl,--whole-archive $(LIB) -Wl,--no-whole-archive

LIB_SRC  := $(wildcard src/*.c lp/*.c sims/*/*.c treelp/*.c plots/*.c)
CLI_SRC  := $(wildcard cli/*.c)
TEST_SRC := $(wildcard tests/*.c)
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/%.o)
CLI_OBJ  := $(CLI_SRC:%.c=$(BUILD)/%.o)
TEST_OBJ := $(TEST_SRC:%.c=$(BUILD)/%.o)
LIB      := $(BUILD)/libsimdec.a
TESTBIN  := $(BUILD)/simdec-tests

ifeq ($(VERBOSE),1)
Q =
say = @true
else
Q = @
say = @printf '  %-4s %s\n'
endif

.PHONY: all deps demo check test tests clean bench figures
all: $(BIN)

# The builds that demo, check and the quality targets start run on every
# core (a serial build of the library, the tests, the sanitizer and fuzzing
# copies is most of a serial `make check`), unless the caller gave -j: a
# sub-make forced to -jN would leave the caller's job server.  The tests
# themselves still run one target at a time.
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
PAR   = $(if $(filter -j% --jobserver%,$(MAKEFLAGS)),,-j$(JOBS))

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(say) CC $<
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

$(LIB): $(LIB_OBJ)
	@rm -f $@
	$(say) AR $@
	$(Q)ar rcs $@ $^

# The CLI's objects go in as objects (not the archive) so every command links;
# the archive goes in whole, for plugins (PLUGIN_HOST above).
$(BIN): $(CLI_OBJ) $(LIB)
	$(say) LINK $@
	$(Q)$(CC) $(LDFLAGS) $(PLUGIN_HOST) -o $@ $(CLI_OBJ) $(WHOLE_LIB) $(LDLIBS)

$(TESTBIN): $(TEST_OBJ) $(LIB)
	$(say) LINK $@
	$(Q)$(CC) $(LDFLAGS) $(PLUGIN_HOST) -o $@ $(TEST_OBJ) $(WHOLE_LIB) $(LDLIBS) -lcriterion

tests: $(TESTBIN)

deps:
	@sh scripts/install-deps.sh

# The README's first command.
demo: deps
	$(MAKE) $(PAR) all
	./$(BIN) run --algo block --T 50

# The README's second command (and .ci/run's).  Quality makefiles in mk/
# append their own test targets to CHECK_EXTRA (sanitizer subset, short
# fuzz runs, the 2-rank MPI case, a 3-mutant smoke run of make mutation);
# they run after the Criterion suite.
CHECK_EXTRA ?=
check: deps
	$(MAKE) $(PAR) all tests
	TEST_SUMMARY=$(BUILD)/test-summary sh scripts/run-tests.sh $(TESTBIN) ./$(BIN)
	$(if $(strip $(CHECK_EXTRA)),$(MAKE) $(CHECK_EXTRA))
	@read pass fail crash < $(BUILD)/test-summary && \
	echo "check: also passed: $(strip $(CHECK_EXTRA))" && \
	echo "check: $$pass passed, $$((fail + crash)) failed"

test: all tests
	sh scripts/run-tests.sh $(TESTBIN) ./$(BIN)

clean:
	rm -rf $(BUILD) $(BIN)

# Quality, benchmark, MPI and figure targets, one makefile each.
-include $(wildcard mk/*.mk)

-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(TEST_OBJ:.o=.d)
