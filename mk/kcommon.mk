# SPDX-License-Identifier: MIT
#
# kernel/common: the reference kernels' code written once for every
# architecture (mk/kernel.mk x86_64, mk/kernel-riscv64.mk, mk/kernel-arm64.mk
# add kernel/arch/<arch>/ to it). Included before them (mk/*.mk sorted).
#
#   KCOMMON_BASE_SRCS  always linked: command line, console, heap, PCI enumeration,
#                      hot-plug resources, resets, kernel/common/lib
#   KCOMMON_GLUE_SRCS  linked when the library archive has what they call:
#                      the glue, the host operations every architecture
#                      shares, the hot-plug port service, the drivers
#   KCOMMON_STUB_SRC   stands in for the glue otherwise
#   KCOMMON_DT_SRCS    device-tree machines: the DTB reader, the PCI host
#                      bridge node
#   KCOMMON_INC        include paths, after the architecture's folder
KCOMMON_BASE_SRCS := kernel/common/cmdline.c kernel/common/console.c \
	kernel/common/heap.c \
	kernel/common/pci.c kernel/common/pcihot.c kernel/common/pcireset.c \
	$(sort $(wildcard kernel/common/lib/*.c))
KCOMMON_GLUE_SRCS := kernel/common/pciehp.c kernel/common/host_ops.c \
	$(filter-out kernel/common/glue_stub.c,$(sort $(wildcard kernel/common/glue*.c))) \
	$(sort $(wildcard kernel/common/drivers/*.c))
KCOMMON_STUB_SRC := kernel/common/glue_stub.c
# Device-tree machines (riscv64, arm64): the bounded DTB reader.
KCOMMON_DT_SRCS := kernel/common/fdt.c kernel/common/dt/dt_pci.c
KCOMMON_INC := -Ikernel/common -Ikernel/common/dt -Ikernel/common/lib
