/* SPDX-License-Identifier: MIT */
/*
 * smp.h - application processor start-up and cross-calls.
 */
#ifndef KERNEL_SMP_H
#define KERNEL_SMP_H

#include <stdbool.h>
#include <stdint.h>

struct percpu;

extern uint32_t smp_ncpus;		/* CPUs in the MADT (possible) */
extern uint32_t smp_bsp_cpu;		/* the boot CPU's number */

struct percpu *smp_bsp_early(void);	/* BSP percpu before ACPI */
void smp_bsp_init(struct percpu *pc);	/* its CPU number, from the MADT */
void smp_boot_aps(void);		/* start every AP; report failures */
bool smp_cpu_online(uint32_t cpu);
uint32_t smp_cpu_apic_id(uint32_t cpu);
/* The interrupt controller's name for @cpu (x86 APIC ID, RISC-V hart ID). */
uint32_t smp_cpu_hwid(uint32_t cpu);
int smp_cpu_by_apic_id(uint32_t apic_id);

/*
 * Run @fn(@arg) on CPU @cpu with interrupts off and wait for it to
 * return. Returns 0, or -1 when @cpu is not online. Process context.
 */
int smp_cross_call(uint32_t cpu, void (*fn)(void *), void *arg);
void smp_xcall_interrupt(void);		/* from kernel_irq_entry */

/*
 * CPU hot-unplug and hot-plug, as a kernel does it: smp_cpu_park() makes
 * @cpu stop taking interrupts for good (local APIC software-disabled,
 * interrupts off, halted) and returns once it has; smp_cpu_restart()
 * starts it again from reset (INIT, STARTUP), as at boot. Both return 0
 * or -1 (not a CPU that can: the caller's own, or in the wrong state).
 * Process context.
 */
int smp_cpu_park(uint32_t cpu);
int smp_cpu_restart(uint32_t cpu);

#endif /* KERNEL_SMP_H */
