/* SPDX-License-Identifier: MIT */
/*
 * bench_bringup - what bringing up V IRQs costs: V allocations of one IRQ
 * each (IRQ number, descriptor, vector on the best CPU, publication), then
 * their release, on a machine of N CPUs; and the memory they take.
 *
 *   build/bench/bench_bringup NCPUS V
 *
 * prints the wall time per IRQ of each phase. `make bench-bringup` runs it
 * for V = 10^3 .. 10^6 on 8192 CPUs, and under callgrind (only
 * bench_step_up counted) for instructions per IRQ.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_host.h"

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* The measured step: V allocations, one IRQ each. */
__attribute__((noinline))
int bench_step_up(struct umsi_system *sys, struct umsi_irq_desc **d,
		  unsigned long v)
{
	unsigned long i;

	/* What a PCI set-up asks of the core: allocate, publish, activate. */
	for (i = 0; i < v; i++) {
		if (umsi_irq_alloc(sys, &chip, 1, false, NULL, false, &d[i]))
			return -1;
		umsi_irq_publish(sys, &d[i], 1);
		if (umsi_irq_activate(sys, &d[i], 1))
			return -1;
	}
	return 0;
}

__attribute__((noinline))
void bench_step_down(struct umsi_system *sys, struct umsi_irq_desc **d,
		     unsigned long v)
{
	unsigned long i, n;

	/* As a driver's free does: a device's IRQs in one call. */
	for (i = 0; i < v; i += n) {
		n = v - i < 64 ? v - i : 64;
		umsi_irq_release(sys, &d[i], (uint32_t)n);
	}
}

int main(int argc, char **argv)
{
	struct umsi_config cfg = { 0 };
	struct umsi_system *sys;
	struct umsi_irq_desc **d;
	unsigned long v;
	size_t base;
	double t0, t1, t2;

	ncpus = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 0) : 8192;
	v = argc > 2 ? strtoul(argv[2], NULL, 0) : 100000;
	cfg.max_irqs = (uint32_t)(v + 1024);
	d = calloc(v, sizeof(*d));
	if (!d || umsi_system_create(&ops, NULL, &cfg, &sys))
		return 1;
	base = bytes;
	t0 = now();
	if (bench_step_up(sys, d, v)) {
		fprintf(stderr, "bench_bringup: allocation failed\n");
		return 1;
	}
	t1 = now();
	printf("bringup: %u CPUs, %lu IRQs: up %.0f ns per IRQ, %.1f bytes "
	       "per IRQ; ", ncpus, v, (t1 - t0) * 1e9 / v,
	       (double)(bytes - base) / v);
	bench_step_down(sys, d, v);
	t2 = now();
	printf("down %.0f ns per IRQ; system %zu bytes\n",
	       (t2 - t1) * 1e9 / v, base);
	umsi_system_destroy(sys);
	free(d);
	return bytes ? 1 : 0;
}
