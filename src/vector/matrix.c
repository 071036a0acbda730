/* SPDX-License-Identifier: MIT */
/*
 * src/vector/matrix.c - the per-CPU vector matrix (include/umsi/matrix.h).
 *
 * The semantics follow Linux's kernel/irq/matrix.c (managed reservations,
 * best-CPU choice, offline CPUs keeping what they hold); the data structure
 * does not. Linux scans every CPU of the mask on every allocation, which
 * costs about 190 K instructions per allocation and free on 8192 CPUs. Here
 * the choice of CPU is kept ready in three layers:
 *
 *  1. Per CPU (struct cpu_map): the 256-bit ownership and managed bitmaps
 *     and four counters. Which vector of a CPU to hand out is a find-first
 *     over four words.
 *
 *  2. Per block of 64 CPUs (struct cpu_block): the online bitmap and the
 *     available counts stored "bit-sliced": slice[s] has bit i set when CPU
 *     (64 * block + i) has bit s set in its available count. The CPU with
 *     the largest count among any subset of the block falls out of one AND
 *     per slice, from the top bit down: keep the candidates that have the
 *     bit whenever some candidate has it. What survives holds the maximum,
 *     and its lowest bit is the lowest such CPU. A count change flips only
 *     the slices of the bits that changed. The block also keeps "top", the
 *     online CPUs at its maximum, so that a change of one count usually
 *     updates the block's best in O(1) (a CPU rising to or past the
 *     maximum joins or replaces top; one falling below it leaves top, and
 *     only when top empties are the slices consulted again), and a subset
 *     that meets top has the block's maximum without any slice work.
 *
 *  3. Over the blocks, a segment tree (an implicit binary heap layout,
 *     root at index 1, leaf of block b at leaves + b) of keys
 *     (count << 16 | (0xffff - cpu)): the larger key is the better CPU, ties
 *     going to the lower CPU number without a second comparison. The root
 *     answers the all-online mask in O(1); a contiguous range is two
 *     partial blocks plus O(log n) tree nodes; an arbitrary mask is one
 *     pass over its words, skipping every word whose block maximum cannot
 *     beat the best so far and stopping once the global maximum is found.
 *
 * Counts are kept exact at every step, so umsi_matrix_check() can recompute
 * all three layers from the bitmaps and compare.
 *
 * Every public function checks all its arguments and all the conditions it
 * needs before it writes anything: a failure leaves the memory of the
 * matrix unchanged byte for byte (the tests compare snapshots). That is why
 * the all-or-nothing functions make two passes over their mask instead of
 * rolling back.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <umsi/matrix.h>

#define WORDS_PER_CPU   4u      /* 256 vectors / 64 */
#define CPUS_PER_BLOCK  64u
#define MAX_SLICES      9u      /* counts go up to 256: nine bits */
#define MATRIX_ALIGN    8u
#define NO_VECTOR       0xffffffffu   /* "no such vector" from the finders */

struct cpu_map {
	uint64_t owned[WORDS_PER_CPU];   /* allocated, of any kind */
	uint64_t managed[WORDS_PER_CPU]; /* reserved for managed IRQs */
	uint16_t available;
	uint16_t allocated;              /* unmanaged, owned */
	uint16_t managed_count;          /* popcount of managed */
	uint16_t managed_allocated;      /* popcount of owned & managed */
};

struct cpu_block {
	uint64_t online;
	uint64_t top;                    /* online CPUs at the block maximum */
	uint64_t slice[MAX_SLICES];
};

struct umsi_matrix {
	uint32_t ncpus;
	uint32_t nblocks;
	uint32_t leaves;          /* power of two >= nblocks */
	uint32_t nslices;         /* bits needed by the largest capacity */
	uint32_t legacy_cpu;
	uint32_t legacy_first;
	uint32_t legacy_count;
	uint32_t capacity;        /* allocatable vectors of an ordinary CPU */
	uint32_t legacy_capacity; /* ... of the legacy CPU */
	/* Global accounting, see include/umsi/matrix.h. */
	uint32_t online;
	uint32_t available;
	uint32_t allocated;
	uint32_t managed;
	uint32_t managed_allocated;
	uint32_t legacy;
	uint64_t blocked[WORDS_PER_CPU];        /* never allocatable anywhere */
	uint64_t blocked_legacy[WORDS_PER_CPU]; /* ... plus the legacy range */
	uint64_t legacy_map[WORDS_PER_CPU];
	struct cpu_map *cpus;
	struct cpu_block *blocks;
	uint32_t *tree;
};

_Static_assert(_Alignof(struct umsi_matrix) <= MATRIX_ALIGN, "matrix alignment");
_Static_assert(_Alignof(struct cpu_map) <= MATRIX_ALIGN, "cpu_map alignment");
_Static_assert(sizeof(struct cpu_map) % MATRIX_ALIGN == 0, "cpu_map size");
_Static_assert(UMSI_MATRIX_MAX_CPUS <= 0x10000u, "CPU numbers must fit the key");

/* Tree keys: larger is better; 0 means "no online CPU". */
static inline uint32_t key_make(uint32_t count, uint32_t cpu)
{
	return (count << 16) | (0xffffu - cpu);
}

static inline uint32_t key_count(uint32_t key)
{
	return key >> 16;
}

static inline uint32_t key_cpu(uint32_t key)
{
	return 0xffffu - (key & 0xffffu);
}

static inline uint32_t max_u32(uint32_t a, uint32_t b)
{
	return a > b ? a : b;
}

