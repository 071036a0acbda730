/* SPDX-License-Identifier: MIT */
/*
 * MSI-X and MSI on the simulator: what a device observes, access by
 * access. Every count asserted here is written next to the minimum the
 * protocol allows and why.
 */
#include "test_pci_fixture.h"

#define NVME UMSI_BDF(0, 0, 4, 0)
#define MSIDEV UMSI_BDF(0, 0, 5, 0)

static void request_all(struct machine *m, struct umsi_pci_dev *dev, int n)
{
	int i;

	for (i = 0; i < n; i++)
		assert_int_equal(umsi_request_irq(m->sys,
				 (uint32_t)umsi_pci_irq_vector(dev, (uint32_t)i),
				 fx_handler, 0, "test", m), 0);
}

static void free_all(struct machine *m, struct umsi_pci_dev *dev, int n)
{
	int i;

	for (i = 0; i < n; i++)
		assert_int_equal(umsi_free_irq(m->sys,
				 (uint32_t)umsi_pci_irq_vector(dev, (uint32_t)i),
				 m), 0);
}

/* ---- MSI-X bring-up: the access counts ---------------------------------- */

/*
 * nvme's 3 vectors on a 65-entry table, device fresh from reset. Linux 6.1
 * on QEMU 7.2 makes 175 table writes and 19 reads for this. uMSI's target
 * is 4N + 2 = 14 table accesses; the minimum is 3 writes per entry
 * (address low, high, data: the reset state already masks every entry),
 * 1 read to flush and verify them, and 1 unmask write per entry when its
 * handler is requested: 4N + 1 = 13.
 */
static void test_msix_fresh_bringup_counts(void **state)
{
	struct machine *m = machine_new(4, 0, NULL);
	struct umsi_sim_dev_desc d = nvme_desc();
	struct umsi_pci_dev *dev = plug(m, NVME, &d, UMSI_PCI_ADD_FRESH);
	struct umsi_sim_dev_stats s;

	(void)state;
	umsi_sim_stats_reset(m->sim);
	assert_int_equal(umsi_pci_alloc_irq_vectors(dev, 3, 3, UMSI_PCI_IRQ_MSIX),
			 3);
	s = dstats(m, NVME);
	assert_int_equal(s.mmio_writes, 9);     /* minimum 3N */
	assert_int_equal(s.mmio_reads, 1);      /* one flush + verify */
	/* Config: read Command; write Message Control (Enable + Function
	 * Mask), Command (Bus Master, INTx Disable), Message Control
	 * (Function Mask off). Minimum: 1 read, 3 writes. */
	assert_int_equal(s.cfg_reads, 1);
	assert_int_equal(s.cfg_writes, 3);
	request_all(m, dev, 3);
	s = dstats(m, NVME);
	assert_int_equal(s.mmio_writes, 12);    /* + N unmasks */
	assert_int_equal(s.mmio_reads, 1);
	assert_int_equal(s.mmio_writes + s.mmio_reads, 4 * 3 + 1);
	assert_true(s.mmio_writes + s.mmio_reads <= 4 * 3 + 2);
	/* One Command read per request: the Bus Master check. */
	assert_int_equal(s.cfg_reads, 1 + 3);
	assert_int_equal(s.cfg_writes, 3);
	print_message("msix bring-up, fresh, N=3, T=65: %llu table writes, "
		      "%llu reads (target 4N+2 = 14; Linux 6.1: 175 + 19)\n",
		      (unsigned long long)s.mmio_writes,
		      (unsigned long long)s.mmio_reads);
	free_all(m, dev, 3);
	umsi_pci_remove(m->sys, dev);
	machine_free(m);
}

/*
 * Not known fresh: every entry is masked while Function Mask holds the
 * function quiet. Target: 4N + 2 + (T - N); uMSI: 3N + T writes + 1 read
 * at allocation, N unmasks at request: 4N + 1 + T.
 */
