/* SPDX-License-Identifier: MIT */
/*
 * CPU hot-plug: a CPU going offline has its IRQs moved elsewhere with the
 * migration protocol of affinity.c (managed ones shut down when their
 * whole mask goes), and a CPU coming back restarts the managed IRQs it
 * may serve.
 */
#include <umsi/internal/bitops.h>
#include <umsi/internal/compiler.h>
#include <umsi/internal/core.h>
#include <umsi/internal/hostcall.h>

#include "migrate.h"

/* ---- CPU hotplug --------------------------------------------------------- */

/*
 * Shut a managed IRQ down: its whole mask went offline. Its vector goes
 * back only once the source is masked; a mask that failed leaves it as it
 * is (-UMSI_EIO), and the CPU stays online.
 */
static int managed_shutdown(struct umsi_system *sys, struct umsi_irq_desc *d)
{
	umsi_irqflags_t fl;
	uint8_t strays;
	int ret;

	fl = umsi_lock(sys);
	strays = (uint8_t)umsi_desc_nstrays(d);
	umsi_unlock(sys, fl);
	if (strays)
		return -UMSI_EIO;
	/* A source without a mask bit cannot be silenced: it stays. */
	if (!d->chip->mask)
		return -UMSI_EBUSY;
	ret = umsi_irq_hist_reserve(sys, d, 1);
	if (ret)
		return ret;
	ret = umsi_irq_mask(sys, d->irq);
	if (ret)
		return ret;     /* not masked: it stays where it is */
	fl = umsi_lock(sys);
	atomic_store(&sys->cpus[d->cpu].slot[d->vector].d, NULL);
	umsi_unlock(sys, fl);
	umsi_irq_sync(sys);
	umsi_irq_hist_fold(sys, d, d->cpu, d->vector);
	fl = umsi_lock(sys);
	umsi_matrix_free(sys->matrix, d->cpu, d->local, true);
	d->shutdown = true;
	umsi_unlock(sys, fl);
	return 0;
}

/* Start a shut-down managed IRQ again on a CPU of its mask. */
static int managed_restart(struct umsi_system *sys, struct umsi_irq_desc *d,
			   const struct umsi_cpumask *m)
{
	umsi_irqflags_t fl;
	uint32_t cpu;
	int v, ret;

	fl = umsi_lock(sys);
	v = umsi_matrix_alloc_managed(sys->matrix, m, &cpu);
	if (v >= 0) {
		d->cpu = cpu;
		d->local = (uint32_t)v;
		/* Its identity there (a global one stays the IRQ's). */
		d->vector = sys->env.ctl->domain->move_id(d->vector,
							  (uint32_t)v);
		d->shutdown = false;
		atomic_store(&umsi_slot(sys, cpu, d->vector)->d, d);
	}
	umsi_unlock(sys, fl);
	if (v < 0)
		return v;
	ret = umsi_irq_retarget(sys, d, d->cpu, d->vector);
	/*
	 * Undo the shutdown's mask; if the driver unmasked meanwhile (only
	 * the count moved), the source is unmasked here.
	 */
	if (umsi_desc_mask_depth(d) > 0)
		umsi_irq_unmask(sys, d->irq);
	else if (d->chip->unmask && !umsi_desc_disabled(d))
		d->chip->unmask(sys, d);
	return ret;
}

/*
 * Start again every shut-down managed IRQ whose mask holds @cpu (now
 * online). @words is scratch of mask_words.
 */
static void restart_managed(struct umsi_system *sys, uint32_t cpu,
			    uint64_t *words)
{
	uint32_t irq;

	for (irq = 0; irq < sys->max_irqs; irq++) {
		struct umsi_irq_desc *d = umsi_irq_to_desc(sys, irq);
		struct umsi_cpumask m = { words, sys->ncpus };

		if (!d || !d->shutdown || !umsi_aff_test(sys, d, cpu) ||
		    !umsi_irq_claim(d))
			continue;
		if (umsi_irq_usable_mask(sys, d, NULL, sys->ncpus, words,
				UINT32_MAX) && managed_restart(sys, d, &m))
			umsi_log(sys, UMSI_LOG_WARN, "irq %u: restart on cpu "
				 "%u failed", irq, cpu);
		atomic_store(&d->busy, false);
	}
}

