/* SPDX-License-Identifier: MIT */
/*
 * The RISC-V AIA IMSIC back end (src/arch/riscv/imsic.c) on the
 * simulator's IMSIC model: the model's own topei rules, configurations
 * refused at creation, MSI-X and multi-message MSI messages (file address
 * + identity) delivered to the chosen hart, migration under fire, CPU
 * offline and online, identity exhaustion on a 63-identity file, and the
 * wired inputs through an APLIC in MSI mode.
 */
#include "test_pci_fixture.h"

#include <umsi/ctl.h>

#define DEV  UMSI_BDF(0, 0, 5, 0)
#define NVME UMSI_BDF(0, 0, 4, 0)
#define INTX UMSI_BDF(0, 0, 6, 0)

/* siselect numbers (AIA 1.0, 3.8). */
#define EIDELIVERY  0x70u
#define EITHRESHOLD 0x72u
#define EIP(k)      (0x80u + 2 * (k))
#define EIE(k)      (0xc0u + 2 * (k))

static int imsic_dispatch(void *arg, uint32_t cpu, uint32_t id)
{
	return umsi_dispatch(arg, cpu, id);
}

/* The back end's configuration for @sim: every CPU's file. */
struct imsic_cfg {
	uint64_t files[16];
	struct umsi_imsic_config ic;
	struct umsi_config cfg;
};

static void imsic_cfg_of(struct umsi_sim *sim, uint32_t num_ids,
			 struct imsic_cfg *c)
{
	uint32_t i, n = umsi_sim_ncpus(sim);

	memset(c, 0, sizeof(*c));
	for (i = 0; i < n; i++)
		c->files[i] = umsi_sim_imsic_file_addr(sim, i);
	c->ic.num_ids = num_ids;
	c->ic.nr_files = n;
	c->ic.file_addr = c->files;
	c->cfg.ctl = &umsi_ctl_riscv_imsic;
	c->cfg.ctl_config = &c->ic;
}

static struct umsi_sim *imsic_sim(uint32_t ncpus, uint32_t num_ids)
{
	static const uint32_t harts[16] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10,
					    11, 12, 13, 14, 15 };
	struct umsi_sim_config sc = { .ncpus = ncpus, .apic_ids = harts,
				      .controller = UMSI_SIM_CTL_IMSIC,
				      .imsic_num_ids = num_ids };
	struct umsi_sim *sim = umsi_sim_create(&sc);

	assert_non_null(sim);
	return sim;
}

/* A machine of @ncpus harts, files of @num_ids, the IMSIC back end. */
static struct machine *imsic_machine(uint32_t ncpus, uint32_t num_ids)
{
	struct machine *m = calloc(1, sizeof(*m));
	struct imsic_cfg c;

	assert_non_null(m);
	m->sim = imsic_sim(ncpus, num_ids);
	umsi_sim_leaks(m->sim, &m->leaks0);
	imsic_cfg_of(m->sim, num_ids, &c);
	assert_int_equal(umsi_system_create(umsi_sim_host_ops(), m->sim,
					    &c.cfg, &m->sys), 0);
	(void)umsi_policy_parse(m->sys, "");
	umsi_sim_set_dispatch_id(m->sim, imsic_dispatch, m->sys);
	return m;
}

/* ---- the model ------------------------------------------------------------ */

struct order {
	uint32_t ids[16];
	int n;
};

static int record_id(void *arg, uint32_t cpu, uint32_t id)
{
	struct order *o = arg;

	(void)cpu;
	if (o->n < 16)
		o->ids[o->n++] = id;
	return 1;
}

/*
 * topei is the lowest pending-and-enabled identity, below eithreshold
 * when that is not 0; nothing is taken while eidelivery is 0; a second
 * arrival of a pending identity coalesces; files start delivering.
 */
