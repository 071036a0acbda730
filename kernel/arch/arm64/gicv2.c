// SPDX-License-Identifier: MIT
/*
 * gicv2.c - the arm64 kernel's GICv2: the distributor, each CPU's
 * memory-mapped interface, SGIs, and the v2m frame's MSI_TYPER (QEMU virt
 * with gic-version=2: GICD 0x08000000, GICC 0x08010000, v2m 0x08020000).
 *
 * QEMU's GICv2 has no security extensions on virt: every interrupt is in
 * the one group GICD_CTLR.Enable and GICC_CTLR.Enable turn on, and
 * signals IRQ. The SPIs of the v2m frame are uMSI's (its GICv2m back end
 * configures, targets and enables them); the kernel enables the
 * distributor, each CPU interface and the SGIs it uses.
 */
#include "a64.h"
#include "gicv2.h"

#define GICD_CTLR		0x000
#define GICD_TYPER		0x004
#define GICD_ISENABLER0		0x100
#define GICD_ITARGETSR0		0x800
#define GICD_SGIR		0xf00
#define GICC_CTLR		0x000
#define GICC_PMR		0x004
#define GICC_IAR		0x00c
#define GICC_EOIR		0x010
#define V2M_MSI_TYPER		0x008

int gic2_dist_init(struct gic2 *g)
{
	uint32_t typer = mmio_read32(g->dist + GICD_TYPER);

	if (typer == 0xffffffffu)
		return -1;
	g->nlines = 32 * ((typer & 0x1f) + 1);
	mmio_write32(g->dist + GICD_CTLR, 1);
	if (g->v2m) {
		uint32_t t = mmio_read32(g->v2m + V2M_MSI_TYPER);

		g->spi_base = (t >> 16) & 0x3ff;
		g->spi_count = t & 0x3ff;
	}
	kprintf("gic: GICv2 distributor 0x%llx (%u lines), CPU interface 0x%llx, v2m frame 0x%llx SPIs %u-%u\n",
		(unsigned long long)g->dist, g->nlines,
		(unsigned long long)g->cpuif, (unsigned long long)g->v2m,
		g->spi_base, g->spi_base + g->spi_count - 1);
	return 0;
}

int gic2_cpu_init(const struct gic2 *g, uint32_t sgi_mask)
{
	/* Banked: each byte names the reading CPU's interface. */
	uint32_t me = mmio_read32(g->dist + GICD_ITARGETSR0) & 0xff;

	if (!me)
		return -1;
	mmio_write32(g->dist + GICD_ISENABLER0, sgi_mask & 0xffff);
	mmio_write32(g->cpuif + GICC_PMR, 0xf0);
	mmio_write32(g->cpuif + GICC_CTLR, 1);
	return __builtin_ctz(me);
}

void gic2_cpu_off(const struct gic2 *g)
{
	mmio_write32(g->cpuif + GICC_CTLR, 0);
}

uint32_t gic2_ack(const struct gic2 *g)
{
	return mmio_read32(g->cpuif + GICC_IAR);
}

void gic2_eoi(const struct gic2 *g, uint32_t iar)
{
	mmio_write32(g->cpuif + GICC_EOIR, iar);
}

void gic2_send_sgi(const struct gic2 *g, unsigned cpu_if, uint32_t intid)
{
	dsb(sy);	/* the mailbox before the SGI */
	mmio_write32(g->dist + GICD_SGIR, (1u << (16 + cpu_if)) | (intid & 0xf));
}
