/* SPDX-License-Identifier: MIT */
/*
 * host.c - the uMSI host interface (include/umsi/host.h) on this kernel.
 *
 * This file is the worked example for porting uMSI: every operation is a
 * few lines over a kernel service (pci.c, mm.c, apic.c, smp.c, ioapic.c).
 * The context pointer is unused: the kernel hosts one system.
 */
#include <umsi/ctl.h>
#include <umsi/host.h>
#include <umsi/irq.h>
#include <umsi/x86.h>

#include "kernel.h"
#include "acpi.h"
#include "apic.h"
#include "host.h"
#include "iommu.h"
#include "ioapic.h"
#include "pci.h"
#include "smp.h"


/*
 * Memory the remapping unit reads (its interrupt-remapping table and
 * invalidation queue): the heap, whose blocks of 4 KiB and more are
 * 4 KiB aligned and smaller ones aligned to their power-of-two size, is
 * coherent with the unit on x86. An alignment above 4 KiB is met by
 * asking for more and remembering where the block began.
 */
#define PHYS_BIG_MAX 8

static struct {
	void *virt, *raw;
	size_t rawsize;
} phys_big[PHYS_BIG_MAX];
static struct spinlock phys_lock;

static void *h_phys_alloc(void *host, size_t size, size_t align,
			  uint64_t *phys)
{
	unsigned long flags;
	void *raw, *p = NULL;
	size_t rawsize;

	(void)host;
	if (align <= 4096) {
		p = kalloc(size > align ? size : align);
		if (p)
			*phys = (uint64_t)p;
		return p;
	}
	rawsize = size + align;
	raw = kalloc(rawsize);
	if (!raw)
		return NULL;
	flags = spin_lock_irqsave(&phys_lock);
	for (uint32_t i = 0; i < PHYS_BIG_MAX; i++) {
		if (!phys_big[i].virt) {
			p = (void *)ALIGN_UP((uint64_t)raw, align);
			phys_big[i].virt = p;
			phys_big[i].raw = raw;
			phys_big[i].rawsize = rawsize;
			break;
		}
	}
	spin_unlock_irqrestore(&phys_lock, flags);
	if (!p) {
		kfree(raw, rawsize);
		return NULL;
	}
	*phys = (uint64_t)p;
	return p;
}

static void h_phys_free(void *host, void *virt, size_t size)
{
	unsigned long flags;

	(void)host;
	flags = spin_lock_irqsave(&phys_lock);
	for (uint32_t i = 0; i < PHYS_BIG_MAX; i++) {
		if (phys_big[i].virt == virt && virt) {
			void *raw = phys_big[i].raw;
			size_t rawsize = phys_big[i].rawsize;

			phys_big[i].virt = NULL;
			spin_unlock_irqrestore(&phys_lock, flags);
			kfree(raw, rawsize);
			return;
		}
	}
	spin_unlock_irqrestore(&phys_lock, flags);
	kfree(virt, size);
}

/*
 * KVM advertises the extended destination ID in CPUID 0x40000001 EAX
 * bit 15 (KVM_FEATURE_MSI_EXT_DEST_ID), under the "KVMKVMKVM" signature.
 */
static bool kvm_ext_dest_id(void)
{
	uint32_t a, b, c, d;

	cpuid(1, 0, &a, &b, &c, &d);
	if (!(c & (1u << 31)))
		return false;
	cpuid(0x40000000, 0, &a, &b, &c, &d);
	if (b != 0x4b4d564b || c != 0x564b4d56 || d != 0x4d)
		return false;
	cpuid(0x40000001, 0, &a, &b, &c, &d);
	return (a >> 15) & 1;
}

/* UMSI_PLAT_EXT_DEST_ID as reported: how gsi_program decodes messages. */
static bool ext_dest;

static uint32_t h_platform_flags(void *host)
{
	uint32_t f = 0;

	(void)host;
	if (apic_mode() == APIC_X2APIC)
		f |= UMSI_PLAT_X2APIC;
	ext_dest = kvm_ext_dest_id();
	if (ext_dest)
		f |= UMSI_PLAT_EXT_DEST_ID;
	if (acpi.msi_not_supported)
		f |= UMSI_PLAT_NO_MSI;
	return f;
}

