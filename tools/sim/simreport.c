/* SPDX-License-Identifier: MIT */
/*
 * What `umsi sim` prints about a machine it ran (docs/sim-format.md).
 *
 * The summary fits a screen or two whatever the machine: instances of a
 * device line that fared alike share a row, the spread over CPUs is
 * min/median/max, a histogram and the ends of the distribution, and
 * every grouped table stops after SIM_REPORT_ROWS rows, saying how many
 * it left out. --proc prints the full detail (a row per device, per IRQ
 * and per CPU) and --json all of it in one object.
 *
 * Every figure is read back from the library after the run
 * (umsi_irq_get_info, umsi_matrix_cpu_stats), not from what the tool
 * asked for.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <umsi/msg.h>
#include <umsi/x86.h>

#include "simreport.h"
#include "../inspect/heatmap.h"

/* Cells (IRQs x CPUs) up to which --proc prints /proc/interrupts columns. */
#define SIM_PROC_CELLS (1u << 22)
/* IRQs up to which the summary shows the small tables in full. */
#define SIM_SMALL_IRQS 64u
#define SIM_SMALL_CPUS 8u
#define SIM_HIST_BARS  10u
#define SIM_ENDS       5u       /* busiest and emptiest CPUs shown */
#define SIM_LIST_LEN   64u      /* characters of a CPU list on one line */

static unsigned sim_granted(const struct sim_inst *in)
{
	return in->granted > 0 ? (unsigned)in->granted : 0;
}

static bool sim_short(const struct sim_inst *in)
{
	return in->granted < (int)in->ds->want;
}

/* ---- CPU lists ------------------------------------------------------------ */

static bool bit_get(const uint64_t *b, uint32_t i)
{
	return (b[i / 64] >> (i % 64)) & 1;
}

/*
 * The set bits of @bits (@n of them may be set) as "0-3,6,9-12", cut
 * after about SIM_LIST_LEN characters with " ... (+K)" naming how many
 * CPUs it left out.
 */
static void sim_cpu_list(const uint64_t *bits, uint32_t n, char *out,
			 size_t outlen)
{
	size_t o = 0;
	uint32_t shown = 0, total = 0;

	out[0] = '\0';
	for (uint32_t i = 0; i < n; i++)
		total += bit_get(bits, i);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t j = i;
		int w;

		if (!bit_get(bits, i))
			continue;
		while (j + 1 < n && bit_get(bits, j + 1))
			j++;
		if (o > SIM_LIST_LEN) {
			snprintf(out + o, outlen - o, " ... (+%u)",
				 total - shown);
			return;
		}
		w = j > i ? snprintf(out + o, outlen - o, "%s%u-%u",
				     o ? "," : "", i, j)
			  : snprintf(out + o, outlen - o, "%s%u", o ? "," : "",
				     i);
		if (w < 0 || (size_t)w >= outlen - o)
			return;
		o += (size_t)w;
		shown += j - i + 1;
		i = j;
	}
}

/* The APIC IDs of the machine, in the same style (sorted, de-duplicated). */
static void sim_apic_list(const struct sim_spec *sp, char *out, size_t outlen)
{
	bool dense = true;

	for (uint32_t i = 0; i < sp->ncpus && dense; i++)
		dense = sp->apic_ids[i] == i;
	if (dense) {
		if (sp->ncpus == 1)
			snprintf(out, outlen, "0");
		else
			snprintf(out, outlen, "0-%u", sp->ncpus - 1);
		return;
	}
	out[0] = '\0';
	for (uint32_t i = 0, o = 0; i < sp->ncpus; i++) {
		int w;

		if (o > SIM_LIST_LEN) {
			snprintf(out + o, outlen - o, " ... (%u IDs)",
				 sp->ncpus);
			return;
		}
		w = snprintf(out + o, outlen - o, "%s%u", i ? "," : "",
			     sp->apic_ids[i]);
		if (w < 0 || (size_t)w >= outlen - o)
			return;
		o += (unsigned)w;
	}
}

/* ---- The spread over CPUs ----------------------------------------------------- */

struct sim_spread {
	uint32_t ncpus;
	uint32_t *used;         /* per CPU: vectors allocated (managed too) */
	bool *reach;            /* per CPU: online, and messages can name it */
	uint32_t reachable;
	uint32_t min, median, max, capacity;
	uint64_t total, reserved; /* vectors in use; managed set aside unused */
	uint32_t hist[257];     /* CPUs with 0..256 vectors in use */
};

static int sim_spread_get(const struct sim_machine *m, struct sim_spread *s)
{
	const struct umsi_matrix *mx = umsi_system_matrix(m->sys);
	const struct sim_spec *sp = m->spec;
	uint32_t seen = 0;

	memset(s, 0, sizeof(*s));
	s->ncpus = sp->ncpus;
	s->used = calloc(sp->ncpus, sizeof(*s->used));
	s->reach = calloc(sp->ncpus, sizeof(*s->reach));
	if (!s->used || !s->reach) {
		free(s->used);
		free(s->reach);
		return -1;
	}
	for (uint32_t i = 0; i < sp->ncpus; i++) {
		struct umsi_matrix_cpu_stats cs = { 0 };

		umsi_matrix_cpu_stats(mx, i, &cs);
		s->used[i] = cs.allocated + cs.managed_allocated;
		/* VT-d in x2APIC mode names any APIC ID, as remapping does. */
		s->reach[i] = cs.online &&
			      (sp->imsic || sp->its || sp->gicv2m ||
			       umsi_x86_dest_reachable(sp->apic_ids[i],
					sp->plat | (sp->vtd && (sp->plat &
					UMSI_PLAT_X2APIC) ? UMSI_PLAT_IRQ_REMAP :
					0)));
		s->total += s->used[i];
		s->reserved += cs.managed - cs.managed_allocated;
		if (cs.capacity > s->capacity)
			s->capacity = cs.capacity;
		if (!s->reach[i])
			continue;
		s->reachable++;
		s->hist[s->used[i] > 256 ? 256 : s->used[i]]++;
	}
	for (uint32_t v = 0, below = 0; v <= 256; v++) {
		if (!s->hist[v])
			continue;
		if (!seen++)
			s->min = v;
		s->max = v;
		/* The lower median: the value of CPU (n - 1) / 2 in order. */
		if (below <= (s->reachable - 1) / 2 &&
		    (s->reachable - 1) / 2 < below + s->hist[v])
			s->median = v;
		below += s->hist[v];
	}
	return 0;
}

