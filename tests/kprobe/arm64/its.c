// SPDX-License-Identifier: MIT
/*
 * its.c - GICv3 ITS set-up and commands. Register layout from IHI 0069
 * 12.19, command encodings from 6.3.
 */
#include "arm64.h"
#include "its.h"

#define GITS_CTLR		0x0000
#define GITS_CTLR_ENABLED	(1u << 0)
#define GITS_CTLR_QUIESCENT	(1u << 31)
#define GITS_TYPER		0x0008
#define GITS_TYPER_ITT_SIZE(t)	((unsigned)(((t) >> 4) & 0xf) + 1)
#define GITS_TYPER_IDBITS(t)	((unsigned)(((t) >> 8) & 0x1f) + 1)
#define GITS_TYPER_DEVBITS(t)	((unsigned)(((t) >> 13) & 0x1f) + 1)
#define GITS_TYPER_PTA		(1ULL << 19)
#define GITS_TYPER_CIDBITS(t)	((unsigned)(((t) >> 32) & 0xf) + 1)
#define GITS_TYPER_CIL		(1ULL << 36)
#define GITS_CBASER		0x0080
#define GITS_CWRITER		0x0088
#define GITS_CREADR		0x0090
#define GITS_CREADR_STALLED	(1ULL << 0)
#define GITS_BASER(n)		(0x0100 + 8 * (n))

/* GITS_BASER<n> and GITS_CBASER fields. */
#define GITS_BASER_VALID	(1ULL << 63)
#define GITS_BASER_INDIRECT	(1ULL << 62)
#define GITS_BASER_INNER_NC	(1ULL << 59)	/* InnerCache = Normal NC */
#define GITS_BASER_TYPE(v)	((unsigned)((v) >> 56) & 7)
#define GITS_BASER_ESIZE(v)	((unsigned)(((v) >> 48) & 0x1f) + 1)
#define GITS_BASER_PSZ(v)	((unsigned)((v) >> 8) & 3)
#define GITS_BASER_TYPE_DEVICE	1
#define GITS_BASER_TYPE_COLL	4
#define GITS_BASER_MAX_PAGES	256

/* Command numbers (6.3). */
#define GITS_CMD_MOVI		0x01
#define GITS_CMD_INT		0x03
#define GITS_CMD_SYNC		0x05
#define GITS_CMD_MAPD		0x08
#define GITS_CMD_MAPC		0x09
#define GITS_CMD_MAPTI		0x0a
#define GITS_CMD_INV		0x0c
#define GITS_CMD_SIZE		32

#define ITS_CMDQ_BYTES		4096
#define ITS_TIMEOUT_US		100000

static const uint64_t its_page_sizes[4] = { 4096, 16384, 65536, 65536 };

static uint64_t its_align(uint64_t v, uint64_t a)
{
	return (v + a - 1) & ~(a - 1);
}

/*
 * One GITS_BASER<n>: a flat table for 2^@bits IDs (fewer when that takes
 * more than 256 pages), in the page size the register came up with.
 * Return the number of ID bits covered, or -1.
 */
