/* SPDX-License-Identifier: MIT */
/*
 * `umsi inspect` human output: the capability lines read like `lspci -vv`
 * (same wording, so the two can be compared by eye), followed by what
 * lspci never shows: every message decoded for the x86 local APIC, the
 * MSI-X table, and Linux's IRQ of each vector with its per-CPU counts.
 */
#include <string.h>

#include "inspect.h"

static char flag(bool b)
{
	return b ? '+' : '-';
}

/* Delivery mode in at most 6 characters, for the table's column. */
static const char *dm_short(uint8_t dm)
{
	return dm == UMSI_X86_DM_LOWPRI ? "lowpri" : inspect_delivery_name(dm);
}

static void msg_line(FILE *f, const struct umsi_x86_msi *m, uint64_t addr,
		     unsigned nvec)
{
	if (!addr) {
		fputs("not programmed (address 0)\n", f);
		return;
	}
	if (!m->valid) {
		fputs("not an x86 interrupt message (address outside 0xfee00000-0xfeefffff)\n", f);
		return;
	}
	if (m->remapped) {
		fprintf(f, "remappable format: IR handle %u, SHV%c, subhandle %u\n",
			m->handle, flag(m->shv), m->subhandle);
		return;
	}
	fprintf(f, "dest %s 0x%x, RH%c, %s, %s, ",
		m->logical ? "logical" : "physical", m->dest_id,
		flag(m->redir_hint), inspect_delivery_name(m->delivery),
		m->level ? "level" : "edge");
	/* With Multiple Message Enable the device sets the low data bits. */
	if (nvec > 1)
		fprintf(f, "vectors 0x%02x-0x%02x (%u)", m->vector & ~(nvec - 1),
			(m->vector & ~(nvec - 1)) + nvec - 1, nvec);
	else
		fprintf(f, "vector 0x%02x", m->vector);
	fputc('\n', f);
}

/* Per-CPU counts as "0/12/3", padded to @width. */
static void counts(FILE *f, const struct inspect_report *rep,
		   const struct inspect_irq *q, int width)
{
	int n = 0;

	if (!q->counts)
		n = fprintf(f, "-");
	for (unsigned c = 0; q->counts && c < rep->ncpus; c++)
		n += fprintf(f, "%s%llu", c ? "/" : "",
			     (unsigned long long)q->counts[c]);
	if (n < width)
		fprintf(f, "%*s", width - n, "");
}

static void irq_table(FILE *f, const struct inspect_report *rep,
		      const struct inspect_irq *q, size_t n)
{
	if (!n) {
		fputs("\t\tLinux: no IRQ allocated for it (no msi_irqs entry of this kind)\n", f);
		return;
	}
	fputs("\t\tLinux IRQs (per-CPU counts CPU0/CPU1/..; vector and target CPU from debugfs):\n", f);
	fputs("\t\t  entry    irq  affinity  vector  cpu  counts              chip / handlers\n", f);
	for (size_t i = 0; i < n; i++) {
		char idx[12] = "?", vec[8] = "-", cpu[12] = "-";

		if (q[i].index_known)
			snprintf(idx, sizeof(idx), "%u", q[i].index);
		if (q[i].cpu_vector >= 0)
			snprintf(vec, sizeof(vec), "0x%02x", q[i].cpu_vector & 0xff);
		if (q[i].target_cpu >= 0)
			snprintf(cpu, sizeof(cpu), "%d", q[i].target_cpu);
		fprintf(f, "\t\t  %5s  %5d  %-8s  %-6s  %3s  ", idx, q[i].irq,
			q[i].affinity[0] ? q[i].affinity : "?", vec, cpu);
		counts(f, rep, &q[i], 18);
		fprintf(f, "  %s %s\n", q[i].chip, q[i].actions);
	}
}

static void msi(FILE *f, const struct inspect_report *rep,
		const struct inspect_dev *d)
{
	const struct umsi_msi_cap *m = &d->msi;

	fprintf(f, "\tCapabilities: [%02x] MSI: Enable%c Count=%u/%u Maskable%c 64bit%c\n",
		m->off, flag(m->enabled), d->msi_count_enabled,
		d->msi_count_cap, flag(m->maskable), flag(m->addr64));
	if (m->addr64)
		fprintf(f, "\t\tAddress: %016llx  Data: %04x\n",
			(unsigned long long)m->address, m->data);
	else
		fprintf(f, "\t\tAddress: %08llx  Data: %04x\n",
			(unsigned long long)m->address, m->data);
	if (m->maskable)
		fprintf(f, "\t\tMasking: %08x  Pending: %08x\n", m->mask,
			m->pending);
	fputs("\t\tMessage: ", f);
	msg_line(f, &d->msi_msg, m->address, d->msi_count_enabled);
	if (d->linux_known)
		irq_table(f, rep, d->msi_irqs, d->n_msi_irqs);
}

