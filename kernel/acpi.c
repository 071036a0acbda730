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
static void parse_madt(const uint8_t *t, uint32_t len)
{
	acpi.lapic_addr = rd32(t + 36);
	acpi.pcat_compat = rd32(t + 40) & 1;
	for (uint32_t off = 44; off + 2 <= len;) {
		const uint8_t *e = t + off;
		uint8_t type = e[0], elen = e[1];

		if (elen < 2 || off + elen > len)
			break;
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

static void parse_table(uint64_t addr)
{
	const struct sdt_header *h = (const void *)addr;
	uint32_t len;

	if (!addr)
		return;
	len = rd32(&h->length);
	if (len < sizeof(*h) || !checksum_ok(h, len)) {
		kprintf("acpi: bad table at 0x%lx\n", addr);
		return;
	}
	if (!memcmp(h->sig, "APIC", 4))
		parse_madt((const uint8_t *)h, len);
	else if (!memcmp(h->sig, "MCFG", 4))
		parse_mcfg((const uint8_t *)h, len);
	else if (!memcmp(h->sig, "FACP", 4))
		parse_fadt((const uint8_t *)h, len);
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
}
