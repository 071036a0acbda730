/* SPDX-License-Identifier: MIT */
/*
 * dt_pci.c - what a device-tree machine's PCI host bridge node says about
 * its buses, read once for riscv64 and arm64 (kernel/common/fdt.c below,
 * kernel/arch/<arch> above). In a folder of its own so that "kernel.h"
 * is found on the include path, as the hosted device-tree fuzz targets
 * need (tests/fuzz/dt-shim/kernel.h stands in for it there).
 */
#include "kernel.h"
#include "dt_pci.h"

/* ECAM gives each bus 1 MiB of configuration space (PCIe 7.2.2). */
#define ECAM_BUS_SHIFT	20

bool dt_pci_buses(const struct fdt *f, int node, uint64_t ecam,
		  uint64_t ecam_size, uint32_t *bus_start, uint32_t *bus_end)
{
	uint64_t buses = ecam_size >> ECAM_BUS_SHIFT;
	uint32_t start = 0, end = 0xff, len;
	const uint8_t *r = fdt_getprop(f, node, "bus-range", &len);

	if (r && len == 8) {
		start = fdt_be32(r);
		end = fdt_be32(r + 4);
	}
	if (start > 0xff || end > 0xff) {
		kprintf("dt: pci bus-range <0x%x 0x%x> is beyond bus 0xff "
			"(bus numbers are 8 bits): no PCI\n", start, end);
		return false;
	}
	if (end < start) {
		kprintf("dt: pci bus-range <0x%x 0x%x> ends before it starts: "
			"no PCI\n", start, end);
		return false;
	}
	if (!buses) {
		kprintf("dt: pci ecam 0x%llx size 0x%llx is smaller than one "
			"bus (1 MiB): no PCI\n", (unsigned long long)ecam,
			(unsigned long long)ecam_size);
		return false;
	}
	if (end - start >= buses) {
		kprintf("dt: pci ecam size 0x%llx covers %u buses: buses "
			"%02x-%02x, not to %02x\n",
			(unsigned long long)ecam_size, (unsigned)buses, start,
			start + (unsigned)buses - 1, end);
		end = start + (uint32_t)buses - 1;
	}
	*bus_start = start;
	*bus_end = end;
	return true;
}