static void entry(FILE *f, const struct inspect_report *rep,
		  const struct inspect_msix_entry *e)
{
	const struct umsi_x86_msi *m = &e->msg;

	fprintf(f, "\t\t  %5u  %016llx  %08x  %c%c  ", e->index,
		(unsigned long long)e->address, e->data,
		flag(e->ctrl & 1), flag(e->pending));
	if (!m->valid)
		fprintf(f, "%-43s", "(not an x86 interrupt message)");
	else if (m->remapped)
		fprintf(f, "IR handle %-5u SHV%c subhandle %-5u           ",
			m->handle, flag(m->shv), m->subhandle);
	else
		fprintf(f, "0x%-4x %-4s %c   %-6s %-5s  0x%02x  ", m->dest_id,
			m->logical ? "log" : "phys", flag(m->redir_hint),
			dm_short(m->delivery),
			m->level ? "level" : "edge", m->vector);
	if (e->irq) {
		fprintf(f, "%5d %-8s ", e->irq->irq,
			e->irq->affinity[0] ? e->irq->affinity : "?");
		counts(f, rep, e->irq, 0);
	}
	fputc('\n', f);
}

static void msix(FILE *f, const struct inspect_report *rep,
		 const struct inspect_dev *d)
{
	const struct umsi_msix_cap *x = &d->msix;

	fprintf(f, "\tCapabilities: [%02x] MSI-X: Enable%c Count=%u Masked%c\n",
		x->off, flag(x->enabled), x->table_size, flag(x->function_mask));
	fprintf(f, "\t\tVector table: BAR=%u offset=%08x\n", x->table_bir,
		x->table_offset);
	fprintf(f, "\t\tPBA: BAR=%u offset=%08x\n", x->pba_bir, x->pba_offset);
	if (!d->entries) {
		fprintf(f, "\t\tTable: not read: %s\n", d->entries_reason);
		if (d->linux_known)
			irq_table(f, rep, d->msix_irqs, d->n_msix_irqs);
		return;
	}
	fputs("\t\tTable (M masked, P pending; dest/mode/RH/delivery/trigger/vector for the x86 LAPIC):\n", f);
	fputs("\t\t  entry  address           data      MP  dest   mode RH  deliv  trig   vector", f);
	fputs(d->linux_known ? "   irq affinity counts\n" : "\n", f);
	for (uint32_t i = 0; i < x->table_size; i++)
		entry(f, rep, &d->entries[i]);
}

static void errors_for(FILE *f, const struct inspect_report *rep,
		       const struct inspect_dev *d)
{
	for (size_t i = 0; i < rep->nerrs; i++)
		if (inspect_err_is_for(&rep->errs[i], d))
			fprintf(f, "\t!! %s\n", rep->errs[i].message);
}

void inspect_write_text(FILE *f, const struct inspect_report *rep, bool verbose)
{
	char bdf[16];
	size_t quiet = 0;

	for (size_t i = 0; i < rep->nnotes; i++)
		fprintf(f, "note: %s\n", rep->notes[i]);
	if (rep->nnotes)
		fputc('\n', f);
	for (size_t i = 0; i < rep->ndevs; i++) {
		const struct inspect_dev *d = &rep->devs[i];
		bool has_err = false;

		inspect_bdf_str(d->bdf, bdf);
		for (size_t j = 0; j < rep->nerrs; j++)
			has_err |= inspect_err_is_for(&rep->errs[j], d);
		if (!d->has_msi && !d->has_msix && !has_err && !verbose) {
			quiet++;
			continue;
		}
		fprintf(f, "%s [%04x:%04x] (%u bytes of config space)\n", bdf,
			d->vendor, d->device, d->cfg_size);
		if (d->has_msi)
			msi(f, rep, d);
		if (d->has_msix)
			msix(f, rep, d);
		if (!d->has_msi && !d->has_msix && !d->cfg_short)
			fputs("\tno MSI or MSI-X capability\n", f);
		errors_for(f, rep, d);
		fputc('\n', f);
	}
	/* Problems with functions that could not be decoded at all. */
	for (size_t i = 0; i < rep->nerrs; i++) {
		const struct inspect_err *e = &rep->errs[i];
		bool listed = false;

		for (size_t j = 0; j < rep->ndevs && !listed; j++)
			listed = inspect_err_is_for(e, &rep->devs[j]);
		if (!listed)
			fprintf(f, "%s%s%s\n", e->bdf, e->bdf[0] ? ": " : "",
				e->message);
	}
	if (quiet)
		fprintf(f, "%zu function%s without MSI or MSI-X not shown (-v shows them)\n",
			quiet, quiet == 1 ? "" : "s");
}
