/* SPDX-License-Identifier: MIT */
/*
 * xhci.c - QEMU's NEC xHCI (1033:0194) with msi=on,msix=off: multi-message
 * MSI. QEMU 7.2 offers 16 messages whatever its `intrs` property says; the
 * driver asks for all 16 as one aligned block, the kernel's probe policy
 * grants one per CPU plus one (`umsi.probe_max=16` lifts that), and each
 * interrupter that got a message gets an event ring: interrupter k is
 * sent as message k.
 *
 * Events: on vector 0 a No Op command (its Command Completion Event goes
 * to interrupter 0); on vector k >= 1, when a USB device is attached (the
 * first connected port is reset, a slot enabled, the device addressed), a
 * GET_DESCRIPTOR control transfer whose TRBs name interrupter k as their
 * Interrupter Target, so its Transfer Event goes to interrupter k.
 *
 * xHCI 1.2: capability registers at BAR 0 (CAPLENGTH 0x00, HCSPARAMS1
 * 0x04, DBOFF 0x14, RTSOFF 0x18); operational registers at CAPLENGTH
 * (USBCMD 0x00: R/S, HCRST, INTE; USBSTS 0x04: HCH, CNR; CRCR 0x18;
 * DCBAAP 0x30; CONFIG 0x38; PORTSC 0x400 + 0x10 * (port - 1));
 * interrupter k at RTSOFF + 0x20 + 32 * k (IMAN: IP, IE; IMOD; ERSTSZ;
 * ERSTBA; ERDP with EHB). TRBs are 16 bytes; the cycle bit (dword 3 bit
 * 0) marks ownership; a Link TRB closes each producer ring.
 */
#include "drivers.h"

#define NTRB          64
#define NINTR         16
#define TRB_SETUP     2
#define TRB_DATA      3
#define TRB_STATUS    4
#define TRB_LINK      6
#define TRB_ENABLE_SLOT 9
#define TRB_ADDRESS_DEV 11
#define TRB_NOOP_CMD  23
#define TRB_TRANSFER  32
#define TRB_CMD_DONE  33

struct ring {
	volatile uint32_t *trb;
	uint32_t idx;
	uint8_t cycle;
};

struct xhci {
	uint64_t op, rt, db;
	struct ring cmd, ep0;		/* producer rings */
	struct ring evt[NINTR];		/* consumer rings, one per interrupter */
	uint32_t slot;			/* addressed device, 0: none */
	uint8_t *desc;			/* GET_DESCRIPTOR buffer */
	volatile uint32_t last_type[NINTR], last_code[NINTR], last_dw3[NINTR];
	volatile uint32_t bad_events, transfers, other_events;
};

#define TRB_PORT_STATUS 34

static uint64_t intr_reg(struct xhci *x, uint32_t k, uint32_t off)
{
	return x->rt + 0x20 + 32 * k + off;
}

static void ring_init(struct kdev *d, struct ring *r)
{
	r->trb = kdrv_page(d);
	r->cycle = 1;
	/* Link TRB at the end, back to the start, toggling the cycle. */
	r->trb[4 * (NTRB - 1) + 0] = (uint32_t)(uint64_t)r->trb;
	r->trb[4 * (NTRB - 1) + 1] = (uint32_t)((uint64_t)r->trb >> 32);
	r->trb[4 * (NTRB - 1) + 3] = TRB_LINK << 10 | 0x2;
}

/* Put one TRB on a producer ring (the cycle bit is written last). */
static void ring_put(struct ring *r, uint32_t d0, uint32_t d1, uint32_t d2,
		     uint32_t d3)
{
	volatile uint32_t *t = r->trb + 4 * r->idx;

	t[0] = d0;
	t[1] = d1;
	t[2] = d2;
	mfence();
	t[3] = d3 | r->cycle;
	if (++r->idx == NTRB - 1) {
		r->trb[4 * (NTRB - 1) + 3] = TRB_LINK << 10 | 0x2 | r->cycle;
		r->idx = 0;
		r->cycle ^= 1;
	}
	mfence();
}

/*
 * Consume the events of interrupter @k; returns how many were of the kind
 * this interrupter is for (Command Completion on 0, Transfer on the
 * others). Port Status Change events (a port reset, a device appearing)
 * also arrive on interrupter 0; they are counted apart.
 */
