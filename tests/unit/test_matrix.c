/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_matrix.c - the per-CPU vector matrix, as a specification.
 *
 * Each test builds a matrix in memory it owns, acts, and asserts what an
 * IRQ layer would observe: which CPU and vector it got, what the counters
 * say, and that a failed call left every byte of the matrix as it was.
 * The property tests run 10^6 random operations against a naive reference
 * model written here from the header's documentation alone. The scale
 * tests check every CPU choice at 1, 64, 1024 and 8192 CPUs against a
 * brute-force scan, and bring a million vectors up and down on 8192 CPUs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <umsi/internal/matrix.h>

#define MAX_TEST_CPUS 8192u
#define MASK_WORDS    (MAX_TEST_CPUS / 64u)

/* A matrix, its memory, and a snapshot buffer for "unchanged" checks. */
struct mx {
	unsigned char *mem;
	unsigned char *snap;
	size_t len;
	struct umsi_matrix_config cfg;
	struct umsi_matrix *m;
};

/* A CPU mask the tests can fill. */
struct tmask {
	uint64_t w[MASK_WORDS];
	struct umsi_cpumask cm;
};

static struct mx *mx_new_cfg(const struct umsi_matrix_config *cfg, bool online)
{
	struct mx *x = calloc(1, sizeof(*x));

	assert_non_null(x);
	x->cfg = *cfg;
	x->len = umsi_matrix_size(cfg);
	assert_true(x->len > 0);
	x->mem = malloc(x->len);
	x->snap = malloc(x->len);
	assert_non_null(x->mem);
	assert_non_null(x->snap);
	memset(x->mem, 0xa5, x->len);   /* init must not rely on zeroed memory */
	assert_int_equal(umsi_matrix_init(x->mem, x->len, cfg, &x->m), 0);
	for (uint32_t cpu = 0; online && cpu < cfg->ncpus; cpu++)
		assert_int_equal(umsi_matrix_online(x->m, cpu), 0);
	return x;
}

static struct mx *mx_new(uint32_t ncpus, bool online)
{
	struct umsi_matrix_config cfg;

	umsi_matrix_default_config(&cfg, ncpus);
	return mx_new_cfg(&cfg, online);
}

static void mx_free(struct mx *x)
{
	free(x->mem);
	free(x->snap);
	free(x);
}

static void snapshot(struct mx *x)
{
	memcpy(x->snap, x->mem, x->len);
}

static void assert_unchanged(const struct mx *x)
{
	if (memcmp(x->snap, x->mem, x->len) != 0)
		fail_msg("a failed call changed the matrix");
}

static void assert_consistent(const struct umsi_matrix *m)
{
	const char *why;
	uint32_t cpu;

	if (umsi_matrix_check_detail(m, &why, &cpu) != 0)
		fail_msg("matrix inconsistent: %s (cpu %u)", why, cpu);
}

static struct umsi_matrix_cpu_stats cpu_stats(const struct mx *x, uint32_t cpu)
{
	struct umsi_matrix_cpu_stats st;

	assert_int_equal(umsi_matrix_cpu_stats(x->m, cpu, &st), 0);
	return st;
}

static struct umsi_matrix_stats stats(const struct mx *x)
{
	struct umsi_matrix_stats st;

	umsi_matrix_stats(x->m, &st);
	return st;
}

static void tmask_clear(struct tmask *t, uint32_t nbits)
{
	memset(t->w, 0, sizeof(t->w));
	t->cm.words = t->w;
	t->cm.nbits = nbits;
}

static void tmask_set(struct tmask *t, uint32_t cpu)
{
	t->w[cpu / 64] |= 1ull << (cpu % 64);
}

static bool tmask_test(const struct tmask *t, uint32_t cpu)
{
	return cpu < t->cm.nbits && ((t->w[cpu / 64] >> (cpu % 64)) & 1);
}

static const struct umsi_cpumask *one_cpu(struct tmask *t, uint32_t ncpus, uint32_t cpu)
{
	tmask_clear(t, ncpus);
	tmask_set(t, cpu);
	return &t->cm;
}

/* ---- Layout ------------------------------------------------------------- */

static void test_default_layout_gives_203_vectors_per_cpu_and_187_on_the_legacy_cpu(void **state)
{
	struct mx *x = mx_new(4, true);
	uint32_t cpu;
	int v, n = 0;
	(void)state;

	assert_int_equal(cpu_stats(x, 0).capacity, 187);
	assert_int_equal(cpu_stats(x, 1).capacity, 203);
	assert_int_equal(stats(x).available, 187 + 3 * 203);

	/* Exhausting CPU 1 yields exactly 0x20-0xeb without 0x80, in order. */
	for (unsigned int want = 0x20; want <= 0xeb; want++) {
		if (want == 0x80)
			continue;
		v = umsi_matrix_alloc_range(x->m, 1, 1, 0, &cpu);
		assert_int_equal(v, want);
		assert_int_equal(cpu, 1);
		n++;
	}
	assert_int_equal(n, 203);
	assert_int_equal(umsi_matrix_alloc_range(x->m, 1, 1, 0, &cpu), -UMSI_ENOSPC);

	/* CPU 0 also withholds the legacy vectors 0x30-0x3f. */
	for (n = 0; (v = umsi_matrix_alloc_range(x->m, 0, 1, 0, &cpu)) >= 0; n++) {
		assert_false(v >= 0x30 && v <= 0x3f);
		assert_int_not_equal(v, 0x80);
		assert_true(v >= 0x20 && v <= 0xeb);
	}
	assert_int_equal(n, 187);
	assert_consistent(x->m);
	mx_free(x);
}

static void test_exceptions_system_vectors_and_syscall_gate_are_reserved_before_any_cpu_is_online(void **state)
{
	struct mx *x = mx_new(3, false);
	struct umsi_matrix_stats st = stats(x);
	uint32_t cpu;
	(void)state;

	assert_int_equal(st.online, 0);
	assert_int_equal(st.available, 0);
	for (uint32_t c = 0; c < 3; c++) {
		for (unsigned int v = 0; v < 0x20; v++)
			assert_int_equal(umsi_matrix_vector_state(x->m, c, v), UMSI_VECTOR_RESERVED);
		for (unsigned int v = 0xec; v <= 0xff; v++)
			assert_int_equal(umsi_matrix_vector_state(x->m, c, v), UMSI_VECTOR_RESERVED);
		assert_int_equal(umsi_matrix_vector_state(x->m, c, 0x80), UMSI_VECTOR_RESERVED);
		assert_int_equal(umsi_matrix_vector_state(x->m, c, 0x20), UMSI_VECTOR_FREE);
		assert_int_equal(cpu_stats(x, c).available, c == 0 ? 187 : 203);
		assert_false(cpu_stats(x, c).online);
	}
	assert_int_equal(umsi_matrix_vector_state(x->m, 0, 0x30), UMSI_VECTOR_LEGACY_FREE);
	assert_int_equal(umsi_matrix_vector_state(x->m, 1, 0x30), UMSI_VECTOR_FREE);

	/* Nothing online: nothing to allocate, and nothing changes. */
	snapshot(x);
	assert_int_equal(umsi_matrix_alloc(x->m, NULL, 0, &cpu), -UMSI_ENOSPC);
	assert_int_equal(umsi_matrix_alloc_range(x->m, 0, 3, 0, &cpu), -UMSI_ENOSPC);
	assert_int_equal(umsi_matrix_alloc_block(x->m, NULL, 2, &cpu), -UMSI_ENOSPC);
	assert_int_equal(umsi_matrix_alloc_managed(x->m, NULL, &cpu), -UMSI_ENOSPC);
	assert_unchanged(x);
	assert_consistent(x->m);
	mx_free(x);
}

static void test_invalid_configurations_are_rejected(void **state)
{
	struct umsi_matrix_config cfg, bad;
	struct umsi_matrix *m;
	uint64_t mem[64];
	(void)state;

	umsi_matrix_default_config(&cfg, 4);
	assert_true(umsi_matrix_size(&cfg) > 0);
	assert_int_equal(umsi_matrix_size(NULL), 0);

	bad = cfg; bad.ncpus = 0;
	assert_int_equal(umsi_matrix_size(&bad), 0);
	bad = cfg; bad.ncpus = UMSI_MATRIX_MAX_CPUS + 1;
	assert_int_equal(umsi_matrix_size(&bad), 0);
	bad = cfg; bad.alloc_last = 256;
	assert_int_equal(umsi_matrix_size(&bad), 0);
	bad = cfg; bad.alloc_first = 0x40; bad.alloc_last = 0x3f;
	assert_int_equal(umsi_matrix_size(&bad), 0);
	bad = cfg; bad.system_last = 0x100;
	assert_int_equal(umsi_matrix_size(&bad), 0);
	bad = cfg; bad.legacy_count = 17;
	assert_int_equal(umsi_matrix_size(&bad), 0);
	bad = cfg; bad.legacy_cpu = 4;
	assert_int_equal(umsi_matrix_size(&bad), 0);
	bad = cfg; bad.legacy_first = 0xf8;     /* into the system vectors */
	assert_int_equal(umsi_matrix_size(&bad), 0);
	bad = cfg; bad.legacy_first = 0x78;     /* over the syscall gate */
	assert_int_equal(umsi_matrix_size(&bad), 0);
	bad = cfg; bad.legacy_first = 0xfa; bad.system_first = 0xff;  /* past 255 */
	assert_int_equal(umsi_matrix_size(&bad), 0);
	assert_int_equal(umsi_matrix_init(mem, sizeof(mem), &bad, &m), -UMSI_EINVAL);
	assert_int_equal(umsi_matrix_init(NULL, sizeof(mem), &cfg, &m), -UMSI_EINVAL);
	assert_int_equal(umsi_matrix_init(mem, sizeof(mem), &cfg, NULL), -UMSI_EINVAL);

	/* No legacy IRQs: the legacy CPU does not matter. */
	bad = cfg; bad.legacy_count = 0; bad.legacy_cpu = 1000;
	assert_true(umsi_matrix_size(&bad) > 0);
}

static void test_init_accepts_unaligned_memory_and_rejects_short_memory(void **state)
{
	struct umsi_matrix_config cfg;
	struct umsi_matrix *m;
	size_t len;
	unsigned char *buf;
	uint32_t cpu;
	(void)state;

	umsi_matrix_default_config(&cfg, 65);
	len = umsi_matrix_size(&cfg);
	buf = malloc(len + 8);
	assert_non_null(buf);
	for (unsigned int off = 0; off < 8; off++) {
		assert_int_equal(umsi_matrix_init(buf + off, len, &cfg, &m), 0);
		assert_int_equal(umsi_matrix_online(m, 64), 0);
		assert_int_equal(umsi_matrix_alloc(m, NULL, 0, &cpu), 0x20);
		assert_int_equal(cpu, 64);
		assert_consistent(m);
	}
	assert_int_equal(umsi_matrix_init(buf + 1, len - 8, &cfg, &m), -UMSI_ENOMEM);
	free(buf);

	umsi_matrix_default_config(&cfg, UMSI_MATRIX_MAX_CPUS);
	len = umsi_matrix_size(&cfg);
	assert_true(len / UMSI_MATRIX_MAX_CPUS < 80);  /* about 74 bytes per CPU */
}

/* ---- Exhaustion and errors ---------------------------------------------- */

static void test_exhaustion_returns_enospc_and_leaves_the_matrix_unchanged(void **state)
{
	struct mx *x = mx_new(70, true);
	struct tmask t;
	uint32_t cpu;
	int v;
	(void)state;

	/* A managed reservation on CPU 3 that is in use, and one that is not. */
	assert_int_equal(umsi_matrix_reserve_managed(x->m, one_cpu(&t, 70, 3)), 0);
	assert_int_equal(umsi_matrix_reserve_managed(x->m, one_cpu(&t, 70, 3)), 0);
	assert_true(umsi_matrix_alloc_managed(x->m, &t.cm, &cpu) >= 0);
	while ((v = umsi_matrix_alloc(x->m, NULL, 0, &cpu)) >= 0)
		;
	assert_int_equal(v, -UMSI_ENOSPC);
	assert_int_equal(stats(x).available, 0);
	assert_int_equal(stats(x).allocated, 187 + 69 * 203 - 2);
	assert_consistent(x->m);

	snapshot(x);
	assert_int_equal(umsi_matrix_alloc(x->m, NULL, 0, &cpu), -UMSI_ENOSPC);
	assert_int_equal(umsi_matrix_alloc(x->m, NULL, UMSI_MATRIX_SPREAD, &cpu), -UMSI_ENOSPC);
	assert_int_equal(umsi_matrix_alloc(x->m, one_cpu(&t, 70, 69), 0, &cpu), -UMSI_ENOSPC);
	assert_int_equal(umsi_matrix_alloc_range(x->m, 10, 60, 0, &cpu), -UMSI_ENOSPC);
	for (unsigned int order = 0; order <= UMSI_MATRIX_MAX_ORDER; order++)
		assert_int_equal(umsi_matrix_alloc_block(x->m, NULL, order, &cpu), -UMSI_ENOSPC);
	assert_int_equal(umsi_matrix_reserve_managed(x->m, one_cpu(&t, 70, 5)), -UMSI_ENOSPC);
	/* CPU 3 still has an unused reservation, so a managed alloc works ... */
	assert_int_equal(umsi_matrix_alloc_managed(x->m, one_cpu(&t, 70, 4), &cpu), -UMSI_ENOSPC);
	assert_unchanged(x);
	assert_true(umsi_matrix_alloc_managed(x->m, NULL, &cpu) >= 0);
	assert_int_equal(cpu, 3);
	/* ... once. */
	snapshot(x);
	assert_int_equal(umsi_matrix_alloc_managed(x->m, NULL, &cpu), -UMSI_ENOSPC);
	assert_unchanged(x);
	assert_consistent(x->m);
	mx_free(x);
}

static void test_an_all_or_nothing_reservation_fails_whole_when_one_cpu_is_full(void **state)
{
	struct mx *x = mx_new(130, true);
	struct tmask t;
	uint32_t cpu;
	(void)state;

	while (umsi_matrix_alloc_range(x->m, 128, 1, 0, &cpu) >= 0)
		;
	tmask_clear(&t, 130);
	for (uint32_t c = 0; c < 130; c += 3)
		tmask_set(&t, c);
	tmask_set(&t, 128);
	snapshot(x);
	assert_int_equal(umsi_matrix_reserve_managed(x->m, &t.cm), -UMSI_ENOSPC);
	assert_unchanged(x);
	assert_int_equal(umsi_matrix_free(x->m, 128, 0x20, false), 0);
	assert_int_equal(umsi_matrix_reserve_managed(x->m, &t.cm), 0);
	assert_int_equal(stats(x).managed, 45);
	assert_consistent(x->m);
	mx_free(x);
}

