/* SPDX-License-Identifier: MIT */
/*
 * umsi/host.h - the host interface: everything uMSI needs from the kernel
 * (or simulator, or hypervisor) that embeds it.
 *
 * uMSI never touches hardware, memory allocators or CPUs directly. The
 * embedding kernel fills one struct umsi_host_ops with function pointers and
 * passes it, with an opaque context pointer, to umsi_system_create(). Every
 * call below receives that context as its first argument, so one process can
 * hold several independent systems (the simulator runs many machines in one
 * test binary).
 *
 * This file is written for the person porting uMSI. Each operation says what
 * it must do, what it may assume, and in which context uMSI calls it.
 *
 * Contexts. uMSI calls host operations from two kinds of context:
 *  - process context: umsi_system_create(), device set-up and tear-down,
 *    vector allocation, affinity changes, CPU online/offline. Of these
 *    only alloc(), phys_alloc(), mmio_map() and run_on_cpu() may sleep,
 *    and uMSI never calls them with one of its locks held.
 *  - interrupt context: umsi_dispatch() and the mask/unmask paths it
 *    reaches, and the function uMSI runs through run_on_cpu(). Only
 *    cfg_read, cfg_write, mmio_read32, mmio_write32, lock_acquire,
 *    lock_release, log, clock_ns, current_cpu, eoi, irq_pending,
 *    send_ipi and gsi_program are used there; they must not sleep.
 *
 * Locks. uMSI holds its own spinlocks (lock_create: one for the system,
 * one per PCI function added, and one for a back end that keeps state of
 * its own: the VT-d and GICv3 ITS back ends) only around short sections.
 * Inside them it calls cfg_read, cfg_write, mmio_read32, mmio_write32,
 * gsi_program, current_cpu and clock_ns; every other operation, log
 * included, is called with no uMSI lock held (the simulator counts any
 * other call under a lock as an error, and the tests assert none).
 *
 * Re-entry. An operation must not call into uMSI, with one exception:
 * run_on_cpu() runs the function uMSI gave it. Interrupts taken on other
 * CPUs meanwhile may enter umsi_dispatch(): that is expected and safe.
 *
 * Which uMSI functions may be called from interrupt context is written on
 * each of them (umsi/irq.h, umsi/pci.h). As a rule: dispatch, mask, unmask
 * and statistics reads may; anything that allocates, frees, or programs a
 * device's capability may not.
 *
 * Optional operations may be NULL; each says what uMSI does then. The
 * others are required: umsi_system_create() fails with -UMSI_EINVAL and
 * logs the name of the first missing one, or of contradictory settings
 * (UMSI_PLAT_IRQ_REMAP without remap_compose; intx_route without
 * gsi_program).
 *
 * The interrupt controller itself is driven by the controller back end
 * chosen at creation (umsi/ctl.h, umsi_config.ctl). What it needs of the
 * current CPU's controller it asks through three typed operations, each
 * in the controller's own numbering of interrupts (an x86 vector, an
 * IMSIC identity, a GIC INTID): eoi, irq_pending and send_ipi. Each back
 * end checks at creation that the ones it needs are there and logs the
 * name of a missing one; docs/PORTING.md has the table of which back end
 * needs which.
 */
#ifndef UMSI_HOST_H
#define UMSI_HOST_H

#include <umsi/msg.h>
#include <umsi/types.h>

/* Log levels, most to least severe. */
enum umsi_log_level {
	UMSI_LOG_ERROR = 0,
	UMSI_LOG_WARN = 1,
	UMSI_LOG_INFO = 2,
	UMSI_LOG_DEBUG = 3,
};

/*
 * Platform facts returned by umsi_host_ops.platform_flags(). NO_MSI is for
 * every platform; the others are read by the x86 back end and decide which
 * CPUs a message can reach: uMSI never targets a CPU whose APIC ID the
 * platform's message format cannot express.
 */