static uint32_t reap(struct xhci *x, uint32_t k)
{
	struct ring *r = &x->evt[k];
	uint32_t n = 0, want = k ? TRB_TRANSFER : TRB_CMD_DONE;

	for (;;) {
		volatile uint32_t *t = r->trb + 4 * r->idx;
		uint32_t dw3 = t[3], type = (dw3 >> 10) & 0x3f, code = t[2] >> 24;

		if ((dw3 & 1) != r->cycle)
			break;
		if (type == want) {
			x->last_type[k] = type;
			x->last_code[k] = code;
			x->last_dw3[k] = dw3;
			/* Success (1) or Short Packet (13). */
			if (code != 1 && code != 13)
				x->bad_events++;
			n++;
		} else if (type == TRB_PORT_STATUS && k == 0) {
			x->other_events++;
		} else {
			x->bad_events++;
		}
		if (++r->idx == NTRB) {
			r->idx = 0;
			r->cycle ^= 1;
		}
	}
	/* ERDP to the next event; EHB (bit 3) is cleared by writing 1. */
	mmio_write32(intr_reg(x, k, 0x18), (uint32_t)(uint64_t)(r->trb + 4 * r->idx) | 0x8);
	mmio_write32(intr_reg(x, k, 0x1c), (uint32_t)((uint64_t)(r->trb + 4 * r->idx) >> 32));
	return n;
}

