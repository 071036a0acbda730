/* SPDX-License-Identifier: MIT */
/*
 * host.c - the uMSI host interface (include/umsi/host.h) on this kernel.
 *
 * This file is the worked example for porting uMSI: every operation is a
 * few lines over a kernel service (pci.c, mm.c, apic.c, smp.c, ioapic.c).
 * The context pointer is unused: the kernel hosts one system.
 */
#include <umsi/host.h>
#include <umsi/x86.h>

#include "kernel.h"
#include "acpi.h"
#include "apic.h"
#include "host.h"
#include "ioapic.h"
#include "pci.h"
#include "smp.h"

static bool log_debug;

static int h_cfg_read(void *host, umsi_bdf_t bdf, uint16_t off, uint8_t width,
		      uint32_t *val)
{
	(void)host;
	*val = pci_cfg_read(bdf, off, width);
	return 0;
}

static int h_cfg_write(void *host, umsi_bdf_t bdf, uint16_t off,
		       uint8_t width, uint32_t val)
{
	(void)host;
	pci_cfg_write(bdf, off, width, val);
	return 0;
}

/* Identity mapping: the "virtual" address is the physical one. */
static int h_mmio_map(void *host, uint64_t phys, uint64_t len, void **virt)
{
	(void)host;
	*virt = mm_map_mmio(phys, len);
	return 0;
}

static void h_mmio_unmap(void *host, void *virt, uint64_t len)
{
	(void)host;
	(void)virt;
	(void)len;
}

static uint32_t h_mmio_read32(void *host, volatile void *addr)
{
	(void)host;
	return *(volatile uint32_t *)addr;
}

static void h_mmio_write32(void *host, volatile void *addr, uint32_t val)
{
	(void)host;
	*(volatile uint32_t *)addr = val;
}

static void *h_lock_create(void *host)
{
	(void)host;
	return kalloc(sizeof(struct spinlock));
}

static void h_lock_destroy(void *host, void *lock)
{
	(void)host;
	kfree(lock, sizeof(struct spinlock));
}

static umsi_irqflags_t h_lock_acquire(void *host, void *lock)
{
	(void)host;
	return spin_lock_irqsave(lock);
}

static void h_lock_release(void *host, void *lock, umsi_irqflags_t flags)
{
	(void)host;
	spin_unlock_irqrestore(lock, flags);
}

static void *h_alloc(void *host, size_t size)
{
	(void)host;
	return kalloc(size);
}

static void h_free(void *host, void *ptr, size_t size)
{
	(void)host;
	kfree(ptr, size);
}

static void h_log(void *host, enum umsi_log_level level, const char *msg)
{
	static const char *const names[] = { "error", "warn", "info", "debug" };

	(void)host;
	if (level == UMSI_LOG_DEBUG && !log_debug)
		return;
	kprintf("umsi %s: %s\n", names[level & 3], msg);
}

static uint64_t h_clock_ns(void *host)
{
	(void)host;
	return clock_ns();
}

static uint32_t h_current_cpu(void *host)
{
	(void)host;
	return this_cpu_id();
}

static uint32_t h_cpu_count(void *host)
{
	(void)host;
	return smp_ncpus;
}

static int h_cpu_hwid(void *host, uint32_t cpu, uint32_t *apic_id)
{
	(void)host;
	if (cpu >= smp_ncpus)
		return -UMSI_EINVAL;
	*apic_id = smp_cpu_apic_id(cpu);
	return 0;
}

static bool h_cpu_is_online(void *host, uint32_t cpu)
{
	(void)host;
	return smp_cpu_online(cpu);
}

/*
 * KVM advertises the extended destination ID in CPUID 0x40000001 EAX
 * bit 15 (KVM_FEATURE_MSI_EXT_DEST_ID), under the "KVMKVMKVM" signature.
 */
static bool kvm_ext_dest_id(void)
{
	uint32_t a, b, c, d;

	cpuid(1, 0, &a, &b, &c, &d);
	if (!(c & (1u << 31)))
		return false;
	cpuid(0x40000000, 0, &a, &b, &c, &d);
	if (b != 0x4b4d564b || c != 0x564b4d56 || d != 0x4d)
		return false;
	cpuid(0x40000001, 0, &a, &b, &c, &d);
	return (a >> 15) & 1;
}

