/* SPDX-License-Identifier: MIT */
/*
 * matrix_priv.h - the allocator's memory layout and the small helpers
 * every part of it reads (src/vector: matrix.c the API and per-CPU
 * choice, matrix_index.h the slice/tree/mask index, matrix_check.c the
 * invariant checker). How it all works: the comment at the top of
 * matrix.c.
 *
 * Private to src/vector.
 */
#ifndef UMSI_VECTOR_MATRIX_PRIV_H
#define UMSI_VECTOR_MATRIX_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <umsi/internal/bitops.h>
#include <umsi/internal/compiler.h>
#include <umsi/internal/matrix.h>

#define MATRIX_CPUS_PER_BLOCK   64u
#define MATRIX_MAX_SLICES       13u     /* counts go up to 4096: 13 bits */
/* Words of one CPU's bitmap in the x86 space, the one with a fast path. */
#define MATRIX_X86_WORDS        (UMSI_MATRIX_VECTORS / 64)
#define MATRIX_ALIGN            8u
/* "No such vector" from the finders, "no such block" from the tree. */
#define MATRIX_NO_VECTOR        0xffffffffu
#define MATRIX_NO_BLOCK         0xffffffffu
/* tree[0], above the root: no key is as large (see matrix_tree_raise()). */
#define MATRIX_TREE_TOP         0xffffffffu


/*
 * The counters of one CPU, an element of struct umsi_matrix, cpu[] (its
 * bitmaps are elsewhere, in maps). The unmanaged vectors a CPU owns are
 * not counted here: they are capacity - available - managed_count, and
 * umsi_matrix_check() counts them from the bitmaps.
 */
struct matrix_cpu {
	uint16_t available;
	uint16_t sliced;            /* the count the slices hold */
	uint16_t managed_count;     /* popcount of managed */
	uint16_t managed_allocated; /* popcount of owned & managed */
};

/*
 * The slices may lag behind the count of one CPU per block, the one in
 * "stale": a vector freed and allocated again on the same CPU (the steady
 * state of an IRQ layer, where the CPU a vector left is the best one for
 * the next) then flips no slice at all. Slices are brought up to date
 * before they are read for the block's own sets (top, the bound "below");
 * a query that reads them for a subset leaves the stale CPU out and
 * compares its count directly, so that a query never writes.
 */
struct matrix_block {
	uint64_t online;
	uint64_t top;           /* online CPUs at the block maximum */
	uint64_t stale;         /* at most one CPU: sliced != available */
	uint32_t below;         /* no online CPU outside top has more */
	/* To 144 bytes, 9 x 16: blocks[w] is then two instructions away, as
	 * it was at 104 (13 x 8); at 136 (17 x 8) it is three, and the mask
	 * search computes it for every block it visits. */
	uint32_t pad[3];
	uint64_t slice[MATRIX_MAX_SLICES];
};

struct umsi_matrix {
	uint32_t ncpus;
	uint32_t nblocks;
	uint32_t leaves;          /* power of two >= nblocks */
	uint32_t nslices;         /* bits needed by the largest capacity */
	uint32_t nvec;            /* vectors per CPU, a multiple of 64 */
	uint32_t wpc;             /* words per CPU bitmap: nvec / 64 */
	uint32_t map_words;       /* words per CPU's bitmaps: 2 * wpc */
	uint32_t legacy_cpu;
	uint16_t legacy_first;    /* halves: the header stays at 120 bytes */
	uint16_t legacy_count;
	uint32_t capacity;        /* allocatable vectors of an ordinary CPU */
	uint32_t legacy_capacity; /* ... of the legacy CPU */
	/* Global accounting, see include/umsi/matrix.h. */
	uint32_t online;
	uint32_t available;
	uint32_t allocated;
	uint32_t managed;
	uint32_t managed_allocated;
	uint32_t legacy;
	/*
	 * The frees of one online CPU that the index does not hold yet (the
	 * CPU's count in cpu[], its block, the tree): the CPU's key at its
	 * real count, 0 when there are none. Their number is the key's count
	 * less the CPU's (matrix_pend()), never 0 while the key is set. The steady state of an IRQ layer frees a vector and
	 * allocates the next on the CPU it left, which then costs the index
	 * nothing; a free elsewhere, or any other change, applies them first
	 * (matrix_settle()). Global "available" leaves them out, as the
	 * CPU's count does; umsi_matrix_stats() adds them.
	 */
	uint32_t pend_key;
	/* Never allocatable anywhere; on the legacy CPU, its range too.
	 * Each wpc words, after this header. */
	uint64_t *blocked;
	uint64_t *blocked_legacy;
	uint64_t *legacy_map;
	/*
	 * The bitmaps of every CPU, map_words apart (see matrix_map()):
	 * owned (allocated, of any kind) and managed (reserved for managed
	 * IRQs) interleaved, word 2w owned word w, word 2w + 1 managed word
	 * w, so that a vector's two bits are found without knowing nvec.
	 */
	uint64_t *maps;
	struct matrix_block *blocks;
	uint32_t *tree;
	/*
	 * The counters of every CPU, right after this header: 8 bytes each
	 * whatever nvec is, at a fixed offset from the matrix pointer, so
	 * that reading a CPU's count is one instruction (an index scaled by
	 * 8 from the pointer the caller passed). The searches read counts
	 * many times a step; with the counters at the head of a record of
	 * 8 + nvec / 4 bytes each read cost a multiply by a loaded stride.
	 */
	struct matrix_cpu cpu[];
};

