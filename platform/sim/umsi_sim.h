/* SPDX-License-Identifier: MIT */
/*
 * umsi_sim.h - the hosted simulator: a uMSI host that behaves like hardware.
 *
 * A struct umsi_sim is one simulated x86 machine: CPUs with local APICs
 * (IRR, ISR, TMR, EOI, interrupt enable) - or, with UMSI_SIM_CTL_IMSIC, a
 * RISC-V machine whose harts have AIA IMSIC interrupt files - one PCI
 * segment of functions with
 * 4 KiB configuration spaces and BARs, devices that raise MSI, MSI-X or INTx
 * as the PCI specification says, an IO-APIC, an optional interrupt-remapping
 * table and a virtual clock. umsi_sim_host_ops() is the host interface
 * (umsi/host.h); pass the struct umsi_sim pointer as its context.
 *
 * Everything a CPU or device would observe is countable, so tests can assert
 * exact access counts, inject a failure at every host call, and check that a
 * failed call left nothing behind.
 *
 * Build: include as <sim/umsi_sim.h> with -Iplatform (or "umsi_sim.h" with
 * -Iplatform/sim) and link build/libumsi-sim.a, build/libumsi.a, -lpthread.
 *
 * Execution modes
 *  - Non-threaded (default): deterministic, single thread. A "current CPU"
 *    chosen by the test (umsi_sim_set_current_cpu) is the CPU the caller
 *    runs on. An interrupt that becomes deliverable is dispatched at once,
 *    synchronously, before the sim call that caused it returns - even in
 *    the middle of a host call the library made on another CPU. That is
 *    how races are provoked deterministically. A CPU takes an interrupt
 *    when it is online, its interrupts are enabled (no uMSI lock held on
 *    it, not inside a handler or cross-call, not disabled by the test), and
 *    the vector's priority class is above the highest in-service one.
 *    Because one thread cannot spin on a lock, an interrupt is by default
 *    also held back while *any* CPU holds a uMSI lock, and dispatched when
 *    the last lock is released: the outcome is the one a real CPU spinning
 *    on that lock would see (umsi_sim_set_dispatch_through_locks lifts
 *    this). Acquiring a lock that is already held cannot be run on one
 *    thread and aborts the process with a message.
 *  - Threaded (config.threaded): every CPU is a thread that dispatches its
 *    own pending vectors and runs cross-calls; locks are real mutexes. The
 *    thread that created the sim is not a CPU: it acts as the CPU chosen
 *    with umsi_sim_set_current_cpu (default 0) for current_cpu() and lock
 *    bookkeeping, while that CPU's thread may still take interrupts in
 *    parallel (a simplification: real process context would be
 *    interrupted, not run beside its handler). To run code exactly on a
 *    CPU, post it with the host run_on_cpu operation. Use
 *    umsi_sim_quiesce() to wait until every deliverable interrupt has been
 *    handled. Clean under ThreadSanitizer (make tsan-sim).
 *
 * Locking of the sim itself: every function here may be called from any
 * thread. Callbacks (dispatch, hook, cross-call functions) are never called
 * with the sim's internal lock held, so they may call back into the sim.
 */
#ifndef UMSI_SIM_H
#define UMSI_SIM_H

#include <stdio.h>

#include <umsi/ctl.h>	/* struct umsi_ioapic_source */
#include <umsi/host.h>
#include <umsi/msg.h>
#include <umsi/x86.h>
#include <umsi/pci_regs.h>	/* UMSI_PCI_CMD_*, UMSI_PCIE_TYPE_* in descs */
#include <umsi/types.h>

struct umsi_sim;

/* ---- Machine ------------------------------------------------------------- */

/*
 * The most CPUs a machine may have. Nothing in the simulator scans every
 * CPU per message or interrupt (APIC IDs are looked up in a sorted index,
 * pending interrupts in a bitmap of CPUs), so the limit is about memory:
 * each CPU keeps 8 KiB of per-vector counters.
 */
#define UMSI_SIM_MAX_CPUS 8192

/* The interrupt controller of a machine (umsi_sim_config.controller). */
enum umsi_sim_ctl {
	/* x86 local APICs (IRR/ISR/TMR), an IO-APIC: the default. */
	UMSI_SIM_CTL_X86_LAPIC = 0,
	/*
	 * RISC-V AIA: an S-level IMSIC interrupt file per hart (AIA 1.0,
	 * chapter 3). File k (CPU k) is the 4 KiB page at imsic_base +
	 * 0x1000 * k; a 32-bit write of identity i to its offset 0
	 * (seteipnum_le; offset 4, seteipnum_be, takes it byte-swapped)
	 * sets eip bit i, as a write of 0 or above num-ids does nothing
	 * (counted undeliverable, reason VECTOR); any other address in the
	 * window, or outside every file, is stray. The file latches whether
	 * or not its hart is online. The hart takes topei: the lowest
	 * identity pending and enabled (eie) and, with eithreshold P != 0,
	 * below P; only while eidelivery is 1. Taking it is the kernel's
	 * claim (csrrw stopei, zero: the eip bit clears) before its dispatch
	 * is called with the identity; there is no EOI. The host's
	 * irq_pending(id) reads the current hart's eip bit; the indirect
	 * registers by siselect number (umsi_sim_imsic_reg) are eidelivery
	 * 0x70, eithreshold 0x72, eip 0x80 + 2k, eie 0xc0 + 2k (RV64: odd
	 * numbers do not exist and are bad accesses); eoi and send_ipi are
	 * bad accesses on an IMSIC. Files start
	 * as the kernel leaves them after boot (docs/PORTING.md): eidelivery
	 * 1, eithreshold 0, every identity enabled. IO-APIC inputs become an
	 * APLIC in MSI mode: gsi_program takes the message (file address,
	 * identity) as is, and an input sends it once each time it becomes
	 * asserted and unmasked (a level input still asserted when unmasked
	 * or reprogrammed sends again, and is made pending again by the
	 * host after each dispatch of its identity: aplic_retriggers).
	 */
	UMSI_SIM_CTL_IMSIC,
	/*
	 * Arm GICv3 with an ITS (IHI 0069), as QEMU 7.2's virt machine has
	 * it: the ITS control frame at its_base (GITS_CTLR, GITS_TYPER
	 * 0x1f0001efb1: physical LPIs, 12-byte ITT entries, 16 EventID,
	 * DeviceID and collection ID bits, PTA 0; GITS_CBASER, GITS_CWRITER,
	 * GITS_CREADR; GITS_BASER0 a device table and GITS_BASER1 a
	 * collection table, 8-byte entries, 64 KiB pages, flat), reached by
	 * 32-bit MMIO, and GITS_TRANSLATER at its_base + 0x10040. The ITS
	 * keeps its state only in the memory software gave it through the
	 * host's phys_alloc (device table, collection table, ITTs), and reads
	 * the command queue from there when GITS_CWRITER is written while
	 * GITS_CTLR.Enabled: MAPD, MAPC, MAPTI, MAPI, MOVI, DISCARD, INV,
	 * INVALL, INT, CLEAR, SYNC. A command it cannot run (an unmapped
	 * device, an event beyond the ITT, an ITT or table outside the memory
	 * it was given, an unknown command) stalls the queue (GITS_CREADR bit
	 * 0) and counts as a bad access. A device's message write to
	 * GITS_TRANSLATER carries its BDF as DeviceID (segment << 16 | bus
	 * << 8 | devfn) and the data as EventID; the translation makes the
	 * LPI pending in the target collection's redistributor (CPU n has
	 * processor number n), online or not; anything untranslatable is
	 * undeliverable, reason ITS. Each redistributor has a pending bit per
	 * INTID below 2^its_lpi_bits; every LPI is enabled (the kernel's
	 * property table). A CPU takes the lowest pending LPI (IAR: pending
	 * cleared, the dispatch function gets the INTID); nothing is left to
	 * end. The host's irq_pending(INTID) on a CPU reads its pending bit;
	 * eoi and send_ipi are bad accesses on this machine.
	 *
	 * Each CPU n also has a redistributor (IHI 0069 9.11, QEMU virt's
	 * layout): its RD_base frame at UMSI_SIM_GICR_BASE + n *
	 * UMSI_SIM_GICR_STRIDE (64 KiB, then an SGI frame reading 0), 32-bit
	 * MMIO, 64-bit registers low half first: GICR_CTLR (0x0, EnableLPIs
	 * bit 0 read/write, clearing allowed; RWP reads 0), GICR_TYPER (0x8:
	 * PLPIS, Last on the last CPU, Processor_Number n, affinity the CPU's
	 * hwid in bits 63:32), GICR_PROPBASER (0x70: IDbits, address 51:12,
	 * the cacheability and shareability fields kept as written) and
	 * GICR_PENDBASER (0x78: address 51:16, PTZ write-only), both ignoring
	 * writes while EnableLPIs is set; every other offset reads 0 and
	 * ignores writes. A redistributor software never enabled is the one
	 * described above (the kernel's tables, every LPI enabled, pending
	 * state only in the model). One whose EnableLPIs is set is software's:
	 *  - an LPI arriving there (a translation, INT, a MOVI moving pending
	 *    state, umsi_sim_raise) at or above 2^(IDbits + 1) is dropped
	 *    (undeliverable, reason ITS); one whose property byte (PROPBASER
	 *    + INTID - 8192) or pending table byte (PENDBASER + INTID / 8) is
	 *    not in memory from phys_alloc is dropped too, as a bad access;
	 *  - else it becomes pending in the model and in the pending table
	 *    (bit INTID % 8), and the CPU takes it only if the property
	 *    byte's bit 0 (enable) was set when it became pending. A pending
	 *    LPI held disabled is looked at again, the property byte re-read,
	 *    by an INV of its event or an INVALL of a collection on that
	 *    redistributor (SYNC does not); enabled, the CPU takes it then;
	 *  - taking the LPI, CLEAR, DISCARD and a MOVI away clear the table's
	 *    bit too;
	 *  - setting EnableLPIs reads the pending table (unless PENDBASER was
	 *    last written with PTZ): its LPIs become pending as well; clearing
	 *    it leaves the pending state in the table and drops the model's
	 *    (nothing left to take until software enables it again).
	 */
	UMSI_SIM_CTL_ITS,
	/*
	 * Arm GICv2 with a v2m MSI frame, as QEMU 7.2's virt machine with
	 * gic-version=2 has them: the distributor at UMSI_SIM_GICD_BASE (4
	 * KiB of 32-bit registers: GICD_ISENABLER/ICENABLER 0x100/0x180,
	 * GICD_ISPENDR/ICPENDR 0x200/0x280, GICD_IPRIORITYR 0x400,
	 * GICD_ITARGETSR 0x800, GICD_ICFGR 0xc00, for INTIDs 0-1019; other
	 * offsets read 0 and ignore writes) and the frame at
	 * UMSI_SIM_V2M_BASE: MSI_TYPER (0x008) reads v2m_spi_base << 16 |
	 * v2m_spi_count, a 32-bit write of INTID i to MSI_SETSPI_NS (0x040)
	 * makes SPI i pending if it is one of the frame's (else it is
	 * undeliverable, reason VECTOR). Any other message address is stray.
	 * A pending SPI is taken by the CPU whose interface its
	 * GICD_ITARGETSR byte names (CPU n has interface n, n < 8; the
	 * lowest bit set wins), once enabled; with no CPU named, or while
	 * disabled, it stays pending in the distributor. A CPU takes its
	 * lowest pending INTID (GICC_IAR: pending cleared, the dispatch
	 * function gets the INTID); GICC_EOIR is the kernel's, nothing is
	 * left to end. Changing the target moves a pending SPI with it. The
	 * host's irq_pending(INTID) reads whether it is pending for the
	 * current CPU; eoi and send_ipi are bad accesses on this machine.
	 */
	UMSI_SIM_CTL_GICV2M,
};

