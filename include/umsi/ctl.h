/* SPDX-License-Identifier: MIT */
/*
 * umsi/ctl.h - interrupt-controller back ends an embedder can choose.
 *
 * A system is created with one back end (umsi_config.ctl); it decides the
 * identity space (x86: 256 vectors a CPU), the message format, which CPUs
 * a message can reach, how an interrupt moves between CPUs and how it is
 * ended. One process may hold systems of different back ends.
 *
 * Back ends and what each needs from the host (docs/PORTING.md):
 *  - umsi_ctl_x86_lapic: x86 local APIC, xAPIC or x2APIC. Host ops
 *    cpu_hwid (APIC ID), eoi, irq_pending (IRR), send_ipi (a fixed IPI),
 *    run_on_cpu; optional remap_compose/remap_free with
 *    UMSI_PLAT_IRQ_REMAP. The default when umsi_config.ctl is NULL.
 *  - umsi_ctl_riscv_imsic: RISC-V AIA IMSIC, S-level interrupt files.
 *    Configuration struct umsi_imsic_config (umsi_config.ctl_config).
 *    Host ops cpu_hwid (hart ID), irq_pending (the eip bit of the
 *    current hart's S-level file), mmio_map/mmio_write32 of every file at
 *    creation (resending a pending interrupt to another hart). The kernel
 *    claims through stopei and enables its harts' files itself.
 *  - umsi_ctl_arm64_its: Arm GICv3 ITS (LPIs). Configuration struct
 *    umsi_its_config. Host ops phys_alloc/phys_free (the ITS's tables
 *    and command queue), mmio_map of the ITS, lock_create; the LPI
 *    property and pending tables are the back end's when the kernel names
 *    the redistributors (umsi_its_config.rd_frame), else the kernel's,
 *    with irq_pending (the LPI's bit in the current CPU's pending table)
 *    telling what is pending. The kernel takes interrupts through ICC_IAR1_EL1 /
 *    ICC_EOIR1_EL1 itself.
 *  - umsi_ctl_arm64_gicv2m: Arm GICv2 with a v2m MSI frame (SPIs).
 *    Configuration struct umsi_gicv2m_config. Host ops mmio_map of the
 *    frame and the distributor, lock_create. The kernel takes interrupts
 *    through GICC_IAR / GICC_EOIR itself.
 */
#ifndef UMSI_CTL_H
#define UMSI_CTL_H

#ifdef UMSI_LAYER_PCI
#error "src/pci knows no interrupt controller: umsi/ctl.h names the back ends"
#endif

#include <umsi/types.h>

struct umsi_ctl;
struct umsi_system;

/* The x86 local APIC back end (src/arch/x86). */
extern const struct umsi_ctl umsi_ctl_x86_lapic;

/**
 * struct umsi_imsic_config - the RISC-V IMSIC back end's configuration
 * @num_ids: identities of an S-level interrupt file (the device tree's
 *           riscv,num-ids): one less than a multiple of 64, 63 to 2047
 *           (AIA 1.0, 3.1); QEMU virt has 255
 * @first_id: the lowest identity uMSI hands out; the kernel keeps
 *            1..@first_id - 1 for itself (Linux takes 1 for IPIs).
 *            0 means 1: uMSI may use every identity
 * @nr_files: entries of @file_addr; at least the host's cpu_count()
 * @file_addr: for each host CPU number, the physical address of its
 *             hart's S-level interrupt file (4 KiB aligned; QEMU virt:
 *             0x28000000 + 0x1000 * k for the k-th hart of the IMSIC
 *             node), or 0 for a hart without one (no interrupt will
 *             target it). No two CPUs may share a file.
 *
 * Read during umsi_system_create() only. Contradictions (num_ids not of
 * the form 64k - 1, first_id above num_ids, too few entries, a misaligned
 * or shared file) make it fail with -UMSI_EINVAL and a log line naming
 * the problem.
 */
struct umsi_imsic_config {
	uint32_t num_ids;
	uint32_t first_id;
	uint32_t nr_files;
	const uint64_t *file_addr;
};

/* The RISC-V AIA IMSIC back end (src/arch/riscv). */
extern const struct umsi_ctl umsi_ctl_riscv_imsic;

/*
 * GICv3 ITS: a CPU without a redistributor the ITS can target
 * (umsi_its_config.rd_target); no interrupt will go there.
 */
