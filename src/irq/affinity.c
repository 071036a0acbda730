/* SPDX-License-Identifier: MIT */
/*
 * Affinity and live migration (CPU hot-plug, which moves IRQs off a CPU
 * with the same protocol, is cpuhp.c).
 *
 * Moving a live IRQ without losing an interrupt, in this order:
 *  1. take a vector on the new CPU and publish the descriptor there, so a
 *     message to the new target is handled from the first instant;
 *  2. retarget the source: compose the new message through the back end
 *     and have the chip write it (its write_msg protocol: mask, write,
 *     unmask, flush; or, for MSI without mask bits, a write order in which
 *     every intermediate message reaches a published vector); or, for a
 *     controller that moves interrupts itself, its retarget command;
 *  3. ask the old CPU, by a cross-call that runs with its interrupts off,
 *     whether the old identity is pending in its controller (the back
 *     end's "pending": on x86 the IRR): if so, resend it to the new CPU
 *     (not a wired, level-triggered input: its line stays asserted and
 *     the IO-APIC sends it again); then, still there, replace the old
 *     slot by a "moved" placeholder so the pending copy is acknowledged
 *     without a handler;
 *  4. only then return the old vector to the allocator.
 * Interrupts that arrive on the old vector between 1 and 3 are handled on
 * the old CPU by the still-published old slot. Every interrupt therefore
 * reaches exactly one handler call.
 */
#include <umsi/internal/bitops.h>
#include <umsi/internal/core.h>
#include <umsi/internal/hostcall.h>

#include "migrate.h"

static bool bit(const uint64_t *w, uint32_t cpu)
{
	return umsi_bit_test(w, cpu);
}

/*
 * One move: of one IRQ, or of a multi-message MSI block (@n descriptors
 * whose vectors are @n consecutive ones from the base; the device ORs the
 * message number into the data, so the block moves as one message).
 */
struct move {
	struct umsi_system *sys;
	struct umsi_irq_desc *d;            /* the IRQ, or the block leader */
	struct umsi_irq_desc *member[32];   /* [i]: vector base + i */
	uint32_t n;
	uint32_t old_cpu, new_cpu;
	uint32_t old_vec, new_vec;          /* bases */
	bool temp;              /* new_vec.. also held on old_cpu */
	uint32_t resent;        /* vectors whose pending copy went to new_cpu */
	bool pending;           /* the old CPU still had one pending */
};

/*
 * Runs on the old CPU with interrupts disabled. The first time it finds
 * an old vector pending, it resends the interrupt to the new target and
 * leaves a "moved" placeholder, so the stale copy is acknowledged without
 * a handler once interrupts are back on. The caller repeats the call
 * until nothing is pending: only then may the vectors go back to the
 * allocator, or the stale copy could reach the vector's next owner.
 */
static void move_cleanup_on_old_cpu(void *arg)
{
	struct move *mv = arg;
	struct umsi_system *sys = mv->sys;
	const struct umsi_ctl *ctl = sys->env.ctl;
	uint32_t i;

	mv->pending = false;
	for (i = 0; i < mv->n; i++) {
		bool pending = ctl->pending(sys, mv->old_vec + i);

		if (mv->temp)
			pending |= ctl->pending(sys, mv->new_vec + i);
		atomic_store(&umsi_slot(sys, mv->old_cpu, mv->old_vec + i)->d,
			     &sys->moved);
		if (mv->temp)
			atomic_store(&umsi_slot(sys, mv->old_cpu,
						mv->new_vec + i)->d,
				     &sys->moved);
		/*
		 * A wired (level-triggered) input is not resent: its line
		 * stays asserted until the device is served, and the IO-APIC
		 * sends it again at the new target once the stale copy's EOI
		 * (or the re-aimed entry) clears Remote IRR. A resend would
		 * be an edge IPI of a vector a level copy may also be pending
		 * on there: the CPU would then end it without telling the
		 * IO-APIC, whose Remote IRR would never clear.
		 */
		if (pending && !mv->d->chip->wired &&
		    !(mv->resent & (1u << i))) {
			ctl->resend(sys, mv->new_cpu, mv->new_vec + i);
			mv->resent |= 1u << i;
		}
		mv->pending |= pending;
	}
}

/* @n vectors from @base on @cpu, all or nothing. [lock] */
static bool take_run(struct umsi_system *sys, uint32_t cpu, uint32_t base,
		     uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++) {
		if (umsi_matrix_alloc_at(sys->matrix, cpu, base + i)) {
			while (i--)
				umsi_matrix_free(sys->matrix, cpu, base + i,
						 false);
			return false;
		}
	}
	return true;
}

