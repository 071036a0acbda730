# SPDX-License-Identifier: MIT
#
# `umsi sim`: the simulator front end (tools/sim), its tests and its fuzzer.
#
#   make test                  runs tests/sim/*.t, among them the command
#                              under ASan+UBSan+LSan on bad and good files
#                              (build/asan/umsi), and a bounded fuzzing pass
#                              of the machine-file parser when clang is here
#   make fuzz-simfile          builds build/fuzz/fuzz_simfile
#   make fuzz-simfile-long     fuzzes for FUZZ_TIME seconds (default 600)
#
# The fuzzer parses each input as a machine file and builds and runs the
# small machines through the library and the simulator (see the comment
# at the top of tests/fuzz/fuzz_simfile.c). Its seeds are in
# tests/fuzz/corpus-simfile; the long run keeps its corpus in build/.
SIMCMD_SRCS := $(addprefix tools/sim/,simcmd.c simparse.c simrun.c simreport.c)
UMSI_TOOL_OBJS += $(SIMCMD_SRCS:%.c=$(BUILD)/host/%.o)
TEST_SCRIPTS += tests/sim/umsi-sim.t tests/sim/sim-input.t \
		tests/sim/examples.t tests/sim/report.t tests/sim/sanitizers.t \
		tests/fuzz/fuzz_simfile.t

.PHONY: sim-demo
sim-demo: $(BUILD)/umsi
	$(BUILD)/umsi sim

FUZZ_SIMFILE := $(BUILD)/fuzz/fuzz_simfile
FUZZ_SIMFILE_SRCS := tests/fuzz/fuzz_simfile.c tools/sim/simparse.c \
	tools/sim/simrun.c $(sort $(wildcard platform/sim/*.c)) \
	$(sort $(wildcard src/*/*.c))
FUZZ_SIMFILE_FLAGS := -std=c11 -D_GNU_SOURCE -g -O1 -fno-omit-frame-pointer \
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	-Iinclude -Iplatform -Iplatform/sim -Itools/sim -pthread
FUZZ_SIMFILE_TIME ?= $(or $(FUZZ_TIME),600)

ifneq ($(shell command -v $(or $(FUZZ_CC),clang) 2>/dev/null),)
CHECK_TARGETS += $(FUZZ_SIMFILE)
endif

.PHONY: fuzz-simfile fuzz-simfile-long
fuzz-simfile: $(FUZZ_SIMFILE)

$(FUZZ_SIMFILE): $(FUZZ_SIMFILE_SRCS) tools/sim/simparse.h tools/sim/simrun.h \
		platform/sim/umsi_sim.h platform/sim/sim_priv.h \
		$(wildcard include/umsi/*.h) $(wildcard include/umsi/internal/*.h)
	@mkdir -p $(dir $@)
	$(or $(FUZZ_CC),clang) $(FUZZ_SIMFILE_FLAGS) -o $@ $(FUZZ_SIMFILE_SRCS)

# A long pass, one job (-jobs=1 runs it as a child whose output libFuzzer
# writes to fuzz-0.log in the current directory: hence its own directory),
# with its corpus kept in build/ and seeded from the committed corpus;
# crashes land in build/fuzz/. The final statistics end
# build/fuzz/fuzz_simfile-long.log.
FUZZ_SIMFILE_LONG_DIR := $(BUILD)/fuzz/simfile-long
fuzz-simfile-long: $(FUZZ_SIMFILE)
	@mkdir -p $(BUILD)/fuzz/corpus-simfile $(FUZZ_SIMFILE_LONG_DIR)
	cd $(FUZZ_SIMFILE_LONG_DIR) && rm -f fuzz-0.log && \
	$(abspath $(FUZZ_SIMFILE)) -jobs=1 -workers=1 \
		-max_total_time=$(FUZZ_SIMFILE_TIME) -print_final_stats=1 \
		-max_len=32768 -dict=$(abspath tests/fuzz/fuzz_simfile.dict) \
		-artifact_prefix=$(abspath $(BUILD)/fuzz)/ \
		$(abspath $(BUILD)/fuzz/corpus-simfile) \
		$(abspath tests/fuzz/corpus-simfile); \
	rc=$$?; cp fuzz-0.log ../fuzz_simfile-long.log; \
	grep -E '^#[0-9]+[[:space:]]+(DONE|pulse)|^stat::|^Done|ERROR|SUMMARY' \
		../fuzz_simfile-long.log | tail -n 12; exit $$rc
