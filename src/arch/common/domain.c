/* SPDX-License-Identifier: MIT */
/*
 * The two identity domains a back end chooses from (umsi/internal/ctl.h,
 * struct umsi_ctl_domain): identities per CPU, the matrix's own; or
 * identities unique across CPUs, kept for an IRQ's life in a map of their
 * own while the matrix only balances the CPUs.
 */
#include <umsi/internal/ctl.h>
#include <umsi/internal/idmap.h>
#include <umsi/internal/lib.h>
#include <umsi/internal/matrix.h>

/* ---- Per CPU ---------------------------------------------------------------- */

static int pc_init(struct umsi_system *sys, uint32_t ncpus, uint32_t nids,
		   uint32_t *ids)
{
	(void)sys;
	(void)ncpus;
	*ids = nids;
	return 0;
}

static void pc_fini(struct umsi_system *sys)
{
	(void)sys;
}

static size_t pc_slot_base(uint32_t cpu, uint32_t nids)
{
	return (size_t)cpu * nids;
}

static int pc_take(struct umsi_system *sys, uint32_t local, uint32_t n,
		   uint32_t align, uint32_t *id)
{
	(void)sys;
	(void)n;
	(void)align;
	*id = local;
	return 0;
}

static void pc_give(struct umsi_system *sys, uint32_t id, uint32_t n)
{
	(void)sys;
	(void)id;
	(void)n;
}

static uint32_t pc_move_id(uint32_t id, uint32_t local)
{
	(void)id;
	return local;
}

static bool pc_in_use(struct umsi_system *sys, uint32_t cpu, uint32_t id)
{
	return umsi_matrix_is_allocated(umsi_ctl_matrix(sys), cpu, id);
}

/* A block is one target: consecutive identities on one CPU. */
static uint32_t one_target(uint32_t n)
{
	(void)n;
	return 1;
}

/* A block is a target a message. */
static uint32_t target_each(uint32_t n)
{
	return n;
}

const struct umsi_ctl_domain umsi_ctl_domain_per_cpu = {
	.init = pc_init,
	.fini = pc_fini,
	.slot_base = pc_slot_base,
	.take = pc_take,
	.give = pc_give,
	.move_id = pc_move_id,
	.in_use = pc_in_use,
	.block_targets = one_target,
};

/* Per CPU, each message of an MSI block a target of its own (VT-d). */
const struct umsi_ctl_domain umsi_ctl_domain_per_message = {
	.init = pc_init,
	.fini = pc_fini,
	.slot_base = pc_slot_base,
	.take = pc_take,
	.give = pc_give,
	.move_id = pc_move_id,
	.in_use = pc_in_use,
	.block_targets = target_each,
};

/* ---- Global ----------------------------------------------------------------- */

struct global_ids {
	struct umsi_idmap map;
	size_t size;                    /* of this record and its map */
};

static struct global_ids *gl(struct umsi_system *sys)
{
	return umsi_ctl_env(sys)->domain_priv;
}

static int gl_init(struct umsi_system *sys, uint32_t ncpus, uint32_t nids,
		   uint32_t *ids)
{
	uint64_t n = (uint64_t)ncpus * nids;
	size_t head = (sizeof(struct global_ids) + 7) / 8 * 8, map;
	struct global_ids *g;
	uint32_t cap = umsi_ctl_env(sys)->domain_ids;

	/* A controller with fewer identities than CPUs x nids (GICv2m). */
	if (cap && cap < n)
		n = cap;
	if (n > UMSI_IDMAP_MAX || !(map = umsi_idmap_size((uint32_t)n)))
		return -UMSI_EINVAL;
	g = umsi_zalloc(sys, head + map);
	if (!g)
		return -UMSI_ENOMEM;
	g->size = head + map;
	umsi_idmap_init(&g->map, (uint32_t)n,
			(uint64_t *)(void *)((char *)g + head));
	umsi_ctl_env(sys)->domain_priv = g;
	*ids = (uint32_t)n;
	return 0;
}

static void gl_fini(struct umsi_system *sys)
{
	struct global_ids *g = gl(sys);

	if (g)
		umsi_free(sys, g, g->size);
	umsi_ctl_env(sys)->domain_priv = NULL;
}

/* One table for every CPU, indexed by the global identity. */
static size_t gl_slot_base(uint32_t cpu, uint32_t nids)
{
	(void)cpu;
	(void)nids;
	return 0;
}

static int gl_take(struct umsi_system *sys, uint32_t local, uint32_t n,
		   uint32_t align, uint32_t *id)
{
	uint32_t g = umsi_idmap_take_run(&gl(sys)->map, n, align);

	(void)local;
	if (g == UINT32_MAX)
		return -UMSI_ENOSPC;
	*id = g;
	return 0;
}

static void gl_give(struct umsi_system *sys, uint32_t id, uint32_t n)
{
	uint32_t k;

	for (k = 0; k < n; k++)
		umsi_idmap_clear(&gl(sys)->map, id + k);
}

/* An IRQ keeps its identity wherever it goes. */
static uint32_t gl_move_id(uint32_t id, uint32_t local)
{
	(void)local;
	return id;
}

static bool gl_in_use(struct umsi_system *sys, uint32_t cpu, uint32_t id)
{
	struct global_ids *g = gl(sys);

	(void)cpu;
	return g && id < g->map.nbits && umsi_idmap_test(&g->map, id);
}

const struct umsi_ctl_domain umsi_ctl_domain_global = {
	.init = gl_init,
	.fini = gl_fini,
	.slot_base = gl_slot_base,
	.take = gl_take,
	.give = gl_give,
	.move_id = gl_move_id,
	.in_use = gl_in_use,
	.block_targets = one_target,
};
