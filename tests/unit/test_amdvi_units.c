/* SPDX-License-Identifier: MIT */
/*
 * The AMD-Vi back end on a machine of several IOMMUs, as an IVRS table of
 * several IVHDs describes one (umsi_amdvi_config.units): configurations
 * refused with the problem named, every host call of a three-unit
 * creation failed in turn with every unit left off, each function's table
 * pointed at and invalidated in the IOMMU that serves its DeviceID (bus
 * 0, a root port's buses, segment 1), a move invalidated in its own unit
 * only, removal taking the table away there, a DeviceID no unit serves
 * refused, a unit that stops answering distrusted alone, and two
 * IO-APICs served by two units, each line remapped and ended.
 */
#include "test_pci_fixture.h"

#include <umsi/ctl.h>
#include <umsi/x86.h>

#define BASE(i)  (UMSI_SIM_AMDVI_BASE + 0x4000ull * (i))
#define CONTROL  0x18u
#define ON       (1u | 1u << 12)        /* IOMMUEn, CmdBufEn */

#define DEV_A    UMSI_BDF(0, 0, 5, 0)        /* unit 0 */
#define PORT     UMSI_BDF(0, 0, 0x1c, 0)     /* unit 0 */
#define DEV_C    UMSI_BDF(0, 0x10, 0, 0)     /* unit 1 */
#define DEV_S1   UMSI_BDF(1, 0, 3, 0)        /* unit 2 */
#define DEV_X    UMSI_BDF(0, 0, 0x1f, 0)     /* no unit */

static const struct umsi_rid_range devs0[] = {
	{ 0x0000, 0x00f7 },                     /* bus 0 up to 00:1e.7 */
	{ UMSI_SIM_VTD_IOAPIC_SID, UMSI_SIM_VTD_IOAPIC_SID },
};
static const struct umsi_rid_range devs1[] = {
	{ FX_IOAPIC2_SID, FX_IOAPIC2_SID },     /* the second IO-APIC */
	{ UMSI_BDF(0, 0x10, 0, 0), UMSI_BDF(0, 0x1f, 0x1f, 7) },
};
static const struct umsi_rid_range devs2[] = {
	{ UMSI_BDF(1, 0, 0, 0), UMSI_BDF(1, 0xff, 0x1f, 7) },
};

static const struct umsi_amdvi_unit three_units[] = {
	{ .reg_base = BASE(0), .devices = devs0, .ndevices = 2 },
	{ .reg_base = BASE(1), .devices = devs1, .ndevices = 2 },
	{ .reg_base = BASE(2), .segment = 1, .devices = devs2, .ndevices = 1 },
};

struct units_cfg {
	struct umsi_amdvi_config ac;
	struct umsi_config cfg;
};

static void units_cfg_of(const struct umsi_amdvi_unit *u, uint32_t n,
			 bool two_ioapics, struct units_cfg *c)
{
	memset(c, 0, sizeof(*c));
	c->ac.units = u;
	c->ac.nunits = n;
	c->ac.ioapic_devid = UMSI_SIM_VTD_IOAPIC_SID;
	if (two_ioapics) {
		c->ac.ioapic_devid = UMSI_AMDVI_NO_DEVID;
		c->ac.ioapics = fx_two_ioapics();
		c->ac.nioapics = 2;
	}
	c->cfg.ctl = &umsi_ctl_x86_amdvi;
	c->cfg.ctl_config = &c->ac;
}

static void units_sim_config(bool two_ioapics, struct umsi_sim_config *sc)
{
	*sc = (struct umsi_sim_config){ .ncpus = 4,
					.amdvi_units = three_units,
					.namdvi_units = 3,
					.vtd_ioapic_sid = UMSI_SIM_VTD_IOAPIC_SID };
	if (two_ioapics) {
		sc->ioapics = fx_two_ioapics();
		sc->nioapics = 2;
	}
}

static struct umsi_sim *units_sim(bool two_ioapics)
{
	struct umsi_sim_config sc;
	struct umsi_sim *sim;

	units_sim_config(two_ioapics, &sc);
	sim = umsi_sim_create(&sc);
	assert_non_null(sim);
	return sim;
}

