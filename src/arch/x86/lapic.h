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

struct umsi_ioapic_source;

/*
 * Check a configuration's IO-APIC table (@n entries of @t, as umsi/ctl.h
 * asks: a table when @n, at most UMSI_MAX_IOAPICS, 1 to 256 inputs each,
 * no GSI twice, each source_id below @id_limit, or all-ones when
 * @none_ok, UMSI_VTD_NO_SID): 0, or -UMSI_EINVAL after a log line naming
 * the entry, prefixed with @name.
 */
int umsi_x86_ioapics_check(struct umsi_system *sys, const char *name,
			   const struct umsi_ioapic_source *t, uint32_t n,
			   uint32_t id_limit, bool none_ok);

/*
 * The requester ID wired input @ci (its GSI in @ci->index) sends with:
 * @single without a table (@n 0), else the source_id of the IO-APIC of
 * @t that has the GSI. 0, or -UMSI_ENOTSUP after a log line (prefixed
 * with @name) when no IO-APIC of @t has it.
 */
int umsi_x86_wired_source(struct umsi_system *sys, const char *name,
			  const struct umsi_ioapic_source *t, uint32_t n,
			  uint32_t single, const struct umsi_ctl_irq *ci,
			  uint32_t *id);

struct umsi_rid_range;

/*
 * Check unit @unit's requester ranges @r[0..@n) (@what names them in the
 * log: "scope", "DeviceIDs"): each forwards, within one segment, that
 * segment @segment, its last ID's low 16 bits below @id_limit. 0, or
 * -UMSI_EINVAL after a log line naming the unit and range, prefixed with
 * @name.
 */
int umsi_x86_ranges_check(struct umsi_system *sys, const char *name,
			  const char *what, uint32_t unit,
			  const struct umsi_rid_range *r, uint32_t n,
			  uint16_t segment, uint32_t id_limit);

/*
 * No range of unit @unit's @r[0..@n) meets one of unit @ounit's
 * @o[0..@on) (one unit per requester): 0, or -UMSI_EINVAL after a log
 * line naming both.
 */
int umsi_x86_ranges_apart(struct umsi_system *sys, const char *name,
			  const char *what, uint32_t unit,
			  const struct umsi_rid_range *r, uint32_t n,
			  uint32_t ounit, const struct umsi_rid_range *o,
			  uint32_t on);

#endif /* UMSI_ARCH_X86_LAPIC_H */
