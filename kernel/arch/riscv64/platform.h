/* SPDX-License-Identifier: MIT */
/*
 * platform.h - what the riscv64 kernel learns from the device tree: the
 * console, memory, harts, the S-level IMSIC and the generic ECAM host
 * bridge. platform.c fills it with fdt.h; the rest of the kernel reads
 * only this.
 */
#ifndef RISCV64_PLATFORM_H
#define RISCV64_PLATFORM_H

#include <stdbool.h>
#include <stdint.h>

#include "fdt.h"

#define RV_MAX_HARTS	16

struct rv_hart {
	uint32_t hartid;		/* the cpu node's reg */
	uint32_t intc_phandle;		/* its riscv,cpu-intc */
	uint64_t imsic_file;		/* S-level interrupt file, 0: none */
};

/*
 * One entry of the host bridge's interrupt-map whose parent is the S-level
 * APLIC: INTx pin @pin (1-4) of device @dev on the root bus arrives at
 * APLIC source @source; @level_low for flags 8 (level, active low), else
 * level active high (flags 4).
 */
struct rv_intx_map {
	uint32_t dev;			/* child address bits 15:11, masked */
	uint32_t pin;
	uint32_t source;
	bool level_low;
};

#define RV_INTX_MAP_MAX	32

/* One window of a PCI host bridge's ranges (IEEE 1275 PCI binding). */
struct rv_pci_window {
	uint64_t pci_base;		/* address on the PCI side */
	uint64_t cpu_base;		/* the same on the CPU side */
	uint64_t size;			/* 0: the window is absent */
	bool prefetch;
};

struct rv_platform {
	uint64_t uart_base;		/* ns16550a */
	uint32_t uart_shift;		/* reg-shift */
	uint64_t test_base;		/* sifive,test0 finisher, 0: none */
	const char *bootargs;		/* inside the blob, "" if none */
	uint64_t mem_base, mem_size;	/* the first memory range */
	uint64_t timebase_hz;		/* /cpus timebase-frequency */

	unsigned int nharts;		/* enabled cpu nodes, in DT order */
	struct rv_hart harts[RV_MAX_HARTS];

	struct {
		bool present;
		uint32_t phandle;
		uint32_t num_ids;	/* riscv,num-ids: 1..num_ids usable */
		uint32_t guest_bits;	/* riscv,guest-index-bits */
		uint64_t base, size;	/* first reg range */
	} imsic;

	/*
	 * The S-level APLIC whose msi-parent is the S-level IMSIC (QEMU virt
	 * with aia=aplic-imsic: 0x0d000000; OpenSBI delegates the sources
	 * to it from the M-level domain and configures its MSI addresses).
	 */
	struct {
		bool present;
		uint32_t phandle;
		uint32_t num_sources;	/* riscv,num-sources */
		uint64_t base, size;
	} aplic;

	struct {
		bool present;
		uint64_t ecam_base, ecam_size;
		uint32_t bus_start, bus_end;
		struct rv_pci_window io, mem32, mem64;
		uint32_t msi_parent;	/* phandle, 0: none */
		/* interrupt-map toward the APLIC (INTx), and its mask. */
		uint32_t intx_mask_dev, intx_mask_pin;
		unsigned int nintx;
		struct rv_intx_map intx[RV_INTX_MAP_MAX];
	} pci;
};

/**
 * rv_platform_parse - read the machine description from the device tree
 * @fdt: an initialised tree
 * @p: filled in (zeroed first)
 *
 * Return: 0, or a negative FDT error when something the kernel cannot run
 * without (a console, a hart) is missing. A missing IMSIC or PCI host is
 * not an error: their present flags stay false.
 */
int rv_platform_parse(const struct fdt *fdt, struct rv_platform *p);

#endif /* RISCV64_PLATFORM_H */
