/* SPDX-License-Identifier: MIT */
/*
 * The `umsi sim` machine-file parser (docs/sim-format.md).
 *
 * The input is untrusted. A line is cut into at most SIM_MAX_WORDS words
 * and one more is an error, not a silent cut; every number is parsed
 * against its limit before it takes part in any arithmetic; sums are
 * 64-bit and checked at each addition; a keyword that sets something once
 * (cpus, cmdline, a device's settings) refuses to be given twice rather
 * than let the second win unseen. Every error names the file and line,
 * with bytes that would not print shown as \xNN, and frees what was built.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <umsi/host.h>

#include "simparse.h"

struct sim_parser {
	struct sim_spec *sp;
	const char *file;
	unsigned line;          /* 0 while no line is being read */
	char *err;
	size_t errlen;
	char **tok;             /* SIM_MAX_WORDS of them */
	unsigned n;             /* words on the current line */
};

static int sim_fail(struct sim_parser *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Record "FILE:LINE: message" and return -1. */
static int sim_fail(struct sim_parser *p, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!p->errlen)
		return -1;
	if (p->line)
		n = snprintf(p->err, p->errlen, "%s:%u: ", p->file, p->line);
	else
		n = snprintf(p->err, p->errlen, "%s: ", p->file);
	if (n < 0 || (size_t)n >= p->errlen)
		return -1;
	va_start(ap, fmt);
	vsnprintf(p->err + n, p->errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}

#define SIM_QUOTE_LEN 80

/*
 * A word from the file as it may appear in a message: printable ASCII as
 * is, any other byte as \xNN (no terminal control sequences from a
 * file), cut with "..." after about 48 characters.
 */
static const char *sim_quote(const char *s, char buf[SIM_QUOTE_LEN])
{
	size_t o = 0;

	for (; *s && o + 8 < SIM_QUOTE_LEN; s++) {
		unsigned char c = (unsigned char)*s;

		if (o >= 48) {
			memcpy(buf + o, "...", 3);
			o += 3;
			break;
		}
		if (c >= 0x20 && c < 0x7f)
			buf[o++] = (char)c;
		else
			o += (size_t)snprintf(buf + o, SIM_QUOTE_LEN - o,
					      "\\x%02x", c);
	}
	buf[o] = '\0';
	return buf;
}

/*
 * An unsigned number: decimal, or hex after 0x. No sign, no spaces, no
 * octal (a leading 0 is just a digit), at most @max.
 */
static bool sim_uint(const char *s, unsigned long long max,
		     unsigned long long *out)
{
	unsigned long long v;
	int base = 10;
	char *end;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
		if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f') ||
		      (*s >= 'A' && *s <= 'F')))
			return false;
	} else if (*s < '0' || *s > '9') {
		return false;
	}
	errno = 0;
	v = strtoull(s, &end, base);
	if (errno || *end || v > max)
		return false;
	*out = v;
	return true;
}

/* Cut @s into words at spaces, tabs and carriage returns. */
static int sim_split(struct sim_parser *p, char *s)
{
	p->n = 0;
	for (;;) {
		while (*s == ' ' || *s == '\t' || *s == '\r')
			s++;
		if (!*s)
			return 0;
		if (p->n == SIM_MAX_WORDS)
			return sim_fail(p, "more than %u words on one line",
					SIM_MAX_WORDS);
		p->tok[p->n++] = s;
		while (*s && *s != ' ' && *s != '\t' && *s != '\r')
			s++;
		if (*s)
			*s++ = '\0';
	}
}

static int sim_cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* `cpus apic ID ID ...` */
static int sim_parse_apic_ids(struct sim_parser *p)
{
	struct sim_spec *sp = p->sp;
	unsigned n = p->n - 2;
	uint32_t *ids, *sorted;
	unsigned long long v;
	char q[SIM_QUOTE_LEN];

	if (n == 0)
		return sim_fail(p, "'cpus apic' needs at least one APIC ID");
	if (n > SIM_MAX_CPUS)
		return sim_fail(p, "%u CPUs; the simulator takes at most %u",
				n, SIM_MAX_CPUS);
	ids = calloc(n, sizeof(*ids));
	sorted = calloc(n, sizeof(*sorted));
	if (!ids || !sorted)
		goto nomem;
	for (unsigned i = 0; i < n; i++) {
		/* No CPU has 0xffffffff: x2APIC broadcasts to that ID. */
		if (!sim_uint(p->tok[i + 2], 0xfffffffeu, &v)) {
			sim_fail(p, "bad APIC ID '%s' (0 to 0xfffffffe; "
				 "0xffffffff is the x2APIC broadcast ID)",
				 sim_quote(p->tok[i + 2], q));
			goto fail;
		}
		ids[i] = (uint32_t)v;
	}
	/* Sorted, a duplicate sits next to its twin: O(n log n), not n^2. */
	memcpy(sorted, ids, n * sizeof(*ids));
	qsort(sorted, n, sizeof(*sorted), sim_cmp_u32);
	for (unsigned i = 1; i < n; i++) {
		if (sorted[i] == sorted[i - 1]) {
			sim_fail(p, "APIC ID %u listed twice", sorted[i]);
			goto fail;
		}
	}
	free(sorted);
	sp->apic_ids = ids;
	sp->ncpus = n;
	return 0;
nomem:
	sim_fail(p, "out of memory");
fail:
	free(ids);
	free(sorted);
	return -1;
}

