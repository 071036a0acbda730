/* SPDX-License-Identifier: MIT */
/*
 * msiprobe.c - MSI to the IMSIC works on this machine, shown without the
 * library: QEMU's edu device is pointed at one hart's S-level interrupt
 * file after another and made to raise its interrupt; the hart must
 * claim exactly that identity through stopei, and no other hart anything.
 *
 * An MSI on RISC-V AIA is a 32-bit write of the identity to the target
 * file's seteipnum_le register, offset 0 of its 4 KiB page (AIA 3.5), so
 * the message address is the file's address and the data the identity.
 * edu (QEMU docs/specs/edu.rst, hw/misc/edu.c): BAR0 register 0x00 is the
 * identification (0xRRrr00ed), 0x04 liveness (reads back inverted), 0x60
 * raises an interrupt (status |= value; one MSI per write while MSI is
 * enabled), 0x64 acknowledges it. Its MSI capability offers one message
 * with 64-bit addresses and no mask bits.
 */
#include "ecam.h"
#include "rv.h"

#define EDU_VENDOR		0x1234
#define EDU_DEVICE		0x11e8
#define EDU_ID			0x00
#define EDU_LIVENESS		0x04
#define EDU_IRQ_RAISE		0x60
#define EDU_IRQ_ACK		0x64

/* PCI 3.0 6.8.1: the MSI capability. */
#define PCI_CAP_ID_MSI		0x05
#define PCI_MSI_FLAGS		2
#define  PCI_MSI_FLAGS_ENABLE	0x0001
#define  PCI_MSI_FLAGS_QSIZE	0x0070
#define  PCI_MSI_FLAGS_64BIT	0x0080
#define PCI_MSI_ADDRESS_LO	4
#define PCI_MSI_ADDRESS_HI	8
#define PCI_MSI_DATA_32		8
#define PCI_MSI_DATA_64		12
#define PCI_COMMAND		0x04
#define  PCI_COMMAND_INTX_DISABLE 0x400

#define PROBE_WAIT_US		1000000
#define PROBE_SETTLE_US		10000

struct probe_dev {
	const struct ecam *e;
	const struct ecam_func *f;
	unsigned int cap;
	uint64_t bar0;
};

/* Point the function's single MSI message at @addr with @data, enabled. */
static bool probe_msi_program(const struct probe_dev *d, uint64_t addr,
			      uint16_t data)
{
	const struct ecam *e = d->e;
	const struct ecam_func *f = d->f;
	unsigned int c = d->cap;
	uint16_t ctl = ecam_read16(e, f->bus, f->dev, f->fn, c + PCI_MSI_FLAGS);
	bool is64 = ctl & PCI_MSI_FLAGS_64BIT;

	if (!is64 && addr >> 32)
		return false;
	/* Disabled while address and data change; one message (MME 0). */
	ctl &= (uint16_t)~(PCI_MSI_FLAGS_ENABLE | PCI_MSI_FLAGS_QSIZE);
	ecam_write16(e, f->bus, f->dev, f->fn, c + PCI_MSI_FLAGS, ctl);
	ecam_write32(e, f->bus, f->dev, f->fn, c + PCI_MSI_ADDRESS_LO,
		     (uint32_t)addr);
	if (is64) {
		ecam_write32(e, f->bus, f->dev, f->fn, c + PCI_MSI_ADDRESS_HI,
			     (uint32_t)(addr >> 32));
		ecam_write16(e, f->bus, f->dev, f->fn, c + PCI_MSI_DATA_64, data);
	} else {
		ecam_write16(e, f->bus, f->dev, f->fn, c + PCI_MSI_DATA_32, data);
	}
	ecam_write16(e, f->bus, f->dev, f->fn, c + PCI_MSI_FLAGS,
		     ctl | PCI_MSI_FLAGS_ENABLE);
	return true;
}

static bool probe_edu_alive(uint64_t bar0)
{
	uint32_t id = mmio_read32(bar0 + EDU_ID);

	mmio_write32(bar0 + EDU_LIVENESS, 0x12345678u);
	return (id & 0xff) == 0xed &&
	       mmio_read32(bar0 + EDU_LIVENESS) == ~0x12345678u;
}

/*
 * One message to CPU @t with @identity: every CPU's claim count before
 * and after tells who took it.
 */
