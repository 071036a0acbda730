/* SPDX-License-Identifier: MIT */
/*
 * fuzz_dt_riscv64 - the riscv64 reference kernel's reading of the device
 * tree (kernel/arch/riscv64/platform.c: rv_platform_parse() over fdt.c,
 * the platform the kernel then boots on), compiled hosted and unmodified,
 * on hostile blobs. fuzz_fdt reaches the reader's queries; this reaches
 * what the kernel makes of their answers. The console is dt_shim.c (the
 * kernel's own printf into a buffer), so every line platform.c prints is
 * formatted.
 *
 * The sanitizers report any read outside the blob; the platform must hold
 * together: harts within their array, an IMSIC guest-index shift the
 * kernel can use, bootargs a string inside the blob, and a host bridge
 * only with 8-bit buses its ECAM window covers (1 MiB a bus).
 *
 * The entry point, the bootargs and host-bridge checks are
 * fuzz_dt_common.h's; this file gives the parse and the riscv64 checks.
 */
#include <stddef.h>
#include <stdint.h>

#include "platform.h"
#include "fuzz_dt_common.h"

static void check_platform(const struct rv_platform *p, const uint8_t *blob,
			   size_t size)
{
	FUZZ_CHECK(p->nharts <= RV_MAX_HARTS);
	FUZZ_CHECK(p->imsic.guest_bits <= 6);
	if (p->bootargs)
		check_string(p->bootargs, blob, size);
	check_pci(p->pci.present, p->pci.bus_start, p->pci.bus_end,
		  p->pci.ecam_size);
}

static void parse_and_check(const struct fdt *f, const uint8_t *blob,
			    size_t size)
{
	struct rv_platform p;

	(void)rv_platform_parse(f, &p);
	check_platform(&p, blob, size);
}
