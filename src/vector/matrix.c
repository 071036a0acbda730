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
 *  1. Per CPU: four counters (struct matrix_cpu) and, out of line, the
 *     ownership and managed bitmaps of its space of nvec vectors (256 on
 *     x86, 64 to 4096 in general: nvec / 64 words each). Which vector of a
 *     CPU to hand out is a find-first over those words, unrolled for the
 *     four words of the x86 space.
 *
 *  2. Per block of 64 CPUs (struct matrix_block): the online bitmap and the
 *     available counts stored "bit-sliced": slice[s] has bit i set when CPU
 *     (64 * block + i) has bit s set in its available count. The CPU with
 *     the largest count among any subset of the block falls out of one AND
 *     per slice, from the top bit down: keep the candidates that have the
 *     bit whenever some candidate has it. What survives holds the maximum,
 *     and its lowest bit is the lowest such CPU. A count change flips only
 *     the slices of the bits that changed, and only once the CPU's count
 *     settles (struct matrix_block, "stale"). The block also keeps "top", the
 *     online CPUs at its maximum, so that a change of one count usually
 *     updates the block's best in O(1) (a CPU rising to or past the
 *     maximum joins or replaces top; one falling below it leaves top, and
 *     only when top empties are the slices consulted again), and a subset
 *     that meets top has the block's maximum without any slice work.
 *
 *  3. Over the blocks, a segment tree (an implicit binary heap layout,
 *     root at index 1, leaf of block b at leaves + b) of keys
 *     (count << 16 | (0xffff - cpu)): the larger key is the better CPU, ties
 *     going to the lower CPU number without a second comparison.
 *
 * Choosing the CPU:
 *  - all online CPUs (no mask): the root, O(1);
 *  - any mask or range that holds the root's CPU: the root too, after one
 *    bit test. The best CPU of all is the best of every set that holds it,
 *    so an explicit mask of every online CPU costs what no mask costs;
 *  - a contiguous range: two partial blocks plus O(log n) tree nodes;
 *  - an arbitrary mask, in two passes over its words. The first looks for
 *    a CPU of the mask at the root's count (the largest anywhere): those
 *    are the top sets of the blocks at that maximum, so it costs one AND
 *    per word up to the first hit, which is the answer. It is the common
 *    case, as the CPU a vector was just freed on is the best one again.
 *    Otherwise a branch and bound over the blocks in CPU order: a later
 *    CPU must be strictly better to win a tie, so a block whose tree
 *    maximum is at most the best count so far is skipped through the tree
 *    without reading its mask word; a block whose maximum is exactly one
 *    above can only win through a masked CPU of its top set, one AND with
 *    the mask word; a block further above is decided by its top set, then
 *    by its bound "below", and only then by the bit-sliced maximum. The
 *    search ends once the best count is the most the mask can hold.
 *
 * "below" bounds the counts of a block's online CPUs outside top: a mask
 * that misses top finds no more there. A CPU outside top that rises lifts
 * the bound; when the CPU at the bound falls, the slices give it again, so
 * that it follows busy CPUs down; it is the block maximum minus one after
 * top changes hands. It keeps the search away from the slices of blocks
 * whose top set holds CPUs the mask does not name, such as idle CPUs next
 * to the busy ones an affinity mask selects.
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

#include <umsi/internal/bitops.h>
#include <umsi/internal/compiler.h>
#include <umsi/matrix.h>

#define MATRIX_CPUS_PER_BLOCK   64u
#define MATRIX_MAX_SLICES       13u     /* counts go up to 4096: 13 bits */
/* Words of one CPU's bitmap in the x86 space, the one with a fast path. */
#define MATRIX_X86_WORDS        (UMSI_MATRIX_VECTORS / 64)
#define MATRIX_ALIGN            8u
/* "No such vector" from the finders, "no such block" from the tree. */
#define MATRIX_NO_VECTOR        0xffffffffu
#define MATRIX_NO_BLOCK         0xffffffffu


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

/* ---- Configuration and layout ------------------------------------------- */

void umsi_matrix_default_config(struct umsi_matrix_config *cfg, uint32_t ncpus)
{
	unsigned int w;

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
	cfg->nvec = UMSI_MATRIX_VECTORS;
	for (w = 0; w < UMSI_MATRIX_MAX_VECTORS / 64; w++)
		cfg->reserved[w] = 0;
	matrix_set_vec(cfg->reserved, UMSI_MATRIX_X86_SYSCALL);
}

void umsi_matrix_space_config(struct umsi_matrix_config *cfg, uint32_t ncpus,
			      uint32_t nvec, uint32_t first, uint32_t last)
{
	unsigned int w;

	if (!cfg)
		return;
	cfg->ncpus = ncpus;
	cfg->nvec = nvec;
	/* Clamped, not truncated: 0x10001 must not become vector 1. */
	cfg->alloc_first = (uint16_t)(first > 0xffffu ? 0xffffu : first);
	cfg->alloc_last = (uint16_t)(last > 0xffffu ? 0xffffu : last);
	cfg->system_first = 1;  /* first > last: no system vectors */
	cfg->system_last = 0;
	cfg->legacy_first = 0;
	cfg->legacy_count = 0;
	cfg->legacy_cpu = 0;
	for (w = 0; w < UMSI_MATRIX_MAX_VECTORS / 64; w++)
		cfg->reserved[w] = 0;
}

/* The space of a configuration: 0 stands for the x86 default. */
static uint32_t matrix_config_nvec(const struct umsi_matrix_config *cfg)
{
	return cfg->nvec ? cfg->nvec : UMSI_MATRIX_VECTORS;
}

static bool matrix_config_valid(const struct umsi_matrix_config *cfg)
{
	unsigned int v, w, end, nvec;

	if (!cfg || cfg->ncpus == 0 || cfg->ncpus > UMSI_MATRIX_MAX_CPUS)
		return false;
	nvec = matrix_config_nvec(cfg);
	if (nvec % UMSI_MATRIX_MIN_VECTORS || nvec > UMSI_MATRIX_MAX_VECTORS)
		return false;
	/* Reserved bits past the space would be silently ignored: refuse. */
	for (w = nvec / 64; w < UMSI_MATRIX_MAX_VECTORS / 64; w++) {
		if (cfg->reserved[w])
			return false;
	}
	if (cfg->alloc_first > cfg->alloc_last || cfg->alloc_last >= nvec)
		return false;
	if (cfg->system_first <= cfg->system_last &&
	    cfg->system_last >= nvec)
		return false;
	if (cfg->legacy_count > UMSI_MATRIX_MAX_LEGACY)
		return false;
	if (cfg->legacy_count == 0)
		return true;
	end = (uint32_t)cfg->legacy_first + cfg->legacy_count;
	if (cfg->legacy_cpu >= cfg->ncpus || end > nvec)
		return false;
	/* A legacy vector must be distinct from every system or reserved one */
	for (v = cfg->legacy_first; v < end; v++) {
		if (v >= cfg->system_first && v <= cfg->system_last)
			return false;
		if (matrix_test_vec(cfg->reserved, v))
			return false;
	}
	return true;
}

static uint32_t matrix_blocks_for(uint32_t ncpus)
{
	return (ncpus + MATRIX_CPUS_PER_BLOCK - 1) / MATRIX_CPUS_PER_BLOCK;
}

static uint32_t matrix_leaves_for(uint32_t nblocks)
{
	uint32_t leaves = 1;

	while (leaves < nblocks)
		leaves <<= 1;
	return leaves;
}

static size_t matrix_align_up(size_t n)
{
	return (n + MATRIX_ALIGN - 1) & ~(size_t)(MATRIX_ALIGN - 1);
}

/*
 * Bytes from the aligned start of the memory to the end of the tree: the
 * header with the counters of every CPU, the three matrix-wide bitmaps,
 * the bitmaps of every CPU, the blocks, the tree. Every part is a
 * multiple of 8 bytes.
 */
static size_t matrix_layout_size(uint32_t ncpus, uint32_t nvec)
{
	uint32_t nblocks = matrix_blocks_for(ncpus), wpc = nvec / 64;

	return matrix_align_up(sizeof(struct umsi_matrix) +
			       (size_t)ncpus * sizeof(struct matrix_cpu)) +
	       (size_t)3 * wpc * sizeof(uint64_t) +
	       (size_t)ncpus * 2 * wpc * sizeof(uint64_t) +
	       (size_t)nblocks * sizeof(struct matrix_block) +
	       (size_t)2 * matrix_leaves_for(nblocks) * sizeof(uint32_t);
}

