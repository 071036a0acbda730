// SPDX-License-Identifier: MIT
/*
 * pci_ecam.c - ECAM enumeration (see pci_ecam.h).
 */
#include "pci_ecam.h"
#include "pci.h"

/* Type 0/1 header registers used here (PCI 3.0 6.1, PCI-PCI bridge 3.2). */
#define PCI_VENDOR_ID		0x00
#define PCI_CLASS_REVISION	0x08
#define PCI_HEADER_TYPE		0x0e
#define PCI_HEADER_MULTI	0x80
#define PCI_BAR0		0x10
#define PCI_BAR_IO		(1u << 0)
#define PCI_BAR_MEM_64		(2u << 1)
#define PCI_BAR_MEM_TYPE	(3u << 1)
#define PCI_BAR_PREFETCH	(1u << 3)
#define PCI_PRIMARY_BUS		0x18
#define PCI_IO_BASE		0x1c
#define PCI_MEMORY_BASE		0x20
#define PCI_PREF_MEMORY_BASE	0x24
#define PCI_PREF_BASE_UPPER32	0x28
#define PCI_PREF_LIMIT_UPPER32	0x2c
#define PCI_IO_BASE_UPPER16	0x30
#define PCI_BRIDGE_WINDOW_ALIGN	(1ULL << 20)

static uint64_t ecam_cfg_addr(const struct ecam_host *h, unsigned bus,
			     unsigned dev, unsigned fn, unsigned off)
{
	return h->ecam + ((uint64_t)(bus - h->bus_start) << 20 |
			  (uint64_t)dev << 15 | (uint64_t)fn << 12 | off);
}

uint8_t ecam_read8(const struct ecam_host *h, unsigned bus, unsigned dev,
		  unsigned fn, unsigned off)
{
	return *(volatile uint8_t *)(uintptr_t)ecam_cfg_addr(h, bus, dev, fn, off);
}

uint16_t ecam_read16(const struct ecam_host *h, unsigned bus, unsigned dev,
		    unsigned fn, unsigned off)
{
	return *(volatile uint16_t *)(uintptr_t)ecam_cfg_addr(h, bus, dev, fn, off);
}

uint32_t ecam_read32(const struct ecam_host *h, unsigned bus, unsigned dev,
		    unsigned fn, unsigned off)
{
	return *(volatile uint32_t *)(uintptr_t)ecam_cfg_addr(h, bus, dev, fn, off);
}

void ecam_write16(const struct ecam_host *h, unsigned bus, unsigned dev,
		 unsigned fn, unsigned off, uint16_t v)
{
	*(volatile uint16_t *)(uintptr_t)ecam_cfg_addr(h, bus, dev, fn, off) = v;
}

void ecam_write32(const struct ecam_host *h, unsigned bus, unsigned dev,
		 unsigned fn, unsigned off, uint32_t v)
{
	*(volatile uint32_t *)(uintptr_t)ecam_cfg_addr(h, bus, dev, fn, off) = v;
}

static uint64_t ecam_align(uint64_t v, uint64_t a)
{
	return (v + a - 1) & ~(a - 1);
}

/* A naturally aligned range of @size from @w, or 0 (PCI address) when full. */
static uint64_t ecam_window_alloc(struct ecam_window *w, uint64_t size,
				 uint64_t *pci)
{
	uint64_t a;

	if (!w->valid || !size)
		return 0;
	a = ecam_align(w->next, size);
	if (a < w->next || a - w->pci_base > w->size ||
	    size > w->size - (a - w->pci_base))
		return 0;
	w->next = a + size;
	*pci = a;
	return a - w->pci_base + w->cpu_base;
}

/*
 * Size and place the memory BARs of one function (@nbars: 6 for an
 * endpoint, 2 for a bridge). Decoding is off while a BAR holds all ones.
 */
static void ecam_assign_bars(struct ecam_host *h, struct ecam_func *f,
			    unsigned nbars)
{
	unsigned b = f->bus, d = f->dev, fn = f->fn, i, off;
	uint16_t cmd = ecam_read16(h, b, d, fn, ECAM_COMMAND);
	uint32_t orig, orig_hi, lo, hi = 0;
	uint64_t size, cpu, pci = 0;
	struct ecam_window *w;
	bool is64, pref;

	ecam_write16(h, b, d, fn, ECAM_COMMAND,
		    cmd & ~(ECAM_COMMAND_MEMORY | 1u));
	for (i = 0; i < nbars; i++) {
		off = PCI_BAR0 + i * 4;
		orig = ecam_read32(h, b, d, fn, off);
		ecam_write32(h, b, d, fn, off, 0xffffffff);
		lo = ecam_read32(h, b, d, fn, off);
		ecam_write32(h, b, d, fn, off, orig);
		if (!lo || (lo & PCI_BAR_IO))
			continue;	/* absent, or I/O: left unassigned */
		is64 = (lo & PCI_BAR_MEM_TYPE) == PCI_BAR_MEM_64 &&
		       i + 1 < nbars;
		pref = lo & PCI_BAR_PREFETCH;
		if (is64) {
			orig_hi = ecam_read32(h, b, d, fn, off + 4);
			ecam_write32(h, b, d, fn, off + 4, 0xffffffff);
			hi = ecam_read32(h, b, d, fn, off + 4);
			ecam_write32(h, b, d, fn, off + 4, orig_hi);
		}
		size = ~(((uint64_t)(is64 ? hi : 0xffffffff) << 32) |
			 (lo & ~0xfu)) + 1;
		w = is64 && pref && h->mem64.valid ? &h->mem64 : &h->mem32;
		cpu = ecam_window_alloc(w, size, &pci);
		if (!cpu && w == &h->mem64)
			cpu = ecam_window_alloc(w = &h->mem32, size, &pci);
		if (cpu) {
			ecam_write32(h, b, d, fn, off, (uint32_t)pci);
			if (is64)
				ecam_write32(h, b, d, fn, off + 4,
					    (uint32_t)(pci >> 32));
			f->bar[i] = cpu;
			f->bar_size[i] = size;
		} else {
			h->log("pci %02x:%02x.%x BAR%u size 0x%llx: no room, unassigned\n",
			       b, d, fn, i, (unsigned long long)size);
		}
		if (is64)
			i++;
	}
	ecam_write16(h, b, d, fn, ECAM_COMMAND, cmd);
}

