// SPDX-License-Identifier: MIT
/*
 * main.c - the arm64 reference kernel: device tree, GICv3 on every CPU
 * (PSCI CPU_ON), LPIs through the ITS, PCI enumeration, and an MSI probe
 * that owes nothing to the uMSI library (msiprobe.c).
 */
#include "console.h"
#include "kernel.h"

/* The most of a device tree we are willing to read. */
#define DTB_MAX_SIZE	(2u << 20)
/* PSCI 0.2 function IDs (ARM DEN 0022, 5.1). */
#define PSCI_SYSTEM_OFF	0x84000008u
#define PSCI_SUCCESS	0
#define PSCI_ALREADY_ON	-4

struct platform plat;
struct cpu cpus[ARM64_MAX_CPUS];
struct gic gic;
struct its its;
struct pci_host pci;
void (*volatile irq_hook)(uint32_t intid);

/* Stacks for every CPU; boot.S puts CPU n's stack pointer at the end of n. */
__attribute__((aligned(16))) uint8_t cpu_stacks[ARM64_MAX_CPUS][ARM64_STACK_SIZE];

extern uint8_t _end[];
extern void secondary_entry(void);
extern void arm64_halt(void) __attribute__((noreturn));

static struct fdt fdt;
static struct spinlock heap_lock;
static uint64_t heap_next, heap_end;

void klog(const char *fmt, ...)
{
	char line[512];
	va_list ap;

	va_start(ap, fmt);
	kvsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	kprintf("%s", line);
}

unsigned this_cpu(void)
{
	return (unsigned)read_sysreg(tpidr_el1);
}

/*
 * Zeroed, aligned, physically contiguous memory that is never freed (the
 * GIC and ITS tables). Any CPU may call it.
 */
void *kalloc(uint64_t size, uint64_t align)
{
	uint64_t a;
	void *p = NULL;

	spin_lock(&heap_lock);
	a = (heap_next + align - 1) & ~(align - 1);
	if (a >= heap_next && a <= heap_end && size <= heap_end - a) {
		heap_next = a + size;
		p = (void *)(uintptr_t)a;
	}
	spin_unlock(&heap_lock);
	if (p)
		memset(p, 0, size);
	else
		kprintf("kalloc: no room for 0x%llx bytes\n",
			(unsigned long long)size);
	return p;
}

static int64_t psci_call(uint64_t fn, uint64_t a1, uint64_t a2, uint64_t a3)
{
	register uint64_t x0 __asm__("x0") = fn;
	register uint64_t x1 __asm__("x1") = a1;
	register uint64_t x2 __asm__("x2") = a2;
	register uint64_t x3 __asm__("x3") = a3;

	/* SMCCC: x0-x17 may change. */
	if (plat.psci_hvc)
		__asm__ volatile("hvc #0" : "+r"(x0), "+r"(x1), "+r"(x2), "+r"(x3)
				 :: "x4", "x5", "x6", "x7", "x8", "x9", "x10",
				 "x11", "x12", "x13", "x14", "x15", "x16", "x17",
				 "memory");
	else
		__asm__ volatile("smc #0" : "+r"(x0), "+r"(x1), "+r"(x2), "+r"(x3)
				 :: "x4", "x5", "x6", "x7", "x8", "x9", "x10",
				 "x11", "x12", "x13", "x14", "x15", "x16", "x17",
				 "memory");
	return (int64_t)x0;
}

static void __attribute__((noreturn)) system_off(void)
{
	psci_call(PSCI_SYSTEM_OFF, 0, 0, 0);
	arm64_halt();
}

void arm64_exception(uint64_t kind, uint64_t esr, uint64_t elr, uint64_t far)
{
	kprintf("EXCEPTION cpu %u: vector %llu ESR_EL1 0x%llx ELR_EL1 0x%llx FAR_EL1 0x%llx\n",
		this_cpu(), (unsigned long long)kind, (unsigned long long)esr,
		(unsigned long long)elr, (unsigned long long)far);
	kprintf("UMSI {\"event\":\"done\",\"arch\":\"arm64\",\"ok\":false}\n");
	system_off();
}

