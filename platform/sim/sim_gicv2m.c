/* SPDX-License-Identifier: MIT */
/*
 * sim_gicv2m.c - an Arm GICv2 distributor with a v2m MSI frame (IHI 0048B;
 * QEMU's arm_gic and arm_gicv2m), behind the same struct sim_ctl_model as
 * the other controllers (sim_core.c). umsi_sim.h, UMSI_SIM_CTL_GICV2M,
 * says what it does.
 *
 * The distributor keeps, for each INTID 0-1019, its enable, pending,
 * priority, CPU targets and configuration. Which CPU takes a pending
 * SPI is worked out again whenever one of those changes: the lowest CPU
 * interface its target byte names (CPU n is interface n), if it is
 * enabled. That CPU's "eip" bitmap (the model's per-CPU pending set, as
 * the IMSIC and ITS models keep one) holds it until the CPU takes it;
 * taking it clears the distributor's pending bit.
 */
#include <stdlib.h>
#include <string.h>

#include "sim_priv.h"

#define V2M_MSI_TYPER      0x008u
#define V2M_MSI_SETSPI_NS  0x040u
#define FRAME_SIZE         0x1000u
#define GICD_SIZE          0x1000u
#define GICD_ISENABLER     0x100u
#define GICD_ICENABLER     0x180u
#define GICD_ISPENDR       0x200u
#define GICD_ICPENDR       0x280u
#define GICD_IPRIORITYR    0x400u
#define GICD_ITARGETSR     0x800u
#define GICD_ICFGR         0xc00u
#define NINTID             1020u
#define NIDS               1024u        /* identities a CPU has: INTIDs */
#define NO_CPU             UINT32_MAX

struct sim_gicv2 {
	uint32_t typer;
	uint32_t spi_base, spi_count;   /* as MSI_TYPER says */
	uint64_t enabled[NIDS / 64];
	uint64_t pending[NIDS / 64];
	uint8_t prio[NIDS];
	uint8_t targets[NIDS];
	uint32_t cfg[NIDS / 16];
	uint32_t on_cpu[NIDS];          /* whose eip holds it, or NO_CPU */
	uint64_t wired[NIDS / 64];      /* pending as a wired input's SPI */
};

static bool bit(const uint64_t *w, uint32_t i)
{
	return (w[i / 64] >> (i % 64)) & 1;
}

static void put(uint64_t *w, uint32_t i, bool on)
{
	if (on)
		w[i / 64] |= 1ull << (i % 64);
	else
		w[i / 64] &= ~(1ull << (i % 64));
}

static int sim_gicv2m_init(struct umsi_sim *sim, const struct umsi_sim_config *cfg)
{
	struct sim_gicv2 *g;
	uint32_t words = NIDS / 64;

	sim->ctl = &sim_gicv2m_model;
	sim->nids = NIDS;
	g = calloc(1, sizeof(*g));
	sim->imsic_bits = calloc((size_t)cfg->ncpus * words, sizeof(uint64_t));
	if (!g || !sim->imsic_bits) {
		free(g);
		return -UMSI_ENOMEM;
	}
	g->typer = cfg->v2m_typer ? cfg->v2m_typer :
		   UMSI_SIM_V2M_SPI_BASE << 16 | UMSI_SIM_V2M_SPI_COUNT;
	g->spi_base = (g->typer >> 16) & 0x3ffu;
	g->spi_count = g->typer & 0x3ffu;
	for (uint32_t i = 0; i < NIDS; i++)
		g->on_cpu[i] = NO_CPU;
	sim->gicv2 = g;
	for (uint32_t i = 0; i < cfg->ncpus; i++)
		sim->cpus[i].eip = sim->imsic_bits + (size_t)i * words;
	return 0;
}

static void sim_gicv2m_fini(struct umsi_sim *sim)
{
	free(sim->gicv2);
	sim->gicv2 = NULL;
}

/* Set or clear @intid in @cpu's eip, keeping the CPU's pending flag. */
static void eip_set_locked(struct umsi_sim *sim, uint32_t cpu, uint32_t intid,
			   bool on)
{
	uint64_t *w = sim->cpus[cpu].eip;
	bool empty = true;

	if (bit(w, intid) == on)
		return;
	put(w, intid, on);
	if (on) {
		sim_pending_set_locked(sim, cpu);
		sim_cpu_kick_locked(sim, cpu);
		return;
	}
	for (uint32_t k = 0; k < NIDS / 64 && empty; k++)
		empty = !w[k];
	sim_pending_clear_locked(sim, cpu, empty);
}

