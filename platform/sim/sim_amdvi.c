/* SPDX-License-Identifier: MIT */
/*
 * sim_amdvi.c - an AMD-Vi IOMMU, interrupt remapping only (AMD I/O
 * Virtualization Technology: MMIO registers 3.4, device table entry
 * 2.2.2, interrupt remapping 2.2.5, commands 2.4), with QEMU 7.2
 * amd-iommu's register layout and its checks of a remapped message (the
 * address exactly 0xFEE00000, data bits 10:8 fixed or arbitrated).
 *
 * Like the VT-d model, the unit reads the device table, the command
 * buffer and the interrupt tables from the memory software gave it
 * (phys_alloc), by the addresses latched from the base registers. It
 * caches what it used, as hardware may: a DeviceID's DTE until an
 * INVALIDATE_DEVTAB_ENTRY names it, its entries until an
 * INVALIDATE_INTERRUPT_TABLE does, so software that changes either and
 * does not invalidate sees the old one still used (counted as stale).
 *
 * The machine's message path hands every interrupt request to the
 * remapping units (sim_models.c) first; while the unit is off, or for a
 * requester whose DTE passes, it does not take the message.
 */
#include <stdlib.h>
#include <string.h>

#include "sim_priv.h"

#define AV_SIZE         0x4000u

#define R_DEVTAB        0x0000u
#define R_CMDBUF        0x0008u
#define R_CONTROL       0x0018u
#define R_EFR           0x0030u
#define R_CMD_HEAD      0x2000u
#define R_CMD_TAIL      0x2008u
#define R_STATUS        0x2020u

#define CTL_IOMMU_EN    (1ull << 0)
#define CTL_CMDBUF_EN   (1ull << 12)
#define ST_CMD_ERROR    (1ull << 0)         /* the model's: a bad command */
/* QEMU 7.2's extended features: prefetch, PPR, GT, IA, HE, GA, HATS, GATS. */
#define EFR_VALUE       0x2d93ull

#define ADDR_4K         0x000ffffffffff000ull
#define DTE_IV          (1ull << 0)
#define DTE_ROOT        (((1ull << 46) - 1) << 6)
#define DTE_RSVD2       0x08f0000000000000ull
#define IRTE_REMAP_EN   (1u << 0)
#define IRTE_GUEST      (1u << 7)

#define CACHE_SLOTS     4096u

/* A cached DTE's third quadword, or entry, stamped with its generation. */
struct av_cached {
	uint32_t key, gen;
	uint64_t val;
	bool used;
};

struct sim_amdvi {
	uint64_t base;                  /* its 16 KiB of registers */
	/* Its DeviceIDs (struct umsi_amdvi_unit); @all: the one unit of
	 * config.amdvi alone, every requester. */
	bool all;
	struct umsi_rid_range *devs;
	uint32_t ndevs;
	uint64_t devtab, cmdbuf, control, status;
	uint32_t head, tail;
	bool silent;
	uint32_t *devgen;               /* per DeviceID: bumped to drop cache */
	uint32_t *tabgen;
	struct av_cached dte[CACHE_SLOTS], irte[CACHE_SLOTS];
	/* DeviceIDs whose DTE software told it of (INVALIDATE_DEVTAB_ENTRY):
	 * the ones whose interrupt tables it may read. */
	uint64_t told[65536 / 64];
	struct umsi_sim_amdvi_stats st;
};

/*
 * The unit that serves requester @rid (an IO-APIC's message without one:
 * the IO-APIC's ID), as the IVHDs' device entries say; NULL: none, and
 * the message goes as on a machine without one.
 */
static struct sim_amdvi *av_for(const struct umsi_sim *sim, uint32_t rid)
{
	if (rid == UMSI_SIM_NO_REQUESTER)
		rid = sim->ioapic_rid;
	for (uint32_t i = 0; i < sim->namdvi; i++) {
		struct sim_amdvi *a = &sim->amdvi[i];

		if (a->all)
			return a;
		for (uint32_t k = 0; k < a->ndevs; k++)
			if (rid >= a->devs[k].first && rid <= a->devs[k].last)
				return a;
	}
	return NULL;
}

static struct sim_amdvi *av_unit(const struct umsi_sim *sim, uint32_t unit)
{
	return sim && unit < sim->namdvi ? &sim->amdvi[unit] : NULL;
}