static void sim_spread_free(struct sim_spread *s)
{
	free(s->used);
	free(s->reach);
}

/*
 * The @k reachable CPUs with the most (@busiest) or fewest vectors in
 * use, ties to the lowest CPU, into @out. Return: how many.
 */
static unsigned sim_ends(const struct sim_spread *s, bool busiest,
			 uint32_t *out, unsigned k)
{
	unsigned n = 0;

	for (uint32_t i = 0; i < s->ncpus; i++) {
		unsigned at;

		if (!s->reach[i])
			continue;
		for (at = n; at > 0; at--) {
			uint32_t o = s->used[out[at - 1]];

			if (busiest ? s->used[i] <= o : s->used[i] >= o)
				break;
		}
		if (at >= k)
			continue;
		if (n < k)
			n++;
		memmove(&out[at + 1], &out[at], (n - 1 - at) * sizeof(*out));
		out[at] = i;
	}
	return n;
}

static void sim_print_ends(const struct sim_spread *s, bool busiest)
{
	uint32_t cpus[SIM_ENDS];
	unsigned n = sim_ends(s, busiest, cpus, SIM_ENDS);

	printf("  %s CPUs:", busiest ? "busiest " : "emptiest");
	for (unsigned i = 0; i < n; i++)
		printf(" %u (%u)%s", cpus[i], s->used[cpus[i]],
		       i + 1 < n ? "," : "");
	printf("\n");
}

/* The CPUs left out of the figures: no message can name them. */
static void sim_print_unreachable(const struct sim_spread *s)
{
	uint64_t *bits = calloc((s->ncpus + 63) / 64, sizeof(*bits));
	char list[SIM_LIST_LEN + 48];

	if (!bits)
		return;
	for (uint32_t i = 0; i < s->ncpus; i++)
		if (!s->reach[i])
			bits[i / 64] |= 1ull << (i % 64);
	sim_cpu_list(bits, s->ncpus, list, sizeof(list));
	printf("  not counted, no message can name them (APIC IDs above 254 "
	       "need platform ext-dest-id, above 32767 remap), or offline: "
	       "CPU%s %s\n", s->ncpus - s->reachable == 1 ? "" : "s", list);
	free(bits);
}

static void sim_print_spread(const struct sim_machine *m,
			     const struct sim_spread *s)
{
	uint32_t width, most = 0, counts[SIM_HIST_BARS] = { 0 };

	if (!s->reachable) {
		printf("vectors per CPU: no CPU that messages can reach\n");
		return;
	}
	printf("vectors per CPU: min %u, median %u, max %u (up to %u each); "
	       "%llu in use on %u CPUs\n", s->min, s->median, s->max,
	       s->capacity, (unsigned long long)s->total, s->reachable);
	width = (s->max - s->min) / SIM_HIST_BARS + 1;
	for (uint32_t v = s->min; v <= s->max; v++)
		counts[(v - s->min) / width] += s->hist[v];
	for (unsigned b = 0; b < SIM_HIST_BARS; b++)
		if (counts[b] > most)
			most = counts[b];
	for (unsigned b = 0; b < SIM_HIST_BARS; b++) {
		uint32_t lo = s->min + b * width, hi = lo + width - 1;
		unsigned bar;

		if (lo > s->max)
			break;
		if (hi > s->max)
			hi = s->max;
		/* Single values all show; of wider bars only those with CPUs. */
		if (width > 1 && !counts[b])
			continue;
		bar = counts[b] ? (unsigned)((uint64_t)counts[b] * 40 / most) : 0;
		if (counts[b] && !bar)
			bar = 1;
		if (lo == hi)
			printf("  %9u ", lo);
		else
			printf("  %4u-%-4u ", lo, hi);
		printf("%-40.*s %u CPU%s\n", (int)bar,
		       "########################################", counts[b],
		       counts[b] == 1 ? "" : "s");
	}
	sim_print_ends(s, true);
	sim_print_ends(s, false);
	if (s->reserved)
		printf("  managed reservations not in use: %llu\n",
		       (unsigned long long)s->reserved);
	if (s->reachable < m->spec->ncpus)
		sim_print_unreachable(s);
}

/* ---- Rows: instances of a device line that fared alike ----------------------- */

struct sim_row {
	unsigned first, n;      /* insts[first .. first + n - 1] */
	unsigned k0;            /* the first one's number within its line */
};

