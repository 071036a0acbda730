/* SPDX-License-Identifier: MIT */
/*
 * console.h - the PL011 UART console and a bounded printf.
 */
#ifndef ARM64_CONSOLE_H
#define ARM64_CONSOLE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* Where the PL011 is before the device tree says (QEMU virt). */
#define PL011_DEFAULT_BASE	0x09000000ULL

void console_set_base(uint64_t base);
uint64_t console_base(void);

/*
 * printf subset: %d %u %x %s %c %p %%, flags '-' and '0', a width, the
 * length modifiers l and ll (z is l). Always NUL-terminates when @size > 0
 * and returns the length the whole output would have had.
 */
int kvsnprintf(char *buf, size_t size, const char *fmt, va_list ap);
int ksnprintf(char *buf, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* One whole line (or lines) at a time, never interleaved with another CPU's. */
void kprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

void *memset(void *dst, int c, size_t n);
void *memcpy(void *dst, const void *src, size_t n);
size_t strlen(const char *s);
int strcmp(const char *a, const char *b);
int strncmp(const char *a, const char *b, size_t n);

struct spinlock {
	volatile uint32_t locked;
};

void spin_lock(struct spinlock *l);
void spin_unlock(struct spinlock *l);

#endif /* ARM64_CONSOLE_H */
