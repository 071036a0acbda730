/* SPDX-License-Identifier: MIT */
/*
 * umsi/internal/ctl.h - the interrupt-controller back-end interface.
 *
 * Not a public interface: an embedder picks a back end by name
 * (umsi/ctl.h) and never calls one. The core (src/irq) and the PCI layer
 * (src/pci) know no controller; everything that depends on one is here:
 *
 *  - the identity space: how many identities a CPU has and which of them
 *    may be handed out (x86: 256 vectors a CPU, 0x20-0xeb; an IMSIC
 *    interrupt file: 1..num-ids). The core allocates from it with the
 *    matrix (umsi/matrix.h) and indexes its per-CPU dispatch tables by it;
 *  - the name of a CPU (hwid) and whether a message can name it;
 *  - the message that delivers identity @id to CPU @cpu (compose);
 *  - how an interrupt moves to another CPU: by rewriting the source's
 *    message (x86, IMSIC), or by a command to the controller that leaves
 *    the device's message alone (GICv3 ITS: MOVI);
 *  - "is @id still pending here", asked on the CPU an IRQ has left, and
 *    resending it on the new CPU;
 *  - end of interrupt.
 *
 * A back end reaches the hardware only through host primitives (umsi/host.h:
 * eoi, irq_pending and send_ipi for the current CPU's controller, MMIO,
 * configuration space, cross-calls), and checks at init that those it
 * needs are there. Each lives in src/arch/<controller>/.
 *
 * Contexts. init and cpu_init run once at umsi_system_create(), fini once
 * when a system whose init succeeded goes (umsi_system_destroy(), or a
 * later failure of umsi_system_create()); compose and
 * release in process context without the system lock (they may call the
 * host's remapping operations); pending runs on the CPU being asked,
 * inside run_on_cpu(), interrupts off; resend in any context.
 */
#ifndef UMSI_INTERNAL_CTL_H
#define UMSI_INTERNAL_CTL_H

#include <umsi/host.h>
#include <umsi/irq.h>
#include <umsi/matrix.h>
#include <umsi/msg.h>

struct umsi_system;

/*
 * What a back end sees of a system: the first member of struct
 * umsi_system (src/irq keeps the rest to itself).
 * @ops, @host: the host interface and its context
 * @plat_flags: UMSI_PLAT_* as the host reported them at creation
 * @ctl: the back end
 * @ctl_config: the back end's configuration, umsi_config.ctl_config as
 *              given at creation (NULL when none); the back end's init
 *              reads it and keeps what it needs
 * @priv: the back end's own state (init may set it; NULL otherwise)
 */
struct umsi_ctl_env {
	const struct umsi_host_ops *ops;
	void *host;
	uint32_t plat_flags;
	const struct umsi_ctl *ctl;
	const void *ctl_config;
	void *priv;
	/* The identity domain's own state (umsi_ctl_domain.init), or NULL. */
	void *domain_priv;
	/*
	 * Set by a back end's init whose controller has fewer identities in
	 * all than ncpus * nids (a GICv2m frame's SPIs): the global domain
	 * hands out no more. 0: no such limit.
	 */
	uint32_t domain_ids;
	/* The kernel ends interrupts itself (umsi_config.kernel_eoi): the
	 * host's eoi is not needed. */
	bool kernel_eoi;
};

static inline struct umsi_ctl_env *umsi_ctl_env(struct umsi_system *sys)
{
	return (struct umsi_ctl_env *)(void *)sys;
}

/**
 * struct umsi_ctl_domain - how a back end's identities relate to its CPUs
 *
 * The core takes a CPU and a local identity from the matrix (which
 * balances the CPUs, @nids identities each) for every target; the domain
 * says which identity dispatch then receives, where its slot is, and
 * what a move does to it. Two are offered, and a back end names one:
 *  - umsi_ctl_domain_per_cpu: every CPU its own space (x86 vectors, an
 *    IMSIC file's identities): the identity is the local one, each CPU
 *    has its own slot table, a move gives a new identity;
 *  - umsi_ctl_domain_global: identities unique across CPUs (GICv3 LPIs):
 *    an IRQ gets the lowest free one of 0..ncpus * nids - 1 (an MSI block
 *    an aligned run) for its whole life; one slot table serves every CPU,
 *    so a move keeps the identity and its slot (only the CPU changes; the
 *    back end's retarget moves it: an ITS's MOVI).
 *
 * @init: set the domain up for @ncpus CPUs of @nids local identities;
 *        *@ids: the identities dispatch accepts. Return 0 or -UMSI_ENOMEM.
 * @fini: undo @init. NULL-safe on a domain @init failed for.
 * @slot_base: where CPU @cpu's slots start in the one array of ncpus *
 *        @nids slots.
 * @take: the identities of @n new targets whose first local identity is
 *        @local (an MSI block: @n = @align = 2^k, one CPU, consecutive),
 *        first in *@id. Return 0 or -UMSI_ENOSPC. [system lock]
 * @give: give back @n identities from @id taken by @take. [system lock]
 * @move_id: the identity a target of identity @id has once its local
 *        identity is @local (a move, or a managed IRQ started again).
 * @in_use: whether @id of @cpu belongs to an IRQ now (tests and checks).
 * @block_targets: how many targets a multi-message MSI block of @n
 *        messages (2^k) needs: 1, one CPU and @n consecutive identities
 *        that move together; or @n, each message a target of its own (its
 *        own CPU and identity; it moves alone), because the controller
 *        translates each one separately (VT-d: an entry per message,
 *        addressed by subhandle: umsi_ctl_domain_per_message). Every
 *        member is then composed with @group_irq/@group_count set (struct
 *        umsi_ctl_irq), each compose must return the same message, the
 *        block's, which the source holds, and a move is @retarget of one
 *        member, which must not answer UMSI_CTL_REWRITE.
 */
