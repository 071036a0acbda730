/* SPDX-License-Identifier: MIT */
/*
 * acpi.h - what the kernel takes from the static ACPI tables (no AML).
 */
#ifndef KERNEL_ACPI_H
#define KERNEL_ACPI_H

#include <stdbool.h>
#include <stdint.h>

#include "kernel.h"

#define ACPI_MAX_IOAPICS 8
#define ACPI_ERROR_LEN   96	/* a table's parse error, NUL included */
#define ACPI_MAX_ALIASES 32	/* IVRS alias entries kept */
#define ACPI_MAX_DEVRANGES 64	/* IVRS DeviceID ranges kept an IOMMU */
#define ACPI_MAX_IOMMUS  8	/* IVRS IOMMUs kept */
#define ACPI_MAX_ISOS    16
#define ACPI_MAX_DRHDS   8
#define ACPI_MAX_SCOPES  32	/* device scope entries kept per DRHD */
#define ACPI_MAX_PATH    4	/* (device, function) steps kept per entry */

/* The source ID of an IO-APIC whose device-scope path was not resolved. */
#define ACPI_NO_SID      0xffffffffu

/* DMAR device scope types (VT-d 8.3.1). */
#define DMAR_SCOPE_ENDPOINT     1
#define DMAR_SCOPE_SUBHIERARCHY 2
#define DMAR_SCOPE_IOAPIC       3

/*
 * A device scope entry: a PCI endpoint, a bridge and everything below
 * it, or an IO-APIC (@id its MADT ID), named by a start bus and a path
 * of (device, function) steps through bridges.
 */
struct acpi_dmar_scope {
	uint8_t type;
	uint8_t id;			/* enumeration ID */
	uint8_t bus;			/* start bus */
	uint8_t npath;
	uint8_t path[ACPI_MAX_PATH][2];	/* device, function */
};

/*
 * A DMA remapping hardware unit (DMAR DRHD, VT-d 8.3): its registers,
 * whether it covers every PCI function of its segment not claimed by
 * another unit, and its device scope.
 */
struct acpi_drhd {
	uint64_t base;			/* Register Base Address */
	uint16_t segment;
	uint8_t flags;
	bool include_pci_all;		/* flags bit 0 */
	uint32_t nscopes;		/* entries in the table */
	struct acpi_dmar_scope scope[ACPI_MAX_SCOPES];	/* the first ones */
};

struct acpi_ioapic {
	uint8_t id;
	uint64_t addr;
	uint32_t gsi_base;
};

struct acpi_iso {
	uint8_t bus, source;
	uint32_t gsi;
	uint16_t flags;		/* MPS INTI flags: polarity 1:0, trigger 3:2 */
};

/* The DMAR table (VT-d 8.1), as far as it was found sound. */
struct acpi_dmar {
	bool present;			/* a DMAR table was listed */
	bool valid;			/* and it parsed; else @error says why */
	char error[ACPI_ERROR_LEN];
	uint8_t haw;			/* host address width, bits */
	bool intr_remap;		/* flags bit 0 INTR_REMAP */
	bool x2apic_opt_out;		/* flags bit 1 X2APIC_OPT_OUT */
	uint32_t ndrhds;
	struct acpi_drhd drhd[ACPI_MAX_DRHDS];
	uint32_t nother;		/* RMRR, ATSR, ... (not used) */
};

/*
 * The IVRS table (AMD I/O Virtualization Technology 5.2), as far as it was
 * found sound: its first IOMMU (IVHD of type 0x10, 0x11 or 0x40), every
 * IOMMU's DeviceIDs, and the IO-APIC special device entry of the IO-APIC
 * the MADT lists first.
 */