#define UMSI_ITS_NO_RD           0xffffffffffffffffull
/* The first LPI INTID (GICv3, 1.2.1: LPIs are 8192 and up). */
#define UMSI_ITS_LPI_BASE        8192u
/*
 * Without umsi_its_config.rd_frame the ITS back end asks the host's
 * irq_pending(INTID) whether LPI INTID is pending in the current CPU's
 * redistributor: its bit in that redistributor's LPI pending table
 * (GICR_PENDBASER + INTID / 8, bit INTID % 8, IHI 0069 5.1.2). Asked on
 * the CPU an IRQ has just left (MOVI moves a pending LPI along, so it
 * should be false); while it says true uMSI waits for that CPU to take
 * the copy itself. A host that cannot tell returns false.
 */

/**
 * struct umsi_its_config - the GICv3 ITS back end's configuration
 * @its_base: physical address of the ITS (ITS_base: GITS_CTLR; 64 KiB
 *            aligned; QEMU virt: 0x08080000). Messages go to its
 *            GITS_TRANSLATER, @its_base + 0x10040
 * @first_lpi: the INTID of uMSI's first LPI, at least 8192 (0 means 8192);
 *            the kernel keeps the LPIs below it for itself
 * @nvec: IRQs a CPU may hold at most, a multiple of 64 up to 4096 (0
 *            means 256). uMSI uses the LPIs @first_lpi .. @first_lpi +
 *            cpu_count() * @nvec - 1, the lowest free first, whatever the
 *            CPU: LPI = @first_lpi + the IRQ's identity, kept for its life
 * @lpi_id_bits: INTID bits the redistributors' LPI property and pending
 *            tables cover (GICR_PROPBASER.IDbits + 1), 14..32 (0 means
 *            16); the LPIs above must fit
 * @itt_events: the most events a device's Interrupt Translation Table
 *            may have, a power of two, 2..2^GITS_TYPER.ID_bits (0 means
 *            2048, every MSI-X entry, capped at what the ITS supports);
 *            each device's ITT is sized to the messages it can send (its
 *            MSI-X table size or MSI multiple message count, rounded up
 *            to a power of two, at least 2) up to this; a message index
 *            beyond is refused
 * @nr_cpus: entries of @rd_target; at least the host's cpu_count()
 * @rd_target: for each host CPU number, the RDbase that MAPC and SYNC
 *            take for its redistributor: its processor number
 *            (GICR_TYPER.Processor_Number) when GITS_TYPER.PTA is 0 (QEMU),
 *            its physical address (64 KiB aligned) when PTA is 1; or
 *            UMSI_ITS_NO_RD for a CPU no LPI can reach
 * @rid_base, @devid_base, @rid_count: the device tree's msi-map entry:
 *            requester IDs @rid_base .. @rid_base + @rid_count - 1 are
 *            DeviceIDs @devid_base.. ; @rid_count 0 means DeviceID =
 *            requester ID (segment << 16 | bus << 8 | devfn)
 * @rd_frame: NULL, or for each host CPU number (@nr_cpus entries) the
 *            physical address of its redistributor's RD_base frame (64
 *            KiB aligned; QEMU virt: 0x080a0000 + 0x20000 * n), 0 for a
 *            CPU without one. Given, the back end owns the LPI tables
 *            (below); NULL, the kernel does
 * @lpi_priority: with @rd_frame, the property-table priority of uMSI's
 *            LPIs (bits 7:2; 0 means 0xa0)
 * @wired_spis: the kernel routes wired inputs (PCI INTx: SPIs the host
 *            bridge's interrupt-map names) itself from the message uMSI
 *            composes for them (UMSI_ARM_WIRED_MSG); false: no INTx
 *
 * What the back end does: at creation it maps the ITS, disables it,
 * gives it a device table and a collection table (GITS_BASER<n>, flat,
 * from phys_alloc, DeviceIDs up to 2^16) and a 4 KiB command queue,
 * enables it and maps collection c to CPU c's redistributor (MAPC) for
 * every CPU with one. The first message of a device maps it (MAPD with
 * an ITT sized to the device), each message maps its event(s) to the
 * IRQ's LPI and the chosen CPU's collection (MAPTI, INV, SYNC); a move is
 * a MOVI to the new collection and a SYNC of both redistributors (the LPI
 * and the device's message stay); freeing an IRQ discards its events
 * (DISCARD), the last one unmaps the device (MAPD V=0) and frees its
 * ITT. A replay (an interrupt taken while lazily masked) is an INT.
 *
 * The LPI tables (IHI 0069 5.1): with @rd_frame, the back end allocates
 * (phys_alloc) one property table for 2^@lpi_id_bits INTIDs and a pending
 * table per redistributor, maps each RD_base frame, sets GICR_PROPBASER
 * and GICR_PENDBASER and then GICR_CTLR.EnableLPIs (refused if already
 * set: the tables are someone else's). An LPI is enabled in the property
 * table when its event is mapped (then INV) and disabled when the event is
 * discarded; "pending on this CPU" is read from that CPU's pending table,
 * so irq_pending is not needed. At teardown EnableLPIs is cleared and the
 * tables freed; a redistributor that keeps EnableLPIs set (allowed by
 * GICv3) keeps its tables, said in the log. The kernel wakes each
 * redistributor (GICR_WAKER) before the system is created and has no
 * LPIs of its own. Without @rd_frame the kernel gives every
 * redistributor its property table (GICR_PROPBASER, @lpi_id_bits) with
 * every LPI of uMSI's range enabled at the priority it wants, and its
 * pending table (GICR_PENDBASER), then sets GICR_CTLR.EnableLPIs.
 *
 * What the kernel does in both cases (docs/PORTING.md): read the INTID from
 * ICC_IAR1_EL1, call umsi_dispatch() with INTID - @first_lpi for
 * INTIDs in uMSI's range, then write the INTID to ICC_EOIR1_EL1 (uMSI
 * ends nothing: umsi_ctl.eoi is false). Wired inputs (SPIs) are not
 * uMSI's here.
 *
 * Read during umsi_system_create() only; the ITS's GITS_TYPER is read
 * then too. Contradictions (first_lpi below 8192, LPIs beyond
 * lpi_id_bits, too few rd_target entries, a misaligned base, an ITT
 * larger than the ITS allows, an ITS without a device table) make it
 * fail with -UMSI_EINVAL and a log line naming the problem.
 */
