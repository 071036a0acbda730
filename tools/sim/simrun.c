/* SPDX-License-Identifier: MIT */
/*
 * Building and running a `umsi sim` machine: the simulator with the CPUs
 * of the file, the uMSI system on it, every device instance on its slot;
 * then each instance brought up through the driver API exactly as a
 * driver would, and every vector it was granted fired once and traced to
 * the CPU that took it.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <umsi/pci_regs.h>

#include "simrun.h"

const char *sim_mode_name(enum umsi_pci_mode mode)
{
	switch (mode) {
	case UMSI_MODE_MSIX: return "msix";
	case UMSI_MODE_MSI: return "msi";
	case UMSI_MODE_INTX: return "intx";
	default: return "none";
	}
}

/*
 * The handler every vector gets: counts, and checks the CPU it runs on.
 * On INTx it does what a driver on a shared line must: ask its device
 * (Status.Interrupt Status) whether the interrupt is its own, and ack it
 * only then; the line's other handlers run for it too.
 */
static int sim_handler(uint32_t irq, void *arg)
{
	struct sim_inst *in = arg;
	struct umsi_irq_info info;
	uint32_t cpu = umsi_sim_current_cpu(in->sim);

	if (in->mode == UMSI_MODE_INTX &&
	    !(umsi_sim_cfg_read(in->sim, in->bdf, UMSI_PCI_STATUS, 2) &
	      UMSI_PCI_STATUS_INTX))
		return UMSI_IRQ_NONE;
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

/* The simulator's description of a device line. */
static void sim_describe(const struct sim_devspec *ds,
			 struct umsi_sim_dev_desc *d)
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
		/* The table at the start of BAR 2, the PBA in its last page. */
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

static void sim_why(struct sim_inst *in, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void sim_why(struct sim_inst *in, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(in->why, sizeof(in->why), fmt, ap);
	va_end(ap);
	in->reason = in->why;
}

/* Name and place every instance; the simulator gets each device. */
static void sim_place(struct sim_machine *m)
{
	const struct sim_spec *sp = m->spec;
	unsigned j = 0;

	for (unsigned i = 0; i < sp->ndevs; i++) {
		const struct sim_devspec *ds = &sp->devs[i];

		for (unsigned k = 0; k < ds->count; k++, j++) {
			struct sim_inst *in = &m->insts[j];
			struct umsi_sim_dev_desc dd;

			in->ds = ds;
			in->sys = m->sys;
			in->sim = m->sim;
			if (ds->count > 1)
				snprintf(in->name, sizeof(in->name), "%s%u",
					 ds->name, k);
			else
				snprintf(in->name, sizeof(in->name), "%s",
					 ds->name);
			/* j < SIM_MAX_INSTANCES: the bus is at most 255. */
			in->bdf = UMSI_BDF(0, SIM_FIRST_BUS +
					   j / SIM_SLOTS_PER_BUS,
					   j % SIM_SLOTS_PER_BUS, 0);
			sim_describe(ds, &dd);
			if (umsi_sim_add_device(m->sim, in->bdf, &dd))
				sim_why(in, "error:sim_add_device");
		}
	}
}

int sim_build(struct sim_machine *m, const struct sim_spec *sp, char *err,
	      size_t errlen)
{
	struct umsi_sim_config scfg = { 0 };
	struct umsi_config ucfg = { 0 };
	int ret;

	memset(m, 0, sizeof(*m));
	m->spec = sp;
	if (sp->ninst > SIM_MAX_INSTANCES || !sp->ncpus ||
	    sp->ncpus > SIM_MAX_CPUS) {
		snprintf(err, errlen, "the machine is outside the limits");
		return -1;
	}
	scfg.ncpus = sp->ncpus;
	scfg.apic_ids = sp->apic_ids;
	scfg.plat_flags = sp->plat;
	scfg.ioapic_pins = 24;
	m->sim = umsi_sim_create(&scfg);
	if (!m->sim) {
		snprintf(err, errlen, "the simulator cannot create the "
			 "machine (out of memory?)");
		return -1;
	}
	/* An IRQ number for every vector asked for, within reason. */
	ucfg.max_irqs = (uint32_t)(sp->nvec + 64 > (1u << 20) ? 1u << 20 :
				   sp->nvec + 64);
	if (ucfg.max_irqs < 4096)
		ucfg.max_irqs = 4096;
	ucfg.cmdline = sp->cmdline_line ? sp->cmdline : NULL;
	ret = umsi_system_create(umsi_sim_host_ops(), m->sim, &ucfg, &m->sys);
	if (ret) {
		snprintf(err, errlen, "system create failed: %s\n%s",
			 umsi_strerror(ret), umsi_sim_log_text(m->sim));
		umsi_sim_destroy(m->sim);
		m->sim = NULL;
		return -1;
	}
	umsi_sim_set_dispatch(m->sim, sim_dispatch, m->sys);
	m->insts = calloc(sp->ninst ? sp->ninst : 1, sizeof(*m->insts));
	if (!m->insts) {
		snprintf(err, errlen, "out of memory");
		sim_machine_free(m);
		return -1;
	}
	m->ninst = sp->ninst;
	sim_place(m);
	return 0;
}

/* Why a device got fewer vectors than it asked for, in a few words. */
static void sim_shortfall(struct sim_inst *in, const struct umsi_pci_info *info)
{
	const struct sim_devspec *ds = in->ds;

	if (info->reason)
		sim_why(in, "%s (fell back to %s)", info->reason,
			sim_mode_name(info->mode));
	else if (info->mode == UMSI_MODE_MSI && ds->msi < ds->want)
		sim_why(in, "device offers %u MSI messages", ds->msi);
	else if (info->mode == UMSI_MODE_MSIX && ds->msix < ds->want)
		sim_why(in, "device has %u MSI-X entries", ds->msix);
	else if (info->mode == UMSI_MODE_INTX)
		sim_why(in, "INTx gives one vector");
	else
		sim_why(in, "no_vectors: the allocator ran out");
}

/* Allocate, attach a handler to every vector, fire each one once. */
static void sim_bring_up(struct sim_inst *in)
{
	const struct sim_devspec *ds = in->ds;
	struct umsi_pci_info info;
	uint32_t flags = UMSI_IRQ_ALL_TYPES;
	int ret;

	ret = umsi_pci_add(in->sys, in->bdf, NULL, UMSI_PCI_ADD_FRESH,
			   &in->dev);
	if (ret) {
		in->dev = NULL;
		sim_why(in, "error:%s", umsi_strerror(ret));
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
			sim_why(in, "%s", ret == -UMSI_ENOSPC ? "no_vectors" :
				umsi_strerror(ret));
		}
		return;
	}
	if (ret < (int)ds->want)
		sim_shortfall(in, &info);
	in->irqs = calloc(ret ? (size_t)ret : 1, sizeof(uint32_t));
	if (!in->irqs) {
		sim_why(in, "error:out of memory");
		return;
	}
	in->granted = ret;
	for (int i = 0; i < ret; i++) {
		int irq = umsi_pci_irq_vector(in->dev, (uint32_t)i);

		in->irqs[i] = (uint32_t)irq;
		if (irq < 0 || umsi_request_irq(in->sys, (uint32_t)irq,
						sim_handler, UMSI_IRQF_SHARED,
						in->name, in))
			sim_why(in, "error:request_irq");
	}
	for (int i = 0; i < ret; i++) {
		in->fired++;
		if (info.mode == UMSI_MODE_INTX)
			umsi_sim_intx_set(in->sim, in->bdf, true);
		else
			umsi_sim_fire(in->sim, in->bdf, (unsigned)i);
		umsi_sim_quiesce(in->sim);
	}
}

void sim_run(struct sim_machine *m)
{
	for (unsigned j = 0; j < m->ninst; j++)
		if (!m->insts[j].reason)
			sim_bring_up(&m->insts[j]);
	umsi_sim_quiesce(m->sim);
	m->fired = m->handled = m->wrong_cpu = 0;
	m->short_of = 0;
	for (unsigned j = 0; j < m->ninst; j++) {
		const struct sim_inst *in = &m->insts[j];

		m->fired += in->fired;
		m->handled += in->handled;
		m->wrong_cpu += in->wrong_cpu;
		if (in->granted < (int)in->ds->want)
			m->short_of++;
	}
}

void sim_machine_free(struct sim_machine *m)
{
	for (unsigned j = 0; m->insts && j < m->ninst; j++) {
		if (m->insts[j].dev)
			umsi_pci_remove(m->sys, m->insts[j].dev);
		free(m->insts[j].irqs);
	}
	free(m->insts);
	if (m->sys)
		umsi_system_destroy(m->sys);
	umsi_sim_destroy(m->sim);
	memset(m, 0, sizeof(*m));
}