/* QEMU virt's GICv2 distributor and v2m frame (gic-version=2). */
#define UMSI_SIM_GICD_BASE 0x08000000ull
#define UMSI_SIM_V2M_BASE 0x08020000ull
/* QEMU virt's v2m SPIs: INTIDs 80..143. */
#define UMSI_SIM_V2M_SPI_BASE 80u
#define UMSI_SIM_V2M_SPI_COUNT 64u

/* The IMSIC window of QEMU virt's S-level files. */
#define UMSI_SIM_IMSIC_BASE 0x28000000ull
/* QEMU virt's ITS. */
#define UMSI_SIM_ITS_BASE 0x08080000ull
/*
 * ITS machines: CPU n's redistributor (RD_base) is at UMSI_SIM_GICR_BASE +
 * n * UMSI_SIM_GICR_STRIDE (QEMU virt's GICv3 redistributor region: a 64
 * KiB RD frame, then a 64 KiB SGI frame). An ITS placed over it
 * (config.its_base) wins.
 */
#define UMSI_SIM_GICR_BASE 0x080a0000ull
#define UMSI_SIM_GICR_STRIDE 0x20000ull

/**
 * struct umsi_sim_config - the machine to build
 * @ncpus: number of CPUs, 1..UMSI_SIM_MAX_CPUS; all start online
 * @apic_ids: APIC ID of each CPU (@ncpus entries, distinct; gaps and IDs
 *            above 255 allowed), or NULL for 0..ncpus-1. On an IMSIC
 *            machine: the hart IDs (cpu_hwid)
 * @plat_flags: UMSI_PLAT_* flags the platform reports; they also decide
 *              how the delivery model decodes messages (extended
 *              destination ID only with UMSI_PLAT_EXT_DEST_ID, the
 *              remappable format only with UMSI_PLAT_IRQ_REMAP, broadcast
 *              0xffffffff instead of 0xff with UMSI_PLAT_X2APIC)
 * @threaded: one thread per CPU (see "Execution modes" above); meant
 *            for a few CPUs (8192 threads is more than most hosts allow,
 *            and creation then fails)
 * @ioapic_pins: IO-APIC inputs (GSIs 0..n-1), 0 for 24
 * @controller: enum umsi_sim_ctl (0: x86 local APICs)
 * @imsic_num_ids: IMSIC machines: identities of a file, 64k-1 from 63
 *                 to 2047 (0: 255, as QEMU virt)
 * @imsic_base: IMSIC machines: CPU 0's file, 4 KiB aligned (0:
 *              UMSI_SIM_IMSIC_BASE)
 * @its_base: ITS machines: ITS_base, 64 KiB aligned (0: UMSI_SIM_ITS_BASE)
 * @its_lpi_bits: ITS machines: INTID bits of the redistributors, 14..16
 *              (0: 16, as QEMU's GICD_TYPER.IDbits)
 * @v2m_typer: GICv2m machines: what the frame's MSI_TYPER reads (0:
 *             UMSI_SIM_V2M_SPI_BASE << 16 | UMSI_SIM_V2M_SPI_COUNT); any
 *             value, so that tests can give a hostile one
 * @vtd: x86 machines: an Intel VT-d interrupt-remapping unit at
 *       UMSI_SIM_VTD_BASE (see "The VT-d interrupt-remapping unit" below)
 * @vtd_units: with @nvtd_units, several VT-d units instead (a server's
 *       DMAR table of several DRHDs), described as the library's
 *       struct umsi_vtd_unit: each at its reg_base (4 KiB aligned, within
 *       UMSI_SIM_VTD_MAX_UNITS pages from UMSI_SIM_VTD_BASE), remapping
 *       the requesters its scope ranges hold, or with include_all every
 *       requester of its segment no unit's scope holds. A requester no
 *       unit remaps goes as on a machine without one; one without a
 *       requester goes through segment 0's include-all unit, else the
 *       first. IO-APIC messages are requesters of segment 0 (their
 *       source_id). Copied at creation
 * @nvtd_units: entries of @vtd_units, 0 to UMSI_SIM_VTD_MAX_UNITS (0: one
 *       unit at UMSI_SIM_VTD_BASE when @vtd, remapping every requester)
 * @vtd_eim: the unit has Extended Interrupt Mode (ECAP.EIM: 32-bit x2APIC
 *           destinations in its table entries); every unit alike
 * @vtd_ioapic_sid: the requester ID the unit sees on IO-APIC messages
 *                  (bus << 8 | devfn, as the DMAR table's IOAPIC device
 *                  scope says; QEMU q35: UMSI_SIM_VTD_IOAPIC_SID); also the
 *                  AMD-Vi unit's IO-APIC DeviceID. With @nioapics, each
 *                  IO-APIC's source_id instead
 * @amdvi: x86 machines: an AMD-Vi IOMMU at UMSI_SIM_AMDVI_BASE (see "The
 *         AMD-Vi unit" below); not with @vtd
 * @amdvi_units: with @namdvi_units, several AMD-Vi IOMMUs instead (an
 *         IVRS table of several IVHDs), described as the library's struct
 *         umsi_amdvi_unit: each at its reg_base (16 KiB aligned, within
 *         UMSI_SIM_AMDVI_MAX_UNITS blocks of 16 KiB from
 *         UMSI_SIM_AMDVI_BASE), with its own device table, command buffer
 *         and caches, taking the messages of the requesters its DeviceID
 *         ranges hold (an IO-APIC's: its source_id); a requester no unit
 *         holds goes as on a machine without one. Not with @vtd or
 *         @vtd_units. Copied at creation
 * @namdvi_units: entries of @amdvi_units, 0 to UMSI_SIM_AMDVI_MAX_UNITS
 * @ioapics: with @nioapics, several IO-APICs (as a server has: one in
 *           the chipset, one per host bridge): each has the inputs
 *           gsi_base .. gsi_base + gsi_count - 1 (GSIs counted across
 *           them, as ACPI does), its messages carry source_id as their
 *           requester ID (AMD-Vi: DeviceID), and its EOI register ends
 *           only its own inputs. In GSI order and back to back from GSI 0,
 *           240 inputs in all at most; @ioapic_pins 0 or their total.
 *           Copied at creation
 * @nioapics: entries of @ioapics, 0 to UMSI_MAX_IOAPICS; 0: one IO-APIC
 *            of @ioapic_pins inputs, sending as @vtd_ioapic_sid
 */
struct umsi_sim_config {
	uint32_t ncpus;
	const uint32_t *apic_ids;
	uint32_t plat_flags;
	bool threaded;
	uint32_t ioapic_pins;
	enum umsi_sim_ctl controller;
	uint32_t imsic_num_ids;
	uint64_t imsic_base;
	uint64_t its_base;
	uint32_t its_lpi_bits;
	uint32_t v2m_typer;
	bool vtd;
	const struct umsi_vtd_unit *vtd_units;
	uint32_t nvtd_units;
	bool vtd_eim;
	uint32_t vtd_ioapic_sid;
	bool amdvi;
	const struct umsi_amdvi_unit *amdvi_units;
	uint32_t namdvi_units;
	const struct umsi_ioapic_source *ioapics;
	uint32_t nioapics;
};

/**
 * umsi_sim_create - build a machine
 * @cfg: the configuration
 *
 * Return: the machine, or NULL for an invalid configuration (no CPUs, more
 * than UMSI_SIM_MAX_CPUS, duplicate APIC IDs, an unknown controller, an
 * IMSIC num-ids not of the form 64k-1 in 63..2047 or a misaligned base,
 * a VT-d unit on a machine that is not x86) or when out of memory.
 */
struct umsi_sim *umsi_sim_create(const struct umsi_sim_config *cfg);

/**
 * umsi_sim_destroy - stop the CPU threads (threaded mode) and free the
 * machine, its devices, and anything the library left mapped or allocated.
 * @sim: the machine, or NULL
 */
