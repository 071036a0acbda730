/* SPDX-License-Identifier: MIT */
/*
 * The Intel VT-d interrupt-remapping back end (src/arch/x86/vtd.c) on the
 * simulator's remapping unit: configurations refused at creation, every
 * host call of a creation failed in turn, MSI-X messages in remappable
 * format whose entries name the CPU and vector the core chose and the
 * function's requester ID, moves that rewrite the entry and leave the
 * device's message alone (under fire), a multi-message MSI block with
 * each message on its own CPU, forged messages (another device's handle,
 * a handle nobody owns, a compatibility-format message) refused by the
 * unit and reaching no handler, INTx through a remappable IO-APIC entry,
 * INTx of two IO-APICs each validated against its own requester ID (and
 * what a single ioapic_sid does there, and a GSI of no known IO-APIC),
 * a full table, and an invalidation queue that never completes.
 */
#include "test_pci_fixture.h"

#include <umsi/ctl.h>
#include <umsi/x86.h>

#define DEV   UMSI_BDF(0, 0, 5, 0)
#define DEV6  UMSI_BDF(0, 0, 6, 0)
#define NVME  UMSI_BDF(0, 0, 4, 0)

/* IRTE fields (VT-d 9.10). */
#define IRTE_P          1ull
#define IRTE_VECTOR(e)  ((uint32_t)((e) >> 16) & 0xff)
#define IRTE_DST8(e)    ((uint32_t)((e) >> 40) & 0xff)
#define IRTE_SID(h)     ((uint32_t)(h) & 0xffff)
#define IRTE_SVT(h)     ((uint32_t)((h) >> 18) & 3)

struct vtd_cfg {
	struct umsi_vtd_config vc;
	struct umsi_config cfg;
};

static void vtd_cfg_of(uint32_t nirte, struct vtd_cfg *c)
{
	memset(c, 0, sizeof(*c));
	c->vc.reg_base = UMSI_SIM_VTD_BASE;
	c->vc.irte_count = nirte;
	c->vc.ioapic_sid = UMSI_SIM_VTD_IOAPIC_SID;
	c->cfg.ctl = &umsi_ctl_x86_vtd;
	c->cfg.ctl_config = &c->vc;
}

static struct umsi_sim *vtd_sim(uint32_t ncpus)
{
	struct umsi_sim_config sc = { .ncpus = ncpus, .vtd = true,
				      .vtd_ioapic_sid = UMSI_SIM_VTD_IOAPIC_SID };
	struct umsi_sim *sim = umsi_sim_create(&sc);

	assert_non_null(sim);
	return sim;
}

static struct machine *vtd_machine(uint32_t ncpus, uint32_t nirte)
{
	struct machine *m = calloc(1, sizeof(*m));
	struct vtd_cfg c;

	assert_non_null(m);
	m->sim = vtd_sim(ncpus);
	umsi_sim_leaks(m->sim, &m->leaks0);
	vtd_cfg_of(nirte, &c);
	assert_int_equal(umsi_system_create(umsi_sim_host_ops(), m->sim,
					    &c.cfg, &m->sys), 0);
	(void)umsi_policy_parse(m->sys, "");
	fx_set_dispatch(m->sim, m->sys);
	return m;
}

/* Remapping and queued invalidation are off (teardown, a creation undone). */
static void remapping_off(struct umsi_sim *sim)
{
	assert_int_equal(umsi_sim_mmio_read32(sim, UMSI_SIM_VTD_BASE + 0x1c) &
			 (3u << 25), 0);
}

/* machine_free() plus: remapping off at teardown, its memory back. */
static void vtd_machine_free(struct machine *m)
{
	machine_free_checked(m, remapping_off);
}

static struct umsi_sim_vtd_stats vstats(struct machine *m)
{
	struct umsi_sim_vtd_stats s;

	assert_int_equal(umsi_sim_vtd_stats(m->sim, &s), 0);
	return s;
}

/* The entry a remappable message names (handle + subhandle @k). */
static uint32_t handle_of(const struct umsi_msg *msg, uint32_t k)
{
	struct umsi_x86_msi d;

	umsi_x86_msg_decode(msg, false, &d);
	assert_true(d.valid);
	assert_true(d.remapped);
	return d.handle + (d.shv ? (uint32_t)d.subhandle + k : 0);
}

/* Entry @index sends @vector to @cpu and validates requester @sid. */
static void assert_irte(struct machine *m, uint32_t index, uint32_t cpu,
			uint32_t vector, uint32_t sid)
{
	uint64_t e[2];

	assert_int_equal(umsi_sim_vtd_irte(m->sim, index, e), 0);
	assert_true(e[0] & IRTE_P);
	assert_int_equal(IRTE_VECTOR(e[0]), vector);
	assert_int_equal(IRTE_DST8(e[0]), umsi_cpu_hwid(m->sys, cpu));
	assert_int_equal(IRTE_SVT(e[1]), 1);
	assert_int_equal(IRTE_SID(e[1]), sid);
}

/* ---- configuration --------------------------------------------------------- */