/* The LAPICs run in x2APIC mode (broadcast is 0xffffffff, not 0xff). */
#define UMSI_PLAT_X2APIC       (1u << 0)
/*
 * The platform decodes address bits 11:5 as destination ID bits 14:8 (the
 * "extended destination ID" that hypervisors such as KVM and Hyper-V
 * advertise). Without it only APIC IDs 0-254 are reachable by a message.
 */
#define UMSI_PLAT_EXT_DEST_ID  (1u << 1)
/*
 * An interrupt-remapping unit composes messages (remap_compose below);
 * any APIC ID is then reachable.
 */
#define UMSI_PLAT_IRQ_REMAP    (1u << 2)
/* Firmware forbids MSI (ACPI FADT IAPC_BOOT_ARCH bit 3, "MSI Not Supported"). */
#define UMSI_PLAT_NO_MSI       (1u << 3)
/*
 * x86: the kernel takes legacy ISA interrupts through the 8259 PIC in
 * virtual-wire mode, which delivers IRQ i on vector 0x30 + i of the boot
 * CPU. Only then does uMSI withhold vectors 0x30-0x3f there.
 */
#define UMSI_PLAT_ISA_PIC      (1u << 4)

/* INTx trigger mode and polarity, as the IO-APIC programs them. */
#define UMSI_INTX_EDGE        0
#define UMSI_INTX_LEVEL       1
#define UMSI_INTX_ACTIVE_HIGH 0
#define UMSI_INTX_ACTIVE_LOW  1

/**
 * struct umsi_intx_route - where a PCI function's INTx pin arrives
 * @gsi: global system interrupt number (IO-APIC input, counted across
 *       IO-APICs from 0)
 * @trigger: UMSI_INTX_LEVEL for PCI (always level in practice)
 * @polarity: UMSI_INTX_ACTIVE_LOW for PCI (always, in practice)
 */
struct umsi_intx_route {
	uint32_t gsi;
	uint8_t trigger;
	uint8_t polarity;
};

/**
 * struct umsi_gsi_entry - what uMSI asks the host to program for one GSI
 * @msg: the message the input is to send, composed by the controller back
 *       end exactly as for an MSI (x86: address 0xfee..., destination APIC
 *       ID in address bits 19:12, vector in data bits 7:0; an IO-APIC
 *       redirection entry takes both from it, a RISC-V APLIC in MSI mode
 *       the hart's file address and the identity)
 * @trigger: UMSI_INTX_EDGE or UMSI_INTX_LEVEL
 * @polarity: UMSI_INTX_ACTIVE_HIGH or UMSI_INTX_ACTIVE_LOW
 * @masked: true to leave the input masked
 */
struct umsi_gsi_entry {
	struct umsi_msg msg;
	uint8_t trigger;
	uint8_t polarity;
	bool masked;
};

/**
 * struct umsi_host_ops - the operations a host implements
 *
 * Every function takes the context pointer given to umsi_system_create()
 * as @host. Return values of type int are 0 or a negative UMSI_E* code.
 */
struct umsi_host_ops {
	/* ---- PCI configuration space -------------------------------------- */

	/*
	 * Read @width bytes (1, 2 or 4) at offset @off (0-4095, naturally
	 * aligned) of function @bdf's configuration space into *@val.
	 *
	 * A function that does not exist, or has been surprise-removed, must
	 * read as all-ones (0xff, 0xffff, 0xffffffff), as PCI hardware does;
	 * uMSI recognises a removed device that way. Offsets 256-4095 must
	 * work through ECAM where the platform has it; where it has only the
	 * legacy 0xcf8/0xcfc mechanism, return all-ones for them. uMSI
	 * calls cfg_read and cfg_write concurrently from several CPUs and
	 * from interrupt context (MSI mask bits): a mechanism that takes two
	 * accesses (0xcf8 then 0xcfc) must serialize them with the kernel's
	 * own configuration accesses, interrupts off (one lock for both),
	 * or a pair can interleave with another and reach the wrong
	 * register; ECAM needs no lock.
	 * Return -UMSI_EIO only when the access itself could not be made.
	 * Context: any, including interrupt context (MSI mask bits live in
	 * configuration space). Must not sleep.
	 *
	 * Example: cfg_read(host, UMSI_BDF(0, 0, 3, 0), 0x34, 1, &v) reads the
	 * capability pointer of 0000:00:03.0; with ECAM at 0xb0000000 that is
	 * the byte at 0xb0000000 + (0 << 20 | 3 << 15 | 0 << 12) + 0x34.
	 */
	int (*cfg_read)(void *host, umsi_bdf_t bdf, uint16_t off,
			uint8_t width, uint32_t *val);

