/* SPDX-License-Identifier: MIT */
/*
 * umsi/irq.h - the vector-indexed IRQ core: the system object, IRQ
 * descriptors, handlers, dispatch, affinity and statistics.
 *
 * "Vector indexing" (the first half of the 2003 MSI patch): an interrupt is
 * named by a virtual IRQ number that maps to a (CPU, vector) pair. Legacy ISA
 * IRQs 0-15 keep their numbers; IO-APIC inputs and MSI messages draw their
 * vectors from one per-CPU allocator (umsi/matrix.h), whose identities the
 * interrupt-controller back end defines (umsi/ctl.h).
 *
 * Concurrency. Everything here may be called from several CPUs at once,
 * with these rules:
 *  - umsi_dispatch() runs in interrupt context on any CPU, beside
 *    anything; it takes no lock.
 *  - CPU events (umsi_cpu_online/offline), affinity changes
 *    (umsi_irq_set_affinity) and walkers (umsi_irq_next, umsi_irq_get_info,
 *    umsi_irq_count, the umsi_format_* tables) may run beside each other
 *    and beside drivers setting up, using and freeing their IRQs (and
 *    beside umsi_pci_add/remove): a walker never meets a descriptor that
 *    is not yet bound to its source (it is published only then), and a
 *    descriptor is freed only once every walker that may hold it has left
 *    and a move in flight has finished (the free waits for it). Where two
 *    changes of one IRQ meet, one gets -UMSI_EAGAIN.
 *  - Handlers: umsi_request_irq/umsi_free_irq of one IRQ are the owner's
 *    to serialise; a handler must not free its own IRQ.
 *  - umsi_irq_mask/unmask: any context, beside anything, nesting.
 *  - umsi_system_create/destroy: alone.
 * tests/unit/test_soak_threads.c runs the first two groups on three threads
 * for 10^5 operations under ThreadSanitizer (make tsan-soak).
 */
#ifndef UMSI_IRQ_H
#define UMSI_IRQ_H

#include <umsi/host.h>
#include <umsi/msg.h>
#include <umsi/types.h>

struct umsi_system;
struct umsi_matrix;

/* Handler return values. */
#define UMSI_IRQ_NONE     0  /* not my device: the line is shared, or stray */
#define UMSI_IRQ_HANDLED  1

/**
 * typedef umsi_handler_t - an interrupt handler
 * @irq: the IRQ number
 * @dev_id: the cookie given to umsi_request_irq()
 *
 * Runs in interrupt context on the CPU the IRQ targets, with interrupts
 * disabled. Return UMSI_IRQ_HANDLED when the device raised it, else
 * UMSI_IRQ_NONE (a handler that keeps answering NONE is taken for a stuck
 * source and disabled, as Linux's note_interrupt() does).
 */
typedef int (*umsi_handler_t)(uint32_t irq, void *dev_id);

/**
 * typedef umsi_handler_ctx_t - an interrupt handler that also gets the
 * kernel's context of the interrupt
 * @irq: the IRQ number
 * @dev_id: the cookie given to umsi_request_irq_ctx()
 * @ctx: what the kernel passed to umsi_dispatch_ctx() for this interrupt
 *       (its register frame, say); NULL when it came through
 *       umsi_dispatch()
 *
 * As umsi_handler_t otherwise.
 */
typedef int (*umsi_handler_ctx_t)(uint32_t irq, void *dev_id, void *ctx);

