/* SPDX-License-Identifier: MIT */
/*
 * mm.c - page tables (x86-64); the heap is heap.c.
 *
 * Paging: boot.S identity-maps 0-4 GiB with 2 MiB pages, write-back.
 * mm_map_mmio() makes a device range uncached (PCD|PWT) there, and for
 * ranges above 4 GiB (64-bit BARs the firmware put high) it creates the
 * missing identity mappings on demand, also with 2 MiB pages. Virtual
 * address equals physical address everywhere, so nothing is ever
 * unmapped.
 */
#include "kernel.h"

#define PTE_P    (1ull << 0)
#define PTE_W    (1ull << 1)
#define PTE_PWT  (1ull << 3)
#define PTE_PCD  (1ull << 4)
#define PTE_PS   (1ull << 7)
#define PTE_ADDR 0x000ffffffffff000ull

extern uint64_t boot_pml4[];

static struct spinlock map_lock;

/* The next-level table of @entry, created when absent. map_lock held. */
static uint64_t *next_table(uint64_t *entry)
{
	if (!(*entry & PTE_P)) {
		uint64_t *t = kalloc_pages(4096);	/* zeroed; panics when out */

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
	unsigned long flags = spin_lock_irqsave(&map_lock);

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
	spin_unlock_irqrestore(&map_lock, flags);
	return (void *)phys;
}
