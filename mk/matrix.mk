# SPDX-License-Identifier: MIT
#
# The vector matrix (src/vector): unit and property test, benchmark.
#
#   make build/tests/test_matrix     cmocka test, also run by `make test`
#   make bench                       builds every benchmark
#   make bench-matrix                runs the matrix benchmark natively (ns/op)
#                                    and under callgrind (instructions/op)
#
# The test and the benchmark link the vector objects directly rather than
# libumsi.a, so they build while other modules are half written.
MATRIX_OBJS := $(filter $(BUILD)/core/src/vector/%,$(CORE_OBJS))

TEST_BINS += $(BUILD)/tests/test_matrix

$(BUILD)/tests/test_matrix: tests/unit/test_matrix.c include/umsi/matrix.h $(MATRIX_OBJS)
	@mkdir -p $(dir $@)
	$(CC) -Iinclude $(CFLAGS_HOST) -o $@ $< $(MATRIX_OBJS) $(LDFLAGS_HOST) -lcmocka

BENCH_MATRIX := $(BUILD)/bench/bench_matrix

.PHONY: bench bench-matrix
bench: $(BENCH_MATRIX)

$(BENCH_MATRIX): bench/bench_matrix.c include/umsi/matrix.h $(MATRIX_OBJS)
	@mkdir -p $(dir $@)
	$(CC) -Iinclude $(CFLAGS_HOST) -o $@ $< $(MATRIX_OBJS) $(LDFLAGS_HOST)

# Instructions are counted only inside the bench_step_* functions (one free
# plus one allocation each), reset before and dumped after every scenario
# by client requests; the awk below divides each dump by its step count.
MATRIX_CG := $(BUILD)/bench/callgrind.matrix
bench-matrix: $(BENCH_MATRIX)
	$(BENCH_MATRIX)
	rm -f $(MATRIX_CG) $(MATRIX_CG).*
	valgrind --tool=callgrind --collect-atstart=no \
		--toggle-collect='bench_step_*' --callgrind-out-file=$(MATRIX_CG) \
		$(BENCH_MATRIX) --callgrind >/dev/null 2>$(MATRIX_CG).log
	@echo "instructions per free+alloc (callgrind):"
	@printf '%-8s %-8s %12s\n' cpus mask instr/op
	@for f in $$(ls $(MATRIX_CG).* | grep -v '\.log$$' | sort -t. -k3 -n); do \
		awk '/^desc: Trigger: Client Request:/ { for (i = 5; i <= NF; i++) { split($$i, kv, "="); v[kv[1]] = kv[2] } } \
		     /^(summary|totals):/ { ir = $$2 } \
		     END { if (v["steps"] > 0) printf "%-8s %-8s %12.1f\n", v["cpus"], v["mask"], ir / v["steps"] }' $$f; \
	done
