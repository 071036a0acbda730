/* SPDX-License-Identifier: MIT */
/*
 * A controller back end with a global identity space (as a GICv3 ITS's
 * LPIs are): identities unique across CPUs, interrupts moved by a command
 * to the controller while the device's message stays. A toy back end on a
 * minimal host shows the core serves it without knowing it: allocation
 * balanced over CPUs, global identities unique and dense (the lowest
 * free, whatever the CPU), dispatch by the global identity from any CPU,
 * moves through retarget with the identity kept (the chip never rewrites
 * the message), the old CPU asked until it holds no copy pending, and a
 * global space without a retarget operation refused at creation.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <umsi/internal/core.h>
#include <umsi/internal/idmap.h>

#define NCPU 4
#define NVEC 64

/* ---- a minimal host --------------------------------------------------- */

static uint32_t cur_cpu;
static unsigned eois;

static int h_cfg_read(void *h, umsi_bdf_t b, uint16_t o, uint8_t w, uint32_t *v)
{
	(void)h; (void)b; (void)o; (void)w;
	*v = 0xffffffffu;
	return 0;
}
static int h_cfg_write(void *h, umsi_bdf_t b, uint16_t o, uint8_t w, uint32_t v)
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
static void *h_lock_create(void *h) { (void)h; return malloc(1); }
static void h_lock_destroy(void *h, void *l) { (void)h; free(l); }
static umsi_irqflags_t h_lock(void *h, void *l) { (void)h; (void)l; return 0; }
static void h_unlock(void *h, void *l, umsi_irqflags_t f) { (void)h; (void)l; (void)f; }
static void *h_alloc(void *h, size_t s) { (void)h; return malloc(s); }
static void h_free(void *h, void *p, size_t s) { (void)h; (void)s; free(p); }
static uint64_t h_clock(void *h) { (void)h; return 1; }
static uint32_t h_cur(void *h) { (void)h; return cur_cpu; }
static uint32_t h_count(void *h) { (void)h; return NCPU; }
static int h_hwid(void *h, uint32_t c, uint32_t *id) { (void)h; *id = 0x100 + c; return 0; }
static bool h_online(void *h, uint32_t c) { (void)h; (void)c; return true; }
static uint32_t h_plat(void *h) { (void)h; return 0; }
static bool h_pending(void *h, uint32_t id) { (void)h; (void)id; return false; }
static void h_eoi(void *h, uint32_t id)
{
	(void)h;
	(void)id;
	eois++;
}
static int h_run(void *h, uint32_t c, void (*fn)(void *), void *a)
{
	uint32_t was = cur_cpu;

	(void)h;
	cur_cpu = c;
	fn(a);
	cur_cpu = was;
	return 0;
}

static const struct umsi_host_ops ops = {
	.cfg_read = h_cfg_read, .cfg_write = h_cfg_write,
	.mmio_map = h_map, .mmio_unmap = h_unmap,
	.lock_create = h_lock_create, .lock_destroy = h_lock_destroy,
	.lock_acquire = h_lock, .lock_release = h_unlock,
	.alloc = h_alloc, .free = h_free, .clock_ns = h_clock,
	.current_cpu = h_cur, .cpu_count = h_count, .cpu_hwid = h_hwid,
	.cpu_is_online = h_online, .platform_flags = h_plat,
	.run_on_cpu = h_run, .eoi = h_eoi, .irq_pending = h_pending,
};

/* ---- a back end with a global space ------------------------------------ */

#define LPI_BASE 8192u

/* The controller's table: IRQ -> (CPU, LPI), as an ITS's ITT would be. */
static uint32_t map_cpu[64], map_lpi[64];
static unsigned retargets, composes;

static int g_init(struct umsi_system *sys, uint32_t ncpus,
		  struct umsi_matrix_config *space)
{
	(void)sys;
	umsi_matrix_space_config(space, ncpus, NVEC, 0, NVEC - 1);
	return 0;
}

static int g_cpu_init(struct umsi_system *sys, uint32_t cpu,
		      struct umsi_ctl_cpu *out)
{
	struct umsi_ctl_env *env = umsi_ctl_env(sys);

	out->reachable = out->wired_reachable = true;
	return env->ops->cpu_hwid(env->host, cpu, &out->hwid);
}

/* The message names the device's event, not a CPU: it never changes. */
static int g_compose(struct umsi_system *sys, const struct umsi_ctl_irq *ci,
		     uint32_t cpu, uint32_t id, struct umsi_msg *msg)
{
	uint32_t irq = ci->irq;

	(void)sys;
	composes++;
	/* An ITS would map (DeviceID, EventID) = (source_id, index). */
	assert_int_equal(ci->source_id, 0x0300 + irq % 64);
	assert_int_equal(ci->count, 1);
	map_cpu[irq % 64] = cpu;
	map_lpi[irq % 64] = LPI_BASE + id;
	msg->address = 0x08090040;      /* a translation register */
	msg->data = irq;                /* the event */
	return 0;
}

