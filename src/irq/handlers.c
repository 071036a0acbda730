/* SPDX-License-Identifier: MIT */
/*
 * Handlers (request and free, owned by a source or not) and masking of
 * an IRQ by its users.
 */
#include <umsi/internal/core.h>

/* ---- handlers ------------------------------------------------------------ */

/*
 * Attach an action: @handler or @handler_ctx (exactly one), tagged with
 * @owner or not.
 */
static int request(struct umsi_system *sys, uint32_t irq,
		   umsi_handler_t handler, umsi_handler_ctx_t handler_ctx,
		   uint32_t flags, const char *name, void *dev_id,
		   const void *owner)
{
	struct umsi_irq_desc *d = umsi_irq_to_desc(sys, irq);
	struct umsi_irq_action *a, *tail, *first;
	umsi_irqflags_t fl;
	int ret = 0;

	if (!d)
		return -UMSI_ENOENT;
	if (!handler == !handler_ctx || (flags & UMSI_ACTION_CTX))
		return -UMSI_EINVAL;
	if (d->chip->startup && !umsi_desc_actions(d)) {
		ret = d->chip->startup(sys, d);
		if (ret)
			return ret;
	}
	if (handler_ctx) {
		struct umsi_irq_action_ctx *c = umsi_zalloc(sys, sizeof(*c));

		if (!c)
			return -UMSI_ENOMEM;
		c->handler = handler_ctx;
		c->dev_id = dev_id;
		a = &c->a;
		a->handler = umsi_irq_ctx_thunk;
		a->arg = a;
		flags |= UMSI_ACTION_CTX;
	} else {
		a = umsi_zalloc(sys, sizeof(*a));
		if (!a)
			return -UMSI_ENOMEM;
		a->handler = handler;
		a->arg = dev_id;
	}
	a->name = name;
	a->flags = flags;
	a->owner = owner;

	fl = umsi_lock(sys);
	first = umsi_desc_actions(d);
	if (first && (!(first->flags & UMSI_IRQF_SHARED) ||
		      !(flags & UMSI_IRQF_SHARED))) {
		ret = -UMSI_EBUSY;
	} else {
		/*
		 * A first handler starts afresh: an IRQ that storm detection
		 * disabled for an earlier handler gets its chance again, as
		 * Linux's __setup_irq clears IRQS_SPURIOUS_DISABLED.
		 */
		if (!first) {
			atomic_fetch_and(&d->gate, UMSI_GATE_DEPTH);
			atomic_store(&d->storm_count, 0);
			atomic_store(&d->storm_unhandled, 0);
			atomic_store(&d->replay, false);
		}
		if (first) {
			tail = first;
			while (atomic_load(&tail->next))
				tail = atomic_load(&tail->next);
			atomic_store_explicit(&tail->next, a,
					      memory_order_release);
		}
		umsi_desc_set_actions(d, first ? first : a);
	}
	umsi_unlock(sys, fl);
	if (ret) {
		umsi_free(sys, a, umsi_action_size(a));
		return ret;
	}
	/*
	 * The first handler starts the IRQ: undo the "not started" mask. If
	 * the source cannot be unmasked the request fails as a whole: no
	 * handler waits on an IRQ that can never arrive.
	 */
	if (!first) {
		ret = umsi_irq_unmask(sys, irq);
		if (ret) {
			umsi_free_irq(sys, irq, dev_id);
			return ret;
		}
	}
	return 0;
}

/*
 * Take @a (after @prev, or first when @prev is NULL) off @d's handlers.
 * Under the lock. A CPU in dispatch may still be running it: the caller
 * frees it after umsi_irq_sync(). Returns whether none is left.
 */
static bool unlink_action(struct umsi_irq_desc *d, struct umsi_irq_action *prev,
			  struct umsi_irq_action *a)
{
	struct umsi_irq_action *next = atomic_load(&a->next);

	if (prev) {
		atomic_store_explicit(&prev->next, next, memory_order_release);
		umsi_desc_set_actions(d, umsi_desc_actions(d));
	} else {
		umsi_desc_set_actions(d, next);
	}
	return !umsi_desc_actions(d);
}

/* A context handler reached through umsi_dispatch(): no context. */
int umsi_irq_ctx_thunk(uint32_t irq, void *action)
{
	struct umsi_irq_action_ctx *c = action;

	return c->handler(irq, c->dev_id, NULL);
}

int umsi_request_irq(struct umsi_system *sys, uint32_t irq,
		     umsi_handler_t handler, uint32_t flags, const char *name,
		     void *dev_id)
{
	return request(sys, irq, handler, NULL, flags, name, dev_id, NULL);
}

int umsi_request_irq_ctx(struct umsi_system *sys, uint32_t irq,
			 umsi_handler_ctx_t handler, uint32_t flags,
			 const char *name, void *dev_id)
{
	return request(sys, irq, NULL, handler, flags, name, dev_id, NULL);
}

int umsi_irq_request_owned(struct umsi_system *sys, uint32_t irq,
			   umsi_handler_t handler, uint32_t flags,
			   const char *name, void *dev_id, const void *owner)
{
	return request(sys, irq, handler, NULL, flags, name, dev_id, owner);
}

