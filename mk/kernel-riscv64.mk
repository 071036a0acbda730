# SPDX-License-Identifier: MIT
#
# The riscv64 reference kernel: kernel/arch/riscv64/ (boot, device tree,
# harts, IMSIC, ECAM enumeration, host.c) plus the kernel's shared code
# (kernel/common/: glue*.c, drivers/, pci*.c, heap, command line,
# kernel/common/lib/), linking the library compiled for riscv64 with the same
# flags (build/riscv64/libumsi.a: src/*/*.c and src/arch/*/*.c). Tests:
# tests/qemu/riscv64-*.t.
#
#   make kernel-riscv64   build/riscv64/umsi-kernel (ELF linked at
#                         0x80200000: qemu-system-riscv64 -machine
#                         virt,aia=aplic-imsic -bios default -kernel ...)
#   make libumsi-riscv64  build/riscv64/libumsi.a alone
#
# Built with clang and ld.lld only (no riscv64 gcc needed): freestanding
# S-mode code, medany code model (the kernel runs at its physical address
# above 2 GiB), no linker relaxation (ld.lld before 15 cannot relax), no
# floating point (rv64imac: the trap path saves integer registers only).
# As on x86, until the archive has every function the glue calls (the
# IMSIC back end included), kernel/common/glue_stub.c stands in for the glue,
# host.c and the drivers, so the kernel still boots (umsi.msiprobe works).
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
RV64_KCFLAGS := $(RV64_CFLAGS) -Ikernel/arch/riscv64 $(KCOMMON_INC) -Iinclude

# Always linked: the architecture's files and the shared ones that do not
# call uMSI. Linked when the archive has what they call: the glue, the
# host interface, the drivers and the hot-plug port service.
RV64_ARCH_SRCS := $(filter-out kernel/arch/riscv64/host.c, \
	$(sort $(wildcard kernel/arch/riscv64/*.c)))
# The raw MSI probe without the library (umsi.msiprobe, *-boot.t): a test
# aid, kept under tests/kprobe/riscv64 and linked into every build.
RV64_ARCH_SRCS += $(sort $(wildcard tests/kprobe/riscv64/*.c))
RV64_SHARED_SRCS := $(KCOMMON_BASE_SRCS) $(KCOMMON_DT_SRCS)
RV64_GLUE_SRCS := kernel/arch/riscv64/host.c $(KCOMMON_GLUE_SRCS)
RV64_SRCS := $(RV64_ARCH_SRCS) $(RV64_SHARED_SRCS) $(RV64_GLUE_SRCS) \
	$(KCOMMON_STUB_SRC)
RV64_ASMS := $(sort $(wildcard kernel/arch/riscv64/*.S))
RV64_BASE_OBJS := $(RV64_ARCH_SRCS:%.c=$(RV64_OUT)/%.o) \
	$(RV64_SHARED_SRCS:%.c=$(RV64_OUT)/%.o) $(RV64_ASMS:%.S=$(RV64_OUT)/%.o)
RV64_GLUE_OBJS := $(RV64_GLUE_SRCS:%.c=$(RV64_OUT)/%.o)
RV64_STUB_OBJS := $(KCOMMON_STUB_SRC:%.c=$(RV64_OUT)/%.o)
RV64_OBJS := $(RV64_SRCS:%.c=$(RV64_OUT)/%.o) $(RV64_ASMS:%.S=$(RV64_OUT)/%.o)
RV64_CORE_OBJS := $(CORE_SRCS:%.c=$(RV64_OUT)/core/%.o)
RV64_LIB := $(RV64_OUT)/libumsi.a
RV64_NEEDS = $(KERNEL_NEEDS) umsi_ctl_riscv_imsic

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

$(filter %.o,$(RV64_SRCS:%.c=$(RV64_OUT)/%.o)): $(RV64_OUT)/%.o: %.c
	@mkdir -p $(dir $@)
	$(RV64_CC) $(RV64_KCFLAGS) -MMD -MP -c $< -o $@

$(RV64_ASMS:%.S=$(RV64_OUT)/%.o): $(RV64_OUT)/%.o: %.S
	@mkdir -p $(dir $@)
	$(RV64_CC) $(RV64_KCFLAGS) -MMD -MP -c $< -o $@

$(RV64_KERNEL): $(RV64_OBJS) $(RV64_LIB) kernel/arch/riscv64/kernel.ld
	@defined=$$(llvm-nm -g --defined-only $(RV64_LIB) 2>/dev/null || \
		nm -g --defined-only $(RV64_LIB) 2>/dev/null); \
	defined=$$(echo "$$defined" | awk '{print $$3}'); \
	glue="$(RV64_GLUE_OBJS)"; \
	for s in $(RV64_NEEDS); do \
		echo "$$defined" | grep -qx "$$s" || { glue="$(RV64_STUB_OBJS)"; \
		echo "kernel-riscv64: $(RV64_LIB) lacks $$s; linking the uMSI stub"; break; }; \
	done; \
	echo "$(RV64_LD) ... -o $@ ($$glue)"; \
	$(RV64_LD) -m elf64lriscv -nostdlib -static -z max-page-size=4096 \
		-T kernel/arch/riscv64/kernel.ld -o $@ $(RV64_BASE_OBJS) \
		$$glue $(RV64_LIB)

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
