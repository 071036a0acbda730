/* SPDX-License-Identifier: MIT */
/*
 * bench_remap - what interrupt remapping costs and buys, counted on the
 * simulator: the same machine (4 CPUs, an nvme-like function with 65
 * MSI-X entries, a 16-message MSI function) with the x86 local APIC back
 * end (messages name CPU and vector) and with the VT-d back end (messages
 * name a table entry). For a set-up of 16 MSI-X vectors, one migration
 * (averaged over 100), and the 16-message MSI block, it prints the
 * accesses a kernel would make: device config-space and MMIO writes,
 * remapping-unit register accesses, interrupt-entry-cache invalidations
 * and wait descriptors, cross-calls; and what each mode delivers: the
 * CPUs a multi-message block reaches, and whether a message another
 * device forges reaches a handler.
 *
 *   build/bench/bench_remap        (make bench-remap)
 *
 * Figures, not a test: nothing is asserted.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <umsi/ctl.h>
#include <umsi/pci.h>
#include <umsi/pci_regs.h>
#include <umsi/x86.h>
#include "sim/umsi_sim.h"

#define NVME UMSI_BDF(0, 0, 4, 0)
#define MSI  UMSI_BDF(0, 0, 5, 0)
#define MOVES 100

static unsigned handled;

static int handler(uint32_t irq, void *arg)
{
	(void)irq;
	(void)arg;
	handled++;
	return UMSI_IRQ_HANDLED;
}

static int dispatch(void *arg, uint32_t cpu, uint8_t vector)
{
	return umsi_dispatch(arg, cpu, vector);
}

struct counts {
	uint64_t cfg_writes, dev_mmio_writes, unit_mmio, iec, waits, xcalls;
};

static void snap(struct umsi_sim *sim, bool vtd, struct counts *c)
{
	struct umsi_sim_dev_stats a, b;
	struct umsi_sim_stats st;
	struct umsi_sim_vtd_stats v = { 0 };

	umsi_sim_stats(sim, &st);
	umsi_sim_dev_stats(sim, NVME, &a);
	umsi_sim_dev_stats(sim, MSI, &b);
	if (vtd)
		umsi_sim_vtd_stats(sim, &v);
	c->cfg_writes = a.cfg_writes + b.cfg_writes;
	c->dev_mmio_writes = a.mmio_writes + b.mmio_writes;
	/* Every host MMIO access that was not a device's: the unit's. */
	c->unit_mmio = st.op_calls[UMSI_SIM_OP_MMIO_READ32] +
		       st.op_calls[UMSI_SIM_OP_MMIO_WRITE32] -
		       a.mmio_reads - a.mmio_writes - b.mmio_reads -
		       b.mmio_writes;
	c->iec = v.iec_global + v.iec_index;
	c->waits = v.waits;
	c->xcalls = st.op_calls[UMSI_SIM_OP_RUN_ON_CPU];
}

static void row(const char *what, const struct counts *a,
		const struct counts *b, double div)
{
	printf("%-34s %8.1f %8.1f %8.1f %8.1f %8.1f %8.1f\n", what,
	       (b->cfg_writes - a->cfg_writes) / div,
	       (b->dev_mmio_writes - a->dev_mmio_writes) / div,
	       (b->unit_mmio - a->unit_mmio) / div, (b->iec - a->iec) / div,
	       (b->waits - a->waits) / div, (b->xcalls - a->xcalls) / div);
}

