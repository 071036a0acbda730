/* SPDX-License-Identifier: MIT */
/*
 * The Arm GICv3 ITS back end (src/arch/arm64/its.c) on the simulator's
 * ITS model: configurations refused at creation, every host call of a
 * creation failed in turn, MSI-X and multi-message MSI messages
 * (GITS_TRANSLATER + EventID, the DeviceID the requester) translated to
 * the LPI of the identity the core gave, moves by MOVI with the LPI and
 * the device's message left alone (under fire, and with a copy pending
 * on the old CPU, which moves with it), CPU offline
 * and online, exhaustion of a CPU's LPIs, and devices unmapped with their
 * last IRQ; a command queue that stops answering (an error, not a hang)
 * and an ITT too small for the events asked (refused).
 */
#include "test_pci_fixture.h"

#include <umsi/ctl.h>

#define DEV   UMSI_BDF(0, 0, 5, 0)
#define NVME  UMSI_BDF(0, 0, 4, 0)
#define NVME2 UMSI_BDF(0, 2, 0, 0)

#define FIRST_LPI  8192u
#define TRANSLATER (UMSI_SIM_ITS_BASE + 0x10040)

/* GITS command numbers (IHI 0069 6.3). */
#define C_MOVI    0x01
#define C_INT     0x03
#define C_SYNC    0x05
#define C_MAPD    0x08
#define C_MAPC    0x09
#define C_MAPTI   0x0a
#define C_INV     0x0c
#define C_DISCARD 0x0f

/* What the kernel does with ICC_IAR1_EL1's INTID. */
static int its_dispatch(void *arg, uint32_t cpu, uint32_t intid)
{
	return umsi_dispatch(arg, cpu, intid - FIRST_LPI);
}

struct its_cfg {
	uint64_t rd[16];
	uint64_t frame[16];
	struct umsi_its_config ic;
	struct umsi_config cfg;
};

/* The back end's configuration: processor number n for CPU n (PTA 0). */
static void its_cfg_of(uint32_t ncpus, uint32_t nvec, struct its_cfg *c)
{
	uint32_t i;

	memset(c, 0, sizeof(*c));
	for (i = 0; i < ncpus; i++)
		c->rd[i] = i;
	c->ic.its_base = UMSI_SIM_ITS_BASE;
	c->ic.nvec = nvec;
	c->ic.nr_cpus = ncpus;
	c->ic.rd_target = c->rd;
	c->cfg.ctl = &umsi_ctl_arm64_its;
	c->cfg.ctl_config = &c->ic;
}

static struct umsi_sim *its_sim(uint32_t ncpus)
{
	struct umsi_sim_config sc = { .ncpus = ncpus,
				      .controller = UMSI_SIM_CTL_ITS };
	struct umsi_sim *sim = umsi_sim_create(&sc);

	assert_non_null(sim);
	return sim;
}

/* An ITS machine whose back end has ITTs of @itt events (0: its default). */
static struct machine *its_machine_itt(uint32_t ncpus, uint32_t nvec,
				       uint32_t itt)
{
	struct machine *m = calloc(1, sizeof(*m));
	struct its_cfg c;

	assert_non_null(m);
	m->sim = its_sim(ncpus);
	umsi_sim_leaks(m->sim, &m->leaks0);
	its_cfg_of(ncpus, nvec, &c);
	c.ic.itt_events = itt;
	assert_int_equal(umsi_system_create(umsi_sim_host_ops(), m->sim,
					    &c.cfg, &m->sys), 0);
	(void)umsi_policy_parse(m->sys, "");
	umsi_sim_set_dispatch_id(m->sim, its_dispatch, m->sys);
	return m;
}

static struct machine *its_machine(uint32_t ncpus, uint32_t nvec)
{
	return its_machine_itt(ncpus, nvec, 0);
}

/* @c names every CPU's redistributor: the back end owns the LPI tables. */
static void its_cfg_frames(struct umsi_sim *sim, uint32_t ncpus,
			   struct its_cfg *c)
{
	uint32_t i;

	for (i = 0; i < ncpus; i++)
		c->frame[i] = umsi_sim_gicr_addr(sim, i);
	c->ic.rd_frame = c->frame;
}

/* An ITS machine whose back end owns the LPI tables. */
static struct machine *its_machine_tables(uint32_t ncpus)
{
	struct machine *m = calloc(1, sizeof(*m));
	struct its_cfg c;

	assert_non_null(m);
	m->sim = its_sim(ncpus);
	umsi_sim_leaks(m->sim, &m->leaks0);
	its_cfg_of(ncpus, 0, &c);
	its_cfg_frames(m->sim, ncpus, &c);
	assert_int_equal(umsi_system_create(umsi_sim_host_ops(), m->sim,
					    &c.cfg, &m->sys), 0);
	(void)umsi_policy_parse(m->sys, "");
	umsi_sim_set_dispatch_id(m->sim, its_dispatch, m->sys);
	return m;
}

/* machine_free() plus: the ITS's memory is back, nothing stalled. */
/* Disabled at teardown, before its tables went. */
static void its_disabled(struct umsi_sim *sim)
{
	assert_int_equal(umsi_sim_mmio_read32(sim, UMSI_SIM_ITS_BASE) & 1, 0);
}

static void its_machine_free(struct machine *m)
{
	machine_free_checked(m, its_disabled);
}

static struct umsi_sim_its_stats istats(struct machine *m)
{
	struct umsi_sim_its_stats s;

	assert_int_equal(umsi_sim_its_stats(m->sim, &s), 0);
	return s;
}

/* Event @k of @bdf lands on @cpu as the LPI of global identity @id. */
static void assert_maps_to(struct machine *m, umsi_bdf_t bdf, uint32_t k,
			   uint32_t cpu, uint32_t id)
{
	uint32_t c, intid;

	assert_int_equal(umsi_sim_its_translate(m->sim, bdf, k, &c, &intid), 0);
	assert_int_equal(c, cpu);
	assert_int_equal(intid, FIRST_LPI + id);
}

/* ---- configuration ------------------------------------------------------- */

/* A creation refused with -UMSI_EINVAL and a line naming @why. */
static void refused(struct umsi_sim *sim, const struct umsi_config *cfg,
		    const char *why)
{
	fx_refused(sim, cfg, -UMSI_EINVAL, why);
}

static void test_contradictory_config_refused(void **state)
{
	struct umsi_sim *sim = its_sim(4);
	struct its_cfg c;

	(void)state;
	its_cfg_of(4, 0, &c);
	c.cfg.ctl_config = NULL;
	refused(sim, &c.cfg, "no configuration");
	its_cfg_of(4, 0, &c);
	c.ic.its_base += 0x1000;
	refused(sim, &c.cfg, "its_base 0x8081000 is not a 64 KiB aligned");
	its_cfg_of(4, 0, &c);
	c.ic.first_lpi = 1024;
	refused(sim, &c.cfg, "first_lpi 1024");
	its_cfg_of(4, 100, &c);
	refused(sim, &c.cfg, "nvec 100");
	its_cfg_of(4, 4096, &c);
	c.ic.lpi_id_bits = 14;
	refused(sim, &c.cfg, "LPIs 8192..24575 for 4 CPUs exceed 14 ID bits");
	its_cfg_of(4, 0, &c);
	c.ic.itt_events = 24;
	refused(sim, &c.cfg, "itt_events 24 is not a power of two");
	its_cfg_of(4, 0, &c);
	c.ic.itt_events = 1u << 17;
	refused(sim, &c.cfg, "itt_events 131072: the ITS has 16 EventID bits");
	its_cfg_of(4, 0, &c);
	c.ic.nr_cpus = 3;
	refused(sim, &c.cfg, "rd_target has 3 entries for 4 CPUs");
	its_cfg_of(4, 0, &c);
	c.rd[2] = 0x080e0000;	/* an address, but PTA is 0 */
	refused(sim, &c.cfg, "cpu 2: rd_target 0x80e0000 is not a processor");
	umsi_sim_destroy(sim);
}

/*
 * A creation maps the ITS, gives it a device table, a collection table
 * and a command queue, and maps a collection per CPU; every host call of
 * it failed in turn refuses the system and leaves nothing (memory, the
 * mapping, the lock, the ITS's memory) behind.
 */
