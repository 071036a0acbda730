# SPDX-License-Identifier: MIT
#
# `umsi inspect` (tools/inspect): objects of the umsi command, its tests and
# its fuzzer.
#
#   make test                  runs tests/inspect/*.t, among them a bounded
#                              fuzzing pass (20000 runs) when clang is here
#   make fuzz-inspect          builds build/fuzz/fuzz_inspect
#   make fuzz-inspect-long     fuzzes for FUZZ_TIME seconds (default 600)
#   make sim-dumps             regenerates tests/data/sim-dumps (below)
#
# The fuzzer drives the dump parser, the capability decoder (the library's
# src/pci/cap.c and src/arch/x86/msg.c), the --check judgements (check.c)
# and the writers without any I/O.
# Its seeds are the real dumps in tests/data/pci-dumps (tests/data/README.md
# says where they come from).
INSPECT_SRCS := $(addprefix tools/inspect/,inspect.c dump.c decode.c live.c livetext.c check.c \
	json.c text.c heatmap.c svg.c)
UMSI_TOOL_OBJS += $(INSPECT_SRCS:%.c=$(BUILD)/host/%.o)

TEST_SCRIPTS += tests/inspect/cli.t tests/inspect/hostile.t \
		tests/inspect/lspci-oracle.t tests/inspect/sysroot.t \
		tests/inspect/lspci-differential.t tests/inspect/live.t \
		tests/inspect/fuzz-smoke.t tests/inspect/repeat.t \
		tests/inspect/sanitizers.t tests/inspect/livetext.t \
		tests/inspect/data.t tests/inspect/check.t \
		tests/inspect/logical.t tests/inspect/svg.t


PCI_DUMPS   ?= tests/data/pci-dumps
FUZZ_CC     ?= clang
FUZZ_TIME   ?= 600
FUZZ_INSPECT := $(BUILD)/fuzz/fuzz_inspect
FUZZ_INSPECT_SRCS := tests/fuzz/fuzz_inspect.c \
	$(addprefix tools/inspect/,dump.c decode.c json.c text.c check.c livetext.c) \
	src/pci/cap.c src/arch/x86/msg.c src/lib/strerror.c
FUZZ_FLAGS := -std=c11 -D_GNU_SOURCE -g -O1 -fno-omit-frame-pointer \
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	-Iinclude -Itools/inspect

# Build the fuzzer with `make test` only where clang is installed; the
# smoke test says plainly when it is not.
ifneq ($(shell command -v $(FUZZ_CC) 2>/dev/null),)
CHECK_TARGETS += $(FUZZ_INSPECT)
endif

.PHONY: fuzz-inspect fuzz-inspect-long
fuzz-inspect: $(FUZZ_INSPECT)

$(FUZZ_INSPECT): $(FUZZ_INSPECT_SRCS) tools/inspect/inspect.h $(wildcard include/umsi/*.h)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ $(FUZZ_INSPECT_SRCS)

# A long pass with a corpus kept in build/; crashes land in build/fuzz/.
fuzz-inspect-long: $(FUZZ_INSPECT)
	@mkdir -p $(BUILD)/fuzz/corpus-inspect
	@if [ -d "$(PCI_DUMPS)" ]; then cp -n $(PCI_DUMPS)/* $(BUILD)/fuzz/corpus-inspect/ 2>/dev/null || true; \
	else echo "note: $(PCI_DUMPS) absent; fuzzing from an empty corpus"; fi
	$(FUZZ_INSPECT) -max_total_time=$(FUZZ_TIME) -max_len=65536 \
		-artifact_prefix=$(BUILD)/fuzz/ -dict=tests/fuzz/fuzz_inspect.dict \
		$(BUILD)/fuzz/corpus-inspect

# The text live mode reads (tools/inspect/livetext.c): /proc/interrupts,
# sysfs resource files, debugfs IRQ files, lockdown, affinity lists and
# names. Seeds in tests/fuzz/corpus-livetext.
#   make fuzz-livetext          builds build/fuzz/fuzz_livetext
#   make fuzz-livetext-long     fuzzes for FUZZ_TIME seconds
FUZZ_LIVETEXT := $(BUILD)/fuzz/fuzz_livetext
FUZZ_LIVETEXT_SRCS := tests/fuzz/fuzz_livetext.c tools/inspect/livetext.c \
	tools/inspect/decode.c src/pci/cap.c src/arch/x86/msg.c src/lib/strerror.c
ifneq ($(shell command -v $(FUZZ_CC) 2>/dev/null),)
CHECK_TARGETS += $(FUZZ_LIVETEXT)
endif
TEST_SCRIPTS += tests/fuzz/fuzz_livetext.t

.PHONY: fuzz-livetext fuzz-livetext-long
fuzz-livetext: $(FUZZ_LIVETEXT)

$(FUZZ_LIVETEXT): $(FUZZ_LIVETEXT_SRCS) tools/inspect/inspect.h $(wildcard include/umsi/*.h)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ $(FUZZ_LIVETEXT_SRCS)

fuzz-livetext-long: $(FUZZ_LIVETEXT)
	@mkdir -p $(BUILD)/fuzz/corpus-livetext
	$(FUZZ_LIVETEXT) -max_total_time=$(FUZZ_TIME) -max_len=65536 \
		-print_final_stats=1 -artifact_prefix=$(BUILD)/fuzz/ \
		-dict=tests/fuzz/fuzz_livetext.dict $(BUILD)/fuzz/corpus-livetext \
		tests/fuzz/corpus-livetext

# The man page installs with the command.
.PHONY: install-umsi-man
install: install-umsi-man
install-umsi-man:
	install -d $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 644 docs/umsi.1 $(DESTDIR)$(PREFIX)/share/man/man1/umsi.1

# Simulated machines written as lspci dumps and sysfs trees
# (tests/inspect/simdump.c): the generated dumps in tests/data/sim-dumps
# and the machines of tests/inspect/simdump.t.
#   make sim-dumps     regenerates tests/data/sim-dumps (commit the result)
SIMDUMP := $(BUILD)/inspect/simdump
CHECK_TARGETS += $(SIMDUMP)
TEST_SCRIPTS += tests/inspect/simdump.t

$(SIMDUMP): tests/inspect/simdump.c $(SIM_LIB) $(LIB) $(wildcard include/umsi/*.h) platform/sim/umsi_sim.h
	@mkdir -p $(dir $@)
	$(CC) -Iinclude -Iplatform $(CFLAGS_HOST) -o $@ $< $(SIM_LIB) $(LIB) $(LDFLAGS_HOST) -lpthread

.PHONY: sim-dumps
sim-dumps: $(SIMDUMP)
	rm -rf $(BUILD)/inspect/sim-dumps
	$(SIMDUMP) $(BUILD)/inspect/sim-dumps
	mkdir -p tests/data/sim-dumps
	cp $(BUILD)/inspect/sim-dumps/dumps/* tests/data/sim-dumps/
