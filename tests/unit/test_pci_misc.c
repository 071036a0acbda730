/* SPDX-License-Identifier: MIT */
/*
 * INTx fallback, the seed's API, MSI-X table validation, dynamic and
 * sparse entries, affinity spreading, Bus Master, interrupt remapping and
 * removal on the simulator.
 */
#include "test_pci_fixture.h"

#define NVME UMSI_BDF(0, 0, 4, 0)
#define DEV5 UMSI_BDF(0, 0, 5, 0)
#define DEV6 UMSI_BDF(0, 0, 6, 0)

/* Default sim routing on bus 0: GSI 16 + (D + P - 1) % 4. */
static uint32_t gsi_of(unsigned dev, unsigned pin)
{
	return 16 + (dev + pin - 1) % 4;
}

/* ---- INTx ------------------------------------------------------------------ */

/* A level-triggered handler must quiet its device, or the line re-fires. */
static unsigned level_calls, level_quiet_at;

static int level_handler(uint32_t irq, void *dev_id)
{
	struct machine *m = dev_id;

	if (++level_calls >= level_quiet_at)
		umsi_sim_intx_set(m->sim, DEV6, false);
	return fx_handler(irq, m);
}

/*
 * A level line still asserted when its handler returns is taken again,
 * on the IRQ's CPU, until the handler quiets the device: never lost,
 * never taken while in service (the IO-APIC's Remote IRR ended by the
 * EOI, AMD-Vi's directed EOI, an Arm SPI active until its dispatch
 * returns, a RISC-V APLIC source made pending again by the host after the
 * dispatch while its input is high: twice here, then not at all).
 */
static void test_intx_level_refires_until_quiet(void **state)
{
	struct machine *m;
	struct umsi_sim_dev_desc d = intx_desc(1);
	struct umsi_pci_dev *dev;
	struct umsi_irq_info info;
	uint32_t gsi = gsi_of(6, 1);
	uint64_t re0;

	(void)state;
	m = machine_new(4, 0, NULL);
	dev = plug(m, DEV6, &d, 0);
	assert_int_equal(umsi_pci_alloc_irq_vectors(dev, 1, 1,
						    UMSI_PCI_IRQ_INTX), 1);
	level_calls = 0;
	level_quiet_at = 3;
	assert_int_equal(umsi_request_irq(m->sys, gsi, level_handler,
					  UMSI_IRQF_SHARED, "t", m), 0);
	assert_int_equal(umsi_irq_get_info(m->sys, gsi, &info), 0);
	re0 = sstats(m).aplic_retriggers;
	assert_int_equal(umsi_sim_intx_set(m->sim, DEV6, true), 0);
	umsi_sim_quiesce(m->sim);
	assert_int_equal(m->handled[gsi], 3);
	assert_int_equal(m->last_cpu[gsi], info.cpu);
	assert_int_equal(sstats(m).aplic_retriggers - re0, fx_imsic() ? 2 : 0);
	/* Quiet now: one assertion, one call. */
	level_calls = 0;
	level_quiet_at = 1;
	assert_int_equal(umsi_sim_intx_set(m->sim, DEV6, true), 0);
	umsi_sim_quiesce(m->sim);
	assert_int_equal(m->handled[gsi], 4);
	assert_int_equal(sstats(m).aplic_retriggers - re0, fx_imsic() ? 2 : 0);
	assert_int_equal(umsi_free_irq(m->sys, gsi, m), 0);
	umsi_pci_remove(m->sys, dev);
	machine_free(m);
}

/*
 * No MSI capability: the function gets its INTx line, whose IRQ number is
 * the GSI; the IO-APIC entry is level, masked until a handler comes.
 */
static void test_intx_fallback_irq_is_the_gsi(void **state)
{
	struct machine *m = machine_new(2, 0, NULL);
	struct umsi_sim_dev_desc d = intx_desc(1);
	struct umsi_pci_dev *dev = plug(m, DEV6, &d, 0);
	struct umsi_sim_rte rte;
	uint32_t gsi = gsi_of(6, 1);

	(void)state;
	/* INTx is one IRQ: not when at least 2 are needed. */
	assert_int_equal(umsi_pci_alloc_irq_vectors(dev, 2, 4,
						    UMSI_PCI_IRQ_ALL_TYPES),
			 -UMSI_ENOENT);
	assert_int_equal(umsi_pci_alloc_irq_vectors(dev, 1, 4,
						    UMSI_PCI_IRQ_ALL_TYPES), 1);
	assert_int_equal(umsi_pci_mode(dev), UMSI_MODE_INTX);
	assert_int_equal(umsi_pci_irq_vector(dev, 0), (int)gsi);
	assert_int_equal(umsi_sim_ioapic_get(m->sim, gsi, &rte), 0);
	assert_true(rte.programmed);
	assert_true(rte.masked);
	assert_int_equal(rte.trigger, UMSI_INTX_LEVEL);
	fx_intx_serve(m, DEV6);
	assert_int_equal(umsi_request_irq(m->sys, gsi, fx_intx_handler,
					  UMSI_IRQF_SHARED, "t", m), 0);
	assert_int_equal(umsi_sim_ioapic_get(m->sim, gsi, &rte), 0);
	assert_false(rte.masked);
	assert_int_equal(umsi_sim_intx_set(m->sim, DEV6, true), 0);
	assert_int_equal(m->handled[gsi], 1);
	assert_int_equal(umsi_sim_ioapic_get(m->sim, gsi, &rte), 0);
	assert_false(rte.remote_irr);           /* the EOI reached it */
	assert_int_equal(umsi_free_irq(m->sys, gsi, m), 0);
	umsi_pci_free_irq_vectors(dev);
	assert_int_equal(umsi_sim_ioapic_get(m->sim, gsi, &rte), 0);
	assert_true(rte.masked);
	assert_null(umsi_irq_to_desc(m->sys, gsi));
	umsi_pci_remove(m->sys, dev);
	machine_free(m);
}

