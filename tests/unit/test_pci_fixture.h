/* SPDX-License-Identifier: MIT */
/*
 * Shared set-up for the PCI tests (test_pci*.c, test_policy.c): a
 * simulated machine with uMSI on it, device templates, handlers that
 * count, and snapshots of everything a failed call must give back.
 */
#ifndef PCI_FIXTURE_H
#define PCI_FIXTURE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <umsi/compat.h>
#include <umsi/internal/core.h>
#include <umsi/matrix.h>
#include <umsi/pci.h>
#include <umsi/pci_regs.h>
#include "sim/umsi_sim.h"
#include "ctl_fixture.h"

#define MAX_TRACKED_IRQ 4096

struct machine {
	struct umsi_sim *sim;
	struct umsi_system *sys;
	struct umsi_sim_leaks leaks0;
	uint64_t handled[MAX_TRACKED_IRQ];
	uint32_t last_cpu[MAX_TRACKED_IRQ];
};

static inline int fx_dispatch(void *arg, uint32_t cpu, uint8_t vector)
{
	return umsi_dispatch(arg, cpu, vector);
}

/* A machine on the controller UMSI_TEST_CTL names (ctl_fixture.h). */
static inline struct machine *machine_new(uint32_t ncpus, uint32_t plat,
				   const char *cmdline)
{
	struct umsi_sim_config cfg = { .ncpus = ncpus, .plat_flags = plat };
	struct machine *m = calloc(1, sizeof(*m));

	assert_non_null(m);
	fx_sim_config(&cfg);
	m->sim = umsi_sim_create(&cfg);
	assert_non_null(m->sim);
	umsi_sim_leaks(m->sim, &m->leaks0);
	assert_int_equal(fx_system_create(m->sim, NULL, &m->sys), 0);
	/*
	 * The PCI layer's state (device list, policy) is made by its first
	 * call and lives until destroy: make it here, so snapshots taken
	 * around a device's life compare what the device took.
	 */
	(void)umsi_policy_parse(m->sys, cmdline ? cmdline : "");
	fx_set_dispatch(m->sim, m->sys);
	return m;
}

static inline void machine_free(struct machine *m)
{
	struct umsi_sim_leaks l;

	struct umsi_sim_stats st;

	umsi_sim_stats(m->sim, &st);
	/* No host operation was called where umsi/host.h says it is not. */
	assert_int_equal(st.lock_errors, 0);
	umsi_system_destroy(m->sys);
	umsi_sim_leaks(m->sim, &l);
	assert_int_equal(l.allocs, m->leaks0.allocs);
	assert_int_equal(l.maps, m->leaks0.maps);
	assert_int_equal(l.locks, m->leaks0.locks);
	umsi_sim_destroy(m->sim);
	free(m);
}

/* The handler's cookie is the machine; the IRQ says which one ran. */
static inline int fx_handler(uint32_t irq, void *dev_id)
{
	struct machine *m = dev_id;

	if (irq < MAX_TRACKED_IRQ) {
		m->handled[irq]++;
		m->last_cpu[irq] = umsi_sim_current_cpu(m->sim);
	}
	return UMSI_IRQ_HANDLED;
}

/* ---- device templates ----------------------------------------------------- */

/* Like QEMU's nvme: 64-bit BAR0 of 16 KiB, 65-entry MSI-X table at
 * 0x2000 and PBA at 0x3000 in it, PCIe endpoint, INTA. */
static inline struct umsi_sim_dev_desc nvme_desc(void)
{
	struct umsi_sim_dev_desc d;

	memset(&d, 0, sizeof(d));
	d.vendor = 0x1b36;
	d.device = 0x0010;
	d.class_code = 0x010802;
	d.bars[0].size = 0x4000;
	d.bars[0].is64 = true;
	d.intx_pin = 1;
	d.msix.present = true;
	d.msix.nentries = 65;
	d.msix.table_bar = 0;
	d.msix.table_offset = 0x2000;
	d.msix.pba_bar = 0;
	d.msix.pba_offset = 0x3000;
	d.pcie.present = true;
	d.pcie.type = UMSI_PCIE_TYPE_ENDPOINT;
	return d;
}

/* An MSI-only function: @nvec messages, 64-bit, with or without masks. */
static inline struct umsi_sim_dev_desc msi_desc(uint8_t nvec, bool is64, bool mask)
{
	struct umsi_sim_dev_desc d;

	memset(&d, 0, sizeof(d));
	d.vendor = 0x8086;
	d.device = 0x10d3;
	d.class_code = 0x020000;
	d.bars[0].size = 0x20000;
	d.intx_pin = 1;
	d.msi.present = true;
	d.msi.nvec = nvec;
	d.msi.is64 = is64;
	d.msi.maskbit = mask;
	return d;
}