static int g_retarget(struct umsi_system *sys, const struct umsi_ctl_irq *ci,
		      uint32_t cpu, uint32_t id)
{
	uint32_t irq = ci->irq;

	(void)sys;
	retargets++;
	/* A move keeps the identity (an ITS's MOVI keeps the LPI). */
	assert_int_equal(map_lpi[irq % 64], LPI_BASE + id);
	map_cpu[irq % 64] = cpu;
	return 0;
}

/* How often the old CPU still reports a copy pending; who was asked. */
static unsigned pending_left, pending_asked;
static uint32_t pending_cpu;

static bool g_pending(struct umsi_system *sys, uint32_t id)
{
	(void)sys; (void)id;
	pending_asked++;
	pending_cpu = cur_cpu;
	if (!pending_left)
		return false;
	pending_left--;
	return true;
}

static int g_resend(struct umsi_system *sys, uint32_t cpu, uint32_t id)
{
	(void)sys; (void)cpu; (void)id;
	return 0;
}

static const struct umsi_ctl global_ctl = {
	.name = "toy-global",
	.init = g_init, .cpu_init = g_cpu_init, .compose = g_compose,
	.retarget = g_retarget, .pending = g_pending, .resend = g_resend,
	.eoi = true, .domain = &umsi_ctl_domain_global,
	.spurious_id = 1023,
};

static const struct umsi_ctl global_ctl_no_retarget = {
	.name = "toy-global-broken",
	.init = g_init, .cpu_init = g_cpu_init, .compose = g_compose,
	.pending = g_pending, .resend = g_resend,
	.domain = &umsi_ctl_domain_global,
	.spurious_id = 1023,
};

/* ---- a source ---------------------------------------------------------- */

static unsigned writes, handled[64];

static int t_write(struct umsi_system *s, struct umsi_irq_desc *d,
		   const struct umsi_msg *m)
{
	(void)s; (void)d; (void)m;
	writes++;
	return 0;
}

static int t_mask(struct umsi_system *s, struct umsi_irq_desc *d)
{
	(void)s; (void)d;
	return 0;
}

static const struct umsi_irq_chip chip = {
	.name = "TOY", .mask = t_mask, .unmask = t_mask, .write_msg = t_write,
};

static int handler(uint32_t irq, void *arg)
{
	(void)arg;
	handled[irq % 64]++;
	return UMSI_IRQ_HANDLED;
}

/* The identity the CPU takes: what the kernel passes to dispatch. */
static uint32_t taken(uint32_t irq)
{
	return map_lpi[irq % 64] - LPI_BASE;
}

static void global_space_serves_an_its_like_controller(void **state)
{
	struct umsi_config cfg = { .ctl = &global_ctl };
	struct umsi_irq_desc *d[8];
	struct umsi_system *sys;
	uint64_t w = 1u << 3;
	struct umsi_cpumask to3 = { &w, NCPU };
	unsigned per_cpu[NCPU] = { 0 }, i, j;
	uint32_t old, from;

	(void)state;
	assert_int_equal(umsi_system_create(&ops, NULL, &cfg, &sys), 0);
	assert_int_equal(umsi_irq_alloc(sys, &chip, 8, false, NULL, false, d), 0);
	for (i = 0; i < 8; i++) {
		d[i]->chip_data = &handled[0];
		d[i]->source_id = 0x0300 + d[i]->irq % 64;
	}
	umsi_irq_publish(sys, d, 8);
	for (i = 0; i < 8; i++)
		assert_int_equal(umsi_irq_program(sys, d[i]), 0);
	assert_int_equal(umsi_irq_activate(sys, d, 8), 0);
	for (i = 0; i < 8; i++) {
		assert_int_equal(umsi_request_irq(sys, d[i]->irq, handler, 0,
						  "toy", NULL), 0);
		per_cpu[d[i]->cpu]++;
		/* Unique across CPUs. */
		for (j = 0; j < i; j++)
			assert_int_not_equal(taken(d[i]->irq), taken(d[j]->irq));
	}
	/* Balanced: 8 IRQs over 4 CPUs; identities 0..7, none wasted. */
	for (i = 0; i < NCPU; i++)
		assert_int_equal(per_cpu[i], 2);
	for (i = 0; i < 8; i++)
		assert_int_equal(taken(d[i]->irq), i);
	/* The CPU the controller chose takes the global identity. */
	for (i = 0; i < 8; i++) {
		cur_cpu = map_cpu[d[i]->irq % 64];
		assert_int_equal(umsi_dispatch(sys, cur_cpu, taken(d[i]->irq)), 1);
		assert_int_equal(handled[d[i]->irq % 64], 1);
	}
	assert_int_equal(eois, 8);
	/*
	 * Moving is a command to the controller; the message and the
	 * identity stay. The old CPU is asked (on that CPU) until it holds
	 * no copy pending: twice here.
	 */
	writes = 0;
	old = taken(d[0]->irq);
	from = d[0]->cpu;
	if (d[0]->cpu == 3)
		w = 1u << 2;
	pending_left = 1;
	pending_asked = 0;
	assert_int_equal(umsi_irq_set_affinity(sys, d[0]->irq, &to3), 0);
	assert_int_equal(retargets, 1);
	assert_int_equal(writes, 0);
	assert_int_equal(pending_asked, 2);
	assert_int_equal(pending_cpu, from);
	assert_int_equal(map_cpu[d[0]->irq % 64], d[0]->cpu);
	assert_int_not_equal(d[0]->cpu, from);
	assert_int_equal(old, taken(d[0]->irq));
	cur_cpu = d[0]->cpu;
	assert_int_equal(umsi_dispatch(sys, cur_cpu, taken(d[0]->irq)), 1);
	assert_int_equal(handled[d[0]->irq % 64], 2);
	/* A copy the old CPU took at the instant of the move: handled too. */
	assert_int_equal(umsi_dispatch(sys, from, old), 1);
	assert_int_equal(handled[d[0]->irq % 64], 3);
	/* The CPU's balance moved with it: the old CPU has one IRQ less. */
	{
		struct umsi_matrix_cpu_stats cs;

		assert_int_equal(umsi_matrix_cpu_stats(umsi_system_matrix(sys),
						       from, &cs), 0);
		assert_int_equal(cs.allocated, 1);
		assert_int_equal(umsi_matrix_cpu_stats(umsi_system_matrix(sys),
						       d[0]->cpu, &cs), 0);
		assert_int_equal(cs.allocated, 3);
	}
	/* Beyond the space: refused, nothing counted. */
	assert_int_equal(umsi_dispatch(sys, 0, NCPU * NVEC), 0);
	for (i = 0; i < 8; i++)
		assert_int_equal(umsi_free_irq(sys, d[i]->irq, NULL), 0);
	umsi_irq_release(sys, d, 8);
	umsi_system_destroy(sys);
}

