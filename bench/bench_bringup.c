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

#include <umsi/internal/core.h>

static uint32_t ncpus = 8192;

static int h_cfg_read(void *h, umsi_bdf_t b, uint16_t o, uint8_t w,
		      uint32_t *v)
{
	(void)h; (void)b; (void)o; (void)w;
	*v = 0xffffffffu;
	return 0;
}
static int h_cfg_write(void *h, umsi_bdf_t b, uint16_t o, uint8_t w,
		       uint32_t v)
{
	(void)h; (void)b; (void)o; (void)w; (void)v;
	return 0;
}
static int h_map(void *h, uint64_t p, uint64_t l, void **v)
{
	(void)h; (void)p; (void)l; (void)v;
	return -UMSI_ENOMEM;
}
static void h_unmap(void *h, void *v, uint64_t l) { (void)h; (void)v; (void)l; }
static uint32_t h_rd(void *h, volatile void *a) { (void)h; (void)a; return 0; }
static void h_wr(void *h, volatile void *a, uint32_t v) { (void)h; (void)a; (void)v; }
static void h_barrier(void *h) { (void)h; }
static void *h_lock_create(void *h) { (void)h; return malloc(1); }
static void h_lock_destroy(void *h, void *l) { (void)h; free(l); }
static umsi_irqflags_t h_lock(void *h, void *l) { (void)h; (void)l; return 0; }
static void h_unlock(void *h, void *l, umsi_irqflags_t f) { (void)h; (void)l; (void)f; }
static size_t bytes;
static void *h_alloc(void *h, size_t s) { (void)h; bytes += s; return calloc(1, s); }
static void h_free(void *h, void *p, size_t s) { (void)h; bytes -= s; free(p); }
static uint64_t h_clock(void *h) { (void)h; return 1; }
static uint32_t h_cur(void *h) { (void)h; return 0; }
static uint32_t h_count(void *h) { (void)h; return ncpus; }
static int h_apic(void *h, uint32_t c, uint32_t *id) { (void)h; *id = c; return 0; }
static bool h_online(void *h, uint32_t c) { (void)h; (void)c; return true; }
static uint32_t h_plat(void *h) { (void)h; return UMSI_PLAT_EXT_DEST_ID; }
static uint64_t eois;
static void h_eoi(void *h, uint8_t v) { (void)h; (void)v; eois++; }
static int h_run(void *h, uint32_t c, void (*fn)(void *), void *a) { (void)h; (void)c; fn(a); return 0; }
static bool h_pending(void *h, uint8_t v) { (void)h; (void)v; return false; }
static int h_retrigger(void *h, uint32_t c, uint8_t v) { (void)h; (void)c; (void)v; return 0; }

static const struct umsi_host_ops ops = {
	.cfg_read = h_cfg_read, .cfg_write = h_cfg_write,
	.mmio_map = h_map, .mmio_unmap = h_unmap,
	.mmio_read32 = h_rd, .mmio_write32 = h_wr, .barrier = h_barrier,
	.lock_create = h_lock_create, .lock_destroy = h_lock_destroy,
	.lock_acquire = h_lock, .lock_release = h_unlock,
	.alloc = h_alloc, .free = h_free, .clock_ns = h_clock,
	.current_cpu = h_cur, .cpu_count = h_count, .cpu_apic_id = h_apic,
	.cpu_online = h_online, .platform_flags = h_plat, .eoi = h_eoi,
	.run_on_cpu = h_run, .vector_pending = h_pending,
	.retrigger = h_retrigger,
};

static int noop_target(struct umsi_system *s, struct umsi_irq_desc *d,
		       uint32_t c, uint8_t v)
{
	(void)s; (void)d; (void)c; (void)v;
	return 0;
}

static const struct umsi_irq_chip chip = {
	.name = "BENCH", .mask = NULL, .set_target = noop_target,
};

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

	for (i = 0; i < v; i++)
		if (umsi_irq_alloc(sys, &chip, 1, false, NULL, false, &d[i]))
			return -1;
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

	if (argc > 1)
		ncpus = (uint32_t)strtoul(argv[1], NULL, 0);
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
