/* SPDX-License-Identifier: MIT */
/*
 * sim_priv.h - the simulator's private structures, shared by its files.
 * Not installed, not stable.
 *
 * One mutex, sim->mtx, protects all machine state. It is never held while
 * calling out (dispatch, hook, cross-call functions), so callbacks may come
 * back into the sim. Functions named *_locked expect it held.
 */
#ifndef UMSI_SIM_PRIV_H
#define UMSI_SIM_PRIV_H

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>

#include "umsi_sim.h"

#define SIM_MAX_CPUS UMSI_SIM_MAX_CPUS
#define SIM_CFG_SIZE 4096

struct sim_xcall {
	void (*fn)(void *arg);
	void *arg;
	bool done;
	struct sim_xcall *next;
};

/*
 * What one CPU saw of one identity: the two counters every interrupt
 * moves, their low 16 bits (4 bytes a slot, 8192 CPUs x 256 vectors of
 * them). The rare ones (coalesced, unassigned) and the high bits are in a
 * map of their own (sim_rare_locked()); umsi_sim_id_stats() adds them up.
 */
struct sim_vec_stats {
	uint16_t delivered, dispatched;         /* low 16 bits */
};

/*
 * The rare counters of (CPU, identity): key cpu << 32 | id, plus 1; and
 * the high bits of the two common ones, past 65535.
 */
struct sim_rare {
	uint64_t key;
	uint32_t coalesced, unassigned;
	uint32_t delivered_hi, dispatched_hi;
};

struct sim_cpu {
	uint32_t apic_id;
	bool online;
	/*
	 * Interrupt-disable depth: locks held on this CPU, the handler being
	 * run, cross-calls, test disables. The CPU takes interrupts at 0.
	 */
	int irq_off;
	/* Threaded mode: the CPU thread is running a handler or cross-call. */
	bool busy;
	uint64_t irr[4], isr[4], tmr[4];
	/*
	 * IMSIC model: this hart's S-level interrupt file, eip and eie of
	 * sim->nids bits each (into sim->imsic_bits), eidelivery and
	 * eithreshold. ITS model: eip is the redistributor's LPI pending
	 * bits (sim->nids INTIDs), eie unused.
	 */
	uint64_t *eip, *eie;
	uint32_t eidelivery, eithreshold;
	/*
	 * Per-vector counters: sim->nids entries in sim->vec_stats (4 bytes
	 * each, with sim_rare for the rest), a block of its
	 * own so a CPU that never saw an interrupt costs no memory (the
	 * pages stay untouched); @vs_used says whether they were written.
	 */
	struct sim_vec_stats *vs;
	bool vs_used;
	/* Threaded mode. */
	pthread_t thread;
	pthread_cond_t cond;
	struct sim_xcall *xq_head, *xq_tail;
};

struct sim_bar {
	uint64_t size;          /* 0: not implemented */
	bool is64, io, prefetch;
	bool upper;             /* the upper half of the 64-bit BAR below */
};

/*
 * A function's write masks: built with it, then shared with every function
 * whose masks came out the same (sim_masks_intern_locked): 3525 functions
 * of two kinds hold two copies, not 3525. Never written once interned;
 * a reset builds new ones.
 */
struct sim_masks {
	unsigned int refs;
	uint8_t wmask[SIM_CFG_SIZE];  /* bits software may write */
	uint8_t w1c[SIM_CFG_SIZE];    /* bits a written 1 clears */
};

