/* SPDX-License-Identifier: MIT */
/*
 * Boot-parameter policy and quirks: what each command line does to the
 * functions added after it, and what a malformed one does (nothing).
 */
#include "test_pci_fixture.h"
#include <umsi/internal/pci.h>

#define DEV UMSI_BDF(0, 0, 5, 0)
#define BRIDGE UMSI_BDF(0, 0, 1, 0)
#define CHILD UMSI_BDF(0, 2, 0, 0)

/* msi_desc() is 0x8086:0x10d3: "0x10d38086" in the seed's notation. */
#define ID "0x10d38086"

/* The reason a function added under @cmdline (on @plat) gets, or NULL. */
static const char *reason_for(const char *cmdline, uint32_t plat,
			      int *parse_ret, struct machine **keep)
{
	struct machine *m = machine_new(2, plat, NULL);
	struct umsi_sim_dev_desc d = msi_desc(4, true, true);
	struct umsi_pci_dev *dev;
	struct umsi_pci_info pi;
	static char buf[64];
	int r = 0;

	if (cmdline)
		r = umsi_policy_parse(m->sys, cmdline);
	if (parse_ret)
		*parse_ret = r;
	dev = plug(m, DEV, &d, 0);
	umsi_pci_get_info(dev, &pi);
	snprintf(buf, sizeof(buf), "%s", pi.reason ? pi.reason : "");
	if (keep) {
		*keep = m;
	} else {
		umsi_pci_remove(m->sys, dev);
		machine_free(m);
	}
	return buf[0] ? buf : NULL;
}

static void assert_reason(const char *cmdline, const char *want)
{
	const char *got = reason_for(cmdline, 0, NULL, NULL);

	if (!want)
		assert_null(got);
	else
		assert_string_equal(got, want);
}

static void test_policy_global_switches(void **state)
{
	(void)state;
	assert_reason(NULL, NULL);
	assert_reason("", NULL);
	assert_reason("quiet root=/dev/sda1", NULL);
	assert_reason("pci_nomsi", "policy:pci_nomsi");
	assert_reason("ro pci=nomsi", "policy:pci_nomsi");
	assert_reason("pci=noaer,nomsi,realloc", "policy:pci_nomsi");
	assert_reason("pci=noaer", NULL);
	assert_null(reason_for(NULL, 0, NULL, NULL));
	assert_string_equal(reason_for(NULL, UMSI_PLAT_NO_MSI, NULL, NULL),
			    "policy:platform");
}

static void test_policy_device_lists(void **state)
{
	(void)state;
	assert_reason("device_nomsi=" ID, "policy:device_nomsi");
	assert_reason("device_nomsi=0x12345678," ID, "policy:device_nomsi");
	assert_reason("device_nomsi=0x12345678", NULL);
	assert_reason("device_nomsi=0X10D38086", "policy:device_nomsi");
	/* device_msi= alone does nothing outside specific mode. */
	assert_reason("device_msi=0x12345678", NULL);
	/* Specific mode: only listed devices; device_nomsi= is ignored. */
	assert_reason("pci_msi=specific", "policy:not_listed");
	assert_reason("pci_msi=specific device_msi=" ID, NULL);
	assert_reason("device_msi=" ID " pci_msi=specific", NULL);
	assert_reason("pci_msi=specific device_msi=" ID " device_nomsi=" ID,
		      NULL);
	assert_reason("pci_msi=specific pci_msi=all device_nomsi=" ID,
		      "policy:device_nomsi");
	assert_reason("pci_msi=specific device_msi=" ID " pci_nomsi",
		      "policy:pci_nomsi");
}

/* A malformed parameter is reported and ignored as a whole. */
static void test_policy_malformed_is_ignored_whole(void **state)
{
	static const char *bad[] = {
		"device_nomsi=",
		"device_nomsi",
		"device_nomsi=" ID ",",
		"device_nomsi=" ID ",,0x1",
		"device_nomsi=" ID ",0xzz",
		"device_nomsi=" ID ",12345678",
		"device_nomsi=" ID ",0x123456789",
		"device_nomsi=" ID ",0x",
		"pci=",
		"pci=nomsi,",
		"pci_nomsi=1",
		"pci_msi=some",
		"pci_msi",
	};
	struct machine *m;
	unsigned i;
	int r;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *got = reason_for(bad[i], 0, &r, &m);

		assert_int_equal(r, -UMSI_EINVAL);
		assert_null(got);
		assert_non_null(strstr(umsi_sim_log_text(m->sim),
				       "ignoring malformed"));
		umsi_pci_remove(m->sys, umsi_pci_find(m->sys, DEV));
		machine_free(m);
	}
	/* The rest of the line still applies. */
	assert_string_equal(reason_for("device_nomsi=0xq " "pci_nomsi", 0, &r,
				       NULL), "policy:pci_nomsi");
	assert_int_equal(r, -UMSI_EINVAL);
}