struct umsi_its_config {
	uint64_t its_base;
	uint32_t first_lpi;
	uint32_t nvec;
	uint32_t lpi_id_bits;
	uint32_t itt_events;
	uint32_t nr_cpus;
	const uint64_t *rd_target;
	uint32_t rid_base;
	uint32_t devid_base;
	uint32_t rid_count;
	const uint64_t *rd_frame;
	uint8_t lpi_priority;
	bool wired_spis;
};

/* The Arm GICv3 ITS back end (src/arch/arm64). */
extern const struct umsi_ctl umsi_ctl_arm64_its;

/*
 * Wired inputs on the Arm back ends (umsi_its_config.wired_spis,
 * umsi_gicv2m_config.wired_spis): a PCI INTx line arrives at the GIC as an
 * SPI (the host bridge's interrupt-map), which no MSI frame translates.
 * uMSI still gives it a CPU and an identity; the message it composes for
 * the host's gsi_program is @address = UMSI_ARM_WIRED_MSG | the target
 * CPU's number (uMSI's), @data = the identity. The host aims the SPI at
 * that CPU (GICD_IROUTER on a GICv3, GICD_ITARGETSR on a GICv2), makes it
 * level-sensitive, enables it unless masked, and passes the identity to
 * umsi_dispatch() when the SPI arrives (then ends it itself, as ever). A
 * move gives a new message (a new CPU; the identity stays): the host
 * rewrites the route.
 */
#define UMSI_ARM_WIRED_MSG       (1ull << 63)

/* A CPU the GICv2 distributor cannot target (umsi_gicv2m_config.cpu_if). */
#define UMSI_GICV2M_NO_IF        0xffu

/**
 * struct umsi_gicv2m_config - the Arm GICv2m back end's configuration
 * @frame: physical address of the v2m MSI frame (4 KiB aligned; QEMU
 *         virt with gic-version=2: 0x08020000, the device tree's
 *         "arm,gic-v2m-frame"). Messages go to its MSI_SETSPI_NS,
 *         @frame + 0x40; its MSI_TYPER (@frame + 0x8) names its SPIs,
 *         read at creation
 * @dist: physical address of the GICv2 distributor (4 KiB aligned; QEMU
 *         virt: 0x08000000)
 * @priority: the priority byte of uMSI's SPIs (0 means 0xa0)
 * @nr_cpus: entries of @cpu_if; at least the host's cpu_count()
 * @cpu_if: for each host CPU number, its GICv2 CPU interface number, 0-7
 *         (the bit GICD_ITARGETSR names it by: on QEMU, the CPU's index),
 *         or UMSI_GICV2M_NO_IF for a CPU no SPI can reach. No two CPUs
 *         may share one
 * @wired_spis: the kernel routes wired inputs (PCI INTx, SPIs) from the
 *         message uMSI composes for them (UMSI_ARM_WIRED_MSG); false: no
 *         INTx
 *
 * What the back end does: an IRQ gets one of the frame's SPIs for its life
 * (a multi-message block an aligned run, at most as aligned as the frame's
 * first SPI); its message is (MSI_SETSPI_NS, the SPI's INTID). Composing
 * it makes the SPI edge-triggered, gives it the priority and the chosen
 * CPU's interface as its target, and enables it; a move rewrites the
 * target byte (GICD_ITARGETSR) only; freeing the IRQ disables the SPI and
 * clears its pending state. A resend sets it pending (GICD_ISPENDR).
 *
 * What the kernel does (docs/PORTING.md): enable the distributor and
 * each CPU interface, read GICC_IAR, call umsi_dispatch() with INTID -
 * the frame's first SPI (its MSI_TYPER bits 25:16) for the frame's INTIDs,
 * write the value to GICC_EOIR (uMSI ends nothing).
 *
 * Read during umsi_system_create() only. Contradictions (no or a
 * misaligned frame or distributor, too few cpu_if entries, an interface
 * above 7 or given twice, an MSI_TYPER that names no run of SPIs) make it
 * fail with -UMSI_EINVAL and a log line naming the problem.
 */