static void test_msix_unknown_state_bringup_counts(void **state)
{
	struct machine *m = machine_new(4, 0, NULL);
	struct umsi_sim_dev_desc d = nvme_desc();
	struct umsi_pci_dev *dev = plug(m, NVME, &d, 0);
	struct umsi_sim_dev_stats s;

	(void)state;
	umsi_sim_stats_reset(m->sim);
	assert_int_equal(umsi_pci_alloc_irq_vectors(dev, 3, 3, UMSI_PCI_IRQ_MSIX),
			 3);
	s = dstats(m, NVME);
	assert_int_equal(s.mmio_writes, 3 * 3 + 65);
	assert_int_equal(s.mmio_reads, 1);
	assert_true(s.mmio_writes + s.mmio_reads <= 4 * 3 + 2 + (65 - 3));
	print_message("msix alloc, state unknown, N=3, T=65: %llu table "
		      "writes, %llu read (target 4N+2+(T-N) = 76)\n",
		      (unsigned long long)s.mmio_writes,
		      (unsigned long long)s.mmio_reads);
	request_all(m, dev, 3);
	s = dstats(m, NVME);
	print_message("  with the N unmasks at request: %llu writes, %llu "
		      "read\n", (unsigned long long)s.mmio_writes,
		      (unsigned long long)s.mmio_reads);
	assert_int_equal(s.mmio_writes, 3 * 3 + 65 + 3);
	/* After uMSI's own tear-down the table is clean: the next bring-up
	 * costs what a fresh one does. */
	free_all(m, dev, 3);
	umsi_pci_free_irq_vectors(dev);
	umsi_sim_stats_reset(m->sim);
	assert_int_equal(umsi_pci_alloc_irq_vectors(dev, 3, 3, UMSI_PCI_IRQ_MSIX),
			 3);
	s = dstats(m, NVME);
	assert_int_equal(s.mmio_writes, 9);
	assert_int_equal(s.mmio_reads, 1);
	umsi_pci_remove(m->sys, dev);
	machine_free(m);
}

/* Every entry fires to its own handler, on the CPU its IRQ targets. */
static void test_msix_each_entry_reaches_its_handler(void **state)
{
	struct machine *m = machine_new(4, 0, NULL);
	struct umsi_sim_dev_desc d = nvme_desc();
	struct umsi_pci_dev *dev = plug(m, NVME, &d, UMSI_PCI_ADD_FRESH);
	struct umsi_irq_info info;
	int i, irq;

	(void)state;
	assert_int_equal(umsi_pci_alloc_irq_vectors(dev, 1, 8, UMSI_PCI_IRQ_MSIX),
			 8);
	request_all(m, dev, 8);
	for (i = 0; i < 8; i++) {
		irq = umsi_pci_irq_vector(dev, (uint32_t)i);
		assert_int_equal(umsi_sim_fire(m->sim, NVME, (unsigned)i),
				 UMSI_SIM_FIRE_SENT);
		assert_int_equal(m->handled[irq], 1);
		assert_int_equal(umsi_irq_get_info(m->sys, (uint32_t)irq,
						   &info), 0);
		assert_string_equal(info.chip, "PCI-MSI-X");
		assert_int_equal(info.hwirq, i);
		assert_int_equal(m->last_cpu[irq], info.cpu);
	}
	assert_int_equal(sstats(m).unassigned, 0);
	assert_int_equal(sstats(m).undeliverable, 0);
	/* Bus mastering was turned on with MSI-X. */
	assert_true(cfg16(m, NVME, UMSI_PCI_COMMAND) & UMSI_PCI_CMD_MASTER);
	assert_true(cfg16(m, NVME, UMSI_PCI_COMMAND) &
		    UMSI_PCI_CMD_INTX_DISABLE);
	umsi_pci_remove(m->sys, dev);
	machine_free(m);
}

/*
 * A previous kernel left every entry unmasked, pointing at junk (a real
 * vector on CPU 0, and stray DMA), and MSI-X on or off. The device fires
 * every unused entry after each host call uMSI makes while setting up
 * (from the moment uMSI has the function: umsi_pci_add turns a left-on
 * MSI-X off): nothing from them may arrive, then or later.
 */
struct junk {
	struct machine *m;
	unsigned from, to;
	int fires;
};

