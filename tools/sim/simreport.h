/* SPDX-License-Identifier: MIT */
/*
 * tools/sim/simreport.h - what `umsi sim` prints about a machine it ran,
 * private to the tool: a summary that fits a screen or two for any
 * machine, the full detail as text (--proc), JSON (--json), or a picture
 * of the vectors of every CPU (--svg). The shapes are in
 * docs/sim-format.md.
 */
#ifndef UMSI_TOOLS_SIMREPORT_H
#define UMSI_TOOLS_SIMREPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "simrun.h"

/* Rows of a grouped table (devices, landings, shortfalls) in a summary. */
#define SIM_REPORT_ROWS 20u

struct sim_report_opts {
	bool proc;      /* the full detail: every device, every IRQ, every CPU */
	bool quiet;     /* only the devices that did not get what they asked */
};

/* The report as text, on standard output. */
void sim_report_text(const struct sim_machine *m,
		     const struct sim_report_opts *o);

/* The report as one JSON object, on standard output. */
void sim_report_json(const struct sim_machine *m);

/**
 * sim_report_svg - the vectors of every CPU as an SVG heat map
 * @m: a machine sim_run() ran
 * @name: the machine file's name, for the title
 * @f: where the SVG goes
 *
 * A row per CPU (grouped by socket with `sockets`), a column per vector
 * of the CPU's space, each cell coloured by what uMSI's matrix says the
 * vector is and, when in use, by the device line that holds it (the ten
 * lines with the most vectors each have a colour, the rest share one).
 * Return: 0, or -1 (errno set) when out of memory or writing failed.
 */
int sim_report_svg(const struct sim_machine *m, const char *name, FILE *f);

#endif /* UMSI_TOOLS_SIMREPORT_H */