int umsi_free_irq(struct umsi_system *sys, uint32_t irq, void *dev_id)
{
	struct umsi_irq_desc *d = umsi_irq_to_desc(sys, irq);
	struct umsi_irq_action *a, *prev = NULL;
	umsi_irqflags_t fl;
	bool last = false;

	if (!d)
		return -UMSI_ENOENT;
	fl = umsi_lock(sys);
	for (a = umsi_desc_actions(d); a; prev = a, a = atomic_load(&a->next))
		if (umsi_action_dev_id(a) == dev_id)
			break;
	if (a)
		last = unlink_action(d, prev, a);
	umsi_unlock(sys, fl);
	if (!a)
		return -UMSI_ENOENT;
	if (last)
		umsi_irq_mask(sys, irq);
	/* No CPU may still be running the handler when we return. */
	umsi_irq_sync(sys);
	umsi_free(sys, a, umsi_action_size(a));
	return 0;
}

uint32_t umsi_irq_free_owned(struct umsi_system *sys, uint32_t irq,
			     const void *owner)
{
	struct umsi_irq_desc *d = umsi_irq_to_desc(sys, irq);
	struct umsi_irq_action *a, *prev;
	umsi_irqflags_t fl;
	bool last = false;
	uint32_t n = 0;

	if (!d || !owner)
		return 0;
	/*
	 * One handler at a time: a CPU in dispatch may still be walking
	 * through the one just unlinked, so it is freed only after a sync.
	 */
	for (;;) {
		fl = umsi_lock(sys);
		prev = NULL;
		for (a = umsi_desc_actions(d); a;
		     prev = a, a = atomic_load(&a->next))
			if (a->owner == owner)
				break;
		if (a)
			last = unlink_action(d, prev, a);
		umsi_unlock(sys, fl);
		if (!a)
			return n;
		if (last)
			umsi_irq_mask(sys, irq);
		umsi_irq_sync(sys);
		umsi_free(sys, a, umsi_action_size(a));
		n++;
	}
}

uint32_t umsi_irq_untagged_handlers(struct umsi_system *sys, uint32_t irq)
{
	struct umsi_irq_desc *d = umsi_irq_to_desc(sys, irq);
	struct umsi_irq_action *a;
	uint32_t n = 0;

	if (!d)
		return 0;
	for (a = umsi_desc_actions(d); a; a = atomic_load(&a->next))
		n += !a->owner;
	return n;
}

static int do_irq_mask(struct umsi_system *sys, uint32_t irq)
{
	struct umsi_irq_desc *d = umsi_irq_to_desc(sys, irq);

	if (!d || umsi_irq_dead(d))
		return -UMSI_ENOENT;
	if ((atomic_fetch_add(&d->gate, 1) & UMSI_GATE_DEPTH) == 0 &&
	    d->chip->mask) {
		int ret = d->chip->mask(sys, d);

		/*
		 * The source is not masked: say so, or dispatch would take it
		 * for lazily masked, and a level-triggered line would storm
		 * past storm detection.
		 */
		if (ret)
			atomic_fetch_sub(&d->gate, 1);
		return ret;
	}
	return 0;
}

static int do_irq_unmask(struct umsi_system *sys, uint32_t irq)
{
	struct umsi_irq_desc *d = umsi_irq_to_desc(sys, irq);
	unsigned gate;
	int ret = 0;

	if (!d || umsi_irq_dead(d))
		return -UMSI_ENOENT;
	gate = atomic_load(&d->gate);
	do {
		if (!(gate & UMSI_GATE_DEPTH))
			return -UMSI_EINVAL;
	} while (!atomic_compare_exchange_weak(&d->gate, &gate, gate - 1));
	/*
	 * A shut-down managed IRQ has no vector: its source stays masked
	 * until the restart, which unmasks it if nobody masked it since.
	 */
	if ((gate & UMSI_GATE_DEPTH) != 1 || umsi_desc_disabled(d) ||
	    d->shutdown)
		return 0;
	if (d->chip->unmask)
		ret = d->chip->unmask(sys, d);
	/* Still masked in hardware: the count says so too. */
	if (ret) {
		atomic_fetch_add(&d->gate, 1);
		return ret;
	}
	/*
	 * An interrupt taken while lazily masked is replayed now; a chip
	 * with mask bits has the device resend it from its pending bit.
	 */
	if (atomic_exchange(&d->replay, false))
		sys->env.ctl->resend(sys, d->cpu, d->vector);
	return ret;
}

/* A reader of the IRQ table: descriptors stay until it returns. */
int umsi_irq_mask(struct umsi_system *sys, uint32_t irq)
{
	unsigned e = umsi_rd_begin(sys);
	int ret = do_irq_mask(sys, irq);

	umsi_rd_end(sys, e);
	return ret;
}

/* A reader of the IRQ table: descriptors stay until it returns. */
int umsi_irq_unmask(struct umsi_system *sys, uint32_t irq)
{
	unsigned e = umsi_rd_begin(sys);
	int ret = do_irq_unmask(sys, irq);

	umsi_rd_end(sys, e);
	return ret;
}