struct sim_dev {
	umsi_bdf_t bdf;
	bool present;
	struct umsi_sim_dev_desc desc;
	/*
	 * Configuration space: sim_cfg_size() bytes at @cfg, the first 256 in
	 * @cfg_low until the function has an extended capability or a test
	 * asks for the raw bytes; then 4 KiB of its own. Bytes past it read
	 * 0 and take no writes, as the zeros they were.
	 */
	uint8_t *cfg;
	uint8_t cfg_low[256];
	/* Which bits software may write, and which a written 1 clears. */
	struct sim_masks *m;
	struct sim_bar bars[6];
	uint16_t msi_off, msix_off, pcie_off;
	unsigned int msi_mmc;         /* log2 of messages capable */
	uint16_t msix_n;
	uint32_t *msix_tbl;           /* msix_n * 4 dwords */
	uint64_t *pba;
	bool intx_level;              /* the function's interrupt condition */
	bool intx_out;                /* what the pin drives now */
	bool route_override;
	int route_gsi;                /* with route_override; -1 unrouted */
	struct umsi_sim_dev_stats st;
	/* Bookkeeping of the lookups in sim_index.c. */
	size_t idx;                   /* position in sim->devs: decode order */
	uint64_t ix_base[6];          /* what the BAR index holds (0: none) */
	bool ix_dirty;                /* queued for a BAR re-check */
	bool raw_exposed;             /* cfg_raw handed out: always re-check */
	size_t intx_slot;             /* in sim->intx_active, with intx_out */
	/* SR-IOV: a PF's capability and VFs; a VF's PF. */
	uint16_t sriov_off;
	struct sim_dev **vfs;         /* desc.sriov.total_vfs slots */
	struct sim_dev *pf;
	uint16_t vf_index;
};

struct sim_map {
	void *base;                   /* the PROT_NONE reservation */
	size_t maplen;
	uint64_t phys_page;
	void *virt;                   /* what mmio_map returned */
	uint64_t len;                 /* what mmio_map was asked for */
};

/*
 * A phys_alloc() block: memory an interrupt controller model reads by
 * physical address (the ITS's tables and command queue).
 */
struct sim_phys {
	struct sim_phys *next;
	void *virt;
	uint64_t phys;
	size_t size;
};

/*
 * A redistributor's LPI registers (sim_its.c). While @enabled the tables
 * at PROPBASER and PENDBASER are used (a software-managed redistributor);
 * @held marks the pending LPIs its property table disabled.
 */
struct sim_gicr {
	bool enabled;                 /* GICR_CTLR.EnableLPIs */
	bool ptz;                     /* PENDBASER last written with PTZ */
	uint64_t propbaser, pendbaser;
	uint64_t *held;               /* sim->nids bits, from the 1st enable */
};

/* The ITS model's registers (sim_its.c); its tables live in memory. */
struct sim_its {
	uint64_t base;
	struct sim_gicr *rd;          /* one redistributor per CPU */
	uint32_t ctlr;                /* Enabled */
	uint64_t cbaser;
	uint64_t baser[8];
	uint32_t cwriter, creadr;     /* byte offsets */
	bool stalled;
	bool silent;                  /* umsi_sim_its_silent(): reads none */
	struct umsi_sim_its_stats st;
};

/* One interrupt entry cache slot of the VT-d unit (sim_vtd.c). */
struct sim_vtd_iec {
	uint64_t gen;                 /* == sim_vtd.gen: valid */
	uint64_t lo, hi;
};

struct sim_vtd_fault {
	uint32_t sid, index, reason;
};

/*
 * A VT-d interrupt-remapping unit (sim_vtd.c): its registers, the
 * interrupt entry cache (@iec, 65536 slots, a slot valid while its @gen
 * equals @gen: a global invalidation is one increment) and every fault.
 */
struct sim_vtd {
	uint64_t base;                /* its 4 KiB of registers */
	/* What it remaps (struct umsi_vtd_unit); @all_segments: the one
	 * unit of config.vtd alone, every requester. */
	uint16_t segment;
	bool include_all, all_segments;
	struct umsi_rid_range *scope;
	uint32_t nscope;
	bool eim;
	uint32_t gsts, fsts, ics;
	uint32_t fri;
	uint64_t iqa, iqa_latched;    /* IQA as written, as QIE latched it */
	uint32_t iqh, iqt;            /* descriptor indices */
	uint64_t irta, irta_latched;  /* IRTA as written, as SIRTP latched */
	uint64_t frcd[UMSI_SIM_VTD_NFR][2];
	bool silent;
	uint64_t gen;
	struct sim_vtd_iec *iec;
	struct sim_vtd_fault *faults;
	size_t nfaults, faults_cap;
	struct umsi_sim_vtd_stats st;
};

