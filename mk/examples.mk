# SPDX-License-Identifier: MIT
#
# examples/: hosts a porter copies (docs/PORTING.md), built against the
# library and run by make test.
#
#   make build/examples/minimal_host     the toy platform in one file
EXAMPLE_BINS := $(BUILD)/examples/minimal_host
ALL_TARGETS += $(EXAMPLE_BINS)
TEST_SCRIPTS += tests/examples/minimal-host.t

$(BUILD)/examples/minimal_host: examples/minimal-host/minimal_host.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) -Iinclude $(CFLAGS_HOST) -o $@ $< $(LIB) $(LDFLAGS_HOST)
