# SPDX-License-Identifier: MIT
# The hosted simulator (platform/sim) and its own tests.
#
#   make                 builds $(SIM_LIB)
#   make test            runs build/tests/test_sim among the others
#   make tsan-sim        ThreadSanitizer build (build/tsan) of test_sim,
#                        running the threaded-mode tests
#   make soak-sim        test_sim's bring-up/tear-down soak at 8192 CPUs
#                        with 10^6 vectors a round (make test runs 2^17)
SIM_SRCS := $(sort $(wildcard platform/sim/*.c))
SIM_OBJS := $(SIM_SRCS:%.c=$(BUILD)/sim/%.o)
SIM_LIB  := $(BUILD)/libumsi-sim.a
SIM_CPPFLAGS := -Iinclude -Iplatform -Iplatform/sim

ALL_TARGETS += $(SIM_LIB)

$(BUILD)/sim/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(SIM_CPPFLAGS) $(CFLAGS_HOST) -pthread -MMD -MP -c $< -o $@

$(SIM_LIB): $(SIM_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@
	$(AR) rcs $@ $^

TEST_SIM := $(BUILD)/tests/test_sim
TEST_BINS += $(TEST_SIM)

$(BUILD)/sim/tests/%.o: tests/unit/%.c
	@mkdir -p $(dir $@)
	$(CC) $(SIM_CPPFLAGS) $(CFLAGS_HOST) -pthread -MMD -MP -c $< -o $@

$(TEST_SIM): $(BUILD)/sim/tests/test_sim.o $(SIM_LIB) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_HOST) -o $@ $< $(SIM_LIB) $(LIB) $(LDFLAGS_HOST) \
		-lcmocka -lpthread

# The soak test at full size: four rounds of 10^6 MSI-X vectors (plus
# managed and MSI ones) up and down on 8192 CPUs, exact accounting after
# each (docs/bench-sim.md).
.PHONY: soak-sim
soak-sim: $(TEST_SIM)
	UMSI_SIM_SOAK_VECTORS=1000000 UMSI_SIM_TEST_FILTER='*soak*' $(TEST_SIM)

# ThreadSanitizer: a separate build tree, the threaded tests only
# (UMSI_SIM_TEST_FILTER is a cmocka test-name pattern read by test_sim).
TSAN_BUILD ?= build/tsan
TSAN_FLAGS := -fsanitize=thread -O1 -g
.PHONY: tsan-sim
tsan-sim:
	$(MAKE) BUILD=$(TSAN_BUILD) EXTRA_CFLAGS="$(TSAN_FLAGS)" \
		EXTRA_LDFLAGS="$(TSAN_FLAGS)" $(TSAN_BUILD)/tests/test_sim
	TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" \
		UMSI_SIM_TEST_FILTER='*threaded*' $(TSAN_BUILD)/tests/test_sim

-include $(SIM_OBJS:.o=.d) $(BUILD)/sim/tests/test_sim.d
