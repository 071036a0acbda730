# SPDX-License-Identifier: MIT
#
# The reference x86-64 kernel (kernel/) and its QEMU tests (tests/qemu/).
#
#   make kernel        build/umsi-kernel (multiboot 1, a.out kludge) and
#                      build/kernel/umsi-kernel.elf (symbols, for gdb)
#
# Kernel code generation: freestanding, no red zone, no SSE/MMX in kernel
# code, no PIC, no stack protector, small code model (the kernel runs
# identity-mapped at 1 MiB, far below 2 GiB). The library is linked as
# build/libumsi.a, unmodified; kernel/isr.S copes with its ordinary ABI.

KERNEL_CC   ?= $(CC)
KERNEL_LD   ?= ld
OBJCOPY     ?= objcopy
KERNEL_OUT  := $(BUILD)/kernel
KERNEL_BIN  := $(BUILD)/umsi-kernel
KERNEL_ELF  := $(KERNEL_OUT)/umsi-kernel.elf

# gcc has -mgeneral-regs-only for x86; clang before 16 does not.
KERNEL_NOFP := $(shell $(KERNEL_CC) -mgeneral-regs-only -x c -c /dev/null \
	-o /dev/null 2>/dev/null && echo -mgeneral-regs-only || \
	echo -mno-mmx -mno-sse -mno-sse2 -mno-3dnow -mno-avx)

# gcc may turn a copy loop into a call to memcpy, even inside memcpy.
KERNEL_NOLIBCALL := $(shell $(KERNEL_CC) -fno-tree-loop-distribute-patterns \
	-x c -c /dev/null -o /dev/null 2>/dev/null && \
	echo -fno-tree-loop-distribute-patterns)

KERNEL_CFLAGS := $(WARN) -O2 -g -ffreestanding -nostdlib -fno-builtin \
	-fno-strict-aliasing -fno-common -mno-red-zone $(KERNEL_NOFP) $(KERNEL_NOLIBCALL) \
	-mcmodel=small -fno-pic -fno-pie -fno-stack-protector \
	-fno-asynchronous-unwind-tables -fno-omit-frame-pointer \
	-Ikernel -Iinclude $(EXTRA_KERNEL_CFLAGS)
KERNEL_LDFLAGS := -m elf_x86_64 -nostdlib -static -z max-page-size=4096 \
	-z noexecstack $(shell $(KERNEL_LD) --help 2>/dev/null | \
	grep -q no-warn-rwx-segments && echo --no-warn-rwx-segments)

# libgcc supplies helpers the compiler may call (e.g. __popcountdi2).
KERNEL_LIBGCC := $(shell $(KERNEL_CC) -print-libgcc-file-name 2>/dev/null)

KERNEL_GLUE ?= kernel/glue_stub.c
KERNEL_SRCS := $(filter-out kernel/glue_stub.c kernel/host.c kernel/glue.c, \
	$(sort $(wildcard kernel/*.c kernel/lib/*.c))) $(KERNEL_GLUE)
KERNEL_ASMS := kernel/boot.S kernel/trampoline.S kernel/isr.S
KERNEL_OBJS := $(KERNEL_SRCS:%.c=$(KERNEL_OUT)/%.o) \
	$(KERNEL_ASMS:%.S=$(KERNEL_OUT)/%.o)

.PHONY: kernel
kernel: $(KERNEL_BIN)

$(KERNEL_OUT)/%.o: %.c
	@mkdir -p $(dir $@)
	$(KERNEL_CC) $(KERNEL_CFLAGS) -MMD -MP -c $< -o $@

$(KERNEL_OUT)/%.o: %.S
	@mkdir -p $(dir $@)
	$(KERNEL_CC) $(KERNEL_CFLAGS) -MMD -MP -c $< -o $@

$(KERNEL_ELF): $(KERNEL_OBJS) $(LIB) kernel/kernel.ld
	$(KERNEL_LD) $(KERNEL_LDFLAGS) -T kernel/kernel.ld -o $@ \
		$(KERNEL_OBJS) $(LIB) $(KERNEL_LIBGCC)

$(KERNEL_BIN): $(KERNEL_ELF)
	$(OBJCOPY) -O binary $< $@

ALL_TARGETS  += $(KERNEL_BIN)
TEST_SCRIPTS += $(sort $(wildcard tests/qemu/*.t))

-include $(KERNEL_OBJS:.o=.d)
