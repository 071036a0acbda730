/* SPDX-License-Identifier: MIT */
/*
 * umsi/pci_regs.h - PCI configuration-space registers uMSI uses, named once.
 *
 * Sources: PCI Local Bus Specification 3.0 (chapter 6: configuration
 * space; 6.7 capabilities list; 6.8 MSI and MSI-X), PCI Express Base
 * Specification 4.0 (7.5 PCI-compatible registers, 7.7 MSI/MSI-X
 * capabilities, 7.6 extended capabilities).
 */
#ifndef UMSI_PCI_REGS_H
#define UMSI_PCI_REGS_H

#ifdef UMSI_LAYER_CORE
#error "the IRQ core, allocator and back ends know no PCI: this header is the PCI layer's"
#endif

/* Type 0/1 common header (PCI 3.0, 6.1). */
#define UMSI_PCI_VENDOR_ID        0x00  /* 16 bits; 0xffff: no function */
#define UMSI_PCI_DEVICE_ID        0x02
#define UMSI_PCI_COMMAND          0x04
#define  UMSI_PCI_CMD_IO           0x0001
#define  UMSI_PCI_CMD_MEMORY       0x0002
#define  UMSI_PCI_CMD_MASTER       0x0004  /* Bus Master Enable */
#define  UMSI_PCI_CMD_INTX_DISABLE 0x0400
#define UMSI_PCI_STATUS           0x06
#define  UMSI_PCI_STATUS_INTX      0x0008  /* Interrupt Status (RO) */
#define  UMSI_PCI_STATUS_CAP_LIST  0x0010  /* Capabilities List (RO) */
#define UMSI_PCI_REVISION         0x08
#define UMSI_PCI_CLASS_PROG       0x09
#define UMSI_PCI_CLASS_DEVICE     0x0a  /* 16 bits: class << 8 | subclass */
#define UMSI_PCI_HEADER_TYPE      0x0e
#define  UMSI_PCI_HEADER_TYPE_MASK 0x7f
#define  UMSI_PCI_HEADER_MULTIFN   0x80
#define  UMSI_PCI_HEADER_NORMAL    0
#define  UMSI_PCI_HEADER_BRIDGE    1
#define  UMSI_PCI_HEADER_CARDBUS   2
#define UMSI_PCI_BAR0             0x10  /* 6 BARs type 0, 2 BARs type 1 */
#define  UMSI_PCI_BAR_IO           0x01
#define  UMSI_PCI_BAR_MEM_TYPE_MASK 0x06
#define  UMSI_PCI_BAR_MEM_TYPE_64  0x04
#define  UMSI_PCI_BAR_PREFETCH     0x08
#define  UMSI_PCI_BAR_MEM_MASK     0xfffffff0u
#define  UMSI_PCI_BAR_IO_MASK      0xfffffffcu
#define UMSI_PCI_PRIMARY_BUS      0x18  /* type 1 */
#define UMSI_PCI_SECONDARY_BUS    0x19
#define UMSI_PCI_SUBORDINATE_BUS  0x1a
#define UMSI_PCI_SUBSYS_VENDOR    0x2c
#define UMSI_PCI_SUBSYS_ID        0x2e
#define UMSI_PCI_CAP_PTR          0x34  /* type 0 and 1 */
#define UMSI_PCI_CB_CAP_PTR       0x14  /* type 2 (CardBus) */
#define UMSI_PCI_INTERRUPT_LINE   0x3c
#define UMSI_PCI_INTERRUPT_PIN    0x3d  /* 0: none, 1-4: INTA-INTD */
#define UMSI_PCI_BRIDGE_CONTROL   0x3e

#define UMSI_PCI_STD_HEADER_END   0x40  /* capabilities live at 0x40-0xff */
#define UMSI_PCI_CFG_SIZE         256
#define UMSI_PCIE_CFG_SIZE        4096
#define UMSI_PCIE_EXT_CAP_START   0x100
/* 48 capabilities of 4 bytes fit in 0x40-0xff: a longer walk loops. */
#define UMSI_PCI_CAP_MAX          48
/* 960 extended capabilities of 4 bytes fit in 0x100-0xfff. */
#define UMSI_PCIE_EXT_CAP_MAX     ((4096 - 256) / 4)

/* Capability IDs (PCI Code and ID Assignment Specification). */
#define UMSI_PCI_CAP_ID_PM        0x01
#define UMSI_PCI_CAP_ID_MSI       0x05
#define UMSI_PCI_CAP_ID_HT        0x08
#define UMSI_PCI_CAP_ID_VNDR      0x09
#define UMSI_PCI_CAP_ID_EXP       0x10  /* PCI Express */
#define UMSI_PCI_CAP_ID_MSIX      0x11
#define UMSI_PCI_CAP_ID_SSVID     0x0d