/* UMSI_PLAT_EXT_DEST_ID as reported: how gsi_program decodes messages. */
static bool ext_dest;

static uint32_t h_platform_flags(void *host)
{
	uint32_t f = 0;

	(void)host;
	if (apic_mode() == APIC_X2APIC)
		f |= UMSI_PLAT_X2APIC;
	ext_dest = kvm_ext_dest_id();
	if (ext_dest)
		f |= UMSI_PLAT_EXT_DEST_ID;
	if (acpi.msi_not_supported)
		f |= UMSI_PLAT_NO_MSI;
	return f;
}

static int h_run_on_cpu(void *host, uint32_t cpu, void (*fn)(void *arg),
			void *arg)
{
	(void)host;
	return smp_cross_call(cpu, fn, arg) ? -UMSI_EINVAL : 0;
}

/* The local APIC by xAPIC register offset (umsi/host.h ctl_read). */
static uint64_t h_ctl_read(void *host, uint32_t reg)
{
	(void)host;
	return apic_reg_read(reg);
}

static void h_ctl_write(void *host, uint32_t reg, uint64_t val)
{
	(void)host;
	apic_reg_write(reg, val);
}

static int h_intx_route(void *host, umsi_bdf_t bdf, uint8_t pin,
			struct umsi_intx_route *route)
{
	int gsi = pci_intx_gsi(bdf, pin);

	(void)host;
	if (gsi < 0 || (uint32_t)gsi >= ioapic_gsi_count())
		return -UMSI_ENOENT;
	route->gsi = (uint32_t)gsi;
	route->trigger = UMSI_INTX_LEVEL;
	route->polarity = UMSI_INTX_ACTIVE_LOW;
	return 0;
}

static int h_gsi_program(void *host, uint32_t gsi,
			 const struct umsi_gsi_entry *e)
{
	struct umsi_x86_msi m;
	struct ioapic_route r = {
		.trigger = e->trigger == UMSI_INTX_LEVEL ?
			   IOAPIC_TRIGGER_LEVEL : IOAPIC_TRIGGER_EDGE,
		.polarity = e->polarity == UMSI_INTX_ACTIVE_LOW ?
			    IOAPIC_POL_LOW : IOAPIC_POL_HIGH,
		.masked = e->masked,
	};

	(void)host;
	/* The back end composed an x86 message: the entry takes it apart. */
	umsi_x86_msg_decode(&e->msg, ext_dest, &m);
	if (!e->masked && (!m.valid || m.remapped))
		return -UMSI_EINVAL;
	r.apic_id = m.dest_id;
	r.vector = m.vector ? m.vector : 0xff;
	return ioapic_program(gsi, &r) ? -UMSI_EINVAL : 0;
}

const struct umsi_host_ops kernel_host_ops = {
	.cfg_read = h_cfg_read,
	.cfg_write = h_cfg_write,
	.mmio_map = h_mmio_map,
	.mmio_unmap = h_mmio_unmap,
	.mmio_read32 = h_mmio_read32,
	.mmio_write32 = h_mmio_write32,
	.lock_create = h_lock_create,
	.lock_destroy = h_lock_destroy,
	.lock_acquire = h_lock_acquire,
	.lock_release = h_lock_release,
	.alloc = h_alloc,
	.free = h_free,
	.log = h_log,
	.clock_ns = h_clock_ns,
	.current_cpu = h_current_cpu,
	.cpu_count = h_cpu_count,
	.cpu_hwid = h_cpu_hwid,
	.cpu_is_online = h_cpu_is_online,
	.platform_flags = h_platform_flags,
	.run_on_cpu = h_run_on_cpu,
	.ctl_read = h_ctl_read,
	.ctl_write = h_ctl_write,
	.intx_route = h_intx_route,
	.gsi_program = h_gsi_program,
	.remap_compose = NULL,
	.remap_free = NULL,
};

/* The x86 local APIC back end is uMSI's default: nothing to set. */
void arch_umsi_config(struct umsi_config *cfg)
{
	(void)cfg;
}

void host_set_debug(bool on)
{
	log_debug = on;
}