struct umsi_gicv2m_config {
	uint64_t frame;
	uint64_t dist;
	uint8_t priority;
	uint32_t nr_cpus;
	const uint8_t *cpu_if;
	bool wired_spis;
};

/* The Arm GICv2m back end (src/arch/arm64/gicv2m.c). */
extern const struct umsi_ctl umsi_ctl_arm64_gicv2m;

/* The most IO-APICs a remapping back end's table (ioapics) may list. */
#define UMSI_MAX_IOAPICS        64u

/**
 * struct umsi_ioapic_source - one IO-APIC as a remapping unit sees it
 * @gsi_base: the GSI of its input 0 (the ACPI MADT IO-APIC entry's Global
 *            System Interrupt Base)
 * @gsi_count: its inputs, 1 to 256 (its version register's Maximum
 *            Redirection Entry + 1)
 * @source_id: the requester ID its messages carry. VT-d: the DMAR device
 *            scope entry of type IOAPIC whose enumeration ID is the
 *            IO-APIC's ID (bus << 8 | devfn), or UMSI_VTD_NO_SID (its
 *            entries are not validated). AMD-Vi: the IVHD's special
 *            device entry of variety IOAPIC whose handle is its ID (the
 *            DeviceID)
 *
 * A machine with several IO-APICs (one per host bridge or I/O die is
 * common on servers) sends each one's messages with its own requester ID;
 * the remapping back ends find a wired input's IO-APIC by its GSI in a
 * table of these (umsi_vtd_config.ioapics, umsi_amdvi_config.ioapics).
 */
struct umsi_ioapic_source {
	uint32_t gsi_base;
	uint32_t gsi_count;
	uint32_t source_id;
};

/* Intel VT-d interrupt remapping: the default size of the table. */
#define UMSI_VTD_DEFAULT_IRTE   4096u
/* The requester ID of an IO-APIC unknown to the kernel: no validation. */
#define UMSI_VTD_NO_SID         0xffffffffu

/* The most remapping units (umsi_vtd_config.units), and the most scope
 * ranges all units together may list (umsi_amdvi_config.units' DeviceID
 * ranges too). */
#define UMSI_VTD_MAX_UNITS      64u
#define UMSI_VTD_MAX_SCOPE      1024u

/**
 * struct umsi_rid_range - requesters @first..@last (both included), each
 * segment << 16 | bus << 8 | devfn, as umsi_ctl_irq.source_id names them
 * @first: the first requester
 * @last: the last one, in the same segment, not below @first
 *
 * A DMAR device scope entry becomes one or two: a PCI endpoint its own
 * requester ID (@first == @last); a PCI sub-hierarchy (a bridge) its own
 * ID and its secondary to subordinate buses whole (seg << 16 | sec << 8 ..
 * seg << 16 | sub << 8 | 0xff), which hold the IDs that functions behind
 * a PCIe-to-PCI bridge (secondary bus, devfn 0) or a conventional bridge
 * (the bridge's) are seen with; an IOAPIC entry the IO-APIC's requester
 * ID. The reference kernel's kernel/arch/x86_64/iommu.c
 * (iommu_scope_ranges) does this.
 */
struct umsi_rid_range {
	uint32_t first;
	uint32_t last;
};

/**
 * struct umsi_vtd_unit - one remapping unit (a DMAR DRHD structure)
 * @reg_base: physical address of its registers (the DRHD's Register Base
 *            Address), 4 KiB aligned
 * @segment: the PCI segment it serves (the DRHD's Segment Number)
 * @include_all: the DRHD's INCLUDE_PCI_ALL flag: it remaps every
 *            requester of @segment that no other unit's @scope holds (at
 *            most one such unit per segment)
 * @scope: with @nscope, the requesters it remaps (its device scope); each
 *            range within @segment, and no range of one unit overlapping
 *            another unit's. May be empty (0) only with @include_all
 * @nscope: entries of @scope, 0 to UMSI_VTD_MAX_SCOPE (all units
 *            together)
 */