/*
 * IRQ from the GIC (Group 1, system register interface): acknowledge
 * through ICC_IAR1_EL1 until it says spurious, let the device hook quiet
 * the source, then EOI through ICC_EOIR1_EL1 (EOImode 0: priority drop
 * and deactivation). Nothing is printed here: the CPU prints its
 * acknowledgements outside interrupt context (cpu_report_irqs).
 */
void arm64_irq(void)
{
	struct cpu *c = &cpus[this_cpu()];
	uint32_t intid;
	void (*hook)(uint32_t);

	for (;;) {
		intid = (uint32_t)read_sysreg(ICC_IAR1_EL1) & 0xffffff;
		if (intid >= 1020 && intid <= GIC_INTID_SPURIOUS)
			break;
		hook = irq_hook;
		if (hook)
			hook(intid);
		c->last_intid = intid;
		__atomic_add_fetch(&c->irqs, 1, __ATOMIC_RELEASE);
		write_sysreg(ICC_EOIR1_EL1, intid);
		isb();
	}
}

void cpu_report_irqs(unsigned cpu)
{
	struct cpu *c = &cpus[cpu];
	uint32_t n = __atomic_load_n(&c->irqs, __ATOMIC_ACQUIRE);

	if (n == c->reported)
		return;
	kprintf("cpu %u mpidr 0x%llx: ICC_IAR1_EL1 acknowledged INTID %u (%s), EOIR1 written; %u so far\n",
		cpu, (unsigned long long)cpu_mpidr(), c->last_intid,
		c->last_intid >= GIC_LPI_BASE ? "LPI" : "not an LPI", n);
	__atomic_store_n(&c->reported, n, __ATOMIC_RELEASE);
}

/* Redistributor, LPIs and CPU interface of the calling CPU. */
static int cpu_gic_up(unsigned n)
{
	struct cpu *c = &cpus[n];

	write_sysreg(tpidr_el1, n);
	c->mpidr = cpu_mpidr();
	if (gic_rdist_find(&gic, c->mpidr, &c->rd)) {
		kprintf("cpu %u mpidr 0x%llx: no redistributor\n", n,
			(unsigned long long)c->mpidr);
		return -1;
	}
	if (gic_cpu_init(&gic, &c->rd)) {
		kprintf("cpu %u: redistributor 0x%llx refuses LPIs\n", n,
			(unsigned long long)c->rd.base);
		return -1;
	}
	kprintf("cpu %u mpidr 0x%llx up: redistributor 0x%llx processor %u, LPIs on (pending table 0x%llx), ICC_SRE_EL1 0x%llx ICC_PMR_EL1 0x%llx ICC_IGRPEN1_EL1 %llu\n",
		n, (unsigned long long)c->mpidr, (unsigned long long)c->rd.base,
		c->rd.procnum, (unsigned long long)c->rd.pend_table,
		(unsigned long long)read_sysreg(ICC_SRE_EL1),
		(unsigned long long)read_sysreg(ICC_PMR_EL1),
		(unsigned long long)read_sysreg(ICC_IGRPEN1_EL1));
	__atomic_store_n(&c->online, true, __ATOMIC_RELEASE);
	return 0;
}

/* A secondary CPU: set up, then sleep and report what it acknowledged. */
void secondary_main(uint64_t n)
{
	if (cpu_gic_up((unsigned)n))
		return;
	for (;;) {
		/* Checked with IRQs masked, so no wake-up is slept through. */
		irq_disable();
		if (cpus[n].irqs == cpus[n].reported)
			__asm__ volatile("wfi" ::: "memory");
		irq_enable();
		isb();
		cpu_report_irqs((unsigned)n);
	}
}