void umsi_sim_destroy(struct umsi_sim *sim);

/**
 * umsi_sim_host_ops - the host interface implemented by the simulator
 *
 * Return: a static table; pass it with the struct umsi_sim * as context to
 * umsi_system_create(). Every operation is implemented; remap_compose
 * returns -UMSI_ENOTSUP unless the machine has UMSI_PLAT_IRQ_REMAP.
 */
const struct umsi_host_ops *umsi_sim_host_ops(void);

/* ---- CPUs and the local APIC model --------------------------------------- */

/**
 * umsi_sim_set_dispatch - hook up the interrupt entry
 * @sim: the machine
 * @fn: called as fn(arg, cpu, vector) when CPU @cpu takes @vector, with
 *      current_cpu() == @cpu and that CPU's interrupts disabled; returns 1
 *      when a descriptor took the vector, 0 when spurious (counted as an
 *      "unassigned" delivery per CPU and vector). @fn must end the
 *      interrupt with the host eoi operation (or umsi_sim_eoi()); an
 *      interrupt still in service when @fn returns is counted as
 *      eoi_missing and stays in the ISR, blocking its priority class, as
 *      on hardware. NULL: every delivery is unassigned and the sim ends it
 *      itself.
 * @arg: passed to @fn (for the library: the struct umsi_system *)
 */
void umsi_sim_set_dispatch(struct umsi_sim *sim,
			   int (*fn)(void *arg, uint32_t cpu, uint8_t vector),
			   void *arg);

/**
 * umsi_sim_set_dispatch_id - umsi_sim_set_dispatch() with the identity
 * as 32 bits, for controllers with more than 256 (an IMSIC file has up
 * to 2047). Replaces the other's function, and the other replaces this.
 * On an IMSIC machine nothing is left to end when @fn returns.
 */
void umsi_sim_set_dispatch_id(struct umsi_sim *sim,
			      int (*fn)(void *arg, uint32_t cpu, uint32_t id),
			      void *arg);

/**
 * umsi_sim_set_current_cpu - the CPU the calling code runs on
 * @sim: the machine
 * @cpu: CPU number, below ncpus
 *
 * Non-threaded mode: the machine's current CPU. Threaded mode: the CPU the
 * calling thread acts as (thread-local; other non-CPU threads use CPU 0).
 * Return: 0 or -UMSI_EINVAL.
 */
int umsi_sim_set_current_cpu(struct umsi_sim *sim, uint32_t cpu);

/** umsi_sim_current_cpu - what the host current_cpu() would return, uncounted. */
uint32_t umsi_sim_current_cpu(struct umsi_sim *sim);

/** umsi_sim_ncpus - the number of CPUs. */
uint32_t umsi_sim_ncpus(struct umsi_sim *sim);

/**
 * umsi_sim_cpu_set_online - take a CPU offline or bring it back
 *
 * An offline CPU accepts no interrupts (messages to it are undeliverable,
 * reason OFFLINE) and refuses cross-calls. Its IRR is kept. The library is
 * not told; the test calls umsi_cpu_offline()/online() itself.
 * Return: 0 or -UMSI_EINVAL.
 */
int umsi_sim_cpu_set_online(struct umsi_sim *sim, uint32_t cpu, bool online);

/**
 * umsi_sim_cpu_irq_disable - disable interrupts on @cpu (like cli)
 * umsi_sim_cpu_irq_enable - undo one disable (like sti), then deliver
 *
 * Disables nest with lock_acquire and handlers: a CPU takes interrupts only
 * when every disable has been undone. Return: 0 or -UMSI_EINVAL (bad CPU,
 * or enable without disable).
 */
int umsi_sim_cpu_irq_disable(struct umsi_sim *sim, uint32_t cpu);
int umsi_sim_cpu_irq_enable(struct umsi_sim *sim, uint32_t cpu);

/**
 * umsi_sim_set_dispatch_through_locks - non-threaded mode: let CPUs take
 * interrupts while another CPU holds a uMSI lock
 *
 * Off by default: an interrupt waits until no CPU holds a lock (what a
 * handler spinning on that lock would see). On: a CPU whose interrupts are
 * enabled takes it at once, even in the middle of another CPU's locked
 * section, which explores more interleavings of lock-free dispatch paths;
 * a handler that then acquires a lock another CPU holds cannot be run on
 * one thread, and the process aborts with a message saying so. The
 * environment variable UMSI_SIM_DISPATCH_THROUGH_LOCKS (any value) turns
 * it on for every machine at creation, so a whole test suite can be run
 * both ways.
 */
void umsi_sim_set_dispatch_through_locks(struct umsi_sim *sim, bool on);

/** umsi_sim_cpu_irq_enabled - whether @cpu would take an interrupt now. */
bool umsi_sim_cpu_irq_enabled(struct umsi_sim *sim, uint32_t cpu);

/** umsi_sim_irr_test - is @vector set in @cpu's Interrupt Request Register? */
bool umsi_sim_irr_test(struct umsi_sim *sim, uint32_t cpu, uint8_t vector);

/**
 * umsi_sim_id_pending - is identity @id pending on @cpu (x86: its IRR bit;
 * IMSIC: its eip bit), uncounted
 */
bool umsi_sim_id_pending(struct umsi_sim *sim, uint32_t cpu, uint32_t id);

/**
 * umsi_sim_imsic_file_addr - the physical address of CPU @cpu's S-level
 * interrupt file (what struct umsi_imsic_config.file_addr lists); 0 when
 * the machine has no IMSIC or @cpu is out of range
 */
uint64_t umsi_sim_imsic_file_addr(struct umsi_sim *sim, uint32_t cpu);

/**
 * umsi_sim_imsic_reg - read indirect register @reg (siselect number,
 * as the hart reads it through sireg) of @cpu's file, uncounted;
 * umsi_sim_imsic_reg_write - write it. An IMSIC machine only. Return (write): 0 or
 * -UMSI_EINVAL (no IMSIC, bad CPU, a register that does not exist).
 */
uint64_t umsi_sim_imsic_reg(struct umsi_sim *sim, uint32_t cpu, uint32_t reg);
int umsi_sim_imsic_reg_write(struct umsi_sim *sim, uint32_t cpu, uint32_t reg,
			     uint64_t val);

/**
 * umsi_sim_imsic_topei - what @cpu's stopei reads now: identity << 16 |
 * identity of the interrupt it would take (whether or not it takes
 * interrupts now), 0 when none. Claims nothing.
 */
uint32_t umsi_sim_imsic_topei(struct umsi_sim *sim, uint32_t cpu);

/** umsi_sim_isr_test - is @vector set in @cpu's In-Service Register? */
bool umsi_sim_isr_test(struct umsi_sim *sim, uint32_t cpu, uint8_t vector);

/**
 * umsi_sim_eoi - end of interrupt on the current CPU, uncounted
 * @vector: the vector the caller believes it is ending
 *
 * Clears the highest ISR bit as the local APIC does (counted as
 * eoi_mismatch when that is not @vector, eoi_spurious when the ISR is
 * empty) and, for a level-triggered vector, sends the EOI to the IO-APIC.
 * On an AMD-Vi machine it then does the kernel's part too: IO-APIC inputs
 * whose gsi_program message said they go to this CPU and @vector are
 * ended at the EOI register (umsi/ctl.h, UMSI_AMDVI_WIRED_*). This is
 * what the host eoi operation does, minus the host-call accounting; test
 * dispatch functions use it.
 */
void umsi_sim_eoi(struct umsi_sim *sim, uint8_t vector);

/**
 * umsi_sim_quiesce - wait until no CPU has an interrupt it could take
 *
 * Non-threaded mode: dispatches what is deliverable (normally nothing is
 * left). Threaded mode: waits until every CPU thread is idle with nothing
 * deliverable and no cross-call queued.
 */
void umsi_sim_quiesce(struct umsi_sim *sim);

/* ---- Messages and delivery ----------------------------------------------- */

/* Why a memory write did not become an interrupt. */
enum umsi_sim_undeliv {
	UMSI_SIM_UNDELIV_STRAY = 0, /* not in the 0xfeexxxxx window: stray DMA */
	UMSI_SIM_UNDELIV_VECTOR,    /* vector 0-15 (illegal vector) */
	UMSI_SIM_UNDELIV_NO_CPU,    /* no CPU has the destination */
	UMSI_SIM_UNDELIV_OFFLINE,   /* every matching CPU is offline */
	UMSI_SIM_UNDELIV_MODE,      /* delivery mode other than fixed/lowest */
	UMSI_SIM_UNDELIV_REMAP,     /* remappable format without remapping, or
				     * a handle with no remapping entry */
	UMSI_SIM_UNDELIV_ITS,       /* a GITS_TRANSLATER write the ITS could
				     * not translate (no requester, ITS off,
				     * device, event or collection unmapped) */
	UMSI_SIM_UNDELIV_IR,        /* the VT-d unit refused it: a remapping
				     * fault (recorded in its fault registers)
				     * or a blocked compatibility format */
	UMSI_SIM_UNDELIV_NR
};

/**
 * umsi_sim_msg_write - a bus-master memory write of @data at @address
 *
 * What a device does to send a message (no Bus Master Enable check: use a
 * device and umsi_sim_fire() for that). Writes to 0xfeexxxxx are decoded
 * with umsi_x86_msg_decode() and delivered:
 *  - remappable format (bit 4; with UMSI_PLAT_IRQ_REMAP): entry = handle +
 *    subhandle when SHV is set, else handle; physical delivery to the
 *    entry's APIC ID and vector;
 *  - physical mode: the CPU with that APIC ID; 0xff (xAPIC) or 0xffffffff
 *    (UMSI_PLAT_X2APIC) is a broadcast to every online CPU;
 *  - logical mode: flat model, CPU n < 8 has logical ID 1 << n, every
 *    matching online CPU is a target (lowest-priority delivery: the lowest
 *    numbered one). x2APIC cluster mode is not modelled;
 *  - delivery modes fixed and lowest-priority only; messages are edge.
 * A vector already set in the target's IRR coalesces (counted).
 * Return: the number of CPUs that accepted the vector, 0 when undeliverable.
 */
