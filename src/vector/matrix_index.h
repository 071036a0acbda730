/* SPDX-License-Identifier: MIT */
/*
 * matrix_index.h - the allocator's index over the CPUs: the tree over the
 * blocks, each block's top set and count slices, masks against it, and
 * the choice of a vector inside one CPU (the layers the comment at the
 * top of matrix.c describes).
 *
 * Included by matrix.c alone: its functions are static so that the
 * allocation paths inline them as they did in one file (the figures of
 * make bench-matrix depend on it). Private to src/vector.
 */
#ifndef UMSI_VECTOR_MATRIX_INDEX_H
#define UMSI_VECTOR_MATRIX_INDEX_H

#include "matrix_priv.h"
/* ---- The tree over the blocks ------------------------------------------- */

/*
 * The leaf of @blk rose to @key. A parent holds the larger key of its two
 * children, so it changes only while it is smaller than @key: climb until
 * one is not. tree[0], above the root, is MATRIX_TREE_TOP: larger than
 * any key, it ends this climb and the next without a test of the index.
 */
static void matrix_tree_raise(struct umsi_matrix *m, uint32_t blk, uint32_t key)
{
	uint32_t *tree = m->tree;
	uint32_t i = m->leaves + blk;

	tree[i] = key;
	for (;;) {
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
	for (;;) {
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
 * The CPU of block @blk that "below" leaves out: the legacy CPU, which
 * holds fewer vectors than the others (x86: 16 fewer on CPU 0) and so,
 * while CPUs are idle, would hold the bound of its block above every busy
 * CPU's. Readers of the bound test it on its own.
 */
static inline uint64_t matrix_apart(const struct umsi_matrix *m, uint32_t blk)
{
	return matrix_blk(m->legacy_cpu) == blk ? matrix_bit(m->legacy_cpu) : 0;
}

/*
 * Make the bound "below" of block @blk exact again, from the slices. Done
 * when the CPU at the bound falls, so that the bound keeps following the
 * busy CPUs down.
 */
static UMSI_NOINLINE void matrix_below_exact(struct umsi_matrix *m,
					       uint32_t blk)
{
	struct matrix_block *b = &m->blocks[blk];
	uint64_t rest = b->online & ~b->top & ~matrix_apart(m, blk);

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
		if (avail > b->below && cpu != m->legacy_cpu)
			b->below = avail;
		/* The leaf changes only if it named this CPU. */
		if (matrix_key_cpu(leaf) == cpu)
			matrix_tree_lower(m, blk, matrix_set_key(m, blk, top));
	} else if (avail > b->below) {
		if (cpu != m->legacy_cpu)
			b->below = avail;
	} else if (old == b->below && avail < old) {
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
	} else if (avail > b->below && cpu != m->legacy_cpu) {
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
		if (c->available + 1u == b->below)
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

/*
 * Apply the pending frees (struct umsi_matrix, pend_key) to the index. Every
 * function that changes a count another way, or reads the index for
 * anything but the choice of umsi_matrix_alloc*(), calls it once it has
 * checked everything it can fail on: a failed call leaves the memory as
 * it was, byte for byte.
 */
static UMSI_NOINLINE void matrix_settle_slow(struct umsi_matrix *m)
{
	uint32_t cpu = matrix_key_cpu(m->pend_key), n = matrix_pend(m);
	struct matrix_cpu *c = matrix_cpu(m, cpu);

	m->pend_key = 0;
	if (n == 1)
		matrix_count_up(m, c, cpu);
	else
		matrix_set_available(m, cpu, c->available + n);
}

static inline void matrix_settle(struct umsi_matrix *m)
{
	if (m->pend_key)
		matrix_settle_slow(m);
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
 * The first of the full mask words @w .. @stop - 1 whose block may hold a
 * masked CPU above the count @bc, or @stop: the word meets the block's top
 * set, or the block's bound "below" is above @bc. Eight blocks per test,
 * branch-free inside: below > bc sets the sign bit of bc - below.
 */
static uint32_t matrix_pass_scan(const struct umsi_matrix *m,
				 const uint64_t *words, uint32_t w,
				 uint32_t stop, uint32_t bc)
{
	const uint64_t *p = words + w;
	const struct matrix_block *b = m->blocks + w;
	uint64_t c = bc, hit, over;
	uint32_t n;

	for (n = (stop - w) / 8; n; n--) {
		hit = (p[0] & b[0].top) | (p[1] & b[1].top) |
		      (p[2] & b[2].top) | (p[3] & b[3].top) |
		      (p[4] & b[4].top) | (p[5] & b[5].top) |
		      (p[6] & b[6].top) | (p[7] & b[7].top);
		over = (c - b[0].below) | (c - b[1].below) |
		       (c - b[2].below) | (c - b[3].below) |
		       (c - b[4].below) | (c - b[5].below) |
		       (c - b[6].below) | (c - b[7].below);
		if (hit | (over >> 63))
			break;
		p += 8;
		b += 8;
	}
	for (n = stop - (uint32_t)(p - words);
	     n && !(*p & b->top) && b->below <= bc; n--) {
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

/* matrix_mask_one(): the mask names more than one CPU. */
#define MATRIX_NOT_ONE 0xffffffffu

/*
 * A mask that names one CPU (an IRQ pinned to it): that CPU's key, or 0
 * when it is offline (or beyond the CPUs); MATRIX_NOT_ONE for any other
 * mask, found at its first word with two bits, or its second non-empty
 * word. One pass over the words, eight at a time past the CPU's, instead
 * of the search's bounds: the choice is the same, there is no other.
 */
static uint32_t matrix_mask_one(const struct umsi_matrix *m,
				const uint64_t *words, uint32_t nbits)
{
	uint32_t nwords = (nbits + 63) / 64, w, n;
	uint64_t bits, tail = nbits % 64 ? (1ull << (nbits % 64)) - 1 : ~0ull;
	const uint64_t *p;

	w = matrix_skip_empty(words, 0, nwords);
	if (w == nwords)
		return 0;
	bits = words[w];
	if (w == nwords - 1)
		bits &= tail;
	if (bits & (bits - 1))
		return MATRIX_NOT_ONE;
	if (w + 1 < nwords) {
		p = words + w + 1;
		for (n = (nwords - 1 - (w + 1)) / 8; n; n--, p += 8)
			if (p[0] | p[1] | p[2] | p[3] | p[4] | p[5] | p[6] |
			    p[7])
				return MATRIX_NOT_ONE;
		for (; p < words + nwords - 1; p++)
			if (*p)
				return MATRIX_NOT_ONE;
		if (*p & tail)
			return MATRIX_NOT_ONE;
	}
	bits &= m->blocks[w].online;
	return bits ? matrix_set_key(m, w, bits) : 0;
}

/* The OR of the @n words at @p: eight words per test, since a mask with
 * other CPUs than one usually shows one in its first eight. */
static inline uint64_t matrix_or_words(const uint64_t *p, uint32_t n)
{
	uint64_t acc = 0;

	for (; n >= 8; n -= 8, p += 8) {
		acc = p[0] | p[1] | p[2] | p[3] | p[4] | p[5] | p[6] | p[7];
		if (acc)
			return acc;
	}
	if (n >= 4) {
		acc = p[0] | p[1] | p[2] | p[3];
		p += 4;
		n -= 4;
	}
	if (n >= 2) {
		acc |= p[0] | p[1];
		p += 2;
		n -= 2;
	}
	if (n)
		acc |= p[0];
	return acc;
}

/*
 * Whether the mask of @nbits bits names @cpu (which it holds) and no other
 * CPU: one OR per word but the CPU's own, which is only tested.
 */
static bool matrix_mask_only(const uint64_t *words, uint32_t nbits,
			     uint32_t cpu)
{
	uint32_t nfull = nbits / 64, cw = cpu / 64;
	uint64_t tail = (1ull << (nbits % 64)) - 1;
	uint64_t own = words[cw] & ~(1ull << (cpu % 64));

	if (cw == nfull)
		return !(own & tail) && !matrix_or_words(words, cw);
	if (own || matrix_or_words(words, cw) ||
	    matrix_or_words(words + cw + 1, nfull - cw - 1))
		return false;
	return nbits % 64 == 0 || !(words[nfull] & tail);
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
static UMSI_ALWAYS_INLINE uint32_t matrix_word_key(const struct umsi_matrix *m, uint32_t w,
				       uint64_t bits, uint32_t bc)
{
	const struct matrix_block *b = &m->blocks[w];
	uint64_t clean;
	uint32_t key = 0;

	bits &= b->online;
	if (bits & b->top)
		return matrix_set_key(m, w, bits & b->top);
	if (!bits)
		return 0;
	if (b->below <= bc) {
		/* Only the CPU the bound leaves out may beat bc. */
		bits &= matrix_apart(m, w);
		return bits ? matrix_set_key(m, w, bits) : 0;
	}
	/* One CPU (a pinned IRQ's): its own count. */
	if (!(bits & (bits - 1)))
		return matrix_set_key(m, w, bits);
	clean = bits & ~b->stale;
	if (clean)
		key = matrix_set_key(m, w, matrix_block_top(m, b, clean));
	if (bits & b->stale)
		key = matrix_max(key, matrix_set_key(m, w, b->stale));
	return key;
}

/*
 * Best key among the online CPUs of an arbitrary mask of @nbits bits (not
 * more than the CPUs) whose count is above @bc, or 0 if there is none:
 * branch and bound over the blocks in CPU order, stopping once the best
 * count reaches @most, the most the mask can have.
 *
 * With best count bc so far, a later CPU wins only with a count above bc
 * (ties go to the lower CPU). So:
 *  - a block whose masked CPUs all miss its top set, and whose bound
 *    "below" is at most bc, cannot win: a tight loop passes runs of them
 *    (most blocks of a mask of busy CPUs next to idle ones);
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
 */
static uint32_t matrix_mask_bound(const struct umsi_matrix *m,
				  const uint64_t *words, uint32_t nbits,
				  uint32_t bc, uint32_t most)
{
	uint32_t nwords = (nbits + 63) / 64, nfull = nbits / 64;
	uint32_t root = matrix_key_count(m->tree[1]);
	uint32_t best = 0, w = 0, count, key, stop;
	uint32_t lstop = nfull, lcpu = m->legacy_cpu;
	uint64_t bits;

	/*
	 * "below" leaves the legacy CPU out: if the mask names it, online,
	 * above bc, the passes stop at its block, where matrix_word_key()
	 * tests it on its own.
	 */
	if (lcpu < nfull * 64 && matrix_mask_bit(words, lcpu) &&
	    matrix_cpu_online(m, lcpu) && matrix_cpu(m, lcpu)->available > bc)
		lstop = matrix_blk(lcpu);
	while (w < nwords) {
		w = matrix_pass_scan(m, words, w, w <= lstop ? lstop : nfull,
				     bc);
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
 * Best key among the online CPUs of an arbitrary mask of @nbits bits (not
 * more than the CPUs) that misses the root's CPU, or 0: a CPU of the mask
 * at the root's count (matrix_mask_hunt()), else the one CPU of a mask of
 * one, else the branch and bound, which stops when the best count reaches
 * the most the mask can have (one less than the root's count, after the
 * hunt found none there).
 */
static UMSI_NOINLINE uint32_t
matrix_mask_search(const struct umsi_matrix *m, const uint64_t *words,
		   uint32_t nbits)
{
	uint32_t root = matrix_key_count(m->tree[1]), most = root, best;

	if (root == 0)
		return 0;   /* nothing to allocate anywhere */
	/* One word is one block: its exact answer costs what the hunt does */
	if (nbits > 64) {
		best = matrix_mask_hunt(m, words, nbits);
		if (best)
			return best;
		/*
		 * Nothing at the root's count: a mask pinned to one CPU
		 * (which rarely has it) is answered in one pass more, not
		 * by the bounds below; the others go on.
		 */
		best = matrix_mask_one(m, words, nbits);
		if (best != MATRIX_NOT_ONE)
			return best;
		most = root - 1;
		if (most == 0)
			return 0;
	}
	return matrix_mask_bound(m, words, nbits, 0, most);
}

/*
 * The search of a mask that holds the pending CPU (struct umsi_matrix,
 * pend_key), whose key @pk is below the root's: the index's best key of the
 * mask if it beats @pk, else any key that does not (0 among them). Only
 * counts of at least @pk's can beat it, which bounds the search from the
 * start; a mask of that CPU alone is found in one pass over its words.
 */
static inline uint32_t
matrix_mask_search_above(const struct umsi_matrix *m, const uint64_t *words,
			 uint32_t nbits, uint32_t pk)
{
	uint32_t root = matrix_key_count(m->tree[1]);
	uint32_t count = matrix_key_count(pk), upto;

	/* One word is one block, and its exact answer one matrix_word_key(). */
	if (nbits <= 64)
		return matrix_word_key(m, 0, words[0] & (~0ull >> (64 - nbits)),
				       count - 1);
	/* A mask of the pending CPU alone: nothing beats it. */
	if (matrix_mask_only(words, nbits, matrix_key_cpu(pk)))
		return 0;
	if (count == root) {
		/* Only a CPU at the root's count below the pending one beats
		 * it: the hunt, up to its word. */
		upto = (matrix_blk(matrix_key_cpu(pk)) + 1) *
		       MATRIX_CPUS_PER_BLOCK;
		return matrix_mask_hunt(m, words, upto < nbits ? upto : nbits);
	}
	return matrix_mask_bound(m, words, nbits, count - 1, root);
}

/*
 * Best key among the online CPUs of @mask. The root's CPU is the best of
 * every set that holds it, so one bit test answers every mask that names
 * it (an explicit "all CPUs" mask among them); the others are searched.
 */
static inline bool matrix_mask_has_root(const struct umsi_matrix *m,
					const struct umsi_cpumask *mask)
{
	/* The root's CPU is below ncpus whenever it has a count; if not, any
	 * answer is "no room", and the bit tested is still one the caller
	 * owns. */
	return matrix_mask_test(mask, matrix_key_cpu(m->tree[1]));
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

/*
 * As matrix_block_key(), for a candidate that must beat the count @floor:
 * CPUs outside the top set are at most "below", so a block whose bound is
 * under @floor is decided by its top set alone, without slices.
 */
static inline uint32_t matrix_block_key_above(const struct umsi_matrix *m,
					      uint32_t blk, uint64_t cand,
					      uint32_t floor)
{
	const struct matrix_block *b = &m->blocks[blk];
	uint64_t hit = cand & b->top;

	if (hit)
		return matrix_set_key(m, blk, hit);
	if (b->below < floor) {
		/* Only the CPU the bound leaves out may reach @floor. */
		cand &= b->online & matrix_apart(m, blk);
		return cand ? matrix_set_key(m, blk, cand) : 0;
	}
	return matrix_block_key(m, blk, cand);
}

/*
 * As matrix_range_best(), for a range that holds the pending CPU, whose key
 * @pk is below the root's: the index's best key of the range if it beats
 * @pk, else any key that does not. Only counts of at least @pk's can.
 * Kept apart from matrix_range_best() (@pk 0 would do): one body for
 * both, inlined or not, cost the range rows of make bench-matrix 16 to 38
 * instructions, through the registers of matrix_alloc_range_search().
 */
static inline uint32_t
matrix_range_best_above(const struct umsi_matrix *m, uint32_t first,
			uint32_t count, uint32_t pk)
{
	uint32_t last = first + count - 1, floor = matrix_key_count(pk);
	uint32_t lb = matrix_blk(first), hb = matrix_blk(last);
	uint64_t lo_bits = ~0ull << (first % MATRIX_CPUS_PER_BLOCK);
	uint64_t hi_bits = ~0ull >> (63 - last % MATRIX_CPUS_PER_BLOCK);
	uint32_t best;

	if (lb == hb)
		return matrix_block_key_above(m, lb, lo_bits & hi_bits, floor);
	best = lo_bits == ~0ull ? m->tree[m->leaves + lb] :
				  matrix_block_key_above(m, lb, lo_bits, floor);
	best = matrix_max(best, hi_bits == ~0ull ?
				m->tree[m->leaves + hb] :
				matrix_block_key_above(m, hb, hi_bits, floor));
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
static UMSI_ALWAYS_INLINE unsigned int matrix_claim_lowest(const struct umsi_matrix *m,
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

#endif /* UMSI_VECTOR_MATRIX_INDEX_H */
