/* SPDX-License-Identifier: MIT */
/*
 * Composing an IRQ's message: the interrupt-remapping hook.
 *
 * Where the platform has an interrupt-remapping unit (UMSI_PLAT_IRQ_REMAP),
 * the message is composed by the host's remapping back end
 * (remap_compose: allocate or update a remapping-table entry and return a
 * remappable-format message), and any APIC ID is reachable. Otherwise the
 * x86 LAPIC format of x86_msg.c names the destination directly. Every MSI
 * and MSI-X write in uMSI goes through here, so a new back end (an IOMMU
 * driver, or another architecture's interrupt controller) plugs in at this
 * one place.
 */
#include <umsi/internal/core.h>

int umsi_irq_compose(struct umsi_system *sys, struct umsi_irq_desc *d,
		     uint32_t cpu, uint8_t vector, struct umsi_msg *msg)
{
	uint32_t apic = sys->cpus[cpu].apic_id;
	int ret;

	if ((sys->plat_flags & UMSI_PLAT_IRQ_REMAP) && sys->ops->remap_compose) {
		ret = sys->ops->remap_compose(sys->host, d->irq, apic, vector,
					      msg);
		/* Only an IRQ that got an entry gives one back (remap_free). */
		if (!ret)
			d->remapped = true;
		return ret;
	}
	return umsi_x86_msg_compose(apic, vector, sys->plat_flags, msg);
}
