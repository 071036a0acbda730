/* SPDX-License-Identifier: MIT */
/*
 * IRQ descriptors: creation with vectors, publication in the vector tables,
 * handler attachment, masking, and tear-down.
 *
 * A descriptor is created with its IRQ number and vectors reserved but
 * unpublished; the layer that owns its source binds it (chip_data),
 * publishes it with umsi_irq_publish() (still claimed: set-up goes on)
 * and lets go of it with umsi_irq_activate(). Only once published do
 * dispatch and the walkers (umsi_irq_next, affinity, CPU offline) see it,
 * so none can meet a descriptor without its chip data. It becomes visible
 * by release stores into the IRQ table and the vector table of its CPU.
 * It goes away in three steps:
 * unpublish (store NULL), wait until every CPU that might have loaded the
 * old pointer has left umsi_dispatch() (umsi_irq_sync), then free. That is
 * RCU in miniature, and it is why dispatch never takes a lock.
 */
#include <umsi/internal/bitops.h>
#include <umsi/internal/compiler.h>
#include <umsi/internal/core.h>
#include <umsi/internal/hostcall.h>

static bool mask_test(const uint64_t *w, uint32_t cpu)
{
	return umsi_bit_test(w, cpu);
}

struct umsi_irq_desc *umsi_irq_to_desc(struct umsi_system *sys, uint32_t irq)
{
	struct umsi_irq_desc *d;

	if (irq >= sys->max_irqs)
		return NULL;
	d = atomic_load_explicit(&sys->irqs[irq], memory_order_acquire);
	return d;
}

/*
 * Wait until no CPU is inside a dispatch that began before this call.
 * A CPU's dispatch_seq is odd while it dispatches; seeing it even, or
 * changed, proves that CPU has left any dispatch that could have loaded a
 * pointer we have since unpublished. Our own CPU is skipped: a handler
 * freeing its own IRQ would wait for itself forever (it is documented as
 * forbidden, and logged).
 */
void umsi_irq_sync(struct umsi_system *sys)
{
	uint32_t self = umsi_host_current_cpu(sys);
	uint32_t cpu;

	atomic_thread_fence(memory_order_seq_cst);
	for (cpu = 0; cpu < sys->ncpus; cpu++) {
		atomic_uint *seq = &sys->cpus[cpu].dispatch_seq;
		unsigned s = atomic_load(seq);

		if (!(s & 1))
			continue;
		if (cpu == self) {
			umsi_log(sys, UMSI_LOG_ERROR, "irq teardown from an "
				 "interrupt handler on cpu %u", cpu);
			continue;
		}
		while (atomic_load(seq) == s)
			;
	}
}

void umsi_rd_sync(struct umsi_system *sys)
{
	unsigned e;

	/* One at a time: each waits for the parity it retired. */
	while (atomic_flag_test_and_set(&sys->rd_syncing))
		;
	e = atomic_fetch_add(&sys->rd_epoch, 1);
	while (atomic_load(&sys->rd_count[e & 1]))
		;
	atomic_flag_clear(&sys->rd_syncing);
}

static void desc_free_mem(struct umsi_system *sys, struct umsi_irq_desc *d)
{
	struct umsi_irq_action *a = umsi_desc_actions(d);
	struct umsi_irq_cold *c = umsi_desc_cold_of(d);

	while (a) {
		struct umsi_irq_action *next = atomic_load(&a->next);

		umsi_free(sys, a, umsi_action_size(a));
		a = next;
	}
	umsi_free(sys, d->aff_words, umsi_sys_mask_bytes(sys));
	if (c) {
		umsi_free(sys, c->hist, c->hist_cap * sizeof(*c->hist));
		umsi_free(sys, c, sizeof(*c));
	}
	umsi_free(sys, d, sizeof(*d));
}

int umsi_desc_cold(struct umsi_system *sys, struct umsi_irq_desc *d)
{
	struct umsi_irq_cold *c;

	if (umsi_desc_cold_of(d))
		return 0;
	c = umsi_zalloc(sys, sizeof(*c));
	if (!c)
		return -UMSI_ENOMEM;
	/* Walkers may look (statistics): they see it whole or not at all. */
	atomic_store_explicit(&d->cold, c, memory_order_release);
	return 0;
}

