/* SPDX-License-Identifier: MIT */
/*
 * Statistics: per-IRQ information, a /proc/interrupts-like table and a
 * per-CPU vector summary like Linux's debugfs vector view.
 */
#include <umsi/internal/core.h>

/*
 * What @d took on @cpu: the history of the slots it left there, plus the
 * counters of the slots it holds now (its target and any strays).
 */
static uint64_t stats_count(struct umsi_system *sys,
			    const struct umsi_irq_desc *d, uint32_t cpu)
{
	struct umsi_irq_cold *c = umsi_desc_cold_of(d);
	uint64_t n = 0;
	uint32_t i;

	if (d->cpu == cpu && !d->shutdown)
		n += atomic_load_explicit(&sys->cpus[cpu].slot[d->vector].count,
					  memory_order_relaxed);
	if (!c)
		return n;
	for (i = 0; i < c->nhist; i++)
		if (c->hist[i].cpu == cpu)
			n += c->hist[i].count;
	for (i = 0; i < c->nstrays; i++)
		if (c->strays[i].cpu == cpu)
			n += atomic_load_explicit(
				&sys->cpus[cpu].slot[c->strays[i].vector].count,
				memory_order_relaxed);
	return n;
}

uint64_t umsi_irq_count(struct umsi_system *sys, uint32_t irq, uint32_t cpu)
{
	unsigned e = umsi_rd_begin(sys);
	struct umsi_irq_desc *d = umsi_irq_to_desc(sys, irq);
	uint64_t n = d && cpu < sys->ncpus ? stats_count(sys, d, cpu) : 0;

	umsi_rd_end(sys, e);
	return n;
}

static int do_irq_next(struct umsi_system *sys, uint32_t irq)
{
	struct umsi_irq_desc *d;

	/* Live ones only: a quarantined IRQ has no source left to drive. */
	for (; irq < sys->max_irqs; irq++)
		if ((d = umsi_irq_to_desc(sys, irq)) && !umsi_irq_dead(d))
			return (int)irq;
	return -UMSI_ENOENT;
}

static int do_irq_get_info(struct umsi_system *sys, uint32_t irq,
		      struct umsi_irq_info *info)
{
	struct umsi_irq_desc *d = umsi_irq_to_desc(sys, irq);
	struct umsi_irq_action *a;
	struct umsi_irq_cold *c;
	uint32_t cpu;

	if (!d)
		return -UMSI_ENOENT;
	c = umsi_desc_cold_of(d);
	umsi_memset(info, 0, sizeof(*info));
	info->irq = irq;
	info->cpu = d->cpu;
	info->hwid = sys->cpus[d->cpu].hwid;
	info->vector = d->vector;
	info->managed = d->managed;
	info->disabled = umsi_desc_disabled(d);
	info->shutdown = d->shutdown;
	info->masked = umsi_desc_mask_depth(d) > 0;
	info->chip = d->chip->name;
	a = umsi_desc_actions(d);
	info->owner = a ? a->name : NULL;
	info->hwirq = d->hwirq;
	if (d->chip->describe)
		d->chip->describe(sys, d, info);
	/* Only the CPUs it has been on. */
	for (cpu = 0; c && cpu < c->nhist; cpu++)
		info->total += c->hist[cpu].count;
	for (cpu = 0; c && cpu < c->nstrays; cpu++)
		info->total += atomic_load_explicit(
			&sys->cpus[c->strays[cpu].cpu].slot[
				c->strays[cpu].vector].count, memory_order_relaxed);
	if (!d->shutdown)
		info->total += atomic_load_explicit(
			&sys->cpus[d->cpu].slot[d->vector].count,
			memory_order_relaxed);
	info->unhandled = atomic_load(&d->storm_unhandled);
	info->spurious_total = atomic_load(&d->unhandled_total);
	return 0;
}

struct buf {
	char *p;
	size_t len;
	size_t pos;
};

