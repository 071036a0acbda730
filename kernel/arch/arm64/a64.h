/* SPDX-License-Identifier: MIT */
/*
 * a64.h - the arm64 reference kernel's own state: the platform as the
 * device tree describes it, the CPUs, and the services main.c offers the
 * other files.
 */
#ifndef ARM64_A64_H
#define ARM64_A64_H

#include <stdbool.h>
#include <stdint.h>

#include "kernel.h"
#include "arm64.h"
#include "fdt.h"
#include "gicv2.h"
#include "gicv3.h"
#include "pci_ecam.h"

/*
 * One entry of the host bridge's interrupt-map toward the GIC: INTx pin
 * @pin (1-4) of root-bus device @dev (child address bits 15:11, masked)
 * is SPI INTID @intid, level (active low when @level_low).
 */
struct a64_intx_map {
	uint32_t dev, pin, intid;
	bool level_low;
};

#define A64_INTX_MAP_MAX 32

/* What the device tree says (dt.c). */
struct platform {
	uint64_t dtb;
	uint64_t mem_base, mem_size;
	uint64_t uart;
	const char *bootargs;
	bool psci_hvc;
	uint32_t psci_cpu_on;
	unsigned ncpus;
	uint64_t mpidr[ARM64_MAX_CPUS];
	unsigned gic_version;	/* 3, or 2 (a GICv2, maybe with a v2m frame) */
	uint64_t gicd;
	uint64_t gicc;		/* GICv2: the memory-mapped CPU interface */
	uint64_t v2m;		/* GICv2: the v2m MSI frame, 0 without */
	uint32_t v2m_phandle;
	uint64_t gicr[GIC_MAX_RDIST_REGIONS], gicr_size[GIC_MAX_RDIST_REGIONS];
	unsigned gicr_regions;
	uint64_t its, its_size;
	uint32_t its_phandle;
	bool have_pci;
	uint64_t ecam, ecam_size;
	unsigned bus_start, bus_end;
	struct ecam_window mem32, mem64;
	/* msi-map: one entry (rid-base, msi-controller, msi-base, length). */
	bool have_msi_map;
	uint32_t msi_map_rid, msi_map_phandle, msi_map_base, msi_map_len;
	uint32_t msi_map_mask;
	uint32_t msi_parent;
	/* The GIC node (for the interrupt-map) and the map itself. */
	uint32_t gic_phandle, gic_addr_cells, gic_int_cells;
	uint32_t intx_mask_dev, intx_mask_pin;
	unsigned nintx;
	struct a64_intx_map intx[A64_INTX_MAP_MAX];
};

/**
 * dt_parse - Fill @p from the device tree @f; print what was found.
 * Return: 0, or -1 when something the kernel cannot do without is absent.
 */
int dt_parse(const struct fdt *f, struct platform *p);

/*
 * The DeviceID the ITS sees for requester ID @rid (msi-map, or the RID
 * itself under msi-parent). Return false when @rid is not mapped.
 */
bool dt_rid_to_devid(const struct platform *p, uint16_t rid, uint32_t *devid);

struct cpu {
	uint64_t mpidr;
	int gic_if;		/* GICv2: its CPU interface number, */
	bool gic_if_ok;		/* once it came up once */
	struct gic_rdist rd;
	uint64_t rdbase;	/* MAPC/SYNC target */
	volatile bool online;
	volatile uint32_t irqs;		/* interrupts acknowledged */
	volatile uint32_t last_intid;
	volatile uint32_t reported;	/* irqs printed so far */
	volatile uint32_t park;		/* smp_cpu_park() asks it to stop */
	volatile uint32_t spurious;	/* INTIDs nobody owns */
	volatile uint64_t sgis;		/* cross-call and wake-up SGIs */
	/* Cross-call mailbox (smp.c: smp_cross_call). */
	void (*volatile xcall_fn)(void *);
	void *volatile xcall_arg;
	volatile uint32_t xcall_done;
};

/*
 * SGIs the kernel uses (Group 1, enabled on every CPU): a cross-call,
 * and a wake-up of the boot CPU's work loop.
 */
#define SGI_XCALL	1
#define SGI_WAKE	2

/*
 * LPIs: 8192.. for the kernel's own MSI probe (umsi.msiprobe), uMSI's
 * from A64_UMSI_FIRST_LPI, ncpus * A64_UMSI_NVEC of them (umsi_its_config:
 * at most A64_UMSI_NVEC IRQs a CPU): LPI = A64_UMSI_FIRST_LPI + identity.
 */
#define A64_UMSI_FIRST_LPI	(GIC_LPI_BASE + 256)
#define A64_UMSI_NVEC		256

extern struct platform plat;
/* Each wired SPI's uMSI identity + 1 (host.c, gsi_program). */
extern volatile uint16_t a64_wired_id[1020];
extern struct gic2 gic2;
extern struct cpu cpus[ARM64_MAX_CPUS];
extern struct gic gic;
extern struct ecam_host a64_pci;

extern unsigned a64_ncpus;	/* CPUs of the device tree */

unsigned this_cpu(void);
/*
 * Memory the GIC and the ITS read and write by themselves, from a region
 * the kernel keeps apart from the heap (main.c): zeroed, aligned,
 * physically contiguous; table_free() puts a block back for a request
 * of the same size (ITTs come and go with devices).
 */
void *table_alloc(uint64_t size, uint64_t align);
void table_free(void *p, uint64_t size);
void klog(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* smp.c */
void smp_boot(void);
int cpu_gic_up(unsigned n);
void smp_sgi(uint32_t intid);	/* main.c's IRQ path: an SGI arrived */
void smp_send_sgi(unsigned cpu, uint32_t intid);
int64_t psci_call(uint64_t fn, uint64_t a1, uint64_t a2, uint64_t a3);

/* Print the acknowledgements the calling CPU has not printed yet. */
void cpu_report_irqs(unsigned cpu);

/*
 * Device hook of the IRQ path: called for every acknowledged INTID
 * before the EOI (msiprobe.c uses it to quiet edu).
 */
extern void (*volatile irq_hook)(uint32_t intid);

/* msiprobe.c: every edu gets an LPI through the ITS, fires, moves. */
/* GITS_TRANSLATER, where MSIs to the ITS go: the ITS's second 64 KiB
 * frame + 0x40 (IHI 0069 12.19.16), for the ready line. */
#define A64_GITS_TRANSLATER	0x10040u

int msi_probe_all(void);
int msi_probe_its_up(void);	/* its own ITS driver (its.c) first */

#endif /* ARM64_A64_H */
