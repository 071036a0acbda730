# SPDX-License-Identifier: MIT
#
# The vector matrix (src/vector): unit and property test, benchmark.
#
#   make build/tests/test_matrix     cmocka test, also run by `make test`
#   make bench                       builds every benchmark
#   make bench-matrix                runs the matrix benchmark natively (ns/op)
#                                    and under callgrind (instructions/op),
#                                    today's matrix.c next to the one of
#                                    MATRIX_BEFORE (a git revision)
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
# Every benchmark, and the figure tables of docs/bench-*.md and README.md
# written from what they print (scripts/bench-docs).
bench: $(BENCH_MATRIX)
	scripts/bench-docs

$(BENCH_MATRIX): bench/bench_matrix.c include/umsi/matrix.h $(MATRIX_OBJS)
	@mkdir -p $(dir $@)
	$(CC) -Iinclude $(CFLAGS_HOST) -o $@ $< $(MATRIX_OBJS) $(LDFLAGS_HOST)

# The "before" column: the same benchmark linked against src/vector/matrix.c
# as it was at MATRIX_BEFORE, the last revision before spaces had a size
# (nvec), taken from git and compiled with the core's flags. The header has
# only gained since (nvec, a larger reserved[]), so the old file builds
# against today's; it rejects the 2048-identity configuration, whose rows
# then have no "before". MATRIX_BEFORE=b3b969a gives the figures from
# before the branch-and-bound search (issue 18). Without git history the
# column is left out.
MATRIX_BEFORE ?= 35d900030c2eeedeaf159813b0e4dd9591498701
BENCH_MATRIX_BEFORE := $(BUILD)/bench/bench_matrix_before
# Named after the revision, so that another MATRIX_BEFORE rebuilds.
MATRIX_BEFORE_SRC := $(BUILD)/bench/matrix-$(MATRIX_BEFORE).c

$(MATRIX_BEFORE_SRC):
	@mkdir -p $(dir $@)
	git show $(MATRIX_BEFORE):src/vector/matrix.c > $@.tmp
	mv $@.tmp $@

$(MATRIX_BEFORE_SRC:.c=.o): $(MATRIX_BEFORE_SRC)
	$(CC) $(CPPFLAGS_CORE) $(CFLAGS_CORE) -c $< -o $@

$(BENCH_MATRIX_BEFORE): bench/bench_matrix.c include/umsi/matrix.h $(MATRIX_BEFORE_SRC:.c=.o)
	$(CC) -Iinclude $(CFLAGS_HOST) -o $@ $< $(MATRIX_BEFORE_SRC:.c=.o) $(LDFLAGS_HOST)

# Instructions are counted only inside the bench_step_* functions (one free
# plus one allocation each), reset before and dumped after every scenario
# by client requests; matrix_cg_table divides each dump by its step count
# and prints "cpus mask instructions" lines.
MATRIX_CG := $(BUILD)/bench/callgrind.matrix
MATRIX_CG_BEFORE := $(BUILD)/bench/callgrind.matrix-before
define matrix_cg_run
	rm -f $(2) $(2).*
	valgrind --tool=callgrind --collect-atstart=no \
		--toggle-collect='bench_step_*' --callgrind-out-file=$(2) \
		$(1) --callgrind >/dev/null 2>$(2).log
	@for f in $$(ls $(2).* | grep -v '\.\(log\|txt\)$$' | sort -t. -k3 -n); do \
		awk '/^desc: Trigger: Client Request:/ { for (i = 5; i <= NF; i++) { split($$i, kv, "="); v[kv[1]] = kv[2] } } \
		     /^(summary|totals):/ { ir = $$2 } \
		     END { if (v["steps"] > 0) printf "%s %s %.1f\n", v["cpus"], v["mask"], ir / v["steps"] }' $$f; \
	done > $(2).txt
endef

bench-matrix: $(BENCH_MATRIX)
	$(BENCH_MATRIX)
	$(call matrix_cg_run,$(BENCH_MATRIX),$(MATRIX_CG))
	rm -f $(MATRIX_CG_BEFORE).txt
	@if $(MAKE) --no-print-directory $(BENCH_MATRIX_BEFORE) >/dev/null 2>&1; then \
		echo "before ($(MATRIX_BEFORE)):"; \
		$(BENCH_MATRIX_BEFORE) | grep -v ' scan '; \
		$(MAKE) --no-print-directory matrix-cg-before >/dev/null; \
	else \
		echo "no before figures: cannot build matrix.c of $(MATRIX_BEFORE) (needs git history)"; \
	fi
	@echo "instructions per free+alloc (callgrind), matrix.c of $(MATRIX_BEFORE) and now:"
	@printf '%-9s %-9s %10s %10s %8s\n' cpus mask before after ratio
	@awk -v before=$(MATRIX_CG_BEFORE).txt \
	     'BEGIN { while ((getline l < before) > 0) { split(l, f, " "); b[f[1] " " f[2]] = f[3] } } \
	     { k = $$1 " " $$2; \
	       if ((k in b) && $$2 != "scan") printf "%-9s %-9s %10.1f %10.1f %7.1fx\n", $$1, $$2, b[k], $$3, b[k] / $$3; \
	       else printf "%-9s %-9s %10s %10.1f %8s\n", $$1, $$2, "-", $$3, "" }' $(MATRIX_CG).txt

.PHONY: matrix-cg-before
matrix-cg-before: $(BENCH_MATRIX_BEFORE)
	$(call matrix_cg_run,$(BENCH_MATRIX_BEFORE),$(MATRIX_CG_BEFORE))
