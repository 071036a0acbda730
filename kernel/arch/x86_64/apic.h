/* SPDX-License-Identifier: MIT */
/*
 * apic.h - the local APIC in xAPIC (MMIO) or x2APIC (MSR) mode.
 */
#ifndef KERNEL_APIC_H
#define KERNEL_APIC_H

#include <stdbool.h>
#include <stdint.h>

enum apic_mode { APIC_XAPIC, APIC_X2APIC };

/*
 * Choose the mode from the umsi.apic= parameter ("xapic", "x2apic",
 * "auto"; NULL means auto). Returns 0, or -1 with *@why set when the
 * request cannot be met (x2APIC asked for on a CPU without it).
 */
int apic_choose_mode(const char *param, const char **why);
enum apic_mode apic_mode(void);
bool apic_x2apic_supported(void);
void apic_cpu_enable(bool bsp);		/* enable this CPU's LAPIC */
void apic_cpu_disable(void);		/* software-disable it (CPU offline) */
uint32_t apic_id(void);			/* APIC ID of this CPU */
void apic_eoi(void);
void apic_send_fixed(uint32_t apic_id, uint8_t vector);
void apic_send_init(uint32_t apic_id);
void apic_send_sipi(uint32_t apic_id, uint8_t page);
bool apic_irr_test(uint8_t vector);	/* this CPU's IRR */
bool apic_isr_test(uint8_t vector);	/* this CPU's ISR */
uint32_t apic_version(void);

#endif /* KERNEL_APIC_H */
