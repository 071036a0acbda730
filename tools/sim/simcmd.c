/* SPDX-License-Identifier: MIT */
/*
 * umsi sim - run the real library on a simulated machine described by a
 * file (docs/sim-format.md) or the built-in default, bring every device up
 * through the driver API, fire every vector, and report how the vectors
 * were spread and which devices did not get what they asked for.
 *
 * Four steps, one function each: parse the file into a spec
 * (simparse.c), build the machine and run it (simrun.c), report as text
 * or JSON (here).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "simparse.h"
#include "simrun.h"

static const char sim_default_machine[] =
	"# built-in default: 8 CPUs with gaps in their APIC IDs\n"
	"cpus apic 0 2 4 6 8 10 12 14\n"
	"device nvme   vendor=0x1b36 device=0x0010 msix=65 vectors=9\n"
	"device e1000e vendor=0x8086 device=0x10d3 msix=5 vectors=5 intx=A\n"
	"device virtio-net vendor=0x1af4 device=0x1041 msix=64 vectors=17\n"
	"device xhci   vendor=0x1033 device=0x0194 msi=16 vectors=16 addr64\n"
	"device edu    vendor=0x1234 device=0x11e8 msi=1 vectors=1 addr64\n"
	"device legacy vendor=0x8086 device=0x7010 intx=A vectors=1\n";

struct sim_opts {
	bool json, proc, quiet;
	const char *file;       /* NULL: the built-in machine */
};

static void sim_usage(FILE *f)
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

/* Return -1 to go on, else the exit status. */
static int sim_options(int argc, char **argv, struct sim_opts *o)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--json")) {
			o->json = true;
		} else if (!strcmp(a, "--proc")) {
			o->proc = true;
		} else if (!strcmp(a, "--quiet")) {
			o->quiet = true;
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			sim_usage(stdout);
			return 0;
		} else if (a[0] == '-') {
			fprintf(stderr, "umsi sim: unknown option '%s'\n", a);
			sim_usage(stderr);
			return 2;
		} else if (o->file) {
			fprintf(stderr, "umsi sim: one machine file only\n");
			return 2;
		} else {
			o->file = a;
		}
	}
	return -1;
}

/*
 * The file's bytes, at most one more than a machine file may hold (so the
 * parser can say it is too long without reading a huge file whole).
 */
static char *sim_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	size_t cap = 0, n = 0, got;
	char *buf = NULL;
	int err = 0;

	if (!f)
		return NULL;
	do {
		if (n == cap) {
			size_t ncap = cap ? cap * 2 : 8192;
			char *nb;

			if (ncap > (size_t)SIM_MAX_FILE + 1)
				ncap = (size_t)SIM_MAX_FILE + 1;
			nb = realloc(buf, ncap);
			if (!nb) {
				err = ENOMEM;
				break;
			}
			buf = nb;
			cap = ncap;
		}
		got = fread(buf + n, 1, cap - n, f);
		n += got;
	} while (got > 0 && n <= SIM_MAX_FILE);
	if (!err && ferror(f))
		err = errno ? errno : EIO;
	fclose(f);
	if (err) {
		free(buf);
		errno = err;
		return NULL;
	}
	*len = n;
	return buf ? buf : calloc(1, 1);
}

/* Step 1: the machine file (or the default) into @sp. */
static int sim_load(const struct sim_opts *o, struct sim_spec *sp)
{
	char err[SIM_ERR_LEN];
	const char *file = o->file ? o->file : "(built-in)";
	size_t len = sizeof(sim_default_machine) - 1;
	char *text = NULL;
	int ret;

	if (o->file) {
		text = sim_read_file(o->file, &len);
		if (!text) {
			fprintf(stderr, "umsi sim: cannot read %s: %s\n",
				o->file, strerror(errno));
			return -1;
		}
	}
	ret = sim_parse(sp, text ? text : sim_default_machine, len, file, err,
			sizeof(err));
	free(text);
	if (ret)
		fprintf(stderr, "umsi sim: %s\n", err);
	return ret;
}

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

static unsigned sim_granted(const struct sim_inst *in)
{
	return in->granted > 0 ? (unsigned)in->granted : 0;
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
	if (in->granted < (int)in->ds->want) {
		printf(",\"reason\":");
		sim_json_str(in->reason ? in->reason : "unknown");
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
		       inf.apic_id, inf.vector);
	}
	printf("]}");
}

/* Step 4, as JSON (docs/sim-format.md shows the shape). */
static void sim_report_json(const struct sim_machine *m)
{
	const struct sim_spec *sp = m->spec;

	printf("{\"cpus\":[");
	for (unsigned i = 0; i < sp->ncpus; i++) {
		struct umsi_matrix_cpu_stats cs = { 0 };

		umsi_matrix_cpu_stats(umsi_system_matrix(m->sys), i, &cs);
		printf("%s{\"cpu\":%u,\"apic_id\":%u,\"allocated\":%u,"
		       "\"managed\":%u,\"available\":%u,\"online\":%s}",
		       i ? "," : "", i, sp->apic_ids[i],
		       cs.allocated + cs.managed_allocated,
		       cs.managed, cs.available,
		       cs.online ? "true" : "false");
	}
	printf("],\"devices\":[");
	for (unsigned j = 0; j < m->ninst; j++)
		sim_json_device(m, &m->insts[j], j == 0);
	printf("],\"fired\":%llu,\"handled\":%llu,\"wrong_cpu\":%llu}\n",
	       (unsigned long long)m->fired, (unsigned long long)m->handled,
	       (unsigned long long)m->wrong_cpu);
}