static uint32_t devtab_entries(const struct sim_amdvi *a)
{
	return ((uint32_t)(a->devtab & 0x1ff) + 1) * 128u;
}

/* DeviceID @devid's third DTE quadword (cached), or false when unreadable. */
static bool dte_read(struct umsi_sim *sim, struct sim_amdvi *a,
		     uint32_t devid, uint64_t *q2, bool *stale)
{
	struct av_cached *c = &a->dte[devid % CACHE_SLOTS];
	const uint64_t *p;

	if (devid >= devtab_entries(a))
		return false;
	p = sim_phys_ptr_locked(sim, (a->devtab & ADDR_4K) + 32ull * devid, 32);
	if (!p)
		return false;
	if (c->used && c->key == devid && c->gen == a->devgen[devid]) {
		*stale |= c->val != p[2];
		*q2 = c->val;
		return true;
	}
	c->used = true;
	c->key = devid;
	c->gen = a->devgen[devid];
	c->val = p[2];
	*q2 = p[2];
	return true;
}

/* Entry @index of DeviceID @devid's table at @root (cached). */
static bool irte_read(struct umsi_sim *sim, struct sim_amdvi *a,
		      uint32_t devid, uint64_t root, uint32_t index,
		      uint32_t *irte, bool *stale)
{
	uint32_t key = devid << 11 | index;
	struct av_cached *c = &a->irte[(key * 2654435761u) % CACHE_SLOTS];
	const uint32_t *p = sim_phys_ptr_locked(sim, root + 4ull * index, 4);

	if (!p)
		return false;
	if (c->used && c->key == key && c->gen == a->tabgen[devid]) {
		*stale |= (uint32_t)c->val != *p;
		*irte = (uint32_t)c->val;
		return true;
	}
	c->used = true;
	c->key = key;
	c->gen = a->tabgen[devid];
	c->val = *p;
	*irte = *p;
	return true;
}

/*
 * What the unit does with a message from @rid: not take it (false: the
 * machine delivers it as it is), or take it and say where it goes (*@ok
 * false: aborted).
 */
static bool av_resolve(struct umsi_sim *sim, uint32_t rid, uint64_t address,
		       uint32_t data, bool *ok, uint32_t *apic_id,
		       uint8_t *vector, bool count)
{
	struct sim_amdvi *a = av_for(sim, rid);
	uint32_t devid, index, irte, len;
	bool stale = false;
	uint64_t q2;

	if (!a || !(a->control & CTL_IOMMU_EN) || !a->devtab ||
	    (address & ~0xfffffull) != 0xfee00000ull)
		return false;
	devid = rid == UMSI_SIM_NO_REQUESTER ? sim->ioapic_rid : rid & 0xffff;
	*ok = false;
	if (!dte_read(sim, a, devid, &q2, &stale) || (q2 & DTE_RSVD2))
		goto abort;
	if (!(q2 & DTE_IV) || ((q2 >> 60) & 3) == 1)
		return false;   /* passed as it is */
	if (((q2 >> 60) & 3) != 2)
		goto abort;     /* abort, or reserved */
	index = data & 0x7ff;
	len = (uint32_t)(q2 >> 1) & 0xf;
	if (address != 0xfee00000ull || ((data >> 8) & 7) > 1 ||
	    len > 11 || index >= (1u << len) ||
	    !irte_read(sim, a, devid, q2 & DTE_ROOT, index, &irte, &stale) ||
	    !(irte & IRTE_REMAP_EN) || (irte & IRTE_GUEST) ||
	    ((irte >> 2) & 7) > 1)
		goto abort;
	if (count && stale)
		a->st.stale++;
	*ok = true;
	*apic_id = (irte & (1u << 6)) ? UINT32_MAX : (irte >> 8) & 0xff;
	*vector = (uint8_t)(irte >> 16);
	return true;
abort:
	if (count && stale)
		a->st.stale++;
	return true;
}

