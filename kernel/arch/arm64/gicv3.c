// SPDX-License-Identifier: MIT
/*
 * gicv3.c - GICv3 distributor, redistributor and CPU interface set-up
 * with LPIs. Register offsets from IHI 0069 chapter 12.
 */
#include "arm64.h"
#include "gicv3.h"

/* Distributor (12.9). */
#define GICD_CTLR		0x0000
#define GICD_CTLR_RWP		(1u << 31)
#define GICD_CTLR_ARE_NS	(1u << 4)	/* ARE when GICD_CTLR.DS = 1 */
#define GICD_CTLR_GRP1NS	(1u << 1)	/* EnableGrp1 when DS = 1 */
#define GICD_TYPER		0x0004
#define GICD_TYPER_LPIS		(1u << 17)
#define GICD_TYPER_IDBITS(t)	((((t) >> 19) & 0x1f) + 1)

/* Redistributor RD_base frame (12.11). */
#define GICR_CTLR		0x0000
#define GICR_CTLR_ENABLE_LPIS	(1u << 0)
#define GICR_TYPER		0x0008
#define GICR_TYPER_PLPIS	(1u << 0)
#define GICR_TYPER_VLPIS	(1u << 1)
#define GICR_TYPER_LAST		(1u << 4)
#define GICR_TYPER_PROCNUM(t)	(((t) >> 8) & 0xffff)
#define GICR_TYPER_AFF(t)	((t) >> 32)
#define GICR_WAKER		0x0014
#define GICR_WAKER_SLEEP	(1u << 1)
#define GICR_WAKER_ASLEEP	(1u << 2)
#define GICR_PROPBASER		0x0070
#define GICR_PENDBASER		0x0078
#define GICR_PENDBASER_PTZ	(1ULL << 62)
/* Inner cacheability field [9:7]: 1 = Normal Non-cacheable (the MMU is off). */
#define GICR_BASER_INNER_NC	(1ULL << 7)
#define GICR_FRAME		0x10000
/* SGI_base frame. */
#define GICR_IGROUPR0		(GICR_FRAME + 0x0080)
#define GICR_ISENABLER0		(GICR_FRAME + 0x0100)

#define GIC_LPI_PRIO		0xa0
#define GIC_LPI_ENABLE		0x01

static void gic_dist_wait_rwp(const struct gic *g)
{
	uint64_t dl = deadline_us(100000);

	while ((mmio_read32(g->dist + GICD_CTLR) & GICD_CTLR_RWP) &&
	       !deadline_passed(dl))
		cpu_relax();
}

int gic_dist_init(struct gic *g)
{
	uint32_t typer = mmio_read32(g->dist + GICD_TYPER);

	/*
	 * QEMU's virt machine without EL3 has one security state
	 * (GICD_CTLR.DS = 1): bit 4 is ARE and bit 1 EnableGrp1; with two
	 * states a Non-secure write sees ARE_NS and EnableGrp1A at the
	 * same bits, so the same value works for both.
	 */
	mmio_write32(g->dist + GICD_CTLR, 0);
	gic_dist_wait_rwp(g);
	mmio_write32(g->dist + GICD_CTLR, GICD_CTLR_ARE_NS);
	gic_dist_wait_rwp(g);
	mmio_write32(g->dist + GICD_CTLR, GICD_CTLR_ARE_NS | GICD_CTLR_GRP1NS);
	gic_dist_wait_rwp(g);
	if (!(typer & GICD_TYPER_LPIS))
		return -1;
	/* 16 INTID bits are plenty here; a smaller GIC gets what it has. */
	g->id_bits = GICD_TYPER_IDBITS(typer);
	if (g->id_bits > 16)
		g->id_bits = 16;
	return g->id_bits > 13 ? 0 : -1;
}

int gic_rdist_find(const struct gic *g, uint64_t mpidr, struct gic_rdist *rd)
{
	uint64_t aff = (mpidr >> 32 & 0xff) << 24 | (mpidr & 0xffffff);
	uint64_t base, end, typer;
	unsigned r;

	for (r = 0; r < g->nregions; r++) {
		base = g->rd_region[r];
		end = base + g->rd_region_size[r];
		while (base + 2 * GICR_FRAME <= end) {
			typer = mmio_read64(base + GICR_TYPER);
			if (GICR_TYPER_AFF(typer) == aff) {
				rd->base = base;
				rd->typer = typer;
				rd->procnum = GICR_TYPER_PROCNUM(typer);
				return 0;
			}
			if (typer & GICR_TYPER_LAST)
				break;
			base += (typer & GICR_TYPER_VLPIS ? 4 : 2) * GICR_FRAME;
		}
	}
	return -1;
}

int gic_lpi_init(struct gic *g)
{
	uint64_t i;

	/* INTIDs 8192 .. 2^id_bits - 1, one byte each (IHI 0069 5.1.1). */
	if (g->lpis_to_umsi)
		return 0;
	g->prop_size = (1ULL << g->id_bits) - GIC_LPI_BASE;
	g->prop_table = g->alloc(g->prop_size, 4096);
	if (!g->prop_table)
		return -1;
	for (i = 0; i < g->prop_size; i++)
		g->prop_table[i] = GIC_LPI_PRIO;
	dsb(sy);
	return 0;
}

