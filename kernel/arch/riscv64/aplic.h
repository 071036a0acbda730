/* SPDX-License-Identifier: MIT */
/*
 * aplic.h - the S-level APLIC domain in MSI mode (aplic.c): INTx lines
 * forwarded as MSIs to the harts' IMSIC files.
 */
#ifndef RISCV64_APLIC_H
#define RISCV64_APLIC_H

#include <stdbool.h>
#include <stdint.h>

#define APLIC_MAX_SOURCES	1023u
#define APLIC_MAX_IDS		2048u

/* The domain at @base with @nsources sources: MSI mode, enabled. */
int aplic_init(uint64_t base, uint32_t nsources);

/*
 * Aim @source at identity @id of kernel CPU @cpu, whose IMSIC file has
 * index @hart in the APLIC's MSI address layout (level, active high or
 * low), enabled unless @masked. Return 0 or -1.
 */
int aplic_program(uint32_t source, uint32_t cpu, uint32_t hart, uint32_t id,
		  bool level_low, bool masked);

/* After @id was dispatched on @cpu: a level source still high sends again. */
void aplic_after_dispatch(uint32_t cpu, uint32_t id);

#endif /* RISCV64_APLIC_H */
