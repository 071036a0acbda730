/* SPDX-License-Identifier: MIT */
/*
 * sim_its.c - the Arm GICv3 ITS model (IHI 0069, chapters 5.3, 6 and
 * 12.19) and the redistributors' LPI pending state, behind the same
 * struct sim_ctl_model as the x86 local APIC and the IMSIC (sim_core.c).
 *
 * The ITS holds no translation of its own: like QEMU's, it reads and
 * writes the device table, the collection table and each device's ITT in
 * the memory software gave it (the host's phys_alloc, sim_host.c), and
 * reads commands from the queue there when GITS_CWRITER moves while it
 * is enabled. Entry formats are the model's (the architecture leaves
 * them to the implementation):
 *   device table entry (8 bytes): bit 63 valid, bits 51:8 the ITT's
 *     address, bits 4:0 EventID bits - 1 (MAPD's Size);
 *   collection table entry (8 bytes): bit 63 valid, bits 31:0 the
 *     processor number of the target redistributor (CPU n is n);
 *   ITT entry (12 bytes, its first 8 used): bit 63 valid, bits 47:32
 *     the collection, bits 31:0 the LPI.
 * So a back end that gives the ITS too little memory, or frees an ITT it
 * still maps, sees translations fail as hardware would fail them.
 *
 * A GITS_TRANSLATER write is translated at once: (DeviceID = the
 * requester, EventID = the data) -> ITT entry -> collection -> CPU, whose
 * redistributor makes the LPI pending (sim_cpu.eip, one bit per INTID). The
 * CPU takes the lowest pending LPI (its priority is the kernel's property
 * table, all equal here); acknowledging it clears the bit and nothing is
 * left to end.
 *
 * Each CPU's redistributor also has its LPI registers (GICR_CTLR,
 * GICR_TYPER, GICR_PROPBASER, GICR_PENDBASER) at UMSI_SIM_GICR_BASE + n *
 * 0x20000. Until software sets GICR_CTLR.EnableLPIs, the model is the one
 * above (the kernel owns the tables). Once it does, the redistributor is
 * software's: an LPI that becomes pending there is written to its pending
 * table in memory too, and it is taken only if its byte in the property
 * table had the enable bit when it became pending; one that had not is
 * "held" (struct sim_gicr.held) until an INV or INVALL finds it enabled.
 */
#include <stdlib.h>
#include <string.h>

#include "sim_priv.h"

#define ITS_FRAME        0x10000u
#define ITS_TRANSLATER   0x10040u
/* QEMU 7.2: physical LPIs, 12-byte ITT entries, 16 EventID, DeviceID
 * and collection ID bits, PTA 0. */
#define ITS_TYPER        0x1f0001efb1ull
#define ITS_ID_BITS      16u
#define ITE_SIZE         12u
#define ENTRY_SIZE       8u
#define PAGE_64K         65536u
#define LPI_FIRST        8192u

/* Redistributors: RD_base frame registers (IHI 0069 9.11). */
#define GICR_CTLR        0x0000u
#define GICR_TYPER       0x0008u
#define GICR_PROPBASER   0x0070u
#define GICR_PENDBASER   0x0078u
#define GICR_ENABLE_LPIS (1u << 0)
#define GICR_TYPER_PLPIS (1u << 0)
#define GICR_TYPER_LAST  (1u << 4)
#define GICR_PTZ_HI      (1u << 30)		/* PENDBASER bit 62 */
/* Cacheability (InnerCache 9:7, OuterCache 58:56), Shareability 11:10. */
#define GICR_ATTRS       (7ull << 7 | 3ull << 10 | 7ull << 56)
#define PROP_PA          0x000ffffffffff000ull
#define PEND_PA          0x000fffffffff0000ull
#define PROP_IDBITS      0x1full
#define PROPBASER_RW     (PROP_PA | GICR_ATTRS | PROP_IDBITS)
#define PENDBASER_RW     (PEND_PA | GICR_ATTRS)
#define LPI_ENABLE       (1u << 0)		/* property byte */

#define R_CTLR           0x0000u
#define R_IIDR           0x0004u
#define R_TYPER          0x0008u
#define R_CBASER         0x0080u
#define R_CWRITER        0x0088u
#define R_CREADR         0x0090u
#define R_BASER0         0x0100u
#define R_BASER_END      0x0140u
#define R_PIDR2          0xffe8u

#define CTLR_ENABLED     (1u << 0)
#define CTLR_QUIESCENT   (1u << 31)
#define VALID            (1ull << 63)
/* GITS_BASER<n>: what software may change (no Indirect, fixed page). */
#define BASER_RW         (VALID | 7ull << 59 | 7ull << 53 | \
			  0x0000ffffffff0000ull | 0xfull << 12 | 3ull << 10 | \
			  0xffull)
#define BASER_RESET(t)   ((uint64_t)(t) << 56 | (uint64_t)(ENTRY_SIZE - 1) \
			  << 48 | 2ull << 8)

static bool its_on(const struct umsi_sim *sim)
{
	return sim->ctl == &sim_its_model && sim->its;
}