int umsi_sim_msg_write(struct umsi_sim *sim, uint64_t address, uint32_t data);

/**
 * umsi_sim_msg_write_from - umsi_sim_msg_write() by requester @rid (a
 * BDF; UMSI_SIM_NO_REQUESTER for none), as an ITS sees the DeviceID.
 * umsi_sim_msg_write() has no requester; devices' messages (umsi_sim_fire)
 * carry their BDF.
 */
#define UMSI_SIM_NO_REQUESTER 0xffffffffu
int umsi_sim_msg_write_from(struct umsi_sim *sim, uint32_t rid,
			    uint64_t address, uint32_t data);

/**
 * struct umsi_sim_its_stats - what the ITS model did (an ITS machine)
 * @cmds: commands run, by command number (6.3: MAPD 0x08, MAPTI 0x0a ...)
 * @cmd_errors: commands that stalled the queue
 * @translated: GITS_TRANSLATER writes that made an LPI pending (or found
 *              it pending)
 * @devices: devices mapped now (valid device table entries)
 * @rd_lpis_enabled: redistributors whose GICR_CTLR.EnableLPIs is set now
 *                   (software-managed: see UMSI_SIM_CTL_ITS)
 * @lpis_held_disabled: LPIs that arrived at a software-managed
 *                      redistributor while their property byte had the
 *                      enable bit clear (kept pending, not taken)
 */
struct umsi_sim_its_stats {
	uint64_t cmds[32];
	uint64_t cmd_errors;
	uint64_t translated;
	uint32_t devices;
	uint32_t rd_lpis_enabled;
	uint64_t lpis_held_disabled;
};

/** umsi_sim_its_stats - copy the ITS counters. Return: 0 or -UMSI_EINVAL. */
int umsi_sim_its_stats(struct umsi_sim *sim, struct umsi_sim_its_stats *out);

/**
 * umsi_sim_its_silent - an ITS that stops answering: while @silent, it
 * reads no command (GITS_CREADR stays where it is, without the Stalled
 * bit) whatever GITS_CWRITER says; translation of messages goes on with
 * the tables as they are. Back to false: what was queued runs at once.
 * Return: 0 or -UMSI_EINVAL (no ITS).
 */
int umsi_sim_its_silent(struct umsi_sim *sim, bool silent);

/**
 * umsi_sim_its_translate - where (@devid, @event) goes now, through the
 * tables in memory, without sending anything: the CPU and the LPI INTID.
 * Return: 0, -UMSI_ENOENT (not mapped), -UMSI_EINVAL (no ITS).
 */
int umsi_sim_its_translate(struct umsi_sim *sim, uint32_t devid,
			   uint32_t event, uint32_t *cpu, uint32_t *intid);

/**
 * umsi_sim_gicr_addr - the physical address of CPU @cpu's redistributor
 * (its RD_base frame: UMSI_SIM_GICR_BASE + @cpu * UMSI_SIM_GICR_STRIDE);
 * 0 when the machine has no ITS or @cpu is out of range
 */
uint64_t umsi_sim_gicr_addr(struct umsi_sim *sim, uint32_t cpu);

/* ---- The VT-d interrupt-remapping unit (config.vtd) ------------------------ */

/*
 * An x86 machine with config.vtd has one Intel VT-d remapping unit (VT-d
 * specification rev. 3, chapters 5, 6.5, 7, 9.10, 11; QEMU 7.2's
 * intel-iommu register layout) covering every function and the IO-APIC,
 * interrupt remapping only (no DMA translation); with config.vtd_units,
 * several, each as described here for the requesters it remaps, with its
 * own registers, entry cache and faults. Its 4 KiB of registers
 * at UMSI_SIM_VTD_BASE are reached by 32-bit MMIO (mmio_map, or
 * umsi_sim_mmio_read32/write32), 64-bit registers as two halves, low
 * first; offsets not listed read 0 and ignore writes:
 *  - VER 0x00: 0x10 (1.0). CAP 0x08: NFR - 1 in bits 47:40 and FRO in
 *    bits 33:24 (UMSI_SIM_VTD_NFR fault recording registers at
 *    UMSI_SIM_VTD_FRCD). ECAP 0x10: QI (bit 1), IR (bit 3), EIM (bit 4)
 *    with config.vtd_eim.
 *  - GCMD 0x18 (write only; software writes the whole command, GSTS's
 *    persistent bits with the one it changes) and GSTS 0x1c, acted on at
 *    once: QIE (26; enabling latches IQA, disabling resets IQH), IRE (25),
 *    SIRTP (24: IRTA latched, IRTPS set), CFI (23). Only those four.
 *  - FSTS 0x34: PFO (0, RW1C), PPF (1, some FRCD has F), IQE (4, RW1C;
 *    clearing it resumes the queue at IQH), FRI (15:8).
 *  - IQH 0x80 (read only), IQT 0x88 (bits 18:4), IQA 0x90 (base 63:12,
 *    QS 2:0: 2^QS pages of 128-bit descriptors), ICS 0x9c (IWC bit 0,
 *    RW1C), IRTA 0xb8 (base 63:12, EIME 11 (kept 0 without EIM), S 3:0:
 *    2^(S+1) entries).
 *  - FRCD n at UMSI_SIM_VTD_FRCD + 16 n: low 64 bits FI (an interrupt
 *    fault: the interrupt index in 63:48), high 64 bits SID (15:0), FR
 *    (39:32), F (63, write 1 to clear).
 *
 * Queued invalidation: while QIES and not silent, an IQT write runs the
 * descriptors from IQH to IQT out of the queue in phys_alloc memory:
 * interrupt entry cache invalidation (type 4: G bit 4 clear global, set
 * index-selective with IIDX 47:32 and IM 31:27, 2^IM entries) and
 * invalidation wait (type 5: SW bit 5 writes the status data, bits 63:32,
 * to the dword at the high quadword's bits 63:2; IF bit 4 sets ICS.IWC;
 * FN and PD accepted). Any other type, a reserved bit set, a descriptor or
 * status address outside phys_alloc memory, or IQT beyond the queue sets
 * FSTS.IQE and stops with IQH at the bad descriptor.
 *
 * Remapping: while IRES, every message the machine delivers to the
 * 0xfeexxxxx window (devices' MSI and MSI-X, umsi_sim_msg_write(_from),
 * IO-APIC inputs, requester vtd_ioapic_sid or their IO-APIC's source_id
 * with config.ioapics) goes through the unit (VT-d
 * 5.1.4):
 *  - remappable format (address bit 4): index = handle (address 19:5,
 *    bit 2 as bit 15), plus data 15:0 when SHV (bit 3). Beyond the table
 *    (2^(S+1) entries): fault 0x21. The entry comes from the interrupt
 *    entry cache, else from the table in memory (not memory: 0x23), and a
 *    present entry is cached until an invalidation covers it: an entry
 *    changed in memory without one is not seen. Not present: 0x22.
 *    Reserved bits (low 14:12, 15 (IM: no posted interrupts), 31:24 and,
 *    without EIME, destination bits other than 47:40; high 63:20; SVT 3):
 *    0x24. Source-ID validation: SVT 1 compares the requester with SID
 *    under SQ (0: all 16 bits, 1..3: function bits 2, 2:1, 2:0 ignored),
 *    SVT 2 wants the requester's bus within SID 15:8 .. SID 7:0; a
 *    mismatch (or no requester) is 0x26. Then the entry's vector goes to
 *    its destination (EIME: bits 63:32, else 47:40; DM logical as the
 *    flat model), edge or level as its TM says;
 *  - compatibility format: blocked (fault 0x25) when EIME or when CFIS is
 *    clear (VT-d 5.1.4: CFI set means pass-through), else delivered as
 *    without the unit.
 * A faulting message reaches no CPU (undeliverable, UMSI_SIM_UNDELIV_IR)
 * and is recorded in FRCD[FRI] (F, SID = requester, FR, the index), FRI
 * moving on and FSTS.PPF set; if that FRCD is still full, or PFO is set,
 * FSTS.PFO is set and the fault is not recorded there (it is in
 * umsi_sim_vtd_fault() anyway). While IRES is clear the machine behaves as
 * without the unit.
 *
 * IO-APIC: with a unit, gsi_program takes a remappable-format message
 * (the library's x86-vtd back end composes one): the redirection entry is
 * remappable (struct umsi_sim_rte.remappable, .handle) and the input
 * sends that handle (SHV clear) through the unit. Its vector for the
 * EOI's Remote IRR match is the one the last message went to.
 */
#define UMSI_SIM_VTD_BASE 0xfed90000ull
/* The most VT-d units a machine has (config.vtd_units). */
#define UMSI_SIM_VTD_MAX_UNITS 16u

/*
 * The AMD-Vi unit (config.amdvi; platform/sim/sim_amdvi.c), after the AMD
 * I/O Virtualization Technology specification with QEMU 7.2 amd-iommu's
 * register layout, interrupt remapping only: the device table base
 * (0x0000: base | pages - 1), the command buffer base (0x0008: base |
 * ComLen << 56), control (0x0018: IOMMUEn bit 0, CmdBufEn bit 12), the
 * extended features (0x0030), command head/tail (0x2000/0x2008, byte
 * offsets) and status (0x2020), reached by 32-bit MMIO. Commands run when
 * the tail is written: COMPLETION_WAIT (its store), INVALIDATE_DEVTAB_ENTRY
 * and INVALIDATE_INTERRUPT_TABLE (which drop what the unit cached: it
 * keeps the DTE and the entries it used until told); any other stops the
 * buffer (status bit 0). A message from requester R while the unit is on:
 * R's DTE (IO-APIC messages: config.vtd_ioapic_sid, or their IO-APIC's
 * source_id), IV clear or IntCtl
 * pass: delivered as it is; IntCtl abort: undeliverable (remap); remapped:
 * the address must be 0xFEE00000 and data bits 10:8 fixed or arbitrated,
 * the entry data & 0x7ff within the table (IntTabLen), RemapEn set, the
 * 32-bit entry's vector to its 8-bit APIC ID. umsi_sim_amdvi_stats() says
 * what it did.
 */
