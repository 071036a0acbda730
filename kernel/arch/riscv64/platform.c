/* SPDX-License-Identifier: MIT */
/*
 * platform.c - the machine description from the device tree.
 *
 * Bindings followed (Linux Documentation/devicetree/bindings):
 * riscv/cpus.yaml (cpu reg = hart ID, a riscv,cpu-intc child),
 * interrupt-controller/riscv,imsics.yaml (interrupts-extended lists one
 * <cpu-intc phandle, 9> per hart for the supervisor file, 11 for the
 * machine file; the files follow each other in reg, one 4 KiB page per
 * hart shifted left by riscv,guest-index-bits), pci/host-generic-pci.yaml
 * and the IEEE 1275 PCI bus binding for ranges.
 */
#include "kernel.h"
#include "dt_pci.h"
#include "platform.h"
#include "riscv.h"

#define IMSIC_FILE_SHIFT	12
/* ECAM gives each bus 1 MiB of configuration space (PCIe 7.2.2). */

static void platform_chosen(const struct fdt *fdt, struct rv_platform *p)
{
	const char *s;
	uint32_t len;
	int chosen = fdt_path(fdt, "/chosen", 7);

	p->bootargs = "";
	if (chosen < 0)
		return;
	s = fdt_getprop(fdt, chosen, "bootargs", &len);
	if (s && len && !s[len - 1])
		p->bootargs = s;
	/* stdout-path = "/soc/serial@10000000[:options]". */
	s = fdt_getprop(fdt, chosen, "stdout-path", &len);
	if (s && len && !s[len - 1]) {
		uint32_t n = 0;
		uint64_t size;
		int node;

		while (s[n] && s[n] != ':')
			n++;
		node = fdt_path(fdt, s, n);
		if (node >= 0 && fdt_is_compatible(fdt, node, "ns16550a") &&
		    !fdt_reg(fdt, node, 0, &p->uart_base, &size))
			p->uart_shift = fdt_prop_u32(fdt, node, "reg-shift", 0);
	}
}

static void platform_uart(const struct fdt *fdt, struct rv_platform *p)
{
	uint64_t size;
	int node;

	if (p->uart_base)
		return;
	node = fdt_find_compatible(fdt, -1, "ns16550a");
	if (node >= 0 && !fdt_reg(fdt, node, 0, &p->uart_base, &size))
		p->uart_shift = fdt_prop_u32(fdt, node, "reg-shift", 0);
}

static void platform_memory(const struct fdt *fdt, struct rv_platform *p)
{
	int node = fdt_find_device_type(fdt, -1, "memory");

	if (node >= 0)
		fdt_reg(fdt, node, 0, &p->mem_base, &p->mem_size);
}

static int platform_cpus(const struct fdt *fdt, struct rv_platform *p)
{
	int cpus = fdt_path(fdt, "/cpus", 5);
	int node = -1;

	if (cpus >= 0)
		p->timebase_hz = fdt_prop_u32(fdt, cpus, "timebase-frequency", 0);
	for (;;) {
		struct rv_hart *h;
		uint32_t len;
		const uint8_t *reg;
		int intc, depth = 0, n;

		node = fdt_find_device_type(fdt, node, "cpu");
		if (node < 0)
			break;
		if (!fdt_is_okay(fdt, node))
			continue;
		reg = fdt_getprop(fdt, node, "reg", &len);
		if (!reg || len < 4 || p->nharts == RV_MAX_HARTS)
			continue;
		h = &p->harts[p->nharts++];
		h->hartid = (uint32_t)fdt_read_cells(reg + len - 4, 1);
		/* The cpu's interrupt controller is a child of it. */
		intc = -1;
		for (n = fdt_next_node(fdt, -1, &depth); n >= 0;
		     n = fdt_next_node(fdt, n, &depth)) {
			if (n > node && fdt_parent(fdt, n) == node &&
			    fdt_is_compatible(fdt, n, "riscv,cpu-intc")) {
				intc = n;
				break;
			}
		}
		if (intc >= 0)
			h->intc_phandle = fdt_prop_u32(fdt, intc, "phandle", 0);
	}
	return p->nharts ? 0 : -FDT_ENOENT;
}