#define ACPI_NO_DEVID    0xffffffffu
struct acpi_ivrs {
	bool present;			/* an IVRS table was listed */
	bool valid;			/* and it parsed; else @error says why */
	char error[ACPI_ERROR_LEN];
	uint32_t nivhds;
	uint8_t ivhd_type;
	uint16_t iommu_devid;		/* the IOMMU's own DeviceID */
	uint16_t segment;
	uint64_t base;			/* IOMMU Base Address */
	uint32_t ioapic_devid;		/* of the first MADT IO-APIC, or NO */
	/* Every IO-APIC special device entry (variety 1): the DeviceID of
	 * IO-APIC ID n (its handle) at [n], from its first entry; NO when
	 * the table has none. */
	uint32_t ioapic_devid_of[256];
	uint32_t ndev_entries;		/* device entries read */
	/*
	 * Alias entries (0x42 alias select, 0x43 alias start of range up to
	 * the next end of range, 0x04): requests of DeviceIDs @first..@last
	 * reach the IOMMU as @alias. The first ACPI_MAX_ALIASES are kept;
	 * @naliases counts them all.
	 */
	struct acpi_ivrs_alias {
		uint16_t first, last, alias;
	} alias[ACPI_MAX_ALIASES];
	uint32_t naliases;
	/*
	 * Every IOMMU (an IVHD of a base not seen before; later IVHDs of
	 * the same base repeat it), the first ACPI_MAX_IOMMUS of them,
	 * @niommus counting all: iommu[0] is the one above. Each with the
	 * DeviceIDs it serves, as its device entries say: @all (a type 1
	 * entry: every one), else the ranges @devs[0..ndevs): select entries
	 * (2, 0x42, 0x46) one ID, start..end of range (3, 0x43, 0x47 up to
	 * 4) a run, an alias entry's alias ID too, special entries (0x48)
	 * their DeviceID. The first ACPI_MAX_DEVRANGES are kept; @ndevs
	 * counts them all.
	 */
	struct acpi_ivrs_iommu {
		uint64_t base;
		uint16_t devid, segment;
		bool all;
		struct acpi_ivrs_devs {
			uint16_t first, last;
		} devs[ACPI_MAX_DEVRANGES];
		uint32_t ndevs;
	} iommu[ACPI_MAX_IOMMUS];
	uint32_t niommus;
};

struct acpi_info {
	uint8_t revision;		/* of the RSDP */
	uint64_t lapic_addr;
	bool pcat_compat;		/* MADT flag: 8259s present */
	uint32_t ncpus;			/* enabled CPUs, in MADT order */
	uint32_t cpu_apic_id[KERNEL_MAX_CPUS];
	uint32_t ncpus_disabled;	/* listed but not enabled */
	uint32_t nioapics;
	struct acpi_ioapic ioapic[ACPI_MAX_IOAPICS];
	uint32_t nisos;
	struct acpi_iso iso[ACPI_MAX_ISOS];
	bool have_mcfg;
	uint64_t ecam_base;
	uint16_t ecam_segment;
	uint8_t ecam_bus_start, ecam_bus_end;
	uint16_t pm_timer_port;
	bool pm_timer_32bit;
	uint16_t iapc_boot_arch;
	bool msi_not_supported;		/* IAPC_BOOT_ARCH bit 3 */
	struct acpi_dmar dmar;
	struct acpi_ivrs ivrs;
};

extern struct acpi_info acpi;

/* Find and parse the tables; panics when there is no RSDP or MADT. */
void acpi_init(void);

/*
 * Parse a DMAR table of @len bytes at @t (header included) into @out.
 * The table is firmware data: every length is checked against @len and
 * the structure it sits in; a table that does not add up leaves
 * @out->valid false with @out->error saying where. Never reads outside
 * [@t, @t + @len).
 */
void acpi_parse_dmar(const uint8_t *t, uint32_t len, struct acpi_dmar *out);

/*
 * Parse an IVRS table of @len bytes at @t (header included) into @out,
 * the IO-APIC special entry looked for with MADT ID @ioapic_id. Firmware
 * data: every length is checked against @len and the block it sits in; a
 * table that does not add up leaves @out->valid false with @out->error
 * saying where. Never reads outside [@t, @t + @len).
 */
void acpi_parse_ivrs(const uint8_t *t, uint32_t len, uint8_t ioapic_id,
		     struct acpi_ivrs *out);

#endif /* KERNEL_ACPI_H */
