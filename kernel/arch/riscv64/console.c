/* SPDX-License-Identifier: MIT */
/*
 * console.c - the 16550 UART (kprintf and panic over it:
 * kernel/common/console.c), time and the exit verdict.
 *
 * Until the device tree has named the UART, output goes through the SBI
 * legacy console (OpenSBI prints it on the same UART).
 */
#include <stdarg.h>

#include "rv.h"
#include "sbi.h"

/* 16550 registers (index << reg-shift) and LSR bits. */
#define UART_RBR	0
#define UART_THR	0
#define UART_LSR	5
#define UART_LSR_DR	0x01
#define UART_LSR_THRE	0x20

/* sifive,test0 finisher (QEMU hw/misc/sifive_test.c). */
#define FINISHER_FAIL	0x3333
#define FINISHER_PASS	0x5555

static uint64_t uart_base;
static uint32_t uart_shift;

void console_use_uart(uint64_t base, uint32_t shift)
{
	uart_shift = shift;
	uart_base = base;
}

void karch_console_putc(char c)
{
	unsigned int spins = 0;

	if (!uart_base) {
		sbi_legacy_putchar(c);
		return;
	}
	/* Wait for the transmit holding register, but not forever. */
	while (!(mmio_read8(uart_base + (UART_LSR << uart_shift)) &
		 UART_LSR_THRE) && ++spins < 100000)
		cpu_relax();
	mmio_write8(uart_base + (UART_THR << uart_shift), (uint8_t)c);
}





/*
 * Exit QEMU with status @code through the test finisher (its "fail"
 * command carries the status in bits 31:16), else power off through SBI.
 */
void rv_exit(int code)
{
	local_irq_disable();
	if (rv_plat.test_base)
		mmio_write32(rv_plat.test_base,
			     FINISHER_FAIL | ((uint32_t)code << 16));
	sbi_shutdown(code != RV_EXIT_PASS);
	for (;;)
		wfi();
}

/* kernel.h's verdicts: QEMU exits with (code << 1) | 1, as on x86. */
void kernel_exit(uint8_t code)
{
	rv_exit(((int)code << 1) | 1);
}


/* Microseconds on the time CSR (timebase-frequency from /cpus). */
uint64_t rv_time_us(void)
{
	uint64_t hz = rv_plat.timebase_hz ? rv_plat.timebase_hz : 10000000;

	return rdtime() / (hz / 1000000 ? hz / 1000000 : 1);
}

void udelay(uint64_t us)
{
	uint64_t end = rv_time_us() + us;

	while (rv_time_us() < end)
		cpu_relax();
}

/* Nanoseconds on the time CSR, without overflow for centuries. */
uint64_t clock_ns(void)
{
	uint64_t hz = rv_plat.timebase_hz ? rv_plat.timebase_hz : 10000000;
	uint64_t t = rdtime();

	return t / hz * 1000000000ull + t % hz * 1000000000ull / hz;
}

/*
 * umsi.steps (kernel.h): the key is a byte on the console's input (the
 * harness writes one to QEMU's serial), polled.
 */
bool arch_key_pressed(void)
{
	return uart_base &&
	       (mmio_read8(uart_base + (UART_LSR << uart_shift)) & UART_LSR_DR);
}

void arch_key_drain(uint64_t quiet_us)
{
	uint64_t end = rv_time_us() + quiet_us;

	while (rv_time_us() < end) {
		if (arch_key_pressed()) {
			(void)mmio_read8(uart_base + (UART_RBR << uart_shift));
			end = rv_time_us() + quiet_us;
		}
	}
}