/**
 * struct umsi_config - optional settings of a system
 * @max_irqs: IRQ numbers to provide (0: 4096; at most UMSI_MAX_IRQS)
 * @first_dynamic_irq: first number handed to MSI/MSI-X (0: 24, after the
 *                     16 ISA IRQs and a typical 24-input IO-APIC)
 * @ctl: the interrupt-controller back end (umsi/ctl.h; NULL: the x86
 *       local APIC, umsi_ctl_x86_lapic; -UMSI_EINVAL if not built)
 * @ctl_config: the back end's configuration, of the type umsi/ctl.h names
 *       for it (the RISC-V IMSIC: struct umsi_imsic_config); NULL for a
 *       back end that takes none (x86). Read during umsi_system_create()
 *       only: it need not outlive it
 * @matrix: identity layout overriding the back end's (NULL: the back
 *          end's; for x86 the vectors of umsi/matrix.h, with 0x30-0x3f
 *          withheld on CPU 0 only under UMSI_PLAT_ISA_PIC). Copied
 *          during umsi_system_create(): it need not outlive it. A kernel
 *          with a fixed vector layout starts from
 *          umsi_matrix_default_config() and narrows alloc_first..
 *          alloc_last (and the reserved bits) to the vectors it gives
 *          uMSI
 * @storm_threshold: unhandled interrupts out of 100,000 that disable an
 *                   IRQ (0: 99,900, Linux's figure)
 * @storm_quiet_ns: a quiet spell that resets the unhandled count
 *                  (0: 100 ms)
 * @spread_classes: within a CPU, take vectors from the least used
 *                  priority class (vector >> 4) instead of the lowest free
 *                  vector, as the 2003 patch's step of 8 spread them
 * @kernel_eoi: the kernel ends every interrupt itself, after
 *              umsi_dispatch() returns (as an entry path that always
 *              writes the EOI register does): uMSI never calls the host's
 *              eoi, which may then be NULL. Default (false): umsi_dispatch
 *              ends each interrupt it takes, except the controller's
 *              spurious identity, through the host's eoi, one indirect
 *              call. Either way exactly one EOI per interrupt: with
 *              @kernel_eoi the kernel must end the ones dispatch returns
 *              0 for too (nothing owned the identity), except the
 *              spurious identity (x86: vector 0xff). Only back ends whose
 *              controller needs an EOI (umsi_ctl.eoi: the x86 local APIC)
 *              are affected; docs/PORTING.md, "Ending an interrupt"
 */
/* The most IRQ numbers a system can have (umsi_config.max_irqs). */
#define UMSI_MAX_IRQS (1u << 24)

struct umsi_config {
	uint32_t max_irqs;
	uint32_t first_dynamic_irq;
	const struct umsi_ctl *ctl;
	const void *ctl_config;
	const struct umsi_matrix_config *matrix;
	uint32_t storm_threshold;
	uint64_t storm_quiet_ns;
	bool spread_classes;
	bool kernel_eoi;
};

/**
 * umsi_system_create - create a uMSI system on a host
 * @ops: the host's operations; must stay valid until destroy
 * @host: context pointer passed to every host operation
 * @cfg: optional settings (NULL: defaults)
 * @out: the new system
 *
 * Reads the CPU topology and platform flags, checks the host operations
 * the back end needs, and brings every CPU the host reports online into
 * the vector allocator. The PCI layer's policy (boot parameters) is set
 * apart, by umsi_policy_parse() (umsi/pci.h).
 *
 * Return: 0; -UMSI_EINVAL when a required host operation is missing or the
 * configuration is inconsistent; -UMSI_ENOMEM when the host's allocator
 * fails (nothing is left allocated). Context: process.
 */
int umsi_system_create(const struct umsi_host_ops *ops, void *host,
		       const struct umsi_config *cfg, struct umsi_system **out);

/**
 * umsi_system_destroy - free a system
 * @sys: the system; every device must have been removed and every IRQ
 *       freed, else the leftovers are logged and freed too
 *
 * Context: process.
 */
void umsi_system_destroy(struct umsi_system *sys);

/**
 * umsi_dispatch - the interrupt entry point
 * @sys: the system
 * @cpu: the current CPU (as host current_cpu() reports it)
 * @id: the identity the CPU took: on x86 the vector (uMSI hands out
 *      0x20-0xeb; any other is counted spurious and ended, and the
 *      kernel keeps 0xec-0xff for itself, as docs/PORTING.md says), on a
 *      RISC-V IMSIC the identity its claim register gave, on a GICv3 ITS
 *      INTID - first_lpi
 *
 * Called by the kernel's interrupt entry for every external interrupt.
 * Looks the identity up in the CPU's table, runs the IRQ's handlers and
 * ends the interrupt through the controller back end. An identity with no
 * IRQ is counted as spurious and ended; it never reaches a driver.
 *
 * Never takes a lock that set-up paths hold across device accesses: the
 * vector table entries are published with release stores and read with
 * acquire loads, and a descriptor is freed only after every CPU has left
 * dispatch since it was unpublished (see src/irq/dispatch.c).
 *
 * Return: 1 when an IRQ descriptor took the vector, 0 when spurious.
 * Context: interrupt, interrupts disabled.
 */
