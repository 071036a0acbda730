/* SPDX-License-Identifier: MIT */
/*
 * `umsi inspect [--check] [--dump FILE] [-s [[domain:]bus:]dev.fn] [--json] [-v]
 *  [--svg FILE]`
 *
 * Exit status: 0 when at least one function was decoded (problems with
 * others are reported, not fatal), 1 when nothing could be decoded, 2 for
 * a usage error. With --check: 0 nothing found, 1 findings, 2 could not
 * inspect (no input, or no function whose capabilities could be read) or
 * a usage error.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "inspect.h"

static void usage(FILE *f)
{
	fputs("usage: umsi inspect [--check] [--dump FILE] [-s [[domain:]bus:]dev.fn] [--json] [-v]\n"
	      "                    [--svg FILE]\n"
	      "\n"
	      "Decode the MSI and MSI-X state of every PCI function of this machine\n"
	      "(from sysfs, read-only), or of an `lspci -x/-xxx/-xxxx` dump.\n"
	      "\n"
	      "  --check      judge it instead: one line per finding (an unmasked MSI-X\n"
	      "               entry no IRQ owns, a destination outside the IRQ's\n"
	      "               affinity, pending behind a mask, two functions sending\n"
	      "               the same message, Function Mask left set, Bus Master\n"
	      "               off, more MSI messages enabled than offered); exit 0\n"
	      "               nothing found, 1 findings, 2 could not inspect\n"
	      "  --dump FILE  read FILE (- for standard input) instead of this machine\n"
	      "  -s SLOT      only the function [[domain:]bus:]dev.fn (hex; omitted\n"
	      "               domain and bus are 0)\n"
	      "  --json       one JSON document instead of text\n"
	      "  -v           also list functions without MSI or MSI-X\n"
	      "  --svg FILE   also draw the vectors of every CPU as an SVG heat map\n"
	      "               in FILE (a row per CPU, a colour per function)\n"
	      "  --sysroot D  read sysfs and procfs under D instead of / (for tests)\n"
	      "\n"
	      "See umsi(1).\n", f);
}

static char *read_file(const char *name, size_t *len)
{
	FILE *f = strcmp(name, "-") ? fopen(name, "rb") : stdin;
	size_t cap = 1 << 16, n = 0, got;
	char *buf;

	if (!f)
		return NULL;
	buf = malloc(cap);
	while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
		n += got;
		if (n == cap) {
			char *nb = cap < (256u << 20) ? realloc(buf, cap * 2) : NULL;

			if (!nb) {
				free(buf);
				buf = NULL;
				errno = EFBIG;
				break;
			}
			buf = nb;
			cap *= 2;
		}
	}
	if (buf && ferror(f)) {
		free(buf);
		buf = NULL;
	}
	if (f != stdin)
		fclose(f);
	*len = n;
	return buf;
}

static int cmp_dev(const void *a, const void *b)
{
	const struct inspect_dev *x = a, *y = b;

	/* Two functions at one address (a dump can say so): file order. */
	if (x->bdf != y->bdf)
		return x->bdf < y->bdf ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

/* Keep only the errors about @sel and about the input as a whole. */
static void filter_errors(struct inspect_report *rep, umsi_bdf_t sel)
{
	char b[16];
	size_t k = 0;

	inspect_bdf_str(sel, b);
	for (size_t i = 0; i < rep->nerrs; i++)
		if (!rep->errs[i].bdf[0] || !strcmp(rep->errs[i].bdf, b))
			rep->errs[k++] = rep->errs[i];
	rep->nerrs = k;
}

static int from_dump(struct inspect_report *rep, const char *file,
		     umsi_bdf_t sel, bool have_sel)
{
	struct inspect_fn_list fl = { 0 };
	size_t len;
	char *text = read_file(file, &len);
	bool found = false;

	if (!text) {
		fprintf(stderr, "umsi inspect: cannot read %s: %s\n", file,
			strerror(errno));
		return -1;
	}
	if (inspect_dump_parse(text, len, &fl, rep)) {
		free(text);
		inspect_fn_list_free(&fl);
		fprintf(stderr, "umsi inspect: out of memory reading %s\n", file);
		return -1;
	}
	free(text);
	for (size_t i = 0; i < fl.n; i++) {
		struct inspect_dev *d;

		if (have_sel && fl.fns[i].bdf != sel)
			continue;
		found = true;
		d = inspect_decode_fn(rep, &fl.fns[i], NULL);
		if (d && d->has_msix)
			snprintf(d->entries_reason, INSPECT_MSG_LEN,
				 "a dump holds configuration space only, not the BAR memory where the MSI-X table lives");
	}
	if (have_sel) {
		filter_errors(rep, sel);
		if (!found) {
			char b[16];

			inspect_bdf_str(sel, b);
			inspect_error(rep, 0, false, "no function %s in %s", b,
				      file);
		}
	} else if (!fl.n) {
		inspect_error(rep, 0, false,
			      "%s holds no device (expected lspci -x/-xxx/-xxxx output: a line such as '00:1f.3 Audio device: ...' followed by rows '00: 86 80 ...')",
			      file);
	}
	inspect_fn_list_free(&fl);
	return 0;
}

