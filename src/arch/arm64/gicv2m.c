/* SPDX-License-Identifier: MIT */
/*
 * The Arm GICv2m back end (umsi/internal/ctl.h): MSIs as SPIs of a GICv2
 * distributor, through a v2m MSI frame (Arm Server Base System
 * Architecture, the GICv2m extension; QEMU's arm_gicv2m model).
 *
 * The frame owns a run of SPIs, which its MSI_TYPER register names
 * (offset 0x008: the first SPI's INTID in bits 25:16, how many in bits
 * 9:0). A message is a 32-bit write of an SPI's INTID to the frame's
 * MSI_SETSPI_NS register (offset 0x040): the distributor makes that SPI
 * pending, and its CPU targets field (GICD_ITARGETSR, a byte an INTID,
 * bit n = CPU interface n) says which CPU takes it. So the message names
 * no CPU: identities are global, one SPI each for the IRQ's life
 * (umsi_ctl_domain_global, capped at the frame's SPIs), and a move
 * rewrites the SPI's target byte and nothing in the device.
 *
 * The distributor's registers the back end writes, for its SPIs only
 * (IHI 0048B, 4.3): GICD_ICFGR (edge-triggered: an MSI is an edge),
 * GICD_IPRIORITYR, GICD_ITARGETSR, GICD_ISENABLER / GICD_ICENABLER (on
 * at compose, off at release) and GICD_ISPENDR / GICD_ICPENDR (a resend;
 * a stale pending state dropped at release). Byte registers are written
 * as the 32-bit words that hold them, read-modify-write under the back
 * end's lock. The kernel owns the rest: GICD_CTLR, the CPU interfaces
 * (GICC_IAR / GICC_EOIR: uMSI ends nothing), SGIs and PPIs.
 *
 * Pending state follows the target: a pending SPI whose target changes is
 * pending on the new CPU interface and no longer on the old one (IHI
 * 0048B 4.3.12), so nothing is ever left on the CPU an IRQ leaves
 * (pending() is false) and an active one ends where it began (the core's
 * dispatch sync covers it). QEMU's GICv2 keeps pending state per CPU
 * interface instead; a move therefore makes a pending SPI pending again
 * (v2m_repend), which the architecture makes a no-op. A GICv2 distributor targets CPU interfaces
 * 0-7 only: a CPU without one (umsi_gicv2m_config.cpu_if) is unreachable.
 */
#include <umsi/ctl.h>
#include <umsi/internal/ctl.h>
#include <umsi/internal/hostcall.h>
#include <umsi/internal/lib.h>

/* The v2m frame (4 KiB) and its registers. */
#define V2M_FRAME_SIZE          0x1000u
#define V2M_MSI_TYPER           0x008u
#define V2M_MSI_SETSPI_NS       0x040u
#define V2M_TYPER_BASE(t)       (((t) >> 16) & 0x3ffu)
#define V2M_TYPER_NUM(t)        ((t) & 0x3ffu)

/* The distributor's registers (IHI 0048B, 4.1.2), and what is mapped. */
#define GICD_ISENABLER          0x100u
#define GICD_ICENABLER          0x180u
#define GICD_ISPENDR            0x200u
#define GICD_ICPENDR            0x280u
#define GICD_IPRIORITYR         0x400u
#define GICD_ITARGETSR          0x800u
#define GICD_ICFGR              0xc00u
#define GICD_MAP_SIZE           0x1000u
/* SPIs are INTIDs 32..1019 (1020-1023 are special). */
#define GIC_FIRST_SPI           32u
#define GIC_LAST_SPI            1019u
#define V2M_DEFAULT_PRIORITY    0xa0u

/*
 * The back end's state (umsi_ctl_env.priv), one block.
 * @owner: for each of the frame's SPIs, the IRQ composed onto it, so that
 *         release finds its SPIs (UMSI_GICV2M_FREE: none) [lock]
 */
