/* SPDX-License-Identifier: MIT */
/*
 * ioapic.c - IO-APIC driver (82093AA datasheet; ICH9 datasheet 13.5).
 *
 * Each IO-APIC has an index register (IOREGSEL, +0x00) and a data window
 * (IOWIN, +0x10). Register 1 bits 23:16 hold the highest redirection
 * entry; entry n is registers 0x10 + 2n (low) and 0x11 + 2n (high):
 * vector 7:0, delivery mode 10:8 (0 = fixed), destination mode 11
 * (0 = physical), polarity 13 (1 = active low), trigger 15 (1 = level),
 * mask 16; destination APIC ID in bits 63:56.
 *
 * Under interrupt remapping an entry may be in the remappable format
 * instead (VT-d 5.1.5.1 "I/O xAPIC Programming"): bit 48 set, the
 * interrupt handle's bits 14:0 in 63:49 and bit 15 in 11 (the destination
 * mode's place), delivery mode 0, the vector equal to the remapping table
 * entry's (an EOI broadcast names the vector); trigger, polarity and mask
 * as before. The input then sends a remappable-format message that the
 * remapping unit looks up.
 *
 * Under AMD-Vi an entry stays in the compatibility format, destination 0,
 * its vector field an index of the IO-APIC's interrupt table; the unit's
 * message carries no trigger mode, so no local APIC EOI reaches the
 * IO-APIC. Such an entry is "directed": the kernel ends it itself, at the
 * EOI register, after the EOI of the vector it was sent to on that CPU
 * (ioapic_directed_eoi(); umsi/ctl.h UMSI_AMDVI_WIRED_*).
 */
#include "kernel.h"
#include "acpi.h"
#include "ioapic.h"

#define IOREGSEL 0x00
#define IOWIN    0x10
#define IOEOI    0x40	/* version 0x20+: Remote IRR of a vector's entries */

#define RTE_POLARITY_LOW (1u << 13)
#define RTE_REMOTE_IRR   (1u << 14)
#define RTE_LEVEL        (1u << 15)
#define RTE_MASKED       (1u << 16)

struct ioapic {
	uint64_t base;
	uint32_t gsi_base;
	uint32_t count;
	uint8_t id;		/* the MADT's IO-APIC ID */
	uint8_t version;	/* 0x20 and up: the EOI register at +0x40 */
	struct spinlock lock;
	/* A directed entry's EOI: DIRECTED | APIC ID << 8 | vector; or 0. */
	uint32_t eoi_key[256];
};

#define DIRECTED (1u << 31)

static struct ioapic ioapics[ACPI_MAX_IOAPICS];
static uint32_t nioapics;

/*
 * Which (APIC ID, vector) pairs some directed entry waits for: the EOI
 * path's one test. Written under the entry's IO-APIC lock.
 */
static uint64_t directed_map[256][4];
uint32_t ioapic_ndirected;

/*
 * Both 8259s: remap them away from the exception vectors (0x20/0x28, so a
 * stray one is at least recognisable), then mask every line. The local
 * APIC's LINT0, where they would arrive, is masked as well (apic.c).
 */
void pic_disable(void)
{
	outb(0x20, 0x11);
	outb(0xa0, 0x11);
	outb(0x21, 0x20);
	outb(0xa1, 0x28);
	outb(0x21, 0x04);
	outb(0xa1, 0x02);
	outb(0x21, 0x01);
	outb(0xa1, 0x01);
	outb(0x21, 0xff);
	outb(0xa1, 0xff);
}

static uint32_t reg_read(struct ioapic *io, uint8_t reg)
{
	mmio_write32(io->base + IOREGSEL, reg);
	return mmio_read32(io->base + IOWIN);
}

static void reg_write(struct ioapic *io, uint8_t reg, uint32_t v)
{
	mmio_write32(io->base + IOREGSEL, reg);
	mmio_write32(io->base + IOWIN, v);
}

/* Whether @io's GSIs wrap past 2^32 or meet those of one kept before. */
static bool span_bad(const struct ioapic *io)
{
	if (io->gsi_base > UINT32_MAX - io->count)
		return true;
	for (uint32_t k = 0; k < nioapics; k++)
		if (io->gsi_base < ioapics[k].gsi_base + ioapics[k].count &&
		    ioapics[k].gsi_base < io->gsi_base + io->count)
			return true;
	return false;
}

