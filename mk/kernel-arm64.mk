# SPDX-License-Identifier: MIT
#
# The arm64 reference kernel (kernel/arch/arm64/), groundwork for uMSI's
# GICv3 ITS back end, and its QEMU test (tests/qemu/arm64-boot.t).
#
#   make kernel-arm64   build/arm64/umsi-kernel: a flat arm64 Image (QEMU
#                       then passes the device tree in x0), and
#                       build/arm64/umsi-kernel.elf (symbols, for gdb)
#
# clang and ld.lld only: no cross gcc needed. The kernel runs with the MMU
# off, so every data access is to Device memory and must be aligned
# (-mstrict-align); no FP/SIMD registers (-mgeneral-regs-only).

ARM64_CC      ?= clang
ARM64_LD      ?= ld.lld
ARM64_OBJCOPY ?= llvm-objcopy
ARM64_OUT     := $(BUILD)/arm64
ARM64_BIN     := $(ARM64_OUT)/umsi-kernel
ARM64_ELF     := $(ARM64_OUT)/umsi-kernel.elf

ARM64_CFLAGS := --target=aarch64-unknown-none-elf $(WARN) -O2 -g \
	-ffreestanding -nostdlib -fno-builtin -fno-strict-aliasing -fno-common \
	-mgeneral-regs-only -mstrict-align -fno-pic -fno-pie \
	-fno-stack-protector -fno-asynchronous-unwind-tables \
	-fno-omit-frame-pointer -mcmodel=small -Ikernel/arch/arm64
ARM64_LDFLAGS := -nostdlib -static -z max-page-size=4096 -z noexecstack

ARM64_SRCS := $(sort $(wildcard kernel/arch/arm64/*.c))
ARM64_ASMS := $(sort $(wildcard kernel/arch/arm64/*.S))
ARM64_OBJS := $(ARM64_SRCS:%.c=$(ARM64_OUT)/%.o) $(ARM64_ASMS:%.S=$(ARM64_OUT)/%.o)

.PHONY: kernel-arm64
kernel-arm64: $(ARM64_BIN)

$(ARM64_OUT)/%.o: %.c
	@mkdir -p $(dir $@)
	$(ARM64_CC) $(ARM64_CFLAGS) -MMD -MP -c $< -o $@

$(ARM64_OUT)/%.o: %.S
	@mkdir -p $(dir $@)
	$(ARM64_CC) $(ARM64_CFLAGS) -MMD -MP -c $< -o $@

$(ARM64_ELF): $(ARM64_OBJS) kernel/arch/arm64/kernel.ld
	$(ARM64_LD) $(ARM64_LDFLAGS) -T kernel/arch/arm64/kernel.ld -o $@ $(ARM64_OBJS)

$(ARM64_BIN): $(ARM64_ELF)
	$(ARM64_OBJCOPY) -O binary $< $@

# Part of `make` only where clang can target aarch64 and ld.lld exists;
# the test skips when the kernel is not built.
ifneq ($(shell $(ARM64_CC) --target=aarch64-unknown-none-elf -x c -c /dev/null \
	-o /dev/null 2>/dev/null && command -v $(ARM64_LD) $(ARM64_OBJCOPY) \
	>/dev/null 2>&1 && echo yes),)
ALL_TARGETS += $(ARM64_BIN)
endif

-include $(ARM64_OBJS:.o=.d)
