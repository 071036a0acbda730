/* SPDX-License-Identifier: MIT */
/*
 * umsi/ctl.h - interrupt-controller back ends an embedder can choose.
 *
 * A system is created with one back end (umsi_config.ctl); it decides the
 * identity space (x86: 256 vectors a CPU), the message format, which CPUs
 * a message can reach, how an interrupt moves between CPUs and how it is
 * ended. One process may hold systems of different back ends.
 *
 * Back ends and what each needs from the host (docs/PORTING.md):
 *  - umsi_ctl_x86_lapic: x86 local APIC, xAPIC or x2APIC. Host ops
 *    cpu_hwid (APIC ID), ctl_read/ctl_write (LAPIC registers by xAPIC
 *    offset), run_on_cpu; optional remap_compose/remap_free with
 *    UMSI_PLAT_IRQ_REMAP. The default when umsi_config.ctl is NULL.
 */
#ifndef UMSI_CTL_H
#define UMSI_CTL_H

struct umsi_ctl;

/* The x86 local APIC back end (src/arch/x86). */
extern const struct umsi_ctl umsi_ctl_x86_lapic;

#endif /* UMSI_CTL_H */