static unsigned smp_boot(void)
{
	unsigned n, up = 1;
	int64_t r;
	uint64_t dl;

	for (n = 1; n < plat.ncpus; n++) {
		r = psci_call(plat.psci_cpu_on, plat.mpidr[n],
			      (uintptr_t)secondary_entry, n);
		if (r != PSCI_SUCCESS && r != PSCI_ALREADY_ON) {
			kprintf("cpu %u mpidr 0x%llx: PSCI CPU_ON returned %lld\n",
				n, (unsigned long long)plat.mpidr[n], (long long)r);
			continue;
		}
		dl = deadline_us(2000000);
		while (!__atomic_load_n(&cpus[n].online, __ATOMIC_ACQUIRE) &&
		       !deadline_passed(dl))
			cpu_relax();
		if (cpus[n].online)
			up++;
		else
			kprintf("cpu %u mpidr 0x%llx: did not come up\n", n,
				(unsigned long long)plat.mpidr[n]);
	}
	return up;
}

static void print_ready(void)
{
	char buf[1024];
	int len, n;
	unsigned i;
	bool first = true;

	len = ksnprintf(buf, sizeof(buf),
			"UMSI {\"event\":\"ready\",\"arch\":\"arm64\",\"cpus\":[");
	for (i = 0; i < plat.ncpus && len < (int)sizeof(buf); i++) {
		if (!cpus[i].online)
			continue;
		n = ksnprintf(buf + len, sizeof(buf) - (size_t)len,
			      "%s{\"cpu\":%u,\"mpidr\":%llu}",
			      first ? "" : ",", i,
			      (unsigned long long)cpus[i].mpidr);
		len += n;
		first = false;
	}
	kprintf("%s]}\n", buf);
}

/* Whether the boot arguments hold @word as a whole space-separated word. */
static bool bootarg_has(const char *args, const char *word)
{
	size_t n = strlen(word);

	while (*args) {
		while (*args == ' ')
			args++;
		if (!strncmp(args, word, n) && (args[n] == ' ' || !args[n]))
			return true;
		while (*args && *args != ' ')
			args++;
	}
	return false;
}

static const void *find_dtb(uint64_t x0)
{
	/* Linux's boot protocol passes it in x0; else try the start of RAM. */
	if (x0 && !(x0 & 7) && fdt_be32((const void *)(uintptr_t)x0) == FDT_MAGIC)
		return (const void *)(uintptr_t)x0;
	if (fdt_be32((const void *)0x40000000) == FDT_MAGIC)
		return (const void *)0x40000000;
	return NULL;
}

static void heap_init(void)
{
	uint64_t start = ((uintptr_t)_end + 0xffff) & ~0xffffULL;
	uint64_t end = plat.mem_base + plat.mem_size;

	/* Up to the device tree when it sits above us, else to the end of RAM. */
	if (plat.dtb > start && plat.dtb < end)
		end = plat.dtb & ~0xfffULL;
	heap_next = start;
	heap_end = end;
	kprintf("heap 0x%llx-0x%llx\n", (unsigned long long)start,
		(unsigned long long)end);
}

static int its_up(void)
{
	unsigned i;

	its.base = plat.its;
	its.alloc = kalloc;
	its.log = klog;
	if (!plat.its || its_init(&its))
		return -1;
	/* One collection per CPU, ICID = CPU number. */
	for (i = 0; i < plat.ncpus; i++) {
		if (!cpus[i].online)
			continue;
		cpus[i].rdbase = its_rdbase(&its, cpus[i].rd.base,
					    cpus[i].rd.procnum);
		if (its_mapc(&its, (uint16_t)i, cpus[i].rdbase) ||
		    its_sync(&its, cpus[i].rdbase))
			return -1;
		kprintf("its: MAPC collection %u -> RDbase 0x%llx (%s), SYNC\n",
			i, (unsigned long long)cpus[i].rdbase,
			its.pta ? "redistributor address >> 16" :
			"processor number");
	}
	return 0;
}

