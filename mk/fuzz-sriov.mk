# SPDX-License-Identifier: MIT
#
# A fuzz target for the SR-IOV capability: the parser and the check of
# src/pci/cap.c (umsi_pci_read_sriov_cap, umsi_pci_sriov_check), built
# hosted with the sanitizers; every layout the check accepts is checked
# against its promises (tests/fuzz/fuzz_sriov.c).
#
#   make test                a bounded pass (tests/fuzz/fuzz_sriov.t)
#   make fuzz-sriov          builds build/fuzz/fuzz_sriov
#   make fuzz-sriov-long     fuzzes for FUZZ_TIME seconds (default 600)
FUZZ_SRIOV := $(BUILD)/fuzz/fuzz_sriov
FUZZ_SRIOV_CC := $(or $(FUZZ_CC),clang)

ifneq ($(shell command -v $(FUZZ_SRIOV_CC) 2>/dev/null),)
CHECK_TARGETS += $(FUZZ_SRIOV)
endif
TEST_SCRIPTS += tests/fuzz/fuzz_sriov.t

.PHONY: fuzz-sriov fuzz-sriov-long
fuzz-sriov: $(FUZZ_SRIOV)

$(FUZZ_SRIOV): tests/fuzz/fuzz_sriov.c src/pci/cap.c include/umsi/pcicap.h \
		include/umsi/pci_regs.h
	@mkdir -p $(dir $@)
	$(FUZZ_SRIOV_CC) -std=c11 -D_GNU_SOURCE -g -O1 -fno-omit-frame-pointer \
		-fsanitize=fuzzer,address,undefined -fsanitize=integer \
		-fno-sanitize=unsigned-shift-base -fno-sanitize-recover=all \
		-Iinclude -o $@ tests/fuzz/fuzz_sriov.c src/pci/cap.c

fuzz-sriov-long: $(FUZZ_SRIOV)
	@mkdir -p $(BUILD)/fuzz/corpus-sriov
	$(FUZZ_SRIOV) -max_total_time=$(or $(FUZZ_TIME),600) -max_len=126 \
		-print_final_stats=1 -artifact_prefix=$(BUILD)/fuzz/sriov- \
		$(BUILD)/fuzz/corpus-sriov tests/fuzz/corpus-sriov