/* Index of the lowest set bit; x != 0. */
static inline unsigned int ctz64(uint64_t x)
{
#if (defined(__GNUC__) || defined(__clang__)) && UINTPTR_MAX > 0xffffffffu
	return (unsigned int)__builtin_ctzll(x);
#elif defined(__GNUC__) || defined(__clang__)
	/* 32-bit targets: __builtin_ctzll may become a libgcc call. */
	uint32_t lo = (uint32_t)x;

	return lo ? (unsigned int)__builtin_ctz(lo) :
		    32u + (unsigned int)__builtin_ctz((uint32_t)(x >> 32));
#else
	/* De Bruijn multiplication, for compilers without the builtin. */
	static const unsigned char pos[64] = {
		0, 1, 2, 53, 3, 7, 54, 27, 4, 38, 41, 8, 34, 55, 48, 28,
		62, 5, 39, 46, 44, 42, 22, 9, 24, 35, 59, 56, 49, 18, 29, 11,
		63, 52, 6, 26, 37, 40, 33, 47, 61, 45, 43, 21, 23, 58, 17, 10,
		51, 25, 36, 32, 60, 20, 57, 16, 50, 31, 19, 15, 30, 14, 13, 12,
	};
	return pos[((x & -x) * 0x022fdd63cc95386dull) >> 58];
#endif
}

/* Index of the highest set bit; x != 0. */
static inline unsigned int fls64(uint64_t x)
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
static inline unsigned int popcount64(uint64_t x)
{
	x = x - ((x >> 1) & 0x5555555555555555ull);
	x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
	x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
	return (unsigned int)((x * 0x0101010101010101ull) >> 56);
}

static inline bool test_vec(const uint64_t *map, unsigned int v)
{
	return (map[v >> 6] >> (v & 63)) & 1;
}

static inline void set_vec(uint64_t *map, unsigned int v)
{
	map[v >> 6] |= 1ull << (v & 63);
}

static inline void clear_vec(uint64_t *map, unsigned int v)
{
	map[v >> 6] &= ~(1ull << (v & 63));
}

static inline const uint64_t *cpu_blocked(const struct umsi_matrix *m, uint32_t cpu)
{
	return cpu == m->legacy_cpu ? m->blocked_legacy : m->blocked;
}

static inline uint32_t cpu_capacity(const struct umsi_matrix *m, uint32_t cpu)
{
	return cpu == m->legacy_cpu ? m->legacy_capacity : m->capacity;
}

static inline bool cpu_online(const struct umsi_matrix *m, uint32_t cpu)
{
	return (m->blocks[cpu / CPUS_PER_BLOCK].online >> (cpu % CPUS_PER_BLOCK)) & 1;
}

/* ---- Configuration and layout ------------------------------------------ */

void umsi_matrix_default_config(struct umsi_matrix_config *cfg, uint32_t ncpus)
{
	if (!cfg)
		return;
	cfg->ncpus = ncpus;
	cfg->alloc_first = UMSI_MATRIX_X86_ALLOC_FIRST;
	cfg->alloc_last = UMSI_MATRIX_X86_ALLOC_LAST;
	cfg->system_first = UMSI_MATRIX_X86_SYSTEM_FIRST;
	cfg->system_last = UMSI_MATRIX_X86_SYSTEM_LAST;
	cfg->legacy_first = UMSI_MATRIX_X86_LEGACY_FIRST;
	cfg->legacy_count = UMSI_MATRIX_MAX_LEGACY;
	cfg->legacy_cpu = 0;
	for (unsigned int w = 0; w < WORDS_PER_CPU; w++)
		cfg->reserved[w] = 0;
	cfg->reserved[UMSI_MATRIX_X86_SYSCALL / 64] |= 1ull << (UMSI_MATRIX_X86_SYSCALL % 64);
}

static bool config_valid(const struct umsi_matrix_config *cfg)
{
	if (!cfg || cfg->ncpus == 0 || cfg->ncpus > UMSI_MATRIX_MAX_CPUS)
		return false;
	if (cfg->alloc_first > cfg->alloc_last || cfg->alloc_last >= UMSI_MATRIX_VECTORS)
		return false;
	if (cfg->system_first <= cfg->system_last &&
	    cfg->system_last >= UMSI_MATRIX_VECTORS)
		return false;
	if (cfg->legacy_count > UMSI_MATRIX_MAX_LEGACY)
		return false;
	if (cfg->legacy_count == 0)
		return true;
	if (cfg->legacy_cpu >= cfg->ncpus ||
	    (uint32_t)cfg->legacy_first + cfg->legacy_count > UMSI_MATRIX_VECTORS)
		return false;
	/* A legacy vector must be distinct from every system or reserved one. */
	for (unsigned int v = cfg->legacy_first; v < cfg->legacy_first + cfg->legacy_count; v++) {
		if (v >= cfg->system_first && v <= cfg->system_last)
			return false;
		if (test_vec(cfg->reserved, v))
			return false;
	}
	return true;
}

static uint32_t blocks_for(uint32_t ncpus)
{
	return (ncpus + CPUS_PER_BLOCK - 1) / CPUS_PER_BLOCK;
}

static uint32_t leaves_for(uint32_t nblocks)
{
	uint32_t leaves = 1;

	while (leaves < nblocks)
		leaves <<= 1;
	return leaves;
}

static size_t align_up(size_t n)
{
	return (n + MATRIX_ALIGN - 1) & ~(size_t)(MATRIX_ALIGN - 1);
}

/* Bytes from the aligned start of the memory to the end of the tree. */
static size_t layout_size(uint32_t ncpus)
{
	uint32_t nblocks = blocks_for(ncpus);

	return align_up(sizeof(struct umsi_matrix)) +
	       (size_t)ncpus * sizeof(struct cpu_map) +
	       (size_t)nblocks * sizeof(struct cpu_block) +
	       (size_t)2 * leaves_for(nblocks) * sizeof(uint32_t);
}

size_t umsi_matrix_size(const struct umsi_matrix_config *cfg)
{
	if (!config_valid(cfg))
		return 0;
	return layout_size(cfg->ncpus) + MATRIX_ALIGN - 1;
}

/* ---- The three layers ----------------------------------------------------- */

/* Keep the candidates that have a bit, if any has it. */
static inline uint64_t narrow(uint64_t cand, uint64_t slice)
{
	uint64_t t = cand & slice;

	return t ? t : cand;
}

/*
 * The CPUs of @cand (non-empty, online) whose available count is the
 * largest among @cand: the bit-sliced maximum described at the top of the
 * file, unrolled and branch-free. Slices above the configured width are
 * zero and leave the candidates alone.
 */
