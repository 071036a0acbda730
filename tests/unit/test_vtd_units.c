/* SPDX-License-Identifier: MIT */
/*
 * The VT-d back end on a machine of several remapping units, as a server's
 * DMAR table describes one DRHD per root complex or I/O stack
 * (umsi_vtd_config.units): configurations refused with the problem named,
 * every host call of a three-unit creation failed in turn with every unit
 * left off, each function's entries in the table of the unit that remaps
 * it (a scope of a root port's buses, a scope of one endpoint, the
 * include-all unit for the rest; handles from 0 in each table), a move
 * invalidating in its own unit's cache only, a function no unit remaps
 * refused, a unit that stops answering distrusted alone, faults of each
 * unit reported with the unit that recorded them, an IO-APIC in a second
 * unit's scope whose line is remapped there, and a function of another
 * segment remapped by that segment's unit.
 */
#include "test_pci_fixture.h"

#include <umsi/ctl.h>
#include <umsi/x86.h>

#define BASE(i)  (UMSI_SIM_VTD_BASE + 0x1000ull * (i))
#define GSTS     0x1cu

/* Unit 0 (include-all) remaps these; unit 1 the root port's buses; unit 2
 * the endpoint 00:06.0 alone; unit 3 segment 1. */
#define DEV_A    UMSI_BDF(0, 0, 5, 0)
#define DEV_B    UMSI_BDF(0, 0, 6, 0)
#define PORT     UMSI_BDF(0, 0, 0x1c, 0)
#define DEV_C    UMSI_BDF(0, 0x10, 0, 0)
#define DEV_S1   UMSI_BDF(1, 0, 3, 0)

#define IRTE_P          1ull
#define IRTE_VECTOR(e)  ((uint32_t)((e) >> 16) & 0xff)
#define IRTE_DST8(e)    ((uint32_t)((e) >> 40) & 0xff)
#define IRTE_SID(h)     ((uint32_t)(h) & 0xffff)

static const struct umsi_rid_range scope1[] = {
	{ UMSI_BDF(0, 0x10, 0, 0), UMSI_BDF(0, 0x1f, 0x1f, 7) },
	{ FX_IOAPIC2_SID, FX_IOAPIC2_SID },     /* the second IO-APIC */
};
static const struct umsi_rid_range scope2[] = { { DEV_B, DEV_B } };

static const struct umsi_vtd_unit four_units[] = {
	{ .reg_base = BASE(0), .segment = 0, .include_all = true },
	{ .reg_base = BASE(1), .segment = 0, .scope = scope1, .nscope = 2 },
	{ .reg_base = BASE(2), .segment = 0, .scope = scope2, .nscope = 1 },
	{ .reg_base = BASE(3), .segment = 1, .include_all = true },
};

struct units_cfg {
	struct umsi_vtd_config vc;
	struct umsi_config cfg;
};

static void units_cfg_of(const struct umsi_vtd_unit *u, uint32_t n,
			 bool two_ioapics, struct units_cfg *c)
{
	memset(c, 0, sizeof(*c));
	c->vc.units = u;
	c->vc.nunits = n;
	c->vc.irte_count = 256;
	c->vc.ioapic_sid = UMSI_SIM_VTD_IOAPIC_SID;
	if (two_ioapics) {
		c->vc.ioapics = fx_two_ioapics();
		c->vc.nioapics = 2;
	}
	c->cfg.ctl = &umsi_ctl_x86_vtd;
	c->cfg.ctl_config = &c->vc;
}

static void units_sim_config(const struct umsi_vtd_unit *u, uint32_t n,
			     bool two_ioapics, struct umsi_sim_config *sc)
{
	*sc = (struct umsi_sim_config){ .ncpus = 4, .vtd_units = u,
					.nvtd_units = n,
					.vtd_ioapic_sid = UMSI_SIM_VTD_IOAPIC_SID };
	if (two_ioapics) {
		sc->ioapics = fx_two_ioapics();
		sc->nioapics = 2;
	}
}

static struct umsi_sim *units_sim(const struct umsi_vtd_unit *u, uint32_t n,
				  bool two_ioapics)
{
	struct umsi_sim_config sc;
	struct umsi_sim *sim;

	units_sim_config(u, n, two_ioapics, &sc);
	sim = umsi_sim_create(&sc);
	assert_non_null(sim);
	return sim;
}

