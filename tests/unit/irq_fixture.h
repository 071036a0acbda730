/* SPDX-License-Identifier: MIT */
/*
 * A tiny interrupt source for IRQ-core tests (test_irq.c,
 * test_irq_regress.c): a message register pair with an optional mask bit
 * and pending bit, driven through the core's chip interface, and a
 * simulated machine to run it on. Each chip step makes a host call (a
 * barrier), so a hook that fires the device after every host access also
 * fires it between the chip's writes.
 */
#ifndef UMSI_TEST_IRQ_FIXTURE_H
#define UMSI_TEST_IRQ_FIXTURE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <umsi/internal/core.h>
#include <umsi/pci.h>
#include "sim/umsi_sim.h"
#include "ctl_fixture.h"

/* ---- a tiny device -------------------------------------------------------- */

struct tdev {
	struct umsi_system *sys;
	struct umsi_sim *sim;
	struct umsi_irq_desc *d;
	bool maskable;
	bool masked;
	bool pending;
	struct umsi_msg msg;
	uint32_t rid;           /* its requester on the ITS (fx_tdev_rid) */
	/* Test bookkeeping. */
	unsigned outstanding;
	uint64_t fired, handled;
	uint32_t allowed[2];    /* CPUs the handler may run on */
	uint64_t wrong_cpu;
	int answer;             /* what the handler returns */
};

/* On the ITS a message translates by its writer's DeviceID: a tdev
 * writes as requester 0x8000 | its IRQ number (no PCI device has it). */
static inline uint32_t fx_tdev_rid(const struct umsi_irq_desc *d)
{
	return 0x8000u | (d->irq & 0x7fffu);
}

/* Before the IRQ is programmed: name the tdev's requester (ITS only). */
static inline void tdev_set_rid(struct tdev *t)
{
	/* The ITS and AMD-Vi find a message's table by its requester. */
	if (fx_its() || fx_amdvi()) {
		t->rid = fx_tdev_rid(t->d);
		t->d->source_id = t->rid;
	}
}

static inline void send(struct tdev *t)
{
	if (fx_its() || fx_amdvi())
		umsi_sim_msg_write_from(t->sim, t->rid, t->msg.address,
					t->msg.data);
	else
		umsi_sim_msg_write(t->sim, t->msg.address, t->msg.data);
}

static inline void tdev_fire(struct tdev *t)
{
	if (t->outstanding)
		return;
	t->outstanding = 1;
	t->fired++;
	if (t->maskable && t->masked)
		t->pending = true;
	else
		send(t);
}

static inline void step(struct umsi_system *sys)
{
	sys->env.ops->clock_ns(sys->env.host);
}

static inline struct tdev *to_tdev(struct umsi_irq_desc *d)
{
	return d->chip_data;
}

static inline int t_mask(struct umsi_system *sys, struct umsi_irq_desc *d)
{
	to_tdev(d)->masked = true;
	step(sys);
	return 0;
}

static inline int t_unmask(struct umsi_system *sys, struct umsi_irq_desc *d)
{
	struct tdev *t = to_tdev(d);

	t->masked = false;
	step(sys);
	if (t->pending) {
		t->pending = false;
		send(t);
	}
	return 0;
}

/* Maskable: mask, write address, write data, restore the mask. */
static inline int t_set_target_masked(struct umsi_system *sys,
		struct umsi_irq_desc *d, const struct umsi_msg *msg)
{
	struct tdev *t = to_tdev(d);
	struct umsi_msg m = *msg;
	bool was = t->masked;
	t_mask(sys, d);
	t->msg.address = m.address;
	step(sys);
	t->msg.data = m.data;
	step(sys);
	if (!was)
		t_unmask(sys, d);
	return 0;
}

/* Unmaskable: data first, then address, a host call between them. */
static inline int t_set_target_unmasked(struct umsi_system *sys,
		struct umsi_irq_desc *d, const struct umsi_msg *msg)
{
	struct tdev *t = to_tdev(d);
	struct umsi_msg m = *msg;
	t->msg.data = m.data;
	step(sys);
	t->msg.address = m.address;
	step(sys);
	return 0;
}

static const struct umsi_irq_chip chip_masked = {
	.name = "TEST-MASK", .mask = t_mask, .unmask = t_unmask,
	.write_msg = t_set_target_masked,
};
static const struct umsi_irq_chip chip_unmasked = {
	.name = "TEST-NOMASK", .write_msg = t_set_target_unmasked,
};