static uint64_t block_top(const struct umsi_matrix *m, const struct cpu_block *b,
			  uint64_t cand)
{
	if (m->nslices > 8)
		cand = narrow(cand, b->slice[8]);
	cand = narrow(cand, b->slice[7]);
	cand = narrow(cand, b->slice[6]);
	cand = narrow(cand, b->slice[5]);
	cand = narrow(cand, b->slice[4]);
	cand = narrow(cand, b->slice[3]);
	cand = narrow(cand, b->slice[2]);
	cand = narrow(cand, b->slice[1]);
	return narrow(cand, b->slice[0]);
}

/* Key of the lowest CPU of the non-empty set @set of block @blk. */
static inline uint32_t set_key(const struct umsi_matrix *m, uint32_t blk, uint64_t set)
{
	uint32_t cpu = blk * CPUS_PER_BLOCK + ctz64(set);

	return key_make(m->cpus[cpu].available, cpu);
}

/* Best key among the online CPUs of block @blk that are in @cand. */
static uint32_t block_key(const struct umsi_matrix *m, uint32_t blk, uint64_t cand)
{
	const struct cpu_block *b = &m->blocks[blk];
	uint64_t hit;

	cand &= b->online;
	if (!cand)
		return 0;
	/* A subset that meets top has the block maximum. */
	hit = cand & b->top;
	if (hit)
		return set_key(m, blk, hit);
	return set_key(m, blk, block_top(m, b, cand));
}

/* Write the leaf of @blk and carry it up until a node does not change. */
static void tree_set(struct umsi_matrix *m, uint32_t blk, uint32_t key)
{
	uint32_t *tree = m->tree;
	uint32_t i = m->leaves + blk;

	if (tree[i] == key)
		return;
	tree[i] = key;
	while (i > 1) {
		i >>= 1;
		key = max_u32(tree[2 * i], tree[2 * i + 1]);
		if (tree[i] == key)
			return;
		tree[i] = key;
	}
}

/* Recompute block @blk from its slices (after online or offline). */
static void block_refresh(struct umsi_matrix *m, uint32_t blk)
{
	struct cpu_block *b = &m->blocks[blk];

	b->top = b->online ? block_top(m, b, b->online) : 0;
	tree_set(m, blk, b->top ? set_key(m, blk, b->top) : 0);
}

/*
 * The count of online CPU @cpu changed; its slices are already updated.
 * Bring top, the leaf and the tree along, in O(1) unless the CPU was the
 * last one at the block maximum and fell below it.
 */
static void block_count_changed(struct umsi_matrix *m, uint32_t cpu)
{
	uint32_t blk = cpu / CPUS_PER_BLOCK;
	struct cpu_block *b = &m->blocks[blk];
	uint64_t bit = 1ull << (cpu % CPUS_PER_BLOCK);
	uint32_t avail = m->cpus[cpu].available;
	uint32_t max = key_count(m->tree[m->leaves + blk]);

	if (avail > max) {
		b->top = bit;
	} else if (avail == max) {
		b->top |= bit;
	} else if (b->top & bit) {
		b->top &= ~bit;
		if (!b->top)
			b->top = block_top(m, b, b->online);
	} else {
		return;   /* below the maximum before and after */
	}
	tree_set(m, blk, set_key(m, blk, b->top));
}

/* Best key over blocks @lo .. @hi inclusive, in O(log n). */
static uint32_t tree_query(const struct umsi_matrix *m, uint32_t lo, uint32_t hi)
{
	const uint32_t *tree = m->tree;
	uint32_t l = lo + m->leaves, r = hi + m->leaves + 1;
	uint32_t best = 0;

	while (l < r) {
		if (l & 1)
			best = max_u32(best, tree[l++]);
		if (r & 1)
			best = max_u32(best, tree[--r]);
		l >>= 1;
		r >>= 1;
	}
	return best;
}

/*
 * Set the available count of @cpu: flip the slices of the bits that
 * change, then, if the CPU is online, the global count and the tree.
 */
static void set_available(struct umsi_matrix *m, uint32_t cpu, uint32_t avail)
{
	struct cpu_map *c = &m->cpus[cpu];
	struct cpu_block *b = &m->blocks[cpu / CPUS_PER_BLOCK];
	uint64_t bit = 1ull << (cpu % CPUS_PER_BLOCK);
	uint32_t diff = c->available ^ avail;

	while (diff) {
		b->slice[ctz64(diff)] ^= bit;
		diff &= diff - 1;
	}
	if (b->online & bit) {
		m->available = m->available - c->available + avail;
		c->available = (uint16_t)avail;
		block_count_changed(m, cpu);
	} else {
		c->available = (uint16_t)avail;
	}
}

/* ---- Masks ------------------------------------------------------------------- */

static bool mask_valid(const struct umsi_cpumask *mask)
{
	return !mask || mask->nbits == 0 || mask->words;
}

/* Number of words of @mask that can name a CPU of @m. */
static uint32_t mask_words(const struct umsi_matrix *m, const struct umsi_cpumask *mask)
{
	uint32_t nbits = mask->nbits < m->ncpus ? mask->nbits : m->ncpus;

	return (nbits + 63) / 64;
}

/* Word @w of @mask, without bits at or beyond nbits or the CPU count. */
static uint64_t mask_word(const struct umsi_matrix *m, const struct umsi_cpumask *mask,
			  uint32_t w)
{
	uint32_t nbits = mask->nbits < m->ncpus ? mask->nbits : m->ncpus;
	uint64_t bits = mask->words[w];

	if (w == nbits / 64)
		bits &= (1ull << (nbits % 64)) - 1;
	return bits;
}

/*
 * Best key among the online CPUs of an arbitrary @mask: one pass at most,
 * constant work per word. A word is skipped when its block cannot beat
 * the best so far: the subset's maximum is the block maximum if it meets
 * the block's top set, and at most one less if it does not. Only the words
 * that survive that test pay for the bit-sliced maximum.
 */