static bool av_intercept_locked(struct umsi_sim *sim, uint32_t rid,
				uint64_t address, uint32_t data, int *n,
				uint32_t *apic_id, uint8_t *vector)
{
	struct sim_amdvi *a = av_for(sim, rid);
	uint32_t apic = 0;
	uint8_t vec = 0;
	bool ok = false;

	if (!av_resolve(sim, rid, address, data, &ok, &apic, &vec, true))
		return false;
	if (!ok) {
		a->st.aborted++;
		*n = sim_undeliverable_locked(sim, UMSI_SIM_UNDELIV_REMAP,
					      address, data);
		return true;
	}
	a->st.remapped++;
	if (apic_id)
		*apic_id = apic;
	if (vector)
		*vector = vec;
	if (apic == UINT32_MAX)
		*n = sim_undeliverable_locked(sim, UMSI_SIM_UNDELIV_MODE,
					      address, data);
	else
		*n = sim_deliver_phys_locked(sim, apic, vec, false, address,
					     data);
	return true;
}

static bool av_target_locked(struct umsi_sim *sim, uint32_t rid,
			     uint64_t address, uint32_t data, bool *ok,
			     uint32_t *apic_id, uint8_t *vector)
{
	return av_resolve(sim, rid, address, data, ok, apic_id, vector, false);
}

/* ---- Commands ------------------------------------------------------------------- */

/* One command; false stops the buffer (a command the unit does not know). */
static bool av_command_locked(struct umsi_sim *sim, struct sim_amdvi *a,
			      const uint64_t *c)
{
	uint32_t op = (uint32_t)(c[0] >> 60), devid = (uint32_t)c[0] & 0xffff;
	uint64_t *store;

	switch (op) {
	case 1:         /* COMPLETION_WAIT */
		a->st.waits++;
		if (c[0] & 1) {
			store = sim_phys_ptr_locked(sim, c[0] & 0x000ffffffffffff8ull,
						    8);
			if (!store)
				return false;
			*store = c[1];
		}
		return true;
	case 2:         /* INVALIDATE_DEVTAB_ENTRY */
		a->st.inv_devtab++;
		a->devgen[devid]++;
		a->told[devid / 64] |= 1ull << (devid % 64);
		return true;
	case 5:         /* INVALIDATE_INTERRUPT_TABLE */
		a->st.inv_table++;
		a->tabgen[devid]++;
		return true;
	default:
		return false;
	}
}

static void av_run_locked(struct umsi_sim *sim, struct sim_amdvi *a)
{
	uint32_t len = 16u << ((a->cmdbuf >> 56) & 0xf);

	if (!(a->control & CTL_CMDBUF_EN) || a->silent ||
	    (a->status & ST_CMD_ERROR) || ((a->cmdbuf >> 56) & 0xf) < 8)
		return;
	while (a->head != a->tail) {
		const uint64_t *c = sim_phys_ptr_locked(sim, (a->cmdbuf &
							      ADDR_4K) + a->head,
							16);

		if (a->head >= len || a->tail >= len || !c ||
		    !av_command_locked(sim, a, c)) {
			a->status |= ST_CMD_ERROR;
			return;
		}
		a->head = (a->head + 16) % len;
	}
}

/* ---- Registers ------------------------------------------------------------------- */

static uint64_t av_reg(const struct sim_amdvi *a, uint32_t off)
{
	switch (off) {
	case R_DEVTAB:
		return a->devtab;
	case R_CMDBUF:
		return a->cmdbuf;
	case R_CONTROL:
		return a->control;
	case R_EFR:
		return EFR_VALUE;
	case R_CMD_HEAD:
		return a->head;
	case R_CMD_TAIL:
		return a->tail;
	case R_STATUS:
		return a->status;
	default:
		return 0;
	}
}

static void av_set(struct umsi_sim *sim, struct sim_amdvi *a, uint32_t off,
		   uint64_t v)
{

	switch (off) {
	case R_DEVTAB:
		a->devtab = v & (ADDR_4K | 0x1ff);
		break;
	case R_CMDBUF:
		a->cmdbuf = v & (ADDR_4K | 0xfull << 56);
		break;
	case R_CONTROL:
		a->control = v;
		av_run_locked(sim, a);
		break;
	case R_CMD_HEAD:
		a->head = (uint32_t)v & 0x7fff0u;
		break;
	case R_CMD_TAIL:
		a->tail = (uint32_t)v & 0x7fff0u;
		av_run_locked(sim, a);
		break;
	case R_STATUS:
		a->status &= ~v;        /* write 1 to clear */
		break;
	default:
		break;
	}
}

