/* SPDX-License-Identifier: MIT */
/*
 * Migration in the threaded simulator: every CPU is a thread that takes its
 * own interrupts, a device thread fires whenever its previous interrupt has
 * been handled, and the main thread moves the IRQ between CPUs thousands of
 * times. Run under ThreadSanitizer (make tsan-irq) it also proves the
 * dispatch path and the migration path are free of data races.
 */
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <umsi/internal/core.h>
#include "sim/umsi_sim.h"

/* A device with one message, a mask bit and a pending bit. */
struct tdev {
	pthread_mutex_t lock;   /* the device serialises its own state */
	struct umsi_sim *sim;
	uint64_t address;
	uint32_t data;
	bool masked, pending;
	atomic_bool outstanding;
	atomic_ulong fired, handled;
	atomic_bool stop;
};

static void send_locked(struct tdev *t)
{
	umsi_sim_msg_write(t->sim, t->address, t->data);
}

static void fire(struct tdev *t)
{
	bool expect = false;

	if (!atomic_compare_exchange_strong(&t->outstanding, &expect, true))
		return;
	atomic_fetch_add(&t->fired, 1);
	pthread_mutex_lock(&t->lock);
	if (t->masked)
		t->pending = true;
	else
		send_locked(t);
	pthread_mutex_unlock(&t->lock);
}

static int t_mask(struct umsi_system *sys, struct umsi_irq_desc *d)
{
	struct tdev *t = d->chip_data;

	(void)sys;
	pthread_mutex_lock(&t->lock);
	t->masked = true;
	pthread_mutex_unlock(&t->lock);
	return 0;
}

static int t_unmask(struct umsi_system *sys, struct umsi_irq_desc *d)
{
	struct tdev *t = d->chip_data;

	(void)sys;
	pthread_mutex_lock(&t->lock);
	t->masked = false;
	if (t->pending) {
		t->pending = false;
		send_locked(t);
	}
	pthread_mutex_unlock(&t->lock);
	return 0;
}

static int t_write_msg(struct umsi_system *sys, struct umsi_irq_desc *d,
		       const struct umsi_msg *msg)
{
	struct tdev *t = d->chip_data;
	struct umsi_msg m = *msg;
	bool was;

	pthread_mutex_lock(&t->lock);
	was = t->masked;
	t->masked = true;
	t->address = m.address;
	t->data = m.data;
	pthread_mutex_unlock(&t->lock);
	if (!was)
		t_unmask(sys, d);
	return 0;
}

static const struct umsi_irq_chip chip = {
	.name = "TEST-MASK", .mask = t_mask, .unmask = t_unmask,
	.write_msg = t_write_msg,
};

static int handler(uint32_t irq, void *arg)
{
	struct tdev *t = arg;

	(void)irq;
	atomic_fetch_add(&t->handled, 1);
	atomic_store(&t->outstanding, false);
	return UMSI_IRQ_HANDLED;
}

static void *device_thread(void *arg)
{
	struct tdev *t = arg;

	while (!atomic_load(&t->stop))
		fire(t);
	return NULL;
}

static int sim_dispatch(void *arg, uint32_t cpu, uint8_t vector)
{
	return umsi_dispatch(arg, cpu, vector);
}

static void moves_while_cpu_threads_take_interrupts_lose_nothing(void **s)
{
	static const uint32_t ids[] = { 0, 2, 4, 6 };
	struct umsi_sim_config cfg = { .ncpus = 4, .apic_ids = ids,
				       .threaded = true };
	struct umsi_sim *sim = umsi_sim_create(&cfg);
	struct umsi_system *sys;
	struct umsi_irq_desc *d;
	struct tdev t;
	pthread_t dev;
	unsigned i, moves = getenv("MOVES") ? (unsigned)atoi(getenv("MOVES"))
					    : 10000;
	uint64_t w;
	struct umsi_cpumask mask = { &w, 4 };

	(void)s;
	assert_non_null(sim);
	assert_int_equal(umsi_system_create(umsi_sim_host_ops(), sim, NULL,
					    &sys), 0);
	umsi_sim_set_dispatch(sim, sim_dispatch, sys);
	memset(&t, 0, sizeof(t));
	pthread_mutex_init(&t.lock, NULL);
	t.sim = sim;
	t.masked = true;
	assert_int_equal(umsi_irq_alloc(sys, &chip, 1, false, NULL, false, &d),
			 0);
	d->chip_data = &t;
	umsi_irq_publish(sys, &d, 1);
	assert_int_equal(umsi_irq_program(sys, d), 0);
	assert_int_equal(umsi_irq_activate(sys, &d, 1), 0);
	assert_int_equal(umsi_request_irq(sys, d->irq, handler, 0, "t", &t), 0);
	pthread_create(&dev, NULL, device_thread, &t);
	for (i = 0; i < moves; i++) {
		uint32_t to = (d->cpu + 1 + i % 3) % 4;

		unsigned long before = atomic_load(&t.handled);
		unsigned spin = 0;

		w = 1ull << to;
		assert_int_equal(umsi_irq_set_affinity(sys, d->irq, &mask), 0);
		/* Let at least one interrupt complete between moves. */
		while (atomic_load(&t.handled) == before && spin++ < 10000000)
			sched_yield();
		assert_true(atomic_load(&t.handled) != before);
	}
	atomic_store(&t.stop, true);
	pthread_join(dev, NULL);
	umsi_sim_quiesce(sim);
	print_message("    %u moves, %lu fired, %lu handled\n", moves,
		      atomic_load(&t.fired), atomic_load(&t.handled));
	assert_int_equal(atomic_load(&t.fired), atomic_load(&t.handled));
	assert_true(atomic_load(&t.fired) > moves);
	assert_int_equal(umsi_free_irq(sys, d->irq, &t), 0);
	umsi_irq_release(sys, &d, 1);
	assert_int_equal(umsi_matrix_check(umsi_system_matrix(sys)), 0);
	umsi_system_destroy(sys);
	umsi_sim_destroy(sim);
	pthread_mutex_destroy(&t.lock);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(moves_while_cpu_threads_take_interrupts_lose_nothing),
	};

	return cmocka_run_group_tests_name("irq threaded", tests, NULL, NULL);
}
