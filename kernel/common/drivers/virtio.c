/* SPDX-License-Identifier: MIT */
/*
 * virtio.c - virtio-net and virtio-rng over the modern PCI transport
 * (virtio 1.1, 4.1), just enough to make them interrupt on demand.
 *
 * The transport's structures are found through vendor-specific PCI
 * capabilities (4.1.4): common configuration, notifications, ISR status.
 * Initialisation (3.1.1): reset, ACKNOWLEDGE, DRIVER, VERSION_1 as the
 * only feature, FEATURES_OK, the virtqueues, DRIVER_OK. Each virtqueue
 * is a split ring (2.6) of up to 16 entries in one page, tied to an MSI-X
 * table entry through queue_msix_vector (4.1.5.1.2); with INTx instead,
 * the ISR status register says whether the interrupt was the device's.
 *
 * Vectors: 0 is the queue the driver can make the device complete
 * (virtio-rng's request queue: a buffer to fill with random bytes;
 * virtio-net's transmit queue: one Ethernet frame, which a device with
 * no network back end drops and completes), 1 the configuration change
 * interrupt, 2 virtio-net's receive queue. Only vector 0 is fired.
 */
#include <umsi/pci_regs.h>

#include "drivers.h"

#define VIRTIO_VENDOR        0x1af4
#define VIRTIO_DEV_NET_T     0x1000	/* transitional IDs */
#define VIRTIO_DEV_RNG_T     0x1005
#define VIRTIO_DEV_NET       0x1041	/* 0x1040 + device type */
#define VIRTIO_DEV_RNG       0x1044

#define VIRTIO_CAP_COMMON    1
#define VIRTIO_CAP_NOTIFY    2
#define VIRTIO_CAP_ISR       3

/* Common configuration (4.1.4.3). */
#define VC_DFSELECT    0x00
#define VC_DF          0x04
#define VC_GFSELECT    0x08
#define VC_GF          0x0c
#define VC_MSIX_CONFIG 0x10
#define VC_NUM_QUEUES  0x12
#define VC_STATUS      0x14
#define VC_Q_SELECT    0x16
#define VC_Q_SIZE      0x18
#define VC_Q_MSIX      0x1a
#define VC_Q_ENABLE    0x1c
#define VC_Q_NOFF      0x1e
#define VC_Q_DESC      0x20
#define VC_Q_AVAIL     0x28
#define VC_Q_USED      0x30

#define ST_ACK         1
#define ST_DRIVER      2
#define ST_DRIVER_OK   4
#define ST_FEATURES_OK 8

#define NO_VECTOR      0xffff
#define QSIZE          16
#define DESC_F_WRITE   2
#define NET_HDR_LEN    12	/* struct virtio_net_hdr with num_buffers */
#define FRAME_LEN      60

struct vq {
	uint16_t index, size;		/* size: a power of two <= QSIZE */
	volatile uint8_t *page;		/* desc at 0, avail at 256, used at 512 */
	uint8_t *buf;
	uint16_t avail_idx, used_seen;
	uint64_t notify;		/* its notification address */
};

struct virtio {
	uint64_t common, notify_base, isr;
	uint32_t notify_mul;
	bool net;
	struct vq fire_q, rx_q;
	volatile uint32_t completed;
};

static bool virtio_match(const struct pci_dev *d)
{
	return d->vendor == VIRTIO_VENDOR &&
	       (d->device == VIRTIO_DEV_NET || d->device == VIRTIO_DEV_NET_T ||
		d->device == VIRTIO_DEV_RNG || d->device == VIRTIO_DEV_RNG_T);
}

static volatile uint16_t *ring16(volatile uint8_t *p, uint32_t off)
{
	return (volatile uint16_t *)(p + off);
}

/* Find the vendor capability of @type: BAR address + offset, or 0. */
static uint64_t find_cap(struct kdev *d, uint8_t type, uint32_t *mul)
{
	uint32_t bdf = d->pci->bdf;
	uint8_t ptr = (uint8_t)pci_cfg_read(bdf, UMSI_PCI_CAP_PTR, 1);

	for (int n = 0; n < 48 && ptr >= 0x40; n++) {
		ptr &= 0xfc;
		if (pci_cfg_read(bdf, ptr, 1) == UMSI_PCI_CAP_ID_VNDR &&
		    pci_cfg_read(bdf, ptr + 3, 1) == type) {
			uint32_t bar = pci_cfg_read(bdf, ptr + 4, 1);
			uint32_t off = pci_cfg_read(bdf, ptr + 8, 4);
			const struct pci_bar *b = bar < 6 ? &d->pci->bar[bar] : NULL;

			if (!b || !b->assigned || b->kind == PCI_BAR_IO)
				return 0;
			if (mul)
				*mul = pci_cfg_read(bdf, ptr + 16, 4);
			return (uint64_t)mm_map_mmio(b->addr, b->size) + off;
		}
		ptr = (uint8_t)pci_cfg_read(bdf, ptr + 1, 1);
	}
	return 0;
}

