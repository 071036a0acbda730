# SPDX-License-Identifier: MIT
#
# A fuzz target for the reference kernel's command line (kernel/common/cmdline.c)
# and its number parser (kstrtou64 in kernel/common/lib/string.c), compiled
# hosted and unmodified, with the kernel's string functions renamed so they
# do not take the place of the C library's in the fuzzer. x86-64 hosts only
# (kernel.h brings the kernel's x86 inline assembly along).
#
#   make test                 a bounded pass (tests/fuzz/fuzz_kcmdline.t)
#   make fuzz-kcmdline        builds build/fuzz/fuzz_kcmdline
#   make fuzz-kcmdline-long   fuzzes for FUZZ_TIME seconds (default 600)
FUZZ_KCMDLINE := $(BUILD)/fuzz/fuzz_kcmdline
FUZZ_KCMDLINE_CC := $(or $(FUZZ_CC),clang)
FUZZ_KCMDLINE_FLAGS := -std=c11 -g -O1 -fno-omit-frame-pointer \
	-fno-sanitize-recover=undefined -Ikernel/arch/x86_64 -Ikernel/common \
	-Ikernel/common/lib -Iinclude
FUZZ_KCMDLINE_RENAME := -fno-builtin $(foreach f,memcpy memmove memset memcmp \
	strlen strcmp strncmp,-D$(f)=kernel_$(f))
FUZZ_KCMDLINE_KOBJS := $(BUILD)/fuzz/kcmdline/cmdline.o \
	$(BUILD)/fuzz/kcmdline/string.o

ifneq ($(filter x86_64%,$(shell $(FUZZ_KCMDLINE_CC) -dumpmachine 2>/dev/null)),)
CHECK_TARGETS += $(FUZZ_KCMDLINE)
endif
TEST_SCRIPTS += tests/fuzz/fuzz_kcmdline.t

.PHONY: fuzz-kcmdline fuzz-kcmdline-long
fuzz-kcmdline: $(FUZZ_KCMDLINE)

$(BUILD)/fuzz/kcmdline/cmdline.o: kernel/common/cmdline.c kernel/common/kernel.h kernel/common/lib/klib.h
	@mkdir -p $(dir $@)
	$(FUZZ_KCMDLINE_CC) $(FUZZ_KCMDLINE_FLAGS) $(FUZZ_KCMDLINE_RENAME) \
		-fsanitize=fuzzer-no-link,address,undefined -c $< -o $@

$(BUILD)/fuzz/kcmdline/string.o: kernel/common/lib/string.c kernel/common/lib/klib.h
	@mkdir -p $(dir $@)
	$(FUZZ_KCMDLINE_CC) $(FUZZ_KCMDLINE_FLAGS) $(FUZZ_KCMDLINE_RENAME) \
		-fsanitize=fuzzer-no-link,address,undefined -c $< -o $@

$(FUZZ_KCMDLINE): tests/fuzz/fuzz_kcmdline.c $(FUZZ_KCMDLINE_KOBJS)
	@mkdir -p $(dir $@)
	$(FUZZ_KCMDLINE_CC) $(FUZZ_KCMDLINE_FLAGS) -D_GNU_SOURCE \
		-fsanitize=fuzzer,address,undefined -o $@ $< $(FUZZ_KCMDLINE_KOBJS)

fuzz-kcmdline-long: $(FUZZ_KCMDLINE)
	@mkdir -p $(BUILD)/fuzz/corpus-kcmdline
	$(FUZZ_KCMDLINE) -max_total_time=$(or $(FUZZ_TIME),600) -max_len=2048 \
		-print_final_stats=1 -artifact_prefix=$(BUILD)/fuzz/ \
		-dict=tests/fuzz/fuzz_kcmdline.dict $(BUILD)/fuzz/corpus-kcmdline \
		tests/fuzz/corpus-kcmdline