/* Lists hold 31 entries, as the seed's did; the 32nd spoils the word. */
static void test_policy_list_limit(void **state)
{
	char line[600];
	size_t n;
	int i, r;

	(void)state;
	n = (size_t)snprintf(line, sizeof(line), "device_nomsi=");
	for (i = 0; i < 30; i++)
		n += (size_t)snprintf(line + n, sizeof(line) - n, "0x%08x,",
				      0x1000 + i);
	snprintf(line + n, sizeof(line) - n, "%s", ID);
	assert_string_equal(reason_for(line, 0, &r, NULL),
			    "policy:device_nomsi");
	assert_int_equal(r, 0);
	snprintf(line + n, sizeof(line) - n, "0x00000001,%s", ID);
	assert_null(reason_for(line, 0, &r, NULL));
	assert_int_equal(r, -UMSI_EINVAL);
	/* Two words add up: 31 in all is the limit. */
	n = (size_t)snprintf(line, sizeof(line), "device_nomsi=");
	for (i = 0; i < 31; i++)
		n += (size_t)snprintf(line + n, sizeof(line) - n, "0x%08x%s",
				      0x1000 + i, i < 30 ? "," : "");
	snprintf(line + n, sizeof(line) - n, " device_nomsi=%s", ID);
	assert_null(reason_for(line, 0, &r, NULL));
	assert_int_equal(r, -UMSI_EINVAL);
}

/* The system's own command line (umsi_config.cmdline) is parsed too. */
static void test_policy_from_system_config(void **state)
{
	struct machine *m = machine_new(2, 0, "pci_nomsi");
	struct umsi_sim_dev_desc d = msi_desc(4, true, true);
	struct umsi_pci_dev *dev = plug(m, DEV, &d, 0);

	(void)state;
	assert_int_equal(umsi_pci_alloc_irq_vectors(dev, 1, 4, UMSI_PCI_IRQ_MSI |
						    UMSI_PCI_IRQ_MSIX),
			 -UMSI_EPERM);
	assert_false(msi_enabled(m, DEV));
	assert_int_equal(umsi_msi_get_pci_irq_vector(dev), -UMSI_EPERM);
	/* INTx is still there. */
	assert_int_equal(umsi_pci_alloc_irq_vectors(dev, 1, 4,
						    UMSI_PCI_IRQ_ALL_TYPES), 1);
	assert_int_equal(umsi_pci_mode(dev), UMSI_MODE_INTX);
	umsi_pci_remove(m->sys, dev);
	machine_free(m);
}

/* ---- quirks ---------------------------------------------------------------- */

static void test_quirk_table_and_matching(void **state)
{
	struct machine *m = machine_new(2, 0, NULL);
	const struct umsi_quirk *t;
	struct umsi_quirk q = { 0x8086, 0xffff, UMSI_QUIRK_NO_MSI, "intel_any" };
	struct umsi_sim_dev_desc d = msi_desc(4, true, true);
	struct umsi_pci_dev *dev;
	struct umsi_pci_info pi;
	size_t n, i;
	uint32_t all = 0;

	(void)state;
	t = umsi_quirk_table(&n);
	assert_true(n > 0);
	for (i = 0; i < n; i++) {
		assert_non_null(t[i].name);
		all |= t[i].flags;
	}
	assert_int_equal(all & (UMSI_QUIRK_NO_MSI | UMSI_QUIRK_NO_MSI_BELOW |
				UMSI_QUIRK_NO_64BIT_MSI |
				UMSI_QUIRK_INTX_DISABLE_BUG),
			 UMSI_QUIRK_NO_MSI | UMSI_QUIRK_NO_MSI_BELOW |
			 UMSI_QUIRK_NO_64BIT_MSI | UMSI_QUIRK_INTX_DISABLE_BUG);
	/* 0xffff matches any device of the vendor. */
	assert_int_equal(umsi_quirk_add(m->sys, &q), 0);
	dev = plug(m, DEV, &d, 0);
	umsi_pci_get_info(dev, &pi);
	assert_string_equal(pi.reason, "quirk:intel_any");
	assert_int_equal(umsi_pci_alloc_irq_vectors(dev, 1, 1, UMSI_PCI_IRQ_MSI),
			 -UMSI_EPERM);
	umsi_pci_remove(m->sys, dev);
	machine_free(m);
}

/* A bridge that does not forward MSI: nothing below it gets MSI. */
static void test_quirk_no_msi_below_bridge(void **state)
{
	struct machine *m = machine_new(2, 0, NULL);
	struct umsi_sim_dev_desc b, d = msi_desc(4, true, true);
	struct umsi_pci_dev *br, *child, *peer;
	struct umsi_pci_info pi;

	(void)state;
	memset(&b, 0, sizeof(b));
	b.vendor = 0x1022;
	b.device = 0x7450;                      /* AMD-8131, built in */
	b.header_type = 1;
	b.secondary_bus = 2;
	b.subordinate_bus = 2;
	br = plug(m, BRIDGE, &b, 0);
	assert_int_equal(umsi_sim_add_device(m->sim, CHILD, &d), 0);
	assert_int_equal(umsi_pci_add(m->sys, CHILD, br, 0, &child), 0);
	umsi_pci_get_info(child, &pi);
	assert_string_equal(pi.reason, "quirk:amd8131");
	peer = plug(m, DEV, &d, 0);
	umsi_pci_get_info(peer, &pi);
	assert_null(pi.reason);
	umsi_pci_remove(m->sys, br);            /* child keeps the rule */
	assert_int_equal(umsi_pci_alloc_irq_vectors(child, 1, 1,
						    UMSI_PCI_IRQ_MSI), -UMSI_EPERM);
	umsi_pci_remove(m->sys, child);
	umsi_pci_remove(m->sys, peer);
	machine_free(m);
}