#define UMSI_SIM_AMDVI_BASE 0xfed80000ull
/* The most AMD-Vi units a machine has (config.amdvi_units). */
#define UMSI_SIM_AMDVI_MAX_UNITS 16u

/**
 * struct umsi_sim_amdvi_stats - what the AMD-Vi unit did
 * @remapped: messages delivered through an entry
 * @aborted: messages refused (IntCtl abort, a bad address or data, an
 *           entry beyond the table or not enabled)
 * @inv_devtab, @inv_table: invalidation commands run
 * @waits: COMPLETION_WAITs run
 * @stale: messages that used a cached entry software had changed and not
 *         invalidated
 */
struct umsi_sim_amdvi_stats {
	uint64_t remapped, aborted, inv_devtab, inv_table, waits, stale;
};

/* What the AMD-Vi unit did; -EINVAL without one. */
int umsi_sim_amdvi_stats(struct umsi_sim *sim,
			 struct umsi_sim_amdvi_stats *out);

/*
 * Test aid: the unit stops running commands while @silent (nothing is
 * done, no COMPLETION_WAIT stores). 0, or -EINVAL without a unit.
 */
int umsi_sim_amdvi_silent(struct umsi_sim *sim, bool silent);

/**
 * umsi_sim_amdvi_unit_stats - umsi_sim_amdvi_stats() of unit @unit of
 * config.amdvi_units (unit 0 is what umsi_sim_amdvi_stats() reads)
 * Return: 0 or -UMSI_EINVAL (no such unit).
 */
int umsi_sim_amdvi_unit_stats(struct umsi_sim *sim, uint32_t unit,
			      struct umsi_sim_amdvi_stats *out);

/**
 * umsi_sim_amdvi_unit_silent - umsi_sim_amdvi_silent() of unit @unit
 * alone
 * Return: 0 or -UMSI_EINVAL (no such unit).
 */
int umsi_sim_amdvi_unit_silent(struct umsi_sim *sim, uint32_t unit,
			       bool silent);
/* Fault recording registers: how many, where (offset). */
#define UMSI_SIM_VTD_NFR 4
#define UMSI_SIM_VTD_FRCD 0x400u
/* QEMU q35's IO-APIC requester ID (bus 0xff, devfn 0). */
#define UMSI_SIM_VTD_IOAPIC_SID 0xff00u

/* VT-d interrupt remapping fault reasons (7.1.3 table 24). */
#define UMSI_SIM_VTD_FR_INDEX      0x21  /* index beyond the table */
#define UMSI_SIM_VTD_FR_NOT_PRESENT 0x22 /* entry's present bit clear */
#define UMSI_SIM_VTD_FR_TABLE      0x23  /* entry not in memory */
#define UMSI_SIM_VTD_FR_RESERVED   0x24  /* entry has reserved bits set */
#define UMSI_SIM_VTD_FR_COMPAT     0x25  /* compatibility format blocked */
#define UMSI_SIM_VTD_FR_SID        0x26  /* source-ID validation failed */

/**
 * struct umsi_sim_vtd_stats - what the VT-d unit did
 * @iec_global, @iec_index: interrupt entry cache invalidations run
 *     (index-selective ones count once per descriptor)
 * @waits: invalidation wait descriptors run
 * @remapped: messages that passed their table entry and were sent to its
 *     destination (an offline CPU there still makes them undeliverable)
 * @faults: remapping faults (every reason, 0x25 too)
 * @blocked_compat: of those, compatibility-format messages blocked
 * @cache_fills: entries read from memory into the entry cache
 */
struct umsi_sim_vtd_stats {
	uint64_t iec_global, iec_index, waits, remapped, faults;
	uint64_t blocked_compat, cache_fills;
};

/** umsi_sim_vtd_stats - copy the unit's counters. Return: 0 or -UMSI_EINVAL (no unit). */
int umsi_sim_vtd_stats(struct umsi_sim *sim, struct umsi_sim_vtd_stats *out);

/**
 * umsi_sim_vtd_silent - a unit that stops answering: while @silent, IQT
 * writes run no descriptor (IQH stays); remapping goes on. Back to false:
 * what was queued runs at once.
 * Return: 0 or -UMSI_EINVAL (no unit).
 */
int umsi_sim_vtd_silent(struct umsi_sim *sim, bool silent);

/**
 * umsi_sim_vtd_irte - entry @index of the table the unit uses (latched by
 * SIRTP), read from memory now (not from the entry cache): @out[0] the
 * low 64 bits, @out[1] the high 64 bits.
 * Return: 0, -UMSI_EINVAL (no unit), -UMSI_ENOENT (no table latched,
 * @index beyond it, or the entry not in phys_alloc memory).
 */
int umsi_sim_vtd_irte(struct umsi_sim *sim, uint32_t index, uint64_t out[2]);

/**
 * umsi_sim_vtd_fault - the @n-th remapping fault since creation (0 the
 * first), whether or not it fitted in a fault recording register and
 * whether or not software cleared it: the requester (@sid;
 * UMSI_SIM_NO_REQUESTER when the message had none), the interrupt index
 * (@index, 0 for a compatibility-format message) and the reason (@reason,
 * UMSI_SIM_VTD_FR_*). Any output may be NULL.
 * Return: 0, -UMSI_EINVAL (no unit), -UMSI_ENOENT (fewer faults).
 */
int umsi_sim_vtd_fault(struct umsi_sim *sim, uint32_t n, uint32_t *sid,
		       uint32_t *index, uint32_t *reason);

/**
 * umsi_sim_vtd_unit_stats - umsi_sim_vtd_stats() of unit @unit of
 * config.vtd_units (its index there; unit 0 is what umsi_sim_vtd_stats()
 * reads)
 * Return: 0 or -UMSI_EINVAL (no such unit).
 */
int umsi_sim_vtd_unit_stats(struct umsi_sim *sim, uint32_t unit,
			    struct umsi_sim_vtd_stats *out);

/**
 * umsi_sim_vtd_unit_silent - umsi_sim_vtd_silent() of unit @unit alone
 * Return: 0 or -UMSI_EINVAL (no such unit).
 */
int umsi_sim_vtd_unit_silent(struct umsi_sim *sim, uint32_t unit,
			     bool silent);

/**
 * umsi_sim_vtd_unit_irte - umsi_sim_vtd_irte() of unit @unit's table
 * Return: 0, -UMSI_EINVAL (no such unit) or -UMSI_ENOENT as there.
 */
int umsi_sim_vtd_unit_irte(struct umsi_sim *sim, uint32_t unit,
			   uint32_t index, uint64_t out[2]);

/**
 * umsi_sim_vtd_unit_fault - umsi_sim_vtd_fault() of the faults unit
 * @unit recorded
 * Return: 0, -UMSI_EINVAL (no such unit) or -UMSI_ENOENT as there.
 */
int umsi_sim_vtd_unit_fault(struct umsi_sim *sim, uint32_t unit, uint32_t n,
			    uint32_t *sid, uint32_t *index, uint32_t *reason);

/**
 * umsi_sim_retrigger - send a fixed IPI of @vector to @cpu, uncounted
 * (what the host retrigger operation does). Return: 0 or -UMSI_EINVAL.
 * umsi_sim_raise - the same for any controller: make identity @id
 * pending on @cpu once (IMSIC: set its eip bit, online or not).
 */
int umsi_sim_retrigger(struct umsi_sim *sim, uint32_t cpu, uint8_t vector);
int umsi_sim_raise(struct umsi_sim *sim, uint32_t cpu, uint32_t id);

/* ---- Statistics ---------------------------------------------------------- */

/* Host operations, for the access hook and per-operation counters. */
enum umsi_sim_op {
	UMSI_SIM_OP_CFG_READ = 0,
	UMSI_SIM_OP_CFG_WRITE,
	UMSI_SIM_OP_MMIO_MAP,
	UMSI_SIM_OP_MMIO_UNMAP,
	UMSI_SIM_OP_MMIO_READ32,
	UMSI_SIM_OP_MMIO_WRITE32,
	UMSI_SIM_OP_LOCK_CREATE,
	UMSI_SIM_OP_LOCK_DESTROY,
	UMSI_SIM_OP_LOCK_ACQUIRE,
	UMSI_SIM_OP_LOCK_RELEASE,
	UMSI_SIM_OP_ALLOC,
	UMSI_SIM_OP_FREE,
	UMSI_SIM_OP_LOG,
	UMSI_SIM_OP_CLOCK_NS,
	UMSI_SIM_OP_CURRENT_CPU,
	UMSI_SIM_OP_CPU_COUNT,
	UMSI_SIM_OP_CPU_HWID,
	UMSI_SIM_OP_CPU_IS_ONLINE,
	UMSI_SIM_OP_PLATFORM_FLAGS,
	UMSI_SIM_OP_RUN_ON_CPU,
	UMSI_SIM_OP_EOI,
	UMSI_SIM_OP_IRQ_PENDING,
	UMSI_SIM_OP_SEND_IPI,
	UMSI_SIM_OP_INTX_ROUTE,
	UMSI_SIM_OP_GSI_PROGRAM,
	UMSI_SIM_OP_REMAP_COMPOSE,
	UMSI_SIM_OP_REMAP_FREE,
	UMSI_SIM_OP_PHYS_ALLOC,
	UMSI_SIM_OP_PHYS_FREE,
	UMSI_SIM_OP_SLEEP_US,
	UMSI_SIM_OP_NR
};