static void test_model_topei_rules(void **state)
{
	struct umsi_sim *sim = imsic_sim(2, 255);
	struct order o = { .n = 0 };
	struct umsi_sim_stats st;

	(void)state;
	assert_int_equal(umsi_sim_imsic_reg(sim, 1, EIDELIVERY), 1);
	assert_int_equal(umsi_sim_imsic_reg(sim, 1, EITHRESHOLD), 0);
	assert_int_equal(umsi_sim_imsic_reg(sim, 1, EIE(0)), ~1ull);
	assert_int_equal(umsi_sim_imsic_file_addr(sim, 1), 0x28001000ull);
	umsi_sim_set_dispatch_id(sim, record_id, &o);
	assert_int_equal(umsi_sim_cpu_irq_disable(sim, 1), 0);
	assert_int_equal(umsi_sim_msg_write(sim, 0x28001000, 9), 1);
	assert_int_equal(umsi_sim_msg_write(sim, 0x28001000, 70), 1);
	assert_int_equal(umsi_sim_msg_write(sim, 0x28001000, 5), 1);
	assert_int_equal(umsi_sim_msg_write(sim, 0x28001000, 5), 1);
	assert_int_equal(umsi_sim_imsic_topei(sim, 1), 5u << 16 | 5);
	assert_int_equal(umsi_sim_imsic_reg(sim, 1, EIP(0)),
			 1ull << 9 | 1ull << 5);
	assert_int_equal(umsi_sim_imsic_reg(sim, 1, EIP(1)), 1ull << 6);
	/* eie of 5 clear, threshold 9: only 7 would be taken, once sent. */
	assert_int_equal(umsi_sim_imsic_reg_write(sim, 1, EIE(0),
						  ~(1ull << 5 | 1)), 0);
	assert_int_equal(umsi_sim_imsic_reg_write(sim, 1, EITHRESHOLD, 9), 0);
	assert_int_equal(umsi_sim_imsic_topei(sim, 1), 0);
	assert_int_equal(umsi_sim_raise(sim, 1, 7), 0);
	assert_int_equal(umsi_sim_imsic_reg_write(sim, 1, EIDELIVERY, 0), 0);
	assert_int_equal(umsi_sim_cpu_irq_enable(sim, 1), 0);
	assert_int_equal(o.n, 0);
	assert_int_equal(umsi_sim_imsic_reg_write(sim, 1, EIDELIVERY, 1), 0);
	assert_int_equal(o.n, 1);
	assert_int_equal(o.ids[0], 7);
	/* Threshold off: 9 then 70; 5 stays pending until enabled. */
	assert_int_equal(umsi_sim_imsic_reg_write(sim, 1, EITHRESHOLD, 0), 0);
	assert_int_equal(o.n, 3);
	assert_int_equal(o.ids[1], 9);
	assert_int_equal(o.ids[2], 70);
	assert_true(umsi_sim_id_pending(sim, 1, 5));
	assert_int_equal(umsi_sim_imsic_reg_write(sim, 1, EIE(0), ~1ull), 0);
	assert_int_equal(o.n, 4);
	assert_int_equal(o.ids[3], 5);
	/* Writes of 0 and above num-ids are ignored; other offsets stray;
	 * seteipnum_be takes the identity byte-swapped; odd eip: none. */
	assert_int_equal(umsi_sim_msg_write(sim, 0x28000000, 0), 0);
	assert_int_equal(umsi_sim_msg_write(sim, 0x28000000, 256), 0);
	assert_int_equal(umsi_sim_msg_write(sim, 0x28000008, 3), 0);
	assert_int_equal(umsi_sim_msg_write(sim, 0x28002000, 3), 0);
	assert_int_equal(umsi_sim_msg_write(sim, 0x28000004, 3u << 24), 1);
	assert_int_equal(o.ids[4], 3);
	assert_int_equal(umsi_sim_imsic_reg_write(sim, 0, EIP(0) + 1, 1), -UMSI_EINVAL);
	umsi_sim_stats(sim, &st);
	assert_int_equal(st.irr_coalesced, 1);
	assert_int_equal(st.undeliverable_by[UMSI_SIM_UNDELIV_VECTOR], 2);
	assert_int_equal(st.undeliverable_by[UMSI_SIM_UNDELIV_STRAY], 2);
	assert_int_equal(st.dispatched, 5);
	umsi_sim_destroy(sim);
}

/* ---- configuration -------------------------------------------------------- */

/* A creation refused with -UMSI_EINVAL and a line naming @why. */
static void refused(struct umsi_sim *sim, const struct umsi_config *cfg,
		    const char *why)
{
	fx_refused(sim, cfg, -UMSI_EINVAL, why);
}

