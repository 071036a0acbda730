/* SPDX-License-Identifier: MIT */
/*
 * arm64.h - what every file of the arm64 reference kernel needs: MMIO
 * accessors, barriers, system registers, the CPU's identity.
 *
 * The kernel runs at EL1 with the MMU off, so every data access is
 * Device-nGnRnE and must be naturally aligned (the compiler is told
 * -mstrict-align); physical and virtual addresses are the same.
 */
#ifndef ARM64_ARM64_H
#define ARM64_ARM64_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ARM64_MAX_CPUS	64	/* as ARM64_MAX_CPUS_ASM in boot.S */
#define ARM64_STACK_SIZE	16384	/* as STACK_SIZE in boot.S */

#define dsb(opt)	__asm__ volatile("dsb " #opt ::: "memory")
#define dmb(opt)	__asm__ volatile("dmb " #opt ::: "memory")
#define isb()		__asm__ volatile("isb" ::: "memory")

/* System registers by name or by encoding (S3_x_Cn_Cm_y). */
#define read_sysreg(r) ({ uint64_t __v;					\
	__asm__ volatile("mrs %0, " #r : "=r"(__v)); __v; })
#define write_sysreg(r, v) do { uint64_t __v = (uint64_t)(v);		\
	__asm__ volatile("msr " #r ", %0" :: "r"(__v) : "memory"); } while (0)

/* GICv3 CPU interface registers (GICv3 spec 12.2, encodings in 12.1.6). */
#define ICC_PMR_EL1	S3_0_C4_C6_0
#define ICC_IAR1_EL1	S3_0_C12_C12_0
#define ICC_EOIR1_EL1	S3_0_C12_C12_1
#define ICC_BPR1_EL1	S3_0_C12_C12_3
#define ICC_CTLR_EL1	S3_0_C12_C12_4
#define ICC_SRE_EL1	S3_0_C12_C12_5
#define ICC_IGRPEN1_EL1	S3_0_C12_C12_7

static inline uint8_t mmio_read8(uint64_t a)
{
	return *(volatile uint8_t *)(uintptr_t)a;
}

static inline uint16_t mmio_read16(uint64_t a)
{
	return *(volatile uint16_t *)(uintptr_t)a;
}

static inline uint32_t mmio_read32(uint64_t a)
{
	return *(volatile uint32_t *)(uintptr_t)a;
}

static inline uint64_t mmio_read64(uint64_t a)
{
	return *(volatile uint64_t *)(uintptr_t)a;
}

static inline void mmio_write8(uint64_t a, uint8_t v)
{
	*(volatile uint8_t *)(uintptr_t)a = v;
}

static inline void mmio_write16(uint64_t a, uint16_t v)
{
	*(volatile uint16_t *)(uintptr_t)a = v;
}

static inline void mmio_write32(uint64_t a, uint32_t v)
{
	*(volatile uint32_t *)(uintptr_t)a = v;
}

static inline void mmio_write64(uint64_t a, uint64_t v)
{
	*(volatile uint64_t *)(uintptr_t)a = v;
}

/* A spin loop tells the CPU it spins. */
static inline void cpu_relax(void)
{
	__asm__ volatile("yield" ::: "memory");
}

static inline void irq_enable(void)
{
	__asm__ volatile("msr daifclr, #2" ::: "memory");
}

static inline void irq_disable(void)
{
	__asm__ volatile("msr daifset, #2" ::: "memory");
}

/* MPIDR_EL1 affinity fields Aff3..Aff0, without the U and MT bits. */
static inline uint64_t cpu_mpidr(void)
{
	return read_sysreg(mpidr_el1) & 0xff00ffffffULL;
}

/* The generic timer's counter: time-outs only, never asserted on. */
static inline uint64_t timer_count(void)
{
	isb();
	return read_sysreg(cntpct_el0);
}

static inline uint64_t timer_freq(void)
{
	return read_sysreg(cntfrq_el0);
}

/* A deadline @us microseconds from now, in counter ticks. */
static inline uint64_t deadline_us(uint64_t us)
{
	return timer_count() + timer_freq() / 1000000 * us + 1;
}

static inline bool deadline_passed(uint64_t dl)
{
	return timer_count() >= dl;
}

#endif /* ARM64_ARM64_H */
