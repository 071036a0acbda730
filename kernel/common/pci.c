/* SPDX-License-Identifier: MIT */
/*
 * pci.c - PCI configuration space and enumeration.
 *
 * ECAM (PCIe base spec 7.2.2): function (bus, dev, fn) owns the 4 KiB at
 * base + ((bus - start_bus) << 20 | dev << 15 | fn << 12). q35 puts the
 * 256 MiB window at 0xb0000000 (from the MCFG table, never assumed).
 * Enumeration walks bus 0 and, below every type-1 header, the secondary
 * bus the firmware assigned; then every other bus the ECAM window covers
 * that no bridge leads to, as the root bus of another host bridge (QEMU's
 * pxb-pcie, a second socket's root complex), with its own hierarchy. BARs
 * are read, sized with decoding off, and restored: their addresses are
 * the firmware's.
 */
#include "kernel.h"
#include "pci.h"
#if defined(__x86_64__)
#include "acpi.h"
#endif

struct pci_dev pci_devs[PCI_MAX_DEVS];
uint32_t pci_ndevs;

static uint64_t ecam;
static uint8_t bus_start, bus_end = 255;	/* 0xcf8 reaches 256 buses */
/* Buses scanned; buses in some bridge's secondary..subordinate range. */
static uint64_t bus_scanned[4], bus_bridged[4];

void pci_set_ecam(uint64_t base, uint8_t start, uint8_t end)
{
	bus_start = start;
	bus_end = end;
	ecam = (uint64_t)mm_map_mmio(base, ((uint64_t)(end - start) + 1) << 20);
}

#if defined(__x86_64__)
static struct spinlock cf8_lock;

void pci_init(void)
{
	if (acpi.have_mcfg)
		pci_set_ecam(acpi.ecam_base, acpi.ecam_bus_start,
			     acpi.ecam_bus_end);
}

/* Legacy mechanism #1 (0xcf8/0xcfc): the first 256 bytes only. */
static uint32_t cf8_read(uint32_t bdf, uint16_t off, uint32_t ones)
{
	uint32_t v;
	unsigned long flags;

	if (ecam || bdf >> 16 || off >= 256)
		return ones;
	flags = spin_lock_irqsave(&cf8_lock);
	outl(0xcf8, 0x80000000u | ((bdf & 0xffff) << 8) | (off & 0xfc));
	v = inl(0xcfc) >> (8 * (off & 3));
	spin_unlock_irqrestore(&cf8_lock, flags);
	return v & ones;
}

static void cf8_write(uint32_t bdf, uint16_t off, uint8_t width, uint32_t v)
{
	unsigned long flags;
	uint32_t shift = 8 * (off & 3), mask, old;

	if (ecam || bdf >> 16 || off >= 256)
		return;
	mask = width == 4 ? 0xffffffffu : ((1u << (8 * width)) - 1) << shift;
	flags = spin_lock_irqsave(&cf8_lock);
	outl(0xcf8, 0x80000000u | ((bdf & 0xffff) << 8) | (off & 0xfc));
	old = width == 4 ? 0 : inl(0xcfc);
	outl(0xcfc, (old & ~mask) | ((v << shift) & mask));
	spin_unlock_irqrestore(&cf8_lock, flags);
}
#else
/* Only ECAM: without it, nothing answers. */
static uint32_t cf8_read(uint32_t bdf, uint16_t off, uint32_t ones)
{
	(void)bdf;
	(void)off;
	return ones;
}

static void cf8_write(uint32_t bdf, uint16_t off, uint8_t width, uint32_t v)
{
	(void)bdf;
	(void)off;
	(void)width;
	(void)v;
}
#endif

static uint64_t ecam_addr(uint32_t bdf, uint16_t off)
{
	uint32_t bus = PCI_BUS(bdf);

	if (!ecam || bdf >> 16 || bus < bus_start || bus > bus_end)
		return 0;
	return ecam + ((uint64_t)(bus - bus_start) << 20) +
	       ((uint64_t)(bdf & 0xff) << 12) + off;
}