static void test_create_failure_leaves_nothing(void **state)
{
	struct umsi_sim *sim = its_sim(4);
	struct umsi_sim_leaks l0, l1;
	struct umsi_sim_its_stats is;
	struct umsi_system *sys;
	struct umsi_sim_stats st;
	struct its_cfg c;

	(void)state;
	its_cfg_of(4, 0, &c);
	umsi_sim_leaks(sim, &l0);
	umsi_sim_stats_reset(sim);
	assert_int_equal(umsi_system_create(umsi_sim_host_ops(), sim, &c.cfg,
					    &sys), 0);
	umsi_sim_stats(sim, &st);
	assert_int_equal(st.op_calls[UMSI_SIM_OP_MMIO_MAP], 1);
	assert_int_equal(st.op_calls[UMSI_SIM_OP_PHYS_ALLOC], 3);
	assert_int_equal(umsi_sim_its_stats(sim, &is), 0);
	assert_int_equal(is.cmds[C_MAPC], 4);
	assert_int_equal(is.cmd_errors, 0);
	assert_non_null(strstr(umsi_sim_log_text(sim), "arm64-its: ITS at "
			       "0x8080000, LPIs 8192..9215 (256 a CPU)"));
	umsi_sim_leaks(sim, &l1);
	assert_int_equal(l1.phys_allocs, l0.phys_allocs + 3);
	umsi_system_destroy(sys);
	umsi_sim_leaks(sim, &l1);
	assert_true(umsi_sim_leaks_equal(&l0, &l1));
	fx_fail_each_create(sim, &c.cfg, &l0, st.fallible_calls, NULL);
	umsi_sim_stats(sim, &st);
	assert_int_equal(st.bad_accesses, 0);
	umsi_sim_destroy(sim);
}

/* ---- MSI-X and MSI ----------------------------------------------------------- */

/*
 * MSI-X entry k's message is (GITS_TRANSLATER, k) whatever the CPU; the
 * ITS translates (the device's BDF, k) to the LPI of the identity the
 * core chose on the CPU it chose, and the handler runs there. One MAPD
 * for the device, one MAPTI per entry; no controller register written.
 */
static void test_msix_through_translater(void **state)
{
	struct machine *m = its_machine(4, 0);
	struct umsi_sim_dev_desc d = nvme_desc();
	struct umsi_pci_dev *dev = plug(m, NVME, &d, UMSI_PCI_ADD_FRESH);
	struct umsi_sim_its_stats is;
	struct umsi_sim_stats st;
	unsigned per_cpu[4] = { 0 };
	uint32_t k;

	(void)state;
	assert_int_equal(umsi_pci_alloc_irq_vectors(dev, 8, 8,
			 UMSI_PCI_IRQ_MSIX | UMSI_PCI_IRQ_AFFINITY), 8);
	for (k = 0; k < 8; k++) {
		uint32_t irq = (uint32_t)umsi_pci_irq_vector(dev, k), ctrl, data;
		struct umsi_irq_info info;
		uint64_t addr;

		assert_int_equal(umsi_irq_get_info(m->sys, irq, &info), 0);
		assert_int_equal(umsi_sim_msix_entry_get(m->sim, NVME, k, &addr,
							 &data, &ctrl), 0);
		assert_int_equal(addr, TRANSLATER);
		assert_int_equal(data, k);
		assert_maps_to(m, NVME, k, info.cpu, info.vector);
		per_cpu[info.cpu]++;
		assert_int_equal(umsi_request_irq(m->sys, irq, fx_handler, 0,
						  "t", m), 0);
	}
	for (k = 0; k < 4; k++)
		assert_int_equal(per_cpu[k], 2);
	is = istats(m);
	assert_int_equal(is.cmds[C_MAPD], 1);
	assert_int_equal(is.cmds[C_MAPTI], 8);
	assert_int_equal(is.devices, 1);
	umsi_sim_stats_reset(m->sim);
	for (k = 0; k < 8; k++) {
		uint32_t irq = (uint32_t)umsi_pci_irq_vector(dev, k);
		struct umsi_irq_info info;

		assert_int_equal(umsi_irq_get_info(m->sys, irq, &info), 0);
		assert_int_equal(umsi_sim_fire(m->sim, NVME, k),
				 UMSI_SIM_FIRE_SENT);
		assert_int_equal(m->handled[irq], 1);
		assert_int_equal(m->last_cpu[irq], info.cpu);
	}
	st = sstats(m);
	assert_int_equal(st.dispatched, 8);
	assert_int_equal(st.unassigned, 0);
	assert_int_equal(st.op_calls[UMSI_SIM_OP_EOI], 0);
	assert_int_equal(st.op_calls[UMSI_SIM_OP_SEND_IPI], 0);
	umsi_pci_remove(m->sys, dev);
	its_machine_free(m);
}

/*
 * 5 messages of a 32-capable MSI function: a block of 8 LPIs on one CPU;
 * the message's data is EventID 0 and the device ORs the number in, so
 * events 0..7 of its DeviceID are mapped to consecutive LPIs.
 */
static void test_msi_block_events(void **state)
{
	struct machine *m = its_machine(2, 64);
	struct umsi_sim_dev_desc d = msi_desc(32, true, true);
	struct umsi_pci_dev *dev = plug(m, DEV, &d, 0);
	struct umsi_irq_info i0;
	uint16_t cap = find_cap(m, DEV, UMSI_PCI_CAP_ID_MSI);
	uint32_t k;

	(void)state;
	assert_int_equal(umsi_pci_alloc_irq_vectors(dev, 1, 5, UMSI_PCI_IRQ_MSI),
			 5);
	assert_int_equal(umsi_irq_get_info(m->sys, (uint32_t)
					   umsi_pci_irq_vector(dev, 0), &i0), 0);
	assert_int_equal(i0.vector % 8, 0);
	assert_int_equal(umsi_sim_cfg_read(m->sim, DEV, cap + 4, 4),
			 (uint32_t)TRANSLATER);
	assert_int_equal(umsi_sim_cfg_read(m->sim, DEV, cap + 12, 2), 0);
	for (k = 0; k < 8; k++)
		assert_maps_to(m, DEV, k, i0.cpu, i0.vector + k);
	assert_int_equal(istats(m).cmds[C_MAPTI], 8);
	for (k = 0; k < 5; k++)
		assert_int_equal(umsi_request_irq(m->sys, (uint32_t)
						  umsi_pci_irq_vector(dev, k),
						  fx_handler, 0, "t", m), 0);
	for (k = 0; k < 5; k++) {
		int irq = umsi_pci_irq_vector(dev, k);

		assert_int_equal(umsi_sim_fire(m->sim, DEV, k),
				 UMSI_SIM_FIRE_SENT);
		assert_int_equal(m->handled[irq], 1);
		assert_int_equal(m->last_cpu[irq], i0.cpu);
	}
	assert_int_equal(sstats(m).unassigned, 0);
	umsi_pci_remove(m->sys, dev);
	its_machine_free(m);
}

/*
 * Two functions are two DeviceIDs, each with its own ITT; the last IRQ of
 * one unmaps it (DISCARD of its events, MAPD V=0) and frees its ITT,
 * while the other keeps working. Messages without a requester, or from
 * a function the ITS does not know, translate to nothing.
 */
