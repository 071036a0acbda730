/* SPDX-License-Identifier: MIT */
/*
 * `umsi inspect --check`: the decoded MSI and MSI-X state, judged. Each
 * finding names the function, the entry, what is wrong and why it
 * matters:
 *
 *   unowned-entry     MSI-X enabled and an entry unmasked, but no IRQ of
 *                     Linux owns the entry (live)
 *   outside-affinity  a message whose destination is not a CPU of its
 *                     IRQ's effective affinity (live; x86 physical mode,
 *                     and logical mode where the model is known: see
 *                     inspect_logical_model())
 *   pending-masked    a pending bit on a masked MSI-X entry or MSI vector
 *   same-message      two functions send the same (destination, vector)
 *                     without interrupt remapping
 *   function-masked   MSI-X enabled with its Function Mask left set
 *   bus-master-off    MSI or MSI-X enabled with Bus Master Enable clear
 *   mme-over-capable  MSI Multiple Message Enable above Multiple Message
 *                     Capable
 *
 * Nothing is read here: the checks judge what the report holds. What the
 * source cannot show (a dump has no MSI-X table and no Linux; a table the
 * kernel would not map; a remapped message, whose destination lives in
 * the IOMMU) is said in the check notes, so that "no findings" never
 * hides a check that did not run.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <umsi/pci_regs.h>

#include "inspect.h"

/* What could not be judged, counted over the whole report. */
struct check_cov {
	size_t tables_unread;   /* MSI-X on, table not read (live) */
	size_t index_unknown;   /* functions with IRQs of unknown entry */
	size_t remapped;        /* messages in the remappable format */
	size_t logical;         /* logical messages, model unknown */
	size_t logical_either;  /* logical, flat and cluster disagree */
	struct inspect_logical lm;      /* the model (live mode) */
	size_t no_affinity;     /* IRQs without an effective affinity */
	size_t no_apics;        /* messages not matched: no APIC IDs */
	size_t short_cfg;       /* functions with only 64 bytes */
};

/* One message a function can send, for the same-message check. */
struct check_sender {
	uint32_t dest;
	bool logical;
	uint8_t vector;
	bool msix;
	uint32_t entry;
	size_t dev;             /* index in rep->devs */
};

static void check_note(struct inspect_report *rep, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static bool check_repeated(const struct inspect_report *rep, umsi_bdf_t bdf);

static void check_note(struct inspect_report *rep, const char *fmt, ...)
{
	char buf[INSPECT_MSG_LEN];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	for (size_t i = 0; i < rep->ncheck_notes; i++)
		if (!strcmp(rep->check_notes[i], buf))
			return;
	if (rep->ncheck_notes < INSPECT_CHECK_NOTES)
		memcpy(rep->check_notes[rep->ncheck_notes++], buf, sizeof(buf));
}

static int check_add(struct inspect_report *rep, const struct inspect_dev *d,
		     const char *check, bool msix, int32_t entry,
		     const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));

static int check_add(struct inspect_report *rep, const struct inspect_dev *d,
		     const char *check, bool msix, int32_t entry,
		     const char *fmt, ...)
{
	struct inspect_finding *f;
	va_list ap;

	if (rep->nfindings == rep->cap_findings) {
		size_t cap = rep->cap_findings ? rep->cap_findings * 2 : 16;
		struct inspect_finding *p = realloc(rep->findings,
						    cap * sizeof(*p));

		if (!p)
			return -1;
		rep->findings = p;
		rep->cap_findings = cap;
	}
	f = &rep->findings[rep->nfindings++];
	f->bdf = d->bdf;
	f->line = d->line;
	f->check = check;
	f->msix = msix;
	f->entry = entry;
	va_start(ap, fmt);
	vsnprintf(f->message, sizeof(f->message), fmt, ap);
	va_end(ap);
	return 0;
}