uint32_t pci_cfg_read(uint32_t bdf, uint16_t off, uint8_t width)
{
	uint64_t a = ecam_addr(bdf, off);
	uint32_t ones = width == 4 ? 0xffffffffu : (1u << (8 * width)) - 1;

	if (off >= 4096 || (off & (width - 1)))
		return ones;
	if (!a)
		return cf8_read(bdf, off, ones);
	switch (width) {
	case 1:
		return mmio_read8(a);
	case 2:
		return mmio_read16(a);
	default:
		return mmio_read32(a);
	}
}

void pci_cfg_write(uint32_t bdf, uint16_t off, uint8_t width, uint32_t v)
{
	uint64_t a = ecam_addr(bdf, off);

	if (off >= 4096 || (off & (width - 1)))
		return;
	if (!a) {
		cf8_write(bdf, off, width, v);
		return;
	}
	switch (width) {
	case 1:
		mmio_write8(a, (uint8_t)v);
		break;
	case 2:
		mmio_write16(a, (uint16_t)v);
		break;
	default:
		mmio_write32(a, v);
		break;
	}
	/* A read-back makes the write complete before we go on. */
	(void)mmio_read32(a & ~3ull);
}

struct pci_dev *pci_find(uint32_t bdf)
{
	for (uint32_t i = 0; i < pci_ndevs; i++) {
		if (pci_devs[i].present && pci_devs[i].bdf == bdf)
			return &pci_devs[i];
	}
	return NULL;
}

bool pci_gone(const struct pci_dev *d)
{
	/* A VF's Vendor ID always reads 0xffff (SR-IOV 3.4.1.1). */
	if (d->present && d->pf >= 0)
		return pci_cfg_read(d->bdf, 0x08, 4) == 0xffffffffu;
	return !d->present ||
	       (pci_cfg_read(d->bdf, 0x00, 2) & 0xffff) == 0xffff;
}

int pci_size_bar_at(uint32_t bdf, uint16_t off, bool last, struct pci_bar *b)
{
	uint32_t lo = pci_cfg_read(bdf, off, 4), hi = 0, mlo, mhi = 0xffffffffu;
	uint64_t mask;

	*b = (struct pci_bar){ .kind = PCI_BAR_NONE };
	pci_cfg_write(bdf, off, 4, 0xffffffffu);
	mlo = pci_cfg_read(bdf, off, 4);
	pci_cfg_write(bdf, off, 4, lo);
	if (mlo == 0)
		return 1;
	if (lo & 1) {
		b->kind = PCI_BAR_IO;
		b->addr = lo & ~3u;
		mask = (mlo & ~3u) | 0xffff0000u;
		b->size = (uint32_t)(~mask + 1);
		b->assigned = b->addr != 0;
		return 1;
	}
	b->prefetchable = (lo >> 3) & 1;
	if (((lo >> 1) & 3) == 2 && !last) {
		b->kind = PCI_BAR_MEM64;
		hi = pci_cfg_read(bdf, off + 4, 4);
		pci_cfg_write(bdf, off + 4, 4, 0xffffffffu);
		mhi = pci_cfg_read(bdf, off + 4, 4);
		pci_cfg_write(bdf, off + 4, 4, hi);
	} else {
		b->kind = PCI_BAR_MEM32;
	}
	mask = ((uint64_t)mhi << 32) | (mlo & ~0xfu);
	b->addr = ((uint64_t)hi << 32) | (lo & ~0xfu);
	b->size = ~mask + 1;
	b->assigned = b->addr != 0;
	return b->kind == PCI_BAR_MEM64 ? 2 : 1;
}

/* BAR @i of @d, with I/O and memory decoding off. */
static int size_bar(struct pci_dev *d, int i)
{
	return pci_size_bar_at(d->bdf, (uint16_t)(0x10 + 4 * i), i == 5,
			       &d->bar[i]);
}

static void find_caps(struct pci_dev *d)
{
	uint8_t ptr;

	if (!(pci_cfg_read(d->bdf, 0x06, 2) & (1u << 4)))
		return;
	ptr = (uint8_t)pci_cfg_read(d->bdf, d->header_type == 2 ? 0x14 : 0x34, 1);
	for (int n = 0; n < 48 && ptr >= 0x40; n++) {
		uint8_t id;

		ptr &= 0xfc;
		id = (uint8_t)pci_cfg_read(d->bdf, ptr, 1);
		if (id == 0x05 && !d->msi_cap)
			d->msi_cap = ptr;
		else if (id == 0x11 && !d->msix_cap)
			d->msix_cap = ptr;
		else if (id == 0x10 && !d->pcie_cap) {
			d->pcie_cap = ptr;
			d->pcie_type = (uint8_t)((pci_cfg_read(d->bdf, ptr + 2, 2) >> 4) & 0xf);
		}
		ptr = (uint8_t)pci_cfg_read(d->bdf, ptr + 1, 1);
	}
}

