/* SPDX-License-Identifier: MIT */
/*
 * What the x86 back ends share (lapic.c, vtd.c, amdvi.c): the local
 * APIC's "pending" (IRR), resend (a fixed IPI) and end of interrupt, and
 * the remapping back ends' view of an IRQ's table entries. Internal.
 */
#ifndef UMSI_ARCH_X86_LAPIC_H
#define UMSI_ARCH_X86_LAPIC_H

#include <umsi/internal/ctl.h>

/* The host operations both need (eoi, irq_pending, send_ipi): 0 or
 * -UMSI_EINVAL after a log line naming the missing one. */
int umsi_lapic_check_host(struct umsi_system *sys, const char *name);

/* Whether vector @id is set in the current CPU's IRR (umsi_ctl.pending). */
bool umsi_lapic_pending(struct umsi_system *sys, uint32_t id);
/* A fixed IPI of vector @id to @cpu (umsi_ctl.resend). */
int umsi_lapic_resend(struct umsi_system *sys, uint32_t cpu, uint32_t id);

/*
 * Which record and which of its entries @ci names, for a back end that
 * keeps remapping table entries per IRQ (vtd.c, amdvi.c): an IRQ's own
 * (all of them), or in a split MSI block (umsi_ctl_domain.block_targets)
 * the block's record, keyed by its first IRQ, and entry @ci->index of it.
 */
struct umsi_x86_slice {
	uint32_t key, n;                /* the record: IRQ, entries */
	uint32_t from, count;           /* the entries @ci names */
	bool group;
};

/* Fill @sl from @ci: 0, or -UMSI_EINVAL for a block member out of shape. */
static inline int umsi_x86_slice(const struct umsi_ctl_irq *ci,
				 struct umsi_x86_slice *sl)
{
	sl->group = ci->group_count != 0;
	sl->key = sl->group ? ci->group_irq : ci->irq;
	sl->n = sl->group ? ci->group_count : ci->count;
	sl->from = sl->group ? ci->index : 0;
	sl->count = ci->count;
	if (sl->group && (ci->count != 1 || ci->index >= sl->n || sl->n > 32))
		return -UMSI_EINVAL;
	return 0;
}

#endif /* UMSI_ARCH_X86_LAPIC_H */