/* Issue 30's budget: 128 bytes an IRQ; what only some need is cold. */
_Static_assert(sizeof(void *) != 8 || sizeof(struct umsi_irq_desc) <= 128,
	       "struct umsi_irq_desc outgrew 128 bytes");

static struct umsi_irq_desc *desc_new(struct umsi_system *sys,
				      const struct umsi_irq_chip *chip)
{
	struct umsi_irq_desc *d = umsi_zalloc(sys, sizeof(*d));

	if (!d)
		return NULL;
	d->chip = chip;
	d->source_id = UMSI_NO_SOURCE;
	d->aff_count = sys->ncpus;
	atomic_init(&d->gate, 1);
	return d;
}

/* ---- affinity ------------------------------------------------------------ */

bool umsi_aff_test(const struct umsi_system *sys, const struct umsi_irq_desc *d,
		   uint32_t cpu)
{
	if (cpu >= sys->ncpus)
		return false;
	if (d->aff_words)
		return mask_test(d->aff_words, cpu);
	return cpu - d->aff_first < d->aff_count;
}

void umsi_aff_words(const struct umsi_system *sys,
		    const struct umsi_irq_desc *d, uint64_t *out)
{
	uint32_t cpu;

	if (d->aff_words) {
		umsi_memcpy(out, d->aff_words, umsi_sys_mask_bytes(sys));
		return;
	}
	umsi_memset(out, 0, umsi_sys_mask_bytes(sys));
	for (cpu = d->aff_first; cpu < d->aff_first + d->aff_count; cpu++)
		out[cpu / 64] |= 1ull << (cpu % 64);
}

int umsi_aff_set(struct umsi_system *sys, struct umsi_irq_desc *d,
		 const struct umsi_cpumask *m)
{
	uint32_t cpu, first = UINT32_MAX, last = 0, n = 0;
	uint64_t *w;

	/* First, last and how many, a word at a time. */
	for (cpu = 0; m && cpu < sys->ncpus && cpu < m->nbits; cpu += 64) {
		uint64_t bits = m->words[cpu / 64];
		uint32_t top = sys->ncpus < m->nbits ? sys->ncpus : m->nbits;

		if (top - cpu < 64)
			bits &= (1ull << (top - cpu)) - 1;
		if (!bits)
			continue;
		if (first == UINT32_MAX)
			first = cpu + umsi_ctz64(bits);
		last = cpu + umsi_fls64(bits);
		n += umsi_popcount64(bits);
	}
	/* Every CPU, or a range: no words. */
	if (!m || (n && last - first + 1 == n) || !n) {
		umsi_free(sys, d->aff_words, umsi_sys_mask_bytes(sys));
		d->aff_words = NULL;
		d->aff_first = !m ? 0 : n ? first : 0;
		d->aff_count = !m ? sys->ncpus : n;
		return 0;
	}
	w = d->aff_words;
	if (!w) {
		w = umsi_zalloc(sys, umsi_sys_mask_bytes(sys));
		if (!w)
			return -UMSI_ENOMEM;
	}
	umsi_memset(w, 0, umsi_sys_mask_bytes(sys));
	for (cpu = first; cpu <= last; cpu++)
		if (mask_test(m->words, cpu))
			w[cpu / 64] |= 1ull << (cpu % 64);
	d->aff_words = w;
	return 0;
}

/* ---- counts --------------------------------------------------------------- */

int umsi_irq_hist_reserve(struct umsi_system *sys, struct umsi_irq_desc *d,
			  uint32_t n)
{
	struct umsi_irq_cold *c;
	struct umsi_irq_hist *h;
	uint32_t cap;
	int ret = umsi_desc_cold(sys, d);

	if (ret)
		return ret;
	c = umsi_desc_cold_of(d);
	if (c->nhist + n <= c->hist_cap)
		return 0;
	cap = c->hist_cap ? c->hist_cap * 2 : 2;
	while (cap < c->nhist + n)
		cap *= 2;
	h = umsi_zalloc(sys, cap * sizeof(*h));
	if (!h)
		return -UMSI_ENOMEM;
	if (c->nhist)
		umsi_memcpy(h, c->hist, c->nhist * sizeof(*h));
	/* Readers of statistics may be looking: they tolerate staleness. */
	umsi_free(sys, c->hist, c->hist_cap * sizeof(*h));
	c->hist = h;
	c->hist_cap = cap;
	return 0;
}

