/* SPDX-License-Identifier: MIT */
/*
 * pci_ecam.h - enumeration of a PCI host bridge with an ECAM window (PCIe
 * base spec 7.2.2): bus numbers for every bridge, BARs from the host
 * bridge's windows, memory decoding and bus mastering on. Written for a
 * machine nobody enumerated before us (QEMU's virt machines with -kernel).
 *
 * Generic: no architecture code; MMIO through plain volatile accesses
 * (the caller's mapping must make the ECAM and BARs device memory).
 */
#ifndef ARM64_PCI_ECAM_H
#define ARM64_PCI_ECAM_H

#include <stdbool.h>
#include <stdint.h>

#define ECAM_MAX_FUNCS	64

/* A window of the host bridge's "ranges": CPU address = PCI address + offset. */
struct ecam_window {
	uint64_t cpu_base;
	uint64_t pci_base;
	uint64_t size;
	uint64_t next;		/* the next free PCI address */
	bool valid;
};

struct ecam_func {
	uint8_t bus, dev, fn;
	uint8_t hdr_type;	/* 0 endpoint, 1 PCI-PCI bridge */
	uint16_t vendor, device;
	uint32_t class;		/* class code, subclass, prog-if */
	uint8_t secondary, subordinate;	/* bridges */
	uint64_t bar[6];	/* CPU address, 0 when unassigned */
	uint64_t bar_size[6];
};

struct ecam_host {
	uint64_t ecam;		/* CPU address of bus @bus_start's config space */
	unsigned bus_start, bus_end;
	struct ecam_window mem32, mem64;
	struct ecam_func funcs[ECAM_MAX_FUNCS];
	unsigned nfuncs;
	unsigned next_bus;
	void (*log)(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
};

/* PCI configuration header and capability offsets (PCI 3.0 6.1, 6.7). */
#define ECAM_COMMAND		0x04
#define ECAM_COMMAND_MEMORY	(1u << 1)
#define ECAM_COMMAND_MASTER	(1u << 2)
#define ECAM_COMMAND_INTX_DIS	(1u << 10)
#define ECAM_STATUS		0x06
#define ECAM_STATUS_CAP_LIST	(1u << 4)
#define ECAM_CAP_PTR		0x34
#define ECAM_CAP_ID_MSI		0x05

/* MSI capability (PCI 3.0 6.8.1). */
#define ECAM_MSI_FLAGS		0x02
#define ECAM_MSI_FLAGS_ENABLE	(1u << 0)
#define ECAM_MSI_FLAGS_QSIZE	(7u << 4)
#define ECAM_MSI_FLAGS_64BIT	(1u << 7)
#define ECAM_MSI_ADDR_LO		0x04
#define ECAM_MSI_ADDR_HI		0x08
#define ECAM_MSI_DATA_32		0x08
#define ECAM_MSI_DATA_64		0x0c

uint8_t ecam_read8(const struct ecam_host *h, unsigned bus, unsigned dev,
		  unsigned fn, unsigned off);
uint16_t ecam_read16(const struct ecam_host *h, unsigned bus, unsigned dev,
		    unsigned fn, unsigned off);
uint32_t ecam_read32(const struct ecam_host *h, unsigned bus, unsigned dev,
		    unsigned fn, unsigned off);
void ecam_write16(const struct ecam_host *h, unsigned bus, unsigned dev,
		 unsigned fn, unsigned off, uint16_t v);
void ecam_write32(const struct ecam_host *h, unsigned bus, unsigned dev,
		 unsigned fn, unsigned off, uint32_t v);

/**
 * ecam_enumerate - Number the buses, assign BARs, enable the functions
 * @h: ecam, bus_start, bus_end, the windows and log filled in
 *
 * Depth first from @h->bus_start: each bridge gets the next bus number
 * as its secondary bus and, once its subtree is scanned, the last one as
 * its subordinate bus; every memory BAR gets a naturally aligned range of
 * a window (64-bit prefetchable BARs from the 64-bit window when there
 * is one), each bridge a 1 MiB aligned memory window (and prefetchable
 * window) covering its subtree; I/O BARs stay unassigned and I/O
 * decoding off. Memory decoding and bus mastering end up on.
 *
 * Return: the number of functions found (at most ECAM_MAX_FUNCS).
 */
unsigned ecam_enumerate(struct ecam_host *h);

/* The offset of capability @id in a function's list, 0 when absent. */
unsigned ecam_find_cap(const struct ecam_host *h, const struct ecam_func *f,
		      unsigned id);

/* The requester ID (bus << 8 | dev << 3 | fn). */
static inline uint16_t ecam_rid(const struct ecam_func *f)
{
	return (uint16_t)(f->bus << 8 | f->dev << 3 | f->fn);
}

#endif /* ARM64_PCI_ECAM_H */
