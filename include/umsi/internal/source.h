/* SPDX-License-Identifier: MIT */
/*
 * umsi/internal/source.h - what uMSI's own PCI layer uses of the message
 * layer beyond the public API (umsi/source.h): it is a client of the same
 * sources as a kernel that writes its devices itself, with three needs
 * more: its quarantined vectors belong to the function (umsi_pci_remove
 * frees them), it writes a new table in one sequence before any target
 * may move (claimed targets, activated after), and it keeps state per
 * table entry (slot data).
 *
 * Not a public interface.
 */
#ifndef UMSI_INTERNAL_SOURCE_H
#define UMSI_INTERNAL_SOURCE_H

#include <umsi/source.h>

struct umsi_irq_desc;

/* umsi_target_req.flags: leave the targets claimed (no move, no CPU
 * offline can touch them) until umsi_source_activate(). */
#define UMSI_TARGET_CLAIMED (1u << 31)

/*
 * umsi_source_create() whose quarantined vectors belong to @owner
 * (umsi_irq_release_owned(sys, owner) frees them; the source may go
 * first).
 */
int umsi_source_create_owned(struct umsi_system *sys,
			     const struct umsi_source_config *cfg,
			     const void *owner, struct umsi_source **out);

/*
 * End the claim of targets allocated with UMSI_TARGET_CLAIMED, once the
 * device holds their messages. Return: 0, or as umsi_irq_activate() (the
 * caller then frees them as after use).
 */
int umsi_source_activate(struct umsi_source *src, const uint32_t *irqs,
			 uint32_t n);

/* The slot of @irq in @src, or -1 when it is not one of its targets. */
int32_t umsi_source_slot(const struct umsi_source *src, uint32_t irq);

/* The descriptor in @slot (NULL: free). */
struct umsi_irq_desc *umsi_source_desc(const struct umsi_source *src,
				       uint32_t slot);

/*
 * Free targets by descriptor, as one batch (one wait for the CPUs
 * instead of one each): @ds are targets of @src, not a block's part.
 * @flags: as umsi_source_free(). Context: process.
 */
void umsi_source_drop(struct umsi_source *src, struct umsi_irq_desc **ds,
		      uint32_t n, uint32_t flags);

/* What the functions sharing the requester can send now (hot-plug may
 * have added one since the source was made): for the next allocation. */
void umsi_source_set_events(struct umsi_source *src, uint32_t events);

/* The config the source was created with. */
const struct umsi_source_config *umsi_source_config(
	const struct umsi_source *src);

#endif /* UMSI_INTERNAL_SOURCE_H */