int umsi_dispatch(struct umsi_system *sys, uint32_t cpu, uint32_t id);

/**
 * umsi_dispatch_ctx - umsi_dispatch() handing the handlers a context
 * @sys: the system
 * @cpu: the current CPU
 * @id: the identity the controller delivered
 * @ctx: the kernel's context of this interrupt, opaque to uMSI (its
 *       register frame): handlers requested with umsi_request_irq_ctx()
 *       get it as their third argument
 *
 * Return: as umsi_dispatch(). Context: interrupt, interrupts disabled.
 */
int umsi_dispatch_ctx(struct umsi_system *sys, uint32_t cpu, uint32_t id,
		      void *ctx);

/* Flags of umsi_request_irq(). */
#define UMSI_IRQF_SHARED  (1u << 0)  /* INTx lines may be shared */

/**
 * umsi_request_irq - attach a handler to an IRQ
 * @sys: the system
 * @irq: an IRQ number returned by the PCI or INTx set-up
 * @handler: the handler
 * @flags: UMSI_IRQF_SHARED to share with other handlers that also pass it
 * @name: a name for statistics (kept by pointer; must outlive the handler)
 * @dev_id: cookie passed to @handler; identifies it in umsi_free_irq()
 *
 * The IRQ is unmasked when its first handler is attached.
 *
 * Return: 0; -UMSI_ENOENT for an unknown IRQ; -UMSI_EINVAL for a NULL
 * @handler; -UMSI_EBUSY when a handler exists and either side did not ask
 * for sharing; -UMSI_EPERM when the device's Bus Master Enable is clear
 * (it could not send the message); -UMSI_ENODEV when the device reads
 * all-ones (gone); -UMSI_EIO when the host could not read its Command
 * register; -UMSI_ENOMEM. Context: process.
 */
int umsi_request_irq(struct umsi_system *sys, uint32_t irq,
		     umsi_handler_t handler, uint32_t flags, const char *name,
		     void *dev_id);

/**
 * umsi_request_irq_ctx - attach a handler that takes the interrupt's context
 * @sys: the system
 * @irq: the IRQ
 * @handler: the handler; called with the context the kernel gave
 *           umsi_dispatch_ctx() (NULL through umsi_dispatch())
 * @flags: as umsi_request_irq()
 * @name: as umsi_request_irq()
 * @dev_id: as umsi_request_irq()
 *
 * Return: as umsi_request_irq(). Context: process.
 */
int umsi_request_irq_ctx(struct umsi_system *sys, uint32_t irq,
			 umsi_handler_ctx_t handler, uint32_t flags,
			 const char *name, void *dev_id);

/**
 * umsi_free_irq - detach a handler
 * @sys: the system
 * @irq: the IRQ
 * @dev_id: the cookie the handler was requested with
 *
 * The IRQ is masked when its last handler goes. When this returns, the
 * handler is not running on any CPU and will not be called again.
 *
 * Return: 0 or -UMSI_ENOENT. Context: process; never from the handler.
 */
int umsi_free_irq(struct umsi_system *sys, uint32_t irq, void *dev_id);

