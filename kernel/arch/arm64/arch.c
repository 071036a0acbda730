// SPDX-License-Identifier: MIT
/*
 * arch.c - the rest of kernel.h's architecture interface on arm64 (the
 * console's part is in console.c, the host's in host.c): waking a CPU,
 * raising an identity as a device would, and device memory, which needs
 * no mapping with the MMU off.
 */
#include "a64.h"
#include "smp.h"

/* kernel.h: wake @cpu's idle wait with an SGI (nothing in its mailbox). */
void arch_wake_cpu(uint32_t cpu)
{
	if (cpu < smp_ncpus && cpus[cpu].online)
		smp_send_sgi(cpu, SGI_WAKE);
}

/*
 * kernel.h: identity @id arriving at the CPU named @hwid as a device's
 * message would. An LPI is made pending only by the ITS translating a
 * (DeviceID, EventID) or by GICR_SETLPIR, which QEMU's redistributors
 * (GICR_TYPER.DirectLPI 0) do not have; the identity alone names neither,
 * so this is not available on arm64 (umsi.hp_storm sends nothing).
 */
void arch_send_irq(uint32_t hwid, uint32_t id)
{
	static bool said;

	if (!said) {
		said = true;
		kprintf("arm64: cannot raise identity %u at mpidr %u without "
			"its device (no DirectLPI)\n", id, hwid);
	}
}

/* Identity mapping: nothing to map (kernel.h). */
void *mm_map_mmio(uint64_t phys, uint64_t len)
{
	(void)len;
	return (void *)(uintptr_t)phys;
}
