/* SPDX-License-Identifier: MIT */
/*
 * The AMD-Vi interrupt-remapping back end (umsi/internal/ctl.h), after the
 * AMD I/O Virtualization Technology (IOMMU) specification: MMIO registers
 * 3.4, the device table entry 2.2.2, the interrupt remapping table 2.2.5,
 * commands 2.4 (COMPLETION_WAIT, INVALIDATE_DEVTAB_ENTRY,
 * INVALIDATE_INTERRUPT_TABLE), with the layout QEMU 7.2's amd-iommu uses.
 *
 * The local APIC side is the x86 back end's (lapic.c). What changes is
 * the message: address 0xFEE00000 and data an index into a table of the
 * requester's own, which the unit finds through the device table entry of
 * the DeviceID writing the message. A device can therefore neither raise
 * a vector nobody gave it nor use another device's entries, and an
 * interrupt moves by rewriting its entry: the device's message never
 * changes.
 *
 * A wired input (an IO-APIC redirection entry) is a message of the
 * IO-APIC's DeviceID like any other: an entry of its table (256 entries,
 * so the index fits the redirection entry's vector field with delivery
 * mode fixed), address 0xFEE00000 exactly (QEMU 7.2 takes nothing else).
 * The unit's message carries no trigger mode, so the local APIC never
 * forwards the EOI of a level input: the host ends it at the IO-APIC (its
 * EOI register, with the entry's vector field), and learns from the
 * message's data bits 31:16 which CPU and vector that EOI follows
 * (umsi/ctl.h, UMSI_AMDVI_WIRED_*). A move rewrites the entry and has the
 * host rewrite the redirection entry (UMSI_CTL_REWRITE) for those bits.
 *
 * Every DeviceID's entry starts aborting interrupts (IV set, IntCtl 00b);
 * a DeviceID's first IRQ gives it a table (IntCtl 10b, remapped), its last
 * takes it away again. Each change of a DTE or of an entry is followed by
 * the matching invalidation command and a COMPLETION_WAIT whose store the
 * back end polls with a deadline: a unit that does not answer fails the
 * call with -UMSI_ETIMEDOUT, and is not trusted again.
 *
 * A machine may have several IOMMUs (an IVRS table of several IVHDs),
 * each serving the DeviceIDs of its device entries with its own device
 * table and command buffer (struct av_unit). A DeviceID's table is
 * pointed at from its own IOMMU's device table, and every command about
 * it goes there. One lock covers them all.
 */
#include <umsi/ctl.h>
#include <umsi/internal/bitops.h>
#include <umsi/internal/ctl.h>
#include <umsi/internal/hostcall.h>
#include <umsi/internal/idmap.h>
#include <umsi/internal/lib.h>
#include <umsi/x86.h>

#include "lapic.h"

/* Registers (3.4), offsets from the unit's base. */
#define AV_DEVTAB               0x0000u
#define AV_CMDBUF               0x0008u
#define AV_CONTROL              0x0018u
#define AV_EFR                  0x0030u
#define AV_CMD_HEAD             0x2000u
#define AV_CMD_TAIL             0x2008u
#define AV_STATUS               0x2020u
#define AV_REG_SIZE             0x4000u

#define CTL_IOMMU_EN            (1ull << 0)
#define CTL_CMDBUF_EN           (1ull << 12)

/* The command buffer: 256 entries of 16 bytes (ComLen 8). */
#define CMD_ENTRIES             256u
#define CMD_SIZE                (CMD_ENTRIES * 16u)
#define CMDBUF_LEN(log2)        ((uint64_t)(log2) << 56)

/* Commands (2.4): the opcode in bits 63:60 of the first quadword. */
#define CMD_OP(op)              ((uint64_t)(op) << 60)
#define CMD_COMPLETION_WAIT     1u
#define CMD_INV_DEVTAB          2u
#define CMD_INV_INTR_TABLE      5u
#define CW_STORE                (1ull << 0)

/* Device table entry, the third quadword (2.2.2.2). */
#define DTE_IV                  (1ull << 0)
#define DTE_INTTABLEN(n)        ((uint64_t)(n) << 1)
#define DTE_ROOT_MASK           (((1ull << 46) - 1) << 6)
#define DTE_INTCTL_ABORT        (0ull << 60)
#define DTE_INTCTL_PASS         (1ull << 60)
#define DTE_INTCTL_REMAP        (2ull << 60)
#define DTE_SIZE                32u
#define DTE_PER_PAGE            (4096u / DTE_SIZE)

/* Interrupt remapping table entry, 32 bits, guest virtual APIC off. */
#define IRTE_REMAP_EN           (1u << 0)
#define IRTE_DEST(d)            ((uint32_t)(d) << 8)
#define IRTE_VECTOR(v)          ((uint32_t)(v) << 16)
#define IRT_ALIGN               128u
/* The IO-APIC's table: every index a redirection entry's vector field. */
#define IOAPIC_IRTE             256u

#define AV_MSI_ADDR             0xfee00000u
#define AV_TIMEOUT_NS           10000000ull
#define AV_MAX_POLLS            10000000u
#define AV_HASH                 256u

/*
 * One IOMMU: its registers, device table and command buffer. Under
 * av_priv.lock.
 */
