/* SPDX-License-Identifier: MIT */
/*
 * The system object: one per machine. Everything uMSI knows hangs off it,
 * so a process can hold many (the simulator's tests do) and the library
 * has no global state.
 */
#include <umsi/ctl.h>
#include <umsi/internal/core.h>
#include <umsi/internal/hostcall.h>

/* The end of interrupt of a controller that needs none. */
static void no_eoi(void *host, uint32_t id)
{
	(void)host;
	(void)id;
}

/* Name the first missing required operation, or NULL. */
static const char *missing_op(const struct umsi_host_ops *o)
{
	if (!o->cfg_read) return "cfg_read";
	if (!o->cfg_write) return "cfg_write";
	if (!o->mmio_map) return "mmio_map";
	if (!o->mmio_unmap) return "mmio_unmap";
	if ((o->mmio_read32 == NULL) != (o->mmio_write32 == NULL))
		return "mmio_read32/mmio_write32 (both or neither)";
	if (!o->lock_create) return "lock_create";
	if (!o->lock_destroy) return "lock_destroy";
	if (!o->lock_acquire) return "lock_acquire";
	if (!o->lock_release) return "lock_release";
	if (!o->alloc) return "alloc";
	if (!o->free) return "free";
	if (!o->clock_ns) return "clock_ns";
	if (!o->current_cpu) return "current_cpu";
	if (!o->cpu_count) return "cpu_count";
	if (!o->cpu_hwid) return "cpu_hwid";
	if (!o->cpu_is_online) return "cpu_is_online";
	if (!o->platform_flags) return "platform_flags";
	if (!o->run_on_cpu) return "run_on_cpu";
	if ((o->intx_route == NULL) != (o->gsi_program == NULL))
		return "intx_route/gsi_program (both or neither)";
	if ((o->phys_alloc == NULL) != (o->phys_free == NULL))
		return "phys_alloc/phys_free (both or neither)";
	if ((o->remap_compose == NULL) != (o->remap_free == NULL))
		return "remap_compose/remap_free (both or neither)";
	return NULL;
}

static void system_free(struct umsi_system *sys)
{
	const struct umsi_host_ops *ops = sys->env.ops;
	void *host = sys->env.host;

	umsi_free(sys, sys->slots,
		  (size_t)sys->ncpus * sys->nids * sizeof(*sys->slots));
	if (sys->irqs)
		umsi_free(sys, (void *)sys->irqs,
			  sys->max_irqs * sizeof(*sys->irqs));
	umsi_free(sys, sys->irq_ids_mem, sys->irq_ids_size);
	if (sys->env.ctl && sys->env.ctl->domain)
		sys->env.ctl->domain->fini(sys);
	umsi_free(sys, sys->matrix_mem, sys->matrix_size);
	umsi_free(sys, sys->cpus, sys->cpus_size);
	umsi_free(sys, sys->reachable, umsi_sys_mask_bytes(sys));
	umsi_free(sys, sys->wired_reachable, umsi_sys_mask_bytes(sys));
	umsi_free(sys, sys->scratch, umsi_sys_mask_bytes(sys));
	if (sys->lock)
		ops->lock_destroy(host, sys->lock);
	ops->free(host, sys, sizeof(*sys));
}

/* Bring CPUs the host reports online into the allocator. */
static int system_cpus(struct umsi_system *sys)
{
	const struct umsi_ctl *ctl = sys->env.ctl;
	uint32_t cpu, online = 0;
	int ret;

	sys->all_reachable = true;
	sys->all_wired_reachable = true;
	for (cpu = 0; cpu < sys->ncpus; cpu++) {
		struct umsi_cpu *c = &sys->cpus[cpu];
		struct umsi_ctl_cpu cc = { 0 };

		/* Where its identities' slots are (the domain says). */
		c->slot = sys->slots + ctl->domain->slot_base(cpu, sys->nids);
		ret = ctl->cpu_init(sys, cpu, &cc);
		if (ret)
			return ret;
		c->hwid = cc.hwid;
		c->reachable = cc.reachable;
		if (cc.wired_reachable)
			umsi_bit_set(sys->wired_reachable, cpu);
		else
			sys->all_wired_reachable = false;
		if (c->reachable)
			umsi_bit_set(sys->reachable, cpu);
		else
			sys->all_reachable = false;
		if (!c->reachable)
			umsi_log(sys, UMSI_LOG_WARN,
				 "cpu %u: %s ID %u cannot be named by an MSI "
				 "message on this platform; no interrupt will "
				 "target it", cpu, ctl->name, c->hwid);
		if (!umsi_host_cpu_is_online(sys, cpu))
			continue;
		/* One no message can name never takes a vector. */
		ret = c->reachable ? umsi_matrix_online(sys->matrix, cpu) : 0;
		if (ret)
			return ret;
		c->online = true;
		online++;
	}
	return online ? 0 : -UMSI_EINVAL;
}

