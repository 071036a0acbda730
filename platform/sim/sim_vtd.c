/* SPDX-License-Identifier: MIT */
/*
 * sim_vtd.c - an Intel VT-d interrupt-remapping unit (Intel Virtualization
 * Technology for Directed I/O, rev. 3: registers 11.4, fault recording
 * 7.1, queued invalidation 6.5.2, the remapping table entry 9.10, request
 * processing 5.1.4), with QEMU 7.2 intel-iommu's register layout. Only
 * interrupt remapping: no DMA translation, no posted interrupts.
 *
 * Like the ITS model, the unit holds no translation of its own: it reads
 * the table and the invalidation queue from the memory software gave it
 * (the host's phys_alloc), by the addresses latched from IRTA (SIRTP) and
 * IQA (QIE). What it does hold is an interrupt entry cache, as hardware
 * does: a present entry it used is kept until an invalidation descriptor
 * covers it, so software that changes an entry and does not invalidate it
 * sees the old one still used.
 *
 * The machine's message path (sim_core.c x86_deliver_locked, the IO-APIC
 * in sim_ioapic.c) hands every interrupt request to
 * sim_vtd_intercept_locked() first; while remapping is off, or for a
 * compatibility-format message let through (CFIS set, EIME clear), the
 * unit does not take it and the machine goes on as without the unit.
 */
#include <stdlib.h>
#include <string.h>

#include "sim_priv.h"

#define VTD_SIZE        0x1000u

/* Registers (11.4). */
#define R_VER           0x000u
#define R_CAP           0x008u
#define R_ECAP          0x010u
#define R_GCMD          0x018u
#define R_GSTS          0x01cu
#define R_FSTS          0x034u
#define R_FECTL         0x038u
#define R_IQH           0x080u
#define R_IQT           0x088u
#define R_IQA           0x090u
#define R_ICS           0x09cu
#define R_IRTA          0x0b8u
#define R_FRCD          UMSI_SIM_VTD_FRCD

#define VER_1_0         0x10u
#define CAP_VALUE       ((uint64_t)(UMSI_SIM_VTD_NFR - 1) << 40 | \
			 (uint64_t)(R_FRCD / 16) << 24)
#define ECAP_QI         (1ull << 1)
#define ECAP_IR         (1ull << 3)
#define ECAP_EIM        (1ull << 4)

/* GCMD commands, and the GSTS bits reporting them, share positions. */
#define G_QIE           (1u << 26)
#define G_IRE           (1u << 25)
#define G_SIRTP         (1u << 24)
#define G_CFI           (1u << 23)
#define G_MODELLED      (G_QIE | G_IRE | G_SIRTP | G_CFI)

#define FSTS_PFO        (1u << 0)
#define FSTS_PPF        (1u << 1)
#define FSTS_IQE        (1u << 4)
#define FSTS_ICE        (1u << 5)
#define FSTS_ITE        (1u << 6)
#define FSTS_RW1C       (FSTS_PFO | FSTS_IQE | FSTS_ICE | FSTS_ITE)
#define FECTL_IM        (1u << 31)
#define ICS_IWC         (1u << 0)

#define ADDR_4K         0xfffffffffffff000ull
#define IQA_QS          0x7ull
#define IRTA_EIME       (1ull << 11)
#define IRTA_S          0xfull

#define FRCD_F          (1ull << 63)

/* Invalidation descriptors (6.5.2.7, 6.5.2.8). */
#define D_IEC           0x4u
#define D_WAIT          0x5u
#define IEC_G           (1ull << 4)
/* Reserved: 8:5, 26:12 (11:9 is the type's high part), 63:48. */
#define IEC_RSVD        (0xfull << 5 | 0x7fffull << 12 | 0xffffull << 48)
#define WAIT_IF         (1ull << 4)
#define WAIT_SW         (1ull << 5)
/* Reserved: 31:12 (11:9 is the type's high part, 8 reserved too). */
#define WAIT_RSVD       (0xfffffull << 12 | 1ull << 8)