struct av_unit {
	volatile uint8_t *regs;
	uint64_t reg_base;
	/* Its DeviceIDs: @ndevs ranges from av_priv.ranges[@devs0];
	 * @all: the one unit of a configuration without units. */
	uint16_t segment;
	bool all;
	uint32_t devs0, ndevs;
	volatile uint64_t *devtab;
	uint64_t devtab_phys;
	volatile uint64_t *cmd;
	uint64_t cmd_phys;
	volatile uint64_t *status;
	uint64_t status_phys;
	uint32_t cmd_tail;
	uint64_t wait_seq;
	bool broken, told, tell, enabled;
	uint64_t tell_head, tell_tail;
};

/* One DeviceID with interrupts of uMSI's: its table. */
struct av_dev {
	struct av_dev *next;
	struct av_unit *u;
	uint32_t devid, nirqs, bits;
	volatile uint32_t *irt;
	uint64_t irt_phys;
	size_t irt_size, size;
	bool stuck;             /* an invalidation unconfirmed: kept */
	struct umsi_idmap used;
};

/*
 * An IRQ's entries: @base..@base + @count - 1 of @dev's table; or a split
 * MSI block's (umsi_ctl_domain.block_targets), keyed by its first IRQ,
 * entry @base + i for message i, @live the messages whose IRQ holds its
 * entry.
 */
struct av_irq {
	struct av_irq *next;
	struct av_dev *dev;
	uint32_t irq, base, count, live;
	bool group, stuck;
};

/* The back end's state (umsi_ctl_env.priv). Under @lock. */
struct av_priv {
	void *lock;
	uint32_t ndev, ioapic_devid;
	/* Several IO-APICs (umsi_amdvi_config.ioapics): nioapics of them. */
	uint32_t nioapics;
	struct umsi_ioapic_source *ioapics;
	uint64_t idle_dte;              /* a DeviceID without a table */
	size_t devtab_size;
	/* The units, and every unit's DeviceID ranges back to back. */
	uint32_t nunits;
	struct av_unit *units;
	struct umsi_rid_range *ranges;
	size_t size;
	struct av_dev *devs, *held;
	struct av_irq *hash[AV_HASH];
};

static struct av_priv *av_priv(struct umsi_system *sys)
{
	return umsi_ctl_env(sys)->priv;
}

static uint64_t rd64(struct umsi_system *sys, struct av_unit *u, uint32_t off)
{
	return umsi_mmio_read64_lohi(sys, u->regs + off);
}

static void wr64(struct umsi_system *sys, struct av_unit *u, uint32_t off,
		 uint64_t v)
{
	umsi_mmio_write64_lohi(sys, u->regs + off, v);
}

static umsi_irqflags_t av_lock(struct umsi_system *sys)
{
	return umsi_host_lock_acquire(sys, av_priv(sys)->lock);
}

static void av_unlock(struct umsi_system *sys, umsi_irqflags_t fl)
{
	umsi_host_lock_release(sys, av_priv(sys)->lock, fl);
}

/* ---- Commands ----------------------------------------------------------------- */

static void cmd_put(struct av_unit *u, uint64_t lo, uint64_t hi)
{
	u->cmd[2 * u->cmd_tail] = lo;
	u->cmd[2 * u->cmd_tail + 1] = hi;
	u->cmd_tail = (u->cmd_tail + 1) % CMD_ENTRIES;
}

/*
 * Queue @what (CMD_INV_DEVTAB or CMD_INV_INTR_TABLE) for DeviceID @devid
 * on @u, or nothing when @what is 0, then a COMPLETION_WAIT storing a new
 * sequence number; tell the unit and wait for the store. [av lock]
 */
static int av_sync(struct umsi_system *sys, struct av_unit *u, uint32_t what,
		   uint32_t devid)
{
	uint64_t start, seq;
	uint32_t n;

	if (u->broken)
		return -UMSI_EIO;
	seq = ++u->wait_seq;
	*u->status = 0;
	if (what)
		cmd_put(u, CMD_OP(what) | (devid & 0xffff), 0);
	cmd_put(u, CMD_OP(CMD_COMPLETION_WAIT) | CW_STORE | u->status_phys,
		seq);
	umsi_dev_wmb();
	wr64(sys, u, AV_CMD_TAIL, (uint64_t)u->cmd_tail << 4);
	start = umsi_host_clock_ns(sys);
	for (n = 0; n < AV_MAX_POLLS; n++) {
		if (*u->status == seq)
			return 0;
		if (umsi_host_clock_ns(sys) - start > AV_TIMEOUT_NS)
			break;
		umsi_cpu_relax();
	}
	if (*u->status == seq)
		return 0;
	u->broken = true;
	if (!u->told) {
		/* Said by av_tell(): log is not called under our lock. */
		u->told = true;
		u->tell = true;
		u->tell_head = rd64(sys, u, AV_CMD_HEAD);
		u->tell_tail = rd64(sys, u, AV_CMD_TAIL);
	}
	return -UMSI_ETIMEDOUT;
}

/* Say what av_sync() found on @u (NULL: nothing to say), once, outside
 * the lock. [no lock] */
static void av_tell(struct umsi_system *sys, struct av_unit *u)
{
	umsi_irqflags_t fl;
	uint64_t head, tail;
	bool tell;

	if (!u)
		return;
	fl = av_lock(sys);
	tell = u->tell;
	u->tell = false;
	head = u->tell_head;
	tail = u->tell_tail;
	av_unlock(sys, fl);
	if (tell)
		umsi_log(sys, UMSI_LOG_ERROR, "x86-amdvi: command not done "
			 "within 10 ms (head 0x%llx, tail 0x%llx); the unit at "
			 "0x%llx is not trusted again", (unsigned long long)head,
			 (unsigned long long)tail,
			 (unsigned long long)u->reg_base);
}