struct v2m_priv {
	size_t size;
	void *lock;
	uint64_t frame_phys;
	volatile uint8_t *frame;
	volatile uint8_t *dist;
	uint32_t spi_base, spi_count;
	uint8_t priority;
	uint32_t ncpus;
	uint8_t *cpu_if;                /* per CPU: interface, 0xff none */
	uint32_t *owner;
	bool wired_spis;
};

#define V2M_FREE 0xffffffffu

static struct v2m_priv *v2m_priv(struct umsi_system *sys)
{
	return umsi_ctl_env(sys)->priv;
}

static uint32_t v2m_read(struct umsi_system *sys, struct v2m_priv *p,
			 uint32_t off)
{
	return umsi_mmio_read32(sys, p->dist + off);
}

static void v2m_write(struct umsi_system *sys, struct v2m_priv *p,
		      uint32_t off, uint32_t v)
{
	umsi_mmio_write32(sys, p->dist + off, v);
}

/* Set byte @intid of the byte-per-INTID register at @reg. [lock] */
static void v2m_set_byte(struct umsi_system *sys, struct v2m_priv *p,
			 uint32_t reg, uint32_t intid, uint8_t val)
{
	uint32_t off = reg + (intid & ~3u), sh = (intid & 3u) * 8;
	uint32_t w = v2m_read(sys, p, off);

	v2m_write(sys, p, off, (w & ~(0xffu << sh)) | (uint32_t)val << sh);
}

/* A write-1-to-act bit register (ISENABLER, ICPENDR, ...). */
static void v2m_set_bit(struct umsi_system *sys, struct v2m_priv *p,
			uint32_t reg, uint32_t intid)
{
	v2m_write(sys, p, reg + (intid / 32) * 4, 1u << (intid % 32));
}

static void v2m_fini(struct umsi_system *sys)
{
	struct umsi_ctl_env *env = umsi_ctl_env(sys);
	struct v2m_priv *p = env->priv;

	if (!p)
		return;
	if (p->frame)
		umsi_host_mmio_unmap(sys, (void *)p->frame, V2M_FRAME_SIZE);
	if (p->dist)
		umsi_host_mmio_unmap(sys, (void *)p->dist, GICD_MAP_SIZE);
	if (p->lock)
		umsi_host_lock_destroy(sys, p->lock);
	env->priv = NULL;
	umsi_free(sys, p, p->size);
}

/* The configuration, before anything is taken. 0 or -UMSI_EINVAL. */
static int v2m_check(struct umsi_system *sys, uint32_t ncpus,
		     const struct umsi_gicv2m_config *c)
{
	uint32_t cpu;

	if (!c) {
		umsi_log(sys, UMSI_LOG_ERROR, "arm64-gicv2m: no configuration "
			 "(umsi_config.ctl_config must point to a struct "
			 "umsi_gicv2m_config)");
		return -UMSI_EINVAL;
	}
	if (!c->frame || c->frame % V2M_FRAME_SIZE || !c->dist ||
	    c->dist % GICD_MAP_SIZE) {
		umsi_log(sys, UMSI_LOG_ERROR, "arm64-gicv2m: frame 0x%llx, "
			 "distributor 0x%llx: each must be given, 4 KiB "
			 "aligned", (unsigned long long)c->frame,
			 (unsigned long long)c->dist);
		return -UMSI_EINVAL;
	}
	if (!c->cpu_if || c->nr_cpus < ncpus) {
		umsi_log(sys, UMSI_LOG_ERROR, "arm64-gicv2m: cpu_if has %u "
			 "entries for %u CPUs", c->cpu_if ? c->nr_cpus : 0,
			 ncpus);
		return -UMSI_EINVAL;
	}
	for (cpu = 0; cpu < ncpus; cpu++) {
		uint8_t n = c->cpu_if[cpu];
		uint32_t o;

		if (n == UMSI_GICV2M_NO_IF)
			continue;
		if (n > 7) {
			umsi_log(sys, UMSI_LOG_ERROR, "arm64-gicv2m: cpu %u: CPU "
				 "interface %u (a GICv2 has 0-7)", cpu, n);
			return -UMSI_EINVAL;
		}
		for (o = 0; o < cpu; o++) {
			if (c->cpu_if[o] == n) {
				umsi_log(sys, UMSI_LOG_ERROR, "arm64-gicv2m: "
					 "cpus %u and %u both given CPU "
					 "interface %u", o, cpu, n);
				return -UMSI_EINVAL;
			}
		}
	}
	return 0;
}

