/* SPDX-License-Identifier: MIT */
/*
 * iommu.c - the Intel VT-d remapping unit and the kernel (VT-d 4.x).
 *
 * uMSI's VT-d back end (umsi_ctl_x86_vtd, include/umsi/ctl.h) owns the
 * interrupt-remapping table, the invalidation queue and the enables; the
 * kernel chooses the unit from the ACPI DMAR table (acpi.c) and
 * umsi.remap=, hands its register base over (host.c), and keeps what the
 * back end leaves it: the fault recording registers (10.4.14):
 *
 *   CAP (0x08): FRO, bits 33:24, times 16 is the offset of the first
 *   fault recording register; NFR, bits 47:40, plus 1 of them.
 *   FSTS (0x34): PFO bit 0 (overflow, write 1 to clear), PPF bit 1 (a
 *   record is set; read-only, clear once every F is), FRI bits 15:8 (the
 *   first record to look at).
 *   FRCD (128 bits each): F bit 127 (write 1 to clear), T 126, FR (the
 *   reason) 103:96, SID 79:64, FI 63:12; an interrupt-remapping fault
 *   has the interrupt index in 63:48.
 *   FECTL/FEDATA/FEADDR/FEUADDR (0x38-0x44): the fault event interrupt,
 *   a compatibility-format message the unit itself sends (not remapped).
 *
 * The fault event is aimed at the boot CPU's wake vector: it ends the
 * work loop's halt, and the loop reads the records on every pass.
 */
#include "kernel.h"
#include "acpi.h"
#include "apic.h"
#include "iommu.h"
#include "pci.h"
#include "smp.h"
#include "glue.h"

#include <umsi/ctl.h>

#define DMAR_CAP        0x08
#define DMAR_GSTS       0x1c
#define DMAR_FSTS       0x34
#define DMAR_FECTL      0x38
#define DMAR_FEDATA     0x3c
#define DMAR_FEADDR     0x40
#define DMAR_FEUADDR    0x44
#define DMAR_IRTA       0xb8

#define GSTS_TES        (1u << 31)
#define GSTS_QIES       (1u << 26)
#define GSTS_IRES       (1u << 25)
#define GSTS_IRTPS      (1u << 24)
#define GSTS_CFIS       (1u << 23)

#define FSTS_PFO        (1u << 0)
#define FSTS_PPF        (1u << 1)


#define IRTA_EIME       (1u << 11)
#define IRTE_P          1ull

/* AMD-Vi (the IVRS table's IOMMU): registers uMSI's back end drives. */
#define AMDVI_CONTROL   0x18
#define AMDVI_DEVTAB    0x00
#define AMDVI_CTL_EN    (1u << 0)
#define AMDVI_CTL_CMDBUF (1u << 12)

static uint64_t amdvi_base;		/* chosen for uMSI, or 0 */
/* Every IOMMU chosen (the IVRS table's, amdvi_base the first), mapped. */
static uint64_t amdvi_units_regs[ACPI_MAX_IOMMUS];
static uint32_t amdvi_nunits;
/* The DRHDs of segment 0 chosen for uMSI (none: remapping off), and
 * their registers, mapped; the first is the one reports read. */
static const struct acpi_drhd *units[ACPI_MAX_DRHDS];
static uint64_t units_regs[ACPI_MAX_DRHDS];
static uint32_t nunits;

static uint32_t ioapic_sid = ACPI_NO_SID;
static uint32_t faults;			/* reported so far */

static uint64_t rd64(uint32_t off)
{
	return mmio_read32(units_regs[0] + off) |
	       (uint64_t)mmio_read32(units_regs[0] + off + 4) << 32;
}

static const char *mode_name(int mode)
{
	static const char *const n[] = { "auto", "on", "off", "vt-d",
					 "amd-vi" };

	return n[mode];
}

