/* SPDX-License-Identifier: MIT */
/*
 * xhci.c - QEMU's NEC xHCI (1033:0194) with msi=on,msix=off: multi-message
 * MSI. QEMU 7.2 offers 16 messages whatever its `intrs` property says, so
 * the driver takes all 16 as one 16-aligned block; a Command Completion
 * Event on interrupter 0 arrives as message 0, which is what it fires
 * (a No Op command per event).
 *
 * xHCI 1.2: capability registers at BAR 0 (CAPLENGTH 0x00, DBOFF 0x14,
 * RTSOFF 0x18); operational registers at CAPLENGTH (USBCMD 0x00: R/S,
 * HCRST, INTE; USBSTS 0x04: HCH, EINT, CNR; CRCR 0x18; DCBAAP 0x30;
 * CONFIG 0x38); interrupter 0 at RTSOFF + 0x20 (IMAN: IP, IE; IMOD;
 * ERSTSZ; ERSTBA; ERDP with EHB). TRBs are 16 bytes; the cycle bit
 * (dword 3 bit 0) marks ownership, and a Link TRB closes the command ring.
 */
#include "drivers.h"

#define NTRB         64
#define TRB_LINK     6
#define TRB_NOOP_CMD 23
#define TRB_CMD_DONE 33

struct xhci {
	uint64_t op, rt, db;
	volatile uint32_t *cmd;		/* command ring */
	volatile uint32_t *evt;		/* event ring segment */
	volatile uint64_t *erst;	/* segment table: base, size */
	uint32_t cmd_idx, evt_idx;
	uint8_t cmd_cycle, evt_cycle;
	volatile uint32_t bad_events;
};

static int xhci_irq(uint32_t irq, void *cookie)
{
	struct kvec *v = cookie;
	struct xhci *x = v->dev->priv;
	uint32_t n = 0, bad = 0;

	(void)irq;
	/* IMAN.IP is write-1-to-clear; keep IE set. */
	mmio_write32(x->rt + 0x20, 0x3);
	for (;;) {
		volatile uint32_t *t = x->evt + 4 * x->evt_idx;

		if ((t[3] & 1) != x->evt_cycle)
			break;
		if (((t[3] >> 10) & 0x3f) != TRB_CMD_DONE || (t[2] >> 24) != 1)
			bad++;	/* not a successful command completion */
		if (++x->evt_idx == NTRB) {
			x->evt_idx = 0;
			x->evt_cycle ^= 1;
		}
		n++;
	}
	/* ERDP to the next event, EHB (bit 3) cleared by writing 1. */
	mmio_write32(x->rt + 0x38, (uint32_t)(uint64_t)(x->evt + 4 * x->evt_idx) | 0x8);
	mmio_write32(x->rt + 0x3c, (uint32_t)((uint64_t)(x->evt + 4 * x->evt_idx) >> 32));
	if (!n || v->n != 0) {
		v->none++;
		return UMSI_IRQ_NONE;
	}
	x->bad_events += bad;
	return kdrv_event(v) ? UMSI_IRQ_HANDLED : UMSI_IRQ_NONE;
}

static bool wait_bits(uint64_t reg, uint32_t mask, uint32_t want)
{
	uint64_t end = clock_ns() + 1000000000ull;

	while (clock_ns() < end) {
		if ((mmio_read32(reg) & mask) == want)
			return true;
		cpu_relax();
	}
	return false;
}