long inspect_cpu_of_apic(const struct inspect_report *rep, uint32_t apic_id)
{
	size_t lo = 0, hi = rep->napics;

	/* The first entry with this APIC ID: the lowest CPU number. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (rep->apics[mid].apic_id < apic_id)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < rep->napics && rep->apics[lo].apic_id == apic_id)
		return (long)rep->apics[lo].cpu;
	return -1;
}

/* The highest APIC ID of an xAPIC: IDs above it exist in x2APIC mode only. */
#define CHECK_XAPIC_MAX_ID 0xffu
/* Linux's flat model: one LDR bit a CPU, 8 bits (apic_flat_64.c). */
#define CHECK_FLAT_CPUS 8u

void inspect_logical_model(const struct inspect_report *rep,
			   struct inspect_logical *lm)
{
	const struct inspect_apic *big = NULL;
	size_t flagged = 0, x2 = 0;
	char possible[96];
	bool few;

	lm->kind = INSPECT_LOGICAL_UNKNOWN;
	if (!rep->apics) {
		snprintf(lm->how, sizeof(lm->how), "/proc/cpuinfo names no APIC IDs, so neither the mode of the local APICs nor the CPUs' logical IDs are known");
		return;
	}
	for (size_t i = 0; i < rep->napics; i++) {
		flagged += rep->apics[i].flags_seen;
		x2 += rep->apics[i].x2apic;
		if (rep->apics[i].apic_id > CHECK_XAPIC_MAX_ID && !big)
			big = &rep->apics[i];
	}
	if (big) {
		lm->kind = INSPECT_LOGICAL_CLUSTER;
		snprintf(lm->how, sizeof(lm->how), "CPU %u has APIC ID 0x%x, above 255, so the local APICs are in x2APIC mode, whose logical model in Linux is cluster (x2apic_cluster.c): the CPU with x2APIC ID a has the logical ID (a >> 4) << 16 | 1 << (a & 15), fixed by the hardware, so a destination names cluster dest >> 16 and, in it, the CPU with x2APIC ID (dest >> 16) << 4 | n for each bit n set",
			 big->cpu, big->apic_id);
		return;
	}
	if (rep->possible_known)
		snprintf(possible, sizeof(possible), "/sys/devices/system/cpu/possible lists %u CPU%s",
			 rep->possible_count, rep->possible_count == 1 ? "" : "s");
	few = rep->possible_known && rep->possible_count <= CHECK_FLAT_CPUS &&
	      rep->possible_max < CHECK_FLAT_CPUS;
	if (flagged == rep->napics && !x2) {
		if (!rep->possible_known) {
			snprintf(lm->how, sizeof(lm->how), "no CPU has the x2apic flag in /proc/cpuinfo, so the local APICs are in xAPIC mode, but /sys/devices/system/cpu/possible cannot be read: Linux uses the flat logical model with at most 8 possible CPUs and physical flat beyond, so the CPU a logical destination bit names is not known");
		} else if (few) {
			lm->kind = INSPECT_LOGICAL_FLAT;
			snprintf(lm->how, sizeof(lm->how), "no CPU has the x2apic flag in /proc/cpuinfo (xAPIC mode) and %s: Linux's flat model (apic_flat_64.c, at most 8 possible CPUs), where Linux sets CPU n's logical ID to 1 << n (LDR bits 31:24, default_init_apic_ldr), so destination bit n is Linux CPU n",
				 possible);
		} else {
			snprintf(lm->how, sizeof(lm->how), "no CPU has the x2apic flag in /proc/cpuinfo (xAPIC mode) and %s: with more than 8 Linux uses physical flat, so a logical destination is not one Linux wrote and the CPUs' logical IDs are not known",
				 possible);
		}
		return;
	}
	if (rep->possible_known && !few) {
		lm->kind = INSPECT_LOGICAL_CLUSTER;
		snprintf(lm->how, sizeof(lm->how), "the CPUs may run x2APIC (the x2apic flag in /proc/cpuinfo) and %s: in xAPIC mode Linux would use physical flat (more than 8), so a logical destination is x2APIC cluster mode's (x2apic_cluster.c): the CPU with x2APIC ID a has the logical ID (a >> 4) << 16 | 1 << (a & 15), fixed by the hardware",
			 possible);
		return;
	}
	lm->kind = INSPECT_LOGICAL_EITHER;
	snprintf(lm->how, sizeof(lm->how), "%s (the x2apic flag in /proc/cpuinfo, which Linux keeps whether or not it turns x2APIC mode on) and %s: Linux may be in the xAPIC flat model (destination bit n is Linux CPU n) or the x2APIC cluster model (bit n of cluster 0 is the CPU with x2APIC ID n), which nothing in /proc or /sys tells apart; a destination is decoded only where both name the same CPUs",
		 x2 ? "the CPUs may run x2APIC" : "not every CPU of /proc/cpuinfo has a flags line, so x2APIC mode cannot be ruled out",
		 rep->possible_known ? possible : "/sys/devices/system/cpu/possible cannot be read");
}

/* An unmasked, non-remapped message in logical destination mode? */
static bool check_is_logical(const struct umsi_x86_msi *m)
{
	return m->valid && !m->remapped && m->logical;
}

void inspect_note_logical(struct inspect_report *rep)
{
	struct inspect_logical lm;
	size_t n = 0;

	for (size_t k = 0; k < rep->ndevs; k++) {
		const struct inspect_dev *d = &rep->devs[k];

		if (d->has_msi && d->msi.enabled && check_is_logical(&d->msi_msg))
			n++;
		for (uint32_t i = 0; d->has_msix && d->msix.enabled &&
		     d->entries && i < d->msix.table_size; i++)
			if (!(d->entries[i].ctrl & UMSI_MSIX_CTRL_MASKBIT) &&
			    check_is_logical(&d->entries[i].msg))
				n++;
	}
	if (!n || !rep->live ||
	    rep->nnotes >= sizeof(rep->notes) / sizeof(rep->notes[0]))
		return;
	inspect_logical_model(rep, &lm);
	snprintf(rep->notes[rep->nnotes++], INSPECT_MSG_LEN,
		 "%zu message%s use%s logical destination mode; the CPUs %s: %.800s",
		 n, n == 1 ? "" : "s", n == 1 ? "s" : "",
		 lm.kind == INSPECT_LOGICAL_UNKNOWN ? "they name are not known" :
		 lm.kind == INSPECT_LOGICAL_EITHER ?
		 "they name are known only where two models agree" :
		 "they name are known", lm.how);
}

/* Is Linux CPU @cpu one of @rep's (/proc/cpuinfo)? */
static bool check_has_cpu(const struct inspect_report *rep, unsigned cpu)
{
	for (size_t i = 0; i < rep->napics; i++)
		if (rep->apics[i].cpu == cpu)
			return true;
	return false;
}

/* Add @cpu to the ascending @cpus (room @max, *@n named so far), once. */
static void check_add_cpu(unsigned *cpus, size_t max, size_t *n, unsigned cpu)
{
	size_t at = 0, kept = *n < max ? *n : max;

	while (at < kept && cpus[at] < cpu)
		at++;
	if (at < kept && cpus[at] == cpu)
		return;
	(*n)++;
	if (at >= max)
		return;
	memmove(&cpus[at + 1], &cpus[at],
		((kept < max ? kept + 1 : max) - at - 1) * sizeof(*cpus));
	cpus[at] = cpu;
}

/* xAPIC flat: bit n of the 8-bit destination is Linux CPU n. */
static size_t check_flat_cpus(const struct inspect_report *rep, uint32_t dest,
			      unsigned *cpus, size_t max, uint32_t *stray)
{
	size_t n = 0;

	/* Address bits 11:5 are no part of an xAPIC's destination. */
	for (unsigned b = 0; b < CHECK_FLAT_CPUS; b++) {
		if (!(dest >> b & 1))
			continue;
		if (check_has_cpu(rep, b))
			check_add_cpu(cpus, max, &n, b);
		else
			*stray |= 1u << b;
	}
	return n;
}

/* x2APIC cluster: cluster dest >> 16, bit n its x2APIC ID n (0-15). */
static size_t check_cluster_cpus(const struct inspect_report *rep,
				 uint32_t dest, unsigned *cpus, size_t max,
				 uint32_t *stray)
{
	uint32_t cluster = dest >> 16;
	size_t n = 0;

	for (unsigned b = 0; b < 16; b++) {
		long cpu;

		if (!(dest >> b & 1))
			continue;
		cpu = inspect_cpu_of_apic(rep, cluster << 4 | b);
		if (cpu >= 0)
			check_add_cpu(cpus, max, &n, (unsigned)cpu);
		else
			*stray |= 1u << b;
	}
	return n;
}

int inspect_logical_cpus(const struct inspect_report *rep,
			 const struct inspect_logical *lm, uint32_t dest,
			 unsigned *cpus, size_t max, uint32_t *stray)
{
	unsigned other[CHECK_FLAT_CPUS];
	uint32_t other_stray = 0;
	size_t n, n2;

	*stray = 0;
	switch (lm->kind) {
	case INSPECT_LOGICAL_FLAT:
		return (int)check_flat_cpus(rep, dest, cpus, max, stray);
	case INSPECT_LOGICAL_CLUSTER:
		return (int)check_cluster_cpus(rep, dest, cpus, max, stray);
	case INSPECT_LOGICAL_EITHER:
		/* Both models see the low 8 bits alike only if they agree. */
		n = check_flat_cpus(rep, dest, cpus, max, stray);
		n2 = check_cluster_cpus(rep, dest, other, CHECK_FLAT_CPUS,
					&other_stray);
		if (dest >> CHECK_FLAT_CPUS || n != n2 || n > max ||
		    n2 > CHECK_FLAT_CPUS || *stray != other_stray ||
		    memcmp(cpus, other, n * sizeof(*cpus)))
			return -1;
		return (int)n;
	case INSPECT_LOGICAL_UNKNOWN:
		break;
	}
	return -1;
}

/* A few words on the model, for a finding. */
static const char *check_model_words(const struct inspect_logical *lm)
{
	switch (lm->kind) {
	case INSPECT_LOGICAL_FLAT:
		return "flat model: bit n is CPU n";
	case INSPECT_LOGICAL_CLUSTER:
		return "x2APIC cluster model";
	case INSPECT_LOGICAL_EITHER:
		return "the flat and x2APIC cluster models agree";
	case INSPECT_LOGICAL_UNKNOWN:
		break;
	}
	return "model unknown";
}

/* "1", "1,3" (ascending), cut short on a long list. */
static void check_cpu_words(char *buf, size_t len, const unsigned *cpus,
			    size_t n)
{
	size_t o = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < n && o + 12 < len; i++)
		o += (size_t)snprintf(buf + o, len - o, "%s%u", i ? "," : "",
				      cpus[i]);
}

