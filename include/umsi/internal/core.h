/* SPDX-License-Identifier: MIT */
/*
 * umsi/internal/core.h - the IRQ core's structures and the services it
 * offers the layers above it (src/pci).
 *
 * Not a public interface: it changes without notice. Embedders use
 * umsi/irq.h and umsi/pci.h. The core knows no bus and no controller: a
 * source is reached through its chip (struct umsi_irq_chip), the
 * controller through the back end (umsi/internal/ctl.h).
 */
#ifndef UMSI_INTERNAL_CORE_H
#define UMSI_INTERNAL_CORE_H

#include <stdatomic.h>
#include <umsi/internal/cpumask.h>
#include <umsi/internal/ctl.h>
#include <umsi/internal/idmap.h>
#include <umsi/internal/lib.h>
#include <umsi/irq.h>
#include <umsi/internal/matrix.h>

struct umsi_irq_desc;

/*
 * Chip operations: how an IRQ's source is masked, programmed and
 * described. The 2003 patch had two MSI chip types, with and without mask bits;
 * a chip without ->mask gets "lazy" masking from the core.
 */
struct umsi_irq_chip {
	const char *name;
	/* Hardware mask/unmask; NULL when the source has no mask bit. */
	int (*mask)(struct umsi_system *sys, struct umsi_irq_desc *d);
	int (*unmask)(struct umsi_system *sys, struct umsi_irq_desc *d);
	/*
	 * Give the source the message @msg (composed by the core through the
	 * back end), with a protocol safe against the source firing at any
	 * moment. Called without the system lock. For a chip whose source
	 * cannot be masked (MSI without mask bits) the core guarantees that
	 * either the identity is unchanged or the new identity is also
	 * reserved and published on the old CPU, so every intermediate
	 * (address, data) pair reaches a live slot.
	 */
	int (*write_msg)(struct umsi_system *sys, struct umsi_irq_desc *d,
			 const struct umsi_msg *msg);
	/*
	 * Optional: called when the first handler is requested, before the
	 * IRQ is unmasked; a non-zero return refuses the request (the PCI
	 * layer refuses MSI with Bus Master Enable clear).
	 */
	int (*startup)(struct umsi_system *sys, struct umsi_irq_desc *d);
	/* Optional: fill the source fields of @info (bdf) for statistics. */
	void (*describe)(struct umsi_system *sys, const struct umsi_irq_desc *d,
			 struct umsi_irq_info *info);
	/*
	 * A wired input (IO-APIC redirection entry): its message is composed
	 * as a wired one (umsi_ctl.compose), so its CPU must be one such a
	 * message can name.
	 */
	bool wired;
};

/*
 * The chip of a quarantined descriptor: its source could not be proven
 * quiet, so it keeps its vector, counts and drops what arrives, and has
 * no operations at all (src/irq/desc.c).
 */
extern const struct umsi_irq_chip umsi_dead_chip;

/*
 * State of a new IRQ: umsi_irq_alloc() returns descriptors with mask depth
 * 1 ("not started"). The chip must leave the source masked in hardware
 * (where it can) until the first umsi_request_irq() unmasks it, as Linux
 * does; umsi_free_irq() of the last handler masks it again.
 */

/*
 * One handler attached to an IRQ. Dispatch calls @handler(irq, @arg) for
 * each: a handler of umsi_request_irq() with its dev_id as @arg; one of
 * umsi_request_irq_ctx() is a struct umsi_irq_action_ctx whose @handler
 * is umsi_irq_ctx_thunk and @arg the action itself, so umsi_dispatch()
 * calls every handler the same way (a NULL context) at no cost to the
 * others, and umsi_dispatch_ctx() calls those (flag UMSI_ACTION_CTX)
 * with the kernel's context directly.
 */
struct umsi_irq_action {
	umsi_handler_t handler;
	void *arg;
	const char *name;
	uint32_t flags;             /* UMSI_IRQF_*, UMSI_ACTION_CTX */
	const void *owner;          /* umsi_irq_request_owned(); NULL else */
	struct umsi_irq_action *_Atomic next;
};

#define UMSI_ACTION_CTX (1u << 31)

struct umsi_irq_action_ctx {
	struct umsi_irq_action a;
	umsi_handler_ctx_t handler;
	void *dev_id;
};