/* Consume what the device used on @q; returns how many. */
static uint32_t vq_reap(struct vq *q)
{
	volatile uint8_t *used = q->page + 512;
	uint16_t idx = __atomic_load_n(ring16(used, 2), __ATOMIC_ACQUIRE);
	uint32_t n = (uint16_t)(idx - q->used_seen);

	q->used_seen = idx;
	return n;
}

static int virtio_irq(uint32_t irq, void *cookie)
{
	struct kvec *v = cookie;
	struct virtio *vi = v->dev->priv;

	(void)irq;
	/* INTx: reading ISR status says (and clears) whether it was us. */
	if (umsi_pci_mode(v->dev->udev) == UMSI_MODE_INTX &&
	    !(mmio_read8(vi->isr) & 1)) {
		v->none++;
		return UMSI_IRQ_NONE;
	}
	if (v->n != 0 || !vq_reap(&vi->fire_q)) {
		v->none++;
		return UMSI_IRQ_NONE;
	}
	vi->completed++;
	return kdrv_event(v) ? UMSI_IRQ_HANDLED : UMSI_IRQ_NONE;
}

/* Set up virtqueue @index with @vector (NO_VECTOR for none). */
static int vq_setup(struct kdev *d, struct vq *q, uint16_t index, uint16_t vector)
{
	struct virtio *vi = d->priv;
	uint64_t c = vi->common;
	uint16_t size;

	mmio_write16(c + VC_Q_SELECT, index);
	size = mmio_read16(c + VC_Q_SIZE);	/* the most it takes */
	if (!size)
		return -UMSI_EIO;
	q->size = QSIZE;
	while (q->size > size)
		q->size /= 2;
	q->index = index;
	q->page = kdrv_page(d);
	q->buf = kdrv_page(d);
	mmio_write16(c + VC_Q_SIZE, q->size);
	mmio_write32(c + VC_Q_DESC, (uint32_t)(uint64_t)q->page);
	mmio_write32(c + VC_Q_DESC + 4, (uint32_t)((uint64_t)q->page >> 32));
	mmio_write32(c + VC_Q_AVAIL, (uint32_t)(uint64_t)(q->page + 256));
	mmio_write32(c + VC_Q_AVAIL + 4, (uint32_t)((uint64_t)(q->page + 256) >> 32));
	mmio_write32(c + VC_Q_USED, (uint32_t)(uint64_t)(q->page + 512));
	mmio_write32(c + VC_Q_USED + 4, (uint32_t)((uint64_t)(q->page + 512) >> 32));
	mmio_write16(c + VC_Q_MSIX, vector);
	if (mmio_read16(c + VC_Q_MSIX) != vector)
		return -UMSI_EIO;	/* the device could not take it */
	q->notify = vi->notify_base + (uint64_t)mmio_read16(c + VC_Q_NOFF) * vi->notify_mul;
	mmio_write16(c + VC_Q_ENABLE, 1);
	return 0;
}

/* The MSI-X table entry of vector @n, or NO_VECTOR (INTx). */
static uint16_t entry_of(struct kdev *d, uint32_t n)
{
	if (umsi_pci_mode(d->udev) != UMSI_MODE_MSIX || n >= d->nvec)
		return NO_VECTOR;
	return (uint16_t)d->vecs[n].hw;
}

