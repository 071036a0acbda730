/* SPDX-License-Identifier: MIT */
/*
 * migrate.h - what CPU hot-plug (cpuhp.c) uses of the migration protocol
 * (affinity.c). Private to src/irq.
 */
#ifndef UMSI_IRQ_MIGRATE_H
#define UMSI_IRQ_MIGRATE_H

#include <umsi/internal/core.h>

/* Claim @d for a change (its busy flag); false when someone holds it. */
bool umsi_irq_claim(struct umsi_irq_desc *d);

/*
 * Move the claimed @d (or its MSI block) to a CPU of @mask, without
 * losing an interrupt (affinity.c's protocol). Return 0 or an error
 * (nothing moved).
 */
int umsi_irq_move(struct umsi_system *sys, struct umsi_irq_desc *d,
		  const struct umsi_cpumask *mask);

/* The CPUs @d's source can name (wired inputs: fewer on x86). */
const uint64_t *umsi_irq_reach(struct umsi_system *sys,
			       const struct umsi_irq_desc *d);

/*
 * @out = @in (NULL: @d's affinity) & what @d can reach & online, less
 * @skip_cpu; returns the number of CPUs left.
 */
uint32_t umsi_irq_usable_mask(struct umsi_system *sys,
			      const struct umsi_irq_desc *d,
			      const uint64_t *in, uint32_t nbits,
			      uint64_t *out, uint32_t skip_cpu);

#endif /* UMSI_IRQ_MIGRATE_H */
