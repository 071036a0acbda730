/* SPDX-License-Identifier: MIT */
/*
 * time.c - delays and a monotonic clock.
 *
 * The ACPI PM timer (3.579545 MHz, port from the FADT) is the reference;
 * the TSC, calibrated against it once at boot, is what udelay() and
 * clock_ns() read, because it is per-CPU, lock-free and cheap. QEMU keeps
 * the TSC consistent across vCPUs under both TCG and KVM.
 */
#include "kernel.h"

#define PM_TIMER_HZ 3579545u

static uint64_t tsc_khz;
static uint64_t tsc_base;

static uint32_t pm_read(uint16_t port, bool wide)
{
	return inl(port) & (wide ? 0xffffffffu : 0xffffffu);
}

void time_init(uint16_t pm_port, bool pm_32bit)
{
	uint32_t mask = pm_32bit ? 0xffffffffu : 0xffffffu;
	uint32_t ticks = PM_TIMER_HZ / 100;	/* 10 ms */
	uint32_t start, now;
	uint64_t t0, t1;

	if (!pm_port)
		panic("no ACPI PM timer: cannot calibrate delays");
	start = pm_read(pm_port, pm_32bit);
	t0 = rdtsc();
	do {
		now = pm_read(pm_port, pm_32bit);
	} while (((now - start) & mask) < ticks);
	t1 = rdtsc();
	tsc_khz = (t1 - t0) * PM_TIMER_HZ / ((uint64_t)((now - start) & mask) * 1000);
	if (!tsc_khz)
		tsc_khz = 1;
	tsc_base = t0;
}

void udelay(uint64_t us)
{
	uint64_t end = rdtsc() + us * tsc_khz / 1000;

	while ((int64_t)(rdtsc() - end) < 0)
		cpu_relax();
}

uint64_t clock_ns(void)
{
	uint64_t d = rdtsc() - tsc_base;

	if (!tsc_khz)
		return 0;
	return (d / tsc_khz) * 1000000ull + (d % tsc_khz) * 1000000ull / tsc_khz;
}

uint64_t time_tsc_khz(void);

uint64_t time_tsc_khz(void)
{
	return tsc_khz;
}
