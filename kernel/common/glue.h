/* SPDX-License-Identifier: MIT */
/*
 * glue.h - what the parts of the kernel's uMSI glue share: the record of
 * each PCI function (glue.c), the UMSI device lines (glue_report.c) and
 * the probe policy that shares the vectors (glue_share.c).
 */
#ifndef KERNEL_GLUE_H
#define KERNEL_GLUE_H

#include <stdbool.h>
#include <stdint.h>

#include <umsi/pci.h>

#include "pci.h"

struct kdev;
struct kdriver;

/* A vector given out by umsi.probe=all, with a handler that counts. */
struct probe_vec {
	uint32_t irq;
	volatile uint64_t count;
	volatile uint64_t wrong_cpu;
};

struct glue_dev {
	struct pci_dev *pci;
	struct umsi_pci_dev *udev;
	struct kdev *kd;	/* claimed by a kernel driver */
	int probe_err;		/* 0, or the error of alloc_irq_vectors */
	bool probed;
	bool to_serve;		/* a driver or umsi.probe=all will ask */
	uint32_t nvec;
	struct probe_vec *vecs;
	/* The probe policy (glue_share.c). */
	uint32_t want;		/* the most asked for (driver max, or offer) */
	uint32_t granted;	/* what the policy let it ask */
	const char *limit;	/* why granted < want: cpus, probe_max, share */
	bool msi_block;		/* will get a multi-message MSI block */
	bool gone;		/* surprise removal seen; reclaim pending */
};

/* The command line's say, read once at start. */
struct glue_settings {
	char dlist[64];		/* umsi.drivers= */
	bool have_dlist;
	bool probe_all;		/* umsi.probe=all */
	bool have_fire;		/* umsi.fire=N given */
	uint32_t fire;
};

/*
 * The glue's state: the record of every PCI function and the settings.
 * One for the kernel (glue.c); the parts of the glue get it as an
 * argument, none reaches it through a global.
 */
struct glue {
	struct glue_dev devs[PCI_MAX_DEVS];
	struct glue_settings cfg;
};

struct umsi_system *kernel_umsi_system(void);
void glue_fail(void);		/* a kernel check failed: exit FAIL */

/*
 * Give @g to driver @drv (its probe runs with kd->priv = @priv). On
 * failure the device is quieted and everything the probe took is given
 * back. Returns whether the driver took it.
 */
bool glue_claim(struct glue_dev *g, const struct kdriver *drv, void *priv);

/* The kernel driver the comma list @list (umsi.drivers=) gives @d, or NULL. */
const struct kdriver *glue_driver_for(const struct pci_dev *d, const char *list);

/* Would umsi.probe=all serve @g (it has MSI or MSI-X)? */
bool glue_probe_wanted(struct glue_dev *g);

/* umsi.probe=all for @g: g->granted vectors (or 1), counting handlers. */
void glue_probe_one(struct glue_dev *g);

/* Wake the boot CPU's work loop (any context). */
void glue_kick(void);

/* Make a claimed device raise @events interrupts per vector (fire lines). */
void glue_fire(struct glue_dev *g, uint32_t events);
void glue_fire_all(struct glue *gl);	/* umsi.fire=N: every claimed device */
void glue_report_all(struct glue *gl);	/* device lines of every function */

/*
 * umsi.forge=1 (x86): the edu forges messages with its DMA engine, one
 * UMSI forge line per case (glue_forge.c).
 */
void glue_forge(struct glue *gl);

/* A `step` line; with umsi.steps, wait for the harness's key press. */
void glue_step(const char *name);

/* ---- live events: hot plug (glue_hot.c), CPUs (glue_cpu.c) --------------- */

/*
 * A function pci_hot_scan() found: register it with uMSI as fresh from
 * reset (its slot was just powered on), give it to its driver or to
 * umsi.probe=all, print its device line and fire it (umsi.fire=N).
 * Returns 0, or -1 when uMSI refused it (reported).
 */
int glue_hot_add(struct glue *gl, int idx);

/*
 * Take function @idx away: stop its driver, free its vectors
 * (umsi_pci_free_irq_vectors), umsi_pci_remove(), free the driver's
 * memory. Works the same on a function that has already gone.
 */
void glue_hot_remove(struct glue *gl, int idx);

/* Functions gone by surprise where no hot-plug port looks after them:
 * each removed and given back (work loop). */
void glue_reclaim_gone(struct glue *gl);

/* Clear the work flag glue_kick() set, before the work is served. */
void glue_work_begin(void);

/* Vectors the matrix holds (unmanaged and managed in use). */
uint32_t glue_allocated(void);

/*
 * A driver found its function gone (all-ones): queue the reclaim for the
 * work loop (the caller may still be using @g).
 */
void glue_function_gone(struct glue_dev *g);

/*
 * umsi.sriov=BB:DD.F:N, umsi.sriov_cycles=K, umsi.sriov_nowait: a PF's
 * VFs enabled, served by its driver and disabled (glue_sriov.c).
 */
void glue_sriov(struct glue *gl);
/* The PF at @idx goes: its VFs first (glue_hot_remove). */
void glue_sriov_pf_removing(struct glue *gl, int idx);

/* umsi.offline= / umsi.online=: CPUs leave and come back (glue_cpu.c). */
void glue_cpu_events(struct glue *gl);

/*
 * One function's UMSI device line, split into continuation lines when
 * its vectors do not fit one (format in kernel/README.md). With
 * @check_pairs, every (APIC ID, vector) of a message is checked to be
 * used once in this round of reports (glue_report_start() begins one).
 */
void glue_report(struct glue_dev *g, bool check_pairs);
void glue_report_start(void);

/* ---- the probe policy (glue_share.c) ------------------------------------ */

/*
 * Before any function is served: count the functions that will ask
 * (g->to_serve set by the caller) and read `umsi.probe_max=`.
 */
void share_begin(struct glue *gl);

/*
 * What a driver of @g asking for @min..@max vectors (@admin of them not
 * per CPU) may ask uMSI for: at most one per online CPU plus @admin
 * (or `umsi.probe_max=`), and no more than leaves one vector for every
 * function still to be served; never below @min. Records want, granted
 * and limit in @g.
 */
uint32_t share_driver_budget(struct glue_dev *g, uint32_t min, uint32_t max,
			     uint32_t admin);

/*
 * After the drivers: divide what is left among the functions
 * umsi.probe=all will serve (@list, @n of them), each wanting what it
 * offers (capped by `umsi.probe_max=`): smallest wants first, each at
 * most an equal part of what remains (max-min fairness; an MSI block is a
 * power of two). Sets each one's want, granted and limit, and leaves
 * @list in the order to allocate in (MSI blocks first, largest first).
 */
void share_probe_plan(struct glue_dev **list, uint32_t n);

/* @g has been served (whatever it got): it needs no reserve any more. */
void share_served(struct glue_dev *g);

/* Why @g has fewer vectors than it wanted, or NULL. */
const char *share_shortfall(const struct glue_dev *g,
			    const struct umsi_pci_info *info);

/*
 * A numeric umsi.* parameter from 0 to @max: true with *@out when given
 * and valid; an invalid one is reported and ignored (glue.c).
 */
bool glue_cmdline_number(const char *key, uint64_t max, uint64_t *out);

#endif /* KERNEL_GLUE_H */