/* Two functions on one GSI share its IRQ and their handlers both run. */
static void test_intx_shared_line(void **state)
{
	struct machine *m = machine_new(2, 0, NULL);
	struct umsi_sim_dev_desc d = intx_desc(1);
	struct umsi_pci_dev *a, *b;
	struct umsi_sim_rte rte;
	struct snapshot s0 = snap(m);
	int dummy;

	(void)state;
	assert_int_equal(umsi_sim_add_device(m->sim, DEV5, &d), 0);
	assert_int_equal(umsi_sim_add_device(m->sim, DEV6, &d), 0);
	assert_int_equal(umsi_sim_set_intx_route(m->sim, DEV5, 20), 0);
	assert_int_equal(umsi_sim_set_intx_route(m->sim, DEV6, 20), 0);
	assert_int_equal(umsi_pci_add(m->sys, DEV5, NULL, 0, &a), 0);
	assert_int_equal(umsi_pci_add(m->sys, DEV6, NULL, 0, &b), 0);
	assert_int_equal(umsi_pci_alloc_irq_vectors(a, 1, 1, UMSI_PCI_IRQ_INTX), 1);
	assert_int_equal(umsi_pci_alloc_irq_vectors(b, 1, 1, UMSI_PCI_IRQ_INTX), 1);
	assert_int_equal(umsi_pci_irq_vector(a, 0), 20);
	assert_int_equal(umsi_pci_irq_vector(b, 0), 20);
	fx_intx_serve(m, DEV6);
	assert_int_equal(umsi_request_irq(m->sys, 20, fx_intx_handler,
					  UMSI_IRQF_SHARED, "a", m), 0);
	assert_int_equal(umsi_request_irq(m->sys, 20, fx_intx_handler,
					  UMSI_IRQF_SHARED, "b", &dummy), 0);
	umsi_sim_intx_set(m->sim, DEV6, true);
	assert_int_equal(m->handled[20], 2);    /* both handlers ran */
	/* The first to go leaves the line to the other. */
	assert_int_equal(umsi_free_irq(m->sys, 20, m), 0);
	umsi_pci_remove(m->sys, a);
	assert_non_null(umsi_irq_to_desc(m->sys, 20));
	assert_int_equal(umsi_sim_ioapic_get(m->sim, 20, &rte), 0);
	assert_false(rte.masked);
	/* ...and the line is described as the one who stays. */
	{
		struct umsi_irq_info info;

		assert_int_equal(umsi_irq_get_info(m->sys, 20, &info), 0);
		assert_string_equal(info.owner, "b");
		assert_int_equal(info.bdf, DEV6);
	}
	assert_int_equal(umsi_free_irq(m->sys, 20, &dummy), 0);
	umsi_pci_remove(m->sys, b);
	assert_null(umsi_irq_to_desc(m->sys, 20));
	{
		struct snapshot s1 = snap(m);

		assert_same(&s0, &s1);
	}
	machine_free(m);
}

/*
 * Owned handlers (umsi_pci_request_irq) on a shared line: whoever leaves,
 * the line's info names the owner of the handler it reports, with that
 * owner's BDF, not the departed function's.
 */
static void test_intx_shared_line_info_after_leave(void **state)
{
	struct machine *m = machine_new(2, 0, NULL);
	struct umsi_sim_dev_desc d = intx_desc(1);
	struct umsi_pci_dev *a, *b;
	struct umsi_irq_info info;

	(void)state;
	assert_int_equal(umsi_sim_add_device(m->sim, DEV5, &d), 0);
	assert_int_equal(umsi_sim_add_device(m->sim, DEV6, &d), 0);
	assert_int_equal(umsi_sim_set_intx_route(m->sim, DEV5, 20), 0);
	assert_int_equal(umsi_sim_set_intx_route(m->sim, DEV6, 20), 0);
	assert_int_equal(umsi_pci_add(m->sys, DEV5, NULL, 0, &a), 0);
	assert_int_equal(umsi_pci_add(m->sys, DEV6, NULL, 0, &b), 0);
	assert_int_equal(umsi_pci_alloc_irq_vectors(a, 1, 1, UMSI_PCI_IRQ_INTX), 1);
	assert_int_equal(umsi_pci_alloc_irq_vectors(b, 1, 1, UMSI_PCI_IRQ_INTX), 1);
	assert_int_equal(umsi_pci_request_irq(a, 0, fx_intx_handler,
					      UMSI_IRQF_SHARED, "a", m), 0);
	assert_int_equal(umsi_pci_request_irq(b, 0, fx_intx_handler,
					      UMSI_IRQF_SHARED, "b", m), 0);
	assert_int_equal(umsi_irq_get_info(m->sys, 20, &info), 0);
	assert_string_equal(info.owner, "a");
	assert_int_equal(info.bdf, DEV5);
	umsi_pci_remove(m->sys, a);
	assert_int_equal(umsi_irq_get_info(m->sys, 20, &info), 0);
	assert_string_equal(info.owner, "b");
	assert_int_equal(info.bdf, DEV6);
	/* The handler's owner names it even when the creator stays. */
	assert_int_equal(umsi_pci_add(m->sys, DEV5, NULL, 0, &a), 0);
	assert_int_equal(umsi_pci_alloc_irq_vectors(a, 1, 1, UMSI_PCI_IRQ_INTX), 1);
	umsi_pci_remove(m->sys, b);
	assert_int_equal(umsi_irq_get_info(m->sys, 20, &info), 0);
	assert_null(info.owner);
	assert_int_equal(info.bdf, DEV5);
	umsi_pci_remove(m->sys, a);
	machine_free(m);
}