/* --svg: the picture into @file. Return: 0, or -1 after saying why not. */
static int write_svg(const struct inspect_report *rep, const char *file)
{
	FILE *f = fopen(file, "w");
	int err;

	if (!f) {
		fprintf(stderr, "umsi inspect: cannot write %s: %s\n", file,
			strerror(errno));
		return -1;
	}
	err = inspect_write_svg(f, rep) ? errno : 0;
	if (fclose(f) && !err)
		err = errno ? errno : EIO;
	if (err == ENODATA) {
		fprintf(stderr, "umsi inspect: %s: nothing to draw: %s\n", file,
			rep->live ? "no CPU is known (no /proc/interrupts, no /proc/cpuinfo)" :
			"no enabled MSI message names an APIC ID (a dump lists no CPUs)");
		return -1;
	}
	if (err) {
		fprintf(stderr, "umsi inspect: cannot write %s: %s\n", file,
			strerror(err));
		return -1;
	}
	return 0;
}

/* --check: judge the report; 0 nothing found, 1 findings, 2 no verdict. */
static int run_check(struct inspect_report *rep, bool json)
{
	int status;

	if (inspect_check(rep)) {
		fprintf(stderr, "umsi inspect: out of memory while checking\n");
		inspect_report_free(rep);
		return 2;
	}
	if (json)
		inspect_write_json(stdout, rep);
	else
		inspect_write_check_text(stdout, rep);
	status = rep->nfindings ? 1 : 0;
	if (!rep->check_fns) {
		status = 2;
		fprintf(stderr, "umsi inspect: nothing could be checked: %s\n",
			!rep->decoded ? "no function could be decoded" :
			rep->live ? "no function's capabilities could be read (run as root)" :
			"no function in the dump has its capabilities (use lspci -xxx)");
	}
	inspect_report_free(rep);
	return status;
}

int umsi_cmd_inspect(int argc, char **argv)
{
	const char *dump = NULL, *sysroot = "", *svg = NULL;
	bool json = false, verbose = false, have_sel = false, check = false;
	umsi_bdf_t sel = 0;
	struct inspect_report rep;
	int status;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(a, "--json")) {
			json = true;
		} else if (!strcmp(a, "--check")) {
			check = true;
		} else if (!strcmp(a, "-v")) {
			verbose = true;
		} else if ((!strcmp(a, "--dump") || !strcmp(a, "-F") ||
			    !strcmp(a, "-s") || !strcmp(a, "--sysroot") ||
			    !strcmp(a, "--svg")) &&
			   (i + 1 >= argc || (!strcmp(a, "--svg") &&
					      !argv[i + 1][0]))) {
			fprintf(stderr, "umsi inspect: %s needs an argument\n", a);
			return 2;
		} else if (!strcmp(a, "--dump") || !strcmp(a, "-F")) {
			dump = argv[++i];
		} else if (!strcmp(a, "--sysroot")) {
			sysroot = argv[++i];
		} else if (!strcmp(a, "--svg")) {
			svg = argv[++i];
		} else if (!strcmp(a, "-s")) {
			if (inspect_parse_selector(argv[++i], &sel)) {
				fprintf(stderr,
					"umsi inspect: malformed selector '%s': expected [[domain:]bus:]dev.fn in hex without wildcards, e.g. 0000:00:1f.3 or 03:00.0\n",
					argv[i]);
				return 2;
			}
			have_sel = true;
		} else {
			fprintf(stderr, "umsi inspect: unknown argument '%s'\n", a);
			usage(stderr);
			return 2;
		}
	}

	inspect_report_init(&rep, !dump ? "live" : strcmp(dump, "-") ? dump :
			    "(standard input)");
	if (dump ? from_dump(&rep, dump, sel, have_sel) :
	    inspect_live(&rep, sel, have_sel, sysroot)) {
		if (!dump)
			for (size_t i = 0; i < rep.nerrs; i++)
				fprintf(stderr, "umsi inspect: %s\n",
					rep.errs[i].message);
		inspect_report_free(&rep);
		return check ? 2 : 1;
	}
	/* lspci lists functions in address order; so do we. */
	if (rep.ndevs)
		qsort(rep.devs, rep.ndevs, sizeof(*rep.devs), cmp_dev);
	inspect_note_logical(&rep);
	if (svg && write_svg(&rep, svg)) {
		inspect_report_free(&rep);
		return 2;
	}
	if (check)
		return run_check(&rep, json);
	if (json)
		inspect_write_json(stdout, &rep);
	else
		inspect_write_text(stdout, &rep, verbose);
	status = rep.decoded ? 0 : 1;
	if (!rep.decoded)
		fprintf(stderr, "umsi inspect: nothing could be decoded\n");
	inspect_report_free(&rep);
	return status;
}
