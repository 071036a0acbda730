/* SPDX-License-Identifier: MIT */
/*
 * nvme.c - an NVMe controller (QEMU's nvme, 1b36:0010): MSI-X only.
 *
 * Vector 0 serves the admin completion queue; vector k (k >= 1) serves
 * I/O completion queue k (as many as the kernel's probe policy grants,
 * by default one per CPU), created with Interrupt Vector k (the MSI-X
 * table index). An event on vector 0 is an admin command (Identify); on
 * vector k a one-sector Read from I/O submission queue k, whose data is
 * checked against the pattern the test wrote into the drive image
 * (sector s starts with "UMSI" and s as a little-endian 32-bit number).
 *
 * `nvme.managed`: the vectors are managed IRQs spread over the CPUs
 * (UMSI_PCI_IRQ_AFFINITY), as Linux's nvme driver has its queues' vectors:
 * each stays on the CPUs it was spread to, is shut down when they all go
 * offline and restarted when one comes back. uMSI has no "pre-vectors",
 * so the admin queue's vector is spread with the others.
 *
 * NVMe 1.4: registers CAP 0x00, CC 0x14, CSTS 0x1c, AQA 0x24, ASQ 0x28,
 * ACQ 0x30; doorbells from 0x1000 with stride 4 << CAP.DSTRD (SQ y tail
 * at 2y, CQ y head at 2y + 1). A completion entry is new when its phase
 * bit (DW3 bit 16) equals the queue's current phase, which flips at
 * every wrap.
 */
#include "drivers.h"

#define NVME_CAP   0x00
#define NVME_CC    0x14
#define NVME_CSTS  0x1c
#define NVME_AQA   0x24
#define NVME_ASQ   0x28
#define NVME_ACQ   0x30

#define QDEPTH     16
#define MAX_IOQ    64			/* QEMU's default max_ioqpairs */

struct nvme_queue {
	volatile uint32_t *sq;		/* QDEPTH entries of 16 dwords */
	volatile uint32_t *cq;		/* QDEPTH entries of 4 dwords */
	uint16_t sq_tail, cq_head, cid;
	uint8_t phase;
	uint8_t *buf;			/* 4 KiB data buffer */
	uint32_t lba;			/* sector of the read in flight */
	volatile uint32_t last_status;
};

#define NSECT      256			/* sectors the test image holds */

/*
 * What a secondary controller (an SR-IOV VF's) was given by its primary:
 * queues (admin included) and interrupt vectors (NVMe 1.4, 8.5).
 */
struct nvme_vf_res {
	uint16_t scid;			/* its controller ID */
	uint16_t nvq, nvi;
};

#define NVME_MAX_VFS 64

struct nvme {
	uint32_t dstrd;
	struct nvme_queue q[1 + MAX_IOQ];
	volatile uint32_t reads, bad_data;
	struct nvme_vf_res vf[NVME_MAX_VFS];	/* a PF's VFs */
};

static void wr64(uint64_t a, uint64_t v)
{
	mmio_write32(a, (uint32_t)v);
	mmio_write32(a + 4, (uint32_t)(v >> 32));
}

static uint64_t doorbell(struct kdev *d, uint32_t qid, bool cq)
{
	struct nvme *nv = d->priv;

	return d->bar0 + 0x1000 + (2 * qid + (cq ? 1 : 0)) * (4u << nv->dstrd);
}

static void queue_init(struct kdev *d, struct nvme_queue *q)
{
	q->sq = kdrv_page(d);
	q->cq = kdrv_page(d);
	q->buf = kdrv_page(d);
	q->phase = 1;
}

/* Put a command in @qid's submission queue and ring its doorbell. */
static void submit(struct kdev *d, uint32_t qid, const uint32_t cmd[16])
{
	struct nvme *nv = d->priv;
	struct nvme_queue *q = &nv->q[qid];
	volatile uint32_t *e = q->sq + 16 * q->sq_tail;

	for (int i = 0; i < 16; i++)
		e[i] = cmd[i];
	e[0] = (cmd[0] & 0xffff) | ((uint32_t)q->cid++ << 16);
	q->sq_tail = (uint16_t)((q->sq_tail + 1) % QDEPTH);
	mfence();
	mmio_write32(doorbell(d, qid, false), q->sq_tail);
}

