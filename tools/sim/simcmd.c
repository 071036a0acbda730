/* SPDX-License-Identifier: MIT */
/*
 * umsi sim - run the real library on a simulated machine described by a
 * file (docs/sim-format.md) or the built-in default, bring every device up
 * through the driver API, fire every vector, and report how the vectors
 * were spread and which devices did not get what they asked for.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <umsi/umsi.h>
#include "sim/umsi_sim.h"

#define MAX_CPUS 8192u

struct devspec {
	char name[32];
	unsigned line;
	uint16_t vendor, device;
	unsigned msix;          /* table size, 0: none */
	unsigned msi;           /* messages capable, 0: none */
	bool maskable, addr64;
	unsigned intx;          /* 0: none, 1-4 */
	unsigned want, min, count;
	bool spread;
};

struct spec {
	uint32_t ncpus;
	uint32_t *apic_ids;
	uint32_t plat;
	char cmdline[1024];
	struct devspec *devs;
	unsigned ndevs;
};

/* One instance of a device on the machine. */
struct inst {
	struct devspec *ds;
	char name[48];
	umsi_bdf_t bdf;
	struct umsi_pci_dev *dev;
	int granted;
	enum umsi_pci_mode mode;
	const char *reason;
	char why[96];
	uint64_t handled, fired, wrong_cpu;
	uint32_t *irqs;
	struct umsi_system *sys;
	struct umsi_sim *sim;
};

static const char *default_machine =
	"# built-in default: 8 CPUs with gaps in their APIC IDs\n"
	"cpus apic 0 2 4 6 8 10 12 14\n"
	"device nvme   vendor=0x1b36 device=0x0010 msix=65 vectors=9\n"
	"device e1000e vendor=0x8086 device=0x10d3 msix=5 vectors=5 intx=A\n"
	"device virtio-net vendor=0x1af4 device=0x1041 msix=64 vectors=17\n"
	"device xhci   vendor=0x1033 device=0x0194 msi=16 vectors=16 addr64\n"
	"device edu    vendor=0x1234 device=0x11e8 msi=1 vectors=1 addr64\n"
	"device legacy vendor=0x8086 device=0x7010 intx=A vectors=1\n";

static void usage(FILE *f)
{
	fprintf(f,
		"usage: umsi sim [--json] [--proc] [--quiet] [MACHINE-FILE]\n\n"
		"Runs uMSI on a simulated machine: CPUs and devices from\n"
		"MACHINE-FILE (format: docs/sim-format.md; examples/) or a\n"
		"built-in default. Every device asks the driver API for its\n"
		"vectors; every vector granted is fired once and must arrive\n"
		"on the CPU and vector uMSI chose.\n\n"
		"  --json    machine-readable output\n"
		"  --proc    a full /proc/interrupts table (one column per CPU)\n"
		"  --quiet   only devices that did not get what they asked for\n\n"
		"exit status: 0 every device got what it asked for, 1 some did\n"
		"not, 2 bad input.\n");
}

static int bad(const char *file, unsigned line, const char *fmt,
	       const char *what)
{
	fprintf(stderr, "umsi sim: %s:%u: ", file, line);
	fprintf(stderr, fmt, what);
	fputc('\n', stderr);
	return 2;
}

static bool parse_uint(const char *s, unsigned long max, unsigned long *out)
{
	char *end;
	unsigned long v;

	if (!*s || *s == '-')
		return false;
	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || *end || v > max)
		return false;
	*out = v;
	return true;
}

static int parse_cpus(struct spec *sp, char **tok, int n, const char *file,
		      unsigned line)
{
	unsigned long v;
	int i;

	if (n >= 2 && !strcmp(tok[1], "apic")) {
		if (n < 3)
			return bad(file, line, "%s", "'cpus apic' needs at "
				   "least one APIC ID");
		if ((unsigned)(n - 2) > MAX_CPUS)
			return bad(file, line, "more than %s CPUs", "8192");
		sp->ncpus = (uint32_t)(n - 2);
		sp->apic_ids = calloc(sp->ncpus, sizeof(uint32_t));
		for (i = 2; i < n; i++) {
			if (!parse_uint(tok[i], 0xffffffffu, &v))
				return bad(file, line, "bad APIC ID '%s'",
					   tok[i]);
			sp->apic_ids[i - 2] = (uint32_t)v;
			for (int j = 2; j < i; j++)
				if (sp->apic_ids[j - 2] == v)
					return bad(file, line,
						   "APIC ID %s listed twice",
						   tok[i]);
		}
		return 0;
	}
	if (n != 2 || !parse_uint(tok[1], MAX_CPUS, &v) || v == 0)
		return bad(file, line, "%s", "'cpus' takes a count (1-8192) "
			   "or 'apic' and a list of APIC IDs");
	sp->ncpus = (uint32_t)v;
	sp->apic_ids = calloc(sp->ncpus, sizeof(uint32_t));
	for (i = 0; i < (int)v; i++)
		sp->apic_ids[i] = (uint32_t)i;
	return 0;
}