static void give_run(struct umsi_system *sys, uint32_t cpu, uint32_t base,
		     uint32_t n, bool managed)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		umsi_matrix_free(sys->matrix, cpu, base + i, managed);
}

/* New vector(s) for @mv in @mask, any way the allocator likes. [lock] */
static int pick_any(struct umsi_system *sys, struct move *mv,
		    const struct umsi_cpumask *mask)
{
	uint32_t order = umsi_order_of(mv->n);
	int v;

	if (mv->n > 1)
		v = umsi_matrix_alloc_block(sys->matrix, mask, order,
					    &mv->new_cpu);
	else if (mv->d->managed)
		v = umsi_matrix_alloc_managed(sys->matrix, mask, &mv->new_cpu);
	else
		v = umsi_matrix_alloc(sys->matrix, mask, sys->alloc_flags,
				      &mv->new_cpu);
	if (v < 0)
		return v;
	mv->new_vec = (uint32_t)v;
	return 0;
}

/*
 * For a source that cannot be masked, find vector(s) on the new CPU that
 * are the old numbers, or that can also be held on the old CPU: the
 * message is written data first, so for a moment the device sends the
 * new vector(s) to the old CPU. [lock]
 */
static int pick_unmaskable(struct umsi_system *sys, struct move *mv,
			   const struct umsi_cpumask *mask)
{
	bool managed = mv->d->managed;
	uint32_t cpu, w;
	int ret = pick_any(sys, mv, mask);

	if (ret)
		return ret;
	cpu = mv->new_cpu;
	if (cpu == mv->old_cpu || mv->new_vec == mv->old_vec)
		return 0;
	if (take_run(sys, mv->old_cpu, mv->new_vec, mv->n)) {
		mv->temp = true;
		return 0;
	}
	give_run(sys, cpu, mv->new_vec, mv->n, managed);
	/* A managed vector comes from its reservation: no other choice. */
	if (managed)
		return -UMSI_ENOSPC;
	if (take_run(sys, cpu, mv->old_vec, mv->n)) {
		mv->new_vec = mv->old_vec;
		return 0;
	}
	for (w = 0; w + mv->n <= sys->nids; w += mv->n) {
		if (!take_run(sys, cpu, w, mv->n))
			continue;
		if (take_run(sys, mv->old_cpu, w, mv->n)) {
			mv->new_vec = w;
			mv->temp = true;
			return 0;
		}
		give_run(sys, cpu, w, mv->n, false);
	}
	return -UMSI_ENOSPC;
}

static void unpick(struct umsi_system *sys, struct move *mv)
{
	give_run(sys, mv->new_cpu, mv->new_vec, mv->n, mv->d->managed);
	if (mv->temp)
		give_run(sys, mv->old_cpu, mv->new_vec, mv->n, false);
}

/* Publish (or clear, @on false) the new slots of every member. [lock] */
static void new_slots(struct umsi_system *sys, struct move *mv, bool on)
{
	uint32_t i;

	for (i = 0; i < mv->n; i++) {
		struct umsi_irq_desc *m = on ? mv->member[i] : NULL;

		atomic_store(&umsi_slot(sys, mv->new_cpu, mv->new_vec + i)->d,
			     m);
		if (mv->temp)
			atomic_store(&umsi_slot(sys, mv->old_cpu,
						mv->new_vec + i)->d, m);
	}
}

/*
 * A retarget failed and so did putting the source back: record each
 * member's new slot (and the temporary one on the old CPU) as its strays.
 * [no lock]
 */
static void keep_strays(struct umsi_system *sys, struct move *mv)
{
	umsi_irqflags_t fl = umsi_lock(sys);
	uint32_t i;

	for (i = 0; i < mv->n; i++) {
		/* Made before the move (umsi_irq_hist_reserve). */
		struct umsi_irq_cold *c = umsi_desc_cold_of(mv->member[i]);

		c->strays[c->nstrays].cpu = mv->new_cpu;
		c->strays[c->nstrays].vector = mv->new_vec + i;
		c->strays[c->nstrays++].managed = mv->member[i]->managed;
		if (mv->temp) {
			c->strays[c->nstrays].cpu = mv->old_cpu;
			c->strays[c->nstrays].vector = mv->new_vec + i;
			c->strays[c->nstrays++].managed = false;
		}
	}
	umsi_unlock(sys, fl);
	umsi_log(sys, UMSI_LOG_ERROR, "irq %u: retarget failed and the old "
		 "target could not be restored; vectors 0x%x (cpu %u) and "
		 "0x%x (cpu %u) stay reserved for it and it no longer moves",
		 mv->d->irq, mv->old_vec, mv->old_cpu, mv->new_vec,
		 mv->new_cpu);
}