/* `cpus N` or `cpus apic ID ...` */
static int sim_parse_cpus(struct sim_parser *p)
{
	struct sim_spec *sp = p->sp;
	unsigned long long v;
	int ret;

	if (sp->cpus_line)
		return sim_fail(p, "'cpus' given twice (lines %u and %u)",
				sp->cpus_line, p->line);
	if (p->n >= 2 && !strcmp(p->tok[1], "apic")) {
		ret = sim_parse_apic_ids(p);
	} else {
		if (p->n != 2 || !sim_uint(p->tok[1], ~0ull, &v) || !v)
			return sim_fail(p, "'cpus' takes a count (1-%u) or "
					"'apic' and a list of APIC IDs",
					SIM_MAX_CPUS);
		if (v > SIM_MAX_CPUS)
			return sim_fail(p, "%llu CPUs; the simulator takes at "
					"most %u", v, SIM_MAX_CPUS);
		sp->apic_ids = calloc((size_t)v, sizeof(uint32_t));
		if (!sp->apic_ids)
			return sim_fail(p, "out of memory");
		for (uint32_t i = 0; i < v; i++)
			sp->apic_ids[i] = i;
		sp->ncpus = (uint32_t)v;
		ret = 0;
	}
	if (!ret)
		sp->cpus_line = p->line;
	return ret;
}

/* `sockets N`: checked against the CPUs after the last line. */
static int sim_parse_sockets(struct sim_parser *p)
{
	struct sim_spec *sp = p->sp;
	unsigned long long v;
	char q[SIM_QUOTE_LEN];

	if (sp->sockets_line)
		return sim_fail(p, "'sockets' given twice (lines %u and %u)",
				sp->sockets_line, p->line);
	if (p->n != 2 || !sim_uint(p->tok[1], SIM_MAX_CPUS, &v) || !v)
		return sim_fail(p, "'sockets' takes a count (1-%u), not '%s'",
				SIM_MAX_CPUS,
				p->n >= 2 ? sim_quote(p->tok[1], q) : "");
	sp->sockets = (uint32_t)v;
	sp->sockets_line = p->line;
	return 0;
}

/*
 * After the last line: the CPUs split into the sockets evenly (a socket
 * is a run of CPUs of the cpus line, all runs the same length).
 */
static int sim_check_sockets(struct sim_parser *p)
{
	const struct sim_spec *sp = p->sp;

	if (!sp->sockets || sp->ncpus % sp->sockets == 0)
		return 0;
	p->line = sp->sockets_line;
	return sim_fail(p, "sockets %u: %u CPUs do not split into %u sockets "
			"of the same size", sp->sockets, sp->ncpus,
			sp->sockets);
}

/*
 * `num-ids=N` of `platform`: identities of an IMSIC file, 64k-1 from 63
 * to 2047 (AIA 1.0, 3.1).
 */
static int sim_parse_num_ids(struct sim_parser *p, const char *val)
{
	struct sim_spec *sp = p->sp;
	char q[SIM_QUOTE_LEN];
	unsigned long long v;

	if (sp->num_ids_line)
		return sim_fail(p, "'num-ids' given twice (lines %u and %u)",
				sp->num_ids_line, p->line);
	if (!sim_uint(val, 2047, &v) || v < 63 || (v + 1) % 64)
		return sim_fail(p, "num-ids=%s: an IMSIC file has 64k-1 "
				"identities, 63 to 2047 (63, 127, 191, ..., "
				"255, ..., 2047)", sim_quote(val, q));
	sp->num_ids = (uint32_t)v;
	sp->num_ids_line = p->line;
	return 0;
}

