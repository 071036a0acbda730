/* SPDX-License-Identifier: MIT */
/*
 * bench/bench_matrix.c - cost of one free plus one allocation in the vector
 * matrix, in steady state, at 1, 64, 1024 and 8192 CPUs with the x86 space
 * of 256 vectors, and at 64 and 1024 CPUs with a space of 2048 identities
 * (a RISC-V AIA IMSIC with riscv,num-ids = 2047: identities 1 .. 2047).
 *
 * Workload (the one the Linux figures in docs/bench-matrix.md were taken
 * with): every CPU online, 4096 live unmanaged vectors (fewer where the
 * CPUs cannot hold 4096: three quarters of their capacity), then each step
 * frees a random live vector and allocates a new one through
 *  - "full":  the all-online mask (NULL),
 *  - "explicit": a mask that names every CPU, bit by bit (what a caller
 *             passes when it copies "all CPUs" into a mask of its own),
 *  - "half":  an arbitrary mask holding a random half of the CPUs,
 *  - "range": a contiguous range of half the CPUs that starts and ends
 *             inside a 64-CPU block (a NUMA node, say),
 *  - "one":   a mask naming one CPU, three quarters of the way up (an IRQ
 *             pinned to a CPU); the live vectors are then three quarters
 *             of that CPU's capacity,
 *  - "scan":  for comparison, the same "full" workload through a linear
 *             scan over every CPU's count, as Linux's kernel/irq/matrix.c
 *             chooses (written here from the algorithm, no Linux code).
 *
 * Without arguments it prints wall time per step (best of five runs) and
 * memory per CPU. With --callgrind (see the bench-matrix target in
 * mk/matrix.mk) it runs fewer steps and, around each scenario, resets and
 * dumps callgrind's counters, which count only inside bench_step_*(): one
 * step is exactly one free and one allocation. --cpus N runs only the
 * scenarios with N CPUs (for profiling one of them). Figures, never
 * assertions.
 *
 * The 2048-identity rows are labelled "CPUs/2048". A matrix.c from before
 * spaces had a size rejects their configuration; they are then left out.
 * They have no "scan" row: the lean scan is written for 256 vectors.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <umsi/internal/matrix.h>

#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define HAVE_CALLGRIND 1
#endif
#endif
#ifndef HAVE_CALLGRIND
#define CALLGRIND_ZERO_STATS do { } while (0)
#define CALLGRIND_DUMP_STATS_AT(s) do { (void)(s); } while (0)
#endif

#define LIVE_TARGET 4096u

enum mode { MODE_FULL, MODE_EXPLICIT, MODE_HALF, MODE_RANGE, MODE_ONE, MODE_SCAN, MODE_COUNT };
static const char *const mode_name[MODE_COUNT] = {
	"full", "explicit", "half", "range", "one", "scan"
};

struct slot {
	uint32_t cpu;
	int vec;
};

/*
 * The linear-scan baseline: per-CPU available counts and 256-bit maps,
 * the best CPU found by visiting every CPU of the mask, the vector by a
 * find-first-zero. Deliberately lean (no tracing, no managed maps), so it
 * is a lower bound for a scanning allocator, not a model of Linux's cost.
 */
struct scan {
	uint32_t ncpus;
	uint16_t *avail;
	uint64_t (*map)[4];
	uint64_t blocked[4];
};

struct bench {
	struct umsi_matrix *m;
	struct scan *s;
	struct slot *slots;
	uint32_t nslots;
	struct umsi_cpumask mask;
	uint32_t first, count;
};

static uint64_t rng = 0x2003;

