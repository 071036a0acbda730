/* SPDX-License-Identifier: MIT */
/*
 * bench_dispatch - the cost of one interrupt from umsi_dispatch() to the
 * driver's handler and back, and the memory uMSI needs per CPU and per IRQ.
 *
 * Uses a minimal host of its own (no simulator bookkeeping) so the figures
 * are the library's. Run under callgrind for instructions:
 *   make bench-dispatch
 * which runs
 *   valgrind --tool=callgrind --toggle-collect=umsi_dispatch \
 *            build/bench/bench_dispatch
 * and divides the instructions collected by the dispatches made.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_host.h"

static uint64_t handled;

static int handler(uint32_t irq, void *arg)
{
	(void)irq; (void)arg;
	handled++;
	return UMSI_IRQ_HANDLED;
}

int main(int argc, char **argv)
{
	struct umsi_system *sys;
	struct umsi_irq_desc *d;
	size_t base, after_irq;
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 0) : 1000000;

	if (argc > 2)
		ncpus = (uint32_t)strtoul(argv[2], NULL, 0);
	struct timespec t0, t1;
	unsigned long i;

	if (umsi_system_create(&ops, NULL, NULL, &sys))
		return 1;
	base = bytes;
	if (umsi_irq_alloc(sys, &chip, 1, false, NULL, false, &d))
		return 1;
	umsi_irq_publish(sys, &d, 1);
	if (umsi_irq_activate(sys, &d, 1))
		return 1;
	after_irq = bytes;
	if (umsi_request_irq(sys, d->irq, handler, 0, "bench", NULL))
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < n; i++)
		umsi_dispatch(sys, d->cpu, d->vector);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("dispatch: %lu interrupts, %lu handled, %.1f ns each (wall; "
	       "use make bench-dispatch for instructions)\n", n,
	       (unsigned long)handled,
	       ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) /
	       (double)n);
	printf("memory: system with %u CPUs: %zu bytes (%zu per CPU incl. "
	       "vector table and allocator); one IRQ: %zu bytes (+%zu per "
	       "handler)\n", ncpus, base, base / ncpus, after_irq - base,
	       sizeof(struct umsi_irq_action));
	umsi_free_irq(sys, d->irq, NULL);
	umsi_irq_release(sys, &d, 1);
	umsi_system_destroy(sys);
	return 0;
}
