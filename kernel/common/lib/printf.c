/* SPDX-License-Identifier: MIT */
/*
 * printf.c - the kernel's bounded printf is the library's: uMSI ships a
 * freestanding one (umsi_vsnprintf, src/lib/format.c), so the kernel does
 * not carry a second.
 */
#include <umsi/format.h>

#include "klib.h"

int kvsnprintf(char *buf, size_t size, const char *fmt, va_list ap)
{
	return (int)umsi_vsnprintf(buf, size, fmt, ap);
}

int ksnprintf(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = kvsnprintf(buf, size, fmt, ap);
	va_end(ap);
	return n;
}