/* A function with INTx only. */
static inline struct umsi_sim_dev_desc intx_desc(uint8_t pin)
{
	struct umsi_sim_dev_desc d;

	memset(&d, 0, sizeof(d));
	d.vendor = 0x1af4;
	d.device = 0x1000;
	d.class_code = 0x020000;
	d.bars[0].size = 0x1000;
	d.intx_pin = pin;
	return d;
}

static inline struct umsi_pci_dev *plug(struct machine *m, umsi_bdf_t bdf,
				 const struct umsi_sim_dev_desc *d,
				 uint32_t flags)
{
	struct umsi_pci_dev *dev = NULL;

	assert_int_equal(umsi_sim_add_device(m->sim, bdf, d), 0);
	assert_int_equal(umsi_pci_add(m->sys, bdf, NULL, flags, &dev), 0);
	assert_non_null(dev);
	return dev;
}

/*
 * A bridge to bus @sec: a PCI Express one of port type @type
 * (UMSI_PCIE_TYPE_*), or a conventional PCI-to-PCI bridge for -1; with
 * one MSI message of its own when @msi (a hot-plug controller's).
 */
static inline struct umsi_sim_dev_desc fx_bridge_desc(uint8_t sec, int type,
						       bool msi)
{
	struct umsi_sim_dev_desc d;

	memset(&d, 0, sizeof(d));
	d.vendor = 0x1b36;
	d.device = type < 0 ? 0x0001 : 0x000e;
	d.class_code = 0x060400;
	d.header_type = 1;
	d.secondary_bus = sec;
	d.subordinate_bus = sec;
	d.pcie.present = type >= 0;
	d.pcie.type = type < 0 ? 0 : (uint8_t)type;
	d.msi.present = msi;
	d.msi.nvec = 1;
	d.msi.is64 = true;
	return d;
}

/* plug() behind bridge @parent (NULL: the root bus), fresh from reset. */
static inline struct umsi_pci_dev *plug_under(struct machine *m,
					      umsi_bdf_t bdf,
					      const struct umsi_sim_dev_desc *d,
					      struct umsi_pci_dev *parent)
{
	struct umsi_pci_dev *dev = NULL;

	assert_int_equal(umsi_sim_add_device(m->sim, bdf, d), 0);
	assert_int_equal(umsi_pci_add(m->sys, bdf, parent, UMSI_PCI_ADD_FRESH,
				      &dev), 0);
	return dev;
}

/*
 * A PCI Express root port at @bdf whose buses run from @sec to @sub, from
 * reset, on the root bus: the port functions behind it plug_under() it.
 */
static inline struct umsi_pci_dev *fx_root_port_up(struct machine *m,
						   umsi_bdf_t bdf, uint8_t sec,
						   uint8_t sub)
{
	struct umsi_sim_dev_desc rp = fx_bridge_desc(sec,
						     UMSI_PCIE_TYPE_ROOT_PORT,
						     false);

	rp.subordinate_bus = sub;
	return plug_under(m, bdf, &rp, NULL);
}

/* MSI-X entry @k of function @bdf as the device holds it. */
static inline struct umsi_msg fx_msix_msg(struct machine *m, umsi_bdf_t bdf,
					  uint32_t k)
{
	struct umsi_msg msg;
	uint32_t data, ctrl;

	assert_int_equal(umsi_sim_msix_entry_get(m->sim, bdf, k, &msg.address,
						 &data, &ctrl), 0);
	msg.data = data;
	return msg;
}

/*
 * machine_free() for the back-end tests: no bad access and no host call
 * made where host.h forbids it, everything given back (every leak
 * counter), then @after (may be NULL) looks at the hardware the system
 * left, before the simulator goes.
 */
static inline void machine_free_checked(struct machine *m,
					void (*after)(struct umsi_sim *sim))
{
	struct umsi_sim_stats st;
	struct umsi_sim_leaks l;

	umsi_sim_stats(m->sim, &st);
	assert_int_equal(st.bad_accesses, 0);
	assert_int_equal(st.lock_errors, 0);
	umsi_system_destroy(m->sys);
	umsi_sim_leaks(m->sim, &l);
	assert_true(umsi_sim_leaks_equal(&m->leaks0, &l));
	if (after)
		after(m->sim);
	umsi_sim_destroy(m->sim);
	free(m);
}

