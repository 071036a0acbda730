/* SPDX-License-Identifier: MIT */
/*
 * The text of the sysfs and procfs files live mode reads, parsed without
 * any I/O so that the fuzzer (tests/fuzz/fuzz_livetext.c) can hand them
 * anything: /proc/interrupts, /proc/cpuinfo, the sysfs `resource` file,
 * debugfs IRQ files, the lockdown file, effective_affinity_list, the
 * names of /sys/bus/pci/devices and msi_irqs entries.
 *
 * The kernel writes these files, but --sysroot reads any tree, so they
 * are treated as untrusted: every number is range-checked before use,
 * every copy is bounded, and memory grows with the input's length, never
 * with a product of two numbers read from it.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "inspect.h"

static const char *skip_ws(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

/* A decimal number of at most @max; *@end after it. */
static bool dec(const char *s, unsigned long long max, unsigned long long *v,
		const char **end)
{
	char *e;

	if (!isdigit((unsigned char)*s))
		return false;
	errno = 0;
	*v = strtoull(s, &e, 10);
	if (errno || *v > max)
		return false;
	if (end)
		*end = e;
	return true;
}

bool inspect_parse_irq_number(const char *s, int *irq)
{
	unsigned long long v;
	const char *end;

	if (!dec(s, INT_MAX, &v, &end) || *end)
		return false;
	*irq = (int)v;
	return true;
}

/* The header line: one column per "CPUn". */
static int parse_cpu_columns(const char *line, struct inspect_proc_interrupts *pi)
{
	const char *s = line;

	while ((s = strstr(s, "CPU"))) {
		unsigned long long cpu;
		unsigned *nc;

		s += 3;
		if (!dec(s, UINT_MAX, &cpu, &s))
			continue;
		if (pi->ncpus >= INSPECT_MAX_CPUS)
			break;
		nc = realloc(pi->cpus, (pi->ncpus + 1) * sizeof(*nc));
		if (!nc)
			return -1;
		pi->cpus = nc;
		pi->cpus[pi->ncpus++] = (unsigned)cpu;
	}
	return 0;
}

/*
 * One numbered line: "N: count... chip [hwirq[-trigger]] handlers".
 * @scratch holds pi->ncpus counts. Return 1 for a line kept, 0 for one
 * that is not an IRQ line, -1 when out of memory.
 */
static int parse_irq_line(const char *s, struct inspect_proc_interrupts *pi,
			  uint64_t *scratch, struct inspect_proc_irq *q)
{
	unsigned long long v;
	size_t n;

	memset(q, 0, sizeof(*q));
	s = skip_ws(s);
	if (!dec(s, INT_MAX, &v, &s) || *s != ':')
		return 0;       /* NMI:, LOC:, ERR:, ... or out of range */
	q->irq = (int)v;
	s++;
	for (q->ncounts = 0; q->ncounts < pi->ncpus; q->ncounts++) {
		s = skip_ws(s);
		char *e;

		if (!isdigit((unsigned char)*s))
			break;
		/* A count past 64 bits reads as the largest there is. */
		scratch[q->ncounts] = strtoull(s, &e, 10);
		s = e;
	}
	if (q->ncounts) {
		q->counts = malloc(q->ncounts * sizeof(*q->counts));
		if (!q->counts)
			return -1;
		memcpy(q->counts, scratch, q->ncounts * sizeof(*q->counts));
	}
	s = skip_ws(s);
	n = strcspn(s, " \t");
	snprintf(q->chip, sizeof(q->chip), "%.*s", (int)(n < 63 ? n : 63), s);
	s = skip_ws(s + n);
	if (dec(s, ULONG_MAX, &v, &s)) {
		q->has_hwirq = true;
		q->hwirq = (unsigned long)v;
	}
	s += strcspn(s, " \t");         /* the rest of "-edge" */
	s = skip_ws(s);
	snprintf(q->actions, sizeof(q->actions), "%s", s);
	return 1;
}

int inspect_parse_interrupts(const char *text, size_t len,
			     struct inspect_proc_interrupts *pi)
{
	char *copy = malloc(len + 1), *line, *save = NULL;
	uint64_t *scratch = NULL;
	size_t cap = 0;
	int ret = -1;

