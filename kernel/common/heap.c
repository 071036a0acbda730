/* SPDX-License-Identifier: MIT */
/*
 * heap.c - the kernel heap, on every architecture: power-of-two size
 * classes from 16 bytes, a free list per class, fed by a bump pointer
 * over the free RAM the architecture's boot code names (mm_init).
 * Allocations are zeroed; those of 4 KiB and more are 4 KiB aligned.
 */
#include "kernel.h"

#define MIN_SHIFT 4
#define MAX_SHIFT 26

struct free_block {
	struct free_block *next;
};

static struct spinlock mm_lock;
static uint64_t heap_next, heap_end;
static uint64_t heap_base;
static struct free_block *free_lists[MAX_SHIFT + 1];

void mm_init(uint64_t start, uint64_t end, uint64_t ram_top)
{
	(void)ram_top;
	heap_base = heap_next = ALIGN_UP(start, 4096);
	heap_end = end;
}

uint64_t mm_heap_used(void)
{
	return heap_next - heap_base;
}

static void *bump(uint64_t size, uint64_t align)
{
	uint64_t p = ALIGN_UP(heap_next, align);

	if (p + size > heap_end || p + size < p)
		return NULL;
	heap_next = p + size;
	return (void *)p;
}

static unsigned size_class(size_t size)
{
	unsigned s = MIN_SHIFT;

	while (s <= MAX_SHIFT && (1ull << s) < size)
		s++;
	return s;
}

void *kalloc(size_t size)
{
	unsigned cls = size_class(size ? size : 1);
	unsigned long flags;
	void *p;

	if (cls > MAX_SHIFT)
		return NULL;
	flags = spin_lock_irqsave(&mm_lock);
	if (free_lists[cls]) {
		p = free_lists[cls];
		free_lists[cls] = free_lists[cls]->next;
	} else {
		uint64_t sz = 1ull << cls;

		p = bump(sz, sz < 4096 ? sz : 4096);
	}
	spin_unlock_irqrestore(&mm_lock, flags);
	if (p)
		memset(p, 0, 1ull << cls);
	return p;
}

void kfree(void *p, size_t size)
{
	unsigned cls = size_class(size ? size : 1);
	unsigned long flags;
	struct free_block *b = p;

	if (!p)
		return;
	flags = spin_lock_irqsave(&mm_lock);
	b->next = free_lists[cls];
	free_lists[cls] = b;
	spin_unlock_irqrestore(&mm_lock, flags);
}

void *kalloc_pages(size_t size)
{
	unsigned long flags = spin_lock_irqsave(&mm_lock);
	void *p = bump(ALIGN_UP(size, 4096), 4096);

	spin_unlock_irqrestore(&mm_lock, flags);
	if (!p)
		panic("out of memory for %zu bytes of pages", size);
	memset(p, 0, ALIGN_UP(size, 4096));
	return p;
}