	/*
	 * Write the low @width bytes of @val at offset @off. Configuration
	 * writes are non-posted: when this returns, the device has the value
	 * (PCIe completes config writes; ECAM implementations must not buffer
	 * them beyond the store itself). Context as cfg_read.
	 */
	int (*cfg_write)(void *host, umsi_bdf_t bdf, uint16_t off,
			 uint8_t width, uint32_t val);

	/* ---- Memory-mapped I/O -------------------------------------------- */

	/*
	 * Map @len bytes of device memory at physical address @phys
	 * (uncached, as device memory must be) and store a pointer in *@virt.
	 * @phys is page-aligned only when the device made it so: round down,
	 * map, and return the pointer adjusted by the offset.
	 *
	 * Example for mmio_map(0xfebf1010, 0x50): 1. round down to 0xfebf1000;
	 * 2. map one page uncached at some virtual address V; 3. return
	 * V + 0x10.
	 *
	 * uMSI maps each MSI-X table and PBA once at set-up and unmaps it at
	 * tear-down. Return -UMSI_ENOMEM when out of address space.
	 * Context: process context only; may sleep.
	 */
	int (*mmio_map)(void *host, uint64_t phys, uint64_t len, void **virt);

	/*
	 * Undo one mmio_map(); @virt and @len as passed/returned there. A
	 * kernel that cannot unmap may make it a no-op: uMSI maps a table
	 * and a PBA per MSI-X function set-up, so what a no-op costs is
	 * that address space (usually a page or two each) for every set-up
	 * ever made, hot-plug cycles included, unless mmio_map hands out
	 * the same mapping again for the same range.
	 */
	void (*mmio_unmap)(void *host, void *virt, uint64_t len);

	/*
	 * 32-bit access to mapped device memory. @addr is inside a mapping
	 * made by mmio_map() and 4-byte aligned. Writes are posted: they may
	 * still be on the way to the device when this returns; uMSI reads
	 * back from the same device when it needs the write to have landed.
	 * Context: any; must not sleep.
	 * Optional (both or neither): NULL makes uMSI use a volatile 32-bit
	 * load and store, which is what every architecture uMSI knows needs
	 * for uncached device memory.
	 */
	uint32_t (*mmio_read32)(void *host, volatile void *addr);
	void (*mmio_write32)(void *host, volatile void *addr, uint32_t val);

	/* ---- Locks ---------------------------------------------------------- */

	/*
	 * A spinlock that also disables interrupts on the current CPU while
	 * held (Linux's spin_lock_irqsave). uMSI creates one at system
	 * creation, one for a back end with state of its own (VT-d, ITS) and
	 * one for each PCI function umsi_pci_add() takes, and holds them only
	 * for short, bounded sections (see "Locks" above). lock_create returns NULL when
	 * out of memory. lock_acquire returns the previous interrupt state,
	 * which uMSI passes back to lock_release. Locks are not recursive.
	 * Context: acquire/release any; create/destroy process context.
	 */
	void *(*lock_create)(void *host);
	void (*lock_destroy)(void *host, void *lock);
	umsi_irqflags_t (*lock_acquire)(void *host, void *lock);
	void (*lock_release)(void *host, void *lock, umsi_irqflags_t flags);

	/* ---- Memory --------------------------------------------------------- */

	/*
	 * Allocate @size bytes of 16-byte aligned normal memory, or return
	 * NULL. It need not be zeroed: uMSI clears what it uses. free() receives the same size. uMSI allocates at
	 * system creation and device set-up, never in interrupt context.
	 */
	void *(*alloc)(void *host, size_t size);
	void (*free)(void *host, void *ptr, size_t size);

