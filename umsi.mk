# SPDX-License-Identifier: MIT
#
# umsi.mk - uMSI for a kernel's own make build.
#
# The source list, the include directory and the flags the core needs, as
# variables prefixed UMSI_. No rules, no targets, no compiler, nothing about
# how the including build is laid out: compile $(UMSI_SRCS) however your
# kernel compiles its own C files, and add the two flag variables.
#
#   include third_party/umsi/umsi.mk
#   KERNEL_SRCS += $(UMSI_SRCS)
#   CFLAGS      += $(UMSI_CPPFLAGS) $(UMSI_CFLAGS)
#
# UMSI_DIR       where this file lives; found from MAKEFILE_LIST when it is
#                included, or set it before the include
# UMSI_SRCS      the core's C files, $(UMSI_DIR)/src/...
# UMSI_INCDIR    the public headers: #include <umsi/umsi.h>
# UMSI_CPPFLAGS  -I$(UMSI_INCDIR)
# UMSI_CFLAGS    what the core needs of the compiler: C11, freestanding
#
# Code generation (optimisation, code model, red zone, SSE, stack
# protector, PIC) and warnings are the kernel's choice: docs/PORTING.md
# gives the flags the reference kernel uses. The core calls nothing outside
# itself but memcpy, memset, memmove and memcmp, which a compiler may emit.
# The list must name every file of src/*/*.c: tests/packaging/fragments.t
# fails when it does not.

ifeq ($(origin UMSI_DIR),undefined)
UMSI_DIR := $(patsubst %/,%,$(dir $(lastword $(MAKEFILE_LIST))))
endif

UMSI_SRCS := $(addprefix $(UMSI_DIR)/src/, \
	arch/arm64/its.c \
	arch/arm64/its_cmd.c \
	arch/arm64/its_tables.c \
	arch/common/domain.c \
	arch/riscv/imsic.c \
	arch/x86/lapic.c \
	arch/x86/msg.c \
	arch/x86/vtd.c \
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
	pci/state.c \
	vector/matrix.c \
	vector/matrix_check.c)

UMSI_INCDIR   := $(UMSI_DIR)/include
UMSI_CPPFLAGS := -I$(UMSI_INCDIR)
UMSI_CFLAGS   := -std=c11 -ffreestanding -fno-builtin -fno-strict-aliasing \
		 -fno-common
UMSI_VERSION  := 0.1.0