/* Append formatted text; keeps counting past the end like snprintf. */
#define emit(b, ...) do {						\
	size_t room_ = (b)->pos < (b)->len ? (b)->len - (b)->pos : 0;	\
	(b)->pos += umsi_snprintf(room_ ? (b)->p + (b)->pos : NULL,	\
				  room_, __VA_ARGS__);			\
} while (0)

static void finish(struct buf *b)
{
	if (b->len)
		b->p[b->pos < b->len ? b->pos : b->len - 1] = '\0';
}

size_t umsi_format_interrupts(struct umsi_system *sys, char *out, size_t len)
{
	struct buf b = { out, len, 0 };
	uint32_t cpu;
	int irq;

	emit(&b, "%5s", "");
	for (cpu = 0; cpu < sys->ncpus; cpu++)
		if (sys->cpus[cpu].online)
			emit(&b, " %10s%-3u", "CPU", cpu);
	emit(&b, "\n");
	for (irq = umsi_irq_next(sys, 0); irq >= 0;
	     irq = umsi_irq_next(sys, (uint32_t)irq + 1)) {
		struct umsi_irq_info in;

		if (umsi_irq_get_info(sys, (uint32_t)irq, &in))
			continue;
		emit(&b, "%4d:", irq);
		for (cpu = 0; cpu < sys->ncpus; cpu++)
			if (sys->cpus[cpu].online)
				emit(&b, " %13llu", (unsigned long long)
				     umsi_irq_count(sys, (uint32_t)irq, cpu));
		emit(&b, "  %-10s " UMSI_BDF_FMT " %-5u %s%s%s\n", in.chip,
		     UMSI_BDF_ARGS(in.bdf), in.hwirq,
		     in.owner ? in.owner : "-",
		     in.disabled ? " (disabled: nobody cared)" : "",
		     in.managed ? " managed" : "");
	}
	emit(&b, "%4s:", "SPU");
	for (cpu = 0; cpu < sys->ncpus; cpu++)
		if (sys->cpus[cpu].online)
			emit(&b, " %13llu", (unsigned long long)
			     umsi_spurious_count(sys, cpu));
	emit(&b, "  Spurious interrupts\n");
	finish(&b);
	return b.pos;
}

size_t umsi_format_vectors(struct umsi_system *sys, char *out, size_t len)
{
	struct buf b = { out, len, 0 };
	struct umsi_matrix_stats st;
	uint32_t cpu;

	umsi_matrix_stats(sys->matrix, &st);
	emit(&b, "Online bitmaps: %7u\nGlobal available: %6u\n"
	     "Global reserved: %7u\nTotal allocated: %7u\n",
	     st.online, st.available, st.managed, st.allocated);
	emit(&b, "%-6s %-8s %5s %5s %7s %7s\n", "CPU", "HW-ID", "avl",
	     "man", "mac", "act");
	for (cpu = 0; cpu < sys->ncpus; cpu++) {
		struct umsi_matrix_cpu_stats cs;

		if (!sys->cpus[cpu].online ||
		    umsi_matrix_cpu_stats(sys->matrix, cpu, &cs))
			continue;
		emit(&b, "%-6u %-8u %5u %5u %7u %7u\n", cpu,
		     sys->cpus[cpu].hwid, cs.available, cs.managed,
		     cs.managed_allocated, cs.allocated);
	}
	finish(&b);
	return b.pos;
}

/* A reader of the IRQ table: descriptors stay until it returns. */
int umsi_irq_next(struct umsi_system *sys, uint32_t irq)
{
	unsigned e = umsi_rd_begin(sys);
	int ret = do_irq_next(sys, irq);

	umsi_rd_end(sys, e);
	return ret;
}

/* A reader of the IRQ table: descriptors stay until it returns. */
int umsi_irq_get_info(struct umsi_system *sys, uint32_t irq,
		      struct umsi_irq_info *info)
{
	unsigned e = umsi_rd_begin(sys);
	int ret = do_irq_get_info(sys, irq, info);

	umsi_rd_end(sys, e);
	return ret;
}