/* Consume the completions of queue @qid; returns how many. */
static uint32_t reap(struct kdev *d, uint32_t qid)
{
	struct nvme *nv = d->priv;
	struct nvme_queue *q = &nv->q[qid];
	uint32_t n = 0;

	for (;;) {
		volatile uint32_t *e = q->cq + 4 * q->cq_head;
		uint32_t dw3 = e[3];

		if (((dw3 >> 16) & 1) != q->phase)
			break;
		q->last_status = dw3 >> 17;
		if (++q->cq_head == QDEPTH) {
			q->cq_head = 0;
			q->phase ^= 1;
		}
		n++;
	}
	if (n)
		mmio_write32(doorbell(d, qid, true), q->cq_head);
	return n;
}

static bool sector_ok(const uint8_t *b, uint32_t lba)
{
	return b[0] == 'U' && b[1] == 'M' && b[2] == 'S' && b[3] == 'I' &&
	       (b[4] | b[5] << 8 | b[6] << 16 | (uint32_t)b[7] << 24) == lba;
}

static int nvme_irq(uint32_t irq, void *cookie)
{
	struct kvec *v = cookie;
	struct kdev *d = v->dev;
	struct nvme *nv = d->priv;
	struct nvme_queue *q = &nv->q[v->n];

	(void)irq;
	if (!reap(d, v->n)) {
		v->none++;
		return UMSI_IRQ_NONE;
	}
	if (v->n > 0) {
		nv->reads++;
		if (q->last_status || !sector_ok(q->buf, q->lba))
			nv->bad_data++;
	}
	return kdrv_event(v) ? UMSI_IRQ_HANDLED : UMSI_IRQ_NONE;
}

static uint32_t cmd_status(struct kdev *d, uint32_t qid)
{
	return ((struct nvme *)d->priv)->q[qid].last_status;
}

/* Submit on @qid and wait (interrupt-driven) for its completion. */
static bool sync_cmd(struct kdev *d, uint32_t qid, const uint32_t cmd[16])
{
	struct kvec *v = &d->vecs[qid];
	uint64_t end = clock_ns() + 2000000000ull;

	kdrv_expect(v);
	submit(d, qid, cmd);
	while (v->count < v->sent && clock_ns() < end && !kdrv_gone(d))
		cpu_relax();
	return v->count == v->sent && !cmd_status(d, qid);
}

static bool wait_ready(struct kdev *d, uint32_t want, uint64_t ms)
{
	uint64_t end = clock_ns() + ms * 1000000ull;

	while (clock_ns() < end) {
		uint32_t csts = mmio_read32(d->bar0 + NVME_CSTS);

		if (csts & 2)
			return false;	/* controller fatal status */
		if ((csts & 1) == want)
			return true;
		cpu_relax();
	}
	return false;
}

static void set_prp(uint32_t cmd[16], const volatile void *p)
{
	cmd[6] = (uint32_t)(uint64_t)p;
	cmd[7] = (uint32_t)((uint64_t)p >> 32);
}