/** umsi_sim_op_name - "cfg_read", "mmio_write32", ...; "?" when unknown. */
const char *umsi_sim_op_name(enum umsi_sim_op op);

/**
 * struct umsi_sim_stats - machine-wide counters (umsi_sim_stats_reset
 * zeroes them)
 * @host_calls: every host operation the library called
 * @fallible_calls: those that take part in failure numbering (see
 *                  umsi_sim_fail_at)
 * @op_calls: host calls per enum umsi_sim_op
 * @cfg_reads, @cfg_writes, @mmio_reads, @mmio_writes: host accesses, all
 *     functions (also absent ones)
 * @failures_injected: host calls failed by umsi_sim_fail_at
 * @msgs: message writes sent by devices (and umsi_sim_msg_write)
 * @bme_blocked: messages a device could not send: Bus Master Enable clear
 * @delivered: vectors accepted into an IRR (a broadcast counts per CPU)
 * @irr_coalesced: arrivals of a vector already set in the IRR
 * @dispatched: interrupts a CPU took (IRR -> ISR, dispatch called)
 * @unassigned: dispatches that returned 0 (vector the library never set)
 * @undeliverable: messages that reached no CPU; @undeliverable_by splits
 *                 them by enum umsi_sim_undeliv
 * @stray_dma: equals undeliverable_by[UMSI_SIM_UNDELIV_STRAY]
 * @eois: EOIs (host and umsi_sim_eoi); @eoi_spurious: with an empty ISR;
 *        @eoi_mismatch: the vector named was not the highest in service;
 *        @eoi_missing: handler returned with its vector still in service
 * @ioapic_eoi_writes: EOIs the host wrote to the IO-APIC's EOI register
 *        (AMD-Vi level inputs, which the local APIC's EOI does not reach)
 * @aplic_retriggers: level sources the host made pending again after a
 *        dispatch because their input was still asserted (APLIC in MSI
 *        mode, setipnum_le, as the RISC-V reference kernel does)
 * @bad_accesses: misuse the hardware would not forgive: misaligned or
 *        out-of-range config access, MMIO outside any mapping or
 *        misaligned, unmap of an unknown mapping, free of an unknown
 *        pointer or with the wrong size (each is also logged)
 * @lock_errors: release of a lock not held, destroy of a held lock, or a
 *	host operation umsi/host.h says is never called under a uMSI lock
 *	called with one held (non-threaded mode; logged with its name)
 * @last_undeliverable: the last undeliverable message, for diagnostics
 */
struct umsi_sim_stats {
	uint64_t host_calls;
	uint64_t fallible_calls;
	uint64_t op_calls[UMSI_SIM_OP_NR];
	uint64_t cfg_reads, cfg_writes, mmio_reads, mmio_writes;
	uint64_t failures_injected;
	uint64_t msgs;
	uint64_t bme_blocked;
	uint64_t delivered;
	uint64_t irr_coalesced;
	uint64_t dispatched;
	uint64_t unassigned;
	uint64_t undeliverable;
	uint64_t undeliverable_by[UMSI_SIM_UNDELIV_NR];
	uint64_t stray_dma;
	uint64_t eois, eoi_spurious, eoi_mismatch, eoi_missing;
	uint64_t ioapic_eoi_writes;
	uint64_t aplic_retriggers;
	uint64_t bad_accesses;
	uint64_t lock_errors;
	uint64_t slept_us;	/* sleep_us() asked for, in all */
	struct {
		bool valid;
		uint64_t address;
		uint32_t data;
		enum umsi_sim_undeliv reason;
	} last_undeliverable;
};

/** umsi_sim_stats - copy the machine-wide counters into *@out. */
void umsi_sim_stats(struct umsi_sim *sim, struct umsi_sim_stats *out);

/**
 * umsi_sim_stats_reset - zero every counter: machine-wide, per device, per
 * CPU and vector. Leak accounting and the virtual clock are not touched.
 */
void umsi_sim_stats_reset(struct umsi_sim *sim);

/** umsi_sim_host_calls - host calls since creation or the last reset. */
uint64_t umsi_sim_host_calls(struct umsi_sim *sim);

/**
 * struct umsi_sim_vec_stats - what one CPU saw of one vector
 * @delivered: accepted into the IRR
 * @coalesced: arrived while already set in the IRR
 * @dispatched: taken (dispatch called)
 * @unassigned: dispatch returned 0
 */
struct umsi_sim_vec_stats {
	uint64_t delivered, coalesced, dispatched, unassigned;
};

/** umsi_sim_vec_stats - counters of (@cpu, @vector). Return: 0 or -UMSI_EINVAL. */
int umsi_sim_vec_stats(struct umsi_sim *sim, uint32_t cpu, uint8_t vector,
		       struct umsi_sim_vec_stats *out);

/**
 * umsi_sim_id_stats - counters of (@cpu, @id) for any identity of the
 * machine's controller (an IMSIC file's go up to num-ids).
 * Return: 0 or -UMSI_EINVAL.
 */
int umsi_sim_id_stats(struct umsi_sim *sim, uint32_t cpu, uint32_t id,
		      struct umsi_sim_vec_stats *out);

/**
 * struct umsi_sim_leaks - what the library holds right now
 * @allocs, @alloc_bytes: outstanding alloc() blocks and their bytes
 * @maps: outstanding mmio_map() mappings
 * @locks: locks created and not destroyed; @locks_held: of those, held
 * @phys_allocs, @phys_bytes: outstanding phys_alloc() blocks and bytes
 * @locks_created, @locks_destroyed, @total_allocs: since creation
 */
struct umsi_sim_leaks {
	uint64_t allocs, alloc_bytes;
	uint64_t phys_allocs, phys_bytes;
	uint64_t maps;
	uint64_t locks, locks_held;
	uint64_t locks_created, locks_destroyed;
	uint64_t total_allocs;
};

/** umsi_sim_leaks - snapshot of leak accounting. */
void umsi_sim_leaks(struct umsi_sim *sim, struct umsi_sim_leaks *out);

/**
 * umsi_sim_leaks_equal - true when the outstanding allocations, bytes,
 * mappings, locks and held locks of @a and @b are equal (a failed call left
 * nothing behind relative to a snapshot taken before it).
 */
bool umsi_sim_leaks_equal(const struct umsi_sim_leaks *a,
			  const struct umsi_sim_leaks *b);

/* ---- Failure injection, access hook, clock, log ---------------------------- */

/**
 * umsi_sim_fail_at - make the @k-th fallible host call from now fail
 * @k: 1 for the next fallible call; 0 cancels a pending injection
 * @err: the error, e.g. -UMSI_EIO (a positive value is negated)
 *
 * Fallible calls are those that can report failure: cfg_read (returns @err
 * and reads all-ones), cfg_write (returns @err, nothing written), mmio_map,
 * cpu_apic_id, run_on_cpu (@fn not run), retrigger, intx_route,
 * gsi_program, remap_compose (return @err), alloc, phys_alloc and
 * lock_create (return NULL). Every other operation (void ones, value getters, mmio_read32,
 * lock_acquire, vector_pending) is not numbered and never fails. A test
 * runs an operation once, reads stats.fallible_calls to learn N, then
 * fails each of the N calls in turn.
 */
void umsi_sim_fail_at(struct umsi_sim *sim, uint64_t k, int err);

/**
 * umsi_sim_set_hook - call @fn(@arg, op) after every host call
 *
 * The hook runs after the operation took effect and after any interrupt it
 * made deliverable was dispatched, with no sim lock held, so it may fire
 * devices (umsi_sim_fire) to inject an interrupt at every step of a
 * protocol. It is not re-entered: host calls made while it runs do not
 * call it again. It is not called for host calls made by the dispatch
 * function (interrupt context): a hook that fires a device after every
 * call would otherwise fire again at each handler's EOI, an endless storm
 * in which the interrupted code never runs. In threaded mode it is called
 * from every thread that makes host calls (cross-call functions included).
 * NULL removes it.
 */
void umsi_sim_set_hook(struct umsi_sim *sim,
		       void (*fn)(void *arg, enum umsi_sim_op op), void *arg);

/**
 * umsi_sim_clock_advance - move the virtual clock forward by @ns
 * umsi_sim_clock_now - read it (uncounted)
 * umsi_sim_clock_set_tick - also advance it by @ns after every clock_ns()
 *     host call (0, the default: time moves only when the test says;
 *     a library loop that waits for a time-out needs a tick)
 */
void umsi_sim_clock_advance(struct umsi_sim *sim, uint64_t ns);
uint64_t umsi_sim_clock_now(struct umsi_sim *sim);
void umsi_sim_clock_set_tick(struct umsi_sim *sim, uint64_t ns);

/**
 * umsi_sim_log_text - everything logged so far, one "L: message" line each
 * (L = E, W, I, D; the sim's own complaints start with "sim: "). The
 * string stays valid until the next sim call. Messages are also printed on
 * stderr when the environment variable UMSI_SIM_VERBOSE is set.
 */
const char *umsi_sim_log_text(struct umsi_sim *sim);

/** umsi_sim_log_clear - empty the log buffer. */
void umsi_sim_log_clear(struct umsi_sim *sim);

/**
 * umsi_sim_dump - print the machine's state to @out: CPUs with their IRR
 * and ISR, functions with Command/Status and MSI/MSI-X state (entries
 * unmasked "u" or pending "p"), programmed IO-APIC inputs, the main
 * counters and leak accounting. For debugging; the format may change.
 */
void umsi_sim_dump(struct umsi_sim *sim, FILE *out);

/* ---- PCI functions --------------------------------------------------------- */