/*
 * Fixed and lowest-priority messages carry a vector; the others do not.
 * Vectors 0-15 are illegal (SDM 11.5.3): the APIC drops them.
 */
static bool check_has_vector(const struct umsi_x86_msi *m)
{
	return m->valid && !m->remapped && m->vector >= 16 &&
	       (m->delivery == UMSI_X86_DM_FIXED ||
		m->delivery == UMSI_X86_DM_LOWPRI);
}

/* MSI vectors the function may send: 2^MME, at most 32. */
static unsigned check_msi_count(const struct inspect_dev *d)
{
	return d->msi_count_enabled > UMSI_MSI_MAX_VECTORS ?
	       UMSI_MSI_MAX_VECTORS : d->msi_count_enabled;
}

/* Register-level faults: all visible in configuration space. */
static int check_registers(struct inspect_report *rep,
			   const struct inspect_dev *d)
{
	const struct umsi_msi_cap *m = &d->msi;
	const struct umsi_msix_cap *x = &d->msix;
	bool msi_on = d->has_msi && m->enabled;
	bool msix_on = d->has_msix && x->enabled;

	if ((msi_on || msix_on) && !(d->command & UMSI_PCI_CMD_MASTER) &&
	    check_add(rep, d, "bus-master-off", msix_on, -1,
		      "%s is enabled but Bus Master Enable is clear in the Command register (0x%04x): an interrupt message is a memory write, which the function may not issue, so its interrupts are lost",
		      msix_on ? "MSI-X" : "MSI", d->command))
		return -1;
	if (msix_on && x->function_mask &&
	    check_add(rep, d, "function-masked", true, -1,
		      "MSI-X is enabled with the Function Mask left set: no entry can send, so every interrupt waits in the Pending Bit Array until software clears the mask (Linux sets it only for a moment while it changes the table)"))
		return -1;
	if (msi_on && d->msi_count_enabled > d->msi_count_cap &&
	    check_add(rep, d, "mme-over-capable", false, -1,
		      "Multiple Message Enable allows %u messages but the capability offers %u: the function's behaviour is then undefined (PCI 3.0 6.8.1.3); it may send messages on vectors nobody allocated for it, or only some of those allocated",
		      d->msi_count_enabled, d->msi_count_cap))
		return -1;
	if (msi_on && m->maskable) {
		unsigned n = check_msi_count(d);

		for (unsigned i = 0; i < n; i++) {
			if (!((m->mask & m->pending) >> i & 1))
				continue;
			if (check_add(rep, d, "pending-masked", false, (int32_t)i,
				      "Pending bit set while the vector's Mask bit is set: an interrupt is waiting that will not be taken while the vector stays masked"))
				return -1;
		}
	}
	return 0;
}