static int nvme_probe(struct kdev *d)
{
	const struct nvme_vf_res *vf = d->priv;	/* a VF: what it has */
	struct umsi_pci_info info;
	struct nvme *nv;
	uint64_t cap, timeout_ms;
	uint32_t nio, max, cmd[16];
	int n;

	d->priv = NULL;
	if (!d->pci->bar[0].assigned)
		return -UMSI_ENODEV;
	d->bar0 = (uint64_t)mm_map_mmio(d->pci->bar[0].addr, d->pci->bar[0].size);
	nv = kalloc(sizeof(*nv));
	if (!nv)
		return -UMSI_ENOMEM;
	d->priv = nv;
	cap = mmio_read32(d->bar0 + NVME_CAP) |
	      (uint64_t)mmio_read32(d->bar0 + NVME_CAP + 4) << 32;
	nv->dstrd = (uint32_t)(cap >> 32) & 0xf;
	timeout_ms = ((cap >> 24) & 0xff) * 500 + 500;

	/* Vectors first: enabling MSI-X sets Bus Master, which the
	 * controller needs to fetch commands. The admin queue's and one per
	 * I/O queue, as many as the table and MAX_IOQ allow: the kernel's
	 * probe policy trims that to one per CPU (kdrv_budget). */
	umsi_pci_get_info(d->udev, &info);
	max = info.msix_max < 1 + MAX_IOQ ? info.msix_max : 1 + MAX_IOQ;
	/* A secondary controller has the vectors and queues it was given,
	 * whatever its table holds. */
	if (vf && max > vf->nvi)
		max = vf->nvi;
	if (vf && max > vf->nvq)
		max = vf->nvq;
	n = kdrv_setup_vectors(d, 2, max < 2 ? 2 : max, UMSI_PCI_IRQ_MSIX |
			       (cmdline_flag("nvme.managed") ? UMSI_PCI_IRQ_AFFINITY : 0),
			       nvme_irq);
	if (n < 0)
		return n;
	nio = (uint32_t)n - 1;
	for (uint32_t q = 0; q <= nio; q++)
		queue_init(d, &nv->q[q]);

	/* Reset, admin queues, enable (NVMe 1.4, 7.6.1). */
	if (mmio_read32(d->bar0 + NVME_CC) & 1) {
		mmio_write32(d->bar0 + NVME_CC, 0);
		if (!wait_ready(d, 0, timeout_ms))
			return -UMSI_ETIMEDOUT;
	}
	mmio_write32(d->bar0 + NVME_AQA, (QDEPTH - 1) << 16 | (QDEPTH - 1));
	wr64(d->bar0 + NVME_ASQ, (uint64_t)nv->q[0].sq);
	wr64(d->bar0 + NVME_ACQ, (uint64_t)nv->q[0].cq);
	mmio_write32(d->bar0 + NVME_CC, (4u << 20) | (6u << 16) | 1);
	if (!wait_ready(d, 1, timeout_ms))
		return -UMSI_ETIMEDOUT;

	/* Identify Controller: the first admin completion, on vector 0. */
	memset(cmd, 0, sizeof(cmd));
	cmd[0] = 0x06;
	set_prp(cmd, nv->q[0].buf);
	cmd[10] = 1;
	if (!sync_cmd(d, 0, cmd)) {
		kprintf("nvme: %02x:%02x.%u: Identify failed: status 0x%x, "
			"%llu of %llu completions\n", PCI_BUS(d->pci->bdf),
			PCI_DEV(d->pci->bdf), PCI_FN(d->pci->bdf),
			cmd_status(d, 0), (unsigned long long)d->vecs[0].count,
			(unsigned long long)d->vecs[0].sent);
		return -UMSI_EIO;
	}

	/* I/O queue pair k completes on MSI-X table entry of vector k. */
	for (uint32_t k = 1; k <= nio; k++) {
		memset(cmd, 0, sizeof(cmd));
		cmd[0] = 0x05;		/* Create I/O Completion Queue */
		set_prp(cmd, nv->q[k].cq);
		cmd[10] = (QDEPTH - 1) << 16 | k;
		cmd[11] = d->vecs[k].hw << 16 | 0x3;	/* IV, IEN, PC */
		if (!sync_cmd(d, 0, cmd)) {
			kprintf("nvme: %02x:%02x.%u: Create I/O Completion "
				"Queue %u failed: status 0x%x\n",
				PCI_BUS(d->pci->bdf), PCI_DEV(d->pci->bdf),
				PCI_FN(d->pci->bdf), k, cmd_status(d, 0));
			return -UMSI_EIO;
		}
		memset(cmd, 0, sizeof(cmd));
		cmd[0] = 0x01;		/* Create I/O Submission Queue */
		set_prp(cmd, nv->q[k].sq);
		cmd[10] = (QDEPTH - 1) << 16 | k;
		cmd[11] = k << 16 | 0x1;		/* CQID, PC */
		if (!sync_cmd(d, 0, cmd))
			return -UMSI_EIO;
	}
	return n;
}

