/* SPDX-License-Identifier: MIT */
/*
 * karch.h - what kernel/common/kernel.h takes from the riscv64 architecture:
 * interrupt masking (sstatus.SIE), fences, MMIO, the CPU number. The
 * shared kernel code (glue, drivers, PCI, heap) sees only these and the
 * functions kernel.h and smp.h declare, which kernel/arch/riscv64/
 * implements (console.c, host.c, smp.c, arch.c).
 */
#ifndef RISCV64_KARCH_H
#define RISCV64_KARCH_H

/* The longest kprintf line (kernel/common/console.c). */
#define KARCH_KPRINTF_MAX 2048

#include <stdbool.h>
#include <stdint.h>

#include "riscv.h"

/* The architecture's name in the ready line, its CPU name in UMSI lines. */
#define KARCH_NAME      "riscv64"
#define KARCH_HWID_KEY  "hart"

/* Offset of the CPU number in struct rv_cpu (rv.h), which tp points at. */
#define RV_CPU_NUMBER_OFFSET 8

static inline unsigned long irq_save(void)
{
	return local_irq_save();
}

static inline void irq_restore(unsigned long flags)
{
	local_irq_restore(flags);
}

static inline void irq_enable(void)
{
	local_irq_enable();
}

static inline void irq_disable(void)
{
	local_irq_disable();
}

static inline bool irqs_enabled(void)
{
	return (csr_read_sstatus() & SSTATUS_SIE) != 0;
}

/* A full fence: memory and device accesses ordered both ways. */
static inline void mfence(void)
{
	mb();
}

static inline void barrier(void)
{
	__asm__ volatile("" : : : "memory");
}

/* This CPU's number (position in the device tree), from its record. */
static inline uint32_t this_cpu_id(void)
{
	uint32_t v;

	__asm__ volatile("lwu %0, %1(tp)" : "=r"(v)
			 : "i"(RV_CPU_NUMBER_OFFSET));
	return v;
}

#endif /* RISCV64_KARCH_H */