void ioapic_init(void)
{
	for (uint32_t i = 0; i < acpi.nioapics; i++) {
		struct ioapic *io = &ioapics[nioapics];

		io->base = (uint64_t)mm_map_mmio(acpi.ioapic[i].addr, 4096);
		io->gsi_base = acpi.ioapic[i].gsi_base;
		io->id = acpi.ioapic[i].id;
		io->count = ((reg_read(io, 1) >> 16) & 0xff) + 1;
		io->version = (uint8_t)reg_read(io, 1);
		for (uint32_t n = 0; n < io->count; n++) {
			reg_write(io, (uint8_t)(0x10 + 2 * n), RTE_MASKED);
			reg_write(io, (uint8_t)(0x11 + 2 * n), 0);
		}
		/* A MADT that repeats an IO-APIC or wraps its GSIs: the
		 * inputs stay masked, and no GSI has two IO-APICs. */
		if (span_bad(io)) {
			kprintf("ioapic: IO-APIC %u: GSIs %u+%u overlap another's "
				"or pass 2^32; not used\n", io->id,
				io->gsi_base, io->count);
			continue;
		}
		nioapics++;
	}
}

uint32_t ioapic_gsi_count(void)
{
	uint32_t max = 0;

	for (uint32_t i = 0; i < nioapics; i++) {
		if (ioapics[i].gsi_base + ioapics[i].count > max)
			max = ioapics[i].gsi_base + ioapics[i].count;
	}
	return max;
}

uint32_t ioapic_count(void)
{
	return nioapics;
}

void ioapic_span(uint32_t i, uint32_t *gsi_base, uint32_t *count,
		 uint8_t *id)
{
	*gsi_base = ioapics[i].gsi_base;
	*count = ioapics[i].count;
	*id = ioapics[i].id;
}

static struct ioapic *find(uint32_t gsi, uint32_t *pin)
{
	for (uint32_t i = 0; i < nioapics; i++) {
		struct ioapic *io = &ioapics[i];

		if (gsi >= io->gsi_base && gsi < io->gsi_base + io->count) {
			*pin = gsi - io->gsi_base;
			return io;
		}
	}
	return NULL;
}

/* Whether some directed entry still waits for the EOI @key names. */
static bool key_used(uint32_t key)
{
	for (uint32_t i = 0; i < nioapics; i++)
		for (uint32_t n = 0; n < ioapics[i].count; n++)
			if (ioapics[i].eoi_key[n] == key)
				return true;
	return false;
}

/* Pin @pin's EOI key becomes @key; the map follows. [io lock] */
static void set_key(struct ioapic *io, uint32_t pin, uint32_t key)
{
	uint32_t old = io->eoi_key[pin];

	if (old == key)
		return;
	io->eoi_key[pin] = key;
	if (old) {
		__atomic_sub_fetch(&ioapic_ndirected, 1, __ATOMIC_RELAXED);
		if (!key_used(old))
			__atomic_and_fetch(&directed_map[(old >> 8) & 0xff]
					   [(old & 0xff) / 64],
					   ~(1ull << (old % 64)),
					   __ATOMIC_RELAXED);
	}
	if (key) {
		__atomic_add_fetch(&ioapic_ndirected, 1, __ATOMIC_RELAXED);
		__atomic_or_fetch(&directed_map[(key >> 8) & 0xff]
				  [(key & 0xff) / 64], 1ull << (key % 64),
				  __ATOMIC_RELAXED);
	}
}

/* End a level entry's Remote IRR: the EOI register, or edge for a moment. */
static void end_entry(struct ioapic *io, uint32_t pin, uint32_t lo)
{
	if (io->version >= 0x20) {
		mmio_write32(io->base + IOEOI, lo & 0xff);
	} else {
		reg_write(io, (uint8_t)(0x10 + 2 * pin),
			  (lo & ~RTE_LEVEL) | RTE_MASKED);
		reg_write(io, (uint8_t)(0x10 + 2 * pin), lo);
	}
}

/**
 * ioapic_program - write a whole redirection entry
 * @gsi: global system interrupt
 * @r: destination, vector, trigger, polarity, mask
 *
 * The entry is masked while its halves are written, so the input never
 * delivers a half-updated entry; the final write sets the wanted mask.
 * Return: 0, or -1 when no IO-APIC has @gsi or the APIC ID needs more
 * than the 8 bits a compatibility-format entry holds.
 */
