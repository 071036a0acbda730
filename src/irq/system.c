/* SPDX-License-Identifier: MIT */
/*
 * The system object: one per machine. Everything uMSI knows hangs off it,
 * so a process can hold many (the simulator's tests do) and the library
 * has no global state.
 */
#include <umsi/internal/core.h>
#include <umsi/pci.h>

void *umsi_zalloc(struct umsi_system *sys, size_t size)
{
	void *p = sys->ops->alloc(sys->host, size);

	/* The host promises zeroed memory; do not trust a port on it. */
	if (p)
		umsi_memset(p, 0, size);
	return p;
}

void umsi_free(struct umsi_system *sys, void *p, size_t size)
{
	if (p)
		sys->ops->free(sys->host, p, size);
}

/* Name the first missing required operation, or NULL. */
static const char *missing_op(const struct umsi_host_ops *o)
{
	if (!o->cfg_read) return "cfg_read";
	if (!o->cfg_write) return "cfg_write";
	if (!o->mmio_map) return "mmio_map";
	if (!o->mmio_unmap) return "mmio_unmap";
	if (!o->mmio_read32) return "mmio_read32";
	if (!o->mmio_write32) return "mmio_write32";
	if (!o->barrier) return "barrier";
	if (!o->lock_create) return "lock_create";
	if (!o->lock_destroy) return "lock_destroy";
	if (!o->lock_acquire) return "lock_acquire";
	if (!o->lock_release) return "lock_release";
	if (!o->alloc) return "alloc";
	if (!o->free) return "free";
	if (!o->clock_ns) return "clock_ns";
	if (!o->current_cpu) return "current_cpu";
	if (!o->cpu_count) return "cpu_count";
	if (!o->cpu_apic_id) return "cpu_apic_id";
	if (!o->cpu_online) return "cpu_online";
	if (!o->platform_flags) return "platform_flags";
	if (!o->eoi) return "eoi";
	if (!o->run_on_cpu) return "run_on_cpu";
	if (!o->vector_pending) return "vector_pending";
	if (!o->retrigger) return "retrigger";
	if ((o->intx_route == NULL) != (o->gsi_program == NULL))
		return "intx_route/gsi_program (both or neither)";
	if ((o->remap_compose == NULL) != (o->remap_free == NULL))
		return "remap_compose/remap_free (both or neither)";
	return NULL;
}

static void system_free(struct umsi_system *sys)
{
	const struct umsi_host_ops *ops = sys->ops;
	void *host = sys->host;

	if (sys->irqs)
		umsi_free(sys, (void *)sys->irqs,
			  sys->max_irqs * sizeof(*sys->irqs));
	umsi_free(sys, sys->irq_ids_mem, sys->irq_ids_size);
	umsi_free(sys, sys->matrix_mem, sys->matrix_size);
	umsi_free(sys, sys->cpus, sys->cpus_size);
	umsi_free(sys, sys->reachable, sys->mask_words * sizeof(uint64_t));
	umsi_free(sys, sys->compat_reachable,
		  sys->mask_words * sizeof(uint64_t));
	umsi_free(sys, sys->scratch, sys->mask_words * sizeof(uint64_t));
	if (sys->lock)
		ops->lock_destroy(host, sys->lock);
	ops->free(host, sys, sizeof(*sys));
}

/* Bring CPUs the host reports online into the allocator. */
static int system_cpus(struct umsi_system *sys)
{
	uint32_t cpu, online = 0;
	int ret;

	sys->all_reachable = true;
	sys->all_compat_reachable = true;
	for (cpu = 0; cpu < sys->ncpus; cpu++) {
		struct umsi_cpu *c = &sys->cpus[cpu];

		ret = sys->ops->cpu_apic_id(sys->host, cpu, &c->apic_id);
		if (ret)
			return ret;
		c->reachable = umsi_x86_dest_reachable(c->apic_id,
						       sys->plat_flags);
		/* The IO-APIC sends compatibility-format messages only. */
		if (umsi_x86_dest_reachable(c->apic_id, sys->plat_flags &
					    ~UMSI_PLAT_IRQ_REMAP))
			sys->compat_reachable[cpu / 64] |= 1ull << (cpu % 64);
		else
			sys->all_compat_reachable = false;
		if (c->reachable)
			sys->reachable[cpu / 64] |= 1ull << (cpu % 64);
		else
			sys->all_reachable = false;
		if (!c->reachable)
			umsi_log(sys, UMSI_LOG_WARN,
				 "cpu %u: APIC ID %u cannot be named by an MSI "
				 "message on this platform; no interrupt will "
				 "target it", cpu, c->apic_id);
		if (!sys->ops->cpu_online(sys->host, cpu))
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
	struct umsi_matrix_config mcfg;
	struct umsi_system *sys;
	const char *missing;
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
	sys->ops = ops;
	sys->host = host;
	sys->plat_flags = ops->platform_flags(host);
	sys->ncpus = ops->cpu_count(host);
	sys->max_irqs = cfg->max_irqs ? cfg->max_irqs : 4096;
	sys->first_dynamic_irq = cfg->first_dynamic_irq ?
				 cfg->first_dynamic_irq : 24;
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

	sys->lock = ops->lock_create(host);
	if (!sys->lock)
		goto fail;
	sys->cpus_size = sys->ncpus * sizeof(*sys->cpus);
	sys->cpus = umsi_zalloc(sys, sys->cpus_size);
	if (!sys->cpus)
		goto fail;
	if (cfg->matrix) {
		mcfg = *cfg->matrix;
		mcfg.ncpus = sys->ncpus;
	} else {
		umsi_matrix_default_config(&mcfg, sys->ncpus);
	}
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
	sys->reachable = umsi_zalloc(sys, sys->mask_words * sizeof(uint64_t));
	sys->compat_reachable = umsi_zalloc(sys, sys->mask_words *
					    sizeof(uint64_t));
	sys->scratch = umsi_zalloc(sys, sys->mask_words * sizeof(uint64_t));
	if (!sys->reachable || !sys->compat_reachable || !sys->scratch)
		goto fail;
	ret = system_cpus(sys);
	if (ret)
		goto fail;
	if (cfg->cmdline)
		(void)umsi_policy_parse(sys, cfg->cmdline);
	*out = sys;
	return 0;
fail:
	umsi_pci_policy_free(sys);
	system_free(sys);
	return ret;
}

void umsi_system_destroy(struct umsi_system *sys)
{
	uint32_t irq;

	if (!sys)
		return;
	while (sys->devs)
		umsi_pci_remove(sys, sys->devs);
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
	umsi_pci_policy_free(sys);
	system_free(sys);
}

uint32_t umsi_cpu_apic_id(struct umsi_system *sys, uint32_t cpu)
{
	return cpu < sys->ncpus ? sys->cpus[cpu].apic_id : 0xffffffffu;
}

uint32_t umsi_cpu_count(struct umsi_system *sys)
{
	return sys->ncpus;
}

const struct umsi_matrix *umsi_system_matrix(struct umsi_system *sys)
{
	return sys->matrix;
}