static void fire_junk(void *arg, enum umsi_sim_op op)
{
	struct junk *j = arg;
	unsigned k;

	(void)op;
	for (k = j->from; k < j->to; k++)
		if (umsi_sim_fire(j->m->sim, NVME, k) >= 0)
			j->fires++;
}

static void junk_case(bool left_on)
{
	struct machine *m = machine_new(2, 0, NULL);
	struct umsi_sim_dev_desc d = nvme_desc();
	struct junk j = { .m = m, .from = 3, .to = 65 };
	struct umsi_pci_dev *dev;
	uint16_t cap;
	unsigned k;
	/* Junk that would be delivered: a message to CPU 0, identity 0x40+. */
	uint64_t live = fx_imsic() ? umsi_sim_imsic_file_addr(m->sim, 0)
				   : 0xfee00000u;

	assert_int_equal(umsi_sim_add_device(m->sim, NVME, &d), 0);
	for (k = 0; k < 65; k++)
		assert_int_equal(umsi_sim_msix_entry_set(m->sim, NVME, k,
			k % 2 ? live : 0xdead0000u, 0x40 + k % 16, 0), 0);
	cap = find_cap(m, NVME, UMSI_PCI_CAP_ID_MSIX);
	assert_int_equal(umsi_sim_cfg_write(m->sim, NVME, UMSI_PCI_COMMAND, 2,
		UMSI_PCI_CMD_MEMORY | UMSI_PCI_CMD_MASTER), 0);
	if (left_on) {
		assert_int_equal(umsi_sim_cfg_write(m->sim, NVME, cap + 2, 2,
					UMSI_MSIX_FLAGS_ENABLE), 0);
		assert_int_equal(umsi_pci_add(m->sys, NVME, NULL, 0, &dev), 0);
		assert_false(msix_enabled(m, NVME));
	}
	umsi_sim_stats_reset(m->sim);
	umsi_sim_set_hook(m->sim, fire_junk, &j);
	if (!left_on)
		assert_int_equal(umsi_pci_add(m->sys, NVME, NULL, 0, &dev), 0);
	assert_int_equal(umsi_pci_alloc_irq_vectors(dev, 3, 3, UMSI_PCI_IRQ_MSIX),
			 3);
	request_all(m, dev, 3);
	umsi_sim_set_hook(m->sim, NULL, NULL);
	fire_junk(&j, UMSI_SIM_OP_CLOCK_NS);
	assert_true(j.fires > 0);
	assert_int_equal(sstats(m).msgs, 0);
	assert_int_equal(sstats(m).delivered, 0);
	assert_int_equal(sstats(m).stray_dma, 0);
	for (k = 3; k < 65; k++)
		assert_int_equal(umsi_sim_fire(m->sim, NVME, k),
				 UMSI_SIM_FIRE_COALESCED);
	/* The used ones work. */
	assert_int_equal(umsi_sim_fire(m->sim, NVME, 1), UMSI_SIM_FIRE_SENT);
	assert_int_equal(m->handled[umsi_pci_irq_vector(dev, 1)], 1);
	umsi_pci_remove(m->sys, dev);
	machine_free(m);
}

static void test_msix_junk_entries_never_arrive(void **state)
{
	(void)state;
	junk_case(false);
	junk_case(true);
}

/*
 * The other operations, access by access (minimum in brackets, and why):
 *  - umsi_pci_add of the nvme function: 18 config reads, 6 writes. IDs,
 *    class, header (3); the capability walk (6: Vendor ID, Status, Header
 *    Type, pointer, 2 headers); the MSI-X capability (3); sizing 64-bit
 *    BAR 0 with decode off (5 reads, 6 writes: Command off/on, each half
 *    probed and restored); Interrupt Pin (1). [16 reads: the walker
 *    re-reads Vendor ID and Header Type; 6 writes]
 *  - MSI-X mask: 1 table write, 1 read [the read is the flush that makes
 *    "masked" true on return]; unmask: 1 write [1]; pending: 1 read [1].
 *  - free of the vectors, handlers already gone: Command read, Message
 *    Control write, Command write (INTx Disable back) [3; the entries are
 *    masked already, so no table access].
 *  - INTx enable on a function whose INTx Disable is clear: 1 read [1].
 */
