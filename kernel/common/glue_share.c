/* SPDX-License-Identifier: MIT */
/*
 * glue_share.c - the probe policy: how many vectors each PCI function may
 * ask uMSI for, so that one device with a huge MSI-X table cannot starve
 * the others.
 *
 *  1. Drivers first, in enumeration order. A driver gets at most what
 *     spreading over the CPUs needs, one vector per online CPU plus the
 *     vectors it names as not per-CPU (admin queue, link, config), or
 *     `umsi.probe_max=N` vectors instead; and never so many that a
 *     function still to be served would find no vector left. A driver's
 *     own minimum is never cut (it cannot work with less); if that does
 *     not fit, uMSI says -ENOSPC as before.
 *  2. Then the functions that only umsi.probe=all serves share what is
 *     left by max-min fairness: in increasing order of what they offer,
 *     each gets what it offers or an equal part of what remains, the
 *     smaller. So every one of them gets at least one vector (MSI, MSI-X,
 *     or its INTx line) while there are as many vectors as functions, and
 *     nobody is cut while another gets more than it.
 *
 * Every function that got fewer vectors than it wanted says why in its
 * device line ("short"): cpus, probe_max, share (the policy), vectors
 * (the allocator had fewer than the policy allowed), msi_denied (policy
 * or quirk left it INTx). The vector count used is the allocator's own
 * (umsi_matrix_stats: unmanaged vectors available on online CPUs).
 */
#include <umsi/irq.h>
#include <umsi/matrix.h>
#include <umsi/pci.h>

#include "kernel.h"
#include "glue.h"

static uint32_t pending;	/* functions that will ask and have not yet */
static uint32_t probe_max;	/* umsi.probe_max=, 0 when not given */

static void share_stats(struct umsi_matrix_stats *st)
{
	umsi_matrix_stats(umsi_system_matrix(kernel_umsi_system()), st);
}

void share_begin(struct glue *gl)
{
	char val[16];
	uint64_t v = 0;

	pending = 0;
	for (uint32_t i = 0; i < pci_ndevs; i++)
		if (gl->devs[i].to_serve)
			pending++;
	probe_max = 0;
	if (glue_cmdline_number("umsi.probe_max", 4096, &v) && v >= 1)
		probe_max = (uint32_t)v;
	else if (cmdline_value("umsi.probe_max", val, sizeof(val)))
		kprintf("umsi: umsi.probe_max=%s ignored (want 1-4096)\n", val);
}

void share_served(struct glue_dev *g)
{
	if (g->to_serve && pending) {
		g->to_serve = false;
		pending--;
	}
}

/* Vectors left after one for each function still to be served but @g. */
static uint32_t share_left(const struct glue_dev *g)
{
	struct umsi_matrix_stats st;
	uint32_t others = pending - (g->to_serve && pending ? 1 : 0);

	share_stats(&st);
	return st.available > others ? st.available - others : 0;
}

uint32_t share_driver_budget(struct glue_dev *g, uint32_t min, uint32_t max,
			     uint32_t admin)
{
	struct umsi_matrix_stats st;
	const char *why = NULL;
	uint32_t cap, left, ask = max;

	share_stats(&st);
	cap = probe_max ? probe_max : st.online + admin;
	if (ask > cap) {
		ask = cap;
		why = probe_max ? "probe_max" : "cpus";
	}
	left = share_left(g);
	if (ask > left) {
		ask = left;
		why = "share";
	}
	if (ask < min)
		ask = min;
	g->want = max;
	g->granted = ask;
	g->limit = ask < max ? why : NULL;
	return ask;
}

static uint32_t pow2_floor(uint32_t v)
{
	uint32_t p = 1;

	while (p <= v / 2)
		p *= 2;
	return v ? p : 0;
}

static uint32_t pow2_ceil(uint32_t v)
{
	uint32_t p = 1;

	while (p < v)
		p *= 2;
	return p;
}

/*
 * What @g offers and in which mode it will get it: the MSI-X table if
 * uMSI can use it, else the MSI messages, else its INTx line.
 */
static uint32_t share_offer(const struct glue_dev *g, bool *msi_block)
{
	struct umsi_pci_info info;

	umsi_pci_get_info(g->udev, &info);
	*msi_block = false;
	if (info.reason)
		return 1;
	if (info.msix_cap && !info.msix_reason && info.msix_max)
		return info.msix_max;
	if (info.msi_cap && info.msi_max) {
		*msi_block = true;
		return info.msi_max;
	}
	return 1;
}

void share_probe_plan(struct glue_dev **list, uint32_t n)
{
	struct umsi_matrix_stats st;
	uint32_t pool;

	share_stats(&st);
	pool = st.available;
	/* Smallest offers first (insertion sort: n <= PCI_MAX_DEVS). */
	for (uint32_t i = 0; i < n; i++)
		list[i]->want = share_offer(list[i], &list[i]->msi_block);
	for (uint32_t i = 1; i < n; i++) {
		struct glue_dev *g = list[i];
		uint32_t j = i;

		for (; j > 0 && list[j - 1]->want > g->want; j--)
			list[j] = list[j - 1];
		list[j] = g;
	}
	for (uint32_t i = 0; i < n; i++) {
		struct glue_dev *g = list[i];
		uint32_t fair = pool / (n - i), ask = g->want, used;
		bool blk = g->msi_block;

		g->limit = NULL;
		if (probe_max && ask > probe_max) {
			ask = probe_max;
			g->limit = "probe_max";
		}
		if (blk)
			fair = pow2_floor(fair);
		if (ask > fair) {
			ask = fair ? fair : 1;
			g->limit = "share";
		}
		if (blk && ask > 1)
			ask = pow2_floor(ask);
		g->granted = ask;
		used = blk ? pow2_ceil(ask) : ask;
		pool = pool > used ? pool - used : 0;
	}
	/*
	 * Allocation order: MSI blocks first, the largest first, while every
	 * CPU still has aligned runs of free vectors (a block lives on one
	 * CPU); then the others in increasing order. Spread MSI-X vectors
	 * fit wherever single vectors are left.
	 */
	for (uint32_t i = 1; i < n; i++) {
		struct glue_dev *g = list[i];
		uint32_t j = i;

		for (; j > 0 && g->msi_block && (!list[j - 1]->msi_block ||
		       list[j - 1]->granted < g->granted); j--)
			list[j] = list[j - 1];
		list[j] = g;
	}
}

const char *share_shortfall(const struct glue_dev *g,
			    const struct umsi_pci_info *info)
{
	uint32_t got = info->mode == UMSI_MODE_NONE ? 0 : g->nvec;

	if (!g->want || got >= g->want)
		return NULL;
	if (info->mode == UMSI_MODE_NONE)
		return g->probe_err == -UMSI_ENOSPC || !g->probe_err ?
		       "vectors" : NULL;
	if (info->mode == UMSI_MODE_INTX && info->reason)
		return "msi_denied";
	if (g->limit && got >= g->granted)
		return g->limit;
	return "vectors";
}
