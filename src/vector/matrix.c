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
 * One CPU may be ahead of the index: the last free waits outside it (the
 * pending CPU, struct umsi_matrix pend_key, its key at its real count).
 * An IRQ layer frees a vector and allocates the next on the CPU it left,
 * which is then the best again: the allocation compares the pending key
 * with the index's best for its set and takes the pending CPU when it
 * wins, and the index never moved. A set that holds the pending CPU is
 * searched only for a better key. A free on another CPU, and every other
 * call that changes a count, applies the waiting frees first
 * (matrix_settle()); queries add them.
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
#include "matrix_index.h"
#include "matrix_priv.h"

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
	m->tree[0] = MATRIX_TREE_TOP;

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
	matrix_settle(m);
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
	matrix_settle(m);
	m->blocks[matrix_blk(cpu)].online &= ~(matrix_bit(cpu));
	m->online--;
	m->available -= matrix_cpu(m, cpu)->available;
	matrix_block_refresh(m, matrix_blk(cpu));
	return 0;
}

/* ---- Unmanaged allocation ----------------------------------------------- */

/* Mark a free vector of @cpu owned (the lowest, or by class with
 * UMSI_MATRIX_SPREAD) and return it; the CPU has one. Inline in
 * matrix_take(), every allocation's path; out of line for the pending
 * CPU's (matrix_claim()), which keeps that path's callers lean. */
static UMSI_ALWAYS_INLINE int matrix_claim_inline(struct umsi_matrix *m,
						  uint32_t cpu,
						  unsigned int flags)
{
	uint64_t *map = matrix_map(m, cpu);
	unsigned int v;

	if (flags & UMSI_MATRIX_SPREAD) {
		v = matrix_spread_free(m, cpu);
		*matrix_owned_word(map, v) |= 1ull << (v & 63);
	} else {
		v = matrix_claim_lowest(m, map, cpu);
	}
	return (int)v;
}

static UMSI_NOINLINE int matrix_claim(struct umsi_matrix *m, uint32_t cpu,
				      unsigned int flags)
{
	return matrix_claim_inline(m, cpu, flags);
}

/* Take one vector on the CPU of @key, or fail if its count is 0. The CPU
 * is not the pending one: a key of it would lose to pend_key. */
static inline int matrix_take(struct umsi_matrix *m, uint32_t key,
			      unsigned int flags, uint32_t *out)
{
	uint32_t cpu = matrix_key_cpu(key);

	/* The best CPU has the largest count: if it has none, none has. */
	if (matrix_key_count(key) == 0)
		return -UMSI_ENOSPC;
	/* The count first: the vector is then chosen last and need not be
	 * kept across the calls of the update. */
	m->allocated++;
	matrix_count_down(m, matrix_cpu(m, cpu), cpu);
	*out = cpu;
	return matrix_claim_inline(m, cpu, flags);
}

/* Take one vector on the pending CPU, the best of the caller's set: one
 * pending free fewer, and the index has nothing to change. */
static int matrix_take_pending(struct umsi_matrix *m, unsigned int flags,
			       uint32_t *out)
{
	uint32_t cpu = matrix_key_cpu(m->pend_key);

	m->allocated++;
	m->pend_key -= 1u << 16;
	if (matrix_key_count(m->pend_key) == matrix_cpu(m, cpu)->available)
		m->pend_key = 0;
	*out = cpu;
	return matrix_claim(m, cpu, flags);
}

/*
 * umsi_matrix_alloc() through a mask that misses the best CPU. Out of line
 * so that the common paths (no mask, or a mask that holds the best CPU)
 * save no registers for the search: they only jump to matrix_take(). A
 * pending CPU in the mask is a candidate the index does not see: the
 * search only looks for a better one.
 */
static UMSI_NOINLINE int matrix_alloc_search(struct umsi_matrix *m,
					       const struct umsi_cpumask *mask,
					       unsigned int flags,
					       uint32_t *cpu)
{
	uint32_t pk = m->pend_key, key;

	if (pk && matrix_mask_test(mask, matrix_key_cpu(pk))) {
		if (pk > m->tree[1])
			return matrix_take_pending(m, flags, cpu);
		key = matrix_mask_search_above(m, mask->words,
					       matrix_mask_bits(m, mask), pk);
		if (key < pk)
			return matrix_take_pending(m, flags, cpu);
		return matrix_take(m, key, flags, cpu);
	}
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
	if (m->pend_key > m->tree[1] &&
	    (!mask || matrix_mask_test(mask, matrix_key_cpu(m->pend_key))))
		return matrix_take_pending(m, flags, cpu);
	return matrix_take(m, m->tree[1], flags, cpu);
}

/* As matrix_alloc_search(), for a range that misses the best CPU. */
static UMSI_NOINLINE int matrix_alloc_range_search(struct umsi_matrix *m,
						     uint32_t first,
						     uint32_t count,
						     unsigned int flags,
						     uint32_t *cpu)
{
	uint32_t pk = m->pend_key, key;

	if (pk && matrix_key_cpu(pk) - first < count) {
		if (pk > m->tree[1])
			return matrix_take_pending(m, flags, cpu);
		key = matrix_range_best_above(m, first, count, pk);
		if (key < pk)
			return matrix_take_pending(m, flags, cpu);
		return matrix_take(m, key, flags, cpu);
	}
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
	if (m->pend_key > m->tree[1] &&
	    matrix_key_cpu(m->pend_key) - first < count)
		return matrix_take_pending(m, flags, cpu);
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
	matrix_settle(m);
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
		/* The pending CPU may have more than its block's leaf. */
		if (matrix_key_count(m->tree[m->leaves + w]) <= best_avail &&
		    !(m->pend_key && matrix_blk(matrix_key_cpu(m->pend_key)) == w))
			continue;
		umsi_for_each_bit(cpu, bits, w * MATRIX_CPUS_PER_BLOCK) {
			if (matrix_avail(m, cpu) <= best_avail)
				continue;
			v = matrix_block_free(m, cpu, order);
			if (v != MATRIX_NO_VECTOR) {
				best_cpu = cpu;
				best_avail = matrix_avail(m, cpu);
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
	if (m->pend_key > key &&
	    (!mask || matrix_mask_test(mask, matrix_key_cpu(m->pend_key))))
		key = m->pend_key;
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
	matrix_settle(m);
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
	if (matrix_is_pend(m, cpu)) {
		m->pend_key += 1u << 16;
		return 0;
	}
	if (!matrix_cpu_online(m, cpu)) {
		matrix_count_up(m, c, cpu);
		return 0;
	}
	/* The frees of another CPU go to the index; this one waits. */
	matrix_settle(m);
	m->pend_key = matrix_key(c->available + 1u, cpu);
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
	matrix_settle(m);
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
			if (matrix_avail(m, cpu) == 0)
				return -UMSI_ENOSPC;
			ncpus++;
		}
	}
	if (ncpus == 0)
		return -UMSI_EINVAL;
	matrix_settle(m);
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
	matrix_settle(m);
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
	st->available = m->available + matrix_pend(m);
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
	st->available = matrix_avail(m, cpu);
	st->allocated = st->capacity - st->available - c->managed_count;
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