/* ---- the seed's API ------------------------------------------------------------ */

/*
 * msi_get_pci_irq_vector: MSI-X entry 0 first, else one MSI message; when
 * the function's INTx line is not shared, the IRQ keeps the line's number
 * (the seed reused the IO-APIC vector); when it is, a new number.
 */
static void test_compat_get_pci_irq_vector(void **state)
{
	struct machine *m = machine_new(2, 0, NULL);
	struct umsi_sim_dev_desc dm = msi_desc(4, true, true);
	struct umsi_sim_dev_desc dx = nvme_desc();
	struct umsi_sim_dev_desc di = intx_desc(1);
	struct umsi_pci_dev *msi, *msix, *other;
	struct umsi_irq_info info;
	int irq;

	(void)state;
	msi = plug(m, DEV5, &dm, 0);
	irq = umsi_msi_get_pci_irq_vector(msi);
	assert_int_equal(irq, (int)gsi_of(5, 1));
	assert_int_equal(umsi_msi_get_pci_irq_vector(msi), irq);
	assert_int_equal(umsi_pci_mode(msi), UMSI_MODE_MSI);
	assert_int_equal(umsi_irq_get_info(m->sys, (uint32_t)irq, &info), 0);
	assert_string_equal(info.chip, "PCI-MSI");
	assert_int_equal(umsi_request_irq(m->sys, (uint32_t)irq, fx_handler,
					  0, "t", m), 0);
	assert_int_equal(umsi_sim_fire(m->sim, DEV5, 0), UMSI_SIM_FIRE_SENT);
	assert_int_equal(m->handled[irq], 1);
	umsi_msi_remove_pci_irq_vectors(msi);
	assert_null(umsi_irq_to_desc(m->sys, (uint32_t)irq));

	/* NVME (dev 4, INTA) shares GSI 16 with another function. */
	msix = plug(m, NVME, &dx, 0);
	other = plug(m, UMSI_BDF(0, 0, 8, 0), &di, 0);
	assert_int_equal(gsi_of(8, 1), gsi_of(4, 1));
	irq = umsi_msi_get_pci_irq_vector(msix);
	assert_true(irq >= 24);
	assert_int_equal(umsi_pci_mode(msix), UMSI_MODE_MSIX);
	assert_int_equal(umsi_irq_get_info(m->sys, (uint32_t)irq, &info), 0);
	assert_int_equal(info.hwirq, 0);
	umsi_pci_remove(m->sys, other);
	umsi_pci_remove(m->sys, msix);
	umsi_pci_remove(m->sys, msi);
	machine_free(m);
}

static int extra3(struct umsi_pci_dev *dev, uint32_t *irqs)
{
	return umsi_msix_alloc_vectors(dev, irqs, 3);
}

/* msix_alloc_vectors is all or nothing, also when a host call fails. */
static void test_compat_msix_alloc_vectors(void **state)
{
	struct machine *m = machine_new(2, 0, NULL);
	struct umsi_sim_dev_desc dx = nvme_desc();
	struct umsi_pci_dev *dev = plug(m, NVME, &dx, 0);
	struct snapshot s0, s1;
	uint32_t irqs[70], bad[2];
	uint64_t n, k;
	int irq0, i;

	(void)state;
	assert_int_equal(umsi_msix_alloc_vectors(dev, irqs, 1), -UMSI_EINVAL);
	irq0 = umsi_msi_get_pci_irq_vector(dev);
	assert_true(irq0 > 0);
	s0 = snap(m);
	assert_int_equal(umsi_msix_alloc_vectors(dev, irqs, 65), -UMSI_ENOSPC);
	s1 = snap(m);
	assert_same(&s0, &s1);
	umsi_sim_stats_reset(m->sim);
	assert_int_equal(extra3(dev, irqs), 0);
	/* Each extra entry: address and data, 3 table writes, no read. */
	assert_int_equal(dstats(m, NVME).mmio_writes, 9);
	assert_int_equal(dstats(m, NVME).mmio_reads, 0);
	n = sstats(m).fallible_calls;
	for (i = 0; i < 3; i++) {
		assert_int_equal(umsi_request_irq(m->sys, irqs[i], fx_handler,
						  0, "x", m), 0);
		assert_int_equal(umsi_sim_fire(m->sim, NVME, (unsigned)i + 1),
				 UMSI_SIM_FIRE_SENT);
		assert_int_equal(m->handled[irqs[i]], 1);
	}
	/* Not one of ours (entry 0 came with the function): none freed. */
	bad[0] = irqs[0];
	bad[1] = (uint32_t)irq0;
	assert_int_equal(umsi_msix_free_vectors(dev, bad, 2), -UMSI_EINVAL);
	assert_non_null(umsi_irq_to_desc(m->sys, irqs[0]));
	assert_int_equal(umsi_msix_free_vectors(dev, irqs, 3), 0);
	s1 = snap(m);
	assert_same(&s0, &s1);
	/* Failure of every host call: nothing left behind. */
	for (k = 1; k <= n; k++) {
		umsi_sim_fail_at(m->sim, k, -UMSI_ENOMEM);
		if (!extra3(dev, irqs))
			assert_int_equal(umsi_msix_free_vectors(dev, irqs, 3),
					 0);
		umsi_sim_fail_at(m->sim, 0, 0);
		s1 = snap(m);
		assert_same(&s0, &s1);
	}
	umsi_pci_remove(m->sys, dev);
	machine_free(m);
}