int umsi_irq_ctx_thunk(uint32_t irq, void *action);

static inline struct umsi_irq_action_ctx *
umsi_action_ctx(const struct umsi_irq_action *a)
{
	return (struct umsi_irq_action_ctx *)(void *)a;
}

/* The dev_id the handler was requested with. */
static inline void *umsi_action_dev_id(const struct umsi_irq_action *a)
{
	return a->flags & UMSI_ACTION_CTX ? umsi_action_ctx(a)->dev_id :
					    a->arg;
}

static inline size_t umsi_action_size(const struct umsi_irq_action *a)
{
	return a->flags & UMSI_ACTION_CTX ? sizeof(struct umsi_irq_action_ctx) :
					    sizeof(struct umsi_irq_action);
}

/*
 * What few IRQs need, apart from the descriptor (allocated by
 * umsi_desc_cold() in process context, when first needed: before an IRQ
 * first moves or is shut down, or when it joins an MSI block). Freed
 * with the descriptor.
 */
struct umsi_irq_cold {
	/*
	 * Slots a failed retarget may have left the source aimed at: kept
	 * allocated and published to this descriptor until it is released.
	 * While any exists the IRQ does not move again. [lock]
	 */
	struct umsi_irq_stray {
		uint32_t cpu;
		uint32_t vector;
		bool managed;
	} strays[2];
	uint8_t nstrays;
	uint8_t block_order;        /* MSI block: log2 of vectors, on leader */
	uint8_t group_order;        /* group: log2 of members, on leader */
	/*
	 * Statistics. Interrupts are counted where they arrive, per CPU and
	 * vector (umsi_vslot.count, beside the slot); when the IRQ leaves a
	 * (CPU, vector), its count there is folded into @hist, one entry per
	 * CPU it has left: memory per IRQ grows with the CPUs it visited,
	 * not with the machine. [process context, busy or lock]
	 */
	struct umsi_irq_hist {
		uint32_t cpu;
		uint64_t count;
	} *hist;
	uint32_t nhist, hist_cap;
	struct umsi_irq_desc *block_leader;  /* NULL unless in an MSI block */
	/*
	 * An MSI block whose messages the back end translates one by one
	 * (umsi_ctl_domain.block_targets): each member its own IRQ, block_leader
	 * NULL; @group_leader names the first, which holds @group_order.
	 */
	struct umsi_irq_desc *group_leader;
};

/*
 * An IRQ descriptor. Fields marked [lock] change under sys->lock only.
 * Hot fields first: dispatch reads the first 16 bytes (irq, gate,
 * actions). 128 bytes on a 64-bit machine; what only some IRQs need is
 * in @cold.
 */
