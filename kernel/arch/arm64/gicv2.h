/* SPDX-License-Identifier: MIT */
/*
 * gicv2.h - the GICv2 distributor and memory-mapped CPU interface, and a
 * v2m MSI frame (ARM IHI 0048B, "GIC Architecture Specification v2"; the
 * GICv2m extension of the Server Base System Architecture).
 */
#ifndef ARM64_GICV2_H
#define ARM64_GICV2_H

#include <stdbool.h>
#include <stdint.h>

#define GIC2_INTID_SPURIOUS	1023u

struct gic2 {
	uint64_t dist;		/* GICD */
	uint64_t cpuif;		/* GICC */
	uint64_t v2m;		/* the v2m frame, 0 without */
	uint32_t spi_base;	/* the frame's SPIs: MSI_TYPER */
	uint32_t spi_count;
	unsigned nlines;	/* interrupt lines: 32 * (ITLinesNumber + 1) */
};

/**
 * gic2_dist_init - Enable the distributor; read the v2m frame's SPIs.
 * Return: 0, or -1 when the distributor does not answer.
 */
int gic2_dist_init(struct gic2 *g);

/**
 * gic2_cpu_init - Enable the calling CPU's interface (priority mask
 * 0xf0, so uMSI's SPIs at 0xa0 and the SGIs at 0 are signalled), and
 * enable the SGIs of @sgi_mask. Return: the CPU interface number (0-7)
 * the distributor names this CPU by (GICD_ITARGETSR0, banked), or -1.
 */
int gic2_cpu_init(const struct gic2 *g, uint32_t sgi_mask);

/* Disable the calling CPU's interface (it is about to go offline). */
void gic2_cpu_off(const struct gic2 *g);

/* GICC_IAR: the INTID (bits 9:0) and, for an SGI, the sender (12:10). */
uint32_t gic2_ack(const struct gic2 *g);

/* GICC_EOIR with what gic2_ack() returned. */
void gic2_eoi(const struct gic2 *g, uint32_t iar);

/* SGI @intid to CPU interface @cpu_if (GICD_SGIR). */
void gic2_send_sgi(const struct gic2 *g, unsigned cpu_if, uint32_t intid);

#endif /* ARM64_GICV2_H */