/* The IVRS table's IOMMU for uMSI's AMD-Vi back end (umsi.remap=). */
static bool amdvi_choose(int mode)
{
	const struct acpi_ivrs *iv = &acpi.ivrs;

	if (!iv->present)
		return false;
	kprintf("ivrs: IVHD type 0x%x iommu %02x:%02x.%u base 0x%lx segment "
		"%u, %u device entries, ioapic devid 0x%x%s%s\n", iv->ivhd_type,
		iv->iommu_devid >> 8, (iv->iommu_devid >> 3) & 0x1f,
		iv->iommu_devid & 7, (unsigned long)iv->base, iv->segment,
		iv->ndev_entries, iv->ioapic_devid, iv->valid ? "" : "; ",
		iv->valid ? "" : iv->error);
	for (uint32_t i = 0; i < iv->naliases && i < ACPI_MAX_ALIASES; i++)
		kprintf("ivrs: alias %02x:%02x.%u..%02x:%02x.%u as 0x%04x\n",
			iv->alias[i].first >> 8, (iv->alias[i].first >> 3) & 0x1f,
			iv->alias[i].first & 7, iv->alias[i].last >> 8,
			(iv->alias[i].last >> 3) & 0x1f, iv->alias[i].last & 7,
			iv->alias[i].alias);
	if (!iv->valid || iv->segment)
		return false;
	/*
	 * Several IOMMUs: each must list its DeviceIDs (an "all" entry
	 * would claim another's too), all of segment 0 and kept whole.
	 */
	if (iv->niommus > ACPI_MAX_IOMMUS) {
		kprintf("remap: error: %u IOMMUs, more than the %u kept; "
			"AMD-Vi remapping stays off\n", iv->niommus,
			ACPI_MAX_IOMMUS);
		return false;
	}
	for (uint32_t i = 0; i < iv->niommus && iv->niommus > 1; i++) {
		const struct acpi_ivrs_iommu *io = &iv->iommu[i];

		if (!io->segment && !io->all && io->ndevs &&
		    io->ndevs <= ACPI_MAX_DEVRANGES)
			continue;
		kprintf("remap: error: %u IOMMUs, and IOMMU %u %s; AMD-Vi "
			"remapping stays off\n", iv->niommus, i,
			io->segment ? "is not in segment 0" :
			io->all ? "claims every DeviceID" :
			"lists no DeviceIDs or more than are kept");
		return false;
	}
	amdvi_base = iv->base;
	amdvi_units_regs[0] = (uint64_t)mm_map_mmio(iv->base, 0x4000);
	amdvi_nunits = iv->niommus;
	for (uint32_t i = 1; i < amdvi_nunits; i++) {
		amdvi_units_regs[i] = (uint64_t)mm_map_mmio(iv->iommu[i].base,
							    0x4000);
		kprintf("remap: amd-vi unit 0x%lx too, %u device entries\n",
			(unsigned long)iv->iommu[i].base, iv->iommu[i].ndevs);
	}
	kprintf("remap: on (umsi.remap=%s): amd-vi unit 0x%lx, ioapic devid "
		"0x%x\n", mode_name(mode), (unsigned long)iv->base,
		iv->ioapic_devid);
	return true;
}

uint32_t iommu_amdvi_nunits(void)
{
	return amdvi_nunits;
}

uint64_t iommu_amdvi_unit_base(uint32_t i)
{
	return i < amdvi_nunits ? acpi.ivrs.iommu[i].base : 0;
}

uint32_t iommu_amdvi_devices(uint32_t i, struct umsi_rid_range *out,
			     uint32_t max)
{
	const struct acpi_ivrs_iommu *io = &acpi.ivrs.iommu[i];
	uint32_t seg, n = 0;

	/* Every DeviceID (a type 1 entry), or more ranges than were kept:
	 * the one-IOMMU form, which serves them all. */
	if (i >= amdvi_nunits || io->all || !io->ndevs ||
	    io->ndevs > ACPI_MAX_DEVRANGES)
		return 0;
	seg = (uint32_t)io->segment << 16;
	for (uint32_t k = 0; k < io->ndevs && n < max; k++)
		out[n++] = (struct umsi_rid_range){ seg | io->devs[k].first,
						    seg | io->devs[k].last };
	return n;
}

/* The registers of the IOMMU that serves DeviceID @devid (the first when
 * one serves them all). */
static uint64_t amdvi_regs_of(uint32_t devid)
{
	for (uint32_t i = 0; i < amdvi_nunits; i++) {
		const struct acpi_ivrs_iommu *io = &acpi.ivrs.iommu[i];

		if (io->all)
			return amdvi_units_regs[i];
		for (uint32_t k = 0; k < io->ndevs && k < ACPI_MAX_DEVRANGES;
		     k++)
			if (devid >= io->devs[k].first &&
			    devid <= io->devs[k].last)
				return amdvi_units_regs[i];
	}
	return amdvi_units_regs[0];
}