/* Remapping table entry, remapped format (9.10). */
#define IRTE_P          (1ull << 0)
#define IRTE_DM         (1ull << 2)
#define IRTE_TM         (1ull << 4)
/* Low: 14:12, IM (15: posted format, not supported), 31:24. */
#define IRTE_RSVD_LO    (0x7ull << 12 | 1ull << 15 | 0xffull << 24)
/* Without EIME the destination is bits 47:40: 39:32 and 63:48 reserved. */
#define IRTE_RSVD_XAPIC (0xffull << 32 | 0xffffull << 48)
#define IRTE_RSVD_HI    0xfffffffffff00000ull

#define IEC_SLOTS       65536u

/* Unit @i of @cfg's (the one of a machine of config.vtd alone: @i 0). */
static int sim_vtd_unit_init(struct sim_vtd *v,
			     const struct umsi_sim_config *cfg, uint32_t i)
{
	v->iec = calloc(IEC_SLOTS, sizeof(*v->iec));
	if (!v->iec)
		return -UMSI_ENOMEM;
	v->eim = cfg->vtd_eim;
	v->gen = 1;
	if (!cfg->nvtd_units) {
		v->base = UMSI_SIM_VTD_BASE;
		v->include_all = v->all_segments = true;
		return 0;
	}
	const struct umsi_vtd_unit *u = &cfg->vtd_units[i];

	v->base = u->reg_base;
	v->segment = u->segment;
	v->include_all = u->include_all;
	if (u->reg_base < UMSI_SIM_VTD_BASE || u->reg_base % VTD_SIZE ||
	    u->reg_base >= UMSI_SIM_VTD_BASE +
			   (uint64_t)UMSI_SIM_VTD_MAX_UNITS * VTD_SIZE ||
	    (u->nscope && !u->scope) || u->nscope > UMSI_VTD_MAX_SCOPE)
		return -UMSI_EINVAL;
	if (u->nscope) {
		v->scope = malloc(u->nscope * sizeof(*v->scope));
		if (!v->scope)
			return -UMSI_ENOMEM;
		memcpy(v->scope, u->scope, u->nscope * sizeof(*v->scope));
		v->nscope = u->nscope;
	}
	for (uint32_t k = 0; k < v->nscope; k++)
		if (v->scope[k].first > v->scope[k].last)
			return -UMSI_EINVAL;
	return 0;
}

static void sim_vtd_fini(struct umsi_sim *sim)
{
	for (uint32_t i = 0; i < sim->nvtd; i++) {
		free(sim->vtd[i].iec);
		free(sim->vtd[i].faults);
		free(sim->vtd[i].scope);
	}
	free(sim->vtd);
	sim->vtd = NULL;
	sim->nvtd = 0;
}

static int sim_vtd_init(struct umsi_sim *sim, const struct umsi_sim_config *cfg)
{
	uint32_t n = cfg->nvtd_units ? cfg->nvtd_units : 1;
	int err;

	if (n > UMSI_SIM_VTD_MAX_UNITS || (cfg->nvtd_units && !cfg->vtd_units))
		return -UMSI_EINVAL;
	sim->vtd = calloc(n, sizeof(*sim->vtd));
	if (!sim->vtd)
		return -UMSI_ENOMEM;
	sim->nvtd = n;
	for (uint32_t i = 0; i < n; i++) {
		err = sim_vtd_unit_init(&sim->vtd[i], cfg, i);
		if (err)
			return err;
		for (uint32_t j = 0; j < i; j++)
			if (sim->vtd[j].base == sim->vtd[i].base)
				return -UMSI_EINVAL;
	}
	return 0;
}

/*
 * The unit that remaps requester @rid (as a DMAR table's scopes say,
 * VT-d 8.3.1: a device scope first, else its segment's INCLUDE_PCI_ALL
 * unit); a message without a requester: segment 0's include-all unit,
 * else the first. NULL: no unit (the message goes as without one).
 */
