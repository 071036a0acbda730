/* SPDX-License-Identifier: MIT */
/*
 * iommu.h - the Intel VT-d remapping unit as the kernel sees it: whether
 * uMSI gets it for interrupt remapping (umsi.remap=, the ACPI DMAR
 * table), and its fault recording registers, which the kernel reads.
 */
#ifndef KERNEL_IOMMU_H
#define KERNEL_IOMMU_H

#include <stdbool.h>
#include <stdint.h>

#include "acpi.h"

/*
 * After PCI enumeration: print what the DMAR table says, read
 * umsi.remap= (on, off, auto; auto is the default) and choose the units
 * uMSI's VT-d back end is to drive, if any: every DRHD of segment 0,
 * together covering every function found.
 */
void iommu_init(void);

/*
 * With umsi.remap= auto or on and no usable DMAR unit, or umsi.remap=amd-vi:
 * the IVRS table's AMD-Vi IOMMU, its base, and its IO-APIC's DeviceID
 * (ACPI_NO_DEVID when the table names none). 0: not chosen.
 */
uint64_t iommu_amdvi_base(void);
uint32_t iommu_amdvi_ioapic_devid(void);

/*
 * AMD-Vi: the IOMMUs chosen (every one of the IVRS table; 0: none), the
 * base of IOMMU @i, and the DeviceIDs it serves, as its IVHD's device
 * entries list them, as uMSI's ranges (segment << 16 | DeviceID): at most
 * @max, how many; 0 when it serves every one (a type 1 "all" entry) or
 * the table listed more than the parser kept (one IOMMU only: with
 * several, each must list its own, or AMD-Vi stays off).
 */
struct umsi_rid_range;
uint32_t iommu_amdvi_nunits(void);
uint64_t iommu_amdvi_unit_base(uint32_t i);
uint32_t iommu_amdvi_devices(uint32_t i, struct umsi_rid_range *out,
			     uint32_t max);

/*
 * AMD-Vi: DeviceID @devid's interrupt remapping table as the device table
 * entry says (IV set, IntCtl remapped): its entries and where it is.
 * Return: 0, or -1 when the entry remaps nothing.
 */
int iommu_amdvi_table(uint32_t devid, uint32_t *entries,
		      const volatile uint32_t **table);

/* "vt-d" or "amd-vi" while the chosen unit remaps, else NULL. */
const char *iommu_kind(void);

/* The first unit chosen for interrupt remapping, or NULL: remapping off
 * (the entries the kernel prints and reads back are this unit's). */
const struct acpi_drhd *iommu_remap_unit(void);

/* The VT-d units chosen (0: remapping off or AMD-Vi), unit @i of them. */
uint32_t iommu_nunits(void);
const struct acpi_drhd *iommu_unit(uint32_t i);

/*
 * Chosen unit @i's device scope as uMSI's requester ranges (struct
 * umsi_rid_range), read now, after enumeration: each endpoint, each
 * bridge with the buses from its secondary to its subordinate, each
 * IO-APIC (segment 0); at most @max of them, how many. 0 without it.
 */
struct umsi_rid_range;
uint32_t iommu_scope_ranges(uint32_t i, struct umsi_rid_range *out,
			    uint32_t max);

/* The IO-APIC's source ID from the DMAR device scope, or ACPI_NO_SID
 * (also when there are several IO-APICs). */
uint32_t iommu_ioapic_sid(void);

/*
 * The requester ID IO-APIC @id's messages carry at the chosen unit: the
 * DMAR device scope's (VT-d) or the IVRS special device entry's DeviceID
 * (AMD-Vi); ACPI_NO_SID (= ACPI_NO_DEVID) when the tables do not say.
 */
uint32_t iommu_ioapic_source(uint8_t id);

/*
 * After uMSI's set-up: print the unit's state (remapping, queued
 * invalidation, compatibility format, the table it points at), aim the
 * fault event interrupt at the boot CPU's wake vector and report the
 * faults recorded so far. Nothing without a chosen unit.
 */
void iommu_setup_done(void);

/* Is remapping on in the chosen unit (GSTS.IRES), as read now? */
bool iommu_remap_active(void);

/*
 * The vector of interrupt-remapping table entry @index, read from the
 * table the unit points at (IRTA). Returns 0, or -1 without a chosen
 * unit, with @index beyond the table or the entry not present.
 */
int iommu_irte_vector(uint32_t index, uint8_t *vector);

/*
 * Entries of the interrupt-remapping table the unit points at (IRTA), or
 * 0 without a chosen unit or a table.
 */
uint32_t iommu_irte_count(void);

/*
 * Report every fault the unit recorded (a UMSI ir_fault line each; other
 * faults as dma_fault) and clear it. Returns how many. Any context but
 * one CPU at a time (the boot CPU's set-up and work loop).
 */
uint32_t iommu_poll_faults(void);

#endif /* KERNEL_IOMMU_H */
