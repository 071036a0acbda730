/* SPDX-License-Identifier: MIT */
/*
 * common.c - what every kernel driver shares: vector set-up through the
 * uMSI driver API and the per-vector event accounting.
 */
#include "drivers.h"

/*
 * Attach d->handler to @irq for the function: through
 * umsi_pci_request_irq() (the handler then leaves with the function, even
 * from an INTx line others share) once @irq is found among the
 * function's vectors; umsi_request_irq() for an IRQ that is not one of
 * them.
 */
static int kdrv_request(struct kdev *d, uint32_t irq, struct kvec *v)
{
	struct umsi_pci_info pi;

	umsi_pci_get_info(d->udev, &pi);
	for (uint32_t n = 0; n < pi.nvec; n++)
		if (umsi_pci_irq_vector(d->udev, n) == (int)irq)
			return umsi_pci_request_irq(d->udev, n, d->handler,
						    UMSI_IRQF_SHARED,
						    d->drv->name, v);
	return umsi_request_irq(d->sys, irq, d->handler, UMSI_IRQF_SHARED,
				d->drv->name, v);
}

void *kdrv_page(struct kdev *d)
{
	void *p;

	if (d->npages == d->pages_cap) {
		uint32_t cap = d->pages_cap ? 2 * d->pages_cap : 16;
		void **n = kalloc(sizeof(*n) * cap);

		if (!n)
			panic("kdrv: out of memory");
		if (d->pages) {
			memcpy(n, d->pages, sizeof(*n) * d->npages);
			kfree(d->pages, sizeof(*n) * d->pages_cap);
		}
		d->pages = n;
		d->pages_cap = cap;
	}
	p = kalloc(4096);	/* the 4 KiB class is 4 KiB aligned */
	if (!p)
		panic("kdrv: out of memory for a page");
	d->pages[d->npages++] = p;
	return p;
}

void kdrv_free_pages(struct kdev *d)
{
	for (uint32_t i = 0; i < d->npages; i++)
		kfree(d->pages[i], 4096);
	if (d->pages)
		kfree(d->pages, sizeof(*d->pages) * d->pages_cap);
	d->pages = NULL;
	d->npages = d->pages_cap = 0;
}

bool kdrv_gone(struct kdev *d)
{
	return pci_gone(d->pci);
}

int kdrv_add_vector(struct kdev *d, uint32_t irq)
{
	struct kvec *v;
	struct umsi_irq_info info;
	int err;

	if (d->nvec >= d->cap)
		return -UMSI_ENOSPC;
	v = &d->vecs[d->nvec];
	memset(v, 0, sizeof(*v));
	v->dev = d;
	v->n = d->nvec;
	v->irq = irq;
	v->hw = umsi_irq_get_info(d->sys, irq, &info) ? v->n : info.hwirq;
	err = kdrv_request(d, irq, v);
	if (err)
		return err;
	d->nvec++;
	return 0;
}

/*
 * Room for d->cap vectors (the driver may set it beforehand to grow
 * later), at least @max.
 */
int kdrv_setup_vectors(struct kdev *d, uint32_t min, uint32_t max,
		       uint32_t flags, umsi_handler_t handler)
{
	int n = umsi_pci_alloc_irq_vectors(d->udev, min,
					   kdrv_budget(d, min, max), flags);

	if (n < 0)
		return n;
	if (d->cap < max)
		d->cap = max;
	d->vecs = kalloc(sizeof(*d->vecs) * d->cap);
	if (!d->vecs) {
		umsi_pci_free_irq_vectors(d->udev);
		return -UMSI_ENOMEM;
	}
	d->handler = handler;
	d->nvec = 0;
	for (int i = 0; i < n; i++) {
		int irq = umsi_pci_irq_vector(d->udev, (uint32_t)i);
		int err = irq < 0 ? irq : kdrv_add_vector(d, (uint32_t)irq);

		if (err) {
			/* Freeing the vectors also frees attached handlers. */
			umsi_pci_free_irq_vectors(d->udev);
			kfree(d->vecs, sizeof(*d->vecs) * d->cap);
			d->vecs = NULL;
			d->nvec = 0;
			return err;
		}
	}
	return n;
}

void kdrv_expect(struct kvec *v)
{
	v->sent++;
	__atomic_store_n(&v->outstanding, 1, __ATOMIC_RELEASE);
}

bool kdrv_event(struct kvec *v)
{
	struct umsi_irq_info info;

	if (!__atomic_exchange_n(&v->outstanding, 0, __ATOMIC_ACQ_REL)) {
		__atomic_fetch_add(&v->none, 1, __ATOMIC_RELAXED);
		return false;
	}
	if (!v->count)
		v->first_ns = clock_ns();
	v->count++;
	if (umsi_irq_get_info(v->dev->sys, v->irq, &info) ||
	    info.cpu != this_cpu_id())
		v->wrong_cpu++;
	return true;
}