static int sim_its_init(struct umsi_sim *sim, const struct umsi_sim_config *cfg)
{
	uint32_t bits = cfg->its_lpi_bits ? cfg->its_lpi_bits : 16;
	uint64_t base = cfg->its_base ? cfg->its_base : UMSI_SIM_ITS_BASE;
	uint32_t words;

	if (bits < 14 || bits > 16 || base % ITS_FRAME ||
	    base + 2 * ITS_FRAME < base)
		return -UMSI_EINVAL;
	sim->ctl = &sim_its_model;
	sim->nids = 1u << bits;
	sim->its = calloc(1, sizeof(*sim->its));
	words = sim->nids / 64;
	sim->imsic_bits = calloc((size_t)cfg->ncpus * words, sizeof(uint64_t));
	if (!sim->its || !sim->imsic_bits)
		return -UMSI_ENOMEM;
	sim->its->base = base;
	sim->its->rd = calloc(cfg->ncpus, sizeof(*sim->its->rd));
	if (!sim->its->rd)
		return -UMSI_ENOMEM;
	sim->its->baser[0] = BASER_RESET(1);	/* devices */
	sim->its->baser[1] = BASER_RESET(4);	/* collections */
	for (uint32_t i = 0; i < cfg->ncpus; i++)
		sim->cpus[i].eip = sim->imsic_bits + (size_t)i * words;
	return 0;
}

static void sim_its_fini(struct umsi_sim *sim)
{
	if (sim->its && sim->its->rd)
		for (uint32_t i = 0; i < sim->ncpus; i++)
			free(sim->its->rd[i].held);
	if (sim->its)
		free(sim->its->rd);
	free(sim->its);
	sim->its = NULL;
}

/* ---- Redistributors --------------------------------------------------------- */

static bool lpi_valid(const struct umsi_sim *sim, uint32_t intid)
{
	return intid >= LPI_FIRST && intid < sim->nids;
}

static bool lpi_test(const struct umsi_sim *sim, uint32_t cpu, uint32_t intid)
{
	return (sim->cpus[cpu].eip[intid / 64] >> (intid % 64)) & 1;
}

/* @cpu's redistributor when software enabled its LPIs, else NULL. */
static struct sim_gicr *rd_managed(struct umsi_sim *sim, uint32_t cpu)
{
	struct sim_gicr *r = &sim->its->rd[cpu];

	return r->enabled ? r : NULL;
}

static bool bit_in(const uint64_t *w, uint32_t i)
{
	return (w[i / 64] >> (i % 64)) & 1;
}

static void bit_put(uint64_t *w, uint32_t i, bool on)
{
	if (on)
		w[i / 64] |= 1ull << (i % 64);
	else
		w[i / 64] &= ~(1ull << (i % 64));
}

/* The INTIDs @r's PROPBASER.IDbits covers: [0, limit). */
static uint64_t rd_limit(const struct sim_gicr *r)
{
	return 1ull << ((r->propbaser & PROP_IDBITS) + 1);
}

/* LPI @intid's byte of @cpu's property table, or NULL (a bad access). */
static uint8_t *rd_prop_byte(struct umsi_sim *sim, uint32_t cpu,
			     uint32_t intid)
{
	uint64_t pa = (sim->its->rd[cpu].propbaser & PROP_PA) + intid -
		      LPI_FIRST;
	uint8_t *p = sim_phys_ptr_locked(sim, pa, 1);

	if (!p)
		sim_bad_access_locked(sim, "gicr %u: LPI %u's property byte "
				      "at 0x%llx is not memory from phys_alloc",
				      cpu, intid, (unsigned long long)pa);
	return p;
}

/* The byte of @cpu's pending table holding LPI @intid, or NULL (ditto). */
static uint8_t *rd_pend_byte(struct umsi_sim *sim, uint32_t cpu,
			     uint32_t intid)
{
	uint64_t pa = (sim->its->rd[cpu].pendbaser & PEND_PA) + intid / 8;
	uint8_t *p = sim_phys_ptr_locked(sim, pa, 1);

	if (!p)
		sim_bad_access_locked(sim, "gicr %u: LPI %u's pending bit at "
				      "0x%llx is not memory from phys_alloc",
				      cpu, intid, (unsigned long long)pa);
	return p;
}

/*
 * LPI @intid on @cpu's software-managed redistributor: 1 enabled, 0
 * disabled in the property table; -1 when the redistributor cannot take
 * it (beyond IDbits, or a table outside memory: a bad access).
 */
static int rd_lpi_state(struct umsi_sim *sim, uint32_t cpu, uint32_t intid)
{
	const uint8_t *prop;

	if (intid >= rd_limit(&sim->its->rd[cpu]))
		return -1;
	prop = rd_prop_byte(sim, cpu, intid);
	if (!prop || !rd_pend_byte(sim, cpu, intid))
		return -1;
	return *prop & LPI_ENABLE;
}

/* Set or clear @intid's bit in the model's state of @cpu only. */
static void model_set_locked(struct umsi_sim *sim, uint32_t cpu,
			     uint32_t intid, bool on)
{
	uint64_t *w = sim->cpus[cpu].eip;
	bool empty = true;

	if (bit_in(w, intid) == on)
		return;
	bit_put(w, intid, on);
	if (on) {
		sim_pending_set_locked(sim, cpu);
		sim_cpu_kick_locked(sim, cpu);
		return;
	}
	for (uint32_t k = LPI_FIRST / 64; k < sim->nids / 64 && empty; k++)
		empty = !w[k];
	sim_pending_clear_locked(sim, cpu, empty);
}

/*
 * Set or clear LPI @intid's pending bit in @cpu's redistributor: the
 * model's and, when software manages it, its pending table's (cleared:
 * no longer held either).
 */
