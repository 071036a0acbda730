/* SPDX-License-Identifier: MIT */
/*
 * ecam.c - PCI enumeration and BAR assignment over ECAM.
 *
 * Register offsets are from the PCI Local Bus Specification 3.0 (type 0
 * header, 6.1) and the PCI-to-PCI Bridge Architecture Specification 1.2
 * (type 1 header, 3.2); ECAM from PCI Express Base Specification 7.2.2:
 * bus << 20 | device << 15 | function << 12 | register.
 */
#include "ecam.h"
#include "pci.h"
#include "rv.h"

#define PCI_VENDOR_ID		0x00
#define PCI_COMMAND		0x04
#define  PCI_COMMAND_IO		0x1
#define  PCI_COMMAND_MEMORY	0x2
#define  PCI_COMMAND_MASTER	0x4
#define PCI_STATUS		0x06
#define  PCI_STATUS_CAP_LIST	0x10
#define PCI_CLASS_REVISION	0x08
#define PCI_HEADER_TYPE		0x0e
#define  PCI_HEADER_MULTI	0x80
#define PCI_BAR0		0x10
#define PCI_CAPABILITY_LIST	0x34
#define PCI_PRIMARY_BUS		0x18	/* primary, secondary, subordinate */
#define PCI_IO_BASE		0x1c
#define PCI_IO_LIMIT		0x1d
#define PCI_MEMORY_BASE		0x20
#define PCI_MEMORY_LIMIT	0x22
#define PCI_PREF_MEMORY_BASE	0x24
#define PCI_PREF_MEMORY_LIMIT	0x26
#define  PCI_PREF_RANGE_64	0x1
#define PCI_PREF_BASE_UPPER32	0x28
#define PCI_PREF_LIMIT_UPPER32	0x2c
#define PCI_IO_BASE_UPPER16	0x30
#define PCI_IO_LIMIT_UPPER16	0x32

#define ECAM_IO_GRANULE		0x1000ull
#define ECAM_MEM_GRANULE	0x100000ull
#define ECAM_MIN_IO		0x1000ull	/* keep I/O address 0 unused */
#define ECAM_MAX_DEPTH		32

static uint64_t ecam_addr(const struct ecam *e, unsigned int bus,
			  unsigned int dev, unsigned int fn, unsigned int off)
{
	return e->base + ((uint64_t)(bus - e->bus_start) << 20) +
	       ((dev & 31u) << 15) + ((fn & 7u) << 12) + (off & 0xfffu);
}

uint32_t ecam_read32(const struct ecam *e, unsigned int bus, unsigned int dev,
		     unsigned int fn, unsigned int off)
{
	return mmio_read32(ecam_addr(e, bus, dev, fn, off & ~3u));
}

uint16_t ecam_read16(const struct ecam *e, unsigned int bus, unsigned int dev,
		     unsigned int fn, unsigned int off)
{
	return mmio_read16(ecam_addr(e, bus, dev, fn, off & ~1u));
}

uint8_t ecam_read8(const struct ecam *e, unsigned int bus, unsigned int dev,
		   unsigned int fn, unsigned int off)
{
	return mmio_read8(ecam_addr(e, bus, dev, fn, off));
}

void ecam_write32(const struct ecam *e, unsigned int bus, unsigned int dev,
		  unsigned int fn, unsigned int off, uint32_t v)
{
	mmio_write32(ecam_addr(e, bus, dev, fn, off & ~3u), v);
}

void ecam_write16(const struct ecam *e, unsigned int bus, unsigned int dev,
		  unsigned int fn, unsigned int off, uint16_t v)
{
	mmio_write16(ecam_addr(e, bus, dev, fn, off & ~1u), v);
}

void ecam_write8(const struct ecam *e, unsigned int bus, unsigned int dev,
		 unsigned int fn, unsigned int off, uint8_t v)
{
	mmio_write8(ecam_addr(e, bus, dev, fn, off), v);
}

static uint64_t ecam_align(uint64_t v, uint64_t a)
{
	return (v + a - 1) & ~(a - 1);
}

static void ecam_space_init(struct ecam_space *s, const struct rv_pci_window *w,
			    uint64_t min)
{
	s->next = w->pci_base > min ? w->pci_base : min;
	s->end = w->size ? w->pci_base + w->size : s->next;
	s->cpu_offset = w->cpu_base - w->pci_base;
}