static int parse_device(struct spec *sp, char **tok, int n, const char *file,
			unsigned line)
{
	struct devspec d = { .count = 1, .vendor = 0x1af4, .device = 0x1000 };
	unsigned long v;
	int i;

	if (n < 2)
		return bad(file, line, "%s", "'device' needs a name");
	snprintf(d.name, sizeof(d.name), "%s", tok[1]);
	d.line = line;
	for (i = 2; i < n; i++) {
		char *eq = strchr(tok[i], '=');
		const char *key = tok[i], *val = eq ? eq + 1 : NULL;

		if (eq)
			*eq = '\0';
#define NUM(k, max, field) \
		if (!strcmp(key, k)) { \
			if (!val || !parse_uint(val, max, &v)) \
				return bad(file, line, "bad value for '%s'", k); \
			d.field = (__typeof__(d.field))v; continue; }
		NUM("vendor", 0xffff, vendor)
		NUM("device", 0xffff, device)
		NUM("msix", 2048, msix)
		NUM("vectors", 65536, want)
		NUM("min", 65536, min)
		NUM("count", 65536, count)
#undef NUM
		if (!strcmp(key, "msi")) {
			if (!val || !parse_uint(val, 32, &v) || !v ||
			    (v & (v - 1)))
				return bad(file, line, "%s", "msi= takes 1, 2, "
					   "4, 8, 16 or 32");
			d.msi = (unsigned)v;
		} else if (!strcmp(key, "intx")) {
			if (!val || strlen(val) != 1 || val[0] < 'A' ||
			    val[0] > 'D')
				return bad(file, line, "%s", "intx= takes A, "
					   "B, C or D");
			d.intx = (unsigned)(val[0] - 'A' + 1);
		} else if (!strcmp(key, "maskable") && !val) {
			d.maskable = true;
		} else if (!strcmp(key, "addr64") && !val) {
			d.addr64 = true;
		} else if (!strcmp(key, "spread") && !val) {
			d.spread = true;
		} else {
			return bad(file, line, "unknown device setting '%s'",
				   key);
		}
	}
	if (!d.msix && !d.msi && !d.intx)
		return bad(file, line, "device '%s' has no interrupt: give "
			   "msix=, msi= or intx=", d.name);
	if (!d.want)
		d.want = d.msix ? d.msix : d.msi ? d.msi : 1;
	if (!d.min)
		d.min = 1;
	if (d.min > d.want)
		return bad(file, line, "%s", "min= is larger than vectors=");
	if (d.count == 0)
		return bad(file, line, "%s", "count= must be at least 1");
	sp->devs = realloc(sp->devs, (sp->ndevs + 1) * sizeof(*sp->devs));
	sp->devs[sp->ndevs++] = d;
	return 0;
}

