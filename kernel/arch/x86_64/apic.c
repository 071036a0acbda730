/* SPDX-License-Identifier: MIT */
/*
 * apic.c - local APIC access for both register interfaces.
 *
 * xAPIC registers are 32-bit MMIO at 0xfee00000 + offset; in x2APIC mode
 * the same register is MSR 0x800 + offset / 16 (SDM vol. 3, 11.12.1),
 * except the ICR, which becomes one 64-bit MSR (0x830) with the
 * destination in bits 63:32. The mode is chosen once on the BSP and every
 * AP follows it.
 */
#include "kernel.h"
#include "apic.h"

#define APIC_BASE_ENABLE  (1ull << 11)
#define APIC_BASE_X2APIC  (1ull << 10)

#define LAPIC_ID      0x020
#define LAPIC_VERSION 0x030
#define LAPIC_TPR     0x080
#define LAPIC_EOI     0x0b0
#define LAPIC_SVR     0x0f0
#define LAPIC_ISR     0x100
#define LAPIC_IRR     0x200
#define LAPIC_ESR     0x280
#define LAPIC_ICR_LO  0x300
#define LAPIC_ICR_HI  0x310
#define LAPIC_LVT_TIMER 0x320
#define LAPIC_LVT_THERMAL 0x330
#define LAPIC_LVT_PERF  0x340
#define LAPIC_LVT_LINT0 0x350
#define LAPIC_LVT_LINT1 0x360
#define LAPIC_LVT_ERROR 0x370

#define LVT_MASKED     (1u << 16)
#define LVT_NMI        (4u << 8)
#define SVR_ENABLE     (1u << 8)

#define ICR_FIXED      (0u << 8)
#define ICR_INIT       (5u << 8)
#define ICR_STARTUP    (6u << 8)
#define ICR_PENDING    (1u << 12)
#define ICR_ASSERT     (1u << 14)

static enum apic_mode mode = APIC_XAPIC;
static uint64_t xapic_base;

bool apic_x2apic_supported(void)
{
	uint32_t a, b, c, d;

	cpuid(1, 0, &a, &b, &c, &d);
	return (c >> 21) & 1;
}

int apic_choose_mode(const char *param, const char **why)
{
	bool have = apic_x2apic_supported();

	if (!param || !*param || !strcmp(param, "auto")) {
		mode = have ? APIC_X2APIC : APIC_XAPIC;
	} else if (!strcmp(param, "xapic")) {
		mode = APIC_XAPIC;
	} else if (!strcmp(param, "x2apic")) {
		if (!have) {
			*why = "x2APIC requested but CPUID.1:ECX[21] is clear";
			return -1;
		}
		mode = APIC_X2APIC;
	} else {
		*why = "umsi.apic must be xapic, x2apic or auto";
		return -1;
	}
	return 0;
}

enum apic_mode apic_mode(void)
{
	return mode;
}

static uint32_t lapic_read(uint32_t reg)
{
	if (mode == APIC_X2APIC)
		return (uint32_t)rdmsr(0x800 + (reg >> 4));
	return mmio_read32(xapic_base + reg);
}

static void lapic_write(uint32_t reg, uint32_t v)
{
	if (mode == APIC_X2APIC)
		wrmsr(0x800 + (reg >> 4), v);
	else
		mmio_write32(xapic_base + reg, v);
}

/**
 * apic_cpu_enable - switch on this CPU's local APIC in the chosen mode
 * @bsp: true on the bootstrap processor (LINT1 is wired to NMI there)
 *
 * Software-enables the APIC with spurious vector 0xff, accepts every
 * priority (TPR 0) and masks the local interrupts the kernel does not use
 * (timer, thermal, performance counters, LINT0 where the masked 8259s
 * would deliver, error).
 */