/* Point DeviceID @devid's entry in @u at @dte's third quadword. [av lock] */
static int av_dte_set(struct umsi_system *sys, struct av_unit *u,
		      uint32_t devid, uint64_t dte2)
{
	u->devtab[4 * devid + 2] = dte2;
	umsi_dev_wmb();
	return av_sync(sys, u, CMD_INV_DEVTAB, devid);
}

/*
 * The unit of requester @sid (segment << 16 | DeviceID): the one whose
 * DeviceIDs hold it. NULL: none.
 */
static struct av_unit *av_unit_of(struct av_priv *p, uint32_t sid)
{
	uint32_t i, k;

	for (i = 0; i < p->nunits; i++) {
		struct av_unit *u = &p->units[i];

		if (u->all)
			return u;
		for (k = 0; k < u->ndevs; k++)
			if (sid >= p->ranges[u->devs0 + k].first &&
			    sid <= p->ranges[u->devs0 + k].last)
				return u;
	}
	return NULL;
}

/* ---- Devices and IRQs ---------------------------------------------------------- */

static struct av_irq **av_bucket(struct av_priv *p, uint32_t irq)
{
	return &p->hash[(irq * 2654435761u) % AV_HASH];
}

static struct av_irq *av_find(struct av_priv *p, uint32_t irq)
{
	struct av_irq *r;

	for (r = *av_bucket(p, irq); r && r->irq != irq; r = r->next)
		;
	return r;
}

static struct av_dev *av_find_dev(struct av_priv *p, struct av_unit *u,
				  uint32_t devid)
{
	struct av_dev *d;

	for (d = p->devs; d && (d->devid != devid || d->u != u); d = d->next)
		;
	return d;
}

/* A device record with a zeroed table of at least @events entries. */
static struct av_dev *av_dev_new(struct umsi_system *sys, struct av_unit *u,
				 uint32_t devid, uint32_t events)
{
	uint32_t bits = umsi_order_of(events > 2 ? events : 2);
	struct av_dev *d;
	size_t size;

	if ((1u << bits) > UMSI_AMDVI_MAX_IRTE)
		bits = umsi_order_of(UMSI_AMDVI_MAX_IRTE);
	size = (sizeof(*d) + 7) / 8 * 8 + umsi_idmap_size(1u << bits);
	d = umsi_zalloc(sys, size);
	if (!d)
		return NULL;
	d->size = size;
	d->u = u;
	d->devid = devid;
	d->bits = bits;
	umsi_idmap_init(&d->used, 1u << bits,
			(uint64_t *)(void *)((char *)d + (sizeof(*d) + 7) / 8 * 8));
	d->irt_size = (size_t)4 << bits;
	if (d->irt_size < IRT_ALIGN)
		d->irt_size = IRT_ALIGN;
	d->irt = umsi_host_phys_alloc(sys, d->irt_size, IRT_ALIGN,
				      &d->irt_phys);
	if (!d->irt) {
		umsi_free(sys, d, size);
		return NULL;
	}
	umsi_memset((void *)(uintptr_t)d->irt, 0, d->irt_size);
	return d;
}

static void av_dev_free(struct umsi_system *sys, struct av_dev *d)
{
	if (!d)
		return;
	umsi_host_phys_free(sys, (void *)(uintptr_t)d->irt, d->irt_size);
	umsi_free(sys, d, d->size);
}

static void av_unlink_dev(struct av_priv *p, struct av_dev *d)
{
	struct av_dev **l;

	for (l = &p->devs; *l && *l != d; l = &(*l)->next)
		;
	if (*l)
		*l = d->next;
}

/*
 * Whether @ci may be aimed at (@cpu, @id): its APIC ID in *@apic, and in
 * *@sid the requester (segment << 16 | DeviceID) whose table holds its
 * entries (a wired input's: its IO-APIC's, the one whose inputs hold its
 * GSI with several).
 */
static int av_check(struct umsi_system *sys, const struct umsi_ctl_irq *ci,
		    uint32_t cpu, uint32_t id, uint32_t *apic, uint32_t *sid)
{
	struct av_priv *p = av_priv(sys);
	int ret;

	*sid = ci->source_id;
	if (ci->wired) {
		ret = umsi_x86_wired_source(sys, "x86-amdvi", p->ioapics,
					    p->nioapics, p->ioapic_devid, ci,
					    sid);
		if (ret || *sid == UMSI_AMDVI_NO_DEVID || ci->count != 1 ||
		    ci->group_count)
			return -UMSI_ENOTSUP;
	}
	/* The one unit of a configuration without units: segment 0. */
	if (*sid == UMSI_NO_SOURCE || (p->units[0].all && (*sid >> 16)) ||
	    (*sid & 0xffff) >= p->ndev)
		return -UMSI_EINVAL;
	*apic = umsi_cpu_hwid(sys, cpu);
	if (id < 0x10 || id + ci->count > 0x100 || !ci->count ||
	    ci->count > 32)
		return -UMSI_EINVAL;
	/* 8 destination bits, 0xff the broadcast. */
	if (*apic > 0xfe)
		return -UMSI_ERANGE;
	return 0;
}

/* Point @r's entries @from.. at (@apic, @vector + i), one store each. */
static void irte_write(const struct av_irq *r, uint32_t from, uint32_t n,
		       uint32_t apic, uint32_t vector)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		r->dev->irt[r->base + from + i] = IRTE_REMAP_EN |
			IRTE_DEST(apic) | IRTE_VECTOR(vector + i);
	umsi_dev_wmb();
}

