/* SPDX-License-Identifier: MIT */
/*
 * host.h - the kernel's implementation of the uMSI host interface.
 */
#ifndef KERNEL_HOST_H
#define KERNEL_HOST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <umsi/host.h>

extern const struct umsi_host_ops kernel_host_ops;
void host_set_debug(bool on);	/* pass uMSI's debug messages to the console */

/*
 * The host operations every architecture shares (kernel/common/host_ops.c).
 * An architecture's kernel_host_ops starts with KHOST_COMMON_OPS and adds
 * its own.
 */
int khost_cfg_read(void *host, umsi_bdf_t bdf, uint16_t off, uint8_t width,
		   uint32_t *val);
int khost_cfg_write(void *host, umsi_bdf_t bdf, uint16_t off, uint8_t width,
		    uint32_t val);
int khost_mmio_map(void *host, uint64_t phys, uint64_t len, void **virt);
void khost_mmio_unmap(void *host, void *virt, uint64_t len);
uint32_t khost_mmio_read32(void *host, volatile void *addr);
void khost_mmio_write32(void *host, volatile void *addr, uint32_t val);
void *khost_lock_create(void *host);
void khost_lock_destroy(void *host, void *lock);
umsi_irqflags_t khost_lock_acquire(void *host, void *lock);
void khost_lock_release(void *host, void *lock, umsi_irqflags_t flags);
void *khost_alloc(void *host, size_t size);
void khost_free(void *host, void *ptr, size_t size);
void khost_log(void *host, enum umsi_log_level level, const char *msg);
uint64_t khost_clock_ns(void *host);
void khost_sleep_us(void *host, uint32_t us);
uint32_t khost_current_cpu(void *host);
uint32_t khost_cpu_count(void *host);
int khost_cpu_hwid(void *host, uint32_t cpu, uint32_t *hwid);
bool khost_cpu_is_online(void *host, uint32_t cpu);
int khost_run_on_cpu(void *host, uint32_t cpu, void (*fn)(void *arg),
		     void *arg);

#define KHOST_COMMON_OPS \
	.cfg_read = khost_cfg_read, \
	.cfg_write = khost_cfg_write, \
	.mmio_map = khost_mmio_map, \
	.mmio_unmap = khost_mmio_unmap, \
	.mmio_read32 = khost_mmio_read32, \
	.mmio_write32 = khost_mmio_write32, \
	.lock_create = khost_lock_create, \
	.lock_destroy = khost_lock_destroy, \
	.lock_acquire = khost_lock_acquire, \
	.lock_release = khost_lock_release, \
	.alloc = khost_alloc, \
	.free = khost_free, \
	.log = khost_log, \
	.clock_ns = khost_clock_ns, \
	.sleep_us = khost_sleep_us, \
	.current_cpu = khost_current_cpu, \
	.cpu_count = khost_cpu_count, \
	.cpu_hwid = khost_cpu_hwid, \
	.cpu_is_online = khost_cpu_is_online, \
	.run_on_cpu = khost_run_on_cpu

#endif /* KERNEL_HOST_H */
