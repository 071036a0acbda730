/* SPDX-License-Identifier: MIT */
/*
 * console.c - kprintf, console_write and panic, written once. The
 * architecture sends one character (karch_console_putc(): COM1 on x86,
 * the 16550 or SBI's console on riscv64, the PL011 on arm64).
 *
 * Lines from several CPUs must not interleave (tests parse them), so
 * kprintf formats into a buffer and writes it under one lock with
 * interrupts off. panic() writes without the lock: the CPU that holds it
 * may be the one that crashed.
 */
#include <stdarg.h>

#include "kernel.h"

/* The longest kprintf line; longer ones are cut (console_write is not). */
#ifndef KARCH_KPRINTF_MAX
#define KARCH_KPRINTF_MAX 1024
#endif

static struct spinlock console_lock;

static void console_write_n(const char *s, size_t n)
{
	for (; n; n--, s++) {
		if (*s == '\n')
			karch_console_putc('\r');
		karch_console_putc(*s);
	}
}

void kputs_raw(const char *s)
{
	console_write_n(s, strlen(s));
}

void kprintf(const char *fmt, ...)
{
	char buf[KARCH_KPRINTF_MAX];
	unsigned long flags;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = kvsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (n >= (int)sizeof(buf))
		n = sizeof(buf) - 1;
	flags = spin_lock_irqsave(&console_lock);
	console_write_n(buf, (size_t)n);
	spin_unlock_irqrestore(&console_lock, flags);
}

/* Write a whole string, however long, without interleaving. */
void console_write(const char *s)
{
	unsigned long flags = spin_lock_irqsave(&console_lock);

	console_write_n(s, strlen(s));
	spin_unlock_irqrestore(&console_lock, flags);
}

void panic(const char *fmt, ...)
{
	char buf[256];
	va_list ap;

	irq_disable();
	va_start(ap, fmt);
	kvsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	kputs_raw("PANIC: ");
	kputs_raw(buf);
	kputs_raw("\n");
	kernel_exit(KERNEL_EXIT_FAIL);
}
