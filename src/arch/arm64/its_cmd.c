/* SPDX-License-Identifier: MIT */
/*
 * The GICv3 ITS back end's command queue (IHI 0069 6.3): commands written
 * into a page of memory the ITS reads, GITS_CWRITER moved, and every batch
 * waited for until GITS_CREADR reaches it; an ITS that stalls or stops
 * reading is not trusted again. Also the commands' users that map, move
 * and synchronise an IRQ's events. All under the back end's lock.
 */
#include "its_priv.h"

/* ---- Command queue (under the lock) --------------------------------------- */

/*
 * Have the ITS run what was queued: publish GITS_CWRITER, wait until
 * GITS_CREADR reaches it. A stalled or silent ITS is not retried: every
 * later command fails too. Return 0, -UMSI_EIO (stalled) or
 * -UMSI_ETIMEDOUT.
 */
int umsi_its_flush(struct umsi_system *sys)
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
void umsi_its_tell(struct umsi_system *sys)
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
		ret = umsi_its_flush(sys);
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

int umsi_its_mapc(struct umsi_system *sys, uint32_t icid, uint64_t rdbase)
{
	return its_cmd(sys, CMD_MAPC, 0, BASER_VALID | rdbase << 16 | icid);
}

int umsi_its_mapd(struct umsi_system *sys, const struct its_dev *dev,
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
int umsi_its_event_cmd(struct umsi_system *sys, uint32_t cmd, uint32_t devid,
			 uint32_t event)
{
	return its_cmd(sys, cmd | (uint64_t)devid << 32, event, 0);
}

int umsi_its_sync(struct umsi_system *sys, uint32_t cpu)
{
	return its_cmd(sys, CMD_SYNC, 0, its_priv(sys)->rdbase[cpu] << 16);
}

/*
 * Enable (@on) or disable @ir's LPIs in the property table the back end
 * owns (nothing when the kernel owns it): the byte is written before the
 * MAPTI/INV that makes the redistributor read it (5.1.1).
 */
void umsi_its_lpi_config(struct umsi_system *sys, const struct its_irq *ir,
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
int umsi_its_map_events(struct umsi_system *sys, const struct its_irq *ir,
			  uint32_t old_cpu)
{
	struct its_priv *p = its_priv(sys);
	uint32_t devid = ir->dev->devid, k;
	int ret = 0;

	umsi_its_lpi_config(sys, ir, true);
	for (k = 0; k < ir->count && !ret; k++)
		ret = its_mapti(sys, devid, ir->event + k,
				p->first_lpi + ir->g + k, ir->cpu);
	for (k = 0; k < ir->count && !ret; k++)
		ret = umsi_its_event_cmd(sys, CMD_INV, devid, ir->event + k);
	if (!ret)
		ret = umsi_its_sync(sys, ir->cpu);
	if (!ret && old_cpu != UINT32_MAX && old_cpu != ir->cpu)
		ret = umsi_its_sync(sys, old_cpu);
	return ret ? ret : umsi_its_flush(sys);
}

/*
 * Move @ir's events, LPIs unchanged, to its CPU's collection (MOVI each),
 * then synchronise the redistributor they left and the one they reach:
 * after both SYNCs the old one holds nothing of them (MOVI moved a
 * pending LPI along) and the new one takes every later message.
 */
int umsi_its_move_events(struct umsi_system *sys, const struct its_irq *ir,
			   uint32_t old_cpu)
{
	uint32_t devid = ir->dev->devid, k;
	int ret = 0;

	for (k = 0; k < ir->count && !ret; k++)
		ret = its_movi(sys, devid, ir->event + k, ir->cpu);
	if (!ret && old_cpu != ir->cpu)
		ret = umsi_its_sync(sys, old_cpu);
	if (!ret)
		ret = umsi_its_sync(sys, ir->cpu);
	return ret ? ret : umsi_its_flush(sys);
}