static struct machine *units_machine(bool two_ioapics)
{
	struct umsi_sim_config sc;
	struct units_cfg c;

	units_sim_config(two_ioapics, &sc);
	units_cfg_of(three_units, 3, two_ioapics, &c);
	return fx_machine_of(&sc, &c.cfg);
}

static void all_units_off(struct umsi_sim *sim)
{
	for (uint32_t i = 0; i < 3; i++)
		assert_int_equal(umsi_sim_mmio_read32(sim, BASE(i) + CONTROL) &
				 ON, 0);
}

static void units_machine_free(struct machine *m)
{
	machine_free_checked(m, all_units_off);
}

static struct umsi_sim_amdvi_stats ustats(struct machine *m, uint32_t unit)
{
	struct umsi_sim_amdvi_stats s;

	assert_int_equal(umsi_sim_amdvi_unit_stats(m->sim, unit, &s), 0);
	return s;
}

/* ---- configuration --------------------------------------------------------- */

static void refused_units(struct umsi_sim *sim,
			  const struct umsi_amdvi_unit *u, uint32_t n,
			  const char *why)
{
	struct units_cfg c;

	units_cfg_of(u, n, false, &c);
	fx_refused(sim, &c.cfg, -UMSI_EINVAL, why);
	all_units_off(sim);
}

/*
 * Each contradiction of a units table is refused with a log line naming
 * it; a unit missing from the machine fails the creation after the ones
 * before it were turned on, and turns them off again.
 */
static void test_units_config_refused(void **state)
{
	struct umsi_sim *sim = units_sim(false);
	static const struct umsi_rid_range rev[] = { { 0x2100, 0x20ff } };
	static const struct umsi_rid_range across[] = { { 0xff00, 0x10000 } };
	static const struct umsi_rid_range seg1[] = { { 0x12000, 0x12000 } };
	static const struct umsi_rid_range over[] = { { 0x0028, 0x0028 } };
	static const struct umsi_rid_range high[] = { { 0x2000, 0x2000 } };
	struct umsi_amdvi_unit u[4];
	struct units_cfg c;

	(void)state;
	units_cfg_of(three_units, 3, false, &c);
	c.ac.reg_base = BASE(0);
	fx_refused(sim, &c.cfg, -UMSI_EINVAL, "reg_base and units both given");
	units_cfg_of(three_units, UMSI_AMDVI_MAX_UNITS + 1, false, &c);
	fx_refused(sim, &c.cfg, -UMSI_EINVAL, "more than UMSI_AMDVI_MAX_UNITS");
	units_cfg_of(NULL, 2, false, &c);
	fx_refused(sim, &c.cfg, -UMSI_EINVAL, "nunits without a units table");

	memcpy(u, three_units, sizeof(three_units));
	u[1].reg_base = BASE(1) + 0x1000;
	refused_units(sim, u, 3, "unit 1 reg_base 0xfed85000 is not a 16 KiB");
	memcpy(u, three_units, sizeof(three_units));
	u[2].reg_base = BASE(0);
	refused_units(sim, u, 3, "units 0 and 2 have one address");
	memcpy(u, three_units, sizeof(three_units));
	u[1].ndevices = 0;
	refused_units(sim, u, 3, "unit 1 (0xfed84000) serves no DeviceID");
	u[1].devices = rev;
	u[1].ndevices = 1;
	refused_units(sim, u, 3, "unit 1 DeviceIDs 0: 0x2100..0x20ff is "
		      "reversed");
	u[1].devices = across;
	refused_units(sim, u, 3, "is across segments");
	u[1].devices = seg1;
	refused_units(sim, u, 3, "is outside the unit's segment");
	u[1].devices = over;
	refused_units(sim, u, 3, "unit 1 DeviceIDs 0 (0x28..0x28) meets "
		      "unit 0's (0x0..0xf7)");
	u[1].devices = high;
	units_cfg_of(u, 3, false, &c);
	c.ac.devid_count = 0x1000;
	fx_refused(sim, &c.cfg, -UMSI_EINVAL, "unit 0 DeviceIDs 1: "
		   "0xff00..0xff00 is beyond devid_count");

	/* A fourth unit where the machine has none: the three turned off. */
	memcpy(u, three_units, sizeof(three_units));
	u[3] = (struct umsi_amdvi_unit){ .reg_base = BASE(5), .segment = 2,
					 .devices = (const struct
						     umsi_rid_range[]){
						     { 0x20000, 0x200ff } },
					 .ndevices = 1 };
	refused_units(sim, u, 4, "no IOMMU at 0xfed94000");
	umsi_sim_destroy(sim);
}