static int parse_spec(struct spec *sp, const char *text, const char *file)
{
	char *copy = strdup(text), *save = NULL, *lp;
	unsigned line = 0;
	int ret = 0;

	for (lp = copy; lp && !ret; ) {
		char *nl = strchr(lp, '\n'), *tok[4096], *p;
		int n = 0;

		if (nl)
			*nl = '\0';
		line++;
		if ((p = strchr(lp, '#')))
			*p = '\0';
		for (p = strtok_r(lp, " \t\r", &save); p && n < 4096;
		     p = strtok_r(NULL, " \t\r", &save))
			tok[n++] = p;
		if (n == 0) {
			/* blank */
		} else if (!strcmp(tok[0], "cpus")) {
			ret = parse_cpus(sp, tok, n, file, line);
		} else if (!strcmp(tok[0], "device")) {
			ret = parse_device(sp, tok, n, file, line);
		} else if (!strcmp(tok[0], "platform")) {
			for (int i = 1; i < n && !ret; i++) {
				if (!strcmp(tok[i], "ext-dest-id"))
					sp->plat |= UMSI_PLAT_EXT_DEST_ID;
				else if (!strcmp(tok[i], "remap"))
					sp->plat |= UMSI_PLAT_IRQ_REMAP;
				else if (!strcmp(tok[i], "x2apic"))
					sp->plat |= UMSI_PLAT_X2APIC;
				else if (!strcmp(tok[i], "no-msi"))
					sp->plat |= UMSI_PLAT_NO_MSI;
				else
					ret = bad(file, line, "unknown platform "
						  "feature '%s' (ext-dest-id, "
						  "remap, x2apic, no-msi)",
						  tok[i]);
			}
		} else if (!strcmp(tok[0], "cmdline")) {
			size_t used = 0;

			for (int i = 1; i < n; i++)
				used += (size_t)snprintf(sp->cmdline + used,
					sizeof(sp->cmdline) - used, "%s%s",
					i > 1 ? " " : "", tok[i]);
			if (used >= sizeof(sp->cmdline))
				ret = bad(file, line, "%s", "cmdline too long");
		} else {
			ret = bad(file, line, "unknown keyword '%s' (cpus, "
				  "platform, cmdline, device)", tok[0]);
		}
		lp = nl ? nl + 1 : NULL;
	}
	free(copy);
	if (!ret && !sp->ncpus)
		ret = bad(file, line, "%s", "no 'cpus' line");
	return ret;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t len = 0, cap = 0, n;

	if (!f)
		return NULL;
	do {
		if (len + 4096 + 1 > cap) {
			cap = cap ? cap * 2 : 8192;
			buf = realloc(buf, cap);
		}
		n = fread(buf + len, 1, cap - len - 1, f);
		len += n;
	} while (n > 0);
	buf[len] = '\0';
	fclose(f);
	return buf;
}

/* ---- running it ------------------------------------------------------- */

static int handler(uint32_t irq, void *arg)
{
	struct inst *in = arg;
	struct umsi_irq_info info;
	uint32_t cpu = umsi_sim_current_cpu(in->sim);

	if (umsi_irq_get_info(in->sys, irq, &info) || info.cpu != cpu)
		in->wrong_cpu++;
	in->handled++;
	/* A level-triggered line stays asserted until the driver acks it. */
	if (in->mode == UMSI_MODE_INTX)
		umsi_sim_intx_set(in->sim, in->bdf, false);
	return UMSI_IRQ_HANDLED;
}

static int sim_dispatch(void *arg, uint32_t cpu, uint8_t vector)
{
	return umsi_dispatch(arg, cpu, vector);
}

static void describe(const struct devspec *ds, struct umsi_sim_dev_desc *d)
{
	memset(d, 0, sizeof(*d));
	d->vendor = ds->vendor;
	d->device = ds->device;
	d->class_code = 0x020000;
	d->intx_pin = (uint8_t)ds->intx;
	d->bars[0].size = 0x4000;
	d->pcie.present = true;
	d->pcie.type = UMSI_PCIE_TYPE_ENDPOINT;
	if (ds->msi) {
		d->msi.present = true;
		d->msi.nvec = (uint8_t)ds->msi;
		d->msi.is64 = ds->addr64;
		d->msi.maskbit = ds->maskable;
	}
	if (ds->msix) {
		uint64_t table = (uint64_t)ds->msix * 16;
		uint64_t size = 0x1000;

		while (size < table + 0x1000)
			size <<= 1;
		d->msix.present = true;
		d->msix.nentries = (uint16_t)ds->msix;
		d->msix.table_bar = 2;
		d->msix.table_offset = 0;
		d->msix.pba_bar = 2;
		d->msix.pba_offset = (uint32_t)(size - 0x1000);
		d->bars[2].size = size;
		d->bars[2].is64 = true;
	}
}

static const char *mode_name(enum umsi_pci_mode m)
{
	switch (m) {
	case UMSI_MODE_MSIX: return "msix";
	case UMSI_MODE_MSI: return "msi";
	case UMSI_MODE_INTX: return "intx";
	default: return "none";
	}
}

static void bring_up(struct umsi_sim *sim, struct umsi_system *sys,
		     struct inst *in)
{
	const struct devspec *ds = in->ds;
	struct umsi_pci_info info;
	uint32_t flags = UMSI_IRQ_ALL_TYPES;
	int ret, i;