	memset(pi, 0, sizeof(*pi));
	if (!copy)
		return -1;
	memcpy(copy, text, len);
	copy[len] = '\0';       /* a NUL inside ends the text */
	line = strtok_r(copy, "\n", &save);
	if (line && parse_cpu_columns(line, pi))
		goto out;
	scratch = calloc(pi->ncpus ? pi->ncpus : 1, sizeof(*scratch));
	if (!scratch)
		goto out;
	while ((line = strtok_r(NULL, "\n", &save))) {
		struct inspect_proc_irq q;
		int r = parse_irq_line(line, pi, scratch, &q);

		if (r < 0)
			goto out;
		if (!r)
			continue;
		if (pi->nirqs == cap) {
			size_t ncap = cap ? cap * 2 : 64;
			struct inspect_proc_irq *ni = realloc(pi->irqs,
							      ncap * sizeof(*ni));

			if (!ni) {
				free(q.counts);
				goto out;
			}
			pi->irqs = ni;
			cap = ncap;
		}
		pi->irqs[pi->nirqs++] = q;
	}
	ret = 0;
out:
	free(copy);
	free(scratch);
	if (ret)
		inspect_proc_interrupts_free(pi);
	return ret;
}

void inspect_proc_interrupts_free(struct inspect_proc_interrupts *pi)
{
	for (size_t i = 0; i < pi->nirqs; i++)
		free(pi->irqs[i].counts);
	free(pi->irqs);
	free(pi->cpus);
	memset(pi, 0, sizeof(*pi));
}

const struct inspect_proc_irq *
inspect_find_proc_irq(const struct inspect_proc_interrupts *pi, int irq)
{
	for (size_t i = 0; i < pi->nirqs; i++)
		if (pi->irqs[i].irq == irq)
			return &pi->irqs[i];
	return NULL;
}

bool inspect_irq_index(const struct inspect_proc_irq *q, umsi_bdf_t bdf,
		       uint32_t *index)
{
	const char *c = q->chip;
	char name[16];

	if (!q->has_hwirq)
		return false;
	if (!strncmp(c, "IR-", 3))
		c += 3;
	inspect_bdf_str(bdf, name);
	if ((!strncmp(c, "PCI-MSIX-", 9) && !strcmp(c + 9, name)) ||
	    (!strncmp(c, "PCI-MSI-", 8) && !strcmp(c + 8, name))) {
		/* An MSI-X table has at most 2048 entries, MSI 32. */
		if (q->hwirq >= 2048)
			return false;
		*index = (uint32_t)q->hwirq;
		return true;
	}
	/* Linux 6.1: domain << 27 | bus << 19 | devfn << 11 | entry. */
	if (!strcmp(c, "PCI-MSI") &&
	    ((q->hwirq >> 11) & 0xffff) == (bdf & 0xffff) &&
	    ((q->hwirq >> 27) & 0xffff) == UMSI_BDF_SEG(bdf)) {
		*index = (uint32_t)(q->hwirq & 0x7ff);
		return true;
	}
	return false;
}

/* The number after @key ("Vector:", "Target:"), or -1. */
static int debugfs_field(const char *text, const char *key, int max)
{
	const char *s = strstr(text, key);
	unsigned long long v;

	if (!s)
		return -1;
	s = skip_ws(s + strlen(key));
	return dec(s, (unsigned long long)max, &v, NULL) ? (int)v : -1;
}

void inspect_parse_debugfs_irq(const char *text, int *vector, int *target)
{
	*vector = debugfs_field(text, "Vector:", 255);
	*target = debugfs_field(text, "Target:", INT_MAX);
}

void inspect_parse_resources(const char *text, uint64_t start[6],
			     uint64_t size[6])
{
	const char *s = text;

	memset(start, 0, 6 * sizeof(*start));
	memset(size, 0, 6 * sizeof(*size));
	for (int i = 0; i < 6 && *s; i++) {
		unsigned long long a, b, fl;

		/* "0x%016llx 0x%016llx 0x%016llx": start, end, flags. */
		if (sscanf(s, "%llx %llx %llx", &a, &b, &fl) == 3 && b > a &&
		    b - a < UINT64_MAX) {
			start[i] = a;
			size[i] = b - a + 1;
		}
		s = strchr(s, '\n');
		if (!s)
			break;
		s++;
	}
}