void umsi_irq_hist_fold(struct umsi_system *sys, struct umsi_irq_desc *d,
			uint32_t cpu, uint32_t vector)
{
	uint64_t n = atomic_exchange(&sys->cpus[cpu].slot[vector].count, 0);
	struct umsi_irq_cold *c = umsi_desc_cold_of(d);
	uint32_t i;

	if (!n || !c)
		return;
	for (i = 0; i < c->nhist && c->hist[i].cpu != cpu; i++)
		;
	if (i == c->nhist) {
		/* Reserved beforehand; if not, the oldest entry takes it. */
		if (c->nhist == c->hist_cap) {
			if (!c->nhist)
				return;
			i = 0;
		} else {
			c->hist[c->nhist].cpu = cpu;
			c->hist[c->nhist++].count = 0;
		}
	}
	c->hist[i].count += n;
}

/*
 * Find @n free IRQ numbers, the lowest from the first dynamic one up;
 * all-or-nothing: nothing is taken until the caller marks them (take_numbers).
 * O(n log N). [lock]
 */
static int irq_numbers(struct umsi_system *sys, struct umsi_irq_desc **ds,
		       uint32_t n)
{
	uint32_t irq = sys->first_dynamic_irq, got;

	for (got = 0; got < n; got++, irq++) {
		irq = umsi_idmap_next_free(&sys->irq_ids, irq);
		if (irq == UINT32_MAX)
			return -UMSI_ENOSPC;
		ds[got]->irq = irq;
	}
	return 0;
}

/*
 * The CPUs an IRQ may use: its affinity, limited to CPUs a message can
 * reach. Writes into @out (mask_words long); returns the mask to hand to
 * the allocator, which is NULL ("every online CPU") in the common case.
 */
static const struct umsi_cpumask *
effective_mask(struct umsi_system *sys, const struct umsi_irq_chip *chip,
	       const struct umsi_cpumask *aff, uint64_t *out,
	       struct umsi_cpumask *m, bool explicit)
{
	const uint64_t *reach = chip->wired ? sys->wired_reachable :
				sys->reachable;
	bool all = chip->wired ? sys->all_wired_reachable :
		   sys->all_reachable;
	uint32_t w;

	if (!aff && all && !explicit)
		return NULL;
	/* No affinity: the reachable CPUs, as they are (no copy). */
	if (!aff) {
		m->words = (uint64_t *)reach;
		m->nbits = sys->ncpus;
		return m;
	}
	for (w = 0; w < sys->mask_words; w++) {
		uint64_t bits = ~0ull;

		if (aff) {
			bits = w < UMSI_CPUMASK_WORDS(aff->nbits) ?
			       aff->words[w] : 0;
			if (w == aff->nbits / 64 && aff->nbits % 64)
				bits &= (1ull << (aff->nbits % 64)) - 1;
		}
		out[w] = bits & reach[w];
	}
	m->words = out;
	m->nbits = sys->ncpus;
	return m;
}

/* Give back the identities of @d (an MSI block: by its leader). */
static void give_ids(struct umsi_system *sys, struct umsi_irq_desc *d)
{
	sys->env.ctl->domain->give(sys, d->vector, umsi_block_leader(d) ?
				   1u << d->cold->block_order : 1);
}

#ifdef UMSI_ASSERT_HOOK
/*
 * For UMSI_ASSERT: @d's slot is free for it (empty, its own, or the mark
 * a move leaves for late copies).
 */
static bool slot_free_for(struct umsi_system *sys,
			  const struct umsi_irq_desc *d)
{
	struct umsi_irq_desc *was = atomic_load_explicit(
		&umsi_slot(sys, d->cpu, d->vector)->d, memory_order_relaxed);

	return !was || was == d || was == &sys->moved;
}
#endif