static void test_contradictory_config_refused(void **state)
{
	struct umsi_sim *sim = imsic_sim(4, 255);
	struct imsic_cfg c;
	uint64_t shared[4];

	(void)state;
	imsic_cfg_of(sim, 255, &c);
	c.cfg.ctl_config = NULL;
	refused(sim, &c.cfg, "no configuration");
	static const uint32_t bad_ids[] = { 0, 62, 100, 256, 2111 };
	for (unsigned i = 0; i < sizeof(bad_ids) / sizeof(bad_ids[0]); i++) {
		char want[32];

		imsic_cfg_of(sim, bad_ids[i], &c);
		snprintf(want, sizeof(want), "num_ids %u", bad_ids[i]);
		refused(sim, &c.cfg, want);
	}
	imsic_cfg_of(sim, 255, &c);
	c.ic.first_id = 256;
	refused(sim, &c.cfg, "first_id 256 above num_ids 255");
	imsic_cfg_of(sim, 255, &c);
	c.ic.nr_files = 3;
	refused(sim, &c.cfg, "3 entries for 4 CPUs");
	imsic_cfg_of(sim, 255, &c);
	c.files[2] += 0x800;
	refused(sim, &c.cfg, "cpu 2: file address 0x28002800 is not 4 KiB");
	imsic_cfg_of(sim, 255, &c);
	memcpy(shared, c.files, sizeof(shared));
	shared[3] = shared[1];
	c.ic.file_addr = shared;
	refused(sim, &c.cfg, "file 0x28001000 given to two CPUs");
	umsi_sim_destroy(sim);
}

/*
 * Every host call of a creation failed in turn: the system is refused
 * with the error and holds nothing (the files it had mapped are unmapped).
 */
static void test_create_failure_leaves_nothing(void **state)
{
	struct umsi_sim *sim = imsic_sim(4, 255);
	struct umsi_sim_leaks l0, l1;
	struct umsi_system *sys;
	struct umsi_sim_stats st;
	struct imsic_cfg c;

	(void)state;
	imsic_cfg_of(sim, 255, &c);
	umsi_sim_leaks(sim, &l0);
	umsi_sim_stats_reset(sim);
	assert_int_equal(umsi_system_create(umsi_sim_host_ops(), sim, &c.cfg,
					    &sys), 0);
	umsi_sim_stats(sim, &st);
	/* One mapping a file, made once. */
	assert_int_equal(st.op_calls[UMSI_SIM_OP_MMIO_MAP], 4);
	umsi_sim_leaks(sim, &l1);
	assert_int_equal(l1.maps, l0.maps + 4);
	umsi_system_destroy(sys);
	umsi_sim_leaks(sim, &l1);
	assert_true(umsi_sim_leaks_equal(&l0, &l1));
	fx_fail_each_create(sim, &c.cfg, &l0, st.fallible_calls, NULL);
	umsi_sim_destroy(sim);
}

/* A hart without a file is never a target; first_id keeps low ones. */
static void test_hart_without_file_and_kernel_ids(void **state)
{
	struct umsi_sim *sim = imsic_sim(3, 127);
	struct umsi_system *sys;
	struct umsi_matrix_cpu_stats cs;
	struct umsi_irq_desc *ds[250];
	struct imsic_cfg c;
	int n = 0;

	(void)state;
	imsic_cfg_of(sim, 127, &c);
	c.files[1] = 0;
	c.ic.first_id = 8;	/* 1..7: the kernel's IPIs */
	assert_int_equal(umsi_system_create(umsi_sim_host_ops(), sim, &c.cfg,
					    &sys), 0);
	assert_non_null(strstr(umsi_sim_log_text(sim), "cpu 1: riscv-imsic "
			       "ID 1 cannot be named"));
	umsi_matrix_cpu_stats(umsi_system_matrix(sys), 0, &cs);
	assert_int_equal(cs.available, 120);	/* 8..127 */
	while (n < 250 && umsi_irq_alloc(sys, &umsi_dead_chip, 1, false, NULL,
					 false, &ds[n]) == 0) {
		assert_int_not_equal(atomic_load(&ds[n]->cpu), 1);
		assert_in_range(atomic_load(&ds[n]->vector), 8, 127);
		n++;
	}
	assert_int_equal(n, 240);
	umsi_irq_release(sys, ds, (uint32_t)n);
	umsi_system_destroy(sys);
	umsi_sim_destroy(sim);
}

