/* SPDX-License-Identifier: MIT */
/*
 * sim_imsic.c - the RISC-V AIA IMSIC model (AIA 1.0, chapter 3): one
 * S-level interrupt file per hart, behind the same struct sim_ctl_model
 * as the x86 local APIC (sim_core.c).
 *
 * A file is a 4 KiB page of MMIO (CPU k's at imsic_base + 0x1000 * k)
 * whose seteipnum_le register (offset 0) sets the pending bit (eip) of
 * the identity written to it, and a set of indirect registers the hart
 * reaches through siselect/sireg: eidelivery (0x70), eithreshold (0x72),
 * eip0.. (0x80..) and eie0.. (0xc0..), on RV64 the even-numbered ones
 * only, 64 identities each (AIA 3.8). The hart is interrupted while
 * eidelivery is 1 and topei is not 0: the lowest-numbered identity that
 * is pending and enabled and, when eithreshold is P != 0, below P
 * (AIA 3.9: lower identities have priority). The kernel claims it by
 * swapping stopei with zero, which clears its eip bit, and dispatches it:
 * nothing is left in the file to end.
 */
#include <stdlib.h>
#include <string.h>

#include "sim_priv.h"

#define FILE_SIZE        0x1000u
#define REG_EIDELIVERY   0x70u
#define REG_EITHRESHOLD  0x72u
#define REG_EIP0         0x80u
#define REG_EIE0         0xc0u
#define REG_END          0x100u

static uint32_t imsic_words(const struct umsi_sim *sim)
{
	return sim->nids / 64;
}

static bool imsic_test(const uint64_t *m, uint32_t id)
{
	return (m[id / 64] >> (id % 64)) & 1;
}

/* Bits eithreshold implements: enough for num-ids (AIA 3.8.2). */
static uint32_t imsic_threshold_mask(const struct umsi_sim *sim)
{
	uint32_t m = 1;

	while (m < sim->imsic_num_ids)
		m = m << 1 | 1;
	return m;
}

static int sim_imsic_init(struct umsi_sim *sim, const struct umsi_sim_config *cfg)
{
	uint32_t n = cfg->imsic_num_ids ? cfg->imsic_num_ids : 255;
	uint64_t base = cfg->imsic_base ? cfg->imsic_base : UMSI_SIM_IMSIC_BASE;
	uint32_t words;

	if (n < 63 || n > 2047 || (n + 1) % 64 || base % FILE_SIZE ||
	    base + (uint64_t)cfg->ncpus * FILE_SIZE < base)
		return -UMSI_EINVAL;
	sim->ctl = &sim_imsic_model;
	sim->imsic_num_ids = n;
	sim->imsic_base = base;
	sim->nids = n + 1;
	words = imsic_words(sim);
	sim->imsic_bits = calloc((size_t)cfg->ncpus * 2 * words,
				 sizeof(uint64_t));
	if (!sim->imsic_bits)
		return -UMSI_ENOMEM;
	for (uint32_t i = 0; i < cfg->ncpus; i++) {
		struct sim_cpu *c = &sim->cpus[i];

		c->eip = sim->imsic_bits + (size_t)i * 2 * words;
		c->eie = c->eip + words;
		/* As the kernel leaves a file after boot: all delivering. */
		memset(c->eie, 0xff, words * sizeof(uint64_t));
		c->eie[0] &= ~1ull;	/* identity 0 does not exist */
		c->eidelivery = 1;
		c->eithreshold = 0;
	}
	return 0;
}

static void sim_imsic_fini(struct umsi_sim *sim)
{
	free(sim->imsic_bits);
	sim->imsic_bits = NULL;
}

/* topei of @cpu's file (AIA 3.9), whatever eidelivery says; 0: none. */
static uint32_t imsic_top_locked(const struct umsi_sim *sim, uint32_t cpu)
{
	const struct sim_cpu *c = &sim->cpus[cpu];
	uint32_t words = imsic_words(sim), th = c->eithreshold;

	for (uint32_t w = 0; w < words; w++) {
		uint64_t m = c->eip[w] & c->eie[w];
		uint32_t id;

		if (!m)
			continue;
		id = w * 64 + (uint32_t)__builtin_ctzll(m);
		return th && id >= th ? 0 : id;
	}
	return 0;
}