/*
 * Under fire: a umsi_sim_set_hook() callback that fires MSI/MSI-X message
 * @k of @bdf after every host call (of a move, a retarget), counting the
 * messages that went out or were left pending.
 */
struct fx_gun {
	struct machine *m;
	umsi_bdf_t bdf;
	unsigned k;
	int sent;
};

static inline void fx_shoot(void *arg, enum umsi_sim_op op)
{
	struct fx_gun *g = arg;
	int r;

	(void)op;
	r = umsi_sim_fire(g->m->sim, g->bdf, g->k);
	if (r == UMSI_SIM_FIRE_SENT || r == UMSI_SIM_FIRE_PENDING)
		g->sent++;
}

/*
 * A level INTx handler that serves the line: deasserts the function's
 * INTx in the simulator, then counts as fx_handler() does. fx_intx_serve()
 * names the machine and function it serves (one at a time).
 */
struct fx_intx {
	struct machine *m;
	umsi_bdf_t bdf;
};

static inline struct fx_intx *fx_intx(void)
{
	static struct fx_intx x;

	return &x;
}

static inline void fx_intx_serve(struct machine *m, umsi_bdf_t bdf)
{
	fx_intx()->m = m;
	fx_intx()->bdf = bdf;
}

static inline int fx_intx_handler(uint32_t irq, void *dev_id)
{
	(void)dev_id;
	umsi_sim_intx_set(fx_intx()->m->sim, fx_intx()->bdf, false);
	return fx_handler(irq, fx_intx()->m);
}

/*
 * The one INTx line of @dev (function @bdf) allocated and requested with
 * fx_intx_handler(): its GSI, the IRQ's @info and the IO-APIC's @rte.
 */
static inline uint32_t fx_intx_line(struct machine *m, struct umsi_pci_dev *dev,
				    umsi_bdf_t bdf, struct umsi_irq_info *info,
				    struct umsi_sim_rte *rte)
{
	uint32_t gsi;

	assert_int_equal(umsi_pci_alloc_irq_vectors(dev, 1, 1,
						    UMSI_PCI_IRQ_INTX), 1);
	gsi = (uint32_t)umsi_pci_irq_vector(dev, 0);
	fx_intx_serve(m, bdf);
	assert_int_equal(umsi_request_irq(m->sys, gsi, fx_intx_handler,
					  UMSI_IRQF_SHARED, "t", m), 0);
	assert_int_equal(umsi_irq_get_info(m->sys, gsi, info), 0);
	assert_int_equal(umsi_sim_ioapic_get(m->sim, gsi, rte), 0);
	return gsi;
}

/* A function whose INTA# the platform routes to @gsi. */
static inline struct umsi_pci_dev *fx_plug_at_gsi(struct machine *m,
						  umsi_bdf_t bdf, uint32_t gsi)
{
	struct umsi_sim_dev_desc d = intx_desc(1);
	struct umsi_pci_dev *dev = NULL;

	assert_int_equal(umsi_sim_add_device(m->sim, bdf, &d), 0);
	assert_int_equal(umsi_sim_set_intx_route(m->sim, bdf, (int)gsi), 0);
	assert_int_equal(umsi_pci_add(m->sys, bdf, NULL, 0, &dev), 0);
	assert_non_null(dev);
	return dev;
}

/* Assert @bdf's line once: how many times the handler of @gsi ran. */
static inline uint64_t fx_fire_line(struct machine *m, umsi_bdf_t bdf,
				    uint32_t gsi)
{
	uint64_t before = m->handled[gsi];

	fx_intx_serve(m, bdf);
	assert_int_equal(umsi_sim_intx_set(m->sim, bdf, true), 0);
	umsi_sim_quiesce(m->sim);
	return m->handled[gsi] - before;
}

/*
 * Two IO-APICs (a server's chipset one and one per host bridge): GSIs 0-23
 * the first's, sending as UMSI_SIM_VTD_IOAPIC_SID, 24-47 the second's,
 * sending as FX_IOAPIC2_SID; for the simulator and for a back end
 * (umsi_vtd_config.ioapics).
 */
#define FX_IOAPIC2_SID 0x00fau

