# SPDX-License-Identifier: MIT
#
# The riscv64 reference kernel (kernel/arch/riscv64/) and its QEMU test
# (tests/qemu/riscv64-boot.t).
#
#   make kernel-riscv64   build/riscv64/umsi-kernel (ELF linked at
#                         0x80200000: qemu-system-riscv64 -machine
#                         virt,aia=aplic-imsic -bios default -kernel ...)
#
# Built with clang and ld.lld only (no riscv64 gcc needed): freestanding
# S-mode code, medany code model (the kernel runs at its physical address
# above 2 GiB), no linker relaxation (ld.lld before 15 cannot relax). The
# kernel shares kernel/lib/ (strings, ksnprintf) with x86-64; of the
# library it links only what it takes from src/lib/ today (umsi_vsnprintf,
# which kernel/lib/printf.c wraps, and its helpers), through an archive of
# src/lib/*.c, so work in progress elsewhere in src/ does not stop it. `make libumsi-riscv64` compiles all of src/ for riscv64
# into build/riscv64/libumsi.a, for the IMSIC back end to link later.
#
# clang before 15 does not take "zicsr" in -march (it was part of "i" in
# the ISA spec it follows); the probe below drops it there.

RV64_CC     ?= clang
RV64_LD     ?= ld.lld
RV64_OUT    := $(BUILD)/riscv64
RV64_KERNEL := $(RV64_OUT)/umsi-kernel
RV64_TARGET := --target=riscv64-unknown-elf
RV64_MARCH  := $(shell $(RV64_CC) $(RV64_TARGET) -march=rv64imac_zicsr \
	-x c -c /dev/null -o /dev/null 2>/dev/null && echo rv64imac_zicsr || \
	echo rv64imac)

RV64_CFLAGS := $(WARN) -O2 -g $(RV64_TARGET) -march=$(RV64_MARCH) -mabi=lp64 \
	-mcmodel=medany -mno-relax -ffreestanding -nostdlib -fno-builtin \
	-fno-strict-aliasing -fno-common -fno-pic -fno-pie \
	-fno-stack-protector -fno-asynchronous-unwind-tables \
	-fno-omit-frame-pointer $(EXTRA_RV64_CFLAGS)
RV64_KCFLAGS := $(RV64_CFLAGS) -Ikernel/arch/riscv64 -Ikernel/lib -Iinclude

RV64_SRCS := $(sort $(wildcard kernel/arch/riscv64/*.c)) \
	kernel/lib/string.c kernel/lib/printf.c
RV64_ASMS := $(sort $(wildcard kernel/arch/riscv64/*.S))
RV64_OBJS := $(RV64_SRCS:%.c=$(RV64_OUT)/%.o) $(RV64_ASMS:%.S=$(RV64_OUT)/%.o)
RV64_CORE_OBJS := $(CORE_SRCS:%.c=$(RV64_OUT)/core/%.o)
RV64_LIB := $(RV64_OUT)/libumsi.a
RV64_KLIB := $(RV64_OUT)/libumsi-lib.a

.PHONY: kernel-riscv64 libumsi-riscv64
kernel-riscv64: $(RV64_KERNEL)
libumsi-riscv64: $(RV64_LIB)

$(RV64_CORE_OBJS): $(RV64_OUT)/core/%.o: %.c
	@mkdir -p $(dir $@)
	$(RV64_CC) $(RV64_CFLAGS) $(CPPFLAGS_CORE) -MMD -MP -c $< -o $@

$(RV64_LIB): $(RV64_CORE_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@
	$(AR) rcs $@ $^

$(RV64_KLIB): $(filter $(RV64_OUT)/core/src/lib/%,$(RV64_CORE_OBJS))
	@mkdir -p $(dir $@)
	rm -f $@
	$(AR) rcs $@ $^

$(filter %.o,$(RV64_SRCS:%.c=$(RV64_OUT)/%.o)): $(RV64_OUT)/%.o: %.c
	@mkdir -p $(dir $@)
	$(RV64_CC) $(RV64_KCFLAGS) -MMD -MP -c $< -o $@

$(RV64_ASMS:%.S=$(RV64_OUT)/%.o): $(RV64_OUT)/%.o: %.S
	@mkdir -p $(dir $@)
	$(RV64_CC) $(RV64_KCFLAGS) -MMD -MP -c $< -o $@

$(RV64_KERNEL): $(RV64_OBJS) $(RV64_KLIB) kernel/arch/riscv64/kernel.ld
	$(RV64_LD) -m elf64lriscv -nostdlib -static -z max-page-size=4096 \
		-T kernel/arch/riscv64/kernel.ld -o $@ $(RV64_OBJS) \
		$(RV64_KLIB)

# Part of `make` only where the toolchain can build it, so a machine
# without clang's RISC-V back end or ld.lld still builds everything else
# (the test then skips).
RV64_USABLE := $(shell command -v $(RV64_LD) >/dev/null 2>&1 && \
	$(RV64_CC) $(RV64_TARGET) -march=rv64imac -x c -c /dev/null \
	-o /dev/null 2>/dev/null && echo yes)
ifeq ($(RV64_USABLE),yes)
ALL_TARGETS += $(RV64_KERNEL)
endif

-include $(RV64_OBJS:.o=.d) $(RV64_CORE_OBJS:.o=.d)
