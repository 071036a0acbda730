/* SPDX-License-Identifier: MIT */
/*
 * main.c - the boot sequence of the reference kernel.
 */
#include "kernel.h"
#include "acpi.h"
#include "apic.h"
#include "iommu.h"
#include "ioapic.h"
#include "pci.h"
#include "selftest.h"
#include "smp.h"
#include "umsi_glue.h"

#define MB_BOOT_MAGIC   0x2badb002
#define MB_INFO_MEMORY  (1u << 0)
#define MB_INFO_CMDLINE (1u << 2)

extern char __kernel_end[];

void kmain(uint32_t magic, uint32_t mbi_addr);

/* Each CPU reports its own APIC ID, through a cross-call. */
static void report_self(void *arg)
{
	uint32_t *out = arg;

	out[0] = this_cpu_id();
	out[1] = apic_id();
}

static void check_cpus(void)
{
	uint32_t online = 0;

	for (uint32_t cpu = 0; cpu < smp_ncpus; cpu++) {
		uint32_t got[2] = { ~0u, ~0u };

		if (!smp_cpu_online(cpu)) {
			kprintf("cpu %u apic_id %u offline\n", cpu,
				smp_cpu_apic_id(cpu));
			continue;
		}
		online++;
		smp_cross_call(cpu, report_self, got);
		kprintf("cpu %u apic_id %u online xcall cpu %u apic_id %u %s\n",
			cpu, smp_cpu_apic_id(cpu), got[0], got[1],
			got[0] == cpu && got[1] == smp_cpu_apic_id(cpu) ?
			"ok" : "MISMATCH");
	}
	kprintf("smp: %u of %u CPUs online\n", online, smp_ncpus);
}

/* The ready line, built whole and written in one piece. */
static void print_ready(void)
{
	static char line[4096];
	size_t len = 0;

	len += (size_t)ksnprintf(line + len, sizeof(line) - len,
				 "UMSI {\"event\":\"ready\",\"arch\":\"" KARCH_NAME
				 "\",\"cpus\":[");
	for (uint32_t cpu = 0; cpu < smp_ncpus && len < sizeof(line); cpu++)
		len += (size_t)ksnprintf(line + len, sizeof(line) - len,
					 "%s{\"cpu\":%u,\"apic_id\":%u,\"online\":%s}",
					 cpu ? "," : "", cpu, smp_cpu_apic_id(cpu),
					 smp_cpu_online(cpu) ? "true" : "false");
	if (len < sizeof(line))
		ksnprintf(line + len, sizeof(line) - len,
			  "],\"apic\":\"%s\",\"remap\":%s%s%s,\"allocated\":%u}\n",
			  apic_mode() == APIC_X2APIC ? "x2apic" : "xapic",
			  iommu_kind() ? "\"" : "",
			  iommu_kind() ? iommu_kind() : "false",
			  iommu_kind() ? "\"" : "",
			  umsi_glue_allocated());
	console_write(line);
}

/*
 * The boot CPU after set-up: halt until an interrupt, and serve the live
 * events it queued (hot plug, surprise removal) in process context. The
 * check and the halt are one step with interrupts off (sti's shadow), so
 * a wake-up between them is not lost. Every pass also reports the
 * remapping unit's recorded faults (its fault event wakes the loop).
 */
static __attribute__((noreturn)) void work_loop(void)
{
	for (;;) {
		iommu_poll_faults();
		irq_disable();
		if (!umsi_glue_work_pending()) {
			irq_enable_and_halt();
			continue;
		}
		irq_enable();
		umsi_glue_work();
	}
}

void kmain(uint32_t magic, uint32_t mbi_addr)
{
	const uint32_t *mbi = (const uint32_t *)(uint64_t)mbi_addr;
	uint64_t ram_top = 16ull << 20;
	char param[32];
	const char *why = NULL;
	struct percpu *bsp;

	serial_init();
	kputs_raw("\numsi-kernel: entered long mode\n");
	if (magic != MB_BOOT_MAGIC)
		panic("not started by a multiboot loader (eax 0x%x)", magic);
	cmdline_init(mbi[0] & MB_INFO_CMDLINE ?
		     (const char *)(uint64_t)mbi[4] : "");
	if (mbi[0] & MB_INFO_MEMORY)
		ram_top = (1ull << 20) + ((uint64_t)mbi[2] << 10);
	/* The multiboot info is not used after this point; the heap may
	 * reuse the memory after the kernel image where QEMU put it. */
	mm_init((uint64_t)__kernel_end, ram_top, ram_top);
	kprintf("umsi-kernel: cmdline \"%s\", RAM below 0x%lx\n",
		cmdline_get(), ram_top);

	idt_init();
	bsp = smp_bsp_early();
	cpu_setup(bsp);

	acpi_init();
	kprintf("acpi: rsdp rev %u, %u CPUs (%u disabled), %u IO-APICs, "
		"ecam 0x%lx buses %u-%u, pm timer 0x%x%s, boot arch 0x%x%s\n",
		acpi.revision, acpi.ncpus, acpi.ncpus_disabled, acpi.nioapics,
		acpi.ecam_base, acpi.ecam_bus_start, acpi.ecam_bus_end,
		acpi.pm_timer_port, acpi.pm_timer_32bit ? " (32-bit)" : "",
		acpi.iapc_boot_arch,
		acpi.msi_not_supported ? " (MSI not supported)" : "");
	for (uint32_t i = 0; i < acpi.nioapics; i++)
		kprintf("acpi: ioapic id %u at 0x%lx gsi base %u\n",
			acpi.ioapic[i].id, acpi.ioapic[i].addr,
			acpi.ioapic[i].gsi_base);
	for (uint32_t i = 0; i < acpi.nisos; i++)
		kprintf("acpi: override bus %u irq %u -> gsi %u flags 0x%x\n",
			acpi.iso[i].bus, acpi.iso[i].source, acpi.iso[i].gsi,
			acpi.iso[i].flags);

	if (apic_choose_mode(cmdline_value("umsi.apic", param, sizeof(param)),
			     &why)) {
		kprintf("apic: %s\n", why);
		kprintf("UMSI {\"event\":\"error\",\"reason\":\"%s\"}\n", why);
		kernel_exit(KERNEL_EXIT_FAIL);
	}
	pic_disable();
	apic_cpu_enable(true);
	smp_bsp_init(bsp);
	kprintf("apic: %s mode, BSP is cpu %u apic_id %u, version 0x%x\n",
		apic_mode() == APIC_X2APIC ? "x2apic" : "xapic", bsp->cpu,
		bsp->apic_id, apic_version());

	time_init(acpi.pm_timer_port, acpi.pm_timer_32bit);
	ioapic_init();
	irq_enable();
	smp_boot_aps();
	check_cpus();

	pci_init();
	pci_bring_up();
	iommu_init();

	int selftest_bad = 0;

	if (cmdline_value("umsi.selftest", param, sizeof(param))) {
		/* A self-test replaces the uMSI set-up; with umsi.hold the
		 * machine still stops at the ready line for the monitor. */
		selftest_bad = selftest_run(param);
		if (!cmdline_flag("umsi.hold"))
			kernel_exit(selftest_bad ? KERNEL_EXIT_FAIL : KERNEL_EXIT_PASS);
	} else {
		umsi_glue_run();
	}
	iommu_setup_done();

	print_ready();

	if (cmdline_flag("umsi.hold")) {
		kprintf("umsi-kernel: holding (umsi.hold)\n");
		work_loop();
	}
	kernel_exit(umsi_glue_failed() || selftest_bad ?
		    KERNEL_EXIT_FAIL : KERNEL_EXIT_PASS);
}
