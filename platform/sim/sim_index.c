/* SPDX-License-Identifier: MIT */
/*
 * sim_index.c - the simulator's lookups, kept cheap on the largest
 * machines: APIC ID -> CPU (every message), BDF -> function (every
 * configuration access), physical address -> memory BAR (every MMIO
 * access). A scan of every CPU or function per access made bringing up
 * V vectors on C CPUs and D functions cost V x (C + D); these cost
 * O(log C), O(1) and O(log D).
 *
 * Each index gives exactly the answer of the scan it replaces, including
 * the odd cases: a BDF reused after a surprise removal (the function
 * added last), BARs that overlap (the first present function in the
 * order functions were added, lowest BAR first, then removed ones).
 */
#include <stdlib.h>
#include <string.h>

#include "sim_priv.h"

/* ---- APIC ID -> CPU ------------------------------------------------------ */

static int apic_ent_cmp(const void *a, const void *b)
{
	const struct sim_apic_ent *x = a, *y = b;

	return x->apic_id < y->apic_id ? -1 : x->apic_id > y->apic_id;
}

/*
 * Build the index from the CPUs' APIC IDs. Sorting also finds duplicate
 * IDs in O(n log n). Return: 0, -UMSI_EINVAL (an APIC ID twice),
 * -UMSI_ENOMEM.
 */
int sim_apic_index_init(struct umsi_sim *sim)
{
	struct sim_apic_ent *e = calloc(sim->ncpus, sizeof(*e));

	if (!e)
		return -UMSI_ENOMEM;
	for (uint32_t i = 0; i < sim->ncpus; i++)
		e[i] = (struct sim_apic_ent){ sim->cpus[i].apic_id, i };
	qsort(e, sim->ncpus, sizeof(*e), apic_ent_cmp);
	sim->apic_index = e;
	for (uint32_t i = 1; i < sim->ncpus; i++)
		if (e[i].apic_id == e[i - 1].apic_id)
			return -UMSI_EINVAL;
	return 0;
}