static void test_contradictory_config_refused(void **state)
{
	struct umsi_sim *sim = vtd_sim(2);
	struct umsi_sim_config sc = { .ncpus = 2 };
	struct umsi_sim *plain;
	struct vtd_cfg c;

	(void)state;
	vtd_cfg_of(0, &c);
	c.cfg.ctl_config = NULL;
	fx_refused(sim, &c.cfg, -UMSI_EINVAL, "x86-vtd: no configuration");
	vtd_cfg_of(0, &c);
	c.vc.reg_base += 0x800;
	fx_refused(sim, &c.cfg, -UMSI_EINVAL, "reg_base 0xfed90800 is not a 4 KiB");
	vtd_cfg_of(24, &c);
	fx_refused(sim, &c.cfg, -UMSI_EINVAL, "irte_count 24 is not a power of two");
	vtd_cfg_of(0, &c);
	c.vc.x2apic = true;
	fx_refused(sim, &c.cfg, -UMSI_EINVAL, "x2apic asked but ECAP");
	/* An IO-APIC ID that is no 16-bit requester ID. */
	vtd_cfg_of(0, &c);
	c.vc.ioapic_sid = 0x1f0f8;
	fx_refused(sim, &c.cfg, -UMSI_EINVAL, "ioapic_sid 0x1f0f8 is not a "
		   "requester ID");
	/* Remapping already on: someone else's table. */
	umsi_sim_mmio_write32(sim, UMSI_SIM_VTD_BASE + 0x18, 1u << 25);
	vtd_cfg_of(0, &c);
	fx_refused(sim, &c.cfg, -UMSI_EBUSY, "remapping or queued invalidation "
		"already on");
	umsi_sim_mmio_write32(sim, UMSI_SIM_VTD_BASE + 0x18, 0);
	/* IO-APIC tables that cannot be right. */
	{
		struct umsi_ioapic_source t[2] = {
			{ .gsi_base = 0, .gsi_count = 24, .source_id = 0xf0 },
			{ .gsi_base = 24, .gsi_count = 24, .source_id = 0xf8 },
		};
		static const struct {
			uint32_t i, base, count, sid, n;
			const char *why;
		} bad[] = {
			{ 0, 0, 24, 0xf0, UMSI_MAX_IOAPICS + 1,
			  "nioapics 65 is more than 64" },
			{ 1, 0, 24, 0xf8, 2, "ioapics[0] and ioapics[1] share GSI 0" },
			{ 1, 23, 8, 0xf8, 2, "ioapics[0] and ioapics[1] share GSI 23" },
			{ 1, 24, 0, 0xf8, 2, "ioapics[1]: gsi_count 0 is not 1 to 256" },
			{ 1, 24, 257, 0xf8, 2, "ioapics[1]: gsi_count 257 is not" },
			{ 1, 0xfffffff0u, 32, 0xf8, 2, "ioapics[1]: GSIs 4294967280 + 32 pass 2^32" },
			{ 1, 24, 24, 0x10000, 2, "ioapics[1]: source_id 0x10000 is not below 0x10000" },
		};

		for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
			struct umsi_ioapic_source u[2] = { t[0], t[1] };

			u[bad[k].i].gsi_base = bad[k].base;
			u[bad[k].i].gsi_count = bad[k].count;
			u[bad[k].i].source_id = bad[k].sid;
			vtd_cfg_of(0, &c);
			c.vc.ioapics = u;
			c.vc.nioapics = bad[k].n;
			fx_refused(sim, &c.cfg, -UMSI_EINVAL, bad[k].why);
		}
		vtd_cfg_of(0, &c);
		c.vc.nioapics = 1;
		fx_refused(sim, &c.cfg, -UMSI_EINVAL,
			   "nioapics 1 but no ioapics table");
	}
	umsi_sim_destroy(sim);
	/* A machine without the unit: no interrupt remapping there. */
	plain = umsi_sim_create(&sc);
	assert_non_null(plain);
	vtd_cfg_of(0, &c);
	fx_refused(plain, &c.cfg, -UMSI_EINVAL, "x86-vtd: no remapping unit at "
		"0xfed90000");
	umsi_sim_destroy(plain);
}

/*
 * A creation turns on queued invalidation, the table, remapping, and
 * leaves compatibility-format interrupts blocked (CFI clear); every host
 * call of it failed in turn refuses the system and leaves nothing (memory,
 * the mapping, the lock, remapping on).
 */
static void test_create_failure_leaves_nothing(void **state)
{
	struct umsi_sim *sim = vtd_sim(4);
	struct umsi_sim_leaks l0, l1;
	struct umsi_system *sys;
	struct umsi_sim_stats st;
	struct vtd_cfg c;
	uint32_t gsts;

	(void)state;
	vtd_cfg_of(0, &c);
	umsi_sim_leaks(sim, &l0);
	umsi_sim_stats_reset(sim);
	assert_int_equal(umsi_system_create(umsi_sim_host_ops(), sim, &c.cfg,
					    &sys), 0);
	umsi_sim_stats(sim, &st);
	gsts = umsi_sim_mmio_read32(sim, UMSI_SIM_VTD_BASE + 0x1c);
	assert_true(gsts & (1u << 26));         /* QIES */
	assert_true(gsts & (1u << 25));         /* IRES */
	assert_false(gsts & (1u << 23));        /* CFIS: compat blocked */
	assert_non_null(strstr(umsi_sim_log_text(sim), "x86-vtd: unit at "
			       "0xfed90000, 4096 entries, table at 0x"));
	assert_int_equal(st.op_calls[UMSI_SIM_OP_PHYS_ALLOC], 3);
	umsi_system_destroy(sys);
	umsi_sim_leaks(sim, &l1);
	assert_true(umsi_sim_leaks_equal(&l0, &l1));
	assert_int_equal(umsi_sim_mmio_read32(sim, UMSI_SIM_VTD_BASE + 0x1c) &
			 (3u << 25), 0);
	fx_fail_each_create(sim, &c.cfg, &l0, st.fallible_calls,
			    remapping_off);
	umsi_sim_stats(sim, &st);
	assert_int_equal(st.bad_accesses, 0);
	umsi_sim_destroy(sim);
}