static struct machine *units_machine(const struct umsi_vtd_unit *u,
				     uint32_t n, bool two_ioapics)
{
	struct umsi_sim_config sc;
	struct units_cfg c;

	units_sim_config(u, n, two_ioapics, &sc);
	units_cfg_of(u, n, two_ioapics, &c);
	return fx_machine_of(&sc, &c.cfg);
}

/* Every unit of the four-unit machine has remapping and its queue off. */
static void all_units_off(struct umsi_sim *sim)
{
	for (uint32_t i = 0; i < 4; i++)
		assert_int_equal(umsi_sim_mmio_read32(sim, BASE(i) + GSTS) &
				 (3u << 25), 0);
}

static void units_machine_free(struct machine *m)
{
	machine_free_checked(m, all_units_off);
}

static struct umsi_sim_vtd_stats ustats(struct machine *m, uint32_t unit)
{
	struct umsi_sim_vtd_stats s;

	assert_int_equal(umsi_sim_vtd_unit_stats(m->sim, unit, &s), 0);
	return s;
}

static uint32_t handle_of(const struct umsi_msg *msg)
{
	struct umsi_x86_msi d;

	umsi_x86_msg_decode(msg, false, &d);
	assert_true(d.valid);
	assert_true(d.remapped);
	return d.handle;
}

/* Entry @index of @unit's table sends @irq's vector to its CPU and
 * validates requester @sid. */
static void assert_unit_irte(struct machine *m, uint32_t unit, uint32_t index,
			     uint32_t irq, uint32_t sid)
{
	struct umsi_irq_info info;
	uint64_t e[2];

	assert_int_equal(umsi_irq_get_info(m->sys, irq, &info), 0);
	assert_int_equal(umsi_sim_vtd_unit_irte(m->sim, unit, index, e), 0);
	assert_true(e[0] & IRTE_P);
	assert_int_equal(IRTE_VECTOR(e[0]), info.vector);
	assert_int_equal(IRTE_DST8(e[0]), umsi_cpu_hwid(m->sys, info.cpu));
	assert_int_equal(IRTE_SID(e[1]), sid);
}

/* Every IRQ of @dev freed (its handlers first), the vectors given back. */
static void free_all(struct machine *m, struct umsi_pci_dev *dev)
{
	for (uint32_t k = 0; umsi_pci_irq_vector(dev, k) >= 0; k++)
		(void)umsi_free_irq(m->sys, (uint32_t)umsi_pci_irq_vector(dev,
				    k), m);
	umsi_pci_free_irq_vectors(dev);
}

static void assert_not_present(struct machine *m, uint32_t unit,
			       uint32_t index)
{
	uint64_t e[2];

	assert_int_equal(umsi_sim_vtd_unit_irte(m->sim, unit, index, e), 0);
	assert_false(e[0] & IRTE_P);
}

/* ---- configuration ------------------------------------------------------- */

static void refused_units(struct umsi_sim *sim, const struct umsi_vtd_unit *u,
			  uint32_t n, const char *why)
{
	struct units_cfg c;

	units_cfg_of(u, n, false, &c);
	fx_refused(sim, &c.cfg, -UMSI_EINVAL, why);
	all_units_off(sim);
}

/*
 * Each contradiction of a units table is refused with a log line naming
 * it; a unit missing from the machine (its registers read nothing) fails
 * the creation after the units before it were turned on, and turns them
 * off again.
 */
