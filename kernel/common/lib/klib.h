/* SPDX-License-Identifier: MIT */
/*
 * klib.h - the kernel's small C library: strings and formatted output.
 */
#ifndef KERNEL_KLIB_H
#define KERNEL_KLIB_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

void *memcpy(void *dst, const void *src, size_t n);
void *memmove(void *dst, const void *src, size_t n);
void *memset(void *dst, int c, size_t n);
int memcmp(const void *a, const void *b, size_t n);
size_t strlen(const char *s);
int strcmp(const char *a, const char *b);
int strncmp(const char *a, const char *b, size_t n);
bool kstrtou64(const char *s, const char **end, unsigned base, uint64_t *out);

/*
 * printf subset: %d %i %u %x %X %o %c %s %p %%, flags '-' '0', a width,
 * and the length modifiers l, ll, z, h, hh. Always NUL-terminates when
 * @size > 0; returns the length the full output would have had.
 */
int kvsnprintf(char *buf, size_t size, const char *fmt, va_list ap);
int ksnprintf(char *buf, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif /* KERNEL_KLIB_H */