/* ---- MSI-X and MSI ---------------------------------------------------------- */

/*
 * MSI-X entries get the hart's file as address and the identity as data;
 * each fires to its handler on that hart. The library writes no
 * controller register on the way (the kernel claimed through stopei).
 */
static void test_msix_message_is_file_and_identity(void **state)
{
	struct machine *m = imsic_machine(4, 255);
	struct umsi_sim_dev_desc d = nvme_desc();
	struct umsi_pci_dev *dev = plug(m, NVME, &d, UMSI_PCI_ADD_FRESH);
	struct umsi_sim_stats st;
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
		assert_int_equal(addr, umsi_sim_imsic_file_addr(m->sim,
								info.cpu));
		assert_int_equal(data, info.vector);
		assert_int_equal(info.hwid, info.cpu);
		assert_in_range(info.vector, 1, 255);
		assert_int_equal(umsi_request_irq(m->sys, irq, fx_handler, 0,
						  "t", m), 0);
	}
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
	assert_int_equal(st.op_calls[UMSI_SIM_OP_IRQ_PENDING], 0);
	umsi_pci_remove(m->sys, dev);
	machine_free(m);
}

/*
 * 5 messages of a 32-capable MSI function: a block of 8 identities on one
 * hart, aligned to 8 (the device ORs the message number into the data),
 * never identity 0.
 */
static void test_msi_block_in_one_file(void **state)
{
	struct machine *m = imsic_machine(2, 63);
	struct umsi_sim_dev_desc d = msi_desc(32, true, true);
	struct umsi_pci_dev *dev = plug(m, DEV, &d, 0);
	struct umsi_irq_info i0, in;
	uint16_t cap = find_cap(m, DEV, UMSI_PCI_CAP_ID_MSI);
	uint32_t k;

	(void)state;
	assert_int_equal(umsi_pci_alloc_irq_vectors(dev, 1, 5, UMSI_PCI_IRQ_MSI),
			 5);
	assert_int_equal(umsi_irq_get_info(m->sys, (uint32_t)
					   umsi_pci_irq_vector(dev, 0), &i0), 0);
	assert_int_equal(i0.vector % 8, 0);
	assert_true(i0.vector >= 8);
	assert_int_equal(umsi_sim_cfg_read(m->sim, DEV, cap + 4, 4),
			 (uint32_t)umsi_sim_imsic_file_addr(m->sim, i0.cpu));
	assert_int_equal(umsi_sim_cfg_read(m->sim, DEV, cap + 12, 2),
			 i0.vector);
	for (k = 0; k < 5; k++) {
		int irq = umsi_pci_irq_vector(dev, k);

		assert_int_equal(umsi_irq_get_info(m->sys, (uint32_t)irq, &in),
				 0);
		assert_int_equal(in.cpu, i0.cpu);
		assert_int_equal(in.vector, i0.vector + k);
		assert_int_equal(umsi_request_irq(m->sys, (uint32_t)irq,
						  fx_handler, 0, "t", m), 0);
	}
	for (k = 0; k < 8; k++)
		assert_int_equal(umsi_sim_fire(m->sim, DEV, k), k < 5 ?
				 UMSI_SIM_FIRE_SENT : UMSI_SIM_FIRE_PENDING);
	for (k = 0; k < 5; k++)
		assert_int_equal(m->handled[umsi_pci_irq_vector(dev, k)], 1);
	assert_int_equal(sstats(m).unassigned, 0);
	umsi_pci_remove(m->sys, dev);
	machine_free(m);
}

/* ---- migration ----------------------------------------------------------------- */

/*
 * Move @irq to @to_cpu while the device fires after every host call:
 * every message reaches a live identity, none is lost, and afterwards the
 * device's messages name the new hart's file. Return: the resends (MMIO
 * writes to a file) the move made.
 */