static struct sim_vtd *vtd_for(struct umsi_sim *sim, uint32_t rid)
{
	uint32_t seg = rid == UMSI_SIM_NO_REQUESTER ? 0 : rid >> 16;

	for (uint32_t i = 0; i < sim->nvtd && rid != UMSI_SIM_NO_REQUESTER; i++)
		for (uint32_t k = 0; k < sim->vtd[i].nscope; k++)
			if (rid >= sim->vtd[i].scope[k].first &&
			    rid <= sim->vtd[i].scope[k].last)
				return &sim->vtd[i];
	for (uint32_t i = 0; i < sim->nvtd; i++)
		if (sim->vtd[i].all_segments || (sim->vtd[i].include_all &&
						 sim->vtd[i].segment == seg))
			return &sim->vtd[i];
	return rid == UMSI_SIM_NO_REQUESTER && sim->nvtd ? &sim->vtd[0] : NULL;
}

/* The number of unit @v in config.vtd_units (0 for config.vtd alone). */
static unsigned vtd_no(const struct umsi_sim *sim, const struct sim_vtd *v)
{
	return (unsigned)(v - sim->vtd);
}

static struct sim_vtd *vtd_unit(struct umsi_sim *sim, uint32_t unit)
{
	return unit < sim->nvtd ? &sim->vtd[unit] : NULL;
}

static bool eime(const struct sim_vtd *v)
{
	return v->eim && (v->irta_latched & IRTA_EIME);
}

/* ---- Faults (7.1) ------------------------------------------------------------ */

/*
 * Record a fault in FRCD[FRI] (7.1.3): not when PFO is set, and PFO
 * instead when that register still holds one. The message is lost.
 */
static int vtd_fault_locked(struct umsi_sim *sim, struct sim_vtd *v,
			    uint32_t rid, uint32_t index, uint32_t reason,
			    uint64_t address, uint32_t data)
{
	uint64_t *f = v->frcd[v->fri];

	v->st.faults++;
	if (reason == UMSI_SIM_VTD_FR_COMPAT)
		v->st.blocked_compat++;
	if (v->nfaults == v->faults_cap) {
		size_t cap = v->faults_cap ? 2 * v->faults_cap : 16;
		struct sim_vtd_fault *p = realloc(v->faults, cap * sizeof(*p));

		if (p) {
			v->faults = p;
			v->faults_cap = cap;
		}
	}
	if (v->nfaults < v->faults_cap)
		v->faults[v->nfaults++] = (struct sim_vtd_fault){
			rid, index, reason };
	if (!(v->fsts & FSTS_PFO)) {
		if (f[1] & FRCD_F) {
			v->fsts |= FSTS_PFO;
		} else {
			f[0] = (uint64_t)(index & 0xffff) << 48;
			f[1] = FRCD_F | (uint64_t)reason << 32 |
			       (rid == UMSI_SIM_NO_REQUESTER ? 0 : rid & 0xffff);
			v->fri = (v->fri + 1) % UMSI_SIM_VTD_NFR;
		}
	}
	return sim_undeliverable_locked(sim, UMSI_SIM_UNDELIV_IR, address, data);
}

/* ---- The interrupt entry cache and the table ----------------------------------- */

static void iec_invalidate(struct sim_vtd *v, uint32_t index, uint32_t im)
{
	uint32_t n = im >= 16 ? IEC_SLOTS : 1u << im;
	uint32_t first = index & ~(n - 1) & (IEC_SLOTS - 1);

	for (uint32_t i = 0; i < n && first + i < IEC_SLOTS; i++)
		v->iec[first + i].gen = 0;
}

/*
 * Entry @index as the unit sees it: from the cache, else from memory
 * (cached when present and @fill). Return: 0, or the fault reason.
 */
