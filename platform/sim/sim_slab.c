/* SPDX-License-Identifier: MIT */
/*
 * sim_slab.c - where the simulator puts the library's small alloc()
 * blocks: 64 KiB slabs of one block size each, with no header in front of
 * a block. A machine of 10^6 vectors makes three million small blocks; a
 * malloc() block each, with the simulator's 32-byte header, cost about
 * 48 bytes more than the block itself (docs/bench-sim.md).
 *
 * It checks what the header checked: a free() of a block not from alloc()
 * or already freed, and one with another size than was asked, are bad
 * accesses (each block's exact size is kept in its slab); blocks are
 * poisoned when allocated (0xa5, umsi/host.h does not promise zeroes) and
 * when freed (0xdd, so that a use after free reads garbage), and destroy
 * releases whatever the library left. Builds with a sanitizer put every
 * block in its own malloc() block instead (sim_slab_enabled() is false),
 * so that AddressSanitizer sees each one. All calls are under the sim's
 * lock.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "sim_priv.h"

#define SLAB_SIZE  65536u
#define SLAB_MAGIC 0x736c6162u          /* "slab" */

struct sim_slab {
	uint32_t magic;
	uint32_t bsize;                 /* block size: a multiple of 16 */
	uint32_t nblocks, nused;
	uint32_t first;                 /* offset of block 0 */
	uint32_t free_head;             /* a free block's index, or nblocks */
	struct sim_slab *next_partial;  /* its class's slabs with room */
	struct sim_slab *next_all;
	bool partial;
	/* Per block: the size asked plus one, 0 while free. */
	uint16_t asked[];
};

bool sim_slab_enabled(void)
{
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	return false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
	__has_feature(memory_sanitizer)
	return false;
#else
	return true;
#endif
#else
	return true;
#endif
}

static unsigned char *block_at(struct sim_slab *s, uint32_t i)
{
	return (unsigned char *)s + s->first + (size_t)i * s->bsize;
}

/* A free block holds the index of the next free one in its first word. */
static uint32_t next_free(struct sim_slab *s, uint32_t i)
{
	uint32_t n;

	memcpy(&n, block_at(s, i), sizeof(n));
	return n;
}

static void set_next_free(struct sim_slab *s, uint32_t i, uint32_t n)
{
	memcpy(block_at(s, i), &n, sizeof(n));
}

/*
 * A slab is a mapping of its own, aligned to its size (malloc's
 * aligned_alloc() of 64 KiB blocks leaves up to 64 KiB of the heap
 * unusable beside each): map twice the size, keep the aligned half.
 */