static void test_devices_mapped_and_unmapped(void **state)
{
	struct machine *m = its_machine(2, 0);
	struct umsi_sim_dev_desc d = nvme_desc();
	struct umsi_pci_dev *a = plug(m, NVME, &d, UMSI_PCI_ADD_FRESH);
	struct umsi_pci_dev *b = plug(m, NVME2, &d, UMSI_PCI_ADD_FRESH);
	struct umsi_sim_leaks l0, l1;
	struct umsi_sim_its_stats is;
	struct umsi_sim_stats st;
	int irq;

	(void)state;
	umsi_sim_leaks(m->sim, &l0);
	assert_int_equal(umsi_pci_alloc_irq_vectors(a, 3, 3, UMSI_PCI_IRQ_MSIX),
			 3);
	assert_int_equal(umsi_pci_alloc_irq_vectors(b, 2, 2, UMSI_PCI_IRQ_MSIX),
			 2);
	is = istats(m);
	assert_int_equal(is.devices, 2);
	assert_int_equal(is.cmds[C_MAPD], 2);
	umsi_sim_leaks(m->sim, &l1);
	assert_int_equal(l1.phys_allocs, l0.phys_allocs + 2);
	/* The same message from nobody, or from a stranger: untranslated. */
	umsi_sim_stats_reset(m->sim);
	assert_int_equal(umsi_sim_msg_write(m->sim, TRANSLATER, 0), 0);
	assert_int_equal(umsi_sim_msg_write_from(m->sim, UMSI_BDF(0, 0, 9, 0),
						 TRANSLATER, 0), 0);
	assert_int_equal(umsi_sim_msg_write_from(m->sim, NVME2, TRANSLATER,
						 2), 0);
	assert_int_equal(umsi_sim_msg_write_from(m->sim, NVME2,
						 UMSI_SIM_ITS_BASE, 0), 0);
	st = sstats(m);
	assert_int_equal(st.undeliverable_by[UMSI_SIM_UNDELIV_ITS], 3);
	assert_int_equal(st.undeliverable_by[UMSI_SIM_UNDELIV_STRAY], 1);
	assert_int_equal(st.dispatched, 0);
	umsi_pci_free_irq_vectors(a);
	is = istats(m);
	assert_int_equal(is.devices, 1);
	assert_int_equal(is.cmds[C_DISCARD], 3);
	assert_int_equal(is.cmds[C_MAPD], 3);
	umsi_sim_leaks(m->sim, &l1);
	assert_int_equal(l1.phys_allocs, l0.phys_allocs + 1);
	assert_int_equal(umsi_sim_its_translate(m->sim, NVME, 0, &(uint32_t){0},
						&(uint32_t){0}), -UMSI_ENOENT);
	irq = umsi_pci_irq_vector(b, 1);
	assert_int_equal(umsi_request_irq(m->sys, (uint32_t)irq, fx_handler, 0,
					  "t", m), 0);
	assert_int_equal(umsi_sim_fire(m->sim, NVME2, 1), UMSI_SIM_FIRE_SENT);
	assert_int_equal(m->handled[irq], 1);
	umsi_pci_remove(m->sys, a);
	umsi_pci_remove(m->sys, b);
	assert_int_equal(istats(m).devices, 0);
	umsi_sim_leaks(m->sim, &l1);
	assert_int_equal(l1.phys_allocs, l0.phys_allocs);
	its_machine_free(m);
}

/* ---- migration ------------------------------------------------------------------ */

/*
 * Move @irq (entry/message @k of @bdf) to @to_cpu while the device fires
 * after every host call: the move is commands to the ITS (MOVI, SYNC; no
 * MAPTI), the LPI stays, the device's registers are not touched, no
 * message is lost or reaches no CPU, and afterwards the same message
 * lands on the new CPU.
 */
static void move_under_fire(struct machine *m, umsi_bdf_t bdf, uint32_t irq,
			    unsigned k, uint32_t to_cpu)
{
	struct fx_gun g = { .m = m, .bdf = bdf, .k = k };
	uint64_t w = 1ull << to_cpu, before = m->handled[irq];
	struct umsi_cpumask mask = { &w, umsi_sim_ncpus(m->sim) };
	struct umsi_sim_its_stats is0 = istats(m), is1;
	struct umsi_sim_dev_stats ds0 = dstats(m, bdf), ds1;
	struct umsi_irq_info info, was;
	struct umsi_sim_stats st;

	assert_int_equal(umsi_irq_get_info(m->sys, irq, &was), 0);
	umsi_sim_stats_reset(m->sim);
	ds0 = dstats(m, bdf);
	umsi_sim_set_hook(m->sim, fx_shoot, &g);
	assert_int_equal(umsi_irq_set_affinity(m->sys, irq, &mask), 0);
	umsi_sim_set_hook(m->sim, NULL, NULL);
	umsi_sim_quiesce(m->sim);
	assert_int_equal(umsi_irq_get_info(m->sys, irq, &info), 0);
	assert_int_equal(info.cpu, to_cpu);
	assert_true(g.sent > 0);
	st = sstats(m);
	ds1 = dstats(m, bdf);
	is1 = istats(m);
	assert_int_equal(st.undeliverable, 0);
	assert_int_equal(ds1.mmio_writes, ds0.mmio_writes);
	assert_int_equal(ds1.cfg_writes, ds0.cfg_writes);
	assert_int_equal(is1.cmds[C_MAPTI], is0.cmds[C_MAPTI]);
	assert_int_equal(is1.cmds[C_MOVI] - is0.cmds[C_MOVI], 1);
	assert_int_equal(is1.cmds[C_SYNC] - is0.cmds[C_SYNC], 2);
	assert_int_equal(info.vector, was.vector);
	/* Handled (messages that found the LPI pending coalesce). */
	assert_true(m->handled[irq] > before);
	assert_maps_to(m, bdf, k, to_cpu, info.vector);
	assert_int_equal(umsi_sim_fire(m->sim, bdf, k), UMSI_SIM_FIRE_SENT);
	assert_int_equal(m->last_cpu[irq], to_cpu);
}

static void test_migration_by_command_under_fire(void **state)
{
	struct machine *m = its_machine(4, 0);
	struct umsi_sim_dev_desc dx = nvme_desc();
	struct umsi_sim_dev_desc dm = msi_desc(1, true, false);
	struct umsi_pci_dev *x = plug(m, NVME, &dx, UMSI_PCI_ADD_FRESH);
	struct umsi_pci_dev *msi = plug(m, DEV, &dm, 0);
	struct umsi_irq_info info;
	uint64_t addr;
	uint32_t irq, data, ctrl;

	(void)state;
	assert_int_equal(umsi_pci_alloc_irq_vectors(x, 2, 2, UMSI_PCI_IRQ_MSIX),
			 2);
	irq = (uint32_t)umsi_pci_irq_vector(x, 1);
	assert_int_equal(umsi_request_irq(m->sys, irq, fx_handler, 0, "t", m),
			 0);
	assert_int_equal(umsi_irq_get_info(m->sys, irq, &info), 0);
	move_under_fire(m, NVME, irq, 1, (info.cpu + 1) % 4);
	move_under_fire(m, NVME, irq, 1, (info.cpu + 3) % 4);
	assert_int_equal(umsi_sim_msix_entry_get(m->sim, NVME, 1, &addr, &data,
						 &ctrl), 0);
	assert_int_equal(addr, TRANSLATER);
	assert_int_equal(data, 1);
	assert_int_equal(dstats(m, NVME).msix_live_writes, 0);

	/* MSI without mask bits: nothing to mask, nothing rewritten. */
	assert_int_equal(umsi_pci_alloc_irq_vectors(msi, 1, 1, UMSI_PCI_IRQ_MSI),
			 1);
	irq = (uint32_t)umsi_pci_irq_vector(msi, 0);
	assert_int_equal(umsi_request_irq(m->sys, irq, fx_handler, 0, "t", m),
			 0);
	assert_int_equal(umsi_irq_get_info(m->sys, irq, &info), 0);
	move_under_fire(m, DEV, irq, 0, (info.cpu + 2) % 4);
	assert_int_equal(dstats(m, DEV).msi_live_writes, 0);
	umsi_pci_remove(m->sys, x);
	umsi_pci_remove(m->sys, msi);
	its_machine_free(m);
}

struct holdoff {
	struct umsi_sim *sim;
	uint32_t cpu;
	bool held;
};

/* After the first cross-call to the old CPU, let it take interrupts. */
static void release_after_xcall(void *arg, enum umsi_sim_op op)
{
	struct holdoff *h = arg;

	if (op == UMSI_SIM_OP_RUN_ON_CPU && h->held) {
		h->held = false;
		assert_int_equal(umsi_sim_cpu_irq_enable(h->sim, h->cpu), 0);
	}
}

/*
 * The LPI became pending on the old CPU while its interrupts were off;
 * the IRQ moves meanwhile. MOVI moves the pending state to the new
 * redistributor (IHI 0069 6.3.12), so the handler runs once, on the new
 * CPU, under the same LPI; the old CPU is asked (its redistributor's
 * pending bit through the host's irq_pending, on that CPU) and holds nothing; no INT is
 * needed and nothing is spurious.
 */