/* alloc() blocks up to this size come from slabs (sim_slab.c). */
#define SIM_SLAB_MAX 256u
struct sim_slab;
bool sim_slab_enabled(void);
/* A block of @size (<= SIM_SLAB_MAX), poisoned; NULL when out of memory. */
void *sim_slab_alloc(struct umsi_sim *sim, size_t size);
/*
 * Free @ptr: 0 done; 1 not a slab block; -1 not a block or already
 * freed; -2 freed with @size but allocated with *@asked.
 */
int sim_slab_free(struct umsi_sim *sim, void *ptr, size_t size,
		  size_t *asked);
void sim_slab_fini(struct umsi_sim *sim);

/* Header in front of every other alloc() block (32 bytes: 16-byte alignment). */
struct sim_alloc_hdr {
	uint64_t magic;
	uint64_t size;
	struct sim_alloc_hdr *prev, *next;
};

struct sim_lock {
	struct sim_lock *prev, *next;
	uint32_t magic;
	bool held;
	uint32_t owner;
	pthread_t owner_thread;
	pthread_mutex_t m;
};

struct sim_rte {
	struct umsi_sim_rte r;
	bool active;                  /* input state seen by the last evaluation */
	/*
	 * IMSIC machines (an APLIC in MSI mode), and a VT-d machine's
	 * remappable entries (r.remappable): the message as programmed.
	 */
	uint64_t msg_addr;
	uint32_t msg_data;
	bool sent;                    /* sent since the input last rose */
	/*
	 * An AMD-Vi machine's entry (r.remappable, r.handle the index, which
	 * is its vector field, which EOIs match); the host's bookkeeping
	 * says after which CPU's EOI of which vector it ends the input at
	 * the EOI register (umsi/ctl.h UMSI_AMDVI_WIRED_*).
	 */
	bool amdvi;
	uint8_t eoi_vector;
	uint32_t eoi_apic;
	/* An Arm machine's SPI: the INTID raised on @spi_cpu, -1 once its
	 * dispatch there ended. */
	int spi_intid;
	uint32_t spi_cpu;
};

struct sim_irte {
	bool present;
	uint32_t irq, apic_id;
	uint8_t vector;
};

/* APIC ID -> CPU, sorted by APIC ID. */
struct sim_apic_ent {
	uint32_t apic_id, cpu;
};

/* One memory BAR that decodes: [base, last], in the old scan order. */
struct sim_bar_ent {
	uint64_t base, last;
	struct sim_dev *d;
	unsigned int bar;
};

/*
 * The interrupt controller a machine has: its registers as the CPU sees
 * them (read/write; the x86 local APIC by xAPIC offset, an IMSIC's
 * indirect registers, a GIC's LPI pending bit at 0x80000000 | INTID),
 * what the host's typed operations do with them (umsi/host.h eoi,
 * irq_pending, send_ipi: pending, eoi, ipi; an operation the controller
 * has no use for is a bad access); the bus side: what a message write
 * does; and the CPU side: which identity a CPU takes next, taking it, and
 * what is left when its handler returns. All under the sim lock.
 */
/* Where a wired input goes (struct sim_ctl_model, wired). */
enum sim_wired {
	SIM_WIRED_X86,		/* x86: IO-APIC entries, messages to the LAPICs */
	SIM_WIRED_APLIC,	/* RISC-V: an APLIC in MSI mode, to a file */
	SIM_WIRED_ARM_SPI,	/* Arm: an SPI the kernel dispatches */
};