static inline const struct umsi_ioapic_source *fx_two_ioapics(void)
{
	static const struct umsi_ioapic_source t[2] = {
		{ .gsi_base = 0, .gsi_count = 24,
		  .source_id = UMSI_SIM_VTD_IOAPIC_SID },
		{ .gsi_base = 24, .gsi_count = 24,
		  .source_id = FX_IOAPIC2_SID },
	};

	return t;
}

/* A machine of those two, with a VT-d unit, or an AMD-Vi one when @amdvi;
 * uMSI created on it with @cfg. */
/*
 * A machine of the simulator built from @sc, uMSI created on it with
 * @cfg (no boot parameters), the simulator dispatching to it; its leak
 * counters taken before.
 */
static inline struct machine *fx_machine_of(const struct umsi_sim_config *sc,
					    const struct umsi_config *cfg)
{
	struct machine *m = calloc(1, sizeof(*m));

	assert_non_null(m);
	m->sim = umsi_sim_create(sc);
	assert_non_null(m->sim);
	umsi_sim_leaks(m->sim, &m->leaks0);
	assert_int_equal(umsi_system_create(umsi_sim_host_ops(), m->sim, cfg,
					    &m->sys), 0);
	(void)umsi_policy_parse(m->sys, "");
	fx_set_dispatch(m->sim, m->sys);
	return m;
}

static inline struct machine *fx_two_ioapic_machine(bool amdvi,
						    const struct umsi_config *cfg)
{
	struct umsi_sim_config sc = { .ncpus = 4, .vtd = !amdvi,
				      .amdvi = amdvi,
				      .ioapics = fx_two_ioapics(),
				      .nioapics = 2 };

	return fx_machine_of(&sc, cfg);
}

/* Faults as umsi_vtd_faults() reports them (fx_vtd_collect), 8 kept. */
struct fx_vtd_faults {
	struct umsi_vtd_fault f[8];
	unsigned n;
};

static inline void fx_vtd_collect(void *arg, const struct umsi_vtd_fault *f)
{
	struct fx_vtd_faults *fl = arg;

	if (fl->n < 8)
		fl->f[fl->n++] = *f;
}

/*
 * On such a machine: INTA# of 00:05.0 at GSI 19 (the first IO-APIC) and of
 * 00:06.0 at GSI 30 (the second), each allocated and requested with
 * fx_intx_handler(): their IRQs are their GSIs, their entries remappable.
 */
struct fx_two_lines {
	struct umsi_pci_dev *dev[2];
	uint32_t gsi[2];
	struct umsi_irq_info info[2];
	struct umsi_sim_rte rte[2];
};

#define FX_LINE_BDF(i) UMSI_BDF(0, 0, 5 + (i), 0)

static inline void fx_two_lines_up(struct machine *m, struct fx_two_lines *t)
{
	static const uint32_t at[2] = { 19, 30 };

	for (int i = 0; i < 2; i++) {
		t->dev[i] = fx_plug_at_gsi(m, FX_LINE_BDF(i), at[i]);
		fx_intx_serve(m, FX_LINE_BDF(i));
		t->gsi[i] = fx_intx_line(m, t->dev[i], FX_LINE_BDF(i),
					 &t->info[i], &t->rte[i]);
		assert_int_equal(t->gsi[i], at[i]);
		assert_true(t->rte[i].remappable);
	}
}

/* Each line fired @n times: handled once each time, on its IRQ's CPU,
 * Remote IRR clear after. */
static inline void fx_two_lines_fire(struct machine *m,
				     struct fx_two_lines *t, int n)
{
	struct umsi_sim_rte r;

	for (int k = 0; k < n; k++) {
		for (int i = 0; i < 2; i++) {
			assert_int_equal(fx_fire_line(m, FX_LINE_BDF(i),
						      t->gsi[i]), 1);
			assert_int_equal(m->last_cpu[t->gsi[i]],
					 t->info[i].cpu);
			assert_int_equal(umsi_sim_ioapic_get(m->sim, t->gsi[i],
							     &r), 0);
			assert_false(r.remote_irr);
		}
	}
}

static inline void fx_two_lines_down(struct machine *m,
				     struct fx_two_lines *t)
{
	for (int i = 0; i < 2; i++) {
		assert_int_equal(umsi_free_irq(m->sys, t->gsi[i], m), 0);
		umsi_pci_remove(m->sys, t->dev[i]);
	}
}

/*
 * @dev's line at @gsi, an input of no IO-APIC the back end was told of:
 * refused (the back end's -UMSI_ENOTSUP, which umsi_pci_alloc_irq_vectors()
 * answers as no INTx, -UMSI_ENOENT) with a log line naming the GSI, and
 * nothing left: no memory, no IRQ, the input not programmed.
 */
