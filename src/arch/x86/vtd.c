/* SPDX-License-Identifier: MIT */
/*
 * The Intel VT-d interrupt-remapping back end (umsi/internal/ctl.h), after
 * the Intel Virtualization Technology for Directed I/O specification:
 * registers 11.4, the interrupt remapping table entry 9.10, invalidation
 * descriptors 6.5.2, remappable message formats 5.1.2 and 5.1.5.
 *
 * The local APIC side is the x86 back end's (lapic.c): the same vectors,
 * IRR, IPI resend and EOI. What changes is the message: it carries a
 * handle into a table the back end owns instead of a CPU and a vector,
 * and the remapping unit checks that the requester writing it is the
 * function the entry was written for (source-ID validation). So a device
 * can neither raise a vector nobody gave it nor forge another's
 * interrupt, and an interrupt moves by rewriting its entry: the device's
 * message never changes (retarget rewrites the entry).
 *
 * Entries are taken per IRQ: one, or for a multi-message MSI block 2^k
 * consecutive ones addressed by subhandle (the device ORs the message
 * number into the data, the unit adds it to the handle). The table and
 * the invalidation queue are the back end's (phys_alloc); every change of
 * an entry is followed by an interrupt-entry-cache invalidation and a
 * wait descriptor whose status write says the unit has done it, polled
 * with a deadline: a unit that does not answer fails the call with
 * -UMSI_ETIMEDOUT, and is not trusted again.
 *
 * A machine may have several units (a DMAR table of several DRHDs), each
 * remapping the requesters of its device scope, or every requester of its
 * segment no other unit claims (INCLUDE_PCI_ALL). Each unit has its own
 * table, queue and state (struct vtd_unit); an IRQ's entries live in the
 * table of the unit that remaps its source, found once, at its first
 * compose, and kept with the IRQ. One lock covers them all.
 */
#include <umsi/ctl.h>
#include <umsi/internal/bitops.h>
#include <umsi/internal/ctl.h>
#include <umsi/internal/hostcall.h>
#include <umsi/internal/idmap.h>
#include <umsi/internal/lib.h>
#include <umsi/x86.h>

#include "lapic.h"

/* Registers (11.4), offsets from the unit's base. */
#define VTD_VER                 0x000u
#define VTD_CAP                 0x008u
#define VTD_ECAP                0x010u
#define VTD_GCMD                0x018u
#define VTD_GSTS                0x01cu
#define VTD_FSTS                0x034u
#define VTD_IQH                 0x080u
#define VTD_IQT                 0x088u
#define VTD_IQA                 0x090u
#define VTD_IRTA                0x0b8u
#define VTD_REG_SIZE            0x1000u

#define ECAP_QI                 (1ull << 1)
#define ECAP_IR                 (1ull << 3)
#define ECAP_EIM                (1ull << 4)

/* GCMD commands and the GSTS bits that report them (11.4.4, 11.4.5);
 * CFI set lets compatibility-format interrupts through. */
#define GCMD_QIE                (1u << 26)
#define GCMD_IRE                (1u << 25)
#define GCMD_SIRTP              (1u << 24)
#define GCMD_CFI                (1u << 23)
/* GSTS bits that are one-shot commands in GCMD: never written back. */
#define GSTS_ONE_SHOT           (1u << 30 | 1u << 29 | 1u << 27 | 1u << 24)

#define FSTS_PFO                (1u << 0)
#define FSTS_PPF                (1u << 1)
#define FSTS_IQE                (1u << 4)
#define FSTS_ITE                (1u << 6)
#define FSTS_FRI(f)             (((f) >> 8) & 0xffu)
#define CAP_FRO(c)              ((uint32_t)(((c) >> 24) & 0x3ff) * 16u)
#define CAP_NFR(c)              ((uint32_t)(((c) >> 40) & 0xff) + 1u)
#define FRCD_F                  (1u << 31)      /* of the top dword */
#define FRCD_T                  (1u << 30)

#define IRTA_EIME               (1ull << 11)

/* Invalidation descriptors, 128 bits (6.5.2.7, 6.5.2.8). */
#define INV_IEC                 0x4ull
#define INV_IEC_INDEX           (1ull << 4)     /* index-selective */
#define INV_WAIT                0x5ull
#define INV_WAIT_SW             (1ull << 5)     /* status write */
#define INV_WAIT_FN             (1ull << 6)     /* fence */
#define IQ_SIZE                 4096u
#define IQ_ENTRIES              (IQ_SIZE / 16u)

/* Interrupt remapping table entry, remapped format (9.10). */
#define IRTE_P                  (1ull << 0)
#define IRTE_TM_LEVEL           (1ull << 4)
#define IRTE_VECTOR(v)          ((uint64_t)(v) << 16)
#define IRTE_DST(d)             ((uint64_t)(d) << 32)
#define IRTE_SVT_ALL            (1ull << 18)    /* high: verify SID, SQ */

/* Remappable-format MSI address (5.1.5.2). */
#define MSI_REMAP_FORMAT        (1u << 4)
#define MSI_REMAP_SHV           (1u << 3)

#define VTD_TIMEOUT_NS          10000000ull
#define VTD_MAX_POLLS           10000000u

/*
 * One remapping unit: its registers, table, queue, and what it said.
 * Under vtd_priv.lock.
 */
struct vtd_unit {
	volatile uint8_t *regs;
	uint64_t reg_base;
	uint64_t ecap;
	/* What it remaps (struct umsi_vtd_unit): @nscope ranges from
	 * vtd_priv.ranges[@scope0]; @all_segments: the one unit of a
	 * configuration without units, every requester. */
	uint16_t segment;
	bool include_all, all_segments;
	uint32_t scope0, nscope;
	/* The table and the queue (phys_alloc), the status dword. */
	volatile uint64_t *irt;
	uint64_t irt_phys;
	volatile uint64_t *iq;
	uint64_t iq_phys;
	volatile uint32_t *status;
	uint64_t status_phys;
	uint32_t iq_tail;
	uint32_t wait_seq;
	bool broken, told;
	/* What vtd_tell() says once the lock is dropped (vtd_invalidate). */
	bool tell;
	uint64_t tell_iqh, tell_iqt;
	uint32_t tell_fsts;
	bool enabled;                   /* QIE (then IRE) set by us */
	struct umsi_idmap used;         /* the entries taken */
};