static uint32_t mask_best(const struct umsi_matrix *m, const struct umsi_cpumask *mask)
{
	uint32_t top = key_count(m->tree[1]);
	uint32_t nwords = mask_words(m, mask);
	uint32_t best = 0;

	if (top == 0)
		return 0;
	for (uint32_t w = 0; w < nwords; w++) {
		const struct cpu_block *b = &m->blocks[w];
		uint64_t bits = mask_word(m, mask, w) & b->online;
		uint32_t max = key_count(m->tree[m->leaves + w]);
		uint64_t hit = bits & b->top;
		uint32_t key;

		if (!bits)
			continue;
		if (hit) {
			if (max <= key_count(best))
				continue;
			key = set_key(m, w, hit);
		} else {
			if (max <= key_count(best) + 1)
				continue;
			key = set_key(m, w, block_top(m, b, bits));
		}
		if (key > best) {
			best = key;
			/* Later words hold higher CPU numbers: a tie loses. */
			if (key_count(best) == top)
				break;
		}
	}
	return best;
}

/* Best key among the online CPUs @first .. @first + @count - 1. */
static uint32_t range_best(const struct umsi_matrix *m, uint32_t first, uint32_t count)
{
	uint32_t last = first + count - 1;
	uint32_t lb = first / CPUS_PER_BLOCK, hb = last / CPUS_PER_BLOCK;
	uint64_t lo_bits = ~0ull << (first % CPUS_PER_BLOCK);
	uint64_t hi_bits = ~0ull >> (63 - last % CPUS_PER_BLOCK);
	uint32_t best;

	if (lb == hb)
		return block_key(m, lb, lo_bits & hi_bits);
	best = lo_bits == ~0ull ? m->tree[m->leaves + lb] : block_key(m, lb, lo_bits);
	best = max_u32(best, hi_bits == ~0ull ? m->tree[m->leaves + hb] :
			     block_key(m, hb, hi_bits));
	if (hb > lb + 1)
		best = max_u32(best, tree_query(m, lb + 1, hb - 1));
	return best;
}

/* ---- Choosing a vector inside one CPU ---------------------------------------- */

static unsigned int lowest_free(const struct umsi_matrix *m, uint32_t cpu)
{
	const struct cpu_map *c = &m->cpus[cpu];
	const uint64_t *blocked = cpu_blocked(m, cpu);

	for (unsigned int w = 0; w < WORDS_PER_CPU; w++) {
		uint64_t free = ~(c->owned[w] | c->managed[w] | blocked[w]);

		if (free)
			return w * 64 + ctz64(free);
	}
	return NO_VECTOR;
}

/*
 * Lowest free vector of the priority class (vector >> 4) that owns the
 * fewest vectors among the classes with a free one; ties to the lower
 * class.
 */
static unsigned int spread_free(const struct umsi_matrix *m, uint32_t cpu)
{
	const struct cpu_map *c = &m->cpus[cpu];
	const uint64_t *blocked = cpu_blocked(m, cpu);
	unsigned int best_used = NO_VECTOR, best_vec = NO_VECTOR;

	for (unsigned int cls = 0; cls < UMSI_MATRIX_VECTORS / 16; cls++) {
		unsigned int w = cls / 4, shift = (cls % 4) * 16;
		uint64_t free = (~(c->owned[w] | c->managed[w] | blocked[w]) >> shift) & 0xffff;
		unsigned int used;

		if (!free)
			continue;
		used = popcount64((c->owned[w] >> shift) & 0xffff);
		if (used < best_used) {
			best_used = used;
			best_vec = cls * 16 + ctz64(free);
		}
	}
	return best_vec;
}

/* Bits at the multiples of 2^order in a word: where aligned blocks start. */
static const uint64_t block_starts[UMSI_MATRIX_MAX_ORDER + 1] = {
	0xffffffffffffffffull, 0x5555555555555555ull, 0x1111111111111111ull,
	0x0101010101010101ull, 0x0001000100010001ull, 0x0000000100000001ull,
};

/*
 * Lowest free block of 2^@order vectors aligned to its size on @cpu, or
 * NO_VECTOR. After folding the free map onto itself by 1, 2, 4 ... bits, bit
 * i is set when vectors i .. i + 2^order - 1 are all free. Aligned blocks
 * of at most 32 never straddle two words.
 */
static unsigned int block_free(const struct umsi_matrix *m, uint32_t cpu, unsigned int order)
{
	const struct cpu_map *c = &m->cpus[cpu];
	const uint64_t *blocked = cpu_blocked(m, cpu);

	for (unsigned int w = 0; w < WORDS_PER_CPU; w++) {
		uint64_t free = ~(c->owned[w] | c->managed[w] | blocked[w]);

		for (unsigned int s = 1; s < (1u << order); s <<= 1)
			free &= free >> s;
		free &= block_starts[order];
		if (free)
			return w * 64 + ctz64(free);
	}
	return NO_VECTOR;
}

/* ---- Initialisation, online, offline ---------------------------------------- */

int umsi_matrix_init(void *mem, size_t len, const struct umsi_matrix_config *cfg,
		     struct umsi_matrix **out)
{
	uintptr_t base;
	size_t need, skip;
	struct umsi_matrix *m;
	uint64_t *words;
	uint32_t bits;

	if (!mem || !out || !config_valid(cfg))
		return -UMSI_EINVAL;
	base = ((uintptr_t)mem + MATRIX_ALIGN - 1) & ~(uintptr_t)(MATRIX_ALIGN - 1);
	skip = base - (uintptr_t)mem;
	need = layout_size(cfg->ncpus);
	if (len < skip || len - skip < need)
		return -UMSI_ENOMEM;

	/* Zero the whole layout; a local loop, the core calls no memset. */
	words = (uint64_t *)base;
	for (size_t i = 0; i < need / sizeof(uint64_t); i++)
		words[i] = 0;