/* The local APIC (umsi/host.h eoi, irq_pending, send_ipi). */
static void h_eoi(void *host, uint32_t id)
{
	(void)host;
	apic_eoi();
	/* AMD-Vi level inputs: the IO-APIC is told here (ioapic.c). */
	if (__builtin_expect(ioapic_any_directed(), 0))
		ioapic_directed_eoi(this_cpu()->apic_id, id);
}

static bool h_irq_pending(void *host, uint32_t id)
{
	(void)host;
	return id <= 0xff && apic_irr_test((uint8_t)id);
}

static void h_send_ipi(void *host, uint32_t hwid, uint32_t id)
{
	(void)host;
	apic_send_fixed(hwid, (uint8_t)id);
}

static int h_intx_route(void *host, umsi_bdf_t bdf, uint8_t pin,
			struct umsi_intx_route *route)
{
	int gsi = pci_intx_gsi(bdf, pin);

	(void)host;
	if (gsi < 0 || (uint32_t)gsi >= ioapic_gsi_count())
		return -UMSI_ENOENT;
	route->gsi = (uint32_t)gsi;
	route->trigger = UMSI_INTX_LEVEL;
	route->polarity = UMSI_INTX_ACTIVE_LOW;
	return 0;
}

static int h_gsi_program(void *host, uint32_t gsi,
			 const struct umsi_gsi_entry *e)
{
	struct umsi_x86_msi m;
	struct ioapic_route r = {
		.trigger = e->trigger == UMSI_INTX_LEVEL ?
			   IOAPIC_TRIGGER_LEVEL : IOAPIC_TRIGGER_EDGE,
		.polarity = e->polarity == UMSI_INTX_ACTIVE_LOW ?
			    IOAPIC_POL_LOW : IOAPIC_POL_HIGH,
		.masked = e->masked,
	};

	(void)host;
	/*
	 * The AMD-Vi back end's (umsi/ctl.h UMSI_AMDVI_WIRED_*): address
	 * 0xFEE00000, the index in the vector field, and where the unit
	 * sends it, after whose EOI the entry is ended here.
	 */
	if (e->msg.address == UMSI_X86_MSI_BASE && (e->msg.data >> 16) &&
	    iommu_amdvi_base()) {
		if (e->msg.data & 0xff00u)
			return -UMSI_EINVAL;
		r.vector = (uint8_t)UMSI_AMDVI_WIRED_INDEX(e->msg.data);
		r.directed = true;
		r.eoi_apic = UMSI_AMDVI_WIRED_APIC(e->msg.data);
		r.eoi_vector = (uint8_t)UMSI_AMDVI_WIRED_VECTOR(e->msg.data);
		return ioapic_program(gsi, &r) ? -UMSI_EINVAL : 0;
	}
	/* The back end composed an x86 message: the entry takes it apart. */
	umsi_x86_msg_decode(&e->msg, ext_dest, &m);
	if (m.valid && m.remapped && iommu_remap_unit()) {
		/*
		 * A remappable message (the VT-d back end): the entry names
		 * the same table entry, and its vector, which the IO-APIC
		 * compares with EOI broadcasts (a level input whose vector
		 * differs is never ended): the back end gives it in the data
		 * of a wired input's message (SHV clear, so the unit ignores
		 * it).
		 */
		if (m.shv || !m.subhandle)
			return -UMSI_EINVAL;
		r.remap = true;
		r.handle = m.handle;
		r.vector = (uint8_t)m.subhandle;
		return ioapic_program(gsi, &r) ? -UMSI_EINVAL : 0;
	}
	if (!e->masked && (!m.valid || m.remapped))
		return -UMSI_EINVAL;
	r.apic_id = m.dest_id;
	r.vector = m.vector ? m.vector : 0xff;
	return ioapic_program(gsi, &r) ? -UMSI_EINVAL : 0;
}

const struct umsi_host_ops kernel_host_ops = {
	KHOST_COMMON_OPS,
	.platform_flags = h_platform_flags,
	.eoi = h_eoi,
	.irq_pending = h_irq_pending,
	.send_ipi = h_send_ipi,
	.intx_route = h_intx_route,
	.gsi_program = h_gsi_program,
	.remap_compose = NULL,
	.remap_free = NULL,
	.phys_alloc = h_phys_alloc,
	.phys_free = h_phys_free,
};

