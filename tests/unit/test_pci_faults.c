/* SPDX-License-Identifier: MIT */
/*
 * Hardening: a vector never goes back while a device may still send to it,
 * handlers leave with their function, descriptors are not moved before
 * they are bound; and a sweep that fails every host call of every step of
 * a device's life, for every kind of device, checking what the hardware
 * would show afterwards.
 */
#include "test_pci_fixture.h"

#define DEVA UMSI_BDF(0, 0, 5, 0)
#define DEVB UMSI_BDF(0, 0, 6, 0)

/* ---- what the hardware can still do ---------------------------------------- */

/*
 * Whether the core holds identity @id of @cpu for an IRQ: the matrix's
 * answer for a per-CPU space; for a global one (the ITS), the core's
 * map of global identities (the matrix there only balances CPUs).
 */
static bool fx_id_in_use(struct umsi_system *sys, uint32_t cpu, uint32_t id)
{
	return sys->env.ctl->domain->in_use(sys, cpu, id);
}

struct target_check {
	struct umsi_system *sys;
	unsigned bad, live;
};

static void target_cb(void *arg, const struct umsi_sim_target *t)
{
	struct target_check *c = arg;

	if (!t->resolved || t->cpu == UINT32_MAX)
		return;
	c->live++;
	if (!fx_id_in_use(c->sys, t->cpu, fx_core_id(t->id))) {
		c->bad++;
		print_error("source %04x gsi %d can send to cpu %u vector "
			    "0x%x, which the allocator thinks free\n", t->bdf,
			    t->gsi, t->cpu, t->vector);
	}
}

/* No source may aim at a vector the allocator thinks free. */
static void assert_no_send_to_free(struct machine *m)
{
	struct target_check c = { .sys = m->sys };

	umsi_sim_live_targets(m->sim, target_cb, &c);
	assert_int_equal(c.bad, 0);
}

/* Where vector @n of @dev is (CPU, vector). */
static void where(struct machine *m, struct umsi_pci_dev *dev, uint32_t n,
		  uint32_t *cpu, uint8_t *vector)
{
	struct umsi_irq_info info;

	assert_int_equal(umsi_irq_get_info(m->sys,
			 (uint32_t)umsi_pci_irq_vector(dev, n), &info), 0);
	*cpu = info.cpu;
	*vector = info.vector;
}

/* ---- 3: a failed access during free quarantines, never frees -------------- */

/*
 * MSI without mask bits, one CPU: the Message Control write that turns MSI
 * off fails. The device may still send, so its vector must stay its own;
 * the next device gets another, and A's message reaches no one's handler.
 */
static void test_free_with_failed_write_quarantines_msi(void **state)
{
	struct machine *m = machine_new(1, 0, NULL);
	struct snapshot s0 = snap(m);
	struct umsi_sim_dev_desc d = msi_desc(1, true, false);
	struct umsi_pci_dev *a = plug(m, DEVA, &d, 0), *b;
	struct umsi_pci_info info;
	uint32_t cpu_a, cpu_b;
	uint8_t vec_a, vec_b;
	int irq_b;

	(void)state;
	assert_int_equal(umsi_pci_alloc_irq_vectors(a, 1, 1, UMSI_PCI_IRQ_MSI), 1);
	assert_int_equal(umsi_pci_request_irq(a, 0, fx_handler, 0, "a", m), 0);
	where(m, a, 0, &cpu_a, &vec_a);
	/* Free: 1 Command read, then the Message Control write fails. */
	umsi_sim_fail_at(m->sim, 2, -UMSI_EIO);
	umsi_pci_free_irq_vectors(a);
	assert_true(msi_enabled(m, DEVA));      /* the write did not happen */
	assert_true(umsi_matrix_is_allocated(umsi_system_matrix(m->sys),
					     cpu_a, vec_a));
	umsi_pci_get_info(a, &info);
	assert_int_equal(info.quarantined, 1);
	assert_int_equal(info.mode, UMSI_MODE_NONE);
	assert_no_send_to_free(m);
	assert_non_null(strstr(umsi_sim_log_text(m->sim), "proven quiet"));

	/* The next device gets a different vector. */
	b = plug(m, DEVB, &d, 0);
	assert_int_equal(umsi_pci_alloc_irq_vectors(b, 1, 1, UMSI_PCI_IRQ_MSI), 1);
	irq_b = umsi_pci_irq_vector(b, 0);
	assert_int_equal(umsi_pci_request_irq(b, 0, fx_handler, 0, "b", m), 0);
	where(m, b, 0, &cpu_b, &vec_b);
	assert_false(cpu_a == cpu_b && vec_a == vec_b);
	/* A fires: counted by the quarantine, B's handler does not run. */
	assert_int_equal(umsi_sim_fire(m->sim, DEVA, 0), UMSI_SIM_FIRE_SENT);
	assert_int_equal(m->handled[irq_b], 0);
	assert_int_equal(umsi_sim_fire(m->sim, DEVB, 0), UMSI_SIM_FIRE_SENT);
	assert_int_equal(m->handled[irq_b], 1);

	/* Hot removal proves A gone: the vector goes back. */
	umsi_sim_remove_device(m->sim, DEVA);
	umsi_pci_remove(m->sys, a);
	assert_false(umsi_matrix_is_allocated(umsi_system_matrix(m->sys),
					      cpu_a, vec_a));
	assert_int_equal(umsi_irq_quarantined(m->sys, NULL), 0);
	umsi_pci_remove(m->sys, b);
	{
		struct snapshot s1 = snap(m);

		assert_same(&s0, &s1);
	}
	machine_free(m);
}