/*
 * A creation turns each unit on with its own device table and command
 * buffer (three phys_alloc blocks each), logging each; destroy turns
 * every one off. Every host call of it failed in turn leaves nothing,
 * every unit off.
 */
static void test_units_create_failure_leaves_nothing(void **state)
{
	struct umsi_sim *sim = units_sim(false);
	struct units_cfg c;

	(void)state;
	units_cfg_of(three_units, 3, false, &c);
	fx_units_create_each(sim, &c.cfg, BASE(0), 0x4000, 3, CONTROL, ON,
			     "x86-amdvi: unit at ", "65536 DeviceIDs", 9,
			     all_units_off);
	umsi_sim_destroy(sim);
}

/* ---- tables per unit -------------------------------------------------------- */

/* Two MSI-X vectors of @dev requested; each fired once, handled on its
 * CPU. */
static void two_up(struct machine *m, struct umsi_pci_dev *dev,
		   umsi_bdf_t bdf)
{
	assert_int_equal(umsi_pci_alloc_irq_vectors(dev, 2, 2,
						    UMSI_PCI_IRQ_MSIX), 2);
	for (uint32_t k = 0; k < 2; k++) {
		uint32_t irq = (uint32_t)umsi_pci_irq_vector(dev, k);
		struct umsi_irq_info info;

		assert_int_equal(umsi_request_irq(m->sys, irq, fx_handler, 0,
						  "t", m), 0);
		assert_int_equal(umsi_irq_get_info(m->sys, irq, &info), 0);
		assert_int_equal(umsi_sim_fire(m->sim, bdf, k),
				 UMSI_SIM_FIRE_SENT);
		assert_int_equal(m->handled[irq], 1);
		assert_int_equal(m->last_cpu[irq], info.cpu);
	}
}

/*
 * Each function's table is pointed at from the device table of the unit
 * that serves its DeviceID: that unit alone is told (one
 * INVALIDATE_DEVTAB_ENTRY) and remaps its messages. A move invalidates the
 * table in its own unit only; removal takes the table away there (its
 * message is aborted by that unit after).
 */
