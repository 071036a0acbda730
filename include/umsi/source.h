/* SPDX-License-Identifier: MIT */
/*
 * umsi/source.h - the message-level API: interrupt targets for a source
 * whose messages the kernel writes itself.
 *
 * For a kernel whose own PCI layer programs MSI and MSI-X (address, data,
 * enable, vector control), as Linux's split between an MSI domain and the
 * PCI layer: uMSI allocates targets (a CPU and the controller's identity,
 * under an IRQ number the kernel may choose) and composes each target's
 * message for the back end in use (x86 with or without the extended
 * destination ID, VT-d remappable handles and subhandles, the IMSIC, the
 * ITS DeviceID/EventID); the kernel writes it, and writes again when uMSI
 * moves the target (affinity, CPU offline, migration) through the
 * write_msg callback it registered. uMSI never touches the device: no
 * configuration access, no MMIO, no mapping.
 *
 * A source is what the root complex sees as one requester: a PCI
 * function's MSI-X table or MSI capability, named by its requester ID
 * after bridge aliasing (the kernel's PCI layer knows its bridges). Its
 * message slots are numbered from 0: MSI-X table entries, or the messages
 * of a multi-message MSI block (one address, data + i).
 *
 * Concurrency: calls on one source are the kernel's to serialise (process
 * context). write_msg, mask and unmask are called in process context from
 * any uMSI call that moves or masks a target of the source (including
 * umsi_cpu_offline and umsi_irq_set_affinity on other sources' behalf),
 * never from umsi_dispatch, and never with uMSI's system lock held: they
 * may take the kernel's own PCI locks. uMSI's own driver API (umsi/pci.h)
 * is a client of this layer too: each function's MSI-X table and MSI
 * capability is a source whose operations are uMSI's table and
 * capability writers.
 */
#ifndef UMSI_SOURCE_H
#define UMSI_SOURCE_H

#include <umsi/irq.h>
#include <umsi/msg.h>
#include <umsi/types.h>

struct umsi_source;
struct umsi_cpumask;

/**
 * struct umsi_source_ops - what the kernel does to its device
 * @write_msg: required. Give message slot @index the message @msg.
 *             Called for each new target before umsi_source_alloc()
 *             returns (unless UMSI_TARGET_NO_WRITE) and on every move
 *             that changes what the device must send. For a
 *             multi-message MSI source only slot 0 is written (the
 *             block's one address and base data). The kernel writes it
 *             the way its device needs (MSI-X: a masked entry, or data
 *             then address for MSI without mask bits, as uMSI's own PCI
 *             layer does); 0, or a negative code, which fails the move
 *             (the target stays where it was).
 * @mask: optional. Mask slot @index (the MSI-X Vector Control bit, the
 *        MSI mask bit). NULL: uMSI masks lazily (an interrupt that comes
 *        while masked is held and delivered on unmask).
 * @unmask: optional, with @mask.
 * @startup: optional. Called when the first handler of target @irq (slot
 *           @index) is requested, before it is unmasked; a negative code
 *           refuses the request (uMSI's PCI layer refuses while Bus
 *           Master Enable is clear: the device could not send).
 */
struct umsi_source_ops {
	int (*write_msg)(void *ctx, uint32_t index, const struct umsi_msg *msg);
	int (*mask)(void *ctx, uint32_t index);
	int (*unmask)(void *ctx, uint32_t index);
	int (*startup)(void *ctx, uint32_t index, uint32_t irq);
};

/**
 * struct umsi_source_config - a source of messages
 * @requester_id: the ID its messages carry at the root complex, after
 *                bridge aliasing (bus << 8 | devfn of the function, or of
 *                the bridge that forwards them): VT-d source validation,
 *                the ITS DeviceID
 * @bdf: the function, for statistics (umsi_irq_info.bdf)
 * @nslots: message slots: the MSI-X table size (1..2048), or the MSI
 *          messages the capability offers (1..32) when @block
 * @block: multi-message MSI: targets are one aligned power-of-two block
 *         on one CPU, allocated and freed whole
 * @events: messages every function sharing @requester_id can send in all
 *          (an ITS sizes one table per DeviceID); 0: @nslots
 * @ops: the kernel's operations on the device; kept by pointer
 * @ctx: passed to each operation
 * @name: the chip name statistics tables show (umsi_format_interrupts);
 *        kept by pointer; NULL: "source"
 */
struct umsi_source_config {
	uint32_t requester_id;
	umsi_bdf_t bdf;
	uint32_t nslots;
	bool block;
	uint32_t events;
	const struct umsi_source_ops *ops;
	void *ctx;
	const char *name;
};

/**
 * umsi_source_create - register a source
 * @sys: the system
 * @cfg: the source; copied
 * @out: the new source
 *
 * Return: 0; -UMSI_EINVAL for a missing write_msg, @mask without
 * @unmask, @nslots out of range; -UMSI_ENOMEM. Context: process.
 */
int umsi_source_create(struct umsi_system *sys,
		       const struct umsi_source_config *cfg,
		       struct umsi_source **out);

