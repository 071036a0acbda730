/* SPDX-License-Identifier: MIT */
/*
 * ecam.h - PCI configuration space through ECAM, enumeration across
 * bridges and BAR assignment, for machines where nobody did it before
 * the kernel (QEMU's riscv64 and arm64 virt: "Nobody assigns BARs").
 *
 * Only the host bridge's windows come from outside (struct rv_platform's
 * pci part); everything else is read from configuration space.
 */
#ifndef RISCV64_ECAM_H
#define RISCV64_ECAM_H

#include <stdbool.h>
#include <stdint.h>

#include "platform.h"

#define ECAM_MAX_FUNCS	64

enum ecam_bar_kind {
	ECAM_BAR_NONE,
	ECAM_BAR_IO,
	ECAM_BAR_MEM32,
	ECAM_BAR_MEM64,
};

struct ecam_bar {
	enum ecam_bar_kind kind;
	bool prefetch;
	bool assigned;			/* false: no window had room */
	uint64_t size;
	uint64_t pci_addr;		/* what the BAR holds */
	uint64_t cpu_addr;		/* where the CPU reaches it */
};

struct ecam_func {
	uint8_t bus, dev, fn;
	uint16_t vendor, device;
	uint32_t class_rev;		/* class code << 8 | revision */
	bool bridge;
	uint8_t secondary, subordinate;	/* bridges */
	struct ecam_bar bar[6];
};

/* A window being handed out: [next, end) in PCI addresses. */
struct ecam_space {
	uint64_t next, end;
	uint64_t cpu_offset;		/* cpu address - pci address */
};

struct ecam {
	uint64_t base;			/* ECAM of bus_start */
	uint32_t bus_start, bus_end;
	uint32_t last_bus;		/* the highest bus number given out */
	struct ecam_space io, mem32, mem64;
	unsigned int nfuncs;
	unsigned int dropped;		/* functions beyond ECAM_MAX_FUNCS */
	struct ecam_func funcs[ECAM_MAX_FUNCS];
};

uint32_t ecam_read32(const struct ecam *e, unsigned int bus, unsigned int dev,
		     unsigned int fn, unsigned int off);
uint16_t ecam_read16(const struct ecam *e, unsigned int bus, unsigned int dev,
		     unsigned int fn, unsigned int off);
uint8_t ecam_read8(const struct ecam *e, unsigned int bus, unsigned int dev,
		   unsigned int fn, unsigned int off);
void ecam_write32(const struct ecam *e, unsigned int bus, unsigned int dev,
		  unsigned int fn, unsigned int off, uint32_t v);
void ecam_write16(const struct ecam *e, unsigned int bus, unsigned int dev,
		  unsigned int fn, unsigned int off, uint16_t v);
void ecam_write8(const struct ecam *e, unsigned int bus, unsigned int dev,
		 unsigned int fn, unsigned int off, uint8_t v);

/**
 * ecam_enumerate - number the buses, assign BARs, enable the functions
 * @e: filled in
 * @p: the platform (its pci part must be present)
 *
 * Depth first from bus_start: every bridge gets the next bus number as
 * secondary and, once its side is done, the highest number below it as
 * subordinate, and windows around what was assigned below it (I/O 4 KiB,
 * memory 1 MiB granules). BARs are sized with decoding off and placed
 * naturally aligned: I/O in the I/O window, 64-bit prefetchable memory in
 * the 64-bit window (when the host has one and every bridge above can
 * forward it), all other memory in the 32-bit window. Endpoints and
 * bridges get memory and I/O decoding (for what they got) and bus
 * mastering. Prints a line per function.
 *
 * Return: 0, or -FDT_ENOENT when there is no host bridge.
 */
int ecam_enumerate(struct ecam *e, const struct rv_platform *p);

/* The @index-th function with @vendor:@device, or NULL. */
struct ecam_func *ecam_find(struct ecam *e, uint16_t vendor, uint16_t device,
			    unsigned int index);

/* The offset of capability @id in @f's list, 0 when absent. */
unsigned int ecam_find_cap(const struct ecam *e, const struct ecam_func *f,
			   uint8_t id);

#endif /* RISCV64_ECAM_H */
