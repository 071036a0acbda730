# SPDX-License-Identifier: MIT
#
# Fuzz target for the x86 reference kernel's ACPI table parsers
# (kernel/arch/x86_64/acpi.c: MADT, MCFG, FADT, DMAR), compiled hosted and unmodified
# (tests/fuzz/fuzz_acpi.c), seeded with tables shaped as QEMU q35 gives
# them (tests/fuzz/corpus-acpi).
#
#   make test             a bounded pass (tests/fuzz/fuzz_acpi.t)
#   make fuzz-acpi        builds build/fuzz/fuzz_acpi
FUZZ_ACPI_CC := $(or $(FUZZ_CC),clang)
FUZZ_ACPI_FLAGS := -std=c11 -g -O1 -fno-omit-frame-pointer \
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
FUZZ_ACPI := $(BUILD)/fuzz/fuzz_acpi

ifneq ($(shell command -v $(FUZZ_ACPI_CC) 2>/dev/null),)
CHECK_TARGETS += $(FUZZ_ACPI)
endif
TEST_SCRIPTS += tests/fuzz/fuzz_acpi.t

.PHONY: fuzz-acpi
fuzz-acpi: $(FUZZ_ACPI)

$(FUZZ_ACPI): tests/fuzz/fuzz_acpi.c kernel/arch/x86_64/acpi.c kernel/arch/x86_64/acpi.h kernel/common/kernel.h \
		kernel/common/lib/printf.c src/lib/format.c src/lib/mem.c
	@mkdir -p $(dir $@)
	$(FUZZ_ACPI_CC) $(FUZZ_ACPI_FLAGS) -Ikernel/arch/x86_64 -Ikernel/common \
		-Ikernel/common/lib -Iinclude -o $@ $< \
		kernel/common/lib/printf.c src/lib/format.c src/lib/mem.c

# What the parsers make of the seeds (tests/fuzz/test_acpi.c): the host
# compiler, the unit tests' flags, run by make test.
TEST_BINS += $(BUILD)/tests/test_acpi

$(BUILD)/tests/test_acpi: tests/fuzz/test_acpi.c kernel/arch/x86_64/acpi.c \
		kernel/arch/x86_64/acpi.h kernel/common/kernel.h \
		kernel/common/lib/printf.c src/lib/format.c src/lib/mem.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_HOST) -Ikernel/arch/x86_64 -Ikernel/common \
		-Ikernel/common/lib -Iinclude -o $@ $< kernel/common/lib/printf.c \
		src/lib/format.c src/lib/mem.c $(LDFLAGS_HOST) -lcmocka