/*
 * An IRQ's entries: @base..@base + @count - 1 of @u's table; or a split
 * MSI block's (umsi_ctl_domain.block_targets), keyed by its first IRQ,
 * entry @base + i for message i, @live the messages whose IRQ holds its
 * entry.
 */
struct vtd_irq {
	struct vtd_irq *next;
	struct vtd_unit *u;
	uint32_t irq, base, count;
	bool group;
	bool stuck;             /* an invalidation unconfirmed: never reused */
	uint32_t live;
	uint64_t high;                  /* the high 64 bits (SID, SVT) */
};

/* The back end's state (umsi_ctl_env.priv). Under @lock. */
struct vtd_priv {
	void *lock;
	uint32_t nirte, irta_bits;
	bool x2apic;
	uint32_t ioapic_sid;
	/* Several IO-APICs (umsi_vtd_config.ioapics): nioapics of them. */
	uint32_t nioapics;
	struct umsi_ioapic_source *ioapics;
	/* The units, and every unit's scope ranges back to back. */
	uint32_t nunits;
	struct vtd_unit *units;
	struct umsi_rid_range *ranges;
	struct vtd_irq **hash;          /* nirte buckets, by IRQ */
	size_t size;
};

static struct vtd_priv *vtd_priv(struct umsi_system *sys)
{
	return umsi_ctl_env(sys)->priv;
}

/* ---- Registers ------------------------------------------------------------ */

static uint32_t rd32(struct umsi_system *sys, struct vtd_unit *u,
		     uint32_t off)
{
	return umsi_mmio_read32(sys, u->regs + off);
}

static void wr32(struct umsi_system *sys, struct vtd_unit *u, uint32_t off,
		 uint32_t v)
{
	umsi_mmio_write32(sys, u->regs + off, v);
}

/* 64-bit registers as two 32-bit accesses, low first (11.2). */
static uint64_t rd64(struct umsi_system *sys, struct vtd_unit *u,
		     uint32_t off)
{
	return umsi_mmio_read64_lohi(sys, u->regs + off);
}

static void wr64(struct umsi_system *sys, struct vtd_unit *u, uint32_t off,
		 uint64_t v)
{
	umsi_mmio_write64_lohi(sys, u->regs + off, v);
}

/* Poll until @done(sys, u, arg) or the deadline; false on timeout. */
static bool vtd_poll(struct umsi_system *sys, struct vtd_unit *u,
		     bool (*done)(struct umsi_system *, struct vtd_unit *,
				  uint32_t), uint32_t arg)
{
	uint64_t start = umsi_host_clock_ns(sys);
	uint32_t n;

	for (n = 0; n < VTD_MAX_POLLS; n++) {
		if (done(sys, u, arg))
			return true;
		if (umsi_host_clock_ns(sys) - start > VTD_TIMEOUT_NS)
			break;
		umsi_cpu_relax();
	}
	return done(sys, u, arg);
}

static bool gsts_has(struct umsi_system *sys, struct vtd_unit *u,
		     uint32_t bit)
{
	return (rd32(sys, u, VTD_GSTS) & bit) != 0;
}

static bool gsts_lacks(struct umsi_system *sys, struct vtd_unit *u,
		       uint32_t bit)
{
	return (rd32(sys, u, VTD_GSTS) & bit) == 0;
}

/*
 * Set (@on) or clear a GCMD bit and wait for GSTS to say so (11.4.4:
 * GCMD is written whole, from GSTS without its one-shot bits). SIRTP is
 * one-shot: its status bit only has to appear.
 */
static int vtd_gcmd(struct umsi_system *sys, struct vtd_unit *u,
		    uint32_t bit, bool on, const char *what)
{
	uint32_t sts = rd32(sys, u, VTD_GSTS) & ~GSTS_ONE_SHOT;

	wr32(sys, u, VTD_GCMD, on ? sts | bit : sts & ~bit);
	if (on ? vtd_poll(sys, u, gsts_has, bit) :
	    vtd_poll(sys, u, gsts_lacks, bit))
		return 0;
	umsi_log(sys, UMSI_LOG_ERROR, "x86-vtd: unit at 0x%llx: %s: GSTS "
		 "0x%x did not follow within 10 ms",
		 (unsigned long long)u->reg_base, what,
		 rd32(sys, u, VTD_GSTS));
	return -UMSI_ETIMEDOUT;
}

/* ---- The invalidation queue ------------------------------------------------ */

static void iq_put(struct vtd_unit *u, uint64_t lo, uint64_t hi)
{
	u->iq[2 * u->iq_tail] = lo;
	u->iq[2 * u->iq_tail + 1] = hi;
	u->iq_tail = (u->iq_tail + 1) % IQ_ENTRIES;
}

static bool status_is(struct umsi_system *sys, struct vtd_unit *u,
		      uint32_t want)
{
	(void)sys;
	return *u->status == want;
}

/*
 * Queue @n interrupt-entry-cache invalidations (index-selective from
 * @index, or global when @n is 0) and a wait descriptor on @u, tell it,
 * and wait for the status write. [vtd lock]
 */