struct sim_ctl_model {
	const char *name;
	uint64_t (*read)(struct umsi_sim *sim, uint32_t cpu, uint32_t reg);
	void (*write)(struct umsi_sim *sim, uint32_t cpu, uint32_t reg,
		      uint64_t val);
	bool (*pending)(struct umsi_sim *sim, uint32_t cpu, uint32_t id);
	void (*eoi)(struct umsi_sim *sim, uint32_t cpu, uint32_t id);
	void (*ipi)(struct umsi_sim *sim, uint32_t cpu, uint32_t hwid,
		    uint32_t id);
	/* A message write reaching the controller. Return: CPUs reached. */
	int (*deliver)(struct umsi_sim *sim, uint64_t address, uint32_t data);
	/* Where a message would land: CPU (UINT32_MAX: several) and identity. */
	bool (*target)(struct umsi_sim *sim, uint64_t address, uint32_t data,
		       uint32_t *cpu, uint32_t *id);
	/* The identity @cpu would take if it took interrupts now, or -1. */
	int (*next)(struct umsi_sim *sim, uint32_t cpu);
	/* @cpu takes @id (x86: IRR -> ISR; IMSIC: the kernel's stopei claim). */
	void (*take)(struct umsi_sim *sim, uint32_t cpu, uint32_t id);
	/* The dispatch of @id returned; @had_fn: a dispatch function ran. */
	void (*finish)(struct umsi_sim *sim, uint32_t cpu, uint32_t id,
		       bool had_fn);
	/* Make @id pending on @cpu once (an IPI; retrigger): 0 or -EINVAL. */
	int (*raise)(struct umsi_sim *sim, uint32_t cpu, uint32_t id);
	/* Pending identities are the local APIC's IRR (x86); else each
	 * CPU's eip bits, by identity. */
	bool irr;
	/* What a wired input (PCI INTx) reaches through sim_ioapic.c. */
	enum sim_wired wired;
	/* A wired input's message is one the controller resolves itself
	 * (target above), not an (APIC ID, vector) pair. */
	bool wired_target;
	/*
	 * SIM_WIRED_ARM_SPI: a wired input's SPI reached @cpu, and the
	 * kernel will dispatch its identity @id (umsi/ctl.h,
	 * UMSI_ARM_WIRED_MSG): make the INTID the dispatch function gets
	 * for @id pending there. Return: that INTID, or -UMSI_EINVAL.
	 */
	int (*wired_raise)(struct umsi_sim *sim, uint32_t cpu, uint32_t id);
	/* ... and that INTID, without raising it (-UMSI_EINVAL: none). */
	int (*wired_intid)(struct umsi_sim *sim, uint32_t id);
};

/*
 * One device model of the simulated machine: an interrupt controller
 * (IMSIC, ITS, GICv2m), a remapping unit (VT-d) or the wired inputs
 * (IO-APIC). The core reaches models only through this table, listed
 * once in sim_models.c: it names none of them. A model the
 * configuration does not ask for sets nothing up and answers no hook; a
 * hook a model has no part in is NULL.
 */