/*
 * The record of a new IRQ @sl.key on DeviceID @devid: the device's table
 * made (its DTE pointed at it) on its first IRQ, then the IRQ's run of
 * entries. Memory is taken before the lock. [no lock; returns locked]
 */
static int av_irq_new(struct umsi_system *sys, const struct umsi_ctl_irq *ci,
		      struct av_unit *u, uint32_t devid,
		      const struct umsi_x86_slice *sl, struct av_irq **out,
		      umsi_irqflags_t *fl)
{
	struct av_priv *p = av_priv(sys);
	struct av_irq *r = umsi_zalloc(sys, sizeof(*r));
	struct av_dev *fresh = NULL, *d;
	bool have;
	int ret = 0;

	if (!r)
		return -UMSI_ENOMEM;
	*fl = av_lock(sys);
	have = av_find_dev(p, u, devid) != NULL;
	av_unlock(sys, *fl);
	if (!have) {
		fresh = av_dev_new(sys, u, devid, ci->wired ? IOAPIC_IRTE :
				   ci->source_events > sl->n ?
				   ci->source_events : sl->n);
		if (!fresh) {
			umsi_free(sys, r, sizeof(*r));
			return -UMSI_ENOMEM;
		}
	}
	*fl = av_lock(sys);
	d = av_find_dev(p, u, devid);
	if (!d && fresh) {
		d = fresh;
		fresh = NULL;
		d->next = p->devs;
		p->devs = d;
		ret = av_dte_set(sys, u, devid, DTE_IV | DTE_INTTABLEN(d->bits) |
				 (d->irt_phys & DTE_ROOT_MASK) |
				 DTE_INTCTL_REMAP);
		d->stuck |= ret != 0;
	}
	if (!d) {
		ret = -UMSI_EAGAIN;     /* it went between the look-ups */
	} else if (!ret) {
		r->base = umsi_idmap_take_run(&d->used, sl->n,
					      (sl->n & (sl->n - 1)) ? 1 : sl->n);
		if (r->base == UINT32_MAX)
			ret = -UMSI_ENOSPC;
	}
	if (ret) {
		if (d && !d->nirqs && !d->stuck) {
			av_unlink_dev(p, d);
			(void)av_dte_set(sys, u, devid, p->idle_dte);
			fresh = d;
		}
		av_unlock(sys, *fl);
		av_tell(sys, u);
		av_dev_free(sys, fresh);
		umsi_free(sys, r, sizeof(*r));
		if (ret == -UMSI_ENOSPC)
			umsi_log(sys, UMSI_LOG_ERROR, "x86-amdvi: irq %u: no %u "
				 "free entries in DeviceID 0x%x's table (shared "
				 "by every source with that requester)",
				 ci->irq, sl->n, devid);
		return ret;
	}
	r->dev = d;
	r->irq = sl->key;
	r->count = sl->n;
	r->group = sl->group;
	d->nirqs++;
	r->next = *av_bucket(p, r->irq);
	*av_bucket(p, r->irq) = r;
	*out = r;
	av_dev_free(sys, fresh);
	return 0;
}

/*
 * The message naming @r's first entry: 0xFEE00000, data its index (the
 * device ORs a block's message number in). A wired input's adds where the
 * entry sends it, for the host's EOI (umsi/ctl.h, UMSI_AMDVI_WIRED_*).
 */
static void av_msg(const struct av_irq *r, bool wired, uint32_t apic,
		   uint32_t vector, struct umsi_msg *msg)
{
	msg->address = AV_MSI_ADDR;
	msg->data = r->base;
	if (wired)
		msg->data |= (vector & 0xff) << 16 | (apic & 0xff) << 24;
}

/*
 * The first compose of an IRQ takes its entries and writes them; a later
 * one (the message asked for again, or a move of a wired input) rewrites
 * them. An MSI's message is the same every time: 0xFEE00000, data the
 * first entry's index.
 */
