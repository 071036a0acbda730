// SPDX-License-Identifier: MIT
/*
 * host.c - the uMSI host interface (include/umsi/host.h) on the arm64
 * kernel, with the GICv3 ITS back end (umsi_ctl_arm64_its).
 *
 *  - configuration space: ECAM, through the shared kernel/common/pci.c;
 *  - MMIO: the MMU is off, so physical addresses are the virtual ones and
 *    every access is Device-nGnRnE; volatile 32-bit accesses;
 *  - locks: test-and-set spinlocks that save DAIF and mask IRQs;
 *  - memory: the kernel heap (kernel/common/heap.c);
 *  - phys_alloc/phys_free (the ITS's device and collection tables, its
 *    command queue, each device's ITT): the table region main.c keeps
 *    apart from the heap, shared with the redistributors' tables. With
 *    the MMU off the CPU's accesses are non-cacheable, so whatever
 *    cacheability the ITS is told (GITS_BASER, GITS_CBASER) it sees what
 *    the CPU wrote; with the MMU on this memory would have to be Normal
 *    inner-shareable write-back, as host.h asks;
 *  - clock: CNTVCT_EL0 at CNTFRQ_EL0;
 *  - CPUs: device-tree order, hwid = MPIDR affinity (Aff2.Aff1.Aff0);
 *    cross-calls by SGI 1 (smp.c);
 *  - irq_pending(INTID): the bit of the current CPU's LPI pending table
 *    (GICR_PENDBASER), when the kernel keeps the LPI tables; no eoi (the
 *    kernel writes ICC_EOIR1_EL1) and no send_ipi.
 * No INTx (the distributor's SPIs are not uMSI's here) and no remapping.
 */
#include <umsi/ctl.h>
#include <umsi/host.h>
#include <umsi/irq.h>

#include "a64.h"
#include "host.h"
#include "pci.h"
#include "smp.h"


static void *h_phys_alloc(void *host, size_t size, size_t align,
			  uint64_t *phys)
{
	void *p;

	(void)host;
	p = table_alloc(size, align < 16 ? 16 : align);
	if (p)
		*phys = (uint64_t)(uintptr_t)p;
	return p;
}

static void h_phys_free(void *host, void *virt, size_t size)
{
	(void)host;
	table_free(virt, size);
}

/*
 * MSI needs the ITS (GICv2: the v2m frame) as the host bridge's msi-map
 * or msi-parent target.
 */
static uint32_t h_platform_flags(void *host)
{
	(void)host;
	if (plat.gic_version == 2)
		return plat.v2m && (plat.have_msi_map ?
				    plat.msi_map_phandle == plat.v2m_phandle :
				    plat.msi_parent == plat.v2m_phandle) ?
		       0 : UMSI_PLAT_NO_MSI;
	if (!plat.its)
		return UMSI_PLAT_NO_MSI;
	if (plat.have_msi_map ? plat.msi_map_phandle != plat.its_phandle :
	    plat.msi_parent != plat.its_phandle)
		return UMSI_PLAT_NO_MSI;
	return 0;
}

/* LPI @intid pending at this CPU's redistributor (umsi/host.h). */
static bool h_irq_pending(void *host, uint32_t intid)
{
	(void)host;
	/* GICv2m: a pending SPI follows its target; uMSI never asks. */
	if (plat.gic_version == 2)
		return false;
	return gic_lpi_pending(&cpus[this_cpu_id()].rd, intid);
}

/* ---- INTx: SPIs the host bridge's interrupt-map names ---------------- */

/* The SPI INTx pin @pin of root-bus slot @slot drives (kernel/common/pci.h). */
int karch_intx_root(uint32_t slot, uint8_t pin)
{
	uint32_t dev = (slot << 11) & plat.intx_mask_dev;
	uint32_t mp = pin & plat.intx_mask_pin;
	unsigned i;

	for (i = 0; i < plat.nintx; i++)
		if (plat.intx[i].dev == dev && plat.intx[i].pin == mp)
			return (int)plat.intx[i].intid;
	return -1;
}

/* Which identity uMSI gave each wired SPI (+1; 0: none): arm64_irq(). */
volatile uint16_t a64_wired_id[1020];
static struct spinlock wired_lock;

