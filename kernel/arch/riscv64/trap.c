/* SPDX-License-Identifier: MIT */
/*
 * trap.c - what start.S's rv_trap_entry calls: supervisor external
 * interrupts go to the IMSIC; an exception prints the registers and ends
 * the run with FAIL, as on x86.
 */
#include "rv.h"

/* The uMSI dispatcher, set by the glue (kernel.h). */
void (*irq_dispatch_hook)(uint32_t cpu, uint32_t id);

struct rv_frame {
	uint64_t x[32];			/* x[2] is the interrupted sp */
	uint64_t sepc;
	uint64_t sstatus;
};

void rv_trap(struct rv_frame *f);

static const char *const trap_names[] = {
	"instruction address misaligned", "instruction access fault",
	"illegal instruction", "breakpoint", "load address misaligned",
	"load access fault", "store address misaligned",
	"store access fault", "ecall from U-mode", "ecall from S-mode",
	"reserved", "reserved", "instruction page fault",
	"load page fault", "reserved", "store page fault",
};

static void trap_exception(struct rv_frame *f, unsigned long cause)
{
	struct rv_cpu *c = this_cpu();
	const char *name = cause < sizeof(trap_names) / sizeof(trap_names[0]) ?
			   trap_names[cause] : "unknown";
	char line[160];
	unsigned int i;

	ksnprintf(line, sizeof(line),
		  "EXCEPTION %lu (%s) on cpu %u hart %u: sepc 0x%lx stval 0x%lx\n",
		  cause, name, c ? c->cpu : 0, c ? c->hartid : 0,
		  (unsigned long)f->sepc, csr_read_stval());
	kputs_raw(line);
	for (i = 1; i < 32; i++) {
		ksnprintf(line, sizeof(line), "  x%-2u 0x%016lx%s", i,
			  (unsigned long)f->x[i], i % 4 == 3 ? "\n" : "");
		kputs_raw(line);
	}
	kputs_raw("\n");
	rv_exit(RV_EXIT_FAIL);
}

void rv_trap(struct rv_frame *f)
{
	unsigned long cause = csr_read_scause();
	unsigned long code = cause & ~SCAUSE_INTERRUPT;

	if (!(cause & SCAUSE_INTERRUPT)) {
		trap_exception(f, code);
		return;
	}
	if (code == IRQ_S_EXT) {
		imsic_handle();
		return;
	}
	if (code == IRQ_S_SOFT) {
		smp_soft_interrupt();
		return;
	}
	/*
	 * Nothing else is enabled in sie; should another source fire anyway,
	 * count it and switch it off rather than trap forever.
	 */
	if (this_cpu())
		this_cpu()->spurious++;
	if (code < 64)
		csr_clear_sie(1ul << code);
}