static bool sim_same_str(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

static bool sim_alike(const struct sim_inst *a, const struct sim_inst *b)
{
	return a->ds == b->ds && a->mode == b->mode &&
	       a->granted == b->granted && a->could == b->could &&
	       sim_same_str(a->reason, b->reason) && !strcmp(a->fix, b->fix);
}

/*
 * Group the instances (only those @pick accepts, or all) into rows; each
 * row is a run of alike instances of one line. Return: the rows (free
 * them), *@nrows set; NULL when out of memory.
 */
static struct sim_row *sim_rows(const struct sim_machine *m, bool split,
				bool (*pick)(const struct sim_inst *),
				unsigned *nrows)
{
	struct sim_row *r = calloc(m->ninst ? m->ninst : 1, sizeof(*r));
	unsigned n = 0, k = 0;

	*nrows = 0;
	if (!r)
		return NULL;
	for (unsigned j = 0; j < m->ninst; j++) {
		const struct sim_inst *in = &m->insts[j];

		k = j && m->insts[j - 1].ds == in->ds ? k + 1 : 0;
		if (pick && !pick(in))
			continue;
		if (!split && n && r[n - 1].first + r[n - 1].n == j &&
		    sim_alike(&m->insts[r[n - 1].first], in)) {
			r[n - 1].n++;
			continue;
		}
		r[n++] = (struct sim_row){ j, 1, k };
	}
	*nrows = n;
	return r;
}

/* "nvme", "nvme3" or "nvme0-31". */
static void sim_row_name(const struct sim_machine *m, const struct sim_row *r,
			 char *out, size_t len)
{
	const struct sim_inst *in = &m->insts[r->first];

	if (r->n == 1)
		snprintf(out, len, "%s", in->name);
	else
		snprintf(out, len, "%s%u-%u", in->ds->name, r->k0,
			 r->k0 + r->n - 1);
}

static void sim_bdf_str(umsi_bdf_t b, char *out, size_t len)
{
	snprintf(out, len, "%04x:%02x:%02x.%u", UMSI_BDF_SEG(b), UMSI_BDF_BUS(b),
		 UMSI_BDF_DEV(b), UMSI_BDF_FN(b));
}

static void sim_more_rows(unsigned left, const char *what)
{
	if (left)
		printf("  ... %u more %s (umsi sim --proc lists them all)\n",
		       left, what);
}

static void sim_print_devices(const struct sim_machine *m, bool proc)
{
	unsigned nrows, limit;
	struct sim_row *r = sim_rows(m, proc, NULL, &nrows);

	if (!r) {
		printf("(out of memory)\n");
		return;
	}
	limit = proc ? nrows : SIM_REPORT_ROWS;
	printf("%-20s %5s %-27s %-5s %9s %7s\n", "DEVICE", "COUNT", "BDF",
	       "MODE", "REQUESTED", "GRANTED");
	for (unsigned i = 0; i < nrows && i < limit; i++) {
		const struct sim_inst *in = &m->insts[r[i].first];
		char name[64], bdf[32], a[16], b[16];

		sim_row_name(m, &r[i], name, sizeof(name));
		sim_bdf_str(in->bdf, a, sizeof(a));
		if (r[i].n > 1) {
			sim_bdf_str(m->insts[r[i].first + r[i].n - 1].bdf, b,
				    sizeof(b));
			snprintf(bdf, sizeof(bdf), "%s-%s", a, b + 5);
		} else {
			snprintf(bdf, sizeof(bdf), "%s", a);
		}
		printf("%-20s %5u %-27s %-5s %9u %7u%s\n", name, r[i].n, bdf,
		       sim_mode_name(in->mode), in->ds->want, sim_granted(in),
		       r[i].n > 1 ? " each" : "");
	}
	sim_more_rows(nrows > limit ? nrows - limit : 0, "rows");
	free(r);
}

/* ---- Where each device's vectors landed -------------------------------------- */

struct sim_landing {
	uint64_t *all;          /* CPUs any instance of the row landed on */
	uint64_t *mine;         /* CPUs of the instance being counted */
	uint16_t *per_cpu;      /* its vectors per CPU */
	uint32_t ncpus;
};

/* Count one instance: distinct CPUs and the most on one CPU. */
static void sim_land_one(const struct sim_machine *m, struct sim_landing *l,
			 const struct sim_inst *in, unsigned *cpus,
			 unsigned *most)
{
	*cpus = 0;
	*most = 0;
	for (unsigned i = 0; i < sim_granted(in); i++) {
		struct umsi_irq_info inf;

		if (umsi_irq_get_info(m->sys, in->irqs[i], &inf) ||
		    inf.cpu >= l->ncpus)
			continue;
		l->all[inf.cpu / 64] |= 1ull << (inf.cpu % 64);
		if (!l->per_cpu[inf.cpu]++)
			(*cpus)++;
		if (l->per_cpu[inf.cpu] > *most)
			*most = l->per_cpu[inf.cpu];
	}
	/* Undo the counts by the same walk: O(vectors), not O(CPUs). */
	for (unsigned i = 0; i < sim_granted(in); i++) {
		struct umsi_irq_info inf;

		if (!umsi_irq_get_info(m->sys, in->irqs[i], &inf) &&
		    inf.cpu < l->ncpus)
			l->per_cpu[inf.cpu] = 0;
	}
}

static void sim_print_landing_row(const struct sim_machine *m,
				  struct sim_landing *l, const struct sim_row *r)
{
	const struct sim_inst *first = &m->insts[r->first];
	unsigned lo = UINT32_MAX, hi = 0, most = 0, cpus, one;
	uint32_t words = (l->ncpus + 63) / 64, together = 0;
	char name[64], list[SIM_LIST_LEN + 48];

	memset(l->all, 0, words * sizeof(*l->all));
	for (unsigned j = r->first; j < r->first + r->n; j++) {
		sim_land_one(m, l, &m->insts[j], &cpus, &one);
		if (cpus < lo)
			lo = cpus;
		if (cpus > hi)
			hi = cpus;
		if (one > most)
			most = one;
	}
	for (uint32_t w = 0; w < words; w++)
		together += (uint32_t)__builtin_popcountll(l->all[w]);
	sim_cpu_list(l->all, l->ncpus, list, sizeof(list));
	sim_row_name(m, r, name, sizeof(name));
	if (r->n == 1) {
		printf("  %-20s %u on %u CPU%s (at most %u on one): %s%s\n",
		       name, sim_granted(first), together,
		       together == 1 ? "" : "s", most, list,
		       first->mode == UMSI_MODE_MSI && most > 1 &&
		       !m->spec->vtd ? " (an MSI block sits on one CPU)" : "");
		return;
	}
	if (lo == hi)
		printf("  %-20s %u each on %u CPUs each (at most %u on one); "
		       "together on %u: %s\n", name, sim_granted(first), lo,
		       most, together, list);
	else
		printf("  %-20s %u each on %u to %u CPUs each (at most %u on "
		       "one); together on %u: %s\n", name, sim_granted(first),
		       lo, hi, most, together, list);
}

static bool sim_has_vectors(const struct sim_inst *in)
{
	return in->granted > 0;
}

static void sim_print_landings(const struct sim_machine *m, bool proc)
{
	struct sim_landing l = { .ncpus = m->spec->ncpus };
	unsigned nrows, limit;
	struct sim_row *r = sim_rows(m, false, sim_has_vectors, &nrows);

	l.all = calloc((l.ncpus + 63) / 64, sizeof(*l.all));
	l.per_cpu = calloc(l.ncpus, sizeof(*l.per_cpu));
	if (!r || !l.all || !l.per_cpu) {
		printf("(out of memory)\n");
		goto out;
	}
	if (!nrows)
		goto out;
	printf("where the vectors landed (CPU numbers):\n");
	limit = proc ? nrows : SIM_REPORT_ROWS;
	for (unsigned i = 0; i < nrows && i < limit; i++)
		sim_print_landing_row(m, &l, &r[i]);
	sim_more_rows(nrows > limit ? nrows - limit : 0, "rows");
out:
	free(r);
	free(l.all);
	free(l.per_cpu);
}

/* ---- Who did not get what it asked for ------------------------------------------- */

static void sim_print_short_row(const struct sim_machine *m,
				const struct sim_row *r)
{
	const struct sim_inst *in = &m->insts[r->first];
	const struct sim_devspec *ds = in->ds;
	char name[64], min[32] = "";

	sim_row_name(m, r, name, sizeof(name));
	if (ds->min > 1)
		snprintf(min, sizeof(min), " (min %u)", ds->min);
	printf("  %-20s asked for %u%s, got %u (%s)%s: %s\n", name, ds->want,
	       min, sim_granted(in), sim_mode_name(in->mode),
	       r->n > 1 ? " each" : "", in->reason ? in->reason : "unknown");
	printf("  %-20s ", "");
	if (in->could >= 0)
		printf("could have had %d; ", in->could);
	if (in->fix[0])
		printf("would fit with %s\n", in->fix);
	else
		printf("no single change to the file found that makes it fit\n");
}

static void sim_print_shortfalls(const struct sim_machine *m, bool proc)
{
	unsigned nrows, limit;
	struct sim_row *r = sim_rows(m, proc, sim_short, &nrows);

	if (!r) {
		printf("(out of memory)\n");
		return;
	}
	printf("\n%u device%s did not get what %s asked for:\n", m->short_of,
	       m->short_of == 1 ? "" : "s", m->short_of == 1 ? "it" : "they");
	limit = proc ? nrows : SIM_REPORT_ROWS;
	for (unsigned i = 0; i < nrows && i < limit; i++)
		sim_print_short_row(m, &r[i]);
	sim_more_rows(nrows > limit ? nrows - limit : 0, "rows");
	free(r);
}

/* ---- The full tables ------------------------------------------------------------------ */

/* One of the library's own tables, sized first. */
static void sim_print_table(const struct sim_machine *m, bool vectors)
{
	size_t need = vectors ? umsi_format_vectors(m->sys, NULL, 0) :
		      umsi_format_interrupts(m->sys, NULL, 0);
	char *b = malloc(need + 1);

	if (!b) {
		printf("(out of memory for a table of %zu bytes)\n", need);
		return;
	}
	if (vectors)
		umsi_format_vectors(m->sys, b, need + 1);
	else
		umsi_format_interrupts(m->sys, b, need + 1);
	fputs(b, stdout);
	free(b);
}

/* One row per IRQ: what the /proc/interrupts table says, CPU by name. */
static void sim_print_irq_rows(const struct sim_machine *m)
{
	printf("%-7s %-20s %5s %6s %8s %6s %6s\n", "IRQ", "DEVICE", "INDEX",
	       "CPU", "APIC-ID", "VECTOR", "COUNT");
	for (unsigned j = 0; j < m->ninst; j++) {
		const struct sim_inst *in = &m->insts[j];

		for (unsigned i = 0; i < sim_granted(in); i++) {
			struct umsi_irq_info inf = { 0 };

			umsi_irq_get_info(m->sys, in->irqs[i], &inf);
			printf("%-7u %-20s %5u %6u %8u   0x%02x %6llu\n",
			       inf.irq, in->name, i, inf.cpu, inf.hwid,
			       inf.vector, (unsigned long long)inf.total);
		}
	}
}

static uint64_t sim_irqs(const struct sim_machine *m)
{
	uint64_t n = 0;

	for (unsigned j = 0; j < m->ninst; j++)
		n += sim_granted(&m->insts[j]);
	return n;
}

/*
 * The interrupt table and the vectors per CPU, in full: with --proc, and
 * in the summary of a machine small enough for them to fit a screen.
 */
static void sim_print_full_tables(const struct sim_machine *m, bool proc)
{
	uint64_t irqs = sim_irqs(m);

	if (!proc && (irqs > SIM_SMALL_IRQS || m->spec->ncpus > SIM_SMALL_CPUS))
		return;
	if (irqs * m->spec->ncpus <= SIM_PROC_CELLS) {
		sim_print_table(m, false);
	} else {
		printf("(%llu IRQs x %u CPUs is too wide for a /proc/interrupts "
		       "table: one row per IRQ)\n", (unsigned long long)irqs,
		       m->spec->ncpus);
		sim_print_irq_rows(m);
	}
	printf("\nvector usage per CPU:\n");
	sim_print_table(m, true);
	printf("\n");
}

/* ---- Text ------------------------------------------------------------------------------- */

static void sim_print_machine_line(const struct sim_machine *m)
{
	const struct sim_spec *sp = m->spec;
	char ids[SIM_LIST_LEN + 48], sockets[32] = "", ioapics[48] = "";
	char units[64];

	if (sp->sockets)
		snprintf(sockets, sizeof(sockets), ", %u socket%s", sp->sockets,
			 sp->sockets == 1 ? "" : "s");

	sim_apic_list(sp, ids, sizeof(ids));
	if (sp->imsic) {
		printf("machine: %u RISC-V hart%s (hart IDs %s)%s, IMSIC files "
		       "of %u identities%s, %u device%s asking for %llu "
		       "vectors\n\n", sp->ncpus, sp->ncpus == 1 ? "" : "s",
		       ids, sockets, sp->num_ids ? sp->num_ids : 255,
		       sp->plat & UMSI_PLAT_NO_MSI ? ", no-msi" : "",
		       m->ninst, m->ninst == 1 ? "" : "s",
		       (unsigned long long)sp->nvec);
		return;
	}
	if (sp->gicv2m) {
		printf("machine: %u Arm CPU%s (IDs %s)%s, a GICv2 with a v2m "
		       "frame at 0x%llx (SPIs %u-%u, shared by every CPU)%s, "
		       "%u device%s asking for %llu vectors\n\n", sp->ncpus,
		       sp->ncpus == 1 ? "" : "s", ids, sockets,
		       (unsigned long long)UMSI_SIM_V2M_BASE,
		       UMSI_SIM_V2M_SPI_BASE,
		       UMSI_SIM_V2M_SPI_BASE + UMSI_SIM_V2M_SPI_COUNT - 1,
		       sp->plat & UMSI_PLAT_NO_MSI ? ", no-msi" : "",
		       m->ninst, m->ninst == 1 ? "" : "s",
		       (unsigned long long)sp->nvec);
		return;
	}
	if (sp->its) {
		printf("machine: %u Arm CPU%s (IDs %s)%s, a GICv3 ITS at 0x%llx "
		       "(LPIs from %u), %u LPIs a CPU%s, %u device%s asking "
		       "for %llu vectors\n\n", sp->ncpus,
		       sp->ncpus == 1 ? "" : "s", ids, sockets,
		       (unsigned long long)UMSI_SIM_ITS_BASE, SIM_ITS_FIRST_LPI,
		       sim_its_lpis_per_cpu(sp->ncpus),
		       sp->plat & UMSI_PLAT_NO_MSI ? ", no-msi" : "",
		       m->ninst, m->ninst == 1 ? "" : "s",
		       (unsigned long long)sp->nvec);
		return;
	}
	if (sp->nioapics > 1)
		snprintf(ioapics, sizeof(ioapics), ", %u IO-APICs (GSIs 0-%u)",
			 sp->nioapics, sp->nioapics * SIM_IOAPIC_PINS - 1);
	if (sp->nunits)
		snprintf(units, sizeof(units), ", %u %s (uMSI's tables)",
			 sp->nunits + 1, sp->vtd ? "VT-d remapping units" :
			 "AMD-Vi IOMMUs");
	else
		snprintf(units, sizeof(units), "%s", sp->vtd ?
			 ", a VT-d remapping unit (uMSI's table)" : sp->amdvi ?
			 ", an AMD-Vi IOMMU (uMSI's tables)" : "");
	printf("machine: %u CPU%s (APIC IDs %s)%s%s%s%s%s%s%s, %u device%s "
	       "asking for %llu vectors\n\n", sp->ncpus,
	       sp->ncpus == 1 ? "" : "s",
	       ids, sockets, sp->plat & UMSI_PLAT_X2APIC ? ", x2apic" : "",
	       sp->plat & UMSI_PLAT_EXT_DEST_ID ? ", ext-dest-id" : "",
	       sp->plat & UMSI_PLAT_IRQ_REMAP ? ", remap" : "",
	       units, ioapics, sp->plat & UMSI_PLAT_NO_MSI ? ", no-msi" : "",
	       m->ninst, m->ninst == 1 ? "" : "s",
	       (unsigned long long)sp->nvec);
}

static void sim_print_interrupts_line(const struct sim_machine *m)
{
	const struct sim_spec *sp = m->spec;

	printf("interrupts: %llu fired, %llu handled, %llu on a CPU uMSI did "
	       "not choose\n", (unsigned long long)m->fired,
	       (unsigned long long)m->handled,
	       (unsigned long long)m->wrong_cpu);
	if (!sp->nunits || !m->sim)
		return;
	/* `unit` lines: what each unit's table carried, read from it. */
	printf("remapping units:");
	for (unsigned u = 0; u <= sp->nunits; u++) {
		uint64_t base = u ? sp->units[u - 1].base : sp->vtd ?
				UMSI_SIM_VTD_BASE : UMSI_SIM_AMDVI_BASE;
		unsigned long long done = 0, bad = 0;

		if (sp->vtd) {
			struct umsi_sim_vtd_stats st;

			if (!umsi_sim_vtd_unit_stats(m->sim, u, &st)) {
				done = st.remapped;
				bad = st.faults;
			}
		} else {
			struct umsi_sim_amdvi_stats st;

			if (!umsi_sim_amdvi_unit_stats(m->sim, u, &st)) {
				done = st.remapped;
				bad = st.aborted;
			}
		}
		printf("%s 0x%llx %llu remapped, %llu %s", u ? ";" : "",
		       (unsigned long long)base, done, bad,
		       sp->vtd ? "faults" : "aborted");
	}
	printf("\n");
}

/*
 * SR-IOV: for each PF line with vfs=, its VFs enabled and whole, and how
 * many more VFs like them fit (measured by sim_run(), see sim_vf_room()).
 */
static void sim_print_sriov(const struct sim_machine *m)
{
	const struct sim_spec *sp = m->spec;
	unsigned j = 0;

	for (unsigned i = 0; i < sp->ndevs; i++) {
		const struct sim_devspec *ds = &sp->devs[i];
		unsigned enabled = 0, whole = 0;
		char why[96];

		if (!ds->is_vf) {
			j += ds->count;
			continue;
		}
		for (unsigned k = 0; k < ds->count; k++, j++) {
			enabled += m->insts[j].dev != NULL;
			whole += m->insts[j].granted == (int)ds->want;
		}
		if (!m->vf_room_err[i])
			snprintf(why, sizeof(why), "at least; the most tried");
		else if (m->vf_room_err[i] == -UMSI_ENOSPC &&
			 m->vf_room_free[i] < ds->want)
			snprintf(why, sizeof(why), "then the CPUs' vectors ran "
				 "out");
		else if (m->vf_room_err[i] == -UMSI_ENOSPC)
			snprintf(why, sizeof(why), "then the interrupt "
				 "controller's room ran out, %u CPU vectors "
				 "still free", m->vf_room_free[i]);
		else
			snprintf(why, sizeof(why), "then %s",
				 umsi_strerror(m->vf_room_err[i]));
		printf("sr-iov: %s: %u PF%s x %u VFs: %u enabled, %u with all "
		       "%u vector%s; %u more VFs like them would fit (%s)\n",
		       sp->devs[i - 1].name, sp->devs[i - 1].count,
		       sp->devs[i - 1].count == 1 ? "" : "s", sp->devs[i - 1].vfs,
		       enabled, whole, ds->want, ds->want == 1 ? "" : "s",
		       m->vf_room[i], why);
	}
}

void sim_report_text(const struct sim_machine *m,
		     const struct sim_report_opts *o)
{
	bool lost = m->fired != m->handled || m->wrong_cpu;
	struct sim_spread s;

	if (!o->quiet) {
		sim_print_machine_line(m);
		sim_print_devices(m, o->proc);
		printf("\n");
		sim_print_full_tables(m, o->proc);
		if (sim_spread_get(m, &s)) {
			printf("(out of memory)\n");
		} else {
			sim_print_spread(m, &s);
			sim_spread_free(&s);
		}
		sim_print_landings(m, o->proc);
		printf("\n");
		sim_print_interrupts_line(m);
		sim_print_sriov(m);
	} else if (lost) {
		sim_print_interrupts_line(m);
	}
	if (!m->short_of) {
		if (!o->quiet && !lost)
			printf("every device got what it asked for\n");
		return;
	}
	sim_print_shortfalls(m, o->proc);
}

/* ---- JSON ------------------------------------------------------------------------------- */

static void sim_json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

static void sim_json_device(const struct sim_machine *m,
			    const struct sim_inst *in, bool first)
{
	printf("%s{\"name\":", first ? "" : ",");
	sim_json_str(in->name);
	printf(",\"bdf\":\"%04x:%02x:%02x.%u\",\"requested\":%u,"
	       "\"granted\":%d,\"mode\":\"%s\"",
	       UMSI_BDF_SEG(in->bdf), UMSI_BDF_BUS(in->bdf),
	       UMSI_BDF_DEV(in->bdf), UMSI_BDF_FN(in->bdf),
	       in->ds->want, in->granted, sim_mode_name(in->mode));
	if (in->pf)
		printf(",\"pf\":\"%04x:%02x:%02x.%u\",\"vf_index\":%u",
		       UMSI_BDF_SEG(in->pf->bdf), UMSI_BDF_BUS(in->pf->bdf),
		       UMSI_BDF_DEV(in->pf->bdf), UMSI_BDF_FN(in->pf->bdf),
		       in->vf_index);
	if (sim_short(in)) {
		printf(",\"reason\":");
		sim_json_str(in->reason ? in->reason : "unknown");
		if (in->could >= 0)
			printf(",\"could_have\":%d", in->could);
		printf(",\"fix\":");
		sim_json_str(in->fix);
	}
	printf(",\"fired\":%llu,\"handled\":%llu,\"vectors\":[",
	       (unsigned long long)in->fired,
	       (unsigned long long)in->handled);
	for (unsigned i = 0; i < sim_granted(in); i++) {
		struct umsi_irq_info inf = { 0 };

		umsi_irq_get_info(m->sys, in->irqs[i], &inf);
		printf("%s{\"index\":%u,\"irq\":%u,\"cpu\":%u,"
		       "\"apic_id\":%u,\"vector\":%u}",
		       i ? "," : "", i, in->irqs[i], inf.cpu,
		       inf.hwid, inf.vector);
	}
	printf("]}");
}

void sim_report_json(const struct sim_machine *m)
{
	const struct sim_spec *sp = m->spec;
	struct sim_spread s;

	printf("{\"cpus\":[");
	for (unsigned i = 0; i < sp->ncpus; i++) {
		struct umsi_matrix_cpu_stats cs = { 0 };

		umsi_matrix_cpu_stats(umsi_system_matrix(m->sys), i, &cs);
		printf("%s{\"cpu\":%u,\"apic_id\":%u,\"allocated\":%u,"
		       "\"managed\":%u,\"available\":%u,\"online\":%s",
		       i ? "," : "", i, sp->apic_ids[i],
		       cs.allocated + cs.managed_allocated,
		       cs.managed, cs.available,
		       cs.online ? "true" : "false");
		if (sp->sockets)
			printf(",\"socket\":%d", sim_socket_of(sp, i));
		putchar('}');
	}
	printf("],\"devices\":[");
	for (unsigned j = 0; j < m->ninst; j++)
		sim_json_device(m, &m->insts[j], j == 0);
	printf("]");
	if (!sim_spread_get(m, &s)) {
		printf(",\"spread\":{\"min\":%u,\"median\":%u,\"max\":%u,"
		       "\"capacity\":%u,\"cpus\":%u}", s.min, s.median, s.max,
		       s.capacity, s.reachable);
		sim_spread_free(&s);
	}
	printf(",\"fired\":%llu,\"handled\":%llu,\"wrong_cpu\":%llu}\n",
	       (unsigned long long)m->fired, (unsigned long long)m->handled,
	       (unsigned long long)m->wrong_cpu);
}

/* ---- SVG ------------------------------------------------------------------------ */

/*
 * The cell of an IRQ on @cpu: its vector on a machine where each CPU has
 * its own space (x86 vectors, IMSIC identities). On an ITS machine the
 * IRQ's identity is global (umsi_ctl_domain_global) and which slot of
 * its CPU's run the matrix gave it is not exposed: it takes the CPU's
 * next slot in use, from *@scan on, so each line's count on each CPU is
 * exact but the order within the CPU is the IRQs'. -1: no cell.
 */
static long sim_svg_cell(const struct sim_machine *m, const uint16_t *own,
			 uint32_t nvec, uint32_t cpu, uint32_t vector,
			 uint32_t *scan)
{
	const struct umsi_matrix *mx = umsi_system_matrix(m->sys);

	if (!m->spec->its && !m->spec->gicv2m)
		return vector < nvec && umsi_matrix_is_allocated(mx, cpu, vector) ?
		       (long)vector : -1;
	for (; *scan < nvec; (*scan)++)
		if (umsi_matrix_is_allocated(mx, cpu, *scan) &&
		    !own[(size_t)cpu * nvec + *scan])
			return (long)(*scan)++;
	return -1;
}

/*
 * The device line (1-based; 0: none) holding each cell: every granted
 * IRQ's CPU and vector (sim_svg_cell()). *@placed counts what found its
 * cell.
 */
static uint16_t *sim_svg_owners(const struct sim_machine *m, uint32_t nvec,
				uint64_t *per_line, uint64_t *placed)
{
	uint32_t ncpus = m->spec->ncpus;
	uint16_t *own = calloc((size_t)ncpus * nvec, sizeof(*own));
	uint32_t *scan = calloc(ncpus, sizeof(*scan));

	if (!own || !scan) {
		free(own);
		free(scan);
		return NULL;
	}
	for (unsigned j = 0; j < m->ninst; j++) {
		const struct sim_inst *in = &m->insts[j];
		uint16_t line = (uint16_t)(in->ds - m->spec->devs + 1);

		for (unsigned i = 0; i < sim_granted(in); i++) {
			struct umsi_irq_info inf;
			long v;

			if (umsi_irq_get_info(m->sys, in->irqs[i], &inf) ||
			    inf.cpu >= ncpus)
				continue;
			v = sim_svg_cell(m, own, nvec, inf.cpu, inf.vector,
					 &scan[inf.cpu]);
			if (v < 0)
				continue;
			own[(size_t)inf.cpu * nvec + (uint32_t)v] = line;
			per_line[line - 1]++;
			(*placed)++;
		}
	}
	free(scan);
	return own;
}

/* What uMSI's matrix says a cell is, with its owner's colour. */
static uint8_t sim_svg_class(int state, uint16_t owner, const uint8_t *class_of)
{
	switch (state) {
	case UMSI_VECTOR_FREE:
		return HM_FREE;
	case UMSI_VECTOR_MANAGED_FREE:
		return HM_MANAGED;
	case UMSI_VECTOR_LEGACY_FREE:
		return HM_LEGACY;
	case UMSI_VECTOR_ALLOCATED:
	case UMSI_VECTOR_MANAGED_ALLOCATED:
	case UMSI_VECTOR_LEGACY_ALLOCATED:
		return owner ? class_of[owner - 1] : HM_OTHER_IRQ;
	default:
		return HM_RESERVED;
	}
}

static void sim_svg_titles(const struct sim_machine *m, const char *name,
			   struct heatmap *hm, uint64_t used, uint64_t freev)
{
	const struct sim_spec *sp = m->spec;
	char sockets[48] = "";

	if (sp->sockets)
		snprintf(sockets, sizeof(sockets), " in %u socket%s",
			 sp->sockets, sp->sockets == 1 ? "" : "s");
	snprintf(hm->title, sizeof(hm->title), "umsi sim %s: vectors per CPU",
		 name);
	snprintf(hm->subtitle, sizeof(hm->subtitle),
		 "%u %s%s%s%s%s; %u device%s; %llu vectors in use by devices, "
		 "%llu free, of %u a CPU", sp->ncpus,
		 sp->imsic ? "RISC-V harts" : sp->its || sp->gicv2m ? "Arm CPUs" :
		 "CPUs",
		 sockets, sp->plat & UMSI_PLAT_X2APIC ? ", x2apic" : "",
		 sp->plat & UMSI_PLAT_EXT_DEST_ID ? ", ext-dest-id" : "",
		 sp->plat & UMSI_PLAT_IRQ_REMAP ? ", remap" :
		 sp->vtd ? ", VT-d" : "", m->ninst, m->ninst == 1 ? "" : "s",
		 (unsigned long long)used, (unsigned long long)freev,
		 hm->ncols);
}

/* The legend's name of each device line that has a colour of its own. */
static void sim_svg_names(const struct sim_machine *m, struct heatmap *hm,
			  const uint8_t *class_of)
{
	const struct sim_spec *sp = m->spec;

	for (unsigned i = 0; i < sp->ndevs; i++) {
		const struct sim_devspec *ds = &sp->devs[i];

		if (class_of[i] < HM_DEV0)
			continue;
		if (ds->count > 1)
			snprintf(hm->class_name[class_of[i]], HM_NAME_LEN,
				 "%s0-%u (line %u)", ds->name, ds->count - 1,
				 ds->line);
		else
			snprintf(hm->class_name[class_of[i]], HM_NAME_LEN,
				 "%s (line %u)", ds->name, ds->line);
	}
}

/* A note on the CPUs no message can name: free in the picture, unusable. */
static void sim_svg_unreachable(const struct sim_machine *m,
				struct heatmap *hm)
{
	struct sim_spread s;
	uint64_t *bits;
	char list[SIM_LIST_LEN + 48];

	if (sim_spread_get(m, &s))
		return;
	bits = calloc((s.ncpus + 63) / 64, sizeof(*bits));
	if (bits && s.reachable < s.ncpus) {
		for (uint32_t i = 0; i < s.ncpus; i++)
			if (!s.reach[i])
				bits[i / 64] |= 1ull << (i % 64);
		sim_cpu_list(bits, s.ncpus, list, sizeof(list));
		heatmap_note(hm, "No message can name CPU%s %s (APIC IDs above "
			     "254 need platform ext-dest-id, above 32767 "
			     "remap), or %s offline: %s free vectors are of "
			     "no use.", s.ncpus - s.reachable == 1 ? "" : "s",
			     list, s.ncpus - s.reachable == 1 ? "it is" :
			     "they are", s.ncpus - s.reachable == 1 ? "its" :
			     "their");
	}
	free(bits);
	sim_spread_free(&s);
}

int sim_report_svg(const struct sim_machine *m, const char *name, FILE *f)
{
	const struct umsi_matrix *mx = umsi_system_matrix(m->sys);
	const struct sim_spec *sp = m->spec;
	uint32_t nvec = umsi_matrix_nvec(mx);
	uint64_t *per_line = calloc(sp->ndevs ? sp->ndevs : 1, sizeof(*per_line));
	uint8_t *class_of = calloc(sp->ndevs ? sp->ndevs : 1, 1);
	uint64_t placed = 0, granted = 0, used = 0, freev = 0;
	unsigned lines = 0;
	uint16_t *own = NULL;
	struct heatmap hm;
	int ret = -1;

	if (!per_line || !class_of || heatmap_init(&hm, sp->ncpus, nvec))
		goto nomem;
	own = sim_svg_owners(m, nvec, per_line, &placed);
	if (!own)
		goto nomem;
	heatmap_rank(per_line, sp->ndevs, class_of);
	for (uint32_t c = 0; c < sp->ncpus; c++) {
		hm.row_group[c] = sim_socket_of(sp, c);
		for (uint32_t v = 0; v < nvec; v++) {
			int st = umsi_matrix_vector_state(mx, c, v);
			uint8_t k = sim_svg_class(st, own[(size_t)c * nvec + v],
						  class_of);

			*heatmap_cell(&hm, c, v) = k;
			used += k >= HM_OTHER_DEV;
			freev += k == HM_FREE;
		}
	}
	for (unsigned j = 0; j < m->ninst; j++)
		granted += sim_granted(&m->insts[j]);
	sim_svg_names(m, &hm, class_of);
	sim_svg_titles(m, name, &hm, used, freev);
	if (sp->imsic)
		hm.col_word = "identity";
	if (sp->gicv2m) {
		hm.col_word = "slot";
		heatmap_note(&hm, "GICv2m: an IRQ's SPI is global; a column is "
			     "a slot of the CPU's run of %u, and the slots a "
			     "CPU has in use are shown in its IRQs' order.",
			     nvec);
	}
	if (sp->its) {
		hm.col_word = "slot";
		heatmap_note(&hm, "ITS: an IRQ's LPI is global; a column is a "
			     "slot of the CPU's run of %u, and the slots a "
			     "CPU has in use are shown in its IRQs' order.",
			     nvec);
	}
	if (placed < granted)
		heatmap_note(&hm, "%llu of %llu vectors granted are not in the "
			     "picture: their CPU or vector is not one of the "
			     "matrix's", (unsigned long long)(granted - placed),
			     (unsigned long long)granted);
	for (unsigned i = 0; i < sp->ndevs; i++)
		lines += per_line[i] != 0;
	if (lines > HM_MAX_DEVS)
		heatmap_note(&hm, "The %u device lines with the most vectors "
			     "have a colour each; the other %u share one.",
			     HM_MAX_DEVS, lines - HM_MAX_DEVS);
	sim_svg_unreachable(m, &hm);
	heatmap_note(&hm, "A row is a CPU (its place on the cpus line), a "
		     "column a vector of its space, as uMSI's allocator holds "
		     "them after every device was brought up.");
	ret = heatmap_write(f, &hm);
	goto out;
nomem:
	errno = ENOMEM;
out:
	heatmap_free(&hm);
	free(own);
	free(per_line);
	free(class_of);
	return ret;
}
