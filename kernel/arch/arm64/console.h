/* SPDX-License-Identifier: MIT */
/*
 * console.h - the PL011 UART console. kprintf(), console_write(),
 * kputs_raw(), panic() and kernel_exit() are kernel/common/kernel.h's; the
 * bounded printf and the string functions are kernel/common/lib's.
 */
#ifndef ARM64_CONSOLE_H
#define ARM64_CONSOLE_H

#include <stdint.h>

#include "kernel.h"

/* Where the PL011 is before the device tree says (QEMU virt). */
#define PL011_DEFAULT_BASE	0x09000000ULL

void console_set_base(uint64_t base);
uint64_t console_base(void);

/* Power off through PSCI SYSTEM_OFF (QEMU exits 0); main.c. */
void system_off(void) __attribute__((noreturn));

#endif /* ARM64_CONSOLE_H */