static void lpi_set_locked(struct umsi_sim *sim, uint32_t cpu, uint32_t intid,
			   bool on)
{
	struct sim_gicr *r = rd_managed(sim, cpu);
	uint8_t *p;

	if (lpi_test(sim, cpu, intid) == on)
		return;
	if (r) {
		p = rd_pend_byte(sim, cpu, intid);
		if (p && on)
			*p |= (uint8_t)(1u << (intid % 8));
		else if (p)
			*p &= (uint8_t)~(1u << (intid % 8));
		if (!on)
			bit_put(r->held, intid, false);
	}
	model_set_locked(sim, cpu, intid, on);
}

/*
 * LPI @intid arrives at @cpu's redistributor: pending, or coalesced.
 * On a software-managed one it may be held (disabled) or dropped, the
 * drop counted as an undeliverable message (@address, @data).
 * Return: 1, 0 when dropped.
 */
static int lpi_accept_locked(struct umsi_sim *sim, uint32_t cpu,
			     uint32_t intid, uint64_t address, uint32_t data)
{
	struct sim_cpu *c = &sim->cpus[cpu];
	struct sim_gicr *r = rd_managed(sim, cpu);
	int state = 1;

	if (r) {
		state = rd_lpi_state(sim, cpu, intid);
		if (state < 0)
			return sim_undeliverable_locked(sim,
							UMSI_SIM_UNDELIV_ITS,
							address, data);
		if (!state)
			sim->its->st.lpis_held_disabled++;
	}
	c->vs_used = true;
	if (lpi_test(sim, cpu, intid)) {
		sim_coalesced_locked(sim, cpu, intid);
		sim->st.irr_coalesced++;
		return 1;
	}
	if (!state)
		bit_put(r->held, intid, true);
	lpi_set_locked(sim, cpu, intid, true);
	sim_delivered_locked(sim, cpu, intid);
	sim->st.delivered++;
	return 1;
}

/*
 * Pending state moves to @cpu (MOVI): as an arrival, uncounted unless
 * dropped. Return: whether it is pending there.
 */
static bool lpi_move_in_locked(struct umsi_sim *sim, uint32_t cpu,
			       uint32_t intid, uint32_t event)
{
	struct sim_gicr *r = rd_managed(sim, cpu);
	int state = 1;

	if (r) {
		state = rd_lpi_state(sim, cpu, intid);
		if (state < 0) {
			sim_undeliverable_locked(sim, UMSI_SIM_UNDELIV_ITS,
						 sim->its->base +
						 ITS_TRANSLATER, event);
			return false;
		}
	}
	if (!state && !lpi_test(sim, cpu, intid))
		bit_put(r->held, intid, true);
	lpi_set_locked(sim, cpu, intid, true);
	return true;
}

/* Read pending LPI @i's property byte again: whether it is released. */
static bool rd_inv_one_locked(struct umsi_sim *sim, uint32_t cpu,
			      struct sim_gicr *r, uint32_t i)
{
	bool was = bit_in(r->held, i);
	int state;

	if (!lpi_test(sim, cpu, i))
		return false;
	state = rd_lpi_state(sim, cpu, i);
	if (state < 0)
		return false;
	bit_put(r->held, i, !state);
	return was && state;
}

/*
 * INV (@intid) or INVALL (every LPI, @intid UINT32_MAX) on @cpu's
 * redistributor: a pending LPI's property byte is read again; held while
 * disabled, the CPU takes it once enabled.
 */
static void rd_inv_locked(struct umsi_sim *sim, uint32_t cpu, uint32_t intid)
{
	struct sim_gicr *r = rd_managed(sim, cpu);
	const uint64_t *w = sim->cpus[cpu].eip;
	bool kick = false;

	if (!r)
		return;
	if (intid != UINT32_MAX)
		kick = rd_inv_one_locked(sim, cpu, r, intid);
	for (uint32_t k = LPI_FIRST / 64; intid == UINT32_MAX &&
	     k < sim->nids / 64; k++)
		for (uint64_t m = w[k]; m; m &= m - 1)
			kick |= rd_inv_one_locked(sim, cpu, r, k * 64 +
					(uint32_t)__builtin_ctzll(m));
	if (kick)
		sim_cpu_kick_locked(sim, cpu);
}

/*
 * Software sets EnableLPIs: the pending table's LPIs (unless PTZ said it
 * is zero) join the model's; every pending LPI goes into the table, held
 * if its property byte disables it, dropped if the redistributor cannot
 * have it.
 */
static void rd_enable_locked(struct umsi_sim *sim, uint32_t cpu)
{
	struct sim_gicr *r = &sim->its->rd[cpu];
	uint64_t limit = rd_limit(r), *w = sim->cpus[cpu].eip;
	uint32_t words = sim->nids / 64;

	if (!r->held) {
		r->held = calloc(words, sizeof(uint64_t));
		if (!r->held) {
			sim_logf_locked(sim, "gicr %u: out of memory: "
					"EnableLPIs stays 0", cpu);
			return;
		}
	}
	memset(r->held, 0, words * sizeof(uint64_t));
	r->enabled = true;
	sim->its->st.rd_lpis_enabled++;
	if (limit > sim->nids)
		limit = sim->nids;
	if (!r->ptz && limit > LPI_FIRST) {
		uint64_t pa = (r->pendbaser & PEND_PA) + LPI_FIRST / 8;
		const uint8_t *t = sim_phys_ptr_locked(sim, pa, (size_t)(limit -
						       LPI_FIRST) / 8);

		if (!t)
			sim_bad_access_locked(sim, "gicr %u: pending table at "
					      "0x%llx is not memory from "
					      "phys_alloc", cpu,
					      (unsigned long long)(pa - 1024));
		for (uint32_t i = LPI_FIRST; t && i < limit; i++)
			if ((t[(i - LPI_FIRST) / 8] >> (i % 8)) & 1)
				model_set_locked(sim, cpu, i, true);
	}
	r->ptz = false;
	for (uint32_t k = LPI_FIRST / 64; k < words; k++) {
		for (uint64_t m = w[k]; m; m &= m - 1) {
			uint32_t i = k * 64 + (uint32_t)__builtin_ctzll(m);
			int state = rd_lpi_state(sim, cpu, i);
			uint8_t *p;

			if (state < 0) {
				model_set_locked(sim, cpu, i, false);
				continue;
			}
			p = rd_pend_byte(sim, cpu, i);
			*p |= (uint8_t)(1u << (i % 8));
			bit_put(r->held, i, !state);
		}
	}
}

