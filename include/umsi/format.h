/* SPDX-License-Identifier: MIT */
/*
 * umsi/format.h - the library's freestanding printf, for embedders too.
 */
#ifndef UMSI_FORMAT_H
#define UMSI_FORMAT_H

#include <stdarg.h>
#include <umsi/types.h>

/**
 * umsi_vsnprintf - format into a buffer, as vsnprintf does
 * @buf: output (may be NULL when @len is 0)
 * @len: its size; the text is truncated and still NUL-terminated
 * @fmt: %d %i %u %o %x %X %s %c %p %% with flags '-' and '0', a width or
 *       '*', precision for %s, and the modifiers h, l, ll, z
 * @ap: the arguments
 *
 * No floating point. Return: the length the whole text needs, excluding
 * the NUL. Context: any (no allocation, no locks).
 */
size_t umsi_vsnprintf(char *buf, size_t len, const char *fmt, va_list ap);

#endif /* UMSI_FORMAT_H */
