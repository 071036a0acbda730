# SPDX-License-Identifier: MIT
#
# The PCI layer (src/pci): its unit tests on the simulator, its fuzzer,
# and an ASan+UBSan build of the whole unit-test suite.
#
#   make test              runs build/tests/test_pci* and test_policy, and a
#                          bounded fuzzing pass (tests/fuzz/fuzz_pci.t)
#   make fuzz-pci          builds build/fuzz/fuzz_pci
#   make fuzz-pci-long     fuzzes for FUZZ_TIME seconds (default 600)
#   make test-asan         builds every unit test into build/asan with
#                          -fsanitize=address,undefined and runs them
PCI_TESTS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,\
	$(sort $(wildcard tests/unit/test_pci*.c tests/unit/test_policy*.c)))
TEST_BINS += $(PCI_TESTS)
# mk/sim.mk is read after this file: name the simulator library directly.
PCI_SIM_LIB := $(BUILD)/libumsi-sim.a

$(PCI_TESTS): $(BUILD)/tests/%: tests/unit/%.c tests/unit/test_pci_fixture.h \
		$(PCI_SIM_LIB) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) -Iinclude -Iplatform $(CFLAGS_HOST) -o $@ $< $(SIM_LIB) $(LIB) \
		$(LDFLAGS_HOST) -lcmocka -lpthread

# The fuzzer builds the library's sources directly with the sanitizers.
FUZZ_PCI := $(BUILD)/fuzz/fuzz_pci
FUZZ_PCI_FLAGS := -std=c11 -D_GNU_SOURCE -g -O1 -fno-omit-frame-pointer \
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	-Iinclude
FUZZ_PCI_TIME ?= $(or $(FUZZ_TIME),600)

ifneq ($(shell command -v $(or $(FUZZ_CC),clang) 2>/dev/null),)
CHECK_TARGETS += $(FUZZ_PCI)
endif
TEST_SCRIPTS += tests/fuzz/fuzz_pci.t

# The life-cycle fuzzer: the library and the simulator in one binary.
FUZZ_LIFE := $(BUILD)/fuzz/fuzz_life
FUZZ_LIFE_TIME ?= $(or $(FUZZ_TIME),600)
ifneq ($(shell command -v $(or $(FUZZ_CC),clang) 2>/dev/null),)
CHECK_TARGETS += $(FUZZ_LIFE)
endif
TEST_SCRIPTS += tests/fuzz/fuzz_life.t

$(FUZZ_LIFE): tests/fuzz/fuzz_life.c $(CORE_SRCS) $(sort $(wildcard platform/sim/*.c)) \
		$(wildcard platform/sim/*.h) $(wildcard include/umsi/*.h) \
		$(wildcard include/umsi/internal/*.h)
	@mkdir -p $(dir $@)
	$(or $(FUZZ_CC),clang) $(FUZZ_PCI_FLAGS) -Iplatform -Iplatform/sim -pthread \
		-o $@ tests/fuzz/fuzz_life.c $(CORE_SRCS) \
		$(sort $(wildcard platform/sim/*.c)) -lpthread

.PHONY: fuzz-life fuzz-life-long
fuzz-life: $(FUZZ_LIFE)

fuzz-life-long: $(FUZZ_LIFE)
	@mkdir -p $(BUILD)/fuzz/corpus-life
	$(FUZZ_LIFE) -max_total_time=$(FUZZ_LIFE_TIME) -max_len=256 \
		-artifact_prefix=$(BUILD)/fuzz/life- $(BUILD)/fuzz/corpus-life \
		tests/fuzz/seeds-life

.PHONY: fuzz-pci fuzz-pci-long test-asan asan-run
fuzz-pci: $(FUZZ_PCI)

$(FUZZ_PCI): tests/fuzz/fuzz_pci.c $(CORE_SRCS) $(wildcard include/umsi/*.h) \
		$(wildcard include/umsi/internal/*.h)
	@mkdir -p $(dir $@)
	$(or $(FUZZ_CC),clang) $(FUZZ_PCI_FLAGS) -o $@ tests/fuzz/fuzz_pci.c \
		$(CORE_SRCS)

fuzz-pci-long: $(FUZZ_PCI)
	@mkdir -p $(BUILD)/fuzz/corpus-pci
	$(FUZZ_PCI) -max_total_time=$(FUZZ_PCI_TIME) -max_len=4096 \
		-artifact_prefix=$(BUILD)/fuzz/ $(BUILD)/fuzz/corpus-pci

# ASan + UBSan: the same tests, another build tree.
ASAN_BUILD ?= build/asan
ASAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=undefined \
	-fno-omit-frame-pointer -DUMSI_ASSERT_TRAP
# The libraries first: not every test's rule names them as prerequisites.
test-asan:
	$(MAKE) BUILD=$(ASAN_BUILD) EXTRA_CFLAGS="$(ASAN_FLAGS)" \
		EXTRA_LDFLAGS="$(ASAN_FLAGS)" $(ASAN_BUILD)/libumsi.a \
		$(ASAN_BUILD)/libumsi-sim.a
	$(MAKE) BUILD=$(ASAN_BUILD) EXTRA_CFLAGS="$(ASAN_FLAGS)" \
		EXTRA_LDFLAGS="$(ASAN_FLAGS)" asan-run

# TEST_BINS is complete only once every fragment is read: name it in the
# recipe (expanded late), not as a prerequisite.
asan-run:
	$(MAKE) $(TEST_BINS)
	@BUILD=$(BUILD) ASAN_OPTIONS=detect_leaks=1 \
		UBSAN_OPTIONS=print_stacktrace=1 scripts/run-tests $(TEST_BINS) --