/*
 * The back end: the x86 local APIC one (uMSI's default), or with
 * interrupt remapping (iommu.c chose a unit from the DMAR table and
 * umsi.remap=) the VT-d one, which owns the unit's table, queue and
 * enables. UMSI_PLAT_IRQ_REMAP stays clear: it means the host composes
 * remapped messages (remap_compose), and here the back end does.
 */
static struct umsi_vtd_config vtd_config;
/* Two ranges per scope entry at most: a bridge and the buses below. */
#define VTD_SCOPE_MAX (2 * ACPI_MAX_SCOPES)
static struct umsi_vtd_unit vtd_units[ACPI_MAX_DRHDS];
static struct umsi_rid_range vtd_scope[ACPI_MAX_DRHDS][VTD_SCOPE_MAX];
static struct umsi_amdvi_config amdvi_config;
static struct umsi_amdvi_unit av_units[ACPI_MAX_IOMMUS];
static struct umsi_rid_range av_devs[ACPI_MAX_IOMMUS][ACPI_MAX_DEVRANGES];
static struct umsi_ioapic_source ioapic_table[ACPI_MAX_IOAPICS];

/*
 * Every IO-APIC (ioapic.c has left out any whose GSIs meet another's),
 * with the requester ID its messages carry at the unit
 * (umsi_vtd_config.ioapics, umsi_amdvi_config.ioapics): each one's own,
 * as a server with an IO-APIC per host bridge needs. One the tables do
 * not name is kept with UMSI_VTD_NO_SID when @keep_unknown (VT-d: its
 * entries are not validated), else left out (AMD-Vi: its lines are
 * refused). How many.
 */
static uint32_t ioapic_sources(bool keep_unknown)
{
	uint32_t n = 0, base, count, sid;
	uint8_t id;

	for (uint32_t i = 0; i < ioapic_count(); i++) {
		ioapic_span(i, &base, &count, &id);
		sid = iommu_ioapic_source(id);
		if (sid == ACPI_NO_DEVID && !keep_unknown) {
			kprintf("remap: IO-APIC %u: no DeviceID in the IVRS "
				"table; its GSIs %u-%u get no interrupts\n",
				id, base, base + count - 1);
			continue;
		}
		ioapic_table[n++] = (struct umsi_ioapic_source){
			.gsi_base = base, .gsi_count = count,
			.source_id = sid == ACPI_NO_SID ? UMSI_VTD_NO_SID :
							  sid };
		if (sid == ACPI_NO_SID) {
			kprintf("remap: IO-APIC %u: GSIs %u-%u, requester not "
				"known (not validated)\n", id, base,
				base + count - 1);
			continue;
		}
		kprintf("remap: IO-APIC %u: GSIs %u-%u, requester 0x%x\n", id,
			base, base + count - 1, sid);
	}
	return n;
}

/* A unit's requester ranges, one "remap: @what S:B:D.F..B:D.F" line each. */
static void print_ranges(const char *what, const struct umsi_rid_range *r,
			 uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		kprintf("remap: %s %04x:%02x:%02x.%u..%02x:%02x.%u\n", what,
			r[i].first >> 16, (r[i].first >> 8) & 0xff,
			(r[i].first >> 3) & 0x1f, r[i].first & 7,
			(r[i].last >> 8) & 0xff, (r[i].last >> 3) & 0x1f,
			r[i].last & 7);
}

/*
 * AMD-Vi (iommu.c chose the IVRS table's IOMMU): a device table for every
 * DeviceID of the buses ECAM reaches (the IO-APIC's among them), other
 * devices' interrupts aborted; wired inputs are not uMSI's there.
 */