/*
 * A logical-mode @m, sent for Linux IRQ @q: the CPUs its destination
 * names under the machine's model (cov->lm), each of which must be in
 * @q's effective affinity. Fixed delivery reaches every CPU named and
 * lowest priority any one of them, so one outside is a fault either way.
 */
static int check_logical(struct inspect_report *rep,
			 const struct inspect_dev *d, bool msix, int32_t entry,
			 const struct umsi_x86_msi *m,
			 const struct inspect_irq *q, struct check_cov *cov)
{
	unsigned cpus[16], out[16];
	char named[128], outside[128];
	uint32_t stray;
	size_t nout = 0;
	int n;

	n = inspect_logical_cpus(rep, &cov->lm, m->dest_id, cpus, 16, &stray);
	if (n < 0) {
		if (cov->lm.kind == INSPECT_LOGICAL_EITHER)
			cov->logical_either++;
		else
			cov->logical++;
		return 0;
	}
	if (!q->affinity[0]) {
		cov->no_affinity++;
		return 0;
	}
	if (!n)
		return check_add(rep, d, "outside-affinity", msix, entry,
				 "IRQ %d sends vector 0x%02x to logical destination 0x%x, which names no CPU of this machine (%s), while its effective affinity is CPU %s: the interrupt reaches no CPU and is lost",
				 q->irq, m->vector, m->dest_id,
				 check_model_words(&cov->lm), q->affinity);
	for (int i = 0; i < n && i < 16; i++)
		if (!inspect_cpulist_has(q->affinity, cpus[i]))
			out[nout++] = cpus[i];
	if (!nout)
		return 0;
	check_cpu_words(named, sizeof(named), cpus, n < 16 ? (size_t)n : 16);
	check_cpu_words(outside, sizeof(outside), out, nout);
	return check_add(rep, d, "outside-affinity", msix, entry,
			 "IRQ %d sends vector 0x%02x to logical destination 0x%x, CPU %s (%s), outside its effective affinity %s: Linux has not set that vector up for this IRQ on CPU %s, so the interrupt is taken as spurious or runs another IRQ's handler (a migration that did not reach the device, or a table written behind Linux's back)",
			 q->irq, m->vector, m->dest_id, named,
			 check_model_words(&cov->lm), q->affinity, outside);
}

