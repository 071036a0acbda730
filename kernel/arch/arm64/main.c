// SPDX-License-Identifier: MIT
/*
 * main.c - the arm64 reference kernel: device tree, GICv3 on every CPU
 * (PSCI CPU_ON, smp.c), LPIs, PCI enumeration (bus numbers and BARs
 * assigned by pci_ecam.c, then the shared kernel/common/pci.c reads the result),
 * the raw MSI probe through the kernel's own ITS driver (umsi.msiprobe,
 * msiprobe.c), uMSI with its GICv3 ITS back end (the shared glue and
 * drivers, host.c), the ready line, the verdict.
 */
#include "console.h"
#include "a64.h"
#include "pci.h"
#include "smp.h"
#include "umsi_glue.h"

/* The most of a device tree we are willing to read. */
#define DTB_MAX_SIZE	(2u << 20)
/* PSCI 0.2 function IDs (ARM DEN 0022, 5.1). */
#define PSCI_SYSTEM_OFF	0x84000008u
/* What the GIC and ITS tables may take (table_alloc), out of the heap. */
#define TABLE_REGION	(16u << 20)

struct platform plat;
struct cpu cpus[ARM64_MAX_CPUS];
struct gic gic;
struct gic2 gic2;
struct ecam_host a64_pci;
void (*volatile irq_hook)(uint32_t intid);
/* The uMSI dispatcher, set by the glue (kernel.h). */
void (*irq_dispatch_hook)(uint32_t cpu, uint32_t id);
/* The raw MSI probe owns the acknowledgement reports while this is set. */
static volatile bool probe_active;

/* Stacks for every CPU; boot.S puts CPU n's stack pointer at the end of n. */
__attribute__((aligned(16))) uint8_t cpu_stacks[ARM64_MAX_CPUS][ARM64_STACK_SIZE];

extern uint8_t _end[];
extern void arm64_halt(void) __attribute__((noreturn));

static struct fdt fdt;
static struct spinlock table_lock;
static uint64_t table_start, table_next, table_end;
/* Blocks table_free() gave back, reused for requests of the same size. */
#define TABLE_FREE_MAX	64
static struct { uint64_t addr, size; } table_freed[TABLE_FREE_MAX];

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

void *table_alloc(uint64_t size, uint64_t align)
{
	unsigned long flags;
	uint64_t a;
	void *p = NULL;
	unsigned i;

	flags = spin_lock_irqsave(&table_lock);
	for (i = 0; i < TABLE_FREE_MAX; i++)
		if (table_freed[i].size == size &&
		    !(table_freed[i].addr & (align - 1))) {
			p = (void *)(uintptr_t)table_freed[i].addr;
			table_freed[i].size = 0;
			break;
		}
	if (!p) {
		a = (table_next + align - 1) & ~(align - 1);
		if (a >= table_next && a <= table_end && size <= table_end - a) {
			table_next = a + size;
			p = (void *)(uintptr_t)a;
		}
	}
	spin_unlock_irqrestore(&table_lock, flags);
	if (p)
		memset(p, 0, size);
	else
		kprintf("table_alloc: no room for 0x%llx bytes\n",
			(unsigned long long)size);
	return p;
}

uint64_t karch_phys_used(void)
{
	return table_next - table_start;
}

void table_free(void *p, uint64_t size)
{
	unsigned long flags;
	unsigned i;

	if (!p || !size)
		return;
	flags = spin_lock_irqsave(&table_lock);
	for (i = 0; i < TABLE_FREE_MAX; i++)
		if (!table_freed[i].size) {
			table_freed[i].addr = (uintptr_t)p;
			table_freed[i].size = size;
			break;
		}
	spin_unlock_irqrestore(&table_lock, flags);
	/* With no slot left the block is leaked, not reused. */
}

int64_t psci_call(uint64_t fn, uint64_t a1, uint64_t a2, uint64_t a3)
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

void system_off(void)
{
	psci_call(PSCI_SYSTEM_OFF, 0, 0, 0);
	arm64_halt();
}