/*
 * MSI-X: masking is MMIO and is read back, so a failed configuration
 * access alone does not stop the vectors going back: the entries are
 * proven masked.
 */
static void test_free_msix_failed_config_still_masks(void **state)
{
	struct machine *m = machine_new(2, 0, NULL);
	struct umsi_sim_dev_desc d = nvme_desc();
	struct umsi_pci_dev *a = plug(m, DEVA, &d, 0);
	struct umsi_pci_info info;
	uint32_t i;

	(void)state;
	assert_int_equal(umsi_pci_alloc_irq_vectors(a, 3, 3, UMSI_PCI_IRQ_MSIX), 3);
	for (i = 0; i < 3; i++)
		assert_int_equal(umsi_pci_request_irq(a, i, fx_handler, 0, "a",
						      m), 0);
	/* Command read ok, then the Message Control write fails. */
	umsi_sim_fail_at(m->sim, 2, -UMSI_EIO);
	umsi_pci_free_irq_vectors(a);
	assert_true(msix_enabled(m, DEVA));
	umsi_pci_get_info(a, &info);
	assert_int_equal(info.quarantined, 0);
	for (i = 0; i < 3; i++) {
		uint64_t addr;
		uint32_t data, ctrl;

		assert_int_equal(umsi_sim_msix_entry_get(m->sim, DEVA, i, &addr,
							 &data, &ctrl), 0);
		assert_true(ctrl & UMSI_MSIX_CTRL_MASKBIT);
	}
	assert_no_send_to_free(m);
	umsi_pci_remove(m->sys, a);
	machine_free(m);
}

/*
 * MSI-X whose masks cannot be proven (the function stopped decoding
 * memory) and whose Message Control write fails: quarantine.
 */
static void test_free_msix_unprovable_quarantines(void **state)
{
	struct machine *m = machine_new(1, 0, NULL);
	struct umsi_sim_dev_desc d = nvme_desc();
	struct umsi_pci_dev *a = plug(m, DEVA, &d, 0);
	struct umsi_pci_info info;
	uint16_t cmd;

	(void)state;
	assert_int_equal(umsi_pci_alloc_irq_vectors(a, 2, 2, UMSI_PCI_IRQ_MSIX), 2);
	assert_int_equal(umsi_pci_request_irq(a, 0, fx_handler, 0, "a", m), 0);
	assert_int_equal(umsi_pci_request_irq(a, 1, fx_handler, 0, "a", m), 0);
	/* Someone turned Memory Space off behind uMSI's back. */
	cmd = cfg16(m, DEVA, UMSI_PCI_COMMAND);
	umsi_sim_cfg_write(m->sim, DEVA, UMSI_PCI_COMMAND, 2,
			   cmd & ~UMSI_PCI_CMD_MEMORY);
	/* Command read ok, then the Message Control write fails. */
	umsi_sim_fail_at(m->sim, 2, -UMSI_EIO);
	umsi_pci_free_irq_vectors(a);
	umsi_pci_get_info(a, &info);
	assert_int_equal(info.quarantined, 2);
	assert_no_send_to_free(m);
	/* What it still sends is counted, never handled. */
	assert_int_equal(umsi_sim_fire(m->sim, DEVA, 0), UMSI_SIM_FIRE_SENT);
	/* Removal with the device present: it can be turned off now. */
	umsi_pci_remove(m->sys, a);
	assert_false(msix_enabled(m, DEVA));
	assert_int_equal(umsi_irq_quarantined(m->sys, NULL), 0);
	assert_no_send_to_free(m);
	machine_free(m);
}