static bool probe_one(const struct probe_dev *d, struct rv_cpu *t,
		      uint32_t identity)
{
	uint32_t before[RV_MAX_HARTS], claims = 0, others = 0, got;
	uint64_t deadline, t0, t1;
	unsigned int i;
	bool ok;

	for (i = 0; i < rv_ncpus; i++)
		before[i] = __atomic_load_n(&rv_cpus[i].claims, __ATOMIC_ACQUIRE);
	if (!probe_msi_program(d, t->imsic_file, (uint16_t)identity))
		return false;
	mb();
	t0 = rv_time_us();
	mmio_write32(d->bar0 + EDU_IRQ_RAISE, 1);
	deadline = t0 + PROBE_WAIT_US;
	while (__atomic_load_n(&t->claims, __ATOMIC_ACQUIRE) == before[t->cpu] &&
	       rv_time_us() < deadline)
		cpu_relax();
	t1 = rv_time_us();
	udelay(PROBE_SETTLE_US);	/* room for a stray second message */
	mmio_write32(d->bar0 + EDU_IRQ_ACK, 1);

	for (i = 0; i < rv_ncpus; i++) {
		uint32_t n = rv_cpus[i].claims - before[i];

		if (&rv_cpus[i] == t)
			claims = n;
		else
			others += n;
	}
	got = t->last_identity;
	ok = claims == 1 && others == 0 && got == identity;
	if (claims)
		kprintf("msi: hart %u (cpu %u) claimed identity %u through "
			"stopei after %lu us (edu 0000:%02x:%02x.%u -> file "
			"0x%lx)\n", t->hartid, t->cpu, got,
			(unsigned long)(t1 - t0), d->f->bus, d->f->dev, d->f->fn,
			(unsigned long)t->imsic_file);
	else
		kprintf("msi: hart %u (cpu %u) claimed nothing in %u us\n",
			t->hartid, t->cpu, PROBE_WAIT_US);
	kprintf("UMSI {\"event\":\"riscv-msi-probe\",\"cpu\":%u,\"hart\":%u,"
		"\"identity\":%u,\"claimed\":%u,\"file\":\"0x%lx\","
		"\"bdf\":\"0000:%02x:%02x.%u\",\"claims\":%u,\"other_harts\":%u,"
		"\"ok\":%s}\n", t->cpu, t->hartid, identity, claims ? got : 0,
		(unsigned long)t->imsic_file, d->f->bus, d->f->dev, d->f->fn,
		claims, others, ok ? "true" : "false");
	return ok;
}

/* Every CPU in turn through one edu; return the number that failed. */
static int probe_device(struct ecam *e, const struct ecam_func *f)
{
	struct probe_dev d = { .e = e, .f = f };
	unsigned int i;
	int failed = 0;
	uint16_t cmd;

	d.cap = ecam_find_cap(e, f, PCI_CAP_ID_MSI);
	d.bar0 = f->bar[0].cpu_addr;
	if (!d.cap || !f->bar[0].assigned || !probe_edu_alive(d.bar0)) {
		kprintf("UMSI {\"event\":\"riscv-msi-probe\",\"bdf\":"
			"\"0000:%02x:%02x.%u\",\"ok\":false,\"reason\":"
			"\"edu unusable (MSI capability 0x%x, BAR0 0x%lx)\"}\n",
			f->bus, f->dev, f->fn, d.cap, (unsigned long)d.bar0);
		return 1;
	}
	cmd = ecam_read16(e, f->bus, f->dev, f->fn, PCI_COMMAND);
	ecam_write16(e, f->bus, f->dev, f->fn, PCI_COMMAND,
		     cmd | PCI_COMMAND_INTX_DISABLE);
	for (i = 0; i < rv_ncpus; i++) {
		struct rv_cpu *t = &rv_cpus[i];

		if (!t->up || !t->imsic_ok || i >= rv_probe_identities()) {
			kprintf("msi: cpu %u skipped (up %u, file %s)\n", i,
				t->up, t->imsic_ok ? "ok" : "not delivering");
			failed++;
			continue;
		}
		if (!probe_one(&d, t, RV_PROBE_IDENTITY + i))
			failed++;
	}
	/* Leave the device quiet: MSI off again. */
	ecam_write16(e, f->bus, f->dev, f->fn, d.cap + PCI_MSI_FLAGS,
		     ecam_read16(e, f->bus, f->dev, f->fn, d.cap + PCI_MSI_FLAGS) &
		     (uint16_t)~PCI_MSI_FLAGS_ENABLE);
	return failed;
}

/**
 * rv_msi_probe - send each edu's MSI to every CPU's S-level interrupt file
 * @e: the enumerated PCI hierarchy (BARs assigned, memory decoding and
 *     bus mastering on)
 *
 * CPU i gets identity RV_PROBE_IDENTITY + i; every CPU enabled all the
 * probe identities, so a message that reached the wrong file or carried
 * the wrong identity is claimed, seen and reported rather than lost.
 *
 * Return: the number of failed (device, CPU) pairs, or -1 when there is
 * no edu (nothing was tried).
 */
int rv_msi_probe(struct ecam *e)
{
	const struct ecam_func *f;
	unsigned int idx;
	int failed = 0;

	if (!ecam_find(e, EDU_VENDOR, EDU_DEVICE, 0)) {
		kprintf("msi: no edu device; MSI probe skipped\n");
		return -1;
	}
	if (!rv_plat.imsic.present) {
		kprintf("UMSI {\"event\":\"riscv-msi-probe\",\"ok\":false,"
			"\"reason\":\"no S-level IMSIC (-machine virt,"
			"aia=aplic-imsic)\"}\n");
		return 1;
	}
	for (idx = 0; (f = ecam_find(e, EDU_VENDOR, EDU_DEVICE, idx)); idx++)
		failed += probe_device(e, f);
	return failed;
}