static void amdvi_umsi_config(struct umsi_config *cfg)
{
	uint32_t n = acpi.have_mcfg ? ((uint32_t)acpi.ecam_bus_end + 1) * 256u :
				      65536u, dev = iommu_amdvi_ioapic_devid();
	uint32_t nio = ioapic_sources(false);
	uint32_t top = dev == ACPI_NO_DEVID ? 0 : dev;

	/*
	 * The IOMMU as the IVHD describes it: every DeviceID (QEMU's type 1
	 * entry when no bridge aliases), else the ranges its device entries
	 * list (QEMU's with a conventional bridge), so the back end refuses
	 * a function the IOMMU does not serve instead of pointing a device
	 * table entry it never reads.
	 */
	for (uint32_t u = 0; u < iommu_amdvi_nunits(); u++) {
		av_units[u] = (struct umsi_amdvi_unit){
			.reg_base = iommu_amdvi_unit_base(u),
			.segment = acpi.ivrs.iommu[u].segment,
			.devices = av_devs[u],
			.ndevices = iommu_amdvi_devices(u, av_devs[u],
							ACPI_MAX_DEVRANGES) };
		/* The device table covers every DeviceID uMSI is given. */
		for (uint32_t i = 0; i < av_units[u].ndevices; i++)
			if ((av_devs[u][i].last & 0xffff) > top)
				top = av_devs[u][i].last & 0xffff;
	}
	for (uint32_t i = 0; i < nio; i++)
		if (ioapic_table[i].source_id > top)
			top = ioapic_table[i].source_id;
	if (top >= n)
		n = (top / 128 + 1) * 128;
	/* One IOMMU serving every DeviceID: the one-unit form. */
	amdvi_config.nunits = av_units[0].ndevices ? iommu_amdvi_nunits() : 0;
	amdvi_config.reg_base = amdvi_config.nunits ? 0 : av_units[0].reg_base;
	amdvi_config.units = amdvi_config.nunits ? av_units : NULL;
	amdvi_config.devid_count = n;
	amdvi_config.ioapic_devid = dev == ACPI_NO_DEVID ? UMSI_AMDVI_NO_DEVID :
							   dev;
	amdvi_config.ioapics = ioapic_table;
	amdvi_config.nioapics = nio;
	/* No IO-APIC with a DeviceID: no wired input either (the single
	 * ioapic_devid would stand in for the table). */
	if (!nio && ioapic_count())
		amdvi_config.ioapic_devid = UMSI_AMDVI_NO_DEVID;
	amdvi_config.allow_pass = false;
	cfg->ctl = &umsi_ctl_x86_amdvi;
	cfg->ctl_config = &amdvi_config;
	for (uint32_t u = 0; u < iommu_amdvi_nunits(); u++) {
		const struct umsi_amdvi_unit *au = &av_units[u];

		kprintf("remap: uMSI takes the AMD-Vi back end: unit 0x%lx, %u "
			"DeviceIDs, ioapic devid 0x%x, %u device ranges\n",
			(unsigned long)au->reg_base, n,
			amdvi_config.ioapic_devid, au->ndevices);
		print_ranges("devices", au->devices, au->ndevices);
	}
}

void arch_umsi_config(struct umsi_config *cfg)
{
	const struct acpi_drhd *u = iommu_remap_unit();
	uint32_t sid = iommu_ioapic_sid();

	if (iommu_amdvi_base()) {
		amdvi_umsi_config(cfg);
		return;
	}
	if (!u)
		return;
	/*
	 * The unit as the DMAR table describes it: its segment, whether it
	 * takes every function (INCLUDE_PCI_ALL), its device scope (QEMU's
	 * lists the root bus's functions and bridges, not INCLUDE_PCI_ALL),
	 * so the back end takes for it exactly what it remaps.
	 */
	for (uint32_t i = 0; i < iommu_nunits(); i++) {
		const struct acpi_drhd *d = iommu_unit(i);

		vtd_units[i] = (struct umsi_vtd_unit){
			.reg_base = d->base, .segment = d->segment,
			.include_all = d->include_pci_all,
			.scope = vtd_scope[i],
			.nscope = iommu_scope_ranges(i, vtd_scope[i],
						     VTD_SCOPE_MAX) };
	}
	vtd_config.reg_base = 0;
	vtd_config.units = vtd_units;
	vtd_config.nunits = iommu_nunits();
	vtd_config.irte_count = 0;	/* UMSI_VTD_DEFAULT_IRTE */
	vtd_config.x2apic = apic_mode() == APIC_X2APIC;
	vtd_config.allow_compat = false;
	vtd_config.ioapic_sid = sid == ACPI_NO_SID ? UMSI_VTD_NO_SID : sid;
	vtd_config.ioapics = ioapic_table;
	vtd_config.nioapics = ioapic_sources(true);
	cfg->ctl = &umsi_ctl_x86_vtd;
	cfg->ctl_config = &vtd_config;
	for (uint32_t i = 0; i < vtd_config.nunits; i++) {
		const struct umsi_vtd_unit *vu = &vtd_units[i];

		kprintf("remap: uMSI takes the VT-d back end: unit 0x%lx, %s, "
			"ioapic sid 0x%x, %s%u scope ranges\n", vu->reg_base,
			vtd_config.x2apic ? "x2apic" : "xapic",
			vtd_config.ioapic_sid,
			vu->include_all ? "include-all, " : "", vu->nscope);
		print_ranges("scope", vu->scope, vu->nscope);
	}
}

