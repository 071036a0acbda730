# SPDX-License-Identifier: MIT
# Tests of the IRQ core on the simulator.
TEST_BINS += $(BUILD)/tests/test_irq

$(BUILD)/tests/test_irq: tests/unit/test_irq.c tests/unit/irq_fixture.h $(SIM_LIB) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) -Iinclude -Iplatform $(CFLAGS_HOST) -o $@ $< $(SIM_LIB) $(LIB) $(LDFLAGS_HOST) -lcmocka -lpthread

# The same migration with CPU threads; `make tsan-irq` runs it under
# ThreadSanitizer (a separate build tree), and make test runs that too.
TEST_BINS += $(BUILD)/tests/test_irq_threaded
TEST_SCRIPTS += tests/tsan-irq.t

$(BUILD)/tests/test_irq_threaded: tests/unit/test_irq_threaded.c $(SIM_LIB) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) -Iinclude -Iplatform $(CFLAGS_HOST) -o $@ $< $(SIM_LIB) $(LIB) $(LDFLAGS_HOST) -lcmocka -lpthread

.PHONY: tsan-irq
tsan-irq:
	$(MAKE) --no-print-directory BUILD=build/tsan EXTRA_CFLAGS="-fsanitize=thread -O1 -g" \
		EXTRA_LDFLAGS="-fsanitize=thread" build/tsan/tests/test_irq_threaded
	TSAN_OPTIONS="halt_on_error=1" MOVES=$${MOVES:-10000} build/tsan/tests/test_irq_threaded

TEST_BINS += $(BUILD)/tests/test_irq_regress

$(BUILD)/tests/test_irq_regress: tests/unit/test_irq_regress.c tests/unit/irq_fixture.h $(SIM_LIB) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) -Iinclude -Iplatform $(CFLAGS_HOST) -o $@ $< $(SIM_LIB) $(LIB) $(LDFLAGS_HOST) -lcmocka -lpthread

# Capability walks and the x86 message format (src/pci/cap.c, src/arch).
TEST_BINS += $(BUILD)/tests/test_cap

$(BUILD)/tests/test_cap: tests/unit/test_cap.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) -Iinclude $(CFLAGS_HOST) -o $@ $< $(LIB) $(LDFLAGS_HOST) -lcmocka

# A back end with a global identity space (as a GICv3 ITS), on a toy host.
TEST_BINS += $(BUILD)/tests/test_ctl_global

$(BUILD)/tests/test_ctl_global: tests/unit/test_ctl_global.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) -Iinclude $(CFLAGS_HOST) -o $@ $< $(LIB) $(LDFLAGS_HOST) -lcmocka
