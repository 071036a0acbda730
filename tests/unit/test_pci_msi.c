/* SPDX-License-Identifier: MIT */
/*
 * MSI on the simulator: multi-message blocks, the set-up order, mask and
 * pending bits, retargeting a live MSI or MSI-X source while it fires,
 * shrinking to what fits, and restore after a reset.
 */
#include "test_pci_fixture.h"

#define DEV UMSI_BDF(0, 0, 5, 0)
#define NVME UMSI_BDF(0, 0, 4, 0)

static uint16_t msi_off(struct machine *m)
{
	return find_cap(m, DEV, UMSI_PCI_CAP_ID_MSI);
}

/*
 * 5 messages of a 32-capable function: MME = 3, a block of 8 vectors on
 * one CPU, aligned to 8; the device may send any of the 8 and each lands
 * on an IRQ of this function. Config accesses: 1 read (Command), 6 writes
 * (address low and high, data, mask, Command, Message Control): MSI is
 * already off and none can be saved.
 */
static void test_msi_block_of_eight_for_five(void **state)
{
	struct umsi_sim_dev_desc d = msi_desc(32, true, true);
	struct umsi_sim_dev_stats s;
	struct umsi_irq_info i0, in;
	struct umsi_pci_info pi;
	struct umsi_pci_dev *dev;
	struct machine *m;
	uint32_t k;

	(void)state;
	/* Before anything is made: a skipped test leaves nothing behind. */
	fx_skip_on_vtd("a block's messages are IRQs of their own there, each with its own CPU (test_vtd)");
	m = machine_new(4, 0, NULL);
	dev = plug(m, DEV, &d, 0);
	umsi_sim_stats_reset(m->sim);
	assert_int_equal(umsi_pci_alloc_irq_vectors(dev, 1, 5, UMSI_PCI_IRQ_MSI),
			 5);
	s = dstats(m, DEV);
	assert_int_equal(s.cfg_reads, 1);
	assert_int_equal(s.cfg_writes, 6);
	assert_int_equal((cfg16(m, DEV, msi_off(m) + 2) &
			  UMSI_MSI_FLAGS_QSIZE) >> 4, 3);
	umsi_pci_get_info(dev, &pi);
	assert_int_equal(pi.nvec, 5);
	assert_int_equal(pi.msi_reserved, 8);
	assert_int_equal(pi.mode, UMSI_MODE_MSI);
	assert_int_equal(umsi_irq_get_info(m->sys, (uint32_t)
					   umsi_pci_irq_vector(dev, 0), &i0), 0);
	assert_int_equal(i0.vector % 8, 0);
	for (k = 0; k < 5; k++) {
		int irq = umsi_pci_irq_vector(dev, k);

		assert_int_equal(umsi_irq_get_info(m->sys, (uint32_t)irq, &in),
				 0);
		assert_int_equal(in.cpu, i0.cpu);
		assert_int_equal(in.vector, i0.vector + k);
		assert_string_equal(in.chip, "PCI-MSI");
		assert_int_equal(umsi_request_irq(m->sys, (uint32_t)irq,
						  fx_handler, 0, "t", m), 0);
	}
	/* Messages 0-4 reach their handlers; 5-7, which nobody requested,
	 * stay masked in the device (pending), never a stray vector. */
	for (k = 0; k < 8; k++)
		assert_int_equal(umsi_sim_fire(m->sim, DEV, k), k < 5 ?
				 UMSI_SIM_FIRE_SENT : UMSI_SIM_FIRE_PENDING);
	for (k = 0; k < 5; k++)
		assert_int_equal(m->handled[umsi_pci_irq_vector(dev, k)], 1);
	assert_int_equal(sstats(m).unassigned, 0);
	assert_int_equal(umsi_pci_irq_vector(dev, 5), -UMSI_EINVAL);
	umsi_pci_remove(m->sys, dev);
	machine_free(m);
}

/* ---- the set-up order ------------------------------------------------------ */

struct seen {
	struct machine *m;
	uint16_t cap;
	int n;
	struct {
		uint16_t ctrl, cmd, data;
		uint32_t addr, mask;
	} st[32];
};