/* Set or clear eip bit @id of @cpu, keeping the sim's pending counts. */
static void imsic_eip_locked(struct umsi_sim *sim, uint32_t cpu, uint32_t id,
			     bool on)
{
	struct sim_cpu *c = &sim->cpus[cpu];
	uint64_t bit = 1ull << (id % 64);
	bool empty = true;

	if (id == 0 || id > sim->imsic_num_ids ||
	    !!(c->eip[id / 64] & bit) == on)
		return;
	if (on) {
		c->eip[id / 64] |= bit;
		sim_pending_set_locked(sim, cpu);
		sim_cpu_kick_locked(sim, cpu);
		return;
	}
	c->eip[id / 64] &= ~bit;
	for (uint32_t w = 0; w < imsic_words(sim) && empty; w++)
		empty = !c->eip[w];
	sim_pending_clear_locked(sim, cpu, empty);
}

/* Identity @id arrives at @cpu's file: pending, or coalesced. */
static void imsic_accept_locked(struct umsi_sim *sim, uint32_t cpu,
				uint32_t id)
{
	struct sim_cpu *c = &sim->cpus[cpu];

	c->vs_used = true;
	if (imsic_test(c->eip, id)) {
		sim_coalesced_locked(sim, cpu, id);
		sim->st.irr_coalesced++;
		return;
	}
	imsic_eip_locked(sim, cpu, id, true);
	sim_delivered_locked(sim, cpu, id);
	sim->st.delivered++;
}

/* Which file and register a physical address is: false when none. */
static bool imsic_decode(const struct umsi_sim *sim, uint64_t address,
			 uint32_t *cpu, uint32_t *off)
{
	uint64_t rel = address - sim->imsic_base;

	if (address < sim->imsic_base ||
	    rel >= (uint64_t)sim->ncpus * FILE_SIZE)
		return false;
	*cpu = (uint32_t)(rel / FILE_SIZE);
	*off = (uint32_t)(rel % FILE_SIZE);
	return true;
}

/* The identity a 32-bit write of @data to @off sets, or false. */
static bool imsic_seteipnum(uint32_t off, uint32_t data, uint32_t *id)
{
	if (off == 0) {
		*id = data;		/* seteipnum_le */
		return true;
	}
	if (off == 4) {
		*id = __builtin_bswap32(data);	/* seteipnum_be */
		return true;
	}
	return false;
}

static int imsic_deliver_locked(struct umsi_sim *sim, uint64_t address,
				uint32_t data)
{
	uint32_t cpu, off, id;

	if (!imsic_decode(sim, address, &cpu, &off) ||
	    !imsic_seteipnum(off, data, &id))
		return sim_undeliverable_locked(sim, UMSI_SIM_UNDELIV_STRAY,
						address, data);
	/* AIA 3.6: a write of 0 or of an identity beyond num-ids is ignored. */
	if (id == 0 || id > sim->imsic_num_ids)
		return sim_undeliverable_locked(sim, UMSI_SIM_UNDELIV_VECTOR,
						address, data);
	imsic_accept_locked(sim, cpu, id);
	return 1;
}

static bool sim_imsic_mmio_write_locked(struct umsi_sim *sim, uint64_t phys,
				 uint32_t val)
{
	uint32_t cpu, off;

	if (sim->ctl != &sim_imsic_model ||
	    !imsic_decode(sim, phys, &cpu, &off))
		return false;
	sim->st.msgs++;
	imsic_deliver_locked(sim, phys, val);
	return true;
}

static bool imsic_target_locked(struct umsi_sim *sim, uint64_t address,
				uint32_t data, uint32_t *cpu, uint32_t *id)
{
	uint32_t off;

	return imsic_decode(sim, address, cpu, &off) &&
	       imsic_seteipnum(off, data, id) && *id != 0 &&
	       *id <= sim->imsic_num_ids;
}

/*
 * The eip/eie word register @reg names, or NULL when it reads zero;
 * *@exists: whether @reg is an eip/eie register at all.
 */