static void test_counts_of_other_operations(void **state)
{
	struct machine *m = machine_new(2, 0, NULL);
	struct umsi_sim_dev_desc d = nvme_desc();
	struct umsi_pci_dev *dev;
	struct umsi_sim_dev_stats s;
	uint32_t irq;

	(void)state;
	assert_int_equal(umsi_sim_add_device(m->sim, NVME, &d), 0);
	umsi_sim_stats_reset(m->sim);
	assert_int_equal(umsi_pci_add(m->sys, NVME, NULL, 0, &dev), 0);
	s = dstats(m, NVME);
	assert_int_equal(s.cfg_reads, 18);
	assert_int_equal(s.cfg_writes, 6);
	assert_int_equal(s.mmio_reads + s.mmio_writes, 0);

	assert_int_equal(umsi_pci_alloc_irq_vectors(dev, 2, 2, UMSI_PCI_IRQ_MSIX),
			 2);
	irq = (uint32_t)umsi_pci_irq_vector(dev, 1);
	assert_int_equal(umsi_request_irq(m->sys, irq, fx_handler, 0, "t", m),
			 0);
	umsi_sim_stats_reset(m->sim);
	assert_int_equal(umsi_irq_mask(m->sys, irq), 0);
	s = dstats(m, NVME);
	assert_int_equal(s.mmio_writes, 1);
	assert_int_equal(s.mmio_reads, 1);
	assert_int_equal(umsi_sim_fire(m->sim, NVME, 1), UMSI_SIM_FIRE_PENDING);
	umsi_sim_stats_reset(m->sim);
	assert_int_equal(umsi_pci_irq_pending(dev, 1), 1);
	assert_int_equal(dstats(m, NVME).mmio_reads, 1);
	umsi_sim_stats_reset(m->sim);
	assert_int_equal(umsi_irq_unmask(m->sys, irq), 0);
	s = dstats(m, NVME);
	assert_int_equal(s.mmio_writes, 1);
	assert_int_equal(s.mmio_reads, 0);
	assert_int_equal(m->handled[irq], 1);   /* the PBA bit went out */
	assert_int_equal(umsi_free_irq(m->sys, irq, m), 0);
	umsi_sim_stats_reset(m->sim);
	umsi_pci_free_irq_vectors(dev);
	s = dstats(m, NVME);
	assert_int_equal(s.cfg_reads, 1);
	assert_int_equal(s.cfg_writes, 2);
	assert_int_equal(s.mmio_reads + s.mmio_writes, 0);
	assert_false(msix_enabled(m, NVME));
	assert_false(cfg16(m, NVME, UMSI_PCI_COMMAND) &
		     UMSI_PCI_CMD_INTX_DISABLE);

	umsi_sim_stats_reset(m->sim);
	assert_int_equal(umsi_pci_alloc_irq_vectors(dev, 1, 1, UMSI_PCI_IRQ_INTX),
			 1);
	s = dstats(m, NVME);
	assert_int_equal(s.cfg_reads, 1);
	assert_int_equal(s.cfg_writes, 0);
	umsi_pci_remove(m->sys, dev);
	machine_free(m);
}

/* ---- failure of every host call --------------------------------------------- */

typedef int (*op_fn)(struct machine *m, struct umsi_pci_dev *dev);

static int op_msix3(struct machine *m, struct umsi_pci_dev *dev)
{
	(void)m;
	return umsi_pci_alloc_irq_vectors(dev, 3, 3, UMSI_PCI_IRQ_MSIX);
}

static int op_msix_spread(struct machine *m, struct umsi_pci_dev *dev)
{
	(void)m;
	return umsi_pci_alloc_irq_vectors(dev, 4, 4, UMSI_PCI_IRQ_MSIX |
					  UMSI_PCI_IRQ_AFFINITY);
}

static int op_msi5(struct machine *m, struct umsi_pci_dev *dev)
{
	(void)m;
	return umsi_pci_alloc_irq_vectors(dev, 5, 5, UMSI_PCI_IRQ_MSI);
}

