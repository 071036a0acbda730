/* SPDX-License-Identifier: MIT */
/*
 * selftest.c - kernel self-tests chosen by `umsi.selftest=NAME`, for the
 * QEMU tests of the kernel's own machinery:
 *
 *   ud2   execute an invalid opcode: the exception path must print the
 *         registers and exit with FAIL.
 *   ipi   send a fixed IPI to every online CPU and wait for each.
 *   highmem  map every ivshmem (1af4:1110) BAR the firmware put above
 *         4 GiB (mm.c creates the page tables on demand), write 'UMSI'
 *         at its first and last word and read it back; the test reads
 *         the same words through the monitor.
 *   intx  verify the q35 INTx routing (pci.c) against QEMU: route the
 *         eight PIRQ inputs (GSI 16-23) to eight vectors, make every edu
 *         device (1234:11e8, MSI off) raise INTx through its register
 *         0x60, and compare the GSI that fired with the predicted one.
 *
 * Self-tests use kernel vectors from the system range uMSI never hands
 * out (0xec-0xf3 for intx, 0xf4 for ipi).
 */
#include "kernel.h"
#include "apic.h"
#include "ioapic.h"
#include "pci.h"
#include "selftest.h"
#include "smp.h"

#define VEC_INTX_BASE 0xec	/* GSI 16 + n -> 0xec + n */
#define VEC_IPI       0xf4
#define EDU_STATUS    0x24
#define EDU_RAISE     0x60
#define EDU_ACK       0x64

static volatile uint32_t intx_seen[8];	/* deliveries per GSI 16-23 */
static volatile uint32_t intx_real[8];	/* ... that found an edu raised */
static volatile uint32_t ipi_seen[KERNEL_MAX_CPUS];
static uint64_t edu_bars[16];
static uint32_t nedu;

/*
 * Acknowledge every edu's interrupt status, whichever raised the line.
 * Returns whether any had raised it: under KVM on this host a level
 * interrupt is delivered once more after the device deasserted it, and
 * that delivery finds nothing raised (see kernel/README.md).
 */
static bool edu_ack_all(void)
{
	bool any = false;

	for (uint32_t i = 0; i < nedu; i++) {
		uint32_t st = mmio_read32(edu_bars[i] + EDU_STATUS);

		if (st) {
			mmio_write32(edu_bars[i] + EDU_ACK, st);
			any = true;
		}
	}
	return any;
}

bool selftest_irq(uint8_t vector)
{
	if (vector >= VEC_INTX_BASE && vector < VEC_INTX_BASE + 8) {
		intx_seen[vector - VEC_INTX_BASE]++;
		if (edu_ack_all())
			intx_real[vector - VEC_INTX_BASE]++;
		apic_eoi();
		return true;
	}
	if (vector == VEC_IPI) {
		ipi_seen[this_cpu_id()]++;
		apic_eoi();
		return true;
	}
	return false;
}

static bool wait_for(volatile uint32_t *p, uint32_t want, uint64_t us)
{
	uint64_t end = clock_ns() + us * 1000;

	while (clock_ns() < end) {
		if (*p >= want)
			return true;
		cpu_relax();
	}
	return *p >= want;
}

