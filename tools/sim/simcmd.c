/* SPDX-License-Identifier: MIT */
/*
 * umsi sim - run the real library on a simulated machine described by a
 * file (docs/sim-format.md) or the built-in default, bring every device up
 * through the driver API, fire every vector, and report how the vectors
 * were spread and which devices did not get what they asked for.
 *
 * Four steps, one function each: parse the file into a spec
 * (simparse.c), build the machine and run it (simrun.c), report as text
 * or JSON (simreport.c), and with --svg also draw the vectors of every
 * CPU (simreport.c, with tools/inspect/heatmap.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "simparse.h"
#include "simreport.h"
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
	const char *svg;        /* --svg FILE, or NULL */
};

static void sim_usage(FILE *f)
{
	fprintf(f,
		"usage: umsi sim [--json] [--proc] [--quiet] [--svg FILE] "
		"[MACHINE-FILE]\n\n"
		"Runs uMSI on a simulated machine: CPUs and devices from\n"
		"MACHINE-FILE (format: docs/sim-format.md; examples/) or a\n"
		"built-in default. Every device asks the driver API for its\n"
		"vectors; every vector granted is fired once and must arrive\n"
		"on the CPU and vector uMSI chose.\n\n"
		"The report fits a screen or two for any machine: the devices\n"
		"(alike instances of a line share a row), how the vectors\n"
		"spread over the CPUs, where each device landed, and every\n"
		"device that did not get what it asked for, with what it could\n"
		"have had and what would make it fit.\n\n"
		"  --json    everything, machine-readable\n"
		"  --proc    everything as text: a row per device, the interrupt\n"
		"            table (/proc/interrupts columns while it stays\n"
		"            below 4M cells, else a row per IRQ), every CPU\n"
		"  --quiet   only devices that did not get what they asked for\n"
		"  --svg FILE  also draw the vectors of every CPU as an SVG\n"
		"            heat map in FILE (a row per CPU, a colour per\n"
		"            device line; docs/sim-format.md)\n\n"
		"exit status: 0 every device got what it asked for, 1 some did\n"
		"not, 2 bad input (or an --svg FILE that could not be written).\n");
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
		} else if (!strcmp(a, "--svg")) {
			if (i + 1 >= argc || !argv[i + 1][0]) {
				fprintf(stderr, "umsi sim: --svg needs a file name\n");
				return 2;
			}
			o->svg = argv[++i];
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

/* --svg: the picture into its file. Return: 0, or 2 when it failed. */
static int sim_svg(const struct sim_opts *o, const struct sim_machine *m)
{
	FILE *f = fopen(o->svg, "w");
	int err;

	if (!f) {
		fprintf(stderr, "umsi sim: cannot write %s: %s\n", o->svg,
			strerror(errno));
		return 2;
	}
	err = sim_report_svg(m, o->file ? o->file : "(built-in)", f) ? errno : 0;
	if (fclose(f) && !err)
		err = errno ? errno : EIO;
	if (!err)
		return 0;
	fprintf(stderr, "umsi sim: cannot write %s: %s\n", o->svg,
		strerror(err));
	return 2;
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
	if (o.json) {
		sim_report_json(&m);
	} else {
		struct sim_report_opts ro = { .proc = o.proc, .quiet = o.quiet };

		sim_report_text(&m, &ro);
	}
	ret = m.fired != m.handled || m.wrong_cpu || m.short_of ? 1 : 0;
	if (o.svg && sim_svg(&o, &m))
		ret = 2;
	sim_machine_free(&m);
	sim_spec_free(&sp);
	return ret;
}
