/* SPDX-License-Identifier: MIT */
/*
 * glue_cpu.c - CPUs leaving and coming back (umsi.offline=, umsi.online=).
 *
 * Offline, in the order a kernel must keep: umsi_cpu_offline() while the
 * CPU still takes interrupts and cross-calls (uMSI asks it whether a
 * vector it leaves is pending), then the CPU stops for good (smp.c: its
 * local APIC software-disabled, halted with interrupts off). Online: the
 * CPU is started again from reset (INIT, STARTUP) and takes interrupts,
 * then umsi_cpu_online() makes its vectors usable and restarts the
 * managed IRQs that were shut down because every CPU of their mask had
 * left.
 *
 * After each change every claimed device fires again (umsi.fire=N) and
 * every device line is printed again. A vector whose managed IRQ is shut
 * down is not fired as usual: one event is raised into it and must not
 * arrive (the device holds it pending, masked); when a CPU of its mask
 * comes back, that event must arrive there.
 */
#include <umsi/irq.h>
#include <umsi/pci.h>

#include "kernel.h"
#include "drivers/drivers.h"
#include "glue.h"
#include "smp.h"

/* IRQs targeting @cpu: all, and managed ones. */
static void count_irqs(uint32_t cpu, uint32_t *all, uint32_t *managed)
{
	struct umsi_system *sys = kernel_umsi_system();
	struct umsi_irq_info ii;

	*all = *managed = 0;
	for (int irq = umsi_irq_next(sys, 0); irq >= 0;
	     irq = umsi_irq_next(sys, (uint32_t)irq + 1)) {
		if (umsi_irq_get_info(sys, (uint32_t)irq, &ii) || ii.cpu != cpu)
			continue;
		(*all)++;
		*managed += ii.managed;
	}
}

static void cpu_line(uint32_t cpu, bool online, const char *err,
		     uint32_t irqs, uint32_t managed)
{
	kprintf("UMSI {\"event\":\"cpu\",\"cpu\":%u,\"" KARCH_HWID_KEY "\":%u,\"online\":%s,"
		"%s%s%s\"irqs\":%u,\"managed\":%u,\"allocated\":%u}\n", cpu,
		smp_cpu_hwid(cpu), online ? "true" : "false",
		err ? "\"error\":\"" : "", err ? err : "", err ? "\"," : "",
		irqs, managed, glue_allocated());
}

static void cpu_down(uint32_t cpu)
{
	struct umsi_system *sys = kernel_umsi_system();
	uint32_t irqs, managed;
	int err;

	count_irqs(cpu, &irqs, &managed);
	if (cpu >= smp_ncpus || cpu == smp_bsp_cpu || !smp_cpu_online(cpu)) {
		cpu_line(cpu, smp_cpu_online(cpu),
			 cpu == smp_bsp_cpu ? "boot_cpu" : "not_online", irqs, managed);
		return;
	}
	/* -UMSI_EAGAIN: an IRQ is being set up or moved; try again. */
	for (int tries = 0; ; tries++) {
		err = umsi_cpu_offline(sys, cpu);
		if (err != -UMSI_EAGAIN || tries >= 1000)
			break;
		udelay(100);
	}
	if (err) {
		/* EBUSY (an IRQ that cannot move: a multi-message MSI block,
		 * the last CPU) and ENOSPC (no room elsewhere) are answers:
		 * the CPU stays online with everything as it was. */
		cpu_line(cpu, true, umsi_strerror(err), irqs, managed);
		if (err != -UMSI_EBUSY && err != -UMSI_ENOSPC)
			glue_fail();
		return;
	}
	if (smp_cpu_park(cpu)) {
		cpu_line(cpu, true, "park_failed", irqs, managed);
		glue_fail();
		return;
	}
	cpu_line(cpu, false, NULL, irqs, managed);
}

static void cpu_up(uint32_t cpu)
{
	struct umsi_system *sys = kernel_umsi_system();
	uint32_t irqs, managed;
	int err;

	if (smp_cpu_restart(cpu)) {
		cpu_line(cpu, smp_cpu_online(cpu), "start_failed", 0, 0);
		glue_fail();
		return;
	}
	err = umsi_cpu_online(sys, cpu);
	count_irqs(cpu, &irqs, &managed);
	cpu_line(cpu, err ? false : true, err ? umsi_strerror(err) : NULL,
		 irqs, managed);
	if (err)
		glue_fail();
}

/* Apply @fn to every CPU number of the comma list @list. */
static void each_cpu(const char *list, void (*fn)(uint32_t cpu))
{
	const char *p = list;

	while (*p) {
		uint64_t cpu;
		const char *end;

		if (!kstrtou64(p, &end, 0, &cpu) || (*end && *end != ',')) {
			kprintf("UMSI {\"event\":\"error\",\"reason\":\"bad cpu list: %s\"}\n",
				list);
			glue_fail();
			return;
		}
		fn((uint32_t)cpu);
		p = *end ? end + 1 : end;
	}
}

void glue_cpu_events(struct glue *gl)
{
	char off[64], on[64];
	bool have_off = cmdline_value("umsi.offline", off, sizeof(off)) && off[0];
	bool have_on = cmdline_value("umsi.online", on, sizeof(on)) && on[0];

	if (have_off) {
		each_cpu(off, cpu_down);
		glue_fire_all(gl);
		glue_report_all(gl);
	}
	if (have_on) {
		glue_step("online");
		each_cpu(on, cpu_up);
		glue_fire_all(gl);
		glue_report_all(gl);
	}
}