static int vtd_invalidate(struct umsi_system *sys, struct vtd_unit *u,
			  uint32_t index, uint32_t n)
{
	uint32_t i, seq;

	if (u->broken)
		return -UMSI_EIO;
	seq = ++u->wait_seq;
	if (!seq)
		seq = u->wait_seq = 1;
	*u->status = 0;
	if (!n)
		iq_put(u, INV_IEC, 0);
	for (i = 0; i < n; i++)
		iq_put(u, INV_IEC | INV_IEC_INDEX | (uint64_t)(index + i) << 32,
		       0);
	iq_put(u, INV_WAIT | INV_WAIT_SW | INV_WAIT_FN | (uint64_t)seq << 32,
	       u->status_phys);
	umsi_dev_wmb();
	wr64(sys, u, VTD_IQT, (uint64_t)u->iq_tail << 4);
	if (vtd_poll(sys, u, status_is, seq))
		return 0;
	u->broken = true;
	if (!u->told) {
		/* Said by vtd_tell(): log is not called under our lock. */
		u->told = true;
		u->tell = true;
		u->tell_iqh = rd64(sys, u, VTD_IQH);
		u->tell_iqt = rd64(sys, u, VTD_IQT);
		u->tell_fsts = rd32(sys, u, VTD_FSTS);
	}
	return (rd32(sys, u, VTD_FSTS) & (FSTS_IQE | FSTS_ITE)) ? -UMSI_EIO :
	       -UMSI_ETIMEDOUT;
}

/* ---- Entries ------------------------------------------------------------------ */

static umsi_irqflags_t vtd_lock(struct umsi_system *sys)
{
	return umsi_host_lock_acquire(sys, vtd_priv(sys)->lock);
}

static void vtd_unlock(struct umsi_system *sys, umsi_irqflags_t fl)
{
	umsi_host_lock_release(sys, vtd_priv(sys)->lock, fl);
}

/*
 * Say what vtd_invalidate() found on @u (NULL: nothing to say), once,
 * outside the lock (host.h: log is never called under a lock). [no lock]
 */
static void vtd_tell(struct umsi_system *sys, struct vtd_unit *u)
{
	umsi_irqflags_t fl;
	uint64_t iqh, iqt;
	uint32_t fsts;
	bool tell;

	if (!u)
		return;
	fl = vtd_lock(sys);
	tell = u->tell;
	u->tell = false;
	iqh = u->tell_iqh;
	iqt = u->tell_iqt;
	fsts = u->tell_fsts;
	vtd_unlock(sys, fl);
	if (tell)
		umsi_log(sys, UMSI_LOG_ERROR, "x86-vtd: invalidation not done "
			 "within 10 ms (IQH 0x%llx, IQT 0x%llx, FSTS 0x%x); the "
			 "unit at 0x%llx is not trusted again",
			 (unsigned long long)iqh, (unsigned long long)iqt, fsts,
			 (unsigned long long)u->reg_base);
}

/*
 * The unit that remaps requester @sid (segment << 16 | bus << 8 | devfn;
 * UMSI_NO_SOURCE: none): the one whose scope holds it, else its
 * segment's include-all unit; with no requester, segment 0's include-all
 * unit, else the first. NULL: none remaps it.
 */
static struct vtd_unit *vtd_unit_of(struct vtd_priv *p, uint32_t sid)
{
	uint32_t i, k, seg = sid == UMSI_NO_SOURCE ? 0 : sid >> 16;

	for (i = 0; i < p->nunits && sid != UMSI_NO_SOURCE; i++) {
		const struct vtd_unit *u = &p->units[i];

		for (k = 0; k < u->nscope; k++) {
			const struct umsi_rid_range *r = &p->ranges[u->scope0 + k];

			if (sid >= r->first && sid <= r->last)
				return &p->units[i];
		}
	}
	for (i = 0; i < p->nunits; i++)
		if (p->units[i].all_segments || (p->units[i].include_all &&
						 p->units[i].segment == seg))
			return &p->units[i];
	return sid == UMSI_NO_SOURCE ? &p->units[0] : NULL;
}

static struct vtd_irq **vtd_bucket(struct vtd_priv *p, uint32_t irq)
{
	return &p->hash[(irq * 2654435761u) % p->nirte];
}

static struct vtd_irq *vtd_find(struct vtd_priv *p, uint32_t irq)
{
	struct vtd_irq *r;

	for (r = *vtd_bucket(p, irq); r && r->irq != irq; r = r->next)
		;
	return r;
}

/* The low 64 bits of an entry that sends @vector to @apic. */
static uint64_t irte_low(const struct vtd_priv *p, uint32_t apic,
			 uint32_t vector, bool level)
{
	uint64_t dst = p->x2apic ? apic : (uint64_t)(apic & 0xff) << 8;

	return IRTE_P | (level ? IRTE_TM_LEVEL : 0) | IRTE_VECTOR(vector) |
	       IRTE_DST(dst);
}

/*
 * Point @r's entries at (@apic, @vector + i), high half (the requester
 * check) first when @fresh, then the low half in one 64-bit store: the
 * unit never sees half an entry (9.10: software updates a present entry
 * atomically; the high half of a live entry never changes).
 */
static void irte_write(const struct vtd_priv *p, const struct vtd_irq *r,
		       uint32_t from, uint32_t n, uint32_t apic,
		       uint32_t vector, bool level, bool fresh)
{
	uint32_t i;

	for (i = 0; i < n; i++) {
		volatile uint64_t *e = &r->u->irt[2 * (r->base + from + i)];

		if (fresh)
			e[1] = r->high;
		umsi_dev_wmb();
		e[0] = irte_low(p, apic, vector + i, level);
	}
	umsi_dev_wmb();
}

/*
 * The message that names @r's first entry (a block: by subhandle, data
 * 0). A wired input's data carries the entry's @vector: the unit ignores
 * it (SHV clear), and an IO-APIC's remappable redirection entry needs it
 * in its vector field, which EOI broadcasts match (VT-d 5.1.5.1).
 */
static void vtd_msg(const struct vtd_irq *r, bool wired, uint32_t vector,
		    struct umsi_msg *msg)
{
	uint32_t lo = UMSI_X86_MSI_BASE | MSI_REMAP_FORMAT;