/* ---- 4: removal takes the function's handlers off a shared line ----------- */

struct owner_dev {
	struct machine *m;
	umsi_bdf_t bdf;
	bool gone;
	unsigned calls;
};

static int owner_handler(uint32_t irq, void *dev_id)
{
	struct owner_dev *o = dev_id;

	(void)irq;
	/* A removed driver's data would be freed memory by now. */
	assert_false(o->gone);
	o->calls++;
	umsi_sim_intx_set(o->m->sim, o->bdf, false);
	return UMSI_IRQ_HANDLED;
}

static void test_removal_drops_its_handler_from_shared_line(void **state)
{
	struct machine *m = machine_new(2, 0, NULL);
	struct umsi_sim_dev_desc d = intx_desc(1);
	struct owner_dev oa = { m, DEVA, false, 0 }, ob = { m, DEVB, false, 0 };
	struct umsi_pci_dev *a, *b;

	(void)state;
	assert_int_equal(umsi_sim_add_device(m->sim, DEVA, &d), 0);
	assert_int_equal(umsi_sim_add_device(m->sim, DEVB, &d), 0);
	assert_int_equal(umsi_sim_set_intx_route(m->sim, DEVA, 20), 0);
	assert_int_equal(umsi_sim_set_intx_route(m->sim, DEVB, 20), 0);
	assert_int_equal(umsi_pci_add(m->sys, DEVA, NULL, 0, &a), 0);
	assert_int_equal(umsi_pci_add(m->sys, DEVB, NULL, 0, &b), 0);
	assert_int_equal(umsi_pci_alloc_irq_vectors(a, 1, 1, UMSI_PCI_IRQ_INTX), 1);
	assert_int_equal(umsi_pci_alloc_irq_vectors(b, 1, 1, UMSI_PCI_IRQ_INTX), 1);
	assert_int_equal(umsi_pci_request_irq(a, 0, owner_handler,
					      UMSI_IRQF_SHARED, "a", &oa), 0);
	assert_int_equal(umsi_pci_request_irq(b, 0, owner_handler,
					      UMSI_IRQF_SHARED, "b", &ob), 0);
	umsi_sim_intx_set(m->sim, DEVB, true);
	assert_int_equal(oa.calls + ob.calls, 2);
	/* A goes without freeing its handler first. */
	umsi_sim_remove_device(m->sim, DEVA);
	umsi_pci_remove(m->sys, a);
	oa.gone = true;
	umsi_sim_intx_set(m->sim, DEVB, true);
	assert_int_equal(ob.calls, 2);
	assert_int_equal(oa.calls, 1);
	umsi_pci_remove(m->sys, b);
	assert_null(umsi_irq_to_desc(m->sys, 20));
	machine_free(m);
}


/*
 * A mask that could not be written leaves the IRQ unmasked, and says so:
 * a level-triggered line taken for "lazily masked" would storm forever.
 */
static void test_failed_mask_leaves_irq_unmasked(void **state)
{
	struct machine *m = machine_new(2, 0, NULL);
	struct umsi_sim_dev_desc d = intx_desc(1);
	struct owner_dev o = { m, DEVA, false, 0 };
	struct umsi_pci_dev *a = plug(m, DEVA, &d, 0);
	struct umsi_irq_info info;
	int irq;

	(void)state;
	assert_int_equal(umsi_pci_alloc_irq_vectors(a, 1, 1, UMSI_PCI_IRQ_INTX), 1);
	assert_int_equal(umsi_pci_request_irq(a, 0, owner_handler,
					      UMSI_IRQF_SHARED, "a", &o), 0);
	irq = umsi_pci_irq_vector(a, 0);
	umsi_sim_fail_at(m->sim, 1, -UMSI_EIO);
	assert_int_equal(umsi_irq_mask(m->sys, (uint32_t)irq), -UMSI_EIO);
	assert_int_equal(umsi_irq_get_info(m->sys, (uint32_t)irq, &info), 0);
	assert_false(info.masked);
	assert_int_equal(umsi_irq_unmask(m->sys, (uint32_t)irq), -UMSI_EINVAL);
	umsi_sim_intx_set(m->sim, DEVA, true);
	assert_int_equal(o.calls, 1);
	/* A failed unmask keeps it masked, one level deep. */
	assert_int_equal(umsi_irq_mask(m->sys, (uint32_t)irq), 0);
	umsi_sim_fail_at(m->sim, 1, -UMSI_EIO);
	assert_int_equal(umsi_irq_unmask(m->sys, (uint32_t)irq), -UMSI_EIO);
	assert_int_equal(umsi_irq_get_info(m->sys, (uint32_t)irq, &info), 0);
	assert_true(info.masked);
	assert_int_equal(umsi_irq_unmask(m->sys, (uint32_t)irq), 0);
	umsi_pci_remove(m->sys, a);
	machine_free(m);
}

