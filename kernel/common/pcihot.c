/* SPDX-License-Identifier: MIT */
/*
 * pcihot.c - address space and bus numbers for functions that come and go.
 *
 * At boot the firmware (SeaBIOS) has numbered the buses and given every
 * BAR and every bridge window its place; a hot-plug port gets windows
 * and a bus range with room for a card that is not there yet. This file
 * keeps the books of what is used inside each bridge window, so that
 * what appears later gets addresses nobody else decodes and what goes
 * away gives them back:
 *
 *  - pci_resources_init() reads every bridge's I/O, memory and
 *    prefetchable windows (PCI-to-PCI Bridge 1.2, 3.2.5.6-3.2.5.9) and
 *    records the firmware's BARs and sub-windows inside them;
 *  - pci_hot_scan() enumerates a port's secondary bus after its slot was
 *    powered on: bridges found there get bus numbers from the port's
 *    secondary..subordinate range and a memory window sized for what is
 *    below them; every memory BAR gets a naturally aligned place inside
 *    the parent's window (prefetchable ones in the prefetchable window
 *    when the parent has one), largest first. A memory BAR that does not
 *    fit fails the whole card: nothing of it stays set up. I/O BARs get
 *    I/O space when the parent forwards some, else stay unassigned: a
 *    PCI Express endpoint must work without I/O space (PCIe 4.0, 1.3.2.2);
 *  - pci_hot_release() gives everything of a function back.
 */
#include <umsi/pci_regs.h>

#include "kernel.h"
#include "pci.h"

#define RES_MAX        512
#define WIN_MEM_ALIGN  0x100000ull	/* bridge memory windows: 1 MiB */
#define WIN_IO_ALIGN   0x1000ull	/* bridge I/O windows: 4 KiB */

#define PCI_IO_BASE        0x1c
#define PCI_IO_LIMIT       0x1d
#define PCI_MEM_BASE       0x20
#define PCI_MEM_LIMIT      0x22
#define PCI_PREF_BASE      0x24
#define PCI_PREF_LIMIT     0x26
#define PCI_PREF_BASE_HI   0x28
#define PCI_PREF_LIMIT_HI  0x2c
#define PCI_IO_BASE_HI     0x30
#define PCI_IO_LIMIT_HI    0x32
#define PCI_RANGE_64       0x1	/* low nibble of the base: 32/64-bit */
#define PCI_CMD_DECODE     (UMSI_PCI_CMD_IO | UMSI_PCI_CMD_MEMORY | UMSI_PCI_CMD_MASTER)

/*
 * One range in use inside a bridge window: a BAR (@bar 0-5) or a
 * sub-bridge's window (@bar -1 - window kind) of function @owner.
 */
struct res_range {
	bool used;
	uint8_t win;
	int16_t bridge;
	int16_t owner;
	int8_t bar;
	uint64_t start, size;
};

static struct res_range res[RES_MAX];

static void read_windows(struct pci_dev *b)
{
	uint32_t io_b = pci_cfg_read(b->bdf, PCI_IO_BASE, 1);
	uint32_t io_l = pci_cfg_read(b->bdf, PCI_IO_LIMIT, 1);
	uint32_t pb = pci_cfg_read(b->bdf, PCI_PREF_BASE, 2);
	uint32_t pl = pci_cfg_read(b->bdf, PCI_PREF_LIMIT, 2);
	struct pci_window *w = b->win;

	w[PCI_WIN_IO].base = (uint64_t)(io_b & 0xf0) << 8;
	w[PCI_WIN_IO].limit = ((uint64_t)(io_l & 0xf0) << 8) | 0xfff;
	if ((io_b & 0xf) == PCI_RANGE_64) {
		w[PCI_WIN_IO].base |= (uint64_t)pci_cfg_read(b->bdf, PCI_IO_BASE_HI, 2) << 16;
		w[PCI_WIN_IO].limit |= (uint64_t)pci_cfg_read(b->bdf, PCI_IO_LIMIT_HI, 2) << 16;
	}
	w[PCI_WIN_MEM].base = (uint64_t)(pci_cfg_read(b->bdf, PCI_MEM_BASE, 2) & 0xfff0) << 16;
	w[PCI_WIN_MEM].limit = ((uint64_t)(pci_cfg_read(b->bdf, PCI_MEM_LIMIT, 2) & 0xfff0) << 16) |
			       0xfffff;
	w[PCI_WIN_PREF].base = (uint64_t)(pb & 0xfff0) << 16;
	w[PCI_WIN_PREF].limit = ((uint64_t)(pl & 0xfff0) << 16) | 0xfffff;
	if ((pb & 0xf) == PCI_RANGE_64) {
		w[PCI_WIN_PREF].base |= (uint64_t)pci_cfg_read(b->bdf, PCI_PREF_BASE_HI, 4) << 32;
		w[PCI_WIN_PREF].limit |= (uint64_t)pci_cfg_read(b->bdf, PCI_PREF_LIMIT_HI, 4) << 32;
	}
	for (int i = 0; i < PCI_NWIN; i++)
		w[i].open = w[i].base <= w[i].limit;
}

