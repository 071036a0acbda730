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
#include <umsi/source.h>

#define MAX_SLOTS 2048u         /* MSI-X table size limit */

struct umsi_source {
	struct umsi_system *sys;
	struct umsi_source_config cfg;
	struct umsi_irq_desc **slot;    /* per slot: its target, or NULL */
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

static void src_describe(struct umsi_system *sys,
			 const struct umsi_irq_desc *d, struct umsi_irq_info *info)
{
	const struct umsi_source *src = d->chip_data;

	(void)sys;
	info->bdf = src->cfg.bdf;
}

static const struct umsi_irq_chip src_mask_chip = {
	.name = "source",
	.mask = src_mask,
	.unmask = src_unmask,
	.write_msg = src_write_msg,
	.describe = src_describe,
};

static const struct umsi_irq_chip src_lazy_chip = {
	.name = "source",
	.write_msg = src_write_msg,
	.describe = src_describe,
};

/* ---- sources ------------------------------------------------------------ */

int umsi_source_create(struct umsi_system *sys,
		       const struct umsi_source_config *cfg,
		       struct umsi_source **out)
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
	*out = src;
	return 0;
}

int umsi_source_destroy(struct umsi_source *src)
{
	struct umsi_system *sys;

	if (!src)
		return 0;
	if (src->used)
		return -UMSI_EBUSY;
	sys = src->sys;
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

/* The slot of @irq in @src, or -1. */
static int32_t slot_of(const struct umsi_source *src, uint32_t irq)
{
	struct umsi_irq_desc *d = umsi_irq_to_desc(src->sys, irq);

	if (!d || d->chip_data != src ||
	    (d->chip != &src_mask_chip && d->chip != &src_lazy_chip))
		return -1;
	return (int32_t)d->hwirq;
}

/* Slots for @req: [first, first + count) or the lowest free ones. */
static int pick_slots(const struct umsi_source *src,
		      const struct umsi_target_req *req, uint32_t *slots)
{
	uint32_t i, s = 0;

	if (req->index != UMSI_SLOT_ANY) {
		if (req->index < 0 ||
		    (uint64_t)(uint32_t)req->index + req->count >
		    src->cfg.nslots)
			return -UMSI_EINVAL;
		for (i = 0; i < req->count; i++) {
			slots[i] = (uint32_t)req->index + i;
			if (src->slot[slots[i]])
				return -UMSI_EBUSY;
		}
		return 0;
	}
	for (i = 0; i < req->count; i++, s++) {
		while (s < src->cfg.nslots && src->slot[s])
			s++;
		if (s == src->cfg.nslots)
			return -UMSI_ENOSPC;
		slots[i] = s;
	}
	return 0;
}

/* Per-target allocation, one IRQ at a time (affinity or spreading each). */
static int alloc_targets(struct umsi_source *src,
			 const struct umsi_target_req *req,
			 const struct umsi_irq_chip *chip,
			 struct umsi_irq_desc **ds)
{
	struct umsi_system *sys = src->sys;
	bool spread = req->flags & UMSI_TARGET_SPREAD;
	bool managed = spread || (req->flags & UMSI_TARGET_MANAGED);
	struct umsi_cpumask m;
	uint64_t *words = NULL;
	uint32_t i;
	int ret = 0;

	if (spread) {
		words = umsi_zalloc(sys, umsi_sys_mask_bytes(sys));
		if (!words)
			return -UMSI_ENOMEM;
		m.words = words;
		m.nbits = umsi_cpu_count(sys);
	}
	for (i = 0; i < req->count && !ret; i++) {
		if (spread)
			umsi_irq_spread_mask(sys, i, req->count, words);
		ret = umsi_irq_alloc_numbered(sys, chip, 1, false,
					      spread ? &m : req->affinity,
					      managed,
					      req->irqs ? &req->irqs[i] : NULL,
					      &ds[i]);
	}
	umsi_free(sys, words, umsi_sys_mask_bytes(sys));
	if (ret)
		umsi_irq_release(sys, ds, i - 1);
	return ret;
}

int umsi_source_alloc(struct umsi_source *src,
		      const struct umsi_target_req *req, uint32_t *irqs_out)
{
	struct umsi_system *sys;
	const struct umsi_irq_chip *chip;
	struct umsi_irq_desc **ds;
	uint32_t *slots, i, n, events;
	size_t bytes;
	int ret;

	if (!src || !req || !irqs_out || !req->count ||
	    req->count > src->cfg.nslots)
		return -UMSI_EINVAL;
	sys = src->sys;
	n = req->count;
	if (src->cfg.block) {
		if (n & (n - 1) || (req->index != UMSI_SLOT_ANY && req->index))
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
	chip = src->cfg.ops->mask ? &src_mask_chip : &src_lazy_chip;
	if (src->cfg.block)
		ret = umsi_irq_alloc_numbered(sys, chip, n, true, req->affinity,
					      false, req->irqs, ds);
	else
		ret = alloc_targets(src, req, chip, ds);
	if (ret)
		goto out;
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
	 */
	for (i = 0; i < n && !ret; i++) {
		struct umsi_msg msg;

		ret = umsi_irq_msg(sys, ds[i], &msg);
		if (!ret && !(req->flags & UMSI_TARGET_NO_WRITE))
			ret = src_write_msg(sys, ds[i], &msg);
	}
	if (ret) {
		/* Nothing can send yet: every slot is masked or never had it. */
		umsi_irq_release(sys, ds, n);
		goto out;
	}
	for (i = 0; i < n; i++) {
		src->slot[slots[i]] = ds[i];
		irqs_out[i] = ds[i]->irq;
	}
	src->used += n;
	/* A CPU that went offline meanwhile: moved now, or undone. */
	ret = umsi_irq_activate(sys, ds, n);
	if (ret)
		(void)umsi_source_free(src, irqs_out, n, 0);
out:
	umsi_free(sys, ds, bytes);
	return ret;
}

int umsi_source_msg(struct umsi_source *src, uint32_t irq,
		    struct umsi_msg *msg)
{
	int32_t s;

	if (!src || !msg)
		return -UMSI_EINVAL;
	s = slot_of(src, irq);
	if (s < 0)
		return -UMSI_ENOENT;
	if (src->cfg.block)
		s = 0;
	return umsi_irq_msg(src->sys, src->slot[s], msg);
}

int umsi_source_free(struct umsi_source *src, const uint32_t *irqs,
		     uint32_t n, uint32_t flags)
{
	struct umsi_irq_desc *blk[32], *d;
	uint32_t i;
	int32_t s;

	if (!src || (n && !irqs))
		return -UMSI_EINVAL;
	for (i = 0; i < n; i++)
		if (slot_of(src, irqs[i]) < 0)
			return -UMSI_ENOENT;
	if (src->cfg.block && n) {
		/* A block goes whole: every slot once, in slot order. */
		if (n != src->used)
			return -UMSI_EINVAL;
		umsi_memset(blk, 0, sizeof(blk));
		for (i = 0; i < n; i++) {
			s = slot_of(src, irqs[i]);
			if ((uint32_t)s >= n || blk[s])
				return -UMSI_EINVAL;
			blk[s] = src->slot[s];
		}
		for (i = 0; i < n; i++)
			src->slot[i] = NULL;
		src->used = 0;
		if (flags & UMSI_SOURCE_MAY_SEND)
			umsi_irq_quarantine(src->sys, blk, n, src);
		else
			umsi_irq_release(src->sys, blk, n);
		return 0;
	}
	/* One at a time: a subset goes, the other targets are untouched. */
	for (i = 0; i < n; i++) {
		s = slot_of(src, irqs[i]);
		d = umsi_irq_to_desc(src->sys, irqs[i]);
		if (s < 0 || src->slot[s] != d)
			continue;       /* listed twice */
		src->slot[s] = NULL;
		src->used--;
		if (flags & UMSI_SOURCE_MAY_SEND)
			umsi_irq_quarantine(src->sys, &d, 1, src);
		else
			umsi_irq_release(src->sys, &d, 1);
	}
	return 0;
}
