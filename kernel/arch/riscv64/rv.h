/* SPDX-License-Identifier: MIT */
/*
 * rv.h - what the parts of the riscv64 kernel share: the console, the
 * per-CPU records, the exit verdict and the interrupt hooks.
 *
 * CPU numbers are positions among the enabled cpu nodes of the device
 * tree (as the x86 kernel numbers CPUs in MADT order); hart IDs are what
 * SBI and the IMSIC bindings speak. The boot hart is whichever hart
 * OpenSBI's lottery picked, not necessarily CPU 0.
 */
#ifndef RISCV64_RV_H
#define RISCV64_RV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel.h"
#include "platform.h"
#include "riscv.h"

#define RV_STACK_SIZE	16384

/* QEMU's exit status for the verdicts, as on x86 (kernel/README.md). */
#define RV_EXIT_PASS	33
#define RV_EXIT_FAIL	35

struct rv_cpu {
	uint64_t stack_top;		/* first: start.S loads it */
	uint32_t cpu;			/* at RV_CPU_NUMBER_OFFSET (karch.h) */
	uint32_t hartid;
	uint64_t imsic_file;
	volatile uint32_t up;		/* set by the CPU once it runs */
	volatile uint32_t imsic_ok;	/* its interrupt file delivers */
	volatile uint32_t claims;	/* identities claimed through stopei */
	volatile uint32_t last_identity;
	volatile uint32_t spurious;	/* traps with nothing to claim */
	volatile uint32_t park;		/* smp_cpu_park() asks it to stop */
	/* Cross-call mailbox (smp.c: smp_cross_call). */
	void (*volatile xcall_fn)(void *);
	void *volatile xcall_arg;
	volatile uint32_t xcall_done;
	volatile uint64_t soft_irqs;	/* supervisor software interrupts */
};

extern struct rv_platform rv_plat;
extern struct rv_cpu rv_cpus[RV_MAX_HARTS];
extern unsigned int rv_ncpus;

/* This CPU's record: tp holds it from entry on. */
static inline struct rv_cpu *this_cpu(void)
{
	struct rv_cpu *c;

	__asm__ volatile("mv %0, tp" : "=r"(c));
	return c;
}

/* console.c */
void console_use_uart(uint64_t base, uint32_t shift);
void kprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void kputs_raw(const char *s);		/* no lock: for panic paths */
void rv_exit(int code) __attribute__((noreturn));
void panic(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
uint64_t rv_time_us(void);
void udelay(uint64_t us);

/* trap.c */
void rv_trap_init(void);

/* imsic.c */
bool imsic_local_init(uint32_t num_ids);
void imsic_local_enable_all(uint32_t num_ids);
unsigned long imsic_reg_read(unsigned long reg);
void imsic_reg_write(unsigned long reg, unsigned long v);
/* The MSI probe (msiprobe.c) owns the claims while this is set. */
extern volatile bool rv_probe_active;
void imsic_local_enable(uint32_t identity);
void imsic_local_disable(uint32_t identity);
uint32_t imsic_claim(void);
void imsic_handle(void);

/* smp.c */
void smp_boot(uint32_t boot_hartid, bool via_start, const void *dtb);
void rv_cpu_irq_setup(void);
void smp_soft_interrupt(void);	/* trap.c: cross-calls and wake-ups */

/* msiprobe.c */
struct ecam;
int rv_msi_probe(struct ecam *e);

/* main.c: the identities the MSI probe uses, enabled on every CPU. */
#define RV_PROBE_IDENTITY	5
unsigned int rv_probe_identities(void);

#endif /* RISCV64_RV_H */