static int av_compose(struct umsi_system *sys, const struct umsi_ctl_irq *ci,
		      uint32_t cpu, uint32_t id, struct umsi_msg *msg)
{
	struct av_priv *p = av_priv(sys);
	struct av_irq *r, *gone = NULL;
	struct umsi_x86_slice sl;
	struct av_unit *u;
	umsi_irqflags_t fl;
	uint32_t apic, sid, devid;
	bool new_entry;
	int ret, tries;

	ret = av_check(sys, ci, cpu, id, &apic, &sid);
	if (!ret)
		ret = umsi_x86_slice(ci, &sl);
	if (ret)
		return ret;
	/* The IOMMU whose device table points at the requester's table. */
	u = av_unit_of(p, sid);
	if (!u) {
		umsi_log(sys, UMSI_LOG_ERROR, "x86-amdvi: irq %u: no IOMMU "
			 "serves DeviceID %04x:%02x:%02x.%u", ci->irq, sid >> 16,
			 (sid >> 8) & 0xff, (sid >> 3) & 0x1f, sid & 7);
		return -UMSI_ENOTSUP;
	}
	devid = sid & 0xffff;
	for (tries = 0; tries < 4; tries++) {
		fl = av_lock(sys);
		r = av_find(p, sl.key);
		if (r)
			break;
		av_unlock(sys, fl);
		ret = av_irq_new(sys, ci, u, devid, &sl, &r, &fl);
		if (!ret)
			break;
		if (ret != -UMSI_EAGAIN)
			return ret;
	}
	if (ret)
		return -UMSI_EBUSY;
	if (r->count != sl.n || r->group != sl.group ||
	    r->dev->devid != devid || r->dev->u != u) {
		av_unlock(sys, fl);
		return -UMSI_EINVAL;
	}
	new_entry = !(r->live & (1u << sl.from));
	irte_write(r, sl.from, sl.count, apic, id);
	ret = av_sync(sys, u, CMD_INV_INTR_TABLE, r->dev->devid);
	r->stuck |= ret != 0;
	/* Unconfirmed: the unit may hold them; new ones are cleared all
	 * the same, and stay taken. */
	for (uint32_t i = 0; ret && new_entry && i < sl.count; i++)
		r->dev->irt[r->base + sl.from + i] = 0;
	if (!ret) {
		r->live |= 1u << sl.from;
		/* A block's one message, whichever member. */
		av_msg(r, ci->wired, apic, id, msg);
	} else if (!r->live) {
		/*
		 * A record no member holds goes, so that its IRQ number can
		 * come back (on another IOMMU too); its entries stay taken
		 * and its device's table is kept (stuck): the unit may
		 * still read them.
		 */
		struct av_irq **l;

		for (l = av_bucket(p, r->irq); *l != r; l = &(*l)->next)
			;
		*l = r->next;
		r->dev->stuck = true;
		r->dev->nirqs--;
		gone = r;
	}
	av_unlock(sys, fl);
	av_tell(sys, u);
	umsi_free(sys, gone, sizeof(*gone));
	return ret ? ret : 1;
}

/* A move: the entries rewritten, the message left alone. */
static int av_retarget(struct umsi_system *sys, const struct umsi_ctl_irq *ci,
		       uint32_t cpu, uint32_t id)
{
	struct av_priv *p = av_priv(sys);
	struct av_unit *u = NULL;
	struct umsi_x86_slice sl;
	struct av_irq *r;
	umsi_irqflags_t fl;
	uint32_t apic, sid;
	int ret;

	/*
	 * A wired input: the redirection entry is written again with the
	 * message compose gives (its entry rewritten there), so that the
	 * host ends it after the new CPU's EOI of the new vector.
	 */
	if (ci->wired)
		return UMSI_CTL_REWRITE;
	ret = av_check(sys, ci, cpu, id, &apic, &sid);
	if (!ret)
		ret = umsi_x86_slice(ci, &sl);
	if (ret)
		return ret;
	fl = av_lock(sys);
	r = av_find(p, sl.key);
	if (!r || !(r->live & (1u << sl.from))) {
		ret = -UMSI_ENOENT;
	} else if (r->dev->u->broken) {
		ret = -UMSI_EIO;
	} else {
		/* The IRQ's IOMMU, from its first compose. */
		u = r->dev->u;
		irte_write(r, sl.from, sl.count, apic, id);
		ret = av_sync(sys, u, CMD_INV_INTR_TABLE, r->dev->devid);
		r->stuck |= ret != 0;
	}
	av_unlock(sys, fl);
	av_tell(sys, u);
	return ret;
}

/*
 * The IRQ goes: its entries cleared and out of the unit, free (a split
 * block's run with its last member); the device's last IRQ takes its
 * table away (DTE aborting again, then the table freed). Entries or
 * tables whose invalidation the unit did not confirm stay taken.
 */
static void av_release(struct umsi_system *sys, const struct umsi_ctl_irq *ci)
{
	struct av_priv *p = av_priv(sys);
	struct av_irq **l, *r, *gone = NULL;
	struct av_dev *d, *dev_gone = NULL;
	struct av_unit *u;
	struct umsi_x86_slice sl;
	umsi_irqflags_t fl;
	uint32_t i, first = 0;
	int ret = 0;

	if (umsi_x86_slice(ci, &sl))
		return;
	fl = av_lock(sys);
	r = av_find(p, sl.key);
	if (!r || !(r->live & (1u << sl.from))) {
		av_unlock(sys, fl);
		return;
	}
	d = r->dev;
	u = d->u;
	first = r->base + sl.from;
	for (i = 0; i < sl.count; i++)
		d->irt[first + i] = 0;
	umsi_dev_wmb();
	ret = av_sync(sys, d->u, CMD_INV_INTR_TABLE, d->devid);
	r->stuck |= ret != 0;
	r->live &= ~(1u << sl.from);
	if (!r->live) {
		for (l = av_bucket(p, r->irq); *l != r; l = &(*l)->next)
			;
		*l = r->next;
		if (!r->stuck)
			for (i = 0; i < r->count; i++)
				umsi_idmap_clear(&d->used, r->base + i);
		else
			d->stuck = true;
		gone = r;
		if (--d->nirqs == 0 && !d->stuck) {
			ret = av_dte_set(sys, d->u, d->devid, p->idle_dte);
			av_unlink_dev(p, d);
			if (ret) {
				/* The unit may still read it: kept. */
				d->next = p->held;
				p->held = d;
			} else {
				dev_gone = d;
			}
		}
	}
	av_unlock(sys, fl);
	av_tell(sys, u);
	if (ret)
		umsi_log(sys, UMSI_LOG_ERROR, "x86-amdvi: irq %u: entries %u.. "
			 "of DeviceID 0x%x not confirmed invalid (%d): kept",
			 ci->irq, first, d->devid, ret);
	av_dev_free(sys, dev_gone);
	umsi_free(sys, gone, sizeof(*gone));
}