static uint64_t move_under_fire(struct machine *m, umsi_bdf_t bdf,
				uint32_t irq, unsigned k, uint32_t to_cpu)
{
	struct fx_gun g = { .m = m, .bdf = bdf, .k = k };
	uint64_t w = 1ull << to_cpu, before = m->handled[irq], resends;
	struct umsi_cpumask mask = { &w, umsi_sim_ncpus(m->sim) };
	struct umsi_irq_info info;
	struct umsi_sim_stats st;

	umsi_sim_stats_reset(m->sim);
	umsi_sim_set_hook(m->sim, fx_shoot, &g);
	assert_int_equal(umsi_irq_set_affinity(m->sys, irq, &mask), 0);
	umsi_sim_set_hook(m->sim, NULL, NULL);
	umsi_sim_quiesce(m->sim);
	assert_int_equal(umsi_irq_get_info(m->sys, irq, &info), 0);
	assert_int_equal(info.cpu, to_cpu);
	assert_true(g.sent > 0);
	st = sstats(m);
	assert_int_equal(st.undeliverable, 0);
	assert_true(m->handled[irq] > before);
	resends = st.op_calls[UMSI_SIM_OP_MMIO_WRITE32] -
		  dstats(m, bdf).mmio_writes;
	assert_int_equal(umsi_sim_fire(m->sim, bdf, k), UMSI_SIM_FIRE_SENT);
	assert_int_equal(m->last_cpu[irq], to_cpu);
	return resends;
}

static void test_migration_under_fire(void **state)
{
	static const bool masks[] = { false, true };
	uint64_t resends = 0;
	unsigned i;

	(void)state;
	for (i = 0; i < 2; i++) {
		struct machine *m = imsic_machine(4, 255);
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
		resends += move_under_fire(m, DEV, irq, 0, (info.cpu + 1) % 4);
		resends += move_under_fire(m, DEV, irq, 0, (info.cpu + 2) % 4);
		umsi_pci_remove(m->sys, dev);
		machine_free(m);
	}
	{
		struct machine *m = imsic_machine(4, 255);
		struct umsi_sim_dev_desc d = nvme_desc();
		struct umsi_pci_dev *dev = plug(m, NVME, &d,
						UMSI_PCI_ADD_FRESH);
		struct umsi_irq_info info;
		uint32_t irq;

		assert_int_equal(umsi_pci_alloc_irq_vectors(dev, 2, 2,
						UMSI_PCI_IRQ_MSIX), 2);
		irq = (uint32_t)umsi_pci_irq_vector(dev, 1);
		assert_int_equal(umsi_request_irq(m->sys, irq, fx_handler, 0,
						  "t", m), 0);
		assert_int_equal(umsi_irq_get_info(m->sys, irq, &info), 0);
		resends += move_under_fire(m, NVME, irq, 1, (info.cpu + 3) % 4);
		assert_int_equal(dstats(m, NVME).msix_live_writes, 0);
		umsi_pci_remove(m->sys, dev);
		machine_free(m);
	}
	print_message("imsic migration under fire: %llu resends through "
		      "seteipnum_le\n", (unsigned long long)resends);
}

struct holdoff {
	struct umsi_sim *sim;
	uint32_t cpu;
	bool held;
};

/* After the first cross-call to the old hart, let it take interrupts. */
static void release_after_xcall(void *arg, enum umsi_sim_op op)
{
	struct holdoff *h = arg;

	if (op == UMSI_SIM_OP_RUN_ON_CPU && h->held) {
		h->held = false;
		assert_int_equal(umsi_sim_cpu_irq_enable(h->sim, h->cpu), 0);
	}
}

/*
 * The interrupt arrived in the old hart's file while that hart had
 * interrupts off; the IRQ moves meanwhile. The old hart finds the eip bit
 * set (the host's irq_pending: its eip bit), the back end resends the identity to the new
 * hart's file (one MMIO write to seteipnum_le), the handler runs once,
 * there; the stale copy on the old hart is taken without a handler and
 * without counting as spurious.
 */