static void *slab_map(void)
{
	unsigned char *raw = mmap(NULL, 2 * (size_t)SLAB_SIZE,
				  PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uintptr_t a;

	if (raw == MAP_FAILED)
		return NULL;
	a = ((uintptr_t)raw + SLAB_SIZE - 1) & ~(uintptr_t)(SLAB_SIZE - 1);
	if (a > (uintptr_t)raw)
		munmap(raw, a - (uintptr_t)raw);
	if ((uintptr_t)raw + 2 * SLAB_SIZE > a + SLAB_SIZE)
		munmap((void *)(a + SLAB_SIZE),
		       (uintptr_t)raw + 2 * SLAB_SIZE - (a + SLAB_SIZE));
	return (void *)a;
}

static struct sim_slab *slab_new(struct umsi_sim *sim, uint32_t bsize)
{
	struct sim_slab *s = slab_map();
	uint32_t n, first, i;

	if (!s)
		return NULL;
	/* n blocks and their sizes: header + 2n + 16 (alignment) + n x bsize. */
	n = (SLAB_SIZE - (uint32_t)sizeof(*s) - 16) / (bsize + 2);
	first = ((uint32_t)sizeof(*s) + 2 * n + 15) & ~15u;
	memset(s, 0, first);
	s->magic = SLAB_MAGIC;
	s->bsize = bsize;
	s->nblocks = n;
	s->first = first;
	s->free_head = 0;
	for (i = 0; i < n; i++) {
		memset(block_at(s, i), 0xdd, bsize);
		set_next_free(s, i, i + 1);
	}
	s->next_all = sim->slabs;
	sim->slabs = s;
	return s;
}

/* Remember @s's address so that free() can tell a slab block. */
static int slab_index_add(struct umsi_sim *sim, struct sim_slab *s)
{
	uintptr_t key = (uintptr_t)s;
	size_t i;

	if (2 * (sim->slab_index_used + 1) > sim->slab_index_cap) {
		size_t cap = sim->slab_index_cap ? 2 * sim->slab_index_cap : 256;
		uintptr_t *t = calloc(cap, sizeof(*t));

		if (!t)
			return -1;
		for (i = 0; i < sim->slab_index_cap; i++) {
			uintptr_t k = sim->slab_index[i];
			size_t j;

			if (!k)
				continue;
			for (j = (k / SLAB_SIZE) & (cap - 1); t[j];
			     j = (j + 1) & (cap - 1))
				;
			t[j] = k;
		}
		free(sim->slab_index);
		sim->slab_index = t;
		sim->slab_index_cap = cap;
	}
	for (i = (key / SLAB_SIZE) & (sim->slab_index_cap - 1);
	     sim->slab_index[i]; i = (i + 1) & (sim->slab_index_cap - 1))
		;
	sim->slab_index[i] = key;
	sim->slab_index_used++;
	return 0;
}

/* The slab @p lies in, or NULL: not a slab block. */
static struct sim_slab *slab_of(struct umsi_sim *sim, const void *p)
{
	uintptr_t key = (uintptr_t)p & ~(uintptr_t)(SLAB_SIZE - 1);
	size_t i;

	if (!sim->slab_index_cap)
		return NULL;
	for (i = (key / SLAB_SIZE) & (sim->slab_index_cap - 1);
	     sim->slab_index[i]; i = (i + 1) & (sim->slab_index_cap - 1))
		if (sim->slab_index[i] == key)
			return (struct sim_slab *)key;
	return NULL;
}

void *sim_slab_alloc(struct umsi_sim *sim, size_t size)
{
	uint32_t cls, i;
	struct sim_slab *s;
	unsigned char *p;

	if (size > SIM_SLAB_MAX)
		return NULL;
	cls = size ? (uint32_t)(size - 1) / 16 : 0;
	s = sim->slab_partial[cls];
	if (!s) {
		s = slab_new(sim, (cls + 1) * 16);
		if (!s)
			return NULL;
		if (slab_index_add(sim, s)) {
			sim->slabs = s->next_all;
			munmap(s, SLAB_SIZE);
			return NULL;
		}
		s->partial = true;
		sim->slab_partial[cls] = s;
	}
	i = s->free_head;
	s->free_head = next_free(s, i);
	s->asked[i] = (uint16_t)(size + 1);
	if (++s->nused == s->nblocks) {
		sim->slab_partial[cls] = s->next_partial;
		s->next_partial = NULL;
		s->partial = false;
	}
	p = block_at(s, i);
	memset(p, 0xa5, s->bsize);
	return p;
}

int sim_slab_free(struct umsi_sim *sim, void *ptr, size_t size,
		  size_t *asked)
{
	struct sim_slab *s = slab_of(sim, ptr);
	uint32_t off, i, cls;

	if (!s)
		return 1;               /* not a slab block */
	*asked = 0;
	off = (uint32_t)((unsigned char *)ptr - (unsigned char *)s);
	if (off < s->first || (off - s->first) % s->bsize ||
	    (off - s->first) / s->bsize >= s->nblocks)
		return -1;              /* inside a slab, not a block */
	i = (off - s->first) / s->bsize;
	if (!s->asked[i])
		return -1;              /* already freed */
	*asked = s->asked[i] - 1u;
	if (*asked != size)
		return -2;              /* freed with another size */
	s->asked[i] = 0;
	memset(ptr, 0xdd, s->bsize);
	set_next_free(s, i, s->free_head);
	s->free_head = i;
	s->nused--;
	if (!s->partial) {
		cls = s->bsize / 16 - 1;
		s->next_partial = sim->slab_partial[cls];
		sim->slab_partial[cls] = s;
		s->partial = true;
	}
	return 0;
}

void sim_slab_fini(struct umsi_sim *sim)
{
	while (sim->slabs) {
		struct sim_slab *s = sim->slabs;

		sim->slabs = s->next_all;
		munmap(s, SLAB_SIZE);
	}
	memset(sim->slab_partial, 0, sizeof(sim->slab_partial));
	free(sim->slab_index);
	sim->slab_index = NULL;
	sim->slab_index_cap = sim->slab_index_used = 0;
}