	lo |= (r->base & 0x7fff) << 5;
	lo |= ((r->base >> 15) & 1) << 2;
	if (r->count > 1 || r->group)
		lo |= MSI_REMAP_SHV;
	msg->address = lo;
	msg->data = wired && !(lo & MSI_REMAP_SHV) ? vector : 0;
}

static int vtd_check(struct umsi_system *sys, const struct umsi_ctl_irq *ci,
		     uint32_t cpu, uint32_t id, uint32_t *apic)
{
	struct vtd_priv *p = vtd_priv(sys);

	*apic = umsi_cpu_hwid(sys, cpu);
	if (id < 0x10 || id + ci->count > 0x100 || !ci->count ||
	    ci->count > 32)
		return -UMSI_EINVAL;
	if (*apic == 0xffffffffu || (!p->x2apic && *apic > 0xfe))
		return -UMSI_ERANGE;
	return 0;
}

/*
 * The first compose of an IRQ takes its entries and writes them; a later
 * one (the message asked for again, or a move of a wired input) rewrites
 * them. The message is the same every time.
 */
static int vtd_compose(struct umsi_system *sys, const struct umsi_ctl_irq *ci,
		       uint32_t cpu, uint32_t id, struct umsi_msg *msg)
{
	struct vtd_priv *p = vtd_priv(sys);
	struct vtd_irq *r, *fresh;
	struct umsi_x86_slice sl;
	struct vtd_unit *u;
	umsi_irqflags_t fl;
	uint32_t apic, sid, i;
	bool new_entry;
	int ret;

	ret = vtd_check(sys, ci, cpu, id, &apic);
	if (!ret)
		ret = umsi_x86_slice(ci, &sl);
	/* A wired input's entry validates its IO-APIC's requester ID. */
	sid = ci->source_id;
	if (!ret && ci->wired)
		ret = umsi_x86_wired_source(sys, "x86-vtd", p->ioapics,
					    p->nioapics, p->ioapic_sid, ci,
					    &sid);
	if (ret)
		return ret;
	u = vtd_unit_of(p, sid);
	if (!u) {
		umsi_log(sys, UMSI_LOG_ERROR, "x86-vtd: irq %u: no remapping "
			 "unit remaps requester %04x:%02x:%02x.%u", ci->irq,
			 sid >> 16, (sid >> 8) & 0xff, (sid >> 3) & 0x1f,
			 sid & 7);
		return -UMSI_ENOTSUP;
	}
	fresh = umsi_zalloc(sys, sizeof(*fresh));
	if (!fresh)
		return -UMSI_ENOMEM;
	fl = vtd_lock(sys);
	r = vtd_find(p, sl.key);
	if (r && (r->count != sl.n || r->group != sl.group || r->u != u)) {
		ret = -UMSI_EINVAL;
		goto out;
	}
	if (!r) {
		r = fresh;
		r->u = u;
		r->irq = sl.key;
		r->count = sl.n;
		r->group = sl.group;
		/*
		 * Verify all 16 bits of the requester ID (SQ 0); the unit
		 * serves one segment, whose number the request does not
		 * carry.
		 */
		r->high = sid != UMSI_NO_SOURCE ? IRTE_SVT_ALL | (sid & 0xffff) :
			  0;
		r->base = u->broken ? UINT32_MAX :
			  umsi_idmap_take_run(&u->used, sl.n, 1);
		if (r->base == UINT32_MAX) {
			ret = u->broken ? -UMSI_EIO : -UMSI_ENOSPC;
			goto out;
		}
	}
	new_entry = !(r->live & (1u << sl.from));
	irte_write(p, r, sl.from, sl.count, apic, id, ci->wired, new_entry);
	ret = vtd_invalidate(sys, u, r->base + sl.from, sl.count);
	/*
	 * Unconfirmed: the unit may hold them; never reused. New ones are
	 * made not present again all the same. A new record goes (its
	 * entries stay taken, as release leaves them): the IRQ number may
	 * come back, on another unit too.
	 */
	r->stuck |= ret != 0;
	for (i = 0; ret && new_entry && i < sl.count; i++)
		u->irt[2 * (r->base + sl.from + i)] = 0;
	if (r == fresh && !ret) {
		fresh = NULL;
		r->next = *vtd_bucket(p, r->irq);
		*vtd_bucket(p, r->irq) = r;
	}
	if (!ret) {
		r->live |= 1u << sl.from;
		vtd_msg(r, ci->wired, id, msg);
	}
out:
	vtd_unlock(sys, fl);
	vtd_tell(sys, u);
	umsi_free(sys, fresh, sizeof(*fresh));
	if (ret == -UMSI_ENOSPC)
		umsi_log(sys, UMSI_LOG_ERROR, "x86-vtd: irq %u: no %u free "
			 "consecutive entries of %u (unit at 0x%llx)", ci->irq,
			 sl.n, p->nirte, (unsigned long long)u->reg_base);
	return ret ? ret : 1;
}

/* A move: the entries rewritten, the message left alone. */
static int vtd_retarget(struct umsi_system *sys, const struct umsi_ctl_irq *ci,
			uint32_t cpu, uint32_t id)
{
	struct vtd_priv *p = vtd_priv(sys);
	struct vtd_unit *u = NULL;
	struct umsi_x86_slice sl;
	struct vtd_irq *r;
	umsi_irqflags_t fl;
	uint32_t apic;
	int ret;

	/*
	 * A wired input: the IO-APIC's redirection entry is written again
	 * with the message compose gives (its entry rewritten there).
	 */
	if (ci->wired)
		return UMSI_CTL_REWRITE;
	ret = vtd_check(sys, ci, cpu, id, &apic);
	if (!ret)
		ret = umsi_x86_slice(ci, &sl);
	if (ret)
		return ret;
	fl = vtd_lock(sys);
	r = vtd_find(p, sl.key);
	if (!r || !(r->live & (1u << sl.from))) {
		ret = -UMSI_ENOENT;
	} else if (r->u->broken) {
		ret = -UMSI_EIO;
	} else {
		u = r->u;
		irte_write(p, r, sl.from, sl.count, apic, id, ci->wired, false);
		ret = vtd_invalidate(sys, u, r->base + sl.from, sl.count);
		r->stuck |= ret != 0;
	}
	vtd_unlock(sys, fl);
	vtd_tell(sys, u);
	return ret;
}

