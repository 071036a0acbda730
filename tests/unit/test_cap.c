/* SPDX-License-Identifier: MIT */
/*
 * Capability walks over hostile configuration space, and the x86 message
 * format: the decoding code shared by the library, the simulator and
 * `umsi inspect`.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <umsi/msg.h>
#include <umsi/x86.h>
#include <umsi/pci_regs.h>
#include <umsi/pcicap.h>
#include <umsi/host.h>
#include <umsi/format.h>

static uint8_t cfg[4096];

static int rd(void *ctx, uint16_t off, uint8_t width, uint32_t *val)
{
	(void)ctx;
	*val = 0;
	memcpy(val, cfg + off, width);
	return 0;
}

static struct umsi_cfg_view view(uint16_t size, bool strict)
{
	struct umsi_cfg_view v = { rd, NULL, size, strict };
	return v;
}

/* A device with caps at 0x40 (PM) -> 0x50 (MSI) -> 0x70 (MSI-X). */
static void device(void)
{
	memset(cfg, 0, sizeof(cfg));
	cfg[0] = 0x86; cfg[1] = 0x80;
	cfg[UMSI_PCI_STATUS] = UMSI_PCI_STATUS_CAP_LIST;
	cfg[UMSI_PCI_CAP_PTR] = 0x40;
	cfg[0x40] = UMSI_PCI_CAP_ID_PM;   cfg[0x41] = 0x50;
	cfg[0x50] = UMSI_PCI_CAP_ID_MSI;  cfg[0x51] = 0x70;
	cfg[0x52] = 0x80 | 0x06;          /* 64-bit, 8 messages capable */
	cfg[0x70] = UMSI_PCI_CAP_ID_MSIX; cfg[0x71] = 0x00;
	cfg[0x72] = 64; cfg[0x73] = 0x80; /* 65 entries, enabled */
	cfg[0x74] = 0x03;                 /* table in BAR 3 at 0 */
	cfg[0x78] = 0x03; cfg[0x79] = 0x20; /* PBA in BAR 3 at 0x2000 */
}

static void finds_each_capability_in_a_well_formed_list(void **s)
{
	struct umsi_cfg_view v = view(256, true);
	struct umsi_msi_cap msi;
	struct umsi_msix_cap msix;
	uint16_t off;

	(void)s;
	device();
	assert_int_equal(umsi_pci_find_cap(&v, UMSI_PCI_CAP_ID_MSI, 0, &off), 0);
	assert_int_equal(off, 0x50);
	assert_int_equal(umsi_pci_read_msi_cap(&v, off, &msi), 0);
	assert_true(msi.addr64);
	assert_int_equal(msi.mmc, 8);
	assert_int_equal(umsi_pci_find_cap(&v, UMSI_PCI_CAP_ID_MSIX, 0, &off), 0);
	assert_int_equal(umsi_pci_read_msix_cap(&v, off, &msix), 0);
	assert_int_equal(msix.table_size, 65);
	assert_true(msix.enabled);
	assert_int_equal(msix.pba_bir, 3);
	assert_int_equal(msix.pba_offset, 0x2000);
	assert_int_equal(umsi_pci_find_cap(&v, UMSI_PCI_CAP_ID_EXP, 0, &off),
			 -UMSI_ENOENT);
}

static void a_looping_list_is_cut_off_with_eloop(void **s)
{
	struct umsi_cfg_view v = view(256, true);
	uint16_t off;

	(void)s;
	device();
	cfg[0x71] = 0x40;               /* MSI-X points back to PM */
	assert_int_equal(umsi_pci_find_cap(&v, UMSI_PCI_CAP_ID_EXP, 0, &off),
			 -UMSI_ELOOP);
}

static void pointers_into_the_header_or_past_the_end_are_rejected(void **s)
{
	struct umsi_cfg_view v = view(256, true);
	uint16_t off;

	(void)s;
	device();
	cfg[0x41] = 0x10;
	assert_int_equal(umsi_pci_find_cap(&v, UMSI_PCI_CAP_ID_MSI, 0, &off),
			 -UMSI_ERANGE);
	device();
	cfg[UMSI_PCI_CAP_PTR] = 0xfe & ~3;
	cfg[0xfc] = 0x01; cfg[0xfd] = 0x00;
	assert_int_equal(umsi_pci_find_cap(&v, UMSI_PCI_CAP_ID_PM, 0, &off), 0);
	/* In a 64-byte view (unprivileged sysfs) 0x40 is already past it. */
	device();
	v = view(64, true);
	assert_int_equal(umsi_pci_find_cap(&v, UMSI_PCI_CAP_ID_PM, 0, &off),
			 -UMSI_ERANGE);
}