static bool res_add(int bridge, int win, int owner, int bar, uint64_t start,
		    uint64_t size)
{
	for (int i = 0; i < RES_MAX; i++) {
		if (res[i].used)
			continue;
		res[i] = (struct res_range){ true, (uint8_t)win, (int16_t)bridge,
					     (int16_t)owner, (int8_t)bar, start, size };
		return true;
	}
	kprintf("pci: resource table full\n");
	return false;
}

/* Which window of bridge @b holds [start, start + size)? -1: none. */
static int window_of(const struct pci_dev *b, bool io, uint64_t start,
		     uint64_t size)
{
	static const int order[] = { PCI_WIN_PREF, PCI_WIN_MEM };

	if (io)
		return b->win[PCI_WIN_IO].open && start >= b->win[PCI_WIN_IO].base &&
		       start + size - 1 <= b->win[PCI_WIN_IO].limit ? PCI_WIN_IO : -1;
	for (size_t i = 0; i < ARRAY_SIZE(order); i++) {
		const struct pci_window *w = &b->win[order[i]];

		if (w->open && start >= w->base && start + size - 1 <= w->limit)
			return order[i];
	}
	return -1;
}

void pci_resources_init(void)
{
	memset(res, 0, sizeof(res));
	for (uint32_t i = 0; i < pci_ndevs; i++)
		if (pci_devs[i].present && pci_devs[i].header_type == 1)
			read_windows(&pci_devs[i]);
	for (uint32_t i = 0; i < pci_ndevs; i++) {
		struct pci_dev *d = &pci_devs[i];
		struct pci_dev *p;

		if (!d->present || d->parent < 0)
			continue;
		p = &pci_devs[d->parent];
		for (int b = 0; b < 6; b++) {
			struct pci_bar *bar = &d->bar[b];
			int w;

			if (bar->kind == PCI_BAR_NONE || !bar->assigned)
				continue;
			w = window_of(p, bar->kind == PCI_BAR_IO, bar->addr, bar->size);
			if (w >= 0)
				res_add(d->parent, w, (int)i, b, bar->addr, bar->size);
		}
		for (int k = 0; d->header_type == 1 && k < PCI_NWIN; k++) {
			const struct pci_window *cw = &d->win[k];
			int w;

			if (!cw->open)
				continue;
			w = window_of(p, k == PCI_WIN_IO, cw->base,
				      cw->limit - cw->base + 1);
			if (w >= 0)
				res_add(d->parent, w, (int)i, -1 - k, cw->base,
					cw->limit - cw->base + 1);
		}
	}
}

/*
 * First fit: the lowest @align-aligned place for @size bytes in window
 * @win of bridge @bridge that overlaps nothing recorded there. Returns
 * the address, or 0 when there is none.
 */
static uint64_t res_find(int bridge, int win, uint64_t size, uint64_t align)
{
	const struct pci_window *w = &pci_devs[bridge].win[win];
	uint64_t start;
	bool moved = true;

	if (!w->open || !size)
		return 0;
	start = ALIGN_UP(w->base, align);
	while (moved) {
		moved = false;
		if (start < w->base || start + size - 1 > w->limit ||
		    start + size - 1 < start)
			return 0;
		for (int i = 0; i < RES_MAX; i++) {
			const struct res_range *r = &res[i];

			if (!r->used || r->bridge != bridge || r->win != win)
				continue;
			if (start < r->start + r->size && r->start < start + size) {
				start = ALIGN_UP(r->start + r->size, align);
				moved = true;
			}
		}
	}
	return start;
}

