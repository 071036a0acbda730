/* SPDX-License-Identifier: MIT */
/*
 * tools/sim/simparse.h - the `umsi sim` machine-file parser, private to
 * the tool (format: docs/sim-format.md).
 *
 * The parser takes the file's bytes and its length, so it can be handed
 * anything (tests/fuzz/fuzz_simfile.c does): it never reads past @len,
 * checks every number against its limit before any arithmetic, and on
 * bad input returns a message naming the file, the line and the problem
 * with nothing left allocated.
 */
#ifndef UMSI_TOOLS_SIMPARSE_H
#define UMSI_TOOLS_SIMPARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/umsi_sim.h"

/* The simulator's own limit (umsi_sim_create() refuses more). */
#define SIM_MAX_CPUS       ((unsigned)UMSI_SIM_MAX_CPUS)
/*
 * Instance k sits on bus 1 + k / 32, slot k % 32, function 0: buses 1 to
 * 255 of domain 0 hold 255 x 32 of them.
 */
#define SIM_FIRST_BUS      1u
#define SIM_SLOTS_PER_BUS  32u
#define SIM_MAX_INSTANCES  ((256u - SIM_FIRST_BUS) * SIM_SLOTS_PER_BUS)
/*
 * Words on one line: `cpus apic` with every CPU's ID, and one more so
 * that a line with one ID too many hears about CPUs, not words.
 */
#define SIM_MAX_WORDS      (SIM_MAX_CPUS + 3u)
#define SIM_MAX_FILE       (16u << 20)  /* bytes in one machine file */
#define SIM_CMDLINE_MAX    1024u        /* cmdline, with its NUL */
#define SIM_NAME_MAX       32u          /* device name, with its NUL */
#define SIM_MAX_VECTORS    65536u       /* vectors= and min= */
#define SIM_MAX_MSIX       2048u        /* msix= (the PCI spec's limit) */
#define SIM_ERR_LEN        512u
#define SIM_MAX_VFS        255u         /* vfs=: functions 1..255 of a bus */
#define SIM_MAX_IOAPICS    8u           /* platform ioapics=N */
#define SIM_IOAPIC_PINS    24u          /* inputs of each IO-APIC */
/* `unit` lines: remapping units besides the platform's first one. */
#define SIM_MAX_UNITS      (UMSI_SIM_VTD_MAX_UNITS - 1u)

/*
 * `platform its`: the simulated GICv3's redistributors have 16 INTID bits
 * (QEMU virt's GICD_TYPER.IDbits; UMSI_SIM_CTL_ITS takes no more), and
 * uMSI's ITS back end gives every CPU a run of LPIs of its own from
 * INTID 8192, a multiple of 64 long (struct umsi_its_config.nvec): the
 * LPIs 8192..65535 are shared out, 256 a CPU while they last (224 CPUs),
 * fewer beyond, and 64 a CPU at the least: 896 CPUs at most.
 */
#define SIM_ITS_FIRST_LPI  8192u
#define SIM_ITS_LPI_BITS   16u
#define SIM_ITS_LPIS       ((1u << SIM_ITS_LPI_BITS) - SIM_ITS_FIRST_LPI)
#define SIM_ITS_NVEC_MAX   256u
#define SIM_ITS_NVEC_STEP  64u
#define SIM_ITS_MAX_CPUS   (SIM_ITS_LPIS / SIM_ITS_NVEC_STEP)
/* platform gicv2m: QEMU virt's frame (SPIs 80-143), a GICv2's 8 CPUs. */
#define SIM_GICV2M_MAX_CPUS 8u

/* One `device` line. */
struct sim_devspec {
	char name[SIM_NAME_MAX];
	unsigned line;
	uint16_t vendor, device;
	unsigned msix;          /* MSI-X table size, 0: none */
	unsigned msi;           /* MSI messages capable, 0: none */
	bool maskable, addr64;
	unsigned intx;          /* 0: none, 1-4: INTA-INTD */
	unsigned gsi;           /* gsi=: where the pin arrives; 0: default */
	unsigned want, min;     /* vectors= and min= (defaults filled in) */
	unsigned count;         /* instances of it, 1 to SIM_MAX_INSTANCES */
	bool spread;
	/*
	 * SR-IOV: vfs= on a PF's line (each instance then sits alone on a
	 * bus, its VFs at functions 1..vfs of it); the parser adds the VFs'
	 * own line right after it, with is_vf set, count = count x vfs,
	 * msix = vf-msix=, want = vf-vectors=, named NAME-vf.
	 */
	unsigned vfs;           /* 0: no SR-IOV */
	unsigned vf_msix, vf_want;
	uint16_t vf_device;
	bool is_vf;             /* the VFs of the line before */
	unsigned unit;          /* `unit` line naming it: 1..; 0: the first */
};