/* ---- MSI-X ------------------------------------------------------------------- */

/*
 * Each MSI-X entry holds a remappable message naming its own table
 * entry, which sends the vector the core chose to the CPU it chose and
 * accepts only the function's requester ID; every interrupt is remapped
 * and handled there.
 */
static void test_msix_remapped(void **state)
{
	struct machine *m = vtd_machine(4, 0);
	struct umsi_sim_dev_desc d = nvme_desc();
	struct umsi_pci_dev *dev = plug(m, NVME, &d, UMSI_PCI_ADD_FRESH);
	uint32_t k, used = 0;

	(void)state;
	assert_int_equal(umsi_pci_alloc_irq_vectors(dev, 8, 8,
			 UMSI_PCI_IRQ_MSIX | UMSI_PCI_IRQ_AFFINITY), 8);
	for (k = 0; k < 8; k++) {
		uint32_t irq = (uint32_t)umsi_pci_irq_vector(dev, k), h;
		struct umsi_msg msg = fx_msix_msg(m, NVME, k);
		struct umsi_irq_info info;

		assert_int_equal(umsi_irq_get_info(m->sys, irq, &info), 0);
		h = handle_of(&msg, 0);
		assert_false(used & (1u << h));
		used |= 1u << h;
		assert_irte(m, h, info.cpu, info.vector, NVME);
		assert_int_equal(umsi_request_irq(m->sys, irq, fx_handler, 0,
						  "t", m), 0);
		assert_int_equal(umsi_sim_fire(m->sim, NVME, k),
				 UMSI_SIM_FIRE_SENT);
		assert_int_equal(m->handled[irq], 1);
		assert_int_equal(m->last_cpu[irq], info.cpu);
	}
	assert_int_equal(vstats(m).remapped, 8);
	assert_int_equal(vstats(m).faults, 0);
	umsi_pci_remove(m->sys, dev);
	vtd_machine_free(m);
}

/*
 * A move rewrites the entry (one index-selective invalidation and a wait)
 * and leaves the device alone: no MSI-X table write, the same message;
 * the device fires after every host call of the move and nothing is lost
 * or faults; afterwards the message lands on the new CPU.
 */
static void test_migration_rewrites_entry(void **state)
{
	struct machine *m = vtd_machine(4, 0);
	struct umsi_sim_dev_desc d = nvme_desc();
	struct umsi_pci_dev *dev = plug(m, NVME, &d, UMSI_PCI_ADD_FRESH);
	struct fx_gun g = { .m = m, .bdf = NVME, .k = 1 };
	struct umsi_sim_vtd_stats v0, v1;
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
	v0 = vstats(m);
	umsi_sim_stats_reset(m->sim);
	writes = dstats(m, NVME).mmio_writes;
	umsi_sim_set_hook(m->sim, fx_shoot, &g);
	assert_int_equal(umsi_irq_set_affinity(m->sys, irq, &mask), 0);
	umsi_sim_set_hook(m->sim, NULL, NULL);
	umsi_sim_quiesce(m->sim);
	v1 = vstats(m);
	assert_true(g.sent > 0);
	assert_true(m->handled[irq] > handled);
	assert_int_equal(sstats(m).undeliverable, 0);
	assert_int_equal(v1.faults, v0.faults);
	assert_int_equal(v1.iec_index - v0.iec_index, 1);
	assert_int_equal(v1.waits - v0.waits, 1);
	assert_int_equal(dstats(m, NVME).mmio_writes, writes);
	after = fx_msix_msg(m, NVME, 1);
	assert_int_equal(after.address, before.address);
	assert_int_equal(after.data, before.data);
	assert_int_equal(umsi_irq_get_info(m->sys, irq, &info), 0);
	assert_int_equal(info.cpu, to);
	assert_irte(m, handle_of(&after, 0), to, info.vector, NVME);
	assert_int_equal(umsi_sim_fire(m->sim, NVME, 1), UMSI_SIM_FIRE_SENT);
	assert_int_equal(m->last_cpu[irq], to);
	umsi_pci_remove(m->sys, dev);
	vtd_machine_free(m);
}

/* ---- multi-message MSI --------------------------------------------------------- */

/*
 * A 16-message MSI block: 16 IRQs, each with its own CPU (spread over
 * the 4) and vector, behind 16 consecutive entries addressed by
 * subhandle (SHV, data 0); message k is handled on IRQ k's CPU, and one
 * IRQ moves alone (only its entry changes).
 */