struct umsi_ctl_domain {
	int (*init)(struct umsi_system *sys, uint32_t ncpus, uint32_t nids,
		    uint32_t *ids);
	void (*fini)(struct umsi_system *sys);
	size_t (*slot_base)(uint32_t cpu, uint32_t nids);
	int (*take)(struct umsi_system *sys, uint32_t local, uint32_t n,
		    uint32_t align, uint32_t *id);
	void (*give)(struct umsi_system *sys, uint32_t id, uint32_t n);
	uint32_t (*move_id)(uint32_t id, uint32_t local);
	bool (*in_use)(struct umsi_system *sys, uint32_t cpu, uint32_t id);
	uint32_t (*block_targets)(uint32_t n);
};

extern const struct umsi_ctl_domain umsi_ctl_domain_per_cpu;
extern const struct umsi_ctl_domain umsi_ctl_domain_per_message;
extern const struct umsi_ctl_domain umsi_ctl_domain_global;

/* The system's vector matrix, for a domain's in_use (src/irq). */
struct umsi_matrix *umsi_ctl_matrix(struct umsi_system *sys);

/* No requester: a wired input, or a source the bus does not name. */
#define UMSI_NO_SOURCE 0xffffffffu

/**
 * struct umsi_ctl_irq - what a back end knows of an IRQ's source
 * @irq: the IRQ number (of a multi-message block: its leader's)
 * @source_id: the requester the bus names the source by, which some
 *             controllers see with the message (a GICv3 ITS's DeviceID, an
 *             IOMMU's source-id): PCI: segment << 16 | bus << 8 | devfn;
 *             UMSI_NO_SOURCE when none
 * @index: the message's number at its source (MSI message, MSI-X entry,
 *         GSI): an ITS's EventID
 * @count: messages it stands for: 1, or a multi-message block's 2^k (the
 *         device sends @index..@index+@count-1 with the identities from
 *         the one composed onwards)
 * @wired: a wired input (IO-APIC redirection entry, APLIC), not an MSI
 * @group_irq, @group_count: a multi-message MSI block of a back end with
 *         @block_targets > 1 (umsi_ctl_domain): the block's first IRQ and its 2^k
 *         messages; this IRQ is message @index of it (and @count is 1).
 *         @group_count 0: not in such a block
 * @source_events: messages every source that shares @source_id can send
 *         at most, all together (a function's MSI-X table size or MSI
 *         multiple message capable count, summed over the functions behind
 *         a bridge that takes their requests over), so a controller can
 *         size per-requester state (an ITS's ITT); 0 when unknown. A
 *         controller that runs out of such state returns -UMSI_ENOSPC, and
 *         the PCI layer asks for fewer.
 */
struct umsi_ctl_irq {
	uint32_t irq;
	uint32_t source_id;
	uint32_t index;
	uint32_t count;
	bool wired;
	uint32_t source_events;
	uint32_t group_irq;
	uint32_t group_count;
};

/*
 * What umsi_ctl.retarget answers when the source's own message must change
 * for the move: the core composes it again (umsi_ctl.compose) and has the
 * source's chip write it.
 */
#define UMSI_CTL_REWRITE 1

/**
 * struct umsi_ctl_cpu - what a back end says about one CPU
 * @hwid: the controller's name for it (APIC ID, hart ID, MPIDR affinity)
 * @reachable: an MSI message can name it
 * @wired_reachable: a wired input's message (IO-APIC redirection entry,
 *                   APLIC) can name it; on x86 these messages are never
 *                   remapped by the x86 back end
 */