/* ---- Creation ------------------------------------------------------------------ */

static void av_phys_free(struct umsi_system *sys, volatile void *v, size_t size)
{
	if (v)
		umsi_host_phys_free(sys, (void *)(uintptr_t)v, size);
}

static void *av_phys_alloc(struct umsi_system *sys, size_t size, size_t align,
			   uint64_t *phys)
{
	void *v = umsi_host_phys_alloc(sys, size, align, phys);

	if (v)
		umsi_memset(v, 0, size);
	return v;
}

/* Unit @u off, if we turned it on and it answered. */
static void av_unit_off(struct umsi_system *sys, struct av_unit *u)
{
	if (u->regs && u->enabled && !u->broken)
		wr64(sys, u, AV_CONTROL, rd64(sys, u, AV_CONTROL) &
		     ~(CTL_IOMMU_EN | CTL_CMDBUF_EN));
}

/* Unit @u's memory back unless it may still read it (@keep), its
 * registers unmapped. */
static void av_unit_fini(struct umsi_system *sys, struct av_priv *p,
			 struct av_unit *u, bool keep)
{
	if (keep) {
		umsi_log(sys, UMSI_LOG_WARN, "x86-amdvi: the unit at 0x%llx did "
			 "not answer: its tables and command buffer stay "
			 "allocated", (unsigned long long)u->reg_base);
	} else {
		av_phys_free(sys, u->devtab, p->devtab_size);
		av_phys_free(sys, u->cmd, CMD_SIZE);
		av_phys_free(sys, u->status, 64);
	}
	if (u->regs)
		umsi_host_mmio_unmap(sys, (void *)u->regs, AV_REG_SIZE);
}

/*
 * The units off (if we turned them on), the memory back. A unit that may
 * still read the tables (an unconfirmed command) keeps its own, and the
 * interrupt tables of its DeviceIDs.
 */
static void av_fini(struct umsi_system *sys)
{
	struct umsi_ctl_env *env = umsi_ctl_env(sys);
	struct av_priv *p = env->priv;
	struct av_dev *d;
	uint32_t i;

	if (!p)
		return;
	/* Every unit off before any table it may read goes. */
	for (i = p->nunits; i-- > 0;)
		av_unit_off(sys, &p->units[i]);
	for (i = 0; i < AV_HASH; i++) {
		while (p->hash[i]) {
			struct av_irq *r = p->hash[i];

			p->hash[i] = r->next;
			umsi_free(sys, r, sizeof(*r));
		}
	}
	while (p->devs || p->held) {
		d = p->devs ? p->devs : p->held;
		if (d == p->devs)
			p->devs = d->next;
		else
			p->held = d->next;
		if (d->u->broken)
			umsi_free(sys, d, d->size);
		else
			av_dev_free(sys, d);
	}
	for (i = p->nunits; i-- > 0;)
		av_unit_fini(sys, p, &p->units[i], p->units[i].broken);
	if (p->lock)
		umsi_host_lock_destroy(sys, p->lock);
	env->priv = NULL;
	umsi_free(sys, p, p->size);
}

static bool av_base_ok(struct umsi_system *sys, uint64_t base, uint32_t i)
{
	if (base && !(base % AV_REG_SIZE))
		return true;
	if (i == UINT32_MAX)
		umsi_log(sys, UMSI_LOG_ERROR, "x86-amdvi: reg_base 0x%llx is "
			 "not a 16 KiB aligned address",
			 (unsigned long long)base);
	else
		umsi_log(sys, UMSI_LOG_ERROR, "x86-amdvi: unit %u reg_base "
			 "0x%llx is not a 16 KiB aligned address", i,
			 (unsigned long long)base);
	return false;
}

/*
 * The units of @c (umsi/ctl.h, struct umsi_amdvi_unit), their DeviceIDs
 * below @ndev: 0, or -UMSI_EINVAL after a log line naming the unit and
 * what is wrong. @nranges: their DeviceID ranges in all.
 */
static int av_check_units(struct umsi_system *sys,
			  const struct umsi_amdvi_config *c, uint32_t ndev,
			  uint32_t *nranges)
{
	uint32_t i, j;

	*nranges = 0;
	if (!c->nunits)
		return av_base_ok(sys, c->reg_base, UINT32_MAX) ? 0 :
		       -UMSI_EINVAL;
	if (c->reg_base || !c->units || c->nunits > UMSI_AMDVI_MAX_UNITS) {
		umsi_log(sys, UMSI_LOG_ERROR, "x86-amdvi: %s", c->reg_base ?
			 "reg_base and units both given (reg_base is for a "
			 "machine of one IOMMU)" : !c->units ?
			 "nunits without a units table" :
			 "more than UMSI_AMDVI_MAX_UNITS units");
		return -UMSI_EINVAL;
	}
	for (i = 0; i < c->nunits; i++) {
		const struct umsi_amdvi_unit *u = &c->units[i];

		if (!av_base_ok(sys, u->reg_base, i))
			return -UMSI_EINVAL;
		if (!u->ndevices || !u->devices ||
		    u->ndevices > UMSI_VTD_MAX_SCOPE - *nranges) {
			umsi_log(sys, UMSI_LOG_ERROR, "x86-amdvi: unit %u "
				 "(0x%llx) %s", i,
				 (unsigned long long)u->reg_base,
				 !u->ndevices ? "serves no DeviceID" :
				 !u->devices ? "has ndevices without a table" :
				 "takes the DeviceID ranges past "
				 "UMSI_VTD_MAX_SCOPE");
			return -UMSI_EINVAL;
		}
		*nranges += u->ndevices;
		for (j = 0; j < i; j++) {
			if (c->units[j].reg_base != u->reg_base)
				continue;
			umsi_log(sys, UMSI_LOG_ERROR, "x86-amdvi: units %u and "
				 "%u have one address", j, i);
			return -UMSI_EINVAL;
		}
		if (umsi_x86_ranges_check(sys, "x86-amdvi", "DeviceIDs", i,
					  u->devices, u->ndevices, u->segment,
					  ndev))
			return -UMSI_EINVAL;
		/* Against the units before: one IOMMU per DeviceID. */
		for (j = 0; j < i; j++)
			if (umsi_x86_ranges_apart(sys, "x86-amdvi", "DeviceIDs",
						  i, u->devices, u->ndevices, j,
						  c->units[j].devices,
						  c->units[j].ndevices))
				return -UMSI_EINVAL;
	}
	return 0;
}