/*
 * Does @m, sent for Linux IRQ @q, reach a CPU of @q's effective affinity?
 * Counts in @cov what cannot be told.
 */
static int check_affinity(struct inspect_report *rep,
			  const struct inspect_dev *d, bool msix,
			  int32_t entry, const struct umsi_x86_msi *m,
			  const struct inspect_irq *q, struct check_cov *cov)
{
	long cpu;

	/* A remapped message is counted once, by check_senders(). */
	if (!m->valid || m->remapped)
		return 0;
	if (m->logical)
		return check_logical(rep, d, msix, entry, m, q, cov);
	if (!rep->apics) {
		cov->no_apics++;
		return 0;
	}
	if (!q->affinity[0]) {
		cov->no_affinity++;
		return 0;
	}
	cpu = inspect_cpu_of_apic(rep, m->dest_id);
	if (cpu < 0)
		return check_add(rep, d, "outside-affinity", msix, entry,
				 "IRQ %d sends to APIC ID 0x%x, which no CPU of this machine has (/proc/cpuinfo), while its effective affinity is CPU %s: the interrupt reaches no CPU and is lost",
				 q->irq, m->dest_id, q->affinity);
	if (inspect_cpulist_has(q->affinity, (unsigned)cpu))
		return 0;
	return check_add(rep, d, "outside-affinity", msix, entry,
			 "IRQ %d sends vector 0x%02x to CPU %ld (APIC ID 0x%x), outside its effective affinity %s: Linux has not set that vector up for this IRQ on CPU %ld, so the interrupt is taken as spurious or runs another IRQ's handler (a migration that did not reach the device, or a table written behind Linux's back)",
			 q->irq, m->vector, cpu, m->dest_id, q->affinity, cpu);
}

/* Can Linux's IRQs of @d be matched to MSI-X entries at all? */
static bool check_irqs_indexed(const struct inspect_dev *d)
{
	for (size_t i = 0; i < d->n_msix_irqs; i++)
		if (!d->msix_irqs[i].index_known)
			return false;
	return true;
}

/* The MSI-X table, entry by entry (live mode). */
static int check_table(struct inspect_report *rep, const struct inspect_dev *d,
		       struct check_cov *cov)
{
	const struct umsi_msix_cap *x = &d->msix;
	bool indexed;