static uint32_t vtd_entry_locked(struct umsi_sim *sim, struct sim_vtd *v,
				 uint32_t index, bool fill, uint64_t *lo,
				 uint64_t *hi)
{
	uint64_t n = 2ull << (v->irta_latched & IRTA_S);
	struct sim_vtd_iec *c;
	const uint64_t *p;
	uint64_t rsvd = IRTE_RSVD_LO;

	if (index >= n)
		return UMSI_SIM_VTD_FR_INDEX;
	c = &v->iec[index];
	if (c->gen == v->gen) {
		*lo = c->lo;
		*hi = c->hi;
	} else {
		p = sim_phys_ptr_locked(sim, (v->irta_latched & ADDR_4K) +
					16ull * index, 16);
		if (!p)
			return UMSI_SIM_VTD_FR_TABLE;
		*lo = p[0];
		*hi = p[1];
		if (fill && (*lo & IRTE_P)) {
			c->gen = v->gen;
			c->lo = *lo;
			c->hi = *hi;
			v->st.cache_fills++;
		}
	}
	if (!(*lo & IRTE_P))
		return UMSI_SIM_VTD_FR_NOT_PRESENT;
	if (!eime(v))
		rsvd |= IRTE_RSVD_XAPIC;
	if ((*lo & rsvd) || (*hi & IRTE_RSVD_HI) || ((*hi >> 18) & 3) == 3)
		return UMSI_SIM_VTD_FR_RESERVED;
	return 0;
}

/* Source-ID validation (9.10: SVT, SQ, SID) of requester @rid. */
static bool sid_ok(uint64_t hi, uint32_t rid)
{
	static const uint16_t sq_mask[4] = { 0xffff, 0xfffb, 0xfff9, 0xfff8 };
	uint32_t svt = (hi >> 18) & 3, sq = (hi >> 16) & 3;
	uint32_t sid = (uint32_t)hi & 0xffff, bus;

	if (!svt)
		return true;
	if (rid == UMSI_SIM_NO_REQUESTER)
		return false;
	rid &= 0xffff;
	if (svt == 1)
		return ((rid ^ sid) & sq_mask[sq]) == 0;
	bus = rid >> 8;
	return svt == 2 && bus >= (sid >> 8) && bus <= (sid & 0xff);
}

/*
 * The interrupt index a remappable message names (5.1.5.2), after
 * umsi_x86_msg_decode().
 */
static uint32_t msg_index(const struct umsi_x86_msi *d)
{
	return (uint32_t)d->handle + (d->shv ? d->subhandle : 0u);
}

/* Whether the unit takes this request at all; decodes it into @d. */
static bool vtd_takes(struct sim_vtd *v, uint64_t address, uint32_t data,
		      struct umsi_x86_msi *d)
{
	struct umsi_msg m = { address, data };

	if (!v || !(v->gsts & G_IRE))
		return false;
	umsi_x86_msg_decode(&m, false, d);
	if (!d->valid)
		return false;	/* not an interrupt request: DMA */
	/* Compatibility format: through unless blocked (5.1.4). */
	return d->remapped || eime(v) || !(v->gsts & G_CFI);
}

static bool sim_vtd_intercept_locked(struct umsi_sim *sim, uint32_t rid,
			      uint64_t address, uint32_t data, int *n,
			      uint32_t *apic_id, uint8_t *vector)
{
	struct sim_vtd *v = vtd_for(sim, rid);
	struct umsi_x86_msi d;
	uint64_t lo, hi;
	uint32_t index, reason, dst, dlm;
	uint8_t vec;
	bool level;

	if (!vtd_takes(v, address, data, &d))
		return false;
	if (!d.remapped) {
		*n = vtd_fault_locked(sim, v, rid, 0, UMSI_SIM_VTD_FR_COMPAT,
				      address, data);
		return true;
	}
	index = msg_index(&d);
	reason = vtd_entry_locked(sim, v, index, true, &lo, &hi);
	if (!reason && !sid_ok(hi, rid))
		reason = UMSI_SIM_VTD_FR_SID;
	if (reason) {
		*n = vtd_fault_locked(sim, v, rid, index, reason, address,
				      data);
		return true;
	}
	v->st.remapped++;
	vec = (uint8_t)(lo >> 16);
	level = lo & IRTE_TM;
	dlm = (lo >> 5) & 7;
	dst = eime(v) ? (uint32_t)(lo >> 32) : (uint32_t)(lo >> 40) & 0xff;
	if (apic_id)
		*apic_id = (lo & IRTE_DM) ? UINT32_MAX : dst;
	if (vector)
		*vector = vec;
	if (dlm != UMSI_X86_DM_FIXED && dlm != UMSI_X86_DM_LOWPRI)
		*n = sim_undeliverable_locked(sim, UMSI_SIM_UNDELIV_MODE,
					      address, data);
	else if (lo & IRTE_DM)
		*n = sim_deliver_logical_locked(sim, dst, vec,
						dlm == UMSI_X86_DM_LOWPRI,
						level, address, data);
	else
		*n = sim_deliver_phys_locked(sim, dst, vec, level, address,
					     data);
	return true;
}