static void record(void *arg, enum umsi_sim_op op)
{
	struct seen *s = arg;
	struct umsi_sim *sim = s->m->sim;

	if (op != UMSI_SIM_OP_CFG_WRITE || s->n == 32)
		return;
	s->st[s->n].ctrl = (uint16_t)umsi_sim_cfg_read(sim, DEV, s->cap + 2, 2);
	s->st[s->n].addr = umsi_sim_cfg_read(sim, DEV, s->cap + 4, 4);
	s->st[s->n].data = (uint16_t)umsi_sim_cfg_read(sim, DEV, s->cap + 12, 2);
	s->st[s->n].mask = umsi_sim_cfg_read(sim, DEV, s->cap + 16, 4);
	s->st[s->n].cmd = (uint16_t)umsi_sim_cfg_read(sim, DEV, 4, 2);
	s->n++;
}

static int first(const struct seen *s, int (*pred)(const struct seen *, int))
{
	int i;

	for (i = 0; i < s->n; i++)
		if (pred(s, i))
			return i;
	return -1;
}

static int has_addr(const struct seen *s, int i) { return s->st[i].addr != 0; }
static int has_data(const struct seen *s, int i) { return s->st[i].data != 0; }
static int has_mask(const struct seen *s, int i) { return s->st[i].mask == 0xf; }
static int has_cmd(const struct seen *s, int i)
{
	return (s->st[i].cmd & (UMSI_PCI_CMD_MASTER | UMSI_PCI_CMD_INTX_DISABLE))
	       == (UMSI_PCI_CMD_MASTER | UMSI_PCI_CMD_INTX_DISABLE);
}
static int has_enable(const struct seen *s, int i)
{
	return s->st[i].ctrl & UMSI_MSI_FLAGS_ENABLE;
}

/* MSI off -> address and data -> mask all -> INTx off -> enable. */
static void test_msi_setup_order(void **state)
{
	struct umsi_sim_dev_desc d = msi_desc(4, true, true);
	struct machine *m;
	struct umsi_pci_dev *dev;
	struct seen s;
	int a, dd, mk, c, e;

	(void)state;
	fx_skip_on_vtd("the data word is subhandle 0 there: the recorder cannot see it written");
	/* Before anything is made: a skipped test leaves nothing behind. */
	fx_skip_on_its("the data word is EventID 0 there: the recorder cannot see it written");
	m = machine_new(2, 0, NULL);
	dev = plug(m, DEV, &d, 0);
	s = (struct seen){ .m = m };
	s.cap = msi_off(m);
	umsi_sim_set_hook(m->sim, record, &s);
	assert_int_equal(umsi_pci_alloc_irq_vectors(dev, 4, 4, UMSI_PCI_IRQ_MSI),
			 4);
	umsi_sim_set_hook(m->sim, NULL, NULL);
	a = first(&s, has_addr);
	dd = first(&s, has_data);
	mk = first(&s, has_mask);
	c = first(&s, has_cmd);
	e = first(&s, has_enable);
	assert_true(a >= 0 && dd >= 0 && mk >= 0 && c >= 0 && e >= 0);
	assert_true(a < mk && dd < mk);
	assert_true(mk < c);
	assert_true(c < e);
	assert_int_equal(e, s.n - 1);
	umsi_pci_remove(m->sys, dev);
	machine_free(m);
}

/* ---- mask and pending bits ------------------------------------------------- */

/*
 * With mask bits, masking is one config write from the cached copy (the
 * minimum: the register must be written, and needs no read); the pending
 * bit is readable and the message goes out on unmask.
 */
