/* SPDX-License-Identifier: MIT */
/*
 * The allocator's invariant checker: umsi_matrix_check() recomputes the
 * three layers (the CPUs' counts, each block's top set and slices, the
 * tree) from the bitmaps and compares (matrix.c's top comment says what
 * each holds). Tests call it after every operation; a kernel may call it
 * from a debugging path.
 */
#include "matrix_priv.h"

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
	    matrix_avail(m, cpu) !=
	    matrix_cpu_capacity(m, cpu) - allocated - managed)
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

	/* The legacy CPU is left out (matrix_index.h, matrix_apart()). */
	if (matrix_blk(m->legacy_cpu) == blk)
		rest &= ~matrix_bit(m->legacy_cpu);
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
	if (m->tree[0] != MATRIX_TREE_TOP)
		return "the tree's sentinel above the root is not MATRIX_TREE_TOP";
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
	/* The pending frees: one online CPU, its key at its real count. */
	n = matrix_key_cpu(m->pend_key);
	if (m->pend_key && (n >= m->ncpus || !matrix_cpu_online(m, n) ||
			    matrix_key_count(m->pend_key) <=
			    matrix_cpu(m, n)->available)) {
		if (why)
			*why = "the pending frees are not of one online CPU";
		if (cpu)
			*cpu = n;
		return -UMSI_EIO;
	}
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
