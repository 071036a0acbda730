# SPDX-License-Identifier: MIT
# Tests of the IRQ core on the simulator.
TEST_BINS += $(BUILD)/tests/test_irq

$(BUILD)/tests/test_irq: tests/unit/test_irq.c $(SIM_LIB) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) -Iinclude -Iplatform $(CFLAGS_HOST) -o $@ $< $(SIM_LIB) $(LIB) $(LDFLAGS_HOST) -lcmocka -lpthread
