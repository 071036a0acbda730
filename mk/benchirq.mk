# SPDX-License-Identifier: MIT
# Benchmarks of the IRQ core: figures, not tests.
BENCH_DISPATCH := $(BUILD)/bench/bench_dispatch

$(BENCH_DISPATCH): bench/bench_dispatch.c bench/bench_host.h $(LIB)
	@mkdir -p $(dir $@)
	$(CC) -Iinclude $(CFLAGS_HOST) -o $@ $< $(LIB)

.PHONY: bench-dispatch
bench-dispatch: $(BENCH_DISPATCH)
	$(BENCH_DISPATCH) 1000000
	@for c in 1024 8192; do $(BENCH_DISPATCH) 1000 $$c | grep memory; done
	@valgrind --tool=callgrind --callgrind-out-file=$(BUILD)/bench/callgrind.dispatch \
		--toggle-collect=umsi_dispatch $(BENCH_DISPATCH) 100000 2>&1 | \
		sed -n 's/.*Collected : \([0-9]*\).*/\1/p' | \
		awk '{ printf "dispatch: %.1f instructions from umsi_dispatch entry through the handler and EOI (callgrind, 100000 interrupts)\n", $$1 / 100000 }'
	@# Locked read-modify-writes in umsi_dispatch's own code (its rare paths
	@# are functions of their own, in .text.unlikely): x86 lock prefixes
	@# and xchg with memory, which is locked without one.
	@objdump -d --no-show-raw-insn $(BUILD)/core/src/irq/dispatch.o 2>/dev/null | \
		awk '/^[0-9a-f]+ <umsi_dispatch>:/ { f = 1; next } f && /^$$/ { f = 0 } \
		     f && (/\tlock / || /\txchg .*\(/) { n++; l = l " " $$2 " " $$3 } \
		     END { printf "dispatch: %d locked read-modify-write%s in umsi_dispatch (objdump:%s)\n", n, n == 1 ? "" : "s", l }'

# Bring-up of 10^3 .. 10^6 IRQs on 8192 CPUs: wall time per IRQ natively,
# instructions per IRQ under callgrind (10^3 .. 10^5; 10^6 takes minutes).
BENCH_BRINGUP := $(BUILD)/bench/bench_bringup

$(BENCH_BRINGUP): bench/bench_bringup.c bench/bench_host.h $(LIB)
	@mkdir -p $(dir $@)
	$(CC) -Iinclude $(CFLAGS_HOST) -o $@ $< $(LIB)

# Then the whole simulator on the same scale (issue 30: 10^6 vectors on
# 8192 CPUs): examples/million-vectors.umsi under GNU time, wall seconds
# and peak resident memory. Machine-dependent, so not in the docs check.
.PHONY: bench-bringup
bench-bringup: $(BENCH_BRINGUP) $(BUILD)/umsi
	@for v in 1000 10000 100000 1000000; do $(BENCH_BRINGUP) 8192 $$v; done
	@test -x /usr/bin/time || { echo "bench-bringup: needs GNU time (/usr/bin/time)"; exit 1; }
	@/usr/bin/time -f '%e %U %S %M' -o $(BUILD)/bench/time.sim \
		$(BUILD)/umsi sim examples/million-vectors.umsi > $(BUILD)/bench/report.sim || \
		{ echo "bench-bringup: umsi sim examples/million-vectors.umsi failed"; exit 1; }
	@read wall user sys kb < $(BUILD)/bench/time.sim; \
	awk -v w=$$wall -v u=$$user -v s=$$sys -v kb=$$kb 'BEGIN { printf "bringup: umsi sim of 10^6 vectors on 8192 CPUs (examples/million-vectors.umsi): %.2f s wall (%.2f user + %.2f system), peak %.0f MB\n", w, u, s, kb * 1024 / 1e6 }'
	@for v in 1000 10000 100000; do \
		valgrind --tool=callgrind --callgrind-out-file=$(BUILD)/bench/callgrind.bringup \
			--toggle-collect=bench_step_up $(BENCH_BRINGUP) 8192 $$v 2>&1 | \
		sed -n 's/.*Collected : \([0-9]*\).*/\1/p' | \
		awk -v v=$$v '{ printf "bringup: %d IRQs on 8192 CPUs: %.0f instructions per IRQ (callgrind)\n", v, $$1 / v }'; \
	done