/* Publish a bound descriptor, claimed by the caller (busy). [lock] */
static void publish(struct umsi_system *sys, struct umsi_irq_desc *d)
{
	UMSI_ASSERT(atomic_load(&d->busy));
	UMSI_ASSERT(slot_free_for(sys, d));
	atomic_store_explicit(&umsi_slot(sys, d->cpu, d->vector)->d, d,
			      memory_order_release);
	atomic_store_explicit(&sys->irqs[d->irq], d, memory_order_release);
}

int umsi_irq_alloc(struct umsi_system *sys, const struct umsi_irq_chip *chip,
		   uint32_t nvec, bool block, const struct umsi_cpumask *affinity,
		   bool managed, struct umsi_irq_desc **out)
{
	const struct umsi_ctl_domain *dom = sys->env.ctl->domain;
	struct umsi_cpumask mbuf;
	const struct umsi_cpumask *mask;
	uint64_t *words;
	umsi_irqflags_t fl;
	uint32_t i, done = 0, cpu = 0, order = 0, id;
	int ret = -UMSI_ENOMEM, v;
	uint32_t reserved = 0;
	bool split = false;

	if (!nvec || (block && (nvec > 32 || managed)))
		return -UMSI_EINVAL;
	if (block)
		order = umsi_order_of(nvec);
	/* Messages the domain makes targets of their own: IRQs of their own. */
	if (block && dom->block_targets(1u << order) > 1) {
		if (nvec != 1u << order)
			return -UMSI_EINVAL;
		split = true;
		block = false;
	}
	/* A mask to build only when the allocator cannot take "any CPU". */
	words = NULL;
	if (affinity) {
		words = umsi_zalloc(sys, umsi_sys_mask_bytes(sys));
		if (!words)
			return -UMSI_ENOMEM;
	}
	for (i = 0; i < nvec; i++) {
		out[i] = desc_new(sys, chip);
		if (!out[i])
			goto free_mem;
		if (umsi_aff_set(sys, out[i], affinity) ||
		    ((block || split) && umsi_desc_cold(sys, out[i]))) {
			i++;
			goto free_mem;
		}
		out[i]->managed = managed;
	}
	/* Managed reservations need the CPU set spelled out. */
	mask = effective_mask(sys, chip, affinity, words, &mbuf, managed);

	fl = umsi_lock(sys);
	ret = irq_numbers(sys, out, nvec);
	if (ret)
		goto unlock;
	/* One managed reservation per IRQ, on every CPU of its mask. */
	for (; managed && reserved < nvec; reserved++) {
		ret = umsi_matrix_reserve_managed(sys->matrix, mask);
		if (ret)
			goto unlock;
	}
	if (block) {
		v = umsi_matrix_alloc_block(sys->matrix, mask, order, &cpu);
		if (v < 0) {
			ret = v;
			goto unlock;
		}
		for (i = 0; i < nvec; i++) {
			out[i]->cpu = cpu;
			out[i]->local = (uint32_t)v + i;
			out[i]->cold->block_leader = out[0];
		}
		out[0]->cold->block_order = (uint8_t)order;
		done = nvec;
		ret = dom->take(sys, (uint32_t)v, 1u << order, 1u << order,
				&id);
		for (i = 0; !ret && i < nvec; i++)
			out[i]->vector = id + i;
		if (ret) {
			umsi_matrix_free_block(sys->matrix, cpu, (uint32_t)v,
					       order);
			goto unlock;
		}
	} else {
		for (; done < nvec; done++) {
			v = managed ?
			    umsi_matrix_alloc_managed(sys->matrix, mask, &cpu) :
			    umsi_matrix_alloc(sys->matrix, mask, sys->alloc_flags, &cpu);
			if (v < 0) {
				ret = v;
				goto unwind;
			}
			ret = dom->take(sys, (uint32_t)v, 1, 1, &id);
			if (ret) {
				umsi_matrix_free(sys->matrix, cpu, (uint32_t)v,
						 managed);
				goto unwind;
			}
			out[done]->cpu = cpu;
			out[done]->local = (uint32_t)v;
			out[done]->vector = id;
		}
	}
	for (i = 0; split && i < nvec; i++)
		out[i]->cold->group_leader = out[0];
	if (split)
		out[0]->cold->group_order = (uint8_t)order;
	/* The numbers are theirs; publication waits for umsi_irq_publish. */
	for (i = 0; i < nvec; i++) {
		umsi_idmap_set(&sys->irq_ids, out[i]->irq);
		atomic_store(&out[i]->busy, true);
	}
	umsi_unlock(sys, fl);
	umsi_free(sys, words, umsi_sys_mask_bytes(sys));
	return 0;

unwind:
	while (done--) {
		dom->give(sys, out[done]->vector, 1);
		umsi_matrix_free(sys->matrix, out[done]->cpu, out[done]->local,
				 managed);
	}
unlock:
	while (reserved--)
		umsi_matrix_remove_managed(sys->matrix, mask);
	umsi_unlock(sys, fl);
	i = nvec;
free_mem:
	while (i--)
		desc_free_mem(sys, out[i]);
	umsi_free(sys, words, umsi_sys_mask_bytes(sys));
	return ret;
}