static void test_units_config_refused(void **state)
{
	struct umsi_sim *sim = units_sim(four_units, 4, false);
	static const struct umsi_rid_range rev[] = { { 0x0200, 0x01ff } };
	static const struct umsi_rid_range across[] = { { 0x0ff00, 0x10000 } };
	static const struct umsi_rid_range seg1[] = { { 0x10100, 0x10100 } };
	static const struct umsi_rid_range over[] = { { 0x1800, 0x1800 } };
	struct umsi_vtd_unit u[4];
	struct units_cfg c;

	(void)state;
	units_cfg_of(four_units, 4, false, &c);
	c.vc.reg_base = BASE(0);
	fx_refused(sim, &c.cfg, -UMSI_EINVAL, "reg_base and units both given");
	units_cfg_of(four_units, UMSI_VTD_MAX_UNITS + 1, false, &c);
	fx_refused(sim, &c.cfg, -UMSI_EINVAL, "more than UMSI_VTD_MAX_UNITS");
	units_cfg_of(NULL, 2, false, &c);
	fx_refused(sim, &c.cfg, -UMSI_EINVAL, "nunits without a units table");

	memcpy(u, four_units, sizeof(u));
	u[1].reg_base = BASE(1) + 0x10;
	refused_units(sim, u, 4, "unit 1 reg_base 0xfed91010 is not a 4 KiB");
	memcpy(u, four_units, sizeof(u));
	u[2].reg_base = BASE(0);
	refused_units(sim, u, 4, "units 0 and 2 have one address");
	memcpy(u, four_units, sizeof(u));
	u[3].segment = 0;
	refused_units(sim, u, 4, "units 0 and 3 are both include-all units "
		      "of one segment");
	memcpy(u, four_units, sizeof(u));
	u[2].nscope = 0;
	refused_units(sim, u, 4, "unit 2 (0xfed92000) remaps nothing");
	u[2].nscope = UMSI_VTD_MAX_SCOPE + 1;
	refused_units(sim, u, 4, "past UMSI_VTD_MAX_SCOPE");
	u[2].scope = rev;
	u[2].nscope = 1;
	refused_units(sim, u, 4, "unit 2 scope 0: 0x200..0x1ff is reversed");
	u[2].scope = across;
	refused_units(sim, u, 4, "is across segments");
	u[2].scope = seg1;
	refused_units(sim, u, 4, "is outside the unit's segment");
	u[2].scope = over;
	refused_units(sim, u, 4, "unit 2 scope 0 (0x1800..0x1800) meets "
		      "unit 1's (0x1000..0x1fff)");

	/* A fifth unit where the machine has none: the four turned off. */
	{
		struct umsi_vtd_unit five[5];

		memcpy(five, four_units, sizeof(four_units));
		five[4] = (struct umsi_vtd_unit){ .reg_base = BASE(6),
						  .include_all = true,
						  .segment = 2 };
		refused_units(sim, five, 5, "no remapping unit at 0xfed96000");
	}
	umsi_sim_destroy(sim);
}

/*
 * A creation turns each unit on with its own table and queue (three
 * phys_alloc blocks each), logging each; destroy turns every one off.
 * Every host call of it failed in turn leaves nothing, every unit off.
 */
static void test_units_create_failure_leaves_nothing(void **state)
{
	struct umsi_sim *sim = units_sim(four_units, 4, false);
	struct units_cfg c;

	(void)state;
	units_cfg_of(four_units, 4, false, &c);
	fx_units_create_each(sim, &c.cfg, BASE(0), 0x1000, 4, GSTS, 3u << 25,
			     "x86-vtd: unit at ", "256 entries", 12,
			     all_units_off);
	umsi_sim_destroy(sim);
}

/*
 * The second unit never runs its queue: its start times out at the first
 * invalidation, after queued invalidation was turned on; the creation
 * fails with -UMSI_ETIMEDOUT, said once, and every unit, that one too, is
 * left with remapping and queued invalidation off, nothing kept.
 */
static void test_unit_silent_at_start(void **state)
{
	struct umsi_sim *sim = units_sim(four_units, 4, false);
	struct umsi_sim_leaks l0, l1;
	struct umsi_system *sys = NULL;
	struct units_cfg c;

	(void)state;
	units_cfg_of(four_units, 4, false, &c);
	umsi_sim_leaks(sim, &l0);
	assert_int_equal(umsi_sim_vtd_unit_silent(sim, 1, true), 0);
	assert_int_equal(umsi_system_create(umsi_sim_host_ops(), sim, &c.cfg,
					    &sys), -UMSI_ETIMEDOUT);
	assert_null(sys);
	assert_non_null(strstr(umsi_sim_log_text(sim), "the unit at "
			       "0xfed91000 is not trusted"));
	all_units_off(sim);
	umsi_sim_leaks(sim, &l1);
	assert_true(umsi_sim_leaks_equal(&l0, &l1));
	umsi_sim_destroy(sim);
}

/* ---- entries per unit ---------------------------------------------------- */

struct three {
	struct umsi_pci_dev *port, *a, *b, *c;
};