#define GICD_IGROUPR		0x080
#define GICD_ISENABLER		0x100
#define GICD_ICENABLER		0x180
#define GICD_IPRIORITYR		0x400
#define GICD_ITARGETSR		0x800
#define GICD_ICFGR		0xc00
#define GICD_IROUTER		0x6000

static bool intx_level_low(uint32_t intid)
{
	unsigned i;

	for (i = 0; i < plat.nintx; i++)
		if (plat.intx[i].intid == intid)
			return plat.intx[i].level_low;
	return false;
}

static int h_intx_route(void *host, umsi_bdf_t bdf, uint8_t pin,
			struct umsi_intx_route *route)
{
	int intid = pci_intx_gsi(bdf, pin);

	(void)host;
	if (intid < 32 || intid >= 1020)
		return -UMSI_ENOENT;
	route->gsi = (uint32_t)intid;
	route->trigger = UMSI_INTX_LEVEL;
	route->polarity = intx_level_low((uint32_t)intid) ?
			  UMSI_INTX_ACTIVE_LOW : UMSI_INTX_ACTIVE_HIGH;
	return 0;
}

static void dist_rmw(uint64_t reg, uint32_t clear, uint32_t set)
{
	mmio_write32(plat.gicd + reg,
		     (mmio_read32(plat.gicd + reg) & ~clear) | set);
}

/*
 * Aim SPI @gsi where the back end's wired message says (umsi/ctl.h,
 * UMSI_ARM_WIRED_MSG: the CPU, the identity): level-sensitive, priority
 * 0xa0, Group 1 on a GICv3, routed (GICD_IROUTER: the CPU's affinity; on
 * a GICv2 GICD_ITARGETSR: its interface), enabled unless masked. The
 * identity is remembered for arm64_irq(). Any context, under uMSI's
 * locks: MMIO and a spinlock only.
 */
static int h_gsi_program(void *host, uint32_t gsi,
			 const struct umsi_gsi_entry *e)
{
	uint32_t cpu = (uint32_t)e->msg.address, sh = (gsi % 4) * 8;
	unsigned long fl;

	(void)host;
	if (!(e->msg.address & UMSI_ARM_WIRED_MSG) || gsi < 32 || gsi >= 1020 ||
	    cpu >= plat.ncpus || e->msg.data >= 0xffff ||
	    e->trigger != UMSI_INTX_LEVEL)
		return -UMSI_EINVAL;
	fl = spin_lock_irqsave(&wired_lock);
	mmio_write32(plat.gicd + GICD_ICENABLER + (gsi / 32) * 4, 1u << (gsi % 32));
	dist_rmw(GICD_ICFGR + (gsi / 16) * 4, 2u << ((gsi % 16) * 2), 0);
	dist_rmw(GICD_IPRIORITYR + (gsi & ~3u), 0xffu << sh, 0xa0u << sh);
	if (plat.gic_version == 2) {
		dist_rmw(GICD_ITARGETSR + (gsi & ~3u), 0xffu << sh,
			 (1u << cpus[cpu].gic_if) << sh);
	} else {
		uint64_t m = cpus[cpu].mpidr ? cpus[cpu].mpidr : plat.mpidr[cpu];
		uint64_t aff = (m & 0xffffff) | ((m >> 32) & 0xff) << 32;

		dist_rmw(GICD_IGROUPR + (gsi / 32) * 4, 0, 1u << (gsi % 32));
		mmio_write32(plat.gicd + GICD_IROUTER + 8 * gsi, (uint32_t)aff);
		mmio_write32(plat.gicd + GICD_IROUTER + 8 * gsi + 4,
			     (uint32_t)(aff >> 32));
	}
	a64_wired_id[gsi] = (uint16_t)(e->msg.data + 1);
	if (!e->masked)
		mmio_write32(plat.gicd + GICD_ISENABLER + (gsi / 32) * 4,
			     1u << (gsi % 32));
	spin_unlock_irqrestore(&wired_lock, fl);
	return 0;
}

const struct umsi_host_ops kernel_host_ops = {
	KHOST_COMMON_OPS,
	.phys_alloc = h_phys_alloc,
	.phys_free = h_phys_free,
	.platform_flags = h_platform_flags,
	.irq_pending = h_irq_pending,
	.intx_route = h_intx_route,
	.gsi_program = h_gsi_program,
};