/*
 * The IRQ goes: its entries not present, out of the cache, free (a split
 * block's run with its last member). Entries whose invalidation the unit
 * did not confirm stay taken: it may still hold them.
 */
static void vtd_release(struct umsi_system *sys, const struct umsi_ctl_irq *ci)
{
	struct vtd_priv *p = vtd_priv(sys);
	struct vtd_irq **l, *r, *gone = NULL;
	struct vtd_unit *u = NULL;
	struct umsi_x86_slice sl;
	umsi_irqflags_t fl;
	uint32_t i, first = 0;
	int ret = 0;

	if (umsi_x86_slice(ci, &sl))
		return;
	fl = vtd_lock(sys);
	for (l = vtd_bucket(p, sl.key); *l && (*l)->irq != sl.key;
	     l = &(*l)->next)
		;
	r = *l;
	if (r && (r->live & (1u << sl.from))) {
		u = r->u;
		first = r->base + sl.from;
		for (i = 0; i < sl.count; i++)
			r->u->irt[2 * (r->base + sl.from + i)] = 0;
		umsi_dev_wmb();
		ret = vtd_invalidate(sys, r->u, r->base + sl.from, sl.count);
		r->stuck |= ret != 0;
		r->live &= ~(1u << sl.from);
		if (!r->live) {
			*l = r->next;
			gone = r;
			for (i = 0; i < r->count && !r->stuck; i++) {
				r->u->irt[2 * (r->base + i) + 1] = 0;
				umsi_idmap_clear(&r->u->used, r->base + i);
			}
		}
	}
	vtd_unlock(sys, fl);
	vtd_tell(sys, u);
	if (ret)
		umsi_log(sys, UMSI_LOG_ERROR, "x86-vtd: irq %u: entries %u.. "
			 "not confirmed invalid (%d): kept", ci->irq, first, ret);
	umsi_free(sys, gone, sizeof(*gone));
}

/* ---- Creation ---------------------------------------------------------------- */

static void vtd_phys_free(struct umsi_system *sys, volatile void *v,
			  size_t size)
{
	if (v)
		umsi_host_phys_free(sys, (void *)(uintptr_t)v, size);
}

static void *vtd_phys_alloc(struct umsi_system *sys, size_t size,
			    size_t align, uint64_t *phys)
{
	void *v = umsi_host_phys_alloc(sys, size, align, phys);

	if (v)
		umsi_memset(v, 0, size);
	return v;
}

/*
 * Remapping off (if we turned it on), the queue off, the memory back. A
 * unit that will not turn remapping off may still read the table: it and
 * the queue stay allocated, and the log says so.
 */
static void vtd_unit_fini(struct umsi_system *sys, struct vtd_priv *p,
			  struct vtd_unit *u)
{
	bool keep = false;

	if (u->regs && u->enabled) {
		keep = vtd_gcmd(sys, u, GCMD_IRE, false, "remapping off") != 0;
		if (!keep && (rd32(sys, u, VTD_GSTS) & GCMD_QIE))
			keep = vtd_gcmd(sys, u, GCMD_QIE, false,
					"queued invalidation off") != 0;
	}
	if (keep) {
		umsi_log(sys, UMSI_LOG_WARN, "x86-vtd: the unit at 0x%llx keeps "
			 "remapping on: its table and queue stay allocated",
			 (unsigned long long)u->reg_base);
	} else {
		vtd_phys_free(sys, u->irt, (size_t)p->nirte * 16);
		vtd_phys_free(sys, u->iq, IQ_SIZE);
		vtd_phys_free(sys, u->status, 64);
	}
	if (u->regs)
		umsi_host_mmio_unmap(sys, (void *)u->regs, VTD_REG_SIZE);
}

static void vtd_fini(struct umsi_system *sys)
{
	struct umsi_ctl_env *env = umsi_ctl_env(sys);
	struct vtd_priv *p = env->priv;
	uint32_t i;

	if (!p)
		return;
	/* The last unit brought up is the first taken down. */
	for (i = p->nunits; i-- > 0;)
		vtd_unit_fini(sys, p, &p->units[i]);
	if (p->hash) {
		for (i = 0; i < p->nirte; i++) {
			while (p->hash[i]) {
				struct vtd_irq *r = p->hash[i];

				p->hash[i] = r->next;
				umsi_free(sys, r, sizeof(*r));
			}
		}
	}
	if (p->lock)
		umsi_host_lock_destroy(sys, p->lock);
	env->priv = NULL;
	umsi_free(sys, p, p->size);
}

/* @base (of unit @i, or the one unit when @i is UINT32_MAX) is usable. */
static bool vtd_base_ok(struct umsi_system *sys, uint64_t base, uint32_t i)
{
	if (base && !(base % VTD_REG_SIZE))
		return true;
	if (i == UINT32_MAX)
		umsi_log(sys, UMSI_LOG_ERROR, "x86-vtd: reg_base 0x%llx is not "
			 "a 4 KiB aligned address", (unsigned long long)base);
	else
		umsi_log(sys, UMSI_LOG_ERROR, "x86-vtd: unit %u reg_base "
			 "0x%llx is not a 4 KiB aligned address", i,
			 (unsigned long long)base);
	return false;
}

/*
 * The units of @c (umsi/ctl.h, struct umsi_vtd_unit): 0, or -UMSI_EINVAL
 * after a log line naming the unit and what is wrong. @nranges: their
 * scope ranges in all.
 */
