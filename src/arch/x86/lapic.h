/* SPDX-License-Identifier: MIT */
/*
 * What the x86 back ends share (lapic.c, vtd.c): the local APIC's
 * "pending" (IRR), resend (a fixed IPI) and end of interrupt. Internal.
 */
#ifndef UMSI_ARCH_X86_LAPIC_H
#define UMSI_ARCH_X86_LAPIC_H

#include <umsi/internal/ctl.h>

/* The host operations both need (eoi, irq_pending, send_ipi): 0 or
 * -UMSI_EINVAL after a log line naming the missing one. */
int umsi_lapic_check_host(struct umsi_system *sys, const char *name);

/* Whether vector @id is set in the current CPU's IRR (umsi_ctl.pending). */
bool umsi_lapic_pending(struct umsi_system *sys, uint32_t id);
/* A fixed IPI of vector @id to @cpu (umsi_ctl.resend). */
int umsi_lapic_resend(struct umsi_system *sys, uint32_t cpu, uint32_t id);

#endif /* UMSI_ARCH_X86_LAPIC_H */