struct umsi_vtd_unit {
	uint64_t reg_base;
	uint16_t segment;
	bool include_all;
	const struct umsi_rid_range *scope;
	uint32_t nscope;
};

/**
 * struct umsi_vtd_config - the Intel VT-d interrupt-remapping back end
 * @reg_base: physical address of the remapping unit's registers (the
 *            ACPI DMAR table's DRHD Register Base Address; QEMU q35's
 *            intel-iommu: 0xfed90000), 4 KiB aligned, for a machine of
 *            one unit, which then remaps every requester of every
 *            segment. 0 when @units is given
 * @units: with @nunits, the machine's remapping units (servers have one
 *            per root complex or I/O stack), each with its own table and
 *            invalidation queue: an MSI/MSI-X message's entry is taken in
 *            the table of the unit that remaps its requester (the one
 *            whose @scope holds it, else the @include_all unit of its
 *            segment), a wired input's in that of its IO-APIC's requester
 *            ID (segment 0; an IO-APIC of unknown ID, UMSI_VTD_NO_SID, or
 *            a source without a requester: the @include_all unit of
 *            segment 0, else @units[0]). A requester no unit remaps is
 *            refused (-UMSI_ENOTSUP, with a log line). Copied at creation
 * @nunits: entries of @units, 0 to UMSI_VTD_MAX_UNITS; 0: the one unit at
 *            @reg_base
 * @irte_count: entries of the interrupt remapping table, a power of two,
 *            2..65536 (0 means UMSI_VTD_DEFAULT_IRTE)
 * @x2apic: destinations are x2APIC IDs (32 bits, IRTA.EIME): needs the
 *            unit's ECAP.EIM and a kernel in x2APIC mode; the only way to
 *            reach APIC IDs above 255 without the extended destination ID
 * @allow_compat: let compatibility-format interrupts bypass remapping
 *            (GCMD.CFI set); by default they are blocked (CFI clear: each
 *            is a fault) once remapping is on, so no device can aim a
 *            message at a CPU directly
 * @ioapic_sid: the requester ID the unit sees on IO-APIC messages (the
 *            DMAR device scope's IOAPIC entry: bus << 8 | devfn), which
 *            their entries validate; UMSI_VTD_NO_SID: not validated. For
 *            a machine of one IO-APIC; ignored when @nioapics is not 0
 * @ioapics: with @nioapics, the IO-APICs (disjoint runs of GSIs): a wired
 *            input's entry validates the requester ID of the IO-APIC whose
 *            inputs hold its GSI, and an input of a GSI outside them is
 *            refused (-UMSI_ENOTSUP, with a log line; for INTx,
 *            umsi_pci_alloc_irq_vectors() answers -UMSI_ENOENT); copied at
 *            creation
 * @nioapics: entries of @ioapics, 0 to UMSI_MAX_IOAPICS; 0: @ioapic_sid
 *            for every GSI
 *
 * The back end is the x86 local APIC one (same vectors, IRR, IPI resend,
 * EOI) with every message going through a remapping table entry (IRTE) it
 * owns: at creation it maps the unit, checks VER/CAP/ECAP (interrupt
 * remapping, queued invalidation, EIM if @x2apic), takes the table and a
 * 4 KiB invalidation queue from phys_alloc, and turns on, waiting on
 * GSTS each time: queued invalidation, the table pointer (IRTA, SIRTP),
 * a global interrupt-entry-cache invalidation, remapping (IRE), and CFI
 * clear (compatibility format blocked) unless @allow_compat. Each MSI/MSI-X message gets an
 * entry (a multi-message MSI block: 2^k consecutive entries, addressed by
 * subhandle, each message with its own CPU and vector) whose source-ID
 * validation names the function's requester ID (all 16 bits); the
 * message is remappable-format (address 0xFEE00000 | handle, SHV for a
 * block; data the subhandle) and never changes: a move rewrites the
 * entry (its low 64 bits, one store) and invalidates it in the interrupt
 * entry cache. Freeing clears the entry (present bit) and invalidates it.
 * Every invalidation waits for a wait descriptor's status write; one that
 * does not come within 10 ms fails the call with -UMSI_ETIMEDOUT and the
 * unit is not trusted again. Wired inputs (the IO-APIC) get entries too,
 * composed as remappable messages (SHV clear, data = the entry's vector)
 * that the host's gsi_program turns into remappable-format redirection
 * entries: handle from the address, vector field from the data (EOI
 * broadcasts match it).
 *
 * Host operations: those of umsi_ctl_x86_lapic, plus mmio_map of the
 * unit's 4 KiB register page and phys_alloc/phys_free. The platform flag
 * UMSI_PLAT_IRQ_REMAP must be clear (it means "the host remaps", the
 * remap_compose hook). uMSI reads and clears the unit's fault recording
 * registers only when the kernel asks, through umsi_vtd_faults() (from
 * its fault event or a poll); nothing else in uMSI touches them.
 *
 * Read during umsi_system_create() only. Contradictions (a misaligned
 * base, a table size not a power of two, @x2apic without ECAP.EIM, a unit
 * without interrupt remapping or queued invalidation, an @ioapics table
 * that is missing, too long, has an IO-APIC of no or too many inputs or
 * a requester ID past 16 bits, or two IO-APICs sharing a GSI, an
 * @ioapic_sid past 16 bits, both @reg_base and @units or neither, too many units, two at one address,
 * two include-all units of one segment, a unit that remaps nothing, a
 * scope range reversed, across segments, outside its unit's segment or
 * overlapping another unit's, remapping already enabled by someone else)
 * make it fail with -UMSI_EINVAL (-UMSI_EBUSY for the last) and a log
 * line naming the problem. With several units each is brought up in
 * turn, and a failure turns the ones already on off again.
 */
