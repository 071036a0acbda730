# SPDX-License-Identifier: MIT
# The Arm GICv2m back end (src/arch/arm64/gicv2m.c) on the simulator's
# GICv2 + v2m model: tests/unit/test_gicv2m.c, run by make test (and the
# fixture-based tests again on the same machine: mk/unit-gicv2m.mk).
TEST_BINS += $(BUILD)/tests/test_gicv2m

$(BUILD)/tests/test_gicv2m: tests/unit/test_gicv2m.c tests/unit/test_pci_fixture.h \
		$(BUILD)/libumsi-sim.a $(LIB)
	@mkdir -p $(dir $@)
	$(CC) -Iinclude -Iplatform $(CFLAGS_HOST) -o $@ $< $(BUILD)/libumsi-sim.a \
		$(LIB) $(LDFLAGS_HOST) -lcmocka -lpthread