size_t umsi_matrix_size(const struct umsi_matrix_config *cfg)
{
	if (!matrix_config_valid(cfg))
		return 0;
	return matrix_layout_size(cfg->ncpus, matrix_config_nvec(cfg)) +
	       MATRIX_ALIGN - 1;
}

/* ---- The tree over the blocks ------------------------------------------- */

/*
 * The leaf of @blk rose to @key. A parent holds the larger key of its two
 * children, so it changes only while it is smaller than @key: climb until
 * one is not.
 */
static void matrix_tree_raise(struct umsi_matrix *m, uint32_t blk, uint32_t key)
{
	uint32_t *tree = m->tree;
	uint32_t i = m->leaves + blk;

	tree[i] = key;
	while (i > 1) {
		i >>= 1;
		if (tree[i] >= key)
			return;
		tree[i] = key;
	}
}

/*
 * The leaf of @blk fell to @key. A parent changes only if it held the old
 * key (keys are unique per CPU, so it came from this child); it then takes
 * the larger of the new key and the sibling's.
 */
static void matrix_tree_lower(struct umsi_matrix *m, uint32_t blk, uint32_t key)
{
	uint32_t *tree = m->tree;
	uint32_t i = m->leaves + blk;
	uint32_t old = tree[i];

	tree[i] = key;
	while (i > 1) {
		uint32_t sibling = tree[i ^ 1];

		i >>= 1;
		if (tree[i] != old)
			return;
		key = matrix_max(key, sibling);
		tree[i] = key;
	}
}

static void matrix_tree_set(struct umsi_matrix *m, uint32_t blk, uint32_t key)
{
	uint32_t old = m->tree[m->leaves + blk];

	if (key > old)
		matrix_tree_raise(m, blk, key);
	else if (key < old)
		matrix_tree_lower(m, blk, key);
}

/*
 * The first block at or after @from whose best key beats @ceiling (whose
 * maximum count is larger, for a ceiling from matrix_key_ceiling()), or
 * MATRIX_NO_BLOCK. Climbs from the leaf while the subtrees to the right
 * cannot hold one, then descends to the leftmost leaf that does: O(log n).
 */
static uint32_t matrix_tree_next(const struct umsi_matrix *m, uint32_t from,
				 uint32_t ceiling)
{
	const uint32_t *tree = m->tree;
	uint32_t i;

	if (from >= m->nblocks)
		return MATRIX_NO_BLOCK;
	i = m->leaves + from;
	while (tree[i] <= ceiling) {
		/* Up past every level where i is a right child, then right. */
		while (i & 1)
			i >>= 1;
		if (i == 0)
			return MATRIX_NO_BLOCK;
		i++;
	}
	while (i < m->leaves) {
		i <<= 1;
		if (tree[i] <= ceiling)
			i++;
	}
	return i - m->leaves;
}

/* Best key over blocks @lo .. @hi inclusive, in O(log n). */
static uint32_t matrix_tree_query(const struct umsi_matrix *m, uint32_t lo,
				  uint32_t hi)
{
	const uint32_t *tree = m->tree;
	uint32_t l = lo + m->leaves, r = hi + m->leaves + 1;
	uint32_t best = 0;

	while (l < r) {
		if (l & 1)
			best = matrix_max(best, tree[l++]);
		if (r & 1)
			best = matrix_max(best, tree[--r]);
		l >>= 1;
		r >>= 1;
	}
	return best;
}

/* ---- Blocks ------------------------------------------------------------- */

/* Keep the candidates that have a bit, if any has it. */
static inline uint64_t matrix_narrow(uint64_t cand, uint64_t slice)
{
	uint64_t t = cand & slice;

	return t ? t : cand;
}

/*
 * The CPUs of @cand (non-empty, online) whose available count is the
 * largest among @cand: the bit-sliced maximum described at the top of the
 * file, unrolled and branch-free for the eight slices of a space of up to
 * 255 allocatable vectors, a loop for the higher ones of larger spaces.
 * Slices above the configured width are zero and leave the candidates
 * alone.
 */
static inline uint64_t matrix_block_top(const struct umsi_matrix *m,
				 const struct matrix_block *b, uint64_t cand)
{
	uint32_t s;

	for (s = m->nslices; s > 8;) {
		s--;
		cand = matrix_narrow(cand, b->slice[s]);
	}
	cand = matrix_narrow(cand, b->slice[7]);
	cand = matrix_narrow(cand, b->slice[6]);
	cand = matrix_narrow(cand, b->slice[5]);
	cand = matrix_narrow(cand, b->slice[4]);
	cand = matrix_narrow(cand, b->slice[3]);
	cand = matrix_narrow(cand, b->slice[2]);
	cand = matrix_narrow(cand, b->slice[1]);
	return matrix_narrow(cand, b->slice[0]);
}

/* Key of the lowest CPU of the non-empty set @set of block @blk. */
static inline uint32_t matrix_set_key(const struct umsi_matrix *m, uint32_t blk,
				      uint64_t set)
{
	uint32_t cpu = matrix_first(blk, set);

	return matrix_key(matrix_cpu(m, cpu)->available, cpu);
}

/*
 * Best key among the online CPUs of block @blk that are in @cand. A subset
 * that meets top has the block maximum; otherwise the slices answer for
 * every CPU but the stale one, whose count is compared on its own.
 */
static inline uint32_t matrix_block_key(const struct umsi_matrix *m,
					uint32_t blk, uint64_t cand)
{
	const struct matrix_block *b = &m->blocks[blk];
	uint64_t hit, clean;
	uint32_t key = 0;

	cand &= b->online;
	hit = cand & b->top;
	if (hit)
		return matrix_set_key(m, blk, hit);
	clean = cand & ~b->stale;
	if (clean)
		key = matrix_set_key(m, blk, matrix_block_top(m, b, clean));
	if (cand & b->stale)
		key = matrix_max(key, matrix_set_key(m, blk, b->stale));
	return key;
}

/* Bring the slices of block @blk up to date with its stale CPU, if any. */
static UMSI_NOINLINE void matrix_flush(struct umsi_matrix *m, uint32_t blk)
{
	struct matrix_block *b = &m->blocks[blk];
	struct matrix_cpu *c;
	uint64_t bit = b->stale;
	uint32_t diff;

	if (!bit)
		return;
	c = matrix_cpu(m, matrix_first(blk, bit));
	diff = (uint32_t)c->sliced ^ c->available;
	while (diff) {
		b->slice[umsi_ctz64(diff)] ^= bit;
		diff &= diff - 1;
	}
	c->sliced = c->available;
	b->stale = 0;
}

/*
 * The online CPUs of block @blk at its maximum, from the slices. A block
 * with a single online CPU (a uniprocessor, or the last CPU of a machine
 * of 64n + 1) needs no slices for that.
 */
static uint64_t matrix_block_top_all(struct umsi_matrix *m, uint32_t blk)
{
	struct matrix_block *b = &m->blocks[blk];
	uint64_t online = b->online;

	if (!(online & (online - 1)))
		return online;
	matrix_flush(m, blk);
	return matrix_block_top(m, b, online);
}

/*
 * Make the bound "below" of block @blk exact again, from the slices. Done
 * when the CPU at the bound falls, so that the bound keeps following the
 * busy CPUs down; not in a matrix of one block, whose search reads the
 * slices before it has a count to hold the bound against.
 */
static UMSI_NOINLINE void matrix_below_exact(struct umsi_matrix *m,
					       uint32_t blk)
{
	struct matrix_block *b = &m->blocks[blk];
	uint64_t rest = b->online & ~b->top;

	b->below = 0;
	if (!rest)
		return;
	matrix_flush(m, blk);
	rest = matrix_block_top(m, b, rest);
	b->below = matrix_cpu(m, matrix_first(blk, rest))->available;
}

/* Recompute block @blk from its slices (after online or offline). */
static void matrix_block_refresh(struct umsi_matrix *m, uint32_t blk)
{
	struct matrix_block *b = &m->blocks[blk];
	uint32_t key;

	b->top = matrix_block_top_all(m, blk);
	key = b->top ? matrix_set_key(m, blk, b->top) : 0;
	matrix_below_exact(m, blk);
	matrix_tree_set(m, blk, key);
}