static int its_setup_baser(struct its *its, unsigned n, unsigned bits)
{
	uint64_t v = mmio_read64(its->base + GITS_BASER(n));
	unsigned type = GITS_BASER_TYPE(v), esz = GITS_BASER_ESIZE(v);
	unsigned psz = GITS_BASER_PSZ(v);
	uint64_t page = its_page_sizes[psz], bytes, pages;
	void *table;

	/* Cover what fits: the IDs beyond are refused by its_mapd(). */
	while (bits > 1 &&
	       its_align((1ULL << bits) * esz, page) / page > GITS_BASER_MAX_PAGES)
		bits--;
	bytes = its_align((1ULL << bits) * esz, page);
	pages = bytes / page;
	table = its->alloc(bytes, page);
	if (!table)
		return -1;
	v = GITS_BASER_VALID | GITS_BASER_INNER_NC | (uint64_t)type << 56 |
	    (uint64_t)(esz - 1) << 48 | (uintptr_t)table |
	    (uint64_t)psz << 8 | (pages - 1);
	mmio_write64(its->base + GITS_BASER(n), v);
	if (mmio_read64(its->base + GITS_BASER(n)) != v) {
		its->log("its: GITS_BASER%u wrote 0x%llx, reads 0x%llx\n", n,
			 (unsigned long long)v,
			 (unsigned long long)mmio_read64(its->base + GITS_BASER(n)));
		if (!(mmio_read64(its->base + GITS_BASER(n)) & GITS_BASER_VALID))
			return -1;
	}
	its->log("its: GITS_BASER%u type %u entry %u bytes, %llu x %llu KiB pages at 0x%llx, %u ID bits\n",
		 n, type, esz, (unsigned long long)pages,
		 (unsigned long long)(page >> 10),
		 (unsigned long long)(uintptr_t)table, bits);
	return (int)bits;
}

int its_init(struct its *its)
{
	uint64_t dl = deadline_us(ITS_TIMEOUT_US), v;
	unsigned n, cid_bits;
	int bits;
	bool have_dev = false;

	/* Disabled and quiescent before the tables change (12.19.4). */
	mmio_write32(its->base + GITS_CTLR,
		     mmio_read32(its->base + GITS_CTLR) & ~GITS_CTLR_ENABLED);
	while (!(mmio_read32(its->base + GITS_CTLR) & GITS_CTLR_QUIESCENT))
		if (deadline_passed(dl)) {
			its->log("its: not quiescent\n");
			return -1;
		}
	its->typer = mmio_read64(its->base + GITS_TYPER);
	its->pta = its->typer & GITS_TYPER_PTA;
	its->itt_entry_size = GITS_TYPER_ITT_SIZE(its->typer);
	its->event_bits = GITS_TYPER_IDBITS(its->typer);
	its->dev_bits = GITS_TYPER_DEVBITS(its->typer);
	cid_bits = its->typer & GITS_TYPER_CIL ? GITS_TYPER_CIDBITS(its->typer) : 16;
	its->log("its: GITS_TYPER 0x%llx: PTA %u, ITT entry %u bytes, %u EventID bits, %u DeviceID bits, %u collection ID bits\n",
		 (unsigned long long)its->typer, its->pta ? 1 : 0,
		 its->itt_entry_size, its->event_bits, its->dev_bits, cid_bits);

	for (n = 0; n < 8; n++) {
		v = mmio_read64(its->base + GITS_BASER(n));
		switch (GITS_BASER_TYPE(v)) {
		case GITS_BASER_TYPE_DEVICE:
			bits = its_setup_baser(its, n, its->dev_bits);
			if (bits < 0)
				return -1;
			its->dev_bits = (unsigned)bits;
			have_dev = true;
			break;
		case GITS_BASER_TYPE_COLL:
			/* One collection per CPU: a page's worth is plenty. */
			if (its_setup_baser(its, n, cid_bits < 8 ? cid_bits : 8) < 0)
				return -1;
			break;
		default:
			break;	/* unimplemented, or vPEs: not used */
		}
	}
	if (!have_dev) {
		its->log("its: no device table in GITS_BASER<n>\n");
		return -1;
	}

	its->cmdq = its->alloc(ITS_CMDQ_BYTES, 65536);
	if (!its->cmdq)
		return -1;
	its->cmdq_size = ITS_CMDQ_BYTES;
	its->cwriter = 0;
	mmio_write64(its->base + GITS_CBASER,
		     GITS_BASER_VALID | GITS_BASER_INNER_NC |
		     (uintptr_t)its->cmdq | (ITS_CMDQ_BYTES / 4096 - 1));
	mmio_write64(its->base + GITS_CWRITER, 0);
	dsb(sy);
	mmio_write32(its->base + GITS_CTLR,
		     mmio_read32(its->base + GITS_CTLR) | GITS_CTLR_ENABLED);
	if (!(mmio_read32(its->base + GITS_CTLR) & GITS_CTLR_ENABLED)) {
		its->log("its: GITS_CTLR.Enabled does not stick\n");
		return -1;
	}
	return 0;
}

