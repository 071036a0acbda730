/* SPDX-License-Identifier: MIT */
/*
 * tools/sim/simreport.h - what `umsi sim` prints about a machine it ran,
 * private to the tool: a summary that fits a screen or two for any
 * machine, the full detail as text (--proc), or JSON (--json). The shapes
 * are in docs/sim-format.md.
 */
#ifndef UMSI_TOOLS_SIMREPORT_H
#define UMSI_TOOLS_SIMREPORT_H

#include <stdbool.h>

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

#endif /* UMSI_TOOLS_SIMREPORT_H */