static inline int t_handler(uint32_t irq, void *arg)
{
	struct tdev *t = arg;
	uint32_t cpu = t->sys->env.ops->current_cpu(t->sys->env.host);

	(void)irq;
	if (cpu != t->allowed[0] && cpu != t->allowed[1])
		t->wrong_cpu++;
	t->handled++;
	t->outstanding = 0;
	return t->answer;
}

/* ---- a machine ------------------------------------------------------------ */

struct machine {
	struct umsi_sim *sim;
	struct umsi_system *sys;
	struct umsi_sim_leaks leaks0;
};

static inline int sim_dispatch(void *arg, uint32_t cpu, uint8_t vector)
{
	return umsi_dispatch(arg, cpu, vector);
}

/* @nofile: on the IMSIC, CPUs (bits 0-63) whose harts are configured
 * without an interrupt file (never a target); ignored on x86. */
static inline void machine_up_nofile(struct machine *m, uint32_t ncpus,
		       const uint32_t *apic_ids, uint32_t plat, uint64_t nofile)
{
	struct umsi_sim_config cfg = {
		.ncpus = ncpus, .apic_ids = apic_ids, .plat_flags = plat,
	};

	/* The controller UMSI_TEST_CTL names (ctl_fixture.h); on the IMSIC
	 * @apic_ids are the harts' IDs. */
	fx_sim_config(&cfg);
	m->sim = umsi_sim_create(&cfg);
	assert_non_null(m->sim);
	umsi_sim_leaks(m->sim, &m->leaks0);
	assert_int_equal(fx_system_create_nofile(umsi_sim_host_ops(), m->sim,
						 NULL, nofile, &m->sys), 0);
	fx_set_dispatch(m->sim, m->sys);
}

static inline void machine_up(struct machine *m, uint32_t ncpus,
		       const uint32_t *apic_ids, uint32_t plat)
{
	machine_up_nofile(m, ncpus, apic_ids, plat, 0);
}

static inline void machine_down(struct machine *m)
{
	struct umsi_sim_leaks l;

	struct umsi_sim_stats st;

	umsi_sim_stats(m->sim, &st);
	/* No host operation was called where umsi/host.h says it is not. */
	assert_int_equal(st.lock_errors, 0);
	umsi_system_destroy(m->sys);
	umsi_sim_leaks(m->sim, &l);
	/* Everything the library took from the host went back. */
	assert_int_equal(l.allocs, m->leaks0.allocs);
	assert_int_equal(l.maps, m->leaks0.maps);
	assert_int_equal(l.locks, m->leaks0.locks);
	umsi_sim_destroy(m->sim);
}

/* Attach a device with one IRQ (managed or not) and a handler. */
static inline void tdev_attach_ex(struct machine *m, struct tdev *t,
				  const struct umsi_irq_chip *chip,
				  const struct umsi_cpumask *aff, bool managed)
{
	memset(t, 0, sizeof(*t));
	t->sys = m->sys;
	t->sim = m->sim;
	t->maskable = chip->mask != NULL;
	t->masked = true;
	t->answer = UMSI_IRQ_HANDLED;
	assert_int_equal(umsi_irq_alloc(m->sys, chip, 1, false, aff, managed,
					&t->d), 0);
	t->d->chip_data = t;
	tdev_set_rid(t);
	umsi_irq_publish(m->sys, &t->d, 1);
	assert_int_equal(umsi_irq_program(m->sys, t->d), 0);
	assert_int_equal(umsi_irq_activate(m->sys, &t->d, 1), 0);
	t->allowed[0] = t->allowed[1] = t->d->cpu;
	assert_int_equal(umsi_request_irq(m->sys, t->d->irq, t_handler, 0,
					  "tdev", t), 0);
}

static inline void tdev_attach(struct machine *m, struct tdev *t,
			       const struct umsi_irq_chip *chip,
			       const struct umsi_cpumask *aff)
{
	tdev_attach_ex(m, t, chip, aff, false);
}

/* A simulator hook that fires the device after every host access. */
struct fire_hook {
	struct tdev *t;
	bool busy;
	uint64_t injected;
};

static inline void fire_after_access(void *arg, enum umsi_sim_op op)
{
	struct fire_hook *h = arg;

	(void)op;
	if (h->busy || !h->t)
		return;
	h->busy = true;
	if (!h->t->outstanding)
		h->injected++;
	tdev_fire(h->t);
	h->busy = false;
}

static inline void tdev_detach(struct machine *m, struct tdev *t)
{
	assert_int_equal(umsi_free_irq(m->sys, t->d->irq, t), 0);
	umsi_irq_release(m->sys, &t->d, 1);
}

#endif /* UMSI_TEST_IRQ_FIXTURE_H */