static void test_bad_arguments_return_einval_and_leave_the_matrix_unchanged(void **state)
{
	struct mx *x = mx_new(8, true);
	struct tmask t;
	struct umsi_cpumask nowords = { NULL, 8 };
	uint32_t cpu;
	int v, b;
	(void)state;

	v = umsi_matrix_alloc(x->m, NULL, 0, &cpu);
	assert_int_equal(cpu, 1);
	b = umsi_matrix_alloc_block(x->m, NULL, 3, &cpu);
	assert_int_equal(cpu, 2);
	assert_int_equal(umsi_matrix_reserve_managed(x->m, one_cpu(&t, 8, 4)), 0);
	assert_int_equal(umsi_matrix_assign_legacy(x->m, 1), 0x31);
	snapshot(x);

	assert_int_equal(umsi_matrix_free(x->m, 1, v + 1, false), -UMSI_EINVAL);   /* not allocated */
	assert_int_equal(umsi_matrix_free(x->m, 3, v, false), -UMSI_EINVAL);       /* wrong CPU */
	assert_int_equal(umsi_matrix_free(x->m, 1, v, true), -UMSI_EINVAL);        /* not managed */
	assert_int_equal(umsi_matrix_free(x->m, 8, v, false), -UMSI_EINVAL);       /* no such CPU */
	assert_int_equal(umsi_matrix_free(x->m, 1, 256, false), -UMSI_EINVAL);     /* no such vector */
	assert_int_equal(umsi_matrix_free(x->m, 1, 0xec, false), -UMSI_EINVAL);    /* system vector */
	assert_int_equal(umsi_matrix_free(x->m, 0, 0x31, false), -UMSI_EINVAL);    /* legacy: release it */
	assert_int_equal(umsi_matrix_free(x->m, 4, 0x20, true), -UMSI_EINVAL);     /* reserved, not in use */
	assert_int_equal(umsi_matrix_free(x->m, 4, 0x20, false), -UMSI_EINVAL);
	assert_int_equal(umsi_matrix_free_block(x->m, 2, b + 1, 3), -UMSI_EINVAL); /* misaligned */
	assert_int_equal(umsi_matrix_free_block(x->m, 2, b, 4), -UMSI_EINVAL);     /* half allocated */
	assert_int_equal(umsi_matrix_free_block(x->m, 2, b, 6), -UMSI_EINVAL);     /* order too large */
	assert_int_equal(umsi_matrix_free_block(x->m, 2, 0x100, 0), -UMSI_EINVAL);
	assert_int_equal(umsi_matrix_alloc(x->m, NULL, 0x80, &cpu), -UMSI_EINVAL); /* unknown flag */
	assert_int_equal(umsi_matrix_alloc(x->m, NULL, 0, NULL), -UMSI_EINVAL);
	assert_int_equal(umsi_matrix_alloc(x->m, &nowords, 0, &cpu), -UMSI_EINVAL);
	assert_int_equal(umsi_matrix_alloc_range(x->m, 0, 0, 0, &cpu), -UMSI_EINVAL);
	assert_int_equal(umsi_matrix_alloc_range(x->m, 4, 5, 0, &cpu), -UMSI_EINVAL);
	assert_int_equal(umsi_matrix_alloc_range(x->m, 8, 1, 0, &cpu), -UMSI_EINVAL);
	assert_int_equal(umsi_matrix_alloc_block(x->m, NULL, 6, &cpu), -UMSI_EINVAL);
	assert_int_equal(umsi_matrix_reserve_managed(x->m, NULL), -UMSI_EINVAL);
	assert_int_equal(umsi_matrix_reserve_managed(x->m, &nowords), -UMSI_EINVAL);
	tmask_clear(&t, 8);
	assert_int_equal(umsi_matrix_reserve_managed(x->m, &t.cm), -UMSI_EINVAL);   /* empty */
	assert_int_equal(umsi_matrix_remove_managed(x->m, one_cpu(&t, 8, 5)), -UMSI_EINVAL);
	assert_int_equal(umsi_matrix_online(x->m, 3), -UMSI_EINVAL);               /* already */
	assert_int_equal(umsi_matrix_online(x->m, 8), -UMSI_EINVAL);
	assert_int_equal(umsi_matrix_offline(x->m, 8), -UMSI_EINVAL);
	assert_int_equal(umsi_matrix_assign_legacy(x->m, 1), -UMSI_EBUSY);
	assert_int_equal(umsi_matrix_assign_legacy(x->m, 16), -UMSI_EINVAL);
	assert_int_equal(umsi_matrix_release_legacy(x->m, 2), -UMSI_EINVAL);
	assert_int_equal(umsi_matrix_release_legacy(x->m, 16), -UMSI_EINVAL);
	assert_int_equal(umsi_matrix_cpu_stats(x->m, 8, &(struct umsi_matrix_cpu_stats){ 0 }),
			 -UMSI_EINVAL);
	assert_int_equal(umsi_matrix_vector_state(x->m, 0, 256), -UMSI_EINVAL);
	assert_false(umsi_matrix_is_allocated(x->m, 9, v));
	assert_false(umsi_matrix_is_allocated(x->m, 1, 300));
	assert_unchanged(x);

	/* Offline twice. */
	assert_int_equal(umsi_matrix_offline(x->m, 7), 0);
	snapshot(x);
	assert_int_equal(umsi_matrix_offline(x->m, 7), -UMSI_EINVAL);
	assert_unchanged(x);

	assert_int_equal(umsi_matrix_check(NULL), -UMSI_EINVAL);
	assert_consistent(x->m);
	mx_free(x);
}

/* ---- Choosing the CPU --------------------------------------------------- */

static void test_allocation_picks_the_online_cpu_with_most_available_vectors_lowest_on_ties(void **state)
{
	struct mx *x = mx_new(4, true);
	struct tmask t;
	uint32_t cpu;
	(void)state;

	/* CPU 0 holds 16 fewer (legacy): 1, 2, 3 take turns first. */
	for (unsigned int round = 0; round < 16; round++) {
		for (uint32_t want = 1; want <= 3; want++) {
			assert_int_equal(umsi_matrix_alloc(x->m, NULL, 0, &cpu), 0x20 + round);
			assert_int_equal(cpu, want);
		}
	}
	/* Now all four have 187: CPU 0 wins the tie. */
	assert_int_equal(umsi_matrix_alloc(x->m, NULL, 0, &cpu), 0x20);
	assert_int_equal(cpu, 0);
	assert_int_equal(umsi_matrix_alloc(x->m, NULL, 0, &cpu), 0x30);
	assert_int_equal(cpu, 1);

	/* A mask restricts the choice; a range too. */
	tmask_clear(&t, 4);
	tmask_set(&t, 0);
	tmask_set(&t, 3);
	assert_true(umsi_matrix_alloc(x->m, &t.cm, 0, &cpu) >= 0);
	assert_int_equal(cpu, 3);
	assert_true(umsi_matrix_alloc_range(x->m, 2, 2, 0, &cpu) >= 0);
	assert_int_equal(cpu, 2);
	assert_int_equal(cpu_stats(x, 2).available, 203 - 17);
	assert_consistent(x->m);
	mx_free(x);
}

/*
 * A free is held back from the index until the next allocation or change
 * (the pending CPU): every observer still sees the freed vector at once,
 * the choice treats the CPU at its real count, and no other call can see
 * the difference.
 */
static void test_a_freed_cpu_counts_at_once_for_every_choice_and_query(void **state)
{
	struct mx *x = mx_new(130, true);
	struct umsi_matrix_cpu_stats st;
	struct tmask t;
	uint32_t cpu, c;
	int v[4], w;
	(void)state;

	/* CPU 129 alone at 200 free after three allocations there. */
	for (int i = 0; i < 3; i++)
		assert_true((v[i] = umsi_matrix_alloc_range(x->m, 129, 1, 0, &cpu)) >= 0);
	assert_int_equal(umsi_matrix_free(x->m, 129, (unsigned int)v[1], false), 0);
	/* Seen at once: per CPU, globally, by the checker. */
	st = cpu_stats(x, 129);
	assert_int_equal(st.available, 201);
	assert_int_equal(st.allocated, 2);
	assert_int_equal(stats(x).available, 129 * 203 + 187 - 2);
	assert_int_equal(stats(x).allocated, 2);
	assert_consistent(x->m);
	/* Not the best of all (the idle CPUs have 203): the root is CPU 1. */
	assert_true(umsi_matrix_alloc(x->m, NULL, 0, &cpu) >= 0);
	assert_int_equal(cpu, 1);
	/* Through a mask of it and a busier CPU (CPU 0, 187 with its legacy
	 * vectors), it wins at its real count. */
	tmask_clear(&t, 130);
	tmask_set(&t, 0);
	tmask_set(&t, 129);
	assert_true((w = umsi_matrix_alloc(x->m, &t.cm, 0, &cpu)) >= 0);
	assert_int_equal(cpu, 129);
	assert_int_equal(w, v[1]);   /* the lowest free vector again */
	/* Two frees on it, then a range that ties it with CPU 128 (201
	 * after two there): the lower CPU wins the tie. */
	assert_int_equal(umsi_matrix_free(x->m, 129, (unsigned int)v[0], false), 0);
	assert_int_equal(umsi_matrix_free(x->m, 129, (unsigned int)w, false), 0);
	assert_int_equal(cpu_stats(x, 129).available, 202);
	assert_true(umsi_matrix_alloc_range(x->m, 128, 1, 0, &c) >= 0);
	assert_int_equal(cpu_stats(x, 128).available, 202);
	assert_true(umsi_matrix_alloc_range(x->m, 128, 2, 0, &cpu) >= 0);
	assert_int_equal(cpu, 128);
	assert_true(umsi_matrix_alloc_range(x->m, 128, 2, 0, &cpu) >= 0);
	assert_int_equal(cpu, 129);
	assert_consistent(x->m);
	/* A failed call with frees pending changes no byte. */
	assert_int_equal(umsi_matrix_free(x->m, 129, (unsigned int)v[2], false), 0);
	snapshot(x);
	tmask_clear(&t, 130);
	assert_int_equal(umsi_matrix_alloc(x->m, &t.cm, 0, &cpu), -UMSI_ENOSPC);
	assert_int_equal(umsi_matrix_alloc_at(x->m, 129, 0), -UMSI_EINVAL);
	assert_int_equal(umsi_matrix_free(x->m, 129, (unsigned int)v[2], false), -UMSI_EINVAL);
	assert_int_equal(umsi_matrix_online(x->m, 129), -UMSI_EINVAL);
	assert_int_equal(umsi_matrix_alloc_block(x->m, NULL, 6, &cpu), -UMSI_EINVAL);
	assert_unchanged(x);
	/* Offline, it is never chosen, pending frees or not. */
	assert_int_equal(umsi_matrix_offline(x->m, 129), 0);
	assert_consistent(x->m);
	assert_int_equal(cpu_stats(x, 129).available, 202);
	assert_int_equal(umsi_matrix_alloc_range(x->m, 129, 1, 0, &cpu), -UMSI_ENOSPC);
	/* A free on an offline CPU is counted there, and not a candidate. */
	assert_true((w = umsi_matrix_alloc_at(x->m, 129, 0x40)) == 0);
	assert_int_equal(umsi_matrix_free(x->m, 129, 0x40, false), 0);
	assert_int_equal(cpu_stats(x, 129).available, 202);
	assert_int_equal(umsi_matrix_alloc_range(x->m, 129, 1, 0, &cpu), -UMSI_ENOSPC);
	assert_consistent(x->m);
	mx_free(x);
}

static uint64_t rng_state;