static bool av_mmio_locked(struct umsi_sim *sim, uint64_t phys, bool write,
			   uint32_t *val)
{
	struct sim_amdvi *a = NULL;
	uint32_t off, reg;
	uint64_t v;

	for (uint32_t i = 0; i < sim->namdvi && !a; i++)
		if (phys >= sim->amdvi[i].base &&
		    phys - sim->amdvi[i].base < AV_SIZE)
			a = &sim->amdvi[i];
	if (!a)
		return false;
	off = (uint32_t)(phys - a->base) & ~3u;
	reg = off & ~7u;
	v = av_reg(a, reg);
	if (!write) {
		*val = (uint32_t)(off & 4 ? v >> 32 : v);
		return true;
	}
	/* 64-bit registers are written as two halves, low first: the
	 * high half's write is what takes effect for the tail. */
	if (off & 4)
		v = (v & 0xffffffffull) | (uint64_t)*val << 32;
	else
		v = (v & ~0xffffffffull) | *val;
	av_set(sim, a, reg, v);
	return true;
}

/* ---- Public ------------------------------------------------------------------------ */

int umsi_sim_amdvi_unit_stats(struct umsi_sim *sim, uint32_t unit,
			      struct umsi_sim_amdvi_stats *out)
{
	struct sim_amdvi *a = av_unit(sim, unit);

	if (!a || !out)
		return -UMSI_EINVAL;
	sim_lock(sim);
	*out = a->st;
	sim_unlock(sim);
	return 0;
}

int umsi_sim_amdvi_stats(struct umsi_sim *sim,
			 struct umsi_sim_amdvi_stats *out)
{
	return umsi_sim_amdvi_unit_stats(sim, 0, out);
}

int umsi_sim_amdvi_unit_silent(struct umsi_sim *sim, uint32_t unit,
			       bool silent)
{
	struct sim_amdvi *a = av_unit(sim, unit);

	if (!a)
		return -UMSI_EINVAL;
	sim_lock(sim);
	a->silent = silent;
	if (!silent)
		av_run_locked(sim, a);
	sim_unlock(sim);
	return 0;
}

int umsi_sim_amdvi_silent(struct umsi_sim *sim, bool silent)
{
	return umsi_sim_amdvi_unit_silent(sim, 0, silent);
}

/* ---- The model (sim_models.c) --------------------------------------------------- */

static void av_model_fini(struct umsi_sim *sim)
{
	for (uint32_t i = 0; i < sim->namdvi; i++) {
		free(sim->amdvi[i].devgen);
		free(sim->amdvi[i].tabgen);
		free(sim->amdvi[i].devs);
	}
	free(sim->amdvi);
	sim->amdvi = NULL;
	sim->namdvi = 0;
}

static int av_unit_init(struct sim_amdvi *a, const struct umsi_sim_config *cfg,
			uint32_t i)
{
	const struct umsi_amdvi_unit *u;

	a->devgen = calloc(65536, sizeof(*a->devgen));
	a->tabgen = calloc(65536, sizeof(*a->tabgen));
	if (!a->devgen || !a->tabgen)
		return -UMSI_ENOMEM;
	if (!cfg->namdvi_units) {
		a->base = UMSI_SIM_AMDVI_BASE;
		a->all = true;
		return 0;
	}
	u = &cfg->amdvi_units[i];
	a->base = u->reg_base;
	if (u->reg_base < UMSI_SIM_AMDVI_BASE || u->reg_base % AV_SIZE ||
	    u->reg_base >= UMSI_SIM_AMDVI_BASE +
			   (uint64_t)UMSI_SIM_AMDVI_MAX_UNITS * AV_SIZE ||
	    !u->ndevices || !u->devices || u->ndevices > UMSI_VTD_MAX_SCOPE)
		return -UMSI_EINVAL;
	a->devs = malloc(u->ndevices * sizeof(*a->devs));
	if (!a->devs)
		return -UMSI_ENOMEM;
	memcpy(a->devs, u->devices, u->ndevices * sizeof(*a->devs));
	a->ndevs = u->ndevices;
	for (uint32_t k = 0; k < a->ndevs; k++)
		if (a->devs[k].first > a->devs[k].last)
			return -UMSI_EINVAL;
	return 0;
}

