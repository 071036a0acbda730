/* SPDX-License-Identifier: MIT */
/*
 * Freestanding memory and string helpers. The core calls no libc routine
 * by name: these are its own, so a kernel links uMSI without providing
 * memcpy and friends. A compiler may still emit a call to memcpy or memset
 * for a structure assignment or a loop it recognises (GCC and clang do,
 * even freestanding); the fragments' -fno-builtin does not stop that, and
 * a kernel build normally has both symbols. The loops are simple: the
 * core copies small structures only.
 */
#include <umsi/internal/ctl.h>
#include <umsi/internal/lib.h>

void *umsi_zalloc(struct umsi_system *sys, size_t size)
{
	struct umsi_ctl_env *env = umsi_ctl_env(sys);
	void *p = env->ops->alloc(env->host, size);

	/* The host need not zero (umsi/host.h): uMSI does. */
	if (p)
		umsi_memset(p, 0, size);
	return p;
}

uint32_t umsi_mmio_read32(struct umsi_system *sys, volatile void *addr)
{
	struct umsi_ctl_env *env = umsi_ctl_env(sys);

	if (env->ops->mmio_read32)
		return env->ops->mmio_read32(env->host, addr);
	return *(volatile uint32_t *)addr;
}

void umsi_mmio_write32(struct umsi_system *sys, volatile void *addr,
		       uint32_t val)
{
	struct umsi_ctl_env *env = umsi_ctl_env(sys);

	if (env->ops->mmio_write32)
		env->ops->mmio_write32(env->host, addr, val);
	else
		*(volatile uint32_t *)addr = val;
}

uint64_t umsi_mmio_read64_lohi(struct umsi_system *sys, volatile void *addr)
{
	volatile uint32_t *w = addr;

	return umsi_mmio_read32(sys, w) |
	       (uint64_t)umsi_mmio_read32(sys, w + 1) << 32;
}

void umsi_mmio_write64_lohi(struct umsi_system *sys, volatile void *addr,
			    uint64_t val)
{
	volatile uint32_t *w = addr;

	umsi_mmio_write32(sys, w, (uint32_t)val);
	umsi_mmio_write32(sys, w + 1, (uint32_t)(val >> 32));
}

void umsi_free(struct umsi_system *sys, void *p, size_t size)
{
	struct umsi_ctl_env *env = umsi_ctl_env(sys);

	if (p)
		env->ops->free(env->host, p, size);
}

/*
 * Word stores where the buffer is word-aligned (every allocation is: the
 * host aligns to 16 bytes), bytes for the rest. -fno-builtin keeps the
 * compiler from turning the loops back into a memset call.
 */
void *umsi_memset(void *d, int c, size_t n)
{
	unsigned char *p = d;
	uint64_t w = 0x0101010101010101ull * (unsigned char)c;

	if (!((uintptr_t)p & 7)) {
		/* Four words a round: a descriptor is cleared in 7 rounds. */
		for (; n >= 32; n -= 32, p += 32) {
			((uint64_t *)(void *)p)[0] = w;
			((uint64_t *)(void *)p)[1] = w;
			((uint64_t *)(void *)p)[2] = w;
			((uint64_t *)(void *)p)[3] = w;
		}
		for (; n >= 8; n -= 8, p += 8)
			*(uint64_t *)(void *)p = w;
	}
	while (n--)
		*p++ = (unsigned char)c;
	return d;
}

void *umsi_memcpy(void *d, const void *s, size_t n)
{
	unsigned char *p = d;
	const unsigned char *q = s;

	while (n--)
		*p++ = *q++;
	return d;
}

int umsi_memcmp(const void *a, const void *b, size_t n)
{
	const unsigned char *p = a, *q = b;

	for (; n; n--, p++, q++)
		if (*p != *q)
			return *p < *q ? -1 : 1;
	return 0;
}

size_t umsi_strlen(const char *s)
{
	size_t n = 0;

	while (s[n])
		n++;
	return n;
}
