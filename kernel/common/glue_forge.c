/* SPDX-License-Identifier: MIT */
/*
 * glue_forge.c - `umsi.forge=1` (x86): what interrupt remapping buys.
 *
 * A device that can write a dword anywhere can write one into the
 * interrupt window (0xfeexxxxx): a message. Without remapping the CPU
 * cannot tell it from a real one. Here QEMU's edu device (claimed by the
 * edu driver; QEMU needs `-device edu,dma_mask=0xffffffff` to reach the
 * window) forges messages with its DMA engine (hw/misc/edu.c: 0x80
 * source, 0x88 destination, 0x90 count, 0x98 command: bit 0 start, bit 1
 * edu buffer to RAM; the buffer is at device address 0x40000): the data
 * dword is copied from RAM into the buffer, then written from the buffer
 * to the message address, 4 bytes. The kernel never turns on DMA
 * translation, so only the interrupt window goes through the unit.
 *
 * Cases, each reported as one UMSI forge line (kernel/README.md):
 *   without remapping:
 *     unowned_vector  a compatibility-format message to a vector nobody
 *                     owns on the last CPU: uMSI counts it as spurious;
 *     victim          the e1000e's MSI-X vector 0 message, read from its
 *                     table: the e1000e's handler runs, finds no cause;
 *     victim_msi      the same message as edu's own MSI (its capability
 *                     holds it for one raise; no DMA): the same;
 *   with remapping:
 *     victim          the e1000e's remappable message (its handle): the
 *                     entry validates the e1000e's source ID, not edu's
 *                     (QEMU 7.2 gives edu's DMA no requester ID, so it
 *                     cannot check: delivered there);
 *     victim_msi      the same as edu's MSI, which carries edu's
 *                     requester ID: rejected by source-ID validation;
 *     unowned_handle  a handle whose entry is not present;
 *     beyond_table    a handle past the end of the table;
 *     compat          a compatibility-format message (GCMD.CFI clear;
 *                     QEMU 7.2 implements no CFI: delivered there).
 * handled_delta counts handler calls of every kernel driver vector,
 * not_mine_delta those that found no cause, irq_delta the victim IRQ's
 * count in uMSI, spurious_delta uMSI's spurious count over every CPU.
 */
#include <umsi/irq.h>
#include <umsi/pci.h>

#include "kernel.h"
#include "drivers/drivers.h"
#include "glue.h"
#include "smp.h"

#if defined(__x86_64__)

#include <umsi/matrix.h>
#include <umsi/x86.h>

#include "iommu.h"

#define EDU_DMA_SRC	0x80
#define EDU_DMA_DST	0x88
#define EDU_DMA_CNT	0x90
#define EDU_DMA_CMD	0x98
#define EDU_DMA_RUN	0x1u
#define EDU_DMA_TO_RAM	0x2u
#define EDU_BUF		0x40000u
#define EDU_RAISE	0x60
#define EDU_ACK		0x64

struct forge_counts {
	uint64_t calls, none, spurious, irq;
};

static struct kdev *find_driver(struct glue *gl, const char *name)
{
	for (uint32_t i = 0; i < pci_ndevs; i++) {
		struct kdev *kd = gl->devs[i].kd;

		if (kd && pci_devs[i].present && !strcmp(kd->drv->name, name))
			return kd;
	}
	return NULL;
}

/* One DMA of 4 bytes; false when the engine does not finish in 2 s. */
static bool edu_dma(struct kdev *edu, uint32_t src, uint32_t dst, uint32_t cmd)
{
	uint64_t end = clock_ns() + 2000000000ull;

	mmio_write32(edu->bar0 + EDU_DMA_SRC, src);
	mmio_write32(edu->bar0 + EDU_DMA_DST, dst);
	mmio_write32(edu->bar0 + EDU_DMA_CNT, 4);
	mmio_write32(edu->bar0 + EDU_DMA_CMD, cmd | EDU_DMA_RUN);
	while (mmio_read32(edu->bar0 + EDU_DMA_CMD) & EDU_DMA_RUN) {
		if (clock_ns() > end)
			return false;
		udelay(1000);
	}
	return true;
}