static bool sim_vtd_target_locked(struct umsi_sim *sim, uint32_t rid,
			   uint64_t address, uint32_t data, bool *ok,
			   uint32_t *apic_id, uint8_t *vector)
{
	struct sim_vtd *v = vtd_for(sim, rid);
	struct umsi_x86_msi d;
	uint64_t lo, hi;
	uint32_t dlm;

	if (!vtd_takes(v, address, data, &d))
		return false;
	*ok = false;
	if (!d.remapped ||
	    vtd_entry_locked(sim, v, msg_index(&d), false, &lo, &hi) ||
	    !sid_ok(hi, rid))
		return true;
	dlm = (lo >> 5) & 7;
	if (dlm != UMSI_X86_DM_FIXED && dlm != UMSI_X86_DM_LOWPRI)
		return true;
	*ok = true;
	*vector = (uint8_t)(lo >> 16);
	if (lo & IRTE_DM)
		*apic_id = UINT32_MAX;
	else
		*apic_id = eime(v) ? (uint32_t)(lo >> 32) :
			   (uint32_t)(lo >> 40) & 0xff;
	return true;
}

/* ---- Queued invalidation (6.5.2) ----------------------------------------------- */

static void vtd_iqe_locked(struct umsi_sim *sim, struct sim_vtd *v,
			   const char *why)
{
	v->fsts |= FSTS_IQE;
	sim_bad_access_locked(sim, "vtd%u: invalidation queue error at IQH "
			      "0x%x: %s", vtd_no(sim, v), v->iqh << 4, why);
}

/* Run one descriptor. Return: NULL, or why it is an error. */
static const char *vtd_desc_locked(struct umsi_sim *sim, struct sim_vtd *v,
				   uint64_t lo, uint64_t hi)
{
	uint32_t type = (uint32_t)(lo & 0xf) | (uint32_t)((lo >> 9) & 7) << 4;
	uint32_t *status;

	switch (type) {
	case D_IEC:
		if ((lo & IEC_RSVD) || hi)
			return "reserved bits set in an IEC invalidation";
		if (lo & IEC_G) {
			iec_invalidate(v, (uint32_t)(lo >> 32) & 0xffff,
				       (uint32_t)(lo >> 27) & 0x1f);
			v->st.iec_index++;
		} else {
			v->gen++;
			v->st.iec_global++;
		}
		return NULL;
	case D_WAIT:
		if ((lo & WAIT_RSVD) || (hi & 3))
			return "reserved bits set in a wait descriptor";
		if (lo & WAIT_SW) {
			status = sim_phys_ptr_locked(sim, hi & ~3ull, 4);
			if (!status)
				return "status address outside memory";
			*status = (uint32_t)(lo >> 32);
		}
		if (lo & WAIT_IF)
			v->ics |= ICS_IWC;
		v->st.waits++;
		return NULL;
	default:
		return "descriptor type not supported";
	}
}