static int virtio_probe(struct kdev *d)
{
	struct virtio *vi;
	uint64_t c;
	int n, err;

	vi = kalloc(sizeof(*vi));
	if (!vi)
		return -UMSI_ENOMEM;
	d->priv = vi;
	vi->net = d->pci->device == VIRTIO_DEV_NET || d->pci->device == VIRTIO_DEV_NET_T;
	vi->common = find_cap(d, VIRTIO_CAP_COMMON, NULL);
	vi->notify_base = find_cap(d, VIRTIO_CAP_NOTIFY, &vi->notify_mul);
	vi->isr = find_cap(d, VIRTIO_CAP_ISR, NULL);
	if (!vi->common || !vi->notify_base || !vi->isr)
		return -UMSI_ENODEV;
	c = vi->common;

	/* Reset, and wait for the device to say it is done (4.1.4.3.2). */
	mmio_write8(c + VC_STATUS, 0);
	for (int i = 0; i < 1000 && mmio_read8(c + VC_STATUS); i++)
		udelay(10);
	mmio_write8(c + VC_STATUS, ST_ACK | ST_DRIVER);
	mmio_write32(c + VC_DFSELECT, 1);
	if (!(mmio_read32(c + VC_DF) & 1))	/* VIRTIO_F_VERSION_1 */
		return -UMSI_ENODEV;
	mmio_write32(c + VC_GFSELECT, 0);
	mmio_write32(c + VC_GF, 0);
	mmio_write32(c + VC_GFSELECT, 1);
	mmio_write32(c + VC_GF, 1);
	mmio_write8(c + VC_STATUS, ST_ACK | ST_DRIVER | ST_FEATURES_OK);
	if (!(mmio_read8(c + VC_STATUS) & ST_FEATURES_OK))
		return -UMSI_ENODEV;

	/* Vectors: the fired queue, the configuration, net's receive queue. */
	n = kdrv_setup_vectors(d, 1, vi->net ? 3 : 2, UMSI_PCI_IRQ_MSIX, virtio_irq);
	if (n < 0)
		n = kdrv_setup_vectors(d, 1, 1, UMSI_PCI_IRQ_INTX, virtio_irq);
	if (n < 0)
		return n;
	d->nfire = 1;
	mmio_write16(c + VC_MSIX_CONFIG, entry_of(d, 1));
	err = vq_setup(d, &vi->fire_q, vi->net ? 1 : 0, entry_of(d, 0));
	if (!err && vi->net)
		err = vq_setup(d, &vi->rx_q, 0, entry_of(d, 2));
	if (err)
		return err;
	mmio_write8(c + VC_STATUS, ST_ACK | ST_DRIVER | ST_FEATURES_OK | ST_DRIVER_OK);
	return n;
}

/* One buffer for the device: random bytes to fill, or a frame to send. */
static void virtio_raise(struct kdev *d, uint32_t n)
{
	struct virtio *vi = d->priv;
	struct vq *q = &vi->fire_q;
	volatile uint8_t *desc = q->page + 16 * (q->avail_idx % q->size);
	volatile uint8_t *avail = q->page + 256;
	uint32_t len = vi->net ? NET_HDR_LEN + FRAME_LEN : 16;

	(void)n;
	if (vi->net) {
		memset(q->buf, 0, len);
		memset(q->buf + NET_HDR_LEN, 0xff, 6);		/* broadcast */
		q->buf[NET_HDR_LEN + 6] = 0x02;			/* local MAC */
		q->buf[NET_HDR_LEN + 12] = 0x88;		/* local */
		q->buf[NET_HDR_LEN + 13] = 0xb5;		/* ethertype */
	}
	*(volatile uint64_t *)desc = (uint64_t)q->buf;
	*(volatile uint32_t *)(desc + 8) = len;
	*(volatile uint16_t *)(desc + 12) = vi->net ? 0 : DESC_F_WRITE;
	*(volatile uint16_t *)(desc + 14) = 0;
	*ring16(avail, 4 + 2 * (q->avail_idx % q->size)) = q->avail_idx % q->size;
	q->avail_idx++;
	__atomic_store_n(ring16(avail, 2), q->avail_idx, __ATOMIC_RELEASE);
	mfence();
	mmio_write16(q->notify, q->index);
}

/* Removal: a reset stops the device (4.1.4.3.2). */
static void virtio_stop(struct kdev *d)
{
	struct virtio *vi = d->priv;

	if (!vi || !vi->common || kdrv_gone(d))
		return;
	mmio_write8(vi->common + VC_STATUS, 0);
	for (int i = 0; i < 1000 && mmio_read8(vi->common + VC_STATUS); i++)
		udelay(10);
}

static void virtio_release(struct kdev *d)
{
	kdrv_free_pages(d);
	if (d->priv)
		kfree(d->priv, sizeof(struct virtio));
	d->priv = NULL;
}

const struct kdriver virtio_driver = {
	.name = "virtio",
	.vendor = VIRTIO_VENDOR,
	.device = 0xffff,
	.match = virtio_match,
	.admin = 1,
	.probe = virtio_probe,
	.raise = virtio_raise,
	.stop = virtio_stop,
	.release = virtio_release,
};
