/* SPDX-License-Identifier: MIT */
/*
 * umsi/pcicap.h - walking and decoding PCI capabilities over any view of
 * configuration space.
 *
 * Configuration space is device-controlled data: a broken or hostile
 * device can make its capability list loop, point into the header or past
 * the end. Every walk here is bounded and every offset validated. The same
 * functions serve the library (over the host's cfg_read) and `umsi
 * inspect` (over a dump or sysfs file), so both decode identically.
 */
#ifndef UMSI_PCICAP_H
#define UMSI_PCICAP_H

#ifdef UMSI_LAYER_CORE
#error "the IRQ core, allocator and back ends know no PCI: this header is the PCI layer's"
#endif

#include <umsi/types.h>

/**
 * struct umsi_cfg_view - read access to one function's configuration space
 * @read: read @width (1, 2, 4) bytes at @off into *@val; 0 or -UMSI_EIO
 * @ctx: passed to @read
 * @size: bytes that exist: 64 (a non-root sysfs read), 256 (conventional
 *        PCI) or 4096 (PCIe extended space); reads at or beyond are not made
 * @strict: true to reject a capability pointer with bits 1:0 set; false to
 *          mask them off as PCI 3.0 6.7 tells software to (and lspci does)
 */
struct umsi_cfg_view {
	int (*read)(void *ctx, uint16_t off, uint8_t width, uint32_t *val);
	void *ctx;
	uint16_t size;
	bool strict;
};

/**
 * umsi_pci_find_cap - find a standard capability
 * @v: the configuration-space view
 * @id: capability ID (UMSI_PCI_CAP_ID_*)
 * @after: 0 to search from the start, else the offset of a capability to
 *         continue after (for devices with two capabilities of one ID)
 * @off: on success, the capability's offset
 *
 * Return: 0; -UMSI_ENOENT when the list lacks @id; -UMSI_ENODEV when the
 * function reads all-ones (absent or surprise-removed); -UMSI_ELOOP when the
 * list is longer than 48 entries (it loops); -UMSI_ERANGE for a pointer into
 * the header (below 0x40) or past the end of the space, or an undefined
 * header type (3-127); -UMSI_EINVAL for a
 * misaligned pointer in strict mode; -UMSI_EIO when a read fails.
 * Context: any.
 */
int umsi_pci_find_cap(const struct umsi_cfg_view *v, uint8_t id,
		      uint16_t after, uint16_t *off);

/**
 * umsi_pci_find_ext_cap - find a PCI Express extended capability
 * @v: the configuration-space view (size 4096)
 * @id: extended capability ID
 * @after: 0, or the offset of an extended capability to continue after
 * @off: on success, the capability's offset
 *
 * Return: as umsi_pci_find_cap(); -UMSI_ENOENT also when @v has no
 * extended space (size below 4096) or the list is empty (header 0 or
 * all-ones at 0x100).
 */
int umsi_pci_find_ext_cap(const struct umsi_cfg_view *v, uint16_t id,
			  uint16_t after, uint16_t *off);

/**
 * umsi_pci_walk_caps - call @fn for each standard capability in order
 * @v: the configuration-space view
 * @fn: called with (@arg, id, offset); a non-zero return stops the walk
 *      and is returned
 * @arg: passed to @fn
 *
 * Return: 0 after a complete walk, @fn's non-zero value, or an error as for
 * umsi_pci_find_cap() (the capabilities before the fault were visited).
 */
int umsi_pci_walk_caps(const struct umsi_cfg_view *v,
		       int (*fn)(void *arg, uint8_t id, uint16_t off),
		       void *arg);

/**
 * struct umsi_msi_cap - an MSI capability as read from the device
 * @off: capability offset
 * @ctrl: Message Control register
 * @enabled: MSI Enable
 * @mmc: Multiple Message Capable as a count (1, 2, 4 .. 32)
 * @mme: Multiple Message Enable as a count (1 .. 32)
 * @addr64: 64-bit address capable
 * @maskable: per-vector masking capable
 * @address: message address (upper half read only when @addr64)
 * @data: message data (16 bits)
 * @mask: mask bits (0 when not @maskable)
 * @pending: pending bits (0 when not @maskable)
 * @mmc_reserved: Multiple Message Capable had a reserved encoding (6, 7)
 */
struct umsi_msi_cap {
	uint16_t off;
	uint16_t ctrl;
	bool enabled;
	uint8_t mmc;
	uint8_t mme;
	bool addr64;
	bool maskable;
	uint64_t address;
	uint16_t data;
	uint32_t mask;
	uint32_t pending;
	bool mmc_reserved;
};

/**
 * umsi_pci_read_msi_cap - read and decode an MSI capability
 * @v: view
 * @off: the capability's offset (from umsi_pci_find_cap)
 * @out: decoded fields
 *
 * Return: 0; -UMSI_ERANGE when the capability's registers would run past
 * the end of @v's space; -UMSI_EIO on a failed read. Context: any.
 */
int umsi_pci_read_msi_cap(const struct umsi_cfg_view *v, uint16_t off,
			  struct umsi_msi_cap *out);

/**
 * struct umsi_msix_cap - an MSI-X capability as read from the device
 * @off: capability offset
 * @ctrl: Message Control register
 * @enabled: MSI-X Enable
 * @function_mask: Function Mask
 * @table_size: number of table entries (1-2048)
 * @table_bir: BAR Indicator of the table (0-7 as read; 6 and 7 reserved)
 * @table_offset: table offset in that BAR (8-byte aligned)
 * @pba_bir: BAR Indicator of the Pending Bit Array
 * @pba_offset: PBA offset in that BAR
 */
