/* SPDX-License-Identifier: MIT */
/*
 * edu.c - QEMU's educational device (1234:11e8, hw/misc/edu.c): one MSI
 * message, or INTx when MSI is not allowed.
 *
 * Writing a value to register 0x60 ORs it into the interrupt status (0x24)
 * and raises the interrupt (an MSI message, or INTA asserted); writing to
 * 0x64 clears those status bits, and INTA is released when none remain.
 */
#include <umsi/compat.h>

#include "drivers.h"

#define EDU_STATUS 0x24
#define EDU_RAISE  0x60
#define EDU_ACK    0x64

static int edu_irq(uint32_t irq, void *cookie)
{
	struct kvec *v = cookie;
	uint32_t st = mmio_read32(v->dev->bar0 + EDU_STATUS);

	(void)irq;
	/* A shared INTx line, or KVM's second delivery of a level
	 * interrupt already released (kernel/README.md): not ours. */
	if (!st) {
		v->none++;
		return UMSI_IRQ_NONE;
	}
	mmio_write32(v->dev->bar0 + EDU_ACK, st);
	return kdrv_event(v) ? UMSI_IRQ_HANDLED : UMSI_IRQ_NONE;
}

/*
 * `edu.mode=seed`: the seed's automatic MSI, msi_get_pci_irq_vector(),
 * which keeps the function's IO-APIC IRQ number (its GSI) when no other
 * function shares that INTx line, and takes a new number otherwise.
 */
static int edu_probe_seed(struct kdev *d)
{
	int irq = umsi_msi_get_pci_irq_vector(d->udev), err;

	if (irq < 0)
		return irq;
	d->cap = 1;
	d->vecs = kalloc(sizeof(*d->vecs));
	if (!d->vecs)
		return -UMSI_ENOMEM;
	d->handler = edu_irq;
	err = kdrv_add_vector(d, (uint32_t)irq);
	return err ? err : 1;
}

static int edu_probe(struct kdev *d)
{
	char mode[8];

	if (!d->pci->bar[0].assigned)
		return -UMSI_ENODEV;
	d->bar0 = (uint64_t)mm_map_mmio(d->pci->bar[0].addr, d->pci->bar[0].size);
	if (cmdline_value("edu.mode", mode, sizeof(mode)) && !strcmp(mode, "seed"))
		return edu_probe_seed(d);
	return kdrv_setup_vectors(d, 1, 1, UMSI_PCI_IRQ_MSI | UMSI_PCI_IRQ_INTX, edu_irq);
}

static void edu_raise(struct kdev *d, uint32_t n)
{
	(void)n;
	mmio_write32(d->bar0 + EDU_RAISE, 1);
}

const struct kdriver edu_driver = {
	.name = "edu",
	.vendor = 0x1234,
	.device = 0x11e8,
	.admin = 0,
	.probe = edu_probe,
	.raise = edu_raise,
};