static void test_each_unit_its_devices(void **state)
{
	struct machine *m = units_machine(false);
	struct umsi_sim_dev_desc d = nvme_desc();
	struct umsi_sim_amdvi_stats s0[3], s1[3];
	struct umsi_pci_dev *port, *a, *c, *s;
	struct umsi_irq_info info;
	uint64_t w;
	struct umsi_cpumask mask = { &w, 4 };
	uint32_t data, ctrl, irq;
	uint64_t addr;

	(void)state;
	port = fx_root_port_up(m, PORT, 0x10, 0x1f);
	a = plug(m, DEV_A, &d, UMSI_PCI_ADD_FRESH);
	c = plug_under(m, DEV_C, &d, port);
	s = plug(m, DEV_S1, &d, UMSI_PCI_ADD_FRESH);
	for (uint32_t u = 0; u < 3; u++)
		s0[u] = ustats(m, u);
	two_up(m, a, DEV_A);
	two_up(m, c, DEV_C);
	two_up(m, s, DEV_S1);
	for (uint32_t u = 0; u < 3; u++) {
		s1[u] = ustats(m, u);
		assert_int_equal(s1[u].inv_devtab - s0[u].inv_devtab, 1);
		assert_int_equal(s1[u].remapped - s0[u].remapped, 2);
		assert_int_equal(s1[u].aborted, 0);
		assert_int_equal(s1[u].stale, 0);
	}

	/* DEV_C's second IRQ moves: unit 1 invalidates its table, no other. */
	irq = (uint32_t)umsi_pci_irq_vector(c, 1);
	assert_int_equal(umsi_irq_get_info(m->sys, irq, &info), 0);
	w = 1ull << ((info.cpu + 1) % 4);
	assert_int_equal(umsi_irq_set_affinity(m->sys, irq, &mask), 0);
	for (uint32_t u = 0; u < 3; u++)
		s0[u] = ustats(m, u);
	assert_int_equal(s0[1].inv_table - s1[1].inv_table, 1);
	assert_int_equal(s0[0].inv_table, s1[0].inv_table);
	assert_int_equal(s0[2].inv_table, s1[2].inv_table);
	assert_int_equal(umsi_sim_fire(m->sim, DEV_C, 1), UMSI_SIM_FIRE_SENT);
	assert_int_equal(m->last_cpu[irq], (info.cpu + 1) % 4);
	assert_int_equal(ustats(m, 1).remapped - s0[1].remapped, 1);

	/* The segment-1 function goes: its DTE aborts again, in unit 2. */
	assert_int_equal(umsi_sim_msix_entry_get(m->sim, DEV_S1, 0, &addr,
						 &data, &ctrl), 0);
	umsi_pci_remove(m->sys, s);
	assert_int_equal(ustats(m, 2).inv_devtab - s0[2].inv_devtab, 1);
	assert_int_equal(ustats(m, 0).inv_devtab, s0[0].inv_devtab);
	assert_int_equal(umsi_sim_msg_write_from(m->sim, DEV_S1, addr, data),
			 0);
	assert_int_equal(ustats(m, 2).aborted, 1);
	umsi_pci_remove(m->sys, c);
	umsi_pci_remove(m->sys, a);
	umsi_pci_remove(m->sys, port);
	assert_int_equal(umsi_sim_remove_device(m->sim, DEV_S1), 0);
	units_machine_free(m);
}

/* ---- what no unit serves, a unit that stops ---------------------------------- */

/*
 * A function whose DeviceID no unit's device entries hold has no device
 * table to be pointed at from: MSI-X and MSI are refused with a log line
 * naming it, nothing taken, no unit told anything.
 */
static void test_devid_no_unit_serves_refused(void **state)
{
	struct machine *m = units_machine(false);
	struct umsi_sim_dev_desc d = nvme_desc();
	struct umsi_pci_dev *x = plug(m, DEV_X, &d, UMSI_PCI_ADD_FRESH);
	struct umsi_sim_amdvi_stats s0 = ustats(m, 0);

	(void)state;
	umsi_sim_log_clear(m->sim);
	assert_true(umsi_pci_alloc_irq_vectors(x, 1, 2, UMSI_PCI_IRQ_MSIX |
					       UMSI_PCI_IRQ_MSI) < 0);
	assert_non_null(strstr(umsi_sim_log_text(m->sim), "no IOMMU serves "
			       "DeviceID 0000:00:1f.0"));
	assert_int_equal(ustats(m, 0).waits, s0.waits);
	umsi_pci_remove(m->sys, x);
	units_machine_free(m);
}

/*
 * Unit 1 stops running commands: the function behind the root port gets
 * -UMSI_ETIMEDOUT, said once naming that unit; unit 0's function is
 * served all the same.
 */