/*
 * Software clears EnableLPIs: the tables are no longer used; the pending
 * state stays in the pending table, the model forgets it.
 */
static void rd_disable_locked(struct umsi_sim *sim, uint32_t cpu)
{
	struct sim_gicr *r = &sim->its->rd[cpu];
	const uint64_t *w = sim->cpus[cpu].eip;

	r->enabled = false;
	sim->its->st.rd_lpis_enabled--;
	for (uint32_t k = LPI_FIRST / 64; k < sim->nids / 64; k++)
		for (uint64_t m = w[k]; m; m &= m - 1)
			model_set_locked(sim, cpu, k * 64 +
					 (uint32_t)__builtin_ctzll(m), false);
	memset(r->held, 0, sim->nids / 64 * sizeof(uint64_t));
}

/* ---- Tables in memory ------------------------------------------------------- */

/* Entry @index of the table GITS_BASER<@n> describes, or NULL. */
static uint8_t *table_entry(struct umsi_sim *sim, unsigned n, uint64_t index)
{
	uint64_t b = sim->its->baser[n], pa, size;

	if (!(b & VALID))
		return NULL;
	size = ((b & 0xff) + 1) * PAGE_64K;
	if (index >= size / ENTRY_SIZE)
		return NULL;
	pa = (b & 0x0000ffffffff0000ull) | ((b >> 12) & 0xf) << 48;
	return sim_phys_ptr_locked(sim, pa + index * ENTRY_SIZE, ENTRY_SIZE);
}

static uint64_t get64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static void put64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, sizeof(v));
}

/*
 * The ITT entry of (@devid, @event) through the device table, or NULL:
 * *@why says which step failed.
 */
static uint8_t *ite_of(struct umsi_sim *sim, uint32_t devid, uint32_t event,
		       const char **why)
{
	uint8_t *dte = table_entry(sim, 0, devid), *ite;
	uint64_t d;

	if (!dte) {
		*why = "DeviceID beyond the device table";
		return NULL;
	}
	d = get64(dte);
	if (!(d & VALID)) {
		*why = "device not mapped";
		return NULL;
	}
	if (event >> ((d & 0x1f) + 1)) {
		*why = "EventID beyond the device's ITT";
		return NULL;
	}
	ite = sim_phys_ptr_locked(sim, (d & 0xfffffffffff00ull) +
				  (uint64_t)event * ITE_SIZE, ENTRY_SIZE);
	if (!ite)
		*why = "ITT outside the memory given to the ITS";
	return ite;
}

/* The CPU collection @icid targets, or UINT32_MAX. */
static uint32_t coll_cpu(struct umsi_sim *sim, uint32_t icid)
{
	uint8_t *cte = table_entry(sim, 1, icid);
	uint64_t c;

	if (!cte)
		return UINT32_MAX;
	c = get64(cte);
	if (!(c & VALID) || (uint32_t)c >= sim->ncpus)
		return UINT32_MAX;
	return (uint32_t)c;
}

/* (@devid, @event) -> CPU and LPI, as a translation would find them. */
static bool translate(struct umsi_sim *sim, uint32_t devid, uint32_t event,
		      uint32_t *cpu, uint32_t *intid, const char **why)
{
	uint8_t *ite;
	uint64_t e;

	if (!(sim->its->ctlr & CTLR_ENABLED)) {
		*why = "ITS disabled";
		return false;
	}
	ite = ite_of(sim, devid, event, why);
	if (!ite)
		return false;
	e = get64(ite);
	if (!(e & VALID)) {
		*why = "event not mapped";
		return false;
	}
	*intid = (uint32_t)e;
	*cpu = coll_cpu(sim, (uint32_t)(e >> 32) & 0xffff);
	if (*cpu == UINT32_MAX) {
		*why = "collection not mapped";
		return false;
	}
	return true;
}

/* ---- Commands ----------------------------------------------------------------- */

static int cmd_mapd(struct umsi_sim *sim, const uint64_t *c, const char **why)
{
	uint32_t devid = (uint32_t)(c[0] >> 32), bits = (c[1] & 0x1f) + 1;
	uint64_t itt = c[2] & 0xfffffffffff00ull, was;
	uint8_t *dte = table_entry(sim, 0, devid);

	if (!dte) {
		*why = "DeviceID beyond the device table";
		return -1;
	}
	was = get64(dte);
	if (!(c[2] & VALID)) {
		put64(dte, 0);
		sim->its->st.devices -= !!(was & VALID);
		return 0;
	}
	if (bits > ITS_ID_BITS) {
		*why = "more EventID bits than the ITS has";
		return -1;
	}
	if (!sim_phys_ptr_locked(sim, itt, (size_t)ITE_SIZE << bits)) {
		*why = "ITT outside the memory given to the ITS";
		return -1;
	}
	put64(dte, VALID | itt | (bits - 1));
	sim->its->st.devices += !(was & VALID);
	return 0;
}

