# SPDX-License-Identifier: MIT
# The AMD-Vi interrupt-remapping back end (src/arch/x86/amdvi.c) on the
# simulator's AMD-Vi unit (platform/sim/sim_amdvi.c):
# tests/unit/test_amdvi.c, run by make test.
TEST_BINS += $(BUILD)/tests/test_amdvi $(BUILD)/tests/test_amdvi_units

$(BUILD)/tests/test_amdvi: tests/unit/test_amdvi.c tests/unit/test_pci_fixture.h \
		$(BUILD)/libumsi-sim.a $(LIB)
	@mkdir -p $(dir $@)
	$(CC) -Iinclude -Iplatform $(CFLAGS_HOST) -o $@ $< $(BUILD)/libumsi-sim.a \
		$(LIB) $(LDFLAGS_HOST) -lcmocka -lpthread

# Several IOMMUs: tests/unit/test_amdvi_units.c.
$(BUILD)/tests/test_amdvi_units: tests/unit/test_amdvi_units.c \
		tests/unit/test_pci_fixture.h $(BUILD)/libumsi-sim.a $(LIB)
	@mkdir -p $(dir $@)
	$(CC) -Iinclude -Iplatform $(CFLAGS_HOST) -o $@ $< $(BUILD)/libumsi-sim.a \
		$(LIB) $(LDFLAGS_HOST) -lcmocka -lpthread
