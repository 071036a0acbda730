# SPDX-License-Identifier: MIT
#
# The arm64 reference kernel: kernel/arch/arm64/ (boot, device tree, PSCI,
# GICv3 and LPIs, ECAM enumeration, host.c, the raw MSI probe) plus the
# kernel's shared code (kernel/common/: glue*.c, drivers/, pci*.c,
# heap, command line, kernel/common/lib/), linking the library compiled for
# aarch64 with the same flags (build/arm64/libumsi.a: src/*/*.c and
# src/arch/*/*.c). Tests: tests/qemu/arm64-*.t.
#
#   make kernel-arm64   build/arm64/umsi-kernel: a flat arm64 Image (QEMU
#                       then passes the device tree in x0), and
#                       build/arm64/umsi-kernel.elf (symbols, for gdb)
#   make libumsi-arm64  build/arm64/libumsi.a alone
#
# clang and ld.lld only: no cross gcc needed. The kernel runs with the MMU
# off, so every data access is to Device memory and must be aligned
# (-mstrict-align, the library too); no FP/SIMD registers
# (-mgeneral-regs-only: the IRQ path saves integer registers only); no
# outline atomics (there is no libgcc/compiler-rt to provide them).
# Until the archive has every function the glue calls (the ITS back end
# included), kernel/common/glue_stub.c stands in for the glue, host.c and the
# drivers, so the kernel still boots (umsi.msiprobe works).

ARM64_CC      ?= clang
ARM64_LD      ?= ld.lld
ARM64_OBJCOPY ?= llvm-objcopy
ARM64_OUT     := $(BUILD)/arm64
ARM64_BIN     := $(ARM64_OUT)/umsi-kernel
ARM64_ELF     := $(ARM64_OUT)/umsi-kernel.elf
ARM64_TARGET  := --target=aarch64-unknown-none-elf
ARM64_NO_OUTLINE := $(shell $(ARM64_CC) $(ARM64_TARGET) -mno-outline-atomics \
	-x c -c /dev/null -o /dev/null 2>/dev/null && echo -mno-outline-atomics)

ARM64_CFLAGS := $(WARN) -O2 -g $(ARM64_TARGET) \
	-ffreestanding -nostdlib -fno-builtin -fno-strict-aliasing -fno-common \
	-mgeneral-regs-only -mstrict-align $(ARM64_NO_OUTLINE) -fno-pic -fno-pie \
	-fno-stack-protector -fno-asynchronous-unwind-tables \
	-fno-omit-frame-pointer -mcmodel=small $(EXTRA_ARM64_CFLAGS)
ARM64_KCFLAGS := $(ARM64_CFLAGS) -Ikernel/arch/arm64 $(KCOMMON_INC) -Iinclude
ARM64_LDFLAGS := -nostdlib -static -z max-page-size=4096 -z noexecstack

