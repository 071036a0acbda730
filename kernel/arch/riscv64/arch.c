/* SPDX-License-Identifier: MIT */
/*
 * arch.c - the rest of kernel.h's architecture interface on riscv64 (the
 * console's part is in console.c, the host's in host.c): waking a CPU,
 * raising an identity as a device would, and device memory, which needs
 * no mapping.
 */
#include "rv.h"
#include "sbi.h"
#include "smp.h"

/* kernel.h: wake @cpu's idle wait with an SBI IPI (nothing in its mailbox). */
void arch_wake_cpu(uint32_t cpu)
{
	if (cpu < smp_ncpus)
		sbi_send_ipi_hart(rv_cpus[cpu].hartid);
}

/*
 * kernel.h: identity @id arrives at hart @hwid as a device's MSI would:
 * the identity written to the hart's file (seteipnum_le, offset 0).
 */
void arch_send_irq(uint32_t hwid, uint32_t id)
{
	for (unsigned int i = 0; i < rv_ncpus; i++)
		if (rv_cpus[i].hartid == hwid && rv_cpus[i].imsic_file)
			mmio_write32(rv_cpus[i].imsic_file, id);
}

/* Identity mapping: nothing to map (kernel.h). */
void *mm_map_mmio(uint64_t phys, uint64_t len)
{
	(void)len;
	return (void *)(uintptr_t)phys;
}

/* kernel.h: no region of its own for controller tables here. */
uint64_t karch_phys_used(void)
{
	return 0;
}
