/* SPDX-License-Identifier: MIT */
/*
 * The AMD-Vi interrupt-remapping back end (src/arch/x86/amdvi.c) on the
 * simulator's AMD-Vi unit (platform/sim/sim_amdvi.c): configurations
 * refused at creation, every host call of a creation failed in turn,
 * MSI-X messages (0xFEE00000, data an index) whose entries in the
 * function's own table name the CPU and vector the core chose, moves that
 * rewrite the entry and leave the device's message alone (under fire),
 * a multi-message MSI block with each message on its own CPU, forged
 * messages (another device's index, an index nobody owns, a message
 * straight at a CPU) aborted by the unit and reaching no handler, removal
 * that takes the table away, functions behind a PCIe-to-PCI bridge
 * sharing one table, a unit that never completes a command, INTx
 * through the IO-APIC's own table with the kernel's directed EOI, and
 * INTx of two IO-APICs, each in its own table and ended at its own EOI
 * register.
 */
#include "test_pci_fixture.h"

#include <umsi/ctl.h>
#include <umsi/x86.h>

#define DEV   UMSI_BDF(0, 0, 5, 0)
#define DEV6  UMSI_BDF(0, 0, 6, 0)
#define NVME  UMSI_BDF(0, 0, 4, 0)
#define AV    UMSI_SIM_AMDVI_BASE

struct av_cfg {
	struct umsi_amdvi_config ac;
	struct umsi_config cfg;
};

static void av_cfg_of(struct av_cfg *c)
{
	memset(c, 0, sizeof(*c));
	c->ac.reg_base = AV;
	c->ac.devid_count = 0;
	c->ac.ioapic_devid = UMSI_SIM_VTD_IOAPIC_SID;
	c->cfg.ctl = &umsi_ctl_x86_amdvi;
	c->cfg.ctl_config = &c->ac;
}

static struct umsi_sim *av_sim(uint32_t ncpus)
{
	struct umsi_sim_config sc = { .ncpus = ncpus, .amdvi = true,
				      .vtd_ioapic_sid = UMSI_SIM_VTD_IOAPIC_SID };
	struct umsi_sim *sim = umsi_sim_create(&sc);

	assert_non_null(sim);
	return sim;
}

static struct machine *av_machine(uint32_t ncpus)
{
	struct machine *m = calloc(1, sizeof(*m));
	struct av_cfg c;

	assert_non_null(m);
	m->sim = av_sim(ncpus);
	umsi_sim_leaks(m->sim, &m->leaks0);
	av_cfg_of(&c);
	assert_int_equal(umsi_system_create(umsi_sim_host_ops(), m->sim,
					    &c.cfg, &m->sys), 0);
	(void)umsi_policy_parse(m->sys, "");
	fx_set_dispatch(m->sim, m->sys);
	return m;
}

/* The unit and its command buffer are off (teardown, a creation undone). */
static void unit_off(struct umsi_sim *sim)
{
	assert_int_equal(umsi_sim_mmio_read32(sim, AV + 0x18) &
			 (1u | 1u << 12), 0);
}

static void av_machine_free(struct machine *m)
{
	machine_free_checked(m, unit_off);
}

static struct umsi_sim_amdvi_stats astats(struct machine *m)
{
	struct umsi_sim_amdvi_stats s;

	assert_int_equal(umsi_sim_amdvi_stats(m->sim, &s), 0);
	return s;
}

/* The MSI address and data of @bdf (its capability found by walking). */
static void msi_msg(struct machine *m, umsi_bdf_t bdf, uint64_t *addr,
		    uint32_t *data)
{
	uint16_t ptr = (uint16_t)umsi_sim_cfg_read(m->sim, bdf, 0x34, 1);
	uint16_t ctl;
	int n;

	for (n = 0; n < 48 && ptr >= 0x40; n++) {
		if (umsi_sim_cfg_read(m->sim, bdf, ptr, 1) == 0x05)
			break;
		ptr = (uint16_t)umsi_sim_cfg_read(m->sim, bdf, ptr + 1, 1);
	}
	assert_int_equal(umsi_sim_cfg_read(m->sim, bdf, ptr, 1), 0x05);
	ctl = (uint16_t)umsi_sim_cfg_read(m->sim, bdf, ptr + 2, 2);
	*addr = umsi_sim_cfg_read(m->sim, bdf, ptr + UMSI_MSI_ADDR_LO, 4);
	*data = umsi_sim_cfg_read(m->sim, bdf, ptr + ((ctl & (1u << 7)) ?
				  UMSI_MSI_DATA_64 : UMSI_MSI_DATA_32), 2);
}