static int cmd_mapc(struct umsi_sim *sim, const uint64_t *c, const char **why)
{
	uint32_t icid = (uint32_t)c[2] & 0xffff;
	uint64_t rd = (c[2] >> 16) & 0x7ffffffffull;
	uint8_t *cte = table_entry(sim, 1, icid);

	if (!cte) {
		*why = "collection beyond the collection table";
		return -1;
	}
	if ((c[2] & VALID) && rd >= sim->ncpus) {
		*why = "RDbase names no processor";
		return -1;
	}
	put64(cte, (c[2] & VALID) ? VALID | rd : 0);
	return 0;
}

/* MAPTI, MAPI: an event to an LPI and a collection (it may replace one). */
static int cmd_mapti(struct umsi_sim *sim, const uint64_t *c, bool mapi,
		     const char **why)
{
	uint32_t devid = (uint32_t)(c[0] >> 32), event = (uint32_t)c[1];
	uint32_t intid = mapi ? event : (uint32_t)(c[1] >> 32);
	uint32_t icid = (uint32_t)c[2] & 0xffff;
	uint8_t *ite = ite_of(sim, devid, event, why);

	if (!ite)
		return -1;
	if (!lpi_valid(sim, intid)) {
		*why = "not an LPI the redistributors have";
		return -1;
	}
	if (!table_entry(sim, 1, icid)) {
		*why = "collection beyond the collection table";
		return -1;
	}
	put64(ite, VALID | (uint64_t)icid << 32 | intid);
	return 0;
}

/* The mapped ITT entry the command names, or NULL. */
static uint8_t *mapped_ite(struct umsi_sim *sim, const uint64_t *c,
			   const char **why)
{
	uint8_t *ite = ite_of(sim, (uint32_t)(c[0] >> 32), (uint32_t)c[1], why);

	if (ite && !(get64(ite) & VALID)) {
		*why = "event not mapped";
		return NULL;
	}
	return ite;
}

/* MOVI: a new collection; a pending LPI moves with it (6.3.12). */
static int cmd_movi(struct umsi_sim *sim, const uint64_t *c, const char **why)
{
	uint8_t *ite = mapped_ite(sim, c, why);
	uint32_t icid = (uint32_t)c[2] & 0xffff, from, to, intid;
	uint64_t e;

	if (!ite)
		return -1;
	e = get64(ite);
	intid = (uint32_t)e;
	to = coll_cpu(sim, icid);
	if (to == UINT32_MAX) {
		*why = "collection not mapped";
		return -1;
	}
	from = coll_cpu(sim, (uint32_t)(e >> 32) & 0xffff);
	if (from != UINT32_MAX && from != to && lpi_test(sim, from, intid)) {
		lpi_set_locked(sim, from, intid, false);
		lpi_move_in_locked(sim, to, intid, (uint32_t)c[1]);
	}
	put64(ite, VALID | (uint64_t)icid << 32 | intid);
	return 0;
}

/* INT, CLEAR, DISCARD, INV: on the LPI an event is mapped to. */
static int cmd_event(struct umsi_sim *sim, const uint64_t *c, uint32_t cmd,
		     const char **why)
{
	uint8_t *ite = mapped_ite(sim, c, why);
	uint32_t cpu, intid;
	uint64_t e;

	if (!ite)
		return -1;
	e = get64(ite);
	intid = (uint32_t)e;
	cpu = coll_cpu(sim, (uint32_t)(e >> 32) & 0xffff);
	if (cpu == UINT32_MAX && cmd != 0x0f) {
		*why = "collection not mapped";
		return -1;
	}
	if (cmd == 0x03)
		lpi_accept_locked(sim, cpu, intid,
				  sim->its->base + ITS_TRANSLATER,
				  (uint32_t)c[1]);
	else if ((cmd == 0x04 || cmd == 0x0f) && cpu != UINT32_MAX)
		lpi_set_locked(sim, cpu, intid, false);
	else if (cmd == 0x0c)
		rd_inv_locked(sim, cpu, intid);
	if (cmd == 0x0f)
		put64(ite, 0);
	return 0;
}

/* Run one command; -1 with *@why when the ITS would stall on it. */
static int run_cmd(struct umsi_sim *sim, const uint64_t *c, const char **why)
{
	uint32_t cmd = (uint32_t)c[0] & 0xff;

	switch (cmd) {
	case 0x01:
		return cmd_movi(sim, c, why);
	case 0x03: case 0x04: case 0x0c: case 0x0f:	/* INT CLEAR INV DISCARD */
		return cmd_event(sim, c, cmd, why);
	case 0x05:					/* SYNC */
		if (((c[2] >> 16) & 0x7ffffffffull) >= sim->ncpus) {
			*why = "RDbase names no processor";
			return -1;
		}
		return 0;
	case 0x08:
		return cmd_mapd(sim, c, why);
	case 0x09:
		return cmd_mapc(sim, c, why);
	case 0x0a: case 0x0b:
		return cmd_mapti(sim, c, cmd == 0x0b, why);
	case 0x0d: {					/* INVALL */
		uint32_t cpu = coll_cpu(sim, (uint32_t)c[2] & 0xffff);

		if (cpu == UINT32_MAX) {
			*why = "collection not mapped";
			return -1;
		}
		rd_inv_locked(sim, cpu, UINT32_MAX);
		return 0;
	}
	default:
		*why = "unknown command";
		return -1;
	}
}