struct umsi_irq_desc {
	uint32_t irq;
	/*
	 * Masking and storm disabling in one word, so that dispatch tests
	 * one: the low bits (UMSI_GATE_DEPTH) count the masks
	 * (umsi_irq_mask), UMSI_GATE_DISABLED is set while storm detection
	 * has disabled the IRQ. Nonzero: not handed to a handler. Read
	 * through umsi_desc_mask_depth() / umsi_desc_disabled().
	 */
	atomic_uint gate;
	/*
	 * Handlers, published with release stores: the first one's address,
	 * with UMSI_ACTIONS_ONE set when it is the only one and plain (no
	 * kernel context), so that dispatch calls it without looking
	 * further. Read through umsi_desc_actions(); written under the lock
	 * (umsi_desc_set_actions).
	 */
	_Atomic uintptr_t actions;
	uint32_t hwirq;             /* number within its source (chip's) */
	/* The requester its bus names it by (umsi_ctl_irq.source_id). */
	uint32_t source_id;
	/* Messages its source can send (umsi_ctl_irq.source_events). */
	uint32_t source_events;
	/*
	 * Target: a CPU and the identity it takes (its slot: sys->cpus[cpu]
	 * .slot[vector]). Written under the lock; walkers read them without
	 * it (atomics, relaxed). @local is what the matrix gave on @cpu,
	 * which balances the CPUs; @vector is the identity the back end's
	 * domain made of it (umsi_ctl_domain: the same number per CPU, or
	 * a global identity that stays for the IRQ's life). [lock]
	 */
	uint32_t local;
	_Atomic uint32_t cpu;
	_Atomic uint32_t vector;
	const struct umsi_irq_chip *chip;
	void *chip_data;            /* the chip's per-IRQ state */
	/* Quarantine: the owner (opaque, the PCI function) and the list. */
	const void *owner;
	struct umsi_irq_desc *next_dead;     /* sys->quarantine [lock] */
	/* Strays, history, MSI block or group: NULL until needed. */
	struct umsi_irq_cold *_Atomic cold;
	/*
	 * Affinity: CPUs [aff_first, aff_first + aff_count) when aff_words
	 * is NULL (every mask a range, the common case, costs no memory per
	 * CPU), else the words (sys->mask_words long). umsi_aff_*() below.
	 */
	uint32_t aff_first, aff_count;
	uint64_t *aff_words;
	/* Storm detection (src/irq/dispatch.c), written in interrupts. */
	_Atomic uint64_t unhandled_total;
	_Atomic uint64_t last_unhandled_ns;
	atomic_uint storm_count;
	atomic_uint storm_unhandled;
	/* The back end holds a resource for it (umsi_ctl.release). */
	bool composed;
	bool managed;
	atomic_bool shutdown;       /* managed, whole mask offline */
	/* Activated (umsi_irq_activate): from then on owned through busy. */
	bool active;
	/* Process-context changes of this IRQ are exclusive (EAGAIN). */
	atomic_bool busy;
	atomic_bool replay;         /* an interrupt noted while masked */
};

/* The descriptor's cold part, or NULL (none needed yet). */
static inline struct umsi_irq_cold *
umsi_desc_cold_of(const struct umsi_irq_desc *d)
{
	return atomic_load_explicit(&d->cold, memory_order_acquire);
}

/* The leader of @d's MSI block (itself for the leader), or NULL. */
static inline struct umsi_irq_desc *
umsi_block_leader(const struct umsi_irq_desc *d)
{
	struct umsi_irq_cold *c = umsi_desc_cold_of(d);

	return c ? c->block_leader : NULL;
}

/* The first IRQ of @d's group (one IRQ a message), or NULL. */
static inline struct umsi_irq_desc *
umsi_group_leader(const struct umsi_irq_desc *d)
{
	struct umsi_irq_cold *c = umsi_desc_cold_of(d);

	return c ? c->group_leader : NULL;
}

/* Slots a failed retarget left the IRQ holding. [lock] */
static inline unsigned umsi_desc_nstrays(const struct umsi_irq_desc *d)
{
	struct umsi_irq_cold *c = umsi_desc_cold_of(d);

	return c ? c->nstrays : 0;
}

#define UMSI_ACTIONS_ONE ((uintptr_t)1)

/* The IRQ's first handler (the list goes on through ->next), or NULL. */
static inline struct umsi_irq_action *
umsi_desc_actions(const struct umsi_irq_desc *d)
{
	return (struct umsi_irq_action *)(atomic_load_explicit(&d->actions,
		memory_order_acquire) & ~UMSI_ACTIONS_ONE);
}

/*
 * Make @first the IRQ's first handler, tagged when it is alone and plain.
 * Called under the lock after every change of the list.
 */
static inline void umsi_desc_set_actions(struct umsi_irq_desc *d,
					 struct umsi_irq_action *first)
{
	uintptr_t w = (uintptr_t)first;

	if (first && !atomic_load(&first->next) &&
	    !(first->flags & UMSI_ACTION_CTX))
		w |= UMSI_ACTIONS_ONE;
	atomic_store_explicit(&d->actions, w, memory_order_release);
}

#define UMSI_GATE_DISABLED (1u << 31)
#define UMSI_GATE_DEPTH (UMSI_GATE_DISABLED - 1)

/* How many times the IRQ is masked by its users. */
static inline unsigned umsi_desc_mask_depth(struct umsi_irq_desc *d)
{
	return atomic_load(&d->gate) & UMSI_GATE_DEPTH;
}

/* Whether storm detection has disabled the IRQ. */
static inline bool umsi_desc_disabled(struct umsi_irq_desc *d)
{
	return atomic_load(&d->gate) & UMSI_GATE_DISABLED;
}