static struct rv_hart *platform_hart_by_intc(struct rv_platform *p,
					     uint32_t phandle)
{
	unsigned int i;

	for (i = 0; i < p->nharts; i++)
		if (phandle && p->harts[i].intc_phandle == phandle)
			return &p->harts[i];
	return NULL;
}

/*
 * Give every hart named in @node's interrupts-extended its interrupt
 * file: entry k is file k, counting through the reg ranges in order.
 */
static void platform_imsic_files(const struct fdt *fdt, int node,
				 struct rv_platform *p)
{
	uint64_t stride = 1ull << (IMSIC_FILE_SHIFT + p->imsic.guest_bits);
	uint64_t base = 0, size = 0, used = 0;
	const uint8_t *ie;
	uint32_t len, off;
	unsigned int reg = 0;

	ie = fdt_getprop(fdt, node, "interrupts-extended", &len);
	for (off = 0; ie && off + 8 <= len; off += 8) {
		uint32_t phandle = (uint32_t)fdt_read_cells(ie + off, 1);
		struct rv_hart *h = platform_hart_by_intc(p, phandle);

		while (used + stride > size) {
			if (fdt_reg(fdt, node, reg++, &base, &size))
				return;
			used = 0;
		}
		if (h)
			h->imsic_file = base + used;
		used += stride;
	}
}

static void platform_imsic(const struct fdt *fdt, struct rv_platform *p)
{
	int node = -1;

	for (;;) {
		const uint8_t *ie;
		uint32_t len;

		node = fdt_find_compatible(fdt, node, "riscv,imsics");
		if (node < 0)
			return;
		/* <phandle, irq>: cpu-intc has #interrupt-cells = 1. */
		ie = fdt_getprop(fdt, node, "interrupts-extended", &len);
		if (!ie || len < 8 || fdt_read_cells(ie + 4, 1) != IRQ_S_EXT)
			continue;
		if (fdt_reg(fdt, node, 0, &p->imsic.base, &p->imsic.size))
			continue;
		p->imsic.present = true;
		p->imsic.phandle = fdt_prop_u32(fdt, node, "phandle", 0);
		p->imsic.num_ids = fdt_prop_u32(fdt, node, "riscv,num-ids", 0);
		p->imsic.guest_bits = fdt_prop_u32(fdt, node,
						   "riscv,guest-index-bits", 0);
		if (p->imsic.guest_bits > 6)
			p->imsic.guest_bits = 6;
		platform_imsic_files(fdt, node, p);
		return;
	}
}

/*
 * ranges of a PCI host: <phys.hi phys.mid phys.lo> <parent address>
 * <size>, phys.hi bits 25:24 the space (1 I/O, 2 32-bit memory, 3 64-bit
 * memory) and bit 30 prefetchable.
 */
static void platform_pci_ranges(const struct fdt *fdt, int node,
				struct rv_platform *p)
{
	int parent = fdt_parent(fdt, node);
	uint32_t pa = parent >= 0 ? fdt_address_cells(fdt, parent) : 2;
	uint32_t sc = fdt_size_cells(fdt, node);
	uint32_t entry = (3 + pa + sc) * 4, len, i;
	const uint8_t *r = fdt_getprop(fdt, node, "ranges", &len);

	if (!r || !pa || pa > 2 || !sc || sc > 2)
		return;
	for (i = 0; i + entry <= len; i += entry) {
		uint32_t hi = (uint32_t)fdt_read_cells(r + i, 1);
		struct rv_pci_window w = {
			.pci_base = fdt_read_cells(r + i + 4, 2),
			.cpu_base = fdt_read_cells(r + i + 12, pa),
			.size = fdt_read_cells(r + i + 12 + pa * 4, sc),
			.prefetch = (hi >> 30) & 1,
		};

		switch ((hi >> 24) & 3) {
		case 1:
			p->pci.io = w;
			break;
		case 2:
			p->pci.mem32 = w;
			break;
		case 3:
			p->pci.mem64 = w;
			break;
		default:
			break;
		}
	}
}


/*
 * The S-level APLIC: a "riscv,aplic" whose msi-parent is the S-level
 * IMSIC (the M-level one's is the M-level IMSIC).
 */