/* `platform FEATURE ...` */
static int sim_parse_platform(struct sim_parser *p)
{
	static const struct {
		const char *name;
		uint32_t flag;
	} feats[] = {
		{ "ext-dest-id", UMSI_PLAT_EXT_DEST_ID },
		{ "remap", UMSI_PLAT_IRQ_REMAP },
		{ "x2apic", UMSI_PLAT_X2APIC },
		{ "no-msi", UMSI_PLAT_NO_MSI },
		{ "isa-pic", UMSI_PLAT_ISA_PIC },
	};
	char q[SIM_QUOTE_LEN];

	if (p->n < 2)
		return sim_fail(p, "'platform' needs a feature (ext-dest-id, "
				"remap, x2apic, no-msi, isa-pic, imsic, aplic, "
				"its, gicv2m, vtd, amd-vi, num-ids=N, "
				"ioapics=N)");
	for (unsigned i = 1; i < p->n; i++) {
		size_t k;

		/* aplic: the IMSIC machine, named for its wired inputs (INTx
		 * through the APLIC in MSI mode). */
		if (!strcmp(p->tok[i], "imsic") || !strcmp(p->tok[i], "aplic")) {
			p->sp->imsic = true;
			if (!p->sp->imsic_line)
				p->sp->imsic_line = p->line;
			continue;
		}
		if (!strcmp(p->tok[i], "its")) {
			p->sp->its = true;
			if (!p->sp->its_line)
				p->sp->its_line = p->line;
			continue;
		}
		if (!strcmp(p->tok[i], "gicv2m")) {
			p->sp->gicv2m = true;
			if (!p->sp->gicv2m_line)
				p->sp->gicv2m_line = p->line;
			continue;
		}
		if (!strcmp(p->tok[i], "vtd")) {
			p->sp->vtd = true;
			if (!p->sp->vtd_line)
				p->sp->vtd_line = p->line;
			continue;
		}
		if (!strcmp(p->tok[i], "amd-vi")) {
			p->sp->amdvi = true;
			if (!p->sp->amdvi_line)
				p->sp->amdvi_line = p->line;
			continue;
		}
		if (!strncmp(p->tok[i], "num-ids=", 8)) {
			if (sim_parse_num_ids(p, p->tok[i] + 8))
				return -1;
			continue;
		}
		if (!strncmp(p->tok[i], "ioapics=", 8)) {
			unsigned long long v;

			if (p->sp->ioapics_line)
				return sim_fail(p, "ioapics= given twice (line "
						"%u and here)",
						p->sp->ioapics_line);
			if (!sim_uint(p->tok[i] + 8, SIM_MAX_IOAPICS, &v) || !v)
				return sim_fail(p, "ioapics= takes 1 to %u",
						SIM_MAX_IOAPICS);
			p->sp->nioapics = (uint32_t)v;
			p->sp->ioapics_line = p->line;
			continue;
		}
		for (k = 0; k < sizeof(feats) / sizeof(feats[0]); k++)
			if (!strcmp(p->tok[i], feats[k].name))
				break;
		if (k == sizeof(feats) / sizeof(feats[0]))
			return sim_fail(p, "unknown platform feature '%s' "
					"(ext-dest-id, remap, x2apic, no-msi, "
					"isa-pic, imsic, aplic, its, gicv2m, vtd, "
					"amd-vi, num-ids=N, ioapics=N)",
					sim_quote(p->tok[i], q));
		p->sp->plat |= feats[k].flag;
	}
	return 0;
}

/*
 * After the last line: an IMSIC or ITS machine has no x86 message
 * formats, nor both controllers; num-ids means nothing without an IMSIC.
 */
static int sim_check_imsic(struct sim_parser *p)
{
	const struct sim_spec *sp = p->sp;
	uint32_t x86 = UMSI_PLAT_X2APIC | UMSI_PLAT_EXT_DEST_ID |
		       UMSI_PLAT_IRQ_REMAP | UMSI_PLAT_ISA_PIC;

	if (!sp->imsic && sp->num_ids_line) {
		p->line = sp->num_ids_line;
		return sim_fail(p, "num-ids= is for 'platform imsic'");
	}
	if (sp->its && sp->imsic) {
		p->line = sp->its_line > sp->imsic_line ? sp->its_line
							: sp->imsic_line;
		return sim_fail(p, "platform its and platform imsic: a machine "
				"has one interrupt controller");
	}
	if (sp->gicv2m && (sp->its || sp->imsic)) {
		p->line = sp->gicv2m_line;
		return sim_fail(p, "platform gicv2m with platform %s: a machine "
				"has one interrupt controller",
				sp->its ? "its" : "imsic");
	}
	if (sp->gicv2m && (sp->plat & x86)) {
		p->line = sp->gicv2m_line;
		return sim_fail(p, "platform gicv2m has Arm CPUs: x2apic, "
				"ext-dest-id, remap and isa-pic are x86 features");
	}
	if (sp->gicv2m && sp->ncpus > SIM_GICV2M_MAX_CPUS) {
		p->line = sp->gicv2m_line > sp->cpus_line ? sp->gicv2m_line :
							   sp->cpus_line;
		return sim_fail(p, "platform gicv2m: %u CPUs, but a GICv2 "
				"distributor targets %u CPU interfaces: at most "
				"%u CPUs", sp->ncpus, SIM_GICV2M_MAX_CPUS,
				SIM_GICV2M_MAX_CPUS);
	}
	if (sp->its && (sp->plat & x86)) {
		p->line = sp->its_line;
		return sim_fail(p, "platform its has Arm CPUs: x2apic, "
				"ext-dest-id and remap are x86 features");
	}
	if (sp->vtd && (sp->its || sp->imsic || sp->gicv2m)) {
		p->line = sp->vtd_line;
		return sim_fail(p, "platform vtd is an x86 remapping unit: not "
				"with platform its, gicv2m or imsic");
	}
	if (sp->vtd && (sp->plat & UMSI_PLAT_IRQ_REMAP)) {
		p->line = sp->vtd_line;
		return sim_fail(p, "platform vtd and remap: the unit is uMSI's "
				"(vtd) or the host's (remap), not both");
	}
	if (sp->amdvi && (sp->its || sp->imsic || sp->gicv2m || sp->vtd)) {
		p->line = sp->amdvi_line;
		return sim_fail(p, "platform amd-vi is an x86 remapping unit: not "
				"with platform its, gicv2m, imsic or vtd");
	}
	if (sp->amdvi && (sp->plat & UMSI_PLAT_IRQ_REMAP)) {
		p->line = sp->amdvi_line;
		return sim_fail(p, "platform amd-vi and remap: the unit is uMSI's "
				"(amd-vi) or the host's (remap), not both");
	}
	if (sp->imsic && (sp->plat & x86)) {
		p->line = sp->imsic_line;
		return sim_fail(p, "platform imsic has RISC-V harts: x2apic, "
				"ext-dest-id, remap and isa-pic are x86 features");
	}
	return 0;
}