int umsi_system_create(const struct umsi_host_ops *ops, void *host,
		       const struct umsi_config *cfg, struct umsi_system **out)
{
	static const struct umsi_config defaults;
	struct umsi_matrix_config mcfg = { 0 };
	struct umsi_system *sys;
	const char *missing;
	bool ctl_up = false;
	int ret = -UMSI_ENOMEM;

	if (!ops || !out)
		return -UMSI_EINVAL;
	missing = missing_op(ops);
	if (missing) {
		if (ops->log)
			ops->log(host, UMSI_LOG_ERROR,
				 "umsi: host operation missing");
		if (ops->log)
			ops->log(host, UMSI_LOG_ERROR, missing);
		return -UMSI_EINVAL;
	}
	if (!cfg)
		cfg = &defaults;
	sys = ops->alloc(host, sizeof(*sys));
	if (!sys)
		return -UMSI_ENOMEM;
	umsi_memset(sys, 0, sizeof(*sys));
	sys->env.ops = ops;
	sys->env.host = host;
	/* No back end named: the x86 local APIC, unless the build left it
	 * out (UMSI_NO_DEFAULT_CTL: the fragments define it for uMSI's own
	 * objects when UMSI_BACKENDS has no x86). */
#ifdef UMSI_NO_DEFAULT_CTL
	sys->env.ctl = cfg->ctl;
	if (!sys->env.ctl) {
		umsi_log(sys, UMSI_LOG_ERROR, "umsi: no interrupt-controller "
			 "back end given (umsi_config.ctl) and the x86 one is "
			 "not built");
		ret = -UMSI_EINVAL;
		goto fail;
	}
#else
	sys->env.ctl = cfg->ctl ? cfg->ctl : &umsi_ctl_x86_lapic;
#endif
	sys->env.ctl_config = cfg->ctl_config;
	sys->env.kernel_eoi = cfg->kernel_eoi;
	sys->env.plat_flags = ops->platform_flags(host);
	sys->ncpus = ops->cpu_count(host);
	sys->max_irqs = cfg->max_irqs ? cfg->max_irqs : 4096;
	sys->first_dynamic_irq = cfg->first_dynamic_irq ?
				 cfg->first_dynamic_irq : 24;
	/* The slot an IRQ has just left reads as masked: dispatch_odd(). */
	atomic_store(&sys->moved.gate, 1);
	sys->storm_threshold = cfg->storm_threshold ?
			       cfg->storm_threshold : 99900;
	sys->alloc_flags = cfg->spread_classes ? UMSI_MATRIX_SPREAD : 0;
	sys->storm_quiet_ns = cfg->storm_quiet_ns ?
			      cfg->storm_quiet_ns : 100000000ull;
	if (sys->ncpus == 0 || sys->ncpus > UMSI_MATRIX_MAX_CPUS ||
	    sys->first_dynamic_irq >= sys->max_irqs ||
	    sys->max_irqs > UMSI_MAX_IRQS) {
		ret = -UMSI_EINVAL;
		goto fail;
	}
	sys->mask_words = UMSI_CPUMASK_WORDS(sys->ncpus);
	/* The back end checks the platform and gives the identity space. */
	ret = sys->env.ctl->init(sys, sys->ncpus, &mcfg);
	if (ret)
		goto fail;
	ctl_up = true;
	if (cfg->matrix) {
		mcfg = *cfg->matrix;
		mcfg.ncpus = sys->ncpus;
	}
	sys->nids = mcfg.nvec ? mcfg.nvec : UMSI_MATRIX_VECTORS;
	if (!sys->env.ctl->retarget || !sys->env.ctl->domain) {
		umsi_log(sys, UMSI_LOG_ERROR, "%s: back-end operation %s "
			 "missing", sys->env.ctl->name,
			 sys->env.ctl->retarget ? "domain" : "retarget");
		ret = -UMSI_EINVAL;
		goto fail;
	}
	/* Who ends an interrupt: uMSI through the host's eoi, or the kernel
	 * after umsi_dispatch() returns (umsi_config.kernel_eoi). */
	if (sys->env.ctl->eoi && !cfg->kernel_eoi && !ops->eoi) {
		umsi_log(sys, UMSI_LOG_ERROR, "%s: host operation eoi missing "
			 "(or set umsi_config.kernel_eoi)", sys->env.ctl->name);
		ret = -UMSI_EINVAL;
		goto fail;
	}
	sys->eoi = sys->env.ctl->eoi && !cfg->kernel_eoi ? ops->eoi : no_eoi;
	ret = -UMSI_ENOMEM;
	sys->lock = ops->lock_create(host);
	if (!sys->lock)
		goto fail;
	sys->cpus_size = sys->ncpus * sizeof(*sys->cpus);
	sys->cpus = umsi_zalloc(sys, sys->cpus_size);
	sys->slots = umsi_zalloc(sys, (size_t)sys->ncpus * sys->nids *
				 sizeof(*sys->slots));
	if (!sys->cpus || !sys->slots)
		goto fail;
	sys->matrix_size = umsi_matrix_size(&mcfg);
	if (!sys->matrix_size) {
		ret = -UMSI_EINVAL;
		goto fail;
	}
	sys->matrix_mem = umsi_zalloc(sys, sys->matrix_size);
	if (!sys->matrix_mem)
		goto fail;
	ret = umsi_matrix_init(sys->matrix_mem, sys->matrix_size, &mcfg,
			       &sys->matrix);
	if (ret)
		goto fail;
	ret = -UMSI_ENOMEM;
	sys->irqs = umsi_zalloc(sys, sys->max_irqs * sizeof(*sys->irqs));
	sys->irq_ids_size = umsi_idmap_size(sys->max_irqs);
	sys->irq_ids_mem = sys->irq_ids_size ?
			   umsi_zalloc(sys, sys->irq_ids_size) : NULL;
	if (!sys->irqs || !sys->irq_ids_mem)
		goto fail;
	umsi_idmap_init(&sys->irq_ids, sys->max_irqs, sys->irq_ids_mem);
	ret = sys->env.ctl->domain->init(sys, sys->ncpus, sys->nids,
					  &sys->id_limit);
	if (ret)
		goto fail;
	ret = -UMSI_ENOMEM;
	sys->reachable = umsi_zalloc(sys, umsi_sys_mask_bytes(sys));
	sys->wired_reachable = umsi_zalloc(sys, umsi_sys_mask_bytes(sys));
	sys->scratch = umsi_zalloc(sys, umsi_sys_mask_bytes(sys));
	if (!sys->reachable || !sys->wired_reachable || !sys->scratch)
		goto fail;
	ret = system_cpus(sys);
	if (ret)
		goto fail;
	*out = sys;
	return 0;
fail:
	if (ctl_up && sys->env.ctl->fini)
		sys->env.ctl->fini(sys);
	system_free(sys);
	return ret;
}

