/* SPDX-License-Identifier: MIT */
/*
 * `umsi inspect --svg FILE`: the vectors of every CPU as a heat map
 * (heatmap.c draws it). What each cell is comes from what the report
 * holds, and the picture says what it could not know:
 *
 *   rows     live: the CPUs (/proc/interrupts, else /proc/cpuinfo),
 *            grouped by package (sysfs topology/physical_package_id);
 *            a dump: the APIC IDs its messages name (it lists no CPU)
 *   devices  each enabled MSI message block and unmasked MSI-X entry at
 *            the CPU and vector it sends to: a physical destination
 *            through /proc/cpuinfo's APIC IDs, a logical one through the
 *            machine's logical model (inspect_logical_cpus()); a
 *            remapped message, or an entry of a table that could not be
 *            read, where debugfs names its IRQ's vector and CPU
 *   the rest /sys/kernel/debug/irq/domains/VECTOR: system vectors,
 *            vectors in use by IRQs that are no PCI function's, free
 *            ones. Without it only vectors 0-31 (the exceptions, SDM
 *            6.2) are known; the others are "not known".
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <umsi/pci_regs.h>

#include "heatmap.h"
#include "inspect.h"

/* Vectors 0-31 are the processor's exceptions (SDM Vol. 3A, 6.2). */
#define SVG_FIRST_EXTERNAL 0x20u

/* A row: the CPU (or APIC ID) it stands for, and its group. */
struct svg_row {
	unsigned id;
	int pkg;
	uint32_t row;
};

struct svg {
	const struct inspect_report *rep;
	struct heatmap hm;
	struct svg_row *rows;   /* sorted by id, for lookups */
	uint32_t nrows;
	bool by_apic;           /* rows are APIC IDs (a dump) */
	struct inspect_logical lm;
	uint64_t *per_dev;      /* vectors placed, by device */
	uint32_t *dev_of_cell;  /* device + 1 holding the cell, 0 none */
	/* What is not in the picture, and why. */
	size_t no_cpu, remapped, logical, unread, placed;
	size_t with_vectors;    /* functions with a vector in the picture */
};

