/* SPDX-License-Identifier: MIT */
/*
 * main.c - the riscv64 kernel's boot sequence: device tree, console,
 * command line, heap, harts, PCI (bus numbers and BARs assigned by
 * ecam.c, then the shared kernel/common/pci.c reads the result), the raw MSI
 * probe (umsi.msiprobe), uMSI (the shared glue and drivers), the ready
 * line, the verdict.
 *
 * Output is for people and for tests/qemu/riscv64-*.t: plain lines, and
 * UMSI {...} JSON lines for what the tests check (kernel/README.md,
 * Output; kernel/arch/riscv64/README.md).
 */
#include "ecam.h"
#include "rv.h"
#include "aplic.h"
#include "pci.h"
#include "smp.h"
#include "umsi_glue.h"

extern char __kernel_end[];

/* QEMU's device tree is at most 1 MiB (hw/riscv/virt.c FDT_MAX_SIZE). */
#define RV_FDT_MAX		(2u << 20)

struct rv_platform rv_plat;
static struct fdt rv_fdt;
static struct ecam rv_ecam;

void rv_main(unsigned long hartid, const void *dtb);

unsigned int rv_probe_identities(void)
{
	uint32_t room;

	if (!rv_plat.imsic.present ||
	    rv_plat.imsic.num_ids < RV_PROBE_IDENTITY)
		return 0;
	room = rv_plat.imsic.num_ids - RV_PROBE_IDENTITY + 1;
	return rv_ncpus < room ? rv_ncpus : room;
}

/* Is @word one of the space-separated words of @args? */
static bool main_has_arg(const char *args, const char *word)
{
	size_t n = strlen(word);

	while (*args) {
		while (*args == ' ')
			args++;
		if (!strncmp(args, word, n) && (!args[n] || args[n] == ' '))
			return true;
		while (*args && *args != ' ')
			args++;
	}
	return false;
}

static void main_report_platform(void)
{
	const struct rv_platform *p = &rv_plat;
	unsigned int i;

	kprintf("dt: bootargs \"%s\"\n", p->bootargs);
	kprintf("dt: memory 0x%lx size 0x%lx, uart 0x%lx, timebase %lu Hz\n",
		(unsigned long)p->mem_base, (unsigned long)p->mem_size,
		(unsigned long)p->uart_base, (unsigned long)p->timebase_hz);
	if (p->imsic.present)
		kprintf("dt: S-level IMSIC 0x%lx size 0x%lx, num-ids %u, "
			"phandle %u\n", (unsigned long)p->imsic.base,
			(unsigned long)p->imsic.size, p->imsic.num_ids,
			p->imsic.phandle);
	else
		kprintf("dt: no S-level IMSIC (machine without aia=aplic-imsic?)\n");
	for (i = 0; i < p->nharts; i++)
		kprintf("dt: cpu %u hart %u, interrupt file 0x%lx\n", i,
			p->harts[i].hartid, (unsigned long)p->harts[i].imsic_file);
	if (p->pci.present)
		kprintf("dt: pci ECAM 0x%lx size 0x%lx, buses %u-%u, io 0x%lx+0x%lx, "
			"mem32 0x%lx+0x%lx, mem64 0x%lx+0x%lx, msi-parent %u\n",
			(unsigned long)p->pci.ecam_base,
			(unsigned long)p->pci.ecam_size, p->pci.bus_start,
			p->pci.bus_end, (unsigned long)p->pci.io.cpu_base,
			(unsigned long)p->pci.io.size,
			(unsigned long)p->pci.mem32.cpu_base,
			(unsigned long)p->pci.mem32.size,
			(unsigned long)p->pci.mem64.cpu_base,
			(unsigned long)p->pci.mem64.size, p->pci.msi_parent);
	kprintf("UMSI {\"event\":\"platform\",\"arch\":\"riscv64\",\"uart\":\"0x%lx\","
		"\"harts\":%u,\"imsic\":\"0x%lx\",\"num_ids\":%u,\"ecam\":\"0x%lx\","
		"\"mem32\":\"0x%lx\",\"mem64\":\"0x%lx\",\"msi_parent_is_imsic\":%s}\n",
		(unsigned long)p->uart_base, p->nharts,
		(unsigned long)p->imsic.base, p->imsic.num_ids,
		(unsigned long)p->pci.ecam_base,
		(unsigned long)p->pci.mem32.cpu_base,
		(unsigned long)p->pci.mem64.cpu_base,
		p->imsic.present && p->pci.msi_parent == p->imsic.phandle ?
		"true" : "false");
}

