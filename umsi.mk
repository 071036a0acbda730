# SPDX-License-Identifier: MIT
#
# umsi.mk - uMSI for a kernel's own make build (GNU make).
#
# The source list, the include directory and the flags the core needs, as
# variables prefixed UMSI_. No rules, no targets, no compiler: compile
# $(UMSI_SRCS) with a rule of your kernel's, and give uMSI's
# objects, and only them, $(UMSI_CFLAGS):
#
#   UMSI_BACKENDS := x86 vtd              # optional; default: all four
#   UMSI_OBJDIR   := obj/umsi             # optional, see UMSI_OBJS
#   include third_party/umsi/umsi.mk
#   CPPFLAGS    += $(UMSI_CPPFLAGS)       # -I only: fine kernel-wide
#   KERNEL_OBJS += $(UMSI_OBJS)
#   $(UMSI_OBJDIR)/%.o: $(UMSI_DIR)/%.c   # your rule, your flags
#           $(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@
#
# With UMSI_OBJDIR set, this file adds $(UMSI_CFLAGS) to CFLAGS for the
# objects $(UMSI_OBJS) only (a target-specific variable), so your own
# files keep your -std, builtins and the rest. If your objects are named
# otherwise, or your rule does not use CFLAGS, leave UMSI_OBJDIR unset and
# write the one line yourself:
#
#   $(MY_UMSI_OBJS): override KCFLAGS += $(UMSI_CFLAGS)
#
# Do not add $(UMSI_CFLAGS) to the kernel's global CFLAGS: it puts
# -std=c11 -ffreestanding -fno-builtin ... on every file.
#
# Set before the include (or on make's command line):
# UMSI_DIR       where this file lives; found from MAKEFILE_LIST when it is
#                included
# UMSI_BACKENDS  the interrupt-controller back ends to compile, any of
#                  x86    the local APIC (src/arch/x86/lapic.c, msg.c;
#                         ioapics.c, the remapping back ends' IO-APICs)
#                  vtd    Intel VT-d interrupt remapping (src/arch/x86/
#                         vtd.c); it builds on x86, which it adds
#                  imsic  the RISC-V AIA IMSIC (src/arch/riscv/)
#                  its    the Arm GICv3 ITS (src/arch/arm64/)
#                default all four. An unknown name stops make with an
#                error naming it. Without x86, umsi_config.ctl must name
#                a back end: NULL makes umsi_system_create() fail.
# UMSI_OBJDIR    optional: where your rule puts uMSI's objects, one for
#                each source, $(UMSI_DIR)/src/a/b.c -> $(UMSI_OBJDIR)/src/a/b.o
#
# Set by this file:
# UMSI_BACKENDS  the back ends compiled (vtd brings in x86)
# UMSI_SRCS      the C files to compile: the core and the chosen back ends,
#                $(UMSI_DIR)/src/...
# UMSI_OBJS      with UMSI_OBJDIR: their objects, given $(UMSI_CFLAGS)
# UMSI_INCDIR    the public headers: #include <umsi/umsi.h>
# UMSI_CPPFLAGS  -I$(UMSI_INCDIR): for every file that includes <umsi/...>
# UMSI_CFLAGS    for uMSI's objects only: C11, freestanding, no builtins,
#                and -DUMSI_NO_DEFAULT_CTL when x86 is not compiled
#
# Code generation (optimisation, code model, red zone, SSE, stack
# protector, PIC) and warnings are the kernel's choice: docs/PORTING.md
# gives the flags the reference kernel uses. The core calls nothing outside
# itself but memcpy, memset, memmove and memcmp, which a compiler may emit.
# The lists must name every file of src/*/*.c: tests/packaging/fragments.t
# fails when they do not, and builds the subsets.

ifeq ($(origin UMSI_DIR),undefined)
UMSI_DIR := $(patsubst %/,%,$(dir $(lastword $(MAKEFILE_LIST))))
endif

UMSI_ALL_BACKENDS := x86 vtd amdvi imsic its gicv2m
ifeq ($(origin UMSI_BACKENDS),undefined)
UMSI_BACKENDS := $(UMSI_ALL_BACKENDS)
endif
ifneq ($(filter-out $(UMSI_ALL_BACKENDS),$(UMSI_BACKENDS)),)
$(error uMSI: unknown back end in UMSI_BACKENDS: $(filter-out \
	$(UMSI_ALL_BACKENDS),$(UMSI_BACKENDS)) (the back ends are \
	$(UMSI_ALL_BACKENDS)))
endif
ifeq ($(strip $(UMSI_BACKENDS)),)
$(error uMSI: UMSI_BACKENDS is empty: name at least one of $(UMSI_ALL_BACKENDS))
endif
# VT-d and AMD-Vi remap onto the local APIC: vtd.c and amdvi.c call
# lapic.c. override: also when UMSI_BACKENDS is given on make's command line.
override UMSI_BACKENDS := $(filter $(sort $(UMSI_BACKENDS) \
		   $(if $(filter vtd amdvi,$(UMSI_BACKENDS)),x86)),$(UMSI_ALL_BACKENDS))

# Always compiled.
UMSI_SRCS_core := \
	arch/common/domain.c \
	irq/affinity.c \
	irq/cpuhp.c \
	irq/desc.c \
	irq/dispatch.c \
	irq/handlers.c \
	irq/quarantine.c \
	irq/source.c \
	irq/stats.c \
	irq/system.c \
	lib/format.c \
	lib/idmap.c \
	lib/mem.c \
	lib/strerror.c \
	pci/api.c \
	pci/cap.c \
	pci/compat.c \
	pci/dev.c \
	pci/intx.c \
	pci/msi.c \
	pci/msix.c \
	pci/policy.c \
	pci/quirks.c \
	pci/sriov.c \
	pci/state.c \
	vector/matrix.c \
	vector/matrix_check.c
# One list a back end.
UMSI_SRCS_x86 := \
	arch/x86/lapic.c \
	arch/x86/msg.c \
	arch/x86/ioapics.c
UMSI_SRCS_vtd := \
	arch/x86/vtd.c
UMSI_SRCS_amdvi := \
	arch/x86/amdvi.c
UMSI_SRCS_imsic := \
	arch/riscv/imsic.c
UMSI_SRCS_its := \
	arch/arm64/its.c \
	arch/arm64/its_cmd.c \
	arch/arm64/its_tables.c
UMSI_SRCS_gicv2m := \
	arch/arm64/gicv2m.c

UMSI_SRCS := $(addprefix $(UMSI_DIR)/src/,$(UMSI_SRCS_core) \
	     $(foreach b,$(UMSI_BACKENDS),$(UMSI_SRCS_$(b))))

UMSI_INCDIR   := $(UMSI_DIR)/include
UMSI_CPPFLAGS := -I$(UMSI_INCDIR)
UMSI_CFLAGS   := -std=c11 -ffreestanding -fno-builtin -fno-strict-aliasing \
		 -fno-common $(if $(filter x86,$(UMSI_BACKENDS)),, \
		 -DUMSI_NO_DEFAULT_CTL)
UMSI_VERSION  := 0.1.0

ifneq ($(strip $(UMSI_OBJDIR)),)
UMSI_OBJS := $(patsubst $(UMSI_DIR)/%.c,$(UMSI_OBJDIR)/%.o,$(UMSI_SRCS))
# override: also when CFLAGS is given on make's command line.
$(UMSI_OBJS): override CFLAGS += $(UMSI_CFLAGS)
endif