struct sim_model_ops {
	const char *name;
	/* The controller it provides (config.controller), or SIM_NO_CTL. */
	uint32_t controller;
	/* Set up what @cfg asks of it: 0, or -UMSI_E* (unfit configuration,
	 * no memory); fini is then called, as always, by sim_free(). */
	int (*init)(struct umsi_sim *sim, const struct umsi_sim_config *cfg);
	void (*fini)(struct umsi_sim *sim);
	/* A 32-bit access at @phys: true when the model owns the address. */
	bool (*mmio)(struct umsi_sim *sim, uint64_t phys, bool write,
		     uint32_t *val);
	/* A remapping unit that is set up on this machine. */
	bool (*remaps)(const struct umsi_sim *sim);
	/* A remapping unit: a message from @rid on its way to the
	 * controller. True when the unit took it (*@n CPUs reached;
	 * *@apic_id and *@vector, when not NULL, where it went). */
	bool (*intercept)(struct umsi_sim *sim, uint32_t rid, uint64_t address,
			  uint32_t data, int *n, uint32_t *apic_id,
			  uint8_t *vector);
	/* ... where it would go, without sending: true when the unit
	 * decides (then *@ok, and *@apic_id and *@vector when ok). */
	bool (*target)(struct umsi_sim *sim, uint32_t rid, uint64_t address,
		       uint32_t data, bool *ok, uint32_t *apic_id,
		       uint8_t *vector);
	/* Wired inputs: the host operations intx_route and gsi_program, an
	 * input's level changed, a level-triggered vector's EOI broadcast
	 * (x86), and the live routes for umsi_sim_live_targets(). */
	int (*intx_route)(struct umsi_sim *sim, umsi_bdf_t bdf, uint8_t pin,
			  struct umsi_intx_route *route);
	int (*gsi_program)(struct umsi_sim *sim, uint32_t gsi,
			   const struct umsi_gsi_entry *e);
	void (*line)(struct umsi_sim *sim, uint32_t gsi);
	void (*eoi_broadcast)(struct umsi_sim *sim, uint8_t vector);
	/* A CPU's dispatch of identity @id returned (the kernel's end of
	 * it: an Arm level SPI is pending again if still asserted). */
	void (*done)(struct umsi_sim *sim, uint32_t cpu, uint32_t id);
	/* What the kernel does after the host's eoi of @id on @cpu (an
	 * AMD-Vi machine's IO-APIC inputs: their EOI register). */
	void (*host_eoi)(struct umsi_sim *sim, uint32_t cpu, uint32_t id);
	void (*targets)(struct umsi_sim *sim,
			void (*fn)(void *arg, const struct umsi_sim_target *t),
			void *arg, unsigned *n);
	/* A remapping unit that is on and may still read phys_alloc memory
	 * [@phys, @phys + @size) (its table, its queue, a table an entry of
	 * its points at): what it reads there, else NULL. */
	const char *(*reads)(struct umsi_sim *sim, uint64_t phys, size_t size);
	/* Its state, for umsi_sim_dump(); its counters to 0. */
	void (*dump)(struct umsi_sim *sim, FILE *out);
	void (*stats_reset)(struct umsi_sim *sim);
};

#define SIM_NO_CTL 0xffffffffu

/* sim_models.c: the registry, and the core's ways into it. */
extern const struct sim_model_ops *const sim_models[];
extern const size_t sim_nmodels;
bool sim_models_controller(uint32_t controller);
int sim_models_init(struct umsi_sim *sim, const struct umsi_sim_config *cfg);
void sim_models_fini(struct umsi_sim *sim);
bool sim_models_mmio_locked(struct umsi_sim *sim, uint64_t phys, bool write,
			    uint32_t *val);
bool sim_remap_present_locked(const struct umsi_sim *sim);
const char *sim_models_reads_locked(struct umsi_sim *sim, uint64_t phys,
				    size_t size);
bool sim_remap_intercept_locked(struct umsi_sim *sim, uint32_t rid,
				uint64_t address, uint32_t data, int *n,
				uint32_t *apic_id, uint8_t *vector);
bool sim_remap_target_locked(struct umsi_sim *sim, uint32_t rid,
			     uint64_t address, uint32_t data, bool *ok,
			     uint32_t *apic_id, uint8_t *vector);
int sim_wired_route_locked(struct umsi_sim *sim, umsi_bdf_t bdf, uint8_t pin,
			   struct umsi_intx_route *route);
int sim_wired_program_locked(struct umsi_sim *sim, uint32_t gsi,
			     const struct umsi_gsi_entry *e);
void sim_wired_line_locked(struct umsi_sim *sim, uint32_t gsi);
void sim_wired_eoi_locked(struct umsi_sim *sim, uint8_t vector);
void sim_wired_done_locked(struct umsi_sim *sim, uint32_t cpu, uint32_t id);
/* The kernel's part after CPU @cpu's EOI of @id (AMD-Vi: the IO-APIC). */
void sim_wired_host_eoi_locked(struct umsi_sim *sim, uint32_t cpu,
			       uint32_t id);
void sim_models_targets_locked(struct umsi_sim *sim,
			       void (*fn)(void *arg,
					  const struct umsi_sim_target *t),
			       void *arg, unsigned *n);
void sim_models_dump(struct umsi_sim *sim, FILE *out);
void sim_models_stats_reset_locked(struct umsi_sim *sim);

extern const struct sim_ctl_model sim_x86_lapic_model;
extern const struct sim_ctl_model sim_imsic_model;
extern const struct sim_ctl_model sim_its_model;
extern const struct sim_ctl_model sim_gicv2m_model;

