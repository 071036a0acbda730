/* SPDX-License-Identifier: MIT */
/*
 * fuzz_acpi - the x86 reference kernel's ACPI table parsers (kernel/arch/x86_64/acpi.c:
 * MADT, MCFG, FADT, the VT-d DMAR and the AMD-Vi IVRS), compiled hosted and unmodified, on
 * hostile tables: ACPI tables are firmware data. The input is one table;
 * its signature picks the parser, or, when it names none of them, the
 * first byte does (the signature is then overwritten), so every parser
 * sees every shape. The header's length field is set to the input's size
 * and the checksum is not checked, so the parsers, not the checksum, are
 * what the fuzzer meets. The sanitizers report any read outside the
 * table; the DMAR and IVRS parsers' results must hold together.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../kernel/arch/x86_64/acpi.c"

#define FUZZ_CHECK(c) do { if (!(c)) __builtin_trap(); } while (0)

/*
 * The kernel services acpi.c uses, hosted: its bounded printf is the
 * kernel's own (kernel/common/lib/printf.c over the library's formatter, linked
 * in); the console and panic are not.
 */
void kprintf(const char *fmt, ...)
{
	(void)fmt;
}

void panic(const char *fmt, ...)
{
	(void)fmt;
	abort();
}

static void check_dmar(const struct acpi_dmar *d)
{
	uint32_t i;

	FUZZ_CHECK(d->present);
	if (!d->valid) {
		FUZZ_CHECK(memchr(d->error, 0, sizeof(d->error)) != NULL);
		return;
	}
	FUZZ_CHECK(d->ndrhds <= ACPI_MAX_DRHDS);
	for (i = 0; i < d->ndrhds; i++) {
		const struct acpi_drhd *h = &d->drhd[i];
		uint32_t k, n = h->nscopes < ACPI_MAX_SCOPES ? h->nscopes :
				ACPI_MAX_SCOPES;

		FUZZ_CHECK(h->base && !(h->base & 0xfff));
		for (k = 0; k < n; k++)
			FUZZ_CHECK(h->scope[k].npath <= ACPI_MAX_PATH);
	}
}

static void check_ivrs(const struct acpi_ivrs *v, uint8_t first_id)
{
	FUZZ_CHECK(v->present);
	if (!v->valid) {
		FUZZ_CHECK(memchr(v->error, 0, sizeof(v->error)) != NULL);
		return;
	}
	FUZZ_CHECK(v->nivhds >= 1);
	FUZZ_CHECK(v->base && !(v->base % 0x4000));
	FUZZ_CHECK(v->ioapic_devid == ACPI_NO_DEVID || v->ioapic_devid <= 0xffff);
	for (uint32_t i = 0; i < v->naliases && i < ACPI_MAX_ALIASES; i++)
		FUZZ_CHECK(v->alias[i].first <= v->alias[i].last);
	/* Every IOMMU kept: aligned, its own base, the first the one
	 * above; every DeviceID range kept runs forwards. */
	FUZZ_CHECK(v->niommus >= 1 && v->niommus <= v->nivhds);
	FUZZ_CHECK(v->iommu[0].base == v->base);
	for (uint32_t k = 0; k < v->niommus && k < ACPI_MAX_IOMMUS; k++) {
		const struct acpi_ivrs_iommu *io = &v->iommu[k];

		FUZZ_CHECK(io->base && !(io->base % 0x4000));
		for (uint32_t j = 0; j < k; j++)
			FUZZ_CHECK(v->iommu[j].base != io->base);
		for (uint32_t i = 0; i < io->ndevs && i < ACPI_MAX_DEVRANGES;
		     i++)
			FUZZ_CHECK(io->devs[i].first <= io->devs[i].last);
	}
	/* Each IO-APIC ID's DeviceID, the first MADT one's among them. */
	for (uint32_t i = 0; i < 256; i++)
		FUZZ_CHECK(v->ioapic_devid_of[i] == ACPI_NO_DEVID ||
			   v->ioapic_devid_of[i] <= 0xffff);
	FUZZ_CHECK(v->ioapic_devid == v->ioapic_devid_of[first_id]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char sigs[5][4] = { "APIC", "MCFG", "FACP", "DMAR",
					 "IVRS" };
	uint8_t *t;
	uint32_t len = (uint32_t)size;
	int kind = -1, k;

	if (size < sizeof(struct sdt_header) || size > (1u << 20))
		return 0;
	/* A copy of exactly @size bytes: ASan sees every byte past it. */
	t = malloc(size);
	if (!t)
		return 0;
	memcpy(t, data, size);
	for (k = 0; k < 5; k++)
		if (!memcmp(t, sigs[k], 4))
			kind = k;
	if (kind < 0) {
		kind = t[0] % 5;
		memcpy(t, sigs[kind], 4);
	}
	memcpy(t + 4, &len, 4);
	memset(&acpi, 0, sizeof(acpi));
	switch (kind) {
	case 0:
		parse_madt(t, len);
		FUZZ_CHECK(acpi.nioapics <= ACPI_MAX_IOAPICS);
		break;
	case 1:
		parse_mcfg(t, len);
		break;
	case 2:
		parse_fadt(t, len);
		break;
	case 3:
		acpi_parse_dmar(t, len, &acpi.dmar);
		check_dmar(&acpi.dmar);
		break;
	default:
		acpi_parse_ivrs(t, len, t[len - 1], &acpi.ivrs);
		check_ivrs(&acpi.ivrs, t[len - 1]);
		break;
	}
	free(t);
	return 0;
}