/* ---- MSI-X table location --------------------------------------------------------- */

struct layout_case {
	const char *what;
	uint32_t table, pba;            /* raw Table/PBA registers */
	const char *reason;
};

/*
 * Each bad location is refused with a reason and MSI-X is not used; the
 * function still gets MSI.
 */
static void test_msix_table_validation(void **state)
{
	static const struct layout_case cases[] = {
		{ "good", 0x2000, 0x3000, NULL },
		{ "BIR 6", 0x2006, 0x3000, "bad_msix_table" },
		{ "BIR 7", 0x2000, 0x3007, "bad_msix_table" },
		{ "upper half of the 64-bit BAR 0", 0x2001, 0x3000,
		  "bad_msix_table" },
		{ "I/O BAR 2", 0x0002, 0x3000, "bad_msix_table" },
		{ "absent BAR 3", 0x0003, 0x3000, "bad_msix_table" },
		{ "table past the end", 0x3c00, 0x3000, "bad_msix_table" },
		{ "PBA past the end", 0x2000, 0x3ffc, "bad_msix_table" },
		{ "PBA inside the table", 0x2000, 0x2400, "bad_msix_table" },
		{ "table over the PBA", 0x2ff0, 0x3000, "bad_msix_table" },
	};
	unsigned i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct machine *m = machine_new(2, 0, NULL);
		struct umsi_sim_dev_desc d = nvme_desc();
		struct umsi_pci_dev *dev;
		struct umsi_pci_info pi;
		uint8_t *raw;
		uint16_t cap;

		d.bars[2].size = 0x100;
		d.bars[2].io = true;
		d.msi.present = true;
		d.msi.nvec = 1;
		assert_int_equal(umsi_sim_add_device(m->sim, NVME, &d), 0);
		cap = find_cap(m, NVME, UMSI_PCI_CAP_ID_MSIX);
		raw = umsi_sim_cfg_raw(m->sim, NVME);
		memcpy(raw + cap + 4, &cases[i].table, 4);
		memcpy(raw + cap + 8, &cases[i].pba, 4);
		assert_int_equal(umsi_pci_add(m->sys, NVME, NULL, 0, &dev), 0);
		umsi_pci_get_info(dev, &pi);
		print_message("%-32s -> %s\n", cases[i].what,
			      pi.msix_reason ? pi.msix_reason : "ok");
		if (cases[i].reason)
			assert_string_equal(pi.msix_reason, cases[i].reason);
		else
			assert_null(pi.msix_reason);
		assert_null(pi.reason);
		assert_int_equal(umsi_pci_alloc_irq_vectors(dev, 1, 1,
				UMSI_PCI_IRQ_MSIX | UMSI_PCI_IRQ_MSI), 1);
		assert_int_equal(umsi_pci_mode(dev), cases[i].reason ?
				 UMSI_MODE_MSI : UMSI_MODE_MSIX);
		/* BARs and Command as firmware left them after sizing. */
		assert_int_equal(umsi_sim_bar_addr(m->sim, NVME, 0),
				 0x800000000ull);
		umsi_pci_remove(m->sys, dev);
		machine_free(m);
	}
}

/* Firmware did not assign the BAR the table lives in. */
static void test_msix_unassigned_bar(void **state)
{
	struct machine *m = machine_new(2, 0, NULL);
	struct umsi_sim_dev_desc d = nvme_desc();
	struct umsi_pci_dev *dev;
	struct umsi_pci_info pi;

	(void)state;
	d.bars[0].unassigned = true;
	dev = plug(m, NVME, &d, 0);
	umsi_pci_get_info(dev, &pi);
	assert_string_equal(pi.msix_reason, "bar_unassigned");
	assert_string_equal(pi.reason, "bar_unassigned");
	assert_int_equal(umsi_pci_alloc_irq_vectors(dev, 1, 1, UMSI_PCI_IRQ_MSIX),
			 -UMSI_ENOENT);
	assert_int_equal(umsi_pci_alloc_irq_vectors(dev, 1, 1,
						    UMSI_PCI_IRQ_ALL_TYPES), 1);
	assert_int_equal(umsi_pci_mode(dev), UMSI_MODE_INTX);
	umsi_pci_remove(m->sys, dev);
	machine_free(m);
}