void inspect_parse_lockdown(const char *text, char *mode, size_t n)
{
	const char *a = strchr(text, '['), *b = a ? strchr(a, ']') : NULL;

	mode[0] = '\0';
	if (a && b && strncmp(a, "[none]", 6))
		snprintf(mode, n, "%.*s", (int)(b - a - 1 < 63 ? b - a - 1 : 63),
			 a + 1);
}

bool inspect_parse_sysfs_name(const char *s, umsi_bdf_t *bdf)
{
	/* dddd:bb:dd.f exactly, as sysfs names PCI functions: '#' a hex
	 * digit (no sign, no 0x: sscanf's %x would take both). */
	static const char fmt[] = "####:##:##.#";
	unsigned v[4] = { 0 }, k = 0;

	if (strlen(s) != sizeof(fmt) - 1)
		return false;
	for (size_t i = 0; fmt[i]; i++) {
		if (fmt[i] != '#') {
			if (s[i] != fmt[i])
				return false;
			k++;
			continue;
		}
		if (inspect_hexval(s[i]) < 0)
			return false;
		v[k] = v[k] << 4 | (unsigned)inspect_hexval(s[i]);
	}
	if (v[2] > 0x1f || v[3] > 7)
		return false;
	*bdf = UMSI_BDF(v[0], v[1], v[2], v[3]);
	return true;
}

bool inspect_parse_cpulist(const char *text, char *out, size_t n)
{
	size_t len = strcspn(text, "\n");
	const char *s = text, *end = text + len;

	/* "0-3,8,10-11": numbers, ranges, commas; nothing else. */
	if (!len || len >= n)
		goto bad;
	while (s < end) {
		unsigned long long a, b;

		if (!dec(s, UINT_MAX, &a, &s) || s > end)
			goto bad;
		if (*s == '-') {
			if (!dec(s + 1, UINT_MAX, &b, &s) || s > end || b < a)
				goto bad;
		}
		if (s < end && *s++ != ',')
			goto bad;
		if (s == end && s[-1] == ',')
			goto bad;
	}
	memcpy(out, text, len);
	out[len] = '\0';
	return true;
bad:
	if (n)
		out[0] = '\0';
	return false;
}

bool inspect_cpulist_has(const char *list, unsigned cpu)
{
	const char *s = list;

	while (*s) {
		unsigned long long a, b;

		if (!dec(s, UINT_MAX, &a, &s))
			return false;
		b = a;
		if (*s == '-' && !dec(s + 1, UINT_MAX, &b, &s))
			return false;
		if (cpu >= a && cpu <= b)
			return true;
		if (*s != ',')
			return false;
		s++;
	}
	return false;
}

/* "key : value": the key (trailing blanks dropped) and the value. */
static bool cpuinfo_field(char *line, const char **key, const char **val)
{
	char *colon = strchr(line, ':'), *e;

	if (!colon)
		return false;
	for (e = colon; e > line && (e[-1] == ' ' || e[-1] == '\t'); e--)
		;
	*e = '\0';
	*key = line;
	*val = skip_ws(colon + 1);
	return true;
}

static int cpuinfo_cmp_apic(const void *a, const void *b)
{
	const struct inspect_apic *x = a, *y = b;

	if (x->apic_id != y->apic_id)
		return x->apic_id < y->apic_id ? -1 : 1;
	return x->cpu < y->cpu ? -1 : x->cpu > y->cpu;
}

/* Does the "flags" value hold the word @w? */
static bool cpuinfo_has_word(const char *val, const char *w)
{
	size_t n = strlen(w);

	for (const char *s = val; *s; ) {
		size_t len;

		s = skip_ws(s);
		len = strcspn(s, " \t");
		if (len == n && !strncmp(s, w, n))
			return true;
		s += len;
	}
	return false;
}

/* Room for one more CPU in @a; false when out of memory. */
static bool cpuinfo_grow(struct inspect_apic **a, size_t k, size_t *cap)
{
	struct inspect_apic *na;
	size_t ncap;

	if (k < *cap)
		return true;
	ncap = *cap ? *cap * 2 : 64;
	na = realloc(*a, ncap * sizeof(*na));
	if (!na)
		return false;
	*a = na;
	*cap = ncap;
	return true;
}

int inspect_parse_cpuinfo(const char *text, size_t len,
			  struct inspect_apic **out, size_t *n)
{
	char *copy = malloc(len + 1), *line, *save = NULL;
	struct inspect_apic *a = NULL;
	size_t cap = 0, k = 0, cur = SIZE_MAX;
	unsigned long long cpu = 0, v;
	bool in_cpu = false, flags_seen = false, x2apic = false;

