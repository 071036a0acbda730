/* SPDX-License-Identifier: MIT */
/*
 * The IRQ core on the simulator: dispatch, spurious vectors, shared
 * handlers, storm detection, live migration under fire, CPU hotplug and
 * failure injection.
 *
 * The interrupt source here is a minimal device model of the test's own
 * (a message register pair with an optional mask bit and pending bit),
 * driven through the core's chip interface, so these tests depend on the
 * IRQ core and the simulator only. Each chip step makes a host call (a
 * barrier), so a hook that fires the device after every host access also
 * fires it between the chip's writes.
 */
#include "irq_fixture.h"

/* ---- tests ------------------------------------------------------------------ */

static void dispatch_runs_the_handler_once_on_the_assigned_cpu(void **state)
{
	static const uint32_t ids[] = { 0, 2, 4, 6 };
	struct machine m;
	struct tdev t;
	int i;

	(void)state;
	machine_up(&m, 4, ids, 0);
	tdev_attach(&m, &t, &chip_masked, NULL);
	for (i = 0; i < 100; i++) {
		tdev_fire(&t);
		umsi_sim_quiesce(m.sim);
	}
	assert_int_equal(t.fired, 100);
	assert_int_equal(t.handled, 100);
	assert_int_equal(t.wrong_cpu, 0);
	assert_int_equal(umsi_irq_count(m.sys, t.d->irq, t.d->cpu), 100);
	tdev_detach(&m, &t);
	machine_down(&m);
}

static void vectors_spread_over_cpus_by_free_count(void **state)
{
	struct machine m;
	struct tdev t[4];
	unsigned load[4] = { 0 };
	int i;

	(void)state;
	/* Without an 8259 in use every CPU has the same room: one each. */
	machine_up(&m, 4, NULL, 0);
	for (i = 0; i < 4; i++) {
		tdev_attach(&m, &t[i], &chip_masked, NULL);
		load[t[i].d->cpu]++;
	}
	for (i = 0; i < 4; i++) {
		assert_int_equal(load[i], 1);
		tdev_detach(&m, &t[i]);
		load[i] = 0;
	}
	machine_down(&m);
	/* The 8259 and its vectors 0x30-0x3f are x86's alone. */
	if (!fx_x86())
		return;
	/*
	 * A kernel that takes ISA interrupts through the 8259 says so: CPU 0
	 * holds the 16 legacy ISA vectors, so it has the fewest free and
	 * gets nothing until the others have 16 more in use; the rest take
	 * turns.
	 */
	machine_up(&m, 4, NULL, UMSI_PLAT_ISA_PIC);
	for (i = 0; i < 4; i++) {
		tdev_attach(&m, &t[i], &chip_masked, NULL);
		load[t[i].d->cpu]++;
	}
	assert_int_equal(load[0], 0);
	assert_int_equal(load[1], 2);
	assert_int_equal(load[2], 1);
	assert_int_equal(load[3], 1);
	for (i = 0; i < 4; i++)
		tdev_detach(&m, &t[i]);
	machine_down(&m);
}

static void spread_classes_puts_vectors_in_different_priority_classes(void **s)
{
	struct umsi_sim_config scfg = { .ncpus = 1 };
	struct umsi_config cfg = { .spread_classes = true };
	struct machine m;
	struct tdev t[6];
	unsigned classes = 0;
	int i;

	(void)s;
	fx_skip_on_its("LPIs have no priority classes: the identity is global, the CPU's local one only balances");
	fx_skip_on_gicv2m("the frame's SPIs are one priority: the identity is global, the CPU's local one only balances");
	fx_sim_config(&scfg);
	m.sim = umsi_sim_create(&scfg);
	umsi_sim_leaks(m.sim, &m.leaks0);
	assert_int_equal(fx_system_create(m.sim, &cfg, &m.sys), 0);
	fx_set_dispatch(m.sim, m.sys);
	for (i = 0; i < 6; i++) {
		tdev_attach(&m, &t[i], &chip_masked, NULL);
		classes |= 1u << (t[i].d->vector >> 4);
	}
	/* Six vectors, six priority classes (lowest-free would use two). */
	assert_int_equal(__builtin_popcount(classes), 6);
	for (i = 0; i < 6; i++)
		tdev_detach(&m, &t[i]);
	machine_down(&m);
}