/*
 * Record that the count of CPU @bit of block @blk changed (it is already
 * stored in @c): it becomes the stale CPU of its block, unless it is back
 * at the count the slices hold. A block has one stale CPU at most, so
 * another one is flushed first.
 */
static inline void matrix_mark(struct umsi_matrix *m, uint32_t blk,
			       const struct matrix_cpu *c, uint64_t bit)
{
	struct matrix_block *b = &m->blocks[blk];

	if (c->available == c->sliced) {
		b->stale &= ~bit;
		return;
	}
	if (b->stale & ~bit)
		matrix_flush(m, blk);
	b->stale |= bit;
}

/*
 * The last CPU at the maximum of block @blk fell below it: the maximum
 * falls, and the slices tell which CPUs hold the new one.
 */
static UMSI_NOINLINE void matrix_top_fell(struct umsi_matrix *m, uint32_t blk)
{
	struct matrix_block *b = &m->blocks[blk];
	uint64_t top = matrix_block_top_all(m, blk);
	uint32_t key = matrix_set_key(m, blk, top);

	b->top = top;
	/* Every CPU outside the new top set is below the new maximum. */
	b->below = matrix_key_count(key) - 1;
	matrix_tree_lower(m, blk, key);
}

/*
 * Set the available count of @cpu; then, if the CPU is online, bring the
 * global count, the block's top set and the tree along. That is O(1) in
 * the block unless the CPU was the last one at the block maximum and fell
 * below it (then the slices give the new top set), plus the tree nodes
 * whose key changes. matrix_count_up() and matrix_count_down() are the
 * same for a change of one, the path of every free and allocation.
 */
static void matrix_set_available(struct umsi_matrix *m, uint32_t cpu,
				 uint32_t avail)
{
	struct matrix_cpu *c = matrix_cpu(m, cpu);
	uint32_t blk = matrix_blk(cpu);
	struct matrix_block *b = &m->blocks[blk];
	uint64_t bit = matrix_bit(cpu);
	uint32_t old = c->available;
	uint32_t leaf, max;
	uint64_t top;

	c->available = (uint16_t)avail;
	matrix_mark(m, blk, c, bit);
	if (!(b->online & bit))
		return;
	m->available = m->available - old + avail;
	leaf = m->tree[m->leaves + blk];
	max = matrix_key_count(leaf);
	top = b->top;
	if (avail > max) {
		/* Alone above the old maximum; the others are at most there. */
		if (top != bit)
			b->below = max;
		b->top = bit;
		matrix_tree_raise(m, blk, matrix_key(avail, cpu));
	} else if (avail == max) {
		/* Joins the CPUs at the maximum; the leaf names the lowest. */
		b->top = top | bit;
		if (matrix_key(avail, cpu) > leaf)
			matrix_tree_raise(m, blk, matrix_key(avail, cpu));
	} else if (top & bit) {
		/* Fell below the maximum: leaves top. */
		top &= ~bit;
		if (!top) {
			matrix_top_fell(m, blk);
			return;
		}
		b->top = top;
		if (avail > b->below)
			b->below = avail;
		/* The leaf changes only if it named this CPU. */
		if (matrix_key_cpu(leaf) == cpu)
			matrix_tree_lower(m, blk, matrix_set_key(m, blk, top));
	} else if (avail > b->below) {
		b->below = avail;
	} else if (old == b->below && avail < old && m->nblocks > 1) {
		/* It may have been the only one at the bound. */
		matrix_below_exact(m, blk);
	}
}

/* matrix_set_available(m, cpu, available + 1), for a free. */
static inline void matrix_count_up(struct umsi_matrix *m, struct matrix_cpu *c,
				   uint32_t cpu)
{
	uint32_t blk = matrix_blk(cpu);
	struct matrix_block *b = &m->blocks[blk];
	uint64_t bit = matrix_bit(cpu);
	uint32_t avail = c->available + 1u, leaf, max;

	c->available = (uint16_t)avail;
	matrix_mark(m, blk, c, bit);
	if (!(b->online & bit))
		return;
	m->available++;
	leaf = m->tree[m->leaves + blk];
	max = matrix_key_count(leaf);
	if (avail > max) {
		/* Was at the maximum: alone above it, the rest at most there */
		if (b->top != bit)
			b->below = max;
		b->top = bit;
		matrix_tree_raise(m, blk, matrix_key(avail, cpu));
	} else if (avail == max) {
		b->top |= bit;
		if (matrix_key(avail, cpu) > leaf)
			matrix_tree_raise(m, blk, matrix_key(avail, cpu));
	} else if (avail > b->below) {
		b->below = avail;
	}
}

/* matrix_set_available(m, cpu, available - 1), for an allocation. */
static inline void matrix_count_down(struct umsi_matrix *m,
				     struct matrix_cpu *c, uint32_t cpu)
{
	uint32_t blk = matrix_blk(cpu);
	struct matrix_block *b = &m->blocks[blk];
	uint64_t bit = matrix_bit(cpu);
	uint64_t top;
	uint32_t leaf;

	c->available--;
	matrix_mark(m, blk, c, bit);
	if (!(b->online & bit))
		return;
	m->available--;
	top = b->top;
	if (!(top & bit)) {
		/* Below the maximum before and after; it may have been the
		 * only one at the bound. */
		if (c->available + 1u == b->below && m->nblocks > 1)
			matrix_below_exact(m, blk);
		return;
	}
	top &= ~bit;
	if (!top) {
		matrix_top_fell(m, blk);
		return;
	}
	b->top = top;
	leaf = m->tree[m->leaves + blk];
	/* One below the maximum now: the bound can be no lower. */
	b->below = matrix_key_count(leaf) - 1;
	if (matrix_key_cpu(leaf) == cpu)
		matrix_tree_lower(m, blk, matrix_key(matrix_key_count(leaf),
						     matrix_first(blk, top)));
}

/* ---- Masks -------------------------------------------------------------- */

static bool matrix_mask_valid(const struct umsi_cpumask *mask)
{
	return !mask || mask->nbits == 0 || mask->words;
}

/* CPUs of @mask that the matrix has. */
static uint32_t matrix_mask_bits(const struct umsi_matrix *m,
				 const struct umsi_cpumask *mask)
{
	return mask->nbits < m->ncpus ? mask->nbits : m->ncpus;
}

/* Number of words of @mask that can name a CPU of @m. */
static uint32_t matrix_mask_words(const struct umsi_matrix *m,
				  const struct umsi_cpumask *mask)
{
	return (matrix_mask_bits(m, mask) + 63) / 64;
}

/* Word @w of @mask, without bits at or beyond nbits or the CPU count. */
static uint64_t matrix_mask_word(const struct umsi_matrix *m,
				 const struct umsi_cpumask *mask, uint32_t w)
{
	uint32_t nbits = matrix_mask_bits(m, mask);
	uint64_t bits = mask->words[w];

	if (w == nbits / 64)
		bits &= (1ull << (nbits % 64)) - 1;
	return bits;
}

/*
 * The first of the full mask words @w .. @stop - 1 that meets the top set
 * of its block, or @stop. The inner loop of the mask search: eight words
 * per test, since most words miss.
 */
static uint32_t matrix_hit_scan(const struct umsi_matrix *m,
				const uint64_t *words, uint32_t w,
				uint32_t stop)
{
	const uint64_t *p = words + w;
	const struct matrix_block *b = m->blocks + w;
	uint32_t n;

	for (n = (stop - w) / 8; n; n--) {
		if ((p[0] & b[0].top) | (p[1] & b[1].top) | (p[2] & b[2].top) |
		    (p[3] & b[3].top) | (p[4] & b[4].top) | (p[5] & b[5].top) |
		    (p[6] & b[6].top) | (p[7] & b[7].top))
			break;
		p += 8;
		b += 8;
	}
	for (n = stop - (uint32_t)(p - words); n && !(*p & b->top); n--) {
		p++;
		b++;
	}
	return (uint32_t)(p - words);
}

/*
 * The first non-zero word of @words[@w .. @stop - 1], or @stop: one test
 * for a dense mask, eight words per test through the gaps of a sparse one.
 */
static inline uint32_t matrix_skip_empty(const uint64_t *words, uint32_t w,
					 uint32_t stop)
{
	const uint64_t *p;

	if (w >= stop || words[w])
		return w;
	for (p = words + w; stop - w >= 8; p += 8, w += 8) {
		if (p[0] | p[1] | p[2] | p[3] | p[4] | p[5] | p[6] | p[7])
			break;
	}
	while (w < stop && !words[w])
		w++;
	return w;
}

