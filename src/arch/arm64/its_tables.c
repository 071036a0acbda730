/* SPDX-License-Identifier: MIT */
/*
 * The GICv3 ITS back end's creation and teardown: the configuration and
 * GITS_TYPER checked, the device and collection tables (GITS_BASER<n>)
 * and the command queue allocated and given to the ITS, collections
 * mapped, and, when the back end owns them, the LPI property and pending
 * tables set up on each redistributor; then all of it undone.
 */
#include "its_priv.h"

/* ---- Creation ---------------------------------------------------------------- */

/*
 * Check the configuration against the host and the architecture (the
 * parts that need no register). Return 0 or -UMSI_EINVAL after a log line
 * naming the problem.
 */
static int its_check(struct umsi_system *sys, uint32_t ncpus,
		     const struct umsi_its_config *c)
{
	const struct umsi_host_ops *o = umsi_ctl_env(sys)->ops;
	uint32_t first, nvec, bits, itt;
	uint64_t top;

	if (!c) {
		umsi_log(sys, UMSI_LOG_ERROR, "arm64-its: no configuration "
			 "(umsi_config.ctl_config must point to a struct "
			 "umsi_its_config)");
		return -UMSI_EINVAL;
	}
	/* irq_pending answers "pending" unless the back end owns the tables. */
	if (!o->phys_alloc || (!o->irq_pending && !c->rd_frame)) {
		umsi_log(sys, UMSI_LOG_ERROR, "arm64-its: host operation %s "
			 "missing", !o->phys_alloc ? "phys_alloc" :
			 "irq_pending");
		return -UMSI_EINVAL;
	}
	if (!c->its_base || c->its_base % GITS_FRAME_SIZE) {
		umsi_log(sys, UMSI_LOG_ERROR, "arm64-its: its_base 0x%llx is "
			 "not a 64 KiB aligned address",
			 (unsigned long long)c->its_base);
		return -UMSI_EINVAL;
	}
	first = c->first_lpi ? c->first_lpi : UMSI_ITS_LPI_BASE;
	nvec = c->nvec ? c->nvec : ITS_DEFAULT_NVEC;
	bits = c->lpi_id_bits ? c->lpi_id_bits : ITS_DEFAULT_ID_BITS;
	if (first < UMSI_ITS_LPI_BASE || nvec % 64 ||
	    nvec > UMSI_MATRIX_MAX_VECTORS || bits < 14 || bits > 32) {
		umsi_log(sys, UMSI_LOG_ERROR, "arm64-its: first_lpi %u, nvec %u, "
			 "lpi_id_bits %u: LPIs start at 8192, nvec is a "
			 "multiple of 64 up to 4096, 14 to 32 ID bits", first,
			 nvec, bits);
		return -UMSI_EINVAL;
	}
	top = first + (uint64_t)ncpus * nvec;
	if (top > (1ull << bits)) {
		umsi_log(sys, UMSI_LOG_ERROR, "arm64-its: LPIs %u..%llu for %u "
			 "CPUs exceed %u ID bits", first,
			 (unsigned long long)top - 1, ncpus, bits);
		return -UMSI_EINVAL;
	}
	itt = c->itt_events ? c->itt_events : ITS_DEFAULT_ITT;
	if (itt < 2 || (itt & (itt - 1))) {
		umsi_log(sys, UMSI_LOG_ERROR, "arm64-its: itt_events %u is not "
			 "a power of two of at least 2", itt);
		return -UMSI_EINVAL;
	}
	if (!c->rd_target || c->nr_cpus < ncpus) {
		umsi_log(sys, UMSI_LOG_ERROR, "arm64-its: rd_target has %u "
			 "entries for %u CPUs", c->rd_target ? c->nr_cpus : 0,
			 ncpus);
		return -UMSI_EINVAL;
	}
	return 0;
}

/*
 * What GITS_TYPER says against the configuration: ITT size, PTA targets,
 * collections. Fills the derived fields of @p.
 */