/* nvme-like functions at DEV_A (unit 0), DEV_B (unit 2) and DEV_C behind
 * the root port (unit 1), two MSI-X vectors each, requested. */
static void three_up(struct machine *m, struct three *t)
{
	struct umsi_sim_dev_desc d = nvme_desc();
	struct umsi_pci_dev *all[3];

	t->port = fx_root_port_up(m, PORT, 0x10, 0x1f);
	t->a = all[0] = plug(m, DEV_A, &d, UMSI_PCI_ADD_FRESH);
	t->b = all[1] = plug(m, DEV_B, &d, UMSI_PCI_ADD_FRESH);
	t->c = all[2] = plug_under(m, DEV_C, &d, t->port);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(umsi_pci_alloc_irq_vectors(all[i], 2, 2,
			UMSI_PCI_IRQ_MSIX), 2);
		for (int k = 0; k < 2; k++)
			assert_int_equal(umsi_request_irq(m->sys, (uint32_t)
				umsi_pci_irq_vector(all[i], k), fx_handler, 0,
				"t", m), 0);
	}
}

static void three_down(struct machine *m, struct three *t)
{
	umsi_pci_remove(m->sys, t->c);
	umsi_pci_remove(m->sys, t->b);
	umsi_pci_remove(m->sys, t->a);
	umsi_pci_remove(m->sys, t->port);
}

/*
 * Each function's entries are in the table of the unit that remaps it:
 * each table's handles start at 0, so the three functions' first messages
 * all name handle 0, each in its own unit, validating its own requester;
 * every interrupt is remapped by its unit and handled on the CPU the core
 * chose. A move invalidates in its own unit's cache only, and the
 * device's message stays; freeing makes the entries not present in their
 * own tables.
 */
static void test_each_unit_its_table(void **state)
{
	struct machine *m = units_machine(four_units, 4, false);
	static const uint32_t unit_of[3] = { 0, 2, 1 };
	static const umsi_bdf_t bdf[3] = { DEV_A, DEV_B, DEV_C };
	struct umsi_sim_vtd_stats s0[3], s1[3];
	struct umsi_irq_info info;
	struct umsi_msg before, after;
	uint64_t w;
	struct umsi_cpumask mask = { &w, 4 };
	struct umsi_pci_dev *devs[3];
	struct three t;
	uint32_t irq;

	(void)state;
	three_up(m, &t);
	devs[0] = t.a;
	devs[1] = t.b;
	devs[2] = t.c;
	for (int i = 0; i < 3; i++) {
		for (uint32_t k = 0; k < 2; k++) {
			struct umsi_msg msg = fx_msix_msg(m, bdf[i], k);

			irq = (uint32_t)umsi_pci_irq_vector(devs[i], k);
			assert_int_equal(handle_of(&msg), k);
			assert_unit_irte(m, unit_of[i], k, irq, bdf[i]);
			assert_int_equal(umsi_irq_get_info(m->sys, irq, &info),
					 0);
			assert_int_equal(umsi_sim_fire(m->sim, bdf[i], k),
					 UMSI_SIM_FIRE_SENT);
			assert_int_equal(m->handled[irq], 1);
			assert_int_equal(m->last_cpu[irq], info.cpu);
		}
	}
	for (uint32_t u = 0; u < 3; u++) {
		assert_int_equal(ustats(m, u).remapped, 2);
		assert_int_equal(ustats(m, u).faults, 0);
	}
	assert_int_equal(ustats(m, 3).remapped, 0);

	/* DEV_C's second IRQ moves: unit 1 invalidates, no other. */
	irq = (uint32_t)umsi_pci_irq_vector(t.c, 1);
	assert_int_equal(umsi_irq_get_info(m->sys, irq, &info), 0);
	before = fx_msix_msg(m, DEV_C, 1);
	for (uint32_t u = 0; u < 3; u++)
		s0[u] = ustats(m, u);
	w = 1ull << ((info.cpu + 1) % 4);
	assert_int_equal(umsi_irq_set_affinity(m->sys, irq, &mask), 0);
	for (uint32_t u = 0; u < 3; u++)
		s1[u] = ustats(m, u);
	assert_true(s1[1].iec_index > s0[1].iec_index);
	assert_int_equal(s1[0].iec_index, s0[0].iec_index);
	assert_int_equal(s1[2].iec_index, s0[2].iec_index);
	after = fx_msix_msg(m, DEV_C, 1);
	assert_int_equal(after.address, before.address);
	assert_int_equal(after.data, before.data);
	assert_unit_irte(m, 1, 1, irq, DEV_C);
	assert_int_equal(umsi_sim_fire(m->sim, DEV_C, 1), UMSI_SIM_FIRE_SENT);
	assert_int_equal(m->last_cpu[irq], (info.cpu + 1) % 4);

	/* Freed: not present in each own table. */
	for (int i = 0; i < 3; i++)
		free_all(m, devs[i]);
	for (uint32_t u = 0; u < 3; u++) {
		assert_not_present(m, u, 0);
		assert_not_present(m, u, 1);
	}
	three_down(m, &t);
	units_machine_free(m);
}