/* Run the queue from IQH to IQT, stopping at an error (IQE). */
static void vtd_process_locked(struct umsi_sim *sim, struct sim_vtd *v)
{
	uint32_t n = 256u << (v->iqa_latched & IQA_QS);
	uint64_t base = v->iqa_latched & ADDR_4K;

	if (!(v->gsts & G_QIE) || v->silent || (v->fsts & FSTS_IQE))
		return;
	if (v->iqt >= n) {
		vtd_iqe_locked(sim, v, "IQT beyond the queue");
		return;
	}
	while (v->iqh != v->iqt) {
		const uint64_t *p = sim_phys_ptr_locked(sim, base +
							16ull * v->iqh, 16);
		const char *why = "descriptor outside memory";

		if (p)
			why = vtd_desc_locked(sim, v, p[0], p[1]);
		if (why) {
			vtd_iqe_locked(sim, v, why);
			return;
		}
		v->iqh = (v->iqh + 1) % n;
	}
}

/* ---- Registers (11.4) -------------------------------------------------------- */

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

static uint32_t vtd_fsts(const struct sim_vtd *v)
{
	uint32_t s = v->fsts;

	for (uint32_t i = 0; i < UMSI_SIM_VTD_NFR; i++)
		if (v->frcd[i][1] & FRCD_F)
			s |= FSTS_PPF;
	return s | v->fri << 8;
}

static uint32_t vtd_read(struct sim_vtd *v, uint32_t off)
{
	uint64_t ecap = ECAP_QI | ECAP_IR | (v->eim ? ECAP_EIM : 0);

	if (off >= R_FRCD && off < R_FRCD + 16 * UMSI_SIM_VTD_NFR) {
		uint32_t i = (off - R_FRCD) / 16, k = (off - R_FRCD) % 16;

		return half(v->frcd[i][k / 8], k);
	}
	switch (off) {
	case R_VER:
		return VER_1_0;
	case R_CAP: case R_CAP + 4:
		return half(CAP_VALUE, off);
	case R_ECAP: case R_ECAP + 4:
		return half(ecap, off);
	case R_GSTS:
		return v->gsts;
	case R_FSTS:
		return vtd_fsts(v);
	case R_FECTL:
		return FECTL_IM;	/* fault events not modelled: masked */
	case R_IQH:
		return v->iqh << 4;
	case R_IQT:
		return v->iqt << 4;
	case R_IQA: case R_IQA + 4:
		return half(v->iqa, off);
	case R_ICS:
		return v->ics;
	case R_IRTA: case R_IRTA + 4:
		return half(v->irta, off);
	default:
		return 0;	/* GCMD, high halves of IQH/IQT, the rest */
	}
}

/* GCMD (11.4.4): each modelled command acted on at once. */
static void vtd_gcmd(struct umsi_sim *sim, struct sim_vtd *v, uint32_t val)
{
	uint32_t was = v->gsts;

	if ((val & G_QIE) && !(was & G_QIE)) {
		v->iqa_latched = v->iqa;
		v->gsts |= G_QIE;
		vtd_process_locked(sim, v);
	} else if (!(val & G_QIE) && (was & G_QIE)) {
		if (v->iqh != v->iqt && !(v->fsts & FSTS_IQE))
			sim_logf_locked(sim, "vtd%u: queued invalidation "
					"disabled with descriptors pending",
					vtd_no(sim, v));
		v->gsts &= ~G_QIE;
		v->iqh = 0;
	}
	if (val & G_SIRTP) {
		v->irta_latched = v->irta;
		v->gsts |= G_SIRTP;
	}
	v->gsts = (v->gsts & ~(G_IRE | G_CFI)) | (val & (G_IRE | G_CFI));
	if (val & ~G_MODELLED)
		sim_logf_locked(sim, "vtd%u: GCMD 0x%x: only QIE, IRE, SIRTP "
				"and CFI are modelled", vtd_no(sim, v), val);
}