/* Fold the counts of the slots (@cpu, @base..) into the members. */
static void fold(struct umsi_system *sys, struct move *mv, uint32_t cpu,
		 uint32_t base)
{
	uint32_t i;

	for (i = 0; i < mv->n; i++)
		umsi_irq_hist_fold(sys, mv->member[i], cpu, base + i);
}

/*
 * A move in place (umsi_irq_move): after the retarget, ask the old CPU
 * (interrupts off) whether it still holds one of the identities pending.
 * The command moved the pending state with the IRQ (GICv3 MOVI does), so
 * it should not; a copy it does hold it takes itself once its interrupts
 * are on again, through the same slot (the identity is the same on every
 * CPU): it is handled once, there. The caller asks until none is left.
 */
static void global_cleanup_on_old_cpu(void *arg)
{
	struct move *mv = arg;
	struct umsi_system *sys = mv->sys;
	uint32_t i;

	mv->pending = false;
	for (i = 0; i < mv->n; i++)
		mv->pending |= sys->env.ctl->pending(sys, mv->d->vector + i);
}

/*
 * Whether @d keeps its identity, and with it its slot, wherever it goes:
 * the back end's domain gives the same identity for another local one,
 * and another CPU's slot for it is the same slot (one shared table).
 */
static bool moves_in_place(struct umsi_system *sys,
			   const struct umsi_irq_desc *d)
{
	uint32_t other = (d->cpu + 1) % sys->ncpus, id = d->vector;

	return sys->env.ctl->domain->move_id(id, d->local + 1) == id &&
	       umsi_slot(sys, other, id) == umsi_slot(sys, d->cpu, id);
}

/*
 * Move @d (an IRQ, or the leader of an MSI block, which moves whole) to a
 * CPU of @mask (already limited to reachable CPUs), in the steps at the
 * top of this file. Its identities either change with the CPU (each CPU
 * its own: new slots are published first and the old ones cleaned up on
 * the old CPU) or stay, with their slot, which every CPU shares ("in
 * place": only the controller's target and the allocator's balance move,
 * and a copy pending on the old CPU is taken there, through the same
 * slot). Caller owns d->busy. Returns 0 or a negative code; on failure @d
 * is unchanged, or, when even restoring the old target failed, keeps the
 * new slots as strays (-UMSI_EIO from then on).
 */