struct umsi_msix_cap {
	uint16_t off;
	uint16_t ctrl;
	bool enabled;
	bool function_mask;
	uint16_t table_size;
	uint8_t table_bir;
	uint32_t table_offset;
	uint8_t pba_bir;
	uint32_t pba_offset;
};

/**
 * umsi_pci_read_msix_cap - read and decode an MSI-X capability
 * @v: view
 * @off: the capability's offset
 * @out: decoded fields
 *
 * Return: 0; -UMSI_ERANGE when the capability runs past the end of @v's
 * space; -UMSI_EIO on a failed read. The table location is decoded, not
 * validated against the BARs (see umsi/pci.h). Context: any.
 */
int umsi_pci_read_msix_cap(const struct umsi_cfg_view *v, uint16_t off,
			   struct umsi_msix_cap *out);

/**
 * struct umsi_sriov_cap - an SR-IOV capability as read from a physical
 * function (PCIe 4.0, 9.3.3)
 * @off: capability offset (extended space)
 * @caps: SR-IOV Capabilities register
 * @ctrl: SR-IOV Control
 * @initial_vfs: InitialVFs
 * @total_vfs: TotalVFs
 * @num_vfs: NumVFs as last written
 * @func_link: Function Dependency Link
 * @first_offset: First VF Offset (depends on NumVFs and ARI: read it after
 *                writing NumVFs)
 * @stride: VF Stride (likewise)
 * @vf_device: VF Device ID
 * @page_sizes: Supported Page Sizes (bit n: 2^(n+12) bytes)
 * @page_size: System Page Size, same encoding
 * @vf_bar: VF BAR0-5 registers as read (addresses of VF 0's BARs)
 */
struct umsi_sriov_cap {
	uint16_t off;
	uint32_t caps;
	uint16_t ctrl;
	uint16_t initial_vfs;
	uint16_t total_vfs;
	uint16_t num_vfs;
	uint8_t func_link;
	uint16_t first_offset;
	uint16_t stride;
	uint16_t vf_device;
	uint32_t page_sizes;
	uint32_t page_size;
	uint32_t vf_bar[6];
};

/**
 * umsi_pci_read_sriov_cap - read and decode an SR-IOV capability
 * @v: view (size 4096)
 * @off: the capability's offset (from umsi_pci_find_ext_cap)
 * @out: decoded fields
 *
 * Return: 0; -UMSI_ERANGE when the capability runs past the end of @v's
 * space; -UMSI_ENODEV when it reads all-ones (the function is gone);
 * -UMSI_EIO on a failed read. Nothing is validated: see
 * umsi_pci_sriov_check(). Context: any.
 */
int umsi_pci_read_sriov_cap(const struct umsi_cfg_view *v, uint16_t off,
			    struct umsi_sriov_cap *out);

/**
 * struct umsi_sriov_layout - where @nvfs VFs of a physical function would be
 * @nvfs: VFs asked for
 * @first: routing ID of VF 0 (bus << 8 | devfn, segment apart)
 * @last: routing ID of the last VF
 * @bar_addr: address of VF 0's BAR n (0: no such BAR); VF i's is
 *            @bar_addr[n] + i * @bar_size[n]
 * @bar_size: one VF's size of BAR n (0: no such BAR)
 * @bar_is64: BAR n is the lower half of a 64-bit BAR
 */
struct umsi_sriov_layout {
	uint16_t nvfs;
	uint16_t first, last;
	uint64_t bar_addr[6];
	uint64_t bar_size[6];
	bool bar_is64[6];
};

/**
 * umsi_pci_sriov_check - may @nvfs VFs be enabled as @c describes?
 * @c: the capability, read after NumVFs was set to @nvfs (First VF Offset
 *     and VF Stride may depend on it)
 * @pf_rid: the physical function's routing ID (bus << 8 | devfn)
 * @bus_lo, @bus_hi: buses the VFs may sit on (the PF's bus up to the
 *     subordinate bus of the bridge above; the PF's bus alone on a root bus)
 * @bar_size: each VF BAR's per-VF size, as sizing the VF BAR registers
 *     found (0: the register is not implemented); for a 64-bit BAR the
 *     whole size is at the lower index, the upper one is ignored
 * @nvfs: VFs wanted, 1 .. TotalVFs
 * @out: on success, where the VFs are
 * @reason: on failure, a static string naming what was wrong
 *
 * Values come from the device and are hostile: every sum is range-checked
 * before it is made. Refused: NumVFs of 0 or above TotalVFs, InitialVFs
 * above TotalVFs, a First VF Offset of 0, a VF Stride of 0 with more than
 * one VF, routing IDs past 0xffff or on buses outside [@bus_lo, @bus_hi],
 * a System Page Size that is not one supported size, an I/O VF BAR, a
 * 64-bit VF BAR in slot 5, a size that is not a power of two or smaller
 * than the System Page Size, an unassigned or misaligned VF BAR, @nvfs
 * times a size that overflows the address space, and two VF BARs whose
 * ranges (all VFs together) overlap.
 *
 * Return: 0; -UMSI_EINVAL or -UMSI_ERANGE with *@reason set. Context: any.
 */
int umsi_pci_sriov_check(const struct umsi_sriov_cap *c, uint16_t pf_rid,
			 uint8_t bus_lo, uint8_t bus_hi,
			 const uint64_t bar_size[6], uint16_t nvfs,
			 struct umsi_sriov_layout *out, const char **reason);

#endif /* UMSI_PCICAP_H */
