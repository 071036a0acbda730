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
 *
 * The entry point, the bootargs and host-bridge checks are
 * fuzz_dt_common.h's; this file gives the parse and the arm64 checks.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "a64.h"
#include "console.h"
#include "fuzz_dt_common.h"

void console_set_base(uint64_t base)
{
	(void)base;
}

static void check_platform(const struct platform *p, const uint8_t *blob,
			   size_t size)
{
	uint32_t devid;

	FUZZ_CHECK(p->ncpus <= ARM64_MAX_CPUS);
	FUZZ_CHECK(p->gicr_regions <= GIC_MAX_RDIST_REGIONS);
	if (p->bootargs)
		check_string(p->bootargs, blob, size);
	check_pci(p->have_pci, p->bus_start, p->bus_end, p->ecam_size);
	/* The ITS DeviceID of a requester: any answer, no fault. */
	(void)dt_rid_to_devid(p, 0, &devid);
	(void)dt_rid_to_devid(p, 0xffff, &devid);
	(void)dt_rid_to_devid(p, (uint16_t)p->msi_map_rid, &devid);
}

static void parse_and_check(const struct fdt *f, const uint8_t *blob,
			    size_t size)
{
	struct platform p;

	memset(&p, 0, sizeof(p));
	(void)dt_parse(f, &p);
	check_platform(&p, blob, size);
}