struct umsi_vtd_config {
	uint64_t reg_base;
	const struct umsi_vtd_unit *units;
	uint32_t nunits;
	uint32_t irte_count;
	bool x2apic;
	bool allow_compat;
	uint32_t ioapic_sid;
	const struct umsi_ioapic_source *ioapics;
	uint32_t nioapics;
};

/* The Intel VT-d interrupt-remapping back end (src/arch/x86/vtd.c). */
extern const struct umsi_ctl umsi_ctl_x86_vtd;

/* VT-d fault reasons of interrupt requests (VT-d 7.1.3). */
#define UMSI_VTD_FR_IR_FIRST     0x20
#define UMSI_VTD_FR_IR_LAST      0x28
#define UMSI_VTD_FR_INDEX        0x21  /* handle beyond the table */
#define UMSI_VTD_FR_NOT_PRESENT  0x22  /* entry not present */
#define UMSI_VTD_FR_RESERVED     0x24  /* reserved bits set in the entry */
#define UMSI_VTD_FR_COMPAT       0x25  /* compatibility format blocked */
#define UMSI_VTD_FR_SID          0x26  /* source-ID validation failed */

/**
 * struct umsi_vtd_fault - one fault the remapping unit recorded
 * @sid: the requester ID of the request that faulted
 * @reason: the fault reason (VT-d 7.1.3): 0x20-0x28 for an interrupt
 *          request (UMSI_VTD_FR_*), else a DMA-remapping fault
 * @interrupt: an interrupt request (reason 0x20-0x28)
 * @index: an interrupt request's handle (+ subhandle): the table entry
 * @addr: a DMA fault's page address (FI, bits 63:12)
 * @write: a DMA fault on a write (FRCD.T clear)
 * @unit: the unit that recorded it (its index in umsi_vtd_config.units;
 *        0 for a machine of one unit)
 */
struct umsi_vtd_fault {
	uint32_t unit;
	uint32_t sid;
	uint8_t reason;
	bool interrupt;
	uint32_t index;
	uint64_t addr;
	bool write;
};

/**
 * umsi_vtd_faults - read and clear what the remapping unit recorded
 * @sys: a system created with umsi_ctl_x86_vtd
 * @report: called once per recorded fault (any context the caller is in;
 *          it must not call back into uMSI)
 * @arg: passed to @report
 * @overflowed: set when a unit lost faults for want of records
 *          (FSTS.PFO, then cleared); may be NULL
 *
 * Walks each unit's fault recording registers (CAP.FRO, CAP.NFR) from
 * FSTS.FRI, reports each with F set and clears it (write 1 to F). uMSI never reads
 * them otherwise: the kernel calls this from its fault event or a poll.
 * Context: any; takes the back end's spinlock.
 * Return: the number of faults reported, or -UMSI_EINVAL when @sys has
 * another back end.
 */
int umsi_vtd_faults(struct umsi_system *sys,
		    void (*report)(void *arg, const struct umsi_vtd_fault *f),
		    void *arg, bool *overflowed);

/* AMD-Vi: no IO-APIC DeviceID known to the kernel. */
#define UMSI_AMDVI_NO_DEVID     0xffffffffu
/*
 * AMD-Vi: the most entries of one device's interrupt remapping table the
 * back end uses. An MSI's data bits 10:8 are read as its delivery mode
 * before the index (AMD I/O Virtualization Technology 2.2.5.1): only
 * fixed (0) and arbitrated (1) are remapped, so indexes stop at 511.
 */
