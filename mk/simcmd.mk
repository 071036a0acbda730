# SPDX-License-Identifier: MIT
#
# `umsi sim`: the simulator front end (tools/sim), its tests and its fuzzer.
#
#   make test                  runs tests/sim/*.t, among them the command
#                              under ASan+UBSan+LSan on bad and good files
#                              (build/asan/umsi), and a bounded fuzzing pass
#                              of the machine-file parser when clang is here
#   make bench-sim             time and peak memory of umsi sim up to
#                              8192 CPUs and 10^6 vectors (docs/bench-sim.md)
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
		tests/fuzz/fuzz_simfile.t tests/sim/svg.t

.PHONY: sim-demo
sim-demo: $(BUILD)/umsi
	$(BUILD)/umsi sim

# Figures, not a test (docs/bench-sim.md): `umsi sim` on 288 CPUs
# (examples/storage-server.umsi), 8192 CPUs with 10^5 vectors, and 8192
# CPUs with 10^6 (examples/million-vectors.umsi); wall, user and system
# seconds and peak memory from GNU time, and the lines of the report.
# Fails when a run does not exit 0.
BENCH_SIM_DIR := $(BUILD)/bench/sim
.PHONY: bench-sim
bench-sim: $(BUILD)/umsi
	@mkdir -p $(BENCH_SIM_DIR)
	@printf 'cpus 8192\nplatform x2apic ext-dest-id\ndevice nic vendor=0x15b3 device=0x101d msix=2048 vectors=2000 count=50\n' \
		> $(BENCH_SIM_DIR)/8192-cpus-100k.umsi
	@test -x /usr/bin/time || { echo "bench-sim: needs GNU time (/usr/bin/time)"; exit 1; }
	@for f in examples/storage-server.umsi $(BENCH_SIM_DIR)/8192-cpus-100k.umsi \
		  examples/million-vectors.umsi; do \
		/usr/bin/time -f '%e %U %S %M' -o $(BENCH_SIM_DIR)/time \
			$(BUILD)/umsi sim $$f > $(BENCH_SIM_DIR)/report; rc=$$?; \
		read wall user sys kb < $(BENCH_SIM_DIR)/time; \
		awk -v f="$$f" -v rc=$$rc -v w=$$wall -v u=$$user -v s=$$sys -v kb=$$kb \
			-v n=$$(wc -l < $(BENCH_SIM_DIR)/report) \
			'BEGIN { printf "bench-sim: %s: exit %d, %.2f s wall (%.2f user + %.2f system), peak %.0f MiB, report %d lines\n", f, rc, w, u, s, kb / 1024, n }'; \
		grep -E '^machine:|^vectors per CPU:|^interrupts:' $(BENCH_SIM_DIR)/report | sed 's/^/    /'; \
		[ $$rc -eq 0 ] || exit 1; \
	done

FUZZ_SIMFILE := $(BUILD)/fuzz/fuzz_simfile
FUZZ_SIMFILE_SRCS := tests/fuzz/fuzz_simfile.c tools/sim/simparse.c \
	tools/sim/simrun.c $(sort $(wildcard platform/sim/*.c)) \
	$(sort $(wildcard src/*/*.c src/arch/*/*.c))
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