static void a_vector_nobody_owns_is_spurious_and_reaches_no_driver(void **s)
{
	struct machine m;
	struct umsi_sim_stats st;
	struct umsi_msg msg;

	(void)s;
	fx_skip_on_vtd("a compatibility-format message is a fault there (blocked by the unit; test_vtd)");
	fx_skip_on_its("a raw LPI needs a device's mapped event: no message without one reaches a CPU");
	fx_skip_on_gicv2m("an SPI nobody owns is disabled in the distributor: it reaches no CPU");
	machine_up(&m, 2, NULL, 0);
	fx_raw_msg(m.sim, 1, 0x99, &msg);
	umsi_sim_msg_write(m.sim, msg.address, msg.data);
	umsi_sim_quiesce(m.sim);
	assert_int_equal(umsi_spurious_count(m.sys, 1), 1);
	umsi_sim_stats(m.sim, &st);
	assert_int_equal(st.unassigned, 1);
	assert_int_equal(st.eoi_missing, 0);
	machine_down(&m);
}

static int share_a(uint32_t irq, void *arg)
{
	(void)irq;
	(*(int *)arg)++;
	return UMSI_IRQ_NONE;
}

static void shared_handlers_all_run_and_unshared_requests_are_refused(void **s)
{
	struct machine m;
	struct tdev t;
	int a = 0, b = 0, c = 0;

	(void)s;
	machine_up(&m, 2, NULL, 0);
	memset(&t, 0, sizeof(t));
	t.sys = m.sys;
	t.sim = m.sim;
	t.maskable = true;
	t.masked = true;
	assert_int_equal(umsi_irq_alloc(m.sys, &chip_masked, 1, false, NULL,
					false, &t.d), 0);
	t.d->chip_data = &t;
	tdev_set_rid(&t);
	umsi_irq_publish(m.sys, &t.d, 1);
	assert_int_equal(umsi_irq_program(m.sys, t.d), 0);
	assert_int_equal(umsi_irq_activate(m.sys, &t.d, 1), 0);
	assert_int_equal(umsi_request_irq(m.sys, t.d->irq, share_a,
					  UMSI_IRQF_SHARED, "a", &a), 0);
	assert_int_equal(umsi_request_irq(m.sys, t.d->irq, share_a, 0, "x",
					  &t), -UMSI_EBUSY);
	assert_int_equal(umsi_request_irq(m.sys, t.d->irq, share_a,
					  UMSI_IRQF_SHARED, "b", &b), 0);
	tdev_fire(&t);
	umsi_sim_quiesce(m.sim);
	assert_int_equal(a, 1);
	assert_int_equal(b, 1);
	assert_int_equal(umsi_free_irq(m.sys, t.d->irq, &a), 0);
	t.outstanding = 0;
	tdev_fire(&t);
	umsi_sim_quiesce(m.sim);
	assert_int_equal(a, 1);
	assert_int_equal(b, 2);
	/*
	 * A handler added after the one left alone (dispatch's direct call
	 * for a lone handler must give way to the list), then taken off the
	 * tail: the one left is called alone again.
	 */
	assert_int_equal(umsi_request_irq(m.sys, t.d->irq, share_a,
					  UMSI_IRQF_SHARED, "c", &c), 0);
	t.outstanding = 0;
	tdev_fire(&t);
	umsi_sim_quiesce(m.sim);
	assert_int_equal(b, 3);
	assert_int_equal(c, 1);
	assert_int_equal(umsi_free_irq(m.sys, t.d->irq, &c), 0);
	t.outstanding = 0;
	tdev_fire(&t);
	umsi_sim_quiesce(m.sim);
	assert_int_equal(b, 4);
	assert_int_equal(c, 1);
	assert_int_equal(umsi_free_irq(m.sys, t.d->irq, &b), 0);
	assert_int_equal(umsi_free_irq(m.sys, t.d->irq, &b), -UMSI_ENOENT);
	umsi_irq_release(m.sys, &t.d, 1);
	machine_down(&m);
}

