/* SPDX-License-Identifier: MIT */
/*
 * The message-level API (umsi/source.h): targets for a source whose
 * messages the kernel writes. The IRQ core's one sequence, as the PCI
 * layer's MSI and MSI-X use it: allocate, bind (chip data, slot, the
 * requester), publish claimed, compose each message, write it, activate;
 * and on free: release when the kernel says the slots are quiet, else
 * quarantine. The chip below forwards to the kernel's callbacks.
 */
#include <umsi/internal/core.h>
#include <umsi/internal/hostcall.h>
#include <umsi/internal/source.h>

#define MAX_SLOTS 2048u         /* MSI-X table size limit */

/*
 * A slot's data outlives its target: a move in flight when the target is
 * freed may still call the client's write_msg for it (the free waits for
 * that move); the client frees its data after the free, and the next
 * allocation of the slot sets it anew.
 */
struct umsi_slot {
	struct umsi_irq_desc *d;        /* its target, or NULL */
};

struct umsi_source {
	struct umsi_system *sys;
	struct umsi_source_config cfg;
	const void *owner;              /* of quarantined vectors */
	struct umsi_irq_chip chip;      /* named as the config says */
	struct umsi_slot *slot;
	uint32_t used;
};

/* ---- the chip: the kernel's operations ---------------------------------- */

static int src_mask(struct umsi_system *sys, struct umsi_irq_desc *d)
{
	struct umsi_source *src = d->chip_data;

	(void)sys;
	return src->cfg.ops->mask(src->cfg.ctx, d->hwirq);
}

static int src_unmask(struct umsi_system *sys, struct umsi_irq_desc *d)
{
	struct umsi_source *src = d->chip_data;

	(void)sys;
	return src->cfg.ops->unmask(src->cfg.ctx, d->hwirq);
}

/* A block has one message, held by slot 0 (its leader's). */
static int src_write_msg(struct umsi_system *sys, struct umsi_irq_desc *d,
			 const struct umsi_msg *msg)
{
	struct umsi_source *src = d->chip_data;

	(void)sys;
	if (src->cfg.block && d->hwirq)
		return 0;
	return src->cfg.ops->write_msg(src->cfg.ctx, d->hwirq, msg);
}

static int src_startup(struct umsi_system *sys, struct umsi_irq_desc *d)
{
	struct umsi_source *src = d->chip_data;

	(void)sys;
	return src->cfg.ops->startup ?
	       src->cfg.ops->startup(src->cfg.ctx, d->hwirq, d->irq) : 0;
}

static void src_describe(struct umsi_system *sys,
			 const struct umsi_irq_desc *d, struct umsi_irq_info *info)
{
	const struct umsi_source *src = d->chip_data;

	(void)sys;
	info->bdf = src->cfg.bdf;
}

/* Each source's chip: these, named and without a mask where it has none. */
static const struct umsi_irq_chip src_chip = {
	.name = "source",
	.mask = src_mask,
	.unmask = src_unmask,
	.write_msg = src_write_msg,
	.startup = src_startup,
	.describe = src_describe,
};

/* ---- sources ------------------------------------------------------------ */

int umsi_source_create_owned(struct umsi_system *sys,
			     const struct umsi_source_config *cfg,
			     const void *owner, struct umsi_source **out)
{
	struct umsi_source *src;

	if (!sys || !cfg || !out || !cfg->ops || !cfg->ops->write_msg ||
	    !cfg->ops->mask != !cfg->ops->unmask || !cfg->nslots ||
	    cfg->nslots > (cfg->block ? 32u : MAX_SLOTS))
		return -UMSI_EINVAL;
	src = umsi_zalloc(sys, sizeof(*src));
	if (!src)
		return -UMSI_ENOMEM;
	src->slot = umsi_zalloc(sys, cfg->nslots * sizeof(*src->slot));
	if (!src->slot) {
		umsi_free(sys, src, sizeof(*src));
		return -UMSI_ENOMEM;
	}
	src->sys = sys;
	src->cfg = *cfg;
	src->owner = owner ? owner : src;
	src->chip = src_chip;
	if (cfg->name)
		src->chip.name = cfg->name;
	if (!cfg->ops->mask) {
		src->chip.mask = NULL;          /* masked lazily by the core */
		src->chip.unmask = NULL;
	}
	*out = src;
	return 0;
}

