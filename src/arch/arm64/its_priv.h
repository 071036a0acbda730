/* SPDX-License-Identifier: MIT */
/*
 * its_priv.h - what the parts of the GICv3 ITS back end share: register
 * layout and command encodings, the back end's state, register access,
 * its lists and lock (its.c: the back end's IRQ operations; its_cmd.c:
 * the command queue; its_tables.c: creation, the ITS's tables and the LPI
 * tables, teardown). How it works: the comment at the top of its.c.
 *
 * Private to src/arch/arm64.
 */
#ifndef UMSI_ARCH_ARM64_ITS_PRIV_H
#define UMSI_ARCH_ARM64_ITS_PRIV_H

#include <umsi/ctl.h>
#include <umsi/internal/bitops.h>
#include <umsi/internal/ctl.h>
#include <umsi/internal/hostcall.h>
#include <umsi/internal/idmap.h>
#include <umsi/internal/lib.h>

/* IHI 0069 12.19: ITS control frame registers. */
#define GITS_CTLR               0x0000u
#define GITS_CTLR_ENABLED       (1u << 0)
#define GITS_CTLR_QUIESCENT     (1u << 31)
#define GITS_TYPER              0x0008u
#define GITS_CBASER             0x0080u
#define GITS_CWRITER            0x0088u
#define GITS_CREADR             0x0090u
#define GITS_CREADR_STALLED     (1u << 0)
#define GITS_BASER(n)           (0x0100u + 8u * (n))
#define GITS_NR_BASER           8u
#define GITS_FRAME_SIZE         0x10000u
/* The translation frame's GITS_TRANSLATER (12.19.16). */
#define GITS_TRANSLATER         0x10040u

/* GITS_TYPER fields (12.19.17). */
#define TYPER_ITT_SIZE(t)       ((uint32_t)(((t) >> 4) & 0xf) + 1)
#define TYPER_ID_BITS(t)        ((uint32_t)(((t) >> 8) & 0x1f) + 1)
#define TYPER_DEV_BITS(t)       ((uint32_t)(((t) >> 13) & 0x1f) + 1)
#define TYPER_PTA               (1ull << 19)
#define TYPER_CID_BITS(t)       ((uint32_t)(((t) >> 32) & 0xf) + 1)
#define TYPER_CIL               (1ull << 36)

/* GITS_BASER<n> and GITS_CBASER fields (12.19.1, 12.19.3). */
#define BASER_VALID             (1ull << 63)
#define BASER_INNER_WB          (7ull << 59)    /* RaWaWb */
#define BASER_TYPE(v)           ((uint32_t)((v) >> 56) & 7)
#define BASER_ESIZE(v)          ((uint32_t)(((v) >> 48) & 0x1f) + 1)
#define BASER_INNER_SHARE       (1ull << 10)
#define BASER_PSZ(v)            ((uint32_t)((v) >> 8) & 3)
#define BASER_TYPE_DEVICE       1u
#define BASER_TYPE_COLLECTION   4u
#define BASER_MAX_PAGES         256u

/* Commands (6.3), 32 bytes each. */
#define CMD_MOVI                0x01u
#define CMD_INT                 0x03u
#define CMD_SYNC                0x05u
#define CMD_MAPD                0x08u
#define CMD_MAPC                0x09u
#define CMD_MAPTI               0x0au
#define CMD_INV                 0x0cu
#define CMD_DISCARD             0x0fu
#define CMD_SIZE                32u
#define CMDQ_SIZE               4096u   /* one 4 KiB page: 127 in flight */
#define CMDQ_ALIGN              65536u

/* Redistributor RD_base frame registers (12.11), when the back end owns
 * the LPI tables (umsi_its_config.rd_frame). */
#define GICR_CTLR               0x0000u
#define GICR_CTLR_ENABLE_LPIS   (1u << 0)
#define GICR_CTLR_RWP           (1u << 3)
#define GICR_TYPER              0x0008u
#define GICR_TYPER_PLPIS        (1ull << 0)
#define GICR_PROPBASER          0x0070u
#define GICR_PENDBASER          0x0078u
#define GICR_PENDBASER_PTZ      (1ull << 62)
/* Inner write-back RaWaWb (bits 9:7), inner shareable (11:10). */
#define GICR_BASER_ATTRS        (7ull << 7 | 1ull << 10)
#define LPI_ENABLE              0x01u
#define ITS_DEFAULT_PRIO        0xa0u