uint32_t sim_its_lpis_per_cpu(uint32_t ncpus)
{
	uint32_t per;

	if (!ncpus || ncpus > SIM_ITS_MAX_CPUS)
		return 0;
	per = SIM_ITS_LPIS / ncpus / SIM_ITS_NVEC_STEP * SIM_ITS_NVEC_STEP;
	return per > SIM_ITS_NVEC_MAX ? SIM_ITS_NVEC_MAX : per;
}

/*
 * After the last line: several IO-APICs are an x86 machine's (the other
 * controllers route INTx elsewhere), and every gsi= is an input of one.
 */
static int sim_check_ioapics(struct sim_parser *p)
{
	const struct sim_spec *sp = p->sp;
	uint32_t pins = SIM_IOAPIC_PINS * (sp->nioapics ? sp->nioapics : 1);

	if (sp->nioapics && (sp->imsic || sp->its || sp->gicv2m)) {
		p->line = sp->ioapics_line;
		return sim_fail(p, "platform ioapics= is for x86 machines: "
				"%s routes INTx elsewhere",
				sp->imsic ? "a RISC-V machine (imsic, aplic)" :
				sp->its ? "an Arm machine (its)" :
				"an Arm machine (gicv2m)");
	}
	for (unsigned i = 0; i < sp->ndevs; i++) {
		const struct sim_devspec *d = &sp->devs[i];

		if (d->gsi && (d->gsi >= pins || sp->imsic || sp->its ||
			       sp->gicv2m)) {
			p->line = d->line;
			if (sp->imsic || sp->its || sp->gicv2m)
				return sim_fail(p, "gsi= is an IO-APIC input: "
						"for x86 machines");
			return sim_fail(p, "gsi=%u: the machine's IO-APICs "
					"have GSIs 0-%u (platform ioapics=N: "
					"%u inputs each)", d->gsi, pins - 1,
					SIM_IOAPIC_PINS);
		}
	}
	return 0;
}

/*
 * After the last line: the CPUs of an ITS machine must each get some
 * LPIs (sim_its_lpis_per_cpu()). Else uMSI's back end refuses the system
 * (and the simulator would need 2 MiB of counters a CPU, 16 GiB for 8192
 * CPUs, before that): say which limit and what fits.
 */
static int sim_check_its(struct sim_parser *p)
{
	const struct sim_spec *sp = p->sp;

	if (!sp->its || sim_its_lpis_per_cpu(sp->ncpus))
		return 0;
	p->line = sp->its_line > sp->cpus_line ? sp->its_line : sp->cpus_line;
	return sim_fail(p, "platform its: %u CPUs need at least %llu LPIs "
			"(uMSI's ITS back end gives every CPU its own, a "
			"multiple of %u), but the GICv3's %u INTID bits leave "
			"%u (INTIDs %u-%u): at most %u CPUs", sp->ncpus,
			(unsigned long long)sp->ncpus * SIM_ITS_NVEC_STEP,
			SIM_ITS_NVEC_STEP, SIM_ITS_LPI_BITS, SIM_ITS_LPIS,
			SIM_ITS_FIRST_LPI, (1u << SIM_ITS_LPI_BITS) - 1,
			SIM_ITS_MAX_CPUS);
}

