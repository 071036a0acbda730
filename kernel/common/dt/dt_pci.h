/* SPDX-License-Identifier: MIT */
/*
 * dt_pci.h - a PCI host bridge's device-tree node (kernel/common/dt/dt_pci.c).
 */
#ifndef KERNEL_DT_PCI_H
#define KERNEL_DT_PCI_H

#include <stdbool.h>
#include <stdint.h>

#include "fdt.h"

/*
 * The buses host bridge @node serves: its bus-range, 0-255 without one
 * (host-generic-pci), cut to the buses its ECAM window (@ecam, @ecam_size)
 * covers, the window starting at the first. Bus numbers are 8 bits: a
 * bus-range beyond 255 or ending before it starts is refused, not cut to
 * 8 bits, as is a window smaller than one bus; each refusal or cut is
 * said on the console. Return: false when refused.
 */
bool dt_pci_buses(const struct fdt *f, int node, uint64_t ecam,
		  uint64_t ecam_size, uint32_t *bus_start, uint32_t *bus_end);

#endif /* KERNEL_DT_PCI_H */
