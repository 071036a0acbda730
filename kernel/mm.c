/* SPDX-License-Identifier: MIT */
/*
 * mm.c - page tables and the kernel heap.
 *
 * Paging: boot.S identity-maps 0-4 GiB with 2 MiB pages, write-back.
 * mm_map_mmio() makes a device range uncached (PCD|PWT) there, and for
 * ranges above 4 GiB (64-bit BARs the firmware put high) it creates the
 * missing identity mappings on demand, also with 2 MiB pages. Virtual
 * address equals physical address everywhere, so nothing is ever
 * unmapped.
 *
 * Heap: power-of-two size classes from 16 bytes, a free list per class,
 * fed by a bump pointer over the RAM the multiboot info says is free.
 */
#include "kernel.h"

#define PTE_P    (1ull << 0)
#define PTE_W    (1ull << 1)
#define PTE_PWT  (1ull << 3)
#define PTE_PCD  (1ull << 4)
#define PTE_PS   (1ull << 7)
#define PTE_ADDR 0x000ffffffffff000ull

#define MIN_SHIFT 4
#define MAX_SHIFT 26

extern uint64_t boot_pml4[];

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

/* The next-level table of @entry, created when absent. mm_lock held. */
static uint64_t *next_table(uint64_t *entry)
{
	if (!(*entry & PTE_P)) {
		uint64_t *t = bump(4096, 4096);

		if (!t)
			panic("out of memory for page tables");
		memset(t, 0, 4096);
		*entry = (uint64_t)t | PTE_P | PTE_W;
	}
	return (uint64_t *)(*entry & PTE_ADDR);
}

/**
 * mm_map_mmio - make a physical device range accessible, uncached
 * @phys: physical address, any alignment
 * @len: length in bytes
 *
 * Return: the virtual address of @phys (equal to it: identity mapping).
 * Context: process context; may allocate page tables.
 */
void *mm_map_mmio(uint64_t phys, uint64_t len)
{
	uint64_t a = ALIGN_DOWN(phys, 0x200000ull);
	uint64_t end = ALIGN_UP(phys + (len ? len : 1), 0x200000ull);
	unsigned long flags = spin_lock_irqsave(&mm_lock);

	for (; a < end; a += 0x200000ull) {
		uint64_t *pdpt = next_table(&boot_pml4[(a >> 39) & 511]);
		uint64_t *pd = next_table(&pdpt[(a >> 30) & 511]);
		uint64_t *pde = &pd[(a >> 21) & 511];
		uint64_t want = a | PTE_P | PTE_W | PTE_PS | PTE_PCD | PTE_PWT;

		if (*pde != want) {
			*pde = want;
			invlpg(a);
		}
	}
	spin_unlock_irqrestore(&mm_lock, flags);
	return (void *)phys;
}
