/* SPDX-License-Identifier: MIT */
/*
 * Dispatch: from (cpu, identity) to the driver's handler, and the detection
 * of interrupt storms nobody claims.
 *
 * No lock is taken here, and one locked read-modify-write is made per
 * interrupt: the entry's. The barriers, and what each pairs with:
 *
 *  - Entry: dispatch_seq goes odd with a sequentially consistent
 *    fetch-add (a full barrier), before the slot is loaded. It pairs with
 *    umsi_irq_sync()'s sequentially consistent fence between unpublishing
 *    a descriptor and reading every CPU's dispatch_seq (Dekker): either
 *    the tear-down sees the odd count and waits, or this dispatch sees
 *    the slot already NULL.
 *  - The slot's descriptor is loaded with acquire, pairing with the
 *    release (or seq_cst) store that published it, so its fields and
 *    handlers are seen initialised.
 *  - Exit: dispatch_seq goes even with a plain release store of its value
 *    (reloaded) plus one. Only this CPU writes its dispatch_seq (with
 *    interrupts off, dispatch does not nest), so no atomic add is needed;
 *    the release orders every access of the descriptor before it, and
 *    pairs with the acquire loads of umsi_irq_sync()'s wait: a tear-down
 *    that sees the count move frees nothing this dispatch still reads.
 *  - The per-slot interrupt count and the descriptor's storm count are
 *    relaxed load-and-store, not atomic adds: a slot is this CPU's alone
 *    (or, in a shared table, the identity's target CPU's), and the storm
 *    window is a heuristic whose count may lose one while an IRQ is
 *    handled on two CPUs at once (a move); the unhandled count, the rare
 *    path, stays atomic.
 */
#include <umsi/internal/compiler.h>
#include <umsi/internal/core.h>
#include <umsi/internal/hostcall.h>

/*
 * Linux's note_interrupt() rule: out of every 100,000 interrupts, more
 * than 99,900 unhandled means a stuck source; an unhandled interrupt after
 * a quiet spell (100 ms) restarts the count, so rare strays never add up.
 */
#define STORM_WINDOW 100000u

static void storm_disable(struct umsi_system *sys, struct umsi_irq_desc *d)
{
	atomic_fetch_or(&d->gate, UMSI_GATE_DISABLED);
	if (d->chip->mask)
		d->chip->mask(sys, d);
	umsi_log(sys, UMSI_LOG_ERROR, "irq %u: nobody cared (%u of the last "
		 "%u interrupts unhandled); disabling it", d->irq,
		 atomic_load(&d->storm_unhandled), STORM_WINDOW);
}

/*
 * The storm window is counted by the slot's own interrupt count, which
 * dispatch keeps anyway: a handled interrupt costs storm detection
 * nothing. Only an unhandled one (out of line, UMSI_COLD) looks at the
 * window: d->storm_count holds the slot count where it began (low 32
 * bits), and once STORM_WINDOW interrupts have passed, the unhandled ones
 * among them are judged. A window that began on another slot (the IRQ
 * moved) reads as over at once: it is judged with what it has and starts
 * again, which can delay a verdict by one window, never make a false one.
 */
static UMSI_COLD void note_unhandled(struct umsi_system *sys,
				     struct umsi_irq_desc *d, uint64_t count)
{
	uint64_t now = umsi_host_clock_ns(sys);
	uint64_t last = atomic_load_explicit(&d->last_unhandled_ns,
					     memory_order_relaxed);
	unsigned start = atomic_load_explicit(&d->storm_count,
					      memory_order_relaxed);

	atomic_fetch_add_explicit(&d->unhandled_total, 1, memory_order_relaxed);
	/* The clock is monotonic: now >= last. */
	if (atomic_load(&d->storm_unhandled) && now - last > sys->storm_quiet_ns)
		atomic_store(&d->storm_unhandled, 1);
	else
		atomic_fetch_add(&d->storm_unhandled, 1);
	atomic_store_explicit(&d->last_unhandled_ns, now, memory_order_relaxed);
	if ((unsigned)count - start < STORM_WINDOW)
		return;
	atomic_store_explicit(&d->storm_count, (unsigned)count,
			      memory_order_relaxed);
	if (atomic_load(&d->storm_unhandled) > sys->storm_threshold)
		storm_disable(sys, d);
	atomic_store(&d->storm_unhandled, 0);
}

/* Several handlers on the IRQ, or one that takes the kernel's context. */
static UMSI_COLD int run_handlers_all(struct umsi_irq_desc *d,
				      struct umsi_irq_action *a, void *ctx,
				      bool with_ctx)
{
	int handled = 0;

	for (; a; a = atomic_load_explicit(&a->next, memory_order_acquire)) {
		if (with_ctx && (a->flags & UMSI_ACTION_CTX)) {
			struct umsi_irq_action_ctx *c = umsi_action_ctx(a);

			handled |= c->handler(d->irq, c->dev_id, ctx) ==
				   UMSI_IRQ_HANDLED;
		} else {
			handled |= a->handler(d->irq, a->arg) ==
				   UMSI_IRQ_HANDLED;
		}
	}
	return handled;
}

/*
 * Every handler is called as handler(irq, arg) (internal/core.h); with a
 * kernel context (umsi_dispatch_ctx) those of umsi_request_irq_ctx() are
 * called with it instead, a test the plain entry does not pay for.
 */