/* Program a bridge's memory window to [@lo, @hi) (empty: base > limit). */
static void ecam_bridge_mem_window(struct ecam_host *h, struct ecam_func *f,
				  uint64_t lo, uint64_t hi)
{
	uint32_t v = 0x0000fff0;	/* base 0xfff00000 > limit 0 */

	if (hi > lo)
		v = (uint32_t)((lo >> 16) & 0xfff0) |
		    (uint32_t)(((hi - 1) & 0xfff00000) & 0xffffffff);
	ecam_write32(h, f->bus, f->dev, f->fn, PCI_MEMORY_BASE, v);
}

static void ecam_bridge_pref_window(struct ecam_host *h, struct ecam_func *f,
				   uint64_t lo, uint64_t hi)
{
	uint32_t v = 0x0000fff0;

	if (hi > lo) {
		v = (uint32_t)((lo >> 16) & 0xfff0) |
		    (uint32_t)(((hi - 1) & 0xfff00000) & 0xffffffff);
		ecam_write32(h, f->bus, f->dev, f->fn, PCI_PREF_BASE_UPPER32,
			    (uint32_t)(lo >> 32));
		ecam_write32(h, f->bus, f->dev, f->fn, PCI_PREF_LIMIT_UPPER32,
			    (uint32_t)((hi - 1) >> 32));
	} else {
		ecam_write32(h, f->bus, f->dev, f->fn, PCI_PREF_BASE_UPPER32, 0);
		ecam_write32(h, f->bus, f->dev, f->fn, PCI_PREF_LIMIT_UPPER32, 0);
	}
	ecam_write32(h, f->bus, f->dev, f->fn, PCI_PREF_MEMORY_BASE, v);
}

static unsigned ecam_scan_bus(struct ecam_host *h, unsigned bus, unsigned depth);

/* At least @size from @lo in @w (a hot-plug port's window), not past its end */
static void ecam_window_room(struct ecam_window *w, uint64_t lo, uint64_t size)
{
	uint64_t end = w->pci_base + w->size;

	if (!w->valid || w->next - lo >= size)
		return;
	w->next = size > end - lo ? end : lo + size;
}

/* A bridge: its bus numbers, its subtree, then windows around the subtree. */
static void ecam_setup_bridge(struct ecam_host *h, struct ecam_func *f,
			     unsigned depth)
{
	uint64_t m_lo, m_hi, p_lo, p_hi;
	struct pci_hp_room room;
	unsigned sec;
	uint32_t v;
	bool hp;

	if (h->next_bus >= h->bus_end || depth > 16) {
		h->log("pci %02x:%02x.%x: no bus number left for a bridge\n",
		       f->bus, f->dev, f->fn);
		return;
	}
	sec = ++h->next_bus;
	/* Primary, secondary, subordinate 0xff while the subtree is scanned. */
	v = ecam_read32(h, f->bus, f->dev, f->fn, PCI_PRIMARY_BUS);
	v = (v & 0xff000000) | 0xff0000u | sec << 8 | f->bus;
	ecam_write32(h, f->bus, f->dev, f->fn, PCI_PRIMARY_BUS, v);
	/* No I/O window (we assign no I/O): base 0xf0 above limit 0. */
	ecam_write32(h, f->bus, f->dev, f->fn, PCI_IO_BASE_UPPER16, 0);
	ecam_write16(h, f->bus, f->dev, f->fn, PCI_IO_BASE, 0x00f0);

	h->mem32.next = ecam_align(h->mem32.next, PCI_BRIDGE_WINDOW_ALIGN);
	h->mem64.next = ecam_align(h->mem64.next, PCI_BRIDGE_WINDOW_ALIGN);
	m_lo = h->mem32.next;
	p_lo = h->mem64.next;
	f->secondary = (uint8_t)sec;
	(void)ecam_scan_bus(h, sec, depth + 1);
	hp = pci_hp_port_room((uint32_t)f->bus << 8 | f->dev << 3 | f->fn,
			      &room);
	/* A hot-plug port keeps bus numbers for a bridge or switch card. */
	if (hp && h->next_bus < sec + room.buses - 1)
		h->next_bus = sec + room.buses - 1 < h->bus_end ?
			      sec + room.buses - 1 : h->bus_end;
	f->subordinate = (uint8_t)h->next_bus;
	v = (v & 0xff00ffff) | (uint32_t)f->subordinate << 16;
	ecam_write32(h, f->bus, f->dev, f->fn, PCI_PRIMARY_BUS, v);
	h->mem32.next = ecam_align(h->mem32.next, PCI_BRIDGE_WINDOW_ALIGN);
	h->mem64.next = ecam_align(h->mem64.next, PCI_BRIDGE_WINDOW_ALIGN);
	if (hp) {
		/* Room for a card not there yet (prefetchable BARs go to
		 * the memory window when there is no 64-bit one). */
		ecam_window_room(&h->mem32, m_lo, room.mem +
				 (h->mem64.valid ? 0 : room.pref));
		if (h->mem64.valid)
			ecam_window_room(&h->mem64, p_lo, room.pref);
	}
	m_hi = h->mem32.next;
	p_hi = h->mem64.next;
	/* Windows are PCI addresses, like BARs. */
	ecam_bridge_mem_window(h, f, m_lo, m_hi);
	ecam_bridge_pref_window(h, f, h->mem64.valid ? p_lo : 0,
			       h->mem64.valid ? p_hi : 0);
}