static int xhci_probe(struct kdev *d)
{
	struct xhci *x;
	uint64_t base;
	int n;

	if (!d->pci->bar[0].assigned)
		return -UMSI_ENODEV;
	base = d->bar0 = (uint64_t)mm_map_mmio(d->pci->bar[0].addr,
					       d->pci->bar[0].size);
	x = kalloc(sizeof(*x));
	if (!x)
		return -UMSI_ENOMEM;
	d->priv = x;
	x->op = base + (mmio_read32(base) & 0xff);
	x->db = base + (mmio_read32(base + 0x14) & ~3u);
	x->rt = base + (mmio_read32(base + 0x18) & ~0x1fu);

	/* All 16 messages as one block (Multiple Message Enable = 4). */
	n = kdrv_setup_vectors(d, 16, 16, UMSI_IRQ_MSI, xhci_irq);
	if (n < 0)
		return n;

	/* Halt, reset, wait for Controller Not Ready to clear. */
	mmio_write32(x->op, 0);
	if (!wait_bits(x->op + 0x04, 1, 1))
		return -UMSI_ETIMEDOUT;
	mmio_write32(x->op, 2);
	if (!wait_bits(x->op, 2, 0) || !wait_bits(x->op + 0x04, 1u << 11, 0))
		return -UMSI_ETIMEDOUT;

	x->cmd = kalloc_pages(4096);
	x->evt = kalloc_pages(4096);
	x->erst = kalloc_pages(4096);
	x->cmd_cycle = x->evt_cycle = 1;
	/* Link TRB at the end of the command ring, toggling the cycle. */
	x->cmd[4 * (NTRB - 1) + 0] = (uint32_t)(uint64_t)x->cmd;
	x->cmd[4 * (NTRB - 1) + 1] = (uint32_t)((uint64_t)x->cmd >> 32);
	x->cmd[4 * (NTRB - 1) + 3] = TRB_LINK << 10 | 0x2;
	x->erst[0] = (uint64_t)x->evt;
	x->erst[1] = NTRB;

	mmio_write32(x->op + 0x38, 1);				/* CONFIG */
	mmio_write32(x->op + 0x30, (uint32_t)(uint64_t)kalloc_pages(4096));
	mmio_write32(x->op + 0x34, 0);				/* DCBAAP */
	mmio_write32(x->op + 0x18, (uint32_t)(uint64_t)x->cmd | 1);
	mmio_write32(x->op + 0x1c, (uint32_t)((uint64_t)x->cmd >> 32));
	mmio_write32(x->rt + 0x24, 0);				/* IMOD */
	mmio_write32(x->rt + 0x28, 1);				/* ERSTSZ */
	mmio_write32(x->rt + 0x38, (uint32_t)(uint64_t)x->evt);	/* ERDP */
	mmio_write32(x->rt + 0x3c, (uint32_t)((uint64_t)x->evt >> 32));
	mmio_write32(x->rt + 0x30, (uint32_t)(uint64_t)x->erst);	/* ERSTBA */
	mmio_write32(x->rt + 0x34, (uint32_t)((uint64_t)x->erst >> 32));
	mmio_write32(x->rt + 0x20, 0x2);			/* IMAN.IE */
	mmio_write32(x->op, 0x5);				/* R/S, INTE */
	if (!wait_bits(x->op + 0x04, 1, 0))
		return -UMSI_ETIMEDOUT;
	return n;
}

/* One No Op command: its completion event arrives as message 0. */
static void xhci_raise(struct kdev *d, uint32_t n)
{
	struct xhci *x = d->priv;
	volatile uint32_t *t = x->cmd + 4 * x->cmd_idx;

	(void)n;
	t[0] = t[1] = t[2] = 0;
	mfence();
	t[3] = TRB_NOOP_CMD << 10 | x->cmd_cycle;
	if (++x->cmd_idx == NTRB - 1) {
		/* Hand the Link TRB over with the current cycle, then wrap. */
		x->cmd[4 * (NTRB - 1) + 3] = TRB_LINK << 10 | 0x2 | x->cmd_cycle;
		x->cmd_idx = 0;
		x->cmd_cycle ^= 1;
	}
	mfence();
	mmio_write32(x->db, 0);
}

static bool xhci_check(struct kdev *d)
{
	struct xhci *x = d->priv;

	kprintf("UMSI {\"event\":\"xhci\",\"bdf\":\"0000:%02x:%02x.%u\","
		"\"messages\":%u,\"bad_events\":%u}\n",
		PCI_BUS(d->pci->bdf), PCI_DEV(d->pci->bdf), PCI_FN(d->pci->bdf),
		d->nvec, x->bad_events);
	return !x->bad_events;
}

const struct kdriver xhci_driver = {
	.name = "xhci",
	.vendor = 0x1033,
	.device = 0x0194,
	.probe = xhci_probe,
	.raise = xhci_raise,
	.check = xhci_check,
	.fire_vectors = 1,
};