/*
 * Removal: disable the controller (CC.EN 0) so it fetches and completes
 * nothing more, and wait for CSTS.RDY to follow, unless the function is
 * gone (then CSTS reads all-ones and nothing is waited for).
 */
static void nvme_stop(struct kdev *d)
{
	uint64_t cap;

	if (kdrv_gone(d))
		return;
	cap = mmio_read32(d->bar0 + NVME_CAP);
	mmio_write32(d->bar0 + NVME_CC, 0);
	wait_ready(d, 0, ((cap >> 24) & 0xff) * 500 + 500);
}

static void nvme_release(struct kdev *d)
{
	kdrv_free_pages(d);
	if (d->priv)
		kfree(d->priv, sizeof(struct nvme));
	d->priv = NULL;
}

static void nvme_raise(struct kdev *d, uint32_t n)
{
	struct nvme *nv = d->priv;
	struct nvme_queue *q = &nv->q[n];
	uint32_t cmd[16];

	memset(cmd, 0, sizeof(cmd));
	if (n == 0) {
		cmd[0] = 0x06;		/* Identify Controller */
		set_prp(cmd, q->buf);
		cmd[10] = 1;
	} else {
		q->lba = (q->lba + 7 * n + 1) % NSECT;
		cmd[0] = 0x02;		/* Read one sector */
		cmd[1] = 1;		/* namespace 1 */
		set_prp(cmd, q->buf);
		cmd[10] = q->lba;
	}
	submit(d, n, cmd);
}

static bool nvme_check(struct kdev *d)
{
	struct nvme *nv = d->priv;

	kprintf("UMSI {\"event\":\"nvme\",\"bdf\":\"0000:%02x:%02x.%u\","
		"\"io_queues\":%u,\"reads\":%u,\"bad_reads\":%u}\n",
		PCI_BUS(d->pci->bdf), PCI_DEV(d->pci->bdf), PCI_FN(d->pci->bdf),
		d->nvec - 1, nv->reads, nv->bad_data);
	return nv->reads && !nv->bad_data;
}

/* ---- SR-IOV: the primary controller serves its secondaries ---------------- */

#define NVME_ID_PRIMARY_CAP   0x14	/* Identify CNS: 8.5.1 */
#define NVME_ID_SECONDARY     0x15
#define NVME_VM_OFFLINE       0x7	/* Virtualization Management actions */
#define NVME_VM_ASSIGN        0x8
#define NVME_VM_ONLINE        0x9
#define NVME_VM_RT_VQ         0	/* resource types */
#define NVME_VM_RT_VI         1

static bool virt_mgmt(struct kdev *d, uint16_t cntlid, uint32_t rt,
		      uint32_t act, uint32_t nr)
{
	uint32_t cmd[16];

	memset(cmd, 0, sizeof(cmd));
	cmd[0] = 0x1c;			/* Virtualization Management */
	cmd[10] = (uint32_t)cntlid << 16 | rt << 8 | act;
	cmd[11] = nr;
	return sync_cmd(d, 0, cmd);
}

static bool identify(struct kdev *d, uint32_t cns)
{
	struct nvme *nv = d->priv;
	uint32_t cmd[16];

	memset(cmd, 0, sizeof(cmd));
	cmd[0] = 0x06;
	set_prp(cmd, nv->q[0].buf);
	cmd[10] = cns;
	return sync_cmd(d, 0, cmd);
}

static uint16_t le16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t le32(const uint8_t *p) { return le16(p) | (uint32_t)le16(p + 2) << 16; }

/*
 * Each VF's secondary controller gets an equal share of the flexible
 * queues and interrupts (at most the per-secondary maximum), then goes
 * online: NVMe 1.4, 8.5.3. Offline first: a controller is given
 * resources only while offline.
 */