static void test_pending_copy_moves_with_movi(void **state)
{
	struct machine *m = its_machine(2, 0);
	struct umsi_sim_dev_desc d = msi_desc(1, true, false);
	struct umsi_pci_dev *dev = plug(m, DEV, &d, 0);
	struct umsi_irq_info info;
	struct holdoff h = { .sim = m->sim, .held = true };
	uint64_t w;
	struct umsi_cpumask mask = { &w, 2 };
	struct umsi_sim_stats st;
	uint32_t irq, lpi;

	(void)state;
	assert_int_equal(umsi_pci_alloc_irq_vectors(dev, 1, 1,
						    UMSI_PCI_IRQ_MSI), 1);
	irq = (uint32_t)umsi_pci_irq_vector(dev, 0);
	assert_int_equal(umsi_request_irq(m->sys, irq, fx_handler, 0, "t", m),
			 0);
	assert_int_equal(umsi_irq_get_info(m->sys, irq, &info), 0);
	h.cpu = info.cpu;
	lpi = FIRST_LPI + info.vector;
	w = 1ull << (1 - info.cpu);
	assert_int_equal(umsi_sim_cpu_irq_disable(m->sim, h.cpu), 0);
	assert_int_equal(umsi_sim_fire(m->sim, DEV, 0), UMSI_SIM_FIRE_SENT);
	assert_true(umsi_sim_id_pending(m->sim, h.cpu, lpi));
	assert_int_equal(m->handled[irq], 0);
	umsi_sim_stats_reset(m->sim);
	umsi_sim_set_hook(m->sim, release_after_xcall, &h);
	assert_int_equal(umsi_irq_set_affinity(m->sys, irq, &mask), 0);
	umsi_sim_set_hook(m->sim, NULL, NULL);
	assert_false(h.held);
	assert_int_equal(m->handled[irq], 1);
	assert_int_equal(m->last_cpu[irq], 1 - h.cpu);
	assert_false(umsi_sim_id_pending(m->sim, h.cpu, lpi));
	assert_int_equal(umsi_irq_get_info(m->sys, irq, &info), 0);
	assert_int_equal(FIRST_LPI + info.vector, lpi);
	assert_int_equal(istats(m).cmds[C_INT], 0);
	assert_int_equal(istats(m).cmds[C_MOVI], 1);
	st = sstats(m);
	assert_true(st.op_calls[UMSI_SIM_OP_IRQ_PENDING] >= 1);
	assert_int_equal(st.dispatched, 1);
	assert_int_equal(umsi_spurious_count(m->sys, h.cpu), 0);
	umsi_pci_remove(m->sys, dev);
	its_machine_free(m);
}

/*
 * A CPU goes offline: its IRQs move to the others by command, the MSI-X
 * table keeps its messages, each fires on its new CPU; the CPU comes back
 * and takes an IRQ again.
 */
static void test_cpu_offline_online(void **state)
{
	struct machine *m = its_machine(4, 0);
	struct umsi_sim_dev_desc d = nvme_desc();
	struct umsi_pci_dev *dev = plug(m, NVME, &d, UMSI_PCI_ADD_FRESH);
	uint64_t w = 1ull << 1, writes;
	struct umsi_cpumask one = { &w, 4 };
	struct umsi_irq_info info;
	uint32_t k, irq;

	(void)state;
	assert_int_equal(umsi_pci_alloc_irq_vectors(dev, 4, 4, UMSI_PCI_IRQ_MSIX),
			 4);
	for (k = 0; k < 4; k++) {
		irq = (uint32_t)umsi_pci_irq_vector(dev, k);
		assert_int_equal(umsi_request_irq(m->sys, irq, fx_handler, 0,
						  "t", m), 0);
		assert_int_equal(umsi_irq_set_affinity(m->sys, irq, &one), 0);
	}
	writes = dstats(m, NVME).mmio_writes;
	assert_int_equal(umsi_cpu_offline(m->sys, 1), 0);
	assert_int_equal(umsi_sim_cpu_set_online(m->sim, 1, false), 0);
	assert_int_equal(dstats(m, NVME).mmio_writes, writes);
	umsi_sim_stats_reset(m->sim);
	for (k = 0; k < 4; k++) {
		irq = (uint32_t)umsi_pci_irq_vector(dev, k);
		assert_int_equal(umsi_irq_get_info(m->sys, irq, &info), 0);
		assert_int_not_equal(info.cpu, 1);
		assert_maps_to(m, NVME, k, info.cpu, info.vector);
		assert_int_equal(umsi_sim_fire(m->sim, NVME, k),
				 UMSI_SIM_FIRE_SENT);
		assert_int_equal(m->last_cpu[irq], info.cpu);
	}
	assert_int_equal(sstats(m).dispatched, 4);
	assert_int_equal(umsi_sim_cpu_set_online(m->sim, 1, true), 0);
	assert_int_equal(umsi_cpu_online(m->sys, 1), 0);
	irq = (uint32_t)umsi_pci_irq_vector(dev, 2);
	assert_int_equal(umsi_irq_set_affinity(m->sys, irq, &one), 0);
	assert_int_equal(umsi_sim_fire(m->sim, NVME, 2), UMSI_SIM_FIRE_SENT);
	assert_int_equal(m->last_cpu[irq], 1);
	assert_int_equal(sstats(m).unassigned, 0);
	umsi_pci_remove(m->sys, dev);
	its_machine_free(m);
}

/* ---- exhaustion ------------------------------------------------------------------ */

/* Take identities until @left are free. */
static int fill(struct machine *m, uint32_t left, struct umsi_irq_desc **ds)
{
	struct umsi_matrix_stats st;
	int n = 0;

	for (;;) {
		umsi_matrix_stats(umsi_system_matrix(m->sys), &st);
		if (st.available <= left)
			return n;
		assert_int_equal(umsi_irq_alloc(m->sys, &umsi_dead_chip, 1,
						false, NULL, false, &ds[n]), 0);
		n++;
	}
}

/*
 * One CPU of 64 LPIs: with 6 left, MSI-X asking for 7 is refused and
 * changes nothing (no ITS command either); it then shrinks to the 6 that
 * fit, each mapped, and multi-message MSI gets at most a block of 4.
 */
static void test_64_lpis_shrink_to_what_fits(void **state)
{
	struct machine *m = its_machine(1, 64);
	struct umsi_sim_dev_desc dm = msi_desc(32, true, true);
	struct umsi_sim_dev_desc dx = nvme_desc();
	struct umsi_pci_dev *msi = plug(m, DEV, &dm, 0);
	struct umsi_pci_dev *msix = plug(m, NVME, &dx, 0);
	struct umsi_irq_desc *ds[64];
	struct umsi_matrix_stats mst;
	struct umsi_sim_its_stats is0, is1;
	int n, got;

	(void)state;
	umsi_matrix_stats(umsi_system_matrix(m->sys), &mst);
	assert_int_equal(mst.available, 64);
	n = fill(m, 6, ds);
	assert_int_equal(n, 58);
	is0 = istats(m);
	assert_int_equal(umsi_pci_alloc_irq_vectors(msix, 7, 65,
						    UMSI_PCI_IRQ_MSIX),
			 -UMSI_ENOSPC);
	is1 = istats(m);
	assert_int_equal(is1.cmds[C_MAPTI], is0.cmds[C_MAPTI]);
	assert_int_equal(is1.devices, 0);
	assert_false(msix_enabled(m, NVME));
	got = umsi_pci_alloc_irq_vectors(msi, 1, 32, UMSI_PCI_IRQ_MSI);
	assert_true(got == 4 || got == 2 || got == 1);
	umsi_pci_free_irq_vectors(msi);
	assert_int_equal(umsi_pci_alloc_irq_vectors(msix, 1, 65,
						    UMSI_PCI_IRQ_MSIX), 6);
	assert_int_equal(istats(m).devices, 1);
	umsi_pci_free_irq_vectors(msix);
	assert_int_equal(istats(m).devices, 0);
	umsi_irq_release(m->sys, ds, (uint32_t)n);
	umsi_pci_remove(m->sys, msi);
	umsi_pci_remove(m->sys, msix);
	its_machine_free(m);
}

/*
 * Each device's ITT is sized to the messages it can send (MSI's multiple
 * message capable count, the MSI-X table size), a power of two of at
 * least 2 events of GITS_TYPER's 12 bytes, in 256-byte units: 1 MSI
 * message 256 bytes, 32 messages 512, 65 MSI-X entries (128 events)
 * 1536; not the 2048 events (24 KiB) the ITS would allow. Freed with the
 * device's last IRQ.
 */