uint64_t iommu_amdvi_base(void)
{
	return amdvi_base;
}

uint32_t iommu_amdvi_ioapic_devid(void)
{
	return acpi.ivrs.ioapic_devid;
}

const char *iommu_kind(void)
{
	if (!iommu_remap_active())
		return NULL;
	return amdvi_base ? "amd-vi" : "vt-d";
}

/*
 * The function a scope entry names (bus << 8 | devfn), or -1: its path
 * walked from the start bus, each step but the last a bridge whose
 * secondary bus the next step is on (read now, after enumeration).
 */
static int scope_bdf(const struct acpi_dmar_scope *sc)
{
	uint32_t bus = sc->bus, bdf = 0;

	if (!sc->npath)
		return -1;
	for (uint32_t k = 0; k < sc->npath; k++) {
		uint8_t dev = sc->path[k][0], fn = sc->path[k][1];

		if (dev > 31 || fn > 7)
			return -1;
		bdf = PCI_BDF(bus, dev, fn);
		if (k + 1 == sc->npath)
			break;
		if (sc->type == DMAR_SCOPE_IOAPIC && bus > acpi.ecam_bus_end)
			return -1;	/* a pseudo bus has no bridges */
		if ((pci_cfg_read(bdf, 0x0e, 1) & 0x7f) != 1)
			return -1;
		bus = pci_cfg_read(bdf, 0x19, 1);
	}
	return (int)bdf;
}

static const char *scope_name(uint8_t type)
{
	switch (type) {
	case DMAR_SCOPE_ENDPOINT:
		return "pci_endpoint";
	case DMAR_SCOPE_SUBHIERARCHY:
		return "pci_subhierarchy";
	case DMAR_SCOPE_IOAPIC:
		return "ioapic";
	case 4:
		return "hpet";
	case 5:
		return "acpi_namespace";
	default:
		return "unknown";
	}
}

static uint32_t nkept(const struct acpi_drhd *d)
{
	return d->nscopes < ACPI_MAX_SCOPES ? d->nscopes : ACPI_MAX_SCOPES;
}

static void print_dmar(const struct acpi_dmar *dm)
{
	if (!dm->present) {
		kprintf("dmar: no DMAR table\n");
		return;
	}
	if (!dm->valid) {
		kprintf("dmar: bad table: %s; not used\n", dm->error);
		return;
	}
	kprintf("dmar: haw %u intr_remap %u x2apic_opt_out %u, %u DRHD, "
		"%u other structures\n", dm->haw, dm->intr_remap,
		dm->x2apic_opt_out, dm->ndrhds, dm->nother);
	for (uint32_t i = 0; i < dm->ndrhds; i++) {
		const struct acpi_drhd *d = &dm->drhd[i];
		char io[128];
		size_t len = 0;

		io[0] = 0;
		for (uint32_t k = 0; k < nkept(d) && len < sizeof(io); k++) {
			const struct acpi_dmar_scope *sc = &d->scope[k];
			int bdf = scope_bdf(sc);

			if (sc->type != DMAR_SCOPE_IOAPIC)
				continue;
			if (bdf < 0)
				len += (size_t)ksnprintf(io + len, sizeof(io) - len,
					" ioapic %u sid unresolved", sc->id);
			else
				len += (size_t)ksnprintf(io + len, sizeof(io) - len,
					" ioapic %u sid 0x%04x", sc->id, bdf);
		}
		kprintf("dmar: DRHD 0x%lx segment %u flags 0x%x%s, %u scopes%s "
			"intr_remap %u x2apic_opt_out %u\n", d->base, d->segment,
			d->flags, d->include_pci_all ? " include_pci_all" : "",
			d->nscopes, io, dm->intr_remap, dm->x2apic_opt_out);
		for (uint32_t k = 0; k < nkept(d); k++) {
			const struct acpi_dmar_scope *sc = &d->scope[k];
			int bdf = scope_bdf(sc);

			if (sc->type == DMAR_SCOPE_IOAPIC)
				continue;
			if (bdf < 0)
				kprintf("dmar: DRHD 0x%lx scope %s id %u bus %u "
					"unresolved\n", d->base,
					scope_name(sc->type), sc->id, sc->bus);
			else
				kprintf("dmar: DRHD 0x%lx scope %s %04x:%02x:%02x.%u\n",
					d->base, scope_name(sc->type), d->segment,
					PCI_BUS(bdf), PCI_DEV(bdf), PCI_FN(bdf));
		}
	}
}

