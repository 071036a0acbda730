/* SPDX-License-Identifier: MIT */
/*
 * common.c - what every kernel driver shares: vector set-up through the
 * uMSI driver API and the per-vector event accounting.
 */
#include "drivers.h"

int kdrv_setup_vectors(struct kdev *d, uint32_t min, uint32_t max,
		       uint32_t flags, umsi_handler_t handler)
{
	int n = umsi_pci_alloc_irq_vectors(d->udev, min, max, flags);

	if (n < 0)
		return n;
	d->nvec = (uint32_t)n;
	d->vecs = kalloc(sizeof(*d->vecs) * d->nvec);
	if (!d->vecs) {
		umsi_pci_free_irq_vectors(d->udev);
		return -UMSI_ENOMEM;
	}
	for (uint32_t i = 0; i < d->nvec; i++) {
		struct kvec *v = &d->vecs[i];
		int irq = umsi_pci_irq_vector(d->udev, i), err;

		v->dev = d;
		v->n = i;
		if (irq < 0)
			goto fail;
		v->irq = (uint32_t)irq;
		err = umsi_request_irq(d->sys, v->irq, handler,
				       UMSI_IRQF_SHARED, d->drv->name, v);
		if (err) {
			irq = err;
			goto fail;
		}
		continue;
fail:
		/* Freeing the vectors also frees the handlers attached. */
		umsi_pci_free_irq_vectors(d->udev);
		kfree(d->vecs, sizeof(*d->vecs) * d->nvec);
		d->vecs = NULL;
		d->nvec = 0;
		return irq;
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
	v->count++;
	if (umsi_irq_get_info(v->dev->sys, v->irq, &info) ||
	    info.cpu != this_cpu_id())
		v->wrong_cpu++;
	return true;
}
