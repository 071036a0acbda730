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
	volatile uint64_t first_ns;	/* clock_ns() of the first event */
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
	void **pages;			/* kdrv_page() allocations */
	uint32_t npages, pages_cap;
};

struct kdriver {
	const char *name;
	uint16_t vendor, device;
	/* Optional: claims functions by more than one ID (then vendor and
	 * device are not used). */
	bool (*match)(const struct pci_dev *d);
	/* Vectors that are not per CPU (admin queue, link, config): the
	 * probe policy lets a driver spread one per CPU plus these. */
	uint32_t admin;
	/* Allocate vectors and attach handlers; 0 or a negative UMSI_E*. */
	int (*probe)(struct kdev *d);
	/* Cause one event that must arrive on vector @n. */
	void (*raise)(struct kdev *d, uint32_t n);
	/* Optional, after firing: print a driver line; false on failure. */
	bool (*check)(struct kdev *d);
	/*
	 * Removal, in two steps around the freeing of the vectors. stop():
	 * make the device quiet (no DMA, no interrupts); it may find the
	 * function gone (kdrv_gone) and must then not wait for it. release():
	 * free what probe() allocated, once no handler can run any more.
	 * Both optional.
	 */
	void (*stop)(struct kdev *d);
	void (*release)(struct kdev *d);
	/*
	 * Optional, SR-IOV (kernel/common/glue_sriov.c). sriov_up(): VF Enable has
	 * made @nvfs VFs; make them ready for their driver (an NVMe PF gives
	 * each secondary controller queues and interrupts and brings it
	 * online) and put in vf_priv[i] what VF i's probe finds in kd->priv
	 * (its resources). 0 or a negative UMSI_E*. sriov_down(): undo it,
	 * the VFs' drivers gone, before VF Enable is cleared.
	 */
	int (*sriov_up)(struct kdev *pf, uint16_t nvfs, void **vf_priv);
	void (*sriov_down)(struct kdev *pf, uint16_t nvfs);
};

extern const struct kdriver edu_driver;
extern const struct kdriver e1000e_driver;
extern const struct kdriver nvme_driver;
extern const struct kdriver xhci_driver;
extern const struct kdriver virtio_driver;

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
 * than leaves one for every function still to be served (kernel/common/glue_share.c).
 */
uint32_t kdrv_budget(struct kdev *d, uint32_t min, uint32_t max);

/*
 * Attach d->handler to @irq as vector slot d->nvec (there must be room:
 * d->cap) and count it in. For MSI-X entries added at run time.
 */
int kdrv_add_vector(struct kdev *d, uint32_t irq);

/*
 * A zeroed, 4 KiB-aligned page for the device (queues, rings, buffers),
 * given back by kdrv_free_pages() when the device is removed. Panics when
 * memory is exhausted, as boot allocations do.
 */
void *kdrv_page(struct kdev *d);
void kdrv_free_pages(struct kdev *d);

/*
 * Has the function of @d gone (surprise removal)? Its configuration space
 * reads all-ones. A driver that sees all-ones from its BAR, or waits in
 * vain, asks this before it waits any longer.
 */
bool kdrv_gone(struct kdev *d);

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