static void test_pending_copy_resent_to_new_file(void **state)
{
	struct machine *m = imsic_machine(2, 255);
	struct umsi_sim_dev_desc d = msi_desc(1, true, false);
	struct umsi_pci_dev *dev = plug(m, DEV, &d, 0);
	struct umsi_irq_info info;
	struct holdoff h = { .sim = m->sim, .held = true };
	uint64_t w;
	struct umsi_cpumask mask = { &w, 2 };
	struct umsi_sim_stats st;
	uint32_t irq, old_id;

	(void)state;
	assert_int_equal(umsi_pci_alloc_irq_vectors(dev, 1, 1,
						    UMSI_PCI_IRQ_MSI), 1);
	irq = (uint32_t)umsi_pci_irq_vector(dev, 0);
	assert_int_equal(umsi_request_irq(m->sys, irq, fx_handler, 0, "t", m),
			 0);
	assert_int_equal(umsi_irq_get_info(m->sys, irq, &info), 0);
	h.cpu = info.cpu;
	old_id = info.vector;
	w = 1ull << (1 - info.cpu);
	assert_int_equal(umsi_sim_cpu_irq_disable(m->sim, h.cpu), 0);
	assert_int_equal(umsi_sim_fire(m->sim, DEV, 0), UMSI_SIM_FIRE_SENT);
	assert_true(umsi_sim_id_pending(m->sim, h.cpu, old_id));
	assert_int_equal(m->handled[irq], 0);
	umsi_sim_stats_reset(m->sim);
	umsi_sim_set_hook(m->sim, release_after_xcall, &h);
	assert_int_equal(umsi_irq_set_affinity(m->sys, irq, &mask), 0);
	umsi_sim_set_hook(m->sim, NULL, NULL);
	assert_false(h.held);
	assert_int_equal(m->handled[irq], 1);
	assert_int_equal(m->last_cpu[irq], 1 - h.cpu);
	assert_false(umsi_sim_id_pending(m->sim, h.cpu, old_id));
	st = sstats(m);
	assert_int_equal(st.op_calls[UMSI_SIM_OP_MMIO_WRITE32], 1);
	assert_true(st.op_calls[UMSI_SIM_OP_IRQ_PENDING] >= 1);
	assert_int_equal(st.dispatched, 2);
	assert_int_equal(umsi_spurious_count(m->sys, h.cpu), 0);
	umsi_pci_remove(m->sys, dev);
	machine_free(m);
}

/*
 * A hart goes offline: its IRQs move to the others' files, each fires
 * there; it comes back and takes IRQs again.
 */