static int its_check_typer(struct umsi_system *sys, struct its_priv *p,
			   const struct umsi_its_config *c)
{
	uint64_t t = p->typer;
	uint32_t itt = c->itt_events ? c->itt_events : ITS_DEFAULT_ITT;
	uint32_t cid_bits = t & TYPER_CIL ? TYPER_CID_BITS(t) : 16;
	uint32_t cpu;

	if (!(t & 1)) {
		umsi_log(sys, UMSI_LOG_ERROR, "arm64-its: GITS_TYPER 0x%llx: "
			 "no physical LPIs", (unsigned long long)t);
		return -UMSI_EINVAL;
	}
	/* The default follows the ITS; an explicit size must fit. */
	if (!c->itt_events && itt > (1u << TYPER_ID_BITS(t)))
		itt = 1u << TYPER_ID_BITS(t);
	p->itt_bits = umsi_order_of(itt);
	if (p->itt_bits > TYPER_ID_BITS(t)) {
		umsi_log(sys, UMSI_LOG_ERROR, "arm64-its: itt_events %u: the "
			 "ITS has %u EventID bits", itt, TYPER_ID_BITS(t));
		return -UMSI_EINVAL;
	}
	p->ite_size = TYPER_ITT_SIZE(t);
	if (p->ncpus > (1ull << cid_bits)) {
		umsi_log(sys, UMSI_LOG_ERROR, "arm64-its: %u CPUs, %u collection "
			 "ID bits", p->ncpus, cid_bits);
		return -UMSI_EINVAL;
	}
	for (cpu = 0; cpu < p->ncpus; cpu++) {
		uint64_t rd = c->rd_target[cpu];

		if (rd == UMSI_ITS_NO_RD) {
			p->rdbase[cpu] = rd;
			continue;
		}
		/* PTA: a 64 KiB aligned address; else a processor number. */
		if ((t & TYPER_PTA) ? rd % GITS_FRAME_SIZE || rd >> 52 :
		    rd >> 16) {
			umsi_log(sys, UMSI_LOG_ERROR, "arm64-its: cpu %u: "
				 "rd_target 0x%llx is not a %s", cpu,
				 (unsigned long long)rd, (t & TYPER_PTA) ?
				 "64 KiB aligned redistributor address" :
				 "processor number (GITS_TYPER.PTA is 0)");
			return -UMSI_EINVAL;
		}
		p->rdbase[cpu] = (t & TYPER_PTA) ? rd >> 16 : rd;
	}
	return 0;
}

static void its_table_free(struct umsi_system *sys, struct its_table *tb)
{
	if (tb->virt)
		umsi_host_phys_free(sys, tb->virt, tb->size);
	tb->virt = NULL;
}

/* Zeroed memory the ITS may read, aligned to @align. */
static int its_table_alloc(struct umsi_system *sys, struct its_table *tb,
			   size_t size, size_t align)
{
	tb->virt = umsi_host_phys_alloc(sys, size, align, &tb->phys);
	if (!tb->virt)
		return -UMSI_ENOMEM;
	tb->size = size;
	umsi_memset(tb->virt, 0, size);
	return 0;
}

/*
 * Give GITS_BASER<n> a flat table if it is a device or collection table:
 * every DeviceID up to 2^16 (fewer when 256 pages hold fewer), one
 * collection per CPU. Other types (vPEs) are left alone.
 */