	in->sys = sys;
	in->sim = sim;
	ret = umsi_pci_add(sys, in->bdf, NULL, UMSI_PCI_ADD_FRESH, &in->dev);
	if (ret) {
		snprintf(in->why, sizeof(in->why), "error:%s",
			 umsi_strerror(ret));
		in->reason = in->why;
		return;
	}
	if (ds->spread)
		flags |= UMSI_IRQ_AFFINITY;
	ret = umsi_pci_alloc_irq_vectors(in->dev, ds->min, ds->want, flags);
	umsi_pci_get_info(in->dev, &info);
	in->mode = info.mode;
	if (ret < 0) {
		if (info.reason) {
			in->reason = info.reason;
		} else {
			snprintf(in->why, sizeof(in->why), "%s",
				 ret == -UMSI_ENOSPC ? "no_vectors" :
				 umsi_strerror(ret));
			in->reason = in->why;
		}
		return;
	}
	in->granted = ret;
	in->mode = info.mode;
	if (ret < (int)ds->want) {
		if (info.reason)
			snprintf(in->why, sizeof(in->why), "%s (fell back to "
				 "%s)", info.reason, mode_name(info.mode));
		else if (info.mode == UMSI_MODE_MSI && ds->msi < ds->want)
			snprintf(in->why, sizeof(in->why), "device offers %u "
				 "MSI messages", ds->msi);
		else if (info.mode == UMSI_MODE_MSIX && ds->msix < ds->want)
			snprintf(in->why, sizeof(in->why), "device has %u "
				 "MSI-X entries", ds->msix);
		else if (info.mode == UMSI_MODE_INTX)
			snprintf(in->why, sizeof(in->why), "INTx gives one "
				 "vector");
		else
			snprintf(in->why, sizeof(in->why), "no_vectors: the "
				 "allocator ran out");
		in->reason = in->why;
	}
	in->irqs = calloc((size_t)ret, sizeof(uint32_t));
	for (i = 0; i < ret; i++) {
		int irq = umsi_pci_irq_vector(in->dev, (uint32_t)i);

		in->irqs[i] = (uint32_t)irq;
		if (irq < 0 || umsi_request_irq(sys, (uint32_t)irq, handler,
						UMSI_IRQF_SHARED, in->name,
						in)) {
			snprintf(in->why, sizeof(in->why), "error:request_irq");
			in->reason = in->why;
		}
	}
	for (i = 0; i < ret; i++) {
		in->fired++;
		if (info.mode == UMSI_MODE_INTX) {
			umsi_sim_intx_set(sim, in->bdf, true);
		} else {
			umsi_sim_fire(sim, in->bdf, (unsigned)i);
		}
		umsi_sim_quiesce(sim);
	}
}

static void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\u%04x", *s);
		else
			putchar(*s);
	}
	putchar('"');
}

