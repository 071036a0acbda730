/* SPDX-License-Identifier: MIT */
/*
 * sim_models.c - the simulated machine's device models, listed once, and
 * the core's only ways into them (struct sim_model_ops, sim_priv.h).
 *
 * A new controller or remapping unit is a file with its ops and a line
 * here; sim_core.c, sim_pci.c, sim_host.c and sim_dump.c stay as they
 * are.
 */
#include "sim_priv.h"

extern const struct sim_model_ops sim_imsic_ops;
extern const struct sim_model_ops sim_its_ops;
extern const struct sim_model_ops sim_gicv2m_ops;
extern const struct sim_model_ops sim_vtd_ops;
extern const struct sim_model_ops sim_amdvi_ops;
extern const struct sim_model_ops sim_ioapic_ops;

/*
 * In the order they are set up: the controllers (which fix how many
 * identities a CPU has), the remapping unit, then the wired inputs in
 * front of them all. Torn down in the reverse order.
 */
const struct sim_model_ops *const sim_models[] = {
	&sim_imsic_ops,
	&sim_its_ops,
	&sim_gicv2m_ops,
	&sim_vtd_ops,
	&sim_amdvi_ops,
	&sim_ioapic_ops,
};
const size_t sim_nmodels = sizeof(sim_models) / sizeof(sim_models[0]);

#define for_each_model(m, i) \
	for (size_t i = 0; i < sim_nmodels && ((m) = sim_models[i]); i++)

bool sim_models_controller(uint32_t controller)
{
	const struct sim_model_ops *m;

	for_each_model(m, i)
		if (m->controller == controller)
			return true;
	return false;
}

int sim_models_init(struct umsi_sim *sim, const struct umsi_sim_config *cfg)
{
	const struct sim_model_ops *m;
	int err;

	for_each_model(m, i) {
		err = m->init ? m->init(sim, cfg) : 0;
		if (err)
			return err;
	}
	return 0;
}

void sim_models_fini(struct umsi_sim *sim)
{
	for (size_t i = sim_nmodels; i-- > 0;)
		if (sim_models[i]->fini)
			sim_models[i]->fini(sim);
}

bool sim_models_mmio_locked(struct umsi_sim *sim, uint64_t phys, bool write,
			    uint32_t *val)
{
	const struct sim_model_ops *m;

	for_each_model(m, i)
		if (m->mmio && m->mmio(sim, phys, write, val))
			return true;
	return false;
}

bool sim_remap_present_locked(const struct umsi_sim *sim)
{
	const struct sim_model_ops *m;

	for_each_model(m, i)
		if (m->remaps && m->remaps(sim))
			return true;
	return false;
}

bool sim_remap_intercept_locked(struct umsi_sim *sim, uint32_t rid,
				uint64_t address, uint32_t data, int *n,
				uint32_t *apic_id, uint8_t *vector)
{
	const struct sim_model_ops *m;

	for_each_model(m, i)
		if (m->intercept && m->remaps && m->remaps(sim) &&
		    m->intercept(sim, rid, address, data, n, apic_id, vector))
			return true;
	return false;
}

bool sim_remap_target_locked(struct umsi_sim *sim, uint32_t rid,
			     uint64_t address, uint32_t data, bool *ok,
			     uint32_t *apic_id, uint8_t *vector)
{
	const struct sim_model_ops *m;

	for_each_model(m, i)
		if (m->target && m->remaps && m->remaps(sim) &&
		    m->target(sim, rid, address, data, ok, apic_id, vector))
			return true;
	return false;
}

int sim_wired_route_locked(struct umsi_sim *sim, umsi_bdf_t bdf, uint8_t pin,
			   struct umsi_intx_route *route)
{
	const struct sim_model_ops *m;

	for_each_model(m, i)
		if (m->intx_route)
			return m->intx_route(sim, bdf, pin, route);
	return -UMSI_ENODEV;
}

int sim_wired_program_locked(struct umsi_sim *sim, uint32_t gsi,
			     const struct umsi_gsi_entry *e)
{
	const struct sim_model_ops *m;

	for_each_model(m, i)
		if (m->gsi_program)
			return m->gsi_program(sim, gsi, e);
	return -UMSI_ENODEV;
}

void sim_wired_line_locked(struct umsi_sim *sim, uint32_t gsi)
{
	const struct sim_model_ops *m;

	for_each_model(m, i)
		if (m->line)
			m->line(sim, gsi);
}

void sim_wired_done_locked(struct umsi_sim *sim, uint32_t cpu, uint32_t id)
{
	const struct sim_model_ops *m;

	for_each_model(m, i)
		if (m->done)
			m->done(sim, cpu, id);
}

void sim_wired_host_eoi_locked(struct umsi_sim *sim, uint32_t cpu,
			       uint32_t id)
{
	const struct sim_model_ops *m;

	for_each_model(m, i)
		if (m->host_eoi)
			m->host_eoi(sim, cpu, id);
}

void sim_wired_eoi_locked(struct umsi_sim *sim, uint8_t vector)
{
	const struct sim_model_ops *m;

	for_each_model(m, i)
		if (m->eoi_broadcast)
			m->eoi_broadcast(sim, vector);
}

void sim_models_targets_locked(struct umsi_sim *sim,
			       void (*fn)(void *arg,
					  const struct umsi_sim_target *t),
			       void *arg, unsigned *n)
{
	const struct sim_model_ops *m;

	for_each_model(m, i)
		if (m->targets)
			m->targets(sim, fn, arg, n);
}

const char *sim_models_reads_locked(struct umsi_sim *sim, uint64_t phys,
				    size_t size)
{
	const struct sim_model_ops *m;
	const char *what;

	for_each_model(m, i)
		if (m->reads && (what = m->reads(sim, phys, size)))
			return what;
	return NULL;
}

/* Outermost first: the wired inputs, the remapping unit, the controller. */
void sim_models_dump(struct umsi_sim *sim, FILE *out)
{
	for (size_t i = sim_nmodels; i-- > 0;)
		if (sim_models[i]->dump)
			sim_models[i]->dump(sim, out);
}

void sim_models_stats_reset_locked(struct umsi_sim *sim)
{
	const struct sim_model_ops *m;

	for_each_model(m, i)
		if (m->stats_reset)
			m->stats_reset(sim);
}