/* INTx-disable bug: MSI works, INTx Disable is left clear. */
static void test_quirk_intx_disable_bug(void **state)
{
	struct machine *m = machine_new(2, 0, NULL);
	struct umsi_sim_dev_desc d = msi_desc(1, true, false);
	struct umsi_pci_dev *dev;
	uint16_t cmd;

	(void)state;
	d.vendor = 0x14e4;
	d.device = 0x1668;                      /* Tigon3 5714, built in */
	dev = plug(m, DEV, &d, 0);
	assert_int_equal(umsi_pci_alloc_irq_vectors(dev, 1, 1, UMSI_PCI_IRQ_MSI),
			 1);
	cmd = cfg16(m, DEV, UMSI_PCI_COMMAND);
	assert_true(cmd & UMSI_PCI_CMD_MASTER);
	assert_false(cmd & UMSI_PCI_CMD_INTX_DISABLE);
	umsi_pci_remove(m->sys, dev);
	machine_free(m);
}

/* Broken mask bits: driven as MSI without them (no mask register use). */
static void test_quirk_broken_mask_bits(void **state)
{
	struct machine *m = machine_new(2, 0, NULL);
	struct umsi_quirk q = { 0x8086, 0x10d3, UMSI_QUIRK_BROKEN_MASK,
				"broken_mask" };
	struct umsi_sim_dev_desc d = msi_desc(2, true, true);
	struct umsi_pci_dev *dev;
	uint32_t irq;

	(void)state;
	assert_int_equal(umsi_quirk_add(m->sys, &q), 0);
	dev = plug(m, DEV, &d, 0);
	umsi_sim_stats_reset(m->sim);
	assert_int_equal(umsi_pci_alloc_irq_vectors(dev, 2, 2, UMSI_PCI_IRQ_MSI),
			 2);
	/* Address low/high, data, Command, Message Control: no mask write. */
	assert_int_equal(dstats(m, DEV).cfg_writes, 5);
	irq = (uint32_t)umsi_pci_irq_vector(dev, 0);
	assert_int_equal(umsi_request_irq(m->sys, irq, fx_handler, 0, "t", m),
			 0);
	umsi_sim_stats_reset(m->sim);
	assert_int_equal(umsi_irq_mask(m->sys, irq), 0);
	assert_int_equal(dstats(m, DEV).cfg_writes, 0);
	assert_int_equal(umsi_pci_irq_pending(dev, 0), -UMSI_ENOTSUP);
	umsi_pci_remove(m->sys, dev);
	machine_free(m);
}

/* No 64-bit address: the flag is found and x86 messages stay below 4G. */
static void test_quirk_no_64bit_msi(void **state)
{
	struct machine *m = machine_new(2, 0, NULL);
	struct umsi_sim_dev_desc d = msi_desc(1, true, true);
	struct umsi_pci_dev *dev;
	uint16_t cap;

	(void)state;
	d.vendor = 0x1002;
	d.device = 0xaa00;
	assert_int_equal(umsi_quirk_lookup(m->sys, 0x1002, 0xaa00) &
			 UMSI_QUIRK_NO_64BIT_MSI, UMSI_QUIRK_NO_64BIT_MSI);
	dev = plug(m, DEV, &d, 0);
	assert_int_equal(umsi_pci_alloc_irq_vectors(dev, 1, 1, UMSI_PCI_IRQ_MSI),
			 1);
	cap = find_cap(m, DEV, UMSI_PCI_CAP_ID_MSI);
	assert_int_equal(umsi_sim_cfg_read(m->sim, DEV, cap + 8, 4), 0);
	umsi_pci_remove(m->sys, dev);
	machine_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_policy_global_switches),
		cmocka_unit_test(test_policy_device_lists),
		cmocka_unit_test(test_policy_malformed_is_ignored_whole),
		cmocka_unit_test(test_policy_list_limit),
		cmocka_unit_test(test_policy_from_system_config),
		cmocka_unit_test(test_quirk_table_and_matching),
		cmocka_unit_test(test_quirk_no_msi_below_bridge),
		cmocka_unit_test(test_quirk_intx_disable_bug),
		cmocka_unit_test(test_quirk_broken_mask_bits),
		cmocka_unit_test(test_quirk_no_64bit_msi),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