static void a_stuck_source_is_disabled_and_the_others_keep_working(void **s)
{
	struct machine m;
	struct tdev stuck, good;
	struct umsi_irq_info info;
	int i;

	(void)s;
	machine_up(&m, 2, NULL, 0);
	tdev_attach(&m, &stuck, &chip_masked, NULL);
	tdev_attach(&m, &good, &chip_masked, NULL);
	stuck.answer = UMSI_IRQ_NONE;
	for (i = 0; i < 100000; i++) {
		tdev_fire(&stuck);
		umsi_sim_quiesce(m.sim);
		if (i % 1000 == 0) {
			tdev_fire(&good);
			umsi_sim_quiesce(m.sim);
		}
	}
	assert_int_equal(umsi_irq_get_info(m.sys, stuck.d->irq, &info), 0);
	assert_true(info.disabled);
	assert_true(stuck.masked);      /* masked at the device */
	assert_non_null(strstr(umsi_sim_log_text(m.sim), "nobody cared"));
	/* The stuck one no longer reaches its handler; the good one does. */
	stuck.outstanding = 0;
	tdev_fire(&stuck);
	umsi_sim_quiesce(m.sim);
	assert_int_equal(stuck.handled, 100000);
	tdev_fire(&good);
	umsi_sim_quiesce(m.sim);
	assert_int_equal(good.handled, 101);
	assert_int_equal(umsi_irq_get_info(m.sys, good.d->irq, &info), 0);
	assert_false(info.disabled);
	tdev_detach(&m, &stuck);
	tdev_detach(&m, &good);
	machine_down(&m);
}

static void rare_unhandled_interrupts_after_quiet_spells_never_disable(void **s)
{
	struct machine m;
	struct tdev t;
	struct umsi_irq_info info;
	int i;

	(void)s;
	machine_up(&m, 1, NULL, 0);
	tdev_attach(&m, &t, &chip_masked, NULL);
	t.answer = UMSI_IRQ_NONE;
	/*
	 * Every interrupt is unhandled, but each comes after 200 ms of
	 * quiet: the unhandled count restarts each time (Linux's rule), so
	 * 100,000 of them never add up to a storm.
	 */
	for (i = 0; i < 100000; i++) {
		umsi_sim_clock_advance(m.sim, 200000000ull);
		tdev_fire(&t);
		umsi_sim_quiesce(m.sim);
	}
	assert_int_equal(umsi_irq_get_info(m.sys, t.d->irq, &info), 0);
	assert_false(info.disabled);
	tdev_detach(&m, &t);
	machine_down(&m);
}

/* Migration under fire. */
static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void migrate_under_fire(const struct umsi_irq_chip *chip,
			       uint32_t plat, unsigned moves)
{
	static const uint32_t ids[] = { 0, 2, 4, 6, 300, 301 };
	uint32_t ncpus = plat & UMSI_PLAT_EXT_DEST_ID ? 6 : 4;
	struct machine m;
	struct tdev t;
	struct fire_hook h = { 0 };
	struct umsi_matrix_stats before, after;
	uint64_t seed = 0x2545f4914f6cdd1dull, w;
	struct umsi_cpumask mask = { &w, ncpus };
	unsigned i;

	machine_up(&m, ncpus, ids, plat);
	umsi_matrix_stats(m.sys->matrix, &before);
	tdev_attach(&m, &t, chip, NULL);
	h.t = &t;
	umsi_sim_set_hook(m.sim, fire_after_access, &h);
	for (i = 0; i < moves; i++) {
		uint32_t to = (uint32_t)(xorshift(&seed) % ncpus);

		if (to == t.d->cpu)
			to = (to + 1) % ncpus;
		w = 1ull << to;
		t.allowed[0] = t.d->cpu;
		t.allowed[1] = to;
		assert_int_equal(umsi_irq_set_affinity(m.sys, t.d->irq, &mask),
				 0);
		assert_int_equal(t.d->cpu, to);
		umsi_sim_quiesce(m.sim);
		/* Every fire so far produced exactly one handler call. */
		assert_int_equal(t.handled, t.fired);
		assert_int_equal(t.outstanding, 0);
	}
	umsi_sim_set_hook(m.sim, NULL, NULL);
	assert_int_equal(t.wrong_cpu, 0);
	assert_true(h.injected > moves);
	print_message("    %u moves, %llu fires injected, %llu handled\n",
		      moves, (unsigned long long)t.fired,
		      (unsigned long long)t.handled);
	tdev_detach(&m, &t);
	umsi_matrix_stats(m.sys->matrix, &after);
	assert_memory_equal(&before, &after, sizeof(before));
	assert_int_equal(umsi_matrix_check(m.sys->matrix), 0);
	machine_down(&m);
}

static void ten_thousand_moves_under_fire_lose_nothing_maskable(void **s)
{
	(void)s;
	migrate_under_fire(&chip_masked, 0, getenv("MOVES") ? atoi(getenv("MOVES")) : 10000);
}