/* A capability list that loops is cut off; the function stays usable. */
static void test_capability_list_loop(void **state)
{
	struct machine *m = machine_new(2, 0, NULL);
	struct umsi_sim_dev_desc d = nvme_desc();
	struct umsi_pci_dev *dev;
	struct umsi_pci_info pi;
	uint8_t *raw;
	uint16_t cap;

	(void)state;
	assert_int_equal(umsi_sim_add_device(m->sim, NVME, &d), 0);
	cap = find_cap(m, NVME, UMSI_PCI_CAP_ID_MSIX);
	raw = umsi_sim_cfg_raw(m->sim, NVME);
	raw[cap + 1] = (uint8_t)cap;           /* points at itself */
	assert_int_equal(umsi_pci_add(m->sys, NVME, NULL, 0, &dev), 0);
	umsi_pci_get_info(dev, &pi);
	assert_int_equal(pi.msix_cap, cap);    /* found before the loop */
	assert_int_equal(umsi_pci_alloc_irq_vectors(dev, 1, 2, UMSI_PCI_IRQ_MSIX),
			 2);
	umsi_pci_remove(m->sys, dev);
	machine_free(m);
}

/* ---- dynamic and sparse MSI-X, spreading --------------------------------------------- */

static void test_msix_dynamic_entries(void **state)
{
	struct machine *m = machine_new(2, 0, NULL);
	struct umsi_sim_dev_desc d = nvme_desc();
	struct umsi_pci_dev *dev = plug(m, NVME, &d, 0);
	struct snapshot s0;
	uint64_t addr;
	uint32_t data, ctrl;
	int a, b;

	(void)state;
	assert_int_equal(umsi_pci_msix_alloc_entry(dev, -1), -UMSI_EINVAL);
	assert_int_equal(umsi_pci_alloc_irq_vectors(dev, 2, 2, UMSI_PCI_IRQ_MSIX),
			 2);
	s0 = snap(m);
	umsi_sim_stats_reset(m->sim);
	a = umsi_pci_msix_alloc_entry(dev, -1);
	assert_true(a > 0);
	assert_int_equal(dstats(m, NVME).mmio_writes, 3);
	assert_int_equal(dstats(m, NVME).mmio_reads, 0);
	assert_int_equal(umsi_pci_irq_vector(dev, 2), a);
	b = umsi_pci_msix_alloc_entry(dev, 40);
	assert_true(b > 0);
	assert_int_equal(umsi_pci_msix_alloc_entry(dev, 40), -UMSI_EBUSY);
	assert_int_equal(umsi_pci_msix_alloc_entry(dev, 65), -UMSI_EINVAL);
	assert_int_equal(umsi_sim_msix_entry_get(m->sim, NVME, 40, &addr,
						 &data, &ctrl), 0);
	assert_int_equal(ctrl & 1, 1);           /* masked until requested */
	assert_int_equal(umsi_request_irq(m->sys, (uint32_t)b, fx_handler, 0,
					  "t", m), 0);
	assert_int_equal(umsi_sim_fire(m->sim, NVME, 40), UMSI_SIM_FIRE_SENT);
	assert_int_equal(m->handled[b], 1);
	assert_int_equal(umsi_pci_msix_free_entry(dev, (uint32_t)b), 0);
	assert_int_equal(umsi_sim_fire(m->sim, NVME, 40),
			 UMSI_SIM_FIRE_PENDING);
	assert_int_equal(umsi_pci_msix_free_entry(dev, (uint32_t)a), 0);
	assert_int_equal(umsi_pci_msix_free_entry(dev, (uint32_t)a),
			 -UMSI_ENOENT);
	{
		struct snapshot s1 = snap(m);

		assert_same(&s0, &s1);
	}
	umsi_pci_remove(m->sys, dev);
	machine_free(m);
}

/* The driver picks the table indices; only those entries are written. */
static void test_msix_sparse_entries(void **state)
{
	static const uint16_t idx[] = { 3, 40, 64 };
	struct machine *m = machine_new(2, 0, NULL);
	struct umsi_sim_dev_desc d = nvme_desc();
	struct umsi_pci_dev *dev = plug(m, NVME, &d, UMSI_PCI_ADD_FRESH);
	static const uint16_t dup[] = { 3, 3 };
	uint32_t irqs[3];
	struct umsi_irq_info info;
	unsigned k, j;

	(void)state;
	assert_int_equal(umsi_pci_alloc_msix_entries(dev, dup, 2, irqs),
			 -UMSI_EINVAL);
	umsi_sim_stats_reset(m->sim);
	assert_int_equal(umsi_pci_alloc_msix_entries(dev, idx, 3, irqs), 0);
	assert_int_equal(dstats(m, NVME).mmio_writes, 9);
	for (k = 0; k < 65; k++) {
		uint64_t addr;
		uint32_t data, ctrl;
		bool used = false;

		for (j = 0; j < 3; j++)
			used |= idx[j] == k;
		umsi_sim_msix_entry_get(m->sim, NVME, k, &addr, &data, &ctrl);
		assert_int_equal(addr != 0, used);
	}
	for (j = 0; j < 3; j++) {
		assert_int_equal(umsi_irq_get_info(m->sys, irqs[j], &info), 0);
		assert_int_equal(info.hwirq, idx[j]);
		assert_int_equal(umsi_pci_irq_vector(dev, j), (int)irqs[j]);
		assert_int_equal(umsi_request_irq(m->sys, irqs[j], fx_handler,
						  0, "t", m), 0);
		assert_int_equal(umsi_sim_fire(m->sim, NVME, idx[j]),
				 UMSI_SIM_FIRE_SENT);
		assert_int_equal(m->handled[irqs[j]], 1);
	}
	umsi_pci_remove(m->sys, dev);
	machine_free(m);
}

