/* SPDX-License-Identifier: MIT */
/*
 * `umsi inspect` human output: the capability lines read like `lspci -vv`
 * (same wording, so the two can be compared by eye), followed by what
 * lspci never shows: every message decoded for the x86 local APIC, the
 * MSI-X table, and Linux's IRQ of each vector with its per-CPU counts.
 */
#include <stdlib.h>
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

/* ", CPU 1" after a logical destination, when the model says which. */
static void logical_cpus(FILE *f, const struct inspect_report *rep,
			 const struct umsi_x86_msi *m)
{
	struct inspect_logical lm;
	unsigned cpus[16];
	uint32_t stray;
	int n;

	if (!rep->live || !m->logical)
		return;
	inspect_logical_model(rep, &lm);
	n = inspect_logical_cpus(rep, &lm, m->dest_id, cpus, 16, &stray);
	if (n < 0) {
		fputs(" (CPU not known)", f);
		return;
	}
	fputs(n ? " (CPU" : " (no CPU", f);
	for (int i = 0; i < n && i < 16; i++)
		fprintf(f, "%s%u", i ? "," : " ", cpus[i]);
	fputc(')', f);
}

static void msg_line(FILE *f, const struct inspect_report *rep,
		     const struct umsi_x86_msi *m, uint64_t addr, unsigned nvec)
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
	fprintf(f, "dest %s 0x%x", m->logical ? "logical" : "physical",
		m->dest_id);
	logical_cpus(f, rep, m);
	fprintf(f, ", RH%c, %s, %s, ", flag(m->redir_hint),
		inspect_delivery_name(m->delivery), m->level ? "level" : "edge");
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
	msg_line(f, rep, &d->msi_msg, m->address, d->msi_count_enabled);
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

/*
 * The errors tied to functions, sorted by (address, header line, position
 * in the error list), so that each function finds its own by binary
 * search: the report stays O((functions + errors) log errors) where a
 * scan of the whole list for every function made a 65536-function dump
 * with an error each take minutes (issue: text report quadratic).
 */
struct err_key {
	const char *bdf;        /* the error's address, as in inspect_err */
	unsigned line;
	size_t idx;             /* in rep->errs */
};

static int cmp_err_key(const void *a, const void *b)
{
	const struct err_key *x = a, *y = b;
	int c = strcmp(x->bdf, y->bdf);

	if (c)
		return c;
	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

struct err_index {
	struct err_key *keys;   /* errors with an address, sorted */
	size_t n;
	bool *listed;           /* per error: shown under a function */
};

/* Out of memory, @ix stays empty: no error is found under a function. */
static void err_index_build(struct err_index *ix,
			   const struct inspect_report *rep)
{
	memset(ix, 0, sizeof(*ix));
	if (!rep->nerrs)
		return;
	ix->keys = malloc(rep->nerrs * sizeof(*ix->keys));
	ix->listed = calloc(rep->nerrs, sizeof(*ix->listed));
	if (!ix->keys || !ix->listed) {
		free(ix->keys);
		free(ix->listed);
		memset(ix, 0, sizeof(*ix));
		return;
	}
	for (size_t i = 0; i < rep->nerrs; i++) {
		const struct inspect_err *e = &rep->errs[i];

		/* An error about the input as a whole is no function's. */
		if (e->bdf[0])
			ix->keys[ix->n++] = (struct err_key){ e->bdf, e->line, i };
	}
	if (ix->n)
		qsort(ix->keys, ix->n, sizeof(*ix->keys), cmp_err_key);
}

static void err_index_free(struct err_index *ix)
{
	free(ix->keys);
	free(ix->listed);
}

/*
 * The run of @ix's keys that inspect_err_is_for() matches with @d (@bdf is
 * its address as a string): [*@first, return value).
 */
static size_t err_range(const struct err_index *ix, const char *bdf,
			const struct inspect_dev *d, size_t *first)
{
	struct err_key k = { bdf, d->line, 0 };
	size_t lo = 0, hi = ix->n;

	/* The first key not below (bdf, line, 0): idx 0 sorts first. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cmp_err_key(&ix->keys[mid], &k) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*first = lo;
	while (hi < ix->n && ix->keys[hi].line == d->line &&
	       !strcmp(ix->keys[hi].bdf, bdf))
		hi++;
	return hi;
}

void inspect_write_text(FILE *f, const struct inspect_report *rep, bool verbose)
{
	struct err_index ix;
	char bdf[16];
	size_t quiet = 0;

	/*
	 * Without memory for the index every error is listed after the
	 * functions, with its address: all said, if not in its place.
	 */
	err_index_build(&ix, rep);
	for (size_t i = 0; i < rep->nnotes; i++)
		fprintf(f, "note: %s\n", rep->notes[i]);
	if (rep->nnotes)
		fputc('\n', f);
	for (size_t i = 0; i < rep->ndevs; i++) {
		const struct inspect_dev *d = &rep->devs[i];
		size_t first, end;

		inspect_bdf_str(d->bdf, bdf);
		end = err_range(&ix, bdf, d, &first);
		if (!d->has_msi && !d->has_msix && first == end && !verbose) {
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
		for (size_t k = first; k < end; k++) {
			fprintf(f, "\t!! %s\n", rep->errs[ix.keys[k].idx].message);
			ix.listed[ix.keys[k].idx] = true;
		}
		fputc('\n', f);
	}
	/* Problems with functions that could not be decoded at all. */
	for (size_t i = 0; i < rep->nerrs; i++) {
		const struct inspect_err *e = &rep->errs[i];

		if (!ix.listed || !ix.listed[i])
			fprintf(f, "%s%s%s\n", e->bdf, e->bdf[0] ? ": " : "",
				e->message);
	}
	if (quiet)
		fprintf(f, "%zu function%s without MSI or MSI-X not shown (-v shows them)\n",
			quiet, quiet == 1 ? "" : "s");
	err_index_free(&ix);
}