/* Does unit @u remap what function @bdf sends (its device scope)? */
static bool unit_covers(const struct acpi_drhd *u, uint32_t bdf)
{
	if (u->include_pci_all)
		return true;
	for (uint32_t k = 0; k < nkept(u); k++) {
		const struct acpi_dmar_scope *sc = &u->scope[k];
		int b = scope_bdf(sc);
		uint32_t sec, sub;

		if (b < 0 || (sc->type != DMAR_SCOPE_ENDPOINT &&
			      sc->type != DMAR_SCOPE_SUBHIERARCHY))
			continue;
		if ((uint32_t)b == bdf)
			return true;
		if (sc->type != DMAR_SCOPE_SUBHIERARCHY ||
		    (pci_cfg_read((uint32_t)b, 0x0e, 1) & 0x7f) != 1)
			continue;
		sec = pci_cfg_read((uint32_t)b, 0x19, 1);
		sub = pci_cfg_read((uint32_t)b, 0x1a, 1);
		if (sec && PCI_BUS(bdf) >= sec && PCI_BUS(bdf) <= sub)
			return true;
	}
	return false;
}

/*
 * The units of segment 0 uMSI drives, in @out (how many; 0 with @why):
 * every DRHD of segment 0, which together must cover every function the
 * kernel found (a device scope naming it or its bridge, or an
 * INCLUDE_PCI_ALL unit; QEMU 7.2 lists its root bus's functions and
 * bridges instead of that flag). A device scope longer than the parser
 * kept cannot be checked, nor handed over: such a table is refused.
 */
static uint32_t usable_units(const struct acpi_dmar *dm, bool need_flag,
			     const struct acpi_drhd **out, const char **why)
{
	static char buf[96];
	uint32_t n = 0;

	if (!dm->present) {
		*why = "no DMAR table";
		return 0;
	}
	if (!dm->valid) {
		*why = "the DMAR table is bad";
		return 0;
	}
	if (need_flag && !dm->intr_remap) {
		*why = "the DMAR flags say no interrupt remapping";
		return 0;
	}
	for (uint32_t i = 0; i < dm->ndrhds; i++) {
		if (dm->drhd[i].segment)
			continue;
		if (!dm->drhd[i].include_pci_all &&
		    dm->drhd[i].nscopes > ACPI_MAX_SCOPES) {
			*why = "a DRHD's device scope is too long to check";
			return 0;
		}
		out[n++] = &dm->drhd[i];
	}
	if (!n) {
		*why = "no DRHD in segment 0";
		return 0;
	}
	for (uint32_t i = 0; i < pci_ndevs; i++) {
		const struct pci_dev *d = &pci_devs[i];
		bool covered = !d->present;

		for (uint32_t k = 0; k < n && !covered; k++)
			covered = unit_covers(out[k], d->bdf);
		if (covered)
			continue;
		ksnprintf(buf, sizeof(buf), "function 0000:%02x:%02x.%u is "
			  "outside every DRHD's device scope", PCI_BUS(d->bdf),
			  PCI_DEV(d->bdf), PCI_FN(d->bdf));
		*why = buf;
		return 0;
	}
	return n;
}

uint32_t iommu_nunits(void)
{
	return nunits;
}

const struct acpi_drhd *iommu_unit(uint32_t i)
{
	return i < nunits ? units[i] : NULL;
}