	m = (struct umsi_matrix *)base;
	m->ncpus = cfg->ncpus;
	m->nblocks = blocks_for(cfg->ncpus);
	m->leaves = leaves_for(m->nblocks);
	m->legacy_cpu = cfg->legacy_count ? cfg->legacy_cpu : UINT32_MAX;
	m->legacy_first = cfg->legacy_first;
	m->legacy_count = cfg->legacy_count;
	m->cpus = (struct cpu_map *)(base + align_up(sizeof(*m)));
	m->blocks = (struct cpu_block *)(m->cpus + m->ncpus);
	m->tree = (uint32_t *)(m->blocks + m->nblocks);

	/* Everything outside [alloc_first, alloc_last] is blocked ... */
	for (unsigned int v = 0; v < UMSI_MATRIX_VECTORS; v++) {
		if (v < cfg->alloc_first || v > cfg->alloc_last ||
		    (v >= cfg->system_first && v <= cfg->system_last) ||
		    test_vec(cfg->reserved, v))
			set_vec(m->blocked, v);
	}
	/* ... and on the legacy CPU the legacy vectors too. */
	for (unsigned int i = 0; i < m->legacy_count; i++)
		set_vec(m->legacy_map, m->legacy_first + i);
	for (unsigned int w = 0; w < WORDS_PER_CPU; w++)
		m->blocked_legacy[w] = m->blocked[w] | m->legacy_map[w];
	m->capacity = m->legacy_capacity = UMSI_MATRIX_VECTORS;
	for (unsigned int w = 0; w < WORDS_PER_CPU; w++) {
		m->capacity -= popcount64(m->blocked[w]);
		m->legacy_capacity -= popcount64(m->blocked_legacy[w]);
	}

	bits = 1;
	while ((m->capacity >> bits) != 0)
		bits++;
	m->nslices = bits;

	/* Every CPU starts offline with its whole capacity available. */
	for (uint32_t cpu = 0; cpu < m->ncpus; cpu++)
		set_available(m, cpu, cpu_capacity(m, cpu));
	*out = m;
	return 0;
}

int umsi_matrix_online(struct umsi_matrix *m, uint32_t cpu)
{
	if (!m || cpu >= m->ncpus || cpu_online(m, cpu))
		return -UMSI_EINVAL;
	m->blocks[cpu / CPUS_PER_BLOCK].online |= 1ull << (cpu % CPUS_PER_BLOCK);
	m->online++;
	m->available += m->cpus[cpu].available;
	block_refresh(m, cpu / CPUS_PER_BLOCK);
	return 0;
}

int umsi_matrix_offline(struct umsi_matrix *m, uint32_t cpu)
{
	if (!m || cpu >= m->ncpus || !cpu_online(m, cpu))
		return -UMSI_EINVAL;
	m->blocks[cpu / CPUS_PER_BLOCK].online &= ~(1ull << (cpu % CPUS_PER_BLOCK));
	m->online--;
	m->available -= m->cpus[cpu].available;
	block_refresh(m, cpu / CPUS_PER_BLOCK);
	return 0;
}

/* ---- Unmanaged allocation --------------------------------------------------- */

/* Take one vector on @cpu, which has one available. */
static int take_vector(struct umsi_matrix *m, uint32_t cpu, unsigned int flags)
{
	struct cpu_map *c = &m->cpus[cpu];
	unsigned int v = (flags & UMSI_MATRIX_SPREAD) ? spread_free(m, cpu) : lowest_free(m, cpu);

	set_vec(c->owned, v);
	c->allocated++;
	m->allocated++;
	set_available(m, cpu, c->available - 1u);
	return (int)v;
}

static int alloc_key(struct umsi_matrix *m, uint32_t key, unsigned int flags, uint32_t *cpu)
{
	if (key_count(key) == 0)
		return -UMSI_ENOSPC;
	*cpu = key_cpu(key);
	return take_vector(m, *cpu, flags);
}

int umsi_matrix_alloc(struct umsi_matrix *m, const struct umsi_cpumask *mask,
		      unsigned int flags, uint32_t *cpu)
{
	if (!m || !cpu || (flags & ~UMSI_MATRIX_SPREAD) || !mask_valid(mask))
		return -UMSI_EINVAL;
	return alloc_key(m, mask ? mask_best(m, mask) : m->tree[1], flags, cpu);
}

int umsi_matrix_alloc_range(struct umsi_matrix *m, uint32_t first, uint32_t count,
			    unsigned int flags, uint32_t *cpu)
{
	if (!m || !cpu || (flags & ~UMSI_MATRIX_SPREAD) || count == 0 ||
	    first >= m->ncpus || count > m->ncpus - first)
		return -UMSI_EINVAL;
	return alloc_key(m, range_best(m, first, count), flags, cpu);
}

int umsi_matrix_alloc_at(struct umsi_matrix *m, uint32_t cpu, unsigned int vector)
{
	struct cpu_map *c;

	if (!m || cpu >= m->ncpus || vector >= UMSI_MATRIX_VECTORS ||
	    test_vec(cpu_blocked(m, cpu), vector))
		return -UMSI_EINVAL;
	c = &m->cpus[cpu];
	if (test_vec(c->owned, vector) || test_vec(c->managed, vector))
		return -UMSI_EBUSY;
	set_vec(c->owned, vector);
	c->allocated++;
	m->allocated++;
	set_available(m, cpu, c->available - 1u);
	return 0;
}

/*
 * Slow path of umsi_matrix_alloc_block(): the CPU with the most available
 * vectors among those of @mask (NULL: all) that have a free aligned block.
 * CPUs are visited in increasing order, so only a strictly larger count
 * replaces the best; a block whose maximum cannot beat it is skipped.
 */
static uint32_t block_scan(const struct umsi_matrix *m, const struct umsi_cpumask *mask,
			   unsigned int order, unsigned int *vector)
{
	uint32_t nwords = mask ? mask_words(m, mask) : m->nblocks;
	uint32_t best_cpu = UINT32_MAX, best_avail = (1u << order) - 1;

	for (uint32_t w = 0; w < nwords; w++) {
		uint64_t bits = m->blocks[w].online;

		if (mask)
			bits &= mask_word(m, mask, w);
		if (key_count(m->tree[m->leaves + w]) <= best_avail)
			continue;
		while (bits) {
			uint32_t cpu = w * CPUS_PER_BLOCK + ctz64(bits);
			unsigned int v;

			bits &= bits - 1;
			if (m->cpus[cpu].available <= best_avail)
				continue;
			v = block_free(m, cpu, order);
			if (v != NO_VECTOR) {
				best_cpu = cpu;
				best_avail = m->cpus[cpu].available;
				*vector = v;
			}
		}
	}
	return best_cpu;
}