static int vtd_check_units(struct umsi_system *sys,
			   const struct umsi_vtd_config *c, uint32_t *nranges)
{
	uint32_t i, j;

	*nranges = 0;
	if (!c->nunits) {
		if (!vtd_base_ok(sys, c->reg_base, UINT32_MAX))
			return -UMSI_EINVAL;
		return 0;
	}
	if (c->reg_base || !c->units || c->nunits > UMSI_VTD_MAX_UNITS) {
		umsi_log(sys, UMSI_LOG_ERROR, "x86-vtd: %s", c->reg_base ?
			 "reg_base and units both given (reg_base is for a "
			 "machine of one unit)" : !c->units ?
			 "nunits without a units table" :
			 "more than UMSI_VTD_MAX_UNITS units");
		return -UMSI_EINVAL;
	}
	for (i = 0; i < c->nunits; i++) {
		const struct umsi_vtd_unit *u = &c->units[i];

		if (!vtd_base_ok(sys, u->reg_base, i))
			return -UMSI_EINVAL;
		if ((!u->nscope && !u->include_all) || (u->nscope && !u->scope) ||
		    u->nscope > UMSI_VTD_MAX_SCOPE - *nranges) {
			umsi_log(sys, UMSI_LOG_ERROR, "x86-vtd: unit %u (0x%llx) "
				 "%s", i, (unsigned long long)u->reg_base,
				 !u->nscope ? "remaps nothing (no scope, not "
				 "include-all)" : !u->scope ? "has nscope "
				 "without a scope table" : "takes the scope "
				 "ranges past UMSI_VTD_MAX_SCOPE");
			return -UMSI_EINVAL;
		}
		*nranges += u->nscope;
		for (j = 0; j < i; j++) {
			const struct umsi_vtd_unit *o = &c->units[j];

			if (o->reg_base == u->reg_base ||
			    (o->include_all && u->include_all &&
			     o->segment == u->segment)) {
				umsi_log(sys, UMSI_LOG_ERROR, "x86-vtd: units %u "
					 "and %u %s", j, i,
					 o->reg_base == u->reg_base ?
					 "have one address" : "are both "
					 "include-all units of one segment");
				return -UMSI_EINVAL;
			}
		}
		if (umsi_x86_ranges_check(sys, "x86-vtd", "scope", i, u->scope,
					  u->nscope, u->segment, 0x10000))
			return -UMSI_EINVAL;
		/* Against the units before: one unit per requester. */
		for (j = 0; j < i; j++)
			if (umsi_x86_ranges_apart(sys, "x86-vtd", "scope", i,
						  u->scope, u->nscope, j,
						  c->units[j].scope,
						  c->units[j].nscope))
				return -UMSI_EINVAL;
	}
	return 0;
}

static int vtd_check_config(struct umsi_system *sys,
			    const struct umsi_vtd_config *c, uint32_t *n,
			    uint32_t *nranges)
{
	const struct umsi_host_ops *o = umsi_ctl_env(sys)->ops;

	if (!c) {
		umsi_log(sys, UMSI_LOG_ERROR, "x86-vtd: no configuration "
			 "(umsi_config.ctl_config must point to a struct "
			 "umsi_vtd_config)");
		return -UMSI_EINVAL;
	}
	if (umsi_lapic_check_host(sys, "x86-vtd"))
		return -UMSI_EINVAL;
	if (!o->phys_alloc) {
		umsi_log(sys, UMSI_LOG_ERROR, "x86-vtd: host operation "
			 "phys_alloc missing");
		return -UMSI_EINVAL;
	}
	if (umsi_ctl_env(sys)->plat_flags & UMSI_PLAT_IRQ_REMAP) {
		umsi_log(sys, UMSI_LOG_ERROR, "x86-vtd: platform flag "
			 "UMSI_PLAT_IRQ_REMAP says the host remaps; this back "
			 "end remaps itself");
		return -UMSI_EINVAL;
	}
	if (vtd_check_units(sys, c, nranges))
		return -UMSI_EINVAL;
	if (!c->nioapics && c->ioapic_sid != UMSI_VTD_NO_SID &&
	    c->ioapic_sid > 0xffff) {
		umsi_log(sys, UMSI_LOG_ERROR, "x86-vtd: ioapic_sid 0x%x is not a "
			 "requester ID (bus << 8 | devfn) or UMSI_VTD_NO_SID",
			 c->ioapic_sid);
		return -UMSI_EINVAL;
	}
	*n = c->irte_count ? c->irte_count : UMSI_VTD_DEFAULT_IRTE;
	if (*n < 2 || *n > 65536 || (*n & (*n - 1))) {
		umsi_log(sys, UMSI_LOG_ERROR, "x86-vtd: irte_count %u is not a "
			 "power of two from 2 to 65536", *n);
		return -UMSI_EINVAL;
	}
	return umsi_x86_ioapics_check(sys, "x86-vtd", c->ioapics, c->nioapics,
				      0x10000, true);
}

