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
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "platform.h"
#include "dt_shim.h"

#define FUZZ_CHECK(c) do { if (!(c)) __builtin_trap(); } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* @s is "" or a string that ends inside the @size bytes at @blob. */
static void check_string(const char *s, const uint8_t *blob, size_t size)
{
	const uint8_t *b = (const uint8_t *)s;

	FUZZ_CHECK(s);
	if (!*s)
		return;
	FUZZ_CHECK(b >= blob && b < blob + size);
	FUZZ_CHECK(memchr(b, 0, (size_t)(blob + size - b)) != NULL);
}

static void check_platform(const struct rv_platform *p, const uint8_t *blob,
			   size_t size)
{
	FUZZ_CHECK(p->nharts <= RV_MAX_HARTS);
	FUZZ_CHECK(p->imsic.guest_bits <= 6);
	if (p->bootargs)
		check_string(p->bootargs, blob, size);
	if (p->pci.present) {
		FUZZ_CHECK(p->pci.bus_start <= p->pci.bus_end &&
			   p->pci.bus_end <= 0xff);
		FUZZ_CHECK(p->pci.bus_end - p->pci.bus_start <
			   p->pci.ecam_size >> 20);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rv_platform p;
	struct fdt f;
	uint8_t *blob;

	if (size > (1u << 20))
		return 0;
	/* A copy of exactly @size bytes: ASan sees every byte past it. */
	blob = malloc(size ? size : 1);
	if (!blob)
		return 0;
	memcpy(blob, data, size);
	if (!fdt_init(&f, blob, (uint32_t)size)) {
		dt_shim_reset();
		(void)rv_platform_parse(&f, &p);
		check_platform(&p, blob, size);
	}
	free(blob);
	return 0;
}
