/* SPDX-License-Identifier: MIT */
/*
 * e1000e.c - Intel 82574L as QEMU models it (8086:10d3,
 * hw/net/e1000e_core.c): interrupts only, no packets.
 *
 * MSI-X: five vectors. IVAR (0xe4) routes each cause to a vector in 4-bit
 * fields (vector 2:0, valid 3): RxQ0, RxQ1, TxQ0, TxQ1, Other. Writing a
 * cause to ICS (0xc8) sets it in ICR (0xc0) and, when IMS (0xd0) allows,
 * sends the vector's message. QEMU does not send a cause again while it
 * is still set in ICR, so every handler clears its cause (ICR is
 * write-1-to-clear). Interrupt moderation is off: ITR (0xc4) and EITR
 * (0xe8 + 4n) are 0, so every raise is one message.
 *
 * MSI or INTx: one vector for every cause; reading ICR returns and clears
 * it (and releases INTx), which tells the handler whether the event was
 * its own. `e1000e.mode=msi` skips MSI-X; `e1000e.mode=dynamic` starts
 * MSI-X with two vectors so that umsi.dynamic= can add the others.
 *
 * QEMU 7.2 fact: even with EITR 0, e1000e now and then sends a vector's
 * message again after its cause was cleared (a few per hundred raises
 * under TCG). The MSI-X handler therefore reads ICR (no clear-on-read in
 * MSI-X mode with IMS set and IAME clear) and answers "not mine" when its
 * cause is not set; those calls are reported as not_mine, not counted.
 */
#include "drivers.h"

#define E1000_ITR   0x00c4
#define E1000_ICR   0x00c0
#define E1000_ICS   0x00c8
#define E1000_IMS   0x00d0
#define E1000_IMC   0x00d8
#define E1000_IVAR  0x00e4
#define E1000_EITR(n) (0x00e8 + 4 * (n))

#define ICR_RXT0    (1u << 7)
#define ICR_RXQ0    (1u << 20)	/* RxQ0, RxQ1, TxQ0, TxQ1, Other: 20-24 */
#define NVEC        5
#define IVAR_VALID  0x8u

static uint32_t msix_cause(uint32_t n)
{
	return ICR_RXQ0 << n;
}

/*
 * In MSI-X mode with IMS non-zero and IAME clear, reading ICR does not
 * clear it, so the handler can check that its cause is really set.
 */
static int e1000e_irq_msix(uint32_t irq, void *cookie)
{
	struct kvec *v = cookie;
	uint32_t icr = mmio_read32(v->dev->bar0 + E1000_ICR);

	(void)irq;
	if (!(icr & msix_cause(v->hw))) {
		v->none++;
		return UMSI_IRQ_NONE;
	}
	mmio_write32(v->dev->bar0 + E1000_ICR, msix_cause(v->hw));
	return kdrv_event(v) ? UMSI_IRQ_HANDLED : UMSI_IRQ_NONE;
}

static int e1000e_irq_single(uint32_t irq, void *cookie)
{
	struct kvec *v = cookie;
	uint32_t icr = mmio_read32(v->dev->bar0 + E1000_ICR);

	(void)irq;
	if (!(icr & ICR_RXT0)) {
		v->none++;
		return UMSI_IRQ_NONE;
	}
	return kdrv_event(v) ? UMSI_IRQ_HANDLED : UMSI_IRQ_NONE;
}

static bool mode_is(const char *m)
{
	char v[16];

	return cmdline_value("e1000e.mode", v, sizeof(v)) && !strcmp(v, m);
}

static int e1000e_probe(struct kdev *d)
{
	uint32_t ivar = 0;
	int n;

	if (!d->pci->bar[0].assigned)
		return -UMSI_ENODEV;
	d->bar0 = (uint64_t)mm_map_mmio(d->pci->bar[0].addr, d->pci->bar[0].size);

	/* Quiet first: every cause masked and cleared, no moderation. */
	mmio_write32(d->bar0 + E1000_IMC, 0xffffffffu);
	mmio_write32(d->bar0 + E1000_ICR, 0xffffffffu);
	mmio_write32(d->bar0 + E1000_ITR, 0);
	for (uint32_t i = 0; i < NVEC; i++) {
		mmio_write32(d->bar0 + E1000_EITR(i), 0);
		ivar |= (IVAR_VALID | i) << (4 * i);
	}
	mmio_write32(d->bar0 + E1000_IVAR, ivar);

	/* MSI-X with all five, or else one vector of MSI or INTx. */
	n = -UMSI_EPERM;
	d->cap = NVEC;
	if (mode_is("dynamic"))		/* two now, the rest later */
		n = kdrv_setup_vectors(d, 2, 2, UMSI_PCI_IRQ_MSIX, e1000e_irq_msix);
	else if (!mode_is("msi"))
		n = kdrv_setup_vectors(d, NVEC, NVEC, UMSI_PCI_IRQ_MSIX,
				       e1000e_irq_msix);
	if (n < 0)
		n = kdrv_setup_vectors(d, 1, 1, UMSI_PCI_IRQ_MSI | UMSI_PCI_IRQ_INTX,
				       e1000e_irq_single);
	if (n < 0)
		return n;
	/* Every cause is enabled; one whose vector is not there yet is
	 * never raised. */
	mmio_write32(d->bar0 + E1000_IMS,
		     umsi_pci_mode(d->udev) == UMSI_MODE_MSIX ?
		     msix_cause(0) * ((1u << NVEC) - 1) : ICR_RXT0);
	return n;
}

static void e1000e_raise(struct kdev *d, uint32_t n)
{
	if (umsi_pci_mode(d->udev) == UMSI_MODE_MSIX)
		mmio_write32(d->bar0 + E1000_ICS, msix_cause(d->vecs[n].hw));
	else
		mmio_write32(d->bar0 + E1000_ICS, ICR_RXT0);
}

/* Removal: every cause masked and cleared. */
static void e1000e_stop(struct kdev *d)
{
	if (kdrv_gone(d))
		return;
	mmio_write32(d->bar0 + E1000_IMC, 0xffffffffu);
	mmio_write32(d->bar0 + E1000_ICR, 0xffffffffu);
}

const struct kdriver e1000e_driver = {
	.name = "e1000e",
	.vendor = 0x8086,
	.device = 0x10d3,
	.admin = 1,
	.probe = e1000e_probe,
	.raise = e1000e_raise,
	.stop = e1000e_stop,
};