static inline void fx_line_refused(struct machine *m, struct umsi_pci_dev *dev,
				   uint32_t gsi)
{
	struct umsi_sim_leaks l0, l1;
	struct umsi_irq_info info;
	struct umsi_sim_rte r;
	char why[64];

	snprintf(why, sizeof(why), "GSI %u is an input of no IO-APIC", gsi);
	umsi_sim_log_clear(m->sim);
	umsi_sim_leaks(m->sim, &l0);
	assert_int_equal(umsi_pci_alloc_irq_vectors(dev, 1, 1,
						    UMSI_PCI_IRQ_INTX),
			 -UMSI_ENOENT);
	umsi_sim_leaks(m->sim, &l1);
	assert_true(umsi_sim_leaks_equal(&l0, &l1));
	assert_non_null(strstr(umsi_sim_log_text(m->sim), why));
	assert_int_equal(umsi_sim_ioapic_get(m->sim, gsi, &r), 0);
	assert_false(r.programmed);
	assert_int_equal(umsi_irq_get_info(m->sys, gsi, &info), -UMSI_ENOENT);
}

/* ---- back-end creation -------------------------------------------------------- */

/*
 * umsi_system_create() of @cfg on @sim fails with @err, leaves nothing
 * behind (leak accounting as before) and logs a line holding @why.
 */
static inline void fx_refused(struct umsi_sim *sim,
			      const struct umsi_config *cfg, int err,
			      const char *why)
{
	struct umsi_sim_leaks l0, l1;
	struct umsi_system *sys = NULL;

	umsi_sim_log_clear(sim);
	umsi_sim_leaks(sim, &l0);
	assert_int_equal(umsi_system_create(umsi_sim_host_ops(), sim, cfg,
					    &sys), err);
	assert_null(sys);
	umsi_sim_leaks(sim, &l1);
	assert_true(umsi_sim_leaks_equal(&l0, &l1));
	if (!strstr(umsi_sim_log_text(sim), why))
		fail_msg("no log line with \"%s\" in:\n%s", why,
			 umsi_sim_log_text(sim));
}

/*
 * Each of the first @n fallible host calls of a creation of @cfg failed
 * in turn: the creation fails with that error and leaves nothing (leaks
 * as @l0); @after (may be NULL) checks the hardware each time.
 */
static inline void fx_fail_each_create(struct umsi_sim *sim,
				       const struct umsi_config *cfg,
				       const struct umsi_sim_leaks *l0,
				       uint64_t n,
				       void (*after)(struct umsi_sim *sim))
{
	struct umsi_sim_leaks l1;
	struct umsi_system *sys;
	uint64_t k;

	for (k = 1; k <= n; k++) {
		umsi_sim_fail_at(sim, k, -UMSI_ENOMEM);
		assert_int_equal(umsi_system_create(umsi_sim_host_ops(), sim,
						    cfg, &sys), -UMSI_ENOMEM);
		umsi_sim_leaks(sim, &l1);
		assert_true(umsi_sim_leaks_equal(l0, &l1));
		if (after)
			after(sim);
	}
	umsi_sim_fail_at(sim, 0, 0);
}

/*
 * A machine of @n remapping units: creation with @cfg on @sim turns each
 * on (at @base + i * @stride, register @reg has every @on bit), says
 * "@pre0xBASE, @post" for each, maps each once and takes @allocs
 * phys_alloc blocks; destroy gives everything back and @off (the units
 * are off) holds; every host call of a creation failed in turn leaves
 * nothing and @off holding too.
 */
static inline void fx_units_create_each(struct umsi_sim *sim,
					const struct umsi_config *cfg,
					uint64_t base, uint64_t stride,
					uint32_t n, uint32_t reg, uint32_t on,
					const char *pre, const char *post,
					uint64_t allocs,
					void (*off)(struct umsi_sim *sim))
{
	struct umsi_sim_leaks l0, l1;
	struct umsi_system *sys;
	struct umsi_sim_stats st;

	umsi_sim_leaks(sim, &l0);
	umsi_sim_stats_reset(sim);
	assert_int_equal(umsi_system_create(umsi_sim_host_ops(), sim, cfg,
					    &sys), 0);
	umsi_sim_stats(sim, &st);
	for (uint32_t i = 0; i < n; i++) {
		char line[96];

		assert_int_equal(umsi_sim_mmio_read32(sim, base + i * stride +
						      reg) & on, on);
		snprintf(line, sizeof(line), "%s0x%llx, %s", pre,
			 (unsigned long long)(base + i * stride), post);
		assert_non_null(strstr(umsi_sim_log_text(sim), line));
	}
	assert_int_equal(st.op_calls[UMSI_SIM_OP_PHYS_ALLOC], allocs);
	assert_int_equal(st.op_calls[UMSI_SIM_OP_MMIO_MAP], n);
	umsi_system_destroy(sys);
	umsi_sim_leaks(sim, &l1);
	assert_true(umsi_sim_leaks_equal(&l0, &l1));
	off(sim);
	fx_fail_each_create(sim, cfg, &l0, st.fallible_calls, off);
	umsi_sim_stats(sim, &st);
	assert_int_equal(st.bad_accesses, 0);
}