void gic_lpi_set(struct gic *g, uint32_t intid, bool enable)
{
	uint32_t i = intid - GIC_LPI_BASE;

	if (intid < GIC_LPI_BASE || i >= g->prop_size)
		return;
	g->prop_table[i] = GIC_LPI_PRIO | (enable ? GIC_LPI_ENABLE : 0);
	/* The table is read by the GIC, not the CPU: complete the store. */
	dsb(sy);
}

void gic_lpi_enable_range(struct gic *g, uint32_t first, uint32_t count)
{
	uint32_t i;

	for (i = 0; i < count; i++)
		if (first + i >= GIC_LPI_BASE &&
		    first + i - GIC_LPI_BASE < g->prop_size)
			g->prop_table[first + i - GIC_LPI_BASE] =
				GIC_LPI_PRIO | GIC_LPI_ENABLE;
	dsb(sy);
}

static int gic_rdist_wake(const struct gic_rdist *rd)
{
	uint64_t dl = deadline_us(100000);

	mmio_write32(rd->base + GICR_WAKER,
		     mmio_read32(rd->base + GICR_WAKER) & ~GICR_WAKER_SLEEP);
	while (mmio_read32(rd->base + GICR_WAKER) & GICR_WAKER_ASLEEP)
		if (deadline_passed(dl))
			return -1;
	return 0;
}

static int gic_rdist_enable_lpis(struct gic *g, struct gic_rdist *rd)
{
	/* 2^id_bits bits of pending state, 64 KiB aligned, zeroed (PTZ). */
	uint64_t pend_size = (1ULL << g->id_bits) / 8;
	void *pend;

	/* uMSI sets the tables and EnableLPIs itself (rd_frame). */
	if (g->lpis_to_umsi)
		return rd->typer & GICR_TYPER_PLPIS ? 0 : -1;
	/*
	 * A CPU coming back (PSCI CPU_ON after CPU_OFF) finds its
	 * redistributor as it left it: LPIs stay enabled on the same tables.
	 */
	if (rd->pend_table &&
	    (mmio_read32(rd->base + GICR_CTLR) & GICR_CTLR_ENABLE_LPIS))
		return 0;
	pend = rd->pend_table ? (void *)(uintptr_t)rd->pend_table :
	       g->alloc(pend_size < 65536 ? 65536 : pend_size, 65536);
	if (!(rd->typer & GICR_TYPER_PLPIS) || !pend)
		return -1;
	rd->pend_table = (uintptr_t)pend;
	/* The tables must be in place before EnableLPIs (IHI 0069 5.1.1). */
	mmio_write32(rd->base + GICR_CTLR,
		     mmio_read32(rd->base + GICR_CTLR) & ~GICR_CTLR_ENABLE_LPIS);
	mmio_write64(rd->base + GICR_PROPBASER,
		     (uintptr_t)g->prop_table | GICR_BASER_INNER_NC |
		     (g->id_bits - 1));
	mmio_write64(rd->base + GICR_PENDBASER,
		     rd->pend_table | GICR_BASER_INNER_NC | GICR_PENDBASER_PTZ);
	dsb(sy);
	mmio_write32(rd->base + GICR_CTLR,
		     mmio_read32(rd->base + GICR_CTLR) | GICR_CTLR_ENABLE_LPIS);
	dsb(sy);
	return mmio_read32(rd->base + GICR_CTLR) & GICR_CTLR_ENABLE_LPIS ? 0 : -1;
}

void gic_sgi_enable(const struct gic_rdist *rd, uint32_t mask)
{
	mmio_write32(rd->base + GICR_ISENABLER0, mask & 0xffff);
	dsb(sy);
}

bool gic_lpi_pending(const struct gic_rdist *rd, uint32_t intid)
{
	const volatile uint8_t *pend =
		(const volatile uint8_t *)(uintptr_t)rd->pend_table;

	if (!pend || intid < GIC_LPI_BASE)
		return false;
	return (pend[intid / 8] >> (intid % 8)) & 1;
}

int gic_cpu_init(struct gic *g, struct gic_rdist *rd)
{
	if (gic_rdist_wake(rd))
		return -1;
	/* SGIs and PPIs in Group 1 (none is enabled). */
	mmio_write32(rd->base + GICR_IGROUPR0, 0xffffffff);
	if (gic_rdist_enable_lpis(g, rd))
		return -1;

	/* System register interface, then unmask all priorities, Group 1 on. */
	write_sysreg(ICC_SRE_EL1, read_sysreg(ICC_SRE_EL1) | 1);
	isb();
	if (!(read_sysreg(ICC_SRE_EL1) & 1))
		return -1;
	write_sysreg(ICC_PMR_EL1, 0xff);
	write_sysreg(ICC_BPR1_EL1, 0);
	write_sysreg(ICC_CTLR_EL1, 0);	/* EOImode 0: EOIR1 also deactivates */
	write_sysreg(ICC_IGRPEN1_EL1, 1);
	isb();
	return 0;
}
