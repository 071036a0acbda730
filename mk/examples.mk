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

# The message-level API: a kernel that programs MSI-X itself, keeps its
# IRQ numbers and its EOI (examples/own-pci-host), on the simulator.
EXAMPLE_BINS += $(BUILD)/examples/own_pci_host
ALL_TARGETS += $(BUILD)/examples/own_pci_host
TEST_SCRIPTS += tests/examples/own-pci-host.t

$(BUILD)/examples/own_pci_host: examples/own-pci-host/own_pci_host.c $(SIM_LIB) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) -Iinclude -Iplatform $(CFLAGS_HOST) -o $@ $< $(SIM_LIB) $(LIB) $(LDFLAGS_HOST) -lpthread