static void vtd_write(struct umsi_sim *sim, struct sim_vtd *v, uint32_t off,
		      uint32_t val)
{

	if (off >= R_FRCD && off < R_FRCD + 16 * UMSI_SIM_VTD_NFR) {
		uint32_t i = (off - R_FRCD) / 16, k = (off - R_FRCD) % 16;

		if (k == 12 && (val & (1u << 31)))
			v->frcd[i][1] &= ~FRCD_F;
		return;
	}
	switch (off) {
	case R_GCMD:
		vtd_gcmd(sim, v, val);
		return;
	case R_FSTS:
		v->fsts &= ~(val & FSTS_RW1C);
		/* IQE cleared: the queue goes on from IQH. */
		if (val & FSTS_IQE)
			vtd_process_locked(sim, v);
		return;
	case R_IQT:
		v->iqt = (val >> 4) & 0x7fff;
		vtd_process_locked(sim, v);
		return;
	case R_IQA: case R_IQA + 4:
		v->iqa = set_half(v->iqa, off, val) & (ADDR_4K | IQA_QS);
		return;
	case R_ICS:
		v->ics &= ~(val & ICS_IWC);
		return;
	case R_IRTA: case R_IRTA + 4:
		v->irta = set_half(v->irta, off, val) &
			  (ADDR_4K | (v->eim ? IRTA_EIME : 0) | IRTA_S);
		return;
	default:
		return;		/* read-only or not modelled */
	}
}

static bool sim_vtd_mmio_locked(struct umsi_sim *sim, uint64_t phys, bool write,
			 uint32_t *val)
{
	struct sim_vtd *v = NULL;
	uint32_t off;

	for (uint32_t i = 0; i < sim->nvtd && !v; i++)
		if (phys >= sim->vtd[i].base &&
		    phys - sim->vtd[i].base < VTD_SIZE)
			v = &sim->vtd[i];
	if (!v)
		return false;
	off = (uint32_t)(phys - v->base) & ~3u;
	if (write)
		vtd_write(sim, v, off, *val);
	else
		*val = vtd_read(v, off);
	return true;
}

/* ---- Public ------------------------------------------------------------------- */

int umsi_sim_vtd_unit_stats(struct umsi_sim *sim, uint32_t unit,
			    struct umsi_sim_vtd_stats *out)
{
	struct sim_vtd *v = vtd_unit(sim, unit);

	if (!v)
		return -UMSI_EINVAL;
	sim_lock(sim);
	*out = v->st;
	sim_unlock(sim);
	return 0;
}

int umsi_sim_vtd_stats(struct umsi_sim *sim, struct umsi_sim_vtd_stats *out)
{
	return umsi_sim_vtd_unit_stats(sim, 0, out);
}

int umsi_sim_vtd_unit_silent(struct umsi_sim *sim, uint32_t unit,
			     bool silent)
{
	struct sim_vtd *v = vtd_unit(sim, unit);

	if (!v)
		return -UMSI_EINVAL;
	sim_lock(sim);
	v->silent = silent;
	/* Awake: what was queued meanwhile runs now. */
	vtd_process_locked(sim, v);
	sim_unlock(sim);
	return 0;
}

int umsi_sim_vtd_silent(struct umsi_sim *sim, bool silent)
{
	return umsi_sim_vtd_unit_silent(sim, 0, silent);
}

int umsi_sim_vtd_unit_irte(struct umsi_sim *sim, uint32_t unit,
			   uint32_t index, uint64_t out[2])
{
	struct sim_vtd *v = vtd_unit(sim, unit);
	const uint64_t *p = NULL;

	if (!v)
		return -UMSI_EINVAL;
	sim_lock(sim);
	if ((v->gsts & G_SIRTP) && index < (2ull << (v->irta_latched & IRTA_S)))
		p = sim_phys_ptr_locked(sim, (v->irta_latched & ADDR_4K) +
					16ull * index, 16);
	if (p) {
		out[0] = p[0];
		out[1] = p[1];
	}
	sim_unlock(sim);
	return p ? 0 : -UMSI_ENOENT;
}

int umsi_sim_vtd_irte(struct umsi_sim *sim, uint32_t index, uint64_t out[2])
{
	return umsi_sim_vtd_unit_irte(sim, 0, index, out);
}