static void scan_bus(uint8_t bus, uint8_t root, int parent, int depth);

static void bus_mark(uint64_t *map, uint32_t first, uint32_t last)
{
	for (uint32_t b = first; b <= last && b < 256; b++)
		map[b / 64] |= 1ull << (b % 64);
}

static bool bus_test(const uint64_t *map, uint32_t bus)
{
	return (map[bus / 64] >> (bus % 64)) & 1;
}

/*
 * A new entry for the function at @bdf: a free one (hot removal leaves
 * holes) or the next. IDs, capabilities and BAR sizes are read; BAR
 * addresses are whatever the function holds (the firmware's at boot, 0
 * after a hot add). Returns its index, or -1 when nothing answers there
 * or the table is full.
 */
/* A free pci_devs entry, zeroed, present at @bdf; NULL when full. */
static struct pci_dev *new_entry(uint32_t bdf)
{
	struct pci_dev *d = NULL;

	for (uint32_t i = 0; i < pci_ndevs && !d; i++)
		if (!pci_devs[i].present)
			d = &pci_devs[i];
	if (!d && pci_ndevs >= PCI_MAX_DEVS) {
		kprintf("pci: more than %u functions, ignoring %02x:%02x.%u\n",
			PCI_MAX_DEVS, PCI_BUS(bdf), PCI_DEV(bdf), PCI_FN(bdf));
		return NULL;
	}
	if (!d)
		d = &pci_devs[pci_ndevs++];
	memset(d, 0, sizeof(*d));
	d->present = true;
	d->bdf = bdf;
	return d;
}

int pci_new_function(uint32_t bdf, uint8_t root, int parent)
{
	uint32_t id = pci_cfg_read(bdf, 0, 4);
	struct pci_dev *d = NULL;
	uint16_t cmd;
	int nbars;

	if ((id & 0xffff) == 0xffff || (id & 0xffff) == 0)
		return -1;
	d = new_entry(bdf);
	if (!d)
		return -1;
	d->vendor = (uint16_t)id;
	d->device = (uint16_t)(id >> 16);
	d->class = pci_cfg_read(bdf, 0x08, 4) >> 8;
	d->header_type = (uint8_t)pci_cfg_read(bdf, 0x0e, 1) & 0x7f;
	d->irq_pin = (uint8_t)pci_cfg_read(bdf, 0x3d, 1);
	d->parent = parent;
	d->root_bus = root;
	d->pf = -1;
	find_caps(d);

	nbars = d->header_type == 0 ? 6 : d->header_type == 1 ? 2 : 0;
	cmd = (uint16_t)pci_cfg_read(bdf, 0x04, 2);
	pci_cfg_write(bdf, 0x04, 2, cmd & ~3u);
	for (int i = 0; i < nbars;)
		i += size_bar(d, i);
	pci_cfg_write(bdf, 0x04, 2, cmd);
	return (int)(d - pci_devs);
}

int pci_new_vf(uint32_t bdf, int pf, uint16_t vendor, uint16_t device,
	       const uint64_t addr[6], const uint64_t size[6],
	       const bool is64[6])
{
	struct pci_dev *d = new_entry(bdf);

	if (!d)
		return -1;
	d->hotplug = true;
	d->fresh = PCI_FRESH_HOTPLUG;	/* VF Enable just made it */
	d->vendor = vendor;
	d->device = device;
	d->class = pci_cfg_read(bdf, 0x08, 4) >> 8;
	d->parent = pci_devs[pf].parent;
	d->root_bus = pci_devs[pf].root_bus;
	d->pf = pf;
	find_caps(d);
	/*
	 * Enable it as a PCI core enables any function (Linux's
	 * pci_enable_device()): Memory Space in Command. A VF's bit is
	 * read-only zero (its PF's VF MSE decides, SR-IOV 3.4.1.3), but QEMU
	 * 7.2 maps a VF's BARs only at a write to its configuration space.
	 */
	pci_cfg_write(bdf, 0x04, 2, pci_cfg_read(bdf, 0x04, 2) | 0x2);
	for (int i = 0; i < 6; i++) {
		if (!size[i])
			continue;
		d->bar[i] = (struct pci_bar){
			.kind = is64[i] ? PCI_BAR_MEM64 : PCI_BAR_MEM32,
			.assigned = addr[i] != 0, .addr = addr[i],
			.size = size[i],
		};
	}
	return (int)(d - pci_devs);
}