/* `cmdline WORDS`: the words joined by single spaces, bounded. */
static int sim_parse_cmdline(struct sim_parser *p)
{
	struct sim_spec *sp = p->sp;
	size_t used = 0;

	if (sp->cmdline_line)
		return sim_fail(p, "'cmdline' given twice (lines %u and %u)",
				sp->cmdline_line, p->line);
	for (unsigned i = 1; i < p->n; i++) {
		size_t wlen = strlen(p->tok[i]), sep = i > 1;

		/* Room for the separator, the word and the final NUL. */
		if (wlen >= SIM_CMDLINE_MAX - used - sep) {
			sp->cmdline[0] = '\0';
			return sim_fail(p, "cmdline too long: at most %u "
					"characters", SIM_CMDLINE_MAX - 1);
		}
		if (sep)
			sp->cmdline[used++] = ' ';
		memcpy(sp->cmdline + used, p->tok[i], wlen);
		used += wlen;
	}
	sp->cmdline[used] = '\0';
	sp->cmdline_line = p->line;
	return 0;
}

enum sim_key {
	SIM_KEY_VENDOR, SIM_KEY_DEVICE, SIM_KEY_MSIX, SIM_KEY_MSI,
	SIM_KEY_VECTORS, SIM_KEY_MIN, SIM_KEY_COUNT, SIM_KEY_INTX,
	SIM_KEY_MASKABLE, SIM_KEY_ADDR64, SIM_KEY_SPREAD, SIM_KEY_VFS,
	SIM_KEY_VF_MSIX, SIM_KEY_VF_VECTORS, SIM_KEY_VF_DEVICE, SIM_KEY_GSI,
	SIM_NKEYS
};

static const struct {
	const char *name;
	bool value;                     /* key=value, else a bare flag */
	unsigned long long max;         /* numbers: the largest allowed */
} sim_keys[SIM_NKEYS] = {
	[SIM_KEY_VENDOR]   = { "vendor", true, 0xffff },
	[SIM_KEY_DEVICE]   = { "device", true, 0xffff },
	[SIM_KEY_MSIX]     = { "msix", true, SIM_MAX_MSIX },
	[SIM_KEY_MSI]      = { "msi", true, 32 },
	[SIM_KEY_VECTORS]  = { "vectors", true, SIM_MAX_VECTORS },
	[SIM_KEY_MIN]      = { "min", true, SIM_MAX_VECTORS },
	/* Checked against the machine's room in sim_add_device(). */
	[SIM_KEY_COUNT]    = { "count", true, 0xffffffffu },
	[SIM_KEY_INTX]     = { "intx", true, 0 },
	[SIM_KEY_MASKABLE] = { "maskable", false, 0 },
	[SIM_KEY_ADDR64]   = { "addr64", false, 0 },
	[SIM_KEY_SPREAD]   = { "spread", false, 0 },
	[SIM_KEY_VFS]      = { "vfs", true, SIM_MAX_VFS },
	[SIM_KEY_VF_MSIX]  = { "vf-msix", true, SIM_MAX_MSIX },
	[SIM_KEY_VF_VECTORS] = { "vf-vectors", true, SIM_MAX_MSIX },
	[SIM_KEY_VF_DEVICE] = { "vf-device", true, 0xffff },
	/* Against the machine's IO-APICs in sim_check_ioapics(). */
	[SIM_KEY_GSI]      = { "gsi", true, SIM_IOAPIC_PINS * SIM_MAX_IOAPICS - 1 },
};

/* One key[=value] word of a device line into @d. */
static int sim_device_setting(struct sim_parser *p, struct sim_devspec *d,
			      char *word, unsigned *seen)
{
	char *eq = strchr(word, '='), q[SIM_QUOTE_LEN];
	const char *val = eq ? eq + 1 : NULL;
	unsigned long long v = 0;
	unsigned k;

	if (eq)
		*eq = '\0';
	for (k = 0; k < SIM_NKEYS; k++)
		if (!strcmp(word, sim_keys[k].name))
			break;
	if (k == SIM_NKEYS)
		return sim_fail(p, "unknown device setting '%s'",
				sim_quote(word, q));
	if (*seen & (1u << k))
		return sim_fail(p, "'%s' given twice", sim_keys[k].name);
	*seen |= 1u << k;
	if (!sim_keys[k].value) {
		if (val)
			return sim_fail(p, "'%s' takes no value",
					sim_keys[k].name);
	} else if (!val) {
		return sim_fail(p, "'%s' needs a value (%s=...)",
				sim_keys[k].name, sim_keys[k].name);
	} else if (k == SIM_KEY_MSI) {
		if (!sim_uint(val, 32, &v) || !v || (v & (v - 1)))
			return sim_fail(p, "msi= takes 1, 2, 4, 8, 16 or 32");
	} else if (k == SIM_KEY_INTX) {
		if (strlen(val) != 1 || val[0] < 'A' || val[0] > 'D')
			return sim_fail(p, "intx= takes A, B, C or D");
		v = (unsigned)(val[0] - 'A' + 1);
	} else if (!sim_uint(val, sim_keys[k].max, &v)) {
		return sim_fail(p, "bad value for '%s': '%s' (0 to %llu)",
				sim_keys[k].name, sim_quote(val, q),
				sim_keys[k].max);
	}
	/* Every v below was checked against its field's range above. */
	switch ((enum sim_key)k) {
	case SIM_KEY_VENDOR: d->vendor = (uint16_t)v; break;
	case SIM_KEY_DEVICE: d->device = (uint16_t)v; break;
	case SIM_KEY_MSIX: d->msix = (unsigned)v; break;
	case SIM_KEY_MSI: d->msi = (unsigned)v; break;
	case SIM_KEY_VECTORS: d->want = (unsigned)v; break;
	case SIM_KEY_MIN: d->min = (unsigned)v; break;
	case SIM_KEY_COUNT: d->count = (unsigned)v; break;
	case SIM_KEY_INTX: d->intx = (unsigned)v; break;
	case SIM_KEY_MASKABLE: d->maskable = true; break;
	case SIM_KEY_ADDR64: d->addr64 = true; break;
	case SIM_KEY_SPREAD: d->spread = true; break;
	case SIM_KEY_VFS: d->vfs = (unsigned)v; break;
	case SIM_KEY_VF_MSIX: d->vf_msix = (unsigned)v; break;
	case SIM_KEY_VF_VECTORS: d->vf_want = (unsigned)v; break;
	case SIM_KEY_VF_DEVICE: d->vf_device = (uint16_t)v; break;
	case SIM_KEY_GSI:
		if (v < 16)
			return sim_fail(p, "gsi=%llu: GSIs 0-15 are ISA lines; "
					"a PCI pin arrives at 16 or above", v);
		d->gsi = (unsigned)v;
		break;
	case SIM_NKEYS: break;
	}
	return 0;
}