/* ---- 5: a descriptor is not moved before it is bound ---------------------- */

static struct machine *race_m;
static unsigned race_moves;

/* At every host call without a uMSI lock held, move what is live. */
static void race_hook(void *arg, enum umsi_sim_op op)
{
	struct umsi_sim_leaks l;
	uint64_t w = 1;
	struct umsi_cpumask mask = { &w, 2 };
	int irq = 0;

	(void)arg;
	(void)op;
	umsi_sim_leaks(race_m->sim, &l);
	if (l.locks_held)
		return;
	if (umsi_cpu_offline(race_m->sys, 1) == 0) {
		race_moves++;
		assert_int_equal(umsi_cpu_online(race_m->sys, 1), 0);
	}
	while ((irq = umsi_irq_next(race_m->sys, (uint32_t)irq)) >= 0) {
		w = (uint64_t)1 << (race_moves & 1);
		(void)umsi_irq_set_affinity(race_m->sys, (uint32_t)irq, &mask);
		irq++;
	}
}

static void test_moves_during_setup_wait_for_binding(void **state)
{
	struct machine *m = machine_new(2, 0, NULL);
	struct umsi_sim_dev_desc d = nvme_desc(), e = msi_desc(4, true, true);
	struct umsi_pci_dev *a = plug(m, DEVA, &d, 0);
	struct umsi_pci_dev *b = plug(m, DEVB, &e, 0);
	uint32_t i;

	(void)state;
	race_m = m;
	race_moves = 0;
	umsi_sim_set_hook(m->sim, race_hook, NULL);
	assert_int_equal(umsi_pci_alloc_irq_vectors(a, 4, 4, UMSI_PCI_IRQ_MSIX), 4);
	assert_int_equal(umsi_pci_msix_alloc_entry(a, -1) > 0, true);
	assert_int_equal(umsi_pci_alloc_irq_vectors(b, 1, 1, UMSI_PCI_IRQ_MSI), 1);
	for (i = 0; i < 5; i++)
		assert_int_equal(umsi_pci_request_irq(a, i, fx_handler, 0, "a",
						      m), 0);
	umsi_sim_set_hook(m->sim, NULL, NULL);
	assert_true(race_moves > 0);
	/* Every vector still reaches its own handler, once. */
	for (i = 0; i < 5; i++) {
		int irq = umsi_pci_irq_vector(a, i);

		assert_int_equal(umsi_sim_fire(m->sim, DEVA, i),
				 UMSI_SIM_FIRE_SENT);
		umsi_sim_quiesce(m->sim);
		assert_int_equal(m->handled[irq], 1);
	}
	assert_no_send_to_free(m);
	umsi_pci_remove(m->sys, a);
	umsi_pci_remove(m->sys, b);
	machine_free(m);
}

/* ---- 6: the smaller ones ---------------------------------------------------- */

/*
 * Under remapping MSI reaches any APIC ID, but the IO-APIC sends
 * compatibility-format messages: INTx lines land on CPUs those can name,
 * and the CPU above 254 can go offline.
 */
