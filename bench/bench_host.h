/* SPDX-License-Identifier: MIT */
/*
 * bench_host.h - the minimal host of the IRQ-core benchmarks: no
 * simulator bookkeeping, so the figures are the library's. Locks are
 * no-ops, memory is calloc (counted in `bytes`), the host's eoi a
 * counter, cross-calls
 * direct calls. APIC IDs are the CPU numbers, with the extended
 * destination ID. Set `ncpus` before umsi_system_create().
 */
#ifndef BENCH_HOST_H
#define BENCH_HOST_H

#include <stdlib.h>

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
static int h_hwid(void *h, uint32_t c, uint32_t *id) { (void)h; *id = c; return 0; }
static bool h_online(void *h, uint32_t c) { (void)h; (void)c; return true; }
static uint32_t h_plat(void *h) { (void)h; return UMSI_PLAT_EXT_DEST_ID; }
static uint64_t eois;
static bool h_pending(void *h, uint32_t id) { (void)h; (void)id; return false; }
static void h_eoi(void *h, uint32_t id) { (void)h; (void)id; eois++; }
static void h_ipi(void *h, uint32_t hwid, uint32_t id) { (void)h; (void)hwid; (void)id; }
static int h_run(void *h, uint32_t c, void (*fn)(void *), void *a) { (void)h; (void)c; fn(a); return 0; }

static const struct umsi_host_ops ops = {
	.cfg_read = h_cfg_read, .cfg_write = h_cfg_write,
	.mmio_map = h_map, .mmio_unmap = h_unmap,
	.mmio_read32 = h_rd, .mmio_write32 = h_wr,
	.lock_create = h_lock_create, .lock_destroy = h_lock_destroy,
	.lock_acquire = h_lock, .lock_release = h_unlock,
	.alloc = h_alloc, .free = h_free, .clock_ns = h_clock,
	.current_cpu = h_cur, .cpu_count = h_count, .cpu_hwid = h_hwid,
	.cpu_is_online = h_online, .platform_flags = h_plat,
	.run_on_cpu = h_run, .eoi = h_eoi, .irq_pending = h_pending,
	.send_ipi = h_ipi,
};

static int noop_write(struct umsi_system *s, struct umsi_irq_desc *d,
		      const struct umsi_msg *m)
{
	(void)s; (void)d; (void)m;
	return 0;
}

static const struct umsi_irq_chip chip = {
	.name = "BENCH", .write_msg = noop_write,
};

#endif /* BENCH_HOST_H */
