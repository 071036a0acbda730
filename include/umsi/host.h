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
 *    vector allocation, affinity changes. The host may sleep here only in
 *    alloc(), mmio_map() and run_on_cpu(); uMSI never calls those with a
 *    uMSI lock held.
 *  - interrupt context: umsi_dispatch() and the mask/unmask/ack/eoi paths it
 *    reaches. Only cfg_read, cfg_write, mmio_read32, mmio_write32, barrier,
 *    lock_acquire/lock_release, log, clock_ns, current_cpu, eoi and
 *    vector_pending are used there; they must not sleep.
 *
 * Which uMSI functions may be called from interrupt context is written on
 * each of them (umsi/irq.h, umsi/pci.h). As a rule: dispatch, mask, unmask
 * and statistics reads may; anything that allocates, frees, or programs a
 * device's capability may not.
 *
 * Optional operations: an operation marked "optional" may be NULL; uMSI then
 * uses the documented fallback or returns -UMSI_ENOSYS from the feature that
 * needs it. All others are required; umsi_system_create() fails with
 * -UMSI_EINVAL naming the first missing one in the log.
 */
#ifndef UMSI_HOST_H
#define UMSI_HOST_H

#include <umsi/types.h>

struct umsi_msg;

/* Log levels, most to least severe. */
enum umsi_log_level {
	UMSI_LOG_ERROR = 0,
	UMSI_LOG_WARN = 1,
	UMSI_LOG_INFO = 2,
	UMSI_LOG_DEBUG = 3,
};

/*
 * Platform facts returned by umsi_host_ops.platform_flags(). They decide
 * which CPUs a message can reach: uMSI never targets a CPU whose APIC ID the
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
 * @apic_id: destination APIC ID (physical destination mode)
 * @vector: CPU vector, 0x20-0xfe
 * @trigger: UMSI_INTX_EDGE or UMSI_INTX_LEVEL
 * @polarity: UMSI_INTX_ACTIVE_HIGH or UMSI_INTX_ACTIVE_LOW
 * @masked: true to leave the input masked
 */
struct umsi_gsi_entry {
	uint32_t apic_id;
	uint8_t vector;
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
	 * legacy 0xcf8/0xcfc mechanism, return all-ones for them.
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

	/* Undo one mmio_map(); @virt and @len as passed/returned there. */
	void (*mmio_unmap)(void *host, void *virt, uint64_t len);

	/*
	 * 32-bit access to mapped device memory. @addr is inside a mapping
	 * made by mmio_map() and 4-byte aligned. Writes are posted: they may
	 * still be on the way to the device when this returns; uMSI reads
	 * back from the same device when it needs the write to have landed.
	 * Context: any; must not sleep.
	 */
	uint32_t (*mmio_read32)(void *host, volatile void *addr);
	void (*mmio_write32)(void *host, volatile void *addr, uint32_t val);

	/*
	 * Full memory barrier between normal memory and device accesses
	 * (x86: mfence; arm64: dsb sy). Context: any.
	 */
	void (*barrier)(void *host);

	/* ---- Locks ---------------------------------------------------------- */

	/*
	 * A spinlock that also disables interrupts on the current CPU while
	 * held (Linux's spin_lock_irqsave). uMSI creates a few at system
	 * creation and holds them only for short, bounded sections that never
	 * call alloc, mmio_map or run_on_cpu. lock_create returns NULL when
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
	 * Allocate @size bytes of zeroed, 16-byte aligned normal memory, or
	 * return NULL. free() receives the same size. uMSI allocates at
	 * system creation and device set-up, never in interrupt context.
	 */
	void *(*alloc)(void *host, size_t size);
	void (*free)(void *host, void *ptr, size_t size);

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
	 * The APIC ID of CPU @cpu in *@apic_id. IDs need not start at 0, be
	 * contiguous, or stay below 256 (x2APIC). Return -UMSI_EINVAL for a
	 * CPU number out of range. Context: process.
	 */
	int (*cpu_apic_id)(void *host, uint32_t cpu, uint32_t *apic_id);

	/*
	 * Whether CPU @cpu is online (started and taking interrupts) when
	 * the system is created. Later changes are reported by the kernel
	 * calling umsi_cpu_online() / umsi_cpu_offline(). Context: process.
	 */
	bool (*cpu_online)(void *host, uint32_t cpu);

	/*
	 * UMSI_PLAT_* flags describing the message formats the platform can
	 * deliver and whether MSI is allowed at all. Read once at creation.
	 */
	uint32_t (*platform_flags)(void *host);

	/* ---- Interrupt controller ------------------------------------------- */

	/*
	 * Signal end of interrupt for @vector to the local APIC of the
	 * current CPU (xAPIC: write 0 to EOI register 0xb0; x2APIC: MSR
	 * 0x80b). Called exactly once per delivered interrupt that reached a
	 * uMSI descriptor or was spurious on a valid vector; never for the
	 * APIC's spurious vector. Context: interrupt.
	 */
	void (*eoi)(void *host, uint8_t vector);

	/*
	 * Run @fn(@arg) on CPU @cpu and wait until it has returned. @fn runs
	 * with interrupts disabled on that CPU (an IPI handler is the usual
	 * way). When @cpu is the current CPU, call @fn directly with
	 * interrupts disabled. Return -UMSI_EINVAL when the CPU is offline.
	 * uMSI uses it during migration to ask a CPU whether a vector is
	 * pending in its IRR (only that CPU can read its own IRR).
	 * Context: process; uMSI holds no lock across it. May sleep.
	 */
	int (*run_on_cpu)(void *host, uint32_t cpu, void (*fn)(void *arg),
			  void *arg);

	/*
	 * Whether @vector is set in the Interrupt Request Register of the
	 * current CPU's local APIC (xAPIC: bit (vector % 32) of register
	 * 0x200 + 0x10 * (vector / 32)). Called from a run_on_cpu() function.
	 * Context: interrupt (interrupts disabled).
	 */
	bool (*vector_pending)(void *host, uint8_t vector);

	/*
	 * Make @vector arrive on CPU @cpu once (a fixed IPI with that vector
	 * to the CPU's APIC ID). Used to resend an interrupt that was pending
	 * on a CPU the IRQ has just left. Context: any.
	 */
	int (*retrigger)(void *host, uint32_t cpu, uint8_t vector);

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
	 * entry) as @entry says, or just change its mask bit when only
	 * @entry->masked differs from the last call. Context: any (uMSI masks
	 * and unmasks INTx lines from interrupt context). Optional together
	 * with intx_route.
	 */
	int (*gsi_program)(void *host, uint32_t gsi,
			   const struct umsi_gsi_entry *entry);

	/* ---- Interrupt remapping (optional) --------------------------------- */

	/*
	 * When the platform advertises UMSI_PLAT_IRQ_REMAP: compose the
	 * message for interrupt @irq that delivers @vector to @apic_id, by
	 * allocating or updating an interrupt-remapping table entry, and
	 * store it in *@msg (remappable format). remap_free() releases the
	 * entry for @irq. Context: process.
	 */
	int (*remap_compose)(void *host, uint32_t irq, uint32_t apic_id,
			     uint8_t vector, struct umsi_msg *msg);
	void (*remap_free)(void *host, uint32_t irq);
};

#endif /* UMSI_HOST_H */
