// SPDX-License-Identifier: MIT
/*
 * smp.c - every CPU up through PSCI CPU_ON, and kernel/common/smp.h on arm64.
 *
 * A CPU's number is its position among the device tree's cpu nodes
 * (CPU 0 boots); its hardware ID (smp_cpu_hwid, "mpidr" in UMSI lines) is
 * its MPIDR_EL1 affinity, Aff2.Aff1.Aff0 in bits 23:0. Each CPU wakes its
 * redistributor, gets an LPI pending table, LPIs and the SGIs the kernel
 * uses enabled, and the system register CPU interface (gicv3.c); then it
 * says it is up and waits for interrupts.
 *
 * Cross-calls: a mailbox in the target's struct cpu and SGI 1 through
 * ICC_SGI1R_EL1. A CPU leaves (smp_cpu_park) by PSCI CPU_OFF from its
 * idle loop, Group 1 disabled first, and comes back (smp_cpu_restart)
 * through CPU_ON, as at boot; its redistributor keeps its LPI tables.
 */
#include "a64.h"
#include "smp.h"

#define PSCI_CPU_OFF		0x84000002u
#define PSCI_AFFINITY_INFO	0xc4000004u
#define PSCI_SUCCESS		0
#define PSCI_ALREADY_ON		-4
#define PSCI_AFF_OFF		1
#define ICC_SGI1R_EL1		S3_0_C12_C11_5
#define GITS_TYPER		0x0008
#define GITS_TYPER_PTA		(1ull << 19)
#define SMP_START_TIMEOUT_US	2000000

uint32_t smp_ncpus;		/* smp.h: the CPUs of the device tree */
uint32_t smp_bsp_cpu;		/* CPU 0 */
unsigned a64_ncpus;
static struct spinlock xcall_lock;

extern void secondary_entry(void);
void secondary_main(uint64_t n);
bool a64_probe_reporting(void);

static uint64_t us_to_ticks(uint64_t us)
{
	return read_sysreg(cntfrq_el0) / 1000000 * us + 1;
}

/* A GICv2: the CPU interface and SGIs of the calling CPU @n (gicv2.c). */
static int cpu_gic2_up(unsigned n)
{
	struct cpu *c = &cpus[n];
	int i = gic2_cpu_init(&gic2, 1u << SGI_XCALL | 1u << SGI_WAKE);

	if (i < 0) {
		kprintf("cpu %u mpidr 0x%llx: no GICv2 CPU interface\n", n,
			(unsigned long long)c->mpidr);
		return -1;
	}
	c->gic_if = i;
	c->gic_if_ok = true;
	kprintf("cpu %u mpidr 0x%llx up: gicv2 cpu interface %d\n", n,
		(unsigned long long)c->mpidr, i);
	__atomic_store_n(&c->online, true, __ATOMIC_RELEASE);
	return 0;
}

/* Redistributor, LPIs, SGIs and CPU interface of the calling CPU @n. */
int cpu_gic_up(unsigned n)
{
	struct cpu *c = &cpus[n];
	bool pta = plat.its &&
		   (mmio_read64(plat.its + GITS_TYPER) & GITS_TYPER_PTA);

	write_sysreg(tpidr_el1, n);
	c->mpidr = cpu_mpidr();
	if (plat.gic_version == 2)
		return cpu_gic2_up(n);
	if (!c->rd.base && gic_rdist_find(&gic, c->mpidr, &c->rd)) {
		kprintf("cpu %u mpidr 0x%llx: no redistributor\n", n,
			(unsigned long long)c->mpidr);
		return -1;
	}
	if (gic_cpu_init(&gic, &c->rd)) {
		kprintf("cpu %u: redistributor 0x%llx refuses LPIs\n", n,
			(unsigned long long)c->rd.base);
		return -1;
	}
	gic_sgi_enable(&c->rd, 1u << SGI_XCALL | 1u << SGI_WAKE);
	/* What MAPC takes for this redistributor, as the kernel's ITS driver encodes it. */
	c->rdbase = pta ? c->rd.base >> 16 : c->rd.procnum;
	kprintf("cpu %u mpidr 0x%llx up: redistributor 0x%llx processor %u, LPIs on (pending table 0x%llx), ICC_SRE_EL1 0x%llx ICC_PMR_EL1 0x%llx ICC_IGRPEN1_EL1 %llu\n",
		n, (unsigned long long)c->mpidr, (unsigned long long)c->rd.base,
		c->rd.procnum, (unsigned long long)c->rd.pend_table,
		(unsigned long long)read_sysreg(ICC_SRE_EL1),
		(unsigned long long)read_sysreg(ICC_PMR_EL1),
		(unsigned long long)read_sysreg(ICC_IGRPEN1_EL1));
	__atomic_store_n(&c->online, true, __ATOMIC_RELEASE);
	return 0;
}

void smp_send_sgi(unsigned cpu, uint32_t intid)
{
	uint64_t m = cpus[cpu].mpidr, aff0 = m & 0xff, v;

	if (plat.gic_version == 2) {
		gic2_send_sgi(&gic2, (unsigned)cpus[cpu].gic_if, intid);
		return;
	}
	v = (m >> 32 & 0xff) << 48 | (m >> 16 & 0xff) << 32 |
	    (m >> 8 & 0xff) << 16 | (uint64_t)(intid & 0xf) << 24 |
	    (aff0 >> 4) << 44 | 1ull << (aff0 & 0xf);

	dsb(sy);	/* the mailbox before the SGI */
	write_sysreg(ICC_SGI1R_EL1, v);
	isb();
}