uint32_t iommu_scope_ranges(uint32_t i, struct umsi_rid_range *out,
			    uint32_t max)
{
	const struct acpi_drhd *u = iommu_unit(i);
	uint32_t n = 0, seg;

	if (!u)
		return 0;
	seg = (uint32_t)u->segment << 16;
	for (uint32_t k = 0; k < nkept(u); k++) {
		const struct acpi_dmar_scope *sc = &u->scope[k];
		int b = scope_bdf(sc);
		uint32_t sec, sub;

		if (b < 0 || (sc->type != DMAR_SCOPE_ENDPOINT &&
			      sc->type != DMAR_SCOPE_SUBHIERARCHY &&
			      (sc->type != DMAR_SCOPE_IOAPIC || seg)))
			continue;	/* unresolved, HPET, ACPI namespace */
		/* The function itself (a bridge too: its own messages). */
		if (n < max)
			out[n++] = (struct umsi_rid_range){ seg | (uint32_t)b,
							    seg | (uint32_t)b };
		if (sc->type != DMAR_SCOPE_SUBHIERARCHY ||
		    (pci_cfg_read((uint32_t)b, 0x0e, 1) & 0x7f) != 1)
			continue;
		/* And every bus below it, read now (after enumeration). */
		sec = pci_cfg_read((uint32_t)b, 0x19, 1);
		sub = pci_cfg_read((uint32_t)b, 0x1a, 1);
		if (sec && sec <= sub && n < max)
			out[n++] = (struct umsi_rid_range){ seg | sec << 8,
							    seg | sub << 8 | 0xff };
	}
	return n;
}

/* The source ID of IO-APIC @id, from any unit's device scope. */
static uint32_t find_ioapic_sid(const struct acpi_dmar *dm, uint8_t id)
{
	for (uint32_t i = 0; i < dm->ndrhds; i++) {
		const struct acpi_drhd *d = &dm->drhd[i];

		for (uint32_t k = 0; k < nkept(d); k++) {
			const struct acpi_dmar_scope *sc = &d->scope[k];
			int bdf = scope_bdf(sc);

			if (sc->type == DMAR_SCOPE_IOAPIC && sc->id == id &&
			    bdf >= 0)
				return (uint32_t)bdf;
		}
	}
	return ACPI_NO_SID;
}

void iommu_init(void)
{
	const struct acpi_dmar *dm = &acpi.dmar;
	const struct acpi_drhd *found[ACPI_MAX_DRHDS], *d;
	const char *why = NULL;
	uint32_t n = 0;
	char val[16];
	int mode = 0;	/* auto */

	print_dmar(dm);
	if (cmdline_value("umsi.remap", val, sizeof(val))) {
		if (!strcmp(val, "on"))
			mode = 1;
		else if (!strcmp(val, "off"))
			mode = 2;
		else if (!strcmp(val, "vt-d"))
			mode = 3;
		else if (!strcmp(val, "amd-vi"))
			mode = 4;
		else if (strcmp(val, "auto"))
			kprintf("remap: umsi.remap=%s: not on, off, auto, vt-d or "
				"amd-vi; auto\n", val);
	}
	if (mode == 2) {
		kprintf("remap: off (umsi.remap=off)\n");
		return;
	}
	/* The unit the tables name: a DMAR table's VT-d unit, else an
	 * IVRS table's AMD-Vi IOMMU (umsi.remap=vt-d or amd-vi: only it). */
	if (mode != 4)
		n = usable_units(dm, mode == 0, found, &why);
	d = n ? found[0] : NULL;
	if (mode == 4)
		why = "no IVRS table, or one that did not parse";
	if (!d && mode != 3 && !dm->present && amdvi_choose(mode))
		return;
	if (!d && mode == 4) {
		kprintf("remap: error: umsi.remap=amd-vi, but %s; remapping "
			"stays off\n", why);
		return;
	}
	if (!d) {
		if (mode == 1)
			kprintf("remap: error: umsi.remap=on, but %s; "
				"remapping stays off\n", why);
		else
			kprintf("remap: off (umsi.remap=auto: %s)\n", why);
		return;
	}
	if (!dm->intr_remap)
		kprintf("remap: the DMAR flags say no interrupt remapping; "
			"umsi.remap=on tries the unit anyway\n");
	for (uint32_t i = 0; i < n; i++) {
		units[i] = found[i];
		units_regs[i] = (uint64_t)mm_map_mmio(found[i]->base, 4096);
		if (i)
			kprintf("remap: unit 0x%lx too (%s)\n", found[i]->base,
				found[i]->include_pci_all ? "include_pci_all" :
				"its device scope");
	}
	nunits = n;
	/* One IO-APIC's ID, for the line below; uMSI gets each one's
	 * (iommu_ioapic_source()), and host.c prints each, known or not. */
	if (acpi.nioapics == 1)
		ioapic_sid = find_ioapic_sid(dm, acpi.ioapic[0].id);
	kprintf("remap: on (umsi.remap=%s): unit 0x%lx, ioapic sid 0x%x\n",
		mode_name(mode), d->base, ioapic_sid);
}