static int v2m_init(struct umsi_system *sys, uint32_t ncpus,
		    struct umsi_matrix_config *space)
{
	struct umsi_ctl_env *env = umsi_ctl_env(sys);
	const struct umsi_gicv2m_config *c = env->ctl_config;
	struct v2m_priv *p;
	uint32_t typer, base, num, cpu, nvec;
	void *v;
	int ret;

	ret = v2m_check(sys, ncpus, c);
	if (ret)
		return ret;
	/* The state, each SPI's owner (as many as INTIDs can be) and the
	 * CPU interfaces: one block. */
	p = umsi_zalloc(sys, sizeof(*p) + (GIC_LAST_SPI + 1) * 4 + ncpus);
	if (!p)
		return -UMSI_ENOMEM;
	p->size = sizeof(*p) + (GIC_LAST_SPI + 1) * 4 + ncpus;
	p->ncpus = ncpus;
	p->owner = (uint32_t *)(p + 1);
	p->cpu_if = (uint8_t *)(p->owner + GIC_LAST_SPI + 1);
	p->frame_phys = c->frame;
	for (cpu = 0; cpu < ncpus; cpu++)
		p->cpu_if[cpu] = c->cpu_if[cpu];
	p->priority = c->priority ? c->priority : V2M_DEFAULT_PRIORITY;
	p->wired_spis = c->wired_spis;
	env->priv = p;
	p->lock = umsi_host_lock_create(sys);
	if (!p->lock) {
		v2m_fini(sys);
		return -UMSI_ENOMEM;
	}
	ret = umsi_host_mmio_map(sys, c->frame, V2M_FRAME_SIZE, &v);
	if (ret) {
		v2m_fini(sys);
		return ret;
	}
	p->frame = v;
	ret = umsi_host_mmio_map(sys, c->dist, GICD_MAP_SIZE, &v);
	if (ret) {
		v2m_fini(sys);
		return ret;
	}
	p->dist = v;
	/* The frame says which SPIs are its own: hostile until checked. */
	typer = umsi_mmio_read32(sys, p->frame + V2M_MSI_TYPER);
	base = V2M_TYPER_BASE(typer);
	num = V2M_TYPER_NUM(typer);
	if (typer == 0xffffffffu || !num || base < GIC_FIRST_SPI ||
	    base + num - 1 > GIC_LAST_SPI) {
		umsi_log(sys, UMSI_LOG_ERROR, "arm64-gicv2m: MSI_TYPER 0x%x: "
			 "SPIs %u..%u are not a run of SPIs (32-1019)", typer,
			 base, base + num - 1);
		v2m_fini(sys);
		return -UMSI_EINVAL;
	}
	p->spi_base = base;
	p->spi_count = num;
	for (cpu = 0; cpu < num; cpu++)
		p->owner[cpu] = V2M_FREE;
	/*
	 * Every CPU may hold every SPI (the matrix balances them); the
	 * global domain hands out no more than the frame has.
	 */
	nvec = (num + 63) / 64 * 64;
	env->domain_ids = num;
	umsi_matrix_space_config(space, ncpus, nvec, 0, nvec - 1);
	umsi_log(sys, UMSI_LOG_INFO, "arm64-gicv2m: frame 0x%llx: SPIs %u-%u",
		 (unsigned long long)c->frame, base, base + num - 1);
	return 0;
}

static int v2m_cpu_init(struct umsi_system *sys, uint32_t cpu,
			struct umsi_ctl_cpu *out)
{
	int ret = umsi_host_cpu_hwid(sys, cpu, &out->hwid);