_Static_assert(_Alignof(struct umsi_matrix) <= MATRIX_ALIGN, "matrix align");
_Static_assert(_Alignof(struct matrix_cpu) <= MATRIX_ALIGN, "cpu align");
_Static_assert(sizeof(struct matrix_cpu) % MATRIX_ALIGN == 0, "cpu size");
_Static_assert(sizeof(struct matrix_block) == 144, "block size");
_Static_assert(UMSI_MATRIX_MAX_CPUS <= 0x10000u, "CPU numbers fit the key");
_Static_assert(UMSI_MATRIX_MAX_VECTORS < (1u << MATRIX_MAX_SLICES) &&
	       UMSI_MATRIX_MAX_VECTORS < 0x10000u, "counts fit slices and keys");
_Static_assert(UMSI_MATRIX_VECTORS % UMSI_MATRIX_MIN_VECTORS == 0 &&
	       UMSI_MATRIX_MAX_VECTORS % UMSI_MATRIX_MIN_VECTORS == 0,
	       "spaces are whole words");

/* Tree keys: larger is better; 0 means "no online CPU". */
static inline uint32_t matrix_key(uint32_t count, uint32_t cpu)
{
	return (count << 16) | (0xffffu - cpu);
}

static inline uint32_t matrix_key_count(uint32_t key)
{
	return key >> 16;
}

static inline uint32_t matrix_key_cpu(uint32_t key)
{
	return 0xffffu - (key & 0xffffu);
}

/* The largest key whose count is @count: a key beats it iff its count is
 * larger. */
static inline uint32_t matrix_key_ceiling(uint32_t count)
{
	return (count << 16) | 0xffffu;
}

static inline uint32_t matrix_max(uint32_t a, uint32_t b)
{
	return a > b ? a : b;
}

/* The block of @cpu, and its bit in the block's bitmaps. */
static inline uint32_t matrix_blk(uint32_t cpu)
{
	return cpu / MATRIX_CPUS_PER_BLOCK;
}

static inline uint64_t matrix_bit(uint32_t cpu)
{
	return 1ull << (cpu % MATRIX_CPUS_PER_BLOCK);
}

/* The lowest CPU of the non-empty set @set of block @blk. */
static inline uint32_t matrix_first(uint32_t blk, uint64_t set)
{
	return blk * MATRIX_CPUS_PER_BLOCK + umsi_ctz64(set);
}

/* Index of the highest set bit; x != 0. */
static inline unsigned int matrix_fls64(uint64_t x)
{
	unsigned int n = 0;

	while (x >>= 1)
		n++;
	return n;
}

/*
 * Population count without the builtin: __builtin_popcountll becomes a
 * libgcc call on targets without a popcount instruction, and a kernel may
 * not link libgcc.
 */