const struct acpi_drhd *iommu_remap_unit(void)
{
	return nunits ? units[0] : NULL;
}

uint32_t iommu_ioapic_sid(void)
{
	return ioapic_sid;
}

uint32_t iommu_ioapic_source(uint8_t id)
{
	if (amdvi_base)
		return acpi.ivrs.ioapic_devid_of[id];
	return nunits ? find_ioapic_sid(&acpi.dmar, id) : ACPI_NO_SID;
}

bool iommu_remap_active(void)
{
	if (amdvi_base) {
		for (uint32_t i = 0; i < amdvi_nunits; i++)
			if ((mmio_read32(amdvi_units_regs[i] + AMDVI_CONTROL) &
			     (AMDVI_CTL_EN | AMDVI_CTL_CMDBUF)) !=
			    (AMDVI_CTL_EN | AMDVI_CTL_CMDBUF))
				return false;
		return true;
	}
	for (uint32_t i = 0; i < nunits; i++)
		if (!(mmio_read32(units_regs[i] + DMAR_GSTS) & GSTS_IRES))
			return false;
	return nunits != 0;
}

int iommu_irte_vector(uint32_t index, uint8_t *vector)
{
	uint64_t irta, lo;

	if (!nunits)
		return -1;
	irta = rd64(DMAR_IRTA);
	if (!(irta & ~(uint64_t)0xfff) || index >= 2u << (irta & 0xf))
		return -1;
	lo = *(volatile uint64_t *)((irta & ~(uint64_t)0xfff) + 16ull * index);
	if (!(lo & IRTE_P))
		return -1;
	*vector = (uint8_t)(lo >> 16);
	return 0;
}

int iommu_amdvi_table(uint32_t devid, uint32_t *entries,
		      const volatile uint32_t **table)
{
	uint64_t dt, q2, r;
	uint32_t ndev;

	if (!amdvi_base || devid > 0xffff)
		return -1;
	r = amdvi_regs_of(devid);
	dt = mmio_read32(r + AMDVI_DEVTAB) |
	     (uint64_t)mmio_read32(r + AMDVI_DEVTAB + 4) << 32;
	ndev = ((uint32_t)(dt & 0x1ff) + 1) * 128;
	if (!(dt & ~0xfffull) || devid >= ndev)
		return -1;
	/* The third quadword: IV 0, IntTabLen 4:1, root 51:6, IntCtl 61:60. */
	q2 = ((volatile uint64_t *)(dt & ~0xfffull))[4 * devid + 2];
	if (!(q2 & 1) || ((q2 >> 60) & 3) != 2 || ((q2 >> 1) & 0xf) > 11)
		return -1;
	*entries = 1u << ((q2 >> 1) & 0xf);
	*table = (const volatile uint32_t *)(q2 & 0x000fffffffffffc0ull);
	return 0;
}

uint32_t iommu_irte_count(void)
{
	uint64_t irta;

	if (!nunits)
		return 0;
	irta = rd64(DMAR_IRTA);
	return irta & ~(uint64_t)0xfff ? 2u << (irta & 0xf) : 0;
}