static void ten_thousand_moves_under_fire_lose_nothing_unmaskable(void **s)
{
	(void)s;
	migrate_under_fire(&chip_unmasked, 0, 10000);
}

static void moves_reach_apic_ids_above_255_with_extended_dest_id(void **s)
{
	(void)s;
	fx_skip_on_vtd("the extended destination ID is a compatibility-format extension; VT-d names such IDs through EIM (test_vtd)");
	migrate_under_fire(&chip_masked, UMSI_PLAT_EXT_DEST_ID, 2000);
}

static void a_cpu_messages_cannot_name_is_never_a_target(void **s)
{
	static const uint32_t ids[] = { 0, 1, 255, 300 };
	struct machine m;
	struct tdev t[8];
	uint64_t w = 0xc;       /* only the unreachable CPUs 2 and 3 */
	struct umsi_cpumask mask = { &w, 4 };
	int i;

	(void)s;
	/* x86: APIC IDs 255 and 300 without extended destination IDs;
	 * IMSIC: harts 2 and 3 configured without an interrupt file. */
	machine_up_nofile(&m, 4, ids, 0, 0xc);
	for (i = 0; i < 8; i++) {
		tdev_attach(&m, &t[i], &chip_masked, NULL);
		assert_true(t[i].d->cpu < 2);
	}
	assert_int_equal(umsi_irq_set_affinity(m.sys, t[0].d->irq, &mask),
			 -UMSI_EINVAL);
	for (i = 0; i < 8; i++)
		tdev_detach(&m, &t[i]);
	machine_down(&m);
}

static void offline_moves_irqs_away_and_online_takes_them_back(void **s)
{
	struct machine m;
	struct tdev t[6], mt;
	uint64_t w = 1ull << 3;
	struct umsi_cpumask only3 = { &w, 4 };
	struct umsi_matrix_stats before, after;
	int i;

	(void)s;
	machine_up(&m, 4, NULL, 0);
	umsi_matrix_stats(m.sys->matrix, &before);
	for (i = 0; i < 6; i++)
		tdev_attach(&m, &t[i], &chip_masked, NULL);
	/* A managed IRQ whose mask is CPU 3 alone. */
	tdev_attach_ex(&m, &mt, &chip_masked, &only3, true);
	assert_int_equal(mt.d->cpu, 3);

	assert_int_equal(umsi_cpu_offline(m.sys, 3), 0);
	for (i = 0; i < 6; i++) {
		assert_int_not_equal(t[i].d->cpu, 3);
		t[i].allowed[0] = t[i].allowed[1] = t[i].d->cpu;
		tdev_fire(&t[i]);
	}
	assert_true(mt.d->shutdown);
	tdev_fire(&mt);         /* masked while shut down: stays pending */
	umsi_sim_quiesce(m.sim);
	for (i = 0; i < 6; i++)
		assert_int_equal(t[i].handled, 1);
	assert_int_equal(mt.handled, 0);
	assert_int_equal(umsi_cpu_online(m.sys, 3), 0);
	umsi_sim_quiesce(m.sim);
	assert_false(mt.d->shutdown);
	assert_int_equal(mt.d->cpu, 3);
	assert_int_equal(mt.handled, 1);  /* delivered on restart */
	assert_int_equal(umsi_matrix_check(m.sys->matrix), 0);

	for (i = 0; i < 6; i++)
		tdev_detach(&m, &t[i]);
	tdev_detach(&m, &mt);
	umsi_matrix_stats(m.sys->matrix, &after);
	assert_memory_equal(&before, &after, sizeof(before));
	machine_down(&m);
}

static void managed_irqs_without_a_mask_reserve_on_every_cpu_and_give_back(void **s)
{
	struct machine m;
	struct umsi_irq_desc *d[3];
	struct umsi_matrix_stats before, during, after;

	(void)s;
	machine_up(&m, 4, NULL, 0);
	umsi_matrix_stats(m.sys->matrix, &before);
	assert_int_equal(umsi_irq_alloc(m.sys, &chip_masked, 3, false, NULL,
					true, d), 0);
	umsi_matrix_stats(m.sys->matrix, &during);
	/* One reservation per IRQ on each of the 4 CPUs. */
	assert_int_equal(during.managed, before.managed + 3 * 4);
	assert_int_equal(during.managed_allocated, 3);
	umsi_irq_release(m.sys, d, 3);
	umsi_matrix_stats(m.sys->matrix, &after);
	assert_memory_equal(&before, &after, sizeof(before));
	machine_down(&m);
}