static UMSI_ALWAYS_INLINE int run_handlers(struct umsi_irq_desc *d,
					   void *ctx, bool with_ctx)
{
	uintptr_t w = atomic_load_explicit(&d->actions, memory_order_acquire);
	struct umsi_irq_action *a;

	/*
	 * One plain handler, the common case, right here (the tag says so:
	 * one test, and the untagging folds into the loads' offsets); the
	 * rest apart.
	 */
	if (UMSI_LIKELY(w & UMSI_ACTIONS_ONE)) {
		a = (struct umsi_irq_action *)(w - UMSI_ACTIONS_ONE);
		return a->handler(d->irq, a->arg) == UMSI_IRQ_HANDLED;
	}
	return run_handlers_all(d, (struct umsi_irq_action *)w, ctx,
				with_ctx);
}

/* End the interrupt: the host's eoi (or nothing). */
static inline void end_irq(struct umsi_system *sys, uint32_t id)
{
	sys->eoi(sys->env.host, id);
}

/*
 * The identities dispatch does not hand to a handler, apart: nothing owns
 * it (spurious), an IRQ has just left it (sys->moved, whose gate is
 * set for this), or the IRQ is lazily masked or disabled by storm
 * detection. Returns what dispatch returns.
 */
static UMSI_COLD int dispatch_odd(struct umsi_system *sys, struct umsi_cpu *c,
				  uint32_t id, struct umsi_irq_desc *d)
{
	struct umsi_vslot *slot = &c->slot[id];

	if (!d || d == &sys->moved) {
		/*
		 * Spurious: nothing owns the identity. A slot an IRQ has just
		 * left (migration resent its pending interrupt to the new
		 * CPU) is acknowledged without counting it as spurious. The
		 * controller's own spurious identity is never ended.
		 */
		if (!d)
			atomic_fetch_add_explicit(&c->spurious, 1,
						  memory_order_relaxed);
		if (id != sys->env.ctl->spurious_id)
			end_irq(sys, id);
		return 0;
	}
	atomic_store_explicit(&slot->count, atomic_load_explicit(&slot->count,
			      memory_order_relaxed) + 1, memory_order_relaxed);
	/* Lazily masked: remember it, deliver it on unmask. */
	atomic_store(&d->replay, true);
	end_irq(sys, id);
	return 1;
}

/*
 * A handler found nothing: the storm accounting. The descriptor is loaded
 * again from the slot (dispatch keeps no register for it across the
 * handler call): this CPU is still inside the dispatch (its dispatch_seq
 * odd), so whatever the slot holds is safe to read. Should the IRQ have
 * left the slot while its handler ran (a move), the slot holds
 * sys->moved or nothing and this one unhandled interrupt goes uncounted,
 * as the storm window's heuristic allows.
 */
static UMSI_COLD void dispatch_unhandled(struct umsi_system *sys,
					struct umsi_cpu *c, uint32_t id)
{
	struct umsi_vslot *slot = &c->slot[id];
	struct umsi_irq_desc *d = atomic_load_explicit(&slot->d,
						       memory_order_acquire);

	if (d && d != &sys->moved)
		note_unhandled(sys, d, atomic_load_explicit(&slot->count,
							   memory_order_relaxed));
}

/*
 * Inlined into both entries: umsi_dispatch's constant NULL costs nothing.
 * Only the system, the identity and the CPU live across the handler call
 * (three saved registers, no stack adjustment): the exit reloads the
 * sequence (only this CPU writes it) instead of keeping what entry saw.
 */
static UMSI_ALWAYS_INLINE int dispatch(struct umsi_system *sys, uint32_t cpu,
				       uint32_t id, void *ctx, bool with_ctx)
{
	struct umsi_cpu *c;
	struct umsi_vslot *slot;
	struct umsi_irq_desc *d;
	int ret = 1;

	if (cpu >= sys->ncpus || id >= sys->id_limit)
		return 0;
	c = &sys->cpus[cpu];
	atomic_fetch_add(&c->dispatch_seq, 1);
	slot = &c->slot[id];
	d = atomic_load_explicit(&slot->d, memory_order_acquire);
	if (UMSI_UNLIKELY(!d || atomic_load(&d->gate))) {
		ret = dispatch_odd(sys, c, id, d);
	} else {
		atomic_store_explicit(&slot->count,
			atomic_load_explicit(&slot->count,
					     memory_order_relaxed) + 1,
			memory_order_relaxed);
		if (UMSI_UNLIKELY(!run_handlers(d, ctx, with_ctx)))
			dispatch_unhandled(sys, c, id);
		end_irq(sys, id);
	}
	atomic_store_explicit(&c->dispatch_seq,
			      atomic_load_explicit(&c->dispatch_seq,
						   memory_order_relaxed) + 1,
			      memory_order_release);
	return ret;
}

int umsi_dispatch(struct umsi_system *sys, uint32_t cpu, uint32_t id)
{
	return dispatch(sys, cpu, id, NULL, false);
}

int umsi_dispatch_ctx(struct umsi_system *sys, uint32_t cpu, uint32_t id,
		      void *ctx)
{
	return dispatch(sys, cpu, id, ctx, true);
}

uint64_t umsi_spurious_count(struct umsi_system *sys, uint32_t cpu)
{
	return cpu < sys->ncpus ? atomic_load(&sys->cpus[cpu].spurious) : 0;
}
