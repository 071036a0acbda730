/* SPDX-License-Identifier: MIT */
/*
 * smp.c - start the application processors and run functions on them.
 *
 * CPU numbers are positions in the MADT (kernel/arch/x86_64/acpi.c); the APIC ID of
 * each comes from there too, so gaps in APIC IDs (QEMU's -smp with
 * sockets whose core count is not a power of two) need no special case.
 *
 * Start-up follows the SDM's INIT-SIPI-SIPI sequence (vol. 3, 8.4.4.1):
 * INIT, wait 10 ms, STARTUP with the trampoline page, wait 200 us, a
 * second STARTUP only if the AP has not yet checked in. APs start one at
 * a time, since they share the trampoline and ap_boot_stack.
 */
#include "kernel.h"
#include "acpi.h"
#include "apic.h"
#include "smp.h"

#define TRAMP_BASE  0x8000
#define STACK_SIZE  16384
#define IST_SIZE    16384

extern char trampoline_start[], trampoline_end[], tramp_cr3[];

uint32_t smp_ncpus;
uint32_t smp_bsp_cpu;
struct percpu *percpu_table[KERNEL_MAX_CPUS];

/* Read by ap_entry64 in boot.S. */
uint64_t ap_boot_stack;
static volatile uint32_t ap_booting_cpu;
static volatile bool ap_alive;

static struct spinlock xcall_lock;

static struct percpu *percpu_alloc(uint32_t cpu)
{
	struct percpu *pc = kalloc(sizeof(*pc));

	if (!pc)
		panic("smp: no memory for CPU %u", cpu);
	pc->cpu = cpu;
	pc->tss_slot = cpu;
	pc->stack = (char *)kalloc_pages(STACK_SIZE) + STACK_SIZE;
	pc->irq_stack = (char *)kalloc_pages(IST_SIZE) + IST_SIZE;
	pc->exc_stack = (char *)kalloc_pages(IST_SIZE) + IST_SIZE;
	return pc;
}

/*
 * The BSP's percpu exists before ACPI is parsed (exceptions need its IST
 * stacks), so its TSS lives in the spare GDT slot after the APs' and its
 * CPU number is filled in by smp_bsp_init().
 */
struct percpu *smp_bsp_early(void)
{
	struct percpu *pc = percpu_alloc(0);

	pc->tss_slot = KERNEL_MAX_CPUS;
	return pc;
}

/* The BSP is CPU 0 only if the MADT lists it first; find it by APIC ID. */
void smp_bsp_init(struct percpu *pc)
{
	uint32_t id = apic_id();
	int cpu;

	smp_ncpus = acpi.ncpus;
	cpu = smp_cpu_by_apic_id(id);
	if (cpu < 0)
		panic("smp: BSP APIC ID %u not in the MADT", id);
	pc->cpu = (uint32_t)cpu;
	pc->apic_id = id;
	pc->online = true;
	percpu_table[cpu] = pc;
	smp_bsp_cpu = (uint32_t)cpu;
}

int smp_cpu_by_apic_id(uint32_t id)
{
	for (uint32_t i = 0; i < smp_ncpus; i++) {
		if (acpi.cpu_apic_id[i] == id)
			return (int)i;
	}
	return -1;
}

bool smp_cpu_online(uint32_t cpu)
{
	return cpu < smp_ncpus && percpu_table[cpu] && percpu_table[cpu]->online;
}

uint32_t smp_cpu_apic_id(uint32_t cpu)
{
	return acpi.cpu_apic_id[cpu];
}

uint32_t smp_cpu_hwid(uint32_t cpu)
{
	return smp_cpu_apic_id(cpu);
}

void ap_main(void);

/* First C code of an AP; ap_entry64 put us on percpu->stack. */
void ap_main(void)
{
	struct percpu *pc = percpu_table[ap_booting_cpu];

	cpu_setup(pc);
	apic_cpu_enable(false);
	if (apic_id() != pc->apic_id)
		panic("smp: CPU %u has APIC ID %u, MADT says %u", pc->cpu,
		      apic_id(), pc->apic_id);
	pc->online = true;
	__atomic_store_n(&ap_alive, true, __ATOMIC_RELEASE);
	for (;;)
		irq_enable_and_halt();
}

static bool wait_alive(uint64_t us)
{
	uint64_t end = clock_ns() + us * 1000;

	while (clock_ns() < end) {
		if (__atomic_load_n(&ap_alive, __ATOMIC_ACQUIRE))
			return true;
		cpu_relax();
	}
	return __atomic_load_n(&ap_alive, __ATOMIC_ACQUIRE);
}