/* One of the library's own tables, sized first. */
static void sim_print_table(const struct sim_machine *m, bool vectors)
{
	size_t need = vectors ? umsi_format_vectors(m->sys, NULL, 0) :
		      umsi_format_interrupts(m->sys, NULL, 0);
	char *b = malloc(need + 1);

	if (!b) {
		printf("(out of memory)\n");
		return;
	}
	if (vectors)
		umsi_format_vectors(m->sys, b, need + 1);
	else
		umsi_format_interrupts(m->sys, b, need + 1);
	fputs(b, stdout);
	free(b);
}

/* One row per IRQ: the /proc/interrupts table is too wide past 8 CPUs. */
static void sim_print_irq_rows(const struct sim_machine *m)
{
	printf("%-6s %-16s %5s %6s %8s %6s %6s\n", "IRQ", "DEVICE", "INDEX",
	       "CPU", "APIC-ID", "VECTOR", "COUNT");
	for (unsigned j = 0; j < m->ninst; j++) {
		const struct sim_inst *in = &m->insts[j];

		for (unsigned i = 0; i < sim_granted(in); i++) {
			struct umsi_irq_info inf = { 0 };

			umsi_irq_get_info(m->sys, in->irqs[i], &inf);
			printf("%-6u %-16s %5u %6u %8u   0x%02x %6llu\n",
			       inf.irq, in->name, i, inf.cpu, inf.apic_id,
			       inf.vector, (unsigned long long)inf.total);
		}
	}
}

static void sim_print_machine(const struct sim_machine *m, bool proc)
{
	const struct sim_spec *sp = m->spec;

	printf("machine: %u CPUs (APIC IDs", sp->ncpus);
	for (unsigned i = 0; i < sp->ncpus && i < 16; i++)
		printf(" %u", sp->apic_ids[i]);
	printf("%s), %u devices\n\n", sp->ncpus > 16 ? " ..." : "", m->ninst);
	printf("%-16s %-12s %-5s %9s %7s\n", "DEVICE", "BDF", "MODE",
	       "REQUESTED", "GRANTED");
	for (unsigned j = 0; j < m->ninst; j++) {
		const struct sim_inst *in = &m->insts[j];

		printf("%-16s %04x:%02x:%02x.%u %-5s %9u %7u\n", in->name,
		       UMSI_BDF_SEG(in->bdf), UMSI_BDF_BUS(in->bdf),
		       UMSI_BDF_DEV(in->bdf), UMSI_BDF_FN(in->bdf),
		       sim_mode_name(in->mode), in->ds->want,
		       sim_granted(in));
	}
	printf("\n");
	if (proc || sp->ncpus <= 8)
		sim_print_table(m, false);
	else
		sim_print_irq_rows(m);
	printf("\nvector usage per CPU:\n");
	sim_print_table(m, true);
	printf("\ninterrupts: %llu fired, %llu handled, %llu on a CPU uMSI "
	       "did not choose\n", (unsigned long long)m->fired,
	       (unsigned long long)m->handled,
	       (unsigned long long)m->wrong_cpu);
}

/* Step 4, as text. */
static void sim_report_text(const struct sim_machine *m, bool proc,
			    bool quiet)
{
	bool lost = m->fired != m->handled || m->wrong_cpu;

	if (!quiet)
		sim_print_machine(m, proc);
	else if (lost)
		printf("interrupts: %llu fired, %llu handled, %llu on a CPU "
		       "uMSI did not choose\n", (unsigned long long)m->fired,
		       (unsigned long long)m->handled,
		       (unsigned long long)m->wrong_cpu);
	if (!m->short_of) {
		if (!quiet && !lost)
			printf("every device got what it asked for\n");
		return;
	}
	printf("\n%u device(s) did not get what they asked for:\n",
	       m->short_of);
	for (unsigned j = 0; j < m->ninst; j++) {
		const struct sim_inst *in = &m->insts[j];

		if (in->granted < (int)in->ds->want)
			printf("  %-16s requested %u, granted %u (%s): %s\n",
			       in->name, in->ds->want, sim_granted(in),
			       sim_mode_name(in->mode),
			       in->reason ? in->reason : "unknown");
	}
}

int umsi_cmd_sim(int argc, char **argv)
{
	struct sim_opts o = { 0 };
	struct sim_spec sp;
	struct sim_machine m;
	char err[SIM_ERR_LEN];
	int ret;

	ret = sim_options(argc, argv, &o);
	if (ret >= 0)
		return ret;
	if (sim_load(&o, &sp))
		return 2;
	if (sim_build(&m, &sp, err, sizeof(err))) {
		fprintf(stderr, "umsi sim: %s: %s\n",
			o.file ? o.file : "(built-in)", err);
		sim_spec_free(&sp);
		return 2;
	}
	sim_run(&m);
	if (o.json)
		sim_report_json(&m);
	else
		sim_report_text(&m, o.proc, o.quiet);
	ret = m.fired != m.handled || m.wrong_cpu || m.short_of ? 1 : 0;
	sim_machine_free(&m);
	sim_spec_free(&sp);
	return ret;
}
