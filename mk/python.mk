# python.mk — the shared library behind the Python package (python/simdec)
# and its tests.
#
#   make python        $(BUILD)/libsimdec.so: the library and the commands
#                      (cli/ without main.c), compiled position-independent
#                      into $(BUILD)/pic/ and linked with the same libraries
#   make check-python  the pytest suite python/tests (appended to
#                      CHECK_EXTRA, so `make check` runs it)
#
# Debian's pytest and numpy are packages of /usr/bin/python3 (another python3
# first on PATH may not see them): PYTEST_PYTHON is it when it exists.

PYTEST_PYTHON ?= $(if $(wildcard /usr/bin/python3),/usr/bin/python3,python3)
PYLIB       := $(BUILD)/libsimdec.so
PIC_SRC     := $(LIB_SRC) $(filter-out cli/main.c,$(CLI_SRC))
PIC_OBJ     := $(PIC_SRC:%.c=$(BUILD)/pic/%.o)

.PHONY: python check-python
python: $(PYLIB)

$(BUILD)/pic/%.o: %.c
	@mkdir -p $(dir $@)
	$(say) CC $@
	$(Q)$(CC) $(CFLAGS) -fPIC -c $< -o $@

$(PYLIB): $(PIC_OBJ)
	$(say) SO $@
	$(Q)$(CC) $(LDFLAGS) -shared -o $@ $(PIC_OBJ) $(LDLIBS)

# The suite compares the package's dictionaries with ./simdec's --json and
# loads the example plugin.  pytest's exit status 5 (no test collected) is a
# failure like any other non-zero status: a suite that silently finds
# nothing must not pass.
check-python: $(PYLIB) $(BIN) $(EXAMPLES_DIR)/my_verifier.so
	@SIMDEC_LIB=$(abspath $(PYLIB)) SIMDEC_BIN=$(abspath $(BIN)) \
	SIMDEC_EXAMPLES_DIR=$(abspath $(EXAMPLES_DIR)) PYTHONPATH=python \
	$(PYTEST_PYTHON) -m pytest -q -p no:cacheprovider python/tests; \
	st=$$?; if [ $$st -eq 5 ]; then echo "check-python: no test ran"; fi; exit $$st

CHECK_EXTRA += check-python

-include $(PIC_OBJ:.o=.d)

# tests/test_callback.c loads the example plugin, as test_example.c does.
$(BUILD)/tests/test_callback.o: CFLAGS += -DSD_EXAMPLES_DIR='"$(EXAMPLES_DIR)"'
