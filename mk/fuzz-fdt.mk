# SPDX-License-Identifier: MIT
#
# Fuzz targets for the reference kernels' device-tree parsers
# (kernel/arch/riscv64/fdt.c, kernel/arch/arm64/fdt.c), compiled hosted and
# unmodified from one harness (tests/fuzz/fuzz_fdt.c), seeded with the
# device trees QEMU gives (tests/fuzz/corpus-fdt, from -machine ...,dumpdtb=).
#
#   make test             a bounded pass of each (tests/fuzz/fuzz_fdt.t)
#   make fuzz-fdt         builds build/fuzz/fuzz_fdt_riscv64, _arm64
FUZZ_FDT_CC := $(or $(FUZZ_CC),clang)
FUZZ_FDT_FLAGS := -std=c11 -g -O1 -fno-omit-frame-pointer \
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
FUZZ_FDT := $(BUILD)/fuzz/fuzz_fdt_riscv64 $(BUILD)/fuzz/fuzz_fdt_arm64

ifneq ($(shell command -v $(FUZZ_FDT_CC) 2>/dev/null),)
CHECK_TARGETS += $(FUZZ_FDT)
endif
TEST_SCRIPTS += tests/fuzz/fuzz_fdt.t

.PHONY: fuzz-fdt
fuzz-fdt: $(FUZZ_FDT)

$(BUILD)/fuzz/fuzz_fdt_riscv64: tests/fuzz/fuzz_fdt.c kernel/arch/riscv64/fdt.c kernel/arch/riscv64/fdt.h
	@mkdir -p $(dir $@)
	$(FUZZ_FDT_CC) $(FUZZ_FDT_FLAGS) -Ikernel/arch/riscv64 -o $@ $< kernel/arch/riscv64/fdt.c

$(BUILD)/fuzz/fuzz_fdt_arm64: tests/fuzz/fuzz_fdt.c kernel/arch/arm64/fdt.c kernel/arch/arm64/fdt.h
	@mkdir -p $(dir $@)
	$(FUZZ_FDT_CC) $(FUZZ_FDT_FLAGS) -DFDT_ARM64 -Ikernel/arch/arm64 -o $@ $< kernel/arch/arm64/fdt.c
