# SPDX-License-Identifier: MIT
# Threaded soak: CPU offline/online and affinity changes on other threads
# while devices are added, allocate, fire, free and are removed (SOAK_OPS
# library calls, default 100000). make test runs it as built; `make
# tsan-soak` runs it under ThreadSanitizer (a separate build tree), and
# make test runs that too (tests/tsan-soak.t).
TEST_BINS += $(BUILD)/tests/test_soak_threads
TEST_SCRIPTS += tests/tsan-soak.t

$(BUILD)/tests/test_soak_threads: tests/unit/test_soak_threads.c tests/unit/test_pci_fixture.h $(SIM_LIB) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) -Iinclude -Iplatform $(CFLAGS_HOST) -o $@ $< $(SIM_LIB) $(LIB) $(LDFLAGS_HOST) -lcmocka -lpthread

.PHONY: tsan-soak
tsan-soak:
	$(MAKE) --no-print-directory BUILD=build/tsan EXTRA_CFLAGS="-fsanitize=thread -O1 -g" \
		EXTRA_LDFLAGS="-fsanitize=thread" build/tsan/tests/test_soak_threads
	TSAN_OPTIONS="halt_on_error=1" SOAK_OPS=$${SOAK_OPS:-100000} SOAK_TEST="soak_*" \
		build/tsan/tests/test_soak_threads