static void add_function(uint8_t bus, uint8_t dev, uint8_t fn, uint8_t root,
			 int parent, int depth)
{
	int idx = pci_new_function(PCI_BDF(bus, dev, fn), root, parent);
	struct pci_dev *d;

	if (idx < 0)
		return;
	d = &pci_devs[idx];
	if (d->header_type == 1) {
		int self = (int)(d - pci_devs);

		d->secondary = (uint8_t)pci_cfg_read(d->bdf, 0x19, 1);
		d->subordinate = (uint8_t)pci_cfg_read(d->bdf, 0x1a, 1);
		if (d->secondary > bus)
			bus_mark(bus_bridged, d->secondary, d->subordinate);
		if (d->secondary > bus && depth < 16 &&
		    !bus_test(bus_scanned, d->secondary))
			scan_bus(d->secondary, root, self, depth + 1);
	}
}

static void scan_bus(uint8_t bus, uint8_t root, int parent, int depth)
{
	bus_mark(bus_scanned, bus, bus);
	for (uint8_t dev = 0; dev < 32; dev++) {
		uint32_t id = pci_cfg_read(PCI_BDF(bus, dev, 0), 0, 4);
		uint8_t nfn;

		if ((id & 0xffff) == 0xffff)
			continue;
		nfn = pci_cfg_read(PCI_BDF(bus, dev, 0), 0x0e, 1) & 0x80 ? 8 : 1;
		for (uint8_t fn = 0; fn < nfn; fn++)
			add_function(bus, dev, fn, root, parent, depth);
	}
}

static bool bus_populated(uint8_t bus)
{
	for (uint8_t dev = 0; dev < 32; dev++) {
		if ((pci_cfg_read(PCI_BDF(bus, dev, 0), 0, 2) & 0xffff) != 0xffff)
			return true;
	}
	return false;
}

/*
 * The first bus of the window, then every bus no bridge leads to that
 * has a device: another host bridge's root bus. Buses inside a bridge's
 * secondary..subordinate range are never taken for roots (a hot-plug
 * port's spare buses are empty, and one that is not belongs to the
 * port). Scanning in increasing order lets a root's hierarchy claim its
 * buses before the scan reaches them. 8 K config reads at most.
 */
void pci_enumerate(void)
{
	uint32_t first = ecam ? bus_start : 0;

	pci_ndevs = 0;
	memset(bus_scanned, 0, sizeof(bus_scanned));
	memset(bus_bridged, 0, sizeof(bus_bridged));
	scan_bus((uint8_t)first, (uint8_t)first, -1, 0);
	for (uint32_t bus = first + 1; bus <= bus_end; bus++) {
		if (bus_test(bus_scanned, bus) || bus_test(bus_bridged, bus) ||
		    !bus_populated((uint8_t)bus))
			continue;
		kprintf("pci: root bus %02x (another host bridge)\n", bus);
		scan_bus((uint8_t)bus, (uint8_t)bus, -1, 0);
	}
}


/*
 * Up from *@d to the function on a root bus, turning INTx pin @p (0-3) as
 * each bridge does (PCI-to-PCI Bridge 1.2, 9.1: pin' = (pin + device) % 4
 * at each bridge). *@d ends at the root-bus function; returns its pin.
 */
static uint32_t swizzle_to_root(struct pci_dev **d, uint32_t p)
{
	while ((*d)->parent >= 0) {
		p = (p + PCI_DEV((*d)->bdf)) % 4;
		*d = &pci_devs[(*d)->parent];
	}
	return p;
}