void iommu_setup_done(void)
{
	uint32_t gsts, bsp_id;
	uint64_t irta;

	if (amdvi_base) {
		for (uint32_t i = 0; i < amdvi_nunits; i++) {
			uint64_t r = amdvi_units_regs[i];
			uint32_t ctl = mmio_read32(r + AMDVI_CONTROL);
			uint64_t dt = mmio_read32(r + AMDVI_DEVTAB) |
				      (uint64_t)mmio_read32(r + AMDVI_DEVTAB +
							    4) << 32;

			kprintf("amdvi: unit 0x%lx control 0x%x: iommu %s, "
				"command buffer %s; device table 0x%lx, %u "
				"DeviceIDs\n",
				(unsigned long)acpi.ivrs.iommu[i].base, ctl,
				ctl & AMDVI_CTL_EN ? "on" : "off",
				ctl & AMDVI_CTL_CMDBUF ? "on" : "off",
				(unsigned long)(dt & ~0xfffull),
				((unsigned)(dt & 0x1ff) + 1) * 128);
		}
		if (!iommu_remap_active())
			kprintf("remap: error: the AMD-Vi unit is off after "
				"uMSI's set-up\n");
		return;
	}
	for (uint32_t i = 0; i < nunits; i++) {
		uint64_t r = units_regs[i];

		gsts = mmio_read32(r + DMAR_GSTS);
		irta = mmio_read32(r + DMAR_IRTA) |
		       (uint64_t)mmio_read32(r + DMAR_IRTA + 4) << 32;
		kprintf("dmar: unit 0x%lx gsts 0x%08x fsts 0x%x: ir %s, qi %s, "
			"compat %s, translation %s; table 0x%lx entries %u "
			"eime %u\n", units[i]->base, gsts,
			mmio_read32(r + DMAR_FSTS),
			gsts & GSTS_IRES ? "on" : "off",
			gsts & GSTS_QIES ? "on" : "off",
			gsts & GSTS_CFIS ? "allowed" : "blocked",
			gsts & GSTS_TES ? "on" : "off", irta & ~(uint64_t)0xfff,
			2u << (irta & 0xf), (irta & IRTA_EIME) ? 1 : 0);
		if (!(gsts & GSTS_IRES))
			kprintf("remap: error: interrupt remapping is off in the "
				"unit at 0x%lx after uMSI's set-up\n",
				units[i]->base);
		/* The fault event: the wake vector, physical, to the boot
		 * CPU. */
		bsp_id = smp_cpu_apic_id(smp_bsp_cpu);
		mmio_write32(r + DMAR_FEDATA, VECTOR_WAKE);
		mmio_write32(r + DMAR_FEADDR, 0xfee00000u |
			     (bsp_id & 0xff) << 12);
		mmio_write32(r + DMAR_FEUADDR,
			     apic_mode() == APIC_X2APIC ? bsp_id & ~0xffu : 0);
		mmio_write32(r + DMAR_FECTL, 0);
	}
	iommu_poll_faults();
}

/* The interrupt-remapping fault reasons (VT-d 7.1.3, 0x20-0x28). */
static const char *ir_reason(uint8_t fr)
{
	static const char *const text[] = {
		"reserved bits set in the request",
		"index beyond the table",
		"entry not present",
		"table pointer unreadable",
		"reserved bits set in the entry",
		"compatibility format blocked",
		"source ID check failed",
		"posted descriptor unreadable",
		"reserved bits set in the posted descriptor",
	};

	return fr >= 0x20 && fr <= 0x28 ? text[fr - 0x20] : NULL;
}

/* One fault the library read from the unit, as a UMSI line. */
static void report_fault(void *arg, const struct umsi_vtd_fault *f)
{
	const char *why = f->interrupt ? ir_reason(f->reason) : NULL;
	/* The unit that recorded it names the segment. */
	uint32_t seg = f->unit < nunits ? units[f->unit]->segment : 0;

	(void)arg;
	if (why)
		kprintf("UMSI {\"event\":\"ir_fault\",\"sid\":\"%04x:%02x:%02x.%u\","
			"\"index\":%u,\"reason\":\"0x%02x %s\"}\n",
			seg, f->sid >> 8, (f->sid >> 3) & 0x1f,
			f->sid & 7, f->index, f->reason, why);
	else
		kprintf("UMSI {\"event\":\"dma_fault\",\"sid\":\"%04x:%02x:%02x.%u\","
			"\"addr\":\"0x%lx\",\"%s\":true,\"reason\":\"0x%02x\"}\n",
			seg, f->sid >> 8, (f->sid >> 3) & 0x1f,
			f->sid & 7, f->addr, f->write ? "write" : "read",
			f->reason);
}

/*
 * The fault recording registers, read and cleared by the library's VT-d
 * back end (umsi_vtd_faults, which the simulator's unit tests cover):
 * each fault becomes a UMSI line.
 */
uint32_t iommu_poll_faults(void)
{
	struct umsi_system *s = kernel_umsi_system();
	bool lost = false;
	int n;

	if (!nunits || !s)
		return 0;
	n = umsi_vtd_faults(s, report_fault, NULL, &lost);
	if (n < 0)
		return 0;
	if (lost)
		kprintf("dmar: fault records overflowed: faults were lost\n");
	faults += (uint32_t)n;
	return (uint32_t)n;
}