/* The CPU that takes @intid now, or NO_CPU. */
static uint32_t v2_cpu(const struct umsi_sim *sim, uint32_t intid)
{
	const struct sim_gicv2 *g = sim->gicv2;
	uint8_t t = g->targets[intid];

	if (!bit(g->pending, intid) || !bit(g->enabled, intid) || !t)
		return NO_CPU;
	t = (uint8_t)__builtin_ctz(t);
	return t < sim->ncpus ? t : NO_CPU;
}

/* Work out again which CPU holds @intid (pending, enable or target changed). */
static void v2_update_locked(struct umsi_sim *sim, uint32_t intid)
{
	struct sim_gicv2 *g = sim->gicv2;
	uint32_t now = v2_cpu(sim, intid), was = g->on_cpu[intid];

	if (now == was)
		return;
	if (was != NO_CPU)
		eip_set_locked(sim, was, intid, false);
	g->on_cpu[intid] = now;
	if (now != NO_CPU)
		eip_set_locked(sim, now, intid, true);
}

/* SPI @intid edges: pending (or coalesced), counted on its CPU if any. */
static void v2_edge_locked(struct umsi_sim *sim, uint32_t intid)
{
	struct sim_gicv2 *g = sim->gicv2;
	uint32_t cpu;

	if (bit(g->pending, intid)) {
		sim->st.irr_coalesced++;
		cpu = g->on_cpu[intid];
		if (cpu != NO_CPU) {
			sim_coalesced_locked(sim, cpu, intid);
		}
		return;
	}
	put(g->pending, intid, true);
	v2_update_locked(sim, intid);
	cpu = g->on_cpu[intid];
	if (cpu != NO_CPU) {
		sim_delivered_locked(sim, cpu, intid);
	}
	sim->st.delivered++;
}

/* ---- MMIO: the distributor and the frame --------------------------------------- */

static uint32_t gicd_read(struct sim_gicv2 *g, uint32_t off)
{
	uint32_t i, v = 0;

	if (off >= GICD_ISENABLER && off < GICD_ISPENDR)
		return (uint32_t)(g->enabled[(off % 0x80) / 8] >>
				  (32 * ((off % 0x80) / 4 % 2)));
	if (off >= GICD_ISPENDR && off < 0x300)
		return (uint32_t)(g->pending[(off % 0x80) / 8] >>
				  (32 * ((off % 0x80) / 4 % 2)));
	if (off >= GICD_IPRIORITYR && off < GICD_IPRIORITYR + NINTID) {
		i = off - GICD_IPRIORITYR;
		memcpy(&v, &g->prio[i], 4);
		return v;
	}
	if (off >= GICD_ITARGETSR && off < GICD_ITARGETSR + NINTID) {
		i = off - GICD_ITARGETSR;
		memcpy(&v, &g->targets[i], 4);
		return v;
	}
	if (off >= GICD_ICFGR && off < GICD_ICFGR + NIDS / 4)
		return g->cfg[(off - GICD_ICFGR) / 4];
	return 0;
}

static void gicd_write(struct umsi_sim *sim, uint32_t off, uint32_t val)
{
	struct sim_gicv2 *g = sim->gicv2;
	uint32_t i, k, first;

	if (off >= GICD_ISENABLER && off < 0x300) {
		bool set = (off - GICD_ISENABLER) % 0x100 < 0x80;
		uint64_t *w = off < GICD_ISPENDR ? g->enabled : g->pending;

		first = ((off - GICD_ISENABLER) % 0x80) / 4 * 32;
		for (k = 0; k < 32; k++) {
			if (!(val >> k & 1) || first + k >= NINTID)
				continue;
			/* Writing ISPENDR is an edge of its own (a resend). */
			if (set && w == g->pending)
				v2_edge_locked(sim, first + k);
			else
				put(w, first + k, set);
			v2_update_locked(sim, first + k);
		}
		return;
	}
	if (off >= GICD_IPRIORITYR && off < GICD_IPRIORITYR + NINTID) {
		memcpy(&g->prio[off - GICD_IPRIORITYR], &val, 4);
		return;
	}
	if (off >= GICD_ITARGETSR + 32 && off < GICD_ITARGETSR + NINTID) {
		i = off - GICD_ITARGETSR;
		memcpy(&g->targets[i], &val, 4);
		for (k = 0; k < 4; k++)
			v2_update_locked(sim, i + k);
		return;
	}
	if (off >= GICD_ICFGR && off < GICD_ICFGR + NIDS / 4)
		g->cfg[(off - GICD_ICFGR) / 4] = val;
}