/**
 * umsi_source_destroy - forget a source
 * @src: the source, with no target left (quarantined ones go now: the
 *       kernel says the device can no longer send, it was removed)
 *
 * Return: 0, or -UMSI_EBUSY when targets remain (nothing done).
 * Context: process.
 */
int umsi_source_destroy(struct umsi_source *src);

/* Flags of struct umsi_target_req. */
#define UMSI_TARGET_MANAGED  (1u << 0)  /* managed vectors (kept per CPU) */
#define UMSI_TARGET_SPREAD   (1u << 1)  /* spread over the CPUs, managed */
#define UMSI_TARGET_NO_WRITE (1u << 2)  /* no write_msg at allocation */

/* umsi_target_req.index: the lowest free slots. */
#define UMSI_SLOT_ANY (-1)

/**
 * struct umsi_target_req - targets to allocate
 * @count: how many (a block source: a power of two, the whole block)
 * @index: first slot (slots @index .. @index + @count - 1), or
 *         UMSI_SLOT_ANY for the lowest free slots one by one
 * @affinity: CPUs the targets may use (NULL: any); ignored with
 *            UMSI_TARGET_SPREAD
 * @flags: UMSI_TARGET_*
 * @irqs: the kernel's IRQ numbers for them, distinct and free (below
 *        umsi_config.max_irqs), or NULL for uMSI's own numbering
 * @min: 0: all @count or nothing; else at least @min, as many as the
 *       vectors and the controller have room for (not with @irqs or a
 *       block source)
 * @slots: the slots, one per target, distinct (sparse MSI-X entries);
 *         NULL: as @index says
 * @msgs: optional, @count entries: each target's message, as written
 */
struct umsi_target_req {
	uint32_t count;
	int32_t index;
	const struct umsi_cpumask *affinity;
	uint32_t flags;
	const uint32_t *irqs;
	uint32_t min;
	const uint32_t *slots;
	struct umsi_msg *msgs;
};

/**
 * umsi_source_alloc - allocate targets for a source
 * @src: the source
 * @req: what to allocate
 * @irqs_out: the IRQ number of each target, in slot order (@req->count)
 *
 * All or nothing (or from @req->min up). Each target starts masked as far
 * as uMSI is concerned: the kernel leaves its slot masked until the first
 * handler is requested (umsi_request_irq), which unmasks it through
 * @ops->unmask (without one, uMSI holds what arrives meanwhile and
 * delivers it then). Its message is written through @ops->write_msg
 * before this returns (unless
 * UMSI_TARGET_NO_WRITE: then the kernel writes umsi_source_msg()'s
 * message itself, under the same lock as its write_msg). From the return
 * on, a target may move, and the kernel is told through write_msg.
 *
 * Return: the number of targets (@req->count, or from @req->min up to
 * it; @irqs_out and @req->msgs hold that many); -UMSI_EINVAL (bad
 * request, a slot out of range or listed twice, a block count that is no
 * power of two); -UMSI_EBUSY (a slot or an IRQ number in use, or a block
 * source already has its block); -UMSI_ENOSPC (no vector, or the
 * controller has no room: an ITS table, a remapping table; a block
 * larger than umsi_source_max_block()); -UMSI_ENOMEM; or what write_msg
 * returned. Context: process.
 */
int umsi_source_alloc(struct umsi_source *src,
		      const struct umsi_target_req *req, uint32_t *irqs_out);

/**
 * umsi_source_msg - the message a target's slot must hold now
 * @src: the source
 * @irq: one of its targets
 * @msg: filled (for a block: the block's message, data of slot 0)
 *
 * Return: 0, -UMSI_ENOENT when @irq is not a target of @src.
 * Context: process.
 */
int umsi_source_msg(struct umsi_source *src, uint32_t irq,
		    struct umsi_msg *msg);

/* Flags of umsi_source_free(). */
#define UMSI_SOURCE_MAY_SEND (1u << 0)  /* the kernel could not silence it */

/**
 * umsi_source_free - free some targets of a source
 * @src: the source
 * @irqs: the targets (a block source: the whole block)
 * @n: how many
 * @flags: UMSI_SOURCE_MAY_SEND when the kernel could not make the device
 *         stop sending to them (a failed mask or disable): their vectors
 *         stay quarantined, counting what still arrives, until
 *         umsi_source_destroy()
 *
 * The kernel first makes the slots quiet (entries masked, or MSI off):
 * a vector never returns to the allocator while the device may send to
 * it. Handlers still attached are dropped. Other targets are untouched.
 *
 * Return: 0; -UMSI_ENOENT when one of @irqs is not a target of @src
 * (nothing freed); -UMSI_EINVAL for part of a block. Context: process.
 */
int umsi_source_free(struct umsi_source *src, const uint32_t *irqs,
		     uint32_t n, uint32_t flags);

/**
 * umsi_source_max_block - the largest multi-message block a source can get
 * @src: the source
 *
 * Return: 1..32 (1 under x86 interrupt remapping without subhandles, as
 * the back end says). Context: any.
 */
uint32_t umsi_source_max_block(struct umsi_source *src);

#endif /* UMSI_SOURCE_H */