int ioapic_program(uint32_t gsi, const struct ioapic_route *r)
{
	uint32_t pin, lo, hi, old_lo, old_hi, key = 0;
	struct ioapic *io = find(gsi, &pin);
	unsigned long flags;
	bool rekey;

	if (!io || (!r->remap && r->apic_id > 0xff))
		return -1;
	if (r->directed) {
		if (r->remap || r->eoi_apic > 0xff)
			return -1;
		key = DIRECTED | r->eoi_apic << 8 | r->eoi_vector;
	}
	lo = r->vector;
	if (r->remap) {
		lo |= (uint32_t)(r->handle >> 15) << 11;
		hi = (uint32_t)(IOAPIC_RTE_REMAP >> 32) |
		     (uint32_t)(r->handle & 0x7fff) << 17;
	} else {
		hi = r->apic_id << 24;
	}
	if (r->polarity == IOAPIC_POL_LOW)
		lo |= RTE_POLARITY_LOW;
	if (r->trigger == IOAPIC_TRIGGER_LEVEL)
		lo |= RTE_LEVEL;
	flags = spin_lock_irqsave(&io->lock);
	old_lo = reg_read(io, (uint8_t)(0x10 + 2 * pin));
	old_hi = reg_read(io, (uint8_t)(0x11 + 2 * pin));
	/* A directed entry aimed elsewhere: its EOI would be looked for
	 * on the new CPU and vector (so it is ended here, as below). */
	rekey = io->eoi_key[pin] && io->eoi_key[pin] != key;
	/*
	 * A level entry delivered and not yet ended (Remote IRR) that is
	 * re-aimed: the EOI that will come names the old vector, which no
	 * longer matches, so Remote IRR would never clear and the line would
	 * never fire again (a move landing between a delivery and its EOI).
	 * End it here, masked: by the EOI register with the old vector
	 * (version 0x20 and up; an entry of another pin with that vector is
	 * ended too, which costs it at most one more delivery), else by
	 * making it edge for a moment (82093AA: Remote IRR is for level
	 * entries). If the line is still asserted it fires again at the new
	 * target once unmasked; the handler that finds nothing says so.
	 */
	if ((old_lo & RTE_LEVEL) && (old_lo & RTE_REMOTE_IRR) &&
	    ((old_lo & 0xff) != (lo & 0xff) || old_hi != hi || rekey)) {
		reg_write(io, (uint8_t)(0x10 + 2 * pin), old_lo | RTE_MASKED);
		end_entry(io, pin, old_lo | RTE_MASKED);
	}
	set_key(io, pin, r->trigger == IOAPIC_TRIGGER_LEVEL ? key : 0);
	reg_write(io, (uint8_t)(0x10 + 2 * pin), lo | RTE_MASKED);
	reg_write(io, (uint8_t)(0x11 + 2 * pin), hi);
	reg_write(io, (uint8_t)(0x10 + 2 * pin), lo | (r->masked ? RTE_MASKED : 0));
	spin_unlock_irqrestore(&io->lock, flags);
	return 0;
}

int ioapic_set_mask(uint32_t gsi, bool masked)
{
	uint32_t pin, lo;
	struct ioapic *io = find(gsi, &pin);
	unsigned long flags;

	if (!io)
		return -1;
	flags = spin_lock_irqsave(&io->lock);
	lo = reg_read(io, (uint8_t)(0x10 + 2 * pin));
	lo = masked ? lo | RTE_MASKED : lo & ~RTE_MASKED;
	reg_write(io, (uint8_t)(0x10 + 2 * pin), lo);
	spin_unlock_irqrestore(&io->lock, flags);
	return 0;
}

int ioapic_read_entry(uint32_t gsi, uint64_t *entry)
{
	uint32_t pin;
	struct ioapic *io = find(gsi, &pin);
	unsigned long flags;

	if (!io)
		return -1;
	flags = spin_lock_irqsave(&io->lock);
	*entry = reg_read(io, (uint8_t)(0x10 + 2 * pin)) |
		 ((uint64_t)reg_read(io, (uint8_t)(0x11 + 2 * pin)) << 32);
	spin_unlock_irqrestore(&io->lock, flags);
	return 0;
}

int ioapic_entry_handle(uint64_t entry)
{
	if (!(entry & IOAPIC_RTE_REMAP))
		return -1;
	return (int)(((entry >> 49) & 0x7fff) | ((entry >> 11) & 1) << 15);
}

/*
 * After CPU @apic_id's EOI of @vector: the directed entries sent there are
 * ended at their IO-APIC. One relaxed load when none waits for it.
 */
void ioapic_directed_eoi(uint32_t apic_id, uint32_t vector)
{
	unsigned long flags;

	if (apic_id > 0xff || vector > 0xff ||
	    !(__atomic_load_n(&directed_map[apic_id][vector / 64],
			      __ATOMIC_RELAXED) & (1ull << (vector % 64))))
		return;
	for (uint32_t i = 0; i < nioapics; i++) {
		struct ioapic *io = &ioapics[i];

		flags = spin_lock_irqsave(&io->lock);
		for (uint32_t n = 0; n < io->count; n++)
			if (io->eoi_key[n] == (DIRECTED | apic_id << 8 | vector))
				end_entry(io, n, reg_read(io, (uint8_t)(0x10 +
								       2 * n)));
		spin_unlock_irqrestore(&io->lock, flags);
	}
}