uint64_t its_rdbase(const struct its *its, uint64_t rd_pa, uint32_t procnum)
{
	return its->pta ? rd_pa >> 16 : procnum;
}

/* Queue one command and wait until the ITS has consumed it. */
static int its_send(struct its *its, uint64_t d0, uint64_t d1, uint64_t d2,
		    uint64_t d3)
{
	uint64_t *slot = its->cmdq + its->cwriter / 8;
	uint32_t next = (its->cwriter + GITS_CMD_SIZE) % its->cmdq_size;
	uint64_t dl = deadline_us(ITS_TIMEOUT_US), rd;

	/* The queue is full when the next write offset is the read offset. */
	while ((mmio_read64(its->base + GITS_CREADR) & 0xfffe0) == next)
		if (deadline_passed(dl))
			return -1;
	slot[0] = d0;
	slot[1] = d1;
	slot[2] = d2;
	slot[3] = d3;
	dsb(sy);	/* the command in memory before the ITS sees CWRITER */
	its->cwriter = next;
	mmio_write64(its->base + GITS_CWRITER, next);
	for (;;) {
		rd = mmio_read64(its->base + GITS_CREADR);
		if (rd & GITS_CREADR_STALLED) {
			its->log("its: command queue stalled at 0x%llx (cmd 0x%02x)\n",
				 (unsigned long long)rd, (unsigned)(d0 & 0xff));
			return -1;
		}
		if ((rd & 0xfffe0) == next)
			break;
		if (deadline_passed(dl)) {
			its->log("its: command 0x%02x timed out\n",
				 (unsigned)(d0 & 0xff));
			return -1;
		}
		cpu_relax();
	}
	its->cmds++;
	return 0;
}

int its_mapc(struct its *its, uint16_t icid, uint64_t rdbase)
{
	return its_send(its, GITS_CMD_MAPC, 0,
			GITS_BASER_VALID | rdbase << 16 | icid, 0);
}

int its_mapd(struct its *its, uint32_t devid, uint64_t itt_pa,
	     unsigned event_bits)
{
	if (devid >> its->dev_bits || !event_bits ||
	    event_bits > its->event_bits || (itt_pa & 0xff))
		return -1;
	return its_send(its, GITS_CMD_MAPD | (uint64_t)devid << 32,
			event_bits - 1,
			GITS_BASER_VALID | (itt_pa & 0xffffffffff00ULL), 0);
}

int its_mapti(struct its *its, uint32_t devid, uint32_t event, uint32_t lpi,
	      uint16_t icid)
{
	return its_send(its, GITS_CMD_MAPTI | (uint64_t)devid << 32,
			event | (uint64_t)lpi << 32, icid, 0);
}

int its_movi(struct its *its, uint32_t devid, uint32_t event, uint16_t icid)
{
	return its_send(its, GITS_CMD_MOVI | (uint64_t)devid << 32, event,
			icid, 0);
}

int its_inv(struct its *its, uint32_t devid, uint32_t event)
{
	return its_send(its, GITS_CMD_INV | (uint64_t)devid << 32, event, 0, 0);
}

int its_int(struct its *its, uint32_t devid, uint32_t event)
{
	return its_send(its, GITS_CMD_INT | (uint64_t)devid << 32, event, 0, 0);
}

int its_sync(struct its *its, uint64_t rdbase)
{
	return its_send(its, GITS_CMD_SYNC, 0, rdbase << 16, 0);
}

uint64_t its_alloc_itt(struct its *its, unsigned event_bits)
{
	uint64_t bytes = (1ULL << event_bits) * its->itt_entry_size;

	return (uintptr_t)its->alloc(bytes < 256 ? 256 : bytes, 256);
}