static void test_msi_block_spread(void **state)
{
	struct machine *m = vtd_machine(4, 0);
	struct umsi_sim_dev_desc d = msi_desc(16, true, true);
	struct umsi_pci_dev *dev = plug(m, DEV, &d, 0);
	uint16_t cap = find_cap(m, DEV, UMSI_PCI_CAP_ID_MSI);
	struct umsi_irq_info info[16], moved;
	struct umsi_msg msg;
	unsigned cpus = 0;
	uint64_t w;
	struct umsi_cpumask mask = { &w, 4 };
	uint32_t k, irq;

	(void)state;
	assert_int_equal(umsi_pci_alloc_irq_vectors(dev, 16, 16,
						    UMSI_PCI_IRQ_MSI), 16);
	msg.address = umsi_sim_cfg_read(m->sim, DEV, cap + 4, 4) |
		      (uint64_t)umsi_sim_cfg_read(m->sim, DEV, cap + 8, 4) << 32;
	msg.data = umsi_sim_cfg_read(m->sim, DEV, cap + 12, 2);
	assert_int_equal(msg.data, 0);
	for (k = 0; k < 16; k++) {
		irq = (uint32_t)umsi_pci_irq_vector(dev, k);
		assert_int_equal(umsi_irq_get_info(m->sys, irq, &info[k]), 0);
		cpus |= 1u << info[k].cpu;
		assert_irte(m, handle_of(&msg, k), info[k].cpu, info[k].vector,
			    DEV);
		assert_int_equal(umsi_request_irq(m->sys, irq, fx_handler, 0,
						  "t", m), 0);
	}
	assert_int_equal(cpus, 0xf);
	for (k = 0; k < 16; k++) {
		irq = (uint32_t)umsi_pci_irq_vector(dev, k);
		assert_int_equal(umsi_sim_fire(m->sim, DEV, k),
				 UMSI_SIM_FIRE_SENT);
		assert_int_equal(m->handled[irq], 1);
		assert_int_equal(m->last_cpu[irq], info[k].cpu);
	}
	/* IRQ 3 moves alone: its entry only. */
	irq = (uint32_t)umsi_pci_irq_vector(dev, 3);
	w = 1ull << ((info[3].cpu + 1) % 4);
	assert_int_equal(umsi_irq_set_affinity(m->sys, irq, &mask), 0);
	assert_int_equal(umsi_irq_get_info(m->sys, irq, &moved), 0);
	assert_int_equal(moved.cpu, (info[3].cpu + 1) % 4);
	assert_irte(m, handle_of(&msg, 3), moved.cpu, moved.vector, DEV);
	for (k = 0; k < 16; k++) {
		struct umsi_irq_info now;

		if (k == 3)
			continue;
		assert_int_equal(umsi_irq_get_info(m->sys, (uint32_t)
			umsi_pci_irq_vector(dev, k), &now), 0);
		assert_int_equal(now.cpu, info[k].cpu);
		assert_irte(m, handle_of(&msg, k), now.cpu, now.vector, DEV);
	}
	assert_int_equal(umsi_sim_fire(m->sim, DEV, 3), UMSI_SIM_FIRE_SENT);
	assert_int_equal(m->last_cpu[irq], moved.cpu);
	assert_int_equal(vstats(m).faults, 0);
	umsi_pci_remove(m->sys, dev);
	vtd_machine_free(m);
}

/* ---- requester IDs behind bridges ------------------------------------------ */

/*
 * Source-ID validation names the requester ID the unit will see: a
 * conventional function behind a PCI Express to PCI bridge is (the
 * bridge's secondary bus, devfn 0), behind a conventional PCI-to-PCI
 * bridge it is that bridge; a PCIe function is itself.
 */
static void test_requester_alias_behind_bridges(void **state)
{
	struct machine *m = vtd_machine(2, 0);
	struct umsi_sim_dev_desc pb, cb, d = msi_desc(1, true, true);
	struct umsi_pci_dev *bp, *bc, *a, *b;
	struct umsi_msg msg;
	uint16_t cap;

	(void)state;
	memset(&pb, 0, sizeof(pb));
	pb.vendor = 0x1b36;
	pb.device = 0x000e;                     /* QEMU's pcie-pci-bridge */
	pb.header_type = 1;
	pb.secondary_bus = 5;
	pb.subordinate_bus = 5;
	pb.pcie.present = true;
	pb.pcie.type = UMSI_PCIE_TYPE_PCI_BRIDGE;
	cb = pb;
	cb.device = 0x0001;                     /* a conventional bridge */
	cb.secondary_bus = 6;
	cb.subordinate_bus = 6;
	cb.pcie.present = false;
	bp = plug(m, UMSI_BDF(0, 0, 0x1e, 0), &pb, 0);
	bc = plug(m, UMSI_BDF(0, 0, 0x1f, 0), &cb, 0);
	assert_int_equal(umsi_sim_add_device(m->sim, UMSI_BDF(0, 5, 1, 0), &d),
			 0);
	assert_int_equal(umsi_pci_add(m->sys, UMSI_BDF(0, 5, 1, 0), bp, 0, &a),
			 0);
	assert_int_equal(umsi_sim_add_device(m->sim, UMSI_BDF(0, 6, 2, 0), &d),
			 0);
	assert_int_equal(umsi_pci_add(m->sys, UMSI_BDF(0, 6, 2, 0), bc, 0, &b),
			 0);
	assert_int_equal(umsi_pci_alloc_irq_vectors(a, 1, 1, UMSI_PCI_IRQ_MSI),
			 1);
	assert_int_equal(umsi_pci_alloc_irq_vectors(b, 1, 1, UMSI_PCI_IRQ_MSI),
			 1);
	cap = find_cap(m, UMSI_BDF(0, 5, 1, 0), UMSI_PCI_CAP_ID_MSI);
	msg.address = umsi_sim_cfg_read(m->sim, UMSI_BDF(0, 5, 1, 0), cap + 4, 4);
	msg.data = 0;
	{
		uint64_t e[2];

		assert_int_equal(umsi_sim_vtd_irte(m->sim, handle_of(&msg, 0),
						   e), 0);
		assert_int_equal(IRTE_SID(e[1]), 0x0500);
		cap = find_cap(m, UMSI_BDF(0, 6, 2, 0), UMSI_PCI_CAP_ID_MSI);
		msg.address = umsi_sim_cfg_read(m->sim, UMSI_BDF(0, 6, 2, 0),
						cap + 4, 4);
		assert_int_equal(umsi_sim_vtd_irte(m->sim, handle_of(&msg, 0),
						   e), 0);
		assert_int_equal(IRTE_SID(e[1]), UMSI_BDF(0, 0, 0x1f, 0));
	}
	umsi_pci_remove(m->sys, a);
	umsi_pci_remove(m->sys, b);
	umsi_pci_remove(m->sys, bp);
	umsi_pci_remove(m->sys, bc);
	vtd_machine_free(m);
}