/**
 * struct umsi_sim_bar_desc - one Base Address Register
 * @size: 0 for no BAR; else a power of two, at least 16 (memory) or 4
 *        (I/O), at most 2 GiB for a 32-bit BAR
 * @is64: 64-bit memory BAR (uses this slot and the next, which must have
 *        size 0)
 * @io: I/O space BAR
 * @prefetch: prefetchable memory
 * @unassigned: leave the address 0, as firmware that did not assign it; the
 *              BAR then decodes nothing until software writes an address
 *
 * Assigned like firmware: 32-bit memory from 0xe0000000 up, 64-bit memory
 * from 0x8_0000_0000 up, I/O from 0xc000 up, each naturally aligned.
 */
struct umsi_sim_bar_desc {
	uint64_t size;
	bool is64;
	bool io;
	bool prefetch;
	bool unassigned;
};

/**
 * struct umsi_sim_msi_desc - MSI capability (PCI 3.0, 6.8.1)
 * @present: the function has it
 * @nvec: Multiple Message Capable: 1, 2, 4, 8, 16 or 32
 * @is64: 64-bit address capable
 * @maskbit: per-vector masking capable (mask and pending registers)
 * @offset: config offset, 0x40-0xe8 and dword aligned; 0: the sim chooses
 */
struct umsi_sim_msi_desc {
	bool present;
	uint8_t nvec;
	bool is64;
	bool maskbit;
	uint16_t offset;
};

/**
 * struct umsi_sim_msix_desc - MSI-X capability (PCI 3.0, 6.8.2)
 * @present: the function has it
 * @nentries: table size, 1..2048
 * @table_bar, @table_offset: where the table lives (BAR index, 8-aligned
 *     offset); the table must fit in the BAR
 * @pba_bar, @pba_offset: where the Pending Bit Array lives; it may share a
 *     BAR with the table but must not overlap it
 * @offset: config offset of the capability; 0: the sim chooses
 */
struct umsi_sim_msix_desc {
	bool present;
	uint16_t nentries;
	uint8_t table_bar;
	uint32_t table_offset;
	uint8_t pba_bar;
	uint32_t pba_offset;
	uint16_t offset;
};

/**
 * struct umsi_sim_pcie_desc - PCI Express capability (version 2)
 * @present: the function has it (extended config space then reads 0 from
 *           0x100, an empty extended list)
 * @type: device/port type, UMSI_PCIE_TYPE_*
 * @offset: config offset; 0: the sim chooses
 * @flr: Function Level Reset capable (Device Capabilities bit 28); writing
 *       Initiate FLR to Device Control then resets the function as
 *       umsi_sim_reset_function(sim, bdf, false) does
 */
struct umsi_sim_pcie_desc {
	bool present;
	uint8_t type;
	uint16_t offset;
	bool flr;
};

/**
 * struct umsi_sim_sriov_desc - SR-IOV capability of a physical function
 * (PCIe SR-IOV 1.1), at extended offset 0x100 (needs @pcie.present)
 * @present: the function has it
 * @total_vfs: TotalVFs (and InitialVFs), 1..256
 * @first_offset, @stride: First VF Offset and VF Stride (any values: the
 *     library must refuse the hostile ones)
 * @vf_device: VF Device ID
 * @vf_bars: one VF's BARs (memory only; sizes per VF). The sim assigns
 *     each VF BAR room for @total_vfs VFs at add, as firmware would;
 *     @unassigned leaves the register 0
 * @vf_msix: each VF's MSI-X capability, its table and PBA in @vf_bars
 *
 * Setting VF Enable with NumVFs in 1..TotalVFs makes that many functions
 * appear at PF + First VF Offset + i * VF Stride (as this bus numbering
 * says; a VF whose address holds another function is not made). Each
 * reads 0xffff as Vendor and Device ID (SR-IOV 3.4.1.1), its BARs read 0
 * and its memory decodes while the PF's VF Memory Space Enable is set.
 * Clearing VF Enable takes them away (they read all-ones), as does a PF
 * reset.
 */
struct umsi_sim_sriov_desc {
	bool present;
	uint16_t total_vfs;
	uint16_t first_offset, stride;
	uint16_t vf_device;
	struct umsi_sim_bar_desc vf_bars[6];
	struct umsi_sim_msix_desc vf_msix;
};

/**
 * struct umsi_sim_dev_desc - a PCI function to build
 * @vendor, @device: IDs
 * @class_code: class << 16 | subclass << 8 | programming interface
 * @revision: revision ID
 * @header_type: 0 (endpoint) or 1 (PCI-to-PCI bridge: 2 BARs, bus numbers)
 * @multifunction: set the multi-function bit of Header Type
 * @secondary_bus, @subordinate_bus: bridge only
 * @bars: BARs (type 1: only 0 and 1)
 * @intx_pin: 0 (none) or 1..4 (INTA..INTD)
 * @command: Command bits set at reset besides Memory/I/O Space Enable,
 *     which are set when the function has an assigned BAR of that kind
 *     (firmware enables decoding); e.g. UMSI_PCI_CMD_MASTER for a device a
 *     driver already set up
 * @msi, @msix, @pcie: capabilities; the sim places them at 0x40 (PCIe),
 *     0x80 (MSI), 0xa0 (MSI-X) unless an offset is given, and links them in
 *     that order
 *
 * Reset state as the specification says: MSI and MSI-X disabled, MSI-X
 * entries masked with zero address/data, mask and pending bits clear. Use
 * umsi_sim_cfg_write() and umsi_sim_msix_entry_set() to start from what
 * firmware or a previous kernel left.
 */
struct umsi_sim_dev_desc {
	uint16_t vendor, device;
	uint32_t class_code;
	uint8_t revision;
	uint8_t header_type;
	bool multifunction;
	uint8_t secondary_bus, subordinate_bus;
	struct umsi_sim_bar_desc bars[6];
	uint8_t intx_pin;
	uint16_t command;
	struct umsi_sim_msi_desc msi;
	struct umsi_sim_msix_desc msix;
	struct umsi_sim_pcie_desc pcie;
	struct umsi_sim_sriov_desc sriov;
};

/**
 * umsi_sim_add_device - plug in a function at @bdf
 *
 * BARs are assigned at once. A @bdf whose previous function was
 * surprise-removed may be reused (hot add).
 * Return: 0; -UMSI_EEXIST when a function is present at @bdf;
 * -UMSI_EINVAL for an inconsistent description; -UMSI_ENOSPC when the BAR
 * window is exhausted; -UMSI_ENOMEM.
 */
int umsi_sim_add_device(struct umsi_sim *sim, umsi_bdf_t bdf,
			const struct umsi_sim_dev_desc *desc);

/**
 * umsi_sim_remove_device - surprise removal
 *
 * From now on config reads of @bdf and reads of its BARs return all-ones
 * and writes are dropped; it sends nothing and its INTx line drops. The
 * library's mappings of its BARs stay valid (reading all-ones).
 * Return: 0 or -UMSI_ENOENT.
 */
int umsi_sim_remove_device(struct umsi_sim *sim, umsi_bdf_t bdf);

/**
 * umsi_sim_reset_function - put @bdf in its reset state (FLR, or D3hot to
 * D0 without No_Soft_Reset): MSI and MSI-X disabled, mask and pending bits
 * clear, MSI-X entries masked with zero address and data, PBA clear,
 * Interrupt Status clear, Command 0, BARs 0.
 * @keep_bars: keep BARs, Command and Interrupt Line (as after the OS has
 *             restored the standard header), so only interrupt state is
 *             lost - what umsi_pci_restore_state() must rewrite
 * Counters are kept. Return: 0, -UMSI_ENODEV, -UMSI_ENOMEM.
 */
int umsi_sim_reset_function(struct umsi_sim *sim, umsi_bdf_t bdf,
			    bool keep_bars);

/**
 * umsi_sim_cfg_raw - the 4 KiB configuration bytes of @bdf, for direct
 * pokes (no counting, no read-only masks, no side effects). The device
 * model keeps reading its registers from these bytes (enable bits, masks,
 * address and data), but its layout (capability positions, table
 * location, BARs' sizes) is fixed at add time, so a poked Table Offset
 * changes what software reads, not where the table is.
 * Return: the bytes (valid until destroy), or NULL when no function was
 * ever added at @bdf.
 */
uint8_t *umsi_sim_cfg_raw(struct umsi_sim *sim, umsi_bdf_t bdf);

/**
 * umsi_sim_cfg_read - config read exactly as the host op does (all-ones
 * for an absent or removed function), but uncounted and never failing.
 * umsi_sim_cfg_write - config write with the hardware's read-only, RW1C
 * bits and side effects (an unmask delivers pending messages), uncounted.
 * Return (write): 0, -UMSI_EINVAL for a bad offset/width, -UMSI_ENODEV.
 */
uint32_t umsi_sim_cfg_read(struct umsi_sim *sim, umsi_bdf_t bdf,
			   uint16_t off, uint8_t width);
int umsi_sim_cfg_write(struct umsi_sim *sim, umsi_bdf_t bdf, uint16_t off,
		       uint8_t width, uint32_t val);

/**
 * umsi_sim_bar_addr - the address BAR @bar of @bdf decodes now (read from
 * its registers, upper half included for a 64-bit BAR); 0 when unassigned
 * or not implemented.
 */
uint64_t umsi_sim_bar_addr(struct umsi_sim *sim, umsi_bdf_t bdf,
			   unsigned int bar);

/**
 * umsi_sim_mmio_read32 / umsi_sim_mmio_write32 - device memory access by
 * physical address, as the host ops do after mapping but uncounted.
 * Unclaimed addresses read all-ones and drop writes.
 */
uint32_t umsi_sim_mmio_read32(struct umsi_sim *sim, uint64_t phys);
void umsi_sim_mmio_write32(struct umsi_sim *sim, uint64_t phys, uint32_t val);