	if (!x->enabled)
		return 0;
	if (!d->entries) {
		/* A dump never has them: the dump note says so. */
		if (rep->live)
			cov->tables_unread++;
		return 0;
	}
	indexed = d->linux_known && check_irqs_indexed(d);
	if (d->linux_known && !indexed)
		cov->index_unknown++;
	for (uint32_t i = 0; i < x->table_size; i++) {
		const struct inspect_msix_entry *e = &d->entries[i];
		bool masked = e->ctrl & UMSI_MSIX_CTRL_MASKBIT;

		if (e->pending && (masked || x->function_mask) &&
		    check_add(rep, d, "pending-masked", true, (int32_t)i,
			      "Pending bit set while the %s is set: an interrupt is waiting that will not be taken while the mask stays set",
			      masked ? "entry's Mask bit" : "Function Mask"))
			return -1;
		if (masked)
			continue;
		if (indexed && !e->irq) {
			int r;

			if (check_has_vector(&e->msg))
				r = check_add(rep, d, "unowned-entry", true, (int32_t)i,
					      "the entry is unmasked but no IRQ of Linux owns it: what the device sends through it goes to vector 0x%02x of APIC ID 0x%x, where no handler of this function waits (a lost or spurious interrupt, or another IRQ's handler run)",
					      e->msg.vector, e->msg.dest_id);
			else
				r = check_add(rep, d, "unowned-entry", true, (int32_t)i,
					      "the entry is unmasked but no IRQ of Linux owns it: the device can send through it to whatever its stale address 0x%llx and data 0x%x say",
					      (unsigned long long)e->address, e->data);
			if (r)
				return -1;
		}
		if (e->irq && check_affinity(rep, d, true, (int32_t)i, &e->msg,
					     e->irq, cov))
			return -1;
	}
	return 0;
}

/* MSI: one message for every IRQ of the block (live mode). */
static int check_msi_affinity(struct inspect_report *rep,
			      const struct inspect_dev *d,
			      struct check_cov *cov)
{
	if (!d->has_msi || !d->msi.enabled)
		return 0;
	for (size_t i = 0; i < d->n_msi_irqs; i++) {
		const struct inspect_irq *q = &d->msi_irqs[i];

		if (check_affinity(rep, d, false,
				   q->index_known ? (int32_t)q->index : -1,
				   &d->msi_msg, q, cov))
			return -1;
	}
	return 0;
}

static int check_push(struct check_sender **s, size_t *n, size_t *cap,
		      const struct check_sender *v)
{
	if (*n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 64;
		struct check_sender *p = realloc(*s, ncap * sizeof(*p));

		if (!p)
			return -1;
		*s = p;
		*cap = ncap;
	}
	(*s)[(*n)++] = *v;
	return 0;
}

/* Every (destination, vector) each function can send now. */
static int check_senders(const struct inspect_report *rep,
			 struct check_sender **s, size_t *n,
			 struct check_cov *cov)
{
	size_t cap = 0;

	for (size_t k = 0; k < rep->ndevs; k++) {
		const struct inspect_dev *d = &rep->devs[k];
		struct check_sender v = { .dev = k };

		if (d->has_msi && d->msi.enabled && d->msi_msg.remapped)
			cov->remapped++;
		if (d->has_msi && d->msi.enabled && check_has_vector(&d->msi_msg)) {
			unsigned cnt = check_msi_count(d);
			uint8_t base = (uint8_t)(d->msi_msg.vector & ~(cnt - 1));

			v.dest = d->msi_msg.dest_id;
			v.logical = d->msi_msg.logical;
			v.msix = false;
			/* The function sets the low data bits itself. */
			for (unsigned i = 0; i < cnt; i++) {
				v.vector = (uint8_t)(base + i);
				v.entry = i;
				if (check_push(s, n, &cap, &v))
					return -1;
			}
		}
		if (!d->has_msix || !d->msix.enabled || !d->entries)
			continue;
		for (uint32_t i = 0; i < d->msix.table_size; i++) {
			const struct inspect_msix_entry *e = &d->entries[i];

			if (e->ctrl & UMSI_MSIX_CTRL_MASKBIT)
				continue;
			if (e->msg.valid && e->msg.remapped)
				cov->remapped++;
			if (!check_has_vector(&e->msg))
				continue;
			v.dest = e->msg.dest_id;
			v.logical = e->msg.logical;
			v.vector = e->msg.vector;
			v.msix = true;
			v.entry = i;
			if (check_push(s, n, &cap, &v))
				return -1;
		}
	}
	return 0;
}

static int check_cmp_sender(const void *a, const void *b)
{
	const struct check_sender *x = a, *y = b;

	if (x->logical != y->logical)
		return x->logical ? 1 : -1;
	if (x->dest != y->dest)
		return x->dest < y->dest ? -1 : 1;
	if (x->vector != y->vector)
		return x->vector < y->vector ? -1 : 1;
	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	if (x->msix != y->msix)
		return x->msix ? 1 : -1;
	return x->entry < y->entry ? -1 : x->entry > y->entry;
}