static void misaligned_pointers_fail_strict_and_are_masked_lenient(void **s)
{
	struct umsi_cfg_view strict = view(256, true), lenient = view(256, false);
	uint16_t off;

	(void)s;
	device();
	cfg[0x41] = 0x52;               /* bits 1:0 set */
	assert_int_equal(umsi_pci_find_cap(&strict, UMSI_PCI_CAP_ID_MSI, 0,
					   &off), -UMSI_EINVAL);
	assert_int_equal(umsi_pci_find_cap(&lenient, UMSI_PCI_CAP_ID_MSI, 0,
					   &off), 0);
	assert_int_equal(off, 0x50);
}

static void a_removed_device_reads_all_ones_and_is_gone(void **s)
{
	struct umsi_cfg_view v = view(4096, true);
	uint16_t off;

	(void)s;
	memset(cfg, 0xff, sizeof(cfg));
	assert_int_equal(umsi_pci_find_cap(&v, UMSI_PCI_CAP_ID_MSI, 0, &off),
			 -UMSI_ENODEV);
	assert_int_equal(umsi_pci_find_ext_cap(&v, 0x0001, 0, &off),
			 -UMSI_ENODEV);
}

static void an_undefined_header_type_has_no_capability_list(void **s)
{
	struct umsi_cfg_view v = view(256, true);
	uint16_t off;

	(void)s;
	device();
	cfg[UMSI_PCI_HEADER_TYPE] = 0x05;
	assert_int_equal(umsi_pci_find_cap(&v, UMSI_PCI_CAP_ID_MSI, 0, &off),
			 -UMSI_ERANGE);
}

static void extended_capabilities_are_found_and_loops_cut(void **s)
{
	struct umsi_cfg_view v = view(4096, true);
	uint16_t off;
	uint32_t h;

	(void)s;
	device();
	h = 0x0001 | (1u << 16) | (0x140u << 20);   /* AER -> 0x140 */
	memcpy(cfg + 0x100, &h, 4);
	h = 0x000b | (1u << 16) | (0x100u << 20);   /* VSEC -> back to 0x100 */
	memcpy(cfg + 0x140, &h, 4);
	assert_int_equal(umsi_pci_find_ext_cap(&v, 0x000b, 0, &off), 0);
	assert_int_equal(off, 0x140);
	assert_int_equal(umsi_pci_find_ext_cap(&v, 0x0010, 0, &off),
			 -UMSI_ELOOP);
	h = 0x0001 | (1u << 16) | (0x080u << 20);   /* into the standard space */
	memcpy(cfg + 0x100, &h, 4);
	assert_int_equal(umsi_pci_find_ext_cap(&v, 0x000b, 0, &off),
			 -UMSI_ERANGE);
}

static void messages_decode_as_the_sdm_says(void **s)
{
	struct umsi_msg m = { 0xfee01000, 0x4041 };
	struct umsi_x86_msi d;

	(void)s;
	umsi_x86_msg_decode(&m, false, &d);
	assert_true(d.valid);
	assert_int_equal(d.dest_id, 1);
	assert_int_equal(d.vector, 0x41);
	assert_false(d.logical);
	assert_false(d.level);
	/* Extended destination ID: bits 11:5 are destination bits 14:8. */
	assert_int_equal(umsi_x86_msg_compose(300, 0x33, UMSI_PLAT_EXT_DEST_ID,
					      &m), 0);
	umsi_x86_msg_decode(&m, true, &d);
	assert_int_equal(d.dest_id, 300);
	umsi_x86_msg_decode(&m, false, &d);
	assert_int_equal(d.dest_id, 300 & 0xff);
	/* Remappable format: a handle, not a destination. */
	m.address = 0xfee00000u | (0x1234u << 5) | (1u << 4) | (1u << 3);
	m.data = 7;
	umsi_x86_msg_decode(&m, false, &d);
	assert_true(d.remapped);
	assert_int_equal(d.handle, 0x1234);
	assert_true(d.shv);
	assert_int_equal(d.subhandle, 7);
	/* Logical mode, level trigger, lowest priority. */
	m.address = 0xfee0300cu;        /* dest 3, RH, DM logical */
	m.data = 0x8000 | (1u << 8) | 0x51;
	umsi_x86_msg_decode(&m, false, &d);
	assert_true(d.logical && d.redir_hint && d.level);
	assert_int_equal(d.delivery, UMSI_X86_DM_LOWPRI);
	/* Outside the interrupt window. */
	m.address = 0xfed00000u;
	umsi_x86_msg_decode(&m, false, &d);
	assert_false(d.valid);
}