static bool sim_gicv2m_mmio_locked(struct umsi_sim *sim, uint64_t phys, bool write,
			    uint32_t *val)
{
	struct sim_gicv2 *g = sim->gicv2;

	if (!g)
		return false;
	if (phys >= UMSI_SIM_GICD_BASE && phys < UMSI_SIM_GICD_BASE + GICD_SIZE) {
		uint32_t off = (uint32_t)(phys - UMSI_SIM_GICD_BASE) & ~3u;

		if (write)
			gicd_write(sim, off, *val);
		else
			*val = gicd_read(g, off);
		return true;
	}
	if (phys >= UMSI_SIM_V2M_BASE && phys < UMSI_SIM_V2M_BASE + FRAME_SIZE) {
		uint32_t off = (uint32_t)(phys - UMSI_SIM_V2M_BASE);

		if (write && off == V2M_MSI_SETSPI_NS)
			sim->ctl->deliver(sim, phys, *val);
		else if (!write)
			*val = off == V2M_MSI_TYPER ? g->typer : 0;
		return true;
	}
	return false;
}

/* ---- The controller model ------------------------------------------------------ */

static bool v2_decode(const struct umsi_sim *sim, uint64_t address,
		      uint32_t data)
{
	const struct sim_gicv2 *g = sim->gicv2;

	return address == UMSI_SIM_V2M_BASE + V2M_MSI_SETSPI_NS &&
	       data >= g->spi_base && data - g->spi_base < g->spi_count &&
	       data < NINTID;
}

static int v2_deliver_locked(struct umsi_sim *sim, uint64_t address,
			     uint32_t data)
{
	if (address != UMSI_SIM_V2M_BASE + V2M_MSI_SETSPI_NS)
		return sim_undeliverable_locked(sim, UMSI_SIM_UNDELIV_STRAY,
						address, data);
	if (!v2_decode(sim, address, data))
		return sim_undeliverable_locked(sim, UMSI_SIM_UNDELIV_VECTOR,
						address, data);
	v2_edge_locked(sim, data);
	return sim->gicv2->on_cpu[data] != NO_CPU;
}

static bool v2_target_locked(struct umsi_sim *sim, uint64_t address,
			     uint32_t data, uint32_t *cpu, uint32_t *id)
{
	const struct sim_gicv2 *g = sim->gicv2;
	uint8_t t;

	if (!v2_decode(sim, address, data))
		return false;
	t = g->targets[data];
	*cpu = t && (uint32_t)__builtin_ctz(t) < sim->ncpus ?
	       (uint32_t)__builtin_ctz(t) : UINT32_MAX;
	*id = data;
	return true;
}

/* Register 0x80000000 | INTID reads whether it is pending for @cpu. */
static uint64_t v2_read_locked(struct umsi_sim *sim, uint32_t cpu, uint32_t reg)
{
	uint32_t intid = reg & 0x7fffffffu;

	if ((reg & 0x80000000u) && intid < NINTID)
		return bit(sim->cpus[cpu].eip, intid);
	sim_bad_access_locked(sim, "read of GIC register 0x%x", reg);
	return 0;
}

static void v2_write_locked(struct umsi_sim *sim, uint32_t cpu, uint32_t reg,
			    uint64_t val)
{
	(void)cpu;
	sim_bad_access_locked(sim, "write of GIC register 0x%x value 0x%llx",
			      reg, (unsigned long long)val);
}

/* The lowest INTID pending for @cpu (one priority for all here). */
static int v2_next_locked(struct umsi_sim *sim, uint32_t cpu)
{
	const uint64_t *w = sim->cpus[cpu].eip;

	for (uint32_t k = 0; k < NIDS / 64; k++)
		if (w[k])
			return (int)(k * 64 + (uint32_t)__builtin_ctzll(w[k]));
	return -1;
}