/* ---- configuration ------------------------------------------------------------- */

static void test_contradictory_config_refused(void **state)
{
	struct umsi_sim *sim = av_sim(2);
	struct umsi_sim_config sc = { .ncpus = 2 };
	struct umsi_sim *plain;
	struct umsi_system *sys;
	struct av_cfg c;

	(void)state;
	av_cfg_of(&c);
	c.cfg.ctl_config = NULL;
	fx_refused(sim, &c.cfg, -UMSI_EINVAL, "x86-amdvi: no configuration");
	av_cfg_of(&c);
	c.ac.reg_base += 0x1000;
	fx_refused(sim, &c.cfg, -UMSI_EINVAL, "reg_base 0xfed81000 is not a "
		   "16 KiB");
	av_cfg_of(&c);
	c.ac.devid_count = 200;
	fx_refused(sim, &c.cfg, -UMSI_EINVAL, "devid_count 200 is not a "
		   "multiple of 128");
	av_cfg_of(&c);
	c.ac.devid_count = 128;
	fx_refused(sim, &c.cfg, -UMSI_EINVAL, "ioapic_devid 0xff00 is beyond "
		   "the 128 DeviceIDs");
	/* IO-APIC tables: a DeviceID past the device table, GSIs shared,
	 * an IO-APIC of no inputs (the checks vtd.c shares are in
	 * test_vtd). */
	{
		struct umsi_ioapic_source t[2] = {
			{ .gsi_base = 0, .gsi_count = 24, .source_id = 0x70 },
			{ .gsi_base = 24, .gsi_count = 24, .source_id = 0x78 },
		};

		av_cfg_of(&c);
		c.ac.devid_count = 128;
		c.ac.ioapic_devid = UMSI_AMDVI_NO_DEVID;
		c.ac.ioapics = t;
		c.ac.nioapics = 2;
		t[1].source_id = 0x80;
		fx_refused(sim, &c.cfg, -UMSI_EINVAL, "x86-amdvi: ioapics[1]: "
			   "source_id 0x80 is not below 0x80");
		t[1].source_id = 0x78;
		t[1].gsi_base = 16;
		fx_refused(sim, &c.cfg, -UMSI_EINVAL, "x86-amdvi: ioapics[0] "
			   "and ioapics[1] share GSI 16");
		t[1].gsi_base = 24;
		t[0].gsi_count = 0;
		fx_refused(sim, &c.cfg, -UMSI_EINVAL, "x86-amdvi: ioapics[0]: "
			   "gsi_count 0 is not 1 to 256");
		/* With a table, ioapic_devid is not used, nor checked. */
		t[0].gsi_count = 24;
		c.ac.ioapic_devid = 0xff00;
		assert_int_equal(umsi_system_create(umsi_sim_host_ops(), sim,
						    &c.cfg, &sys), 0);
		umsi_system_destroy(sys);
	}
	/* Already on: someone else's tables. */
	umsi_sim_mmio_write32(sim, AV + 0x18, 1u);
	av_cfg_of(&c);
	fx_refused(sim, &c.cfg, -UMSI_EBUSY, "already on");
	umsi_sim_mmio_write32(sim, AV + 0x18, 0);
	umsi_sim_destroy(sim);
	/* A machine without the unit: its registers read all-ones. */
	plain = umsi_sim_create(&sc);
	assert_non_null(plain);
	av_cfg_of(&c);
	fx_refused(plain, &c.cfg, -UMSI_EINVAL, "x86-amdvi: no IOMMU at "
		   "0xfed80000");
	umsi_sim_destroy(plain);
	/* One remapping unit at a time. */
	sc.amdvi = true;
	sc.vtd = true;
	assert_null(umsi_sim_create(&sc));
}