struct umsi_sim {
	pthread_mutex_t mtx;
	pthread_cond_t idle_cond;     /* threaded: broadcast when a CPU idles */
	pthread_cond_t xdone_cond;    /* threaded: a cross-call completed */
	bool threaded, stopping;
	uint32_t plat_flags;
	const struct sim_ctl_model *ctl;  /* the controller model */
	uint32_t nids;                /* identities a CPU has: 256 on x86 */
	/* IMSIC model (sim_imsic.c). */
	uint64_t imsic_base;          /* file of CPU k: base + 0x1000 * k */
	uint32_t imsic_num_ids;
	uint64_t *imsic_bits;         /* every CPU's eip and eie */
	/* ITS model (sim_its.c); NULL on other machines. */
	struct sim_its *its;
	/* GICv2 + v2m model (sim_gicv2m.c); NULL on other machines. */
	struct sim_gicv2 *gicv2;
	/* The VT-d units (sim_vtd.c), nvtd of them; none without
	 * config.vtd or config.vtd_units. */
	struct sim_vtd *vtd;
	uint32_t nvtd;
	/* The AMD-Vi units (sim_amdvi.c), namdvi of them; none without
	 * config.amdvi or config.amdvi_units. */
	struct sim_amdvi *amdvi;
	uint32_t namdvi;
	/* The requester ID the IO-APIC's messages carry (sim_ioapic.c);
	 * with nioapics, each IO-APIC's inputs and ID (config.ioapics). */
	uint32_t ioapic_rid, nioapics;
	struct umsi_ioapic_source ioapics[UMSI_MAX_IOAPICS];
	/* Who writes the message being delivered (UMSI_SIM_NO_REQUESTER). */
	uint32_t msg_requester;
	/* phys_alloc() blocks, and where the next one goes. */
	struct sim_phys *phys;
	uint64_t next_phys;

	uint32_t ncpus;
	struct sim_cpu *cpus;
	struct sim_vec_stats *vec_stats;  /* ncpus x nids */
	struct sim_rare *rare;            /* open addressing, rare_cap slots */
	size_t nrare, rare_cap;
	struct sim_apic_ent *apic_index;  /* ncpus entries, by APIC ID */
	/* bit per CPU whose IRR (IMSIC: eip) is not empty */
	uint64_t *irr_cpus;
	uint32_t cur_cpu;             /* non-threaded; threaded default */
	uint32_t locks_held;          /* over all CPUs */
	bool through_locks;           /* non-threaded: see umsi_sim.h */
	uint64_t irr_bits;            /* IRR (eip) bits set over all CPUs */
	int (*dispatch)(void *arg, uint32_t cpu, uint8_t vector);
	int (*dispatch_id)(void *arg, uint32_t cpu, uint32_t id);
	void *dispatch_arg;

	struct sim_dev **devs;
	size_t ndevs, devs_cap;
	/* sim_index.c: BDF -> the latest function added there (hash). */
	struct sim_dev **dev_hash;
	size_t dev_hash_cap, dev_hash_used;
	/* sim_index.c: physical address -> memory BAR. */
	struct sim_bar_ent *bar_ix;   /* sorted by base */
	uint64_t *bar_maxlast;        /* prefix maximum of bar_ix[].last */
	size_t nbar_ix, bar_ix_cap;
	bool bar_ix_stale;            /* rebuild before the next decode */
	bool bar_ix_broken;           /* out of memory: decode by a scan */
	struct sim_dev **bar_dirty;   /* functions whose BARs may have moved */
	size_t nbar_dirty, bar_dirty_cap;
	bool bar_all_dirty;           /* one could not be queued: check all */
	struct sim_dev **bar_raw;     /* functions with raw_exposed */
	size_t nbar_raw, bar_raw_cap;
	bool bar_raw_overflow;        /* one could not be listed: check all */
	size_t nbridges;              /* functions of header type 1 */
	/* Functions driving their INTx pin (intx_out), in no order. */
	struct sim_dev **intx_active;
	size_t nintx_active, intx_active_cap;
	uint64_t next_mem32, next_mem64, next_io;