/* Run the queue from GITS_CREADR to GITS_CWRITER, stopping on an error. */
static void its_process_locked(struct umsi_sim *sim)
{
	struct sim_its *its = sim->its;
	uint64_t qbase = its->cbaser & 0xffffffffff000ull;
	uint32_t qsize = (uint32_t)((its->cbaser & 0xff) + 1) * 4096;

	if (!(its->ctlr & CTLR_ENABLED) || !(its->cbaser & VALID) ||
	    its->stalled || its->silent)
		return;
	while (its->creadr != its->cwriter) {
		const uint8_t *p = NULL;
		const char *why = "GITS_CWRITER beyond the queue";
		uint64_t c[4];

		if (its->cwriter < qsize) {
			p = sim_phys_ptr_locked(sim, qbase + its->creadr, 32);
			why = "command queue outside the memory given to "
			      "the ITS";
		}
		if (p) {
			memcpy(c, p, sizeof(c));
			if (!run_cmd(sim, c, &why)) {
				its->st.cmds[c[0] & 31]++;
				its->creadr = (its->creadr + 32) % qsize;
				continue;
			}
		}
		its->stalled = true;
		its->st.cmd_errors++;
		sim_bad_access_locked(sim, "its: command at 0x%x stalls the "
				      "queue: %s", its->creadr, why);
		return;
	}
}

/* ---- Registers ---------------------------------------------------------------- */

static uint32_t half(uint64_t v, uint32_t off)
{
	return (uint32_t)(off & 4 ? v >> 32 : v);
}

static uint64_t set_half(uint64_t v, uint32_t off, uint32_t val)
{
	if (off & 4)
		return (v & 0xffffffffull) | (uint64_t)val << 32;
	return (v & ~0xffffffffull) | val;
}

static uint32_t its_reg_read(struct umsi_sim *sim, uint32_t off)
{
	struct sim_its *its = sim->its;

	switch (off & ~4u) {
	case R_CTLR:
		if (off == R_IIDR)
			return 0x0100043b;
		/* Commands complete at once: always quiescent when off. */
		return its->ctlr | CTLR_QUIESCENT;
	case R_TYPER:
		return half(ITS_TYPER, off);
	case R_CBASER:
		return half(its->cbaser, off);
	case R_CWRITER:
		return off & 4 ? 0 : its->cwriter;
	case R_CREADR:
		return off & 4 ? 0 : its->creadr | its->stalled;
	case R_PIDR2 & ~4u:
		return off == R_PIDR2 ? 0x3b : 0;
	default:
		break;
	}
	if (off >= R_BASER0 && off < R_BASER_END)
		return half(its->baser[(off - R_BASER0) / 8], off);
	sim_bad_access_locked(sim, "its: read of register 0x%x", off);
	return 0;
}

static void its_reg_write(struct umsi_sim *sim, uint32_t off, uint32_t val)
{
	struct sim_its *its = sim->its;
	bool on = its->ctlr & CTLR_ENABLED;

	if (off == R_CTLR) {
		its->ctlr = val & CTLR_ENABLED;
		its_process_locked(sim);
		return;
	}
	if ((off & ~4u) == R_CBASER && !on) {
		its->cbaser = set_half(its->cbaser, off, val) &
			      ~(0xfull << 52 | 7ull << 56);
		its->creadr = 0;	/* 12.19.3: CREADR resets */
		its->stalled = false;
		return;
	}
	if (off == R_CWRITER) {
		its->cwriter = val & 0xfffe0u;
		/* Retry: run the stalled command again. */
		if (val & 1)
			its->stalled = false;
		its_process_locked(sim);
		return;
	}
	if (off == R_CWRITER + 4)
		return;
	if (off >= R_BASER0 && off < R_BASER_END && !on) {
		unsigned n = (off - R_BASER0) / 8;
		uint64_t v = set_half(its->baser[n], off, val);

		/* Unimplemented ones are RAZ/WI; type, size, page are RO. */
		if (n < 2)
			its->baser[n] = (v & BASER_RW) |
					(its->baser[n] & ~BASER_RW);
		return;
	}
	sim_bad_access_locked(sim, "its: write of 0x%x to register 0x%x%s",
			      val, off, on ? " (ITS enabled)" : "");
}

/* ---- Redistributor registers ---------------------------------------------------- */

static uint32_t gicr_read(struct umsi_sim *sim, uint32_t cpu, uint32_t off)
{
	const struct sim_gicr *r = &sim->its->rd[cpu];

	switch (off) {
	case GICR_CTLR:
		return r->enabled ? GICR_ENABLE_LPIS : 0;	/* RWP 0 */
	case GICR_TYPER:
		return GICR_TYPER_PLPIS | cpu << 8 |
		       (cpu == sim->ncpus - 1 ? GICR_TYPER_LAST : 0);
	case GICR_TYPER + 4:
		return sim->cpus[cpu].apic_id;		/* affinity */
	case GICR_PROPBASER: case GICR_PROPBASER + 4:
		return half(r->propbaser, off);
	case GICR_PENDBASER: case GICR_PENDBASER + 4:
		return half(r->pendbaser, off);		/* PTZ reads 0 */
	default:
		return 0;	/* the rest of RD_base, the SGI frame */
	}
}