/*
 * A creation turns the command buffer and the unit on with the device
 * table in; every host call of it failed in turn refuses the system and
 * leaves nothing (memory, the mapping, the lock, the unit on).
 */
static void test_create_failure_leaves_nothing(void **state)
{
	struct umsi_sim *sim = av_sim(4);
	struct umsi_sim_leaks l0, l1;
	struct umsi_system *sys;
	struct umsi_sim_stats st;
	struct av_cfg c;

	(void)state;
	av_cfg_of(&c);
	umsi_sim_leaks(sim, &l0);
	umsi_sim_stats_reset(sim);
	assert_int_equal(umsi_system_create(umsi_sim_host_ops(), sim, &c.cfg,
					    &sys), 0);
	umsi_sim_stats(sim, &st);
	assert_int_equal(umsi_sim_mmio_read32(sim, AV + 0x18) & (1u | 1u << 12),
			 1u | 1u << 12);
	assert_non_null(strstr(umsi_sim_log_text(sim), "x86-amdvi: unit at "
			       "0xfed80000, 65536 DeviceIDs"));
	assert_int_equal(st.op_calls[UMSI_SIM_OP_PHYS_ALLOC], 3);
	umsi_system_destroy(sys);
	umsi_sim_leaks(sim, &l1);
	assert_true(umsi_sim_leaks_equal(&l0, &l1));
	unit_off(sim);
	fx_fail_each_create(sim, &c.cfg, &l0, st.fallible_calls, unit_off);
	umsi_sim_stats(sim, &st);
	assert_int_equal(st.bad_accesses, 0);
	umsi_sim_destroy(sim);
}

/* ---- MSI-X ----------------------------------------------------------------------- */

/*
 * Every MSI-X entry holds 0xFEE00000 and its own index; the unit takes
 * each through the nvme's table to the CPU and vector the core chose.
 */
static void test_msix_remapped(void **state)
{
	struct machine *m = av_machine(4);
	struct umsi_sim_dev_desc d = nvme_desc();
	struct umsi_pci_dev *dev = plug(m, NVME, &d, UMSI_PCI_ADD_FRESH);
	uint32_t k, used = 0;

	(void)state;
	assert_int_equal(umsi_pci_alloc_irq_vectors(dev, 8, 8,
			 UMSI_PCI_IRQ_MSIX | UMSI_PCI_IRQ_AFFINITY), 8);
	for (k = 0; k < 8; k++) {
		uint32_t irq = (uint32_t)umsi_pci_irq_vector(dev, k);
		struct umsi_msg msg = fx_msix_msg(m, NVME, k);
		struct umsi_irq_info info;

		assert_int_equal(umsi_irq_get_info(m->sys, irq, &info), 0);
		assert_int_equal(msg.address, 0xfee00000u);
		assert_true(msg.data < UMSI_AMDVI_MAX_IRTE);
		assert_false(used & (1u << msg.data));
		used |= 1u << msg.data;
		assert_int_equal(umsi_request_irq(m->sys, irq, fx_handler, 0,
						  "t", m), 0);
		assert_int_equal(umsi_sim_fire(m->sim, NVME, k),
				 UMSI_SIM_FIRE_SENT);
		assert_int_equal(m->handled[irq], 1);
		assert_int_equal(m->last_cpu[irq], info.cpu);
	}
	assert_int_equal(astats(m).remapped, 8);
	assert_int_equal(astats(m).aborted, 0);
	assert_int_equal(astats(m).stale, 0);
	umsi_pci_remove(m->sys, dev);
	av_machine_free(m);
}

/*
 * A move rewrites the entry (one INVALIDATE_INTERRUPT_TABLE and a
 * COMPLETION_WAIT) and leaves the device alone: no MSI-X table write, the
 * same message; the device fires after every host call of the move and
 * nothing is lost or aborted; the unit never used a stale entry; after,
 * the message lands on the new CPU.
 */