static void test_msi_mask_and_pending_bits(void **state)
{
	struct machine *m = machine_new(2, 0, NULL);
	struct umsi_sim_dev_desc d = msi_desc(2, true, true);
	struct umsi_pci_dev *dev = plug(m, DEV, &d, 0);
	struct umsi_sim_dev_stats s;
	uint32_t irq;

	(void)state;
	assert_int_equal(umsi_pci_alloc_irq_vectors(dev, 2, 2, UMSI_PCI_IRQ_MSI),
			 2);
	irq = (uint32_t)umsi_pci_irq_vector(dev, 1);
	umsi_sim_stats_reset(m->sim);
	assert_int_equal(umsi_request_irq(m->sys, irq, fx_handler, 0, "t", m),
			 0);
	s = dstats(m, DEV);
	assert_int_equal(s.cfg_reads, 1);       /* the Bus Master check */
	assert_int_equal(s.cfg_writes, 1);      /* the unmask */
	umsi_sim_stats_reset(m->sim);
	assert_int_equal(umsi_irq_mask(m->sys, irq), 0);
	s = dstats(m, DEV);
	assert_int_equal(s.cfg_reads, 0);
	assert_int_equal(s.cfg_writes, 1);
	assert_int_equal(umsi_sim_fire(m->sim, DEV, 1), UMSI_SIM_FIRE_PENDING);
	assert_int_equal(m->handled[irq], 0);
	assert_int_equal(umsi_pci_irq_pending(dev, 1), 1);
	assert_int_equal(umsi_pci_irq_pending(dev, 0), 0);
	assert_int_equal(umsi_irq_unmask(m->sys, irq), 0);
	assert_int_equal(m->handled[irq], 1);
	assert_int_equal(umsi_pci_irq_pending(dev, 1), 0);
	umsi_pci_remove(m->sys, dev);
	machine_free(m);
}

/*
 * 32-bit, no mask bits (the seed's second chip type): 1 read and 4 writes
 * (address, data, Command, Message Control); masking is lazy, with no
 * device access, and a message taken while masked is replayed on unmask.
 */
static void test_msi_without_mask_bits(void **state)
{
	struct machine *m = machine_new(2, 0, NULL);
	struct umsi_sim_dev_desc d = msi_desc(1, false, false);
	struct umsi_pci_dev *dev = plug(m, DEV, &d, 0);
	struct umsi_sim_dev_stats s;
	uint32_t irq;

	(void)state;
	umsi_sim_stats_reset(m->sim);
	assert_int_equal(umsi_pci_alloc_irq_vectors(dev, 1, 1, UMSI_PCI_IRQ_MSI),
			 1);
	s = dstats(m, DEV);
	assert_int_equal(s.cfg_reads, 1);
	assert_int_equal(s.cfg_writes, 4);
	irq = (uint32_t)umsi_pci_irq_vector(dev, 0);
	assert_int_equal(umsi_request_irq(m->sys, irq, fx_handler, 0, "t", m),
			 0);
	assert_int_equal(umsi_pci_irq_pending(dev, 0), -UMSI_ENOTSUP);
	umsi_sim_stats_reset(m->sim);
	assert_int_equal(umsi_irq_mask(m->sys, irq), 0);
	assert_int_equal(dstats(m, DEV).cfg_writes, 0);
	assert_int_equal(umsi_sim_fire(m->sim, DEV, 0), UMSI_SIM_FIRE_SENT);
	assert_int_equal(m->handled[irq], 0);
	assert_int_equal(umsi_irq_unmask(m->sys, irq), 0);
	assert_int_equal(m->handled[irq], 1);
	umsi_pci_remove(m->sys, dev);
	machine_free(m);
}

/* ---- retargeting under fire -------------------------------------------------- */

static void move_under_fire(struct machine *m, umsi_bdf_t bdf, uint32_t irq,
			    unsigned k, uint32_t to_cpu)
{
	struct fx_gun g = { .m = m, .bdf = bdf, .k = k };
	uint64_t w = 1ull << to_cpu;
	struct umsi_cpumask mask = { &w, umsi_sim_ncpus(m->sim) };
	struct umsi_irq_info info;
	uint64_t before = m->handled[irq];

	umsi_sim_stats_reset(m->sim);
	umsi_sim_set_hook(m->sim, fx_shoot, &g);
	assert_int_equal(umsi_irq_set_affinity(m->sys, irq, &mask), 0);
	umsi_sim_set_hook(m->sim, NULL, NULL);
	umsi_sim_quiesce(m->sim);
	assert_int_equal(umsi_irq_get_info(m->sys, irq, &info), 0);
	assert_int_equal(info.cpu, to_cpu);
	assert_true(g.sent > 0);
	/* Every message reached a live vector; none was lost. */
	assert_int_equal(sstats(m).unassigned, 0);
	assert_int_equal(sstats(m).undeliverable, 0);
	assert_true(m->handled[irq] > before);
	/* After the move, a message goes to the new CPU. */
	assert_int_equal(umsi_sim_fire(m->sim, bdf, k), UMSI_SIM_FIRE_SENT);
	assert_int_equal(m->last_cpu[irq], to_cpu);
}