static int selftest_intx(void)
{
	int bad = 0;
	uint32_t me = smp_cpu_apic_id(this_cpu_id());

	for (uint32_t i = 0; i < pci_ndevs && nedu < ARRAY_SIZE(edu_bars); i++) {
		struct pci_dev *d = &pci_devs[i];

		if (d->vendor == 0x1234 && d->device == 0x11e8 &&
		    d->bar[0].assigned)
			edu_bars[nedu++] = (uint64_t)mm_map_mmio(d->bar[0].addr, 4096);
	}
	for (uint32_t g = 0; g < 8; g++) {
		struct ioapic_route r = {
			.apic_id = me, .vector = (uint8_t)(VEC_INTX_BASE + g),
			.trigger = IOAPIC_TRIGGER_LEVEL,
			.polarity = IOAPIC_POL_LOW, .masked = false,
		};

		if (ioapic_program(16 + g, &r))
			panic("selftest: no GSI %u", 16 + g);
	}
	for (uint32_t i = 0, e = 0; i < pci_ndevs; i++) {
		struct pci_dev *d = &pci_devs[i];
		uint32_t before[8], real[8], fired = ~0u, hits = 0, extra = 0;
		int want;

		if (d->vendor != 0x1234 || d->device != 0x11e8 ||
		    !d->bar[0].assigned)
			continue;
		want = pci_intx_gsi(d->bdf, d->irq_pin);
		for (uint32_t g = 0; g < 8; g++) {
			before[g] = intx_seen[g];
			real[g] = intx_real[g];
		}
		mmio_write32(edu_bars[e++] + EDU_RAISE, 1);
		udelay(20000);
		for (uint32_t g = 0; g < 8; g++) {
			if (intx_real[g] != real[g]) {
				fired = 16 + g;
				hits += intx_real[g] - real[g];
			}
			extra += (intx_seen[g] - before[g]) - (intx_real[g] - real[g]);
		}
		kprintf("selftest intx %02x:%02x.%u pin %c predicted gsi %d "
			"observed gsi %d count %u redelivered %u %s\n", PCI_BUS(d->bdf),
			PCI_DEV(d->bdf), PCI_FN(d->bdf), 'A' + d->irq_pin - 1,
			want, fired == ~0u ? -1 : (int)fired, hits, extra,
			(int)fired == want && hits == 1 ? "ok" : "FAIL");
		if ((int)fired != want || hits != 1)
			bad++;
	}
	for (uint32_t g = 0; g < 8; g++)
		ioapic_set_mask(16 + g, true);
	return bad;
}

static int selftest_ipi(void)
{
	int bad = 0;

	for (uint32_t cpu = 0; cpu < smp_ncpus; cpu++) {
		if (!smp_cpu_online(cpu))
			continue;
		apic_send_fixed(smp_cpu_apic_id(cpu), VEC_IPI);
		bool ok = wait_for(&ipi_seen[cpu], 1, 1000000);

		kprintf("selftest ipi cpu %u apic_id %u %s\n", cpu,
			smp_cpu_apic_id(cpu), ok ? "ok" : "FAIL");
		bad += !ok;
	}
	return bad;
}

static int selftest_highmem(void)
{
	int bad = 0, seen = 0;

	for (uint32_t i = 0; i < pci_ndevs; i++) {
		struct pci_dev *d = &pci_devs[i];

		if (d->vendor != 0x1af4 || d->device != 0x1110)
			continue;
		for (int b = 0; b < 6; b++) {
			struct pci_bar *bar = &d->bar[b];
			uint64_t va, last;
			uint32_t v0, v1;

			if (bar->kind != PCI_BAR_MEM64 || !bar->assigned ||
			    bar->addr < (1ull << 32))
				continue;
			seen++;
			va = (uint64_t)mm_map_mmio(bar->addr, bar->size);
			last = va + bar->size - 4;
			mmio_write32(va, 0x49534d55);	/* "UMSI" */
			mmio_write32(last, 0x49534d55);
			v0 = mmio_read32(va);
			v1 = mmio_read32(last);
			kprintf("selftest highmem %02x:%02x.%u bar %d 0x%lx-0x%lx "
				"read 0x%x 0x%x %s\n", PCI_BUS(d->bdf),
				PCI_DEV(d->bdf), PCI_FN(d->bdf), b, bar->addr,
				bar->addr + bar->size - 1, v0, v1,
				v0 == 0x49534d55 && v1 == 0x49534d55 ? "ok" : "FAIL");
			bad += v0 != 0x49534d55 || v1 != 0x49534d55;
		}
	}
	if (!seen) {
		kprintf("selftest highmem: no ivshmem BAR above 4 GiB\n");
		bad++;
	}
	return bad;
}

int selftest_run(const char *name)
{
	int bad;

	if (!strcmp(name, "ud2")) {
		kprintf("selftest ud2: executing an invalid opcode\n");
		__asm__ volatile("ud2");
		return 1;
	}
	if (!strcmp(name, "intx"))
		bad = selftest_intx();
	else if (!strcmp(name, "highmem"))
		bad = selftest_highmem();
	else if (!strcmp(name, "ipi"))
		bad = selftest_ipi();
	else {
		kprintf("selftest: unknown test '%s'\n", name);
		return 1;
	}
	kprintf("selftest %s: %s\n", name, bad ? "FAIL" : "ok");
	return bad;
}