/*
 * First pass of the mask search: the lowest CPU of the mask whose count is
 * the root's (the largest anywhere), or 0 if the mask has none. Such CPUs
 * are the top sets of the blocks whose maximum is the root's, so this is
 * one AND per mask word up to the answer. It is the common case (a free
 * makes its CPU the best again), and it leaves the second pass a ceiling
 * one lower.
 */
static uint32_t matrix_mask_hunt(const struct umsi_matrix *m,
				 const uint64_t *words, uint32_t nbits)
{
	uint32_t nfull = nbits / 64, root = m->tree[1] & ~0xffffu, w = 0;
	uint64_t bits;

	for (;;) {
		w = matrix_hit_scan(m, words, w, nfull);
		if (w == nfull)
			break;
		if ((m->tree[m->leaves + w] & ~0xffffu) == root)
			return matrix_set_key(m, w,
					      words[w] & m->blocks[w].top);
		w++;
	}
	if (nbits % 64 == 0)
		return 0;
	bits = words[w] & ((1ull << (nbits % 64)) - 1) & m->blocks[w].top;
	if (bits && (m->tree[m->leaves + w] & ~0xffffu) == root)
		return matrix_set_key(m, w, bits);
	return 0;
}

/*
 * The exact best key of the mask word @bits in block @w, or 0 if it cannot
 * beat a count of @bc: a subset that meets top has the block maximum, one
 * that misses it at most "below"; only then are the slices read.
 */
static inline uint32_t matrix_word_key(const struct umsi_matrix *m, uint32_t w,
				       uint64_t bits, uint32_t bc)
{
	const struct matrix_block *b = &m->blocks[w];
	uint64_t clean;
	uint32_t key = 0;

	bits &= b->online;
	if (bits & b->top)
		return matrix_set_key(m, w, bits & b->top);
	if (!bits || b->below <= bc)
		return 0;
	clean = bits & ~b->stale;
	if (clean)
		key = matrix_set_key(m, w, matrix_block_top(m, b, clean));
	if (bits & b->stale)
		key = matrix_max(key, matrix_set_key(m, w, b->stale));
	return key;
}

/*
 * Best key among the online CPUs of an arbitrary mask of @nbits bits (not
 * more than the CPUs) that has no CPU at the root's count (see
 * matrix_mask_hunt()): branch and bound over the blocks in CPU order.
 *
 * With best count bc so far, a later CPU wins only with a count above bc
 * (ties go to the lower CPU). So:
 *  - an empty mask word costs one test;
 *  - a block whose maximum is at most bc cannot win: the tree skips it,
 *    and every block after it up to the next one that can
 *    (matrix_tree_next), without reading their mask words;
 *  - a block whose maximum is bc + 1 wins only if the mask meets its top
 *    set, since the CPUs outside top are at least one below the maximum.
 *    A run of such blocks, up to the next block with a higher maximum,
 *    costs one AND per mask word (matrix_hit_scan);
 *  - any other block is decided by matrix_word_key(), which reads the
 *    slices only if the bound "below" leaves it a chance.
 * The search stops when bc reaches the most the mask can have: the root's
 * count, or one less once matrix_mask_hunt() has found nothing there.
 */
static UMSI_NOINLINE uint32_t
matrix_mask_search(const struct umsi_matrix *m, const uint64_t *words,
		   uint32_t nbits)
{
	uint32_t nwords = (nbits + 63) / 64, nfull = nbits / 64;
	uint32_t root = matrix_key_count(m->tree[1]), most = root;
	uint32_t best = 0, bc = 0, w = 0, count, key, stop;
	uint64_t bits;

	if (root == 0)
		return 0;   /* nothing to allocate anywhere */
	/* One word is one block: its exact answer costs what the hunt does */
	if (nwords > 1) {
		best = matrix_mask_hunt(m, words, nbits);
		if (best)
			return best;
		most = root - 1;
		if (most == 0)
			return 0;
	}
	while (w < nwords) {
		w = matrix_skip_empty(words, w, nfull);
		if (w == nwords)
			break;
		count = matrix_key_count(m->tree[m->leaves + w]);
		if (count <= bc) {
			w = matrix_tree_next(m, w + 1, matrix_key_ceiling(bc));
			continue;
		}
		if (count == bc + 1 && w < nfull) {
			stop = MATRIX_NO_BLOCK;
			if (bc + 1 < root)
				stop = matrix_tree_next(m, w,
						matrix_key_ceiling(bc + 1));
			if (stop > nfull)
				stop = nfull;
			for (;;) {
				w = matrix_hit_scan(m, words, w, stop);
				if (w == stop)
					break;
				key = matrix_set_key(m, w, words[w] &
							    m->blocks[w].top);
				if (key > best)
					break;
				/* A top set at bc or below: it cannot win. */
				w++;
			}
			if (w == stop)
				continue;
		} else {
			bits = words[w];
			if (w == nfull)
				bits &= (1ull << (nbits % 64)) - 1;
			key = matrix_word_key(m, w, bits, bc);
		}
		if (key > best) {
			best = key;
			bc = matrix_key_count(key);
			if (bc >= most)
				break;
		}
		w++;
	}
	return best;
}

/*
 * Best key among the online CPUs of @mask. The root's CPU is the best of
 * every set that holds it, so one bit test answers every mask that names
 * it (an explicit "all CPUs" mask among them); the others are searched.
 */
static inline bool matrix_mask_has_root(const struct umsi_matrix *m,
					const struct umsi_cpumask *mask)
{
	uint32_t cpu = matrix_key_cpu(m->tree[1]);

	/* cpu < ncpus whenever the root has a count; if not, any answer is
	 * "no room", and the bit tested is still one the caller owns. */
	return cpu < mask->nbits && ((mask->words[cpu / 64] >> (cpu % 64)) & 1);
}

static inline uint32_t matrix_mask_best(const struct umsi_matrix *m,
					const struct umsi_cpumask *mask)
{
	if (matrix_mask_has_root(m, mask))
		return m->tree[1];
	return matrix_mask_search(m, mask->words, matrix_mask_bits(m, mask));
}

/*
 * Best key among the online CPUs @first .. @first + @count - 1, for a
 * range without the root's CPU (umsi_matrix_alloc_range() answers the
 * others with the root: the best CPU of all is the best of any range that
 * holds it).
 */
static uint32_t matrix_range_best(const struct umsi_matrix *m, uint32_t first,
				  uint32_t count)
{
	uint32_t last = first + count - 1;
	uint32_t lb = matrix_blk(first), hb = matrix_blk(last);
	uint64_t lo_bits = ~0ull << (first % MATRIX_CPUS_PER_BLOCK);
	uint64_t hi_bits = ~0ull >> (63 - last % MATRIX_CPUS_PER_BLOCK);
	uint32_t best;

	if (lb == hb)
		return matrix_block_key(m, lb, lo_bits & hi_bits);
	/* A whole block at either end is its leaf. */
	best = lo_bits == ~0ull ? m->tree[m->leaves + lb] :
				  matrix_block_key(m, lb, lo_bits);
	best = matrix_max(best, hi_bits == ~0ull ?
				m->tree[m->leaves + hb] :
				matrix_block_key(m, hb, hi_bits));
	if (hb > lb + 1)
		best = matrix_max(best, matrix_tree_query(m, lb + 1, hb - 1));
	return best;
}

/* ---- Choosing a vector inside one CPU ----------------------------------- */

/* Lowest free vector of @cpu (neither owned, managed nor blocked). */
static unsigned int matrix_lowest_free(const struct umsi_matrix *m,
				       uint32_t cpu)
{
	const uint64_t *map = matrix_map(m, cpu);
	const uint64_t *blocked = matrix_cpu_blocked(m, cpu);
	uint32_t w;

	for (w = 0; w < m->wpc; w++) {
		uint64_t free = ~(map[2 * w] | map[2 * w + 1] | blocked[w]);

		if (free)
			return w * 64 + umsi_ctz64(free);
	}
	return MATRIX_NO_VECTOR;
}

/* Mark the lowest set bit of @free owned in word @w of @map; its vector. */
static inline unsigned int matrix_claim_bit(uint64_t *map, uint32_t w,
					    uint64_t free)
{
	map[2 * w] |= free & (0 - free);
	return w * 64 + umsi_ctz64(free);
}

