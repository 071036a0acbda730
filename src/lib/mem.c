/* SPDX-License-Identifier: MIT */
/*
 * Freestanding memory and string helpers. The core never calls libc; these
 * are the only such routines it uses, so a kernel links uMSI without
 * providing memcpy and friends. The loops are volatile-free and simple: the
 * core copies small structures only.
 */
#include <umsi/internal/core.h>

void *umsi_memset(void *d, int c, size_t n)
{
	unsigned char *p = d;

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