static void ecam_add_func(struct ecam_host *h, unsigned bus, unsigned dev,
			 unsigned fn, unsigned depth)
{
	struct ecam_func *f;
	uint16_t cmd;

	if (h->nfuncs >= ECAM_MAX_FUNCS) {
		h->log("pci %02x:%02x.%x: more than %u functions, ignored\n",
		       bus, dev, fn, ECAM_MAX_FUNCS);
		return;
	}
	f = &h->funcs[h->nfuncs++];
	f->bus = (uint8_t)bus;
	f->dev = (uint8_t)dev;
	f->fn = (uint8_t)fn;
	f->vendor = ecam_read16(h, bus, dev, fn, PCI_VENDOR_ID);
	f->device = ecam_read16(h, bus, dev, fn, PCI_VENDOR_ID + 2);
	f->class = ecam_read32(h, bus, dev, fn, PCI_CLASS_REVISION) >> 8;
	f->hdr_type = ecam_read8(h, bus, dev, fn, PCI_HEADER_TYPE) & 0x7f;
	ecam_assign_bars(h, f, f->hdr_type == 1 ? 2 : f->hdr_type == 0 ? 6 : 0);
	if (f->hdr_type == 1)
		ecam_setup_bridge(h, f, depth);
	/* Memory decoding and bus mastering; I/O decoding stays off. */
	cmd = ecam_read16(h, bus, dev, fn, ECAM_COMMAND);
	cmd = (uint16_t)((cmd & ~1u) | ECAM_COMMAND_MEMORY | ECAM_COMMAND_MASTER);
	ecam_write16(h, bus, dev, fn, ECAM_COMMAND, cmd);
}

/* Scan one bus; return the highest bus number below it. */
static unsigned ecam_scan_bus(struct ecam_host *h, unsigned bus, unsigned depth)
{
	unsigned dev, fn, nfn;

	for (dev = 0; dev < 32; dev++) {
		if (ecam_read16(h, bus, dev, 0, PCI_VENDOR_ID) == 0xffff)
			continue;
		nfn = ecam_read8(h, bus, dev, 0, PCI_HEADER_TYPE) &
		      PCI_HEADER_MULTI ? 8 : 1;
		for (fn = 0; fn < nfn; fn++)
			if (ecam_read16(h, bus, dev, fn, PCI_VENDOR_ID) != 0xffff)
				ecam_add_func(h, bus, dev, fn, depth);
	}
	return h->next_bus;
}

unsigned ecam_enumerate(struct ecam_host *h)
{
	h->nfuncs = 0;
	h->next_bus = h->bus_start;
	h->mem32.next = h->mem32.pci_base;
	h->mem64.next = h->mem64.pci_base;
	ecam_scan_bus(h, h->bus_start, 0);
	return h->nfuncs;
}

unsigned ecam_find_cap(const struct ecam_host *h, const struct ecam_func *f,
		      unsigned id)
{
	unsigned off, n;

	if (!(ecam_read16(h, f->bus, f->dev, f->fn, ECAM_STATUS) &
	      ECAM_STATUS_CAP_LIST))
		return 0;
	off = ecam_read8(h, f->bus, f->dev, f->fn, ECAM_CAP_PTR) & 0xfc;
	/* At most 48 capabilities fit in 256 bytes: a loop cannot last. */
	for (n = 0; off >= 0x40 && n < 48; n++) {
		if (ecam_read8(h, f->bus, f->dev, f->fn, off) == id)
			return off;
		off = ecam_read8(h, f->bus, f->dev, f->fn, off + 1) & 0xfc;
	}
	return 0;
}