static inline unsigned int matrix_popcount64(uint64_t x)
{
	x = x - ((x >> 1) & 0x5555555555555555ull);
	x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
	x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
	return (unsigned int)((x * 0x0101010101010101ull) >> 56);
}

static inline bool matrix_test_vec(const uint64_t *map, unsigned int v)
{
	return (map[v >> 6] >> (v & 63)) & 1;
}

static inline void matrix_set_vec(uint64_t *map, unsigned int v)
{
	map[v >> 6] |= 1ull << (v & 63);
}

/* The counters of @cpu. */
static inline struct matrix_cpu *matrix_cpu(const struct umsi_matrix *m,
					    uint32_t cpu)
{
	return (struct matrix_cpu *)(uintptr_t)&m->cpu[cpu];
}

/*
 * The interleaved bitmaps of @cpu (struct umsi_matrix, maps), and the
 * owned and managed bits of vector @v in them. The product is taken in 32
 * bits (at most 65536 CPUs x 128 words), which x86-64 multiplies straight
 * from memory and widens for free.
 */
static inline uint64_t *matrix_map(const struct umsi_matrix *m, uint32_t cpu)
{
	return m->maps + (cpu * m->map_words);
}

static inline uint64_t *matrix_owned_word(uint64_t *map, unsigned int v)
{
	return &map[2 * (v >> 6)];
}

static inline uint64_t *matrix_managed_word(uint64_t *map, unsigned int v)
{
	return &map[2 * (v >> 6) + 1];
}

static inline bool matrix_test_owned(const uint64_t *map, unsigned int v)
{
	return (map[2 * (v >> 6)] >> (v & 63)) & 1;
}

static inline bool matrix_test_managed(const uint64_t *map, unsigned int v)
{
	return (map[2 * (v >> 6) + 1] >> (v & 63)) & 1;
}

static inline const uint64_t *matrix_cpu_blocked(const struct umsi_matrix *m,
						 uint32_t cpu)
{
	return cpu == m->legacy_cpu ? m->blocked_legacy : m->blocked;
}

static inline uint32_t matrix_cpu_capacity(const struct umsi_matrix *m,
					   uint32_t cpu)
{
	return cpu == m->legacy_cpu ? m->legacy_capacity : m->capacity;
}

static inline bool matrix_cpu_online(const struct umsi_matrix *m, uint32_t cpu)
{
	const struct matrix_block *b = &m->blocks[matrix_blk(cpu)];

	return (b->online >> (cpu % MATRIX_CPUS_PER_BLOCK)) & 1;
}

/* Whether the mask words @words name @cpu (the caller bounds it). */
static inline bool matrix_mask_bit(const uint64_t *words, uint32_t cpu)
{
	return (words[cpu / 64] >> (cpu % 64)) & 1;
}

/* Whether @mask names @cpu. */
static inline bool matrix_mask_test(const struct umsi_cpumask *mask,
				    uint32_t cpu)
{
	return cpu < mask->nbits && matrix_mask_bit(mask->words, cpu);
}

/* Whether @cpu has frees the index does not hold (struct umsi_matrix). */
static inline bool matrix_is_pend(const struct umsi_matrix *m, uint32_t cpu)
{
	return m->pend_key && matrix_key_cpu(m->pend_key) == cpu;
}

/* How many frees the index does not hold: 0 when pend_key is 0. */
static inline uint32_t matrix_pend(const struct umsi_matrix *m)
{
	if (!m->pend_key)
		return 0;
	return matrix_key_count(m->pend_key) -
	       matrix_cpu(m, matrix_key_cpu(m->pend_key))->available;
}

/* The available count of @cpu, with its pending frees. */
static inline uint32_t matrix_avail(const struct umsi_matrix *m, uint32_t cpu)
{
	return matrix_cpu(m, cpu)->available +
	       (matrix_is_pend(m, cpu) ? matrix_pend(m) : 0u);
}

/* Key of the lowest CPU of the non-empty set @set of block @blk. */
static inline uint32_t matrix_set_key(const struct umsi_matrix *m, uint32_t blk,
				      uint64_t set)
{
	uint32_t cpu = matrix_first(blk, set);

	return matrix_key(matrix_cpu(m, cpu)->available, cpu);
}

#endif /* UMSI_VECTOR_MATRIX_PRIV_H */