/*
 * Words 1 to 3 of the x86 space, unrolled: the path of every allocation,
 * which docs/bench-matrix.md holds to what it cost before spaces had a
 * size. Word 0 is full, and the CPU has a free vector.
 */
static inline unsigned int matrix_claim_x86(uint64_t *map,
					    const uint64_t *blocked)
{
	uint64_t free;

	free = ~(map[2] | map[3] | blocked[1]);
	if (free)
		return matrix_claim_bit(map, 1, free);
	free = ~(map[4] | map[5] | blocked[2]);
	if (free)
		return matrix_claim_bit(map, 2, free);
	free = ~(map[6] | map[7] | blocked[3]);
	return matrix_claim_bit(map, 3, free);
}

/*
 * Take the lowest free vector of @cpu, whose bitmaps are @map: mark it
 * owned and return it. The CPU has one (its available count is not 0).
 */
static inline unsigned int matrix_claim_lowest(const struct umsi_matrix *m,
					       uint64_t *map, uint32_t cpu)
{
	const uint64_t *blocked = matrix_cpu_blocked(m, cpu);
	uint64_t free;
	uint32_t w;

	/* Word 0 first, then the three others of the x86 space unrolled. */
	free = ~(map[0] | map[1] | blocked[0]);
	if (free)
		return matrix_claim_bit(map, 0, free);
	if (m->wpc == MATRIX_X86_WORDS)
		return matrix_claim_x86(map, blocked);
	for (w = 1;; w++) {
		free = ~(map[2 * w] | map[2 * w + 1] | blocked[w]);
		if (free)
			return matrix_claim_bit(map, w, free);
	}
}

/*
 * Lowest free vector of the priority class (vector >> 4) that owns the
 * fewest vectors among the classes with a free one; ties to the lower
 * class.
 */
static UMSI_NOINLINE unsigned int
matrix_spread_free(const struct umsi_matrix *m, uint32_t cpu)
{
	const uint64_t *map = matrix_map(m, cpu);
	const uint64_t *blocked = matrix_cpu_blocked(m, cpu);
	unsigned int best_used = MATRIX_NO_VECTOR, best_vec = MATRIX_NO_VECTOR;
	unsigned int cls;

	for (cls = 0; cls < m->nvec / 16; cls++) {
		unsigned int w = cls / 4, shift = (cls % 4) * 16;
		uint64_t busy = map[2 * w] | map[2 * w + 1] | blocked[w];
		uint64_t free = (~busy >> shift) & 0xffff;
		unsigned int used;

		if (!free)
			continue;
		used = matrix_popcount64((map[2 * w] >> shift) & 0xffff);
		if (used < best_used) {
			best_used = used;
			best_vec = cls * 16 + umsi_ctz64(free);
		}
	}
	return best_vec;
}

/* Bits at the multiples of 2^order in a word: where aligned blocks start. */
static const uint64_t matrix_block_starts[UMSI_MATRIX_MAX_ORDER + 1] = {
	0xffffffffffffffffull, 0x5555555555555555ull, 0x1111111111111111ull,
	0x0101010101010101ull, 0x0001000100010001ull, 0x0000000100000001ull,
};

/*
 * Lowest free block of 2^@order vectors aligned to its size on @cpu, or
 * MATRIX_NO_VECTOR. After folding the free map onto itself by 1, 2, 4 ...
 * bits, bit i is set when vectors i .. i + 2^order - 1 are all free.
 * Aligned blocks of at most 32 never straddle two words.
 */
static unsigned int matrix_block_free(const struct umsi_matrix *m, uint32_t cpu,
				      unsigned int order)
{
	const uint64_t *map = matrix_map(m, cpu);
	const uint64_t *blocked = matrix_cpu_blocked(m, cpu);
	unsigned int w, s;

	for (w = 0; w < m->wpc; w++) {
		uint64_t free = ~(map[2 * w] | map[2 * w + 1] | blocked[w]);

		for (s = 1; s < (1u << order); s <<= 1)
			free &= free >> s;
		free &= matrix_block_starts[order];
		if (free)
			return w * 64 + umsi_ctz64(free);
	}
	return MATRIX_NO_VECTOR;
}

/* ---- Initialisation, online, offline ------------------------------------ */

int umsi_matrix_init(void *mem, size_t len,
		     const struct umsi_matrix_config *cfg,
		     struct umsi_matrix **out)
{
	uintptr_t base;
	size_t need, skip, i;
	struct umsi_matrix *m;
	uint64_t *words;
	uint32_t bits, cpu, nvec;
	unsigned int v, w;

	if (!mem || !out || !matrix_config_valid(cfg))
		return -UMSI_EINVAL;
	nvec = matrix_config_nvec(cfg);
	base = (uintptr_t)mem + MATRIX_ALIGN - 1;
	base &= ~(uintptr_t)(MATRIX_ALIGN - 1);
	skip = base - (uintptr_t)mem;
	need = matrix_layout_size(cfg->ncpus, nvec);
	if (len < skip || len - skip < need)
		return -UMSI_ENOMEM;

	/* Zero the whole layout; a local loop, the core calls no memset. */
	words = (uint64_t *)base;
	for (i = 0; i < need / sizeof(uint64_t); i++)
		words[i] = 0;

	m = (struct umsi_matrix *)base;
	m->ncpus = cfg->ncpus;
	m->nblocks = matrix_blocks_for(cfg->ncpus);
	m->leaves = matrix_leaves_for(m->nblocks);
	m->legacy_cpu = cfg->legacy_count ? cfg->legacy_cpu : UINT32_MAX;
	m->legacy_first = cfg->legacy_first;
	m->legacy_count = cfg->legacy_count;
	m->nvec = nvec;
	m->wpc = nvec / 64;
	m->map_words = 2 * m->wpc;
	/* The layout of matrix_layout_size(), part after part. */
	m->blocked = (uint64_t *)(base + matrix_align_up(sizeof(*m) +
			(size_t)m->ncpus * sizeof(struct matrix_cpu)));
	m->blocked_legacy = m->blocked + m->wpc;
	m->legacy_map = m->blocked_legacy + m->wpc;
	m->maps = m->legacy_map + m->wpc;
	m->blocks = (struct matrix_block *)(m->maps +
					    (size_t)m->ncpus * m->map_words);
	m->tree = (uint32_t *)(m->blocks + m->nblocks);

	/* Everything outside [alloc_first, alloc_last] is blocked ... */
	for (v = 0; v < nvec; v++) {
		if (v < cfg->alloc_first || v > cfg->alloc_last ||
		    (v >= cfg->system_first && v <= cfg->system_last) ||
		    matrix_test_vec(cfg->reserved, v))
			matrix_set_vec(m->blocked, v);
	}
	/* ... and on the legacy CPU the legacy vectors too. */
	for (v = 0; v < m->legacy_count; v++)
		matrix_set_vec(m->legacy_map, m->legacy_first + v);
	m->capacity = m->legacy_capacity = nvec;
	for (w = 0; w < m->wpc; w++) {
		m->blocked_legacy[w] = m->blocked[w] | m->legacy_map[w];
		m->capacity -= matrix_popcount64(m->blocked[w]);
		m->legacy_capacity -= matrix_popcount64(m->blocked_legacy[w]);
	}

	bits = 1;
	while ((m->capacity >> bits) != 0)
		bits++;
	m->nslices = bits;

	/* Every CPU starts offline with its whole capacity available. */
	for (cpu = 0; cpu < m->ncpus; cpu++) {
		struct matrix_cpu *c = matrix_cpu(m, cpu);
		struct matrix_block *b = &m->blocks[matrix_blk(cpu)];

		c->available = (uint16_t)matrix_cpu_capacity(m, cpu);
		c->sliced = c->available;
		for (v = 0; v < m->nslices; v++) {
			if ((c->available >> v) & 1)
				b->slice[v] |= matrix_bit(cpu);
		}
	}
	*out = m;
	return 0;
}

int umsi_matrix_online(struct umsi_matrix *m, uint32_t cpu)
{
	if (!m || cpu >= m->ncpus || matrix_cpu_online(m, cpu))
		return -UMSI_EINVAL;
	m->blocks[matrix_blk(cpu)].online |= matrix_bit(cpu);
	m->online++;
	m->available += matrix_cpu(m, cpu)->available;
	matrix_block_refresh(m, matrix_blk(cpu));
	return 0;
}