/* The unit's registers against what the configuration asks. */
static int vtd_check_unit(struct umsi_system *sys, struct vtd_unit *u,
			  const struct umsi_vtd_config *c)
{
	uint32_t ver = rd32(sys, u, VTD_VER);

	/* Nothing there: a bus reads all-ones (or zeros). */
	if (ver == 0xffffffffu || !ver) {
		umsi_log(sys, UMSI_LOG_ERROR, "x86-vtd: no remapping unit at "
			 "0x%llx (VER reads 0x%x)",
			 (unsigned long long)u->reg_base, ver);
		return -UMSI_EINVAL;
	}
	u->ecap = rd64(sys, u, VTD_ECAP);
	if (!(u->ecap & ECAP_IR) || !(u->ecap & ECAP_QI)) {
		umsi_log(sys, UMSI_LOG_ERROR, "x86-vtd: unit at 0x%llx (version "
			 "%u.%u, ECAP 0x%llx) has no %s",
			 (unsigned long long)u->reg_base, (ver >> 4) & 0xf,
			 ver & 0xf, (unsigned long long)u->ecap,
			 !(u->ecap & ECAP_IR) ? "interrupt remapping" :
			 "queued invalidation");
		return -UMSI_EINVAL;
	}
	if (c->x2apic && !(u->ecap & ECAP_EIM)) {
		umsi_log(sys, UMSI_LOG_ERROR, "x86-vtd: x2apic asked but ECAP "
			 "0x%llx of the unit at 0x%llx has no EIM",
			 (unsigned long long)u->ecap,
			 (unsigned long long)u->reg_base);
		return -UMSI_EINVAL;
	}
	if (rd32(sys, u, VTD_GSTS) & (GCMD_IRE | GCMD_QIE)) {
		umsi_log(sys, UMSI_LOG_ERROR, "x86-vtd: unit at 0x%llx: GSTS "
			 "0x%x: remapping or queued invalidation already on "
			 "(someone else's table)",
			 (unsigned long long)u->reg_base,
			 rd32(sys, u, VTD_GSTS));
		return -UMSI_EBUSY;
	}
	return 0;
}

/* Queue, table, a global cache invalidation, then remapping on. */
static int vtd_start(struct umsi_system *sys, struct vtd_unit *u,
		     const struct umsi_vtd_config *c)
{
	struct vtd_priv *p = vtd_priv(sys);
	int ret;

	wr64(sys, u, VTD_IQT, 0);
	wr64(sys, u, VTD_IQA, u->iq_phys);      /* 4 KiB, 128-bit entries */
	/* Ours from here on: fini turns queued invalidation (and
	 * remapping) off again, whatever step fails. */
	u->enabled = true;
	ret = vtd_gcmd(sys, u, GCMD_QIE, true, "queued invalidation on");
	if (ret)
		return ret;
	wr64(sys, u, VTD_IRTA, u->irt_phys | (p->x2apic ? IRTA_EIME : 0) |
	     (p->irta_bits - 1));
	ret = vtd_gcmd(sys, u, GCMD_SIRTP, true, "table pointer");
	if (!ret)
		ret = vtd_invalidate(sys, u, 0, 0);
	if (ret) {
		vtd_tell(sys, u);
		return ret;
	}
	ret = vtd_gcmd(sys, u, GCMD_IRE, true, "remapping on");
	/*
	 * GCMD.CFI set lets compatibility-format messages bypass remapping
	 * (11.4.4); clear, they fault. Blocked unless asked otherwise.
	 */
	if (!ret && c->allow_compat != !!(rd32(sys, u, VTD_GSTS) & GCMD_CFI))
		ret = vtd_gcmd(sys, u, GCMD_CFI, c->allow_compat,
			       c->allow_compat ? "compatibility format allowed" :
			       "compatibility format blocked");
	return ret;
}

/* Map, check, give memory to and turn on unit @u. */
static int vtd_unit_init(struct umsi_system *sys, struct vtd_unit *u,
			 const struct umsi_vtd_config *c)
{
	struct vtd_priv *p = vtd_priv(sys);
	size_t n = p->nirte;
	void *v;
	int ret;

	ret = umsi_host_mmio_map(sys, u->reg_base, VTD_REG_SIZE, &v);
	if (ret)
		return ret;
	u->regs = v;
	ret = vtd_check_unit(sys, u, c);
	if (ret)
		return ret;
	u->irt = vtd_phys_alloc(sys, n * 16, 4096, &u->irt_phys);
	u->iq = vtd_phys_alloc(sys, IQ_SIZE, 4096, &u->iq_phys);
	u->status = vtd_phys_alloc(sys, 64, 64, &u->status_phys);
	if (!u->irt || !u->iq || !u->status)
		return -UMSI_ENOMEM;
	ret = vtd_start(sys, u, c);
	if (ret)
		return ret;
	umsi_log(sys, UMSI_LOG_INFO, "x86-vtd: unit at 0x%llx, %u entries, "
		 "table at 0x%llx, %s destinations, compatibility format %s",
		 (unsigned long long)u->reg_base, p->nirte,
		 (unsigned long long)u->irt_phys,
		 p->x2apic ? "x2APIC" : "xAPIC",
		 c->allow_compat ? "allowed" : "blocked");
	return 0;
}

/* The units and their scopes from @c into @p (checked already). */
static void vtd_units_from(struct vtd_priv *p, const struct umsi_vtd_config *c)
{
	uint32_t i, next = 0;

	if (!c->nunits) {
		p->units[0].reg_base = c->reg_base;
		p->units[0].include_all = true;
		p->units[0].all_segments = true;
		return;
	}
	for (i = 0; i < c->nunits; i++) {
		struct vtd_unit *u = &p->units[i];

		u->reg_base = c->units[i].reg_base;
		u->segment = c->units[i].segment;
		u->include_all = c->units[i].include_all;
		u->scope0 = next;
		u->nscope = c->units[i].nscope;
		if (u->nscope)
			umsi_memcpy(&p->ranges[next], c->units[i].scope,
				    u->nscope * sizeof(*p->ranges));
		next += u->nscope;
	}
}

static int vtd_init(struct umsi_system *sys, uint32_t ncpus,
		    struct umsi_matrix_config *space)
{
	struct umsi_ctl_env *env = umsi_ctl_env(sys);
	const struct umsi_vtd_config *c = env->ctl_config;
	uint32_t n, i, nunits, nranges;
	size_t size, map;
	struct vtd_priv *p;
	char *at;
	int ret;

