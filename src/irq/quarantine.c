/* SPDX-License-Identifier: MIT */
/*
 * Quarantine: IRQs whose source could not be proven quiet at tear-down
 * keep their vectors, under a dead chip, until the source is known gone
 * (the function's removal, or another tear-down that proves it).
 */
#include <umsi/internal/core.h>

/* ---- quarantine -------------------------------------------------------- */

/*
 * A dead descriptor has no operations: masking, retargeting and starting
 * it are refused; dispatch finds it masked (depth never drops to zero), so
 * an interrupt is counted and acknowledged and no handler runs.
 */
static int dead_write_msg(struct umsi_system *sys, struct umsi_irq_desc *d,
			  const struct umsi_msg *msg)
{
	(void)sys;
	(void)d;
	(void)msg;
	return -UMSI_EBUSY;
}

static int dead_startup(struct umsi_system *sys, struct umsi_irq_desc *d)
{
	(void)sys;
	(void)d;
	return -UMSI_ENOENT;
}

const struct umsi_irq_chip umsi_dead_chip = {
	.name = "quarantined",
	.write_msg = dead_write_msg,
	.startup = dead_startup,
};

/* Detach every handler of @d and free them once no CPU runs them. */
static void drop_actions(struct umsi_system *sys, struct umsi_irq_desc *d)
{
	struct umsi_irq_action *a;
	umsi_irqflags_t fl;

	fl = umsi_lock(sys);
	a = (struct umsi_irq_action *)(atomic_exchange(&d->actions, 0) &
					~UMSI_ACTIONS_ONE);
	umsi_unlock(sys, fl);
	umsi_irq_sync(sys);
	while (a) {
		struct umsi_irq_action *next = atomic_load(&a->next);

		umsi_free(sys, a, umsi_action_size(a));
		a = next;
	}
}

void umsi_irq_quarantine(struct umsi_system *sys, struct umsi_irq_desc **descs,
			 uint32_t n, const void *owner)
{
	umsi_irqflags_t fl;
	uint32_t i;

	for (i = 0; i < n; i++) {
		struct umsi_irq_desc *d = descs[i];

		/* Ours (a walker's move ends first), and masked for good:
		 * dispatch counts and acknowledges only. */
		umsi_irq_take(d);
		atomic_store(&d->busy, true);
		atomic_store(&d->gate, (atomic_load(&d->gate) &
				      UMSI_GATE_DISABLED) | 1u << 20);
		drop_actions(sys, d);
		/*
		 * The IRQ number stays taken: a remapping entry is named by
		 * it, and the device may still send through that entry.
		 */
		fl = umsi_lock(sys);
		d->chip = &umsi_dead_chip;
		d->chip_data = NULL;
		d->owner = owner;
		d->next_dead = sys->quarantine;
		sys->quarantine = d;
		umsi_unlock(sys, fl);
		umsi_log(sys, UMSI_LOG_ERROR, "irq %u: its source could not be "
			 "proven quiet; vector 0x%x stays reserved on cpu %u "
			 "until the device is removed", d->irq, d->vector,
			 d->cpu);
	}
}

uint32_t umsi_irq_release_owned(struct umsi_system *sys, const void *owner)
{
	struct umsi_irq_desc *d;
	umsi_irqflags_t fl;
	uint32_t n = 0;

	for (;;) {
		fl = umsi_lock(sys);
		for (d = sys->quarantine; d && owner && d->owner != owner;
		     d = d->next_dead)
			;
		umsi_unlock(sys, fl);
		if (!d)
			return n;
		umsi_irq_release(sys, &d, 1);
		n++;
	}
}

void umsi_irq_quarantine_transfer(struct umsi_system *sys, const void *from,
				  const void *to)
{
	struct umsi_irq_desc *d;
	umsi_irqflags_t fl;

	fl = umsi_lock(sys);
	for (d = sys->quarantine; d; d = d->next_dead)
		if (d->owner == from)
			d->owner = to;
	umsi_unlock(sys, fl);
}

uint32_t umsi_irq_quarantined(struct umsi_system *sys, const void *owner)
{
	struct umsi_irq_desc *d;
	umsi_irqflags_t fl;
	uint32_t n = 0;

	fl = umsi_lock(sys);
	for (d = sys->quarantine; d; d = d->next_dead)
		n += !owner || d->owner == owner;
	umsi_unlock(sys, fl);
	return n;
}