static void test_itt_sized_to_device(void **state)
{
	struct machine *m = its_machine(2, 0);
	struct umsi_sim_dev_desc d1 = msi_desc(1, true, true);
	struct umsi_sim_dev_desc d32 = msi_desc(32, true, true);
	struct umsi_sim_dev_desc dx = nvme_desc();
	struct umsi_pci_dev *a = plug(m, DEV, &d1, 0);
	struct umsi_pci_dev *b = plug(m, UMSI_BDF(0, 0, 6, 0), &d32, 0);
	struct umsi_pci_dev *x = plug(m, NVME, &dx, UMSI_PCI_ADD_FRESH);
	struct umsi_sim_leaks l0, l1;

	(void)state;
	umsi_sim_leaks(m->sim, &l0);
	assert_int_equal(umsi_pci_alloc_irq_vectors(a, 1, 1, UMSI_PCI_IRQ_MSI),
			 1);
	umsi_sim_leaks(m->sim, &l1);
	assert_int_equal(l1.phys_bytes - l0.phys_bytes, 256);
	assert_int_equal(umsi_pci_alloc_irq_vectors(b, 1, 4, UMSI_PCI_IRQ_MSI),
			 4);
	umsi_sim_leaks(m->sim, &l1);
	assert_int_equal(l1.phys_bytes - l0.phys_bytes, 256 + 512);
	assert_int_equal(umsi_pci_alloc_irq_vectors(x, 2, 2, UMSI_PCI_IRQ_MSIX),
			 2);
	umsi_sim_leaks(m->sim, &l1);
	assert_int_equal(l1.phys_bytes - l0.phys_bytes, 256 + 512 + 1536);
	umsi_pci_free_irq_vectors(b);
	umsi_sim_leaks(m->sim, &l1);
	assert_int_equal(l1.phys_bytes - l0.phys_bytes, 256 + 1536);
	umsi_pci_remove(m->sys, a);
	umsi_pci_remove(m->sys, b);
	umsi_pci_remove(m->sys, x);
	umsi_sim_leaks(m->sim, &l1);
	assert_int_equal(l1.phys_bytes, l0.phys_bytes);
	its_machine_free(m);
}

/* ---- LPI tables owned by the back end (rd_frame) --------------------------- */

/*
 * Given every redistributor, the back end allocates the property table
 * and a pending table per redistributor and sets EnableLPIs on each; an
 * LPI is enabled only once its event is mapped, so none arrives held
 * (disabled) at the redistributor; "pending" is read from its own table
 * (no irq_pending), and a copy pending at a move still moves with MOVI and
 * is handled once on the new CPU. At teardown EnableLPIs is cleared and
 * every table freed.
 */
static void test_lpi_tables_owned_by_back_end(void **state)
{
	struct machine *m = its_machine_tables(4);
	struct umsi_sim_dev_desc dx = nvme_desc();
	struct umsi_sim_dev_desc dm = msi_desc(1, true, false);
	struct umsi_pci_dev *x = plug(m, NVME, &dx, UMSI_PCI_ADD_FRESH);
	struct umsi_pci_dev *msi = plug(m, DEV, &dm, 0);
	struct umsi_sim_its_stats is;
	struct umsi_irq_info info;
	struct umsi_sim_stats st;
	struct holdoff h = { .sim = m->sim, .held = true };
	uint64_t w;
	struct umsi_cpumask mask = { &w, 4 };
	uint32_t k, irq, cpu;

	(void)state;
	is = istats(m);
	assert_int_equal(is.rd_lpis_enabled, 4);
	assert_non_null(strstr(umsi_sim_log_text(m->sim), "arm64-its: LPI "
			       "property table at 0x"));
	assert_non_null(strstr(umsi_sim_log_text(m->sim), "(16 INTID bits, "
			       "priority 0xa0), pending tables for 4 "
			       "redistributors, EnableLPIs set"));
	for (cpu = 0; cpu < 4; cpu++)
		assert_int_equal(umsi_sim_mmio_read32(m->sim,
				 umsi_sim_gicr_addr(m->sim, cpu)) & 1, 1);
	assert_int_equal(umsi_pci_alloc_irq_vectors(x, 8, 8, UMSI_PCI_IRQ_MSIX),
			 8);
	umsi_sim_stats_reset(m->sim);
	for (k = 0; k < 8; k++) {
		irq = (uint32_t)umsi_pci_irq_vector(x, k);
		assert_int_equal(umsi_request_irq(m->sys, irq, fx_handler, 0,
						  "t", m), 0);
		assert_int_equal(umsi_irq_get_info(m->sys, irq, &info), 0);
		assert_int_equal(umsi_sim_fire(m->sim, NVME, k),
				 UMSI_SIM_FIRE_SENT);
		assert_int_equal(m->handled[irq], 1);
		assert_int_equal(m->last_cpu[irq], info.cpu);
	}
	assert_int_equal(istats(m).lpis_held_disabled, 0);
	assert_int_equal(sstats(m).undeliverable, 0);

	/* A copy pending at the move: read from the back end's table. */
	assert_int_equal(umsi_pci_alloc_irq_vectors(msi, 1, 1, UMSI_PCI_IRQ_MSI),
			 1);
	irq = (uint32_t)umsi_pci_irq_vector(msi, 0);
	assert_int_equal(umsi_request_irq(m->sys, irq, fx_handler, 0, "t", m),
			 0);
	assert_int_equal(umsi_irq_get_info(m->sys, irq, &info), 0);
	h.cpu = info.cpu;
	w = 1ull << ((info.cpu + 1) % 4);
	assert_int_equal(umsi_sim_cpu_irq_disable(m->sim, h.cpu), 0);
	assert_int_equal(umsi_sim_fire(m->sim, DEV, 0), UMSI_SIM_FIRE_SENT);
	umsi_sim_stats_reset(m->sim);
	umsi_sim_set_hook(m->sim, release_after_xcall, &h);
	assert_int_equal(umsi_irq_set_affinity(m->sys, irq, &mask), 0);
	umsi_sim_set_hook(m->sim, NULL, NULL);
	assert_false(h.held);
	assert_int_equal(m->handled[irq], 1);
	assert_int_equal(m->last_cpu[irq], (h.cpu + 1) % 4);
	st = sstats(m);
	assert_int_equal(st.op_calls[UMSI_SIM_OP_IRQ_PENDING], 0);
	assert_int_equal(st.dispatched, 1);

	umsi_pci_remove(m->sys, x);
	umsi_pci_remove(m->sys, msi);
	/* Teardown: EnableLPIs cleared, every table back. */
	{
		struct umsi_sim *sim = m->sim;
		struct umsi_sim_leaks l;

		umsi_system_destroy(m->sys);
		for (cpu = 0; cpu < 4; cpu++)
			assert_int_equal(umsi_sim_mmio_read32(sim,
					 umsi_sim_gicr_addr(sim, cpu)) & 1, 0);
		umsi_sim_leaks(sim, &l);
		assert_true(umsi_sim_leaks_equal(&m->leaks0, &l));
		umsi_sim_destroy(sim);
		free(m);
	}
}

/* No redistributor of the 4 has EnableLPIs (a creation undone). */
static void no_lpis_enabled(struct umsi_sim *sim)
{
	uint32_t cpu;

	for (cpu = 0; cpu < 4; cpu++)
		assert_int_equal(umsi_sim_mmio_read32(sim,
				 umsi_sim_gicr_addr(sim, cpu)) & 1, 0);
}

/*
 * A redistributor whose EnableLPIs someone already set has tables the
 * back end did not make: creation is refused (-UMSI_EBUSY) with a line
 * naming the CPU, and leaves nothing; every host call of a creation that
 * owns the tables failed in turn leaves nothing either (the redistributors
 * that were enabled are disabled again).
 */
static void test_lpi_tables_refused_or_undone(void **state)
{
	struct umsi_sim *sim = its_sim(4);
	struct umsi_sim_leaks l0, l1;
	struct umsi_system *sys = NULL;
	struct umsi_sim_stats st;
	struct its_cfg c;
	uint32_t cpu;

	(void)state;
	its_cfg_of(4, 0, &c);
	its_cfg_frames(sim, 4, &c);
	umsi_sim_leaks(sim, &l0);
	umsi_sim_mmio_write32(sim, umsi_sim_gicr_addr(sim, 2), 1);
	umsi_sim_log_clear(sim);
	assert_int_equal(umsi_system_create(umsi_sim_host_ops(), sim, &c.cfg,
					    &sys), -UMSI_EBUSY);
	assert_null(sys);
	assert_non_null(strstr(umsi_sim_log_text(sim), "cpu 2: "
			       "GICR_CTLR.EnableLPIs is already set"));
	umsi_sim_leaks(sim, &l1);
	assert_true(umsi_sim_leaks_equal(&l0, &l1));
	for (cpu = 0; cpu < 2; cpu++)
		assert_int_equal(umsi_sim_mmio_read32(sim,
				 umsi_sim_gicr_addr(sim, cpu)) & 1, 0);
	umsi_sim_mmio_write32(sim, umsi_sim_gicr_addr(sim, 2), 0);

	umsi_sim_stats_reset(sim);
	assert_int_equal(umsi_system_create(umsi_sim_host_ops(), sim, &c.cfg,
					    &sys), 0);
	umsi_sim_stats(sim, &st);
	umsi_system_destroy(sys);
	fx_fail_each_create(sim, &c.cfg, &l0, st.fallible_calls,
			    no_lpis_enabled);
	umsi_sim_stats(sim, &st);
	assert_int_equal(st.bad_accesses, 0);
	umsi_sim_destroy(sim);
}