/* At least @size from @lo in @s (a hot-plug port's window), not past its end */
static void ecam_space_room(struct ecam_space *s, uint64_t lo, uint64_t size)
{
	if (s->end <= lo || s->next - lo >= size)
		return;
	s->next = size > s->end - lo ? s->end : lo + size;
}

/* Take @size bytes aligned to @size; false when the window is full. */
static bool ecam_space_take(struct ecam_space *s, uint64_t size, uint64_t *pci)
{
	uint64_t at = ecam_align(s->next, size);

	if (at < s->next || at > s->end || s->end - at < size)
		return false;
	*pci = at;
	s->next = at + size;
	return true;
}

/*
 * Size BAR @i (and its upper half for a 64-bit BAR) with decoding off,
 * leaving all ones in it. Return the BARs it spans (1 or 2), 0 when the
 * BAR is not implemented.
 */
static unsigned int ecam_bar_size(const struct ecam *e, struct ecam_func *f,
				  unsigned int i, unsigned int nbars,
				  struct ecam_bar *b)
{
	unsigned int off = PCI_BAR0 + 4 * i;
	uint32_t lo, mlo, mhi = 0xffffffffu;
	uint64_t mask;

	lo = ecam_read32(e, f->bus, f->dev, f->fn, off);
	ecam_write32(e, f->bus, f->dev, f->fn, off, 0xffffffffu);
	mlo = ecam_read32(e, f->bus, f->dev, f->fn, off);
	if (lo & 1) {
		b->kind = ECAM_BAR_IO;
		mask = 0xffffffff00000000ull | (mlo & ~3u);
		if (!(mlo & 0xffff0000u))	/* 16-bit I/O decoder */
			mask |= 0xffff0000u;
	} else {
		b->prefetch = lo & 8;
		b->kind = ((lo >> 1) & 3) == 2 && i + 1 < nbars ?
			  ECAM_BAR_MEM64 : ECAM_BAR_MEM32;
		if (b->kind == ECAM_BAR_MEM64) {
			ecam_write32(e, f->bus, f->dev, f->fn, off + 4,
				     0xffffffffu);
			mhi = ecam_read32(e, f->bus, f->dev, f->fn, off + 4);
		}
		mask = (uint64_t)mhi << 32 | (mlo & ~0xfu);
	}
	if (!(mlo & ~0xfu) || mask == ~0ull) {
		ecam_write32(e, f->bus, f->dev, f->fn, off, lo);
		b->kind = ECAM_BAR_NONE;
		return 1;
	}
	b->size = ~mask + 1;
	return b->kind == ECAM_BAR_MEM64 ? 2 : 1;
}

static void ecam_bar_write(const struct ecam *e, const struct ecam_func *f,
			   unsigned int i, const struct ecam_bar *b)
{
	unsigned int off = PCI_BAR0 + 4 * i;

	ecam_write32(e, f->bus, f->dev, f->fn, off, (uint32_t)b->pci_addr);
	if (b->kind == ECAM_BAR_MEM64)
		ecam_write32(e, f->bus, f->dev, f->fn, off + 4,
			     (uint32_t)(b->pci_addr >> 32));
}

/* Size and place @nbars BARs; return the command bits they need. */
static uint16_t ecam_assign_bars(struct ecam *e, struct ecam_func *f,
				 unsigned int nbars, bool pref64_ok)
{
	uint16_t need = 0;
	unsigned int i = 0;

	while (i < nbars) {
		struct ecam_bar *b = &f->bar[i];
		struct ecam_space *s;
		unsigned int span = ecam_bar_size(e, f, i, nbars, b);

		if (b->kind == ECAM_BAR_NONE) {
			i += span;
			continue;
		}
		if (b->kind == ECAM_BAR_IO)
			s = &e->io;
		else if (b->kind == ECAM_BAR_MEM64 && b->prefetch &&
			 pref64_ok && e->mem64.end > e->mem64.next)
			s = &e->mem64;
		else
			s = &e->mem32;
		b->assigned = ecam_space_take(s, b->size, &b->pci_addr);
		if (b->kind == ECAM_BAR_MEM32 && b->pci_addr >> 32)
			b->assigned = false;
		if (!b->assigned)
			b->pci_addr = 0;	/* 0: unassigned, never decoded */
		b->cpu_addr = b->assigned ? b->pci_addr + s->cpu_offset : 0;
		ecam_bar_write(e, f, i, b);
		if (b->assigned)
			need |= b->kind == ECAM_BAR_IO ? PCI_COMMAND_IO :
							 PCI_COMMAND_MEMORY;
		i += span;
	}
	return need;
}

