/* SPDX-License-Identifier: MIT */
/*
 * host_ops.c - the uMSI host operations (include/umsi/host.h) that are the
 * same on every architecture of the reference kernel, written once: each
 * kernel/arch/<arch>/host.c puts KHOST_COMMON_OPS (host.h) in its
 * kernel_host_ops and adds what is its own (physical memory for a
 * controller's tables, platform flags, pending bits, EOI and IPIs, INTx
 * routing).
 *
 *  - configuration space through the shared kernel/common/pci.c (ECAM, or
 *    0xcf8 on an x86 machine without MCFG);
 *  - MMIO: the architecture's mapping (mm_map_mmio) and its 32-bit
 *    accessors (karch.h);
 *  - locks: the kernel's spinlocks, which save and mask interrupts;
 *  - memory: the kernel heap;
 *  - uMSI's log on the console, debug messages only with umsi.debug;
 *  - clock and waits: the architecture's clock_ns and udelay;
 *  - CPUs: the SMP layer's numbering, online state, hardware IDs (x86 APIC
 *    ID, RISC-V hart ID, Arm MPIDR affinity) and cross-calls.
 */
#include <umsi/host.h>

#include "kernel.h"
#include "host.h"
#include "pci.h"
#include "smp.h"

static bool log_debug;

void host_set_debug(bool on)
{
	log_debug = on;
}

int khost_cfg_read(void *host, umsi_bdf_t bdf, uint16_t off, uint8_t width,
		   uint32_t *val)
{
	(void)host;
	*val = pci_cfg_read(bdf, off, width);
	return 0;
}

int khost_cfg_write(void *host, umsi_bdf_t bdf, uint16_t off,
		    uint8_t width, uint32_t val)
{
	(void)host;
	pci_cfg_write(bdf, off, width, val);
	return 0;
}

int khost_mmio_map(void *host, uint64_t phys, uint64_t len, void **virt)
{
	(void)host;
	*virt = mm_map_mmio(phys, len);
	return 0;
}

void khost_mmio_unmap(void *host, void *virt, uint64_t len)
{
	(void)host;
	(void)virt;
	(void)len;
}

uint32_t khost_mmio_read32(void *host, volatile void *addr)
{
	(void)host;
	return mmio_read32((uint64_t)(uintptr_t)addr);
}

void khost_mmio_write32(void *host, volatile void *addr, uint32_t val)
{
	(void)host;
	mmio_write32((uint64_t)(uintptr_t)addr, val);
}

void *khost_lock_create(void *host)
{
	(void)host;
	return kalloc(sizeof(struct spinlock));
}

void khost_lock_destroy(void *host, void *lock)
{
	(void)host;
	kfree(lock, sizeof(struct spinlock));
}

umsi_irqflags_t khost_lock_acquire(void *host, void *lock)
{
	(void)host;
	return spin_lock_irqsave(lock);
}

void khost_lock_release(void *host, void *lock, umsi_irqflags_t flags)
{
	(void)host;
	spin_unlock_irqrestore(lock, flags);
}

void *khost_alloc(void *host, size_t size)
{
	(void)host;
	return kalloc(size);
}

void khost_free(void *host, void *ptr, size_t size)
{
	(void)host;
	kfree(ptr, size);
}

void khost_log(void *host, enum umsi_log_level level, const char *msg)
{
	static const char *const names[] = { "error", "warn", "info", "debug" };

	(void)host;
	if (level == UMSI_LOG_DEBUG && !log_debug)
		return;
	kprintf("umsi %s: %s\n", names[level & 3], msg);
}

uint64_t khost_clock_ns(void *host)
{
	(void)host;
	return clock_ns();
}

void khost_sleep_us(void *host, uint32_t us)
{
	(void)host;
	udelay(us);
}

uint32_t khost_current_cpu(void *host)
{
	(void)host;
	return this_cpu_id();
}

uint32_t khost_cpu_count(void *host)
{
	(void)host;
	return smp_ncpus;
}

int khost_cpu_hwid(void *host, uint32_t cpu, uint32_t *hwid)
{
	(void)host;
	if (cpu >= smp_ncpus)
		return -UMSI_EINVAL;
	*hwid = smp_cpu_hwid(cpu);
	return 0;
}

bool khost_cpu_is_online(void *host, uint32_t cpu)
{
	(void)host;
	return smp_cpu_online(cpu);
}

int khost_run_on_cpu(void *host, uint32_t cpu, void (*fn)(void *arg),
		     void *arg)
{
	(void)host;
	return smp_cross_call(cpu, fn, arg) ? -UMSI_EINVAL : 0;
}

