/* SPDX-License-Identifier: MIT */
/*
 * pciehp.h - the PCI Express native hot-plug port service.
 */
#ifndef KERNEL_PCIEHP_H
#define KERNEL_PCIEHP_H

#include <stdbool.h>

/*
 * Claim every hot-plug capable downstream port (root or switch
 * downstream port with Slot Implemented and Hot-Plug Capable): take its
 * interrupt through uMSI (MSI-X, else MSI, else INTx) and enable its
 * hot-plug events. `umsi.hotplug=off` leaves the ports alone. After the
 * functions are registered with uMSI, before drivers are served.
 */
struct glue;
void pciehp_init(struct glue *gl);

/* Serve the slot events the ports' interrupts queued. Process context. */
void pciehp_work(void);

/* Whether an Attention Button abort window is open: work to poll for. */
bool pciehp_pending(void);

/*
 * A driver found function @idx gone: the hot-plug port above it checks
 * its slot. Returns false when no hot-plug port is above @idx.
 */
bool pciehp_function_gone(int idx);

/* Test aid umsi.hp_storm=N: a port interrupting for nothing, N times. */
void pciehp_storm_aid(void);

#endif /* KERNEL_PCIEHP_H */