static void gicr_write(struct umsi_sim *sim, uint32_t cpu, uint32_t off,
		       uint32_t val)
{
	struct sim_gicr *r = &sim->its->rd[cpu];
	bool on = val & GICR_ENABLE_LPIS;

	switch (off) {
	case GICR_CTLR:
		if (on && !r->enabled)
			rd_enable_locked(sim, cpu);
		else if (!on && r->enabled)
			rd_disable_locked(sim, cpu);
		return;
	case GICR_PROPBASER: case GICR_PROPBASER + 4:
	case GICR_PENDBASER: case GICR_PENDBASER + 4:
		break;
	default:
		return;
	}
	if (r->enabled) {
		sim_logf_locked(sim, "gicr %u: write of 0x%x to 0x%x ignored: "
				"EnableLPIs is set", cpu, val, off);
		return;
	}
	if ((off & ~4u) == GICR_PROPBASER) {
		r->propbaser = set_half(r->propbaser, off, val) & PROPBASER_RW;
		return;
	}
	if (off & 4)
		r->ptz = val & GICR_PTZ_HI;
	r->pendbaser = set_half(r->pendbaser, off, val) & PENDBASER_RW;
}

/* A 32-bit access to CPU n's redistributor frames: false when none. */
static bool gicr_mmio_locked(struct umsi_sim *sim, uint64_t phys, bool write,
			     uint32_t *val)
{
	uint64_t off = phys - UMSI_SIM_GICR_BASE;
	uint32_t cpu;

	if (phys < UMSI_SIM_GICR_BASE ||
	    off / UMSI_SIM_GICR_STRIDE >= sim->ncpus)
		return false;
	cpu = (uint32_t)(off / UMSI_SIM_GICR_STRIDE);
	off %= UMSI_SIM_GICR_STRIDE;
	if (write)
		gicr_write(sim, cpu, (uint32_t)off, *val);
	else
		*val = gicr_read(sim, cpu, (uint32_t)off);
	return true;
}

static bool sim_its_mmio_locked(struct umsi_sim *sim, uint64_t phys, bool write,
			 uint32_t *val)
{
	uint64_t off;

	if (!its_on(sim))
		return false;
	if (phys < sim->its->base || phys - sim->its->base >= 2 * ITS_FRAME)
		return gicr_mmio_locked(sim, phys, write, val);
	off = phys - sim->its->base;
	if (off >= ITS_FRAME) {
		/* A CPU's GITS_TRANSLATER write: no requester to translate. */
		if (write && off == ITS_TRANSLATER)
			sim_msg_write_from_locked(sim, UMSI_SIM_NO_REQUESTER,
						  phys, *val);
		else if (!write)
			*val = 0;
		return true;
	}
	if (write)
		its_reg_write(sim, (uint32_t)off, *val);
	else
		*val = its_reg_read(sim, (uint32_t)off);
	return true;
}

/* ---- The controller model ------------------------------------------------------ */

static int its_deliver_locked(struct umsi_sim *sim, uint64_t address,
			      uint32_t data)
{
	uint32_t cpu, intid;
	const char *why;

	if (address != sim->its->base + ITS_TRANSLATER)
		return sim_undeliverable_locked(sim, UMSI_SIM_UNDELIV_STRAY,
						address, data);
	if (sim->msg_requester == UMSI_SIM_NO_REQUESTER ||
	    !translate(sim, sim->msg_requester, data, &cpu, &intid, &why))
		return sim_undeliverable_locked(sim, UMSI_SIM_UNDELIV_ITS,
						address, data);
	if (!lpi_accept_locked(sim, cpu, intid, address, data))
		return 0;
	sim->its->st.translated++;
	return 1;
}

static bool its_target_locked(struct umsi_sim *sim, uint64_t address,
			      uint32_t data, uint32_t *cpu, uint32_t *id)
{
	const char *why;

	return address == sim->its->base + ITS_TRANSLATER &&
	       sim->msg_requester != UMSI_SIM_NO_REQUESTER &&
	       translate(sim, sim->msg_requester, data, cpu, id, &why);
}

/* Register 0x80000000 | INTID reads the LPI's pending bit. */
static uint64_t its_read_locked(struct umsi_sim *sim, uint32_t cpu,
				uint32_t reg)
{
	uint32_t intid = reg & 0x7fffffffu;

	if ((reg & 0x80000000u) && lpi_valid(sim, intid))
		return lpi_test(sim, cpu, intid);
	sim_bad_access_locked(sim, "read of GIC register 0x%x", reg);
	return 0;
}

static void its_write_locked(struct umsi_sim *sim, uint32_t cpu, uint32_t reg,
			     uint64_t val)
{
	(void)cpu;
	sim_bad_access_locked(sim, "write of GIC register 0x%x value "
			      "0x%llx", reg, (unsigned long long)val);
}

/*
 * The lowest pending LPI not held disabled (every LPI has the same
 * priority here).
 */
static int its_next_locked(struct umsi_sim *sim, uint32_t cpu)
{
	const uint64_t *w = sim->cpus[cpu].eip;
	const struct sim_gicr *r = rd_managed(sim, cpu);
	const uint64_t *held = r ? r->held : NULL;

	for (uint32_t k = LPI_FIRST / 64; k < sim->nids / 64; k++) {
		uint64_t m = w[k] & ~(held ? held[k] : 0);

		if (m)
			return (int)(k * 64 + (uint32_t)__builtin_ctzll(m));
	}
	return -1;
}