int umsi_matrix_alloc_block(struct umsi_matrix *m, const struct umsi_cpumask *mask,
			    unsigned int order, uint32_t *cpu)
{
	uint32_t key, best, size;
	unsigned int v;
	struct cpu_map *c;

	if (!m || !cpu || order > UMSI_MATRIX_MAX_ORDER || !mask_valid(mask))
		return -UMSI_EINVAL;
	size = 1u << order;
	key = mask ? mask_best(m, mask) : m->tree[1];
	/* The best CPU has the largest count: if it is short, all are. */
	if (key_count(key) < size)
		return -UMSI_ENOSPC;
	best = key_cpu(key);
	v = block_free(m, best, order);
	if (v == NO_VECTOR) {
		/* Fragmented: find the best CPU that has a block. */
		best = block_scan(m, mask, order, &v);
		if (best == UINT32_MAX)
			return -UMSI_ENOSPC;
	}
	c = &m->cpus[best];
	for (unsigned int i = 0; i < size; i++)
		set_vec(c->owned, v + i);
	c->allocated += (uint16_t)size;
	m->allocated += size;
	set_available(m, best, c->available - size);
	*cpu = best;
	return (int)v;
}

/* Whether @v on @cpu is an unmanaged allocation (and so may be freed). */
static bool is_unmanaged(const struct umsi_matrix *m, uint32_t cpu, unsigned int v)
{
	const struct cpu_map *c = &m->cpus[cpu];

	return test_vec(c->owned, v) && !test_vec(c->managed, v) &&
	       !test_vec(cpu_blocked(m, cpu), v);
}

int umsi_matrix_free(struct umsi_matrix *m, uint32_t cpu, unsigned int vector,
		     bool managed)
{
	struct cpu_map *c;

	if (!m || cpu >= m->ncpus || vector >= UMSI_MATRIX_VECTORS)
		return -UMSI_EINVAL;
	c = &m->cpus[cpu];
	if (managed) {
		if (!test_vec(c->owned, vector) || !test_vec(c->managed, vector))
			return -UMSI_EINVAL;
		/* Back to the reservation: the available count does not move. */
		clear_vec(c->owned, vector);
		c->managed_allocated--;
		m->managed_allocated--;
		return 0;
	}
	if (!is_unmanaged(m, cpu, vector))
		return -UMSI_EINVAL;
	clear_vec(c->owned, vector);
	c->allocated--;
	m->allocated--;
	set_available(m, cpu, c->available + 1u);
	return 0;
}

int umsi_matrix_free_block(struct umsi_matrix *m, uint32_t cpu, unsigned int base,
			   unsigned int order)
{
	unsigned int size;
	struct cpu_map *c;

	if (!m || cpu >= m->ncpus || order > UMSI_MATRIX_MAX_ORDER)
		return -UMSI_EINVAL;
	size = 1u << order;
	if (base >= UMSI_MATRIX_VECTORS || (base & (size - 1)))
		return -UMSI_EINVAL;
	for (unsigned int i = 0; i < size; i++) {
		if (!is_unmanaged(m, cpu, base + i))
			return -UMSI_EINVAL;
	}
	c = &m->cpus[cpu];
	for (unsigned int i = 0; i < size; i++)
		clear_vec(c->owned, base + i);
	c->allocated -= (uint16_t)size;
	m->allocated -= size;
	set_available(m, cpu, c->available + size);
	return 0;
}

/* ---- Managed vectors -------------------------------------------------------- */

int umsi_matrix_reserve_managed(struct umsi_matrix *m, const struct umsi_cpumask *mask)
{
	uint32_t nwords, ncpus = 0;

	if (!m || !mask || !mask_valid(mask))
		return -UMSI_EINVAL;
	nwords = mask_words(m, mask);
	/* First pass: every CPU must have room, or nothing is reserved. */
	for (uint32_t w = 0; w < nwords; w++) {
		uint64_t bits = mask_word(m, mask, w);

		while (bits) {
			uint32_t cpu = w * CPUS_PER_BLOCK + ctz64(bits);

			bits &= bits - 1;
			if (m->cpus[cpu].available == 0)
				return -UMSI_ENOSPC;
			ncpus++;
		}
	}
	if (ncpus == 0)
		return -UMSI_EINVAL;
	for (uint32_t w = 0; w < nwords; w++) {
		uint64_t bits = mask_word(m, mask, w);

		while (bits) {
			uint32_t cpu = w * CPUS_PER_BLOCK + ctz64(bits);
			struct cpu_map *c = &m->cpus[cpu];

			bits &= bits - 1;
			set_vec(c->managed, lowest_free(m, cpu));
			c->managed_count++;
			m->managed++;
			set_available(m, cpu, c->available - 1u);
		}
	}
	return 0;
}

int umsi_matrix_remove_managed(struct umsi_matrix *m, const struct umsi_cpumask *mask)
{
	uint32_t nwords, ncpus = 0;

	if (!m || !mask || !mask_valid(mask))
		return -UMSI_EINVAL;
	nwords = mask_words(m, mask);
	for (uint32_t w = 0; w < nwords; w++) {
		uint64_t bits = mask_word(m, mask, w);

		while (bits) {
			const struct cpu_map *c = &m->cpus[w * CPUS_PER_BLOCK + ctz64(bits)];

			bits &= bits - 1;
			if (c->managed_count == c->managed_allocated)
				return -UMSI_EINVAL;
			ncpus++;
		}
	}
	if (ncpus == 0)
		return -UMSI_EINVAL;
	for (uint32_t w = 0; w < nwords; w++) {
		uint64_t bits = mask_word(m, mask, w);

		while (bits) {
			uint32_t cpu = w * CPUS_PER_BLOCK + ctz64(bits);
			struct cpu_map *c = &m->cpus[cpu];

			bits &= bits - 1;
			/* Release the highest unused reservation. */
			for (unsigned int i = WORDS_PER_CPU; i-- > 0;) {
				uint64_t unused = c->managed[i] & ~c->owned[i];

				if (unused) {
					c->managed[i] &= ~(1ull << fls64(unused));
					break;
				}
			}
			c->managed_count--;
			m->managed--;
			set_available(m, cpu, c->available + 1u);
		}
	}
	return 0;
}