static void test_migration_rewrites_entry(void **state)
{
	struct machine *m = av_machine(4);
	struct umsi_sim_dev_desc d = nvme_desc();
	struct umsi_pci_dev *dev = plug(m, NVME, &d, UMSI_PCI_ADD_FRESH);
	struct fx_gun g = { .m = m, .bdf = NVME, .k = 1 };
	struct umsi_sim_amdvi_stats a0, a1;
	struct umsi_irq_info info;
	struct umsi_msg before, after;
	uint64_t w, writes, handled;
	struct umsi_cpumask mask = { &w, 4 };
	uint32_t irq, to;

	(void)state;
	assert_int_equal(umsi_pci_alloc_irq_vectors(dev, 2, 2, UMSI_PCI_IRQ_MSIX),
			 2);
	irq = (uint32_t)umsi_pci_irq_vector(dev, 1);
	assert_int_equal(umsi_request_irq(m->sys, irq, fx_handler, 0, "t", m),
			 0);
	assert_int_equal(umsi_irq_get_info(m->sys, irq, &info), 0);
	before = fx_msix_msg(m, NVME, 1);
	to = (info.cpu + 1) % 4;
	w = 1ull << to;
	handled = m->handled[irq];
	a0 = astats(m);
	umsi_sim_stats_reset(m->sim);
	writes = dstats(m, NVME).mmio_writes;
	umsi_sim_set_hook(m->sim, fx_shoot, &g);
	assert_int_equal(umsi_irq_set_affinity(m->sys, irq, &mask), 0);
	umsi_sim_set_hook(m->sim, NULL, NULL);
	umsi_sim_quiesce(m->sim);
	a1 = astats(m);
	assert_true(g.sent > 0);
	assert_true(m->handled[irq] > handled);
	assert_int_equal(sstats(m).undeliverable, 0);
	assert_int_equal(a1.aborted, a0.aborted);
	assert_int_equal(a1.stale, 0);
	assert_int_equal(a1.inv_table - a0.inv_table, 1);
	assert_int_equal(a1.waits - a0.waits, 1);
	assert_int_equal(dstats(m, NVME).mmio_writes, writes);
	after = fx_msix_msg(m, NVME, 1);
	assert_int_equal(after.address, before.address);
	assert_int_equal(after.data, before.data);
	assert_int_equal(umsi_irq_get_info(m->sys, irq, &info), 0);
	assert_int_equal(info.cpu, to);
	assert_int_equal(umsi_sim_fire(m->sim, NVME, 1), UMSI_SIM_FIRE_SENT);
	assert_int_equal(m->last_cpu[irq], to);
	umsi_pci_remove(m->sys, dev);
	av_machine_free(m);
}

/* ---- multi-message MSI ----------------------------------------------------------- */

/*
 * An 8-message MSI block: 8 consecutive, aligned entries (the device ORs
 * the message number into the data), each IRQ with its own CPU and
 * vector; message k is handled on IRQ k's CPU.
 */
static void test_msi_block_spread(void **state)
{
	struct machine *m = av_machine(4);
	struct umsi_sim_dev_desc d = msi_desc(8, true, true);
	struct umsi_pci_dev *dev = plug(m, DEV, &d, 0);
	uint32_t k, base;
	uint64_t addr;
	uint32_t data;

	(void)state;
	assert_int_equal(umsi_pci_alloc_irq_vectors(dev, 8, 8,
						    UMSI_PCI_IRQ_MSI), 8);
	msi_msg(m, DEV, &addr, &data);
	assert_int_equal(addr, 0xfee00000u);
	base = data;
	assert_int_equal(base % 8, 0);
	for (k = 0; k < 8; k++) {
		uint32_t irq = (uint32_t)umsi_pci_irq_vector(dev, k);
		struct umsi_irq_info info;

		assert_int_equal(umsi_irq_get_info(m->sys, irq, &info), 0);
		assert_int_equal(umsi_request_irq(m->sys, irq, fx_handler, 0,
						  "t", m), 0);
		assert_int_equal(umsi_sim_fire(m->sim, DEV, k),
				 UMSI_SIM_FIRE_SENT);
		assert_int_equal(m->handled[irq], 1);
		assert_int_equal(m->last_cpu[irq], info.cpu);
	}
	assert_int_equal(astats(m).aborted, 0);
	umsi_pci_remove(m->sys, dev);
	av_machine_free(m);
}