/*
 * A CPU no message can name never holds a vector: it stays out of the
 * allocator, so the allocator's best CPU is always one a mask of reachable
 * CPUs holds (its O(1) answer). [lock]
 */
static int cpu_matrix_online(struct umsi_system *sys, uint32_t cpu)
{
	return sys->cpus[cpu].reachable ?
	       umsi_matrix_online(sys->matrix, cpu) : 0;
}

static int do_cpu_online(struct umsi_system *sys, uint32_t cpu)
{
	umsi_irqflags_t fl;
	uint64_t *words;
	int ret;

	if (cpu >= sys->ncpus)
		return -UMSI_EINVAL;
	words = umsi_zalloc(sys, umsi_sys_mask_bytes(sys));
	if (!words)
		return -UMSI_ENOMEM;
	fl = umsi_lock(sys);
	if (sys->cpus[cpu].online) {
		ret = -UMSI_EBUSY;
	} else {
		ret = cpu_matrix_online(sys, cpu);
		if (!ret)
			sys->cpus[cpu].online = true;
	}
	umsi_unlock(sys, fl);
	if (!ret)
		restart_managed(sys, cpu, words);
	umsi_free(sys, words, umsi_sys_mask_bytes(sys));
	return ret;
}

/* Would the unmanaged IRQs on @cpu fit on the other online CPUs? */
static bool room_elsewhere(struct umsi_system *sys, uint32_t cpu)
{
	struct umsi_matrix_cpu_stats st;
	uint64_t room = 0, need = 0;
	uint32_t c, irq;

	umsi_irqflags_t fl = umsi_lock(sys);

	/* The counts change under the lock: read them under it. */
	for (c = 0; c < sys->ncpus; c++)
		if (c != cpu && sys->cpus[c].online &&
		    sys->cpus[c].reachable &&
		    !umsi_matrix_cpu_stats(sys->matrix, c, &st))
			room += st.available;
	umsi_unlock(sys, fl);
	for (irq = 0; irq < sys->max_irqs; irq++) {
		struct umsi_irq_desc *d = umsi_irq_to_desc(sys, irq);

		if (d && d->cpu == cpu && !d->managed && !d->shutdown &&
		    !umsi_irq_dead(d))
			need++;
	}
	return need <= room;
}

/*
 * Leave @cpu (@words: scratch of mask_words). Caller owns d->busy. A
 * member of an MSI block moves with its block: the leader is claimed too.
 */
static int evacuate(struct umsi_system *sys, struct umsi_irq_desc *d,
		    uint32_t cpu, uint64_t *words)
{
	struct umsi_cpumask m = { words, sys->ncpus };
	uint32_t n;
	int ret;

	if (umsi_block_leader(d) && umsi_block_leader(d) != d) {
		struct umsi_irq_desc *lead = umsi_block_leader(d);

		if (!umsi_irq_claim(lead))
			return -UMSI_EAGAIN;
		ret = lead->cpu == cpu ? evacuate(sys, lead, cpu, words) : 0;
		atomic_store(&lead->busy, false);
		return ret;
	}
	n = umsi_irq_usable_mask(sys, d, NULL, sys->ncpus, words, cpu);

	if (!n && d->managed)
		return managed_shutdown(sys, d);
	/* Unmanaged with no CPU left: break affinity. */
	if (!n)
		n = umsi_irq_usable_mask(sys, d, umsi_irq_reach(sys, d), sys->ncpus, words,
				cpu);
	return n ? umsi_irq_move(sys, d, &m) : -UMSI_ENOSPC;
}

/* Out of line: inlined into activation it would cost the common path. */
UMSI_NOINLINE int umsi_irq_evacuate(struct umsi_system *sys,
				    struct umsi_irq_desc *d, uint32_t cpu)
{
	uint64_t *words = umsi_zalloc(sys, umsi_sys_mask_bytes(sys));
	int ret;

	if (!words)
		return -UMSI_ENOMEM;
	ret = evacuate(sys, d, cpu, words);
	umsi_free(sys, words, umsi_sys_mask_bytes(sys));
	return ret;
}