static void counts(struct glue *gl, struct umsi_system *sys,
		   uint32_t victim_irq, struct forge_counts *c)
{
	struct umsi_irq_info ii;

	memset(c, 0, sizeof(*c));
	for (uint32_t i = 0; i < pci_ndevs; i++) {
		struct kdev *kd = gl->devs[i].kd;

		for (uint32_t n = 0; kd && n < kd->nvec; n++) {
			c->calls += kd->vecs[n].count + kd->vecs[n].none;
			c->none += kd->vecs[n].none;
		}
	}
	for (uint32_t cpu = 0; cpu < smp_ncpus; cpu++)
		c->spurious += umsi_spurious_count(sys, cpu);
	if (victim_irq && !umsi_irq_get_info(sys, victim_irq, &ii))
		c->irq = ii.total;
}

/* One UMSI forge line: what the counters did between @a and @b. */
static void forge_line(const char *name, const char *target, uint32_t addr,
		       uint32_t data, const struct forge_counts *a,
		       const struct forge_counts *b, const char *dma)
{
	kprintf("UMSI {\"event\":\"forge\",\"case\":\"%s\",\"target\":\"%s\","
		"\"address\":\"0x%x\",\"data\":\"0x%x\",\"handled_delta\":%lu,"
		"\"not_mine_delta\":%lu,\"irq_delta\":%lu,\"spurious_delta\":%lu,"
		"\"remap\":%s,\"dma\":\"%s\"}\n", name, target, addr, data,
		b->calls - a->calls, b->none - a->none, b->irq - a->irq,
		b->spurious - a->spurious, iommu_remap_active() ? "true" : "false",
		dma);
}

/*
 * Write @data to @addr from the edu, wait for whatever it causes, and
 * report the counters' change. @victim_irq: the IRQ the message names
 * (0: none).
 */
static void forge(struct glue *gl, struct umsi_system *sys, struct kdev *edu,
		  uint32_t *buf, const char *name, const char *target, uint32_t addr,
		  uint32_t data, uint32_t victim_irq)
{
	struct forge_counts a, b;
	bool ok;

	buf[0] = data;
	counts(gl, sys, victim_irq, &a);
	ok = edu_dma(edu, (uint32_t)(uint64_t)buf, EDU_BUF, 0) &&
	     edu_dma(edu, EDU_BUF, addr, EDU_DMA_TO_RAM);
	udelay(20000);		/* a message would have arrived by now */
	counts(gl, sys, victim_irq, &b);
	forge_line(name, target, addr, data, &a, &b, ok ? "done" : "timeout");
	if (!ok)
		glue_fail();
}

/*
 * The same message sent as edu's own MSI: its capability briefly holds
 * @addr/@data (restored after), and a raise (0x60) sends it. Unlike a
 * DMA write, QEMU's MSI carries edu's requester ID, so the unit can
 * validate the source. The raise is acknowledged (0x64) before the
 * capability is restored, so edu sends nothing more.
 */
static void forge_msi(struct glue *gl, struct umsi_system *sys,
		      struct kdev *edu, const char *name, const char *target,
		      uint32_t addr, uint32_t data, uint32_t victim_irq)
{
	uint32_t bdf = edu->pci->bdf, cap = edu->pci->msi_cap;
	uint16_t ctl = (uint16_t)pci_cfg_read(bdf, (uint16_t)(cap + 2), 2);
	uint16_t doff = (uint16_t)(cap + (ctl & (1u << 7) ? 12 : 8));
	uint32_t lo = pci_cfg_read(bdf, (uint16_t)(cap + 4), 4);
	uint32_t hi = ctl & (1u << 7) ? pci_cfg_read(bdf, (uint16_t)(cap + 8), 4) : 0;
	uint32_t d = pci_cfg_read(bdf, doff, 2);
	struct forge_counts a, b;

	counts(gl, sys, victim_irq, &a);
	pci_cfg_write(bdf, (uint16_t)(cap + 4), 4, addr);
	if (ctl & (1u << 7))
		pci_cfg_write(bdf, (uint16_t)(cap + 8), 4, 0);
	pci_cfg_write(bdf, doff, 2, data & 0xffff);
	mmio_write32(edu->bar0 + EDU_RAISE, 1);
	udelay(20000);
	mmio_write32(edu->bar0 + EDU_ACK, 1);
	pci_cfg_write(bdf, (uint16_t)(cap + 4), 4, lo);
	if (ctl & (1u << 7))
		pci_cfg_write(bdf, (uint16_t)(cap + 8), 4, hi);
	pci_cfg_write(bdf, doff, 2, d);
	counts(gl, sys, victim_irq, &b);
	forge_line(name, target, addr, data, &a, &b, "none");
}

