# SPDX-License-Identifier: MIT
# Benchmarks of the IRQ core: figures, not tests.
BENCH_DISPATCH := $(BUILD)/bench/bench_dispatch

$(BENCH_DISPATCH): bench/bench_dispatch.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) -Iinclude $(CFLAGS_HOST) -o $@ $< $(LIB)

.PHONY: bench-dispatch
bench-dispatch: $(BENCH_DISPATCH)
	$(BENCH_DISPATCH) 1000000
	@valgrind --tool=callgrind --callgrind-out-file=$(BUILD)/bench/callgrind.dispatch \
		--toggle-collect=umsi_dispatch $(BENCH_DISPATCH) 100000 2>&1 | \
		sed -n 's/.*Collected : \([0-9]*\).*/\1/p' | \
		awk '{ printf "dispatch: %.1f instructions from umsi_dispatch entry through the handler and EOI (callgrind, 100000 interrupts)\n", $$1 / 100000 }'