static int nvme_sriov_up(struct kdev *d, uint16_t nvfs, void **vf_priv)
{
	struct nvme *nv = d->priv;
	const uint8_t *b = nv->q[0].buf;
	uint32_t vqfrt, vifrt, nvq, nvi;
	uint16_t vqfrsm, vifrsm, nlist;

	if (nvfs > NVME_MAX_VFS || !identify(d, NVME_ID_PRIMARY_CAP))
		return -UMSI_EIO;
	vqfrt = le32(b + 32);
	vqfrsm = le16(b + 44);
	vifrt = le32(b + 64);
	vifrsm = le16(b + 76);
	nvq = vqfrt / nvfs < vqfrsm ? vqfrt / nvfs : vqfrsm;
	nvi = vifrt / nvfs < vifrsm ? vifrt / nvfs : vifrsm;
	kprintf("nvme: primary: %u flexible queues (%u a secondary at most), "
		"%u flexible interrupts (%u); %u VFs get %u and %u each\n",
		vqfrt, vqfrsm, vifrt, vifrsm, nvfs, nvq, nvi);
	if (nvq < 2 || nvi < 1)
		return -UMSI_ENOSPC;
	if (!identify(d, NVME_ID_SECONDARY))
		return -UMSI_EIO;
	nlist = b[0];
	for (uint16_t i = 0; i < nvfs; i++) {
		const uint8_t *e = NULL;
		struct nvme_vf_res *r = &nv->vf[i];

		/* The entry whose Virtual Function Number is i + 1. */
		for (uint16_t k = 0; k < nlist && k < 127; k++)
			if (le16(b + 32 + 32 * k + 8) == i + 1)
				e = b + 32 + 32 * k;
		if (!e)
			return -UMSI_ENOENT;
		r->scid = le16(e);
		r->nvq = (uint16_t)nvq;
		r->nvi = (uint16_t)nvi;
		vf_priv[i] = r;
	}
	/* The list lives in the buffer the commands below reuse. */
	for (uint16_t i = 0; i < nvfs; i++) {
		struct nvme_vf_res *r = &nv->vf[i];

		if (!virt_mgmt(d, r->scid, 0, NVME_VM_OFFLINE, 0) ||
		    !virt_mgmt(d, r->scid, NVME_VM_RT_VQ, NVME_VM_ASSIGN, nvq) ||
		    !virt_mgmt(d, r->scid, NVME_VM_RT_VI, NVME_VM_ASSIGN, nvi) ||
		    !virt_mgmt(d, r->scid, 0, NVME_VM_ONLINE, 0)) {
			kprintf("nvme: secondary controller %u (VF %u): "
				"virtualization management failed, status "
				"0x%x\n", r->scid, i, cmd_status(d, 0));
			return -UMSI_EIO;
		}
	}
	return 0;
}

/* Offline, and the resources back to the primary's flexible pool. */
static void nvme_sriov_down(struct kdev *d, uint16_t nvfs)
{
	struct nvme *nv = d->priv;

	for (uint16_t i = 0; i < nvfs && i < NVME_MAX_VFS; i++) {
		struct nvme_vf_res *r = &nv->vf[i];

		if (!virt_mgmt(d, r->scid, 0, NVME_VM_OFFLINE, 0) ||
		    !virt_mgmt(d, r->scid, NVME_VM_RT_VQ, NVME_VM_ASSIGN, 0) ||
		    !virt_mgmt(d, r->scid, NVME_VM_RT_VI, NVME_VM_ASSIGN, 0))
			kprintf("nvme: secondary controller %u (VF %u): "
				"cannot take it offline, status 0x%x\n",
				r->scid, i, cmd_status(d, 0));
	}
}

const struct kdriver nvme_driver = {
	.name = "nvme",
	.vendor = 0x1b36,
	.device = 0x0010,
	.admin = 1,
	.probe = nvme_probe,
	.raise = nvme_raise,
	.check = nvme_check,
	.stop = nvme_stop,
	.release = nvme_release,
	.sriov_up = nvme_sriov_up,
	.sriov_down = nvme_sriov_down,
};
