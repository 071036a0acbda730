// SPDX-License-Identifier: MIT
/*
 * console.c - PL011 output and input (kprintf and panic over it:
 * kernel/common/console.c), the exit verdict and time (the generic
 * timer's virtual counter, CNTVCT_EL0 at CNTFRQ_EL0).
 *
 * The PL011 needs no set-up under QEMU: the data register (offset 0)
 * sends and receives, the flag register (0x18) bit 5 says the transmit
 * FIFO is full, bit 4 that the receive FIFO is empty.
 */
#include <stdarg.h>

#include "console.h"

#define PL011_DR	0x00
#define PL011_FR	0x18
#define PL011_FR_RXFE	(1u << 4)
#define PL011_FR_TXFF	(1u << 5)

static uint64_t console_uart = PL011_DEFAULT_BASE;

void console_set_base(uint64_t base)
{
	console_uart = base;
}

uint64_t console_base(void)
{
	return console_uart;
}

void karch_console_putc(char c)
{
	unsigned int spins = 0;

	while ((mmio_read32(console_uart + PL011_FR) & PL011_FR_TXFF) &&
	       ++spins < 100000)
		cpu_relax();
	mmio_write32(console_uart + PL011_DR, (uint8_t)c);
}





/*
 * The verdict: a done line (the harness reads it; QEMU's exit status is 0
 * after SYSTEM_OFF whatever the kernel thought), then power off.
 */
void kernel_exit(uint8_t code)
{
	char line[96];

	ksnprintf(line, sizeof(line),
		  "UMSI {\"event\":\"done\",\"arch\":\"arm64\",\"ok\":%s}\n",
		  code == KERNEL_EXIT_PASS ? "true" : "false");
	kputs_raw(line);
	system_off();
}


static uint64_t counter(void)
{
	isb();
	return read_sysreg(cntvct_el0);
}

void udelay(uint64_t us)
{
	uint64_t f = read_sysreg(cntfrq_el0);
	uint64_t end = counter() + (f / 1000000) * us + 1;

	while (counter() < end)
		cpu_relax();
}

uint64_t clock_ns(void)
{
	uint64_t t = counter(), f = read_sysreg(cntfrq_el0);

	if (!f)
		return 0;
	/* Split so that t * 1e9 cannot overflow. */
	return t / f * 1000000000ull + t % f * 1000000000ull / f;
}

/* kernel.h: umsi.steps waits for a key on the PL011. */
bool arch_key_pressed(void)
{
	if (mmio_read32(console_uart + PL011_FR) & PL011_FR_RXFE)
		return false;
	(void)mmio_read32(console_uart + PL011_DR);
	return true;
}

void arch_key_drain(uint64_t quiet_us)
{
	uint64_t last = clock_ns();

	while (clock_ns() - last < quiet_us * 1000) {
		if (arch_key_pressed())
			last = clock_ns();
		cpu_relax();
	}
}