#define UMSI_AMDVI_MAX_IRTE     512u

/*
 * A wired input's message under AMD-Vi (umsi_amdvi_config): the vector
 * and APIC ID its entry sends to, which the host's IO-APIC EOI follows.
 */
#define UMSI_AMDVI_WIRED_INDEX(data)   ((uint32_t)(data) & 0xffu)
#define UMSI_AMDVI_WIRED_VECTOR(data)  (((uint32_t)(data) >> 16) & 0xffu)
#define UMSI_AMDVI_WIRED_APIC(data)    (((uint32_t)(data) >> 24) & 0xffu)

/* The most IOMMUs of umsi_amdvi_config.units. */
#define UMSI_AMDVI_MAX_UNITS    64u

/**
 * struct umsi_amdvi_unit - one IOMMU (an IVRS IVHD block)
 * @reg_base: its registers (the IVHD's IOMMU Base Address), 16 KiB
 *            aligned
 * @segment: the PCI segment of its DeviceIDs (the IVHD's PCI Segment
 *            Group)
 * @devices: with @ndevices, the DeviceIDs whose requests go through it
 *            (the IVHD's device entries: a select entry one ID, a range
 *            start..end, an alias entry its source IDs; IO-APIC special
 *            entries their DeviceID), each segment << 16 | DeviceID,
 *            within @segment, none overlapping another unit's
 * @ndevices: entries of @devices, 1 to UMSI_VTD_MAX_SCOPE (all units
 *            together)
 */
struct umsi_amdvi_unit {
	uint64_t reg_base;
	uint16_t segment;
	const struct umsi_rid_range *devices;
	uint32_t ndevices;
};