/* ICC_IAR1_EL1: the LPI is acknowledged, its pending bit clears. */
static void its_take_locked(struct umsi_sim *sim, uint32_t cpu, uint32_t id)
{
	lpi_set_locked(sim, cpu, id, false);
}

/* The kernel's ICC_EOIR1_EL1 leaves nothing the model tracks. */
static void its_finish_locked(struct umsi_sim *sim, uint32_t cpu, uint32_t id,
			      bool had_fn)
{
	(void)sim;
	(void)cpu;
	(void)id;
	(void)had_fn;
}

static int its_raise_locked(struct umsi_sim *sim, uint32_t cpu, uint32_t id)
{
	if (!lpi_valid(sim, id))
		return -UMSI_EINVAL;
	lpi_accept_locked(sim, cpu, id, 0, id);
	return 0;
}

/*
 * A wired input's SPI reached @cpu, whose kernel dispatches identity @id
 * (an ITS identity: the dispatch function gets INTID 8192 + @id, as for
 * an LPI; the back end gives no LPI that identity). Pending there like an
 * LPI, whatever the LPI's configuration says: it is not one.
 */
static int its_wired_intid_locked(struct umsi_sim *sim, uint32_t id)
{
	if (id >= sim->nids || !lpi_valid(sim, LPI_FIRST + id))
		return -UMSI_EINVAL;
	return (int)(LPI_FIRST + id);
}

static int its_wired_raise_locked(struct umsi_sim *sim, uint32_t cpu,
				  uint32_t id)
{
	int n = its_wired_intid_locked(sim, id);
	uint32_t intid = (uint32_t)n;
	struct sim_cpu *c;

	if (n < 0 || cpu >= sim->ncpus || lpi_test(sim, cpu, intid))
		return -UMSI_EINVAL;
	c = &sim->cpus[cpu];
	lpi_set_locked(sim, cpu, intid, true);
	c->vs_used = true;
	sim_delivered_locked(sim, cpu, intid);
	sim->st.delivered++;
	return (int)intid;
}

/* irq_pending(INTID): the LPI's bit in the CPU's pending state. */
static bool its_pending_locked(struct umsi_sim *sim, uint32_t cpu,
			       uint32_t intid)
{
	return its_read_locked(sim, cpu, 0x80000000u | intid) & 1;
}

/* The kernel ends LPIs itself (ICC_EOIR1_EL1); no IPI through the host. */
static void its_eoi_locked(struct umsi_sim *sim, uint32_t cpu, uint32_t id)
{
	(void)cpu;
	sim_bad_access_locked(sim, "eoi of INTID %u through the host", id);
}

static void its_ipi_locked(struct umsi_sim *sim, uint32_t cpu, uint32_t hwid,
			   uint32_t id)
{
	(void)cpu;
	sim_bad_access_locked(sim, "send_ipi of INTID %u to %u through the "
			      "host", id, hwid);
}

const struct sim_ctl_model sim_its_model = {
	.name = "arm64-its",
	.read = its_read_locked,
	.write = its_write_locked,
	.pending = its_pending_locked,
	.eoi = its_eoi_locked,
	.ipi = its_ipi_locked,
	.deliver = its_deliver_locked,
	.target = its_target_locked,
	.next = its_next_locked,
	.take = its_take_locked,
	.finish = its_finish_locked,
	.raise = its_raise_locked,
	.wired = SIM_WIRED_ARM_SPI,
	.wired_raise = its_wired_raise_locked,
	.wired_intid = its_wired_intid_locked,
};

/* ---- Public ------------------------------------------------------------------- */

int umsi_sim_its_stats(struct umsi_sim *sim, struct umsi_sim_its_stats *out)
{
	if (!its_on(sim))
		return -UMSI_EINVAL;
	sim_lock(sim);
	*out = sim->its->st;
	sim_unlock(sim);
	return 0;
}

int umsi_sim_its_silent(struct umsi_sim *sim, bool silent)
{
	if (!its_on(sim))
		return -UMSI_EINVAL;
	sim_lock(sim);
	sim->its->silent = silent;
	/* Awake: what was queued meanwhile runs now. */
	its_process_locked(sim);
	sim_unlock(sim);
	return 0;
}

int umsi_sim_its_translate(struct umsi_sim *sim, uint32_t devid,
			   uint32_t event, uint32_t *cpu, uint32_t *intid)
{
	const char *why;
	bool ok;

	if (!its_on(sim))
		return -UMSI_EINVAL;
	sim_lock(sim);
	ok = translate(sim, devid, event, cpu, intid, &why);
	sim_unlock(sim);
	return ok ? 0 : -UMSI_ENOENT;
}

uint64_t umsi_sim_gicr_addr(struct umsi_sim *sim, uint32_t cpu)
{
	if (!its_on(sim) || cpu >= sim->ncpus)
		return 0;
	return UMSI_SIM_GICR_BASE + cpu * UMSI_SIM_GICR_STRIDE;
}

/* ---- The model (sim_models.c) ---------------------------------------------- */

static int its_model_init(struct umsi_sim *sim,
			  const struct umsi_sim_config *cfg)
{
	if (cfg->controller != UMSI_SIM_CTL_ITS)
		return 0;
	return sim_its_init(sim, cfg);
}

const struct sim_model_ops sim_its_ops = {
	.name = "arm64-its",
	.controller = UMSI_SIM_CTL_ITS,
	.init = its_model_init,
	.fini = sim_its_fini,
	.mmio = sim_its_mmio_locked,
};
