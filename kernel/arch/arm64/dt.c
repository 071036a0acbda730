// SPDX-License-Identifier: MIT
/*
 * dt.c - the platform as the device tree describes it: console, memory,
 * PSCI, CPUs, GICv3 with its ITS, and the generic ECAM PCI host bridge
 * (bindings: Documentation/devicetree/bindings in Linux, for facts only:
 * arm/psci, interrupt-controller/arm,gic-v3, pci/host-generic-pci,
 * pci/pci-msi).
 */
#include "console.h"
#include "a64.h"
#include "dt_pci.h"

static void dt_console(const struct fdt *f, struct platform *p)
{
	uint64_t size;
	int n = fdt_find_compatible(f, -1, "arm,pl011");

	if (n >= 0 && !fdt_reg(f, n, 0, &p->uart, &size)) {
		console_set_base(p->uart);
		kprintf("dt: console pl011 at 0x%llx\n",
			(unsigned long long)p->uart);
	}
}

static void dt_chosen_memory(const struct fdt *f, struct platform *p)
{
	int depth = 0, n, chosen = fdt_path(f, "/chosen", 7);
	uint32_t len;
	const char *args = fdt_getprop(f, chosen, "bootargs", &len);

	/* Only a NUL-terminated string inside the blob is used. */
	p->bootargs = args && len && !args[len - 1] ? args : "";
	kprintf("dt: bootargs \"%s\"\n", p->bootargs);
	for (n = fdt_next_node(f, -1, &depth); n >= 0;
	     n = fdt_next_node(f, n, &depth)) {
		if (depth == 1 &&
		    fdt_prop_has_string(f, n, "device_type", "memory") &&
		    !fdt_reg(f, n, 0, &p->mem_base, &p->mem_size))
			break;
	}
	kprintf("dt: memory 0x%llx size 0x%llx\n",
		(unsigned long long)p->mem_base, (unsigned long long)p->mem_size);
}

static int dt_cpus(const struct fdt *f, struct platform *p)
{
	int cpus = fdt_path(f, "/cpus", 5), psci, n, depth = 0;
	uint64_t mpidr, size;

	psci = fdt_find_compatible(f, -1, "arm,psci-0.2");
	if (psci < 0)
		psci = fdt_find_compatible(f, -1, "arm,psci");
	if (psci < 0) {
		kprintf("dt: no psci node\n");
		return -1;
	}
	p->psci_hvc = fdt_prop_has_string(f, psci, "method", "hvc");
	/* PSCI 0.2 fixes CPU_ON (SMC64) at 0xc4000003; "cpu_on" may say. */
	p->psci_cpu_on = fdt_prop_u32(f, psci, "cpu_on", 0xc4000003);
	kprintf("dt: psci via %s, CPU_ON 0x%x\n", p->psci_hvc ? "hvc" : "smc",
		p->psci_cpu_on);

	for (n = fdt_next_node(f, cpus, &depth); n >= 0 && depth > 0;
	     n = fdt_next_node(f, n, &depth)) {
		if (depth != 1 ||
		    !fdt_prop_has_string(f, n, "device_type", "cpu"))
			continue;
		if (fdt_reg_raw(f, n, 0, &mpidr, &size))
			continue;
		if (p->ncpus >= ARM64_MAX_CPUS) {
			kprintf("dt: cpu mpidr 0x%llx beyond %u CPUs, ignored\n",
				(unsigned long long)mpidr, ARM64_MAX_CPUS);
			continue;
		}
		p->mpidr[p->ncpus] = mpidr;
		kprintf("dt: cpu %u mpidr 0x%llx%s\n", p->ncpus,
			(unsigned long long)mpidr,
			fdt_prop_has_string(f, n, "enable-method", "psci") ?
			"" : " (enable-method is not psci)");
		p->ncpus++;
	}
	return p->ncpus ? 0 : -1;
}

/*
 * A GICv2 (QEMU virt's gic-version=2: "arm,cortex-a15-gic"; "arm,gic-400"
 * on hardware): the distributor and CPU interface, and a v2m frame child
 * ("arm,gic-v2m-frame") if there is one.
 */