/* ---- an ITS that stops answering, a full ITT ------------------------------------ */

/*
 * The ITS stops reading commands (GITS_CREADR stays, no Stalled bit) and
 * never starts again: the allocation that needs MAPD/MAPTI fails with an
 * error after the back end's timeout instead of waiting for ever, said
 * once in the log; no IRQ, no enabled MSI-X, no memory of the attempt
 * but the ITT the ITS was told about (kept until teardown), every LPI
 * free. The ITS is not trusted again: a later allocation fails
 * at once. Teardown gives everything back.
 */
static void test_silent_command_queue_fails(void **state)
{
	struct machine *m = its_machine(4, 0);
	struct umsi_sim_dev_desc d = nvme_desc();
	struct umsi_pci_dev *dev = plug(m, NVME, &d, UMSI_PCI_ADD_FRESH);
	struct umsi_sim_its_stats is0, is1;
	struct umsi_sim_leaks l0, l1;
	struct umsi_matrix_stats ms0, ms1;
	const char *log;
	int ret;

	(void)state;
	umsi_sim_leaks(m->sim, &l0);
	umsi_matrix_stats(umsi_system_matrix(m->sys), &ms0);
	is0 = istats(m);
	umsi_sim_log_clear(m->sim);
	assert_int_equal(umsi_sim_its_silent(m->sim, true), 0);

	ret = umsi_pci_alloc_irq_vectors(dev, 4, 4, UMSI_PCI_IRQ_MSIX);
	assert_int_equal(ret, -UMSI_ETIMEDOUT);
	assert_true(umsi_pci_irq_vector(dev, 0) < 0);
	assert_false(msix_enabled(m, NVME));
	umsi_sim_leaks(m->sim, &l1);
	/*
	 * Nothing of the attempt but the device's ITT: the ITS was told
	 * about it (MAPD queued) and may run that command if it ever answers
	 * again, so the back end keeps the ITT until teardown.
	 */
	assert_int_equal(l1.allocs, l0.allocs + 1);     /* its record */
	assert_int_equal(l1.maps, l0.maps);
	assert_int_equal(l1.locks, l0.locks);
	assert_int_equal(l1.phys_allocs, l0.phys_allocs + 1);
	umsi_matrix_stats(umsi_system_matrix(m->sys), &ms1);
	assert_int_equal(ms1.available, ms0.available);
	is1 = istats(m);
	assert_int_equal(is1.cmds[C_MAPD], is0.cmds[C_MAPD]);
	assert_int_equal(is1.cmds[C_MAPTI], is0.cmds[C_MAPTI]);
	assert_int_equal(is1.cmd_errors, 0);
	assert_int_equal(is1.devices, 0);
	log = umsi_sim_log_text(m->sim);
	assert_non_null(strstr(log, "arm64-its: commands not done"));
	assert_null(strstr(strstr(log, "commands not done") + 1,
			   "commands not done"));

	/* Not retried: the next allocation fails too, without waiting. */
	ret = umsi_pci_alloc_irq_vectors(dev, 1, 4, UMSI_PCI_IRQ_MSIX);
	assert_true(ret < 0);
	assert_false(msix_enabled(m, NVME));
	umsi_sim_leaks(m->sim, &l1);
	/* Still that one ITT; nothing more. */
	assert_int_equal(l1.allocs, l0.allocs + 1);
	assert_int_equal(l1.phys_allocs, l0.phys_allocs + 1);
	assert_int_equal(istats(m).cmds[C_MAPTI], is0.cmds[C_MAPTI]);

	umsi_pci_remove(m->sys, dev);
	its_machine_free(m);
}

/*
 * ITTs of 8 events: MSI-X entries 0..7 fit, a ninth does not. Asking for
 * 9..16 (or a 16-message MSI block) is refused with the reason in the
 * log and nothing left: whatever was mapped undone (DISCARD, MAPD V=0),
 * no event translated, no ITT, the capability not enabled, every LPI
 * still free. Exactly 8 then works.
 */
static void test_full_itt_refused(void **state)
{
	struct machine *m = its_machine_itt(2, 0, 8);
	struct umsi_sim_dev_desc dx = nvme_desc();
	struct umsi_sim_dev_desc dm = msi_desc(32, true, true);
	struct umsi_pci_dev *msix = plug(m, NVME, &dx, UMSI_PCI_ADD_FRESH);
	struct umsi_pci_dev *msi = plug(m, DEV, &dm, 0);
	struct umsi_sim_its_stats is0, is1;
	struct umsi_matrix_stats ms0, ms1;
	struct umsi_sim_leaks l0, l1;
	uint32_t k;
	int ret;

	(void)state;
	umsi_sim_leaks(m->sim, &l0);
	umsi_matrix_stats(umsi_system_matrix(m->sys), &ms0);
	is0 = istats(m);
	umsi_sim_log_clear(m->sim);
	ret = umsi_pci_alloc_irq_vectors(msix, 9, 16, UMSI_PCI_IRQ_MSIX);
	assert_true(ret < 0);
	assert_non_null(strstr(umsi_sim_log_text(m->sim),
			       "ITT of 8"));
	assert_false(msix_enabled(m, NVME));
	umsi_sim_log_clear(m->sim);
	ret = umsi_pci_alloc_irq_vectors(msi, 16, 16, UMSI_PCI_IRQ_MSI);
	assert_true(ret < 0);
	assert_non_null(strstr(umsi_sim_log_text(m->sim),
			       "ITT of 8"));
	assert_false(msi_enabled(m, DEV));
	/* MSI-X entries are activated one by one: 0..7 may have been
	 * mapped before 8 was refused; every one was undone. */
	is1 = istats(m);
	assert_int_equal(is1.devices, 0);
	assert_int_equal(is1.cmds[C_MAPTI] - is0.cmds[C_MAPTI],
			 is1.cmds[C_DISCARD] - is0.cmds[C_DISCARD]);
	assert_int_equal((is1.cmds[C_MAPD] - is0.cmds[C_MAPD]) % 2, 0);
	for (k = 0; k < 16; k++) {
		uint32_t c, intid;

		assert_int_equal(umsi_sim_its_translate(m->sim, NVME, k, &c,
							&intid), -UMSI_ENOENT);
	}
	assert_int_equal(is1.cmd_errors, 0);
	umsi_sim_leaks(m->sim, &l1);
	assert_true(umsi_sim_leaks_equal(&l0, &l1));
	umsi_matrix_stats(umsi_system_matrix(m->sys), &ms1);
	assert_int_equal(ms1.available, ms0.available);

	/* The ITT's size exactly. */
	assert_int_equal(umsi_pci_alloc_irq_vectors(msix, 8, 8,
						    UMSI_PCI_IRQ_MSIX), 8);
	for (k = 0; k < 8; k++) {
		struct umsi_irq_info info;

		assert_int_equal(umsi_irq_get_info(m->sys,
			(uint32_t)umsi_pci_irq_vector(msix, k), &info), 0);
		assert_maps_to(m, NVME, k, info.cpu, info.vector);
	}
	assert_int_equal(istats(m).devices, 1);
	umsi_pci_free_irq_vectors(msix);
	assert_int_equal(istats(m).devices, 0);
	umsi_pci_remove(m->sys, msi);
	umsi_pci_remove(m->sys, msix);
	its_machine_free(m);
}

/* ---- functions that share a DeviceID ---------------------------------------- */

#define CB     UMSI_BDF(0, 0, 0x1d, 0)
#define CB_FN(d) UMSI_BDF(0, 3, (d), 0)

/* A conventional PCI-to-PCI bridge to bus 3 with one MSI message. */
static struct umsi_sim_dev_desc conv_bridge_desc(void)
{
	return fx_bridge_desc(3, -1, true);
}

/* A conventional function with an MSI-X table of @n entries. */
static struct umsi_sim_dev_desc conv_msix_desc(uint16_t n)
{
	struct umsi_sim_dev_desc d = nvme_desc();

	d.pcie.present = false;
	d.msix.nentries = n;
	return d;
}