int umsi_irq_move(struct umsi_system *sys, struct umsi_irq_desc *d,
		  const struct umsi_cpumask *mask)
{
	struct move mv = { .sys = sys, .d = d, .n = 1 };
	umsi_irqflags_t fl;
	uint32_t i, old_local = d->local, new_id;
	bool in_place;
	int ret;

	if (umsi_block_leader(d))
		mv.n = 1u << d->cold->block_order;
	/* The counts of the slots it leaves go to its history. */
	fl = umsi_lock(sys);
	mv.old_cpu = d->cpu;
	mv.old_vec = d->vector;
	in_place = moves_in_place(sys, d);
	for (i = 0; i < mv.n; i++) {
		mv.member[i] = i ? atomic_load(&umsi_slot(sys, mv.old_cpu,
							   mv.old_vec + i)->d) : d;
		if (!mv.member[i] || mv.member[i] == &sys->moved ||
		    (!in_place && umsi_desc_nstrays(mv.member[i]))) {
			umsi_unlock(sys, fl);
			return -UMSI_EIO;
		}
	}
	umsi_unlock(sys, fl);
	for (i = 0; i < mv.n; i++) {
		ret = umsi_irq_hist_reserve(sys, mv.member[i], 2);
		if (ret)
			return ret;
	}
	fl = umsi_lock(sys);
	/* A message that changes, and a source that cannot be masked: the
	 * new identities must work on both CPUs for a moment. */
	ret = in_place || d->chip->mask ? pick_any(sys, &mv, mask) :
	      pick_unmaskable(sys, &mv, mask);
	if (ret) {
		umsi_unlock(sys, fl);
		return ret;
	}
	new_id = in_place ? mv.old_vec : mv.new_vec;
	/* Step 1: the new slots (and the shared ones on the old CPU) live. */
	if (!in_place)
		new_slots(sys, &mv, true);
	umsi_unlock(sys, fl);

	/* Step 2: retarget (a block: its one message or target). */
	ret = in_place && mv.new_cpu == mv.old_cpu ? 0 :
	      umsi_irq_retarget(sys, d, mv.new_cpu, new_id);
	if (in_place && (ret || mv.new_cpu == mv.old_cpu)) {
		/*
		 * Wherever a failed command left it, the identity's slot is
		 * this IRQ's on every CPU: nothing is lost, only the balance.
		 */
		if (ret && umsi_irq_retarget(sys, d, mv.old_cpu, mv.old_vec))
			umsi_log(sys, UMSI_LOG_WARN, "irq %u: the controller "
				 "may deliver it on cpu %u or cpu %u", d->irq,
				 mv.old_cpu, mv.new_cpu);
		fl = umsi_lock(sys);
		give_run(sys, mv.new_cpu, mv.new_vec, mv.n, d->managed);
		umsi_unlock(sys, fl);
		return ret;
	}
	if (ret && umsi_irq_retarget(sys, d, mv.old_cpu, mv.old_vec)) {
		/*
		 * Neither the new nor the old message is known to be in the
		 * device: it may send to either slot. Keep both, published
		 * to this IRQ, until it is released; it moves no more.
		 */
		keep_strays(sys, &mv);
		return ret;
	}
	if (ret) {
		/* The source is back where it was: drop the new slots. */
		fl = umsi_lock(sys);
		new_slots(sys, &mv, false);
		umsi_unlock(sys, fl);
		umsi_irq_sync(sys);
		fold(sys, &mv, mv.new_cpu, mv.new_vec);
		if (mv.temp)
			fold(sys, &mv, mv.old_cpu, mv.new_vec);
		fl = umsi_lock(sys);
		unpick(sys, &mv);
		umsi_unlock(sys, fl);
		return ret;
	}
	/* In place, what it took so far it took on the old CPU. */
	if (in_place)
		fold(sys, &mv, mv.old_cpu, mv.old_vec);
	fl = umsi_lock(sys);
	for (i = 0; i < mv.n; i++) {
		mv.member[i]->cpu = mv.new_cpu;
		mv.member[i]->vector = new_id + i;
		mv.member[i]->local = mv.new_vec + i;
	}
	umsi_unlock(sys, fl);

	/*
	 * Step 3: the old CPU checks what is pending (and, when the slots
	 * changed, gives up the old ones); it is asked again until a copy it
	 * had pending was taken.
	 */
	for (int tries = 0; ; tries++) {
		if (umsi_host_run_on_cpu(sys, mv.old_cpu, in_place ?
					 global_cleanup_on_old_cpu :
					 move_cleanup_on_old_cpu, &mv)) {
			umsi_log(sys, UMSI_LOG_WARN, "irq %u: cpu %u did not "
				 "answer the migration cross-call; an "
				 "interrupt pending there may be lost",
				 d->irq, mv.old_cpu);
			for (i = 0; !in_place && i < mv.n; i++) {
				atomic_store(&umsi_slot(sys, mv.old_cpu,
							mv.old_vec + i)->d,
					     &sys->moved);
				if (mv.temp)
					atomic_store(&umsi_slot(sys, mv.old_cpu,
								mv.new_vec + i)->d,
						     &sys->moved);
			}
			/* Its counts are final only when nobody dispatches. */
			umsi_irq_sync(sys);
			break;
		}
		if (!mv.pending)
			break;
		if (tries == 1000) {
			umsi_log(sys, UMSI_LOG_WARN, "irq %u: identity 0x%x "
				 "stays pending on cpu %u", d->irq, mv.old_vec,
				 mv.old_cpu);
			break;
		}
	}

	/* Step 4: the old identities go back, their counts kept. */
	if (!in_place) {
		fold(sys, &mv, mv.old_cpu, mv.old_vec);
		if (mv.temp)
			fold(sys, &mv, mv.old_cpu, mv.new_vec);
	}
	fl = umsi_lock(sys);
	give_run(sys, mv.old_cpu, in_place ? old_local : mv.old_vec, mv.n,
		 d->managed);
	if (mv.temp)
		give_run(sys, mv.old_cpu, mv.new_vec, mv.n, false);
	umsi_unlock(sys, fl);
	return 0;
}

/* Whose affinity @d follows: its own, or its MSI block leader's. */
static const struct umsi_irq_desc *aff_of(const struct umsi_irq_desc *d)
{
	const struct umsi_irq_desc *lead = umsi_block_leader(d);

	return lead ? lead : d;
}

/* The CPUs @d's source can name. */
const uint64_t *umsi_irq_reach(struct umsi_system *sys,
				const struct umsi_irq_desc *d)
{
	return d->chip->wired ? sys->wired_reachable : sys->reachable;
}

/*
 * @out = @in (NULL: @d's affinity) & what @d can reach & online; returns
 * the number of CPUs left.
 */
