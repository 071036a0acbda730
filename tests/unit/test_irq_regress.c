/* SPDX-License-Identifier: MIT */
/*
 * Regression tests for bugs a review of the IRQ core found: a failed CPU
 * offline leaving managed IRQs shut down, a managed unmaskable IRQ moved
 * without the shared-vector guarantee, a storm-disabled IRQ staying
 * disabled for a new handler, and managed MSI-X spreading over a CPU no
 * message can reach.
 *
 * The interrupt source here is a minimal device model of the test's own
 * (a message register pair with an optional mask bit and pending bit),
 * driven through the core's chip interface, so these tests depend on the
 * IRQ core and the simulator only. Each chip step makes a host call (a
 * barrier), so a hook that fires the device after every host access also
 * fires it between the chip's writes.
 */
#include "irq_fixture.h"

/* ---- review tests ---------------------------------------------------------- */

/*
 * umsi_cpu_offline() shuts a managed IRQ down, then fails on a later IRQ
 * (here a multi-message block whose source cannot be written: -UMSI_EIO).
 * The CPU stays online, but the managed IRQ stays shut down: masked, no
 * vector, and umsi_cpu_online() refuses (already online), so nothing will
 * ever restart it.
 */
static int stuck_write(struct umsi_system *sys, struct umsi_irq_desc *d,
		       const struct umsi_msg *msg)
{
	(void)sys; (void)d; (void)msg;
	return -UMSI_EIO;
}

static const struct umsi_irq_chip chip_stuck = {
	.name = "TEST-STUCK", .mask = t_mask, .unmask = t_unmask,
	.write_msg = stuck_write,
};

static void failed_offline_leaves_managed_irq_shut_down_on_online_cpu(void **s)
{
	struct machine m;
	struct tdev mt;
	struct umsi_irq_desc *blk[2];
	uint64_t w = 1ull << 3;
	struct umsi_cpumask only3 = { &w, 4 };

	(void)s;
	fx_skip_on_vtd("a move there rewrites a remapping entry, not the message: a failing chip cannot fail the offline");
	fx_skip_on_its("a move there is a MOVI, not a write_msg: a failing chip cannot fail the offline");
	fx_skip_on_gicv2m("a move there is a GICD_ITARGETSR write, not a write_msg: a failing chip cannot fail the offline");
	machine_up(&m, 4, NULL, 0);
	tdev_attach_ex(&m, &mt, &chip_masked, &only3, true);
	assert_int_equal(mt.d->cpu, 3);
	/* A 2-vector MSI block on CPU 3, with a higher IRQ number. */
	assert_int_equal(umsi_irq_alloc(m.sys, &chip_stuck, 2, true, &only3,
					false, blk), 0);
	blk[0]->chip_data = blk[1]->chip_data = &mt;
	umsi_irq_publish(m.sys, blk, 2);
	assert_int_equal(umsi_irq_activate(m.sys, blk, 2), 0);
	assert_int_equal(blk[0]->cpu, 3);
	assert_true(blk[0]->irq > mt.d->irq);

	assert_int_equal(umsi_cpu_offline(m.sys, 3), -UMSI_EIO);
	/* The offline failed: CPU 3 is still online... */
	assert_true(m.sys->cpus[3].online);
	/* ...so its managed IRQ must still work. */
	assert_false(mt.d->shutdown);
	tdev_fire(&mt);
	umsi_sim_quiesce(m.sim);
	assert_int_equal(mt.handled, 1);

	umsi_irq_release(m.sys, blk, 2);
	tdev_detach(&m, &mt);
	machine_down(&m);
}

/*
 * A managed IRQ whose chip has no mask bit is moved by umsi_cpu_offline()
 * with umsi_matrix_alloc_managed() alone: the new vector is not held and
 * published on the old CPU, as struct umsi_irq_chip promises for such
 * chips. The half-written message (old address, new data) reaches an
 * unowned vector on the old CPU: spurious, and the interrupt is lost.
 */
static void managed_unmaskable_irq_moved_by_offline_loses_nothing(void **s)
{
	struct machine m;
	struct tdev other, mt;
	struct fire_hook h = { 0 };
	uint64_t w2 = 1ull << 2, w12 = (1ull << 1) | (1ull << 2);
	struct umsi_cpumask only2 = { &w2, 4 }, cpus12 = { &w12, 4 };
	uint32_t c;
	uint64_t spurious = 0;

	(void)s;
	machine_up(&m, 4, NULL, 0);
	/* Make CPU 2's free vectors differ from CPU 1's. */
	tdev_attach(&m, &other, &chip_masked, &only2);
	tdev_attach_ex(&m, &mt, &chip_unmasked, &cpus12, true);
	assert_int_equal(mt.d->cpu, 1);
	mt.allowed[0] = 1;
	mt.allowed[1] = 2;
	h.t = &mt;
	umsi_sim_set_hook(m.sim, fire_after_access, &h);
	assert_int_equal(umsi_cpu_offline(m.sys, 1), 0);
	umsi_sim_quiesce(m.sim);
	umsi_sim_set_hook(m.sim, NULL, NULL);
	assert_int_equal(mt.d->cpu, 2);
	for (c = 0; c < 4; c++)
		spurious += umsi_spurious_count(m.sys, c);
	assert_true(mt.fired > 0);
	print_message("    fired %llu handled %llu spurious %llu\n",
		      (unsigned long long)mt.fired,
		      (unsigned long long)mt.handled,
		      (unsigned long long)spurious);
	assert_int_equal(mt.handled, mt.fired);
	assert_int_equal(spurious, 0);

	tdev_detach(&m, &mt);
	tdev_detach(&m, &other);
	machine_down(&m);
}