void arm64_exception(uint64_t kind, uint64_t esr, uint64_t elr, uint64_t far)
{
	char line[160];

	ksnprintf(line, sizeof(line),
		  "EXCEPTION cpu %u: vector %llu ESR_EL1 0x%llx ELR_EL1 0x%llx FAR_EL1 0x%llx\n",
		  this_cpu(), (unsigned long long)kind, (unsigned long long)esr,
		  (unsigned long long)elr, (unsigned long long)far);
	kputs_raw(line);
	kernel_exit(KERNEL_EXIT_FAIL);
}

/*
 * IRQ from the GIC (Group 1, system register interface): acknowledge
 * through ICC_IAR1_EL1 until it says spurious; an SGI is a cross-call or
 * a wake-up (smp.c), an LPI of uMSI's range goes to umsi_dispatch() as
 * INTID - first_lpi (uMSI ends nothing: umsi_ctl.eoi is false), any
 * other INTID to the raw probe's hook; then EOI through ICC_EOIR1_EL1
 * (EOImode 0: priority drop and deactivation). Nothing is printed here.
 */
/*
 * The same on a GICv2 (gicv2.c): GICC_IAR until spurious (1023); the v2m
 * frame's SPIs go to umsi_dispatch() as INTID - the frame's first SPI;
 * GICC_EOIR with what IAR gave (an SGI's sender included).
 */
/*
 * One acknowledged INTID on CPU @n, GICv2 or v3 alike: an SGI, one of
 * uMSI's identities (INTIDs @first .. @last - 1), a wired SPI uMSI routes,
 * or the raw probe's.
 */
static void arm64_irq_one(unsigned n, struct cpu *c, uint32_t intid,
			  uint32_t first, uint32_t last)
{
	void (*hook)(uint32_t);

	if (intid < 16) {
		smp_sgi(intid);
	} else if (intid >= first && intid < last && irq_dispatch_hook) {
		irq_dispatch_hook(n, intid - first);
	} else if (intid < 1020 && a64_wired_id[intid] && irq_dispatch_hook) {
		/* A wired SPI (INTx): the identity uMSI gave it. */
		irq_dispatch_hook(n, a64_wired_id[intid] - 1u);
	} else {
		hook = irq_hook;
		if (hook)
			hook(intid);
		else
			c->spurious++;
	}
	c->last_intid = intid;
	__atomic_add_fetch(&c->irqs, 1, __ATOMIC_RELEASE);
}

static void arm64_irq_v2(unsigned n, struct cpu *c)
{
	uint32_t iar, intid, first = gic2.spi_base, last = first + gic2.spi_count;

	for (;;) {
		iar = gic2_ack(&gic2);
		intid = iar & 0x3ff;
		if (intid >= 1020)
			break;
		arm64_irq_one(n, c, intid, first, last);
		gic2_eoi(&gic2, iar);
	}
}

void arm64_irq(void)
{
	unsigned n = this_cpu();
	struct cpu *c = &cpus[n];
	uint32_t intid, first = A64_UMSI_FIRST_LPI;
	uint32_t last = first + a64_ncpus * A64_UMSI_NVEC;

	if (plat.gic_version == 2) {
		arm64_irq_v2(n, c);
		return;
	}
	for (;;) {
		intid = (uint32_t)read_sysreg(ICC_IAR1_EL1) & 0xffffff;
		if (intid >= 1020 && intid <= GIC_INTID_SPURIOUS)
			break;
		arm64_irq_one(n, c, intid, first, last);
		write_sysreg(ICC_EOIR1_EL1, intid);
		isb();
	}
}

void cpu_report_irqs(unsigned cpu)
{
	struct cpu *c = &cpus[cpu];
	uint32_t n = __atomic_load_n(&c->irqs, __ATOMIC_ACQUIRE);

	if (!probe_active || n == c->reported)
		return;
	kprintf("cpu %u mpidr 0x%llx: ICC_IAR1_EL1 acknowledged INTID %u (%s), EOIR1 written; %u so far\n",
		cpu, (unsigned long long)cpu_mpidr(), c->last_intid,
		c->last_intid >= GIC_LPI_BASE ? "LPI" : "not an LPI", n);
	__atomic_store_n(&c->reported, n, __ATOMIC_RELEASE);
}