/* ---- APIC IDs above 255 -------------------------------------------------------- */

/*
 * CPUs with x2APIC IDs far above 255 and no extended destination ID: a
 * compatibility-format message cannot name them, an entry in x2APIC mode
 * (EIM) can. With x2apic set every CPU takes interrupts, each on the CPU
 * the core chose; in xAPIC mode the high ones are out of reach (the core
 * never picks them).
 */
static void test_apic_ids_above_255(void **state)
{
	static const uint32_t ids[6] = { 0, 1, 256, 1000, 65536, 70000 };
	struct umsi_sim_config sc = { .ncpus = 6, .apic_ids = ids,
				      .plat_flags = UMSI_PLAT_X2APIC,
				      .vtd = true, .vtd_eim = true,
				      .vtd_ioapic_sid = UMSI_SIM_VTD_IOAPIC_SID };
	struct umsi_sim_dev_desc d = nvme_desc();
	struct machine *m = calloc(1, sizeof(*m));
	struct umsi_pci_dev *dev;
	struct vtd_cfg c;
	uint32_t cpu, irq;
	uint64_t e[2];

	(void)state;
	assert_non_null(m);
	m->sim = umsi_sim_create(&sc);
	assert_non_null(m->sim);
	umsi_sim_leaks(m->sim, &m->leaks0);
	vtd_cfg_of(0, &c);
	c.vc.x2apic = true;
	assert_int_equal(umsi_system_create(umsi_sim_host_ops(), m->sim,
					    &c.cfg, &m->sys), 0);
	(void)umsi_policy_parse(m->sys, "");
	fx_set_dispatch(m->sim, m->sys);
	assert_non_null(strstr(umsi_sim_log_text(m->sim), "x2APIC "
			       "destinations"));
	dev = plug(m, NVME, &d, UMSI_PCI_ADD_FRESH);
	assert_int_equal(umsi_pci_alloc_irq_vectors(dev, 6, 6, UMSI_PCI_IRQ_MSIX),
			 6);
	for (cpu = 0; cpu < 6; cpu++) {
		uint64_t w = 1ull << cpu;
		struct umsi_cpumask one = { &w, 6 };
		struct umsi_irq_info info;
		struct umsi_msg msg = fx_msix_msg(m, NVME, cpu);

		irq = (uint32_t)umsi_pci_irq_vector(dev, cpu);
		assert_int_equal(umsi_request_irq(m->sys, irq, fx_handler, 0,
						  "t", m), 0);
		assert_int_equal(umsi_irq_set_affinity(m->sys, irq, &one), 0);
		assert_int_equal(umsi_irq_get_info(m->sys, irq, &info), 0);
		assert_int_equal(info.cpu, cpu);
		assert_int_equal(info.hwid, ids[cpu]);
		assert_int_equal(umsi_sim_vtd_irte(m->sim, handle_of(&msg, 0), e),
				 0);
		assert_int_equal((uint32_t)(e[0] >> 32), ids[cpu]);
		assert_int_equal(umsi_sim_fire(m->sim, NVME, cpu),
				 UMSI_SIM_FIRE_SENT);
		assert_int_equal(m->last_cpu[irq], cpu);
	}
	assert_int_equal(vstats(m).faults, 0);
	umsi_pci_remove(m->sys, dev);
	vtd_machine_free(m);

	/* xAPIC destinations: IDs above 254 are out of reach. */
	m = calloc(1, sizeof(*m));
	assert_non_null(m);
	m->sim = umsi_sim_create(&sc);
	assert_non_null(m->sim);
	umsi_sim_leaks(m->sim, &m->leaks0);
	vtd_cfg_of(0, &c);
	assert_int_equal(umsi_system_create(umsi_sim_host_ops(), m->sim,
					    &c.cfg, &m->sys), 0);
	for (cpu = 2; cpu < 6; cpu++)
		assert_non_null(strstr(umsi_sim_log_text(m->sim),
				       "cannot be named by an MSI"));
	vtd_machine_free(m);
}

/* ---- forgery ------------------------------------------------------------------ */