	struct sim_map *maps;         /* sorted by base: they never overlap */
	size_t nmaps, maps_cap;

	uint32_t npins;
	struct sim_rte *rtes;
	uint32_t amdvi_rtes;          /* entries with rtes[].amdvi */
	bool *gsi_ext;                /* externally driven level */

	/* Interrupt remapping (sim_ioapic.c), allocated at the first use. */
	struct sim_irte *irte;        /* UMSI_SIM_IRTE_COUNT entries */
	uint64_t *irte_busy;          /* bit per entry in use */
	uint64_t *irte_full;          /* bit per irte_busy word with no 0 */
	uint32_t *irte_by_irq;        /* hash: IRQ -> handle + 1, 0 empty */
	uint32_t irte_used;

	struct umsi_sim_stats st;
	struct umsi_sim_leaks lk;
	struct sim_alloc_hdr *allocs;  /* outstanding alloc() blocks */
	/* Small alloc() blocks (sim_slab.c): slabs, those with room by
	 * size class, and an index of their addresses. */
	struct sim_slab *slabs;
	struct sim_masks *masks_last;  /* the last masks interned (a ref) */
	struct sim_slab *slab_partial[SIM_SLAB_MAX / 16];
	uintptr_t *slab_index;
	size_t slab_index_cap, slab_index_used;
	struct sim_lock *locks;        /* live locks */
	uint64_t fail_countdown;
	int fail_err;
	void (*hook)(void *arg, enum umsi_sim_op op);
	void *hook_arg;

	uint64_t clock, tick;

	char *log;
	size_t log_len, log_cap;
	bool verbose;
};