/* One `unit` line: a remapping unit of its own for some devices. */
struct sim_unitspec {
	uint64_t base;          /* its registers */
	unsigned line;
};

/* A whole machine file. */
struct sim_spec {
	uint32_t ncpus;         /* 1 to SIM_MAX_CPUS */
	uint32_t *apic_ids;     /* ncpus of them, all different */
	unsigned cpus_line;
	uint32_t sockets;       /* `sockets N`: N equal runs of CPUs; 0: none */
	unsigned sockets_line;
	uint32_t plat;          /* UMSI_PLAT_* */
	bool imsic;             /* platform imsic: RISC-V harts, IMSIC files */
	unsigned imsic_line;
	bool its;               /* platform its: Arm CPUs, a GICv3 ITS (LPIs) */
	unsigned its_line;
	bool gicv2m;            /* platform gicv2m: Arm CPUs, a GICv2 + v2m frame */
	unsigned gicv2m_line;
	bool vtd;               /* platform vtd: x86 with a VT-d unit uMSI owns */
	unsigned vtd_line;
	bool amdvi;             /* platform amd-vi: x86 with an AMD-Vi IOMMU */
	unsigned amdvi_line;
	uint32_t nioapics;      /* platform ioapics=N (x86); 0: one */
	unsigned ioapics_line;
	uint32_t num_ids;       /* platform num-ids=N (imsic); 0: 255 */
	/* `unit` lines (vtd, amd-vi): units 1..nunits, units[k - 1]. */
	struct sim_unitspec units[SIM_MAX_UNITS];
	unsigned nunits;
	unsigned num_ids_line;
	char cmdline[SIM_CMDLINE_MAX];
	unsigned cmdline_line;  /* 0: no cmdline line */
	struct sim_devspec *devs;
	unsigned ndevs, cap_devs;
	unsigned ninst;         /* sum of count=, at most SIM_MAX_INSTANCES */
	uint64_t nvec;          /* sum of vectors= x count= */
	/*
	 * Where the next instance goes: bus @next_bus, slot @next_slot (32
	 * to a bus; a PF with VFs takes a bus of its own). At most bus 255.
	 */
	unsigned next_bus, next_slot;
};

/**
 * sim_parse - parse a machine file
 * @sp: receives the machine; zeroed first
 * @text: the file's bytes (need not be NUL-terminated; a NUL among them
 *        is an error)
 * @len: their number
 * @file: the file's name, for messages
 * @err: receives "FILE:LINE: problem" (or "FILE: problem") on failure
 * @errlen: the size of @err
 *
 * Return: 0 and @sp filled (free it with sim_spec_free()), or -1 with
 * @err set and nothing allocated.
 */
int sim_parse(struct sim_spec *sp, const char *text, size_t len,
	      const char *file, char *err, size_t errlen);

/**
 * sim_its_lpis_per_cpu - LPIs each CPU of an ITS machine gets
 * @ncpus: the machine's CPUs
 *
 * Return: the most LPIs a CPU can have when @ncpus share INTIDs
 * SIM_ITS_FIRST_LPI..2^SIM_ITS_LPI_BITS - 1, a multiple of
 * SIM_ITS_NVEC_STEP up to SIM_ITS_NVEC_MAX; 0 for more than
 * SIM_ITS_MAX_CPUS CPUs (or none).
 */
uint32_t sim_its_lpis_per_cpu(uint32_t ncpus);

/*
 * sim_socket_of - the socket of CPU @cpu (its place on the cpus line):
 * the CPUs form sp->sockets equal runs in order. -1 without `sockets`.
 */
static inline int32_t sim_socket_of(const struct sim_spec *sp, uint32_t cpu)
{
	if (!sp->sockets)
		return -1;
	return (int32_t)(cpu / (sp->ncpus / sp->sockets));
}

/* Free what sim_parse() allocated; @sp may be zeroed or half-filled. */
void sim_spec_free(struct sim_spec *sp);

#endif /* UMSI_TOOLS_SIMPARSE_H */