static int its_setup_baser(struct umsi_system *sys, uint32_t n)
{
	static const uint32_t page_sizes[4] = { 4096, 16384, 65536, 65536 };
	struct its_priv *p = its_priv(sys);
	uint64_t v = its_read64(sys, GITS_BASER(n)), want;
	uint32_t type = BASER_TYPE(v), esz = BASER_ESIZE(v);
	uint32_t page = page_sizes[BASER_PSZ(v)], bits;
	uint64_t entries;
	size_t size;
	int ret;

	if (type == BASER_TYPE_DEVICE) {
		bits = TYPER_DEV_BITS(p->typer);
		if (bits > ITS_MAX_DEV_BITS)
			bits = ITS_MAX_DEV_BITS;
		while (bits > 1 && ((1ull << bits) * esz + page - 1) / page >
		       BASER_MAX_PAGES)
			bits--;
		entries = 1ull << bits;
		p->dev_limit = (uint32_t)entries;
	} else if (type == BASER_TYPE_COLLECTION) {
		entries = p->ncpus;
	} else {
		return 0;
	}
	size = (size_t)((entries * esz + page - 1) / page * page);
	if (size / page > BASER_MAX_PAGES) {
		umsi_log(sys, UMSI_LOG_ERROR, "arm64-its: GITS_BASER%u needs "
			 "%zu pages of %u bytes", n, size / page, page);
		return -UMSI_EINVAL;
	}
	ret = its_table_alloc(sys, &p->tables[n], size, page);
	if (ret)
		return ret;
	umsi_dev_wmb();
	/* A 64 KiB page puts address bits 51:48 in 15:12: ours are below. */
	want = BASER_VALID | BASER_INNER_WB | (v & (0x7ull << 56)) |
	       (v & (0x1full << 48)) | p->tables[n].phys | BASER_INNER_SHARE |
	       (uint64_t)BASER_PSZ(v) << 8 | (size / page - 1);
	its_write64(sys, GITS_BASER(n), want);
	if (!(its_read64(sys, GITS_BASER(n)) & BASER_VALID)) {
		umsi_log(sys, UMSI_LOG_ERROR, "arm64-its: GITS_BASER%u does not "
			 "take a table", n);
		return -UMSI_EIO;
	}
	return 0;
}

/*
 * The LPI tables the back end owns (rd_frame): each redistributor's
 * EnableLPIs cleared (5.1.1: the tables may go only then), its frame
 * unmapped, its pending table freed; the property table last. A
 * redistributor that keeps EnableLPIs (GICv3 allows it to be RES1 once
 * set) may still write its pending table and read the property table:
 * both stay allocated, and the log says so.
 */
static void its_lpis_down(struct umsi_system *sys)
{
	struct umsi_ctl_env *env = umsi_ctl_env(sys);
	struct its_priv *p = env->priv;
	bool keep_prop = false;
	uint32_t cpu, n;

	for (cpu = 0; cpu < p->ncpus; cpu++) {
		bool stuck = false;

		if (!p->rd[cpu])
			continue;
		if (p->pend[cpu].virt) {
			rd_write32(sys, cpu, GICR_CTLR, rd_read32(sys, cpu,
				   GICR_CTLR) & ~GICR_CTLR_ENABLE_LPIS);
			for (n = 0; n < ITS_MAX_POLLS && (rd_read32(sys, cpu,
			     GICR_CTLR) & GICR_CTLR_RWP); n++)
				umsi_cpu_relax();
			stuck = rd_read32(sys, cpu, GICR_CTLR) &
				(GICR_CTLR_ENABLE_LPIS | GICR_CTLR_RWP);
		}
		if (stuck) {
			umsi_log(sys, UMSI_LOG_WARN, "arm64-its: cpu %u's "
				 "redistributor keeps LPIs enabled: its LPI "
				 "tables stay allocated", cpu);
			keep_prop = true;
		} else {
			its_table_free(sys, &p->pend[cpu]);
		}
		umsi_host_mmio_unmap(sys, (void *)p->rd[cpu],
				     GITS_FRAME_SIZE);
		p->rd[cpu] = NULL;
	}
	if (!keep_prop)
		its_table_free(sys, &p->prop);
}

/*
 * Own the LPI tables (umsi_its_config.rd_frame): a property table with
 * every LPI disabled (each is enabled when its event is mapped), and for
 * each CPU with a redistributor a zeroed pending table, PROPBASER and
 * PENDBASER, then EnableLPIs. Redistributors are touched only through
 * their frames, so this runs on any CPU.
 */