/* The device's name: printable, short enough to keep whole. */
static int sim_device_name(struct sim_parser *p, struct sim_devspec *d,
			   const char *name)
{
	size_t len = strlen(name);
	char q[SIM_QUOTE_LEN];

	if (len >= SIM_NAME_MAX)
		return sim_fail(p, "device name '%s' is longer than %u "
				"characters", sim_quote(name, q),
				SIM_NAME_MAX - 1);
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)name[i] <= 0x20 ||
		    (unsigned char)name[i] >= 0x7f)
			return sim_fail(p, "device name '%s' holds a byte that "
					"is not printable ASCII",
					sim_quote(name, q));
	memcpy(d->name, name, len + 1);
	return 0;
}

/*
 * Room on the buses for @d's instances: 32 slots a bus, or a bus each
 * for a PF with VFs. Moves the cursor; a VF line takes none.
 */
static int sim_place_line(struct sim_parser *p, const struct sim_devspec *d)
{
	struct sim_spec *sp = p->sp;
	uint64_t bus = sp->next_bus ? sp->next_bus : SIM_FIRST_BUS;
	uint64_t slot = sp->next_slot;

	if (d->is_vf)
		return 0;
	if (d->vfs) {
		bus += slot ? 1 : 0;
		bus += d->count;
		slot = 0;
	} else {
		slot += d->count;
		bus += slot / SIM_SLOTS_PER_BUS;
		slot %= SIM_SLOTS_PER_BUS;
	}
	if (bus > 256 || (bus == 256 && slot))
		return sim_fail(p, "the devices need buses past 255 (32 slots "
				"a bus from bus %u of domain 0; a PF with vfs= "
				"takes a bus of its own)", SIM_FIRST_BUS);
	sp->next_bus = (unsigned)bus;
	sp->next_slot = (unsigned)slot;
	return 0;
}

/* Append @d, counting its instances and vectors against the limits. */
static int sim_add_device(struct sim_parser *p, const struct sim_devspec *d)
{
	struct sim_spec *sp = p->sp;
	uint64_t ninst = (uint64_t)sp->ninst + d->count;

	if (ninst > SIM_MAX_INSTANCES)
		return sim_fail(p, "%llu device instances; at most %u fit (32 "
				"slots on each of buses %u-255 of domain 0)",
				(unsigned long long)ninst, SIM_MAX_INSTANCES,
				SIM_FIRST_BUS);
	if (sim_place_line(p, d))
		return -1;
	if (sp->ndevs == sp->cap_devs) {
		unsigned cap = sp->cap_devs ? sp->cap_devs * 2 : 16;
		struct sim_devspec *nd = realloc(sp->devs, cap * sizeof(*nd));

		if (!nd)
			return sim_fail(p, "out of memory");
		sp->devs = nd;
		sp->cap_devs = cap;
	}
	sp->devs[sp->ndevs++] = *d;
	sp->ninst = (unsigned)ninst;
	/* At most 8160 x 65536: no overflow possible in 64 bits. */
	sp->nvec += (uint64_t)d->want * d->count;
	return 0;
}