static int av_model_init(struct umsi_sim *sim, const struct umsi_sim_config *cfg)
{
	uint32_t n = cfg->namdvi_units ? cfg->namdvi_units : 1;
	int err;

	if (!cfg->amdvi && !cfg->namdvi_units)
		return 0;
	/* An x86 machine's units, and one kind of remapping at a time. */
	if (cfg->controller != UMSI_SIM_CTL_X86_LAPIC || cfg->vtd ||
	    cfg->nvtd_units || n > UMSI_SIM_AMDVI_MAX_UNITS ||
	    (cfg->namdvi_units && !cfg->amdvi_units))
		return -UMSI_EINVAL;
	sim->amdvi = calloc(n, sizeof(*sim->amdvi));
	if (!sim->amdvi)
		return -UMSI_ENOMEM;
	sim->namdvi = n;
	for (uint32_t i = 0; i < n; i++) {
		err = av_unit_init(&sim->amdvi[i], cfg, i);
		if (err)
			return err;
		for (uint32_t j = 0; j < i; j++)
			if (sim->amdvi[j].base == sim->amdvi[i].base)
				return -UMSI_EINVAL;
	}
	return 0;
}

static bool av_remaps(const struct umsi_sim *sim)
{
	return sim->namdvi != 0;
}

static void av_dump(struct umsi_sim *sim, FILE *out)
{
	for (uint32_t i = 0; i < sim->namdvi; i++) {
		const struct sim_amdvi *a = &sim->amdvi[i];

		fprintf(out, "amdvi");
		if (sim->namdvi > 1)
			fprintf(out, "%u (0x%llx)", i,
				(unsigned long long)a->base);
		fprintf(out, " control 0x%llx devtab 0x%llx cmdbuf 0x%llx head "
			"0x%x tail 0x%x status 0x%llx%s, remapped %llu, aborted "
			"%llu, invalidations devtab %llu table %llu, waits "
			"%llu, stale %llu\n",
			(unsigned long long)a->control,
			(unsigned long long)a->devtab,
			(unsigned long long)a->cmdbuf, a->head, a->tail,
			(unsigned long long)a->status,
			a->silent ? " silent" : "",
			(unsigned long long)a->st.remapped,
			(unsigned long long)a->st.aborted,
			(unsigned long long)a->st.inv_devtab,
			(unsigned long long)a->st.inv_table,
			(unsigned long long)a->st.waits,
			(unsigned long long)a->st.stale);
	}
}

static bool overlaps(uint64_t a, uint64_t alen, uint64_t b, uint64_t blen)
{
	return a < b + blen && b < a + alen;
}

/*
 * An IOMMU that is on reads its device table, its command buffer, and the
 * interrupt table of every DeviceID whose DTE remaps (of those software
 * told it of).
 */
static const char *av_reads(struct umsi_sim *sim, uint64_t phys, size_t size)
{
	for (uint32_t i = 0; i < sim->namdvi; i++) {
		const struct sim_amdvi *a = &sim->amdvi[i];
		uint32_t n = devtab_entries(a);

		if (!(a->control & CTL_IOMMU_EN))
			continue;
		if (a->devtab && overlaps(phys, size, a->devtab & ADDR_4K,
					  32ull * n))
			return "an AMD-Vi unit's device table";
		if ((a->control & CTL_CMDBUF_EN) &&
		    overlaps(phys, size, a->cmdbuf & ADDR_4K,
			     16ull << ((a->cmdbuf >> 56) & 0xf)))
			return "an AMD-Vi unit's command buffer";
		for (uint32_t w = 0; w < 65536 / 64; w++) {
			for (uint64_t m = a->told[w]; m; m &= m - 1) {
				uint32_t devid = w * 64 +
						 (uint32_t)__builtin_ctzll(m);
				const uint64_t *q;

				if (devid >= n)
					continue;
				q = sim_phys_ptr_locked(sim, (a->devtab & ADDR_4K) +
							32ull * devid + 16, 8);
				if (q && (*q & DTE_IV) && ((*q >> 60) & 3) == 2 &&
				    overlaps(phys, size, *q & DTE_ROOT,
					     4ull << ((*q >> 1) & 0xf)))
					return "an AMD-Vi unit's DTE (a "
					       "DeviceID's interrupt table)";
			}
		}
	}
	return NULL;
}

const struct sim_model_ops sim_amdvi_ops = {
	.name = "amd-vi",
	.controller = SIM_NO_CTL,
	.init = av_model_init,
	.fini = av_model_fini,
	.mmio = av_mmio_locked,
	.remaps = av_remaps,
	.intercept = av_intercept_locked,
	.target = av_target_locked,
	.reads = av_reads,
	.dump = av_dump,
};