static void ecam_report(const struct ecam_func *f)
{
	char bars[384];
	size_t n = 0;
	unsigned int i;
	static const char *const kinds[] = { "none", "io", "mem32", "mem64" };

	bars[0] = 0;
	for (i = 0; i < 6 && n < sizeof(bars); i++) {
		const struct ecam_bar *b = &f->bar[i];

		if (b->kind == ECAM_BAR_NONE)
			continue;
		n += (size_t)ksnprintf(bars + n, sizeof(bars) - n,
			"%s{\"bar\":%u,\"kind\":\"%s\",\"prefetch\":%s,"
			"\"addr\":\"0x%lx\",\"size\":\"0x%lx\",\"assigned\":%s}",
			n ? "," : "", i, kinds[b->kind],
			b->prefetch ? "true" : "false",
			(unsigned long)b->cpu_addr, (unsigned long)b->size,
			b->assigned ? "true" : "false");
	}
	kprintf("UMSI {\"event\":\"pci\",\"bdf\":\"0000:%02x:%02x.%u\","
		"\"vendor\":\"0x%04x\",\"device\":\"0x%04x\",\"class\":\"0x%06x\","
		"\"bridge\":%s,\"secondary\":%u,\"subordinate\":%u,\"bars\":[%s]}\n",
		f->bus, f->dev, f->fn, f->vendor, f->device, f->class_rev >> 8,
		f->bridge ? "true" : "false", f->secondary, f->subordinate,
		bars);
}

static void ecam_scan_bus(struct ecam *e, uint32_t bus, int depth,
			  bool pref64_ok);

/* A window register pair: [start, end) or closed when empty. */
static void ecam_bridge_windows(const struct ecam *e, const struct ecam_func *f,
				uint64_t io0, uint64_t io1, uint64_t m0,
				uint64_t m1, uint64_t p0, uint64_t p1)
{
	unsigned int b = f->bus, d = f->dev, fn = f->fn;

	if (io1 > io0) {
		ecam_write16(e, b, d, fn, PCI_IO_BASE_UPPER16, (uint16_t)(io0 >> 16));
		ecam_write16(e, b, d, fn, PCI_IO_LIMIT_UPPER16,
			     (uint16_t)((io1 - 1) >> 16));
		ecam_write8(e, b, d, fn, PCI_IO_BASE, (uint8_t)((io0 >> 8) & 0xf0));
		ecam_write8(e, b, d, fn, PCI_IO_LIMIT,
			    (uint8_t)(((io1 - 1) >> 8) & 0xf0));
	} else {
		ecam_write8(e, b, d, fn, PCI_IO_BASE, 0xf0);
		ecam_write8(e, b, d, fn, PCI_IO_LIMIT, 0);
		ecam_write16(e, b, d, fn, PCI_IO_BASE_UPPER16, 0);
		ecam_write16(e, b, d, fn, PCI_IO_LIMIT_UPPER16, 0);
	}
	if (m1 > m0) {
		ecam_write16(e, b, d, fn, PCI_MEMORY_BASE,
			     (uint16_t)((m0 >> 16) & 0xfff0));
		ecam_write16(e, b, d, fn, PCI_MEMORY_LIMIT,
			     (uint16_t)(((m1 - 1) >> 16) & 0xfff0));
	} else {
		ecam_write16(e, b, d, fn, PCI_MEMORY_BASE, 0xfff0);
		ecam_write16(e, b, d, fn, PCI_MEMORY_LIMIT, 0);
	}
	if (p1 > p0) {
		ecam_write32(e, b, d, fn, PCI_PREF_BASE_UPPER32, (uint32_t)(p0 >> 32));
		ecam_write32(e, b, d, fn, PCI_PREF_LIMIT_UPPER32,
			     (uint32_t)((p1 - 1) >> 32));
		ecam_write16(e, b, d, fn, PCI_PREF_MEMORY_BASE,
			     (uint16_t)((p0 >> 16) & 0xfff0));
		ecam_write16(e, b, d, fn, PCI_PREF_MEMORY_LIMIT,
			     (uint16_t)(((p1 - 1) >> 16) & 0xfff0));
	} else {
		ecam_write16(e, b, d, fn, PCI_PREF_MEMORY_BASE, 0xfff0);
		ecam_write16(e, b, d, fn, PCI_PREF_MEMORY_LIMIT, 0);
		ecam_write32(e, b, d, fn, PCI_PREF_BASE_UPPER32, 0);
		ecam_write32(e, b, d, fn, PCI_PREF_LIMIT_UPPER32, 0);
	}
}