/* Is @vector on @cpu some IRQ's? */
static bool vector_owned(struct umsi_system *sys, uint32_t cpu, uint32_t vector)
{
	struct umsi_irq_info ii;

	for (int irq = umsi_irq_next(sys, 0); irq >= 0;
	     irq = umsi_irq_next(sys, (uint32_t)irq + 1))
		if (!umsi_irq_get_info(sys, (uint32_t)irq, &ii) &&
		    ii.cpu == cpu && ii.vector == vector)
			return true;
	return false;
}

/*
 * A compatibility-format message to a vector nobody owns on the last
 * online CPU an 8-bit destination reaches. Returns false when none.
 */
static bool unowned_msg(struct umsi_system *sys, char *target, size_t size,
			uint32_t *addr, uint32_t *data)
{
	for (uint32_t cpu = smp_ncpus; cpu-- > 0;) {
		struct umsi_msg m;

		if (!smp_cpu_online(cpu) || smp_cpu_apic_id(cpu) > UMSI_X86_MAX_DEST8)
			continue;
		for (uint32_t v = UMSI_MATRIX_X86_ALLOC_LAST;
		     v > UMSI_MATRIX_X86_ALLOC_FIRST; v--) {
			if (vector_owned(sys, cpu, v) ||
			    umsi_x86_msg_compose(smp_cpu_apic_id(cpu), (uint8_t)v, 0, &m))
				continue;
			ksnprintf(target, size, "cpu %u apic_id %u vector 0x%x",
				  cpu, smp_cpu_apic_id(cpu), v);
			*addr = (uint32_t)m.address;
			*data = m.data;
			return true;
		}
	}
	return false;
}

/* The message of MSI-X entry @index of @d, as the function would send it. */
static bool msix_msg(const struct pci_dev *d, uint32_t index, uint32_t *addr,
		     uint32_t *data)
{
	uint32_t t = pci_cfg_read(d->bdf, d->msix_cap + 4, 4);
	const struct pci_bar *b = &d->bar[t & 7];
	uint64_t e;

	if (!d->msix_cap || (t & 7) > 5 || b->kind == PCI_BAR_IO ||
	    b->kind == PCI_BAR_NONE || !b->addr)
		return false;
	e = (uint64_t)mm_map_mmio(b->addr + (t & ~7u) + 16ull * index, 16);
	if (mmio_read32(e + 4))
		return false;	/* above 4 GiB: not a message */
	*addr = mmio_read32(e);
	*data = mmio_read32(e + 8);
	return true;
}

/* A remappable-format address naming @handle (VT-d 5.1.2.2), no SHV. */
static uint32_t remap_addr(uint32_t handle)
{
	return UMSI_X86_MSI_BASE | (handle & 0x7fff) << 5 | UMSI_X86_ADDR_REMAP |
	       ((handle >> 15) & 1) << 2;
}

/*
 * AMD-Vi: edu's own MSI (its requester ID, so its own table) naming an
 * index of that table nobody owns (RemapEn clear), and one past its end
 * (the device table entry's IntTabLen): both aborted by the unit.
 */
static void forge_amdvi(struct glue *gl, struct umsi_system *sys,
			struct kdev *edu)
{
	uint32_t devid = edu->pci->bdf & 0xffff, n, i;
	const volatile uint32_t *t;
	char target[96];