static int its_lpis_up(struct umsi_system *sys,
		       const struct umsi_its_config *c)
{
	struct umsi_ctl_env *env = umsi_ctl_env(sys);
	struct its_priv *p = env->priv;
	size_t prop_size, pend_size;
	uint32_t cpu, n = 0;
	void *v;
	int ret;

	p->own_tables = true;
	p->prio = (uint8_t)((c->lpi_priority ? c->lpi_priority :
			     ITS_DEFAULT_PRIO) & 0xfc);
	prop_size = ((1ull << p->lpi_bits) - UMSI_ITS_LPI_BASE + 4095) &
		    ~(size_t)4095;
	pend_size = (1ull << p->lpi_bits) / 8;
	if (pend_size < GITS_FRAME_SIZE)
		pend_size = GITS_FRAME_SIZE;
	ret = its_table_alloc(sys, &p->prop, prop_size, 4096);
	if (ret)
		return ret;
	for (cpu = 0; cpu < p->ncpus; cpu++) {
		uint64_t frame = c->rd_frame[cpu];

		if (!frame)
			continue;
		if (frame % GITS_FRAME_SIZE) {
			umsi_log(sys, UMSI_LOG_ERROR, "arm64-its: cpu %u: "
				 "rd_frame 0x%llx is not 64 KiB aligned", cpu,
				 (unsigned long long)frame);
			return -UMSI_EINVAL;
		}
		ret = umsi_host_mmio_map(sys, frame, GITS_FRAME_SIZE, &v);
		if (ret)
			return ret;
		p->rd[cpu] = v;
		if (!(rd_read64(sys, cpu, GICR_TYPER) & GICR_TYPER_PLPIS)) {
			umsi_log(sys, UMSI_LOG_ERROR, "arm64-its: cpu %u: the "
				 "redistributor at 0x%llx has no physical LPIs",
				 cpu, (unsigned long long)frame);
			return -UMSI_EINVAL;
		}
		if (rd_read32(sys, cpu, GICR_CTLR) & GICR_CTLR_ENABLE_LPIS) {
			umsi_log(sys, UMSI_LOG_ERROR, "arm64-its: cpu %u: "
				 "GICR_CTLR.EnableLPIs is already set: the LPI "
				 "tables are someone else's (leave rd_frame "
				 "NULL)", cpu);
			return -UMSI_EBUSY;
		}
		ret = its_table_alloc(sys, &p->pend[cpu], pend_size,
				      GITS_FRAME_SIZE);
		if (ret)
			return ret;
		umsi_dev_wmb();
		rd_write64(sys, cpu, GICR_PROPBASER, p->prop.phys |
			   GICR_BASER_ATTRS | (p->lpi_bits - 1));
		rd_write64(sys, cpu, GICR_PENDBASER, p->pend[cpu].phys |
			   GICR_BASER_ATTRS | GICR_PENDBASER_PTZ);
		rd_write32(sys, cpu, GICR_CTLR, rd_read32(sys, cpu, GICR_CTLR) |
			   GICR_CTLR_ENABLE_LPIS);
		if (!(rd_read32(sys, cpu, GICR_CTLR) & GICR_CTLR_ENABLE_LPIS)) {
			umsi_log(sys, UMSI_LOG_ERROR, "arm64-its: cpu %u: "
				 "GICR_CTLR.EnableLPIs does not stick", cpu);
			return -UMSI_EIO;
		}
		n++;
	}
	umsi_log(sys, UMSI_LOG_INFO, "arm64-its: LPI property table at 0x%llx "
		 "(%u INTID bits, priority 0x%x), pending tables for %u "
		 "redistributors, EnableLPIs set", (unsigned long long)
		 p->prop.phys, p->lpi_bits, p->prio, n);
	return 0;
}