/*
 * The kernel's numbers instead of uMSI's: allocated as usual, then
 * renumbered before anyone can see them (nothing is published yet), so
 * umsi_irq_alloc() pays nothing for it.
 */
int umsi_irq_alloc_numbered(struct umsi_system *sys,
			    const struct umsi_irq_chip *chip, uint32_t nvec,
			    bool block, const struct umsi_cpumask *affinity,
			    bool managed, const uint32_t *irqs,
			    struct umsi_irq_desc **out)
{
	umsi_irqflags_t fl;
	uint32_t i, j;
	int ret;

	for (i = 0; irqs && i < nvec; i++) {
		if (irqs[i] >= sys->max_irqs)
			return -UMSI_EINVAL;
		for (j = 0; j < i; j++)
			if (irqs[j] == irqs[i])
				return -UMSI_EINVAL;
	}
	ret = umsi_irq_alloc(sys, chip, nvec, block, affinity, managed, out);
	if (ret || !irqs)
		return ret;
	fl = umsi_lock(sys);
	for (i = 0; i < nvec; i++)
		umsi_idmap_clear(&sys->irq_ids, out[i]->irq);
	for (i = 0; i < nvec && !umsi_idmap_test(&sys->irq_ids, irqs[i]); i++)
		;
	if (i < nvec) {
		for (i = 0; i < nvec; i++)
			umsi_idmap_set(&sys->irq_ids, out[i]->irq);
		ret = -UMSI_EBUSY;
	} else {
		for (i = 0; i < nvec; i++) {
			out[i]->irq = irqs[i];
			umsi_idmap_set(&sys->irq_ids, irqs[i]);
		}
	}
	umsi_unlock(sys, fl);
	if (ret)
		umsi_irq_release(sys, out, nvec);
	return ret;
}

int umsi_irq_alloc_at(struct umsi_system *sys, uint32_t irq,
		      const struct umsi_irq_chip *chip,
		      struct umsi_irq_desc **out)
{
	struct umsi_cpumask mbuf;
	const struct umsi_cpumask *mask;
	struct umsi_irq_desc *d;
	umsi_irqflags_t fl;
	uint32_t cpu, id = 0;
	int v, ret = 0;

	if (irq >= sys->max_irqs)
		return -UMSI_EINVAL;
	d = desc_new(sys, chip);
	if (!d)
		return -UMSI_ENOMEM;
	mask = effective_mask(sys, chip, NULL, NULL, &mbuf, false);
	d->irq = irq;
	fl = umsi_lock(sys);
	if (umsi_idmap_test(&sys->irq_ids, irq)) {
		ret = -UMSI_EBUSY;
	} else {
		v = umsi_matrix_alloc(sys->matrix, mask, sys->alloc_flags, &cpu);
		if (v >= 0) {
			ret = sys->env.ctl->domain->take(sys, (uint32_t)v, 1, 1,
							 &id);
			d->vector = id;
			if (ret)
				umsi_matrix_free(sys->matrix, cpu, (uint32_t)v,
						 false);
		}
		if (v < 0) {
			ret = v;
		} else if (!ret) {
			d->cpu = cpu;
			d->local = (uint32_t)v;
			umsi_idmap_set(&sys->irq_ids, irq);
			atomic_store(&d->busy, true);
		}
	}
	umsi_unlock(sys, fl);
	if (ret) {
		desc_free_mem(sys, d);
		return ret;
	}
	*out = d;
	return 0;
}

