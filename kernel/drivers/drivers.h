/* SPDX-License-Identifier: MIT */
/*
 * drivers.h - the kernel's device drivers: just enough of each QEMU device
 * to make it raise interrupts on demand, so a test can count that every
 * event it caused produced exactly one handler call, on the CPU uMSI chose.
 *
 * A driver claims a PCI function by vendor/device ID when `umsi.drivers=`
 * names it (or says all). probe() takes vectors through the uMSI driver
 * API and attaches handlers; raise() causes one event on vector n; the
 * handler, through kdrv_event(), counts what arrives. At most one event is
 * outstanding per vector.
 */
#ifndef KERNEL_DRIVERS_H
#define KERNEL_DRIVERS_H

#include <umsi/irq.h>
#include <umsi/pci.h>

#include "kernel.h"
#include "pci.h"
#include "smp.h"

struct kdev;
struct glue_dev;

struct kvec {
	struct kdev *dev;
	uint32_t n;			/* vector number of the device */
	uint32_t hw;			/* MSI-X table index / MSI message */
	uint32_t irq;
	uint64_t sent;			/* events caused */
	volatile uint32_t outstanding;	/* an event is on its way */
	volatile uint64_t count;	/* handler calls that found one */
	volatile uint64_t wrong_cpu;	/* ... on another CPU than uMSI's */
	volatile uint64_t none;		/* handler calls that found nothing */
};

struct kdev {
	const struct kdriver *drv;
	struct pci_dev *pci;
	struct umsi_pci_dev *udev;
	struct umsi_system *sys;
	uint32_t nvec;
	uint32_t cap;			/* room in vecs (at least nvec) */
	struct kvec *vecs;
	umsi_handler_t handler;
	uint64_t bar0;			/* mapped BAR 0, when the driver uses it */
	uint32_t nfire;			/* vectors umsi.fire drives (0: all) */
	void *priv;
	struct glue_dev *glue;		/* the glue's record (probe policy) */
};

struct kdriver {
	const char *name;
	uint16_t vendor, device;
	/* Vectors that are not per CPU (admin queue, link, config): the
	 * probe policy lets a driver spread one per CPU plus these. */
	uint32_t admin;
	/* Allocate vectors and attach handlers; 0 or a negative UMSI_E*. */
	int (*probe)(struct kdev *d);
	/* Cause one event that must arrive on vector @n. */
	void (*raise)(struct kdev *d, uint32_t n);
	/* Optional, after firing: print a driver line; false on failure. */
	bool (*check)(struct kdev *d);
};

extern const struct kdriver edu_driver;
extern const struct kdriver e1000e_driver;
extern const struct kdriver nvme_driver;
extern const struct kdriver xhci_driver;

/*
 * Common probe step: allocate between @min and @max vectors of the types
 * in @flags, fill d->vecs and attach @handler to each with the kvec as
 * its cookie. The kernel's probe policy may lower @max (never below
 * @min): see kdrv_budget(). Returns the count or a negative UMSI_E* code.
 */
int kdrv_setup_vectors(struct kdev *d, uint32_t min, uint32_t max,
		       uint32_t flags, umsi_handler_t handler);

/*
 * How many of @min..@max vectors the probe policy lets @d ask for: one
 * per online CPU plus d->drv->admin (or `umsi.probe_max=`), and no more
 * than leaves one for every function still to be served (kernel/glue_share.c).
 */
uint32_t kdrv_budget(struct kdev *d, uint32_t min, uint32_t max);

/*
 * Attach d->handler to @irq as vector slot d->nvec (there must be room:
 * d->cap) and count it in. For MSI-X entries added at run time.
 */
int kdrv_add_vector(struct kdev *d, uint32_t irq);

/* Before raise(): one event is now outstanding on @v. */
void kdrv_expect(struct kvec *v);

/*
 * From a handler that found its event: claim the outstanding event, so
 * that two calls racing on two CPUs (a device repeating a message while
 * the IRQ moves) count it once. Returns false when it was already
 * claimed: the call is then "not mine". Checks the CPU.
 */
bool kdrv_event(struct kvec *v);

#endif /* KERNEL_DRIVERS_H */