/*
 * Storm detection disables an IRQ for good: umsi_free_irq() of its handler
 * and a new umsi_request_irq() (a driver reloading) leave it disabled, and
 * the new handler never runs. Linux clears IRQS_SPURIOUS_DISABLED when the
 * first handler is set up (__setup_irq).
 */
static void a_new_handler_after_a_storm_gets_its_interrupts(void **s)
{
	struct machine m;
	struct tdev t;
	struct umsi_irq_info info;
	int i;

	(void)s;
	machine_up(&m, 2, NULL, 0);
	tdev_attach(&m, &t, &chip_masked, NULL);
	t.answer = UMSI_IRQ_NONE;
	for (i = 0; i < 100000; i++) {
		tdev_fire(&t);
		umsi_sim_quiesce(m.sim);
	}
	assert_int_equal(umsi_irq_get_info(m.sys, t.d->irq, &info), 0);
	assert_true(info.disabled);
	/* The driver goes away and comes back, its device fixed. */
	assert_int_equal(umsi_free_irq(m.sys, t.d->irq, &t), 0);
	t.answer = UMSI_IRQ_HANDLED;
	t.handled = 0;
	t.outstanding = 0;
	t.pending = false;
	assert_int_equal(umsi_request_irq(m.sys, t.d->irq, t_handler, 0,
					  "tdev", &t), 0);
	tdev_fire(&t);
	umsi_sim_quiesce(m.sim);
	assert_int_equal(t.handled, 1);
	tdev_detach(&m, &t);
	machine_down(&m);
}


/*
 * umsi_irq_release() does not take the descriptor's busy flag, so a
 * release that runs while umsi_irq_set_affinity() is between steps 1 and 4
 * of a move (here: inside the chip's set_target, where the move runs
 * without the lock) frees the descriptor under the move. The new vector's
 * slot, published in step 1, is never unpublished: a dangling pointer in
 * the vector table that the next interrupt on it dereferences; the move
 * then writes the freed descriptor and frees the old vector a second time,
 * and the new vector leaks. (Undefined behaviour: run under ASan to see
 * the use-after-free itself.)
 */
/*
 * UMSI_PCI_IRQ_AFFINITY on a machine with a CPU no message can name (APIC ID
 * 300 without extended destination IDs; on the IMSIC, a hart without an
 * interrupt file): spread_mask() gives vector 3
 * the mask {CPU 3}, umsi_irq_alloc() limits it to reachable CPUs, the
 * empty mask makes umsi_matrix_reserve_managed() return -UMSI_EINVAL, and
 * alloc_irqs() treats that as fatal: the whole request fails, even with
 * min = 1 and three good CPUs.
 */
static void managed_msix_spread_survives_an_unreachable_cpu(void **s)
{
	static const uint32_t ids[] = { 0, 1, 2, 300 };
	struct umsi_sim_config cfg = { .ncpus = 4, .apic_ids = ids };
	struct umsi_sim_dev_desc d;
	struct umsi_sim *sim;
	struct umsi_system *sys;
	struct umsi_pci_dev *dev = NULL;
	umsi_bdf_t bdf = UMSI_BDF(0, 0, 3, 0);
	int n;

	(void)s;
	memset(&d, 0, sizeof(d));
	d.vendor = 0x1b36;
	d.device = 0x0010;
	d.class_code = 0x010802;
	d.bars[0].size = 0x4000;
	d.bars[0].is64 = true;
	d.msix.present = true;
	d.msix.nentries = 8;
	d.msix.table_bar = 0;
	d.msix.table_offset = 0x2000;
	d.msix.pba_bar = 0;
	d.msix.pba_offset = 0x3000;
	d.pcie.present = true;
	d.pcie.type = UMSI_PCIE_TYPE_ENDPOINT;
	/* On the IMSIC CPU 3 is unreachable too: its hart has no file. */
	fx_sim_config(&cfg);
	sim = umsi_sim_create(&cfg);
	assert_non_null(sim);
	assert_int_equal(fx_system_create_nofile(umsi_sim_host_ops(), sim, NULL,
						 1ull << 3, &sys), 0);
	fx_set_dispatch(sim, sys);
	assert_int_equal(umsi_sim_add_device(sim, bdf, &d), 0);
	assert_int_equal(umsi_pci_add(sys, bdf, NULL, 0, &dev), 0);
	n = umsi_pci_alloc_irq_vectors(dev, 1, 4, UMSI_PCI_IRQ_MSIX |
				       UMSI_PCI_IRQ_AFFINITY);
	print_message("    umsi_pci_alloc_irq_vectors: %d\n", n);
	assert_true(n >= 1);
	umsi_pci_remove(sys, dev);
	umsi_system_destroy(sys);
	umsi_sim_destroy(sim);
}