/* ---- observation ------------------------------------------------------------ */

static inline struct umsi_sim_dev_stats dstats(struct machine *m, umsi_bdf_t bdf)
{
	struct umsi_sim_dev_stats s;

	assert_int_equal(umsi_sim_dev_stats(m->sim, bdf, &s), 0);
	return s;
}

static inline struct umsi_sim_stats sstats(struct machine *m)
{
	struct umsi_sim_stats s;

	umsi_sim_stats(m->sim, &s);
	return s;
}

/* Everything a failed or finished call must have given back. */
struct snapshot {
	struct umsi_sim_leaks leaks;
	struct umsi_matrix_stats mx;
	struct umsi_matrix_cpu_stats cpu[8];
	uint32_t irte;
	int live_irqs;
};

static inline int count_irqs(struct umsi_system *sys)
{
	int n = 0, irq = 0;

	while ((irq = umsi_irq_next(sys, (uint32_t)irq)) >= 0) {
		n++;
		irq++;
	}
	return n;
}

static inline struct snapshot snap(struct machine *m)
{
	struct snapshot s;
	uint32_t c;

	memset(&s, 0, sizeof(s));
	umsi_sim_leaks(m->sim, &s.leaks);
	umsi_matrix_stats(umsi_system_matrix(m->sys), &s.mx);
	for (c = 0; c < 8 && c < umsi_sim_ncpus(m->sim); c++)
		umsi_matrix_cpu_stats(umsi_system_matrix(m->sys), c, &s.cpu[c]);
	s.irte = umsi_sim_irte_used(m->sim);
	s.live_irqs = count_irqs(m->sys);
	assert_int_equal(umsi_matrix_check(umsi_system_matrix(m->sys)), 0);
	return s;
}

static inline void assert_same(const struct snapshot *a,
				const struct snapshot *b)
{
	assert_true(umsi_sim_leaks_equal(&a->leaks, &b->leaks));
	assert_memory_equal(&a->mx, &b->mx, sizeof(a->mx));
	assert_memory_equal(a->cpu, b->cpu, sizeof(a->cpu));
	assert_int_equal(a->irte, b->irte);
	assert_int_equal(a->live_irqs, b->live_irqs);
}

static inline uint16_t cfg16(struct machine *m, umsi_bdf_t bdf, uint16_t off)
{
	return (uint16_t)umsi_sim_cfg_read(m->sim, bdf, off, 2);
}

/* The MSI or MSI-X capability offset as the sim placed it. */
static inline uint16_t find_cap(struct machine *m, umsi_bdf_t bdf, uint8_t id)
{
	uint16_t p = (uint16_t)umsi_sim_cfg_read(m->sim, bdf, 0x34, 1);
	int n = 0;

	while (p && n++ < 48) {
		if (umsi_sim_cfg_read(m->sim, bdf, p, 1) == id)
			return p;
		p = (uint16_t)umsi_sim_cfg_read(m->sim, bdf, p + 1, 1);
	}
	return 0;
}

static inline bool msix_enabled(struct machine *m, umsi_bdf_t bdf)
{
	uint16_t c = find_cap(m, bdf, UMSI_PCI_CAP_ID_MSIX);

	return c && (cfg16(m, bdf, c + 2) & UMSI_MSIX_FLAGS_ENABLE);
}

static inline bool msi_enabled(struct machine *m, umsi_bdf_t bdf)
{
	uint16_t c = find_cap(m, bdf, UMSI_PCI_CAP_ID_MSI);

	return c && (cfg16(m, bdf, c + 2) & UMSI_MSI_FLAGS_ENABLE);
}

#endif /* PCI_FIXTURE_H */