/* Disable the ITS, take its tables back, unmap it; free the state. */

void umsi_its_fini(struct umsi_system *sys)
{
	struct umsi_ctl_env *env = umsi_ctl_env(sys);
	struct its_priv *p = env->priv;
	uint32_t n;

	if (!p)
		return;
	if (p->regs) {
		/* Disabled and quiescent before its memory goes (12.19.4). */
		its_write32(sys, GITS_CTLR, its_read32(sys, GITS_CTLR) &
			    ~GITS_CTLR_ENABLED);
		if (!its_wait_ctlr(sys, GITS_CTLR_QUIESCENT,
				   GITS_CTLR_QUIESCENT))
			umsi_log(sys, UMSI_LOG_WARN, "arm64-its: not quiescent "
				 "at teardown");
		for (n = 0; n < GITS_NR_BASER; n++)
			if (p->tables[n].virt)
				its_write64(sys, GITS_BASER(n), 0);
		if (p->cmdq.virt)
			its_write64(sys, GITS_CBASER, 0);
	}
	/* The ITS is quiet: the redistributors' tables may go. */
	if (p->own_tables)
		its_lpis_down(sys);
	/* Disabled (or never to answer again): its ITTs can go. */
	while (p->held) {
		struct its_dev *d = p->held;

		p->held = d->next;
		umsi_its_dev_free(sys, d);
	}
	for (n = 0; n < GITS_NR_BASER; n++)
		its_table_free(sys, &p->tables[n]);
	its_table_free(sys, &p->cmdq);
	if (p->regs)
		umsi_host_mmio_unmap(sys, (void *)p->regs,
				     GITS_FRAME_SIZE);
	if (p->lock)
		umsi_host_lock_destroy(sys, p->lock);
	env->priv = NULL;
	umsi_free(sys, p, p->size);
}

/*
 * The ITS from disabled to running: tables, command queue, enable, one
 * collection per CPU (IHI 0069 5.3: tables are set while disabled).
 */
static int its_start(struct umsi_system *sys)
{
	struct its_priv *p = its_priv(sys);
	umsi_irqflags_t fl;
	uint32_t n, cpu;
	int ret;

	its_write32(sys, GITS_CTLR, its_read32(sys, GITS_CTLR) &
		    ~GITS_CTLR_ENABLED);
	if (!its_wait_ctlr(sys, GITS_CTLR_QUIESCENT, GITS_CTLR_QUIESCENT)) {
		umsi_log(sys, UMSI_LOG_ERROR, "arm64-its: not quiescent");
		return -UMSI_EIO;
	}
	for (n = 0; n < GITS_NR_BASER; n++) {
		ret = its_setup_baser(sys, n);
		if (ret)
			return ret;
	}
	if (!p->dev_limit) {
		umsi_log(sys, UMSI_LOG_ERROR, "arm64-its: no device table in "
			 "GITS_BASER<n>");
		return -UMSI_EINVAL;
	}
	ret = its_table_alloc(sys, &p->cmdq, CMDQ_SIZE, CMDQ_ALIGN);
	if (ret)
		return ret;
	umsi_dev_wmb();
	its_write64(sys, GITS_CBASER, BASER_VALID | BASER_INNER_WB |
		    p->cmdq.phys | BASER_INNER_SHARE | (CMDQ_SIZE / 4096 - 1));
	its_write32(sys, GITS_CWRITER, 0);
	p->cwriter = 0;
	its_write32(sys, GITS_CTLR, its_read32(sys, GITS_CTLR) |
		    GITS_CTLR_ENABLED);
	if (!(its_read32(sys, GITS_CTLR) & GITS_CTLR_ENABLED)) {
		umsi_log(sys, UMSI_LOG_ERROR, "arm64-its: GITS_CTLR.Enabled "
			 "does not stick");
		return -UMSI_EIO;
	}
	/* Collection c is CPU c's redistributor. */
	fl = its_lock(sys);
	ret = 0;
	for (cpu = 0; cpu < p->ncpus && !ret; cpu++)
		if (p->rdbase[cpu] != UMSI_ITS_NO_RD)
			ret = umsi_its_mapc(sys, cpu, p->rdbase[cpu]);
	if (!ret)
		ret = umsi_its_flush(sys);
	its_unlock(sys, fl);
	umsi_its_tell(sys);
	return ret;
}

