/* SPDX-License-Identifier: MIT */
/*
 * The IO-APICs a remapping back end knows (struct umsi_ioapic_source):
 * which requester ID a wired input's messages carry, found by its GSI;
 * and the requester ranges of a machine's remapping units (struct
 * umsi_rid_range) checked. Shared by vtd.c and amdvi.c.
 */
#include <umsi/ctl.h>
#include <umsi/internal/lib.h>

#include "lapic.h"

int umsi_x86_ioapics_check(struct umsi_system *sys, const char *name,
			   const struct umsi_ioapic_source *t, uint32_t n,
			   uint32_t id_limit, bool none_ok)
{
	uint32_t i, k;

	if (n > UMSI_MAX_IOAPICS) {
		umsi_log(sys, UMSI_LOG_ERROR, "%s: nioapics %u is more than "
			 "%u", name, n, UMSI_MAX_IOAPICS);
		return -UMSI_EINVAL;
	}
	if (n && !t) {
		umsi_log(sys, UMSI_LOG_ERROR, "%s: nioapics %u but no ioapics "
			 "table", name, n);
		return -UMSI_EINVAL;
	}
	for (i = 0; i < n; i++) {
		const struct umsi_ioapic_source *a = &t[i];

		if (a->gsi_count == 0 || a->gsi_count > 256) {
			umsi_log(sys, UMSI_LOG_ERROR, "%s: ioapics[%u]: "
				 "gsi_count %u is not 1 to 256", name, i,
				 a->gsi_count);
			return -UMSI_EINVAL;
		}
		if (a->gsi_base > UINT32_MAX - a->gsi_count) {
			umsi_log(sys, UMSI_LOG_ERROR, "%s: ioapics[%u]: GSIs "
				 "%u + %u pass 2^32", name, i, a->gsi_base,
				 a->gsi_count);
			return -UMSI_EINVAL;
		}
		if (a->source_id >= id_limit &&
		    !(none_ok && a->source_id == UMSI_VTD_NO_SID)) {
			umsi_log(sys, UMSI_LOG_ERROR, "%s: ioapics[%u]: "
				 "source_id 0x%x is not below 0x%x", name, i,
				 a->source_id, id_limit);
			return -UMSI_EINVAL;
		}
		for (k = 0; k < i; k++) {
			const struct umsi_ioapic_source *b = &t[k];

			if (a->gsi_base < b->gsi_base + b->gsi_count &&
			    b->gsi_base < a->gsi_base + a->gsi_count) {
				umsi_log(sys, UMSI_LOG_ERROR, "%s: ioapics[%u] "
					 "and ioapics[%u] share GSI %u", name,
					 k, i, a->gsi_base > b->gsi_base ?
					 a->gsi_base : b->gsi_base);
				return -UMSI_EINVAL;
			}
		}
	}
	return 0;
}

int umsi_x86_wired_source(struct umsi_system *sys, const char *name,
			  const struct umsi_ioapic_source *t, uint32_t n,
			  uint32_t single, const struct umsi_ctl_irq *ci,
			  uint32_t *id)
{
	uint32_t i;

	*id = single;
	if (!n)
		return 0;
	for (i = 0; i < n; i++) {
		if (ci->index - t[i].gsi_base < t[i].gsi_count) {
			*id = t[i].source_id;
			return 0;
		}
	}
	umsi_log(sys, UMSI_LOG_ERROR, "%s: irq %u: GSI %u is an input of no "
		 "IO-APIC of its ioapics table", name, ci->irq, ci->index);
	return -UMSI_ENOTSUP;
}

int umsi_x86_ranges_check(struct umsi_system *sys, const char *name,
			  const char *what, uint32_t unit,
			  const struct umsi_rid_range *r, uint32_t n,
			  uint16_t segment, uint32_t id_limit)
{
	const char *bad;
	uint32_t k;

	for (k = 0; k < n; k++) {
		if (r[k].first > r[k].last)
			bad = "reversed";
		else if (r[k].first >> 16 != r[k].last >> 16)
			bad = "across segments";
		else if (r[k].first >> 16 != segment)
			bad = "outside the unit's segment";
		else if ((r[k].last & 0xffff) >= id_limit)
			bad = "beyond devid_count";
		else
			continue;
		umsi_log(sys, UMSI_LOG_ERROR, "%s: unit %u %s %u: 0x%x..0x%x is "
			 "%s", name, unit, what, k, r[k].first, r[k].last, bad);
		return -UMSI_EINVAL;
	}
	return 0;
}

int umsi_x86_ranges_apart(struct umsi_system *sys, const char *name,
			  const char *what, uint32_t unit,
			  const struct umsi_rid_range *r, uint32_t n,
			  uint32_t ounit, const struct umsi_rid_range *o,
			  uint32_t on)
{
	uint32_t k, l;

	for (k = 0; k < n; k++) {
		for (l = 0; l < on; l++) {
			if (o[l].first > r[k].last || o[l].last < r[k].first)
				continue;
			umsi_log(sys, UMSI_LOG_ERROR, "%s: unit %u %s %u "
				 "(0x%x..0x%x) meets unit %u's (0x%x..0x%x)",
				 name, unit, what, k, r[k].first, r[k].last,
				 ounit, o[l].first, o[l].last);
			return -UMSI_EINVAL;
		}
	}
	return 0;
}
