/* SPDX-License-Identifier: MIT */
/*
 * smp.c - every hart up through SBI HSM hart_start (SBI spec 9.2).
 *
 * Each CPU gets its record (struct rv_cpu, in tp), its stack, the trap
 * vector (start.S) and its S-level interrupt file enabled with every
 * identity (eie), eithreshold 0 and eidelivery 1, supervisor external and
 * software interrupts on; then it says it is up and waits for interrupts.
 *
 * The kernel's smp.h on riscv64: cross-calls by SBI IPI (a supervisor
 * software interrupt, sip.SSIP) and a mailbox in the target's record;
 * a CPU leaves (smp_cpu_park) by stopping itself through SBI HSM
 * hart_stop from its idle loop, and comes back (smp_cpu_restart) through
 * hart_start, its file reset and enabled again as at boot.
 */
#include "rv.h"
#include "sbi.h"
#include "smp.h"

#define SMP_START_TIMEOUT_US	1000000

struct rv_cpu rv_cpus[RV_MAX_HARTS];
unsigned int rv_ncpus;
uint32_t smp_ncpus;		/* smp.h: the harts of the device tree */
uint32_t smp_bsp_cpu;
static struct spinlock xcall_lock;

/*
 * The record of the hart being started, for a hart that enters at
 * _start instead of rv_secondary_entry (start.S says when). In .data:
 * such a hart may read it before the boot hart has zeroed .bss.
 */
struct rv_cpu *rv_starting_cpu __attribute__((section(".data")));

_Static_assert(offsetof(struct rv_cpu, stack_top) == 0,
	       "start.S loads the stack from offset 0");
_Static_assert(offsetof(struct rv_cpu, hartid) == 12,
	       "start.S compares the hart ID at offset 12");
_Static_assert(offsetof(struct rv_cpu, cpu) == RV_CPU_NUMBER_OFFSET,
	       "this_cpu_id() (karch.h) loads the CPU number at offset 8");

static uint8_t smp_stacks[RV_MAX_HARTS][RV_STACK_SIZE]
	__attribute__((aligned(16)));

extern char rv_secondary_entry[];
extern char _start[];
void rv_secondary_main(unsigned long hartid, struct rv_cpu *c,
		       unsigned long stray);

/*
 * This CPU's interrupt file: reset, every identity enabled, threshold 0,
 * delivery on; then SEIE, and SSIE for cross-calls, and interrupts on.
 */
void rv_cpu_irq_setup(void)
{
	struct rv_cpu *c = this_cpu();

	csr_clear_sip(1ul << IRQ_S_SOFT);
	csr_set_sie(1ul << IRQ_S_SOFT);
	if (rv_plat.imsic.present && c->imsic_file) {
		c->imsic_ok = imsic_local_init(rv_plat.imsic.num_ids);
		imsic_local_enable_all(rv_plat.imsic.num_ids);
		csr_set_sie(SIE_SEIE);
	}
	local_irq_enable();
}

/* smp_cpu_park(): this CPU stops for good, until hart_start. */
static void __attribute__((noreturn)) smp_park_self(struct rv_cpu *c)
{
	long err;

	local_irq_disable();
	csr_write_sie(0);
	if (c->imsic_ok)
		imsic_reg_write(0x70, 0);	/* eidelivery off */
	__atomic_store_n(&c->up, 0, __ATOMIC_RELEASE);
	err = sbi_hart_stop();
	panic("cpu %u hart %u: hart_stop failed (SBI error %ld)", c->cpu,
	      c->hartid, err);
}

/*
 * The idle loop: wait for interrupts (wfi wakes on a pending enabled one
 * even with sstatus.SIE off, so the park check and the wait are one
 * step), and stop when asked.
 */
static void __attribute__((noreturn)) smp_idle(struct rv_cpu *c)
{
	for (;;) {
		local_irq_disable();
		if (__atomic_load_n(&c->park, __ATOMIC_ACQUIRE))
			smp_park_self(c);
		wfi();
		local_irq_enable();
	}
}

/* A supervisor software interrupt: a cross-call, or just a wake-up. */
void smp_soft_interrupt(void)
{
	struct rv_cpu *c = this_cpu();
	void (*fn)(void *);

	/* Cleared first: an IPI sent after the mailbox is read is kept. */
	csr_clear_sip(1ul << IRQ_S_SOFT);
	c->soft_irqs++;
	fn = __atomic_exchange_n(&c->xcall_fn, NULL, __ATOMIC_ACQ_REL);
	if (fn) {
		fn(c->xcall_arg);
		__atomic_store_n(&c->xcall_done, 1, __ATOMIC_RELEASE);
	}
}

bool smp_cpu_online(uint32_t cpu)
{
	return cpu < smp_ncpus &&
	       __atomic_load_n(&rv_cpus[cpu].up, __ATOMIC_ACQUIRE);
}

uint32_t smp_cpu_hwid(uint32_t cpu)
{
	return cpu < smp_ncpus ? rv_cpus[cpu].hartid : ~0u;
}

int smp_cross_call(uint32_t cpu, void (*fn)(void *), void *arg)
{
	struct rv_cpu *c;
	uint64_t deadline;
	unsigned long flags;
	int ret = 0;

	if (!smp_cpu_online(cpu))
		return -1;
	if (cpu == this_cpu_id()) {
		flags = local_irq_save();
		fn(arg);
		local_irq_restore(flags);
		return 0;
	}
	c = &rv_cpus[cpu];
	spin_lock(&xcall_lock);	/* process context: one call at a time */
	c->xcall_arg = arg;
	__atomic_store_n(&c->xcall_done, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&c->xcall_fn, fn, __ATOMIC_RELEASE);
	if (sbi_send_ipi_hart(c->hartid)) {
		__atomic_store_n(&c->xcall_fn, NULL, __ATOMIC_RELEASE);
		spin_unlock(&xcall_lock);
		return -1;
	}
	deadline = rv_time_us() + 1000000;
	while (!__atomic_load_n(&c->xcall_done, __ATOMIC_ACQUIRE)) {
		if (rv_time_us() > deadline) {
			kprintf("smp: cross-call to cpu %u hart %u timed out\n",
				cpu, c->hartid);
			ret = -1;
			break;
		}
		cpu_relax();
	}
	spin_unlock(&xcall_lock);
	return ret;
}


