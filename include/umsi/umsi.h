/* SPDX-License-Identifier: MIT */
/*
 * umsi/umsi.h - everything an embedding kernel needs, in one include.
 *
 * uMSI: a portable, freestanding implementation of PCI Message Signaled
 * Interrupts. Start with umsi/host.h (what you implement), then
 * umsi_system_create() in umsi/irq.h, then umsi/pci.h for drivers.
 */
#ifndef UMSI_UMSI_H
#define UMSI_UMSI_H

#include <umsi/types.h>
#include <umsi/host.h>
#include <umsi/msg.h>
#include <umsi/matrix.h>
#include <umsi/irq.h>
#include <umsi/pcicap.h>
#include <umsi/pci.h>
#include <umsi/compat.h>
#include <umsi/format.h>

#define UMSI_VERSION_MAJOR 0
#define UMSI_VERSION_MINOR 1

#endif /* UMSI_UMSI_H */