/* Every vector of @dev (@n) fires once and is handled on its CPU. */
static void fire_all(struct machine *m, struct umsi_pci_dev *dev,
		     umsi_bdf_t bdf, uint32_t n)
{
	uint32_t k;

	for (k = 0; k < n; k++) {
		int irq = umsi_pci_irq_vector(dev, k);
		struct umsi_irq_info info;
		uint64_t before = m->handled[irq];

		assert_int_equal(umsi_irq_get_info(m->sys, (uint32_t)irq,
						   &info), 0);
		assert_int_equal(umsi_sim_fire(m->sim, bdf, k),
				 UMSI_SIM_FIRE_SENT);
		assert_int_equal(m->handled[irq], before + 1);
		assert_int_equal(m->last_cpu[irq], info.cpu);
	}
}

/*
 * A conventional PCI-to-PCI bridge forwards its functions' messages with
 * its own requester ID, so the bridge (its hot-plug MSI) and the three
 * functions behind it are one DeviceID to the ITS: one MAPD, one ITT
 * sized for every message they can send together (1 + 1 + 8 + 4: 16
 * events, 256 bytes), each IRQ its own events in it (the MSI block an
 * aligned run), every message delivered. The ITT stays while any of
 * them has an IRQ and goes with the last.
 */
static void test_shared_deviceid_one_itt(void **state)
{
	struct machine *m = its_machine(4, 0);
	struct umsi_sim_dev_desc db = conv_bridge_desc();
	struct umsi_sim_dev_desc d1 = msi_desc(1, true, false);
	struct umsi_sim_dev_desc dx = conv_msix_desc(8);
	struct umsi_sim_dev_desc d4 = msi_desc(4, true, true);
	struct umsi_pci_dev *b = plug_under(m, CB, &db, NULL);
	struct umsi_pci_dev *f1 = plug_under(m, CB_FN(1), &d1, b);
	struct umsi_pci_dev *fx = plug_under(m, CB_FN(2), &dx, b);
	struct umsi_pci_dev *f4 = plug_under(m, CB_FN(5), &d4, b);
	struct umsi_sim_its_stats is0 = istats(m), is;
	struct umsi_sim_leaks l0, l1;
	bool seen[16] = { false };
	uint32_t k, intid, c;

	(void)state;
	umsi_sim_leaks(m->sim, &l0);
	assert_int_equal(umsi_pci_alloc_irq_vectors(b, 1, 1, UMSI_PCI_IRQ_MSI),
			 1);
	assert_int_equal(umsi_pci_alloc_irq_vectors(f1, 1, 1,
						    UMSI_PCI_IRQ_MSI), 1);
	assert_int_equal(umsi_pci_alloc_irq_vectors(fx, 8, 8,
						    UMSI_PCI_IRQ_MSIX), 8);
	assert_int_equal(umsi_pci_alloc_irq_vectors(f4, 4, 4,
						    UMSI_PCI_IRQ_MSI), 4);
	is = istats(m);
	assert_int_equal(is.devices, 1);
	assert_int_equal(is.cmds[C_MAPD] - is0.cmds[C_MAPD], 1);
	umsi_sim_leaks(m->sim, &l1);
	assert_int_equal(l1.phys_bytes - l0.phys_bytes, 256);
	/* 14 events of DeviceID CB taken, each to an LPI of its own. */
	for (k = 0; k < 16; k++) {
		if (umsi_sim_its_translate(m->sim, CB, k, &c, &intid))
			continue;
		assert_true(intid >= FIRST_LPI);
		seen[k] = true;
	}
	for (k = 0, c = 0; k < 16; k++)
		c += seen[k];
	assert_int_equal(c, 14);
	/* The block's data is a multiple of 4: the device ORs k in. */
	assert_int_equal(umsi_sim_cfg_read(m->sim, CB_FN(5), find_cap(m,
			 CB_FN(5), UMSI_PCI_CAP_ID_MSI) + 12, 2) % 4, 0);
	for (k = 0; k < 8; k++)
		assert_int_equal(umsi_pci_request_irq(fx, k, fx_handler, 0,
						      "x", m), 0);
	for (k = 0; k < 4; k++)
		assert_int_equal(umsi_pci_request_irq(f4, k, fx_handler, 0,
						      "4", m), 0);
	assert_int_equal(umsi_pci_request_irq(f1, 0, fx_handler, 0, "1", m), 0);
	assert_int_equal(umsi_pci_request_irq(b, 0, fx_handler, 0, "b", m), 0);
	fire_all(m, b, CB, 1);
	fire_all(m, f1, CB_FN(1), 1);
	fire_all(m, fx, CB_FN(2), 8);
	fire_all(m, f4, CB_FN(5), 4);
	assert_int_equal(sstats(m).unassigned, 0);
	assert_int_equal(istats(m).cmd_errors, 0);

	/* The ITT goes with the last of them, not before. */
	umsi_pci_remove(m->sys, fx);
	umsi_pci_remove(m->sys, b);
	umsi_pci_remove(m->sys, f1);
	assert_int_equal(istats(m).devices, 1);
	fire_all(m, f4, CB_FN(5), 4);
	umsi_pci_remove(m->sys, f4);
	is = istats(m);
	assert_int_equal(is.devices, 0);
	assert_int_equal(is.cmds[C_MAPD] - is0.cmds[C_MAPD], 2);
	assert_int_equal(is.cmds[C_MAPTI] - is0.cmds[C_MAPTI],
			 is.cmds[C_DISCARD] - is0.cmds[C_DISCARD]);
	assert_int_equal(is.cmd_errors, 0);
	umsi_sim_leaks(m->sim, &l1);
	assert_int_equal(l1.phys_bytes, l0.phys_bytes);
	its_machine_free(m);
}

/*
 * A function that joins a shared DeviceID after its ITT was sized (hot
 * plug behind the bridge): it gets the events still free, as many
 * vectors as fit when it asks for a range, and a clean refusal (nothing
 * mapped, nothing held) when even its minimum does not fit. Once the
 * others leave, the ITT is made anew for what is there.
 */
static void test_late_function_shares_what_is_left(void **state)
{
	struct machine *m = its_machine(2, 0);
	struct umsi_sim_dev_desc db = conv_bridge_desc();
	struct umsi_sim_dev_desc dx = conv_msix_desc(8);
	struct umsi_sim_dev_desc d4 = msi_desc(4, true, true);
	struct umsi_pci_dev *b = plug_under(m, CB, &db, NULL);
	struct umsi_pci_dev *fx = plug_under(m, CB_FN(2), &dx, b);
	struct umsi_pci_dev *late, *late2;
	struct umsi_sim_its_stats is0, is1;
	struct snapshot s0;

	(void)state;
	/* 1 + 8 = 9 messages: an ITT of 16 events. */
	assert_int_equal(umsi_pci_alloc_irq_vectors(b, 1, 1, UMSI_PCI_IRQ_MSI),
			 1);
	assert_int_equal(umsi_pci_alloc_irq_vectors(fx, 8, 8,
						    UMSI_PCI_IRQ_MSIX), 8);
	late = plug_under(m, CB_FN(3), &dx, b);
	s0 = snap(m);
	is0 = istats(m);
	/* 7 events left: 8 at least is refused, leaving nothing. */
	umsi_sim_log_clear(m->sim);
	assert_int_equal(umsi_pci_alloc_irq_vectors(late, 8, 8,
						    UMSI_PCI_IRQ_MSIX),
			 -UMSI_ENOSPC);
	assert_non_null(strstr(umsi_sim_log_text(m->sim), "ITT of 16"));
	assert_false(msix_enabled(m, CB_FN(3)));
	is1 = istats(m);
	assert_int_equal(is1.cmds[C_MAPTI] - is0.cmds[C_MAPTI],
			 is1.cmds[C_DISCARD] - is0.cmds[C_DISCARD]);
	assert_int_equal(is1.cmds[C_MAPD], is0.cmds[C_MAPD]);
	{
		struct snapshot s1 = snap(m);

		assert_same(&s0, &s1);
	}
	/* Asked for 1..8: the 7 that fit, every one delivered. */
	assert_int_equal(umsi_pci_alloc_irq_vectors(late, 1, 8,
						    UMSI_PCI_IRQ_MSIX), 7);
	for (uint32_t k = 0; k < 7; k++)
		assert_int_equal(umsi_pci_request_irq(late, k, fx_handler, 0,
						      "late", m), 0);
	fire_all(m, late, CB_FN(3), 7);
	/* A 4-message MSI function finds no room: a smaller block? none. */
	late2 = plug_under(m, CB_FN(4), &d4, b);
	assert_int_equal(umsi_pci_alloc_irq_vectors(late2, 1, 4,
						    UMSI_PCI_IRQ_MSI),
			 -UMSI_ENOSPC);
	assert_false(msi_enabled(m, CB_FN(4)));
	/* Everyone else leaves: a new ITT, sized for who is there. */
	umsi_pci_remove(m->sys, fx);
	umsi_pci_remove(m->sys, late);
	umsi_pci_free_irq_vectors(b);
	assert_int_equal(istats(m).devices, 0);
	assert_int_equal(umsi_pci_alloc_irq_vectors(late2, 1, 4,
						    UMSI_PCI_IRQ_MSI), 4);
	umsi_pci_remove(m->sys, late2);
	umsi_pci_remove(m->sys, b);
	assert_int_equal(istats(m).devices, 0);
	assert_int_equal(istats(m).cmd_errors, 0);
	its_machine_free(m);
}