static void test_intx_under_remapping_avoids_high_apic_ids(void **state)
{
	static const uint32_t ids[] = { 300, 1, 301 };
	struct umsi_sim_config cfg = { .ncpus = 3, .apic_ids = ids,
				       .plat_flags = UMSI_PLAT_IRQ_REMAP };
	struct machine *m;
	struct umsi_sim_dev_desc d = intx_desc(1);
	struct umsi_pci_dev *dev[4];
	struct umsi_sim_stats st;
	uint64_t w = 1;         /* CPU 0: APIC ID 300 */
	struct umsi_cpumask only0 = { &w, 3 };
	unsigned i;

	(void)state;
	fx_skip_unless_x86("x86 only: interrupt remapping, IO-APIC and APIC IDs");
	m = calloc(1, sizeof(*m));
	m->sim = umsi_sim_create(&cfg);
	umsi_sim_leaks(m->sim, &m->leaks0);
	assert_int_equal(umsi_system_create(umsi_sim_host_ops(), m->sim, NULL,
					    &m->sys), 0);
	umsi_sim_set_dispatch(m->sim, fx_dispatch, m->sys);
	umsi_sim_stats_reset(m->sim);
	for (i = 0; i < 4; i++) {
		umsi_bdf_t bdf = UMSI_BDF(0, 0, 3 + i, 0);
		struct umsi_irq_info info;

		dev[i] = plug(m, bdf, &d, 0);
		assert_int_equal(umsi_pci_alloc_irq_vectors(dev[i], 1, 1,
							    UMSI_PCI_IRQ_INTX), 1);
		assert_int_equal(umsi_irq_get_info(m->sys,
				 (uint32_t)umsi_pci_irq_vector(dev[i], 0),
				 &info), 0);
		assert_int_equal(info.hwid, 1);
		/* Only a CPU it cannot reach: refused, not half done. */
		assert_int_equal(umsi_irq_set_affinity(m->sys, info.irq,
						       &only0), -UMSI_EINVAL);
	}
	assert_int_equal(umsi_cpu_offline(m->sys, 0), 0);
	assert_int_equal(umsi_cpu_offline(m->sys, 2), 0);
	for (i = 0; i < 4; i++) {
		umsi_pci_free_irq_vectors(dev[i]);
		umsi_pci_remove(m->sys, dev[i]);
	}
	/* IO-APIC lines never had remapping entries: none is freed. */
	umsi_sim_stats(m->sim, &st);
	assert_int_equal(st.op_calls[UMSI_SIM_OP_REMAP_FREE], 0);
	assert_int_equal(st.op_calls[UMSI_SIM_OP_REMAP_COMPOSE], 0);
	machine_free(m);
}

/*
 * The seed's API gives an unshared line's GSI to MSI; a function that
 * comes later on the same line still gets INTx, with another number.
 */
static void test_intx_after_compat_msi_took_the_gsi(void **state)
{
	struct machine *m = machine_new(2, 0, NULL);
	struct umsi_sim_dev_desc da = msi_desc(1, true, false);
	struct umsi_sim_dev_desc db = intx_desc(1);
	struct umsi_pci_dev *a, *b, *c;
	int irq_a;

	(void)state;
	assert_int_equal(umsi_sim_add_device(m->sim, DEVA, &da), 0);
	assert_int_equal(umsi_sim_set_intx_route(m->sim, DEVA, 21), 0);
	assert_int_equal(umsi_pci_add(m->sys, DEVA, NULL, 0, &a), 0);
	irq_a = umsi_msi_get_pci_irq_vector(a);
	assert_int_equal(irq_a, 21);
	assert_int_equal(umsi_sim_add_device(m->sim, DEVB, &db), 0);
	assert_int_equal(umsi_sim_set_intx_route(m->sim, DEVB, 21), 0);
	assert_int_equal(umsi_pci_add(m->sys, DEVB, NULL, 0, &b), 0);
	assert_int_equal(umsi_pci_alloc_irq_vectors(b, 1, 1, UMSI_PCI_IRQ_INTX), 1);
	assert_true(umsi_pci_irq_vector(b, 0) != 21);
	/* A third on the line joins B's line. */
	assert_int_equal(umsi_sim_add_device(m->sim, UMSI_BDF(0, 0, 7, 0),
					     &db), 0);
	assert_int_equal(umsi_sim_set_intx_route(m->sim, UMSI_BDF(0, 0, 7, 0),
						 21), 0);
	assert_int_equal(umsi_pci_add(m->sys, UMSI_BDF(0, 0, 7, 0), NULL, 0,
				      &c), 0);
	assert_int_equal(umsi_pci_alloc_irq_vectors(c, 1, 1, UMSI_PCI_IRQ_INTX), 1);
	assert_int_equal(umsi_pci_irq_vector(c, 0), umsi_pci_irq_vector(b, 0));
	umsi_pci_remove(m->sys, c);
	umsi_pci_remove(m->sys, b);
	umsi_pci_remove(m->sys, a);
	machine_free(m);
}