/**
 * umsi_irq_set_affinity - move an IRQ to a CPU of a mask
 * @sys: the system
 * @irq: the IRQ
 * @mask: allowed CPUs (copied)
 *
 * Picks the online, message-reachable CPU of @mask with the most free
 * vectors, takes a vector there, retargets the device, and releases the
 * old vector only when the old CPU has reported (through a host cross-call)
 * that the vector is not pending there; a pending one is resent to the new
 * CPU. No interrupt is lost or delivered twice. An IRQ of a multi-message
 * MSI block moves with its whole block (one aligned block of vectors on
 * one CPU; a source without mask bits gets the new block's vectors held on
 * the old CPU too while its message is half written); the affinity is the
 * block's.
 *
 * Return: 0; -UMSI_EINVAL for a mask with no online reachable CPU;
 * -UMSI_ENOSPC when no CPU of the mask has a free vector (the IRQ stays
 * where it was); -UMSI_EAGAIN when another change of this IRQ is in
 * progress or it is being set up; -UMSI_EPERM for a managed IRQ (its
 * affinity is fixed at allocation); -UMSI_ENOENT; -UMSI_EIO from the
 * device. Context: process. May run beside anything (see "Concurrency"
 * at the top of this file), including the IRQ being freed: then it acts
 * on it or returns -UMSI_ENOENT, never on freed memory.
 */
int umsi_irq_set_affinity(struct umsi_system *sys, uint32_t irq,
			  const struct umsi_cpumask *mask);

/**
 * umsi_irq_mask - stop an IRQ from reaching its handlers
 * @sys: the system
 * @irq: the IRQ
 *
 * Uses the device's mask bit where it has one; otherwise the interrupt is
 * still taken, noted as pending and ended without running handlers
 * ("lazy" masking). Nests: each mask needs one unmask.
 *
 * Return: 0; -UMSI_ENOENT; or the host's error when the mask bit could not
 * be written (a failed configuration write), and then the IRQ counts as
 * not masked (no unmask is owed). Context: any.
 */
int umsi_irq_mask(struct umsi_system *sys, uint32_t irq);

/**
 * umsi_irq_unmask - undo one umsi_irq_mask()
 * @sys: the system
 * @irq: the IRQ
 *
 * An interrupt that arrived while masked is delivered now (the device
 * sends it from its pending bit, or uMSI retriggers it).
 *
 * Return: 0, -UMSI_ENOENT, -UMSI_EINVAL when not masked, or the host's
 * error when the mask bit could not be cleared (the IRQ then stays
 * masked, one level deep). Context: any.
 */
int umsi_irq_unmask(struct umsi_system *sys, uint32_t irq);

/**
 * struct umsi_irq_info - where an IRQ is and what it has seen
 * @irq: the IRQ number
 * @cpu: target CPU
 * @hwid: that CPU's controller ID (x86: APIC ID)
 * @vector: target identity (x86: vector)
 * @managed: the vector is managed (reserved on every CPU of its mask)
 * @disabled: disabled by storm detection
 * @shutdown: a managed IRQ whose CPUs all went offline: no vector, its
 *            source masked until one of them returns (@cpu and @vector
 *            are where it was)
 * @masked: mask depth above zero
 * @chip: chip name ("PCI-MSI", "PCI-MSI-X", "IO-APIC", ...)
 * @owner: name of the first handler, or NULL
 * @bdf: the PCI function, when the IRQ belongs to one (else 0)
 * @hwirq: message number (MSI) or table index (MSI-X) or GSI (INTx)
 * @total: interrupts taken on all CPUs
 * @unhandled: unhandled count of the current storm window
 * @spurious_total: interrupts no handler claimed
 */
struct umsi_irq_info {
	uint32_t irq;
	uint32_t cpu;
	uint32_t hwid;
	uint32_t vector;
	bool managed;
	bool disabled;
	bool shutdown;
	bool masked;
	const char *chip;
	const char *owner;
	umsi_bdf_t bdf;
	uint32_t hwirq;
	uint64_t total;
	uint32_t unhandled;
	uint64_t spurious_total;
};

/**
 * umsi_irq_get_info - describe an IRQ
 * @sys: the system
 * @irq: the IRQ
 * @info: filled on success
 *
 * Return: 0 or -UMSI_ENOENT. Context: any (values may be stale by the time
 * they are read, as /proc/interrupts is).
 */
int umsi_irq_get_info(struct umsi_system *sys, uint32_t irq,
		      struct umsi_irq_info *info);

/**
 * umsi_irq_count - interrupts an IRQ has taken on one CPU
 * @sys: the system
 * @irq: the IRQ
 * @cpu: the CPU
 *
 * Return: the count (0 for an unknown IRQ or CPU). Context: any.
 */
