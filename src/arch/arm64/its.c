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
#include "its_priv.h"

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

void umsi_its_dev_free(struct umsi_system *sys, struct its_dev *dev)
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
		ret = umsi_its_mapd(sys, dev, true);
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
		ret = umsi_its_map_events(sys, ir, UINT32_MAX);
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
	umsi_its_tell(sys);
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
		umsi_its_dev_free(sys, fresh);
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

	if (ci->wired && p->wired_spis) {
		/* An SPI of the distributor's: the kernel routes it. */
		if (cpu >= p->ncpus || p->rdbase[cpu] == UMSI_ITS_NO_RD)
			return -UMSI_ERANGE;
		if (id >= p->nids)
			return -UMSI_EINVAL;
		msg->address = UMSI_ARM_WIRED_MSG | cpu;
		msg->data = id;
		return 0;
	}
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
				ret = umsi_its_map_events(sys, ir, old);
			} else if (ir->cpu != cpu) {
				ir->cpu = cpu;
				ret = umsi_its_move_events(sys, ir, old);
			}
			its_unlock(sys, fl);
			umsi_its_tell(sys);
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

	if (ci->wired && p->wired_spis)
		return cpu < p->ncpus && p->rdbase[cpu] != UMSI_ITS_NO_RD ?
		       UMSI_CTL_REWRITE : -UMSI_ERANGE;
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
		ret = old_g == id ? umsi_its_move_events(sys, ir, old) :
		      umsi_its_map_events(sys, ir, old);
		if (ret) {
			ir->cpu = old;
			ir->g = old_g;
		}
	}
	its_unlock(sys, fl);
	umsi_its_tell(sys);
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
			ret = umsi_its_event_cmd(sys, CMD_DISCARD, ir->dev->devid,
					    ir->event + k);
		if (!ret)
			ret = umsi_its_sync(sys, ir->cpu);
		/* Discarded: nothing can make them pending any more. */
		if (!ret)
			umsi_its_lpi_config(sys, ir, false);
		if (--ir->dev->nirqs == 0) {
			gone = ir->dev;
			its_unlink_dev(p, gone);
			if (!ret)
				ret = umsi_its_mapd(sys, gone, false);
		}
		if (!ret)
			ret = umsi_its_flush(sys);
	}
	its_unlock(sys, fl);
	umsi_its_tell(sys);
	if (ret)
		umsi_log(sys, UMSI_LOG_ERROR, "arm64-its: irq %u: unmapping "
			 "failed (%d); its ITT is kept", ci->irq, ret);
	if (!ir)
		return;
	/* The ITS may still read an ITT it was not told to forget. */
	if (!ret)
		umsi_its_dev_free(sys, gone);
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
		ret = umsi_its_event_cmd(sys, CMD_INT, ir->dev->devid,
				    ir->event + (id - ir->g));
		if (!ret)
			ret = umsi_its_flush(sys);
		break;
	}
	its_unlock(sys, fl);
	umsi_its_tell(sys);
	return ret;
}

const struct umsi_ctl umsi_ctl_arm64_its = {
	.name = "arm64-its",
	.init = umsi_its_init,
	.fini = umsi_its_fini,
	.cpu_init = umsi_its_cpu_init,
	.compose = its_compose,
	.release = its_release,
	.retarget = its_retarget,
	.pending = its_pending,
	.resend = its_resend,
	/* The kernel acknowledges (ICC_IAR1_EL1) and ends (ICC_EOIR1_EL1). */
	.eoi = false,
	.domain = &umsi_ctl_domain_global,
	/* The kernel never dispatches ICC_IAR1_EL1's 1023: nothing is. */
	.spurious_id = 0xffffffffu,
};