static void main_report_ready(uint32_t boot_hartid, bool umsi)
{
	char cpus[1536];
	size_t n = 0;
	unsigned int i;

	cpus[0] = 0;
	for (i = 0; i < rv_ncpus && n < sizeof(cpus); i++)
		n += (size_t)ksnprintf(cpus + n, sizeof(cpus) - n,
			"%s{\"cpu\":%u,\"hart\":%u,\"online\":%s,\"file\":\"0x%lx\","
			"\"imsic\":%s}", i ? "," : "", i, rv_cpus[i].hartid,
			smp_cpu_online(i) ? "true" : "false",
			(unsigned long)rv_cpus[i].imsic_file,
			rv_cpus[i].imsic_ok ? "true" : "false");
	kprintf("UMSI {\"event\":\"ready\",\"arch\":\"" KARCH_NAME "\","
		"\"boot_hart\":%u,\"cpus\":[%s],\"imsic\":\"0x%lx\","
		"\"num_ids\":%u,\"aplic\":\"0x%lx\",\"umsi\":%s,\"allocated\":%u}\n",
		boot_hartid, cpus, (unsigned long)rv_plat.imsic.base,
		rv_plat.imsic.num_ids,
		(unsigned long)(rv_plat.aplic.present ? rv_plat.aplic.base : 0),
		umsi ? "true" : "false", umsi_glue_allocated());
}

/*
 * The kernel heap: the RAM after the image up to the device tree (QEMU
 * puts it near the top of RAM; the kernel keeps reading it), or up to the
 * end of RAM when it lies elsewhere.
 */
static void main_heap(const void *dtb)
{
	uint64_t start = (uint64_t)(uintptr_t)__kernel_end;
	uint64_t end = rv_plat.mem_base + rv_plat.mem_size;
	uint64_t fdt = (uint64_t)(uintptr_t)dtb;

	if (fdt > start && fdt < end)
		end = fdt & ~0xfffull;
	mm_init(start, end, end);
	kprintf("heap: 0x%lx-0x%lx\n", (unsigned long)start,
		(unsigned long)end);
}

/*
 * The boot CPU after set-up with umsi.hold: wait for interrupts and serve
 * the live events queued by handlers (hot plug, surprise removal) in
 * process context. The check and the wait are one step: wfi wakes on a
 * pending interrupt with sstatus.SIE off, which is then taken.
 */
static __attribute__((noreturn)) void main_work_loop(void)
{
	for (;;) {
		local_irq_disable();
		if (!umsi_glue_work_pending()) {
			wfi();
			local_irq_enable();
			continue;
		}
		local_irq_enable();
		umsi_glue_work();
	}
}

void rv_main(unsigned long hartid, const void *dtb)
{
	unsigned int i, up = 0;
	int err, failed;
	bool ok, have_pci = false, ran_umsi = false;

	/* Until the UART is known, the SBI console prints. */
	err = fdt_init(&rv_fdt, dtb, RV_FDT_MAX);
	if (err)
		panic("device tree at %p: error %d", dtb, err);
	err = rv_platform_parse(&rv_fdt, &rv_plat);
	if (err)
		panic("device tree: no console or no cpus (%d)", err);
	console_use_uart(rv_plat.uart_base, rv_plat.uart_shift);
	kprintf("uMSI riscv64 kernel: boot hart %lu, device tree at %p "
		"(%u bytes)\n", hartid, dtb, rv_fdt.size);
	main_report_platform();

	cmdline_set(rv_plat.bootargs);
	main_heap(dtb);

	smp_boot((uint32_t)hartid, main_has_arg(rv_plat.bootargs,
						"umsi.riscv_stray"), dtb);
	for (i = 0; i < rv_ncpus; i++)
		up += rv_cpus[i].up ? 1 : 0;

	ok = up == rv_ncpus;
	/* The shared PCI code's reads, for the hot-plug ports' room. */
	pci_set_ecam(rv_plat.pci.ecam_base, (uint8_t)rv_plat.pci.bus_start,
		     (uint8_t)rv_plat.pci.bus_end);
	if (ecam_enumerate(&rv_ecam, &rv_plat) == 0) {
		if (cmdline_flag("umsi.msiprobe")) {
			rv_probe_active = true;
			failed = rv_msi_probe(&rv_ecam);
			rv_probe_active = false;
			if (failed > 0)
				ok = false;
		}
		/* INTx: the S-level APLIC forwards the lines as MSIs. */
		if (rv_plat.aplic.present)
			aplic_init(rv_plat.aplic.base, rv_plat.aplic.num_sources);
		/* The shared PCI code reads what ecam.c assigned. */
		pci_set_ecam(rv_plat.pci.ecam_base, (uint8_t)rv_plat.pci.bus_start,
			     (uint8_t)rv_plat.pci.bus_end);
		pci_bring_up();
		have_pci = true;
	} else {
		kprintf("pci: none (no usable pci-host-ecam-generic node; dt: says why)\n");
	}
	if (have_pci && !cmdline_flag("umsi.nolib")) {
		umsi_glue_run();
		ran_umsi = true;
		if (umsi_glue_failed())
			ok = false;
	}
	main_report_ready((uint32_t)hartid, ran_umsi);
	if (cmdline_flag("umsi.hold")) {
		kprintf("umsi-kernel: holding (umsi.hold)\n");
		main_work_loop();
	}
	for (i = 0; i < rv_ncpus; i++)
		if (rv_cpus[i].spurious)
			kprintf("cpu %u: %u spurious traps\n", i,
				rv_cpus[i].spurious);
	kprintf("UMSI {\"event\":\"done\",\"arch\":\"riscv64\",\"cpus_up\":%u,"
		"\"ok\":%s}\n", up, ok ? "true" : "false");
	rv_exit(ok ? RV_EXIT_PASS : RV_EXIT_FAIL);
}