static int run(bool vtd)
{
	struct umsi_sim_config sc = { .ncpus = 4, .vtd = vtd,
				      .vtd_ioapic_sid = UMSI_SIM_VTD_IOAPIC_SID };
	struct umsi_vtd_config vc = { .reg_base = UMSI_SIM_VTD_BASE,
				      .ioapic_sid = UMSI_SIM_VTD_IOAPIC_SID };
	struct umsi_config cfg = { 0 };
	struct umsi_sim_dev_desc x, m;
	struct umsi_pci_dev *dx, *dm;
	struct umsi_system *sys;
	struct umsi_sim *sim;
	struct counts c0, c1;
	unsigned cpus = 0, i, forged;
	struct umsi_irq_info info;
	struct umsi_msg msg;
	uint32_t data, ctrl;
	int irq;

	if (vtd) {
		cfg.ctl = &umsi_ctl_x86_vtd;
		cfg.ctl_config = &vc;
	}
	sim = umsi_sim_create(&sc);
	if (!sim || umsi_system_create(umsi_sim_host_ops(), sim, &cfg, &sys))
		return 1;
	umsi_sim_set_dispatch(sim, dispatch, sys);
	memset(&x, 0, sizeof(x));
	x.vendor = 0x1b36;
	x.device = 0x0010;
	x.class_code = 0x010802;
	x.bars[0].size = 0x4000;
	x.bars[0].is64 = true;
	x.msix.present = true;
	x.msix.nentries = 65;
	x.msix.table_offset = 0x2000;
	x.msix.pba_offset = 0x3000;
	memset(&m, 0, sizeof(m));
	m.vendor = 0x8086;
	m.device = 0x10d3;
	m.class_code = 0x020000;
	m.bars[0].size = 0x20000;
	m.msi.present = true;
	m.msi.nvec = 16;
	m.msi.is64 = true;
	m.msi.maskbit = true;
	if (umsi_sim_add_device(sim, NVME, &x) ||
	    umsi_sim_add_device(sim, MSI, &m) ||
	    umsi_pci_add(sys, NVME, NULL, UMSI_PCI_ADD_FRESH, &dx) ||
	    umsi_pci_add(sys, MSI, NULL, 0, &dm))
		return 1;
	printf("\n%s\n", vtd ? "VT-d remapping (umsi_ctl_x86_vtd)" :
	       "no remapping (umsi_ctl_x86_lapic)");
	printf("%-34s %8s %8s %8s %8s %8s %8s\n", "", "cfg wr", "dev mmio",
	       "unit mmio", "IEC inv", "waits", "xcalls");
	umsi_sim_stats_reset(sim);
	snap(sim, vtd, &c0);
	if (umsi_pci_alloc_irq_vectors(dx, 16, 16, UMSI_PCI_IRQ_MSIX) != 16)
		return 1;
	snap(sim, vtd, &c1);
	row("set-up, 16 MSI-X vectors", &c0, &c1, 1);
	row("  per vector", &c0, &c1, 16);
	irq = umsi_pci_irq_vector(dx, 3);
	umsi_request_irq(sys, (uint32_t)irq, handler, 0, "bench", NULL);
	snap(sim, vtd, &c0);
	for (i = 0; i < MOVES; i++) {
		uint64_t w = 1ull << (i % 4);
		struct umsi_cpumask one = { &w, 4 };

		umsi_irq_set_affinity(sys, (uint32_t)irq, &one);
	}
	snap(sim, vtd, &c1);
	row("one migration (mean of 100)", &c0, &c1, MOVES);
	snap(sim, vtd, &c0);
	if (umsi_pci_alloc_irq_vectors(dm, 16, 16, UMSI_PCI_IRQ_MSI) != 16)
		return 1;
	snap(sim, vtd, &c1);
	row("set-up, 16-message MSI block", &c0, &c1, 1);
	for (i = 0; i < 16; i++) {
		umsi_irq_get_info(sys, (uint32_t)umsi_pci_irq_vector(dm, i),
				  &info);
		cpus |= 1u << info.cpu;
	}
	printf("16-message MSI block: its messages reach %d CPU%s\n",
	       __builtin_popcount(cpus), __builtin_popcount(cpus) > 1 ? "s" :
	       "");
	/* The MSI function writes the nvme's message of vector 3. */
	umsi_sim_msix_entry_get(sim, NVME, 3, &msg.address, &data, &ctrl);
	handled = 0;
	umsi_sim_msg_write_from(sim, MSI, msg.address, data);
	forged = handled;
	printf("a message forged by another function (the nvme's vector 3 "
	       "message, written by %02x:%02x.%x): %s\n", 0, 5, 0,
	       forged ? "handled by the nvme's handler" :
	       "refused by the unit, no handler");
	umsi_pci_remove(sys, dx);
	umsi_pci_remove(sys, dm);
	umsi_system_destroy(sys);
	umsi_sim_destroy(sim);
	return 0;
}

int main(void)
{
	printf("Interrupt remapping on the simulator: accesses per operation\n"
	       "(cfg wr: device config writes; dev mmio: MSI-X table writes; "
	       "unit mmio:\nremapping-unit register accesses; IEC inv / waits: "
	       "invalidation and wait\ndescriptors; xcalls: cross-calls to "
	       "the CPU an IRQ left)\n");
	if (run(false) || run(true)) {
		fprintf(stderr, "bench_remap: set-up failed\n");
		return 1;
	}
	return 0;
}
