/* SPDX-License-Identifier: MIT */
/*
 * kernel.h - the arm64 reference kernel's own state: the platform as the
 * device tree describes it, the CPUs, and the services main.c offers the
 * other files.
 */
#ifndef ARM64_KERNEL_H
#define ARM64_KERNEL_H

#include <stdbool.h>
#include <stdint.h>

#include "arm64.h"
#include "fdt.h"
#include "gicv3.h"
#include "its.h"
#include "pci_ecam.h"

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
	uint64_t gicd;
	uint64_t gicr[GIC_MAX_RDIST_REGIONS], gicr_size[GIC_MAX_RDIST_REGIONS];
	unsigned gicr_regions;
	uint64_t its, its_size;
	uint32_t its_phandle;
	bool have_pci;
	uint64_t ecam, ecam_size;
	unsigned bus_start, bus_end;
	struct pci_window mem32, mem64;
	/* msi-map: one entry (rid-base, msi-controller, msi-base, length). */
	bool have_msi_map;
	uint32_t msi_map_rid, msi_map_phandle, msi_map_base, msi_map_len;
	uint32_t msi_map_mask;
	uint32_t msi_parent;
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
	struct gic_rdist rd;
	uint64_t rdbase;	/* MAPC/SYNC target */
	volatile bool online;
	volatile uint32_t irqs;		/* interrupts acknowledged */
	volatile uint32_t last_intid;
	volatile uint32_t reported;	/* irqs printed so far */
};

extern struct platform plat;
extern struct cpu cpus[ARM64_MAX_CPUS];
extern struct gic gic;
extern struct its its;
extern struct pci_host pci;

unsigned this_cpu(void);
void *kalloc(uint64_t size, uint64_t align);
void klog(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Print the acknowledgements the calling CPU has not printed yet. */
void cpu_report_irqs(unsigned cpu);

/*
 * Device hook of the IRQ path: called for every acknowledged INTID
 * before the EOI (msiprobe.c uses it to quiet edu).
 */
extern void (*volatile irq_hook)(uint32_t intid);

/* msiprobe.c: every edu gets an LPI through the ITS, fires, moves. */
int msi_probe_all(void);

#endif /* ARM64_KERNEL_H */
