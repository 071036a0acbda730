/* SPDX-License-Identifier: MIT */
/*
 * Dispatch: from (cpu, identity) to the driver's handler, and the detection
 * of interrupt storms nobody claims.
 *
 * No lock is taken here. The vector table slot is read with an acquire
 * load; set-up paths publish descriptors with release stores. Tear-down
 * unpublishes a descriptor, then waits in umsi_irq_sync() until every CPU
 * has been seen outside dispatch, which is why each CPU bumps its
 * dispatch_seq on entry (odd) and exit (even). Both sides use sequentially
 * consistent operations, so either tear-down sees the odd count or
 * dispatch sees the NULL slot.
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
	atomic_store(&d->disabled, true);
	if (d->chip->mask)
		d->chip->mask(sys, d);
	umsi_log(sys, UMSI_LOG_ERROR, "irq %u: nobody cared (%u of the last "
		 "%u interrupts unhandled); disabling it", d->irq,
		 atomic_load(&d->storm_unhandled), STORM_WINDOW);
}

/*
 * The rare parts of the accounting are out of line (UMSI_COLD): inlined,
 * they would cost the common path (a handled interrupt) registers saved
 * on entry.
 */

static UMSI_COLD void note_unhandled(struct umsi_system *sys,
					 struct umsi_irq_desc *d)
{
	uint64_t now = umsi_host_clock_ns(sys);
	uint64_t last = atomic_load_explicit(&d->last_unhandled_ns,
					     memory_order_relaxed);

	atomic_fetch_add_explicit(&d->unhandled_total, 1, memory_order_relaxed);
	/* The clock is monotonic: now >= last. */
	if (atomic_load(&d->storm_unhandled) && now - last > sys->storm_quiet_ns)
		atomic_store(&d->storm_unhandled, 1);
	else
		atomic_fetch_add(&d->storm_unhandled, 1);
	atomic_store_explicit(&d->last_unhandled_ns, now, memory_order_relaxed);
}

/* A window of STORM_WINDOW interrupts ended: judge it. */
static UMSI_COLD void storm_window(struct umsi_system *sys,
				       struct umsi_irq_desc *d)
{
	atomic_store(&d->storm_count, 0);
	if (atomic_load(&d->storm_unhandled) > sys->storm_threshold)
		storm_disable(sys, d);
	atomic_store(&d->storm_unhandled, 0);
}

static inline void note_interrupt(struct umsi_system *sys,
				  struct umsi_irq_desc *d, int handled)
{
	if (UMSI_UNLIKELY(!handled))
		note_unhandled(sys, d);
	if (UMSI_UNLIKELY(atomic_fetch_add(&d->storm_count, 1) + 1 >=
			      STORM_WINDOW))
		storm_window(sys, d);
}

/*
 * Every handler is called as handler(irq, arg) (internal/core.h); with a
 * kernel context (umsi_dispatch_ctx) those of umsi_request_irq_ctx() are
 * called with it instead, a test the plain entry does not pay for.
 */
static UMSI_ALWAYS_INLINE int run_handlers(struct umsi_irq_desc *d,
					   void *ctx, bool with_ctx)
{
	struct umsi_irq_action *a;
	int handled = 0;

	for (a = atomic_load_explicit(&d->actions, memory_order_acquire); a;
	     a = atomic_load_explicit(&a->next, memory_order_acquire)) {
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

/* End the interrupt: the host's eoi (or nothing). */
static inline void end_irq(struct umsi_system *sys, uint32_t id)
{
	sys->eoi(sys->env.host, id);
}

/* Inlined into both entries: umsi_dispatch's constant NULL costs nothing. */
static UMSI_ALWAYS_INLINE int dispatch(struct umsi_system *sys, uint32_t cpu,
				       uint32_t id, void *ctx, bool with_ctx)
{
	struct umsi_cpu *c;
	struct umsi_vslot *slot;
	struct umsi_irq_desc *d;

	if (cpu >= sys->ncpus || id >= sys->id_limit)
		return 0;
	c = &sys->cpus[cpu];
	atomic_fetch_add(&c->dispatch_seq, 1);
	slot = &c->slot[id];
	d = atomic_load(&slot->d);
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
		atomic_fetch_add(&c->dispatch_seq, 1);
		return 0;
	}
	atomic_fetch_add_explicit(&slot->count, 1, memory_order_relaxed);
	if (atomic_load(&d->mask_depth) > 0 || atomic_load(&d->disabled)) {
		/* Lazily masked: remember it, deliver it on unmask. */
		atomic_store(&d->replay, true);
	} else {
		note_interrupt(sys, d, run_handlers(d, ctx, with_ctx));
	}
	end_irq(sys, id);
	atomic_fetch_add(&c->dispatch_seq, 1);
	return 1;
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
