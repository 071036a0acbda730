/* SPDX-License-Identifier: MIT */
/*
 * umsi/internal/idmap.h - a set of small integers (IRQ numbers) with the
 * lowest free one from a starting point found in O(log n).
 *
 * Three levels of 64-bit words: level 0 has a bit per number, level 1 a bit
 * per level-0 word that is full, level 2 a bit per level-1 word that is
 * full. Finding the first free number from @from looks at one word per
 * level on the way up and one on the way down, so bringing up V IRQs costs
 * O(V log V) in all instead of a scan of the IRQ table per allocation.
 * Up to 64^3 words, 16.7 million numbers.
 *
 * Not a public interface.
 */
#ifndef UMSI_INTERNAL_IDMAP_H
#define UMSI_INTERNAL_IDMAP_H

#include <umsi/types.h>

struct umsi_idmap {
	uint32_t nbits;
	uint32_t nw0, nw1, nw2;         /* words per level */
	uint64_t *w0, *w1, *w2;         /* one allocation, w0 first */
};

#define UMSI_IDMAP_MAX (64u * 64u * 64u * 64u)

/* Bytes of storage for @nbits numbers (0 when too many). */
size_t umsi_idmap_size(uint32_t nbits);
/* Lay the map out in @mem (umsi_idmap_size() zeroed bytes): all free. */
void umsi_idmap_init(struct umsi_idmap *m, uint32_t nbits, uint64_t *mem);
void umsi_idmap_set(struct umsi_idmap *m, uint32_t id);
void umsi_idmap_clear(struct umsi_idmap *m, uint32_t id);
bool umsi_idmap_test(const struct umsi_idmap *m, uint32_t id);
/* The lowest free number >= @from, or UINT32_MAX when none. */
uint32_t umsi_idmap_next_free(const struct umsi_idmap *m, uint32_t from);
/*
 * Take the lowest run of @n free numbers whose first is a multiple of
 * @align (a power of two, 1 for any): all marked, the first returned, or
 * UINT32_MAX (nothing taken) when there is none.
 */
uint32_t umsi_idmap_take_run(struct umsi_idmap *m, uint32_t n, uint32_t align);

#endif /* UMSI_INTERNAL_IDMAP_H */