static void smp_report_up(const struct rv_cpu *c, const char *what)
{
	kprintf("cpu %u hart %u up%s, imsic file 0x%lx %s\n", c->cpu,
		c->hartid, what, (unsigned long)c->imsic_file,
		!c->imsic_file ? "absent" :
		c->imsic_ok ? "delivering" : "NOT delivering");
}

/* @stray: the hart came in at _start and was adopted (start.S). */
void rv_secondary_main(unsigned long hartid, struct rv_cpu *c,
		       unsigned long stray)
{
	(void)hartid;
	rv_cpu_irq_setup();
	smp_report_up(c, stray ? " (entered at _start, adopted)" : "");
	__atomic_store_n(&c->up, 1, __ATOMIC_RELEASE);
	smp_idle(c);
}

/*
 * @via_start: start the hart at _start with a1 = the device tree, as the
 * OpenSBI race does (start.S), to exercise the adoption path.
 */
static bool smp_start(struct rv_cpu *c, bool via_start, const void *dtb)
{
	uint64_t deadline;
	long err;

	/* Published first: a hart that strays into _start looks here. */
	__atomic_store_n(&rv_starting_cpu, c, __ATOMIC_RELEASE);
	if (via_start)
		err = sbi_hart_start(c->hartid, (unsigned long)_start,
				     (unsigned long)dtb);
	else
		err = sbi_hart_start(c->hartid,
				     (unsigned long)rv_secondary_entry,
				     (unsigned long)c);
	if (err == SBI_ERR_ALREADY_AVAILABLE) {
		/* It is already running our code, waiting at _start. */
		kprintf("cpu %u hart %u: already started; adopting it\n",
			c->cpu, c->hartid);
	} else if (err) {
		kprintf("cpu %u hart %u: hart_start failed (SBI error %ld, "
			"status %ld)\n", c->cpu, c->hartid, err,
			sbi_hart_status(c->hartid));
		return false;
	}
	deadline = rv_time_us() + SMP_START_TIMEOUT_US;
	while (!__atomic_load_n(&c->up, __ATOMIC_ACQUIRE)) {
		if (rv_time_us() > deadline) {
			kprintf("cpu %u hart %u: not up after %u us\n",
				c->cpu, c->hartid, SMP_START_TIMEOUT_US);
			return false;
		}
		cpu_relax();
	}
	return true;
}

/**
 * smp_boot - give every hart of the device tree a record and start it
 * @boot_hartid: the hart running this (a0 at entry)
 * @via_start: start them at _start, as strays (umsi.riscv_stray)
 * @dtb: the device tree, for @via_start
 *
 * Context: boot hart, once. Panics when the boot hart is not in the
 * device tree; a hart that does not start is reported and left out.
 */
void smp_boot(uint32_t boot_hartid, bool via_start, const void *dtb)
{
	struct rv_cpu *boot = NULL;
	unsigned int i;

	rv_ncpus = rv_plat.nharts;
	smp_ncpus = rv_ncpus;
	for (i = 0; i < rv_ncpus; i++) {
		struct rv_cpu *c = &rv_cpus[i];

		c->cpu = i;
		c->hartid = rv_plat.harts[i].hartid;
		c->imsic_file = rv_plat.harts[i].imsic_file;
		c->stack_top = (uint64_t)(uintptr_t)&smp_stacks[i][RV_STACK_SIZE];
		if (c->hartid == boot_hartid)
			boot = c;
	}
	if (!boot)
		panic("boot hart %u is not in the device tree", boot_hartid);
	__asm__ volatile("mv tp, %0" : : "r"(boot));
	smp_bsp_cpu = boot->cpu;
	rv_cpu_irq_setup();
	smp_report_up(boot, " (boot hart)");
	boot->up = 1;
	for (i = 0; i < rv_ncpus; i++)
		if (&rv_cpus[i] != boot)
			smp_start(&rv_cpus[i], via_start, dtb);
}

int smp_cpu_park(uint32_t cpu)
{
	struct rv_cpu *c = &rv_cpus[cpu];
	uint64_t deadline;

	if (cpu >= smp_ncpus || cpu == this_cpu_id() || !smp_cpu_online(cpu))
		return -1;
	__atomic_store_n(&c->park, 1, __ATOMIC_RELEASE);
	sbi_send_ipi_hart(c->hartid);
	deadline = rv_time_us() + 1000000;
	while (__atomic_load_n(&c->up, __ATOMIC_ACQUIRE) ||
	       sbi_hart_status(c->hartid) != SBI_HSM_STOPPED) {
		if (rv_time_us() > deadline)
			return -1;
		cpu_relax();
	}
	return 0;
}

int smp_cpu_restart(uint32_t cpu)
{
	struct rv_cpu *c = &rv_cpus[cpu];

	if (cpu >= smp_ncpus || smp_cpu_online(cpu))
		return -1;
	__atomic_store_n(&c->park, 0, __ATOMIC_RELEASE);
	c->xcall_fn = NULL;
	return smp_start(c, false, NULL) ? 0 : -1;
}