/* MSI capability (PCI 3.0, 6.8.1). */
#define UMSI_MSI_FLAGS            0x02  /* Message Control, 16 bits */
#define  UMSI_MSI_FLAGS_ENABLE     0x0001
#define  UMSI_MSI_FLAGS_QMASK      0x000e  /* Multiple Message Capable, log2 */
#define  UMSI_MSI_FLAGS_QMASK_SHIFT 1
#define  UMSI_MSI_FLAGS_QSIZE      0x0070  /* Multiple Message Enable, log2 */
#define  UMSI_MSI_FLAGS_QSIZE_SHIFT 4
#define  UMSI_MSI_FLAGS_64BIT      0x0080
#define  UMSI_MSI_FLAGS_MASKBIT    0x0100  /* per-vector masking capable */
#define UMSI_MSI_ADDR_LO          0x04
#define UMSI_MSI_ADDR_HI          0x08  /* 64-bit only */
#define UMSI_MSI_DATA_32          0x08
#define UMSI_MSI_DATA_64          0x0c
#define UMSI_MSI_MASK_32          0x0c  /* with MASKBIT */
#define UMSI_MSI_MASK_64          0x10
#define UMSI_MSI_PENDING_32       0x10
#define UMSI_MSI_PENDING_64       0x14
#define UMSI_MSI_MAX_VECTORS      32

/* MSI-X capability (PCI 3.0, 6.8.2). */
#define UMSI_MSIX_FLAGS           0x02  /* Message Control, 16 bits */
#define  UMSI_MSIX_FLAGS_QSIZE     0x07ff  /* Table Size - 1 */
#define  UMSI_MSIX_FLAGS_MASKALL   0x4000  /* Function Mask */
#define  UMSI_MSIX_FLAGS_ENABLE    0x8000
#define UMSI_MSIX_TABLE           0x04  /* BIR in 2:0, offset in 31:3 */
#define UMSI_MSIX_PBA             0x08
#define  UMSI_MSIX_BIR_MASK        0x7u
#define  UMSI_MSIX_OFFSET_MASK     0xfffffff8u
#define UMSI_MSIX_ENTRY_SIZE      16
#define  UMSI_MSIX_ENTRY_ADDR_LO   0x0
#define  UMSI_MSIX_ENTRY_ADDR_HI   0x4
#define  UMSI_MSIX_ENTRY_DATA      0x8
#define  UMSI_MSIX_ENTRY_CTRL      0xc
#define  UMSI_MSIX_CTRL_MASKBIT    0x1
#define UMSI_MSIX_MAX_VECTORS     2048

/* PCI Express capability (PCIe 4.0, 7.5.3). */
#define UMSI_PCIE_FLAGS           0x02
#define  UMSI_PCIE_FLAGS_TYPE      0x00f0
#define  UMSI_PCIE_FLAGS_TYPE_SHIFT 4
#define  UMSI_PCIE_TYPE_ENDPOINT   0x0
#define  UMSI_PCIE_TYPE_LEG_END    0x1
#define  UMSI_PCIE_TYPE_ROOT_PORT  0x4
#define  UMSI_PCIE_TYPE_UPSTREAM   0x5
#define  UMSI_PCIE_TYPE_DOWNSTREAM 0x6
#define  UMSI_PCIE_TYPE_PCI_BRIDGE 0x7
#define  UMSI_PCIE_TYPE_PCIE_BRIDGE 0x8
#define  UMSI_PCIE_TYPE_RC_END     0x9
#define UMSI_PCIE_DEVCAP          0x04
#define UMSI_PCIE_DEVCTL          0x08
#define  UMSI_PCIE_DEVCTL_BCR_FLR  0x8000  /* Initiate Function Level Reset */
#define UMSI_PCIE_DEVCAP_FLR      0x10000000u

/* Extended capability header (PCIe 4.0, 7.6.3). */
#define UMSI_PCIE_EXT_CAP_ID(h)   ((h) & 0xffff)
#define UMSI_PCIE_EXT_CAP_VER(h)  (((h) >> 16) & 0xf)
#define UMSI_PCIE_EXT_CAP_NEXT(h) (((h) >> 20) & 0xffc)

/* Single Root I/O Virtualization (PCIe 4.0, 9.3.3): extended capability. */
#define UMSI_PCI_EXT_CAP_ID_SRIOV 0x0010
#define UMSI_SRIOV_CAP            0x04  /* SR-IOV Capabilities (32) */
#define UMSI_SRIOV_CTRL           0x08  /* SR-IOV Control (16) */
#define  UMSI_SRIOV_CTRL_VFE       0x0001  /* VF Enable */
#define  UMSI_SRIOV_CTRL_VFM       0x0002  /* VF Migration Enable */
#define  UMSI_SRIOV_CTRL_INTR      0x0004  /* VF Migration Interrupt Enable */
#define  UMSI_SRIOV_CTRL_MSE       0x0008  /* VF Memory Space Enable */
#define  UMSI_SRIOV_CTRL_ARI       0x0010  /* ARI Capable Hierarchy */
#define UMSI_SRIOV_STATUS         0x0a
#define UMSI_SRIOV_INITIAL_VF     0x0c
#define UMSI_SRIOV_TOTAL_VF       0x0e
#define UMSI_SRIOV_NUM_VF         0x10
#define UMSI_SRIOV_FUNC_LINK      0x12
#define UMSI_SRIOV_VF_OFFSET      0x14  /* First VF Offset */
#define UMSI_SRIOV_VF_STRIDE      0x16
#define UMSI_SRIOV_VF_DID         0x1a  /* VF Device ID */
#define UMSI_SRIOV_SUP_PGSIZE     0x1c  /* bit n: 2^(n+12) bytes */
#define UMSI_SRIOV_SYS_PGSIZE     0x20
#define UMSI_SRIOV_BAR            0x24  /* VF BAR0-5, as BARs of a type 0 header */
#define UMSI_SRIOV_VF_MIGRATION   0x3c
#define UMSI_SRIOV_SIZE           0x40

#endif /* UMSI_PCI_REGS_H */
