/* SPDX-License-Identifier: MIT */
/*
 * its.h - the GICv3 Interrupt Translation Service (IHI 0069 chapter 5.3
 * and 6): tables, command queue, and the commands that map a device's
 * events to LPIs on collections (one collection per CPU here).
 */
#ifndef ARM64_ITS_H
#define ARM64_ITS_H

#include <stdbool.h>
#include <stdint.h>

/* GITS_TRANSLATER sits in the second 64 KiB frame of the ITS (12.19). */
#define GITS_TRANSLATER		0x10040

struct its {
	uint64_t base;		/* ITS_base, physical = virtual */
	uint64_t typer;		/* GITS_TYPER */
	bool pta;		/* targets are redistributor addresses */
	unsigned dev_bits;	/* DeviceID bits the device table covers */
	unsigned event_bits;	/* EventID bits the ITS supports */
	unsigned itt_entry_size;
	uint64_t *cmdq;
	uint32_t cmdq_size;	/* bytes */
	uint32_t cwriter;	/* our write offset */
	unsigned cmds;		/* commands completed */
	void *(*alloc)(uint64_t size, uint64_t align);
	void (*log)(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
};

/**
 * its_init - Disable, size and give memory to the ITS, then enable it
 * @its: base, alloc and log filled in
 *
 * Sets every implemented GITS_BASER<n> (device table covering all
 * DeviceIDs when it fits in 256 pages, collection table), the command
 * queue (GITS_CBASER, 4 KiB) and GITS_CTLR.Enabled.
 * Return: 0, or -1 (with a log line saying why).
 */
int its_init(struct its *its);

/*
 * The RDbase field of MAPC and SYNC for a redistributor: its processor
 * number, or its physical address >> 16 when GITS_TYPER.PTA is 1.
 */
uint64_t its_rdbase(const struct its *its, uint64_t rd_pa, uint32_t procnum);

/*
 * The commands (IHI 0069 6.3). Each is queued, GITS_CWRITER advanced, and
 * the ITS waited for until GITS_CREADR has passed it. Return 0, or -1 on
 * a time-out or a stalled queue.
 */
int its_mapc(struct its *its, uint16_t icid, uint64_t rdbase);
int its_mapd(struct its *its, uint32_t devid, uint64_t itt_pa,
	     unsigned event_bits);
int its_mapti(struct its *its, uint32_t devid, uint32_t event, uint32_t lpi,
	      uint16_t icid);
int its_movi(struct its *its, uint32_t devid, uint32_t event, uint16_t icid);
int its_inv(struct its *its, uint32_t devid, uint32_t event);
int its_int(struct its *its, uint32_t devid, uint32_t event);
int its_sync(struct its *its, uint64_t rdbase);

/* An Interrupt Translation Table for 2^@event_bits events (256-byte aligned). */
uint64_t its_alloc_itt(struct its *its, unsigned event_bits);

#endif /* ARM64_ITS_H */
