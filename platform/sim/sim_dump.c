/* SPDX-License-Identifier: MIT */
/*
 * sim_dump.c - a human-readable snapshot of the machine, for debugging a
 * failing test and for `umsi sim`.
 */
#include <stdio.h>

#include <umsi/pci_regs.h>

#include "sim_priv.h"

static uint16_t rd16(const struct sim_dev *d, uint16_t off)
{
	return (uint16_t)(d->cfg[off] | d->cfg[off + 1] << 8);
}

static void dump_vectors(FILE *out, const char *name, const uint64_t *m)
{
	bool any = false;

	fprintf(out, " %s", name);
	for (unsigned int v = 0; v < 256; v++) {
		if (!((m[v / 64] >> (v % 64)) & 1))
			continue;
		fprintf(out, " 0x%02x", v);
		any = true;
	}
	if (!any)
		fprintf(out, " -");
}

static void dump_cpus(struct umsi_sim *sim, FILE *out)
{
	fprintf(out, "cpus %u%s%s%s%s, current %u, locks held %u\n",
		sim->ncpus, sim->threaded ? " threaded" : "",
		sim->plat_flags & UMSI_PLAT_X2APIC ? " x2apic" : "",
		sim->plat_flags & UMSI_PLAT_EXT_DEST_ID ? " ext-dest-id" : "",
		sim->plat_flags & UMSI_PLAT_IRQ_REMAP ? " irq-remap" : "",
		sim_current_cpu_locked(sim), sim->locks_held);
	for (uint32_t i = 0; i < sim->ncpus; i++) {
		const struct sim_cpu *c = &sim->cpus[i];

		fprintf(out, "  cpu %u apic %u %s irq-off %d", i, c->apic_id,
			c->online ? "online" : "offline", c->irq_off);
		dump_vectors(out, "irr", c->irr);
		dump_vectors(out, "isr", c->isr);
		fputc('\n', out);
	}
}

static void dump_dev(const struct sim_dev *d, FILE *out)
{
	umsi_bdf_t b = d->bdf;

	fprintf(out, "  %04x:%02x:%02x.%x %04x:%04x %s cmd 0x%04x status "
		"0x%04x intx %s%s\n", UMSI_BDF_SEG(b), UMSI_BDF_BUS(b),
		UMSI_BDF_DEV(b), UMSI_BDF_FN(b), d->desc.vendor,
		d->desc.device, d->present ? "present" : "removed",
		rd16(d, UMSI_PCI_COMMAND), rd16(d, UMSI_PCI_STATUS),
		d->intx_level ? "asserted" : "idle",
		d->intx_out ? " (driving pin)" : "");
	if (d->msi_off)
		fprintf(out, "    msi @0x%02x ctrl 0x%04x\n", d->msi_off,
			rd16(d, d->msi_off + UMSI_MSI_FLAGS));
	if (d->msix_off) {
		fprintf(out, "    msix @0x%02x ctrl 0x%04x, %u entries; "
			"unmasked/pending:", d->msix_off,
			rd16(d, d->msix_off + UMSI_MSIX_FLAGS), d->msix_n);
		for (unsigned int k = 0; k < d->msix_n; k++) {
			bool masked = d->msix_tbl[k * 4 + 3] & 1;
			bool pend = (d->pba[k / 64] >> (k % 64)) & 1;

			if (!masked || pend)
				fprintf(out, " %u%s%s", k, masked ? "" : "u",
					pend ? "p" : "");
		}
		fputc('\n', out);
	}
}

void umsi_sim_dump(struct umsi_sim *sim, FILE *out)
{
	const struct umsi_sim_stats *s = &sim->st;

	sim_lock(sim);
	dump_cpus(sim, out);
	fprintf(out, "functions %zu\n", sim->ndevs);
	for (size_t i = 0; i < sim->ndevs; i++)
		dump_dev(sim->devs[i], out);
	sim_models_dump(sim, out);
	fprintf(out, "host calls %llu, msgs %llu, delivered %llu, dispatched "
		"%llu, unassigned %llu, undeliverable %llu (stray %llu), "
		"bme-blocked %llu, irr-coalesced %llu\n",
		(unsigned long long)s->host_calls,
		(unsigned long long)s->msgs,
		(unsigned long long)s->delivered,
		(unsigned long long)s->dispatched,
		(unsigned long long)s->unassigned,
		(unsigned long long)s->undeliverable,
		(unsigned long long)s->stray_dma,
		(unsigned long long)s->bme_blocked,
		(unsigned long long)s->irr_coalesced);
	fprintf(out, "leaks: allocs %llu (%llu bytes), maps %llu, locks %llu "
		"(%llu held)\n", (unsigned long long)sim->lk.allocs,
		(unsigned long long)sim->lk.alloc_bytes,
		(unsigned long long)sim->lk.maps,
		(unsigned long long)sim->lk.locks,
		(unsigned long long)sim->lk.locks_held);
	sim_unlock(sim);
}