/* sim_core.c */
void sim_lock(struct umsi_sim *sim);
void sim_unlock(struct umsi_sim *sim);
void sim_drain(struct umsi_sim *sim);
bool sim_in_irq(void);
uint32_t sim_current_cpu_locked(struct umsi_sim *sim);
void sim_logf_locked(struct umsi_sim *sim, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void sim_log_line_locked(struct umsi_sim *sim, char level, const char *msg);
void sim_bad_access_locked(struct umsi_sim *sim, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int sim_msg_write_locked(struct umsi_sim *sim, uint64_t address,
			 uint32_t data);
bool sim_msg_target_locked(struct umsi_sim *sim, uint64_t address,
			   uint32_t data, uint32_t *cpu, uint32_t *id);
int sim_undeliverable_locked(struct umsi_sim *sim, enum umsi_sim_undeliv why,
			     uint64_t address, uint32_t data);
void sim_pending_set_locked(struct umsi_sim *sim, uint32_t cpu);
void sim_pending_clear_locked(struct umsi_sim *sim, uint32_t cpu, bool empty);
int sim_lapic_accept_locked(struct umsi_sim *sim, uint32_t cpu,
			    uint8_t vector, bool level);
int sim_deliver_phys_locked(struct umsi_sim *sim, uint32_t apic_id,
			    uint8_t vector, bool level, uint64_t address,
			    uint32_t data);
int sim_deliver_logical_locked(struct umsi_sim *sim, uint32_t mask,
			       uint8_t vector, bool lowest, bool level,
			       uint64_t address, uint32_t data);
void sim_eoi_locked(struct umsi_sim *sim, uint8_t vector);
/* (@cpu, @id)'s rare counters, made when @make (NULL: none, or no memory). */
struct sim_rare *sim_rare_locked(struct umsi_sim *sim, uint32_t cpu,
				 uint32_t id, bool make);
/* An arrival of @id at @cpu found it pending already. */
void sim_coalesced_locked(struct umsi_sim *sim, uint32_t cpu, uint32_t id);
/* @id arrived at @cpu (pending now); @cpu took @id. */
void sim_delivered_locked(struct umsi_sim *sim, uint32_t cpu, uint32_t id);
void sim_dispatched_locked(struct umsi_sim *sim, uint32_t cpu, uint32_t id);
void sim_irq_enable_locked(struct umsi_sim *sim, uint32_t cpu);
void sim_cpu_kick_locked(struct umsi_sim *sim, uint32_t cpu);
int sim_run_on_cpu(struct umsi_sim *sim, uint32_t cpu,
		   void (*fn)(void *arg), void *arg);

/* sim_pci.c */
struct sim_dev *sim_dev_find(struct umsi_sim *sim, umsi_bdf_t bdf);
void sim_dev_free(struct sim_dev *d);
struct sim_masks *sim_masks_new(void);
void sim_masks_put(struct sim_masks *m);
/* Share @d's masks with the last function's when they are the same. */
void sim_masks_intern_locked(struct umsi_sim *sim, struct sim_dev *d);
/* A PF's VFs go (VF Enable cleared, or the PF reset). */
void sim_vfs_gone_locked(struct umsi_sim *sim, struct sim_dev *pf);
int sim_cfg_read_locked(struct umsi_sim *sim, struct sim_dev *d,
			uint16_t off, uint8_t width, uint32_t *val);
int sim_cfg_write_locked(struct umsi_sim *sim, struct sim_dev *d,
			 uint16_t off, uint8_t width, uint32_t val);
bool sim_cfg_access_ok(uint16_t off, uint8_t width);
/* @d's configuration space made the whole 4 KiB: 0 or -UMSI_ENOMEM. */
int sim_cfg_full(struct sim_dev *d);
int sim_dev_reset_locked(struct umsi_sim *sim, struct sim_dev *d,
			 bool keep_bars);
uint32_t sim_phys_read32_locked(struct umsi_sim *sim, uint64_t phys,
				bool counted);
void sim_phys_write32_locked(struct umsi_sim *sim, uint64_t phys,
			     uint32_t val, bool counted);

/* sim_ioapic.c */
int sim_dev_gsi_locked(struct umsi_sim *sim, struct sim_dev *d, uint8_t pin);
/* The bridge whose secondary bus is @bdf's bus, or NULL (sim_ioapic.c). */
struct sim_dev *sim_bridge_to_locked(struct umsi_sim *sim, umsi_bdf_t bdf);
/* The requester ID the root sees on @d's writes (sim_pci.c). */
uint32_t sim_requester_locked(struct umsi_sim *sim, const struct sim_dev *d);
int sim_remap_compose_locked(struct umsi_sim *sim, uint32_t irq,
			     uint32_t apic_id, uint8_t vector,
			     struct umsi_msg *msg);
void sim_remap_free_locked(struct umsi_sim *sim, uint32_t irq);
int sim_remap_lookup_locked(struct umsi_sim *sim, uint32_t index,
			    uint32_t *apic_id, uint8_t *vector);

bool sim_irr_test_current_locked(struct umsi_sim *sim, uint8_t vector);

/* sim_imsic.c */

/* sim_its.c */
int sim_msg_write_from_locked(struct umsi_sim *sim, uint32_t rid,
			      uint64_t address, uint32_t data);

/* sim_vtd.c */

/* sim_index.c */
int sim_apic_index_init(struct umsi_sim *sim);
uint32_t sim_cpu_of_apic_locked(const struct umsi_sim *sim, uint32_t apic_id);
int sim_dev_index_reserve(struct umsi_sim *sim);
void sim_dev_index_add(struct umsi_sim *sim, struct sim_dev *d);
void sim_bars_changed_locked(struct umsi_sim *sim, struct sim_dev *d);
void sim_bars_exposed_locked(struct umsi_sim *sim, struct sim_dev *d);
struct sim_dev *sim_decode_locked(struct umsi_sim *sim, uint64_t phys,
				  unsigned int *bar, uint64_t *off);
void sim_index_fini(struct umsi_sim *sim);

/* sim_pci.c (for the index) */
uint64_t sim_bar_base(const struct sim_dev *d, unsigned int i);

/* sim_host.c */
void sim_maps_fini(struct umsi_sim *sim);
void *sim_phys_ptr_locked(struct umsi_sim *sim, uint64_t phys, size_t len);
void sim_host_fini(struct umsi_sim *sim);

#endif /* UMSI_SIM_PRIV_H */