	/*
	 * Memory an interrupt controller reads and writes by itself (a GICv3
	 * ITS's command queue, device and translation tables): @size bytes
	 * aligned to @align (a power of two, at most 64 KiB), which the
	 * controller sees coherently with the CPUs (arm64: normal memory,
	 * inner shareable, write-back), its physical address in *@phys.
	 * NULL when there is none. It need not be zeroed. phys_free() gets
	 * the same size. Optional (both or neither): only a back end that
	 * says it needs them (umsi/ctl.h) calls them, and refuses creation
	 * without them. Context: process; may sleep; no uMSI lock held.
	 */
	void *(*phys_alloc)(void *host, size_t size, size_t align,
			    uint64_t *phys);
	void (*phys_free)(void *host, void *virt, size_t size);

	/* ---- Diagnostics and time ------------------------------------------- */

	/*
	 * Print one finished line (no trailing newline) at level @level.
	 * Optional: NULL discards messages. Context: any; must not sleep.
	 */
	void (*log)(void *host, enum umsi_log_level level, const char *msg);

	/*
	 * Monotonic time in nanoseconds since any fixed point. Used by storm
	 * detection (a quiet spell resets the unhandled count) and migration
	 * time-outs. Resolution of a millisecond is enough. Context: any.
	 */
	uint64_t (*clock_ns)(void *host);

	/* ---- CPUs and topology --------------------------------------------- */

	/*
	 * The number of the CPU this code runs on: 0 .. cpu_count()-1, in the
	 * host's own numbering (the reference kernel uses the position in the
	 * ACPI MADT). Context: any.
	 */
	uint32_t (*current_cpu)(void *host);

	/*
	 * The number of CPUs that can ever exist (possible CPUs). Fixed for
	 * the life of the system. Context: process.
	 */
	uint32_t (*cpu_count)(void *host);

	/*
	 * The interrupt controller's name for CPU @cpu in *@hwid: the x86
	 * APIC ID, the RISC-V hart ID, the ARM MPIDR affinity. IDs need not
	 * start at 0, be contiguous, or stay below 256 (x2APIC). Return
	 * -UMSI_EINVAL for a CPU number out of range. Context: process.
	 */
	int (*cpu_hwid)(void *host, uint32_t cpu, uint32_t *hwid);

	/*
	 * Query: is CPU @cpu online (started and taking interrupts) now?
	 * Asked once per CPU at umsi_system_create(); later changes are
	 * events the kernel reports with umsi_cpu_online() and
	 * umsi_cpu_offline(). Context: process.
	 */
	bool (*cpu_is_online)(void *host, uint32_t cpu);

	/*
	 * UMSI_PLAT_* flags describing the message formats the platform can
	 * deliver and whether MSI is allowed at all. Read once at creation.
	 */
	uint32_t (*platform_flags)(void *host);

	/* ---- Cross-calls and the local interrupt controller ------------- */

	/*
	 * Run @fn(@arg) on CPU @cpu and wait until it has returned. @fn runs
	 * with interrupts disabled on that CPU (an IPI handler is the usual
	 * way). When @cpu is the current CPU, call @fn directly with
	 * interrupts disabled. Return -UMSI_EINVAL when the CPU is offline.
	 * uMSI uses it during migration to ask the CPU an IRQ left whether
	 * its old identity is still pending there (only that CPU can read its
	 * own controller). Context: process; no uMSI lock held. May sleep.
	 */
	int (*run_on_cpu)(void *host, uint32_t cpu, void (*fn)(void *arg),
			  void *arg);

	/*
	 * End interrupt @id on the current CPU's controller. x86 local APIC
	 * (umsi_ctl_x86_lapic, umsi_ctl_x86_vtd): write 0 to the EOI
	 * register (xAPIC offset 0x0b0; x2APIC MSR 0x80b); @id is the vector
	 * being ended, which the register does not take. umsi_dispatch()
	 * calls it after the handlers of every interrupt it takes, for a
	 * back end that says so (umsi_ctl.eoi); the IMSIC (claimed through
	 * stopei) and the GICv3 ITS (the kernel writes ICC_EOIR1_EL1) need
	 * none. Context: interrupt, interrupts off; must not sleep.
	 */
	void (*eoi)(void *host, uint32_t id);