#if defined(__x86_64__)
/*
 * q35 INTx routing, as QEMU 7.2 implements the ICH9 (hw/isa/lpc_ich9.c)
 * and describes it in its DSDT _PRT:
 *  - root-bus slots 0-24: INTx of slot s, pin p (0 = INTA) drives
 *    PIRQ (s + p) % 4 + 4, i.e. PIRQ E-H;
 *  - slots 25-29 and 31: the D<n>IR registers at their reset value 0x3210
 *    send INTA..INTD to PIRQ A..D;
 *  - slot 30 (the DMI-to-PCI bridge): INTA..INTD to PIRQ E..H.
 * PIRQ A-H are IO-APIC inputs 16-23, level-triggered, active low. Behind
 * bridges the pin is swizzled at each level: pin' = (pin + dev) % 4,
 * dev being the device number on the bridge's secondary bus.
 */
static uint32_t q35_root_pirq(uint32_t slot, uint32_t p)
{
	if (slot >= 25 && slot != 30)
		return p;
	if (slot == 30)
		return p + 4;
	return (slot + p) % 4 + 4;
}

/*
 * The slot of the one PCI expander bridge (pxb-pcie 1b36:000b, pxb
 * 1b36:0009) on bus 0, or -1 when there is none or several: which root
 * bus belongs to which expander is only said in AML, which we do not run.
 */
static int pxb_slot(void)
{
	int slot = -1;

	for (uint32_t i = 0; i < pci_ndevs; i++) {
		struct pci_dev *d = &pci_devs[i];

		if (!d->present || PCI_BUS(d->bdf) || d->vendor != 0x1b36 ||
		    (d->device != 0x000b && d->device != 0x0009))
			continue;
		if (slot >= 0)
			return -1;
		slot = (int)PCI_DEV(d->bdf);
	}
	return slot;
}

int pci_intx_gsi(uint32_t bdf, uint8_t pin)
{
	struct pci_dev *d = pci_find(bdf);
	uint32_t p, flat;
	int pxb;

	if (!d || pin < 1 || pin > 4)
		return -1;
	p = swizzle_to_root(&d, pin - 1u);
	if (!d->root_bus)
		return (int)(16 + q35_root_pirq(PCI_DEV(d->bdf), p));
	/*
	 * An expander's root bus (hw/pci-bridge/pci_expander_bridge.c,
	 * verified by 04-intx-routing.t): the pin is swizzled once more on
	 * the root bus, then the expander subtracts its own slot X, and the
	 * ICH9 looks the result up as pin (p - X) of slot X. The table is
	 * indexed flat (4 pins per slot), so a negative pin lands in an
	 * earlier slot's row: entry X * 4 + p - X.
	 */
	pxb = pxb_slot();
	if (pxb < 0)
		return -1;
	p = (p + PCI_DEV(d->bdf)) % 4;
	flat = (uint32_t)pxb * 3 + p;
	return (int)(16 + q35_root_pirq(flat / 4, flat % 4));
}
#else
/*
 * riscv64 and arm64: the root bus's slot and pin after the bridge swizzle
 * (pin' = (pin + dev) % 4 at each bridge, as above), then the host
 * bridge's interrupt-map, the architecture's (karch_intx_root()).
 */
int pci_intx_gsi(uint32_t bdf, uint8_t pin)
{
	struct pci_dev *d = pci_find(bdf);
	uint32_t p;

	if (!d || pin < 1 || pin > 4)
		return -1;
	p = swizzle_to_root(&d, pin - 1u);
	if (d->root_bus)
		return -1;
	return karch_intx_root(PCI_DEV(d->bdf), (uint8_t)(p + 1));
}
#endif

static const char *pci_bar_kind_name(enum pci_bar_kind k)
{
	switch (k) {
	case PCI_BAR_IO:
		return "io";
	case PCI_BAR_MEM32:
		return "mem32";
	case PCI_BAR_MEM64:
		return "mem64";
	default:
		return "none";
	}
}

