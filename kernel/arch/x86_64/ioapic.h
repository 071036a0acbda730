/* SPDX-License-Identifier: MIT */
/*
 * ioapic.h - IO-APIC redirection entries, and the 8259 PICs kept masked.
 */
#ifndef KERNEL_IOAPIC_H
#define KERNEL_IOAPIC_H

#include <stdbool.h>
#include <stdint.h>

#define IOAPIC_TRIGGER_EDGE   0
#define IOAPIC_TRIGGER_LEVEL  1
#define IOAPIC_POL_HIGH       0
#define IOAPIC_POL_LOW        1

/*
 * A redirection entry. Compatibility format: @apic_id and @vector.
 * Remappable format (@remap, VT-d 5.1.5.1): the input sends interrupt
 * @handle through the remapping unit's table; @vector must equal the
 * vector of that table entry (the IO-APIC matches EOIs by it).
 */
struct ioapic_route {
	uint32_t apic_id;	/* physical destination */
	uint8_t vector;
	uint8_t trigger;	/* IOAPIC_TRIGGER_* */
	uint8_t polarity;	/* IOAPIC_POL_* */
	bool masked;
	bool remap;		/* remappable format */
	uint16_t handle;	/* its interrupt index */
	/*
	 * AMD-Vi (compatibility format, @vector the index): a level entry
	 * ended at the EOI register after @eoi_apic's EOI of @eoi_vector.
	 */
	bool directed;
	uint32_t eoi_apic;
	uint8_t eoi_vector;
};

/* Entry bits of the remappable format: bit 48, handle 14:0 in 63:49, 15 in 11. */
#define IOAPIC_RTE_REMAP        (1ull << 48)

/* The remappable entry's interrupt handle, or -1 for a compatibility one. */
int ioapic_entry_handle(uint64_t entry);

void pic_disable(void);
void ioapic_init(void);			/* every input masked */
uint32_t ioapic_gsi_count(void);	/* highest GSI + 1 */
uint32_t ioapic_count(void);		/* IO-APICs, in the MADT's order */
/* IO-APIC @i (below ioapic_count()): its first GSI, inputs and ID. No
 * two have a GSI in common (ioapic_init() leaves out one that would). */
void ioapic_span(uint32_t i, uint32_t *gsi_base, uint32_t *count,
		 uint8_t *id);
int ioapic_program(uint32_t gsi, const struct ioapic_route *r);
int ioapic_set_mask(uint32_t gsi, bool masked);
int ioapic_read_entry(uint32_t gsi, uint64_t *entry);
void ioapic_directed_eoi(uint32_t apic_id, uint32_t vector);

/* Directed entries (AMD-Vi) programmed: the EOI path's one test. */
extern uint32_t ioapic_ndirected;

static inline bool ioapic_any_directed(void)
{
	return __atomic_load_n(&ioapic_ndirected, __ATOMIC_RELAXED) != 0;
}

#endif /* KERNEL_IOAPIC_H */
