/* SPDX-License-Identifier: MIT */
/*
 * host.c - the uMSI host interface (include/umsi/host.h) on the riscv64
 * kernel, with the RISC-V IMSIC back end (umsi_ctl_riscv_imsic).
 *
 *  - configuration space: ECAM, through the shared kernel/common/pci.c;
 *  - MMIO: the kernel runs with satp = 0, so physical addresses are the
 *    virtual ones (the machine's PMAs make device ranges uncached); the
 *    accessors fence as Linux's readl/writel do;
 *  - locks: test-and-set spinlocks that save and clear sstatus.SIE;
 *  - memory: the kernel heap (kernel/common/heap.c: bump pointer and free lists
 *    over the RAM after the image, below the device tree);
 *  - clock: the time CSR at the device tree's timebase-frequency;
 *  - CPUs: device-tree order, hwid = hart ID; cross-calls by SBI IPI
 *    (smp.c);
 *  - irq_pending(id): the eip bit of the current hart's S-level
 *    interrupt file, csrw siselect; csrr sireg (imsic.c); no eoi (the
 *    kernel claims through stopei) and no send_ipi.
 *  - INTx: intx_route = the host bridge's interrupt-map after the bridge
 *    swizzle (kernel/common/pci.c, karch_intx_root), an S-level APLIC source,
 *    level; gsi_program = that source's target register in MSI mode
 *    (aplic.c): the hart whose file the composed message names, and the
 *    identity.
 * No remapping.
 */
#include <umsi/ctl.h>
#include <umsi/host.h>
#include <umsi/irq.h>

#include "rv.h"
#include "aplic.h"
#include "host.h"
#include "pci.h"
#include "smp.h"


/* MSI needs the S-level IMSIC as the host bridge's msi-parent. */
static uint32_t h_platform_flags(void *host)
{
	(void)host;
	if (!rv_plat.imsic.present || rv_plat.pci.msi_parent != rv_plat.imsic.phandle)
		return UMSI_PLAT_NO_MSI;
	return 0;
}

/* The eip bit of @id in this hart's S-level file (AIA 3.8: eip words
 * at siselect 0x80 + 2k on RV64, identity i in word i / 64, bit i % 64). */
static bool h_irq_pending(void *host, uint32_t id)
{
	(void)host;
	return (imsic_reg_read(0x80 + 2 * (id / 64)) >> (id % 64)) & 1;
}

/* The APLIC source INTx pin @pin of root-bus slot @slot drives (kernel/common/pci.h). */
int karch_intx_root(uint32_t slot, uint8_t pin)
{
	const struct rv_platform *p = &rv_plat;
	uint32_t dev = (slot << 11) & p->pci.intx_mask_dev;
	uint32_t mp = pin & p->pci.intx_mask_pin;

	for (unsigned int i = 0; i < p->pci.nintx; i++)
		if (p->pci.intx[i].dev == dev && p->pci.intx[i].pin == mp)
			return (int)p->pci.intx[i].source;
	return -1;
}

static bool intx_level_low(uint32_t source)
{
	for (unsigned int i = 0; i < rv_plat.pci.nintx; i++)
		if (rv_plat.pci.intx[i].source == source)
			return rv_plat.pci.intx[i].level_low;
	return false;
}

static int h_intx_route(void *host, umsi_bdf_t bdf, uint8_t pin,
			struct umsi_intx_route *route)
{
	int src = pci_intx_gsi(bdf, pin);

	(void)host;
	if (src < 0 || !rv_plat.aplic.present)
		return -UMSI_ENOENT;
	route->gsi = (uint32_t)src;
	route->trigger = UMSI_INTX_LEVEL;
	route->polarity = intx_level_low((uint32_t)src) ?
			  UMSI_INTX_ACTIVE_LOW : UMSI_INTX_ACTIVE_HIGH;
	return 0;
}

/*
 * The message the IMSIC back end composed names a hart's file: the APLIC
 * takes the file's index in its MSI address layout (the S-level files of
 * QEMU virt are 4 KiB apart from the IMSIC's base, no groups) and the
 * identity. Called under uMSI's locks, any context: MMIO only.
 */
static int h_gsi_program(void *host, uint32_t gsi,
			 const struct umsi_gsi_entry *e)
{
	uint64_t stride = 1ull << (12 + rv_plat.imsic.guest_bits);
	uint32_t cpu;

	(void)host;
	for (cpu = 0; cpu < rv_plat.nharts; cpu++)
		if (rv_plat.harts[cpu].imsic_file &&
		    rv_plat.harts[cpu].imsic_file == e->msg.address)
			break;
	if (cpu == rv_plat.nharts || e->msg.address < rv_plat.imsic.base ||
	    e->trigger != UMSI_INTX_LEVEL)
		return -UMSI_EINVAL;
	return aplic_program(gsi, cpu,
			     (uint32_t)((e->msg.address - rv_plat.imsic.base) /
					stride), e->msg.data,
			     e->polarity == UMSI_INTX_ACTIVE_LOW, e->masked) ?
	       -UMSI_EINVAL : 0;
}

const struct umsi_host_ops kernel_host_ops = {
	KHOST_COMMON_OPS,
	.platform_flags = h_platform_flags,
	.irq_pending = h_irq_pending,
	.intx_route = h_intx_route,
	.gsi_program = h_gsi_program,
};

/*
 * The IMSIC back end: riscv,num-ids, and for each CPU number the
 * physical address of its hart's S-level file (0 for a hart without).
 * Every identity is uMSI's: cross-calls go by SBI IPI.
 */
static uint64_t imsic_files[RV_MAX_HARTS];
static struct umsi_imsic_config imsic_cfg;

void arch_umsi_config(struct umsi_config *cfg)
{
	for (unsigned int i = 0; i < rv_ncpus; i++)
		imsic_files[i] = rv_cpus[i].imsic_file;
	imsic_cfg.num_ids = rv_plat.imsic.num_ids;
	imsic_cfg.first_id = 0;
	imsic_cfg.nr_files = rv_ncpus;
	imsic_cfg.file_addr = imsic_files;
	cfg->ctl = &umsi_ctl_riscv_imsic;
	cfg->ctl_config = &imsic_cfg;
}