/**
 * struct umsi_amdvi_config - the AMD-Vi interrupt-remapping back end
 * @reg_base: physical address of the IOMMU's registers (the ACPI IVRS
 *            table's IVHD IOMMU Base Address; QEMU q35's amd-iommu:
 *            0xfed80000), 16 KiB aligned, for a machine of one IOMMU,
 *            which must then cover every PCI function uMSI will see (the
 *            IVHD's device entries). 0 when @units is given
 * @units: with @nunits, the machine's IOMMUs (an EPYC has several per
 *            socket), each with its own device table and command buffer:
 *            a DeviceID's interrupt table is pointed at by its entry in
 *            the device table of the IOMMU whose @devices hold it, and
 *            every command for it goes to that IOMMU; a wired input's by
 *            its IO-APIC's DeviceID (segment 0). A DeviceID no unit
 *            holds is refused (-UMSI_ENOTSUP, with a log line). Copied
 *            at creation
 * @nunits: entries of @units, 0 to UMSI_AMDVI_MAX_UNITS; 0: the one IOMMU
 *            at @reg_base
 * @devid_count: DeviceIDs (requester IDs) the device table covers, a
 *            multiple of 128 from 128 to 65536 (0 means 65536): every
 *            function's requester ID, and @ioapic_devid, must be below it
 * @ioapic_devid: the IVHD's IO-APIC special device entry's DeviceID (QEMU:
 *            0x00a0, 00:14.0): wired inputs' entries go in its table.
 *            UMSI_AMDVI_NO_DEVID: none, and wired inputs are refused. For
 *            a machine of one IO-APIC; ignored when @nioapics is not 0
 * @ioapics: with @nioapics, the IO-APICs (disjoint runs of GSIs, each
 *            DeviceID below @devid_count): a wired input's entry goes in
 *            the table of the IO-APIC whose inputs hold its GSI, and an
 *            input of a GSI outside them is refused (-UMSI_ENOTSUP, with
 *            a log line; for INTx, umsi_pci_alloc_irq_vectors() answers
 *            -UMSI_ENOENT); copied at creation
 * @nioapics: entries of @ioapics, 0 to UMSI_MAX_IOAPICS; 0: @ioapic_devid
 *            for every GSI
 * @allow_pass: devices without interrupts of uMSI's pass their messages
 *            unremapped (IntCtl 01b); by default they are aborted (IntCtl
 *            00b), so no device can aim a message at a CPU directly
 *
 * The back end is the x86 local APIC one (same vectors, IRR, IPI resend,
 * EOI) with every MSI/MSI-X message going through an interrupt remapping
 * table entry (IRTE, the 32-bit format: RemapEn, IntType fixed, physical
 * destination, 8-bit APIC ID, vector) in a table of the message's
 * DeviceID: the unit looks the table up in the device table entry (DTE)
 * of the requester writing the message, so the table is the source's own
 * and a device can only name entries written for it. At creation it maps
 * the unit's 16 KiB of registers, checks that the unit answers and is not
 * already enabled, takes the device table (32 bytes a DeviceID) and a
 * 4 KiB command buffer from phys_alloc, writes every DTE (IV set, IntCtl
 * abort, or pass with @allow_pass), and turns the command buffer and the
 * unit on. A DeviceID's first IRQ gets its table, sized to every message
 * its sources can send (umsi_ctl_irq.source_events, a power of two from 2
 * to UMSI_AMDVI_MAX_IRTE entries) and pointed at by its DTE (IntCtl
 * remapped); entries are taken per IRQ (a multi-message MSI block: 2^k
 * consecutive, aligned ones: the device ORs the message number into the
 * data). The message is address 0xFEE00000 and data the entry's index,
 * and never changes: a move rewrites the entry (one 32-bit store) and
 * invalidates the device's table in the unit (INVALIDATE_INTERRUPT_TABLE);
 * freeing clears the entry and invalidates it; the device's last IRQ
 * gives its table back after its DTE aborts again (INVALIDATE_DEVTAB_ENTRY).
 * Every command batch ends in a COMPLETION_WAIT whose store says the unit
 * has done it, polled with a deadline: one that does not come within 10 ms
 * fails the call with -UMSI_ETIMEDOUT and the unit is not trusted again.
 * Wired inputs (IO-APIC inputs, with @ioapic_devid or @ioapics given;
 * else refused with -UMSI_ENOTSUP, as is a GSI of no IO-APIC of @ioapics)
 * take entries of the table (256 entries) of the DeviceID of the IO-APIC
 * that holds their GSI. Their message, for the host's gsi_program: address exactly
 * 0xFEE00000 (destination 0: QEMU 7.2's unit takes no other address), data
 * bits 7:0 the entry's index, which the redirection entry holds in its
 * vector field (compatibility format, delivery mode fixed, physical), and
 * bits 31:16 where the unit sends it: UMSI_AMDVI_WIRED_VECTOR(data), the
 * vector, and UMSI_AMDVI_WIRED_APIC(data), the APIC ID. The redirection
 * entry takes none of bits 31:16. The unit's message carries no trigger
 * mode, so the local APIC never passes a level input's EOI on to the
 * IO-APIC: the host ends it itself. After the EOI that ends that vector on
 * that CPU (umsi_dispatch calls the host's eoi with it), it writes the
 * entry's vector field to the EOI register (offset 0x40, version 0x20 and
 * up) of the IO-APIC that holds the input, as Linux does under AMD-Vi.
 * With several IO-APICs (@ioapics) each has a table of its own, so two
 * inputs of different IO-APICs may have the same index: the EOI goes to
 * the input's IO-APIC only. A move rewrites the entry and
 * gives the host a new message (same index, new bits 31:16): a level
 * input delivered and not yet ended when its entry is rewritten with new
 * bits must be ended then (masked, by the EOI register), or its end would
 * be looked for on the wrong CPU.
 *
 * Host operations: those of umsi_ctl_x86_lapic, plus mmio_map of the
 * registers and phys_alloc/phys_free. The platform flag UMSI_PLAT_IRQ_REMAP
 * must be clear. Destinations are 8-bit APIC IDs, 0xff the broadcast:
 * CPUs with APIC IDs above 254 are not reachable.
 *
 * Read during umsi_system_create() only. Contradictions (a misaligned
 * base, a bad @devid_count, an @ioapic_devid beyond it, an @ioapics table
 * that is missing, too long, has an IO-APIC of no or too many inputs or a
 * DeviceID beyond @devid_count, or two IO-APICs sharing a GSI, both
 * @reg_base and @units or neither, too many units, two at one address, a
 * unit of no DeviceIDs, a DeviceID range reversed, beyond @devid_count,
 * outside its unit's segment or overlapping another unit's, a unit that
 * does not answer, a unit already enabled by someone else) make it fail
 * with -UMSI_EINVAL (-UMSI_EBUSY for the last) and a log line naming the
 * problem. With several units each is brought up in turn, and a failure
 * turns the ones already on off again.
 */
struct umsi_amdvi_config {
	uint64_t reg_base;
	const struct umsi_amdvi_unit *units;
	uint32_t nunits;
	uint32_t devid_count;
	uint32_t ioapic_devid;
	bool allow_pass;
	const struct umsi_ioapic_source *ioapics;
	uint32_t nioapics;
};

/* The AMD-Vi interrupt-remapping back end (src/arch/x86/amdvi.c). */
extern const struct umsi_ctl umsi_ctl_x86_amdvi;

#endif /* UMSI_CTL_H */