/*
 * ITTs of 8 events: a driver asking for 1..16 of MSI-X or MSI gets the 8
 * that fit (MSI-X shrinks towards its minimum; MSI halves its block),
 * not an error.
 */
static void test_small_itt_shrinks_towards_min(void **state)
{
	struct machine *m = its_machine_itt(2, 0, 8);
	struct umsi_sim_dev_desc dx = nvme_desc();
	struct umsi_sim_dev_desc dm = msi_desc(32, true, true);
	struct umsi_pci_dev *x = plug(m, NVME, &dx, UMSI_PCI_ADD_FRESH);
	struct umsi_pci_dev *msi = plug(m, DEV, &dm, 0);
	uint32_t k;

	(void)state;
	assert_int_equal(umsi_pci_alloc_irq_vectors(x, 1, 16,
			 UMSI_PCI_IRQ_MSIX | UMSI_PCI_IRQ_MSI), 8);
	assert_true(msix_enabled(m, NVME));
	for (k = 0; k < 8; k++)
		assert_int_equal(umsi_pci_request_irq(x, k, fx_handler, 0,
						      "x", m), 0);
	fire_all(m, x, NVME, 8);
	assert_int_equal(umsi_pci_alloc_irq_vectors(msi, 1, 16,
						    UMSI_PCI_IRQ_MSI), 8);
	for (k = 0; k < 8; k++)
		assert_int_equal(umsi_pci_request_irq(msi, k, fx_handler, 0,
						      "m", m), 0);
	fire_all(m, msi, DEV, 8);
	assert_int_equal(istats(m).cmd_errors, 0);
	umsi_pci_remove(m->sys, x);
	umsi_pci_remove(m->sys, msi);
	assert_int_equal(istats(m).devices, 0);
	its_machine_free(m);
}

/*
 * MSI's Message Control write fails at free: the IRQ stays quarantined
 * with its events mapped (the device may still send). The function gets
 * vectors again, on other events, and frees them; at removal the
 * quarantined IRQ's events are discarded once. The ITS never refuses a
 * command and the next function is served.
 */
static void test_quarantined_events_released_once(void **state)
{
	struct machine *m = its_machine(2, 0);
	struct umsi_sim_dev_desc d = msi_desc(1, true, false);
	struct umsi_pci_dev *a = plug(m, DEV, &d, 0), *b;
	struct umsi_sim_its_stats is;

	(void)state;
	assert_int_equal(umsi_pci_alloc_irq_vectors(a, 1, 1, UMSI_PCI_IRQ_MSI),
			 1);
	/* Free: 1 Command read, then the Message Control write fails. */
	umsi_sim_fail_at(m->sim, 2, -UMSI_EIO);
	umsi_pci_free_irq_vectors(a);
	assert_int_equal(umsi_irq_quarantined(m->sys, NULL), 1);
	assert_int_equal(umsi_pci_alloc_irq_vectors(a, 1, 1, UMSI_PCI_IRQ_MSI),
			 1);
	assert_int_equal(umsi_pci_request_irq(a, 0, fx_handler, 0, "a", m), 0);
	fire_all(m, a, DEV, 1);
	umsi_pci_free_irq_vectors(a);
	umsi_sim_remove_device(m->sim, DEV);
	umsi_pci_remove(m->sys, a);
	assert_int_equal(umsi_irq_quarantined(m->sys, NULL), 0);
	is = istats(m);
	assert_int_equal(is.cmd_errors, 0);
	assert_int_equal(is.devices, 0);
	assert_int_equal(is.cmds[C_MAPTI], is.cmds[C_DISCARD]);
	b = plug(m, NVME, &d, 0);
	assert_int_equal(umsi_pci_alloc_irq_vectors(b, 1, 1, UMSI_PCI_IRQ_MSI),
			 1);
	umsi_pci_remove(m->sys, b);
	assert_int_equal(istats(m).devices, 0);
	its_machine_free(m);
}

/*
 * Every host call of a function's set-up on a shared DeviceID failed in
 * turn (the bridge's own MSI holds the ITT already, sized for both, and
 * the function behind it joins): a failed set-up leaves the ITT as it was (no event taken,
 * none mapped: MAPTI and DISCARD even), the bridge's message still
 * delivered; a set-up that succeeds anyway is undone whole by free.
 */
static void test_shared_deviceid_join_failures(void **state)
{
	struct umsi_sim_dev_desc db = conv_bridge_desc();
	struct umsi_sim_dev_desc dx = conv_msix_desc(8);
	uint64_t n = 0, k;
	int failed = 0;

	(void)state;
	for (k = 0; k == 0 || k <= n; k++) {
		struct machine *m = its_machine(2, 0);
		struct umsi_pci_dev *b = plug_under(m, CB, &db, NULL);
		struct umsi_pci_dev *fx = plug_under(m, CB_FN(2), &dx, b);
		struct umsi_sim_its_stats is0, is1;
		struct snapshot s0, s1;
		int ret;

		assert_int_equal(umsi_pci_alloc_irq_vectors(b, 1, 1,
							    UMSI_PCI_IRQ_MSI), 1);
		assert_int_equal(umsi_pci_request_irq(b, 0, fx_handler, 0, "b",
						      m), 0);
		s0 = snap(m);
		is0 = istats(m);
		umsi_sim_stats_reset(m->sim);
		if (k)
			umsi_sim_fail_at(m->sim, k, -UMSI_EIO);
		ret = umsi_pci_alloc_irq_vectors(fx, 4, 4, UMSI_PCI_IRQ_MSIX);
		umsi_sim_fail_at(m->sim, 0, 0);
		if (!k) {
			assert_int_equal(ret, 4);
			n = sstats(m).fallible_calls;
			assert_true(n > 0);
		}
		if (ret < 0) {
			failed++;
			assert_false(msix_enabled(m, CB_FN(2)));
		} else {
			umsi_pci_free_irq_vectors(fx);
		}
		s1 = snap(m);
		assert_same(&s0, &s1);
		is1 = istats(m);
		assert_int_equal(is1.cmds[C_MAPTI] - is0.cmds[C_MAPTI],
				 is1.cmds[C_DISCARD] - is0.cmds[C_DISCARD]);
		assert_int_equal(is1.devices, 1);
		assert_int_equal(is1.cmd_errors, 0);
		fire_all(m, b, CB, 1);
		umsi_pci_remove(m->sys, fx);
		umsi_pci_remove(m->sys, b);
		assert_int_equal(istats(m).devices, 0);
		its_machine_free(m);
	}
	assert_true(failed > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_contradictory_config_refused),
		cmocka_unit_test(test_create_failure_leaves_nothing),
		cmocka_unit_test(test_msix_through_translater),
		cmocka_unit_test(test_msi_block_events),
		cmocka_unit_test(test_devices_mapped_and_unmapped),
		cmocka_unit_test(test_migration_by_command_under_fire),
		cmocka_unit_test(test_pending_copy_moves_with_movi),
		cmocka_unit_test(test_cpu_offline_online),
		cmocka_unit_test(test_64_lpis_shrink_to_what_fits),
		cmocka_unit_test(test_silent_command_queue_fails),
		cmocka_unit_test(test_full_itt_refused),
		cmocka_unit_test(test_itt_sized_to_device),
		cmocka_unit_test(test_lpi_tables_owned_by_back_end),
		cmocka_unit_test(test_lpi_tables_refused_or_undone),
		cmocka_unit_test(test_shared_deviceid_one_itt),
		cmocka_unit_test(test_late_function_shares_what_is_left),
		cmocka_unit_test(test_small_itt_shrinks_towards_min),
		cmocka_unit_test(test_quarantined_events_released_once),
		cmocka_unit_test(test_shared_deviceid_join_failures),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