/*
 * Another function writes the nvme's message (its handle) with its own
 * requester ID: the unit refuses it (source-ID fault, the writer's
 * requester and the entry recorded) and no CPU takes it; a handle nobody
 * owns faults as not present; a compatibility-format message aimed
 * straight at a CPU and vector the nvme owns is blocked. No handler runs,
 * nothing counts as spurious. umsi_vtd_faults() reads each from the
 * fault recording registers once (requester, entry, reason), and says
 * when more faults came than the unit has records.
 */
static void test_forged_messages_refused(void **state)
{
	struct machine *m = vtd_machine(2, 0);
	struct umsi_sim_dev_desc dx = nvme_desc();
	struct umsi_sim_dev_desc dm = msi_desc(1, true, true);
	struct umsi_pci_dev *x = plug(m, NVME, &dx, UMSI_PCI_ADD_FRESH);
	struct umsi_pci_dev *rogue = plug(m, DEV, &dm, 0);
	struct umsi_irq_info info;
	struct umsi_msg msg, direct;
	uint32_t irq, sid, index, reason, h, k;
	struct umsi_sim_stats st;
	struct fx_vtd_faults fl;
	bool over;

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
	h = handle_of(&msg, 0);
	umsi_sim_stats_reset(m->sim);
	/* (a) the nvme's handle, written by DEV. */
	assert_int_equal(umsi_sim_msg_write_from(m->sim, DEV, msg.address,
						 msg.data), 0);
	assert_int_equal(umsi_sim_vtd_fault(m->sim, 0, &sid, &index, &reason),
			 0);
	assert_int_equal(sid, DEV);
	assert_int_equal(index, h);
	assert_int_equal(reason, UMSI_SIM_VTD_FR_SID);
	/* (b) a handle nobody owns. */
	assert_int_equal(umsi_sim_msg_write_from(m->sim, NVME,
			 UMSI_X86_MSI_BASE | (1u << 4) | (1000u << 5), 0), 0);
	assert_int_equal(umsi_sim_vtd_fault(m->sim, 1, &sid, &index, &reason),
			 0);
	assert_int_equal(index, 1000);
	assert_int_equal(reason, UMSI_SIM_VTD_FR_NOT_PRESENT);
	/* (c) straight at the nvme's CPU and vector: compatibility format. */
	assert_int_equal(umsi_x86_msg_compose(info.hwid, (uint8_t)info.vector,
					      0, &direct), 0);
	assert_int_equal(umsi_sim_msg_write_from(m->sim, DEV, direct.address,
						 direct.data), 0);
	assert_int_equal(umsi_sim_vtd_fault(m->sim, 2, &sid, NULL, &reason), 0);
	assert_int_equal(reason, UMSI_SIM_VTD_FR_COMPAT);
	/* What a kernel reads from the fault recording registers. */
	fl.n = 0;
	assert_int_equal(umsi_vtd_faults(m->sys, fx_vtd_collect, &fl, &over), 3);
	assert_false(over);
	assert_int_equal(fl.f[0].sid, DEV);
	assert_int_equal(fl.f[0].index, h);
	assert_int_equal(fl.f[0].reason, UMSI_VTD_FR_SID);
	assert_true(fl.f[0].interrupt);
	assert_int_equal(fl.f[1].sid, NVME);
	assert_int_equal(fl.f[1].index, 1000);
	assert_int_equal(fl.f[1].reason, UMSI_VTD_FR_NOT_PRESENT);
	assert_int_equal(fl.f[2].reason, UMSI_VTD_FR_COMPAT);
	/* Read once: cleared. */
	assert_int_equal(umsi_vtd_faults(m->sys, fx_vtd_collect, &fl, &over), 0);
	st = sstats(m);
	assert_int_equal(st.dispatched, 0);
	assert_int_equal(st.undeliverable_by[UMSI_SIM_UNDELIV_IR], 3);
	assert_int_equal(m->handled[irq], 0);
	assert_int_equal(umsi_spurious_count(m->sys, info.cpu), 0);
	/* The owner's own message still arrives. */
	assert_int_equal(umsi_sim_fire(m->sim, NVME, 0), UMSI_SIM_FIRE_SENT);
	assert_int_equal(m->handled[irq], 1);
	/* More faults than records (4): the unit says some were lost. */
	for (k = 0; k < 6; k++)
		assert_int_equal(umsi_sim_msg_write_from(m->sim, DEV, msg.address,
							 msg.data), 0);
	fl.n = 0;
	assert_int_equal(umsi_vtd_faults(m->sys, fx_vtd_collect, &fl, &over),
			 UMSI_SIM_VTD_NFR);
	assert_true(over);
	assert_int_equal(umsi_vtd_faults(m->sys, NULL, NULL, &over), 0);
	assert_false(over);
	assert_int_equal(umsi_vtd_faults(NULL, NULL, NULL, NULL), -UMSI_EINVAL);
	umsi_pci_remove(m->sys, x);
	umsi_pci_remove(m->sys, rogue);
	vtd_machine_free(m);
}

/* ---- INTx ----------------------------------------------------------------------- */

/*
 * INTx: the IO-APIC's redirection entry is remappable (a handle), its
 * table entry validates the IO-APIC's requester ID and is level
 * triggered; the line is handled on the CPU the entry names and the EOI
 * reaches the IO-APIC.
 */