	*out = NULL;
	*n = 0;
	if (!copy)
		return -1;
	memcpy(copy, text, len);
	copy[len] = '\0';
	for (line = strtok_r(copy, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		const char *key, *val;

		if (!cpuinfo_field(line, &key, &val))
			continue;
		if (!strcmp(key, "processor")) {
			in_cpu = dec(val, UINT_MAX, &cpu, NULL);
			cur = SIZE_MAX;
			flags_seen = x2apic = false;
			continue;
		}
		/*
		 * "flags" comes after "apicid" in Linux's x86 cpuinfo; either
		 * order is taken: the block's CPU gets it.
		 */
		if (!strcmp(key, "flags")) {
			flags_seen = true;
			x2apic = cpuinfo_has_word(val, "x2apic");
			if (cur != SIZE_MAX) {
				a[cur].flags_seen = true;
				a[cur].x2apic = x2apic;
			}
			continue;
		}
		/* The first apicid of the block; "initial apicid" is not it. */
		if (!in_cpu || strcmp(key, "apicid") ||
		    !dec(val, UINT32_MAX, &v, NULL))
			continue;
		in_cpu = false;
		if (!cpuinfo_grow(&a, k, &cap)) {
			free(a);
			free(copy);
			return -1;
		}
		a[k] = (struct inspect_apic){
			.cpu = (unsigned)cpu, .apic_id = (uint32_t)v,
			.flags_seen = flags_seen, .x2apic = x2apic,
		};
		cur = k++;
	}
	free(copy);
	if (!k) {
		free(a);
		return 0;
	}
	qsort(a, k, sizeof(*a), cpuinfo_cmp_apic);
	*out = a;
	*n = k;
	return 0;
}

bool inspect_cpulist_stats(const char *list, unsigned *count, unsigned *max)
{
	unsigned long long total = 0, top = 0;
	const char *s = list;

	while (*s) {
		unsigned long long a, b;

		if (!dec(s, UINT_MAX, &a, &s))
			return false;
		b = a;
		if (*s == '-' && !dec(s + 1, UINT_MAX, &b, &s))
			return false;
		if (b < a)
			return false;
		total += b - a + 1;
		if (b > top)
			top = b;
		if (!*s)
			break;
		if (*s++ != ',')
			return false;
	}
	if (s == list)
		return false;
	*count = total > UINT_MAX ? UINT_MAX : (unsigned)total;
	*max = (unsigned)top;
	return true;
}

bool inspect_parse_int_line(const char *text, int *v)
{
	unsigned long long u;
	const char *s = text, *end;
	bool neg = *s == '-';

	if (neg)
		s++;
	if (!dec(s, neg ? (unsigned long long)INT_MAX + 1 : INT_MAX, &u, &end))
		return false;
	if (*end == '\n')
		end++;
	if (*end)
		return false;
	*v = neg ? (int)(-(long long)u) : (int)u;
	return true;
}

/*
 * A bitmap list as Linux's %*pbl prints it ("0-19,21,50", or nothing for
 * an empty map), every bit below INSPECT_NVEC, into @bits.
 */
static bool vector_list(const char *s, uint64_t bits[INSPECT_NVEC / 64])
{
	memset(bits, 0, INSPECT_NVEC / 8);
	while (*s) {
		unsigned long long a, b;

		if (!dec(s, INSPECT_NVEC - 1, &a, &s))
			return false;
		b = a;
		if (*s == '-' && !dec(s + 1, INSPECT_NVEC - 1, &b, &s))
			return false;
		if (b < a)
			return false;
		for (unsigned long long v = a; v <= b; v++)
			bits[v / 64] |= 1ull << (v % 64);
		if (!*s)
			break;
		if (*s++ != ',' || !*s)
			return false;
	}
	return true;
}

/* The columns of "| CPU | avl | man | mac | act | vectors": how many. */
static unsigned vector_header(const char *line)
{
	char name[16];
	unsigned n = 0;
	bool cpu_first = false, vectors_last = false;

	for (const char *s = strchr(line, '|'); s; s = strchr(s, '|')) {
		size_t len;

		s = skip_ws(s + 1);
		len = strcspn(s, "| \t");
		if (!len)
			continue;
		snprintf(name, sizeof(name), "%.*s", (int)(len < 15 ? len : 15), s);
		if (!n)
			cpu_first = !strcmp(name, "CPU");
		vectors_last = !strcmp(name, "vectors");
		n++;
		s += len;
	}
	return cpu_first && vectors_last && n >= 3 && n <= 8 ? n : 0;
}

/*
 * One row of the table, "  0   192     1     0    11  33-43": @nnum
 * numbers (the first the CPU), then the CPU's vectors in use. Return:
 * true and @c filled for a well-formed row.
 */
static bool vector_row(char *line, unsigned nnum, struct inspect_vector_cpu *c)
{
	char *save = NULL, *tok;
	unsigned long long v;
	unsigned k = 0;
	const char *list = "";

	for (tok = strtok_r(line, " \t", &save); tok;
	     tok = strtok_r(NULL, " \t", &save)) {
		if (k < nnum) {
			if (!dec(tok, k ? UINT_MAX : INT_MAX, &v, NULL) ||
			    tok[strspn(tok, "0123456789")])
				return false;
			if (!k)
				c->cpu = (unsigned)v;
		} else if (k == nnum) {
			list = tok;
		} else {
			return false;
		}
		k++;
	}
	return k >= nnum && vector_list(list, c->alloc);
}

/* By CPU; a CPU given twice by its bitmap, so the order is total. */
static int vector_cmp_cpu(const void *a, const void *b)
{
	const struct inspect_vector_cpu *x = a, *y = b;

	if (x->cpu != y->cpu)
		return x->cpu < y->cpu ? -1 : 1;
	return memcmp(x->alloc, y->alloc, sizeof(x->alloc));
}

int inspect_parse_vector_domain(const char *text, size_t len,
				struct inspect_vector_domain *vd)
{
	char *copy = malloc(len + 1), *line, *save = NULL;
	size_t cap = 0;
	unsigned nnum = 0;
	bool system = false;
	int ret = -1;