uint64_t umsi_irq_count(struct umsi_system *sys, uint32_t irq, uint32_t cpu);

/**
 * umsi_irq_next - iterate over live IRQs
 * @sys: the system
 * @irq: 0 to start, else the last IRQ returned plus one
 *
 * Return: the lowest live IRQ number >= @irq, or -UMSI_ENOENT when none.
 * Context: any.
 */
int umsi_irq_next(struct umsi_system *sys, uint32_t irq);

/**
 * umsi_spurious_count - spurious interrupts seen on a CPU
 * @sys: the system
 * @cpu: the CPU
 *
 * Return: vectors taken on @cpu that had no IRQ. Context: any.
 */
uint64_t umsi_spurious_count(struct umsi_system *sys, uint32_t cpu);

/**
 * umsi_cpu_online - a CPU has come online
 * @sys: the system
 * @cpu: the CPU, already taking interrupts
 *
 * Its vectors become allocatable; managed IRQs shut down because their
 * whole mask was offline are started again on it.
 *
 * Return: 0, -UMSI_EINVAL for an unknown CPU, -UMSI_EBUSY when already
 * online. Context: process; may run beside anything (see "Concurrency").
 */
int umsi_cpu_online(struct umsi_system *sys, uint32_t cpu);

/**
 * umsi_cpu_offline - take a CPU out of service
 * @sys: the system
 * @cpu: the CPU; it must still take interrupts and cross-calls until this
 *       returns
 *
 * Unmanaged IRQs on @cpu move to other CPUs of their masks (or, when the
 * mask has no other online CPU, to any online CPU, as Linux does). Managed
 * IRQs move within their mask, or are shut down when no CPU of their mask
 * remains and started again when one returns. Nothing leaks.
 *
 * Return: 0; -UMSI_ENOSPC when the other CPUs have no room for the IRQs
 * (nothing moved, the CPU stays online); -UMSI_EINVAL; -UMSI_EBUSY for the
 * last online CPU; -UMSI_EAGAIN when an IRQ there is being set up or
 * changed by another caller (the CPU stays online; try again); the error
 * of a move that failed. Context: process; may run beside anything (see
 * "Concurrency").
 */
int umsi_cpu_offline(struct umsi_system *sys, uint32_t cpu);

/**
 * umsi_cpu_hwid - the interrupt controller's name for a CPU
 * @sys: the system
 * @cpu: CPU number
 *
 * Return: what the host's cpu_hwid() said (x86: the APIC ID), or
 * 0xffffffff for an unknown CPU. Context: any.
 */
uint32_t umsi_cpu_hwid(struct umsi_system *sys, uint32_t cpu);

/**
 * umsi_cpu_count - number of possible CPUs
 * @sys: the system
 *
 * Return: the host's cpu_count(). Context: any.
 */
uint32_t umsi_cpu_count(struct umsi_system *sys);

/**
 * umsi_system_matrix - the system's vector allocator, for statistics
 * @sys: the system
 *
 * Return: the matrix; read it only through the umsi/matrix.h statistics
 * functions. Context: any.
 */
const struct umsi_matrix *umsi_system_matrix(struct umsi_system *sys);

/**
 * umsi_format_interrupts - write a table like /proc/interrupts
 * @sys: the system
 * @buf: output buffer
 * @len: its size; the text is truncated (and still NUL-terminated) if short
 *
 * One header line of CPUs, then per IRQ: number, per-CPU counts, chip,
 * hardware number, owner; then a SPU line of spurious counts.
 *
 * Return: the length the whole table needs (excluding the NUL), like
 * snprintf. Context: process.
 */
size_t umsi_format_interrupts(struct umsi_system *sys, char *buf, size_t len);

/**
 * umsi_format_vectors - write a per-CPU vector summary like Linux's
 * debugfs vector view
 * @sys: the system
 * @buf: output buffer
 * @len: its size
 *
 * Return: as umsi_format_interrupts(). Context: process.
 */
size_t umsi_format_vectors(struct umsi_system *sys, char *buf, size_t len);

#endif /* UMSI_IRQ_H */