/* One identity of one CPU: who holds it, and what it took. */
struct umsi_vslot {
	struct umsi_irq_desc *_Atomic d;
	_Atomic uint64_t count;
};

/* Per-CPU state. */
struct umsi_cpu {
	/*
	 * identity -> descriptor, the "vector indexing" table, with the
	 * interrupts taken on each identity by the descriptor that holds it
	 * (side by side: dispatch reaches both with one index), where the
	 * back end's domain puts it (umsi_ctl_domain.slot_base): sys->nids
	 * entries of its own, or the whole table that every CPU shares
	 * (id_limit entries, indexed by a global identity).
	 */
	struct umsi_vslot *slot;
	uint32_t hwid;
	atomic_bool online;         /* written under the lock */
	bool reachable;             /* an MSI message can name this CPU */
	/* Dispatch generation: odd while in umsi_dispatch(). */
	atomic_uint dispatch_seq;
	_Atomic uint64_t spurious;
};

struct umsi_system {
	/* What the back end sees; first, see umsi_ctl_env(). */
	struct umsi_ctl_env env;
	uint32_t ncpus;
	uint32_t mask_words;
	uint32_t nids;              /* identities a CPU has (slot entries) */
	uint32_t id_limit;          /* identities dispatch accepts */
	struct umsi_cpu *cpus;
	/*
	 * The end of interrupt (umsi_ctl.eoi): the host's eoi(host, id); a
	 * no-op for a back end that needs none.
	 */
	void (*eoi)(void *host, uint32_t id);
	size_t cpus_size;
	struct umsi_vslot *slots;   /* every CPU's table, ncpus * nids */
	void *lock;                 /* protects matrix, irq table, targets */
	struct umsi_matrix *matrix;
	void *matrix_mem;
	size_t matrix_size;
	/* IRQ number -> descriptor */
	uint32_t max_irqs;
	uint32_t first_dynamic_irq;
	struct umsi_irq_desc *_Atomic *irqs;
	struct umsi_idmap irq_ids;  /* numbers in use [lock] */
	uint64_t *irq_ids_mem;
	size_t irq_ids_size;

	/* Storm detection settings. */
	uint32_t storm_threshold;
	uint64_t storm_quiet_ns;
	unsigned alloc_flags;       /* UMSI_MATRIX_SPREAD or 0 */
	/*
	 * A layer above the core (src/pci) keeps its state here and tears it
	 * down first at umsi_system_destroy() (umsi_system_set_upper).
	 */
	void *upper;
	void (*upper_fini)(struct umsi_system *sys);
	/* Placeholder left in a vector table slot an IRQ has just left. */
	struct umsi_irq_desc moved;
	/* CPUs a message can name, and whether that is all of them. */
	uint64_t *reachable;
	bool all_reachable;
	/* CPUs a wired input's message (IO-APIC) can name. */
	uint64_t *wired_reachable;
	bool all_wired_reachable;
	/* Scratch CPU mask for code under the lock (no allocation there). */
	uint64_t *scratch;
	/* Quarantined descriptors (umsi_irq_quarantine). [lock] */
	struct umsi_irq_desc *quarantine;
	/*
	 * Readers of the IRQ table outside dispatch (umsi_rd_begin): a
	 * descriptor is freed only once every reader that may have loaded it
	 * has left (umsi_rd_sync), as dispatch_seq does for dispatch.
	 */
	atomic_uint rd_epoch;
	atomic_uint rd_count[2];
	atomic_flag rd_syncing;
};

/*
 * A reader section: code that loads descriptors from the IRQ table and
 * uses them without owning them (walkers, statistics, public calls by IRQ
 * number). Lock-free; nests; any context. Returns the token for
 * umsi_rd_end().
 */
static inline unsigned umsi_rd_begin(struct umsi_system *sys)
{
	for (;;) {
		unsigned e = atomic_load(&sys->rd_epoch);

		atomic_fetch_add(&sys->rd_count[e & 1], 1);
		if (atomic_load(&sys->rd_epoch) == e)
			return e;
		atomic_fetch_sub(&sys->rd_count[e & 1], 1);
	}
}

static inline void umsi_rd_end(struct umsi_system *sys, unsigned e)
{
	atomic_fetch_sub(&sys->rd_count[e & 1], 1);
}