/* ---- what no unit remaps, a unit that stops --------------------------------- */

/*
 * Without an include-all unit, a function no scope holds has no unit to
 * take its entries: MSI-X is refused for it with a log line naming the
 * requester, and leaves nothing; the function behind the root port
 * (unit 1's scope) is served.
 */
static void test_requester_no_unit_remaps_refused(void **state)
{
	static const struct umsi_vtd_unit scoped[] = {
		{ .reg_base = BASE(1), .scope = scope1, .nscope = 2 },
		{ .reg_base = BASE(2), .scope = scope2, .nscope = 1 },
	};
	struct machine *m = units_machine(scoped, 2, false);
	struct umsi_sim_dev_desc d = nvme_desc();
	struct umsi_pci_dev *port, *a, *c;
	int ret;

	(void)state;
	port = fx_root_port_up(m, PORT, 0x10, 0x1f);
	a = plug(m, DEV_A, &d, UMSI_PCI_ADD_FRESH);
	c = plug_under(m, DEV_C, &d, port);
	umsi_sim_log_clear(m->sim);
	ret = umsi_pci_alloc_irq_vectors(a, 1, 2, UMSI_PCI_IRQ_MSIX |
					 UMSI_PCI_IRQ_MSI);
	assert_true(ret < 0);
	assert_false(umsi_sim_cfg_read(m->sim, DEV_A,
		     find_cap(m, DEV_A, UMSI_PCI_CAP_ID_MSIX) + 2, 2) & 0x8000);
	assert_non_null(strstr(umsi_sim_log_text(m->sim), "x86-vtd: irq "));
	assert_non_null(strstr(umsi_sim_log_text(m->sim), "no remapping unit "
			       "remaps requester 0000:00:05.0"));
	assert_int_equal(umsi_pci_alloc_irq_vectors(c, 2, 2, UMSI_PCI_IRQ_MSIX),
			 2);
	assert_int_equal(umsi_request_irq(m->sys, (uint32_t)
			 umsi_pci_irq_vector(c, 0), fx_handler, 0, "t", m), 0);
	assert_int_equal(umsi_sim_fire(m->sim, DEV_C, 0), UMSI_SIM_FIRE_SENT);
	assert_int_equal(m->handled[umsi_pci_irq_vector(c, 0)], 1);
	assert_int_equal(umsi_sim_vtd_unit_stats(m->sim, 0, &(struct
			 umsi_sim_vtd_stats){ 0 }), 0);
	free_all(m, c);
	umsi_pci_remove(m->sys, c);
	umsi_pci_remove(m->sys, a);
	umsi_pci_remove(m->sys, port);
	machine_free_checked(m, NULL);
}

/*
 * Unit 1 stops running its queue: the function behind the root port gets
 * -UMSI_ETIMEDOUT, said once naming that unit, and unit 1 is not trusted
 * again; the function of unit 0 is served all the same, before and
 * after.
 */