int umsi_source_create(struct umsi_system *sys,
		       const struct umsi_source_config *cfg,
		       struct umsi_source **out)
{
	return umsi_source_create_owned(sys, cfg, NULL, out);
}

int umsi_source_destroy(struct umsi_source *src)
{
	struct umsi_system *sys;

	if (!src)
		return 0;
	if (src->used)
		return -UMSI_EBUSY;
	sys = src->sys;
	if (src->owner == src)
		umsi_irq_release_owned(sys, src);
	umsi_free(sys, src->slot, src->cfg.nslots * sizeof(*src->slot));
	umsi_free(sys, src, sizeof(*src));
	return 0;
}

uint32_t umsi_source_max_block(struct umsi_source *src)
{
	uint32_t n = umsi_irq_max_block(src->sys);

	return n < src->cfg.nslots ? n : src->cfg.nslots;
}

int32_t umsi_source_slot(const struct umsi_source *src, uint32_t irq)
{
	struct umsi_irq_desc *d = umsi_irq_to_desc(src->sys, irq);

	if (!d || d->chip != &src->chip || d->hwirq >= src->cfg.nslots ||
	    src->slot[d->hwirq].d != d)
		return -1;
	return (int32_t)d->hwirq;
}

struct umsi_irq_desc *umsi_source_desc(const struct umsi_source *src,
				       uint32_t slot)
{
	return slot < src->cfg.nslots ? src->slot[slot].d : NULL;
}

const struct umsi_source_config *umsi_source_config(
	const struct umsi_source *src)
{
	return &src->cfg;
}

/* Slots for @req: its list, [index, index + count), or the lowest free. */
static int pick_slots(const struct umsi_source *src,
		      const struct umsi_target_req *req, uint32_t *slots)
{
	uint32_t i, j, s = 0;

	if (req->slots) {
		for (i = 0; i < req->count; i++) {
			slots[i] = req->slots[i];
			if (slots[i] >= src->cfg.nslots)
				return -UMSI_EINVAL;
			for (j = 0; j < i; j++)
				if (slots[j] == slots[i])
					return -UMSI_EINVAL;
			if (src->slot[slots[i]].d)
				return -UMSI_EBUSY;
		}
		return 0;
	}
	if (req->index != UMSI_SLOT_ANY) {
		if (req->index < 0 ||
		    (uint64_t)(uint32_t)req->index + req->count >
		    src->cfg.nslots)
			return -UMSI_EINVAL;
		for (i = 0; i < req->count; i++) {
			slots[i] = (uint32_t)req->index + i;
			if (src->slot[slots[i]].d)
				return -UMSI_EBUSY;
		}
		return 0;
	}
	for (i = 0; i < req->count; i++, s++) {
		while (s < src->cfg.nslots && src->slot[s].d)
			s++;
		if (s == src->cfg.nslots)
			return -UMSI_ENOSPC;
		slots[i] = s;
	}
	return 0;
}

/*
 * Per-target allocation, one IRQ at a time (affinity or spreading each),
 * so that when the allocator runs dry the count that fits is known.
 * Return: how many (>= min), or a negative code (none kept).
 */
static int alloc_targets(struct umsi_source *src,
			 const struct umsi_target_req *req, uint32_t min,
			 struct umsi_irq_desc **ds)
{
	struct umsi_system *sys = src->sys;
	bool spread = req->flags & UMSI_TARGET_SPREAD;
	bool managed = spread || (req->flags & UMSI_TARGET_MANAGED);
	struct umsi_cpumask m;
	uint64_t *words = NULL;
	uint32_t got;
	int ret = 0;

	if (spread) {
		words = umsi_zalloc(sys, umsi_sys_mask_bytes(sys));
		if (!words)
			return -UMSI_ENOMEM;
		m.words = words;
		m.nbits = umsi_cpu_count(sys);
	}
	for (got = 0; got < req->count; got++) {
		if (spread)
			umsi_irq_spread_mask(sys, got, req->count, words);
		ret = umsi_irq_alloc_numbered(sys, &src->chip, 1, false,
					      spread ? &m : req->affinity,
					      managed,
					      req->irqs ? &req->irqs[got] : NULL,
					      &ds[got]);
		if (ret)
			break;
	}
	umsi_free(sys, words, umsi_sys_mask_bytes(sys));
	if (ret == -UMSI_ENOSPC && got >= min)
		return (int)got;
	if (ret) {
		umsi_irq_release(sys, ds, got);
		return ret;
	}
	return (int)got;
}

