# SPDX-License-Identifier: MIT
#
# The reference x86-64 kernel (kernel/arch/x86_64/ with the shared
# kernel/common/) and its QEMU tests (tests/qemu/).
#
#   make kernel        build/umsi-kernel (multiboot 1, a.out kludge) and
#                      build/kernel/umsi-kernel.elf (symbols, for gdb)
#
# Kernel code generation: freestanding, no red zone, no SSE/MMX in kernel
# code, no PIC, no stack protector, small code model (the kernel runs
# identity-mapped at 1 MiB, far below 2 GiB).
#
# The library's sources (src/*/*.c, unmodified) are compiled a second time
# with these kernel flags into build/kernel/libumsi.a, as docs/PORTING.md
# asks of every kernel: the generic build/libumsi.a may use SSE, and under
# the nested KVM of our CI machine any SSE instruction in the guest ends in
# "KVM internal error. Suberror: 1" (TCG runs it fine). To link the
# generic archive instead: make kernel KERNEL_LIB=build/libumsi.a (the IDT
# stubs switch stacks and save SSE state, so it works where SSE does).

# Include paths: the architecture's folder first (its karch.h), then the
# shared kernel/common.
KERNEL_INC_X86 := -Ikernel/arch/x86_64 $(KCOMMON_INC)

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
	$(KERNEL_INC_X86) -Iinclude $(EXTRA_KERNEL_CFLAGS)
KERNEL_LDFLAGS := -m elf_x86_64 -nostdlib -static -z max-page-size=4096 \
	-z noexecstack $(shell $(KERNEL_LD) --help 2>/dev/null | \
	grep -q no-warn-rwx-segments && echo --no-warn-rwx-segments)

KERNEL_CORE_CFLAGS := $(filter-out $(KERNEL_INC_X86) -Iinclude,$(KERNEL_CFLAGS)) \
	$(CPPFLAGS_CORE)
KERNEL_CORE_OBJS := $(CORE_SRCS:%.c=$(KERNEL_OUT)/core/%.o)
KERNEL_LIB ?= $(KERNEL_OUT)/libumsi.a

$(KERNEL_OUT)/core/%.o: %.c
	@mkdir -p $(dir $@)
	$(KERNEL_CC) $(KERNEL_CORE_CFLAGS) -MMD -MP -c $< -o $@

$(KERNEL_OUT)/libumsi.a: $(KERNEL_CORE_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@
	$(AR) rcs $@ $^

# libgcc supplies helpers the compiler may call (e.g. __popcountdi2).
KERNEL_LIBGCC := $(shell $(KERNEL_CC) -print-libgcc-file-name 2>/dev/null)

# The hand-over to uMSI (host.c, glue.c) is linked when the library archive
# provides the API it calls; until the library has it, glue_stub.c stands
# in, so the kernel boots while the library is being written.
KERNEL_GLUE_SRCS := kernel/arch/x86_64/host.c $(KCOMMON_GLUE_SRCS)
KERNEL_GLUE_OBJS := $(KERNEL_GLUE_SRCS:%.c=$(KERNEL_OUT)/%.o)
KERNEL_STUB_OBJS := $(KCOMMON_STUB_SRC:%.c=$(KERNEL_OUT)/%.o)
KERNEL_NEEDS := umsi_system_create umsi_dispatch umsi_pci_add \
	umsi_pci_alloc_irq_vectors umsi_pci_irq_vector umsi_pci_get_info \
	umsi_request_irq umsi_irq_get_info umsi_strerror \
	umsi_pci_free_irq_vectors umsi_msi_get_pci_irq_vector \
	umsi_msix_alloc_vectors umsi_msix_free_vectors umsi_pci_remove \
	umsi_pci_request_irq umsi_cpu_offline umsi_cpu_online \
	umsi_matrix_stats umsi_system_matrix umsi_pci_irq_pending
KERNEL_SRCS := $(filter-out $(KERNEL_GLUE_SRCS), \
	$(sort $(wildcard kernel/arch/x86_64/*.c))) $(KCOMMON_BASE_SRCS)
KERNEL_ASMS := kernel/arch/x86_64/boot.S kernel/arch/x86_64/trampoline.S \
	kernel/arch/x86_64/isr.S
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

$(KERNEL_ELF): $(KERNEL_OBJS) $(KERNEL_GLUE_OBJS) $(KERNEL_STUB_OBJS) \
		$(KERNEL_LIB) kernel/arch/x86_64/kernel.ld
	@defined=$$(nm -g --defined-only $(KERNEL_LIB) 2>/dev/null | awk '{print $$3}'); \
	glue="$(KERNEL_GLUE_OBJS)"; \
	for s in $(KERNEL_NEEDS); do \
		echo "$$defined" | grep -qx "$$s" || { glue="$(KERNEL_STUB_OBJS)"; \
		echo "kernel: $(KERNEL_LIB) lacks $$s; linking the uMSI stub"; break; }; \
	done; \
	echo "$(KERNEL_LD) ... -o $@ ($$glue)"; \
	$(KERNEL_LD) $(KERNEL_LDFLAGS) -T kernel/arch/x86_64/kernel.ld -o $@ \
		$(KERNEL_OBJS) $$glue $(KERNEL_LIB) $(KERNEL_LIBGCC)

$(KERNEL_BIN): $(KERNEL_ELF)
	$(OBJCOPY) -O binary $< $@

ALL_TARGETS  += $(KERNEL_BIN)
TEST_SCRIPTS += $(sort $(wildcard tests/qemu/*.t))

-include $(KERNEL_CORE_OBJS:.o=.d) $(KERNEL_OBJS:.o=.d) $(KERNEL_GLUE_OBJS:.o=.d) $(KERNEL_STUB_OBJS:.o=.d)