/* From the IRQ path: a cross-call, or just a wake-up. */
void smp_sgi(uint32_t intid)
{
	struct cpu *c = &cpus[this_cpu()];
	void (*fn)(void *);

	c->sgis++;
	if (intid != SGI_XCALL)
		return;
	fn = __atomic_exchange_n(&c->xcall_fn, NULL, __ATOMIC_ACQ_REL);
	if (fn) {
		fn(c->xcall_arg);
		__atomic_store_n(&c->xcall_done, 1, __ATOMIC_RELEASE);
	}
}

/* smp_cpu_park(): this CPU stops for good, until CPU_ON. */
static void __attribute__((noreturn)) park_self(struct cpu *c, unsigned n)
{
	int64_t r;

	irq_disable();
	if (plat.gic_version == 2)
		gic2_cpu_off(&gic2);
	else
		write_sysreg(ICC_IGRPEN1_EL1, 0);
	isb();
	__atomic_store_n(&c->online, false, __ATOMIC_RELEASE);
	r = psci_call(PSCI_CPU_OFF, 0, 0, 0);
	panic("cpu %u: PSCI CPU_OFF returned %lld", n, (long long)r);
}

/* A secondary CPU: set up, then wait for interrupts until parked. */
void secondary_main(uint64_t n)
{
	struct cpu *c = &cpus[n];

	if (cpu_gic_up((unsigned)n))
		return;
	irq_enable();
	for (;;) {
		/* Checked with IRQs masked, so no wake-up is slept through. */
		irq_disable();
		if (__atomic_load_n(&c->park, __ATOMIC_ACQUIRE))
			park_self(c, (unsigned)n);
		if (!a64_probe_reporting() || c->irqs == c->reported)
			__asm__ volatile("wfi" ::: "memory");
		irq_enable();
		isb();
		cpu_report_irqs((unsigned)n);
	}
}

static bool smp_start(unsigned n)
{
	uint64_t dl;
	int64_t r;

	r = psci_call(plat.psci_cpu_on, plat.mpidr[n],
		      (uintptr_t)secondary_entry, n);
	if (r != PSCI_SUCCESS && r != PSCI_ALREADY_ON) {
		kprintf("cpu %u mpidr 0x%llx: PSCI CPU_ON returned %lld\n",
			n, (unsigned long long)plat.mpidr[n], (long long)r);
		return false;
	}
	dl = timer_count() + us_to_ticks(SMP_START_TIMEOUT_US);
	while (!__atomic_load_n(&cpus[n].online, __ATOMIC_ACQUIRE)) {
		if (timer_count() >= dl) {
			kprintf("cpu %u mpidr 0x%llx: did not come up\n", n,
				(unsigned long long)plat.mpidr[n]);
			return false;
		}
		cpu_relax();
	}
	return true;
}

void smp_boot(void)
{
	unsigned n;

	smp_ncpus = plat.ncpus;
	smp_bsp_cpu = 0;
	for (n = 1; n < plat.ncpus; n++)
		smp_start(n);
}

bool smp_cpu_online(uint32_t cpu)
{
	return cpu < smp_ncpus &&
	       __atomic_load_n(&cpus[cpu].online, __ATOMIC_ACQUIRE);
}

uint32_t smp_cpu_hwid(uint32_t cpu)
{
	uint64_t m;

	if (cpu >= smp_ncpus)
		return ~0u;
	m = cpus[cpu].mpidr ? cpus[cpu].mpidr : plat.mpidr[cpu];
	return (uint32_t)(m & 0xffffff);
}

int smp_cross_call(uint32_t cpu, void (*fn)(void *), void *arg)
{
	struct cpu *c;
	unsigned long flags;
	uint64_t dl;
	int ret = 0;

	if (!smp_cpu_online(cpu))
		return -1;
	if (cpu == this_cpu_id()) {
		flags = irq_save();
		fn(arg);
		irq_restore(flags);
		return 0;
	}
	c = &cpus[cpu];
	spin_lock(&xcall_lock);	/* process context: one call at a time */
	c->xcall_arg = arg;
	__atomic_store_n(&c->xcall_done, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&c->xcall_fn, fn, __ATOMIC_RELEASE);
	smp_send_sgi(cpu, SGI_XCALL);
	dl = timer_count() + us_to_ticks(1000000);
	while (!__atomic_load_n(&c->xcall_done, __ATOMIC_ACQUIRE)) {
		if (timer_count() >= dl) {
			kprintf("smp: cross-call to cpu %u mpidr 0x%llx timed out\n",
				cpu, (unsigned long long)c->mpidr);
			__atomic_store_n(&c->xcall_fn, NULL, __ATOMIC_RELEASE);
			ret = -1;
			break;
		}
		cpu_relax();
	}
	spin_unlock(&xcall_lock);
	return ret;
}

int smp_cpu_park(uint32_t cpu)
{
	struct cpu *c = &cpus[cpu];
	uint64_t dl;

	if (cpu >= smp_ncpus || cpu == this_cpu_id() || !smp_cpu_online(cpu))
		return -1;
	__atomic_store_n(&c->park, 1, __ATOMIC_RELEASE);
	smp_send_sgi(cpu, SGI_WAKE);
	dl = timer_count() + us_to_ticks(1000000);
	while (__atomic_load_n(&c->online, __ATOMIC_ACQUIRE) ||
	       psci_call(PSCI_AFFINITY_INFO, c->mpidr, 0, 0) != PSCI_AFF_OFF) {
		if (timer_count() >= dl)
			return -1;
		cpu_relax();
	}
	return 0;
}

int smp_cpu_restart(uint32_t cpu)
{
	struct cpu *c = &cpus[cpu];

	if (cpu >= smp_ncpus || smp_cpu_online(cpu))
		return -1;
	__atomic_store_n(&c->park, 0, __ATOMIC_RELEASE);
	c->xcall_fn = NULL;
	return smp_start(cpu) ? 0 : -1;
}
