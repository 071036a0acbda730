# SPDX-License-Identifier: MIT
# The RISC-V AIA IMSIC back end (src/arch/riscv) on the simulator's IMSIC
# model: tests/unit/test_imsic.c, run by make test.
TEST_BINS += $(BUILD)/tests/test_imsic

$(BUILD)/tests/test_imsic: tests/unit/test_imsic.c tests/unit/test_pci_fixture.h \
		$(BUILD)/libumsi-sim.a $(LIB)
	@mkdir -p $(dir $@)
	$(CC) -Iinclude -Iplatform $(CFLAGS_HOST) -o $@ $< $(BUILD)/libumsi-sim.a \
		$(LIB) $(LDFLAGS_HOST) -lcmocka -lpthread
