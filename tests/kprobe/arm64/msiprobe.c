// SPDX-License-Identifier: MIT
/*
 * msiprobe.c - MSI through the GICv3 ITS, proven with QEMU's edu device
 * and no library: for each edu, its MSI capability gets the address of
 * GITS_TRANSLATER and data = EventID, the ITS maps (DeviceID, EventID)
 * to an LPI on one CPU's collection, edu raises an interrupt (BAR0 0x60)
 * and that CPU must acknowledge the LPI; then MOVI moves the event to
 * another CPU's collection and the next interrupt must arrive there.
 */
#include "console.h"
#include "a64.h"
#include "its.h"

struct its its;

/* QEMU's edu (docs/specs/edu.rst). */
#define EDU_VENDOR		0x1234
#define EDU_DEVICE		0x11e8
#define EDU_ID			0x00
#define EDU_IRQ_STATUS		0x24
#define EDU_IRQ_RAISE		0x60
#define EDU_IRQ_ACK		0x64
#define MSI_PROBE_TIMEOUT_US	1000000

static volatile uint64_t edu_bar;
static volatile uint32_t edu_lpi;

/* In IRQ context: the edu's status cleared before the EOI. */
static void edu_irq_hook(uint32_t intid)
{
	uint32_t st;

	if (intid != edu_lpi || !edu_bar)
		return;
	st = mmio_read32(edu_bar + EDU_IRQ_STATUS);
	if (st)
		mmio_write32(edu_bar + EDU_IRQ_ACK, st);
}

/*
 * Make edu raise one interrupt and wait until @cpu has acknowledged and
 * printed it. True when @cpu took exactly one interrupt, LPI @lpi, and no
 * other CPU took any meanwhile.
 */
static bool edu_fire(uint64_t bar, unsigned cpu, uint32_t lpi)
{
	uint32_t before[ARM64_MAX_CPUS];
	uint64_t dl;
	unsigned i;
	bool ok = true;

	for (i = 0; i < plat.ncpus; i++)
		before[i] = __atomic_load_n(&cpus[i].irqs, __ATOMIC_ACQUIRE);
	mmio_write32(bar + EDU_IRQ_RAISE, 1);
	dl = deadline_us(MSI_PROBE_TIMEOUT_US);
	while (__atomic_load_n(&cpus[cpu].reported, __ATOMIC_ACQUIRE) ==
	       before[cpu]) {
		if (cpu == this_cpu())
			cpu_report_irqs(cpu);
		if (deadline_passed(dl)) {
			kprintf("msi: no interrupt on cpu %u within %u us\n",
				cpu, MSI_PROBE_TIMEOUT_US);
			ok = false;
			break;
		}
		cpu_relax();
	}
	for (i = 0; i < plat.ncpus; i++) {
		uint32_t got = cpus[i].irqs - before[i];

		if (i != cpu && got) {
			kprintf("msi: cpu %u took %u interrupt(s) meant for cpu %u\n",
				i, got, cpu);
			ok = false;
		}
	}
	if (ok && (cpus[cpu].irqs - before[cpu] != 1 ||
		   cpus[cpu].last_intid != lpi)) {
		kprintf("msi: cpu %u took %u interrupt(s), last INTID %u, expected LPI %u once\n",
			cpu, cpus[cpu].irqs - before[cpu], cpus[cpu].last_intid,
			lpi);
		ok = false;
	}
	return ok;
}

/* Address = GITS_TRANSLATER, data = EventID, one message, MSI on, INTx off. */
static void msi_program(const struct ecam_func *f, unsigned cap,
			uint64_t addr, uint16_t data)
{
	uint16_t ctl = ecam_read16(&a64_pci, f->bus, f->dev, f->fn,
				  cap + ECAM_MSI_FLAGS);
	unsigned data_off = ctl & ECAM_MSI_FLAGS_64BIT ? ECAM_MSI_DATA_64 :
			    ECAM_MSI_DATA_32;
	uint16_t cmd;

	ecam_write16(&a64_pci, f->bus, f->dev, f->fn, cap + ECAM_MSI_FLAGS,
		    ctl & ~(ECAM_MSI_FLAGS_ENABLE | ECAM_MSI_FLAGS_QSIZE));
	ecam_write32(&a64_pci, f->bus, f->dev, f->fn, cap + ECAM_MSI_ADDR_LO,
		    (uint32_t)addr);
	if (ctl & ECAM_MSI_FLAGS_64BIT)
		ecam_write32(&a64_pci, f->bus, f->dev, f->fn, cap + ECAM_MSI_ADDR_HI,
			    (uint32_t)(addr >> 32));
	ecam_write16(&a64_pci, f->bus, f->dev, f->fn, cap + data_off, data);
	cmd = ecam_read16(&a64_pci, f->bus, f->dev, f->fn, ECAM_COMMAND);
	ecam_write16(&a64_pci, f->bus, f->dev, f->fn, ECAM_COMMAND,
		    cmd | ECAM_COMMAND_INTX_DIS | ECAM_COMMAND_MASTER);
	ecam_write16(&a64_pci, f->bus, f->dev, f->fn, cap + ECAM_MSI_FLAGS,
		    (ctl & ~ECAM_MSI_FLAGS_QSIZE) | ECAM_MSI_FLAGS_ENABLE);
	kprintf("msi: %02x:%02x.%x cap 0x%x control 0x%x address 0x%llx data 0x%x\n",
		f->bus, f->dev, f->fn, cap,
		ecam_read16(&a64_pci, f->bus, f->dev, f->fn, cap + ECAM_MSI_FLAGS),
		(unsigned long long)addr,
		ecam_read16(&a64_pci, f->bus, f->dev, f->fn, cap + data_off));
}

