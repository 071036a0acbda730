/* SPDX-License-Identifier: MIT */
/*
 * fuzz_dt_common.h - what fuzz_dt_arm64.c and fuzz_dt_riscv64.c share:
 * the libFuzzer entry (a copy of exactly the input, read as a blob by the
 * kernel's fdt_init()) and the checks of a platform that hold on both:
 * bootargs a string inside the blob, a host bridge only with 8-bit buses
 * its ECAM window covers (1 MiB a bus). Each includes it once, after its
 * kernel's headers (struct fdt, fdt_init()), and defines
 * parse_and_check() below.
 */
#ifndef TESTS_FUZZ_FUZZ_DT_COMMON_H
#define TESTS_FUZZ_FUZZ_DT_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dt_shim.h"

#define FUZZ_CHECK(c) do { if (!(c)) __builtin_trap(); } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * The architecture's parser over @f (the @size bytes at @blob), after the
 * console was reset, and the checks of the platform it filled.
 */
static void parse_and_check(const struct fdt *f, const uint8_t *blob,
			    size_t size);

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

/* A host bridge the platform marks @present: its buses and window. */
static void check_pci(bool present, uint32_t bus_start, uint32_t bus_end,
		      uint64_t ecam_size)
{
	if (present) {
		FUZZ_CHECK(bus_start <= bus_end && bus_end <= 0xff);
		FUZZ_CHECK(bus_end - bus_start < ecam_size >> 20);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
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
		parse_and_check(&f, blob, size);
	}
	free(blob);
	return 0;
}

#endif /* TESTS_FUZZ_FUZZ_DT_COMMON_H */