/* ---- enumeration below a port ------------------------------------------- */

struct hot_scan {
	int *list;
	int n, max;
	uint8_t next_bus, last_bus;
	char *why;
	size_t whylen;
};

static int hot_scan_bus(struct hot_scan *s, uint8_t bus, uint8_t root,
			int parent, int depth)
{
	for (uint8_t dev = 0; dev < 32; dev++) {
		uint32_t id = pci_cfg_read(PCI_BDF(bus, dev, 0), 0, 4);
		uint8_t nfn;

		if ((id & 0xffff) == 0xffff || (id & 0xffff) == 0)
			continue;
		nfn = pci_cfg_read(PCI_BDF(bus, dev, 0), 0x0e, 1) & 0x80 ? 8 : 1;
		for (uint8_t fn = 0; fn < nfn; fn++) {
			int idx;
			struct pci_dev *d;

			if (s->n >= s->max) {
				ksnprintf(s->why, s->whylen, "too_many_functions");
				return -1;
			}
			idx = pci_new_function(PCI_BDF(bus, dev, fn), root, parent);
			if (idx < 0)
				continue;
			d = &pci_devs[idx];
			d->hotplug = true;
			/* Its slot was just powered on: reset state. */
			d->fresh = PCI_FRESH_HOTPLUG;
			s->list[s->n++] = idx;
			if (d->header_type != 1)
				continue;
			/* A bridge: the next bus number, and for now every
			 * number up to the port's last, so that configuration
			 * cycles reach whatever is below it. */
			if (s->next_bus > s->last_bus || s->next_bus == 0 || depth >= 8) {
				ksnprintf(s->why, s->whylen,
					  "no_bus_number 0000:%02x:%02x.%u",
					  bus, dev, fn);
				return -1;
			}
			d->secondary = s->next_bus++;
			pci_cfg_write(d->bdf, 0x18, 1, bus);
			pci_cfg_write(d->bdf, 0x19, 1, d->secondary);
			pci_cfg_write(d->bdf, 0x1a, 1, s->last_bus);
			if (hot_scan_bus(s, d->secondary, root, idx, depth + 1))
				return -1;
			d->subordinate = (uint8_t)(s->next_bus - 1);
			pci_cfg_write(d->bdf, 0x1a, 1, d->subordinate);
		}
	}
	return 0;
}

/* Memory a new bridge @b must forward: its children's BARs and windows. */
static uint64_t bridge_need(const struct hot_scan *s, int b, uint64_t *align)
{
	uint64_t need = 0;

	*align = WIN_MEM_ALIGN;
	for (int i = 0; i < s->n; i++) {
		const struct pci_dev *c = &pci_devs[s->list[i]];

		if (c->parent != b)
			continue;
		if (c->header_type == 1) {
			uint64_t a, sub = bridge_need(s, s->list[i], &a);

			need += sub;
			if (a > *align)
				*align = a;
		}
		for (int k = 0; k < 6; k++) {
			const struct pci_bar *bar = &c->bar[k];

			if (bar->kind == PCI_BAR_MEM32 || bar->kind == PCI_BAR_MEM64) {
				need += bar->size;
				if (bar->size > *align)
					*align = bar->size;
			}
		}
	}
	return ALIGN_UP(need ? need : 1, WIN_MEM_ALIGN);
}

static void write_bar(struct pci_dev *d, int i)
{
	struct pci_bar *b = &d->bar[i];
	uint16_t off = (uint16_t)(0x10 + 4 * i);
	uint32_t lo = pci_cfg_read(d->bdf, off, 4);

	pci_cfg_write(d->bdf, off, 4, (lo & (b->kind == PCI_BAR_IO ? 3u : 0xfu)) |
		      (uint32_t)b->addr);
	if (b->kind == PCI_BAR_MEM64)
		pci_cfg_write(d->bdf, off + 4, 4, (uint32_t)(b->addr >> 32));
}