static uint64_t rnd(void)
{
	/* splitmix64 */
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint32_t rnd_below(uint32_t n)
{
	return (uint32_t)(rnd() % n);
}

/* The CPU a linear scan picks: most available, lowest on ties; or -1. */
static int64_t scan_best(const struct mx *x, const struct tmask *t)
{
	int64_t best = -1;
	uint32_t best_avail = 0;

	for (uint32_t c = 0; c < x->cfg.ncpus; c++) {
		struct umsi_matrix_cpu_stats st = cpu_stats(x, c);

		if ((t && !tmask_test(t, c)) || !st.online)
			continue;
		if (st.available > best_avail) {
			best_avail = st.available;
			best = c;
		}
	}
	return best;
}

static void test_mask_and_range_choice_agrees_with_a_linear_scan(void **state)
{
	static const uint32_t sizes[] = { 1, 2, 63, 64, 65, 130, 1000, 4100 };
	struct tmask t;
	(void)state;

	rng_state = 1234;
	for (unsigned int s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		uint32_t n = sizes[s];
		struct mx *x = mx_new(n, false);

		for (uint32_t c = 0; c < n; c++) {
			if (rnd_below(8))
				assert_int_equal(umsi_matrix_online(x->m, c), 0);
		}
		for (unsigned int i = 0; i < 400; i++) {
			uint32_t cpu, first, count;
			int64_t want;
			int v;

			/* Uneven fill, so counts differ. */
			for (unsigned int k = rnd_below(4 * n); k > 0; k--)
				(void)umsi_matrix_alloc_range(x->m, rnd_below(n), 1, 0, &cpu);

			switch (i % 4) {
			case 3: /* one CPU (pinned), sometimes past nbits or a second */
				tmask_clear(&t, rnd_below(4) ? n : rnd_below(n + 1));
				tmask_set(&t, rnd_below(n));
				if (rnd_below(4) == 0)
					tmask_set(&t, rnd_below(n));
				want = scan_best(x, &t);
				v = umsi_matrix_alloc(x->m, &t.cm, 0, &cpu);
				break;
			case 0: /* arbitrary mask, sometimes shorter than the matrix */
				tmask_clear(&t, rnd_below(4) ? n : rnd_below(n + 1));
				for (uint32_t c = 0; c < n; c++) {
					if (rnd_below(3) == 0)
						tmask_set(&t, c);
				}
				want = scan_best(x, &t);
				v = umsi_matrix_alloc(x->m, &t.cm, 0, &cpu);
				break;
			case 1: /* contiguous range */
				first = rnd_below(n);
				count = 1 + rnd_below(n - first);
				tmask_clear(&t, n);
				for (uint32_t c = first; c < first + count; c++)
					tmask_set(&t, c);
				want = scan_best(x, &t);
				v = umsi_matrix_alloc_range(x->m, first, count, 0, &cpu);
				break;
			default: /* everything */
				want = scan_best(x, NULL);
				v = umsi_matrix_alloc(x->m, NULL, 0, &cpu);
				break;
			}
			if (want < 0) {
				assert_int_equal(v, -UMSI_ENOSPC);
			} else {
				assert_true(v >= 0);
				assert_int_equal(cpu, want);
			}
		}
		assert_consistent(x->m);
		mx_free(x);
	}
}

static void test_offline_cpus_are_never_chosen_and_keep_their_vectors(void **state)
{
	struct mx *x = mx_new(3, true);
	uint32_t cpu;
	int v;
	(void)state;

	v = umsi_matrix_alloc_range(x->m, 2, 1, 0, &cpu);
	assert_int_equal(umsi_matrix_offline(x->m, 1), 0);
	assert_int_equal(umsi_matrix_offline(x->m, 2), 0);
	assert_int_equal(stats(x).online, 1);
	assert_int_equal(stats(x).available, 187);
	assert_int_equal(stats(x).allocated, 1);
	assert_true(umsi_matrix_is_allocated(x->m, 2, v));
	for (int i = 0; i < 187; i++) {
		assert_true(umsi_matrix_alloc(x->m, NULL, 0, &cpu) >= 0);
		assert_int_equal(cpu, 0);
	}
	assert_int_equal(umsi_matrix_alloc(x->m, NULL, 0, &cpu), -UMSI_ENOSPC);
	assert_int_equal(umsi_matrix_alloc_range(x->m, 1, 2, 0, &cpu), -UMSI_ENOSPC);

	/* Freeing on an offline CPU is how a migration finishes. */
	assert_int_equal(umsi_matrix_free(x->m, 2, v, false), 0);
	assert_int_equal(cpu_stats(x, 2).available, 203);
	assert_int_equal(stats(x).available, 0);
	assert_int_equal(umsi_matrix_online(x->m, 2), 0);
	assert_int_equal(stats(x).available, 203);
	assert_int_equal(umsi_matrix_alloc(x->m, NULL, 0, &cpu), 0x20);
	assert_int_equal(cpu, 2);
	assert_consistent(x->m);
	mx_free(x);
}

static void test_alloc_at_takes_exactly_the_vector_asked_for(void **state)
{
	struct mx *x = mx_new(3, true);
	struct tmask t;
	uint32_t cpu;
	(void)state;

	assert_int_equal(umsi_matrix_alloc_at(x->m, 2, 0x77), 0);
	assert_int_equal(umsi_matrix_vector_state(x->m, 2, 0x77), UMSI_VECTOR_ALLOCATED);
	assert_int_equal(cpu_stats(x, 2).allocated, 1);
	assert_int_equal(cpu_stats(x, 2).available, 202);
	assert_int_equal(stats(x).available, 187 + 203 + 202);
	/* Placing on an offline CPU is allowed: the caller chose it. */
	assert_int_equal(umsi_matrix_offline(x->m, 1), 0);
	assert_int_equal(umsi_matrix_alloc_at(x->m, 1, 0x20), 0);
	assert_int_equal(umsi_matrix_online(x->m, 1), 0);
	assert_int_equal(cpu_stats(x, 1).available, 202);
	/* The ordinary allocator steps around it. */
	assert_int_equal(umsi_matrix_alloc_range(x->m, 1, 1, 0, &cpu), 0x21);
	assert_int_equal(umsi_matrix_reserve_managed(x->m, one_cpu(&t, 3, 2)), 0);

	snapshot(x);
	assert_int_equal(umsi_matrix_alloc_at(x->m, 2, 0x77), -UMSI_EBUSY);   /* owned */
	assert_int_equal(umsi_matrix_alloc_at(x->m, 2, 0x20), -UMSI_EBUSY);   /* managed */
	assert_int_equal(umsi_matrix_alloc_at(x->m, 2, 0x80), -UMSI_EINVAL);  /* syscall */
	assert_int_equal(umsi_matrix_alloc_at(x->m, 2, 0x10), -UMSI_EINVAL);  /* exception */
	assert_int_equal(umsi_matrix_alloc_at(x->m, 2, 0xec), -UMSI_EINVAL);  /* system */
	assert_int_equal(umsi_matrix_alloc_at(x->m, 0, 0x35), -UMSI_EINVAL);  /* legacy */
	assert_int_equal(umsi_matrix_alloc_at(x->m, 3, 0x40), -UMSI_EINVAL);
	assert_int_equal(umsi_matrix_alloc_at(x->m, 2, 256), -UMSI_EINVAL);
	assert_unchanged(x);
	assert_int_equal(umsi_matrix_alloc_at(x->m, 1, 0x35), 0);            /* not legacy there */
	assert_int_equal(umsi_matrix_free(x->m, 2, 0x77, false), 0);
	assert_consistent(x->m);
	mx_free(x);
}

/* ---- Blocks ------------------------------------------------------------- */

static void test_blocks_are_aligned_contiguous_and_all_or_nothing(void **state)
{
	struct mx *x = mx_new(2, true);
	uint32_t cpu;
	int base;
	(void)state;

	for (unsigned int order = 0; order <= UMSI_MATRIX_MAX_ORDER; order++) {
		unsigned int size = 1u << order;

		base = umsi_matrix_alloc_block(x->m, NULL, order, &cpu);
		assert_true(base >= 0x20);
		assert_int_equal(base % size, 0);
		for (unsigned int i = 0; i < size; i++)
			assert_int_equal(umsi_matrix_vector_state(x->m, cpu, base + i),
					 UMSI_VECTOR_ALLOCATED);
		assert_false(umsi_matrix_is_allocated(x->m, cpu, base + size));
		assert_consistent(x->m);
	}
	/* Orders 0-4 went to CPU 1, order 5 to CPU 0 (0x40: 0x30-0x3f are
	 * the legacy vectors there). */
	assert_int_equal(stats(x).allocated, 63);

	/* A 32-block never covers 0x80 or the system vectors: CPU 1 has
	 * 0x20-0x3f, 0x40-0x5f, 0x60-0x7f, 0xa0-0xbf, 0xc0-0xdf; 0x80-0x9f and
	 * 0xe0-0xff are broken by reserved vectors. */
	{
		struct mx *y = mx_new(2, true);
		struct umsi_matrix_cpu_stats before;
		static const int want[] = { 0x20, 0x40, 0x60, 0xa0, 0xc0 };

		assert_int_equal(umsi_matrix_offline(y->m, 0), 0);
		for (unsigned int i = 0; i < 5; i++) {
			assert_int_equal(umsi_matrix_alloc_block(y->m, NULL, 5, &cpu), want[i]);
			assert_int_equal(cpu, 1);
		}
		before = cpu_stats(y, 1);
		assert_int_equal(before.available, 203 - 160);
		/* 0x80-0x8f holds 0x80; 0x90-0x9f is free. */
		assert_int_equal(umsi_matrix_alloc_block(y->m, NULL, 4, &cpu), 0x90);
		snapshot(y);
		assert_int_equal(umsi_matrix_alloc_block(y->m, NULL, 5, &cpu), -UMSI_ENOSPC);
		assert_int_equal(umsi_matrix_alloc_block(y->m, NULL, 4, &cpu), -UMSI_ENOSPC);
		assert_unchanged(y);
		assert_int_equal(umsi_matrix_alloc_block(y->m, NULL, 3, &cpu), 0x88);
		assert_int_equal(cpu_stats(y, 1).available, 203 - 160 - 16 - 8);
		/* Freed one by one or as a block, the counts come back. */
		for (unsigned int v = 0x88; v < 0x90; v++)
			assert_int_equal(umsi_matrix_free(y->m, 1, v, false), 0);
		assert_int_equal(umsi_matrix_free_block(y->m, 1, 0x40, 5), 0);
		assert_int_equal(cpu_stats(y, 1).available, 203 - 128 - 16);
		assert_consistent(y->m);
		mx_free(y);
	}
	mx_free(x);
}

static void test_block_goes_to_the_best_cpu_that_has_an_aligned_hole(void **state)
{
	struct mx *x = mx_new(3, true);
	struct tmask t;
	uint32_t cpu;
	(void)state;

	/* CPU 1 keeps the most vectors, but every aligned pair is broken:
	 * fill it, then free the even vectors (101 of them). */
	while (umsi_matrix_alloc_range(x->m, 1, 1, 0, &cpu) >= 0)
		;
	for (unsigned int v = 0x20; v < 0xec; v += 2)
		assert_int_equal(umsi_matrix_free(x->m, 1, v, false), v == 0x80 ? -UMSI_EINVAL : 0);
	assert_int_equal(cpu_stats(x, 1).available, 101);
	/* CPU 0 keeps 87, CPU 2 83, in one piece. */
	for (int i = 0; i < 100; i++)
		assert_true(umsi_matrix_alloc_range(x->m, 0, 1, 0, &cpu) >= 0);
	for (int i = 0; i < 120; i++)
		assert_true(umsi_matrix_alloc_range(x->m, 2, 1, 0, &cpu) >= 0);
	assert_int_equal(cpu_stats(x, 0).available, 87);
	assert_int_equal(cpu_stats(x, 2).available, 83);

	/* A single vector goes to CPU 1; a pair cannot, so it goes to CPU 0. */
	assert_true(umsi_matrix_alloc(x->m, NULL, 0, &cpu) >= 0);
	assert_int_equal(cpu, 1);
	assert_true(umsi_matrix_alloc_block(x->m, NULL, 1, &cpu) >= 0);
	assert_int_equal(cpu, 0);
	/* Restricted to CPUs 1 and 2, it goes to CPU 2. */
	tmask_clear(&t, 3);
	tmask_set(&t, 1);
	tmask_set(&t, 2);
	assert_true(umsi_matrix_alloc_block(x->m, &t.cm, 1, &cpu) >= 0);
	assert_int_equal(cpu, 2);
	/* Only CPU 1: no pair anywhere, nothing changes. */
	snapshot(x);
	assert_int_equal(umsi_matrix_alloc_block(x->m, one_cpu(&t, 3, 1), 1, &cpu), -UMSI_ENOSPC);
	assert_unchanged(x);
	assert_consistent(x->m);
	mx_free(x);
}

/* ---- Managed vectors ---------------------------------------------------- */

static void test_managed_reservation_survives_free_and_offline(void **state)
{
	struct mx *x = mx_new(4, true);
	struct tmask t;
	uint32_t cpu;
	int v;
	(void)state;

	tmask_clear(&t, 4);
	tmask_set(&t, 2);
	tmask_set(&t, 3);
	assert_int_equal(umsi_matrix_reserve_managed(x->m, &t.cm), 0);
	/* The reservation costs availability at once, on each CPU. */
	assert_int_equal(cpu_stats(x, 2).available, 202);
	assert_int_equal(cpu_stats(x, 2).managed, 1);
	assert_int_equal(stats(x).managed, 2);
	assert_int_equal(stats(x).available, 187 + 203 + 2 * 202);
	assert_int_equal(umsi_matrix_vector_state(x->m, 2, 0x20), UMSI_VECTOR_MANAGED_FREE);

	/* Unmanaged allocations never take it. */
	assert_int_equal(umsi_matrix_alloc_range(x->m, 2, 1, 0, &cpu), 0x21);

	v = umsi_matrix_alloc_managed(x->m, &t.cm, &cpu);
	assert_int_equal(v, 0x20);
	assert_int_equal(cpu, 2);
	assert_int_equal(cpu_stats(x, 2).managed_allocated, 1);
	assert_int_equal(cpu_stats(x, 2).available, 201);   /* unchanged by alloc */
	assert_int_equal(umsi_matrix_free(x->m, 2, 0x20, true), 0);
	assert_int_equal(cpu_stats(x, 2).available, 201);   /* ... and by free */
	assert_int_equal(umsi_matrix_vector_state(x->m, 2, 0x20), UMSI_VECTOR_MANAGED_FREE);

	/* Offline CPUs keep their reservations but are not used. */
	assert_int_equal(umsi_matrix_offline(x->m, 2), 0);
	assert_int_equal(cpu_stats(x, 2).managed, 1);
	assert_int_equal(stats(x).managed, 2);
	v = umsi_matrix_alloc_managed(x->m, &t.cm, &cpu);
	assert_int_equal(cpu, 3);
	assert_int_equal(umsi_matrix_offline(x->m, 3), 0);
	assert_int_equal(umsi_matrix_free(x->m, 3, v, true), 0);   /* legal while offline */
	snapshot(x);
	assert_int_equal(umsi_matrix_alloc_managed(x->m, &t.cm, &cpu), -UMSI_ENOSPC);
	assert_unchanged(x);

	/* A reservation can be made on an offline CPU, too. */
	assert_int_equal(umsi_matrix_reserve_managed(x->m, &t.cm), 0);
	assert_int_equal(cpu_stats(x, 3).managed, 2);
	assert_int_equal(umsi_matrix_online(x->m, 3), 0);
	assert_int_equal(umsi_matrix_alloc_managed(x->m, &t.cm, &cpu), 0x20);
	assert_int_equal(cpu, 3);

	/* Removing releases an unused slot: CPU 2 has two, CPU 3 one. */
	assert_int_equal(umsi_matrix_remove_managed(x->m, &t.cm), 0);
	assert_int_equal(cpu_stats(x, 2).managed, 1);
	assert_int_equal(cpu_stats(x, 3).managed, 1);
	assert_int_equal(cpu_stats(x, 3).managed_allocated, 1);
	/* CPU 3's last one is in use: all or nothing. */
	snapshot(x);
	assert_int_equal(umsi_matrix_remove_managed(x->m, &t.cm), -UMSI_EINVAL);
	assert_unchanged(x);
	assert_int_equal(umsi_matrix_free(x->m, 3, 0x20, true), 0);
	assert_int_equal(umsi_matrix_remove_managed(x->m, &t.cm), 0);
	assert_int_equal(stats(x).managed, 0);
	assert_int_equal(cpu_stats(x, 3).available, 203);
	assert_int_equal(cpu_stats(x, 2).available, 202);   /* the 0x21 unmanaged */
	assert_consistent(x->m);
	mx_free(x);
}

static void test_managed_alloc_uses_the_cpu_with_most_unused_reservations(void **state)
{
	struct mx *x = mx_new(5, true);
	struct tmask t;
	uint32_t cpu;
	(void)state;

	assert_int_equal(umsi_matrix_reserve_managed(x->m, one_cpu(&t, 5, 4)), 0);
	assert_int_equal(umsi_matrix_reserve_managed(x->m, one_cpu(&t, 5, 4)), 0);
	assert_int_equal(umsi_matrix_reserve_managed(x->m, one_cpu(&t, 5, 1)), 0);
	assert_int_equal(umsi_matrix_alloc_managed(x->m, NULL, &cpu), 0x20);
	assert_int_equal(cpu, 4);
	/* Now 4 and 1 have one unused each: the lower wins. */
	assert_int_equal(umsi_matrix_alloc_managed(x->m, NULL, &cpu), 0x20);
	assert_int_equal(cpu, 1);
	assert_int_equal(umsi_matrix_alloc_managed(x->m, NULL, &cpu), 0x21);
	assert_int_equal(cpu, 4);
	assert_int_equal(stats(x).managed_allocated, 3);
	assert_int_equal(umsi_matrix_alloc_managed(x->m, NULL, &cpu), -UMSI_ENOSPC);
	assert_consistent(x->m);
	mx_free(x);
}

/* ---- Within a CPU ------------------------------------------------------- */

static void test_spread_visits_every_priority_class_before_reusing_one(void **state)
{
	struct mx *x = mx_new(2, true);
	uint32_t cpu;
	unsigned int seen = 0;
	int v;
	(void)state;

	/* CPU 1 has free vectors in classes 2 .. 14 (0x20 .. 0xeb). */
	for (unsigned int cls = 2; cls <= 14; cls++) {
		v = umsi_matrix_alloc_range(x->m, 1, 1, UMSI_MATRIX_SPREAD, &cpu);
		assert_int_equal(v, cls == 8 ? 0x81 : cls * 16);   /* 0x80: syscall */
		seen |= 1u << (v >> 4);
	}
	assert_int_equal(seen, 0x7ffc);
	assert_int_equal(umsi_matrix_alloc_range(x->m, 1, 1, UMSI_MATRIX_SPREAD, &cpu), 0x21);
	assert_int_equal(umsi_matrix_alloc_range(x->m, 1, 1, UMSI_MATRIX_SPREAD, &cpu), 0x31);
	/* Without the flag: the lowest free vector. */
	assert_int_equal(umsi_matrix_alloc_range(x->m, 1, 1, 0, &cpu), 0x22);

	/* On the legacy CPU, class 3 is the ISA IRQs' and is skipped. */
	v = umsi_matrix_alloc_range(x->m, 0, 1, UMSI_MATRIX_SPREAD, &cpu);
	assert_int_equal(v, 0x20);
	v = umsi_matrix_alloc_range(x->m, 0, 1, UMSI_MATRIX_SPREAD, &cpu);
	assert_int_equal(v, 0x40);
	assert_consistent(x->m);
	mx_free(x);
}

static void test_legacy_isa_irqs_take_fixed_vectors_on_the_legacy_cpu(void **state)
{
	struct umsi_matrix_config cfg;
	struct mx *x;
	uint32_t cpu;
	(void)state;

	umsi_matrix_default_config(&cfg, 4);
	cfg.legacy_cpu = 2;
	x = mx_new_cfg(&cfg, false);
	for (unsigned int irq = 0; irq < 16; irq++)
		assert_int_equal(umsi_matrix_assign_legacy(x->m, irq), 0x30 + irq);
	assert_true(umsi_matrix_is_allocated(x->m, 2, 0x3f));
	assert_false(umsi_matrix_is_allocated(x->m, 0, 0x3f));
	assert_int_equal(umsi_matrix_vector_state(x->m, 2, 0x3f), UMSI_VECTOR_LEGACY_ALLOCATED);
	assert_int_equal(cpu_stats(x, 2).legacy, 16);
	assert_int_equal(cpu_stats(x, 2).capacity, 187);
	assert_int_equal(cpu_stats(x, 2).allocated, 0);     /* not unmanaged */
	assert_int_equal(cpu_stats(x, 0).capacity, 203);
	assert_int_equal(stats(x).legacy, 16);
	assert_int_equal(umsi_matrix_release_legacy(x->m, 7), 0);
	assert_false(umsi_matrix_is_allocated(x->m, 2, 0x37));
	assert_int_equal(stats(x).legacy, 15);

	/* Other CPUs use 0x30-0x3f like any vector. */
	assert_int_equal(umsi_matrix_online(x->m, 0), 0);
	for (int i = 0; i < 17; i++)
		assert_int_equal(umsi_matrix_alloc(x->m, NULL, 0, &cpu), 0x20 + i);
	assert_consistent(x->m);
	mx_free(x);

	/* A configuration without legacy IRQs. */
	umsi_matrix_default_config(&cfg, 1);
	cfg.legacy_count = 0;
	x = mx_new_cfg(&cfg, true);
	assert_int_equal(cpu_stats(x, 0).capacity, 203);
	assert_int_equal(umsi_matrix_assign_legacy(x->m, 0), -UMSI_EINVAL);
	assert_consistent(x->m);
	mx_free(x);
}

static void test_a_tight_custom_layout_is_honoured(void **state)
{
	struct umsi_matrix_config cfg;
	struct mx *x;
	uint32_t cpu;
	int v, n = 0;
	(void)state;

	/* Allocatable 0x40-0x5f, system vectors 0x5c-0x6f overlap its top,
	 * 0x44 reserved, two legacy IRQs at 0x50 on CPU 1. */
	umsi_matrix_default_config(&cfg, 2);
	cfg.alloc_first = 0x40;
	cfg.alloc_last = 0x5f;
	cfg.system_first = 0x5c;
	cfg.system_last = 0x6f;
	cfg.reserved[0] = 0;
	cfg.reserved[1] = 1ull << (0x44 - 64);
	cfg.legacy_first = 0x50;
	cfg.legacy_count = 2;
	cfg.legacy_cpu = 1;
	x = mx_new_cfg(&cfg, true);
	assert_int_equal(cpu_stats(x, 0).capacity, 32 - 4 - 1);
	assert_int_equal(cpu_stats(x, 1).capacity, 32 - 4 - 1 - 2);
	while ((v = umsi_matrix_alloc_range(x->m, 1, 1, 0, &cpu)) >= 0) {
		assert_true(v >= 0x40 && v < 0x5c && v != 0x44 && v != 0x50 && v != 0x51);
		n++;
	}
	assert_int_equal(n, 25);
	assert_int_equal(umsi_matrix_assign_legacy(x->m, 1), 0x51);
	assert_consistent(x->m);
	mx_free(x);
}

static void full_layout(struct umsi_matrix_config *cfg, uint32_t ncpus)
{
	/* Not x86: all 256 vectors allocatable, nothing reserved. */
	umsi_matrix_default_config(cfg, ncpus);
	cfg->alloc_first = 0;
	cfg->alloc_last = 255;
	cfg->system_first = 1;
	cfg->system_last = 0;
	cfg->legacy_count = 0;
	memset(cfg->reserved, 0, sizeof(cfg->reserved));
}

static void test_a_layout_with_all_256_vectors_counts_up_to_256(void **state)
{
	struct umsi_matrix_config cfg;
	struct mx *x;
	uint32_t cpu;
	(void)state;

	full_layout(&cfg, 3);
	x = mx_new_cfg(&cfg, true);
	assert_int_equal(cpu_stats(x, 0).capacity, 256);
	assert_int_equal(umsi_matrix_alloc_range(x->m, 0, 1, 0, &cpu), 0);
	/* 256 beats 255 (a ninth bit of count). */
	assert_int_equal(umsi_matrix_alloc(x->m, NULL, 0, &cpu), 0);
	assert_int_equal(cpu, 1);
	assert_int_equal(umsi_matrix_alloc(x->m, NULL, 0, &cpu), 0);
	assert_int_equal(cpu, 2);
	assert_int_equal(umsi_matrix_alloc(x->m, NULL, 0, &cpu), 1);
	assert_int_equal(cpu, 0);
	assert_int_equal(umsi_matrix_alloc_block(x->m, NULL, 5, &cpu), 32);
	assert_int_equal(cpu, 1);
	assert_consistent(x->m);
	mx_free(x);
}

/* ---- Spaces of other sizes (nvec) --------------------------------------- */

/* The spaces the tests cover: nvec, first and last allocatable vector. */
struct space {
	uint32_t nvec, first, last;
};

static const struct space spaces[] = {
	{ 64, 0, 63 },          /* the smallest space, every vector usable */
	{ 256, 1, 255 },        /* an IMSIC with riscv,num-ids = 255 */
	{ 2048, 1, 2047 },      /* an IMSIC with riscv,num-ids = 2047 */
	{ 4096, 0, 4095 },      /* the largest space: counts of 13 bits */
};

#define NSPACES (sizeof(spaces) / sizeof(spaces[0]))

static struct mx *mx_new_space(const struct space *sp, uint32_t ncpus)
{
	struct umsi_matrix_config cfg;

	umsi_matrix_space_config(&cfg, ncpus, sp->nvec, sp->first, sp->last);
	return mx_new_cfg(&cfg, true);
}

static void test_a_space_config_fills_a_flat_identity_space(void **state)
{
	struct umsi_matrix_config cfg;
	(void)state;

	memset(&cfg, 0xa5, sizeof(cfg));
	umsi_matrix_space_config(&cfg, 8, 256, 1, 255);
	assert_int_equal(cfg.ncpus, 8);
	assert_int_equal(cfg.nvec, 256);
	assert_int_equal(cfg.alloc_first, 1);
	assert_int_equal(cfg.alloc_last, 255);
	assert_true(cfg.system_first > cfg.system_last);
	assert_int_equal(cfg.legacy_count, 0);
	for (unsigned int w = 0; w < UMSI_MATRIX_MAX_VECTORS / 64; w++)
		assert_true(cfg.reserved[w] == 0);
	umsi_matrix_default_config(&cfg, 8);
	assert_int_equal(cfg.nvec, UMSI_MATRIX_VECTORS);
	umsi_matrix_space_config(NULL, 8, 256, 1, 255);   /* no crash */
	assert_int_equal(umsi_matrix_nvec(NULL), 0);
}

static void test_every_space_exhausts_at_exactly_last_minus_first_plus_one_per_cpu(void **state)
{
	(void)state;

	for (unsigned int i = 0; i < NSPACES; i++) {
		const struct space *sp = &spaces[i];
		uint32_t ncpus = sp->nvec >= 2048 ? 3 : 70, per = sp->last - sp->first + 1;
		struct mx *x = mx_new_space(sp, ncpus);
		uint32_t cpu, n = 0;
		int v;

		assert_int_equal(umsi_matrix_nvec(x->m), sp->nvec);
		assert_int_equal(cpu_stats(x, 0).capacity, per);
		assert_int_equal(stats(x).available, ncpus * per);
		/* Below first: reserved; past the space: no such vector. */
		for (uint32_t r = 0; r < sp->first; r++)
			assert_int_equal(umsi_matrix_vector_state(x->m, 1, r), UMSI_VECTOR_RESERVED);
		assert_int_equal(umsi_matrix_vector_state(x->m, 1, sp->nvec), -UMSI_EINVAL);
		assert_int_equal(umsi_matrix_alloc_at(x->m, 1, sp->nvec), -UMSI_EINVAL);
		assert_int_equal(umsi_matrix_free(x->m, 1, sp->nvec, false), -UMSI_EINVAL);
		assert_false(umsi_matrix_is_allocated(x->m, 1, sp->nvec));
		/* The first allocations spread over the CPUs, lowest vector first. */
		assert_int_equal(umsi_matrix_alloc(x->m, NULL, 0, &cpu), (int)sp->first);
		assert_int_equal(cpu, 0);
		assert_int_equal(umsi_matrix_alloc(x->m, NULL, 0, &cpu), (int)sp->first);
		assert_int_equal(cpu, 1);
		n = 2;
		while ((v = umsi_matrix_alloc(x->m, NULL, 0, &cpu)) >= 0) {
			assert_true((uint32_t)v >= sp->first && (uint32_t)v <= sp->last);
			n++;
		}
		assert_int_equal(v, -UMSI_ENOSPC);
		assert_int_equal(n, ncpus * per);
		assert_int_equal(stats(x).allocated, ncpus * per);
		assert_int_equal(stats(x).available, 0);
		for (uint32_t r = sp->first; r <= sp->last; r++)
			assert_int_equal(umsi_matrix_vector_state(x->m, ncpus - 1, r),
					 UMSI_VECTOR_ALLOCATED);
		assert_consistent(x->m);
		snapshot(x);
		assert_int_equal(umsi_matrix_alloc(x->m, NULL, UMSI_MATRIX_SPREAD, &cpu), -UMSI_ENOSPC);
		assert_int_equal(umsi_matrix_alloc_block(x->m, NULL, 0, &cpu), -UMSI_ENOSPC);
		assert_unchanged(x);
		/* Every vector back: the counts are those of a new matrix. */
		for (uint32_t c = 0; c < ncpus; c++) {
			for (uint32_t r = sp->first; r <= sp->last; r++)
				assert_int_equal(umsi_matrix_free(x->m, c, r, false), 0);
		}
		assert_int_equal(stats(x).available, ncpus * per);
		assert_int_equal(stats(x).allocated, 0);
		assert_consistent(x->m);
		mx_free(x);
	}
}

static void test_the_largest_count_of_each_space_wins_the_choice(void **state)
{
	(void)state;

	/* A full count (up to 4096, a 13th bit) beats one less. */
	for (unsigned int i = 0; i < NSPACES; i++) {
		const struct space *sp = &spaces[i];
		struct mx *x = mx_new_space(sp, 130);
		struct tmask t;
		uint32_t cpu;

		/* CPUs 0 and 64 one below the others, in two blocks. */
		assert_int_equal(umsi_matrix_alloc_range(x->m, 0, 1, 0, &cpu), (int)sp->first);
		assert_int_equal(umsi_matrix_alloc_range(x->m, 64, 1, 0, &cpu), (int)sp->first);
		assert_int_equal(cpu, 64);
		assert_int_equal(umsi_matrix_alloc(x->m, NULL, 0, &cpu), (int)sp->first);
		assert_int_equal(cpu, 1);
		assert_int_equal(umsi_matrix_alloc(x->m, one_cpu(&t, 130, 64), 0, &cpu),
				 (int)sp->first + 1);
		assert_int_equal(cpu, 64);
		assert_int_equal(umsi_matrix_alloc_range(x->m, 60, 10, 0, &cpu), (int)sp->first);
		assert_int_equal(cpu, 60);
		assert_consistent(x->m);
		mx_free(x);
	}
}

static void test_blocks_of_32_are_aligned_in_every_space(void **state)
{
	(void)state;

	for (unsigned int i = 0; i < NSPACES; i++) {
		const struct space *sp = &spaces[i];
		struct mx *x = mx_new_space(sp, 2);
		/* Aligned blocks wholly inside [first, last]. */
		uint32_t want = ((sp->last + 1) / 32 - (sp->first + 31) / 32) * 2, n = 0;
		uint32_t cpu, last_base[2] = { 0, 0 };
		int v;

		while ((v = umsi_matrix_alloc_block(x->m, NULL, 5, &cpu)) >= 0) {
			assert_int_equal(v % 32, 0);
			assert_true((uint32_t)v >= sp->first && (uint32_t)v + 31 <= sp->last);
			for (unsigned int k = 0; k < 32; k++)
				assert_true(umsi_matrix_is_allocated(x->m, cpu, (unsigned int)v + k));
			if (n >= 2)
				assert_int_equal((uint32_t)v, last_base[cpu] + 32);
			last_base[cpu] = (uint32_t)v;
			n++;
		}
		assert_int_equal(v, -UMSI_ENOSPC);
		assert_int_equal(n, want);
		assert_int_equal(stats(x).allocated, want * 32);
		assert_consistent(x->m);
		/* A free block of 16 is left where 32 was not. */
		if (sp->first == 1) {
			assert_int_equal(umsi_matrix_alloc_block(x->m, NULL, 4, &cpu), 16);
			assert_int_equal(umsi_matrix_free_block(x->m, cpu, 16, 4), 0);
		}
		snapshot(x);
		assert_int_equal(umsi_matrix_free_block(x->m, 0, sp->nvec, 5), -UMSI_EINVAL);
		assert_int_equal(umsi_matrix_free_block(x->m, 0, sp->nvec - 16, 5), -UMSI_EINVAL);
		assert_unchanged(x);
		mx_free(x);
	}
}

static void test_managed_reservations_and_spread_in_every_space(void **state)
{
	(void)state;

	for (unsigned int i = 0; i < NSPACES; i++) {
		const struct space *sp = &spaces[i];
		uint32_t per = sp->last - sp->first + 1, cpu, seen = 0;
		struct mx *x = mx_new_space(sp, 66);
		struct tmask t;
		uint64_t classes[UMSI_MATRIX_MAX_VECTORS / 16 / 64] = { 0 };

		/* Two reservations on every CPU take the two lowest vectors. */
		tmask_clear(&t, 66);
		for (uint32_t c = 0; c < 66; c++)
			tmask_set(&t, c);
		assert_int_equal(umsi_matrix_reserve_managed(x->m, &t.cm), 0);
		assert_int_equal(umsi_matrix_reserve_managed(x->m, &t.cm), 0);
		assert_int_equal(umsi_matrix_vector_state(x->m, 65, sp->first), UMSI_VECTOR_MANAGED_FREE);
		assert_int_equal(umsi_matrix_vector_state(x->m, 65, sp->first + 1),
				 UMSI_VECTOR_MANAGED_FREE);
		assert_int_equal(cpu_stats(x, 65).available, per - 2);
		assert_int_equal(stats(x).managed, 132);
		assert_int_equal(umsi_matrix_alloc_managed(x->m, one_cpu(&t, 66, 65), &cpu),
				 (int)sp->first);
		assert_int_equal(cpu, 65);
		/* Unmanaged allocation skips the reserved vectors. */
		assert_int_equal(umsi_matrix_alloc_range(x->m, 65, 1, 0, &cpu), (int)sp->first + 2);
		/* Spread: nvec / 16 classes of 16, each visited once before any
		 * is reused (the reserved vectors count as used in their class
		 * only once owned). */
		for (uint32_t k = 0; k + 3 < sp->nvec / 16; k++) {
			int v = umsi_matrix_alloc_range(x->m, 64, 1, UMSI_MATRIX_SPREAD, &cpu);
			uint32_t cls;

			assert_true(v >= 0);
			cls = (uint32_t)v / 16;
			assert_false((classes[cls / 64] >> (cls % 64)) & 1);
			classes[cls / 64] |= 1ull << (cls % 64);
			seen++;
		}
		assert_int_equal(seen + 3, sp->nvec / 16);
		/* Ending the reservations gives back the unused ones, highest
		 * first: CPU 65's in-use one stays. */
		snapshot(x);
		assert_int_equal(umsi_matrix_remove_managed(x->m, &(struct umsi_cpumask){
					 .words = (uint64_t[2]){ 0, 2 }, .nbits = 66 }), 0);
		assert_int_equal(umsi_matrix_vector_state(x->m, 65, sp->first + 1), UMSI_VECTOR_FREE);
		assert_int_equal(umsi_matrix_remove_managed(x->m, &(struct umsi_cpumask){
					 .words = (uint64_t[2]){ 0, 2 }, .nbits = 66 }), -UMSI_EINVAL);
		assert_int_equal(umsi_matrix_free(x->m, 65, sp->first, true), 0);
		assert_int_equal(umsi_matrix_remove_managed(x->m, &(struct umsi_cpumask){
					 .words = (uint64_t[2]){ 0, 2 }, .nbits = 66 }), 0);
		assert_int_equal(cpu_stats(x, 65).managed, 0);
		assert_int_equal(cpu_stats(x, 64).managed, 2);
		assert_consistent(x->m);
		mx_free(x);
	}
}

/* A 64-vector space with every kind of vector: the legacy range too. */
static void small_layout(struct umsi_matrix_config *cfg, uint32_t ncpus)
{
	umsi_matrix_space_config(cfg, ncpus, 64, 0x08, 0x3f);
	cfg->system_first = 0x3c;       /* 0x3c-0x3f on every CPU */
	cfg->system_last = 0x3f;
	cfg->reserved[0] = 1ull << 0x0c;
	cfg->legacy_first = 0x10;       /* ISA IRQs 0-15 at 0x10-0x1f */
	cfg->legacy_count = 16;
	cfg->legacy_cpu = 1;
}

static void test_legacy_irqs_on_a_64_vector_space(void **state)
{
	struct umsi_matrix_config cfg;
	struct mx *x;
	uint32_t cpu, n = 0;
	int v;
	(void)state;

	small_layout(&cfg, 3);
	x = mx_new_cfg(&cfg, true);
	/* 0x08-0x3b less 0x0c: 51; on the legacy CPU less 16: 35. */
	assert_int_equal(cpu_stats(x, 0).capacity, 51);
	assert_int_equal(cpu_stats(x, 1).capacity, 35);
	for (unsigned int irq = 0; irq < 16; irq++)
		assert_int_equal(umsi_matrix_assign_legacy(x->m, irq), 0x10 + (int)irq);
	assert_int_equal(umsi_matrix_assign_legacy(x->m, 16), -UMSI_EINVAL);
	assert_int_equal(umsi_matrix_vector_state(x->m, 1, 0x13), UMSI_VECTOR_LEGACY_ALLOCATED);
	assert_int_equal(umsi_matrix_vector_state(x->m, 0, 0x13), UMSI_VECTOR_FREE);
	assert_int_equal(cpu_stats(x, 1).legacy, 16);
	snapshot(x);
	assert_int_equal(umsi_matrix_free(x->m, 1, 0x13, false), -UMSI_EINVAL);
	assert_int_equal(umsi_matrix_alloc_at(x->m, 1, 0x13), -UMSI_EINVAL);
	assert_unchanged(x);
	while ((v = umsi_matrix_alloc(x->m, NULL, 0, &cpu)) >= 0) {
		assert_true(v >= 0x08 && v < 0x3c && v != 0x0c);
		assert_false(cpu == 1 && v >= 0x10 && v < 0x20);
		n++;
	}
	assert_int_equal(n, 51 + 35 + 51);
	assert_int_equal(umsi_matrix_release_legacy(x->m, 3), 0);
	assert_int_equal(stats(x).legacy, 15);
	assert_int_equal(umsi_matrix_alloc(x->m, NULL, 0, &cpu), -UMSI_ENOSPC);
	assert_consistent(x->m);
	mx_free(x);
}

/* umsi_matrix_size() and umsi_matrix_init() both refuse @cfg, and init
 * writes nothing. */
static void assert_space_rejected(const struct umsi_matrix_config *cfg)
{
	static unsigned char mem[1 << 16], copy[sizeof(mem)];
	struct umsi_matrix *m = (struct umsi_matrix *)(uintptr_t)1;

	assert_int_equal(umsi_matrix_size(cfg), 0);
	memset(mem, 0x5a, sizeof(mem));
	memcpy(copy, mem, sizeof(mem));
	assert_int_equal(umsi_matrix_init(mem, sizeof(mem), cfg, &m), -UMSI_EINVAL);
	assert_true(m == (struct umsi_matrix *)(uintptr_t)1);
	assert_memory_equal(mem, copy, sizeof(mem));
}

static void test_bad_space_configurations_are_rejected_and_write_nothing(void **state)
{
	struct umsi_matrix_config cfg, bad;
	struct umsi_matrix *m;
	size_t len;
	void *mem;
	(void)state;

	/* nvec 0 is the x86 space of 256, as before nvec existed. */
	umsi_matrix_default_config(&cfg, 4);
	len = umsi_matrix_size(&cfg);
	bad = cfg;
	bad.nvec = 0;
	assert_int_equal(umsi_matrix_size(&bad), len);
	mem = malloc(len);
	assert_non_null(mem);
	assert_int_equal(umsi_matrix_init(mem, len, &bad, &m), 0);
	assert_int_equal(umsi_matrix_nvec(m), 256);
	assert_int_equal(umsi_matrix_vector_state(m, 0, 0xff), UMSI_VECTOR_RESERVED);
	assert_int_equal(umsi_matrix_vector_state(m, 0, 0x100), -UMSI_EINVAL);
	free(mem);

	/* Sizes: not a multiple of 64, too small, too large. */
	umsi_matrix_space_config(&cfg, 4, 256, 1, 63);
	assert_true(umsi_matrix_size(&cfg) > 0);
	bad = cfg; bad.nvec = 100;
	assert_space_rejected(&bad);
	bad = cfg; bad.nvec = 32;
	assert_space_rejected(&bad);
	bad = cfg; bad.nvec = 8192;
	assert_space_rejected(&bad);
	bad = cfg; bad.nvec = UMSI_MATRIX_MAX_VECTORS + 64;
	assert_space_rejected(&bad);
	/* Reserved bits past the space. */
	bad = cfg; bad.nvec = 64; bad.reserved[1] = 1;
	assert_space_rejected(&bad);
	bad = cfg; bad.reserved[UMSI_MATRIX_MAX_VECTORS / 64 - 1] = 1ull << 63;
	assert_space_rejected(&bad);
	bad.nvec = UMSI_MATRIX_MAX_VECTORS;    /* ... inside the largest space */
	assert_true(umsi_matrix_size(&bad) > 0);
	/* Ranges past the space. */
	umsi_matrix_space_config(&bad, 4, 64, 1, 64);
	assert_space_rejected(&bad);
	umsi_matrix_space_config(&bad, 4, 2048, 1, 2048);
	assert_space_rejected(&bad);
	umsi_matrix_space_config(&bad, 4, 2048, 1, 0x10001);   /* clamped, not wrapped */
	assert_space_rejected(&bad);
	umsi_matrix_space_config(&bad, 4, 2048, 0x10001, 0x10001);
	assert_space_rejected(&bad);
	umsi_matrix_space_config(&bad, 4, 64, 1, 63);
	bad.system_first = 60; bad.system_last = 64;
	assert_space_rejected(&bad);
	small_layout(&bad, 4);
	assert_true(umsi_matrix_size(&bad) > 0);
	bad.legacy_first = 0x31;   /* 0x31 + 16 = 0x41: past 64 */
	bad.system_first = 1; bad.system_last = 0;
	assert_space_rejected(&bad);
	bad.legacy_first = 0x30;   /* 0x30-0x3f: inside */
	assert_true(umsi_matrix_size(&bad) > 0);
	/* The memory follows nvec. */
	umsi_matrix_space_config(&cfg, 64, 64, 1, 63);
	len = umsi_matrix_size(&cfg);
	umsi_matrix_space_config(&cfg, 64, 2048, 1, 2047);
	assert_true(umsi_matrix_size(&cfg) - len == 64 * (2048 - 64) / 4 + (2048 - 64) * 3 / 8);
}

/* ---- Property test: random operations against a reference model -------- */

#define PROP_MAX_CPUS   192u
/* Live vectors the model can track: ncpus * nvec must stay below. */
#define PROP_MAX_LIVE   (PROP_MAX_CPUS * 256u)
#define PROP_MAX_RES    64u
/* umsi_matrix_check() after every one of the first CHECK_ALL_DEFAULT
 * operations, then after every 64th (UMSI_MATRIX_CHECK_ALL overrides). */
#define CHECK_ALL_DEFAULT 1000000u

struct live {
	uint32_t cpu;
	uint16_t vec;
	uint8_t order;
};

/* The naive model: per-CPU bitmaps as plain arrays, linear scans. */
struct model {
	const struct umsi_matrix_config *cfg;
	uint32_t n;
	uint32_t nvec;                             /* vectors per CPU */
	bool blocked[UMSI_MATRIX_MAX_VECTORS];     /* on every CPU */
	bool online[PROP_MAX_CPUS];
	bool owned[PROP_MAX_CPUS][UMSI_MATRIX_MAX_VECTORS];
	bool managed[PROP_MAX_CPUS][UMSI_MATRIX_MAX_VECTORS];
	uint32_t avail[PROP_MAX_CPUS];
	uint32_t unused_managed[PROP_MAX_CPUS];
	bool legacy[UMSI_MATRIX_MAX_LEGACY];
	struct live singles[PROP_MAX_LIVE];        /* order 0 and blocks */
	uint32_t nsingles;
	struct live managed_live[PROP_MAX_LIVE];
	uint32_t nmanaged;
	uint64_t res[PROP_MAX_RES][PROP_MAX_CPUS / 64];
	uint32_t nres;
};

static bool model_blocked(const struct model *md, uint32_t cpu, unsigned int v)
{
	const struct umsi_matrix_config *cfg = md->cfg;

	if (md->blocked[v])
		return true;
	return cpu == cfg->legacy_cpu && cfg->legacy_count &&
	       v >= cfg->legacy_first && v < cfg->legacy_first + cfg->legacy_count;
}

static bool model_free(const struct model *md, uint32_t cpu, unsigned int v)
{
	return !model_blocked(md, cpu, v) && !md->owned[cpu][v] && !md->managed[cpu][v];
}

static void model_init(struct model *md, const struct umsi_matrix_config *cfg)
{
	memset(md, 0, sizeof(*md));
	md->cfg = cfg;
	md->n = cfg->ncpus;
	/* The header's rule: nvec 0 is the x86 space. */
	md->nvec = cfg->nvec ? cfg->nvec : UMSI_MATRIX_VECTORS;
	for (unsigned int v = 0; v < md->nvec; v++)
		md->blocked[v] = v < cfg->alloc_first || v > cfg->alloc_last ||
				 (v >= cfg->system_first && v <= cfg->system_last) ||
				 ((cfg->reserved[v / 64] >> (v % 64)) & 1);
	for (uint32_t c = 0; c < md->n; c++) {
		for (unsigned int v = 0; v < md->nvec; v++)
			md->avail[c] += model_free(md, c, v);
	}
}

static bool in_mask(const struct tmask *t, uint32_t c)
{
	return !t || tmask_test(t, c);
}

static int64_t model_best(const struct model *md, const struct tmask *t, uint32_t need)
{
	int64_t best = -1;
	uint32_t best_avail = need ? need - 1 : 0;

	for (uint32_t c = 0; c < md->n; c++) {
		if (md->online[c] && in_mask(t, c) && md->avail[c] > best_avail) {
			best_avail = md->avail[c];
			best = c;
		}
	}
	return best;
}

static unsigned int model_pick(const struct model *md, uint32_t cpu, bool spread)
{
	unsigned int best_used = UINT32_MAX, best = UINT32_MAX;

	if (!spread) {
		for (unsigned int v = 0; v < md->nvec; v++) {
			if (model_free(md, cpu, v))
				return v;
		}
		return UINT32_MAX;
	}
	for (unsigned int cls = 0; cls < md->nvec / 16; cls++) {
		unsigned int used = 0, first = UINT32_MAX;

		for (unsigned int v = cls * 16; v < cls * 16 + 16; v++) {
			used += md->owned[cpu][v];
			if (first == UINT32_MAX && model_free(md, cpu, v))
				first = v;
		}
		if (first != UINT32_MAX && used < best_used) {
			best_used = used;
			best = first;
		}
	}
	return best;
}

static unsigned int model_block(const struct model *md, uint32_t cpu, unsigned int order)
{
	unsigned int size = 1u << order;

	for (unsigned int base = 0; base < md->nvec; base += size) {
		unsigned int i;

		for (i = 0; i < size && model_free(md, cpu, base + i); i++)
			;
		if (i == size)
			return base;
	}
	return UINT32_MAX;
}

/* Random mask: empty, one CPU, a range, sparse or dense; NULL = all. */
static const struct tmask *random_mask(struct tmask *t, uint32_t n)
{
	uint32_t kind = rnd_below(10), first, count;

	tmask_clear(t, n);
	switch (kind) {
	case 0:
	case 1:
		return NULL;
	case 2:
		tmask_set(t, rnd_below(n));
		break;
	case 3:
	case 4:
		first = rnd_below(n);
		count = 1 + rnd_below(n - first);
		for (uint32_t c = first; c < first + count; c++)
			tmask_set(t, c);
		break;
	case 5:
		if (rnd_below(8) == 0)
			break;   /* empty */
		/* fall through */
	case 6:
		for (uint32_t c = 0; c < n; c++) {
			if (rnd_below(16) == 0)
				tmask_set(t, c);
		}
		break;
	default:
		for (uint32_t c = 0; c < n; c++) {
			if (rnd_below(4))
				tmask_set(t, c);
		}
		break;
	}
	return t;
}

static uint32_t mask_popcount(const struct tmask *t, uint32_t n)
{
	uint32_t k = 0;

	for (uint32_t c = 0; c < n; c++)
		k += tmask_test(t, c);
	return k;
}

struct prop {
	struct mx *x;
	struct model *md;
	uint64_t ops, by_kind[16], failures, full, empty;
};

static void expect_fail(struct prop *p, int got, int want)
{
	assert_int_equal(got, want);
	assert_unchanged(p->x);
	p->failures++;
}

static void record_alloc(struct prop *p, uint32_t cpu, int v, unsigned int order)
{
	struct model *md = p->md;

	for (unsigned int i = 0; i < (1u << order); i++) {
		assert_false(md->owned[cpu][v + i]);   /* never owned twice */
		md->owned[cpu][v + i] = true;
		assert_true(umsi_matrix_is_allocated(p->x->m, cpu, v + i));
	}
	md->avail[cpu] -= 1u << order;
	md->singles[md->nsingles++] = (struct live){ cpu, (uint16_t)v, (uint8_t)order };
}

/* Unmanaged allocation through a mask, a range or NULL, maybe spread. */
static void op_alloc(struct prop *p, const struct tmask *t, bool range, uint32_t first,
		     uint32_t count, int64_t exclude)
{
	struct model *md = p->md;
	bool spread = rnd_below(4) == 0;
	unsigned int flags = spread ? UMSI_MATRIX_SPREAD : 0;
	struct tmask r;
	int64_t want;
	uint32_t cpu = UINT32_MAX;
	int v;

	if (range) {
		tmask_clear(&r, md->n);
		for (uint32_t c = first; c < first + count; c++)
			tmask_set(&r, c);
		t = &r;
	}
	want = model_best(md, t, 1);
	if (want < 0)
		snapshot(p->x);
	v = range ? umsi_matrix_alloc_range(p->x->m, first, count, flags, &cpu)
		  : umsi_matrix_alloc(p->x->m, t ? &t->cm : NULL, flags, &cpu);
	if (want < 0) {
		expect_fail(p, v, -UMSI_ENOSPC);
		return;
	}
	assert_int_equal(cpu, want);
	assert_int_not_equal(cpu, exclude);
	assert_int_equal(v, model_pick(md, cpu, spread));
	record_alloc(p, cpu, v, 0);
}

/* A given vector on a given CPU, online or not. */
static void op_alloc_at(struct prop *p)
{
	struct model *md = p->md;
	uint32_t cpu = rnd_below(md->n);
	unsigned int v = rnd_below(md->nvec);
	int want = 0;

	if (model_blocked(md, cpu, v))
		want = -UMSI_EINVAL;
	else if (md->owned[cpu][v] || md->managed[cpu][v])
		want = -UMSI_EBUSY;
	if (want) {
		snapshot(p->x);
		expect_fail(p, umsi_matrix_alloc_at(p->x->m, cpu, v), want);
		return;
	}
	assert_int_equal(umsi_matrix_alloc_at(p->x->m, cpu, v), 0);
	record_alloc(p, cpu, (int)v, 0);
}

static void op_alloc_block(struct prop *p, const struct tmask *t)
{
	struct model *md = p->md;
	unsigned int order = rnd_below(UMSI_MATRIX_MAX_ORDER + 1);
	int64_t want = -1;
	uint32_t best_avail = 0, cpu = UINT32_MAX;
	unsigned int base = 0;
	int v;

	for (uint32_t c = 0; c < md->n; c++) {
		unsigned int b;

		if (!md->online[c] || !in_mask(t, c) || md->avail[c] <= best_avail)
			continue;
		b = model_block(md, c, order);
		if (b != UINT32_MAX) {
			want = c;
			best_avail = md->avail[c];
			base = b;
		}
	}
	if (want < 0)
		snapshot(p->x);
	v = umsi_matrix_alloc_block(p->x->m, t ? &t->cm : NULL, order, &cpu);
	if (want < 0) {
		expect_fail(p, v, -UMSI_ENOSPC);
		return;
	}
	assert_int_equal(cpu, want);
	assert_int_equal(v, base);
	record_alloc(p, cpu, v, order);
}

static void drop_single(struct model *md, uint32_t i)
{
	md->singles[i] = md->singles[--md->nsingles];
}

static void op_free(struct prop *p)
{
	struct model *md = p->md;
	uint32_t i;
	struct live l;
	unsigned int size;

	if (md->nsingles == 0 || rnd_below(32) == 0) {
		/* Free something that is not an unmanaged allocation. */
		uint32_t cpu = rnd_below(md->n);
		unsigned int v = rnd_below(md->nvec);

		if (md->owned[cpu][v])
			return;
		snapshot(p->x);
		expect_fail(p, umsi_matrix_free(p->x->m, cpu, v, rnd_below(2)), -UMSI_EINVAL);
		return;
	}
	i = rnd_below(md->nsingles);
	l = md->singles[i];
	size = 1u << l.order;
	if (l.order && rnd_below(2)) {
		assert_int_equal(umsi_matrix_free_block(p->x->m, l.cpu, l.vec, l.order), 0);
	} else {
		/* Or one vector at a time. */
		for (unsigned int k = 0; k < size; k++)
			assert_int_equal(umsi_matrix_free(p->x->m, l.cpu, l.vec + k, false), 0);
	}
	for (unsigned int k = 0; k < size; k++)
		md->owned[l.cpu][l.vec + k] = false;
	md->avail[l.cpu] += size;
	drop_single(md, i);
}

static void op_migrate(struct prop *p)
{
	struct model *md = p->md;
	struct tmask t;
	uint32_t i, n;
	struct live l;

	if (md->nsingles == 0)
		return;
	i = rnd_below(md->nsingles);
	l = md->singles[i];
	if (l.order)
		return;
	/* New vector on another CPU first, then release the old one. */
	tmask_clear(&t, md->n);
	for (uint32_t c = 0; c < md->n; c++) {
		if (c != l.cpu && rnd_below(2))
			tmask_set(&t, c);
	}
	n = md->nsingles;
	op_alloc(p, &t, false, 0, 0, l.cpu);
	if (md->nsingles == n)
		return;   /* no room elsewhere: the IRQ stays where it is */
	assert_int_equal(umsi_matrix_free(p->x->m, l.cpu, l.vec, false), 0);
	md->owned[l.cpu][l.vec] = false;
	md->avail[l.cpu]++;
	drop_single(md, i);
}

static void op_reserve(struct prop *p)
{
	struct model *md = p->md;
	struct tmask t;
	bool full = false;
	uint32_t k;
	int r;

	if (md->nres == PROP_MAX_RES)
		return;
	if (!random_mask(&t, md->n)) {
		tmask_clear(&t, md->n);
		tmask_set(&t, rnd_below(md->n));
	}
	k = mask_popcount(&t, md->n);
	for (uint32_t c = 0; c < md->n; c++)
		full |= tmask_test(&t, c) && md->avail[c] == 0;
	if (k == 0 || full)
		snapshot(p->x);
	r = umsi_matrix_reserve_managed(p->x->m, &t.cm);
	if (k == 0) {
		expect_fail(p, r, -UMSI_EINVAL);
		return;
	}
	if (full) {
		expect_fail(p, r, -UMSI_ENOSPC);
		return;
	}
	assert_int_equal(r, 0);
	for (uint32_t c = 0; c < md->n; c++) {
		unsigned int v;

		if (!tmask_test(&t, c))
			continue;
		v = model_pick(md, c, false);
		assert_int_equal(umsi_matrix_vector_state(p->x->m, c, v), UMSI_VECTOR_MANAGED_FREE);
		md->managed[c][v] = true;
		md->avail[c]--;
		md->unused_managed[c]++;
	}
	memcpy(md->res[md->nres++], t.w, sizeof(md->res[0]));
}

static void op_remove(struct prop *p)
{
	struct model *md = p->md;
	struct tmask t;
	bool stuck = false;
	uint32_t i;

	if (md->nres == 0)
		return;
	i = rnd_below(md->nres);
	tmask_clear(&t, md->n);
	memcpy(t.w, md->res[i], sizeof(md->res[0]));
	for (uint32_t c = 0; c < md->n; c++)
		stuck |= tmask_test(&t, c) && md->unused_managed[c] == 0;
	if (stuck) {
		snapshot(p->x);
		expect_fail(p, umsi_matrix_remove_managed(p->x->m, &t.cm), -UMSI_EINVAL);
		return;
	}
	assert_int_equal(umsi_matrix_remove_managed(p->x->m, &t.cm), 0);
	for (uint32_t c = 0; c < md->n; c++) {
		if (!tmask_test(&t, c))
			continue;
		/* The highest unused reservation goes. */
		for (unsigned int v = md->nvec; v-- > 0;) {
			if (md->managed[c][v] && !md->owned[c][v]) {
				md->managed[c][v] = false;
				break;
			}
		}
		md->avail[c]++;
		md->unused_managed[c]--;
	}
	memcpy(md->res[i], md->res[--md->nres], sizeof(md->res[0]));
}

static void op_alloc_managed(struct prop *p, const struct tmask *t)
{
	struct model *md = p->md;
	int64_t want = -1;
	uint32_t best = 0, cpu = UINT32_MAX;
	unsigned int vec = UINT32_MAX;
	int v;

	for (uint32_t c = 0; c < md->n; c++) {
		if (md->online[c] && in_mask(t, c) && md->unused_managed[c] > best) {
			best = md->unused_managed[c];
			want = c;
		}
	}
	if (want < 0)
		snapshot(p->x);
	v = umsi_matrix_alloc_managed(p->x->m, t ? &t->cm : NULL, &cpu);
	if (want < 0) {
		expect_fail(p, v, -UMSI_ENOSPC);
		return;
	}
	assert_int_equal(cpu, want);
	for (unsigned int k = 0; k < md->nvec && vec == UINT32_MAX; k++) {
		if (md->managed[cpu][k] && !md->owned[cpu][k])
			vec = k;
	}
	assert_int_equal(v, vec);
	md->owned[cpu][v] = true;
	md->unused_managed[cpu]--;
	md->managed_live[md->nmanaged++] = (struct live){ cpu, (uint16_t)v, 0 };
}

static void op_free_managed(struct prop *p)
{
	struct model *md = p->md;
	uint32_t i;
	struct live l;

	if (md->nmanaged == 0)
		return;
	i = rnd_below(md->nmanaged);
	l = md->managed_live[i];
	if (rnd_below(16) == 0) {
		/* Freed as the wrong kind: refused. */
		snapshot(p->x);
		expect_fail(p, umsi_matrix_free(p->x->m, l.cpu, l.vec, false), -UMSI_EINVAL);
		return;
	}
	assert_int_equal(umsi_matrix_free(p->x->m, l.cpu, l.vec, true), 0);
	md->owned[l.cpu][l.vec] = false;
	md->unused_managed[l.cpu]++;
	md->managed_live[i] = md->managed_live[--md->nmanaged];
}

static void op_online(struct prop *p)
{
	struct model *md = p->md;
	uint32_t c = rnd_below(md->n);
	bool up = rnd_below(2);

	/* Keep most CPUs online; an offline CPU keeps what it holds. */
	if (!up && rnd_below(3))
		up = true;
	if (md->online[c] == up) {
		snapshot(p->x);
		expect_fail(p, up ? umsi_matrix_online(p->x->m, c) : umsi_matrix_offline(p->x->m, c),
			    -UMSI_EINVAL);
		return;
	}
	assert_int_equal(up ? umsi_matrix_online(p->x->m, c) : umsi_matrix_offline(p->x->m, c), 0);
	md->online[c] = up;
}

static void op_legacy(struct prop *p)
{
	struct model *md = p->md;
	const struct umsi_matrix_config *cfg = md->cfg;
	unsigned int irq = rnd_below(cfg->legacy_count + 1u);
	unsigned int v = cfg->legacy_first + irq;

	if (irq == cfg->legacy_count) {
		/* No such ISA IRQ. */
		snapshot(p->x);
		expect_fail(p, rnd_below(2) ? umsi_matrix_assign_legacy(p->x->m, irq) :
					      umsi_matrix_release_legacy(p->x->m, irq),
			    -UMSI_EINVAL);
		return;
	}
	if (rnd_below(4) == 0) {
		/* The call that does not fit the state. */
		snapshot(p->x);
		if (md->legacy[irq])
			expect_fail(p, umsi_matrix_assign_legacy(p->x->m, irq), -UMSI_EBUSY);
		else
			expect_fail(p, umsi_matrix_release_legacy(p->x->m, irq), -UMSI_EINVAL);
		return;
	}
	if (!md->legacy[irq]) {
		assert_int_equal(umsi_matrix_assign_legacy(p->x->m, irq), v);
		assert_false(md->owned[cfg->legacy_cpu][v]);
	} else {
		assert_int_equal(umsi_matrix_release_legacy(p->x->m, irq), 0);
	}
	md->legacy[irq] = !md->legacy[irq];
	md->owned[cfg->legacy_cpu][v] = md->legacy[irq];
}

/* Compare every counter and every vector with the model. */
static void compare_with_model(struct prop *p)
{
	struct model *md = p->md;
	struct umsi_matrix_stats st = stats(p->x);
	uint32_t online = 0, avail = 0, managed = 0, managed_alloc = 0;

	for (uint32_t c = 0; c < md->n; c++) {
		struct umsi_matrix_cpu_stats cs = cpu_stats(p->x, c);
		uint32_t mgd = 0, mgd_alloc = 0;

		for (unsigned int v = 0; v < md->nvec; v++) {
			assert_int_equal(umsi_matrix_is_allocated(p->x->m, c, v), md->owned[c][v]);
			mgd += md->managed[c][v];
			mgd_alloc += md->managed[c][v] && md->owned[c][v];
			if (model_blocked(md, c, v) && md->owned[c][v])
				assert_true(c == md->cfg->legacy_cpu);
		}
		assert_int_equal(cs.online, md->online[c]);
		assert_int_equal(cs.available, md->avail[c]);
		assert_int_equal(cs.managed, mgd);
		assert_int_equal(cs.managed_allocated, mgd_alloc);
		online += md->online[c];
		avail += md->online[c] ? md->avail[c] : 0;
		managed += mgd;
		managed_alloc += mgd_alloc;
	}
	assert_int_equal(st.online, online);
	assert_int_equal(st.available, avail);
	assert_int_equal(st.managed, managed);
	assert_int_equal(st.managed_allocated, managed_alloc);
}

static void one_random_op(struct prop *p, bool filling)
{
	struct model *md = p->md;
	struct tmask t;
	const struct tmask *mask;
	uint32_t kind = rnd_below(100), first;

	/* Filling: allocations dominate; draining: allocations become frees. */
	if (!filling && kind < 42)
		kind = 42 + kind % 20;
	if (kind < 30) {
		mask = random_mask(&t, md->n);
		op_alloc(p, mask, false, 0, 0, -1);
		p->by_kind[0]++;
	} else if (kind < 38) {
		first = rnd_below(md->n);
		op_alloc(p, NULL, true, first, 1 + rnd_below(md->n - first), -1);
		p->by_kind[1]++;
	} else if (kind < 41) {
		op_alloc_block(p, random_mask(&t, md->n));
		p->by_kind[2]++;
	} else if (kind < 42) {
		op_alloc_at(p);
		p->by_kind[11]++;
	} else if (kind < 62) {
		op_free(p);
		p->by_kind[3]++;
	} else if (kind < 70) {
		op_migrate(p);
		p->by_kind[4]++;
	} else if (kind < 74) {
		op_reserve(p);
		p->by_kind[5]++;
	} else if (kind < 78) {
		op_remove(p);
		p->by_kind[6]++;
	} else if (kind < 84) {
		op_alloc_managed(p, random_mask(&t, md->n));
		p->by_kind[7]++;
	} else if (kind < 90) {
		op_free_managed(p);
		p->by_kind[8]++;
	} else if (kind < 97) {
		op_online(p);
		p->by_kind[9]++;
	} else {
		op_legacy(p);
		p->by_kind[10]++;
	}
}

static void run_property(const struct umsi_matrix_config *cfg, uint64_t seed, uint64_t nops)
{
	static struct model md;
	struct prop p = { 0 };
	bool filling = true;
	const char *env = getenv("UMSI_MATRIX_CHECK_ALL");
	uint64_t check_all = env ? strtoull(env, NULL, 0) : CHECK_ALL_DEFAULT;

	rng_state = seed;
	p.md = &md;
	p.x = mx_new_cfg(cfg, false);
	model_init(&md, cfg);
	assert_true(cfg->ncpus <= PROP_MAX_CPUS);
	assert_true(cfg->ncpus * md.nvec <= PROP_MAX_LIVE);
	assert_int_equal(umsi_matrix_nvec(p.x->m), md.nvec);
	for (uint32_t c = 0; c < cfg->ncpus; c++) {
		if (rnd_below(8)) {
			assert_int_equal(umsi_matrix_online(p.x->m, c), 0);
			md.online[c] = true;
		}
	}
	for (p.ops = 0; p.ops < nops; p.ops++) {
		/* Fill until (nearly) nothing is left on the online CPUs, then
		 * drain until (nearly) nothing is allocated, so the matrix goes
		 * through empty, exhausted and everything between; sometimes
		 * turn early. */
		struct umsi_matrix_stats st = stats(p.x);

		if (filling && (st.available < st.online || rnd_below(100000) == 0)) {
			filling = false;
			p.full += st.available < st.online;
		} else if (!filling && (md.nsingles < 8 || rnd_below(100000) == 0)) {
			filling = true;
			p.empty += md.nsingles < 8;
		}
		one_random_op(&p, filling);
		if (p.ops < check_all || p.ops % 64 == 0) {
			const char *why;
			uint32_t cpu;

			if (umsi_matrix_check_detail(p.x->m, &why, &cpu) != 0)
				fail_msg("after op %llu: %s (cpu %u)", (unsigned long long)p.ops, why, cpu);
		}
		if (p.ops % 8192 == 0)
			compare_with_model(&p);
	}
	compare_with_model(&p);
	assert_consistent(p.x->m);
	printf("  %u CPUs x %u vectors: %llu ops (alloc %llu, range %llu, block %llu, at %llu, free %llu, "
	       "migrate %llu, reserve %llu, remove %llu, managed alloc %llu, managed free %llu, "
	       "online/offline %llu, legacy %llu), %llu expected failures, "
	       "%llu times full, %llu times empty\n",
	       cfg->ncpus, md.nvec, (unsigned long long)p.ops,
	       (unsigned long long)p.by_kind[0], (unsigned long long)p.by_kind[1],
	       (unsigned long long)p.by_kind[2], (unsigned long long)p.by_kind[11],
	       (unsigned long long)p.by_kind[3],
	       (unsigned long long)p.by_kind[4], (unsigned long long)p.by_kind[5],
	       (unsigned long long)p.by_kind[6], (unsigned long long)p.by_kind[7],
	       (unsigned long long)p.by_kind[8], (unsigned long long)p.by_kind[9],
	       (unsigned long long)p.by_kind[10], (unsigned long long)p.failures,
	       (unsigned long long)p.full, (unsigned long long)p.empty);
	mx_free(p.x);
}

static uint64_t property_seed(void)
{
	const char *env = getenv("UMSI_MATRIX_SEED");

	return env ? strtoull(env, NULL, 0) : 0x2003u;
}

static uint64_t property_ops(void)
{
	const char *env = getenv("UMSI_MATRIX_OPS");

	return env ? strtoull(env, NULL, 0) : 1000000u;
}

static void test_property_random_operations_keep_every_invariant(void **state)
{
	struct umsi_matrix_config cfg;
	uint64_t seed = property_seed(), ops = property_ops();
	(void)state;

	printf("  seed %#llx (set UMSI_MATRIX_SEED to replay, UMSI_MATRIX_OPS to resize)\n",
	       (unsigned long long)seed);
	/* The x86 layout on three blocks of CPUs, the last one partial. */
	umsi_matrix_default_config(&cfg, 150);
	run_property(&cfg, seed, ops);
}

/*
 * The legacy CPU inside a later block, not CPU 0: the searches' bound
 * "below" leaves that CPU out of its block and tests it on its own.
 */
static void test_property_with_the_legacy_cpu_inside_a_later_block(void **state)
{
	struct umsi_matrix_config cfg;
	uint64_t seed = property_seed() + 5, ops = property_ops() / 4;
	(void)state;

	printf("  seed %#llx\n", (unsigned long long)seed);
	umsi_matrix_default_config(&cfg, 150);
	cfg.legacy_cpu = 100;
	run_property(&cfg, seed, ops);
}

static void test_property_on_a_tight_layout_that_runs_out_often(void **state)
{
	struct umsi_matrix_config cfg;
	uint64_t seed = property_seed() + 1, ops = property_ops() / 4;
	(void)state;

	/* 27 vectors per CPU, system vectors overlapping the allocatable
	 * range, a reserved vector and four legacy IRQs on CPU 66. */
	umsi_matrix_default_config(&cfg, 70);
	cfg.alloc_first = 0x20;
	cfg.alloc_last = 0x3f;
	cfg.system_first = 0x3c;
	cfg.system_last = 0xff;
	cfg.reserved[0] = 1ull << 0x2a;
	cfg.reserved[2] = 0;
	cfg.legacy_first = 0x34;
	cfg.legacy_count = 4;
	cfg.legacy_cpu = 66;
	printf("  seed %#llx\n", (unsigned long long)seed);
	run_property(&cfg, seed, ops);
}

static void test_property_in_spaces_of_64_256_2048_and_4096_vectors(void **state)
{
	struct umsi_matrix_config cfg;
	uint64_t seed = property_seed() + 3, ops = property_ops();
	(void)state;

	/* 64 vectors with system, reserved and legacy vectors, 130 CPUs. */
	small_layout(&cfg, 130);
	printf("  seed %#llx\n", (unsigned long long)seed);
	run_property(&cfg, seed, ops / 4);
	/* The IMSIC shape: identities 1-255, on two blocks of CPUs. Few
	 * enough CPUs for every soak to run out of vectors several times. */
	umsi_matrix_space_config(&cfg, 66, 256, 1, 255);
	run_property(&cfg, seed + 1, ops / 4);
	/* 2047 identities, the last two blocks of 32 reserved. */
	umsi_matrix_space_config(&cfg, 5, 2048, 1, 2047);
	cfg.system_first = 1984;
	cfg.system_last = 2047;
	run_property(&cfg, seed + 2, ops / 5);
	/* 4096 vectors, every one allocatable but one: counts of 13 bits. */
	umsi_matrix_space_config(&cfg, 3, 4096, 0, 4095);
	cfg.reserved[40] = 1ull << 5;
	run_property(&cfg, seed + 3, ops / 5);
}

static void test_property_on_a_layout_with_all_256_vectors(void **state)
{
	struct umsi_matrix_config cfg;
	uint64_t seed = property_seed() + 2, ops = property_ops() / 10;
	(void)state;

	full_layout(&cfg, 70);
	printf("  seed %#llx\n", (unsigned long long)seed);
	run_property(&cfg, seed, ops);
}

/* ---- Scale: every choice against a brute-force scan; a million vectors -- */

/*
 * A model small enough for 8192 CPUs: the available count and the online
 * state of every CPU, kept from what the calls return, and the choice
 * "most available, lowest CPU on ties" found by visiting every CPU.
 */
#define BF_MAX_LIVE  40000u
#define BF_MAX_RES   8u

struct bf {
	struct mx *x;
	uint32_t n;
	uint32_t *avail;
	bool *online;
	struct live *live;
	uint32_t nlive;
	uint64_t res[BF_MAX_RES][MASK_WORDS];
	uint32_t nres;
	uint32_t target;             /* vectors to fill up or drain down to */
	struct tmask sticky;         /* a mask kept for a while, so its CPUs fill up */
	uint64_t choices, enospc;
};

static bool bf_in(const struct tmask *t, uint32_t c)
{
	return !t || tmask_test(t, c);
}

/* The brute-force choice among CPUs @first .. @first + @count - 1 of @t. */
static int64_t bf_best(const struct bf *b, const struct tmask *t, uint32_t first,
		       uint32_t count)
{
	int64_t best = -1;
	uint32_t best_avail = 0;

	for (uint32_t c = first; c < first + count; c++) {
		if (b->online[c] && bf_in(t, c) && b->avail[c] > best_avail) {
			best_avail = b->avail[c];
			best = c;
		}
	}
	return best;
}

/* A random 64-bit word with each bit set with probability @num / 16. */
static uint64_t bf_word(unsigned int num)
{
	switch (num) {
	case 1: return rnd() & rnd() & rnd() & rnd();
	case 8: return rnd();
	default: return rnd() | rnd() | rnd() | rnd();   /* 15/16 */
	}
}

/*
 * A mask of one of the shapes callers pass: NULL, empty (with and without
 * words), one CPU, every CPU named explicitly (also with bits past the
 * last CPU), dense, half, sparse, a contiguous run, shorter than the
 * matrix, the sticky mask or its complement.
 */
static const struct tmask *bf_mask(struct bf *b, struct tmask *t)
{
	uint32_t n = b->n, first, count;

	tmask_clear(t, n);
	switch (rnd_below(14)) {
	case 0:
	case 1:
		return NULL;
	case 2:
		break;                                  /* empty */
	case 3:
		t->cm.nbits = 0;                        /* empty, no bits */
		t->cm.words = rnd_below(2) ? NULL : t->w;
		break;
	case 4:
		tmask_set(t, rnd_below(n));
		break;
	case 5:
		for (uint32_t c = 0; c < n; c++)
			tmask_set(t, c);                /* explicit "all" */
		break;
	case 6:
		/* Explicit "all" written as a wider mask: bits past the last
		 * CPU are ignored. */
		memset(t->w, 0xff, sizeof(t->w));
		t->cm.nbits = MAX_TEST_CPUS;
		break;
	case 7:
		for (uint32_t w = 0; w < (n + 63) / 64; w++)
			t->w[w] = bf_word(15);
		break;
	case 8:
		for (uint32_t w = 0; w < (n + 63) / 64; w++)
			t->w[w] = bf_word(8);
		break;
	case 9:
		for (uint32_t w = 0; w < (n + 63) / 64; w++)
			t->w[w] = bf_word(1);
		break;
	case 10:
		first = rnd_below(n);
		count = 1 + rnd_below(n - first);
		for (uint32_t c = first; c < first + count; c++)
			tmask_set(t, c);
		break;
	case 11:
		for (uint32_t w = 0; w < (n + 63) / 64; w++)
			t->w[w] = bf_word(8);
		t->cm.nbits = rnd_below(n + 1);
		break;
	case 12:
		*t = b->sticky;
		t->cm.words = t->w;
		break;
	default:
		for (uint32_t w = 0; w < MASK_WORDS; w++)
			t->w[w] = ~b->sticky.w[w];
		break;
	}
	/* Bits at or past nbits must not matter either. */
	if (t->cm.nbits < MAX_TEST_CPUS && t->cm.words && rnd_below(2))
		t->w[t->cm.nbits / 64] |= ~0ull << (t->cm.nbits % 64);
	if (t->cm.nbits < MAX_TEST_CPUS && t->cm.words && t->cm.nbits % 64 == 0 &&
	    t->cm.nbits / 64 < MASK_WORDS && rnd_below(2))
		t->w[t->cm.nbits / 64] = ~0ull;
	return t;
}

/* The vector a plain allocation must have taken: the lowest free one. */
static void bf_assert_lowest(const struct bf *b, uint32_t cpu, int v)
{
	assert_int_equal(umsi_matrix_vector_state(b->x->m, cpu, (unsigned int)v),
			 UMSI_VECTOR_ALLOCATED);
	for (int u = 0; u < v; u++)
		assert_int_not_equal(umsi_matrix_vector_state(b->x->m, cpu, (unsigned int)u),
				     UMSI_VECTOR_FREE);
}

static void bf_record(struct bf *b, uint32_t cpu, int v)
{
	b->avail[cpu]--;
	b->live[b->nlive++] = (struct live){ cpu, (uint16_t)v, 0 };
}

/* One allocation through a mask or a range, its choice checked. */
static void bf_alloc(struct bf *b, bool range)
{
	struct tmask t;
	const struct tmask *mask = NULL;
	uint32_t first = 0, count = b->n, cpu = UINT32_MAX;
	bool spread = rnd_below(8) == 0;
	int64_t want;
	int v;

	if (b->nlive == BF_MAX_LIVE)
		return;
	if (range) {
		first = rnd_below(b->n);
		count = 1 + rnd_below(b->n - first);
	} else {
		mask = bf_mask(b, &t);
	}
	want = bf_best(b, mask, first, count);
	if (want < 0)
		snapshot(b->x);
	if (range)
		v = umsi_matrix_alloc_range(b->x->m, first, count,
					    spread ? UMSI_MATRIX_SPREAD : 0, &cpu);
	else
		v = umsi_matrix_alloc(b->x->m, mask ? &mask->cm : NULL,
				      spread ? UMSI_MATRIX_SPREAD : 0, &cpu);
	b->choices++;
	if (want < 0) {
		assert_int_equal(v, -UMSI_ENOSPC);
		assert_unchanged(b->x);
		b->enospc++;
		return;
	}
	assert_true(v >= 0);
	if (cpu != want)
		fail_msg("%u CPUs: chose CPU %u (%u available), the scan CPU %lld (%u available)",
			 b->n, cpu, b->avail[cpu], (long long)want, b->avail[want]);
	if (!spread)
		bf_assert_lowest(b, cpu, v);
	bf_record(b, cpu, v);
}

static void bf_free(struct bf *b)
{
	uint32_t i;
	struct live l;

	if (b->nlive == 0)
		return;
	i = rnd_below(b->nlive);
	l = b->live[i];
	assert_int_equal(umsi_matrix_free(b->x->m, l.cpu, l.vec, false), 0);
	b->avail[l.cpu]++;
	b->live[i] = b->live[--b->nlive];
}

static void bf_online(struct bf *b)
{
	uint32_t c = rnd_below(b->n);

	/* Mostly online; offline CPUs keep their vectors and can be freed on. */
	if (b->online[c] && rnd_below(4) == 0) {
		assert_int_equal(umsi_matrix_offline(b->x->m, c), 0);
		b->online[c] = false;
	} else if (!b->online[c]) {
		assert_int_equal(umsi_matrix_online(b->x->m, c), 0);
		b->online[c] = true;
	}
}

/* A managed reservation (one vector on each CPU of a sparse mask) or the
 * release of one: both move available counts. */
static void bf_managed(struct bf *b)
{
	struct tmask t;
	bool full = false;
	uint32_t k = 0;
	int r;

	if (b->nres > 0 && (b->nres == BF_MAX_RES || rnd_below(2))) {
		uint32_t i = rnd_below(b->nres);

		tmask_clear(&t, b->n);
		memcpy(t.w, b->res[i], sizeof(t.w));
		assert_int_equal(umsi_matrix_remove_managed(b->x->m, &t.cm), 0);
		for (uint32_t c = 0; c < b->n; c++)
			b->avail[c] += tmask_test(&t, c);
		memcpy(b->res[i], b->res[--b->nres], sizeof(b->res[i]));
		return;
	}
	tmask_clear(&t, b->n);
	if (rnd_below(2)) {
		tmask_set(&t, rnd_below(b->n));
	} else {
		for (uint32_t w = 0; w < (b->n + 63) / 64; w++)
			t.w[w] = bf_word(1);
		if (b->n % 64)
			t.w[b->n / 64] &= (1ull << (b->n % 64)) - 1;
	}
	for (uint32_t c = 0; c < b->n; c++) {
		k += tmask_test(&t, c);
		full |= tmask_test(&t, c) && b->avail[c] == 0;
	}
	if (k == 0 || full)
		snapshot(b->x);
	r = umsi_matrix_reserve_managed(b->x->m, &t.cm);
	if (k == 0 || full) {
		assert_int_equal(r, k == 0 ? -UMSI_EINVAL : -UMSI_ENOSPC);
		assert_unchanged(b->x);
		return;
	}
	assert_int_equal(r, 0);
	for (uint32_t c = 0; c < b->n; c++)
		b->avail[c] -= tmask_test(&t, c);
	memcpy(b->res[b->nres++], t.w, sizeof(t.w));
}

static void bf_compare_counts(const struct bf *b)
{
	assert_consistent(b->x->m);
	for (uint32_t c = 0; c < b->n; c++) {
		struct umsi_matrix_cpu_stats st = cpu_stats(b->x, c);

		assert_int_equal(st.available, b->avail[c]);
		assert_int_equal(st.online, b->online[c]);
	}
}

static void run_bruteforce(uint32_t n, uint32_t ops, uint32_t spread_fill)
{
	struct bf *b = calloc(1, sizeof(*b));
	uint32_t cpu, capacity = 0;
	int v;

	assert_non_null(b);
	b->n = n;
	b->x = mx_new(n, true);
	b->avail = calloc(n, sizeof(*b->avail));
	b->online = calloc(n, sizeof(*b->online));
	b->live = calloc(BF_MAX_LIVE, sizeof(*b->live));
	assert_non_null(b->avail);
	assert_non_null(b->online);
	assert_non_null(b->live);
	for (uint32_t c = 0; c < n; c++) {
		b->avail[c] = cpu_stats(b->x, c).available;
		b->online[c] = true;
		capacity += b->avail[c];
	}
	tmask_clear(&b->sticky, n);
	for (uint32_t w = 0; w < (n + 63) / 64; w++)
		b->sticky.w[w] = bf_word(8);
	/* Uneven counts to start from: ties and gaps both. */
	for (uint32_t c = 0; c < n && b->nlive < BF_MAX_LIVE / 2; c++) {
		for (uint32_t k = rnd_below(spread_fill + 1); k > 0; k--) {
			v = umsi_matrix_alloc_range(b->x->m, c, 1, 0, &cpu);
			assert_true(v >= 0);
			bf_record(b, cpu, v);
		}
	}
	for (uint32_t i = 0; i < ops; i++) {
		uint32_t kind = rnd_below(100);

		/* Now and then a new sticky mask, so its CPUs and the others
		 * drift apart (busy CPUs under idle tops, or the reverse). */
		if (i % 512 == 0) {
			for (uint32_t w = 0; w < (n + 63) / 64; w++)
				b->sticky.w[w] = bf_word(rnd_below(2) ? 8 : 1);
			b->target = rnd_below(capacity < BF_MAX_LIVE ? capacity : BF_MAX_LIVE);
		}
		/* Towards the target: mostly allocations below it, frees above. */
		if (kind < 92 && b->nlive > b->target)
			kind = kind < 30 ? kind : 58 + kind % 34;
		if (kind < 50)
			bf_alloc(b, false);
		else if (kind < 58)
			bf_alloc(b, true);
		else if (kind < 92)
			bf_free(b);
		else if (kind < 96)
			bf_online(b);
		else
			bf_managed(b);
		if (i % 1024 == 0)
			bf_compare_counts(b);
	}
	bf_compare_counts(b);
	printf("  %u CPUs: %llu choices checked (%llu of them -ENOSPC), %u vectors held\n",
	       n, (unsigned long long)b->choices, (unsigned long long)b->enospc, b->nlive);
	mx_free(b->x);
	free(b->avail);
	free(b->online);
	free(b->live);
	free(b);
}

static void test_every_choice_is_the_most_available_online_cpu_lowest_on_ties(void **state)
{
	(void)state;
	rng_state = property_seed() + 18;
	run_bruteforce(1, 40000, 150);
	run_bruteforce(64, 40000, 120);
	run_bruteforce(1024, 30000, 12);
	run_bruteforce(8192, 12000, 3);
}

/*
 * Bring-up and tear-down at scale: 8192 CPUs take a million vectors
 * through every kind of unmanaged allocation, then give them all back in
 * random order. Afterwards every counter, every CPU and every vector is as
 * it was, and the matrix chooses exactly as a new one does.
 */
#define SOAK_CPUS     8192u
#define SOAK_VECTORS  1000000u

static int soak_alloc(struct mx *x, uint32_t i, const struct tmask *masks,
		      struct live *l)
{
	uint32_t cpu = UINT32_MAX, first;
	unsigned int order = 0;
	int v;

	switch (i % 16) {
	case 10:
		v = umsi_matrix_alloc(x->m, &masks[0].cm, 0, &cpu);   /* explicit all */
		break;
	case 11:
		v = umsi_matrix_alloc(x->m, &masks[1 + (i / 16) % 3].cm, 0, &cpu);
		break;
	case 12:
		first = rnd_below(SOAK_CPUS);
		v = umsi_matrix_alloc_range(x->m, first, 1 + rnd_below(SOAK_CPUS - first), 0,
					    &cpu);
		break;
	case 13:
		/* Multi-message MSI: 2, 4 or 8 vectors, aligned. */
		order = 1 + rnd_below(3);
		v = umsi_matrix_alloc_block(x->m, NULL, order, &cpu);
		break;
	case 14:
		v = umsi_matrix_alloc(x->m, NULL, UMSI_MATRIX_SPREAD, &cpu);
		break;
	default:
		v = umsi_matrix_alloc(x->m, NULL, 0, &cpu);
		break;
	}
	*l = (struct live){ cpu, (uint16_t)v, (uint8_t)order };
	return v < 0 ? v : (int)(1u << order);
}

static void soak_free(struct mx *x, const struct live *l)
{
	if (l->order && (l->vec & 1) == 0 && rnd_below(2)) {
		assert_int_equal(umsi_matrix_free_block(x->m, l->cpu, l->vec, l->order), 0);
		return;
	}
	for (unsigned int k = 0; k < (1u << l->order); k++)
		assert_int_equal(umsi_matrix_free(x->m, l->cpu, l->vec + k, false), 0);
}

static void test_a_million_vectors_brought_up_and_torn_down_leave_exact_accounting(void **state)
{
	struct mx *x = mx_new(SOAK_CPUS, true), *fresh = mx_new(SOAK_CPUS, true);
	struct umsi_matrix_cpu_stats *before = calloc(SOAK_CPUS, sizeof(*before));
	unsigned char *states = malloc((size_t)SOAK_CPUS * UMSI_MATRIX_VECTORS);
	struct live *held = calloc(SOAK_VECTORS, sizeof(*held));
	struct tmask *masks = calloc(4, sizeof(*masks));
	struct umsi_matrix_stats st0 = stats(x), st;
	uint32_t nheld = 0, vectors = 0;
	int r;
	(void)state;

	assert_non_null(before);
	assert_non_null(states);
	assert_non_null(held);
	assert_non_null(masks);
	rng_state = property_seed() + 1000000;
	for (uint32_t c = 0; c < SOAK_CPUS; c++) {
		before[c] = cpu_stats(x, c);
		for (unsigned int v = 0; v < UMSI_MATRIX_VECTORS; v++)
			states[c * UMSI_MATRIX_VECTORS + v] =
				(unsigned char)umsi_matrix_vector_state(x->m, c, v);
	}
	for (unsigned int k = 0; k < 4; k++) {
		tmask_clear(&masks[k], SOAK_CPUS);
		for (uint32_t w = 0; w < MASK_WORDS; w++)
			masks[k].w[w] = k == 0 ? ~0ull : bf_word(k == 1 ? 8 : k == 2 ? 1 : 15);
	}

	/* Bring-up: a million vectors. */
	for (uint32_t i = 0; vectors < SOAK_VECTORS; i++) {
		r = soak_alloc(x, i, masks, &held[nheld]);
		if (r < 0) {
			/* Only a block can fail this far from full. */
			assert_int_equal(r, -UMSI_ENOSPC);
			assert_int_equal(i % 16, 13);
			continue;
		}
		nheld++;
		vectors += (uint32_t)r;
		if (vectors - (uint32_t)r < SOAK_VECTORS / 2 && vectors >= SOAK_VECTORS / 2)
			assert_consistent(x->m);
	}
	st = stats(x);
	assert_int_equal(st.allocated, vectors);
	assert_int_equal(st.available, st0.available - vectors);
	assert_consistent(x->m);

	/* Tear-down in random order. */
	for (uint32_t i = nheld; i > 1; i--) {
		uint32_t j = rnd_below(i);
		struct live t = held[i - 1];

		held[i - 1] = held[j];
		held[j] = t;
	}
	for (uint32_t i = 0; i < nheld; i++)
		soak_free(x, &held[i]);

	/* Exact accounting: as at the start, counter by counter. */
	assert_consistent(x->m);
	st = stats(x);
	assert_int_equal(st.ncpus, st0.ncpus);
	assert_int_equal(st.online, st0.online);
	assert_int_equal(st.available, st0.available);
	assert_int_equal(st.allocated, 0);
	assert_int_equal(st.managed, st0.managed);
	assert_int_equal(st.managed_allocated, st0.managed_allocated);
	assert_int_equal(st.legacy, st0.legacy);
	for (uint32_t c = 0; c < SOAK_CPUS; c++) {
		struct umsi_matrix_cpu_stats now = cpu_stats(x, c);

		/* Field by field: the struct has padding after "online". */
		assert_int_equal(now.capacity, before[c].capacity);
		assert_int_equal(now.available, before[c].available);
		assert_int_equal(now.allocated, before[c].allocated);
		assert_int_equal(now.managed, before[c].managed);
		assert_int_equal(now.managed_allocated, before[c].managed_allocated);
		assert_int_equal(now.legacy, before[c].legacy);
		assert_int_equal(now.online, before[c].online);
		for (unsigned int v = 0; v < UMSI_MATRIX_VECTORS; v++)
			assert_int_equal(umsi_matrix_vector_state(x->m, c, v),
					 states[c * UMSI_MATRIX_VECTORS + v]);
	}
	/* And it chooses as a new matrix does, through every path: the same
	 * calls with the same random numbers give the same answers. */
	for (uint32_t i = 0; i < 20000; i++) {
		struct live la, lb;
		uint64_t seed = rng_state;
		int ra, rb;

		ra = soak_alloc(x, i, masks, &la);
		rng_state = seed;
		rb = soak_alloc(fresh, i, masks, &lb);
		assert_int_equal(ra, rb);
		if (ra < 0)
			continue;
		assert_int_equal(la.cpu, lb.cpu);
		assert_int_equal(la.vec, lb.vec);
		if (i % 3 == 2) {
			seed = rng_state;
			soak_free(x, &la);
			rng_state = seed;
			soak_free(fresh, &lb);
		}
	}
	assert_consistent(x->m);
	printf("  %u CPUs: %u vectors in %u allocations, all freed; accounting exact\n",
	       SOAK_CPUS, vectors, nheld);
	mx_free(x);
	mx_free(fresh);
	free(before);
	free(states);
	free(held);
	free(masks);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_default_layout_gives_203_vectors_per_cpu_and_187_on_the_legacy_cpu),
		cmocka_unit_test(test_exceptions_system_vectors_and_syscall_gate_are_reserved_before_any_cpu_is_online),
		cmocka_unit_test(test_invalid_configurations_are_rejected),
		cmocka_unit_test(test_init_accepts_unaligned_memory_and_rejects_short_memory),
		cmocka_unit_test(test_exhaustion_returns_enospc_and_leaves_the_matrix_unchanged),
		cmocka_unit_test(test_an_all_or_nothing_reservation_fails_whole_when_one_cpu_is_full),
		cmocka_unit_test(test_bad_arguments_return_einval_and_leave_the_matrix_unchanged),
		cmocka_unit_test(test_allocation_picks_the_online_cpu_with_most_available_vectors_lowest_on_ties),
		cmocka_unit_test(test_a_freed_cpu_counts_at_once_for_every_choice_and_query),
		cmocka_unit_test(test_mask_and_range_choice_agrees_with_a_linear_scan),
		cmocka_unit_test(test_offline_cpus_are_never_chosen_and_keep_their_vectors),
		cmocka_unit_test(test_alloc_at_takes_exactly_the_vector_asked_for),
		cmocka_unit_test(test_blocks_are_aligned_contiguous_and_all_or_nothing),
		cmocka_unit_test(test_block_goes_to_the_best_cpu_that_has_an_aligned_hole),
		cmocka_unit_test(test_managed_reservation_survives_free_and_offline),
		cmocka_unit_test(test_managed_alloc_uses_the_cpu_with_most_unused_reservations),
		cmocka_unit_test(test_spread_visits_every_priority_class_before_reusing_one),
		cmocka_unit_test(test_legacy_isa_irqs_take_fixed_vectors_on_the_legacy_cpu),
		cmocka_unit_test(test_a_tight_custom_layout_is_honoured),
		cmocka_unit_test(test_a_layout_with_all_256_vectors_counts_up_to_256),
		cmocka_unit_test(test_property_random_operations_keep_every_invariant),
		cmocka_unit_test(test_property_with_the_legacy_cpu_inside_a_later_block),
		cmocka_unit_test(test_property_on_a_tight_layout_that_runs_out_often),
		cmocka_unit_test(test_property_on_a_layout_with_all_256_vectors),
		cmocka_unit_test(test_a_space_config_fills_a_flat_identity_space),
		cmocka_unit_test(test_every_space_exhausts_at_exactly_last_minus_first_plus_one_per_cpu),
		cmocka_unit_test(test_the_largest_count_of_each_space_wins_the_choice),
		cmocka_unit_test(test_blocks_of_32_are_aligned_in_every_space),
		cmocka_unit_test(test_managed_reservations_and_spread_in_every_space),
		cmocka_unit_test(test_legacy_irqs_on_a_64_vector_space),
		cmocka_unit_test(test_bad_space_configurations_are_rejected_and_write_nothing),
		cmocka_unit_test(test_property_in_spaces_of_64_256_2048_and_4096_vectors),
		cmocka_unit_test(test_every_choice_is_the_most_available_online_cpu_lowest_on_ties),
		cmocka_unit_test(test_a_million_vectors_brought_up_and_torn_down_leave_exact_accounting),
	};

	return cmocka_run_group_tests_name("vector matrix", tests, NULL, NULL);
}