int umsi_matrix_alloc_managed(struct umsi_matrix *m, const struct umsi_cpumask *mask,
			      uint32_t *cpu)
{
	uint32_t nwords, best = UINT32_MAX, best_unused = 0;
	struct cpu_map *c;

	if (!m || !cpu || !mask_valid(mask))
		return -UMSI_EINVAL;
	nwords = mask ? mask_words(m, mask) : m->nblocks;
	for (uint32_t w = 0; w < nwords; w++) {
		uint64_t bits = m->blocks[w].online;

		if (mask)
			bits &= mask_word(m, mask, w);
		while (bits) {
			uint32_t n = w * CPUS_PER_BLOCK + ctz64(bits);
			uint32_t unused = (uint32_t)m->cpus[n].managed_count -
					  m->cpus[n].managed_allocated;

			bits &= bits - 1;
			if (unused > best_unused) {
				best_unused = unused;
				best = n;
			}
		}
	}
	if (best == UINT32_MAX)
		return -UMSI_ENOSPC;
	c = &m->cpus[best];
	for (unsigned int w = 0; w < WORDS_PER_CPU; w++) {
		uint64_t unused = c->managed[w] & ~c->owned[w];

		if (unused) {
			unsigned int v = w * 64 + ctz64(unused);

			set_vec(c->owned, v);
			c->managed_allocated++;
			m->managed_allocated++;
			*cpu = best;
			return (int)v;
		}
	}
	return -UMSI_EIO; /* unreachable: the counters promised a free slot */
}

/* ---- Legacy vectors --------------------------------------------------------- */

int umsi_matrix_assign_legacy(struct umsi_matrix *m, unsigned int isa_irq)
{
	unsigned int v;

	if (!m || isa_irq >= m->legacy_count)
		return -UMSI_EINVAL;
	v = m->legacy_first + isa_irq;
	if (test_vec(m->cpus[m->legacy_cpu].owned, v))
		return -UMSI_EBUSY;
	set_vec(m->cpus[m->legacy_cpu].owned, v);
	m->legacy++;
	return (int)v;
}

int umsi_matrix_release_legacy(struct umsi_matrix *m, unsigned int isa_irq)
{
	unsigned int v;

	if (!m || isa_irq >= m->legacy_count)
		return -UMSI_EINVAL;
	v = m->legacy_first + isa_irq;
	if (!test_vec(m->cpus[m->legacy_cpu].owned, v))
		return -UMSI_EINVAL;
	clear_vec(m->cpus[m->legacy_cpu].owned, v);
	m->legacy--;
	return 0;
}

/* ---- Queries ---------------------------------------------------------------- */

bool umsi_matrix_is_allocated(const struct umsi_matrix *m, uint32_t cpu,
			      unsigned int vector)
{
	if (!m || cpu >= m->ncpus || vector >= UMSI_MATRIX_VECTORS)
		return false;
	return test_vec(m->cpus[cpu].owned, vector);
}

int umsi_matrix_vector_state(const struct umsi_matrix *m, uint32_t cpu,
			     unsigned int vector)
{
	const struct cpu_map *c;
	bool owned;

	if (!m || cpu >= m->ncpus || vector >= UMSI_MATRIX_VECTORS)
		return -UMSI_EINVAL;
	c = &m->cpus[cpu];
	owned = test_vec(c->owned, vector);
	if (cpu == m->legacy_cpu && test_vec(m->legacy_map, vector))
		return owned ? UMSI_VECTOR_LEGACY_ALLOCATED : UMSI_VECTOR_LEGACY_FREE;
	if (test_vec(m->blocked, vector))
		return UMSI_VECTOR_RESERVED;
	if (test_vec(c->managed, vector))
		return owned ? UMSI_VECTOR_MANAGED_ALLOCATED : UMSI_VECTOR_MANAGED_FREE;
	return owned ? UMSI_VECTOR_ALLOCATED : UMSI_VECTOR_FREE;
}

void umsi_matrix_stats(const struct umsi_matrix *m, struct umsi_matrix_stats *st)
{
	if (!m || !st)
		return;
	st->ncpus = m->ncpus;
	st->online = m->online;
	st->available = m->available;
	st->allocated = m->allocated;
	st->managed = m->managed;
	st->managed_allocated = m->managed_allocated;
	st->legacy = m->legacy;
}

int umsi_matrix_cpu_stats(const struct umsi_matrix *m, uint32_t cpu,
			  struct umsi_matrix_cpu_stats *st)
{
	const struct cpu_map *c;

	if (!m || !st || cpu >= m->ncpus)
		return -UMSI_EINVAL;
	c = &m->cpus[cpu];
	st->capacity = cpu_capacity(m, cpu);
	st->available = c->available;
	st->allocated = c->allocated;
	st->managed = c->managed_count;
	st->managed_allocated = c->managed_allocated;
	st->legacy = 0;
	if (cpu == m->legacy_cpu) {
		for (unsigned int w = 0; w < WORDS_PER_CPU; w++)
			st->legacy += popcount64(c->owned[w] & m->legacy_map[w]);
	}
	st->online = cpu_online(m, cpu);
	return 0;
}

/* ---- Invariant checker ------------------------------------------------------ */

struct check_sums {
	uint32_t online, available, allocated, managed, managed_allocated, legacy;
};