/* The function's "pci" lines: IDs, capabilities, INTx route, BARs. */
void pci_print(const struct pci_dev *d)
{
	kprintf("pci 0000:%02x:%02x.%u %04x:%04x class %06x%s%s%s%s",
		PCI_BUS(d->bdf), PCI_DEV(d->bdf), PCI_FN(d->bdf),
		d->vendor, d->device, d->class,
		d->header_type == 1 ? " bridge" : "",
		d->msi_cap ? " msi" : "", d->msix_cap ? " msix" : "",
		d->pcie_cap ? " pcie" : "");
	if (d->header_type == 1)
		kprintf(" bus %u-%u", d->secondary, d->subordinate);
	if (d->irq_pin)
		kprintf(" pin %c gsi %d", 'A' + d->irq_pin - 1,
			pci_intx_gsi(d->bdf, d->irq_pin));
	kprintf("\n");
	if (d->msix_cap)
		kprintf("pci 0000:%02x:%02x.%u msix %s%s%s\n",
			PCI_BUS(d->bdf), PCI_DEV(d->bdf), PCI_FN(d->bdf),
			d->fresh == PCI_FRESH_BOOT ? "fresh (left untouched since reset)" :
			d->fresh == PCI_FRESH_FLR ? "fresh (function level reset)" :
			d->fresh == PCI_FRESH_HOTPLUG ? "fresh (hot-added)" :
			"not known fresh", d->stale[0] ? ": " : "", d->stale);
	for (int b = 0; b < 6; b++) {
		const struct pci_bar *bar = &d->bar[b];

		if (bar->kind == PCI_BAR_NONE)
			continue;
		kprintf("pci 0000:%02x:%02x.%u bar %d %s%s 0x%lx size 0x%lx%s\n",
			PCI_BUS(d->bdf), PCI_DEV(d->bdf), PCI_FN(d->bdf),
			b, pci_bar_kind_name(bar->kind),
			bar->prefetchable ? " prefetch" : "", bar->addr,
			bar->size, bar->assigned ? "" : " unassigned");
	}
}

int pci_read_msg(uint32_t bdf, bool msix, uint32_t index, uint64_t *addr,
		 uint32_t *data)
{
	const struct pci_dev *d = pci_find(bdf);

	if (!d)
		return -1;
	if (msix && d->msix_cap) {
		uint32_t t = pci_cfg_read(d->bdf, d->msix_cap + 4, 4);
		uint16_t ctl = (uint16_t)pci_cfg_read(d->bdf, d->msix_cap + 2, 2);
		const struct pci_bar *b;
		uint64_t e;

		if ((t & 7) > 5 || index > (ctl & 0x7ffu))
			return -1;
		b = &d->bar[t & 7];
		if (b->kind == PCI_BAR_IO || b->kind == PCI_BAR_NONE || !b->addr)
			return -1;
		e = (uint64_t)mm_map_mmio(b->addr + (t & ~7u) + 16ull * index,
					  16);
		*addr = mmio_read32(e) | (uint64_t)mmio_read32(e + 4) << 32;
		*data = mmio_read32(e + 8);
		return 0;
	}
	if (!msix && d->msi_cap) {
		uint16_t ctl = (uint16_t)pci_cfg_read(d->bdf, d->msi_cap + 2, 2);
		bool is64 = ctl & (1u << 7);
		uint32_t nmsg = 1u << ((ctl >> 4) & 7);

		if (index >= nmsg)
			return -1;
		*addr = pci_cfg_read(d->bdf, d->msi_cap + 4, 4);
		if (is64)
			*addr |= (uint64_t)pci_cfg_read(d->bdf, d->msi_cap + 8,
							4) << 32;
		*data = pci_cfg_read(d->bdf, d->msi_cap + (is64 ? 12 : 8), 2);
		/* Message i of a block: the function sets the data's low bits. */
		*data = (*data & ~(nmsg - 1)) | index;
		return 0;
	}
	return -1;
}

/* umsi.hp_mem= / umsi.hp_pref=: MiB, 1-1024, or @def (said once if bad). */
static uint64_t hp_room_mib(const char *key, uint64_t def)
{
	char val[24];
	const char *end;
	uint64_t v;

	if (!cmdline_value(key, val, sizeof(val)))
		return def;
	if (kstrtou64(val, &end, 0, &v) && !*end && v >= 1 && v <= 1024)
		return v << 20;
	kprintf("pci: %s=%s: not 1-1024 (MiB); %llu MiB kept\n", key, val,
		(unsigned long long)(def >> 20));
	return def;
}