static int av_check_config(struct umsi_system *sys,
			   const struct umsi_amdvi_config *c, uint32_t *ndev,
			   uint32_t *nranges)
{
	const struct umsi_host_ops *o = umsi_ctl_env(sys)->ops;

	if (!c) {
		umsi_log(sys, UMSI_LOG_ERROR, "x86-amdvi: no configuration "
			 "(umsi_config.ctl_config must point to a struct "
			 "umsi_amdvi_config)");
		return -UMSI_EINVAL;
	}
	if (umsi_lapic_check_host(sys, "x86-amdvi"))
		return -UMSI_EINVAL;
	if (!o->phys_alloc) {
		umsi_log(sys, UMSI_LOG_ERROR, "x86-amdvi: host operation "
			 "phys_alloc missing");
		return -UMSI_EINVAL;
	}
	if (umsi_ctl_env(sys)->plat_flags & UMSI_PLAT_IRQ_REMAP) {
		umsi_log(sys, UMSI_LOG_ERROR, "x86-amdvi: platform flag "
			 "UMSI_PLAT_IRQ_REMAP says the host remaps; this back "
			 "end remaps itself");
		return -UMSI_EINVAL;
	}
	*ndev = c->devid_count ? c->devid_count : 65536u;
	if (*ndev > 65536u || *ndev % DTE_PER_PAGE) {
		umsi_log(sys, UMSI_LOG_ERROR, "x86-amdvi: devid_count %u is not "
			 "a multiple of 128 from 128 to 65536", *ndev);
		return -UMSI_EINVAL;
	}
	if (av_check_units(sys, c, *ndev, nranges))
		return -UMSI_EINVAL;
	if (!c->nioapics && c->ioapic_devid != UMSI_AMDVI_NO_DEVID &&
	    c->ioapic_devid >= *ndev) {
		umsi_log(sys, UMSI_LOG_ERROR, "x86-amdvi: ioapic_devid 0x%x is "
			 "beyond the %u DeviceIDs of the device table",
			 c->ioapic_devid, *ndev);
		return -UMSI_EINVAL;
	}
	return umsi_x86_ioapics_check(sys, "x86-amdvi", c->ioapics,
				      c->nioapics, *ndev, false);
}

/* The unit answers and nobody else turned it on. */
static int av_check_unit(struct umsi_system *sys, struct av_unit *u)
{
	uint64_t efr = rd64(sys, u, AV_EFR), ctl = rd64(sys, u, AV_CONTROL);

	if (efr == ~0ull || ctl == ~0ull) {
		umsi_log(sys, UMSI_LOG_ERROR, "x86-amdvi: no IOMMU at 0x%llx "
			 "(registers read all-ones)",
			 (unsigned long long)u->reg_base);
		return -UMSI_EINVAL;
	}
	if (ctl & (CTL_IOMMU_EN | CTL_CMDBUF_EN)) {
		umsi_log(sys, UMSI_LOG_ERROR, "x86-amdvi: control 0x%llx: the "
			 "unit at 0x%llx or its command buffer is already on "
			 "(someone else's tables)", (unsigned long long)ctl,
			 (unsigned long long)u->reg_base);
		return -UMSI_EBUSY;
	}
	return 0;
}

/* Every DTE idle, the tables in, the command buffer and the unit on. */
static int av_start(struct umsi_system *sys, struct av_unit *u)
{
	struct av_priv *p = av_priv(sys);
	uint32_t i;

	for (i = 0; i < p->ndev; i++)
		u->devtab[4 * i + 2] = p->idle_dte;
	umsi_dev_wmb();
	wr64(sys, u, AV_DEVTAB, u->devtab_phys | (p->ndev / DTE_PER_PAGE - 1));
	wr64(sys, u, AV_CMDBUF, u->cmd_phys | CMDBUF_LEN(8));
	wr64(sys, u, AV_CMD_HEAD, 0);
	wr64(sys, u, AV_CMD_TAIL, 0);
	u->cmd_tail = 0;
	wr64(sys, u, AV_CONTROL, rd64(sys, u, AV_CONTROL) | CTL_CMDBUF_EN |
	     CTL_IOMMU_EN);
	u->enabled = true;
	/* Nothing cached from before: every DTE is new to the unit. */
	return av_sync(sys, u, 0, 0);
}