static void test_intx_through_remapping(void **state)
{
	struct machine *m = vtd_machine(2, 0);
	struct umsi_sim_dev_desc d = intx_desc(1);
	struct umsi_pci_dev *dev = plug(m, DEV6, &d, 0);
	struct umsi_sim_rte rte;
	struct umsi_irq_info info;
	uint32_t gsi;
	uint64_t e[2];

	(void)state;
	gsi = fx_intx_line(m, dev, DEV6, &info, &rte);
	assert_true(rte.remappable);
	assert_int_equal(umsi_sim_vtd_irte(m->sim, rte.handle, e), 0);
	assert_true(e[0] & IRTE_P);
	assert_true(e[0] & (1ull << 4));        /* level */
	assert_int_equal(IRTE_VECTOR(e[0]), info.vector);
	assert_int_equal(IRTE_SID(e[1]), UMSI_SIM_VTD_IOAPIC_SID);
	assert_int_equal(umsi_sim_intx_set(m->sim, DEV6, true), 0);
	assert_int_equal(m->handled[gsi], 1);
	assert_int_equal(m->last_cpu[gsi], info.cpu);
	assert_int_equal(umsi_sim_ioapic_get(m->sim, gsi, &rte), 0);
	assert_false(rte.remote_irr);
	assert_int_equal(vstats(m).faults, 0);
	assert_int_equal(umsi_free_irq(m->sys, gsi, m), 0);
	umsi_pci_remove(m->sys, dev);
	vtd_machine_free(m);
}

/* ---- several IO-APICs --------------------------------------------------------- */

/* A machine of two IO-APICs; the back end told of the first @n of them
 * (0: only ioapic_sid, the first's). */
static struct machine *vtd_two_ioapic_machine(uint32_t n)
{
	struct vtd_cfg c;

	vtd_cfg_of(0, &c);
	c.vc.ioapics = n ? fx_two_ioapics() : NULL;
	c.vc.nioapics = n;
	return fx_two_ioapic_machine(false, &c.cfg);
}

/*
 * A machine of two IO-APICs, each sending with its own requester ID (a
 * server's chipset IO-APIC and one per host bridge): told of both
 * (umsi_vtd_config.ioapics), the back end validates each line's entry
 * against its own IO-APIC's ID and both lines are handled, with no fault.
 */
static void test_intx_of_two_ioapics(void **state)
{
	struct machine *m = vtd_two_ioapic_machine(2);
	struct fx_two_lines t;
	uint64_t e[2];

	(void)state;
	fx_two_lines_up(m, &t);
	assert_int_equal(umsi_sim_vtd_irte(m->sim, t.rte[0].handle, e), 0);
	assert_int_equal(IRTE_SID(e[1]), UMSI_SIM_VTD_IOAPIC_SID);
	assert_int_equal(umsi_sim_vtd_irte(m->sim, t.rte[1].handle, e), 0);
	assert_true(e[0] & IRTE_P);
	assert_int_equal(IRTE_SID(e[1]), FX_IOAPIC2_SID);
	fx_two_lines_fire(m, &t, 2);
	assert_int_equal(vstats(m).faults, 0);
	fx_two_lines_down(m, &t);
	vtd_machine_free(m);
}

/*
 * The same machine with only ioapic_sid (one IO-APIC's ID): the second
 * IO-APIC's line validates the wrong requester ID and its messages fault,
 * as on hardware; this is what the table is for.
 */
static void test_one_ioapic_sid_on_two_ioapics_faults(void **state)
{
	struct machine *m = vtd_two_ioapic_machine(0);
	struct umsi_pci_dev *b = fx_plug_at_gsi(m, DEV6, 30);
	struct umsi_sim_rte rb;
	struct umsi_irq_info ib;
	uint32_t gb;
	uint64_t e[2];

	(void)state;
	gb = fx_intx_line(m, b, DEV6, &ib, &rb);
	assert_int_equal(umsi_sim_vtd_irte(m->sim, rb.handle, e), 0);
	assert_int_equal(IRTE_SID(e[1]), UMSI_SIM_VTD_IOAPIC_SID);
	assert_int_equal(fx_fire_line(m, DEV6, gb), 0);
	assert_true(vstats(m).faults > 0);
	assert_int_equal(umsi_sim_intx_set(m->sim, DEV6, false), 0);
	assert_int_equal(umsi_free_irq(m->sys, gb, m), 0);
	umsi_pci_remove(m->sys, b);
	vtd_machine_free(m);
}

/*
 * A GSI of no IO-APIC the back end was told of (the table lists only the
 * first): the line is refused with nothing left (fx_line_refused()); the
 * first IO-APIC's lines still work.
 */
static void test_gsi_of_no_known_ioapic_refused(void **state)
{
	struct machine *m = vtd_two_ioapic_machine(1);
	struct umsi_pci_dev *a = fx_plug_at_gsi(m, DEV, 19);
	struct umsi_pci_dev *b = fx_plug_at_gsi(m, DEV6, 30);
	struct umsi_sim_rte ra;
	struct umsi_irq_info ia;
	uint32_t ga;

	(void)state;
	fx_line_refused(m, b, 30);
	ga = fx_intx_line(m, a, DEV, &ia, &ra);
	assert_int_equal(fx_fire_line(m, DEV, ga), 1);
	assert_int_equal(vstats(m).faults, 0);
	assert_int_equal(umsi_free_irq(m->sys, ga, m), 0);
	umsi_pci_remove(m->sys, a);
	umsi_pci_remove(m->sys, b);
	vtd_machine_free(m);
}