	/*
	 * Is interrupt @id pending (accepted, not yet taken) at the current
	 * CPU's controller? x86 local APIC: IRR bit @id (xAPIC offset 0x200
	 * + 0x10 * (@id / 32), bit @id % 32; x2APIC MSR 0x820 + @id / 32).
	 * RISC-V IMSIC: eip bit @id of the current hart's S-level interrupt
	 * file (siselect 0x80 + 2 * (@id / 64), then sireg, bit @id % 64;
	 * interrupts off in between). GICv3 ITS whose LPI tables the kernel
	 * keeps: INTID @id's bit in the current CPU's LPI pending table
	 * (false if the host cannot tell). uMSI asks it on the CPU an IRQ
	 * left, inside run_on_cpu(). Context: interrupts off; must not sleep.
	 */
	bool (*irq_pending)(void *host, uint32_t id);

	/*
	 * Send interrupt @id once to the CPU whose controller name
	 * (cpu_hwid) is @hwid. x86 local APIC: a fixed IPI, physical
	 * destination, no shorthand, assert (ICR: x2APIC MSR 0x830 with
	 * @hwid in bits 63:32; xAPIC: @hwid << 24 to offset 0x310, then the
	 * low half to 0x300, and wait for delivery status, bit 12, to clear).
	 * uMSI resends a copy that was pending on the CPU an IRQ left.
	 * Context: any; must not sleep.
	 */
	void (*send_ipi)(void *host, uint32_t hwid, uint32_t id);

	/* ---- INTx ------------------------------------------------------------ */

	/*
	 * Where INTx pin @pin (1 = INTA .. 4 = INTD, as the Interrupt Pin
	 * register says) of function @bdf arrives: the GSI, trigger and
	 * polarity, after every bridge swizzle. Platforms learn this from
	 * ACPI _PRT or fixed chipset routing. Return -UMSI_ENOENT when the
	 * pin is not routed. Optional: NULL means no INTx fallback.
	 * Context: process.
	 */
	int (*intx_route)(void *host, umsi_bdf_t bdf, uint8_t pin,
			  struct umsi_intx_route *route);

	/*
	 * Program the interrupt controller input @gsi (IO-APIC redirection
	 * entry) to send @entry->msg with its trigger and polarity, or just
	 * change its mask bit when only @entry->masked differs from the last
	 * call. Context: any (uMSI masks
	 * and unmasks INTx lines from interrupt context). Optional together
	 * with intx_route.
	 */
	int (*gsi_program)(void *host, uint32_t gsi,
			   const struct umsi_gsi_entry *entry);

	/* ---- Interrupt remapping (optional) --------------------------------- */

	/*
	 * Used by the x86 back end when the platform advertises
	 * UMSI_PLAT_IRQ_REMAP (then required): compose the message for
	 * interrupt @irq that delivers @vector to @apic_id, by
	 * allocating or updating an interrupt-remapping table entry, and
	 * store it in *@msg (remappable format). remap_free() releases the
	 * entry for @irq. Context: process.
	 */
	int (*remap_compose)(void *host, uint32_t irq, uint32_t apic_id,
			     uint8_t vector, struct umsi_msg *msg);
	void (*remap_free)(void *host, uint32_t irq);

	/* ---- Waiting -------------------------------------------------------- */

	/*
	 * Optional: wait at least @us microseconds, sleeping if the kernel
	 * can. Used only where a specification tells software to wait
	 * (SR-IOV's VF Enable: 100 ms after setting, 1 s after clearing).
	 * NULL: uMSI spins on clock_ns(). Context: process.
	 */
	void (*sleep_us)(void *host, uint32_t us);
};

#endif /* UMSI_HOST_H */