static uint64_t rnd(void)
{
	uint64_t z = (rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void die(const char *what, int err)
{
	fprintf(stderr, "bench_matrix: %s failed: %d\n", what, err);
	exit(1);
}

static int scan_alloc(struct scan *s, uint32_t *cpu)
{
	uint32_t best = UINT32_MAX, best_avail = 0;

	for (uint32_t c = 0; c < s->ncpus; c++) {
		if (s->avail[c] > best_avail) {
			best_avail = s->avail[c];
			best = c;
		}
	}
	if (best == UINT32_MAX)
		return -UMSI_ENOSPC;
	for (unsigned int w = 0; w < 4; w++) {
		uint64_t free = ~(s->map[best][w] | s->blocked[w]);

		if (free) {
			unsigned int v = w * 64 + (unsigned int)__builtin_ctzll(free);

			s->map[best][w] |= 1ull << (v % 64);
			s->avail[best]--;
			*cpu = best;
			return (int)v;
		}
	}
	return -UMSI_ENOSPC;
}

static void scan_free(struct scan *s, uint32_t cpu, unsigned int v)
{
	s->map[cpu][v / 64] &= ~(1ull << (v % 64));
	s->avail[cpu]++;
}

/* One step each: free a live vector, allocate its replacement. */
__attribute__((noinline)) void bench_step_full(struct bench *b, uint32_t i)
{
	struct slot *s = &b->slots[i];

	umsi_matrix_free(b->m, s->cpu, (unsigned int)s->vec, false);
	s->vec = umsi_matrix_alloc(b->m, NULL, 0, &s->cpu);
}

__attribute__((noinline)) void bench_step_explicit(struct bench *b, uint32_t i)
{
	struct slot *s = &b->slots[i];

	umsi_matrix_free(b->m, s->cpu, (unsigned int)s->vec, false);
	s->vec = umsi_matrix_alloc(b->m, &b->mask, 0, &s->cpu);
}

__attribute__((noinline)) void bench_step_half(struct bench *b, uint32_t i)
{
	struct slot *s = &b->slots[i];

	umsi_matrix_free(b->m, s->cpu, (unsigned int)s->vec, false);
	s->vec = umsi_matrix_alloc(b->m, &b->mask, 0, &s->cpu);
}

__attribute__((noinline)) void bench_step_one(struct bench *b, uint32_t i)
{
	struct slot *s = &b->slots[i];

	umsi_matrix_free(b->m, s->cpu, (unsigned int)s->vec, false);
	s->vec = umsi_matrix_alloc(b->m, &b->mask, 0, &s->cpu);
}

__attribute__((noinline)) void bench_step_range(struct bench *b, uint32_t i)
{
	struct slot *s = &b->slots[i];

	umsi_matrix_free(b->m, s->cpu, (unsigned int)s->vec, false);
	s->vec = umsi_matrix_alloc_range(b->m, b->first, b->count, 0, &s->cpu);
}

__attribute__((noinline)) void bench_step_scan(struct bench *b, uint32_t i)
{
	struct slot *s = &b->slots[i];

	scan_free(b->s, s->cpu, (unsigned int)s->vec);
	s->vec = scan_alloc(b->s, &s->cpu);
}

static void step(struct bench *b, enum mode mode, uint32_t i)
{
	switch (mode) {
	case MODE_FULL: bench_step_full(b, i); break;
	case MODE_EXPLICIT: bench_step_explicit(b, i); break;
	case MODE_HALF: bench_step_half(b, i); break;
	case MODE_ONE: bench_step_one(b, i); break;
	case MODE_RANGE: bench_step_range(b, i); break;
	default: bench_step_scan(b, i); break;
	}
}

static int alloc_one(struct bench *b, enum mode mode, uint32_t *cpu)
{
	switch (mode) {
	case MODE_FULL: return umsi_matrix_alloc(b->m, NULL, 0, cpu);
	case MODE_EXPLICIT: return umsi_matrix_alloc(b->m, &b->mask, 0, cpu);
	case MODE_HALF: return umsi_matrix_alloc(b->m, &b->mask, 0, cpu);
	case MODE_ONE: return umsi_matrix_alloc(b->m, &b->mask, 0, cpu);
	case MODE_RANGE: return umsi_matrix_alloc_range(b->m, b->first, b->count, 0, cpu);
	default: return scan_alloc(b->s, cpu);
	}
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

struct result {
	uint32_t live, targets;
	double ns;
	size_t bytes;
};

/* A machine: its CPUs and the vectors of each CPU's space. */
struct shape {
	uint32_t ncpus, nvec;
};

static void shape_config(struct umsi_matrix_config *cfg, struct shape sh)
{
	umsi_matrix_default_config(cfg, sh.ncpus);
	if (sh.nvec == 256)
		return;
	/* Field by field rather than umsi_matrix_space_config(), so that the
	 * benchmark still links against a matrix.c without it. */
	memset(cfg->reserved, 0, sizeof(cfg->reserved));
	cfg->nvec = sh.nvec;
	cfg->alloc_first = 1;
	cfg->alloc_last = (uint16_t)(sh.nvec - 1);
	cfg->system_first = 1;
	cfg->system_last = 0;
	cfg->legacy_count = 0;
}

static struct result run(struct shape sh, enum mode mode, uint32_t steps, int repeats,
			 bool callgrind)
{
	uint32_t ncpus = sh.ncpus;
	struct umsi_matrix_config cfg;
	struct bench b = { 0 };
	struct result r = { 0 };
	uint64_t *words = calloc((ncpus + 63) / 64, sizeof(uint64_t));
	uint32_t *idx = malloc(sizeof(uint32_t) * steps);
	void *mem;
	uint64_t capacity = 0;
	char label[96];
	int err;

	/* Each scenario draws from its own seed, so adding or dropping one
	 * leaves the masks and victims of the others as they were. */
	rng = 0x2003u + 16u * ncpus + (uint64_t)mode;
	if (sh.nvec != 256)
		rng += (uint64_t)sh.nvec << 32;
	shape_config(&cfg, sh);
	r.bytes = umsi_matrix_size(&cfg);
	if (r.bytes == 0) {
		free(words);
		free(idx);
		return r;   /* this matrix.c has no such space */
	}
	mem = malloc(r.bytes);
	if (!mem || !words || !idx)
		die("malloc", 0);
	err = umsi_matrix_init(mem, r.bytes, &cfg, &b.m);
	if (err)
		die("umsi_matrix_init", err);
	for (uint32_t c = 0; c < ncpus; c++) {
		err = umsi_matrix_online(b.m, c);
		if (err)
			die("umsi_matrix_online", err);
	}

	/* The CPUs the scenario may use, and their capacity. */
	b.first = ncpus >= 64 ? ncpus / 4 + 3 : 0;
	b.count = ncpus >= 2 ? ncpus / 2 : 1;
	for (uint32_t c = 0; c < ncpus; c++) {
		bool in;
		struct umsi_matrix_cpu_stats st;

		if (mode == MODE_HALF)
			in = ncpus == 1 || (rnd() & 1);
		else if (mode == MODE_RANGE)
			in = c >= b.first && c < b.first + b.count;
		else if (mode == MODE_ONE)
			in = c == ncpus * 3 / 4;
		else
			in = true;
		if (!in)
			continue;
		words[c / 64] |= 1ull << (c % 64);
		umsi_matrix_cpu_stats(b.m, c, &st);
		capacity += st.capacity;
		r.targets++;
	}
	b.mask.words = words;
	b.mask.nbits = ncpus;

	if (mode == MODE_SCAN) {
		b.s = calloc(1, sizeof(*b.s));
		b.s->ncpus = ncpus;
		b.s->avail = calloc(ncpus, sizeof(uint16_t));
		b.s->map = calloc(ncpus, sizeof(*b.s->map));
		for (unsigned int v = 0; v < 256; v++) {
			if (umsi_matrix_vector_state(b.m, 1 % ncpus, v) != UMSI_VECTOR_FREE)
				b.s->blocked[v / 64] |= 1ull << (v % 64);
		}
		for (uint32_t c = 0; c < ncpus; c++)
			b.s->avail[c] = 256 - (uint16_t)(__builtin_popcountll(b.s->blocked[0]) +
				__builtin_popcountll(b.s->blocked[1]) +
				__builtin_popcountll(b.s->blocked[2]) +
				__builtin_popcountll(b.s->blocked[3]));
	}

	r.live = capacity * 3 / 4 < LIVE_TARGET ? (uint32_t)(capacity * 3 / 4) : LIVE_TARGET;
	b.slots = calloc(r.live, sizeof(*b.slots));
	b.nslots = r.live;
	for (uint32_t i = 0; i < r.live; i++) {
		b.slots[i].vec = alloc_one(&b, mode, &b.slots[i].cpu);
		if (b.slots[i].vec < 0)
			die("fill", b.slots[i].vec);
	}
	for (uint32_t i = 0; i < steps; i++)
		idx[i] = (uint32_t)(rnd() % r.live);

	/* Warm up into the steady state, then measure. */
	for (uint32_t i = 0; i < steps; i++)
		step(&b, mode, idx[i]);
	r.ns = 1e30;
	for (int k = 0; k < repeats; k++) {
		double t0;

		if (callgrind)
			CALLGRIND_ZERO_STATS;
		t0 = now_ns();
		for (uint32_t i = 0; i < steps; i++)
			step(&b, mode, idx[i]);
		t0 = (now_ns() - t0) / steps;
		if (t0 < r.ns)
			r.ns = t0;
		if (callgrind) {
			if (sh.nvec == 256)
				snprintf(label, sizeof(label), "cpus=%u mask=%s steps=%u",
					 ncpus, mode_name[mode], steps);
			else
				snprintf(label, sizeof(label), "cpus=%u/%u mask=%s steps=%u",
					 ncpus, sh.nvec, mode_name[mode], steps);
			CALLGRIND_DUMP_STATS_AT(label);
		}
	}
	for (uint32_t i = 0; i < b.nslots; i++) {
		if (b.slots[i].vec < 0)
			die("steady-state allocation", b.slots[i].vec);
	}
	if (mode != MODE_SCAN && umsi_matrix_check(b.m) != 0)
		die("umsi_matrix_check", umsi_matrix_check(b.m));
	if (b.s) {
		free(b.s->avail);
		free(b.s->map);
		free(b.s);
	}
	free(b.slots);
	free(mem);
	free(words);
	free(idx);
	return r;
}

int main(int argc, char **argv)
{
	static const struct shape sizes[] = {
		{ 1, 256 }, { 64, 256 }, { 1024, 256 }, { 8192, 256 },
		{ 64, 2048 }, { 1024, 2048 },
	};
	bool callgrind = false;
	uint32_t only = 0, steps;
	int repeats;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--callgrind") == 0) {
			callgrind = true;
		} else if (strcmp(argv[i], "--cpus") == 0 && i + 1 < argc) {
			only = (uint32_t)strtoul(argv[++i], NULL, 0);
		} else {
			fprintf(stderr, "usage: bench_matrix [--callgrind] [--cpus N]\n");
			return 2;
		}
	}
	steps = callgrind ? 20000 : 200000;
	repeats = callgrind ? 1 : 5;

	printf("vector matrix: one free + one allocation per step, steady state, all CPUs online\n");
	printf("%9s %-8s %7s %6s %10s %10s %10s\n", "cpus", "mask", "targets", "live",
	       "ns/step", "bytes/cpu", "total KiB");
	for (unsigned int s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		char name[32];

		if (only && sizes[s].ncpus != only)
			continue;
		if (sizes[s].nvec == 256)
			snprintf(name, sizeof(name), "%u", sizes[s].ncpus);
		else
			snprintf(name, sizeof(name), "%u/%u", sizes[s].ncpus, sizes[s].nvec);
		for (int mode = 0; mode < MODE_COUNT; mode++) {
			struct result r;

			if (mode == MODE_SCAN && sizes[s].nvec != 256)
				continue;
			r = run(sizes[s], (enum mode)mode, steps, repeats, callgrind);
			if (r.bytes == 0)
				continue;
			printf("%9s %-8s %7u %6u %10.1f %10.1f %10.1f\n", name,
			       mode_name[mode], r.targets, r.live, r.ns,
			       (double)r.bytes / sizes[s].ncpus, (double)r.bytes / 1024.0);
			fflush(stdout);
		}
	}
	return 0;
}
