/* SPDX-License-Identifier: MIT */
/*
 * fuzz_fdt - the reference kernels' flattened-device-tree reader
 * (kernel/common/fdt.c, used by riscv64 and arm64), compiled hosted and
 * unmodified, on hostile blobs: the device tree comes from firmware and
 * is device data. Every query either kernel makes is made on every node;
 * the sanitizers report any read outside the blob, and the walk must end.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fdt.h"

#define FUZZ_CHECK(c) do { if (!(c)) __builtin_trap(); } while (0)

static const char *const compats[] = {
	"riscv,imsics", "pci-host-ecam-generic", "arm,gic-v3", "arm,gic-v3-its",
	"ns16550a", "arm,pl011", "riscv,cpu-intc", "",
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* A copy of exactly @size bytes: ASan sees every byte past it. */
	uint8_t *blob = malloc(size ? size : 1);
	struct fdt f;
	int node = -1, depth = 0, n = 0, c;
	uint32_t len;

	if (!blob)
		return 0;
	memcpy(blob, data, size);
	if (fdt_init(&f, blob, (uint32_t)size)) {
		free(blob);
		return 0;
	}
	while ((node = fdt_next_node(&f, node, &depth)) >= 0) {
		uint64_t a, s;

		/* Offsets only grow: the walk ends. */
		FUZZ_CHECK(n++ < (int)size);
		(void)fdt_node_name(&f, node);
		(void)fdt_getprop(&f, node, "compatible", &len);
		(void)fdt_getprop(&f, node, "interrupts-extended", &len);
		(void)fdt_getprop(&f, node, "ranges", &len);
		(void)fdt_prop_u32(&f, node, "phandle", 0);
		(void)fdt_parent(&f, node);
		for (unsigned i = 0; i < 4; i++)
			(void)fdt_reg(&f, node, i, &a, &s);
		for (unsigned i = 0; i < 4; i++)
			(void)fdt_reg_raw(&f, node, i, &a, &s);
		{
			unsigned ac, sc;

			fdt_reg_cells(&f, node, &ac, &sc);
			(void)fdt_prop_has_string(&f, node, "device_type", "cpu");
			(void)fdt_subnode(&f, node, "its");
		}
		(void)fdt_is_okay(&f, node);
		(void)fdt_address_cells(&f, node);
		(void)fdt_size_cells(&f, node);
		(void)fdt_is_compatible(&f, node, "riscv,imsics");
	}
	for (unsigned i = 0; i < sizeof(compats) / sizeof(compats[0]); i++)
		for (c = fdt_find_compatible(&f, -1, compats[i]), n = 0;
		     c >= 0 && n < 64; c = fdt_find_compatible(&f, c, compats[i]), n++)
			;
	(void)fdt_find_phandle(&f, 1);
	(void)fdt_find_phandle(&f, 0xffffffffu);
	(void)fdt_path(&f, "/cpus", 5);
	(void)fdt_path(&f, "/chosen", 7);
	for (c = fdt_find_device_type(&f, -1, "cpu"), n = 0; c >= 0 && n < 64;
	     c = fdt_find_device_type(&f, c, "cpu"), n++)
		;
	free(blob);
	return 0;
}