static void test_silent_unit_fails_alone(void **state)
{
	struct machine *m = units_machine(false);
	struct umsi_sim_dev_desc d = nvme_desc();
	struct umsi_pci_dev *port = fx_root_port_up(m, PORT, 0x10, 0x1f);
	struct umsi_pci_dev *a = plug(m, DEV_A, &d, UMSI_PCI_ADD_FRESH);
	struct umsi_pci_dev *c = plug_under(m, DEV_C, &d, port);
	const char *log;

	(void)state;
	umsi_sim_log_clear(m->sim);
	assert_int_equal(umsi_sim_amdvi_unit_silent(m->sim, 1, true), 0);
	assert_int_equal(umsi_pci_alloc_irq_vectors(c, 2, 2, UMSI_PCI_IRQ_MSIX),
			 -UMSI_ETIMEDOUT);
	log = umsi_sim_log_text(m->sim);
	assert_non_null(strstr(log, "x86-amdvi: command not done within "
			       "10 ms"));
	assert_non_null(strstr(log, "the unit at 0xfed84000 is not trusted"));
	assert_null(strstr(strstr(log, "command not done") + 1,
			   "command not done"));
	assert_int_equal(sstats(m).lock_errors, 0);
	two_up(m, a, DEV_A);
	assert_true(umsi_pci_alloc_irq_vectors(c, 1, 1, UMSI_PCI_IRQ_MSIX) < 0);
	assert_int_equal(umsi_sim_amdvi_unit_silent(m->sim, 1, false), 0);
	umsi_pci_remove(m->sys, c);
	umsi_pci_remove(m->sys, a);
	umsi_pci_remove(m->sys, port);
	/*
	 * Unit 1 may still read what it was given: left on, its memory
	 * kept (not checked for leaks); the others off.
	 */
	umsi_system_destroy(m->sys);
	assert_int_equal(umsi_sim_mmio_read32(m->sim, BASE(0) + CONTROL) & ON,
			 0);
	assert_int_equal(umsi_sim_mmio_read32(m->sim, BASE(2) + CONTROL) & ON,
			 0);
	assert_int_equal(umsi_sim_mmio_read32(m->sim, BASE(1) + CONTROL) & ON,
			 ON);
	assert_non_null(strstr(umsi_sim_log_text(m->sim), "the unit at "
			       "0xfed84000 did not answer"));
	umsi_sim_destroy(m->sim);
	free(m);
}

/* Silences IOMMU 1 once its device-table entry is set: the second MMIO
 * write (the command tail) after the interrupt table's allocation. */
struct mid_gun {
	struct machine *m;
	unsigned armed, writes;
	bool done;
};

static void silence_mid_compose(void *arg, enum umsi_sim_op op)
{
	struct mid_gun *g = arg;

	if (op == UMSI_SIM_OP_PHYS_ALLOC && !g->done)
		g->armed = 1;
	else if (op == UMSI_SIM_OP_MMIO_WRITE32 && g->armed &&
		 ++g->writes == 2) {
		assert_int_equal(umsi_sim_amdvi_unit_silent(g->m->sim, 1,
							    true), 0);
		g->armed = 0;
		g->done = true;
	}
}

/*
 * IOMMU 1 goes silent between pointing a new function's DTE at its table
 * and invalidating the table after the first entry is written: the
 * allocation fails with -UMSI_ETIMEDOUT, and nothing of it stays keyed by
 * its IRQ numbers, so those numbers serve a function of IOMMU 0 right
 * after (its messages handled where chosen).
 */
static void test_unit_silent_mid_compose(void **state)
{
	struct machine *m = units_machine(false);
	struct umsi_sim_dev_desc d = nvme_desc();
	struct umsi_pci_dev *port = fx_root_port_up(m, PORT, 0x10, 0x1f);
	struct umsi_pci_dev *a = plug(m, DEV_A, &d, UMSI_PCI_ADD_FRESH);
	struct umsi_pci_dev *c = plug_under(m, DEV_C, &d, port);
	struct mid_gun g = { .m = m };

	(void)state;
	umsi_sim_set_hook(m->sim, silence_mid_compose, &g);
	assert_int_equal(umsi_pci_alloc_irq_vectors(c, 2, 2, UMSI_PCI_IRQ_MSIX),
			 -UMSI_ETIMEDOUT);
	umsi_sim_set_hook(m->sim, NULL, NULL);
	assert_true(g.done);
	assert_int_equal(ustats(m, 1).inv_devtab, 1);
	two_up(m, a, DEV_A);
	assert_int_equal(umsi_sim_amdvi_unit_silent(m->sim, 1, false), 0);
	umsi_pci_remove(m->sys, c);
	umsi_pci_remove(m->sys, a);
	umsi_pci_remove(m->sys, port);
	/* IOMMU 1 may still read what it was given: left on, kept. */
	umsi_system_destroy(m->sys);
	umsi_sim_destroy(m->sim);
	free(m);
}

static void wr64(struct umsi_sim *sim, uint64_t at, uint64_t v)
{
	umsi_sim_mmio_write32(sim, at, (uint32_t)v);
	umsi_sim_mmio_write32(sim, at + 4, (uint32_t)(v >> 32));
}