static void only_nameable_apic_ids_are_targets(void **s)
{
	struct umsi_msg m;

	(void)s;
	assert_true(umsi_x86_dest_reachable(254, 0));
	assert_false(umsi_x86_dest_reachable(255, 0));          /* broadcast */
	assert_false(umsi_x86_dest_reachable(255, UMSI_PLAT_EXT_DEST_ID));
	assert_true(umsi_x86_dest_reachable(255, UMSI_PLAT_EXT_DEST_ID |
					    UMSI_PLAT_X2APIC));
	assert_false(umsi_x86_dest_reachable(300, 0));
	assert_true(umsi_x86_dest_reachable(32767, UMSI_PLAT_EXT_DEST_ID));
	assert_false(umsi_x86_dest_reachable(32768, UMSI_PLAT_EXT_DEST_ID));
	assert_true(umsi_x86_dest_reachable(100000, UMSI_PLAT_IRQ_REMAP));
	/* The x2APIC broadcast ID is never one CPU, remapped or not. */
	assert_false(umsi_x86_dest_reachable(0xffffffffu, UMSI_PLAT_IRQ_REMAP |
					     UMSI_PLAT_X2APIC));
	assert_int_equal(umsi_x86_msg_compose(300, 0x40, 0, &m), -UMSI_ERANGE);
	assert_int_equal(umsi_x86_msg_compose(1, 0x0f, 0, &m), -UMSI_EINVAL);
}

static size_t fmt(char *buf, size_t len, const char *f, ...)
{
	va_list ap;
	size_t n;

	va_start(ap, f);
	n = umsi_vsnprintf(buf, len, f, ap);
	va_end(ap);
	return n;
}

static void the_freestanding_printf_formats_like_libc(void **s)
{
	char b[64];

	(void)s;
	fmt(b, sizeof(b), "%d|%5d|%-5d|%05d|%u", -42, 7, 7, -42, 3000000000u);
	assert_string_equal(b, "-42|    7|7    |-0042|3000000000");
	fmt(b, sizeof(b), "%x|%X|%o|%08llx|%zu|%hu", 0xbeefu, 0xbeefu, 8u,
	    0x1234ull, (size_t)99, (unsigned short)5);
	assert_string_equal(b, "beef|BEEF|10|00001234|99|5");
	fmt(b, sizeof(b), "%s|%-4s|%4s|%.2s|%c|%%|%s", "ab", "ab", "ab", "abc",
	    'z', (char *)NULL);
	assert_string_equal(b, "ab|ab  |  ab|ab|z|%|(null)");
	fmt(b, sizeof(b), "%*d|%p|%12p", 4, 1, (void *)0x10, (void *)0x10);
	assert_string_equal(b, "   1|0x10|        0x10");
	/* Truncation keeps the NUL and reports the full length. */
	assert_int_equal(fmt(b, 4, "%s", "abcdef"), 6);
	assert_string_equal(b, "abc");
	assert_int_equal(fmt(NULL, 0, "%d", 12345), 5);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(finds_each_capability_in_a_well_formed_list),
		cmocka_unit_test(a_looping_list_is_cut_off_with_eloop),
		cmocka_unit_test(pointers_into_the_header_or_past_the_end_are_rejected),
		cmocka_unit_test(misaligned_pointers_fail_strict_and_are_masked_lenient),
		cmocka_unit_test(a_removed_device_reads_all_ones_and_is_gone),
		cmocka_unit_test(an_undefined_header_type_has_no_capability_list),
		cmocka_unit_test(extended_capabilities_are_found_and_loops_cut),
		cmocka_unit_test(messages_decode_as_the_sdm_says),
		cmocka_unit_test(only_nameable_apic_ids_are_targets),
		cmocka_unit_test(the_freestanding_printf_formats_like_libc),
	};

	return cmocka_run_group_tests_name("capabilities and messages", tests,
					   NULL, NULL);
}
