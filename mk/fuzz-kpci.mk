# SPDX-License-Identifier: MIT
#
# Fuzz target for the reference kernels' reading of a bridge's
# configuration space (kernel/common/pci.c: the room a hot-plug port keeps,
# QEMU's resource-reserve hint, a new function's capability scan),
# compiled hosted and unmodified (tests/fuzz/fuzz_kpci.c), seeded with
# root ports shaped as QEMU's (tests/fuzz/corpus-kpci).
#
#   make test             a bounded pass (tests/fuzz/fuzz_kpci.t)
#   make fuzz-kpci        builds build/fuzz/fuzz_kpci
FUZZ_KPCI_CC := $(or $(FUZZ_CC),clang)
FUZZ_KPCI := $(BUILD)/fuzz/fuzz_kpci

ifneq ($(shell command -v $(FUZZ_KPCI_CC) 2>/dev/null),)
CHECK_TARGETS += $(FUZZ_KPCI)
endif
TEST_SCRIPTS += tests/fuzz/fuzz_kpci.t

.PHONY: fuzz-kpci
fuzz-kpci: $(FUZZ_KPCI)

$(FUZZ_KPCI): tests/fuzz/fuzz_kpci.c kernel/common/pci.c kernel/common/pci.h \
		kernel/common/kernel.h kernel/common/lib/printf.c \
		kernel/common/lib/string.c src/lib/format.c src/lib/mem.c
	@mkdir -p $(dir $@)
	$(FUZZ_KPCI_CC) -std=c11 -D_GNU_SOURCE -g -O1 -fno-omit-frame-pointer \
		-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
		-Ikernel/arch/x86_64 \
		-Ikernel/common -Ikernel/common/lib -Iinclude -o $@ $< \
		kernel/common/lib/printf.c kernel/common/lib/string.c \
		src/lib/format.c src/lib/mem.c