static void platform_aplic(const struct fdt *fdt, struct rv_platform *p)
{
	int node = -1;

	if (!p->imsic.present)
		return;
	while ((node = fdt_find_compatible(fdt, node, "riscv,aplic")) >= 0) {
		if (fdt_prop_u32(fdt, node, "msi-parent", 0) != p->imsic.phandle ||
		    fdt_reg(fdt, node, 0, &p->aplic.base, &p->aplic.size))
			continue;
		p->aplic.present = true;
		p->aplic.phandle = fdt_prop_u32(fdt, node, "phandle", 0);
		p->aplic.num_sources = fdt_prop_u32(fdt, node,
						    "riscv,num-sources", 0);
		if (p->aplic.num_sources > 1023)
			p->aplic.num_sources = 1023;
		return;
	}
}

/*
 * interrupt-map entries toward the S-level APLIC (PCI bus binding 2.2.1.3:
 * <child unit address (3 cells)> <pin (1)> <phandle> <parent unit address
 * (the parent's #address-cells, 0 for an APLIC)> <parent specifier (its
 * #interrupt-cells, 2 for an APLIC: source, flags)>). An entry toward
 * another parent ends the walk: its length is not known here.
 */
static void platform_intx_map(const struct fdt *fdt, int node,
			      struct rv_platform *p)
{
	const uint8_t *m, *e;
	uint32_t len = 0, mlen = 0, off = 0;

	m = fdt_getprop(fdt, node, "interrupt-map-mask", &mlen);
	e = fdt_getprop(fdt, node, "interrupt-map", &len);
	if (!m || mlen != 16 || !e || !p->aplic.present)
		return;
	p->pci.intx_mask_dev = (uint32_t)fdt_read_cells(m, 1);
	p->pci.intx_mask_pin = (uint32_t)fdt_read_cells(m + 12, 1);
	while (off + 28 <= len && p->pci.nintx < RV_INTX_MAP_MAX) {
		struct rv_intx_map *x = &p->pci.intx[p->pci.nintx];
		uint32_t flags;

		if ((uint32_t)fdt_read_cells(e + off + 16, 1) != p->aplic.phandle)
			return;
		x->dev = (uint32_t)fdt_read_cells(e + off, 1);
		x->pin = (uint32_t)fdt_read_cells(e + off + 12, 1);
		x->source = (uint32_t)fdt_read_cells(e + off + 20, 1);
		flags = (uint32_t)fdt_read_cells(e + off + 24, 1);
		x->level_low = (flags & 0xf) == 8;
		if (x->source && x->source <= p->aplic.num_sources)
			p->pci.nintx++;
		off += 28;
	}
}

static void platform_pci(const struct fdt *fdt, struct rv_platform *p)
{
	int node = fdt_find_compatible(fdt, -1, "pci-host-ecam-generic");

	if (node < 0 || !fdt_is_okay(fdt, node) ||
	    fdt_reg(fdt, node, 0, &p->pci.ecam_base, &p->pci.ecam_size) ||
	    !dt_pci_buses(fdt, node, p->pci.ecam_base, p->pci.ecam_size,
			  &p->pci.bus_start, &p->pci.bus_end))
		return;
	p->pci.present = true;
	p->pci.msi_parent = fdt_prop_u32(fdt, node, "msi-parent", 0);
	platform_pci_ranges(fdt, node, p);
	platform_intx_map(fdt, node, p);
}

static void platform_test(const struct fdt *fdt, struct rv_platform *p)
{
	uint64_t size;
	int node = fdt_find_compatible(fdt, -1, "sifive,test0");

	if (node >= 0 && fdt_reg(fdt, node, 0, &p->test_base, &size))
		p->test_base = 0;
}

int rv_platform_parse(const struct fdt *fdt, struct rv_platform *p)
{
	int err;

	memset(p, 0, sizeof(*p));
	platform_chosen(fdt, p);
	platform_uart(fdt, p);
	platform_memory(fdt, p);
	err = platform_cpus(fdt, p);
	if (err)
		return err;
	platform_imsic(fdt, p);
	platform_aplic(fdt, p);
	platform_pci(fdt, p);
	platform_test(fdt, p);
	return p->uart_base ? 0 : -FDT_ENOENT;
}
