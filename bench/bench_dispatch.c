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

#include <umsi/internal/core.h>

static uint32_t ncpus = 64;

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
	.name = "BENCH", .set_target = noop_target,
};

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