	if (ret)
		return ret;
	out->reachable = v2m_priv(sys)->cpu_if[cpu] != UMSI_GICV2M_NO_IF;
	/* Wired inputs are SPIs the kernel routes (UMSI_ARM_WIRED_MSG). */
	out->wired_reachable = out->reachable && v2m_priv(sys)->wired_spis;
	return 0;
}

/* Identities @id.. of @ci, all the frame's? */
static bool v2m_ids_ok(const struct v2m_priv *p, const struct umsi_ctl_irq *ci,
		       uint32_t id)
{
	uint32_t n = ci->count ? ci->count : 1;

	return id < p->spi_count && n <= p->spi_count - id;
}

/* Aim SPIs @intid.. (@n of them) at @cpu's interface. [lock] */
static void v2m_target(struct umsi_system *sys, struct v2m_priv *p,
		       uint32_t intid, uint32_t n, uint32_t cpu)
{
	uint32_t k;

	for (k = 0; k < n; k++)
		v2m_set_byte(sys, p, GICD_ITARGETSR, intid + k,
			     (uint8_t)(1u << p->cpu_if[cpu]));
}

/*
 * After a move: an SPI still pending is made pending again, for its new
 * target. The architecture moves pending state with the target (IHI
 * 0048B 4.3.12), and then this changes nothing; a distributor that keeps
 * pending state per CPU interface, as QEMU's does (it records the
 * targets of the moment the SPI became pending), would otherwise leave
 * it with a CPU that is no longer a target: taken by nobody. The caller
 * has disabled the SPI: no CPU, old or new, takes it between the read
 * and the clear-and-set, so nothing is taken twice. [lock]
 */
static void v2m_repend(struct umsi_system *sys, struct v2m_priv *p,
		       uint32_t intid, uint32_t n)
{
	uint32_t k, i;

	for (k = 0; k < n; k++) {
		i = intid + k;
		if (!(v2m_read(sys, p, GICD_ISPENDR + (i / 32) * 4) >>
		      (i % 32) & 1))
			continue;
		v2m_set_bit(sys, p, GICD_ICPENDR, i);
		v2m_set_bit(sys, p, GICD_ISPENDR, i);
	}
}

/*
 * The message: the SPI's INTID to MSI_SETSPI_NS (a block: the first; the
 * function adds the message number to the data). The SPIs are set up on
 * the way: edge-triggered, the priority, the target, enabled; release
 * turns them off again.
 */
static int v2m_compose(struct umsi_system *sys, const struct umsi_ctl_irq *ci,
		       uint32_t cpu, uint32_t id, struct umsi_msg *msg)
{
	struct v2m_priv *p = v2m_priv(sys);
	uint32_t n = ci->count ? ci->count : 1, intid, k;
	umsi_irqflags_t fl;

	if (cpu >= p->ncpus || p->cpu_if[cpu] == UMSI_GICV2M_NO_IF ||
	    (ci->wired && !p->wired_spis))
		return -UMSI_ERANGE;
	if (!v2m_ids_ok(p, ci, id))
		return -UMSI_EINVAL;
	if (ci->wired) {
		/* An SPI of the distributor's: the kernel routes it. */
		msg->address = UMSI_ARM_WIRED_MSG | cpu;
		msg->data = id;
		return 0;
	}
	intid = p->spi_base + id;
	fl = umsi_host_lock_acquire(sys, p->lock);
	for (k = 0; k < n; k++) {
		uint32_t i = intid + k;
		uint32_t off = GICD_ICFGR + (i / 16) * 4, sh = (i % 16) * 2;
		uint32_t w = v2m_read(sys, p, off);

		/* Int_config bit 1 (the upper of the two): edge-triggered. */
		v2m_write(sys, p, off, w | 2u << sh);
		v2m_set_byte(sys, p, GICD_IPRIORITYR, i, p->priority);
	}
	v2m_target(sys, p, intid, n, cpu);
	for (k = 0; k < n; k++) {
		p->owner[id + k] = ci->irq;
		v2m_set_bit(sys, p, GICD_ISENABLER, intid + k);
	}
	umsi_host_lock_release(sys, p->lock, fl);
	msg->address = p->frame_phys + V2M_MSI_SETSPI_NS;
	msg->data = intid;
	return 1;       /* the SPIs are enabled: release turns them off */
}