/*
 * A bridge: the next bus number below it, subordinate open while its
 * side is scanned (so configuration cycles reach deeper buses), then
 * closed at the highest number used, and windows around what its side
 * got, each aligned to the bridge's granule.
 */
static uint16_t ecam_bridge(struct ecam *e, struct ecam_func *f, int depth,
			    bool pref64_ok)
{
	uint32_t reg = ecam_read32(e, f->bus, f->dev, f->fn, PCI_PRIMARY_BUS);
	uint64_t io0, m0, p0;
	struct pci_hp_room room;
	bool pref64;

	if (e->last_bus >= e->bus_end || depth >= ECAM_MAX_DEPTH) {
		kprintf("pci: no bus number left for bridge %02x:%02x.%u\n",
			f->bus, f->dev, f->fn);
		ecam_write32(e, f->bus, f->dev, f->fn, PCI_PRIMARY_BUS,
			     reg & 0xff000000u);
		return 0;
	}
	f->secondary = (uint8_t)++e->last_bus;
	ecam_write32(e, f->bus, f->dev, f->fn, PCI_PRIMARY_BUS,
		     (reg & 0xff000000u) | e->bus_end << 16 |
		     (uint32_t)f->secondary << 8 | f->bus);
	pref64 = pref64_ok && (ecam_read8(e, f->bus, f->dev, f->fn,
			PCI_PREF_MEMORY_BASE) & 0xf) == PCI_PREF_RANGE_64;

	e->io.next = ecam_align(e->io.next, ECAM_IO_GRANULE);
	e->mem32.next = ecam_align(e->mem32.next, ECAM_MEM_GRANULE);
	e->mem64.next = ecam_align(e->mem64.next, ECAM_MEM_GRANULE);
	io0 = e->io.next;
	m0 = e->mem32.next;
	p0 = e->mem64.next;

	ecam_scan_bus(e, f->secondary, depth + 1, pref64);

	if (pci_hp_port_room((uint32_t)f->bus << 8 | f->dev << 3 | f->fn,
			     &room)) {
		/* Room for a card not there yet (prefetchable BARs go to
		 * the memory window when the port has no 64-bit one), and
		 * bus numbers for a bridge or switch card. */
		ecam_space_room(&e->mem32, m0, room.mem +
				(pref64 && e->mem64.end > p0 ? 0 : room.pref));
		if (pref64)
			ecam_space_room(&e->mem64, p0, room.pref);
		if (e->last_bus < f->secondary + room.buses - 1)
			e->last_bus = f->secondary + room.buses - 1 <
				      e->bus_end ? f->secondary + room.buses - 1 :
				      e->bus_end;
	}
	f->subordinate = (uint8_t)e->last_bus;
	ecam_write32(e, f->bus, f->dev, f->fn, PCI_PRIMARY_BUS,
		     (reg & 0xff000000u) | (uint32_t)f->subordinate << 16 |
		     (uint32_t)f->secondary << 8 | f->bus);
	/* Round up, but never past a window's end. */
	e->io.next = ecam_align(e->io.next, ECAM_IO_GRANULE);
	e->mem32.next = ecam_align(e->mem32.next, ECAM_MEM_GRANULE);
	e->mem64.next = ecam_align(e->mem64.next, ECAM_MEM_GRANULE);
	if (e->io.next > e->io.end)
		e->io.next = e->io.end;
	if (e->mem32.next > e->mem32.end)
		e->mem32.next = e->mem32.end;
	if (e->mem64.next > e->mem64.end)
		e->mem64.next = e->mem64.end;
	ecam_bridge_windows(e, f, io0, e->io.next, m0, e->mem32.next,
			    p0, e->mem64.next);
	return (e->io.next > io0 ? PCI_COMMAND_IO : 0) |
	       (e->mem32.next > m0 || e->mem64.next > p0 ?
		PCI_COMMAND_MEMORY : 0);
}

