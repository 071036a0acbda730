/* SPDX-License-Identifier: MIT */
/*
 * tools/sim/simrun.h - building and running the machine a `umsi sim` file
 * describes, private to the tool. The command (simcmd.c) and the fuzzer
 * (tests/fuzz/fuzz_simfile.c) share it.
 */
#ifndef UMSI_TOOLS_SIMRUN_H
#define UMSI_TOOLS_SIMRUN_H

#include <umsi/umsi.h>
#include <umsi/matrix.h>
#include "sim/umsi_sim.h"

#include "simparse.h"

/* One instance of a device on the machine. */
struct sim_inst {
	const struct sim_devspec *ds;
	char name[48];
	umsi_bdf_t bdf;
	struct umsi_pci_dev *dev;
	int granted;
	enum umsi_pci_mode mode;
	const char *reason;     /* why granted < ds->want, or NULL */
	char why[96];
	/*
	 * When granted < ds->want: the most MSI or MSI-X vectors it could
	 * have had at its turn (measured: see sim_probe()), and what would
	 * have made it fit, in a few words ("" when nothing would).
	 */
	int could;
	char fix[192];
	uint64_t handled, fired, wrong_cpu;
	uint32_t *irqs;         /* granted of them */
	struct sim_inst *pf;    /* a VF: its PF's instance */
	unsigned vf_index;
	int sriov_err;          /* a PF: umsi_pci_sriov_enable()'s result */
	struct umsi_system *sys;
	struct umsi_sim *sim;
};

struct sim_machine {
	const struct sim_spec *spec;
	struct umsi_sim *sim;
	struct umsi_system *sys;
	struct sim_inst *insts;
	unsigned ninst;
	/* Filled by sim_run(). */
	uint64_t fired, handled, wrong_cpu;
	unsigned short_of;      /* instances granted fewer than they asked */
	uint32_t cpu_capacity;  /* vectors an added CPU would offer */
	uint32_t max_apic_id;   /* the highest APIC ID of the machine */
	/*
	 * SR-IOV, per device line (spec->ndevs entries; VF lines only):
	 * how many more VFs of that line's vf-vectors= fit once everything
	 * is up, measured (see sim_vf_room()), and why the next one did not
	 * (a UMSI_E* code; 0: the measure stopped at SIM_VF_ROOM_MAX).
	 */
	unsigned *vf_room;
	int *vf_room_err;
	uint32_t *vf_room_free;  /* CPU vectors still free when it stopped */
};

/* The most VFs sim_vf_room() tries to fit beyond those in the file. */
#define SIM_VF_ROOM_MAX 65536u

/**
 * sim_build - create the simulated machine and the uMSI system on it
 * @m: receives the machine; zeroed first
 * @sp: a parsed machine file; must outlive @m
 * @err: receives the reason on failure
 * @errlen: its size
 *
 * Every instance of every device is placed on its slot (see simparse.h)
 * but not yet brought up.
 * Return: 0, or -1 with @err set and nothing left allocated.
 */
int sim_build(struct sim_machine *m, const struct sim_spec *sp, char *err,
	      size_t errlen);

/**
 * sim_run - bring every instance up through the driver API, request a
 * handler for every vector granted, fire each vector once, and count what
 * arrived where
 * @m: a machine from sim_build()
 */
void sim_run(struct sim_machine *m);

/* Remove every device and free the machine; @m may be zeroed. */
void sim_machine_free(struct sim_machine *m);

const char *sim_mode_name(enum umsi_pci_mode mode);

#endif /* UMSI_TOOLS_SIMRUN_H */