/* UMSI_PCI_IRQ_AFFINITY: one managed vector per CPU. */
static void test_msix_affinity_spread(void **state)
{
	struct machine *m = machine_new(4, 0, NULL);
	struct umsi_sim_dev_desc d = nvme_desc();
	struct umsi_pci_dev *dev = plug(m, NVME, &d, 0);
	struct umsi_irq_info info;
	unsigned seen = 0;
	uint32_t i;

	(void)state;
	assert_int_equal(umsi_pci_alloc_irq_vectors(dev, 4, 4, UMSI_PCI_IRQ_MSIX |
						    UMSI_PCI_IRQ_AFFINITY), 4);
	for (i = 0; i < 4; i++) {
		assert_int_equal(umsi_irq_get_info(m->sys, (uint32_t)
				 umsi_pci_irq_vector(dev, i), &info), 0);
		assert_true(info.managed);
		assert_int_equal(info.cpu, i);
		seen |= 1u << info.cpu;
	}
	assert_int_equal(seen, 0xf);
	umsi_pci_remove(m->sys, dev);
	machine_free(m);
}

/* ---- Bus Master, remapping, removal ----------------------------------------------------- */

static void test_bus_master_cleared_refuses_handler(void **state)
{
	struct machine *m = machine_new(2, 0, NULL);
	struct umsi_sim_dev_desc d = nvme_desc();
	struct umsi_pci_dev *dev = plug(m, NVME, &d, 0);
	uint32_t irq;

	(void)state;
	assert_int_equal(umsi_pci_alloc_irq_vectors(dev, 1, 1, UMSI_PCI_IRQ_MSIX),
			 1);
	irq = (uint32_t)umsi_pci_irq_vector(dev, 0);
	assert_true(cfg16(m, NVME, UMSI_PCI_COMMAND) & UMSI_PCI_CMD_MASTER);
	umsi_sim_cfg_write(m->sim, NVME, UMSI_PCI_COMMAND, 2,
			   cfg16(m, NVME, UMSI_PCI_COMMAND) &
			   ~UMSI_PCI_CMD_MASTER);
	umsi_sim_log_clear(m->sim);
	assert_int_equal(umsi_request_irq(m->sys, irq, fx_handler, 0, "t", m),
			 -UMSI_EPERM);
	assert_non_null(strstr(umsi_sim_log_text(m->sim), "Bus Master"));
	umsi_pci_remove(m->sys, dev);
	machine_free(m);
}

/* With a remapping unit, messages come from the host's back end. */
static void test_remapping_composes_through_host(void **state)
{
	struct machine *m;
	struct umsi_sim_dev_desc d = nvme_desc();
	struct umsi_sim_dev_desc dm = msi_desc(8, true, true);
	struct umsi_pci_dev *dev, *msi;
	uint64_t addr;
	uint32_t data, ctrl, k;

	(void)state;
	fx_skip_unless_x86("x86 only: an interrupt-remapping unit composes messages");
	m = machine_new(2, UMSI_PLAT_IRQ_REMAP, NULL);
	dev = plug(m, NVME, &d, 0);
	msi = plug(m, DEV5, &dm, 0);
	assert_int_equal(umsi_pci_alloc_irq_vectors(dev, 3, 3, UMSI_PCI_IRQ_MSIX),
			 3);
	assert_int_equal(umsi_sim_irte_used(m->sim), 3);
	for (k = 0; k < 3; k++) {
		int irq = umsi_pci_irq_vector(dev, k);

		umsi_sim_msix_entry_get(m->sim, NVME, k, &addr, &data, &ctrl);
		assert_true(addr & UMSI_X86_ADDR_REMAP);
		assert_int_equal(umsi_request_irq(m->sys, (uint32_t)irq,
						  fx_handler, 0, "t", m), 0);
		assert_int_equal(umsi_sim_fire(m->sim, NVME, k),
				 UMSI_SIM_FIRE_SENT);
		assert_int_equal(m->handled[irq], 1);
	}
	/* Multi-message MSI needs consecutive entries: one message. */
	assert_int_equal(umsi_pci_alloc_irq_vectors(msi, 1, 8, UMSI_PCI_IRQ_MSI),
			 1);
	assert_int_equal(umsi_sim_irte_used(m->sim), 4);
	umsi_pci_remove(m->sys, dev);
	umsi_pci_remove(m->sys, msi);
	assert_int_equal(umsi_sim_irte_used(m->sim), 0);
	machine_free(m);
}

