/* SPDX-License-Identifier: MIT */
/*
 * gicv3.h - the GICv3 distributor, redistributors, CPU interface and LPI
 * tables (ARM IHI 0069, "GICv3 and GICv4 architecture specification").
 */
#ifndef ARM64_GICV3_H
#define ARM64_GICV3_H

#include <stdbool.h>
#include <stdint.h>

#define GIC_MAX_RDIST_REGIONS	4
#define GIC_LPI_BASE		8192u	/* the first LPI INTID */
#define GIC_INTID_SPURIOUS	1023u

struct gic_rdist {
	uint64_t base;		/* RD_base frame (SGI_base is +64 KiB) */
	uint64_t typer;		/* GICR_TYPER */
	uint32_t procnum;	/* GICR_TYPER.Processor_Number */
	uint64_t pend_table;	/* physical address, 64 KiB aligned */
};

struct gic {
	uint64_t dist;
	uint64_t rd_region[GIC_MAX_RDIST_REGIONS];
	uint64_t rd_region_size[GIC_MAX_RDIST_REGIONS];
	unsigned nregions;
	unsigned id_bits;	/* INTID bits the LPI tables cover */
	uint8_t *prop_table;	/* one byte per LPI from INTID 8192 */
	uint64_t prop_size;
	/* Memory for the tables: physically contiguous, zeroed, aligned. */
	void *(*alloc)(uint64_t size, uint64_t align);
	/*
	 * uMSI's ITS back end owns the LPI tables (umsi_its_config.rd_frame):
	 * no property table here, no EnableLPIs; the kernel has no LPI.
	 */
	bool lpis_to_umsi;
};

/**
 * gic_dist_init - Enable affinity routing and Group 1 in the distributor
 *
 * Return: 0, or -1 when GICD_TYPER says there are no LPIs.
 */
int gic_dist_init(struct gic *g);

/**
 * gic_rdist_find - The redistributor of the CPU with affinity @mpidr
 *
 * Walks every redistributor region frame by frame (two 64 KiB frames
 * each, four with GICR_TYPER.VLPIS) until GICR_TYPER.Last.
 * Return: 0, or -1 when none has that affinity.
 */
int gic_rdist_find(const struct gic *g, uint64_t mpidr, struct gic_rdist *rd);

/**
 * gic_lpi_init - Allocate the LPI property table all redistributors share
 *
 * Every LPI starts disabled at priority 0xa0. Call before the first
 * gic_cpu_init().
 */
int gic_lpi_init(struct gic *g);

/**
 * gic_cpu_init - Set up the calling CPU: wake its redistributor, give it
 * a pending table, enable its LPIs and its system register CPU interface
 * (ICC_SRE_EL1.SRE, priority mask, Group 1 enable).
 *
 * Return: 0, or -1 when the redistributor cannot do LPIs.
 */
int gic_cpu_init(struct gic *g, struct gic_rdist *rd);

/* Enable LPIs @first..@first+@count-1 (before any INV: at boot). */
void gic_lpi_enable_range(struct gic *g, uint32_t first, uint32_t count);

/* Enable the SGIs of @mask (bit n: SGI n) at @rd's CPU. */
void gic_sgi_enable(const struct gic_rdist *rd, uint32_t mask);

/* Whether LPI @intid is pending in @rd's pending table. */
bool gic_lpi_pending(const struct gic_rdist *rd, uint32_t intid);

/* Enable or disable one LPI in the property table (an ITS INV must follow). */
void gic_lpi_set(struct gic *g, uint32_t intid, bool enable);

#endif /* ARM64_GICV3_H */