static bool check_same_target(const struct check_sender *a,
			const struct check_sender *b)
{
	return a->logical == b->logical && a->dest == b->dest &&
	       a->vector == b->vector;
}

/*
 * Two functions sending one (destination, vector): without remapping the
 * CPU sees one vector, so Linux runs one IRQ's handler for both.
 */
static int check_same_message(struct inspect_report *rep,
			      struct check_cov *cov)
{
	struct check_sender *s = NULL;
	size_t n = 0;
	int ret = -1;

	if (check_senders(rep, &s, &n, cov))
		goto out;
	if (n)
		qsort(s, n, sizeof(*s), check_cmp_sender);
	for (size_t g = 0, end; g < n; g = end) {
		for (end = g + 1; end < n && check_same_target(&s[g], &s[end]); end++)
			;
		/* Sorted by function within the group: more than one? */
		if (s[g].dev == s[end - 1].dev)
			continue;
		for (size_t i = g; i < end; i++) {
			const struct check_sender *o = NULL;
			const struct inspect_dev *od;
			char other[40];

			for (size_t j = g; j < end && !o; j++)
				if (s[j].dev != s[i].dev)
					o = &s[j];
			od = &rep->devs[o->dev];
			inspect_bdf_str(od->bdf, other);
			/* Two functions at one address: say which. */
			if (od->line && check_repeated(rep, od->bdf))
				snprintf(other + strlen(other),
					 sizeof(other) - strlen(other),
					 " (line %u)", od->line);
			if (check_add(rep, &rep->devs[s[i].dev], "same-message",
				      s[i].msix, (int32_t)s[i].entry,
				      "sends vector 0x%02x to %s APIC ID 0x%x, as %s %s %u does, without interrupt remapping: the CPU cannot tell the two apart, so one IRQ's handler runs for both functions and the other's interrupts go unserved",
				      s[i].vector, s[i].logical ? "logical" : "physical",
				      s[i].dest, other,
				      o->msix ? "MSI-X entry" : "MSI message",
				      o->entry))
				goto out;
		}
	}
	ret = 0;
out:
	free(s);
	return ret;
}

/* Say what could not be judged, so that silence means "checked". */
static void check_coverage(struct inspect_report *rep,
			   const struct check_cov *cov)
{
	if (!rep->live)
		check_note(rep, "a dump holds configuration space only: MSI-X entries (unmasked without an IRQ, pending while masked, the same message as another function) and each message's destination against its IRQ's affinity need a live machine; checked here: Bus Master, Function Mask, Multiple Message Enable, MSI pending while masked, MSI messages sent by two functions");
	if (cov->short_cfg)
		check_note(rep, "%zu function%s: only the first 64 bytes of configuration space could be read (%s), so %s not checked",
			   cov->short_cfg, cov->short_cfg == 1 ? "" : "s",
			   rep->live ? "run as root" : "an lspci -x dump",
			   cov->short_cfg == 1 ? "it is" : "they are");
	if (cov->tables_unread)
		check_note(rep, "the MSI-X tables of %zu function%s with MSI-X enabled could not be read (umsi inspect says why): their entries are not checked",
			   cov->tables_unread, cov->tables_unread == 1 ? "" : "s");
	if (cov->index_unknown)
		check_note(rep, "%zu function%s have IRQs whose MSI-X entry /proc/interrupts does not name: their entries are not checked for an owner",
			   cov->index_unknown, cov->index_unknown == 1 ? "" : "s");
	if (cov->remapped)
		check_note(rep, "%zu message%s use%s the remappable format: destination and vector are in the IOMMU's remapping table, which is not read, so they are not compared with affinity or with other functions' messages",
			   cov->remapped, cov->remapped == 1 ? "" : "s",
			   cov->remapped == 1 ? "s" : "");
	if (cov->logical)
		check_note(rep, "%zu message%s use%s logical destination mode and %s not compared with affinity: which CPUs a logical destination names is not known here: %s",
			   cov->logical, cov->logical == 1 ? "" : "s",
			   cov->logical == 1 ? "s" : "",
			   cov->logical == 1 ? "is" : "are", cov->lm.how);
	if (cov->logical_either)
		check_note(rep, "%zu message%s use%s logical destinations that the xAPIC flat model and the x2APIC cluster model read as different CPUs, and which of the two Linux uses is not known here, so %s not compared with affinity: %s",
			   cov->logical_either, cov->logical_either == 1 ? "" : "s",
			   cov->logical_either == 1 ? "s" : "",
			   cov->logical_either == 1 ? "it is" : "they are",
			   cov->lm.how);
	if (cov->no_apics)
		check_note(rep, "/proc/cpuinfo names no APIC IDs: the destinations of %zu message%s are not compared with affinity",
			   cov->no_apics, cov->no_apics == 1 ? "" : "s");
	if (cov->no_affinity)
		check_note(rep, "%zu IRQ%s without a readable effective_affinity_list: %s destination not compared with it",
			   cov->no_affinity, cov->no_affinity == 1 ? "" : "s",
			   cov->no_affinity == 1 ? "its" : "their");
}