/**
 * umsi_sim_msix_entry_set - write MSI-X table entry @idx of @bdf directly
 * (any state, e.g. unmasked with a junk address; no delivery is
 * triggered, no counter moves)
 * umsi_sim_msix_entry_get - read it back
 * Return: 0; -UMSI_ENOENT (no such function or no MSI-X); -UMSI_EINVAL
 * (@idx out of range).
 */
int umsi_sim_msix_entry_set(struct umsi_sim *sim, umsi_bdf_t bdf,
			    unsigned int idx, uint64_t addr, uint32_t data,
			    uint32_t ctrl);
int umsi_sim_msix_entry_get(struct umsi_sim *sim, umsi_bdf_t bdf,
			    unsigned int idx, uint64_t *addr, uint32_t *data,
			    uint32_t *ctrl);

/**
 * umsi_sim_msix_pending - the PBA bit of entry @idx (set: a message waits
 * for unmask). Return: 1, 0, or a negative error as above.
 * umsi_sim_msi_pending - the MSI Pending Bits register (0 without
 * per-vector masking).
 */
int umsi_sim_msix_pending(struct umsi_sim *sim, umsi_bdf_t bdf,
			  unsigned int idx);
uint32_t umsi_sim_msi_pending(struct umsi_sim *sim, umsi_bdf_t bdf);

/* Outcomes of umsi_sim_fire (non-negative). */
#define UMSI_SIM_FIRE_SENT       0  /* message written (see delivery stats) */
#define UMSI_SIM_FIRE_PENDING    1  /* masked: pending/PBA bit set */
#define UMSI_SIM_FIRE_COALESCED  2  /* masked and already pending */
#define UMSI_SIM_FIRE_BLOCKED    3  /* Bus Master Enable clear: dropped */
#define UMSI_SIM_FIRE_INTX       4  /* INTx asserted (or kept asserted) */

/**
 * umsi_sim_fire - the device raises interrupt @k
 *
 * MSI-X enabled (wins if software enabled both): entry @k; with Function
 * Mask or the entry's mask bit set, the PBA bit is set and the message is
 * sent when both are clear again; otherwise address and data are read from
 * the table now and written. MSI enabled: message @k of 2^MME; the device
 * ORs @k into the low MME data bits (an MME above Multiple Message Capable
 * is stored, counted as mme_over_cap, and treated as MMC); with the mask
 * bit of @k set the pending bit is set and the message goes on unmask.
 * Neither: INTx is asserted (@k ignored) until umsi_sim_intx_set(false); the
 * pin signals only while Command.INTx Disable is clear, Status.Interrupt
 * Status is set either way. Nothing is sent while Bus Master Enable is
 * clear (counted; a pending bit waits for unmask, then the message is
 * dropped if BME is still clear).
 * Return: UMSI_SIM_FIRE_*; -UMSI_ENODEV (absent or removed), -UMSI_EINVAL
 * (@k beyond the table or 2^MME), -UMSI_ENOTSUP (no MSI/MSI-X enabled and
 * no INTx pin).
 */
int umsi_sim_fire(struct umsi_sim *sim, umsi_bdf_t bdf, unsigned int k);

/**
 * umsi_sim_intx_set - drive the function's interrupt condition (level)
 *
 * Sets Status.Interrupt Status to @asserted; the pin (and the IO-APIC input
 * it is routed to) is asserted when also the pin exists, INTx Disable is
 * clear and neither MSI nor MSI-X is enabled.
 * Return: 0, -UMSI_ENODEV.
 */
int umsi_sim_intx_set(struct umsi_sim *sim, umsi_bdf_t bdf, bool asserted);

/**
 * struct umsi_sim_dev_stats - per-function counters
 * @cfg_reads, @cfg_writes, @mmio_reads, @mmio_writes: host accesses
 * @fires: umsi_sim_fire calls; @msgs: messages written
 * @pending_set: fires that set a pending/PBA bit; @coalesced: fires while
 *     already pending (or INTx already asserted)
 * @bme_blocked: messages dropped, Bus Master Enable clear
 * @intx_asserts: INTx condition raised
 * @mmio_disabled: MMIO while Memory Space Enable was clear (reads
 *     all-ones, writes dropped)
 * @msix_live_writes: MSI-X entry address/data written while the entry could
 *     fire (MSI-X enabled, function and entry unmasked: the spec leaves the
 *     result undefined)
 * @msi_live_writes: MSI address/data written while MSI was enabled and the
 *     vector not maskable or unmasked
 * @mme_over_cap: messages sent with MME above Multiple Message Capable
 */
struct umsi_sim_dev_stats {
	uint64_t cfg_reads, cfg_writes, mmio_reads, mmio_writes;
	uint64_t fires, msgs, pending_set, coalesced, bme_blocked;
	uint64_t intx_asserts;
	uint64_t mmio_disabled;
	uint64_t msix_live_writes, msi_live_writes;
	uint64_t mme_over_cap;
};

/** umsi_sim_dev_stats - counters of @bdf. Return: 0 or -UMSI_ENOENT. */
int umsi_sim_dev_stats(struct umsi_sim *sim, umsi_bdf_t bdf,
		       struct umsi_sim_dev_stats *out);

/* ---- IO-APIC, INTx routing and interrupt remapping -------------------------- */

/**
 * umsi_sim_set_intx_route - override where @bdf's INTx pin arrives
 * @gsi: the GSI, or -1 for "not routed" (intx_route returns -UMSI_ENOENT)
 *
 * Default routing (what intx_route reports): a function on bus 0 with pin P
 * at device D arrives at GSI 16 + (D + P - 1) % 4; behind a bridge the pin
 * is swizzled at each bridge, P' = (P - 1 + D) % 4 + 1, up to bus 0 (a bus
 * no added bridge leads to counts as bus 0). Level-triggered, active low.
 * GSIs 0-15 are ISA lines (edge, active-high wires); 16 and up are PCI
 * lines (active-low wires): programming the opposite polarity makes an
 * idle line look asserted, as on hardware.
 * Return: 0, -UMSI_ENOENT (no function), -UMSI_EINVAL (gsi out of range).
 */
int umsi_sim_set_intx_route(struct umsi_sim *sim, umsi_bdf_t bdf, int gsi);

/**
 * umsi_sim_gsi_set - drive IO-APIC input @gsi directly (an ISA device, a
 * timer): @asserted is the logical state, ORed with any PCI function's
 * INTx routed there. Return: 0 or -UMSI_EINVAL.
 */
int umsi_sim_gsi_set(struct umsi_sim *sim, uint32_t gsi, bool asserted);

/**
 * struct umsi_sim_rte - one IO-APIC redirection entry as programmed
 * @programmed: gsi_program has been called for it (else reset: masked)
 * @apic_id, @vector, @trigger, @polarity, @masked: as programmed
 * @remote_irr: level: delivered and not yet EOIed
 * @line: the input is asserted (logical, after wire polarity)
 * @deliveries: messages the entry sent
 * @remappable: a VT-d machine's remappable-format entry: it sends
 *              interrupt @handle through the unit; @apic_id and @vector
 *              are then what the table entry said when it was programmed
 *              or last sent (0 when it could not be read)
 */
struct umsi_sim_rte {
	bool programmed;
	uint32_t apic_id;
	uint8_t vector, trigger, polarity;
	bool masked;
	bool remote_irr;
	bool line;
	uint64_t deliveries;
	bool remappable;
	uint16_t handle;
};

/**
 * struct umsi_sim_target - a message a source can send right now
 * @bdf: the function (MSI/MSI-X), or 0 for an IO-APIC input
 * @gsi: the IO-APIC input, or -1 for a function
 * @address, @data: the message (0 for an IO-APIC input)
 * @resolved: the message names a CPU and vector (else it is junk: it
 *            would be undeliverable)
 * @cpu: the CPU it lands on (UINT32_MAX: no CPU has that APIC ID, or a
 *       logical destination); @vector: the vector (its low 8 bits on an
 *       IMSIC machine); @id: the identity, whole
 */
struct umsi_sim_target {
	umsi_bdf_t bdf;
	int gsi;
	uint64_t address;
	uint32_t data;
	bool resolved;
	uint32_t cpu;
	uint8_t vector;
	uint32_t id;
};

/**
 * umsi_sim_live_targets - every (CPU, vector) a source can still send to
 * @fn: called once per unmasked MSI-X entry of an enabled, not
 *      function-masked table; per unmasked message of enabled MSI (all
 *      2^MME); per programmed, unmasked IO-APIC input. Bus Master Enable
 *      is not considered (a driver may set it again).
 * Return: how many targets were reported. @fn runs with the sim locked:
 * it must not call the sim.
 */
unsigned umsi_sim_live_targets(struct umsi_sim *sim,
			       void (*fn)(void *arg,
					  const struct umsi_sim_target *t),
			       void *arg);

/** umsi_sim_ioapic_get - the state of input @gsi. Return: 0 or -UMSI_EINVAL. */
int umsi_sim_ioapic_get(struct umsi_sim *sim, uint32_t gsi,
			struct umsi_sim_rte *out);

/*
 * Interrupt-remapping table entries (handles 0 .. UMSI_SIM_IRTE_COUNT-1):
 * as many as a VT-d table holds, and as the 16-bit handle of the
 * remappable format can name. remap_compose gives an IRQ its entry again,
 * else the lowest free one, in O(1).
 */
#define UMSI_SIM_IRTE_COUNT 65536

/**
 * umsi_sim_irte_get - the remapping entry @handle: the IRQ it was composed
 * for, its APIC ID and vector. Return: 0, -UMSI_ENOENT (free entry),
 * -UMSI_EINVAL (out of range).
 */
int umsi_sim_irte_get(struct umsi_sim *sim, uint32_t handle, uint32_t *irq,
		      uint32_t *apic_id, uint8_t *vector);

/** umsi_sim_irte_used - entries in use (remap_compose not yet freed). */
uint32_t umsi_sim_irte_used(struct umsi_sim *sim);

#endif /* UMSI_SIM_H */
