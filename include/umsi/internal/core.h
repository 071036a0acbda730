/* SPDX-License-Identifier: MIT */
/*
 * umsi/internal/core.h - private structures shared by src/irq and src/pci.
 *
 * Not a public interface: it changes without notice. Embedders use
 * umsi/irq.h and umsi/pci.h.
 */
#ifndef UMSI_INTERNAL_CORE_H
#define UMSI_INTERNAL_CORE_H

#include <stdatomic.h>
#include <umsi/internal/idmap.h>
#include <umsi/irq.h>
#include <umsi/matrix.h>

struct umsi_irq_desc;
struct umsi_pci_dev;
struct umsi_policy;

/*
 * Chip operations: how an IRQ's source is masked and retargeted. The seed
 * had two MSI chip types, with and without mask bits; a chip without
 * ->mask gets "lazy" masking from the core.
 */
struct umsi_irq_chip {
	const char *name;
	/* Hardware mask/unmask; NULL when the source has no mask bit. */
	int (*mask)(struct umsi_system *sys, struct umsi_irq_desc *d);
	int (*unmask)(struct umsi_system *sys, struct umsi_irq_desc *d);
	/*
	 * Point the source at (apic_id, vector) of @cpu with a protocol safe
	 * against the device firing at any moment. Called without the
	 * system lock. For a chip whose source cannot be masked (MSI
	 * without mask bits) the core guarantees that either the vector is
	 * unchanged or the new vector is also reserved on the old CPU, so
	 * every intermediate (address, data) pair reaches a live vector.
	 */
	int (*set_target)(struct umsi_system *sys, struct umsi_irq_desc *d,
			  uint32_t cpu, uint8_t vector);
	/*
	 * Optional: called when the first handler is requested, before the
	 * IRQ is unmasked; a non-zero return refuses the request (the PCI
	 * layer refuses MSI with Bus Master Enable clear).
	 */
	int (*startup)(struct umsi_system *sys, struct umsi_irq_desc *d);
	/* Level-triggered source (IO-APIC): EOI must also reach the IO-APIC. */
	bool level;
	/*
	 * The source sends compatibility-format messages only (an IO-APIC
	 * redirection entry): its CPU must be nameable without interrupt
	 * remapping, whatever the platform does for MSI.
	 */
	bool compat_dest;
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

/* One handler attached to an IRQ. */
struct umsi_irq_action {
	umsi_handler_t handler;
	void *dev_id;
	const char *name;
	uint32_t flags;
	const void *owner;          /* umsi_irq_request_owned(); NULL else */
	struct umsi_irq_action *_Atomic next;
};

/* An IRQ descriptor. Fields marked [lock] change under sys->lock only. */
struct umsi_irq_desc {
	uint32_t irq;
	const struct umsi_irq_chip *chip;
	void *chip_data;            /* the chip's per-IRQ state */
	umsi_bdf_t bdf;
	uint32_t hwirq;             /* MSI message, MSI-X index or GSI */
	/* The host's remapping back end holds an entry for it (remap_free). */
	bool remapped;
	/* Quarantine: the owner (opaque, the PCI function) and the list. */
	const void *owner;
	struct umsi_irq_desc *next_dead;     /* sys->quarantine [lock] */
	/*
	 * Slots a failed retarget may have left the source aimed at: kept
	 * allocated and published to this descriptor until it is released.
	 * While any exists the IRQ does not move again. [lock]
	 */
	struct umsi_irq_stray {
		uint32_t cpu;
		uint8_t vector;
		bool managed;
	} strays[2];
	uint8_t nstrays;
	/* Target. [lock] */
	uint32_t cpu;
	uint8_t vector;
	bool managed;
	bool shutdown;              /* managed, whole mask offline */
	uint8_t block_order;        /* MSI block: log2 of vectors, on leader */
	struct umsi_irq_desc *block_leader;  /* NULL unless in an MSI block */
	/*
	 * Affinity: CPUs [aff_first, aff_first + aff_count) when aff_words
	 * is NULL (every mask a range, the common case, costs no memory per
	 * CPU), else the words (sys->mask_words long). umsi_aff_*() below.
	 */
	uint32_t aff_first, aff_count;
	uint64_t *aff_words;
	/* Handlers, published with release stores. */
	struct umsi_irq_action *_Atomic actions;
	/* Process-context changes of this IRQ are exclusive (EAGAIN). */
	atomic_bool busy;
	/* Masking: depth, and an interrupt noted while lazily masked. */
	atomic_int mask_depth;
	atomic_bool replay;
	atomic_bool disabled;       /* by storm detection */
	/*
	 * Statistics. Interrupts are counted where they arrive, per CPU and
	 * vector (umsi_cpu.vcount); when the IRQ leaves a (CPU, vector), its
	 * count there is folded into @hist, one entry per CPU it has left:
	 * memory per IRQ grows with the CPUs it visited, not with the
	 * machine. [process context, busy or lock]
	 */
	struct umsi_irq_hist {
		uint32_t cpu;
		uint64_t count;
	} *hist;
	uint32_t nhist, hist_cap;
	_Atomic uint64_t unhandled_total;
	atomic_uint storm_count;
	atomic_uint storm_unhandled;
	_Atomic uint64_t last_unhandled_ns;
};

/* Per-CPU state. */
struct umsi_cpu {
	/*
	 * vector -> descriptor, the "vector indexing" table, and the
	 * interrupts taken on each vector by the descriptor that holds it
	 * (side by side and first: dispatch reaches both with one index).
	 */
	struct umsi_vslot {
		struct umsi_irq_desc *_Atomic d;
		_Atomic uint64_t count;
	} slot[256];
	uint32_t apic_id;
	bool online;                /* [lock] */
	bool reachable;             /* a message can name this CPU */
	/* Dispatch generation: odd while in umsi_dispatch(). */
	atomic_uint dispatch_seq;
	_Atomic uint64_t spurious;
};

struct umsi_system {
	const struct umsi_host_ops *ops;
	void *host;
	uint32_t plat_flags;
	uint32_t ncpus;
	uint32_t mask_words;
	struct umsi_cpu *cpus;
	size_t cpus_size;
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
	/* PCI layer. */
	struct umsi_pci_dev *devs;  /* list of added functions [lock] */
	struct umsi_policy *policy;
	/* Placeholder left in a vector table slot an IRQ has just left. */
	struct umsi_irq_desc moved;
	/* CPUs a message can name, and whether that is all of them. */
	uint64_t *reachable;
	bool all_reachable;
	/* CPUs a compatibility-format message (IO-APIC) can name. */
	uint64_t *compat_reachable;
	bool all_compat_reachable;
	/* Scratch CPU mask for code under the lock (no allocation there). */
	uint64_t *scratch;
	/* Quarantined descriptors (umsi_irq_quarantine). [lock] */
	struct umsi_irq_desc *quarantine;
};

/* Provided by src/pci for system tear-down. */
void umsi_pci_policy_free(struct umsi_system *sys);

/* ---- helpers for every layer ------------------------------------------ */

void umsi_log(struct umsi_system *sys, enum umsi_log_level lvl,
	      const char *fmt, ...);
void *umsi_zalloc(struct umsi_system *sys, size_t size);
void umsi_free(struct umsi_system *sys, void *p, size_t size);

static inline umsi_irqflags_t umsi_lock(struct umsi_system *sys)
{
	return sys->ops->lock_acquire(sys->host, sys->lock);
}

static inline void umsi_unlock(struct umsi_system *sys, umsi_irqflags_t f)
{
	sys->ops->lock_release(sys->host, sys->lock, f);
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
 * @out: @nvec descriptors; the caller sets chip_data, bdf and hwirq
 *
 * Descriptors are published in the IRQ table and the vector tables, so a
 * stray message to the new vectors is dispatched (and counted) instead of
 * being spurious. They are published claimed (busy): affinity changes and
 * CPU offline leave them alone (-UMSI_EAGAIN) until the caller has bound
 * them to their source and calls umsi_irq_activate(). All-or-nothing.
 *
 * Return: 0, -UMSI_ENOSPC, -UMSI_ENOMEM, -UMSI_EINVAL. Context: process.
 */
int umsi_irq_alloc(struct umsi_system *sys, const struct umsi_irq_chip *chip,
		   uint32_t nvec, bool block, const struct umsi_cpumask *affinity,
		   bool managed, struct umsi_irq_desc **out);

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

/**
 * umsi_irq_compose - the message that reaches @d's current target
 * @sys: the system
 * @d: the descriptor
 * @cpu: target CPU
 * @vector: target vector
 * @msg: the message
 *
 * Through the host's remapping back end when the platform remaps, else
 * the x86 format. Return: 0 or a negative code.
 */
int umsi_irq_compose(struct umsi_system *sys, struct umsi_irq_desc *d,
		     uint32_t cpu, uint8_t vector, struct umsi_msg *msg);

/**
 * umsi_irq_activate - descriptors are bound to their source
 * @sys: the system
 * @descs: descriptors from umsi_irq_alloc() or umsi_irq_alloc_at()
 * @n: how many
 *
 * Ends the claim taken at allocation: from now on affinity changes and CPU
 * offline may move them (which calls the chip with its chip_data).
 */
void umsi_irq_activate(struct umsi_system *sys, struct umsi_irq_desc **descs,
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
int umsi_irq_hist_reserve(struct umsi_system *sys, struct umsi_irq_desc *d,
			  uint32_t n);
/*
 * @d no longer receives on (@cpu, @vector), and no CPU still dispatches
 * there: move the count into @d's history, zero the slot's counter.
 */
void umsi_irq_hist_fold(struct umsi_system *sys, struct umsi_irq_desc *d,
			uint32_t cpu, uint8_t vector);

/* Wait until no CPU is still in a dispatch begun before the call. */
void umsi_irq_sync(struct umsi_system *sys);

/* Look up a live descriptor (NULL when none). Context: any. */
struct umsi_irq_desc *umsi_irq_to_desc(struct umsi_system *sys, uint32_t irq);

/* Format into a buffer; a subset of printf (see src/lib/format.c). */
size_t umsi_snprintf(char *buf, size_t len, const char *fmt, ...);

/* Freestanding memory helpers (src/lib/mem.c). */
void *umsi_memset(void *d, int c, size_t n);
void *umsi_memcpy(void *d, const void *s, size_t n);
int umsi_memcmp(const void *a, const void *b, size_t n);
size_t umsi_strlen(const char *s);

#endif /* UMSI_INTERNAL_CORE_H */