/* Findings in address order, then MSI before MSI-X, then by entry. */
static int check_cmp_finding(const void *a, const void *b)
{
	const struct inspect_finding *x = a, *y = b;
	int c;

	if (x->bdf != y->bdf)
		return x->bdf < y->bdf ? -1 : 1;
	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	if (x->msix != y->msix)
		return x->msix ? 1 : -1;
	if (x->entry != y->entry)
		return x->entry < y->entry ? -1 : 1;
	c = strcmp(x->check, y->check);
	return c ? c : strcmp(x->message, y->message);
}

int inspect_check(struct inspect_report *rep)
{
	struct check_cov cov = { 0 };

	rep->checked = true;
	if (rep->live)
		inspect_logical_model(rep, &cov.lm);
	for (size_t k = 0; k < rep->ndevs; k++) {
		const struct inspect_dev *d = &rep->devs[k];

		if (d->cfg_short) {
			cov.short_cfg++;
			continue;
		}
		rep->check_fns++;
		if (check_registers(rep, d))
			return -1;
		if (d->has_msix && check_table(rep, d, &cov))
			return -1;
		if (check_msi_affinity(rep, d, &cov))
			return -1;
	}
	if (check_same_message(rep, &cov))
		return -1;
	if (rep->nfindings)
		qsort(rep->findings, rep->nfindings, sizeof(*rep->findings),
		      check_cmp_finding);
	check_coverage(rep, &cov);
	return 0;
}

/*
 * Does the dump give @bdf more than once? Then its lines tell the
 * functions apart. The devices are in address order.
 */
static bool check_repeated(const struct inspect_report *rep, umsi_bdf_t bdf)
{
	size_t lo = 0, hi = rep->ndevs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (rep->devs[mid].bdf < bdf)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo + 1 < rep->ndevs && rep->devs[lo].bdf == bdf &&
	       rep->devs[lo + 1].bdf == bdf;
}

void inspect_write_check_text(FILE *f, const struct inspect_report *rep)
{
	size_t fns = 0;

	for (size_t i = 0; i < rep->nfindings; i++) {
		const struct inspect_finding *x = &rep->findings[i];
		char bdf[16], where[40], line[24] = "";

		inspect_bdf_str(x->bdf, bdf);
		if (x->line && check_repeated(rep, x->bdf))
			snprintf(line, sizeof(line), " (line %u)", x->line);
		if (x->entry >= 0)
			snprintf(where, sizeof(where), "%s %d",
				 x->msix ? "MSI-X entry" : "MSI message",
				 (int)x->entry);
		else
			snprintf(where, sizeof(where), "%s",
				 x->msix ? "MSI-X" : "MSI");
		fprintf(f, "%s%s %s [%s]: %s\n", bdf, line, where, x->check,
			x->message);
		if (!i || x->bdf != rep->findings[i - 1].bdf ||
		    x->line != rep->findings[i - 1].line)
			fns++;
	}
	for (size_t i = 0; i < rep->nerrs; i++) {
		const struct inspect_err *e = &rep->errs[i];

		fprintf(f, "error: %s%s%s\n", e->bdf, e->bdf[0] ? ": " : "",
			e->message);
	}
	for (size_t i = 0; i < rep->nnotes; i++)
		fprintf(f, "note: %s\n", rep->notes[i]);
	for (size_t i = 0; i < rep->ncheck_notes; i++)
		fprintf(f, "not checked: %s\n", rep->check_notes[i]);
	if (rep->nfindings)
		fprintf(f, "check: %zu finding%s in %zu function%s; %zu function%s checked\n",
			rep->nfindings, rep->nfindings == 1 ? "" : "s", fns,
			fns == 1 ? "" : "s", rep->check_fns,
			rep->check_fns == 1 ? "" : "s");
	else
		fprintf(f, "check: no findings; %zu function%s checked\n",
			rep->check_fns, rep->check_fns == 1 ? "" : "s");
}
