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
};

extern struct glue_dev gdevs[PCI_MAX_DEVS];

struct umsi_system *kernel_umsi_system(void);
void glue_fail(void);		/* a kernel check failed: exit FAIL */

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
void share_begin(void);

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

#endif /* KERNEL_GLUE_H */