static void probe_line(const struct ecam_func *f, uint32_t devid, unsigned cpu,
		       uint32_t lpi, uint32_t event, const char *step, int from,
		       bool ok)
{
	char extra[32] = "";

	if (from >= 0)
		ksnprintf(extra, sizeof(extra), ",\"from\":%d", from);
	kprintf("UMSI {\"event\":\"arm64-msi-probe\",\"bdf\":\"%02x:%02x.%x\",\"device_id\":%u,\"cpu\":%u,\"lpi\":%u,\"event_id\":%u,\"step\":\"%s\"%s,\"ok\":%s}\n",
		f->bus, f->dev, f->fn, devid, cpu, lpi, event, step, extra,
		ok ? "true" : "false");
}

/* The next online CPU after @cpu, or @cpu itself when it is alone. */
static unsigned next_online(unsigned cpu)
{
	unsigned i, c;

	for (i = 1; i < plat.ncpus; i++) {
		c = (cpu + i) % plat.ncpus;
		if (cpus[c].online)
			return c;
	}
	return cpu;
}

static bool msi_probe_edu(const struct ecam_func *f, unsigned idx)
{
	const uint32_t event = 0;
	uint32_t lpi = GIC_LPI_BASE + idx, devid;
	unsigned cap, cpu = next_online(0), to;
	uint64_t bar = f->bar[0], itt;
	bool ok;

	cap = ecam_find_cap(&a64_pci, f, ECAM_CAP_ID_MSI);
	if (!bar || !cap || !dt_rid_to_devid(&plat, ecam_rid(f), &devid)) {
		kprintf("msi: %02x:%02x.%x: BAR0 0x%llx, MSI cap 0x%x, %s\n",
			f->bus, f->dev, f->fn, (unsigned long long)bar, cap,
			"or no DeviceID for its requester ID: not probed");
		return false;
	}
	kprintf("msi: %02x:%02x.%x edu id 0x%x, requester ID 0x%04x -> DeviceID 0x%x\n",
		f->bus, f->dev, f->fn, mmio_read32(bar + EDU_ID), ecam_rid(f),
		devid);

	/* The ITS side: device, event -> LPI on @cpu's collection. */
	itt = its_alloc_itt(&its, 1);
	if (!itt || its_mapd(&its, devid, itt, 1) ||
	    its_mapti(&its, devid, event, lpi, (uint16_t)cpu)) {
		kprintf("msi: MAPD/MAPTI failed for DeviceID 0x%x\n", devid);
		return false;
	}
	gic_lpi_set(&gic, lpi, true);
	if (its_inv(&its, devid, event) || its_sync(&its, cpus[cpu].rdbase))
		return false;
	kprintf("its: MAPD DeviceID 0x%x ITT 0x%llx (2 events), MAPTI event %u -> LPI %u collection %u, INV, SYNC\n",
		devid, (unsigned long long)itt, event, lpi, cpu);

	edu_bar = bar;
	edu_lpi = lpi;
	irq_hook = edu_irq_hook;
	msi_program(f, cap, plat.its + GITS_TRANSLATER, (uint16_t)event);
	ok = edu_fire(bar, cpu, lpi);
	probe_line(f, devid, cpu, lpi, event, "mapti", -1, ok);
	if (!ok)
		return false;

	to = next_online(cpu);
	if (to == cpu) {
		kprintf("msi: one CPU, nowhere to move LPI %u\n", lpi);
		return true;
	}
	if (its_movi(&its, devid, event, (uint16_t)to) ||
	    its_sync(&its, cpus[cpu].rdbase) || its_sync(&its, cpus[to].rdbase))
		return false;
	kprintf("its: MOVI DeviceID 0x%x event %u -> collection %u, SYNC both\n",
		devid, event, to);
	ok = edu_fire(bar, to, lpi);
	probe_line(f, devid, to, lpi, event, "movi", (int)cpu, ok);
	return ok;
}

int msi_probe_all(void)
{
	unsigned i, n = 0, good = 0;

	for (i = 0; i < a64_pci.nfuncs; i++) {
		const struct ecam_func *f = &a64_pci.funcs[i];

		if (f->vendor != EDU_VENDOR || f->device != EDU_DEVICE)
			continue;
		if (msi_probe_edu(f, n++))
			good++;
	}
	irq_hook = NULL;
	kprintf("msi: %u of %u edu device(s) delivered MSIs through the ITS\n",
		good, n);
	return good == n ? (int)n : -1;
}

/*
 * The probe's own ITS driver (its.c) up: one collection per CPU, ICID =
 * CPU number. Before msi_probe_all().
 */
int msi_probe_its_up(void)
{
	unsigned i;

	its.base = plat.its;
	its.alloc = table_alloc;
	its.log = klog;
	if (!plat.its || its_init(&its))
		return -1;
	/* One collection per CPU, ICID = CPU number. */
	for (i = 0; i < plat.ncpus; i++) {
		if (!cpus[i].online)
			continue;
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
