/* SPDX-License-Identifier: MIT */
/*
 * imsic.c - this hart's S-level IMSIC interrupt file, through the AIA
 * CSRs (RISC-V AIA specification v1.0).
 *
 * The file's registers are reached indirectly: write the register number
 * to siselect (CSR 0x150), then read or write sireg (0x151) (AIA 2.3).
 * Numbers (AIA 3.8 "Indirectly accessed interrupt-file registers"):
 * eidelivery 0x70 (1: deliver to the hart), eithreshold 0x72 (0: no
 * threshold), eip0..eip63 0x80-0xbf, eie0..eie63 0xc0-0xff; on RV64 only
 * the even-numbered ones exist and each holds 64 identities, so identity
 * i is bit i % 64 of register 0xc0 + (i / 64) * 2. stopei (0x15c) reads
 * the highest-priority pending-and-enabled identity in bits 26:16 (AIA
 * 3.9); writing it (csrrw) claims that identity, clearing its pending bit.
 *
 * siselect is one register per hart shared by every user, so each
 * select/access pair runs with interrupts off. Only this hart can reach
 * its own file through these CSRs; others reach it only by MSI writes to
 * its 4 KiB page (seteipnum_le at offset 0).
 */
#include "rv.h"
#include "aplic.h"

#define IMSIC_EIDELIVERY	0x70
#define IMSIC_EITHRESHOLD	0x72
#define IMSIC_EIP0		0x80
#define IMSIC_EIE0		0xc0
#define IMSIC_TOPEI_ID_SHIFT	16
#define IMSIC_TOPEI_ID_MASK	0x7ffu
#define IMSIC_MAX_IDS		2047

static unsigned long imsic_read(unsigned long reg)
{
	csr_write_siselect(reg);
	return csr_read_sireg();
}

static void imsic_write(unsigned long reg, unsigned long v)
{
	csr_write_siselect(reg);
	csr_write_sireg(v);
}

/* The eie/eip register (RV64 numbering) and bit of @identity. */
static unsigned long imsic_reg(unsigned long base, uint32_t identity)
{
	return base + (identity / 64) * 2;
}

/**
 * imsic_local_init - reset and enable this hart's S-level file
 * @num_ids: riscv,num-ids of the IMSIC (identities 1..num_ids)
 *
 * Every identity disabled and not pending, threshold off, delivery on.
 * Context: the hart itself, interrupts off or on.
 * Return: true when eidelivery reads back as 1.
 */
bool imsic_local_init(uint32_t num_ids)
{
	unsigned long flags = local_irq_save();
	uint32_t i;
	bool ok;

	if (num_ids > IMSIC_MAX_IDS)
		num_ids = IMSIC_MAX_IDS;
	imsic_write(IMSIC_EIDELIVERY, 0);
	for (i = 0; i <= num_ids; i += 64) {
		imsic_write(imsic_reg(IMSIC_EIE0, i), 0);
		imsic_write(imsic_reg(IMSIC_EIP0, i), 0);
	}
	imsic_write(IMSIC_EITHRESHOLD, 0);
	imsic_write(IMSIC_EIDELIVERY, 1);
	ok = imsic_read(IMSIC_EIDELIVERY) == 1;
	local_irq_restore(flags);
	return ok;
}

/*
 * Every identity 1..@num_ids of this hart's file enabled (eie bits; bit 0
 * of eie0, identity 0, is read-only zero): uMSI hands identities out and
 * takes them back without touching eie, so all of them stay enabled and
 * a message arrives as soon as a source sends it.
 */
void imsic_local_enable_all(uint32_t num_ids)
{
	unsigned long flags = local_irq_save();
	uint32_t i;

	if (num_ids > IMSIC_MAX_IDS)
		num_ids = IMSIC_MAX_IDS;
	for (i = 0; i <= num_ids; i += 64) {
		uint32_t last = num_ids - i < 63 ? num_ids - i : 63;
		unsigned long bits = last == 63 ? ~0ul : (2ul << last) - 1;

		imsic_write(imsic_reg(IMSIC_EIE0, i), bits);
	}
	local_irq_restore(flags);
}

/*
 * Indirect register @reg of
 * this hart's file, the select and the access one step with interrupts
 * off (siselect is shared with the trap path).
 */
unsigned long imsic_reg_read(unsigned long reg)
{
	unsigned long flags = local_irq_save();
	unsigned long v = imsic_read(reg);

	local_irq_restore(flags);
	return v;
}

void imsic_reg_write(unsigned long reg, unsigned long v)
{
	unsigned long flags = local_irq_save();

	imsic_write(reg, v);
	local_irq_restore(flags);
}

void imsic_local_enable(uint32_t identity)
{
	unsigned long flags = local_irq_save();

	csr_write_siselect(imsic_reg(IMSIC_EIE0, identity));
	csr_set_sireg(1ul << (identity % 64));
	local_irq_restore(flags);
}

void imsic_local_disable(uint32_t identity)
{
	unsigned long flags = local_irq_save();

	csr_write_siselect(imsic_reg(IMSIC_EIE0, identity));
	csr_clear_sireg(1ul << (identity % 64));
	local_irq_restore(flags);
}

/* Claim the top identity (0: none pending). */
uint32_t imsic_claim(void)
{
	unsigned long v = csr_swap_stopei(0);

	return (uint32_t)(v >> IMSIC_TOPEI_ID_SHIFT) & IMSIC_TOPEI_ID_MASK;
}

volatile bool rv_probe_active;

/*
 * The supervisor external interrupt: claim through stopei until nothing
 * is left, and give each identity to uMSI (umsi_dispatch through the
 * glue's hook: the IMSIC back end has no end of interrupt, the claim was
 * it). Before uMSI is set up, and while the MSI probe runs, the handler
 * only records (the probe on another hart reads the record and prints),
 * so it takes no lock.
 */
void imsic_handle(void)
{
	struct rv_cpu *c = this_cpu();
	uint32_t id, n = 0;

	while ((id = imsic_claim()) != 0) {
		c->last_identity = id;
		__atomic_fetch_add(&c->claims, 1, __ATOMIC_RELEASE);
		n++;
		if (irq_dispatch_hook && !rv_probe_active) {
			irq_dispatch_hook(c->cpu, id);
			/* An INTx line through the APLIC: level again. */
			aplic_after_dispatch(c->cpu, id);
		}
	}
	if (!n)
		c->spurious++;
}
