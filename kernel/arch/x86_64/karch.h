/* SPDX-License-Identifier: MIT */
/*
 * arch.h - x86-64 instructions the kernel needs, as inline functions.
 */
#ifndef KERNEL_ARCH_H
#define KERNEL_ARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RFLAGS_IF (1ul << 9)

static inline void outb(uint16_t port, uint8_t v)
{
	__asm__ volatile("outb %0, %1" : : "a"(v), "Nd"(port));
}

static inline void outw(uint16_t port, uint16_t v)
{
	__asm__ volatile("outw %0, %1" : : "a"(v), "Nd"(port));
}

static inline void outl(uint16_t port, uint32_t v)
{
	__asm__ volatile("outl %0, %1" : : "a"(v), "Nd"(port));
}

static inline uint8_t inb(uint16_t port)
{
	uint8_t v;

	__asm__ volatile("inb %1, %0" : "=a"(v) : "Nd"(port));
	return v;
}

static inline uint16_t inw(uint16_t port)
{
	uint16_t v;

	__asm__ volatile("inw %1, %0" : "=a"(v) : "Nd"(port));
	return v;
}

static inline uint32_t inl(uint16_t port)
{
	uint32_t v;

	__asm__ volatile("inl %1, %0" : "=a"(v) : "Nd"(port));
	return v;
}

static inline uint64_t rdmsr(uint32_t msr)
{
	uint32_t lo, hi;

	__asm__ volatile("rdmsr" : "=a"(lo), "=d"(hi) : "c"(msr));
	return ((uint64_t)hi << 32) | lo;
}

static inline void wrmsr(uint32_t msr, uint64_t v)
{
	__asm__ volatile("wrmsr" : : "c"(msr), "a"((uint32_t)v),
			 "d"((uint32_t)(v >> 32)) : "memory");
}

static inline void cpuid(uint32_t leaf, uint32_t sub, uint32_t *a,
			 uint32_t *b, uint32_t *c, uint32_t *d)
{
	__asm__ volatile("cpuid" : "=a"(*a), "=b"(*b), "=c"(*c), "=d"(*d)
			 : "a"(leaf), "c"(sub));
}

static inline uint64_t rdtsc(void)
{
	uint32_t lo, hi;

	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

static inline void cpu_relax(void)
{
	__asm__ volatile("pause" : : : "memory");
}

static inline void irq_disable(void)
{
	__asm__ volatile("cli" : : : "memory");
}

static inline void irq_enable(void)
{
	__asm__ volatile("sti" : : : "memory");
}

static inline unsigned long irq_save(void)
{
	unsigned long flags;

	__asm__ volatile("pushfq; popq %0; cli" : "=r"(flags) : : "memory");
	return flags;
}

static inline void irq_restore(unsigned long flags)
{
	if (flags & RFLAGS_IF)
		irq_enable();
}

static inline bool irqs_enabled(void)
{
	unsigned long flags;

	__asm__ volatile("pushfq; popq %0" : "=r"(flags));
	return (flags & RFLAGS_IF) != 0;
}

static inline void halt(void)
{
	__asm__ volatile("hlt" : : : "memory");
}

/* Enable interrupts and halt with no window in between (sti shadow). */
static inline void irq_enable_and_halt(void)
{
	__asm__ volatile("sti; hlt" : : : "memory");
}

static inline void mfence(void)
{
	__asm__ volatile("mfence" : : : "memory");
}

static inline void barrier(void)
{
	__asm__ volatile("" : : : "memory");
}

static inline uint64_t read_cr3(void)
{
	uint64_t v;

	__asm__ volatile("mov %%cr3, %0" : "=r"(v));
	return v;
}

static inline void write_cr3(uint64_t v)
{
	__asm__ volatile("mov %0, %%cr3" : : "r"(v) : "memory");
}

static inline void invlpg(uint64_t addr)
{
	__asm__ volatile("invlpg (%0)" : : "r"(addr) : "memory");
}

static inline uint32_t mmio_read32(uint64_t addr)
{
	return *(volatile uint32_t *)addr;
}

static inline void mmio_write32(uint64_t addr, uint32_t v)
{
	*(volatile uint32_t *)addr = v;
}

static inline uint16_t mmio_read16(uint64_t addr)
{
	return *(volatile uint16_t *)addr;
}

static inline void mmio_write16(uint64_t addr, uint16_t v)
{
	*(volatile uint16_t *)addr = v;
}

static inline uint8_t mmio_read8(uint64_t addr)
{
	return *(volatile uint8_t *)addr;
}

static inline void mmio_write8(uint64_t addr, uint8_t v)
{
	*(volatile uint8_t *)addr = v;
}

#define MSR_APIC_BASE 0x1b
#define MSR_EFER      0xc0000080
#define MSR_GS_BASE   0xc0000101

/*
 * A device line's vector also names, under interrupt remapping, the
 * remapping table entry its message (or IO-APIC entry) names:
 * ,"irte":N (host.c, read from the function or the IO-APIC). Called for
 * message vectors and, with KARCH_VECTOR_FIELDS_INTX, INTx ones too.
 * Returns the characters written (ksnprintf's count), 0 for none.
 */
struct umsi_irq_info;
#define KARCH_VECTOR_FIELDS 1
#define KARCH_VECTOR_FIELDS_INTX 1
int karch_vector_fields(char *buf, size_t size, const struct umsi_irq_info *ii);

#endif /* KERNEL_ARCH_H */