/*
 * Removal gives everything back: the allocator's figures, per CPU, equal
 * those before the function appeared, in every mode, and also when the
 * function was surprise-removed first.
 */
static void test_removal_restores_allocator(void **state)
{
	unsigned mode, gone;

	(void)state;
	for (gone = 0; gone < 2; gone++) {
		for (mode = 0; mode < 4; mode++) {
			struct machine *m;
			struct umsi_sim_dev_desc d;
			struct snapshot s0, s1;
			struct umsi_pci_dev *dev;
			int n, i;

			m = machine_new(4, 0, NULL);
			d = mode == 1 ? msi_desc(8, true, true) : mode == 3 ?
				intx_desc(2) : nvme_desc();
			s0 = snap(m);

			dev = plug(m, NVME, &d, 0);
			n = umsi_pci_alloc_irq_vectors(dev, 1, 8,
				mode == 2 ? UMSI_PCI_IRQ_MSIX | UMSI_PCI_IRQ_AFFINITY :
				UMSI_PCI_IRQ_ALL_TYPES);
			assert_true(n >= 1);
			for (i = 0; i < n; i++)
				assert_int_equal(umsi_request_irq(m->sys,
					(uint32_t)umsi_pci_irq_vector(dev,
							(uint32_t)i),
					fx_intx_handler, UMSI_IRQF_SHARED, "t", m),
					0);
			fx_intx_serve(m, NVME);
			if (gone) {
				umsi_sim_remove_device(m->sim, NVME);
				assert_int_equal(umsi_pci_restore_state(dev),
						 -UMSI_ENODEV);
			}
			umsi_pci_remove(m->sys, dev);
			s1 = snap(m);
			assert_same(&s0, &s1);
			machine_free(m);
		}
	}
}

/* A function that reads all-ones is gone: nothing is set up for it. */
static void test_surprise_removal_is_recognised(void **state)
{
	struct machine *m = machine_new(2, 0, NULL);
	struct umsi_sim_dev_desc d = nvme_desc();
	struct umsi_pci_dev *dev;
	struct snapshot s0, s1;

	(void)state;
	assert_int_equal(umsi_pci_add(m->sys, NVME, NULL, 0, &dev),
			 -UMSI_ENODEV);
	dev = plug(m, NVME, &d, 0);
	assert_int_equal(umsi_pci_add(m->sys, NVME, NULL, 0, &dev),
			 -UMSI_EEXIST);
	dev = umsi_pci_find(m->sys, NVME);
	s0 = snap(m);
	umsi_sim_remove_device(m->sim, NVME);
	assert_int_equal(umsi_pci_alloc_irq_vectors(dev, 1, 4,
						    UMSI_PCI_IRQ_ALL_TYPES),
			 -UMSI_ENODEV);
	assert_int_equal(umsi_msi_get_pci_irq_vector(dev), -UMSI_ENODEV);
	s1 = snap(m);
	assert_same(&s0, &s1);
	umsi_msi_remove_pci_irq_vectors(dev);
	umsi_pci_remove(m->sys, dev);
	machine_free(m);
}

/* ---- functions behind bridges ---------------------------------------------- */

/*
 * What real machines have: functions behind a root port, a switch, a PCI
 * Express to PCI bridge and a conventional PCI-to-PCI bridge (one nested
 * behind it), several of them seen by the root with one requester ID (the
 * simulator rewrites the requester on the way up as the bridge spec and
 * QEMU do), the bridges' own MSI among them. Every message of every
 * function reaches the handler of its IRQ on the CPU the IRQ is on, on
 * every back end: an ITS gives the functions behind one DeviceID events
 * of their own in one ITT, VT-d validates the requester the root sees.
 * Everything goes back when they leave.
 */