/* DeviceIDs a flat device table covers at most (2^16 as on QEMU virt). */
#define ITS_MAX_DEV_BITS        16u
#define ITS_ITT_ALIGN           256u
#define ITS_DEFAULT_NVEC        256u
#define ITS_DEFAULT_ITT         2048u
#define ITS_DEFAULT_ID_BITS     16u
/* How long a command batch may take before the ITS is declared stuck. */
#define ITS_TIMEOUT_NS          10000000ull
#define ITS_MAX_POLLS           10000000u

/* A table the ITS was given (GITS_BASER<n>): NULL virt when none. */
struct its_table {
	void *virt;
	uint64_t phys;
	size_t size;
};

/*
 * A mapped device: its DeviceID, its ITT (2^itt_bits events, sized to
 * the messages every source behind that DeviceID can send), which of
 * its events are taken and how many IRQs use it. Functions behind a
 * bridge that takes their requests over share one DeviceID, so one ITT:
 * each IRQ gets events of its own from @events (a block: an aligned run,
 * since the device ORs the message number into the data).
 */
struct its_dev {
	struct its_dev *next;
	uint32_t devid;
	void *itt;
	uint64_t itt_phys;
	size_t itt_size;
	uint32_t itt_bits;
	uint32_t nirqs;
	struct umsi_idmap events;
	size_t size;                     /* of the record and its map */
};

/*
 * A composed IRQ: events @event..@event+@count-1 of @dev mapped to the
 * global identities @g.. on @cpu (LPI = first_lpi + g).
 */
struct its_irq {
	struct its_irq *next;
	struct its_dev *dev;
	uint32_t irq, event, count;
	uint32_t cpu, g;
};

/*
 * The back end's state (umsi_ctl_env.priv). Lists and the command queue
 * are under @lock.
 */
struct its_priv {
	size_t size;
	volatile uint8_t *regs;          /* the control frame, mapped */
	void *lock;
	uint64_t typer;
	uint64_t translater;
	bool wired_spis;                 /* umsi_its_config.wired_spis */
	uint32_t ncpus, nvec, first_lpi;
	uint32_t nids;                   /* global identities: ncpus * nvec */
	uint32_t itt_bits;               /* log2 of itt_events: the most */
	uint32_t ite_size;               /* bytes an ITT entry (GITS_TYPER) */
	uint32_t dev_limit;              /* DeviceIDs below it are covered */
	uint32_t rid_base, devid_base, rid_count;
	uint64_t *rdbase;                /* ncpus: MAPC's RDbase field */
	struct its_table tables[GITS_NR_BASER];
	struct its_table cmdq;
	uint32_t cwriter;                /* next command's offset */
	uint32_t queued;                 /* commands not yet waited for */
	bool broken;                     /* the ITS stopped taking commands */
	bool told;                       /* ...and the log says so */
	bool stalled;                    /* it refused one (else: silent) */
	uint32_t fail_creadr;            /* GITS_CREADR then */
	struct its_dev *devs;
	/*
	 * The LPI tables, when the back end owns them (rd_frame): the
	 * property table (one byte per INTID from 8192), and per CPU its
	 * redistributor's frame (mapped) and pending table.
	 */
	bool own_tables;
	uint8_t prio;
	uint32_t lpi_bits;
	struct its_table prop;
	volatile uint8_t **rd;           /* ncpus */
	struct its_table *pend;          /* ncpus */
	/* ITTs the ITS may still read (a MAPD it was told and never undid, or
	 * one queued when it stopped answering): freed at fini, once disabled. */
	struct its_dev *held;
	struct its_irq *irqs;
};

static inline struct its_priv *its_priv(struct umsi_system *sys)
{
	return umsi_ctl_env(sys)->priv;
}

/* ---- Registers ------------------------------------------------------------ */

static inline uint32_t its_read32(struct umsi_system *sys, uint32_t off)
{
	return umsi_mmio_read32(sys, its_priv(sys)->regs + off);
}

static inline void its_write32(struct umsi_system *sys, uint32_t off, uint32_t v)
{
	umsi_mmio_write32(sys, its_priv(sys)->regs + off, v);
}

/* 64-bit registers in two 32-bit halves, low first (12.1.3 allows it). */
static inline uint64_t its_read64(struct umsi_system *sys, uint32_t off)
{
	return umsi_mmio_read64_lohi(sys, its_priv(sys)->regs + off);
}

static inline void its_write64(struct umsi_system *sys, uint32_t off, uint64_t v)
{
	umsi_mmio_write64_lohi(sys, its_priv(sys)->regs + off, v);
}