static void ecam_function(struct ecam *e, uint32_t bus, unsigned int dev,
			  unsigned int fn, uint8_t hdr, int depth,
			  bool pref64_ok)
{
	struct ecam_func scratch, *f;
	uint16_t cmd, need;

	if (e->nfuncs < ECAM_MAX_FUNCS) {
		f = &e->funcs[e->nfuncs++];
	} else {
		f = &scratch;	/* enabled all the same, just not listed */
		e->dropped++;
	}
	memset(f, 0, sizeof(*f));
	f->bus = (uint8_t)bus;
	f->dev = (uint8_t)dev;
	f->fn = (uint8_t)fn;
	f->vendor = ecam_read16(e, bus, dev, fn, PCI_VENDOR_ID);
	f->device = ecam_read16(e, bus, dev, fn, PCI_VENDOR_ID + 2);
	f->class_rev = ecam_read32(e, bus, dev, fn, PCI_CLASS_REVISION);
	f->bridge = (hdr & 0x7f) == 1;

	/* Decoding off while BARs hold sizing patterns and new addresses. */
	cmd = ecam_read16(e, bus, dev, fn, PCI_COMMAND);
	cmd &= (uint16_t)~(PCI_COMMAND_IO | PCI_COMMAND_MEMORY |
			   PCI_COMMAND_MASTER);
	ecam_write16(e, bus, dev, fn, PCI_COMMAND, cmd);
	switch (hdr & 0x7f) {
	case 0:
		need = ecam_assign_bars(e, f, 6, pref64_ok);
		break;
	case 1:
		need = ecam_assign_bars(e, f, 2, pref64_ok);
		need |= ecam_bridge(e, f, depth, pref64_ok);
		break;
	default:
		need = 0;	/* CardBus and unknown layouts: left off */
		break;
	}
	/* Bus mastering also lets a bridge forward its side's MSI writes. */
	if ((hdr & 0x7f) <= 1)
		cmd |= need | PCI_COMMAND_MASTER;
	ecam_write16(e, bus, dev, fn, PCI_COMMAND, cmd);
	ecam_report(f);		/* a bridge after the functions below it */
}

static void ecam_scan_bus(struct ecam *e, uint32_t bus, int depth,
			  bool pref64_ok)
{
	unsigned int dev, fn;

	for (dev = 0; dev < 32; dev++) {
		for (fn = 0; fn < 8; fn++) {
			uint16_t vendor = ecam_read16(e, bus, dev, fn,
						      PCI_VENDOR_ID);
			uint8_t hdr;

			if (vendor == 0xffff || vendor == 0) {
				if (fn == 0)
					break;
				continue;
			}
			hdr = ecam_read8(e, bus, dev, fn, PCI_HEADER_TYPE);
			ecam_function(e, bus, dev, fn, hdr, depth, pref64_ok);
			if (fn == 0 && !(hdr & PCI_HEADER_MULTI))
				break;
		}
	}
}

int ecam_enumerate(struct ecam *e, const struct rv_platform *p)
{
	memset(e, 0, sizeof(*e));
	if (!p->pci.present)
		return -FDT_ENOENT;
	e->base = p->pci.ecam_base;
	e->bus_start = p->pci.bus_start;
	e->bus_end = p->pci.bus_end;
	e->last_bus = e->bus_start;
	ecam_space_init(&e->io, &p->pci.io, ECAM_MIN_IO);
	ecam_space_init(&e->mem32, &p->pci.mem32, 0);
	ecam_space_init(&e->mem64, &p->pci.mem64, 0);
	ecam_scan_bus(e, e->bus_start, 0, true);
	kprintf("pci: %u functions on buses %u-%u%s\n", e->nfuncs,
		e->bus_start, e->last_bus,
		e->dropped ? " (some not listed)" : "");
	return 0;
}

struct ecam_func *ecam_find(struct ecam *e, uint16_t vendor, uint16_t device,
			    unsigned int index)
{
	unsigned int i;

	for (i = 0; i < e->nfuncs; i++)
		if (e->funcs[i].vendor == vendor &&
		    e->funcs[i].device == device && !index--)
			return &e->funcs[i];
	return NULL;
}

unsigned int ecam_find_cap(const struct ecam *e, const struct ecam_func *f,
			   uint8_t id)
{
	unsigned int pos, n;

	if (!(ecam_read16(e, f->bus, f->dev, f->fn, PCI_STATUS) &
	      PCI_STATUS_CAP_LIST))
		return 0;
	pos = ecam_read8(e, f->bus, f->dev, f->fn, PCI_CAPABILITY_LIST);
	/* At most 48 capabilities fit above the header: a loop ends. */
	for (n = 0; n < 48 && pos >= 0x40; n++) {
		pos &= ~3u;
		if (ecam_read8(e, f->bus, f->dev, f->fn, pos) == id)
			return pos;
		pos = ecam_read8(e, f->bus, f->dev, f->fn, pos + 1);
	}
	return 0;
}