static int dt_gicv2(const struct fdt *f, struct platform *p)
{
	int g = fdt_find_compatible(f, -1, "arm,cortex-a15-gic"), v;
	uint64_t size;

	if (g < 0)
		g = fdt_find_compatible(f, -1, "arm,gic-400");
	if (g < 0 || fdt_reg(f, g, 0, &p->gicd, &size) ||
	    fdt_reg(f, g, 1, &p->gicc, &size)) {
		kprintf("dt: no arm,gic-v3, arm,cortex-a15-gic or arm,gic-400 node\n");
		return -1;
	}
	p->gic_version = 2;
	p->gic_phandle = fdt_prop_u32(f, g, "phandle", 0);
	p->gic_addr_cells = fdt_prop_u32(f, g, "#address-cells", 0);
	p->gic_int_cells = fdt_prop_u32(f, g, "#interrupt-cells", 3);
	kprintf("dt: gicv2 distributor 0x%llx cpu interface 0x%llx\n",
		(unsigned long long)p->gicd, (unsigned long long)p->gicc);
	for (v = fdt_find_compatible(f, g, "arm,gic-v2m-frame"); v >= 0;
	     v = fdt_find_compatible(f, v, "arm,gic-v2m-frame"))
		if (fdt_parent(f, v) == g)
			break;
	if (v >= 0 && !fdt_reg(f, v, 0, &p->v2m, &size)) {
		p->v2m_phandle = fdt_prop_u32(f, v, "phandle", 0);
		kprintf("dt: v2m frame 0x%llx size 0x%llx phandle 0x%x%s\n",
			(unsigned long long)p->v2m, (unsigned long long)size,
			p->v2m_phandle, fdt_getprop(f, v, "msi-controller", NULL) ?
			" msi-controller" : "");
	} else {
		kprintf("dt: no arm,gic-v2m-frame child of the GIC: no MSI\n");
	}
	return 0;
}

static int dt_gic(const struct fdt *f, struct platform *p)
{
	int g = fdt_find_compatible(f, -1, "arm,gic-v3"), its;
	unsigned i, nr;
	uint64_t size;

	if (g < 0)
		return dt_gicv2(f, p);
	if (fdt_reg(f, g, 0, &p->gicd, &size)) {
		kprintf("dt: arm,gic-v3 node without its distributor\n");
		return -1;
	}
	p->gic_version = 3;
	p->gic_phandle = fdt_prop_u32(f, g, "phandle", 0);
	p->gic_addr_cells = fdt_prop_u32(f, g, "#address-cells", 0);
	p->gic_int_cells = fdt_prop_u32(f, g, "#interrupt-cells", 3);
	nr = fdt_prop_u32(f, g, "#redistributor-regions", 1);
	for (i = 0; i < nr && i < GIC_MAX_RDIST_REGIONS; i++)
		if (!fdt_reg(f, g, 1 + i, &p->gicr[i], &p->gicr_size[i]))
			p->gicr_regions++;
	kprintf("dt: gicv3 distributor 0x%llx, %u redistributor region(s)",
		(unsigned long long)p->gicd, p->gicr_regions);
	for (i = 0; i < p->gicr_regions; i++)
		kprintf(" 0x%llx+0x%llx", (unsigned long long)p->gicr[i],
			(unsigned long long)p->gicr_size[i]);
	kprintf("\n");

	/* The ITS is a child of the GIC node (its reg in the GIC's cells). */
	for (its = fdt_find_compatible(f, g, "arm,gic-v3-its"); its >= 0;
	     its = fdt_find_compatible(f, its, "arm,gic-v3-its"))
		if (fdt_parent(f, its) == g)
			break;
	if (its >= 0 && !fdt_reg(f, its, 0, &p->its, &p->its_size)) {
		p->its_phandle = fdt_prop_u32(f, its, "phandle", 0);
		kprintf("dt: its 0x%llx size 0x%llx phandle 0x%x%s\n",
			(unsigned long long)p->its,
			(unsigned long long)p->its_size, p->its_phandle,
			fdt_getprop(f, its, "msi-controller", NULL) ?
			" msi-controller" : "");
	} else {
		kprintf("dt: no arm,gic-v3-its child of the GIC\n");
	}
	return p->gicr_regions ? 0 : -1;
}

/* One entry of the host bridge's "ranges" (PCI bus binding 2.2.1.1). */
static void dt_pci_range(struct platform *p, const uint8_t *e, unsigned pac)
{
	uint32_t hi = fdt_be32(e);
	uint64_t pci = fdt_read_cells(e + 4, 2);
	uint64_t cpu = fdt_read_cells(e + 12, pac);
	uint64_t size = fdt_read_cells(e + 12 + 4 * pac, 2);
	unsigned space = hi >> 24 & 3;
	struct ecam_window *w = NULL;

	if (space == 2)
		w = &p->mem32;
	else if (space == 3)
		w = &p->mem64;
	kprintf("dt: pci range %s%s pci 0x%llx cpu 0x%llx size 0x%llx\n",
		space == 1 ? "io" : space == 2 ? "mem32" : space == 3 ?
		"mem64" : "config", hi & (1u << 30) ? " prefetchable" : "",
		(unsigned long long)pci, (unsigned long long)cpu,
		(unsigned long long)size);
	if (w && !w->valid && size) {
		w->pci_base = pci;
		w->cpu_base = cpu;
		w->size = size;
		w->valid = true;
	}
}


/*
 * The host bridge's interrupt-map toward the GIC (PCI bus binding 2.2.1.3;
 * the GIC's 3-cell specifier: 0 = SPI, its number, flags 4 level high or
 * 8 level low): <child address (3)> <pin (1)> <phandle> <the GIC's
 * #address-cells> <type number flags>. An entry toward another parent
 * ends the walk: its length is not known here.
 */