/* Redistributor @cpu's RD_base frame (the back end owns the LPI tables). */
static inline uint32_t rd_read32(struct umsi_system *sys, uint32_t cpu, uint32_t off)
{
	return umsi_mmio_read32(sys, its_priv(sys)->rd[cpu] + off);
}

static inline void rd_write32(struct umsi_system *sys, uint32_t cpu, uint32_t off,
		       uint32_t v)
{
	umsi_mmio_write32(sys, its_priv(sys)->rd[cpu] + off, v);
}

static inline uint64_t rd_read64(struct umsi_system *sys, uint32_t cpu, uint32_t off)
{
	return umsi_mmio_read64_lohi(sys, its_priv(sys)->rd[cpu] + off);
}

static inline void rd_write64(struct umsi_system *sys, uint32_t cpu, uint32_t off,
		       uint64_t v)
{
	umsi_mmio_write64_lohi(sys, its_priv(sys)->rd[cpu] + off, v);
}

/* Poll until (GITS_CTLR & @mask) == @want or time runs out. */
static inline bool its_wait_ctlr(struct umsi_system *sys, uint32_t mask,
			  uint32_t want)
{
	uint64_t end = umsi_host_clock_ns(sys) + ITS_TIMEOUT_NS;
	uint32_t n;

	for (n = 0; n < ITS_MAX_POLLS; n++) {
		if ((its_read32(sys, GITS_CTLR) & mask) == want)
			return true;
		if (umsi_host_clock_ns(sys) > end)
			break;
		umsi_cpu_relax();
	}
	return false;
}

/* ---- Lists (under the lock) ------------------------------------------------ */

static inline struct its_irq *its_find_irq(struct its_priv *p, uint32_t irq)
{
	struct its_irq *ir;

	for (ir = p->irqs; ir; ir = ir->next)
		if (ir->irq == irq)
			return ir;
	return NULL;
}

static inline struct its_dev *its_find_dev(struct its_priv *p, uint32_t devid)
{
	struct its_dev *d;

	for (d = p->devs; d; d = d->next)
		if (d->devid == devid)
			return d;
	return NULL;
}

static inline void its_unlink_irq(struct its_priv *p, struct its_irq *ir)
{
	struct its_irq **pp;

	for (pp = &p->irqs; *pp; pp = &(*pp)->next) {
		if (*pp == ir) {
			*pp = ir->next;
			return;
		}
	}
}

static inline void its_unlink_dev(struct its_priv *p, struct its_dev *dev)
{
	struct its_dev **pp;

	for (pp = &p->devs; *pp; pp = &(*pp)->next) {
		if (*pp == dev) {
			*pp = dev->next;
			return;
		}
	}
}

static inline umsi_irqflags_t its_lock(struct umsi_system *sys)
{
	return umsi_host_lock_acquire(sys, its_priv(sys)->lock);
}

static inline void its_unlock(struct umsi_system *sys, umsi_irqflags_t fl)
{
	umsi_host_lock_release(sys, its_priv(sys)->lock, fl);
}

/* ---- The command queue (its_cmd.c) --------------------------------------- */

int umsi_its_mapd(struct umsi_system *sys, const struct its_dev *dev,
		    bool valid);
int umsi_its_event_cmd(struct umsi_system *sys, uint32_t cmd, uint32_t devid,
			 uint32_t event);
int umsi_its_mapc(struct umsi_system *sys, uint32_t icid, uint64_t rdbase);
int umsi_its_sync(struct umsi_system *sys, uint32_t cpu);
int umsi_its_map_events(struct umsi_system *sys, const struct its_irq *ir,
			  uint32_t old_cpu);
int umsi_its_move_events(struct umsi_system *sys, const struct its_irq *ir,
			   uint32_t old_cpu);
int umsi_its_flush(struct umsi_system *sys);
void umsi_its_lpi_config(struct umsi_system *sys, const struct its_irq *ir,
			   bool on);
void umsi_its_tell(struct umsi_system *sys);

/* ---- Creation and teardown (its_tables.c) -------------------------------- */

int umsi_its_init(struct umsi_system *sys, uint32_t ncpus,
		    struct umsi_matrix_config *space);
void umsi_its_fini(struct umsi_system *sys);
int umsi_its_cpu_init(struct umsi_system *sys, uint32_t cpu,
			struct umsi_ctl_cpu *out);

/* ---- Devices (its.c) ------------------------------------------------------ */

/* Free @dev's ITT and record (it is no longer mapped). [no lock] */
void umsi_its_dev_free(struct umsi_system *sys, struct its_dev *dev);

#endif /* UMSI_ARCH_ARM64_ITS_PRIV_H */