static int svg_cmp_row_id(const void *a, const void *b)
{
	const struct svg_row *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static int svg_cmp_row_pkg(const void *a, const void *b)
{
	const struct svg_row *x = a, *y = b;

	/* Unknown packages last. */
	if (x->pkg != y->pkg) {
		if (x->pkg < 0 || y->pkg < 0)
			return x->pkg < 0 ? 1 : -1;
		return x->pkg < y->pkg ? -1 : 1;
	}
	return x->id < y->id ? -1 : x->id > y->id;
}

/* The row of CPU (or APIC ID) @id, or -1. */
static long svg_row_of(const struct svg *s, unsigned id)
{
	size_t lo = 0, hi = s->nrows;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->rows[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < s->nrows && s->rows[lo].id == id ? (long)s->rows[lo].row : -1;
}

/* Fixed and lowest-priority messages carry a vector; 0-15 are illegal. */
static bool svg_has_vector(const struct umsi_x86_msi *m)
{
	return m->valid && !m->remapped && m->vector >= 16 &&
	       (m->delivery == UMSI_X86_DM_FIXED ||
		m->delivery == UMSI_X86_DM_LOWPRI);
}

/* The APIC IDs physical messages name, for a dump's rows. */
static int svg_apic_rows(struct svg *s)
{
	const struct inspect_report *rep = s->rep;
	size_t cap = 0;

	for (size_t k = 0; k < rep->ndevs; k++) {
		const struct inspect_dev *d = &rep->devs[k];
		const struct umsi_x86_msi *m = &d->msi_msg;

		if (!(d->has_msi && d->msi.enabled && svg_has_vector(m) &&
		      !m->logical))
			continue;
		if (s->nrows == cap) {
			size_t ncap = cap ? cap * 2 : 64;
			struct svg_row *nr = realloc(s->rows, ncap * sizeof(*nr));

			if (!nr)
				return -1;
			s->rows = nr;
			cap = ncap;
		}
		s->rows[s->nrows++] = (struct svg_row){ m->dest_id, -1, 0 };
	}
	if (s->nrows)
		qsort(s->rows, s->nrows, sizeof(*s->rows), svg_cmp_row_id);
	/* Each APIC ID once. */
	{
		uint32_t k = 0;

		for (uint32_t i = 0; i < s->nrows; i++)
			if (!k || s->rows[i].id != s->rows[k - 1].id)
				s->rows[k++] = s->rows[i];
		s->nrows = k;
	}
	s->by_apic = true;
	return 0;
}

/*
 * The rows: live, the CPUs and their packages; a dump, the APIC IDs its
 * messages name. Sorted by package for drawing, then by id for lookups.
 */
static int svg_rows(struct svg *s)
{
	const struct inspect_report *rep = s->rep;

	if (rep->ntopo) {
		s->rows = calloc(rep->ntopo, sizeof(*s->rows));
		if (!s->rows)
			return -1;
		for (size_t i = 0; i < rep->ntopo; i++)
			s->rows[i] = (struct svg_row){ rep->topo_cpus[i],
						      rep->topo_pkg[i], 0 };
		s->nrows = (uint32_t)rep->ntopo;
	} else if (svg_apic_rows(s)) {
		return -1;
	}
	if (!s->nrows)
		return 0;
	qsort(s->rows, s->nrows, sizeof(*s->rows), svg_cmp_row_pkg);
	for (uint32_t i = 0; i < s->nrows; i++)
		s->rows[i].row = i;
	if (heatmap_init(&s->hm, s->nrows, INSPECT_NVEC))
		return -1;
	for (uint32_t i = 0; i < s->nrows; i++) {
		s->hm.row_id[i] = s->rows[i].id;
		s->hm.row_group[i] = s->rows[i].pkg;
	}
	qsort(s->rows, s->nrows, sizeof(*s->rows), svg_cmp_row_id);
	s->hm.row_word = s->by_apic ? "APIC ID" : "CPU";
	s->hm.group_word = "package";
	snprintf(s->hm.class_name[HM_RESERVED], HM_NAME_LEN, "%s",
		 s->rep->vectors ? "reserved (exceptions, Linux's system vectors)" :
		 "exceptions (0x00-0x1f)");
	return 0;
}

/* What every vector is before the devices: the vector matrix, if read. */
static void svg_base(struct svg *s)
{
	const struct inspect_vector_domain *vd = s->rep->vectors;

	for (uint32_t r = 0; r < s->nrows; r++) {
		const struct inspect_vector_cpu *c = NULL;

		if (vd && !s->by_apic)
			c = inspect_vector_domain_cpu(vd, s->hm.row_id[r]);
		for (uint32_t v = 0; v < INSPECT_NVEC; v++) {
			uint8_t k = HM_UNKNOWN;

			if (v < SVG_FIRST_EXTERNAL ||
			    (vd && vd->system[v / 64] >> (v % 64) & 1))
				k = HM_RESERVED;
			else if (c)
				k = c->alloc[v / 64] >> (v % 64) & 1 ? HM_OTHER_IRQ
								     : HM_FREE;
			*heatmap_cell(&s->hm, r, v) = k;
		}
	}
}

/* Vector @vec of @cpu (a row id) is device @dev's. */
static void svg_put(struct svg *s, size_t dev, unsigned id, unsigned vec)
{
	long row = svg_row_of(s, id);

	if (row < 0 || vec >= INSPECT_NVEC) {
		s->no_cpu++;
		return;
	}
	s->dev_of_cell[(size_t)row * INSPECT_NVEC + vec] = (uint32_t)dev + 1;
	s->per_dev[dev]++;
	s->placed++;
}

/* A decoded message's @n vectors from @vec, wherever it sends them. */
static void svg_message(struct svg *s, size_t dev,
			const struct umsi_x86_msi *m, unsigned vec, unsigned n)
{
	unsigned cpus[16];
	uint32_t stray;
	int k;

	if (!m->logical) {
		long cpu = s->by_apic ? (long)m->dest_id :
			   inspect_cpu_of_apic(s->rep, m->dest_id);

		for (unsigned i = 0; i < n; i++) {
			if (cpu < 0)
				s->no_cpu++;
			else
				svg_put(s, dev, (unsigned)cpu, vec + i);
		}
		return;
	}
	k = s->by_apic ? -1 : inspect_logical_cpus(s->rep, &s->lm, m->dest_id,
						   cpus, 16, &stray);
	if (k < 0) {
		s->logical += n;
		return;
	}
	if (!k)
		s->no_cpu += n;
	for (int c = 0; c < k && c < 16; c++)
		for (unsigned i = 0; i < n; i++)
			svg_put(s, dev, cpus[c], vec + i);
}

/* Linux's own view of an IRQ (debugfs): its vector on its CPU. */
static bool svg_debugfs(struct svg *s, size_t dev, const struct inspect_irq *q)
{
	if (!q || q->cpu_vector < 0 || q->target_cpu < 0 || s->by_apic)
		return false;
	svg_put(s, dev, (unsigned)q->target_cpu, (unsigned)q->cpu_vector);
	return true;
}

static void svg_msi(struct svg *s, size_t dev, const struct inspect_dev *d)
{
	unsigned n = d->msi_count_enabled > UMSI_MSI_MAX_VECTORS ?
		     UMSI_MSI_MAX_VECTORS : d->msi_count_enabled;

	if (!d->has_msi || !d->msi.enabled)
		return;
	if (svg_has_vector(&d->msi_msg)) {
		/* The function sets the low data bits itself. */
		svg_message(s, dev, &d->msi_msg, d->msi_msg.vector & ~(n - 1), n);
		return;
	}
	if (!d->msi_msg.valid || !d->msi_msg.remapped)
		return;
	for (size_t i = 0; i < d->n_msi_irqs; i++)
		if (!svg_debugfs(s, dev, &d->msi_irqs[i]))
			s->remapped++;
	if (!d->n_msi_irqs)
		s->remapped++;
}

static void svg_msix(struct svg *s, size_t dev, const struct inspect_dev *d)
{
	if (!d->has_msix || !d->msix.enabled)
		return;
	if (!d->entries) {
		/* A table not read: Linux's view of each IRQ, if any. */
		for (size_t i = 0; i < d->n_msix_irqs; i++)
			if (!svg_debugfs(s, dev, &d->msix_irqs[i]))
				s->unread++;
		return;
	}
	for (uint32_t i = 0; i < d->msix.table_size; i++) {
		const struct inspect_msix_entry *e = &d->entries[i];

		if (e->ctrl & UMSI_MSIX_CTRL_MASKBIT)
			continue;
		if (svg_has_vector(&e->msg))
			svg_message(s, dev, &e->msg, e->msg.vector, 1);
		else if (e->msg.valid && e->msg.remapped &&
			 !svg_debugfs(s, dev, e->irq))
			s->remapped++;
	}
}

/* The legend's words for a function: address and driver (or IDs). */
static void svg_dev_name(const struct inspect_dev *d, char *out, size_t n)
{
	char bdf[16];

	inspect_bdf_str(d->bdf, bdf);
	if (d->driver[0])
		snprintf(out, n, "%s %s", bdf, d->driver);
	else
		snprintf(out, n, "%s [%04x:%04x]", bdf, d->vendor, d->device);
}

static int svg_devices(struct svg *s)
{
	const struct inspect_report *rep = s->rep;
	uint8_t *class_of = calloc(rep->ndevs ? rep->ndevs : 1, 1);

	s->per_dev = calloc(rep->ndevs ? rep->ndevs : 1, sizeof(*s->per_dev));
	s->dev_of_cell = calloc((size_t)s->nrows * INSPECT_NVEC,
				sizeof(*s->dev_of_cell));
	if (!class_of || !s->per_dev || !s->dev_of_cell) {
		free(class_of);
		return -1;
	}
	for (size_t k = 0; k < rep->ndevs; k++) {
		svg_msi(s, k, &rep->devs[k]);
		svg_msix(s, k, &rep->devs[k]);
	}
	heatmap_rank(s->per_dev, rep->ndevs, class_of);
	for (size_t k = 0; k < rep->ndevs; k++)
		s->with_vectors += s->per_dev[k] != 0;
	for (size_t k = 0; k < rep->ndevs; k++)
		if (class_of[k] >= HM_DEV0)
			svg_dev_name(&rep->devs[k], s->hm.class_name[class_of[k]],
				     HM_NAME_LEN);
	for (size_t c = 0; c < (size_t)s->nrows * INSPECT_NVEC; c++)
		if (s->dev_of_cell[c])
			s->hm.cells[c] = class_of[s->dev_of_cell[c] - 1];
	free(class_of);
	return 0;
}

static void svg_titles(struct svg *s)
{
	const struct inspect_report *rep = s->rep;
	uint64_t used = 0, freev = 0;
	char pk[48] = "";
	int last = -2;
	unsigned pkgs = 0;

	for (size_t c = 0; c < (size_t)s->nrows * INSPECT_NVEC; c++) {
		used += s->hm.cells[c] >= HM_OTHER_IRQ &&
			s->hm.cells[c] != HM_UNKNOWN;
		freev += s->hm.cells[c] == HM_FREE;
	}
	for (uint32_t r = 0; r < s->nrows; r++) {
		if (s->hm.row_group[r] >= 0 && s->hm.row_group[r] != last)
			pkgs++;
		last = s->hm.row_group[r];
	}
	if (pkgs)
		snprintf(pk, sizeof(pk), " in %u package%s", pkgs,
			 pkgs == 1 ? "" : "s");
	if (s->by_apic) {
		snprintf(s->hm.title, sizeof(s->hm.title),
			 "umsi inspect %.200s: vectors per APIC ID", rep->source);
		snprintf(s->hm.subtitle, sizeof(s->hm.subtitle),
			 "%u APIC IDs named by MSI messages (%s); %llu vectors of %zu functions",
			 s->nrows, rep->live ? "no CPU list: /proc/interrupts and /proc/cpuinfo were not read" :
			 "a dump lists no CPUs", (unsigned long long)used, rep->ndevs);
		return;
	}
	snprintf(s->hm.title, sizeof(s->hm.title),
		 "umsi inspect: vectors per CPU of %s",
		 rep->hostname[0] ? rep->hostname : "this machine");
	if (rep->vectors)
		snprintf(s->hm.subtitle, sizeof(s->hm.subtitle),
			 "%u CPUs%s; %llu vectors in use (PCI functions and other IRQs), %llu free",
			 s->nrows, pk, (unsigned long long)used,
			 (unsigned long long)freev);
	else
		snprintf(s->hm.subtitle, sizeof(s->hm.subtitle),
			 "%u CPUs%s; %llu vectors in use by PCI functions; which others are free is not known",
			 s->nrows, pk, (unsigned long long)used);
}

static void svg_notes(struct svg *s)
{
	const struct inspect_report *rep = s->rep;

	if (!rep->vectors && !s->by_apic)
		heatmap_note(&s->hm, "Vectors that no PCI MSI or MSI-X message names are not known: free, system vectors, or other IRQs' (IO-APIC, timers, IPIs). /sys/kernel/debug/irq/domains/VECTOR shows them (root, debugfs mounted, CONFIG_GENERIC_IRQ_DEBUGFS).");
	if (s->by_apic && !rep->live)
		heatmap_note(&s->hm, "A dump has configuration space only: MSI messages, not MSI-X tables (in BAR memory), and no CPUs: a row is an APIC ID an MSI message names.");
	if (s->unread)
		heatmap_note(&s->hm, "%zu IRQs of MSI-X tables that could not be read are not in the picture (no debugfs vector and target for them).", s->unread);
	if (s->remapped)
		heatmap_note(&s->hm, "%zu remapped messages are not in the picture: their CPU and vector are in the IOMMU's table, and debugfs did not name them.", s->remapped);
	if (s->logical)
		heatmap_note(&s->hm, "%zu vectors in logical destination mode are not in the picture: %s", s->logical, s->lm.how);
	if (s->no_cpu)
		heatmap_note(&s->hm, "%zu vectors go to no CPU of this machine (an APIC ID no CPU has) and are not in the picture.", s->no_cpu);
	if (s->with_vectors > HM_MAX_DEVS)
		heatmap_note(&s->hm, "The %u functions with the most vectors have a colour each; the other %zu share one.",
			     HM_MAX_DEVS, s->with_vectors - HM_MAX_DEVS);
}

int inspect_write_svg(FILE *f, const struct inspect_report *rep)
{
	struct svg s = { .rep = rep };
	int ret = -1;

	if (rep->live)
		inspect_logical_model(rep, &s.lm);
	if (svg_rows(&s))
		goto nomem;
	if (!s.nrows) {
		errno = ENODATA;
		goto out;
	}
	svg_base(&s);
	if (svg_devices(&s))
		goto nomem;
	svg_titles(&s);
	svg_notes(&s);
	ret = heatmap_write(f, &s.hm);
	goto out;
nomem:
	errno = ENOMEM;
out:
	heatmap_free(&s.hm);
	free(s.rows);
	free(s.per_dev);
	free(s.dev_of_cell);
	return ret;
}