/* `device NAME key=value ...` */
static int sim_parse_device(struct sim_parser *p)
{
	struct sim_devspec d = {
		.count = 1, .vendor = 0x1af4, .device = 0x1000, .line = p->line,
	};
	unsigned seen = 0;

	if (p->n < 2)
		return sim_fail(p, "'device' needs a name");
	if (sim_device_name(p, &d, p->tok[1]))
		return -1;
	for (unsigned i = 2; i < p->n; i++)
		if (sim_device_setting(p, &d, p->tok[i], &seen))
			return -1;
	if (!d.msix && !d.msi && !d.intx)
		return sim_fail(p, "device '%s' has no interrupt: give msix=, "
				"msi= or intx=", d.name);
	if (d.gsi && !d.intx)
		return sim_fail(p, "gsi= routes the INTx pin: it needs intx=");
	if (!d.want)
		d.want = d.msix ? d.msix : d.msi ? d.msi : 1;
	if (!d.min)
		d.min = 1;
	if (d.min > d.want)
		return sim_fail(p, "min= is larger than vectors=");
	if (d.count == 0)
		return sim_fail(p, "count= must be at least 1");
	if (!d.vfs && (seen & (1u << SIM_KEY_VF_MSIX | 1u << SIM_KEY_VF_VECTORS |
			       1u << SIM_KEY_VF_DEVICE)))
		return sim_fail(p, "vf-msix=, vf-vectors= and vf-device= need "
				"vfs=");
	if (!d.vfs)
		return sim_add_device(p, &d);
	if (strlen(d.name) + 3 >= SIM_NAME_MAX)
		return sim_fail(p, "device '%s' with vfs=: the name is at most "
				"%u characters (its VFs are NAME-vf)", d.name,
				SIM_NAME_MAX - 4);
	if (!d.vf_msix)
		d.vf_msix = d.msix ? d.msix : 1;
	if (!d.vf_want)
		d.vf_want = d.vf_msix;
	if (d.vf_want > d.vf_msix)
		return sim_fail(p, "vf-vectors= is larger than vf-msix=");
	if (!(seen & (1u << SIM_KEY_VF_DEVICE)))
		d.vf_device = d.device;
	{
		uint64_t nvf = (uint64_t)d.count * d.vfs;
		uint64_t total = nvf + d.count + p->sp->ninst;
		struct sim_devspec vf = {
			.line = d.line, .vendor = d.vendor,
			.device = d.vf_device, .msix = d.vf_msix,
			.want = d.vf_want, .min = 1, .is_vf = true,
		};

		if (total > SIM_MAX_INSTANCES)
			return sim_fail(p, "%llu device instances with the "
					"VFs; at most %u",
					(unsigned long long)total,
					SIM_MAX_INSTANCES);
		vf.count = (unsigned)nvf;
		snprintf(vf.name, sizeof(vf.name), "%s-vf", d.name);
		if (sim_add_device(p, &d))
			return -1;
		return sim_add_device(p, &vf);
	}
}

/*
 * `unit ADDRESS NAME ...`: a remapping unit of its own at ADDRESS for the
 * instances of the named device lines (given above it; a PF's VFs with
 * it). Its address is checked against the platform after the last line.
 */
static int sim_parse_unit(struct sim_parser *p)
{
	struct sim_spec *sp = p->sp;
	struct sim_unitspec *u;
	unsigned long long v;
	char q[SIM_QUOTE_LEN];

	if (sp->nunits == SIM_MAX_UNITS)
		return sim_fail(p, "more than %u 'unit' lines (the simulator "
				"has %u remapping units, the platform's first "
				"among them)", SIM_MAX_UNITS, SIM_MAX_UNITS + 1);
	if (p->n < 3)
		return sim_fail(p, "'unit' takes an address and the devices it "
				"remaps (unit 0xfed91000 NAME ...)");
	if (!sim_uint(p->tok[1], ~0ull, &v))
		return sim_fail(p, "unit: bad address '%s'",
				sim_quote(p->tok[1], q));
	u = &sp->units[sp->nunits];
	u->base = v;
	u->line = p->line;
	for (unsigned i = 2; i < p->n; i++) {
		bool found = false;

		for (unsigned d = 0; d < sp->ndevs; d++) {
			struct sim_devspec *ds = &sp->devs[d];

			if (ds->is_vf || strcmp(ds->name, p->tok[i]))
				continue;
			if (ds->unit)
				return sim_fail(p, "unit: device '%s' is "
						"already unit %u's (line %u)",
						ds->name, ds->unit,
						sp->units[ds->unit - 1].line);
			found = true;
			ds->unit = sp->nunits + 1;
			/* Its VFs' line, right after it, go with it. */
			if (d + 1 < sp->ndevs && sp->devs[d + 1].is_vf)
				sp->devs[d + 1].unit = ds->unit;
		}
		if (!found)
			return sim_fail(p, "unit: no device '%s' above this "
					"line", sim_quote(p->tok[i], q));
	}
	sp->nunits++;
	return 0;
}