/* umsi.hp_buses=: bus numbers a hot-plug port keeps, 1-32 (else 1). */
static uint32_t hp_room_buses(void)
{
	char val[24];
	const char *end;
	uint64_t v;

	if (!cmdline_value("umsi.hp_buses", val, sizeof(val)))
		return 1;
	if (kstrtou64(val, &end, 0, &v) && !*end && v >= 1 && v <= 32)
		return (uint32_t)v;
	kprintf("pci: umsi.hp_buses=%s: not 1-32; 1 kept\n", val);
	return 1;
}

/*
 * The first capability @id of bridge @bdf after the one at @after (0:
 * from the start of the list), or 0. Bounded: 48 steps, pointers below
 * 0x40 end the list.
 */
static uint8_t bridge_cap(uint32_t bdf, uint8_t id, uint8_t after)
{
	uint8_t ptr = (uint8_t)pci_cfg_read(bdf, after ? after + 1u : 0x34u, 1);

	for (int n = 0; n < 48 && ptr >= 0x40; n++) {
		ptr &= 0xfc;
		if (pci_cfg_read(bdf, ptr, 1) == id)
			return ptr;
		ptr = (uint8_t)pci_cfg_read(bdf, ptr + 1, 1);
	}
	return 0;
}

/*
 * QEMU's hint to firmware on its own bridges (vendor 0x1b36): a
 * vendor-specific capability of type 1 (resource reserve) whose dword at
 * +4 is the bus numbers to keep below the secondary one (the bridge's
 * bus-reserve= property; all-ones: no hint). SeaBIOS and OVMF honour it;
 * so does the kernel that enumerates like them. 0 without a hint.
 */
static uint32_t qemu_bus_reserve(uint32_t bdf)
{
	uint8_t ptr = 0;
	uint32_t res;

	if ((pci_cfg_read(bdf, 0x00, 2) & 0xffff) != 0x1b36)
		return 0;
	/* Each vendor-specific capability in turn (48 at most: a list
	 * may loop). */
	for (int n = 0; n < 48 && (ptr = bridge_cap(bdf, 0x09, ptr)); n++) {
		if (pci_cfg_read(bdf, ptr + 3, 1) == 1 &&
		    pci_cfg_read(bdf, ptr + 2, 1) >= 32 && ptr <= 0xf8) {
			res = pci_cfg_read(bdf, ptr + 4, 4);
			return res < 255 ? res : 0;
		}
	}
	return 0;
}

bool pci_hp_port_room(uint32_t bdf, struct pci_hp_room *room)
{
	static bool read;
	static struct pci_hp_room want;
	uint8_t ptr, type;
	uint16_t flags;
	uint32_t res;

	if (!(pci_cfg_read(bdf, 0x06, 2) & (1u << 4)) ||
	    (pci_cfg_read(bdf, 0x0e, 1) & 0x7f) != 1)
		return false;
	ptr = bridge_cap(bdf, 0x10, 0);
	if (!ptr)
		return false;
	flags = (uint16_t)pci_cfg_read(bdf, ptr + 2, 2);
	type = (flags >> 4) & 0xf;
	/* A root port (4) or a switch's downstream port (6), its slot
	 * implemented (bit 8) and Hot-Plug Capable (Slot Capabilities bit 6). */
	if ((type != 4 && type != 6) || !(flags & (1u << 8)) ||
	    !(pci_cfg_read(bdf, ptr + 0x14, 4) & (1u << 6)))
		return false;
	if (!read) {
		want.mem = hp_room_mib("umsi.hp_mem", 2ull << 20);
		want.pref = hp_room_mib("umsi.hp_pref", 2ull << 20);
		want.buses = hp_room_buses();
		read = true;
	}
	*room = want;
	res = qemu_bus_reserve(bdf) + 1;
	if (room->buses < res)
		room->buses = res;
	return true;
}

void pci_bring_up(void)
{
	pci_enumerate();
	pci_judge_fresh();
	pci_resources_init();
	for (uint32_t i = 0; i < pci_ndevs; i++)
		if (pci_devs[i].present)
			pci_print(&pci_devs[i]);
}
