/* SPDX-License-Identifier: MIT */
/*
 * karch.h - what kernel/common/kernel.h takes from the arm64 architecture:
 * interrupt masking (DAIF.I), barriers, MMIO (arm64.h), the CPU number.
 * The shared kernel code (glue, drivers, PCI, heap) sees only these and
 * the functions kernel.h and smp.h declare, which kernel/arch/arm64/
 * implements (console.c, host.c, smp.c, arch.c).
 */
#ifndef ARM64_KARCH_H
#define ARM64_KARCH_H

/* The longest kprintf line (kernel/common/console.c). */
#define KARCH_KPRINTF_MAX 512

#include <stdbool.h>
#include <stdint.h>

#include "arm64.h"

/* The architecture's name in the ready line, its CPU name in UMSI lines. */
#define KARCH_NAME      "arm64"
#define KARCH_HWID_KEY  "mpidr"

/*
 * A device line's message vector also names what the ITS made of it
 * (glue_report.c): ,"event_id":E,"lpi":L, the EventID the function's
 * message carries (its message number or MSI-X index) and the LPI it is
 * translated to (A64_UMSI_FIRST_LPI + vector: uMSI's identities are global
 * on the ITS, the same whatever the CPU). Returns the characters written (ksnprintf's count).
 */
struct umsi_irq_info;
#define KARCH_VECTOR_FIELDS 1
int karch_vector_fields(char *buf, size_t size, const struct umsi_irq_info *ii);

/* PSTATE.I: IRQs masked. */
#define DAIF_I		(1ul << 7)

static inline unsigned long irq_save(void)
{
	unsigned long f;

	__asm__ volatile("mrs %0, daif\n\tmsr daifset, #2" : "=r"(f)
			 : : "memory");
	return f;
}

static inline void irq_restore(unsigned long flags)
{
	__asm__ volatile("msr daif, %0" : : "r"(flags) : "memory");
}

static inline bool irqs_enabled(void)
{
	return !(read_sysreg(daif) & DAIF_I);
}

/* A full fence: memory and device accesses ordered both ways. */
static inline void mfence(void)
{
	dsb(sy);
}

static inline void barrier(void)
{
	__asm__ volatile("" : : : "memory");
}

/* This CPU's number (position in the device tree), kept in TPIDR_EL1. */
static inline uint32_t this_cpu_id(void)
{
	return (uint32_t)read_sysreg(tpidr_el1);
}

#endif /* ARM64_KARCH_H */
