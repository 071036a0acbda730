/* SPDX-License-Identifier: MIT */
/*
 * The Arm GICv3 ITS back end (umsi/internal/ctl.h), after the GICv3/v4
 * architecture specification (IHI 0069): register layout 12.19, command
 * encodings 6.3, tables 5.3.
 *
 * A PCI function sends every message to one register, GITS_TRANSLATER;
 * the ITS sees who wrote it (the DeviceID, the requester ID through the
 * platform's msi-map) and what (the EventID, the data), and looks the
 * pair up in tables it keeps in memory: the device table gives the
 * device's Interrupt Translation Table (ITT), whose entry for the event
 * names an LPI and a collection, and the collection table names the
 * redistributor (CPU) that makes the LPI pending. Software fills those
 * tables only by commands written into a queue in memory (MAPD, MAPTI,
 * MAPC...). So a message names no CPU: an interrupt moves by a command,
 * the device's message stays.
 *
 * LPIs are unique across CPUs: the back end declares a global identity
 * space. The core gives each IRQ an identity g for its life (a block: an
 * aligned run) and the CPU it chose by load; the event is mapped to LPI
 * first_lpi + g and that CPU's collection (MAPTI), and the kernel
 * dispatches INTID - first_lpi. A move is a MOVI of each event to the new
 * collection: the LPI stays, so does the device's message, and the ITS
 * moves a copy pending on the old redistributor along with it; the core
 * asks the old CPU anyway (pending: that redistributor's pending table)
 * and lets a copy found there be taken there.

 * Collections: collection c is CPU c's redistributor, mapped at init
 * (MAPC) for every CPU that has one. Devices are mapped on their first
 * message (MAPD with an ITT sized for every message the sources behind
 * that DeviceID can send, at most itt_events) and unmapped with their
 * last IRQ. Functions behind a bridge that takes their requests over
 * share a DeviceID and so one ITT: an IRQ's EventIDs are not its message
 * numbers but events of its own taken from the ITT (a block an aligned
 * run), and the message's data names them. The command queue is written under a host spinlock
 * (resend runs in any context) and each batch is waited for: GITS_CREADR
 * reaching GITS_CWRITER means the ITS has done it.
 */
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

static struct its_priv *its_priv(struct umsi_system *sys)
{
	return umsi_ctl_env(sys)->priv;
}

/* ---- Registers ------------------------------------------------------------ */

static uint32_t its_read32(struct umsi_system *sys, uint32_t off)
{
	return umsi_mmio_read32(sys, its_priv(sys)->regs + off);
}

static void its_write32(struct umsi_system *sys, uint32_t off, uint32_t v)
{
	umsi_mmio_write32(sys, its_priv(sys)->regs + off, v);
}

/* 64-bit registers in two 32-bit halves, low first (12.1.3 allows it). */
static uint64_t its_read64(struct umsi_system *sys, uint32_t off)
{
	return umsi_mmio_read64_lohi(sys, its_priv(sys)->regs + off);
}

static void its_write64(struct umsi_system *sys, uint32_t off, uint64_t v)
{
	umsi_mmio_write64_lohi(sys, its_priv(sys)->regs + off, v);
}

/* Redistributor @cpu's RD_base frame (the back end owns the LPI tables). */
static uint32_t rd_read32(struct umsi_system *sys, uint32_t cpu, uint32_t off)
{
	return umsi_mmio_read32(sys, its_priv(sys)->rd[cpu] + off);
}

static void rd_write32(struct umsi_system *sys, uint32_t cpu, uint32_t off,
		       uint32_t v)
{
	umsi_mmio_write32(sys, its_priv(sys)->rd[cpu] + off, v);
}

static uint64_t rd_read64(struct umsi_system *sys, uint32_t cpu, uint32_t off)
{
	return umsi_mmio_read64_lohi(sys, its_priv(sys)->rd[cpu] + off);
}

static void rd_write64(struct umsi_system *sys, uint32_t cpu, uint32_t off,
		       uint64_t v)
{
	umsi_mmio_write64_lohi(sys, its_priv(sys)->rd[cpu] + off, v);
}