/* The SPIs go back disabled, with no pending state left for the next. */
static void v2m_release(struct umsi_system *sys, const struct umsi_ctl_irq *ci)
{
	struct v2m_priv *p = v2m_priv(sys);
	umsi_irqflags_t fl;
	uint32_t i;

	fl = umsi_host_lock_acquire(sys, p->lock);
	for (i = 0; i < p->spi_count; i++) {
		if (p->owner[i] != ci->irq)
			continue;
		v2m_set_bit(sys, p, GICD_ICENABLER, p->spi_base + i);
		v2m_set_bit(sys, p, GICD_ICPENDR, p->spi_base + i);
		p->owner[i] = V2M_FREE;
	}
	umsi_host_lock_release(sys, p->lock, fl);
}

static int v2m_retarget(struct umsi_system *sys, const struct umsi_ctl_irq *ci,
			uint32_t cpu, uint32_t id)
{
	struct v2m_priv *p = v2m_priv(sys);
	umsi_irqflags_t fl;
	uint32_t n, k;

	if (!v2m_ids_ok(p, ci, id))
		return -UMSI_EINVAL;
	if (cpu >= p->ncpus || p->cpu_if[cpu] == UMSI_GICV2M_NO_IF)
		return -UMSI_ERANGE;
	if (ci->wired)
		return UMSI_CTL_REWRITE;        /* the kernel's route moves */
	n = ci->count ? ci->count : 1;
	fl = umsi_host_lock_acquire(sys, p->lock);
	/* Disabled meanwhile: no CPU takes it while pending is redone. */
	for (k = 0; k < n; k++)
		v2m_set_bit(sys, p, GICD_ICENABLER, p->spi_base + id + k);
	v2m_target(sys, p, p->spi_base + id, n, cpu);
	v2m_repend(sys, p, p->spi_base + id, n);
	for (k = 0; k < n; k++)
		v2m_set_bit(sys, p, GICD_ISENABLER, p->spi_base + id + k);
	umsi_host_lock_release(sys, p->lock, fl);
	return 0;       /* the device's message stays */
}

/* A pending SPI follows its target: none stays behind. */
static bool v2m_pending(struct umsi_system *sys, uint32_t id)
{
	(void)sys;
	(void)id;
	return false;
}

/* Pending again in the distributor: its target (now @cpu) takes it. */
static int v2m_resend(struct umsi_system *sys, uint32_t cpu, uint32_t id)
{
	struct v2m_priv *p = v2m_priv(sys);

	if (id >= p->spi_count || cpu >= p->ncpus ||
	    p->cpu_if[cpu] == UMSI_GICV2M_NO_IF)
		return -UMSI_EINVAL;
	v2m_set_bit(sys, p, GICD_ISPENDR, p->spi_base + id);
	return 0;
}

/*
 * A multi-message block's data is its first INTID with the message number
 * in the low bits: the INTIDs must be as aligned as the block, so the
 * largest block is the alignment of the frame's first SPI (QEMU virt's
 * 80: 16), at most 32.
 */
static uint32_t v2m_max_block(struct umsi_system *sys)
{
	uint32_t base = v2m_priv(sys)->spi_base, a = base & (0u - base);

	return a > 32 ? 32 : a;
}

const struct umsi_ctl umsi_ctl_arm64_gicv2m = {
	.name = "arm64-gicv2m",
	.domain = &umsi_ctl_domain_global,
	.init = v2m_init,
	.fini = v2m_fini,
	.cpu_init = v2m_cpu_init,
	.compose = v2m_compose,
	.release = v2m_release,
	.retarget = v2m_retarget,
	.pending = v2m_pending,
	.resend = v2m_resend,
	.max_block = v2m_max_block,
	/* The kernel acknowledges (GICC_IAR) and ends (GICC_EOIR) itself. */
	.eoi = false,
	/* No identity is spurious: the kernel keeps INTID 1023 to itself. */
	.spurious_id = 0xffffffffu,
};
