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

#include <umsi/ctl.h>
#include <umsi/msg.h>
#include <umsi/x86.h>
#include <umsi/pci_regs.h>

#include <umsi/source.h>
#include "simrun.h"

_Static_assert(SIM_MAX_CPUS <= UMSI_SIM_MAX_CPUS,
	       "the parser takes no more CPUs than the simulator has");

const char *sim_mode_name(enum umsi_pci_mode mode)
{
	switch (mode) {
	case UMSI_MODE_MSIX: return "msix";
	case UMSI_MODE_MSI: return "msi";
	case UMSI_MODE_INTX: return "intx";
	default: return "none";
	}
}

/* The power of two at or above @n (n <= 32 here: MSI's messages). */
static unsigned sim_pow2_up(unsigned n)
{
	unsigned p = 1;

	while (p < n)
		p <<= 1;
	return p;
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

/* The interrupt entry; an IMSIC identity may be above 255. */
static int sim_dispatch(void *arg, uint32_t cpu, uint32_t id)
{
	return umsi_dispatch(arg, cpu, id);
}

/* ITS machines: the kernel's IAR gives the INTID; uMSI's LPIs from 8192. */
static int sim_dispatch_its(void *arg, uint32_t cpu, uint32_t intid)
{
	return umsi_dispatch(arg, cpu, intid - SIM_ITS_FIRST_LPI);
}

/* GICv2m machines: GICC_IAR's INTID; uMSI's SPIs from the frame's first. */
static int sim_dispatch_spi(void *arg, uint32_t cpu, uint32_t intid)
{
	return umsi_dispatch(arg, cpu, intid - UMSI_SIM_V2M_SPI_BASE);
}

/*
 * Identities a CPU has: 256 x86 vectors, an IMSIC file's num-ids + 1, an
 * ITS machine's LPIs a CPU, or the v2m frame's SPIs (every CPU may take
 * any; they are shared).
 */
static uint32_t sim_cpu_ids(const struct sim_spec *sp)
{
	if (sp->its)
		return sim_its_lpis_per_cpu(sp->ncpus);
	if (sp->gicv2m)
		return UMSI_SIM_V2M_SPI_COUNT;
	if (!sp->imsic)
		return 256;
	return (sp->num_ids ? sp->num_ids : 255) + 1;
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
	if (ds->vfs) {
		/* Its VFs at functions 1.. of its bus; each VF's table at
		 * the start of its BAR 0, the PBA in the last page. */
		uint64_t table = (uint64_t)ds->vf_msix * 16, size = 0x2000;

		while (size < table + 0x1000)
			size <<= 1;
		d->sriov.present = true;
		d->sriov.total_vfs = (uint16_t)ds->vfs;
		d->sriov.first_offset = 1;
		d->sriov.stride = 1;
		d->sriov.vf_device = ds->vf_device;
		d->sriov.vf_bars[0].size = size;
		d->sriov.vf_bars[0].is64 = true;
		d->sriov.vf_msix = (struct umsi_sim_msix_desc){
			.present = true, .nentries = (uint16_t)ds->vf_msix,
			.table_bar = 0, .table_offset = 0, .pba_bar = 0,
			.pba_offset = (uint32_t)(size - 0x1000),
		};
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

/*
 * Where the next instance of @ds (not a VF) goes, from @bus, @slot, which
 * move on: 32 to a bus, a PF with VFs alone on one. The parser saw to it
 * that the bus is at most 255.
 */
static umsi_bdf_t sim_next_place(const struct sim_devspec *ds, unsigned *bus,
				 unsigned *slot)
{
	umsi_bdf_t bdf;

	if (ds->vfs && *slot) {
		(*bus)++;
		*slot = 0;
	}
	bdf = UMSI_BDF(0, *bus, *slot, 0);
	if (ds->vfs) {
		(*bus)++;
	} else if (++*slot == SIM_SLOTS_PER_BUS) {
		(*bus)++;
		*slot = 0;
	}
	return bdf;
}

/* Name and place every instance; the simulator gets each device. */
static void sim_place(struct sim_machine *m)
{
	const struct sim_spec *sp = m->spec;
	unsigned j = 0, bus = SIM_FIRST_BUS, slot = 0, pf0 = 0;

	for (unsigned i = 0; i < sp->ndevs; i++) {
		const struct sim_devspec *ds = &sp->devs[i];

		if (!ds->is_vf)
			pf0 = j;
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
			if (ds->is_vf) {
				/* VF v of PF instance k / vfs: made by VF
				 * Enable at the PF's function 1 + v. */
				unsigned vfs = sp->devs[i - 1].vfs;

				in->pf = &m->insts[pf0 + k / vfs];
				in->vf_index = k % vfs;
				in->bdf = in->pf->bdf + 1 + in->vf_index;
				continue;
			}
			in->bdf = sim_next_place(ds, &bus, &slot);
			sim_describe(ds, &dd);
			if (umsi_sim_add_device(m->sim, in->bdf, &dd))
				sim_why(in, "error:sim_add_device");
			else if (ds->gsi &&
				 umsi_sim_set_intx_route(m->sim, in->bdf,
							 (int)ds->gsi))
				sim_why(in, "error:sim_set_intx_route");
		}
	}
}

/*
 * IRQ numbers enough that vectors, not numbers, run out first: one per
 * IRQ a device can hold (an MSI block has an IRQ for each of its 2^k
 * messages), but never more than the CPUs have vectors, plus room below
 * the first dynamic IRQ; at most what the library takes.
 */
static uint32_t sim_irq_numbers(const struct sim_spec *sp)
{
	uint64_t need = 0;

	for (unsigned i = 0; i < sp->ndevs; i++) {
		const struct sim_devspec *ds = &sp->devs[i];
		uint64_t one = 1;

		if (ds->msix)
			one = ds->want < ds->msix ? ds->want : ds->msix;
		if (ds->msi) {
			uint64_t b = sim_pow2_up(ds->want < ds->msi ? ds->want
								      : ds->msi);

			if (b > one)
				one = b;
		}
		need += one * ds->count;
	}
	if (need > (uint64_t)sp->ncpus * sim_cpu_ids(sp))
		need = (uint64_t)sp->ncpus * sim_cpu_ids(sp);
	/* VFs: the report measures how many more fit; numbers must not
	 * be what stops them. */
	for (unsigned i = 0; i < sp->ndevs; i++)
		if (sp->devs[i].vfs)
			need = (uint64_t)sp->ncpus * sim_cpu_ids(sp);
	need += 4096;
	return need > UMSI_MAX_IRQS ? UMSI_MAX_IRQS : (uint32_t)need;
}

/* What an added CPU would offer, and the highest APIC ID there is. */
static void sim_measure(struct sim_machine *m)
{
	const struct umsi_matrix *mx = umsi_system_matrix(m->sys);

	for (uint32_t i = 0; i < m->spec->ncpus; i++) {
		struct umsi_matrix_cpu_stats cs;

		if (m->spec->apic_ids[i] > m->max_apic_id)
			m->max_apic_id = m->spec->apic_ids[i];
		if (!umsi_matrix_cpu_stats(mx, i, &cs) &&
		    cs.capacity > m->cpu_capacity)
			m->cpu_capacity = cs.capacity;
	}
}

/* Append [@first, @last] to @out (@n of them), merged with the last one
 * when they touch. */
static void sim_range_add(struct umsi_rid_range *out, uint32_t *n,
			  uint32_t first, uint32_t last)
{
	if (*n && out[*n - 1].last + 1 == first)
		out[*n - 1].last = last;
	else
		out[(*n)++] = (struct umsi_rid_range){ first, last };
}

/*
 * The requesters of `unit` line @unit's devices (1..), in order: each
 * instance's slot, all eight functions (a PF with VFs: its whole bus,
 * where its VFs are); with @unit 0, those of every `unit` line instead.
 * @out has room for one a device instance. How many.
 */
static uint32_t sim_unit_ranges(const struct sim_spec *sp, unsigned unit,
				struct umsi_rid_range *out)
{
	unsigned bus = SIM_FIRST_BUS, slot = 0;
	uint32_t n = 0;

	for (unsigned i = 0; i < sp->ndevs; i++) {
		const struct sim_devspec *ds = &sp->devs[i];

		for (unsigned k = 0; k < ds->count && !ds->is_vf; k++) {
			umsi_bdf_t b = sim_next_place(ds, &bus, &slot);

			if (unit ? ds->unit != unit : !ds->unit)
				continue;
			sim_range_add(out, &n, b, ds->vfs ? b | 0xff : b | 7);
		}
	}
	return n;
}

/*
 * `unit` lines: the platform's first unit and one per line, in @vu (VT-d:
 * the first one include-all) or @au (AMD-Vi: the first one every
 * requester the lines leave), their ranges in @r: the lines' ranges
 * merged, the first unit's gaps between them (one more), then each
 * line's own, each at most one a placed instance: room for 3 a device
 * instance, plus 1. How many units.
 */
static uint32_t sim_units(const struct sim_spec *sp, struct umsi_rid_range *r,
			  struct umsi_vtd_unit *vu, struct umsi_amdvi_unit *au)
{
	uint32_t at = 0, n, k, prev;

	vu[0] = (struct umsi_vtd_unit){ .reg_base = UMSI_SIM_VTD_BASE,
					.include_all = true };
	/* AMD-Vi's first: what the other units do not have, in order. */
	n = sim_unit_ranges(sp, 0, r);
	au[0] = (struct umsi_amdvi_unit){ .reg_base = UMSI_SIM_AMDVI_BASE,
					  .devices = r + n };
	for (k = 0, prev = 0; k <= n; k++) {
		uint32_t end = k < n ? r[k].first : 0x10000u;

		if (end > prev)
			r[n + au[0].ndevices++] = (struct umsi_rid_range){
				prev, end - 1 };
		if (k < n)
			prev = r[k].last + 1;
	}
	at = n + au[0].ndevices;
	for (k = 1; k <= sp->nunits; k++) {
		n = sim_unit_ranges(sp, k, r + at);
		vu[k] = (struct umsi_vtd_unit){
			.reg_base = sp->units[k - 1].base, .scope = r + at,
			.nscope = n };
		au[k] = (struct umsi_amdvi_unit){
			.reg_base = sp->units[k - 1].base, .devices = r + at,
			.ndevices = n };
		at += n;
	}
	return sp->nunits + 1;
}

int sim_build(struct sim_machine *m, const struct sim_spec *sp, char *err,
	      size_t errlen)
{
	struct umsi_sim_config scfg = { 0 };
	struct umsi_config ucfg = { 0 };
	struct umsi_imsic_config icfg = { 0 };
	struct umsi_its_config itscfg = { 0 };
	struct umsi_vtd_config vtdcfg = { 0 };
	struct umsi_amdvi_config avcfg = { 0 };
	struct umsi_gicv2m_config v2mcfg = { 0 };
	uint8_t cpu_if[SIM_GICV2M_MAX_CPUS];
	struct umsi_ioapic_source ioapics[SIM_MAX_IOAPICS];
	struct umsi_vtd_unit vunits[SIM_MAX_UNITS + 1];
	struct umsi_amdvi_unit aunits[SIM_MAX_UNITS + 1];
	struct umsi_rid_range *ranges = NULL;
	uint32_t nunits = 0;
	uint64_t *files = NULL;
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
	scfg.ioapic_pins = SIM_IOAPIC_PINS;
	/*
	 * platform ioapics=N: N IO-APICs of 24 inputs, the first sending as
	 * the simulator's usual IO-APIC, IO-APIC k as 00:1e.k (on bus 0,
	 * which the devices leave free); each remapping back end told of
	 * all of them.
	 */
	for (uint32_t k = 0; k < sp->nioapics; k++)
		ioapics[k] = (struct umsi_ioapic_source){
			.gsi_base = k * SIM_IOAPIC_PINS,
			.gsi_count = SIM_IOAPIC_PINS,
			.source_id = k ? UMSI_BDF(0, 0, 0x1e, k) :
					 UMSI_SIM_VTD_IOAPIC_SID };
	if (sp->nioapics) {
		scfg.ioapic_pins = 0;
		scfg.ioapics = ioapics;
		scfg.nioapics = sp->nioapics;
		scfg.vtd_ioapic_sid = UMSI_SIM_VTD_IOAPIC_SID;
		vtdcfg.ioapics = avcfg.ioapics = ioapics;
		vtdcfg.nioapics = avcfg.nioapics = sp->nioapics;
	}
	if (sp->imsic) {
		scfg.controller = UMSI_SIM_CTL_IMSIC;
		scfg.imsic_num_ids = sim_cpu_ids(sp) - 1;
	}
	if (sp->its) {
		scfg.controller = UMSI_SIM_CTL_ITS;
		scfg.its_lpi_bits = SIM_ITS_LPI_BITS;
	}
	if (sp->gicv2m)
		scfg.controller = UMSI_SIM_CTL_GICV2M;
	/*
	 * `unit` lines: a machine of several remapping units, described to
	 * the simulator and to the back end alike.
	 */
	if (sp->nunits) {
		ranges = calloc(3 * (size_t)sp->ninst + 1, sizeof(*ranges));
		if (!ranges) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		nunits = sim_units(sp, ranges, vunits, aunits);
	}
	if (sp->vtd) {
		/* x2APIC destinations through EIM when the CPUs are x2APIC. */
		scfg.vtd = true;
		scfg.vtd_eim = (sp->plat & UMSI_PLAT_X2APIC) != 0;
		scfg.vtd_ioapic_sid = UMSI_SIM_VTD_IOAPIC_SID;
		vtdcfg.reg_base = UMSI_SIM_VTD_BASE;
		/* The largest table VT-d has (Linux's size too): a big
		 * machine runs out of vectors before entries. */
		vtdcfg.irte_count = 65536;
		vtdcfg.x2apic = scfg.vtd_eim;
		vtdcfg.ioapic_sid = UMSI_SIM_VTD_IOAPIC_SID;
		if (nunits) {
			scfg.vtd_units = vtdcfg.units = vunits;
			scfg.nvtd_units = vtdcfg.nunits = nunits;
			vtdcfg.reg_base = 0;
		}
		ucfg.ctl = &umsi_ctl_x86_vtd;
		ucfg.ctl_config = &vtdcfg;
	}
	if (sp->amdvi) {
		/* Every DeviceID; INTx is not remapped there (refused). */
		scfg.amdvi = true;
		scfg.vtd_ioapic_sid = UMSI_SIM_VTD_IOAPIC_SID;
		avcfg.reg_base = UMSI_SIM_AMDVI_BASE;
		avcfg.ioapic_devid = UMSI_SIM_VTD_IOAPIC_SID;
		if (nunits) {
			scfg.amdvi_units = avcfg.units = aunits;
			scfg.namdvi_units = avcfg.nunits = nunits;
			avcfg.reg_base = 0;
		}
		ucfg.ctl = &umsi_ctl_x86_amdvi;
		ucfg.ctl_config = &avcfg;
	}
	m->sim = umsi_sim_create(&scfg);
	/* IMSIC: each hart's file; ITS: each CPU's MAPC target. */
	if ((sp->imsic || sp->its) && m->sim)
		files = calloc(sp->ncpus, sizeof(*files));
	if (!m->sim || ((sp->imsic || sp->its) && !files)) {
		/* The ITS model counts every INTID on every CPU (2 MiB each). */
		if (sp->its)
			snprintf(err, errlen, "the simulator cannot create the "
				 "machine (out of memory? its GICv3 model "
				 "keeps %llu MiB of per-CPU LPI counters "
				 "for %u CPUs)",
				 (unsigned long long)sp->ncpus *
				 (sizeof(struct umsi_sim_vec_stats) <<
				  SIM_ITS_LPI_BITS) >> 20, sp->ncpus);
		else
			snprintf(err, errlen, "the simulator cannot create "
				 "the machine (out of memory?)");
		umsi_sim_destroy(m->sim);
		m->sim = NULL;
		free(ranges);
		return -1;
	}
	ucfg.max_irqs = sim_irq_numbers(sp);
	if (sp->imsic) {
		/* The back end learns each hart's file, as from the DT. */
		for (uint32_t i = 0; i < sp->ncpus; i++)
			files[i] = umsi_sim_imsic_file_addr(m->sim, i);
		icfg.num_ids = scfg.imsic_num_ids;
		icfg.nr_files = sp->ncpus;
		icfg.file_addr = files;
		ucfg.ctl = &umsi_ctl_riscv_imsic;
		ucfg.ctl_config = &icfg;
	}
	if (sp->its) {
		/* GITS_TYPER.PTA 0: a collection's target is the CPU's
		 * processor number, its position. */
		for (uint32_t i = 0; i < sp->ncpus; i++)
			files[i] = i;
		itscfg.its_base = UMSI_SIM_ITS_BASE;
		itscfg.first_lpi = SIM_ITS_FIRST_LPI;
		itscfg.lpi_id_bits = SIM_ITS_LPI_BITS;
		/* As many a CPU as the INTIDs allow (the parser saw to it
		 * that there are some). */
		itscfg.nvec = sim_cpu_ids(sp);
		itscfg.nr_cpus = sp->ncpus;
		itscfg.rd_target = files;
		/* INTx: SPIs the "kernel" (the simulator) routes. */
		itscfg.wired_spis = true;
		ucfg.ctl = &umsi_ctl_arm64_its;
		ucfg.ctl_config = &itscfg;
	}
	if (sp->gicv2m) {
		/* CPU n is the distributor's CPU interface n, as on QEMU. */
		for (uint32_t i = 0; i < sp->ncpus && i < SIM_GICV2M_MAX_CPUS; i++)
			cpu_if[i] = (uint8_t)i;
		v2mcfg.frame = UMSI_SIM_V2M_BASE;
		v2mcfg.dist = UMSI_SIM_GICD_BASE;
		v2mcfg.nr_cpus = sp->ncpus;
		v2mcfg.cpu_if = cpu_if;
		v2mcfg.wired_spis = true;
		ucfg.ctl = &umsi_ctl_arm64_gicv2m;
		ucfg.ctl_config = &v2mcfg;
	}
	ret = umsi_system_create(umsi_sim_host_ops(), m->sim, &ucfg, &m->sys);
	/* Both copied what they keep at creation. */
	free(files);
	free(ranges);
	/* MSI policy is the PCI layer's. */
	if (!ret && sp->cmdline_line)
		(void)umsi_policy_parse(m->sys, sp->cmdline);
	if (ret) {
		snprintf(err, errlen, "system create failed: %s\n%s",
			 umsi_strerror(ret), umsi_sim_log_text(m->sim));
		umsi_sim_destroy(m->sim);
		m->sim = NULL;
		return -1;
	}
	umsi_sim_set_dispatch_id(m->sim, sp->its ? sim_dispatch_its :
				 sp->gicv2m ? sim_dispatch_spi : sim_dispatch,
				 m->sys);
	sim_measure(m);
	m->insts = calloc(sp->ninst ? sp->ninst : 1, sizeof(*m->insts));
	if (!m->insts) {
		snprintf(err, errlen, "out of memory");
		sim_machine_free(m);
		return -1;
	}
	m->ninst = sp->ninst;
	m->vf_room = calloc(sp->ndevs ? sp->ndevs : 1, sizeof(*m->vf_room));
	m->vf_room_err = calloc(sp->ndevs ? sp->ndevs : 1,
				sizeof(*m->vf_room_err));
	m->vf_room_free = calloc(sp->ndevs ? sp->ndevs : 1,
				 sizeof(*m->vf_room_free));
	if (!m->vf_room || !m->vf_room_err || !m->vf_room_free) {
		snprintf(err, errlen, "out of memory");
		sim_machine_free(m);
		return -1;
	}
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

static void sim_fix(struct sim_inst *in, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Add one way to make @in fit to in->fix, "a, or b". */
static void sim_fix(struct sim_inst *in, const char *fmt, ...)
{
	size_t n = strlen(in->fix);
	va_list ap;

	if (n && n + 5 < sizeof(in->fix)) {
		memcpy(in->fix + n, ", or ", 6);
		n += 5;
	}
	va_start(ap, fmt);
	vsnprintf(in->fix + n, sizeof(in->fix) - n, fmt, ap);
	va_end(ap);
}

/* MSI refused by policy or a quirk: say which and what lifts it. */
static void sim_policy_fix(struct sim_inst *in, const char *reason)
{
	unsigned id = (unsigned)in->ds->device << 16 | in->ds->vendor;

	if (!strcmp(reason, "policy:pci_nomsi"))
		sim_fix(in, "a cmdline without pci_nomsi");
	else if (!strcmp(reason, "policy:device_nomsi"))
		sim_fix(in, "a device_nomsi= without 0x%08x", id);
	else if (!strcmp(reason, "policy:not_listed"))
		sim_fix(in, "0x%08x in device_msi= (pci_msi=specific)", id);
	else if (!strcmp(reason, "policy:platform"))
		sim_fix(in, "a platform that allows MSI (no 'no-msi')");
	else
		sim_fix(in, "nothing in the file: %s forbids MSI", reason);
}

/*
 * What the device alone can offer: MSI-X entries, else MSI messages (one
 * under interrupt remapping).
 */
static unsigned sim_offer(const struct sim_machine *m,
			  const struct sim_devspec *ds)
{
	if (ds->msix)
		return ds->msix;
	if (m->spec->plat & UMSI_PLAT_IRQ_REMAP)
		return ds->msi ? 1 : 0;
	return ds->msi;
}

/*
 * An ITS machine's CPUs share the LPIs, so more CPUs may get fewer each:
 * the fewest CPUs to add for as many more LPIs in all as @more CPUs of
 * today's would bring, or 0 when no number of CPUs gives them (the
 * INTIDs end at 65535). *@each: the LPIs each CPU would then have.
 */
static unsigned sim_its_more_cpus(const struct sim_machine *m, unsigned more,
				  uint32_t *each)
{
	uint32_t n = m->spec->ncpus, per = sim_its_lpis_per_cpu(n);
	uint64_t want = (uint64_t)(n + (uint64_t)more) * per;

	for (uint32_t k = n + 1; k <= SIM_ITS_MAX_CPUS; k++) {
		*each = sim_its_lpis_per_cpu(k);
		if ((uint64_t)k * *each >= want)
			return k - n;
	}
	return 0;
}

/* "about N more CPUs", and whether messages could name them. */
static void sim_fix_cpus(const struct sim_machine *m, struct sim_inst *in,
			 unsigned more)
{
	uint64_t last = (uint64_t)m->max_apic_id + more;
	const char *need = "";

	if (m->spec->gicv2m) {
		sim_fix(in, "a second v2m frame: this one's %u SPIs are shared "
			"by every CPU, and a GICv2 takes no more than %u CPUs",
			UMSI_SIM_V2M_SPI_COUNT, SIM_GICV2M_MAX_CPUS);
		return;
	}
	if (m->spec->its) {
		uint32_t each = 0;

		more = sim_its_more_cpus(m, more, &each);
		if (more)
			sim_fix(in, "about %u more CPU%s (%u LPIs each: "
				"CPUs share the ITS's)", more,
				more == 1 ? "" : "s", each);
		return;
	}

	/* Any hart with a file can be named; x86 IDs by the format. */
	if (!m->spec->imsic &&
	    (last > UINT32_MAX - 1 ||
	     !umsi_x86_dest_reachable((uint32_t)last, m->spec->plat)))
		need = last <= 32767 ? " (APIC IDs above 254: needs platform "
				       "ext-dest-id)" : " (APIC IDs above "
				       "32767: needs platform remap)";
	sim_fix(in, "about %u more CPU%s (%u vectors each)%s", more,
		more == 1 ? "" : "s", m->cpu_capacity, need);
}

/*
 * Under interrupt remapping every vector takes a remapping entry: whether
 * the entries, not the vectors, are what @in ran short of (it holds @held
 * of them now).
 */
static bool sim_remap_full(const struct sim_machine *m,
			   const struct sim_inst *in, unsigned held)
{
	uint64_t used;

	if (!(m->spec->plat & UMSI_PLAT_IRQ_REMAP))
		return false;
	used = umsi_sim_irte_used(m->sim);
	/* INTx holds no entry: never count below zero. */
	if (in->mode == UMSI_MODE_MSI || in->mode == UMSI_MODE_MSIX)
		used = used > held ? used - held : 0;
	return used + in->ds->want > UMSI_SIM_IRTE_COUNT;
}

/*
 * A device that got fewer vectors than it asked for: measure how many it
 * could have had at its turn, and which changes to the file would have
 * made it fit. Measured, not guessed: its vectors are given back, asked
 * for again with min=1 (MSI and MSI-X only), then with the full count and
 * the other kind of spreading, then allocated exactly as the first time,
 * which gives the same vectors (the allocator's choice depends only on
 * the counts the frees restored). Return: the vectors it holds after.
 */
static int sim_probe(const struct sim_machine *m, struct sim_inst *in,
		     const struct umsi_pci_info *info, uint32_t flags, int got)
{
	const struct sim_devspec *ds = in->ds;
	uint32_t msi_flags = flags & ~UMSI_PCI_IRQ_INTX;
	unsigned offer = sim_offer(m, ds);
	bool other_spread = false;
	int k, again;

	in->could = -1;
	if (info->reason) {
		sim_policy_fix(in, info->reason);
		return got;
	}
	if (!offer) {
		sim_fix(in, "msix= or msi= (INTx gives one vector)");
		return got;
	}
	if (got > 0)
		umsi_pci_free_irq_vectors(in->dev);
	k = umsi_pci_alloc_irq_vectors(in->dev, 1, ds->want, msi_flags);
	if (k > 0)
		umsi_pci_free_irq_vectors(in->dev);
	in->could = k > 0 ? k : 0;
	if (ds->msix && umsi_pci_alloc_irq_vectors(in->dev, ds->want, ds->want,
					msi_flags ^ UMSI_PCI_IRQ_AFFINITY) > 0) {
		other_spread = true;
		umsi_pci_free_irq_vectors(in->dev);
	}
	again = umsi_pci_alloc_irq_vectors(in->dev, ds->min, ds->want, flags);
	if (again != got && !(again < 0 && got <= 0))
		sim_why(in, "error:%d vectors at the second try, %d at the "
			"first", again, got);
	/* The ways to fit, cheapest first. */
	if (in->could > 0 && (unsigned)in->could < ds->want)
		sim_fix(in, "vectors=%d%s", in->could,
			(unsigned)in->could < ds->min ? " and a lower min=" : "");
	if (sim_remap_full(m, in, again < 0 ? 0 : (unsigned)again)) {
		/* Entries, not vectors, ran out: CPUs would not help. */
		sim_why(in, "no_vectors: the interrupt-remapping table is full "
			"(%u entries)", (unsigned)UMSI_SIM_IRTE_COUNT);
	} else if (offer < ds->want) {
		if (ds->msix)
			sim_fix(in, "a device with msix=%u", ds->want);
		else if (ds->want <= 32 &&
			 !(m->spec->plat & UMSI_PLAT_IRQ_REMAP))
			sim_fix(in, "a device with msi=%u (or MSI-X)",
				sim_pow2_up(ds->want));
		else
			sim_fix(in, "a device with MSI-X");
	} else if (!(flags & UMSI_PCI_IRQ_AFFINITY) || !ds->msix) {
		/*
		 * More CPUs help only where any CPU will do: MSI-X without
		 * spreading, or an MSI block (a new CPU has a free one).
		 * Managed vectors need a reservation on every CPU of their
		 * mask, new CPUs or not.
		 */
		unsigned short_by = ds->want - (unsigned)in->could;
		unsigned cap = m->cpu_capacity ? m->cpu_capacity : 1;

		sim_fix_cpus(m, in, ds->msix ? (short_by + cap - 1) / cap : 1);
	}
	if (other_spread)
		sim_fix(in, "%s", flags & UMSI_PCI_IRQ_AFFINITY ?
			"no spread (managed vectors reserve one on every CPU "
			"of their mask)" : "spread");
	return again < 0 ? 0 : again;
}

/* Allocate, attach a handler to every vector, fire each one once. */
static void sim_bring_up(const struct sim_machine *m, struct sim_inst *in)
{
	const struct sim_devspec *ds = in->ds;
	struct umsi_pci_info info;
	uint32_t flags = UMSI_PCI_IRQ_ALL_TYPES;
	int ret;

	if (in->pf) {
		/* A VF: there when its PF's VFs were enabled. */
		in->dev = in->pf->dev ? umsi_pci_sriov_vf(in->pf->dev,
							  (uint16_t)in->vf_index)
				      : NULL;
		if (!in->dev) {
			sim_why(in, "sriov:%s", in->pf->sriov_err ?
				umsi_strerror(in->pf->sriov_err) : "no PF");
			return;
		}
	} else {
		ret = umsi_pci_add(in->sys, in->bdf, NULL, UMSI_PCI_ADD_FRESH,
				   &in->dev);
		if (ret) {
			in->dev = NULL;
			sim_why(in, "error:%s", umsi_strerror(ret));
			return;
		}
	}
	if (ds->vfs) {
		/* The PF's driver enables its VFs first (the sim's VFs are
		 * ready at once). */
		in->sriov_err = umsi_pci_sriov_enable(in->dev,
						      (uint16_t)ds->vfs,
						      UMSI_SRIOV_NOWAIT);
	}
	if (ds->spread)
		flags |= UMSI_PCI_IRQ_AFFINITY;
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
		if (ret == -UMSI_ENOSPC || ret == -UMSI_EPERM ||
		    ret == -UMSI_ENOENT)
			sim_probe(m, in, &info, flags, 0);
		in->mode = umsi_pci_mode(in->dev);
		return;
	}
	if (ret < (int)ds->want) {
		sim_shortfall(in, &info);
		ret = sim_probe(m, in, &info, flags, ret);
		in->mode = umsi_pci_mode(in->dev);
		if (ret <= 0)
			return;
	}
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
		if (in->mode == UMSI_MODE_INTX)
			umsi_sim_intx_set(in->sim, in->bdf, true);
		else
			umsi_sim_fire(in->sim, in->bdf, (unsigned)i);
		umsi_sim_quiesce(in->sim);
	}
}

static int sim_vf_room_write(void *ctx, uint32_t index,
			     const struct umsi_msg *msg)
{
	(void)ctx;
	(void)index;
	(void)msg;
	return 0;
}

static const struct umsi_source_ops sim_vf_room_ops = {
	.write_msg = sim_vf_room_write,
};

/*
 * How many more VFs like the ones of VF line @i would fit: sources of
 * the message layer, one a VF (its own requester ID, beyond any bus the
 * machine uses), each given vf-vectors= targets as the VF driver's
 * allocation asks (unmanaged, all or nothing), until one does not fit;
 * then every one is given back. Every limit counts: CPU vectors, IRQ
 * numbers, remapping-table entries, the ITS's LPIs and tables.
 */
static void sim_vf_room(struct sim_machine *m, unsigned i)
{
	const struct sim_devspec *ds = &m->spec->devs[i];
	struct umsi_source **src = calloc(SIM_VF_ROOM_MAX, sizeof(*src));
	uint32_t *irqs = NULL;
	size_t cap = 0;
	unsigned n = 0;
	int err = 0;

	if (!src) {
		m->vf_room_err[i] = -UMSI_ENOMEM;
		return;
	}
	/* Requester IDs on the buses after the machine's last one. */
	uint32_t rid0 = (m->spec->next_bus + (m->spec->next_slot ? 1 : 0)) << 8;
	unsigned most = SIM_VF_ROOM_MAX < 0x10000 - rid0 ?
			SIM_VF_ROOM_MAX : 0x10000 - rid0;

	for (; n < most; n++) {
		struct umsi_source_config c = {
			.requester_id = rid0 + n, .bdf = rid0 + n,
			.nslots = ds->want,
			.ops = &sim_vf_room_ops, .name = "vf-room",
		};
		struct umsi_target_req r = { .count = ds->want,
					     .index = UMSI_SLOT_ANY };
		int got;

		if ((size_t)(n + 1) * ds->want > cap) {
			size_t nc = cap ? cap * 2 : (size_t)ds->want * 64;
			uint32_t *p = realloc(irqs, nc * sizeof(*p));

			if (!p) {
				err = -UMSI_ENOMEM;
				break;
			}
			irqs = p;
			cap = nc;
		}
		err = umsi_source_create(m->sys, &c, &src[n]);
		if (err)
			break;
		got = umsi_source_alloc(src[n], &r, irqs + (size_t)n * ds->want);
		if (got < 0) {
			err = got;
			umsi_source_destroy(src[n]);
			break;
		}
	}
	m->vf_room[i] = n;
	m->vf_room_err[i] = err;
	{
		struct umsi_matrix_stats st;

		umsi_matrix_stats(umsi_system_matrix(m->sys), &st);
		m->vf_room_free[i] = st.available;
	}
	for (unsigned k = n; k-- > 0;) {
		umsi_source_free(src[k], irqs + (size_t)k * ds->want, ds->want,
				 0);
		umsi_source_destroy(src[k]);
	}
	free(src);
	free(irqs);
}

void sim_run(struct sim_machine *m)
{
	for (unsigned j = 0; j < m->ninst; j++)
		if (!m->insts[j].reason)
			sim_bring_up(m, &m->insts[j]);
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
	for (unsigned i = 0; i < m->spec->ndevs; i++)
		if (m->spec->devs[i].is_vf && m->vf_room)
			sim_vf_room(m, i);
}

void sim_machine_free(struct sim_machine *m)
{
	/* Backwards: a PF's VFs (the line after it) go before the PF. */
	for (unsigned j = m->ninst; m->insts && j-- > 0;) {
		if (m->insts[j].dev)
			umsi_pci_remove(m->sys, m->insts[j].dev);
		free(m->insts[j].irqs);
	}
	free(m->insts);
	free(m->vf_room);
	free(m->vf_room_err);
	free(m->vf_room_free);
	if (m->sys)
		umsi_system_destroy(m->sys);
	umsi_sim_destroy(m->sim);
	memset(m, 0, sizeof(*m));
}