/* Return @d's vector(s) to the allocator. [lock] */
static void free_vectors(struct umsi_system *sys, struct umsi_irq_desc *d)
{
	struct umsi_cpumask m = { sys->scratch, sys->ncpus };
	int ret;

	if (umsi_block_leader(d) && umsi_block_leader(d) != d)
		return;         /* the leader frees the whole block */
	give_ids(sys, d);
	if (umsi_block_leader(d)) {
		ret = umsi_matrix_free_block(sys->matrix, d->cpu, d->local,
					     d->cold->block_order);
		UMSI_ASSERT(ret == 0);
		return;
	}
	/* The allocator took it back: it was allocated, and as this kind. */
	if (!d->shutdown) {
		ret = umsi_matrix_free(sys->matrix, d->cpu, d->local,
				       d->managed);
		UMSI_ASSERT(ret == 0);
	}
	(void)ret;
	if (d->managed) {
		uint64_t *w = sys->reachable;
		uint32_t i;

		/* The reservation was made on affinity & reachable. */
		umsi_aff_words(sys, d, sys->scratch);
		for (i = 0; i < sys->mask_words; i++)
			sys->scratch[i] &= w[i];
		umsi_matrix_remove_managed(sys->matrix, &m);
	}
}

/*
 * Clear @cpu's slot @vector if it still holds @d, and its counter with
 * it: the next owner of the vector starts from zero. The counter may take
 * one more increment from a dispatch still running; umsi_irq_release()
 * clears it again after the sync. [lock]
 */
static void clear_slot(struct umsi_system *sys, struct umsi_irq_desc *d,
		       uint32_t cpu, uint32_t vector)
{
	struct umsi_irq_desc *expect = d;
	struct umsi_vslot *slot = umsi_slot(sys, cpu, vector);

	if (atomic_compare_exchange_strong(&slot->d, &expect, NULL))
		atomic_store(&slot->count, 0);
}

/* Unlink @d from the quarantine list if it is there. [lock] */
static void unquarantine(struct umsi_system *sys, struct umsi_irq_desc *d)
{
	struct umsi_irq_desc **l;

	if (d->chip != &umsi_dead_chip)
		return;
	for (l = &sys->quarantine; *l && *l != d; l = &(*l)->next_dead)
		;
	if (*l)
		*l = d->next_dead;
}

static void unpublish(struct umsi_system *sys, struct umsi_irq_desc *d)
{
	struct umsi_irq_desc *expect = d;
	uint8_t i;

	/* Only clear a slot that is still ours (shutdown left it). */
	clear_slot(sys, d, d->cpu, d->vector);
	for (i = 0; i < umsi_desc_nstrays(d); i++)
		clear_slot(sys, d, d->cold->strays[i].cpu,
			   d->cold->strays[i].vector);
	/* The number is @d's from allocation on, published or not. */
	atomic_compare_exchange_strong(&sys->irqs[d->irq], &expect, NULL);
	umsi_idmap_clear(&sys->irq_ids, d->irq);
	unquarantine(sys, d);
}

/* Free the slots a failed retarget left behind. [lock] */
static void free_strays(struct umsi_system *sys, struct umsi_irq_desc *d)
{
	struct umsi_irq_cold *c = umsi_desc_cold_of(d);
	uint8_t i;

	if (!c)
		return;
	for (i = 0; i < c->nstrays; i++)
		umsi_matrix_free(sys->matrix, c->strays[i].cpu,
				 c->strays[i].vector, c->strays[i].managed);
	c->nstrays = 0;
}

/* What the back end is told of @d's source. */
static void ctl_irq(const struct umsi_irq_desc *d, struct umsi_ctl_irq *ci)
{
	struct umsi_irq_desc *g = umsi_group_leader(d);

	ci->irq = d->irq;
	ci->source_id = d->source_id;
	ci->source_events = d->source_events;
	ci->group_irq = g ? g->irq : d->irq;
	ci->group_count = g ? 1u << g->cold->group_order : 0;
	ci->index = d->hwirq;
	ci->count = umsi_block_leader(d) == d ? 1u << d->cold->block_order :
		    1;
	ci->wired = d->chip->wired;
}