static void offline_is_refused_when_the_other_cpus_have_no_room(void **s)
{
	struct machine m;
	struct tdev *t, on0;
	uint64_t w = 2;
	struct umsi_cpumask cpu1 = { &w, 2 };
	struct umsi_matrix_cpu_stats cs;
	struct umsi_matrix_stats before, after;
	unsigned i, n;

	(void)s;
	fx_skip_on_gicv2m("the frame's 64 SPIs are shared by every CPU: they run out before a CPU fills");
	machine_up(&m, 2, NULL, 0);
	/* CPU 1 full, one IRQ on CPU 0: CPU 0 cannot go. */
	assert_int_equal(umsi_matrix_cpu_stats(m.sys->matrix, 1, &cs), 0);
	n = cs.available;
	t = calloc(n, sizeof(*t));
	for (i = 0; i < n; i++)
		tdev_attach(&m, &t[i], &chip_masked, &cpu1);
	tdev_attach(&m, &on0, &chip_masked, NULL);
	assert_int_equal(on0.d->cpu, 0);
	umsi_matrix_stats(m.sys->matrix, &before);
	assert_int_equal(umsi_cpu_offline(m.sys, 0), -UMSI_ENOSPC);
	umsi_matrix_stats(m.sys->matrix, &after);
	assert_memory_equal(&before, &after, sizeof(before));
	assert_int_equal(on0.d->cpu, 0);
	/* With room on CPU 1 it goes, and its IRQ moves there. */
	tdev_detach(&m, &t[0]);
	assert_int_equal(umsi_cpu_offline(m.sys, 0), 0);
	assert_int_equal(on0.d->cpu, 1);
	on0.allowed[0] = on0.allowed[1] = 1;
	tdev_fire(&on0);
	umsi_sim_quiesce(m.sim);
	assert_int_equal(on0.handled, 1);
	/* The last online CPU cannot go. */
	assert_int_equal(umsi_cpu_offline(m.sys, 1), -UMSI_EBUSY);
	assert_int_equal(umsi_cpu_online(m.sys, 0), 0);
	for (i = 1; i < n; i++)
		tdev_detach(&m, &t[i]);
	tdev_detach(&m, &on0);
	free(t);
	machine_down(&m);
}

static void a_failed_host_call_during_a_move_leaves_the_irq_working(void **s)
{
	struct machine m;
	struct tdev t;
	uint64_t w;
	struct umsi_cpumask mask = { &w, 4 };
	struct umsi_matrix_stats before, after;
	uint64_t k;
	int ret;

	(void)s;
	machine_up(&m, 4, NULL, 0);
	tdev_attach(&m, &t, &chip_masked, NULL);
	for (k = 1; k < 40; k++) {
		uint32_t from = t.d->cpu, to = (from + 1) % 4;

		umsi_matrix_stats(m.sys->matrix, &before);
		w = 1ull << to;
		umsi_sim_fail_at(m.sim, k, -UMSI_EIO);
		ret = umsi_irq_set_affinity(m.sys, t.d->irq, &mask);
		umsi_sim_fail_at(m.sim, 0, 0);
		umsi_matrix_stats(m.sys->matrix, &after);
		if (ret) {
			assert_int_equal(t.d->cpu, from);
			assert_memory_equal(&before, &after, sizeof(before));
		}
		t.allowed[0] = t.allowed[1] = t.d->cpu;
		tdev_fire(&t);
		umsi_sim_quiesce(m.sim);
		assert_int_equal(t.handled, t.fired);
		assert_int_equal(umsi_matrix_check(m.sys->matrix), 0);
	}
	tdev_detach(&m, &t);
	machine_down(&m);
}

static void system_create_fails_cleanly_at_every_host_call(void **s)
{
	struct umsi_sim_config cfg = { .ncpus = 4 };
	uint64_t k;

	(void)s;
	fx_sim_config(&cfg);
	for (k = 1; k < 64; k++) {
		struct umsi_sim *sim = umsi_sim_create(&cfg);
		struct umsi_sim_leaks l0, l1;
		struct umsi_system *sys = NULL;
		int ret;

		umsi_sim_leaks(sim, &l0);
		umsi_sim_fail_at(sim, k, -UMSI_EIO);
		ret = fx_system_create(sim, NULL, &sys);
		umsi_sim_fail_at(sim, 0, 0);
		if (ret == 0) {
			umsi_system_destroy(sys);
		}
		umsi_sim_leaks(sim, &l1);
		assert_int_equal(l1.allocs, l0.allocs);
		assert_int_equal(l1.locks, l0.locks);
		umsi_sim_destroy(sim);
	}
}