bool a64_probe_reporting(void)
{
	return probe_active;
}

/*
 * One line, written in one piece (kprintf's 512-byte line would cut it,
 * and the JSON, short). A CPU is {"cpu","mpidr","online"}: 36 bytes at
 * most, so that 64 CPUs stay within the 4096 bytes every UMSI line keeps
 * to (kernel/README.md); each CPU's redistributor and processor number
 * are in its "cpu N mpidr M up:" line.
 */
static void print_ready(bool umsi)
{
	static char line[4096];
	static char cpus_buf[ARM64_MAX_CPUS * 40];
	size_t len = 0;
	unsigned i;

	cpus_buf[0] = 0;
	for (i = 0; i < plat.ncpus && len < sizeof(cpus_buf); i++)
		len += (size_t)ksnprintf(cpus_buf + len, sizeof(cpus_buf) - len,
			"%s{\"cpu\":%u,\"mpidr\":%u,\"online\":%s}",
			i ? "," : "", i, smp_cpu_hwid(i),
			smp_cpu_online(i) ? "true" : "false");
	if (plat.gic_version == 2)
		ksnprintf(line, sizeof(line), "UMSI {\"event\":\"ready\",\"arch\":\"" KARCH_NAME "\","
			"\"ctl\":\"gicv2m\",\"cpus\":[%s],\"gic\":{\"version\":2,"
			"\"dist\":\"0x%llx\",\"cpuif\":\"0x%llx\"},\"v2m\":{\"base\":\"0x%llx\","
			"\"setspi\":\"0x%llx\",\"first_spi\":%u,\"spis\":%u},"
			"\"umsi\":%s,\"allocated\":%u}\n",
			cpus_buf, (unsigned long long)plat.gicd,
			(unsigned long long)plat.gicc, (unsigned long long)plat.v2m,
			(unsigned long long)(plat.v2m ? plat.v2m + 0x40 : 0),
			gic2.spi_base, gic2.spi_count, umsi ? "true" : "false",
			umsi_glue_allocated());
	else
		ksnprintf(line, sizeof(line), "UMSI {\"event\":\"ready\",\"arch\":\"" KARCH_NAME "\","
			"\"ctl\":\"its\",\"cpus\":[%s],\"its\":{\"base\":\"0x%llx\"},\"translater\":\"0x%llx\","
			"\"first_lpi\":%u,\"nvec\":%u,\"umsi\":%s,\"allocated\":%u}\n",
			cpus_buf, (unsigned long long)plat.its,
			(unsigned long long)(plat.its ? plat.its + A64_GITS_TRANSLATER : 0),
			A64_UMSI_FIRST_LPI, A64_UMSI_NVEC, umsi ? "true" : "false",
			umsi_glue_allocated());
	console_write(line);
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

/*
 * After the image: TABLE_REGION for the GIC and ITS tables (table_alloc,
 * and uMSI's phys_alloc), then the kernel heap (kernel/common/heap.c) up to the
 * device tree when it sits above us, else to the end of RAM.
 */
static void heap_init(void)
{
	uint64_t start = ((uintptr_t)_end + 0xffff) & ~0xffffULL;
	uint64_t end = plat.mem_base + plat.mem_size;

	if (plat.dtb > start && plat.dtb < end)
		end = plat.dtb & ~0xfffULL;
	table_start = table_next = start;
	table_end = start + TABLE_REGION;
	if (table_end > end)
		panic("no room for the GIC tables below 0x%llx",
		      (unsigned long long)end);
	mm_init(table_end, end, end);
	kprintf("tables 0x%llx-0x%llx, heap 0x%llx-0x%llx\n",
		(unsigned long long)start, (unsigned long long)table_end,
		(unsigned long long)table_end, (unsigned long long)end);
}


static void ecam_up(void)
{
	struct ecam_func *f;
	unsigned i, b;

	a64_pci.ecam = plat.ecam;
	a64_pci.bus_start = plat.bus_start;
	a64_pci.bus_end = plat.bus_end;
	a64_pci.mem32 = plat.mem32;
	a64_pci.mem64 = plat.mem64;
	a64_pci.log = klog;
	/* The shared PCI code's reads, for the hot-plug ports' room. */
	pci_set_ecam(plat.ecam, (uint8_t)plat.bus_start, (uint8_t)plat.bus_end);
	ecam_enumerate(&a64_pci);
	for (i = 0; i < a64_pci.nfuncs; i++) {
		char line[320];
		int n;

		f = &a64_pci.funcs[i];
		n = ksnprintf(line, sizeof(line), "pci %02x:%02x.%x %04x:%04x class %06x%s",
			      f->bus, f->dev, f->fn, f->vendor, f->device, f->class,
			      f->hdr_type == 1 ? " bridge" : "");
		if (f->hdr_type == 1)
			n += ksnprintf(line + n, sizeof(line) - (size_t)n,
				       " buses %02x-%02x", f->secondary,
				       f->subordinate);
		for (b = 0; b < 6; b++)
			if (f->bar[b] && n < (int)sizeof(line))
				n += ksnprintf(line + n, sizeof(line) - (size_t)n,
					       " bar%u 0x%llx+0x%llx", b,
					       (unsigned long long)f->bar[b],
					       (unsigned long long)f->bar_size[b]);
		kprintf("%s command 0x%x\n", line,
			ecam_read16(&a64_pci, f->bus, f->dev, f->fn, ECAM_COMMAND));
	}
}

/*
 * The boot CPU after set-up with umsi.hold: wait for interrupts and serve
 * the live events queued by handlers (hot plug, surprise removal) in
 * process context. wfi wakes on a pending interrupt with DAIF.I set, so
 * the check and the wait are one step.
 */
static __attribute__((noreturn)) void work_loop(void)
{
	for (;;) {
		irq_disable();
		if (!umsi_glue_work_pending()) {
			__asm__ volatile("wfi" ::: "memory");
			irq_enable();
			isb();
			continue;
		}
		irq_enable();
		umsi_glue_work();
	}
}

/* The GICv3 distributor, the LPI tables, CPU 0's redistributor. */
static void gic_v3_up(void)
{
	unsigned i;

	gic.dist = plat.gicd;
	gic.nregions = plat.gicr_regions;
	for (i = 0; i < plat.gicr_regions; i++) {
		gic.rd_region[i] = plat.gicr[i];
		gic.rd_region_size[i] = plat.gicr_size[i];
	}
	gic.alloc = table_alloc;
	/*
	 * uMSI's back end owns the LPI tables unless the kernel needs LPIs of
	 * its own (the raw probe) or runs without the library.
	 */
	gic.lpis_to_umsi = !cmdline_flag("umsi.nolib") &&
			   !cmdline_flag("umsi.msiprobe");
	a64_ncpus = plat.ncpus;
	if (gic_dist_init(&gic) || gic_lpi_init(&gic))
		panic("GICv3 without LPIs");
	if (A64_UMSI_FIRST_LPI + plat.ncpus * A64_UMSI_NVEC > (1u << gic.id_bits))
		panic("%u LPI INTID bits: too few for uMSI's range", gic.id_bits);
	/* Else uMSI's LPIs, enabled once for all in the kernel's table. */
	if (!gic.lpis_to_umsi)
		gic_lpi_enable_range(&gic, A64_UMSI_FIRST_LPI,
				     plat.ncpus * A64_UMSI_NVEC);
	if (cpu_gic_up(0))
		panic("cpu 0: no GICv3 redistributor with LPIs");
	if (gic.lpis_to_umsi)
		kprintf("gic: %u INTID bits; the LPI tables are uMSI's (LPIs %u-%u)\n",
			gic.id_bits, A64_UMSI_FIRST_LPI,
			A64_UMSI_FIRST_LPI + plat.ncpus * A64_UMSI_NVEC - 1);
	else
		kprintf("gic: LPI property table 0x%llx, %u INTID bits, LPIs %u-%u enabled for uMSI\n",
			(unsigned long long)(uintptr_t)gic.prop_table, gic.id_bits,
			A64_UMSI_FIRST_LPI, A64_UMSI_FIRST_LPI + plat.ncpus * A64_UMSI_NVEC - 1);
}

/* The GICv2 distributor and CPU 0's interface (gicv2.c). */
static void gic_v2_up(void)
{
	gic2.dist = plat.gicd;
	gic2.cpuif = plat.gicc;
	gic2.v2m = plat.v2m;
	a64_ncpus = plat.ncpus;
	if (plat.ncpus > 8)
		panic("%u CPUs: a GICv2 has 8 CPU interfaces", plat.ncpus);
	if (gic2_dist_init(&gic2))
		panic("GICv2 distributor 0x%llx does not answer",
		      (unsigned long long)plat.gicd);
	if (cpu_gic_up(0))
		panic("cpu 0: no GICv2 CPU interface");
}

void kmain(uint64_t x0, uint64_t entry_el)
{
	const void *dtb;
	unsigned i, up;
	bool ok = true, ran_umsi = false;
	uint64_t el = read_sysreg(CurrentEL) >> 2 & 3;

	write_sysreg(tpidr_el1, 0);
	kprintf("umsi arm64 kernel: entered at EL%llu, running at EL%llu, x0 0x%llx\n",
		(unsigned long long)(entry_el & 3), (unsigned long long)el,
		(unsigned long long)x0);
	dtb = find_dtb(x0);
	if (!dtb || fdt_init(&fdt, dtb, DTB_MAX_SIZE))
		panic("no valid device tree (x0 0x%llx)", (unsigned long long)x0);
	plat.dtb = (uintptr_t)dtb;
	kprintf("dt: device tree at 0x%llx, %u bytes\n",
		(unsigned long long)plat.dtb, fdt.size);
	if (dt_parse(&fdt, &plat))
		panic("the device tree lacks CPUs or a GIC (v2 or v3)");
	cmdline_set(plat.bootargs);
	heap_init();

	if (plat.gic_version == 2) {
		gic_v2_up();
	} else {
		gic_v3_up();
	}
	irq_enable();
	smp_boot();
	for (i = 0, up = 0; i < plat.ncpus; i++)
		up += smp_cpu_online(i) ? 1 : 0;
	kprintf("smp: %u of %u CPUs up\n", up, plat.ncpus);
	if (up != plat.ncpus)
		ok = false;

	if (plat.have_pci) {
		ecam_up();
		if (cmdline_flag("umsi.msiprobe") && plat.gic_version == 2) {
			kprintf("its: no ITS on a GICv2: no raw probe\n");
		} else if (cmdline_flag("umsi.msiprobe")) {
			probe_active = true;
			if (msi_probe_its_up()) {
				kprintf("its: set-up failed\n");
				ok = false;
			} else if (msi_probe_all() < 0) {
				ok = false;
			}
			cpu_report_irqs(0);
			probe_active = false;
		}
		/* The shared PCI code reads what pci_ecam.c assigned. */
		pci_set_ecam(plat.ecam, (uint8_t)plat.bus_start,
			     (uint8_t)plat.bus_end);
		pci_bring_up();
		if (!cmdline_flag("umsi.nolib")) {
			umsi_glue_run();
			ran_umsi = true;
			if (umsi_glue_failed())
				ok = false;
		}
	}
	print_ready(ran_umsi);
	if (cmdline_flag("umsi.hold")) {
		kprintf("umsi-kernel: holding (umsi.hold)\n");
		work_loop();
	}
	for (i = 0; i < plat.ncpus; i++)
		if (cpus[i].spurious)
			kprintf("cpu %u: %u interrupts nobody owned\n", i,
				cpus[i].spurious);
	kernel_exit(ok ? KERNEL_EXIT_PASS : KERNEL_EXIT_FAIL);
}