/* Map, check, give memory to and turn on unit @u. */
static int av_unit_init(struct umsi_system *sys, struct av_unit *u,
			const struct umsi_amdvi_config *c)
{
	struct av_priv *p = av_priv(sys);
	void *v;
	int ret;

	ret = umsi_host_mmio_map(sys, u->reg_base, AV_REG_SIZE, &v);
	if (ret)
		return ret;
	u->regs = v;
	ret = av_check_unit(sys, u);
	if (ret)
		return ret;
	u->devtab = av_phys_alloc(sys, p->devtab_size, 4096, &u->devtab_phys);
	u->cmd = av_phys_alloc(sys, CMD_SIZE, 4096, &u->cmd_phys);
	u->status = av_phys_alloc(sys, 64, 64, &u->status_phys);
	if (!u->devtab || !u->cmd || !u->status)
		return -UMSI_ENOMEM;
	ret = av_start(sys, u);
	av_tell(sys, u);
	if (ret)
		return ret;
	umsi_log(sys, UMSI_LOG_INFO, "x86-amdvi: unit at 0x%llx, %u DeviceIDs, "
		 "device table at 0x%llx, other devices' interrupts %s",
		 (unsigned long long)u->reg_base, p->ndev,
		 (unsigned long long)u->devtab_phys,
		 c->allow_pass ? "passed" : "aborted");
	return 0;
}

/* The units and their DeviceIDs from @c into @p (checked already). */
static void av_units_from(struct av_priv *p, const struct umsi_amdvi_config *c)
{
	uint32_t i, next = 0;

	if (!c->nunits) {
		p->units[0].reg_base = c->reg_base;
		p->units[0].all = true;
		return;
	}
	for (i = 0; i < c->nunits; i++) {
		struct av_unit *u = &p->units[i];

		u->reg_base = c->units[i].reg_base;
		u->segment = c->units[i].segment;
		u->devs0 = next;
		u->ndevs = c->units[i].ndevices;
		umsi_memcpy(&p->ranges[next], c->units[i].devices,
			    u->ndevs * sizeof(*p->ranges));
		next += u->ndevs;
	}
}

static int av_init(struct umsi_system *sys, uint32_t ncpus,
		   struct umsi_matrix_config *space)
{
	struct umsi_ctl_env *env = umsi_ctl_env(sys);
	const struct umsi_amdvi_config *c = env->ctl_config;
	uint32_t ndev, nunits, nranges, i;
	struct av_priv *p;
	size_t size;
	int ret;

	ret = av_check_config(sys, c, &ndev, &nranges);
	if (ret)
		return ret;
	nunits = c->nunits ? c->nunits : 1;
	/* One allocation: the units, the DeviceID ranges, the IO-APICs. */
	size = sizeof(*p) + nunits * sizeof(*p->units) +
	       (size_t)nranges * sizeof(*p->ranges) +
	       (size_t)c->nioapics * sizeof(*p->ioapics);
	p = umsi_zalloc(sys, size);
	if (!p)
		return -UMSI_ENOMEM;
	p->size = size;
	p->ndev = ndev;
	p->units = (struct av_unit *)(p + 1);
	p->nunits = nunits;
	p->ranges = (struct umsi_rid_range *)(void *)(p->units + nunits);
	p->ioapics = (struct umsi_ioapic_source *)(p->ranges + nranges);
	av_units_from(p, c);
	p->ioapic_devid = c->ioapic_devid;
	p->nioapics = c->nioapics;
	if (c->nioapics)
		umsi_memcpy(p->ioapics, c->ioapics,
			    c->nioapics * sizeof(*p->ioapics));
	p->idle_dte = DTE_IV | (c->allow_pass ? DTE_INTCTL_PASS :
					      DTE_INTCTL_ABORT);
	p->devtab_size = (size_t)ndev * DTE_SIZE;
	env->priv = p;
	ret = -UMSI_ENOMEM;
	p->lock = umsi_host_lock_create(sys);
	if (!p->lock)
		goto fail;
	for (i = 0; i < nunits; i++) {
		ret = av_unit_init(sys, &p->units[i], c);
		if (ret)
			goto fail;
	}
	umsi_matrix_default_config(space, ncpus);
	if (!(env->plat_flags & UMSI_PLAT_ISA_PIC))
		space->legacy_count = 0;
	return 0;
fail:
	av_fini(sys);
	return ret;
}

static int av_cpu_init(struct umsi_system *sys, uint32_t cpu,
		       struct umsi_ctl_cpu *out)
{
	int ret = umsi_host_cpu_hwid(sys, cpu, &out->hwid);

	if (ret)
		return ret;
	/* Every message goes through a 32-bit entry: 8 destination bits,
	 * 0xff the broadcast. */
	out->reachable = out->hwid <= 0xfe;
	/* Wired inputs too, through the IO-APIC's DeviceID's table. */
	out->wired_reachable = out->reachable &&
			       (av_priv(sys)->ioapic_devid != UMSI_AMDVI_NO_DEVID ||
				av_priv(sys)->nioapics);
	return 0;
}

const struct umsi_ctl umsi_ctl_x86_amdvi = {
	.name = "x86-amdvi",
	.domain = &umsi_ctl_domain_per_message,
	.init = av_init,
	.fini = av_fini,
	.cpu_init = av_cpu_init,
	.compose = av_compose,
	.release = av_release,
	.retarget = av_retarget,
	.pending = umsi_lapic_pending,
	.resend = umsi_lapic_resend,
	.eoi = true,
	/* Blocks of consecutive, aligned entries, each message with its
	 * own CPU and vector. */
	.max_block = NULL,
	.spurious_id = 0xff,
};