/* Multiple Message Capable 6 or 7 (reserved): one message, said so. */
static void test_reserved_mmc_gets_one_message(void **state)
{
	unsigned enc;

	(void)state;
	for (enc = 6; enc <= 7; enc++) {
		struct machine *m = machine_new(2, 0, NULL);
		struct umsi_sim_dev_desc d = msi_desc(32, true, true);
		struct umsi_pci_dev *dev;
		struct umsi_pci_info info;
		uint8_t *raw;
		uint16_t cap;

		assert_int_equal(umsi_sim_add_device(m->sim, DEVA, &d), 0);
		cap = find_cap(m, DEVA, UMSI_PCI_CAP_ID_MSI);
		raw = umsi_sim_cfg_raw(m->sim, DEVA);
		raw[cap + 2] = (uint8_t)((raw[cap + 2] & ~0x0e) | enc << 1);
		assert_int_equal(umsi_pci_add(m->sys, DEVA, NULL, 0, &dev), 0);
		umsi_pci_get_info(dev, &info);
		assert_int_equal(info.msi_max, 1);
		assert_int_equal(umsi_pci_alloc_irq_vectors(dev, 1, 32,
							    UMSI_PCI_IRQ_MSI), 1);
		umsi_pci_get_info(dev, &info);
		assert_int_equal(info.msi_reserved, 1);
		assert_non_null(strstr(umsi_sim_log_text(m->sim),
				       "reserved encoding; using one"));
		umsi_pci_remove(m->sys, dev);
		machine_free(m);
	}
}

/* A gone device refuses a handler with -ENODEV, as irq.h says. */
static void test_request_on_gone_device_is_enodev(void **state)
{
	struct machine *m = machine_new(2, 0, NULL);
	struct umsi_sim_dev_desc d = nvme_desc();
	struct umsi_pci_dev *a = plug(m, DEVA, &d, 0);

	(void)state;
	assert_int_equal(umsi_pci_alloc_irq_vectors(a, 1, 1, UMSI_PCI_IRQ_MSIX), 1);
	umsi_sim_remove_device(m->sim, DEVA);
	assert_int_equal(umsi_pci_request_irq(a, 0, fx_handler, 0, "a", m),
			 -UMSI_ENODEV);
	assert_int_equal(umsi_pci_request_irq(a, 1, fx_handler, 0, "a", m),
			 -UMSI_EINVAL);
	umsi_pci_remove(m->sys, a);
	machine_free(m);
}

/* A list that breaks before MSI-X: "bad_capability", not "no_capability". */
static void test_list_broken_before_msix_says_so(void **state)
{
	struct machine *m = machine_new(2, 0, NULL);
	struct umsi_sim_dev_desc d = msi_desc(1, true, false);
	struct umsi_pci_dev *dev;
	struct umsi_pci_info info;
	uint16_t msi;
	uint8_t *raw;

	(void)state;
	d.msix = nvme_desc().msix;
	d.bars[0] = nvme_desc().bars[0];
	assert_int_equal(umsi_sim_add_device(m->sim, DEVA, &d), 0);
	msi = find_cap(m, DEVA, UMSI_PCI_CAP_ID_MSI);
	raw = umsi_sim_cfg_raw(m->sim, DEVA);
	raw[msi + 1] = (uint8_t)msi;            /* MSI points at itself */
	assert_int_equal(umsi_pci_add(m->sys, DEVA, NULL, 0, &dev), 0);
	umsi_pci_get_info(dev, &info);
	assert_int_equal(info.msix_cap, 0);
	assert_string_equal(info.msix_reason, "bad_capability");
	umsi_pci_remove(m->sys, dev);
	machine_free(m);
}

/* ---- the sweep ---------------------------------------------------------------- */

enum kind { K_MSIX, K_MSI_MASK, K_MSI_NOMASK, K_MSI_MULTI, K_INTX, K_NR };
enum phase { P_ALLOC, P_REQUEST, P_AFFINITY, P_FREE, P_REMOVE, P_NR };
enum how { H_EIO, H_ENOMEM, H_VANISH, H_NR };

static const char *const kind_name[] = { "msix", "msi-mask", "msi-nomask",
					 "msi-multi", "intx" };
