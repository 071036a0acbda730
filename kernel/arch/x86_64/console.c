/* SPDX-License-Identifier: MIT */
/*
 * console.c - COM1 (kprintf and panic over it: kernel/common/console.c)
 * and the debug-exit port.
 */
#include "kernel.h"

#define COM1 0x3f8

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

void karch_console_putc(char c)
{
	unsigned spins = 0;

	/* Wait for the transmit holding register, but not forever. */
	while (!(inb(COM1 + 5) & 0x20) && ++spins < 100000)
		cpu_relax();
	outb(COM1, (uint8_t)c);
}





void kernel_exit(uint8_t code)
{
	irq_disable();
	outl(DEBUG_EXIT_PORT, code);
	/* Without the isa-debug-exit device, stop here. */
	for (;;)
		halt();
}

