/* SPDX-License-Identifier: MIT */
/*
 * fuzz_dt_arm64 - the arm64 reference kernel's reading of the device tree
 * (kernel/arch/arm64/dt.c: dt_parse() over fdt.c, the platform the
 * kernel then boots on), compiled hosted and unmodified, on hostile
 * blobs. fuzz_fdt reaches the reader's queries; this reaches what the
 * kernel makes of their answers. The console is dt_shim.c (the kernel's
 * own printf into a buffer), so every line dt.c prints is formatted.
 *
 * The sanitizers report any read outside the blob; the platform must hold
 * together: CPUs and redistributor regions within their arrays, bootargs
 * a string inside the blob, and a host bridge only with 8-bit buses its
 * ECAM window covers (1 MiB a bus).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "a64.h"
#include "console.h"
#include "dt_shim.h"

#define FUZZ_CHECK(c) do { if (!(c)) __builtin_trap(); } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

void console_set_base(uint64_t base)
{
	(void)base;
}

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

static void check_platform(const struct platform *p, const uint8_t *blob,
			   size_t size)
{
	uint32_t devid;

	FUZZ_CHECK(p->ncpus <= ARM64_MAX_CPUS);
	FUZZ_CHECK(p->gicr_regions <= GIC_MAX_RDIST_REGIONS);
	if (p->bootargs)
		check_string(p->bootargs, blob, size);
	if (p->have_pci) {
		FUZZ_CHECK(p->bus_start <= p->bus_end && p->bus_end <= 0xff);
		FUZZ_CHECK(p->bus_end - p->bus_start < p->ecam_size >> 20);
	}
	/* The ITS DeviceID of a requester: any answer, no fault. */
	(void)dt_rid_to_devid(p, 0, &devid);
	(void)dt_rid_to_devid(p, 0xffff, &devid);
	(void)dt_rid_to_devid(p, (uint16_t)p->msi_map_rid, &devid);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct platform p;
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
		memset(&p, 0, sizeof(p));
		dt_shim_reset();
		(void)dt_parse(&f, &p);
		check_platform(&p, blob, size);
	}
	free(blob);
	return 0;
}