uint32_t umsi_irq_usable_mask(struct umsi_system *sys,
			    const struct umsi_irq_desc *d, const uint64_t *in,
			    uint32_t nbits, uint64_t *out, uint32_t skip_cpu)
{
	const uint64_t *reach = umsi_irq_reach(sys, d);
	uint32_t cpu, n = 0;

	umsi_memset(out, 0, umsi_sys_mask_bytes(sys));
	for (cpu = 0; cpu < sys->ncpus && cpu < nbits; cpu++) {
		if ((in ? !bit(in, cpu) : !umsi_aff_test(sys, aff_of(d), cpu)) ||
		    cpu == skip_cpu || !sys->cpus[cpu].online ||
		    !bit(reach, cpu))
			continue;
		umsi_bit_set(out, cpu);
		n++;
	}
	return n;
}

bool umsi_irq_claim(struct umsi_irq_desc *d)
{
	bool expect = false;

	return atomic_compare_exchange_strong(&d->busy, &expect, true);
}

static int do_irq_set_affinity(struct umsi_system *sys, uint32_t irq,
			       const struct umsi_cpumask *mask)
{
	struct umsi_irq_desc *d = umsi_irq_to_desc(sys, irq);
	struct umsi_cpumask m;
	uint64_t *words;
	uint32_t cpu;
	int ret = 0;

	if (!d || umsi_irq_dead(d))
		return -UMSI_ENOENT;
	if (!mask || !mask->words)
		return -UMSI_EINVAL;
	/* A multi-message MSI block moves as a whole, by its leader. */
	if (umsi_block_leader(d))
		d = umsi_block_leader(d);
	if (d->managed)
		return -UMSI_EPERM;     /* managed affinity is fixed */
	if (!umsi_irq_claim(d))
		return -UMSI_EAGAIN;
	words = umsi_zalloc(sys, umsi_sys_mask_bytes(sys));
	if (!words) {
		ret = -UMSI_ENOMEM;
		goto out;
	}
	/*
	 * Whatever the new mask, recording it must not fail after the IRQ
	 * has moved: hold the affinity as words from here (same CPUs).
	 */
	if (!d->aff_words) {
		uint64_t *w = umsi_zalloc(sys, umsi_sys_mask_bytes(sys));

		if (!w) {
			ret = -UMSI_ENOMEM;
			goto out;
		}
		umsi_aff_words(sys, d, w);
		d->aff_words = w;
	}
	if (!umsi_irq_usable_mask(sys, d, mask->words, mask->nbits, words,
			 UINT32_MAX)) {
		ret = -UMSI_EINVAL;
		goto out;
	}
	m.words = words;
	m.nbits = sys->ncpus;
	cpu = d->cpu;
	if (!bit(words, cpu) || d->shutdown)
		ret = umsi_irq_move(sys, d, &m);
	/* The IRQ moved (or need not): the new affinity is recorded. */
	if (!ret)
		ret = umsi_aff_set(sys, d, mask);
out:
	umsi_free(sys, words, umsi_sys_mask_bytes(sys));
	atomic_store(&d->busy, false);
	return ret;
}

/* A reader of the IRQ table: descriptors stay until it returns. */
int umsi_irq_set_affinity(struct umsi_system *sys, uint32_t irq,
			  const struct umsi_cpumask *mask)
{
	unsigned e = umsi_rd_begin(sys);
	int ret = do_irq_set_affinity(sys, irq, mask);

	umsi_rd_end(sys, e);
	return ret;
}

/*
 * CPUs of vector @i of @n when spreading (managed MSI-X): an even share of
 * the CPUs a message can reach, or one CPU each (round robin) when there
 * are more vectors, in @words (the system's mask size).
 */
void umsi_irq_spread_mask(struct umsi_system *sys, uint32_t i, uint32_t n,
			  uint64_t *words)
{
	uint32_t first, last, cpu, r = 0, k = 0;

	/* Spread over the CPUs a message can reach; others never qualify. */
	for (cpu = 0; cpu < sys->ncpus; cpu++)
		r += sys->cpus[cpu].reachable;
	umsi_memset(words, 0, umsi_sys_mask_bytes(sys));
	if (!r)
		return;
	if (n >= r) {
		first = i % r;
		last = first + 1;
	} else {
		first = (uint32_t)((uint64_t)i * r / n);
		last = (uint32_t)((uint64_t)(i + 1) * r / n);
	}
	for (cpu = 0; cpu < sys->ncpus; cpu++) {
		if (!sys->cpus[cpu].reachable)
			continue;
		if (k >= first && k < last)
			words[cpu / 64] |= 1ull << (cpu % 64);
		k++;
	}
}
