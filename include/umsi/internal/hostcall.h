/* SPDX-License-Identifier: MIT */
/*
 * umsi/internal/hostcall.h - the host's operations (umsi/host.h) as uMSI
 * calls them: umsi_host_X(sys, ...) is sys's host's X(host, ...), so no
 * layer spells out the operations table and the context pointer. Static
 * inline: the same call as before, one indirect call each.
 *
 * Not a public interface.
 */
#ifndef UMSI_INTERNAL_HOSTCALL_H
#define UMSI_INTERNAL_HOSTCALL_H

#include <umsi/internal/ctl.h>
#include <umsi/internal/lib.h>

#define UMSI_HOST_OPS(sys) (umsi_ctl_env(sys)->ops)
#define UMSI_HOST_CTX(sys) (umsi_ctl_env(sys)->host)

static inline int umsi_host_cfg_read(struct umsi_system *sys, umsi_bdf_t bdf,
				     uint16_t off, uint8_t width,
				     uint32_t *val)
{
	return UMSI_HOST_OPS(sys)->cfg_read(UMSI_HOST_CTX(sys), bdf, off,
					    width, val);
}

static inline int umsi_host_cfg_write(struct umsi_system *sys, umsi_bdf_t bdf,
				      uint16_t off, uint8_t width,
				      uint32_t val)
{
	return UMSI_HOST_OPS(sys)->cfg_write(UMSI_HOST_CTX(sys), bdf, off,
					     width, val);
}

static inline int umsi_host_mmio_map(struct umsi_system *sys, uint64_t phys,
				     uint64_t len, void **virt)
{
	return UMSI_HOST_OPS(sys)->mmio_map(UMSI_HOST_CTX(sys), phys, len,
					    virt);
}

static inline void umsi_host_mmio_unmap(struct umsi_system *sys, void *virt,
					uint64_t len)
{
	UMSI_HOST_OPS(sys)->mmio_unmap(UMSI_HOST_CTX(sys), virt, len);
}

static inline void *umsi_host_lock_create(struct umsi_system *sys)
{
	return UMSI_HOST_OPS(sys)->lock_create(UMSI_HOST_CTX(sys));
}

static inline void umsi_host_lock_destroy(struct umsi_system *sys, void *lock)
{
	UMSI_HOST_OPS(sys)->lock_destroy(UMSI_HOST_CTX(sys), lock);
}

static inline umsi_irqflags_t umsi_host_lock_acquire(struct umsi_system *sys,
						     void *lock)
{
	return UMSI_HOST_OPS(sys)->lock_acquire(UMSI_HOST_CTX(sys), lock);
}

static inline void umsi_host_lock_release(struct umsi_system *sys, void *lock,
					  umsi_irqflags_t fl)
{
	UMSI_HOST_OPS(sys)->lock_release(UMSI_HOST_CTX(sys), lock, fl);
}

static inline void *umsi_host_phys_alloc(struct umsi_system *sys, size_t size,
					 size_t align, uint64_t *phys)
{
	return UMSI_HOST_OPS(sys)->phys_alloc(UMSI_HOST_CTX(sys), size, align,
					      phys);
}

static inline void umsi_host_phys_free(struct umsi_system *sys, void *virt,
				       size_t size)
{
	UMSI_HOST_OPS(sys)->phys_free(UMSI_HOST_CTX(sys), virt, size);
}

static inline uint64_t umsi_host_clock_ns(struct umsi_system *sys)
{
	return UMSI_HOST_OPS(sys)->clock_ns(UMSI_HOST_CTX(sys));
}

static inline uint32_t umsi_host_current_cpu(struct umsi_system *sys)
{
	return UMSI_HOST_OPS(sys)->current_cpu(UMSI_HOST_CTX(sys));
}

static inline int umsi_host_cpu_hwid(struct umsi_system *sys, uint32_t cpu,
				     uint32_t *hwid)
{
	return UMSI_HOST_OPS(sys)->cpu_hwid(UMSI_HOST_CTX(sys), cpu, hwid);
}

static inline bool umsi_host_cpu_is_online(struct umsi_system *sys,
					   uint32_t cpu)
{
	return UMSI_HOST_OPS(sys)->cpu_is_online(UMSI_HOST_CTX(sys), cpu);
}

static inline int umsi_host_run_on_cpu(struct umsi_system *sys, uint32_t cpu,
				       void (*fn)(void *arg), void *arg)
{
	return UMSI_HOST_OPS(sys)->run_on_cpu(UMSI_HOST_CTX(sys), cpu, fn, arg);
}

static inline bool umsi_host_irq_pending(struct umsi_system *sys, uint32_t id)
{
	return UMSI_HOST_OPS(sys)->irq_pending(UMSI_HOST_CTX(sys), id);
}

static inline void umsi_host_send_ipi(struct umsi_system *sys, uint32_t hwid,
				      uint32_t id)
{
	UMSI_HOST_OPS(sys)->send_ipi(UMSI_HOST_CTX(sys), hwid, id);
}

static inline int umsi_host_intx_route(struct umsi_system *sys, umsi_bdf_t bdf,
				       uint8_t pin,
				       struct umsi_intx_route *route)
{
	return UMSI_HOST_OPS(sys)->intx_route(UMSI_HOST_CTX(sys), bdf, pin,
					      route);
}

static inline int umsi_host_gsi_program(struct umsi_system *sys, uint32_t gsi,
					const struct umsi_gsi_entry *e)
{
	return UMSI_HOST_OPS(sys)->gsi_program(UMSI_HOST_CTX(sys), gsi, e);
}

static inline int umsi_host_remap_compose(struct umsi_system *sys,
					  uint32_t irq, uint32_t apic_id,
					  uint8_t vector, struct umsi_msg *msg)
{
	return UMSI_HOST_OPS(sys)->remap_compose(UMSI_HOST_CTX(sys), irq,
						 apic_id, vector, msg);
}

/* sleep_us, or a spin on clock_ns without it. */
static inline void umsi_host_sleep_us(struct umsi_system *sys, uint32_t us)
{
	uint64_t until;

	if (UMSI_HOST_OPS(sys)->sleep_us) {
		UMSI_HOST_OPS(sys)->sleep_us(UMSI_HOST_CTX(sys), us);
		return;
	}
	until = umsi_host_clock_ns(sys) + (uint64_t)us * 1000;
	while (umsi_host_clock_ns(sys) < until)
		umsi_cpu_relax();
}

static inline void umsi_host_remap_free(struct umsi_system *sys, uint32_t irq)
{
	UMSI_HOST_OPS(sys)->remap_free(UMSI_HOST_CTX(sys), irq);
}

#endif /* UMSI_INTERNAL_HOSTCALL_H */