static void test_functions_behind_bridges(void **state)
{
	struct machine *m = machine_new(4, 0, NULL);
	struct umsi_sim_dev_desc rp1 = fx_bridge_desc(1, UMSI_PCIE_TYPE_ROOT_PORT,
						   true);
	struct umsi_sim_dev_desc ppb = fx_bridge_desc(2, UMSI_PCIE_TYPE_PCI_BRIDGE,
						   true);
	struct umsi_sim_dev_desc cb = fx_bridge_desc(3, -1, true);
	struct umsi_sim_dev_desc nb = fx_bridge_desc(4, -1, false);
	struct umsi_sim_dev_desc rp2 = fx_bridge_desc(5, UMSI_PCIE_TYPE_ROOT_PORT,
						   false);
	struct umsi_sim_dev_desc up = fx_bridge_desc(6, UMSI_PCIE_TYPE_UPSTREAM,
						  false);
	struct umsi_sim_dev_desc dn = fx_bridge_desc(7, UMSI_PCIE_TYPE_DOWNSTREAM,
						  false);
	struct umsi_sim_dev_desc nv = nvme_desc(), m4 = msi_desc(4, true, true);
	struct umsi_sim_dev_desc m1 = msi_desc(1, false, false);
	struct umsi_sim_dev_desc m2 = msi_desc(2, true, true);
	struct umsi_sim_dev_desc conv_nv = nvme_desc();
	struct {
		umsi_bdf_t bdf;
		int parent;             /* index, -1: the root bus */
		const struct umsi_sim_dev_desc *d;
		uint32_t want;          /* vectors to ask for (0: a switch) */
	} t[] = {
		{ UMSI_BDF(0, 0, 0x1c, 0), -1, &rp1, 1 },       /* 0 */
		{ UMSI_BDF(0, 1, 0, 0), 0, &ppb, 1 },           /* 1 */
		{ UMSI_BDF(0, 2, 1, 0), 1, &nv, 5 },            /* PCIe fn */
		{ UMSI_BDF(0, 2, 2, 0), 1, &m4, 4 },
		{ UMSI_BDF(0, 2, 3, 0), 1, &m1, 1 },
		{ UMSI_BDF(0, 2, 3, 1), 1, &m2, 2 },
		{ UMSI_BDF(0, 0, 0x1d, 0), -1, &cb, 1 },        /* 6 */
		{ UMSI_BDF(0, 3, 1, 0), 6, &m1, 1 },
		{ UMSI_BDF(0, 3, 2, 0), 6, &conv_nv, 3 },
		{ UMSI_BDF(0, 3, 5, 0), 6, &m2, 2 },
		{ UMSI_BDF(0, 3, 7, 0), 6, &nb, 0 },            /* 10 */
		{ UMSI_BDF(0, 4, 1, 0), 10, &m4, 4 },
		{ UMSI_BDF(0, 0, 0x1e, 0), -1, &rp2, 0 },       /* 12 */
		{ UMSI_BDF(0, 5, 0, 0), 12, &up, 0 },
		{ UMSI_BDF(0, 6, 0, 0), 13, &dn, 0 },
		{ UMSI_BDF(0, 7, 0, 0), 14, &nv, 4 },
	};
	enum { N = sizeof(t) / sizeof(t[0]) };
	struct umsi_pci_dev *dev[N];
	uint32_t nvec[N] = { 0 };
	struct snapshot s0 = snap(m);
	uint32_t i, k, fired = 0;

	(void)state;
	conv_nv.pcie.present = false;
	conv_nv.msix.nentries = 8;
	for (i = 0; i < N; i++)
		dev[i] = plug_under(m, t[i].bdf, t[i].d,
				    t[i].parent < 0 ? NULL : dev[t[i].parent]);
	for (i = 0; i < N; i++) {
		uint32_t flags = UMSI_PCI_IRQ_MSIX | UMSI_PCI_IRQ_MSI;
		int got;

		if (!t[i].want)
			continue;
		got = umsi_pci_alloc_irq_vectors(dev[i], 1, t[i].want, flags);
		/* Remapping gives an MSI function one message. */
		assert_true(got == (int)t[i].want ||
			    (got == 1 && !t[i].d->msix.present));
		nvec[i] = (uint32_t)got;
		for (k = 0; k < (uint32_t)got; k++)
			assert_int_equal(umsi_pci_request_irq(dev[i], k,
					 fx_handler, 0, "bridged", m), 0);
	}
	for (i = 0; i < N; i++) {
		for (k = 0; k < nvec[i]; k++) {
			int irq = umsi_pci_irq_vector(dev[i], k);
			struct umsi_irq_info info;
			uint64_t before;

			assert_true(irq >= 0 && irq < MAX_TRACKED_IRQ);
			assert_int_equal(umsi_irq_get_info(m->sys,
					 (uint32_t)irq, &info), 0);
			before = m->handled[irq];
			assert_int_equal(umsi_sim_fire(m->sim, t[i].bdf, k),
					 UMSI_SIM_FIRE_SENT);
			if (m->handled[irq] != before + 1)
				fail_msg("%02x:%02x.%x message %u lost",
					 UMSI_BDF_BUS(t[i].bdf),
					 UMSI_BDF_DEV(t[i].bdf),
					 UMSI_BDF_FN(t[i].bdf), k);
			assert_int_equal(m->last_cpu[irq], info.cpu);
			fired++;
		}
	}
	assert_true(fired >= 20);
	assert_int_equal(sstats(m).unassigned, 0);
	for (i = N; i-- > 0;)
		umsi_pci_remove(m->sys, dev[i]);
	{
		struct snapshot s1 = snap(m);

		assert_same(&s0, &s1);
	}
	machine_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_intx_fallback_irq_is_the_gsi),
		cmocka_unit_test(test_intx_level_refires_until_quiet),
		cmocka_unit_test(test_intx_shared_line),
		cmocka_unit_test(test_compat_get_pci_irq_vector),
		cmocka_unit_test(test_compat_msix_alloc_vectors),
		cmocka_unit_test(test_msix_table_validation),
		cmocka_unit_test(test_msix_unassigned_bar),
		cmocka_unit_test(test_capability_list_loop),
		cmocka_unit_test(test_msix_dynamic_entries),
		cmocka_unit_test(test_msix_sparse_entries),
		cmocka_unit_test(test_msix_affinity_spread),
		cmocka_unit_test(test_bus_master_cleared_refuses_handler),
		cmocka_unit_test(test_remapping_composes_through_host),
		cmocka_unit_test(test_removal_restores_allocator),
		cmocka_unit_test(test_surprise_removal_is_recognised),
		cmocka_unit_test(test_functions_behind_bridges),
		cmocka_unit_test(test_intx_shared_line_info_after_leave),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