/* One CPU against its own bitmaps; NULL when consistent. */
static const char *check_cpu(const struct umsi_matrix *m, uint32_t cpu,
			     struct check_sums *sums)
{
	const struct cpu_map *c = &m->cpus[cpu];
	const uint64_t *blocked = cpu_blocked(m, cpu);
	const struct cpu_block *b = &m->blocks[cpu / CPUS_PER_BLOCK];
	unsigned int bit = cpu % CPUS_PER_BLOCK;
	uint32_t managed = 0, managed_allocated = 0, allocated = 0, legacy = 0;
	bool legacy_cpu = cpu == m->legacy_cpu;

	for (unsigned int w = 0; w < WORDS_PER_CPU; w++) {
		uint64_t legacy_ok = legacy_cpu ? m->legacy_map[w] : 0;

		if (c->managed[w] & blocked[w])
			return "a managed reservation lies on a reserved vector";
		if (c->owned[w] & blocked[w] & ~legacy_ok)
			return "a reserved vector is owned";
		managed += popcount64(c->managed[w]);
		managed_allocated += popcount64(c->owned[w] & c->managed[w]);
		allocated += popcount64(c->owned[w] & ~c->managed[w] & ~blocked[w]);
		legacy += popcount64(c->owned[w] & legacy_ok);
	}
	if (managed != c->managed_count)
		return "the managed count differs from the managed bitmap";
	if (managed_allocated != c->managed_allocated)
		return "the managed-allocated count differs from the bitmaps";
	if (allocated != c->allocated)
		return "the allocated count differs from the ownership bitmap";
	if (allocated + managed > cpu_capacity(m, cpu) ||
	    c->available != cpu_capacity(m, cpu) - allocated - managed)
		return "available differs from capacity - allocated - managed";
	for (unsigned int s = 0; s < MAX_SLICES; s++) {
		uint32_t want = s < m->nslices ? (c->available >> s) & 1 : 0;

		if (((b->slice[s] >> bit) & 1) != want)
			return "a count slice differs from the available count";
	}
	if (cpu_online(m, cpu)) {
		sums->online++;
		sums->available += c->available;
	}
	sums->allocated += allocated;
	sums->managed += managed;
	sums->managed_allocated += managed_allocated;
	sums->legacy += legacy;
	return NULL;
}

static const char *check_layers(const struct umsi_matrix *m, uint32_t *where)
{
	uint32_t capacity = UMSI_MATRIX_VECTORS, legacy_capacity = UMSI_MATRIX_VECTORS;

	for (unsigned int w = 0; w < WORDS_PER_CPU; w++) {
		capacity -= popcount64(m->blocked[w]);
		legacy_capacity -= popcount64(m->blocked_legacy[w]);
		if (m->blocked_legacy[w] != (m->blocked[w] | m->legacy_map[w]))
			return "the legacy CPU's blocked map is not blocked + legacy";
	}
	if (capacity != m->capacity || legacy_capacity != m->legacy_capacity)
		return "a capacity differs from the blocked maps";
	if (m->capacity >> m->nslices)
		return "too few count slices for the capacity";
	for (uint32_t blk = 0; blk < m->nblocks; blk++) {
		uint32_t used = m->ncpus - blk * CPUS_PER_BLOCK;
		uint64_t beyond = used >= 64 ? 0 : ~0ull << used;
		const struct cpu_block *b = &m->blocks[blk];

		*where = blk * CPUS_PER_BLOCK;
		if (b->online & beyond)
			return "a CPU beyond the last one is online";
		if (b->top & ~b->online)
			return "an offline CPU is in a block's top set";
		for (unsigned int s = 0; s < MAX_SLICES; s++) {
			if (b->slice[s] & beyond)
				return "a count slice has a bit beyond the last CPU";
		}
		if (b->top != (b->online ? block_top(m, b, b->online) : 0))
			return "a block's top set differs from its slices";
		if (m->tree[m->leaves + blk] != (b->top ? set_key(m, blk, b->top) : 0))
			return "a tree leaf differs from its block's top set";
	}
	*where = UINT32_MAX;
	for (uint32_t i = m->nblocks; i < m->leaves; i++) {
		if (m->tree[m->leaves + i] != 0)
			return "a padding leaf of the tree is not empty";
	}
	for (uint32_t i = 1; i < m->leaves; i++) {
		if (m->tree[i] != max_u32(m->tree[2 * i], m->tree[2 * i + 1]))
			return "a tree node is not the maximum of its children";
	}
	return NULL;
}

int umsi_matrix_check_detail(const struct umsi_matrix *m, const char **why,
			     uint32_t *cpu)
{
	struct check_sums sums;
	const char *bad = NULL;
	uint32_t where = UINT32_MAX;

	if (!m)
		return -UMSI_EINVAL;
	/* Field by field: "= { 0 }" is a memset call for clang -O0. */
	sums.online = sums.available = sums.allocated = 0;
	sums.managed = sums.managed_allocated = sums.legacy = 0;
	for (uint32_t n = 0; n < m->ncpus && !bad; n++) {
		bad = check_cpu(m, n, &sums);
		where = n;
	}
	if (!bad) {
		where = UINT32_MAX;
		bad = check_layers(m, &where);
	}
	if (!bad) {
		if (sums.online != m->online)
			bad = "the online count differs from the online bitmaps";
		else if (sums.available != m->available)
			bad = "global available differs from the online CPUs' sum";
		else if (sums.allocated != m->allocated)
			bad = "global allocated differs from the CPUs' sum";
		else if (sums.managed != m->managed)
			bad = "global managed differs from the CPUs' sum";
		else if (sums.managed_allocated != m->managed_allocated)
			bad = "global managed-allocated differs from the CPUs' sum";
		else if (sums.legacy != m->legacy)
			bad = "the legacy count differs from the legacy CPU's bitmap";
	}
	if (why)
		*why = bad ? bad : "consistent";
	if (cpu)
		*cpu = bad ? where : UINT32_MAX;
	return bad ? -UMSI_EIO : 0;
}

int umsi_matrix_check(const struct umsi_matrix *m)
{
	return umsi_matrix_check_detail(m, NULL, NULL);
}