/*
 * After the last line: `unit` lines need a remapping unit uMSI owns, and
 * each address a free place in the simulator's window for that kind.
 */
static int sim_check_units(struct sim_parser *p)
{
	const struct sim_spec *sp = p->sp;
	uint64_t first = sp->amdvi ? UMSI_SIM_AMDVI_BASE : UMSI_SIM_VTD_BASE;
	uint64_t size = sp->amdvi ? 0x4000u : 0x1000u;

	for (unsigned i = 0; i < sp->nunits; i++) {
		const struct sim_unitspec *u = &sp->units[i];

		p->line = u->line;
		if (!sp->vtd && !sp->amdvi)
			return sim_fail(p, "'unit' is a remapping unit of "
					"platform vtd or amd-vi (x86), and "
					"there is none");
		if (u->base <= first || u->base % size ||
		    (u->base - first) / size > SIM_MAX_UNITS)
			return sim_fail(p, "unit 0x%llx: a %s unit's "
					"registers are %s aligned, from 0x%llx "
					"to 0x%llx (0x%llx is the first unit's)",
					(unsigned long long)u->base,
					sp->amdvi ? "AMD-Vi" : "VT-d",
					sp->amdvi ? "16 KiB" : "4 KiB",
					(unsigned long long)(first + size),
					(unsigned long long)(first + size *
							     SIM_MAX_UNITS),
					(unsigned long long)first);
		for (unsigned j = 0; j < i; j++)
			if (sp->units[j].base == u->base)
				return sim_fail(p, "unit 0x%llx: line %u has "
						"that address too",
						(unsigned long long)u->base,
						sp->units[j].line);
	}
	return 0;
}

static int sim_parse_line(struct sim_parser *p, char *line)
{
	char *hash = strchr(line, '#'), q[SIM_QUOTE_LEN];

	if (hash)
		*hash = '\0';
	if (sim_split(p, line))
		return -1;
	if (p->n == 0)
		return 0;
	if (!strcmp(p->tok[0], "cpus"))
		return sim_parse_cpus(p);
	if (!strcmp(p->tok[0], "device"))
		return sim_parse_device(p);
	if (!strcmp(p->tok[0], "platform"))
		return sim_parse_platform(p);
	if (!strcmp(p->tok[0], "cmdline"))
		return sim_parse_cmdline(p);
	if (!strcmp(p->tok[0], "sockets"))
		return sim_parse_sockets(p);
	if (!strcmp(p->tok[0], "unit"))
		return sim_parse_unit(p);
	return sim_fail(p, "unknown keyword '%s' (cpus, sockets, platform, "
			"cmdline, device, unit)", sim_quote(p->tok[0], q));
}

/* A NUL would end the text early and silently: name where it is. */
static int sim_check_text(struct sim_parser *p, const char *text, size_t len)
{
	const char *nul;

	if (len > SIM_MAX_FILE)
		return sim_fail(p, "more than %u bytes; a machine file is at "
				"most that", SIM_MAX_FILE);
	nul = memchr(text, '\0', len);
	if (!nul)
		return 0;
	p->line = 1;
	for (const char *s = text; s < nul; s++)
		p->line += *s == '\n';
	return sim_fail(p, "NUL byte at offset %zu: a machine file is text",
			(size_t)(nul - text));
}

int sim_parse(struct sim_spec *sp, const char *text, size_t len,
	      const char *file, char *err, size_t errlen)
{
	struct sim_parser p = {
		.sp = sp, .file = file, .err = err, .errlen = errlen,
	};
	char *copy = NULL, *lp, *nl;
	int ret = -1;

	memset(sp, 0, sizeof(*sp));
	if (errlen)
		err[0] = '\0';
	if (sim_check_text(&p, text, len))
		return -1;
	copy = malloc(len + 1);
	p.tok = calloc(SIM_MAX_WORDS, sizeof(*p.tok));
	if (!copy || !p.tok) {
		sim_fail(&p, "out of memory");
		goto out;
	}
	memcpy(copy, text, len);
	copy[len] = '\0';
	for (lp = copy; lp; lp = nl ? nl + 1 : NULL) {
		nl = strchr(lp, '\n');
		if (nl)
			*nl = '\0';
		p.line++;
		if (sim_parse_line(&p, lp))
			goto out;
	}
	p.line = 0;
	if (!sp->ncpus) {
		sim_fail(&p, "no 'cpus' line");
		goto out;
	}
	if (sim_check_imsic(&p) || sim_check_its(&p) ||
	    sim_check_ioapics(&p) || sim_check_sockets(&p) ||
	    sim_check_units(&p))
		goto out;
	ret = 0;
out:
	free(copy);
	free(p.tok);
	if (ret)
		sim_spec_free(sp);
	return ret;
}

void sim_spec_free(struct sim_spec *sp)
{
	free(sp->apic_ids);
	free(sp->devs);
	memset(sp, 0, sizeof(*sp));
}