static const char *const phase_name[] = { "alloc", "request", "affinity",
					  "free", "remove" };

static struct umsi_sim_dev_desc kind_desc(enum kind k)
{
	switch (k) {
	case K_MSIX: return nvme_desc();
	case K_MSI_MASK: return msi_desc(1, true, true);
	case K_MSI_NOMASK: return msi_desc(1, false, false);
	case K_MSI_MULTI: return msi_desc(4, true, true);
	default: return intx_desc(1);
	}
}

struct sweep {
	struct machine *m;
	struct umsi_pci_dev *dev;
	int nvec;
	uint64_t vanish_at, calls;
	bool vanished;
};

static void vanish_hook(void *arg, enum umsi_sim_op op)
{
	struct sweep *s = arg;

	(void)op;
	if (!s->vanished && s->vanish_at && ++s->calls == s->vanish_at) {
		umsi_sim_remove_device(s->m->sim, DEVA);
		s->vanished = true;
	}
}

static int sweep_handler(uint32_t irq, void *dev_id)
{
	struct sweep *s = dev_id;

	umsi_sim_intx_set(s->m->sim, DEVA, false);
	return fx_handler(irq, s->m);
}

/* Run the steps up to and including @p; arm the failure before @p. */
static void sweep_step(struct sweep *s, enum phase p)
{
	uint64_t w = 2;         /* CPU 1 */
	struct umsi_cpumask to1 = { &w, 2 };
	int i, irq;

	switch (p) {
	case P_ALLOC:
		s->nvec = umsi_pci_alloc_irq_vectors(s->dev, 1, 4,
						     UMSI_PCI_IRQ_ALL_TYPES);
		if (s->nvec < 0)
			s->nvec = 0;
		break;
	case P_REQUEST:
		for (i = 0; i < s->nvec; i++)
			(void)umsi_pci_request_irq(s->dev, (uint32_t)i,
						   sweep_handler,
						   UMSI_IRQF_SHARED, "s", s);
		break;
	case P_AFFINITY:
		for (i = 0; i < s->nvec; i++) {
			irq = umsi_pci_irq_vector(s->dev, (uint32_t)i);
			(void)umsi_irq_set_affinity(s->m->sys, (uint32_t)irq,
						    &to1);
		}
		break;
	case P_FREE:
		umsi_pci_free_irq_vectors(s->dev);
		s->nvec = 0;
		break;
	case P_REMOVE:
		umsi_pci_remove(s->m->sys, s->dev);
		s->dev = NULL;
		break;
	default:
		break;
	}
}

/* Fire every vector the driver has: each handled once, on its own IRQ. */
static void sweep_fire(struct sweep *s)
{
	int i;

	if (!s->dev || s->vanished)
		return;
	for (i = 0; i < s->nvec; i++) {
		int irq = umsi_pci_irq_vector(s->dev, (uint32_t)i);
		uint64_t before = s->m->handled[irq];
		struct umsi_irq_info info;

		/* A handler the failure kept from attaching sees nothing. */
		if (umsi_irq_get_info(s->m->sys, (uint32_t)irq, &info) ||
		    !info.owner)
			continue;
		if (umsi_pci_mode(s->dev) == UMSI_MODE_INTX)
			umsi_sim_intx_set(s->m->sim, DEVA, true);
		else
			umsi_sim_fire(s->m->sim, DEVA, (unsigned)i);
		umsi_sim_quiesce(s->m->sim);
		if (info.masked)
			continue;
		assert_int_equal(s->m->handled[irq], before + 1);
	}
}

/* Count the fallible host calls and all host calls of phase @p. */
static void sweep_measure(enum kind k, enum phase p, uint64_t *fallible,
			  uint64_t *calls)
{
	struct sweep s = { 0 };
	struct umsi_sim_dev_desc d = kind_desc(k);
	struct umsi_sim_stats st;
	enum phase q;

	s.m = machine_new(2, 0, NULL);
	s.dev = plug(s.m, DEVA, &d, 0);
	for (q = P_ALLOC; q < p; q++)
		if (q != P_FREE)
			sweep_step(&s, q);
	umsi_sim_stats_reset(s.m->sim);
	sweep_step(&s, p);
	umsi_sim_stats(s.m->sim, &st);
	*fallible = st.fallible_calls;
	*calls = st.host_calls;
	if (s.dev)
		umsi_pci_remove(s.m->sys, s.dev);
	machine_free(s.m);
}

