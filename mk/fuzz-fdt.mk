# SPDX-License-Identifier: MIT
#
# The fuzz target for the reference kernels' device-tree reader
# (kernel/common/fdt.c: riscv64 and arm64), compiled hosted and unmodified
# (tests/fuzz/fuzz_fdt.c), seeded with the device trees QEMU gives each
# machine (tests/fuzz/corpus-fdt, from -machine ...,dumpdtb=).
#
#   make test             a bounded pass from each machine's tree (tests/fuzz/fuzz_fdt.t)
#   make fuzz-fdt         builds build/fuzz/fuzz_fdt
FUZZ_FDT_CC := $(or $(FUZZ_CC),clang)
FUZZ_FDT_FLAGS := -std=c11 -g -O1 -fno-omit-frame-pointer \
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
FUZZ_FDT := $(BUILD)/fuzz/fuzz_fdt

ifneq ($(shell command -v $(FUZZ_FDT_CC) 2>/dev/null),)
CHECK_TARGETS += $(FUZZ_FDT)
endif
TEST_SCRIPTS += tests/fuzz/fuzz_fdt.t

.PHONY: fuzz-fdt
fuzz-fdt: $(FUZZ_FDT)

$(BUILD)/fuzz/fuzz_fdt: tests/fuzz/fuzz_fdt.c kernel/common/fdt.c kernel/common/fdt.h
	@mkdir -p $(dir $@)
	$(FUZZ_FDT_CC) $(FUZZ_FDT_FLAGS) -Ikernel/common -o $@ $< kernel/common/fdt.c