static void test_cpu_offline_online(void **state)
{
	struct machine *m = imsic_machine(4, 255);
	struct umsi_sim_dev_desc d = nvme_desc();
	struct umsi_pci_dev *dev = plug(m, NVME, &d, UMSI_PCI_ADD_FRESH);
	uint64_t w = 1ull << 1;
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
	assert_int_equal(umsi_cpu_offline(m->sys, 1), 0);
	assert_int_equal(umsi_sim_cpu_set_online(m->sim, 1, false), 0);
	umsi_sim_stats_reset(m->sim);
	for (k = 0; k < 4; k++) {
		uint64_t addr;
		uint32_t data, ctrl;

		irq = (uint32_t)umsi_pci_irq_vector(dev, k);
		assert_int_equal(umsi_irq_get_info(m->sys, irq, &info), 0);
		assert_int_not_equal(info.cpu, 1);
		assert_int_equal(umsi_sim_msix_entry_get(m->sim, NVME, k, &addr,
							 &data, &ctrl), 0);
		assert_int_equal(addr, umsi_sim_imsic_file_addr(m->sim,
								info.cpu));
		assert_int_equal(data, info.vector);
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
	machine_free(m);
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
 * A 63-identity file (the smallest AIA allows) on one hart: 63 to hand
 * out. With 6 left, MSI and MSI-X asking for more than fits are refused
 * and leave everything as it was; then they shrink to what fits, as on
 * x86 (test_pci_msi.c, test_vectors_shrink_to_what_fits).
 */
static void test_63_ids_shrink_to_what_fits(void **state)
{
	struct machine *m = imsic_machine(1, 63);
	struct umsi_sim_dev_desc dm = msi_desc(32, true, true);
	struct umsi_sim_dev_desc dx = nvme_desc();
	struct umsi_pci_dev *msi = plug(m, DEV, &dm, 0);
	struct umsi_pci_dev *msix = plug(m, NVME, &dx, 0);
	struct umsi_irq_desc *ds[64];
	struct umsi_matrix_stats mst;
	struct snapshot s0;
	struct umsi_pci_info pi;
	int n, got;

	(void)state;
	umsi_matrix_stats(umsi_system_matrix(m->sys), &mst);
	assert_int_equal(mst.available, 63);
	n = fill(m, 6, ds);
	assert_int_equal(n, 57);
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

/*
 * One identity left: an INTx-only function takes it for its line, which
 * the APLIC (MSI mode) sends as a message to a hart's file like any other
 * (the wired input's message is composed alike). None left: a function
 * asking for any kind gets nothing and changes nothing; once the line is
 * gone it gets one MSI-X vector, fewer than it asked for.
 */
static void test_63_ids_exhausted_intx_and_fewer(void **state)
{
	struct machine *m = imsic_machine(1, 63);
	struct umsi_sim_dev_desc di = intx_desc(1);
	struct umsi_sim_dev_desc dx = nvme_desc();
	struct umsi_pci_dev *line = plug(m, INTX, &di, 0);
	struct umsi_pci_dev *dev = plug(m, NVME, &dx, 0);
	struct umsi_irq_desc *ds[64];
	struct umsi_sim_rte rte;
	struct umsi_irq_info info;
	struct snapshot s0;
	int n, irq;

	(void)state;
	n = fill(m, 1, ds);
	assert_int_equal(umsi_pci_alloc_irq_vectors(line, 1, 4,
						    UMSI_PCI_IRQ_ALL_TYPES), 1);
	assert_int_equal(umsi_pci_mode(line), UMSI_MODE_INTX);
	irq = umsi_pci_irq_vector(line, 0);
	fx_intx_serve(m, INTX);
	assert_int_equal(umsi_request_irq(m->sys, (uint32_t)irq, fx_intx_handler,
					  UMSI_IRQF_SHARED, "t", m), 0);
	assert_int_equal(umsi_irq_get_info(m->sys, (uint32_t)irq, &info), 0);
	assert_int_equal(umsi_sim_ioapic_get(m->sim, (uint32_t)irq, &rte), 0);
	assert_true(rte.programmed);
	assert_false(rte.masked);
	assert_int_equal(rte.vector, info.vector);
	assert_int_equal(umsi_sim_intx_set(m->sim, INTX, true), 0);
	assert_int_equal(m->handled[irq], 1);
	assert_int_equal(m->last_cpu[irq], 0);
	/* Asserted again: sent again. */
	assert_int_equal(umsi_sim_intx_set(m->sim, INTX, true), 0);
	assert_int_equal(m->handled[irq], 2);

	s0 = snap(m);
	assert_true(umsi_pci_alloc_irq_vectors(dev, 1, 4,
					       UMSI_PCI_IRQ_ALL_TYPES) < 0);
	{
		struct snapshot s1 = snap(m);

		assert_same(&s0, &s1);
	}
	assert_int_equal(umsi_free_irq(m->sys, (uint32_t)irq, m), 0);
	umsi_pci_free_irq_vectors(line);
	assert_int_equal(umsi_pci_alloc_irq_vectors(dev, 1, 4,
						    UMSI_PCI_IRQ_ALL_TYPES), 1);
	assert_int_equal(umsi_pci_mode(dev), UMSI_MODE_MSIX);
	umsi_pci_free_irq_vectors(dev);
	umsi_irq_release(m->sys, ds, (uint32_t)n);
	umsi_pci_remove(m->sys, line);
	umsi_pci_remove(m->sys, dev);
	machine_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_model_topei_rules),
		cmocka_unit_test(test_contradictory_config_refused),
		cmocka_unit_test(test_create_failure_leaves_nothing),
		cmocka_unit_test(test_hart_without_file_and_kernel_ids),
		cmocka_unit_test(test_msix_message_is_file_and_identity),
		cmocka_unit_test(test_msi_block_in_one_file),
		cmocka_unit_test(test_migration_under_fire),
		cmocka_unit_test(test_pending_copy_resent_to_new_file),
		cmocka_unit_test(test_cpu_offline_online),
		cmocka_unit_test(test_63_ids_shrink_to_what_fits),
		cmocka_unit_test(test_63_ids_exhausted_intx_and_fewer),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