/* The CPU with APIC ID @apic_id, or UINT32_MAX when none has it. */
uint32_t sim_cpu_of_apic_locked(const struct umsi_sim *sim, uint32_t apic_id)
{
	size_t lo = 0, hi = sim->ncpus;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint32_t id = sim->apic_index[mid].apic_id;

		if (id == apic_id)
			return sim->apic_index[mid].cpu;
		if (id < apic_id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return UINT32_MAX;
}

/* ---- BDF -> function --------------------------------------------------------- */

/*
 * Open addressing, linear probing, at most half full. Keys are never
 * deleted: a removed function stays in sim->devs (it reads all-ones), and
 * a function added later at its BDF takes its slot.
 */
static size_t dev_hash_slot(umsi_bdf_t bdf, size_t cap)
{
	uint32_t h = (uint32_t)bdf * 0x9e3779b1u;

	return (h ^ (h >> 15)) & (cap - 1);
}

static void dev_hash_put(struct sim_dev **tab, size_t cap, struct sim_dev *d)
{
	size_t i = dev_hash_slot(d->bdf, cap);

	while (tab[i] && tab[i]->bdf != d->bdf)
		i = (i + 1) & (cap - 1);
	tab[i] = d;
}

/*
 * Make room for one more BDF before the function is committed, so that
 * sim_dev_index_add() cannot fail. Return: 0 or -UMSI_ENOMEM.
 */
int sim_dev_index_reserve(struct umsi_sim *sim)
{
	size_t cap = sim->dev_hash_cap ? sim->dev_hash_cap : 64;
	struct sim_dev **tab;

	while ((sim->dev_hash_used + 1) * 2 > cap)
		cap *= 2;
	if (cap == sim->dev_hash_cap)
		return 0;
	tab = calloc(cap, sizeof(*tab));
	if (!tab)
		return -UMSI_ENOMEM;
	for (size_t i = 0; i < sim->dev_hash_cap; i++)
		if (sim->dev_hash[i])
			dev_hash_put(tab, cap, sim->dev_hash[i]);
	free(sim->dev_hash);
	sim->dev_hash = tab;
	sim->dev_hash_cap = cap;
	return 0;
}

/* @d has just been appended to sim->devs. */
void sim_dev_index_add(struct umsi_sim *sim, struct sim_dev *d)
{
	size_t i = dev_hash_slot(d->bdf, sim->dev_hash_cap);

	while (sim->dev_hash[i] && sim->dev_hash[i]->bdf != d->bdf)
		i = (i + 1) & (sim->dev_hash_cap - 1);
	if (!sim->dev_hash[i])
		sim->dev_hash_used++;
	sim->dev_hash[i] = d;
	d->idx = sim->ndevs - 1;
	if (d->desc.header_type == 1)
		sim->nbridges++;
	sim_bars_changed_locked(sim, d);
}

/*
 * The function at @bdf: the present one, else the last one removed from
 * there (its registers still exist, reading all-ones), else NULL.
 */
struct sim_dev *sim_dev_find(struct umsi_sim *sim, umsi_bdf_t bdf)
{
	size_t i;

	if (!sim->dev_hash_cap)
		return NULL;
	i = dev_hash_slot(bdf, sim->dev_hash_cap);
	while (sim->dev_hash[i]) {
		if (sim->dev_hash[i]->bdf == bdf)
			return sim->dev_hash[i];
		i = (i + 1) & (sim->dev_hash_cap - 1);
	}
	return NULL;
}

/* ---- Physical address -> memory BAR ----------------------------------------- */

/*
 * BARs move only when software writes a BAR register, the function is
 * added or reset, or a test pokes the raw configuration bytes. Those
 * functions are queued and re-read at the next decode; the sorted index
 * is rebuilt only when an address really changed. (Sizing a BAR writes
 * all-ones and restores it before any MMIO, so it costs no rebuild.)
 */
void sim_bars_changed_locked(struct umsi_sim *sim, struct sim_dev *d)
{
	if (d->ix_dirty || sim->bar_all_dirty)
		return;
	if (sim->nbar_dirty == sim->bar_dirty_cap) {
		size_t cap = sim->bar_dirty_cap ? sim->bar_dirty_cap * 2 : 64;
		struct sim_dev **p = realloc(sim->bar_dirty, cap * sizeof(*p));

		if (!p) {
			/* Re-check every function at the next decode instead. */
			sim->bar_all_dirty = true;
			return;
		}
		sim->bar_dirty = p;
		sim->bar_dirty_cap = cap;
	}
	d->ix_dirty = true;
	sim->bar_dirty[sim->nbar_dirty++] = d;
}

/*
 * umsi_sim_cfg_raw() handed out @d's configuration bytes: its BARs may
 * change unseen, so they are re-read at every decode from now on.
 */
void sim_bars_exposed_locked(struct umsi_sim *sim, struct sim_dev *d)
{
	if (d->raw_exposed)
		return;
	if (sim->nbar_raw == sim->bar_raw_cap) {
		size_t cap = sim->bar_raw_cap ? sim->bar_raw_cap * 2 : 8;
		struct sim_dev **p = realloc(sim->bar_raw, cap * sizeof(*p));

		if (!p) {
			/* No room to list it: re-check every function, always. */
			sim->bar_raw_overflow = true;
			return;
		}
		sim->bar_raw = p;
		sim->bar_raw_cap = cap;
	}
	d->raw_exposed = true;
	sim->bar_raw[sim->nbar_raw++] = d;
}

/* The address BAR @b of @d decodes for MMIO, 0 when none. */
static uint64_t bar_decodes(const struct sim_dev *d, unsigned int b)
{
	if (!d->bars[b].size || d->bars[b].io || d->bars[b].upper)
		return 0;
	return sim_bar_base(d, b);
}

static void bar_recheck(struct umsi_sim *sim, struct sim_dev *d)
{
	for (unsigned int b = 0; b < 6; b++) {
		uint64_t base = bar_decodes(d, b);

		if (base != d->ix_base[b]) {
			d->ix_base[b] = base;
			sim->bar_ix_stale = true;
		}
	}
	d->ix_dirty = false;
}

/* Sorted by base, then in the order of the scan it replaces. */
static int bar_ent_cmp(const void *a, const void *b)
{
	const struct sim_bar_ent *x = a, *y = b;

	if (x->base != y->base)
		return x->base < y->base ? -1 : 1;
	if (x->d->idx != y->d->idx)
		return x->d->idx < y->d->idx ? -1 : 1;
	return x->bar < y->bar ? -1 : x->bar > y->bar;
}

static void bar_index_rebuild(struct umsi_sim *sim)
{
	size_t n = 0;

	for (size_t i = 0; i < sim->ndevs; i++)
		for (unsigned int b = 0; b < 6; b++)
			n += sim->devs[i]->ix_base[b] != 0;
	if (n > sim->bar_ix_cap) {
		size_t cap = n + n / 2 + 16;
		struct sim_bar_ent *e = realloc(sim->bar_ix, cap * sizeof(*e));
		uint64_t *m;

		if (e)
			sim->bar_ix = e;
		m = e ? realloc(sim->bar_maxlast, cap * sizeof(*m)) : NULL;
		if (!m) {
			sim->bar_ix_broken = true;
			return;
		}
		sim->bar_maxlast = m;
		sim->bar_ix_cap = cap;
	}
	n = 0;
	for (size_t i = 0; i < sim->ndevs; i++) {
		struct sim_dev *d = sim->devs[i];

		for (unsigned int b = 0; b < 6; b++) {
			if (!d->ix_base[b])
				continue;
			/* A BAR is aligned to its size: base + size - 1 fits. */
			sim->bar_ix[n++] = (struct sim_bar_ent){
				d->ix_base[b], d->ix_base[b] + d->bars[b].size - 1,
				d, b };
		}
	}
	qsort(sim->bar_ix, n, sizeof(*sim->bar_ix), bar_ent_cmp);
	for (size_t i = 0; i < n; i++)
		sim->bar_maxlast[i] = i && sim->bar_maxlast[i - 1] >
				      sim->bar_ix[i].last ?
				      sim->bar_maxlast[i - 1] : sim->bar_ix[i].last;
	sim->nbar_ix = n;
	sim->bar_ix_stale = false;
	sim->bar_ix_broken = false;
}

static void bar_index_refresh(struct umsi_sim *sim)
{
	if (sim->bar_all_dirty || sim->bar_raw_overflow) {
		for (size_t i = 0; i < sim->ndevs; i++)
			bar_recheck(sim, sim->devs[i]);
		sim->bar_all_dirty = false;
	}
	for (size_t i = 0; i < sim->nbar_raw; i++)
		bar_recheck(sim, sim->bar_raw[i]);
	for (size_t i = 0; i < sim->nbar_dirty; i++)
		bar_recheck(sim, sim->bar_dirty[i]);
	sim->nbar_dirty = 0;
	if (sim->bar_ix_stale || sim->bar_ix_broken)
		bar_index_rebuild(sim);
}

/* Whether @x is a better answer than @best: present first, scan order. */
static bool bar_better(const struct sim_bar_ent *x,
		       const struct sim_bar_ent *best)
{
	if (!best)
		return true;
	if (x->d->present != best->d->present)
		return x->d->present;
	if (x->d->idx != best->d->idx)
		return x->d->idx < best->d->idx;
	return x->bar < best->bar;
}

/* Out of memory for the index: the scan itself. */
static struct sim_dev *decode_scan(struct umsi_sim *sim, uint64_t phys,
				   unsigned int *bar, uint64_t *off)
{
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < sim->ndevs; i++) {
			struct sim_dev *d = sim->devs[i];

			if (d->present != (pass == 0))
				continue;
			for (unsigned int b = 0; b < 6; b++) {
				uint64_t base = bar_decodes(d, b);

				if (!base || phys < base ||
				    phys - base >= d->bars[b].size)
					continue;
				*bar = b;
				*off = phys - base;
				return d;
			}
		}
	}
	return NULL;
}