int umsi_source_alloc(struct umsi_source *src,
		      const struct umsi_target_req *req, uint32_t *irqs_out)
{
	struct umsi_system *sys;
	struct umsi_irq_desc **ds;
	struct umsi_msg msg0 = { 0, 0 };
	uint32_t *slots, i, j, n, min, events;
	size_t bytes;
	int got, ret;

	if (!src || !req || !irqs_out || !req->count ||
	    req->count > src->cfg.nslots || req->min > req->count ||
	    (req->min && (req->irqs || src->cfg.block)))
		return -UMSI_EINVAL;
	sys = src->sys;
	n = req->count;
	min = req->min ? req->min : n;
	for (i = 0; req->irqs && i < n; i++)
		for (j = 0; j < i; j++)
			if (req->irqs[j] == req->irqs[i])
				return -UMSI_EINVAL;    /* a number twice */
	if (src->cfg.block) {
		if (n & (n - 1) || req->slots ||
		    (req->index != UMSI_SLOT_ANY && req->index))
			return -UMSI_EINVAL;
		if (req->flags & (UMSI_TARGET_MANAGED | UMSI_TARGET_SPREAD))
			return -UMSI_EINVAL;
		if (src->used)
			return -UMSI_EBUSY;
		if (n > umsi_source_max_block(src))
			return -UMSI_ENOSPC;
	}
	bytes = n * (sizeof(*ds) + sizeof(*slots));
	ds = umsi_zalloc(sys, bytes);
	if (!ds)
		return -UMSI_ENOMEM;
	slots = (uint32_t *)(void *)(ds + n);
	ret = pick_slots(src, req, slots);
	if (ret)
		goto out;
	if (src->cfg.block) {
		ret = umsi_irq_alloc_numbered(sys, &src->chip, n, true,
					      req->affinity, false, req->irqs,
					      ds);
		got = ret ? ret : (int)n;
	} else {
		got = alloc_targets(src, req, min, ds);
	}
	if (got < 0) {
		ret = got;
		goto out;
	}
	n = (uint32_t)got;
	/* Bound to their slots and requester, then published (claimed). */
	events = src->cfg.events ? src->cfg.events : src->cfg.nslots;
	for (i = 0; i < n; i++) {
		ds[i]->chip_data = src;
		ds[i]->hwirq = slots[i];
		ds[i]->source_id = src->cfg.requester_id;
		ds[i]->source_events = events;
	}
	umsi_irq_publish(sys, ds, n);
	/*
	 * Composed (the controller's resources: an ITS event, a remapping
	 * entry) and written while claimed: nothing moves them meanwhile.
	 * The controller may have room for fewer (an ITS's table shared by
	 * the functions behind one bridge): keep what it took, if enough.
	 */
	for (i = 0; i < n && !ret; i++) {
		struct umsi_msg msg;

		/*
		 * A block has one message. Its members are composed one by
		 * one only where the controller makes each a target of its
		 * own (a remapping entry each, one message for all).
		 */
		if (src->cfg.block && i && !umsi_irq_grouped(ds[0])) {
			if (req->msgs)
				req->msgs[i] = req->msgs[0];
			continue;
		}
		ret = umsi_irq_msg(sys, ds[i], &msg);
		if (!ret && src->cfg.block && i && (msg.address != msg0.address ||
						    msg.data != msg0.data))
			ret = -UMSI_EINVAL;
		if (!i)
			msg0 = msg;
		if (!ret && !(req->flags & UMSI_TARGET_NO_WRITE))
			ret = src_write_msg(sys, ds[i], &msg);
		if (!ret && req->msgs)
			req->msgs[i] = msg;
	}
	if (ret == -UMSI_ENOSPC && !src->cfg.block && i - 1 >= min) {
		umsi_irq_release(sys, ds + i - 1, n - (i - 1));
		n = i - 1;
		ret = 0;
	}
	if (ret) {
		/* Nothing can send yet: every slot is masked or never had it. */
		umsi_irq_release(sys, ds, n);
		goto out;
	}
	for (i = 0; i < n; i++) {
		src->slot[slots[i]].d = ds[i];
		irqs_out[i] = ds[i]->irq;
	}
	src->used += n;
	ret = (int)n;
	if (req->flags & UMSI_TARGET_CLAIMED)
		goto out;
	/* A CPU that went offline meanwhile: moved now, or undone. */
	got = umsi_irq_activate(sys, ds, n);
	if (got) {
		ret = got;
		(void)umsi_source_free(src, irqs_out, n, 0);
	}
out:
	umsi_free(sys, ds, bytes);
	return ret;
}