	memset(vd, 0, sizeof(*vd));
	if (!copy)
		return -1;
	memcpy(copy, text, len);
	copy[len] = '\0';
	for (line = strtok_r(copy, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		const char *s = skip_ws(line);
		struct inspect_vector_cpu c;
		unsigned long long nsys;

		/* "System: 38: 0-19,21,50,128,236,243-244,246-255" */
		if (!strncmp(s, "System:", 7)) {
			s = skip_ws(s + 7);
			if (!dec(s, INSPECT_NVEC, &nsys, &s) || *s != ':')
				continue;
			s = skip_ws(s + 1);
			system = vector_list(s, vd->system);
			continue;
		}
		if (strchr(s, '|')) {
			nnum = vector_header(s);
			if (nnum)
				nnum--;
			continue;
		}
		if (!nnum || !vector_row(line, nnum, &c))
			continue;
		if (vd->ncpus == cap) {
			size_t ncap = cap ? cap * 2 : 64;
			struct inspect_vector_cpu *nc = realloc(vd->cpus,
							ncap * sizeof(*nc));

			if (!nc)
				goto out;
			vd->cpus = nc;
			cap = ncap;
		}
		vd->cpus[vd->ncpus++] = c;
	}
	if (!system || !vd->ncpus) {
		ret = 1;
		goto out;
	}
	/* A CPU given twice (a broken file) is kept once. */
	qsort(vd->cpus, vd->ncpus, sizeof(*vd->cpus), vector_cmp_cpu);
	{
		size_t k = 1;

		for (size_t i = 1; i < vd->ncpus; i++)
			if (vd->cpus[i].cpu != vd->cpus[k - 1].cpu)
				vd->cpus[k++] = vd->cpus[i];
		vd->ncpus = k;
	}
	free(copy);
	return 0;
out:
	free(copy);
	inspect_vector_domain_free(vd);
	return ret;
}

void inspect_vector_domain_free(struct inspect_vector_domain *vd)
{
	free(vd->cpus);
	memset(vd, 0, sizeof(*vd));
}

const struct inspect_vector_cpu *
inspect_vector_domain_cpu(const struct inspect_vector_domain *vd, unsigned cpu)
{
	size_t lo = 0, hi = vd->ncpus;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (vd->cpus[mid].cpu < cpu)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < vd->ncpus && vd->cpus[lo].cpu == cpu ? &vd->cpus[lo] : NULL;
}