/* GICC_IAR: acknowledged, no longer pending. */
static void v2_take_locked(struct umsi_sim *sim, uint32_t cpu, uint32_t id)
{
	if (id < NIDS && bit(sim->gicv2->wired, id)) {
		put(sim->gicv2->wired, id, false);
		eip_set_locked(sim, cpu, id, false);
		return;
	}
	put(sim->gicv2->pending, id, false);
	v2_update_locked(sim, id);
}

/*
 * A wired input's SPI reached @cpu, whose kernel dispatches identity @id
 * (a v2m identity: the dispatch function gets INTID spi_base + @id, as
 * for the frame's own SPIs, which the back end never gives that identity).
 */
static int v2_wired_intid_locked(struct umsi_sim *sim, uint32_t id)
{
	const struct sim_gicv2 *g = sim->gicv2;

	if (id >= g->spi_count || g->spi_base + id >= NINTID)
		return -UMSI_EINVAL;
	return (int)(g->spi_base + id);
}

static int v2_wired_raise_locked(struct umsi_sim *sim, uint32_t cpu,
				 uint32_t id)
{
	struct sim_gicv2 *g = sim->gicv2;
	int n = v2_wired_intid_locked(sim, id);
	uint32_t intid = (uint32_t)n;

	if (n < 0 || cpu >= sim->ncpus || bit(g->wired, intid))
		return -UMSI_EINVAL;
	put(g->wired, intid, true);
	eip_set_locked(sim, cpu, intid, true);
	sim_delivered_locked(sim, cpu, intid);
	sim->st.delivered++;
	return (int)intid;
}

/* GICC_EOIR is the kernel's: nothing the model tracks. */
static void v2_finish_locked(struct umsi_sim *sim, uint32_t cpu, uint32_t id,
			     bool had_fn)
{
	(void)sim;
	(void)cpu;
	(void)id;
	(void)had_fn;
}

/* umsi_sim_raise(): the SPI edges (it goes where its target says). */
static int v2_raise_locked(struct umsi_sim *sim, uint32_t cpu, uint32_t id)
{
	(void)cpu;
	if (id < 32 || id >= NINTID)
		return -UMSI_EINVAL;
	v2_edge_locked(sim, id);
	return 0;
}

static bool v2_pending_locked(struct umsi_sim *sim, uint32_t cpu,
			      uint32_t intid)
{
	return intid < NINTID && bit(sim->cpus[cpu].eip, intid);
}

static void v2_eoi_locked(struct umsi_sim *sim, uint32_t cpu, uint32_t id)
{
	(void)cpu;
	sim_bad_access_locked(sim, "eoi of INTID %u through the host", id);
}

static void v2_ipi_locked(struct umsi_sim *sim, uint32_t cpu, uint32_t hwid,
			  uint32_t id)
{
	(void)cpu;
	sim_bad_access_locked(sim, "send_ipi of INTID %u to %u through the "
			      "host", id, hwid);
}

const struct sim_ctl_model sim_gicv2m_model = {
	.name = "arm64-gicv2m",
	.read = v2_read_locked,
	.write = v2_write_locked,
	.pending = v2_pending_locked,
	.eoi = v2_eoi_locked,
	.ipi = v2_ipi_locked,
	.deliver = v2_deliver_locked,
	.target = v2_target_locked,
	.next = v2_next_locked,
	.take = v2_take_locked,
	.finish = v2_finish_locked,
	.raise = v2_raise_locked,
	.wired_target = true,
	.wired = SIM_WIRED_ARM_SPI,
	.wired_raise = v2_wired_raise_locked,
	.wired_intid = v2_wired_intid_locked,
};

/* ---- The model (sim_models.c) ---------------------------------------------- */

static int gicv2m_model_init(struct umsi_sim *sim,
			     const struct umsi_sim_config *cfg)
{
	if (cfg->controller != UMSI_SIM_CTL_GICV2M)
		return 0;
	return sim_gicv2m_init(sim, cfg);
}

const struct sim_model_ops sim_gicv2m_ops = {
	.name = "arm64-gicv2m",
	.controller = UMSI_SIM_CTL_GICV2M,
	.init = gicv2m_model_init,
	.fini = sim_gicv2m_fini,
	.mmio = sim_gicv2m_mmio_locked,
};
