# examples.mk — the example plugins and the test suite's plugins.
#
#   make examples   $(BUILD)/examples/NAME.so from each examples/NAME.c, with
#                   the one command of include/simdec.h (plus warnings and
#                   dependency files):
#                     cc -std=c11 -O2 -fPIC -shared -I include NAME.c -o NAME.so -lm
#
# The test binary needs them at run time (tests/test_plugin.c and
# tests/test_example.c load them), so it depends on them, order-only: a
# plugin that changes is rebuilt before the tests run without relinking
# them.  The test suite's own plugins (tests/plugins/*.c: a shared object
# without the symbol, one for another interface version, bad declarations)
# are built beside the examples.  The tests find them through
# SD_EXAMPLES_DIR, so BUILD=dir builds (make sanitize) load their own.

EXAMPLES_DIR    := $(BUILD)/examples
EXAMPLE_SO      := $(patsubst examples/%.c,$(EXAMPLES_DIR)/%.so,$(wildcard examples/*.c))
TEST_PLUGIN_SO  := $(patsubst tests/plugins/%.c,$(EXAMPLES_DIR)/%.so,$(wildcard tests/plugins/*.c))
PLUGIN_CFLAGS    = -std=c11 -O2 -fPIC -shared -I include $(WARN)

.PHONY: examples test-plugins
examples: $(EXAMPLE_SO)
test-plugins: $(TEST_PLUGIN_SO)

$(EXAMPLES_DIR)/%.so: examples/%.c
	@mkdir -p $(dir $@)
	$(say) SO $@
	$(Q)$(CC) $(PLUGIN_CFLAGS) -MMD -MP -MF $(@:.so=.d) -MT $@ $< -o $@ -lm

$(EXAMPLES_DIR)/%.so: tests/plugins/%.c
	@mkdir -p $(dir $@)
	$(say) SO $@
	$(Q)$(CC) $(PLUGIN_CFLAGS) -MMD -MP -MF $(@:.so=.d) -MT $@ $< -o $@ -lm

$(TESTBIN): | $(EXAMPLE_SO) $(TEST_PLUGIN_SO)

# Where the tests look for the plugins (relative to the repository root,
# where scripts/run-tests.sh runs them).
$(BUILD)/tests/test_plugin.o $(BUILD)/tests/test_example.o $(BUILD)/tests/test_referee_cmd.o $(BUILD)/tests/test_plugin_tree.o: CFLAGS += -DSD_EXAMPLES_DIR='"$(EXAMPLES_DIR)"'

-include $(EXAMPLE_SO:.so=.d) $(TEST_PLUGIN_SO:.so=.d)