/*
 * Wait until every reader section begun before the call has ended.
 * Process context, no lock held; never from inside a reader section.
 * (src/irq/desc.c)
 */
void umsi_rd_sync(struct umsi_system *sys);

/* Bytes of one CPU mask of this system. */
static inline size_t umsi_sys_mask_bytes(const struct umsi_system *sys)
{
	return umsi_mask_bytes(sys->mask_words);
}

/* The slot of identity @id on @cpu. */
static inline struct umsi_vslot *umsi_slot(struct umsi_system *sys,
					   uint32_t cpu, uint32_t id)
{
	return &sys->cpus[cpu].slot[id];
}

/*
 * Register the layer above the core: @fini runs first at destroy and
 * must free @state. Context: process.
 */
void umsi_system_set_upper(struct umsi_system *sys, void *state,
			   void (*fini)(struct umsi_system *sys));

static inline umsi_irqflags_t umsi_lock(struct umsi_system *sys)
{
	return sys->env.ops->lock_acquire(sys->env.host, sys->lock);
}

static inline void umsi_unlock(struct umsi_system *sys, umsi_irqflags_t f)
{
	sys->env.ops->lock_release(sys->env.host, sys->lock, f);
}

/* ---- IRQ core services for the PCI layer (src/irq/desc.c) -------------- */

/**
 * umsi_irq_alloc - create IRQs with vectors, not yet attached to a source
 * @sys: the system
 * @chip: chip operations
 * @nvec: number of IRQs; with @block a power of two up to 32 that gets one
 *        aligned block of vectors on one CPU (multi-message MSI)
 * @block: allocate one aligned block of @nvec vectors
 * @affinity: allowed CPUs (NULL: every online reachable CPU)
 * @managed: reserve the vectors as managed
 * @out: @nvec descriptors; the caller sets chip_data and hwirq
 *
 * The descriptors hold IRQ numbers and vectors but are not published: no
 * walker (umsi_irq_next, affinity, CPU offline) and no dispatch can see
 * them until the caller has bound them to their source and published them
 * with umsi_irq_activate(). All-or-nothing; umsi_irq_release() undoes it.
 *
 * Return: 0, -UMSI_ENOSPC, -UMSI_ENOMEM, -UMSI_EINVAL. Context: process.
 */
int umsi_irq_alloc(struct umsi_system *sys, const struct umsi_irq_chip *chip,
		   uint32_t nvec, bool block, const struct umsi_cpumask *affinity,
		   bool managed, struct umsi_irq_desc **out);

/*
 * umsi_irq_alloc_numbered - umsi_irq_alloc() under the caller's IRQ
 * numbers (@irqs, @nvec of them, or NULL for the lowest free): each below
 * max_irqs (-UMSI_EINVAL), distinct (-UMSI_EINVAL) and free (-UMSI_EBUSY).
 */
int umsi_irq_alloc_numbered(struct umsi_system *sys,
			    const struct umsi_irq_chip *chip, uint32_t nvec,
			    bool block, const struct umsi_cpumask *affinity,
			    bool managed, const uint32_t *irqs,
			    struct umsi_irq_desc **out);

/**
 * umsi_irq_alloc_at - create one IRQ with a given number (INTx: the GSI)
 * @sys: the system
 * @irq: the number wanted
 * @chip: chip operations
 * @out: the descriptor
 *
 * Return: 0, -UMSI_EBUSY when the number is taken, -UMSI_ENOSPC,
 * -UMSI_ENOMEM, -UMSI_EINVAL. Context: process.
 */
int umsi_irq_alloc_at(struct umsi_system *sys, uint32_t irq,
		      const struct umsi_irq_chip *chip,
		      struct umsi_irq_desc **out);

/*
 * Own an activated descriptor for tear-down: wait while a walker moves it
 * (its claim ends when the move has). Before activation, and once
 * quarantined, the caller owns it already. [process context]
 */
static inline void umsi_irq_take(struct umsi_irq_desc *d)
{
	bool expect;

	if (!d->active || d->chip == &umsi_dead_chip)
		return;
	for (;;) {
		expect = false;
		if (atomic_compare_exchange_weak(&d->busy, &expect, true))
			return;
	}
}