static int xhci_irq(uint32_t irq, void *cookie)
{
	struct kvec *v = cookie;
	struct xhci *x = v->dev->priv;
	uint32_t k = v->n;

	(void)irq;
	mmio_write32(intr_reg(x, k, 0), 0x3);	/* IMAN: clear IP, keep IE */
	if (!reap(x, k)) {
		v->none++;
		return UMSI_IRQ_NONE;
	}
	if (k)
		x->transfers++;
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

/* A command, completed (on interrupter 0) before this returns. */
static bool command(struct kdev *d, uint32_t d0, uint32_t d1, uint32_t d3)
{
	struct xhci *x = d->priv;
	struct kvec *v = &d->vecs[0];
	uint64_t end = clock_ns() + 1000000000ull;

	kdrv_expect(v);
	ring_put(&x->cmd, d0, d1, 0, d3);
	mmio_write32(x->db, 0);
	while (v->count < v->sent && clock_ns() < end)
		cpu_relax();
	return v->count == v->sent && x->last_code[0] == 1;
}

/*
 * Attach the first device found on a root port: reset the port, Enable
 * Slot, Address Device with EP0 on our ring. Returns false when there is
 * none (then only vector 0 fires).
 */
static bool attach_device(struct kdev *d)
{
	struct xhci *x = d->priv;
	uint32_t nports = (mmio_read32(d->bar0 + 0x04) >> 24) & 0xff;
	uint32_t port = 0, speed, mps;
	volatile uint32_t *in;
	uint64_t *dcbaa = (uint64_t *)(uint64_t)mmio_read32(x->op + 0x30);

	for (uint32_t p = 1; p <= nports && !port; p++) {
		uint64_t sc = x->op + 0x400 + 0x10 * (p - 1);

		if (!(mmio_read32(sc) & 1))
			continue;
		/* Port Reset (bit 4); keep PP (bit 9), clear change bits. */
		mmio_write32(sc, (1u << 9) | (1u << 4));
		if (wait_bits(sc, 0x2, 0x2))
			port = p;
		mmio_write32(sc, (1u << 9) | 0x00fe0000u);
	}
	if (!port)
		return false;
	speed = (mmio_read32(x->op + 0x400 + 0x10 * (port - 1)) >> 10) & 0xf;
	mps = speed == 4 ? 512 : speed == 3 ? 64 : 8;

	if (!command(d, 0, 0, TRB_ENABLE_SLOT << 10))
		return false;
	x->slot = x->last_dw3[0] >> 24;
	dcbaa[x->slot] = (uint64_t)kdrv_page(d);	/* output context */

	/* Input context (32-byte contexts): control, slot, EP0. */
	in = kdrv_page(d);
	in[1] = 0x3;				/* add slot and EP0 */
	in[8 + 0] = speed << 20 | 1u << 27;	/* speed, 1 context entry */
	in[8 + 1] = port << 16;			/* root hub port */
	in[16 + 1] = 3u << 1 | 4u << 3 | mps << 16;	/* CErr 3, control, MPS */
	in[16 + 2] = (uint32_t)(uint64_t)x->ep0.trb | 1;	/* dequeue, DCS */
	in[16 + 3] = (uint32_t)((uint64_t)x->ep0.trb >> 32);
	in[16 + 4] = 8;				/* average TRB length */
	return command(d, (uint32_t)(uint64_t)in, (uint32_t)((uint64_t)in >> 32),
		       TRB_ADDRESS_DEV << 10 | x->slot << 24);
}

static int xhci_probe(struct kdev *d)
{
	struct xhci *x;
	uint64_t base, dcbaa;
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

	/* Up to 16 messages as one block (Multiple Message Enable <= 4). */
	n = kdrv_setup_vectors(d, 1, NINTR, UMSI_PCI_IRQ_MSI, xhci_irq);
	if (n < 0)
		return n;

	/* Halt, reset, wait for Controller Not Ready to clear. */
	mmio_write32(x->op, 0);
	if (!wait_bits(x->op + 0x04, 1, 1))
		return -UMSI_ETIMEDOUT;
	mmio_write32(x->op, 2);
	if (!wait_bits(x->op, 2, 0) || !wait_bits(x->op + 0x04, 1u << 11, 0))
		return -UMSI_ETIMEDOUT;

	ring_init(d, &x->cmd);
	ring_init(d, &x->ep0);
	x->desc = kdrv_page(d);
	dcbaa = (uint64_t)kdrv_page(d);
	mmio_write32(x->op + 0x38, 8);				/* CONFIG: slots */
	mmio_write32(x->op + 0x30, (uint32_t)dcbaa);
	mmio_write32(x->op + 0x34, (uint32_t)(dcbaa >> 32));
	mmio_write32(x->op + 0x18, (uint32_t)(uint64_t)x->cmd.trb | 1);
	mmio_write32(x->op + 0x1c, (uint32_t)((uint64_t)x->cmd.trb >> 32));
	for (uint32_t k = 0; k < (uint32_t)n; k++) {
		volatile uint64_t *erst = kdrv_page(d);
		struct ring *r = &x->evt[k];

		r->trb = kdrv_page(d);
		r->cycle = 1;
		erst[0] = (uint64_t)r->trb;
		erst[1] = NTRB;
		mmio_write32(intr_reg(x, k, 0x04), 0);		/* IMOD */
		mmio_write32(intr_reg(x, k, 0x08), 1);		/* ERSTSZ */
		mmio_write32(intr_reg(x, k, 0x18), (uint32_t)(uint64_t)r->trb);
		mmio_write32(intr_reg(x, k, 0x1c), (uint32_t)((uint64_t)r->trb >> 32));
		mmio_write32(intr_reg(x, k, 0x10), (uint32_t)(uint64_t)erst);
		mmio_write32(intr_reg(x, k, 0x14), (uint32_t)((uint64_t)erst >> 32));
		mmio_write32(intr_reg(x, k, 0x00), 0x2);	/* IMAN.IE */
	}
	mmio_write32(x->op, 0x5);				/* R/S, INTE */
	if (!wait_bits(x->op + 0x04, 1, 0))
		return -UMSI_ETIMEDOUT;

	/* Port status changes of attached devices arrive on interrupter 0
	 * before any command of ours: let them pass, then account afresh. */
	udelay(20000);
	d->vecs[0].sent = d->vecs[0].count = 0;
	d->nfire = attach_device(d) ? (uint32_t)n : 1;
	return n;
}

/* Removal: halt the controller (R/S 0) and wait for HCHalted. */
static void xhci_stop(struct kdev *d)
{
	struct xhci *x = d->priv;

	if (!x || kdrv_gone(d))
		return;
	mmio_write32(x->op, 0);
	wait_bits(x->op + 0x04, 1, 1);
}

static void xhci_release(struct kdev *d)
{
	kdrv_free_pages(d);
	if (d->priv)
		kfree(d->priv, sizeof(struct xhci));
	d->priv = NULL;
}

static void xhci_raise(struct kdev *d, uint32_t n)
{
	struct xhci *x = d->priv;
	uint32_t it = n << 22;	/* Interrupter Target */

	if (n == 0) {
		ring_put(&x->cmd, 0, 0, 0, TRB_NOOP_CMD << 10);
		mmio_write32(x->db, 0);
		return;
	}
	/* GET_DESCRIPTOR(DEVICE, 18 bytes): setup (immediate), data in,
	 * status out with Interrupt On Completion. */
	ring_put(&x->ep0, 0x01000680, 0x00120000, 8 | it,
		 TRB_SETUP << 10 | 1u << 6 | 3u << 16);
	ring_put(&x->ep0, (uint32_t)(uint64_t)x->desc,
		 (uint32_t)((uint64_t)x->desc >> 32), 18 | it,
		 TRB_DATA << 10 | 1u << 16);
	ring_put(&x->ep0, 0, 0, it, TRB_STATUS << 10 | 1u << 5);
	mmio_write32(x->db + 4 * x->slot, 1);	/* EP0: DCI 1 */
}

static bool xhci_check(struct kdev *d)
{
	struct xhci *x = d->priv;

	kprintf("UMSI {\"event\":\"xhci\",\"bdf\":\"0000:%02x:%02x.%u\","
		"\"messages\":%u,\"slot\":%u,\"transfers\":%u,"
		"\"descriptor\":\"0x%02x%02x\",\"port_events\":%u,"
		"\"bad_events\":%u}\n",
		PCI_BUS(d->pci->bdf), PCI_DEV(d->pci->bdf), PCI_FN(d->pci->bdf),
		d->nvec, x->slot, x->transfers, x->desc[1], x->desc[0],
		x->other_events, x->bad_events);
	return !x->bad_events;
}

const struct kdriver xhci_driver = {
	.name = "xhci",
	.vendor = 0x1033,
	.device = 0x0194,
	.admin = 1,
	.probe = xhci_probe,
	.raise = xhci_raise,
	.check = xhci_check,
	.stop = xhci_stop,
	.release = xhci_release,
};