/* Program the windows of a new bridge: memory only, the others closed. */
static void write_windows(struct pci_dev *b)
{
	const struct pci_window *m = &b->win[PCI_WIN_MEM];

	pci_cfg_write(b->bdf, PCI_IO_BASE, 1, 0xf0);
	pci_cfg_write(b->bdf, PCI_IO_LIMIT, 1, 0x00);
	pci_cfg_write(b->bdf, PCI_PREF_BASE, 2, 0xfff0);
	pci_cfg_write(b->bdf, PCI_PREF_LIMIT, 2, 0x0000);
	pci_cfg_write(b->bdf, PCI_PREF_BASE_HI, 4, 0);
	pci_cfg_write(b->bdf, PCI_PREF_LIMIT_HI, 4, 0);
	pci_cfg_write(b->bdf, PCI_MEM_BASE, 2, (uint32_t)(m->base >> 16) & 0xfff0);
	pci_cfg_write(b->bdf, PCI_MEM_LIMIT, 2, (uint32_t)(m->limit >> 16) & 0xfff0);
}

/* Place BAR @k of @d (index @idx) inside its parent's windows. */
static bool place_bar(struct pci_dev *d, int idx, int k)
{
	struct pci_bar *b = &d->bar[k];
	int p = d->parent;
	uint64_t a = 0;
	int w = PCI_WIN_MEM;

	if (b->kind == PCI_BAR_IO) {
		w = PCI_WIN_IO;
		a = res_find(p, w, b->size, b->size);
	} else {
		if (b->prefetchable && pci_devs[p].win[PCI_WIN_PREF].open) {
			w = PCI_WIN_PREF;
			a = res_find(p, w, b->size, b->size);
		}
		if (!a) {
			w = PCI_WIN_MEM;
			a = res_find(p, w, b->size, b->size);
		}
		/* Below 4 GiB: a 32-bit BAR, or a 64-bit one in a 32-bit window. */
		if (a && b->kind == PCI_BAR_MEM32 && a + b->size > (1ull << 32))
			a = 0;
	}
	if (!a || !res_add(p, w, idx, k, a, b->size))
		return false;
	b->addr = a;
	b->assigned = true;
	write_bar(d, k);
	return true;
}

/* Assign everything of @s->list, parents first; false with @s->why set. */
static bool hot_assign(struct hot_scan *s)
{
	for (int i = 0; i < s->n; i++) {
		int idx = s->list[i];
		struct pci_dev *d = &pci_devs[idx];
		int order[6], nb = 0;
		uint16_t cmd = 0;

		if (d->header_type == 1) {
			uint64_t align, need = bridge_need(s, idx, &align);
			uint64_t a = res_find(d->parent, PCI_WIN_MEM, need, align);

			if (!a || !res_add(d->parent, PCI_WIN_MEM, idx,
					   -1 - PCI_WIN_MEM, a, need)) {
				ksnprintf(s->why, s->whylen,
					  "no_bar_space 0000:%02x:%02x.%u window size 0x%lx",
					  PCI_BUS(d->bdf), PCI_DEV(d->bdf),
					  PCI_FN(d->bdf), need);
				return false;
			}
			memset(d->win, 0, sizeof(d->win));
			d->win[PCI_WIN_MEM] = (struct pci_window){ true, a, a + need - 1 };
			write_windows(d);
			cmd |= UMSI_PCI_CMD_MEMORY;
		}
		/* Largest BARs first: natural alignment then packs them. */
		for (int k = 0; k < 6; k++) {
			int j = nb++;

			if (d->bar[k].kind == PCI_BAR_NONE) {
				nb--;
				continue;
			}
			while (j > 0 && d->bar[order[j - 1]].size < d->bar[k].size) {
				order[j] = order[j - 1];
				j--;
			}
			order[j] = k;
		}
		for (int j = 0; j < nb; j++) {
			int k = order[j];
			struct pci_bar *b = &d->bar[k];

			if (place_bar(d, idx, k)) {
				cmd |= b->kind == PCI_BAR_IO ? UMSI_PCI_CMD_IO : UMSI_PCI_CMD_MEMORY;
				continue;
			}
			if (b->kind == PCI_BAR_IO)
				continue;	/* optional for PCIe endpoints */
			ksnprintf(s->why, s->whylen,
				  "no_bar_space 0000:%02x:%02x.%u bar %d size 0x%lx",
				  PCI_BUS(d->bdf), PCI_DEV(d->bdf), PCI_FN(d->bdf),
				  k, b->size);
			return false;
		}
		/* Decoding on; a bridge also forwards requests upstream (its
		 * children's DMA and MSI writes need Bus Master there). */
		if (d->header_type == 1)
			cmd |= UMSI_PCI_CMD_MASTER;
		pci_cfg_write(d->bdf, UMSI_PCI_COMMAND, 2,
			      (pci_cfg_read(d->bdf, UMSI_PCI_COMMAND, 2) & ~PCI_CMD_DECODE) | cmd);
	}
	return true;
}