static int op_intx(struct machine *m, struct umsi_pci_dev *dev)
{
	(void)m;
	return umsi_pci_alloc_irq_vectors(dev, 1, 1, UMSI_PCI_IRQ_INTX);
}

static int op_compat(struct machine *m, struct umsi_pci_dev *dev)
{
	(void)m;
	return umsi_msi_get_pci_irq_vector(dev);
}

static int op_sparse(struct machine *m, struct umsi_pci_dev *dev)
{
	static const uint16_t idx[] = { 0, 17, 64 };
	uint32_t irqs[3];

	(void)m;
	return umsi_pci_alloc_msix_entries(dev, idx, 3, irqs);
}

/* The state of the device that must be as before a failed call. */
struct devstate {
	uint16_t cmd;
	bool msi, msix;
};

static struct devstate devstate(struct machine *m, umsi_bdf_t bdf)
{
	struct devstate s = {
		.cmd = cfg16(m, bdf, UMSI_PCI_COMMAND),
		.msi = msi_enabled(m, bdf),
		.msix = msix_enabled(m, bdf),
	};
	return s;
}

/*
 * Run @op once to learn how many fallible host calls it makes, then fail
 * each in turn on a fresh machine: the call fails, or succeeds; a failure
 * leaves the device disabled and exactly what was there before.
 */
static void every_failure(const struct umsi_sim_dev_desc *d, uint32_t flags,
			  op_fn op, int want)
{
	struct machine *m = machine_new(4, 0, NULL);
	struct umsi_pci_dev *dev = plug(m, NVME, d, flags);
	uint64_t n, k;
	int failed = 0;

	umsi_sim_stats_reset(m->sim);
	assert_int_equal(op(m, dev), want);
	n = sstats(m).fallible_calls;
	assert_true(n > 0);
	umsi_pci_remove(m->sys, dev);
	machine_free(m);

	for (k = 1; k <= n; k++) {
		struct snapshot before, after;
		struct devstate ds0, ds1;
		int ret;

		m = machine_new(4, 0, NULL);
		dev = plug(m, NVME, d, flags);
		before = snap(m);
		ds0 = devstate(m, NVME);
		umsi_sim_fail_at(m->sim, k, -UMSI_EIO);
		ret = op(m, dev);
		umsi_sim_fail_at(m->sim, 0, 0);
		if (ret < 0) {
			failed++;
			after = snap(m);
			assert_same(&before, &after);
			ds1 = devstate(m, NVME);
			assert_int_equal(ds0.cmd, ds1.cmd);
			assert_false(ds1.msi);
			assert_false(ds1.msix);
			assert_int_equal(umsi_pci_mode(dev), UMSI_MODE_NONE);
		} else {
			umsi_pci_free_irq_vectors(dev);
			after = snap(m);
			assert_same(&before, &after);
		}
		umsi_pci_remove(m->sys, dev);
		machine_free(m);
	}
	assert_true(failed > 0);
}

static void test_msix_failure_of_every_host_call(void **state)
{
	struct umsi_sim_dev_desc d = nvme_desc();

	(void)state;
	every_failure(&d, UMSI_PCI_ADD_FRESH, op_msix3, 3);
	every_failure(&d, 0, op_msix3, 3);
	every_failure(&d, 0, op_msix_spread, 4);
	every_failure(&d, 0, op_sparse, 0);
	every_failure(&d, 0, op_compat, 16);
}

static void test_msi_and_intx_failure_of_every_host_call(void **state)
{
	struct umsi_sim_dev_desc d = msi_desc(8, true, true);
	struct umsi_sim_dev_desc i = intx_desc(1);

	(void)state;
	every_failure(&d, 0, op_msi5, 5);
	d = msi_desc(1, false, false);
	every_failure(&d, 0, op_compat, 16 + (4 + 1 - 1) % 4);
	every_failure(&i, 0, op_intx, 1);
}

/*
 * Restore after a reset can fail at any host call too: the function is
 * then left untouched or with MSI-X off, and a later restore brings it
 * back whole.
 */
