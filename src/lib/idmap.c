/* SPDX-License-Identifier: MIT */
/*
 * A three-level bitmap of used numbers (see umsi/internal/idmap.h).
 */
#include <umsi/internal/bitops.h>
#include <umsi/internal/idmap.h>

static uint32_t idmap_words(uint32_t bits)
{
	return (bits + 63) / 64;
}

size_t umsi_idmap_size(uint32_t nbits)
{
	uint32_t w0 = idmap_words(nbits), w1 = idmap_words(w0),
		 w2 = idmap_words(w1);

	if (!nbits || w2 > 64)
		return 0;
	return (size_t)(w0 + w1 + w2) * sizeof(uint64_t);
}

void umsi_idmap_init(struct umsi_idmap *m, uint32_t nbits, uint64_t *mem)
{
	uint32_t i;

	m->nbits = nbits;
	m->nw0 = idmap_words(nbits);
	m->nw1 = idmap_words(m->nw0);
	m->nw2 = idmap_words(m->nw1);
	m->w0 = mem;
	m->w1 = mem + m->nw0;
	m->w2 = m->w1 + m->nw1;
	/*
	 * Bits past the end count as used, so "full" means full and a
	 * search never returns a number beyond @nbits.
	 */
	for (i = nbits; i < m->nw0 * 64; i++)
		umsi_idmap_set(m, i);
	for (i = m->nw0; i < m->nw1 * 64; i++)
		m->w1[i / 64] |= 1ull << (i % 64);
	for (i = m->nw1; i < m->nw2 * 64; i++)
		m->w2[i / 64] |= 1ull << (i % 64);
}

void umsi_idmap_set(struct umsi_idmap *m, uint32_t id)
{
	uint32_t w = id / 64, w1 = w / 64;

	m->w0[w] |= 1ull << (id % 64);
	if (m->w0[w] != ~0ull)
		return;
	m->w1[w1] |= 1ull << (w % 64);
	if (m->w1[w1] == ~0ull)
		m->w2[w1 / 64] |= 1ull << (w1 % 64);
}

void umsi_idmap_clear(struct umsi_idmap *m, uint32_t id)
{
	uint32_t w = id / 64, w1 = w / 64;

	m->w0[w] &= ~(1ull << (id % 64));
	m->w1[w1] &= ~(1ull << (w % 64));
	m->w2[w1 / 64] &= ~(1ull << (w1 % 64));
}

uint32_t umsi_idmap_take_run(struct umsi_idmap *m, uint32_t n, uint32_t align)
{
	uint32_t g, k;

	if (!n || !align || (align & (align - 1)))
		return UINT32_MAX;
	for (g = umsi_idmap_next_free(m, 0);
	     g != UINT32_MAX && n <= m->nbits - g;
	     g = umsi_idmap_next_free(m, g)) {
		if (g & (align - 1)) {
			g = (g | (align - 1)) + 1;
			if (g >= m->nbits)
				break;
			continue;
		}
		for (k = 0; k < n && !umsi_idmap_test(m, g + k); k++)
			;
		if (k == n) {
			while (k--)
				umsi_idmap_set(m, g + k);
			return g;
		}
		/* Taken at g + k: the next run starts after it. */
		g += k + 1;
		if (g >= m->nbits)
			break;
	}
	return UINT32_MAX;
}

bool umsi_idmap_test(const struct umsi_idmap *m, uint32_t id)
{
	return (m->w0[id / 64] >> (id % 64)) & 1;
}

/* Lowest clear bit >= @from in @words (@n words), or UINT32_MAX. */
static uint32_t idmap_level_next(const uint64_t *words, uint32_t n,
				 uint32_t from)
{
	uint32_t w = from / 64;
	uint64_t free;

	if (w >= n)
		return UINT32_MAX;
	free = ~words[w] & (~0ull << (from % 64));
	if (free)
		return w * 64 + umsi_ctz64(free);
	return UINT32_MAX;
}

uint32_t umsi_idmap_next_free(const struct umsi_idmap *m, uint32_t from)
{
	uint32_t r, w1;

	if (from >= m->nbits)
		return UINT32_MAX;
	/* In the word of @from. */
	r = idmap_level_next(m->w0, m->nw0, from);
	if (r != UINT32_MAX)
		return r;
	/* A later level-0 word with room, in the next level-1 word. */
	r = idmap_level_next(m->w1, m->nw1, from / 64 + 1);
	if (r == UINT32_MAX) {
		/* A later level-1 word with room: level 2, at most 64 words. */
		for (w1 = (from / 64) / 64 + 1; w1 < m->nw1;
		     w1 = (w1 / 64 + 1) * 64) {
			r = idmap_level_next(m->w2, m->nw2, w1);
			if (r != UINT32_MAX)
				break;
		}
		if (r == UINT32_MAX || r >= m->nw1)
			return UINT32_MAX;
		r = r * 64 + umsi_ctz64(~m->w1[r]);
	}
	if (r >= m->nw0)
		return UINT32_MAX;
	return r * 64 + umsi_ctz64(~m->w0[r]);
}