static void test_msi_retarget_under_fire(void **state)
{
	static const bool masks[] = { false, true };
	unsigned i;

	(void)state;
	fx_skip_on_vtd("a move rewrites the remapping entry there, never the device's message (test_vtd)");
	for (i = 0; i < 2; i++) {
		struct machine *m = machine_new(4, 0, NULL);
		struct umsi_sim_dev_desc d = msi_desc(1, true, masks[i]);
		struct umsi_pci_dev *dev = plug(m, DEV, &d, 0);
		struct umsi_irq_info info;
		uint32_t irq;

		assert_int_equal(umsi_pci_alloc_irq_vectors(dev, 1, 1,
						UMSI_PCI_IRQ_MSI), 1);
		irq = (uint32_t)umsi_pci_irq_vector(dev, 0);
		assert_int_equal(umsi_request_irq(m->sys, irq, fx_handler, 0,
						  "t", m), 0);
		assert_int_equal(umsi_irq_get_info(m->sys, irq, &info), 0);
		move_under_fire(m, DEV, irq, 0, (info.cpu + 1) % 4);
		move_under_fire(m, DEV, irq, 0, (info.cpu + 2) % 4);
		/* The second move's accesses. With mask bits: mask, address
		 * low (the CPU changed), data if the vector did, unmask: 3-4
		 * writes [3]. Without: data if it changed, then address: 1-2
		 * writes [1]. No reads: uMSI has copies of it all. */
		{
			struct umsi_sim_dev_stats s = dstats(m, DEV);

			assert_int_equal(s.cfg_reads, 0);
			/* On the ITS a move is a MAPTI, on the GICv2m a
			 * target byte: the device's message stays as it is. */
			if (fx_arm()) {
				assert_int_equal(s.cfg_writes, 0);
			} else {
				assert_true(s.cfg_writes >= (masks[i] ? 3u : 1u));
				assert_true(s.cfg_writes <= (masks[i] ? 4u : 2u));
			}
		}
		if (masks[i])
			assert_int_equal(dstats(m, DEV).msi_live_writes, 0);
		umsi_pci_remove(m->sys, dev);
		machine_free(m);
	}
}

/*
 * A live MSI-X entry is reprogrammed masked: at most 5 table writes (mask,
 * address low and high, data, restore) and 1 flushing read; the words that
 * do not change are not written. Never a write to a live entry.
 */
static void test_msix_retarget_live_entry(void **state)
{
	struct umsi_sim_dev_desc d = nvme_desc();
	struct umsi_irq_info info;
	struct umsi_sim_dev_stats s;
	struct umsi_pci_dev *dev;
	struct machine *m;
	uint32_t irq;

	(void)state;
	/* Before anything is made: a skipped test leaves nothing behind. */
	fx_skip_on_vtd("a move rewrites the remapping entry there, never the MSI-X entry (test_vtd)");
	m = machine_new(4, 0, NULL);
	dev = plug(m, NVME, &d, UMSI_PCI_ADD_FRESH);
	assert_int_equal(umsi_pci_alloc_irq_vectors(dev, 2, 2, UMSI_PCI_IRQ_MSIX),
			 2);
	irq = (uint32_t)umsi_pci_irq_vector(dev, 1);
	assert_int_equal(umsi_request_irq(m->sys, irq, fx_handler, 0, "t", m),
			 0);
	assert_int_equal(umsi_irq_get_info(m->sys, irq, &info), 0);
	move_under_fire(m, NVME, irq, 1, (info.cpu + 1) % 4);
	s = dstats(m, NVME);
	if (fx_arm()) {
		/* A MAPTI, or a GICD_ITARGETSR write: the entry is left alone. */
		assert_int_equal(s.mmio_writes + s.mmio_reads, 0);
	} else {
		assert_true(s.mmio_writes >= 3 && s.mmio_writes <= 5);
		assert_int_equal(s.mmio_reads, 1);
	}
	assert_int_equal(s.msix_live_writes, 0);
	print_message("msix live retarget: %llu table writes, %llu read\n",
		      (unsigned long long)s.mmio_writes,
		      (unsigned long long)s.mmio_reads);
	umsi_pci_remove(m->sys, dev);
	machine_free(m);
}