void umsi_irq_release(struct umsi_system *sys, struct umsi_irq_desc **descs,
		      uint32_t n)
{
	umsi_irqflags_t fl;
	uint32_t i;

	/* No walker moves them from here on... */
	for (i = 0; i < n; i++)
		umsi_irq_take(descs[i]);
	fl = umsi_lock(sys);
	for (i = 0; i < n; i++)
		unpublish(sys, descs[i]);
	umsi_unlock(sys, fl);
	/* ...and none still holds a pointer, nor does any dispatch. */
	umsi_rd_sync(sys);
	umsi_irq_sync(sys);
	/*
	 * The back end lets go first (an ITS discards the events, and any
	 * copy pending with them): only then may the identities be another
	 * IRQ's.
	 */
	for (i = 0; i < n; i++) {
		if (descs[i]->composed && sys->env.ctl->release) {
			struct umsi_ctl_irq ci;

			ctl_irq(descs[i], &ci);
			sys->env.ctl->release(sys, &ci);
		}
	}
	fl = umsi_lock(sys);
	for (i = 0; i < n; i++) {
		struct umsi_irq_desc *d = descs[i];
		uint8_t k;

		/* No CPU dispatches them now: their counters end at zero. */
		if (!d->shutdown)
			atomic_store(&umsi_slot(sys, d->cpu, d->vector)->count,
				     0);
		for (k = 0; k < umsi_desc_nstrays(d); k++)
			atomic_store(&sys->cpus[d->cold->strays[k].cpu].slot[
				     d->cold->strays[k].vector].count, 0);
		free_vectors(sys, d);
		free_strays(sys, d);
	}
	umsi_unlock(sys, fl);
	for (i = 0; i < n; i++) {
		desc_free_mem(sys, descs[i]);
	}
}

void umsi_irq_publish(struct umsi_system *sys, struct umsi_irq_desc **descs,
		      uint32_t n)
{
	umsi_irqflags_t fl;
	uint32_t i;

	fl = umsi_lock(sys);
	for (i = 0; i < n; i++)
		publish(sys, descs[i]);
	umsi_unlock(sys, fl);
}

/* The message for (@cpu, @id) of @d, through the back end. */
static int compose(struct umsi_system *sys, struct umsi_irq_desc *d,
		   uint32_t cpu, uint32_t id, struct umsi_msg *msg)
{
	struct umsi_ctl_irq ci;
	int ret;

	ctl_irq(d, &ci);
	ret = sys->env.ctl->compose(sys, &ci, cpu, id, msg);

	if (ret > 0) {
		d->composed = true;
		ret = 0;
	}
	return ret;
}

uint32_t umsi_irq_max_block(struct umsi_system *sys)
{
	const struct umsi_ctl *ctl = sys->env.ctl;

	return ctl->max_block ? ctl->max_block(sys) : 32;
}

bool umsi_irq_grouped(const struct umsi_irq_desc *d)
{
	return umsi_group_leader(d) != NULL;
}

int umsi_irq_msg(struct umsi_system *sys, struct umsi_irq_desc *d,
		 struct umsi_msg *msg)
{
	return compose(sys, d, d->cpu, d->vector, msg);
}

int umsi_irq_program(struct umsi_system *sys, struct umsi_irq_desc *d)
{
	struct umsi_msg msg;
	int ret = compose(sys, d, d->cpu, d->vector, &msg);

	return ret ? ret : d->chip->write_msg(sys, d, &msg);
}

int umsi_irq_retarget(struct umsi_system *sys, struct umsi_irq_desc *d,
		      uint32_t cpu, uint32_t id)
{
	struct umsi_ctl_irq ci;
	struct umsi_msg msg;
	int ret;

	/* The controller moves it, or says the source's message must. */
	ctl_irq(d, &ci);
	ret = sys->env.ctl->retarget(sys, &ci, cpu, id);
	if (ret != UMSI_CTL_REWRITE)
		return ret;
	ret = compose(sys, d, cpu, id, &msg);
	return ret ? ret : d->chip->write_msg(sys, d, &msg);
}