/* Poll until (GITS_CTLR & @mask) == @want or time runs out. */
static bool its_wait_ctlr(struct umsi_system *sys, uint32_t mask,
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

/* ---- Command queue (under the lock) --------------------------------------- */

/*
 * Have the ITS run what was queued: publish GITS_CWRITER, wait until
 * GITS_CREADR reaches it. A stalled or silent ITS is not retried: every
 * later command fails too. Return 0, -UMSI_EIO (stalled) or
 * -UMSI_ETIMEDOUT.
 */
static int its_flush(struct umsi_system *sys)
{
	struct umsi_ctl_env *env = umsi_ctl_env(sys);
	struct its_priv *p = env->priv;
	uint64_t end;
	uint32_t n, rd;

	if (p->broken)
		return -UMSI_EIO;
	if (!p->queued)
		return 0;
	/* The commands in memory before the ITS is told where they end. */
	umsi_dev_wmb();
	its_write32(sys, GITS_CWRITER, p->cwriter);
	end = umsi_host_clock_ns(sys) + ITS_TIMEOUT_NS;
	for (n = 0; n < ITS_MAX_POLLS; n++) {
		rd = its_read32(sys, GITS_CREADR);
		if (rd & GITS_CREADR_STALLED) {
			p->broken = true;
			p->stalled = true;
			p->fail_creadr = rd & ~GITS_CREADR_STALLED;
			return -UMSI_EIO;
		}
		if ((rd & 0xfffe0u) == p->cwriter) {
			p->queued = 0;
			return 0;
		}
		if (umsi_host_clock_ns(sys) > end)
			break;
		umsi_cpu_relax();
	}
	p->broken = true;
	p->fail_creadr = rd;
	return -UMSI_ETIMEDOUT;
}

/*
 * Say once, outside the lock (the host's log is never called under one),
 * that the ITS stopped taking commands.
 */
static void its_tell(struct umsi_system *sys)
{
	struct its_priv *p = its_priv(sys);

	if (!p->broken || p->told)
		return;
	p->told = true;
	if (p->stalled)
		umsi_log(sys, UMSI_LOG_ERROR, "arm64-its: command queue "
			 "stalled at 0x%x: the ITS refused a command",
			 p->fail_creadr);
	else
		umsi_log(sys, UMSI_LOG_ERROR, "arm64-its: commands not done "
			 "(CREADR 0x%x, CWRITER 0x%x)", p->fail_creadr,
			 p->cwriter);
}

/* Queue one command; a full queue is run first. */
static int its_cmd(struct umsi_system *sys, uint64_t d0, uint64_t d1,
		   uint64_t d2)
{
	struct its_priv *p = its_priv(sys);
	uint64_t *slot;
	int ret;

	if (p->queued == CMDQ_SIZE / CMD_SIZE - 1) {
		ret = its_flush(sys);
		if (ret)
			return ret;
	}
	if (p->broken)
		return -UMSI_EIO;
	slot = (uint64_t *)((uint8_t *)p->cmdq.virt + p->cwriter);
	slot[0] = d0;
	slot[1] = d1;
	slot[2] = d2;
	slot[3] = 0;
	p->cwriter = (p->cwriter + CMD_SIZE) % CMDQ_SIZE;
	p->queued++;
	return 0;
}

static int its_mapc(struct umsi_system *sys, uint32_t icid, uint64_t rdbase)
{
	return its_cmd(sys, CMD_MAPC, 0, BASER_VALID | rdbase << 16 | icid);
}

static int its_mapd(struct umsi_system *sys, const struct its_dev *dev,
		    bool valid)
{
	return its_cmd(sys, CMD_MAPD | (uint64_t)dev->devid << 32,
		       valid ? dev->itt_bits - 1 : 0,
		       valid ? BASER_VALID | (dev->itt_phys &
					      0xfffffffffff00ull) : 0);
}

static int its_mapti(struct umsi_system *sys, uint32_t devid, uint32_t event,
		     uint32_t lpi, uint32_t icid)
{
	return its_cmd(sys, CMD_MAPTI | (uint64_t)devid << 32,
		       event | (uint64_t)lpi << 32, icid);
}

/* MOVI (6.3.12): the event's LPI to collection @icid, pending state too. */
static int its_movi(struct umsi_system *sys, uint32_t devid, uint32_t event,
		    uint32_t icid)
{
	return its_cmd(sys, CMD_MOVI | (uint64_t)devid << 32, event, icid);
}

/* INV, DISCARD, INT: DeviceID and EventID only. */
static int its_event_cmd(struct umsi_system *sys, uint32_t cmd, uint32_t devid,
			 uint32_t event)
{
	return its_cmd(sys, cmd | (uint64_t)devid << 32, event, 0);
}

static int its_sync(struct umsi_system *sys, uint32_t cpu)
{
	return its_cmd(sys, CMD_SYNC, 0, its_priv(sys)->rdbase[cpu] << 16);
}

/*
 * Enable (@on) or disable @ir's LPIs in the property table the back end
 * owns (nothing when the kernel owns it): the byte is written before the
 * MAPTI/INV that makes the redistributor read it (5.1.1).
 */
static void its_lpi_config(struct umsi_system *sys, const struct its_irq *ir,
			   bool on)
{
	struct its_priv *p = its_priv(sys);
	volatile uint8_t *prop = p->prop.virt;
	uint32_t k, i;

	if (!p->own_tables)
		return;
	for (k = 0; k < ir->count; k++) {
		i = p->first_lpi + ir->g + k - UMSI_ITS_LPI_BASE;
		prop[i] = on ? (uint8_t)(p->prio | LPI_ENABLE) : 0;
	}
	umsi_dev_wmb();
}

/*
 * Map @ir's events to its CPU's LPIs and collection, have the
 * redistributor read their configuration again, and wait. A mapping that
 * exists is replaced. @old_cpu: the CPU they were on, synchronised too
 * (UINT32_MAX: none).
 */
static int its_map_events(struct umsi_system *sys, const struct its_irq *ir,
			  uint32_t old_cpu)
{
	struct its_priv *p = its_priv(sys);
	uint32_t devid = ir->dev->devid, k;
	int ret = 0;

	its_lpi_config(sys, ir, true);
	for (k = 0; k < ir->count && !ret; k++)
		ret = its_mapti(sys, devid, ir->event + k,
				p->first_lpi + ir->g + k, ir->cpu);
	for (k = 0; k < ir->count && !ret; k++)
		ret = its_event_cmd(sys, CMD_INV, devid, ir->event + k);
	if (!ret)
		ret = its_sync(sys, ir->cpu);
	if (!ret && old_cpu != UINT32_MAX && old_cpu != ir->cpu)
		ret = its_sync(sys, old_cpu);
	return ret ? ret : its_flush(sys);
}

/*
 * Move @ir's events, LPIs unchanged, to its CPU's collection (MOVI each),
 * then synchronise the redistributor they left and the one they reach:
 * after both SYNCs the old one holds nothing of them (MOVI moved a
 * pending LPI along) and the new one takes every later message.
 */
static int its_move_events(struct umsi_system *sys, const struct its_irq *ir,
			   uint32_t old_cpu)
{
	uint32_t devid = ir->dev->devid, k;
	int ret = 0;

	for (k = 0; k < ir->count && !ret; k++)
		ret = its_movi(sys, devid, ir->event + k, ir->cpu);
	if (!ret && old_cpu != ir->cpu)
		ret = its_sync(sys, old_cpu);
	if (!ret)
		ret = its_sync(sys, ir->cpu);
	return ret ? ret : its_flush(sys);
}

/* ---- Lists (under the lock) ------------------------------------------------ */

static struct its_irq *its_find_irq(struct its_priv *p, uint32_t irq)
{
	struct its_irq *ir;

	for (ir = p->irqs; ir; ir = ir->next)
		if (ir->irq == irq)
			return ir;
	return NULL;
}

static struct its_dev *its_find_dev(struct its_priv *p, uint32_t devid)
{
	struct its_dev *d;

	for (d = p->devs; d; d = d->next)
		if (d->devid == devid)
			return d;
	return NULL;
}

static void its_unlink_irq(struct its_priv *p, struct its_irq *ir)
{
	struct its_irq **pp;

	for (pp = &p->irqs; *pp; pp = &(*pp)->next) {
		if (*pp == ir) {
			*pp = ir->next;
			return;
		}
	}
}

static void its_unlink_dev(struct its_priv *p, struct its_dev *dev)
{
	struct its_dev **pp;

	for (pp = &p->devs; *pp; pp = &(*pp)->next) {
		if (*pp == dev) {
			*pp = dev->next;
			return;
		}
	}
}

static umsi_irqflags_t its_lock(struct umsi_system *sys)
{
	return umsi_host_lock_acquire(sys, its_priv(sys)->lock);
}

static void its_unlock(struct umsi_system *sys, umsi_irqflags_t fl)
{
	umsi_host_lock_release(sys, its_priv(sys)->lock, fl);
}

/* ---- Creation ---------------------------------------------------------------- */

/*
 * Check the configuration against the host and the architecture (the
 * parts that need no register). Return 0 or -UMSI_EINVAL after a log line
 * naming the problem.
 */
static int its_check(struct umsi_system *sys, uint32_t ncpus,
		     const struct umsi_its_config *c)
{
	const struct umsi_host_ops *o = umsi_ctl_env(sys)->ops;
	uint32_t first, nvec, bits, itt;
	uint64_t top;

	if (!c) {
		umsi_log(sys, UMSI_LOG_ERROR, "arm64-its: no configuration "
			 "(umsi_config.ctl_config must point to a struct "
			 "umsi_its_config)");
		return -UMSI_EINVAL;
	}
	/* irq_pending answers "pending" unless the back end owns the tables. */
	if (!o->phys_alloc || (!o->irq_pending && !c->rd_frame)) {
		umsi_log(sys, UMSI_LOG_ERROR, "arm64-its: host operation %s "
			 "missing", !o->phys_alloc ? "phys_alloc" :
			 "irq_pending");
		return -UMSI_EINVAL;
	}
	if (!c->its_base || c->its_base % GITS_FRAME_SIZE) {
		umsi_log(sys, UMSI_LOG_ERROR, "arm64-its: its_base 0x%llx is "
			 "not a 64 KiB aligned address",
			 (unsigned long long)c->its_base);
		return -UMSI_EINVAL;
	}
	first = c->first_lpi ? c->first_lpi : UMSI_ITS_LPI_BASE;
	nvec = c->nvec ? c->nvec : ITS_DEFAULT_NVEC;
	bits = c->lpi_id_bits ? c->lpi_id_bits : ITS_DEFAULT_ID_BITS;
	if (first < UMSI_ITS_LPI_BASE || nvec % 64 ||
	    nvec > UMSI_MATRIX_MAX_VECTORS || bits < 14 || bits > 32) {
		umsi_log(sys, UMSI_LOG_ERROR, "arm64-its: first_lpi %u, nvec %u, "
			 "lpi_id_bits %u: LPIs start at 8192, nvec is a "
			 "multiple of 64 up to 4096, 14 to 32 ID bits", first,
			 nvec, bits);
		return -UMSI_EINVAL;
	}
	top = first + (uint64_t)ncpus * nvec;
	if (top > (1ull << bits)) {
		umsi_log(sys, UMSI_LOG_ERROR, "arm64-its: LPIs %u..%llu for %u "
			 "CPUs exceed %u ID bits", first,
			 (unsigned long long)top - 1, ncpus, bits);
		return -UMSI_EINVAL;
	}
	itt = c->itt_events ? c->itt_events : ITS_DEFAULT_ITT;
	if (itt < 2 || (itt & (itt - 1))) {
		umsi_log(sys, UMSI_LOG_ERROR, "arm64-its: itt_events %u is not "
			 "a power of two of at least 2", itt);
		return -UMSI_EINVAL;
	}
	if (!c->rd_target || c->nr_cpus < ncpus) {
		umsi_log(sys, UMSI_LOG_ERROR, "arm64-its: rd_target has %u "
			 "entries for %u CPUs", c->rd_target ? c->nr_cpus : 0,
			 ncpus);
		return -UMSI_EINVAL;
	}
	return 0;
}

/*
 * What GITS_TYPER says against the configuration: ITT size, PTA targets,
 * collections. Fills the derived fields of @p.
 */
static int its_check_typer(struct umsi_system *sys, struct its_priv *p,
			   const struct umsi_its_config *c)
{
	uint64_t t = p->typer;
	uint32_t itt = c->itt_events ? c->itt_events : ITS_DEFAULT_ITT;
	uint32_t cid_bits = t & TYPER_CIL ? TYPER_CID_BITS(t) : 16;
	uint32_t cpu;

	if (!(t & 1)) {
		umsi_log(sys, UMSI_LOG_ERROR, "arm64-its: GITS_TYPER 0x%llx: "
			 "no physical LPIs", (unsigned long long)t);
		return -UMSI_EINVAL;
	}
	/* The default follows the ITS; an explicit size must fit. */
	if (!c->itt_events && itt > (1u << TYPER_ID_BITS(t)))
		itt = 1u << TYPER_ID_BITS(t);
	p->itt_bits = umsi_order_of(itt);
	if (p->itt_bits > TYPER_ID_BITS(t)) {
		umsi_log(sys, UMSI_LOG_ERROR, "arm64-its: itt_events %u: the "
			 "ITS has %u EventID bits", itt, TYPER_ID_BITS(t));
		return -UMSI_EINVAL;
	}
	p->ite_size = TYPER_ITT_SIZE(t);
	if (p->ncpus > (1ull << cid_bits)) {
		umsi_log(sys, UMSI_LOG_ERROR, "arm64-its: %u CPUs, %u collection "
			 "ID bits", p->ncpus, cid_bits);
		return -UMSI_EINVAL;
	}
	for (cpu = 0; cpu < p->ncpus; cpu++) {
		uint64_t rd = c->rd_target[cpu];

		if (rd == UMSI_ITS_NO_RD) {
			p->rdbase[cpu] = rd;
			continue;
		}
		/* PTA: a 64 KiB aligned address; else a processor number. */
		if ((t & TYPER_PTA) ? rd % GITS_FRAME_SIZE || rd >> 52 :
		    rd >> 16) {
			umsi_log(sys, UMSI_LOG_ERROR, "arm64-its: cpu %u: "
				 "rd_target 0x%llx is not a %s", cpu,
				 (unsigned long long)rd, (t & TYPER_PTA) ?
				 "64 KiB aligned redistributor address" :
				 "processor number (GITS_TYPER.PTA is 0)");
			return -UMSI_EINVAL;
		}
		p->rdbase[cpu] = (t & TYPER_PTA) ? rd >> 16 : rd;
	}
	return 0;
}

static void its_table_free(struct umsi_system *sys, struct its_table *tb)
{
	if (tb->virt)
		umsi_host_phys_free(sys, tb->virt, tb->size);
	tb->virt = NULL;
}

/* Zeroed memory the ITS may read, aligned to @align. */
static int its_table_alloc(struct umsi_system *sys, struct its_table *tb,
			   size_t size, size_t align)
{
	tb->virt = umsi_host_phys_alloc(sys, size, align, &tb->phys);
	if (!tb->virt)
		return -UMSI_ENOMEM;
	tb->size = size;
	umsi_memset(tb->virt, 0, size);
	return 0;
}

/*
 * Give GITS_BASER<n> a flat table if it is a device or collection table:
 * every DeviceID up to 2^16 (fewer when 256 pages hold fewer), one
 * collection per CPU. Other types (vPEs) are left alone.
 */
static int its_setup_baser(struct umsi_system *sys, uint32_t n)
{
	static const uint32_t page_sizes[4] = { 4096, 16384, 65536, 65536 };
	struct its_priv *p = its_priv(sys);
	uint64_t v = its_read64(sys, GITS_BASER(n)), want;
	uint32_t type = BASER_TYPE(v), esz = BASER_ESIZE(v);
	uint32_t page = page_sizes[BASER_PSZ(v)], bits;
	uint64_t entries;
	size_t size;
	int ret;

	if (type == BASER_TYPE_DEVICE) {
		bits = TYPER_DEV_BITS(p->typer);
		if (bits > ITS_MAX_DEV_BITS)
			bits = ITS_MAX_DEV_BITS;
		while (bits > 1 && ((1ull << bits) * esz + page - 1) / page >
		       BASER_MAX_PAGES)
			bits--;
		entries = 1ull << bits;
		p->dev_limit = (uint32_t)entries;
	} else if (type == BASER_TYPE_COLLECTION) {
		entries = p->ncpus;
	} else {
		return 0;
	}
	size = (size_t)((entries * esz + page - 1) / page * page);
	if (size / page > BASER_MAX_PAGES) {
		umsi_log(sys, UMSI_LOG_ERROR, "arm64-its: GITS_BASER%u needs "
			 "%zu pages of %u bytes", n, size / page, page);
		return -UMSI_EINVAL;
	}
	ret = its_table_alloc(sys, &p->tables[n], size, page);
	if (ret)
		return ret;
	umsi_dev_wmb();
	/* A 64 KiB page puts address bits 51:48 in 15:12: ours are below. */
	want = BASER_VALID | BASER_INNER_WB | (v & (0x7ull << 56)) |
	       (v & (0x1full << 48)) | p->tables[n].phys | BASER_INNER_SHARE |
	       (uint64_t)BASER_PSZ(v) << 8 | (size / page - 1);
	its_write64(sys, GITS_BASER(n), want);
	if (!(its_read64(sys, GITS_BASER(n)) & BASER_VALID)) {
		umsi_log(sys, UMSI_LOG_ERROR, "arm64-its: GITS_BASER%u does not "
			 "take a table", n);
		return -UMSI_EIO;
	}
	return 0;
}

/*
 * The LPI tables the back end owns (rd_frame): each redistributor's
 * EnableLPIs cleared (5.1.1: the tables may go only then), its frame
 * unmapped, its pending table freed; the property table last. A
 * redistributor that keeps EnableLPIs (GICv3 allows it to be RES1 once
 * set) may still write its pending table and read the property table:
 * both stay allocated, and the log says so.
 */
static void its_lpis_down(struct umsi_system *sys)
{
	struct umsi_ctl_env *env = umsi_ctl_env(sys);
	struct its_priv *p = env->priv;
	bool keep_prop = false;
	uint32_t cpu, n;

	for (cpu = 0; cpu < p->ncpus; cpu++) {
		bool stuck = false;

		if (!p->rd[cpu])
			continue;
		if (p->pend[cpu].virt) {
			rd_write32(sys, cpu, GICR_CTLR, rd_read32(sys, cpu,
				   GICR_CTLR) & ~GICR_CTLR_ENABLE_LPIS);
			for (n = 0; n < ITS_MAX_POLLS && (rd_read32(sys, cpu,
			     GICR_CTLR) & GICR_CTLR_RWP); n++)
				umsi_cpu_relax();
			stuck = rd_read32(sys, cpu, GICR_CTLR) &
				(GICR_CTLR_ENABLE_LPIS | GICR_CTLR_RWP);
		}
		if (stuck) {
			umsi_log(sys, UMSI_LOG_WARN, "arm64-its: cpu %u's "
				 "redistributor keeps LPIs enabled: its LPI "
				 "tables stay allocated", cpu);
			keep_prop = true;
		} else {
			its_table_free(sys, &p->pend[cpu]);
		}
		umsi_host_mmio_unmap(sys, (void *)p->rd[cpu],
				     GITS_FRAME_SIZE);
		p->rd[cpu] = NULL;
	}
	if (!keep_prop)
		its_table_free(sys, &p->prop);
}

/*
 * Own the LPI tables (umsi_its_config.rd_frame): a property table with
 * every LPI disabled (each is enabled when its event is mapped), and for
 * each CPU with a redistributor a zeroed pending table, PROPBASER and
 * PENDBASER, then EnableLPIs. Redistributors are touched only through
 * their frames, so this runs on any CPU.
 */
static int its_lpis_up(struct umsi_system *sys,
		       const struct umsi_its_config *c)
{
	struct umsi_ctl_env *env = umsi_ctl_env(sys);
	struct its_priv *p = env->priv;
	size_t prop_size, pend_size;
	uint32_t cpu, n = 0;
	void *v;
	int ret;

	p->own_tables = true;
	p->prio = (uint8_t)((c->lpi_priority ? c->lpi_priority :
			     ITS_DEFAULT_PRIO) & 0xfc);
	prop_size = ((1ull << p->lpi_bits) - UMSI_ITS_LPI_BASE + 4095) &
		    ~(size_t)4095;
	pend_size = (1ull << p->lpi_bits) / 8;
	if (pend_size < GITS_FRAME_SIZE)
		pend_size = GITS_FRAME_SIZE;
	ret = its_table_alloc(sys, &p->prop, prop_size, 4096);
	if (ret)
		return ret;
	for (cpu = 0; cpu < p->ncpus; cpu++) {
		uint64_t frame = c->rd_frame[cpu];

		if (!frame)
			continue;
		if (frame % GITS_FRAME_SIZE) {
			umsi_log(sys, UMSI_LOG_ERROR, "arm64-its: cpu %u: "
				 "rd_frame 0x%llx is not 64 KiB aligned", cpu,
				 (unsigned long long)frame);
			return -UMSI_EINVAL;
		}
		ret = umsi_host_mmio_map(sys, frame, GITS_FRAME_SIZE, &v);
		if (ret)
			return ret;
		p->rd[cpu] = v;
		if (!(rd_read64(sys, cpu, GICR_TYPER) & GICR_TYPER_PLPIS)) {
			umsi_log(sys, UMSI_LOG_ERROR, "arm64-its: cpu %u: the "
				 "redistributor at 0x%llx has no physical LPIs",
				 cpu, (unsigned long long)frame);
			return -UMSI_EINVAL;
		}
		if (rd_read32(sys, cpu, GICR_CTLR) & GICR_CTLR_ENABLE_LPIS) {
			umsi_log(sys, UMSI_LOG_ERROR, "arm64-its: cpu %u: "
				 "GICR_CTLR.EnableLPIs is already set: the LPI "
				 "tables are someone else's (leave rd_frame "
				 "NULL)", cpu);
			return -UMSI_EBUSY;
		}
		ret = its_table_alloc(sys, &p->pend[cpu], pend_size,
				      GITS_FRAME_SIZE);
		if (ret)
			return ret;
		umsi_dev_wmb();
		rd_write64(sys, cpu, GICR_PROPBASER, p->prop.phys |
			   GICR_BASER_ATTRS | (p->lpi_bits - 1));
		rd_write64(sys, cpu, GICR_PENDBASER, p->pend[cpu].phys |
			   GICR_BASER_ATTRS | GICR_PENDBASER_PTZ);
		rd_write32(sys, cpu, GICR_CTLR, rd_read32(sys, cpu, GICR_CTLR) |
			   GICR_CTLR_ENABLE_LPIS);
		if (!(rd_read32(sys, cpu, GICR_CTLR) & GICR_CTLR_ENABLE_LPIS)) {
			umsi_log(sys, UMSI_LOG_ERROR, "arm64-its: cpu %u: "
				 "GICR_CTLR.EnableLPIs does not stick", cpu);
			return -UMSI_EIO;
		}
		n++;
	}
	umsi_log(sys, UMSI_LOG_INFO, "arm64-its: LPI property table at 0x%llx "
		 "(%u INTID bits, priority 0x%x), pending tables for %u "
		 "redistributors, EnableLPIs set", (unsigned long long)
		 p->prop.phys, p->lpi_bits, p->prio, n);
	return 0;
}

/* Disable the ITS, take its tables back, unmap it; free the state. */
static void its_dev_free(struct umsi_system *sys, struct its_dev *dev);

static void its_fini(struct umsi_system *sys)
{
	struct umsi_ctl_env *env = umsi_ctl_env(sys);
	struct its_priv *p = env->priv;
	uint32_t n;

	if (!p)
		return;
	if (p->regs) {
		/* Disabled and quiescent before its memory goes (12.19.4). */
		its_write32(sys, GITS_CTLR, its_read32(sys, GITS_CTLR) &
			    ~GITS_CTLR_ENABLED);
		if (!its_wait_ctlr(sys, GITS_CTLR_QUIESCENT,
				   GITS_CTLR_QUIESCENT))
			umsi_log(sys, UMSI_LOG_WARN, "arm64-its: not quiescent "
				 "at teardown");
		for (n = 0; n < GITS_NR_BASER; n++)
			if (p->tables[n].virt)
				its_write64(sys, GITS_BASER(n), 0);
		if (p->cmdq.virt)
			its_write64(sys, GITS_CBASER, 0);
	}
	/* The ITS is quiet: the redistributors' tables may go. */
	if (p->own_tables)
		its_lpis_down(sys);
	/* Disabled (or never to answer again): its ITTs can go. */
	while (p->held) {
		struct its_dev *d = p->held;

		p->held = d->next;
		its_dev_free(sys, d);
	}
	for (n = 0; n < GITS_NR_BASER; n++)
		its_table_free(sys, &p->tables[n]);
	its_table_free(sys, &p->cmdq);
	if (p->regs)
		umsi_host_mmio_unmap(sys, (void *)p->regs,
				     GITS_FRAME_SIZE);
	if (p->lock)
		umsi_host_lock_destroy(sys, p->lock);
	env->priv = NULL;
	umsi_free(sys, p, p->size);
}

/*
 * The ITS from disabled to running: tables, command queue, enable, one
 * collection per CPU (IHI 0069 5.3: tables are set while disabled).
 */
static int its_start(struct umsi_system *sys)
{
	struct its_priv *p = its_priv(sys);
	umsi_irqflags_t fl;
	uint32_t n, cpu;
	int ret;

	its_write32(sys, GITS_CTLR, its_read32(sys, GITS_CTLR) &
		    ~GITS_CTLR_ENABLED);
	if (!its_wait_ctlr(sys, GITS_CTLR_QUIESCENT, GITS_CTLR_QUIESCENT)) {
		umsi_log(sys, UMSI_LOG_ERROR, "arm64-its: not quiescent");
		return -UMSI_EIO;
	}
	for (n = 0; n < GITS_NR_BASER; n++) {
		ret = its_setup_baser(sys, n);
		if (ret)
			return ret;
	}
	if (!p->dev_limit) {
		umsi_log(sys, UMSI_LOG_ERROR, "arm64-its: no device table in "
			 "GITS_BASER<n>");
		return -UMSI_EINVAL;
	}
	ret = its_table_alloc(sys, &p->cmdq, CMDQ_SIZE, CMDQ_ALIGN);
	if (ret)
		return ret;
	umsi_dev_wmb();
	its_write64(sys, GITS_CBASER, BASER_VALID | BASER_INNER_WB |
		    p->cmdq.phys | BASER_INNER_SHARE | (CMDQ_SIZE / 4096 - 1));
	its_write32(sys, GITS_CWRITER, 0);
	p->cwriter = 0;
	its_write32(sys, GITS_CTLR, its_read32(sys, GITS_CTLR) |
		    GITS_CTLR_ENABLED);
	if (!(its_read32(sys, GITS_CTLR) & GITS_CTLR_ENABLED)) {
		umsi_log(sys, UMSI_LOG_ERROR, "arm64-its: GITS_CTLR.Enabled "
			 "does not stick");
		return -UMSI_EIO;
	}
	/* Collection c is CPU c's redistributor. */
	fl = its_lock(sys);
	ret = 0;
	for (cpu = 0; cpu < p->ncpus && !ret; cpu++)
		if (p->rdbase[cpu] != UMSI_ITS_NO_RD)
			ret = its_mapc(sys, cpu, p->rdbase[cpu]);
	if (!ret)
		ret = its_flush(sys);
	its_unlock(sys, fl);
	its_tell(sys);
	return ret;
}

static int its_init(struct umsi_system *sys, uint32_t ncpus,
		    struct umsi_matrix_config *space)
{
	struct umsi_ctl_env *env = umsi_ctl_env(sys);
	const struct umsi_its_config *c = env->ctl_config;
	struct its_priv *p;
	size_t size;
	void *v;
	int ret;

	ret = its_check(sys, ncpus, c);
	if (ret)
		return ret;
	size = sizeof(*p) + (size_t)ncpus * (sizeof(*p->rdbase) +
		sizeof(*p->rd) + sizeof(*p->pend));
	p = umsi_zalloc(sys, size);
	if (!p)
		return -UMSI_ENOMEM;
	p->size = size;
	p->ncpus = ncpus;
	p->rdbase = (uint64_t *)(p + 1);
	p->rd = (volatile uint8_t **)(p->rdbase + ncpus);
	p->pend = (struct its_table *)(p->rd + ncpus);
	p->lpi_bits = c->lpi_id_bits ? c->lpi_id_bits : ITS_DEFAULT_ID_BITS;
	p->nvec = c->nvec ? c->nvec : ITS_DEFAULT_NVEC;
	p->nids = ncpus * p->nvec;
	p->first_lpi = c->first_lpi ? c->first_lpi : UMSI_ITS_LPI_BASE;
	p->translater = c->its_base + GITS_TRANSLATER;
	p->rid_base = c->rid_base;
	p->devid_base = c->devid_base;
	p->rid_count = c->rid_count;
	env->priv = p;
	p->lock = umsi_host_lock_create(sys);
	if (!p->lock) {
		ret = -UMSI_ENOMEM;
		goto cleanup;
	}
	ret = umsi_host_mmio_map(sys, c->its_base, GITS_FRAME_SIZE, &v);
	if (ret)
		goto cleanup;
	p->regs = v;
	p->typer = its_read64(sys, GITS_TYPER);
	ret = its_check_typer(sys, p, c);
	/* The LPI tables before the ITS can make an LPI pending. */
	if (!ret && c->rd_frame)
		ret = its_lpis_up(sys, c);
	if (!ret)
		ret = its_start(sys);
	if (ret)
		goto cleanup;
	umsi_log(sys, UMSI_LOG_INFO, "arm64-its: ITS at 0x%llx, LPIs %u..%u "
		 "(%u a CPU), ITT %u events, DeviceIDs below %u",
		 (unsigned long long)c->its_base, p->first_lpi,
		 p->first_lpi + ncpus * p->nvec - 1, p->nvec,
		 1u << p->itt_bits, p->dev_limit);
	/* Every local identity of a CPU is an LPI of its own. */
	umsi_matrix_space_config(space, ncpus, p->nvec, 0, p->nvec - 1);
	return 0;

cleanup:
	its_fini(sys);
	return ret;
}

static int its_cpu_init(struct umsi_system *sys, uint32_t cpu,
			struct umsi_ctl_cpu *out)
{
	int ret = umsi_host_cpu_hwid(sys, cpu, &out->hwid);

	if (ret)
		return ret;
	out->reachable = its_priv(sys)->rdbase[cpu] != UMSI_ITS_NO_RD;
	/* Wired inputs are the distributor's SPIs, not the ITS's. */
	out->wired_reachable = false;
	return 0;
}

/* ---- IRQs ------------------------------------------------------------------ */

/* The DeviceID of requester @rid through the msi-map; false when none. */
static bool its_devid(const struct its_priv *p, uint32_t rid, uint32_t *devid)
{
	if (rid == UMSI_NO_SOURCE)
		return false;
	if (!p->rid_count) {
		*devid = rid;
	} else {
		if (rid < p->rid_base || rid - p->rid_base >= p->rid_count)
			return false;
		*devid = p->devid_base + (rid - p->rid_base);
	}
	return *devid < p->dev_limit;
}

/*
 * Whether @ci can be sent through this ITS to (@cpu, @id): a requester
 * the device table covers, events inside an ITT, a CPU with a collection.
 */
static int its_check_irq(struct umsi_system *sys,
			 const struct umsi_ctl_irq *ci, uint32_t cpu,
			 uint32_t id, uint32_t *devid)
{
	struct its_priv *p = its_priv(sys);

	if (ci->wired || cpu >= p->ncpus || p->rdbase[cpu] == UMSI_ITS_NO_RD)
		return -UMSI_ERANGE;
	if (ci->count == 0 || id >= p->nids || ci->count > p->nids - id)
		return -UMSI_EINVAL;
	if (!its_devid(p, ci->source_id, devid)) {
		umsi_log(sys, UMSI_LOG_ERROR, "arm64-its: irq %u: requester "
			 "0x%x has no DeviceID below %u", ci->irq, ci->source_id,
			 p->dev_limit);
		return -UMSI_EINVAL;
	}
	if (ci->count > (1u << p->itt_bits)) {
		umsi_log(sys, UMSI_LOG_ERROR, "arm64-its: irq %u: %u events "
			 "exceed an ITT of %u", ci->irq, ci->count,
			 1u << p->itt_bits);
		return -UMSI_ENOSPC;
	}
	return 0;
}

/*
 * A new device record with a zeroed ITT, outside the lock (phys_alloc may
 * sleep). NULL when out of memory.
 */
static struct its_dev *its_dev_new(struct umsi_system *sys, uint32_t devid,
				   uint32_t events)
{
	struct umsi_ctl_env *env = umsi_ctl_env(sys);
	struct its_priv *p = env->priv;
	struct its_dev *dev;
	uint32_t bits;
	size_t size;

	/*
	 * Sized to the device: every message it can send (MAPD's Size is
	 * EventID bits - 1, so at least 2 events), at most itt_events.
	 */
	bits = events ? umsi_order_of(events) : p->itt_bits;
	if (bits < 1)
		bits = 1;
	if (bits > p->itt_bits)
		bits = p->itt_bits;
	/* One allocation: the record, then the map of its events. */
	size = (sizeof(*dev) + 7) / 8 * 8 + umsi_idmap_size(1u << bits);
	dev = umsi_zalloc(sys, size);
	if (!dev)
		return NULL;
	dev->size = size;
	dev->devid = devid;
	dev->itt_bits = bits;
	umsi_idmap_init(&dev->events, 1u << bits, (uint64_t *)(void *)
			((char *)dev + (sizeof(*dev) + 7) / 8 * 8));
	dev->itt_size = ((size_t)p->ite_size << bits) + ITS_ITT_ALIGN - 1;
	dev->itt_size -= dev->itt_size % ITS_ITT_ALIGN;
	dev->itt = umsi_host_phys_alloc(sys, dev->itt_size,
					ITS_ITT_ALIGN, &dev->itt_phys);
	if (!dev->itt) {
		umsi_free(sys, dev, size);
		return NULL;
	}
	umsi_memset(dev->itt, 0, dev->itt_size);
	return dev;
}

/* A block's events are an aligned run: the device ORs k into the data. */
static uint32_t its_align(uint32_t count)
{
	return (count & (count - 1)) ? 1 : count;
}

/* Give @ir's events back to its device's ITT. [lock] */
static void its_events_put(struct its_irq *ir)
{
	uint32_t k;

	for (k = 0; k < ir->count; k++)
		umsi_idmap_clear(&ir->dev->events, ir->event + k);
}

/* Keep @dev's ITT until fini: the ITS may still read it. [no lock] */
static void its_dev_hold(struct umsi_system *sys, struct its_dev *dev)
{
	struct its_priv *p = its_priv(sys);
	umsi_irqflags_t fl;

	if (!dev)
		return;
	fl = its_lock(sys);
	dev->next = p->held;
	p->held = dev;
	its_unlock(sys, fl);
}

static void its_dev_free(struct umsi_system *sys, struct its_dev *dev)
{
	if (!dev)
		return;
	umsi_host_phys_free(sys, dev->itt, dev->itt_size);
	umsi_free(sys, dev, dev->size);
}

/*
 * The first compose of an IRQ: map its device if it is the device's
 * first (MAPD), then its events (MAPTI, INV, SYNC). Memory is taken
 * before the lock; what another compose made meanwhile wins.
 */
static int its_compose_new(struct umsi_system *sys,
			   const struct umsi_ctl_irq *ci, uint32_t devid,
			   uint32_t cpu, uint32_t id, uint32_t *event)
{
	struct its_priv *p = its_priv(sys);
	struct its_irq *ir = umsi_zalloc(sys, sizeof(*ir));
	struct its_dev *fresh = NULL, *dev;
	umsi_irqflags_t fl;
	bool have_dev, told = false;
	uint32_t small = 0;
	int ret;

	if (!ir)
		return -UMSI_ENOMEM;
	fl = its_lock(sys);
	have_dev = its_find_dev(p, devid) != NULL;
	its_unlock(sys, fl);
	if (!have_dev) {
		/* Room for this IRQ at least, so a new ITT never refuses. */
		fresh = its_dev_new(sys, devid, ci->source_events > ci->count ?
					       ci->source_events : ci->count);
		if (!fresh) {
			umsi_free(sys, ir, sizeof(*ir));
			return -UMSI_ENOMEM;
		}
	}
	ir->irq = ci->irq;
	ir->count = ci->count;
	ir->cpu = cpu;
	ir->g = id;

	fl = its_lock(sys);
	dev = its_find_dev(p, devid);
	ret = 0;
	if (!dev && fresh) {
		/* Step 1: the device and its ITT (6.3.8). */
		dev = fresh;
		fresh = NULL;
		dev->next = p->devs;
		p->devs = dev;
		/* A broken ITS is told nothing more (its_flush). */
		told = !p->broken;
		ret = its_mapd(sys, dev, true);
	}
	if (!dev) {
		/* It went between the look-ups: ask the caller to retry. */
		ret = -UMSI_EAGAIN;
	} else if (ret || (ir->event = umsi_idmap_take_run(&dev->events,
			ci->count, its_align(ci->count))) == UINT32_MAX) {
		/*
		 * Every event of the DeviceID's ITT is taken (sources that
		 * share it, one added after it was sized): refused, so the
		 * caller can ask for fewer.
		 */
		if (!ret) {
			small = dev->itt_bits;
			ret = -UMSI_ENOSPC;
		}
		if (dev->nirqs == 0) {
			its_unlink_dev(p, dev);
			fresh = dev;
		}
	} else {
		ir->dev = dev;
		dev->nirqs++;
		ir->next = p->irqs;
		p->irqs = ir;
		*event = ir->event;
		/* Step 2: its events to the CPU's LPIs and collection. */
		ret = its_map_events(sys, ir, UINT32_MAX);
		if (ret) {
			its_unlink_irq(p, ir);
			its_events_put(ir);
			if (--dev->nirqs == 0) {
				its_unlink_dev(p, dev);
				fresh = dev;
			}
		}
	}
	its_unlock(sys, fl);
	its_tell(sys);
	if (small)
		umsi_log(sys, UMSI_LOG_ERROR, "arm64-its: irq %u: no %u free "
			 "events in DeviceID 0x%x's ITT of %u (shared by every "
			 "source with that requester)", ci->irq, ci->count,
			 devid, 1u << small);
	/*
	 * A device the ITS was told about (MAPD queued) but that failed with
	 * it: if the ITS stopped answering, it may run that MAPD later.
	 */
	if (fresh && told && p->broken)
		its_dev_hold(sys, fresh);
	else
		its_dev_free(sys, fresh);
	if (ret)
		umsi_free(sys, ir, sizeof(*ir));
	return ret;
}

/*
 * Every message goes to GITS_TRANSLATER with the EventID (a block: the
 * first; the device ORs the message number in). The first compose of an
 * IRQ maps it; a later one (the message asked for again) re-maps it to
 * (@cpu, @id) if that changed.
 */
static int its_compose(struct umsi_system *sys, const struct umsi_ctl_irq *ci,
		       uint32_t cpu, uint32_t id, struct umsi_msg *msg)
{
	struct its_priv *p = its_priv(sys);
	struct its_irq *ir;
	umsi_irqflags_t fl;
	uint32_t devid, old;
	int ret, tries;

	ret = its_check_irq(sys, ci, cpu, id, &devid);
	if (ret)
		return ret;
	msg->address = p->translater;
	for (tries = 0; tries < 4; tries++) {
		fl = its_lock(sys);
		ir = its_find_irq(p, ci->irq);
		if (ir) {
			msg->data = ir->event;
			old = ir->cpu;
			ret = 0;
			if (ir->g != id) {
				/* A new identity (not a core move): re-map. */
				ir->cpu = cpu;
				ir->g = id;
				ret = its_map_events(sys, ir, old);
			} else if (ir->cpu != cpu) {
				ir->cpu = cpu;
				ret = its_move_events(sys, ir, old);
			}
			its_unlock(sys, fl);
			its_tell(sys);
			return ret ? ret : 1;
		}
		its_unlock(sys, fl);
		ret = its_compose_new(sys, ci, devid, cpu, id, &msg->data);
		if (ret != -UMSI_EAGAIN)
			return ret ? ret : 1;
	}
	return -UMSI_EBUSY;
}

/*
 * A move: the same LPIs to the new CPU's collection by MOVI (6.3.12); a
 * new identity (which the core's moves never ask for) is a MAPTI, which
 * replaces the mapping (6.3.10). On an error the record keeps the old
 * CPU: the ITS stopped answering and nothing more reaches it.
 */
static int its_retarget(struct umsi_system *sys, const struct umsi_ctl_irq *ci,
			uint32_t cpu, uint32_t id)
{
	struct its_priv *p = its_priv(sys);
	struct its_irq *ir;
	umsi_irqflags_t fl;
	uint32_t devid, old, old_g;
	int ret;

	ret = its_check_irq(sys, ci, cpu, id, &devid);
	if (ret)
		return ret;
	fl = its_lock(sys);
	ir = its_find_irq(p, ci->irq);
	if (!ir) {
		ret = -UMSI_ENOENT;
	} else {
		old = ir->cpu;
		old_g = ir->g;
		ir->cpu = cpu;
		ir->g = id;
		ret = old_g == id ? its_move_events(sys, ir, old) :
		      its_map_events(sys, ir, old);
		if (ret) {
			ir->cpu = old;
			ir->g = old_g;
		}
	}
	its_unlock(sys, fl);
	its_tell(sys);
	return ret;
}

/*
 * The IRQ goes: its events are discarded (their pending state with
 * them), and the device unmapped with its last IRQ (MAPD V=0, 6.3.8)
 * before its ITT is freed.
 */
static void its_release(struct umsi_system *sys, const struct umsi_ctl_irq *ci)
{
	struct its_priv *p = its_priv(sys);
	struct its_dev *gone = NULL;
	struct its_irq *ir;
	umsi_irqflags_t fl;
	uint32_t k;
	int ret = 0;

	fl = its_lock(sys);
	ir = its_find_irq(p, ci->irq);
	if (ir) {
		its_unlink_irq(p, ir);
		its_events_put(ir);
		for (k = 0; k < ir->count && !ret; k++)
			ret = its_event_cmd(sys, CMD_DISCARD, ir->dev->devid,
					    ir->event + k);
		if (!ret)
			ret = its_sync(sys, ir->cpu);
		/* Discarded: nothing can make them pending any more. */
		if (!ret)
			its_lpi_config(sys, ir, false);
		if (--ir->dev->nirqs == 0) {
			gone = ir->dev;
			its_unlink_dev(p, gone);
			if (!ret)
				ret = its_mapd(sys, gone, false);
		}
		if (!ret)
			ret = its_flush(sys);
	}
	its_unlock(sys, fl);
	its_tell(sys);
	if (ret)
		umsi_log(sys, UMSI_LOG_ERROR, "arm64-its: irq %u: unmapping "
			 "failed (%d); its ITT is kept", ci->irq, ret);
	if (!ir)
		return;
	/* The ITS may still read an ITT it was not told to forget. */
	if (!ret)
		its_dev_free(sys, gone);
	else
		its_dev_hold(sys, gone);
	umsi_free(sys, ir, sizeof(*ir));
}

/* The current CPU's redistributor, asked for the LPI of identity @id. */
static bool its_pending(struct umsi_system *sys, uint32_t id)
{
	struct umsi_ctl_env *env = umsi_ctl_env(sys);
	struct its_priv *p = env->priv;

	uint32_t cpu, intid = p->first_lpi + id;

	if (id >= p->nids)
		return false;
	if (p->own_tables) {
		const volatile uint8_t *pend;

		cpu = umsi_host_current_cpu(sys);
		if (cpu >= p->ncpus || !p->pend[cpu].virt)
			return false;
		pend = p->pend[cpu].virt;
		return (pend[intid / 8] >> (intid % 8)) & 1;
	}
	return umsi_host_irq_pending(sys, intid);
}

/*
 * Make identity @id pending once on the CPU its event is mapped to: INT of
 * that event (6.3.6), found by a walk of the IRQs (a replay is rare).
 * @cpu is where the core believes it is: the ITS knows better.
 */
static int its_resend(struct umsi_system *sys, uint32_t cpu, uint32_t id)
{
	struct its_priv *p = its_priv(sys);
	struct its_irq *ir;
	umsi_irqflags_t fl;
	int ret = -UMSI_ENOENT;

	if (cpu >= p->ncpus || id >= p->nids)
		return -UMSI_EINVAL;
	fl = its_lock(sys);
	for (ir = p->irqs; ir; ir = ir->next) {
		if (id < ir->g || id - ir->g >= ir->count)
			continue;
		ret = its_event_cmd(sys, CMD_INT, ir->dev->devid,
				    ir->event + (id - ir->g));
		if (!ret)
			ret = its_flush(sys);
		break;
	}
	its_unlock(sys, fl);
	its_tell(sys);
	return ret;
}

const struct umsi_ctl umsi_ctl_arm64_its = {
	.name = "arm64-its",
	.move = UMSI_CTL_MOVE_COMMAND,
	.init = its_init,
	.fini = its_fini,
	.cpu_init = its_cpu_init,
	.compose = its_compose,
	.release = its_release,
	.retarget = its_retarget,
	.pending = its_pending,
	.resend = its_resend,
	/* The kernel acknowledges (ICC_IAR1_EL1) and ends (ICC_EOIR1_EL1). */
	.eoi = false,
	.global_space = true,
	/* The kernel never dispatches ICC_IAR1_EL1's 1023: nothing is. */
	.spurious_id = 0xffffffffu,
};