struct umsi_ctl_cpu {
	uint32_t hwid;
	bool reachable;
	bool wired_reachable;
};

/**
 * struct umsi_ctl - an interrupt-controller back end
 * @name: short name for logs ("x86-lapic")
 * @init: check the platform (contradictory flags are refused with a log
 *        line naming them) and the back end's configuration
 *        (umsi_ctl_env.ctl_config), and fill the identity space @space for
 *        @ncpus CPUs. It may take host resources (memory, mappings) into
 *        umsi_ctl_env.priv: @fini gives them back. Return 0, -UMSI_EINVAL
 *        or the host's error (then it holds nothing).
 * @fini: give back what @init took. Called once, after every IRQ is gone
 *        and before the system's memory is freed. Optional.
 * @cpu_init: fill @out for CPU @cpu (asks the host for its hwid). Return 0
 *        or the host's error.
 * @compose: the message delivering identity @id (and, for a block, the
 *        @ci->count identities from it) to CPU @cpu for the source @ci.
 *        May take a per-IRQ resource (a remapping entry, an ITS mapping)
 *        that @release gives back.
 *        Return 0; 1 when it holds such a resource for @irq; -UMSI_ERANGE
 *        (the CPU cannot be named), or the host's error (nothing held).
 * @release: give back what @compose took for @ci (called once, when the
 *        IRQ goes, if any compose of it succeeded). Optional.
 * @retarget: point @ci at (@cpu, @id) (a block: @ci->count identities
 *        from @id; with a global space @id is the one it has, only the
 *        CPU changes). Return 0 when the controller did it and the source
 *        keeps its message (a GICv3 ITS's MOVI; VT-d rewriting its
 *        entry); UMSI_CTL_REWRITE when the source's message is what
 *        changes (the x86 local APIC, an IMSIC, a wired input under VT-d):
 *        the core composes the new one and the source's chip writes it;
 *        or an error, after which the controller should still deliver to
 *        the old target. Required. How the move then ends is the same
 *        for every controller: the old CPU is asked (@pending) until it
 *        holds no copy of the old identity.
 * @pending: whether @id is pending (accepted, not yet taken) on the
 *        current CPU. Runs inside run_on_cpu().
 * @resend: make @id arrive on @cpu once (an IPI), for a copy that was
 *        pending on the CPU the IRQ left. Return 0 or a host error.
 * @eoi: umsi_dispatch() ends each interrupt it takes (except
 *        @spurious_id) with the host's eoi(id) on the current CPU (x86:
 *        the local APIC's EOI register); false: the controller needs no
 *        end of interrupt from uMSI (an IMSIC's claim through stopei
 *        ended it; a GICv3's EOIR is the kernel's). umsi_system_create()
 *        refuses a host without eoi when it is set.
 * @domain: how identities relate to CPUs (struct umsi_ctl_domain):
 *        umsi_ctl_domain_per_cpu or umsi_ctl_domain_global. The back end
 *        receives the domain's identity as @id everywhere (compose,
 *        retarget, pending, resend), adding its own base (LPI 8192 ...)
 *        where the hardware needs it; so does umsi_dispatch(). Required.
 * @max_block: the most messages one multi-message MSI function may get
 *        (a power of two, 1..32); optional, NULL means 32. x86 under
 *        interrupt remapping says 1: each message needs its own remapping
 *        entry, and the host interface has no consecutive entries.
 * @spurious_id: the identity the controller itself raises when it had
 *        nothing to deliver (x86: 0xff); it is never ended. Use a value
 *        outside the space when there is none.
 */
struct umsi_ctl {
	const char *name;
	int (*init)(struct umsi_system *sys, uint32_t ncpus,
		    struct umsi_matrix_config *space);
	void (*fini)(struct umsi_system *sys);
	int (*cpu_init)(struct umsi_system *sys, uint32_t cpu,
			struct umsi_ctl_cpu *out);
	int (*compose)(struct umsi_system *sys, const struct umsi_ctl_irq *ci,
		       uint32_t cpu, uint32_t id, struct umsi_msg *msg);
	void (*release)(struct umsi_system *sys, const struct umsi_ctl_irq *ci);
	int (*retarget)(struct umsi_system *sys, const struct umsi_ctl_irq *ci,
			uint32_t cpu, uint32_t id);
	bool (*pending)(struct umsi_system *sys, uint32_t id);
	int (*resend)(struct umsi_system *sys, uint32_t cpu, uint32_t id);
	bool eoi;
	const struct umsi_ctl_domain *domain;
	uint32_t (*max_block)(struct umsi_system *sys);
	uint32_t spurious_id;
};

#endif /* UMSI_INTERNAL_CTL_H */
