# SPDX-License-Identifier: MIT
# The Intel VT-d interrupt-remapping back end (src/arch/x86/vtd.c) on the
# simulator's remapping unit: tests/unit/test_vtd.c, and on a machine of
# several units tests/unit/test_vtd_units.c, run by make test.
TEST_BINS += $(BUILD)/tests/test_vtd $(BUILD)/tests/test_vtd_units

$(BUILD)/tests/test_vtd: tests/unit/test_vtd.c tests/unit/test_pci_fixture.h \
		$(BUILD)/libumsi-sim.a $(LIB)
	@mkdir -p $(dir $@)
	$(CC) -Iinclude -Iplatform $(CFLAGS_HOST) -o $@ $< $(BUILD)/libumsi-sim.a \
		$(LIB) $(LDFLAGS_HOST) -lcmocka -lpthread

$(BUILD)/tests/test_vtd_units: tests/unit/test_vtd_units.c \
		tests/unit/test_pci_fixture.h $(BUILD)/libumsi-sim.a $(LIB)
	@mkdir -p $(dir $@)
	$(CC) -Iinclude -Iplatform $(CFLAGS_HOST) -o $@ $< $(BUILD)/libumsi-sim.a \
		$(LIB) $(LDFLAGS_HOST) -lcmocka -lpthread

# What remapping costs and buys, counted on the simulator (docs/remapping.md).
BENCH_REMAP := $(BUILD)/bench/bench_remap

$(BENCH_REMAP): bench/bench_remap.c $(BUILD)/libumsi-sim.a $(LIB)
	@mkdir -p $(dir $@)
	$(CC) -Iinclude -Iplatform $(CFLAGS_HOST) -o $@ $< $(BUILD)/libumsi-sim.a \
		$(LIB) $(LDFLAGS_HOST) -lpthread

.PHONY: bench-remap
bench-remap: $(BENCH_REMAP)
	$(BENCH_REMAP)