/* ---- forged messages -------------------------------------------------------------- */

/*
 * The nvme's index written by another function names that function's own
 * table, where nothing is set up: aborted; an index of the nvme's table
 * nobody owns: aborted (RemapEn clear); a message aimed straight at the
 * nvme's CPU and vector: aborted (not 0xFEE00000 with an index, and the
 * writer's DTE aborts). No handler runs.
 */
static void test_forged_messages_aborted(void **state)
{
	struct machine *m = av_machine(2);
	struct umsi_sim_dev_desc dx = nvme_desc();
	struct umsi_sim_dev_desc dm = msi_desc(1, true, true);
	struct umsi_pci_dev *x = plug(m, NVME, &dx, UMSI_PCI_ADD_FRESH);
	struct umsi_pci_dev *rogue = plug(m, DEV, &dm, 0);
	struct umsi_irq_info info;
	struct umsi_msg msg, direct;
	uint64_t handled;
	uint32_t irq;

	(void)state;
	assert_int_equal(umsi_pci_alloc_irq_vectors(x, 1, 1, UMSI_PCI_IRQ_MSIX),
			 1);
	assert_int_equal(umsi_pci_alloc_irq_vectors(rogue, 1, 1,
						    UMSI_PCI_IRQ_MSI), 1);
	irq = (uint32_t)umsi_pci_irq_vector(x, 0);
	assert_int_equal(umsi_request_irq(m->sys, irq, fx_handler, 0, "t", m),
			 0);
	assert_int_equal(umsi_irq_get_info(m->sys, irq, &info), 0);
	msg = fx_msix_msg(m, NVME, 0);
	handled = m->handled[irq];
	/* (a) the nvme's index, written by DEV: DEV's own table. */
	(void)umsi_sim_msg_write_from(m->sim, DEV, msg.address, msg.data + 1);
	/* (b) an index of the nvme's table nobody owns. */
	(void)umsi_sim_msg_write_from(m->sim, NVME, 0xfee00000u, 300);
	/* (c) straight at the nvme's CPU and vector. */
	assert_int_equal(umsi_x86_msg_compose(info.hwid, (uint8_t)info.vector,
					      0, &direct), 0);
	(void)umsi_sim_msg_write_from(m->sim, UMSI_BDF(0, 0, 9, 0),
				      direct.address, direct.data);
	umsi_sim_quiesce(m->sim);
	assert_int_equal(m->handled[irq], handled);
	assert_int_equal(astats(m).aborted, 3);
	umsi_pci_remove(m->sys, rogue);
	umsi_pci_remove(m->sys, x);
	av_machine_free(m);
}

/* ---- removal, sharing -------------------------------------------------------------- */

/*
 * Removing the nvme takes its table away: its DTE aborts again, so the
 * same message now reaches nobody; a second allocation gets a table
 * again, nothing leaked over 20 rounds.
 */
static void test_removal_takes_the_table(void **state)
{
	struct machine *m = av_machine(2);
	struct umsi_sim_dev_desc d = nvme_desc();
	struct umsi_pci_dev *dev;
	struct umsi_msg msg;
	uint64_t aborted;
	int i;

	(void)state;
	for (i = 0; i < 20; i++) {
		dev = plug(m, NVME, &d, UMSI_PCI_ADD_FRESH);
		assert_int_equal(umsi_pci_alloc_irq_vectors(dev, 4, 4,
							    UMSI_PCI_IRQ_MSIX), 4);
		msg = fx_msix_msg(m, NVME, 0);
		umsi_pci_remove(m->sys, dev);
		assert_int_equal(umsi_sim_remove_device(m->sim, NVME), 0);
		aborted = astats(m).aborted;
		(void)umsi_sim_msg_write_from(m->sim, NVME, msg.address,
					      msg.data);
		assert_int_equal(astats(m).aborted, aborted + 1);
	}
	assert_int_equal(astats(m).stale, 0);
	av_machine_free(m);
}

