/* SPDX-License-Identifier: MIT */
/*
 * smp.c - every hart up through SBI HSM hart_start (SBI spec 9.2).
 *
 * Each CPU gets its record (struct rv_cpu, in tp), its stack, the trap
 * vector (start.S) and its S-level interrupt file enabled with the probe
 * identities, supervisor external interrupts on; then it says it is up
 * and waits for interrupts.
 */
#include "rv.h"
#include "sbi.h"

#define SMP_START_TIMEOUT_US	1000000

struct rv_cpu rv_cpus[RV_MAX_HARTS];
unsigned int rv_ncpus;

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

static uint8_t smp_stacks[RV_MAX_HARTS][RV_STACK_SIZE]
	__attribute__((aligned(16)));

extern char rv_secondary_entry[];
extern char _start[];
void rv_secondary_main(unsigned long hartid, struct rv_cpu *c,
		       unsigned long stray);

/* This CPU's interrupt file and the probe identities; then SEIE on. */
void rv_cpu_irq_setup(void)
{
	struct rv_cpu *c = this_cpu();
	unsigned int i;

	if (!rv_plat.imsic.present || !c->imsic_file)
		return;
	c->imsic_ok = imsic_local_init(rv_plat.imsic.num_ids);
	for (i = 0; i < rv_probe_identities(); i++)
		imsic_local_enable(RV_PROBE_IDENTITY + i);
	csr_set_sie(SIE_SEIE);
	local_irq_enable();
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
	for (;;)
		wfi();
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
	rv_cpu_irq_setup();
	smp_report_up(boot, " (boot hart)");
	boot->up = 1;
	for (i = 0; i < rv_ncpus; i++)
		if (&rv_cpus[i] != boot)
			smp_start(&rv_cpus[i], via_start, dtb);
}