/*
 * Activation lets go of set-up's claim; an IRQ whose CPU went offline
 * meanwhile leaves it here, the one place that knows how.
 */
int umsi_irq_activate(struct umsi_system *sys, struct umsi_irq_desc **descs,
		      uint32_t n)
{
	uint32_t i;
	int ret = 0;

	/*
	 * A CPU that went offline after the allocation could not move them
	 * (claimed): leave it now, still claimed. A block moves whole, with
	 * its leader (the first).
	 */
	for (i = 0; i < n && !ret; i++) {
		struct umsi_irq_desc *d = descs[i];
		bool gone;

		/* A block member moves with its leader. */
		if (umsi_block_leader(d) && umsi_block_leader(d) != d)
			continue;
		/* online is an atomic: an offline that began now sees d busy. */
		gone = !atomic_load(&sys->cpus[d->cpu].online);
		if (!gone)
			continue;
		ret = umsi_irq_evacuate(sys, d, d->cpu);
	}
	for (i = 0; i < n; i++) {
		descs[i]->active = true;
		atomic_store_explicit(&descs[i]->busy, false,
				      memory_order_release);
	}
	return ret;
}

/*
 * Take @cpu out of the allocator first, so no IRQ allocated meanwhile
 * lands there; then move or shut down what it holds. A failure puts the
 * CPU back as it was: online, its managed IRQs started again (IRQs that
 * already moved stay moved, which is harmless).
 */
static int do_cpu_offline(struct umsi_system *sys, uint32_t cpu)
{
	umsi_irqflags_t fl;
	uint64_t *words;
	uint32_t irq, c, online = 0;
	int ret = 0;

	if (cpu >= sys->ncpus || !sys->cpus[cpu].online)
		return -UMSI_EINVAL;
	for (c = 0; c < sys->ncpus; c++)
		online += sys->cpus[c].online;
	if (online == 1)
		return -UMSI_EBUSY;
	if (!room_elsewhere(sys, cpu))
		return -UMSI_ENOSPC;
	words = umsi_zalloc(sys, umsi_sys_mask_bytes(sys));
	if (!words)
		return -UMSI_ENOMEM;
	fl = umsi_lock(sys);
	ret = sys->cpus[cpu].reachable ?
	      umsi_matrix_offline(sys->matrix, cpu) : 0;
	if (!ret)
		sys->cpus[cpu].online = false;
	umsi_unlock(sys, fl);
	for (irq = 0; irq < sys->max_irqs && !ret; irq++) {
		struct umsi_irq_desc *d = umsi_irq_to_desc(sys, irq);

		/*
		 * A quarantined vector stays where it is: the CPU keeps owning
		 * it while offline, and the device's state is unknown.
		 */
		if (!d || d->cpu != cpu || d->shutdown || umsi_irq_dead(d))
			continue;
		/* Busy: being set up, moved or changed by another CPU. */
		if (!umsi_irq_claim(d)) {
			ret = -UMSI_EAGAIN;
			break;
		}
		ret = evacuate(sys, d, cpu, words);
		atomic_store(&d->busy, false);
	}
	if (ret && !sys->cpus[cpu].online) {
		fl = umsi_lock(sys);
		if (!cpu_matrix_online(sys, cpu))
			sys->cpus[cpu].online = true;
		umsi_unlock(sys, fl);
		restart_managed(sys, cpu, words);
	}
	umsi_free(sys, words, umsi_sys_mask_bytes(sys));
	return ret;
}

/* A reader of the IRQ table: descriptors stay until it returns. */
int umsi_cpu_online(struct umsi_system *sys, uint32_t cpu)
{
	unsigned e = umsi_rd_begin(sys);
	int ret = do_cpu_online(sys, cpu);

	umsi_rd_end(sys, e);
	return ret;
}

/* A reader of the IRQ table: descriptors stay until it returns. */
int umsi_cpu_offline(struct umsi_system *sys, uint32_t cpu)
{
	unsigned e = umsi_rd_begin(sys);
	int ret = do_cpu_offline(sys, cpu);

	umsi_rd_end(sys, e);
	return ret;
}