static uint64_t *imsic_word(struct umsi_sim *sim, uint32_t cpu, uint32_t reg,
			    bool *exists)
{
	struct sim_cpu *c = &sim->cpus[cpu];
	uint32_t k;

	*exists = reg >= REG_EIP0 && reg < REG_END && !(reg & 1);
	if (!*exists)
		return NULL;
	k = (reg & 0x3f) / 2;
	/* Words beyond num-ids exist and read zero (AIA 3.8.4). */
	if (k >= imsic_words(sim))
		return NULL;
	return reg < REG_EIE0 ? &c->eip[k] : &c->eie[k];
}

static uint64_t imsic_read_locked(struct umsi_sim *sim, uint32_t cpu,
				  uint32_t reg)
{
	struct sim_cpu *c = &sim->cpus[cpu];
	uint64_t *w;
	bool exists;

	if (reg == REG_EIDELIVERY)
		return c->eidelivery;
	if (reg == REG_EITHRESHOLD)
		return c->eithreshold;
	w = imsic_word(sim, cpu, reg, &exists);
	if (!exists)
		sim_bad_access_locked(sim, "read of IMSIC register 0x%x",
				      reg);
	return w ? *w : 0;
}

/* Write eip or eie word @k of @cpu; eip through the pending counts. */
static void imsic_write_word(struct umsi_sim *sim, uint32_t cpu, uint32_t reg,
			     uint64_t *w, uint64_t val)
{
	uint32_t k = (reg & 0x3f) / 2;

	if (k == 0)
		val &= ~1ull;	/* identity 0: read-only zero */
	if (k == imsic_words(sim) - 1 && sim->nids % 64)
		val &= (1ull << (sim->nids % 64)) - 1;
	if (reg >= REG_EIE0) {
		*w = val;
		sim_cpu_kick_locked(sim, cpu);
		return;
	}
	for (uint32_t b = 0; b < 64; b++)
		if (((*w ^ val) >> b) & 1)
			imsic_eip_locked(sim, cpu, k * 64 + b, (val >> b) & 1);
}

static void imsic_write_locked(struct umsi_sim *sim, uint32_t cpu,
			       uint32_t reg, uint64_t val)
{
	struct sim_cpu *c = &sim->cpus[cpu];
	uint64_t *w;
	bool exists;

	if (reg == REG_EIDELIVERY) {
		/* WARL: 0 off, 1 on (no APLIC direct mode modelled). */
		c->eidelivery = (uint32_t)(val & 1);
		sim_cpu_kick_locked(sim, cpu);
		return;
	}
	if (reg == REG_EITHRESHOLD) {
		c->eithreshold = (uint32_t)val & imsic_threshold_mask(sim);
		sim_cpu_kick_locked(sim, cpu);
		return;
	}
	w = imsic_word(sim, cpu, reg, &exists);
	if (!exists) {
		sim_bad_access_locked(sim, "write of IMSIC register 0x%x "
				      "value 0x%llx", reg,
				      (unsigned long long)val);
		return;
	}
	if (w)
		imsic_write_word(sim, cpu, reg, w, val);
}

static int imsic_next_locked(struct umsi_sim *sim, uint32_t cpu)
{
	uint32_t id;

	if (sim->cpus[cpu].eidelivery != 1)
		return -1;
	id = imsic_top_locked(sim, cpu);
	return id ? (int)id : -1;
}

/* The kernel's claim: csrrw stopei, zero clears the identity's eip bit. */
static void imsic_take_locked(struct umsi_sim *sim, uint32_t cpu, uint32_t id)
{
	imsic_eip_locked(sim, cpu, id, false);
}

static void imsic_finish_locked(struct umsi_sim *sim, uint32_t cpu,
				uint32_t id, bool had_fn)
{
	(void)sim;
	(void)cpu;
	(void)id;
	(void)had_fn;
}

static int imsic_raise_locked(struct umsi_sim *sim, uint32_t cpu, uint32_t id)
{
	if (id == 0 || id > sim->imsic_num_ids)
		return -UMSI_EINVAL;
	imsic_accept_locked(sim, cpu, id);
	return 0;
}

/* irq_pending: the eip bit (eip word 2 * (id / 64) on RV64). */
static bool imsic_pending_locked(struct umsi_sim *sim, uint32_t cpu,
				 uint32_t id)
{
	return (imsic_read_locked(sim, cpu, 0x80 + 2 * (id / 64)) >>
		(id % 64)) & 1;
}