int umsi_source_activate(struct umsi_source *src, const uint32_t *irqs,
			 uint32_t n)
{
	struct umsi_irq_desc *ds[32];
	uint32_t i, k;
	int32_t s;
	int ret = 0, r;

	/* In batches: a block's members (32 at most) together. */
	for (i = 0; i < n; i += k) {
		for (k = 0; k < 32 && i + k < n; k++) {
			s = umsi_source_slot(src, irqs[i + k]);
			if (s < 0)
				return -UMSI_ENOENT;
			ds[k] = src->slot[s].d;
		}
		r = umsi_irq_activate(src->sys, ds, k);
		ret = ret ? ret : r;
	}
	return ret;
}

int umsi_source_msg(struct umsi_source *src, uint32_t irq,
		    struct umsi_msg *msg)
{
	int32_t s;

	if (!src || !msg)
		return -UMSI_EINVAL;
	s = umsi_source_slot(src, irq);
	if (s < 0)
		return -UMSI_ENOENT;
	if (src->cfg.block)
		s = 0;
	return umsi_irq_msg(src->sys, src->slot[s].d, msg);
}

/* Targets already out of their slots: released, or kept when they may
 * still be sent to. One wait for the CPUs a batch. */
static void drop_taken(struct umsi_source *src,
				   struct umsi_irq_desc **ds, uint32_t n,
				   uint32_t flags)
{
	if (!n)
		return;
	if (flags & UMSI_SOURCE_MAY_SEND)
		umsi_irq_quarantine(src->sys, ds, n, src->owner);
	else
		umsi_irq_release(src->sys, ds, n);
}

int umsi_source_free(struct umsi_source *src, const uint32_t *irqs,
		     uint32_t n, uint32_t flags)
{
	struct umsi_irq_desc *ds[32];
	uint32_t i, k;
	int32_t s;

	if (!src || (n && !irqs))
		return -UMSI_EINVAL;
	for (i = 0; i < n; i++)
		if (umsi_source_slot(src, irqs[i]) < 0)
			return -UMSI_ENOENT;
	if (src->cfg.block && n) {
		/* A block goes whole: every slot once, in slot order. */
		if (n != src->used)
			return -UMSI_EINVAL;
		umsi_memset(ds, 0, sizeof(ds));
		for (i = 0; i < n; i++) {
			s = umsi_source_slot(src, irqs[i]);
			if ((uint32_t)s >= n || ds[s])
				return -UMSI_EINVAL;
			ds[s] = src->slot[s].d;
		}
		umsi_source_drop(src, ds, n, flags);
		return 0;
	}
	/*
	 * In batches of 32: a subset goes, the other targets are untouched.
	 * A target listed twice is taken once (its slot is cleared as it
	 * is taken).
	 */
	for (i = 0; i < n; ) {
		for (k = 0; k < 32 && i < n; i++) {
			s = umsi_source_slot(src, irqs[i]);
			if (s < 0)
				continue;
			ds[k++] = src->slot[s].d;
			src->slot[s].d = NULL;
			src->used--;
		}
		drop_taken(src, ds, k, flags);
	}
	return 0;
}

void umsi_source_drop(struct umsi_source *src, struct umsi_irq_desc **ds,
		      uint32_t n, uint32_t flags)
{
	uint32_t i;

	for (i = 0; i < n; i++) {
		src->slot[ds[i]->hwirq].d = NULL;
		src->used--;
	}
	drop_taken(src, ds, n, flags);
}

void umsi_source_set_events(struct umsi_source *src, uint32_t events)
{
	src->cfg.events = events;
}