# Always linked: the architecture's files and the shared ones that do not
# call uMSI. Linked when the archive has what they call: the glue, the
# host interface, the drivers and the hot-plug port service.
ARM64_ARCH_SRCS := $(filter-out kernel/arch/arm64/host.c, \
	$(sort $(wildcard kernel/arch/arm64/*.c)))
# The raw MSI probe without the library (umsi.msiprobe, *-boot.t): a test
# aid, kept under tests/kprobe/arm64 and linked into every build.
ARM64_ARCH_SRCS += $(sort $(wildcard tests/kprobe/arm64/*.c))
ARM64_SHARED_SRCS := $(KCOMMON_BASE_SRCS) $(KCOMMON_DT_SRCS)
ARM64_GLUE_SRCS := kernel/arch/arm64/host.c $(KCOMMON_GLUE_SRCS)
ARM64_SRCS := $(ARM64_ARCH_SRCS) $(ARM64_SHARED_SRCS) $(ARM64_GLUE_SRCS) \
	$(KCOMMON_STUB_SRC)
ARM64_ASMS := $(sort $(wildcard kernel/arch/arm64/*.S))
ARM64_BASE_OBJS := $(ARM64_ARCH_SRCS:%.c=$(ARM64_OUT)/%.o) \
	$(ARM64_SHARED_SRCS:%.c=$(ARM64_OUT)/%.o) $(ARM64_ASMS:%.S=$(ARM64_OUT)/%.o)
ARM64_GLUE_OBJS := $(ARM64_GLUE_SRCS:%.c=$(ARM64_OUT)/%.o)
ARM64_STUB_OBJS := $(KCOMMON_STUB_SRC:%.c=$(ARM64_OUT)/%.o)
ARM64_OBJS := $(ARM64_SRCS:%.c=$(ARM64_OUT)/%.o) $(ARM64_ASMS:%.S=$(ARM64_OUT)/%.o)
ARM64_CORE_OBJS := $(CORE_SRCS:%.c=$(ARM64_OUT)/core/%.o)
ARM64_LIB := $(ARM64_OUT)/libumsi.a
ARM64_NEEDS = $(KERNEL_NEEDS) umsi_ctl_arm64_its

.PHONY: kernel-arm64 libumsi-arm64
kernel-arm64: $(ARM64_BIN)
libumsi-arm64: $(ARM64_LIB)

$(ARM64_CORE_OBJS): $(ARM64_OUT)/core/%.o: %.c
	@mkdir -p $(dir $@)
	$(ARM64_CC) $(ARM64_CFLAGS) $(CPPFLAGS_CORE) -MMD -MP -c $< -o $@

$(ARM64_LIB): $(ARM64_CORE_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@
	$(AR) rcs $@ $^

$(filter %.o,$(ARM64_SRCS:%.c=$(ARM64_OUT)/%.o)): $(ARM64_OUT)/%.o: %.c
	@mkdir -p $(dir $@)
	$(ARM64_CC) $(ARM64_KCFLAGS) -MMD -MP -c $< -o $@

$(ARM64_ASMS:%.S=$(ARM64_OUT)/%.o): $(ARM64_OUT)/%.o: %.S
	@mkdir -p $(dir $@)
	$(ARM64_CC) $(ARM64_KCFLAGS) -MMD -MP -c $< -o $@

$(ARM64_ELF): $(ARM64_OBJS) $(ARM64_LIB) kernel/arch/arm64/kernel.ld
	@defined=$$(llvm-nm -g --defined-only $(ARM64_LIB) 2>/dev/null || \
		nm -g --defined-only $(ARM64_LIB) 2>/dev/null); \
	defined=$$(echo "$$defined" | awk '{print $$3}'); \
	glue="$(ARM64_GLUE_OBJS)"; \
	for s in $(ARM64_NEEDS); do \
		echo "$$defined" | grep -qx "$$s" || { glue="$(ARM64_STUB_OBJS)"; \
		echo "kernel-arm64: $(ARM64_LIB) lacks $$s; linking the uMSI stub"; break; }; \
	done; \
	echo "$(ARM64_LD) ... -o $@ ($$glue)"; \
	$(ARM64_LD) $(ARM64_LDFLAGS) -T kernel/arch/arm64/kernel.ld -o $@ \
		$(ARM64_BASE_OBJS) $$glue $(ARM64_LIB)

$(ARM64_BIN): $(ARM64_ELF)
	$(ARM64_OBJCOPY) -O binary $< $@

# Part of `make` only where clang can target aarch64 and ld.lld exists;
# the tests skip when the kernel is not built.
ifneq ($(shell $(ARM64_CC) $(ARM64_TARGET) -x c -c /dev/null \
	-o /dev/null 2>/dev/null && command -v $(ARM64_LD) $(ARM64_OBJCOPY) \
	>/dev/null 2>&1 && echo yes),)
ALL_TARGETS += $(ARM64_BIN)
endif

-include $(ARM64_OBJS:.o=.d) $(ARM64_CORE_OBJS:.o=.d)