/*
 * umsi/host.h's contract, as umsi_system_create() checks it: a missing
 * required operation, half of a pair, and contradictory platform facts
 * are refused with a log line naming them, before anything is allocated;
 * the MMIO accessors may be left out (uMSI then uses volatile accesses).
 */
static int contract_create(const struct umsi_host_ops *o, uint32_t plat,
			   char *log, size_t len)
{
	struct umsi_sim_config cfg = { .ncpus = 2, .plat_flags = plat };
	struct umsi_sim *sim;
	struct umsi_sim_leaks l0, l1;
	struct umsi_system *sys = NULL;
	int ret;

	fx_sim_config(&cfg);
	sim = umsi_sim_create(&cfg);
	umsi_sim_leaks(sim, &l0);
	ret = fx_system_create_ops(o, sim, NULL, &sys);
	snprintf(log, len, "%s", umsi_sim_log_text(sim));
	if (!ret)
		umsi_system_destroy(sys);
	umsi_sim_leaks(sim, &l1);
	assert_int_equal(l1.allocs, l0.allocs);
	umsi_sim_destroy(sim);
	return ret;
}

static void system_create_checks_the_host_contract(void **s)
{
	struct umsi_host_ops o;
	char log[4096];

	(void)s;
	o = *umsi_sim_host_ops();
	o.irq_pending = NULL;
	if (fx_gicv2m()) {
		/* A pending SPI follows its target: the GICv2m never asks. */
		assert_int_equal(contract_create(&o, 0, log, sizeof(log)), 0);
	} else {
		assert_int_equal(contract_create(&o, 0, log, sizeof(log)),
				 -UMSI_EINVAL);
		assert_non_null(strstr(log, "irq_pending"));
	}
	/* The x86 back ends end interrupts and resend through the host. */
	if (fx_x86() || fx_remap()) {
		o = *umsi_sim_host_ops();
		o.eoi = NULL;
		assert_int_equal(contract_create(&o, 0, log, sizeof(log)),
				 -UMSI_EINVAL);
		assert_non_null(strstr(log, "eoi missing"));
		o = *umsi_sim_host_ops();
		o.send_ipi = NULL;
		assert_int_equal(contract_create(&o, 0, log, sizeof(log)),
				 -UMSI_EINVAL);
		assert_non_null(strstr(log, "send_ipi missing"));
	}
	/* Remapping is an x86 platform fact; the IMSIC and ITS back ends ignore it. */
	if (fx_x86()) {
		o = *umsi_sim_host_ops();
		o.remap_compose = NULL;
		o.remap_free = NULL;
		assert_int_equal(contract_create(&o, UMSI_PLAT_IRQ_REMAP, log,
						 sizeof(log)), -UMSI_EINVAL);
		assert_non_null(strstr(log, "UMSI_PLAT_IRQ_REMAP"));
		assert_non_null(strstr(log, "remap_compose"));
	}
	o = *umsi_sim_host_ops();
	o.mmio_write32 = NULL;
	assert_int_equal(contract_create(&o, 0, log, sizeof(log)), -UMSI_EINVAL);
	assert_non_null(strstr(log, "mmio_read32/mmio_write32"));
	o = *umsi_sim_host_ops();
	o.gsi_program = NULL;
	assert_int_equal(contract_create(&o, 0, log, sizeof(log)), -UMSI_EINVAL);
	assert_non_null(strstr(log, "intx_route/gsi_program"));
	o = *umsi_sim_host_ops();
	o.cpu_hwid = NULL;
	assert_int_equal(contract_create(&o, 0, log, sizeof(log)), -UMSI_EINVAL);
	assert_non_null(strstr(log, "cpu_hwid"));
	/* Optional: both MMIO accessors, and log. The simulator's ITS and
	 * VT-d unit are reachable only through the accessors (their
	 * registers act). */
	if (fx_its() || fx_remap() || fx_gicv2m())
		return;
	o = *umsi_sim_host_ops();
	o.mmio_read32 = NULL;
	o.mmio_write32 = NULL;
	o.log = NULL;
	assert_int_equal(contract_create(&o, 0, log, sizeof(log)), 0);
}