/*
 * umsi_irq_spread_mask - the CPUs of IRQ @i of @n spread over the CPUs a
 * message can reach (managed MSI-X): an even share each, or one CPU each
 * round robin when there are more IRQs than CPUs; written to @words
 * (umsi_sys_mask_bytes() long). Context: process.
 */
void umsi_irq_spread_mask(struct umsi_system *sys, uint32_t i, uint32_t n,
			  uint64_t *words);

/**
 * umsi_irq_release - destroy IRQs made by umsi_irq_alloc()
 * @sys: the system
 * @descs: the descriptors (all of one block, when allocated as a block)
 * @n: how many
 *
 * Unpublishes them, waits until no CPU is still dispatching them, returns
 * the vectors and frees the memory. Handlers still attached are dropped.
 * Context: process.
 */
void umsi_irq_release(struct umsi_system *sys, struct umsi_irq_desc **descs,
		      uint32_t n);

/* The most messages one multi-message MSI function may get (1..32). */
uint32_t umsi_irq_max_block(struct umsi_system *sys);

/*
 * Whether @d is a member of a multi-message MSI block whose messages are
 * IRQs of their own (the domain's block_targets): each member is composed
 * (umsi_irq_msg) and every compose gives the block's one message.
 * Context: any.
 */
bool umsi_irq_grouped(const struct umsi_irq_desc *d);

/**
 * umsi_irq_program - give @d's source the message for its current target
 * @sys: the system
 * @d: the descriptor, bound (chip_data set)
 *
 * Composes the message through the back end and has the chip write it.
 * Return: 0 or a negative code (nothing written then, or what the chip
 * says). Context: process.
 */
int umsi_irq_program(struct umsi_system *sys, struct umsi_irq_desc *d);

/**
 * umsi_irq_msg - the message that reaches @d's current target
 * @sys: the system
 * @d: the descriptor
 * @msg: filled on success
 *
 * For a source that must hold its message before it can be enabled
 * (MSI writes it before MSI Enable). Return: 0 or a negative code.
 */
int umsi_irq_msg(struct umsi_system *sys, struct umsi_irq_desc *d,
		 struct umsi_msg *msg);

/**
 * umsi_irq_publish - make bound descriptors visible, still claimed
 * @sys: the system
 * @descs: descriptors from umsi_irq_alloc() or umsi_irq_alloc_at(), with
 *         chip_data set
 * @n: how many
 *
 * Publishes them in the IRQ table and their CPUs' slots: dispatch takes
 * what their source sends (counted, replayed on the first request) and
 * walkers see them, but they stay claimed (busy): affinity changes and CPU
 * offline get -UMSI_EAGAIN until umsi_irq_activate(), so the caller can
 * program the source from their target without it moving. Context: process.
 */
void umsi_irq_publish(struct umsi_system *sys, struct umsi_irq_desc **descs,
		      uint32_t n);

/**
 * umsi_irq_activate - end the claim: the source is programmed
 * @sys: the system
 * @descs: descriptors given to umsi_irq_publish()
 * @n: how many
 *
 * A CPU that went offline since the allocation (it could not move them
 * while claimed) is left now: the IRQ moves, or shuts down when managed.
 * Return: 0, or the error of such a move; the caller then tears them down
 * as it would after use (they are published). Context: process.
 */
int umsi_irq_activate(struct umsi_system *sys, struct umsi_irq_desc **descs,
		      uint32_t n);

/**
 * umsi_irq_quarantine - keep the vectors of IRQs whose source may still send
 * @sys: the system
 * @descs: the descriptors
 * @n: how many
 * @owner: what may still send (opaque; umsi_irq_release_owned() frees them)
 *
 * For a source that could not be proven quiet (a failed configuration
 * write while turning MSI off). Handlers are dropped (no CPU runs them
 * when this returns), the IRQ numbers are freed, and each descriptor
 * becomes a dead one (umsi_dead_chip, no chip_data) that stays published
 * on its vector and keeps its number (a remapping entry is named by it);
 * walkers (umsi_irq_next, affinity, CPU offline) pass it by: whatever the device still sends is counted and
 * acknowledged, and the vector is not handed to anyone else.
 */
