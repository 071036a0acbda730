# SPDX-License-Identifier: MIT
# The Arm GICv3 ITS back end (src/arch/arm64) on the simulator's ITS
# model: tests/unit/test_its.c, run by make test.
TEST_BINS += $(BUILD)/tests/test_its

$(BUILD)/tests/test_its: tests/unit/test_its.c tests/unit/test_pci_fixture.h \
		$(BUILD)/libumsi-sim.a $(LIB)
	@mkdir -p $(dir $@)
	$(CC) -Iinclude -Iplatform $(CFLAGS_HOST) -o $@ $< $(BUILD)/libumsi-sim.a \
		$(LIB) $(LDFLAGS_HOST) -lcmocka -lpthread