/* No EOI (the kernel claims through stopei) and no IPI through the host. */
static void imsic_eoi_locked(struct umsi_sim *sim, uint32_t cpu, uint32_t id)
{
	(void)cpu;
	sim_bad_access_locked(sim, "eoi of identity %u on an IMSIC", id);
}

static void imsic_ipi_locked(struct umsi_sim *sim, uint32_t cpu,
			     uint32_t hwid, uint32_t id)
{
	(void)cpu;
	sim_bad_access_locked(sim, "send_ipi of identity %u to hart %u on an "
			      "IMSIC", id, hwid);
}

const struct sim_ctl_model sim_imsic_model = {
	.name = "riscv-imsic",
	.read = imsic_read_locked,
	.write = imsic_write_locked,
	.pending = imsic_pending_locked,
	.eoi = imsic_eoi_locked,
	.ipi = imsic_ipi_locked,
	.deliver = imsic_deliver_locked,
	.target = imsic_target_locked,
	.next = imsic_next_locked,
	.take = imsic_take_locked,
	.finish = imsic_finish_locked,
	.raise = imsic_raise_locked,
	.wired_target = true,
	.wired = SIM_WIRED_APLIC,
};

/* ---- Public ------------------------------------------------------------- */

uint64_t umsi_sim_imsic_file_addr(struct umsi_sim *sim, uint32_t cpu)
{
	if (sim->ctl != &sim_imsic_model || cpu >= sim->ncpus)
		return 0;
	return sim->imsic_base + (uint64_t)cpu * FILE_SIZE;
}

uint64_t umsi_sim_imsic_reg(struct umsi_sim *sim, uint32_t cpu, uint32_t reg)
{
	uint64_t v = 0;
	bool exists;

	if (sim->ctl != &sim_imsic_model || cpu >= sim->ncpus)
		return 0;
	sim_lock(sim);
	if (reg == REG_EIDELIVERY || reg == REG_EITHRESHOLD ||
	    imsic_word(sim, cpu, reg, &exists) || exists)
		v = imsic_read_locked(sim, cpu, reg);
	sim_unlock(sim);
	return v;
}

int umsi_sim_imsic_reg_write(struct umsi_sim *sim, uint32_t cpu, uint32_t reg,
			     uint64_t val)
{
	bool exists = reg == REG_EIDELIVERY || reg == REG_EITHRESHOLD;

	if (sim->ctl != &sim_imsic_model || cpu >= sim->ncpus)
		return -UMSI_EINVAL;
	sim_lock(sim);
	if (!exists)
		imsic_word(sim, cpu, reg, &exists);
	if (exists)
		imsic_write_locked(sim, cpu, reg, val);
	sim_unlock(sim);
	sim_drain(sim);
	return exists ? 0 : -UMSI_EINVAL;
}

uint32_t umsi_sim_imsic_topei(struct umsi_sim *sim, uint32_t cpu)
{
	uint32_t id;

	if (sim->ctl != &sim_imsic_model || cpu >= sim->ncpus)
		return 0;
	sim_lock(sim);
	id = imsic_top_locked(sim, cpu);
	sim_unlock(sim);
	return id << 16 | id;
}

/* ---- The model (sim_models.c) ---------------------------------------------- */

static int imsic_model_init(struct umsi_sim *sim,
			    const struct umsi_sim_config *cfg)
{
	if (cfg->controller != UMSI_SIM_CTL_IMSIC)
		return 0;
	return sim_imsic_init(sim, cfg);
}

/* The CPUs' writes to interrupt files (the back end's resend); no reads. */
static bool imsic_mmio_locked(struct umsi_sim *sim, uint64_t phys, bool write,
			      uint32_t *val)
{
	return write && sim_imsic_mmio_write_locked(sim, phys, *val);
}

const struct sim_model_ops sim_imsic_ops = {
	.name = "riscv-imsic",
	.controller = UMSI_SIM_CTL_IMSIC,
	.init = imsic_model_init,
	.fini = sim_imsic_fini,
	.mmio = imsic_mmio_locked,
};