int umsi_its_init(struct umsi_system *sys, uint32_t ncpus,
		    struct umsi_matrix_config *space)
{
	struct umsi_ctl_env *env = umsi_ctl_env(sys);
	const struct umsi_its_config *c = env->ctl_config;
	struct its_priv *p;
	size_t size;
	void *v;
	int ret;

	ret = its_check(sys, ncpus, c);
	if (ret)
		return ret;
	size = sizeof(*p) + (size_t)ncpus * (sizeof(*p->rdbase) +
		sizeof(*p->rd) + sizeof(*p->pend));
	p = umsi_zalloc(sys, size);
	if (!p)
		return -UMSI_ENOMEM;
	p->size = size;
	p->ncpus = ncpus;
	p->rdbase = (uint64_t *)(p + 1);
	p->rd = (volatile uint8_t **)(p->rdbase + ncpus);
	p->pend = (struct its_table *)(p->rd + ncpus);
	p->lpi_bits = c->lpi_id_bits ? c->lpi_id_bits : ITS_DEFAULT_ID_BITS;
	p->nvec = c->nvec ? c->nvec : ITS_DEFAULT_NVEC;
	p->nids = ncpus * p->nvec;
	p->first_lpi = c->first_lpi ? c->first_lpi : UMSI_ITS_LPI_BASE;
	p->translater = c->its_base + GITS_TRANSLATER;
	p->wired_spis = c->wired_spis;
	p->rid_base = c->rid_base;
	p->devid_base = c->devid_base;
	p->rid_count = c->rid_count;
	env->priv = p;
	p->lock = umsi_host_lock_create(sys);
	if (!p->lock) {
		ret = -UMSI_ENOMEM;
		goto cleanup;
	}
	ret = umsi_host_mmio_map(sys, c->its_base, GITS_FRAME_SIZE, &v);
	if (ret)
		goto cleanup;
	p->regs = v;
	p->typer = its_read64(sys, GITS_TYPER);
	ret = its_check_typer(sys, p, c);
	/* The LPI tables before the ITS can make an LPI pending. */
	if (!ret && c->rd_frame)
		ret = its_lpis_up(sys, c);
	if (!ret)
		ret = its_start(sys);
	if (ret)
		goto cleanup;
	umsi_log(sys, UMSI_LOG_INFO, "arm64-its: ITS at 0x%llx, LPIs %u..%u "
		 "(%u a CPU), ITT %u events, DeviceIDs below %u",
		 (unsigned long long)c->its_base, p->first_lpi,
		 p->first_lpi + ncpus * p->nvec - 1, p->nvec,
		 1u << p->itt_bits, p->dev_limit);
	/* Every local identity of a CPU is an LPI of its own. */
	umsi_matrix_space_config(space, ncpus, p->nvec, 0, p->nvec - 1);
	return 0;

cleanup:
	umsi_its_fini(sys);
	return ret;
}

int umsi_its_cpu_init(struct umsi_system *sys, uint32_t cpu,
			struct umsi_ctl_cpu *out)
{
	int ret = umsi_host_cpu_hwid(sys, cpu, &out->hwid);

	if (ret)
		return ret;
	out->reachable = its_priv(sys)->rdbase[cpu] != UMSI_ITS_NO_RD;
	/* Wired inputs are SPIs the kernel routes (UMSI_ARM_WIRED_MSG). */
	out->wired_reachable = out->reachable && its_priv(sys)->wired_spis;
	return 0;
}
