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
#define ACPI_MAX_ISOS    16

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
};

extern struct acpi_info acpi;

/* Find and parse the tables; panics when there is no RSDP or MADT. */
void acpi_init(void);

#endif /* KERNEL_ACPI_H */
