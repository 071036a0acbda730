/* SPDX-License-Identifier: MIT */
/*
 * test_acpi - what the x86 reference kernel's DMAR and IVRS parsers
 * (kernel/arch/x86_64/acpi.c, compiled hosted and unmodified, as
 * fuzz_acpi does) make of the seed tables in tests/fuzz/corpus-acpi:
 * QEMU q35's intel-iommu DMAR (one DRHD listing its scope), QEMU's
 * amd-iommu IVRS with bridge aliases (its DeviceIDs entry by entry), and
 * an IVRS of two IOMMUs with a later IVHD repeating the first (each
 * IOMMU its own ranges, the repeat ignored, the IO-APIC's DeviceID
 * found). Run by make test.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "../../kernel/arch/x86_64/acpi.c"

void kprintf(const char *fmt, ...)
{
	(void)fmt;
}

void panic(const char *fmt, ...)
{
	(void)fmt;
	abort();
}

/* A seed table, read whole; its length in @len. */
static uint8_t *seed(const char *name, uint32_t *len)
{
	char path[256];
	uint8_t *t = malloc(1u << 16);
	FILE *f;

	snprintf(path, sizeof(path), "tests/fuzz/corpus-acpi/%s", name);
	f = fopen(path, "rb");
	assert_non_null(f);
	assert_non_null(t);
	*len = (uint32_t)fread(t, 1, 1u << 16, f);
	fclose(f);
	assert_true(*len >= 48);
	return t;
}

/* QEMU 7.2 q35 + intel-iommu: one DRHD of segment 0, its scope listed
 * (the root bus's functions and bridges), no INCLUDE_PCI_ALL. */
static void test_dmar_q35(void **state)
{
	uint32_t len;
	uint8_t *t = seed("dmar-q35-intremap", &len);
	static struct acpi_dmar d;

	(void)state;
	acpi_parse_dmar(t, len, &d);
	assert_true(d.valid);
	assert_true(d.intr_remap);
	assert_int_equal(d.ndrhds, 1);
	assert_int_equal(d.drhd[0].base, 0xfed90000);
	assert_int_equal(d.drhd[0].segment, 0);
	free(t);
}

/* QEMU's amd-iommu with bridges: entries listed one by one, not "all";
 * every kept range forwards; the bridge's alias recorded. */
static void test_ivrs_q35_aliases(void **state)
{
	uint32_t len;
	uint8_t *t = seed("ivrs-q35-bridge-aliases", &len);
	static struct acpi_ivrs v;

	(void)state;
	acpi_parse_ivrs(t, len, 0, &v);
	assert_true(v.valid);
	assert_int_equal(v.niommus, 1);
	assert_int_equal(v.iommu[0].base, v.base);
	assert_int_equal(v.base, 0xfed80000);
	assert_true(v.naliases >= 1);
	for (uint32_t i = 0; i < v.iommu[0].ndevs; i++)
		assert_true(v.iommu[0].devs[i].first <=
			    v.iommu[0].devs[i].last);
	free(t);
}

/*
 * Two IOMMUs (0xfed80000: DeviceIDs 0x0000-0x00ff and the IO-APIC's
 * 0x00a0; 0xfed84000: 0x1000, 0x1100-0x11ff, an alias range
 * 0x1200-0x12ff sending as 0x1200) and a type 0x11 IVHD repeating the
 * first, which adds nothing.
 */
static void test_ivrs_two_iommus(void **state)
{
	uint32_t len;
	uint8_t *t = seed("ivrs-two-iommus", &len);
	static struct acpi_ivrs v;
	const struct acpi_ivrs_iommu *a = &v.iommu[0], *b = &v.iommu[1];

	(void)state;
	acpi_parse_ivrs(t, len, 0, &v);
	assert_true(v.valid);
	assert_int_equal(v.nivhds, 3);
	assert_int_equal(v.niommus, 2);
	assert_int_equal(v.base, 0xfed80000);
	assert_int_equal(v.ioapic_devid, 0x00a0);
	assert_int_equal(a->base, 0xfed80000);
	assert_false(a->all);
	assert_int_equal(a->ndevs, 2);
	assert_int_equal(a->devs[0].first, 0x0000);
	assert_int_equal(a->devs[0].last, 0x00ff);
	assert_int_equal(a->devs[1].first, 0x00a0);
	assert_int_equal(b->base, 0xfed84000);
	assert_int_equal(b->devid, 0x1010);
	assert_int_equal(b->ndevs, 4);
	assert_int_equal(b->devs[0].first, 0x1000);
	assert_int_equal(b->devs[0].last, 0x1000);
	assert_int_equal(b->devs[1].first, 0x1100);
	assert_int_equal(b->devs[1].last, 0x11ff);
	/* The alias range: its alias ID, then the run itself. */
	assert_int_equal(b->devs[2].first, 0x1200);
	assert_int_equal(b->devs[2].last, 0x1200);
	assert_int_equal(b->devs[3].first, 0x1200);
	assert_int_equal(b->devs[3].last, 0x12ff);
	assert_int_equal(v.naliases, 1);
	free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dmar_q35),
		cmocka_unit_test(test_ivrs_q35_aliases),
		cmocka_unit_test(test_ivrs_two_iommus),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