static void tables_read_like_proc_interrupts(void **s)
{
	struct machine m;
	struct tdev t;
	char buf[4096];

	(void)s;
	machine_up(&m, 2, NULL, 0);
	tdev_attach(&m, &t, &chip_masked, NULL);
	tdev_fire(&t);
	umsi_sim_quiesce(m.sim);
	assert_true(umsi_format_interrupts(m.sys, buf, sizeof(buf)) <
		    sizeof(buf));
	assert_non_null(strstr(buf, "TEST-MASK"));
	assert_non_null(strstr(buf, "tdev"));
	assert_non_null(strstr(buf, "SPU"));
	assert_true(umsi_format_vectors(m.sys, buf, sizeof(buf)) < sizeof(buf));
	assert_non_null(strstr(buf, "HW-ID"));
	tdev_detach(&m, &t);
	machine_down(&m);
}

/* ---- the kernel's context in handlers, and who ends interrupts ---------- */

struct ctx_rec {
	struct machine *m;
	unsigned int plain, with_ctx;
	const void *ctx;
	bool kernel_eoi;
};

static const int the_frame = 42;

/* The kernel's entry: its frame handed to uMSI (umsi_dispatch_ctx). */
static int ctx_entry(void *arg, uint32_t cpu, uint32_t id)
{
	struct ctx_rec *r = arg;
	uint32_t core = fx_core_id(id);
	int ret = umsi_dispatch_ctx(r->m->sys, cpu, core, (void *)&the_frame);

	/* x86 with kernel_eoi: the kernel's own EOI, never the spurious one. */
	if (r->kernel_eoi && (fx_x86() || fx_remap()) && id != 0xff)
		umsi_sim_eoi(r->m->sim, (uint8_t)id);
	return ret;
}

static int h_plain(uint32_t irq, void *dev_id)
{
	struct ctx_rec *r = dev_id;

	(void)irq;
	r->plain++;
	return UMSI_IRQ_HANDLED;
}

static int h_ctx(uint32_t irq, void *dev_id, void *ctx)
{
	struct ctx_rec *r = dev_id;

	(void)irq;
	r->with_ctx++;
	r->ctx = ctx;
	return UMSI_IRQ_HANDLED;
}

static void fire_once(struct tdev *t)
{
	t->outstanding = 0;
	send(t);
	umsi_sim_quiesce(t->sim);
}

static void handlers_get_the_kernels_context(void **s)
{
	struct machine m;
	struct tdev t;
	struct ctx_rec r = { .m = &m }, r2 = { .m = &m };
	uint64_t before;

	(void)s;
	machine_up(&m, 2, NULL, 0);
	tdev_attach(&m, &t, &chip_masked, NULL);
	assert_int_equal(umsi_free_irq(m.sys, t.d->irq, &t), 0);
	/* Both kinds on one IRQ, shared; a flag of uMSI's own is refused. */
	assert_int_equal(umsi_request_irq_ctx(m.sys, t.d->irq, h_ctx,
					      UMSI_IRQF_SHARED | (1u << 31),
					      "ctx", &r), -UMSI_EINVAL);
	assert_int_equal(umsi_request_irq_ctx(m.sys, t.d->irq, NULL, 0, "ctx",
					      &r), -UMSI_EINVAL);
	assert_int_equal(umsi_request_irq_ctx(m.sys, t.d->irq, h_ctx,
					      UMSI_IRQF_SHARED, "ctx", &r), 0);
	assert_int_equal(umsi_request_irq(m.sys, t.d->irq, h_plain,
					  UMSI_IRQF_SHARED, "plain", &r2), 0);
	/* Through umsi_dispatch: the context handler gets NULL. */
	r.ctx = &r;
	fire_once(&t);
	assert_int_equal(r.with_ctx, 1);
	assert_null(r.ctx);
	assert_int_equal(r2.plain, 1);
	/* Through umsi_dispatch_ctx: the kernel's frame, the other as ever. */
	umsi_sim_set_dispatch_id(m.sim, ctx_entry, &r);
	fire_once(&t);
	assert_int_equal(r.with_ctx, 2);
	assert_ptr_equal(r.ctx, &the_frame);
	assert_int_equal(r2.plain, 2);
	/* Freed by its dev_id; the plain one stays and runs alone. */
	assert_int_equal(umsi_free_irq(m.sys, t.d->irq, &r), 0);
	assert_int_equal(umsi_free_irq(m.sys, t.d->irq, &r), -UMSI_ENOENT);
	before = r2.plain;
	fire_once(&t);
	assert_int_equal(r.with_ctx, 2);
	assert_int_equal(r2.plain, before + 1);
	assert_int_equal(umsi_free_irq(m.sys, t.d->irq, &r2), 0);
	/* A context handler still attached at release goes with the IRQ. */
	assert_int_equal(umsi_request_irq_ctx(m.sys, t.d->irq, h_ctx, 0, "ctx",
					      &r), 0);
	umsi_irq_release(m.sys, &t.d, 1);
	fx_set_dispatch(m.sim, m.sys);
	machine_down(&m);
}

