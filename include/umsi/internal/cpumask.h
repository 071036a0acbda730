/* SPDX-License-Identifier: MIT */
/*
 * umsi/internal/cpumask.h - CPU masks as arrays of 64-bit words (bit n of
 * word n / 64 is CPU n), the one home of the library's mask helpers.
 * Not a public interface.
 */
#ifndef UMSI_INTERNAL_CPUMASK_H
#define UMSI_INTERNAL_CPUMASK_H

#include <umsi/internal/bitops.h>
#include <umsi/types.h>

/* Bytes of a mask of @words words. */
static inline size_t umsi_mask_bytes(uint32_t words)
{
	return (size_t)words * sizeof(uint64_t);
}

/* The first CPU of @w at or after @from, below @nbits; @nbits if none. */
static inline uint32_t umsi_mask_next(const uint64_t *w, uint32_t nbits,
				      uint32_t from)
{
	while (from < nbits) {
		uint64_t bits = w[from / 64] >> (from % 64);

		if (bits) {
			from += umsi_ctz64(bits);
			return from < nbits ? from : nbits;
		}
		from = (from | 63) + 1;
	}
	return nbits;
}

/* Each CPU of mask @w below @nbits, lowest first, a word at a time. */
#define umsi_for_each_cpu(cpu, w, nbits) \
	for ((cpu) = umsi_mask_next((w), (nbits), 0); (cpu) < (nbits); \
	     (cpu) = umsi_mask_next((w), (nbits), (cpu) + 1))

#endif /* UMSI_INTERNAL_CPUMASK_H */