/* Fire @t @n times, each handled before the next. */
static void fire_n(struct machine *m, struct tdev *t, unsigned n)
{
	while (n--) {
		tdev_fire(t);
		umsi_sim_quiesce(m->sim);
	}
}

/*
 * Counts live where interrupts arrive (per CPU and vector) and follow the
 * IRQ into its history when it moves: the per-CPU figures stay exact, and
 * the next owner of a vector starts from zero.
 */
static void per_cpu_counts_stay_exact_across_moves(void **s)
{
	struct machine m;
	struct tdev t, u;
	uint64_t w;
	struct umsi_cpumask mask = { &w, 2 };
	struct umsi_irq_info info;
	uint32_t c0, c1;

	(void)s;
	machine_up(&m, 2, NULL, 0);
	tdev_attach(&m, &t, &chip_masked, NULL);
	c0 = t.d->cpu;
	c1 = 1 - c0;
	fire_n(&m, &t, 5);
	w = 1ull << c1;
	t.allowed[0] = t.allowed[1] = c1;
	assert_int_equal(umsi_irq_set_affinity(m.sys, t.d->irq, &mask), 0);
	fire_n(&m, &t, 3);
	w = 1ull << c0;
	t.allowed[0] = t.allowed[1] = c0;
	assert_int_equal(umsi_irq_set_affinity(m.sys, t.d->irq, &mask), 0);
	fire_n(&m, &t, 2);
	assert_int_equal(umsi_irq_count(m.sys, t.d->irq, c0), 7);
	assert_int_equal(umsi_irq_count(m.sys, t.d->irq, c1), 3);
	assert_int_equal(umsi_irq_get_info(m.sys, t.d->irq, &info), 0);
	assert_int_equal(info.total, 10);
	assert_int_equal(t.handled, 10);
	/* The vector it held on c1 is free again: a new IRQ there starts at 0. */
	w = 1ull << c1;
	tdev_attach(&m, &u, &chip_masked, &mask);
	assert_int_equal(u.d->cpu, c1);
	assert_int_equal(umsi_irq_count(m.sys, u.d->irq, c1), 0);
	fire_n(&m, &u, 1);
	assert_int_equal(umsi_irq_count(m.sys, u.d->irq, c1), 1);
	assert_int_equal(umsi_irq_count(m.sys, t.d->irq, c1), 3);
	tdev_detach(&m, &u);
	tdev_detach(&m, &t);
	machine_down(&m);
}

/* Bytes the library holds for @n IRQs with a handler each, on @ncpus. */
static uint64_t bytes_for_irqs(uint32_t ncpus, unsigned n)
{
	struct machine m;
	struct tdev *t = calloc(n, sizeof(*t));
	struct umsi_sim_leaks a, b;
	unsigned i;

	machine_up(&m, ncpus, NULL, 0);
	umsi_sim_leaks(m.sim, &a);
	for (i = 0; i < n; i++)
		tdev_attach(&m, &t[i], &chip_masked, NULL);
	umsi_sim_leaks(m.sim, &b);
	for (i = 0; i < n; i++)
		tdev_detach(&m, &t[i]);
	machine_down(&m);
	free(t);
	return (b.alloc_bytes - a.alloc_bytes) / n;
}

/* Memory per IRQ does not grow with the machine. */
static void memory_per_irq_is_independent_of_cpu_count(void **s)
{
	uint64_t small, big;

	(void)s;
	fx_skip_on_its("1024 CPUs of FX_ITS_NVEC LPIs exceed the model's 16 INTID bits");
	fx_skip_on_gicv2m("a GICv2 distributor targets 8 CPU interfaces, not 1024 CPUs");
	small = bytes_for_irqs(4, 64);
	big = bytes_for_irqs(1024, 64);
	print_message("bytes per IRQ: %llu at 4 CPUs, %llu at 1024 CPUs\n",
		      (unsigned long long)small, (unsigned long long)big);
	assert_int_equal(small, big);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(failed_offline_leaves_managed_irq_shut_down_on_online_cpu),
		cmocka_unit_test(managed_unmaskable_irq_moved_by_offline_loses_nothing),
		cmocka_unit_test(a_new_handler_after_a_storm_gets_its_interrupts),
		cmocka_unit_test(managed_msix_spread_survives_an_unreachable_cpu),
		cmocka_unit_test(per_cpu_counts_stay_exact_across_moves),
		cmocka_unit_test(memory_per_irq_is_independent_of_cpu_count),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
