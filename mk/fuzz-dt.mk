# SPDX-License-Identifier: MIT
#
# The reference kernels' reading of the device tree: what the arm64 kernel
# (kernel/arch/arm64/dt.c) and the riscv64 kernel (kernel/arch/riscv64/
# platform.c) make of a blob, above the FDT readers mk/fuzz-fdt.mk fuzzes.
# Both compiled hosted and unmodified, with tests/fuzz/dt-shim/kernel.h in
# place of kernel/common/kernel.h (which would bring the host's x86 inline
# assembly beside the arm64 or riscv64 headers) and the console of
# tests/fuzz/dt_shim.c (the kernel's own printf, into a buffer).
#
#   make test             the cmocka tests below, and a bounded libFuzzer
#                         pass of each parser (tests/fuzz/fuzz_dt.t)
#   make fuzz-dt          builds build/fuzz/fuzz_dt_arm64, _riscv64 (clang)
#   make test-dt          builds build/tests/test_dt_arm64, _riscv64: the
#                         ECAM window and bus-range checks on trees
#                         written by tests/fuzz/fdt_writer.c
#   make fuzz-dt-long     fuzzes each for FUZZ_TIME seconds (default 600)
FUZZ_DT_CC := $(or $(FUZZ_CC),clang)
FUZZ_DT_FLAGS := $(WARN) -g -O1 -fno-omit-frame-pointer \
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
FUZZ_DT := $(BUILD)/fuzz/fuzz_dt_arm64 $(BUILD)/fuzz/fuzz_dt_riscv64
TEST_DT := $(BUILD)/tests/test_dt_arm64 $(BUILD)/tests/test_dt_riscv64

# The console and the kernel's bounded printf, hosted.
DT_SHIM_SRCS := tests/fuzz/dt_shim.c kernel/common/lib/printf.c src/lib/format.c \
	src/lib/mem.c
DT_SHIM_DEPS := $(DT_SHIM_SRCS) tests/fuzz/dt_shim.h \
	tests/fuzz/dt-shim/kernel.h kernel/common/lib/klib.h
DT_INC_ARM64 := -Itests/fuzz -Itests/fuzz/dt-shim -Ikernel/arch/arm64 \
	-Ikernel/common -Ikernel/common/dt -Ikernel/common/lib -Iinclude
DT_INC_RISCV64 := -Itests/fuzz -Itests/fuzz/dt-shim -Ikernel/arch/riscv64 \
	-Ikernel/common -Ikernel/common/dt -Ikernel/common/lib -Iinclude
DT_SRCS_ARM64 := kernel/arch/arm64/dt.c kernel/common/fdt.c \
	kernel/common/dt/dt_pci.c
DT_SRCS_RISCV64 := kernel/arch/riscv64/platform.c kernel/common/fdt.c \
	kernel/common/dt/dt_pci.c
DT_DEPS_ARM64 := $(DT_SRCS_ARM64) $(wildcard kernel/arch/arm64/*.h) \
	kernel/common/fdt.h kernel/common/dt/dt_pci.h
DT_DEPS_RISCV64 := $(DT_SRCS_RISCV64) $(wildcard kernel/arch/riscv64/*.h) \
	kernel/common/fdt.h kernel/common/dt/dt_pci.h

ifneq ($(shell command -v $(FUZZ_DT_CC) 2>/dev/null),)
CHECK_TARGETS += $(FUZZ_DT)
endif
TEST_BINS += $(TEST_DT)
TEST_SCRIPTS += tests/fuzz/fuzz_dt.t

.PHONY: fuzz-dt test-dt fuzz-dt-long
fuzz-dt: $(FUZZ_DT)
test-dt: $(TEST_DT)

$(BUILD)/fuzz/fuzz_dt_arm64: tests/fuzz/fuzz_dt_arm64.c \
		tests/fuzz/fuzz_dt_common.h $(DT_DEPS_ARM64) $(DT_SHIM_DEPS)
	@mkdir -p $(dir $@)
	$(FUZZ_DT_CC) $(FUZZ_DT_FLAGS) $(DT_INC_ARM64) -o $@ $< \
		$(DT_SRCS_ARM64) $(DT_SHIM_SRCS)

$(BUILD)/fuzz/fuzz_dt_riscv64: tests/fuzz/fuzz_dt_riscv64.c \
		tests/fuzz/fuzz_dt_common.h $(DT_DEPS_RISCV64) $(DT_SHIM_DEPS)
	@mkdir -p $(dir $@)
	$(FUZZ_DT_CC) $(FUZZ_DT_FLAGS) $(DT_INC_RISCV64) -o $@ $< \
		$(DT_SRCS_RISCV64) $(DT_SHIM_SRCS)

# The regression tests: the host compiler, the unit tests' flags.
$(BUILD)/tests/test_dt_arm64: tests/fuzz/test_dt_arm64.c tests/fuzz/fdt_writer.c \
		tests/fuzz/fdt_writer.h tests/fuzz/test_dt_cases.h \
		$(DT_DEPS_ARM64) $(DT_SHIM_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_HOST) $(DT_INC_ARM64) -o $@ $< tests/fuzz/fdt_writer.c \
		$(DT_SRCS_ARM64) $(DT_SHIM_SRCS) $(LDFLAGS_HOST) -lcmocka

$(BUILD)/tests/test_dt_riscv64: tests/fuzz/test_dt_riscv64.c tests/fuzz/fdt_writer.c \
		tests/fuzz/fdt_writer.h tests/fuzz/test_dt_cases.h \
		$(DT_DEPS_RISCV64) $(DT_SHIM_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_HOST) $(DT_INC_RISCV64) -o $@ $< tests/fuzz/fdt_writer.c \
		$(DT_SRCS_RISCV64) $(DT_SHIM_SRCS) $(LDFLAGS_HOST) -lcmocka

fuzz-dt-long: $(FUZZ_DT)
	@for arch in arm64 riscv64; do \
		mkdir -p $(BUILD)/fuzz/corpus-dt-$$arch; \
		$(BUILD)/fuzz/fuzz_dt_$$arch -max_total_time=$(or $(FUZZ_TIME),600) \
			-max_len=16384 -print_final_stats=1 \
			-artifact_prefix=$(BUILD)/fuzz/dt-$$arch- \
			$(BUILD)/fuzz/corpus-dt-$$arch tests/fuzz/corpus-dt \
			tests/fuzz/corpus-fdt || exit 1; \
	done