/* ---- shrinking ----------------------------------------------------------------- */

static int nop_mask(struct umsi_system *sys, struct umsi_irq_desc *d)
{
	(void)sys;
	(void)d;
	return 0;
}

static int nop_target(struct umsi_system *sys, struct umsi_irq_desc *d,
		      const struct umsi_msg *msg)
{
	(void)sys; (void)d; (void)msg;
	return 0;
}

static const struct umsi_irq_chip filler_chip = {
	.name = "filler", .mask = nop_mask, .unmask = nop_mask,
	.write_msg = nop_target,
};

/* Take vectors on a 1-CPU machine until @left are free. */
static int fill(struct machine *m, uint32_t left, struct umsi_irq_desc **ds)
{
	struct umsi_matrix_stats st;
	int n = 0;

	for (;;) {
		umsi_matrix_stats(umsi_system_matrix(m->sys), &st);
		if (st.available <= left)
			return n;
		assert_int_equal(umsi_irq_alloc(m->sys, &filler_chip, 1, false,
						NULL, false, &ds[n]), 0);
		n++;
	}
}

/* MSI-X and MSI shrink to what the allocator has; below min: nothing. */
static void test_vectors_shrink_to_what_fits(void **state)
{
	struct machine *m = machine_new(1, 0, NULL);
	struct umsi_sim_dev_desc dm = msi_desc(32, true, true);
	struct umsi_sim_dev_desc dx = nvme_desc();
	struct umsi_pci_dev *msi = plug(m, DEV, &dm, 0);
	struct umsi_pci_dev *msix = plug(m, NVME, &dx, 0);
	struct umsi_irq_desc *ds[256];
	struct snapshot s0;
	struct umsi_pci_info pi;
	int n, got;

	(void)state;
	n = fill(m, 6, ds);
	s0 = snap(m);
	assert_int_equal(umsi_pci_alloc_irq_vectors(msi, 8, 32, UMSI_PCI_IRQ_MSI),
			 -UMSI_ENOSPC);
	assert_int_equal(umsi_pci_alloc_irq_vectors(msix, 7, 65,
						    UMSI_PCI_IRQ_MSIX),
			 -UMSI_ENOSPC);
	{
		struct snapshot s1 = snap(m);

		assert_same(&s0, &s1);
	}
	assert_false(msi_enabled(m, DEV));
	assert_false(msix_enabled(m, NVME));
	got = umsi_pci_alloc_irq_vectors(msi, 1, 32, UMSI_PCI_IRQ_MSI);
	assert_true(got == 4 || got == 2 || got == 1);
	umsi_pci_get_info(msi, &pi);
	assert_int_equal(pi.msi_reserved, (uint32_t)got);
	umsi_pci_free_irq_vectors(msi);
	assert_int_equal(umsi_pci_alloc_irq_vectors(msix, 1, 65,
						    UMSI_PCI_IRQ_MSIX), 6);
	umsi_pci_free_irq_vectors(msix);
	umsi_irq_release(m->sys, ds, (uint32_t)n);
	umsi_pci_remove(m->sys, msi);
	umsi_pci_remove(m->sys, msix);
	machine_free(m);
}

/* ---- restore after reset ----------------------------------------------------------- */

