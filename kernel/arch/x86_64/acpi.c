/* SPDX-License-Identifier: MIT */
/*
 * acpi.c - RSDP, RSDT/XSDT, MADT, MCFG and FADT parsing (ACPI 6.x,
 * chapter 5.2). Tables are read in place: they sit in RAM that the
 * identity mapping covers.
 */
#include "kernel.h"
#include "acpi.h"

struct acpi_info acpi;

struct sdt_header {
	char sig[4];
	uint32_t length;
	uint8_t revision;
	uint8_t checksum;
	char oem_id[6];
	char oem_table_id[8];
	uint32_t oem_revision;
	uint32_t creator_id;
	uint32_t creator_revision;
} __attribute__((packed));

static bool checksum_ok(const void *p, size_t len)
{
	const uint8_t *b = p;
	uint8_t sum = 0;

	while (len--)
		sum += *b++;
	return sum == 0;
}

static uint64_t rsdp_scan(uint64_t start, uint64_t len)
{
	for (uint64_t a = start; a + 20 <= start + len; a += 16) {
		if (!memcmp((void *)a, "RSD PTR ", 8) && checksum_ok((void *)a, 20))
			return a;
	}
	return 0;
}

/* SDT headers are byte-packed; read fields without alignment traps. */
static uint32_t rd32(const void *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static uint64_t rd64(const void *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static uint16_t rd16(const void *p)
{
	uint16_t v;

	memcpy(&v, p, 2);
	return v;
}

static void add_cpu(uint32_t apic_id)
{
	for (uint32_t i = 0; i < acpi.ncpus; i++) {
		if (acpi.cpu_apic_id[i] == apic_id)
			return;	/* both a LAPIC and an x2APIC entry */
	}
	if (acpi.ncpus >= KERNEL_MAX_CPUS) {
		kprintf("acpi: more than %u CPUs, ignoring APIC ID %u\n",
			KERNEL_MAX_CPUS, apic_id);
		return;
	}
	acpi.cpu_apic_id[acpi.ncpus++] = apic_id;
}

/*
 * MADT (5.2.12): flags at 40 (bit 0 PCAT_COMPAT), LAPIC address at 36,
 * then entries of (type, length). A CPU entry counts when its Enabled
 * flag is set; its position among those is the kernel's CPU number.
 */
/* The least length of each MADT entry type this parser reads (5.2.12). */
static uint8_t madt_min_len(uint8_t type)
{
	switch (type) {
	case 0:  return 8;      /* Processor Local APIC */
	case 1:  return 12;     /* I/O APIC */
	case 2:  return 10;     /* Interrupt Source Override */
	case 5:  return 12;     /* Local APIC Address Override */
	case 9:  return 16;     /* Processor Local x2APIC */
	default: return 2;
	}
}

static void parse_madt(const uint8_t *t, uint32_t len)
{
	if (len < 44) {
		kprintf("acpi: MADT of %u bytes, shorter than its header\n", len);
		return;
	}
	acpi.lapic_addr = rd32(t + 36);
	acpi.pcat_compat = rd32(t + 40) & 1;
	for (uint32_t off = 44; off + 2 <= len;) {
		const uint8_t *e = t + off;
		uint8_t type = e[0], elen = e[1];

		/* An entry shorter than its type, or past the end: stop. */
		if (elen < madt_min_len(type) || elen > len - off) {
			kprintf("acpi: MADT entry type %u at %u has length %u "
				"(%u left)\n", type, off, elen, len - off);
			break;
		}
		switch (type) {
		case 0:		/* Processor Local APIC */
			if (rd32(e + 4) & 1)
				add_cpu(e[3]);
			else
				acpi.ncpus_disabled++;
			break;
		case 9:		/* Processor Local x2APIC */
			if (rd32(e + 8) & 1)
				add_cpu(rd32(e + 4));
			else
				acpi.ncpus_disabled++;
			break;
		case 1:		/* I/O APIC */
			if (acpi.nioapics < ACPI_MAX_IOAPICS) {
				struct acpi_ioapic *io = &acpi.ioapic[acpi.nioapics++];

				io->id = e[2];
				io->addr = rd32(e + 4);
				io->gsi_base = rd32(e + 8);
			}
			break;
		case 2:		/* Interrupt Source Override */
			if (acpi.nisos < ACPI_MAX_ISOS) {
				struct acpi_iso *iso = &acpi.iso[acpi.nisos++];

				iso->bus = e[2];
				iso->source = e[3];
				iso->gsi = rd32(e + 4);
				iso->flags = rd16(e + 8);
			}
			break;
		case 5:		/* Local APIC Address Override */
			acpi.lapic_addr = rd64(e + 4);
			break;
		default:
			break;
		}
		off += elen;
	}
}

/* MCFG (PCI Firmware spec 4.1.2): 8 reserved bytes, then 16-byte entries. */
static void parse_mcfg(const uint8_t *t, uint32_t len)
{
	for (uint32_t off = 44; off + 16 <= len; off += 16) {
		const uint8_t *e = t + off;

		if (rd16(e + 8) != 0 || acpi.have_mcfg)
			continue;	/* segment 0 only */
		acpi.have_mcfg = true;
		acpi.ecam_base = rd64(e);
		acpi.ecam_segment = rd16(e + 8);
		acpi.ecam_bus_start = e[10];
		acpi.ecam_bus_end = e[11];
	}
}

/*
 * FADT (5.2.9): PM_TMR_BLK at 76, IAPC_BOOT_ARCH at 109 (ACPI 2.0+),
 * flags at 112 (bit 8 TMR_VAL_EXT: 32-bit PM timer), X_PM_TMR_BLK at 208.
 */
static void parse_fadt(const uint8_t *t, uint32_t len)
{
	if (len >= 80)
		acpi.pm_timer_port = (uint16_t)rd32(t + 76);
	if (len >= 116)
		acpi.pm_timer_32bit = (rd32(t + 112) >> 8) & 1;
	if (len >= 111 && t[8] >= 2) {
		acpi.iapc_boot_arch = rd16(t + 109);
		acpi.msi_not_supported = (acpi.iapc_boot_arch >> 3) & 1;
	}
	/* X_PM_TMR_BLK in system I/O space, when the 32-bit field is 0. */
	if (!acpi.pm_timer_port && len >= 220 && t[208] == 1)
		acpi.pm_timer_port = (uint16_t)rd64(t + 212);
}

/*
 * DMAR (VT-d 8.1): after the 36-byte header, Host Address Width (HAW - 1)
 * at 36, flags at 37 (bit 0 INTR_REMAP, bit 1 X2APIC_OPT_OUT), 10
 * reserved bytes, then remapping structures of (type: 16 bits, length:
 * 16 bits) from offset 48. A DRHD (type 0, 8.3) has flags at 4 (bit 0
 * INCLUDE_PCI_ALL), the segment at 6, the Register Base Address at 8 and
 * device scope entries from 16 (8.3.1): type, length, 2 reserved bytes,
 * enumeration ID, start bus, then (device, function) pairs. Entries are
 * kept as they are; iommu.c walks their paths once PCI is enumerated.
 */
#define DMAR_HDR_LEN        48
#define DMAR_DRHD_MIN_LEN   16
#define DMAR_SCOPE_MIN_LEN  6

/*
 * A table that does not parse: @error (ACPI_ERROR_LEN bytes) says why,
 * @valid goes false. Returns false, for "return table_fail(...)".
 */
static bool table_fail(char *error, bool *valid, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static bool table_fail(char *error, bool *valid, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	kvsnprintf(error, ACPI_ERROR_LEN, fmt, ap);
	va_end(ap);
	*valid = false;
	return false;
}

#define dmar_fail(out, ...) table_fail((out)->error, &(out)->valid, __VA_ARGS__)

/* The device scopes of the DRHD at @e (@elen bytes, checked by the caller). */
static bool dmar_drhd_scopes(const uint8_t *e, uint32_t elen, uint32_t at,
			     struct acpi_drhd *d, struct acpi_dmar *out)
{
	for (uint32_t off = DMAR_DRHD_MIN_LEN; off < elen;) {
		const uint8_t *s = e + off;
		uint32_t slen, npath;

		if (elen - off < 2)
			return dmar_fail(out, "DRHD at %u: scope at %u cut short",
					 at, off);
		slen = s[1];
		if (slen < DMAR_SCOPE_MIN_LEN || slen > elen - off ||
		    (slen - DMAR_SCOPE_MIN_LEN) % 2)
			return dmar_fail(out, "DRHD at %u: scope at %u has "
					 "length %u (%u left)", at, off, slen,
					 elen - off);
		npath = (slen - DMAR_SCOPE_MIN_LEN) / 2;
		if (!npath && s[0] >= DMAR_SCOPE_ENDPOINT &&
		    s[0] <= DMAR_SCOPE_IOAPIC)
			return dmar_fail(out, "DRHD at %u: scope at %u (type "
					 "%u) has no path", at, off, s[0]);
		if (d->nscopes < ACPI_MAX_SCOPES) {
			struct acpi_dmar_scope *sc = &d->scope[d->nscopes];

			sc->type = s[0];
			sc->id = s[4];
			sc->bus = s[5];
			sc->npath = (uint8_t)(npath < ACPI_MAX_PATH ?
					      npath : ACPI_MAX_PATH);
			for (uint32_t k = 0; k < sc->npath; k++) {
				sc->path[k][0] = s[6 + 2 * k];
				sc->path[k][1] = s[7 + 2 * k];
			}
			if (npath > ACPI_MAX_PATH)
				sc->npath = 0;	/* too deep: not resolved */
		}
		d->nscopes++;
		off += slen;
	}
	return true;
}

void acpi_parse_dmar(const uint8_t *t, uint32_t len, struct acpi_dmar *out)
{
	memset(out, 0, sizeof(*out));
	out->present = true;
	out->valid = true;
	if (len < DMAR_HDR_LEN) {
		dmar_fail(out, "table of %u bytes, the header alone is %u",
			  len, DMAR_HDR_LEN);
		return;
	}
	out->haw = (uint8_t)(t[36] + 1);
	out->intr_remap = t[37] & 1;
	out->x2apic_opt_out = (t[37] >> 1) & 1;
	for (uint32_t off = DMAR_HDR_LEN; off < len;) {
		const uint8_t *e = t + off;
		uint16_t type, elen;

		if (len - off < 4) {
			dmar_fail(out, "structure at %u cut short (%u bytes left)",
				  off, len - off);
			return;
		}
		type = rd16(e);
		elen = rd16(e + 2);
		if (elen < 4 || elen > len - off) {
			dmar_fail(out, "structure type %u at %u has length %u "
				  "(%u left)", type, off, elen, len - off);
			return;
		}
		if (type != 0) {
			out->nother++;
			off += elen;
			continue;
		}
		if (elen < DMAR_DRHD_MIN_LEN) {
			dmar_fail(out, "DRHD at %u has length %u, below %u", off,
				  elen, DMAR_DRHD_MIN_LEN);
			return;
		}
		if (out->ndrhds >= ACPI_MAX_DRHDS) {
			dmar_fail(out, "more than %u DRHDs", ACPI_MAX_DRHDS);
			return;
		}

		struct acpi_drhd *d = &out->drhd[out->ndrhds];

		memset(d, 0, sizeof(*d));
		d->flags = e[4];
		d->include_pci_all = e[4] & 1;
		d->segment = rd16(e + 6);
		d->base = rd64(e + 8);
		if (!d->base || d->base & 0xfff) {
			dmar_fail(out, "DRHD at %u: register base 0x%lx not a "
				  "4 KiB aligned address", off, d->base);
			return;
		}
		if (!dmar_drhd_scopes(e, elen, off, d, out))
			return;
		out->ndrhds++;
		off += elen;
	}
}

/*
 * IVRS (AMD IOMMU 5.2): after the 36-byte header, IVinfo (4 bytes) and 8
 * reserved, IVHD/IVMD blocks of (type: 8 bits, flags: 8, length: 16) from
 * offset 48. An IVHD (5.2.2) has the IOMMU's DeviceID at 4, the
 * capability offset at 6, the IOMMU Base Address at 8 (16 KiB aligned),
 * the segment at 16, then device entries from 24 (type 0x10) or 40 (0x11,
 * 0x40): 4 bytes for types 0-63, 8 for 64-127, a variable length (byte 1)
 * from 128. The IO-APIC special entry (type 0x48) holds the IO-APIC's
 * handle (its MADT ID) at 4, its DeviceID at 5, variety 1 at 7.
 */
#define IVRS_HDR_LEN        48
#define IVHD_MIN_LEN        24

#define ivrs_fail(out, ...) table_fail((out)->error, &(out)->valid, __VA_ARGS__)

/* DeviceIDs @first..@last reach the IOMMU as @alias. */
static void ivrs_alias(struct acpi_ivrs *out, uint16_t first, uint16_t last,
		       uint16_t alias)
{
	if (out->naliases < ACPI_MAX_ALIASES)
		out->alias[out->naliases] = (struct acpi_ivrs_alias){
			first, last, alias };
	out->naliases++;
}

/* DeviceIDs @first..@last go through IOMMU @io (NULL: one not kept). */
static void ivrs_devs(struct acpi_ivrs_iommu *io, uint16_t first,
		      uint16_t last)
{
	if (!io)
		return;
	if (io->ndevs < ACPI_MAX_DEVRANGES)
		io->devs[io->ndevs] = (struct acpi_ivrs_devs){ first, last };
	io->ndevs++;
}

/*
 * An IO-APIC special device entry: IO-APIC @id sends as DeviceID @devid.
 * The first entry of an ID counts; @first_id is the MADT's first IO-APIC.
 */
static void ivrs_ioapic(struct acpi_ivrs *out, uint8_t id, uint16_t devid,
			uint8_t first_id)
{
	if (out->ioapic_devid_of[id] != ACPI_NO_DEVID)
		return;
	out->ioapic_devid_of[id] = devid;
	if (id == first_id)
		out->ioapic_devid = devid;
}

/*
 * The device entries of the IVHD at @b (@blen bytes, checked), of IOMMU
 * @io (NULL: past those kept; its entries are still checked).
 */
static bool ivhd_entries(const uint8_t *b, uint32_t blen, uint32_t first,
			 uint32_t at, uint8_t ioapic_id, struct acpi_ivrs *out,
			 struct acpi_ivrs_iommu *io)
{
	/* An open alias range (0x43), until its end-of-range entry. */
	bool range = false;
	uint16_t range_first = 0, range_alias = 0;
	/* An open range of any kind (3, 0x43, 0x47). */
	bool open = false;
	uint16_t open_first = 0;

	for (uint32_t off = first; off < blen;) {
		const uint8_t *e = b + off;
		uint8_t type = e[0];
		uint32_t elen = type < 64 ? 4u : type < 128 ? 8u : 0u;

		if (!elen) {
			if (blen - off < 2)
				return ivrs_fail(out, "IVHD at %u: entry at %u cut "
						 "short", at, off);
			elen = 2u + e[1];
		}
		if (elen > blen - off)
			return ivrs_fail(out, "IVHD at %u: entry type 0x%x at %u "
					 "has %u bytes, %u left", at, type, off,
					 elen, blen - off);
		if (type == 0x48 && e[7] == 1)
			ivrs_ioapic(out, e[4], rd16(e + 5), ioapic_id);
		/* What the IOMMU serves (5.2.2.2: device entry types). */
		if (type == 0x01 && io)
			io->all = true;
		if (type == 0x02 || type == 0x42 || type == 0x46)
			ivrs_devs(io, rd16(e + 1), rd16(e + 1));
		if (type == 0x42 || type == 0x43)
			ivrs_devs(io, rd16(e + 5), rd16(e + 5));
		if (type == 0x48)
			ivrs_devs(io, rd16(e + 5), rd16(e + 5));
		if (type == 0x03 || type == 0x43 || type == 0x47) {
			open = true;
			open_first = rd16(e + 1);
		}
		if (type == 0x04 && open) {
			if (rd16(e + 1) < open_first)
				return ivrs_fail(out, "IVHD at %u: range "
						 "0x%x..0x%x runs backwards", at,
						 open_first, rd16(e + 1));
			ivrs_devs(io, open_first, rd16(e + 1));
			open = false;
		}
		if (type == 0x42)
			ivrs_alias(out, rd16(e + 1), rd16(e + 1), rd16(e + 5));
		if (type == 0x43) {
			range = true;
			range_first = rd16(e + 1);
			range_alias = rd16(e + 5);
		}
		if (type == 0x04 && range) {
			if (rd16(e + 1) < range_first)
				return ivrs_fail(out, "IVHD at %u: alias range "
						 "0x%x..0x%x runs backwards", at,
						 range_first, rd16(e + 1));
			ivrs_alias(out, range_first, rd16(e + 1), range_alias);
			range = false;
		}
		out->ndev_entries++;
		off += elen;
	}
	if (range)
		return ivrs_fail(out, "IVHD at %u: alias range from 0x%x has no "
				 "end", at, range_first);
	if (open)
		return ivrs_fail(out, "IVHD at %u: range from 0x%x has no end",
				 at, open_first);
	return true;
}

/*
 * An IVHD at @b (@blen bytes, at least @first): a new IOMMU, or a later
 * IVHD of one seen (0x11, 0x40 after 0x10 repeat it: the first is kept).
 */
static bool ivhd_block(const uint8_t *b, uint32_t blen, uint32_t first,
		       uint32_t off, uint8_t ioapic_id, struct acpi_ivrs *out)
{
	uint64_t base = rd64(b + 8);
	struct acpi_ivrs_iommu *io = NULL;
	uint32_t k, kept;

	if (!base || base % 0x4000)
		return ivrs_fail(out, "IVHD at %u: base 0x%lx not a 16 KiB "
				 "aligned address", off, (unsigned long)base);
	kept = out->niommus < ACPI_MAX_IOMMUS ? out->niommus : ACPI_MAX_IOMMUS;
	for (k = 0; k < kept; k++)
		if (out->iommu[k].base == base)
			break;
	out->nivhds++;
	if (k < kept)
		return true;
	if (!out->niommus) {
		out->ivhd_type = b[0];
		out->iommu_devid = rd16(b + 4);
		out->base = base;
		out->segment = rd16(b + 16);
	}
	if (out->niommus < ACPI_MAX_IOMMUS) {
		io = &out->iommu[out->niommus];
		io->base = base;
		io->devid = rd16(b + 4);
		io->segment = rd16(b + 16);
	}
	out->niommus++;
	return ivhd_entries(b, blen, first, off, ioapic_id, out, io);
}

void acpi_parse_ivrs(const uint8_t *t, uint32_t len, uint8_t ioapic_id,
		     struct acpi_ivrs *out)
{
	memset(out, 0, sizeof(*out));
	out->present = true;
	out->valid = true;
	out->ioapic_devid = ACPI_NO_DEVID;
	for (uint32_t i = 0; i < 256; i++)
		out->ioapic_devid_of[i] = ACPI_NO_DEVID;
	if (len < IVRS_HDR_LEN) {
		ivrs_fail(out, "table of %u bytes, the header alone is %u",
			  len, IVRS_HDR_LEN);
		return;
	}
	for (uint32_t off = IVRS_HDR_LEN; off < len;) {
		const uint8_t *b = t + off;
		uint32_t blen, first;

		if (len - off < 4) {
			ivrs_fail(out, "block at %u cut short (%u bytes left)",
				  off, len - off);
			return;
		}
		blen = rd16(b + 2);
		if (blen < 4 || blen > len - off) {
			ivrs_fail(out, "block type 0x%x at %u has length %u (%u "
				  "bytes left)", b[0], off, blen, len - off);
			return;
		}
		if (b[0] == 0x10 || b[0] == 0x11 || b[0] == 0x40) {
			first = b[0] == 0x10 ? 24u : 40u;
			if (blen < first || blen < IVHD_MIN_LEN) {
				ivrs_fail(out, "IVHD type 0x%x at %u has length "
					  "%u, below %u", b[0], off, blen, first);
				return;
			}
			if (!ivhd_block(b, blen, first, off, ioapic_id, out))
				return;
		}
		off += blen;
	}
	if (!out->nivhds)
		ivrs_fail(out, "no IVHD block");
}

/* The IVRS table, parsed once the MADT is (acpi_init). */
static uint64_t ivrs_at;

static void parse_table(uint64_t addr)
{
	const struct sdt_header *h = (const void *)addr;
	uint32_t len;

	if (!addr)
		return;
	len = rd32(&h->length);
	if (len < sizeof(*h) || !checksum_ok(h, len)) {
		kprintf("acpi: bad table at 0x%lx\n", addr);
		if (!memcmp(h->sig, "DMAR", 4) && !acpi.dmar.present) {
			acpi.dmar.present = true;
			ksnprintf(acpi.dmar.error, sizeof(acpi.dmar.error),
				  "bad length %u or checksum", len);
		}
		return;
	}
	if (!memcmp(h->sig, "APIC", 4))
		parse_madt((const uint8_t *)h, len);
	else if (!memcmp(h->sig, "MCFG", 4))
		parse_mcfg((const uint8_t *)h, len);
	else if (!memcmp(h->sig, "FACP", 4))
		parse_fadt((const uint8_t *)h, len);
	else if (!memcmp(h->sig, "DMAR", 4) && !acpi.dmar.present)
		acpi_parse_dmar((const uint8_t *)h, len, &acpi.dmar);
	else if (!memcmp(h->sig, "IVRS", 4) && !acpi.ivrs.present)
		ivrs_at = addr;
}

void acpi_init(void)
{
	uint64_t bda = 0x40e;	/* BIOS data area: EBDA segment */
	uint64_t ebda;

	/* Hide the constant address from gcc's array-bounds analysis. */
	__asm__("" : "+r"(bda));
	ebda = (uint64_t)mmio_read16(bda) << 4;
	uint64_t rsdp = 0, root;
	bool xsdt;

	if (ebda)
		rsdp = rsdp_scan(ebda, 1024);
	if (!rsdp)
		rsdp = rsdp_scan(0xe0000, 0x20000);
	if (!rsdp)
		panic("acpi: no RSDP");
	acpi.revision = *(uint8_t *)(rsdp + 15);
	xsdt = acpi.revision >= 2 && rd64((void *)(rsdp + 24));
	root = xsdt ? rd64((void *)(rsdp + 24)) : rd32((void *)(rsdp + 16));

	const struct sdt_header *h = (const void *)root;
	uint32_t len = rd32(&h->length), step = xsdt ? 8 : 4;

	if (!checksum_ok(h, len))
		panic("acpi: bad %s checksum", xsdt ? "XSDT" : "RSDT");
	for (uint32_t off = sizeof(*h); off + step <= len; off += step) {
		const uint8_t *p = (const uint8_t *)h + off;

		parse_table(xsdt ? rd64(p) : rd32(p));
	}
	if (!acpi.ncpus)
		panic("acpi: no MADT or no enabled CPU in it");
	/* After the MADT: the IO-APIC's special entry names its MADT ID. */
	if (ivrs_at) {
		const struct sdt_header *iv = (const void *)ivrs_at;

		acpi_parse_ivrs((const uint8_t *)iv, rd32(&iv->length),
				acpi.nioapics ? acpi.ioapic[0].id : 0xff,
				&acpi.ivrs);
	}
}