/*
 * The ITS back end: uMSI's LPIs from A64_UMSI_FIRST_LPI, A64_UMSI_NVEC a
 * CPU; the LPI tables uMSI's (every CPU's redistributor frame, rd_frame)
 * unless the kernel keeps its own LPIs (then all of uMSI's are enabled in
 * the kernel's property table at boot, main.c); for each CPU
 * the RDbase MAPC takes (processor number when GITS_TYPER.PTA is 0, as on
 * QEMU, else the redistributor's address); the msi-map entry.
 */
static uint64_t its_targets[ARM64_MAX_CPUS];
static uint64_t its_frames[ARM64_MAX_CPUS];
static struct umsi_its_config its_cfg;

/*
 * The GICv2m back end: the v2m frame and the distributor; each CPU's
 * interface number as its GICD_ITARGETSR0 said when it came up (smp.c).
 */
static uint8_t v2m_if[ARM64_MAX_CPUS];
static struct umsi_gicv2m_config v2m_cfg;

static void arch_umsi_config_v2m(struct umsi_config *cfg)
{
	unsigned i;

	for (i = 0; i < plat.ncpus; i++)
		v2m_if[i] = cpus[i].gic_if_ok ? (uint8_t)cpus[i].gic_if :
			    UMSI_GICV2M_NO_IF;
	v2m_cfg.frame = plat.v2m;
	v2m_cfg.dist = plat.gicd;
	v2m_cfg.nr_cpus = plat.ncpus;
	v2m_cfg.cpu_if = v2m_if;
	v2m_cfg.wired_spis = plat.nintx != 0;
	cfg->ctl = &umsi_ctl_arm64_gicv2m;
	cfg->ctl_config = &v2m_cfg;
}

void arch_umsi_config(struct umsi_config *cfg)
{
	bool pta = plat.its && (mmio_read64(plat.its + 0x8) & (1ull << 19));
	unsigned i;

	if (plat.gic_version == 2) {
		arch_umsi_config_v2m(cfg);
		return;
	}
	for (i = 0; i < plat.ncpus; i++)
		its_targets[i] = !cpus[i].rd.base ? UMSI_ITS_NO_RD :
				 pta ? cpus[i].rd.base : cpus[i].rd.procnum;
	its_cfg.its_base = plat.its;
	its_cfg.first_lpi = A64_UMSI_FIRST_LPI;
	its_cfg.nvec = A64_UMSI_NVEC;
	its_cfg.lpi_id_bits = gic.id_bits;
	its_cfg.itt_events = 0;
	its_cfg.nr_cpus = plat.ncpus;
	its_cfg.rd_target = its_targets;
	/* The LPI tables: uMSI's, unless the kernel keeps LPIs (main.c). */
	if (gic.lpis_to_umsi) {
		for (i = 0; i < plat.ncpus; i++)
			its_frames[i] = cpus[i].rd.base;
		its_cfg.rd_frame = its_frames;
	}
	if (plat.have_msi_map) {
		its_cfg.rid_base = plat.msi_map_rid;
		its_cfg.devid_base = plat.msi_map_base;
		its_cfg.rid_count = plat.msi_map_len;
	}
	its_cfg.wired_spis = plat.nintx != 0;
	cfg->ctl = &umsi_ctl_arm64_its;
	cfg->ctl_config = &its_cfg;
}


/*
 * The ITS's part of a device line's message vector (karch.h): the EventID
 * the function's message carries, read from the function (the back end
 * gives functions that share a DeviceID events of their own, so it is not
 * always the message number), translated to the LPI of the vector's
 * identity (global: first_lpi + identity, whatever the CPU) and the
 * collection of its CPU.
 */
int karch_vector_fields(char *buf, size_t size, const struct umsi_irq_info *ii)
{
	uint64_t addr;
	uint32_t data;
	bool msix = ii->chip && !strcmp(ii->chip, "PCI-MSI-X");

	/* GICv2m: the SPI is the frame's first plus the identity. */
	if (plat.gic_version == 2)
		return ksnprintf(buf, size, ",\"spi\":%u",
				 gic2.spi_base + ii->vector);

	if (pci_read_msg(ii->bdf & 0xffff, msix, ii->hwirq, &addr, &data))
		return ksnprintf(buf, size, ",\"lpi\":%u",
				 A64_UMSI_FIRST_LPI + ii->vector);
	return ksnprintf(buf, size, ",\"event_id\":%u,\"lpi\":%u", data,
			 A64_UMSI_FIRST_LPI + ii->vector);
}