/*
 * Which function's memory BAR claims @phys: present functions first, then
 * removed ones; among them the first added, lowest BAR first.
 */
struct sim_dev *sim_decode_locked(struct umsi_sim *sim, uint64_t phys,
				  unsigned int *bar, uint64_t *off)
{
	const struct sim_bar_ent *best = NULL;
	size_t lo = 0, hi;

	bar_index_refresh(sim);
	if (sim->bar_ix_broken)
		return decode_scan(sim, phys, bar, off);
	/* The first entry whose base is above @phys. */
	hi = sim->nbar_ix;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (sim->bar_ix[mid].base <= phys)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Back over every entry that may still reach @phys. */
	while (lo > 0 && sim->bar_maxlast[lo - 1] >= phys) {
		const struct sim_bar_ent *e = &sim->bar_ix[--lo];

		if (e->last >= phys && bar_better(e, best))
			best = e;
	}
	if (!best)
		return NULL;
	*bar = best->bar;
	*off = phys - best->base;
	return best->d;
}

void sim_index_fini(struct umsi_sim *sim)
{
	free(sim->apic_index);
	free(sim->irr_cpus);
	free(sim->dev_hash);
	free(sim->bar_ix);
	free(sim->bar_maxlast);
	free(sim->bar_dirty);
	free(sim->bar_raw);
	free(sim->intx_active);
}
