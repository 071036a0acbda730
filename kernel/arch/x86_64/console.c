/* SPDX-License-Identifier: MIT */
/*
 * console.c - COM1 output, kprintf, panic and the debug-exit port.
 *
 * Lines from several CPUs must not interleave (tests parse them), so
 * kprintf formats into a buffer and writes it under one lock with
 * interrupts off. panic() writes without the lock: the CPU that holds it
 * may be the one that crashed.
 */
#include "kernel.h"

#define COM1 0x3f8

static struct spinlock console_lock;

void serial_init(void)
{
	outb(COM1 + 1, 0x00);	/* no UART interrupts */
	outb(COM1 + 3, 0x80);	/* DLAB on */
	outb(COM1 + 0, 0x01);	/* divisor 1: 115200 baud */
	outb(COM1 + 1, 0x00);
	outb(COM1 + 3, 0x03);	/* 8N1, DLAB off */
	outb(COM1 + 2, 0xc7);	/* FIFO on, cleared */
	outb(COM1 + 4, 0x03);	/* DTR, RTS */
}

static void serial_putc(char c)
{
	unsigned spins = 0;

	/* Wait for the transmit holding register, but not forever. */
	while (!(inb(COM1 + 5) & 0x20) && ++spins < 100000)
		cpu_relax();
	outb(COM1, (uint8_t)c);
}

void serial_write(const char *s, size_t n)
{
	for (; n; n--, s++) {
		if (*s == '\n')
			serial_putc('\r');
		serial_putc(*s);
	}
}

void kputs_raw(const char *s)
{
	serial_write(s, strlen(s));
}

void kprintf(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	int n;
	unsigned long flags;

	va_start(ap, fmt);
	n = kvsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n >= (int)sizeof(buf))
		n = sizeof(buf) - 1;
	flags = spin_lock_irqsave(&console_lock);
	serial_write(buf, (size_t)n);
	spin_unlock_irqrestore(&console_lock, flags);
}

/* Write a whole string, however long, without interleaving. */
void console_write(const char *s)
{
	unsigned long flags = spin_lock_irqsave(&console_lock);

	serial_write(s, strlen(s));
	spin_unlock_irqrestore(&console_lock, flags);
}

void kernel_exit(uint8_t code)
{
	irq_disable();
	outl(DEBUG_EXIT_PORT, code);
	/* Without the isa-debug-exit device, stop here. */
	for (;;)
		halt();
}

void panic(const char *fmt, ...)
{
	char buf[512];
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
