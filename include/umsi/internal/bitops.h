/* SPDX-License-Identifier: MIT */
/*
 * umsi/internal/bitops.h - bit helpers for the library's bitmaps.
 *
 * Not a public interface.
 */
#ifndef UMSI_INTERNAL_BITOPS_H
#define UMSI_INTERNAL_BITOPS_H

#include <umsi/types.h>

/* Index of the lowest set bit; x != 0. */
static inline unsigned int umsi_ctz64(uint64_t x)
{
#if (defined(__GNUC__) || defined(__clang__)) && UINTPTR_MAX > 0xffffffffu
	return (unsigned int)__builtin_ctzll(x);
#elif defined(__GNUC__) || defined(__clang__)
	/* 32-bit targets: __builtin_ctzll may become a libgcc call. */
	uint32_t lo = (uint32_t)x;

	return lo ? (unsigned int)__builtin_ctz(lo) :
		    32u + (unsigned int)__builtin_ctz((uint32_t)(x >> 32));
#else
	unsigned int n = 0;

	while (!(x & 1)) {
		x >>= 1;
		n++;
	}
	return n;
#endif
}

/* Index of the highest set bit; x != 0. */
static inline unsigned int umsi_fls64(uint64_t x)
{
	unsigned int n = 0;

	/* A binary search: no builtin that could become a libgcc call. */
	if (x >> 32) { n += 32; x >>= 32; }
	if (x >> 16) { n += 16; x >>= 16; }
	if (x >> 8) { n += 8; x >>= 8; }
	if (x >> 4) { n += 4; x >>= 4; }
	if (x >> 2) { n += 2; x >>= 2; }
	if (x >> 1) n += 1;
	return n;
}

/*
 * The least k with 2^k >= @n (ceil(log2(n)); 0 for n <= 1): the order of
 * a power-of-two block that holds @n. @n at most 2^31.
 */
static inline uint32_t umsi_order_of(uint32_t n)
{
	return n <= 1 ? 0 : umsi_fls64(n - 1) + 1;
}

/* Set bits of @x (SWAR: no libgcc call without a popcount instruction). */
static inline unsigned int umsi_popcount64(uint64_t x)
{
	x = x - ((x >> 1) & 0x5555555555555555ull);
	x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
	x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
	return (unsigned int)((x * 0x0101010101010101ull) >> 56);
}

/* Bit @bit of a word array. */
static inline bool umsi_bit_test(const uint64_t *w, uint32_t bit)
{
	return (w[bit / 64] >> (bit % 64)) & 1;
}

static inline void umsi_bit_set(uint64_t *w, uint32_t bit)
{
	w[bit / 64] |= 1ull << (bit % 64);
}

/*
 * Each set bit of the word @bits (a variable it consumes), lowest first,
 * as @pos = @base + its index: the "each CPU of a mask word" loop.
 */
#define umsi_for_each_bit(pos, bits, base) \
	for (; (bits) && ((pos) = (base) + umsi_ctz64(bits), \
			  (bits) &= (bits) - 1, 1);)

#endif /* UMSI_INTERNAL_BITOPS_H */