static inline bool umsi_irq_dead(const struct umsi_irq_desc *d)
{
	return d->chip == &umsi_dead_chip;
}

void umsi_irq_quarantine(struct umsi_system *sys, struct umsi_irq_desc **descs,
			 uint32_t n, const void *owner);

/**
 * umsi_irq_release_owned - release the quarantined IRQs of @owner
 * @sys: the system
 * @owner: as given to umsi_irq_quarantine(); NULL releases every one
 *
 * Call when @owner can no longer send (removed, or proven quiet).
 * Return: how many descriptors were released.
 */
uint32_t umsi_irq_release_owned(struct umsi_system *sys, const void *owner);

/* Hand @from's quarantined descriptors to @to. */
void umsi_irq_quarantine_transfer(struct umsi_system *sys, const void *from,
				  const void *to);

/* Quarantined descriptors of @owner (NULL: all). */
uint32_t umsi_irq_quarantined(struct umsi_system *sys, const void *owner);

/**
 * umsi_irq_request_owned - umsi_request_irq() with an owner tag
 *
 * umsi_irq_free_owned() drops every handler with that tag: the PCI layer
 * tags handlers with their function, so removing one function from a
 * shared INTx line drops its handlers and no other's.
 */
int umsi_irq_request_owned(struct umsi_system *sys, uint32_t irq,
			   umsi_handler_t handler, uint32_t flags,
			   const char *name, void *dev_id, const void *owner);
/* Drop the handlers of @irq tagged @owner; returns how many. */
uint32_t umsi_irq_free_owned(struct umsi_system *sys, uint32_t irq,
			     const void *owner);
/* Handlers of @irq without an owner tag. */
uint32_t umsi_irq_untagged_handlers(struct umsi_system *sys, uint32_t irq);

/* ---- affinity and counts of a descriptor (src/irq/desc.c) ------------- */

/* Is @cpu in @d's affinity? */
bool umsi_aff_test(const struct umsi_system *sys, const struct umsi_irq_desc *d,
		   uint32_t cpu);
/* @d's affinity as words in @out (mask_words long). */
void umsi_aff_words(const struct umsi_system *sys,
		    const struct umsi_irq_desc *d, uint64_t *out);
/*
 * Set @d's affinity (NULL: every CPU). A range costs nothing; another
 * mask allocates its words. Return: 0 or -UMSI_ENOMEM (unchanged).
 * Context: process, no lock.
 */
int umsi_aff_set(struct umsi_system *sys, struct umsi_irq_desc *d,
		 const struct umsi_cpumask *m);
/* Room for @n more history entries. Context: process, no lock. */
/*
 * Give @d its cold part (struct umsi_irq_cold) if it has none: process
 * context. Returns 0 or -UMSI_ENOMEM.
 */
int umsi_desc_cold(struct umsi_system *sys, struct umsi_irq_desc *d);
int umsi_irq_hist_reserve(struct umsi_system *sys, struct umsi_irq_desc *d,
			  uint32_t n);
/*
 * @d no longer receives on (@cpu, @vector), and no CPU still dispatches
 * there: move the count into @d's history, zero the slot's counter.
 */
void umsi_irq_hist_fold(struct umsi_system *sys, struct umsi_irq_desc *d,
			uint32_t cpu, uint32_t vector);

/* Point @d's source at (@cpu, @id): compose and write, or the controller's
 * retarget command. Caller owns d->busy. */
int umsi_irq_retarget(struct umsi_system *sys, struct umsi_irq_desc *d,
		      uint32_t cpu, uint32_t id);

/*
 * Leave @d's CPU, which went offline: move it to another CPU it may use,
 * or shut it down when managed and none is left. Caller owns d->busy.
 * (src/irq/affinity.c)
 */
int umsi_irq_evacuate(struct umsi_system *sys, struct umsi_irq_desc *d,
		      uint32_t cpu);

/* Wait until no CPU is still in a dispatch begun before the call. */
void umsi_irq_sync(struct umsi_system *sys);

/* Look up a live descriptor (NULL when none). Context: any. */
struct umsi_irq_desc *umsi_irq_to_desc(struct umsi_system *sys, uint32_t irq);


#endif /* UMSI_INTERNAL_CORE_H */