/*
 * The simulator's check of the order this back end keeps: memory an
 * IOMMU that is on still reads (a table a DTE it was told of points at,
 * its device table) given back is a bad access, named; given back once
 * the IOMMU is off, it is not. Set up by hand: DeviceID 5's DTE remaps
 * through a 32-entry table, INVALIDATE_DEVTAB_ENTRY tells the IOMMU.
 */
static void test_freeing_what_the_iommu_reads(void **state)
{
	struct umsi_sim *sim = units_sim(false);
	const struct umsi_host_ops *o = umsi_sim_host_ops();
	uint64_t dt_pa, cmd_pa, t_pa;
	uint64_t *dt = o->phys_alloc(sim, 4096, 4096, &dt_pa);
	uint64_t *cmd = o->phys_alloc(sim, 4096, 4096, &cmd_pa);
	uint32_t *t = o->phys_alloc(sim, 128, 128, &t_pa);
	struct umsi_sim_stats st;

	(void)state;
	assert_non_null(dt);
	assert_non_null(cmd);
	assert_non_null(t);
	memset(dt, 0, 4096);
	dt[4 * 5 + 2] = 1 | 5ull << 1 | (t_pa & ~0x3full) | 2ull << 60;
	cmd[0] = 2ull << 60 | 5;                /* INVALIDATE_DEVTAB_ENTRY */
	cmd[1] = 0;
	wr64(sim, BASE(0) + 0x0000, dt_pa);     /* 128 DeviceIDs */
	wr64(sim, BASE(0) + 0x0008, cmd_pa | 8ull << 56);
	wr64(sim, BASE(0) + CONTROL, ON);
	wr64(sim, BASE(0) + 0x2008, 16);
	assert_int_equal(ustats(&(struct machine){ .sim = sim }, 0).inv_devtab,
			 1);
	o->phys_free(sim, t, 128);
	umsi_sim_stats(sim, &st);
	assert_int_equal(st.bad_accesses, 1);
	assert_non_null(strstr(umsi_sim_log_text(sim), "an AMD-Vi unit's DTE "
			       "(a DeviceID's interrupt table), on, still "
			       "reads it"));
	wr64(sim, BASE(0) + CONTROL, 0);
	o->phys_free(sim, dt, 4096);
	o->phys_free(sim, cmd, 4096);
	umsi_sim_stats(sim, &st);
	assert_int_equal(st.bad_accesses, 1);
	umsi_sim_destroy(sim);
}

/* ---- IO-APICs ------------------------------------------------------------------ */

/*
 * The first IO-APIC's DeviceID is unit 0's, the second's unit 1's: each
 * line's table is in its own unit, each line handled and ended at its own
 * IO-APIC, nothing aborted.
 */
static void test_ioapics_of_two_units(void **state)
{
	struct machine *m = units_machine(true);
	struct umsi_sim_amdvi_stats s0[2];
	struct fx_two_lines t;

	(void)state;
	for (uint32_t u = 0; u < 2; u++)
		s0[u] = ustats(m, u);
	fx_two_lines_up(m, &t);
	assert_int_equal(ustats(m, 0).inv_devtab - s0[0].inv_devtab, 1);
	assert_int_equal(ustats(m, 1).inv_devtab - s0[1].inv_devtab, 1);
	fx_two_lines_fire(m, &t, 2);
	assert_int_equal(ustats(m, 0).remapped - s0[0].remapped, 2);
	assert_int_equal(ustats(m, 1).remapped - s0[1].remapped, 2);
	assert_int_equal(ustats(m, 0).aborted + ustats(m, 1).aborted, 0);
	fx_two_lines_down(m, &t);
	units_machine_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_units_config_refused),
		cmocka_unit_test(test_units_create_failure_leaves_nothing),
		cmocka_unit_test(test_each_unit_its_devices),
		cmocka_unit_test(test_devid_no_unit_serves_refused),
		cmocka_unit_test(test_silent_unit_fails_alone),
		cmocka_unit_test(test_unit_silent_mid_compose),
		cmocka_unit_test(test_freeing_what_the_iommu_reads),
		cmocka_unit_test(test_ioapics_of_two_units),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