static void test_restore_failure_of_every_host_call(void **state)
{
	struct machine *m = machine_new(2, 0, NULL);
	struct umsi_sim_dev_desc d = nvme_desc();
	struct umsi_pci_dev *dev = plug(m, NVME, &d, 0);
	uint32_t irq;
	uint64_t n, k;

	(void)state;
	assert_int_equal(umsi_pci_alloc_irq_vectors(dev, 2, 2, UMSI_PCI_IRQ_MSIX),
			 2);
	irq = (uint32_t)umsi_pci_irq_vector(dev, 1);
	assert_int_equal(umsi_request_irq(m->sys, irq, fx_handler, 0, "t", m),
			 0);
	umsi_sim_stats_reset(m->sim);
	assert_int_equal(umsi_pci_restore_state(dev), 0);
	n = sstats(m).fallible_calls;
	for (k = 1; k <= n; k++) {
		uint64_t before = m->handled[irq];

		umsi_sim_stats_reset(m->sim);
		umsi_sim_fail_at(m->sim, k, -UMSI_EIO);
		/* Failed: untouched (the first read failed), or MSI-X off. */
		if (umsi_pci_restore_state(dev) < 0 &&
		    dstats(m, NVME).cfg_writes + dstats(m, NVME).mmio_writes)
			assert_false(msix_enabled(m, NVME));
		umsi_sim_fail_at(m->sim, 0, 0);
		assert_int_equal(umsi_pci_restore_state(dev), 0);
		assert_int_equal(umsi_sim_fire(m->sim, NVME, 1),
				 UMSI_SIM_FIRE_SENT);
		assert_int_equal(m->handled[irq], before + 1);
	}
	umsi_pci_remove(m->sys, dev);
	machine_free(m);
}

/* umsi_pci_add fails cleanly at every host call too. */
static void test_add_failure_of_every_host_call(void **state)
{
	struct umsi_sim_dev_desc d = nvme_desc();
	struct machine *m = machine_new(2, 0, NULL);
	struct umsi_pci_dev *dev;
	uint64_t n, k;

	(void)state;
	assert_int_equal(umsi_sim_add_device(m->sim, NVME, &d), 0);
	umsi_sim_stats_reset(m->sim);
	assert_int_equal(umsi_pci_add(m->sys, NVME, NULL, 0, &dev), 0);
	n = sstats(m).fallible_calls;
	umsi_pci_remove(m->sys, dev);
	machine_free(m);
	for (k = 1; k <= n; k++) {
		struct snapshot before, after;
		uint8_t raw[256];
		int ret;

		m = machine_new(2, 0, NULL);
		assert_int_equal(umsi_sim_add_device(m->sim, NVME, &d), 0);
		memcpy(raw, umsi_sim_cfg_raw(m->sim, NVME), sizeof(raw));
		before = snap(m);
		umsi_sim_fail_at(m->sim, k, -UMSI_EIO);
		ret = umsi_pci_add(m->sys, NVME, NULL, 0, &dev);
		umsi_sim_fail_at(m->sim, 0, 0);
		if (ret) {
			after = snap(m);
			assert_same(&before, &after);
			assert_null(umsi_pci_find(m->sys, NVME));
			/* BARs and Command as firmware left them. */
			assert_memory_equal(raw, umsi_sim_cfg_raw(m->sim, NVME),
					    0x40);
		} else {
			umsi_pci_remove(m->sys, dev);
		}
		machine_free(m);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_msix_fresh_bringup_counts),
		cmocka_unit_test(test_msix_unknown_state_bringup_counts),
		cmocka_unit_test(test_msix_each_entry_reaches_its_handler),
		cmocka_unit_test(test_msix_junk_entries_never_arrive),
		cmocka_unit_test(test_counts_of_other_operations),
		cmocka_unit_test(test_msix_failure_of_every_host_call),
		cmocka_unit_test(test_msi_and_intx_failure_of_every_host_call),
		cmocka_unit_test(test_add_failure_of_every_host_call),
		cmocka_unit_test(test_restore_failure_of_every_host_call),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