int umsi_matrix_offline(struct umsi_matrix *m, uint32_t cpu)
{
	if (!m || cpu >= m->ncpus || !matrix_cpu_online(m, cpu))
		return -UMSI_EINVAL;
	m->blocks[matrix_blk(cpu)].online &= ~(matrix_bit(cpu));
	m->online--;
	m->available -= matrix_cpu(m, cpu)->available;
	matrix_block_refresh(m, matrix_blk(cpu));
	return 0;
}

/* ---- Unmanaged allocation ----------------------------------------------- */

/* Take one vector on the CPU of @key, or fail if its count is 0. */
static inline int matrix_take(struct umsi_matrix *m, uint32_t key,
			      unsigned int flags, uint32_t *out)
{
	uint32_t cpu = matrix_key_cpu(key);
	struct matrix_cpu *c;
	uint64_t *map;
	unsigned int v;

	/* The best CPU has the largest count: if it has none, none has. */
	if (matrix_key_count(key) == 0)
		return -UMSI_ENOSPC;
	/* The count first: the vector is then chosen last and need not be
	 * kept across the calls of the update. */
	c = matrix_cpu(m, cpu);
	m->allocated++;
	matrix_count_down(m, c, cpu);
	*out = cpu;
	map = matrix_map(m, cpu);
	if (flags & UMSI_MATRIX_SPREAD) {
		v = matrix_spread_free(m, cpu);
		*matrix_owned_word(map, v) |= 1ull << (v & 63);
	} else {
		v = matrix_claim_lowest(m, map, cpu);
	}
	return (int)v;
}

/*
 * umsi_matrix_alloc() through a mask that misses the best CPU. Out of line
 * so that the common paths (no mask, or a mask that holds the best CPU)
 * save no registers for the search: they only jump to matrix_take().
 */
static UMSI_NOINLINE int matrix_alloc_search(struct umsi_matrix *m,
					       const struct umsi_cpumask *mask,
					       unsigned int flags,
					       uint32_t *cpu)
{
	return matrix_take(m, matrix_mask_search(m, mask->words,
						 matrix_mask_bits(m, mask)),
			   flags, cpu);
}

int umsi_matrix_alloc(struct umsi_matrix *m, const struct umsi_cpumask *mask,
		      unsigned int flags, uint32_t *cpu)
{
	if (!m || !cpu || (flags & ~UMSI_MATRIX_SPREAD) ||
	    !matrix_mask_valid(mask))
		return -UMSI_EINVAL;
	if (mask && !matrix_mask_has_root(m, mask))
		return matrix_alloc_search(m, mask, flags, cpu);
	return matrix_take(m, m->tree[1], flags, cpu);
}

/* As matrix_alloc_search(), for a range that misses the best CPU. */
static UMSI_NOINLINE int matrix_alloc_range_search(struct umsi_matrix *m,
						     uint32_t first,
						     uint32_t count,
						     unsigned int flags,
						     uint32_t *cpu)
{
	return matrix_take(m, matrix_range_best(m, first, count), flags, cpu);
}

int umsi_matrix_alloc_range(struct umsi_matrix *m, uint32_t first,
			    uint32_t count, unsigned int flags, uint32_t *cpu)
{
	if (!m || !cpu || (flags & ~UMSI_MATRIX_SPREAD) || count == 0 ||
	    first >= m->ncpus || count > m->ncpus - first)
		return -UMSI_EINVAL;
	if (matrix_key_cpu(m->tree[1]) - first >= count)
		return matrix_alloc_range_search(m, first, count, flags, cpu);
	return matrix_take(m, m->tree[1], flags, cpu);
}

int umsi_matrix_alloc_at(struct umsi_matrix *m, uint32_t cpu,
			 unsigned int vector)
{
	struct matrix_cpu *c;
	uint64_t *map;

	if (!m || cpu >= m->ncpus || vector >= m->nvec ||
	    matrix_test_vec(matrix_cpu_blocked(m, cpu), vector))
		return -UMSI_EINVAL;
	c = matrix_cpu(m, cpu);
	map = matrix_map(m, cpu);
	if (matrix_test_owned(map, vector) || matrix_test_managed(map, vector))
		return -UMSI_EBUSY;
	*matrix_owned_word(map, vector) |= 1ull << (vector & 63);
	m->allocated++;
	matrix_set_available(m, cpu, c->available - 1u);
	return 0;
}

/*
 * Slow path of umsi_matrix_alloc_block(): the CPU with the most available
 * vectors among those of @mask (NULL: all) that have a free aligned block.
 * CPUs are visited in increasing order, so only a strictly larger count
 * replaces the best; a block whose maximum cannot beat it is skipped.
 */
static uint32_t matrix_block_scan(const struct umsi_matrix *m,
				  const struct umsi_cpumask *mask,
				  unsigned int order, unsigned int *vector)
{
	uint32_t nwords = mask ? matrix_mask_words(m, mask) : m->nblocks;
	uint32_t best_cpu = UINT32_MAX, best_avail = (1u << order) - 1;
	uint32_t w, cpu;
	unsigned int v;

	for (w = 0; w < nwords; w++) {
		uint64_t bits = m->blocks[w].online;

		if (mask)
			bits &= matrix_mask_word(m, mask, w);
		if (matrix_key_count(m->tree[m->leaves + w]) <= best_avail)
			continue;
		umsi_for_each_bit(cpu, bits, w * MATRIX_CPUS_PER_BLOCK) {
			if (matrix_cpu(m, cpu)->available <= best_avail)
				continue;
			v = matrix_block_free(m, cpu, order);
			if (v != MATRIX_NO_VECTOR) {
				best_cpu = cpu;
				best_avail = matrix_cpu(m, cpu)->available;
				*vector = v;
			}
		}
	}
	return best_cpu;
}

int umsi_matrix_alloc_block(struct umsi_matrix *m,
			    const struct umsi_cpumask *mask, unsigned int order,
			    uint32_t *cpu)
{
	uint32_t key, best, size;
	unsigned int v;
	struct matrix_cpu *c;

	if (!m || !cpu || order > UMSI_MATRIX_MAX_ORDER ||
	    !matrix_mask_valid(mask))
		return -UMSI_EINVAL;
	size = 1u << order;
	key = mask ? matrix_mask_best(m, mask) : m->tree[1];
	/* The best CPU has the largest count: if it is short, all are. */
	if (matrix_key_count(key) < size)
		return -UMSI_ENOSPC;
	best = matrix_key_cpu(key);
	v = matrix_block_free(m, best, order);
	if (v == MATRIX_NO_VECTOR) {
		/* Fragmented: find the best CPU that has a block. */
		best = matrix_block_scan(m, mask, order, &v);
		if (best == UINT32_MAX)
			return -UMSI_ENOSPC;
	}
	c = matrix_cpu(m, best);
	/* An aligned block of at most 32 lies in one word. */
	*matrix_owned_word(matrix_map(m, best), v) |=
		((2ull << (size - 1)) - 1) << (v & 63);
	m->allocated += size;
	matrix_set_available(m, best, c->available - size);
	*cpu = best;
	return (int)v;
}

/* Whether @v on @cpu is an unmanaged allocation (and so may be freed). */
static bool matrix_is_unmanaged(const struct umsi_matrix *m, uint32_t cpu,
				unsigned int v)
{
	const uint64_t *map = matrix_map(m, cpu);

	return matrix_test_owned(map, v) && !matrix_test_managed(map, v) &&
	       !matrix_test_vec(matrix_cpu_blocked(m, cpu), v);
}

int umsi_matrix_free(struct umsi_matrix *m, uint32_t cpu, unsigned int vector,
		     bool managed)
{
	struct matrix_cpu *c;
	uint64_t bit, *owned, mgd;

	if (!m || cpu >= m->ncpus || vector >= m->nvec)
		return -UMSI_EINVAL;
	c = matrix_cpu(m, cpu);
	owned = matrix_owned_word(matrix_map(m, cpu), vector);
	mgd = owned[1];   /* the managed word follows the owned one */
	bit = 1ull << (vector % 64);
	if (!(*owned & bit))
		return -UMSI_EINVAL;
	if (managed) {
		if (!(mgd & bit))
			return -UMSI_EINVAL;
		/* Back to the reservation: the available count stays. */
		*owned &= ~bit;
		c->managed_allocated--;
		m->managed_allocated--;
		return 0;
	}
	/* Not a managed vector, nor a legacy one (release those instead):
	 * an owned vector outside both is an unmanaged allocation, as only
	 * the legacy vectors of the blocked ones can be owned. */
	if ((mgd & bit) ||
	    (cpu == m->legacy_cpu && matrix_test_vec(m->legacy_map, vector)))
		return -UMSI_EINVAL;
	*owned &= ~bit;
	m->allocated--;
	matrix_count_up(m, c, cpu);
	return 0;
}