static void the_kernel_may_end_interrupts_itself(void **s)
{
	struct umsi_sim_config cfg = { .ncpus = 2 };
	struct umsi_config ucfg = { .kernel_eoi = true };
	struct umsi_host_ops o = *umsi_sim_host_ops();
	struct umsi_sim_stats st;
	struct machine m;
	struct tdev t;
	struct ctx_rec r = { .m = &m, .kernel_eoi = true };
	int i;

	(void)s;
	if (!fx_x86()) {
		skip();         /* only the local APIC back ends end interrupts */
		return;
	}
	o.eoi = NULL;
	fx_sim_config(&cfg);
	m.sim = umsi_sim_create(&cfg);
	assert_non_null(m.sim);
	umsi_sim_leaks(m.sim, &m.leaks0);
	/* Without it, a host with no eoi is refused (saying what to set). */
	assert_int_equal(umsi_system_create(&o, m.sim, NULL, &m.sys),
			 -UMSI_EINVAL);
	assert_non_null(strstr(umsi_sim_log_text(m.sim), "kernel_eoi"));
	assert_int_equal(umsi_system_create(&o, m.sim, &ucfg, &m.sys), 0);
	umsi_sim_set_dispatch_id(m.sim, ctx_entry, &r);
	tdev_attach(&m, &t, &chip_masked, NULL);
	umsi_sim_stats_reset(m.sim);
	for (i = 0; i < 5; i++)
		fire_once(&t);
	assert_int_equal(t.handled, 5);
	umsi_sim_stats(m.sim, &st);
	/* Each ended once, by the kernel: none by uMSI, none left. */
	assert_int_equal(st.op_calls[UMSI_SIM_OP_EOI], 0);
	assert_int_equal(st.eois, 5);
	assert_int_equal(st.eoi_missing, 0);
	assert_int_equal(st.eoi_spurious, 0);
	tdev_detach(&m, &t);
	machine_down(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(dispatch_runs_the_handler_once_on_the_assigned_cpu),
		cmocka_unit_test(vectors_spread_over_cpus_by_free_count),
		cmocka_unit_test(spread_classes_puts_vectors_in_different_priority_classes),
		cmocka_unit_test(a_vector_nobody_owns_is_spurious_and_reaches_no_driver),
		cmocka_unit_test(shared_handlers_all_run_and_unshared_requests_are_refused),
		cmocka_unit_test(a_stuck_source_is_disabled_and_the_others_keep_working),
		cmocka_unit_test(rare_unhandled_interrupts_after_quiet_spells_never_disable),
		cmocka_unit_test(ten_thousand_moves_under_fire_lose_nothing_maskable),
		cmocka_unit_test(ten_thousand_moves_under_fire_lose_nothing_unmaskable),
		cmocka_unit_test(moves_reach_apic_ids_above_255_with_extended_dest_id),
		cmocka_unit_test(a_cpu_messages_cannot_name_is_never_a_target),
		cmocka_unit_test(offline_moves_irqs_away_and_online_takes_them_back),
		cmocka_unit_test(managed_irqs_without_a_mask_reserve_on_every_cpu_and_give_back),
		cmocka_unit_test(offline_is_refused_when_the_other_cpus_have_no_room),
		cmocka_unit_test(a_failed_host_call_during_a_move_leaves_the_irq_working),
		cmocka_unit_test(system_create_fails_cleanly_at_every_host_call),
		cmocka_unit_test(system_create_checks_the_host_contract),
		cmocka_unit_test(tables_read_like_proc_interrupts),
		cmocka_unit_test(handlers_get_the_kernels_context),
		cmocka_unit_test(the_kernel_may_end_interrupts_itself),
	};

	if (getenv("TEST_FILTER"))
		cmocka_set_test_filter(getenv("TEST_FILTER"));
	return cmocka_run_group_tests_name("irq core", tests, NULL, NULL);
}