/* A unit that never completes a command: the call fails, said once. */
static void test_silent_unit_fails(void **state)
{
	struct machine *m = av_machine(2);
	struct umsi_sim_dev_desc d = nvme_desc();
	struct umsi_pci_dev *dev = plug(m, NVME, &d, UMSI_PCI_ADD_FRESH);
	const char *log;
	int ret;

	(void)state;
	umsi_sim_log_clear(m->sim);
	assert_int_equal(umsi_sim_amdvi_silent(m->sim, true), 0);
	ret = umsi_pci_alloc_irq_vectors(dev, 2, 2, UMSI_PCI_IRQ_MSIX);
	assert_int_equal(ret, -UMSI_ETIMEDOUT);
	assert_false(msix_enabled(m, NVME));
	log = umsi_sim_log_text(m->sim);
	assert_non_null(strstr(log, "x86-amdvi: command not done within "
			       "10 ms"));
	assert_null(strstr(strstr(log, "command not done") + 1,
			   "command not done"));
	assert_int_equal(sstats(m).lock_errors, 0);
	ret = umsi_pci_alloc_irq_vectors(dev, 1, 1, UMSI_PCI_IRQ_MSIX);
	assert_true(ret < 0);
	assert_int_equal(umsi_sim_amdvi_silent(m->sim, false), 0);
	umsi_pci_remove(m->sys, dev);
	umsi_system_destroy(m->sys);
	umsi_sim_destroy(m->sim);
	free(m);
}

/* ---- INTx ----------------------------------------------------------------------- */

struct intx_gun {
	struct machine *m;
	uint64_t shots;
};

/* A level INTx asserted at every host call (the handler deasserts it). */
static void intx_shoot(void *arg, enum umsi_sim_op op)
{
	struct intx_gun *g = arg;

	(void)op;
	if (!umsi_sim_intx_set(g->m->sim, DEV6, true))
		g->shots++;
}

/*
 * INTx under AMD-Vi: the redirection entry holds an index of the IO-APIC
 * DeviceID's table (below 256: the entry's vector field), its message goes
 * through the unit to the CPU and vector the core chose; the unit's message
 * carries no trigger mode, so the host ends the level input at the IO-APIC's
 * EOI register after the CPU's EOI (the line fires again, Remote IRR is
 * clear). A move rewrites the entry and gives the host a new message (same
 * index, the new CPU and vector in bits 31:16); lines asserted at every host
 * call of the move are all handled and none is left in Remote IRR. A
 * function writing the IO-APIC's index is aborted.
 */