int umsi_matrix_free_block(struct umsi_matrix *m, uint32_t cpu,
			   unsigned int base, unsigned int order)
{
	unsigned int size, i;
	struct matrix_cpu *c;

	if (!m || cpu >= m->ncpus || order > UMSI_MATRIX_MAX_ORDER)
		return -UMSI_EINVAL;
	size = 1u << order;
	if (base >= m->nvec || (base & (size - 1)))
		return -UMSI_EINVAL;
	for (i = 0; i < size; i++) {
		if (!matrix_is_unmanaged(m, cpu, base + i))
			return -UMSI_EINVAL;
	}
	c = matrix_cpu(m, cpu);
	*matrix_owned_word(matrix_map(m, cpu), base) &=
		~(((2ull << (size - 1)) - 1) << (base & 63));
	m->allocated -= size;
	matrix_set_available(m, cpu, c->available + size);
	return 0;
}

/* ---- Managed vectors ---------------------------------------------------- */

int umsi_matrix_reserve_managed(struct umsi_matrix *m,
				const struct umsi_cpumask *mask)
{
	uint32_t nwords, ncpus = 0, w, cpu;
	uint64_t bits;
	struct matrix_cpu *c;
	unsigned int v;

	if (!m || !mask || !matrix_mask_valid(mask))
		return -UMSI_EINVAL;
	nwords = matrix_mask_words(m, mask);
	/* First pass: every CPU must have room, or nothing is reserved. */
	for (w = 0; w < nwords; w++) {
		bits = matrix_mask_word(m, mask, w);
		umsi_for_each_bit(cpu, bits, w * MATRIX_CPUS_PER_BLOCK) {
			if (matrix_cpu(m, cpu)->available == 0)
				return -UMSI_ENOSPC;
			ncpus++;
		}
	}
	if (ncpus == 0)
		return -UMSI_EINVAL;
	for (w = 0; w < nwords; w++) {
		bits = matrix_mask_word(m, mask, w);
		umsi_for_each_bit(cpu, bits, w * MATRIX_CPUS_PER_BLOCK) {
			c = matrix_cpu(m, cpu);
			v = matrix_lowest_free(m, cpu);
			*matrix_managed_word(matrix_map(m, cpu), v) |=
				1ull << (v & 63);
			c->managed_count++;
			m->managed++;
			matrix_set_available(m, cpu, c->available - 1u);
		}
	}
	return 0;
}

/* Drop the highest unused managed reservation of @cpu (there is one). */
static void matrix_drop_reservation(struct umsi_matrix *m, uint32_t cpu)
{
	uint64_t *map = matrix_map(m, cpu);
	uint32_t w;

	for (w = m->wpc; w-- > 0;) {
		uint64_t unused = map[2 * w + 1] & ~map[2 * w];

		if (unused) {
			map[2 * w + 1] &= ~(1ull << matrix_fls64(unused));
			return;
		}
	}
}

int umsi_matrix_remove_managed(struct umsi_matrix *m,
			       const struct umsi_cpumask *mask)
{
	uint32_t nwords, ncpus = 0, w, cpu;
	uint64_t bits;
	struct matrix_cpu *c;

	if (!m || !mask || !matrix_mask_valid(mask))
		return -UMSI_EINVAL;
	nwords = matrix_mask_words(m, mask);
	for (w = 0; w < nwords; w++) {
		bits = matrix_mask_word(m, mask, w);
		umsi_for_each_bit(cpu, bits, w * MATRIX_CPUS_PER_BLOCK) {
			c = matrix_cpu(m, cpu);
			if (c->managed_count == c->managed_allocated)
				return -UMSI_EINVAL;
			ncpus++;
		}
	}
	if (ncpus == 0)
		return -UMSI_EINVAL;
	for (w = 0; w < nwords; w++) {
		bits = matrix_mask_word(m, mask, w);
		umsi_for_each_bit(cpu, bits, w * MATRIX_CPUS_PER_BLOCK) {
			c = matrix_cpu(m, cpu);
			matrix_drop_reservation(m, cpu);
			c->managed_count--;
			m->managed--;
			matrix_set_available(m, cpu, c->available + 1u);
		}
	}
	return 0;
}

int umsi_matrix_alloc_managed(struct umsi_matrix *m,
			      const struct umsi_cpumask *mask, uint32_t *cpu)
{
	uint32_t nwords, best = UINT32_MAX, best_unused = 0, w, n, unused;
	uint64_t bits, free, *map;
	struct matrix_cpu *c;

	if (!m || !cpu || !matrix_mask_valid(mask))
		return -UMSI_EINVAL;
	nwords = mask ? matrix_mask_words(m, mask) : m->nblocks;
	for (w = 0; w < nwords; w++) {
		bits = m->blocks[w].online;
		if (mask)
			bits &= matrix_mask_word(m, mask, w);
		umsi_for_each_bit(n, bits, w * MATRIX_CPUS_PER_BLOCK) {
			unused = (uint32_t)matrix_cpu(m, n)->managed_count -
				 matrix_cpu(m, n)->managed_allocated;
			if (unused > best_unused) {
				best_unused = unused;
				best = n;
			}
		}
	}
	if (best == UINT32_MAX)
		return -UMSI_ENOSPC;
	c = matrix_cpu(m, best);
	map = matrix_map(m, best);
	for (w = 0; w < m->wpc; w++) {
		free = map[2 * w + 1] & ~map[2 * w];
		if (free) {
			unsigned int v = w * 64 + umsi_ctz64(free);

			map[2 * w] |= 1ull << (v & 63);
			c->managed_allocated++;
			m->managed_allocated++;
			*cpu = best;
			return (int)v;
		}
	}
	return -UMSI_EIO; /* unreachable: the counters promised a free slot */
}

/* ---- Legacy vectors ----------------------------------------------------- */

int umsi_matrix_assign_legacy(struct umsi_matrix *m, unsigned int isa_irq)
{
	uint64_t *map;
	unsigned int v;

	if (!m || isa_irq >= m->legacy_count)
		return -UMSI_EINVAL;
	v = m->legacy_first + isa_irq;
	map = matrix_map(m, m->legacy_cpu);
	if (matrix_test_owned(map, v))
		return -UMSI_EBUSY;
	*matrix_owned_word(map, v) |= 1ull << (v & 63);
	m->legacy++;
	return (int)v;
}

int umsi_matrix_release_legacy(struct umsi_matrix *m, unsigned int isa_irq)
{
	uint64_t *map;
	unsigned int v;

	if (!m || isa_irq >= m->legacy_count)
		return -UMSI_EINVAL;
	v = m->legacy_first + isa_irq;
	map = matrix_map(m, m->legacy_cpu);
	if (!matrix_test_owned(map, v))
		return -UMSI_EINVAL;
	*matrix_owned_word(map, v) &= ~(1ull << (v & 63));
	m->legacy--;
	return 0;
}

/* ---- Queries ------------------------------------------------------------ */

uint32_t umsi_matrix_nvec(const struct umsi_matrix *m)
{
	return m ? m->nvec : 0;
}

bool umsi_matrix_is_allocated(const struct umsi_matrix *m, uint32_t cpu,
			      unsigned int vector)
{
	if (!m || cpu >= m->ncpus || vector >= m->nvec)
		return false;
	return matrix_test_owned(matrix_map(m, cpu), vector);
}

int umsi_matrix_vector_state(const struct umsi_matrix *m, uint32_t cpu,
			     unsigned int vector)
{
	const uint64_t *map;
	bool owned;

	if (!m || cpu >= m->ncpus || vector >= m->nvec)
		return -UMSI_EINVAL;
	map = matrix_map(m, cpu);
	owned = matrix_test_owned(map, vector);
	if (cpu == m->legacy_cpu && matrix_test_vec(m->legacy_map, vector))
		return owned ? UMSI_VECTOR_LEGACY_ALLOCATED :
			       UMSI_VECTOR_LEGACY_FREE;
	if (matrix_test_vec(m->blocked, vector))
		return UMSI_VECTOR_RESERVED;
	if (matrix_test_managed(map, vector))
		return owned ? UMSI_VECTOR_MANAGED_ALLOCATED :
			       UMSI_VECTOR_MANAGED_FREE;
	return owned ? UMSI_VECTOR_ALLOCATED : UMSI_VECTOR_FREE;
}

