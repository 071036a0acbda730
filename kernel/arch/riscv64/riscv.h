/* SPDX-License-Identifier: MIT */
/*
 * riscv.h - RV64 instructions and CSRs the S-mode kernel needs, as inline
 * functions.
 *
 * CSR numbers are from the RISC-V privileged specification (sstatus,
 * sie, stvec, scause ...) and the Advanced Interrupt Architecture
 * specification v1.0 (Smaia/Ssaia), chapter 2 "CSRs" and chapter 3
 * "Incoming MSI Controller": siselect 0x150, sireg 0x151, stopei 0x15c.
 * clang 14 does not know the AIA CSR names, so those are used by number.
 */
#ifndef RISCV64_RISCV_H
#define RISCV64_RISCV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* sstatus (privileged spec, 10.1.1). */
#define SSTATUS_SIE		(1ul << 1)
#define SSTATUS_SPIE		(1ul << 5)

/* sie / sip bits and scause interrupt codes (privileged spec, 10.1.3). */
#define IRQ_S_SOFT		1
#define IRQ_S_TIMER		5
#define IRQ_S_EXT		9
#define SIE_SEIE		(1ul << IRQ_S_EXT)
#define SCAUSE_INTERRUPT	(1ul << 63)

/* AIA supervisor CSRs (AIA spec 2.3 and 2.5). */
#define CSR_SISELECT		0x150
#define CSR_SIREG		0x151
#define CSR_STOPEI		0x15c

#define RV_STR2(x) #x
#define RV_STR(x) RV_STR2(x)

/*
 * One set of accessors per CSR: read, write, set bits, clear bits and
 * swap (csrrw: the old value comes back in the same instruction, which is
 * what claiming through stopei needs).
 */
#define RV_CSR_ACCESSORS(name, csr)					\
static inline unsigned long csr_read_##name(void)			\
{									\
	unsigned long v;						\
									\
	__asm__ volatile("csrr %0, " RV_STR(csr) : "=r"(v) : : "memory"); \
	return v;							\
}									\
static inline void csr_write_##name(unsigned long v)			\
{									\
	__asm__ volatile("csrw " RV_STR(csr) ", %0" : : "r"(v) : "memory"); \
}									\
static inline void csr_set_##name(unsigned long v)			\
{									\
	__asm__ volatile("csrs " RV_STR(csr) ", %0" : : "r"(v) : "memory"); \
}									\
static inline void csr_clear_##name(unsigned long v)			\
{									\
	__asm__ volatile("csrc " RV_STR(csr) ", %0" : : "r"(v) : "memory"); \
}									\
static inline unsigned long csr_swap_##name(unsigned long v)		\
{									\
	unsigned long old;						\
									\
	__asm__ volatile("csrrw %0, " RV_STR(csr) ", %1"		\
			 : "=r"(old) : "r"(v) : "memory");		\
	return old;							\
}

RV_CSR_ACCESSORS(sstatus, sstatus)
RV_CSR_ACCESSORS(sie, sie)
RV_CSR_ACCESSORS(sip, sip)
RV_CSR_ACCESSORS(stvec, stvec)
RV_CSR_ACCESSORS(scause, scause)
RV_CSR_ACCESSORS(stval, stval)
RV_CSR_ACCESSORS(sepc, sepc)
RV_CSR_ACCESSORS(siselect, 0x150)
RV_CSR_ACCESSORS(sireg, 0x151)
RV_CSR_ACCESSORS(stopei, 0x15c)

static inline uint64_t rdtime(void)
{
	uint64_t v;

	__asm__ volatile("rdtime %0" : "=r"(v));
	return v;
}

static inline void cpu_relax(void)
{
	/*
	 * Zihintpause's "pause" is a fence with pred=W, succ=0; the
	 * encoding is a hint (a no-op) where the extension is absent.
	 */
	__asm__ volatile(".insn i 0x0f, 0, x0, x0, 0x010" : : : "memory");
}

static inline void wfi(void)
{
	__asm__ volatile("wfi" : : : "memory");
}

/* Full fence: device and memory accesses ordered both ways. */
static inline void mb(void)
{
	__asm__ volatile("fence iorw, iorw" : : : "memory");
}

static inline unsigned long local_irq_save(void)
{
	unsigned long old;

	__asm__ volatile("csrrci %0, sstatus, 2" : "=r"(old) : : "memory");
	return old & SSTATUS_SIE;
}

static inline void local_irq_restore(unsigned long flags)
{
	if (flags & SSTATUS_SIE)
		csr_set_sstatus(SSTATUS_SIE);
}

static inline void local_irq_enable(void)
{
	csr_set_sstatus(SSTATUS_SIE);
}

static inline void local_irq_disable(void)
{
	csr_clear_sstatus(SSTATUS_SIE);
}

/*
 * MMIO. The fences order device accesses against each other and against
 * normal memory, as Linux's readl/writel do on RISC-V.
 */
static inline uint8_t mmio_read8(uint64_t addr)
{
	uint8_t v = *(volatile uint8_t *)(uintptr_t)addr;

	__asm__ volatile("fence i, ir" : : : "memory");
	return v;
}

static inline uint16_t mmio_read16(uint64_t addr)
{
	uint16_t v = *(volatile uint16_t *)(uintptr_t)addr;

	__asm__ volatile("fence i, ir" : : : "memory");
	return v;
}

static inline uint32_t mmio_read32(uint64_t addr)
{
	uint32_t v = *(volatile uint32_t *)(uintptr_t)addr;

	__asm__ volatile("fence i, ir" : : : "memory");
	return v;
}

static inline void mmio_write8(uint64_t addr, uint8_t v)
{
	__asm__ volatile("fence w, o" : : : "memory");
	*(volatile uint8_t *)(uintptr_t)addr = v;
}

static inline void mmio_write16(uint64_t addr, uint16_t v)
{
	__asm__ volatile("fence w, o" : : : "memory");
	*(volatile uint16_t *)(uintptr_t)addr = v;
}

static inline void mmio_write32(uint64_t addr, uint32_t v)
{
	__asm__ volatile("fence w, o" : : : "memory");
	*(volatile uint32_t *)(uintptr_t)addr = v;
}

#endif /* RISCV64_RISCV_H */