/* ---- exhaustion, a queue that stops ------------------------------------------ */

/*
 * A table of 8 entries: MSI-X asking for 9 or more is refused with
 * nothing left (no entry taken, MSI-X off); 8 fit; with the 8 taken
 * another device gets none (the log says why) and the first keeps
 * working.
 */
static void test_full_table(void **state)
{
	struct machine *m = vtd_machine(2, 8);
	struct umsi_sim_dev_desc dx = nvme_desc();
	struct umsi_sim_dev_desc dm = msi_desc(1, true, true);
	struct umsi_pci_dev *x = plug(m, NVME, &dx, UMSI_PCI_ADD_FRESH);
	struct umsi_pci_dev *msi = plug(m, DEV, &dm, 0);
	uint32_t k;
	uint64_t e[2];

	(void)state;
	assert_true(umsi_pci_alloc_irq_vectors(x, 9, 9, UMSI_PCI_IRQ_MSIX) < 0);
	assert_false(msix_enabled(m, NVME));
	for (k = 0; k < 8; k++) {
		assert_int_equal(umsi_sim_vtd_irte(m->sim, k, e), 0);
		assert_false(e[0] & IRTE_P);
	}
	assert_int_equal(umsi_pci_alloc_irq_vectors(x, 8, 8, UMSI_PCI_IRQ_MSIX),
			 8);
	umsi_sim_log_clear(m->sim);
	assert_true(umsi_pci_alloc_irq_vectors(msi, 1, 1, UMSI_PCI_IRQ_MSI) < 0);
	assert_non_null(strstr(umsi_sim_log_text(m->sim), "x86-vtd: irq "));
	assert_non_null(strstr(umsi_sim_log_text(m->sim), "free consecutive "
			       "entries of 8"));
	assert_false(msi_enabled(m, DEV));
	assert_int_equal(umsi_request_irq(m->sys, (uint32_t)
			 umsi_pci_irq_vector(x, 7), fx_handler, 0, "t", m), 0);
	assert_int_equal(umsi_sim_fire(m->sim, NVME, 7), UMSI_SIM_FIRE_SENT);
	assert_int_equal(m->handled[umsi_pci_irq_vector(x, 7)], 1);
	umsi_pci_free_irq_vectors(x);
	assert_int_equal(umsi_pci_alloc_irq_vectors(msi, 1, 1, UMSI_PCI_IRQ_MSI),
			 1);
	umsi_pci_remove(m->sys, x);
	umsi_pci_remove(m->sys, msi);
	vtd_machine_free(m);
}

/*
 * The unit stops running its invalidation queue: the allocation that
 * needs an entry fails with -UMSI_ETIMEDOUT after the back end's
 * deadline instead of hanging, said once; MSI-X stays off; the unit is not
 * trusted again (the next allocation fails at once); teardown completes.
 */
static void test_silent_queue_fails(void **state)
{
	struct machine *m = vtd_machine(2, 0);
	struct umsi_sim_dev_desc d = nvme_desc();
	struct umsi_pci_dev *dev = plug(m, NVME, &d, UMSI_PCI_ADD_FRESH);
	const char *log;
	int ret;

	(void)state;
	umsi_sim_log_clear(m->sim);
	assert_int_equal(umsi_sim_vtd_silent(m->sim, true), 0);
	ret = umsi_pci_alloc_irq_vectors(dev, 2, 2, UMSI_PCI_IRQ_MSIX);
	assert_int_equal(ret, -UMSI_ETIMEDOUT);
	assert_false(msix_enabled(m, NVME));
	log = umsi_sim_log_text(m->sim);
	assert_non_null(strstr(log, "x86-vtd: invalidation not done within "
			       "10 ms"));
	assert_null(strstr(strstr(log, "invalidation not done") + 1,
			   "invalidation not done"));
	/* Said after the back end's lock is dropped (umsi/host.h). */
	assert_int_equal(sstats(m).lock_errors, 0);
	ret = umsi_pci_alloc_irq_vectors(dev, 1, 1, UMSI_PCI_IRQ_MSIX);
	assert_true(ret < 0);
	assert_false(msix_enabled(m, NVME));
	assert_int_equal(umsi_sim_vtd_silent(m->sim, false), 0);
	umsi_pci_remove(m->sys, dev);
	umsi_system_destroy(m->sys);
	umsi_sim_destroy(m->sim);
	free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_contradictory_config_refused),
		cmocka_unit_test(test_create_failure_leaves_nothing),
		cmocka_unit_test(test_msix_remapped),
		cmocka_unit_test(test_migration_rewrites_entry),
		cmocka_unit_test(test_msi_block_spread),
		cmocka_unit_test(test_requester_alias_behind_bridges),
		cmocka_unit_test(test_apic_ids_above_255),
		cmocka_unit_test(test_forged_messages_refused),
		cmocka_unit_test(test_intx_through_remapping),
		cmocka_unit_test(test_intx_of_two_ioapics),
		cmocka_unit_test(test_one_ioapic_sid_on_two_ioapics_faults),
		cmocka_unit_test(test_gsi_of_no_known_ioapic_refused),
		cmocka_unit_test(test_full_table),
		cmocka_unit_test(test_silent_queue_fails),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
