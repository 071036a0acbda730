/* SPDX-License-Identifier: MIT */
/*
 * umsi/umsi.h - everything an embedding kernel needs, in one include.
 *
 * uMSI: a portable, freestanding implementation of PCI Message Signaled
 * Interrupts. Start with umsi/host.h (what you implement), then
 * umsi_system_create() in umsi/irq.h with a back end of umsi/ctl.h, then
 * umsi/pci.h for drivers.
 *
 * What a kernel and its drivers need, no more. Included on purpose where
 * wanted: umsi/matrix.h (the allocator's statistics), umsi/compat.h (the
 * 2003 patch's driver API), umsi/pcicap.h and umsi/pci_regs.h (capability
 * parsing, register layouts), umsi/x86.h (the x86 message format),
 * umsi/format.h (the library's snprintf).
 */
#ifndef UMSI_UMSI_H
#define UMSI_UMSI_H

#include <umsi/types.h>
#include <umsi/host.h>
#include <umsi/msg.h>
#include <umsi/ctl.h>
#include <umsi/irq.h>
#include <umsi/pci.h>

#define UMSI_VERSION_MAJOR 0
#define UMSI_VERSION_MINOR 1

#endif /* UMSI_UMSI_H */
