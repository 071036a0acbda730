/* SPDX-License-Identifier: MIT */
/*
 * arch_x86.c - the architecture interface of kernel.h on x86-64: waking a
 * CPU and raising a vector by IPI through the local APIC, and the PS/2
 * keyboard that umsi.steps waits on.
 */
#include "kernel.h"
#include "apic.h"
#include "smp.h"

void arch_wake_cpu(uint32_t cpu)
{
	apic_send_fixed(smp_cpu_apic_id(cpu), VECTOR_WAKE);
}

void arch_send_irq(uint32_t hwid, uint32_t id)
{
	apic_send_fixed(hwid, (uint8_t)id);
}

/*
 * The i8042 is polled: its interrupt line stays masked. The harness
 * presses a key with the monitor's `sendkey ret`.
 */
void arch_key_drain(uint64_t quiet_us)
{
	uint64_t end = clock_ns() + quiet_us * 1000;

	while (clock_ns() < end) {
		if (inb(0x64) & 1) {
			(void)inb(0x60);
			end = clock_ns() + quiet_us * 1000;
		}
	}
}

bool arch_key_pressed(void)
{
	return (inb(0x64) & 1) != 0;
}

/* kernel.h: no region of its own for controller tables here. */
uint64_t karch_phys_used(void)
{
	return 0;
}