	if (!edu->pci->msi_cap || umsi_pci_mode(edu->udev) != UMSI_MODE_MSI ||
	    iommu_amdvi_table(devid, &n, &t)) {
		kprintf("forge: edu has no MSI table of its own: no index cases\n");
		return;
	}
	for (i = n; i-- > 0 && (t[i] & 1);)
		;
	if (i < n) {
		ksnprintf(target, sizeof(target), "DeviceID 0x%x entry %u of %u "
			  "(RemapEn clear)", devid, i, n);
		forge_msi(gl, sys, edu, "unowned_index", target, 0xfee00000u, i, 0);
	}
	if (n < 512) {
		ksnprintf(target, sizeof(target), "DeviceID 0x%x entry %u "
			  "(beyond the %u-entry table)", devid, n, n);
		forge_msi(gl, sys, edu, "beyond_table", target, 0xfee00000u, n, 0);
	}
}

void glue_forge(struct glue *gl)
{
	struct umsi_system *sys = kernel_umsi_system();
	struct kdev *edu = find_driver(gl, "edu"),
		    *nic = find_driver(gl, "e1000e");
	bool remap = iommu_remap_active();
	uint32_t *buf, addr, data, n;
	char target[96];

	if (!sys || !edu || !edu->bar0) {
		kprintf("forge: umsi.forge needs an edu claimed by its driver "
			"(umsi.drivers=edu,...)\n");
		glue_fail();
		return;
	}
	buf = kalloc(4096);
	if (!buf)
		panic("forge: out of memory");
	kprintf("forge: edu %02x:%02x.%u writes, remapping %s\n",
		PCI_BUS(edu->pci->bdf), PCI_DEV(edu->pci->bdf),
		PCI_FN(edu->pci->bdf), remap ? "on" : "off");

	/* The e1000e's MSI-X vector 0, as its table holds it. */
	if (nic && nic->nvec && umsi_pci_mode(nic->udev) == UMSI_MODE_MSIX &&
	    msix_msg(nic->pci, nic->vecs[0].hw, &addr, &data)) {
		ksnprintf(target, sizeof(target),
			  "e1000e 0000:%02x:%02x.%u msix %u irq %u",
			  PCI_BUS(nic->pci->bdf), PCI_DEV(nic->pci->bdf),
			  PCI_FN(nic->pci->bdf), nic->vecs[0].hw, nic->vecs[0].irq);
		forge(gl, sys, edu, buf, "victim", target, addr, data, nic->vecs[0].irq);
		if (edu->pci->msi_cap && umsi_pci_mode(edu->udev) == UMSI_MODE_MSI &&
		    !(data >> 16))
			forge_msi(gl, sys, edu, "victim_msi", target, addr, data,
				  nic->vecs[0].irq);
	} else {
		kprintf("forge: no e1000e in MSI-X mode: no victim case\n");
	}

	if (unowned_msg(sys, target, sizeof(target), &addr, &data))
		forge(gl, sys, edu, buf, remap ? "compat" : "unowned_vector", target,
		      addr, data, 0);
	else
		kprintf("forge: no free vector on any CPU\n");

	n = iommu_irte_count();
	if (remap && n) {
		uint32_t h = n;
		uint8_t vec;

		/* The highest entry uMSI has not handed out. */
		while (h-- > 0 && !iommu_irte_vector(h, &vec))
			;
		if (h < n) {
			ksnprintf(target, sizeof(target),
				  "irte %u of %u (not present)", h, n);
			forge(gl, sys, edu, buf, "unowned_handle", target,
			      remap_addr(h), 0, 0);
		}
		if (n <= 0xffff) {
			ksnprintf(target, sizeof(target),
				  "irte %u (beyond the %u-entry table)", n, n);
			forge(gl, sys, edu, buf, "beyond_table", target,
			      remap_addr(n), 0, 0);
		}
	}
	if (remap && iommu_amdvi_base())
		forge_amdvi(gl, sys, edu);
	kfree(buf, 4096);
}

#else

void glue_forge(struct glue *gl)
{
	(void)gl;
	kprintf("forge: umsi.forge is x86 only; ignored\n");
}

#endif