int umsi_sim_vtd_unit_fault(struct umsi_sim *sim, uint32_t unit, uint32_t n,
			    uint32_t *sid, uint32_t *index, uint32_t *reason)
{
	struct sim_vtd *v = vtd_unit(sim, unit);
	int err = 0;

	if (!v)
		return -UMSI_EINVAL;
	sim_lock(sim);
	if (n >= v->nfaults) {
		err = -UMSI_ENOENT;
	} else {
		if (sid)
			*sid = v->faults[n].sid;
		if (index)
			*index = v->faults[n].index;
		if (reason)
			*reason = v->faults[n].reason;
	}
	sim_unlock(sim);
	return err;
}

int umsi_sim_vtd_fault(struct umsi_sim *sim, uint32_t n, uint32_t *sid,
		       uint32_t *index, uint32_t *reason)
{
	return umsi_sim_vtd_unit_fault(sim, 0, n, sid, index, reason);
}

/* ---- The model (sim_models.c) ---------------------------------------------- */

static int vtd_model_init(struct umsi_sim *sim,
			  const struct umsi_sim_config *cfg)
{
	if (!cfg->vtd && !cfg->nvtd_units)
		return 0;
	/* An x86 machine's unit: in front of local APICs only. */
	if (cfg->controller != UMSI_SIM_CTL_X86_LAPIC)
		return -UMSI_EINVAL;
	return sim_vtd_init(sim, cfg);
}

static bool vtd_remaps(const struct umsi_sim *sim)
{
	return sim->vtd != NULL;
}

static void vtd_dump(struct umsi_sim *sim, FILE *out)
{
	for (uint32_t i = 0; i < sim->nvtd; i++) {
		const struct sim_vtd *v = &sim->vtd[i];

		fprintf(out, "vtd");
		if (sim->nvtd > 1)
			fprintf(out, "%u (0x%llx)", i,
				(unsigned long long)v->base);
		fprintf(out, " gsts 0x%08x fsts 0x%x irta 0x%llx iqh %u iqt "
			"%u%s, remapped %llu, faults %llu (compat %llu), iec "
			"global %llu index %llu, waits %llu\n", v->gsts, v->fsts,
			(unsigned long long)v->irta_latched, v->iqh, v->iqt,
			v->silent ? " silent" : "",
			(unsigned long long)v->st.remapped,
			(unsigned long long)v->st.faults,
			(unsigned long long)v->st.blocked_compat,
			(unsigned long long)v->st.iec_global,
			(unsigned long long)v->st.iec_index,
			(unsigned long long)v->st.waits);
	}
}

static bool overlaps(uint64_t a, uint64_t alen, uint64_t b, uint64_t blen)
{
	return a < b + blen && b < a + alen;
}

/* A unit with remapping or queued invalidation on reads its table and
 * its queue. */
static const char *vtd_reads(struct umsi_sim *sim, uint64_t phys, size_t size)
{
	for (uint32_t i = 0; i < sim->nvtd; i++) {
		const struct sim_vtd *v = &sim->vtd[i];

		if ((v->gsts & G_IRE) &&
		    overlaps(phys, size, v->irta_latched & ADDR_4K,
			     16ull * (2ull << (v->irta_latched & IRTA_S))))
			return "a VT-d unit's interrupt remapping table";
		if ((v->gsts & G_QIE) &&
		    overlaps(phys, size, v->iqa_latched & ADDR_4K,
			     4096ull << (v->iqa_latched & IQA_QS)))
			return "a VT-d unit's invalidation queue";
	}
	return NULL;
}

const struct sim_model_ops sim_vtd_ops = {
	.name = "vt-d",
	.controller = SIM_NO_CTL,
	.init = vtd_model_init,
	.fini = sim_vtd_fini,
	.mmio = sim_vtd_mmio_locked,
	.remaps = vtd_remaps,
	.intercept = sim_vtd_intercept_locked,
	.target = sim_vtd_target_locked,
	.reads = vtd_reads,
	.dump = vtd_dump,
};