static void test_intx_through_ioapic_table(void **state)
{
	struct machine *m = av_machine(4);
	struct umsi_sim_dev_desc d = intx_desc(1);
	struct umsi_pci_dev *dev = plug(m, DEV6, &d, 0);
	struct intx_gun g = { .m = m };
	struct umsi_sim_amdvi_stats a0;
	struct umsi_sim_rte rte;
	struct umsi_irq_info info;
	uint64_t w, eoiw;
	struct umsi_cpumask mask = { &w, 4 };
	uint32_t gsi, index, to;

	(void)state;
	gsi = fx_intx_line(m, dev, DEV6, &info, &rte);
	assert_true(rte.remappable);
	assert_true(rte.trigger == UMSI_INTX_LEVEL);
	index = rte.handle;
	assert_true(index < 256);
	assert_int_equal(rte.vector, info.vector);
	assert_int_equal(rte.apic_id, info.hwid);
	a0 = astats(m);
	eoiw = sstats(m).ioapic_eoi_writes;
	/* Twice: the first end reached the IO-APIC, or the second is lost. */
	for (int k = 1; k <= 2; k++) {
		assert_int_equal(umsi_sim_intx_set(m->sim, DEV6, true), 0);
		assert_int_equal(m->handled[gsi], (uint64_t)k);
		assert_int_equal(m->last_cpu[gsi], info.cpu);
		assert_int_equal(umsi_sim_ioapic_get(m->sim, gsi, &rte), 0);
		assert_false(rte.remote_irr);
	}
	assert_int_equal(sstats(m).ioapic_eoi_writes - eoiw, 2);
	assert_int_equal(astats(m).remapped - a0.remapped, 2);
	/* A move under fire. */
	to = (info.cpu + 1) % 4;
	w = 1ull << to;
	umsi_sim_set_hook(m->sim, intx_shoot, &g);
	assert_int_equal(umsi_irq_set_affinity(m->sys, gsi, &mask), 0);
	umsi_sim_set_hook(m->sim, NULL, NULL);
	umsi_sim_quiesce(m->sim);
	assert_true(g.shots > 0);
	assert_int_equal(umsi_irq_get_info(m->sys, gsi, &info), 0);
	assert_int_equal(info.cpu, to);
	assert_int_equal(umsi_sim_ioapic_get(m->sim, gsi, &rte), 0);
	assert_int_equal(rte.handle, index);
	assert_int_equal(rte.vector, info.vector);
	assert_int_equal(rte.apic_id, info.hwid);
	assert_false(rte.remote_irr);
	assert_false(rte.line);
	assert_int_equal(umsi_sim_intx_set(m->sim, DEV6, true), 0);
	assert_int_equal(m->last_cpu[gsi], to);
	assert_false(rte.remote_irr);
	assert_int_equal(sstats(m).undeliverable, 0);
	assert_int_equal(astats(m).aborted, a0.aborted);
	assert_int_equal(astats(m).stale, 0);
	/* The IO-APIC's index, written by a function: its own table. */
	(void)umsi_sim_msg_write_from(m->sim, DEV6, 0xfee00000u, index);
	umsi_sim_quiesce(m->sim);
	assert_int_equal(astats(m).aborted, a0.aborted + 1);
	assert_int_equal(umsi_free_irq(m->sys, gsi, m), 0);
	umsi_pci_remove(m->sys, dev);
	av_machine_free(m);
}

/* ---- several IO-APICs ------------------------------------------------------- */

/* A machine of two IO-APICs; the back end told of the first @n of them. */
static struct machine *av_two_ioapic_machine(uint32_t n)
{
	struct av_cfg c;

	av_cfg_of(&c);
	c.ac.ioapic_devid = UMSI_AMDVI_NO_DEVID;
	c.ac.ioapics = fx_two_ioapics();
	c.ac.nioapics = n;
	return fx_two_ioapic_machine(true, &c.cfg);
}

/*
 * Two IO-APICs with DeviceIDs of their own (umsi_amdvi_config.ioapics,
 * no ioapic_devid): each line's entry goes in its own IO-APIC's table, so
 * both lines, first in their tables, have the same index; each is
 * delivered through its table to its CPU and ended at its own IO-APIC's
 * EOI register (one write each time, which leaves the other IO-APIC's
 * line at that index in Remote IRR), with nothing aborted. A GSI of
 * neither IO-APIC is refused with the GSI in the log, leaving nothing.
 */