static void test_silent_unit_fails_alone(void **state)
{
	struct machine *m = units_machine(four_units, 4, false);
	struct umsi_sim_dev_desc d = nvme_desc();
	struct umsi_pci_dev *port, *a, *c;
	const char *log;
	uint32_t irq;

	(void)state;
	port = fx_root_port_up(m, PORT, 0x10, 0x1f);
	a = plug(m, DEV_A, &d, UMSI_PCI_ADD_FRESH);
	c = plug_under(m, DEV_C, &d, port);
	umsi_sim_log_clear(m->sim);
	assert_int_equal(umsi_sim_vtd_unit_silent(m->sim, 1, true), 0);
	assert_int_equal(umsi_pci_alloc_irq_vectors(c, 2, 2, UMSI_PCI_IRQ_MSIX),
			 -UMSI_ETIMEDOUT);
	log = umsi_sim_log_text(m->sim);
	assert_non_null(strstr(log, "x86-vtd: invalidation not done within "
			       "10 ms"));
	assert_non_null(strstr(log, "the unit at 0xfed91000 is not trusted"));
	assert_null(strstr(strstr(log, "invalidation not done") + 1,
			   "invalidation not done"));
	assert_int_equal(umsi_pci_alloc_irq_vectors(a, 2, 2, UMSI_PCI_IRQ_MSIX),
			 2);
	irq = (uint32_t)umsi_pci_irq_vector(a, 1);
	assert_int_equal(umsi_request_irq(m->sys, irq, fx_handler, 0, "t", m),
			 0);
	assert_int_equal(umsi_sim_fire(m->sim, DEV_A, 1), UMSI_SIM_FIRE_SENT);
	assert_int_equal(m->handled[irq], 1);
	/* Unit 1 stays distrusted, even once it answers again. */
	assert_int_equal(umsi_sim_vtd_unit_silent(m->sim, 1, false), 0);
	assert_true(umsi_pci_alloc_irq_vectors(c, 1, 1, UMSI_PCI_IRQ_MSIX) < 0);
	free_all(m, a);
	umsi_pci_remove(m->sys, c);
	umsi_pci_remove(m->sys, a);
	umsi_pci_remove(m->sys, port);
	units_machine_free(m);
}

/* ---- faults ---------------------------------------------------------------- */

/*
 * A handle means something only in the table of the writer's unit: the
 * function behind the root port writing DEV_B's message (handle 0) raises
 * its own first interrupt, never DEV_B's. Handles nobody owns, written by
 * a function of unit 0 and one of unit 1, fault in those units, and
 * umsi_vtd_faults() reports both with the unit that recorded each.
 */
static void test_faults_of_each_unit(void **state)
{
	struct machine *m = units_machine(four_units, 4, false);
	struct umsi_msg msg_b;
	uint32_t irq_b, irq_c, sid, index, reason;
	struct fx_vtd_faults fl = { .n = 0 };
	struct three t;
	bool over;

	(void)state;
	three_up(m, &t);
	irq_b = (uint32_t)umsi_pci_irq_vector(t.b, 0);
	irq_c = (uint32_t)umsi_pci_irq_vector(t.c, 0);
	msg_b = fx_msix_msg(m, DEV_B, 0);
	assert_int_equal(umsi_sim_msg_write_from(m->sim, DEV_C, msg_b.address,
						 msg_b.data), 1);
	umsi_sim_quiesce(m->sim);
	assert_int_equal(m->handled[irq_b], 0);
	assert_int_equal(m->handled[irq_c], 1);
	/* Handle 100: nobody's, in unit 0 and in unit 1. */
	assert_int_equal(umsi_sim_msg_write_from(m->sim, DEV_A,
			 UMSI_X86_MSI_BASE | (1u << 4) | (100u << 5), 0), 0);
	assert_int_equal(umsi_sim_msg_write_from(m->sim, DEV_C,
			 UMSI_X86_MSI_BASE | (1u << 4) | (100u << 5), 0), 0);
	assert_int_equal(umsi_sim_vtd_unit_fault(m->sim, 0, 0, &sid, &index,
						 &reason), 0);
	assert_int_equal(sid, DEV_A);
	assert_int_equal(index, 100);
	assert_int_equal(reason, UMSI_SIM_VTD_FR_NOT_PRESENT);
	assert_int_equal(umsi_sim_vtd_unit_fault(m->sim, 1, 0, &sid, &index,
						 &reason), 0);
	assert_int_equal(sid, DEV_C);
	assert_int_equal(umsi_sim_vtd_unit_fault(m->sim, 2, 0, NULL, NULL,
						 NULL), -UMSI_ENOENT);
	assert_int_equal(umsi_vtd_faults(m->sys, fx_vtd_collect, &fl, &over), 2);
	assert_false(over);
	assert_int_equal(fl.f[0].unit, 0);
	assert_int_equal(fl.f[0].sid, DEV_A);
	assert_int_equal(fl.f[0].index, 100);
	assert_int_equal(fl.f[0].reason, UMSI_VTD_FR_NOT_PRESENT);
	assert_int_equal(fl.f[1].unit, 1);
	assert_int_equal(fl.f[1].sid, DEV_C);
	/* Read and cleared: none the second time. */
	assert_int_equal(umsi_vtd_faults(m->sys, fx_vtd_collect, &fl, &over), 0);
	free_all(m, t.a);
	free_all(m, t.b);
	free_all(m, t.c);
	three_down(m, &t);
	units_machine_free(m);
}