void apic_cpu_enable(bool bsp)
{
	uint64_t base = rdmsr(MSR_APIC_BASE);

	/* x2APIC may only be entered from enabled xAPIC mode. */
	base |= APIC_BASE_ENABLE;
	wrmsr(MSR_APIC_BASE, base);
	if (mode == APIC_X2APIC) {
		base |= APIC_BASE_X2APIC;
		wrmsr(MSR_APIC_BASE, base);
	} else if (!xapic_base) {
		xapic_base = (uint64_t)mm_map_mmio(base & ~0xfffull, 4096);
	}

	lapic_write(LAPIC_TPR, 0);
	lapic_write(LAPIC_LVT_TIMER, LVT_MASKED);
	lapic_write(LAPIC_LVT_THERMAL, LVT_MASKED);
	lapic_write(LAPIC_LVT_PERF, LVT_MASKED);
	lapic_write(LAPIC_LVT_LINT0, LVT_MASKED);
	lapic_write(LAPIC_LVT_LINT1, bsp ? LVT_NMI : LVT_MASKED);
	lapic_write(LAPIC_LVT_ERROR, LVT_MASKED);
	lapic_write(LAPIC_SVR, SVR_ENABLE | VECTOR_SPURIOUS);
	/* ESR is cleared by a write (in x2APIC a write of 0 only). */
	lapic_write(LAPIC_ESR, 0);
	/* An interrupt may have been left in service by the firmware. */
	for (int reg = 7, n = 0; reg >= 0 && n < 256; n++) {
		if (lapic_read(LAPIC_ISR + 0x10 * (uint32_t)reg))
			lapic_write(LAPIC_EOI, 0);
		else
			reg--;
	}
}

/**
 * apic_cpu_disable - software-disable this CPU's local APIC
 *
 * Clears the APIC Software Enable bit of the spurious vector register
 * (SDM vol. 3, 11.4.7.2): the LAPIC then accepts no fixed interrupts;
 * INIT and STARTUP still reach it, which is how the CPU comes back.
 * The local vector table is masked first, as the SDM asks.
 */
void apic_cpu_disable(void)
{
	lapic_write(LAPIC_LVT_TIMER, LVT_MASKED);
	lapic_write(LAPIC_LVT_LINT0, LVT_MASKED);
	lapic_write(LAPIC_LVT_LINT1, LVT_MASKED);
	lapic_write(LAPIC_LVT_ERROR, LVT_MASKED);
	lapic_write(LAPIC_SVR, VECTOR_SPURIOUS);
}

uint32_t apic_id(void)
{
	if (mode == APIC_X2APIC)
		return (uint32_t)rdmsr(0x802);
	return mmio_read32(xapic_base + LAPIC_ID) >> 24;
}

uint32_t apic_version(void)
{
	return lapic_read(LAPIC_VERSION);
}

void apic_eoi(void)
{
	lapic_write(LAPIC_EOI, 0);
}

static void send_icr(uint32_t dest, uint32_t lo)
{
	if (mode == APIC_X2APIC) {
		/* The ICR MSR write is not serialising; order prior stores. */
		mfence();
		wrmsr(0x830, ((uint64_t)dest << 32) | lo);
		return;
	}
	unsigned long flags = irq_save();

	while (mmio_read32(xapic_base + LAPIC_ICR_LO) & ICR_PENDING)
		cpu_relax();
	mmio_write32(xapic_base + LAPIC_ICR_HI, dest << 24);
	mmio_write32(xapic_base + LAPIC_ICR_LO, lo);
	while (mmio_read32(xapic_base + LAPIC_ICR_LO) & ICR_PENDING)
		cpu_relax();
	irq_restore(flags);
}

void apic_send_fixed(uint32_t dest, uint8_t vector)
{
	send_icr(dest, ICR_FIXED | ICR_ASSERT | vector);
}

void apic_send_init(uint32_t dest)
{
	send_icr(dest, ICR_INIT | ICR_ASSERT);
}

void apic_send_sipi(uint32_t dest, uint8_t page)
{
	send_icr(dest, ICR_STARTUP | ICR_ASSERT | page);
}

bool apic_irr_test(uint8_t vector)
{
	return (lapic_read(LAPIC_IRR + 0x10 * (vector / 32)) >> (vector % 32)) & 1;
}

bool apic_isr_test(uint8_t vector)
{
	return (lapic_read(LAPIC_ISR + 0x10 * (vector / 32)) >> (vector % 32)) & 1;
}