void umsi_system_destroy(struct umsi_system *sys)
{
	uint32_t irq;

	if (!sys)
		return;
	/* The layer above goes first: it removes its devices. */
	if (sys->upper_fini)
		sys->upper_fini(sys);
	for (irq = 0; irq < sys->max_irqs; irq++) {
		struct umsi_irq_desc *d = umsi_irq_to_desc(sys, irq);

		if (!d)
			continue;
		umsi_log(sys, UMSI_LOG_WARN, "irq %u still allocated at "
			 "system destroy; freeing it", irq);
		umsi_irq_release(sys, &d, 1);
	}
	/* Every device is gone now: nothing can send to a quarantined vector. */
	umsi_irq_release_owned(sys, NULL);
	/* No IRQ is left to resend: the back end may let go of its hardware. */
	if (sys->env.ctl->fini)
		sys->env.ctl->fini(sys);
	system_free(sys);
}

uint32_t umsi_cpu_hwid(struct umsi_system *sys, uint32_t cpu)
{
	return cpu < sys->ncpus ? sys->cpus[cpu].hwid : 0xffffffffu;
}

void umsi_system_set_upper(struct umsi_system *sys, void *state,
			   void (*fini)(struct umsi_system *sys))
{
	sys->upper = state;
	sys->upper_fini = fini;
}

_Static_assert(offsetof(struct umsi_system, env) == 0,
	       "back ends see the system through its first member");

uint32_t umsi_cpu_count(struct umsi_system *sys)
{
	return sys->ncpus;
}

const struct umsi_matrix *umsi_system_matrix(struct umsi_system *sys)
{
	return sys->matrix;
}

struct umsi_matrix *umsi_ctl_matrix(struct umsi_system *sys)
{
	return sys->matrix;
}