void umsi_matrix_stats(const struct umsi_matrix *m,
		       struct umsi_matrix_stats *st)
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
	const struct matrix_cpu *c;
	unsigned int w;

	if (!m || !st || cpu >= m->ncpus)
		return -UMSI_EINVAL;
	c = matrix_cpu(m, cpu);
	st->capacity = matrix_cpu_capacity(m, cpu);
	st->available = c->available;
	st->allocated = st->capacity - c->available - c->managed_count;
	st->managed = c->managed_count;
	st->managed_allocated = c->managed_allocated;
	st->legacy = 0;
	if (cpu == m->legacy_cpu) {
		const uint64_t *map = matrix_map(m, cpu);

		for (w = 0; w < m->wpc; w++)
			st->legacy += matrix_popcount64(map[2 * w] &
							m->legacy_map[w]);
	}
	st->online = matrix_cpu_online(m, cpu);
	return 0;
}

/* ---- Invariant checker -------------------------------------------------- */

struct matrix_sums {
	uint32_t online, available, allocated;
	uint32_t managed, managed_allocated, legacy;
};

/* One CPU against its own bitmaps; NULL when consistent. */
static const char *matrix_check_cpu(const struct umsi_matrix *m, uint32_t cpu,
				    struct matrix_sums *sums)
{
	const struct matrix_cpu *c = matrix_cpu(m, cpu);
	const uint64_t *map = matrix_map(m, cpu);
	const uint64_t *blocked = matrix_cpu_blocked(m, cpu);
	const struct matrix_block *b = &m->blocks[matrix_blk(cpu)];
	unsigned int bit = cpu % MATRIX_CPUS_PER_BLOCK, w, s;
	uint32_t managed = 0, managed_allocated = 0, allocated = 0, legacy = 0;
	uint32_t want;
	bool legacy_cpu = cpu == m->legacy_cpu;

	for (w = 0; w < m->wpc; w++) {
		uint64_t legacy_ok = legacy_cpu ? m->legacy_map[w] : 0;
		uint64_t owned = map[2 * w], mgd = map[2 * w + 1];

		if (mgd & blocked[w])
			return "a managed reservation lies on a reserved vector";
		if (owned & blocked[w] & ~legacy_ok)
			return "a reserved vector is owned";
		managed += matrix_popcount64(mgd);
		managed_allocated += matrix_popcount64(owned & mgd);
		allocated += matrix_popcount64(owned & ~mgd & ~blocked[w]);
		legacy += matrix_popcount64(owned & legacy_ok);
	}
	if (managed != c->managed_count)
		return "the managed count differs from the managed bitmap";
	if (managed_allocated != c->managed_allocated)
		return "the managed-allocated count differs from the bitmaps";
	if (allocated + managed > matrix_cpu_capacity(m, cpu) ||
	    c->available != matrix_cpu_capacity(m, cpu) - allocated - managed)
		return "available differs from capacity - allocated - managed";
	for (s = 0; s < MATRIX_MAX_SLICES; s++) {
		want = s < m->nslices ? (c->sliced >> s) & 1 : 0;
		if (((b->slice[s] >> bit) & 1) != want)
			return "a count slice differs from the count it should hold";
	}
	if (((b->stale >> bit) & 1) != (c->sliced != c->available))
		return "the stale set differs from the CPUs whose slices lag";
	if (matrix_cpu_online(m, cpu)) {
		sums->online++;
		sums->available += c->available;
	}
	sums->allocated += allocated;
	sums->managed += managed;
	sums->managed_allocated += managed_allocated;
	sums->legacy += legacy;
	return NULL;
}

/* The online CPUs of block @blk at its maximum, from the counts alone. */
static uint64_t matrix_check_top(const struct umsi_matrix *m, uint32_t blk)
{
	uint64_t online = m->blocks[blk].online, top = 0, bit;
	uint32_t max = 0, avail;

	while (online) {
		bit = online & -online;
		online &= online - 1;
		avail = matrix_cpu(m, matrix_first(blk, bit))->available;
		if (!top || avail > max) {
			top = bit;
			max = avail;
		} else if (avail == max) {
			top |= bit;
		}
	}
	return top;
}

/* Whether an online CPU of block @blk outside top has more than "below". */
static bool matrix_check_below(const struct umsi_matrix *m, uint32_t blk)
{
	const struct matrix_block *b = &m->blocks[blk];
	uint64_t rest = b->online & ~b->top;

	while (rest) {
		if (matrix_cpu(m, matrix_first(blk, rest))->available > b->below)
			return true;
		rest &= rest - 1;
	}
	return false;
}

static const char *matrix_check_layers(const struct umsi_matrix *m,
				       uint32_t *where)
{
	uint32_t capacity = m->nvec;
	uint32_t legacy_capacity = m->nvec;
	uint32_t blk, i, key;
	unsigned int w, s;

	if (m->nvec % UMSI_MATRIX_MIN_VECTORS || m->nvec > UMSI_MATRIX_MAX_VECTORS ||
	    m->wpc != m->nvec / 64 ||
	    m->map_words != 2 * m->wpc)
		return "the space size is not a valid nvec";
	for (w = 0; w < m->wpc; w++) {
		capacity -= matrix_popcount64(m->blocked[w]);
		legacy_capacity -= matrix_popcount64(m->blocked_legacy[w]);
		if (m->blocked_legacy[w] != (m->blocked[w] | m->legacy_map[w]))
			return "the legacy CPU's blocked map is not blocked + legacy";
	}
	if (capacity != m->capacity || legacy_capacity != m->legacy_capacity)
		return "a capacity differs from the blocked maps";
	if (m->capacity >> m->nslices)
		return "too few count slices for the capacity";
	for (blk = 0; blk < m->nblocks; blk++) {
		uint32_t used = m->ncpus - blk * MATRIX_CPUS_PER_BLOCK;
		uint64_t beyond = used >= 64 ? 0 : ~0ull << used;
		const struct matrix_block *b = &m->blocks[blk];

		*where = blk * MATRIX_CPUS_PER_BLOCK;
		if (b->online & beyond)
			return "a CPU beyond the last one is online";
		if (b->top & ~b->online)
			return "an offline CPU is in a block's top set";
		for (s = 0; s < MATRIX_MAX_SLICES; s++) {
			if (b->slice[s] & beyond)
				return "a count slice has a bit beyond the last CPU";
		}
		if (b->stale & (b->stale - 1))
			return "a block has more than one stale CPU";
		if (b->top != matrix_check_top(m, blk))
			return "a block's top set is not its CPUs at the maximum";
		if (matrix_check_below(m, blk))
			return "a CPU outside a block's top set is above its bound";
		key = b->top ? matrix_set_key(m, blk, b->top) : 0;
		if (m->tree[m->leaves + blk] != key)
			return "a tree leaf differs from its block's top set";
	}
	*where = UINT32_MAX;
	for (i = m->nblocks; i < m->leaves; i++) {
		if (m->tree[m->leaves + i] != 0)
			return "a padding leaf of the tree is not empty";
	}
	for (i = 1; i < m->leaves; i++) {
		key = matrix_max(m->tree[2 * i], m->tree[2 * i + 1]);
		if (m->tree[i] != key)
			return "a tree node is not the maximum of its children";
	}
	return NULL;
}

int umsi_matrix_check_detail(const struct umsi_matrix *m, const char **why,
			     uint32_t *cpu)
{
	struct matrix_sums sums;
	const char *bad = NULL;
	uint32_t where = UINT32_MAX, n;

	if (!m)
		return -UMSI_EINVAL;
	/* Field by field: "= { 0 }" is a memset call for clang -O0. */
	sums.online = sums.available = sums.allocated = 0;
	sums.managed = sums.managed_allocated = sums.legacy = 0;
	for (n = 0; n < m->ncpus && !bad; n++) {
		bad = matrix_check_cpu(m, n, &sums);
		where = n;
	}
	if (!bad) {
		where = UINT32_MAX;
		bad = matrix_check_layers(m, &where);
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