/* INIT, STARTUP: @cpu (whose percpu exists) runs ap_main() again. */
static bool start_one(uint32_t cpu)
{
	struct percpu *pc = percpu_table[cpu];

	ap_booting_cpu = cpu;
	ap_boot_stack = (uint64_t)pc->stack;
	ap_alive = false;
	mfence();
	apic_send_init(pc->apic_id);
	udelay(10000);
	apic_send_sipi(pc->apic_id, TRAMP_BASE >> 12);
	if (!wait_alive(200)) {
		apic_send_sipi(pc->apic_id, TRAMP_BASE >> 12);
		/* TCG with more vCPUs than host cores can be slow to start. */
		if (!wait_alive(5000000))
			return false;
	}
	return true;
}

static bool boot_one(uint32_t cpu)
{
	struct percpu *pc = percpu_alloc(cpu);

	pc->apic_id = acpi.cpu_apic_id[cpu];
	percpu_table[cpu] = pc;
	return start_one(cpu);
}

void smp_boot_aps(void)
{
	uint32_t cr3 = (uint32_t)read_cr3();
	uint32_t self = this_cpu_id();

	memcpy((void *)TRAMP_BASE, trampoline_start,
	       (size_t)(trampoline_end - trampoline_start));
	memcpy((void *)(TRAMP_BASE + (tramp_cr3 - trampoline_start)), &cr3, 4);
	mfence();
	for (uint32_t cpu = 0; cpu < smp_ncpus; cpu++) {
		if (cpu == self)
			continue;
		if (!boot_one(cpu))
			kprintf("smp: CPU %u (APIC ID %u) did not start\n", cpu,
				acpi.cpu_apic_id[cpu]);
	}
}

/*
 * Cross-calls: one at a time system-wide (xcall_lock), so two CPUs
 * calling each other cannot deadlock. The lock is taken with interrupts
 * enabled, so a CPU waiting for it still answers a call aimed at it.
 */
int smp_cross_call(uint32_t cpu, void (*fn)(void *), void *arg)
{
	struct percpu *pc;

	if (!smp_cpu_online(cpu))
		return -1;
	if (cpu == this_cpu_id()) {
		unsigned long flags = irq_save();

		fn(arg);
		irq_restore(flags);
		return 0;
	}
	pc = percpu_table[cpu];
	spin_lock(&xcall_lock);
	pc->xcall_arg = arg;
	pc->xcall_done = 0;
	__atomic_store_n(&pc->xcall_fn, fn, __ATOMIC_RELEASE);
	apic_send_fixed(pc->apic_id, VECTOR_XCALL);
	while (!__atomic_load_n(&pc->xcall_done, __ATOMIC_ACQUIRE))
		cpu_relax();
	spin_unlock(&xcall_lock);
	return 0;
}

void smp_xcall_interrupt(void)
{
	struct percpu *pc = this_cpu();
	void (*fn)(void *) = __atomic_load_n(&pc->xcall_fn, __ATOMIC_ACQUIRE);

	if (!fn)
		return;
	pc->xcall_fn = NULL;
	fn(pc->xcall_arg);
	__atomic_store_n(&pc->xcall_done, 1, __ATOMIC_RELEASE);
}

/*
 * Runs on the CPU going offline, from its cross-call interrupt: it stops
 * taking interrupts, says so, and halts with interrupts off. What it was
 * doing (the idle loop) is abandoned; INIT resets the CPU when it comes
 * back. The cross-call is acknowledged here, since this never returns.
 */
static void park_self(void *arg)
{
	struct percpu *pc = this_cpu();

	(void)arg;
	apic_cpu_disable();
	pc->online = false;
	__atomic_store_n(&pc->xcall_done, 1, __ATOMIC_RELEASE);
	for (;;) {
		irq_disable();
		halt();
	}
}

int smp_cpu_park(uint32_t cpu)
{
	struct percpu *pc;

	if (!smp_cpu_online(cpu) || cpu == this_cpu_id() || cpu == smp_bsp_cpu)
		return -1;
	pc = percpu_table[cpu];
	spin_lock(&xcall_lock);
	pc->xcall_arg = NULL;
	pc->xcall_done = 0;
	__atomic_store_n(&pc->xcall_fn, park_self, __ATOMIC_RELEASE);
	apic_send_fixed(pc->apic_id, VECTOR_XCALL);
	while (!__atomic_load_n(&pc->xcall_done, __ATOMIC_ACQUIRE))
		cpu_relax();
	spin_unlock(&xcall_lock);
	return 0;
}

int smp_cpu_restart(uint32_t cpu)
{
	uint32_t cr3 = (uint32_t)read_cr3();

	if (cpu >= smp_ncpus || !percpu_table[cpu] || smp_cpu_online(cpu))
		return -1;
	/* The trampoline page may have been reused since boot. */
	memcpy((void *)TRAMP_BASE, trampoline_start,
	       (size_t)(trampoline_end - trampoline_start));
	memcpy((void *)(TRAMP_BASE + (tramp_cr3 - trampoline_start)), &cr3, 4);
	mfence();
	return start_one(cpu) ? 0 : -1;
}