static void test_intx_of_two_ioapics(void **state)
{
	struct machine *m = av_two_ioapic_machine(2);
	struct umsi_sim_amdvi_stats a0;
	struct fx_two_lines t;
	struct umsi_pci_dev *b;
	struct umsi_sim_rte r;
	uint64_t eoiw, w, sent;
	struct umsi_cpumask mask = { &w, 4 };

	(void)state;
	fx_two_lines_up(m, &t);
	assert_int_equal(t.rte[0].handle, t.rte[1].handle);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(t.rte[i].vector, t.info[i].vector);
		assert_int_equal(t.rte[i].apic_id, t.info[i].hwid);
	}
	a0 = astats(m);
	eoiw = sstats(m).ioapic_eoi_writes;
	fx_two_lines_fire(m, &t, 2);
	assert_int_equal(sstats(m).ioapic_eoi_writes - eoiw, 4);
	assert_int_equal(astats(m).remapped - a0.remapped, 4);
	/*
	 * The EOI register is each IO-APIC's own: with the second line
	 * delivered and not yet taken (its CPU's interrupts off), the first
	 * line's end at the first IO-APIC, naming the same index, leaves the
	 * second's Remote IRR set; it is ended when its own CPU takes it.
	 */
	w = 1ull << ((t.info[0].cpu + 1) % 4);
	assert_int_equal(umsi_irq_set_affinity(m->sys, t.gsi[1], &mask), 0);
	assert_int_equal(umsi_irq_get_info(m->sys, t.gsi[1], &t.info[1]), 0);
	assert_int_not_equal(t.info[1].cpu, t.info[0].cpu);
	/* A move keeps the index: the two entries still share it. */
	assert_int_equal(umsi_sim_ioapic_get(m->sim, t.gsi[0], &t.rte[0]), 0);
	assert_int_equal(umsi_sim_ioapic_get(m->sim, t.gsi[1], &r), 0);
	assert_int_equal(r.handle, t.rte[0].handle);
	assert_int_equal(umsi_sim_cpu_irq_disable(m->sim, t.info[1].cpu), 0);
	fx_intx_serve(m, FX_LINE_BDF(1));
	assert_int_equal(umsi_sim_ioapic_get(m->sim, t.gsi[1], &r), 0);
	sent = r.deliveries;
	assert_int_equal(umsi_sim_intx_set(m->sim, FX_LINE_BDF(1), true), 0);
	assert_int_equal(umsi_sim_ioapic_get(m->sim, t.gsi[1], &r), 0);
	assert_true(r.remote_irr);
	assert_int_equal(fx_fire_line(m, FX_LINE_BDF(0), t.gsi[0]), 1);
	assert_int_equal(umsi_sim_ioapic_get(m->sim, t.gsi[0], &r), 0);
	assert_false(r.remote_irr);
	/* Not ended, so not sent again (an end would resend the line). */
	assert_int_equal(umsi_sim_ioapic_get(m->sim, t.gsi[1], &r), 0);
	assert_true(r.remote_irr);
	assert_int_equal(r.deliveries - sent, 1);
	assert_int_equal(m->handled[t.gsi[1]], 2);
	fx_intx_serve(m, FX_LINE_BDF(1));
	assert_int_equal(umsi_sim_cpu_irq_enable(m->sim, t.info[1].cpu), 0);
	umsi_sim_quiesce(m->sim);
	assert_int_equal(m->handled[t.gsi[1]], 3);
	assert_int_equal(m->last_cpu[t.gsi[1]], t.info[1].cpu);
	assert_int_equal(umsi_sim_ioapic_get(m->sim, t.gsi[1], &r), 0);
	assert_false(r.remote_irr);
	assert_int_equal(astats(m).aborted, a0.aborted);
	assert_int_equal(sstats(m).undeliverable, 0);
	assert_int_equal(sstats(m).ioapic_eoi_writes - eoiw, 6);
	fx_two_lines_down(m, &t);
	av_machine_free(m);

	/* Told of the first IO-APIC only: GSI 30 has no table. */
	m = av_two_ioapic_machine(1);
	b = fx_plug_at_gsi(m, DEV6, 30);
	fx_line_refused(m, b, 30);
	umsi_pci_remove(m->sys, b);
	av_machine_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_contradictory_config_refused),
		cmocka_unit_test(test_create_failure_leaves_nothing),
		cmocka_unit_test(test_msix_remapped),
		cmocka_unit_test(test_migration_rewrites_entry),
		cmocka_unit_test(test_msi_block_spread),
		cmocka_unit_test(test_forged_messages_aborted),
		cmocka_unit_test(test_removal_takes_the_table),
		cmocka_unit_test(test_silent_unit_fails),
		cmocka_unit_test(test_intx_through_ioapic_table),
		cmocka_unit_test(test_intx_of_two_ioapics),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