static void pci_up(void)
{
	struct pci_func *f;
	unsigned i, b;

	pci.ecam = plat.ecam;
	pci.bus_start = plat.bus_start;
	pci.bus_end = plat.bus_end;
	pci.mem32 = plat.mem32;
	pci.mem64 = plat.mem64;
	pci.log = klog;
	pci_enumerate(&pci);
	for (i = 0; i < pci.nfuncs; i++) {
		f = &pci.funcs[i];
		kprintf("pci %02x:%02x.%x %04x:%04x class %06x%s",
			f->bus, f->dev, f->fn, f->vendor, f->device, f->class,
			f->hdr_type == 1 ? " bridge" : "");
		if (f->hdr_type == 1)
			kprintf(" buses %02x-%02x", f->secondary, f->subordinate);
		for (b = 0; b < 6; b++)
			if (f->bar[b])
				kprintf(" bar%u 0x%llx+0x%llx", b,
					(unsigned long long)f->bar[b],
					(unsigned long long)f->bar_size[b]);
		kprintf(" command 0x%x\n",
			pci_read16(&pci, f->bus, f->dev, f->fn, PCI_COMMAND));
	}
}

void kmain(uint64_t x0, uint64_t entry_el)
{
	const void *dtb;
	unsigned up;
	bool ok = true;
	uint64_t el = read_sysreg(CurrentEL) >> 2 & 3;

	kprintf("umsi arm64 kernel: entered at EL%llu, running at EL%llu, x0 0x%llx\n",
		(unsigned long long)(entry_el & 3), (unsigned long long)el,
		(unsigned long long)x0);
	dtb = find_dtb(x0);
	if (!dtb || fdt_init(&fdt, dtb, DTB_MAX_SIZE)) {
		kprintf("PANIC: no valid device tree (x0 0x%llx)\n",
			(unsigned long long)x0);
		system_off();
	}
	plat.dtb = (uintptr_t)dtb;
	kprintf("dt: device tree at 0x%llx, %u bytes\n",
		(unsigned long long)plat.dtb, fdt.size);
	if (dt_parse(&fdt, &plat)) {
		kprintf("PANIC: the device tree lacks CPUs or a GICv3\n");
		system_off();
	}
	heap_init();

	gic.dist = plat.gicd;
	gic.nregions = plat.gicr_regions;
	for (unsigned i = 0; i < plat.gicr_regions; i++) {
		gic.rd_region[i] = plat.gicr[i];
		gic.rd_region_size[i] = plat.gicr_size[i];
	}
	gic.alloc = kalloc;
	if (gic_dist_init(&gic) || gic_lpi_init(&gic) || cpu_gic_up(0)) {
		kprintf("PANIC: GICv3 without LPIs\n");
		system_off();
	}
	kprintf("gic: LPI property table 0x%llx, %u INTID bits\n",
		(unsigned long long)(uintptr_t)gic.prop_table, gic.id_bits);
	irq_enable();
	up = smp_boot();
	kprintf("smp: %u of %u CPUs up\n", up, plat.ncpus);
	print_ready();

	if (its_up()) {
		kprintf("its: set-up failed\n");
		ok = false;
	} else if (plat.have_pci) {
		pci_up();
		if (msi_probe_all() < 0)
			ok = false;
	}
	cpu_report_irqs(0);
	kprintf("UMSI {\"event\":\"done\",\"arch\":\"arm64\",\"ok\":%s}\n",
		ok && up == plat.ncpus ? "true" : "false");
	/*
	 * umsi.hold: stay up (interrupts still served) so that a test can
	 * read the machine through QEMU's monitor, then quit it.
	 */
	if (bootarg_has(plat.bootargs, "umsi.hold"))
		for (;;) {
			__asm__ volatile("wfi" ::: "memory");
			cpu_report_irqs(0);
		}
	system_off();
}