static void sweep_one(enum kind k, enum phase p, enum how h, uint64_t n)
{
	struct sweep s = { 0 };
	struct umsi_sim_dev_desc d = kind_desc(k);
	struct snapshot s0, s1;
	enum phase q;

	s.m = machine_new(2, 0, NULL);
	s0 = snap(s.m);
	s.dev = plug(s.m, DEVA, &d, 0);
	/* Removal comes straight after use: the seed's hot-removal reclaim. */
	for (q = P_ALLOC; q < p; q++)
		if (q != P_FREE)
			sweep_step(&s, q);
	if (getenv("SWEEP_TRACE"))
		print_message("sweep %s/%s how %d n %llu\n", kind_name[k],
			      phase_name[p], h, (unsigned long long)n);
	if (h == H_VANISH) {
		s.vanish_at = n;
		umsi_sim_set_hook(s.m->sim, vanish_hook, &s);
	} else {
		umsi_sim_fail_at(s.m->sim, n, h == H_EIO ? -UMSI_EIO :
				 -UMSI_ENOMEM);
	}
	sweep_step(&s, p);
	umsi_sim_fail_at(s.m->sim, 0, 0);
	umsi_sim_set_hook(s.m->sim, NULL, NULL);
	umsi_sim_quiesce(s.m->sim);
	/* What the hardware shows right after the failed step. */
	assert_no_send_to_free(s.m);
	assert_int_equal(umsi_matrix_check(umsi_system_matrix(s.m->sys)), 0);
	/* The rest of the life, without failures. */
	for (q = (enum phase)(p + 1); q <= P_AFFINITY && s.dev; q++)
		sweep_step(&s, q);
	sweep_fire(&s);
	assert_no_send_to_free(s.m);
	if (s.dev && p < P_FREE) {
		sweep_step(&s, P_FREE);
		assert_no_send_to_free(s.m);
	}
	/* Hot removal, then everything is accounted for. */
	if (!s.vanished)
		umsi_sim_remove_device(s.m->sim, DEVA);
	if (s.dev)
		umsi_pci_remove(s.m->sys, s.dev);
	assert_int_equal(umsi_irq_quarantined(s.m->sys, NULL), 0);
	s1 = snap(s.m);
	assert_same(&s0, &s1);
	machine_free(s.m);
}

/*
 * For every device kind and every step of its life, the k-th host call
 * fails with EIO, then with ENOMEM, then the device vanishes at the k-th
 * host call. Afterwards no device can send to a vector the allocator
 * thinks free, the rest of the life works, and removal gives everything
 * back.
 */
static void test_failure_sweep(void **state)
{
	unsigned runs = 0;
	enum kind k;
	enum phase p;
	enum how h;

	(void)state;
	for (k = K_MSIX; k < K_NR; k++) {
		for (p = P_ALLOC; p < P_NR; p++) {
			uint64_t fallible, calls, n;

			sweep_measure(k, p, &fallible, &calls);
			for (h = H_EIO; h < H_NR; h++) {
				uint64_t max = h == H_VANISH ? calls : fallible;

				for (n = 1; n <= max; n++) {
					sweep_one(k, p, h, n);
					runs++;
				}
			}
			print_message("sweep %s/%s: %llu fallible, %llu host "
				      "calls\n", kind_name[k], phase_name[p],
				      (unsigned long long)fallible,
				      (unsigned long long)calls);
		}
	}
	print_message("sweep: %u runs\n", runs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_free_with_failed_write_quarantines_msi),
		cmocka_unit_test(test_free_msix_failed_config_still_masks),
		cmocka_unit_test(test_free_msix_unprovable_quarantines),
		cmocka_unit_test(test_removal_drops_its_handler_from_shared_line),
		cmocka_unit_test(test_failed_mask_leaves_irq_unmasked),
		cmocka_unit_test(test_moves_during_setup_wait_for_binding),
		cmocka_unit_test(test_intx_under_remapping_avoids_high_apic_ids),
		cmocka_unit_test(test_intx_after_compat_msi_took_the_gsi),
		cmocka_unit_test(test_reserved_mmc_gets_one_message),
		cmocka_unit_test(test_request_on_gone_device_is_enodev),
		cmocka_unit_test(test_list_broken_before_msix_says_so),
		cmocka_unit_test(test_failure_sweep),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