static void dt_intx_map(const struct fdt *f, int n, struct platform *p)
{
	uint32_t len = 0, mlen = 0, off = 0, ent;
	const uint8_t *m = fdt_getprop(f, n, "interrupt-map-mask", &mlen);
	const uint8_t *e = fdt_getprop(f, n, "interrupt-map", &len);

	if (!m || mlen != 16 || !e || !p->gic_phandle || p->gic_int_cells != 3 ||
	    p->gic_addr_cells > 2)
		return;
	p->intx_mask_dev = fdt_be32(m);
	p->intx_mask_pin = fdt_be32(m + 12);
	ent = 4 * (3 + 1 + 1 + p->gic_addr_cells + 3);
	for (; off + ent <= len && p->nintx < A64_INTX_MAP_MAX; off += ent) {
		const uint8_t *x = e + off;
		const uint8_t *spec = x + 4 * (5 + p->gic_addr_cells);
		struct a64_intx_map *im = &p->intx[p->nintx];

		if (fdt_be32(x + 16) != p->gic_phandle)
			return;
		if (fdt_be32(spec) != 0)	/* not an SPI */
			continue;
		im->dev = fdt_be32(x);
		im->pin = fdt_be32(x + 12);
		im->intid = 32 + fdt_be32(spec + 4);
		im->level_low = (fdt_be32(spec + 8) & 0xf) == 8;
		if (im->intid < 1020)
			p->nintx++;
	}
	if (p->nintx)
		kprintf("dt: pci interrupt-map: %u INTx entries to GIC SPIs (INTA of slot 0: INTID %u)\n",
			p->nintx, p->intx[0].intid);
}

static void dt_pci(const struct fdt *f, struct platform *p)
{
	int n = fdt_find_compatible(f, -1, "pci-host-ecam-generic");
	const uint8_t *r;
	uint32_t len, i, pac = 2, esz;
	unsigned ac, sc;

	if (n < 0 || fdt_reg(f, n, 0, &p->ecam, &p->ecam_size)) {
		kprintf("dt: no pci-host-ecam-generic node\n");
		return;
	}
	if (!dt_pci_buses(f, n, p->ecam, p->ecam_size, &p->bus_start,
			  &p->bus_end))
		return;
	p->have_pci = true;
	kprintf("dt: pci ecam 0x%llx size 0x%llx buses %02x-%02x\n",
		(unsigned long long)p->ecam, (unsigned long long)p->ecam_size,
		p->bus_start, p->bus_end);

	fdt_reg_cells(f, n, &ac, &sc);
	pac = ac;
	r = fdt_getprop(f, n, "ranges", &len);
	esz = (3 + pac + 2) * 4;
	if (r && pac >= 1 && pac <= 2 &&
	    fdt_prop_u32(f, n, "#address-cells", 0) == 3 &&
	    fdt_prop_u32(f, n, "#size-cells", 0) == 2)
		for (i = 0; i + esz <= len; i += esz)
			dt_pci_range(p, r + i, pac);

	p->msi_map_mask = fdt_prop_u32(f, n, "msi-map-mask", 0xffffffff);
	r = fdt_getprop(f, n, "msi-map", &len);
	if (r && len >= 16) {
		/* QEMU gives one entry; a later step may take more. */
		p->have_msi_map = true;
		p->msi_map_rid = fdt_be32(r);
		p->msi_map_phandle = fdt_be32(r + 4);
		p->msi_map_base = fdt_be32(r + 8);
		p->msi_map_len = fdt_be32(r + 12);
		kprintf("dt: pci msi-map rid 0x%x -> msi-controller 0x%x base 0x%x length 0x%x%s\n",
			p->msi_map_rid, p->msi_map_phandle, p->msi_map_base,
			p->msi_map_len, len > 16 ? " (further entries ignored)" : "");
	}
	p->msi_parent = fdt_prop_u32(f, n, "msi-parent", 0);
	if (p->msi_parent)
		kprintf("dt: pci msi-parent 0x%x\n", p->msi_parent);
	dt_intx_map(f, n, p);
}

bool dt_rid_to_devid(const struct platform *p, uint16_t rid, uint32_t *devid)
{
	uint32_t r = rid & p->msi_map_mask;

	if (p->have_msi_map) {
		if (p->msi_map_phandle != p->its_phandle ||
		    r < p->msi_map_rid || r - p->msi_map_rid >= p->msi_map_len)
			return false;
		*devid = r - p->msi_map_rid + p->msi_map_base;
		return true;
	}
	if (p->msi_parent && p->msi_parent == p->its_phandle) {
		*devid = rid;
		return true;
	}
	return false;
}

int dt_parse(const struct fdt *f, struct platform *p)
{
	dt_console(f, p);
	dt_chosen_memory(f, p);
	if (dt_cpus(f, p) || dt_gic(f, p))
		return -1;
	dt_pci(f, p);
	return 0;
}