/* The lowest free run of @n at a multiple of @align, by a plain scan. */
static uint32_t naive_run(const bool *used, uint32_t nbits, uint32_t n,
			  uint32_t align)
{
	uint32_t g, k;

	for (g = 0; g + n <= nbits; g += align) {
		for (k = 0; k < n && !used[g + k]; k++)
			;
		if (k == n)
			return g;
	}
	return UINT32_MAX;
}

/*
 * umsi_idmap_take_run(), which hands out global identities and VT-d
 * entries, against a plain scan: random runs (aligned or not, across
 * word boundaries) taken and freed on a 3000-number map until it is full;
 * the same first number every time, all or nothing.
 */
static void idmap_take_run_matches_a_plain_scan(void **state)
{
	enum { NB = 3000 };
	static bool used[NB];
	struct umsi_idmap m;
	uint64_t *mem = calloc(1, umsi_idmap_size(NB));
	uint32_t seed = 2003, i, k;

	(void)state;
	assert_non_null(mem);
	umsi_idmap_init(&m, NB, mem);
	memset(used, 0, sizeof(used));
	for (i = 0; i < 20000; i++) {
		uint32_t n, align, want, got;

		seed = seed * 1103515245u + 12345u;
		n = 1 + (seed >> 16) % 40;
		align = (seed >> 8) & 1 ? 1u : 1u << ((seed >> 4) % 6);
		if ((seed >> 24) % 3 == 0) {
			/* Free a random taken number. */
			k = (seed >> 5) % NB;
			if (used[k]) {
				used[k] = false;
				umsi_idmap_clear(&m, k);
			}
			continue;
		}
		want = naive_run(used, NB, n, align);
		got = umsi_idmap_take_run(&m, n, align);
		assert_int_equal(got, want);
		for (k = 0; got != UINT32_MAX && k < n; k++)
			used[got + k] = true;
		for (k = 0; k < NB; k += 97)
			assert_int_equal(umsi_idmap_test(&m, k), used[k]);
	}
	assert_int_equal(umsi_idmap_take_run(&m, 0, 1), UINT32_MAX);
	assert_int_equal(umsi_idmap_take_run(&m, 1, 3), UINT32_MAX);
	free(mem);
}

static void global_space_without_retarget_is_refused(void **state)
{
	struct umsi_config cfg = { .ctl = &global_ctl_no_retarget };
	struct umsi_system *sys = NULL;

	(void)state;
	assert_int_equal(umsi_system_create(&ops, NULL, &cfg, &sys),
			 -UMSI_EINVAL);
	assert_null(sys);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(global_space_serves_an_its_like_controller),
		cmocka_unit_test(global_space_without_retarget_is_refused),
		cmocka_unit_test(idmap_take_run_matches_a_plain_scan),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