/*
 * The remapping table entry a vector's message names (glue_report.c's
 * device lines, KARCH_VECTOR_FIELDS in arch.h): read from the function
 * itself, as the unit will see it: the MSI-X table entry or the MSI
 * capability (handle = address bits 19:5, bit 2 as bit 15; plus the
 * data's subhandle with SHV, and for a block the message number the
 * function puts in the data's low bits), or the IO-APIC entry of a
 * wired input. Nothing when remapping is off or the message is in the
 * compatibility format.
 */
static int msg_index(uint32_t addr, uint32_t data, uint32_t *index)
{
	struct umsi_msg msg = { .address = addr, .data = data };
	struct umsi_x86_msi m;

	umsi_x86_msg_decode(&msg, false, &m);
	if (!m.valid || !m.remapped)
		return -1;
	*index = m.handle + (m.shv ? m.subhandle : 0u);
	return 0;
}

static int vector_irte(const struct umsi_irq_info *ii, uint32_t *index)
{
	const struct pci_dev *d = pci_find(ii->bdf & 0xffff);
	uint64_t rte, addr;
	uint32_t data;
	int h;

	if (!strcmp(ii->chip, "IO-APIC")) {
		if (ioapic_read_entry(ii->hwirq, &rte))
			return -1;
		h = ioapic_entry_handle(rte);
		if (h < 0)
			return -1;
		*index = (uint32_t)h;
		return 0;
	}
	if (!d)
		return -1;
	if ((!strcmp(ii->chip, "PCI-MSI-X") &&
	     !pci_read_msg(d->bdf, true, ii->hwirq, &addr, &data)) ||
	    (!strcmp(ii->chip, "PCI-MSI") &&
	     !pci_read_msg(d->bdf, false, ii->hwirq, &addr, &data)))
		return msg_index((uint32_t)addr, data, index);
	return -1;
}

int karch_vector_fields(char *buf, size_t size, const struct umsi_irq_info *ii)
{
	uint32_t index;

	if (!size)
		return 0;
	buf[0] = 0;
	if (!iommu_remap_active() || !ii->chip)
		return 0;
	if (iommu_amdvi_base()) {
		/* AMD-Vi: data bits 10:0 index the requester's own table. */
		const struct pci_dev *d = pci_find(ii->bdf & 0xffff);
		uint64_t addr, rte;
		uint32_t data;

		/* An IO-APIC input: the IO-APIC's table, the vector field. */
		if (!strcmp(ii->chip, "IO-APIC"))
			return ioapic_read_entry(ii->hwirq, &rte) ? 0 :
			       ksnprintf(buf, size, ",\"irte\":%u",
					 (uint32_t)rte & 0xff);
		if (!d || (strcmp(ii->chip, "PCI-MSI-X") &&
			   strcmp(ii->chip, "PCI-MSI")) ||
		    pci_read_msg(d->bdf, !strcmp(ii->chip, "PCI-MSI-X"),
				 !strcmp(ii->chip, "PCI-MSI-X") ? ii->hwirq : 0,
				 &addr, &data))
			return 0;
		/* A block's message k: the device ORs k into the data. */
		if (!strcmp(ii->chip, "PCI-MSI"))
			data |= ii->hwirq;
		return ksnprintf(buf, size, ",\"irte\":%u", data & 0x7ff);
	}
	if (vector_irte(ii, &index))
		return 0;
	return ksnprintf(buf, size, ",\"irte\":%u", index);
}