/* ---- IO-APICs, segments ------------------------------------------------------ */

/*
 * The second IO-APIC is in unit 1's scope (a DMAR IOAPIC scope entry
 * under that DRHD): its line's entry is in unit 1's table, validating its
 * requester ID, the first IO-APIC's in unit 0's; both lines are handled,
 * each remapped by its own unit, with no fault.
 */
static void test_ioapic_in_second_unit(void **state)
{
	struct machine *m = units_machine(four_units, 4, true);
	struct fx_two_lines t;
	uint64_t e[2];

	(void)state;
	fx_two_lines_up(m, &t);
	assert_int_equal(umsi_sim_vtd_unit_irte(m->sim, 0, t.rte[0].handle, e),
			 0);
	assert_true(e[0] & IRTE_P);
	assert_int_equal(IRTE_SID(e[1]), UMSI_SIM_VTD_IOAPIC_SID);
	assert_int_equal(umsi_sim_vtd_unit_irte(m->sim, 1, t.rte[1].handle, e),
			 0);
	assert_true(e[0] & IRTE_P);
	assert_int_equal(IRTE_SID(e[1]), FX_IOAPIC2_SID);
	fx_two_lines_fire(m, &t, 2);
	assert_int_equal(ustats(m, 0).remapped, 2);
	assert_int_equal(ustats(m, 1).remapped, 2);
	assert_int_equal(ustats(m, 0).faults + ustats(m, 1).faults, 0);
	fx_two_lines_down(m, &t);
	units_machine_free(m);
}

/*
 * A function of segment 1 is remapped by segment 1's include-all unit,
 * its entry validating its 16-bit requester ID (the unit serves one
 * segment).
 */
static void test_other_segment_unit(void **state)
{
	struct machine *m = units_machine(four_units, 4, false);
	struct umsi_sim_dev_desc d = nvme_desc();
	struct umsi_pci_dev *s1 = plug(m, DEV_S1, &d, UMSI_PCI_ADD_FRESH);
	struct umsi_msg msg;
	uint32_t irq;

	(void)state;
	assert_int_equal(umsi_pci_alloc_irq_vectors(s1, 1, 1,
						    UMSI_PCI_IRQ_MSIX), 1);
	irq = (uint32_t)umsi_pci_irq_vector(s1, 0);
	assert_int_equal(umsi_request_irq(m->sys, irq, fx_handler, 0, "t", m),
			 0);
	msg = fx_msix_msg(m, DEV_S1, 0);
	assert_int_equal(handle_of(&msg), 0);
	assert_unit_irte(m, 3, 0, irq, DEV_S1 & 0xffff);
	assert_not_present(m, 0, 0);
	assert_int_equal(umsi_sim_fire(m->sim, DEV_S1, 0), UMSI_SIM_FIRE_SENT);
	assert_int_equal(m->handled[irq], 1);
	assert_int_equal(ustats(m, 3).remapped, 1);
	assert_int_equal(ustats(m, 3).faults, 0);
	free_all(m, s1);
	umsi_pci_remove(m->sys, s1);
	units_machine_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_units_config_refused),
		cmocka_unit_test(test_units_create_failure_leaves_nothing),
		cmocka_unit_test(test_unit_silent_at_start),
		cmocka_unit_test(test_each_unit_its_table),
		cmocka_unit_test(test_requester_no_unit_remaps_refused),
		cmocka_unit_test(test_silent_unit_fails_alone),
		cmocka_unit_test(test_faults_of_each_unit),
		cmocka_unit_test(test_ioapic_in_second_unit),
		cmocka_unit_test(test_other_segment_unit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