	ret = vtd_check_config(sys, c, &n, &nranges);
	if (ret)
		return ret;
	nunits = c->nunits ? c->nunits : 1;
	map = umsi_idmap_size(n);
	/*
	 * One allocation: the buckets, the units, each unit's entry map
	 * (64-bit words), the scope ranges, the IO-APICs.
	 */
	size = sizeof(*p) + (size_t)n * sizeof(*p->hash) +
	       nunits * (sizeof(*p->units) + map) +
	       (size_t)nranges * sizeof(*p->ranges) +
	       (size_t)c->nioapics * sizeof(*p->ioapics);
	p = umsi_zalloc(sys, size);
	if (!p)
		return -UMSI_ENOMEM;
	p->size = size;
	p->nirte = n;
	p->hash = (struct vtd_irq **)(p + 1);
	p->units = (struct vtd_unit *)(p->hash + n);
	p->nunits = nunits;
	at = (char *)(p->units + nunits);
	for (i = 0; i < nunits; i++, at += map)
		umsi_idmap_init(&p->units[i].used, n, (uint64_t *)(void *)at);
	p->ranges = (struct umsi_rid_range *)(void *)at;
	p->ioapics = (struct umsi_ioapic_source *)(p->ranges + nranges);
	vtd_units_from(p, c);
	p->nioapics = c->nioapics;
	if (c->nioapics)
		umsi_memcpy(p->ioapics, c->ioapics,
			    c->nioapics * sizeof(*p->ioapics));
	p->irta_bits = umsi_order_of(n);
	if (!p->irta_bits)
		p->irta_bits = 1;
	p->x2apic = c->x2apic;
	p->ioapic_sid = c->ioapic_sid;
	env->priv = p;
	ret = -UMSI_ENOMEM;
	p->lock = umsi_host_lock_create(sys);
	if (!p->lock)
		goto fail;
	for (i = 0; i < nunits; i++) {
		ret = vtd_unit_init(sys, &p->units[i], c);
		if (ret)
			goto fail;
	}
	umsi_matrix_default_config(space, ncpus);
	if (!(env->plat_flags & UMSI_PLAT_ISA_PIC))
		space->legacy_count = 0;
	return 0;
fail:
	vtd_fini(sys);
	return ret;
}

static int vtd_cpu_init(struct umsi_system *sys, uint32_t cpu,
			struct umsi_ctl_cpu *out)
{
	int ret = umsi_host_cpu_hwid(sys, cpu, &out->hwid);

	if (ret)
		return ret;
	/* Every message goes through an entry: 8 or 32 destination bits. */
	out->reachable = out->hwid != 0xffffffffu &&
			 (vtd_priv(sys)->x2apic || out->hwid <= 0xfe);
	out->wired_reachable = out->reachable;
	return 0;
}

/* Unit @u's recorded faults, each reported and cleared. [vtd lock] */
static int vtd_unit_faults(struct umsi_system *sys, struct vtd_unit *u,
			   void (*report)(void *arg,
					  const struct umsi_vtd_fault *f),
			   void *arg, bool *overflowed)
{
	uint32_t fsts, fro, nfr, i;
	uint64_t cap;
	int n = 0;

	fsts = rd32(sys, u, VTD_FSTS);
	cap = rd64(sys, u, VTD_CAP);
	fro = CAP_FRO(cap);
	nfr = CAP_NFR(cap);
	/* Records beyond the register page are the unit's lie: none. */
	if (!(fsts & (FSTS_PPF | FSTS_PFO)) || fro < 0x40 ||
	    fro + 16 * nfr > VTD_REG_SIZE)
		nfr = 0;
	for (i = 0; i < nfr; i++) {
		uint32_t rec = fro + 16 * ((FSTS_FRI(fsts) + i) % nfr);
		uint32_t top = rd32(sys, u, rec + 12);
		struct umsi_vtd_fault f = { 0 };
		uint64_t fi;

		if (!(top & FRCD_F))
			continue;
		fi = rd64(sys, u, rec);
		f.unit = (uint32_t)(u - vtd_priv(sys)->units);
		f.sid = rd32(sys, u, rec + 8) & 0xffff;
		f.reason = (uint8_t)top;
		f.interrupt = f.reason >= UMSI_VTD_FR_IR_FIRST &&
			      f.reason <= UMSI_VTD_FR_IR_LAST;
		f.index = (uint32_t)(fi >> 48);
		f.addr = fi & ~0xfffull;
		f.write = !(top & FRCD_T);
		/* Cleared before reported: a new fault may take it again. */
		wr32(sys, u, rec + 12, FRCD_F);
		if (report)
			report(arg, &f);
		n++;
	}
	if (fsts & FSTS_PFO) {
		wr32(sys, u, VTD_FSTS, FSTS_PFO);
		if (overflowed)
			*overflowed = true;
	}
	return n;
}

int umsi_vtd_faults(struct umsi_system *sys,
		    void (*report)(void *arg, const struct umsi_vtd_fault *f),
		    void *arg, bool *overflowed)
{
	struct vtd_priv *p;
	umsi_irqflags_t fl;
	uint32_t i;
	int n = 0;

	if (overflowed)
		*overflowed = false;
	if (!sys || umsi_ctl_env(sys)->ctl != &umsi_ctl_x86_vtd)
		return -UMSI_EINVAL;
	p = vtd_priv(sys);
	fl = vtd_lock(sys);
	for (i = 0; i < p->nunits; i++)
		n += vtd_unit_faults(sys, &p->units[i], report, arg,
				     overflowed);
	vtd_unlock(sys, fl);
	return n;
}

const struct umsi_ctl umsi_ctl_x86_vtd = {
	.name = "x86-vtd",
	.domain = &umsi_ctl_domain_per_message,
	.init = vtd_init,
	.fini = vtd_fini,
	.cpu_init = vtd_cpu_init,
	.compose = vtd_compose,
	.release = vtd_release,
	.retarget = vtd_retarget,
	.pending = umsi_lapic_pending,
	.resend = umsi_lapic_resend,
	.eoi = true,
	/* Blocks of consecutive entries, addressed by subhandle, each
	 * message with its own CPU and vector. */
	.max_block = NULL,
	.spurious_id = 0xff,
};