int pci_hot_scan(int port, int *list, int max, char *why, size_t whylen)
{
	struct pci_dev *p = &pci_devs[port];
	struct hot_scan s = {
		.list = list, .max = max, .why = why, .whylen = whylen,
		.next_bus = (uint8_t)(p->secondary + 1),
		.last_bus = p->subordinate,
	};
	int err;

	why[0] = '\0';
	read_windows(p);	/* the firmware's, or changed since boot */
	err = hot_scan_bus(&s, p->secondary, p->root_bus, port, 0);
	if (!err && !hot_assign(&s))
		err = -1;
	if (err) {
		for (int i = s.n - 1; i >= 0; i--)
			pci_hot_release(list[i]);
		return -1;
	}
	return s.n;
}

void pci_hot_release(int idx)
{
	struct pci_dev *d = &pci_devs[idx];

	if (!d->present)
		return;
	if (!pci_gone(d))
		pci_cfg_write(d->bdf, UMSI_PCI_COMMAND, 2,
			      pci_cfg_read(d->bdf, UMSI_PCI_COMMAND, 2) & ~PCI_CMD_DECODE);
	/* What it decodes, and what was placed inside its windows. */
	for (int r = 0; r < RES_MAX; r++)
		if (res[r].used && (res[r].owner == idx || res[r].bridge == idx))
			res[r].used = false;
	d->present = false;
}

static int depth_below(int idx, int port)
{
	int depth = 0;

	for (int p = pci_devs[idx].parent; p >= 0; p = pci_devs[p].parent) {
		depth++;
		if (p == port)
			return depth;
	}
	return -1;
}

int pci_below(int port, int *list, int max)
{
	int n = 0;

	for (uint32_t i = 0; i < pci_ndevs && n < max; i++) {
		int depth;
		int j;

		if (!pci_devs[i].present || (depth = depth_below((int)i, port)) < 0)
			continue;
		/* Deepest first: insertion by depth, descending. */
		for (j = n++; j > 0 && depth_below(list[j - 1], port) < depth; j--)
			list[j] = list[j - 1];
		list[j] = (int)i;
	}
	return n;
}

/* ---- SR-IOV: room for a PF's VF BARs --------------------------------------- */

/* Ranges of VF BAR n are recorded as BAR 10 + n of the PF. */
#define VF_BAR_TAG 10

uint64_t pci_sriov_place(int pf, int n, uint64_t total, uint64_t align,
			 bool pref)
{
	int bridge = pci_devs[pf].parent;
	uint64_t at = 0;

	if (bridge < 0 || !total)
		return 0;
	if (pref)
		at = res_find(bridge, PCI_WIN_PREF, total, align);
	if (!at)
		at = res_find(bridge, PCI_WIN_MEM, total, align);
	if (at && !res_add(bridge, window_of(&pci_devs[bridge], false, at,
					     total), pf, VF_BAR_TAG + n, at,
			   total))
		return 0;
	return at;
}

void pci_sriov_unplace(int pf)
{
	for (int i = 0; i < RES_MAX; i++)
		if (res[i].used && res[i].owner == pf &&
		    res[i].bar >= VF_BAR_TAG)
			res[i].used = false;
}