static void test_msi_restore_after_reset(void **state)
{
	struct machine *m = machine_new(2, 0, NULL);
	struct umsi_sim_dev_desc d = msi_desc(4, true, true);
	struct umsi_pci_dev *dev = plug(m, DEV, &d, 0);
	uint16_t cap;
	uint32_t irq;

	(void)state;
	assert_int_equal(umsi_pci_alloc_irq_vectors(dev, 2, 2, UMSI_PCI_IRQ_MSI),
			 2);
	irq = (uint32_t)umsi_pci_irq_vector(dev, 1);
	assert_int_equal(umsi_request_irq(m->sys, irq, fx_handler, 0, "t", m),
			 0);
	assert_int_equal(umsi_pci_save_state(dev), 0);
	/* A reset: capability and Command back to their reset values. */
	cap = msi_off(m);
	umsi_sim_cfg_write(m->sim, DEV, cap + 2, 2, 0);
	umsi_sim_cfg_write(m->sim, DEV, cap + 4, 4, 0);
	umsi_sim_cfg_write(m->sim, DEV, cap + 8, 4, 0);
	umsi_sim_cfg_write(m->sim, DEV, cap + 12, 2, 0);
	umsi_sim_cfg_write(m->sim, DEV, cap + 16, 4, 0);
	umsi_sim_cfg_write(m->sim, DEV, UMSI_PCI_COMMAND, 2,
			   UMSI_PCI_CMD_MEMORY);
	assert_int_equal(umsi_sim_fire(m->sim, DEV, 1), UMSI_SIM_FIRE_INTX);
	umsi_sim_intx_set(m->sim, DEV, false);
	assert_int_equal(umsi_pci_restore_state(dev), 0);
	assert_true(msi_enabled(m, DEV));
	/* Vector 0 has no handler: still masked; vector 1 is live. */
	assert_int_equal(umsi_sim_cfg_read(m->sim, DEV, cap + 16, 4), 0xd);
	assert_int_equal(umsi_sim_fire(m->sim, DEV, 1), UMSI_SIM_FIRE_SENT);
	assert_int_equal(m->handled[irq], 1);
	umsi_pci_remove(m->sys, dev);
	machine_free(m);
}

/*
 * MSI-X after a reset the driver announced: no masking pass (reset masks
 * every entry), each used entry rewritten with its control word: 4N table
 * writes and 1 read.
 */
static void test_msix_restore_after_reset(void **state)
{
	struct machine *m = machine_new(2, 0, NULL);
	struct umsi_sim_dev_desc d = nvme_desc();
	struct umsi_pci_dev *dev = plug(m, NVME, &d, 0);
	struct umsi_sim_dev_stats s;
	uint16_t cap;
	uint32_t irq;
	unsigned k;

	(void)state;
	assert_int_equal(umsi_pci_alloc_irq_vectors(dev, 3, 3, UMSI_PCI_IRQ_MSIX),
			 3);
	irq = (uint32_t)umsi_pci_irq_vector(dev, 2);
	assert_int_equal(umsi_request_irq(m->sys, irq, fx_handler, 0, "t", m),
			 0);
	assert_int_equal(umsi_pci_save_state(dev), 0);
	cap = find_cap(m, NVME, UMSI_PCI_CAP_ID_MSIX);
	umsi_sim_cfg_write(m->sim, NVME, cap + 2, 2, 0);
	for (k = 0; k < 65; k++)
		umsi_sim_msix_entry_set(m->sim, NVME, k, 0, 0, 1);
	umsi_sim_stats_reset(m->sim);
	assert_int_equal(umsi_pci_restore_state(dev), 0);
	s = dstats(m, NVME);
	assert_int_equal(s.mmio_writes, 4 * 3);
	assert_int_equal(s.mmio_reads, 1);
	assert_int_equal(umsi_sim_fire(m->sim, NVME, 2), UMSI_SIM_FIRE_SENT);
	assert_int_equal(m->handled[irq], 1);
	assert_int_equal(umsi_sim_fire(m->sim, NVME, 1),
			 UMSI_SIM_FIRE_PENDING);
	umsi_pci_remove(m->sys, dev);
	machine_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_msi_block_of_eight_for_five),
		cmocka_unit_test(test_msi_setup_order),
		cmocka_unit_test(test_msi_mask_and_pending_bits),
		cmocka_unit_test(test_msi_without_mask_bits),
		cmocka_unit_test(test_msi_retarget_under_fire),
		cmocka_unit_test(test_msix_retarget_live_entry),
		cmocka_unit_test(test_vectors_shrink_to_what_fits),
		cmocka_unit_test(test_msi_restore_after_reset),
		cmocka_unit_test(test_msix_restore_after_reset),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