int umsi_cmd_sim(int argc, char **argv)
{
	bool json = false, proc = false, quiet = false;
	const char *file = NULL;
	char *text;
	struct spec sp = { 0 };
	struct umsi_sim_config scfg = { 0 };
	struct umsi_config ucfg = { 0 };
	struct umsi_sim *sim;
	struct umsi_system *sys;
	struct inst *insts;
	unsigned ninst = 0, i, j, short_of = 0;
	uint64_t total_vec = 0, fired = 0, handled = 0, wrong = 0;
	int ret;

	for (i = 1; i < (unsigned)argc; i++) {
		if (!strcmp(argv[i], "--json")) {
			json = true;
		} else if (!strcmp(argv[i], "--proc")) {
			proc = true;
		} else if (!strcmp(argv[i], "--quiet")) {
			quiet = true;
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return 0;
		} else if (argv[i][0] == '-') {
			fprintf(stderr, "umsi sim: unknown option '%s'\n",
				argv[i]);
			usage(stderr);
			return 2;
		} else if (file) {
			fprintf(stderr, "umsi sim: one machine file only\n");
			return 2;
		} else {
			file = argv[i];
		}
	}
	if (file) {
		text = slurp(file);
		if (!text) {
			fprintf(stderr, "umsi sim: cannot read %s: %s\n", file,
				strerror(errno));
			return 2;
		}
	} else {
		text = strdup(default_machine);
		file = "(built-in)";
	}
	ret = parse_spec(&sp, text, file);
	free(text);
	if (ret)
		return ret;

	for (i = 0; i < sp.ndevs; i++) {
		ninst += sp.devs[i].count;
		total_vec += (uint64_t)sp.devs[i].want * sp.devs[i].count;
	}
	if (ninst > 256 * 32) {
		fprintf(stderr, "umsi sim: %s: %u device instances; at most "
			"8192 fit on 256 buses\n", file, ninst);
		return 2;
	}
	scfg.ncpus = sp.ncpus;
	scfg.apic_ids = sp.apic_ids;
	scfg.plat_flags = sp.plat;
	scfg.ioapic_pins = 24;
	sim = umsi_sim_create(&scfg);
	if (!sim) {
		fprintf(stderr, "umsi sim: cannot create the machine\n");
		return 2;
	}
	ucfg.max_irqs = (uint32_t)(total_vec + 64 > 1u << 20 ? 1u << 20 :
				   total_vec + 64);
	if (ucfg.max_irqs < 4096)
		ucfg.max_irqs = 4096;
	ucfg.cmdline = sp.cmdline[0] ? sp.cmdline : NULL;
	ret = umsi_system_create(umsi_sim_host_ops(), sim, &ucfg, &sys);
	if (ret) {
		fprintf(stderr, "umsi sim: system create failed: %s\n%s",
			umsi_strerror(ret), umsi_sim_log_text(sim));
		return 2;
	}
	umsi_sim_set_dispatch(sim, sim_dispatch, sys);

	insts = calloc(ninst ? ninst : 1, sizeof(*insts));
	for (i = 0, j = 0; i < sp.ndevs; i++) {
		for (unsigned k = 0; k < sp.devs[i].count; k++, j++) {
			struct umsi_sim_dev_desc dd;
			struct inst *in = &insts[j];

			in->ds = &sp.devs[i];
			if (sp.devs[i].count > 1)
				snprintf(in->name, sizeof(in->name), "%s%u",
					 sp.devs[i].name, k);
			else
				snprintf(in->name, sizeof(in->name), "%s",
					 sp.devs[i].name);
			/* Device j at bus j/32 + 1, slot j%32. */
			in->bdf = UMSI_BDF(0, 1 + j / 32, j % 32, 0);
			describe(in->ds, &dd);
			if (umsi_sim_add_device(sim, in->bdf, &dd)) {
				snprintf(in->why, sizeof(in->why),
					 "error:sim_add_device");
				in->reason = in->why;
				continue;
			}
		}
	}
	for (j = 0; j < ninst; j++)
		if (!insts[j].reason)
			bring_up(sim, sys, &insts[j]);
	umsi_sim_quiesce(sim);
	for (j = 0; j < ninst; j++) {
		fired += insts[j].fired;
		handled += insts[j].handled;
		wrong += insts[j].wrong_cpu;
		if (insts[j].granted < (int)insts[j].ds->want)
			short_of++;
	}

	if (json) {
		printf("{\"cpus\":[");
		for (i = 0; i < sp.ncpus; i++) {
			struct umsi_matrix_cpu_stats cs;

			umsi_matrix_cpu_stats(umsi_system_matrix(sys), i, &cs);
			printf("%s{\"cpu\":%u,\"apic_id\":%u,\"allocated\":%u,"
			       "\"managed\":%u,\"available\":%u,\"online\":%s}",
			       i ? "," : "", i, sp.apic_ids[i],
			       cs.allocated + cs.managed_allocated,
			       cs.managed, cs.available,
			       cs.online ? "true" : "false");
		}
		printf("],\"devices\":[");
		for (j = 0; j < ninst; j++) {
			struct inst *in = &insts[j];

			printf("%s{\"name\":", j ? "," : "");
			json_str(in->name);
			printf(",\"bdf\":\"%04x:%02x:%02x.%u\",\"requested\":%u,"
			       "\"granted\":%d,\"mode\":\"%s\"",
			       UMSI_BDF_SEG(in->bdf), UMSI_BDF_BUS(in->bdf),
			       UMSI_BDF_DEV(in->bdf), UMSI_BDF_FN(in->bdf),
			       in->ds->want, in->granted, mode_name(in->mode));
			if (in->granted < (int)in->ds->want) {
				printf(",\"reason\":");
				json_str(in->reason ? in->reason : "unknown");
			}
			printf(",\"fired\":%llu,\"handled\":%llu,\"vectors\":[",
			       (unsigned long long)in->fired,
			       (unsigned long long)in->handled);
			for (i = 0; i < (unsigned)(in->granted > 0 ?
						   in->granted : 0); i++) {
				struct umsi_irq_info inf;

				umsi_irq_get_info(sys, in->irqs[i], &inf);
				printf("%s{\"index\":%u,\"irq\":%u,\"cpu\":%u,"
				       "\"apic_id\":%u,\"vector\":%u}",
				       i ? "," : "", i, in->irqs[i], inf.cpu,
				       inf.apic_id, inf.vector);
			}
			printf("]}");
		}
		printf("],\"fired\":%llu,\"handled\":%llu,\"wrong_cpu\":%llu}\n",
		       (unsigned long long)fired, (unsigned long long)handled,
		       (unsigned long long)wrong);
	} else {
		if (!quiet) {
			printf("machine: %u CPUs (APIC IDs", sp.ncpus);
			for (i = 0; i < sp.ncpus && i < 16; i++)
				printf(" %u", sp.apic_ids[i]);
			printf("%s), %u devices\n\n", sp.ncpus > 16 ? " ..." : "",
			       ninst);
			printf("%-16s %-12s %-5s %9s %7s\n", "DEVICE", "BDF",
			       "MODE", "REQUESTED", "GRANTED");
			for (j = 0; j < ninst; j++)
				printf("%-16s %04x:%02x:%02x.%u %-5s %9u %7d\n",
				       insts[j].name,
				       UMSI_BDF_SEG(insts[j].bdf),
				       UMSI_BDF_BUS(insts[j].bdf),
				       UMSI_BDF_DEV(insts[j].bdf),
				       UMSI_BDF_FN(insts[j].bdf),
				       mode_name(insts[j].mode),
				       insts[j].ds->want,
				       insts[j].granted > 0 ?
				       insts[j].granted : 0);
			printf("\n");
			if (proc || sp.ncpus <= 8) {
				size_t need = umsi_format_interrupts(sys, NULL,
								     0);
				char *b = malloc(need + 1);

				umsi_format_interrupts(sys, b, need + 1);
				fputs(b, stdout);
				free(b);
			} else {
				printf("%-6s %-16s %5s %6s %8s %6s %6s\n",
				       "IRQ", "DEVICE", "INDEX", "CPU",
				       "APIC-ID", "VECTOR", "COUNT");
				for (j = 0; j < ninst; j++)
					for (i = 0; i < (unsigned)(insts[j].granted > 0 ? insts[j].granted : 0); i++) {
						struct umsi_irq_info inf;

						umsi_irq_get_info(sys, insts[j].irqs[i], &inf);
						printf("%-6u %-16s %5u %6u %8u   0x%02x %6llu\n",
						       inf.irq, insts[j].name, i,
						       inf.cpu, inf.apic_id,
						       inf.vector,
						       (unsigned long long)inf.total);
					}
			}
			printf("\nvector usage per CPU:\n");
			{
				size_t need = umsi_format_vectors(sys, NULL, 0);
				char *b = malloc(need + 1);

				umsi_format_vectors(sys, b, need + 1);
				fputs(b, stdout);
				free(b);
			}
			printf("\ninterrupts: %llu fired, %llu handled, %llu "
			       "on a CPU uMSI did not choose\n",
			       (unsigned long long)fired,
			       (unsigned long long)handled,
			       (unsigned long long)wrong);
		}
		if (short_of) {
			printf("\n%u device(s) did not get what they asked "
			       "for:\n", short_of);
			for (j = 0; j < ninst; j++)
				if (insts[j].granted < (int)insts[j].ds->want)
					printf("  %-16s requested %u, granted "
					       "%d (%s): %s\n", insts[j].name,
					       insts[j].ds->want,
					       insts[j].granted > 0 ?
					       insts[j].granted : 0,
					       mode_name(insts[j].mode),
					       insts[j].reason ?
					       insts[j].reason : "unknown");
		} else if (!quiet) {
			printf("every device got what it asked for\n");
		}
	}

	for (j = 0; j < ninst; j++) {
		if (insts[j].dev)
			umsi_pci_remove(sys, insts[j].dev);
		free(insts[j].irqs);
	}
	free(insts);
	umsi_system_destroy(sys);
	umsi_sim_destroy(sim);
	free(sp.apic_ids);
	free(sp.devs);
	if (fired != handled || wrong)
		return 1;
	return short_of ? 1 : 0;
}
